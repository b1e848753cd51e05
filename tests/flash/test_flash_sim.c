/* test_flash_sim — the simulator's rules in RAM: NAND programming rules
 * (erased-only, sub-pages, NOP, in-order), NOR AND-programming, erase and
 * wear-out, bad blocks, bit flips, power cuts, timing and counters; the
 * calls' refusals (other devices, PEBs past the end, bad geometries). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "flash/flash_sim.h"
#include "flash/flash_window.h"
#include "util/util_prng.h"

/* A small NAND: 2048+64 pages, 16 KiB PEBs (8 pages), 16 PEBs. */
static struct flash_dev *small_nand(uint32_t subpage, unsigned nop, bool in_order)
{
	struct flash_sim_config c;
	flash_sim_config_default(&c);
	c.geo.peb_size = 16384;
	c.geo.peb_count = 16;
	c.geo.subpage_size = subpage;
	c.nop = nop;
	c.in_order = in_order;
	struct flash_dev *d = NULL;
	assert_int_equal(flash_sim_create(&c, &d), 0);
	assert_non_null(d);
	return d;
}

static void fill(uint8_t *b, size_t n, uint64_t seed)
{
	struct util_prng r;
	util_prng_seed(&r, seed);
	util_prng_fill(&r, b, n);
}

static void test_fresh_is_erased(void **state)
{
	(void)state;
	struct flash_dev *d = small_nand(2048, 1, false);
	uint8_t buf[16384];
	assert_int_equal(flash_read(d, 3, 0, buf, sizeof(buf)), 0);
	for (size_t i = 0; i < sizeof(buf); i++)
		assert_int_equal(buf[i], 0xFF);
	assert_int_equal(flash_is_bad(d, 3), 0);
	assert_true(flash_is_sim(d));
	flash_close(d);
}

static void test_program_read_back(void **state)
{
	(void)state;
	struct flash_dev *d = small_nand(2048, 1, false);
	uint8_t w[4096], r[4096];
	fill(w, sizeof(w), 7);
	assert_int_equal(flash_write(d, 2, 2048, w, sizeof(w)), 0);
	assert_int_equal(flash_read(d, 2, 2048, r, sizeof(r)), 0);
	assert_memory_equal(w, r, sizeof(w));
	/* Partial read inside a page. */
	assert_int_equal(flash_read(d, 2, 2048 + 100, r, 50), 0);
	assert_memory_equal(w + 100, r, 50);
	flash_close(d);
}

static void test_program_twice_refused(void **state)
{
	(void)state;
	struct flash_dev *d = small_nand(2048, 1, false);
	uint8_t w[2048];
	fill(w, sizeof(w), 1);
	struct flash_stats st;
	assert_int_equal(flash_write(d, 0, 0, w, sizeof(w)), 0);
	assert_int_equal(flash_write(d, 0, 0, w, sizeof(w)), -EIO);
	flash_sim_get_stats(d, &st);
	assert_int_equal(st.rule_violations, 1);
	/* After an erase the page can be programmed again. */
	assert_int_equal(flash_erase(d, 0), 0);
	assert_int_equal(flash_write(d, 0, 0, w, sizeof(w)), 0);
	flash_close(d);
}

static void test_subpages(void **state)
{
	(void)state;
	/* The kernel writes the EC header as sub-page 0 and the VID header
	 * as sub-page 1 of the same page. */
	struct flash_dev *d = small_nand(512, 1, false);
	uint8_t ec[512], vid[512], r[2048];
	fill(ec, sizeof(ec), 2);
	fill(vid, sizeof(vid), 3);
	assert_int_equal(flash_write(d, 1, 0, ec, 512), 0);
	assert_int_equal(flash_write(d, 1, 512, vid, 512), 0);
	assert_int_equal(flash_read(d, 1, 0, r, 2048), 0);
	assert_memory_equal(r, ec, 512);
	assert_memory_equal(r + 512, vid, 512);
	for (int i = 1024; i < 2048; i++)
		assert_int_equal(r[i], 0xFF);
	/* Same sub-page again: refused. Misaligned: refused. */
	assert_int_equal(flash_write(d, 1, 512, vid, 512), -EIO);
	assert_int_equal(flash_write(d, 1, 1024 + 8, vid, 512), -EINVAL);
	assert_int_equal(flash_write(d, 1, 1024, vid, 100), -EINVAL);
	struct flash_stats st;
	flash_sim_get_stats(d, &st);
	assert_int_equal(st.rule_violations, 3);
	flash_close(d);
}

static void test_nop(void **state)
{
	(void)state;
	struct flash_dev *d = small_nand(2048, 2, false);
	uint8_t a[2048], b[2048], r[2048];
	memset(a, 0xFF, sizeof(a));
	memset(b, 0xFF, sizeof(b));
	a[0] = 0x0F;
	b[1] = 0x00;
	assert_int_equal(flash_write(d, 0, 0, a, 2048), 0);
	assert_int_equal(flash_write(d, 0, 0, b, 2048), 0); /* NOP 2: second program allowed */
	assert_int_equal(flash_read(d, 0, 0, r, 2048), 0);
	assert_int_equal(r[0], 0x0F);
	assert_int_equal(r[1], 0x00);
	assert_int_equal(flash_write(d, 0, 0, b, 2048), -EIO); /* third: over NOP */
	flash_close(d);
}

static void test_in_order(void **state)
{
	(void)state;
	struct flash_dev *d = small_nand(2048, 1, true);
	uint8_t w[2048];
	fill(w, sizeof(w), 4);
	assert_int_equal(flash_write(d, 0, 3 * 2048, w, 2048), 0);
	assert_int_equal(flash_write(d, 0, 1 * 2048, w, 2048), -EIO);
	assert_int_equal(flash_write(d, 0, 5 * 2048, w, 2048), 0);
	flash_close(d);
	/* Without the option, any order works. */
	d = small_nand(2048, 1, false);
	assert_int_equal(flash_write(d, 0, 3 * 2048, w, 2048), 0);
	assert_int_equal(flash_write(d, 0, 1 * 2048, w, 2048), 0);
	flash_close(d);
}

static void test_power_cut_program(void **state)
{
	(void)state;
	struct flash_dev *d = small_nand(2048, 1, false);
	uint8_t w[2048], r[2048];
	fill(w, sizeof(w), 5);
	flash_sim_power_cut_after(d, 2);
	assert_int_equal(flash_write(d, 0, 0, w, 2048), 0);
	assert_int_equal(flash_sim_op_count(d), 1);
	assert_false(flash_sim_is_cut(d));
	assert_int_equal(flash_write(d, 0, 2048, w, 2048), -EIO);
	assert_true(flash_sim_is_cut(d));
	assert_int_equal(flash_read(d, 0, 0, r, 2048), -EIO);
	assert_int_equal(flash_erase(d, 1), -EIO);
	assert_int_equal(flash_is_bad(d, 1), -EIO);
	assert_int_equal(flash_sim_reopen(d), 0);
	assert_int_equal(flash_read(d, 0, 0, r, 2048), 0);
	assert_memory_equal(r, w, 2048);
	assert_int_equal(flash_read(d, 0, 2048, r, 2048), 0);
	int all_ff = 1, equal = memcmp(r, w, 2048) == 0;
	for (int i = 0; i < 2048; i++)
		all_ff &= r[i] == 0xFF;
	assert_false(all_ff);
	assert_false(equal);
	flash_close(d);
}


static struct flash_dev *seeded_nand(uint64_t seed, bool per_page)
{
	struct flash_sim_config c;
	flash_sim_config_default(&c);
	c.geo.peb_size = 16384;
	c.geo.peb_count = 16;
	c.seed = seed;
	c.erase_cut_per_page = per_page;
	struct flash_dev *d = NULL;
	assert_int_equal(flash_sim_create(&c, &d), 0);
	return d;
}

enum { PG_OLD, PG_ERASED, PG_DAMAGED };

/* what a cut erase left of each page: old bytes, 0xFF, or neither */
static void classify(const uint8_t *r, const uint8_t *w, unsigned npages, int *kind)
{
	for (unsigned p = 0; p < npages; p++) {
		const uint8_t *a = r + p * 2048, *b = w + p * 2048;
		int old = !memcmp(a, b, 2048), ff = 1;
		for (unsigned i = 0; i < 2048; i++)
			ff &= a[i] == 0xFF;
		kind[p] = old ? PG_OLD : ff ? PG_ERASED : PG_DAMAGED;
	}
}

/* A cut erase, as NAND erases (the default): the block comes out alike.
 * Pages 0-5 programmed with random bytes, 6-7 left erased. Over 200 seeds:
 * every outcome is untouched (every page as before), nearly erased (a few
 * bits still 0, in at most 4 pages) or partly erased (every programmed
 * page damaged, only bits set to 1: no 0 appears where the old byte had a
 * 1), and each outcome occurs. With erase_cut_per_page the pages go their
 * own ways: mixes of old and damaged pages occur. */
static void test_power_cut_erase(void **state)
{
	(void)state;
	uint8_t w[16384], r[16384];
	fill(w, 6 * 2048, 9);
	memset(w + 6 * 2048, 0xFF, 2 * 2048);
	unsigned seen[3] = {0, 0, 0}, mixed_per_page = 0;
	for (uint64_t seed = 1; seed <= 200; seed++) {
		for (int per_page = 0; per_page < 2; per_page++) {
			struct flash_dev *d = seeded_nand(seed, per_page);
			assert_int_equal(flash_write(d, 4, 0, w, 6 * 2048), 0);
			flash_sim_power_cut_after(d, 1);
			assert_int_equal(flash_erase(d, 4), -EIO);
			assert_true(flash_sim_is_cut(d));
			assert_int_equal(flash_write(d, 5, 0, w, 2048), -EIO);
			assert_int_equal(flash_mark_bad(d, 5), -EIO);
			assert_int_equal(flash_sim_reopen(d), 0);
			assert_int_equal(flash_read(d, 4, 0, r, sizeof(r)), 0);
			int kind[8], n[3] = {0, 0, 0};
			classify(r, w, 8, kind);
			for (int p = 0; p < 8; p++)
				n[kind[p]]++;
			/* the per-page model never leaves the block all 0xFF */
			if (per_page)
				assert_true(n[PG_ERASED] < 8);
			for (size_t i = 0; i < sizeof(r); i++)
				assert_int_equal(r[i] & w[i], w[i]); /* erasing only sets bits */
			if (per_page) {
				mixed_per_page += n[PG_OLD] > 0 && n[PG_DAMAGED] > 0;
			} else if (n[PG_OLD] == 8) {
				seen[0]++;
			} else {
				/* nothing programmed survives a partial erase */
				for (int p = 0; p < 6; p++)
					assert_int_not_equal(kind[p], PG_OLD);
				unsigned zeros = 0;
				for (size_t i = 0; i < sizeof(r); i++)
					zeros += (unsigned)__builtin_popcount((unsigned)(uint8_t)~r[i]);
				seen[zeros <= 4 ? 1 : 2]++;
				if (zeros > 4) /* partly: every programmed page hit */
					for (int p = 0; p < 6; p++)
						assert_int_equal(kind[p], PG_DAMAGED);
			}
			if (n[PG_OLD] != 8) {
				/* a block an erase left is not erased: programming a page
				 * that kept 0 bits fails until it is erased again */
				int kept = -1;
				for (int p = 0; p < 8 && kept < 0; p++)
					if (kind[p] == PG_DAMAGED)
						kept = p;
				static uint8_t z[2048];
				if (kept >= 0)
					assert_int_equal(flash_write(d, 4, (uint32_t)kept * 2048, z, 2048), -EIO);
				else
					assert_true(per_page);
			}
			assert_int_equal(flash_erase(d, 4), 0);
			assert_int_equal(flash_read(d, 4, 0, r, sizeof(r)), 0);
			for (size_t i = 0; i < sizeof(r); i++)
				assert_int_equal(r[i], 0xFF);
			assert_int_equal(flash_sim_get_wear(d, 4), 2);
			flash_close(d);
		}
	}
	printf("block model: %u untouched, %u nearly erased, %u partly erased; per-page model: %u mixed\n", seen[0],
	       seen[1], seen[2], mixed_per_page);
	assert_true(seen[0] > 20 && seen[1] > 20 && seen[2] > 50);
	assert_true(mixed_per_page > 20);
}

static void test_power_cut_deterministic(void **state)
{
	(void)state;
	uint8_t w[16384], r1[16384], r2[16384];
	fill(w, sizeof(w), 10);
	uint8_t *outs[2] = {r1, r2};
	for (int k = 0; k < 2; k++) {
		struct flash_dev *d = small_nand(2048, 1, false);
		flash_sim_power_cut_random(d, 77, 3);
		int ret = 0;
		for (uint32_t p = 0; p < 8 && ret == 0; p++)
			ret = flash_write(d, 0, p * 2048, w + p * 2048, 2048);
		assert_int_equal(ret, -EIO);
		flash_sim_reopen(d);
		assert_int_equal(flash_read(d, 0, 0, outs[k], 16384), 0);
		flash_close(d);
	}
	assert_memory_equal(r1, r2, sizeof(r1));
}

static void test_erase_and_wear_out(void **state)
{
	(void)state;
	struct flash_sim_config c;
	flash_sim_config_default(&c);
	c.geo.peb_size = 16384;
	c.geo.peb_count = 4;
	c.endurance = 5;
	struct flash_dev *d = NULL;
	assert_int_equal(flash_sim_create(&c, &d), 0);
	uint8_t w[2048];
	fill(w, sizeof(w), 11);
	for (int i = 0; i < 5; i++) {
		assert_int_equal(flash_write(d, 1, 0, w, 2048), 0);
		assert_int_equal(flash_erase(d, 1), 0);
	}
	assert_int_equal(flash_sim_get_wear(d, 1), 5);
	assert_int_equal(flash_is_bad(d, 1), 0);
	assert_int_equal(flash_erase(d, 1), -EIO);
	assert_int_equal(flash_is_bad(d, 1), 1);
	assert_int_equal(flash_write(d, 1, 0, w, 2048), -EIO);
	assert_int_equal(flash_erase(d, 1), -EIO);
	struct flash_wear_stats ws;
	flash_sim_wear_stats(d, &ws);
	assert_int_equal(ws.min, 0);
	assert_int_equal(ws.max, 5);
	assert_true(ws.mean > 1.24 && ws.mean < 1.26);
	/* stddev of {0,5,0,0} = sqrt(mean of squares - mean^2) = sqrt(6.25-1.5625) */
	assert_true(ws.stddev > 2.16 && ws.stddev < 2.17);
	/* set_wear simulates an old part. */
	assert_int_equal(flash_sim_set_wear(d, 2, 5), 0);
	assert_int_equal(flash_erase(d, 2), -EIO);
	flash_close(d);
}

static void test_mlc_profile(void **state)
{
	(void)state;
	struct flash_sim_config c;
	flash_sim_config_default(&c);
	assert_int_equal(flash_sim_config_profile(&c, "mlc"), 0);
	assert_int_equal(c.endurance, 3000);
	assert_int_equal(flash_sim_config_profile(&c, "tlc-bogus"), -EINVAL);
}

static void test_factory_bad_and_mark_bad(void **state)
{
	(void)state;
	struct flash_dev *d = small_nand(2048, 1, false);
	assert_int_equal(flash_sim_set_factory_bad(d, 3), 0);
	assert_int_equal(flash_is_bad(d, 3), 1);
	assert_int_equal(flash_erase(d, 3), -EIO);
	assert_int_equal(flash_is_bad(d, 6), 0);
	assert_int_equal(flash_mark_bad(d, 6), 0);
	assert_int_equal(flash_is_bad(d, 6), 1);
	assert_int_equal(flash_is_bad(d, 16), -EINVAL);
	flash_close(d);
}

static void test_injected_failures(void **state)
{
	(void)state;
	struct flash_dev *d = small_nand(2048, 1, false);
	uint8_t w[2048];
	fill(w, sizeof(w), 12);
	assert_int_equal(flash_sim_fail_next_erase(d, 2), 0);
	assert_int_equal(flash_erase(d, 2), -EIO);
	assert_int_equal(flash_erase(d, 2), 0);
	assert_int_equal(flash_sim_fail_next_program(d, 2), 0);
	assert_int_equal(flash_write(d, 2, 0, w, 2048), -EIO);
	assert_int_equal(flash_write(d, 2, 2048, w, 2048), 0);
	flash_close(d);
}

static void test_bitflip_places(void **state)
{
	(void)state;
	struct flash_dev *d = small_nand(2048, 1, false);
	uint8_t w[4096], r[4096];
	fill(w, sizeof(w), 13);
	assert_int_equal(flash_write(d, 7, 0, w, sizeof(w)), 0);
	/* One-shot correctable flip on page 1: data correct, -EUCLEAN once. */
	assert_int_equal(flash_sim_inject_bitflip(d, 7, 1, false, false), 0);
	assert_int_equal(flash_read(d, 7, 0, r, 2048), 0); /* page 0 not affected */
	assert_int_equal(flash_read(d, 7, 0, r, 4096), -EUCLEAN);
	assert_memory_equal(r, w, 4096);
	assert_int_equal(flash_read(d, 7, 0, r, 4096), 0);
	/* Sticky uncorrectable on page 0: every read until erase. */
	assert_int_equal(flash_sim_inject_bitflip(d, 7, 0, true, true), 0);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(flash_read(d, 7, 0, r, 2048), -EBADMSG);
		assert_memory_not_equal(r, w, 2048);
	}
	struct flash_stats st;
	flash_sim_get_stats(d, &st);
	assert_int_equal(st.bitflips_corrected, 1);
	assert_int_equal(st.ecc_failures, 3);
	assert_int_equal(flash_erase(d, 7), 0);
	assert_int_equal(flash_read(d, 7, 0, r, 2048), 0);
	/* Sticky correctable. */
	assert_int_equal(flash_sim_inject_bitflip(d, 7, 2, false, true), 0);
	assert_int_equal(flash_read(d, 7, 4096, r, 10), -EUCLEAN);
	assert_int_equal(flash_read(d, 7, 4096, r, 10), -EUCLEAN);
	assert_int_equal(flash_sim_inject_bitflip(d, 7, 8, false, true), -EINVAL);
	flash_close(d);
}

static void test_bitflip_rates(void **state)
{
	(void)state;
	struct flash_sim_config c;
	flash_sim_config_default(&c);
	c.geo.peb_size = 16384;
	c.geo.peb_count = 4;
	c.bitflip_rate = 0.1;
	c.uncorrectable_rate = 0.01;
	c.seed = 42;
	uint64_t counts[2][2];
	for (int k = 0; k < 2; k++) {
		struct flash_dev *d = NULL;
		assert_int_equal(flash_sim_create(&c, &d), 0);
		uint8_t w[2048], r[2048];
		fill(w, sizeof(w), 14);
		assert_int_equal(flash_write(d, 0, 0, w, 2048), 0);
		int nclean = 0, nbad = 0;
		for (int i = 0; i < 10000; i++) {
			int ret = flash_read(d, 0, 0, r, 2048);
			if (ret == -EUCLEAN) {
				assert_memory_equal(r, w, 2048);
				nclean++;
			} else if (ret == -EBADMSG) {
				assert_memory_not_equal(r, w, 2048);
				nbad++;
			} else {
				assert_int_equal(ret, 0);
			}
		}
		assert_true(nclean > 800 && nclean < 1200);
		assert_true(nbad > 60 && nbad < 140);
		counts[k][0] = (uint64_t)nclean;
		counts[k][1] = (uint64_t)nbad;
		flash_close(d);
	}
	/* Same seed, same results. */
	assert_int_equal(counts[0][0], counts[1][0]);
	assert_int_equal(counts[0][1], counts[1][1]);
}

static void test_nor_rules(void **state)
{
	(void)state;
	struct flash_sim_config c;
	flash_sim_config_default(&c);
	assert_int_equal(flash_sim_config_profile(&c, "nor"), 0);
	c.geo.peb_count = 4;
	struct flash_dev *d = NULL;
	assert_int_equal(flash_sim_create(&c, &d), 0);
	assert_int_equal(d->geo.type, FLASH_NOR);
	uint8_t a = 0xF0, b = 0x3C, r;
	/* Any offset, any length; bits only go 1 -> 0 (AND). */
	assert_int_equal(flash_write(d, 1, 13, &a, 1), 0);
	assert_int_equal(flash_write(d, 1, 13, &b, 1), 0);
	assert_int_equal(flash_read(d, 1, 13, &r, 1), 0);
	assert_int_equal(r, 0x30);
	uint8_t w[1000], rb[1000];
	fill(w, sizeof(w), 15);
	assert_int_equal(flash_write(d, 2, 777, w, sizeof(w)), 0);
	assert_int_equal(flash_read(d, 2, 777, rb, sizeof(rb)), 0);
	assert_memory_equal(w, rb, sizeof(w));
	assert_int_equal(flash_erase(d, 1), 0);
	assert_int_equal(flash_read(d, 1, 13, &r, 1), 0);
	assert_int_equal(r, 0xFF);
	/* Power cut in a NOR program. */
	flash_sim_power_cut_after(d, 1);
	assert_int_equal(flash_write(d, 3, 0, w, sizeof(w)), -EIO);
	flash_sim_reopen(d);
	assert_int_equal(flash_read(d, 3, 0, rb, sizeof(rb)), 0);
	assert_memory_not_equal(w, rb, sizeof(w));
	flash_close(d);
}

static void test_timing_and_counters(void **state)
{
	(void)state;
	struct flash_dev *d = small_nand(512, 1, false);
	uint8_t w[4096], r[4096];
	fill(w, sizeof(w), 16);
	flash_sim_reset_stats(d);
	assert_int_equal(flash_write(d, 0, 0, w, 4096), 0);  /* 2 whole pages */
	assert_int_equal(flash_write(d, 0, 4096, w, 512), 0); /* 1 sub-page: 1 page program */
	assert_int_equal(flash_write(d, 0, 4608, w, 1024), 0); /* 2 sub-pages of the same page */
	assert_int_equal(flash_read(d, 0, 1000, r, 2000), 0); /* pages 0 and 1 */
	assert_int_equal(flash_erase(d, 0), 0);
	struct flash_stats st;
	flash_sim_get_stats(d, &st);
	assert_int_equal(st.programs, 3);
	assert_int_equal(st.pages_programmed, 4);
	assert_int_equal(st.bytes_programmed, 5632);
	assert_int_equal(st.reads, 1);
	assert_int_equal(st.pages_read, 2);
	assert_int_equal(st.bytes_read, 2000);
	assert_int_equal(st.erases, 1);
	/* 4 x 200 us + 2 x 25 us + 1.5 ms + (4096+512+1024+2000) B at 40 MB/s */
	uint64_t expect = 4 * 200000ull + 2 * 25000ull + 1500000ull + (4096ull + 512 + 1024 + 2000) * 25;
	assert_int_equal(st.sim_time_ns, expect);
	flash_sim_reset_stats(d);
	flash_sim_get_stats(d, &st);
	assert_int_equal(st.sim_time_ns, 0);
	assert_int_equal(st.programs, 0);
	flash_close(d);
}

static void test_range_checks(void **state)
{
	(void)state;
	struct flash_dev *d = small_nand(2048, 1, false);
	uint8_t w[2048];
	fill(w, sizeof(w), 17);
	assert_int_equal(flash_read(d, 0, 16384 - 10, w, 20), -EINVAL);
	assert_int_equal(flash_write(d, 0, 16384, w, 2048), -EINVAL);
	assert_int_equal(flash_erase(d, 99), -EINVAL);
	assert_true(flash_sim_last_error(d)[0] != '\0');
	flash_close(d);
}

/* The simulator's own calls on a device that is no simulator (here a
 * window over one) and on PEBs past the end: refused as flash_sim.h says
 * (-EINVAL, 0, "", zeroed results), nothing done to the flash below. */
static void test_api_refusals(void **state)
{
	(void)state;
	struct flash_dev *d = small_nand(2048, 1, false), *w = NULL, *x_unused = NULL;
	assert_int_equal(flash_write(d, 1, 0, (uint8_t[2048]){0x5A}, 2048), 0);
	struct flash_dev *under = small_nand(2048, 1, false);
	assert_int_equal(flash_window_open(under, 0, 16384 * 16, 16, &w), 0);
	assert_true(flash_is_sim(d));
	assert_false(flash_is_sim(w));
	assert_false(flash_is_sim(NULL));
	struct flash_dev *devs[2] = {w, d};
	for (int i = 0; i < 2; i++) {
		struct flash_dev *x = devs[i];
		uint32_t peb = i ? 16 : 0; /* the sim: one past the end */
		assert_int_equal(flash_sim_bad_kind(x, peb), -EINVAL);
		assert_int_equal(flash_sim_peb_is_erased(x, peb), -EINVAL);
		assert_int_equal(flash_sim_set_factory_bad(x, peb), -EINVAL);
		assert_int_equal(flash_sim_inject_bitflip(x, peb, 0, true, true), -EINVAL);
		assert_int_equal(flash_sim_set_wear(x, peb, 5), -EINVAL);
		assert_int_equal(flash_sim_get_wear(x, peb), 0);
		assert_int_equal(flash_sim_fail_next_erase(x, peb), -EINVAL);
		assert_int_equal(flash_sim_fail_next_program(x, peb), -EINVAL);
	}
	/* a page past the PEB's last */
	assert_int_equal(flash_sim_inject_bitflip(d, 1, 8, false, false), -EINVAL);
	assert_string_equal(flash_sim_last_error(w), "");
	struct flash_sim_config c;
	memset(&c, 0x55, sizeof(c));
	flash_sim_get_config(w, &c);
	assert_int_equal(c.geo.peb_count, 0);
	assert_int_equal(c.endurance, 0);
	struct flash_stats st;
	memset(&st, 0x55, sizeof(st));
	flash_sim_get_stats(w, &st);
	assert_int_equal(st.reads, 0);
	flash_sim_reset_stats(w);
	struct flash_wear_stats ws;
	flash_sim_wear_stats(w, &ws);
	assert_int_equal(ws.max, 0);
	flash_sim_power_cut_after(w, 1);
	flash_sim_power_cut_random(w, 1, 10);
	assert_int_equal(flash_sim_op_count(w), 0);
	assert_false(flash_sim_is_cut(w));
	assert_int_equal(flash_sim_reopen(w), -EINVAL);
	assert_int_equal(flash_sim_reserve(w), -EINVAL);
	assert_int_equal(flash_sim_reserve(d), 0); /* RAM: nothing to reserve */
	/* the flash below the window: still erased, no operation counted */
	assert_int_equal(flash_sim_op_count(under), 0);
	assert_int_equal(flash_sim_peb_is_erased(under, 0), 1);
	/* the sim's own PEB 1 as written, the rest erased */
	assert_int_equal(flash_sim_peb_is_erased(d, 1), 0);
	assert_int_equal(flash_sim_peb_is_erased(d, 2), 1);
	/* the geometry check, as create and open do it */
	char msg[200];
	static const struct {
		struct flash_geometry g;
		const char *why;
	} bad[] = {
		{{(enum flash_type)7, 2048, 2048, 64, 16384, 4}, "neither NAND nor NOR"},
		{{FLASH_NAND, 2048, 2048, 64, 0, 4}, "non-zero"},
		{{FLASH_NAND, 2048, 2048, 64, 16384, 0}, "non-zero"},
		{{FLASH_NOR, 2048, 1, 0, 65536, 4}, "NOR flash has 1-byte"},
		{{FLASH_NOR, 1, 2, 0, 65536, 4}, "NOR flash has 1-byte"},
		{{FLASH_NOR, 1, 1, 16, 65536, 4}, "NOR flash has 1-byte"},
		{{FLASH_NAND, 0, 2048, 64, 16384, 4}, "not a power of two"},
		{{FLASH_NAND, 2 << 20, 2 << 20, 64, 2 << 20, 4}, "larger than"},
		{{FLASH_NAND, 2048, 2048, 4096, 16384, 4}, "OOB size 4096"},
		{{FLASH_NAND, 2048, 0, 64, 16384, 4}, "sub-page size 0"},
		{{FLASH_NAND, 2048, 4096, 64, 16384, 4}, "sub-page size 4096"},
		{{FLASH_NAND, 2048, 1536, 64, 16384, 4}, "sub-page size 1536"},
		{{FLASH_NAND, 2048, 2048, 64, 16384 + 512, 4}, "not a multiple"},
		{{FLASH_NAND, 1 << 20, 2048, 64, 1 << 20, 4}, "too many sub-pages"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		msg[0] = 0;
		assert_int_equal(flash_sim_check_geometry(&bad[i].g, msg, sizeof(msg)), -EINVAL);
		if (!strstr(msg, bad[i].why))
			fail_msg("geometry %zu: \"%s\", want \"%s\"", i, msg, bad[i].why);
		c.geo = bad[i].g;
		c.path = NULL;
		struct flash_dev *x = (struct flash_dev *)&c; /* must be overwritten with NULL */
		assert_int_equal(flash_sim_create_ex(&c, &x, NULL, 0), -EINVAL);
		assert_null(x);
	}
	static const struct flash_geometry nor = {FLASH_NOR, 1, 1, 0, 65536, 4};
	assert_int_equal(flash_sim_check_geometry(&nor, NULL, 0), 0);
	flash_sim_config_default(&c);
	assert_int_equal(flash_sim_config_profile(&c, "nor"), 0);
	assert_int_equal(flash_sim_check_geometry(&c.geo, msg, sizeof(msg)), 0);
	assert_int_equal(flash_sim_config_profile(&c, "slc"), 0);
	assert_int_equal(c.geo.type, FLASH_NAND);
	/* edges of the calls themselves: empty reads and programs, a read
	 * past the PEB, an errbuf of length 0, more flips than the first
	 * array holds, a random cut with no range (disabled) */
	uint8_t b[2048];
	assert_int_equal(flash_read(d, 1, 16384, b, 0), 0);
	assert_int_equal(flash_write(d, 2, 0, b, 0), 0);
	assert_int_equal(flash_read(d, 1, 16385, b, 0), -EINVAL);
	assert_int_equal(flash_write(d, 2, 16385, b, 0), -EINVAL);
	c.geo = bad[0].g;
	strcpy(msg, "unchanged");
	assert_int_equal(flash_sim_create_ex(&c, &x_unused, msg, 0), -EINVAL);
	assert_string_equal(msg, "unchanged");
	for (uint32_t p = 0; p < 8; p++)
		for (uint32_t k = 0; k < 3; k++)
			assert_int_equal(flash_sim_inject_bitflip(d, 3 + k, p, k == 2, false), 0);
	for (uint32_t k = 0; k < 3; k++)
		for (uint32_t p = 0; p < 8; p++)
			assert_int_equal(flash_read(d, 3 + k, p * 2048, b, 2048), k == 2 ? -EBADMSG : -EUCLEAN);
	assert_int_equal(flash_read(d, 3, 0, b, 2048), 0); /* not sticky: gone once read */
	flash_sim_power_cut_random(d, 5, 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(flash_erase(d, 7), 0);
	assert_false(flash_sim_is_cut(d));
	flash_close(d);
	/* the erase counter sticks at its maximum instead of wrapping */
	flash_sim_config_default(&c);
	c.geo.peb_size = 16384;
	c.geo.peb_count = 16;
	c.endurance = 0;
	assert_int_equal(flash_sim_create(&c, &d), 0);
	assert_int_equal(flash_sim_set_wear(d, 8, UINT32_MAX), 0);
	assert_int_equal(flash_erase(d, 8), 0);
	assert_int_equal(flash_sim_get_wear(d, 8), UINT32_MAX);
	flash_close(d);
	/* no bus time when the bus rate is 0; an uncorrectable rate alone
	 * (certain here) fails every page read */
	c.timing.bus_bytes_per_sec = 0;
	c.uncorrectable_rate = 1.0;
	assert_int_equal(flash_sim_create(&c, &d), 0);
	assert_int_equal(flash_read(d, 0, 0, b, 2048), -EBADMSG);
	flash_sim_get_stats(d, &st);
	assert_int_equal(st.sim_time_ns, c.timing.page_read_ns);
	assert_int_equal(st.ecc_failures, 1);
	flash_close(d);
	flash_close(w);
}

static void test_power_cut_multi_page_write(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 8; seed++) {
		struct flash_sim_config c;
		flash_sim_config_default(&c);
		c.geo.peb_size = 16384;
		c.geo.peb_count = 2;
		c.seed = seed;
		struct flash_dev *d = NULL;
		assert_int_equal(flash_sim_create(&c, &d), 0);
		uint8_t w[16384], r[16384];
		fill(w, sizeof(w), 100 + seed);
		flash_sim_power_cut_after(d, 1);
		assert_int_equal(flash_write(d, 1, 0, w, sizeof(w)), -EIO);
		flash_sim_reopen(d);
		assert_int_equal(flash_read(d, 1, 0, r, sizeof(r)), 0);
		/* Pages before the cut page are complete, the cut page is
		 * partial, later pages untouched. */
		uint32_t p = 0;
		while (p < 8 && !memcmp(r + p * 2048, w + p * 2048, 2048))
			p++;
		assert_true(p < 8);
		assert_memory_not_equal(r + p * 2048, w + p * 2048, 2048);
		for (uint32_t q = p + 1; q < 8; q++)
			for (int i = 0; i < 2048; i++)
				assert_int_equal(r[q * 2048 + i], 0xFF);
		/* The cut page cannot be programmed again (NOP used), the
		 * next one can. */
		assert_int_equal(flash_write(d, 1, p * 2048, w, 2048), -EIO);
		if (p < 7)
			assert_int_equal(flash_write(d, 1, (p + 1) * 2048, w, 2048), 0);
		flash_close(d);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fresh_is_erased),
		cmocka_unit_test(test_program_read_back),
		cmocka_unit_test(test_program_twice_refused),
		cmocka_unit_test(test_subpages),
		cmocka_unit_test(test_nop),
		cmocka_unit_test(test_in_order),
		cmocka_unit_test(test_power_cut_program),
		cmocka_unit_test(test_power_cut_erase),
		cmocka_unit_test(test_power_cut_multi_page_write),
		cmocka_unit_test(test_power_cut_deterministic),
		cmocka_unit_test(test_erase_and_wear_out),
		cmocka_unit_test(test_mlc_profile),
		cmocka_unit_test(test_factory_bad_and_mark_bad),
		cmocka_unit_test(test_injected_failures),
		cmocka_unit_test(test_bitflip_places),
		cmocka_unit_test(test_bitflip_rates),
		cmocka_unit_test(test_nor_rules),
		cmocka_unit_test(test_timing_and_counters),
		cmocka_unit_test(test_range_checks),
		cmocka_unit_test(test_api_refusals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
