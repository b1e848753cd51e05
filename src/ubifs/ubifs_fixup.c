/* ubifs_fixup — the free-space fixup a superblock may ask for
 * (UBIFS_FLG_SPACE_FIXUP, mkfs.ubifs -F), done on the first read-write
 * mount as the kernel's fixup_free_space: images written by a flasher that
 * programs erased (0xFF) pages leave "free" space that is not really
 * erased on NAND, so every LEB that has free space is rewritten with only
 * its used part (an atomic LEB change), LEBs with nothing used are
 * unmapped, and the flag is cleared in the superblock. Areas: both master
 * LEBs (up to the current master), the log (unused LEBs unmapped, the head
 * kept up to its used part), the LPT (as the ltab says), the orphan area
 * (unmapped) and the main area (as the LPT says). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ubifs/ubifs_fixup.h"
#include "ubifs/ubifs_log.h"
#include "ubifs/ubifs_lpt.h"
#include "ubifs/ubifs_priv.h"
#include "util/util_endian.h"

static uint32_t align_up(uint32_t x, uint32_t a)
{
	return (x + a - 1) / a * a;
}

/* keep the first len bytes of lnum (a multiple of min. I/O), erase the rest */
static int fixup_leb(struct ubifs_fs *fs, uint32_t lnum, uint32_t len)
{
	if (len == 0)
		return ubifs_leb_unmap(fs, lnum);
	if (len >= fs->leb_size)
		return 0; /* nothing free: nothing to fix */
	int err = ubifs_leb_read(fs, lnum, 0, fs->sbuf, len);
	if (!err)
		err = ubifs_leb_change(fs, lnum, fs->sbuf, len);
	return err;
}

static int clear_flag(struct ubifs_fs *fs)
{
	uint32_t len = align_up(UBIFS_SB_NODE_SZ, fs->min_io_size);
	uint8_t *buf = calloc(1, len);
	if (!buf)
		return -ENOMEM;
	int err = ubifs_leb_read(fs, UBIFS_SB_LNUM, 0, buf, UBIFS_SB_NODE_SZ);
	if (!err) {
		uint32_t flags = get_le32(buf + 28) & ~(uint32_t)UBIFS_FLG_SPACE_FIXUP;
		put_le32(buf + 28, flags);
		ubifs_node_finish(buf, UBIFS_SB_NODE_SZ, ubifs_next_sqnum(fs));
		ubifs_pad_pack(buf + UBIFS_SB_NODE_SZ, len - UBIFS_SB_NODE_SZ);
		err = ubifs_leb_change(fs, UBIFS_SB_LNUM, buf, len);
		if (!err)
			fs->sb.flags = flags;
	}
	free(buf);
	return err;
}

int ubifs_fixup_free_space(struct ubifs_fs *fs)
{
	if (!(fs->sb.flags & UBIFS_FLG_SPACE_FIXUP) || fs->read_only)
		return 0;
	int err = 0;
	uint32_t mst_alsz = align_up(UBIFS_MST_NODE_SZ, fs->min_io_size);
	for (uint32_t lnum = UBIFS_MST_LNUM; !err && lnum < UBIFS_LOG_LNUM; lnum++)
		err = fixup_leb(fs, lnum, fs->mst_offs + mst_alsz);
	uint32_t lhead, lhead_offs, ltail;
	ubifs_log_positions(fs->log, &lhead, &lhead_offs, &ltail);
	for (uint32_t lnum = lhead == fs->log_last ? fs->log_first : lhead + 1; !err && lnum != ltail;
	     lnum = lnum == fs->log_last ? fs->log_first : lnum + 1)
		err = fixup_leb(fs, lnum, 0);
	/* the kernel keeps the commit-start node of the head; references after
	 * it (a journal) are kept too */
	uint32_t keep = align_up(UBIFS_CS_NODE_SZ, fs->min_io_size);
	if (align_up(lhead_offs, fs->min_io_size) > keep)
		keep = align_up(lhead_offs, fs->min_io_size);
	if (!err)
		err = fixup_leb(fs, lhead, keep);
	for (uint32_t lnum = fs->lpt_first; !err && lnum <= fs->lpt_last; lnum++) {
		uint32_t fr, di;
		err = ubifs_lpt_ltab(fs->lpt, lnum, &fr, &di);
		if (!err && fr > 0)
			err = fixup_leb(fs, lnum, fs->leb_size - fr);
	}
	for (uint32_t lnum = fs->orph_first; !err && lnum <= fs->orph_last; lnum++)
		err = fixup_leb(fs, lnum, 0);
	for (uint32_t lnum = fs->main_first; !err && lnum < fs->leb_cnt; lnum++) {
		struct ubifs_lprops lp;
		err = ubifs_lpt_lookup(fs->lpt, lnum, &lp);
		if (!err && lp.free > 0)
			err = fixup_leb(fs, lnum, fs->leb_size - lp.free);
	}
	if (!err)
		err = clear_flag(fs);
	if (err && !fs->err.msg[0])
		util_err_set(&fs->err, err, "mount: the free-space fixup failed (error %d)", err);
	return err;
}
