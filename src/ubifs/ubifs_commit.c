/* ubifs_commit — the commit, as the kernel's commit.c do_commit: the
 * journal becomes part of the index. Order (each step its own file):
 *   1. every journal head's write-buffer to flash (recovery needs it);
 *   2. commit number + 1; the log gets a commit-start node and a reference
 *      to each head's current position at offset 0 of a fresh log LEB
 *      (ubifs_log.c) — from here the old log is only needed until the new
 *      master is written;
 *   3. the dirty znodes are written as index nodes (ubifs_tnc_commit.c);
 *   4. the LPT writes its changed nodes (ubifs_lpt_commit, h-lpt's part);
 *   5. the master node (both copies) gets the new index root, index head
 *      and size, log tail, LPT positions and lprops totals — this is the
 *      commit point;
 *   6. the old buds are given back (their TAKEN flag cleared) and the log
 *      LEBs before the new tail are unmapped.
 * Triggered by ubifs_sync/unmount and by the journal when the log is full. */
#include <errno.h>

#include "ubifs/ubifs_budget.h"
#include "ubifs/ubifs_gc.h"
#include "ubifs/ubifs_journal.h"
#include "ubifs/ubifs_log.h"
#include "ubifs/ubifs_lpt.h"
#include "ubifs/ubifs_orphan_write.h"
#include "ubifs/ubifs_priv.h"
#include "ubifs/ubifs_tnc_commit.h"
#include "ubifs/ubifs_wbuf.h"

int ubifs_commit(struct ubifs_fs *fs)
{
	if (fs->read_only)
		return -EROFS;
	if (fs->ro_error)
		return -EROFS;
	if (fs->in_commit)
		return util_err_set(&fs->err, -EDEADLK, "commit: a commit needed a commit (journal too small)");
	fs->in_commit = 1;
	int err = ubifs_jnl_sync_all(fs);
	if (err)
		goto out;
	unsigned nheads = ubifs_jnl_head_cnt(fs->jnl);
	struct ubifs_log_head_pos heads[16];
	if (nheads > 16) {
		err = util_err_set(&fs->err, -EINVAL, "commit: %u journal heads", nheads);
		goto out;
	}
	for (unsigned i = 0; i < nheads; i++) {
		const struct ubifs_wbuf *w = ubifs_jnl_head(fs->jnl, i);
		heads[i].lnum = w->lnum;
		heads[i].offs = w->offs;
	}
	fs->cmt_no++;
	err = ubifs_gc_start_commit(fs);
	if (err)
		goto out;
	uint32_t new_ltail, old_ltail, lh, lho;
	ubifs_log_positions(fs->log, &lh, &lho, &old_ltail);
	err = ubifs_log_start_commit(fs->log, fs->cmt_no, heads, nheads, &new_ltail);
	if (err)
		goto out;
	uint32_t rl, ro, rlen;
	err = ubifs_tnc_commit(fs, &rl, &ro, &rlen);
	if (err)
		goto out;
	ubifs_budget_commit_done(fs); /* the committed index is the budget's base now */
	struct ubifs_lpt_pos lpos;
	err = ubifs_lpt_commit(fs->lpt, &lpos);
	if (err)
		goto out;
	int no_orphs = 1; /* the orphan area, between the LPT and the master (kernel order) */
	err = ubifs_orph_commit(fs, &no_orphs);
	if (err)
		goto out;
	struct ubifs_lp_stats st;
	ubifs_lpt_stats(fs->lpt, &st);
	struct ubifs_mst_node *m = &fs->mst;
	m->cmt_no = fs->cmt_no;
	m->log_lnum = new_ltail;
	m->root_lnum = rl;
	m->root_offs = ro;
	m->root_len = rlen;
	m->ihead_lnum = fs->tnc.ihead_lnum;
	m->ihead_offs = fs->tnc.ihead_offs;
	m->index_size = fs->tnc.idx_size;
	m->lpt_lnum = lpos.lpt_lnum;
	m->lpt_offs = lpos.lpt_offs;
	m->nhead_lnum = lpos.nhead_lnum;
	m->nhead_offs = lpos.nhead_offs;
	m->ltab_lnum = lpos.ltab_lnum;
	m->ltab_offs = lpos.ltab_offs;
	m->lsave_lnum = lpos.lsave_lnum;
	m->lsave_offs = lpos.lsave_offs;
	m->lscan_lnum = lpos.lscan_lnum;
	m->empty_lebs = st.empty_lebs;
	m->idx_lebs = st.idx_lebs;
	m->total_free = st.total_free;
	m->total_dirty = st.total_dirty;
	m->total_used = st.total_used;
	m->total_dead = st.total_dead;
	m->total_dark = st.total_dark;
	if (no_orphs)
		m->flags |= UBIFS_MST_NO_ORPHS;
	else
		m->flags &= ~UBIFS_MST_NO_ORPHS;
	err = ubifs_log_end_commit(fs->log, new_ltail);
	if (!err)
		err = ubifs_master_write(fs);
	if (!err) /* only now may the LPT reuse the LEBs its commit emptied */
		err = ubifs_lpt_post_commit(fs->lpt);
	if (!err)
		err = ubifs_log_post_commit(fs->log, old_ltail, ubifs_jnl_return_leb);
	if (!err)
		err = ubifs_gc_end_commit(fs);
	if (!err)
		fs->commits++;
out:
	fs->in_commit = 0;
	if (err && err != -ENOSPC)
		fs->ro_error = 1;
	return err;
}
