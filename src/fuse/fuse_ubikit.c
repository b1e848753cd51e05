/* fuse_ubikit — see fuse_ubikit.h. The low-level operations translate
 * FUSE requests into the inode-based calls of <ubikit/ubikit.h>; errors
 * are the fs layer's negative errno values, passed back unchanged. */
#define FUSE_USE_VERSION 35
#include "fuse/fuse_ubikit.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <ubikit/ubikit.h>

#include "fuse/fuse_ubikit_priv.h"

/* Every change goes through this process and its replies keep the
 * kernel's caches right, so attributes and entries may be cached long. */
#define FU_TIMEOUT 3600.0
/* readdir offsets: 0 start, 1 after ".", 2 after "..", else 2 + fs cookie */
#define FU_OFF_BASE 2


/* What the fs layer reports about damaged content (a bad node, a check
 * that failed) reaches programs as EIO, the error they expect from a file
 * system; EINVAL would read as a bug in the caller. Other codes pass. */
int fu_err(int neg)
{
	int e = -neg;
	if (e == EINVAL || e == EBADMSG || e == EUCLEAN || e == ELOOP || e == EFBIG || e == ERANGE)
		return EIO;
	return e;
}

/* A name the kernel cannot take in a directory listing: it would fail the
 * whole directory with EIO (or show a second "." or ".."). */
static bool fu_bad_name(const char *n)
{
	return !n[0] || strchr(n, '/') || !strcmp(n, ".") || !strcmp(n, "..");
}

struct ubikit_fs *fu_fs(fuse_req_t req)
{
	return ((struct fu_ctx *)fuse_req_userdata(req))->fs;
}

int fu_flush_below(fuse_req_t req)
{
	struct fu_ctx *c = fuse_req_userdata(req);
	return c->flush ? c->flush(c->flush_arg) : 0;
}

void fu_to_stat(const struct ubikit_stat *u, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = u->ino;
	st->st_mode = u->mode;
	st->st_nlink = u->nlink;
	st->st_uid = u->uid;
	st->st_gid = u->gid;
	st->st_size = (off_t)u->size;
	st->st_blocks = (blkcnt_t)u->blocks;
	st->st_blksize = 4096;
	if (S_ISCHR(u->mode) || S_ISBLK(u->mode))
		st->st_rdev = makedev(u->rdev_major, u->rdev_minor);
	st->st_atim.tv_sec = u->atime_sec;
	st->st_atim.tv_nsec = u->atime_nsec;
	st->st_mtim.tv_sec = u->mtime_sec;
	st->st_mtim.tv_nsec = u->mtime_nsec;
	st->st_ctim.tv_sec = u->ctime_sec;
	st->st_ctim.tv_nsec = u->ctime_nsec;
}

int fu_entry(struct ubikit_fs *fs, uint64_t ino, struct fuse_entry_param *e)
{
	struct ubikit_stat us;
	int ret = ubikit_stat_ino(fs, ino, &us);
	if (ret)
		return ret;
	memset(e, 0, sizeof(*e));
	e->ino = ino;
	e->generation = 1;
	e->attr_timeout = FU_TIMEOUT;
	e->entry_timeout = FU_TIMEOUT;
	fu_to_stat(&us, &e->attr);
	return 0;
}

static void fu_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct ubikit_fs *fs = fu_fs(req);
	uint64_t ino;
	int ret = ubikit_lookup_ino(fs, parent, name, &ino);
	struct fuse_entry_param e;
	if (!ret)
		ret = fu_entry(fs, ino, &e);
	if (ret)
		fuse_reply_err(req, ret == -ENOENT ? ENOENT : fu_err(ret));
	else
		fuse_reply_entry(req, &e);
}

static void fu_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	(void)ino;
	(void)nlookup;
	fuse_reply_none(req);
}

static void fu_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets)
{
	(void)count;
	(void)forgets;
	fuse_reply_none(req);
}

static void fu_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)fi;
	struct ubikit_stat us;
	int ret = ubikit_stat_ino(fu_fs(req), ino, &us);
	if (ret) {
		fuse_reply_err(req, fu_err(ret));
		return;
	}
	struct stat st;
	fu_to_stat(&us, &st);
	fuse_reply_attr(req, &st, FU_TIMEOUT);
}

static void fu_readlink(fuse_req_t req, fuse_ino_t ino)
{
	char buf[4097];
	ssize_t n = ubikit_readlink_ino(fu_fs(req), ino, buf, sizeof(buf) - 1);
	if (n < 0) {
		/* readlink(2) of a non-symlink is EINVAL; any other EINVAL is damage */
		struct ubikit_stat us;
		if (n == -EINVAL && ubikit_stat_ino(fu_fs(req), ino, &us) == 0 && !S_ISLNK(us.mode))
			fuse_reply_err(req, EINVAL);
		else
			fuse_reply_err(req, fu_err((int)n));
		return;
	}
	buf[n] = '\0';
	fuse_reply_readlink(req, buf);
}

static void fu_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	bool writing = (fi->flags & O_ACCMODE) != O_RDONLY || (fi->flags & O_TRUNC);
	if (writing && ubikit_is_read_only(fu_fs(req))) {
		fuse_reply_err(req, EROFS);
		return;
	}
	struct ubikit_stat us;
	int ret = ubikit_stat_ino(fu_fs(req), ino, &us);
	if (ret) {
		fuse_reply_err(req, -ret);
		return;
	}
	if (S_ISDIR(us.mode)) {
		fuse_reply_err(req, EISDIR);
		return;
	}
	/* O_TRUNC empties the file whatever the access mode (Linux: O_RDONLY |
	 * O_TRUNC truncates too, and needs write permission) */
	if ((fi->flags & O_TRUNC) && S_ISREG(us.mode) && us.size &&
	    (ret = ubikit_truncate_ino(fu_fs(req), ino, 0)) != 0) {
		fuse_reply_err(req, fu_err(ret));
		return;
	}
	/* read-only: nothing changes, keep the pages; read-write: each open
	 * reads again what the file system holds */
	fi->keep_cache = ubikit_is_read_only(fu_fs(req)) ? 1 : 0;
	/* (the request is gone after the reply: take the context first) */
	struct fu_ctx *c = fuse_req_userdata(req);
	if (fuse_reply_open(req, fi) == 0 && !ubikit_is_read_only(c->fs))
		fu_open_count(c, ino);
}

static void fu_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
	(void)fi;
	if (off < 0) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	char *buf = malloc(size ? size : 1);
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	ssize_t n = ubikit_pread_ino(fu_fs(req), ino, buf, size, (uint64_t)off);
	if (n < 0) {
		fuse_log(FUSE_LOG_ERR, "ubikit: read of inode %llu at %lld: %s\n", (unsigned long long)ino,
			 (long long)off, ubikit_errmsg(fu_fs(req))[0] ? ubikit_errmsg(fu_fs(req)) : strerror((int)-n));
		fuse_reply_err(req, fu_err((int)n));
	}
	else
		fuse_reply_buf(req, buf, (size_t)n);
	free(buf);
}

static void fu_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct ubikit_stat us;
	int ret = ubikit_stat_ino(fu_fs(req), ino, &us);
	if (ret) {
		fuse_reply_err(req, -ret);
		return;
	}
	if (!S_ISDIR(us.mode)) {
		fuse_reply_err(req, ENOTDIR);
		return;
	}
	/* read-write: the listing may change behind the kernel's back (a
	 * hidden open file removed at its last close) */
	fi->keep_cache = ubikit_is_read_only(fu_fs(req)) ? 1 : 0;
	fi->cache_readdir = fi->keep_cache;
	fuse_reply_open(req, fi);
}

static void fu_readdir_common(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, bool plus)
{
	struct ubikit_fs *fs = fu_fs(req);
	char *buf = malloc(size ? size : 1);
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	size_t used = 0;
	uint64_t pos = (uint64_t)off;
	int ret = 0;
	struct ubikit_dirent de;
	memset(&de, 0, sizeof(de));
	while (used < size) {
		const char *name;
		uint64_t next, eino;
		if (pos == 0 || pos == 1) {
			name = pos == 0 ? "." : "..";
			eino = ino;
			next = pos + 1;
		} else {
			ret = ubikit_readdir_ino(fs, ino, pos - FU_OFF_BASE, &de);
			if (ret <= 0)
				break;
			name = de.name;
			eino = de.ino;
			next = de.cookie + FU_OFF_BASE;
			if (ino == UBIKIT_ROOT_INO && !strncmp(name, ".ubikit_hidden_", 15) &&
			    !ubikit_is_read_only(fs)) {
				pos = next; /* an unlinked file still open (fuse_ubikit_open.c) */
				continue;
			}
			if (fu_bad_name(name)) {
				/* Hide it (and say so) rather than lose the directory. */
				fuse_log(FUSE_LOG_WARNING,
					 "ubikit: directory inode %llu: entry with an impossible name \"%s\" "
					 "(inode %llu, %zu bytes) hidden\n",
					 (unsigned long long)ino, name, (unsigned long long)eino, strlen(name));
				pos = next;
				continue;
			}
		}
		size_t len;
		if (plus) {
			struct fuse_entry_param e;
			if (pos < FU_OFF_BASE) {
				memset(&e, 0, sizeof(e));
				e.attr.st_ino = eino;
				e.attr.st_mode = S_IFDIR;
			} else if ((ret = fu_entry(fs, eino, &e)) != 0) {
				break;
			}
			len = fuse_add_direntry_plus(req, buf + used, size - used, name, &e, (off_t)next);
		} else {
			struct stat st;
			memset(&st, 0, sizeof(st));
			st.st_ino = eino;
			st.st_mode = pos < FU_OFF_BASE ? S_IFDIR : (mode_t)(de.type << 12);
			len = fuse_add_direntry(req, buf + used, size - used, name, &st, (off_t)next);
		}
		if (len > size - used)
			break; /* did not fit: this entry comes first next time */
		used += len;
		pos = next;
	}
	if (ret < 0 && used == 0)
		fuse_reply_err(req, fu_err(ret));
	else
		fuse_reply_buf(req, buf, used);
	free(buf);
}

static void fu_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
	(void)fi;
	fu_readdir_common(req, ino, size, off, false);
}

static void fu_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
	(void)fi;
	fu_readdir_common(req, ino, size, off, true);
}

static void fu_statfs(fuse_req_t req, fuse_ino_t ino)
{
	(void)ino;
	struct ubikit_statfs s;
	int ret = ubikit_statfs(fu_fs(req), &s);
	if (ret) {
		fuse_reply_err(req, -ret);
		return;
	}
	struct statvfs v;
	memset(&v, 0, sizeof(v));
	v.f_bsize = v.f_frsize = (unsigned long)s.block_size;
	v.f_blocks = s.blocks;
	v.f_bfree = s.blocks_free;
	v.f_bavail = s.blocks_avail;
	v.f_files = s.files;
	v.f_namemax = (unsigned long)s.name_max;
	v.f_flag = ubikit_is_read_only(fu_fs(req)) ? ST_RDONLY : 0;
	fuse_reply_statfs(req, &v);
}

static void fu_xattr_reply(fuse_req_t req, ssize_t n, char *buf, size_t size)
{
	if (n < 0)
		fuse_reply_err(req, (int)-n);
	else if (size == 0)
		fuse_reply_xattr(req, (size_t)n);
	else
		fuse_reply_buf(req, buf, (size_t)n);
}

static void fu_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	char *buf = size ? malloc(size) : NULL;
	if (size && !buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	ssize_t n = ubikit_listxattr_ino(fu_fs(req), ino, buf, size);
	fu_xattr_reply(req, n, buf, size);
	free(buf);
}

static void fu_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	char *buf = size ? malloc(size) : NULL;
	if (size && !buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	ssize_t n = ubikit_getxattr_ino(fu_fs(req), ino, name, buf, size);
	fu_xattr_reply(req, n, buf, size);
	free(buf);
}

static const struct fuse_lowlevel_ops fu_ops = {
	.lookup = fu_lookup,
	.forget = fu_forget,
	.forget_multi = fu_forget_multi,
	.getattr = fu_getattr,
	.readlink = fu_readlink,
	.open = fu_open,
	.read = fu_read,
	.opendir = fu_opendir,
	.readdir = fu_readdir,
	.readdirplus = fu_readdirplus,
	.statfs = fu_statfs,
	.listxattr = fu_listxattr,
	.getxattr = fu_getxattr,
	/* the changing side: fuse_ubikit_write.inc */
	.create = fu_create,
	.mknod = fu_mknod,
	.mkdir = fu_mkdir,
	.symlink = fu_symlink,
	.link = fu_link,
	.unlink = fu_unlink,
	.rmdir = fu_rmdir,
	.rename = fu_rename,
	.setattr = fu_setattr,
	.write = fu_write,
	.flush = fu_flush,
	.release = fu_release,
	.fsync = fu_fsync,
	.fsyncdir = fu_fsyncdir,
	.setxattr = fu_setxattr,
	.removexattr = fu_removexattr,
};

int fuse_ubikit_main(struct ubikit_fs *fs, const char *mountpoint, const struct fuse_ubikit_opts *o)
{
	/* Absolute before anything: daemonizing changes to "/", and the unmount
	 * at a signal would then miss a relative mount point and leave a dead
	 * mount. And a directory only: FUSE (as root) would mount over a file. */
	char abs[PATH_MAX];
	struct stat mst;
	if (!realpath(mountpoint, abs) || stat(abs, &mst)) {
		fprintf(stderr, "ubikit mount: mount point %s: %s\n", mountpoint, strerror(errno));
		return -errno;
	}
	if (!S_ISDIR(mst.st_mode)) {
		fprintf(stderr, "ubikit mount: mount point %s is not a directory\n", mountpoint);
		return -ENOTDIR;
	}
	mountpoint = abs;
	struct fu_ctx ctx = {.fs = fs, .flush = o->flush, .flush_arg = o->flush_arg};
	struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
	char opts[1024];
	/* fsname: commas would split the option string */
	char fsname[256];
	snprintf(fsname, sizeof(fsname), "%s", o->fsname ? o->fsname : "ubikit");
	for (char *p = fsname; *p; p++)
		if (*p == ',' || *p == '\\')
			*p = '_';
	snprintf(opts, sizeof(opts), "%s,default_permissions,fsname=%s,subtype=ubikit%s%s",
		 ubikit_is_read_only(fs) ? "ro" : "rw", fsname,
		 o->extra_opts && o->extra_opts[0] ? "," : "", o->extra_opts ? o->extra_opts : "");
	if (fuse_opt_add_arg(&args, "ubikit") || fuse_opt_add_arg(&args, "-o") || fuse_opt_add_arg(&args, opts) ||
	    (o->debug && fuse_opt_add_arg(&args, "-d"))) {
		fuse_opt_free_args(&args);
		return -ENOMEM;
	}
	struct fuse_session *se = fuse_session_new(&args, &fu_ops, sizeof(fu_ops), &ctx);
	fuse_opt_free_args(&args);
	if (!se)
		return -EINVAL;
	int ret = -EIO;
	if (fuse_set_signal_handlers(se) != 0)
		goto out_destroy;
	if (fuse_session_mount(se, mountpoint) != 0)
		goto out_signals;
	if (fuse_daemonize(o->foreground || o->debug) != 0)
		goto out_unmount;
	ret = fuse_session_loop(se);
	ret = ret > 0 ? 0 : ret; /* >0: ended by a signal, a normal way to stop */
	fu_open_end(&ctx);
out_unmount:
	fuse_session_unmount(se);
out_signals:
	fuse_remove_signal_handlers(se);
out_destroy:
	fuse_session_destroy(se);
	return ret;
}
