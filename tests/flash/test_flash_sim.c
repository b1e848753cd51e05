/* test_flash_sim — the simulator's rules in RAM: NAND programming rules
 * (erased-only, sub-pages, NOP, in-order), NOR AND-programming, erase and
 * wear-out, bad blocks, bit flips, power cuts, timing and counters. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "flash/flash_sim.h"
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
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
