/* test_ubifs_check_detect — the checkers (ubifs_check.c: the kernel's
 * dbg_check_filesystem / dbg_check_idx_size rules; ubifs_lpt_check.c: its
 * dbg_check_lprops rules) must find inconsistencies planted in a good
 * mkfs.ubifs image. Each case changes one field of one node (the node's CRC
 * made valid again, so only the check's logic can see it) or one LPT entry
 * in memory, mounts read-only and asks the checker, which must answer
 * -EUCLEAN naming the changed node's LEB:offset (or the LEB). The reference
 * is the planted change itself against the on-flash format's rules
 * (../shared/spec/UBIFS-FORMAT.md §6-§7: nlink = names of the inode, an
 * entry names an existing inode, nlink 0 only for orphans, xattr_cnt =
 * its xattr entries, index levels, at most fanout branches,
 * keys in order; LPT free/dirty/flags = a scan of the LEB); the unchanged
 * image must check clean. */
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
#include "ubifs/ubifs_lpt.h"
#include "ubifs/ubifs_media.h"
#include "ubifs/ubifs_priv.h"
#include "ubifs/ubifs_scan.h"
#include "ubifs_test_tree.h"
#include "util/util_endian.h"

#define WORK UBIKIT_BUILD_DIR "/ubifs-check-detect"

static uint8_t *base;
static size_t base_len;
static uint32_t leb, main_first, leb_cnt, fanout;

/* nodes found by a scan of the pristine image */
struct where {
	uint32_t lnum, offs, len;
};
static struct where ino1;   /* a non-root inode with nlink 1 */
static struct where dent;   /* a directory entry */
static struct where idx0;   /* a level-0 index node not on the leftmost path, >= 2 branches */
static struct where idx_hi; /* an index node of level >= 1 not on the leftmost path */
static uint32_t root_lnum, root_offs;

static int scan_cb(void *arg, const struct ubifs_scan_node *n)
{
	(void)arg;
	if (n->kind != UBIFS_SCAN_NODE)
		return 0;
	struct where w = {n->lnum, n->offs, n->len};
	if (n->type == UBIFS_INO_NODE && get_le32(n->node + 24) > 1 && get_le32(n->node + 92) == 1 && !ino1.len)
		ino1 = w;
	else if (n->type == UBIFS_DENT_NODE && !dent.len)
		dent = w;
	else if (n->type == UBIFS_IDX_NODE && !(n->lnum == root_lnum && n->offs == root_offs)) {
		uint16_t cnt = get_le16(n->node + 24), level = get_le16(n->node + 26);
		if (level == 0 && cnt >= 2 && get_le32(n->node + 28 + 12) > 1 && !idx0.len)
			idx0 = w;
		else if (level >= 1 && get_le32(n->node + 28 + 12) > 1 && !idx_hi.len)
			idx_hi = w;
	}

	return 0;
}

static int setup(void **s)
{
	(void)s;
	char src[512], img[512];
	snprintf(src, sizeof(src), "%s/src", WORK);
	snprintf(img, sizeof(img), "%s/base.img", WORK);
	int dev;
	if (tt_run("mkdir -p '%s'", WORK) || tt_make_tree(src, 0, &dev))
		return -1;
	/* enough names for an index of three levels with fanout 8 */
	if (tt_run("mkdir -p '%s/many' && cd '%s/many' && for i in $(seq 1 300); do echo $i > f$i; done", src, src))
		return -1;
	if (tt_run("mkfs.ubifs -r '%s' -m 2048 -e 126976 -c 64 -f 8 -x lzo -o '%s'", src, img))
		return -1;
	FILE *f = fopen(img, "rb");
	if (!f)
		return -1;
	fseek(f, 0, SEEK_END);
	base_len = (size_t)ftell(f);
	rewind(f);
	base = malloc(base_len);
	if (!base || fread(base, 1, base_len, f) != base_len)
		return -1;
	fclose(f);
	struct ubi_vol_io vol;
	struct util_err e = {0};
	if (ubi_flat_open_mem(base, base_len, 126976, 1, &vol, &e))
		return -1;
	struct ubifs_fs *fs = NULL;
	struct ubifs_mount_opts o = {.read_only = 1};
	if (ubifs_mount(&vol, &o, &fs, &e)) {
		fprintf(stderr, "mount: %s\n", e.msg);
		return -1;
	}
	leb = fs->leb_size, main_first = fs->main_first, leb_cnt = fs->leb_cnt, fanout = fs->fanout;
	struct ubifs_fs_info info;
	ubifs_get_info(fs, &info);
	root_lnum = info.mst.root_lnum, root_offs = info.mst.root_offs;
	int clean = ubifs_check(fs) == 0 && ubifs_lpt_check(fs->lpt) == 0;
	ubifs_unmount(fs);
	for (uint32_t l = main_first; l < leb_cnt && (size_t)l * leb < base_len; l++)
		if (ubifs_scan_leb(&vol, l, fanout, scan_cb, NULL))
			return -1;
	ubi_flat_close(&vol);
	fprintf(stderr, "base: clean %d; inode at %u:%u, entry at %u:%u, index %u:%u and %u:%u\n", clean, ino1.lnum,
		ino1.offs, dent.lnum, dent.offs, idx0.lnum, idx0.offs, idx_hi.lnum, idx_hi.offs);
	return clean && ino1.len && dent.len && idx0.len && idx_hi.len ? 0 : -1;
}

static int teardown(void **s)
{
	(void)s;
	free(base);
	return 0;
}

/* node bytes in a copy of the image; CRC made valid again after the edit */
static uint8_t *node_at(uint8_t *img, const struct where *w)
{
	return img + (size_t)w->lnum * leb + w->offs;
}
static void refinish(uint8_t *img, const struct where *w)
{
	uint8_t *n = node_at(img, w);
	ubifs_node_finish(n, get_le32(n + 16), get_le64(n + 8));
}

struct got {
	unsigned long problems;
	char first[512];
};
static int report_cb(void *ctx, const char *msg, int64_t lnum, int64_t offs, uint64_t inum)
{
	struct got *g = ctx;
	(void)lnum, (void)offs, (void)inum;
	if (!g->first[0])
		snprintf(g->first, sizeof(g->first), "%s", msg);
	return 0;
}

/* mount the edited copy read-only; ubifs_check must name LEB:offs */
static void expect_found(const char *name, uint8_t *img, const struct where *w)
{
	struct ubi_vol_io vol;
	struct util_err e = {0};
	assert_int_equal(ubi_flat_open_mem(img, base_len, leb, 1, &vol, &e), 0);
	struct ubifs_fs *fs = NULL;
	struct ubifs_mount_opts o = {.read_only = 1};
	if (ubifs_mount(&vol, &o, &fs, &e))
		fail_msg("%s: the mount refused it already: %s", name, e.msg);
	int err = ubifs_check(fs);
	char want[64];
	snprintf(want, sizeof(want), "LEB %u:%u", w->lnum, w->offs);
	print_message("%s: %d %s\n", name, err, ubifs_errmsg(fs));
	if (err != -EUCLEAN)
		fail_msg("%s: ubifs_check answered %d, not -EUCLEAN", name, err);
	if (!strstr(ubifs_errmsg(fs), want))
		fail_msg("%s: the message does not name %s: %s", name, want, ubifs_errmsg(fs));
	/* the report form counts it too */
	struct got g = {0};
	assert_int_equal(ubifs_check_report(fs, report_cb, &g, &g.problems), 0);
	assert_true(g.problems >= 1);
	assert_non_null(strstr(g.first, want));
	ubifs_unmount(fs);
	ubi_flat_close(&vol);
}

static uint8_t *copy(void)
{
	uint8_t *c = malloc(base_len);
	assert_non_null(c);
	memcpy(c, base, base_len);
	return c;
}

static void t_nlink(void **s)
{
	(void)s;
	uint8_t *img = copy();
	put_le32(node_at(img, &ino1) + 92, 2); /* one entry names it */
	refinish(img, &ino1);
	expect_found("nlink", img, &ino1);
	free(img);
}

static void t_nlink0(void **s)
{
	(void)s;
	uint8_t *img = copy();
	put_le32(node_at(img, &ino1) + 92, 0); /* a deleted inode, and no orphan says so */
	refinish(img, &ino1);
	expect_found("nlink0", img, &ino1);
	free(img);
}

static void t_xattr_cnt(void **s)
{
	(void)s;
	uint8_t *img = copy();
	put_le32(node_at(img, &ino1) + 116, 1); /* xattr_cnt 1, no xattr entry */
	refinish(img, &ino1);
	expect_found("xattr-cnt", img, &ino1);
	free(img);
}

static void t_dent_target(void **s)
{
	(void)s;
	uint8_t *img = copy();
	put_le64(node_at(img, &dent) + 40, 0x7FFFFF); /* no such inode */
	refinish(img, &dent);
	expect_found("dent-target", img, &dent);
	free(img);
}

static void t_idx_level(void **s)
{
	(void)s;
	uint8_t *img = copy();
	put_le16(node_at(img, &idx0) + 26, 1);
	refinish(img, &idx0);
	expect_found("idx-level", img, &idx0);
	free(img);
}

static void t_idx_fanout(void **s)
{
	(void)s;
	uint8_t *img = copy();
	/* a level-0 node the mount does not read (the mount's own check
	 * refuses such a node on its path: test_ubifs_sb_master's field) */
	put_le16(node_at(img, &idx0) + 24, (uint16_t)(fanout + 1));
	refinish(img, &idx0);
	expect_found("idx-fanout", img, &idx0);
	free(img);
}

static void t_idx_order(void **s)
{
	(void)s;
	uint8_t *img = copy();
	uint8_t *n = node_at(img, &idx0), tmp[20];
	/* the last two branches swapped: keys out of order, each still its leaf's */
	uint16_t cnt = get_le16(n + 24);
	uint8_t *a = n + 28 + (cnt - 2) * 20, *b = a + 20;
	memcpy(tmp, a, 20);
	memcpy(a, b, 20);
	memcpy(b, tmp, 20);
	refinish(img, &idx0);
	expect_found("idx-order", img, &idx0);
	free(img);
}

/* a branch of a level-1 node pointing outside the main area */
static void t_idx_child_range(void **s)
{
	(void)s;
	uint8_t *img = copy();
	uint8_t *n = node_at(img, &idx_hi);
	put_le32(n + 28 + 20, 0); /* branch 1: LEB 0 */
	refinish(img, &idx_hi);
	struct where child = {0, get_le32(n + 28 + 24), get_le32(n + 28 + 28)};
	expect_found("idx-child-range", img, &child); /* the message names the child */
	free(img);
}

/* a leaf branch pointing outside the main area */
static void t_leaf_range(void **s)
{
	(void)s;
	uint8_t *img = copy();
	put_le32(node_at(img, &idx0) + 28 + 20, 1); /* branch 1: a master LEB */
	refinish(img, &idx0);
	expect_found("leaf-range", img, &idx0);
	free(img);
}

/* a branch key below the parent's key for the node */
static void t_key_range(void **s)
{
	(void)s;
	uint8_t *img = copy();
	put_le32(node_at(img, &idx0) + 28 + 12, 1); /* branch 0's key: inode 1 */
	refinish(img, &idx0);
	expect_found("key-range", img, &idx0);
	free(img);
}

/* an entry whose own key is not the index's key for it */
static void t_leaf_key(void **s)
{
	(void)s;
	uint8_t *img = copy();
	uint8_t *n = node_at(img, &dent);
	put_le32(n + 24, get_le32(n + 24) + 1);
	refinish(img, &dent);
	expect_found("leaf-key", img, &dent);
	free(img);
}

/* LPT entries changed in memory after a clean mount */
static void t_lprops(void **s)
{
	(void)s;
	struct ubi_vol_io vol;
	struct util_err e = {0};
	uint8_t *img = copy();
	const char *what[] = {"dirty", "index flag on data", "no index flag", "free"};
	for (int c = 0; c < 4; c++) {
		assert_int_equal(ubi_flat_open_mem(img, base_len, leb, 1, &vol, &e), 0);
		struct ubifs_fs *fs = NULL;
		struct ubifs_mount_opts o = {.read_only = 1};
		assert_int_equal(ubifs_mount(&vol, &o, &fs, &e), 0);
		assert_int_equal(ubifs_lpt_check(fs->lpt), 0);
		uint32_t target = UINT32_MAX;
		struct ubifs_lprops lp;
		for (uint32_t l = fs->main_first; l < fs->leb_cnt && target == UINT32_MAX; l++) {
			assert_int_equal(ubifs_lpt_lookup(fs->lpt, l, &lp), 0);
			int is_idx = !!(lp.flags & UBIFS_LPROPS_INDEX), used = lp.free + lp.dirty < fs->leb_size;
			if (used && (c == 2 ? is_idx : !is_idx) && (c == 1 || c == 2 || lp.free >= 8))
				target = l;
		}
		assert_int_not_equal(target, UINT32_MAX);
		assert_int_equal(ubifs_lpt_lookup(fs->lpt, target, &lp), 0);
		if (c == 0)
			lp.dirty += 8, lp.free -= 8;
		else if (c == 1)
			lp.flags |= UBIFS_LPROPS_INDEX;
		else if (c == 2)
			lp.flags &= ~UBIFS_LPROPS_INDEX;
		else
			lp.free -= 8;
		assert_int_equal(ubifs_lpt_set(fs->lpt, target, lp.free, lp.dirty, lp.flags), 0);
		int err = ubifs_lpt_check(fs->lpt);
		print_message("lprops %s (LEB %u): %d %s\n", what[c], target, err, ubifs_errmsg(fs));
		char want[32];
		snprintf(want, sizeof(want), "LEB %u", target);
		if (err != -EUCLEAN)
			fail_msg("lprops %s: ubifs_lpt_check answered %d", what[c], err);
		/* the LEB itself, not only the totals (the kernel checks each LEB) */
		if (!strstr(ubifs_errmsg(fs), want))
			fail_msg("lprops %s: the message does not name LEB %u: %s", what[c], target, ubifs_errmsg(fs));
		ubifs_unmount(fs);
		ubi_flat_close(&vol);
	}
	free(img);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_nlink),      cmocka_unit_test(t_dent_target), cmocka_unit_test(t_idx_level),
		cmocka_unit_test(t_idx_fanout), cmocka_unit_test(t_idx_order),   cmocka_unit_test(t_idx_child_range),
		cmocka_unit_test(t_leaf_range), cmocka_unit_test(t_key_range),   cmocka_unit_test(t_leaf_key),
		cmocka_unit_test(t_nlink0),     cmocka_unit_test(t_xattr_cnt),   cmocka_unit_test(t_lprops),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
