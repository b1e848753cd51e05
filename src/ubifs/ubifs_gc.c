/* ubifs_gc — garbage collection (see ubifs_gc.h). Facts from the kernel's
 * gc.c and find.c:
 * - a LEB to collect comes from ubifs_lpt_find_dirty (the dirtiest data
 *   LEB with dirty >= min space, or an index LEB with at least half a LEB
 *   to reclaim; never a bud or any other TAKEN LEB);
 * - a freeable LEB (free + dirty = leb_size) is simply emptied, after the
 *   other heads are synced (their nodes are what made it dirt);
 * - a data LEB is scanned; nodes the index no longer uses are dropped,
 *   truncation nodes too; data nodes are sorted by (inode, block), the
 *   others inodes first (longest first) then entries by (inode, hash); data
 *   nodes are moved in order while they fit, the others first-fit; then the
 *   GC head switches to the GC LEB (that LEB becomes a bud, the collected
 *   LEB the new GC LEB) and goes on. Nodes are copied verbatim: the sqnum
 *   stays, so a replay still orders them right;
 * - an index LEB: each index node the index still uses there is made
 *   dirty (the next commit writes it elsewhere); the LEB counts as empty
 *   but stays TAKEN until that commit's master is written (the committed
 *   index still points into it): the idx_gc list;
 * - GC returns -EAGAIN (commit first) when the journal wants a commit, or
 *   after more than 4 LEBs when index LEBs were freed, and gives up after
 *   32. */
#include "ubifs/ubifs_gc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ubifs/ubifs_journal.h"
#include "ubifs/ubifs_log.h"
#include "ubifs/ubifs_lpt.h"
#include "ubifs/ubifs_priv.h"
#include "ubifs/ubifs_wbuf.h"
#include "util/util_endian.h"

#define GC_SOFT_LEBS_LIMIT 4
#define GC_HARD_LEBS_LIMIT 32
#define GC_NO_LNUM UINT32_MAX

enum { LEB_FREED = 0, LEB_FREED_IDX = 1, LEB_RETAINED = 2 };

struct idx_gc_leb {
	uint32_t lnum;
	int unmap; /* unmap after the commit that is running / the next one */
};

struct ubifs_gc {
	struct idx_gc_leb *idx;
	size_t nidx, cap;
	uint8_t *leb; /* copy of the LEB being collected */
	struct ubifs_gc_stats st;
};

static struct ubifs_gc *gc_of(struct ubifs_fs *fs)
{
	return fs->gc;
}

int ubifs_gc_open(struct ubifs_fs *fs)
{
	if (fs->gc)
		return 0;
	struct ubifs_gc *gc = calloc(1, sizeof(*gc));
	if (!gc)
		return -ENOMEM;
	gc->leb = malloc(fs->leb_size);
	if (!gc->leb) {
		free(gc);
		return -ENOMEM;
	}
	fs->gc = gc;
	fs->gc_lnum = GC_NO_LNUM; /* none until the mount or the recovery takes one */
	return 0;
}

int ubifs_gc_mount(struct ubifs_fs *fs)
{
	int err = ubifs_gc_open(fs);
	if (err)
		return err;
	fs->gc_lnum = fs->mst.gc_lnum;
	err = ubifs_lpt_set(fs->lpt, fs->gc_lnum, fs->leb_size, 0, UBIFS_LPROPS_TAKEN);
	if (!err)
		err = ubifs_leb_unmap(fs, fs->gc_lnum);
	return err;
}

void ubifs_gc_close(struct ubifs_gc *gc)
{
	if (!gc)
		return;
	free(gc->idx);
	free(gc->leb);
	free(gc);
}

uint32_t ubifs_gc_lnum(const struct ubifs_fs *fs)
{
	return fs->gc_lnum;
}

void ubifs_gc_get_stats(const struct ubifs_fs *fs, struct ubifs_gc_stats *out)
{
	if (fs->gc)
		*out = fs->gc->st;
	else
		memset(out, 0, sizeof(*out));
}

static int idx_gc_add(struct ubifs_gc *gc, uint32_t lnum, int unmap)
{
	if (gc->nidx == gc->cap) {
		size_t c = gc->cap ? gc->cap * 2 : 16;
		struct idx_gc_leb *n = realloc(gc->idx, c * sizeof(*n));
		if (!n)
			return -ENOMEM;
		gc->idx = n;
		gc->cap = c;
	}
	gc->idx[gc->nidx].lnum = lnum;
	gc->idx[gc->nidx].unmap = unmap;
	gc->nidx++;
	return 0;
}

static struct ubifs_wbuf *gc_head(struct ubifs_fs *fs)
{
	return ubifs_jnl_head(fs->jnl, UBIFS_GC_HEAD);
}

/* every head but GC's to flash (kernel gc_sync_wbufs): their nodes made
 * the collected LEB's nodes obsolete and must be on flash before it goes */
static int sync_other_heads(struct ubifs_fs *fs)
{
	for (unsigned i = 0; i < ubifs_jnl_head_cnt(fs->jnl); i++) {
		if (i == UBIFS_GC_HEAD)
			continue;
		int err = ubifs_wbuf_sync(ubifs_jnl_head(fs->jnl, i));
		if (err)
			return err;
	}
	return 0;
}

/* kernel switch_gc_head: the rest of the current GC bud is wasted, the GC
 * LEB becomes the GC head's new bud (-EAGAIN: the log is full) */
static int switch_gc_head(struct ubifs_fs *fs)
{
	struct ubifs_wbuf *w = gc_head(fs);
	uint32_t lnum = fs->gc_lnum;
	if (lnum == GC_NO_LNUM)
		return util_err_set(&fs->err, -EINVAL, "GC: no GC LEB to switch the GC head to");
	int err = ubifs_wbuf_sync(w);
	if (!err)
		err = ubifs_leb_unmap(fs, lnum);
	if (!err)
		err = ubifs_log_add_bud(fs->log, UBIFS_GC_HEAD, lnum, 0);
	if (err)
		return err;
	fs->gc_lnum = GC_NO_LNUM;
	return ubifs_wbuf_seek(w, lnum, 0);
}

struct gc_node {
	uint32_t offs, len;
	uint8_t type;
	struct ubifs_key key;
};

static int data_cmp(const void *a, const void *b)
{
	const struct gc_node *x = a, *y = b;
	if (x->key.inum != y->key.inum)
		return x->key.inum < y->key.inum ? -1 : 1;
	uint32_t bx = ubifs_key_value(&x->key), by = ubifs_key_value(&y->key);
	return bx < by ? -1 : bx > by;
}

/* inodes first, longer first; then entries by (inode, hash) */
static int nondata_cmp(const void *a, const void *b)
{
	const struct gc_node *x = a, *y = b;
	int xi = x->type == UBIFS_INO_NODE, yi = y->type == UBIFS_INO_NODE;
	if (xi != yi)
		return xi ? -1 : 1;
	if (xi)
		return x->len > y->len ? -1 : x->len < y->len;
	if (x->key.inum != y->key.inum)
		return x->key.inum < y->key.inum ? -1 : 1;
	uint32_t hx = ubifs_key_value(&x->key), hy = ubifs_key_value(&y->key);
	return hx < hy ? -1 : hx > hy;
}

static int move_node(struct ubifs_fs *fs, uint32_t from, const struct gc_node *n)
{
	struct ubifs_gc *gc = gc_of(fs);
	struct ubifs_wbuf *w = gc_head(fs);
	uint32_t lnum = (uint32_t)w->lnum, offs = w->offs + w->used;
	int err = ubifs_wbuf_write(w, gc->leb + n->offs, n->len);
	if (!err)
		err = ubifs_tnc_replace_leaf(fs, &n->key, from, n->offs, lnum, offs, n->len);
	if (err == -ENOENT)
		err = util_err_set(&fs->err, -EIO, "GC: node at LEB %u:%u vanished from the index while moved", from,
				   n->offs);
	if (!err) {
		gc->st.nodes_moved++;
		gc->st.bytes_moved += n->len;
	}
	return err;
}

/* kernel sort_nodes + move_nodes */
static int move_nodes(struct ubifs_fs *fs, const struct ubifs_sleb *sleb)
{
	struct ubifs_wbuf *w = gc_head(fs);
	int err = 0;
	if (w->lnum < 0 && (err = switch_gc_head(fs)) != 0)
		return err;
	struct gc_node *data = calloc(sleb->nodes_cnt + 1, sizeof(*data));
	struct gc_node *other = calloc(sleb->nodes_cnt + 1, sizeof(*other));
	size_t nd = 0, no = 0;
	uint32_t min = UINT32_MAX;
	if (!data || !other) {
		err = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < sleb->nodes_cnt; i++) {
		const struct ubifs_snode *s = &sleb->nodes[i];
		if (s->type != UBIFS_INO_NODE && s->type != UBIFS_DATA_NODE && s->type != UBIFS_DENT_NODE &&
		    s->type != UBIFS_XENT_NODE)
			continue; /* truncation nodes: nothing refers to them */
		int live = ubifs_tnc_has_leaf(fs, &s->key, sleb->lnum, s->offs);
		if (live < 0) {
			err = live;
			goto out;
		}
		if (!live)
			continue;
		struct gc_node n = {.offs = s->offs, .len = s->len, .type = s->type, .key = s->key};
		if (n.len < min)
			min = n.len;
		if (ubifs_key_type(&s->key) == UBIFS_DATA_KEY)
			data[nd++] = n;
		else
			other[no++] = n;
	}
	qsort(data, nd, sizeof(*data), data_cmp);
	qsort(other, no, sizeof(*other), nondata_cmp);
	size_t di = 0;
	for (;;) {
		/* data nodes in order while they fit (kept together for bulk reads) */
		for (; di < nd; di++) {
			if (data[di].len > ubifs_wbuf_room(w, fs->leb_size))
				break;
			if ((err = move_node(fs, sleb->lnum, &data[di])) != 0)
				goto out;
		}
		/* the others first-fit */
		size_t keep = 0;
		for (size_t i = 0; i < no; i++) {
			uint32_t avail = ubifs_wbuf_room(w, fs->leb_size);
			int stop = avail < min;
			if (!stop && other[i].len > avail) {
				/* entries and data-less inodes are about the same size */
				if (ubifs_key_type(&other[i].key) == UBIFS_DENT_KEY || other[i].len == UBIFS_INO_NODE_SZ)
					stop = 1;
			} else if (!stop) {
				if ((err = move_node(fs, sleb->lnum, &other[i])) != 0)
					goto out;
				continue;
			}
			if (stop) {
				memmove(&other[keep], &other[i], (no - i) * sizeof(*other));
				keep += no - i;
				break;
			}
			other[keep++] = other[i];
		}
		no = keep;
		if (di == nd && no == 0)
			break;
		/* waste the rest of the GC bud, go on in the GC LEB */
		if ((err = switch_gc_head(fs)) != 0)
			goto out;
	}
out:
	free(data);
	free(other);
	return err;
}

/* the first branch key of the index node at buf */
static int idx_first_key(const uint8_t *buf, uint32_t len, struct ubifs_key *key, unsigned *level)
{
	struct ubifs_idx_node idx;
	ubifs_idx_unpack(buf, &idx);
	if (idx.child_cnt == 0 || UBIFS_IDX_NODE_SZ + UBIFS_BRANCH_SZ > len)
		return -EINVAL;
	struct ubifs_branch br;
	ubifs_idx_branch(&idx, 0, &br);
	*key = br.key;
	*level = idx.level;
	return 0;
}

/* kernel ubifs_garbage_collect_leb: LEB_FREED, LEB_FREED_IDX, LEB_RETAINED
 * or <0 */
static int collect_leb(struct ubifs_fs *fs, const struct ubifs_lprops *lp)
{
	struct ubifs_gc *gc = gc_of(fs);
	uint32_t lnum = lp->lnum;
	int err;
	if (lp->free + lp->dirty == fs->leb_size) {
		/* nothing in it is used */
		if (lp->free != fs->leb_size) {
			if ((err = sync_other_heads(fs)) != 0)
				return err;
			if ((err = ubifs_lpt_set(fs->lpt, lnum, fs->leb_size, 0, lp->flags)) != 0)
				return err;
		}
		if ((err = ubifs_leb_unmap(fs, lnum)) != 0)
			return err;
		gc->st.free_lebs++;
		if (fs->gc_lnum == GC_NO_LNUM) {
			fs->gc_lnum = lnum;
			return LEB_RETAINED;
		}
		return LEB_FREED;
	}
	struct ubifs_sleb sleb = {0};
	err = ubifs_scan(fs, lnum, 0, &sleb);
	if (err) {
		ubifs_sleb_free(&sleb);
		return err;
	}
	memcpy(gc->leb, sleb.buf, fs->leb_size);
	if (sleb.nodes_cnt && sleb.nodes[0].type == UBIFS_IDX_NODE) {
		for (uint32_t i = 0; i < sleb.nodes_cnt && !err; i++) {
			const struct ubifs_snode *s = &sleb.nodes[i];
			struct ubifs_key key;
			unsigned level;
			if (s->type != UBIFS_IDX_NODE || idx_first_key(gc->leb + s->offs, s->len, &key, &level)) {
				err = util_err_set(&fs->err, -EUCLEAN, "GC: index LEB %u holds a bad node at %u", lnum,
						   s->offs);
				break;
			}
			int r = ubifs_tnc_dirty_idx(fs, &key, level, lnum, s->offs);
			if (r < 0)
				err = r;
		}
		/* usable only after the next commit: the committed index may
		 * still be read from it (recovery) */
		if (!err)
			err = idx_gc_add(gc, lnum, 0);
		if (!err)
			err = ubifs_lpt_set(fs->lpt, lnum, fs->leb_size, 0, lp->flags & ~UBIFS_LPROPS_INDEX);
		if (!err) {
			ubifs_lpt_add_idx_gc(fs->lpt, 1);
			gc->st.idx_lebs++;
			err = LEB_FREED_IDX;
		}
		ubifs_sleb_free(&sleb);
		return err;
	}
	err = move_nodes(fs, &sleb);
	ubifs_sleb_free(&sleb);
	if (!err)
		err = sync_other_heads(fs);
	if (!err)
		err = ubifs_lpt_set(fs->lpt, lnum, fs->leb_size, 0, lp->flags);
	if (err)
		return err;
	gc->st.data_lebs++;
	if (fs->gc_lnum == GC_NO_LNUM) {
		fs->gc_lnum = lnum;
		return LEB_RETAINED;
	}
	err = ubifs_wbuf_sync(gc_head(fs));
	if (!err)
		err = ubifs_leb_unmap(fs, lnum);
	return err ? err : LEB_FREED;
}

static int should_commit(struct ubifs_fs *fs)
{
	return ubifs_log_want_commit(fs->log);
}

/* a LEB given back untouched (kernel ubifs_return_leb) */
static int return_leb(struct ubifs_fs *fs, uint32_t lnum)
{
	return ubifs_jnl_return_leb(fs, lnum);
}

int ubifs_garbage_collect(struct ubifs_fs *fs, int anyway)
{
	struct ubifs_gc *gc = gc_of(fs);
	if (!gc || fs->read_only)
		return -EROFS;
	if (fs->ro_error)
		return -EROFS;
	gc->st.runs++;
	if (should_commit(fs)) {
		gc->st.eagain++;
		return -EAGAIN;
	}
	struct ubifs_lpt_geom g;
	ubifs_lpt_geometry(fs->lpt, &g);
	uint32_t min_space = g.dead_wm;
	struct ubifs_wbuf *w = gc_head(fs);
	int ret = 0;
	for (int i = 0;; i++) {
		if (should_commit(fs)) {
			ret = -EAGAIN;
			break;
		}
		if (i > GC_SOFT_LEBS_LIMIT && gc->nidx) {
			ret = -EAGAIN; /* index LEBs wait for the commit */
			break;
		}
		if (i > GC_HARD_LEBS_LIMIT) {
			ret = -ENOSPC;
			break;
		}
		struct ubifs_lprops lp;
		ret = ubifs_lpt_find_dirty(fs->lpt, min_space, anyway ? 0 : 1, &lp);
		if (ret)
			break;
		uint32_t before = w->lnum < 0 ? 0 : ubifs_wbuf_room(w, fs->leb_size);
		ret = collect_leb(fs, &lp);
		if (ret < 0) {
			if (ret == -EAGAIN) { /* the log is full: not an error */
				int e = return_leb(fs, lp.lnum);
				if (e)
					ret = e;
				break;
			}
			return_leb(fs, lp.lnum);
			ubifs_wbuf_sync(w);
			fs->ro_error = 1;
			return ret;
		}
		if (ret == LEB_FREED) {
			ret = (int)lp.lnum;
			break;
		}
		if (ret == LEB_FREED_IDX)
			continue;
		uint32_t after = ubifs_wbuf_room(w, fs->leb_size);
		if (after > before) { /* progress */
			min_space >>= 1;
			if (min_space < g.dead_wm)
				min_space = g.dead_wm;
			continue;
		}
		if (i < GC_SOFT_LEBS_LIMIT)
			continue;
		min_space <<= 1;
		if (min_space > g.dark_wm)
			min_space = g.dark_wm;
	}
	if (ret == -ENOSPC && gc->nidx)
		ret = -EAGAIN;
	if (ret == -EAGAIN)
		gc->st.eagain++;
	else if (ret == -ENOSPC)
		gc->st.enospc++;
	int err = ubifs_wbuf_sync(w);
	if (!err && fs->gc_lnum != GC_NO_LNUM)
		err = ubifs_leb_unmap(fs, fs->gc_lnum);
	if (err) {
		fs->ro_error = 1;
		return err;
	}
	return ret;
}

int ubifs_gc_recovery_collect(struct ubifs_fs *fs)
{
	struct ubifs_gc *gc = gc_of(fs);
	struct ubifs_wbuf *w = gc_head(fs);
	if (!gc || !w || w->lnum < 0)
		return -ENOSPC;
	uint32_t used = w->offs + w->used;
	if (used >= fs->leb_size)
		return -ENOSPC;
	/* a non-index LEB whose live nodes fit in the rest of the GC bud */
	struct ubifs_lprops lp;
	int err = ubifs_lpt_find_dirty(fs->lpt, used, 2, &lp);
	if (err)
		return err;
	/* the commit first: a later mount then sees the orphan killing and
	 * the size fixes before the GC, in that order (kernel comment) */
	err = ubifs_commit(fs);
	if (!err) {
		fs->gc_lnum = GC_NO_LNUM;
		err = collect_leb(fs, &lp);
	}
	if (err >= 0) {
		int e = ubifs_wbuf_sync(w);
		if (e)
			err = e;
	}
	if (err < 0) {
		if (err == -EAGAIN)
			err = -EINVAL;
		char was[UTIL_ERR_MSG_MAX];
		snprintf(was, sizeof(was), "%s", fs->err.msg);
		return util_err_set(&fs->err, err, "recovery: GC of LEB %u into the GC head failed: %s (%.200s)",
				    lp.lnum, strerror(-err), was);
	}
	if (err != LEB_RETAINED || fs->gc_lnum != lp.lnum)
		return util_err_set(&fs->err, -EINVAL, "recovery: GC of LEB %u did not keep it as the GC LEB",
				    lp.lnum);
	return ubifs_leb_unmap(fs, fs->gc_lnum);
}

int ubifs_gc_make_free(struct ubifs_fs *fs, uint32_t *lnum, uint32_t *offs, int *nospc)
{
	int r = ubifs_garbage_collect(fs, 0);
	if (r >= 0) {
		*lnum = (uint32_t)r;
		*offs = 0;
		return 0;
	}
	if (r == -ENOSPC && (*nospc)++ < 2)
		return -EAGAIN; /* a commit may free LEBs (kernel make_reservation) */
	if (r == -ENOSPC)
		return util_err_set(&fs->err, -ENOSPC, "no free LEB for the journal and nothing left to collect");
	return r;
}

int ubifs_gc_start_commit(struct ubifs_fs *fs)
{
	struct ubifs_gc *gc = gc_of(fs);
	if (!gc)
		return 0;
	int err = 0;
	for (uint32_t lnum = fs->main_first; lnum < fs->leb_cnt && !err; lnum++) {
		struct ubifs_lprops lp;
		if ((err = ubifs_lpt_lookup(fs->lpt, lnum, &lp)) != 0)
			break;
		if ((lp.flags & UBIFS_LPROPS_TAKEN) || lp.free + lp.dirty != fs->leb_size || lp.free == fs->leb_size)
			continue;
		if (!(lp.flags & UBIFS_LPROPS_INDEX)) {
			/* freeable: the heads are synced (the commit did it) */
			err = ubifs_leb_unmap(fs, lnum);
			if (!err)
				err = ubifs_lpt_set(fs->lpt, lnum, fs->leb_size, 0, lp.flags);
			if (!err)
				gc->st.commit_freed++;
		}
	}
	/* GC'd index LEBs may go after this commit */
	for (size_t i = 0; i < gc->nidx; i++)
		gc->idx[i].unmap = 1;
	/* freeable index LEBs: the committed index may use them until the
	 * master of this commit is written */
	for (uint32_t lnum = fs->main_first; lnum < fs->leb_cnt && !err; lnum++) {
		struct ubifs_lprops lp;
		if ((err = ubifs_lpt_lookup(fs->lpt, lnum, &lp)) != 0)
			break;
		if ((lp.flags & UBIFS_LPROPS_TAKEN) || !(lp.flags & UBIFS_LPROPS_INDEX) ||
		    lp.free + lp.dirty != fs->leb_size)
			continue;
		err = idx_gc_add(gc, lnum, 1);
		if (!err)
			err = ubifs_lpt_set(fs->lpt, lnum, fs->leb_size, 0,
					    (lp.flags | UBIFS_LPROPS_TAKEN) & ~UBIFS_LPROPS_INDEX);
		if (!err)
			ubifs_lpt_add_idx_gc(fs->lpt, 1);
	}
	return err;
}

int ubifs_gc_end_commit(struct ubifs_fs *fs)
{
	struct ubifs_gc *gc = gc_of(fs);
	if (!gc)
		return 0;
	size_t keep = 0;
	int err = 0;
	for (size_t i = 0; i < gc->nidx; i++) {
		struct idx_gc_leb *e = &gc->idx[i];
		if (!e->unmap || err) {
			gc->idx[keep++] = *e;
			continue;
		}
		struct ubifs_lprops lp;
		err = ubifs_leb_unmap(fs, e->lnum);
		if (!err)
			err = ubifs_lpt_lookup(fs->lpt, e->lnum, &lp);
		if (!err)
			err = ubifs_lpt_set(fs->lpt, e->lnum, UBIFS_LPT_NC, UBIFS_LPT_NC, lp.flags & ~UBIFS_LPROPS_TAKEN);
		if (err) {
			gc->idx[keep++] = *e;
			continue;
		}
		ubifs_lpt_add_idx_gc(fs->lpt, -1);
		gc->st.commit_idx_freed++;
	}
	gc->nidx = keep;
	return err;
}

int ubifs_gc_step(struct ubifs_fs *fs)
{
	struct ubifs_gc *gc = fs ? gc_of(fs) : NULL;
	if (!gc || fs->read_only || fs->ro_error)
		return -EROFS;
	if (should_commit(fs)) {
		int err = ubifs_commit(fs);
		return err ? err : 1;
	}
	/* only LEBs with at least half of them to win back: moving costs writes */
	struct ubifs_lpt_geom g;
	ubifs_lpt_geometry(fs->lpt, &g);
	uint32_t min_space = fs->leb_size / 2 > g.dead_wm ? fs->leb_size / 2 : g.dead_wm;
	struct ubifs_lprops lp;
	int r = ubifs_lpt_find_dirty(fs->lpt, min_space, 0, &lp);
	if (r == -ENOSPC)
		return 0;
	if (r)
		return r;
	gc->st.runs++;
	r = collect_leb(fs, &lp);
	if (r == LEB_FREED)
		r = return_leb(fs, lp.lnum); /* an empty LEB for anyone */
	else if (r == -EAGAIN) {
		r = return_leb(fs, lp.lnum);
		if (!r)
			r = ubifs_commit(fs);
	} else if (r > 0)
		r = 0;
	int err = ubifs_wbuf_sync(gc_head(fs));
	if (!err && fs->gc_lnum != GC_NO_LNUM)
		err = ubifs_leb_unmap(fs, fs->gc_lnum);
	if (r || err) {
		fs->ro_error = 1;
		return r ? r : err;
	}
	return 1;
}

int ubifs_gc_take_idx_leb(struct ubifs_fs *fs, uint32_t *lnum)
{
	struct ubifs_gc *gc = gc_of(fs);
	if (!gc || !gc->nidx)
		return -ENOSPC;
	uint32_t l = gc->idx[--gc->nidx].lnum; /* the latest, as the kernel's list head */
	struct ubifs_lprops lp;
	int err = ubifs_lpt_lookup(fs->lpt, l, &lp);
	if (!err)
		err = ubifs_lpt_set(fs->lpt, l, UBIFS_LPT_NC, UBIFS_LPT_NC, lp.flags | UBIFS_LPROPS_INDEX);
	if (err)
		return err;
	ubifs_lpt_add_idx_gc(fs->lpt, -1);
	*lnum = l;
	return 0;
}

int ubifs_gc_index_room(struct ubifs_fs *fs, uint32_t min_idx_lebs)
{
	struct ubifs_gc *gc = fs ? gc_of(fs) : NULL;
	if (!gc || fs->read_only || fs->ro_error)
		return -EROFS;
	for (int tries = 0; tries < 16; tries++) {
		struct ubifs_lp_stats st;
		ubifs_lpt_stats(fs->lpt, &st);
		int64_t rsvd = min_idx_lebs > st.idx_lebs ? (int64_t)min_idx_lebs - st.idx_lebs : 0;
		int64_t lebs = (int64_t)st.empty_lebs + ubifs_lpt_freeable_cnt(fs->lpt) + (int64_t)gc->nidx -
			       st.taken_empty_lebs;
		if (rsvd <= lebs)
			return 0;
		int r = ubifs_garbage_collect(fs, 1);
		if (r >= 0) {
			r = return_leb(fs, (uint32_t)r); /* an empty LEB (kernel run_gc) */
			if (r)
				return r;
			gc->st.room_lebs++;
			continue;
		}
		if (r != -EAGAIN && r != -ENOSPC)
			return r;
		r = ubifs_commit(fs);
		if (r)
			return r;
	}
	return util_err_set(&fs->err, -ENOSPC, "no room for the index: %u LEBs wanted", min_idx_lebs);
}
