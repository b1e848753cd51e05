/* ubifs_tnc_commit — the index part of a commit: every dirty znode written
 * as an index node (children first) at the index head and in empty LEBs
 * taken for the index; the new root's position comes back for the master.
 * Updates the TNC's index head and index size (ubifs_tnc.h). */
#ifndef UBIKIT_UBIFS_TNC_COMMIT_H
#define UBIKIT_UBIFS_TNC_COMMIT_H
#include <stdint.h>

struct ubifs_fs;

int ubifs_tnc_commit(struct ubifs_fs *fs, uint32_t *root_lnum, uint32_t *root_offs, uint32_t *root_len);

#endif
