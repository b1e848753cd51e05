/* ubifs_rebuild — see ubifs_rebuild.h. Steps: read the superblock; scan
 * every main-area LEB (ubifs_scan_leb, lenient: broken nodes are skipped);
 * keep the newest node per key (a truncation node drops older data past its
 * size, a node older than its inode's creation belongs to an earlier life);
 * check each inode by the kernel's iget rules and each entry by its own;
 * link the tree from the root; recompute; lay it out with ubifs_build with
 * the old superblock's geometry, compressor and UUID. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ubi/ubi_vol_io.h"
#include "ubifs/ubifs.h"
#include "ubifs/ubifs_build.h"
#include "ubifs/ubifs_media.h"
#include "ubifs/ubifs_rebuild.h"
#include "ubifs/ubifs_scan.h"
#include "util/util_endian.h"

#define DENT_SIZE(nlen) ubifs_align8(UBIFS_DENT_NODE_SZ + (uint32_t)(nlen) + 1)
#define XATTR_BYTES(len) ubifs_align8(UBIFS_INO_NODE_SZ + (uint32_t)(len) + 1)

struct rnode {
	struct ubifs_key key;
	uint64_t sqnum;
	uint32_t lnum, offs, len;
	uint8_t type;
	uint8_t *buf;
	int drop;
};

struct rtrun {
	uint32_t inum;
	uint64_t sqnum, new_size;
};

struct rino { /* an inode kept, and what is computed for it */
	uint32_t inum;
	struct rnode *n;
	struct ubifs_ino_node in;
	uint32_t refs, subdirs, xcnt, xnms;
	uint64_t dsize, xsize, data_end;
	int reachable;
	struct rnode *name; /* directories: the entry kept */
};

struct rb {
	struct ubi_vol_io *vol;
	struct ubifs_sb_node sb;
	struct rnode *v;
	size_t n, cap;
	struct rtrun *t;
	size_t nt, capt;
	struct rino *inos;
	size_t ninos;
	ubifs_rebuild_cb cb;
	void *ctx;
	unsigned long losses, changes;
	int err;
};

__attribute__((format(printf, 6, 7))) static void note(struct rb *r, int loss, int64_t lnum, int64_t offs,
						     uint64_t inum, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	r->changes++;
	if (loss)
		r->losses++;
	if (r->cb && !r->err) {
		int e = r->cb(r->ctx, loss, msg, lnum, offs, inum);
		if (e)
			r->err = e;
	}
}

static int scan_cb(void *arg, const struct ubifs_scan_node *s)
{
	struct rb *r = arg;
	if (s->kind != UBIFS_SCAN_NODE || !s->crc_ok)
		return 0;
	if (s->type == UBIFS_TRUN_NODE) {
		if (r->nt == r->capt) {
			size_t c = r->capt ? r->capt * 2 : 64;
			struct rtrun *nt = realloc(r->t, c * sizeof(*nt));
			if (!nt)
				return -ENOMEM;
			r->t = nt;
			r->capt = c;
		}
		struct ubifs_trun_node t;
		ubifs_trun_unpack(s->node, &t);
		r->t[r->nt++] = (struct rtrun){t.inum, s->sqnum, t.new_size};
		return 0;
	}
	if (!s->has_key || (s->type != UBIFS_INO_NODE && s->type != UBIFS_DATA_NODE && s->type != UBIFS_DENT_NODE &&
			    s->type != UBIFS_XENT_NODE))
		return 0;
	if (r->n == r->cap) {
		size_t c = r->cap ? r->cap * 2 : 256;
		struct rnode *nv = realloc(r->v, c * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		r->v = nv;
		r->cap = c;
	}
	uint8_t *b = malloc(s->len);
	if (!b)
		return -ENOMEM;
	memcpy(b, s->node, s->len);
	r->v[r->n++] = (struct rnode){s->key, s->sqnum, s->lnum, s->offs, s->len, s->type, b, 0};
	return 0;
}

static int cmp_node(const void *a, const void *b)
{
	const struct rnode *x = a, *y = b;
	int c = ubifs_key_cmp(&x->key, &y->key);
	if (c)
		return c;
	return x->sqnum > y->sqnum ? -1 : x->sqnum < y->sqnum; /* newest first */
}

static struct rino *find_ino(struct rb *r, uint32_t inum)
{
	size_t lo = 0, hi = r->ninos;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (r->inos[mid].inum < inum)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < r->ninos && r->inos[lo].inum == inum ? &r->inos[lo] : NULL;
}

/* the kernel's iget rules (as ubifs_file.c applies them on read) */
static const char *ino_bad(const struct ubifs_ino_node *n, uint32_t len)
{
	if (n->size > UBIFS_MAX_INODE_SZ)
		return "inode is too large";
	if (n->compr_type >= UBIFS_COMPR_TYPES_CNT)
		return "unknown compression type";
	if ((uint64_t)n->xattr_names + n->xattr_cnt > UBIFS_XATTR_LIST_MAX)
		return "too many xattr names";
	if (n->data_len > UBIFS_MAX_INO_DATA || UBIFS_INO_NODE_SZ + n->data_len != len)
		return "bad inline data length";
	if ((n->flags & UBIFS_XATTR_FL) && !S_ISREG(n->mode))
		return "xattr flag on a non-regular inode";
	switch (n->mode & S_IFMT) {
	case S_IFREG:
		return !(n->flags & UBIFS_XATTR_FL) && n->data_len ? "regular file with inline data" : NULL;
	case S_IFDIR:
		return n->data_len ? "directory with inline data" : NULL;
	case S_IFLNK:
		return n->data_len == 0 || n->data_len != n->size ? "bad symlink length" : NULL;
	case S_IFBLK:
	case S_IFCHR:
		return n->data_len != 4 && n->data_len != 8 ? "device without a device number" : NULL;
	case S_IFSOCK:
	case S_IFIFO:
		return n->data_len ? "fifo/socket with inline data" : NULL;
	default:
		return "unknown file type in mode";
	}
}

static unsigned itype_of(uint32_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFDIR: return UBIFS_ITYPE_DIR;
	case S_IFLNK: return UBIFS_ITYPE_LNK;
	case S_IFBLK: return UBIFS_ITYPE_BLK;
	case S_IFCHR: return UBIFS_ITYPE_CHR;
	case S_IFIFO: return UBIFS_ITYPE_FIFO;
	case S_IFSOCK: return UBIFS_ITYPE_SOCK;
	default: return UBIFS_ITYPE_REG;
	}
}

/* newest node per key; inodes checked */
static int pick(struct rb *r)
{
	if (r->n)
		qsort(r->v, r->n, sizeof(*r->v), cmp_node);
	size_t k = 0;
	for (size_t i = 0; i < r->n; i++) {
		if (i > 0 && !ubifs_key_cmp(&r->v[i].key, &r->v[i - 1].key)) {
			r->v[i].drop = 1; /* older version */
			continue;
		}
		struct rnode *n = &r->v[i];
		unsigned kt = ubifs_key_type(&n->key);
		unsigned want = kt == UBIFS_INO_KEY ? UBIFS_INO_NODE : kt == UBIFS_DATA_KEY ? UBIFS_DATA_NODE
							 : kt == UBIFS_DENT_KEY ? UBIFS_DENT_NODE : UBIFS_XENT_NODE;
		if (n->type != want) {
			note(r, 1, n->lnum, n->offs, n->key.inum, "LEB %u:%u: %s node with a key of another type: dropped",
			     n->lnum, n->offs, ubifs_node_type_name(n->type));
			n->drop = 1;
			continue;
		}
		if (kt == UBIFS_INO_KEY)
			k++;
	}
	r->inos = calloc(k ? k : 1, sizeof(*r->inos));
	if (!r->inos)
		return -ENOMEM;
	for (size_t i = 0; i < r->n; i++) {
		struct rnode *n = &r->v[i];
		if (n->drop || ubifs_key_type(&n->key) != UBIFS_INO_KEY)
			continue;
		struct ubifs_ino_node in;
		ubifs_ino_unpack(n->buf, &in);
		n->drop = 1;
		if (in.nlink == 0)
			continue; /* deleted */
		const char *bad = ino_bad(&in, n->len);
		if (bad) {
			note(r, 1, n->lnum, n->offs, n->key.inum, "inode %u at LEB %u:%u: %s (mode 0%o): dropped",
			     n->key.inum, n->lnum, n->offs, bad, in.mode);
			continue;
		}
		n->drop = 0;
		struct rino *ri = &r->inos[r->ninos++];
		memset(ri, 0, sizeof(*ri));
		ri->inum = n->key.inum;
		ri->n = n;
		ri->in = in;
	}
	return 0;
}

static uint64_t trun_limit(const struct rb *r, uint32_t inum, uint64_t sqnum)
{
	uint64_t lim = UINT64_MAX;
	for (size_t i = 0; i < r->nt; i++)
		if (r->t[i].inum == inum && r->t[i].sqnum > sqnum && r->t[i].new_size < lim)
			lim = r->t[i].new_size;
	return lim;
}

static void check_leaves(struct rb *r)
{
	for (size_t i = 0; i < r->n; i++) {
		struct rnode *n = &r->v[i];
		unsigned kt = ubifs_key_type(&n->key);
		if (n->drop || kt == UBIFS_INO_KEY)
			continue;
		struct rino *host = find_ino(r, n->key.inum);
		if (kt == UBIFS_DATA_KEY) {
			struct ubifs_data_node d;
			ubifs_data_unpack(n->buf, n->len, &d);
			uint64_t start = (uint64_t)ubifs_key_value(&n->key) * UBIFS_BLOCK_SIZE;
			if (!host || !S_ISREG(host->in.mode) || n->sqnum < host->in.creat_sqnum) {
				n->drop = 1; /* deleted file, or an earlier life of the number */
				continue;
			}
			if (d.size > UBIFS_BLOCK_SIZE || d.compr_type >= UBIFS_COMPR_TYPES_CNT) {
				note(r, 1, n->lnum, n->offs, n->key.inum,
				     "data node of inode %u at LEB %u:%u: bad size %u or compressor %u: dropped", n->key.inum,
				     n->lnum, n->offs, d.size, d.compr_type);
				n->drop = 1;
				continue;
			}
			if (start >= trun_limit(r, n->key.inum, n->sqnum)) {
				n->drop = 1; /* truncated away */
				continue;
			}
			if (start + d.size > host->data_end)
				host->data_end = start + d.size;
			continue;
		}
		/* entries */
		const char *bad = ubifs_dent_check(n->buf, n->len);
		struct ubifs_dent_node d;
		if (!bad)
			ubifs_dent_unpack(n->buf, &d);
		if (!bad && d.inum == 0) {
			n->drop = 1; /* a deletion entry */
			continue;
		}
		if (!bad && ubifs_name_hash(r->sb.key_hash, d.name, d.nlen) != ubifs_key_value(&n->key))
			bad = "its key's hash is not its name's";
		struct rino *t = bad ? NULL : find_ino(r, (uint32_t)d.inum);
		if (!bad && (!host || n->sqnum < host->in.creat_sqnum))
			bad = kt == UBIFS_XENT_KEY ? "its host inode is gone" : "its directory is gone";
		else if (!bad && !t)
			bad = "the inode it names is gone";
		else if (!bad && kt == UBIFS_DENT_KEY && !S_ISDIR(host->in.mode))
			bad = "it is in an inode that is not a directory";
		else if (!bad && kt == UBIFS_DENT_KEY && (t->in.flags & UBIFS_XATTR_FL))
			bad = "it names an xattr inode";
		else if (!bad && kt == UBIFS_XENT_KEY && !(t->in.flags & UBIFS_XATTR_FL))
			bad = "it names an inode without the xattr flag";
		else if (!bad && d.type != itype_of(t->in.mode))
			bad = "its type is not its inode's";
		else if (!bad && kt == UBIFS_DENT_KEY && S_ISDIR(t->in.mode) && t->name)
			bad = "the directory has another name";
		if (bad) {
			note(r, 1, n->lnum, n->offs, n->key.inum, "%s at LEB %u:%u (in inode %u): %s: dropped",
			     kt == UBIFS_XENT_KEY ? "xattr entry" : "entry", n->lnum, n->offs, n->key.inum, bad);
			n->drop = 1;
			continue;
		}
		if (kt == UBIFS_DENT_KEY && S_ISDIR(t->in.mode))
			t->name = n;
	}
}

int ubifs_rebuild(struct ubi_vol_io *vol, int dry_run, ubifs_rebuild_cb cb, void *ctx, unsigned long *losses,
		  struct util_err *e)
{
	struct rb r = {.vol = vol, .cb = cb, .ctx = ctx};
	int err = ubifs_read_sb(vol, &r.sb, e);
	if (err)
		return err;
	uint32_t main_first = 3 /* superblock, 2 master */ + r.sb.log_lebs + r.sb.lpt_lebs + r.sb.orph_lebs;
	uint32_t leb_cnt = r.sb.leb_cnt < vol->leb_count ? r.sb.leb_cnt : vol->leb_count;
	for (uint32_t lnum = main_first; !err && lnum < leb_cnt; lnum++) {
		err = ubifs_scan_leb(vol, lnum, r.sb.fanout, scan_cb, &r);
		if (err > 0 || err == -EBADMSG || err == -EUCLEAN) {
			note(&r, 1, lnum, -1, 0, "LEB %u cannot be read whole (%d): its nodes after the damage are lost",
			     lnum, err);
			err = 0;
		}
	}
	if (!err)
		err = pick(&r);
	if (!err)
		check_leaves(&r);
	(void)dry_run;
	err = err ? err : r.err;
	if (err)
		util_err_set(e, err, "rebuild: %s", err == -ENOMEM ? "out of memory" : "stopped");
	if (losses)
		*losses = r.losses;
	for (size_t i = 0; i < r.n; i++)
		free(r.v[i].buf);
	free(r.v);
	free(r.t);
	free(r.inos);
	return err;
}
