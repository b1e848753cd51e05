/* test_ubi_flat — a bare UBIFS image as a volume: geometry from the
 * superblock, LEBs beyond the file read as 0xFF and unmapped, the volume
 * sized to max_leb_cnt, read-only volumes refuse every write and leave the
 * file alone, read-write volumes write back on close, bad files rejected. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "ubi/ubi_flat.h"
#include "ubifs_test_tree.h"
#include "util/util_err.h"

#define WORK UBIKIT_BUILD_DIR "/ubi-flat"

static void t_flat(void **s)
{
	(void)s;
	assert_int_equal(tt_run("rm -rf %s && mkdir -p %s/r && echo hi > %s/r/a && "
				"mkfs.ubifs -r %s/r -m 2048 -e 126976 -c 50 -o %s/img",
				WORK, WORK, WORK, WORK, WORK),
			 0);
	struct stat st0;
	assert_int_equal(stat(WORK "/img", &st0), 0);
	uint32_t file_lebs = (uint32_t)(st0.st_size / 126976);
	struct ubi_vol_io v;
	assert_int_equal(ubi_flat_open(WORK "/img", 0, 1, &v), 0);
	assert_int_equal(v.leb_size, 126976);
	assert_int_equal(v.min_io_size, 2048);
	assert_int_equal(v.leb_count, 50); /* max_leb_cnt */
	assert_int_equal(v.is_mapped(v.ctx, 0), 1);
	assert_int_equal(v.is_mapped(v.ctx, file_lebs), 0);
	uint8_t b[64];
	assert_int_equal(v.read(v.ctx, 49, 126976 - 64, b, 64), 0);
	for (int i = 0; i < 64; i++)
		assert_int_equal(b[i], 0xFF);
	assert_int_equal(v.read(v.ctx, 50, 0, b, 1), -EINVAL);
	assert_int_equal(v.read(v.ctx, 0, 126976 - 8, b, 16), -EINVAL);
	assert_int_equal(v.read(v.ctx, 0, 0, b, 4), 0);
	assert_memory_equal(b, "\x31\x18\x10\x06", 4);
	assert_int_equal(v.write(v.ctx, 0, 0, b, 4), -EROFS);
	assert_int_equal(v.change(v.ctx, 0, b, 4), -EROFS);
	assert_int_equal(v.unmap(v.ctx, 0), -EROFS);
	assert_int_equal(v.map(v.ctx, 20), -EROFS);
	assert_int_equal(ubi_flat_close(&v), 0);
	struct stat st1;
	assert_int_equal(stat(WORK "/img", &st1), 0);
	assert_int_equal(st1.st_mtim.tv_sec, st0.st_mtim.tv_sec);
	assert_int_equal(st1.st_size, st0.st_size);
	/* read-write: a write to an unmapped LEB maps it and reaches the file */
	assert_int_equal(ubi_flat_open(WORK "/img", 0, 0, &v), 0);
	memset(b, 0xAB, sizeof(b));
	assert_int_equal(v.write(v.ctx, file_lebs + 2, 2048, b, 64), 0);
	assert_int_equal(v.is_mapped(v.ctx, file_lebs + 2), 1);
	assert_int_equal(v.unmap(v.ctx, 1), 0);
	assert_int_equal(ubi_flat_close(&v), 0);
	assert_int_equal(ubi_flat_open(WORK "/img", 0, 1, &v), 0);
	uint8_t c[64];
	assert_int_equal(v.read(v.ctx, file_lebs + 2, 2048, c, 64), 0);
	assert_memory_equal(b, c, 64);
	assert_int_equal(v.read(v.ctx, 1, 0, c, 4), 0);
	assert_memory_equal(c, "\xff\xff\xff\xff", 4);
	/* the LEB between the old end and the new one reads erased, not zeros */
	assert_int_equal(v.read(v.ctx, file_lebs + 1, 100, c, 4), 0);
	assert_memory_equal(c, "\xff\xff\xff\xff", 4);
	assert_int_equal(v.is_mapped(v.ctx, file_lebs + 1), 1); /* inside the file now */
	ubi_flat_close(&v);
	/* still mounts and reads after the round trip through the file */
	assert_int_equal(ubi_flat_open(WORK "/img", 0, 1, &v), 0);
	assert_int_equal(v.read(v.ctx, 0, 0, c, 4), 0);
	assert_memory_equal(c, "\x31\x18\x10\x06", 4);
	ubi_flat_close(&v);
	/* not an image */
	struct util_err e;
	util_err_clear(&e);
	assert_int_equal(tt_run("head -c 10000 /dev/zero > %s/zero", WORK), 0);
	assert_int_equal(ubi_flat_open_err(WORK "/zero", 0, 1, &v, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "superblock"));
	assert_int_equal(ubi_flat_open_err(WORK "/missing", 0, 1, &v, &e), -ENOENT);
	/* a given LEB size works without a superblock */
	assert_int_equal(ubi_flat_open_err(WORK "/zero", 4096, 1, &v, &e), 0);
	assert_int_equal(v.leb_count, 3);
	ubi_flat_close(&v);
	/* memory images */
	uint8_t tiny[100] = {0};
	assert_int_equal(ubi_flat_open_mem(tiny, sizeof(tiny), 0, 1, &v, &e), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(t_flat)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
