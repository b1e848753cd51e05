/* ubifs_recovery — what the kernel does about an unclean unmount, read-only
 * style (nothing is written back):
 *  - the master node from the two master LEBs when they disagree (§10.3);
 *  - the last bud of each journal head and the log head: a torn tail after
 *    the last good node is cut when it looks like a power cut (corruption
 *    only in the last max_write_size unit written, then 0xFF); corruption
 *    anywhere else is an error;
 *  - inode sizes smaller than the data the journal holds (fixed in memory).
 * Rule source: the kernel's recovery.c (facts only). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ubifs/ubifs_priv.h"
#include "ubifs/ubifs_recovery_write.h"
#include "util/util_endian.h"

static uint32_t align_up(uint32_t x, uint32_t a)
{
	return (x + a - 1) / a * a;
}

static int is_empty_from(const uint8_t *leb, uint32_t from, uint32_t leb_size)
{
	return from >= leb_size || ubifs_is_empty(leb + from, leb_size - from);
}

/* Everything after the max_write_size unit holding offs is empty. */
static int is_last_write(const struct ubifs_fs *fs, const uint8_t *leb, uint32_t offs)
{
	return is_empty_from(leb, align_up(offs + 1, fs->max_write_size), fs->leb_size);
}

/* A corrupt node at offs is the last thing written (power cut mid-write). */
static int no_more_nodes(const struct ubifs_fs *fs, const uint8_t *leb, uint32_t offs)
{
	uint32_t len = fs->leb_size - offs;
	if (is_empty_from(leb, align_up(offs + UBIFS_CH_SZ, fs->max_write_size), fs->leb_size))
		return 1;
	/* not empty after the header: the header must be intact (only the CRC bad) */
	if (ubifs_check_node(leb + offs, len, offs, fs->leb_size, fs->fanout) != UBIFS_CHK_BAD_CRC)
		return 0;
	uint32_t dlen = get_le32(leb + offs + 16);
	return is_empty_from(leb, align_up(offs + dlen, fs->max_write_size), fs->leb_size);
}

static void drop_last_group(struct ubifs_sleb *sleb, uint32_t *offs)
{
	while (sleb->nodes_cnt > 0) {
		struct ubifs_snode *s = &sleb->nodes[sleb->nodes_cnt - 1];
		if (s->group_type != UBIFS_IN_NODE_GROUP)
			break;
		*offs = s->offs;
		sleb->nodes_cnt--;
	}
}

static void drop_last_node(struct ubifs_sleb *sleb, uint32_t *offs)
{
	if (sleb->nodes_cnt > 0) {
		*offs = sleb->nodes[sleb->nodes_cnt - 1].offs;
		sleb->nodes_cnt--;
	}
}

int ubifs_recover_leb(struct ubifs_fs *fs, uint32_t lnum, uint32_t offs, struct ubifs_sleb *sleb, int jhead)
{
	memset(sleb, 0, sizeof(*sleb));
	sleb->lnum = lnum;
	sleb->buf = fs->sbuf;
	uint32_t start = offs;
	int err = ubifs_leb_read(fs, lnum, offs, fs->sbuf + offs, fs->leb_size - offs);
	if (err)
		return err;
	const uint8_t *leb = fs->sbuf;
	int ret = UBIFS_SCANNED_EMPTY_SPACE;
	while (fs->leb_size - offs >= 8) {
		ret = ubifs_scan_a_node(fs, leb + offs, fs->leb_size - offs, offs);
		if (ret == UBIFS_SCANNED_A_NODE) {
			err = ubifs_sleb_add(sleb, leb + offs, offs);
			if (err)
				goto fail;
			offs += ubifs_align8(get_le32(leb + offs + 16));
		} else if (ret > 0) {
			offs += (uint32_t)ret;
		} else {
			break;
		}
	}
	const char *why = NULL;
	uint32_t at = offs;
	if (ret == UBIFS_SCANNED_GARBAGE || ret == UBIFS_SCANNED_A_BAD_PAD_NODE) {
		if (!is_last_write(fs, leb, offs))
			why = ret == UBIFS_SCANNED_GARBAGE ? "garbage followed by more data" : "bad padding node followed by more data";
	} else if (ret == UBIFS_SCANNED_A_CORRUPT_NODE) {
		if (!no_more_nodes(fs, leb, offs))
			why = "corrupt node followed by more data";
	} else if (offs < fs->leb_size && !is_empty_from(leb, offs, fs->leb_size)) {
		if (!is_last_write(fs, leb, offs)) {
			while (at < fs->leb_size && leb[at] == 0xFF)
				at++;
			why = "corrupt empty space";
		}
	}
	if (why) {
		err = util_err_set(&fs->err, -EUCLEAN,
				   "LEB %u:%u: %s (not a power-cut pattern, cannot recover; LEB scanned from offset %u)",
				   lnum, at, why, start);
		goto fail;
	}
	/* something was cut: a bad spot, or nodes dropped below */
	int cut = ret == UBIFS_SCANNED_GARBAGE || ret == UBIFS_SCANNED_A_BAD_PAD_NODE ||
		  ret == UBIFS_SCANNED_A_CORRUPT_NODE ||
		  (ret == UBIFS_SCANNED_EMPTY_SPACE && !is_empty_from(leb, offs, fs->leb_size));
	uint32_t nodes_before = sleb->nodes_cnt;
	uint32_t min_io_unit = offs / fs->min_io_size * fs->min_io_size;
	if (jhead != UBIFS_GC_HEAD)
		drop_last_group(sleb, &offs); /* an incomplete group is dropped as a whole */
	else
		while (offs > min_io_unit && sleb->nodes_cnt > 0)
			drop_last_node(sleb, &offs);
	sleb->endpt = align_up(offs, fs->min_io_size);
	if (sleb->endpt > fs->leb_size)
		sleb->endpt = fs->leb_size;
	if (cut || sleb->nodes_cnt != nodes_before)
		fs->recovered_lebs++;
	if (!fs->read_only) {
		/* read-write: the LEB is rewritten with its good part (kernel fix_unclean_leb) */
		err = ubifs_rcvry_fix_leb(fs, sleb, start);
		if (err)
			goto fail;
	}
	return 0;
fail:
	ubifs_sleb_free(sleb);
	return err;
}

/* 1 and *sqnum when log LEB lnum starts with a good commit start or
 * reference node, 0 when not, <0 on a read error */
static int log_first_sqnum(struct ubifs_fs *fs, uint32_t lnum, uint64_t *sqnum)
{
	/* the larger of the two node kinds is read, and checked whole (CRC) */
	uint8_t node[UBIFS_REF_NODE_SZ];
	if (fs->leb_size < sizeof(node))
		return 0;
	int err = ubifs_leb_read(fs, lnum, 0, node, sizeof(node));
	if (err)
		return err;
	uint8_t type = node[20];
	uint32_t len = get_le32(node + 16);
	if ((type != UBIFS_CS_NODE && type != UBIFS_REF_NODE) || len > sizeof(node))
		return 0;
	if (ubifs_check_node(node, sizeof(node), 0, fs->leb_size, fs->fanout) != UBIFS_CHK_OK)
		return 0;
	*sqnum = get_le64(node + 8);
	return 1;
}

int ubifs_log_leb_starts_log(struct ubifs_fs *fs, uint32_t lnum, uint64_t newer_than)
{
	uint64_t sq = 0;
	int got = log_first_sqnum(fs, lnum, &sq);
	return got <= 0 ? got : sq > newer_than;
}

int ubifs_log_leb_is_stale(struct ubifs_fs *fs, uint32_t lnum, uint64_t newer_than)
{
	uint64_t sq = 0;
	int got = log_first_sqnum(fs, lnum, &sq);
	if (got)
		return got < 0 ? got : sq < newer_than;
	/* A log LEB is written from its start: one whose first unit is empty
	 * holds nothing of the log, whatever its later pages hold (an erase
	 * cut can erase the first page and leave the next) */
	uint8_t *unit = malloc(fs->min_io_size);
	if (!unit)
		return -ENOMEM;
	int err = ubifs_leb_read(fs, lnum, 0, unit, fs->min_io_size);
	int empty = !err && ubifs_is_empty(unit, fs->min_io_size);
	free(unit);
	return err ? err : empty;
}

int ubifs_recover_log_leb(struct ubifs_fs *fs, uint32_t lnum, uint32_t offs, struct ubifs_sleb *sleb)
{
	uint32_t next = lnum + 1;
	if (next > fs->log_last)
		next = fs->log_first;
	if (next != fs->ltail_lnum) {
		/* only the end of the log can be torn: the next log LEB must be
		 * empty or out of date */
		struct ubifs_sleb nsleb;
		int err = 0;
		if (fs->cs_sqnum) {
			/* a LEB after this one written before it (an older round of
			 * the ring, or an earlier recovery's cut commit start, come
			 * back after a cut): whatever follows its first node does not
			 * matter */
			uint64_t newer_than = fs->cs_sqnum, here = 0;
			err = log_first_sqnum(fs, lnum, &here);
			if (err < 0)
				return err;
			if (err && here > newer_than)
				newer_than = here;
			err = ubifs_log_leb_is_stale(fs, next, newer_than);
			if (err < 0)
				return err;
			if (err)
				return ubifs_recover_leb(fs, lnum, offs, sleb, -1);
		}
		err = ubifs_scan(fs, next, 0, &nsleb);
		if (err)
			return err;
		if (nsleb.nodes_cnt) {
			uint64_t sq = nsleb.nodes[0].sqnum;
			uint64_t cs_sqnum = fs->cs_sqnum;
			ubifs_sleb_free(&nsleb);
			if (cs_sqnum == 0) {
				/* the corrupt LEB is the tail: take the CS node's sqnum from it */
				uint8_t cs[UBIFS_CS_NODE_SZ];
				err = ubifs_leb_read(fs, lnum, offs, cs, sizeof(cs));
				if (err)
					return err;
				if (ubifs_check_node(cs, sizeof(cs), offs, fs->leb_size, fs->fanout) != UBIFS_CHK_OK ||
				    cs[20] != UBIFS_CS_NODE)
					return util_err_set(&fs->err, -EUCLEAN, "log LEB %u:%u: no commit start node", lnum,
							    offs);
				cs_sqnum = get_le64(cs + 8);
			}
			if (sq > cs_sqnum)
				return util_err_set(&fs->err, -EUCLEAN, "unrecoverable log corruption in LEB %u", lnum);
		} else {
			ubifs_sleb_free(&nsleb);
		}
	}
	/* the scan above used sbuf: rescan this LEB */
	return ubifs_recover_leb(fs, lnum, offs, sleb, -1);
}

/* ---- master ---- */

/* The last valid master node of a master LEB (kernel's get_master_node). */
static int get_master_node(struct ubifs_fs *fs, uint32_t lnum, uint8_t *leb, int *mst_offs, int *cor)
{
	const uint32_t sz = align_up(UBIFS_MST_NODE_SZ, fs->min_io_size);
	*mst_offs = -1;
	*cor = 0;
	int err = ubifs_leb_read(fs, lnum, 0, leb, fs->leb_size);
	if (err)
		return err;
	uint32_t offs = 0;
	while (offs + UBIFS_MST_NODE_SZ <= fs->leb_size && get_le32(leb + offs) == UBIFS_NODE_MAGIC)
		offs += sz;
	if (offs) {
		offs -= sz;
		int ret = ubifs_scan_a_node(fs, leb + offs, fs->leb_size - offs, offs);
		if (ret != UBIFS_SCANNED_A_NODE && offs) {
			/* one damaged slot (the one being written) is allowed */
			offs -= sz;
			ret = ubifs_scan_a_node(fs, leb + offs, fs->leb_size - offs, offs);
			if (ret != UBIFS_SCANNED_A_NODE)
				goto bad;
		}
		if (ret == UBIFS_SCANNED_A_NODE) {
			if (leb[offs + 20] != UBIFS_MST_NODE)
				goto bad;
			*mst_offs = (int)offs;
			offs += sz;
		}
	}
	if (offs < fs->leb_size) {
		uint32_t n = fs->leb_size - offs < sz ? fs->leb_size - offs : sz;
		if (!ubifs_is_empty(leb + offs, n))
			*cor = 1;
		offs += sz;
	}
	if (offs < fs->leb_size && !ubifs_is_empty(leb + offs, fs->leb_size - offs))
		goto bad;
	return 0;
bad:
	return util_err_set(&fs->err, -EINVAL, "master LEB %u: unrecoverable corruption near offset %u", lnum, offs);
}

int ubifs_recover_master(struct ubifs_fs *fs, uint8_t *mst_out)
{
	const uint32_t sz = align_up(UBIFS_MST_NODE_SZ, fs->min_io_size);
	uint8_t *buf2 = malloc(fs->leb_size);
	if (!buf2)
		return -ENOMEM;
	int o1, o2, c1, c2;
	int err = get_master_node(fs, UBIFS_MST_LNUM, fs->sbuf, &o1, &c1);
	if (!err)
		err = get_master_node(fs, UBIFS_MST_LNUM + 1, buf2, &o2, &c2);
	if (err)
		goto out;
	const uint8_t *m1 = o1 >= 0 ? fs->sbuf + o1 : NULL, *m2 = o2 >= 0 ? buf2 + o2 : NULL, *mst = NULL;
	if (m1) {
		if ((get_le32(m1 + 40) & UBIFS_MST_RCVRY) && o1 == 0 && !c1)
			mst = m1;
		else if (m2) {
			if (o1 == o2) {
				if (!ubifs_mst_cmp(m1, m2))
					mst = m1;
			} else if ((uint32_t)o2 + sz == (uint32_t)o1) {
				if (!c1)
					mst = m1;
			} else if (o1 == 0 && fs->leb_size - (uint32_t)o2 - sz < sz) {
				if (!c1)
					mst = m1;
			}
		} else if (o1 == 0 && !c1) {
			mst = m1;
		}
	} else if (m2 && (uint32_t)o2 + sz + sz > fs->leb_size) {
		mst = m2;
	}
	if (!mst) {
		err = util_err_set(&fs->err, -EINVAL,
				   "no valid master node: LEB 1 %s%s, LEB 2 %s%s (the two copies cannot be reconciled)",
				   m1 ? "has one" : "has none", c1 ? " and corruption" : "", m2 ? "has one" : "has none",
				   c2 ? " and corruption" : "");
		goto out;
	}
	memcpy(mst_out, mst, UBIFS_MST_NODE_SZ);
	fs->mst_lnum = mst == m1 ? UBIFS_MST_LNUM : UBIFS_MST_LNUM + 1;
	fs->mst_offs = (uint32_t)(mst == m1 ? o1 : o2);
out:
	free(buf2);
	return err;
}

/* ---- inode sizes (kernel's size tree, read-only variant) ---- */

static struct ubifs_size_fix *find_fix(const struct ubifs_fs *fs, uint32_t inum, size_t *ins)
{
	size_t lo = 0, hi = fs->size_fix_cnt;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (fs->size_fix[mid].inum < inum)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (ins)
		*ins = lo;
	if (lo < fs->size_fix_cnt && fs->size_fix[lo].inum == inum)
		return &fs->size_fix[lo];
	return NULL;
}

static int add_fix(struct ubifs_fs *fs, uint32_t inum, uint64_t i_size, uint64_t d_size, int exists)
{
	size_t at;
	if (find_fix(fs, inum, &at))
		return 0;
	if (fs->size_fix_cnt == fs->size_fix_cap) {
		size_t cap = fs->size_fix_cap ? fs->size_fix_cap * 2 : 64;
		struct ubifs_size_fix *n = realloc(fs->size_fix, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		fs->size_fix = n;
		fs->size_fix_cap = cap;
	}
	memmove(&fs->size_fix[at + 1], &fs->size_fix[at], (fs->size_fix_cnt - at) * sizeof(*fs->size_fix));
	fs->size_fix[at] = (struct ubifs_size_fix){inum, exists, i_size, d_size};
	fs->size_fix_cnt++;
	return 0;
}

static void remove_fix(struct ubifs_fs *fs, uint32_t inum)
{
	size_t at;
	if (!find_fix(fs, inum, &at))
		return;
	memmove(&fs->size_fix[at], &fs->size_fix[at + 1], (fs->size_fix_cnt - at - 1) * sizeof(*fs->size_fix));
	fs->size_fix_cnt--;
}

int ubifs_recover_size_accum(struct ubifs_fs *fs, const struct ubifs_key *key, int deletion, uint64_t new_size)
{
	struct ubifs_size_fix *e = find_fix(fs, key->inum, NULL);
	switch (ubifs_key_type(key)) {
	case UBIFS_INO_KEY:
		if (deletion)
			remove_fix(fs, key->inum);
		else if (e) {
			e->i_size = new_size;
			e->exists = 1;
		} else
			return add_fix(fs, key->inum, new_size, 0, 1);
		break;
	case UBIFS_DATA_KEY:
		if (e) {
			if (new_size > e->d_size)
				e->d_size = new_size;
		} else
			return add_fix(fs, key->inum, 0, new_size, 0);
		break;
	case UBIFS_TRUN_KEY:
		if (e)
			e->d_size = new_size;
		break;
	}
	return 0;
}

int ubifs_recover_size(struct ubifs_fs *fs)
{
	size_t out = 0;
	for (size_t i = 0; i < fs->size_fix_cnt; i++) {
		struct ubifs_size_fix e = fs->size_fix[i];
		if (!e.exists) {
			struct ubifs_key k = ubifs_key_make(e.inum, UBIFS_INO_KEY, 0);
			uint32_t len;
			int err = ubifs_tnc_lookup(fs, &k, fs->nbuf, &len);
			if (err && err != -ENOENT)
				return err;
			if (err == -ENOENT) {
				/* data without an inode: drop it, as the kernel does */
				err = ubifs_tnc_remove_ino(fs, e.inum);
				if (err)
					return err;
				continue;
			}
			e.exists = 1;
			e.i_size = get_le64(fs->nbuf + 48);
		}
		if (e.i_size < e.d_size)
			fs->size_fix[out++] = e; /* keep: reads see d_size */
	}
	fs->size_fix_cnt = out;
	return 0;
}

void ubifs_size_fix_apply(const struct ubifs_fs *fs, uint64_t inum, uint64_t *size)
{
	if (inum > UBIFS_MAX_INUM)
		return;
	const struct ubifs_size_fix *e = find_fix(fs, (uint32_t)inum, NULL);
	if (e && *size < e->d_size)
		*size = e->d_size;
}
