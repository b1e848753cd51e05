/* test_ubifs_gc — garbage collection under long churn (ubifs_gc.c): small
 * mkfs.ubifs images (NAND 2 KiB pages with 512-byte sub-pages, NOR, NAND
 * 4 KiB) are overwritten many times by random operations of the reference
 * model (ubifs_write_model.c) whose live data is bounded to a fraction of
 * the main area. No call may fail with ENOSPC; GC of data LEBs and of index
 * LEBs, LEBs freed at commit start and LPT garbage collection must all
 * happen (counters of ubifs_gc.h and ubifs_lpt.h). After each round the
 * LPT equals a scan of the flash (ubifs_lpt_check, the kernel's
 * dbg_check_lprops rules) and a read-only remount equals the model. The
 * kernel's view of such images: tests/ubifs/ubifs_vm_gc.sh.
 *
 * Budgeting (h-budget) is not here: the index reserve it keeps
 * (min_idx_lebs, kernel ubifs_calc_min_idx_lebs) is set by the test from
 * the index size and the dirty znodes, as budgeting would. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ubi/ubi_flat.h"
#include "ubifs/ubifs.h"
#include "ubifs/ubifs_gc.h"
#include "ubifs/ubifs_journal.h"
#include "ubifs/ubifs_lpt.h"
#include "ubifs/ubifs_priv.h"
#include "ubifs_test_tree.h"
#include "ubifs_write_model.h"

#define WORK UBIKIT_BUILD_DIR "/ubifs-gc"

static struct ubifs_fs *mount_img(const char *img, int ro, struct ubi_vol_io *vol)
{
	assert_int_equal(ubi_flat_open(img, 0, ro, vol), 0);
	struct util_err e = {0};
	struct ubifs_mount_opts o = {.read_only = ro};
	struct ubifs_fs *fs = NULL;
	int err = ubifs_mount(vol, &o, &fs, &e);
	if (err)
		fail_msg("mount %s (%s): %d %s", img, ro ? "ro" : "rw", err, e.msg);
	return fs;
}

static size_t dirty_znodes(const struct ubifs_znode *z)
{
	if (!z || !z->dirty)
		return 0;
	size_t n = 1;
	if (z->level > 0)
		for (uint32_t i = 0; i < z->child_cnt; i++)
			n += dirty_znodes(z->zbranch[i].child);
	return n;
}

/* kernel ubifs_calc_min_idx_lebs: three times the index (in-the-gaps
 * needs room), one LEB more, at least 2 (here 3: see below) */
static void set_idx_reserve(struct ubifs_fs *fs)
{
	uint32_t max_idx = (uint32_t)(UBIFS_IDX_NODE_SZ + fs->fanout * (UBIFS_BRANCH_SZ + 8));
	max_idx = (max_idx + 7) & ~7u;
	uint64_t idx = fs->tnc.idx_size + (uint64_t)dirty_znodes(fs->tnc.root) * max_idx;
	uint64_t idx_leb = fs->leb_size - max_idx;
	uint32_t lebs = (uint32_t)((idx * 3 + idx_leb - 1) / idx_leb) + 1;
	if (lebs < 3) /* kernel: 2; one more until budgeting (h-budget) keeps its margins */
		lebs = 3;
	ubifs_lpt_set_min_idx_lebs(fs->lpt, lebs);
	if (ubifs_gc_index_room(fs, lebs))
		fail_msg("no room for the index: %s", ubifs_errmsg(fs));
}

struct totals {
	struct ubifs_gc_stats gc;
	uint32_t lpt_gc, lpt_write_all;
	uint64_t commits, gap_commits, gap_lebs;
};

static void add_stats(struct totals *t, struct ubifs_fs *fs)
{
	struct ubifs_gc_stats s;
	ubifs_gc_get_stats(fs, &s);
	t->gc.runs += s.runs;
	t->gc.data_lebs += s.data_lebs;
	t->gc.idx_lebs += s.idx_lebs;
	t->gc.free_lebs += s.free_lebs;
	t->gc.nodes_moved += s.nodes_moved;
	t->gc.bytes_moved += s.bytes_moved;
	t->gc.commit_freed += s.commit_freed;
	t->gc.commit_idx_freed += s.commit_idx_freed;
	t->gc.eagain += s.eagain;
	t->gc.enospc += s.enospc;
	uint32_t a, b;
	ubifs_lpt_counters(fs->lpt, &a, &b);
	t->lpt_gc += a;
	t->lpt_write_all += b;
	t->commits += fs->commits;
	t->gap_commits += fs->tnc.gap_commits;
	t->gap_lebs += fs->tnc.gap_lebs;
}

/* limit_pct: live file bytes as a percentage of the main area; passes:
 * how many times the main area's size must be written (model bytes) */
static void run_case(const char *name, const char *mkfs_args, uint64_t seed, unsigned limit_pct, unsigned passes,
		     unsigned rounds, unsigned sync_every, int want_lpt_gc)
{
	char img[512], why[512];
	const char *only = getenv("UBIKIT_GC_CASE"); /* run one case (planting bugs) */
	if (only && strcmp(only, name))
		skip();
	assert_int_equal(tt_run("mkdir -p '%s/empty'", WORK), 0);
	snprintf(img, sizeof(img), "%s/%s.img", WORK, name);
	assert_int_equal(tt_run("mkfs.ubifs -r '%s/empty' %s -o '%s'", WORK, mkfs_args, img), 0);
	struct ubi_vol_io vol;
	struct wm *m = NULL;
	struct totals t = {0};
	uint64_t main_bytes = 0, target = 0;
	for (unsigned round = 0; round < rounds; round++) {
		struct ubifs_fs *fs = mount_img(img, 0, &vol);
		if (!m) {
			assert_int_equal(wm_new(fs, seed, &m), 0);
			main_bytes = (uint64_t)fs->main_lebs * fs->leb_size;
			wm_set_limit(m, main_bytes * limit_pct / 100);
			target = main_bytes * passes;
		}
		unsigned nops;
		uint64_t bytes;
		unsigned files;
		wm_stats(m, &nops, &files, &bytes);
		uint64_t goal = target * (round + 1) / rounds;
		while (bytes < goal) {
			set_idx_reserve(fs);
			if (wm_run(m, fs, 1, 1, why, sizeof(why)))
				fail_msg("%s round %u: %s (live %llu of %llu bytes)", name, round, why,
					 (unsigned long long)wm_live_bytes(m), (unsigned long long)main_bytes);
			wm_stats(m, &nops, &files, &bytes);
			if (sync_every && nops % sync_every == 0 && ubifs_sync(fs))
				fail_msg("%s round %u: sync: %s", name, round, ubifs_errmsg(fs));
		}
		if (wm_check(m, fs, why, sizeof(why)))
			fail_msg("%s round %u, live: %s", name, round, why);
		assert_int_equal(ubifs_jnl_sync_all(fs), 0);
		if (ubifs_lpt_check(fs->lpt))
			fail_msg("%s round %u, live LPT: %s", name, round, ubifs_errmsg(fs));
		add_stats(&t, fs);
		set_idx_reserve(fs); /* the unmount commits */
		if (round % 2 == 0 && ubifs_sync(fs))
			fail_msg("%s round %u: commit before unmount: %s", name, round, ubifs_errmsg(fs));
		/* every other round leaves a journal for the next mount to replay */
		int err = round % 2 ? ubifs_unmount_journal(fs) : ubifs_unmount(fs);
		if (err)
			fail_msg("%s round %u: unmount: %d", name, round, err);
		assert_int_equal(ubi_flat_close(&vol), 0);
		fs = mount_img(img, 1, &vol);
		if (wm_check(m, fs, why, sizeof(why)))
			fail_msg("%s round %u, read-only remount: %s", name, round, why);
		if (ubifs_lpt_check(fs->lpt))
			fail_msg("%s round %u, LPT at the read-only remount: %s", name, round, ubifs_errmsg(fs));
		ubifs_unmount(fs);
		ubi_flat_close(&vol);
		print_message("%s round %u: %u ops, %llu bytes written (main area %llu, live %llu)\n", name, round, nops,
			      (unsigned long long)bytes, (unsigned long long)main_bytes,
			      (unsigned long long)wm_live_bytes(m));
	}
	print_message("%s: GC %llu runs, %llu data LEBs (%llu nodes, %llu bytes moved), %llu index LEBs, %llu freeable "
		      "handed out, commit start freed %llu, %llu index LEBs freed after commits, -EAGAIN %llu, "
		      "-ENOSPC %llu; %llu commits (%llu in the gaps, %llu LEBs); LPT GC %u, LPT rewrites %u\n",
		      name, (unsigned long long)t.gc.runs, (unsigned long long)t.gc.data_lebs,
		      (unsigned long long)t.gc.nodes_moved, (unsigned long long)t.gc.bytes_moved,
		      (unsigned long long)t.gc.idx_lebs, (unsigned long long)t.gc.free_lebs,
		      (unsigned long long)t.gc.commit_freed, (unsigned long long)t.gc.commit_idx_freed,
		      (unsigned long long)t.gc.eagain, (unsigned long long)t.gc.enospc, (unsigned long long)t.commits,
		      (unsigned long long)t.gap_commits, (unsigned long long)t.gap_lebs,
		      t.lpt_gc, t.lpt_write_all);
	assert_true(t.gc.data_lebs > 0);
	assert_true(t.gc.nodes_moved > 0);
	assert_true(t.gc.idx_lebs + t.gc.commit_idx_freed > 0);
	assert_true(t.gc.commit_freed > 0);
	/* LPT GC proper (big model) or a whole-tree rewrite (small model) needs
	 * an LPT area short of space; these small devices have LPT areas far
	 * larger than their trees: reported, not asserted (test_ubifs_lpt
	 * forces it) */
	(void)want_lpt_gc;
	/* write-back (h-budget) merges writes between fsyncs: fewer journal
	 * writes, fewer log-full commits than when every write went through
	 * (NOR: 16) */
	assert_true(t.commits > 10);
	assert_true(t.gap_commits > 0);
	wm_free(m);
}

static void t_nand2k(void **s)
{
	(void)s;
	run_case("nand2k", "-m 2048 -e 126976 -c 48 -x lzo", 11, 30, 6, 4, 25, 1);
}
static void t_nor(void **s)
{
	(void)s;
	run_case("nor", "-m 8 -e 65408 -c 64 -x zstd", 12, 30, 6, 4, 0, 0);
}
static void t_nand4k(void **s)
{
	(void)s;
	run_case("nand4k", "-m 4096 -e 253952 -c 40 -x none", 13, 30, 5, 4, 25, 1);
}

/* dirty bytes of main-area LEBs that hold data (not index, not free) */
static uint64_t data_dirty(struct ubifs_fs *fs, uint32_t *lebs)
{
	uint64_t d = 0;
	*lebs = 0;
	for (uint32_t l = fs->main_first; l < fs->leb_cnt; l++) {
		struct ubifs_lprops lp;
		assert_int_equal(ubifs_lpt_lookup(fs->lpt, l, &lp), 0);
		if (lp.flags & UBIFS_LPROPS_INDEX)
			continue;
		d += lp.dirty;
		if (lp.free + lp.dirty < fs->leb_size) /* holds live data */
			(*lebs)++;
	}
	return d;
}

/* The background step the fs layer may call (ubifs_gc_step, ubifs.h):
 * churn leaves dirty data LEBs, steps collect them one at a time until
 * nothing with half a LEB to win is left. Judges: the model (live, and
 * after a read-only remount), the LPT against a scan of the flash (the
 * kernel's dbg_check_lprops rules) after every step, and the dirty space
 * the (checked) LPT reports, which the steps must shrink. */
static void t_step(void **s)
{
	(void)s;
	char img[512], why[512];
	const char *only = getenv("UBIKIT_GC_CASE");
	if (only && strcmp(only, "step"))
		skip();
	assert_int_equal(tt_run("mkdir -p '%s/empty'", WORK), 0);
	snprintf(img, sizeof(img), "%s/step.img", WORK);
	assert_int_equal(tt_run("mkfs.ubifs -r '%s/empty' -m 2048 -e 126976 -c 48 -x lzo -o '%s'", WORK, img), 0);
	struct ubi_vol_io vol;
	struct ubifs_fs *fs = mount_img(img, 0, &vol);
	struct wm *m = NULL;
	assert_int_equal(wm_new(fs, 21, &m), 0);
	uint64_t main_bytes = (uint64_t)fs->main_lebs * fs->leb_size;
	wm_set_limit(m, main_bytes * 25 / 100);
	unsigned steps = 0, commits = 0, idle = 0;
	for (int round = 0; round < 6; round++) {
		unsigned nops, files;
		uint64_t bytes, goal;
		wm_stats(m, &nops, &files, &bytes);
		goal = bytes + main_bytes / 2;
		while (bytes < goal) {
			set_idx_reserve(fs);
			if (wm_run(m, fs, 1, 1, why, sizeof(why)))
				fail_msg("step round %d: %s", round, why);
			wm_stats(m, &nops, &files, &bytes);
		}
		assert_int_equal(ubifs_jnl_sync_all(fs), 0);
		uint32_t lebs_before, lebs_after;
		uint64_t dirty_before = data_dirty(fs, &lebs_before);
		struct ubifs_gc_stats st0, st1;
		ubifs_gc_get_stats(fs, &st0);
		unsigned long long c0 = fs->commits;
		int r, n = 0;
		set_idx_reserve(fs);
		while ((r = ubifs_gc_step(fs)) == 1 && n < 200) {
			n++;
			if (ubifs_lpt_check(fs->lpt))
				fail_msg("step round %d, step %d: LPT: %s", round, n, ubifs_errmsg(fs));
			if (wm_check(m, fs, why, sizeof(why)))
				fail_msg("step round %d, step %d: %s", round, n, why);
		}
		if (r < 0)
			fail_msg("step round %d: ubifs_gc_step: %d %s", round, r, ubifs_errmsg(fs));
		assert_true(n < 200); /* it ends with 0: nothing worth moving */
		ubifs_gc_get_stats(fs, &st1);
		commits += (unsigned)(fs->commits - c0);
		uint64_t dirty_after = data_dirty(fs, &lebs_after);
		if (n == 0)
			idle++;
		else
			assert_true(st1.runs > st0.runs || fs->commits > c0);
		if (st1.data_lebs > st0.data_lebs)
			assert_true(dirty_after < dirty_before);
		steps += (unsigned)n;
		/* after the steps, no data LEB has half of it dirty (the step's
		 * own threshold; dead_wm is far below half a LEB here) */
		for (uint32_t l = fs->main_first; l < fs->leb_cnt; l++) {
			struct ubifs_lprops lp;
			assert_int_equal(ubifs_lpt_lookup(fs->lpt, l, &lp), 0);
			if (!(lp.flags & (UBIFS_LPROPS_INDEX | UBIFS_LPROPS_TAKEN)) && lp.free + lp.dirty < fs->leb_size &&
			    l != fs->gc_lnum)
				if (lp.dirty + lp.free >= fs->leb_size / 2 && lp.dirty >= fs->leb_size / 2)
					fail_msg("step round %d: LEB %u still has %u dirty bytes", round, l, lp.dirty);
		}
		print_message("step round %d: %d steps, dirty %llu -> %llu bytes in data LEBs (%u -> %u LEBs)\n", round,
			      n, (unsigned long long)dirty_before, (unsigned long long)dirty_after, lebs_before,
			      lebs_after);
		set_idx_reserve(fs);
		assert_int_equal(round % 2 ? ubifs_unmount_journal(fs) : ubifs_unmount(fs), 0);
		assert_int_equal(ubi_flat_close(&vol), 0);
		fs = mount_img(img, 1, &vol);
		if (wm_check(m, fs, why, sizeof(why)))
			fail_msg("step round %d, read-only remount: %s", round, why);
		if (ubifs_lpt_check(fs->lpt))
			fail_msg("step round %d, LPT at the read-only remount: %s", round, ubifs_errmsg(fs));
		ubifs_unmount(fs);
		ubi_flat_close(&vol);
		fs = mount_img(img, 0, &vol);
	}
	/* read-only and errored file systems refuse */
	ubifs_unmount(fs);
	ubi_flat_close(&vol);
	fs = mount_img(img, 1, &vol);
	assert_int_equal(ubifs_gc_step(fs), -EROFS);
	ubifs_unmount(fs);
	ubi_flat_close(&vol);
	assert_int_equal(ubifs_gc_step(NULL), -EROFS);
	print_message("step: %u steps, %u commits by them, %u idle rounds\n", steps, commits, idle);
	assert_true(steps > 0);
	assert_true(idle < 6);
	wm_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_nand2k),
		cmocka_unit_test(t_nor),
		cmocka_unit_test(t_nand4k),
		cmocka_unit_test(t_step),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
