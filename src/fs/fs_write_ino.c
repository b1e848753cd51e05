/* fs_write_ino — the changing side of the fs API by inode number, for
 * front ends that keep inode numbers themselves (the FUSE low-level API):
 * (directory, name) pairs instead of paths, the caller's uid/gid for new
 * inodes. Read-only mounts answer EROFS. */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "fs/fs.h"

static int rw_name(const struct ubikit_fs *fs, const char *name)
{
	if (fs->read_only)
		return -EROFS;
	if (name) {
		size_t n = strlen(name);
		if (!n || !strcmp(name, ".") || !strcmp(name, "..") || strchr(name, '/'))
			return -EINVAL;
		if (n > 255)
			return -ENAMETOOLONG;
	}
	return 0;
}

int ubikit_is_read_only(const struct ubikit_fs *fs)
{
	return fs->read_only ? 1 : 0;
}

int ubikit_mknod_ino(struct ubikit_fs *fs, uint64_t parent, const char *name, uint32_t mode, uint32_t major,
		     uint32_t minor, uint32_t uid, uint32_t gid, uint64_t *ino)
{
	int err = rw_name(fs, name);
	return err ? err : ubifs_mknod(fs->ubifs, parent, name, strlen(name), mode, major, minor, uid, gid, ino);
}

int ubikit_symlink_ino(struct ubikit_fs *fs, uint64_t parent, const char *name, const char *target, uint32_t uid,
		       uint32_t gid, uint64_t *ino)
{
	int err = rw_name(fs, name);
	return err ? err
		   : ubifs_symlink(fs->ubifs, parent, name, strlen(name), target, strlen(target), uid, gid, ino);
}

int ubikit_link_ino(struct ubikit_fs *fs, uint64_t ino, uint64_t newparent, const char *newname)
{
	int err = rw_name(fs, newname);
	return err ? err : ubifs_link(fs->ubifs, ino, newparent, newname, strlen(newname));
}

int ubikit_unlink_ino(struct ubikit_fs *fs, uint64_t parent, const char *name)
{
	int err = rw_name(fs, name);
	return err ? err : ubifs_unlink(fs->ubifs, parent, name, strlen(name));
}

int ubikit_rmdir_ino(struct ubikit_fs *fs, uint64_t parent, const char *name)
{
	int err = rw_name(fs, name);
	return err ? err : ubifs_rmdir(fs->ubifs, parent, name, strlen(name));
}

int ubikit_rename_ino(struct ubikit_fs *fs, uint64_t parent, const char *name, uint64_t newparent,
		      const char *newname, unsigned flags)
{
	int err = rw_name(fs, name);
	if (!err)
		err = rw_name(fs, newname);
	return err ? err
		   : ubifs_rename(fs->ubifs, parent, name, strlen(name), newparent, newname, strlen(newname), flags);
}

ssize_t ubikit_pwrite_ino(struct ubikit_fs *fs, uint64_t ino, const void *buf, size_t len, uint64_t off)
{
	int err = rw_name(fs, NULL);
	return err ? err : ubifs_write_data(fs->ubifs, ino, buf, len, off);
}

int ubikit_truncate_ino(struct ubikit_fs *fs, uint64_t ino, uint64_t size)
{
	int err = rw_name(fs, NULL);
	return err ? err : ubifs_truncate(fs->ubifs, ino, size);
}

int ubikit_setattr_ino(struct ubikit_fs *fs, uint64_t ino, const struct ubikit_setattr *a)
{
	int err = rw_name(fs, NULL);
	if (err)
		return err;
	struct ubifs_setattr u = {0};
	if (a->valid & UBIKIT_SET_MODE)
		u.valid |= UBIFS_SET_MODE, u.mode = a->mode;
	if (a->valid & UBIKIT_SET_UID)
		u.valid |= UBIFS_SET_UID, u.uid = a->uid;
	if (a->valid & UBIKIT_SET_GID)
		u.valid |= UBIFS_SET_GID, u.gid = a->gid;
	if (a->valid & UBIKIT_SET_ATIME)
		u.valid |= UBIFS_SET_ATIME, u.atime_sec = a->atime_sec, u.atime_nsec = a->atime_nsec;
	if (a->valid & UBIKIT_SET_MTIME)
		u.valid |= UBIFS_SET_MTIME, u.mtime_sec = a->mtime_sec, u.mtime_nsec = a->mtime_nsec;
	return ubifs_setattr(fs->ubifs, ino, &u);
}

int ubikit_setxattr_ino(struct ubikit_fs *fs, uint64_t ino, const char *name, const void *value, size_t size,
			int flags)
{
	int err = rw_name(fs, NULL);
	return err ? err : ubifs_setxattr(fs->ubifs, ino, name, value, size, flags);
}

int ubikit_removexattr_ino(struct ubikit_fs *fs, uint64_t ino, const char *name)
{
	int err = rw_name(fs, NULL);
	return err ? err : ubifs_removexattr(fs->ubifs, ino, name);
}

int ubikit_fsync_ino(struct ubikit_fs *fs, uint64_t ino)
{
	if (fs->read_only)
		return 0;
	return ubifs_fsync(fs->ubifs, ino);
}
