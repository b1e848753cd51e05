/* ubifs_fsck_scan — fsck's read-back of every main-area LEB in use (the LPT
 * says it is not all free): every node's header and CRC, obsolete nodes
 * included (garbage collection reads them), and erased space after the
 * last node. Problems go to the check's callback with their place. After an
 * unclean unmount on a read-only mount the torn tail of a journal LEB is
 * what recovery will fix, so only index LEBs are held to it then; a LEB
 * with nothing live is never read again, so it is not read here. */
#include <errno.h>

#include "ubifs/ubifs_lpt.h"
#include "ubifs/ubifs_priv.h"

int ubifs_fsck_scan(struct ubifs_fs *fs, ubifs_check_cb cb, void *ctx, unsigned long *problems, uint64_t *lebs)
{
	if (!fs->lpt)
		return 0;
	for (uint32_t lnum = fs->main_first; lnum < fs->leb_cnt; lnum++) {
		struct ubifs_lprops lp;
		int err = ubifs_lpt_lookup(fs->lpt, lnum, &lp);
		if (err == -ENOMEM)
			return err;
		if (err || lp.free >= fs->leb_size)
			continue;
		/* nothing live: GC unmaps it without reading it (kernel
		 * ubifs_garbage_collect_leb), so a torn tail there is harmless */
		if (lp.free + lp.dirty >= fs->leb_size && !(lp.flags & UBIFS_LPROPS_INDEX))
			continue;
		if (fs->read_only && fs->need_recovery && !(lp.flags & UBIFS_LPROPS_INDEX))
			continue;
		struct ubifs_sleb sleb;
		err = ubifs_scan(fs, lnum, 0, &sleb);
		if (lebs)
			(*lebs)++;
		if (err == -ENOMEM)
			return err;
		if (err) {
			if (problems)
				(*problems)++;
			int e = cb ? cb(ctx, util_err_msg(&fs->err), lnum, -1, 0) : 0;
			if (e)
				return e;
			continue;
		}
		ubifs_sleb_free(&sleb);
	}
	return 0;
}
