/* ubifs_journal — the journal heads (GC, base, data), each a write-buffer
 * in its current bud LEB, and the kernel's journal operations (journal.c):
 * every change is one group of nodes appended to one head, then the TNC is
 * updated in memory and the space of the nodes it obsoletes is added to
 * their LEBs' dirt. Heads take LEBs from the LPT (ubifs_lpt_find_free) and
 * announce them in the log (ubifs_log_add_bud); a full log asks for a
 * commit.
 *
 * Inodes are given as struct ubifs_inode (ubifs.h), already carrying the
 * new values (sizes, link counts, times) the caller computed. */
#ifndef UBIKIT_UBIFS_JOURNAL_H
#define UBIKIT_UBIFS_JOURNAL_H
#include <stddef.h>
#include <stdint.h>

#include "ubifs/ubifs.h"

struct ubifs_fs;
struct ubifs_jnl;
struct ubifs_wbuf;

int ubifs_jnl_open(struct ubifs_fs *fs, struct ubifs_jnl **out);
void ubifs_jnl_close(struct ubifs_jnl *jnl);
struct ubifs_wbuf *ubifs_jnl_head(struct ubifs_jnl *jnl, unsigned jhead);
unsigned ubifs_jnl_head_cnt(const struct ubifs_jnl *jnl);
/* Write out every head's buffer (padded to min_io_size). */
int ubifs_jnl_sync_all(struct ubifs_fs *fs);
/* Write out the heads holding nodes of inode inum (fsync). */
int ubifs_jnl_sync_ino(struct ubifs_fs *fs, uint32_t inum);

/* Entry nm of dir (xent: an xattr entry of host dir) now names ino, or with
 * deletion is gone; writes entry, ino and dir (kernel ubifs_jnl_update). */
int ubifs_jnl_update(struct ubifs_fs *fs, const struct ubifs_inode *dir, const char *name, size_t nlen,
		     const struct ubifs_inode *ino, int deletion, int xent);
/* One data block (len <= 4096 bytes of block `block`), compressed per the
 * inode's flags as the kernel does. */
int ubifs_jnl_write_data(struct ubifs_fs *fs, const struct ubifs_inode *ino, uint32_t block, const void *buf,
			 uint32_t len);
/* The inode alone; with nlink 0 a deletion inode, and the inode leaves the index. */
int ubifs_jnl_write_inode(struct ubifs_fs *fs, const struct ubifs_inode *ino);
/* The same in the data head, after the inode's data nodes were written
 * there (write-back): fsync then syncs one write-buffer instead of two
 * (one page program less per small append + fsync). The kernel writes the
 * inode in the base head; its replay orders the nodes of every bud by
 * sequence number whatever head wrote them, so this is the same file
 * system to it (tests/vm: the kernel's checks pass on such journals). */
int ubifs_jnl_write_inode_data(struct ubifs_fs *fs, const struct ubifs_inode *ino);
/* Last reference gone after ubifs_jnl_update(deletion) in commit del_cmtno:
 * no node is needed unless a commit came in between (kernel rule). */
int ubifs_jnl_delete_inode(struct ubifs_fs *fs, const struct ubifs_inode *ino, uint64_t del_cmtno);
/* Shrinking truncation: inode, truncation node and the cut last block. */
int ubifs_jnl_truncate(struct ubifs_fs *fs, const struct ubifs_inode *ino, uint64_t old_size, uint64_t new_size);
/* Rename (kernel ubifs_jnl_rename): old_name in old_dir moves to new_name in
 * new_dir; new_ino (may be NULL) is the replaced inode (its nlink already
 * lowered); whiteout (may be NULL) is a new inode left under old_name. */
int ubifs_jnl_rename(struct ubifs_fs *fs, const struct ubifs_inode *old_dir, const struct ubifs_inode *old_ino,
		     const char *old_name, size_t old_nlen, const struct ubifs_inode *new_dir,
		     const struct ubifs_inode *new_ino, const char *new_name, size_t new_nlen,
		     const struct ubifs_inode *whiteout);
/* RENAME_EXCHANGE (kernel ubifs_jnl_xrename). */
int ubifs_jnl_xrename(struct ubifs_fs *fs, const struct ubifs_inode *fst_dir, const struct ubifs_inode *fst_ino,
		      const char *fst_name, size_t fst_nlen, const struct ubifs_inode *snd_dir,
		      const struct ubifs_inode *snd_ino, const char *snd_name, size_t snd_nlen);
/* xattr removal (xino has nlink 0) and change (kernel jnl_delete_xattr / change_xattr). */
int ubifs_jnl_delete_xattr(struct ubifs_fs *fs, const struct ubifs_inode *host, const struct ubifs_inode *xino,
			   const char *name, size_t nlen);
int ubifs_jnl_change_xattr(struct ubifs_fs *fs, const struct ubifs_inode *xino, const struct ubifs_inode *host);

/* lprops callbacks shared with the commit */
int ubifs_jnl_return_leb(struct ubifs_fs *fs, uint32_t lnum);

#endif
