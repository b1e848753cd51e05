/* test_ubi_flat_io — the write side of ubi_flat (a bare UBIFS image file as
 * a UBI volume), which the read-only mount never uses: write, change (the
 * rest of the LEB erased), unmap (reads 0xFF), map, is_mapped, range
 * checks, write-back at sync/close (only touched LEBs; a file that grows is
 * filled with erased bytes, not zeros), read-only refusals. The reference is
 * a model of the image kept by the test (what UBI semantics say each LEB
 * holds), compared with reads and with the file's bytes after close. */
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

#include "ubi/ubi_flat.h"
#include "util/util_crc.h"
#include "util/util_endian.h"
#include "util/util_err.h"

#define WORK UBIKIT_BUILD_DIR "/ubi-flat-io"
#define IMG WORK "/img"
enum { LS = 16384, FILE_LEBS = 5, SB_LEBS = 12 };

static uint8_t model[SB_LEBS][LS];

static void pattern(uint8_t *b, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)(seed * 131 + i * 7 + (i >> 8));
}

/* A file of FILE_LEBS LEBs whose LEB 0 starts with a superblock node
 * header saying leb_cnt SB_LEBS, min I/O 8 (enough for ubi_flat). */
static void make_file(void)
{
	memset(model, 0xFF, sizeof(model));
	for (unsigned l = 0; l < FILE_LEBS; l++)
		pattern(model[l], LS, l + 1);
	uint8_t *sb = model[0];
	memset(sb, 0, 4096);
	put_le32(sb, 0x06101831u);
	put_le32(sb + 16, 4096);
	sb[20] = 6; /* superblock */
	put_le32(sb + 32, 8);       /* min_io_size */
	put_le32(sb + 36, LS);      /* leb_size */
	put_le32(sb + 40, SB_LEBS); /* leb_cnt */
	put_le32(sb + 44, SB_LEBS); /* max_leb_cnt */
	put_le32(sb + 4, util_crc32(UTIL_CRC32_INIT, sb + 8, 4096 - 8));
	FILE *f = fopen(IMG, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(model, 1, (size_t)FILE_LEBS * LS, f), (size_t)FILE_LEBS * LS);
	fclose(f);
}

static void check_reads(struct ubi_vol_io *v, unsigned nlebs)
{
	static uint8_t b[LS];
	for (unsigned l = 0; l < nlebs; l++) {
		assert_int_equal(v->read(v->ctx, l, 0, b, LS), 0);
		if (memcmp(b, model[l], LS))
			fail_msg("LEB %u differs from the model", l);
	}
}

static void test_rw(void **state)
{
	(void)state;
	make_file();
	struct ubi_vol_io v;
	assert_int_equal(ubi_flat_open(IMG, 0, 0, &v), 0);
	assert_int_equal(v.leb_size, LS);
	assert_int_equal(v.leb_count, SB_LEBS);
	assert_int_equal(v.read_only, 0);
	check_reads(&v, SB_LEBS);
	/* LEBs past the file are unmapped */
	assert_int_equal(v.is_mapped(v.ctx, 2), 1);
	assert_int_equal(v.is_mapped(v.ctx, 7), 0);
	assert_int_equal(v.is_mapped(v.ctx, SB_LEBS), -EINVAL);
	static uint8_t d[LS];
	/* write into the middle of LEB 1 */
	pattern(d, 1000, 77);
	assert_int_equal(v.write(v.ctx, 1, 2048, d, 1000), 0);
	memcpy(model[1] + 2048, d, 1000);
	/* change LEB 2: new contents, the rest erased */
	pattern(d, 3000, 78);
	assert_int_equal(v.change(v.ctx, 2, d, 3000), 0);
	memset(model[2], 0xFF, LS);
	memcpy(model[2], d, 3000);
	/* unmap LEB 3: erased */
	assert_int_equal(v.unmap(v.ctx, 3), 0);
	memset(model[3], 0xFF, LS);
	assert_int_equal(v.is_mapped(v.ctx, 3), 0);
	/* map LEB 8 (past the file), then write LEB 10 */
	assert_int_equal(v.map(v.ctx, 8), 0);
	assert_int_equal(v.is_mapped(v.ctx, 8), 1);
	pattern(d, LS, 79);
	assert_int_equal(v.write(v.ctx, 10, 0, d, LS), 0);
	memcpy(model[10], d, LS);
	/* range checks */
	assert_int_equal(v.write(v.ctx, SB_LEBS, 0, d, 8), -EINVAL);
	assert_int_equal(v.write(v.ctx, 0, LS - 4, d, 8), -EINVAL);
	assert_int_equal(v.change(v.ctx, 0, d, LS + 1), -EINVAL);
	assert_int_equal(v.change(v.ctx, SB_LEBS, d, 1), -EINVAL);
	assert_int_equal(v.unmap(v.ctx, SB_LEBS), -EINVAL);
	assert_int_equal(v.map(v.ctx, SB_LEBS), -EINVAL);
	assert_int_equal(v.read(v.ctx, SB_LEBS, 0, d, 1), -EINVAL);
	check_reads(&v, SB_LEBS);
	assert_int_equal(v.sync(v.ctx), 0);
	assert_int_equal(v.sync(v.ctx), 0); /* nothing dirty */
	/* unmapping a LEB after the sync reaches the file at close */
	assert_int_equal(v.unmap(v.ctx, 4), 0);
	memset(model[4], 0xFF, LS);
	assert_int_equal(ubi_flat_close(&v), 0);
	/* the file: grown to 11 LEBs; erased bytes (not zeros) in the gap */
	FILE *f = fopen(IMG, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	assert_int_equal(ftell(f), 11L * LS);
	fseek(f, 0, SEEK_SET);
	static uint8_t fb[11][LS];
	assert_int_equal(fread(fb, 1, sizeof(fb), f), sizeof(fb));
	fclose(f);
	for (unsigned l = 0; l < 11; l++)
		if (memcmp(fb[l], model[l], LS))
			fail_msg("file LEB %u differs from the model", l);
	/* reopened read-only: the same, and every write refused */
	assert_int_equal(ubi_flat_open(IMG, 0, 1, &v), 0);
	check_reads(&v, SB_LEBS);
	assert_int_equal(v.write(v.ctx, 1, 0, d, 8), -EROFS);
	assert_int_equal(v.change(v.ctx, 1, d, 8), -EROFS);
	assert_int_equal(v.unmap(v.ctx, 1), -EROFS);
	assert_int_equal(v.map(v.ctx, 11), -EROFS);
	assert_int_equal(ubi_flat_close(&v), 0);
}

static void test_mem_and_errors(void **state)
{
	(void)state;
	make_file();
	/* memory image, explicit LEB size: the buffer is copied */
	static uint8_t buf[3 * LS];
	memcpy(buf, model, sizeof(buf));
	struct ubi_vol_io v;
	struct util_err e = {{0}};
	assert_int_equal(ubi_flat_open_mem(buf, sizeof(buf), LS, 0, &v, &e), 0);
	assert_int_equal(v.leb_count, SB_LEBS);
	memset(buf, 0, sizeof(buf));
	check_reads(&v, 3);
	static uint8_t d[LS];
	pattern(d, 512, 90);
	assert_int_equal(v.write(v.ctx, 1, 0, d, 512), 0);
	memcpy(model[1], d, 512);
	check_reads(&v, 3);
	assert_int_equal(ubi_flat_close(&v), 0);
	/* not a file / no such file / no superblock and no LEB size */
	assert_true(ubi_flat_open_err(WORK, 0, 1, &v, &e) < 0);
	assert_int_equal(ubi_flat_open_err(WORK "/nothing", 0, 1, &v, &e), -ENOENT);
	static uint8_t junk[LS];
	memset(junk, 0x11, sizeof(junk));
	assert_int_equal(ubi_flat_open_mem(junk, sizeof(junk), 0, 1, &v, &e), -EINVAL);
}

int main(void)
{
	mkdir(UBIKIT_BUILD_DIR, 0755);
	mkdir(WORK, 0755);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rw),
		cmocka_unit_test(test_mem_and_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
