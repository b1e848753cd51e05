/* ubi_vol_io — what the UBIFS layer sees of one UBI volume: LEB-granular
 * read/write/atomic-change/map/unmap through a small vtable, so that UBIFS
 * runs over a real attached UBI volume (ubi_volume_io()) or over a bare
 * UBIFS image file (ubi_flat, mkfs.ubifs output) alike.
 *
 * Errors: negative errno. read returns 0 even after corrected bit flips
 * (UBI scrubs them); -EBADMSG for uncorrectable data. Unmapped LEBs read as
 * 0xFF. Writes follow UBI's rules: offsets and lengths aligned to min_io_size,
 * each LEB written sequentially. */
#ifndef UBIKIT_UBI_VOL_IO_H
#define UBIKIT_UBI_VOL_IO_H
#include <stddef.h>
#include <stdint.h>

struct ubi_vol_io {
	void *ctx;
	uint32_t leb_size;    /* usable bytes per LEB */
	uint32_t leb_count;   /* LEBs in the volume (reserved_pebs) */
	uint32_t min_io_size; /* write unit */
	uint32_t max_write_size;
	int read_only;
	int (*read)(void *ctx, uint32_t lnum, uint32_t off, void *buf, size_t len);
	int (*write)(void *ctx, uint32_t lnum, uint32_t off, const void *buf, size_t len);
	/* Atomically replace the whole LEB contents with len bytes. */
	int (*change)(void *ctx, uint32_t lnum, const void *buf, size_t len);
	int (*unmap)(void *ctx, uint32_t lnum);
	int (*map)(void *ctx, uint32_t lnum);
	/* 1 mapped, 0 not, <0 error */
	int (*is_mapped)(void *ctx, uint32_t lnum);
	int (*sync)(void *ctx);
};

#endif
