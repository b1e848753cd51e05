/* fs_ops — the read side of the ubikit fs API: stat, open/read/close,
 * directories, symlinks and xattrs, by path and by inode number. open with
 * write flags: see fs_write.c (read-only mounts answer EROFS). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fs/fs.h"

struct ubikit_dir {
	struct ubikit_fs *fs;
	uint64_t ino;
	uint64_t pos;
	int done;
};

static void to_stat(const struct ubifs_inode *i, struct ubikit_stat *st)
{
	memset(st, 0, sizeof(*st));
	st->ino = i->inum;
	st->mode = i->mode;
	st->nlink = i->nlink;
	st->uid = i->uid;
	st->gid = i->gid;
	st->size = i->size;
	st->blocks = (i->size + 511) / 512;
	st->rdev_major = i->rdev_major;
	st->rdev_minor = i->rdev_minor;
	st->atime_sec = i->atime_sec;
	st->mtime_sec = i->mtime_sec;
	st->ctime_sec = i->ctime_sec;
	st->atime_nsec = i->atime_nsec;
	st->mtime_nsec = i->mtime_nsec;
	st->ctime_nsec = i->ctime_nsec;
	st->flags = i->flags;
}

static int stat_ino(struct ubikit_fs *fs, uint64_t ino, struct ubikit_stat *st)
{
	struct ubifs_inode *i = malloc(sizeof(*i));
	if (!i)
		return -ENOMEM;
	int err = ubifs_read_inode(fs->ubifs, ino, i);
	if (!err) {
		if (i->flags & UBIFS_XATTR_FL)
			err = -ENOENT; /* xattr inodes are not files */
		else
			to_stat(i, st);
		if (!err && S_ISLNK(i->mode) && (i->flags & UBIFS_CRYPT_FL)) {
			/* as the kernel: the size of the target as readlink shows it */
			char *t = malloc(UBIFS_MAX_INO_DATA * 2);
			size_t tl = 0;
			if (t && !ubifs_crypt_symlink(fs->ubifs, i, t, UBIFS_MAX_INO_DATA * 2, &tl))
				st->size = tl;
			free(t);
		}
	}
	free(i);
	return err;
}

int ubikit_stat_ino(struct ubikit_fs *fs, uint64_t ino, struct ubikit_stat *st)
{
	return stat_ino(fs, ino, st);
}

int ubikit_stat(struct ubikit_fs *fs, const char *path, struct ubikit_stat *st)
{
	uint64_t ino;
	int err = fs_resolve(fs, path, 1, &ino);
	return err ? err : stat_ino(fs, ino, st);
}

int ubikit_lstat(struct ubikit_fs *fs, const char *path, struct ubikit_stat *st)
{
	uint64_t ino;
	int err = fs_resolve(fs, path, 0, &ino);
	return err ? err : stat_ino(fs, ino, st);
}

int ubikit_lookup_ino(struct ubikit_fs *fs, uint64_t parent, const char *name, uint64_t *ino)
{
	if (!name || strchr(name, '/'))
		return -EINVAL;
	return ubifs_lookup(fs->ubifs, parent, name, strlen(name), ino, NULL);
}

/* O_CREAT of a missing file; with follow, a dangling symlink in the last
 * component leads to its target, which is created (as Linux does, up to
 * 40 links; a relative target is taken from the link's directory). */
static int create_through_links(struct ubikit_fs *fs, const char *path, int follow, uint32_t mode, uint64_t *ino)
{
	if (strlen(path) >= PATH_MAX)
		return -ENAMETOOLONG;
	char *p = malloc(PATH_MAX), *t = malloc(PATH_MAX);
	if (!p || !t) {
		free(p);
		free(t);
		return -ENOMEM;
	}
	int err = 0;
	strcpy(p, path);
	for (int links = 0; !err; links++) {
		struct ubikit_stat st;
		err = ubikit_lstat(fs, p, &st);
		if (err == -ENOENT) {
			err = fs_create_file(fs, p, mode, ino);
			break;
		}
		if (!err && (!follow || !S_ISLNK(st.mode)))
			err = -EEXIST; /* follow off: the link itself is there */
		if (!err && links == 40)
			err = -ELOOP;
		if (err)
			break;
		ssize_t n = ubikit_readlink(fs, p, t, PATH_MAX - 1);
		if (n < 0) {
			err = (int)n;
			break;
		}
		if (n >= PATH_MAX) {
			err = -ENAMETOOLONG;
			break;
		}
		t[n] = 0;
		char *slash = strrchr(p, '/');
		size_t dlen = t[0] == '/' || !slash ? 0 : (size_t)(slash - p) + 1;
		if (dlen + (size_t)n >= PATH_MAX)
			err = -ENAMETOOLONG;
		else
			memcpy(p + dlen, t, (size_t)n + 1); /* the link's directory + target */
	}
	free(p);
	free(t);
	return err;
}

int ubikit_open(struct ubikit_fs *fs, const char *path, int flags, uint32_t mode, struct ubikit_file **out)
{
	*out = NULL;
	int writing = (flags & O_ACCMODE) != O_RDONLY || (flags & (O_CREAT | O_TRUNC | O_APPEND));
	if (writing && fs->read_only)
		return -EROFS;
	uint64_t ino;
	int slash;
	if ((flags & O_CREAT) && (fs_path_last(path, &slash) != FS_LAST_NORM || slash)) {
		/* O_CREAT of "name/", "/", "." or "..": EISDIR once the parent
		 * is found (Linux open_last_lookups, do_open) */
		uint64_t dir;
		char name[256];
		size_t nlen;
		int err = fs_resolve_parent(fs, path, &dir, name, &nlen);
		return err && err != -EBUSY && err != -EINVAL ? err : -EISDIR;
	}
	int err = fs_resolve(fs, path, !(flags & O_NOFOLLOW), &ino);
	if (err == -ENOENT && (flags & O_CREAT))
		err = create_through_links(fs, path, !(flags & (O_EXCL | O_NOFOLLOW)), mode, &ino);
	else if (!err && (flags & O_CREAT) && (flags & O_EXCL))
		err = -EEXIST;
	if (err)
		return err;
	struct ubikit_file *f = malloc(sizeof(*f));
	if (!f)
		return -ENOMEM;
	err = ubifs_read_inode(fs->ubifs, ino, &f->ino);
	if (!err && (f->ino.flags & UBIFS_XATTR_FL))
		err = -ENOENT; /* as stat: an xattr inode is no file (a damaged dentry may point to one) */
	else if (!err && S_ISLNK(f->ino.mode))
		err = -ELOOP;
	else if (!err && S_ISDIR(f->ino.mode) && ((flags & O_ACCMODE) != O_RDONLY || (flags & O_CREAT)))
		err = -EISDIR;
	else if (!err && (flags & O_DIRECTORY) && !S_ISDIR(f->ino.mode))
		err = -ENOTDIR;
	else if (!err && writing && !S_ISREG(f->ino.mode) && !S_ISDIR(f->ino.mode))
		err = -EINVAL; /* devices, fifos, sockets: no data here */
	/* Linux truncates on O_TRUNC whatever the access mode (O_RDONLY too) */
	if (!err && (flags & O_TRUNC) && S_ISREG(f->ino.mode) && f->ino.size) {
		err = ubifs_truncate(fs->ubifs, ino, 0);
		if (!err)
			err = ubifs_read_inode(fs->ubifs, ino, &f->ino);
	}
	if (!err)
		err = ubifs_open_ref(fs->ubifs, ino); /* an unlinked open file lives on until closed */
	if (err) {
		free(f);
		return err;
	}
	f->fs = fs;
	f->pos = 0;
	f->flags = flags;
	*out = f;
	return 0;
}

/* on a read-write mount the inode may have changed since open */
static int fresh(struct ubikit_file *f)
{
	return f->fs->read_only ? 0 : ubifs_read_inode(f->fs->ubifs, f->ino.inum, &f->ino);
}

ssize_t ubikit_pread(struct ubikit_file *f, void *buf, size_t len, uint64_t off)
{
	int err = fresh(f);
	return err ? err : ubifs_read_data(f->fs->ubifs, &f->ino, buf, len, off);
}

ssize_t ubikit_read(struct ubikit_file *f, void *buf, size_t len)
{
	int err = fresh(f);
	if (err)
		return err;
	ssize_t n = ubifs_read_data(f->fs->ubifs, &f->ino, buf, len, f->pos);
	if (n > 0)
		f->pos += (uint64_t)n;
	return n;
}

int ubikit_close(struct ubikit_file *f)
{
	int err = f ? ubifs_close_ref(f->fs->ubifs, f->ino.inum) : 0;
	free(f);
	return err;
}

ssize_t ubikit_pread_ino(struct ubikit_fs *fs, uint64_t ino, void *buf, size_t len, uint64_t off)
{
	struct ubifs_inode *i = malloc(sizeof(*i));
	if (!i)
		return -ENOMEM;
	ssize_t ret = ubifs_read_inode(fs->ubifs, ino, i);
	if (!ret)
		ret = ubifs_read_data(fs->ubifs, i, buf, len, off);
	free(i);
	return ret;
}

int ubikit_seek_data_ino(struct ubikit_fs *fs, uint64_t ino, uint64_t off, uint64_t *data_off)
{
	struct ubifs_inode *i = malloc(sizeof(*i));
	if (!i)
		return -ENOMEM;
	int ret = ubifs_read_inode(fs->ubifs, ino, i);
	if (!ret)
		ret = ubifs_next_data(fs->ubifs, i, off, data_off);
	free(i);
	return ret;
}

static unsigned char dt_of(uint8_t itype)
{
	static const unsigned char dt[] = {8 /* REG */, 4 /* DIR */, 10 /* LNK */, 6 /* BLK */,
					   2 /* CHR */, 1 /* FIFO */, 12 /* SOCK */};
	return itype < sizeof(dt) ? dt[itype] : 0;
}

int ubikit_readdir_ino(struct ubikit_fs *fs, uint64_t dir, uint64_t cookie, struct ubikit_dirent *ent)
{
	struct ubifs_dirent d;
	int r = ubifs_readdir(fs->ubifs, dir, cookie, &d);
	if (r != 1)
		return r;
	ent->ino = d.inum;
	ent->type = dt_of(d.type);
	if (memchr(d.name, '\0', d.nlen))
		ent->name[0] = '\0'; /* no C string can hold it: shown as the impossible empty name */
	else
		memcpy(ent->name, d.name, (size_t)d.nlen + 1);
	ent->cookie = d.pos;
	return 1;
}

int ubikit_opendir(struct ubikit_fs *fs, const char *path, struct ubikit_dir **out)
{
	*out = NULL;
	uint64_t ino;
	int err = fs_resolve(fs, path, 1, &ino);
	if (err)
		return err;
	struct ubikit_stat st;
	err = stat_ino(fs, ino, &st);
	if (err)
		return err;
	if (!S_ISDIR(st.mode))
		return -ENOTDIR;
	struct ubikit_dir *d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->fs = fs;
	d->ino = ino;
	*out = d;
	return 0;
}

int ubikit_readdir(struct ubikit_dir *d, struct ubikit_dirent *ent)
{
	if (d->done)
		return 0;
	int r = ubikit_readdir_ino(d->fs, d->ino, d->pos, ent);
	if (r == 1)
		d->pos = ent->cookie;
	else
		d->done = 1;
	return r;
}

int ubikit_closedir(struct ubikit_dir *d)
{
	free(d);
	return 0;
}

ssize_t ubikit_readlink_ino(struct ubikit_fs *fs, uint64_t ino, char *buf, size_t size)
{
	struct ubifs_inode *i = malloc(sizeof(*i));
	if (!i)
		return -ENOMEM;
	ssize_t ret = ubifs_read_inode(fs->ubifs, ino, i);
	if (!ret) {
		if (!S_ISLNK(i->mode))
			ret = -EINVAL;
		else {
			/* the stored target, or an encrypted one decrypted / as its no-key name */
			char *t = malloc(UBIFS_MAX_INO_DATA * 2);
			size_t tl = 0;
			ret = t ? ubifs_crypt_symlink(fs->ubifs, i, t, UBIFS_MAX_INO_DATA * 2, &tl) : -ENOMEM;
			if (!ret) {
				size_t n = tl < size ? tl : size;
				memcpy(buf, t, n);
				ret = (ssize_t)n;
			}
			free(t);
		}
	}
	free(i);
	return ret;
}

ssize_t ubikit_readlink(struct ubikit_fs *fs, const char *path, char *buf, size_t size)
{
	uint64_t ino;
	int err = fs_resolve(fs, path, 0, &ino);
	return err ? err : ubikit_readlink_ino(fs, ino, buf, size);
}

ssize_t ubikit_listxattr_ino(struct ubikit_fs *fs, uint64_t ino, char *buf, size_t size)
{
	return ubifs_listxattr(fs->ubifs, ino, buf, size);
}

ssize_t ubikit_getxattr_ino(struct ubikit_fs *fs, uint64_t ino, const char *name, void *buf, size_t size)
{
	return ubifs_getxattr(fs->ubifs, ino, name, buf, size);
}

ssize_t ubikit_listxattr(struct ubikit_fs *fs, const char *path, char *buf, size_t size)
{
	uint64_t ino;
	int err = fs_resolve(fs, path, 1, &ino);
	return err ? err : ubifs_listxattr(fs->ubifs, ino, buf, size);
}

ssize_t ubikit_getxattr(struct ubikit_fs *fs, const char *path, const char *name, void *buf, size_t size)
{
	uint64_t ino;
	int err = fs_resolve(fs, path, 1, &ino);
	return err ? err : ubifs_getxattr(fs->ubifs, ino, name, buf, size);
}
