/* ubifs_lcache — a whole-LEB read cache for passes that read the same
 * LEBs several times (fsck: the index and leaf checks, the LPT check's
 * scan, the read-back scan and the file walk each read the LEBs in use).
 * The first read of a LEB reads all of it; later reads are served from
 * memory, up to a byte limit. Writes, atomic changes, maps and unmaps of a
 * LEB drop it. Off unless a caller turns it on. */
#ifndef UBIFS_LCACHE_H
#define UBIFS_LCACHE_H
#include <stddef.h>
#include <stdint.h>

struct ubifs_fs;
struct ubifs_lcache;

/* Turn the cache on for fs, holding at most limit bytes of LEBs. */
int ubifs_lcache_enable(struct ubifs_fs *fs, uint64_t limit);
/* Turn it off and free it (nothing if it is off). */
void ubifs_lcache_disable(struct ubifs_fs *fs);
/* 1: served from the cache (or read whole and cached), 0: not cached (the
 * caller reads), <0 never (a failed whole-LEB read is left to the caller,
 * whose narrower read may succeed). */
int ubifs_lcache_read(struct ubifs_lcache *c, struct ubifs_fs *fs, uint32_t lnum, uint32_t offs, void *buf,
		      size_t len);
void ubifs_lcache_drop(struct ubifs_lcache *c, uint32_t lnum);
/* LEBs read from the volume through the cache (each once) */
uint64_t ubifs_lcache_lebs_read(const struct ubifs_lcache *c);
#endif
