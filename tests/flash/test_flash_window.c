/* test_flash_window — the read-only window into a flash (flash_window.h)
 * against a model: a RAM simulator flash filled with a known pattern, the
 * model being that pattern as bytes of the whole flash. A window at base B
 * of size S with N PEBs must read byte (B + peb * peb_size + off) of the
 * model while it lies below B + S and inside the flash, 0xFF after; it
 * must refuse writes, erases and bad-block marking (-EROFS) and reads or
 * queries outside its PEBs (-EINVAL); bad blocks below show through only
 * for a PEB-aligned base; ECC results of the flash below pass through,
 * an uncorrectable error winning over a correctable one in the same read
 * (the MTD rule). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "flash/flash.h"
#include "flash/flash_sim.h"
#include "flash/flash_window.h"

#define PAGE 2048u
#define PEB (64u * PAGE)
#define PEBS 8u

static uint8_t model[(size_t)PEB * PEBS];

static uint8_t pattern(uint64_t a)
{
	return (uint8_t)(a * 131 + (a >> 11) * 7 + (a >> 17));
}

static struct flash_dev *make_flash(void)
{
	struct flash_sim_config c;
	flash_sim_config_default(&c);
	c.geo.type = FLASH_NAND;
	c.geo.page_size = PAGE;
	c.geo.subpage_size = PAGE;
	c.geo.oob_size = 64;
	c.geo.peb_size = PEB;
	c.geo.peb_count = PEBS;
	c.bitflip_rate = 0;
	c.uncorrectable_rate = 0;
	struct flash_dev *d;
	assert_int_equal(flash_sim_create(&c, &d), 0);
	for (uint64_t a = 0; a < sizeof(model); a++)
		model[a] = pattern(a);
	/* PEB 6 stays erased (as after an image's end) */
	memset(model + (size_t)6 * PEB, 0xFF, PEB);
	for (uint32_t p = 0; p < PEBS; p++)
		if (p != 6)
			assert_int_equal(flash_write(d, p, 0, model + (size_t)p * PEB, PEB), 0);
	return d;
}

/* What the window must read: the model inside [base, base+size), 0xFF after. */
static void expect(uint64_t base, uint64_t size, uint32_t peb, uint32_t off, size_t len, uint8_t *out)
{
	for (size_t i = 0; i < len; i++) {
		uint64_t a = base + (uint64_t)peb * PEB + off + i;
		out[i] = a < base + size && a < sizeof(model) ? model[a] : 0xFF;
	}
}

static void check_reads(struct flash_dev *w, uint64_t base, uint64_t size, uint32_t wpebs)
{
	static uint8_t got[PEB], want[PEB];
	/* whole PEBs, then pieces around the flash's PEB boundaries */
	for (uint32_t p = 0; p < wpebs; p++) {
		memset(got, 0, sizeof(got));
		assert_int_equal(flash_read(w, p, 0, got, PEB), 0);
		expect(base, size, p, 0, PEB, want);
		if (memcmp(got, want, PEB))
			fail_msg("base %llu size %llu: PEB %u differs from the model", (unsigned long long)base,
				 (unsigned long long)size, p);
	}
	uint64_t seed = 12345 + base;
	for (int k = 0; k < 400; k++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		uint32_t p = (uint32_t)(seed >> 33) % wpebs;
		uint32_t off = (uint32_t)(seed >> 13) % PEB;
		size_t len = (size_t)((seed >> 40) % (PEB - off + 1));
		memset(got, 0, len);
		assert_int_equal(flash_read(w, p, off, got, len), 0);
		expect(base, size, p, off, len, want);
		if (memcmp(got, want, len))
			fail_msg("base %llu: PEB %u off %u len %zu differs from the model", (unsigned long long)base, p, off,
				 len);
	}
}

static void test_reads(void **state)
{
	(void)state;
	struct flash_dev *under = make_flash(), *w;
	/* unaligned base, the window's bytes end inside flash PEB 4, its
	 * PEBs past them read erased */
	uint64_t base = PEB + PEB / 2 + 100, size = 2 * (uint64_t)PEB + 5000;
	assert_int_equal(flash_window_open(under, base, size, 4, &w), 0);
	assert_int_equal(w->geo.peb_count, 4);
	assert_int_equal(w->geo.peb_size, PEB);
	assert_true(w->read_only);
	check_reads(w, base, size, 4);
	flash_close(w);
	/* a window running past the end of the flash below */
	under = make_flash();
	base = 5 * (uint64_t)PEB + 3 * PAGE;
	assert_int_equal(flash_window_open(under, base, (uint64_t)PEB * PEBS, 4, &w), 0);
	check_reads(w, base, (uint64_t)PEB * PEBS, 4);
	flash_close(w);
}

static void test_refusals(void **state)
{
	(void)state;
	struct flash_dev *under = make_flash(), *w;
	assert_int_equal(flash_window_open(NULL, 0, PEB, 1, &w), -EINVAL);
	assert_null(w);
	assert_int_equal(flash_window_open(under, 0, PEB, 0, &w), -EINVAL);
	assert_int_equal(flash_window_open(under, PEB, 3 * (uint64_t)PEB, 3, &w), 0);
	uint8_t b[PAGE];
	memset(b, 0, sizeof(b));
	assert_int_equal(flash_write(w, 0, 0, b, PAGE), -EROFS);
	assert_int_equal(flash_erase(w, 0), -EROFS);
	assert_int_equal(flash_mark_bad(w, 0), -EROFS);
	assert_int_equal(flash_sync(w), 0);
	assert_int_equal(flash_read(w, 3, 0, b, PAGE), -EINVAL);
	assert_int_equal(flash_read(w, 0, PEB + 1, b, 0), -EINVAL);
	assert_int_equal(flash_read(w, 0, PEB - 10, b, 11), -EINVAL);
	assert_int_equal(flash_is_bad(w, 3), -EINVAL);
	assert_string_equal(flash_errmsg(w), flash_errmsg(under));
	/* the flash below was not written: still the model */
	static uint8_t got[PEB];
	assert_int_equal(flash_read(under, 1, 0, got, PEB), 0);
	assert_memory_equal(got, model + PEB, PEB);
	flash_close(w);
}

static void test_bad_blocks(void **state)
{
	(void)state;
	struct flash_dev *under = make_flash(), *w;
	assert_int_equal(flash_sim_set_factory_bad(under, 3), 0);
	/* aligned base 2 PEBs: window PEB 1 is flash PEB 3 */
	assert_int_equal(flash_window_open(under, 2 * (uint64_t)PEB, 5 * (uint64_t)PEB, 6, &w), 0);
	assert_int_equal(flash_is_bad(w, 0), 0);
	assert_int_equal(flash_is_bad(w, 1), 1);
	assert_int_equal(flash_is_bad(w, 2), 0);
	assert_int_equal(flash_is_bad(w, 5), 0); /* past the window's bytes and the flash */
	flash_close(w);
	/* a window whose bytes end before the bad PEB does not see it */
	under = make_flash();
	assert_int_equal(flash_sim_set_factory_bad(under, 3), 0);
	assert_int_equal(flash_window_open(under, 2 * (uint64_t)PEB, (uint64_t)PEB, 3, &w), 0);
	assert_int_equal(flash_is_bad(w, 1), 0);
	flash_close(w);
	/* an unaligned base has no markers to look at */
	under = make_flash();
	assert_int_equal(flash_sim_set_factory_bad(under, 3), 0);
	assert_int_equal(flash_window_open(under, 2 * (uint64_t)PEB + PAGE, 5 * (uint64_t)PEB, 4, &w), 0);
	for (uint32_t p = 0; p < 4; p++)
		assert_int_equal(flash_is_bad(w, p), 0);
	flash_close(w);
}

static void test_ecc(void **state)
{
	(void)state;
	struct flash_dev *under = make_flash(), *w;
	uint64_t base = PEB + PEB / 2; /* window PEB 0 = second half of flash PEB 1 + first half of PEB 2 */
	assert_int_equal(flash_window_open(under, base, 4 * (uint64_t)PEB, 4, &w), 0);
	static uint8_t got[PEB], want[PEB];
	/* correctable flip in flash PEB 2 page 3: the data, -EUCLEAN */
	assert_int_equal(flash_sim_inject_bitflip(under, 2, 3, false, true), 0);
	assert_int_equal(flash_read(w, 0, 0, got, PEB), -EUCLEAN);
	expect(base, 4 * (uint64_t)PEB, 0, 0, PEB, want);
	assert_memory_equal(got, want, PEB);
	/* a read that does not cover that page: clean */
	assert_int_equal(flash_read(w, 0, 0, got, PEB / 2), 0);
	/* uncorrectable in flash PEB 1 page 40 as well: -EBADMSG wins, in
	 * whichever order the two pieces come */
	assert_int_equal(flash_sim_inject_bitflip(under, 1, 40, true, true), 0);
	assert_int_equal(flash_read(w, 0, 0, got, PEB), -EBADMSG);
	/* window PEB 2: flash PEB 3 second half (page 50 correctable), then
	 * flash PEB 4 first half (page 10 uncorrectable) */
	assert_int_equal(flash_sim_inject_bitflip(under, 3, 50, false, true), 0);
	assert_int_equal(flash_sim_inject_bitflip(under, 4, 10, true, true), 0);
	assert_int_equal(flash_read(w, 2, 0, got, PEB), -EBADMSG);
	/* only the correctable piece */
	assert_int_equal(flash_read(w, 2, 0, got, PEB / 2), -EUCLEAN);
	expect(base, 4 * (uint64_t)PEB, 2, 0, PEB / 2, want);
	assert_memory_equal(got, want, PEB / 2);
	flash_close(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reads),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_bad_blocks),
		cmocka_unit_test(test_ecc),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
