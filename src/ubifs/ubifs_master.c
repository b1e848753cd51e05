/* ubifs_master — choosing the master node from LEBs 1 and 2 (the last node
 * of each, equal in both; otherwise the kernel's master recovery) and the
 * kernel's checks on it (spec §10). */
#include <errno.h>
#include <string.h>

#include "ubifs/ubifs_priv.h"
#include "util/util_endian.h"

/* Bytes 24..295 and 360..511 must be equal in the two copies (the HMAC
 * area and the header differ). */
int ubifs_mst_cmp(const uint8_t *a, const uint8_t *b)
{
	return memcmp(a + 24, b + 24, 296 - 24) || memcmp(a + 360, b + 360, UBIFS_MST_NODE_SZ - 360);
}

/* 0: found; -EUCLEAN: the copies disagree or are damaged (try recovery). */
static int scan_for_master(struct ubifs_fs *fs, uint8_t *mst, uint32_t *offs_out)
{
	struct ubifs_sleb sleb;
	uint32_t offs = 0;
	int err = ubifs_scan(fs, UBIFS_MST_LNUM, 0, &sleb);
	if (err)
		return err == -EUCLEAN ? -EUCLEAN : err;
	uint32_t cnt = sleb.nodes_cnt;
	if (cnt > 0) {
		struct ubifs_snode s = sleb.nodes[cnt - 1];
		if (s.type != UBIFS_MST_NODE) {
			ubifs_sleb_free(&sleb);
			return util_err_set(&fs->err, -EINVAL, "unexpected %s node in master LEB %u:%u",
					    ubifs_node_type_name(s.type), UBIFS_MST_LNUM, s.offs);
		}
		memcpy(mst, sleb.buf + s.offs, UBIFS_MST_NODE_SZ);
		offs = s.offs;
	}
	ubifs_sleb_free(&sleb);
	err = ubifs_scan(fs, UBIFS_MST_LNUM + 1, 0, &sleb);
	if (err)
		return err == -EUCLEAN ? -EUCLEAN : err;
	err = -EUCLEAN;
	if (sleb.nodes_cnt == cnt && cnt > 0) {
		struct ubifs_snode *s = &sleb.nodes[cnt - 1];
		if (s->type != UBIFS_MST_NODE) {
			err = util_err_set(&fs->err, -EINVAL, "unexpected %s node in master LEB %u:%u",
					   ubifs_node_type_name(s->type), UBIFS_MST_LNUM + 1, s->offs);
		} else if (s->offs == offs && !ubifs_mst_cmp(mst, sleb.buf + s->offs)) {
			err = 0;
		}
	}
	ubifs_sleb_free(&sleb);
	*offs_out = offs;
	return err;
}

static int validate_master(struct ubifs_fs *fs)
{
	const struct ubifs_mst_node *m = &fs->mst;
	uint64_t main_sz = (uint64_t)fs->main_lebs * fs->leb_size;
	const char *what = NULL;
	struct ubifs_len_range r;
	ubifs_idx_len_range(fs->fanout, fs->hash_len, fs->leb_size, &r);
	if (m->sqnum >= UBIFS_SQNUM_WATERMARK)
		what = "sqnum beyond the watermark (file system end of life)";
	else if (m->cmt_no >= m->sqnum)
		what = "commit number not below the sqnum";
	else if (m->highest_inum >= UBIFS_INUM_WATERMARK)
		what = "highest inode number beyond the watermark";
	else if (m->log_lnum < fs->log_first || m->log_lnum > fs->log_last)
		what = "log LEB outside the log area";
	else if (m->root_lnum < fs->main_first || m->root_lnum >= fs->leb_cnt || m->root_offs >= fs->leb_size ||
		 (m->root_offs & 7) || m->root_len < r.min || m->root_len > r.max ||
		 (uint64_t)m->root_offs + m->root_len > fs->leb_size)
		what = "bad index root position";
	else if (m->gc_lnum < fs->main_first || m->gc_lnum >= fs->leb_cnt)
		what = "GC LEB outside the main area";
	else if (m->ihead_lnum < fs->main_first || m->ihead_lnum >= fs->leb_cnt || m->ihead_offs % fs->min_io_size ||
		 m->ihead_offs > fs->leb_size || (m->ihead_offs & 7))
		what = "bad index head position";
	else if (m->index_size >= main_sz || (m->index_size & 7))
		what = "bad index size";
	else if (m->lpt_lnum < fs->lpt_first || m->lpt_lnum > fs->lpt_last || m->lpt_offs >= fs->leb_size ||
		 m->nhead_lnum < fs->lpt_first || m->nhead_lnum > fs->lpt_last || m->nhead_offs > fs->leb_size ||
		 m->nhead_offs % fs->min_io_size || m->ltab_lnum < fs->lpt_first || m->ltab_lnum > fs->lpt_last ||
		 m->ltab_offs >= fs->leb_size ||
		 ((fs->sb.flags & UBIFS_FLG_BIGLPT) &&
		  (m->lsave_lnum < fs->lpt_first || m->lsave_lnum > fs->lpt_last || m->lsave_offs >= fs->leb_size)))
		what = "bad LPT positions";
	else if (m->lscan_lnum < fs->main_first || m->lscan_lnum >= fs->leb_cnt)
		what = "bad LPT scan LEB";
	else if ((int32_t)m->empty_lebs < 0 || m->empty_lebs > fs->main_lebs - 2)
		what = "bad empty LEB count";
	else if ((int32_t)m->idx_lebs < 0 || m->idx_lebs > fs->main_lebs - 1)
		what = "bad index LEB count";
	else if ((int64_t)m->total_free < 0 || (int64_t)m->total_dirty < 0 || (int64_t)m->total_used < 0 ||
		 (int64_t)m->total_dead < 0 || (int64_t)m->total_dark < 0 || (m->total_free & 7) ||
		 (m->total_dirty & 7) || (m->total_used & 7) || (m->total_dead & 7) || (m->total_dark & 7) ||
		 m->total_free > main_sz || m->total_dirty > main_sz || m->total_used > main_sz ||
		 m->total_free + m->total_dirty + m->total_used > main_sz ||
		 m->total_dead + m->total_dark + m->total_used + m->index_size > main_sz ||
		 m->total_dead > m->total_free + m->total_dirty || m->total_dark > m->total_free + m->total_dirty)
		what = "bad space totals";
	if (what)
		return util_err_set(&fs->err, -EINVAL, "bad master node at LEB %u:%u: %s", fs->mst_lnum, fs->mst_offs,
				    what);
	return 0;
}

int ubifs_master_read(struct ubifs_fs *fs)
{
	uint8_t mst[UBIFS_MST_NODE_SZ];
	uint32_t offs = 0;
	int err = scan_for_master(fs, mst, &offs);
	if (err == -EUCLEAN) {
		err = ubifs_recover_master(fs, mst);
		if (err)
			return err;
		fs->mst_recovered = 1;
	} else if (err) {
		return err;
	} else {
		fs->mst_lnum = UBIFS_MST_LNUM;
		fs->mst_offs = offs;
	}
	ubifs_mst_unpack(mst, &fs->mst);
	if (fs->mst_recovered)
		fs->mst.flags |= UBIFS_MST_DIRTY; /* as the kernel: a recovered master means an unclean reboot */
	struct ubifs_mst_node *m = &fs->mst;
	if (fs->leb_cnt < UBIFS_MIN_LEB_CNT || m->leb_cnt > fs->leb_cnt)
		return util_err_set(&fs->err, -EINVAL, "bad master node at LEB %u:%u: LEB count %u (file system has %u)",
				    fs->mst_lnum, fs->mst_offs, m->leb_cnt, fs->leb_cnt);
	err = validate_master(fs);
	if (err)
		return err;
	fs->max_sqnum = m->sqnum;
	fs->highest_inum = m->highest_inum;
	fs->cmt_no = m->cmt_no;
	fs->lhead_lnum = fs->ltail_lnum = m->log_lnum;
	fs->need_recovery = !!(m->flags & UBIFS_MST_DIRTY);
	fs->no_orphs = !!(m->flags & UBIFS_MST_NO_ORPHS);
	return 0;
}
