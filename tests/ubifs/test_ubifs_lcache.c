/* test_ubifs_lcache — the whole-LEB read cache under ubifs_leb_read, on an
 * in-memory volume whose bytes and read calls the test knows: every read
 * through the cache returns the volume's current bytes (after writes,
 * atomic changes, unmaps and maps of the LEB), a LEB is read from the
 * volume once, unmapped LEBs are never read, a whole-LEB read that fails
 * leaves the narrow reads to the volume, and the byte limit holds. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ubifs/ubifs_lcache.h"
#include "ubifs/ubifs_priv.h"

#define LEBS 6
#define LEB 4096
#define IO 512

struct memvol {
	uint8_t data[LEBS][LEB];
	int mapped[LEBS];
	int reads[LEBS];       /* read calls per LEB */
	int whole_fails[LEBS]; /* a read of the whole LEB fails with -EIO */
};

static int mv_read(void *ctx, uint32_t lnum, uint32_t off, void *buf, size_t len)
{
	struct memvol *m = ctx;
	m->reads[lnum]++;
	if (m->whole_fails[lnum] && off == 0 && len == LEB)
		return -EIO;
	if (m->mapped[lnum])
		memcpy(buf, m->data[lnum] + off, len);
	else
		memset(buf, 0xff, len);
	return 0;
}

static int mv_write(void *ctx, uint32_t lnum, uint32_t off, const void *buf, size_t len)
{
	struct memvol *m = ctx;
	m->mapped[lnum] = 1;
	memcpy(m->data[lnum] + off, buf, len);
	return 0;
}

static int mv_change(void *ctx, uint32_t lnum, const void *buf, size_t len)
{
	struct memvol *m = ctx;
	memset(m->data[lnum], 0xff, LEB);
	memcpy(m->data[lnum], buf, len);
	m->mapped[lnum] = 1;
	return 0;
}

static int mv_unmap(void *ctx, uint32_t lnum)
{
	struct memvol *m = ctx;
	memset(m->data[lnum], 0xff, LEB);
	m->mapped[lnum] = 0;
	return 0;
}

static int mv_map(void *ctx, uint32_t lnum)
{
	struct memvol *m = ctx;
	memset(m->data[lnum], 0xff, LEB);
	m->mapped[lnum] = 1;
	return 0;
}

static int mv_is_mapped(void *ctx, uint32_t lnum)
{
	struct memvol *m = ctx;
	return m->mapped[lnum];
}

struct rig {
	struct memvol m;
	struct ubi_vol_io vol;
	struct ubifs_fs fs;
};

static struct rig *rig_new(void)
{
	struct rig *r = calloc(1, sizeof(*r));
	assert_non_null(r);
	for (int l = 0; l < LEBS; l++) {
		for (int i = 0; i < LEB; i++)
			r->m.data[l][i] = (uint8_t)(l * 31 + i * 7);
		r->m.mapped[l] = l != 4; /* LEB 4 unmapped */
	}
	memset(r->m.data[4], 0xff, LEB);
	r->vol = (struct ubi_vol_io){.ctx = &r->m, .leb_size = LEB, .leb_count = LEBS, .min_io_size = IO,
				     .max_write_size = IO, .read = mv_read, .write = mv_write, .change = mv_change,
				     .unmap = mv_unmap, .map = mv_map, .is_mapped = mv_is_mapped};
	r->fs.vol = &r->vol;
	r->fs.leb_size = LEB;
	r->fs.min_io_size = IO;
	return r;
}

/* read len bytes at lnum:offs through the cache; they must be the volume's */
static void expect_read(struct rig *r, uint32_t lnum, uint32_t offs, size_t len)
{
	uint8_t buf[LEB];
	assert_int_equal(ubifs_leb_read(&r->fs, lnum, offs, buf, len), 0);
	assert_memory_equal(buf, r->m.data[lnum] + offs, len);
}

static void t_once_and_fresh(void **s)
{
	(void)s;
	struct rig *r = rig_new();
	assert_int_equal(ubifs_lcache_enable(&r->fs, 64 * LEB), 0);
	expect_read(r, 1, 100, 200);
	expect_read(r, 1, 0, LEB);
	expect_read(r, 1, 4000, 96);
	assert_int_equal(r->m.reads[1], 1); /* one whole-LEB read */
	/* unmapped: never read, all 0xff */
	expect_read(r, 4, 0, LEB);
	expect_read(r, 4, 10, 10);
	assert_int_equal(r->m.reads[4], 0);

	/* a write makes the next read see the new bytes */
	uint8_t w[IO];
	memset(w, 0x5a, sizeof(w));
	assert_int_equal(ubifs_leb_write(&r->fs, 1, 1024, w, IO), 0);
	expect_read(r, 1, 1000, 600);
	/* an atomic change */
	assert_int_equal(ubifs_leb_change(&r->fs, 2, w, IO), 0);
	expect_read(r, 2, 0, LEB);
	/* an unmap of a cached LEB */
	expect_read(r, 3, 0, 64);
	assert_int_equal(ubifs_leb_unmap(&r->fs, 3), 0);
	expect_read(r, 3, 0, LEB);
	/* a map and a write of the LEB that was unmapped */
	assert_int_equal(ubifs_leb_map(&r->fs, 4), 0);
	assert_int_equal(ubifs_leb_write(&r->fs, 4, 0, w, IO), 0);
	expect_read(r, 4, 0, LEB);
	/* whole reads: 1, 1 after its write, 2, 3, 4 after its map (not 3 once unmapped) */
	assert_int_equal(ubifs_lcache_lebs_read(r->fs.lcache), 5);
	ubifs_lcache_disable(&r->fs);
	assert_null(r->fs.lcache);
	free(r);
}

static void t_failed_whole_read(void **s)
{
	(void)s;
	struct rig *r = rig_new();
	r->m.whole_fails[5] = 1;
	assert_int_equal(ubifs_lcache_enable(&r->fs, 64 * LEB), 0);
	expect_read(r, 5, 0, 512);
	expect_read(r, 5, 512, 512);
	/* tried whole once, then each narrow read goes to the volume */
	assert_int_equal(r->m.reads[5], 3);
	uint8_t buf[LEB];
	assert_int_equal(ubifs_leb_read(&r->fs, 5, 0, buf, LEB), -EIO);
	ubifs_lcache_disable(&r->fs);
	free(r);
}

static void t_limit(void **s)
{
	(void)s;
	struct rig *r = rig_new();
	assert_int_equal(ubifs_lcache_enable(&r->fs, 2 * LEB + 100), 0);
	for (int round = 0; round < 3; round++)
		for (uint32_t l = 0; l < 4; l++)
			if (l != 4)
				expect_read(r, l, 8, 8);
	assert_int_equal(r->m.reads[0], 1);
	assert_int_equal(r->m.reads[1], 1);
	assert_int_equal(r->m.reads[2], 3); /* past the limit: read each time */
	assert_int_equal(r->m.reads[3], 3);
	ubifs_lcache_disable(&r->fs);
	/* off: every read goes to the volume */
	expect_read(r, 0, 8, 8);
	assert_int_equal(r->m.reads[0], 2);
	free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_once_and_fresh),
		cmocka_unit_test(t_failed_whole_read),
		cmocka_unit_test(t_limit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
