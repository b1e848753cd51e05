/* ubifs_tnc — the tree node cache: the index B+tree loaded on demand from
 * flash into a bounded cache of znodes, modified in memory by journal replay
 * (and later by the write path).
 *
 * Invariant kept by every change: for branch i of an index node,
 * key_i <= every key below branch i <= key_{i+1}. Searches therefore descend
 * through "the last branch whose key is < K" and step forward to the first
 * entry >= K; entries with equal (colliding) keys form one run.
 *
 * Modified znodes are dirty: they and their ancestors are pinned in memory
 * (and are what a future commit writes). Clean znodes are evictable; the
 * cache is shrunk to the byte limit by ubifs_tnc_shrink(), which callers run
 * only between operations (no position may be held across it). */
#ifndef UBIKIT_UBIFS_TNC_H
#define UBIKIT_UBIFS_TNC_H
#include <stddef.h>
#include <stdint.h>

#include "ubifs/ubifs_media.h"

struct ubifs_fs;
struct ubifs_znode;

struct ubifs_zbranch {
	struct ubifs_key key;
	uint32_t lnum, offs, len;    /* child index node, or leaf node at level 0 */
	struct ubifs_znode *child;   /* loaded child (levels > 0), else NULL */
	const uint8_t *hash;         /* authenticated index: the child's hash as the index node
				      * stored it (in the znode's hashes), NULL if unknown */
};

struct ubifs_znode {
	struct ubifs_znode *parent;
	uint32_t iip;                /* index in parent */
	uint16_t level, child_cnt, cap;
	uint8_t dirty;
	uint32_t loaded_children;
	uint32_t lnum, offs, len;    /* on-flash copy (meaningless once dirty) */
	struct ubifs_znode *lru_prev, *lru_next; /* clean znodes only */
	int in_lru;
	uint8_t *hashes;             /* authenticated index: child_cnt hashes as read, else NULL */
	struct ubifs_zbranch zbranch[];
};

struct ubifs_tnc {
	struct ubifs_znode *root;
	size_t limit;      /* bound on clean (evictable) znode bytes */
	size_t bytes, peak; /* all loaded znodes, dirty ones included */
	size_t clean_bytes; /* znodes in the LRU */
	struct ubifs_znode *lru_head, *lru_tail;
	uint64_t loads, evictions;
	/* read-write: index size (aligned index nodes of the committed index
	 * still in use + those the next commit writes; kernel calc_idx_sz) and
	 * the index head, where the next commit appends */
	uint64_t idx_size;
	uint32_t ihead_lnum, ihead_offs;
	/* read-write: where the committed index had the znodes dirtied since
	 * the last commit (kernel old_idx tree): the in-the-gaps commit must
	 * not write over them. Reset by ubifs_tnc_old_idx_clear at commit. */
	uint64_t *old_idx; /* lnum << 32 | offs */
	size_t old_cnt, old_cap;
	int old_sorted;
	uint64_t gap_commits, gap_lebs; /* in-the-gaps commits, LEBs filled so (ubifs_tnc_commit.c) */
};

/* a position at level 0: branch n of znode z (n may be -1: before the first) */
struct ubifs_tnc_pos {
	struct ubifs_znode *z;
	int n;
};

int ubifs_tnc_init(struct ubifs_fs *fs, uint32_t lnum, uint32_t offs, uint32_t len, size_t limit);
void ubifs_tnc_destroy(struct ubifs_fs *fs);
void ubifs_tnc_shrink(struct ubifs_fs *fs);

/* First leaf entry with key >= k (after = 0) or > k (after = 1).
 * 0 and *pos set, -ENOENT at the end of the index, other <0 on errors. */
int ubifs_tnc_seek(struct ubifs_fs *fs, const struct ubifs_key *k, int after, struct ubifs_tnc_pos *pos);
int ubifs_tnc_next(struct ubifs_fs *fs, struct ubifs_tnc_pos *pos);
static inline const struct ubifs_zbranch *ubifs_tnc_at(const struct ubifs_tnc_pos *pos)
{
	return &pos->z->zbranch[pos->n];
}

/* Read the leaf node a zbranch points to into buf (>= zbr->len bytes) and
 * check it: type from the key, exact length, CRC, key equal to the branch. */
int ubifs_tnc_read_leaf(struct ubifs_fs *fs, const struct ubifs_zbranch *zbr, uint8_t *buf);

/* The kernel's exact lookup of a non-hashed key (last branch with key <= k
 * at each level): the zbranch, or -ENOENT. For checks (ubifs_lpt_check). */
int ubifs_tnc_lookup_strict(struct ubifs_fs *fs, const struct ubifs_key *k, struct ubifs_zbranch *out);
/* Look up a non-hashed key (inode, data): -ENOENT if absent. buf >= UBIFS_MAX_NODE_SZ. */
int ubifs_tnc_lookup(struct ubifs_fs *fs, const struct ubifs_key *k, uint8_t *buf, uint32_t *len);
/* Same, also telling where the node is (for error messages). */
int ubifs_tnc_lookup_at(struct ubifs_fs *fs, const struct ubifs_key *k, uint8_t *buf, struct ubifs_zbranch *where);
/* Look up a directory/xattr entry by key and name. */
int ubifs_tnc_lookup_nm(struct ubifs_fs *fs, const struct ubifs_key *k, const char *name, size_t nlen,
			uint8_t *buf, uint32_t *len);

/* Changes (replay now, the write path later). */
int ubifs_tnc_add(struct ubifs_fs *fs, const struct ubifs_key *k, uint32_t lnum, uint32_t offs, uint32_t len);
int ubifs_tnc_add_nm(struct ubifs_fs *fs, const struct ubifs_key *k, const char *name, size_t nlen, uint32_t lnum,
		     uint32_t offs, uint32_t len);
int ubifs_tnc_remove(struct ubifs_fs *fs, const struct ubifs_key *k);
int ubifs_tnc_remove_nm(struct ubifs_fs *fs, const struct ubifs_key *k, const char *name, size_t nlen);
int ubifs_tnc_remove_range(struct ubifs_fs *fs, const struct ubifs_key *lo, const struct ubifs_key *hi);
/* The commit wrote dirty znode z at lnum:offs: it is clean (evictable) again
 * and its parent's branch points there. */
void ubifs_tnc_written(struct ubifs_fs *fs, struct ubifs_znode *z, uint32_t lnum, uint32_t offs, uint32_t len);

/* An inode with all its keys, its xattr entries and their xattr inodes. */
int ubifs_tnc_remove_ino(struct ubifs_fs *fs, uint32_t inum);

/* Garbage collection (ubifs_gc.c, kernel ubifs_tnc_has_node /
 * ubifs_tnc_replace / ubifs_dirty_idx_node). has_leaf: 1 when the index
 * uses the leaf with key k stored at lnum:offs, 0 when that copy is dead.
 * replace_leaf: that leaf now lives at new lnum:offs (the old copy becomes
 * dirt), -ENOENT if the index does not use it. dirty_idx: the index node
 * at lnum:offs (level, first key k) is made dirty with its ancestors, so
 * the next commit writes it elsewhere: 1 done, 0 not used (or dirty). */
int ubifs_tnc_has_leaf(struct ubifs_fs *fs, const struct ubifs_key *k, uint32_t lnum, uint32_t offs);
int ubifs_tnc_replace_leaf(struct ubifs_fs *fs, const struct ubifs_key *k, uint32_t old_lnum, uint32_t old_offs,
			   uint32_t lnum, uint32_t offs, uint32_t len);
int ubifs_tnc_dirty_idx(struct ubifs_fs *fs, const struct ubifs_key *k, unsigned level, uint32_t lnum, uint32_t offs);
/* The in-the-gaps commit (kernel is_idx_node_in_use): is the index node at
 * lnum:offs (level, first key k) used by the committed index? 0 no (its
 * space may be written over), 1 yes but not after this commit (dirty or
 * deleted since), 2 yes and still clean. */
int ubifs_tnc_idx_in_use(struct ubifs_fs *fs, const struct ubifs_key *k, unsigned level, uint32_t lnum,
			 uint32_t offs);
void ubifs_tnc_old_idx_clear(struct ubifs_fs *fs);

#endif
