/* test_flash_file — the simulator's file storage: nanddump layouts (data
 * only, data+OOB per page) checked byte by byte in the file, the Linux
 * bad-block marker in OOB, the "<image>.sim" sidecar, read-only opens that
 * never touch the file, short images padded with 0xFF, sparse images. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "flash/flash_sim.h"
#include "util/util_prng.h"

#define PAGE 2048u
#define OOB 64u
#define PPB 8u
#define PEB (PAGE * PPB)
#define NPEB 8u

struct fx {
	char dir[256];
	char img[300];
	char side[310];
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	snprintf(f->dir, sizeof(f->dir), "%s/scratch/test_flash_file.XXXXXX", UBIKIT_BUILD_DIR);
	char base[300];
	snprintf(base, sizeof(base), "%s/scratch", UBIKIT_BUILD_DIR);
	mkdir(base, 0755);
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->img, sizeof(f->img), "%s/img", f->dir);
	snprintf(f->side, sizeof(f->side), "%s.sim", f->img);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	unlink(f->img);
	unlink(f->side);
	rmdir(f->dir);
	free(f);
	return 0;
}

static void fill(uint8_t *b, size_t n, uint64_t seed)
{
	struct util_prng r;
	util_prng_seed(&r, seed);
	util_prng_fill(&r, b, n);
}

static struct flash_sim_config small_cfg(const char *path, bool oob)
{
	struct flash_sim_config c;
	flash_sim_config_default(&c);
	c.geo.peb_size = PEB;
	c.geo.peb_count = NPEB;
	c.path = path;
	c.file_has_oob = oob;
	return c;
}

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "rb");
	assert_non_null(fp);
	fseek(fp, 0, SEEK_END);
	long n = ftell(fp);
	fseek(fp, 0, SEEK_SET);
	uint8_t *b = malloc(n ? (size_t)n : 1);
	assert_int_equal(fread(b, 1, (size_t)n, fp), (size_t)n);
	fclose(fp);
	*len = (size_t)n;
	return b;
}

static void test_layout_data_only(void **state)
{
	struct fx *f = *state;
	struct flash_sim_config c = small_cfg(f->img, false);
	struct flash_dev *d;
	assert_int_equal(flash_sim_create(&c, &d), 0);
	uint8_t w[2 * PAGE];
	fill(w, sizeof(w), 1);
	assert_int_equal(flash_write(d, 2, 3 * PAGE, w, sizeof(w)), 0);
	flash_close(d);
	size_t n;
	uint8_t *b = slurp(f->img, &n);
	assert_int_equal(n, (size_t)NPEB * PEB);
	size_t at = 2 * PEB + 3 * PAGE;
	assert_memory_equal(b + at, w, sizeof(w));
	for (size_t i = 0; i < n; i++)
		if (i < at || i >= at + sizeof(w))
			assert_int_equal(b[i], 0xFF);
	free(b);
}

static void test_layout_with_oob_and_bbm(void **state)
{
	struct fx *f = *state;
	struct flash_sim_config c = small_cfg(f->img, true);
	struct flash_dev *d;
	assert_int_equal(flash_sim_create(&c, &d), 0);
	uint8_t w[2 * PAGE];
	fill(w, sizeof(w), 2);
	assert_int_equal(flash_write(d, 1, 6 * PAGE, w, sizeof(w)), 0);
	assert_int_equal(flash_mark_bad(d, 5), 0);
	assert_int_equal(flash_sim_set_factory_bad(d, 6), 0);
	flash_close(d);
	size_t n;
	uint8_t *b = slurp(f->img, &n);
	const size_t stride = PAGE + OOB, pebst = stride * PPB;
	assert_int_equal(n, NPEB * pebst);
	/* nanddump -o layout: page data, then its OOB. */
	assert_memory_equal(b + 1 * pebst + 6 * stride, w, PAGE);
	assert_memory_equal(b + 1 * pebst + 7 * stride, w + PAGE, PAGE);
	for (size_t i = 0; i < OOB; i++)
		assert_int_equal(b[1 * pebst + 6 * stride + PAGE + i], 0xFF);
	/* Linux bad-block marker: first OOB byte of the first page. */
	assert_int_equal(b[5 * pebst + PAGE], 0x00);
	assert_int_equal(b[6 * pebst + PAGE], 0x00);
	assert_int_equal(b[4 * pebst + PAGE], 0xFF);
	free(b);

	/* Without the sidecar (a user's dump), bad blocks come from the OOB. */
	assert_int_equal(unlink(f->side), 0);
	struct flash_geometry g = c.geo;
	assert_int_equal(flash_sim_open(f->img, &g, true, true, &d), 0);
	assert_int_equal(flash_is_bad(d, 5), 1);
	assert_int_equal(flash_is_bad(d, 6), 1);
	assert_int_equal(flash_is_bad(d, 4), 0);
	uint8_t r[2 * PAGE];
	assert_int_equal(flash_read(d, 1, 6 * PAGE, r, sizeof(r)), 0);
	assert_memory_equal(r, w, sizeof(w));
	flash_close(d);
	/* The read-only open wrote no sidecar. */
	assert_int_equal(access(f->side, F_OK), -1);
}

static void test_sidecar_persistence(void **state)
{
	struct fx *f = *state;
	struct flash_sim_config c = small_cfg(f->img, false);
	c.endurance = 1234;
	c.nop = 2;
	struct flash_dev *d;
	assert_int_equal(flash_sim_create(&c, &d), 0);
	uint8_t w[PAGE];
	fill(w, sizeof(w), 3);
	for (int i = 0; i < 3; i++)
		assert_int_equal(flash_erase(d, 4), 0);
	assert_int_equal(flash_sim_set_wear(d, 7, 99), 0);
	assert_int_equal(flash_mark_bad(d, 2), 0);
	assert_int_equal(flash_sim_set_factory_bad(d, 3), 0);
	assert_int_equal(flash_write(d, 0, 0, w, PAGE), 0);
	flash_close(d);
	/* Geometry and state from the sidecar alone. */
	assert_int_equal(flash_sim_open(f->img, NULL, false, false, &d), 0);
	assert_int_equal(d->geo.peb_size, PEB);
	assert_int_equal(d->geo.peb_count, NPEB);
	assert_int_equal(flash_sim_get_wear(d, 4), 3);
	assert_int_equal(flash_sim_get_wear(d, 7), 99);
	assert_int_equal(flash_is_bad(d, 2), 1);
	assert_int_equal(flash_is_bad(d, 3), 1);
	assert_int_equal(flash_is_bad(d, 1), 0);
	uint8_t r[PAGE];
	assert_int_equal(flash_read(d, 0, 0, r, PAGE), 0);
	assert_memory_equal(r, w, PAGE);
	/* NOP counters are not persisted, but a programmed page is not
	 * erased, and with NOP 2 it may be programmed again (AND). */
	uint8_t z[PAGE];
	memset(z, 0, sizeof(z));
	assert_int_equal(flash_write(d, 0, 0, z, PAGE), 0);
	assert_int_equal(flash_erase(d, 4), 0);
	flash_close(d);
	assert_int_equal(flash_sim_open(f->img, NULL, false, false, &d), 0);
	assert_int_equal(flash_sim_get_wear(d, 4), 4);
	flash_close(d);
	/* A sidecar with another geometry than the one given is refused. */
	struct flash_geometry g = c.geo;
	g.peb_count = 4;
	assert_int_equal(flash_sim_open(f->img, &g, false, true, &d), -EINVAL);
	/* A broken sidecar is refused with a message, not a crash. */
	FILE *fp = fopen(f->side, "w");
	fputs("ubikit-flash-sim 99\n", fp);
	fclose(fp);
	assert_int_equal(flash_sim_open(f->img, NULL, false, true, &d), -EINVAL);
}

static void test_reopen_refuses_reprogram(void **state)
{
	struct fx *f = *state;
	struct flash_sim_config c = small_cfg(f->img, true);
	struct flash_dev *d;
	assert_int_equal(flash_sim_create(&c, &d), 0);
	uint8_t w[PAGE];
	fill(w, sizeof(w), 4);
	assert_int_equal(flash_write(d, 3, PAGE, w, PAGE), 0);
	flash_close(d);
	assert_int_equal(flash_sim_open(f->img, NULL, false, false, &d), 0);
	assert_int_equal(flash_write(d, 3, PAGE, w, PAGE), -EIO);
	assert_int_equal(flash_write(d, 3, 2 * PAGE, w, PAGE), 0);
	flash_close(d);
}

/* The access mode (O_RDONLY/O_WRONLY/O_RDWR) of this process's open file
 * on path, from /proc/self/fdinfo; -1 if none is open. */
static int open_mode_of(const char *path)
{
	char want[PATH_MAX];
	if (!realpath(path, want))
		return -1;
	DIR *dir = opendir("/proc/self/fd");
	assert_non_null(dir);
	struct dirent *e;
	int mode = -1;
	while ((e = readdir(dir)) && mode < 0) {
		char l[sizeof(e->d_name) + 32], t[PATH_MAX];
		snprintf(l, sizeof(l), "/proc/self/fd/%s", e->d_name);
		ssize_t n = readlink(l, t, sizeof(t) - 1);
		if (n <= 0)
			continue;
		t[n] = 0;
		if (strcmp(t, want) != 0)
			continue;
		snprintf(l, sizeof(l), "/proc/self/fdinfo/%s", e->d_name);
		FILE *fi = fopen(l, "r");
		if (!fi)
			continue;
		char line[128];
		unsigned flags;
		while (fgets(line, sizeof(line), fi))
			if (sscanf(line, "flags: %o", &flags) == 1)
				mode = (int)(flags & O_ACCMODE);
		fclose(fi);
	}
	closedir(dir);
	return mode;
}

static void test_read_only_never_writes(void **state)
{
	struct fx *f = *state;
	struct flash_sim_config c = small_cfg(f->img, true);
	struct flash_dev *d;
	assert_int_equal(flash_sim_create(&c, &d), 0);
	uint8_t w[PAGE];
	fill(w, sizeof(w), 5);
	assert_int_equal(flash_write(d, 1, 0, w, PAGE), 0);
	flash_close(d);
	/* Read-only on disk too (for a non-root run: an O_RDWR would fail);
	 * root ignores the mode, so below the open file's own access mode is
	 * checked in /proc/self/fdinfo as well. */
	struct stat st0, ss0;
	assert_int_equal(stat(f->img, &st0), 0);
	assert_int_equal(stat(f->side, &ss0), 0);
	size_t n0, s0;
	uint8_t *b0 = slurp(f->img, &n0);
	uint8_t *sc0 = slurp(f->side, &s0);
	chmod(f->img, 0444);
	sleep(0); /* mtime granularity is handled by comparing ns fields */
	assert_int_equal(flash_sim_open(f->img, NULL, false, true, &d), 0);
	assert_true(d->read_only);
	assert_int_equal(open_mode_of(f->img), O_RDONLY);
	uint8_t r[PAGE];
	assert_int_equal(flash_read(d, 1, 0, r, PAGE), 0);
	assert_memory_equal(r, w, PAGE);
	assert_int_equal(flash_write(d, 2, 0, w, PAGE), -EROFS);
	assert_int_equal(flash_erase(d, 1), -EROFS);
	assert_int_equal(flash_mark_bad(d, 1), -EROFS);
	assert_int_equal(flash_sim_set_factory_bad(d, 4), 0); /* in memory only */
	assert_int_equal(flash_sim_set_wear(d, 4, 7), 0);
	assert_int_equal(flash_sync(d), 0);
	flash_close(d);
	chmod(f->img, 0644);
	struct stat st1, ss1;
	assert_int_equal(stat(f->img, &st1), 0);
	assert_int_equal(stat(f->side, &ss1), 0);
	assert_int_equal(st0.st_mtim.tv_sec, st1.st_mtim.tv_sec);
	assert_int_equal(st0.st_mtim.tv_nsec, st1.st_mtim.tv_nsec);
	assert_int_equal(ss0.st_mtim.tv_nsec, ss1.st_mtim.tv_nsec);
	size_t n1, s1;
	uint8_t *b1 = slurp(f->img, &n1);
	uint8_t *sc1 = slurp(f->side, &s1);
	assert_int_equal(n0, n1);
	assert_memory_equal(b0, b1, n0);
	assert_int_equal(s0, s1);
	assert_memory_equal(sc0, sc1, s0);
	free(b0);
	free(b1);
	free(sc0);
	free(sc1);
}

static void write_file(const char *path, const uint8_t *b, size_t n)
{
	FILE *fp = fopen(path, "wb");
	assert_non_null(fp);
	assert_int_equal(fwrite(b, 1, n, fp), n);
	fclose(fp);
}

static void test_short_image_padded(void **state)
{
	struct fx *f = *state;
	/* Like ubinize output: 2.5 PEBs of data for an 8-PEB device. */
	size_t n = 2 * PEB + PEB / 2;
	uint8_t *img = malloc(n);
	fill(img, n, 6);
	write_file(f->img, img, n);
	struct flash_geometry g = {FLASH_NAND, PAGE, PAGE, OOB, PEB, NPEB};
	struct flash_dev *d;
	assert_int_equal(flash_sim_open(f->img, &g, false, true, &d), 0);
	uint8_t r[PEB];
	assert_int_equal(flash_read(d, 1, 0, r, PEB), 0);
	assert_memory_equal(r, img + PEB, PEB);
	assert_int_equal(flash_read(d, 2, 0, r, PEB), 0);
	assert_memory_equal(r, img + 2 * PEB, PEB / 2);
	for (size_t i = PEB / 2; i < PEB; i++)
		assert_int_equal(r[i], 0xFF);
	assert_int_equal(flash_read(d, 7, 0, r, PEB), 0);
	for (size_t i = 0; i < PEB; i++)
		assert_int_equal(r[i], 0xFF);
	flash_close(d);
	struct stat st;
	assert_int_equal(stat(f->img, &st), 0);
	assert_int_equal((size_t)st.st_size, n);
	assert_int_equal(access(f->side, F_OK), -1);

	/* Read-write: the file grows to the device, the tail is erased flash. */
	assert_int_equal(flash_sim_open(f->img, &g, false, false, &d), 0);
	assert_int_equal(flash_write(d, 2, PEB / 2, img, PAGE), 0);
	assert_int_equal(flash_write(d, 6, 0, img, PAGE), 0);
	assert_int_equal(flash_write(d, 1, 0, img, PAGE), -EIO); /* PEB 1 holds data */
	flash_close(d);
	size_t m;
	uint8_t *b = slurp(f->img, &m);
	assert_int_equal(m, (size_t)NPEB * PEB);
	assert_memory_equal(b, img, n);
	assert_memory_equal(b + n, img, PAGE);
	assert_memory_equal(b + 6 * PEB, img, PAGE);
	for (size_t i = n + PAGE; i < 6 * PEB; i++)
		assert_int_equal(b[i], 0xFF);
	free(b);
	free(img);
}

static void test_count_from_size_and_too_big(void **state)
{
	struct fx *f = *state;
	size_t n = 3 * PEB;
	uint8_t *img = malloc(n);
	memset(img, 0xFF, n);
	write_file(f->img, img, n);
	struct flash_geometry g = {FLASH_NAND, PAGE, PAGE, OOB, PEB, 0};
	struct flash_dev *d;
	assert_int_equal(flash_sim_open(f->img, &g, false, true, &d), 0);
	assert_int_equal(d->geo.peb_count, 3);
	flash_close(d);
	g.peb_count = 2;
	assert_int_equal(flash_sim_open(f->img, &g, false, true, &d), -EINVAL);
	/* No sidecar and no geometry: refused. */
	assert_int_equal(flash_sim_open(f->img, NULL, false, true, &d), -EINVAL);
	/* Missing file. */
	assert_true(flash_sim_open("/nonexistent/x", &g, false, true, &d) < 0);
	free(img);
}

static void test_sparse(void **state)
{
	struct fx *f = *state;
	struct flash_sim_config c = small_cfg(f->img, false);
	c.geo.peb_count = 64; /* 1 MiB */
	c.sparse = true;
	struct flash_dev *d;
	assert_int_equal(flash_sim_create(&c, &d), 0);
	uint8_t w[PAGE], r[PAGE];
	fill(w, sizeof(w), 7);
	assert_int_equal(flash_write(d, 10, 0, w, PAGE), 0);
	assert_int_equal(flash_write(d, 11, 0, w, PAGE), 0);
	flash_close(d);
	struct stat st;
	assert_int_equal(stat(f->img, &st), 0);
	assert_true((uint64_t)st.st_blocks * 512 < 256 * 1024); /* far below 1 MiB */
	assert_int_equal(flash_sim_open(f->img, NULL, false, false, &d), 0);
	assert_int_equal(flash_read(d, 3, 0, r, PAGE), 0);
	for (size_t i = 0; i < PAGE; i++)
		assert_int_equal(r[i], 0xFF);
	assert_int_equal(flash_read(d, 10, 0, r, PAGE), 0);
	assert_memory_equal(r, w, PAGE);
	assert_int_equal(flash_erase(d, 10), 0);
	flash_close(d);
	assert_int_equal(flash_sim_open(f->img, NULL, false, true, &d), 0);
	assert_int_equal(flash_read(d, 10, 0, r, PAGE), 0);
	for (size_t i = 0; i < PAGE; i++)
		assert_int_equal(r[i], 0xFF);
	assert_int_equal(flash_read(d, 11, 0, r, PAGE), 0);
	assert_memory_equal(r, w, PAGE);
	flash_close(d);
}

static void test_power_cut_file(void **state)
{
	struct fx *f = *state;
	struct flash_sim_config c = small_cfg(f->img, true);
	struct flash_dev *d;
	assert_int_equal(flash_sim_create(&c, &d), 0);
	uint8_t w[PEB], r[PEB];
	fill(w, sizeof(w), 8);
	flash_sim_power_cut_after(d, 1);
	assert_int_equal(flash_write(d, 2, 0, w, PEB), -EIO);
	assert_true(flash_sim_is_cut(d));
	flash_close(d); /* the process dies with the power */
	assert_int_equal(flash_sim_open(f->img, NULL, false, false, &d), 0);
	assert_false(flash_sim_is_cut(d));
	assert_int_equal(flash_read(d, 2, 0, r, PEB), 0);
	assert_memory_not_equal(r, w, PEB);
	int all_ff = 1;
	for (size_t i = 0; i < PEB; i++)
		all_ff &= r[i] == 0xFF;
	assert_false(all_ff);
	flash_close(d);
}


static void test_sticky_flip_persists(void **state)
{
	struct fx *f = *state;
	struct flash_sim_config c = small_cfg(f->img, false);
	struct flash_dev *d;
	assert_int_equal(flash_sim_create(&c, &d), 0);
	uint8_t w[PAGE], r[PAGE];
	fill(w, sizeof(w), 9);
	assert_int_equal(flash_write(d, 4, 2 * PAGE, w, PAGE), 0);
	assert_int_equal(flash_sim_inject_bitflip(d, 4, 2, true, true), 0);
	assert_int_equal(flash_sim_inject_bitflip(d, 5, 0, false, true), 0);
	assert_int_equal(flash_sim_inject_bitflip(d, 6, 0, true, false), 0); /* one-shot: not kept */
	flash_close(d);
	assert_int_equal(flash_sim_open(f->img, NULL, false, false, &d), 0);
	assert_int_equal(flash_read(d, 4, 2 * PAGE, r, PAGE), -EBADMSG);
	assert_memory_not_equal(r, w, PAGE);
	assert_int_equal(flash_read(d, 5, 0, r, PAGE), -EUCLEAN);
	assert_int_equal(flash_read(d, 6, 0, r, PAGE), 0);
	assert_int_equal(flash_erase(d, 4), 0);
	flash_close(d);
	assert_int_equal(flash_sim_open(f->img, NULL, false, true, &d), 0);
	assert_int_equal(flash_read(d, 4, 2 * PAGE, r, PAGE), 0);
	assert_int_equal(flash_read(d, 5, 0, r, PAGE), -EUCLEAN);
	flash_close(d);
}

static void test_open_error_messages(void **state)
{
	struct fx *f = *state;
	char msg[600];
	struct flash_dev *d;
	uint8_t b[3 * PEB];
	memset(b, 0xFF, sizeof(b));
	write_file(f->img, b, sizeof(b));
	struct flash_geometry g = {FLASH_NAND, PAGE, PAGE, OOB, PEB, 2};
	assert_int_equal(flash_sim_open_ex(f->img, &g, false, true, &d, msg, sizeof(msg)), -EINVAL);
	assert_non_null(strstr(msg, "more than"));
	FILE *fp = fopen(f->side, "w");
	fputs("ubikit-flash-sim 1\ntype nand\npage_size 2048\nbogus_key 7\n", fp);
	fclose(fp);
	assert_int_equal(flash_sim_open_ex(f->img, NULL, false, true, &d, msg, sizeof(msg)), -EINVAL);
	assert_non_null(strstr(msg, "line 4"));
	fp = fopen(f->side, "w");
	fputs("ubikit-flash-sim 1\ntype nand\npage_size 3000\nsubpage_size 3000\noob_size 64\npeb_size 16384\n"
	      "peb_count 3\nimage_mtime_ns 0\n", fp);
	fclose(fp);
	assert_int_equal(flash_sim_open_ex(f->img, NULL, false, true, &d, msg, sizeof(msg)), -EINVAL);
	assert_non_null(strstr(msg, "power of two"));
	fp = fopen(f->side, "w");
	fputs("ubikit-flash-sim 1\ntype nand\npeb_size 16384\npeb_count 3\nimage_mtime_ns 0\nwear 9 1\n", fp);
	fclose(fp);
	assert_int_equal(flash_sim_open_ex(f->img, NULL, false, true, &d, msg, sizeof(msg)), -EINVAL);
	assert_non_null(strstr(msg, "wear 9 1"));
}


/* Issue 8: a writer has the image alone, readers share it; a program using
 * the library gets the lock without asking. */
static void test_lock(void **state)
{
	struct fx *f = *state;
	struct flash_sim_config c = small_cfg(f->img, false);
	struct flash_dev *w, *r1, *r2, *d;
	char msg[600];
	assert_int_equal(flash_sim_create(&c, &w), 0);
	/* Another open while a writer holds it: refused at once, readers too. */
	assert_int_equal(flash_sim_open_ex(f->img, NULL, false, false, &d, msg, sizeof(msg)), -EBUSY);
	assert_non_null(strstr(msg, "in use"));
	assert_int_equal(flash_sim_open_ex(f->img, NULL, false, true, &d, msg, sizeof(msg)), -EBUSY);
	flash_close(w);
	assert_int_equal(flash_sim_open(f->img, NULL, false, true, &r1), 0);
	assert_int_equal(flash_sim_open(f->img, NULL, false, true, &r2), 0);
	assert_int_equal(flash_sim_open_ex(f->img, NULL, false, false, &d, msg, sizeof(msg)), -EBUSY);
	/* create over an image in use must not empty it */
	struct stat st0, st1;
	assert_int_equal(stat(f->img, &st0), 0);
	assert_int_equal(flash_sim_create(&c, &d), -EBUSY);
	assert_int_equal(stat(f->img, &st1), 0);
	assert_int_equal(st0.st_size, st1.st_size);
	flash_close(r1);
	flash_close(r2);
	assert_int_equal(flash_sim_open(f->img, NULL, false, false, &w), 0);
	flash_close(w);
}

/* Issue 8: the sidecar names the image it describes. */
static void test_stale_sidecar(void **state)
{
	struct fx *f = *state;
	struct flash_sim_config c = small_cfg(f->img, false);
	struct flash_dev *d;
	char msg[600];
	assert_int_equal(flash_sim_create(&c, &d), 0);
	flash_close(d);
	/* The image replaced by one of another size: refused, naming the sidecar. */
	uint8_t b[3 * PEB];
	memset(b, 0xFF, sizeof(b));
	write_file(f->img, b, sizeof(b));
	assert_int_equal(flash_sim_open_ex(f->img, NULL, false, true, &d, msg, sizeof(msg)), -EINVAL);
	assert_non_null(strstr(msg, ".sim does not describe"));
	/* Same size, but UBI EC headers every 2 PEBs of the sidecar's geometry
	 * (an image with larger eraseblocks). */
	uint8_t *img = malloc((size_t)NPEB * PEB);
	memset(img, 0xFF, (size_t)NPEB * PEB);
	for (unsigned p = 0; p < NPEB; p += 2) {
		uint8_t *h = img + (size_t)p * PEB;
		memset(h, 0, 64);
		h[0] = 'U', h[1] = 'B', h[2] = 'I', h[3] = '#', h[4] = 1;
		uint32_t crc = 0xFFFFFFFFu;
		for (int i = 0; i < 60; i++) { /* UBI's CRC-32: no final inversion */
			crc ^= h[i];
			for (int k = 0; k < 8; k++)
				crc = (crc >> 1) ^ (0xEDB88320u & -(crc & 1));
		}
		h[60] = (uint8_t)(crc >> 24), h[61] = (uint8_t)(crc >> 16), h[62] = (uint8_t)(crc >> 8), h[63] = (uint8_t)crc;
	}
	write_file(f->img, img, (size_t)NPEB * PEB);
	assert_int_equal(flash_sim_open_ex(f->img, NULL, false, false, &d, msg, sizeof(msg)), -EINVAL);
	assert_non_null(strstr(msg, "apart"));
	/* Headers in every PEB: the same layout, trusted (a copy, or dd). */
	for (unsigned p = 1; p < NPEB; p += 2)
		memcpy(img + (size_t)p * PEB, img, 64);
	write_file(f->img, img, (size_t)NPEB * PEB);
	assert_int_equal(flash_sim_open_ex(f->img, NULL, false, false, &d, msg, sizeof(msg)), 0);
	flash_close(d);
	/* ... also with a UBI image stored as data in PEB 0 (headers at its
	 * data offset, 2 KiB apart): not a grid of the whole image. */
	for (unsigned k = 0; k < 4; k++)
		memcpy(img + 4096 + 2048 * k, img, 64);
	write_file(f->img, img, (size_t)NPEB * PEB);
	assert_int_equal(flash_sim_open_ex(f->img, NULL, false, true, &d, msg, sizeof(msg)), 0);
	flash_close(d);
	free(img);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_layout_data_only, setup, teardown),
		cmocka_unit_test_setup_teardown(test_layout_with_oob_and_bbm, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sidecar_persistence, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reopen_refuses_reprogram, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_only_never_writes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_short_image_padded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_count_from_size_and_too_big, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sparse, setup, teardown),
		cmocka_unit_test_setup_teardown(test_power_cut_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sticky_flip_persists, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_error_messages, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lock, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stale_sidecar, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
