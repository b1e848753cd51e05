/* ubi_io — PEB-level I/O of the UBI layer: range-checked reads and writes,
 * EC/VID header read (classified as Linux does: OK, bit flips, all-0xFF,
 * bad) and write (one header I/O unit each, zero padded as the kernel),
 * erasure with the optional torture test, NOR erase preparation, and
 * marking PEBs bad. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ubi/ubi_priv.h"

int ubi_err(struct ubi_device *dev, int err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(dev->err.msg, sizeof(dev->err.msg), fmt, ap);
	va_end(ap);
	return err;
}

const char *ubi_flash_why(struct ubi_device *dev, int err)
{
	const char *m = flash_errmsg(dev->flash);
	return m[0] ? m : strerror(-err);
}

void ubi_ro_mode(struct ubi_device *dev, const char *why)
{
	if (!dev->ro)
		snprintf(dev->ro_reason, sizeof(dev->ro_reason), "%s", why);
	dev->ro = true;
}

bool ubi_all_ff(const void *buf, size_t len)
{
	const uint8_t *p = buf;
	for (size_t i = 0; i < len; i++)
		if (p[i] != 0xFF)
			return false;
	return true;
}

uint32_t ubi_calc_data_len(const struct ubi_device *dev, const uint8_t *buf, uint32_t len)
{
	uint32_t i = len;
	while (i > 0 && buf[i - 1] == 0xFF)
		i--;
	/* round up to min I/O so the copy stays aligned */
	return (i + dev->min_io - 1) / dev->min_io * dev->min_io;
}

int ubi_io_read(struct ubi_device *dev, uint32_t pnum, uint32_t off, void *buf, size_t len)
{
	if (pnum >= dev->peb_count || off > dev->peb_size || len > dev->peb_size - off)
		return ubi_err(dev, -EINVAL, "PEB %u:%u: read of %zu bytes out of range", pnum, off, len);
	if (!len)
		return 0;
	/* As Linux UBI: a failed read (an ECC failure included) is tried
	 * again, UBI_IO_RETRIES more times, before the error is believed;
	 * corrected bit flips are not errors and are not retried. */
	int err = flash_read(dev->flash, pnum, off, buf, len);
	for (int tries = 0; err && err != -EUCLEAN && tries < UBI_IO_RETRIES; tries++) {
		dev->stats.read_retries++;
		err = flash_read(dev->flash, pnum, off, buf, len);
	}
	if (err == -EUCLEAN)
		dev->stats.corrected_reads++;
	else if (err == -EBADMSG)
		dev->stats.uncorrectable_reads++;
	else if (err)
		return ubi_err(dev, err, "PEB %u:%u: read of %zu bytes failed: %s", pnum, off, len, ubi_flash_why(dev, err));
	return err;
}

int ubi_io_read_data(struct ubi_device *dev, uint32_t pnum, uint32_t off, void *buf, size_t len)
{
	if (off > dev->leb_size || len > dev->leb_size - off)
		return ubi_err(dev, -EINVAL, "PEB %u: data read %u+%zu beyond LEB size %u", pnum, off, len,
			       dev->leb_size);
	return ubi_io_read(dev, pnum, dev->off.data_offset + off, buf, len);
}

int ubi_io_write(struct ubi_device *dev, uint32_t pnum, uint32_t off, const void *buf, size_t len)
{
	if (dev->no_write || dev->ro)
		return ubi_err(dev, -EROFS, "PEB %u:%u: write refused, device is read-only", pnum, off);
	if (pnum >= dev->peb_count || off > dev->peb_size || len > dev->peb_size - off)
		return ubi_err(dev, -EINVAL, "PEB %u:%u: write of %zu bytes out of range", pnum, off, len);
	if (!len)
		return 0;
	int err = flash_write(dev->flash, pnum, off, buf, len);
	if (err)
		return ubi_err(dev, err, "PEB %u:%u: write of %zu bytes failed: %s", pnum, off, len, ubi_flash_why(dev, err));
	return 0;
}

int ubi_io_write_data(struct ubi_device *dev, uint32_t pnum, uint32_t off, const void *buf, size_t len)
{
	if (off > dev->leb_size || len > dev->leb_size - off)
		return ubi_err(dev, -EINVAL, "PEB %u: data write %u+%zu beyond LEB size %u", pnum, off, len,
			       dev->leb_size);
	return ubi_io_write(dev, pnum, dev->off.data_offset + off, buf, len);
}

/* Classify a header read (Linux io.c semantics). */
static int classify(struct ubi_device *dev, int rerr, enum ubi_hdr_status st)
{
	(void)dev;
	if (st == UBI_HDR_OK)
		return rerr ? UBI_IO_BITFLIPS : UBI_IO_OK;
	if (rerr == -EBADMSG)
		return UBI_IO_BAD_HDR_EBADMSG;
	if (st == UBI_HDR_FF)
		return rerr == -EUCLEAN ? UBI_IO_FF_BITFLIPS : UBI_IO_FF;
	return UBI_IO_BAD_HDR;
}

int ubi_io_read_ec_hdr(struct ubi_device *dev, uint32_t pnum, struct ubi_ec_hdr *h)
{
	uint8_t b[UBI_HDR_SIZE];
	int err = ubi_io_read(dev, pnum, 0, b, sizeof(b));
	if (err && err != -EUCLEAN && err != -EBADMSG)
		return err;
	return classify(dev, err, ubi_ec_hdr_unpack(b, h));
}

int ubi_io_read_vid_hdr(struct ubi_device *dev, uint32_t pnum, struct ubi_vid_hdr *h)
{
	uint8_t b[UBI_HDR_SIZE];
	int err = ubi_io_read(dev, pnum, dev->off.vid_hdr_offset, b, sizeof(b));
	if (err && err != -EUCLEAN && err != -EBADMSG)
		return err;
	return classify(dev, err, ubi_vid_hdr_unpack(b, h));
}

int ubi_io_write_ec_hdr(struct ubi_device *dev, uint32_t pnum, uint64_t ec)
{
	struct ubi_ec_hdr h = {
		.version = UBI_VERSION,
		.ec = ec,
		.vid_hdr_offset = dev->off.vid_hdr_offset,
		.data_offset = dev->off.data_offset,
		.image_seq = dev->image_seq,
	};
	memset(dev->hdr_buf, 0, dev->ec_hdr_alsize);
	ubi_ec_hdr_pack(&h, dev->hdr_buf);
	return ubi_io_write(dev, pnum, 0, dev->hdr_buf, dev->ec_hdr_alsize);
}

int ubi_io_write_vid_hdr(struct ubi_device *dev, uint32_t pnum, const struct ubi_vid_hdr *h)
{
	memset(dev->hdr_buf, 0, dev->vid_hdr_alsize);
	ubi_vid_hdr_pack(h, dev->hdr_buf + dev->off.vid_hdr_shift);
	return ubi_io_write(dev, pnum, dev->off.vid_hdr_aloffset, dev->hdr_buf, dev->vid_hdr_alsize);
}

/* NOR erasure is not atomic: first spoil the EC then the VID header magic
 * so that a half-erased PEB is never taken for a valid one (Linux does the
 * same, in this order). */
static int nor_erase_prepare(struct ubi_device *dev, uint32_t pnum)
{
	static const uint8_t zero[4];
	int err = ubi_io_write(dev, pnum, 0, zero, 4);
	if (!err)
		err = ubi_io_write(dev, pnum, dev->off.vid_hdr_aloffset, zero, 4);
	if (!err)
		return 0;
	if (err == -EROFS)
		return err;
	/* Could not write: fine if both headers are already unusable. */
	struct ubi_ec_hdr e;
	struct ubi_vid_hdr v;
	int r1 = ubi_io_read_vid_hdr(dev, pnum, &v);
	int r2 = ubi_io_read_ec_hdr(dev, pnum, &e);
	if ((r1 == UBI_IO_FF || r1 == UBI_IO_BAD_HDR || r1 == UBI_IO_BAD_HDR_EBADMSG) &&
	    (r2 == UBI_IO_FF || r2 == UBI_IO_BAD_HDR || r2 == UBI_IO_BAD_HDR_EBADMSG))
		return 0;
	return ubi_err(dev, -EIO, "PEB %u: cannot invalidate headers before NOR erase", pnum);
}

static int do_erase(struct ubi_device *dev, uint32_t pnum)
{
	if (dev->no_write || dev->ro)
		return ubi_err(dev, -EROFS, "PEB %u: erase refused, device is read-only", pnum);
	int err = flash_erase(dev->flash, pnum);
	dev->stats.erases++;
	if (err)
		return ubi_err(dev, err, "PEB %u: erase failed: %s", pnum, ubi_flash_why(dev, err));
	return 0;
}

/* Erase, then write each pattern over the whole PEB and read it back. A PEB
 * that fails is bad (-EIO). Returns the number of erasures. */
static int torture_peb(struct ubi_device *dev, uint32_t pnum)
{
	static const uint8_t patterns[] = {0xA5, 0x5A, 0x00};
	uint8_t *buf = malloc(dev->peb_size);
	if (!buf)
		return -ENOMEM;
	dev->stats.torture_tests++;
	int err = 0;
	for (size_t i = 0; i < sizeof(patterns); i++) {
		err = do_erase(dev, pnum);
		if (err)
			goto out;
		err = ubi_io_read(dev, pnum, 0, buf, dev->peb_size);
		if (err == -EUCLEAN || err == -EBADMSG || (!err && !ubi_all_ff(buf, dev->peb_size))) {
			err = ubi_err(dev, -EIO, "PEB %u: not all 0xFF after erase (torture test)", pnum);
			goto out;
		}
		if (err)
			goto out;
		memset(buf, patterns[i], dev->peb_size);
		err = ubi_io_write(dev, pnum, 0, buf, dev->peb_size);
		if (err)
			goto out;
		memset(buf, ~patterns[i], dev->peb_size);
		err = ubi_io_read(dev, pnum, 0, buf, dev->peb_size);
		bool ok = !err;
		for (uint32_t j = 0; ok && j < dev->peb_size; j++)
			ok = buf[j] == patterns[i];
		if (!ok) {
			if (err && err != -EUCLEAN && err != -EBADMSG)
				goto out;
			err = ubi_err(dev, -EIO, "PEB %u: pattern 0x%02x did not read back (torture test)", pnum,
				      patterns[i]);
			goto out;
		}
	}
	err = (int)sizeof(patterns);
out:
	free(buf);
	return err;
}

int ubi_io_sync_erase(struct ubi_device *dev, uint32_t pnum, bool torture)
{
	int done = 0;
	if (dev->nor) {
		int err = nor_erase_prepare(dev, pnum);
		if (err)
			return err;
	}
	if (torture) {
		done = torture_peb(dev, pnum);
		if (done < 0)
			return done;
	}
	int err = do_erase(dev, pnum);
	if (err)
		return err;
	return done + 1;
}

int ubi_io_mark_bad(struct ubi_device *dev, uint32_t pnum)
{
	if (!dev->bad_allowed)
		return ubi_err(dev, -EIO, "PEB %u: cannot mark bad (flash without bad blocks)", pnum);
	int err = flash_mark_bad(dev->flash, pnum);
	if (err)
		return ubi_err(dev, err, "PEB %u: marking bad failed: %s", pnum, ubi_flash_why(dev, err));
	dev->stats.marked_bad++;
	return 0;
}
