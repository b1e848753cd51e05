/* ubifs_build — one-pass layout of a new UBIFS (see ubifs_build.h). Facts
 * from mkfs.ubifs (mtd-utils) and the kernel's create_default_filesystem:
 * journal size 1/8 of the main area, between 4 LEBs and 8 MiB; log LEBs
 * enough for a reference node per bud plus a commit, + 2; LPT LEBs for 4x
 * the LPT size, big model when the LPT does not fit one LEB; leaves in the
 * main area from main_first, each LEB padded to min. I/O and the rest left
 * erased; the GC LEB after the data; the index bottom-up after it; the
 * master with NO_ORPHS and commit number 0; a commit-start node in the log.
 * Space accounting of each LEB as the kernel's: free = LEB size - end
 * rounded up to min. I/O, dirty = that padding. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ubi/ubi_vol_io.h"
#include "ubifs/ubifs_build.h"
#include "ubifs/ubifs_lpt.h"
#include "ubifs/ubifs_priv.h"
#include "util/util_endian.h"

#define MIN_LOG_LEBS 2
#define MIN_LPT_LEBS 2
#define MIN_BUD_LEBS 3

struct leaf {
	struct ubifs_key key;
	uint32_t lnum, offs, len;
	uint32_t seq; /* insertion order: colliding hashed keys keep it */
};

#define POOL_NODE_MAX 1024 /* nodes up to this size may fill LEB ends */
#define SMALLEST_NODE 56   /* a directory entry with a 1-byte name, aligned */

struct pooled {
	struct ubifs_key key;
	size_t offs;
	uint32_t len;
	int used;
};

struct ubifs_build {
	struct ubifs_fs *fs; /* geometry, the LEB writers, the LPT and master code */
	struct ubifs_build_params p;
	uint32_t limit;        /* LEBs that may be used: fixed leb_cnt, else max_leb_cnt */
	uint8_t *leb;          /* the LEB being filled */
	uint32_t head_lnum, head_offs;
	struct ubifs_lprops *lp; /* per main LEB up to limit */
	struct leaf *leaves;
	size_t n, cap;
	uint32_t data_lebs;
	uint64_t leaf_bytes;
	struct pooled *pool; /* small nodes not placed yet */
	size_t pool_n, pool_cap, pool_first;
	uint8_t *pool_buf;
	size_t pool_len, pool_buf_cap;
	int overflow; /* past the last LEB allowed: only counting from here, to say how many are needed */
};

static uint32_t align_up(uint32_t x, uint32_t a)
{
	return (x + a - 1) / a * a;
}

static uint32_t calc_min_log_lebs(const struct ubifs_build_params *p, uint64_t max_bud_bytes)
{
	uint64_t buds = (max_bud_bytes + p->leb_size - 1) / p->leb_size;
	uint64_t sz = align_up(UBIFS_REF_NODE_SZ, p->min_io_size) * buds;
	sz += align_up(UBIFS_CS_NODE_SZ + UBIFS_REF_NODE_SZ * (1 + 2), p->min_io_size);
	return (uint32_t)((sz + p->leb_size - 1) / p->leb_size) + 1;
}

/* kernel/mkfs calc_dflt_lpt_geom: LPT LEBs for 4x the LPT, big model when
 * the tree does not fit one LEB */
static int lpt_geom(struct ubifs_fs *fs, uint32_t main_lebs_all, struct util_err *e)
{
	uint32_t lpt_lebs = MIN_LPT_LEBS;
	for (int big = 0; big < 2; big++) {
		fs->sb.flags = (fs->sb.flags & ~UBIFS_FLG_BIGLPT) | (big ? UBIFS_FLG_BIGLPT : 0);
		for (int i = 0; i < 64; i++) {
			if (main_lebs_all <= lpt_lebs)
				return util_err_set(e, -EINVAL, "mkfs: too few LEBs (%u) for the LPT", main_lebs_all);
			fs->lpt_first = fs->log_last + 1;
			fs->lpt_last = fs->lpt_first + lpt_lebs - 1;
			fs->main_lebs = main_lebs_all - lpt_lebs;
			fs->leb_cnt = fs->sb.max_leb_cnt;
			fs->main_first = fs->leb_cnt - fs->main_lebs;
			uint64_t sz;
			uint32_t ltab;
			int err = ubifs_lpt_calc_size(fs, &sz, &ltab);
			if (err == -ENOMEM)
				return util_err_set(e, err, "mkfs: out of memory");
			if (err)
				return util_err_set(e, -EINVAL, "mkfs: the LPT of %u LEBs does not fit this geometry",
						    fs->sb.max_leb_cnt);
			if (!big && sz > fs->leb_size)
				break; /* try the big model */
			uint64_t need = (sz * 4 + fs->leb_size - 1) / fs->leb_size;
			if (need > lpt_lebs) {
				lpt_lebs = (uint32_t)need;
				continue;
			}
			if (ltab > fs->leb_size)
				return util_err_set(e, -EINVAL, "mkfs: LPT ltab too big for a LEB");
			fs->sb.lpt_lebs = lpt_lebs;
			return 0;
		}
	}
	return util_err_set(e, -EINVAL, "mkfs: no LPT geometry fits %u LEBs", fs->sb.max_leb_cnt);
}

int ubifs_build_new(const struct ubifs_build_params *pin, struct ubi_vol_io *vol, struct ubifs_build **out,
		    struct util_err *e)
{
	*out = NULL;
	struct ubifs_build_params p = *pin;
	if (p.min_io_size < 8)
		p.min_io_size = 8;
	if (p.min_io_size & (p.min_io_size - 1))
		return util_err_set(e, -EINVAL, "mkfs: min. I/O unit size %u is not a power of 2", p.min_io_size);
	if (p.leb_size < UBIFS_MIN_LEB_SZ)
		return util_err_set(e, -EINVAL, "mkfs: too small LEB size %u, minimum is %u", p.leb_size,
				    UBIFS_MIN_LEB_SZ);
	if (p.leb_size % p.min_io_size)
		return util_err_set(e, -EINVAL, "mkfs: LEB size %u is not a multiple of the min. I/O unit %u",
				    p.leb_size, p.min_io_size);
	if (!p.fanout)
		p.fanout = 8;
	if (p.fanout < UBIFS_MIN_FANOUT || ubifs_idx_node_len(p.fanout) > p.leb_size / 2)
		return util_err_set(e, -EINVAL, "mkfs: fanout %u out of range (%u..%u)", p.fanout, UBIFS_MIN_FANOUT,
				    (p.leb_size / 2 - UBIFS_IDX_NODE_SZ) / UBIFS_BRANCH_SZ);
	if (!p.orph_lebs)
		p.orph_lebs = 1;
	if (!p.lsave_cnt)
		p.lsave_cnt = 256;
	if (!p.time_gran)
		p.time_gran = 1000000000;
	if (p.leb_cnt && (!p.max_leb_cnt || p.max_leb_cnt < p.leb_cnt))
		p.max_leb_cnt = p.leb_cnt;
	if (p.max_leb_cnt < UBIFS_MIN_LEB_CNT)
		return util_err_set(e, -EINVAL, "mkfs: maximum LEB count %u is too small, minimum is %u", p.max_leb_cnt,
				    UBIFS_MIN_LEB_CNT);
	if (p.key_hash > UBIFS_KEY_HASH_TEST || p.default_compr >= UBIFS_COMPR_TYPES_CNT)
		return util_err_set(e, -EINVAL, "mkfs: bad key hash or compressor");
	if (!p.max_bud_bytes) {
		int64_t lebs = (int64_t)p.max_leb_cnt - 1 - 2 - p.orph_lebs - (p.log_lebs ? p.log_lebs : MIN_LOG_LEBS) -
			       MIN_LPT_LEBS;
		uint64_t mbb = lebs > 0 ? (uint64_t)(lebs / 8) * p.leb_size : 0;
		if (mbb > 8u << 20)
			mbb = 8u << 20;
		if (mbb < 4ull * p.leb_size)
			mbb = 4ull * p.leb_size;
		p.max_bud_bytes = mbb;
	}
	if (!p.log_lebs)
		p.log_lebs = calc_min_log_lebs(&p, p.max_bud_bytes) + 2;
	/* mkfs.ubifs's limits for -l and -p: below max_leb_cnt - UBIFS_MIN_LEB_CNT */
	int64_t area_max = (int64_t)p.max_leb_cnt - UBIFS_MIN_LEB_CNT - 1;
	if (p.log_lebs < MIN_LOG_LEBS || (!p.kernel_limits && p.log_lebs > area_max))
		return util_err_set(e, -EINVAL, "mkfs: bad log LEB count %u: at least %u, and %u LEBs (-c) allow at most %lld",
				    p.log_lebs, MIN_LOG_LEBS, p.max_leb_cnt, (long long)(area_max > 0 ? area_max : 0));
	if (p.log_lebs < calc_min_log_lebs(&p, p.max_bud_bytes))
		return util_err_set(e, -EINVAL, "mkfs: too few log LEBs (%u) for a journal of %llu bytes, minimum %u",
				    p.log_lebs, (unsigned long long)p.max_bud_bytes, calc_min_log_lebs(&p, p.max_bud_bytes));
	if (!p.kernel_limits && p.orph_lebs > area_max)
		return util_err_set(e, -EINVAL, "mkfs: bad orphan LEB count %u: %u LEBs (-c) allow at most %lld",
				    p.orph_lebs, p.max_leb_cnt, (long long)(area_max > 0 ? area_max : 0));
	/* each area fits alone, but together they may leave too small a main
	 * area: the kernel mounts only leb_cnt >= SB + 2 masters + log + LPT +
	 * orphans + 3 heads + 6 (validate_sb), and leb_cnt <= max_leb_cnt */
	uint64_t need = 12ull + p.log_lebs + MIN_LPT_LEBS + p.orph_lebs;
	if (need > p.max_leb_cnt)
		return util_err_set(e, -EINVAL,
				    "mkfs: %u LEBs (-c) are too few for %u log and %u orphan LEBs: at least %llu needed",
				    p.max_leb_cnt, p.log_lebs, p.orph_lebs, (unsigned long long)need);
	if (p.max_bud_bytes < (uint64_t)p.leb_size * MIN_BUD_LEBS)
		return util_err_set(e, -EINVAL, "mkfs: too small journal (%llu bytes), at least %llu",
				    (unsigned long long)p.max_bud_bytes, (unsigned long long)p.leb_size * MIN_BUD_LEBS);

	struct ubifs_build *b = calloc(1, sizeof(*b));
	struct ubifs_fs *fs = calloc(1, sizeof(*fs));
	if (!b || !fs) {
		free(b);
		free(fs);
		return util_err_set(e, -ENOMEM, "mkfs: out of memory");
	}
	b->fs = fs;
	fs->vol = vol;
	fs->leb_size = p.leb_size;
	fs->min_io_size = p.min_io_size;
	fs->max_write_size = p.min_io_size;
	fs->fanout = p.fanout;
	fs->key_hash = p.key_hash;
	fs->jhead_cnt = 1 + UBIFS_NONDATA_JHEADS;
	fs->sb.max_leb_cnt = p.max_leb_cnt;
	fs->sb.lsave_cnt = p.lsave_cnt;
	fs->log_first = UBIFS_LOG_LNUM;
	fs->log_last = UBIFS_LOG_LNUM + p.log_lebs - 1;
	int err = lpt_geom(fs, p.max_leb_cnt - 3 - p.log_lebs - p.orph_lebs, e);
	if (!err && p.lpt_lebs && p.lpt_lebs > fs->sb.lpt_lebs) { /* more than needed: allowed */
		fs->sb.lpt_lebs = p.lpt_lebs;
		fs->lpt_last = fs->lpt_first + p.lpt_lebs - 1;
	}
	if (!err && 12ull + p.log_lebs + fs->sb.lpt_lebs + p.orph_lebs > p.max_leb_cnt)
		err = util_err_set(e, -EINVAL,
				   "mkfs: %u LEBs (-c) are too few for %u log, %u LPT and %u orphan LEBs: at least %llu needed",
				   p.max_leb_cnt, p.log_lebs, fs->sb.lpt_lebs, p.orph_lebs,
				   12ull + p.log_lebs + fs->sb.lpt_lebs + p.orph_lebs);
	if (err) {
		free(fs);
		free(b);
		return err;
	}
	fs->orph_first = fs->lpt_last + 1;
	fs->orph_last = fs->orph_first + p.orph_lebs - 1;
	fs->main_first = fs->orph_last + 1;
	b->limit = p.leb_cnt ? p.leb_cnt : p.max_leb_cnt;
	if (vol->leb_count < b->limit)
		b->limit = vol->leb_count;
	if (b->limit < fs->main_first + 3 || (p.leb_cnt && p.leb_cnt - fs->main_first < UBIFS_MIN_MAIN_LEBS)) {
		err = util_err_set(e, -ENOSPC, "mkfs: %u LEBs leave too small a main area (it starts at LEB %u)",
				   b->limit, fs->main_first);
		free(fs);
		free(b);
		return err;
	}
	if (p.leb_size > vol->leb_size || vol->leb_size != p.leb_size) {
		free(fs);
		free(b);
		return util_err_set(e, -EINVAL, "mkfs: LEB size %u differs from the volume's %u", p.leb_size,
				    vol->leb_size);
	}
	fs->sb.key_hash = (uint8_t)p.key_hash;
	fs->sb.flags = (fs->sb.flags & UBIFS_FLG_BIGLPT) | (p.double_hash ? UBIFS_FLG_DOUBLE_HASH : 0) |
		       (p.space_fixup ? UBIFS_FLG_SPACE_FIXUP : 0);
	fs->sb.min_io_size = p.min_io_size;
	fs->sb.leb_size = p.leb_size;
	fs->sb.max_bud_bytes = p.max_bud_bytes;
	fs->sb.log_lebs = p.log_lebs;
	fs->sb.orph_lebs = p.orph_lebs;
	fs->sb.jhead_cnt = 1;
	fs->sb.fanout = p.fanout;
	fs->sb.fmt_version = p.double_hash ? UBIFS_FORMAT_VERSION : 4;
	/* no authentication: the kernel writes hash_algo 0xFFFF, mkfs.ubifs 0 */
	fs->sb.hash_algo = p.double_hash ? 0xFFFF : 0;
	fs->sb.default_compr = (uint16_t)p.default_compr;
	fs->sb.rp_uid = p.rp_uid;
	fs->sb.rp_gid = p.rp_gid;
	fs->sb.rp_size = p.rp_size;
	fs->sb.time_gran = p.time_gran;
	memcpy(fs->sb.uuid, p.uuid, 16);
	fs->sb.ro_compat_version = UBIFS_RO_COMPAT_VERSION;
	b->p = p;
	b->leb = malloc(p.leb_size);
	b->lp = calloc(b->limit - fs->main_first, sizeof(*b->lp));
	if (!b->leb || !b->lp) {
		ubifs_build_free(b);
		return util_err_set(e, -ENOMEM, "mkfs: out of memory");
	}
	for (uint32_t i = 0; i < b->limit - fs->main_first; i++)
		b->lp[i].free = p.leb_size;
	b->head_lnum = fs->main_first;
	*out = b;
	return 0;
}

void ubifs_build_geometry(const struct ubifs_build *b, uint32_t *main_first, uint32_t *max_leb_cnt)
{
	*main_first = b->fs->main_first;
	*max_leb_cnt = b->p.max_leb_cnt;
}

void ubifs_build_set_rp_size(struct ubifs_build *b, uint64_t rp_size)
{
	b->fs->sb.rp_size = rp_size;
}

const char *ubifs_build_errmsg(const struct ubifs_build *b)
{
	return b ? util_err_msg(&b->fs->err) : "";
}

void ubifs_build_free(struct ubifs_build *b)
{
	if (!b)
		return;
	if (b->fs) {
		ubifs_lpt_close(b->fs->lpt);
		free(b->fs);
	}
	free(b->leb);
	free(b->lp);
	free(b->leaves);
	free(b->pool);
	free(b->pool_buf);
	free(b);
}

uint64_t ubifs_build_sqnum(struct ubifs_build *b)
{
	return ubifs_next_sqnum(b->fs);
}

/* every failure leaves a message for ubifs_build_errmsg (the layers below
 * do not name all of their allocation failures) */
static int with_msg(struct ubifs_build *b, int err)
{
	if (err && !b->fs->err.msg[0])
		util_err_set(&b->fs->err, err, err == -ENOMEM ? "mkfs: out of memory" : "mkfs: error %d", err);
	return err;
}

/* write out the LEB being filled: padded to min. I/O, the rest erased */
static int flush_leb(struct ubifs_build *b, uint32_t flags)
{
	struct ubifs_fs *fs = b->fs;
	if (!b->head_offs)
		return 0;
	uint32_t len = align_up(b->head_offs, fs->min_io_size);
	if (b->overflow) {
		b->head_lnum++;
		b->head_offs = 0;
		return 0;
	}
	ubifs_pad_pack(b->leb + b->head_offs, len - b->head_offs);
	int err = ubifs_leb_write(fs, b->head_lnum, 0, b->leb, len);
	if (err)
		return err;
	struct ubifs_lprops *p = &b->lp[b->head_lnum - fs->main_first];
	p->free = fs->leb_size - len;
	p->dirty = len - b->head_offs;
	p->flags = flags;
	b->head_lnum++;
	b->head_offs = 0;
	return 0;
}

static int need_leb(struct ubifs_build *b, uint32_t len, uint32_t flags)
{
	if (b->head_offs + len > b->fs->leb_size) {
		int err = flush_leb(b, flags);
		if (err)
			return err;
	}
	if (b->head_lnum >= b->limit)
		b->overflow = 1; /* go on counting; ubifs_build_finish reports the total */
	return 0;
}

/* place a finished node at the head (8-aligned, zero fill) */
static void put_node(struct ubifs_build *b, const uint8_t *node, uint32_t len)
{
	memcpy(b->leb + b->head_offs, node, len);
	uint32_t a = ubifs_align8(len);
	memset(b->leb + b->head_offs + len, 0, a - len);
	b->head_offs += a;
}

static int add_leaf(struct ubifs_build *b, const struct ubifs_key *key, uint32_t len)
{
	if (b->n == b->cap) {
		size_t nc = b->cap ? b->cap * 2 : 4096;
		struct leaf *nl = realloc(b->leaves, nc * sizeof(*nl));
		if (!nl)
			return util_err_set(&b->fs->err, -ENOMEM, "mkfs: out of memory");
		b->leaves = nl;
		b->cap = nc;
	}
	struct leaf *l = &b->leaves[b->n];
	l->key = *key;
	l->lnum = b->head_lnum;
	l->offs = b->head_offs;
	l->len = len;
	l->seq = (uint32_t)b->n;
	b->n++;
	b->leaf_bytes += len;
	return 0;
}

/* Fill the rest of the head LEB with small pooled nodes that fit (less
 * space lost at LEB ends than mkfs.ubifs's strictly sequential layout). */
static int fill_tail(struct ubifs_build *b)
{
	uint32_t room = b->fs->leb_size - b->head_offs;
	for (size_t i = b->pool_first; i < b->pool_n && room >= SMALLEST_NODE; i++) {
		struct pooled *pn = &b->pool[i];
		uint32_t a = ubifs_align8(pn->len);
		if (pn->used || a > room)
			continue;
		int err = add_leaf(b, &pn->key, pn->len);
		if (err)
			return err;
		put_node(b, b->pool_buf + pn->offs, pn->len);
		pn->used = 1;
		room -= a;
	}
	while (b->pool_first < b->pool_n && b->pool[b->pool_first].used)
		b->pool_first++;
	return 0;
}

static int place(struct ubifs_build *b, const uint8_t *node, uint32_t len, const struct ubifs_key *key)
{
	if (b->head_offs + ubifs_align8(len) > b->fs->leb_size) {
		int err = fill_tail(b);
		if (err)
			return err;
	}
	int err = need_leb(b, ubifs_align8(len), 0);
	if (!err)
		err = add_leaf(b, key, len);
	if (!err)
		put_node(b, node, len);
	return err;
}

int ubifs_build_add(struct ubifs_build *b, uint8_t *node, uint32_t len, const struct ubifs_key *key)
{
	ubifs_node_finish(node, len, ubifs_next_sqnum(b->fs));
	if (len > POOL_NODE_MAX)
		return with_msg(b, place(b, node, len, key));
	/* small nodes wait in the pool to fill LEB ends */
	if (b->pool_n == b->pool_cap) {
		size_t nc = b->pool_cap ? b->pool_cap * 2 : 4096;
		struct pooled *np = realloc(b->pool, nc * sizeof(*np));
		if (!np)
			return util_err_set(&b->fs->err, -ENOMEM, "mkfs: out of memory");
		b->pool = np;
		b->pool_cap = nc;
	}
	if (b->pool_len + len > b->pool_buf_cap) {
		size_t nc = b->pool_buf_cap ? b->pool_buf_cap * 2 : 1 << 20;
		while (nc < b->pool_len + len)
			nc *= 2;
		uint8_t *nb = realloc(b->pool_buf, nc);
		if (!nb)
			return util_err_set(&b->fs->err, -ENOMEM, "mkfs: out of memory");
		b->pool_buf = nb;
		b->pool_buf_cap = nc;
	}
	memcpy(b->pool_buf + b->pool_len, node, len);
	b->pool[b->pool_n++] = (struct pooled){*key, b->pool_len, len, 0};
	b->pool_len += len;
	return 0;
}

/* what is left in the pool, in order, filling as it goes */
static int drain_pool(struct ubifs_build *b)
{
	for (size_t i = b->pool_first; i < b->pool_n; i++) {
		struct pooled *pn = &b->pool[i];
		if (pn->used)
			continue;
		pn->used = 1;
		int err = place(b, b->pool_buf + pn->offs, pn->len, &pn->key);
		if (err)
			return err;
	}
	b->pool_first = b->pool_n;
	return 0;
}

static int leaf_cmp(const void *x, const void *y)
{
	const struct leaf *a = x, *c = y;
	int r = ubifs_key_cmp(&a->key, &c->key);
	if (r)
		return r;
	return a->seq < c->seq ? -1 : a->seq > c->seq;
}

/* the index bottom-up: groups of fanout branches, each level after the
 * one below, until one node is left (the root) */
static int write_index(struct ubifs_build *b, struct ubifs_branch *root, uint64_t *idx_size)
{
	struct ubifs_fs *fs = b->fs;
	size_t cnt = b->n;
	struct ubifs_branch *cur = malloc((cnt ? cnt : 1) * sizeof(*cur));
	uint8_t *node = malloc(ubifs_idx_node_len(fs->fanout) + 8);
	if (!cur || !node) {
		free(cur);
		free(node);
		return util_err_set(&fs->err, -ENOMEM, "mkfs: out of memory");
	}
	for (size_t i = 0; i < cnt; i++) {
		const struct leaf *l = &b->leaves[i];
		cur[i] = (struct ubifs_branch){l->lnum, l->offs, l->len, l->key, NULL};
	}
	int err = 0;
	uint16_t level = 0;
	*idx_size = 0;
	do {
		size_t out = 0;
		for (size_t i = 0; i < cnt; i += fs->fanout) {
			uint32_t ch = (uint32_t)(cnt - i < fs->fanout ? cnt - i : fs->fanout);
			uint32_t len = ubifs_idx_node_len(ch);
			err = need_leb(b, ubifs_align8(len), UBIFS_LPROPS_INDEX);
			if (err)
				goto out;
			ubifs_idx_pack(node, (uint16_t)ch, level);
			for (uint32_t k = 0; k < ch; k++)
				ubifs_idx_branch_pack(node, k, &cur[i + k]);
			ubifs_node_finish(node, len, ubifs_next_sqnum(fs));
			struct ubifs_branch nb = {b->head_lnum, b->head_offs, len, cur[i].key, NULL};
			put_node(b, node, len);
			*idx_size += ubifs_align8(len);
			cur[out++] = nb; /* out <= i: in place is safe */
		}
		cnt = out;
		level++;
	} while (cnt > 1);
	*root = cur[0];
out:
	free(cur);
	free(node);
	return err;
}

static void sb_pack(uint8_t *n, const struct ubifs_sb_node *sb)
{
	memset(n, 0, UBIFS_SB_NODE_SZ);
	ubifs_ch_pack(n, UBIFS_SB_NODE, UBIFS_SB_NODE_SZ, 0);
	n[26] = sb->key_hash;
	n[27] = sb->key_fmt;
	put_le32(n + 28, sb->flags);
	put_le32(n + 32, sb->min_io_size);
	put_le32(n + 36, sb->leb_size);
	put_le32(n + 40, sb->leb_cnt);
	put_le32(n + 44, sb->max_leb_cnt);
	put_le64(n + 48, sb->max_bud_bytes);
	put_le32(n + 56, sb->log_lebs);
	put_le32(n + 60, sb->lpt_lebs);
	put_le32(n + 64, sb->orph_lebs);
	put_le32(n + 68, sb->jhead_cnt);
	put_le32(n + 72, sb->fanout);
	put_le32(n + 76, sb->lsave_cnt);
	put_le32(n + 80, sb->fmt_version);
	put_le16(n + 84, sb->default_compr);
	put_le32(n + 88, sb->rp_uid);
	put_le32(n + 92, sb->rp_gid);
	put_le64(n + 96, sb->rp_size);
	put_le32(n + 104, sb->time_gran);
	memcpy(n + 108, sb->uuid, 16);
	put_le32(n + 124, sb->ro_compat_version);
	put_le16(n + 256, sb->hash_algo);
}

static int build_finish(struct ubifs_build *b, uint64_t highest_inum, struct ubifs_build_stats *st);

int ubifs_build_finish(struct ubifs_build *b, uint64_t highest_inum, struct ubifs_build_stats *st)
{
	return with_msg(b, build_finish(b, highest_inum, st));
}

static int build_finish(struct ubifs_build *b, uint64_t highest_inum, struct ubifs_build_stats *st)
{
	struct ubifs_fs *fs = b->fs;
	int err = drain_pool(b);
	if (!err)
		err = flush_leb(b, 0);
	if (err)
		return err;
	b->data_lebs = b->head_lnum - fs->main_first;
	if (b->head_lnum >= b->limit)
		b->overflow = 1;
	uint32_t gc_lnum = b->head_lnum++;
	qsort(b->leaves, b->n, sizeof(*b->leaves), leaf_cmp);
	struct ubifs_branch root = {0};
	uint64_t idx_size = 0;
	uint32_t idx_first = b->head_lnum;
	err = write_index(b, &root, &idx_size);
	if (err)
		return err;
	uint32_t ihead_lnum = b->head_lnum, ihead_offs = align_up(b->head_offs, fs->min_io_size);
	err = flush_leb(b, UBIFS_LPROPS_INDEX);
	if (err)
		return err;
	uint32_t leb_cnt = b->p.leb_cnt ? b->p.leb_cnt : b->head_lnum;
	if (b->overflow || b->head_lnum > b->limit)
		return util_err_set(&fs->err, -ENOSPC,
				    "mkfs: the file system does not fit: it needs %u LEBs, the maximum is %u%s", b->head_lnum,
				    b->limit, b->limit < b->p.max_leb_cnt ? " (the volume's size)" : " (-c)");
	fs->leb_cnt = fs->old_leb_cnt = leb_cnt;
	fs->main_lebs = leb_cnt - fs->main_first;
	fs->sb.leb_cnt = leb_cnt;
	err = ubifs_lpt_create(fs, b->lp, &fs->lpt);
	struct ubifs_lpt_pos pos;
	if (!err)
		err = ubifs_lpt_commit(fs->lpt, &pos);
	if (err)
		return err;
	struct ubifs_lp_stats ls;
	ubifs_lpt_stats(fs->lpt, &ls);
	/* log: the commit-start node of commit 0 (before the master, so that
	 * the master has the highest sequence number) */
	uint8_t *buf = calloc(1, UBIFS_SB_NODE_SZ + fs->min_io_size);
	if (!buf)
		return util_err_set(&fs->err, -ENOMEM, "mkfs: out of memory");
	ubifs_cs_pack(buf, 0);
	err = ubifs_write_node(fs, buf, UBIFS_CS_NODE_SZ, UBIFS_LOG_LNUM, 0);
	if (!err) {
		struct ubifs_mst_node *m = &fs->mst;
		memset(m, 0, sizeof(*m));
		m->highest_inum = highest_inum;
		m->cmt_no = 0;
		m->flags = UBIFS_MST_NO_ORPHS;
		m->log_lnum = UBIFS_LOG_LNUM;
		m->root_lnum = root.lnum;
		m->root_offs = root.offs;
		m->root_len = root.len;
		m->gc_lnum = gc_lnum;
		m->ihead_lnum = ihead_lnum;
		m->ihead_offs = ihead_offs;
		m->index_size = idx_size;
		m->total_free = ls.total_free;
		m->total_dirty = ls.total_dirty;
		m->total_used = ls.total_used;
		m->total_dead = ls.total_dead;
		m->total_dark = ls.total_dark;
		m->lpt_lnum = pos.lpt_lnum;
		m->lpt_offs = pos.lpt_offs;
		m->nhead_lnum = pos.nhead_lnum;
		m->nhead_offs = pos.nhead_offs;
		m->ltab_lnum = pos.ltab_lnum;
		m->ltab_offs = pos.ltab_offs;
		m->lsave_lnum = pos.lsave_lnum;
		m->lsave_offs = pos.lsave_offs;
		m->lscan_lnum = pos.lscan_lnum;
		m->empty_lebs = ls.empty_lebs;
		m->idx_lebs = ls.idx_lebs;
		m->leb_cnt = leb_cnt;
		fs->highest_inum = highest_inum;
		fs->mst_lnum = 0;
		err = ubifs_master_write(fs);
	}
	if (!err) {
		sb_pack(buf, &fs->sb);
		err = ubifs_write_node(fs, buf, UBIFS_SB_NODE_SZ, UBIFS_SB_LNUM, 0);
	}
	free(buf);
	if (!err && fs->vol->sync)
		err = fs->vol->sync(fs->vol->ctx);
	if (err)
		return err;
	if (st) {
		memset(st, 0, sizeof(*st));
		st->leb_cnt = leb_cnt;
		st->main_first = fs->main_first;
		st->data_lebs = b->data_lebs;
		st->idx_lebs = b->head_lnum - idx_first;
		st->gc_lnum = gc_lnum;
		st->leaf_nodes = b->n;
		st->leaf_bytes = b->leaf_bytes;
		st->idx_bytes = idx_size;
	}
	return 0;
}
