/* flash_window — a read-only flash device that is a window into another:
 * PEB 0 of the window starts `base` data bytes into the flash below, which
 * need not be a PEB boundary (a UBI image behind a vendor header, the
 * second of several UBI devices in one dump). Reads that cross a PEB of the
 * flash below are split; bytes past its end read as erased (0xFF). Writes,
 * erases and bad-block marking are refused with -EROFS. The window owns
 * the flash below and closes it. */
#ifndef UBIKIT_FLASH_WINDOW_H
#define UBIKIT_FLASH_WINDOW_H
#include <stdint.h>

#include "flash/flash.h"

/* base: data bytes (PEB x peb_size + offset) into `under`; size: how many
 * bytes from there belong to the window (the rest of its peb_count PEBs
 * read as erased: PEBs assumed after the end of an image, never the next
 * device's). The window has under's geometry with peb_count PEBs. A base that is not a multiple of
 * the PEB size is for flashes without OOB (the caller's rule: bad-block
 * markers are then not looked at). On failure `under` is not closed. */
int flash_window_open(struct flash_dev *under, uint64_t base, uint64_t size, uint32_t peb_count,
		      struct flash_dev **out);

#endif
