/* ubifs_lpt — the LEB properties tree (LPT): free and dirty space and the
 * index flag of every main-area LEB, read from flash at mount, changed in
 * memory by the journal, the index commit and GC, and written out of place
 * at each commit (small and big model, ltab, lsave, LPT garbage collection).
 *
 * THIS HEADER IS THE CONTRACT between the LPT (ubifs_lpt*.c) and its users
 * (journal, index commit, GC, budgeting, fsck). The state is owned by
 * ubifs_lpt*.c and reached only through these functions. Semantics follow
 * the kernel's lprops rules (fs/ubifs/lprops.c, lpt.c, lpt_commit.c, find.c);
 * where a rule is not stated here, the kernel's rule holds.
 *
 * Space accounting (kernel rules): for LEB lnum, `free` is the erased space
 * at its end, `dirty` the bytes of obsolete nodes and padding, and
 * used = leb_size - free - dirty. A LEB with UBIFS_LPROPS_INDEX holds index
 * nodes only. UBIFS_LPROPS_TAKEN marks a LEB that a journal head, GC or the
 * index commit owns right now (find functions never return it).
 *
 * Changes to this contract since it was first committed (branch h-lpt):
 * - UBIFS_LPT_NC: "no change" for a field of ubifs_lpt_set (kernel LPROPS_NC).
 * - ubifs_lpt_set_min_idx_lebs: the finders need budgeting's min_idx_lebs,
 *   as the kernel's find.c reads it from c->bi. The idx_gc count is the
 *   LPT's own (ubifs_lpt_idx_gc_cnt; budgeting reads it, GC changes it):
 *   budgeting no longer sets it (it used to reset GC's count to 0).
 * - ubifs_lpt_find_free / _find_for_index unmap the LEB they return when it
 *   is to be written from offset 0, as the kernel's find.c does.
 * - ubifs_lpt_find_frdi_idx, ubifs_lpt_freeable_cnt (GC, budgeting).
 * - ubifs_lpt_mark_dirty / _mark_all_dirty (tests, LPT GC), ubifs_lpt_geometry,
 *   ubifs_lpt_ltab, ubifs_lpt_counters and ubifs_lpt_gc (dump, tests).
 * - ubifs_lpt_post_commit: call it after the master is written (the LPT
 *   LEBs freed by the commit are unmapped only then).
 * - ubifs_lpt_add_idx_gc (h-gc): GC changes idx_gc_cnt alone.
 * - ubifs_lpt_check_ihead: the kernel's mount check that the index head
 *   offset equals leb_size - free of its LEB; marks that LEB TAKEN.
 */
#ifndef UBIKIT_UBIFS_LPT_H
#define UBIKIT_UBIFS_LPT_H
#include <stdint.h>

struct ubifs_fs;
struct ubifs_lpt;

/* flags, as on flash (kernel LPROPS_TAKEN / LPROPS_INDEX); the low bits are
 * the in-memory category and are not stored */
#define UBIFS_LPROPS_TAKEN 16u
#define UBIFS_LPROPS_INDEX 32u
/* "leave this field as it is" in ubifs_lpt_set (free, dirty or flags) */
#define UBIFS_LPT_NC 0x80000001u

struct ubifs_lprops {
	uint32_t lnum;
	uint32_t free, dirty;
	uint32_t flags; /* UBIFS_LPROPS_TAKEN | UBIFS_LPROPS_INDEX */
};

/* Totals over the main area, as the master node stores them (kernel
 * struct ubifs_lp_stats; dead and dark as the kernel computes them). */
struct ubifs_lp_stats {
	uint32_t empty_lebs, taken_empty_lebs, idx_lebs;
	uint64_t total_free, total_dirty, total_used, total_dead, total_dark;
};

/* Where a commit left the LPT: the master node's LPT fields. */
struct ubifs_lpt_pos {
	uint32_t lpt_lnum, lpt_offs;   /* root nnode (or the pnode, if only one) */
	uint32_t nhead_lnum, nhead_offs;
	uint32_t ltab_lnum, ltab_offs;
	uint32_t lsave_lnum, lsave_offs; /* big model only, else 0 */
	uint32_t lscan_lnum;
};

/* Read the LPT the master node of fs points at (fs->sb, fs->mst, geometry
 * already set up by mount). Every node is checked (CRC, type, ranges) and a
 * failure names LEB:offset. */
int ubifs_lpt_open(struct ubifs_fs *fs, struct ubifs_lpt **out);
void ubifs_lpt_close(struct ubifs_lpt *lpt);

/* Properties of main-area LEB lnum. -EINVAL (message) outside the main area. */
int ubifs_lpt_lookup(struct ubifs_lpt *lpt, uint32_t lnum, struct ubifs_lprops *out);
/* Set free, dirty and flags of lnum (absolute values; kernel
 * ubifs_change_one_lp with free/dirty given). Totals follow. */
int ubifs_lpt_set(struct ubifs_lpt *lpt, uint32_t lnum, uint32_t free, uint32_t dirty, uint32_t flags);
/* Add obsolete bytes to lnum (kernel ubifs_add_dirt / ubifs_update_one_lp). */
int ubifs_lpt_add_dirt(struct ubifs_lpt *lpt, uint32_t lnum, uint32_t dirty);
void ubifs_lpt_stats(const struct ubifs_lpt *lpt, struct ubifs_lp_stats *out);

/* A LEB with at least min_space free for a journal head (kernel
 * ubifs_find_free_space: prefers non-empty LEBs when squeeze is set, keeps
 * empty LEBs for the index as the kernel reserves them). Marks it TAKEN.
 * *offs_out = leb_size - free. -ENOSPC when none. */
int ubifs_lpt_find_free(struct ubifs_lpt *lpt, uint32_t min_space, int squeeze, uint32_t *lnum_out,
			uint32_t *offs_out);
/* An empty LEB for index nodes (kernel ubifs_find_free_leb_for_idx): marks
 * it TAKEN | INDEX. -ENOSPC when none. */
int ubifs_lpt_find_for_index(struct ubifs_lpt *lpt, uint32_t *lnum_out);
/* A LEB worth garbage-collecting: free + dirty >= min_space (kernel
 * ubifs_find_dirty_leb; pick_free allows a free LEB). Marks it TAKEN. */
int ubifs_lpt_find_dirty(struct ubifs_lpt *lpt, uint32_t min_space, int pick_free, struct ubifs_lprops *out);

/* The LPT owns the count of index LEBs GC holds for reuse after the
 * commit (kernel c->idx_gc_cnt, which the finders and budgeting's
 * available-space rule read); GC alone changes it (below). */
int32_t ubifs_lpt_idx_gc_cnt(const struct ubifs_lpt *lpt);
/* GC: one index LEB more (+1) or less (-1) held for reuse after the commit
 * (kernel ubifs_change_one_lp's idx_gc_cnt argument); budgeting's
 * min_idx_lebs is left as it is. */
void ubifs_lpt_add_idx_gc(struct ubifs_lpt *lpt, int32_t delta);
/* What the finders must leave for the index (kernel c->bi.min_idx_lebs,
 * from budgeting); 0 until set. */
void ubifs_lpt_set_min_idx_lebs(struct ubifs_lpt *lpt, uint32_t min_idx_lebs);
/* LEBs that are free + dirty == leb_size, not index, not taken */
uint32_t ubifs_lpt_freeable_cnt(const struct ubifs_lpt *lpt);
/* An index LEB with free + dirty == leb_size, not taken (kernel
 * ubifs_fast_find_frdi_idx; GC frees these). Does not mark it. -ENOSPC. */
int ubifs_lpt_find_frdi_idx(struct ubifs_lpt *lpt, uint32_t *lnum_out);

/* Kernel take_ihead + the replay check: the index head LEB
 * (mst.ihead_lnum) must have free == leb_size - ihead_offs; it becomes
 * TAKEN. Error names both values. */
int ubifs_lpt_check_ihead(struct ubifs_lpt *lpt, uint32_t ihead_lnum, uint32_t ihead_offs);

/* Force the pnode holding lnum (and its ancestors) to be written at the
 * next commit, values unchanged. */
int ubifs_lpt_mark_dirty(struct ubifs_lpt *lpt, uint32_t lnum);
int ubifs_lpt_mark_all_dirty(struct ubifs_lpt *lpt);

struct ubifs_lpt_geom {
	int big_model;
	uint32_t hght, pnode_cnt, nnode_cnt;
	uint32_t pnode_sz, nnode_sz, ltab_sz, lsave_sz, lsave_cnt;
	uint32_t dead_wm, dark_wm;
};
void ubifs_lpt_geometry(const struct ubifs_lpt *lpt, struct ubifs_lpt_geom *g);
/* One LPT garbage-collection pass now: the still-used nodes of the LPT LEB
 * with most dirt are marked dirty, the next commit moves them (kernel
 * lpt_gc; the commit runs it itself when the area is short, big model).
 * -ENOSPC when no LEB qualifies. For tests. */
int ubifs_lpt_gc(struct ubifs_lpt *lpt);
/* since open: LPT GC passes (big model) and whole-tree rewrites (small) */
void ubifs_lpt_counters(const struct ubifs_lpt *lpt, uint32_t *gc_runs, uint32_t *write_all_runs);
/* free and dirty bytes of LPT-area LEB lnum as the ltab says */
int ubifs_lpt_ltab(const struct ubifs_lpt *lpt, uint32_t lnum, uint32_t *free_out, uint32_t *dirty_out);

/* Write every changed LPT node out of place, then ltab (and lsave), with LPT
 * garbage collection when the LPT area is short; the nodes the current
 * master points at are never overwritten before the new master is written.
 * Fills *pos for the new master node. Called by the commit after the index
 * was written (its LEB changes are then in the tree). */
int ubifs_lpt_commit(struct ubifs_lpt *lpt, struct ubifs_lpt_pos *pos);
/* After the new master node is on flash (kernel ubifs_lpt_post_commit):
 * the LPT LEBs this commit emptied are unmapped and become usable, and in
 * the big model LPT garbage collection runs while the LPT area is short
 * (what it moves is written by the next commit). */
int ubifs_lpt_post_commit(struct ubifs_lpt *lpt);

/* Compare the tree with what a scan of every main-area LEB and the index
 * say (kernel dbg_check_lprops): 0 when equal, else -EUCLEAN with the first
 * difference named (LEB, field, expected, found). For tests and fsck. */
int ubifs_lpt_check(struct ubifs_lpt *lpt);
/* Only the LPT area: each LPT LEB's free and dirty bytes as the ltab says
 * them, against the nodes found there and which of them the tree uses
 * (kernel dbg_check_ltab). Part of ubifs_lpt_check. */
int ubifs_lpt_check_ltab(struct ubifs_lpt *lpt);

/* A new LPT for a fresh file system (mkfs, format of an empty volume;
 * kernel ubifs_create_dflt_lpt): fs holds the superblock and geometry,
 * lp[i] the properties of main LEB main_first + i (main_lebs entries).
 * Every node is written by ubifs_lpt_commit from the start of the LPT
 * area, which must be erased. */
int ubifs_lpt_create(struct ubifs_fs *fs, const struct ubifs_lprops *lp, struct ubifs_lpt **out);
/* The LPT size for a geometry (fs: sb.max_leb_cnt, flags, lsave_cnt,
 * lpt_first/last, main_lebs, leb_cnt): kernel c->lpt_sz and ltab size. */
int ubifs_lpt_calc_size(const struct ubifs_fs *fs, uint64_t *lpt_sz, uint32_t *ltab_sz);

#endif
