/* ubifs_replay — bringing the in-memory index up to date with the journal
 * at mount, as the kernel's replay.c does: walk the log from the tail (CS
 * node of the last commit, then reference nodes naming buds), scan every bud
 * (the last bud of each journal head with torn-tail recovery), sort all
 * nodes by sqnum and apply them to the TNC (spec §11.4). With the HMAC key
 * of an authenticated file system, the kernel's authenticate_sleb: the log
 * hash (the commit start node, then each new reference node) is where each
 * bud's running hash starts; every authentication node in a bud must carry
 * the HMAC of the hash of what came before it; nodes after the last one
 * are dropped in the last bud of a head (written just before a power cut)
 * and refused in any other bud. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ubifs/ubifs_journal.h"
#include "ubifs/ubifs_log.h"
#include "ubifs/ubifs_lpt.h"
#include "ubifs/ubifs_priv.h"
#include "ubifs/ubifs_wbuf.h"
#include "util/util_endian.h"

struct bud {
	uint32_t lnum, offs, jhead;
	uint64_t sqnum;
	uint32_t endpt, used; /* from its scan, for set_bud_lprops */
	int scanned;
	void *hash; /* authenticated, with the key: the running hash, from the log's at the reference */
};

struct rentry {
	struct ubifs_key key;
	uint64_t sqnum;
	uint32_t lnum, offs, len;
	uint8_t deletion;
	uint16_t nlen;
	uint64_t old_size, new_size;
	char *name;
};

struct replay {
	struct bud *buds;
	size_t nbuds, cap_buds;
	struct rentry *ents;
	size_t nents, cap_ents;
	uint64_t log_sqnum; /* the newest log node replayed so far */
	int prev_room;      /* the log LEB before had room for another reference */
	void *log_hash;     /* authenticated, with the key: hash of the commit start and references */
};

static void replay_free(struct replay *r)
{
	for (size_t i = 0; i < r->nents; i++)
		free(r->ents[i].name);
	free(r->ents);
	for (size_t i = 0; i < r->nbuds; i++)
		ubifs_auth_hash_free(r->buds[i].hash);
	free(r->buds);
	ubifs_auth_hash_free(r->log_hash);
}

/* 1: this bud is already known (skip the reference), 0: new, <0: bad. */
static int validate_ref(struct ubifs_fs *fs, struct replay *r, const struct ubifs_ref_node *ref, uint32_t lnum,
			uint32_t offs)
{
	if (ref->jhead >= fs->jhead_cnt || ref->lnum >= fs->leb_cnt || ref->lnum < fs->main_first ||
	    ref->offs > fs->leb_size || ref->offs % fs->min_io_size)
		return util_err_set(&fs->err, -EINVAL,
				    "bad reference node at log LEB %u:%u: bud LEB %u:%u, journal head %u", lnum, offs,
				    ref->lnum, ref->offs, ref->jhead);
	for (size_t i = 0; i < r->nbuds; i++) {
		if (r->buds[i].lnum != ref->lnum)
			continue;
		if (r->buds[i].jhead == ref->jhead && r->buds[i].offs <= ref->offs) {
			fs->bud_rerefs++; /* a commit started after this bud: its nodes are replayed once */
			return 1;
		}
		return util_err_set(&fs->err, -EINVAL, "reference node at log LEB %u:%u: bud LEB %u:%u was already referred",
				    lnum, offs, ref->lnum, ref->offs);
	}
	return 0;
}

/* 0: LEB replayed, 1: end of the log, <0 error. */
static int replay_log_leb(struct ubifs_fs *fs, struct replay *r, uint32_t lnum)
{
	struct ubifs_sleb sleb;
	if (fs->cs_sqnum) {
		/* Past the log's end: a LEB unmapped but not erased, come back
		 * after a cut, is recognised by its first node alone. The log is
		 * written in order, so a LEB that goes on with it starts newer
		 * than anything before it; an older first node is an earlier
		 * round of the ring, or the commit start of a recovery mount that
		 * was cut and whose LEB a later mount's log consolidation
		 * unmapped (the kernel only compares with the commit start, and
		 * would replay that LEB's references again). The rest of such a
		 * LEB may be anything (an erase cut after its first page); the
		 * kernel scans the whole LEB first and refuses such a log. */
		uint64_t newer_than = fs->cs_sqnum > r->log_sqnum ? fs->cs_sqnum : r->log_sqnum;
		/* The kernel's log goes on to the next LEB when this one has no
		 * room for another reference node (consolidation fills each LEB
		 * too), or when a commit starts (a commit start always begins a
		 * LEB). After a LEB with room, a LEB whose first node is not a
		 * good, newer log node is no continuation (the kernel goes on
		 * only with one that scans clean): it is an unmapped LEB come back
		 * after a cut, with garbage where its first node was (an erase
		 * cut: torture powercut -s 23), and the log ends before it. */
		if (r->prev_room) {
			int cs = ubifs_log_leb_starts_log(fs, lnum, newer_than);
			if (cs <= 0)
				return cs < 0 ? cs : 1;
		}
		int stale = ubifs_log_leb_is_stale(fs, lnum, newer_than);
		if (stale)
			return stale;
	}
	int err = ubifs_scan(fs, lnum, 0, &sleb);
	if (err == -EUCLEAN && fs->need_recovery)
		err = ubifs_recover_log_leb(fs, lnum, 0, &sleb);
	if (err == -EUCLEAN) {
		char was[UTIL_ERR_MSG_MAX];
		snprintf(was, sizeof(was), "%s", fs->err.msg);
		return util_err_set(&fs->err, err, "log: %.300s (replaying log LEB %u of commit %llu%s)", was, lnum,
				    (unsigned long long)fs->cmt_no,
				    fs->need_recovery ? "" : ", clean unmount: the log may not be torn");
	}
	if (err)
		return err;
	if (sleb.nodes_cnt == 0) {
		ubifs_sleb_free(&sleb);
		return 1;
	}
	const struct ubifs_snode *first = &sleb.nodes[0];
	if (fs->cs_sqnum == 0) {
		if (first->type != UBIFS_CS_NODE) {
			err = util_err_set(&fs->err, -EINVAL, "first log node at LEB %u:%u is a %s node, not commit start",
					   lnum, first->offs, ubifs_node_type_name(first->type));
			goto out;
		}
		uint64_t cmt_no = ubifs_cs_cmt_no(sleb.buf + first->offs);
		if (cmt_no != fs->cmt_no) {
			err = util_err_set(&fs->err, -EINVAL,
					   "commit start node at log LEB %u:%u has commit number %llu, expected %llu", lnum,
					   first->offs, (unsigned long long)cmt_no, (unsigned long long)fs->cmt_no);
			goto out;
		}
		fs->cs_sqnum = first->sqnum;
		if (fs->hmac_key) {
			r->log_hash = ubifs_auth_hash_new(fs);
			err = r->log_hash ? ubifs_auth_hash_update(fs, r->log_hash, sleb.buf + first->offs, UBIFS_CS_NODE_SZ)
					  : util_err_set(&fs->err, -ENOMEM, "mount: out of memory");
			if (err)
				goto out;
		}
	}
	if (first->sqnum < fs->cs_sqnum) {
		/* an older round of the log ring, unmapped but not erased */
		err = 1;
		goto out;
	}
	if (first->offs != 0) {
		err = util_err_set(&fs->err, -EINVAL, "log LEB %u: first node at offset %u, not 0", lnum, first->offs);
		goto out;
	}
	for (uint32_t i = 0; i < sleb.nodes_cnt; i++) {
		const struct ubifs_snode *s = &sleb.nodes[i];
		if (s->sqnum >= UBIFS_SQNUM_WATERMARK) {
			err = util_err_set(&fs->err, -EINVAL, "log LEB %u:%u: sqnum beyond the watermark (end of life)", lnum,
					   s->offs);
			goto out;
		}
		if (s->sqnum < fs->cs_sqnum) {
			err = util_err_set(&fs->err, -EINVAL, "log LEB %u:%u: bad sqnum %llu, commit sqnum %llu", lnum,
					   s->offs, (unsigned long long)s->sqnum, (unsigned long long)fs->cs_sqnum);
			goto out;
		}
		if (s->sqnum > fs->max_sqnum)
			fs->max_sqnum = s->sqnum;
		if (s->sqnum > r->log_sqnum)
			r->log_sqnum = s->sqnum;
		if (s->type == UBIFS_REF_NODE) {
			struct ubifs_ref_node ref;
			ubifs_ref_unpack(sleb.buf + s->offs, &ref);
			err = validate_ref(fs, r, &ref, lnum, s->offs);
			if (err == 1)
				continue;
			if (err)
				goto out;
			if (r->nbuds == r->cap_buds) {
				size_t cap = r->cap_buds ? r->cap_buds * 2 : 16;
				struct bud *nb = realloc(r->buds, cap * sizeof(*nb));
				if (!nb) {
					err = -ENOMEM;
					goto out;
				}
				r->buds = nb;
				r->cap_buds = cap;
			}
			void *h = NULL;
			if (r->log_hash) {
				err = ubifs_auth_hash_update(fs, r->log_hash, sleb.buf + s->offs, UBIFS_REF_NODE_SZ);
				h = err ? NULL : ubifs_auth_hash_dup(r->log_hash);
				if (!err && !h)
					err = util_err_set(&fs->err, -ENOMEM, "mount: out of memory");
				if (err)
					goto out;
			}
			r->buds[r->nbuds++] = (struct bud){
				.lnum = ref.lnum, .offs = ref.offs, .jhead = ref.jhead, .sqnum = s->sqnum, .hash = h};
		} else if (s->type == UBIFS_CS_NODE) {
			if (s->offs != 0) {
				err = util_err_set(&fs->err, -EINVAL, "unexpected commit start node in log LEB %u:%u", lnum,
						   s->offs);
				goto out;
			}
		} else {
			err = util_err_set(&fs->err, -EINVAL, "unexpected %s node in log LEB %u:%u",
					   ubifs_node_type_name(s->type), lnum, s->offs);
			goto out;
		}
	}
	if (sleb.endpt || fs->lhead_offs >= fs->leb_size) {
		fs->lhead_lnum = lnum;
		fs->lhead_offs = sleb.endpt;
	}
	err = !sleb.endpt;
out:
	ubifs_sleb_free(&sleb);
	return err;
}

static int add_entry(struct ubifs_fs *fs, struct replay *r, const struct rentry *e)
{
	if (r->nents == r->cap_ents) {
		size_t cap = r->cap_ents ? r->cap_ents * 2 : 256;
		struct rentry *n = realloc(r->ents, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		r->ents = n;
		r->cap_ents = cap;
	}
	r->ents[r->nents++] = *e;
	if (e->key.inum >= fs->highest_inum)
		fs->highest_inum = e->key.inum;
	return 0;
}

/* Kernel set_bud_lprops (read-only mounts too, in memory): the bud's free space is what
 * the scan found after its last node; nodes that were dead when written
 * (deletions, truncations) and padding are dirt. A bud starting at 0 must
 * have been empty: if the LPT says otherwise it was garbage-collected
 * without a commit since, and its old dirt does not count. The bud joins
 * the log's list and its head continues after it. */
static void bud_used(struct bud *b, const struct ubifs_sleb *sleb)
{
	uint32_t used = 0;
	for (uint32_t i = 0; i < sleb->nodes_cnt; i++) {
		const struct ubifs_snode *s = &sleb->nodes[i];
		const uint8_t *node = sleb->buf + s->offs;
		int deletion = 0;
		if (s->type == UBIFS_INO_NODE)
			deletion = get_le32(node + 92) == 0;
		else if (s->type == UBIFS_DENT_NODE || s->type == UBIFS_XENT_NODE)
			deletion = get_le64(node + 40) == 0;
		else if (s->type == UBIFS_TRUN_NODE)
			deletion = 1;
		if (!deletion)
			used += ubifs_align8(s->len);
	}
	b->used = used;
	b->endpt = sleb->endpt;
	b->scanned = 1;
}

/* after every entry was applied, as the kernel's set_buds_lprops: the
 * replay's dirt on a bud that GC emptied before it became a bud is then
 * complete and can be taken back */
static int set_bud_lprops(struct ubifs_fs *fs, const struct bud *b)
{
	uint32_t bdirty = b->endpt - b->offs - b->used;
	uint32_t bfree = fs->leb_size - b->endpt;
	struct ubifs_lprops lp;
	int err = ubifs_lpt_lookup(fs->lpt, b->lnum, &lp);
	if (err)
		return err;
	int64_t dirty = lp.dirty;
	if (b->offs == 0 && (lp.free != fs->leb_size || lp.dirty != 0))
		dirty -= (int64_t)fs->leb_size - lp.free;
	if (dirty < 0)
		dirty = 0;
	err = ubifs_lpt_set(fs->lpt, b->lnum, bfree, (uint32_t)dirty + bdirty, lp.flags | UBIFS_LPROPS_TAKEN);
	if (!err && fs->log)
		err = ubifs_log_replayed_bud(fs->log, b->lnum, b->offs, (int)b->jhead);
	struct ubifs_wbuf *w = fs->jnl ? ubifs_jnl_head(fs->jnl, b->jhead) : NULL;
	if (!err && w)
		err = ubifs_wbuf_seek(w, b->lnum, b->endpt);
	return err;
}

/* The kernel's authenticate_sleb: *n_nodes gets how many nodes from the
 * start are covered by a good authentication node. (Where the kernel finds
 * none at all in a last bud, its replay loop does not stop and replays the
 * uncovered nodes too; they are dropped here, as its message says.) */
static int authenticate_bud(struct ubifs_fs *fs, const struct bud *b, const struct ubifs_sleb *sleb, int is_last,
			    uint32_t *n_nodes)
{
	uint32_t n_not_auth = 0;
	for (uint32_t i = 0; i < sleb->nodes_cnt; i++) {
		const struct ubifs_snode *s = &sleb->nodes[i];
		int err = s->type == UBIFS_AUTH_NODE
				  ? ubifs_auth_node_check(fs, b->hash, sleb->buf + s->offs, s->len, b->lnum, s->offs)
				  : ubifs_auth_hash_update(fs, b->hash, sleb->buf + s->offs, s->len);
		if (err)
			return err;
		n_not_auth = s->type == UBIFS_AUTH_NODE ? 0 : n_not_auth + 1;
	}
	if (n_not_auth && !is_last)
		return util_err_set(&fs->err, -EPERM,
				    "authenticated UBIFS: %u nodes at the end of bud LEB %u (journal head %u) are not "
				    "covered by an authentication node, and it is not the last bud of its head",
				    n_not_auth, b->lnum, b->jhead);
	fs->auth_dropped += n_not_auth;
	*n_nodes = sleb->nodes_cnt - n_not_auth;
	return 0;
}

static int replay_bud(struct ubifs_fs *fs, struct replay *r, size_t bi)
{
	const struct bud *b = &r->buds[bi];
	/* later buds of the same head */
	size_t later = 0, next = 0;
	for (size_t j = bi + 1; j < r->nbuds; j++)
		if (r->buds[j].jhead == b->jhead && !later++)
			next = j;
	int is_last = later == 0;
	if (later == 1) {
		/* kernel quirk for images of older UBIFS: a bud followed only by
		 * an empty last bud counts as the last one */
		uint8_t w[4];
		if (!ubifs_leb_read(fs, r->buds[next].lnum, r->buds[next].offs, w, r->buds[next].offs + 4 <= fs->leb_size ? 4 : 0) &&
		    r->buds[next].offs + 4 <= fs->leb_size && get_le32(w) == 0xFFFFFFFFu)
			is_last = 1;
	}
	struct ubifs_sleb sleb;
	/* after an unclean unmount only the last LEB of each head can have been
	 * written at the power cut: that one is recovered, the rest must be clean */
	int recover = fs->need_recovery && is_last;
	int err = recover ? ubifs_recover_leb(fs, b->lnum, b->offs, &sleb, (int)b->jhead)
			  : ubifs_scan(fs, b->lnum, b->offs, &sleb);
	if (err == -EUCLEAN && !recover) {
		char was[UTIL_ERR_MSG_MAX];
		snprintf(was, sizeof(was), "%s", fs->err.msg);
		return util_err_set(&fs->err, err, "%.300s (journal bud of head %u from offset %u; %s)", was, b->jhead,
				    b->offs,
				    is_last ? "the file system was unmounted cleanly, so nothing may be torn"
					    : "not the last bud of its head, so not a power cut");
	}
	if (err)
		return err;
	uint32_t n_nodes = sleb.nodes_cnt;
	if (b->hash)
		err = authenticate_bud(fs, b, &sleb, is_last, &n_nodes);
	for (uint32_t i = 0; i < n_nodes && !err; i++) {
		const struct ubifs_snode *s = &sleb.nodes[i];
		const uint8_t *node = sleb.buf + s->offs;
		struct rentry e = {.key = s->key, .sqnum = s->sqnum, .lnum = b->lnum, .offs = s->offs, .len = s->len};
		if (s->sqnum >= UBIFS_SQNUM_WATERMARK) {
			err = util_err_set(&fs->err, -EINVAL, "bud LEB %u:%u: sqnum beyond the watermark (end of life)",
					   b->lnum, s->offs);
			break;
		}
		if (s->sqnum > fs->max_sqnum)
			fs->max_sqnum = s->sqnum;
		if (s->type <= UBIFS_XENT_NODE && ubifs_key_type(&s->key) != s->type) {
			char ks[64];
			err = util_err_set(&fs->err, -EINVAL, "%s node at bud LEB %u:%u has a key of the wrong type %s",
					   ubifs_node_type_name(s->type), b->lnum, s->offs,
					   ubifs_key_str(&s->key, ks, sizeof(ks)));
			break;
		}
		switch (s->type) {
		case UBIFS_INO_NODE:
			e.deletion = get_le32(node + 92) == 0;
			e.new_size = get_le64(node + 48);
			err = add_entry(fs, r, &e);
			break;
		case UBIFS_DATA_NODE:
			e.new_size = (uint64_t)get_le32(node + 40) + (uint64_t)ubifs_key_value(&s->key) * UBIFS_BLOCK_SIZE;
			err = add_entry(fs, r, &e);
			break;
		case UBIFS_DENT_NODE:
		case UBIFS_XENT_NODE: {
			const char *why = ubifs_dent_check(node, s->len);
			if (why) {
				err = util_err_set(&fs->err, -EINVAL, "bad %s node at bud LEB %u:%u: %s",
						   ubifs_node_type_name(s->type), b->lnum, s->offs, why);
				break;
			}
			e.nlen = get_le16(node + 50);
			e.deletion = get_le64(node + 40) == 0;
			e.name = malloc(e.nlen + 1u);
			if (!e.name) {
				err = -ENOMEM;
				break;
			}
			memcpy(e.name, node + UBIFS_DENT_NODE_SZ, e.nlen);
			e.name[e.nlen] = 0;
			err = add_entry(fs, r, &e);
			if (err)
				free(e.name);
			break;
		}
		case UBIFS_TRUN_NODE: {
			struct ubifs_trun_node t;
			ubifs_trun_unpack(node, &t);
			if (t.old_size > UBIFS_MAX_INODE_SZ || t.new_size > UBIFS_MAX_INODE_SZ ||
			    (int64_t)t.old_size < 0 || (int64_t)t.new_size < 0 || t.old_size <= t.new_size) {
				err = util_err_set(&fs->err, -EINVAL,
						   "bad truncation node at bud LEB %u:%u (inode %u, %llu -> %llu)", b->lnum,
						   s->offs, t.inum, (unsigned long long)t.old_size,
						   (unsigned long long)t.new_size);
				break;
			}
			e.key = ubifs_key_make(t.inum, UBIFS_TRUN_KEY, 0);
			e.deletion = 1;
			e.old_size = t.old_size;
			e.new_size = t.new_size;
			err = add_entry(fs, r, &e);
			break;
		}
		case UBIFS_AUTH_NODE:
			break;
		default:
			err = util_err_set(&fs->err, -EINVAL, "unexpected %s node (type %u) in bud LEB %u:%u",
					   ubifs_node_type_name(s->type), s->type, b->lnum, s->offs);
			break;
		}
	}
	if (!err)
		bud_used(&r->buds[bi], &sleb);
	ubifs_sleb_free(&sleb);
	return err;
}

static int cmp_sqnum(const void *a, const void *b)
{
	const struct rentry *x = a, *y = b;
	if (x->sqnum != y->sqnum)
		return x->sqnum < y->sqnum ? -1 : 1;
	/* equal sqnums only in damaged images: keep scan order stable */
	return x < y ? -1 : (x > y);
}

struct ino_last {
	uint32_t inum;
	size_t idx;
};

static int cmp_ino_last(const void *a, const void *b)
{
	const struct ino_last *x = a, *y = b;
	if (x->inum != y->inum)
		return x->inum < y->inum ? -1 : 1;
	return x->idx < y->idx ? -1 : (x->idx > y->idx);
}

/* Kernel's inode_still_linked: the newest INO node of this inode in the
 * whole journal decides whether a deletion is really applied. */
static int still_linked(const struct replay *r, const struct ino_last *il, size_t nil, uint32_t inum)
{
	size_t lo = 0, hi = nil;
	while (lo < hi) { /* first index with inum > target */
		size_t mid = (lo + hi) / 2;
		if (il[mid].inum <= inum)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || il[lo - 1].inum != inum)
		return 0;
	return !r->ents[il[lo - 1].idx].deletion;
}

static int trun_remove_range(struct ubifs_fs *fs, const struct rentry *e)
{
	uint64_t min_blk = e->new_size / UBIFS_BLOCK_SIZE;
	if (e->new_size & (UBIFS_BLOCK_SIZE - 1))
		min_blk++;
	uint64_t max_blk = e->old_size / UBIFS_BLOCK_SIZE;
	if ((e->old_size & (UBIFS_BLOCK_SIZE - 1)) == 0)
		max_blk--;
	if (min_blk > max_blk)
		return 0;
	struct ubifs_key lo = ubifs_key_make(e->key.inum, UBIFS_DATA_KEY, (uint32_t)min_blk);
	struct ubifs_key hi = ubifs_key_make(e->key.inum, UBIFS_DATA_KEY, (uint32_t)max_blk);
	return ubifs_tnc_remove_range(fs, &lo, &hi);
}

static int apply_entries(struct ubifs_fs *fs, struct replay *r)
{
	if (r->nents == 0)
		return 0;
	qsort(r->ents, r->nents, sizeof(*r->ents), cmp_sqnum);
	size_t nil = 0;
	struct ino_last *il = malloc((r->nents ? r->nents : 1) * sizeof(*il));
	if (!il)
		return -ENOMEM;
	for (size_t i = 0; i < r->nents; i++)
		if (ubifs_key_type(&r->ents[i].key) == UBIFS_INO_KEY)
			il[nil++] = (struct ino_last){r->ents[i].key.inum, i};
	if (nil)
		qsort(il, nil, sizeof(*il), cmp_ino_last);
	int err = 0;
	for (size_t i = 0; i < r->nents && !err; i++) {
		const struct rentry *e = &r->ents[i];
		unsigned kt = ubifs_key_type(&e->key);
		if (kt == UBIFS_DENT_KEY || kt == UBIFS_XENT_KEY) {
			if (e->deletion)
				err = ubifs_tnc_remove_nm(fs, &e->key, e->name, e->nlen);
			else
				err = ubifs_tnc_add_nm(fs, &e->key, e->name, e->nlen, e->lnum, e->offs, e->len);
		} else if (e->deletion) {
			if (kt == UBIFS_INO_KEY) {
				if (!still_linked(r, il, nil, e->key.inum))
					err = ubifs_tnc_remove_ino(fs, e->key.inum);
			} else if (kt == UBIFS_TRUN_KEY) {
				err = trun_remove_range(fs, e);
			} else {
				err = ubifs_tnc_remove(fs, &e->key);
			}
		} else {
			err = ubifs_tnc_add(fs, &e->key, e->lnum, e->offs, e->len);
		}
		if (!err && fs->need_recovery)
			err = ubifs_recover_size_accum(fs, &e->key, e->deletion, e->new_size);
		if (!err)
			fs->replayed_nodes++;
	}
	free(il);
	return err;
}

static int replay_journal(struct ubifs_fs *fs);

int ubifs_replay_journal(struct ubifs_fs *fs)
{
	fs->replaying = 1;
	fs->index_may_dangle = 1;
	fs->replay_dangling_xents = 0;
	int err = replay_journal(fs);
	/* deletions that met dangling xattr entries left their xattr inodes
	 * without an entry (the kernel leaves them so, and its self-check
	 * then refuses the mount): removed, still accounted as replay */
	unsigned long swept = 0;
	if (!err && fs->replay_dangling_xents)
		err = ubifs_xattr_sweep(fs, 0, NULL, NULL, &swept);
	fs->replaying = 0;
	fs->index_may_dangle = 0;
	return err;
}

/* a reference node as the log writes it: padded to the min. I/O unit */
static uint32_t ref_node_alsz(const struct ubifs_fs *fs)
{
	uint32_t a = fs->min_io_size ? fs->min_io_size : 8;
	return (UBIFS_REF_NODE_SZ + a - 1) / a * a;
}

static int replay_journal(struct ubifs_fs *fs)
{
	struct replay r;
	memset(&r, 0, sizeof(r));
	uint32_t lnum = fs->ltail_lnum;
	fs->lhead_lnum = lnum;
	fs->lhead_offs = 0;
	fs->cs_sqnum = 0;
	int err = 0, wrapped = 0;
	do {
		err = replay_log_leb(fs, &r, lnum);
		if (err == 1) {
			if (lnum != fs->lhead_lnum || fs->log_lebs_used > 0) {
				err = 0;
				break; /* end of the log */
			}
			err = util_err_set(&fs->err, -EINVAL,
					   "no UBIFS nodes at the log head LEB %u:0 (the log tail of commit %llu)", lnum,
					   (unsigned long long)fs->cmt_no);
		}
		if (err)
			goto out;
		fs->log_lebs_used++;
		fs->log_wraps += wrapped; /* a LEB of this log after its last LEB */
		r.prev_room = fs->lhead_lnum == lnum && fs->lhead_offs + ref_node_alsz(fs) <= fs->leb_size;
		wrapped = lnum + 1 > fs->log_last;
		lnum = wrapped ? fs->log_first : lnum + 1;
	} while (lnum != fs->ltail_lnum);
	for (size_t i = 0; i < r.nbuds && !err; i++)
		err = replay_bud(fs, &r, i);
	if (err)
		goto out;
	fs->buds = (uint32_t)r.nbuds;
	err = apply_entries(fs, &r);
	for (size_t i = 0; i < r.nbuds && !err; i++)
		if (r.buds[i].scanned && ubifs_lprops_tracked(fs))
			err = set_bud_lprops(fs, &r.buds[i]);
out:
	replay_free(&r);
	return err;
}
