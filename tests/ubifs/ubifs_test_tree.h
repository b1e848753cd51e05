/* ubifs_test_tree — test helpers: build a source tree with every file type,
 * run mkfs.ubifs on it, and compare a mounted ubikit_fs against the source
 * tree (content, modes, link counts, owners, sizes, mtimes, symlink targets,
 * device numbers, hard links, readdir order by hash). */
#ifndef UBIKIT_TESTS_UBIFS_TEST_TREE_H
#define UBIKIT_TESTS_UBIFS_TEST_TREE_H
#include <stddef.h>
#include <stdint.h>

struct ubikit_fs;

/* Create the standard tree under dir (removed first). big: add a sparse
 * file larger than 4 GiB. Returns 0 or -1. has_devices set when device
 * nodes could be created (needs root). */
int tt_make_tree(const char *dir, int big, int *has_devices);

/* Run a shell command, return its exit status (-1 if it could not run). */
int tt_run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Compare fs (mounted image of src) with src. Prints every mismatch;
 * returns the number of mismatches, *entries = entries compared. */
int tt_compare_tree(struct ubikit_fs *fs, const char *src, uint64_t *entries);

/* Walk the whole fs reading everything (no reference): returns 0 if every
 * call succeeded or failed with a clean error; counts entries. Used on
 * corrupt images: must never crash. errors = calls that returned errors. */
int tt_walk_all(struct ubikit_fs *fs, uint64_t *entries, uint64_t *errors);

struct flash_geometry;
/* Unpack a gzip'd raw flash image (UBI), attach it read-only with our UBI and
 * copy volume 0 out as a bare UBIFS image (LEBs back to back, unmapped =
 * 0xFF). Returns 0, *img malloc'd. */
int tt_ubi_gz_to_flat(const char *gz, const struct flash_geometry *geo, int has_oob, const char *workfile,
		      uint8_t **img, size_t *len, uint32_t *leb_size);

#endif
