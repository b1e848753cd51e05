/* fs_fsck — the fs layer's part of fsck (include/ubikit/fsck.h), shared
 * with the image layer: adding problems to a report. The check itself is
 * fs_fsck.c (ubikit_fsck_fs), the report list fs_fsck_report.c. */
#ifndef UBIKIT_FS_FS_FSCK_H
#define UBIKIT_FS_FS_FSCK_H
#include <stddef.h>
#include <stdint.h>
#include <ubikit/fsck.h>

/* Append one problem (printf-style sentence; path may be NULL). Returns 0
 * or -ENOMEM. */
int fs_fsck_add(struct ubikit_fsck_report *r, unsigned flags, int64_t peb, int64_t lnum, int64_t offs,
		uint64_t inum, const char *path, const char *fmt, ...) __attribute__((format(printf, 8, 9)));

struct ubikit_fs;
/* fsck's in-place repair of a read-write mount (ubifs_fsck_fix): every fix
 * a FIXED problem in rep, *fixed how many. dry_run: the fixes it would make
 * (not flagged FIXED), any mount. 0 or negative errno. */
int fs_fsck_fix(struct ubikit_fs *fs, int dry_run, struct ubikit_fsck_report *rep, unsigned long *fixed);

struct ubi_vol_io;
/* Read and check the superblock (LEB 0) of a volume without mounting;
 * 0, or negative errno with the reason in msg. */
int fs_fsck_read_sb(struct ubi_vol_io *vol, char *msg, size_t msglen);
/* fsck's repair: rebuild the volume from the nodes on flash
 * (ubifs_rebuild); every change is a FIXED problem in rep (LOSS when
 * something is lost), *losses how many lose something. dry_run: report
 * only, nothing written. */
int fs_fsck_rebuild(struct ubi_vol_io *vol, int dry_run, struct ubikit_fsck_report *rep, unsigned long *losses,
		    char *msg, size_t msglen);

#endif
