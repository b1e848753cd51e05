/* flash_window — a read-only window into another flash device; see
 * flash_window.h. */
#include "flash/flash_window.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct flash_window {
	struct flash_dev dev; /* first member */
	struct flash_dev *under;
	uint64_t base;
	uint64_t size; /* bytes of the flash below that belong to the window */
};

static int win_read(struct flash_dev *d, uint32_t peb, uint32_t off, void *buf, size_t len)
{
	struct flash_window *w = (struct flash_window *)d;
	if (peb >= d->geo.peb_count || off > d->geo.peb_size || len > d->geo.peb_size - off)
		return -EINVAL;
	uint32_t psz = w->under->geo.peb_size;
	uint64_t abs = w->base + (uint64_t)peb * d->geo.peb_size + off;
	uint8_t *p = buf;
	int ret = 0;
	while (len) {
		uint64_t upeb = abs / psz;
		uint32_t uoff = (uint32_t)(abs % psz);
		size_t chunk = psz - uoff < len ? psz - uoff : len;
		if (upeb >= w->under->geo.peb_count || abs >= w->base + w->size) {
			memset(p, 0xFF, len); /* past the window's bytes: erased */
			break;
		}
		if (abs + chunk > w->base + w->size)
			chunk = (size_t)(w->base + w->size - abs);
		int r = flash_read(w->under, (uint32_t)upeb, uoff, p, chunk);
		if (r == -EUCLEAN || r == -EBADMSG) {
			if (!ret || r == -EBADMSG)
				ret = r;
		} else if (r) {
			return r;
		}
		p += chunk;
		abs += chunk;
		len -= chunk;
	}
	return ret;
}

static int win_write(struct flash_dev *d, uint32_t peb, uint32_t off, const void *buf, size_t len)
{
	(void)d, (void)peb, (void)off, (void)buf, (void)len;
	return -EROFS;
}

static int win_peb_rofs(struct flash_dev *d, uint32_t peb)
{
	(void)d, (void)peb;
	return -EROFS;
}

static int win_is_bad(struct flash_dev *d, uint32_t peb)
{
	struct flash_window *w = (struct flash_window *)d;
	if (peb >= d->geo.peb_count)
		return -EINVAL;
	uint32_t psz = w->under->geo.peb_size;
	if (w->base % psz)
		return 0; /* no OOB below (flash_window_open checked): no markers */
	uint64_t upeb = w->base / psz + peb;
	if ((uint64_t)peb * psz >= w->size)
		return 0;
	return upeb < w->under->geo.peb_count ? flash_is_bad(w->under, (uint32_t)upeb) : 0;
}

static void win_close(struct flash_dev *d)
{
	struct flash_window *w = (struct flash_window *)d;
	flash_close(w->under);
	free(w);
}

static const char *win_errmsg(struct flash_dev *d)
{
	return flash_errmsg(((struct flash_window *)d)->under);
}

static const struct flash_ops win_ops = {
	.read = win_read,
	.write = win_write,
	.erase = win_peb_rofs,
	.is_bad = win_is_bad,
	.mark_bad = win_peb_rofs,
	.sync = NULL,
	.close = win_close,
	.errmsg = win_errmsg,
};

int flash_window_open(struct flash_dev *under, uint64_t base, uint64_t size, uint32_t peb_count,
		      struct flash_dev **out)
{
	*out = NULL;
	if (!under || !under->geo.peb_size || !peb_count)
		return -EINVAL;
	struct flash_window *w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->dev.ops = &win_ops;
	w->dev.geo = under->geo;
	w->dev.geo.peb_count = peb_count;
	w->dev.read_only = 1;
	w->under = under;
	w->base = base;
	w->size = size;
	*out = &w->dev;
	return 0;
}
