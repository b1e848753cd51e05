/* ubifs_tnc_commit — writing the dirty part of the index at a commit, as
 * the kernel's tnc_commit.c ("in empty space" method): the dirty znodes are
 * taken children before parents, left to right (kernel find_first_dirty /
 * find_next_dirty), and laid out one after the other, 8-byte aligned, from
 * the index head (the end of the last index LEB) on, continuing in empty
 * LEBs taken for the index (ubifs_lpt_find_for_index, as many as the
 * kernel's estimate asks for; unused ones are given back). A LEB is left
 * when the next node does not fit; its end is padded to min_io_size and the
 * padding is dirt. Each index node gets the next sqnum when written.
 * Old index space was already accounted when the znodes became dirty
 * (ubifs_tnc.c).
 *
 * When fewer empty LEBs are left than the estimate asks for, the kernel's
 * "in the gaps" method runs first (tnc_commit.c layout_in_gaps): the
 * dirtiest index LEBs (then those GC emptied: ubifs_gc_take_idx_leb) are
 * scanned, every index node the committed index still uses stays where it
 * is (ubifs_tnc_idx_in_use: the TNC plus the positions of znodes dirtied
 * since the last commit), and the gaps between them take dirty znodes in
 * order (a node only when shorter than the gap); each gap's rest is
 * padding (dirt), the last one up to min_io_size; the LEB is rewritten
 * atomically (ubifs_leb_change), its free and dirty space set from the
 * result. This goes on until the empty LEBs suffice for the rest. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ubifs/ubifs_gc.h"
#include "ubifs/ubifs_lpt.h"
#include "ubifs/ubifs_priv.h"
#include "ubifs/ubifs_tnc_commit.h"

struct zlist {
	struct ubifs_znode **v;
	size_t n, cap;
};

static int zpush(struct zlist *l, struct ubifs_znode *z)
{
	if (l->n == l->cap) {
		size_t c = l->cap ? l->cap * 2 : 64;
		struct ubifs_znode **nv = realloc(l->v, c * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		l->v = nv;
		l->cap = c;
	}
	l->v[l->n++] = z;
	return 0;
}

/* post-order over the dirty znodes (a dirty znode's ancestors are dirty) */
static int collect(struct ubifs_znode *z, struct zlist *l, int depth)
{
	if (depth > UBIFS_MAX_LEVELS)
		return -ELOOP;
	if (z->level > 0)
		for (uint32_t i = 0; i < z->child_cnt; i++) {
			struct ubifs_znode *c = z->zbranch[i].child;
			if (c && c->dirty) {
				int err = collect(c, l, depth + 1);
				if (err)
					return err;
			}
		}
	return zpush(l, z);
}

static uint32_t idx_len(const struct ubifs_znode *z)
{
	return ubifs_idx_node_len(z->child_cnt);
}

/* the kernel's lprops change for an index LEB the layout leaves or ends in:
 * free = what is after the written part, padding added to dirt */
static int leb_done(struct ubifs_fs *fs, uint32_t lnum, uint32_t end, uint32_t pad, int left)
{
	struct ubifs_lprops lp;
	int err = ubifs_lpt_lookup(fs->lpt, lnum, &lp);
	/* a LEB left full is no longer taken; the new index head stays taken */
	if (!err)
		err = ubifs_lpt_set(fs->lpt, lnum, fs->leb_size - end, lp.dirty + pad,
				    left ? lp.flags & ~UBIFS_LPROPS_TAKEN : lp.flags);
	return err;
}

/* index node of z at n, placed at lnum:offs (kernel make_idx_node) */
static int pack_znode(struct ubifs_fs *fs, struct ubifs_znode *z, uint8_t *n, uint32_t lnum, uint32_t offs)
{
	uint32_t len = idx_len(z);
	ubifs_idx_pack(n, z->child_cnt, z->level);
	for (uint32_t b = 0; b < z->child_cnt; b++) {
		const struct ubifs_zbranch *zb = &z->zbranch[b];
		if (!zb->lnum || !zb->len)
			return util_err_set(&fs->err, -EINVAL, "commit: znode level %u branch %u has no position", z->level,
					    b);
		struct ubifs_branch br = {.lnum = zb->lnum, .offs = zb->offs, .len = zb->len, .key = zb->key};
		ubifs_idx_branch_pack(n, b, &br);
	}
	ubifs_node_finish(n, len, ubifs_next_sqnum(fs));
	if (ubifs_align8(len) > len)
		memset(n + len, 0, ubifs_align8(len) - len);
	ubifs_tnc_written(fs, z, lnum, offs, len);
	fs->tnc.idx_size += ubifs_align8(len);
	return 0;
}

/* kernel get_leb_cnt: empty LEBs for cnt znodes of the largest size, after
 * what fits at the index head */
static uint32_t leb_cnt_for(const struct ubifs_fs *fs, size_t cnt, uint32_t max_idx)
{
	int64_t c = (int64_t)cnt - (fs->leb_size - fs->tnc.ihead_offs) / max_idx;
	if (c < 0)
		c = 0;
	uint32_t per = fs->leb_size / max_idx;
	return (uint32_t)((c + per - 1) / per);
}

/* kernel ubifs_find_dirty_idx_leb: the index LEB with the most free +
 * dirty space (at least one smallest index node), not taken; else one GC
 * emptied. Marked TAKEN (| INDEX). */
static int find_gap_leb(struct ubifs_fs *fs, uint32_t *out)
{
	uint32_t min_idx = ubifs_align8(UBIFS_IDX_NODE_SZ + UBIFS_BRANCH_SZ + 8);
	struct ubifs_lprops best = {0};
	for (uint32_t lnum = fs->main_first; lnum < fs->leb_cnt; lnum++) {
		struct ubifs_lprops lp;
		int err = ubifs_lpt_lookup(fs->lpt, lnum, &lp);
		if (err)
			return err;
		if (!(lp.flags & UBIFS_LPROPS_INDEX) || (lp.flags & UBIFS_LPROPS_TAKEN) || lp.free + lp.dirty < min_idx)
			continue;
		if (!best.lnum || lp.free + lp.dirty > best.free + best.dirty)
			best = lp;
	}
	if (best.lnum) {
		*out = best.lnum;
		return ubifs_lpt_set(fs->lpt, best.lnum, UBIFS_LPT_NC, UBIFS_LPT_NC, best.flags | UBIFS_LPROPS_TAKEN);
	}
	return ubifs_gc_take_idx_leb(fs, out);
}

struct gaps {
	uint8_t *buf; /* the LEB being filled */
	uint32_t lnum, ileb_len, dirt;
	size_t next; /* next znode of the list to place */
};

/* kernel fill_gap: znodes into [start, end) while each is shorter than the
 * room left; the rest padded (to min_io_size at the LEB's end) */
static int fill_gap(struct ubifs_fs *fs, struct gaps *g, const struct zlist *l, uint32_t start, uint32_t end)
{
	uint32_t remains = end - start, pos = start;
	int written = 0;
	if (!remains)
		return 0;
	while (g->next < l->n) {
		struct ubifs_znode *z = l->v[g->next];
		uint32_t len = idx_len(z);
		if (len >= remains)
			break;
		int err = pack_znode(fs, z, g->buf + pos, g->lnum, pos);
		if (err)
			return err;
		remains -= ubifs_align8(len);
		pos += ubifs_align8(len);
		g->next++;
		written++;
	}
	uint32_t pad = remains;
	if (end == fs->leb_size) {
		g->ileb_len = (pos + fs->min_io_size - 1) / fs->min_io_size * fs->min_io_size;
		pad = g->ileb_len - pos;
	}
	ubifs_pad_pack(g->buf + pos, pad);
	g->dirt += pad;
	return written;
}

/* kernel layout_leb_in_gaps: nodes written into LEB g->lnum, or <0 */
static int leb_in_gaps(struct ubifs_fs *fs, struct gaps *g, const struct zlist *l)
{
	struct ubifs_sleb sleb = {0};
	int err = ubifs_scan(fs, g->lnum, 0, &sleb);
	if (err) {
		ubifs_sleb_free(&sleb);
		return err;
	}
	memcpy(g->buf, sleb.buf, fs->leb_size);
	uint32_t gap_start = 0;
	int total = 0;
	g->dirt = 0;
	g->ileb_len = 0;
	for (uint32_t i = 0; i < sleb.nodes_cnt; i++) {
		const struct ubifs_snode *s = &sleb.nodes[i];
		struct ubifs_idx_node idx;
		struct ubifs_branch br;
		if (s->type != UBIFS_IDX_NODE) {
			err = util_err_set(&fs->err, -EUCLEAN, "commit: index LEB %u holds a node of type %u at %u",
					   g->lnum, s->type, s->offs);
			break;
		}
		ubifs_idx_unpack(g->buf + s->offs, &idx);
		if (idx.child_cnt == 0) {
			err = util_err_set(&fs->err, -EUCLEAN, "commit: empty index node at LEB %u:%u", g->lnum, s->offs);
			break;
		}
		ubifs_idx_branch(&idx, 0, &br);
		int in_use = ubifs_tnc_idx_in_use(fs, &br.key, idx.level, g->lnum, s->offs);
		if (in_use < 0) {
			err = in_use;
			break;
		}
		if (!in_use)
			continue;
		if (in_use == 1) /* not used after this commit */
			g->dirt += ubifs_align8(s->len);
		int w = fill_gap(fs, g, l, gap_start, s->offs);
		if (w < 0) {
			err = w;
			break;
		}
		total += w;
		gap_start = ubifs_align8(s->offs + s->len);
	}
	ubifs_sleb_free(&sleb);
	if (err)
		return err;
	g->ileb_len = fs->leb_size;
	int w = fill_gap(fs, g, l, gap_start, fs->leb_size);
	if (w < 0)
		return w;
	total += w;
	struct ubifs_lprops lp;
	err = ubifs_lpt_lookup(fs->lpt, g->lnum, &lp);
	if (err)
		return err;
	if (total == 0) {
		/* one GC had emptied: its space as the scan found it */
		if (lp.free == fs->leb_size)
			err = ubifs_lpt_set(fs->lpt, g->lnum, fs->leb_size - g->ileb_len, g->dirt, lp.flags);
		return err;
	}
	err = ubifs_lpt_set(fs->lpt, g->lnum, fs->leb_size - g->ileb_len, g->dirt, lp.flags);
	if (!err)
		err = ubifs_leb_change(fs, g->lnum, g->buf, g->ileb_len);
	return err ? err : total;
}

int ubifs_tnc_commit(struct ubifs_fs *fs, uint32_t *root_lnum, uint32_t *root_offs, uint32_t *root_len)
{
	struct ubifs_tnc *t = &fs->tnc;
	struct zlist l = {0};
	uint32_t *ilebs = NULL, *gap_lebs = NULL;
	uint32_t ngaps = 0;
	uint8_t *buf = NULL;
	uint32_t got = 0, next = 0;
	size_t zi = 0;
	int err = 0;
	if (!t->root || !t->root->dirty)
		goto done;
	err = collect(t->root, &l, 0);
	if (err)
		goto out;
	uint32_t max_idx = ubifs_align8(ubifs_idx_node_len(fs->fanout));
	uint32_t need = leb_cnt_for(fs, l.n, max_idx);
	ilebs = calloc(need + 1, sizeof(*ilebs));
	gap_lebs = calloc(fs->leb_cnt, sizeof(*gap_lebs));
	buf = malloc(fs->leb_size);
	if (!ilebs || !buf || !gap_lebs) {
		err = -ENOMEM;
		goto out;
	}
	int no_space = 0;
	if (getenv("UBIKIT_GC_DEBUG")) {
		struct ubifs_lp_stats st;
		ubifs_lpt_stats(fs->lpt, &st);
		fprintf(stderr, "tnc commit: %zu znodes, need %u; empty %u (taken %u), idx %u, freeable %u, idx_size %llu\n",
			l.n, need, st.empty_lebs, st.taken_empty_lebs, st.idx_lebs, ubifs_lpt_freeable_cnt(fs->lpt),
			(unsigned long long)t->idx_size);
	}
	for (; got < need; got++) {
		err = ubifs_lpt_find_for_index(fs->lpt, &ilebs[got]);
		if (err == -ENOSPC) {
			no_space = 1;
			err = 0;
			break;
		}
		if (err)
			goto out;
	}
	if (no_space) {
		/* kernel layout_in_gaps, until the empty LEBs suffice */
		struct gaps g = {.buf = buf};
		uint32_t needed;
		do {
			err = find_gap_leb(fs, &g.lnum);
			if (err == -ENOSPC) { /* commit anyway: the empty space may do */
				err = 0;
				break;
			}
			if (err)
				goto out;
			gap_lebs[ngaps++] = g.lnum;
			int w = leb_in_gaps(fs, &g, &l);
			if (w < 0) {
				err = w;
				goto out;
			}
			t->gap_lebs++;
			needed = leb_cnt_for(fs, l.n - g.next, max_idx);
		} while (needed > got && ngaps < fs->leb_cnt);
		zi = g.next;
		t->gap_commits++;
	}
	uint32_t old_ihead = t->ihead_lnum;
	int64_t lnum = t->ihead_lnum;
	uint32_t start = t->ihead_offs, pos = start;
	if (zi < l.n && start + idx_len(l.v[zi]) > fs->leb_size)
		lnum = -1; /* the first node does not fit at the head: the kernel leaves that LEB as it is */
	for (size_t i = zi; i < l.n; i++) {
		struct ubifs_znode *z = l.v[i];
		uint32_t len = idx_len(z);
		if (lnum < 0) {
			if (next >= got) {
				struct ubifs_lp_stats st;
				ubifs_lpt_stats(fs->lpt, &st);
				err = util_err_set(&fs->err, -ENOSPC,
						   "commit: out of index LEBs (%zu of %zu index nodes placed, %u LEBs "
						   "filled in the gaps, %u empty ones of %u needed; %u empty LEBs, %u "
						   "index LEBs)",
						   i, l.n, ngaps, got, need, st.empty_lebs, st.idx_lebs);
				goto out;
			}
			lnum = ilebs[next++];
			start = pos = 0;
		}
		err = pack_znode(fs, z, buf + (pos - start), (uint32_t)lnum, pos);
		if (err)
			goto out;
		pos += ubifs_align8(len);
		uint32_t next_len = i + 1 < l.n ? idx_len(l.v[i + 1]) : 0;
		if (next_len && pos + next_len <= fs->leb_size)
			continue;
		/* leave this LEB: pad to min. I/O, write, account */
		uint32_t end = (pos + fs->min_io_size - 1) / fs->min_io_size * fs->min_io_size;
		ubifs_pad_pack(buf + (pos - start), end - pos);
		err = ubifs_leb_write(fs, (uint32_t)lnum, start, buf, end - start);
		if (!err)
			err = leb_done(fs, (uint32_t)lnum, end, end - pos, next_len != 0);
		if (err)
			goto out;
		t->ihead_lnum = (uint32_t)lnum;
		t->ihead_offs = end;
		lnum = -1;
	}
	if (t->ihead_lnum != old_ihead) {
		/* the old head LEB was skipped (the first node did not fit): it
		 * is no longer the index head, so no longer taken */
		struct ubifs_lprops lp;
		err = ubifs_lpt_lookup(fs->lpt, old_ihead, &lp);
		if (!err && (lp.flags & UBIFS_LPROPS_TAKEN))
			err = ubifs_lpt_set(fs->lpt, old_ihead, UBIFS_LPT_NC, UBIFS_LPT_NC, lp.flags & ~UBIFS_LPROPS_TAKEN);
		if (err)
			goto out;
	}
done:
	/* the committed index is now the one just laid out */
	ubifs_tnc_old_idx_clear(fs);
	*root_lnum = t->root->lnum;
	*root_offs = t->root->offs;
	*root_len = t->root->len;
out:
	/* kernel free_unused_idx_lebs */
	for (uint32_t i = next; i < got; i++) {
		struct ubifs_lprops lp;
		if (!ubifs_lpt_lookup(fs->lpt, ilebs[i], &lp))
			ubifs_lpt_set(fs->lpt, ilebs[i], lp.free, lp.dirty,
				      lp.flags & ~(UBIFS_LPROPS_INDEX | UBIFS_LPROPS_TAKEN));
	}
	/* kernel return_gap_lebs */
	for (uint32_t i = 0; i < ngaps; i++) {
		struct ubifs_lprops lp;
		if (!ubifs_lpt_lookup(fs->lpt, gap_lebs[i], &lp))
			ubifs_lpt_set(fs->lpt, gap_lebs[i], UBIFS_LPT_NC, UBIFS_LPT_NC, lp.flags & ~UBIFS_LPROPS_TAKEN);
	}
	free(ilebs);
	free(gap_lebs);
	free(buf);
	free(l.v);
	if (err)
		fs->ro_error = 1;
	return err;
}
