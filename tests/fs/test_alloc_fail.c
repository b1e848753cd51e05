/* test_alloc_fail — error paths driven one failure at a time, each run
 * judged by an independent reference:
 *   allocation failures: every call site of malloc & co. reached by a
 *     scenario (af_wrap.c wraps them at link time, no hook in the
 *     libraries), its first and its last allocation failed in turn;
 *   read errors of the volume under UBIFS (-EBADMSG), write errors of the
 *     volume under a read-write UBIFS (-EIO), flash errors (-EIO) under UBI.
 * Scenarios and references:
 *   t_kernel_*: a kernel-written flash image (tests/data/kernel-images)
 *     through the simulator (read-only), UBI, a read-only mount (recovery
 *     and replay of an unclean image, a small index cache) and a walk of the
 *     whole tree in the format of tests/tools/ubifs_manifest.sh; also the
 *     same volume as a bare image (ubi_flat). A run must end with exactly
 *     the kernel's manifest or with -ENOMEM.
 *   t_read_errors: the same walk with one LEB read failing: the kernel's
 *     manifest, or -EBADMSG with a message naming the LEB.
 *   t_ubi_volume_ops, t_flash_errors: UBI volume operations (create, LEB
 *     write/change/unmap/map, static update and check, resize, rename,
 *     remove, wear-leveling and scrub moves) on a RAM or image-file flash;
 *     after a re-attach with nothing failing, the volumes hold the model's
 *     state before or after the failed operation.
 *   t_fs_changes, t_write_errors: changes through the fs API (mkdir,
 *     create, write, symlink, link, xattrs, rename, truncate, hole, unlink,
 *     chmod, rmdir), each synced; after a remount the tree is the model's
 *     before or after the failed change.
 *   t_gc_write_errors: a file rewritten until GC must make room on a small
 *     volume, each volume change failing in turn: each block of the file is
 *     its previous or its new content after a remount.
 *   t_mkfs_errors: mkfs of a host tree (fs_mkfs, the `ubikit mkfs` library
 *     side) and the format of an empty volume at its first read-write mount
 *     (ubifs_format), with an allocation or a volume change failing: the
 *     error must be -ENOMEM / -EIO; a run that succeeds must give the tree
 *     the test wrote on the host (an empty root for the format).
 * Never another error, another tree, a crash or (ASan build) a leak. */
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
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
#include "fs/fs_mkfs.h"
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
		if (snprintf(p, sizeof(p), "%s/%s", path, e.name) >= (int)sizeof(p))
			fail_msg("path too long under %s", path);
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

/* A flash that fails its N-th operation (read, is_bad, write, erase,
 * mark_bad) with -EIO, as a host or controller error would; the paths
 * (callers' return addresses) of a clean run are recorded as for reads. */
struct fwrap {
	struct flash_dev dev; /* first: handed out as the flash */
	struct flash_dev *in;
};
static long fw_ops, fw_fail_at;
static int fw_on, fw_record, fw_failed;
static struct af_site fsites[AF_MAX_SITES];
static size_t nfsites;

static int fw_hit(void)
{
	fw_ops++;
	if (fw_record) {
		void *bt[10];
		int nb = backtrace(bt, 10);
		uintptr_t h = 0;
		for (int i = 2; i < nb; i++)
			h = h * 1000003u ^ (uintptr_t)bt[i];
		size_t i;
		for (i = 0; i < nfsites && fsites[i].ra != h; i++)
			;
		if (i == nfsites && nfsites < AF_MAX_SITES)
			fsites[nfsites++] = (struct af_site){h, fw_ops, fw_ops};
		else if (i < nfsites)
			fsites[i].last = fw_ops;
	}
	if (fw_ops != fw_fail_at)
		return 0;
	fw_failed = 1;
	return 1;
}
#define FW_IN(d) (((struct fwrap *)(d))->in)
static int fw_read(struct flash_dev *d, uint32_t p, uint32_t o, void *b, size_t n)
{
	return fw_hit() ? -EIO : flash_read(FW_IN(d), p, o, b, n);
}
static int fw_write(struct flash_dev *d, uint32_t p, uint32_t o, const void *b, size_t n)
{
	return fw_hit() ? -EIO : flash_write(FW_IN(d), p, o, b, n);
}
static int fw_erase(struct flash_dev *d, uint32_t p)
{
	return fw_hit() ? -EIO : flash_erase(FW_IN(d), p);
}
static int fw_is_bad(struct flash_dev *d, uint32_t p)
{
	return fw_hit() ? -EIO : flash_is_bad(FW_IN(d), p);
}
static int fw_mark_bad(struct flash_dev *d, uint32_t p)
{
	return fw_hit() ? -EIO : flash_mark_bad(FW_IN(d), p);
}
static int fw_sync(struct flash_dev *d)
{
	return flash_sync(FW_IN(d));
}
static void fw_close(struct flash_dev *d)
{
	flash_close(FW_IN(d));
	free(d);
}
static const char *fw_errmsg(struct flash_dev *d)
{
	return flash_errmsg(FW_IN(d));
}
static const struct flash_ops fw_ops_tab = {fw_read, fw_write, fw_erase, fw_is_bad, fw_mark_bad, fw_sync, fw_close,
					    fw_errmsg};

static struct flash_dev *fw_wrap(struct flash_dev *in)
{
	struct fwrap *w = af_test_malloc(sizeof(*w));
	assert_non_null(w);
	w->dev = *in;
	w->dev.ops = &fw_ops_tab;
	w->in = in;
	return &w->dev;
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

static int tt_copy(const char *from, const char *to)
{
	FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
	int err = a && b ? 0 : -1;
	static char buf[65536];
	size_t n;
	while (!err && (n = fread(buf, 1, sizeof(buf), a)) > 0)
		if (fwrite(buf, 1, n, b) != n)
			err = -1;
	if (a)
		fclose(a);
	if (b && fclose(b))
		err = -1;
	return err;
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


/* ---- UBI volume operations on a simulated flash, judged by a model ----
 * The workload (attach with autoformat, create, LEB write/change/unmap,
 * static-volume update and check, resize both ways, rename, remove,
 * background work, detach) is run with one allocation failing. The first
 * error must be -ENOMEM; then the device is detached and attached again
 * with nothing failing, and what it holds must be the model's state before
 * the failed operation or after it (UBI's operations are all-or-nothing;
 * an interrupted volume update may also leave that volume marked). */
enum { U_PEB = 131072, U_NPEB = 40, U_PAGE = 2048, U_LEB = U_PEB - 2 * U_PAGE };

struct mvol {
	int exists, is_static, upd;
	char name[32];
	uint32_t reserved;
	int len[16];     /* dynamic: bytes written in each LEB (-1 unmapped) */
	uint8_t pat[16]; /* dynamic: fill byte of each LEB */
	uint64_t data;   /* static: data size, every byte pattern sdata_pat */
	uint8_t spat;
};
struct model {
	struct mvol v[2];
};

static void state_add_leb(struct out *o, const uint8_t *b, size_t n)
{
	struct util_md5 m;
	char hex[33];
	util_md5_init(&m);
	util_md5_update(&m, b, n);
	util_md5_hex(&m, hex);
	out_add(o, " %s", hex);
}

/* the model's view, in the format of dev_state */
static void model_state(const struct model *m, struct out *o)
{
	static uint8_t b[U_LEB];
	o->len = 0;
	out_add(o, "%s", "");
	for (int i = 0; i < 2; i++) {
		const struct mvol *v = &m->v[i];
		if (!v->exists)
			continue;
		out_add(o, "%d %s %s %u", i, v->name, v->is_static ? "static" : "dynamic", v->reserved);
		if (!v->is_static) {
			for (uint32_t l = 0; l < v->reserved; l++) {
				if (l >= 16 || v->len[l] < 0) {
					out_add(o, " -");
					continue;
				}
				memset(b, 0xFF, sizeof(b));
				memset(b, v->pat[l], (size_t)v->len[l]);
				state_add_leb(o, b, sizeof(b));
			}
		} else {
			out_add(o, " %llu", (unsigned long long)v->data);
			for (uint64_t off = 0; off < v->data; off += U_LEB) {
				size_t n = v->data - off < U_LEB ? (size_t)(v->data - off) : U_LEB;
				memset(b, v->spat, n);
				state_add_leb(o, b, n);
			}
		}
		out_add(o, "\n");
	}
}

/* what the device shows (nothing failing) */
static void dev_state(struct ubi_device *ubi, struct out *o, int *marked)
{
	static uint8_t b[U_LEB];
	uint32_t ids[8];
	o->len = 0;
	*marked = 0;
	out_add(o, "%s", "");
	int n = ubi_vol_list(ubi, ids, 8);
	assert_true(n >= 0 && n <= 8);
	for (int i = 0; i < n; i++) {
		struct ubi_vol_info vi;
		assert_int_equal(ubi_vol_info(ubi, ids[i], &vi), 0);
		if (vi.upd_marker) {
			*marked = 1;
			out_add(o, "%u %s marked\n", ids[i], vi.name);
			continue;
		}
		int st = vi.vol_type == UBI_VID_STATIC;
		out_add(o, "%u %s %s %u", ids[i], vi.name, st ? "static" : "dynamic", vi.reserved_pebs);
		if (!st) {
			for (uint32_t l = 0; l < vi.reserved_pebs; l++) {
				if (ubi_leb_is_mapped(ubi, ids[i], l) != 1) {
					out_add(o, " -");
					continue;
				}
				assert_int_equal(ubi_leb_read(ubi, ids[i], l, 0, b, U_LEB), 0);
				state_add_leb(o, b, U_LEB);
			}
		} else {
			out_add(o, " %llu", (unsigned long long)vi.used_bytes);
			for (uint32_t l = 0; l < vi.used_ebs; l++) {
				size_t len = l + 1 == vi.used_ebs ? vi.last_eb_bytes : U_LEB;
				assert_int_equal(ubi_leb_read(ubi, ids[i], l, 0, b, len), 0);
				state_add_leb(o, b, len);
			}
		}
		out_add(o, "\n");
	}
}

#define NSTEP 16
struct ubi_run {
	int err, step; /* first error and the step that returned it */
	int upd_step;  /* the step of the static-volume update */
	uint64_t wl_moves;
	struct flash_dev *fl;
	struct model before; /* model before the failed step (or at the end) */
	struct model after;  /* model if that step had completed */
};

static uint8_t upat[U_LEB * 3];
static int ubi_ops_file; /* the flash: a sparse image file (1) or RAM (0) */


/* the workload; stops at the first error */
static void ubi_workload(struct ubi_run *u)
{
	struct model m;
	memset(&m, 0, sizeof(m));
	memset(u, 0, sizeof(*u));
	struct ubi_device *ubi = NULL;
	struct flash_sim_config cfg;
	flash_sim_config_default(&cfg);
	cfg.geo = (struct flash_geometry){FLASH_NAND, U_PAGE, U_PAGE, 64, U_PEB, U_NPEB};
	cfg.seed = 7;
	/* a sparse image file: the store's own allocations are in the sweep */
	cfg.path = ubi_ops_file ? WORK "/ubi-ops.flash" : NULL;
	cfg.sparse = true;
	remove(WORK "/ubi-ops.flash");
	remove(WORK "/ubi-ops.flash.sim");
	af_arm();
	int err = flash_sim_create(&cfg, &u->fl);
	if (!err && fw_on)
		u->fl = fw_wrap(u->fl);
	int step = 0;
	u->before = m;
	u->after = m;
#define STEP(expr, change)                                                                           \
	do {                                                                                         \
		struct model next_ = m;                                                              \
		{                                                                                    \
			struct model *mm = &next_;                                                   \
			(void)mm;                                                                    \
			change;                                                                      \
		}                                                                                    \
		step++;                                                                              \
		u->before = m;                                                                       \
		u->after = next_;                                                                    \
		err = (expr);                                                                        \
		if (err < 0)                                                                         \
			goto out;                                                                    \
		m = next_;                                                                           \
	} while (0)
	if (err)
		goto out;
	struct ubi_attach_opts o;
	ubi_attach_opts_default(&o);
	o.seed = 3;
	o.wl_threshold = 2; /* a few erasures bring wear-leveling moves */
	STEP(ubi_attach(u->fl, &o, &ubi), (void)0);
	struct ubi_mkvol_req ra = {0, "alpha", 6, UBI_VID_DYNAMIC, 1, 0};
	STEP(ubi_vol_create(ubi, &ra, NULL), ({
		     mm->v[0] = (struct mvol){.exists = 1, .reserved = 6};
		     strcpy(mm->v[0].name, "alpha");
		     for (int l = 0; l < 16; l++)
			     mm->v[0].len[l] = -1;
	     }));
	struct ubi_mkvol_req rb = {1, "beta", 3, UBI_VID_STATIC, 1, 0};
	STEP(ubi_vol_create(ubi, &rb, NULL), ({
		     mm->v[1] = (struct mvol){.exists = 1, .is_static = 1, .reserved = 3};
		     strcpy(mm->v[1].name, "beta");
	     }));
	memset(upat, 0x11, U_LEB);
	STEP(ubi_leb_write(ubi, 0, 0, 0, upat, U_LEB), (mm->v[0].len[0] = U_LEB, mm->v[0].pat[0] = 0x11));
	memset(upat, 0x22, 2 * U_PAGE);
	STEP(ubi_leb_write(ubi, 0, 1, 0, upat, 2 * U_PAGE), (mm->v[0].len[1] = 2 * U_PAGE, mm->v[0].pat[1] = 0x22));
	memset(upat, 0x33, U_LEB / 2);
	STEP(ubi_leb_change(ubi, 0, 0, upat, U_LEB / 2), (mm->v[0].len[0] = U_LEB / 2, mm->v[0].pat[0] = 0x33));
	for (int k = 0; k < 4; k++) {
		STEP(ubi_leb_change(ubi, 0, 0, upat, U_LEB / 2), (void)0);
		STEP(ubi_flush_background(ubi), (void)0);
	}
	/* a correctable flip in the first data page of every PEB: reading
	 * alpha's LEB 1 makes UBI scrub (move) its PEB */
	for (uint32_t p = 0; p < U_NPEB; p++)
		flash_sim_inject_bitflip(u->fl, p, 2, false, false);
	static uint8_t rbuf[U_PAGE];
	STEP(ubi_leb_read(ubi, 0, 1, 0, rbuf, U_PAGE), (void)0);
	STEP(ubi_flush_background(ubi), (void)0);
	memset(upat, 0x44, sizeof(upat));
	u->upd_step = step + 1;
	STEP(ubi_vol_update(ubi, 1, upat, U_LEB * 2 + U_LEB / 2),
	     (mm->v[1].data = U_LEB * 2 + U_LEB / 2, mm->v[1].spat = 0x44));
	STEP(ubi_vol_check(ubi, 1), (void)0);
	STEP(ubi_vol_resize(ubi, 0, 10), (mm->v[0].reserved = 10));
	STEP(ubi_vol_resize(ubi, 0, 3), (mm->v[0].reserved = 3));
	struct ubi_rename_req rr = {0, "gamma"};
	STEP(ubi_vol_rename(ubi, &rr, 1), strcpy(mm->v[0].name, "gamma"));
	STEP(ubi_leb_unmap(ubi, 0, 1), (mm->v[0].len[1] = -1));
	STEP(ubi_leb_map(ubi, 0, 2), (mm->v[0].len[2] = 0, mm->v[0].pat[2] = 0xFF));
	STEP(ubi_vol_remove(ubi, 1), (mm->v[1].exists = 0));
	STEP(ubi_flush_background(ubi), (void)0);
	STEP(ubi_sync(ubi), (void)0);
#undef STEP
	u->before = m;
out:
	if (err < 0) {
		u->err = err;
		u->step = step;
	}
	if (ubi) {
		struct ubi_stats st;
		ubi_get_stats(ubi, &st);
		u->wl_moves = st.wl_moves + st.scrubs;
		ubi_detach(ubi);
	}
	af_disarm();
}

/* after a run: attach again with nothing failing; the state must be the
 * model's before or after the failed step */
static void ubi_judge(struct ubi_run *u, long at)
{
	static struct out got, want_b, want_a;
	if (!u->fl)
		return; /* the flash itself could not be made */
	struct ubi_device *ubi;
	char e[512];
	int err = ubi_attach_msg(u->fl, NULL, &ubi, e, sizeof(e));
	if (err)
		fail_msg("allocation %ld failed at step %d (%d): the flash no longer attaches: %d %s", at, u->step,
			 u->err, err, e);
	int marked;
	dev_state(ubi, &got, &marked);
	ubi_detach(ubi);
	flash_close(u->fl);
	model_state(&u->before, &want_b);
	model_state(&u->after, &want_a);
	if (!strcmp(got.s, want_b.s) || !strcmp(got.s, want_a.s))
		return;
	if (marked && u->step == u->upd_step) /* the update itself was cut: the volume says so */
		return;
	fail_msg("allocation %ld failed at step %d (%d): the device holds\n%swhile the model has before\n%sor after\n%s",
		 at, u->step, u->err, got.s, want_b.s, want_a.s);
}

static void ubi_ops_sweep(void)
{
	struct ubi_run u;
	af_reset(0);
	af_record(1);
	ubi_workload(&u);
	af_record(0);
	if (u.err)
		fail_msg("clean run: step %d returned %d", u.step, u.err);
	fprintf(stderr, "clean run: %llu wear-leveling and scrub moves\n", (unsigned long long)u.wl_moves);
	assert_true(u.wl_moves > 0);
	ubi_judge(&u, 0);
	static struct af_site sites[AF_MAX_SITES];
	size_t n = af_sites(sites, AF_MAX_SITES);
	long total = af_count();
	int runs = 0, nomem = 0, absorbed = 0;
	for (size_t i = 0; i < n; i++) {
		long at[2] = {sites[i].first, sites[i].last};
		for (int j = 0; j < (at[1] != at[0] ? 2 : 1); j++) {
			af_reset(at[j]);
			ubi_workload(&u);
			if (!af_failed())
				fail_msg("allocation %ld was never reached", at[j]);
			if (u.err && u.err != -ENOMEM)
				fail_msg("allocation %ld (call site %#lx) failed: step %d returned %d, expected -ENOMEM",
					 at[j], (unsigned long)af_failed_ra(), u.step, u.err);
			u.err ? nomem++ : absorbed++;
			ubi_judge(&u, at[j]);
			runs++;
		}
	}
	fprintf(stderr, "ubi volume ops (%s): %ld allocations from %zu call sites; %d runs: %d ended with -ENOMEM, %d absorbed\n",
		ubi_ops_file ? "image file" : "RAM", total, n, runs, nomem, absorbed);
	assert_true(nomem > 0);
}


static void t_ubi_volume_ops(void **s)
{
	(void)s;
	mkdir(WORK, 0755);
	ubi_ops_file = 0;
	ubi_ops_sweep();
	ubi_ops_file = 1;
	ubi_ops_sweep();
	remove(WORK "/ubi-ops.flash");
	remove(WORK "/ubi-ops.flash.sim");
}

/* ---- file-system changes through the fs API, judged by a model ----
 * A read-write mount of a mkfs.ubifs image (bare image file), then changes
 * each followed by ubikit_sync (a commit), so that each completed change is
 * on the flash. With one allocation failing, the first error must be
 * -ENOMEM; after unmounting (whatever it answers) and mounting again with
 * nothing failing, the tree must be the model's before the failed change or
 * after it (each change is one journal transaction). */
#define FS_BASE WORK "/rw-base.img"
#define FS_IMG WORK "/rw.img"

struct mino {
	char type; /* f d l */
	uint32_t mode;
	uint8_t data[6000];
	size_t size;
	char target[32];
	char xattr[40]; /* "name=value" or "" */
};
struct mdent {
	char path[32];
	int ino; /* index into ino[] */
};
struct fsmodel {
	struct mino ino[12];
	struct mdent d[12];
	int nino, nd;
};

static int fm_find(const struct fsmodel *m, const char *path)
{
	for (int i = 0; i < m->nd; i++)
		if (!strcmp(m->d[i].path, path))
			return i;
	return -1;
}

static int fm_new(struct fsmodel *m, const char *path, char type, uint32_t mode)
{
	int i = m->nino++;
	memset(&m->ino[i], 0, sizeof(m->ino[i]));
	m->ino[i].type = type;
	m->ino[i].mode = mode;
	snprintf(m->d[m->nd].path, sizeof(m->d[0].path), "%s", path);
	m->d[m->nd++].ino = i;
	return i;
}

static void fm_del(struct fsmodel *m, const char *path)
{
	int i = fm_find(m, path);
	assert_true(i >= 0);
	m->d[i] = m->d[--m->nd];
}

static int dcmp(const void *a, const void *b)
{
	return strcmp(((const struct mdent *)a)->path, ((const struct mdent *)b)->path);
}

static void fm_line(struct out *o, const char *path, char type, uint32_t mode, unsigned nlink, const uint8_t *data,
		    size_t size, const char *target, const char *xattr)
{
	char what[40];
	if (type == 'f') {
		struct util_md5 m;
		util_md5_init(&m);
		util_md5_update(&m, data, size);
		util_md5_hex(&m, what);
	} else {
		snprintf(what, sizeof(what), "%s", type == 'l' ? target : "-");
	}
	out_add(o, "%s %c %o %u %zu %s %s\n", path, type, mode & 07777, nlink, type == 'd' ? (size_t)0 : size, what,
		*xattr ? xattr : "-");
}

static void fm_dump(const struct fsmodel *m0, struct out *o)
{
	struct fsmodel m = *m0;
	o->len = 0;
	out_add(o, "%s", "");
	qsort(m.d, (size_t)m.nd, sizeof(m.d[0]), dcmp);
	for (int i = 0; i < m.nd; i++) {
		const struct mino *in = &m.ino[m.d[i].ino];
		unsigned nl = 0;
		for (int k = 0; k < m.nd; k++)
			nl += m.d[k].ino == m.d[i].ino;
		fm_line(o, m.d[i].path, in->type, in->mode, in->type == 'd' ? 0 : nl, in->data, in->size, in->target,
			in->xattr);
	}
}

/* the device's tree in fm_dump's format (nothing failing) */
static void fs_walk(struct ubikit_fs *fs, uint64_t dir, const char *path, struct paths *ps)
{
	uint64_t cookie = 0;
	struct ubikit_dirent e;
	int rc;
	while ((rc = ubikit_readdir_ino(fs, dir, cookie, &e)) == 1) {
		cookie = e.cookie;
		char p[300];
		if (snprintf(p, sizeof(p), "%s/%s", path, e.name) >= (int)sizeof(p))
			fail_msg("path too long under %s", path);
		paths_add(ps, p);
		if (e.type == 4)
			fs_walk(fs, e.ino, p, ps);
	}
	assert_int_equal(rc, 0);
}

static void fs_dump(struct ubikit_fs *fs, struct out *o)
{
	struct paths ps = {0};
	fs_walk(fs, UBIKIT_ROOT_INO, "", &ps);
	if (ps.n)
		qsort(ps.v, ps.n, sizeof(char *), scmp);
	o->len = 0;
	out_add(o, "%s", "");
	static uint8_t data[65536];
	for (size_t i = 0; i < ps.n; i++) {
		struct ubikit_stat st;
		assert_int_equal(ubikit_lstat(fs, ps.v[i], &st), 0);
		char type = S_ISREG(st.mode) ? 'f' : S_ISDIR(st.mode) ? 'd' : S_ISLNK(st.mode) ? 'l' : '?';
		char target[64] = "", xattr[80] = "";
		size_t size = (size_t)st.size;
		if (type == 'f') {
			assert_true(size <= sizeof(data));
			assert_int_equal(ubikit_pread_ino(fs, st.ino, data, size, 0), (ssize_t)size);
		} else if (type == 'l') {
			ssize_t n = ubikit_readlink(fs, ps.v[i], target, sizeof(target) - 1);
			assert_true(n >= 0);
			target[n] = 0;
		}
		char names[256];
		ssize_t n = ubikit_listxattr_ino(fs, st.ino, names, sizeof(names));
		assert_true(n >= 0);
		if (n > 0) {
			char v[32];
			ssize_t vl = ubikit_getxattr_ino(fs, st.ino, names, v, sizeof(v) - 1);
			assert_true(vl >= 0);
			v[vl] = 0;
			if (snprintf(xattr, sizeof(xattr), "%s=%s", names, v) >= (int)sizeof(xattr))
				fail_msg("xattr %s of %s: longer than the model's", names, ps.v[i]);
		}
		fm_line(o, ps.v[i], type, st.mode, type == 'd' ? 0 : st.nlink, data, size, target, xattr);
	}
	paths_free(&ps);
}

struct fs_run {
	int err, step;
	const char *what;
	struct fsmodel before, after;
};

static ssize_t put_file(struct ubikit_fs *fs, const char *path, int flags, const uint8_t *b, size_t n, uint64_t off)
{
	struct ubikit_file *f;
	int err = ubikit_open(fs, path, flags, 0644, &f);
	if (err)
		return err;
	ssize_t w = ubikit_pwrite(f, b, n, off);
	int c = ubikit_close(f);
	return w < 0 ? w : c < 0 ? c : w == (ssize_t)n ? 0 : -EIO;
}

/* the volume under the read-write mount: fails its N-th change (write,
 * atomic change, unmap, map) with -EIO, changing nothing */
struct wvol {
	struct ubi_vol_io in;
	long ops, fail_at;
	long reads, read_fail_at; /* t_mkfs_errors: the N-th read fails (-EBADMSG) */
};
static int wv_fail(struct wvol *w)
{
	return ++w->ops == w->fail_at ? -EIO : 0;
}
static int wv_write(void *c, uint32_t l, uint32_t o, const void *b, size_t n)
{
	struct wvol *w = c;
	return wv_fail(w) ? -EIO : w->in.write(w->in.ctx, l, o, b, n);
}
static int wv_change(void *c, uint32_t l, const void *b, size_t n)
{
	struct wvol *w = c;
	return wv_fail(w) ? -EIO : w->in.change(w->in.ctx, l, b, n);
}
static int wv_unmap(void *c, uint32_t l)
{
	struct wvol *w = c;
	return wv_fail(w) ? -EIO : w->in.unmap(w->in.ctx, l);
}
static int wv_map(void *c, uint32_t l)
{
	struct wvol *w = c;
	return wv_fail(w) ? -EIO : w->in.map(w->in.ctx, l);
}
static int wv_read(void *c, uint32_t l, uint32_t o, void *b, size_t n)
{
	struct wvol *w = c;
	if (++w->reads == w->read_fail_at)
		return -EBADMSG;
	return w->in.read(w->in.ctx, l, o, b, n);
}
static int wv_is_mapped(void *c, uint32_t l)
{
	struct wvol *w = c;
	return w->in.is_mapped(w->in.ctx, l);
}
static int wv_sync(void *c)
{
	struct wvol *w = c;
	return w->in.sync ? w->in.sync(w->in.ctx) : 0;
}

static long fs_workload_w(struct fs_run *u, long fail_write_at);
static void fs_workload(struct fs_run *u)
{
	fs_workload_w(u, 0);
}

/* returns the number of volume changes made */
static long fs_workload_w(struct fs_run *u, long fail_write_at)
{
	static struct fsmodel m, next;
	memset(&m, 0, sizeof(m));
	memset(u, 0, sizeof(*u));
	struct ubi_vol_io vol, inner;
	struct wvol wv = {.fail_at = fail_write_at};
	struct ubikit_fs *fs = NULL;
	int opened = 0, err = 0, step = 0;
	static uint8_t pat[6000];
	for (size_t i = 0; i < sizeof(pat); i++)
		pat[i] = (uint8_t)(i * 7 + 1);
	af_arm();
	struct util_err ue;
	err = ubi_flat_open_err(FS_IMG, 0, 0, &inner, &ue);
	if (err)
		goto out;
	opened = 1;
	wv.in = inner;
	vol = inner;
	vol.ctx = &wv;
	vol.read = wv_read;
	vol.write = wv_write;
	vol.change = wv_change;
	vol.unmap = wv_unmap;
	vol.map = wv_map;
	vol.is_mapped = wv_is_mapped;
	vol.sync = wv_sync;
	struct ubikit_mount_opts rw = {.flags = 0};
	err = ubikit_mount(&vol, &rw, &fs);
	if (err)
		goto out;
	u->before = m;
	u->after = m;
#define FSTEP(name, expr, change)                                                                    \
	do {                                                                                         \
		next = m;                                                                            \
		{                                                                                    \
			struct fsmodel *mm = &next;                                                  \
			change;                                                                      \
		}                                                                                    \
		step++;                                                                              \
		u->what = name;                                                                      \
		u->before = m;                                                                       \
		u->after = next;                                                                     \
		err = (int)(expr);                                                                   \
		if (!err)                                                                            \
			err = ubikit_sync(fs);                                                       \
		if (err < 0)                                                                         \
			goto out;                                                                    \
		m = next;                                                                            \
	} while (0)
	FSTEP("mkdir", ubikit_mkdir(fs, "/d", 0755), fm_new(mm, "/d", 'd', 0755));
	FSTEP("create", put_file(fs, "/d/f", O_CREAT | O_WRONLY, pat, 0, 0), fm_new(mm, "/d/f", 'f', 0644));
	FSTEP("write", put_file(fs, "/d/f", O_WRONLY, pat, 5000, 0), ({
		      struct mino *in = &mm->ino[mm->d[fm_find(mm, "/d/f")].ino];
		      memcpy(in->data, pat, 5000);
		      in->size = 5000;
	      }));
	FSTEP("create 2", put_file(fs, "/d/g", O_CREAT | O_WRONLY, pat, 0, 0), fm_new(mm, "/d/g", 'f', 0644));
	FSTEP("write 2", put_file(fs, "/d/g", O_WRONLY, pat + 9, 100, 0), ({
		      struct mino *in = &mm->ino[mm->d[fm_find(mm, "/d/g")].ino];
		      memcpy(in->data, pat + 9, 100);
		      in->size = 100;
	      }));
	FSTEP("symlink", ubikit_symlink(fs, "d/f", "/s"), ({
		      int i = fm_new(mm, "/s", 'l', 0777);
		      strcpy(mm->ino[i].target, "d/f");
		      mm->ino[i].size = 3;
	      }));
	FSTEP("link", ubikit_link(fs, "/d/f", "/h"), ({
		      mm->d[mm->nd] = (struct mdent){"/h", mm->d[fm_find(mm, "/d/f")].ino};
		      mm->nd++;
	      }));
	FSTEP("setxattr", ubikit_setxattr(fs, "/d/f", "user.a", "v1", 2, 0),
	      strcpy(mm->ino[mm->d[fm_find(mm, "/d/f")].ino].xattr, "user.a=v1"));
	FSTEP("rename", ubikit_rename(fs, "/d/g", "/d/g2", 0),
	      strcpy(mm->d[fm_find(mm, "/d/g")].path, "/d/g2"));
	FSTEP("truncate", ubikit_truncate(fs, "/d/f", 1000), (mm->ino[mm->d[fm_find(mm, "/d/f")].ino].size = 1000));
	FSTEP("pwrite past the end", put_file(fs, "/d/f", O_WRONLY, pat + 3, 10, 3000), ({
		      struct mino *in = &mm->ino[mm->d[fm_find(mm, "/d/f")].ino];
		      memset(in->data + 1000, 0, 2000);
		      memcpy(in->data + 3000, pat + 3, 10);
		      in->size = 3010;
	      }));
	FSTEP("unlink", ubikit_unlink(fs, "/h"), fm_del(mm, "/h"));
	FSTEP("chmod", ubikit_chmod(fs, "/d/f", 0600), (mm->ino[mm->d[fm_find(mm, "/d/f")].ino].mode = 0600));
	FSTEP("removexattr", ubikit_removexattr(fs, "/d/f", "user.a"),
	      (mm->ino[mm->d[fm_find(mm, "/d/f")].ino].xattr[0] = 0));
	FSTEP("mkdir 2", ubikit_mkdir(fs, "/e", 0700), fm_new(mm, "/e", 'd', 0700));
	FSTEP("rename over", ubikit_rename(fs, "/d/g2", "/e/x", 0), strcpy(mm->d[fm_find(mm, "/d/g2")].path, "/e/x"));
	FSTEP("unlink 2", ubikit_unlink(fs, "/e/x"), fm_del(mm, "/e/x"));
	FSTEP("rmdir", ubikit_rmdir(fs, "/e"), fm_del(mm, "/e"));
#undef FSTEP
	u->before = m;
	err = ubikit_unmount(fs);
	fs = NULL;
	step++;
	u->what = "unmount";
out:
	if (err < 0) {
		u->err = err;
		u->step = step;
	}
	if (fs)
		ubikit_unmount(fs);
	if (opened)
		ubi_flat_close(&inner);
	af_disarm();
	return wv.ops;
}

/* A write error on the data head after the inode reached the base head
 * (fsync flushes the base head first, as Linux's ubifs_sync_wbufs_by_inode):
 * the file has its new size, and some of the 4 KiB blocks written show
 * their previous content (zeros where there was none). Linux ends the same
 * way (its wbuf error makes it read-only; the inode is already on flash).
 * Is got one of these "after" states? */
static int lost_blocks_match(const struct fs_run *u, const char *got)
{
	static struct out alt;
	static struct fsmodel m;
	for (int i = 0; i < u->after.nino; i++) {
		const struct mino *a = &u->after.ino[i];
		const struct mino *b = i < u->before.nino ? &u->before.ino[i] : NULL;
		if (a->type != 'f' || (b && b->size == a->size && !memcmp(a->data, b->data, a->size)))
			continue;
		uint32_t nb = (uint32_t)((a->size + 4095) / 4096);
		for (uint32_t mask = 1; mask < (1u << nb); mask++) {
			m = u->after;
			struct mino *x = &m.ino[i];
			for (uint32_t k = 0; k < nb; k++) {
				if (!(mask & (1u << k)))
					continue;
				size_t lo = (size_t)k * 4096, hi = lo + 4096 < x->size ? lo + 4096 : x->size;
				for (size_t o = lo; o < hi; o++)
					x->data[o] = b && o < b->size ? b->data[o] : 0;
			}
			fm_dump(&m, &alt);
			if (!strcmp(alt.s, got))
				return 1;
		}
	}
	return 0;
}

static void fs_judge(struct fs_run *u, long at)
{
	static struct out got, wb, wa;
	struct ubi_vol_io vol;
	assert_int_equal(ubi_flat_open(FS_IMG, 0, 1, &vol), 0);
	struct ubikit_fs *fs;
	char e[512];
	struct ubikit_mount_opts mo = {.flags = UBIKIT_MOUNT_RDONLY};
	int err = ubikit_mount_ex(&vol, &mo, &fs, e, sizeof(e));
	if (err)
		fail_msg("allocation %ld failed in step %d (%s, %d): the image no longer mounts: %d %s", at, u->step,
			 u->what, u->err, err, e);
	fs_dump(fs, &got);
	ubikit_unmount(fs);
	ubi_flat_close(&vol);
	fm_dump(&u->before, &wb);
	fm_dump(&u->after, &wa);
	if (strcmp(got.s, wb.s) && strcmp(got.s, wa.s) && at < 0 && lost_blocks_match(u, got.s))
		return;
	if (strcmp(got.s, wb.s) && strcmp(got.s, wa.s))
		fail_msg("allocation %ld failed in step %d (%s, %d): the image holds\n%swhile the model has before\n%sor after\n%s",
			 at, u->step, u->what, u->err, got.s, wb.s, wa.s);
}

static void fs_fresh(void)
{
	assert_int_equal(tt_copy(FS_BASE, FS_IMG), 0);
}

static void t_fs_changes(void **s)
{
	(void)s;
	mkdir(WORK, 0755);
	assert_int_equal(system("rm -rf " WORK "/empty && mkdir -p " WORK "/empty && mkfs.ubifs -r " WORK
				"/empty -m 2048 -e 126976 -c 64 -o " FS_BASE),
			 0);
	struct fs_run u;
	fs_fresh();
	af_reset(0);
	af_record(1);
	fs_workload(&u);
	af_record(0);
	if (u.err)
		fail_msg("clean run: step %d (%s) returned %d", u.step, u.what, u.err);
	fs_judge(&u, 0);
	static struct af_site sites[AF_MAX_SITES];
	size_t n = af_sites(sites, AF_MAX_SITES);
	long total = af_count();
	int runs = 0, nomem = 0, absorbed = 0;
	for (size_t i = 0; i < n; i++) {
		long at[2] = {sites[i].first, sites[i].last};
		for (int j = 0; j < (at[1] != at[0] ? 2 : 1); j++) {
			fs_fresh();
			af_reset(at[j]);
			fs_workload(&u);
			if (!af_failed())
				fail_msg("allocation %ld was never reached", at[j]);
			/* the call that hit the failure reports -ENOMEM, also when
			 * it happened inside a commit that left the file system
			 * read-only (the kernel's ubifs_ro_mode): not the -EROFS
			 * that later calls get */
			if (u.err && u.err != -ENOMEM)
				fail_msg("allocation %ld (call site %#lx) failed: step %d (%s) returned %d, expected -ENOMEM",
					 at[j], (unsigned long)af_failed_ra(), u.step, u.what, u.err);
			u.err ? nomem++ : absorbed++;
			fs_judge(&u, at[j]);
			runs++;
		}
	}
	fprintf(stderr, "fs changes: %ld allocations from %zu call sites; %d runs: %d ended with -ENOMEM, %d absorbed\n",
		total, n, runs, nomem, absorbed);
	assert_true(nomem > 0);
	remove(FS_IMG);
	remove(FS_BASE);
}


/* ---- read errors of the volume under UBIFS, one at a time ----
 * The bare image of a kernel-written volume under a vol_io that fails the
 * N-th LEB read (-EBADMSG: uncorrectable, as UBI reports it), for chosen N
 * a clean mount and walk make. Each run must end with the kernel's manifest
 * (the read was not needed for it) or with an error from the call that
 * needed the data: -EBADMSG as read, with a message naming the LEB. Never
 * another tree, another error, a crash or a leak. The reads failed are the
 * first and the last of each distinct read path (callers' return addresses)
 * of a clean run. */
struct fvol {
	struct ubi_vol_io in;
	long reads, fail_at;
	int record;
};

/* distinct read paths (a hash of the callers' return addresses) of a
 * clean run, with their first and last read */
static struct af_site rsites[AF_MAX_SITES];
static size_t nrsites;

static int fv_read(void *c, uint32_t l, uint32_t o, void *b, size_t n)
{
	struct fvol *f = c;
	f->reads++;
	if (f->record) {
		void *bt[10];
		int nb = backtrace(bt, 10);
		uintptr_t h = 0;
		for (int i = 1; i < nb; i++)
			h = h * 1000003u ^ (uintptr_t)bt[i];
		size_t i;
		for (i = 0; i < nrsites && rsites[i].ra != h; i++)
			;
		if (i == nrsites && nrsites < AF_MAX_SITES)
			rsites[nrsites++] = (struct af_site){h, f->reads, f->reads};
		else if (i < nrsites)
			rsites[i].last = f->reads;
	}
	if (f->reads == f->fail_at)
		return -EBADMSG;
	return f->in.read(f->in.ctx, l, o, b, n);
}

static uint8_t *flat_buf;
static size_t flat_len;

static long read_fail_run(long fail_at, int record, struct run *r)
{
	struct ubikit_fs *fs = NULL;
	struct ubi_vol_io in, vol;
	memset(r, 0, sizeof(*r));
	assert_int_equal(ubi_flat_open_mem(flat_buf, flat_len, 0, 1, &in, NULL), 0);
	struct fvol fv = {in, 0, fail_at, record};
	vol = in;
	vol.ctx = &fv;
	vol.read = fv_read;
	struct ubikit_mount_opts mo = {.flags = UBIKIT_MOUNT_RDONLY};
	CALL(r, "mount", ubikit_mount_ex(&vol, &mo, &fs, r->msg, sizeof(r->msg)));
	manifest(fs, r);
	if (r->err)
		snprintf(r->msg, sizeof(r->msg), "%s", ubikit_errmsg(fs));
fail:
	if (fs)
		ubikit_unmount(fs);
	ubi_flat_close(&in);
	return fv.reads;
}

static void t_read_errors(void **s)
{
	(void)s;
	static const struct kimage k = {"nand2k-unclean", NAND2K, 0};
	char img[512], fl[512], mf[512];
	snprintf(img, sizeof(img), "%s/rd-%s.img", WORK, k.name);
	snprintf(fl, sizeof(fl), "%s/rd-%s.flat", WORK, k.name);
	snprintf(mf, sizeof(mf), "%s/kernel-images/%s.manifest", UBIKIT_TEST_DATA, k.name);
	unpack(&k, img);
	make_flat(&k, img, fl);
	remove(img);
	FILE *f = fopen(fl, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	flat_len = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	flat_buf = af_test_malloc(flat_len);
	assert_int_equal(fread(flat_buf, 1, flat_len, f), flat_len);
	fclose(f);
	char *want = slurp(mf);
	assert_non_null(want);
	struct run r;
	nrsites = 0;
	long total = read_fail_run(0, 1, &r);
	if (r.err || strcmp(r.out.s, want))
		fail_msg("clean run: %s %d %s, or another tree", r.step ? r.step : "-", r.err, r.msg);
	free(r.out.s);
	int errs = 0, same = 0, runs = 0;
	for (size_t i = 0; i < nrsites; i++) {
		long at[2] = {rsites[i].first, rsites[i].last};
		for (int j = 0; j < (at[1] != at[0] ? 2 : 1); j++) {
			read_fail_run(at[j], 0, &r);
			runs++;
			if (!r.err) {
				if (strcmp(r.out.s, want))
					fail_msg("read %ld failed: the run succeeded with another tree", at[j]);
				same++;
			} else if (r.err == -EBADMSG && strstr(r.msg, "LEB ")) {
				errs++;
				if (getenv("AF_VERBOSE"))
					fprintf(stderr, "read %ld: %s %d %s\n", at[j], r.step, r.err, r.msg);
			} else {
				fail_msg("read %ld failed: %s returned %d (%s), expected -EBADMSG and the LEB named", at[j],
					 r.step, r.err, r.msg);
			}
			free(r.out.s);
		}
	}
	fprintf(stderr, "%ld reads on %zu paths; %d runs with one failed: %d ended with an error, %d did not need it\n",
		total, nrsites, runs, errs, same);
	assert_true(errs > 0);
	free(want);
	free(flat_buf);
	remove(fl);
}

/* ---- write errors under UBIFS, every one in turn ----
 * The same changes with the N-th change of the volume failing (-EIO), for
 * every N of a clean run: the first error must be that -EIO (or -EROFS
 * from a file system that went read-only on it), and after a remount the
 * tree is the model's before or after the failed change. */
static void t_write_errors(void **s)
{
	(void)s;
	mkdir(WORK, 0755);
	assert_int_equal(system("rm -rf " WORK "/empty && mkdir -p " WORK "/empty && mkfs.ubifs -r " WORK
				"/empty -m 2048 -e 126976 -c 64 -o " FS_BASE),
			 0);
	struct fs_run u;
	fs_fresh();
	af_reset(0);
	long total = fs_workload_w(&u, 0);
	if (u.err)
		fail_msg("clean run: step %d (%s) returned %d", u.step, u.what, u.err);
	fs_judge(&u, 0);
	int errs = 0, absorbed = 0;
	for (long at = 1; at <= total; at++) {
		fs_fresh();
		fs_workload_w(&u, at);
		if (u.err && u.err != -EIO && u.err != -EROFS)
			fail_msg("volume change %ld failed: step %d (%s) returned %d, expected -EIO", at, u.step, u.what,
				 u.err);
		u.err ? errs++ : absorbed++;
		fs_judge(&u, -at);
	}
	fprintf(stderr, "fs changes: %ld volume changes, each failed once: %d runs ended with an error, %d absorbed\n",
		total, errs, absorbed);
	assert_true(errs > 0);
	remove(FS_IMG);
	remove(FS_BASE);
}

/* ---- write errors while GC makes room ----
 * A small volume (mkfs.ubifs -c 24: a main area of 16 LEBs) whose file /f
 * of 96 KiB of incompressible bytes is rewritten GC_ROUNDS times, each
 * time with a small new file that stays and synced: GC must reclaim the old
 * versions' LEBs, moving the live nodes among them. The
 * volume's N-th change fails (-EIO), for N over the clean run's changes.
 * The call that hits it must answer -EIO (or -EROFS once the file system
 * went read-only); after a remount with nothing failing, each block of /f
 * holds the previous round's bytes or this round's (nothing else). */
#define GC_BASE WORK "/gc-base.img"
#define GC_IMG WORK "/gc.img"
#define GC_ROUNDS 40
#define GC_SIZE (96 * 1024)
static uint8_t gc_buf[GC_SIZE];

static void gc_pattern(int round, uint8_t *b)
{
	uint64_t x = 0x9E3779B97F4A7C15ull * (uint64_t)(round + 1);
	for (size_t i = 0; i < GC_SIZE; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		b[i] = (uint8_t)(x >> 24);
	}
}

/* returns the volume changes made; *round: the round that failed (or
 * GC_ROUNDS + 1), *err its error */
static long gc_workload(long fail_at, int *round, int *err)
{
	assert_int_equal(tt_copy(GC_BASE, GC_IMG), 0);
	struct ubi_vol_io inner, vol;
	struct util_err ue = {0};
	assert_int_equal(ubi_flat_open_err(GC_IMG, 0, 0, &inner, &ue), 0);
	struct wvol wv = {.in = inner, .fail_at = fail_at};
	vol = inner;
	vol.ctx = &wv;
	vol.read = wv_read;
	vol.write = wv_write;
	vol.change = wv_change;
	vol.unmap = wv_unmap;
	vol.map = wv_map;
	vol.is_mapped = wv_is_mapped;
	vol.sync = wv_sync;
	struct ubikit_fs *fs = NULL;
	struct ubikit_mount_opts rw = {.flags = 0};
	*err = ubikit_mount(&vol, &rw, &fs);
	*round = 0;
	for (int r = 1; !*err && r <= GC_ROUNDS; r++) {
		*round = r;
		gc_pattern(r, gc_buf);
		ssize_t n = put_file(fs, "/f", O_CREAT | O_WRONLY, gc_buf, GC_SIZE, 0);
		/* and a small file that stays: LEBs of live and dead nodes, so
		 * that GC has nodes to move */
		char kp[16];
		snprintf(kp, sizeof(kp), "/k%d", r);
		if (n >= 0)
			n = put_file(fs, kp, O_CREAT | O_WRONLY, gc_buf + 5000, 3000, 0);
		*err = n < 0 ? (int)n : 0;
		if (!*err)
			*err = ubikit_sync(fs);
	}
	if (!*err)
		*round = GC_ROUNDS + 1;
	if (fs)
		ubikit_unmount(fs);
	ubi_flat_close(&inner);
	return wv.ops;
}

static void gc_judge(int round, long at)
{
	struct ubi_vol_io vol;
	struct util_err ue = {0};
	assert_int_equal(ubi_flat_open_err(GC_IMG, 0, 1, &vol, &ue), 0);
	struct ubikit_fs *fs = NULL;
	struct ubikit_mount_opts ro = {.flags = UBIKIT_MOUNT_RDONLY};
	char why[256] = "";
	if (ubikit_mount_ex(&vol, &ro, &fs, why, sizeof(why)))
		fail_msg("GC, change %ld failed in round %d: the volume does not mount again: %s", at, round, why);
	static uint8_t got[GC_SIZE + 1], want[GC_SIZE];
	struct ubikit_stat st;
	int e = ubikit_lstat(fs, "/f", &st);
	ssize_t n = -1;
	if (!e)
		n = ubikit_pread_ino(fs, st.ino, got, sizeof(got), 0);
	ubikit_unmount(fs);
	ubi_flat_close(&vol);
	/* each 4 KiB block is written by its own journal transaction (the
	 * kernel's writepage): an error between two leaves some blocks new and
	 * the rest as they were, and the file system read-only (Linux does the
	 * same); each block must be the previous round's or this one's */
	static uint8_t prev[GC_SIZE];
	int ok = 1;
	if (round > GC_ROUNDS) {
		gc_pattern(GC_ROUNDS, want);
		ok = !e && n == GC_SIZE && !memcmp(got, want, GC_SIZE);
	} else if (e) {
		ok = e == -ENOENT && round <= 1; /* round 0: the mount itself failed */
	} else {
		gc_pattern(round, want);
		if (round > 1)
			gc_pattern(round - 1, prev);
		else
			memset(prev, 0, sizeof(prev)); /* a new file: a hole reads as zeros */
		ok = n >= 0 && n <= GC_SIZE && (round == 1 || n == GC_SIZE);
		for (ssize_t b = 0; ok && b < n; b += 4096) {
			size_t len = (size_t)(n - b < 4096 ? n - b : 4096);
			ok = !memcmp(got + b, want + b, len) || !memcmp(got + b, prev + b, len);
		}
	}
	if (!ok)
		fail_msg("GC, change %ld failed in round %d: /f is not made of round %d's and round %d's blocks (lstat %d, "
			 "%zd bytes)",
			 at, round, round - 1, round, e, n);
}

static void t_gc_write_errors(void **s)
{
	(void)s;
	mkdir(WORK, 0755);
	assert_int_equal(system("rm -rf " WORK "/empty && mkdir -p " WORK "/empty && mkfs.ubifs -r " WORK
				"/empty -m 2048 -e 126976 -c 24 -x none -o " GC_BASE),
			 0);
	af_reset(0);
	int round, err;
	long total = gc_workload(0, &round, &err);
	if (err)
		fail_msg("clean run: round %d returned %d", round, err);
	gc_judge(GC_ROUNDS + 1, 0);
	/* the rewrites: about 40 x 96 KiB through 16 LEBs of 124 KiB */
	assert_true(total > 2 * GC_ROUNDS);
	int errs = 0, absorbed = 0;
	long stride = total / 150 + 1; /* about 150 runs: the sanitizer build stays under a minute or so */
	for (long at = 1; at <= total; at += stride) {
		gc_workload(at, &round, &err);
		if (err && err != -EIO && err != -EROFS)
			fail_msg("GC: volume change %ld failed: round %d returned %d, expected -EIO", at, round, err);
		err ? errs++ : absorbed++;
		gc_judge(round, at);
	}
	fprintf(stderr, "GC: %ld volume changes, every %ld-th failed once: %d runs ended with an error, %d absorbed\n",
		total, stride, errs, absorbed);
	assert_true(errs > 0);
	remove(GC_IMG);
	remove(GC_BASE);
}

/* ---- mkfs and the format of an empty volume, failing ----
 * fs_mkfs of a small host tree the test writes (its model: what was
 * written), and the kernel-style format a read-write mount of an empty
 * volume makes, on a RAM volume of 64 LEBs whose N-th change fails (every N
 * of a clean run) or with one allocation failing (the first and the last
 * of each call site). The call must answer -EIO / -ENOMEM, or succeed: then
 * a read-only mount shows the host tree (the format: an empty root). */
#define MK_LEB 126976
#define MK_LEBS 64
#define MK_SRC WORK "/mksrc"
static uint8_t *mk_img;

static void mk_model(struct fsmodel *m)
{
	memset(m, 0, sizeof(*m));
	int i = fm_new(m, "/a", 'f', 0644);
	memcpy(m->ino[i].data, "hello\n", 6);
	m->ino[i].size = 6;
	fm_new(m, "/d", 'd', 0755);
	i = fm_new(m, "/d/big", 'f', 0600);
	for (size_t k = 0; k < 6000; k++)
		m->ino[i].data[k] = (uint8_t)(k % 251 == 0 ? k / 251 : k * 13); /* compressible, not trivially */
	m->ino[i].size = 6000;
	fm_new(m, "/e", 'd', 0700);
	i = fm_new(m, "/l", 'l', 0777);
	snprintf(m->ino[i].target, sizeof(m->ino[i].target), "d/big");
	m->ino[i].size = 5; /* a symlink's size: its target's length */
}

static void mk_host_tree(const struct fsmodel *m)
{
	assert_int_equal(system("rm -rf " MK_SRC " && mkdir -p " MK_SRC), 0);
	for (int k = 0; k < m->nd; k++) {
		const struct mino *in = &m->ino[m->d[k].ino];
		char p[300];
		snprintf(p, sizeof(p), "%s%s", MK_SRC, m->d[k].path);
		if (in->type == 'd') {
			assert_int_equal(mkdir(p, 0700), 0);
		} else if (in->type == 'l') {
			assert_int_equal(symlink(in->target, p), 0);
			continue;
		} else {
			int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
			assert_true(fd >= 0);
			assert_int_equal(write(fd, in->data, in->size), (ssize_t)in->size);
			close(fd);
		}
		assert_int_equal(chmod(p, in->mode), 0);
	}
}

static void mk_judge(struct ubi_vol_io *vol, int format, const struct fsmodel *m, const char *what, long at);

/* 0: fs_mkfs of the host tree; 1: the format of the empty volume; a run
 * that succeeds is judged (at: the failure's number, for the message) */
static long mk_read_fail_at, mk_reads;

static int mk_run(int format, long fail_write_at, long *changes, const struct fsmodel *m, long at)
{
	memset(mk_img, 0xFF, (size_t)MK_LEB * MK_LEBS);
	struct ubi_vol_io inner, vol;
	struct util_err ue = {0};
	assert_int_equal(ubi_flat_open_mem(mk_img, (size_t)MK_LEB * MK_LEBS, MK_LEB, 0, &inner, &ue), 0);
	inner.min_io_size = 2048;
	inner.max_write_size = 2048;
	struct wvol wv = {.in = inner, .fail_at = fail_write_at, .read_fail_at = mk_read_fail_at};
	vol = inner;
	vol.ctx = &wv;
	vol.read = wv_read;
	vol.write = wv_write;
	vol.change = wv_change;
	vol.unmap = wv_unmap;
	vol.map = wv_map;
	vol.is_mapped = NULL; /* a flat image says every LEB is mapped: emptiness is read */
	vol.sync = wv_sync;
	int err;
	af_arm();
	if (format) {
		struct ubikit_fs *fs = NULL;
		struct ubikit_mount_opts rw = {.flags = 0};
		char why[256] = "";
		err = ubikit_mount_ex(&vol, &rw, &fs, why, sizeof(why));
		if (!err)
			err = ubikit_unmount(fs);
		else if (!fail_write_at && !af_failed() && !mk_read_fail_at)
			fail_msg("format: clean run: %d %s", err, why);
	} else {
		struct fs_mkfs_opts o;
		memset(&o, 0, sizeof(o));
		o.root = MK_SRC;
		o.bp.min_io_size = 2048;
		o.bp.leb_size = MK_LEB;
		o.bp.max_leb_cnt = MK_LEBS;
		o.bp.default_compr = 1; /* LZO */
		o.no_xattrs = 1;
		o.threads = 1;
		struct fs_mkfs_stats st;
		err = fs_mkfs(&vol, &o, &st, &ue);
		if (err && !ue.msg[0])
			fail_msg("mkfs failed with %d and no message (allocation call site %#lx)", err, (unsigned long)af_failed_ra());
	}
	af_disarm();
	if (changes)
		*changes = wv.ops;
	mk_reads = wv.reads;
	if (!err)
		mk_judge(&inner, format, m, format ? "format" : "mkfs", at);
	ubi_flat_close(&inner);
	return err;
}

/* a run that succeeded: a read-only mount of the volume (still open)
 * shows the host tree, or an empty root after the format */
static void mk_judge(struct ubi_vol_io *vol, int format, const struct fsmodel *m, const char *what, long at)
{
	struct out want = {0}, got = {0};
	static struct fsmodel empty;
	fm_dump(format ? &empty : m, &want);
	struct ubikit_fs *fs = NULL;
	struct ubikit_mount_opts ro = {.flags = UBIKIT_MOUNT_RDONLY};
	char why[256] = "";
	int err = ubikit_mount_ex(vol, &ro, &fs, why, sizeof(why));
	if (err)
		fail_msg("%s %ld: succeeded, but the result does not mount: %d %s", what, at, err, why);
	fs_dump(fs, &got);
	ubikit_unmount(fs);
	if (strcmp(want.s, got.s))
		fail_msg("%s %ld: succeeded, the volume holds\n%swhile the host tree is\n%s", what, at, got.s, want.s);
	free(want.s);
	free(got.s);
}

static void t_mkfs_errors(void **s)
{
	(void)s;
	mkdir(WORK, 0755);
	struct fsmodel m;
	mk_model(&m);
	mk_host_tree(&m);
	mk_img = af_test_malloc((size_t)MK_LEB * MK_LEBS);
	assert_non_null(mk_img);
	for (int format = 0; format < 2; format++) {
		const char *what = format ? "format" : "mkfs";
		/* clean run: sites and volume changes (after a first one: what the
		 * libraries set up once per process, e.g. compressor contexts, is
		 * then in place as in every later run) */
		af_reset(0);
		assert_int_equal(mk_run(format, 0, NULL, &m, 0), 0);
		af_reset(0);
		af_record(1);
		long changes = 0;
		int err = mk_run(format, 0, &changes, &m, 0);
		af_record(0);
		if (err)
			fail_msg("%s: clean run failed: %d", what, err);
		static struct af_site sites[AF_MAX_SITES];
		size_t n = af_sites(sites, AF_MAX_SITES);
		int nomem = 0, eio = 0, absorbed = 0;
		for (size_t i = 0; i < n; i++) {
			long at[2] = {sites[i].first, sites[i].last};
			for (int j = 0; j < (at[1] != at[0] ? 2 : 1); j++) {
				af_reset(at[j]);
				err = mk_run(format, 0, NULL, &m, at[j]);
				if (!af_failed())
					fail_msg("%s: allocation %ld was never reached", what, at[j]);
				if (err && err != -ENOMEM)
					fail_msg("%s: allocation %ld (call site %#lx) failed: returned %d, expected -ENOMEM", what,
						 at[j], (unsigned long)af_failed_ra(), err);
				err ? nomem++ : absorbed++;
			}
		}
		af_reset(0);
		for (long at = 1; at <= changes; at++) {
			err = mk_run(format, at, NULL, &m, -at);
			if (err && err != -EIO)
				fail_msg("%s: volume change %ld failed: returned %d, expected -EIO", what, at, err);
			err ? eio++ : absorbed++;
		}
		/* the format reads the volume first (is it empty?), then mounts
		 * what it wrote: each read failing (-EBADMSG) is that error */
		int ebadmsg = 0;
		if (format) {
			af_reset(0);
			mk_run(format, 0, NULL, &m, 0);
			long reads = mk_reads;
			for (long at = 1; at <= reads; at++) {
				mk_read_fail_at = at;
				err = mk_run(format, 0, NULL, &m, 1000000 + at);
				mk_read_fail_at = 0;
				if (err && err != -EBADMSG)
					fail_msg("format: read %ld of %ld failed: returned %d, expected -EBADMSG", at, reads, err);
				err ? ebadmsg++ : absorbed++;
			}
		}
		fprintf(stderr, "%s: %zu allocation sites, %ld volume changes: %d runs -ENOMEM, %d -EIO, %d -EBADMSG, %d absorbed\n",
			what, n, changes, nomem, eio, ebadmsg, absorbed);
		assert_true(nomem > 0 && eio > 0);
	}
	free(mk_img);
	mk_img = NULL;
	assert_int_equal(system("rm -rf " MK_SRC), 0);
}

/* ---- flash errors under UBI, one per distinct path ----
 * The UBI volume workload on a RAM flash whose N-th operation fails with
 * -EIO. UBI may recover (a failed write moved elsewhere, a failed erase
 * tortured / marked bad); otherwise the first error must be that -EIO, or
 * -EROFS once UBI went read-only. After a re-attach (nothing failing) the
 * volumes hold the model's state before or after the failed operation. */
static void t_flash_errors(void **s)
{
	(void)s;
	mkdir(WORK, 0755);
	ubi_ops_file = 0;
	struct ubi_run u;
	fw_on = 1;
	fw_ops = 0;
	fw_fail_at = 0;
	fw_record = 1;
	nfsites = 0;
	af_reset(0);
	ubi_workload(&u);
	fw_record = 0;
	if (u.err)
		fail_msg("clean run: step %d returned %d", u.step, u.err);
	long total = fw_ops;
	ubi_judge(&u, 0);
	int runs = 0, errs = 0, absorbed = 0;
	for (size_t i = 0; i < nfsites; i++) {
		long at[2] = {fsites[i].first, fsites[i].last};
		for (int j = 0; j < (at[1] != at[0] ? 2 : 1); j++) {
			fw_ops = 0;
			fw_fail_at = at[j];
			fw_failed = 0;
			af_reset(0);
			ubi_workload(&u);
			fw_fail_at = 0;
			if (!fw_failed)
				fail_msg("flash operation %ld was never reached", at[j]);
			if (u.err && u.err != -EIO && u.err != -EROFS)
				fail_msg("flash operation %ld failed: step %d returned %d, expected -EIO or -EROFS", at[j],
					 u.step, u.err);
			u.err ? errs++ : absorbed++;
			ubi_judge(&u, -at[j]);
			runs++;
		}
	}
	fw_on = 0;
	fprintf(stderr, "ubi volume ops: %ld flash operations on %zu paths; %d runs with one failed: %d ended with an error, %d recovered\n",
		total, nfsites, runs, errs, absorbed);
	assert_true(errs > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_kernel_nand2k_unclean),
		cmocka_unit_test(t_kernel_nor_zlib),
		cmocka_unit_test(t_ubi_volume_ops),
		cmocka_unit_test(t_fs_changes),
		cmocka_unit_test(t_read_errors),
		cmocka_unit_test(t_write_errors),
		cmocka_unit_test(t_flash_errors),
		cmocka_unit_test(t_gc_write_errors),
		cmocka_unit_test(t_mkfs_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
