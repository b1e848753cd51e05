/* ubifs_lpt_priv — the LPT state shared by the LPT's own files
 * (ubifs_lpt.c: geometry, node format, reading, lprops and finding;
 * ubifs_lpt_commit.c: writing; ubifs_lpt_check.c: the scan check). Nobody
 * else includes this: other files use ubifs_lpt.h.
 *
 * In memory the whole tree is held: every pnode's four lprops in one array
 * indexed by (lnum - main_first), and the nnodes level by level (level 1 is
 * the parent of the pnodes, level lpt_hght the root). A node's on-flash
 * position is in its parent's branch (the root's in root_lnum/offs); lnum 0
 * means "never written" (all LEBs below are empty). */
#ifndef UBIKIT_UBIFS_LPT_PRIV_H
#define UBIKIT_UBIFS_LPT_PRIV_H
#include <stdint.h>

#include "ubifs/ubifs_lpt.h"

#define LPT_FANOUT 4
#define LPT_FANOUT_SHIFT 2
#define LPT_CRC_BITS 16
#define LPT_CRC_BYTES 2
#define LPT_TYPE_BITS 4
enum { LPT_PNODE = 0, LPT_NNODE = 1, LPT_LTAB = 2, LPT_LSAVE = 3, LPT_NOT_A_NODE = 15 };
#define LPT_MAX_HGHT 32

/* in-memory categories (kernel LPROPS_*; low 4 bits of the flags in memory) */
enum { CAT_UNCAT = 0, CAT_DIRTY = 1, CAT_DIRTY_IDX = 2, CAT_FREE = 3, CAT_FREEABLE = 4, CAT_EMPTY = 5, CAT_FRDI_IDX = 6 };
#define LPT_MIN_WRITE_SZ (48 + 8) /* data node header + 8: the smallest useful write */

struct lpt_nnode {
	uint32_t lnum[LPT_FANOUT], offs[LPT_FANOUT]; /* children's on-flash positions */
	uint32_t num;                                 /* big model: the node number */
	uint8_t dirty;
};

struct lpt_ltab_ent {
	uint32_t free, dirty;
	uint8_t tgc, cmt; /* commit-time marks (LPT GC) */
};

struct ubifs_lpt {
	struct ubifs_fs *fs;
	/* geometry (kernel do_calc_lpt_geom) */
	uint32_t leb_size, min_io_size, main_first, main_lebs, leb_cnt, max_leb_cnt;
	uint32_t lpt_first, lpt_last, lpt_lebs, lsave_cnt;
	int big;
	uint32_t hght, pnode_cnt;
	uint32_t lvl_cnt[LPT_MAX_HGHT + 1]; /* nodes per level; [0] = pnodes */
	uint32_t space_bits, lpt_lnum_bits, lpt_offs_bits, lpt_spc_bits, pcnt_bits, lnum_bits;
	uint32_t pnode_sz, nnode_sz, ltab_sz, lsave_sz;
	uint64_t lpt_sz; /* the whole tree + ltab (+ lsave) + wastage (kernel c->lpt_sz) */
	int check_lpt_free; /* big model: LPT GC before the first commit */
	uint32_t dead_wm, dark_wm, min_idx_node_sz, half_leb_size;

	/* the tree */
	struct ubifs_lprops *lp;           /* pnode_cnt * 4 entries; lnum 0 past leb_cnt */
	uint8_t *pdirty;                   /* per pnode */
	struct lpt_nnode *nn[LPT_MAX_HGHT + 1]; /* [1..hght] */
	uint32_t root_lnum, root_offs;
	struct lpt_ltab_ent *ltab;
	uint32_t *lsave;
	uint32_t nhead_lnum, nhead_offs, ltab_lnum, ltab_offs, lsave_lnum, lsave_offs, lscan_lnum;
	int ltab_dirty, lsave_dirty;
	uint32_t gc_runs, write_all_runs; /* LPT GC passes, whole-tree rewrites (counters) */
	uint32_t dirty_pn, dirty_nn;

	/* space totals and what the finders need from budgeting/GC */
	struct ubifs_lp_stats lst;
	uint32_t freeable_cnt;
	int32_t idx_gc_cnt;
	uint32_t min_idx_lebs;
};

/* bit fields, LSB first (kernel pack_bits / ubifs_unpack_bits) */
struct lpt_bits {
	uint8_t *p;
	uint32_t pos; /* bit position from p */
};
uint32_t lpt_get_bits(struct lpt_bits *b, uint32_t n);
void lpt_put_bits(struct lpt_bits *b, uint32_t v, uint32_t n);

/* pack into buf (zeroed by the packer), with the CRC */
void lpt_pack_pnode(const struct ubifs_lpt *lpt, uint8_t *buf, uint32_t pnum);
void lpt_pack_nnode(const struct ubifs_lpt *lpt, uint8_t *buf, const struct lpt_nnode *nn);
void lpt_pack_ltab(const struct ubifs_lpt *lpt, uint8_t *buf);
void lpt_pack_lsave(const struct ubifs_lpt *lpt, uint8_t *buf);

/* The LPT node at leb + offs (a whole LPT LEB), as LPT GC and the ltab
 * check walk them: the type after the CRC, the length from the type, the
 * CRC must match; 0 when none, else its type + 1 and *len. Stricter than
 * the kernel's walkers in two ways, both against a coincidence they are
 * open to on NOR (min I/O 8), where a run can end a byte or two before an
 * aligned boundary: its 0xFF padding and the next run's first bytes can
 * read as a node whose 16-bit CRC matches (torture found it: a 3-byte
 * "lsave" of a small-model LPT, which swallowed the ltab after it). So no
 * lsave in the small model, and a node is taken only if the walk can go on
 * after it: another node, or 0xFF up to the next min-I/O boundary, or the
 * end of the LEB. */
int lpt_node_at(const struct ubifs_lpt *lpt, const uint8_t *leb, uint32_t offs, uint32_t *len);

/* big-model node numbers (kernel calc_nnode_num_from_parent); root = 1 */
uint32_t lpt_nnode_num(const struct ubifs_lpt *lpt, uint32_t parent_num, uint32_t parent_level, uint32_t iip);

/* the ltab entry of an LPT LEB; dirt added for a node that moved away */
/* mark the pnode holding lnum and its ancestors dirty */
void lpt_mark_dirty(struct ubifs_lpt *lpt, uint32_t lnum);
void lpt_add_lpt_dirt(struct ubifs_lpt *lpt, uint32_t lnum, uint32_t bytes);
int lpt_category(const struct ubifs_lpt *lpt, const struct ubifs_lprops *p);
/* geometry from fs (kernel do_calc_lpt_geom); one LEB's share added to the totals */
int lpt_calc_geometry(struct ubifs_lpt *lpt, const struct ubifs_fs *fs);
void lpt_account_one(struct ubifs_lpt *lpt, const struct ubifs_lprops *p);

#endif
