/* ubifs_wbuf — a write-buffer: the bytes of one journal head that are not
 * yet on flash. Nodes are appended 8-byte aligned; whole max_write_size
 * units are written as they fill; a sync writes the used part rounded up to
 * min_io_size with the kernel's padding (a padding node, or 0xCE bytes when
 * fewer than 28 bytes are left) — as the kernel's io.c does, so the bytes on
 * flash are the kernel's.
 *
 * The owner (the journal) gets a callback after every change of the LEB's
 * free space, with the padding that became dirt (kernel sync_callback). */
#ifndef UBIKIT_UBIFS_WBUF_H
#define UBIKIT_UBIFS_WBUF_H
#include <stddef.h>
#include <stdint.h>

struct ubifs_fs;

struct ubifs_wbuf {
	struct ubifs_fs *fs;
	int jhead;
	int64_t lnum;   /* -1: not seeked */
	uint32_t offs;  /* flash offset of buf[0] (min_io aligned) */
	uint32_t used;  /* bytes in buf */
	uint32_t avail; /* size - used */
	uint32_t size;  /* this round's size: up to the next max_write_size boundary */
	uint8_t *buf;   /* max_write_size bytes */
	/* inodes with nodes in buf (kernel next_ino / inodes: fsync needs them) */
	uint32_t *inodes;
	uint32_t ninodes, cap_inodes;
	/* free = leb_size - offs - used after the change; pad = dirt added */
	int (*sync_cb)(struct ubifs_fs *fs, uint32_t lnum, uint32_t free, uint32_t pad);
};

int ubifs_wbuf_init(struct ubifs_fs *fs, struct ubifs_wbuf *w, int jhead);
void ubifs_wbuf_free(struct ubifs_wbuf *w);
/* Target lnum:offs (offs min_io aligned); the buffer must be empty. */
int ubifs_wbuf_seek(struct ubifs_wbuf *w, uint32_t lnum, uint32_t offs);
/* Append len bytes (one node or a group of 8-aligned nodes). -ENOSPC if the
 * LEB has not ALIGN(len, 8) bytes left. */
int ubifs_wbuf_write(struct ubifs_wbuf *w, const void *buf, uint32_t len);
/* Write the buffered bytes out, padded to min_io_size. */
int ubifs_wbuf_sync(struct ubifs_wbuf *w);
/* Remember that inode inum has nodes in the buffer. */
int ubifs_wbuf_add_ino(struct ubifs_wbuf *w, uint32_t inum);
int ubifs_wbuf_has_ino(const struct ubifs_wbuf *w, uint32_t inum);
/* Copy the buffered bytes that overlap lnum:[offs, offs+len) into out
 * (reads of nodes not yet on flash). */
void ubifs_wbuf_overlay(const struct ubifs_wbuf *w, uint32_t lnum, uint32_t offs, uint8_t *out, size_t len);
/* Bytes of the LEB still free for appending. */
static inline uint32_t ubifs_wbuf_room(const struct ubifs_wbuf *w, uint32_t leb_size)
{
	return w->lnum < 0 ? 0 : leb_size - w->offs - w->used;
}

#endif
