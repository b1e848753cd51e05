/* ubifs_wcache — the write-back cache of file data (see ubifs_wcache.h):
 * per inode a record (in-memory size and times, the inode's budget) and
 * its dirty blocks sorted by block number, each holding its own budget.
 * Write-back goes through the journal (ubifs_jnl_write_data, then
 * ubifs_jnl_write_inode, also for an open unlinked file: its size must
 * cover its data) and gives the budgets back. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ubifs/ubifs_budget.h"
#include "ubifs/ubifs_journal.h"
#include "ubifs/ubifs_priv.h"
#include "ubifs/ubifs_wcache.h"

struct wc_page {
	uint32_t block;
	struct ubifs_budget_req req;
	uint8_t data[UBIFS_BLOCK_SIZE];
};

struct wc_ino {
	uint64_t inum;
	uint64_t size; /* the file size now (kernel i_size) */
	uint64_t synced_size; /* the size the journal has (kernel synced_i_size) */
	int times;     /* mtime/ctime below are newer than the flash's */
	int64_t mtime_sec, ctime_sec;
	uint32_t mtime_nsec, ctime_nsec;
	struct ubifs_budget_req req; /* the dirty inode's budget */
	struct wc_page **pages;      /* sorted by block */
	uint32_t cnt, cap;
	struct wc_ino *next;
};

struct ubifs_wcache {
	struct wc_ino *head;
	size_t limit, dirty, peak;
	uint32_t inodes;
	int flushing;
	uint64_t pages_cached, pages_written, flushes, bound_flushes;
};

static int writeback_cb(struct ubifs_fs *fs)
{
	return ubifs_wcache_flush_all(fs);
}

int ubifs_wcache_open(struct ubifs_fs *fs, size_t limit, struct ubifs_wcache **out)
{
	struct ubifs_wcache *wc = calloc(1, sizeof(*wc));
	if (!wc)
		return -ENOMEM;
	wc->limit = limit ? limit : UBIFS_DEFAULT_DIRTY_LIMIT;
	if (wc->limit < UBIFS_BLOCK_SIZE)
		wc->limit = UBIFS_BLOCK_SIZE;
	*out = wc;
	ubifs_budget_set_writeback(fs, writeback_cb);
	return 0;
}

static void free_rec(struct wc_ino *r)
{
	for (uint32_t i = 0; i < r->cnt; i++)
		free(r->pages[i]);
	free(r->pages);
	free(r);
}

void ubifs_wcache_close(struct ubifs_wcache *wc)
{
	if (!wc)
		return;
	while (wc->head) {
		struct wc_ino *r = wc->head;
		wc->head = r->next;
		free_rec(r);
	}
	free(wc);
}

static struct wc_ino *find_rec(const struct ubifs_wcache *wc, uint64_t inum)
{
	for (struct wc_ino *r = wc ? wc->head : NULL; r; r = r->next)
		if (r->inum == inum)
			return r;
	return NULL;
}

/* index of the first page with block >= b */
static uint32_t page_pos(const struct wc_ino *r, uint32_t b)
{
	uint32_t lo = 0, hi = r->cnt;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (r->pages[mid]->block < b)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static struct wc_page *find_page(const struct wc_ino *r, uint32_t b)
{
	if (!r)
		return NULL;
	uint32_t i = page_pos(r, b);
	return i < r->cnt && r->pages[i]->block == b ? r->pages[i] : NULL;
}

/* give back page i's budget and free it (the array is fixed by the caller) */
static void drop_page(struct ubifs_fs *fs, struct wc_page *p)
{
	ubifs_release_budget(fs, &p->req);
	fs->wcache->dirty -= UBIFS_BLOCK_SIZE;
	free(p);
}

static void unlink_rec(struct ubifs_fs *fs, struct wc_ino *r)
{
	struct ubifs_wcache *wc = fs->wcache;
	for (struct wc_ino **pp = &wc->head; *pp; pp = &(*pp)->next)
		if (*pp == r) {
			*pp = r->next;
			break;
		}
	for (uint32_t i = 0; i < r->cnt; i++)
		drop_page(fs, r->pages[i]);
	r->cnt = 0;
	ubifs_release_budget(fs, &r->req);
	wc->inodes--;
	free_rec(r);
}

/* kernel writepage for each dirty block, in order, then write_inode */
static int flush_rec(struct ubifs_fs *fs, struct wc_ino *r)
{
	struct ubifs_wcache *wc = fs->wcache;
	struct ubifs_inode *ui = malloc(sizeof(*ui));
	if (!ui)
		return -ENOMEM;
	int err = ubifs_read_inode(fs, r->inum, ui); /* the cached size and times apply */
	if (err == -ENOENT) {
		/* deleted since (unlink, rename over it): its data goes too */
		unlink_rec(fs, r);
		free(ui);
		return 0;
	}
	/* Data beyond the size the journal has: the inode with the new size
	 * goes first (kernel ubifs_writepage). Otherwise a commit that the
	 * data's journal space starts would put data beyond the stored size
	 * into the index, and a power cut before the inode's write would leave
	 * it there, out of the recovery's reach (found by `ubikit torture`). */
	int beyond = 0;
	for (uint32_t k = 0; k < r->cnt && !beyond; k++) {
		uint64_t b = (uint64_t)r->pages[k]->block << UBIFS_BLOCK_SHIFT;
		beyond = b < r->size && b + UBIFS_BLOCK_SIZE > r->synced_size;
	}
	if (!err && beyond) {
		err = ubifs_jnl_write_inode(fs, ui);
		if (!err)
			r->synced_size = r->size;
	}
	uint32_t i = 0;
	for (; !err && i < r->cnt; i++) {
		struct wc_page *p = r->pages[i];
		uint64_t bstart = (uint64_t)p->block << UBIFS_BLOCK_SHIFT;
		if (bstart < r->size) {
			uint64_t left = r->size - bstart;
			uint32_t blen = left < UBIFS_BLOCK_SIZE ? (uint32_t)left : UBIFS_BLOCK_SIZE;
			err = ubifs_jnl_write_data(fs, ui, p->block, p->data, blen);
			if (err)
				break;
			wc->pages_written++;
		}
		drop_page(fs, p);
	}
	/* keep what was not written (an error stops the write-back) */
	if (i) { /* (no pages: r->pages may be NULL) */
		memmove(r->pages, r->pages + i, (r->cnt - i) * sizeof(*r->pages));
		r->cnt -= i;
	}
	if (!err) /* an open unlinked file (orphan) keeps its inode: the journal knows */
		err = ubifs_jnl_write_inode(fs, ui);
	if (!err)
		unlink_rec(fs, r);
	free(ui);
	return err;
}

int ubifs_wcache_flush_ino(struct ubifs_fs *fs, uint64_t inum)
{
	struct ubifs_wcache *wc = fs->wcache;
	struct wc_ino *r = find_rec(wc, inum);
	if (!r || wc->flushing)
		return 0;
	wc->flushing = 1;
	wc->flushes++;
	int err = flush_rec(fs, r);
	wc->flushing = 0;
	return err;
}

int ubifs_wcache_flush_all(struct ubifs_fs *fs)
{
	struct ubifs_wcache *wc = fs->wcache;
	if (!wc || wc->flushing || !wc->head)
		return 0;
	wc->flushing = 1;
	wc->flushes++;
	int err = 0;
	while (!err && wc->head)
		err = flush_rec(fs, wc->head);
	wc->flushing = 0;
	return err;
}

void ubifs_wcache_inode(const struct ubifs_fs *fs, struct ubifs_inode *ui)
{
	const struct wc_ino *r = find_rec(fs->wcache, ui->inum);
	if (!r)
		return;
	ui->size = r->size;
	if (r->times) {
		ui->mtime_sec = r->mtime_sec;
		ui->mtime_nsec = r->mtime_nsec;
		/* a later change of the inode (link, rename, xattr) wrote a newer ctime */
		if (r->ctime_sec > ui->ctime_sec || (r->ctime_sec == ui->ctime_sec && r->ctime_nsec > ui->ctime_nsec)) {
			ui->ctime_sec = r->ctime_sec;
			ui->ctime_nsec = r->ctime_nsec;
		}
	}
}

int ubifs_wcache_block(const struct ubifs_fs *fs, uint64_t inum, uint32_t block, uint8_t *out)
{
	const struct wc_page *p = find_page(find_rec(fs->wcache, inum), block);
	if (!p)
		return 0;
	memcpy(out, p->data, UBIFS_BLOCK_SIZE);
	return 1;
}

void ubifs_wcache_truncate(struct ubifs_fs *fs, uint64_t inum, uint64_t size)
{
	struct wc_ino *r = find_rec(fs->wcache, inum);
	if (!r)
		return;
	uint32_t keep = 0;
	for (uint32_t i = 0; i < r->cnt; i++) {
		struct wc_page *p = r->pages[i];
		uint64_t bstart = (uint64_t)p->block << UBIFS_BLOCK_SHIFT;
		if (bstart >= size) {
			drop_page(fs, p);
			continue;
		}
		if (size - bstart < UBIFS_BLOCK_SIZE) /* the new last block: zeros after the end */
			memset(p->data + (size - bstart), 0, UBIFS_BLOCK_SIZE - (size_t)(size - bstart));
		r->pages[keep++] = p;
	}
	r->cnt = keep;
	r->size = size;
	r->synced_size = size; /* the truncation journals the inode with it */
}

void ubifs_wcache_drop_deleted(struct ubifs_fs *fs, uint64_t inum)
{
	struct wc_ino *r = find_rec(fs->wcache, inum);
	if (!r)
		return;
	struct ubifs_key k = ubifs_key_make((uint32_t)inum, UBIFS_INO_KEY, 0);
	uint32_t len;
	if (ubifs_tnc_lookup(fs, &k, fs->nbuf, &len) == -ENOENT)
		unlink_rec(fs, r);
}

void ubifs_wcache_times_written(struct ubifs_fs *fs, uint64_t inum)
{
	struct wc_ino *r = find_rec(fs->wcache, inum);
	if (r)
		r->times = 0;
}

/* does the file have a data node in the block at bstart (a page the
 * kernel reads, "dirtied") or not (a new page)? */
static int has_data(struct ubifs_fs *fs, const struct ubifs_inode *ui, uint64_t bstart)
{
	uint64_t at;
	int err = ubifs_next_data(fs, ui, bstart, &at);
	if (err == -ENXIO)
		return 0;
	if (err)
		return err;
	return at < bstart + UBIFS_BLOCK_SIZE;
}

static int insert_page(struct wc_ino *r, struct wc_page *p)
{
	if (r->cnt == r->cap) {
		uint32_t cap = r->cap ? r->cap * 2 : 16;
		struct wc_page **n = realloc(r->pages, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		r->pages = n;
		r->cap = cap;
	}
	uint32_t i = page_pos(r, p->block);
	memmove(r->pages + i + 1, r->pages + i, (r->cnt - i) * sizeof(*r->pages));
	r->pages[i] = p;
	r->cnt++;
	return 0;
}

/* a block not cached yet: budget it (and the inode), then fill it with what
 * the file has there. *rp: the inode's record (may change: a budget that
 * needs space writes the cache back). */
static int new_page(struct ubifs_fs *fs, struct ubifs_inode *cur, uint32_t b, int whole, struct wc_ino **rp,
		    struct wc_page **pp)
{
	struct ubifs_wcache *wc = fs->wcache;
	uint64_t bstart = (uint64_t)b << UBIFS_BLOCK_SHIFT;
	int exists = bstart < cur->size ? has_data(fs, cur, bstart) : 0;
	if (exists < 0)
		return exists;
	struct ubifs_budget_req pr = {0};
	if (exists)
		pr.dirtied_page = 1;
	else
		pr.new_page = 1;
	int err = ubifs_budget_space(fs, &pr);
	if (err)
		return err;
	struct wc_ino *r = find_rec(wc, cur->inum);
	if (!r) {
		struct ubifs_budget_req ir = {.dirtied_ino = 1};
		err = ubifs_budget_space(fs, &ir);
		r = err ? NULL : calloc(1, sizeof(*r));
		if (!r) {
			if (!err) {
				ubifs_release_budget(fs, &ir);
				err = -ENOMEM;
			}
			ubifs_release_budget(fs, &pr);
			return err;
		}
		r->inum = cur->inum;
		r->size = cur->size;
		r->synced_size = cur->size;
		r->req = ir;
		r->next = wc->head;
		wc->head = r;
		wc->inodes++;
	}
	struct wc_page *p = malloc(sizeof(*p));
	if (!p) {
		ubifs_release_budget(fs, &pr);
		return -ENOMEM;
	}
	p->block = b;
	p->req = pr;
	memset(p->data, 0, UBIFS_BLOCK_SIZE);
	if (exists && !whole) {
		/* partly written block: keep what the file has (flash only: it is not cached) */
		ssize_t got = ubifs_read_data(fs, cur, p->data, UBIFS_BLOCK_SIZE, bstart);
		if (got < 0) {
			ubifs_release_budget(fs, &pr);
			free(p);
			return (int)got;
		}
	}
	err = insert_page(r, p);
	if (err) {
		ubifs_release_budget(fs, &pr);
		free(p);
		return err;
	}
	wc->dirty += UBIFS_BLOCK_SIZE;
	if (wc->dirty > wc->peak)
		wc->peak = wc->dirty;
	wc->pages_cached++;
	*rp = r;
	*pp = p;
	return 0;
}

ssize_t ubifs_wcache_write(struct ubifs_fs *fs, const struct ubifs_inode *ui, const void *buf, size_t len,
			   uint64_t off)
{
	struct ubifs_wcache *wc = fs->wcache;
	/* cur: the inode as it is now, its size growing with the write */
	struct ubifs_inode *cur = malloc(sizeof(*cur));
	if (!cur)
		return -ENOMEM;
	*cur = *ui;
	int64_t ts;
	uint32_t tn;
	ubifs_now(fs, &ts, &tn);
	const uint8_t *src = buf;
	uint64_t end = off + len;
	size_t done = 0;
	int err = 0;
	for (uint64_t b = off >> UBIFS_BLOCK_SHIFT; (b << UBIFS_BLOCK_SHIFT) < end; b++) {
		uint64_t bstart = b << UBIFS_BLOCK_SHIFT;
		uint64_t from = off > bstart ? off : bstart;
		uint64_t to = end < bstart + UBIFS_BLOCK_SIZE ? end : bstart + UBIFS_BLOCK_SIZE;
		struct wc_ino *r = find_rec(wc, cur->inum);
		struct wc_page *p = find_page(r, (uint32_t)b);
		if (!p) {
			int whole = from == bstart && (to == bstart + UBIFS_BLOCK_SIZE || to >= cur->size);
			err = new_page(fs, cur, (uint32_t)b, whole, &r, &p);
			if (err)
				break;
		}
		memcpy(p->data + (from - bstart), src + (from - off), (size_t)(to - from));
		if (to > cur->size)
			cur->size = to;
		r->size = cur->size;
		r->times = 1;
		r->mtime_sec = r->ctime_sec = ts;
		r->mtime_nsec = r->ctime_nsec = tn;
		done += (size_t)(to - from);
		if (wc->dirty >= wc->limit) {
			/* the dirty bound: write everything back (kernel balance_dirty_pages) */
			wc->bound_flushes++;
			err = ubifs_wcache_flush_all(fs);
			if (err)
				break;
		}
	}
	free(cur);
	return done ? (ssize_t)done : err;
}

void ubifs_wcache_get_stats(const struct ubifs_fs *fs, struct ubifs_wcache_stats *o)
{
	memset(o, 0, sizeof(*o));
	const struct ubifs_wcache *wc = fs->wcache;
	if (!wc)
		return;
	o->limit = wc->limit;
	o->dirty_bytes = wc->dirty;
	o->peak_bytes = wc->peak;
	o->inodes = wc->inodes;
	o->pages_cached = wc->pages_cached;
	o->pages_written = wc->pages_written;
	o->flushes = wc->flushes;
	o->bound_flushes = wc->bound_flushes;
}
