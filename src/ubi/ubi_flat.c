/* ubi_flat — a bare UBIFS image file (or memory buffer) as a UBI volume
 * (see ubi_flat.h).
 *
 * File images are not loaded: reads go to the file (pread), so memory does
 * not grow with the image. A LEB that is written, changed or mapped gets an
 * in-memory copy (filled from the file first); unmapping marks it unmapped.
 * A read-write volume writes those LEBs back at sync/close. Memory images
 * are copied LEB by LEB at open. */
#include "ubi/ubi_flat.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/util_endian.h"
#include "util/util_err.h"
#include "util/util_file.h"

struct flat {
	int fd;           /* image file, -1 for memory images */
	char *path;       /* for write-back (read-write files only) */
	uint64_t file_len;
	uint8_t **leb;    /* per LEB: in-memory contents (written, or memory image) */
	uint8_t *unmapped; /* per LEB: explicitly unmapped (reads 0xFF) */
	uint8_t *touched; /* per LEB: differs from the file (write back) */
	uint32_t leb_size, leb_count;
	int dirty;
};

/* Bytes of LEB lnum from the file (0xFF beyond its end). */
static int file_read(struct flat *f, uint32_t lnum, uint32_t off, void *buf, size_t len)
{
	uint64_t pos = (uint64_t)lnum * f->leb_size + off;
	size_t have = 0;
	if (f->fd >= 0 && pos < f->file_len) {
		uint64_t avail = f->file_len - pos;
		size_t want = avail < len ? (size_t)avail : len;
		while (have < want) {
			ssize_t n = pread(f->fd, (uint8_t *)buf + have, want - have, (off_t)(pos + have));
			if (n < 0)
				return -errno;
			if (n == 0)
				break;
			have += (size_t)n;
		}
	}
	memset((uint8_t *)buf + have, 0xFF, len - have);
	return 0;
}

static int flat_read(void *ctx, uint32_t lnum, uint32_t off, void *buf, size_t len)
{
	struct flat *f = ctx;
	if (lnum >= f->leb_count || off > f->leb_size || len > f->leb_size - off)
		return -EINVAL;
	if (f->leb[lnum]) {
		memcpy(buf, f->leb[lnum] + off, len);
		return 0;
	}
	if (f->unmapped[lnum]) {
		memset(buf, 0xFF, len);
		return 0;
	}
	return file_read(f, lnum, off, buf, len);
}

/* The in-memory copy of a LEB, made on first use. */
static uint8_t *leb_mem(struct flat *f, uint32_t lnum, int keep_contents)
{
	if (f->leb[lnum])
		return f->leb[lnum];
	uint8_t *b = malloc(f->leb_size);
	if (!b)
		return NULL;
	if (keep_contents && !f->unmapped[lnum]) {
		if (file_read(f, lnum, 0, b, f->leb_size)) {
			free(b);
			return NULL;
		}
	} else {
		memset(b, 0xFF, f->leb_size);
	}
	f->leb[lnum] = b;
	f->unmapped[lnum] = 0;
	return b;
}

static int flat_write(void *ctx, uint32_t lnum, uint32_t off, const void *buf, size_t len)
{
	struct flat *f = ctx;
	if (lnum >= f->leb_count || off > f->leb_size || len > f->leb_size - off)
		return -EINVAL;
	uint8_t *b = leb_mem(f, lnum, 1);
	if (!b)
		return -ENOMEM;
	memcpy(b + off, buf, len);
	f->touched[lnum] = 1;
	f->dirty = 1;
	return 0;
}

static int flat_change(void *ctx, uint32_t lnum, const void *buf, size_t len)
{
	struct flat *f = ctx;
	if (lnum >= f->leb_count || len > f->leb_size)
		return -EINVAL;
	uint8_t *b = leb_mem(f, lnum, 0);
	if (!b)
		return -ENOMEM;
	memset(b, 0xFF, f->leb_size);
	memcpy(b, buf, len);
	f->touched[lnum] = 1;
	f->dirty = 1;
	return 0;
}

static int flat_unmap(void *ctx, uint32_t lnum)
{
	struct flat *f = ctx;
	if (lnum >= f->leb_count)
		return -EINVAL;
	free(f->leb[lnum]);
	f->leb[lnum] = NULL;
	f->unmapped[lnum] = 1;
	f->touched[lnum] = 1;
	f->dirty = 1;
	return 0;
}

static int flat_map(void *ctx, uint32_t lnum)
{
	struct flat *f = ctx;
	if (lnum >= f->leb_count)
		return -EINVAL;
	return leb_mem(f, lnum, 1) ? 0 : -ENOMEM;
}

static int flat_is_mapped(void *ctx, uint32_t lnum)
{
	struct flat *f = ctx;
	if (lnum >= f->leb_count)
		return -EINVAL;
	if (f->leb[lnum])
		return 1;
	if (f->unmapped[lnum])
		return 0;
	return f->fd >= 0 && (uint64_t)lnum * f->leb_size < f->file_len;
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
	uint8_t *ff = malloc(f->leb_size);
	if (!ff) {
		close(fd);
		return -ENOMEM;
	}
	memset(ff, 0xFF, f->leb_size);
	int err = 0;
	uint64_t new_len = f->file_len;
	for (uint32_t l = 0; l < f->leb_count; l++)
		if (f->touched[l] && f->leb[l] && (uint64_t)(l + 1) * f->leb_size > new_len)
			new_len = (uint64_t)(l + 1) * f->leb_size;
	/* growing the file: what lies between the old end and the new LEBs is
	 * erased flash (0xFF), not the zeros of a file hole */
	for (uint64_t pos = f->file_len; pos < new_len && !err;) {
		size_t n = new_len - pos < f->leb_size ? (size_t)(new_len - pos) : f->leb_size;
		if (pwrite(fd, ff, n, (off_t)pos) != (ssize_t)n)
			err = errno ? -errno : -EIO;
		pos += n;
	}
	for (uint32_t l = 0; l < f->leb_count && !err; l++) {
		if (!f->touched[l])
			continue;
		uint64_t pos = (uint64_t)l * f->leb_size;
		if (!f->leb[l] && pos >= new_len)
			continue; /* unmapped beyond the end: nothing to write */
		const uint8_t *src = f->leb[l] ? f->leb[l] : ff;
		size_t n = f->leb[l] || pos + f->leb_size <= new_len ? f->leb_size : (size_t)(new_len - pos);
		if (pwrite(fd, src, n, (off_t)pos) != (ssize_t)n)
			err = errno ? -errno : -EIO;
	}
	free(ff);
	if (!err && fsync(fd) < 0)
		err = -errno;
	close(fd);
	if (!err) {
		f->file_len = new_len;
		memset(f->touched, 0, f->leb_count);
		f->dirty = 0;
	}
	return err;
}

/* LEB size, the LEB count of the volume and the min. I/O unit, from a
 * superblock at offset 0 (hdr = its first 128 bytes, len = bytes there). */
static int geometry(const uint8_t *hdr, size_t len, uint32_t *leb_size, uint32_t *leb_cnt, uint32_t *min_io,
		    struct util_err *err)
{
	if (len < 128 || get_le32(hdr) != 0x06101831u || hdr[20] != 6)
		return util_err_set(err, -EINVAL, "no UBIFS superblock at offset 0 of the image (give the LEB size)");
	uint32_t ls = get_le32(hdr + 36), lc = get_le32(hdr + 40), mio = get_le32(hdr + 32);
	uint32_t max_lc = get_le32(hdr + 44);
	if (ls < 4096 || ls > (64u << 20) || lc == 0 || lc > (1u << 20))
		return util_err_set(err, -EINVAL, "implausible superblock geometry: LEB size %u, LEB count %u", ls, lc);
	/* mkfs makes leb_cnt as small as the content and sizes the journal
	 * and LPT for max_leb_cnt; the kernel grows leb_cnt to the volume
	 * (auto-resize). Present the volume the file system may grow to
	 * (storage is allocated only for LEBs that are written). */
	uint64_t need = max_lc > lc ? max_lc : lc;
	if (need > (1u << 20))
		need = 1u << 20;
	if (*leb_size == 0)
		*leb_size = ls;
	*leb_cnt = (uint32_t)need;
	*min_io = mio && mio <= ls ? mio : 8;
	return 0;
}

static void flat_free(struct flat *f)
{
	if (!f)
		return;
	if (f->fd >= 0)
		close(f->fd);
	free(f->path);
	if (f->leb)
		for (uint32_t l = 0; l < f->leb_count; l++)
			free(f->leb[l]);
	free(f->leb);
	free(f->unmapped);
	free(f->touched);
	free(f);
}

/* Common part: geometry, per-LEB tables, the vtable. */
static int setup(struct flat *f, const uint8_t *hdr, size_t hdr_len, uint64_t len, uint32_t leb_size, int read_only,
		 struct ubi_vol_io *out, struct util_err *err)
{
	uint32_t sb_cnt = 0, min_io = 8;
	int e = geometry(hdr, hdr_len, &leb_size, &sb_cnt, &min_io, err);
	if (e && leb_size == 0)
		return e;
	if (leb_size == 0)
		return util_err_set(err, -EINVAL, "LEB size unknown");
	uint64_t file_lebs = (len + leb_size - 1) / leb_size;
	uint64_t cnt = file_lebs > sb_cnt ? file_lebs : sb_cnt;
	if (cnt == 0 || cnt > (1u << 20))
		return util_err_set(err, -EFBIG, "image too large: %llu LEBs of %u bytes", (unsigned long long)cnt,
				    leb_size);
	f->leb_size = leb_size;
	f->leb_count = (uint32_t)cnt;
	f->file_len = len;
	f->leb = calloc((size_t)cnt, sizeof(*f->leb));
	f->unmapped = calloc((size_t)cnt, 1);
	f->touched = calloc((size_t)cnt, 1);
	if (!f->leb || !f->unmapped || !f->touched)
		return util_err_set(err, -ENOMEM, "out of memory");
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

int ubi_flat_open_mem(const void *buf, size_t len, uint32_t leb_size, int read_only, struct ubi_vol_io *out,
		      struct util_err *err)
{
	struct flat *f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->fd = -1;
	int e = setup(f, buf, len < 128 ? len : 128, len, leb_size, read_only, out, err);
	/* copy the data in, LEB by LEB */
	for (uint64_t off = 0; !e && off < len; off += f->leb_size) {
		uint32_t l = (uint32_t)(off / f->leb_size);
		uint8_t *b = malloc(f->leb_size);
		if (!b) {
			e = util_err_set(err, -ENOMEM, "out of memory for a %zu-byte image", len);
			break;
		}
		size_t n = len - off < f->leb_size ? (size_t)(len - off) : f->leb_size;
		memcpy(b, (const uint8_t *)buf + off, n);
		memset(b + n, 0xFF, f->leb_size - n);
		f->leb[l] = b;
	}
	if (e)
		flat_free(f);
	return e;
}

int ubi_flat_open_err(const char *path, uint32_t leb_size, int read_only, struct ubi_vol_io *out,
		      struct util_err *err)
{
	struct flat *f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->fd = open(path, O_RDONLY);
	if (f->fd < 0) {
		int e = -errno;
		flat_free(f);
		return util_err_set(err, e, "%s: cannot open", path);
	}
	struct stat st;
	if (fstat(f->fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		flat_free(f);
		return util_err_set(err, -EINVAL, "%s: not a regular file", path);
	}
	/* Readers share the image, a writer has it alone (kept until close). */
	struct util_err lerr;
	int le = util_file_lock(f->fd, !read_only, path, &lerr);
	if (le) {
		flat_free(f);
		return util_err_set(err, le, "%s", lerr.msg);
	}
	uint8_t hdr[128];
	memset(hdr, 0xFF, sizeof(hdr));
	ssize_t n = pread(f->fd, hdr, sizeof(hdr), 0);
	if (n < 0)
		n = 0;
	int e = setup(f, hdr, (size_t)n, (uint64_t)st.st_size, leb_size, read_only, out, err);
	if (!e && !read_only) {
		f->path = strdup(path);
		if (!f->path)
			e = -ENOMEM;
	}
	if (e) {
		flat_free(f);
		if (err && err->msg[0]) {
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
