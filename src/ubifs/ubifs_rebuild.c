/* ubifs_rebuild — see ubifs_rebuild.h. Steps: read the superblock; scan
 * every main-area LEB (ubifs_scan_leb, lenient: broken nodes are skipped);
 * keep the newest node per key (per key and name for entries, whose names
 * may hash alike; a truncation node drops older data past its
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
	struct rnode *extra; /* entries made by the repair (lost+found) */
	size_t nextra;
	struct rino root_new, lf_new;
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

/* the name of an entry node (NULL, 0 for anything else or a short node):
 * entries whose names hash alike share a key, and each is its own entry */
static const uint8_t *entry_name(const struct rnode *n, uint32_t *nlen)
{
	*nlen = 0;
	if ((n->type != UBIFS_DENT_NODE && n->type != UBIFS_XENT_NODE) || n->len < UBIFS_DENT_NODE_SZ)
		return NULL;
	uint32_t l = get_le16(n->buf + 50);
	if (UBIFS_DENT_NODE_SZ + l > n->len)
		return NULL;
	*nlen = l;
	return n->buf + UBIFS_DENT_NODE_SZ;
}

/* same key and, for entries, the same name */
static int cmp_name(const struct rnode *x, const struct rnode *y)
{
	uint32_t xl, yl;
	const uint8_t *xn = entry_name(x, &xl), *yn = entry_name(y, &yl);
	if (!xn || !yn)
		return (xn != NULL) - (yn != NULL);
	int c = memcmp(xn, yn, xl < yl ? xl : yl);
	return c ? c : (xl > yl) - (xl < yl);
}

static int cmp_node(const void *a, const void *b)
{
	const struct rnode *x = a, *y = b;
	int c = ubifs_key_cmp(&x->key, &y->key);
	if (!c)
		c = cmp_name(x, y);
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

/* newest node per key (and name); inodes checked */
static int pick(struct rb *r)
{
	if (r->n)
		qsort(r->v, r->n, sizeof(*r->v), cmp_node);
	size_t k = 0;
	const struct rnode *good = NULL;
	for (size_t i = 0; i < r->n; i++) {
		struct rnode *n = &r->v[i];
		unsigned kt = ubifs_key_type(&n->key);
		/* older than the newest well-typed node of the same key (and name) */
		int older = good && !ubifs_key_cmp(&n->key, &good->key) && !cmp_name(n, good);
		unsigned want = kt == UBIFS_INO_KEY ? UBIFS_INO_NODE : kt == UBIFS_DATA_KEY ? UBIFS_DATA_NODE
							 : kt == UBIFS_DENT_KEY ? UBIFS_DENT_NODE : UBIFS_XENT_NODE;
		if (n->type != want) { /* even when older: a name or data of its own is lost */
			note(r, 1, n->lnum, n->offs, n->key.inum, "LEB %u:%u: %s node with a key of another type: dropped",
			     n->lnum, n->offs, ubifs_node_type_name(n->type));
			n->drop = 1;
			continue;
		}
		if (older) {
			n->drop = 1;
			continue;
		}
		good = n;
		if (kt == UBIFS_INO_KEY)
			k++;
	}
	r->inos = calloc(k + 2, sizeof(*r->inos)); /* + a new root and lost+found */
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

/* the first node >= key */
static size_t lower_bound(const struct rb *r, const struct ubifs_key *key)
{
	size_t lo = 0, hi = r->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (ubifs_key_cmp(&r->v[mid].key, key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void new_dir(struct rb *r, struct rino *ri, uint32_t inum)
{
	memset(ri, 0, sizeof(*ri));
	ri->inum = inum;
	ri->in.key = ubifs_key_make(inum, UBIFS_INO_KEY, 0);
	ri->in.mode = S_IFDIR | 0755;
	ri->in.nlink = 2;
	ri->in.size = UBIFS_INO_NODE_SZ;
	ri->in.flags = UBIFS_COMPR_FL;
	ri->in.compr_type = r->sb.default_compr;
}

/* insert a new inode into the sorted table (room was made in pick) */
static struct rino *insert_ino(struct rb *r, const struct rino *ri)
{
	size_t at = 0;
	while (at < r->ninos && r->inos[at].inum < ri->inum)
		at++;
	memmove(&r->inos[at + 1], &r->inos[at], (r->ninos - at) * sizeof(*r->inos));
	r->inos[at] = *ri;
	r->ninos++;
	return &r->inos[at];
}

static int add_extra(struct rb *r, uint32_t dir, const char *name, uint32_t inum, unsigned type)
{
	uint16_t nlen = (uint16_t)strlen(name);
	uint32_t len = UBIFS_DENT_NODE_SZ + nlen + 1;
	uint8_t *b = calloc(1, len);
	if (!b)
		return -ENOMEM;
	struct ubifs_key k = ubifs_key_make(dir, UBIFS_DENT_KEY, ubifs_name_hash(r->sb.key_hash, name, nlen));
	ubifs_dent_pack(b, &k, inum, (uint8_t)type, name, nlen, 0, 0);
	r->extra[r->nextra++] = (struct rnode){k, 0, 0, 0, len, UBIFS_DENT_NODE, b, 0};
	return 0;
}

static int name_taken(const struct rb *r, uint32_t dir, const char *name)
{
	struct ubifs_key k = ubifs_key_make(dir, UBIFS_DENT_KEY, ubifs_name_hash(r->sb.key_hash, name, strlen(name)));
	for (size_t i = lower_bound(r, &k); i < r->n && !ubifs_key_cmp(&r->v[i].key, &k); i++)
		if (!r->v[i].drop)
			return 1;
	for (size_t i = 0; i < r->nextra; i++)
		if (!ubifs_key_cmp(&r->extra[i].key, &k))
			return 1;
	return 0;
}

/* the tree from the root: reachability, lost+found */
static int link_tree(struct rb *r, uint32_t *highest)
{
	struct rino *root = find_ino(r, UBIFS_ROOT_INO_NUM);
	if (root && !S_ISDIR(root->in.mode)) {
		note(r, 1, root->n->lnum, root->n->offs, 1, "the root inode 1 is not a directory: dropped");
		root->n->drop = 1;
		memmove(root, root + 1, (r->ninos - (size_t)(root - r->inos) - 1) * sizeof(*root));
		r->ninos--;
		root = NULL;
	}
	if (!root) {
		note(r, 1, -1, -1, 1, "the root directory is missing: made anew (its old entries are lost)");
		new_dir(r, &r->root_new, UBIFS_ROOT_INO_NUM);
		root = insert_ino(r, &r->root_new);
		for (size_t i = 0; i < r->n; i++) /* entries of the old root */
			if (!r->v[i].drop && r->v[i].key.inum == UBIFS_ROOT_INO_NUM &&
			    ubifs_key_type(&r->v[i].key) != UBIFS_INO_KEY)
				r->v[i].drop = 1;
	}
	/* breadth first over directories */
	uint32_t *queue = malloc((r->ninos + 1) * sizeof(*queue));
	if (!queue)
		return -ENOMEM;
	size_t qh = 0, qt = 0;
	root->reachable = 1;
	queue[qt++] = UBIFS_ROOT_INO_NUM;
	while (qh < qt) {
		uint32_t dir = queue[qh++];
		struct ubifs_key k = ubifs_key_make(dir, UBIFS_DENT_KEY, 0);
		for (size_t i = lower_bound(r, &k); i < r->n && r->v[i].key.inum == dir &&
						      ubifs_key_type(&r->v[i].key) == UBIFS_DENT_KEY;
		     i++) {
			if (r->v[i].drop)
				continue;
			struct rino *t = find_ino(r, (uint32_t)get_le64(r->v[i].buf + 40));
			if (t && !t->reachable) {
				t->reachable = 1;
				if (S_ISDIR(t->in.mode))
					queue[qt++] = t->inum;
			}
		}
	}
	free(queue);
	/* lost+found in the root */
	size_t lost = 0;
	for (size_t i = 0; i < r->ninos; i++)
		if (!r->inos[i].reachable && S_ISREG(r->inos[i].in.mode) && !(r->inos[i].in.flags & UBIFS_XATTR_FL))
			lost++;
	r->extra = calloc(lost + 1, sizeof(*r->extra));
	if (!r->extra)
		return -ENOMEM;
	uint32_t lf = 0;
	int lf_ok = 0;
	if (lost) {
		struct ubifs_key k = ubifs_key_make(1, UBIFS_DENT_KEY, ubifs_name_hash(r->sb.key_hash, "lost+found", 10));
		for (size_t i = lower_bound(r, &k); i < r->n && !ubifs_key_cmp(&r->v[i].key, &k); i++) {
			struct ubifs_dent_node d;
			if (r->v[i].drop)
				continue;
			ubifs_dent_unpack(r->v[i].buf, &d);
			if (d.nlen == 10 && !memcmp(d.name, "lost+found", 10)) {
				struct rino *t = find_ino(r, (uint32_t)d.inum);
				lf = (uint32_t)d.inum;
				lf_ok = t && S_ISDIR(t->in.mode);
			}
		}
		if (!lf) {
			lf = ++*highest;
			new_dir(r, &r->lf_new, lf);
			r->lf_new.reachable = 1;
			insert_ino(r, &r->lf_new);
			int e = add_extra(r, 1, "lost+found", lf, UBIFS_ITYPE_DIR);
			if (e)
				return e;
			note(r, 0, -1, -1, lf, "/lost+found made (inode %u)", lf);
			lf_ok = 1;
		}
	}
	for (size_t i = 0; i < r->ninos; i++) {
		struct rino *ri = &r->inos[i];
		if (ri->reachable || (ri->in.flags & UBIFS_XATTR_FL))
			continue;
		if (S_ISREG(ri->in.mode) && lf_ok) {
			char name[48];
			for (unsigned n = 0;; n++) {
				snprintf(name, sizeof(name), "INO_%u_%u", ri->inum, n);
				if (!name_taken(r, lf, name))
					break;
			}
			int e = add_extra(r, lf, name, ri->inum, UBIFS_ITYPE_REG);
			if (e)
				return e;
			ri->reachable = 1;
			note(r, 0, ri->n ? (int64_t)ri->n->lnum : -1, ri->n ? (int64_t)ri->n->offs : -1, ri->inum,
			     "inode %u is not reachable from the root: moved to /lost+found/%s", ri->inum, name);
		} else {
			note(r, 1, ri->n ? (int64_t)ri->n->lnum : -1, ri->n ? (int64_t)ri->n->offs : -1, ri->inum,
			     "inode %u (mode 0%o) is not reachable from the root%s: dropped", ri->inum, ri->in.mode,
			     S_ISREG(ri->in.mode) ? " and /lost+found is not a directory" : "");
			if (ri->n)
				ri->n->drop = 1;
		}
	}
	return 0;
}

/* counts from the entries kept; xattr inodes without an entry dropped */
static void recount(struct rb *r)
{
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < r->ninos; i++) {
			struct rino *ri = &r->inos[i];
			ri->refs = ri->subdirs = ri->xcnt = ri->xnms = 0;
			ri->dsize = ri->xsize = 0;
		}
		for (size_t j = 0; j < r->n + r->nextra; j++) {
			struct rnode *n = j < r->n ? &r->v[j] : &r->extra[j - r->n];
			unsigned kt = ubifs_key_type(&n->key);
			if (n->drop || (kt != UBIFS_DENT_KEY && kt != UBIFS_XENT_KEY))
				continue;
			struct rino *h = find_ino(r, n->key.inum), *t = find_ino(r, (uint32_t)get_le64(n->buf + 24 + 16));
			if (!h || !t || !h->reachable || (h->n && h->n->drop) || (t->n && t->n->drop)) {
				n->drop = 1;
				continue;
			}
			uint16_t nlen = get_le16(n->buf + 24 + 26);
			t->refs++;
			if (kt == UBIFS_XENT_KEY) {
				h->xcnt++;
				h->xsize += DENT_SIZE(nlen) + XATTR_BYTES(t->in.size);
				h->xnms += nlen;
			} else {
				h->dsize += DENT_SIZE(nlen);
				if (S_ISDIR(t->in.mode))
					h->subdirs++;
			}
		}
		for (size_t i = 0; pass == 0 && i < r->ninos; i++) {
			struct rino *ri = &r->inos[i];
			if ((ri->in.flags & UBIFS_XATTR_FL) && !ri->refs && ri->n && !ri->n->drop) {
				note(r, 1, ri->n->lnum, ri->n->offs, ri->inum,
				     "xattr inode %u has no entry naming it: dropped", ri->inum);
				ri->n->drop = 1;
			}
		}
	}
}

struct out {
	struct ubifs_key key;
	uint8_t *buf;
	uint32_t len;
	int owned;
};

static int cmp_out(const void *a, const void *b)
{
	return ubifs_key_cmp(&((const struct out *)a)->key, &((const struct out *)b)->key);
}

/* the new inode node of ri, with the counts; reports what changed */
static uint8_t *make_ino(struct rb *r, struct rino *ri, uint32_t *len)
{
	struct ubifs_ino_node in = ri->in;
	if (S_ISDIR(in.mode)) {
		in.nlink = 2 + ri->subdirs;
		in.size = UBIFS_INO_NODE_SZ + ri->dsize;
	} else if (!(in.flags & UBIFS_XATTR_FL)) {
		in.nlink = ri->refs;
		if (S_ISREG(in.mode) && ri->data_end > in.size)
			in.size = ri->data_end;
	}
	in.xattr_cnt = ri->xcnt;
	in.xattr_size = (uint32_t)ri->xsize;
	in.xattr_names = ri->xnms;
	if (ri->n && (in.nlink != ri->in.nlink || in.size != ri->in.size || in.xattr_cnt != ri->in.xattr_cnt ||
		      in.xattr_size != ri->in.xattr_size || in.xattr_names != ri->in.xattr_names))
		note(r, 0, ri->n->lnum, ri->n->offs, ri->inum,
		     "inode %u: link count %u, size %llu, xattrs %u/%u/%u corrected to %u, %llu, %u/%u/%u", ri->inum,
		     ri->in.nlink, (unsigned long long)ri->in.size, ri->in.xattr_cnt, ri->in.xattr_size,
		     ri->in.xattr_names, in.nlink, (unsigned long long)in.size, in.xattr_cnt, in.xattr_size,
		     in.xattr_names);
	*len = UBIFS_INO_NODE_SZ + in.data_len;
	uint8_t *b = calloc(1, *len);
	if (b)
		ubifs_ino_pack(b, &in, in.data, in.data_len, 0);
	return b;
}

static int write_new(struct rb *r, uint32_t highest, int dry_run, struct util_err *e)
{
	struct ubi_vol_io *vol = dry_run ? NULL : r->vol;
	size_t cnt = r->ninos + r->nextra;
	for (size_t i = 0; i < r->n; i++)
		cnt += !r->v[i].drop && ubifs_key_type(&r->v[i].key) != UBIFS_INO_KEY;
	struct out *o = calloc(cnt + 1, sizeof(*o));
	if (!o)
		return -ENOMEM;
	size_t k = 0;
	int err = 0;
	for (size_t i = 0; !err && i < r->ninos; i++) {
		struct rino *ri = &r->inos[i];
		if (ri->n && ri->n->drop)
			continue;
		uint32_t len;
		uint8_t *b = make_ino(r, ri, &len);
		if (!b)
			err = -ENOMEM;
		else
			o[k++] = (struct out){ri->in.key, b, len, 1};
	}
	for (size_t i = 0; i < r->n; i++) {
		struct rnode *n = &r->v[i];
		if (n->drop || ubifs_key_type(&n->key) == UBIFS_INO_KEY)
			continue;
		if (ubifs_key_type(&n->key) == UBIFS_DATA_KEY) { /* its inode must be kept */
			struct rino *h = find_ino(r, n->key.inum);
			if (!h || (h->n && h->n->drop))
				continue;
		}
		o[k++] = (struct out){n->key, n->buf, n->len, 0};
	}
	for (size_t i = 0; i < r->nextra; i++)
		if (!r->extra[i].drop)
			o[k++] = (struct out){r->extra[i].key, r->extra[i].buf, r->extra[i].len, 0};
	if (k)
		qsort(o, k, sizeof(*o), cmp_out);
	if (!err && vol) {
		struct ubifs_build_params p;
		memset(&p, 0, sizeof(p));
		p.min_io_size = r->sb.min_io_size;
		p.leb_size = r->sb.leb_size;
		p.max_leb_cnt = r->sb.max_leb_cnt;
		p.leb_cnt = r->sb.leb_cnt;
		p.max_bud_bytes = r->sb.max_bud_bytes;
		p.log_lebs = r->sb.log_lebs;
		p.orph_lebs = r->sb.orph_lebs;
		p.lpt_lebs = r->sb.lpt_lebs;
		p.fanout = r->sb.fanout;
		p.lsave_cnt = r->sb.lsave_cnt;
		p.key_hash = r->sb.key_hash;
		p.default_compr = r->sb.default_compr;
		p.rp_size = r->sb.rp_size;
		p.rp_uid = r->sb.rp_uid;
		p.rp_gid = r->sb.rp_gid;
		p.time_gran = r->sb.time_gran;
		p.double_hash = !!(r->sb.flags & UBIFS_FLG_DOUBLE_HASH);
		memcpy(p.uuid, r->sb.uuid, 16);
		p.kernel_limits = 1;
		/* the geometry is checked before anything is erased */
		struct ubifs_build *b = NULL;
		err = ubifs_build_new(&p, vol, &b, e);
		for (uint32_t l = 0; !err && l < vol->leb_count; l++)
			err = vol->unmap(vol->ctx, l);
		if (err && b)
			util_err_set(e, err, "rebuild: unmapping the volume's LEBs failed");
		for (size_t i = 0; !err && i < k; i++) {
			if (ubifs_key_type(&o[i].key) == UBIFS_INO_KEY) /* the new life of each inode */
				put_le64(o[i].buf + 40, ubifs_build_sqnum(b)); /* creat_sqnum */
			uint8_t *copy = malloc(o[i].len);
			if (!copy) {
				err = -ENOMEM;
				break;
			}
			memcpy(copy, o[i].buf, o[i].len);
			err = ubifs_build_add(b, copy, o[i].len, &o[i].key);
			free(copy);
		}
		if (!err)
			err = ubifs_build_finish(b, highest, NULL);
		if (err && b)
			util_err_set(e, err, "rebuild: %s", ubifs_build_errmsg(b));
		ubifs_build_free(b);
		if (!err && vol->sync)
			err = vol->sync(vol->ctx);
	}
	for (size_t i = 0; i < k; i++)
		if (o[i].owned)
			free(o[i].buf);
	free(o);
	return err;
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
	uint32_t highest = UBIFS_FIRST_INO - 1;
	for (size_t i = 0; i < r.ninos; i++)
		if (r.inos[i].inum > highest)
			highest = r.inos[i].inum;
	if (!err)
		err = link_tree(&r, &highest);
	if (!err) {
		recount(&r);
		err = r.err ? r.err : write_new(&r, highest, dry_run, e);
	}
	err = err ? err : r.err;
	if (err && !util_err_msg(e)[0])
		util_err_set(e, err, "rebuild: %s", err == -ENOMEM ? "out of memory" : "stopped");
	if (losses)
		*losses = r.losses;
	for (size_t i = 0; i < r.n; i++)
		free(r.v[i].buf);
	free(r.v);
	free(r.t);
	free(r.inos);
	for (size_t i = 0; i < r.nextra; i++)
		free(r.extra[i].buf);
	free(r.extra);
	return err;
}
