/* test_alloc_fail — every allocation of the read side, failed one at a time
 * (af_wrap.c: malloc & co. wrapped at link time, no hook in the libraries).
 *
 * Scenario "kernel": open a kernel-written flash image with the simulator
 * (read-only), attach it with our UBI, mount it read-only (recovery and
 * journal replay of an unclean image, a small index cache so that nodes are
 * dropped and read again) and list the whole tree in the format of
 * tests/tools/ubifs_manifest.sh through the fs API (readdir, lstat, open,
 * read, readlink, listxattr, getxattr, statfs). A clean run must equal the
 * kernel's own manifest of that image (tests/data/kernel-images). Then the
 * scenario is rerun once per allocation call site seen, failing the first
 * and then the last allocation made there. Each run must end with exactly
 * the kernel's manifest (the failure was absorbed) or with -ENOMEM from the
 * call that could not allocate — never another error, another tree, a
 * crash, or (ASan build) a leak. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>
#include <cmocka.h>
#include <ubikit/ubikit.h>

#include "af_wrap.h"
#include "flash/flash.h"
#include "flash/flash_sim.h"
#include "ubi/ubi.h"
#include "ubi/ubi_flat.h"
#include "ubifs/test_md5.h"
#include "util/util_err.h"

#define WORK UBIKIT_BUILD_DIR "/alloc-fail"

/* ---- the test's own bookkeeping (never through the wrapped allocator) ---- */
struct out {
	char *s;
	size_t len, cap;
};

static void out_add(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void out_add(struct out *o, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	assert_true(n >= 0);
	if (o->len + (size_t)n + 1 > o->cap) {
		o->cap = (o->len + (size_t)n + 1) * 2;
		o->s = af_test_realloc(o->s, o->cap);
		assert_non_null(o->s);
	}
	va_start(ap, fmt);
	vsnprintf(o->s + o->len, o->cap - o->len, fmt, ap);
	va_end(ap);
	o->len += (size_t)n;
}

struct paths {
	char **v;
	size_t n, cap;
};

static void paths_add(struct paths *p, const char *s)
{
	if (p->n == p->cap) {
		p->cap = p->cap ? p->cap * 2 : 64;
		p->v = af_test_realloc(p->v, p->cap * sizeof(*p->v));
		assert_non_null(p->v);
	}
	size_t l = strlen(s) + 1;
	p->v[p->n] = af_test_malloc(l);
	assert_non_null(p->v[p->n]);
	memcpy(p->v[p->n++], s, l);
}

static void paths_free(struct paths *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->v[i]);
	free(p->v);
	memset(p, 0, sizeof(*p));
}

static int scmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* ---- one run ---- */
struct run {
	int err;          /* first error, 0 if none */
	const char *step; /* the call that returned it */
	char msg[512];
	struct out out;   /* the manifest */
};

#define CALL(r, name, expr)                                                                        \
	do {                                                                                       \
		long long rc_ = (long long)(expr);                                                 \
		if (rc_ < 0 && !(r)->err) {                                                        \
			(r)->err = (int)rc_;                                                       \
			(r)->step = name;                                                          \
		}                                                                                  \
		if (rc_ < 0)                                                                       \
			goto fail;                                                                 \
	} while (0)

static int collect(struct ubikit_fs *fs, uint64_t dir, const char *path, struct paths *ps, struct run *r, int depth)
{
	uint64_t cookie = 0;
	struct ubikit_dirent e;
	int rc;
	while ((rc = ubikit_readdir_ino(fs, dir, cookie, &e)) == 1) {
		cookie = e.cookie;
		char p[4096];
		snprintf(p, sizeof(p), "%s/%s", path, e.name);
		paths_add(ps, p);
		if (e.type == 4 /* DT_DIR */ && depth < 32 && collect(fs, e.ino, p, ps, r, depth + 1))
			return -1;
	}
	if (rc < 0) {
		r->err = rc;
		r->step = "readdir";
		return -1;
	}
	return 0;
}

/* the manifest of ubifs_manifest.sh through the path and inode calls */
static void manifest(struct ubikit_fs *fs, struct run *r)
{
	struct paths ps = {0};
	paths_add(&ps, ".");
	if (collect(fs, UBIKIT_ROOT_INO, ".", &ps, r, 0))
		goto fail;
	qsort(ps.v, ps.n, sizeof(char *), scmp);
	for (size_t i = 0; i < ps.n; i++) {
		const char *p = ps.v[i], *fp = p[1] ? p + 1 : "/";
		struct ubikit_stat st;
		CALL(r, "lstat", ubikit_lstat(fs, fp, &st));
		long long mt = (long long)st.mtime_sec;
		if (S_ISLNK(st.mode)) {
			char t[4097];
			ssize_t n;
			CALL(r, "readlink", n = ubikit_readlink(fs, fp, t, sizeof(t) - 1));
			t[n] = 0;
			out_add(&r->out, "%s l %x %u %u %u %llu %lld -> %s\n", p, st.mode, st.nlink, st.uid, st.gid,
				(unsigned long long)st.size, mt, t);
		} else if (S_ISDIR(st.mode)) {
			out_add(&r->out, "%s d %x %u %u %lld\n", p, st.mode, st.uid, st.gid, mt);
		} else if (S_ISREG(st.mode)) {
			struct ubikit_file *f;
			CALL(r, "open", ubikit_open(fs, fp, 0, 0, &f));
			struct util_md5 m;
			util_md5_init(&m);
			static uint8_t buf[65536];
			ssize_t n;
			while ((n = ubikit_read(f, buf, sizeof(buf))) > 0)
				util_md5_update(&m, buf, (size_t)n);
			ubikit_close(f);
			CALL(r, "read", n);
			char hex[33];
			util_md5_hex(&m, hex);
			out_add(&r->out, "%s f %x %u %u %u %llu %lld %s\n", p, st.mode, st.nlink, st.uid, st.gid,
				(unsigned long long)st.size, mt, hex);
		} else if (S_ISCHR(st.mode) || S_ISBLK(st.mode)) {
			out_add(&r->out, "%s dev %x %u %u %u %lld %x:%x\n", p, st.mode, st.nlink, st.uid, st.gid, mt,
				st.rdev_major, st.rdev_minor);
		} else {
			out_add(&r->out, "%s other %x %u %u %u %lld\n", p, st.mode, st.nlink, st.uid, st.gid, mt);
		}
	}
	out_add(&r->out, "== xattrs\n");
	for (size_t i = 0; i < ps.n; i++) {
		const char *p = ps.v[i], *fp = p[1] ? p + 1 : "/";
		struct ubikit_stat st;
		CALL(r, "lstat", ubikit_lstat(fs, fp, &st));
		char names[4096];
		ssize_t n;
		CALL(r, "listxattr", n = ubikit_listxattr_ino(fs, st.ino, names, sizeof(names)));
		struct paths lines = {0};
		for (ssize_t k = 0; k < n; k += (ssize_t)strlen(names + k) + 1) {
			uint8_t v[4096];
			ssize_t vl = ubikit_getxattr_ino(fs, st.ino, names + k, v, sizeof(v));
			if (vl < 0) {
				paths_free(&lines);
				CALL(r, "getxattr", vl);
			}
			char l[8600];
			size_t o = (size_t)snprintf(l, sizeof(l), "%s=0x", names + k);
			for (ssize_t b = 0; b < vl; b++)
				o += (size_t)snprintf(l + o, sizeof(l) - o, "%02x", v[b]);
			paths_add(&lines, l);
		}
		if (lines.n)
			qsort(lines.v, lines.n, sizeof(char *), scmp);
		for (size_t k = 0; k < lines.n; k++)
			out_add(&r->out, "%s %s\n", p, lines.v[k]);
		paths_free(&lines);
	}
fail:
	paths_free(&ps);
}

struct kimage {
	const char *name;
	struct flash_geometry geo;
	int has_oob;
};

static void run_kernel(const struct kimage *k, const char *img, struct run *r)
{
	struct flash_dev *fl = NULL;
	struct ubi_device *ubi = NULL;
	struct ubikit_fs *fs = NULL;
	struct ubi_vol_io vol;
	memset(r, 0, sizeof(*r));
	af_arm();
	CALL(r, "flash open", flash_sim_open_ex(img, &k->geo, k->has_oob, true, &fl, r->msg, sizeof(r->msg)));
	struct ubi_attach_opts o;
	ubi_attach_opts_default(&o);
	o.read_only = true;
	CALL(r, "attach", ubi_attach_msg(fl, &o, &ubi, r->msg, sizeof(r->msg)));
	CALL(r, "volume", ubi_volume_io(ubi, 0, &vol));
	struct ubikit_mount_opts mo = {.flags = UBIKIT_MOUNT_RDONLY, .tnc_cache_bytes = 32 * 1024};
	CALL(r, "mount", ubikit_mount_ex(&vol, &mo, &fs, r->msg, sizeof(r->msg)));
	struct ubikit_statfs sf;
	CALL(r, "statfs", ubikit_statfs(fs, &sf));
	manifest(fs, r);
	if (r->err)
		snprintf(r->msg, sizeof(r->msg), "%s", ubikit_errmsg(fs));
fail:
	if (fs)
		ubikit_unmount(fs);
	if (ubi)
		ubi_detach(ubi);
	if (fl)
		flash_close(fl);
	af_disarm();
}

/* the same volume as a bare UBIFS image (ubi_flat: LEBs back to back) */
static void run_flat(const char *flat, struct run *r)
{
	struct ubikit_fs *fs = NULL;
	struct ubi_vol_io vol;
	struct util_err ue;
	int opened = 0;
	memset(r, 0, sizeof(*r));
	af_arm();
	CALL(r, "flat open", ubi_flat_open_err(flat, 0, 1, &vol, &ue));
	opened = 1;
	struct ubikit_mount_opts mo = {.flags = UBIKIT_MOUNT_RDONLY};
	CALL(r, "mount", ubikit_mount_ex(&vol, &mo, &fs, r->msg, sizeof(r->msg)));
	manifest(fs, r);
fail:
	if (fs)
		ubikit_unmount(fs);
	if (opened)
		ubi_flat_close(&vol);
	af_disarm();
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *b = af_test_malloc((size_t)n + 1);
	size_t got = fread(b, 1, (size_t)n, f);
	fclose(f);
	b[got] = 0;
	return b;
}

/* unpack CASE.img.gz padded with erased flash to the device size */
static void unpack(const struct kimage *k, const char *img)
{
	char gz[512];
	snprintf(gz, sizeof(gz), "%s/kernel-images/%s.img.gz", UBIKIT_TEST_DATA, k->name);
	uint64_t page = k->geo.page_size + (k->has_oob ? k->geo.oob_size : 0);
	size_t dev = (size_t)k->geo.peb_size / k->geo.page_size * page * k->geo.peb_count;
	uint8_t *buf = af_test_malloc(dev);
	assert_non_null(buf);
	memset(buf, 0xFF, dev);
	gzFile g = gzopen(gz, "rb");
	if (!g)
		fail_msg("%s not present", gz);
	assert_true(gzread(g, buf, (unsigned)dev) > 0);
	gzclose(g);
	mkdir(WORK, 0755);
	FILE *f = fopen(img, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, dev, f), dev);
	fclose(f);
	free(buf);
}

/* copy volume 0 of the flash image out as a bare UBIFS image */
static void make_flat(const struct kimage *k, const char *img, const char *flat)
{
	struct flash_dev *fl;
	assert_int_equal(flash_sim_open_ex(img, &k->geo, k->has_oob, true, &fl, NULL, 0), 0);
	struct ubi_attach_opts o;
	ubi_attach_opts_default(&o);
	o.read_only = true;
	struct ubi_device *ubi;
	assert_int_equal(ubi_attach(fl, &o, &ubi), 0);
	struct ubi_vol_io v;
	assert_int_equal(ubi_volume_io(ubi, 0, &v), 0);
	FILE *f = fopen(flat, "wb");
	assert_non_null(f);
	uint8_t *b = af_test_malloc(v.leb_size);
	for (uint32_t l = 0; l < v.leb_count; l++) {
		assert_int_equal(v.read(v.ctx, l, 0, b, v.leb_size), 0);
		assert_int_equal(fwrite(b, 1, v.leb_size, f), v.leb_size);
	}
	free(b);
	fclose(f);
	ubi_detach(ubi);
	flash_close(fl);
}

static void check_run(const char *what, long at, const struct run *r, const char *want, int *nomem, int *absorbed)
{
	if (!af_failed())
		fail_msg("%s: allocation %ld was never reached (the scenario is not deterministic)", what, at);
	if (r->err == 0) {
		if (strcmp(r->out.s ? r->out.s : "", want))
			fail_msg("%s: allocation %ld failed, the run succeeded but shows another tree", what, at);
		(*absorbed)++;
		return;
	}
	if (r->err != -ENOMEM)
		fail_msg("%s: allocation %ld (call site %#lx) failed: %s returned %d (%s), expected -ENOMEM", what, at,
			 (unsigned long)af_failed_ra(), r->step, r->err, r->msg);
	(*nomem)++;
}

typedef void (*runner_fn)(const void *arg, struct run *r);

/* One clean run (must equal want), then one run per call site failing its
 * first and its last allocation. */
static void sweep(const char *what, runner_fn run, const void *arg, const char *want)
{
	struct run r;
	af_reset(0);
	af_record(1);
	run(arg, &r);
	af_record(0);
	if (r.err)
		fail_msg("%s: clean run: %s %d %s", what, r.step, r.err, r.msg);
	if (strcmp(r.out.s, want)) {
		fprintf(stderr, "got:\n%s", r.out.s);
		fail_msg("%s: clean run differs from the kernel's manifest", what);
	}
	free(r.out.s);
	static struct af_site sites[AF_MAX_SITES];
	size_t n = af_sites(sites, AF_MAX_SITES);
	long total = af_count();
	assert_true(n < AF_MAX_SITES);

	int runs = 0, nomem = 0, absorbed = 0;
	for (size_t i = 0; i < n; i++) {
		long at[2] = {sites[i].first, sites[i].last};
		for (int j = 0; j < (at[1] != at[0] ? 2 : 1); j++) {
			af_reset(at[j]);
			run(arg, &r);
			check_run(what, at[j], &r, want, &nomem, &absorbed);
			if (af_failed_ra() != sites[i].ra)
				fail_msg("%s: allocation %ld came from another call site", what, at[j]);
			free(r.out.s);
			runs++;
		}
	}
	fprintf(stderr, "%s: %ld allocations from %zu call sites; %d runs: %d ended with -ENOMEM, %d absorbed\n",
		what, total, n, runs, nomem, absorbed);
	assert_true(nomem > 0);
}

struct kernel_arg {
	const struct kimage *k;
	const char *img;
};

static void run_kernel_fn(const void *arg, struct run *r)
{
	const struct kernel_arg *a = arg;
	run_kernel(a->k, a->img, r);
}

static void run_flat_fn(const void *arg, struct run *r)
{
	run_flat(arg, r);
}

static void kernel_case(const struct kimage *k, int flat)
{
	char img[512], mf[512], fl[512], what[300];
	snprintf(img, sizeof(img), "%s/%s.img", WORK, k->name);
	snprintf(fl, sizeof(fl), "%s/%s.flat", WORK, k->name);
	snprintf(mf, sizeof(mf), "%s/kernel-images/%s.manifest", UBIKIT_TEST_DATA, k->name);
	unpack(k, img);
	char *want = slurp(mf);
	if (!want)
		fail_msg("%s not present", mf);
	struct kernel_arg a = {k, img};
	sweep(k->name, run_kernel_fn, &a, want);
	if (flat) {
		make_flat(k, img, fl);
		snprintf(what, sizeof(what), "%s as a bare UBIFS image", k->name);
		sweep(what, run_flat_fn, fl, want);
		remove(fl);
	}
	free(want);
	remove(img);
}

#define NAND2K {FLASH_NAND, 2048, 512, 64, 131072, 128}

static void t_kernel_nand2k_unclean(void **s)
{
	(void)s;
	static const struct kimage k = {"nand2k-unclean", NAND2K, 0};
	kernel_case(&k, 1);
}

static void t_kernel_nor_zlib(void **s)
{
	(void)s;
	static const struct kimage k = {"nor-zlib-unclean", {FLASH_NOR, 1, 1, 0, 65536, 256}, 0};
	kernel_case(&k, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_kernel_nand2k_unclean),
		cmocka_unit_test(t_kernel_nor_zlib),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
