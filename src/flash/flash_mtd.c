/* flash_mtd — struct flash_dev over a Linux MTD character device: pread /
 * pwrite for data, MEMERASE64, MEMGETBADBLOCK / MEMSETBADBLOCK, and
 * ECCGETSTATS around reads, because mtdchar hides ECC results from read(). */
#include "flash/flash_mtd.h"

#include <errno.h>
#include <fcntl.h>
#include <mtd/mtd-user.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "util/util_file.h"

struct flash_mtd {
	struct flash_dev dev; /* first */
	int fd;
	bool has_ecc_stats;
};

static struct flash_mtd *mtd_of(struct flash_dev *d)
{
	return (struct flash_mtd *)d;
}

static uint64_t peb_addr(const struct flash_dev *d, uint32_t peb, uint32_t off)
{
	return (uint64_t)peb * d->geo.peb_size + off;
}

static int mtd_check(struct flash_dev *d, uint32_t peb, uint32_t off, size_t len)
{
	if (peb >= d->geo.peb_count || off > d->geo.peb_size || len > d->geo.peb_size - off)
		return -EINVAL;
	return 0;
}

static int mtd_read(struct flash_dev *d, uint32_t peb, uint32_t off, void *buf, size_t len)
{
	struct flash_mtd *m = mtd_of(d);
	int ret = mtd_check(d, peb, off, len);
	if (ret)
		return ret;
	struct mtd_ecc_stats before = {0}, after = {0};
	if (m->has_ecc_stats && ioctl(m->fd, ECCGETSTATS, &before) < 0)
		m->has_ecc_stats = false;
	size_t done = 0;
	while (done < len) {
		ssize_t n = pread(m->fd, (char *)buf + done, len - done, (off_t)(peb_addr(d, peb, off) + done));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		done += (size_t)n;
	}
	if (m->has_ecc_stats && ioctl(m->fd, ECCGETSTATS, &after) == 0) {
		if (after.failed != before.failed)
			return -EBADMSG;
		if (after.corrected != before.corrected)
			return -EUCLEAN;
	}
	return 0;
}

static int mtd_write(struct flash_dev *d, uint32_t peb, uint32_t off, const void *buf, size_t len)
{
	struct flash_mtd *m = mtd_of(d);
	if (d->read_only)
		return -EROFS;
	int ret = mtd_check(d, peb, off, len);
	if (ret)
		return ret;
	if (off % d->geo.subpage_size || len % d->geo.subpage_size)
		return -EINVAL;
	size_t done = 0;
	while (done < len) {
		ssize_t n = pwrite(m->fd, (const char *)buf + done, len - done, (off_t)(peb_addr(d, peb, off) + done));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		done += (size_t)n;
	}
	return 0;
}

static int mtd_erase(struct flash_dev *d, uint32_t peb)
{
	struct flash_mtd *m = mtd_of(d);
	if (d->read_only)
		return -EROFS;
	if (peb >= d->geo.peb_count)
		return -EINVAL;
	struct erase_info_user64 ei = {.start = peb_addr(d, peb, 0), .length = d->geo.peb_size};
	if (ioctl(m->fd, MEMERASE64, &ei) < 0)
		return -errno;
	return 0;
}

static int mtd_is_bad(struct flash_dev *d, uint32_t peb)
{
	struct flash_mtd *m = mtd_of(d);
	if (peb >= d->geo.peb_count)
		return -EINVAL;
	if (d->geo.type == FLASH_NOR)
		return 0;
	long long ofs = (long long)peb_addr(d, peb, 0);
	int r = ioctl(m->fd, MEMGETBADBLOCK, &ofs);
	if (r < 0)
		return errno == EOPNOTSUPP ? 0 : -errno;
	return r ? 1 : 0;
}

static int mtd_mark_bad(struct flash_dev *d, uint32_t peb)
{
	struct flash_mtd *m = mtd_of(d);
	if (d->read_only)
		return -EROFS;
	if (peb >= d->geo.peb_count)
		return -EINVAL;
	long long ofs = (long long)peb_addr(d, peb, 0);
	if (ioctl(m->fd, MEMSETBADBLOCK, &ofs) < 0)
		return -errno;
	return 0;
}

static int mtd_sync(struct flash_dev *d)
{
	return fsync(mtd_of(d)->fd) < 0 && errno != EINVAL ? -errno : 0;
}

static void mtd_close(struct flash_dev *d)
{
	close(mtd_of(d)->fd);
	free(d);
}

static const struct flash_ops mtd_ops = {
	.read = mtd_read,
	.write = mtd_write,
	.erase = mtd_erase,
	.is_bad = mtd_is_bad,
	.mark_bad = mtd_mark_bad,
	.sync = mtd_sync,
	.close = mtd_close,
};

bool flash_is_mtd(const struct flash_dev *dev)
{
	return dev && dev->ops == &mtd_ops;
}

/* Sub-page size is only in sysfs: /sys/dev/char/MAJ:MIN/subpagesize. */
static uint32_t read_subpage(int fd, uint32_t dflt)
{
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISCHR(st.st_mode))
		return dflt;
	char p[96];
	snprintf(p, sizeof(p), "/sys/dev/char/%u:%u/subpagesize", major(st.st_rdev), minor(st.st_rdev));
	FILE *f = fopen(p, "r");
	if (!f)
		return dflt;
	unsigned v = 0;
	if (fscanf(f, "%u", &v) != 1 || !v || v > dflt || dflt % v)
		v = dflt;
	fclose(f);
	return v;
}

int flash_mtd_open(const char *path, bool read_only, struct flash_dev **out)
{
	*out = NULL;
	int fd = open(path, (read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* As for image files: readers share the device, a writer has it alone. */
	struct util_err lerr;
	int lr = util_file_lock(fd, !read_only, path, &lerr);
	if (lr) {
		close(fd);
		return lr;
	}
	struct mtd_info_user mi;
	if (ioctl(fd, MEMGETINFO, &mi) < 0) {
		int e = errno == ENOTTY ? -ENODEV : -errno;
		close(fd);
		return e;
	}
	if (!mi.erasesize || !mi.writesize || mi.size % mi.erasesize) {
		close(fd);
		return -EINVAL;
	}
	struct flash_mtd *m = calloc(1, sizeof(*m));
	if (!m) {
		close(fd);
		return -ENOMEM;
	}
	m->fd = fd;
	m->has_ecc_stats = true;
	m->dev.ops = &mtd_ops;
	m->dev.read_only = read_only;
	bool nand = mi.type == MTD_NANDFLASH || mi.type == MTD_MLCNANDFLASH;
	m->dev.geo.type = nand ? FLASH_NAND : FLASH_NOR;
	m->dev.geo.page_size = mi.writesize;
	m->dev.geo.subpage_size = nand ? read_subpage(fd, mi.writesize) : mi.writesize;
	m->dev.geo.oob_size = mi.oobsize;
	m->dev.geo.peb_size = mi.erasesize;
	m->dev.geo.peb_count = mi.size / mi.erasesize;
	*out = &m->dev;
	return 0;
}
