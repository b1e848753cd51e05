/* test_ubi_faults — flash faults under UBI: correctable bit flips (read
 * succeeds, the PEB is scrubbed, data intact), uncorrectable reads
 * (-EBADMSG naming LEB and PEB), erase and program failures (torture,
 * bad-PEB marking from the reserve, write recovery), wear-out during a
 * long churn (no LEB data lost while reserves last, then a clean switch to
 * read-only: writes -EROFS, reads work), and read-only attach never
 * writing. */
#include "ubi_test.h"

#include "ubi/ubi_media.h"

enum { L = 15872 };

static uint32_t find_leb(struct flash_dev *f, uint32_t vol, uint32_t lnum)
{
	uint32_t best = UINT32_MAX;
	uint64_t bsq = 0;
	for (uint32_t p = 0; p < f->geo.peb_count; p++) {
		uint8_t b[64];
		struct ubi_vid_hdr h;
		/* a correctable flip still gives the header; any other read
		 * error means this PEB cannot be the one (its bytes are not
		 * what the flash holds) */
		int r = flash_read(f, p, 256, b, 64);
		if (r < 0 && r != -EUCLEAN)
			continue;
		if (ubi_vid_hdr_unpack(b, &h) == UBI_HDR_OK && h.vol_id == vol && h.lnum == lnum &&
		    (best == UINT32_MAX || h.sqnum > bsq)) {
			best = p;
			bsq = h.sqnum;
		}
	}
	return best;
}

static void test_correctable_flips_scrub(void **state)
{
	(void)state;
	struct flash_dev *f = t_nand(24, 1);
	struct ubi_device *u = t_attach(f);
	uint32_t v = t_mkvol(u, "v", 4, UBI_VID_DYNAMIC);
	static uint8_t a[L], b[L];
	t_fill(a, L, 3);
	T_OK(u, ubi_leb_write(u, v, 2, 0, a, L));
	T_OK(u, ubi_sync(u));
	uint32_t p = find_leb(f, v, 2);
	/* sticky flip on data page 3 of that PEB */
	assert_int_equal(flash_sim_inject_bitflip(f, p, 3, false, true), 0);
	T_OK(u, ubi_leb_read(u, v, 2, 0, b, L));
	assert_memory_equal(a, b, L);
	struct ubi_dev_info di;
	ubi_dev_info(u, &di);
	assert_int_equal(di.scrub_pending, 1);
	T_OK(u, ubi_flush_background(u));
	struct ubi_stats st;
	ubi_get_stats(u, &st);
	assert_int_equal(st.scrubs, 1);
	assert_int_not_equal(find_leb(f, v, 2), p);
	T_OK(u, ubi_leb_read(u, v, 2, 0, b, L));
	assert_memory_equal(a, b, L);
	u = t_reattach(u, f);
	T_OK(u, ubi_leb_read(u, v, 2, 0, b, L));
	assert_memory_equal(a, b, L);
	/* flips seen while scanning (EC header page) also lead to a scrub */
	p = find_leb(f, v, 2);
	ubi_detach(u);
	assert_int_equal(flash_sim_inject_bitflip(f, p, 0, false, false), 0);
	u = t_attach(f);
	ubi_dev_info(u, &di);
	assert_int_equal(di.scrub_pending, 1);
	T_OK(u, ubi_flush_background(u));
	T_OK(u, ubi_leb_read(u, v, 2, 0, b, L));
	assert_memory_equal(a, b, L);
	ubi_detach(u);
	flash_close(f);
}

static void test_uncorrectable(void **state)
{
	(void)state;
	struct flash_dev *f = t_nand(24, 2);
	struct ubi_device *u = t_attach(f);
	uint32_t v = t_mkvol(u, "v", 4, UBI_VID_DYNAMIC);
	static uint8_t a[L], b[L];
	t_fill(a, L, 4);
	T_OK(u, ubi_leb_write(u, v, 1, 0, a, L));
	uint32_t p = find_leb(f, v, 1);
	assert_int_equal(flash_sim_inject_bitflip(f, p, 5, true, true), 0);
	assert_int_equal(ubi_leb_read(u, v, 1, 0, b, L), -EBADMSG);
	char want[64];
	snprintf(want, sizeof(want), "LEB %u:1 (PEB %u", v, p);
	assert_non_null(strstr(ubi_errmsg(u), want));
	/* other pages of the LEB still read */
	T_OK(u, ubi_leb_read(u, v, 1, 0, b, 512));
	assert_memory_equal(a, b, 512);
	/* attach still works (the data area is not read for a good VID header) */
	u = t_reattach(u, f);
	assert_int_equal(ubi_leb_read(u, v, 1, 0, b, L), -EBADMSG);
	ubi_detach(u);
	flash_close(f);
}

/* erase at unmap (off by default): the next unmap erases the PEB an
 * earlier one freed; its failure marks the PEB bad and does not fail that
 * unmap */
static void test_erase_at_unmap_failure(void **state)
{
	(void)state;
	struct flash_dev *f = t_nand(24, 3);
	struct ubi_attach_opts o;
	ubi_attach_opts_default(&o);
	o.erase_at_unmap = true;
	struct ubi_device *u = t_attach_opts(f, &o);
	uint32_t v = t_mkvol(u, "v", 4, UBI_VID_DYNAMIC);
	static uint8_t a[L];
	t_fill(a, L, 6);
	T_OK(u, ubi_leb_write(u, v, 0, 0, a, 4096));
	T_OK(u, ubi_leb_write(u, v, 1, 0, a, 4096));
	T_OK(u, ubi_sync(u));
	struct ubi_dev_info d0, d1;
	ubi_dev_info(u, &d0);
	uint32_t p = find_leb(f, v, 0);
	assert_int_equal(flash_sim_fail_next_erase(f, p), 0);
	T_OK(u, ubi_leb_unmap(u, v, 0)); /* the PEB just freed waits */
	assert_int_equal(flash_is_bad(f, p), 0);
	T_OK(u, ubi_leb_unmap(u, v, 1)); /* erases it: fails, goes bad */
	assert_int_equal(flash_is_bad(f, p), 1);
	ubi_dev_info(u, &d1);
	assert_int_equal(d1.bad_pebs, d0.bad_pebs + 1);
	assert_int_equal(d1.beb_rsvd_pebs, d0.beb_rsvd_pebs - 1);
	ubi_detach(u);
	flash_close(f);
}

static void test_erase_and_program_failures(void **state)
{
	(void)state;
	struct flash_dev *f = t_nand(24, 3);
	struct ubi_device *u = t_attach(f);
	uint32_t v = t_mkvol(u, "v", 4, UBI_VID_DYNAMIC);
	static uint8_t a[L], b[L], exp[L];
	t_fill(a, L, 5);
	T_OK(u, ubi_leb_write(u, v, 0, 0, a, 4096));
	T_OK(u, ubi_sync(u));
	struct ubi_dev_info d0, d1;
	ubi_dev_info(u, &d0);
	/* erase failure: the PEB goes bad, one reserve PEB used */
	uint32_t p = find_leb(f, v, 0);
	T_OK(u, ubi_leb_unmap(u, v, 0));
	assert_int_equal(flash_sim_fail_next_erase(f, p), 0);
	T_OK(u, ubi_flush_background(u));
	ubi_dev_info(u, &d1);
	assert_int_equal(d1.bad_pebs, d0.bad_pebs + 1);
	assert_int_equal(d1.beb_rsvd_pebs, d0.beb_rsvd_pebs - 1);
	assert_int_equal(d1.avail_pebs, d0.avail_pebs);
	assert_int_equal(flash_is_bad(f, p), 1);
	/* program failure on append: data recovered to a new PEB */
	T_OK(u, ubi_leb_write(u, v, 1, 0, a, 4096));
	p = find_leb(f, v, 1);
	assert_int_equal(flash_sim_fail_next_program(f, p), 0);
	T_OK(u, ubi_leb_write(u, v, 1, 4096, a + 4096, 4096));
	assert_int_not_equal(find_leb(f, v, 1), p);
	memset(exp, 0xFF, L);
	memcpy(exp, a, 8192);
	T_OK(u, ubi_leb_read(u, v, 1, 0, b, L));
	assert_memory_equal(b, exp, L);
	T_OK(u, ubi_flush_background(u)); /* the failed PEB is tortured: passes, stays good */
	struct ubi_stats st;
	ubi_get_stats(u, &st);
	assert_int_equal(st.torture_tests, 1);
	assert_int_equal(flash_is_bad(f, p), 0);
	/* a second program failure, and the torture test fails too: bad */
	p = find_leb(f, v, 1);
	assert_int_equal(flash_sim_fail_next_program(f, p), 0);
	T_OK(u, ubi_leb_write(u, v, 1, 8192, a, 512));
	assert_int_equal(flash_sim_fail_next_program(f, p), 0); /* hits the torture pattern write */
	ubi_dev_info(u, &d0);
	T_OK(u, ubi_flush_background(u));
	ubi_dev_info(u, &d1);
	assert_int_equal(d1.bad_pebs, d0.bad_pebs + 1);
	assert_int_equal(flash_is_bad(f, p), 1);
	memcpy(exp + 8192, a, 512);
	u = t_reattach(u, f);
	T_OK(u, ubi_leb_read(u, v, 1, 0, b, L));
	assert_memory_equal(b, exp, L);
	/* the device is still writable */
	T_OK(u, ubi_leb_write(u, v, 1, 8704, a, 512));
	ubi_dev_info(u, &d1);
	assert_false(d1.read_only);
	ubi_detach(u);
	flash_close(f);
}

/* Churn until blocks wear out: data must survive while the reserve lasts,
 * then UBI goes read-only cleanly. */
static void test_wear_out_to_read_only(void **state)
{
	(void)state;
	struct flash_sim_config c;
	flash_sim_config_default(&c);
	c.geo.page_size = 512;
	c.geo.subpage_size = 256;
	c.geo.oob_size = 16;
	c.geo.peb_size = 16384;
	c.geo.peb_count = 64;
	c.endurance = 40;
	c.seed = 5;
	struct flash_dev *f = NULL;
	assert_int_equal(flash_sim_create(&c, &f), 0);
	struct ubi_attach_opts o;
	ubi_attach_opts_default(&o);
	o.wl_threshold = 8;
	struct ubi_device *u = t_attach_opts(f, &o);
	enum { NL = 8 };
	uint32_t v = t_mkvol(u, "v", NL, UBI_VID_DYNAMIC);
	static uint8_t model[NL][L], b[L];
	for (int l = 0; l < NL; l++) {
		t_fill(model[l], L, 100 + (uint64_t)l);
		T_OK(u, ubi_leb_change(u, v, (uint32_t)l, model[l], L));
	}
	struct util_prng g;
	util_prng_seed(&g, 9);
	unsigned it, bad_seen = 0;
	int ro_err = 0;
	for (it = 0; it < 200000; it++) {
		uint32_t l = (uint32_t)util_prng_below(&g, 2); /* two hot LEBs */
		if (it % 50 == 0)
			l = (uint32_t)util_prng_below(&g, NL);
		t_fill(b, L, it);
		int err = ubi_leb_change(u, v, l, b, L);
		if (err) {
			ro_err = err;
			break;
		}
		memcpy(model[l], b, L);
		err = ubi_background_step(u);
		if (err < 0 && err != -EROFS)
			fail_msg("background: %d %s", err, ubi_errmsg(u));
		if (it % 97 == 0) {
			for (uint32_t k = 0; k < NL; k++) {
				T_OK(u, ubi_leb_read(u, v, k, 0, b, L));
				if (memcmp(b, model[k], L))
					fail_msg("iteration %u: LEB %u lost its data", it, k);
			}
		}
		struct ubi_dev_info di;
		ubi_dev_info(u, &di);
		bad_seen = di.bad_pebs;
		if (di.read_only)
			break;
	}
	struct ubi_dev_info di;
	ubi_dev_info(u, &di);
	assert_true(di.read_only);
	assert_true(bad_seen > 0);
	printf("wear-out: read-only after %u atomic changes, %u bad PEBs, reason: %s (last write error %d)\n", it,
	       di.bad_pebs, di.ro_reason, ro_err);
	assert_int_equal(ubi_leb_write(u, v, 0, 0, b, 512), -EROFS);
	assert_int_equal(ubi_leb_change(u, v, 0, b, 512), -EROFS);
	for (uint32_t k = 0; k < NL; k++) {
		T_OK(u, ubi_leb_read(u, v, k, 0, b, L));
		if (memcmp(b, model[k], L))
			fail_msg("after read-only switch: LEB %u lost its data", k);
	}
	ubi_detach(u);
	/* a read-only attach still reads everything */
	o.read_only = true;
	u = t_attach_opts(f, &o);
	for (uint32_t k = 0; k < NL; k++) {
		T_OK(u, ubi_leb_read(u, v, k, 0, b, L));
		if (memcmp(b, model[k], L))
			fail_msg("after re-attach: LEB %u lost its data", k);
	}
	ubi_detach(u);
	flash_close(f);
}

static void test_read_only_attach_never_writes(void **state)
{
	(void)state;
	struct flash_dev *f = t_nand(24, 6);
	struct ubi_device *u = t_attach(f);
	uint32_t v = t_mkvol(u, "v", 4, UBI_VID_DYNAMIC);
	struct ubi_mkvol_req r = {.vol_id = 7, .name = "grow", .leb_count = 1, .vol_type = UBI_VID_DYNAMIC,
				  .flags = UBI_VTBL_AUTORESIZE_FLG};
	T_OK(u, ubi_vol_create(u, &r, NULL));
	static uint8_t a[L];
	t_fill(a, L, 1);
	for (uint32_t l = 0; l < 4; l++)
		T_OK(u, ubi_leb_write(u, v, l, 0, a, 2048));
	T_OK(u, ubi_leb_unmap(u, v, 3)); /* pending erasure left behind */
	uint32_t p = find_leb(f, v, 1);
	ubi_detach(u);
	assert_int_equal(flash_sim_inject_bitflip(f, p, 4, false, true), 0);
	struct flash_stats s0, s1;
	flash_sim_get_stats(f, &s0);
	struct ubi_attach_opts o;
	ubi_attach_opts_default(&o);
	o.read_only = true;
	u = t_attach_opts(f, &o);
	for (uint32_t l = 0; l < 4; l++)
		T_OK(u, ubi_leb_read(u, v, l, 0, a, L));
	T_OK(u, ubi_flush_background(u));
	T_OK(u, ubi_sync(u));
	assert_int_equal(ubi_leb_write(u, v, 0, 2048, a, 512), -EROFS);
	struct ubi_vol_info vi;
	T_OK(u, ubi_vol_info(u, 7, &vi));
	assert_int_equal(vi.reserved_pebs, 1); /* no autoresize */
	ubi_detach(u);
	flash_sim_get_stats(f, &s1);
	assert_int_equal(s1.programs, s0.programs);
	assert_int_equal(s1.erases, s0.erases);
	flash_close(f);
}

/* Random correctable flips on 0.2% of page reads during a churn with
 * re-attaches: data always intact, scrubbing keeps up. */
static void test_random_flips_churn(void **state)
{
	(void)state;
	struct flash_sim_config c;
	flash_sim_config_default(&c);
	c.geo.page_size = 512;
	c.geo.subpage_size = 256;
	c.geo.oob_size = 16;
	c.geo.peb_size = 16384;
	c.geo.peb_count = 32;
	c.bitflip_rate = 0.002;
	c.seed = 12;
	struct flash_dev *f = NULL;
	assert_int_equal(flash_sim_create(&c, &f), 0);
	struct ubi_device *u = t_attach(f);
	enum { NL = 10 };
	uint32_t v = t_mkvol(u, "v", NL, UBI_VID_DYNAMIC);
	static uint8_t model[NL][L], b[L];
	for (int l = 0; l < NL; l++)
		memset(model[l], 0xFF, L);
	struct util_prng g;
	util_prng_seed(&g, 3);
	for (unsigned it = 0; it < 3000; it++) {
		uint32_t l = (uint32_t)util_prng_below(&g, NL);
		uint32_t len = 512 * (1 + (uint32_t)util_prng_below(&g, L / 512));
		t_fill(b, len, it);
		T_OK(u, ubi_leb_change(u, v, l, b, len));
		memset(model[l], 0xFF, L);
		memcpy(model[l], b, len);
		T_OK(u, ubi_background_step(u));
		uint32_t k = (uint32_t)util_prng_below(&g, NL);
		T_OK(u, ubi_leb_read(u, v, k, 0, b, L));
		if (memcmp(b, model[k], L))
			fail_msg("iteration %u: LEB %u corrupted", it, k);
		if (it % 500 == 250)
			u = t_reattach(u, f);
	}
	struct ubi_stats st;
	ubi_get_stats(u, &st);
	printf("random flips: %llu corrected reads, %llu scrubs, %llu moves\n", (unsigned long long)st.corrected_reads,
	       (unsigned long long)st.scrubs, (unsigned long long)st.wl_moves);
	assert_true(st.corrected_reads > 0);
	assert_true(st.scrubs > 0);
	ubi_detach(u);
	flash_close(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_correctable_flips_scrub), cmocka_unit_test(test_uncorrectable),
		cmocka_unit_test(test_erase_and_program_failures),
		cmocka_unit_test(test_erase_at_unmap_failure), cmocka_unit_test(test_wear_out_to_read_only),
		cmocka_unit_test(test_read_only_attach_never_writes), cmocka_unit_test(test_random_flips_churn),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
