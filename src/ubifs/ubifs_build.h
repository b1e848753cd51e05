/* ubifs_build — laying a whole new UBIFS out in one pass, as mkfs.ubifs
 * does: leaf nodes (data, inodes, entries) appended LEB after LEB from the
 * start of the main area, then the GC LEB, then the index written bottom-up
 * from the sorted leaves, then the LPT, both master nodes, the superblock,
 * the log (one commit-start node) and the empty orphan area. Used by
 * `ubikit mkfs` (src/fs/fs_mkfs.c) and by the format of an empty volume
 * (ubifs_format.c). The geometry follows mkfs.ubifs's defaults unless the
 * caller sets it (the format sets the kernel's). */
#ifndef UBIKIT_UBIFS_BUILD_H
#define UBIKIT_UBIFS_BUILD_H
#include <stdint.h>

#include "ubifs/ubifs_media.h"
#include "util/util_err.h"

struct ubi_vol_io;
struct ubifs_build;

struct ubifs_build_params {
	uint32_t min_io_size, leb_size; /* min_io below 8 counts as 8 (mkfs.ubifs) */
	uint32_t max_leb_cnt;
	uint32_t leb_cnt;        /* 0: as many LEBs as the content needs (mkfs); else exactly this */
	uint64_t max_bud_bytes;  /* journal size; 0: mkfs.ubifs default */
	uint32_t log_lebs;       /* 0: mkfs.ubifs default */
	uint32_t orph_lebs;      /* 0: 1 */
	uint32_t lpt_lebs;       /* 0: computed (kernel calc_dflt_lpt_geom) */
	uint32_t fanout;         /* 0: 8 */
	uint32_t lsave_cnt;      /* 0: 256 */
	unsigned key_hash;       /* UBIFS_KEY_HASH_* */
	unsigned default_compr;  /* UBIFS_COMPR_* (superblock) */
	uint64_t rp_size;        /* reserved pool, bytes as stored */
	uint32_t rp_uid, rp_gid;
	uint32_t time_gran;      /* 0: 1e9 */
	int double_hash;         /* format 5 with UBIFS_FLG_DOUBLE_HASH (kernel); 0: format 4 (mkfs.ubifs) */
	int space_fixup;         /* superblock flag UBIFS_FLG_SPACE_FIXUP (mkfs.ubifs -F) */
	uint8_t uuid[16];
	int kernel_limits;       /* the kernel's superblock limits instead of mkfs.ubifs's (log and
				  * orphan LEB counts of a small volume; fsck's rebuild keeps them) */
};

struct ubifs_build_stats {
	uint32_t leb_cnt, main_first, data_lebs, idx_lebs, gc_lnum;
	uint64_t leaf_nodes, leaf_bytes, idx_bytes;
};

/* Geometry checked and fixed; nothing written yet. vol receives the LEBs
 * (writes only; it must be erased) and must have room for max_leb_cnt (or
 * leb_cnt) LEBs. */
int ubifs_build_new(const struct ubifs_build_params *p, struct ubi_vol_io *vol, struct ubifs_build **out,
		    struct util_err *err);
/* The next sequence number (for an inode's creat_sqnum). */
uint64_t ubifs_build_sqnum(struct ubifs_build *b);
/* Append a leaf node (packed header and body, len bytes; sqnum and CRC are
 * set here) under key. -ENOSPC (message with the LEBs needed so far) when
 * the volume is full. */
int ubifs_build_add(struct ubifs_build *b, uint8_t *node, uint32_t len, const struct ubifs_key *key);
/* Index, LPT, master, superblock, log, orphans. highest_inum as the master
 * stores it. */
int ubifs_build_finish(struct ubifs_build *b, uint64_t highest_inum, struct ubifs_build_stats *st);
/* The superblock fields the build uses (after ubifs_build_new). */
void ubifs_build_geometry(const struct ubifs_build *b, uint32_t *main_first, uint32_t *max_leb_cnt);
/* Change the superblock's reserved pool size (written at finish). */
void ubifs_build_set_rp_size(struct ubifs_build *b, uint64_t rp_size);
const char *ubifs_build_errmsg(const struct ubifs_build *b);
void ubifs_build_free(struct ubifs_build *b);

#endif
