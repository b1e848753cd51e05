/* ubifs_lpt_create — a new LPT for a file system being made (mkfs, or the
 * format of an empty volume as the kernel's ubifs_create_dflt_lpt): the
 * in-memory tree is set up from the given lprops with every pnode and
 * nnode dirty and every LPT LEB free, so that the normal LPT commit lays
 * the whole tree, lsave and ltab out from the start of the LPT area.
 * Also the size calculation the geometry choice needs (kernel
 * calc_dflt_lpt_geom). Part of the LPT's files (uses ubifs_lpt_priv.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ubifs/ubifs_lpt.h"
#include "ubifs/ubifs_lpt_priv.h"
#include "ubifs/ubifs_priv.h"

int ubifs_lpt_calc_size(const struct ubifs_fs *fs, uint64_t *lpt_sz, uint32_t *ltab_sz)
{
	struct ubifs_lpt *lpt = calloc(1, sizeof(*lpt));
	if (!lpt)
		return -ENOMEM;
	int err = lpt_calc_geometry(lpt, fs);
	*lpt_sz = lpt->lpt_sz;
	*ltab_sz = lpt->ltab_sz;
	free(lpt);
	return err;
}

int ubifs_lpt_create(struct ubifs_fs *fs, const struct ubifs_lprops *lp, struct ubifs_lpt **out)
{
	*out = NULL;
	struct ubifs_lpt *lpt = calloc(1, sizeof(*lpt));
	if (!lpt)
		return util_err_set(&fs->err, -ENOMEM, "LPT: out of memory");
	lpt->fs = fs;
	if (lpt_calc_geometry(lpt, fs)) {
		free(lpt);
		return util_err_set(&fs->err, -EINVAL, "LPT: impossible geometry (%u LPT LEBs, max. %u LEBs)",
				    fs->lpt_last - fs->lpt_first + 1, fs->sb.max_leb_cnt);
	}
	if (2 * lpt->lpt_sz > (uint64_t)lpt->lpt_lebs * lpt->leb_size) {
		uint64_t need = lpt->lpt_sz;
		free(lpt);
		return util_err_set(&fs->err, -EINVAL, "LPT: too few LPT LEBs (%u) for an LPT of %llu bytes",
				    fs->lpt_last - fs->lpt_first + 1, (unsigned long long)need);
	}
	lpt->check_lpt_free = 0; /* a fresh area: nothing to collect */
	lpt->lp = calloc((size_t)lpt->pnode_cnt * LPT_FANOUT, sizeof(*lpt->lp));
	lpt->pdirty = calloc(lpt->pnode_cnt ? lpt->pnode_cnt : 1, 1);
	lpt->ltab = calloc(lpt->lpt_lebs, sizeof(*lpt->ltab));
	lpt->lsave = calloc(lpt->lsave_cnt ? lpt->lsave_cnt : 1, sizeof(uint32_t));
	int nomem = !lpt->lp || !lpt->pdirty || !lpt->ltab || !lpt->lsave;
	for (uint32_t l = 1; !nomem && l <= lpt->hght; l++) {
		lpt->nn[l] = calloc(lpt->lvl_cnt[l], sizeof(struct lpt_nnode));
		nomem = !lpt->nn[l];
	}
	if (nomem) {
		ubifs_lpt_close(lpt);
		return util_err_set(&fs->err, -ENOMEM, "LPT: out of memory");
	}
	/* big-model node numbers, root = 1, as the reader assigns them */
	lpt->nn[lpt->hght][0].num = 1;
	for (uint32_t l = lpt->hght; l > 1; l--)
		for (uint32_t c = 0; c < lpt->lvl_cnt[l - 1]; c++)
			lpt->nn[l - 1][c].num = lpt_nnode_num(lpt, lpt->nn[l][c >> LPT_FANOUT_SHIFT].num, l, c & 3);
	for (uint32_t i = 0; i < lpt->pnode_cnt * LPT_FANOUT; i++) {
		struct ubifs_lprops *p = &lpt->lp[i];
		uint32_t lnum = lpt->main_first + i;
		if (lnum >= lpt->leb_cnt) { /* past the end: as the reader leaves them */
			p->lnum = 0;
			p->free = lpt->leb_size;
			continue;
		}
		*p = lp[i];
		p->lnum = lnum;
		p->flags &= UBIFS_LPROPS_INDEX;
		lpt_account_one(lpt, p);
	}
	for (uint32_t i = 0; i < lpt->lpt_lebs; i++)
		lpt->ltab[i].free = lpt->leb_size;
	lpt->nhead_lnum = lpt->lpt_first;
	lpt->nhead_offs = 0;
	lpt->lscan_lnum = lpt->main_first;
	lpt->ltab_dirty = 1;  /* nothing on flash yet: no old copy to count as dirt */
	lpt->lsave_dirty = 1;
	for (uint32_t pn = 0; pn < lpt->pnode_cnt; pn++)
		lpt_mark_dirty(lpt, lpt->main_first + pn * LPT_FANOUT);
	*out = lpt;
	return 0;
}
