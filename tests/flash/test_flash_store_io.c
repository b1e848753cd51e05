/* test_flash_store_io — the file store's refusals and host I/O failures
 * (flash_sim_store.c): opening what is not an image (a directory, a missing
 * file, an empty file without a PEB count, a file larger than the device),
 * sidecars that do not parse (version, keys, numbers past 32 bits, per-PEB
 * lines, flips on pages that do not exist), and the host refusing to grow a
 * file (RLIMIT_FSIZE: the kernel's EFBIG, as a full disk would refuse) while
 * an image is created or a short one extended. Each refusal must come with
 * the errno the host gave and a message naming the file (or sidecar line),
 * and must leave the files as they were; a good sidecar's wear, bad blocks
 * and flips must be what the device then reports. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "flash/flash_sim.h"

#define PAGE 2048u
#define PPB 8u
#define PEB (PAGE * PPB)
#define NPEB 8u
#define DIR UBIKIT_BUILD_DIR "/scratch/test_flash_store_io"
#define IMG DIR "/img"
#define SIDE DIR "/img.sim"

static const struct flash_geometry geo = {FLASH_NAND, PAGE, PAGE, 64, PEB, NPEB};

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	char *b = calloc(1, 65536);
	assert_non_null(b);
	size_t n = fread(b, 1, 65535, f);
	b[n] = 0;
	fclose(f);
	return b;
}

static off_t file_size(const char *path)
{
	struct stat st;
	return stat(path, &st) ? -1 : st.st_size;
}

/* A fresh file-backed device of NPEB erased PEBs (image + sidecar). */
static void make_image(bool sparse)
{
	assert_int_equal(system("rm -rf " DIR " && mkdir -p " DIR), 0);
	struct flash_sim_config c;
	flash_sim_config_default(&c);
	c.geo = geo;
	c.path = IMG;
	c.sparse = sparse;
	struct flash_dev *d;
	char msg[256];
	if (flash_sim_create_ex(&c, &d, msg, sizeof(msg)))
		fail_msg("create: %s", msg);
	flash_close(d);
}

static void expect_open_err(const char *path, const struct flash_geometry *g, bool ro, int err, const char *part)
{
	struct flash_dev *d = NULL;
	char msg[512] = "";
	int r = flash_sim_open_ex(path, g, false, ro, &d, msg, sizeof(msg));
	if (r != err || !strstr(msg, part))
		fail_msg("open %s: got %d \"%s\", want %d and \"%s\"", path, r, msg, err, part);
	assert_null(d);
}

static void t_not_images(void **s)
{
	(void)s;
	make_image(false);
	expect_open_err(DIR, &geo, true, -EINVAL, "not a regular file");
	expect_open_err(DIR "/missing", &geo, true, -ENOENT, DIR "/missing");
	write_file(DIR "/empty", "");
	struct flash_geometry nocount = geo;
	nocount.peb_count = 0;
	expect_open_err(DIR "/empty", &nocount, true, -EINVAL, "empty image and no PEB count");
	/* larger than the device it is opened as */
	struct flash_geometry small = geo;
	small.peb_count = NPEB / 2;
	assert_int_equal(rename(SIDE, DIR "/side.bak"), 0);
	expect_open_err(IMG, &small, true, -EINVAL, "more than the");
	/* no sidecar and no geometry */
	expect_open_err(IMG, NULL, true, -EINVAL, "no sidecar");
	/* without a count, the size decides (and a partial last PEB reads 0xFF) */
	assert_int_equal(truncate(IMG, (off_t)PEB * 3 + 100), 0);
	struct flash_dev *d;
	char msg[256];
	if (flash_sim_open_ex(IMG, &nocount, false, true, &d, msg, sizeof(msg)))
		fail_msg("open: %s", msg);
	assert_int_equal(d->geo.peb_count, 4);
	uint8_t page[PAGE];
	assert_int_equal(flash_read(d, 3, 0, page, sizeof(page)), 0);
	for (size_t i = 0; i < sizeof(page); i++)
		assert_int_equal(page[i], 0xFF);
	flash_close(d);
	assert_int_equal(file_size(IMG), (off_t)PEB * 3 + 100); /* read-only: untouched */
}

static void t_sidecars(void **s)
{
	(void)s;
	make_image(false);
	char *good = read_file(SIDE);
	/* the header, then one key per line */
	assert_non_null(strstr(good, "ubikit-flash-sim"));
	static const struct {
		const char *from, *to, *msg;
	} cases[] = {
		{"ubikit-flash-sim", "ubikit-flash-sin", "not a ubikit flash sidecar"},
		{"type nand", "type mram", "cannot parse"},
		{"type nand", "typo nand", "cannot parse"},
		{"type nand", "type", "cannot parse"},
		{"page_size 2048", "page_size 4294967296", "cannot parse"},
		{"peb_count 8", "peb_count -1", "cannot parse"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *at = strstr(good, cases[i].from);
		if (!at)
			fail_msg("sidecar has no \"%s\":\n%s", cases[i].from, good);
		char *bad = calloc(1, strlen(good) + 64);
		assert_non_null(bad);
		memcpy(bad, good, (size_t)(at - good));
		strcat(bad, cases[i].to);
		strcat(bad, at + strlen(cases[i].from));
		write_file(SIDE, bad);
		expect_open_err(IMG, NULL, true, -EINVAL, cases[i].msg);
		expect_open_err(IMG, NULL, false, -EINVAL, cases[i].msg);
		char *after = read_file(SIDE);
		assert_string_equal(after, bad); /* a refused sidecar is never rewritten */
		free(after);
		free(bad);
	}
	/* per-PEB lines: applied when good, refused when not */
	char *t = calloc(1, strlen(good) + 256);
	assert_non_null(t);
	strcpy(t, good);
	strcat(t, "wear 2 777\nbad 5 factory\nbad 6 grown\nflip 1 3 correctable\n");
	write_file(SIDE, t);
	struct flash_dev *d;
	char msg[256];
	if (flash_sim_open_ex(IMG, NULL, false, true, &d, msg, sizeof(msg)))
		fail_msg("open: %s", msg);
	assert_int_equal(flash_sim_get_wear(d, 2), 777);
	assert_int_equal(flash_sim_bad_kind(d, 5), 2);
	assert_int_equal(flash_sim_bad_kind(d, 6), 1);
	assert_int_equal(flash_sim_bad_kind(d, 4), 0);
	uint8_t page[PAGE];
	assert_int_equal(flash_read(d, 1, 3 * PAGE, page, PAGE), -EUCLEAN);
	assert_int_equal(flash_read(d, 1, 2 * PAGE, page, PAGE), 0);
	flash_close(d);
	static const char *bad_lines[] = {"flip 1 99 correctable\n", "wear x\n", "hole 5 2\n", "nonsense\n"};
	for (size_t i = 0; i < sizeof(bad_lines) / sizeof(bad_lines[0]); i++) {
		strcpy(t, good);
		strcat(t, bad_lines[i]);
		write_file(SIDE, t);
		expect_open_err(IMG, NULL, true, -EINVAL, i == 0 ? "bad flip line" : "cannot parse");
	}
	free(t);
	free(good);
}

/* The host refuses to grow files past 8 PEBs' worth of bytes minus one. */
static struct rlimit old_fsize;
static void limit_file_size(rlim_t bytes)
{
	signal(SIGXFSZ, SIG_IGN); /* EFBIG instead of the signal */
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old_fsize), 0);
	struct rlimit r = {bytes, old_fsize.rlim_max};
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &r), 0);
}
static void unlimit(void)
{
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old_fsize), 0);
	signal(SIGXFSZ, SIG_DFL);
}

static void t_host_refuses_growth(void **s)
{
	(void)s;
	assert_int_equal(system("rm -rf " DIR " && mkdir -p " DIR), 0);
	for (int sparse = 0; sparse <= 1; sparse++) {
		struct flash_sim_config c;
		flash_sim_config_default(&c);
		c.geo = geo;
		c.path = IMG;
		c.sparse = sparse;
		struct flash_dev *d = NULL;
		char msg[512] = "";
		limit_file_size((rlim_t)PEB * NPEB - 1);
		int r = flash_sim_create_ex(&c, &d, msg, sizeof(msg));
		unlimit();
		if (r != -EFBIG || !strstr(msg, IMG))
			fail_msg("create (sparse %d) past the file size limit: %d \"%s\"", sparse, r, msg);
		assert_null(d);
		/* nothing left behind: neither the image nor its sidecar */
		assert_int_equal(access(IMG, F_OK), -1);
		assert_int_equal(access(SIDE, F_OK), -1);
	}
	/* a short image (no sidecar) opened read-write is extended to the
	 * device's size: refused, the file keeps its size and bytes */
	FILE *f = fopen(IMG, "w");
	assert_non_null(f);
	for (unsigned i = 0; i < PEB; i++)
		fputc(0xA5, f);
	fclose(f);
	struct flash_dev *d = NULL;
	char msg[512] = "";
	limit_file_size((rlim_t)PEB * 2);
	int r = flash_sim_open_ex(IMG, &geo, false, false, &d, msg, sizeof(msg));
	unlimit();
	if (r != -EFBIG || !strstr(msg, "cannot extend " IMG))
		fail_msg("extend past the file size limit: %d \"%s\"", r, msg);
	assert_null(d);
	assert_int_equal(file_size(IMG), (off_t)PEB);
	/* within the limit it works, and the tail is erased flash */
	if (flash_sim_open_ex(IMG, &geo, false, false, &d, msg, sizeof(msg)))
		fail_msg("open: %s", msg);
	uint8_t page[PAGE];
	assert_int_equal(flash_read(d, 0, 0, page, PAGE), 0);
	assert_int_equal(page[0], 0xA5);
	assert_int_equal(flash_read(d, NPEB - 1, 0, page, PAGE), 0);
	assert_int_equal(page[PAGE - 1], 0xFF);
	flash_close(d);
	assert_int_equal(file_size(IMG), (off_t)PEB * NPEB);
	assert_int_equal(system("rm -rf " DIR), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_not_images),
		cmocka_unit_test(t_sidecars),
		cmocka_unit_test(t_host_refuses_growth),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
