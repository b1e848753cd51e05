/* ubifs_budget — space budgeting, as the kernel's fs/ubifs/budget.c: every
 * operation that may add data to the flash reserves a pessimistic estimate
 * of it (index growth, new data, data that makes other data dirty) BEFORE
 * it changes anything, so that a full file system answers ENOSPC at that
 * call and never later (when cached pages are written back, at fsync,
 * commit or unmount). The reservation is released after the journal write
 * (for cached pages: after write-back, ubifs_wcache.c).
 *
 * Owns: the budget state (the kernel's struct ubifs_budg_info: idx_growth,
 * data_growth, dd_growth, uncommitted_idx, old_idx_sz, min_idx_lebs,
 * nospace flags), the constants it needs (page/inode/dentry budgets,
 * max_idx_node_sz, idx_leb_size, dark_wm, leb_overhead, rp_size), the
 * kernel's formulas (ubifs_calc_min_idx_lebs, ubifs_calc_available,
 * ubifs_get_free_space, ubifs_reported_space) and what to do when space is
 * short: write back cached data (the liability), garbage collection (one
 * hook, h-gc), commit, retry; then ENOSPC.
 *
 * The LPT is told min_idx_lebs (ubifs_lpt_set_reserve) whenever it changes,
 * so that journal heads leave the index its empty LEBs. */
#ifndef UBIKIT_UBIFS_BUDGET_H
#define UBIKIT_UBIFS_BUDGET_H
#include <stdint.h>

struct ubifs_fs;
struct ubifs_budget;

#define UBIFS_MIN_INDEX_LEBS 2 /* kernel MIN_INDEX_LEBS */

/* The kernel's struct ubifs_budget_req. Fields are counts (new_page,
 * dirtied_page, new_dent, mod_dent, new_ino: 0 or 1; dirtied_ino: 0..4) and
 * 8-aligned byte counts of inode data. Filled by ubifs_budget_space with
 * what it reserved, which ubifs_release_budget gives back. */
struct ubifs_budget_req {
	uint8_t new_page, dirtied_page, new_dent, mod_dent, new_ino, dirtied_ino;
	uint32_t new_ino_d, dirtied_ino_d;
	int fast; /* do not try to make space (write back, GC, commit) */
	/* set by ubifs_budget_space */
	int64_t idx_growth, data_growth, dd_growth;
};

/* Read-only mounts too (statfs). Call ubifs_budget_mounted after the
 * journal replay (uncommitted index from the dirty znodes). */
int ubifs_budget_open(struct ubifs_fs *fs, struct ubifs_budget **out);
void ubifs_budget_close(struct ubifs_budget *b);
void ubifs_budget_mounted(struct ubifs_fs *fs);

/* Reserve space for req (kernel ubifs_budget_space). When it does not fit:
 * write back cached data, try GC (hook), commit, retry (kernel
 * make_free_space); then -ENOSPC with a message. */
int ubifs_budget_space(struct ubifs_fs *fs, struct ubifs_budget_req *req);
/* Give back what req reserved (its index part waits for the next commit:
 * uncommitted_idx). */
void ubifs_release_budget(struct ubifs_fs *fs, struct ubifs_budget_req *req);
/* Deletions bypass budgeting (the kernel keeps one LEB for them); a
 * successful deletion clears the "no space" flags. */
void ubifs_budget_deleted(struct ubifs_fs *fs);
/* After the index commit: the committed index size is the new base and
 * the uncommitted index is 0 (kernel ubifs_tnc_end_commit). */
void ubifs_budget_commit_done(struct ubifs_fs *fs);

/* The kernel's formulas, on the current LPT totals and budget state. */
uint32_t ubifs_calc_min_idx_lebs(const struct ubifs_fs *fs);
int64_t ubifs_calc_available(const struct ubifs_fs *fs, uint32_t min_idx_lebs);
int64_t ubifs_reported_space(const struct ubifs_fs *fs, int64_t free_bytes);
/* Free space to report (kernel ubifs_get_free_space_nolock). */
int64_t ubifs_get_free_space(const struct ubifs_fs *fs);
/* statfs block counts: total (kernel c->block_cnt), free, available to
 * users without the reserved pool (f_bavail). */
void ubifs_budget_statfs(const struct ubifs_fs *fs, uint64_t *blocks, uint64_t *bfree, uint64_t *bavail);

/* What is reserved right now (kernel c->bi), for tests and `ubikit info`. */
struct ubifs_budget_info {
	int64_t idx_growth, data_growth, dd_growth, uncommitted_idx, old_idx_sz;
	uint32_t min_idx_lebs;
	int nospace, nospace_rp;
	uint32_t page_budget, inode_budget, dent_budget, max_idx_node_sz;
	uint64_t enospc;        /* budget requests answered -ENOSPC */
	uint64_t mkspc_commits; /* commits run to make space */
	uint64_t mkspc_writebacks; /* write-backs of cached data to make space */
};
void ubifs_budget_get_info(const struct ubifs_fs *fs, struct ubifs_budget_info *out);

/* ---- the hooks make_free_space calls ---- */
/* Write back cached dirty data (kernel shrink_liability); set by the
 * write-back cache (ubifs_wcache.c). */
typedef int (*ubifs_budget_writeback_fn)(struct ubifs_fs *fs);
void ubifs_budget_set_writeback(struct ubifs_fs *fs, ubifs_budget_writeback_fn fn);
/* GARBAGE COLLECTION CALL SITE (h-gc): one foreground GC pass; returns 0
 * when it produced a free LEB (given back to the LPT), -EAGAIN when a
 * commit is needed first, -ENOSPC when nothing can be collected (kernel
 * run_gc). While no GC is set, dirty space is not counted as available
 * (nothing could reclaim it) and make_free_space goes straight to the
 * commit. */
typedef int (*ubifs_budget_gc_fn)(struct ubifs_fs *fs);
void ubifs_budget_set_gc(struct ubifs_fs *fs, ubifs_budget_gc_fn fn);
/* The kernel's run_gc over ubifs_gc.c (set at read-write mounts). */
int ubifs_budget_run_gc(struct ubifs_fs *fs);

#endif
