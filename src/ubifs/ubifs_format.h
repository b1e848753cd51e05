/* ubifs_format — create a fresh UBIFS on an empty volume with the kernel's
 * defaults (kernel create_default_filesystem), as the first read-write
 * mount of an empty UBI volume does. */
#ifndef UBIKIT_UBIFS_FORMAT_H
#define UBIKIT_UBIFS_FORMAT_H
#include <stdint.h>

#include "util/util_err.h"

struct ubi_vol_io;

struct ubifs_format_opts {
	unsigned compr;        /* default compressor (UBIFS_COMPR_*); the kernel's: zstd when built in, else LZO */
	int uuid_set;
	uint8_t uuid[16];
	int time_set;          /* root inode times */
	int64_t time;
};

/* 1 when no LEB of the volume is mapped (the kernel's test for "empty"),
 * or, without mapping information, every LEB is erased; 0 if not; <0 error. */
int ubifs_vol_is_empty(struct ubi_vol_io *vol);
/* Lay out the file system; vol must be empty. */
int ubifs_format(struct ubi_vol_io *vol, const struct ubifs_format_opts *o, struct util_err *e);

#endif
