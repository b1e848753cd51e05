/* test_torture — the torture scenarios of issue 10 through the library
 * (include/ubikit/torture.h), each for a short time by default and for
 * long with UBIKIT_LONG_TESTS=1 (figures in docs/torture.md). Part A
 * (test_torture): every scenario on NAND 2 KiB pages (wear-out on MLC).
 * Part B (test_torture_b): the other devices (NAND 4 KiB pages, NOR, MLC)
 * and the exhaustive cut sweep on NAND and NOR.
 * A run passes with 0 findings and enough work done (cuts survived, checks
 * passed), so a run that silently did nothing fails too. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <ubikit/torture.h>

/* Sanitizer builds run some 20-30 times slower: the same cycles with a
 * time cap of a few seconds, and the amount-of-work minimums relaxed to
 * "some" (findings still fail; the Release build checks the amounts). */
#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

static uint64_t least(uint64_t n)
{
	return SANITIZED ? 1 : n;
}

static double cap(double secs)
{
	return SANITIZED && secs > 2.5 ? 2.5 : secs;
}

static int long_tests(void)
{
	const char *e = getenv("UBIKIT_LONG_TESTS");
	return e && *e && strcmp(e, "0");
}

/* Findings known and open (docs/torture.md, "Open") would make a test show
 * as skipped, never as passed. None is listed: the NOR LPT one ("LPT LEB n:
 * no node and no empty space") was padding plus the next run read as a node
 * (fixed 2026-12-05, t_nor_lpt_walk), and no test meets the nand4k seed-302
 * one. Any finding fails. */
static int known_open(const struct ubikit_torture_result *r)
{
	(void)r;
	return 0;
}

/* secs < 0: no cap but -secs, also under sanitizers (runs whose cycles
 * count, not their time) */
static void run(int scenario, const char *device, uint64_t seed, double secs, double long_secs, uint64_t cycles,
		struct ubikit_torture_result *r)
{
	struct ubikit_torture_opts o = {.scenario = scenario, .device = device, .seed = seed};
	/* default: a fixed number of cycles (the same run every time), with
	 * a time cap for a loaded machine; long: minutes */
	o.max_seconds = long_tests() ? long_secs : secs < 0 ? -secs : cap(secs);
	o.max_cycles = long_tests() ? 0 : cycles;
	const char *exp = getenv("UBIKIT_TORTURE_EXPORT"); /* tests/vm: post-cut images for the kernel */
	if (exp && *exp) {
		o.export_dir = exp;
		o.export_every = 7;
	}
	char err[512] = "";
	int rc = ubikit_torture_run(&o, r, err, sizeof(err));
	if (rc)
		fail_msg("%s on %s could not run: %s", ubikit_torture_scenario_name(scenario), device ? device : "default",
			 err);
	printf("%-18s %-7s %5.1fs cycles %llu ops %llu cuts %llu (program %llu erase %llu recovery %llu; %.0f cuts/s) "
	       "checks %llu synced-verified %llu remounts %llu enospc %llu flips %llu uncorr %llu bad %llu ro %llu "
	       "devices %llu findings %llu\n",
	       ubikit_torture_scenario_name(scenario), device ? device : "-", r->seconds, (unsigned long long)r->cycles,
	       (unsigned long long)r->ops, (unsigned long long)r->cuts, (unsigned long long)r->cuts_in_program,
	       (unsigned long long)r->cuts_in_erase, (unsigned long long)r->cuts_in_recovery,
	       r->seconds > 0 ? (double)r->cuts / r->seconds : 0.0, (unsigned long long)r->checks,
	       (unsigned long long)r->synced_files_checked, (unsigned long long)r->remounts,
	       (unsigned long long)r->enospc, (unsigned long long)r->bitflips_corrected,
	       (unsigned long long)r->uncorrectable_reads, (unsigned long long)r->bad_blocks,
	       (unsigned long long)r->read_only, (unsigned long long)r->fresh_devices, (unsigned long long)r->findings);
	fflush(stdout);
	if (r->findings && known_open(r))
		skip();
	if (r->findings)
		fail_msg("%llu findings; first: %s", (unsigned long long)r->findings, r->first_finding);
}

#ifndef TORTURE_PART_B
static void t_mix(void **state)
{
	(void)state;
	struct ubikit_torture_result r;
	run(UBIKIT_TORTURE_MIX, "nand2k", 11, 4, 120, 20, &r);
	assert_true(r.remounts >= least(3));
	assert_true(r.ops >= least(300));
}

static void t_powercut(void **state)
{
	(void)state;
	struct ubikit_torture_result r;
	run(UBIKIT_TORTURE_POWERCUT, "nand2k", 12, 5, 600, 60, &r);
	assert_true(r.cuts >= least(10));
	assert_true(r.cuts_in_program > 0);
	assert_true(r.synced_files_checked > 0);
}

static void t_powercut_recovery(void **state)
{
	(void)state;
	struct ubikit_torture_result r;
	run(UBIKIT_TORTURE_POWERCUT_RECOVERY, "nand2k", 13, 5, 300, 50, &r);
	assert_true(r.cuts >= least(5));
	if (!SANITIZED)
		assert_true(r.cuts_in_recovery > 0);
}

static void t_bitflip(void **state)
{
	(void)state;
	struct ubikit_torture_result r;
	run(UBIKIT_TORTURE_BITFLIP, "nand2k", 14, 3, 120, 40, &r);
	assert_true(r.bitflips_corrected > 0);
	assert_true(r.cuts >= least(5));
}

static void t_badblock(void **state)
{
	(void)state;
	struct ubikit_torture_result r;
	/* the first blocks go bad in cycle 3: fixed cycles, not a time cap
	 * (2.5 s on a loaded machine under sanitizers ran 2 cycles) */
	run(UBIKIT_TORTURE_BADBLOCK, "nand2k", 15, -60, 120, SANITIZED ? 8 : 60, &r);
	assert_true(r.bad_blocks > 0);
}

static void t_wearout(void **state)
{
	(void)state;
	struct ubikit_torture_result r;
	/* the first block wears out in cycle 10: fixed cycles (3 s on the
	 * loaded coverage build ran 5) */
	run(UBIKIT_TORTURE_WEAROUT, "mlc", 16, -60, 120, SANITIZED ? 12 : 60, &r);
	assert_true(r.bad_blocks > 0);
}

static void t_exhaustive(void **state)
{
	(void)state;
	struct ubikit_torture_opts o = {.scenario = UBIKIT_TORTURE_EXHAUSTIVE, .device = "nand2k", .seed = 17};
	struct ubikit_torture_result r;
	o.ops_per_cycle = long_tests() ? 60 : 12;
	o.max_seconds = long_tests() ? 600 : cap(5);
	char err[512] = "";
	assert_int_equal(ubikit_torture_run(&o, &r, err, sizeof(err)), 0);
	printf("exhaustive nand2k: %llu cut points in %.1fs, %llu recovered and checked, findings %llu\n",
	       (unsigned long long)r.cycles, r.seconds, (unsigned long long)r.cuts, (unsigned long long)r.findings);
	if (r.findings)
		fail_msg("%s", r.first_finding);
	assert_true(r.cuts >= least(10));
}
#else
/* nand4k, seed 21: cycle 27 is cut, then cut again in its recovery, and
 * the next mount finds the log full: it needs log consolidation at
 * read-write mount (t_full_log; skipped until that is in ubikit). */
static void t_nand4k(void **state)
{
	(void)state;
	struct ubikit_torture_result r;
	run(UBIKIT_TORTURE_POWERCUT_RECOVERY, "nand4k", 21, 5, 300, 40, &r);
	assert_true(r.cuts >= least(5));
}

/* nand4k, seed 32: with the per-page cut-erase model the attach of cycle
 * 305 was refused ("2 PEBs are corrupted", Linux's rule: an EC header
 * intact over a damaged VID header is corruption, not a power cut). Cut
 * erases as NAND does them (the whole block alike) leave no such PEB:
 * 400 cycles, every cut recovered and checked. */
static void t_nand4k_erase_cuts(void **state)
{
	(void)state;
	/* a fixed number of cycles, not capped by time in the sanitizer
	 * build (there 150: ~40 s; the cuts in an erase are what counts) */
	struct ubikit_torture_opts o = {.scenario = UBIKIT_TORTURE_POWERCUT, .device = "nand4k", .seed = 32};
	o.max_seconds = long_tests() ? 300 : 240;
	o.max_cycles = long_tests() ? 0 : SANITIZED ? 150 : 400;
	struct ubikit_torture_result r;
	char err[512] = "";
	assert_int_equal(ubikit_torture_run(&o, &r, err, sizeof(err)), 0);
	printf("powercut nand4k: %llu cycles, %llu cuts (%llu in an erase) in %.1fs, findings %llu\n",
	       (unsigned long long)r.cycles, (unsigned long long)r.cuts, (unsigned long long)r.cuts_in_erase,
	       r.seconds, (unsigned long long)r.findings);
	if (r.findings)
		fail_msg("%s", r.first_finding);
	assert_true(r.cycles >= o.max_cycles);
	assert_true(r.cuts_in_erase >= (SANITIZED ? 1u : 5u));
}

/* The NOR LPT finding, deterministically: on min I/O 8 a commit's run
 * ends a byte before an aligned boundary, and the 0xFF padding plus the
 * next run's ltab read as a 3-byte small-model "lsave" whose CRC matched;
 * the ltab check (and LPT GC) then skipped the real ltab. Clean remounts
 * only, no cuts: cycle 29 of this run met it before the fix. */
static void t_nor_lpt_walk(void **state)
{
	(void)state;
	struct ubikit_torture_result r;
	run(UBIKIT_TORTURE_MIX, "nor", 11, 20, 120, 40, &r);
	assert_true(r.remounts >= least(30));
}

/* UBI erasing unmapped PEBs early (as the kernel's background erase may):
 * a recovery mount kills an orphan with xattrs, its commit start unmaps the
 * LEB that held only the orphan's nodes, the erase runs, and a cut comes
 * before the commit ends. The next mount's orphan killing meets the
 * orphan's xattr entries in erased flash ("expected xattr entry node ...
 * bad node magic" at cycle 83 of this seed before the fix; 5 findings in
 * 7,500 cuts of seed 3). */
static void t_nor_erase_at_unmap(void **state)
{
	(void)state;
	struct ubikit_torture_opts o = {.scenario = UBIKIT_TORTURE_POWERCUT_RECOVERY, .device = "nor", .seed = 19};
	struct ubikit_torture_result r;
	o.erase_at_unmap = 1;
	o.max_seconds = long_tests() ? 300 : SANITIZED ? 60 : 30;
	o.max_cycles = long_tests() ? 0 : 100;
	char err[512] = "";
	assert_int_equal(ubikit_torture_run(&o, &r, err, sizeof(err)), 0);
	printf("powercut-recovery nor erase-at-unmap: %llu cycles, %llu cuts (%llu in recovery) in %.1fs, findings %llu\n",
	       (unsigned long long)r.cycles, (unsigned long long)r.cuts, (unsigned long long)r.cuts_in_recovery,
	       r.seconds, (unsigned long long)r.findings);
	if (r.findings)
		fail_msg("%s", r.first_finding);
	/* the finding's cycle must be reached, also under sanitizers */
	assert_true(r.cycles >= 100);
}

static void t_nor(void **state)
{
	(void)state;
	struct ubikit_torture_opts o = {.scenario = UBIKIT_TORTURE_POWERCUT_RECOVERY, .device = "nor", .seed = 22};
	struct ubikit_torture_result r;
	o.max_seconds = long_tests() ? 300 : cap(5);
	o.max_cycles = long_tests() ? 0 : 50;
	char err[512] = "";
	assert_int_equal(ubikit_torture_run(&o, &r, err, sizeof(err)), 0);
	printf("powercut-recovery nor: %llu cuts (%llu in recovery) in %.1fs, findings %llu\n",
	       (unsigned long long)r.cuts, (unsigned long long)r.cuts_in_recovery, r.seconds,
	       (unsigned long long)r.findings);
	if (r.findings && known_open(&r))
		skip();
	if (r.findings)
		fail_msg("%s", r.first_finding);
	assert_true(r.cuts >= least(5));
}

static void t_mlc(void **state)
{
	(void)state;
	struct ubikit_torture_result r;
	run(UBIKIT_TORTURE_POWERCUT, "mlc", 23, 5, 300, 40, &r);
	assert_true(r.cuts >= least(5));
}

/* Regression (found by this torture): cycles of 200 operations, so a big
 * cached write is written back while the log fills; a commit in the middle
 * of the write-back put data beyond the stored inode size into the index,
 * and the cut before the inode's write left it there (the strict check:
 * "data node ... beyond the inode size"). The inode now goes first when
 * data goes beyond the size the journal has (kernel ubifs_writepage). */
static void t_writeback_beyond_size(void **state)
{
	(void)state;
	struct ubikit_torture_opts o = {.scenario = UBIKIT_TORTURE_POWERCUT, .device = "nand2k", .seed = 1};
	struct ubikit_torture_result r;
	o.ops_per_cycle = 200;
	o.max_cycles = long_tests() ? 2000 : 70;
	o.max_seconds = SANITIZED && !long_tests() ? 4 : 0; /* cycle 69 is out of reach there */
	char err[512] = "";
	assert_int_equal(ubikit_torture_run(&o, &r, err, sizeof(err)), 0);
	printf("long cycles: %llu cuts in %.1fs, findings %llu\n", (unsigned long long)r.cuts, r.seconds,
	       (unsigned long long)r.findings);
	if (r.findings)
		fail_msg("%s", r.first_finding);
	assert_true(r.cuts >= least(40));
}

static void t_exhaustive_nor(void **state)
{
	(void)state;
	struct ubikit_torture_opts o = {.scenario = UBIKIT_TORTURE_EXHAUSTIVE, .device = "nor", .seed = 24};
	struct ubikit_torture_result r;
	o.ops_per_cycle = long_tests() ? 40 : 10;
	o.max_seconds = long_tests() ? 600 : cap(6);
	char err[512] = "";
	assert_int_equal(ubikit_torture_run(&o, &r, err, sizeof(err)), 0);
	printf("exhaustive nor: %llu cut points in %.1fs, %llu recovered and checked, findings %llu\n",
	       (unsigned long long)r.cycles, r.seconds, (unsigned long long)r.cuts, (unsigned long long)r.findings);
	if (r.findings)
		fail_msg("%s", r.first_finding);
	assert_true(r.cuts >= least(10));
}
#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
#ifndef TORTURE_PART_B
		cmocka_unit_test(t_mix),       cmocka_unit_test(t_powercut), cmocka_unit_test(t_powercut_recovery),
		cmocka_unit_test(t_bitflip),   cmocka_unit_test(t_badblock), cmocka_unit_test(t_wearout),
		cmocka_unit_test(t_exhaustive),
#else
		cmocka_unit_test(t_writeback_beyond_size), cmocka_unit_test(t_nand4k), cmocka_unit_test(t_nand4k_erase_cuts), cmocka_unit_test(t_nor), cmocka_unit_test(t_nor_lpt_walk),
		cmocka_unit_test(t_nor_erase_at_unmap),
		cmocka_unit_test(t_mlc),
		cmocka_unit_test(t_exhaustive_nor),
#endif
	};
	const char *only = getenv("UBIKIT_TEST_FILTER");
	if (only && *only)
		cmocka_set_test_filter(only);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
