/* ubifs_wcache — write-back of file data: a bounded in-memory cache of
 * dirty 4 KiB blocks per inode (the kernel's dirty page cache), with the
 * inode's in-memory size and times (the kernel's dirty inode).
 *
 * Why in the UBIFS layer and not in src/fs: every page in it holds a
 * budget (ubifs_budget.c) and the budget's way out of ENOSPC is to write
 * the cache back; sync, unmount and reads by inode number (FUSE) must all
 * see it, and the inode size the layer returns must be the cached one.
 *
 * Rules (kernel file.c write_begin/write_end/writepage):
 *  - a block enters the cache only after its budget is granted (new_page
 *    for a block the file has no data for, dirtied_page otherwise; the
 *    first dirty block of an inode also budgets the inode: dirtied_ino);
 *    a write stops at the first block that does not fit: a short count, or
 *    -ENOSPC when no byte was taken;
 *  - write-back writes the blocks in order, then the inode, and gives
 *    their budgets back; a write-back never needs new
 *    space reservations, so it cannot fail for space;
 *  - it runs on fsync (that inode), sync, unmount, when the dirty bytes
 *    reach the bound, and when the budget asks for space;
 *  - reads and inode loads see the cache (ubifs_file.c overlays it);
 *  - truncation drops the blocks beyond the new size and zeroes the tail
 *    of the last one. */
#ifndef UBIKIT_UBIFS_WCACHE_H
#define UBIKIT_UBIFS_WCACHE_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct ubifs_fs;
struct ubifs_inode;
struct ubifs_wcache;

#define UBIFS_DEFAULT_DIRTY_LIMIT (4u << 20) /* bytes of dirty blocks before write-back */

int ubifs_wcache_open(struct ubifs_fs *fs, size_t limit, struct ubifs_wcache **out);
/* Frees everything (cached data not written back is lost: call flush first). */
void ubifs_wcache_close(struct ubifs_wcache *wc);

/* Write len bytes at off into the cache (ui: the inode as loaded, overlay
 * applied). Returns the bytes taken (short at ENOSPC) or -errno. */
ssize_t ubifs_wcache_write(struct ubifs_fs *fs, const struct ubifs_inode *ui, const void *buf, size_t len,
			   uint64_t off);
/* Write back one inode's blocks and inode / every inode. */
int ubifs_wcache_flush_ino(struct ubifs_fs *fs, uint64_t inum);
int ubifs_wcache_flush_all(struct ubifs_fs *fs);

/* Overlays for the read side: the cached size and times of ui->inum; the
 * cached block `block` of inum into out (4096 bytes): 1, or 0 when it is
 * not cached. */
void ubifs_wcache_inode(const struct ubifs_fs *fs, struct ubifs_inode *ui);
int ubifs_wcache_block(const struct ubifs_fs *fs, uint64_t inum, uint32_t block, uint8_t *out);

/* The size of inum changes to size (truncate, either way): blocks beyond
 * dropped (budgets given back), the last one cut. */
void ubifs_wcache_truncate(struct ubifs_fs *fs, uint64_t inum, uint64_t size);
/* inum was just deleted: if it left the index (no orphan keeps it), its
 * cached blocks and their budgets go now (kernel: evict truncates the
 * page cache). */
void ubifs_wcache_drop_deleted(struct ubifs_fs *fs, uint64_t inum);
/* The inode's times were just written with explicit values (setattr):
 * forget the cached ones. */
void ubifs_wcache_times_written(struct ubifs_fs *fs, uint64_t inum);

struct ubifs_wcache_stats {
	size_t limit, dirty_bytes, peak_bytes;
	uint32_t inodes;
	uint64_t pages_cached, pages_written, flushes, bound_flushes;
};
void ubifs_wcache_get_stats(const struct ubifs_fs *fs, struct ubifs_wcache_stats *out);

#endif
