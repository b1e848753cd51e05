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
	int fscrypt_key; /* a fscrypt master key was given at mount */
};

/* The UBIFS instance of a mounted ubikit_fs. */
static inline struct ubifs_fs *fs_ubifs(struct ubikit_fs *fs)
{
	return fs->ubifs;
}

/* Path resolution (fs_path.c). follow_last: follow a symlink in the last
 * component. Returns 0 and the inode number, or -ENOENT/-ENOTDIR/-ELOOP/... */
int fs_resolve(struct ubikit_fs *fs, const char *path, int follow_last, uint64_t *inum);
/* The directory a path's last component is in, and that component (no
 * trailing slashes; "." and ".." refused with -EINVAL, "/" with -EBUSY). */
int fs_resolve_parent(struct ubikit_fs *fs, const char *path, uint64_t *dir, char name[256], size_t *nlen);
/* What a path's last component is, as the kernel's path walk names it
 * (LAST_NORM, LAST_DOT, LAST_DOTDOT, LAST_ROOT), and whether slashes follow
 * it: each call answers these cases with the errno Linux gives. */
enum { FS_LAST_NORM, FS_LAST_DOT, FS_LAST_DOTDOT, FS_LAST_ROOT };
int fs_path_last(const char *path, int *trailing_slash);

/* O_CREAT of a missing regular file (fs_write.c) */
int fs_create_file(struct ubikit_fs *fs, const char *path, uint32_t mode, uint64_t *ino);

/* an open file (fs_ops.c, fs_write.c) */
struct ubikit_file {
	struct ubikit_fs *fs;
	struct ubifs_inode ino;
	uint64_t pos;
	int flags; /* open(2) flags */
};

#endif
