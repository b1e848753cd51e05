/* image_mkfs — `ubikit mkfs FLASH --vol-name NAME`: make a UBIFS from a
 * host tree straight onto a UBI volume of a flash image (simulator flash,
 * NAND dump with or without OOB, UBI image, MTD device), as mkfs.ubifs on
 * /dev/ubiX_Y followed by ubiupdatevol, or ubimkvol + ubiupdatevol.
 *
 * The volume:
 *   - exists: it must be dynamic; its contents are replaced (volume
 *     update, as ubiupdatevol: the update marker is set first, so an
 *     interrupted write leaves a volume UBI knows to be invalid);
 *   - does not exist: a dynamic volume is created (as ubimkvol) of
 *     t->vol_size bytes if given, else of max_leb_cnt LEBs if -c was
 *     given, else of all the space UBI has left (ubimkvol -m).
 * Geometry: min_io_size, leb_size and max_leb_cnt of o->bp may be 0 and
 * are then the device's min. I/O unit, the volume's LEB size and the
 * volume's LEB count; given, the first two must match the flash.
 * The file system is built first in a temporary file (TMPDIR), so a tree
 * that does not fit, an unreadable file or a bad device table changes
 * nothing on the flash; only then is the volume created or updated. */
#ifndef UBIKIT_IMAGE_IMAGE_MKFS_H
#define UBIKIT_IMAGE_IMAGE_MKFS_H
#include <stddef.h>
#include <stdint.h>
#include <ubikit/image.h>

#include "fs/fs_mkfs.h"

struct image_mkfs_target {
	const char *vol_name; /* required */
	long vol_id;          /* ID of a volume to create; -1: the first free one */
	uint64_t vol_size;    /* bytes of a volume to create; 0: see above */
};

struct image_mkfs_result {
	int created;          /* the volume was created */
	uint32_t vol_id;
	uint32_t vol_lebs;    /* its size in LEBs */
	uint32_t leb_size;
	uint32_t min_io_size; /* the flash's min. I/O unit */
};

/* o: mkfs options (o->bp geometry may be 0: filled from the flash).
 * io: how to open path (kind, geometry overrides); its flags, vol_name
 * and vol_id are ignored. Errors: negative errno, reason in msg. */
int image_mkfs_volume(const char *path, const struct ubikit_image_opts *io, const struct image_mkfs_target *t,
		      struct fs_mkfs_opts *o, struct fs_mkfs_stats *st, struct image_mkfs_result *r, char *msg,
		      size_t msglen);

#endif
