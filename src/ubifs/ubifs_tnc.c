/* ubifs_tnc — the index, loaded on demand, with a bounded znode cache and
 * in-memory changes (see ubifs_tnc.h for the invariant and the rules). */
#include "ubifs/ubifs_tnc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ubifs/ubifs_lpt.h"
#include "ubifs/ubifs_priv.h"
#include "util/util_endian.h"

static size_t znode_bytes(uint32_t cap)
{
	return sizeof(struct ubifs_znode) + (size_t)cap * sizeof(struct ubifs_zbranch);
}

static struct ubifs_znode *znode_alloc(struct ubifs_tnc *t, uint32_t cap)
{
	struct ubifs_znode *z = calloc(1, znode_bytes(cap));
	if (!z)
		return NULL;
	z->cap = (uint16_t)cap;
	t->bytes += znode_bytes(cap);
	if (t->bytes > t->peak)
		t->peak = t->bytes;
	return z;
}

static void znode_free(struct ubifs_tnc *t, struct ubifs_znode *z)
{
	t->bytes -= znode_bytes(z->cap);
	free(z->hashes);
	free(z);
}

static void lru_del(struct ubifs_tnc *t, struct ubifs_znode *z)
{
	if (!z->in_lru)
		return;
	if (z->lru_prev)
		z->lru_prev->lru_next = z->lru_next;
	else
		t->lru_head = z->lru_next;
	if (z->lru_next)
		z->lru_next->lru_prev = z->lru_prev;
	else
		t->lru_tail = z->lru_prev;
	z->lru_prev = z->lru_next = NULL;
	z->in_lru = 0;
	t->clean_bytes -= znode_bytes(z->cap);
}

static void lru_touch(struct ubifs_tnc *t, struct ubifs_znode *z)
{
	if (z->dirty || !z->parent) /* dirty znodes and the root are pinned */
		return;
	lru_del(t, z);
	z->lru_next = t->lru_head;
	if (t->lru_head)
		t->lru_head->lru_prev = z;
	t->lru_head = z;
	if (!t->lru_tail)
		t->lru_tail = z;
	z->in_lru = 1;
	t->clean_bytes += znode_bytes(z->cap);
}

/* Re-point the loaded children of z at z and recount them. */
static void fix_children(struct ubifs_znode *z)
{
	uint32_t cnt = 0;
	for (uint32_t i = 0; i < z->child_cnt; i++) {
		struct ubifs_znode *c = z->zbranch[i].child;
		if (c) {
			c->parent = z;
			c->iip = i;
			cnt++;
		}
	}
	z->loaded_children = cnt;
}

static void free_subtree(struct ubifs_tnc *t, struct ubifs_znode *z)
{
	if (!z)
		return;
	for (uint32_t i = 0; i < z->child_cnt; i++)
		free_subtree(t, z->zbranch[i].child);
	lru_del(t, z);
	znode_free(t, z);
}

/* Read, check and load the index node behind zbr (child of parent, or the
 * root when parent is NULL). */
static int load_znode(struct ubifs_fs *fs, struct ubifs_znode *parent, uint32_t iip, uint32_t lnum, uint32_t offs,
		      uint32_t len, struct ubifs_znode **out)
{
	struct ubifs_len_range r;
	ubifs_idx_len_range(fs->fanout, fs->hash_len, fs->leb_size, &r);
	if (lnum < fs->main_first || lnum >= fs->leb_cnt || (offs & 7) || (uint64_t)offs + len > fs->leb_size ||
	    len < r.min || len > r.max)
		return util_err_set(&fs->err, -EINVAL, "index: bad %s position LEB %u:%u len %u (main area %u..%u)",
				    parent ? "branch" : "root", lnum, offs, len, fs->main_first, fs->leb_cnt - 1);
	uint8_t *buf = malloc(len);
	if (!buf)
		return -ENOMEM;
	int err = ubifs_read_node(fs, buf, UBIFS_IDX_NODE, len, lnum, offs);
	if (err) {
		free(buf);
		return err;
	}
	if (fs->hash_len) {
		/* authenticated: the node's hash is in its parent's branch, the root's in the master */
		const uint8_t *want = parent ? parent->zbranch[iip].hash : fs->mst.hash_root_idx;
		err = want ? ubifs_auth_check(fs, buf, len, want, lnum, offs) : 0;
		if (err) {
			free(buf);
			return err;
		}
	}
	struct ubifs_idx_node idx;
	ubifs_idx_unpack_hash(buf, fs->hash_len, &idx);
	if (idx.child_cnt == 0 || idx.child_cnt > fs->fanout ||
	    UBIFS_IDX_NODE_SZ + (uint32_t)idx.child_cnt * idx.branch_sz > len || idx.level > UBIFS_MAX_LEVELS) {
		free(buf);
		return util_err_set(&fs->err, -EINVAL,
				    "index node at LEB %u:%u: %u branches, level %u (fanout %u, length %u)", lnum, offs,
				    idx.child_cnt, idx.level, fs->fanout, len);
	}
	if (parent && idx.level + 1 != parent->level) {
		free(buf);
		return util_err_set(&fs->err, -EINVAL, "index node at LEB %u:%u has level %u, its parent level %u",
				    lnum, offs, idx.level, parent->level);
	}
	struct ubifs_znode *z = znode_alloc(&fs->tnc, idx.child_cnt);
	if (!z) {
		free(buf);
		return -ENOMEM;
	}
	z->level = idx.level;
	z->child_cnt = idx.child_cnt;
	z->lnum = lnum;
	z->offs = offs;
	z->len = len;
	if (fs->hash_len) {
		z->hashes = malloc((size_t)idx.child_cnt * fs->hash_len);
		if (!z->hashes) {
			znode_free(&fs->tnc, z);
			free(buf);
			return -ENOMEM;
		}
	}
	for (unsigned i = 0; i < idx.child_cnt; i++) {
		struct ubifs_branch br;
		ubifs_idx_branch(&idx, i, &br);
		struct ubifs_zbranch *zb = &z->zbranch[i];
		if (z->hashes && br.hash) {
			memcpy(z->hashes + (size_t)i * fs->hash_len, br.hash, fs->hash_len);
			zb->hash = z->hashes + (size_t)i * fs->hash_len;
		}
		zb->key = br.key;
		zb->lnum = br.lnum;
		zb->offs = br.offs;
		zb->len = br.len;
		const char *bad = NULL;
		unsigned kt = ubifs_key_type(&br.key);
		if (br.lnum < fs->main_first || br.lnum >= fs->leb_cnt || (br.offs & 7) ||
		    (uint64_t)br.offs + br.len > fs->leb_size)
			bad = "points outside the main area";
		else if (kt > UBIFS_XENT_KEY)
			bad = "has a bad key type";
		else if (z->level == 0) {
			struct ubifs_len_range lr;
			ubifs_node_len_range(kt, fs->fanout, fs->leb_size, &lr);
			if (br.len < lr.min || br.len > lr.max)
				bad = "has a bad target node length";
		} else {
			if (br.len < r.min || br.len > r.max)
				bad = "has a bad index node length";
		}
		if (!bad && i > 0) {
			int c = ubifs_key_cmp(&z->zbranch[i - 1].key, &br.key);
			if (c > 0)
				bad = "is out of key order";
			else if (c == 0 && !ubifs_key_is_hash(&br.key))
				bad = "repeats a non-hashed key";
		}
		if (bad) {
			char ks[64];
			znode_free(&fs->tnc, z);
			free(buf);
			return util_err_set(&fs->err, -EINVAL,
					    "index node at LEB %u:%u (level %u): branch %u -> LEB %u:%u len %u key %s %s",
					    lnum, offs, idx.level, i, br.lnum, br.offs, br.len,
					    ubifs_key_str(&br.key, ks, sizeof(ks)), bad);
		}
	}
	free(buf);
	z->parent = parent;
	z->iip = iip;
	fs->tnc.loads++;
	*out = z;
	return 0;
}

static int get_child(struct ubifs_fs *fs, struct ubifs_znode *z, uint32_t n, struct ubifs_znode **out)
{
	struct ubifs_zbranch *zb = &z->zbranch[n];
	if (!zb->child) {
		struct ubifs_znode *c;
		int err = load_znode(fs, z, n, zb->lnum, zb->offs, zb->len, &c);
		if (err)
			return err;
		zb->child = c;
		z->loaded_children++;
	}
	*out = zb->child;
	return 0;
}

int ubifs_tnc_init(struct ubifs_fs *fs, uint32_t lnum, uint32_t offs, uint32_t len, size_t limit)
{
	memset(&fs->tnc, 0, sizeof(fs->tnc));
	fs->tnc.limit = limit;
	int err = load_znode(fs, NULL, 0, lnum, offs, len, &fs->tnc.root);
	if (err && err != -ENOMEM) {
		char was[UTIL_ERR_MSG_MAX];
		snprintf(was, sizeof(was), "%s", fs->err.msg);
		util_err_set(&fs->err, err, "index root (from the master node): %.400s", was);
	}
	return err;
}

void ubifs_tnc_destroy(struct ubifs_fs *fs)
{
	free_subtree(&fs->tnc, fs->tnc.root);
	fs->tnc.root = NULL;
	free(fs->tnc.old_idx);
	fs->tnc.old_idx = NULL;
	fs->tnc.old_cnt = fs->tnc.old_cap = 0;
}

/* remember that the committed index has a node at lnum:offs */
/* room for extra more entries of the old-index list */
static int old_idx_reserve(struct ubifs_tnc *t, size_t extra)
{
	if (t->old_cnt + extra <= t->old_cap)
		return 0;
	size_t c = t->old_cap ? t->old_cap * 2 : 64;
	while (c < t->old_cnt + extra)
		c *= 2;
	uint64_t *n = realloc(t->old_idx, c * sizeof(*n));
	if (!n)
		return -ENOMEM;
	t->old_idx = n;
	t->old_cap = c;
	return 0;
}

static int old_idx_add(struct ubifs_tnc *t, uint32_t lnum, uint32_t offs)
{
	int err = old_idx_reserve(t, 1);
	if (err)
		return err;
	t->old_idx[t->old_cnt++] = (uint64_t)lnum << 32 | offs;
	t->old_sorted = 0;
	return 0;
}

static int evictable(const struct ubifs_znode *z)
{
	return !z->dirty && z->parent && z->loaded_children == 0;
}

void ubifs_tnc_shrink(struct ubifs_fs *fs)
{
	struct ubifs_tnc *t = &fs->tnc;
	while (t->clean_bytes > t->limit) {
		int evicted = 0;
		struct ubifs_znode *z = t->lru_tail;
		while (z && t->clean_bytes > t->limit) {
			struct ubifs_znode *prev = z->lru_prev;
			if (evictable(z)) {
				struct ubifs_znode *p = z->parent;
				/* the parent may be `prev`; it stays, it only loses a child */
				p->zbranch[z->iip].child = NULL;
				p->loaded_children--;
				lru_del(t, z);
				znode_free(t, z);
				t->evictions++;
				evicted++;
			}
			z = prev;
		}
		if (!evicted)
			break;
	}
}

/* Last branch of z with key < k; -1 if none. */
static int search_lt(const struct ubifs_znode *z, const struct ubifs_key *k)
{
	int lo = 0, hi = z->child_cnt; /* find first index with key >= k */
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		if (ubifs_key_cmp(&z->zbranch[mid].key, k) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo - 1;
}

/* Last branch of z with key <= k; -1 if none. */
static int search_le(const struct ubifs_znode *z, const struct ubifs_key *k)
{
	int lo = 0, hi = z->child_cnt; /* find first index with key > k */
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		if (ubifs_key_cmp(&z->zbranch[mid].key, k) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo - 1;
}

/* Descend to level 0 through the last branch with key < k (searches: the
 * first entry >= k is then at or after the position), or with ins through
 * the last branch with key <= k, as the kernel does: a key equal to a
 * branch key must go below that branch, because the kernel looks it up
 * there (a deletion can leave a branch key lower than its subtree; a new
 * key equal to it belongs to that subtree, not to the one on the left). */
static int descend(struct ubifs_fs *fs, const struct ubifs_key *k, int ins, struct ubifs_tnc_pos *pos)
{
	struct ubifs_znode *z = fs->tnc.root;
	struct ubifs_znode *path[UBIFS_MAX_LEVELS + 2];
	int depth = 0;
	for (;;) {
		path[depth++] = z;
		int n = ins && z->level > 0 ? search_le(z, k) : search_lt(z, k);
		if (z->level == 0 || z->child_cnt == 0) {
			pos->z = z;
			pos->n = n;
			break;
		}
		int err = get_child(fs, z, n < 0 ? 0 : (uint32_t)n, &z);
		if (err)
			return err;
	}
	/* touch bottom-up so that parents are younger than their children in
	 * the LRU: the tail then holds leaves, which are evicted first */
	for (int i = 0; i < depth; i++)
		lru_touch(&fs->tnc, path[depth - 1 - i]);
	return 0;
}

/* The kernel's ubifs_lookup_level0 for a non-hashed key: in every znode
 * take the last branch whose key is <= k (the first if none); the entry must
 * be in the level-0 znode reached. Stricter than descend_lt + stepping
 * forward: an index whose branch keys are larger than keys below them hides
 * those keys from the kernel, and this sees it (for checks). */
int ubifs_tnc_lookup_strict(struct ubifs_fs *fs, const struct ubifs_key *k, struct ubifs_zbranch *out)
{
	struct ubifs_znode *z = fs->tnc.root;
	for (;;) {
		int n = -1;
		for (int i = 0; i < (int)z->child_cnt; i++) {
			if (ubifs_key_cmp(&z->zbranch[i].key, k) > 0)
				break;
			n = i;
		}
		if (z->level == 0 || z->child_cnt == 0) {
			if (n < 0 || ubifs_key_cmp(&z->zbranch[n].key, k) != 0)
				return -ENOENT;
			*out = z->zbranch[n];
			out->child = NULL;
			return 0;
		}
		int err = get_child(fs, z, n < 0 ? 0 : (uint32_t)n, &z);
		if (err)
			return err;
	}
}

int ubifs_tnc_next(struct ubifs_fs *fs, struct ubifs_tnc_pos *pos)
{
	struct ubifs_znode *z = pos->z;
	int n = pos->n + 1;
	if (n < z->child_cnt) {
		pos->n = n;
		return 0;
	}
	for (;;) {
		struct ubifs_znode *p = z->parent;
		if (!p)
			return -ENOENT;
		n = (int)z->iip + 1;
		z = p;
		if (n < z->child_cnt)
			break;
	}
	int err = get_child(fs, z, (uint32_t)n, &z);
	while (!err && z->level > 0)
		err = get_child(fs, z, 0, &z);
	if (err)
		return err;
	if (z->child_cnt == 0) /* only an emptied root can be empty */
		return -ENOENT;
	lru_touch(&fs->tnc, z);
	pos->z = z;
	pos->n = 0;
	return 0;
}

int ubifs_tnc_seek(struct ubifs_fs *fs, const struct ubifs_key *k, int after, struct ubifs_tnc_pos *pos)
{
	int err = descend(fs, k, 0, pos);
	if (err)
		return err;
	for (;;) {
		err = ubifs_tnc_next(fs, pos);
		if (err)
			return err;
		if (!after || ubifs_key_cmp(&ubifs_tnc_at(pos)->key, k) > 0)
			return 0;
	}
}

int ubifs_tnc_read_leaf(struct ubifs_fs *fs, const struct ubifs_zbranch *zbr, uint8_t *buf)
{
	unsigned type = ubifs_key_type(&zbr->key);
	int err = ubifs_read_node(fs, buf, type, zbr->len, zbr->lnum, zbr->offs);
	if (err)
		return err;
	if (zbr->hash && fs->hash_len) {
		err = ubifs_auth_check(fs, buf, zbr->len, zbr->hash, zbr->lnum, zbr->offs);
		if (err)
			return err;
	}
	struct ubifs_key nk = ubifs_key_read(buf + 24);
	if (ubifs_key_cmp(&nk, &zbr->key) != 0) {
		char a[64], b[64];
		return util_err_set(&fs->err, -EINVAL, "%s node at LEB %u:%u has key %s, the index says %s",
				    ubifs_node_type_name(type), zbr->lnum, zbr->offs, ubifs_key_str(&nk, a, sizeof(a)),
				    ubifs_key_str(&zbr->key, b, sizeof(b)));
	}
	if (type == UBIFS_DENT_NODE || type == UBIFS_XENT_NODE) {
		const char *why = ubifs_dent_check(buf, zbr->len);
		if (why)
			return util_err_set(&fs->err, -EINVAL, "%s node at LEB %u:%u: %s", ubifs_node_type_name(type),
					    zbr->lnum, zbr->offs, why);
	}
	return 0;
}

int ubifs_tnc_lookup(struct ubifs_fs *fs, const struct ubifs_key *k, uint8_t *buf, uint32_t *len)
{
	struct ubifs_zbranch zb;
	int err = ubifs_tnc_lookup_at(fs, k, buf, &zb);
	if (!err && len)
		*len = zb.len;
	return err;
}

int ubifs_tnc_lookup_at(struct ubifs_fs *fs, const struct ubifs_key *k, uint8_t *buf, struct ubifs_zbranch *where)
{
	struct ubifs_tnc_pos pos;
	int err = ubifs_tnc_seek(fs, k, 0, &pos);
	if (err)
		return err;
	const struct ubifs_zbranch *zb = ubifs_tnc_at(&pos);
	if (ubifs_key_cmp(&zb->key, k) != 0)
		return -ENOENT;
	err = ubifs_tnc_read_leaf(fs, zb, buf);
	if (err)
		return err;
	*where = *zb;
	where->child = NULL;
	return 0;
}

/* Find the entry with key k and this name: 0 with pos, -ENOENT, <0. */
/* During the replay an entry of the committed index may point to a node
 * that is gone: its LEB was garbage-collected and reused before the commit
 * (kernel fallible_resolve_collision: a "dangling branch"). Such a branch
 * never matches a name; *dangling (if given) gets the first one. */
static int find_nm_d(struct ubifs_fs *fs, const struct ubifs_key *k, const char *name, size_t nlen, uint8_t *buf,
		     struct ubifs_tnc_pos *pos, struct ubifs_tnc_pos *dangling, int *have_dangling)
{
	int err = ubifs_tnc_seek(fs, k, 0, pos);
	while (!err) {
		const struct ubifs_zbranch *zb = ubifs_tnc_at(pos);
		if (ubifs_key_cmp(&zb->key, k) != 0)
			return -ENOENT;
		err = ubifs_tnc_read_leaf(fs, zb, buf);
		/* only a node that is not there (-EINVAL: bad magic, CRC, type,
		 * length or key) is dangling; a read error (-EBADMSG, -EIO) or
		 * -ENOMEM stays an error, as in the kernel's try_read_node */
		if (err == -EINVAL && fs->index_may_dangle) {
			if (dangling && !*have_dangling) {
				*dangling = *pos;
				*have_dangling = 1;
			}
			err = ubifs_tnc_next(fs, pos);
			continue;
		}
		if (err)
			return err;
		if (get_le16(buf + 50) == nlen && memcmp(buf + UBIFS_DENT_NODE_SZ, name, nlen) == 0)
			return 0;
		err = ubifs_tnc_next(fs, pos);
	}
	return err;
}

static int find_nm(struct ubifs_fs *fs, const struct ubifs_key *k, const char *name, size_t nlen, uint8_t *buf,
		   struct ubifs_tnc_pos *pos)
{
	return find_nm_d(fs, k, name, nlen, buf, pos, NULL, NULL);
}

static int delete_at(struct ubifs_fs *fs, struct ubifs_tnc_pos *pos);

/* replay: drop a dangling branch of key k, if there is one (kernel: an
 * unmatchable name removed after an add, a removal that finds no name) */
static int remove_dangling(struct ubifs_fs *fs, const struct ubifs_key *k)
{
	struct ubifs_tnc_pos pos, d;
	int have = 0;
	int err = find_nm_d(fs, k, "", 0, fs->nbuf, &pos, &d, &have);
	if (err != -ENOENT)
		return err;
	return have ? delete_at(fs, &d) : 0;
}

int ubifs_tnc_lookup_nm(struct ubifs_fs *fs, const struct ubifs_key *k, const char *name, size_t nlen,
			uint8_t *buf, uint32_t *len)
{
	struct ubifs_tnc_pos pos;
	int err = find_nm(fs, k, name, nlen, buf, &pos);
	if (!err && len)
		*len = ubifs_tnc_at(&pos)->len;
	return err;
}

/* ---- changes ---- */

/* Move z to a new allocation of cap branches, fixing the pointers of its
 * parent (or the root) and of its loaded children. NULL on allocation failure
 * (z is then unchanged). */
static struct ubifs_znode *znode_relocate(struct ubifs_fs *fs, struct ubifs_znode *z, uint32_t cap)
{
	struct ubifs_tnc *t = &fs->tnc;
	struct ubifs_znode *nz = znode_alloc(t, cap);
	if (!nz)
		return NULL;
	memcpy(nz, z, znode_bytes(z->child_cnt));
	nz->cap = (uint16_t)cap;
	int was_in_lru = z->in_lru;
	lru_del(t, z);
	nz->lru_prev = nz->lru_next = NULL;
	nz->in_lru = 0;
	if (z->parent)
		z->parent->zbranch[z->iip].child = nz;
	else
		t->root = nz;
	fix_children(nz);
	znode_free(t, z);
	if (was_in_lru)
		lru_touch(t, nz);
	return nz;
}

/* Make z and its ancestors dirty: pinned in memory, never evicted (and what
 * a future commit writes). */
static struct ubifs_znode *dirty_path(struct ubifs_fs *fs, struct ubifs_znode *z)
{
	/* the old-index entries first: an allocation failure leaves nothing
	 * half changed and the caller answers -ENOMEM */
	if (ubifs_lprops_tracked(fs)) {
		size_t n = 0;
		for (struct ubifs_znode *cur = z; cur && !cur->dirty; cur = cur->parent)
			n += cur->len != 0;
		if (old_idx_reserve(&fs->tnc, n))
			return NULL;
	}
	for (struct ubifs_znode *cur = z; cur; cur = cur->parent) {
		if (cur->dirty)
			break; /* its ancestors are dirty already */
		lru_del(&fs->tnc, cur);
		cur->dirty = 1;
		/* read-write: the on-flash copy is now old index, its space dirt
		 * (kernel add_idx_dirt) */
		if (ubifs_lprops_tracked(fs) && cur->len) {
			if (old_idx_add(&fs->tnc, cur->lnum, cur->offs)) /* reserved above: cannot fail */
				fs->ro_error = 1; /* the in-the-gaps commit could overwrite it */
			fs->tnc.idx_size -= ubifs_align8(cur->len);
			if (ubifs_lpt_add_dirt(fs->lpt, cur->lnum, cur->len))
				fs->ro_error = 1;
		}
	}
	return z;
}

void ubifs_tnc_written(struct ubifs_fs *fs, struct ubifs_znode *z, uint32_t lnum, uint32_t offs, uint32_t len)
{
	z->lnum = lnum;
	z->offs = offs;
	z->len = len;
	z->dirty = 0;
	if (z->parent) {
		struct ubifs_zbranch *pb = &z->parent->zbranch[z->iip];
		pb->lnum = lnum;
		pb->offs = offs;
		pb->len = len;
	}
	lru_touch(&fs->tnc, z);
}

/* Room for one more branch in z (dirty): grow the allocation geometrically
 * up to fanout, so that a huge fanout costs memory only when used. */
static struct ubifs_znode *make_room(struct ubifs_fs *fs, struct ubifs_znode *z)
{
	if (z->child_cnt < z->cap || z->cap >= fs->fanout)
		return z;
	uint32_t cap = z->cap * 2u;
	if (cap < 8)
		cap = 8;
	if (cap > fs->fanout)
		cap = fs->fanout;
	return znode_relocate(fs, z, cap);
}

/* After inserting a smaller key at branch 0 of z, lower the keys above. */
static void fix_parent_keys(struct ubifs_znode *z)
{
	while (z->parent && z->child_cnt) {
		struct ubifs_zbranch *pb = &z->parent->zbranch[z->iip];
		if (ubifs_key_cmp(&z->zbranch[0].key, &pb->key) >= 0)
			break;
		pb->key = z->zbranch[0].key;
		if (z->iip != 0)
			break;
		z = z->parent;
	}
}

/* Undo a split of the full z into z + zn made to insert branch n, when the
 * insertion above failed: z takes back its own branches (without branch n),
 * zn is freed, and the index is as before the insertion. */
static void unsplit(struct ubifs_tnc *t, struct ubifs_znode *z, struct ubifs_znode *zn, uint32_t n)
{
	uint32_t keep = z->child_cnt, total = keep + zn->child_cnt, j = 0;
	for (uint32_t i = 0; i < total; i++) {
		if (i == n)
			continue;
		/* j <= i: copying forward never overwrites a branch still to read */
		z->zbranch[j++] = i < keep ? z->zbranch[i] : zn->zbranch[i - keep];
	}
	z->child_cnt = (uint16_t)j;
	fix_children(z);
	znode_free(t, zn);
}

/* Insert zbr as branch n of z (z dirty with full capacity), splitting full
 * znodes upwards. On -ENOMEM the index is left as it was. */
static int tnc_insert(struct ubifs_fs *fs, struct ubifs_znode *z, uint32_t n, const struct ubifs_zbranch *zbr)
{
	struct ubifs_tnc *t = &fs->tnc;
	uint32_t fanout = fs->fanout;
	if (z->child_cnt < fanout) {
		z = make_room(fs, z);
		if (!z)
			return -ENOMEM;
		memmove(&z->zbranch[n + 1], &z->zbranch[n], (z->child_cnt - n) * sizeof(z->zbranch[0]));
		z->zbranch[n] = *zbr;
		z->child_cnt++;
		fix_children(z);
		if (n == 0)
			fix_parent_keys(z);
		return 0;
	}
	/* split: fanout + 1 branches, the left half stays in z */
	struct ubifs_zbranch *all = malloc((fanout + 1) * sizeof(*all));
	struct ubifs_znode *zn = znode_alloc(t, fanout + 1 - (fanout + 1) / 2);
	if (!all || !zn) {
		free(all);
		if (zn)
			znode_free(t, zn);
		return -ENOMEM;
	}
	memcpy(all, z->zbranch, n * sizeof(*all));
	all[n] = *zbr;
	memcpy(all + n + 1, z->zbranch + n, (fanout - n) * sizeof(*all));
	uint32_t keep = (fanout + 1) / 2, move = fanout + 1 - keep;
	memcpy(z->zbranch, all, keep * sizeof(*all));
	z->child_cnt = (uint16_t)keep;
	zn->level = z->level;
	zn->dirty = 1;
	memcpy(zn->zbranch, all + keep, move * sizeof(*all));
	zn->child_cnt = (uint16_t)move;
	free(all);
	fix_children(z);
	fix_children(zn);
	struct ubifs_zbranch up = {.key = zn->zbranch[0].key, .child = zn};
	if (!z->parent) {
		struct ubifs_znode *r = znode_alloc(t, 2);
		if (!r) {
			unsplit(t, z, zn, n);
			return -ENOMEM;
		}
		r->level = z->level + 1;
		r->dirty = 1;
		r->child_cnt = 2;
		r->zbranch[0].key = z->zbranch[0].key;
		r->zbranch[0].child = z;
		r->zbranch[1] = up;
		t->root = r;
		fix_children(r);
		return 0;
	}
	int err = tnc_insert(fs, z->parent, z->iip + 1, &up);
	if (err) {
		unsplit(t, z, zn, n);
		return err;
	}
	/* only now: a failed insertion above leaves the keys as they were */
	if (n == 0)
		fix_parent_keys(z);
	return 0;
}

/* Remove branch n of z (z dirty; its child, if any, already freed). */
static void tnc_delete(struct ubifs_fs *fs, struct ubifs_znode *z, uint32_t n)
{
	for (;;) {
		memmove(&z->zbranch[n], &z->zbranch[n + 1], (z->child_cnt - n - 1) * sizeof(z->zbranch[0]));
		z->child_cnt--;
		fix_children(z);
		if (z->child_cnt > 0)
			return;
		struct ubifs_znode *p = z->parent;
		if (!p) {
			z->level = 0; /* the index became empty */
			return;
		}
		n = z->iip;
		p->zbranch[n].child = NULL;
		znode_free(&fs->tnc, z);
		z = p;
	}
}

static int insert_at_lt(struct ubifs_fs *fs, const struct ubifs_key *k, uint32_t lnum, uint32_t offs, uint32_t len)
{
	struct ubifs_tnc_pos pos;
	int err = descend(fs, k, 1, &pos);
	if (err)
		return err;
	struct ubifs_znode *z = dirty_path(fs, pos.z);
	if (!z)
		return -ENOMEM;
	struct ubifs_zbranch zb = {.key = *k, .lnum = lnum, .offs = offs, .len = len};
	return tnc_insert(fs, z, (uint32_t)(pos.n + 1), &zb);
}

/* The leaf a branch pointed to is no longer needed: on a read-write mount
 * its space becomes dirt of its LEB (kernel tnc.c: ubifs_add_dirt on every
 * replaced or removed leaf), and during any mount's replay (the kernel's
 * lprops follow the journal on read-only mounts too). */
static int obsolete_leaf(struct ubifs_fs *fs, const struct ubifs_zbranch *zb)
{
	return ubifs_lprops_tracked(fs) ? ubifs_lpt_add_dirt(fs->lpt, zb->lnum, zb->len) : 0;
}

static int replace_at(struct ubifs_fs *fs, struct ubifs_tnc_pos *pos, uint32_t lnum, uint32_t offs, uint32_t len)
{
	int n = pos->n;
	int err = obsolete_leaf(fs, &pos->z->zbranch[n]);
	if (err)
		return err;
	struct ubifs_znode *z = dirty_path(fs, pos->z);
	if (!z)
		return -ENOMEM;
	z->zbranch[n].lnum = lnum;
	z->zbranch[n].offs = offs;
	z->zbranch[n].len = len;
	/* the hash the index held was the replaced node's; a journal node has
	 * none in the index (authenticated by the journal's HMACs instead) */
	z->zbranch[n].hash = NULL;
	return 0;
}

static int delete_at(struct ubifs_fs *fs, struct ubifs_tnc_pos *pos)
{
	int n = pos->n;
	int err = obsolete_leaf(fs, &pos->z->zbranch[n]);
	if (err)
		return err;
	struct ubifs_znode *z = dirty_path(fs, pos->z);
	if (!z)
		return -ENOMEM;
	tnc_delete(fs, z, (uint32_t)n);
	return 0;
}

int ubifs_tnc_add(struct ubifs_fs *fs, const struct ubifs_key *k, uint32_t lnum, uint32_t offs, uint32_t len)
{
	struct ubifs_tnc_pos pos;
	int err = ubifs_tnc_seek(fs, k, 0, &pos);
	if (!err && ubifs_key_cmp(&ubifs_tnc_at(&pos)->key, k) == 0)
		return replace_at(fs, &pos, lnum, offs, len);
	if (err && err != -ENOENT)
		return err;
	return insert_at_lt(fs, k, lnum, offs, len);
}

int ubifs_tnc_add_nm(struct ubifs_fs *fs, const struct ubifs_key *k, const char *name, size_t nlen, uint32_t lnum,
		     uint32_t offs, uint32_t len)
{
	struct ubifs_tnc_pos pos;
	int err = find_nm(fs, k, name, nlen, fs->nbuf, &pos);
	if (!err)
		return replace_at(fs, &pos, lnum, offs, len);
	if (err != -ENOENT)
		return err;
	err = insert_at_lt(fs, k, lnum, offs, len);
	if (!err && fs->replaying)
		err = remove_dangling(fs, k);
	return err;
}

int ubifs_tnc_remove(struct ubifs_fs *fs, const struct ubifs_key *k)
{
	struct ubifs_tnc_pos pos;
	int err = ubifs_tnc_seek(fs, k, 0, &pos);
	if (err == -ENOENT)
		return 0;
	if (err)
		return err;
	if (ubifs_key_cmp(&ubifs_tnc_at(&pos)->key, k) != 0)
		return 0;
	return delete_at(fs, &pos);
}

int ubifs_tnc_remove_nm(struct ubifs_fs *fs, const struct ubifs_key *k, const char *name, size_t nlen)
{
	struct ubifs_tnc_pos pos;
	int err = find_nm(fs, k, name, nlen, fs->nbuf, &pos);
	if (err == -ENOENT)
		return fs->replaying ? remove_dangling(fs, k) : 0;
	if (err)
		return err;
	return delete_at(fs, &pos);
}

int ubifs_tnc_remove_range(struct ubifs_fs *fs, const struct ubifs_key *lo, const struct ubifs_key *hi)
{
	for (;;) {
		struct ubifs_tnc_pos pos;
		int err = ubifs_tnc_seek(fs, lo, 0, &pos);
		if (err == -ENOENT)
			return 0;
		if (err)
			return err;
		if (ubifs_key_cmp(&ubifs_tnc_at(&pos)->key, hi) > 0)
			return 0;
		err = delete_at(fs, &pos);
		if (err)
			return err;
	}
}

int ubifs_tnc_remove_ino(struct ubifs_fs *fs, uint32_t inum)
{
	/* first the xattr inodes named by this inode's xattr entries */
	struct ubifs_key k = ubifs_key_make(inum, UBIFS_XENT_KEY, 0);
	for (;;) {
		struct ubifs_tnc_pos pos;
		int err = ubifs_tnc_seek(fs, &k, 0, &pos);
		if (err == -ENOENT)
			break;
		if (err)
			return err;
		const struct ubifs_zbranch *zb = ubifs_tnc_at(&pos);
		if (zb->key.inum != inum || ubifs_key_type(&zb->key) != UBIFS_XENT_KEY)
			break;
		struct ubifs_zbranch copy = *zb;
		err = ubifs_tnc_read_leaf(fs, &copy, fs->nbuf);
		if (err == -EINVAL && fs->index_may_dangle) {
			/* a dangling branch of the committed index (its LEB
			 * was garbage-collected and reused after the commit,
			 * as find_nm_d accepts): dropped; its xattr inode,
			 * unknown now, is found by the sweep after the replay */
			fs->replay_dangling_xents++;
			err = delete_at(fs, &pos);
			if (err)
				return err;
			continue;
		}
		if (err)
			return err;
		uint64_t xinum = get_le64(fs->nbuf + 40);
		if (xinum && xinum != inum) {
			struct ubifs_key xlo = ubifs_key_make((uint32_t)xinum, UBIFS_INO_KEY, 0);
			struct ubifs_key xhi = {(uint32_t)xinum, 0xFFFFFFFFu};
			err = ubifs_tnc_remove_range(fs, &xlo, &xhi);
			if (err)
				return err;
		}
		/* drop this entry and continue after its key */
		err = ubifs_tnc_seek(fs, &copy.key, 0, &pos);
		if (err)
			return err;
		err = delete_at(fs, &pos);
		if (err)
			return err;
	}
	struct ubifs_key lo = ubifs_key_make(inum, UBIFS_INO_KEY, 0);
	struct ubifs_key hi = {inum, 0xFFFFFFFFu};
	return ubifs_tnc_remove_range(fs, &lo, &hi);
}

/* ---- garbage collection (ubifs_gc.c) ---- */

/* the level-0 position of the leaf with key k stored at lnum:offs (the
 * run of colliding keys is walked), -ENOENT if the index does not use it */
static int find_leaf_at(struct ubifs_fs *fs, const struct ubifs_key *k, uint32_t lnum, uint32_t offs,
			struct ubifs_tnc_pos *pos)
{
	int err = ubifs_tnc_seek(fs, k, 0, pos);
	while (!err && ubifs_key_cmp(&ubifs_tnc_at(pos)->key, k) == 0) {
		const struct ubifs_zbranch *zb = ubifs_tnc_at(pos);
		if (zb->lnum == lnum && zb->offs == offs)
			return 0;
		err = ubifs_tnc_next(fs, pos);
	}
	return err && err != -ENOENT ? err : -ENOENT;
}

int ubifs_tnc_has_leaf(struct ubifs_fs *fs, const struct ubifs_key *k, uint32_t lnum, uint32_t offs)
{
	struct ubifs_tnc_pos pos;
	int err = find_leaf_at(fs, k, lnum, offs, &pos);
	return err == -ENOENT ? 0 : err ? err : 1;
}

int ubifs_tnc_replace_leaf(struct ubifs_fs *fs, const struct ubifs_key *k, uint32_t old_lnum, uint32_t old_offs,
			   uint32_t lnum, uint32_t offs, uint32_t len)
{
	struct ubifs_tnc_pos pos;
	int err = find_leaf_at(fs, k, old_lnum, old_offs, &pos);
	if (err)
		return err;
	return replace_at(fs, &pos, lnum, offs, len);
}

/* Depth-first over the branches a key k can be under (kernel lookup_znode:
 * the last branch with key <= k, and those left of a run of keys equal to
 * k): the branch at `level + 1` that points to lnum:offs; *out = its znode
 * (loaded). 1 found, 0 not, <0 error. */
static int idx_walk(struct ubifs_fs *fs, struct ubifs_znode *z, const struct ubifs_key *k, unsigned level,
		    uint32_t lnum, uint32_t offs, int depth, struct ubifs_znode **out)
{
	if (depth > UBIFS_MAX_LEVELS || z->level <= level)
		return 0;
	int n = search_le(z, k);
	if (n < 0)
		n = 0;
	for (int i = n; i >= 0; i--) {
		if (i < n && ubifs_key_cmp(&z->zbranch[i + 1].key, k) != 0)
			break;
		struct ubifs_zbranch *zb = &z->zbranch[i];
		if (z->level == level + 1 && (zb->lnum != lnum || zb->offs != offs))
			continue;
		struct ubifs_znode *c;
		int err = get_child(fs, z, (uint32_t)i, &c);
		if (err)
			return err;
		if (z->level == level + 1) {
			*out = c;
			return 1;
		}
		err = idx_walk(fs, c, k, level, lnum, offs, depth + 1, out);
		if (err)
			return err;
	}
	return 0;
}

/* the znode the index keeps (or kept, if dirty) at lnum:offs */
static int idx_find(struct ubifs_fs *fs, const struct ubifs_key *k, unsigned level, uint32_t lnum, uint32_t offs,
		    struct ubifs_znode **out)
{
	struct ubifs_znode *r = fs->tnc.root;
	if (!r)
		return 0;
	if (r->level == level) {
		if (r->dirty || r->lnum != lnum || r->offs != offs)
			return 0;
		*out = r;
		return 1;
	}
	return idx_walk(fs, r, k, level, lnum, offs, 0, out);
}

int ubifs_tnc_dirty_idx(struct ubifs_fs *fs, const struct ubifs_key *k, unsigned level, uint32_t lnum, uint32_t offs)
{
	struct ubifs_znode *z = NULL;
	int r = idx_find(fs, k, level, lnum, offs, &z);
	if (r <= 0 || z->dirty)
		return r < 0 ? r : 0; /* a dirty one's old copy is dirt already */
	return dirty_path(fs, z) ? 1 : -ENOMEM;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

int ubifs_tnc_idx_in_use(struct ubifs_fs *fs, const struct ubifs_key *k, unsigned level, uint32_t lnum,
			 uint32_t offs)
{
	struct ubifs_znode *z = NULL;
	int r = idx_find(fs, k, level, lnum, offs, &z);
	if (r < 0)
		return r;
	if (r)
		return z->dirty ? 1 : 2;
	struct ubifs_tnc *t = &fs->tnc;
	if (!t->old_sorted) {
		qsort(t->old_idx, t->old_cnt, sizeof(*t->old_idx), u64_cmp);
		t->old_sorted = 1;
	}
	uint64_t key = (uint64_t)lnum << 32 | offs;
	return t->old_cnt && bsearch(&key, t->old_idx, t->old_cnt, sizeof(key), u64_cmp) ? 1 : 0;
}

void ubifs_tnc_old_idx_clear(struct ubifs_fs *fs)
{
	fs->tnc.old_cnt = 0;
	fs->tnc.old_sorted = 1;
}
