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
 * (ubifs_tnc.c). Not done: the kernel's "in the gaps" method used when no
 * empty LEB is left (-ENOSPC here). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

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

int ubifs_tnc_commit(struct ubifs_fs *fs, uint32_t *root_lnum, uint32_t *root_offs, uint32_t *root_len)
{
	struct ubifs_tnc *t = &fs->tnc;
	struct zlist l = {0};
	uint32_t *ilebs = NULL;
	uint8_t *buf = NULL;
	uint32_t got = 0, next = 0;
	int err = 0;
	if (!t->root || !t->root->dirty)
		goto done;
	err = collect(t->root, &l, 0);
	if (err)
		goto out;
	uint32_t max_idx = ubifs_align8(ubifs_idx_node_len(fs->fanout));
	/* kernel get_leb_cnt: an overestimate with maximum-size nodes */
	int64_t cnt = (int64_t)l.n - (fs->leb_size - t->ihead_offs) / max_idx;
	if (cnt < 0)
		cnt = 0;
	uint32_t per = fs->leb_size / max_idx;
	uint32_t need = (uint32_t)((cnt + per - 1) / per);
	ilebs = calloc(need + 1, sizeof(*ilebs));
	buf = malloc(fs->leb_size);
	if (!ilebs || !buf) {
		err = -ENOMEM;
		goto out;
	}
	for (; got < need; got++) {
		err = ubifs_lpt_find_for_index(fs->lpt, &ilebs[got]);
		if (err == -ENOSPC)
			err = util_err_set(&fs->err, -ENOSPC,
					   "commit: no empty LEB for the index (%u needed; the kernel's in-the-gaps "
					   "commit is not implemented)",
					   need);
		if (err)
			goto out;
	}
	int64_t lnum = t->ihead_lnum;
	uint32_t start = t->ihead_offs, pos = start;
	if (start + idx_len(l.v[0]) > fs->leb_size)
		lnum = -1; /* the first node does not fit at the head: the kernel leaves that LEB as it is */
	for (size_t i = 0; i < l.n; i++) {
		struct ubifs_znode *z = l.v[i];
		uint32_t len = idx_len(z);
		if (lnum < 0) {
			if (next >= got) {
				err = util_err_set(&fs->err, -ENOSPC, "commit: out of index LEBs");
				goto out;
			}
			lnum = ilebs[next++];
			start = pos = 0;
		}
		uint8_t *n = buf + (pos - start);
		ubifs_idx_pack(n, z->child_cnt, z->level);
		for (uint32_t b = 0; b < z->child_cnt; b++) {
			const struct ubifs_zbranch *zb = &z->zbranch[b];
			if (!zb->lnum || !zb->len) {
				err = util_err_set(&fs->err, -EINVAL, "commit: znode level %u branch %u has no position",
						   z->level, b);
				goto out;
			}
			struct ubifs_branch br = {.lnum = zb->lnum, .offs = zb->offs, .len = zb->len, .key = zb->key};
			ubifs_idx_branch_pack(n, b, &br);
		}
		ubifs_node_finish(n, len, ubifs_next_sqnum(fs));
		if (ubifs_align8(len) > len)
			memset(n + len, 0, ubifs_align8(len) - len);
		ubifs_tnc_written(fs, z, (uint32_t)lnum, pos, len);
		t->idx_size += ubifs_align8(len);
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
done:
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
	free(ilebs);
	free(buf);
	free(l.v);
	if (err)
		fs->ro_error = 1;
	return err;
}
