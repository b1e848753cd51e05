/* fs_write — the changing side of the ubikit fs API, by path and by open
 * file: create/open flags, write/pwrite/append, truncate, fsync/sync, mkdir,
 * mknod, symlink, link, unlink, rmdir, rename with flags, chmod/chown/
 * utimens, setxattr/removexattr. Paths are resolved here (the last
 * component is looked up in its directory); the UBIFS layer does the rest.
 * Read-only mounts answer EROFS. A last component "/", "." or ".." and
 * trailing slashes give Linux's errnos (namei.c: filename_create,
 * do_rmdir, do_unlinkat, do_renameat2), checked by test_fs_errnos. */
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

/* The parent and name of an entry to create (mknod, symlink, link's new
 * name; mkdir with dir_ok): "/", "." and ".." exist already; "name/"
 * names a directory, so for anything else it is -ENOENT when absent and
 * -EEXIST when present. */
static int create_parent(struct ubikit_fs *fs, const char *path, int dir_ok, uint64_t *dir, char name[256],
			 size_t *nlen)
{
	int slash, last = fs_path_last(path, &slash);
	if (last != FS_LAST_NORM)
		return -EEXIST;
	int err = fs_resolve_parent(fs, path, dir, name, nlen);
	if (!err && slash && !dir_ok) {
		uint64_t child;
		err = ubifs_lookup(fs->ubifs, *dir, name, *nlen, &child, NULL);
		if (!err)
			err = -EEXIST;
	}
	return err;
}

/* The mode of an existing entry, without following a symlink. */
static int entry_mode(struct ubikit_fs *fs, uint64_t dir, const char *name, size_t nlen, uint32_t *mode)
{
	uint64_t child;
	struct ubikit_stat st;
	int err = ubifs_lookup(fs->ubifs, dir, name, nlen, &child, NULL);
	if (!err)
		err = ubikit_stat_ino(fs, child, &st);
	if (!err)
		*mode = st.mode;
	return err;
}

int fs_create_file(struct ubikit_fs *fs, const char *path, uint32_t mode, uint64_t *ino)
{
	uint64_t dir;
	char name[256];
	size_t nlen;
	int err = rw(fs);
	if (!err)
		err = create_parent(fs, path, 0, &dir, name, &nlen);
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
	/* Linux's ftruncate(2) of a descriptor not open for writing: EINVAL
	 * (write(2) says EBADF) */
	if ((f->flags & O_ACCMODE) == O_RDONLY)
		return -EINVAL;
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
		err = create_parent(fs, path, S_ISDIR(mode), &dir, name, &nlen);
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
		err = create_parent(fs, linkpath, 0, &dir, name, &nlen);
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
		err = create_parent(fs, newpath, 0, &dir, name, &nlen);
	return err ? err : ubifs_link(fs->ubifs, ino, dir, name, nlen);
}

int ubikit_unlink(struct ubikit_fs *fs, const char *path)
{
	uint64_t dir;
	char name[256];
	size_t nlen;
	uint32_t mode;
	int slash, err = rw(fs);
	if (!err && fs_path_last(path, &slash) != FS_LAST_NORM)
		err = -EISDIR;
	if (!err)
		err = fs_resolve_parent(fs, path, &dir, name, &nlen);
	if (!err && slash) { /* "name/": never a file removed */
		err = entry_mode(fs, dir, name, nlen, &mode);
		if (!err)
			err = S_ISDIR(mode) ? -EISDIR : -ENOTDIR;
	}
	return err ? err : ubifs_unlink(fs->ubifs, dir, name, nlen);
}

int ubikit_rmdir(struct ubikit_fs *fs, const char *path)
{
	uint64_t dir;
	char name[256];
	size_t nlen;
	int slash, err = rw(fs);
	int last = fs_path_last(path, &slash);
	if (!err && last != FS_LAST_NORM)
		err = last == FS_LAST_ROOT ? -EBUSY : last == FS_LAST_DOT ? -EINVAL : -ENOTEMPTY;
	if (!err)
		err = fs_resolve_parent(fs, path, &dir, name, &nlen);
	return err ? err : ubifs_rmdir(fs->ubifs, dir, name, nlen);
}

int ubikit_rename(struct ubikit_fs *fs, const char *oldpath, const char *newpath, unsigned flags)
{
	uint64_t od, nd;
	char on[256], nn[256];
	size_t ol, nl;
	uint32_t mode;
	int oslash, nslash, err = rw(fs);
	if (!err && (fs_path_last(oldpath, &oslash) != FS_LAST_NORM || fs_path_last(newpath, &nslash) != FS_LAST_NORM))
		err = -EBUSY;
	if (!err)
		err = fs_resolve_parent(fs, oldpath, &od, on, &ol);
	if (!err)
		err = fs_resolve_parent(fs, newpath, &nd, nn, &nl);
	if (!err && (oslash || nslash)) { /* slashes only after a directory */
		err = entry_mode(fs, od, on, ol, &mode);
		if (!err && !S_ISDIR(mode))
			err = -ENOTDIR;
	}
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
