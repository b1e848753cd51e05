/* ubifs_rebuild — fsck's repair: a whole new UBIFS laid out (ubifs_build)
 * from the leaf nodes found by a scan of every main-area LEB of a volume
 * whose superblock is good. The newest node (sqnum) of each key wins; the
 * result is made consistent (entries need their directory/host and a
 * target of the right type, a directory keeps one name, a missing root is
 * made anew, unreachable regular files go to /lost+found/INO_<inum>_<n>,
 * everything else unreachable is dropped, link counts, sizes and xattr
 * accounting recomputed). Every change is reported through cb, with
 * loss = 1 when data or a name is lost. */
#ifndef UBIKIT_UBIFS_REBUILD_H
#define UBIKIT_UBIFS_REBUILD_H
#include <stdint.h>

#include "util/util_err.h"

struct ubi_vol_io;

typedef int (*ubifs_rebuild_cb)(void *ctx, int loss, const char *msg, int64_t lnum, int64_t offs, uint64_t inum);

/* dry_run: only report (nothing written); *losses = changes that lose
 * something. Else the volume is unmapped and written anew. */
int ubifs_rebuild(struct ubi_vol_io *vol, int dry_run, ubifs_rebuild_cb cb, void *ctx, unsigned long *losses,
		  struct util_err *e);

#endif
