/* flash — the raw flash device interface every backend implements
 * (simulator in RAM or file, raw image file, Linux MTD char device) and the
 * only thing the UBI layer sees of the hardware.
 *
 * Addresses are (PEB, byte offset inside the PEB). Errors are negative errno:
 *   -EIO      operation failed (program/erase failure, device gone after a
 *             power cut until it is reopened)
 *   -EUCLEAN  read succeeded, data is correct, but bit flips were corrected
 *             (the caller should scrub the block)
 *   -EBADMSG  read hit an uncorrectable ECC error; the buffer holds what
 *             the flash returned
 *   -EINVAL   out of range or misaligned request
 *   -EROFS    device opened read-only
 *   -ENOSPC   (file backends) the host disk is full: nothing was changed
 *   -EBUSY    (open) another program has the image locked */
#ifndef UBIKIT_FLASH_H
#define UBIKIT_FLASH_H
#include <stddef.h>
#include <stdint.h>

enum flash_type {
	FLASH_NAND = 1,
	FLASH_NOR = 2,
};

struct flash_geometry {
	enum flash_type type;
	uint32_t page_size;     /* min I/O unit: NAND page; 1 for NOR */
	uint32_t subpage_size;  /* smallest unit for UBI headers; = page_size if none */
	uint32_t oob_size;      /* spare bytes per page (NAND); 0 for NOR */
	uint32_t peb_size;      /* erase block size in bytes */
	uint32_t peb_count;     /* number of erase blocks */
};

struct flash_dev;

struct flash_ops {
	int (*read)(struct flash_dev *dev, uint32_t peb, uint32_t off, void *buf, size_t len);
	/* Program len bytes at off. NAND: off and len multiples of subpage_size. */
	int (*write)(struct flash_dev *dev, uint32_t peb, uint32_t off, const void *buf, size_t len);
	int (*erase)(struct flash_dev *dev, uint32_t peb);
	/* 1 = bad, 0 = good, <0 error. */
	int (*is_bad)(struct flash_dev *dev, uint32_t peb);
	int (*mark_bad)(struct flash_dev *dev, uint32_t peb);
	/* Flush buffered state to the backing store (file backends). May be NULL. */
	int (*sync)(struct flash_dev *dev);
	void (*close)(struct flash_dev *dev);
	/* The sentence describing the last failure ("" if none). May be NULL. */
	const char *(*errmsg)(struct flash_dev *dev);
};

/* Backends embed this as their first member. */
struct flash_dev {
	const struct flash_ops *ops;
	struct flash_geometry geo;
	int read_only;
};

static inline int flash_read(struct flash_dev *d, uint32_t peb, uint32_t off, void *buf, size_t len)
{
	return d->ops->read(d, peb, off, buf, len);
}
static inline int flash_write(struct flash_dev *d, uint32_t peb, uint32_t off, const void *buf, size_t len)
{
	return d->ops->write(d, peb, off, buf, len);
}
static inline int flash_erase(struct flash_dev *d, uint32_t peb)
{
	return d->ops->erase(d, peb);
}
static inline int flash_is_bad(struct flash_dev *d, uint32_t peb)
{
	return d->ops->is_bad(d, peb);
}
static inline int flash_mark_bad(struct flash_dev *d, uint32_t peb)
{
	return d->ops->mark_bad(d, peb);
}
static inline int flash_sync(struct flash_dev *d)
{
	return d->ops->sync ? d->ops->sync(d) : 0;
}
/* What the last failed operation said ("" if the backend keeps nothing). */
static inline const char *flash_errmsg(struct flash_dev *d)
{
	return d && d->ops->errmsg ? d->ops->errmsg(d) : "";
}
static inline void flash_close(struct flash_dev *d)
{
	if (d)
		d->ops->close(d);
}
static inline uint64_t flash_size(const struct flash_dev *d)
{
	return (uint64_t)d->geo.peb_size * d->geo.peb_count;
}

#endif
