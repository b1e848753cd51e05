/* ubifs_lpt — the LEB properties tree: its geometry, the bit-packed node
 * format (pnode, nnode, ltab, lsave with CRC-16), reading the whole tree at
 * mount, the lprops changes with the kernel's space totals and categories,
 * and the finders (free space for a journal head, an empty LEB for the
 * index, a dirty LEB for GC). Writing is in ubifs_lpt_commit.c, the check
 * against a scan in ubifs_lpt_check.c. Format and rules: docs/ubifs-lpt.md. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ubifs/ubifs_lpt_priv.h"
#include "ubifs/ubifs_priv.h"
#include "util/util_crc.h"

/* ---- bit fields ---- */

uint32_t lpt_get_bits(struct lpt_bits *b, uint32_t n)
{
	uint32_t v = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t k = b->pos + i;
		v |= (uint32_t)((b->p[k >> 3] >> (k & 7)) & 1u) << i;
	}
	b->pos += n;
	return v;
}

void lpt_put_bits(struct lpt_bits *b, uint32_t v, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		uint32_t k = b->pos + i;
		if ((v >> i) & 1u)
			b->p[k >> 3] |= (uint8_t)(1u << (k & 7));
	}
	b->pos += n;
}

static uint32_t fls32(uint32_t x) /* position of the highest set bit, 1-based; 0 for 0 */
{
	uint32_t r = 0;
	while (x) {
		r++;
		x >>= 1;
	}
	return r;
}

static uint32_t div_up(uint32_t a, uint32_t b)
{
	return (a + b - 1) / b;
}

/* ---- geometry (kernel do_calc_lpt_geom; the height allows for growth to
 * max_leb_cnt, the pnode count covers the current main area) ---- */

static int lpt_geometry(struct ubifs_lpt *lpt, const struct ubifs_fs *fs)
{
	lpt->leb_size = fs->leb_size;
	lpt->min_io_size = fs->min_io_size;
	lpt->main_first = fs->main_first;
	lpt->main_lebs = fs->main_lebs;
	lpt->leb_cnt = fs->leb_cnt;
	lpt->max_leb_cnt = fs->sb.max_leb_cnt;
	lpt->lpt_first = fs->lpt_first;
	lpt->lpt_last = fs->lpt_last;
	lpt->lpt_lebs = fs->lpt_last - fs->lpt_first + 1;
	lpt->big = !!(fs->sb.flags & UBIFS_FLG_BIGLPT);
	lpt->lsave_cnt = lpt->big ? fs->sb.lsave_cnt : 0;

	uint32_t max_pnodes = div_up(fs->main_lebs + lpt->max_leb_cnt - fs->leb_cnt, LPT_FANOUT);
	lpt->hght = 1;
	for (uint64_t n = LPT_FANOUT; n < max_pnodes; n <<= LPT_FANOUT_SHIFT)
		lpt->hght++;
	if (lpt->hght > LPT_MAX_HGHT)
		return -EINVAL;
	lpt->pnode_cnt = div_up(fs->main_lebs, LPT_FANOUT);
	lpt->lvl_cnt[0] = lpt->pnode_cnt;
	for (uint32_t l = 1; l <= lpt->hght; l++)
		lpt->lvl_cnt[l] = div_up(lpt->lvl_cnt[l - 1], LPT_FANOUT);

	lpt->space_bits = fls32(lpt->leb_size) - 3;
	lpt->lpt_lnum_bits = fls32(lpt->lpt_lebs);
	lpt->lpt_offs_bits = fls32(lpt->leb_size - 1);
	lpt->lpt_spc_bits = fls32(lpt->leb_size);
	lpt->pcnt_bits = fls32(div_up(lpt->max_leb_cnt, LPT_FANOUT) - 1);
	lpt->lnum_bits = fls32(lpt->max_leb_cnt - 1);
	uint32_t hdr = LPT_CRC_BITS + LPT_TYPE_BITS + (lpt->big ? lpt->pcnt_bits : 0);
	lpt->pnode_sz = (hdr + (lpt->space_bits * 2 + 1) * LPT_FANOUT + 7) / 8;
	lpt->nnode_sz = (hdr + (lpt->lpt_lnum_bits + lpt->lpt_offs_bits) * LPT_FANOUT + 7) / 8;
	/* 64-bit: a bad superblock must not wrap these round */
	uint64_t ltab_sz = (LPT_CRC_BITS + LPT_TYPE_BITS + (uint64_t)lpt->lpt_lebs * lpt->lpt_spc_bits * 2 + 7) / 8;
	uint64_t lsave_sz = (LPT_CRC_BITS + LPT_TYPE_BITS + (uint64_t)lpt->lnum_bits * lpt->lsave_cnt + 7) / 8;
	if (ltab_sz > lpt->leb_size || lsave_sz > lpt->leb_size)
		return -EINVAL;
	lpt->ltab_sz = (uint32_t)ltab_sz;
	lpt->lsave_sz = (uint32_t)lsave_sz;
	uint64_t sz = (uint64_t)lpt->pnode_cnt * lpt->pnode_sz + lpt->ltab_sz + (lpt->big ? lpt->lsave_sz : 0);
	for (uint32_t l = 1; l <= lpt->hght; l++) /* the kernel counts ceil(n/4) per level */
		sz += (uint64_t)lpt->lvl_cnt[l] * lpt->nnode_sz;
	/* wastage: up to one node per LEB at its end, and the last LEB's min. I/O */
	uint64_t per_leb = lpt->pnode_sz > lpt->nnode_sz ? lpt->pnode_sz : lpt->nnode_sz;
	uint64_t total = sz + per_leb, waste = per_leb;
	while (total > lpt->leb_size) {
		total += per_leb;
		total -= lpt->leb_size;
		waste += per_leb;
	}
	waste += (total + lpt->min_io_size - 1) / lpt->min_io_size * lpt->min_io_size - total;
	lpt->lpt_sz = sz + waste;
	lpt->check_lpt_free = lpt->big;

	/* kernel init_constants_early / _sb */
	lpt->dead_wm = (LPT_MIN_WRITE_SZ + lpt->min_io_size - 1) / lpt->min_io_size * lpt->min_io_size;
	lpt->dark_wm = (UBIFS_MAX_NODE_SZ + lpt->min_io_size - 1) / lpt->min_io_size * lpt->min_io_size;
	lpt->min_idx_node_sz = ubifs_align8(UBIFS_IDX_NODE_SZ + UBIFS_BRANCH_SZ + 8); /* key len 8 */
	lpt->half_leb_size = lpt->leb_size / 2;
	return 0;
}

uint32_t lpt_nnode_num(const struct ubifs_lpt *lpt, uint32_t parent_num, uint32_t parent_level, uint32_t iip)
{
	uint32_t shft = (lpt->hght - parent_level) * LPT_FANOUT_SHIFT;
	return (parent_num ^ (1u << shft)) | ((LPT_FANOUT + iip) << shft);
}

/* ---- packing ---- */

static void put_crc(uint8_t *buf, uint32_t sz)
{
	uint16_t crc = util_crc16(UTIL_CRC16_INIT, buf + LPT_CRC_BYTES, sz - LPT_CRC_BYTES);
	buf[0] = (uint8_t)crc;
	buf[1] = (uint8_t)(crc >> 8);
}

void lpt_pack_pnode(const struct ubifs_lpt *lpt, uint8_t *buf, uint32_t pnum)
{
	memset(buf, 0, lpt->pnode_sz);
	struct lpt_bits b = {buf + LPT_CRC_BYTES, 0};
	lpt_put_bits(&b, LPT_PNODE, LPT_TYPE_BITS);
	if (lpt->big)
		lpt_put_bits(&b, pnum, lpt->pcnt_bits);
	for (uint32_t i = 0; i < LPT_FANOUT; i++) {
		const struct ubifs_lprops *p = &lpt->lp[pnum * LPT_FANOUT + i];
		lpt_put_bits(&b, p->free >> 3, lpt->space_bits);
		lpt_put_bits(&b, p->dirty >> 3, lpt->space_bits);
		lpt_put_bits(&b, (p->flags & UBIFS_LPROPS_INDEX) ? 1 : 0, 1);
	}
	put_crc(buf, lpt->pnode_sz);
}

void lpt_pack_nnode(const struct ubifs_lpt *lpt, uint8_t *buf, const struct lpt_nnode *nn)
{
	memset(buf, 0, lpt->nnode_sz);
	struct lpt_bits b = {buf + LPT_CRC_BYTES, 0};
	lpt_put_bits(&b, LPT_NNODE, LPT_TYPE_BITS);
	if (lpt->big)
		lpt_put_bits(&b, nn->num, lpt->pcnt_bits);
	for (uint32_t i = 0; i < LPT_FANOUT; i++) {
		uint32_t lnum = nn->lnum[i] ? nn->lnum[i] : lpt->lpt_last + 1; /* "no child" */
		lpt_put_bits(&b, lnum - lpt->lpt_first, lpt->lpt_lnum_bits);
		lpt_put_bits(&b, nn->offs[i], lpt->lpt_offs_bits);
	}
	put_crc(buf, lpt->nnode_sz);
}

void lpt_pack_ltab(const struct ubifs_lpt *lpt, uint8_t *buf)
{
	memset(buf, 0, lpt->ltab_sz);
	struct lpt_bits b = {buf + LPT_CRC_BYTES, 0};
	lpt_put_bits(&b, LPT_LTAB, LPT_TYPE_BITS);
	for (uint32_t i = 0; i < lpt->lpt_lebs; i++) {
		lpt_put_bits(&b, lpt->ltab[i].free, lpt->lpt_spc_bits);
		lpt_put_bits(&b, lpt->ltab[i].dirty, lpt->lpt_spc_bits);
	}
	put_crc(buf, lpt->ltab_sz);
}

void lpt_pack_lsave(const struct ubifs_lpt *lpt, uint8_t *buf)
{
	memset(buf, 0, lpt->lsave_sz);
	struct lpt_bits b = {buf + LPT_CRC_BYTES, 0};
	lpt_put_bits(&b, LPT_LSAVE, LPT_TYPE_BITS);
	for (uint32_t i = 0; i < lpt->lsave_cnt; i++)
		lpt_put_bits(&b, lpt->lsave[i], lpt->lnum_bits);
	put_crc(buf, lpt->lsave_sz);
}

/* ---- reading ---- */

struct lpt_reader {
	struct ubifs_lpt *lpt;
	uint8_t **leb; /* LPT LEBs read once each */
};

static int read_lpt_bytes(struct lpt_reader *r, uint32_t lnum, uint32_t offs, uint32_t len, const char *what,
			  const uint8_t **out)
{
	struct ubifs_lpt *lpt = r->lpt;
	struct ubifs_fs *fs = lpt->fs;
	if (lnum < lpt->lpt_first || lnum > lpt->lpt_last || offs > lpt->leb_size || len > lpt->leb_size - offs)
		return util_err_set(&fs->err, -EINVAL, "LPT %s at LEB %u:%u (len %u) lies outside the LPT area (LEBs %u-%u)",
				    what, lnum, offs, len, lpt->lpt_first, lpt->lpt_last);
	uint8_t **slot = &r->leb[lnum - lpt->lpt_first];
	if (!*slot) {
		*slot = malloc(lpt->leb_size);
		if (!*slot)
			return util_err_set(&fs->err, -ENOMEM, "LPT: out of memory");
		int err = ubifs_leb_read(fs, lnum, 0, *slot, lpt->leb_size);
		if (err) {
			free(*slot);
			*slot = NULL;
			return err;
		}
	}
	*out = *slot + offs;
	return 0;
}

/* CRC and type of a node at lnum:offs; b is left after the type field */
static int check_lpt_node(struct lpt_reader *r, const uint8_t *node, uint32_t sz, uint32_t type, uint32_t lnum,
			  uint32_t offs, const char *what, struct lpt_bits *b)
{
	struct ubifs_fs *fs = r->lpt->fs;
	uint16_t stored = (uint16_t)(node[0] | (node[1] << 8));
	uint16_t calc = util_crc16(UTIL_CRC16_INIT, node + LPT_CRC_BYTES, sz - LPT_CRC_BYTES);
	b->p = (uint8_t *)(uintptr_t)(node + LPT_CRC_BYTES);
	b->pos = 0;
	uint32_t t = lpt_get_bits(b, LPT_TYPE_BITS);
	if (t != type)
		return util_err_set(&fs->err, -EINVAL, "LPT %s at LEB %u:%u: node type %u, expected %u", what, lnum, offs,
				    t, type);
	if (stored != calc && !fs->skip_crc)
		return util_err_set(&fs->err, -EINVAL, "LPT %s at LEB %u:%u: bad CRC-16 0x%04x (computed 0x%04x)", what,
				    lnum, offs, stored, calc);
	return 0;
}

static int read_pnode(struct lpt_reader *r, uint32_t pnum, uint32_t lnum, uint32_t offs)
{
	struct ubifs_lpt *lpt = r->lpt;
	struct ubifs_fs *fs = lpt->fs;
	struct ubifs_lprops *lp = &lpt->lp[pnum * LPT_FANOUT];
	for (uint32_t i = 0; i < LPT_FANOUT; i++) {
		uint32_t l = lpt->main_first + pnum * LPT_FANOUT + i;
		lp[i].lnum = l < lpt->leb_cnt ? l : 0;
	}
	if (lnum == 0) { /* never written: all its LEBs are empty */
		for (uint32_t i = 0; i < LPT_FANOUT; i++)
			lp[i].free = lpt->leb_size, lp[i].dirty = 0, lp[i].flags = 0;
		return 0;
	}
	const uint8_t *node;
	struct lpt_bits b;
	int err = read_lpt_bytes(r, lnum, offs, lpt->pnode_sz, "pnode", &node);
	if (!err)
		err = check_lpt_node(r, node, lpt->pnode_sz, LPT_PNODE, lnum, offs, "pnode", &b);
	if (err)
		return err;
	if (lpt->big) {
		uint32_t num = lpt_get_bits(&b, lpt->pcnt_bits);
		if (num != pnum)
			return util_err_set(&fs->err, -EINVAL, "LPT pnode at LEB %u:%u: number %u, expected %u", lnum,
					    offs, num, pnum);
	}
	for (uint32_t i = 0; i < LPT_FANOUT; i++) {
		uint32_t fr = lpt_get_bits(&b, lpt->space_bits) << 3;
		uint32_t di = lpt_get_bits(&b, lpt->space_bits) << 3;
		uint32_t idx = lpt_get_bits(&b, 1);
		if (fr > lpt->leb_size || fr % lpt->min_io_size || di > lpt->leb_size || fr + di > lpt->leb_size)
			return util_err_set(&fs->err, -EINVAL,
					    "LPT pnode at LEB %u:%u: LEB %u has free %u dirty %u (LEB size %u, min. I/O %u)",
					    lnum, offs, lpt->main_first + pnum * LPT_FANOUT + i, fr, di, lpt->leb_size,
					    lpt->min_io_size);
		lp[i].free = fr;
		lp[i].dirty = di;
		lp[i].flags = idx ? UBIFS_LPROPS_INDEX : 0;
	}
	return 0;
}

static int read_nnode(struct lpt_reader *r, uint32_t level, uint32_t col, uint32_t num, uint32_t lnum, uint32_t offs)
{
	struct ubifs_lpt *lpt = r->lpt;
	struct ubifs_fs *fs = lpt->fs;
	struct lpt_nnode *nn = &lpt->nn[level][col];
	nn->num = num;
	if (lnum != 0) {
		const uint8_t *node;
		struct lpt_bits b;
		int err = read_lpt_bytes(r, lnum, offs, lpt->nnode_sz, "nnode", &node);
		if (!err)
			err = check_lpt_node(r, node, lpt->nnode_sz, LPT_NNODE, lnum, offs, "nnode", &b);
		if (err)
			return err;
		if (lpt->big) {
			uint32_t n = lpt_get_bits(&b, lpt->pcnt_bits);
			if (n != num)
				return util_err_set(&fs->err, -EINVAL, "LPT nnode at LEB %u:%u: number %u, expected %u",
						    lnum, offs, n, num);
		}
		uint32_t max_offs = lpt->leb_size - (level == 1 ? lpt->pnode_sz : lpt->nnode_sz);
		for (uint32_t i = 0; i < LPT_FANOUT; i++) {
			uint32_t l = lpt_get_bits(&b, lpt->lpt_lnum_bits) + lpt->lpt_first;
			uint32_t o = lpt_get_bits(&b, lpt->lpt_offs_bits);
			if (l == lpt->lpt_last + 1)
				l = 0;
			if ((l == 0 && o != 0) || (l != 0 && (l > lpt->lpt_last || o > max_offs)))
				return util_err_set(&fs->err, -EINVAL,
						    "LPT nnode at LEB %u:%u: branch %u points to %u:%u, outside the LPT area",
						    lnum, offs, i, l, o);
			nn->lnum[i] = l;
			nn->offs[i] = o;
		}
	}
	for (uint32_t i = 0; i < LPT_FANOUT; i++) {
		uint32_t ccol = col * LPT_FANOUT + i;
		if (ccol >= lpt->lvl_cnt[level - 1])
			break;
		int err = level == 1 ? read_pnode(r, ccol, nn->lnum[i], nn->offs[i])
				     : read_nnode(r, level - 1, ccol, lpt_nnode_num(lpt, num, level, i), nn->lnum[i],
						  nn->offs[i]);
		if (err)
			return err;
	}
	return 0;
}

static int read_ltab_lsave(struct lpt_reader *r)
{
	struct ubifs_lpt *lpt = r->lpt;
	struct ubifs_fs *fs = lpt->fs;
	const uint8_t *node;
	struct lpt_bits b;
	uint32_t lnum = lpt->ltab_lnum, offs = lpt->ltab_offs;
	int err = read_lpt_bytes(r, lnum, offs, lpt->ltab_sz, "ltab", &node);
	if (!err)
		err = check_lpt_node(r, node, lpt->ltab_sz, LPT_LTAB, lnum, offs, "ltab", &b);
	if (err)
		return err;
	for (uint32_t i = 0; i < lpt->lpt_lebs; i++) {
		uint32_t fr = lpt_get_bits(&b, lpt->lpt_spc_bits);
		uint32_t di = lpt_get_bits(&b, lpt->lpt_spc_bits);
		if (fr > lpt->leb_size || di > lpt->leb_size || fr + di > lpt->leb_size)
			return util_err_set(&fs->err, -EINVAL, "LPT ltab at LEB %u:%u: LPT LEB %u has free %u dirty %u",
					    lnum, offs, lpt->lpt_first + i, fr, di);
		lpt->ltab[i].free = fr;
		lpt->ltab[i].dirty = di;
	}
	if (!lpt->big)
		return 0;
	lnum = lpt->lsave_lnum, offs = lpt->lsave_offs;
	uint32_t lsave_out_of_range = 0;
	err = read_lpt_bytes(r, lnum, offs, lpt->lsave_sz, "lsave", &node);
	if (!err)
		err = check_lpt_node(r, node, lpt->lsave_sz, LPT_LSAVE, lnum, offs, "lsave", &b);
	if (err)
		return err;
	for (uint32_t i = 0; i < lpt->lsave_cnt; i++) {
		uint32_t l = lpt_get_bits(&b, lpt->lnum_bits);
		/* mkfs.ubifs fills lsave up to max_leb_cnt; the kernel reads
		 * lsave (and refuses such entries) only on read-write mounts */
		if ((l < lpt->main_first || l >= lpt->leb_cnt) && fs->read_only) {
			lsave_out_of_range++;
			l = lpt->main_first;
		} else if (l < lpt->main_first || l >= lpt->leb_cnt)
			return util_err_set(&fs->err, -EINVAL, "LPT lsave at LEB %u:%u: entry %u is LEB %u, outside the main area",
					    lnum, offs, i, l);
		lpt->lsave[i] = l;
	}
	return 0;
}

int lpt_category(const struct ubifs_lpt *lpt, const struct ubifs_lprops *p)
{
	if (p->flags & UBIFS_LPROPS_TAKEN)
		return CAT_UNCAT;
	if (p->free == lpt->leb_size)
		return CAT_EMPTY;
	if (p->free + p->dirty == lpt->leb_size)
		return (p->flags & UBIFS_LPROPS_INDEX) ? CAT_FRDI_IDX : CAT_FREEABLE;
	if (p->flags & UBIFS_LPROPS_INDEX) {
		if (p->free + p->dirty >= lpt->min_idx_node_sz)
			return CAT_DIRTY_IDX;
	} else {
		if (p->dirty >= lpt->dead_wm && p->dirty > p->free)
			return CAT_DIRTY;
		if (p->free > 0)
			return CAT_FREE;
	}
	return CAT_UNCAT;
}

static uint64_t calc_dark(const struct ubifs_lpt *lpt, uint32_t spc)
{
	if (spc < lpt->dark_wm)
		return spc;
	if (spc - lpt->dark_wm < LPT_MIN_WRITE_SZ)
		return spc - LPT_MIN_WRITE_SZ;
	return lpt->dark_wm;
}

/* add (sign 1) or remove (sign -1) one LEB's share of the totals */
static void account(struct ubifs_lpt *lpt, const struct ubifs_lprops *p, int sign)
{
	struct ubifs_lp_stats *s = &lpt->lst;
	int64_t k = sign;
	if (!(p->flags & UBIFS_LPROPS_INDEX)) {
		uint32_t spc = p->free + p->dirty;
		if (spc < lpt->dead_wm)
			s->total_dead += (uint64_t)(k * spc);
		else
			s->total_dark += (uint64_t)(k * (int64_t)calc_dark(lpt, spc));
		s->total_used += (uint64_t)(k * (int64_t)(lpt->leb_size - spc));
	} else {
		s->idx_lebs += (uint32_t)k;
	}
	s->total_free += (uint64_t)(k * p->free);
	s->total_dirty += (uint64_t)(k * p->dirty);
	if (p->free == lpt->leb_size) {
		s->empty_lebs += (uint32_t)k;
		if (p->flags & UBIFS_LPROPS_TAKEN)
			s->taken_empty_lebs += (uint32_t)k;
	}
	if (lpt_category(lpt, p) == CAT_FREEABLE)
		lpt->freeable_cnt += (uint32_t)k;
}

void ubifs_lpt_close(struct ubifs_lpt *lpt)
{
	if (!lpt)
		return;
	free(lpt->lp);
	free(lpt->pdirty);
	for (uint32_t l = 0; l <= LPT_MAX_HGHT; l++)
		free(lpt->nn[l]);
	free(lpt->ltab);
	free(lpt->lsave);
	free(lpt);
}

int ubifs_lpt_open(struct ubifs_fs *fs, struct ubifs_lpt **out)
{
	*out = NULL;
	struct ubifs_lpt *lpt = calloc(1, sizeof(*lpt));
	if (!lpt)
		return util_err_set(&fs->err, -ENOMEM, "LPT: out of memory");
	lpt->fs = fs;
	if (lpt_geometry(lpt, fs)) {
		free(lpt);
		return util_err_set(&fs->err, -EINVAL,
				    "LPT: impossible geometry (%u LPT LEBs, max. %u LEBs, lsave %u entries): ltab or lsave larger than a LEB",
				    fs->lpt_last - fs->lpt_first + 1, fs->sb.max_leb_cnt, fs->sb.lsave_cnt);
	}
	/* kernel ubifs_calc_lpt_geom: the area must hold the tree twice */
	if (2 * lpt->lpt_sz > (uint64_t)lpt->lpt_lebs * lpt->leb_size) {
		uint32_t lebs = lpt->lpt_lebs;
		uint64_t need = lpt->lpt_sz;
		ubifs_lpt_close(lpt);
		return util_err_set(&fs->err, -EINVAL, "LPT: too few LPT LEBs (%u) for an LPT of %llu bytes (needs twice that)",
				    lebs, (unsigned long long)need);
	}
	const struct ubifs_mst_node *m = &fs->mst;
	lpt->root_lnum = m->lpt_lnum;
	lpt->root_offs = m->lpt_offs;
	lpt->nhead_lnum = m->nhead_lnum;
	lpt->nhead_offs = m->nhead_offs;
	lpt->ltab_lnum = m->ltab_lnum;
	lpt->ltab_offs = m->ltab_offs;
	lpt->lsave_lnum = m->lsave_lnum;
	lpt->lsave_offs = m->lsave_offs;
	lpt->lscan_lnum = m->lscan_lnum;
	int err = -ENOMEM;
	struct lpt_reader r = {lpt, calloc(lpt->lpt_lebs, sizeof(uint8_t *))};
	lpt->lp = calloc((size_t)lpt->pnode_cnt * LPT_FANOUT, sizeof(*lpt->lp));
	lpt->pdirty = calloc(lpt->pnode_cnt ? lpt->pnode_cnt : 1, 1);
	lpt->ltab = calloc(lpt->lpt_lebs, sizeof(*lpt->ltab));
	lpt->lsave = calloc(lpt->lsave_cnt ? lpt->lsave_cnt : 1, sizeof(uint32_t));
	if (!r.leb || !lpt->lp || !lpt->pdirty || !lpt->ltab || !lpt->lsave)
		goto fail_nomem;
	for (uint32_t l = 1; l <= lpt->hght; l++) {
		lpt->nn[l] = calloc(lpt->lvl_cnt[l], sizeof(struct lpt_nnode));
		if (!lpt->nn[l])
			goto fail_nomem;
	}
	if (lpt->root_offs > lpt->leb_size - lpt->nnode_sz) {
		err = util_err_set(&fs->err, -EINVAL, "LPT root nnode at LEB %u:%u does not fit the LEB", lpt->root_lnum,
				   lpt->root_offs);
		goto fail;
	}
	err = read_nnode(&r, lpt->hght, 0, 1, lpt->root_lnum, lpt->root_offs);
	if (!err)
		err = read_ltab_lsave(&r);
	if (err)
		goto fail;
	for (uint32_t i = 0; i < lpt->pnode_cnt * LPT_FANOUT; i++)
		if (lpt->lp[i].lnum)
			account(lpt, &lpt->lp[i], 1);
	goto done;
fail_nomem:
	err = util_err_set(&fs->err, -ENOMEM, "LPT: out of memory");
fail:
	ubifs_lpt_close(lpt);
	lpt = NULL;
done:
	if (r.leb)
		for (uint32_t i = 0; i < (lpt ? lpt->lpt_lebs : fs->lpt_last - fs->lpt_first + 1); i++)
			free(r.leb[i]);
	free(r.leb);
	*out = lpt;
	return err;
}

/* ---- lprops ---- */

static struct ubifs_lprops *lp_of(struct ubifs_lpt *lpt, uint32_t lnum)
{
	if (lnum < lpt->main_first || lnum >= lpt->leb_cnt) {
		util_err_set(&lpt->fs->err, -EINVAL, "LPT: LEB %u is not in the main area (%u-%u)", lnum,
			     lpt->main_first, lpt->leb_cnt - 1);
		return NULL;
	}
	return &lpt->lp[lnum - lpt->main_first];
}

void lpt_add_lpt_dirt(struct ubifs_lpt *lpt, uint32_t lnum, uint32_t bytes)
{
	if (!lnum || lnum < lpt->lpt_first || lnum > lpt->lpt_last)
		return;
	lpt->ltab[lnum - lpt->lpt_first].dirty += bytes;
}

/* Mark the pnode of lnum and its ancestors dirty; a node that gets dirty
 * leaves its on-flash copy obsolete (kernel dirty_cow_* + add_*_dirt). */
void lpt_mark_dirty(struct ubifs_lpt *lpt, uint32_t lnum)
{
	uint32_t pnum = (lnum - lpt->main_first) >> LPT_FANOUT_SHIFT;
	if (!lpt->pdirty[pnum]) {
		lpt->pdirty[pnum] = 1;
		lpt->dirty_pn++;
		const struct lpt_nnode *par = &lpt->nn[1][pnum >> LPT_FANOUT_SHIFT];
		lpt_add_lpt_dirt(lpt, par->lnum[pnum & 3], lpt->pnode_sz);
	}
	uint32_t col = pnum;
	for (uint32_t l = 1; l <= lpt->hght; l++) {
		col >>= LPT_FANOUT_SHIFT;
		struct lpt_nnode *nn = &lpt->nn[l][col];
		if (nn->dirty)
			break; /* its ancestors are dirty already */
		nn->dirty = 1;
		lpt->dirty_nn++;
		if (l < lpt->hght) {
			const struct lpt_nnode *par = &lpt->nn[l + 1][col >> LPT_FANOUT_SHIFT];
			lpt_add_lpt_dirt(lpt, par->lnum[col & 3], lpt->nnode_sz);
		} else {
			lpt_add_lpt_dirt(lpt, lpt->root_lnum, lpt->nnode_sz);
			if (!lpt->ltab_dirty) {
				lpt->ltab_dirty = 1;
				lpt_add_lpt_dirt(lpt, lpt->ltab_lnum, lpt->ltab_sz);
			}
		}
	}
}

int ubifs_lpt_lookup(struct ubifs_lpt *lpt, uint32_t lnum, struct ubifs_lprops *out)
{
	struct ubifs_lprops *p = lp_of(lpt, lnum);
	if (!p)
		return -EINVAL;
	*out = *p;
	out->flags &= UBIFS_LPROPS_TAKEN | UBIFS_LPROPS_INDEX;
	return 0;
}

/* kernel ubifs_change_lp: free/dirty/flags or UBIFS_LPT_NC */
static int change_lp(struct ubifs_lpt *lpt, struct ubifs_lprops *p, uint32_t free_, uint32_t dirty, uint32_t flags)
{
	uint32_t nf = free_ == UBIFS_LPT_NC ? p->free : ubifs_align8(free_);
	uint32_t nd = dirty == UBIFS_LPT_NC ? p->dirty : ubifs_align8(dirty);
	uint32_t nfl = flags == UBIFS_LPT_NC ? p->flags : (flags & (UBIFS_LPROPS_TAKEN | UBIFS_LPROPS_INDEX));
	/* dirty may exceed the LEB for a while during replay (kernel note; the
	 * commit refuses to write such a value), free never */
	if (nf > lpt->leb_size || nd > 0x7FFFFFFFu)
		return util_err_set(&lpt->fs->err, -EINVAL, "LPT: LEB %u cannot have free %u dirty %u (LEB size %u)",
				    p->lnum, nf, nd, lpt->leb_size);
	account(lpt, p, -1);
	p->free = nf;
	p->dirty = nd;
	p->flags = nfl;
	account(lpt, p, 1);
	lpt_mark_dirty(lpt, p->lnum);
	return 0;
}

int ubifs_lpt_set(struct ubifs_lpt *lpt, uint32_t lnum, uint32_t free_, uint32_t dirty, uint32_t flags)
{
	struct ubifs_lprops *p = lp_of(lpt, lnum);
	if (!p)
		return -EINVAL;
	return change_lp(lpt, p, free_, dirty, flags);
}

int ubifs_lpt_add_dirt(struct ubifs_lpt *lpt, uint32_t lnum, uint32_t dirty)
{
	struct ubifs_lprops *p = lp_of(lpt, lnum);
	if (!p)
		return -EINVAL;
	if (!dirty)
		return 0;
	return change_lp(lpt, p, UBIFS_LPT_NC, p->dirty + dirty, UBIFS_LPT_NC);
}

void ubifs_lpt_stats(const struct ubifs_lpt *lpt, struct ubifs_lp_stats *out)
{
	*out = lpt->lst;
}

int32_t ubifs_lpt_idx_gc_cnt(const struct ubifs_lpt *lpt)
{
	return lpt->idx_gc_cnt;
}

void ubifs_lpt_set_min_idx_lebs(struct ubifs_lpt *lpt, uint32_t min_idx_lebs)
{
	lpt->min_idx_lebs = min_idx_lebs;
}

void ubifs_lpt_add_idx_gc(struct ubifs_lpt *lpt, int32_t delta)
{
	lpt->idx_gc_cnt += delta;
}

uint32_t ubifs_lpt_freeable_cnt(const struct ubifs_lpt *lpt)
{
	return lpt->freeable_cnt;
}

int ubifs_lpt_mark_all_dirty(struct ubifs_lpt *lpt)
{
	/* kernel make_tree_dirty: pnode 0 and every pnode that was written */
	for (uint32_t i = 0; i < lpt->pnode_cnt; i++)
		if (i == 0 || lpt->nn[1][i >> LPT_FANOUT_SHIFT].lnum[i & 3])
			lpt_mark_dirty(lpt, lpt->main_first + i * LPT_FANOUT);
	return 0;
}

int ubifs_lpt_mark_dirty(struct ubifs_lpt *lpt, uint32_t lnum)
{
	if (!lp_of(lpt, lnum))
		return -EINVAL;
	lpt_mark_dirty(lpt, lnum);
	return 0;
}

/* ---- finding space (kernel find.c; the kernel's heaps and lists are
 * replaced by looking at every LEB, which the in-memory tree allows) ---- */

static int unmap_leb(struct ubifs_lpt *lpt, uint32_t lnum)
{
	struct ubi_vol_io *v = lpt->fs->vol;
	if (lpt->fs->read_only || !v->unmap)
		return 0;
	int err = v->unmap(v->ctx, lnum);
	if (err)
		return util_err_set(&lpt->fs->err, err, "LPT: cannot unmap LEB %u (error %d)", lnum, err);
	return 0;
}

/* first LEB of category cat (not taken), or the one with the most of key:
 * key 0 first found, 1 max free, 2 max free+dirty */
static struct ubifs_lprops *find_cat(struct ubifs_lpt *lpt, int cat, int key)
{
	struct ubifs_lprops *best = NULL;
	for (uint32_t i = 0; i < lpt->main_lebs; i++) {
		struct ubifs_lprops *p = &lpt->lp[i];
		if (lpt_category(lpt, p) != cat)
			continue;
		if (key == 0)
			return p;
		uint32_t v = key == 1 ? p->free : p->free + p->dirty;
		if (!best || v > (key == 1 ? best->free : best->free + best->dirty))
			best = p;
	}
	return best;
}

int ubifs_lpt_find_free(struct ubifs_lpt *lpt, uint32_t min_space, int squeeze, uint32_t *lnum_out,
			uint32_t *offs_out)
{
	struct ubifs_lp_stats *s = &lpt->lst;
	uint32_t rsvd = lpt->min_idx_lebs > s->idx_lebs ? lpt->min_idx_lebs - s->idx_lebs : 0;
	int64_t lebs = (int64_t)s->empty_lebs + lpt->freeable_cnt + lpt->idx_gc_cnt - s->taken_empty_lebs;
	/* an empty LEB may be used only when the index keeps enough of them */
	int pick_free = (int64_t)rsvd < lebs && s->empty_lebs > s->taken_empty_lebs;
	struct ubifs_lprops *p = NULL;
	if (squeeze) {
		p = find_cat(lpt, CAT_FREE, 1);
		if (p && p->free < min_space)
			p = NULL;
	}
	if (!p && pick_free)
		p = find_cat(lpt, CAT_EMPTY, 0);
	if (!p && !squeeze) {
		p = find_cat(lpt, CAT_FREE, 1);
		if (p && p->free < min_space)
			p = NULL;
	}
	for (uint32_t i = 0; !p && i < lpt->main_lebs; i++) {
		struct ubifs_lprops *q = &lpt->lp[i];
		if (!q->lnum || (q->flags & (UBIFS_LPROPS_TAKEN | UBIFS_LPROPS_INDEX)) || q->free < min_space)
			continue;
		if (!pick_free && q->free == lpt->leb_size)
			continue;
		if (q->free + q->dirty == lpt->leb_size && q->dirty > 0)
			continue; /* freeable: GC makes an empty LEB of it */
		p = q;
	}
	if (!p)
		return -ENOSPC;
	int err = change_lp(lpt, p, UBIFS_LPT_NC, UBIFS_LPT_NC, p->flags | UBIFS_LPROPS_TAKEN);
	if (err)
		return err;
	*lnum_out = p->lnum;
	*offs_out = lpt->leb_size - p->free;
	if (*offs_out == 0)
		return unmap_leb(lpt, p->lnum); /* may hold garbage from an unclean unmount */
	return 0;
}

int ubifs_lpt_find_for_index(struct ubifs_lpt *lpt, uint32_t *lnum_out)
{
	struct ubifs_lprops *p = find_cat(lpt, CAT_EMPTY, 0);
	if (!p)
		p = find_cat(lpt, CAT_FREEABLE, 0);
	if (!p)
		return -ENOSPC;
	uint32_t old_flags = p->flags;
	int err = change_lp(lpt, p, lpt->leb_size, 0, p->flags | UBIFS_LPROPS_TAKEN | UBIFS_LPROPS_INDEX);
	if (err)
		return err;
	err = unmap_leb(lpt, p->lnum);
	if (err) {
		change_lp(lpt, p, UBIFS_LPT_NC, UBIFS_LPT_NC, old_flags);
		return err;
	}
	*lnum_out = p->lnum;
	return 0;
}

int ubifs_lpt_find_dirty(struct ubifs_lpt *lpt, uint32_t min_space, int pick_free, struct ubifs_lprops *out)
{
	struct ubifs_lp_stats *s = &lpt->lst;
	int exclude_index = pick_free == 2;
	struct ubifs_lprops *p = NULL;
	if (pick_free) {
		int64_t lebs = (int64_t)s->empty_lebs + lpt->idx_gc_cnt + lpt->freeable_cnt - s->taken_empty_lebs;
		int64_t rsvd = 0;
		if (lpt->min_idx_lebs >= s->idx_lebs) {
			rsvd = lpt->min_idx_lebs - s->idx_lebs;
			exclude_index = 1;
		}
		if (rsvd < lebs) {
			p = find_cat(lpt, CAT_EMPTY, 0);
			if (!p)
				p = find_cat(lpt, CAT_FREEABLE, 0);
		} else {
			pick_free = 0;
		}
	} else {
		exclude_index = lpt->min_idx_lebs >= s->idx_lebs;
	}
	if (!p) {
		struct ubifs_lprops *ip = exclude_index ? NULL : find_cat(lpt, CAT_DIRTY_IDX, 2);
		if (ip && (ip->free + ip->dirty < min_space || ip->free + ip->dirty < lpt->half_leb_size))
			ip = NULL;
		struct ubifs_lprops *dp = find_cat(lpt, CAT_DIRTY, 2);
		if (dp && dp->free + dp->dirty < min_space)
			dp = NULL;
		p = dp;
		if (ip && (!dp || ip->free + ip->dirty >= dp->free + dp->dirty))
			p = ip;
	}
	for (uint32_t i = 0; !p && i < lpt->main_lebs; i++) {
		struct ubifs_lprops *q = &lpt->lp[i];
		if (!q->lnum || (q->flags & UBIFS_LPROPS_TAKEN) || q->free + q->dirty < min_space)
			continue;
		if (exclude_index && (q->flags & UBIFS_LPROPS_INDEX))
			continue;
		if (q->free + q->dirty == lpt->leb_size) {
			if (!pick_free)
				continue;
		} else if (q->dirty < lpt->dead_wm) {
			continue;
		}
		p = q;
	}
	if (!p)
		return -ENOSPC;
	int err = change_lp(lpt, p, UBIFS_LPT_NC, UBIFS_LPT_NC, p->flags | UBIFS_LPROPS_TAKEN);
	if (err)
		return err;
	return ubifs_lpt_lookup(lpt, p->lnum, out);
}

int ubifs_lpt_find_frdi_idx(struct ubifs_lpt *lpt, uint32_t *lnum_out)
{
	struct ubifs_lprops *p = find_cat(lpt, CAT_FRDI_IDX, 0);
	if (!p)
		return -ENOSPC;
	*lnum_out = p->lnum;
	return 0;
}

void ubifs_lpt_geometry(const struct ubifs_lpt *lpt, struct ubifs_lpt_geom *g)
{
	g->big_model = lpt->big;
	g->hght = lpt->hght;
	g->pnode_cnt = lpt->pnode_cnt;
	g->nnode_cnt = 0;
	for (uint32_t l = 1; l <= lpt->hght; l++)
		g->nnode_cnt += lpt->lvl_cnt[l];
	g->pnode_sz = lpt->pnode_sz;
	g->nnode_sz = lpt->nnode_sz;
	g->ltab_sz = lpt->ltab_sz;
	g->lsave_sz = lpt->lsave_sz;
	g->lsave_cnt = lpt->lsave_cnt;
	g->dead_wm = lpt->dead_wm;
	g->dark_wm = lpt->dark_wm;
}

int ubifs_lpt_ltab(const struct ubifs_lpt *lpt, uint32_t lnum, uint32_t *free_out, uint32_t *dirty_out)
{
	if (lnum < lpt->lpt_first || lnum > lpt->lpt_last)
		return -EINVAL;
	*free_out = lpt->ltab[lnum - lpt->lpt_first].free;
	*dirty_out = lpt->ltab[lnum - lpt->lpt_first].dirty;
	return 0;
}

int ubifs_lpt_check_ihead(struct ubifs_lpt *lpt, uint32_t ihead_lnum, uint32_t ihead_offs)
{
	struct ubifs_lprops *p = lp_of(lpt, ihead_lnum);
	if (!p)
		return -EINVAL;
	if (ihead_offs != lpt->leb_size - p->free)
		return util_err_set(&lpt->fs->err, -EINVAL,
				    "bad index head LEB %u:%u: the LPT says %u bytes are free there (head would be at %u)",
				    ihead_lnum, ihead_offs, p->free, lpt->leb_size - p->free);
	return change_lp(lpt, p, UBIFS_LPT_NC, UBIFS_LPT_NC, p->flags | UBIFS_LPROPS_TAKEN);
}

/* for ubifs_lpt_create.c (a new LPT for a fresh file system) */
int lpt_calc_geometry(struct ubifs_lpt *lpt, const struct ubifs_fs *fs)
{
	return lpt_geometry(lpt, fs);
}

void lpt_account_one(struct ubifs_lpt *lpt, const struct ubifs_lprops *p)
{
	account(lpt, p, 1);
}

static uint32_t lpt_node_len(const struct ubifs_lpt *lpt, uint32_t type)
{
	switch (type) {
	case LPT_PNODE:
		return lpt->pnode_sz;
	case LPT_NNODE:
		return lpt->nnode_sz;
	case LPT_LTAB:
		return lpt->ltab_sz;
	case LPT_LSAVE:
		return lpt->big ? lpt->lsave_sz : 0; /* the small model has none */
	}
	return 0;
}

/* the kernel's test: type, length within the LEB, CRC */
static int lpt_raw_node(const struct ubifs_lpt *lpt, const uint8_t *leb, uint32_t offs, uint32_t *len)
{
	uint32_t left = lpt->leb_size - offs;
	if (offs >= lpt->leb_size || left < LPT_CRC_BYTES + 1)
		return 0;
	const uint8_t *p = leb + offs;
	uint32_t type = p[LPT_CRC_BYTES] & 15u;
	uint32_t nl = lpt_node_len(lpt, type);
	if (!nl || nl > left)
		return 0;
	uint16_t crc = (uint16_t)(p[0] | (p[1] << 8));
	if (crc != util_crc16(UTIL_CRC16_INIT, p + LPT_CRC_BYTES, nl - LPT_CRC_BYTES))
		return 0;
	*len = nl;
	return (int)type + 1;
}

int lpt_node_at(const struct ubifs_lpt *lpt, const uint8_t *leb, uint32_t offs, uint32_t *len)
{
	int t = lpt_raw_node(lpt, leb, offs, len);
	if (!t)
		return 0;
	uint32_t next = offs + *len, l2;
	if (next >= lpt->leb_size || lpt_raw_node(lpt, leb, next, &l2))
		return t;
	uint32_t io = lpt->min_io_size ? lpt->min_io_size : 1;
	uint32_t bound = (next + io - 1) / io * io;
	if (bound == next) /* aligned: a next run would start with a node */
		return leb[next] == 0xFF ? t : 0;
	for (uint32_t i = next; i < bound && i < lpt->leb_size; i++)
		if (leb[i] != 0xFF)
			return 0; /* what follows is neither a node nor padding */
	return t;
}
