/* flash_mtd — the flash device interface over a Linux MTD character device
 * (/dev/mtdX): a real board, or nandsim/mtdram in a VM. */
#ifndef UBIKIT_FLASH_MTD_H
#define UBIKIT_FLASH_MTD_H
#include <stdbool.h>

#include "flash/flash.h"

/* Open /dev/mtdX. Geometry from MEMGETINFO (sub-page size from sysfs when
 * available). Reads report corrected/uncorrectable ECC events as
 * -EUCLEAN/-EBADMSG through ECCGETSTATS. read_only opens O_RDONLY. */
int flash_mtd_open(const char *path, bool read_only, struct flash_dev **out);
/* Is dev an MTD backend? */
bool flash_is_mtd(const struct flash_dev *dev);

#endif
