/* fuse_ubikit_write — the changing FUSE operations of a read-write mount:
 * create, mknod, mkdir, symlink, link, unlink, rmdir, rename (with
 * RENAME_NOREPLACE / EXCHANGE / WHITEOUT), setattr (mode, owner, size,
 * times), write, flush, release, fsync, fsyncdir, setxattr, removexattr,
 * each one call of the inode-based fs API. New inodes belong to the
 * caller (fuse_req_ctx). Durability: fsync reaches ubikit_fsync_ino,
 * fsyncdir a commit (ubikit_sync: sync(2) does not reach a FUSE file
 * system, fsync of a directory does), unmount the final commit (the
 * caller's ubikit_unmount after the session). A read-only mount answers
 * EROFS from the fs layer. */
#define FUSE_USE_VERSION 35
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <ubikit/ubikit.h>

#include "fuse/fuse_ubikit_priv.h"

static void reply_entry_or_err(fuse_req_t req, int ret, uint64_t ino)
{
	struct fuse_entry_param e;
	if (!ret)
		ret = fu_entry(fu_fs(req), ino, &e);
	if (ret)
		fuse_reply_err(req, fu_err(ret));
	else
		fuse_reply_entry(req, &e);
}

static void reply_status(fuse_req_t req, int ret)
{
	fuse_reply_err(req, ret ? fu_err(ret) : 0);
}

static int new_node(fuse_req_t req, fuse_ino_t parent, const char *name, uint32_t mode, dev_t rdev, uint64_t *ino)
{
	const struct fuse_ctx *c = fuse_req_ctx(req);
	return ubikit_mknod_ino(fu_fs(req), parent, name, mode, major(rdev), minor(rdev), c->uid, c->gid, ino);
}

void fu_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, struct fuse_file_info *fi)
{
	uint64_t ino = 0;
	int ret = new_node(req, parent, name, S_IFREG | (mode & 07777), 0, &ino);
	struct fuse_entry_param e;
	if (!ret)
		ret = fu_entry(fu_fs(req), ino, &e);
	if (ret) {
		fuse_reply_err(req, fu_err(ret));
		return;
	}
	fi->keep_cache = 0;
	struct fu_ctx *c = fuse_req_userdata(req); /* (req is gone after the reply) */
	if (fuse_reply_create(req, &e, fi) == 0)
		fu_open_count(c, ino);
}

void fu_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev)
{
	uint64_t ino = 0;
	int ret = new_node(req, parent, name, mode, rdev, &ino);
	reply_entry_or_err(req, ret, ino);
}

void fu_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	uint64_t ino = 0;
	int ret = new_node(req, parent, name, S_IFDIR | (mode & 07777), 0, &ino);
	reply_entry_or_err(req, ret, ino);
}

void fu_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
	const struct fuse_ctx *c = fuse_req_ctx(req);
	uint64_t ino = 0;
	int ret = ubikit_symlink_ino(fu_fs(req), parent, name, link, c->uid, c->gid, &ino);
	reply_entry_or_err(req, ret, ino);
}

void fu_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
	int ret = ubikit_link_ino(fu_fs(req), ino, newparent, newname);
	reply_entry_or_err(req, ret, ino);
}

void fu_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	/* an open file keeps living under a hidden name until its last close */
	int ret = fu_open_hide(fuse_req_userdata(req), parent, name);
	if (ret == 0)
		ret = ubikit_unlink_ino(fu_fs(req), parent, name);
	reply_status(req, ret < 0 ? ret : 0);
}

void fu_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	reply_status(req, ubikit_rmdir_ino(fu_fs(req), parent, name));
}

void fu_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent, const char *newname,
	       unsigned int flags)
{
	/* renameat2's flags: NOREPLACE 1, EXCHANGE 2, WHITEOUT 4, as ours */
	unsigned f = 0;
	if (flags & 1u)
		f |= UBIKIT_RENAME_NOREPLACE;
	if (flags & 2u)
		f |= UBIKIT_RENAME_EXCHANGE;
	if (flags & 4u)
		f |= UBIKIT_RENAME_WHITEOUT;
	if (flags & ~7u) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	/* a target that is replaced loses its last name: hide it if open */
	int ret = 0;
	if (!(f & (UBIKIT_RENAME_EXCHANGE | UBIKIT_RENAME_NOREPLACE))) {
		uint64_t src, dst;
		if (!ubikit_lookup_ino(fu_fs(req), parent, name, &src) &&
		    !ubikit_lookup_ino(fu_fs(req), newparent, newname, &dst) && src != dst)
			ret = fu_open_hide(fuse_req_userdata(req), newparent, newname);
	}
	if (ret >= 0)
		ret = ubikit_rename_ino(fu_fs(req), parent, name, newparent, newname, f);
	reply_status(req, ret < 0 ? ret : 0);
}

void fu_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set, struct fuse_file_info *fi)
{
	(void)fi;
	struct ubikit_fs *fs = fu_fs(req);
	int ret = 0;
	if ((to_set & FUSE_SET_ATTR_SIZE) && attr->st_size < 0) {
		fuse_reply_err(req, EINVAL); /* (fu_err would say EIO: a damaged node) */
		return;
	}
	if (to_set & FUSE_SET_ATTR_SIZE)
		ret = ubikit_truncate_ino(fs, ino, (uint64_t)attr->st_size);
	struct ubikit_setattr a = {0};
	if (to_set & FUSE_SET_ATTR_MODE)
		a.valid |= UBIKIT_SET_MODE, a.mode = attr->st_mode & 07777;
	if (to_set & FUSE_SET_ATTR_UID)
		a.valid |= UBIKIT_SET_UID, a.uid = attr->st_uid;
	if (to_set & FUSE_SET_ATTR_GID)
		a.valid |= UBIKIT_SET_GID, a.gid = attr->st_gid;
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	if (to_set & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_ATIME_NOW)) {
		const struct timespec *t = (to_set & FUSE_SET_ATTR_ATIME_NOW) ? &now : &attr->st_atim;
		a.valid |= UBIKIT_SET_ATIME, a.atime_sec = t->tv_sec, a.atime_nsec = (uint32_t)t->tv_nsec;
	}
	if (to_set & (FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_MTIME_NOW)) {
		const struct timespec *t = (to_set & FUSE_SET_ATTR_MTIME_NOW) ? &now : &attr->st_mtim;
		a.valid |= UBIKIT_SET_MTIME, a.mtime_sec = t->tv_sec, a.mtime_nsec = (uint32_t)t->tv_nsec;
	}
	if (!ret && a.valid)
		ret = ubikit_setattr_ino(fs, ino, &a);
	struct ubikit_stat us;
	if (!ret)
		ret = ubikit_stat_ino(fs, ino, &us);
	if (ret) {
		fuse_reply_err(req, fu_err(ret));
		return;
	}
	struct stat st;
	fu_to_stat(&us, &st);
	fuse_reply_attr(req, &st, 3600.0);
}

void fu_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
	(void)fi;
	if (off < 0) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	ssize_t n = ubikit_pwrite_ino(fu_fs(req), ino, buf, size, (uint64_t)off);
	if (n < 0) {
		fuse_log(FUSE_LOG_ERR, "ubikit: write of inode %llu at %lld: %s\n", (unsigned long long)ino,
			 (long long)off, ubikit_errmsg(fu_fs(req))[0] ? ubikit_errmsg(fu_fs(req)) : strerror((int)-n));
		fuse_reply_err(req, fu_err((int)n));
	} else {
		fuse_reply_write(req, (size_t)n);
	}
}

void fu_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	/* close(2): nothing is held back in this process; fsync makes durable */
	(void)ino;
	(void)fi;
	fuse_reply_err(req, 0);
}

void fu_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)fi;
	fu_open_release(fuse_req_userdata(req), ino);
	fuse_reply_err(req, 0);
}

void fu_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	(void)datasync;
	(void)fi;
	int ret = ubikit_fsync_ino(fu_fs(req), ino);
	if (!ret)
		ret = fu_flush_below(req);
	reply_status(req, ret);
}

void fu_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	(void)ino;
	(void)datasync;
	(void)fi;
	struct ubikit_fs *fs = fu_fs(req);
	int ret = ubikit_is_read_only(fs) ? 0 : ubikit_sync(fs);
	if (!ret)
		ret = fu_flush_below(req);
	reply_status(req, ret);
}

void fu_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value, size_t size, int flags)
{
	/* No POSIX ACLs here (the mode bits are the permissions): say so, and
	 * cp -a, tar and the like fall back to chmod instead of storing an
	 * ACL that nothing applies. */
	if (!strncmp(name, "system.posix_acl_", 17)) {
		fuse_reply_err(req, EOPNOTSUPP);
		return;
	}
	int f = 0;
	if (flags & 1 /* XATTR_CREATE */)
		f |= UBIKIT_XATTR_CREATE;
	if (flags & 2 /* XATTR_REPLACE */)
		f |= UBIKIT_XATTR_REPLACE;
	int ret = ubikit_setxattr_ino(fu_fs(req), ino, name, value, size, f);
	fuse_reply_err(req, ret ? -ret : 0); /* ENODATA/EEXIST/ERANGE/ENOSPC are meant as they are */
}

void fu_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	int ret = ubikit_removexattr_ino(fu_fs(req), ino, name);
	fuse_reply_err(req, ret ? -ret : 0);
}
