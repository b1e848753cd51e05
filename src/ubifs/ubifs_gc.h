/* ubifs_gc — garbage collection, as the kernel's gc.c: the GC LEB (the
 * empty LEB kept in reserve, named by the master's gc_lnum), the GC
 * journal head's use (head 0: nodes still in use are copied there verbatim,
 * their sqnum kept), the index LEBs that GC or a commit emptied but that
 * become usable only after the next commit (the kernel's idx_gc list), and
 * the commit-time duties (ubifs_gc_start_commit / _end_commit).
 *
 * Callers: the mount (ubifs_gc_mount), the journal when no LEB is free for
 * a head (ubifs_gc_make_free), the commit, and the fs layer's background
 * step (ubifs_gc_step, exported in ubifs.h). Budgeting decides elsewhere
 * whether a write may be accepted; GC only makes space. */
#ifndef UBIKIT_UBIFS_GC_H
#define UBIKIT_UBIFS_GC_H
#include <stdint.h>

struct ubifs_fs;
struct ubifs_gc;

/* read-write mount, after the replay: take the master's GC LEB (free =
 * leb_size, TAKEN) and unmap it (kernel take_gc_lnum). */
int ubifs_gc_mount(struct ubifs_fs *fs);
/* only the GC state (the recovery takes its own GC LEB: ubifs_rcvry_gc_commit) */
int ubifs_gc_open(struct ubifs_fs *fs);
void ubifs_gc_close(struct ubifs_gc *gc);

/* Kernel ubifs_garbage_collect: collect LEBs (the dirtiest first) until one
 * is free for a journal head. Returns its number (TAKEN, unmapped, to be
 * written from offset 0), -EAGAIN when a commit must run first (the journal
 * is full, or only index LEBs were freed: they are usable after the commit),
 * -ENOSPC when nothing can be collected, or another error. anyway: also when
 * empty or freeable LEBs exist (do not just hand those out). */
int ubifs_garbage_collect(struct ubifs_fs *fs, int anyway);

/* Recovery (kernel ubifs_rcvry_gc_commit, GC branch): when the GC head
 * has a bud with room after the replay, a non-index LEB whose live nodes
 * fit there is found, a commit runs, the LEB is collected into the GC head
 * and becomes the GC LEB (fs->gc_lnum, unmapped). -ENOSPC: the GC head has
 * no bud or no LEB fits (take an empty LEB instead); another error with a
 * message. */
int ubifs_gc_recovery_collect(struct ubifs_fs *fs);

/* The journal's hook (kernel reserve_space + make_reservation on -ENOSPC):
 * a free LEB for a head in *lnum (offset *offs), or -EAGAIN (commit, then
 * retry: also twice for a -ENOSPC from GC, as the kernel retries after a
 * commit) or -ENOSPC with a message. *nospc counts those retries (0 at
 * the first call of one reservation). */
int ubifs_gc_make_free(struct ubifs_fs *fs, uint32_t *lnum, uint32_t *offs, int *nospc);

/* Commit steps (kernel ubifs_gc_start_commit / ubifs_gc_end_commit): at the
 * start (heads synced, before the log's commit start) freeable non-index
 * LEBs are unmapped and become empty, and freeable index LEBs are taken
 * for unmapping after the commit; at the end (master written, log post
 * commit done) those and the index LEBs GC emptied are unmapped and
 * usable. */
int ubifs_gc_start_commit(struct ubifs_fs *fs);
int ubifs_gc_end_commit(struct ubifs_fs *fs);

/* Budgeting's hook (kernel budget.c make_free_space / run_gc): while the
 * index's reserve (min_idx_lebs, kernel ubifs_calc_min_idx_lebs) is more
 * than the empty, freeable and GC-freed index LEBs, collect a LEB "anyway"
 * and give it back empty, or commit when GC asks for it. 0 when there is
 * room, -ENOSPC when there is none. */
int ubifs_gc_index_room(struct ubifs_fs *fs, uint32_t min_idx_lebs);

/* The in-the-gaps commit takes an index LEB GC emptied (kernel
 * ubifs_get_idx_gc_leb + get_idx_gc_leb): it leaves the idx_gc list, is
 * INDEX again and stays TAKEN. -ENOSPC when there is none. */
int ubifs_gc_take_idx_leb(struct ubifs_fs *fs, uint32_t *lnum);

/* The LEB kept empty for GC (the master's gc_lnum at unmount/commit). */
uint32_t ubifs_gc_lnum(const struct ubifs_fs *fs);

/* Counters since mount (tests, `ubikit info`). */
struct ubifs_gc_stats {
	uint64_t runs;          /* ubifs_garbage_collect calls (foreground) and steps */
	uint64_t data_lebs;     /* data LEBs whose live nodes were moved */
	uint64_t idx_lebs;      /* index LEBs whose nodes were made dirty (freed after a commit) */
	uint64_t free_lebs;     /* freeable LEBs handed out without moving anything */
	uint64_t nodes_moved, bytes_moved;
	uint64_t commit_freed;     /* freeable non-index LEBs unmapped at commit start */
	uint64_t commit_idx_freed; /* index LEBs unmapped after a commit */
	uint64_t eagain, enospc;   /* GC asked for a commit / gave up */
	uint64_t room_lebs;        /* LEBs emptied for the index's reserve */
};
void ubifs_gc_get_stats(const struct ubifs_fs *fs, struct ubifs_gc_stats *out);

#endif
