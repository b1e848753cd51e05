/* test_ubifs_fixup — the free-space fixup (ubifs_fixup.c) of an image made
 * by mkfs.ubifs -F (superblock flag UBIFS_FLG_SPACE_FIXUP), as the kernel's
 * fixup_free_space does it on the first read-write mount:
 *  - both master LEBs keep the master node(s) up to the current one, the log
 *    keeps only its head LEB up to the commit start node, each LPT LEB keeps
 *    its used part (the ltab), the orphan LEBs are unmapped, each main LEB
 *    keeps its used part (the LPT) or is unmapped when nothing is used;
 *  - the kept bytes are those mkfs.ubifs wrote, the flag is cleared in the
 *    superblock (raw bytes at offset 28, the on-flash format), nothing else
 *    of the superblock changes but its sequence number and CRC;
 *  - a read-only mount changes nothing, a second read-write mount does not
 *    redo it.
 * References: mkfs.ubifs's image (the bytes kept, the flag it set), the
 * source tree mkfs.ubifs packed (tt_compare_tree after the fixup), the LPT
 * checked against a scan of the flash (ubifs_lpt_check: the kernel's
 * dbg_check_lprops rules) before it is used as the rule's input, and the
 * kernel's fixup_free_space (fs/ubifs/sb.c) for which LEBs it rewrites. The
 * kernel mounting a fixed-up image: tests/vm/ubifs_mkfs_kernel.sh (its own
 * fixup). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <ubikit/ubikit.h>

#include "ubi/ubi_flat.h"
#include "ubifs/ubifs.h"
#include "ubifs/ubifs_lpt.h"
#include "ubifs/ubifs_media.h"
#include "ubifs/ubifs_priv.h"
#include "ubifs_test_tree.h"
#include "util/util_endian.h"

#define WORK UBIKIT_BUILD_DIR "/ubifs-fixup"

static uint8_t *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	long n = ftell(f);
	assert_true(n > 0);
	rewind(f);
	uint8_t *b = malloc((size_t)n);
	assert_non_null(b);
	assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return b;
}

static struct ubifs_fs *mount_vol(struct ubi_vol_io *vol, int ro)
{
	struct util_err e = {0};
	struct ubifs_mount_opts o = {.read_only = ro};
	struct ubifs_fs *fs = NULL;
	int err = ubifs_mount(vol, &o, &fs, &e);
	if (err)
		fail_msg("mount (%s): %d %s", ro ? "ro" : "rw", err, e.msg);
	return fs;
}

static uint32_t align_up(uint32_t x, uint32_t a)
{
	return (x + a - 1) / a * a;
}

/* what the kernel's rule keeps of each LEB: UINT32_MAX = untouched */
struct plan {
	uint32_t leb_cnt;
	uint32_t keep[4096];
};

static void run_case(const char *name, const char *geo)
{
	char src[512], img[512];
	snprintf(src, sizeof(src), "%s/src", WORK);
	snprintf(img, sizeof(img), "%s/%s.img", WORK, name);
	assert_int_equal(tt_run("mkdir -p '%s'", WORK), 0);
	int dev;
	assert_int_equal(tt_make_tree(src, 0, &dev), 0);
	assert_int_equal(tt_run("mkfs.ubifs -F -r '%s' %s -o '%s'", src, geo, img), 0);
	size_t olen;
	uint8_t *orig = read_file(img, &olen);
	assert_true(get_le32(orig + 28) & UBIFS_FLG_SPACE_FIXUP); /* mkfs.ubifs set it */

	/* 1. read-only: the facts the rule needs (LPT checked against a scan),
	 * and nothing may change */
	struct ubi_vol_io vol;
	assert_int_equal(ubi_flat_open(img, 0, 1, &vol), 0);
	struct ubifs_fs *fs = mount_vol(&vol, 1);
	uint32_t leb = fs->leb_size, min_io = fs->min_io_size;
	if (ubifs_lpt_check(fs->lpt))
		fail_msg("%s: mkfs.ubifs's LPT differs from a scan: %s", name, ubifs_errmsg(fs));
	static struct plan p;
	p.leb_cnt = fs->leb_cnt;
	assert_true(p.leb_cnt <= 4096);
	for (uint32_t l = 0; l < p.leb_cnt; l++)
		p.keep[l] = UINT32_MAX;
	uint32_t mst_alsz = align_up(UBIFS_MST_NODE_SZ, min_io);
	for (uint32_t l = UBIFS_MST_LNUM; l < UBIFS_LOG_LNUM; l++)
		p.keep[l] = fs->mst_offs + mst_alsz;
	/* mkfs.ubifs: the log is its first LEB's commit start node alone */
	for (uint32_t l = fs->log_first; l <= fs->log_last; l++)
		p.keep[l] = l == fs->lhead_lnum ? align_up(UBIFS_CS_NODE_SZ, min_io) : 0;
	for (uint32_t l = fs->lpt_first; l <= fs->lpt_last; l++) {
		uint32_t fr, di;
		assert_int_equal(ubifs_lpt_ltab(fs->lpt, l, &fr, &di), 0);
		if (fr > 0)
			p.keep[l] = leb - fr;
	}
	for (uint32_t l = fs->orph_first; l <= fs->orph_last; l++)
		p.keep[l] = 0;
	for (uint32_t l = fs->main_first; l < fs->leb_cnt; l++) {
		struct ubifs_lprops lp;
		assert_int_equal(ubifs_lpt_lookup(fs->lpt, l, &lp), 0);
		if (lp.free > 0)
			p.keep[l] = leb - lp.free;
	}
	assert_int_equal(ubifs_unmount(fs), 0);
	assert_int_equal(ubi_flat_close(&vol), 0);
	size_t len;
	uint8_t *now = read_file(img, &len);
	assert_true(len == olen && !memcmp(now, orig, len)); /* read-only: untouched */
	free(now);

	/* 2. the first read-write mount fixes */
	assert_int_equal(ubi_flat_open(img, 0, 0, &vol), 0);
	unsigned was_mapped = 0, unmapped = 0, cut = 0;
	for (uint32_t l = 0; l < p.leb_cnt; l++)
		if (p.keep[l] == 0 && vol.is_mapped(vol.ctx, l) == 1)
			was_mapped++;
	fs = mount_vol(&vol, 0);
	uint8_t *buf = malloc(leb), *ref = malloc(leb);
	assert_non_null(buf);
	assert_non_null(ref);
	for (uint32_t l = 0; l < p.leb_cnt; l++) {
		uint32_t k = p.keep[l];
		if (k == 0) {
			if (vol.is_mapped(vol.ctx, l) != 0)
				fail_msg("%s: LEB %u holds nothing and is still mapped", name, l);
			unmapped++;
			continue;
		}
		if (k == UINT32_MAX || k >= leb)
			continue;
		cut++;
		assert_int_equal(vol.is_mapped(vol.ctx, l), 1);
		assert_int_equal(vol.read(vol.ctx, l, 0, buf, leb), 0);
		size_t o = (size_t)l * leb;
		if (l != UBIFS_SB_LNUM) { /* the kept part is mkfs.ubifs's */
			memset(ref, 0xFF, leb);
			if (o < olen)
				memcpy(ref, orig + o, olen - o < k ? olen - o : k);
			/* the mount writes its master node after the kept ones */
			uint32_t n = l == UBIFS_MST_LNUM || l == UBIFS_MST_LNUM + 1 ? k : leb;
			for (uint32_t i = 0; i < n; i++)
				if (buf[i] != ref[i])
					fail_msg("%s: LEB %u: byte %u is %#x, not %#x (%u bytes kept)", name, l, i, buf[i],
						 ref[i], k);
		}
	}
	/* the superblock: flag cleared, sqnum/CRC new, the rest unchanged */
	assert_int_equal(vol.read(vol.ctx, UBIFS_SB_LNUM, 0, buf, leb), 0);
	assert_int_equal(get_le32(buf + 28), get_le32(orig + 28) & ~(uint32_t)UBIFS_FLG_SPACE_FIXUP);
	assert_memory_equal(buf + 16, orig + 16, 12);                    /* len, type, pad, key_hash... */
	assert_memory_equal(buf + 32, orig + 32, 8); /* min_io_size, leb_size */
	/* leb_cnt: a read-write mount grows it to the volume, at most
	 * max_leb_cnt (kernel ubifs_read_superblock / fixup_leb_cnt) */
	uint32_t want_cnt = get_le32(orig + 44) < vol.leb_count ? get_le32(orig + 44) : vol.leb_count;
	if (get_le32(orig + 40) > want_cnt)
		want_cnt = get_le32(orig + 40);
	assert_int_equal(get_le32(buf + 40), want_cnt);
	assert_memory_equal(buf + 44, orig + 44, UBIFS_SB_NODE_SZ - 44); /* the rest */
	print_message("%s: %u LEBs unmapped (%u were mapped), %u cut to their used part\n", name, unmapped,
		      was_mapped, cut);
	assert_true(was_mapped > 0); /* the case has something to fix */
	assert_true(cut > 0);
	assert_int_equal(fs->sb.flags & UBIFS_FLG_SPACE_FIXUP, 0);
	assert_int_equal(ubifs_unmount(fs), 0);
	assert_int_equal(ubi_flat_close(&vol), 0);

	/* 3. a second read-write mount (no flag: no fixup) keeps an LPT that
	 * matches the flash, and the tree is the source's */
	assert_int_equal(ubi_flat_open(img, 0, 0, &vol), 0);
	fs = mount_vol(&vol, 0);
	if (ubifs_lpt_check(fs->lpt))
		fail_msg("%s: LPT after the fixup: %s", name, ubifs_errmsg(fs));
	assert_int_equal(ubifs_unmount(fs), 0);
	assert_int_equal(ubi_flat_close(&vol), 0);
	struct ubikit_fs *ufs;
	char msg[512];
	assert_int_equal(ubi_flat_open(img, 0, 1, &vol), 0);
	if (ubikit_mount_ex(&vol, NULL, &ufs, msg, sizeof(msg)))
		fail_msg("%s: mount after the fixup: %s", name, msg);
	uint64_t entries = 0;
	assert_int_equal(tt_compare_tree(ufs, src, &entries), 0);
	assert_true(entries > 10);
	ubikit_unmount(ufs);
	ubi_flat_close(&vol);
	free(buf);
	free(ref);
	free(orig);
}

static void t_nand2k(void **s)
{
	(void)s;
	run_case("nand2k", "-m 2048 -e 126976 -c 64 -x lzo");
}

static void t_nor(void **s)
{
	(void)s;
	run_case("nor", "-m 8 -e 65408 -c 96 -x zlib");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_nand2k),
		cmocka_unit_test(t_nor),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
