/* ubifs_log — the log area: reference nodes naming each new bud (a LEB a
 * journal head writes to), the commit-start node that opens each commit,
 * the log head and tail, and the list of buds with the space they take
 * (bud_bytes, bounded by the superblock's max_bud_bytes: when the journal is
 * full a commit is needed). As the kernel's log.c. */
#ifndef UBIKIT_UBIFS_LOG_H
#define UBIKIT_UBIFS_LOG_H
#include <stdint.h>

struct ubifs_fs;
struct ubifs_log;

/* After the master node is read; lhead/ltail from the replay (fs fields). */
int ubifs_log_open(struct ubifs_fs *fs, struct ubifs_log **out);
void ubifs_log_close(struct ubifs_log *log);
/* The log head the replay found (where the next reference node goes). */
void ubifs_log_set_head(struct ubifs_log *log, uint32_t lnum, uint32_t offs);
/* A bud found by the replay (kernel ubifs_add_bud while replaying). */
int ubifs_log_replayed_bud(struct ubifs_log *log, uint32_t lnum, uint32_t start, int jhead);
/* Write a reference node for a new bud lnum:offs of head jhead and add it
 * to the buds. -EAGAIN: the log or the journal is full, commit first. */
int ubifs_log_add_bud(struct ubifs_log *log, int jhead, uint32_t lnum, uint32_t offs);
/* kernel ubifs_consolidate_log, run at a read-write mount when the log
 * LEB after the head is the tail: the log from the tail to the head is
 * rewritten with only the first commit-start node and the first reference
 * to each bud LEB, packed 8-aligned from the tail LEB on; the LEBs after the
 * new head up to the old one are unmapped. -EINVAL (message set) when it
 * does not shrink. */
int ubifs_log_consolidate(struct ubifs_log *log);
/* journal head owning bud lnum, or -1 */
int ubifs_log_bud_head(const struct ubifs_log *log, uint32_t lnum);
/* the journal is full enough that the kernel would start a background commit */
int ubifs_log_want_commit(const struct ubifs_log *log);
void ubifs_log_positions(const struct ubifs_log *log, uint32_t *lhead_lnum, uint32_t *lhead_offs,
			 uint32_t *ltail_lnum);

/* ---- commit (called by ubifs_commit.c) ----
 * start: write CS + a REF per head position (lnum < 0 or offs == leb_size:
 * none) at offset 0 of the next log LEB; buds not under a head move to the
 * old list; *ltail = the new tail. end: the tail moves (the caller then
 * writes the master). post: the old buds are returned (lprops TAKEN
 * cleared through the callback) and the old log LEBs unmapped. */
struct ubifs_log_head_pos {
	int64_t lnum;
	uint32_t offs;
};
int ubifs_log_start_commit(struct ubifs_log *log, uint64_t cmt_no, const struct ubifs_log_head_pos *heads,
			   uint32_t nheads, uint32_t *ltail);
int ubifs_log_end_commit(struct ubifs_log *log, uint32_t ltail);
int ubifs_log_post_commit(struct ubifs_log *log, uint32_t old_ltail,
			  int (*return_leb)(struct ubifs_fs *fs, uint32_t lnum));

#endif
