/* cmd_put — the copying of 'ubikit put': a host file or tree into the
 * image as 'cp -a' would: regular files (zero blocks of a sparse file stay
 * holes), directories (merged into existing ones), symlinks, devices,
 * fifos and sockets; then permission bits, owner, times (directories
 * after their contents) and xattrs; hard links within what is copied
 * become hard links in the image. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <ubikit/ubikit.h>

#include "tool_change.h"
#include "tool_image.h"

#define PUT_CHUNK (128u * 1024)

/* Host inodes with more than one link already copied: (dev, ino) -> image path. */
struct put_link {
	dev_t dev;
	ino_t ino;
	char *path;
};

struct put_ctx {
	struct ubikit_fs *fs;
	int verbose;
	bool squash; /* owners root (mkfs.ubifs -U) */
	unsigned *errors;
	struct put_link *links;
	size_t nlinks, cap;
	char *buf;
};

static void put_err(struct put_ctx *c, const char *what, const char *path, int neg)
{
	fprintf(stderr, "ubikit put: %s '%s': %s\n", what, path, strerror(-neg));
	(*c->errors)++;
}

static const char *link_find(struct put_ctx *c, const struct stat *st)
{
	for (size_t i = 0; i < c->nlinks; i++)
		if (c->links[i].dev == st->st_dev && c->links[i].ino == st->st_ino)
			return c->links[i].path;
	return NULL;
}

static void link_add(struct put_ctx *c, const struct stat *st, const char *dest)
{
	if (c->nlinks == c->cap) {
		size_t n = c->cap ? c->cap * 2 : 64;
		struct put_link *l = realloc(c->links, n * sizeof(*l));
		if (!l)
			return; /* only costs the link: a second copy is made */
		c->links = l;
		c->cap = n;
	}
	char *p = strdup(dest);
	if (!p)
		return;
	c->links[c->nlinks++] = (struct put_link){st->st_dev, st->st_ino, p};
}

/* Owner, permission bits and times of dest (not following a symlink). */
static int put_attrs(struct put_ctx *c, const char *dest, const struct stat *st)
{
	struct ubikit_stat us;
	int err = ubikit_lstat(c->fs, dest, &us);
	if (err)
		return err;
	struct ubikit_setattr a = {
		.valid = UBIKIT_SET_UID | UBIKIT_SET_GID | UBIKIT_SET_ATIME | UBIKIT_SET_MTIME,
		.uid = c->squash ? 0 : st->st_uid,
		.gid = c->squash ? 0 : st->st_gid,
		.atime_sec = st->st_atim.tv_sec,
		.atime_nsec = (uint32_t)st->st_atim.tv_nsec,
		.mtime_sec = st->st_mtim.tv_sec,
		.mtime_nsec = (uint32_t)st->st_mtim.tv_nsec,
	};
	if (!S_ISLNK(st->st_mode)) {
		a.valid |= UBIKIT_SET_MODE;
		a.mode = st->st_mode & 07777;
	}
	return ubikit_setattr_ino(c->fs, us.ino, &a);
}

/* Every xattr of the host file the host lets us read. */
static int put_xattrs(struct put_ctx *c, const char *host, const char *dest)
{
	ssize_t n = llistxattr(host, NULL, 0);
	if (n <= 0)
		return n < 0 && errno != ENOTSUP ? -errno : 0;
	char *names = malloc((size_t)n);
	if (!names)
		return -ENOMEM;
	n = llistxattr(host, names, (size_t)n);
	int err = 0;
	struct ubikit_stat us;
	if (n > 0)
		err = ubikit_lstat(c->fs, dest, &us);
	for (ssize_t off = 0; n > 0 && off < n && !err; off += (ssize_t)strlen(names + off) + 1) {
		const char *name = names + off;
		ssize_t vl = lgetxattr(host, name, NULL, 0);
		if (vl < 0)
			continue; /* gone, or not ours to read */
		char *v = malloc(vl ? (size_t)vl : 1);
		if (!v) {
			err = -ENOMEM;
			break;
		}
		vl = lgetxattr(host, name, v, (size_t)vl);
		if (vl >= 0)
			err = ubikit_setxattr_ino(c->fs, us.ino, name, v, (size_t)vl, 0);
		free(v);
	}
	free(names);
	return err;
}

static bool all_zero(const char *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (b[i])
			return false;
	return true;
}

static int put_file(struct put_ctx *c, const char *host, const char *dest, const struct stat *st)
{
	int fd = open(host, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	struct ubikit_file *f;
	int err = ubikit_open(c->fs, dest, O_WRONLY | O_CREAT | O_TRUNC, st->st_mode & 07777, &f);
	if (err) {
		close(fd);
		return err;
	}
	uint64_t off = 0;
	for (;;) {
		ssize_t n = read(fd, c->buf, PUT_CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			break;
		}
		if (n == 0)
			break;
		/* zero blocks stay holes, as cp --sparse=auto does */
		if (!all_zero(c->buf, (size_t)n)) {
			ssize_t w = ubikit_pwrite(f, c->buf, (size_t)n, off);
			if (w < 0) {
				err = (int)w;
				break;
			}
		}
		off += (uint64_t)n;
	}
	if (!err)
		err = ubikit_ftruncate(f, off);
	int e2 = ubikit_close(f);
	close(fd);
	return err ? err : e2;
}

/* A non-directory at dest is replaced; a directory stays (merged into). */
static int make_room(struct put_ctx *c, const char *dest, bool want_dir)
{
	struct ubikit_stat us;
	int err = ubikit_lstat(c->fs, dest, &us);
	if (err == -ENOENT)
		return 0;
	if (err)
		return err;
	if (S_ISDIR(us.mode))
		return want_dir ? 1 : -EISDIR;
	return want_dir ? -ENOTDIR : ubikit_unlink(c->fs, dest);
}

static void put_tree(struct put_ctx *c, const char *host, const char *dest, int depth);

static void put_dir(struct put_ctx *c, const char *host, const char *dest, int depth)
{
	DIR *d = opendir(host);
	if (!d) {
		put_err(c, "cannot read directory", host, -errno);
		return;
	}
	struct dirent *de;
	while ((errno = 0, de = readdir(d)) != NULL) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		char *h = tool_path_join(host, de->d_name), *t = tool_change_join(dest, de->d_name);
		if (h && t)
			put_tree(c, h, t, depth + 1);
		else
			put_err(c, "cannot copy", host, -ENOMEM);
		free(h);
		free(t);
	}
	if (errno)
		put_err(c, "cannot read directory", host, -errno);
	closedir(d);
}

static void put_tree(struct put_ctx *c, const char *host, const char *dest, int depth)
{
	struct stat st;
	if (lstat(host, &st)) {
		put_err(c, "cannot stat", host, -errno);
		return;
	}
	if (depth > 1000) {
		put_err(c, "cannot copy", host, -ELOOP);
		return;
	}
	int err = make_room(c, dest, S_ISDIR(st.st_mode));
	if (err < 0) {
		if (err == -EISDIR || err == -ENOTDIR)
			fprintf(stderr, "ubikit put: cannot overwrite %sdirectory '%s' with %sdirectory '%s'\n",
				err == -EISDIR ? "" : "non-", dest, err == -EISDIR ? "non-" : "", host), (*c->errors)++;
		else
			put_err(c, "cannot replace", dest, err);
		return;
	}
	const char *first = st.st_nlink > 1 && !S_ISDIR(st.st_mode) ? link_find(c, &st) : NULL;
	if (first) {
		err = ubikit_link(c->fs, first, dest);
		if (err)
			put_err(c, "cannot create hard link", dest, err);
		else if (c->verbose)
			printf("'%s' => '%s'\n", dest, first);
		return;
	}
	switch (st.st_mode & S_IFMT) {
	case S_IFREG:
		err = put_file(c, host, dest, &st);
		break;
	case S_IFDIR:
		/* writable while filled; its mode and times come last */
		err = err == 1 ? 0 : ubikit_mkdir(c->fs, dest, 0700);
		break;
	case S_IFLNK: {
		char target[4097];
		ssize_t n = readlink(host, target, sizeof(target) - 1);
		if (n < 0) {
			err = -errno;
			break;
		}
		target[n] = '\0';
		err = ubikit_symlink(c->fs, target, dest);
		break;
	}
	case S_IFCHR:
	case S_IFBLK:
	case S_IFIFO:
	case S_IFSOCK:
		err = ubikit_mknod(c->fs, dest, st.st_mode, major(st.st_rdev), minor(st.st_rdev));
		break;
	default:
		err = -EINVAL;
	}
	if (err) {
		put_err(c, "cannot create", dest, err);
		return;
	}
	if (c->verbose)
		printf("'%s' -> '%s'\n", host, dest);
	if (S_ISDIR(st.st_mode))
		put_dir(c, host, dest, depth);
	else if (st.st_nlink > 1)
		link_add(c, &st, dest);
	err = put_xattrs(c, host, dest);
	if (err)
		put_err(c, "cannot copy the extended attributes to", dest, err);
	err = put_attrs(c, dest, &st);
	if (err)
		put_err(c, "cannot set owner, mode or times of", dest, err);
}

int tool_put(struct ubikit_fs *fs, const char *host, const char *dest, int flags, unsigned *errors)
{
	struct put_ctx c = {.fs = fs, .verbose = flags & 1, .squash = !!(flags & TOOL_PUT_SQUASH), .errors = errors};
	c.buf = malloc(PUT_CHUNK);
	if (!c.buf) {
		put_err(&c, "cannot copy", host, -ENOMEM);
		return -ENOMEM;
	}
	put_tree(&c, host, dest, 0);
	for (size_t i = 0; i < c.nlinks; i++)
		free(c.links[i].path);
	free(c.links);
	free(c.buf);
	return 0;
}
