/* ubifs_log — the log area and the bud list (see ubifs_log.h), following
 * the kernel's log.c: reference nodes are written min_io-aligned one after
 * the other; a LEB is unmapped before its first write; a new empty bud is
 * mapped before it is referred to (so that after a power cut the reference
 * never names garbage); the commit start goes to offset 0 of a fresh log
 * LEB so that the LEBs before it can be unmapped once the commit is done. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ubifs/ubifs_log.h"
#include "ubifs/ubifs_priv.h"

struct ubifs_log_bud {
	uint32_t lnum, start;
	int jhead;
};

struct ubifs_log {
	struct ubifs_fs *fs;
	uint32_t lhead_lnum, lhead_offs, ltail_lnum;
	uint64_t log_bytes, bud_bytes, cmt_bud_bytes, max_bud_bytes, bg_bud_bytes;
	uint32_t min_log_bytes, ref_alsz;
	struct ubifs_log_bud *buds, *old;
	size_t nbuds, cap_buds, nold, cap_old;
};

static uint32_t align_up(uint32_t x, uint32_t a)
{
	return (x + a - 1) / a * a;
}

int ubifs_log_open(struct ubifs_fs *fs, struct ubifs_log **out)
{
	struct ubifs_log *log = calloc(1, sizeof(*log));
	if (!log)
		return -ENOMEM;
	log->fs = fs;
	log->lhead_lnum = fs->lhead_lnum;
	log->lhead_offs = fs->lhead_offs;
	log->ltail_lnum = fs->ltail_lnum;
	log->log_bytes = (uint64_t)fs->sb.log_lebs * fs->leb_size;
	log->ref_alsz = align_up(UBIFS_REF_NODE_SZ, fs->min_io_size);
	log->min_log_bytes = fs->leb_size;
	/* kernel init_constants_sb: background commit at 13/16 of the journal,
	 * and a journal never smaller than the heads' LEBs + 2 */
	log->max_bud_bytes = fs->sb.max_bud_bytes;
	log->bg_bud_bytes = (log->max_bud_bytes * 13) >> 4;
	uint64_t min = (uint64_t)(fs->jhead_cnt + 1) * fs->leb_size + 1;
	if (log->bg_bud_bytes < min)
		log->bg_bud_bytes = min;
	if (log->max_bud_bytes < min + fs->leb_size)
		log->max_bud_bytes = min + fs->leb_size;
	*out = log;
	return 0;
}

void ubifs_log_close(struct ubifs_log *log)
{
	if (!log)
		return;
	free(log->buds);
	free(log->old);
	free(log);
}

static int push(struct ubifs_log_bud **v, size_t *n, size_t *cap, struct ubifs_log_bud b)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 16;
		struct ubifs_log_bud *nv = realloc(*v, c * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		*v = nv;
		*cap = c;
	}
	(*v)[(*n)++] = b;
	return 0;
}

static int add_bud(struct ubifs_log *log, uint32_t lnum, uint32_t start, int jhead)
{
	int err = push(&log->buds, &log->nbuds, &log->cap_buds, (struct ubifs_log_bud){lnum, start, jhead});
	if (err)
		return err;
	/* counted whole from the start: this is what a mount has to scan */
	log->bud_bytes += log->fs->leb_size - start;
	return 0;
}

void ubifs_log_set_head(struct ubifs_log *log, uint32_t lnum, uint32_t offs)
{
	log->lhead_lnum = lnum;
	log->lhead_offs = offs;
}

int ubifs_log_replayed_bud(struct ubifs_log *log, uint32_t lnum, uint32_t start, int jhead)
{
	return add_bud(log, lnum, start, jhead);
}

int ubifs_log_bud_head(const struct ubifs_log *log, uint32_t lnum)
{
	for (size_t i = 0; i < log->nbuds; i++)
		if (log->buds[i].lnum == lnum)
			return log->buds[i].jhead;
	return -1;
}

int ubifs_log_want_commit(const struct ubifs_log *log)
{
	return log->bud_bytes >= log->bg_bud_bytes;
}

void ubifs_log_positions(const struct ubifs_log *log, uint32_t *lhead_lnum, uint32_t *lhead_offs,
			 uint32_t *ltail_lnum)
{
	*lhead_lnum = log->lhead_lnum;
	*lhead_offs = log->lhead_offs;
	*ltail_lnum = log->ltail_lnum;
}

static uint32_t next_log_lnum(const struct ubifs_fs *fs, uint32_t lnum)
{
	return lnum + 1 > fs->log_last ? fs->log_first : lnum + 1;
}

/* kernel empty_log_bytes */
static uint64_t empty_log_bytes(const struct ubifs_log *log)
{
	uint64_t ls = log->fs->leb_size;
	uint64_t h = (uint64_t)log->lhead_lnum * ls + log->lhead_offs;
	uint64_t t = (uint64_t)log->ltail_lnum * ls;
	if (h > t)
		return log->log_bytes - h + t;
	if (h != t)
		return t - h;
	if (log->lhead_lnum != log->ltail_lnum)
		return 0;
	return log->log_bytes;
}

int ubifs_log_add_bud(struct ubifs_log *log, int jhead, uint32_t lnum, uint32_t offs)
{
	struct ubifs_fs *fs = log->fs;
	uint64_t empty = empty_log_bytes(log);
	if (empty < (uint64_t)log->ref_alsz + log->min_log_bytes)
		return -EAGAIN;
	if (log->bud_bytes + fs->leb_size - offs > log->max_bud_bytes)
		return -EAGAIN;
	if (log->lhead_offs > fs->leb_size - log->ref_alsz) {
		log->lhead_lnum = next_log_lnum(fs, log->lhead_lnum);
		log->lhead_offs = 0;
	}
	int err;
	if (log->lhead_offs == 0) {
		err = ubifs_leb_unmap(fs, log->lhead_lnum);
		if (err)
			return err;
	}
	if (offs == 0) {
		err = ubifs_leb_map(fs, lnum);
		if (err)
			return err;
	}
	uint8_t *buf = calloc(1, log->ref_alsz);
	if (!buf)
		return -ENOMEM;
	ubifs_ref_pack(buf, lnum, offs, (uint32_t)jhead);
	err = ubifs_write_node(fs, buf, UBIFS_REF_NODE_SZ, log->lhead_lnum, log->lhead_offs);
	free(buf);
	if (err)
		return err;
	log->lhead_offs += log->ref_alsz;
	return add_bud(log, lnum, offs, jhead);
}

/* kernel add_node (log.c): a node copied into the consolidated log; when
 * it does not fit, the LEB so far is padded and replaced atomically. */
static int consolidate_add(struct ubifs_log *log, uint8_t *buf, uint32_t *lnum, uint32_t *offs,
			   const uint8_t *node, uint32_t len)
{
	struct ubifs_fs *fs = log->fs;
	if (len > fs->leb_size - *offs) {
		uint32_t sz = align_up(*offs, fs->min_io_size);
		ubifs_pad_pack(buf + *offs, sz - *offs);
		int err = ubifs_leb_change(fs, *lnum, buf, sz);
		if (err)
			return err;
		*lnum = next_log_lnum(fs, *lnum);
		*offs = 0;
	}
	memcpy(buf + *offs, node, len);
	*offs += ubifs_align8(len);
	return 0;
}

static int seen_lnum(const uint32_t *v, size_t n, uint32_t lnum)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == lnum)
			return 1;
	return 0;
}

int ubifs_log_consolidate(struct ubifs_log *log)
{
	struct ubifs_fs *fs = log->fs;
	uint8_t *buf = malloc(fs->leb_size);
	uint32_t *done = NULL;
	size_t ndone = 0, capdone = 0;
	if (!buf)
		return -ENOMEM;
	uint32_t lnum = log->ltail_lnum, write_lnum = lnum, offs = 0;
	int first = 1, err = 0;
	for (;;) {
		struct ubifs_sleb sleb;
		err = ubifs_scan(fs, lnum, 0, &sleb);
		if (err)
			break;
		for (uint32_t i = 0; i < sleb.nodes_cnt && !err; i++) {
			const struct ubifs_snode *sn = &sleb.nodes[i];
			const uint8_t *node = sleb.buf + sn->offs;
			if (sn->type == UBIFS_REF_NODE) {
				/* only the first reference to a bud LEB: it has the
				 * lowest start, which covers the later ones */
				struct ubifs_ref_node ref;
				ubifs_ref_unpack(node, &ref);
				if (seen_lnum(done, ndone, ref.lnum))
					continue;
				if (ndone == capdone) {
					size_t c = capdone ? capdone * 2 : 32;
					uint32_t *nv = realloc(done, c * sizeof(*nv));
					if (!nv) {
						err = -ENOMEM;
						break;
					}
					done = nv;
					capdone = c;
				}
				done[ndone++] = ref.lnum;
				err = consolidate_add(log, buf, &write_lnum, &offs, node, sn->len);
			} else if (sn->type == UBIFS_CS_NODE && first) {
				first = 0;
				err = consolidate_add(log, buf, &write_lnum, &offs, node, sn->len);
			}
		}
		ubifs_sleb_free(&sleb);
		if (err || lnum == log->lhead_lnum)
			break;
		lnum = next_log_lnum(fs, lnum);
	}
	free(done);
	if (!err && offs) {
		uint32_t sz = align_up(offs, fs->min_io_size);
		ubifs_pad_pack(buf + offs, sz - offs);
		err = ubifs_leb_change(fs, write_lnum, buf, sz);
		offs = sz;
	}
	free(buf);
	if (err)
		return err;
	if (write_lnum == log->lhead_lnum)
		return util_err_set(&fs->err, -EINVAL,
				    "log: too full to mount read-write even after consolidation (LEBs %u..%u)",
				    log->ltail_lnum, log->lhead_lnum);
	/* the LEBs after the new head up to the old head hold nothing needed */
	lnum = write_lnum;
	do {
		lnum = next_log_lnum(fs, lnum);
		err = ubifs_leb_unmap(fs, lnum);
		if (err)
			return err;
	} while (lnum != log->lhead_lnum);
	log->lhead_lnum = write_lnum;
	log->lhead_offs = offs;
	return 0;
}

int ubifs_log_start_commit(struct ubifs_log *log, uint64_t cmt_no, const struct ubifs_log_head_pos *heads,
			   uint32_t nheads, uint32_t *ltail)
{
	struct ubifs_fs *fs = log->fs;
	uint32_t max_len = align_up(UBIFS_CS_NODE_SZ + nheads * UBIFS_REF_NODE_SZ, fs->min_io_size);
	uint8_t *buf = calloc(1, max_len);
	if (!buf)
		return -ENOMEM;
	ubifs_cs_pack(buf, cmt_no);
	ubifs_node_finish(buf, UBIFS_CS_NODE_SZ, ubifs_next_sqnum(fs));
	uint32_t len = UBIFS_CS_NODE_SZ;
	for (uint32_t i = 0; i < nheads; i++) {
		if (heads[i].lnum < 0 || heads[i].offs == fs->leb_size)
			continue;
		ubifs_ref_pack(buf + len, (uint32_t)heads[i].lnum, heads[i].offs, i);
		ubifs_node_finish(buf + len, UBIFS_REF_NODE_SZ, ubifs_next_sqnum(fs));
		len += UBIFS_REF_NODE_SZ;
	}
	ubifs_pad_pack(buf + len, align_up(len, fs->min_io_size) - len);
	if (log->lhead_offs) {
		log->lhead_lnum = next_log_lnum(fs, log->lhead_lnum);
		log->lhead_offs = 0;
	}
	int err = ubifs_leb_unmap(fs, log->lhead_lnum);
	if (!err)
		err = ubifs_leb_write(fs, log->lhead_lnum, 0, buf, align_up(len, fs->min_io_size));
	free(buf);
	if (err)
		return err;
	*ltail = log->lhead_lnum;
	log->lhead_offs = align_up(len, fs->min_io_size);
	/* kernel remove_buds: buds under a head stay (from the head's
	 * position on); the others wait on the old list until the commit is done */
	log->cmt_bud_bytes = 0;
	size_t keep = 0;
	for (size_t i = 0; i < log->nbuds; i++) {
		struct ubifs_log_bud b = log->buds[i];
		const struct ubifs_log_head_pos *h = b.jhead >= 0 && (uint32_t)b.jhead < nheads ? &heads[b.jhead] : NULL;
		if (h && h->lnum == (int64_t)b.lnum) {
			log->cmt_bud_bytes += h->offs - b.start;
			b.start = h->offs;
			log->buds[keep++] = b;
		} else {
			log->cmt_bud_bytes += fs->leb_size - b.start;
			err = push(&log->old, &log->nold, &log->cap_old, b);
			if (err)
				return err;
		}
	}
	log->nbuds = keep;
	log->min_log_bytes = 0;
	return 0;
}

int ubifs_log_end_commit(struct ubifs_log *log, uint32_t ltail)
{
	log->ltail_lnum = ltail;
	log->min_log_bytes = log->fs->leb_size;
	log->bud_bytes -= log->cmt_bud_bytes;
	return 0;
}

int ubifs_log_post_commit(struct ubifs_log *log, uint32_t old_ltail,
			  int (*return_leb)(struct ubifs_fs *fs, uint32_t lnum))
{
	struct ubifs_fs *fs = log->fs;
	int err = 0;
	for (size_t i = 0; i < log->nold && !err; i++)
		err = return_leb(fs, log->old[i].lnum);
	log->nold = 0;
	for (uint32_t lnum = old_ltail; !err && lnum != log->ltail_lnum; lnum = next_log_lnum(fs, lnum))
		err = ubifs_leb_unmap(fs, lnum);
	return err;
}
