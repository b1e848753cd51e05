/* test_ubifs_replay — journal replay and power-cut recovery against images
 * the Linux kernel wrote (Linux VM): the kernel created a UBIFS, worked on
 * it and stopped as at a power cut (debugfs ro_error) or unmounted cleanly
 * without a commit; the .manifest is what the kernel itself showed when it
 * mounted the image again. We attach the image with our UBI (read-only),
 * mount it with our UBIFS and build the same manifest through the fs API
 * (tests/tools/ubifs_manifest.sh format), which must match line for line.
 * Images: tests/data/ubifs (ours: collisions, truncations, xattr removal,
 * orphans; make_replay_images.sh) and tests/data/kernel-images (the tools'
 * workload, clean and unclean, NAND/NOR/OOB). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>
#include <cmocka.h>
#include <ubikit/ubikit.h>

#include "flash/flash.h"
#include "flash/flash_sim.h"
#include "fs/fs.h"
#include "test_md5.h"
#include "ubi/ubi.h"
#include "ubifs/ubifs.h"
#include "ubifs_test_tree.h"

#define WORK UBIKIT_BUILD_DIR "/ubifs-replay"

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
static char *manifest(struct ubikit_fs *fs)
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

struct case_def {
	const char *dir, *name;
	struct flash_geometry geo;
	int has_oob;
	int unclean, expect_orphans, expect_journal;
};

#define NAND2K {FLASH_NAND, 2048, 512, 64, 131072, 128}
static const struct case_def cases[] = {
	{"ubifs", "replay-nand2k", NAND2K, 0, 1, 1, 1},
	{"ubifs", "replay-nor", {FLASH_NOR, 1, 1, 0, 65536, 256}, 0, 1, 1, 1},
	{"kernel-images", "nand2k-clean", NAND2K, 0, 0, 0, 0} /* clean unmount commits */,
	{"kernel-images", "nand2k-unclean", NAND2K, 0, 1, 0, 1},
	{"kernel-images", "nor-zlib-unclean", {FLASH_NOR, 1, 1, 0, 65536, 256}, 0, 1, 0, 1},
	{"kernel-images", "nand4k-oob-zstd-unclean", {FLASH_NAND, 4096, 1024, 128, 262144, 256}, 1, 1, 0, 1},
};

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *b = malloc((size_t)n + 1);
	assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
	b[n] = 0;
	fclose(f);
	return b;
}

/* spy on the volume: the read-only mount must never write */
struct spy {
	struct ubi_vol_io in;
	int writes;
};
static int s_read(void *c, uint32_t l, uint32_t o, void *b, size_t n)
{
	struct spy *s = c;
	return s->in.read(s->in.ctx, l, o, b, n);
}
static int s_write(void *c, uint32_t l, uint32_t o, const void *b, size_t n)
{
	(void)l, (void)o, (void)b, (void)n;
	return ((struct spy *)c)->writes++, -EROFS;
}
static int s_change(void *c, uint32_t l, const void *b, size_t n)
{
	(void)l, (void)b, (void)n;
	return ((struct spy *)c)->writes++, -EROFS;
}
static int s_lnum(void *c, uint32_t l)
{
	(void)l;
	return ((struct spy *)c)->writes++, -EROFS;
}

static void run_case(const struct case_def *c)
{
	char gz[512], img[512], mf[512];
	snprintf(gz, sizeof(gz), "%s/%s/%s.img.gz", UBIKIT_TEST_DATA, c->dir, c->name);
	snprintf(mf, sizeof(mf), "%s/%s/%s.manifest", UBIKIT_TEST_DATA, c->dir, c->name);
	snprintf(img, sizeof(img), "%s/%s.img", WORK, c->name);
	char *want = slurp(mf);
	if (!want) /* part of the repository: missing is an error, not a skip */
		fail_msg("%s: %s not present", c->name, mf);
	/* unpack, padded with erased flash to the device size */
	uint64_t page = c->geo.page_size + (c->has_oob ? c->geo.oob_size : 0);
	uint64_t dev = (uint64_t)c->geo.peb_size / c->geo.page_size * page * c->geo.peb_count;
	uint8_t *buf = malloc(dev);
	memset(buf, 0xFF, dev);
	gzFile g = gzopen(gz, "rb");
	assert_non_null(g);
	assert_true(gzread(g, buf, (unsigned)dev) > 0);
	gzclose(g);
	FILE *f = fopen(img, "wb");
	assert_int_equal(fwrite(buf, 1, dev, f), dev);
	fclose(f);
	free(buf);
	struct flash_dev *fl;
	char e[512];
	int err = flash_sim_open_ex(img, &c->geo, c->has_oob, true, &fl, e, sizeof(e));
	if (err)
		fail_msg("%s: flash open %d %s", c->name, err, e);
	struct ubi_attach_opts o;
	ubi_attach_opts_default(&o);
	o.read_only = true;
	struct ubi_device *ubi;
	err = ubi_attach_msg(fl, &o, &ubi, e, sizeof(e));
	if (err)
		fail_msg("%s: attach %d %s", c->name, err, e);
	struct spy spy;
	assert_int_equal(ubi_volume_io(ubi, 0, &spy.in), 0);
	spy.writes = 0;
	struct ubi_vol_io vol = spy.in;
	vol.ctx = &spy;
	vol.read = s_read;
	vol.write = s_write;
	vol.change = s_change;
	vol.unmap = s_lnum;
	vol.map = s_lnum;
	struct ubikit_fs *fs;
	struct ubikit_mount_opts mo = {.flags = UBIKIT_MOUNT_RDONLY, .tnc_cache_bytes = 64 * 1024};
	err = ubikit_mount_ex(&vol, &mo, &fs, e, sizeof(e));
	if (err)
		fail_msg("%s: mount %d %s", c->name, err, e);
	char *got = manifest(fs);
	struct ubifs_fs_info info;
	assert_int_equal(ubifs_get_info(fs_ubifs(fs), &info), 0);
	fprintf(stderr, "%s: need_recovery %d, %u log LEBs, %u buds, %llu journal nodes, %u torn tails cut, %u orphans killed, highest inum %llu\n",
		c->name, info.need_recovery, info.log_lebs_used, info.buds, (unsigned long long)info.replayed_nodes,
		info.recovered_lebs, info.orphans_killed, (unsigned long long)info.highest_inum);
	if (strcmp(got, want)) {
		char gp[600];
		snprintf(gp, sizeof(gp), "%s/%s.actual", WORK, c->name);
		FILE *o2 = fopen(gp, "w");
		fputs(got, o2);
		fclose(o2);
		tt_run("diff -u '%s' '%s' | head -40 >&2", mf, gp);
		fail_msg("%s: our view differs from the kernel's", c->name);
	}
	assert_int_equal(info.need_recovery, c->unclean);
	if (c->expect_journal)
		assert_true(info.replayed_nodes > 0);
	if (c->expect_orphans)
		assert_true(info.orphans_killed >= 1);
	free(got);
	free(want);
	ubikit_unmount(fs);
	assert_int_equal(spy.writes, 0);
	ubi_detach(ubi);
	flash_close(fl);
	remove(img);
}

static void t_replay_ours(void **s)
{
	(void)s;
	run_case(&cases[0]);
	run_case(&cases[1]);
}

static void t_kernel_images(void **s)
{
	(void)s;
	for (size_t i = 2; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_case(&cases[i]);
}

static int setup(void **s)
{
	(void)s;
	return tt_run("mkdir -p '%s'", WORK) ? -1 : 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(t_replay_ours), cmocka_unit_test(t_kernel_images)};
	return cmocka_run_group_tests(tests, setup, NULL);
}
