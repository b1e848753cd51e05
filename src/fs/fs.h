/* fs — internals of the fs layer shared by its files and by the tools:
 * the struct ubikit_fs behind <ubikit/ubikit.h> and a way to reach the
 * mounted UBIFS under it (for `ubikit info` / `dump`). */
#ifndef UBIKIT_FS_FS_H
#define UBIKIT_FS_FS_H
#include <ubikit/ubikit.h>

#include "ubifs/ubifs.h"
#include "util/util_err.h"

struct ubikit_fs {
	struct ubifs_fs *ubifs;
	struct util_err err;
	int read_only;
};

/* The UBIFS instance of a mounted ubikit_fs. */
static inline struct ubifs_fs *fs_ubifs(struct ubikit_fs *fs)
{
	return fs->ubifs;
}

/* Path resolution (fs_path.c). follow_last: follow a symlink in the last
 * component. Returns 0 and the inode number, or -ENOENT/-ENOTDIR/-ELOOP/... */
int fs_resolve(struct ubikit_fs *fs, const char *path, int follow_last, uint64_t *inum);

#endif
