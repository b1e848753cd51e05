/* ubifs_recovery_write — what a read-write mount after an unclean unmount
 * writes, as the kernel's recovery.c does on a read-write mount (facts
 * only): the recovered master node written back to both master LEBs, the
 * index and LPT heads cleaned of a half-written commit, each recovered LEB
 * (last buds, log head, orphan LEBs) rewritten atomically with only its good
 * part and padding, inode sizes fixed from the journal's data, and a GC LEB
 * taken followed by a commit (kernel ubifs_rcvry_gc_commit), which makes the
 * orphan killing and the size fixes part of the index. The read-only side
 * (what to keep) is ubifs_recovery.c. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ubifs/ubifs_gc.h"
#include "ubifs/ubifs_journal.h"
#include "ubifs/ubifs_lpt.h"
#include "ubifs/ubifs_priv.h"
#include "ubifs/ubifs_recovery_write.h"
#include "ubifs/ubifs_tnc.h"
#include "ubifs/ubifs_wbuf.h"
#include "util/util_endian.h"

static uint32_t align_up(uint32_t x, uint32_t a)
{
	return (x + a - 1) / a * a;
}

int ubifs_rcvry_fix_leb(struct ubifs_fs *fs, const struct ubifs_sleb *sleb, uint32_t start)
{
	uint32_t endpt = start;
	if (sleb->nodes_cnt) {
		const struct ubifs_snode *s = &sleb->nodes[sleb->nodes_cnt - 1];
		endpt = s->offs + s->len;
	}
	if (endpt == 0) {
		/* Nothing good in it: empty, but mapped again at once. The LEB
		 * may stay a journal head at offset 0, which the next commit
		 * start names; unmapped, its old PEB could come back with the
		 * torn contents after a later cut (or, under Linux's UBI, a clean
		 * detach) and be replayed as that bud (kernel add_bud maps an
		 * empty bud's LEB for the same reason). */
		int err = ubifs_leb_unmap(fs, sleb->lnum);
		return err ? err : ubifs_leb_map(fs, sleb->lnum);
	}
	uint32_t len = align_up(endpt, fs->min_io_size);
	if (len > fs->leb_size)
		len = fs->leb_size;
	uint8_t *buf = malloc(fs->leb_size);
	if (!buf)
		return -ENOMEM;
	int err = start ? ubifs_leb_read(fs, sleb->lnum, 0, buf, start) : 0;
	if (!err) {
		/* the kept nodes as scanned, then padding up to the min. I/O unit */
		memcpy(buf + start, sleb->buf + start, endpt - start);
		uint32_t a8 = ubifs_align8(endpt);
		if (a8 > len)
			a8 = len;
		memset(buf + endpt, 0, a8 - endpt);
		if (len > a8)
			ubifs_pad_pack(buf + a8, len - a8);
		err = ubifs_leb_change(fs, sleb->lnum, buf, len);
	}
	free(buf);
	return err;
}

int ubifs_rcvry_write_master(struct ubifs_fs *fs)
{
	uint32_t alsz = align_up(UBIFS_MST_NODE_SZ, fs->min_io_size);
	uint8_t *buf = calloc(1, alsz);
	if (!buf)
		return -ENOMEM;
	struct ubifs_mst_node m = fs->mst;
	m.flags |= UBIFS_MST_RCVRY;
	ubifs_mst_pack(buf, &m);
	ubifs_node_finish(buf, UBIFS_MST_NODE_SZ, m.sqnum);
	uint32_t a8 = ubifs_align8(UBIFS_MST_NODE_SZ);
	ubifs_pad_pack(buf + a8, alsz - a8);
	int err = ubifs_leb_change(fs, UBIFS_MST_LNUM, buf, alsz);
	if (!err)
		err = ubifs_leb_change(fs, UBIFS_MST_LNUM + 1, buf, alsz);
	free(buf);
	if (!err) {
		fs->mst_lnum = UBIFS_MST_LNUM;
		fs->mst_offs = 0;
		fs->mst_recovered = 0;
	}
	return err;
}

/* kernel recover_head: nothing may follow a head on flash */
static int recover_head(struct ubifs_fs *fs, uint32_t lnum, uint32_t offs)
{
	uint32_t len = fs->max_write_size;
	if (offs + len > fs->leb_size)
		len = fs->leb_size - offs;
	if (!len)
		return 0;
	int err = ubifs_leb_read(fs, lnum, offs, fs->sbuf, len);
	if (!err && ubifs_is_empty(fs->sbuf, len))
		return 0;
	if (offs == 0)
		return ubifs_leb_unmap(fs, lnum);
	err = ubifs_leb_read(fs, lnum, 0, fs->sbuf, offs);
	if (err)
		return err;
	return ubifs_leb_change(fs, lnum, fs->sbuf, offs);
}

int ubifs_rcvry_inl_heads(struct ubifs_fs *fs)
{
	int err = recover_head(fs, fs->mst.ihead_lnum, fs->mst.ihead_offs);
	if (!err)
		err = recover_head(fs, fs->mst.nhead_lnum, fs->mst.nhead_offs);
	return err;
}

/* Inodes whose data reach beyond their size get the data's size in the
 * inode node where it lies (kernel fix_size_in_place): the LEB's used part
 * read, the size and CRC changed, and the LEB written back by an atomic
 * change, so the index and the LPT stay as they are and a cut leaves the
 * old LEB or the new one. This runs before the recovery's first commit: a
 * commit puts the data beyond the old size into the index, and the next
 * mount replays only the journal after it, so a fix still waiting in memory
 * or in the journal behind that commit would be lost by a cut between the
 * two (torture: nand4k seed 303, a recovery mount cut in its second master
 * copy). Authenticated file systems keep the node hashes of the index: they
 * get a new inode node through the journal instead (write_sizes), as the
 * kernel does. ubifs_recover_size ran first. */
static int fix_sizes_in_place(struct ubifs_fs *fs)
{
	if (!fs->size_fix_cnt)
		return 0;
	/* what the heads hold in memory first: a LEB rewritten below must
	 * carry it, and a head goes on after it on clean flash */
	int err = ubifs_jnl_sync_all(fs);
	if (err)
		return err;
	uint8_t *buf = malloc(fs->leb_size);
	if (!buf)
		return -ENOMEM;
	for (size_t i = 0; !err && i < fs->size_fix_cnt; i++) {
		const struct ubifs_size_fix *e = &fs->size_fix[i];
		struct ubifs_key k = ubifs_key_make(e->inum, UBIFS_INO_KEY, 0);
		struct ubifs_zbranch zb;
		err = ubifs_tnc_lookup_at(fs, &k, fs->nbuf, &zb);
		if (err == -ENOENT) {
			err = 0;
			continue;
		}
		if (err || get_le64(fs->nbuf + 48) >= e->d_size)
			continue;
		struct ubifs_lprops lp;
		err = ubifs_lpt_lookup(fs->lpt, zb.lnum, &lp);
		if (err)
			break;
		uint32_t used = align_up(fs->leb_size - lp.free, fs->min_io_size);
		if (used > fs->leb_size)
			used = fs->leb_size;
		if (zb.offs + zb.len > used) {
			err = util_err_set(&fs->err, -EUCLEAN,
					   "recovery: inode %u at LEB %u:%u (len %u) lies beyond the LEB's used %u bytes",
					   e->inum, zb.lnum, zb.offs, zb.len, used);
			break;
		}
		err = ubifs_leb_read(fs, zb.lnum, 0, buf, used);
		if (err)
			break;
		uint8_t *n = buf + zb.offs;
		put_le64(n + 48, e->d_size);
		put_le32(n + 4, ubifs_node_crc(n, zb.len));
		err = ubifs_leb_change(fs, zb.lnum, buf, used);
	}
	free(buf);
	if (!err)
		fs->size_fix_cnt = 0; /* the inodes on flash say it now */
	return err;
}

/* The authenticated variant: the data's size in a new inode node written
 * through the journal. */
static int write_sizes(struct ubifs_fs *fs)
{
	struct ubifs_inode *ui = malloc(sizeof(*ui));
	if (!ui)
		return -ENOMEM;
	int err = 0;
	while (!err && fs->size_fix_cnt) {
		struct ubifs_size_fix e = fs->size_fix[fs->size_fix_cnt - 1];
		fs->size_fix_cnt--; /* read the inode as stored */
		err = ubifs_read_inode(fs, e.inum, ui);
		if (err == -ENOENT) {
			err = 0;
			continue;
		}
		if (!err && ui->size < e.d_size) {
			ui->size = e.d_size;
			err = ubifs_jnl_write_inode(fs, ui);
		}
	}
	free(ui);
	return err;
}

int ubifs_rcvry_gc_commit(struct ubifs_fs *fs)
{
	/* The kernel's order: with a GC bud that has room, the dirtiest LEB
	 * that fits is collected into it after a commit and kept as the GC
	 * LEB. The size fixes are written in place before it; on an
	 * authenticated file system they follow through the journal and are
	 * made part of the index by another commit. */
	int err = fs->hash_len ? 0 : fix_sizes_in_place(fs);
	if (err)
		return err;
	err = ubifs_gc_recovery_collect(fs);
	if (err != -ENOSPC) {
		if (err)
			return err;
		fs->rcvry_gc_head++;
		if (!fs->size_fix_cnt)
			return 0;
		err = write_sizes(fs);
		return err ? err : ubifs_commit(fs);
	}
	util_err_clear(&fs->err);
	/* Otherwise an empty LEB (kernel grab_empty_leb), looked for before
	 * the commit, which could take the only one for the index. When none
	 * is left here, a commit first (its start unmaps the LEBs that are
	 * all free + dirty, ubifs_gc_start_commit), then look again. */
	uint32_t lnum;
	err = ubifs_lpt_find_for_index(fs->lpt, &lnum);
	if (err == -ENOSPC) {
		err = ubifs_commit(fs);
		if (!err)
			err = ubifs_lpt_find_for_index(fs->lpt, &lnum);
	}
	if (err == -ENOSPC)
		return util_err_set(&fs->err, -ENOSPC,
				    "recovery: no empty or freeable LEB for garbage collection after a commit, and no "
				    "GC bud to collect into; mount read-only");
	if (err)
		return err;
	/* taken, not index (it was found as an index LEB) */
	err = ubifs_lpt_set(fs->lpt, lnum, UBIFS_LPT_NC, UBIFS_LPT_NC, UBIFS_LPROPS_TAKEN);
	if (err)
		return err;
	fs->gc_lnum = lnum;
	err = write_sizes(fs);
	if (!err)
		err = ubifs_commit(fs);
	return err;
}
