/* test_fsck_reads — a check reads each LEB in use from flash once (issue
 * 10: "a check of a full device reads it once").
 *
 * The check's passes (index and leaves, the LPT against a scan of every
 * LEB, the read-back scan, the walk of every file) each read the LEBs in
 * use; the flash simulator counts the bytes actually read from the device.
 * The bound comes from UBI, not from UBIFS: the LEBs UBI has mapped, times
 * the LEB size, is what reading each once costs. Run on a kernel-written
 * image (read-only), then on the same image filled through the library to
 * most of its space (read-write mount, checked live, twice with writes in
 * between: the cache must not serve a LEB written since). */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "image/image_test_unpack.h"
#include <ubikit/fsck.h>
#include <ubikit/image.h>
#include <ubikit/ubikit.h>

#include "flash/flash_sim.h"
#include "image/image.h"

#define DATA UBIKIT_TEST_DATA "/kernel-images/nand2k-clean"
#define WORK UBIKIT_BUILD_DIR "/fsck-reads"
#define IMG WORK "/nand.img"

static struct ubikit_image *open_img(int rdwr)
{
	struct ubikit_image_opts o;
	ubikit_image_opts_init(&o);
	if (rdwr)
		o.flags |= UBIKIT_IMAGE_RDWR;
	struct ubikit_image *img = NULL;
	char msg[1024];
	if (ubikit_image_open(IMG, &o, &img, msg, sizeof(msg)))
		fail_msg("open: %s", msg);
	assert_non_null(ubikit_image_fs(img));
	assert_non_null(img->flash);
	return img;
}

/* bytes reading every mapped LEB of the volume once costs */
static uint64_t mapped_bytes(struct ubikit_image *img, uint32_t *mapped)
{
	struct ubi_vol_io *v = &img->vol;
	assert_non_null(v->is_mapped);
	uint32_t n = 0;
	for (uint32_t l = 0; l < v->leb_count; l++) {
		int r = v->is_mapped(v->ctx, l);
		assert_true(r >= 0);
		n += r ? 1 : 0;
	}
	*mapped = n;
	return (uint64_t)n * img->geo.leb_size;
}

/* run the check; return the flash bytes it read */
static uint64_t checked_reads(struct ubikit_image *img, uint64_t *file_bytes)
{
	struct flash_stats a, b;
	flash_sim_get_stats(img->flash, &a);
	struct ubikit_fsck_report rep;
	ubikit_fsck_report_init(&rep);
	assert_int_equal(ubikit_fsck_fs(ubikit_image_fs(img), &rep), 0);
	if (rep.count)
		fail_msg("the check found %zu problems, first: %s", rep.count, rep.problems[0].msg);
	flash_sim_get_stats(img->flash, &b);
	*file_bytes = rep.bytes_read;
	ubikit_fsck_report_free(&rep);
	return b.bytes_read - a.bytes_read;
}

static void expect_once(struct ubikit_image *img, const char *what)
{
	uint32_t mapped;
	uint64_t once = mapped_bytes(img, &mapped);
	uint64_t files;
	uint64_t got = checked_reads(img, &files);
	printf("%s: %u LEBs mapped (%llu bytes), the check read %llu bytes of flash (%.3fx), %llu bytes of files\n",
	       what, mapped, (unsigned long long)once, (unsigned long long)got, (double)got / (double)once,
	       (unsigned long long)files);
	/* every file's bytes were read back: the check did read the data */
	assert_true(files > 0);
	/* once each, no more (a LEB read partly before the check counts once) */
	assert_true(got <= once);
	/* and not less than the data it had to read */
	assert_true(got >= files / 2);
}

static void t_kernel_image_read_once(void **s)
{
	(void)s;
	image_test_unpack(DATA ".img.gz", WORK, IMG);
	struct ubikit_image *img = open_img(0);
	expect_once(img, "kernel image");
	ubikit_image_close(img);
}

static void fill(struct ubikit_fs *fs, const char *dir, int files, size_t size, uint32_t seed)
{
	assert_int_equal(ubikit_mkdir(fs, dir, 0755), 0);
	uint8_t *buf = malloc(size);
	assert_non_null(buf);
	for (int i = 0; i < files; i++) {
		uint32_t x = seed + (uint32_t)i * 2654435761u;
		for (size_t j = 0; j < size; j++) {
			x ^= x << 13;
			x ^= x >> 17;
			x ^= x << 5;
			buf[j] = (uint8_t)x;
		}
		char p[128];
		snprintf(p, sizeof(p), "%s/f%03d", dir, i);
		struct ubikit_file *f;
		assert_int_equal(ubikit_open(fs, p, O_WRONLY | O_CREAT | O_EXCL, 0644, &f), 0);
		assert_int_equal(ubikit_write(f, buf, size), (ssize_t)size);
		assert_int_equal(ubikit_close(f), 0);
	}
	free(buf);
	assert_int_equal(ubikit_sync(fs), 0);
}

static void t_filled_live_read_once(void **s)
{
	(void)s;
	image_test_unpack(DATA ".img.gz", WORK, IMG);
	struct ubikit_image *img = open_img(1);
	struct ubikit_fs *fs = ubikit_image_fs(img);
	/* incompressible data: about 7 MiB of the 16 MiB device */
	fill(fs, "/a", 28, 256 << 10, 1);
	expect_once(img, "filled, live");
	/* rewrite files checked above: new LEBs, old ones unmapped; the next
	 * check must see the new contents, not the first check's copies */
	for (int i = 0; i < 28; i += 2) {
		char p[64];
		snprintf(p, sizeof(p), "/a/f%03d", i);
		assert_int_equal(ubikit_unlink(fs, p), 0);
	}
	fill(fs, "/b", 12, 200 << 10, 7);
	expect_once(img, "rewritten, live");
	ubikit_image_close(img);
	/* and the result is clean for a fresh check too */
	img = open_img(0);
	expect_once(img, "remounted");
	ubikit_image_close(img);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_kernel_image_read_once),
		cmocka_unit_test(t_filled_live_read_once),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
