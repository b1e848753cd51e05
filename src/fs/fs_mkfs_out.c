/* fs_mkfs_out — the output of `ubikit mkfs -o FILE`: an image file seen as
 * an erased volume. Writes go straight to the file (pwrite); each LEB's
 * written end is remembered so that at close every LEB of the file system
 * is completed with 0xFF (erased flash), as mkfs.ubifs writes whole LEBs. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fs/fs_mkfs.h"
#include "ubi/ubi_vol_io.h"

struct out_vol {
	struct ubi_vol_io io;
	int fd;
	uint32_t *end; /* written bytes from the start of each LEB */
	char *path;
};

static int ov_read(void *ctx, uint32_t lnum, uint32_t off, void *buf, size_t len)
{
	struct out_vol *v = ctx;
	if (lnum >= v->io.leb_count || off > v->io.leb_size || len > v->io.leb_size - off)
		return -EINVAL;
	memset(buf, 0xFF, len);
	if (off >= v->end[lnum])
		return 0;
	size_t n = v->end[lnum] - off < len ? v->end[lnum] - off : len;
	ssize_t r = pread(v->fd, buf, n, (off_t)lnum * v->io.leb_size + off);
	return r == (ssize_t)n ? 0 : -EIO;
}

static int ov_write(void *ctx, uint32_t lnum, uint32_t off, const void *buf, size_t len)
{
	struct out_vol *v = ctx;
	if (lnum >= v->io.leb_count || off != v->end[lnum] || len > v->io.leb_size - off) /* sequential, as on flash */
		return -EINVAL;
	const uint8_t *p = buf;
	off_t pos = (off_t)lnum * v->io.leb_size + off;
	size_t left = len;
	while (left) {
		ssize_t w = pwrite(v->fd, p, left, pos);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		p += w, pos += w, left -= (size_t)w;
	}
	v->end[lnum] = off + (uint32_t)len;
	return 0;
}

static int ov_change(void *ctx, uint32_t lnum, const void *buf, size_t len)
{
	struct out_vol *v = ctx;
	if (lnum >= v->io.leb_count || v->end[lnum])
		return -EINVAL; /* an image being built is never rewritten */
	return ov_write(ctx, lnum, 0, buf, len);
}

static int ov_unmap(void *ctx, uint32_t lnum)
{
	struct out_vol *v = ctx;
	return lnum >= v->io.leb_count || v->end[lnum] ? -EINVAL : 0; /* fresh LEBs only */
}

static int ov_map(void *ctx, uint32_t lnum)
{
	struct out_vol *v = ctx;
	return lnum >= v->io.leb_count ? -EINVAL : 0;
}

static int ov_is_mapped(void *ctx, uint32_t lnum)
{
	struct out_vol *v = ctx;
	if (lnum >= v->io.leb_count)
		return -EINVAL;
	return v->end[lnum] != 0;
}

int fs_mkfs_file_vol_open(const char *path, uint32_t leb_size, uint32_t min_io, uint32_t max_lebs,
			  struct ubi_vol_io **out, struct util_err *e)
{
	struct out_vol *v = calloc(1, sizeof(*v));
	if (!v || !(v->end = calloc(max_lebs ? max_lebs : 1, sizeof(uint32_t))) || !(v->path = strdup(path))) {
		if (v)
			free(v->end);
		free(v);
		return util_err_set(e, -ENOMEM, "mkfs: out of memory");
	}
	v->fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (v->fd < 0) {
		int err = -errno;
		free(v->end);
		free(v->path);
		free(v);
		return util_err_set(e, err, "mkfs: cannot create '%s': %s", path, strerror(-err));
	}
	v->io = (struct ubi_vol_io){.ctx = v,
				    .leb_size = leb_size,
				    .leb_count = max_lebs,
				    .min_io_size = min_io,
				    .max_write_size = min_io,
				    .read = ov_read,
				    .write = ov_write,
				    .change = ov_change,
				    .unmap = ov_unmap,
				    .map = ov_map,
				    .is_mapped = ov_is_mapped};
	*out = &v->io;
	return 0;
}

int fs_mkfs_file_vol_close(struct ubi_vol_io *io, uint32_t leb_cnt, struct util_err *e)
{
	struct out_vol *v = io->ctx;
	int err = 0;
	uint8_t *ff = malloc(io->leb_size);
	if (!ff)
		err = util_err_set(e, -ENOMEM, "mkfs: out of memory");
	else
		memset(ff, 0xFF, io->leb_size);
	for (uint32_t l = 0; !err && leb_cnt && l < leb_cnt && l < io->leb_count; l++) {
		uint32_t end = v->end[l];
		for (off_t pos = (off_t)l * io->leb_size + end; end < io->leb_size;) {
			ssize_t w = pwrite(v->fd, ff, io->leb_size - end, pos);
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0) { /* the host's reason (a full disk, a file size limit) */
				int r = w < 0 ? -errno : -EIO;
				err = util_err_set(e, r, "mkfs: cannot write '%s': %s", v->path, strerror(-r));
				break;
			}
			end += (uint32_t)w, pos += w;
		}
	}
	if (!err && leb_cnt && ftruncate(v->fd, (off_t)leb_cnt * io->leb_size))
		err = util_err_set(e, -errno, "mkfs: cannot size '%s': %s", v->path, strerror(errno));
	if (close(v->fd) && !err)
		err = util_err_set(e, -EIO, "mkfs: cannot close '%s': %s", v->path, strerror(errno));
	if (!leb_cnt)
		unlink(v->path); /* failed build: no half image left behind */
	free(ff);
	free(v->end);
	free(v->path);
	free(v);
	return err;
}
