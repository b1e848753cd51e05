/* ubifs_wbuf — write-buffers of the journal heads (see ubifs_wbuf.h): the
 * kernel's io.c rules for sizes, alignment and padding. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ubifs/ubifs_priv.h"
#include "ubifs/ubifs_wbuf.h"

static uint32_t align_up(uint32_t x, uint32_t a)
{
	return (x + a - 1) / a * a;
}

/* size for a buffer starting at offs: up to the next max_write_size
 * boundary, or to the LEB end */
static void set_size(struct ubifs_wbuf *w)
{
	const struct ubifs_fs *fs = w->fs;
	uint32_t mws = fs->max_write_size;
	if (fs->leb_size - w->offs < mws)
		w->size = fs->leb_size - w->offs;
	else if (w->offs % mws)
		w->size = align_up(w->offs, mws) - w->offs;
	else
		w->size = mws;
	w->avail = w->size - w->used;
}

int ubifs_wbuf_init(struct ubifs_fs *fs, struct ubifs_wbuf *w, int jhead)
{
	memset(w, 0, sizeof(*w));
	w->fs = fs;
	w->jhead = jhead;
	w->lnum = -1;
	w->buf = malloc(fs->max_write_size);
	if (!w->buf)
		return -ENOMEM;
	return 0;
}

void ubifs_wbuf_free(struct ubifs_wbuf *w)
{
	free(w->buf);
	free(w->inodes);
	w->buf = NULL;
	w->inodes = NULL;
}

int ubifs_wbuf_seek(struct ubifs_wbuf *w, uint32_t lnum, uint32_t offs)
{
	struct ubifs_fs *fs = w->fs;
	if (w->used || offs > fs->leb_size || offs % fs->min_io_size || (offs & 7))
		return util_err_set(&fs->err, -EINVAL, "write-buffer of head %d: bad seek to LEB %u:%u", w->jhead, lnum,
				    offs);
	w->lnum = lnum;
	w->offs = offs;
	w->used = 0;
	set_size(w);
	return 0;
}

static int cb(struct ubifs_wbuf *w, uint32_t pad)
{
	if (!w->sync_cb)
		return 0;
	return w->sync_cb(w->fs, (uint32_t)w->lnum, w->fs->leb_size - w->offs - w->used, pad);
}

int ubifs_wbuf_sync(struct ubifs_wbuf *w)
{
	struct ubifs_fs *fs = w->fs;
	if (!w->used || w->lnum < 0)
		return 0;
	uint32_t sync_len = align_up(w->used, fs->min_io_size);
	uint32_t dirt = sync_len - w->used;
	ubifs_pad_pack(w->buf + w->used, dirt);
	int err = ubifs_leb_write(fs, (uint32_t)w->lnum, w->offs, w->buf, sync_len);
	if (err)
		return err;
	w->offs += sync_len;
	w->used = 0;
	set_size(w);
	w->ninodes = 0;
	return cb(w, dirt);
}

int ubifs_wbuf_write(struct ubifs_wbuf *w, const void *src, uint32_t len)
{
	struct ubifs_fs *fs = w->fs;
	const uint8_t *buf = src;
	uint32_t aligned = ubifs_align8(len), written = 0;
	if (w->lnum < 0 || len == 0)
		return util_err_set(&fs->err, -EINVAL, "write-buffer of head %d is not positioned", w->jhead);
	if (fs->leb_size - w->offs - w->used < aligned)
		return -ENOSPC;
	int err;
	if (aligned <= w->avail) {
		memcpy(w->buf + w->used, buf, len);
		ubifs_pad_pack(w->buf + w->used + len, aligned - len);
		if (aligned == w->avail) {
			err = ubifs_leb_write(fs, (uint32_t)w->lnum, w->offs, w->buf, w->size);
			if (err)
				return err;
			w->offs += w->size;
			w->used = 0;
			w->ninodes = 0;
			set_size(w);
		} else {
			w->used += aligned;
			w->avail -= aligned;
		}
		return cb(w, 0);
	}
	/* does not fit: fill the current unit, write it, then whole units
	 * directly, and keep the tail in the buffer */
	uint32_t mws = fs->max_write_size;
	if (w->used) {
		memcpy(w->buf + w->used, buf, w->avail);
		err = ubifs_leb_write(fs, (uint32_t)w->lnum, w->offs, w->buf, w->size);
		if (err)
			return err;
		w->offs += w->size;
		len -= w->avail;
		aligned -= w->avail;
		written += w->avail;
	} else if (w->offs % mws) {
		/* get back to max_write_size alignment */
		err = ubifs_leb_write(fs, (uint32_t)w->lnum, w->offs, buf, w->size);
		if (err)
			return err;
		w->offs += w->size;
		len -= w->size;
		aligned -= w->size;
		written += w->size;
	}
	uint32_t n = aligned / mws;
	if (n) {
		uint32_t m = (n - 1) * mws;
		if (m) {
			err = ubifs_leb_write(fs, (uint32_t)w->lnum, w->offs, buf + written, m);
			if (err)
				return err;
			w->offs += m;
			aligned -= m;
			len -= m;
			written += m;
		}
		/* the last whole unit via the buffer (the source may end < 8 bytes early) */
		uint32_t cp = len < mws ? len : mws;
		memcpy(w->buf, buf + written, cp);
		if (mws > len)
			ubifs_pad_pack(w->buf + len, mws - len);
		err = ubifs_leb_write(fs, (uint32_t)w->lnum, w->offs, w->buf, mws);
		if (err)
			return err;
		w->offs += mws;
		aligned -= mws;
		len -= cp;
		written += mws;
	}
	if (aligned) {
		memcpy(w->buf, buf + written, len);
		ubifs_pad_pack(w->buf + len, aligned - len);
	}
	w->used = aligned;
	w->ninodes = 0;
	set_size(w);
	return cb(w, 0);
}

int ubifs_wbuf_add_ino(struct ubifs_wbuf *w, uint32_t inum)
{
	if (!w->used)
		return 0;
	if (ubifs_wbuf_has_ino(w, inum))
		return 0;
	if (w->ninodes == w->cap_inodes) {
		uint32_t cap = w->cap_inodes ? w->cap_inodes * 2 : 16;
		uint32_t *n = realloc(w->inodes, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		w->inodes = n;
		w->cap_inodes = cap;
	}
	w->inodes[w->ninodes++] = inum;
	return 0;
}

int ubifs_wbuf_has_ino(const struct ubifs_wbuf *w, uint32_t inum)
{
	for (uint32_t i = 0; i < w->ninodes; i++)
		if (w->inodes[i] == inum)
			return 1;
	return 0;
}

void ubifs_wbuf_overlay(const struct ubifs_wbuf *w, uint32_t lnum, uint32_t offs, uint8_t *out, size_t len)
{
	if (w->lnum != (int64_t)lnum || !w->used)
		return;
	uint64_t b0 = w->offs, b1 = (uint64_t)w->offs + w->used;
	uint64_t r0 = offs, r1 = (uint64_t)offs + len;
	uint64_t lo = r0 > b0 ? r0 : b0, hi = r1 < b1 ? r1 : b1;
	if (lo >= hi)
		return;
	memcpy(out + (lo - r0), w->buf + (lo - b0), (size_t)(hi - lo));
}
