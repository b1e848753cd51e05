/* ubi_flat — a bare UBIFS image (mkfs.ubifs -o output: LEBs back to back)
 * presented as a UBI volume through struct ubi_vol_io.
 *
 * A file shorter than leb_count LEBs means the missing LEBs are unmapped
 * (read as 0xFF). leb_size 0 = take it (and min_io_size, leb_cnt) from the
 * UBIFS superblock at offset 0. The volume has max(leb_cnt from the
 * superblock, LEBs in the file) LEBs. Read-only volumes refuse every write
 * (-EROFS) and never open the file for writing. The _mem variant serves an
 * image held in memory (fuzzing, tests); it copies the buffer. */
#ifndef UBIKIT_UBI_FLAT_H
#define UBIKIT_UBI_FLAT_H
#include <stddef.h>
#include <stdint.h>

#include "ubi/ubi_vol_io.h"

struct util_err;

int ubi_flat_open(const char *path, uint32_t leb_size, int read_only, struct ubi_vol_io *out);
/* Same, with the reason for a failure in err (may be NULL). */
int ubi_flat_open_err(const char *path, uint32_t leb_size, int read_only, struct ubi_vol_io *out,
		      struct util_err *err);
int ubi_flat_open_mem(const void *buf, size_t len, uint32_t leb_size, int read_only, struct ubi_vol_io *out,
		      struct util_err *err);
/* Writes back (file variant, read-write) and frees everything. */
int ubi_flat_close(struct ubi_vol_io *vol);

#endif
