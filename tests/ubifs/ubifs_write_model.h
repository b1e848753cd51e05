/* ubifs_write_model — a reference model of a file tree for the write-path
 * tests: random operations (create every file type, write, truncate,
 * unlink, rmdir, link, rename with every flag, xattrs, chmod) are applied to
 * a read-write ubifs_fs and to the model; the model says what each call
 * must return and what the tree must be afterwards, including the kernel's
 * accounting (directory sizes and link counts, xattr counts and sizes).
 * wm_check compares a mounted fs with the model; wm_manifest prints the
 * tree in the format tests/ubifs/vm_write_manifest.sh prints inside the
 * Linux VM. */
#ifndef UBIKIT_TESTS_UBIFS_WRITE_MODEL_H
#define UBIKIT_TESTS_UBIFS_WRITE_MODEL_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct ubifs_fs;
struct wm;

/* root: the existing root directory (inode 1) is taken as empty apart
 * from what the model creates under "/w" (made by wm_new). */
int wm_new(struct ubifs_fs *fs, uint64_t seed, struct wm **out);
void wm_free(struct wm *m);
/* Take the tree an earlier wm_new(seed) run left under /w<seed> as the
 * model (after another system changed the image elsewhere). */
int wm_adopt(struct ubifs_fs *fs, uint64_t seed, struct wm **out, char *why, size_t whysz);
/* n random operations; returns 0, or -1 with a message in why when the fs
 * did not do what the model expected. big: allow writes of up to 256 KiB. */
int wm_run(struct wm *m, struct ubifs_fs *fs, unsigned n, int big, char *why, size_t whysz);
/* Compare the whole tree under /w; 0 or -1 with the first difference. */
int wm_check(const struct wm *m, struct ubifs_fs *fs, char *why, size_t whysz);
/* The tree under /w, one line per path (sorted), then xattrs. */
void wm_manifest(const struct wm *m, FILE *out);
/* Keep the regular files' bytes at most max_bytes (0: no bound): a write
 * that would pass it empties its file instead (a truncation to 0), and
 * single writes are at most max_bytes / 8, and above 300 names creations
 * and links become removals (GC churn on small devices). */
void wm_set_limit(struct wm *m, uint64_t max_bytes);
uint64_t wm_live_bytes(const struct wm *m);
/* counts of operations done, for the test's report */
void wm_stats(const struct wm *m, unsigned *ops, unsigned *files, uint64_t *bytes_written);

#endif
