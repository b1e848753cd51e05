/* ubifs_check — a consistency check of a mounted UBIFS as strict as the
 * kernel's own self-checks (debug.c dbg_check_idx_size / dbg_check_tnc /
 * dbg_check_filesystem, orphan.c dbg_check_orphans; facts only), plus the
 * LPT check (ubifs_lpt_check, kernel dbg_check_lprops / dbg_check_ltab):
 *  - the committed index on flash, from the master's root: every index node
 *    readable (CRC, type, length), levels one less per step down, at most
 *    fanout branches, keys in order inside a node and each child's keys not
 *    below its branch key nor above the next branch's, positions inside the
 *    main area and 8-aligned, the sum of the aligned index nodes = the
 *    master's index size when the in-memory index equals it;
 *  - every leaf of the current index (journal included) in key order, each
 *    node readable with the key the index gives;
 *  - per inode: link count = entries naming it (directories: 2 + subdirs),
 *    directory size = 160 + the aligned size of each entry, xattr count,
 *    size and name bytes from its xattr entries, no data block reaching past
 *    the inode size, every entry naming an existing inode, every data node
 *    having its inode, nothing unreachable; an inode with link count 0 only
 *    as an orphan of this mount. One exception, Linux 6.1's: after a
 *    read-only mount that killed orphans, xattr inodes (link count 1) the
 *    kernel left behind without an entry are accepted (docs/ubifs.md).
 * Every problem found is reported (ubifs_check_report) with its place
 * (LEB:offset, inode) and what was expected; the check goes on past it
 * where it can (a bad index node: its subtree is left out; a bad leaf: that
 * leaf). ubifs_check keeps the first one as the error message. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ubifs/ubifs_journal.h"
#include "ubifs/ubifs_lpt.h"
#include "ubifs/ubifs_orphan_write.h"
#include "ubifs/ubifs_priv.h"
#include "util/util_endian.h"

#define DENT_SIZE(nlen) ubifs_align8(UBIFS_DENT_NODE_SZ + (uint32_t)(nlen) + 1)
#define XATTR_BYTES(len) ubifs_align8(UBIFS_INO_NODE_SZ + (uint32_t)(len) + 1)

struct ck_ino {
	uint32_t inum;
	uint32_t nlink, mode, flags, xattr_cnt, xattr_names;
	uint64_t size, xattr_size;
	uint32_t lnum, offs;
	/* calculated */
	uint32_t refs, subdirs, calc_xcnt, calc_xnms;
	uint64_t calc_sz, calc_xsz;
};

struct ck_ref { /* an entry: parent -> target */
	uint32_t parent, target;
	uint16_t nlen;
	uint8_t xent, type;
	uint32_t lnum, offs;
};

struct ck {
	struct ubifs_fs *fs;
	struct ck_ino *inos;
	size_t n_inos, cap_inos;
	struct ck_ref *refs;
	size_t n_refs, cap_refs;
	uint64_t idx_size;
	uint8_t *ibuf;
	ubifs_check_cb cb;
	void *cb_ctx;
	unsigned long problems;
	int idx_bad; /* a problem in the committed index (its size is not comparable) */
};

/* One problem: to the callback, with its place. Returns 0 to go on, or the
 * callback's negative error to stop. */
__attribute__((format(printf, 5, 6))) static int ck_report(struct ck *c, int64_t lnum, int64_t offs, uint64_t inum,
							  const char *fmt, ...)
{
	char msg[UTIL_ERR_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	c->problems++;
	return c->cb ? c->cb(c->cb_ctx, msg, lnum, offs, inum) : 0;
}

#define CKERR(c, lnum, offs, inum, ...) ck_report((c), (lnum), (offs), (inum), __VA_ARGS__)
/* a read failure of a node (its message is in fs->err) as a problem */
#define CKREAD(c, what, lnum, offs, inum, err)                                                                       \
	((err) == -ENOMEM ? (err)                                                                                     \
			  : ck_report((c), (lnum), (offs), (inum), "check: %s at LEB %u:%u cannot be read: %s", (what), \
				      (unsigned)(lnum), (unsigned)(offs), util_err_msg(&(c)->fs->err)))
#define ULL(x) ((unsigned long long)(x))

/* ---- the committed index on flash ---- */

static int check_idx(struct ck *c, uint32_t lnum, uint32_t offs, uint32_t len, int level_expect,
		     const struct ubifs_key *lo, const struct ubifs_key *hi, int has_hi)
{
	struct ubifs_fs *fs = c->fs;
	char a[64], b[64];
	if (lnum < fs->main_first || lnum >= fs->leb_cnt || offs % 8 || offs + len > fs->leb_size ||
	    len < UBIFS_IDX_NODE_SZ || len > UBIFS_MAX_NODE_SZ) {
		c->idx_bad = 1;
		return CKERR(c, lnum, offs, 0,
			     "check: index node at LEB %u:%u len %u is outside the main area (%u..%u) or misaligned",
			     lnum, offs, len, fs->main_first, fs->leb_cnt - 1);
	}
	uint8_t *buf = malloc(len);
	if (!buf)
		return -ENOMEM;
	int err = ubifs_read_node(fs, buf, UBIFS_IDX_NODE, len, lnum, offs);
	if (err) {
		free(buf);
		c->idx_bad = 1;
		return CKREAD(c, "index node", lnum, offs, 0, err);
	}
	c->idx_size += ubifs_align8(len);
	uint16_t cnt = get_le16(buf + 24), level = get_le16(buf + 26);
	if ((level_expect >= 0 && level != (uint16_t)level_expect) || level >= UBIFS_MAX_LEVELS) {
		c->idx_bad = 1;
		err = CKERR(c, lnum, offs, 0, "check: index node at LEB %u:%u has level %u, expected %d", lnum, offs,
			    level, level_expect >= 0 ? level_expect : UBIFS_MAX_LEVELS - 1);
		free(buf);
		return err;
	}
	if (cnt == 0 || cnt > fs->fanout || ubifs_idx_node_len(cnt) + cnt * fs->hash_len != len) {
		c->idx_bad = 1;
		err = CKERR(c, lnum, offs, 0, "check: index node at LEB %u:%u has %u branches (fanout %u, length %u)",
			    lnum, offs, cnt, fs->fanout, len);
		free(buf);
		return err;
	}
	struct ubifs_key prev = {0, 0};
	for (uint32_t i = 0; !err && i < cnt; i++) {
		const uint8_t *br = buf + UBIFS_IDX_NODE_SZ + i * (UBIFS_BRANCH_SZ + fs->hash_len);
		uint32_t blnum = get_le32(br), boffs = get_le32(br + 4), blen = get_le32(br + 8);
		struct ubifs_key k = ubifs_key_read(br + 12);
		int cmp = ubifs_key_cmp(&k, &prev);
		int bad = 0;
		if (i > 0 && (cmp < 0 || (cmp == 0 && !ubifs_key_is_hash(&k)))) {
			bad = 1;
			err = CKERR(c, lnum, offs, k.inum,
				    "check: index node at LEB %u:%u: branch %u key %s not above branch %u key %s", lnum,
				    offs, i, ubifs_key_str(&k, a, sizeof(a)), i - 1, ubifs_key_str(&prev, b, sizeof(b)));
		} else if (ubifs_key_cmp(&k, lo) < 0 || (has_hi && ubifs_key_cmp(&k, hi) > 0)) {
			bad = 1;
			err = CKERR(c, lnum, offs, k.inum,
				    "check: index node at LEB %u:%u: branch %u key %s outside its parent's range (from %s)",
				    lnum, offs, i, ubifs_key_str(&k, a, sizeof(a)), ubifs_key_str(lo, b, sizeof(b)));
		}
		prev = k;
		if (bad) {
			c->idx_bad = 1;
			continue;
		}
		if (level > 0) {
			struct ubifs_key nhi = *hi;
			int nhas = has_hi;
			if (i + 1 < cnt) {
				nhi = ubifs_key_read(br + UBIFS_BRANCH_SZ + fs->hash_len + 12);
				nhas = 1;
			}
			err = check_idx(c, blnum, boffs, blen, level - 1, &k, &nhi, nhas);
		} else if (blnum < fs->main_first || blnum >= fs->leb_cnt || boffs % 8 || boffs + blen > fs->leb_size) {
			c->idx_bad = 1;
			err = CKERR(c, lnum, offs, k.inum,
				    "check: index node at LEB %u:%u: leaf %u at LEB %u:%u len %u outside the main area or "
				    "misaligned",
				    lnum, offs, i, blnum, boffs, blen);
		}
	}
	free(buf);
	return err;
}

/* ---- leaves and inodes ---- */

static struct ck_ino *find_ino(struct ck *c, uint32_t inum)
{
	size_t lo = 0, hi = c->n_inos;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (c->inos[mid].inum < inum)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < c->n_inos && c->inos[lo].inum == inum ? &c->inos[lo] : NULL;
}

static int leaf(struct ck *c, const struct ubifs_zbranch *zb)
{
	struct ubifs_fs *fs = c->fs;
	unsigned type = ubifs_key_type(&zb->key);
	int err = ubifs_tnc_read_leaf(fs, zb, fs->nbuf);
	if (err)
		return CKREAD(c, "leaf node", zb->lnum, zb->offs, zb->key.inum, err);
	switch (type) {
	case UBIFS_INO_KEY: {
		struct ubifs_ino_node in;
		ubifs_ino_unpack(fs->nbuf, &in);
		if (c->n_inos == c->cap_inos) {
			size_t cap = c->cap_inos ? c->cap_inos * 2 : 256;
			struct ck_ino *n = realloc(c->inos, cap * sizeof(*n));
			if (!n)
				return -ENOMEM;
			c->inos = n;
			c->cap_inos = cap;
		}
		struct ck_ino *i = &c->inos[c->n_inos++];
		memset(i, 0, sizeof(*i));
		i->inum = zb->key.inum;
		i->nlink = in.nlink;
		i->mode = in.mode;
		i->flags = in.flags;
		i->size = in.size;
		ubifs_size_fix_apply(fs, i->inum, &i->size);
		i->xattr_cnt = in.xattr_cnt;
		i->xattr_size = in.xattr_size;
		i->xattr_names = in.xattr_names;
		i->lnum = zb->lnum;
		i->offs = zb->offs;
		return 0;
	}
	case UBIFS_DATA_KEY: {
		/* inodes come first in key order: this inode, if any, is the last one */
		struct ck_ino *i = c->n_inos ? &c->inos[c->n_inos - 1] : NULL;
		if (!i || i->inum != zb->key.inum)
			return CKERR(c, zb->lnum, zb->offs, zb->key.inum,
				     "check: data node of inode %u block %u at LEB %u:%u has no inode", zb->key.inum,
				     ubifs_key_value(&zb->key), zb->lnum, zb->offs);
		uint64_t end = (uint64_t)ubifs_key_value(&zb->key) * UBIFS_BLOCK_SIZE + get_le32(fs->nbuf + 40);
		if (end > i->size)
			return CKERR(c, zb->lnum, zb->offs, i->inum,
				     "check: data node of inode %u at LEB %u:%u ends at byte %llu, beyond the inode "
				     "size %llu",
				     i->inum, zb->lnum, zb->offs, ULL(end), ULL(i->size));
		return 0;
	}
	case UBIFS_DENT_KEY:
	case UBIFS_XENT_KEY: {
		struct ubifs_dent_node d;
		ubifs_dent_unpack(fs->nbuf, &d);
		if (c->n_refs == c->cap_refs) {
			size_t cap = c->cap_refs ? c->cap_refs * 2 : 256;
			struct ck_ref *n = realloc(c->refs, cap * sizeof(*n));
			if (!n)
				return -ENOMEM;
			c->refs = n;
			c->cap_refs = cap;
		}
		if (d.inum > UBIFS_MAX_INUM || d.inum == 0)
			return CKERR(c, zb->lnum, zb->offs, zb->key.inum, "check: entry at LEB %u:%u names inode %llu",
				     zb->lnum, zb->offs, ULL(d.inum));
		c->refs[c->n_refs++] = (struct ck_ref){zb->key.inum, (uint32_t)d.inum, d.nlen,
						       type == UBIFS_XENT_KEY, d.type, zb->lnum, zb->offs};
		return 0;
	}
	default:
		return CKERR(c, zb->lnum, zb->offs, zb->key.inum, "check: leaf at LEB %u:%u has key type %u", zb->lnum,
			     zb->offs, type);
	}
}

static int walk_leaves(struct ck *c)
{
	struct ubifs_fs *fs = c->fs;
	struct ubifs_key k = {0, 0}, prev = {0, 0};
	struct ubifs_tnc_pos pos;
	int first = 1;
	int err = ubifs_tnc_seek(fs, &k, 0, &pos);
	while (!err) {
		const struct ubifs_zbranch *zb = ubifs_tnc_at(&pos);
		struct ubifs_zbranch copy = *zb;
		int cmp = ubifs_key_cmp(&copy.key, &prev);
		if (!first && (cmp < 0 || (cmp == 0 && !ubifs_key_is_hash(&copy.key)))) {
			char a[64], b[64];
			err = CKERR(c, copy.lnum, copy.offs, copy.key.inum,
				    "check: index leaves out of order: %s at LEB %u:%u after %s",
				    ubifs_key_str(&copy.key, a, sizeof(a)), copy.lnum, copy.offs,
				    ubifs_key_str(&prev, b, sizeof(b)));
		} else {
			first = 0;
			prev = copy.key;
			err = leaf(c, &copy);
		}
		if (err)
			return err;
		err = ubifs_tnc_next(fs, &pos);
	}
	if (err == -ENOENT || err == -ENOMEM)
		return err == -ENOENT ? 0 : err;
	/* the in-memory index cannot be walked further */
	return CKERR(c, -1, -1, 0, "check: the index cannot be walked past %s: %s",
		     first ? "its start" : "the last leaf", util_err_msg(&fs->err));
}

static int check_inodes(struct ck *c)
{
	int err = 0;
	for (size_t r = 0; !err && r < c->n_refs; r++) {
		const struct ck_ref *e = &c->refs[r];
		struct ck_ino *p = find_ino(c, e->parent), *t = find_ino(c, e->target);
		if (!p) {
			err = CKERR(c, e->lnum, e->offs, e->parent, "check: %s at LEB %u:%u: its host inode %u does not exist",
				    e->xent ? "xattr entry" : "entry", e->lnum, e->offs, e->parent);
			continue;
		}
		if (!t) {
			err = CKERR(c, e->lnum, e->offs, e->parent,
				    "check: entry at LEB %u:%u of inode %u names inode %u, which does not exist", e->lnum,
				    e->offs, e->parent, e->target);
			continue;
		}
		t->refs++;
		if (e->xent) {
			if (!(t->flags & UBIFS_XATTR_FL)) {
				err = CKERR(c, e->lnum, e->offs, e->parent,
					    "check: xattr entry at LEB %u:%u names inode %u without the xattr flag",
					    e->lnum, e->offs, e->target);
				continue;
			}
			p->calc_xcnt++;
			p->calc_xsz += DENT_SIZE(e->nlen) + XATTR_BYTES(t->size);
			p->calc_xnms += e->nlen;
		} else {
			if (!S_ISDIR(p->mode)) {
				err = CKERR(c, e->lnum, e->offs, e->parent,
					    "check: entry at LEB %u:%u is in inode %u, which is not a directory", e->lnum,
					    e->offs, e->parent);
				continue;
			}
			if (t->flags & UBIFS_XATTR_FL) {
				err = CKERR(c, e->lnum, e->offs, e->parent, "check: entry at LEB %u:%u names xattr inode %u",
					    e->lnum, e->offs, e->target);
				continue;
			}
			p->calc_sz += DENT_SIZE(e->nlen);
			if (S_ISDIR(t->mode))
				p->subdirs++;
		}
	}
	int quirk = c->fs->read_only && c->fs->orphans_killed > 0;
	for (size_t n = 0; !err && n < c->n_inos; n++) {
		const struct ck_ino *i = &c->inos[n];
		if (i->nlink == 0) {
			if (!ubifs_orph_is_orphan(c->fs->orph, i->inum))
				err = CKERR(c, i->lnum, i->offs, i->inum,
					    "check: inode %u at LEB %u:%u has link count 0 and is not an orphan", i->inum,
					    i->lnum, i->offs);
			else if (i->refs)
				err = CKERR(c, i->lnum, i->offs, i->inum,
					    "check: orphan inode %u is named by %u entries, expected 0", i->inum, i->refs);
		} else if (S_ISDIR(i->mode)) {
			uint32_t want_refs = i->inum == UBIFS_ROOT_INO_NUM ? 0 : 1;
			if (i->refs != want_refs)
				err = CKERR(c, i->lnum, i->offs, i->inum,
					    "check: directory inode %u is named by %u entries, expected %u", i->inum, i->refs,
					    want_refs);
			if (!err && i->nlink != 2 + i->subdirs)
				err = CKERR(c, i->lnum, i->offs, i->inum,
					    "check: directory inode %u has link count %u, expected %u (2 + subdirectories)",
					    i->inum, i->nlink, 2 + i->subdirs);
			if (!err && i->size != UBIFS_INO_NODE_SZ + i->calc_sz)
				err = CKERR(c, i->lnum, i->offs, i->inum,
					    "check: directory inode %u has size %llu, expected %llu (160 + its entries)",
					    i->inum, ULL(i->size), ULL(UBIFS_INO_NODE_SZ + i->calc_sz));
		} else if (i->refs != i->nlink) {
			int left = quirk && (i->flags & UBIFS_XATTR_FL) && i->refs == 0 && i->nlink == 1;
			if (!left)
				err = CKERR(c, i->lnum, i->offs, i->inum,
					    "check: inode %u at LEB %u:%u has link count %u, but %u entries name it", i->inum,
					    i->lnum, i->offs, i->nlink, i->refs);
		}
		if (!err &&
		    (i->xattr_cnt != i->calc_xcnt || i->xattr_size != i->calc_xsz || i->xattr_names != i->calc_xnms))
			err = CKERR(c, i->lnum, i->offs, i->inum,
				    "check: inode %u at LEB %u:%u has xattr count/size/names %u/%llu/%u, its xattr "
				    "entries give %u/%llu/%u",
				    i->inum, i->lnum, i->offs, i->xattr_cnt, ULL(i->xattr_size), i->xattr_names, i->calc_xcnt,
				    ULL(i->calc_xsz), i->calc_xnms);
	}
	if (!err && !find_ino(c, UBIFS_ROOT_INO_NUM))
		err = CKERR(c, -1, -1, UBIFS_ROOT_INO_NUM, "check: the root inode 1 is missing");
	return err;
}

int ubifs_check_report(struct ubifs_fs *fs, ubifs_check_cb cb, void *ctx, unsigned long *problems)
{
	if (!fs)
		return -EINVAL;
	struct ck c = {.fs = fs, .cb = cb, .cb_ctx = ctx};
	/* the LPT check scans the LEBs: the journal heads' buffers first (as
	 * the kernel's dbg_check_lprops) */
	if (!fs->read_only && fs->jnl && !fs->ro_error) {
		int e = ubifs_jnl_sync_all(fs);
		if (e)
			return e;
	}
	struct ubifs_key lo = {0, 0}, hi = {0, 0};
	/* the committed index, from the master node */
	int err = check_idx(&c, fs->mst.root_lnum, fs->mst.root_offs, fs->mst.root_len, -1, &lo, &hi, 0);
	if (!err && !c.idx_bad && fs->tnc.root && !fs->tnc.root->dirty && c.idx_size != fs->mst.index_size &&
	    !(fs->read_only && fs->need_recovery))
		err = CKERR(&c, fs->mst_lnum, fs->mst_offs, 0,
			    "check: the index nodes take %llu bytes, the master node at LEB %u:%u says %llu",
			    ULL(c.idx_size), fs->mst_lnum, fs->mst_offs, ULL(fs->mst.index_size));
	if (!err)
		err = walk_leaves(&c);
	if (!err)
		err = check_inodes(&c);
	/* after an unclean unmount a read-only mount leaves the torn tails on
	 * flash (the kernel fixes them only when mounting read-write), so a
	 * scan cannot match the LPT then */
	if (!err && fs->lpt && !(fs->read_only && fs->need_recovery)) {
		int e = ubifs_lpt_check(fs->lpt);
		if (e == -ENOMEM)
			err = e;
		else if (e)
			err = CKERR(&c, -1, -1, 0, "%s", util_err_msg(&fs->err));
	}
	free(c.inos);
	free(c.refs);
	ubifs_tnc_shrink(fs);
	if (problems)
		*problems = c.problems;
	return err;
}

/* ubifs_check: the first problem becomes the error message */
struct first_problem {
	char msg[UTIL_ERR_MSG_MAX];
	int have;
};

static int first_cb(void *ctx, const char *msg, int64_t lnum, int64_t offs, uint64_t inum)
{
	struct first_problem *f = ctx;
	(void)lnum, (void)offs, (void)inum;
	if (!f->have) {
		snprintf(f->msg, sizeof(f->msg), "%s", msg);
		f->have = 1;
	}
	return 0;
}

int ubifs_check(struct ubifs_fs *fs)
{
	struct first_problem f = {.have = 0};
	unsigned long n = 0;
	int err = ubifs_check_report(fs, first_cb, &f, &n);
	if (err)
		return err;
	if (f.have)
		return util_err_set(&fs->err, -EUCLEAN, "%s", f.msg);
	return 0;
}
