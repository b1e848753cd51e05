/* cmd_extract — 'ubikit extract IMAGE -o DIR [PATH]': copy the UBIFS tree
 * of an image (or the subtree/file PATH) into a host directory, keeping
 * content (sparse where the data is zero), modes, times, xattrs, hard links
 * and symlinks; owners and device nodes only when run as root (else
 * counted and reported as skipped); sockets are skipped with a count.
 *
 * Safety: names from the image are checked (no '/', no "." or "..") and
 * every directory is one we created, so nothing is written outside DIR.
 * Directory modes and times are applied after their contents (post-order),
 * so read-only directories and directory mtimes come out right. */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>
#include <ubikit/ubikit.h>

#include "tool_name.h"
#include "commands.h"
#include "tool_extract.h"
#include "tool_image.h"

#define COPY_BUF (256u << 10)
#define SPARSE_BLK 4096u
#define PROGRESS_MIN_BYTES (32ull << 20)
#define XT_MAX_DEPTH 1024

/* ino -> first extracted path, for hard links (open addressing). */
struct link_map {
	uint64_t *ino;
	char **path;
	size_t cap, n;
};

struct xctx {
	struct ubikit_fs *fs;
	struct tool_extract_stats *s;
	bool as_root, verbose, progress;
	bool no_fscrypt_key; /* encrypted file system without the key: encrypted contents are skipped */
	uid_t uid;
	gid_t gid;
	struct link_map links;
	char *buf;
	uint64_t est_total;
	struct timespec last_prog;
	uint64_t ancestors[XT_MAX_DEPTH]; /* directory inodes on the current path */
	bool made_outdir; /* the output directory is ours (created by this run) */
};

/* Create the missing parents of path (as mkdir -p; the help promises DIR is
 * created if needed). 0 or -1 with errno set; the last component is left to
 * the caller, who records whether it made it. */
static int mkdir_parents(const char *path)
{
	char *p = strdup(path);
	if (!p)
		return -1;
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = 0;
		if (mkdir(p, 0755) && errno != EEXIST) {
			int e = errno;
			free(p);
			errno = e;
			return -1;
		}
		*s = '/';
	}
	free(p);
	return 0;
}

static int map_put(struct link_map *m, uint64_t ino, const char *path)
{
	if ((m->n + 1) * 2 > m->cap) {
		size_t ncap = m->cap ? m->cap * 2 : 256;
		uint64_t *ni = calloc(ncap, sizeof(*ni));
		char **np = calloc(ncap, sizeof(*np));
		if (!ni || !np) {
			free(ni);
			free(np);
			return -ENOMEM;
		}
		for (size_t i = 0; i < m->cap; i++) {
			if (!m->path[i])
				continue;
			size_t h = (size_t)(m->ino[i] * 0x9E3779B97F4A7C15ull) & (ncap - 1);
			while (np[h])
				h = (h + 1) & (ncap - 1);
			ni[h] = m->ino[i];
			np[h] = m->path[i];
		}
		free(m->ino);
		free(m->path);
		m->ino = ni;
		m->path = np;
		m->cap = ncap;
	}
	size_t h = (size_t)(ino * 0x9E3779B97F4A7C15ull) & (m->cap - 1);
	while (m->path[h])
		h = (h + 1) & (m->cap - 1);
	m->path[h] = strdup(path);
	if (!m->path[h])
		return -ENOMEM;
	m->ino[h] = ino;
	m->n++;
	return 0;
}

static const char *map_get(const struct link_map *m, uint64_t ino)
{
	if (!m->cap)
		return NULL;
	size_t h = (size_t)(ino * 0x9E3779B97F4A7C15ull) & (m->cap - 1);
	while (m->path[h]) {
		if (m->ino[h] == ino)
			return m->path[h];
		h = (h + 1) & (m->cap - 1);
	}
	return NULL;
}

static void map_free(struct link_map *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->path[i]);
	free(m->path);
	free(m->ino);
}

static void fail(struct xctx *c, const char *path, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void fail(struct xctx *c, const char *path, const char *fmt, ...)
{
	va_list ap;
	if (c->progress)
		fputs("\r\033[K", stderr);
	char e[2048];
	fprintf(stderr, "ubikit extract: %s: ", tool_name_esc(path, e, sizeof(e))); /* names from the image */
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	c->s->errors++;
}

static const char *fserr(struct xctx *c, int err)
{
	const char *m = ubikit_errmsg(c->fs);
	return m && m[0] ? m : strerror(-err);
}

static void show_progress(struct xctx *c, bool final)
{
	if (!c->progress)
		return;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	int64_t ms = (now.tv_sec - c->last_prog.tv_sec) * 1000 + (now.tv_nsec - c->last_prog.tv_nsec) / 1000000;
	if (!final && ms < 200)
		return;
	c->last_prog = now;
	if (final) {
		fputs("\r\033[K", stderr);
		return;
	}
	double pct = c->est_total ? 100.0 * (double)c->s->bytes / (double)c->est_total : 0;
	if (pct > 100)
		pct = 100;
	int bar = (int)(pct / 5);
	fprintf(stderr, "\r[%-20.*s] %3.0f%%  %.1f MiB  %" PRIu64 " entries", bar, "####################", pct,
		(double)c->s->bytes / 1048576.0, c->s->files + c->s->dirs + c->s->symlinks + c->s->hardlinks);
	fflush(stderr);
}

static bool all_zero(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

static int pwrite_all(int fd, const char *p, size_t len, off_t off)
{
	while (len) {
		ssize_t n = pwrite(fd, p, len, off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
		off += n;
	}
	return 0;
}

/* Copy file content, leaving holes where whole 4 KiB blocks are zero. */
static int copy_file(struct xctx *c, const char *src, const char *dst, const struct ubikit_stat *st)
{
	int ret = 0;
	int fd = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		ret = -errno;
		fail(c, dst, "cannot create: %s", strerror(errno));
		return ret;
	}
	uint64_t off = 0;
	bool sparse = false;
	while (off < st->size) {
		/* Skip holes without reading them: an inode may claim terabytes
		 * that hold no data node at all. */
		uint64_t data;
		int sr = ubikit_seek_data_ino(c->fs, st->ino, off, &data);
		if (sr == -ENXIO) {
			sparse = true;
			c->s->bytes += st->size - off;
			break;
		}
		if (sr) {
			ret = sr;
			fail(c, src, "read error at offset %" PRIu64 ": %s", off, fserr(c, ret));
			break;
		}
		if (data > off) {
			sparse = true;
			c->s->bytes += data - off;
			off = data;
		}
		size_t want = st->size - off < COPY_BUF ? (size_t)(st->size - off) : COPY_BUF;
		ssize_t n = ubikit_pread_ino(c->fs, st->ino, c->buf, want, off);
		if (n < 0) {
			ret = (int)n;
			fail(c, src, "read error at offset %" PRIu64 ": %s", off, fserr(c, ret));
			break;
		}
		if (n == 0) {
			fail(c, src, "file ends at %" PRIu64 " but its inode says size %" PRIu64, off, st->size);
			ret = -EIO;
			break;
		}
		/* write runs of non-zero blocks */
		size_t i = 0;
		while (i < (size_t)n) {
			size_t blk = (size_t)n - i < SPARSE_BLK ? (size_t)n - i : SPARSE_BLK;
			if (all_zero(c->buf + i, blk)) {
				sparse = true;
				i += blk;
				continue;
			}
			size_t j = i + blk;
			while (j < (size_t)n) {
				size_t b2 = (size_t)n - j < SPARSE_BLK ? (size_t)n - j : SPARSE_BLK;
				if (all_zero(c->buf + j, b2))
					break;
				j += b2;
			}
			ret = pwrite_all(fd, c->buf + i, j - i, (off_t)(off + i));
			if (ret) {
				fail(c, dst, "write error: %s", strerror(-ret));
				goto out;
			}
			i = j;
		}
		off += (uint64_t)n;
		c->s->bytes += (uint64_t)n;
		show_progress(c, false);
	}
	if (!ret && ftruncate(fd, (off_t)st->size)) {
		ret = -errno;
		fail(c, dst, "cannot set size: %s", strerror(errno));
	}
	if (!ret && sparse)
		c->s->sparse_files++;
out:
	if (close(fd) && !ret) {
		ret = -errno;
		fail(c, dst, "close: %s", strerror(errno));
	}
	return ret;
}

static void copy_xattrs(struct xctx *c, const char *src, uint64_t ino, const char *dst)
{
	ssize_t n = ubikit_listxattr_ino(c->fs, ino, NULL, 0);
	if (n < 0) {
		fail(c, src, "cannot list xattrs: %s", fserr(c, (int)n));
		return;
	}
	if (n == 0)
		return;
	char *names = malloc((size_t)n);
	if (!names)
		return;
	n = ubikit_listxattr_ino(c->fs, ino, names, (size_t)n);
	for (ssize_t i = 0; n > 0 && i < n; i += (ssize_t)strlen(names + i) + 1) {
		const char *name = names + i;
		ssize_t vl = ubikit_getxattr_ino(c->fs, ino, name, NULL, 0);
		char *val = vl >= 0 ? malloc((size_t)vl + 1) : NULL;
		if (vl >= 0 && val)
			vl = ubikit_getxattr_ino(c->fs, ino, name, val, (size_t)vl);
		if (vl < 0 || !val) {
			fail(c, src, "cannot read xattr %s: %s", name, vl < 0 ? fserr(c, (int)vl) : "out of memory");
			free(val);
			continue;
		}
		if (lsetxattr(dst, name, val, (size_t)vl, 0)) {
			if (errno == EPERM || errno == ENOTSUP || errno == EACCES) {
				c->s->xattrs_skipped++;
				if (c->verbose)
				{
					char e[2048], en[1024];
					fprintf(stderr, "ubikit extract: %s: xattr %s not set: %s\n",
						tool_name_esc(dst, e, sizeof(e)), tool_name_esc(name, en, sizeof(en)),
						strerror(errno));
				}
			} else {
				fail(c, dst, "cannot set xattr %s: %s", name, strerror(errno));
			}
		} else {
			c->s->xattrs++;
		}
		free(val);
	}
	free(names);
}

/* Owner, mode, times, in that order (chown clears set-id bits). */
static void apply_meta(struct xctx *c, const char *src, const char *dst, const struct ubikit_stat *st)
{
	copy_xattrs(c, src, st->ino, dst);
	if (c->as_root) {
		if (lchown(dst, st->uid, st->gid))
			fail(c, dst, "cannot set owner %u:%u: %s", st->uid, st->gid, strerror(errno));
	} else if (st->uid != c->uid || st->gid != c->gid) {
		c->s->owners_skipped++;
	}
	if (!S_ISLNK(st->mode) && chmod(dst, st->mode & 07777))
		fail(c, dst, "cannot set mode %o: %s", st->mode & 07777, strerror(errno));
	struct timespec ts[2] = {{.tv_sec = st->atime_sec, .tv_nsec = st->atime_nsec},
				 {.tv_sec = st->mtime_sec, .tv_nsec = st->mtime_nsec}};
	if (ts[0].tv_nsec >= 1000000000)
		ts[0].tv_nsec = 0;
	if (ts[1].tv_nsec >= 1000000000)
		ts[1].tv_nsec = 0;
	if (utimensat(AT_FDCWD, dst, ts, AT_SYMLINK_NOFOLLOW))
		fail(c, dst, "cannot set times: %s", strerror(errno));
}

static bool bad_name(const char *n)
{
	return !n[0] || strchr(n, '/') || !strcmp(n, ".") || !strcmp(n, "..");
}

static int extract_node(struct xctx *c, const char *src, const char *dst, const struct ubikit_stat *st, int depth);

static int extract_dir(struct xctx *c, const char *src, const char *dst, const struct ubikit_stat *st, int depth)
{
	struct stat hs;
	bool existed = false;
	if (mkdir(dst, 0700)) {
		if (errno != EEXIST || lstat(dst, &hs) || !S_ISDIR(hs.st_mode)) {
			fail(c, dst, "cannot create directory: %s", errno == EEXIST ? "exists and is not a directory" : strerror(errno));
			return -EEXIST;
		}
		/* An existing directory (the output root, or a re-run) is the user's:
		 * it keeps its own owner, mode and times (extract into /tmp must
		 * not make /tmp 0700). Only make it writable for us while we work. */
		existed = !(depth == 0 && c->made_outdir);
		if ((hs.st_mode & 0700) != 0700 && chmod(dst, (hs.st_mode & 07777) | 0700)) {
			fail(c, dst, "cannot make writable: %s", strerror(errno));
			return -errno;
		}
	}
	c->s->dirs++;
	if (depth >= XT_MAX_DEPTH) {
		fail(c, src, "directory nesting deeper than %d levels: not followed", XT_MAX_DEPTH);
		return -ELOOP;
	}
	/* A corrupt image can link a directory below itself: never recurse into
	 * an inode that is already on the path. */
	for (int i = 0; i < depth; i++)
		if (c->ancestors[i] == st->ino) {
			fail(c, src, "directory inode %" PRIu64 " is its own ancestor (a loop in the image): not followed",
			     st->ino);
			return -ELOOP;
		}
	c->ancestors[depth] = st->ino;
	struct ubikit_dirent de;
	uint64_t cookie = 0;
	int ret;
	while ((ret = ubikit_readdir_ino(c->fs, st->ino, cookie, &de)) == 1) {
		cookie = de.cookie;
		if (bad_name(de.name)) {
			fail(c, src, "directory entry with an unusable name '%s' (inode %" PRIu64 "): skipped", de.name,
			     de.ino);
			continue;
		}
		char *s = tool_path_join(src, de.name), *t = tool_path_join(dst, de.name);
		if (!s || !t) {
			free(s);
			free(t);
			ret = -ENOMEM;
			break;
		}
		struct ubikit_stat cst;
		int r = ubikit_stat_ino(c->fs, de.ino, &cst);
		if (r)
			fail(c, s, "directory entry points to inode %" PRIu64 ", which cannot be read: %s", de.ino,
			     r == -ENOENT ? "no such inode" : fserr(c, r));
		else
			extract_node(c, s, t, &cst, depth + 1);
		free(s);
		free(t);
	}
	if (ret < 0)
		fail(c, src, "reading the directory: %s", fserr(c, ret));
	if (!existed)
		apply_meta(c, src, dst, st);
	else if ((hs.st_mode & 0700) != 0700 && chmod(dst, hs.st_mode & 07777))
		fail(c, dst, "cannot restore mode %o: %s", hs.st_mode & 07777, strerror(errno));
	return 0;
}

static int extract_node(struct xctx *c, const char *src, const char *dst, const struct ubikit_stat *st, int depth)
{
	if (c->verbose) {
		if (c->progress)
			fputs("\r\033[K", stderr);
		char e[2048];
		fprintf(stderr, "%s\n", tool_name_esc(src, e, sizeof(e)));
	}
	if (S_ISDIR(st->mode))
		return extract_dir(c, src, dst, st, depth);
	if (S_ISSOCK(st->mode)) {
		c->s->sockets_skipped++;
		return 0;
	}
	if ((S_ISCHR(st->mode) || S_ISBLK(st->mode)) && !c->as_root) {
		c->s->devices_skipped++;
		return 0;
	}
	if (S_ISREG(st->mode) && st->size && (st->flags & 0x40 /* UBIFS_CRYPT_FL */) && c->no_fscrypt_key) {
		c->s->encrypted_skipped++; /* ciphertext only: one summary line, no file */
		return 0;
	}
	/* remove a leftover from an earlier run (never a directory) */
	struct stat hs;
	if (!lstat(dst, &hs)) {
		if (S_ISDIR(hs.st_mode)) {
			fail(c, dst, "exists as a directory; not replaced");
			return -EEXIST;
		}
		unlink(dst);
	}
	if (st->nlink > 1) {
		const char *first = map_get(&c->links, st->ino);
		if (first) {
			if (link(first, dst)) {
				fail(c, dst, "cannot hard-link to %s: %s", first, strerror(errno));
				return -errno;
			}
			c->s->hardlinks++;
			return 0;
		}
	}
	int ret = 0;
	if (S_ISREG(st->mode)) {
		ret = copy_file(c, src, dst, st);
		if (ret)
			c->s->failed_files++; /* reported; not counted as extracted */
		else
			c->s->files++;
	} else if (S_ISLNK(st->mode)) {
		char target[4097];
		ssize_t n = ubikit_readlink_ino(c->fs, st->ino, target, sizeof(target) - 1);
		if (n < 0) {
			fail(c, src, "cannot read link: %s", fserr(c, (int)n));
			return (int)n;
		}
		target[n] = '\0';
		if (symlink(target, dst)) {
			fail(c, dst, "cannot create symlink: %s", strerror(errno));
			return -errno;
		}
		c->s->symlinks++;
	} else if (S_ISCHR(st->mode) || S_ISBLK(st->mode) || S_ISFIFO(st->mode)) {
		dev_t dev = makedev(st->rdev_major, st->rdev_minor);
		if (mknod(dst, (st->mode & S_IFMT) | 0600, S_ISFIFO(st->mode) ? 0 : dev)) {
			if (errno == EPERM && !S_ISFIFO(st->mode)) {
				c->s->devices_skipped++;
				return 0;
			}
			fail(c, dst, "cannot create node: %s", strerror(errno));
			return -errno;
		}
		if (S_ISFIFO(st->mode))
			c->s->fifos++;
		else
			c->s->devices++;
	} else {
		fail(c, src, "unknown file type (mode 0%o): skipped", st->mode);
		return -EINVAL;
	}
	if (ret)
		return ret;
	if (st->nlink > 1 && map_put(&c->links, st->ino, dst))
		fail(c, dst, "out of memory for the hard-link table");
	apply_meta(c, src, dst, st);
	return 0;
}

int tool_extract(struct ubikit_fs *fs, const char *src, const char *outdir, const struct tool_extract_opts *o,
		 struct tool_extract_stats *s)
{
	memset(s, 0, sizeof(*s));
	struct xctx c = {.fs = fs, .s = s, .verbose = o->verbose, .progress = o->progress};
	c.uid = geteuid();
	c.gid = getegid();
	c.as_root = c.uid == 0;
	struct ubikit_security sec;
	c.no_fscrypt_key = !ubikit_security(fs, &sec) && sec.encrypted && !sec.fscrypt_key;
	c.buf = malloc(COPY_BUF);
	if (!c.buf)
		return -ENOMEM;
	if (c.progress) {
		struct ubikit_statfs sf;
		if (!ubikit_statfs(fs, &sf))
			c.est_total = (sf.blocks - sf.blocks_free) * sf.block_size;
		if (c.est_total < PROGRESS_MIN_BYTES)
			c.progress = false;
		clock_gettime(CLOCK_MONOTONIC, &c.last_prog);
	}
	struct ubikit_stat st;
	int ret = ubikit_lstat(fs, src, &st);
	if (ret) {
		fail(&c, src, "%s", fserr(&c, ret));
		free(c.buf);
		return ret;
	}
	if (mkdir_parents(outdir) == 0 && mkdir(outdir, 0755) == 0) {
		c.made_outdir = true;
	} else if (errno != EEXIST) {
		ret = -errno;
		fail(&c, outdir, "cannot create: %s", strerror(errno));
		free(c.buf);
		return ret;
	}
	if (S_ISDIR(st.mode)) {
		ret = extract_dir(&c, src, outdir, &st, 0);
	} else {
		const char *base = strrchr(src, '/');
		base = base ? base + 1 : src;
		char *dst = tool_path_join(outdir, base);
		ret = dst ? extract_node(&c, src, dst, &st, 0) : -ENOMEM;
		free(dst);
	}
	show_progress(&c, true);
	map_free(&c.links);
	free(c.buf);
	return s->errors ? -EIO : ret;
}

static void extract_usage(FILE *out)
{
	fprintf(out, "usage: ubikit extract [options] [image options] IMAGE -o DIR [PATH]\n"
		     "Copy the UBIFS tree of IMAGE (or just PATH) into DIR (created if needed).\n"
		     "Keeps content (sparse), modes, times, xattrs, hard links, symlinks; owners and\n"
		     "device nodes only as root (else skipped and counted); sockets are skipped.\n"
		     "  -o, --output DIR    where to extract (required)\n"
		     "  -q, --quiet         no summary, no progress bar\n"
		     "      --no-progress   no progress bar (default: on a terminal for big images)\n"
		     "  -h, --help          this help\n" TOOL_IMAGE_OPTS_HELP);
}

int cmd_extract(int argc, char **argv)
{
	static const struct option lopts[] = {{"output", required_argument, NULL, 'o'},
					      {"quiet", no_argument, NULL, 'q'},
					      {"no-progress", no_argument, NULL, 0x2000},
					      {"help", no_argument, NULL, 'h'},
					      TOOL_IMAGE_LONGOPTS,
					      {NULL, 0, NULL, 0}};
	struct tool_image_opts io;
	tool_image_opts_init(&io);
	const char *out = NULL;
	bool quiet = false, noprog = false;
	int opt;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "o:qhv", lopts, NULL)) != -1) {
		int r = tool_image_opt(&io, opt, optarg, "extract");
		if (r < 0)
			return 2;
		if (r)
			continue;
		switch (opt) {
		case 'o': out = optarg; break;
		case 'q': quiet = true; break;
		case 0x2000: noprog = true; break;
		case 'h': extract_usage(stdout); return 0;
		default: extract_usage(stderr); return 2;
		}
	}
	if (!out || optind >= argc || argc - optind > 2) {
		if (!out)
			tool_err("extract", "-o DIR is required");
		extract_usage(stderr);
		return 2;
	}
	const char *path = argc - optind == 2 ? argv[optind + 1] : "/";
	struct ubikit_image *img = tool_image_open_mounted("extract", argv[optind], &io);
	if (!img)
		return 1;
	struct tool_extract_opts xo = {.verbose = io.verbose > 1,
				       .progress = !quiet && !noprog && isatty(STDERR_FILENO)};
	struct tool_extract_stats s;
	int ret = tool_extract(ubikit_image_fs(img), path, out, &xo, &s);
	tool_image_close(img);
	if (!quiet) {
		fprintf(stderr,
			"extracted %" PRIu64 " files (%" PRIu64 " bytes, %" PRIu64 " sparse), %" PRIu64 " directories, %" PRIu64
			" symlinks, %" PRIu64 " hard links, %" PRIu64 " devices, %" PRIu64 " fifos, %" PRIu64 " xattrs\n",
			s.files, s.bytes, s.sparse_files, s.dirs, s.symlinks, s.hardlinks, s.devices, s.fifos, s.xattrs);
		if (s.devices_skipped)
			fprintf(stderr, "skipped %" PRIu64 " device nodes (not root)\n", s.devices_skipped);
		if (s.sockets_skipped)
			fprintf(stderr, "skipped %" PRIu64 " sockets\n", s.sockets_skipped);
		if (s.owners_skipped)
			fprintf(stderr, "owner not restored on %" PRIu64 " entries (not root)\n", s.owners_skipped);
		if (s.xattrs_skipped)
			fprintf(stderr, "skipped %" PRIu64 " xattrs the host refused (permission/namespace)\n",
				s.xattrs_skipped);
		if (s.encrypted_skipped)
			fprintf(stderr,
				"skipped %" PRIu64 " encrypted files (fscrypt contents need the key: --key FILE); "
				"names are the kernel's no-key names\n",
				s.encrypted_skipped);
		if (s.failed_files)
			fprintf(stderr, "%" PRIu64 " files could not be extracted (see the errors above)\n", s.failed_files);
		if (s.errors)
			fprintf(stderr, "%" PRIu64 " errors\n", s.errors);
	}
	return ret ? 1 : 0;
}
