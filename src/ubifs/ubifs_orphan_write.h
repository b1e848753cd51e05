/* ubifs_orphan_write — open inodes and orphans on read-write mounts (the
 * kernel's orphan.c write side plus the open counts the VFS keeps for it).
 *
 * An inode whose last link goes while it is open stays in the index with a
 * link count of 0 and becomes an orphan; it is deleted (ubifs_jnl_delete_inode)
 * at its last close, or at unmount. Each commit writes the orphans added
 * since the last one to the orphan area (between the LPT and the master, as
 * the kernel's ubifs_orphan_end_commit), consolidating the area when it is
 * short; the master says NO_ORPHS when there are none. As Linux 6.1, the
 * xattr inodes of an orphan are listed as orphans too. */
#ifndef UBIKIT_UBIFS_ORPHAN_WRITE_H
#define UBIKIT_UBIFS_ORPHAN_WRITE_H
#include <stdint.h>

#include "ubifs/ubifs.h"

struct ubifs_fs;
struct ubifs_orph;

/* After the mount's orphan step: the orphan head at the start of the area
 * (the area was cleared, or its orphans killed and the LEBs are unmapped
 * before their first write). */
int ubifs_orph_open(struct ubifs_fs *fs, struct ubifs_orph **out);
void ubifs_orph_close(struct ubifs_orph *o);
/* inum is about to lose its last link: listed as an orphan before the
 * journal write that drops it (the kernel adds it inside that journal
 * update, where no commit can come between), so that any commit until its
 * deletion is written names it in the orphan area; the index of such a
 * commit holds the inode with no link. ubifs_orph_not_dying when that
 * write fails. */
int ubifs_orph_dying(struct ubifs_fs *fs, uint64_t inum, uint64_t del_cmtno);
void ubifs_orph_not_dying(struct ubifs_fs *fs, uint64_t inum);
/* ino has just lost its last link (journal written, del_cmtno = the commit
 * number before that write): stays an orphan if open, else deleted now
 * (and no longer an orphan). */
int ubifs_orph_last_link(struct ubifs_fs *fs, const struct ubifs_inode *ino, uint64_t del_cmtno);
/* Is inum an orphan (open, no links)? Its inode node is written, not deleted. */
int ubifs_orph_is_orphan(const struct ubifs_orph *o, uint64_t inum);
/* Commit: write the new orphans; *no_orphs = no orphans at all. */
int ubifs_orph_commit(struct ubifs_fs *fs, int *no_orphs);
/* Unmount: delete every orphan still open. */
int ubifs_orph_unmount(struct ubifs_fs *fs);
uint32_t ubifs_orph_count_all(const struct ubifs_orph *o);

#endif
