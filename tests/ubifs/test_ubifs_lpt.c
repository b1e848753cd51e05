/* test_ubifs_lpt — the LPT read at mount, judged independently:
 * - images made by Debian's mkfs.ubifs (NAND 2K/128K, 4K/256K, NOR 64K; the
 *   small model and, forced by a large -c, the big model): the tree must
 *   equal what a scan of every main-area LEB says with each node's liveness
 *   decided by the index (ubifs_lpt_check, the kernel's dbg_check_lprops
 *   rules), the ltab must equal what the LPT area holds, and the totals must
 *   equal the master node's;
 * - kernel-written images (tests/data): the same, for the clean one; the
 *   committed tree against the master's totals and the LPT area for all;
 * - corruption: a flipped bit in any LPT node is refused at mount with the
 *   LEB:offset named. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "flash/flash.h"
#include "ubi/ubi_flat.h"
#include "ubifs/ubifs.h"
#include "ubifs/ubifs_lpt.h"
#include "ubifs/ubifs_priv.h"
#include "ubifs_lpt_churn.h"
#include "ubifs_test_tree.h"

#define WORK UBIKIT_BUILD_DIR "/ubifs-lpt-test"

static int setup(void **state)
{
	(void)state;
	if (tt_run("mkdir -p '%s'", WORK))
		return -1;
	int has_dev;
	return tt_make_tree(WORK "/src", 0, &has_dev) ? -1 : 0;
}

static void totals_equal_master(const struct ubifs_fs *fs, const char *what)
{
	struct ubifs_lp_stats s;
	ubifs_lpt_stats(fs->lpt, &s);
	/* the kernel's ubifs_read_master: LEBs the volume grew by are empty */
	struct ubifs_mst_node mm = fs->mst;
	const struct ubifs_mst_node *m = &mm;
	uint32_t growth = fs->leb_cnt - mm.leb_cnt;
	struct ubifs_lpt_geom g;
	ubifs_lpt_geometry(fs->lpt, &g);
	mm.empty_lebs += growth;
	mm.total_free += (uint64_t)growth * fs->leb_size;
	mm.total_dark += (uint64_t)growth * g.dark_wm;
	if (s.empty_lebs != m->empty_lebs || s.idx_lebs != m->idx_lebs || s.total_free != m->total_free ||
	    s.total_dirty != m->total_dirty || s.total_used != m->total_used || s.total_dead != m->total_dead ||
	    s.total_dark != m->total_dark)
		fail_msg("%s: LPT totals empty %u idx %u free %llu dirty %llu used %llu dead %llu dark %llu; master: %u %u %llu %llu %llu %llu %llu",
			 what, s.empty_lebs, s.idx_lebs, (unsigned long long)s.total_free,
			 (unsigned long long)s.total_dirty, (unsigned long long)s.total_used,
			 (unsigned long long)s.total_dead, (unsigned long long)s.total_dark, m->empty_lebs, m->idx_lebs,
			 (unsigned long long)m->total_free, (unsigned long long)m->total_dirty,
			 (unsigned long long)m->total_used, (unsigned long long)m->total_dead,
			 (unsigned long long)m->total_dark);
}

static struct ubifs_fs *mount_vol(struct ubi_vol_io *vol, const char *what)
{
	struct ubifs_mount_opts o = {.read_only = 1};
	struct ubifs_fs *fs = NULL;
	struct util_err e = {{0}};
	int err = ubifs_mount(vol, &o, &fs, &e);
	if (err)
		fail_msg("mount %s: %d %s", what, err, e.msg);
	return fs;
}

static void check_mkfs(const char *name, const char *args, int expect_big)
{
	char img[512];
	snprintf(img, sizeof(img), "%s/%s.img", WORK, name);
	assert_int_equal(tt_run("mkfs.ubifs -r '%s/src' %s -o '%s'", WORK, args, img), 0);
	struct ubi_vol_io vol;
	assert_int_equal(ubi_flat_open(img, 0, 1, &vol), 0);
	if (expect_big) {
		/* keep the volume at the image's LEB count: growing to tens of
		 * thousands of empty LEBs only makes the scan check slow */
		struct ubifs_sb_node sb;
		assert_int_equal(ubifs_read_sb(&vol, &sb, NULL), 0);
		vol.leb_count = sb.leb_cnt;
	}
	struct ubifs_fs *fs = mount_vol(&vol, img);
	struct ubifs_lpt_geom g;
	ubifs_lpt_geometry(fs->lpt, &g);
	fprintf(stderr, "%s: %s model, height %u, %u pnodes, %u nnodes, pnode %u B, nnode %u B, ltab %u B, lsave %u B; %u main LEBs\n",
		name, g.big_model ? "big" : "small", g.hght, g.pnode_cnt, g.nnode_cnt, g.pnode_sz, g.nnode_sz, g.ltab_sz,
		g.lsave_sz, fs->main_lebs);
	assert_int_equal(g.big_model, expect_big);
	totals_equal_master(fs, name);
	int err = ubifs_lpt_check(fs->lpt);
	if (err)
		fail_msg("%s: %s", name, fs->err.msg);
	/* a planted disagreement must be seen: one LEB's dirty space */
	struct ubifs_lprops lp;
	assert_int_equal(ubifs_lpt_lookup(fs->lpt, fs->main_first + 3, &lp), 0);
	assert_int_equal(ubifs_lpt_set(fs->lpt, lp.lnum, lp.free, lp.dirty + 8, lp.flags), 0);
	assert_int_equal(ubifs_lpt_check(fs->lpt), -EUCLEAN);
	assert_non_null(strstr(fs->err.msg, "LPT check"));
	ubifs_unmount(fs);

	/* every LPT LEB: one flipped bit in a node byte is refused at mount,
	 * naming the place; a bit in unused space is not */
	uint8_t *buf = malloc(vol.leb_size);
	int refused = 0;
	uint32_t lpt_first = 0, lpt_last = 0;
	{
		struct ubifs_fs *f2 = mount_vol(&vol, img);
		lpt_first = f2->lpt_first;
		lpt_last = f2->lpt_last;
		ubifs_unmount(f2);
	}
	ubi_flat_close(&vol);
	for (uint32_t l = lpt_first; l <= lpt_last && l < lpt_first + 3; l++) {
		FILE *f = fopen(img, "r+b");
		assert_non_null(f);
		long pos = (long)l * vol.leb_size;
		fseek(f, pos, SEEK_SET);
		size_t n = fread(buf, 1, vol.leb_size, f);
		if (n == 0 || buf[0] == 0xFF) {
			fclose(f);
			continue;
		}
		uint8_t orig = buf[5];
		buf[5] ^= 0x10;
		fseek(f, pos + 5, SEEK_SET);
		fputc(buf[5], f);
		fclose(f);
		assert_int_equal(ubi_flat_open(img, 0, 1, &vol), 0);
		struct ubifs_mount_opts o = {.read_only = 1};
		struct ubifs_fs *bad = NULL;
		struct util_err e = {{0}};
		err = ubifs_mount(&vol, &o, &bad, &e);
		if (err) {
			refused++;
			char where[32];
			snprintf(where, sizeof(where), "LEB %u:", l);
			if (!strstr(e.msg, where) && !strstr(e.msg, "LPT"))
				fail_msg("%s: flipped bit in LPT LEB %u: message does not name it: %s", name, l, e.msg);
			fprintf(stderr, "  bit flip in LPT LEB %u refused: %s\n", l, e.msg);
		} else {
			ubifs_unmount(bad);
		}
		ubi_flat_close(&vol);
		f = fopen(img, "r+b");
		fseek(f, pos + 5, SEEK_SET);
		fputc(orig, f);
		fclose(f);
	}
	free(buf);
	assert_true(refused > 0);
	tt_run("rm -f '%s'", img);
}

static void test_mkfs_nand2k_small(void **s)
{
	(void)s;
	check_mkfs("nand2k", "-m 2048 -e 126976 -c 200 -x lzo", 0);
}
static void test_mkfs_nand2k_big(void **s)
{
	(void)s;
	check_mkfs("nand2k-big", "-m 2048 -e 126976 -c 40000 -j 1MiB -x lzo", 1);
}
static void test_mkfs_nand4k(void **s)
{
	(void)s;
	check_mkfs("nand4k", "-m 4096 -e 253952 -c 300 -x zlib", 0);
}
static void test_mkfs_nand4k_big(void **s)
{
	(void)s;
	check_mkfs("nand4k-big", "-m 4096 -e 253952 -c 60000 -j 1MiB -x zlib", 1);
}
static void test_mkfs_nor(void **s)
{
	(void)s;
	check_mkfs("nor", "-m 8 -e 65408 -c 400 -x none", 0);
}
static void test_mkfs_nor_big(void **s)
{
	(void)s;
	check_mkfs("nor-big", "-m 8 -e 65408 -c 30000 -j 1MiB -x none", 1);
}

struct kcase {
	const char *name;
	struct flash_geometry geo;
	int has_oob, clean;
};

static void test_kernel_images(void **s)
{
	(void)s;
	static const struct kcase cases[] = {
		{"nand2k-clean", {FLASH_NAND, 2048, 512, 64, 131072, 128}, 0, 1},
		{"nand2k-unclean", {FLASH_NAND, 2048, 512, 64, 131072, 128}, 0, 0},
		{"nor-zlib-unclean", {FLASH_NOR, 1, 1, 0, 65536, 256}, 0, 0},
		{"nand4k-oob-zstd-unclean", {FLASH_NAND, 4096, 1024, 128, 262144, 256}, 1, 0},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct kcase *c = &cases[i];
		char gz[512], work[512];
		snprintf(gz, sizeof(gz), "%s/kernel-images/%s.img.gz", UBIKIT_TEST_DATA, c->name);
		snprintf(work, sizeof(work), "%s/%s.flash", WORK, c->name);
		uint8_t *img = NULL;
		size_t len = 0;
		uint32_t leb = 0;
		if (tt_ubi_gz_to_flat(gz, &c->geo, c->has_oob, work, &img, &len, &leb))
			fail_msg("%s: cannot unpack", c->name);
		struct ubi_vol_io vol;
		assert_int_equal(ubi_flat_open_mem(img, len, leb, 1, &vol, NULL), 0);
		struct ubifs_fs *fs = mount_vol(&vol, c->name);
		/* clean: the LPT as the last commit left it, totals as in the
		 * master; unclean: the replay changed it (buds, obsolete nodes) */
		if (c->clean)
			totals_equal_master(fs, c->name);
		int err = ubifs_lpt_check(fs->lpt);
		if (err)
			fail_msg("%s: %s", c->name, fs->err.msg);
		fprintf(stderr, "%s: LPT read%s, tree equals the scan\n", c->name,
			c->clean ? ", totals equal the master's" : " and replayed");
		ubifs_unmount(fs);
		ubi_flat_close(&vol);
		free(img);
		tt_run("rm -f '%s'", work);
	}
}

/* LPT-only commits, many of them (LPT GC, ltab wrap), checked against the
 * flash and a re-read after every 16 and on a fresh mount at the end */
static void churn(const char *name, const char *args, unsigned commits, unsigned scan_every, int expect_big,
		  int expect_short)
{
	char img[512], why[600];
	snprintf(img, sizeof(img), "%s/%s-churn.img", WORK, name);
	assert_int_equal(tt_run("mkfs.ubifs -r '%s/src' %s -o '%s'", WORK, args, img), 0);
	struct lpt_churn_stats st;
	if (lpt_churn(img, 11, commits, scan_every, why, sizeof(why), &st))
		fail_msg("%s: %s", name, why);
	fprintf(stderr, "%s: %u LPT commits (%s model), %u checks, ltab moved %u times, %u LPT GC passes, %u whole-tree rewrites; LPT LEBs free/dirty:",
		name, st.commits, st.big_model ? "big" : "small", st.checks, st.ltab_moves, st.gc_runs, st.write_all_runs);
	for (unsigned i = 0; i < st.lpt_lebs && i < 16; i++)
		fprintf(stderr, " %u/%u", st.ltab_free[i], st.ltab_dirty[i]);
	fprintf(stderr, "\n");
	assert_int_equal(st.big_model, expect_big);
	/* the LPT went round its area (big: 8 LEBs, at least twice moved) */
	assert_true(st.ltab_moves >= (expect_big ? 2 : st.lpt_lebs));
	/* LPT GC passes (big model), the whole tree rewritten when the area ran
	 * short (small model, NAND: a commit fills a page) */
	if (expect_big)
		assert_true(st.gc_runs > 0);
	if (expect_short)
		assert_true(st.write_all_runs > 0);
	tt_run("rm -f '%s'", img);
}

static void test_commit_nand2k(void **s)
{
	(void)s;
	churn("nand2k", "-m 2048 -e 129024 -c 420 -x lzo", 300, 4, 0, 1);
}
static void test_commit_nor(void **s)
{
	(void)s;
	churn("nor", "-m 8 -e 65408 -c 300 -x zlib", 2000, 16, 0, 0);
}
static void test_commit_nand2k_big(void **s)
{
	(void)s;
	churn("nand2k-big", "-m 2048 -e 126976 -c 40000 -j 1MiB -x none", 300, 0, 1, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mkfs_nand2k_small), cmocka_unit_test(test_mkfs_nand2k_big),
		cmocka_unit_test(test_mkfs_nand4k),       cmocka_unit_test(test_mkfs_nand4k_big),
		cmocka_unit_test(test_mkfs_nor),          cmocka_unit_test(test_mkfs_nor_big),
		cmocka_unit_test(test_kernel_images),     cmocka_unit_test(test_commit_nand2k),
		cmocka_unit_test(test_commit_nor),        cmocka_unit_test(test_commit_nand2k_big),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
