/* ubifs_recovery_write — the writes of a read-write mount after an unclean
 * unmount (kernel recovery.c, read-write branches). See the .c file. */
#ifndef UBIKIT_UBIFS_RECOVERY_WRITE_H
#define UBIKIT_UBIFS_RECOVERY_WRITE_H
#include <stdint.h>

struct ubifs_fs;
struct ubifs_sleb;

/* kernel fix_unclean_leb: keep [0, end of the last kept node), pad to the
 * min. I/O unit, replace the LEB atomically (unmap when nothing is kept). */
int ubifs_rcvry_fix_leb(struct ubifs_fs *fs, const struct ubifs_sleb *sleb, uint32_t start);
/* kernel write_rcvrd_mst_node: the recovered master (RCVRY flag) at offset
 * 0 of both master LEBs, each replaced atomically. */
int ubifs_rcvry_write_master(struct ubifs_fs *fs);
/* kernel ubifs_recover_inl_heads: index and LPT heads cleaned. */
int ubifs_rcvry_inl_heads(struct ubifs_fs *fs);
/* kernel ubifs_rcvry_gc_commit (empty-LEB branch), with the inode size
 * fixes written first. */
int ubifs_rcvry_gc_commit(struct ubifs_fs *fs);

#endif
