/* fs_fsck — ubikit_fsck_fs (include/ubikit/fsck.h): the check of a mounted
 * file system, in two passes:
 *  1. ubifs_check_report: the index, every leaf, link counts, sizes, xattr
 *     accounting, orphans, the LPT against a scan (kernel self-check
 *     strength; src/ubifs/ubifs_check.c);
 *  2. a read walk from the root through the file-system API, as a user
 *     (or the kernel's iget) would meet each inode: every entry's inode
 *     read and its type compared with the entry's, every regular file read
 *     to its end, every symlink and xattr read.
 * Problems of pass 1 that name an inode get the path pass 2 found for it. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "fs/fs.h"
#include "fs/fs_fsck.h"
#include "ubifs/ubifs_lcache.h"
#include "ubifs/ubifs_rebuild.h"

#define WALK_MAX_DEPTH 1024
#define WALK_BUF (64 * 1024)

struct seen { /* one inode met by the walk: its first path */
	uint64_t inum;
	char *path;
};

struct walk {
	struct ubikit_fs *fs;
	struct ubikit_fsck_report *rep;
	struct seen *tab; /* open addressing, inum 0 = empty */
	size_t cap, n;
	uint8_t *buf;
	int err; /* -ENOMEM */
};

static size_t slot_of(const struct walk *w, uint64_t inum)
{
	size_t h = (size_t)(inum * 0x9E3779B97F4A7C15ull) & (w->cap - 1);
	while (w->tab[h].inum && w->tab[h].inum != inum)
		h = (h + 1) & (w->cap - 1);
	return h;
}

static const char *seen_path(const struct walk *w, uint64_t inum)
{
	if (!w->cap || !inum)
		return NULL;
	size_t h = slot_of(w, inum);
	return w->tab[h].inum ? w->tab[h].path : NULL;
}

/* 1: added, 0: was there, <0 error */
static int seen_add(struct walk *w, uint64_t inum, const char *path)
{
	if ((w->n + 1) * 2 > w->cap) {
		size_t ncap = w->cap ? w->cap * 2 : 1024;
		struct seen *nt = calloc(ncap, sizeof(*nt));
		if (!nt)
			return -ENOMEM;
		struct seen *old = w->tab;
		size_t ocap = w->cap;
		w->tab = nt;
		w->cap = ncap;
		for (size_t i = 0; i < ocap; i++)
			if (old[i].inum)
				w->tab[slot_of(w, old[i].inum)] = old[i];
		free(old);
	}
	size_t h = slot_of(w, inum);
	if (w->tab[h].inum)
		return 0;
	char *p = strdup(path);
	if (!p)
		return -ENOMEM;
	w->tab[h] = (struct seen){inum, p};
	w->n++;
	return 1;
}

static int problem(struct walk *w, uint64_t inum, const char *path, const char *what)
{
	int e = fs_fsck_add(w->rep, 0, -1, -1, -1, inum, path, "%s: %s: %s", path, what, ubikit_errmsg(w->fs));
	if (e)
		w->err = e;
	return e;
}

static unsigned dt_of(uint32_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG: return DT_REG;
	case S_IFDIR: return DT_DIR;
	case S_IFLNK: return DT_LNK;
	case S_IFCHR: return DT_CHR;
	case S_IFBLK: return DT_BLK;
	case S_IFIFO: return DT_FIFO;
	case S_IFSOCK: return DT_SOCK;
	default: return DT_UNKNOWN;
	}
}

static void read_xattrs(struct walk *w, uint64_t ino, const char *path)
{
	ssize_t n = ubikit_listxattr_ino(w->fs, ino, NULL, 0);
	if (n < 0) {
		problem(w, ino, path, "listing the xattrs");
		return;
	}
	if (n == 0)
		return;
	char *names = malloc((size_t)n);
	if (!names) {
		w->err = -ENOMEM;
		return;
	}
	ssize_t m = ubikit_listxattr_ino(w->fs, ino, names, (size_t)n);
	if (m < 0)
		problem(w, ino, path, "listing the xattrs");
	for (ssize_t off = 0; m > 0 && off < m; off += (ssize_t)strlen(names + off) + 1) {
		ssize_t v = ubikit_getxattr_ino(w->fs, ino, names + off, w->buf, WALK_BUF);
		if (v < 0 && v != -ERANGE) {
			char what[300];
			snprintf(what, sizeof(what), "reading xattr %.255s", names + off);
			problem(w, ino, path, what);
		}
	}
	free(names);
}

static void read_file(struct walk *w, const struct ubikit_stat *st, const char *path)
{
	uint64_t off = 0;
	while (off < st->size) {
		uint64_t data;
		int e = ubikit_seek_data_ino(w->fs, st->ino, off, &data);
		if (e == -ENXIO)
			return;
		if (e < 0) {
			problem(w, st->ino, path, "finding its data");
			return;
		}
		if (data >= st->size)
			return;
		size_t len = st->size - data < WALK_BUF ? (size_t)(st->size - data) : WALK_BUF;
		ssize_t n = ubikit_pread_ino(w->fs, st->ino, w->buf, len, data);
		if (n < 0) {
			char what[96];
			snprintf(what, sizeof(what), "reading its data at byte %" PRIu64, data);
			problem(w, st->ino, path, what);
			return;
		}
		if (n == 0)
			return;
		w->rep->bytes_read += (uint64_t)n;
		off = data + (uint64_t)n;
	}
}

static void walk_dir(struct walk *w, uint64_t dir, const char *path, int depth)
{
	if (depth >= WALK_MAX_DEPTH) {
		fs_fsck_add(w->rep, 0, -1, -1, -1, dir, path, "%s: deeper than %d directories: not followed", path,
			    WALK_MAX_DEPTH);
		return;
	}
	struct ubikit_dirent de;
	uint64_t cookie = 0;
	int r;
	while (!w->err && (r = ubikit_readdir_ino(w->fs, dir, cookie, &de)) == 1) {
		cookie = de.cookie;
		w->rep->dentries++;
		size_t plen = strlen(path) + strlen(de.name) + 2;
		char *cp = malloc(plen);
		if (!cp) {
			w->err = -ENOMEM;
			return;
		}
		snprintf(cp, plen, "%s%s%s", path, strcmp(path, "/") ? "/" : "", de.name);
		struct ubikit_stat st;
		int e = ubikit_stat_ino(w->fs, de.ino, &st);
		if (e) {
			char what[96];
			snprintf(what, sizeof(what), "its inode %" PRIu64 " cannot be read", de.ino);
			problem(w, de.ino, cp, what);
			free(cp);
			continue;
		}
		if (de.type != DT_UNKNOWN && de.type != dt_of(st.mode))
			fs_fsck_add(w->rep, 0, -1, -1, -1, de.ino, cp,
				    "%s: the entry says type %u, its inode %" PRIu64 " has mode %06o", cp, de.type,
				    de.ino, st.mode);
		int added = seen_add(w, de.ino, cp);
		if (added < 0) {
			w->err = added;
			free(cp);
			return;
		}
		if (added) {
			w->rep->inodes++;
			read_xattrs(w, de.ino, cp);
			if (S_ISREG(st.mode)) {
				read_file(w, &st, cp);
			} else if (S_ISLNK(st.mode)) {
				if (ubikit_readlink_ino(w->fs, de.ino, (char *)w->buf, WALK_BUF) < 0)
					problem(w, de.ino, cp, "reading the symlink");
			} else if (S_ISDIR(st.mode)) {
				walk_dir(w, de.ino, cp, depth + 1);
			}
		} else if (S_ISDIR(st.mode)) {
			fs_fsck_add(w->rep, 0, -1, -1, -1, de.ino, cp,
				    "%s: directory inode %" PRIu64 " is also %s (a directory has one name): not followed",
				    cp, de.ino, seen_path(w, de.ino));
		}
		free(cp);
	}
	if (!w->err && r < 0)
		problem(w, dir, path, "reading the directory");
}

static int check_cb(void *ctx, const char *msg, int64_t lnum, int64_t offs, uint64_t inum)
{
	struct ubikit_fsck_report *rep = ctx;
	for (size_t i = 0; i < rep->count; i++) /* the LPT check and the scan may meet the same node */
		if (!strcmp(rep->problems[i].msg, msg))
			return 0;
	return fs_fsck_add(rep, 0, -1, lnum, offs, inum, NULL, "%s", msg);
}

/* the check's LEB cache: volumes up to this size are read from flash once
 * (the default 256 MiB device's UBIFS takes ~250 MiB); never more than a
 * quarter of the machine's memory. Beyond it, LEBs are read as needed. */
#define FSCK_LEB_CACHE_MAX (512ull << 20)

static uint64_t fsck_cache_limit(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
	uint64_t quarter = pages > 0 && psize > 0 ? (uint64_t)pages * (uint64_t)psize / 4 : FSCK_LEB_CACHE_MAX;
	return quarter < FSCK_LEB_CACHE_MAX ? quarter : FSCK_LEB_CACHE_MAX;
}

static int fsck_passes(struct ubikit_fs *fs, struct ubikit_fsck_report *rep, size_t first);

int ubikit_fsck_fs(struct ubikit_fs *fs, struct ubikit_fsck_report *rep)
{
	if (!fs || !rep)
		return -EINVAL;
	size_t first = rep->count;
	/* every pass below reads the LEBs in use again: from flash once */
	int err = ubifs_lcache_enable(fs_ubifs(fs), fsck_cache_limit());
	if (err)
		return err;
	err = fsck_passes(fs, rep, first);
	ubifs_lcache_disable(fs_ubifs(fs));
	return err;
}

static int fsck_passes(struct ubikit_fs *fs, struct ubikit_fsck_report *rep, size_t first)
{
	int err = ubifs_check_report(fs_ubifs(fs), check_cb, rep, NULL);
	if (!err)
		err = ubifs_fsck_scan(fs_ubifs(fs), check_cb, rep, NULL, &rep->lebs_scanned);
	if (err)
		return err;
	struct walk w = {.fs = fs, .rep = rep};
	w.buf = malloc(WALK_BUF);
	if (!w.buf)
		return -ENOMEM;
	struct ubikit_stat st;
	if (ubikit_stat_ino(fs, 1, &st)) {
		problem(&w, 1, "/", "the root inode cannot be read");
	} else if (!S_ISDIR(st.mode)) {
		fs_fsck_add(rep, 0, -1, -1, -1, 1, "/", "/: the root inode 1 is not a directory (mode %06o)", st.mode);
	} else if ((err = seen_add(&w, 1, "/")) >= 0) {
		rep->inodes++;
		read_xattrs(&w, 1, "/");
		walk_dir(&w, 1, "/", 0);
	} else {
		w.err = err;
	}
	/* the check's problems: the path of their inode */
	for (size_t i = first; !w.err && i < rep->count; i++) {
		struct ubikit_fsck_problem *p = &rep->problems[i];
		const char *sp = p->path ? NULL : seen_path(&w, p->inum);
		if (sp && !(p->path = strdup(sp)))
			w.err = -ENOMEM;
	}
	for (size_t i = 0; i < w.cap; i++)
		free(w.tab[i].path);
	free(w.tab);
	free(w.buf);
	return w.err;
}

static int fix_cb(void *ctx, const char *msg, int64_t lnum, int64_t offs, uint64_t inum)
{
	return fs_fsck_add(ctx, UBIKIT_FSCK_FIXED, -1, lnum, offs, inum, NULL, "%s", msg);
}

static int fix_dry_cb(void *ctx, const char *msg, int64_t lnum, int64_t offs, uint64_t inum)
{
	return fs_fsck_add(ctx, 0, -1, lnum, offs, inum, NULL, "%s", msg);
}

int fs_fsck_fix(struct ubikit_fs *fs, int dry_run, struct ubikit_fsck_report *rep, unsigned long *fixed)
{
	if (!fs || !rep)
		return -EINVAL;
	return ubifs_fsck_fix(fs_ubifs(fs), dry_run, dry_run ? fix_dry_cb : fix_cb, rep, fixed);
}

int fs_fsck_read_sb(struct ubi_vol_io *vol, char *msg, size_t msglen)
{
	struct ubifs_sb_node sb;
	struct util_err e = {{0}};
	int err = ubifs_read_sb(vol, &sb, &e);
	if (err && msg && msglen)
		snprintf(msg, msglen, "%s", e.msg[0] ? e.msg : strerror(-err));
	return err;
}

struct rebuild_ctx {
	struct ubikit_fsck_report *rep;
};

static int rebuild_cb(void *ctx, int loss, const char *msg, int64_t lnum, int64_t offs, uint64_t inum)
{
	struct rebuild_ctx *c = ctx;
	return fs_fsck_add(c->rep, UBIKIT_FSCK_FIXED | (loss ? UBIKIT_FSCK_LOSS : 0), -1, lnum, offs, inum, NULL,
			   "%s%s", msg, loss ? " (loss)" : "");
}

int fs_fsck_rebuild(struct ubi_vol_io *vol, int dry_run, struct ubikit_fsck_report *rep, unsigned long *losses,
		    char *msg, size_t msglen)
{
	struct rebuild_ctx c = {rep};
	struct util_err e = {{0}};
	int err = ubifs_rebuild(vol, dry_run, rebuild_cb, &c, losses, &e);
	if (err && msg && msglen)
		snprintf(msg, msglen, "%s", e.msg[0] ? e.msg : strerror(-err));
	return err;
}
