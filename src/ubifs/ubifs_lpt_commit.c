/* ubifs_lpt_commit — writing the LPT at a commit, as the kernel's
 * lpt_commit.c: the dirty pnodes and nnodes (children before parents, left
 * to right, the root last) are written out of place from the LPT head
 * (nhead), with lsave (big model) and the ltab placed first where they fit;
 * a node never straddles a LEB, the rest of a LEB's last min. I/O unit is
 * 0xFF padding and counts as dirty. A new LEB is one whose ltab entry is
 * free == leb_size and that was not freed by this very commit (the old
 * master may still point into those: they are unmapped only by
 * ubifs_lpt_post_commit, after the new master is on flash).
 *
 * Space: the ltab holds free and dirty bytes per LPT LEB; a node that becomes
 * dirty in memory makes its on-flash copy dirt at once. LEBs all dirt are
 * reused after the commit ("tgc"). Small model: when the free LPT space drops
 * to 2x the LPT size, the whole tree is rewritten. Big model: LPT garbage
 * collection marks the still-used nodes of the dirtiest LEB dirty, so the
 * next commit moves them (before the first commit and after each). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ubifs/ubifs_lpt_priv.h"
#include "ubifs/ubifs_priv.h"
#include "util/util_crc.h"

static uint32_t align_up(uint32_t x, uint32_t a)
{
	return (x + a - 1) / a * a;
}

/* ---- LPT garbage collection ---- */

static int need_write_all(const struct ubifs_lpt *lpt)
{
	uint64_t free_ = 0;
	for (uint32_t i = 0; i < lpt->lpt_lebs; i++) {
		const struct lpt_ltab_ent *e = &lpt->ltab[i];
		if (i + lpt->lpt_first == lpt->nhead_lnum)
			free_ += lpt->leb_size - lpt->nhead_offs;
		else if (e->free == lpt->leb_size || e->free + e->dirty == lpt->leb_size)
			free_ += lpt->leb_size;
	}
	return free_ <= lpt->lpt_sz * 2;
}

/* LEBs whose nodes are all dirt become free (reusable after this commit) */
static void tgc_start(struct ubifs_lpt *lpt)
{
	for (uint32_t i = 0; i < lpt->lpt_lebs; i++) {
		struct lpt_ltab_ent *e = &lpt->ltab[i];
		if (i + lpt->lpt_first == lpt->nhead_lnum)
			continue;
		if (e->dirty > 0 && e->free + e->dirty == lpt->leb_size) {
			e->tgc = 1;
			e->free = lpt->leb_size;
			e->dirty = 0;
		}
	}
}

/* mark an nnode (level, col) and its ancestors dirty */
static void mark_nnode_dirty(struct ubifs_lpt *lpt, uint32_t level, uint32_t col)
{
	for (; level <= lpt->hght; level++, col >>= LPT_FANOUT_SHIFT) {
		struct lpt_nnode *nn = &lpt->nn[level][col];
		if (nn->dirty)
			return;
		nn->dirty = 1;
		lpt->dirty_nn++;
		if (level < lpt->hght)
			lpt_add_lpt_dirt(lpt, lpt->nn[level + 1][col >> LPT_FANOUT_SHIFT].lnum[col & 3], lpt->nnode_sz);
		else {
			lpt_add_lpt_dirt(lpt, lpt->root_lnum, lpt->nnode_sz);
			if (!lpt->ltab_dirty) {
				lpt->ltab_dirty = 1;
				lpt_add_lpt_dirt(lpt, lpt->ltab_lnum, lpt->ltab_sz);
			}
		}
	}
}

/* a node found in an LPT LEB at lnum:offs: if the tree still uses it, make
 * it dirty so that the next commit writes it elsewhere */
static void gc_node(struct ubifs_lpt *lpt, uint32_t type, uint32_t num, uint32_t lnum, uint32_t offs)
{
	if (type == LPT_LTAB) {
		if (lnum == lpt->ltab_lnum && offs == lpt->ltab_offs && !lpt->ltab_dirty) {
			lpt->ltab_dirty = 1;
			lpt_add_lpt_dirt(lpt, lpt->ltab_lnum, lpt->ltab_sz);
		}
	} else if (type == LPT_LSAVE) {
		if (lnum == lpt->lsave_lnum && offs == lpt->lsave_offs && !lpt->lsave_dirty) {
			lpt->lsave_dirty = 1;
			lpt_add_lpt_dirt(lpt, lpt->lsave_lnum, lpt->lsave_sz);
		}
	} else if (type == LPT_PNODE) {
		if (num >= lpt->pnode_cnt)
			return;
		const struct lpt_nnode *par = &lpt->nn[1][num >> LPT_FANOUT_SHIFT];
		if (par->lnum[num & 3] == lnum && par->offs[num & 3] == offs)
			lpt_mark_dirty(lpt, lpt->main_first + num * LPT_FANOUT);
	} else if (type == LPT_NNODE) {
		/* the number holds the path from the root, lowest digits first,
		 * ended by a 1 */
		uint32_t level = lpt->hght, col = 0;
		while (num > 1 && level > 1) {
			col = col * LPT_FANOUT + (num & 3);
			num >>= LPT_FANOUT_SHIFT;
			level--;
		}
		if (num != 1 || col >= lpt->lvl_cnt[level])
			return;
		uint32_t l, o;
		if (level == lpt->hght)
			l = lpt->root_lnum, o = lpt->root_offs;
		else {
			const struct lpt_nnode *par = &lpt->nn[level + 1][col >> LPT_FANOUT_SHIFT];
			l = par->lnum[col & 3], o = par->offs[col & 3];
		}
		if (l == lnum && o == offs)
			mark_nnode_dirty(lpt, level, col);
	}
}

/* kernel lpt_gc: the dirtiest LEB that is not the head and not all dirt */
int ubifs_lpt_gc(struct ubifs_lpt *lpt)
{
	uint32_t best = 0, dirty = 0;
	for (uint32_t i = 0; i < lpt->lpt_lebs; i++) {
		const struct lpt_ltab_ent *e = &lpt->ltab[i];
		if (i + lpt->lpt_first == lpt->nhead_lnum || e->free + e->dirty == lpt->leb_size)
			continue;
		if (e->dirty > dirty) {
			dirty = e->dirty;
			best = i + lpt->lpt_first;
		}
	}
	if (!best)
		return util_err_set(&lpt->fs->err, -ENOSPC, "LPT: no LPT LEB to garbage-collect (LPT area too small)");
	uint8_t *buf = malloc(lpt->leb_size);
	if (!buf)
		return -ENOMEM;
	lpt->gc_runs++;
	int err = ubifs_leb_read(lpt->fs, best, 0, buf, lpt->leb_size);
	uint32_t offs = 0;
	while (!err && offs < lpt->leb_size) {
		const uint8_t *p = buf + offs;
		uint32_t len = 0;
		int t = lpt_node_at(lpt, buf, offs, &len);
		int is_node = t != 0;
		uint32_t type = (uint32_t)t - 1;
		if (!is_node) {
			uint32_t pad = lpt->min_io_size == 1 ? 0 : align_up(offs, lpt->min_io_size) - offs;
			if (!pad)
				break;
			offs += pad;
			continue;
		}
		struct lpt_bits b = {(uint8_t *)(uintptr_t)p + LPT_CRC_BYTES, LPT_TYPE_BITS};
		uint32_t num = lpt_get_bits(&b, lpt->pcnt_bits);
		gc_node(lpt, type, num, best, offs);
		offs += len;
	}
	free(buf);
	return err;
}

/* ---- layout and writing ---- */

enum { IT_PNODE, IT_NNODE, IT_LTAB, IT_LSAVE };
struct item {
	uint8_t kind;
	uint32_t level, col; /* nnode: level, column; pnode: col = number */
	uint32_t lnum, offs;
};
struct plan {
	struct item *v;
	size_t n, cap;
};

static int plan_add(struct plan *p, struct item it)
{
	if (p->n == p->cap) {
		size_t nc = p->cap ? p->cap * 2 : 256;
		struct item *nv = realloc(p->v, nc * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		p->v = nv;
		p->cap = nc;
	}
	p->v[p->n++] = it;
	return 0;
}

/* dirty nodes below and including nnode (level, col), children first */
static int collect_dirty(struct ubifs_lpt *lpt, struct plan *p, uint32_t level, uint32_t col)
{
	for (uint32_t i = 0; i < LPT_FANOUT; i++) {
		uint32_t c = col * LPT_FANOUT + i;
		if (c >= lpt->lvl_cnt[level - 1])
			break;
		int err = 0;
		if (level == 1) {
			if (lpt->pdirty[c])
				err = plan_add(p, (struct item){IT_PNODE, 0, c, 0, 0});
		} else if (lpt->nn[level - 1][c].dirty) {
			err = collect_dirty(lpt, p, level - 1, c);
		}
		if (err)
			return err;
	}
	return plan_add(p, (struct item){IT_NNODE, level, col, 0, 0});
}

static uint32_t item_len(const struct ubifs_lpt *lpt, const struct item *it)
{
	switch (it->kind) {
	case IT_PNODE:
		return lpt->pnode_sz;
	case IT_NNODE:
		return lpt->nnode_sz;
	case IT_LTAB:
		return lpt->ltab_sz;
	default:
		return lpt->lsave_sz;
	}
}

/* kernel alloc_lpt_leb: the next free LEB after lnum, wrapping */
static int alloc_lpt_leb(struct ubifs_lpt *lpt, uint32_t *lnum)
{
	uint32_t n = *lnum - lpt->lpt_first + 1;
	for (uint32_t k = 0; k < lpt->lpt_lebs; k++) {
		uint32_t i = (n + k) % lpt->lpt_lebs;
		struct lpt_ltab_ent *e = &lpt->ltab[i];
		if (e->tgc || e->cmt)
			continue;
		if (e->free == lpt->leb_size) {
			e->cmt = 1;
			*lnum = i + lpt->lpt_first;
			return 0;
		}
	}
	return -ENOSPC;
}

static void set_ltab_end(struct ubifs_lpt *lpt, uint32_t lnum, uint32_t offs)
{
	uint32_t alen = align_up(offs, lpt->min_io_size);
	struct lpt_ltab_ent *e = &lpt->ltab[lnum - lpt->lpt_first];
	e->free = lpt->leb_size - alen;
	e->dirty += alen - offs;
}

/* Give every item its place (kernel layout_cnodes); ltab and lsave go
 * first where they fit. Nodes are in p (children first); lsave and ltab
 * are appended to p with their places. */
static int layout(struct ubifs_lpt *lpt, struct plan *p)
{
	uint32_t lnum = lpt->nhead_lnum, offs = lpt->nhead_offs;
	int done_lsave = !lpt->big, done_ltab = 0;
	struct item lsave = {IT_LSAVE, 0, 0, 0, 0}, ltab = {IT_LTAB, 0, 0, 0, 0};
	if (!done_lsave && offs + lpt->lsave_sz <= lpt->leb_size) {
		done_lsave = 1;
		lsave.lnum = lnum, lsave.offs = offs;
		offs += lpt->lsave_sz;
	}
	if (offs + lpt->ltab_sz <= lpt->leb_size) {
		done_ltab = 1;
		ltab.lnum = lnum, ltab.offs = offs;
		offs += lpt->ltab_sz;
	}
	size_t nodes = p->n;
	for (size_t k = 0; k < nodes; k++) {
		struct item *it = &p->v[k];
		uint32_t len = item_len(lpt, it);
		while (offs + len > lpt->leb_size) {
			set_ltab_end(lpt, lnum, offs);
			if (alloc_lpt_leb(lpt, &lnum))
				goto no_space;
			offs = 0;
			if (!done_lsave) {
				done_lsave = 1;
				lsave.lnum = lnum, lsave.offs = 0;
				offs = lpt->lsave_sz;
				continue;
			}
			if (!done_ltab) {
				done_ltab = 1;
				ltab.lnum = lnum, ltab.offs = offs;
				offs += lpt->ltab_sz;
				continue;
			}
			break;
		}
		it->lnum = lnum;
		it->offs = offs;
		offs += len;
	}
	if (!done_lsave) {
		if (offs + lpt->lsave_sz > lpt->leb_size) {
			set_ltab_end(lpt, lnum, offs);
			if (alloc_lpt_leb(lpt, &lnum))
				goto no_space;
			offs = 0;
		}
		lsave.lnum = lnum, lsave.offs = offs;
		offs += lpt->lsave_sz;
	}
	if (!done_ltab) {
		if (offs + lpt->ltab_sz > lpt->leb_size) {
			set_ltab_end(lpt, lnum, offs);
			if (alloc_lpt_leb(lpt, &lnum))
				goto no_space;
			offs = 0;
		}
		ltab.lnum = lnum, ltab.offs = offs;
		offs += lpt->ltab_sz;
	}
	set_ltab_end(lpt, lnum, offs);
	if (lpt->big && plan_add(p, lsave))
		return -ENOMEM;
	if (plan_add(p, ltab))
		return -ENOMEM;
	return 0;
no_space:
	return util_err_set(&lpt->fs->err, -ENOSPC, "LPT: out of space in the LPT area at LEB %u:%u", lnum, offs);
}

static int cmp_place(const void *a, const void *b)
{
	const struct item *x = a, *y = b;
	if (x->lnum != y->lnum)
		return x->lnum < y->lnum ? -1 : 1;
	return x->offs < y->offs ? -1 : x->offs > y->offs;
}

/* Pack and write every item at its place. LEBs are written in the order
 * they were allocated; a new LEB is unmapped first (it may hold old
 * nodes), the head LEB is appended to at nhead_offs. */
static int write_items(struct ubifs_lpt *lpt, struct plan *p, const struct lpt_ltab_ent *ltab_cmt,
		       uint32_t *end_lnum, uint32_t *end_offs)
{
	struct ubifs_fs *fs = lpt->fs;
	/* allocation order: head LEB first, then as alloc_lpt_leb handed them */
	struct item *order = malloc(p->n * sizeof(*order));
	uint8_t *buf = malloc(lpt->leb_size);
	int err = 0;
	if (!order || !buf) {
		free(order);
		free(buf);
		return -ENOMEM;
	}
	memcpy(order, p->v, p->n * sizeof(*order));
	/* stable grouping by LEB in first-appearance order, then by offset */
	uint32_t *seq = calloc(lpt->lpt_lebs, sizeof(uint32_t));
	uint32_t next_seq = 1;
	if (!seq) {
		free(order);
		free(buf);
		return -ENOMEM;
	}
	seq[lpt->nhead_lnum - lpt->lpt_first] = next_seq++;
	for (size_t k = 0; k < p->n; k++) {
		uint32_t i = p->v[k].lnum - lpt->lpt_first;
		if (!seq[i])
			seq[i] = next_seq++;
	}
	for (size_t k = 0; k < p->n; k++)
		order[k].lnum = seq[order[k].lnum - lpt->lpt_first] * 0x10000u + order[k].lnum; /* sort key */
	qsort(order, p->n, sizeof(*order), cmp_place);
	for (size_t k = 0; k < p->n; k++)
		order[k].lnum &= 0xFFFFu;
	free(seq);

	size_t k = 0;
	while (k < p->n) {
		uint32_t lnum = order[k].lnum;
		uint32_t from = lnum == lpt->nhead_lnum ? lpt->nhead_offs : 0;
		if (from == 0)
			err = ubifs_leb_unmap(fs, lnum);
		if (err)
			break;
		memset(buf, 0xFF, lpt->leb_size);
		uint32_t end = from;
		for (; k < p->n && order[k].lnum == lnum; k++) {
			const struct item *it = &order[k];
			uint8_t *dst = buf + it->offs;
			if (it->kind == IT_PNODE)
				lpt_pack_pnode(lpt, dst, it->col);
			else if (it->kind == IT_NNODE)
				lpt_pack_nnode(lpt, dst, &lpt->nn[it->level][it->col]);
			else if (it->kind == IT_LSAVE)
				lpt_pack_lsave(lpt, dst);
			else {
				/* the ltab as it was after the layout */
				struct lpt_ltab_ent *live = lpt->ltab;
				lpt->ltab = (struct lpt_ltab_ent *)(uintptr_t)ltab_cmt;
				lpt_pack_ltab(lpt, dst);
				lpt->ltab = live;
			}
			end = it->offs + item_len(lpt, it);
		}
		uint32_t alen = align_up(end - from, lpt->min_io_size);
		err = ubifs_leb_write(fs, lnum, from, buf + from, alen);
		if (err)
			break;
		*end_lnum = lnum;
		*end_offs = from + alen;
	}
	free(order);
	free(buf);
	return err;
}

static void populate_lsave(struct ubifs_lpt *lpt)
{
	if (!lpt->lsave_dirty) {
		lpt->lsave_dirty = 1;
		lpt_add_lpt_dirt(lpt, lpt->lsave_lnum, lpt->lsave_sz);
	}
	static const int order[] = {CAT_EMPTY, CAT_FREEABLE, CAT_FRDI_IDX, CAT_DIRTY_IDX, CAT_DIRTY, CAT_FREE};
	uint32_t cnt = 0;
	for (size_t o = 0; o < sizeof(order) / sizeof(order[0]) && cnt < lpt->lsave_cnt; o++)
		for (uint32_t i = 0; i < lpt->main_lebs && cnt < lpt->lsave_cnt; i++)
			if (lpt_category(lpt, &lpt->lp[i]) == order[o])
				lpt->lsave[cnt++] = lpt->lp[i].lnum;
	while (cnt < lpt->lsave_cnt)
		lpt->lsave[cnt++] = lpt->main_first;
}

static void fill_pos(const struct ubifs_lpt *lpt, struct ubifs_lpt_pos *pos)
{
	pos->lpt_lnum = lpt->root_lnum;
	pos->lpt_offs = lpt->root_offs;
	pos->nhead_lnum = lpt->nhead_lnum;
	pos->nhead_offs = lpt->nhead_offs;
	pos->ltab_lnum = lpt->ltab_lnum;
	pos->ltab_offs = lpt->ltab_offs;
	pos->lsave_lnum = lpt->big ? lpt->lsave_lnum : 0;
	pos->lsave_offs = lpt->big ? lpt->lsave_offs : 0;
	pos->lscan_lnum = lpt->lscan_lnum;
}

int ubifs_lpt_commit(struct ubifs_lpt *lpt, struct ubifs_lpt_pos *pos)
{
	int err;
	if (lpt->check_lpt_free) {
		/* big model, first commit: make sure the LPT area has room */
		lpt->check_lpt_free = 0;
		while (need_write_all(lpt)) {
			err = ubifs_lpt_gc(lpt);
			if (err)
				return err;
		}
	}
	tgc_start(lpt);
	if (!lpt->dirty_pn) {
		fill_pos(lpt, pos);
		return 0;
	}
	if (!lpt->big && need_write_all(lpt)) {
		ubifs_lpt_mark_all_dirty(lpt);
		lpt->write_all_runs++;
		tgc_start(lpt);
	}
	/* what goes to flash must fit the format: free + dirty <= leb_size */
	for (uint32_t pn = 0; pn < lpt->pnode_cnt; pn++)
		for (uint32_t i = 0; lpt->pdirty[pn] && i < LPT_FANOUT; i++) {
			const struct ubifs_lprops *q = &lpt->lp[pn * LPT_FANOUT + i];
			if (q->lnum && q->free + (uint64_t)q->dirty > lpt->leb_size)
				return util_err_set(&lpt->fs->err, -EUCLEAN,
						    "LPT commit: LEB %u has free %u + dirty %u > LEB size %u (space accounting broken)",
						    q->lnum, q->free, q->dirty, lpt->leb_size);
		}
	if (lpt->big)
		populate_lsave(lpt);
	struct plan p = {0};
	err = collect_dirty(lpt, &p, lpt->hght, 0);
	if (!err)
		err = layout(lpt, &p);
	struct lpt_ltab_ent *ltab_cmt = NULL;
	if (!err) {
		ltab_cmt = malloc(lpt->lpt_lebs * sizeof(*ltab_cmt));
		if (!ltab_cmt)
			err = -ENOMEM;
		else
			memcpy(ltab_cmt, lpt->ltab, lpt->lpt_lebs * sizeof(*ltab_cmt));
	}
	if (err) {
		free(p.v);
		return err == -ENOMEM ? util_err_set(&lpt->fs->err, err, "LPT commit: out of memory") : err;
	}
	/* the new places go into the tree (parents are written after their
	 * children, so they carry them) */
	for (size_t k = 0; k < p.n; k++) {
		const struct item *it = &p.v[k];
		if (it->kind == IT_PNODE) {
			struct lpt_nnode *par = &lpt->nn[1][it->col >> LPT_FANOUT_SHIFT];
			par->lnum[it->col & 3] = it->lnum, par->offs[it->col & 3] = it->offs;
		} else if (it->kind == IT_NNODE) {
			if (it->level == lpt->hght) {
				lpt->root_lnum = it->lnum, lpt->root_offs = it->offs;
			} else {
				struct lpt_nnode *par = &lpt->nn[it->level + 1][it->col >> LPT_FANOUT_SHIFT];
				par->lnum[it->col & 3] = it->lnum, par->offs[it->col & 3] = it->offs;
			}
		} else if (it->kind == IT_LTAB) {
			lpt->ltab_lnum = it->lnum, lpt->ltab_offs = it->offs;
		} else {
			lpt->lsave_lnum = it->lnum, lpt->lsave_offs = it->offs;
		}
	}
	uint32_t end_lnum = lpt->nhead_lnum, end_offs = lpt->nhead_offs;
	err = write_items(lpt, &p, ltab_cmt, &end_lnum, &end_offs);
	free(ltab_cmt);
	free(p.v);
	if (err)
		return err == -ENOMEM ? util_err_set(&lpt->fs->err, err, "LPT commit: out of memory") : err;
	/* all written: nothing is dirty, the LEBs taken are no longer pending */
	memset(lpt->pdirty, 0, lpt->pnode_cnt);
	for (uint32_t l = 1; l <= lpt->hght; l++)
		for (uint32_t c = 0; c < lpt->lvl_cnt[l]; c++)
			lpt->nn[l][c].dirty = 0;
	for (uint32_t i = 0; i < lpt->lpt_lebs; i++)
		lpt->ltab[i].cmt = 0;
	lpt->dirty_pn = lpt->dirty_nn = 0;
	lpt->ltab_dirty = lpt->lsave_dirty = 0;
	lpt->nhead_lnum = end_lnum;
	lpt->nhead_offs = end_offs;
	fill_pos(lpt, pos);
	return 0;
}

int ubifs_lpt_post_commit(struct ubifs_lpt *lpt)
{
	for (uint32_t i = 0; i < lpt->lpt_lebs; i++)
		if (lpt->ltab[i].tgc) {
			int err = ubifs_leb_unmap(lpt->fs, i + lpt->lpt_first);
			if (err)
				return err;
			lpt->ltab[i].tgc = 0;
		}
	if (lpt->big)
		while (need_write_all(lpt)) {
			int err = ubifs_lpt_gc(lpt);
			if (err)
				return err;
		}
	return 0;
}

void ubifs_lpt_counters(const struct ubifs_lpt *lpt, uint32_t *gc_runs, uint32_t *write_all_runs)
{
	*gc_runs = lpt->gc_runs;
	*write_all_runs = lpt->write_all_runs;
}
