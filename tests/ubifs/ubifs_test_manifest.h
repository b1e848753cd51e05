/* ubifs_test_manifest — the listing of tests/tools/ubifs_manifest.sh (path,
 * type, raw mode, links, owner, size, mtime, md5 / link target / device
 * numbers, then every xattr in hex) made through the ubikit fs API, so that a
 * tree ubikit mounts can be compared line for line with the one the Linux
 * kernel showed for the same flash (tests/data: *.manifest). */
#ifndef UBIKIT_TESTS_UBIFS_TEST_MANIFEST_H
#define UBIKIT_TESTS_UBIFS_TEST_MANIFEST_H

struct ubikit_fs;

/* The manifest of the whole mounted tree (malloc'd). Fails the running
 * cmocka test on an error (a read error is a difference). */
char *tm_manifest(struct ubikit_fs *fs);

/* The contents of a file (malloc'd, NUL-terminated), NULL if unreadable. */
char *tm_slurp(const char *path);

/* Compare got with the file want_path: 0 if equal; otherwise writes got next
 * to workdir/name.actual, prints a diff and returns -1. */
int tm_compare(const char *got, const char *want_path, const char *workdir, const char *name);

/* Walk the whole index: every inode in it must be named by a directory
 * entry or an xattr entry (the root aside). An inode nothing names is lost
 * (an orphan not killed, the xattr inodes of a deleted inode left behind):
 * invisible in the tree, but the kernel leaves none after its mount, with
 * one exception of Linux 6.1 (the judge here): an xattr inode listed in the
 * orphan area, which its orphan killing skips (link count 1).
 * Returns the number of such inodes (each printed), <0 on a read error. */
int tm_lost_inodes(struct ubikit_fs *fs, const char *name);

#endif
