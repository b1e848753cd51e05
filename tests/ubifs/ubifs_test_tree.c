/* ubifs_test_tree — see ubifs_test_tree.h. */
#include "ubifs_test_tree.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <ubikit/ubikit.h>

#include <zlib.h>

#include "flash/flash.h"
#include "flash/flash_sim.h"
#include "ubi/ubi.h"
#include "util/util_prng.h"

int tt_run(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	int st = system(cmd);
	if (st == -1 || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

static int write_file(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return -1;
	size_t done = 0;
	while (done < len) {
		ssize_t n = write(fd, (const char *)buf + done, len - done);
		if (n <= 0) {
			close(fd);
			return -1;
		}
		done += (size_t)n;
	}
	return close(fd);
}

static int pwrite_at(const char *path, const void *buf, size_t len, off_t off, off_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return -1;
	int r = 0;
	if (len && pwrite(fd, buf, len, off) != (ssize_t)len)
		r = -1;
	if (!r && ftruncate(fd, size) < 0)
		r = -1;
	close(fd);
	return r;
}

static void set_mtime(const char *path, time_t sec, long nsec)
{
	struct timespec ts[2] = {{sec, nsec}, {sec, nsec}};
	utimensat(AT_FDCWD, path, ts, AT_SYMLINK_NOFOLLOW);
}

static void rand_fill(uint8_t *b, size_t n, uint64_t seed)
{
	struct util_prng r;
	util_prng_seed(&r, seed);
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)util_prng_next(&r);
}

int tt_make_tree(const char *dir, int big, int *has_devices)
{
	char p[4096];
	if (tt_run("rm -rf '%s' && mkdir -p '%s'", dir, dir))
		return -1;
#define P(...) (snprintf(p, sizeof(p), __VA_ARGS__), p)
	char text[4096];
	size_t tl = 0;
	for (int i = 0; i < 60; i++)
		tl += (size_t)snprintf(text + tl, sizeof(text) - tl, "Hello, UBIFS! line %02d\n", i);
	if (write_file(P("%s/hello.txt", dir), text, tl) || write_file(P("%s/empty", dir), "", 0))
		return -1;
	uint8_t *buf = malloc(6 << 20);
	if (!buf)
		return -1;
	rand_fill(buf, 4096, 1);
	if (write_file(P("%s/small_100", dir), buf, 100) || write_file(P("%s/random_4k", dir), buf, 4096))
		goto fail;
	/* ~5 MiB: alternating compressible text and random blocks, odd size */
	size_t big_len = (5u << 20) + 123;
	rand_fill(buf, big_len, 2);
	for (size_t off = 0; off + 4096 <= big_len; off += 8192)
		for (size_t i = 0; i < 4096; i++)
			buf[off + i] = (uint8_t)("abcdefgh"[(i / 7) % 8]);
	if (write_file(P("%s/big_5m", dir), buf, big_len))
		goto fail;
	/* sparse: hole, 5000 bytes at 1 MiB + 10, hole up to 3 MiB */
	rand_fill(buf, 5000, 3);
	if (pwrite_at(P("%s/sparse", dir), buf, 5000, (1 << 20) + 10, 3 << 20))
		goto fail;
	if (big && pwrite_at(P("%s/huge_sparse", dir), "tail of a >4GiB file", 20, (4ll << 30) + 100,
			     (5ll << 30) + 17))
		goto fail;
	if (symlink("hello.txt", P("%s/link_to_hello", dir)) || symlink("/subdir/deep/file", P("%s/abs_link", dir)) ||
	    symlink("nowhere", P("%s/dangling", dir)) || symlink("subdir/deep", P("%s/dir_link", dir)))
		goto fail;
	char longt[1001];
	memset(longt, 'x', 1000);
	longt[1000] = 0;
	if (symlink(longt, P("%s/long_link", dir)))
		goto fail;
	if (write_file(P("%s/hl_src", dir), "hard linked\n", 12) ||
	    link(P("%s/hl_src", dir), (snprintf(text, sizeof(text), "%s/hardlink1", dir), text)))
		goto fail;
	if (link(P("%s/hl_src", dir), (snprintf(text, sizeof(text), "%s/hardlink2", dir), text)))
		goto fail;
	if (mkfifo(P("%s/fifo", dir), 0640))
		goto fail;
	{
		int s = socket(AF_UNIX, SOCK_STREAM, 0);
		struct sockaddr_un a = {.sun_family = AF_UNIX};
		snprintf(a.sun_path, sizeof(a.sun_path), "%s/sock", dir);
		if (s >= 0) {
			if (bind(s, (struct sockaddr *)&a, sizeof(a)) < 0) { /* path too long: skip */
			}
			close(s);
		}
	}
	*has_devices = 0;
	if (mknod(P("%s/blockdev", dir), S_IFBLK | 0660, makedev(8, 1)) == 0 &&
	    mknod(P("%s/chardev", dir), S_IFCHR | 0600, makedev(4, 64)) == 0 &&
	    mknod(P("%s/bigminor", dir), S_IFCHR | 0600, makedev(10, 300)) == 0 &&
	    mknod(P("%s/bigmajor", dir), S_IFBLK | 0600, makedev(259, 70000)) == 0)
		*has_devices = 1;
	if (tt_run("mkdir -p '%s/subdir/deep/deeper' '%s/many' '%s/collide' '%s/emptydir'", dir, dir, dir, dir))
		goto fail;
	if (write_file(P("%s/subdir/deep/file", dir), "deep file\n", 10) ||
	    write_file(P("%s/subdir/deep/deeper/x", dir), "x", 1))
		goto fail;
	for (int i = 0; i < 2000; i++) {
		char nm[64];
		int n = snprintf(nm, sizeof(nm), "entry-%04d-%s", i, i % 3 ? "data" : "e");
		if (write_file(P("%s/many/%s", dir, nm), nm, (size_t)(i % 5 ? n : 0)))
			goto fail;
	}
	/* R5 collisions (spec TEST-VECTORS §3.1) */
	if (write_file(P("%s/collide/c10072071", dir), "one", 3) || write_file(P("%s/collide/c28000000", dir), "two", 3))
		goto fail;
	if (write_file(P("%s/collide/\xc3\xa9t\xc3\xa9", dir), "utf8", 4))
		goto fail;
	char longn[256];
	memset(longn, 'n', 255);
	longn[255] = 0;
	if (write_file(P("%s/collide/%s", dir, longn), "255", 3))
		goto fail;
	/* modes, owners, times */
	chmod(P("%s/hl_src", dir), 0600);
	chmod(P("%s/small_100", dir), 04755);
	chmod(P("%s/subdir", dir), 0700);
	if (geteuid() == 0) {
		if (chown(P("%s/random_4k", dir), 1000, 1001) || lchown(P("%s/dangling", dir), 7, 8))
			goto fail;
	}
	set_mtime(P("%s/hello.txt", dir), 1704067200, 0);
	set_mtime(P("%s/big_5m", dir), 86400 * 365 * 3, 5);
	set_mtime(P("%s/link_to_hello", dir), 1000000000, 0);
	set_mtime(P("%s/subdir/deep", dir), 2000000000, 0);
	set_mtime(P("%s/empty", dir), 0, 0);
#undef P
	free(buf);
	return 0;
fail:
	free(buf);
	return -1;
}

/* ---- comparing ---- */

struct cmpctx {
	struct ubikit_fs *fs;
	int bad;
	uint64_t entries;
	/* hard links: source inode -> image inode */
	struct {
		ino_t src;
		uint64_t img;
	} hl[64];
	int nhl;
	uint8_t *b1, *b2;
};

#define BAD(c, ...) (fprintf(stderr, "MISMATCH: " __VA_ARGS__), fputc('\n', stderr), (c)->bad++)

static int cmp_content(struct cmpctx *c, const char *src, const char *rel, uint64_t size)
{
	int fd = open(src, O_RDONLY);
	if (fd < 0)
		return BAD(c, "%s: cannot open source", rel);
	struct ubikit_file *f;
	int err = ubikit_open(c->fs, rel, O_RDONLY, 0, &f);
	if (err) {
		close(fd);
		return BAD(c, "%s: ubikit_open %d: %s", rel, err, ubikit_errmsg(c->fs));
	}
	const size_t chunk = 1 << 20;
	uint64_t off = 0;
	for (;;) {
		/* files > 4 GiB: compare the head, the tail and a window at 4 GiB */
		if (size > (64u << 20) && off == (8u << 20))
			off = size > (4ull << 30) + chunk ? (4ull << 30) - chunk / 2 : size - chunk;
		ssize_t a = pread(fd, c->b1, chunk, (off_t)off);
		ssize_t b = ubikit_pread(f, c->b2, chunk, off);
		if (a < 0 || b < 0) {
			BAD(c, "%s: read at %llu failed (%zd, %zd: %s)", rel, (unsigned long long)off, a, b,
			    ubikit_errmsg(c->fs));
			break;
		}
		if (a != b || memcmp(c->b1, c->b2, (size_t)a)) {
			BAD(c, "%s: content differs in the chunk at %llu (%zd vs %zd bytes)", rel, (unsigned long long)off,
			    a, b);
			break;
		}
		if (a == 0)
			break;
		off += (uint64_t)a;
		if (size > (64u << 20) && off >= (4ull << 30) + chunk && off < size - chunk)
			off = size - chunk / 3;
	}
	ubikit_close(f);
	close(fd);
	return 0;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void cmp_dir(struct cmpctx *c, const char *src, const char *rel);

static void cmp_entry(struct cmpctx *c, const char *src, const char *rel)
{
	struct stat s;
	struct ubikit_stat u;
	c->entries++;
	if (lstat(src, &s)) {
		BAD(c, "%s: lstat source failed", rel);
		return;
	}
	int err = ubikit_lstat(c->fs, rel, &u);
	if (err) {
		BAD(c, "%s: ubikit_lstat %d: %s", rel, err, ubikit_errmsg(c->fs));
		return;
	}
	if (u.mode != s.st_mode)
		BAD(c, "%s: mode 0%o, source 0%o", rel, u.mode, s.st_mode);
	if (u.nlink != s.st_nlink)
		BAD(c, "%s: nlink %u, source %lu", rel, u.nlink, (unsigned long)s.st_nlink);
	if (u.uid != s.st_uid || u.gid != s.st_gid)
		BAD(c, "%s: owner %u:%u, source %u:%u", rel, u.uid, u.gid, s.st_uid, s.st_gid);
	if (u.mtime_sec != s.st_mtim.tv_sec)
		BAD(c, "%s: mtime %lld, source %lld", rel, (long long)u.mtime_sec, (long long)s.st_mtim.tv_sec);
	if (u.mtime_nsec >= 1000000000u)
		BAD(c, "%s: mtime nsec %u", rel, u.mtime_nsec);
	if (S_ISREG(s.st_mode) || S_ISLNK(s.st_mode)) {
		if (u.size != (uint64_t)s.st_size)
			BAD(c, "%s: size %llu, source %lld", rel, (unsigned long long)u.size, (long long)s.st_size);
	}
	if (S_ISREG(s.st_mode)) {
		cmp_content(c, src, rel, (uint64_t)s.st_size);
		if (s.st_nlink > 1) {
			int found = 0;
			for (int i = 0; i < c->nhl; i++)
				if (c->hl[i].src == s.st_ino) {
					found = 1;
					if (c->hl[i].img != u.ino)
						BAD(c, "%s: hard link has inode %llu, its other name %llu", rel,
						    (unsigned long long)u.ino, (unsigned long long)c->hl[i].img);
				}
			if (!found && c->nhl < 64) {
				c->hl[c->nhl].src = s.st_ino;
				c->hl[c->nhl++].img = u.ino;
			}
		}
	} else if (S_ISLNK(s.st_mode)) {
		char a[4097], b[4097];
		ssize_t la = readlink(src, a, sizeof(a));
		ssize_t lb = ubikit_readlink(c->fs, rel, b, sizeof(b));
		if (la != lb || la < 0 || memcmp(a, b, (size_t)la))
			BAD(c, "%s: symlink target differs (%zd vs %zd bytes)", rel, la, lb);
	} else if (S_ISBLK(s.st_mode) || S_ISCHR(s.st_mode)) {
		if (u.rdev_major != major(s.st_rdev) || u.rdev_minor != minor(s.st_rdev))
			BAD(c, "%s: device %u:%u, source %u:%u", rel, u.rdev_major, u.rdev_minor, major(s.st_rdev),
			    minor(s.st_rdev));
	} else if (S_ISDIR(s.st_mode)) {
		cmp_dir(c, src, rel);
	}
}

static void cmp_dir(struct cmpctx *c, const char *src, const char *rel)
{
	DIR *d = opendir(src);
	if (!d) {
		BAD(c, "%s: opendir source", rel);
		return;
	}
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			names = realloc(names, cap * sizeof(*names));
		}
		names[n++] = strdup(de->d_name);
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), name_cmp);
	/* the image's listing, in its own order (by hash) */
	char **inames = NULL;
	size_t in = 0, icap = 0;
	struct ubikit_dir *ud;
	int err = ubikit_opendir(c->fs, rel, &ud);
	if (err) {
		BAD(c, "%s: ubikit_opendir %d: %s", rel, err, ubikit_errmsg(c->fs));
	} else {
		struct ubikit_dirent e;
		uint64_t last_hash = 0;
		while ((err = ubikit_readdir(ud, &e)) == 1) {
			uint64_t h = e.cookie >> 32;
			if (h < last_hash)
				BAD(c, "%s: readdir not in hash order at '%s'", rel, e.name);
			last_hash = h;
			if (in == icap) {
				icap = icap ? icap * 2 : 64;
				inames = realloc(inames, icap * sizeof(*inames));
			}
			inames[in++] = strdup(e.name);
			/* the entry type must agree with the inode */
			struct ubikit_stat st;
			if (ubikit_stat_ino(c->fs, e.ino, &st) == 0) {
				static const unsigned char dt[16] = {[1] = 1, [2] = 2, [4] = 4, [6] = 6, [8] = 8, [10] = 10, [12] = 12};
				if (dt[(st.mode >> 12) & 15] != e.type)
					BAD(c, "%s/%s: entry type %u, inode mode 0%o", rel, e.name, e.type, st.mode);
			} else
				BAD(c, "%s/%s: entry names inode %llu which cannot be read", rel, e.name,
				    (unsigned long long)e.ino);
		}
		if (err < 0)
			BAD(c, "%s: readdir %d: %s", rel, err, ubikit_errmsg(c->fs));
		ubikit_closedir(ud);
	}
	if (in)
		qsort(inames, in, sizeof(*inames), name_cmp);
	if (in != n)
		BAD(c, "%s: %zu entries, source %zu", rel, in, n);
	for (size_t i = 0; i < n && i < in; i++)
		if (strcmp(names[i], inames[i])) {
			BAD(c, "%s: entry '%s' vs source '%s'", rel, inames[i], names[i]);
			break;
		}
	for (size_t i = 0; i < in; i++)
		free(inames[i]);
	free(inames);
	for (size_t i = 0; i < n; i++) {
		char *s2 = NULL, *r2 = NULL;
		if (asprintf(&s2, "%s/%s", src, names[i]) > 0 &&
		    asprintf(&r2, "%s/%s", strcmp(rel, "/") ? rel : "", names[i]) > 0)
			cmp_entry(c, s2, r2);
		free(s2);
		free(r2);
		free(names[i]);
	}
	free(names);
}

int tt_compare_tree(struct ubikit_fs *fs, const char *src, uint64_t *entries)
{
	struct cmpctx c = {.fs = fs};
	c.b1 = malloc(1 << 20);
	c.b2 = malloc(1 << 20);
	cmp_entry(&c, src, "/");
	free(c.b1);
	free(c.b2);
	if (entries)
		*entries = c.entries;
	return c.bad;
}

/* ---- walking without a reference ---- */

static void walk(struct ubikit_fs *fs, uint64_t dir, int depth, uint64_t *entries, uint64_t *errors, uint8_t *buf)
{
	uint64_t cookie = 0;
	struct ubikit_dirent e;
	int r;
	unsigned guard = 0;
	while ((r = ubikit_readdir_ino(fs, dir, cookie, &e)) == 1 && guard++ < 100000) {
		cookie = e.cookie;
		(*entries)++;
		struct ubikit_stat st;
		int se = ubikit_stat_ino(fs, e.ino, &st);
		if (se) {
			if (se != -ENOENT) /* an entry naming a missing inode is not a read error */
				(*errors)++;
			continue;
		}
		char xl[4096];
		ssize_t xn = ubikit_listxattr_ino(fs, e.ino, xl, sizeof(xl));
		if (xn < 0)
			(*errors)++;
		for (ssize_t i = 0; i < xn; i += (ssize_t)strlen(xl + i) + 1) {
			char v[4096];
			if (ubikit_getxattr_ino(fs, e.ino, xl + i, v, sizeof(v)) < 0)
				(*errors)++;
		}
		if (S_ISREG(st.mode)) {
			uint64_t end = st.size < (16u << 20) ? st.size : (16u << 20);
			for (uint64_t off = 0; off < end; off += 65536)
				if (ubikit_pread_ino(fs, e.ino, buf, 65536, off) < 0) {
					(*errors)++;
					break;
				}
		} else if (S_ISLNK(st.mode)) {
			if (ubikit_readlink_ino(fs, e.ino, (char *)buf, 4096) < 0)
				(*errors)++;
		} else if (S_ISDIR(st.mode) && depth < 64 && e.ino != dir) {
			walk(fs, e.ino, depth + 1, entries, errors, buf);
		}
	}
	if (r < 0)
		(*errors)++;
}

int tt_walk_all(struct ubikit_fs *fs, uint64_t *entries, uint64_t *errors)
{
	uint8_t *buf = malloc(65536);
	if (!buf)
		return -1;
	*entries = *errors = 0;
	walk(fs, UBIKIT_ROOT_INO, 0, entries, errors, buf);
	free(buf);
	return 0;
}

int tt_ubi_gz_to_flat(const char *gz, const struct flash_geometry *geo, int has_oob, const char *workfile,
		      uint8_t **img, size_t *len, uint32_t *leb_size)
{
	uint64_t page = geo->page_size + (has_oob ? geo->oob_size : 0);
	uint64_t dev = (uint64_t)geo->peb_size / geo->page_size * page * geo->peb_count;
	uint8_t *buf = malloc(dev);
	if (!buf)
		return -ENOMEM;
	memset(buf, 0xFF, dev);
	gzFile g = gzopen(gz, "rb");
	if (!g) {
		free(buf);
		return -ENOENT;
	}
	int n = gzread(g, buf, (unsigned)dev);
	gzclose(g);
	FILE *f = fopen(workfile, "wb");
	if (n <= 0 || !f || fwrite(buf, 1, dev, f) != dev) {
		if (f)
			fclose(f);
		free(buf);
		return -EIO;
	}
	fclose(f);
	free(buf);
	struct flash_dev *fl;
	char e[256];
	int err = flash_sim_open_ex(workfile, geo, has_oob, true, &fl, e, sizeof(e));
	if (err) {
		fprintf(stderr, "flash open: %s\n", e);
		return err;
	}
	struct ubi_attach_opts o;
	ubi_attach_opts_default(&o);
	o.read_only = true;
	struct ubi_device *ubi;
	err = ubi_attach_msg(fl, &o, &ubi, e, sizeof(e));
	if (err) {
		fprintf(stderr, "attach: %s\n", e);
		flash_close(fl);
		return err;
	}
	struct ubi_vol_io vol;
	err = ubi_volume_io(ubi, 0, &vol);
	if (!err) {
		*len = (size_t)vol.leb_count * vol.leb_size;
		*leb_size = vol.leb_size;
		*img = malloc(*len);
		if (!*img)
			err = -ENOMEM;
		for (uint32_t l = 0; !err && l < vol.leb_count; l++)
			err = vol.read(vol.ctx, l, 0, *img + (size_t)l * vol.leb_size, vol.leb_size);
		if (err) {
			free(*img);
			*img = NULL;
		}
	}
	ubi_detach(ubi);
	flash_close(fl);
	remove(workfile);
	return err;
}
