/* fs_write — the changing side of the ubikit fs API, by path and by open
 * file: create/open flags, write/pwrite/append, truncate, fsync/sync, mkdir,
 * mknod, symlink, link, unlink, rmdir, rename with flags, chmod/chown/
 * utimens, setxattr/removexattr. Paths are resolved here (the last
 * component is looked up in its directory); the UBIFS layer does the rest.
 * Read-only mounts answer EROFS. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs/fs.h"

static int rw(struct ubikit_fs *fs)
{
	return fs->read_only ? -EROFS : 0;
}

int fs_create_file(struct ubikit_fs *fs, const char *path, uint32_t mode, uint64_t *ino)
{
	uint64_t dir;
	char name[256];
	size_t nlen;
	int err = rw(fs);
	if (!err)
		err = fs_resolve_parent(fs, path, &dir, name, &nlen);
	if (!err)
		err = ubifs_mknod(fs->ubifs, dir, name, nlen, S_IFREG | (mode & 07777), 0, 0, (uint32_t)geteuid(),
				  (uint32_t)getegid(), ino);
	return err;
}

ssize_t ubikit_pwrite(struct ubikit_file *f, const void *buf, size_t len, uint64_t off)
{
	if ((f->flags & O_ACCMODE) == O_RDONLY)
		return -EBADF;
	int err = rw(f->fs);
	if (err)
		return err;
	if (!S_ISREG(f->ino.mode))
		return -EISDIR;
	return ubifs_write_data(f->fs->ubifs, f->ino.inum, buf, len, off);
}

ssize_t ubikit_write(struct ubikit_file *f, const void *buf, size_t len)
{
	if (f->flags & O_APPEND) {
		int err = ubifs_read_inode(f->fs->ubifs, f->ino.inum, &f->ino);
		if (err)
			return err;
		f->pos = f->ino.size;
	}
	ssize_t n = ubikit_pwrite(f, buf, len, f->pos);
	if (n > 0)
		f->pos += (uint64_t)n;
	return n;
}

int ubikit_ftruncate(struct ubikit_file *f, uint64_t size)
{
	if ((f->flags & O_ACCMODE) == O_RDONLY)
		return -EBADF;
	int err = rw(f->fs);
	return err ? err : ubifs_truncate(f->fs->ubifs, f->ino.inum, size);
}

int ubikit_fsync(struct ubikit_file *f)
{
	return ubifs_fsync(f->fs->ubifs, f->ino.inum);
}

int ubikit_sync(struct ubikit_fs *fs)
{
	return ubifs_sync(fs->ubifs);
}

int ubikit_truncate(struct ubikit_fs *fs, const char *path, uint64_t size)
{
	uint64_t ino;
	int err = rw(fs);
	if (!err)
		err = fs_resolve(fs, path, 1, &ino);
	return err ? err : ubifs_truncate(fs->ubifs, ino, size);
}

int ubikit_mkdir(struct ubikit_fs *fs, const char *path, uint32_t mode)
{
	return ubikit_mknod(fs, path, S_IFDIR | (mode & 07777), 0, 0);
}

int ubikit_mknod(struct ubikit_fs *fs, const char *path, uint32_t mode, uint32_t major, uint32_t minor)
{
	uint64_t dir;
	char name[256];
	size_t nlen;
	int err = rw(fs);
	if (!err)
		err = fs_resolve_parent(fs, path, &dir, name, &nlen);
	if (!err)
		err = ubifs_mknod(fs->ubifs, dir, name, nlen, mode, major, minor, (uint32_t)geteuid(), (uint32_t)getegid(),
				  NULL);
	return err;
}

int ubikit_symlink(struct ubikit_fs *fs, const char *target, const char *linkpath)
{
	uint64_t dir;
	char name[256];
	size_t nlen;
	int err = rw(fs);
	if (!err)
		err = fs_resolve_parent(fs, linkpath, &dir, name, &nlen);
	if (!err)
		err = ubifs_symlink(fs->ubifs, dir, name, nlen, target, strlen(target), (uint32_t)geteuid(),
				    (uint32_t)getegid(), NULL);
	return err;
}

int ubikit_link(struct ubikit_fs *fs, const char *oldpath, const char *newpath)
{
	uint64_t ino, dir;
	char name[256];
	size_t nlen;
	int err = rw(fs);
	if (!err)
		err = fs_resolve(fs, oldpath, 0, &ino);
	if (!err)
		err = fs_resolve_parent(fs, newpath, &dir, name, &nlen);
	return err ? err : ubifs_link(fs->ubifs, ino, dir, name, nlen);
}

int ubikit_unlink(struct ubikit_fs *fs, const char *path)
{
	uint64_t dir;
	char name[256];
	size_t nlen;
	int err = rw(fs);
	if (!err)
		err = fs_resolve_parent(fs, path, &dir, name, &nlen);
	return err ? err : ubifs_unlink(fs->ubifs, dir, name, nlen);
}

int ubikit_rmdir(struct ubikit_fs *fs, const char *path)
{
	uint64_t dir;
	char name[256];
	size_t nlen;
	int err = rw(fs);
	if (!err)
		err = fs_resolve_parent(fs, path, &dir, name, &nlen);
	return err ? err : ubifs_rmdir(fs->ubifs, dir, name, nlen);
}

int ubikit_rename(struct ubikit_fs *fs, const char *oldpath, const char *newpath, unsigned flags)
{
	uint64_t od, nd;
	char on[256], nn[256];
	size_t ol, nl;
	int err = rw(fs);
	if (!err)
		err = fs_resolve_parent(fs, oldpath, &od, on, &ol);
	if (!err)
		err = fs_resolve_parent(fs, newpath, &nd, nn, &nl);
	return err ? err : ubifs_rename(fs->ubifs, od, on, ol, nd, nn, nl, flags);
}

static int set_attr(struct ubikit_fs *fs, const char *path, const struct ubifs_setattr *a)
{
	uint64_t ino;
	int err = rw(fs);
	if (!err)
		err = fs_resolve(fs, path, 1, &ino);
	return err ? err : ubifs_setattr(fs->ubifs, ino, a);
}

int ubikit_chmod(struct ubikit_fs *fs, const char *path, uint32_t mode)
{
	struct ubifs_setattr a = {.valid = UBIFS_SET_MODE, .mode = mode};
	return set_attr(fs, path, &a);
}

int ubikit_chown(struct ubikit_fs *fs, const char *path, uint32_t uid, uint32_t gid)
{
	struct ubifs_setattr a = {.uid = uid, .gid = gid};
	if (uid != (uint32_t)-1)
		a.valid |= UBIFS_SET_UID;
	if (gid != (uint32_t)-1)
		a.valid |= UBIFS_SET_GID;
	return set_attr(fs, path, &a);
}

int ubikit_utimens(struct ubikit_fs *fs, const char *path, const int64_t *atime_sec, const uint32_t *atime_nsec,
		   const int64_t *mtime_sec, const uint32_t *mtime_nsec)
{
	struct ubifs_setattr a = {0};
	if (atime_sec) {
		a.valid |= UBIFS_SET_ATIME;
		a.atime_sec = *atime_sec;
		a.atime_nsec = atime_nsec ? *atime_nsec : 0;
	}
	if (mtime_sec) {
		a.valid |= UBIFS_SET_MTIME;
		a.mtime_sec = *mtime_sec;
		a.mtime_nsec = mtime_nsec ? *mtime_nsec : 0;
	}
	return set_attr(fs, path, &a);
}

int ubikit_setxattr(struct ubikit_fs *fs, const char *path, const char *name, const void *value, size_t size,
		    int flags)
{
	uint64_t ino;
	int err = rw(fs);
	if (!err)
		err = fs_resolve(fs, path, 0, &ino);
	return err ? err : ubifs_setxattr(fs->ubifs, ino, name, value, size, flags);
}

int ubikit_removexattr(struct ubikit_fs *fs, const char *path, const char *name)
{
	uint64_t ino;
	int err = rw(fs);
	if (!err)
		err = fs_resolve(fs, path, 0, &ino);
	return err ? err : ubifs_removexattr(fs->ubifs, ino, name);
}
