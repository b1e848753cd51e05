/* ubifs_lpt_check — the LPT compared with the flash, by the kernel's
 * self-check rules (dbg_check_lprops / scan_check_cb for the main area,
 * dbg_check_ltab for the LPT area), computed independently of the LPT:
 * every main-area LEB is scanned and each node is live when the index points
 * at it (index nodes: reachable from the root through clean znodes, on
 * flash below what is in memory; leaf nodes: the TNC); free = leb_size - end of the nodes, dirty = the rest
 * minus the live nodes (8-aligned). For tests, fsck and the commit. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ubifs/ubifs_lpt_priv.h"
#include "ubifs/ubifs_priv.h"
#include "util/util_crc.h"

struct live {
	uint32_t lnum, offs;
	struct ubifs_key key; /* leaf nodes: the key the TNC has for it */
};
struct live_set {
	struct live *v;
	size_t n, cap;
};

static int live_add_key(struct live_set *s, uint32_t lnum, uint32_t offs, const struct ubifs_key *key)
{
	if (s->n == s->cap) {
		size_t nc = s->cap ? s->cap * 2 : 1024;
		struct live *nv = realloc(s->v, nc * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		s->v = nv;
		s->cap = nc;
	}
	s->v[s->n++] = (struct live){lnum, offs, key ? *key : (struct ubifs_key){0, 0}};
	return 0;
}

static int live_add(struct live_set *s, uint32_t lnum, uint32_t offs)
{
	return live_add_key(s, lnum, offs, NULL);
}

static int live_cmp(const void *a, const void *b)
{
	const struct live *x = a, *y = b;
	if (x->lnum != y->lnum)
		return x->lnum < y->lnum ? -1 : 1;
	return x->offs < y->offs ? -1 : x->offs > y->offs;
}

/* key: the scanned leaf's key, which must be the one the TNC has for it
 * (the kernel looks the node up by its key); NULL for index nodes */
static int live_has(const struct live_set *s, uint32_t lnum, uint32_t offs, const struct ubifs_key *key)
{
	struct live k = {lnum, offs, {0, 0}};
	if (!s->n)
		return 0;
	const struct live *f = bsearch(&k, s->v, s->n, sizeof(k), live_cmp);
	if (!f)
		return 0;
	return !key || ubifs_key_cmp(&f->key, key) == 0;
}

/* every index node reachable from the master's root */
static int walk_index(struct ubifs_fs *fs, struct live_set *idx, uint32_t lnum, uint32_t offs, uint32_t len,
		      int depth)
{
	if (depth > UBIFS_MAX_LEVELS)
		return util_err_set(&fs->err, -EINVAL, "LPT check: index deeper than %d levels at LEB %u:%u",
				    UBIFS_MAX_LEVELS, lnum, offs);
	uint8_t *buf = malloc(len);
	if (!buf)
		return -ENOMEM;
	int err = ubifs_read_node(fs, buf, UBIFS_IDX_NODE, len, lnum, offs);
	if (!err)
		err = live_add(idx, lnum, offs);
	struct ubifs_idx_node in;
	if (!err)
		ubifs_idx_unpack(buf, &in);
	for (unsigned i = 0; !err && in.level > 0 && i < in.child_cnt; i++) {
		struct ubifs_branch br;
		ubifs_idx_branch(&in, i, &br);
		err = walk_index(fs, idx, br.lnum, br.offs, br.len, depth + 1);
	}
	free(buf);
	return err;
}

/* The index nodes the TNC still uses: a dirty znode's on-flash copy is
 * already dirt (the kernel accounts it when the znode is dirtied), its
 * clean children are not; subtrees not in memory are clean. */
static int walk_tnc(struct ubifs_fs *fs, struct live_set *idx, const struct ubifs_znode *z, int depth)
{
	if (depth > UBIFS_MAX_LEVELS)
		return util_err_set(&fs->err, -EINVAL, "LPT check: TNC deeper than %d levels", UBIFS_MAX_LEVELS);
	int err = 0;
	if (!z->dirty)
		err = live_add(idx, z->lnum, z->offs);
	for (unsigned i = 0; !err && z->level > 0 && i < z->child_cnt; i++) {
		const struct ubifs_zbranch *zb = &z->zbranch[i];
		if (zb->child)
			err = walk_tnc(fs, idx, zb->child, depth + 1);
		else
			err = walk_index(fs, idx, zb->lnum, zb->offs, zb->len, depth + 1);
	}
	return err;
}

static int collect_leaves(struct ubifs_fs *fs, struct live_set *leaf)
{
	struct ubifs_key k0 = {0, 0};
	struct ubifs_tnc_pos pos;
	int err = ubifs_tnc_seek(fs, &k0, 0, &pos);
	struct ubifs_key prev = {0, 0};
	int have_prev = 0;
	while (!err) {
		const struct ubifs_zbranch *zb = ubifs_tnc_at(&pos);
		/* the kernel finds one node per non-hashed key: a second index
		 * entry with the same key would be live for us and dead for it */
		if (have_prev && !ubifs_key_is_hash(&zb->key) && ubifs_key_cmp(&prev, &zb->key) == 0) {
			char kb[64];
			return util_err_set(&fs->err, -EUCLEAN, "LPT check: the index has key %s twice (second at LEB %u:%u)",
					    ubifs_key_str(&zb->key, kb, sizeof(kb)), zb->lnum, zb->offs);
		}
		prev = zb->key;
		have_prev = 1;
		/* live only if a search by its key finds it, as the kernel's
		 * lookup does (a misordered index hides entries from it) */
		struct ubifs_tnc_pos q;
		int found = 0;
		int e2 = -ENOENT;
		if (!ubifs_key_is_hash(&zb->key)) {
			struct ubifs_key key = zb->key;
			uint32_t zl = zb->lnum, zo = zb->offs;
			struct ubifs_zbranch hit;
			e2 = ubifs_tnc_lookup_strict(fs, &key, &hit);
			if (e2 && e2 != -ENOENT)
				return e2;
			found = !e2 && hit.lnum == zl && hit.offs == zo;
			/* the strict lookup may have loaded znodes: find our place again */
			e2 = ubifs_tnc_seek(fs, &key, 0, &pos);
			if (e2)
				return e2;
			while (ubifs_tnc_at(&pos)->lnum != zl || ubifs_tnc_at(&pos)->offs != zo) {
				e2 = ubifs_tnc_next(fs, &pos);
				if (e2)
					return e2;
			}
			zb = ubifs_tnc_at(&pos);
			e2 = -ENOENT; /* skip the collision walk below */
		} else {
			e2 = ubifs_tnc_seek(fs, &zb->key, 0, &q);
		}
		while (!e2) {
			const struct ubifs_zbranch *y = ubifs_tnc_at(&q);
			if (ubifs_key_cmp(&y->key, &zb->key) != 0)
				break;
			if (y->lnum == zb->lnum && y->offs == zb->offs) {
				found = 1;
				break;
			}
			e2 = ubifs_tnc_next(fs, &q);
		}
		if (e2 && e2 != -ENOENT)
			return e2;
		if (found)
			err = live_add_key(leaf, zb->lnum, zb->offs, &zb->key);
		if (!err)
			err = ubifs_tnc_next(fs, &pos);
	}
	return err == -ENOENT ? 0 : err;
}

static uint64_t calc_dark(const struct ubifs_lpt *lpt, uint32_t spc)
{
	if (spc < lpt->dark_wm)
		return spc;
	if (spc - lpt->dark_wm < LPT_MIN_WRITE_SZ)
		return spc - LPT_MIN_WRITE_SZ;
	return lpt->dark_wm;
}

/* one main-area LEB (kernel scan_check_cb) */
static int check_leb(struct ubifs_lpt *lpt, const struct ubifs_lprops *lp, const struct live_set *idx,
		     const struct live_set *leaf, struct ubifs_lp_stats *lst)
{
	struct ubifs_fs *fs = lpt->fs;
	uint32_t lnum = lp->lnum, leb = lpt->leb_size;
	struct ubifs_sleb sleb;
	int err = ubifs_scan(fs, lnum, 0, &sleb);
	if (err == -EUCLEAN && fs->need_recovery && (lp->flags & UBIFS_LPROPS_TAKEN) &&
	    !(lp->flags & UBIFS_LPROPS_INDEX)) {
		/* a journal LEB torn by the unclean unmount: what recovery
		 * leaves of it (the kernel checks after recovering) */
		err = ubifs_recover_leb(fs, lnum, 0, &sleb, UBIFS_BASE_HEAD);
		if (err)
			err = -EUCLEAN;
	}
	if (err == -EUCLEAN || err == -EBADMSG) {
		/* after an unclean unmount, empty and freeable LEBs may hold
		 * garbage, or pages a cut erase left unreadable (an unmapped
		 * LEB whose PEB was not erased comes back) */
		if (lp->free == leb) {
			lst->empty_lebs++;
			lst->total_free += leb;
			lst->total_dark += calc_dark(lpt, leb);
			return 0;
		}
		if (lp->free + lp->dirty == leb && !(lp->flags & UBIFS_LPROPS_INDEX)) {
			lst->total_free += lp->free;
			lst->total_dirty += lp->dirty;
			lst->total_dark += calc_dark(lpt, leb);
			return 0;
		}
		return err;
	}
	if (err)
		return err;
	int is_idx = -1;
	uint64_t used = 0;
	for (uint32_t i = 0; i < sleb.nodes_cnt; i++) {
		const struct ubifs_snode *s = &sleb.nodes[i];
		if (is_idx == -1)
			is_idx = s->type == UBIFS_IDX_NODE;
		if (is_idx && s->type != UBIFS_IDX_NODE) {
			ubifs_sleb_free(&sleb);
			return util_err_set(&fs->err, -EUCLEAN, "LPT check: %s node in index LEB %u:%u",
					    ubifs_node_type_name(s->type), lnum, s->offs);
		}
		int lv = s->type == UBIFS_IDX_NODE ? live_has(idx, lnum, s->offs, NULL) : live_has(leaf, lnum, s->offs, &s->key);
		if (lv)
			used += ubifs_align8(s->len);
	}
	if (is_idx < 0)
		is_idx = 0;
	int64_t free_ = (int64_t)leb - sleb.endpt;
	int64_t dirty = (int64_t)sleb.endpt - (int64_t)used;
	ubifs_sleb_free(&sleb);
	if (free_ < 0 || dirty < 0)
		return util_err_set(&fs->err, -EUCLEAN, "LPT check: LEB %u: computed free %lld dirty %lld", lnum,
				    (long long)free_, (long long)dirty);
	if (lp->free + lp->dirty == leb && free_ + dirty == leb)
		if ((is_idx && !(lp->flags & UBIFS_LPROPS_INDEX)) || (!is_idx && free_ == leb) || lp->free == leb) {
			/* empty or freeable: may hold an unfinished commit's index
			 * nodes, or not have been unmapped */
			free_ = lp->free;
			dirty = lp->dirty;
			is_idx = 0;
		}
	if (is_idx && lp->free + lp->dirty == free_ + dirty && lnum != fs->mst.ihead_lnum) {
		/* in-the-gaps index writing may change an index LEB's free space */
		free_ = lp->free;
		dirty = lp->dirty;
	}
	if (lp->free != free_ || lp->dirty != dirty)
		return util_err_set(&fs->err, -EUCLEAN,
				    "LPT check: LEB %u: the LPT says free %u dirty %u flags 0x%x, the flash says free %lld dirty %lld",
				    lnum, lp->free, lp->dirty, lp->flags, (long long)free_, (long long)dirty);
	if (is_idx && !(lp->flags & UBIFS_LPROPS_INDEX)) {
		if (free_ == leb)
			is_idx = 0;
		else
			return util_err_set(&fs->err, -EUCLEAN,
					    "LPT check: LEB %u holds index nodes but the LPT has no index flag", lnum);
	}
	if (!is_idx && (lp->flags & UBIFS_LPROPS_INDEX))
		return util_err_set(&fs->err, -EUCLEAN, "LPT check: LEB %u holds data nodes but the LPT flags it index",
				    lnum);
	if (free_ == leb)
		lst->empty_lebs++;
	if (is_idx)
		lst->idx_lebs++;
	if (!(lp->flags & UBIFS_LPROPS_INDEX)) {
		uint32_t spc = (uint32_t)(free_ + dirty);
		lst->total_used += leb - spc;
		if (spc < lpt->dead_wm)
			lst->total_dead += spc;
		else
			lst->total_dark += calc_dark(lpt, spc);
	}
	lst->total_free += (uint64_t)free_;
	lst->total_dirty += (uint64_t)dirty;
	return 0;
}

/* ---- LPT area (kernel dbg_check_ltab_lnum) ---- */

/* is the node of this type at lnum:offs the current, clean copy? */
static int node_is_live(const struct ubifs_lpt *lpt, uint32_t type, uint32_t lnum, uint32_t offs)
{
	if (type == LPT_LTAB)
		return lnum == lpt->ltab_lnum && offs == lpt->ltab_offs && !lpt->ltab_dirty;
	if (type == LPT_LSAVE)
		return lpt->big && lnum == lpt->lsave_lnum && offs == lpt->lsave_offs && !lpt->lsave_dirty;
	if (type == LPT_NNODE) {
		if (lnum == lpt->root_lnum && offs == lpt->root_offs)
			return !lpt->nn[lpt->hght][0].dirty;
		for (uint32_t l = 2; l <= lpt->hght; l++)
			for (uint32_t c = 0; c < lpt->lvl_cnt[l]; c++)
				for (uint32_t i = 0; i < LPT_FANOUT; i++) {
					uint32_t cc = c * LPT_FANOUT + i;
					if (cc < lpt->lvl_cnt[l - 1] && lpt->nn[l][c].lnum[i] == lnum &&
					    lpt->nn[l][c].offs[i] == offs)
						return !lpt->nn[l - 1][cc].dirty;
				}
		return 0;
	}
	if (type == LPT_PNODE) {
		for (uint32_t c = 0; c < lpt->lvl_cnt[1]; c++)
			for (uint32_t i = 0; i < LPT_FANOUT; i++) {
				uint32_t pn = c * LPT_FANOUT + i;
				if (pn < lpt->pnode_cnt && lpt->nn[1][c].lnum[i] == lnum && lpt->nn[1][c].offs[i] == offs)
					return !lpt->pdirty[pn];
			}
	}
	return 0;
}

int ubifs_lpt_check_ltab(struct ubifs_lpt *lpt)
{
	struct ubifs_fs *fs = lpt->fs;
	uint8_t *buf = malloc(lpt->leb_size);
	if (!buf)
		return -ENOMEM;
	int err = 0;
	for (uint32_t lnum = lpt->lpt_first; !err && lnum <= lpt->lpt_last; lnum++) {
		err = ubifs_leb_read(fs, lnum, 0, buf, lpt->leb_size);
		if (err)
			break;
		uint32_t offs = 0, dirty = 0;
		for (;;) {
			uint32_t nl = 0;
			int t = lpt_node_at(lpt, buf, offs, &nl);
			if (!t) {
				uint32_t pad = lpt->min_io_size == 1 ? 0
								     : ((offs + lpt->min_io_size - 1) / lpt->min_io_size) *
									       lpt->min_io_size -
									       offs;
				if (pad) {
					offs += pad;
					dirty += pad;
					continue;
				}
				for (uint32_t i = offs; i < lpt->leb_size; i++)
					if (buf[i] != 0xFF) {
						err = util_err_set(&fs->err, -EUCLEAN,
								   "LPT check: LPT LEB %u: no node and no empty space at %u", lnum, i);
						break;
					}
				if (err)
					break;
				const struct lpt_ltab_ent *e = &lpt->ltab[lnum - lpt->lpt_first];
				if (e->free != lpt->leb_size - offs || e->dirty != dirty)
					err = util_err_set(&fs->err, -EUCLEAN,
							   "LPT check: LPT LEB %u: the ltab says free %u dirty %u, the flash says free %u dirty %u",
							   lnum, e->free, e->dirty, lpt->leb_size - offs, dirty);
				break;
			}
			uint32_t type = (uint32_t)t - 1;
			if (!node_is_live(lpt, type, lnum, offs))
				dirty += nl;
			offs += nl;
		}
	}
	free(buf);
	return err;
}

int ubifs_lpt_check(struct ubifs_lpt *lpt)
{
	struct ubifs_fs *fs = lpt->fs;
	struct live_set idx = {0}, leaf = {0};
	int err = fs->tnc.root ? walk_tnc(fs, &idx, fs->tnc.root, 0)
			       : walk_index(fs, &idx, fs->mst.root_lnum, fs->mst.root_offs, fs->mst.root_len, 0);
	if (!err)
		err = collect_leaves(fs, &leaf);
	ubifs_tnc_shrink(fs);
	if (err == -ENOMEM)
		util_err_set(&fs->err, err, "LPT check: out of memory");
	if (!err && idx.n) /* none when the whole index is dirty (qsort(NULL) is UB) */
		qsort(idx.v, idx.n, sizeof(*idx.v), live_cmp);
	if (!err && leaf.n)
		qsort(leaf.v, leaf.n, sizeof(*leaf.v), live_cmp);
	struct ubifs_lp_stats lst;
	memset(&lst, 0, sizeof(lst));
	for (uint32_t i = 0; !err && i < lpt->main_lebs; i++)
		err = check_leb(lpt, &lpt->lp[i], &idx, &leaf, &lst);
	free(idx.v);
	free(leaf.v);
	if (err)
		return err;
	const struct ubifs_lp_stats *m = &lpt->lst;
	if (lst.empty_lebs != m->empty_lebs || lst.idx_lebs != m->idx_lebs || lst.total_free != m->total_free ||
	    lst.total_dirty != m->total_dirty || lst.total_used != m->total_used)
		return util_err_set(&fs->err, -EUCLEAN,
				    "LPT check: totals from the flash: empty %u idx %u free %llu dirty %llu used %llu; the LPT: empty %u idx %u free %llu dirty %llu used %llu",
				    lst.empty_lebs, lst.idx_lebs, (unsigned long long)lst.total_free,
				    (unsigned long long)lst.total_dirty, (unsigned long long)lst.total_used, m->empty_lebs,
				    m->idx_lebs, (unsigned long long)m->total_free, (unsigned long long)m->total_dirty,
				    (unsigned long long)m->total_used);
	if (lst.total_dead != m->total_dead || lst.total_dark != m->total_dark)
		return util_err_set(&fs->err, -EUCLEAN,
				    "LPT check: dead/dark from the flash %llu/%llu, the LPT %llu/%llu",
				    (unsigned long long)lst.total_dead, (unsigned long long)lst.total_dark,
				    (unsigned long long)m->total_dead, (unsigned long long)m->total_dark);
	return ubifs_lpt_check_ltab(lpt);
}
