/* image — the inside of a struct ubikit_image (include/ubikit/image.h),
 * for the library's own files and for the debugging tools (info, dump,
 * bench) that look below the file system: the flash, the UBI device, the
 * chosen volume. Programs use the public header only.
 *
 * The image layer sits above fs and assembles the whole stack for one
 * image: flash (simulator file, raw dump, MTD) -> UBI -> volume, or the
 * flat view of a bare UBIFS image -> fs mount. Detection is
 * image_detect.c, opening and closing image_open.c, the widened volume
 * views (bare image, autoresize) image_view.c. */
#ifndef UBIKIT_IMAGE_IMAGE_H
#define UBIKIT_IMAGE_IMAGE_H
#include <stdbool.h>
#include <stdint.h>
#include <ubikit/image.h>

#include "flash/flash.h"
#include "ubi/ubi_vol_io.h"

struct ubi_device;

struct ubikit_image {
	char *path;
	struct ubikit_image_geo geo;
	bool rdwr;                    /* opened with UBIKIT_IMAGE_RDWR */
	const uint8_t *fscrypt_key;   /* from the opts (the caller's memory), passed to the mount */
	size_t fscrypt_key_len;
	const uint8_t *auth_cert;     /* likewise */
	size_t auth_cert_len;
	const uint8_t *auth_hmac_key; /* likewise */
	size_t auth_hmac_key_len;
	bool drop_sidecar;            /* raw dump opened read-write: no .sim left behind */
	struct flash_dev *flash;      /* NULL for a bare UBIFS image */
	struct ubi_device *ubi;       /* NULL for a bare UBIFS image */
	bool have_vol;                /* a volume was chosen */
	uint32_t vol_id;              /* chosen UBI volume */
	struct ubi_vol_io vol;        /* the volume (or the flat image) as mounted */
	bool flat;                    /* bare image: inner is the ubi_flat volume */
	struct ubi_vol_io inner;      /* the volume as opened; vol may widen it (read-only:
				       * bare image to max_leb_cnt, autoresize volume) */
	uint32_t autoresized;         /* LEBs of the autoresize view (0 = none) */
	struct ubikit_fs *fs;         /* mounted file system, or NULL */
	char err[768];
};

/* image_view.c: vol = inner seen with more LEBs (reads 0xFF, writes -EROFS). */
void image_view_bare(struct ubikit_image *img);
void image_view_autoresize(struct ubikit_image *img, uint32_t vol_id);
/* image_scan.c: the UBI devices in the file open as fd (up to max);
 * returns how many were found (<0 error). */
int image_scan_ubi_devs(int fd, uint64_t file_size, struct ubikit_image_ubi_dev *devs, int max);
/* Does LEB 0 of this UBI volume start with a UBIFS superblock node? */
bool image_vol_has_ubifs(struct ubi_device *ubi, uint32_t vol_id);

#endif
