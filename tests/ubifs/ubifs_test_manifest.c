/* ubifs_test_manifest — see ubifs_test_manifest.h. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>
#include <ubikit/ubikit.h>

#include "fs/fs.h"
#include "test_md5.h"
#include "ubifs/ubifs.h"
#include "ubifs/ubifs_media.h"
#include "ubifs/ubifs_priv.h"
#include "ubifs/ubifs_tnc.h"
#include "util/util_endian.h"
#include "ubifs_test_manifest.h"
#include "ubifs_test_tree.h"

struct strv {
	char **v;
	size_t n, cap;
};

static void sv_add(struct strv *s, char *str)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 64;
		s->v = realloc(s->v, s->cap * sizeof(*s->v));
	}
	s->v[s->n++] = str;
}

static int scmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void sv_free(struct strv *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
}

static void collect(struct ubikit_fs *fs, uint64_t dir, const char *path, struct strv *out, int depth)
{
	uint64_t cookie = 0;
	struct ubikit_dirent e;
	int r;
	while ((r = ubikit_readdir_ino(fs, dir, cookie, &e)) == 1) {
		cookie = e.cookie;
		char *p;
		assert_true(asprintf(&p, "%s/%s", path, e.name) > 0);
		sv_add(out, p);
		if (e.type == 4 /* DT_DIR */ && depth < 32)
			collect(fs, e.ino, p, out, depth + 1);
	}
	assert_int_equal(r, 0);
}

/* The manifest of ubifs_manifest.sh, made through the fs API. */
char *tm_manifest(struct ubikit_fs *fs)
{
	struct strv paths = {0};
	sv_add(&paths, strdup("."));
	collect(fs, UBIKIT_ROOT_INO, ".", &paths, 0);
	qsort(paths.v, paths.n, sizeof(char *), scmp);
	size_t cap = 1 << 20, len = 0;
	char *out = malloc(cap);
	out[0] = 0;
#define OUT(...)                                                                                 \
	do {                                                                                     \
		int n_ = snprintf(out + len, cap - len, __VA_ARGS__);                           \
		if ((size_t)n_ >= cap - len) {                                                   \
			cap = cap * 2 + (size_t)n_;                                              \
			out = realloc(out, cap);                                                 \
			n_ = snprintf(out + len, cap - len, __VA_ARGS__);                       \
		}                                                                                \
		len += (size_t)n_;                                                               \
	} while (0)
	for (size_t i = 0; i < paths.n; i++) {
		const char *p = paths.v[i];
		const char *fp = p + 1; /* "./a" -> "/a", "." -> "" */
		struct ubikit_stat st;
		int err = ubikit_lstat(fs, *fp ? fp : "/", &st);
		if (err)
			fail_msg("lstat %s: %d %s", p, err, ubikit_errmsg(fs));
		long long mt = (long long)st.mtime_sec;
		if (S_ISLNK(st.mode)) {
			char t[4097];
			ssize_t n = ubikit_readlink(fs, fp, t, sizeof(t) - 1);
			assert_true(n >= 0);
			t[n] = 0;
			OUT("%s l %x %u %u %u %llu %lld -> %s\n", p, st.mode, st.nlink, st.uid, st.gid,
			    (unsigned long long)st.size, mt, t);
		} else if (S_ISDIR(st.mode)) {
			OUT("%s d %x %u %u %lld\n", p, st.mode, st.uid, st.gid, mt);
		} else if (S_ISREG(st.mode)) {
			struct ubikit_file *f;
			assert_int_equal(ubikit_open(fs, fp, 0, 0, &f), 0);
			struct util_md5 m;
			util_md5_init(&m);
			static uint8_t buf[65536];
			ssize_t n;
			while ((n = ubikit_read(f, buf, sizeof(buf))) > 0)
				util_md5_update(&m, buf, (size_t)n);
			if (n < 0)
				fail_msg("read %s: %zd %s", p, n, ubikit_errmsg(fs));
			ubikit_close(f);
			char hex[33];
			util_md5_hex(&m, hex);
			OUT("%s f %x %u %u %u %llu %lld %s\n", p, st.mode, st.nlink, st.uid, st.gid,
			    (unsigned long long)st.size, mt, hex);
		} else if (S_ISCHR(st.mode) || S_ISBLK(st.mode)) {
			OUT("%s dev %x %u %u %u %lld %x:%x\n", p, st.mode, st.nlink, st.uid, st.gid, mt, st.rdev_major,
			    st.rdev_minor);
		} else {
			OUT("%s other %x %u %u %u %lld\n", p, st.mode, st.nlink, st.uid, st.gid, mt);
		}
	}
	OUT("== xattrs\n");
	for (size_t i = 0; i < paths.n; i++) {
		const char *p = paths.v[i];
		const char *fp = *(p + 1) ? p + 1 : "/";
		uint64_t ino;
		struct ubikit_stat st;
		assert_int_equal(ubikit_lstat(fs, fp, &st), 0);
		ino = st.ino;
		char names[4096];
		ssize_t n = ubikit_listxattr_ino(fs, ino, names, sizeof(names));
		assert_true(n >= 0);
		struct strv lines = {0};
		for (ssize_t k = 0; k < n; k += (ssize_t)strlen(names + k) + 1) {
			uint8_t v[4096];
			ssize_t vl = ubikit_getxattr_ino(fs, ino, names + k, v, sizeof(v));
			assert_true(vl >= 0);
			char *l = malloc(strlen(names + k) + 4 + 2 * (size_t)vl);
			size_t o = (size_t)sprintf(l, "%s=0x", names + k);
			for (ssize_t b = 0; b < vl; b++)
				o += (size_t)sprintf(l + o, "%02x", v[b]);
			sv_add(&lines, l);
		}
		if (lines.n)
			qsort(lines.v, lines.n, sizeof(char *), scmp);
		for (size_t k = 0; k < lines.n; k++)
			OUT("%s %s\n", p, lines.v[k]);
		sv_free(&lines);
	}
#undef OUT
	sv_free(&paths);
	return out;
}

char *tm_slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *b = malloc((size_t)n + 1);
	if (fread(b, 1, (size_t)n, f) != (size_t)n) {
		free(b);
		fclose(f);
		return NULL;
	}
	b[n] = 0;
	fclose(f);
	return b;
}

int tm_compare(const char *got, const char *want_path, const char *workdir, const char *name)
{
	char *want = tm_slurp(want_path);
	if (want && !strcmp(got, want)) {
		free(want);
		return 0;
	}
	free(want);
	char gp[1024];
	snprintf(gp, sizeof(gp), "%s/%s.actual", workdir, name);
	FILE *o = fopen(gp, "w");
	if (o) {
		fputs(got, o);
		fclose(o);
	}
	tt_run("diff -u '%s' '%s' | head -40 >&2", want_path, gp);
	return -1;
}

static int u64cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Every inode number in an orphan node of the orphan area. */
static size_t orphan_area(struct ubifs_fs *fs, uint64_t **out)
{
	struct ubifs_fs_info info;
	uint64_t *v = NULL;
	size_t n = 0, cap = 0;
	if (ubifs_get_info(fs, &info))
		return 0;
	uint8_t *leb = malloc(info.leb_size);
	for (uint32_t l = info.orph_first; l <= info.orph_last; l++) {
		if (ubifs_leb_read(fs, l, 0, leb, info.leb_size))
			continue;
		for (uint32_t o = 0; o + 32 <= info.leb_size; o += 8) {
			uint32_t len = get_le32(leb + o + 16);
			if (get_le32(leb + o) != 0x06101831u || leb[o + 20] != UBIFS_ORPH_NODE || len < 32 ||
			    o + len > info.leb_size)
				continue;
			for (uint32_t i = 32; i + 8 <= len; i += 8) {
				if (n == cap)
					v = realloc(v, (cap = cap ? 2 * cap : 64) * sizeof(*v));
				v[n++] = get_le64(leb + o + i);
			}
		}
	}
	free(leb);
	*out = v;
	return n;
}

int tm_lost_inodes(struct ubikit_fs *ufs, const char *name)
{
	struct ubifs_fs *fs = fs_ubifs(ufs);
	uint64_t *inos = NULL, *named = NULL, *xinos = NULL, *orph = NULL;
	size_t ni = 0, nn = 0, ci = 0, cn = 0, nx = 0, cx = 0;
	uint8_t *buf = malloc(UBIFS_MAX_NODE_SZ);
	struct ubifs_key k0 = {0, 0};
	struct ubifs_tnc_pos pos;
	int err = ubifs_tnc_seek(fs, &k0, 0, &pos);
	while (!err) {
		const struct ubifs_zbranch *zb = ubifs_tnc_at(&pos);
		unsigned t = ubifs_key_type(&zb->key);
		if (t == UBIFS_INO_KEY) {
			if (ni == ci)
				inos = realloc(inos, (ci = ci ? 2 * ci : 256) * sizeof(*inos));
			inos[ni++] = zb->key.inum;
			struct ubifs_zbranch copy = *zb;
			err = ubifs_tnc_read_leaf(fs, &copy, buf);
			if (err)
				break;
			if (get_le32(buf + 108) & 0x20 /* UBIFS_XATTR_FL */) {
				if (nx == cx)
					xinos = realloc(xinos, (cx = cx ? 2 * cx : 64) * sizeof(*xinos));
				xinos[nx++] = zb->key.inum;
			}
			err = ubifs_tnc_seek(fs, &copy.key, 0, &pos);
			if (err)
				break;
		} else if (t == UBIFS_DENT_KEY || t == UBIFS_XENT_KEY) {
			struct ubifs_zbranch copy = *zb;
			err = ubifs_tnc_read_leaf(fs, &copy, buf);
			if (err)
				break;
			if (nn == cn)
				named = realloc(named, (cn = cn ? 2 * cn : 256) * sizeof(*named));
			named[nn++] = get_le64(buf + 40); /* the entry's target inode */
			/* the walk may have moved: find this entry again */
			err = ubifs_tnc_seek(fs, &copy.key, 0, &pos);
			while (!err && (ubifs_tnc_at(&pos)->lnum != copy.lnum || ubifs_tnc_at(&pos)->offs != copy.offs))
				err = ubifs_tnc_next(fs, &pos);
			if (err)
				break;
		}
		err = ubifs_tnc_next(fs, &pos);
	}
	free(buf);
	int lost = 0;
	if (err != -ENOENT) {
		lost = err;
	} else {
		if (nn)
			qsort(named, nn, sizeof(*named), u64cmp);
		/* Linux 6.1 lists the xattr inodes of an orphan in the orphan area
		 * too, but kills only orphans whose link count is 0: an xattr inode
		 * (link count 1) of a killed orphan stays in its index, unnamed. */
		size_t no = orphan_area(fs, &orph);
		if (no)
			qsort(orph, no, sizeof(*orph), u64cmp);
		for (size_t i = 0; i < ni; i++) {
			if (inos[i] == UBIKIT_ROOT_INO || (nn && bsearch(&inos[i], named, nn, sizeof(*named), u64cmp)))
				continue;
			int is_x = 0;
			for (size_t j = 0; j < nx && !is_x; j++)
				is_x = xinos[j] == inos[i];
			if (is_x && no && bsearch(&inos[i], orph, no, sizeof(*orph), u64cmp))
				continue;
			fprintf(stderr, "%s: inode %llu is in the index, but no entry names it\n", name,
				(unsigned long long)inos[i]);
			lost++;
		}
	}
	free(inos);
	free(named);
	free(xinos);
	free(orph);
	return lost;
}
