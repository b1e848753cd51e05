/* ubi_flat — a bare UBIFS image file (or memory buffer) as a UBI volume
 * (see ubi_flat.h). The image is read whole into memory: LEBs beyond the
 * data read as 0xFF, "mapped" = any byte written or present in the file. */
#include "ubi/ubi_flat.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/util_endian.h"
#include "util/util_err.h"

struct flat {
	char *path;       /* NULL for memory images or read-only files */
	uint8_t **leb;    /* per LEB: its bytes, NULL = unmapped (0xFF) */
	uint32_t leb_size, leb_count;
	int dirty;
};

static int flat_read(void *ctx, uint32_t lnum, uint32_t off, void *buf, size_t len)
{
	struct flat *f = ctx;
	if (lnum >= f->leb_count || off > f->leb_size || len > f->leb_size - off)
		return -EINVAL;
	if (f->leb[lnum])
		memcpy(buf, f->leb[lnum] + off, len);
	else
		memset(buf, 0xFF, len);
	return 0;
}

static int flat_write(void *ctx, uint32_t lnum, uint32_t off, const void *buf, size_t len)
{
	struct flat *f = ctx;
	if (lnum >= f->leb_count || off > f->leb_size || len > f->leb_size - off)
		return -EINVAL;
	if (!f->leb[lnum]) {
		f->leb[lnum] = malloc(f->leb_size);
		if (!f->leb[lnum])
			return -ENOMEM;
		memset(f->leb[lnum], 0xFF, f->leb_size);
	}
	memcpy(f->leb[lnum] + off, buf, len);
	f->dirty = 1;
	return 0;
}

static int flat_change(void *ctx, uint32_t lnum, const void *buf, size_t len)
{
	struct flat *f = ctx;
	if (lnum >= f->leb_count || len > f->leb_size)
		return -EINVAL;
	if (f->leb[lnum])
		memset(f->leb[lnum], 0xFF, f->leb_size);
	return flat_write(ctx, lnum, 0, buf, len);
}

static int flat_unmap(void *ctx, uint32_t lnum)
{
	struct flat *f = ctx;
	if (lnum >= f->leb_count)
		return -EINVAL;
	free(f->leb[lnum]);
	f->leb[lnum] = NULL;
	f->dirty = 1;
	return 0;
}

static int flat_map(void *ctx, uint32_t lnum)
{
	struct flat *f = ctx;
	if (lnum >= f->leb_count)
		return -EINVAL;
	if (!f->leb[lnum]) {
		f->leb[lnum] = malloc(f->leb_size);
		if (!f->leb[lnum])
			return -ENOMEM;
		memset(f->leb[lnum], 0xFF, f->leb_size);
	}
	return 0;
}

static int flat_is_mapped(void *ctx, uint32_t lnum)
{
	struct flat *f = ctx;
	if (lnum >= f->leb_count)
		return -EINVAL;
	return f->leb[lnum] != NULL;
}

static int ro_write(void *ctx, uint32_t lnum, uint32_t off, const void *buf, size_t len)
{
	(void)ctx, (void)lnum, (void)off, (void)buf, (void)len;
	return -EROFS;
}
static int ro_change(void *ctx, uint32_t lnum, const void *buf, size_t len)
{
	(void)ctx, (void)lnum, (void)buf, (void)len;
	return -EROFS;
}
static int ro_lnum(void *ctx, uint32_t lnum)
{
	(void)ctx, (void)lnum;
	return -EROFS;
}

static int flat_sync(void *ctx)
{
	struct flat *f = ctx;
	if (!f->path || !f->dirty)
		return 0;
	int fd = open(f->path, O_WRONLY | O_CREAT, 0644);
	if (fd < 0)
		return -errno;
	/* LEBs up to the last mapped one; unmapped ones as 0xFF */
	uint32_t last = 0;
	for (uint32_t l = 0; l < f->leb_count; l++)
		if (f->leb[l])
			last = l + 1;
	uint8_t *ff = malloc(f->leb_size);
	if (!ff) {
		close(fd);
		return -ENOMEM;
	}
	memset(ff, 0xFF, f->leb_size);
	for (uint32_t l = 0; l < last; l++) {
		const uint8_t *src = f->leb[l] ? f->leb[l] : ff;
		if (pwrite(fd, src, f->leb_size, (off_t)l * f->leb_size) != (ssize_t)f->leb_size) {
			int e = -errno;
			free(ff);
			close(fd);
			return e ? e : -EIO;
		}
	}
	free(ff);
	if (ftruncate(fd, (off_t)last * f->leb_size) < 0) {
		int e = -errno;
		close(fd);
		return e;
	}
	if (fsync(fd) < 0) {
		int e = -errno;
		close(fd);
		return e;
	}
	close(fd);
	f->dirty = 0;
	return 0;
}

/* LEB size, the LEB count a volume needs for this file system, and the
 * min. I/O unit, from a superblock at offset 0. */
static int geometry(const uint8_t *img, size_t len, uint32_t *leb_size, uint32_t *leb_cnt, uint32_t *min_io,
		    struct util_err *err)
{
	if (len < 4096 || get_le32(img) != 0x06101831u || img[20] != 6)
		return util_err_set(err, -EINVAL, "no UBIFS superblock at offset 0 of the image (give the LEB size)");
	uint32_t ls = get_le32(img + 36), lc = get_le32(img + 40), mio = get_le32(img + 32);
	uint32_t max_lc = get_le32(img + 44);
	if (ls < 4096 || ls > (64u << 20) || lc == 0 || lc > (1u << 20))
		return util_err_set(err, -EINVAL, "implausible superblock geometry: LEB size %u, LEB count %u", ls, lc);
	/* mkfs makes leb_cnt as small as the content and sizes the journal
	 * and LPT for max_leb_cnt; the kernel grows leb_cnt to the volume
	 * (auto-resize). Present the volume the file system may grow to
	 * (storage is allocated only for LEBs that hold data). */
	uint64_t need = max_lc > lc ? max_lc : lc;
	if (need > (1u << 20))
		need = 1u << 20;
	if (*leb_size == 0)
		*leb_size = ls;
	*leb_cnt = lc > need ? lc : (uint32_t)need;
	*min_io = mio && mio <= ls ? mio : 8;
	return 0;
}

static int setup(struct flat *f, const uint8_t *img, size_t len, uint32_t leb_size, int read_only,
		 struct ubi_vol_io *out, struct util_err *err)
{
	uint32_t sb_cnt = 0, min_io = 8;
	int e = geometry(img, len, &leb_size, &sb_cnt, &min_io, err);
	if (e && leb_size == 0)
		return e;
	if (leb_size == 0)
		return util_err_set(err, -EINVAL, "LEB size unknown");
	uint64_t file_lebs = (len + leb_size - 1) / leb_size;
	uint64_t cnt = file_lebs > sb_cnt ? file_lebs : sb_cnt;
	if (cnt == 0 || cnt > (1u << 20) || file_lebs * leb_size > (4ull << 30))
		return util_err_set(err, -EFBIG, "image too large: %llu LEBs of %u bytes", (unsigned long long)cnt,
				    leb_size);
	f->leb_size = leb_size;
	f->leb_count = (uint32_t)cnt;
	f->leb = calloc((size_t)cnt, sizeof(*f->leb));
	if (!f->leb)
		return util_err_set(err, -ENOMEM, "out of memory");
	for (uint64_t i = 0; i < file_lebs; i++) {
		size_t off = (size_t)i * leb_size, n = len - off < leb_size ? len - off : leb_size;
		f->leb[i] = malloc(leb_size);
		if (!f->leb[i])
			return util_err_set(err, -ENOMEM, "out of memory for a %zu-byte image", len);
		memcpy(f->leb[i], img + off, n);
		memset(f->leb[i] + n, 0xFF, leb_size - n);
	}
	memset(out, 0, sizeof(*out));
	out->ctx = f;
	out->leb_size = leb_size;
	out->leb_count = (uint32_t)cnt;
	out->min_io_size = min_io;
	out->max_write_size = min_io;
	out->read_only = read_only;
	out->read = flat_read;
	out->write = read_only ? ro_write : flat_write;
	out->change = read_only ? ro_change : flat_change;
	out->unmap = read_only ? ro_lnum : flat_unmap;
	out->map = read_only ? ro_lnum : flat_map;
	out->is_mapped = flat_is_mapped;
	out->sync = flat_sync;
	return 0;
}

static void flat_free(struct flat *f)
{
	if (!f)
		return;
	free(f->path);
	if (f->leb)
		for (uint32_t l = 0; l < f->leb_count; l++)
			free(f->leb[l]);
	free(f->leb);
	free(f);
}

int ubi_flat_open_mem(const void *buf, size_t len, uint32_t leb_size, int read_only, struct ubi_vol_io *out,
		      struct util_err *err)
{
	struct flat *f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	int e = setup(f, buf, len, leb_size, read_only, out, err);
	if (e)
		flat_free(f);
	return e;
}

int ubi_flat_open_err(const char *path, uint32_t leb_size, int read_only, struct ubi_vol_io *out,
		      struct util_err *err)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return util_err_set(err, -errno, "%s: cannot open", path);
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > (off_t)(4ull << 30)) {
		close(fd);
		return util_err_set(err, -EINVAL, "%s: not a regular file of at most 4 GiB", path);
	}
	size_t len = (size_t)st.st_size;
	uint8_t *img = malloc(len ? len : 1);
	if (!img) {
		close(fd);
		return -ENOMEM;
	}
	size_t done = 0;
	while (done < len) {
		ssize_t n = pread(fd, img + done, len - done, (off_t)done);
		if (n <= 0) {
			int e = n < 0 ? -errno : -EIO;
			free(img);
			close(fd);
			return util_err_set(err, e, "%s: read failed", path);
		}
		done += (size_t)n;
	}
	close(fd);
	struct flat *f = calloc(1, sizeof(*f));
	int e = f ? setup(f, img, len, leb_size, read_only, out, err) : -ENOMEM;
	free(img);
	if (!e && !read_only) {
		f->path = strdup(path);
		if (!f->path)
			e = -ENOMEM;
	}
	if (e) {
		flat_free(f);
		if (e == -ENOMEM)
			util_err_set(err, e, "%s: out of memory", path);
		else if (err && err->msg[0]) {
			char tmp[UTIL_ERR_MSG_MAX];
			strcpy(tmp, err->msg);
			util_err_set(err, e, "%s: %.400s", path, tmp);
		}
	}
	return e;
}

int ubi_flat_open(const char *path, uint32_t leb_size, int read_only, struct ubi_vol_io *out)
{
	return ubi_flat_open_err(path, leb_size, read_only, out, NULL);
}

int ubi_flat_close(struct ubi_vol_io *vol)
{
	if (!vol || !vol->ctx)
		return 0;
	struct flat *f = vol->ctx;
	int e = flat_sync(f);
	flat_free(f);
	vol->ctx = NULL;
	return e;
}
