/* ubifs_budget — space budgeting (see ubifs_budget.h), the kernel's
 * budget.c rules: a request is turned into index growth (one maximal index
 * node per new node), data growth (new inodes, pages, entries: worst case,
 * uncompressed, longest name) and "dirtying" growth (pages, inodes and
 * entries that replace older ones); the sum of what is reserved must fit
 * in the available space, which leaves room for three times the index, the
 * GC LEB, one LEB per journal head and one for deletions, and the reserved
 * pool (root only). */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "ubifs/ubifs_budget.h"
#include "ubifs/ubifs_gc.h"
#include "ubifs/ubifs_journal.h"
#include "ubifs/ubifs_lpt.h"
#include "ubifs/ubifs_priv.h"

#define MAX_MKSPC_RETRIES 3 /* kernel: make_free_space rounds */

struct ubifs_budget {
	/* kernel c->bi */
	int64_t idx_growth, data_growth, dd_growth, uncommitted_idx, old_idx_sz;
	uint32_t min_idx_lebs;
	int nospace, nospace_rp;
	/* constants (kernel init_constants_sb / _master) */
	uint32_t page_budget, inode_budget, dent_budget;
	uint32_t max_idx_node_sz, idx_leb_size, dark_wm, leb_overhead;
	uint64_t main_bytes, rp_size;
	int can_use_rp;
	ubifs_budget_writeback_fn writeback;
	ubifs_budget_gc_fn gc;
	uint64_t enospc, mkspc_commits, mkspc_writebacks;
};

int ubifs_budget_open(struct ubifs_fs *fs, struct ubifs_budget **out)
{
	struct ubifs_budget *b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->page_budget = UBIFS_DATA_NODE_SZ + UBIFS_BLOCK_SIZE; /* UBIFS_MAX_DATA_NODE_SZ, one block per page */
	b->inode_budget = UBIFS_INO_NODE_SZ;
	b->dent_budget = UBIFS_DENT_NODE_SZ + UBIFS_MAX_NLEN + 1; /* UBIFS_MAX_DENT_NODE_SZ */
	b->max_idx_node_sz = ubifs_align8(ubifs_idx_node_len(fs->fanout));
	/* a fanout whose index node fills the LEB passes the superblock check:
	 * keep the divisor positive */
	b->idx_leb_size = fs->leb_size > b->max_idx_node_sz ? fs->leb_size - b->max_idx_node_sz : 8;
	b->dark_wm = (UBIFS_MAX_NODE_SZ + fs->min_io_size - 1) / fs->min_io_size * fs->min_io_size;
	b->leb_overhead = fs->leb_size % b->page_budget;
	b->main_bytes = (uint64_t)fs->main_lebs * fs->leb_size;
	b->rp_size = fs->sb.rp_size;
	/* kernel can_use_rp: the reserved pool's uid or gid, or a privileged user */
	uid_t uid = geteuid();
	gid_t gid = getegid();
	b->can_use_rp = uid == 0 || uid == fs->sb.rp_uid || (fs->sb.rp_gid != 0 && gid == fs->sb.rp_gid);
	b->old_idx_sz = (int64_t)fs->mst.index_size;
	*out = b;
	return 0;
}

void ubifs_budget_close(struct ubifs_budget *b)
{
	free(b);
}

static void set_min_idx_lebs(struct ubifs_fs *fs, uint32_t v)
{
	fs->budget->min_idx_lebs = v;
	if (fs->lpt && !fs->read_only)
		ubifs_lpt_set_min_idx_lebs(fs->lpt, v);
}

/* kernel replay: the dirty znodes left by the replay are index the next
 * commit writes */
static uint64_t dirty_znodes(const struct ubifs_znode *z)
{
	if (!z || !z->dirty)
		return 0;
	uint64_t n = 1;
	if (z->level > 0)
		for (uint32_t i = 0; i < z->child_cnt; i++)
			n += dirty_znodes(z->zbranch[i].child);
	return n;
}

void ubifs_budget_mounted(struct ubifs_fs *fs)
{
	struct ubifs_budget *b = fs->budget;
	b->old_idx_sz = (int64_t)fs->mst.index_size;
	b->uncommitted_idx = (int64_t)(dirty_znodes(fs->tnc.root) * b->max_idx_node_sz);
	set_min_idx_lebs(fs, ubifs_calc_min_idx_lebs(fs));
}

uint32_t ubifs_calc_min_idx_lebs(const struct ubifs_fs *fs)
{
	const struct ubifs_budget *b = fs->budget;
	int64_t idx_size = b->old_idx_sz + b->idx_growth + b->uncommitted_idx;
	idx_size *= 3; /* room to write the whole index three times ("in the gaps" always fits) */
	int64_t lebs = (idx_size + b->idx_leb_size - 1) / b->idx_leb_size;
	lebs += 1; /* the index head LEB is not usable in the gaps */
	if (lebs < UBIFS_MIN_INDEX_LEBS)
		lebs = UBIFS_MIN_INDEX_LEBS;
	return (uint32_t)lebs;
}

int64_t ubifs_calc_available(const struct ubifs_fs *fs, uint32_t min_idx_lebs)
{
	const struct ubifs_budget *b = fs->budget;
	struct ubifs_lp_stats st;
	ubifs_lpt_stats(fs->lpt, &st);
	int64_t avail = (int64_t)b->main_bytes - (int64_t)st.total_used;
	/* the index reserve, the GC LEB, one LEB per journal head, one for deletions */
	int64_t lebs = (int64_t)min_idx_lebs + 1 + fs->jhead_cnt + 1;
	avail -= lebs * fs->leb_size;
	avail -= (int64_t)st.total_dead;
	avail -= (int64_t)st.total_dark;
	/* index LEBs beyond the reserve have dark space not in total_dark */
	if (st.idx_lebs > min_idx_lebs)
		avail -= (int64_t)(st.idx_lebs - min_idx_lebs) * b->dark_wm;
	return avail > 0 ? avail : 0;
}

int64_t ubifs_reported_space(const struct ubifs_fs *fs, int64_t free_bytes)
{
	const struct ubifs_budget *b = fs->budget;
	/* a data block costs its node header and, tripled, its share of index
	 * nodes at half the fanout */
	int64_t f = fs->fanout > 3 ? fs->fanout >> 1 : 2;
	int64_t divisor = b->page_budget + (int64_t)b->max_idx_node_sz * 3 / (f - 1);
	return free_bytes * UBIFS_BLOCK_SIZE / divisor;
}

/* empty LEBs the index could still take (kernel: empty + freeable +
 * idx_gc - taken_empty) */
static int64_t idx_lebs_avail(const struct ubifs_fs *fs, const struct ubifs_lp_stats *st)
{
	return (int64_t)st->empty_lebs + ubifs_lpt_freeable_cnt(fs->lpt) + ubifs_lpt_idx_gc_cnt(fs->lpt) -
	       st->taken_empty_lebs;
}

int64_t ubifs_get_free_space(const struct ubifs_fs *fs)
{
	const struct ubifs_budget *b = fs->budget;
	struct ubifs_lp_stats st;
	ubifs_lpt_stats(fs->lpt, &st);
	uint32_t min_idx = ubifs_calc_min_idx_lebs(fs);
	int64_t outstanding = b->data_growth + b->dd_growth;
	int64_t avail = ubifs_calc_available(fs, min_idx);
	/* empty LEBs lose only leb_overhead to whole data nodes, not dark_wm */
	int64_t rsvd = min_idx > st.idx_lebs ? (int64_t)(min_idx - st.idx_lebs) : 0;
	int64_t lebs = idx_lebs_avail(fs, &st) - rsvd;
	avail += lebs * ((int64_t)b->dark_wm - b->leb_overhead);
	return avail > outstanding ? ubifs_reported_space(fs, avail - outstanding) : 0;
}

void ubifs_budget_statfs(const struct ubifs_fs *fs, uint64_t *blocks, uint64_t *bfree, uint64_t *bavail)
{
	const struct ubifs_budget *b = fs->budget;
	/* kernel init_constants_master: main area less the GC LEB, the deletion
	 * LEB, the minimum index and one LEB per journal head */
	int64_t lebs = (int64_t)fs->main_lebs - 1 - 1 - UBIFS_MIN_INDEX_LEBS - fs->jhead_cnt;
	int64_t total = ubifs_reported_space(fs, lebs * ((int64_t)fs->leb_size - b->leb_overhead));
	*blocks = total > 0 ? (uint64_t)total >> UBIFS_BLOCK_SHIFT : 0;
	int64_t free_b = ubifs_get_free_space(fs);
	int64_t rp = ubifs_reported_space(fs, (int64_t)b->rp_size);
	*bfree = (uint64_t)free_b >> UBIFS_BLOCK_SHIFT;
	*bavail = free_b > rp ? (uint64_t)(free_b - rp) >> UBIFS_BLOCK_SHIFT : 0;
}

/* what the budget may promise: the kernel's available space, less the
 * dirty space while no GC exists (only GC could reclaim it) */
static int64_t budget_available(const struct ubifs_fs *fs, uint32_t min_idx, const struct ubifs_lp_stats *st)
{
	int64_t avail = ubifs_calc_available(fs, min_idx);
	if (!fs->budget->gc)
		avail -= (int64_t)st->total_dirty;
	return avail;
}

/* kernel do_budget_space (with budget_available) */
static int do_budget_space(struct ubifs_fs *fs)
{
	struct ubifs_budget *b = fs->budget;
	struct ubifs_lp_stats st;
	ubifs_lpt_stats(fs->lpt, &st);
	uint32_t min_idx = ubifs_calc_min_idx_lebs(fs);
	int64_t rsvd = min_idx > st.idx_lebs ? (int64_t)(min_idx - st.idx_lebs) : 0;
	if (rsvd > idx_lebs_avail(fs, &st))
		return -ENOSPC; /* out of indexing space */
	int64_t avail = budget_available(fs, min_idx, &st);
	int64_t outstanding = b->data_growth + b->dd_growth;
	if (avail < outstanding)
		return -ENOSPC;
	if (avail - outstanding <= (int64_t)b->rp_size && !b->can_use_rp)
		return -ENOSPC;
	set_min_idx_lebs(fs, min_idx);
	return 0;
}

/* kernel make_free_space: -EAGAIN = try the budget again */
static int make_free_space(struct ubifs_fs *fs)
{
	struct ubifs_budget *b = fs->budget;
	for (int retries = 0; retries <= MAX_MKSPC_RETRIES; retries++) {
		if (b->writeback) {
			/* cached pages were budgeted uncompressed, with the
			 * worst index growth: written back, they cost less */
			int64_t liab1 = b->idx_growth + b->data_growth + b->dd_growth;
			int err = b->writeback(fs);
			if (err)
				return err;
			b->mkspc_writebacks++;
			if (b->idx_growth + b->data_growth + b->dd_growth < liab1)
				return -EAGAIN;
		}
		if (b->gc) { /* GARBAGE COLLECTION CALL SITE (h-gc) */
			int err = b->gc(fs);
			if (!err)
				return -EAGAIN;
			if (err != -EAGAIN && err != -ENOSPC)
				return err;
		}
		int err = ubifs_commit(fs);
		if (err)
			return err;
		b->mkspc_commits++;
	}
	return -ENOSPC;
}

static int64_t idx_growth_of(const struct ubifs_budget *b, const struct ubifs_budget_req *r)
{
	return (int64_t)(r->new_ino + r->new_page + r->new_dent) * b->max_idx_node_sz;
}

static int64_t data_growth_of(const struct ubifs_budget *b, const struct ubifs_budget_req *r)
{
	return (r->new_ino ? b->inode_budget : 0) + (r->new_page ? b->page_budget : 0) +
	       (r->new_dent ? b->dent_budget : 0) + (int64_t)r->new_ino_d;
}

static int64_t dd_growth_of(const struct ubifs_budget *b, const struct ubifs_budget_req *r)
{
	return (r->dirtied_page ? b->page_budget : 0) + (int64_t)b->inode_budget * r->dirtied_ino +
	       (r->mod_dent ? b->dent_budget : 0) + (int64_t)r->dirtied_ino_d;
}

int ubifs_budget_space(struct ubifs_fs *fs, struct ubifs_budget_req *req)
{
	struct ubifs_budget *b = fs->budget;
	req->idx_growth = req->data_growth = req->dd_growth = 0;
	int64_t data = data_growth_of(b, req), dd = dd_growth_of(b, req);
	if (!data && !dd)
		return 0;
	int64_t idx = idx_growth_of(b, req);
	int retried = 0;
	for (;;) {
		if (b->nospace && (b->nospace_rp || !b->can_use_rp)) {
			b->enospc++;
			return util_err_set(&fs->err, -ENOSPC, "no space left: the file system is full (budget)");
		}
		b->idx_growth += idx;
		b->data_growth += data;
		b->dd_growth += dd;
		int err = do_budget_space(fs);
		if (!err) {
			req->idx_growth = idx;
			req->data_growth = data;
			req->dd_growth = dd;
			return 0;
		}
		b->idx_growth -= idx;
		b->data_growth -= data;
		b->dd_growth -= dd;
		if (req->fast)
			return err;
		err = make_free_space(fs);
		if (err == -EAGAIN)
			continue;
		if (err == -ENOSPC && !retried) {
			retried = 1; /* the kernel tries once more anyway */
			continue;
		}
		if (err == -ENOSPC) {
			b->nospace = 1;
			if (b->can_use_rp || b->rp_size == 0)
				b->nospace_rp = 1;
			b->enospc++;
			struct ubifs_lp_stats st;
			ubifs_lpt_stats(fs->lpt, &st);
			return util_err_set(&fs->err, -ENOSPC,
					    "no space left: %lld bytes wanted (%lld outstanding), %lld available after "
					    "write-back and commit%s (budget)",
					    (long long)(data + dd), (long long)(b->data_growth + b->dd_growth),
					    (long long)budget_available(fs, ubifs_calc_min_idx_lebs(fs), &st),
					    b->gc ? "" : "; dirty space not counted: no garbage collection");
		}
		return err;
	}
}

void ubifs_release_budget(struct ubifs_fs *fs, struct ubifs_budget_req *req)
{
	struct ubifs_budget *b = fs->budget;
	if (!req->data_growth && !req->dd_growth)
		return;
	b->nospace = b->nospace_rp = 0;
	b->idx_growth -= req->idx_growth;
	b->uncommitted_idx += req->idx_growth;
	b->data_growth -= req->data_growth;
	b->dd_growth -= req->dd_growth;
	req->idx_growth = req->data_growth = req->dd_growth = 0;
	set_min_idx_lebs(fs, ubifs_calc_min_idx_lebs(fs));
}

void ubifs_budget_deleted(struct ubifs_fs *fs)
{
	fs->budget->nospace = fs->budget->nospace_rp = 0;
}

void ubifs_budget_commit_done(struct ubifs_fs *fs)
{
	struct ubifs_budget *b = fs->budget;
	if (!b)
		return;
	b->old_idx_sz = (int64_t)fs->tnc.idx_size;
	b->uncommitted_idx = 0;
	set_min_idx_lebs(fs, ubifs_calc_min_idx_lebs(fs));
}

void ubifs_budget_get_info(const struct ubifs_fs *fs, struct ubifs_budget_info *o)
{
	const struct ubifs_budget *b = fs->budget;
	o->idx_growth = b->idx_growth;
	o->data_growth = b->data_growth;
	o->dd_growth = b->dd_growth;
	o->uncommitted_idx = b->uncommitted_idx;
	o->old_idx_sz = b->old_idx_sz;
	o->min_idx_lebs = b->min_idx_lebs;
	o->nospace = b->nospace;
	o->nospace_rp = b->nospace_rp;
	o->page_budget = b->page_budget;
	o->inode_budget = b->inode_budget;
	o->dent_budget = b->dent_budget;
	o->max_idx_node_sz = b->max_idx_node_sz;
	o->enospc = b->enospc;
	o->mkspc_commits = b->mkspc_commits;
	o->mkspc_writebacks = b->mkspc_writebacks;
}

void ubifs_budget_set_writeback(struct ubifs_fs *fs, ubifs_budget_writeback_fn fn)
{
	fs->budget->writeback = fn;
}

int ubifs_budget_run_gc(struct ubifs_fs *fs)
{
	int lnum = ubifs_garbage_collect(fs, 1);
	if (lnum < 0)
		return lnum;
	return ubifs_jnl_return_leb(fs, (uint32_t)lnum); /* kernel ubifs_return_leb */
}

void ubifs_budget_set_gc(struct ubifs_fs *fs, ubifs_budget_gc_fn fn)
{
	fs->budget->gc = fn;
}
