/* test_ubi_wear — wear leveling: a few hot LEBs churned many times next to
 * cold (static) data. The erase-count spread over all PEBs must stay within
 * the WL threshold plus a small margin, and the cold data must be intact.
 * Background work: one step per change plus an idle flush every 100
 * changes; also without the idle flushes. The same churn without wear
 * leveling (threshold too high to trigger) is run as a control: its spread must be far larger, so the check can fail.
 * Prints the spreads (UBI's EC headers and the simulator's own counters). */
#include "ubi_test.h"

enum { NPEB = 64, NCOLD = 40, NHOT = 2 };

struct result {
	uint32_t ec_spread, sim_spread, mean;
	uint64_t moves;
};

static struct result churn(uint32_t threshold, unsigned changes, bool check_each, bool idle)
{
	struct flash_dev *f = t_nand(NPEB, 11);
	struct ubi_attach_opts o;
	ubi_attach_opts_default(&o);
	o.wl_threshold = threshold;
	struct ubi_device *u = t_attach_opts(f, &o);
	uint32_t v = t_mkvol(u, "v", NCOLD + NHOT, UBI_VID_DYNAMIC);
	static uint8_t cold[NCOLD][1024], b[1024];
	for (uint32_t l = 0; l < NCOLD; l++) {
		t_fill(cold[l], 1024, l);
		T_OK(u, ubi_leb_write(u, v, NHOT + l, 0, cold[l], 1024));
	}
	uint32_t worst = 0;
	for (unsigned i = 0; i < changes; i++) {
		t_fill(b, 512, i);
		T_OK(u, ubi_leb_change(u, v, i % NHOT, b, 512));
		T_OK(u, ubi_background_step(u));
		if (idle && i % 100 == 99)
			T_OK(u, ubi_flush_background(u)); /* an idle moment */
		if (check_each && i % 64 == 0) {
			struct ubi_dev_info di;
			ubi_dev_info(u, &di);
			if (di.max_ec - di.min_ec > worst)
				worst = di.max_ec - di.min_ec;
		}
	}
	T_OK(u, ubi_flush_background(u));
	struct ubi_dev_info di;
	ubi_dev_info(u, &di);
	struct ubi_stats st;
	ubi_get_stats(u, &st);
	struct flash_wear_stats ws;
	flash_sim_wear_stats(f, &ws);
	for (uint32_t l = 0; l < NCOLD; l++) {
		T_OK(u, ubi_leb_read(u, v, NHOT + l, 0, b, 1024));
		assert_memory_equal(b, cold[l], 1024);
	}
	ubi_detach(u);
	flash_close(f);
	struct result r = {di.max_ec - di.min_ec, ws.max - ws.min, di.mean_ec, st.wl_moves};
	if (check_each && worst > r.ec_spread)
		r.ec_spread = worst; /* the worst seen during the run, not only at the end */
	return r;
}

static void test_wear_spread(void **state)
{
	(void)state;
	const uint32_t thr = 50;
	struct result r = churn(thr, 20000, true, true);
	printf("wear (threshold %u, %u PEBs, %u cold LEBs, %u hot LEBs, 20000 changes): EC spread %u (max over the "
	       "run), simulator spread %u, mean EC %u, %llu WL moves\n",
	       thr, NPEB, NCOLD, NHOT, r.ec_spread, r.sim_spread, r.mean, (unsigned long long)r.moves);
	assert_true(r.mean > 4 * thr); /* the churn really wore the flash */
	assert_true(r.moves > 0);
	assert_true(r.ec_spread <= thr + 2 * 10); /* threshold + protection slack */
	/* never idle: one background step per change, the erase queue never
	 * drains; WL still has to keep up */
	struct result b = churn(thr, 20000, true, false);
	printf("wear without idle time (one background step per change): EC spread %u, %llu WL moves\n", b.ec_spread,
	       (unsigned long long)b.moves);
	assert_true(b.ec_spread <= 3 * thr); /* a free pool of ~1 PEB leaves WL few targets */
	/* control: no WL possible -> far larger spread */
	struct result c = churn(1000000, 20000, false, true);
	printf("wear control (WL never triggers): EC spread %u, mean EC %u\n", c.ec_spread, c.mean);
	assert_true(c.ec_spread > 4 * thr);
	assert_int_equal(c.moves, 0);
}

static void test_wear_default_threshold(void **state)
{
	(void)state;
	/* Linux's default 4096 needs a long churn to matter (~5 s). */
	struct result r = churn(UBI_DEFAULT_WL_THRESHOLD, 400000, true, true);
	printf("wear (default threshold %u, 400000 changes): EC spread %u, simulator spread %u, mean EC %u, %llu "
	       "WL moves\n",
	       UBI_DEFAULT_WL_THRESHOLD, r.ec_spread, r.sim_spread, r.mean, (unsigned long long)r.moves);
	assert_true(r.ec_spread <= UBI_DEFAULT_WL_THRESHOLD + 20);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wear_spread),
		cmocka_unit_test(test_wear_default_threshold),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
