/* ubi_eba — the eraseblock association: which PEB holds each LEB, and the
 * LEB operations on top of it (Linux eba.c): read (scrub after corrected
 * flips, static volumes CRC-checked), write (new PEB: VID header then data;
 * mapped: append; write errors recovered onto a new PEB), atomic change
 * (new PEB with copy_flag=1 + data_crc before the old one is released),
 * unmap, and the copy used by wear leveling and scrubbing.
 *
 * Power-cut ordering: a new PEB's VID header is written before its data and
 * the old PEB is only queued for erasure after the new one is complete, so
 * attach (compare of sqnum / copy_flag / data_crc) finds old or new. */
#include <errno.h>
#include <string.h>

#include "ubi/ubi_priv.h"
#include "util/util_crc.h"

struct ubi_volume *ubi_vol_by_id(const struct ubi_device *dev, uint32_t vol_id)
{
	if (vol_id == UBI_LAYOUT_VOLUME_ID)
		return dev->vols[UBI_LAYOUT_SLOT];
	if (vol_id < UBI_MAX_VOLUMES)
		return dev->vols[vol_id];
	return NULL;
}

static uint32_t slot_of(const struct ubi_volume *vol)
{
	return vol->vol_id == UBI_LAYOUT_VOLUME_ID ? UBI_LAYOUT_SLOT : vol->vol_id;
}

void ubi_vid_hdr_for(const struct ubi_volume *vol, uint32_t lnum, struct ubi_vid_hdr *h)
{
	memset(h, 0, sizeof(*h));
	h->version = UBI_VERSION;
	h->vol_type = vol->rec.vol_type;
	h->vol_id = vol->vol_id;
	h->lnum = lnum;
	h->data_pad = vol->rec.data_pad;
	h->compat = vol->vol_id == UBI_LAYOUT_VOLUME_ID ? UBI_COMPAT_REJECT : 0;
}

static void set_mapping(struct ubi_device *dev, struct ubi_volume *vol, uint32_t lnum, uint32_t pnum)
{
	vol->eba[lnum] = (int32_t)pnum;
	dev->peb[pnum].state = PEB_USED;
	dev->peb[pnum].vol_slot = slot_of(vol);
	dev->peb[pnum].lnum = lnum;
}

static uint32_t align_io(const struct ubi_device *dev, uint32_t n)
{
	return (n + dev->min_io - 1) / dev->min_io * dev->min_io;
}

int ubi_eba_read(struct ubi_device *dev, struct ubi_volume *vol, uint32_t lnum, uint32_t off, void *buf,
		 size_t len, bool check)
{
	int32_t pnum = vol->eba[lnum];
	if (pnum < 0) {
		memset(buf, 0xFF, len);
		return 0;
	}
	if (vol->rec.vol_type == UBI_VID_STATIC && check) {
		struct ubi_vid_hdr vh;
		int r = ubi_io_read_vid_hdr(dev, (uint32_t)pnum, &vh);
		if (r < 0)
			return r;
		if (r != UBI_IO_OK && r != UBI_IO_BITFLIPS)
			return ubi_err(dev, -EBADMSG, "LEB %u:%u (PEB %d:%u): corrupted VID header", vol->vol_id,
				       lnum, pnum, dev->off.vid_hdr_offset);
		bool flips = r == UBI_IO_BITFLIPS;
		if (vh.data_size > vol->usable || off + len > vh.data_size)
			return ubi_err(dev, -EBADMSG,
				       "LEB %u:%u (PEB %d): read %u+%zu beyond data_size %u in VID header",
				       vol->vol_id, lnum, pnum, off, len, vh.data_size);
		int err = ubi_io_read_data(dev, (uint32_t)pnum, 0, dev->peb_buf, vh.data_size);
		if (err == -EUCLEAN)
			flips = true;
		else if (err && err != -EBADMSG)
			return err;
		uint32_t crc = util_crc32(UTIL_CRC32_INIT, dev->peb_buf, vh.data_size);
		if (crc != vh.data_crc)
			return ubi_err(dev, -EBADMSG,
				       "LEB %u:%u (PEB %d:%u): data CRC 0x%08x, VID header says 0x%08x",
				       vol->vol_id, lnum, pnum, dev->off.data_offset, crc, vh.data_crc);
		if (err == -EBADMSG)
			flips = true; /* ECC failed but CRC is right: move it away */
		memcpy(buf, dev->peb_buf + off, len);
		if (flips)
			ubi_wl_scrub_peb(dev, (uint32_t)pnum);
		return 0;
	}
	int err = ubi_io_read_data(dev, (uint32_t)pnum, off, buf, len);
	if (err == -EUCLEAN) {
		ubi_wl_scrub_peb(dev, (uint32_t)pnum);
		return 0;
	}
	if (err == -EBADMSG)
		return ubi_err(dev, -EBADMSG, "LEB %u:%u (PEB %d:%u): uncorrectable ECC error reading %zu bytes",
			       vol->vol_id, lnum, pnum, dev->off.data_offset + off, len);
	return err;
}

static int write_failed(struct ubi_device *dev, int err)
{
	if (err != -EROFS && err != -ENOSPC && err != -ENOMEM)
		ubi_ro_mode(dev, "write error that could not be recovered");
	return err;
}

/* A write to a mapped LEB failed: move what is there plus the new data to
 * a new PEB. The copy carries copy_flag + data_crc so that a torn recovery
 * loses to the old PEB at attach. */
static int recover_peb(struct ubi_device *dev, struct ubi_volume *vol, uint32_t lnum, const void *buf,
		       uint32_t off, size_t len)
{
	uint32_t old = (uint32_t)vol->eba[lnum];
	int err = -EIO;
	for (int tries = 0; tries < UBI_IO_RETRIES; tries++) {
		uint32_t pnum;
		err = ubi_wl_get_peb(dev, &pnum);
		if (err)
			return err;
		int r = ubi_io_read_data(dev, old, 0, dev->peb_buf, off);
		if (r && r != -EUCLEAN && r != -EBADMSG) {
			ubi_wl_put_peb(dev, pnum, false);
			return r;
		}
		memcpy(dev->peb_buf + off, buf, len);
		uint32_t total = off + (uint32_t)len;
		struct ubi_vid_hdr vh;
		ubi_vid_hdr_for(vol, lnum, &vh);
		if (total) {
			vh.copy_flag = 1;
			vh.data_size = total;
			vh.data_crc = util_crc32(UTIL_CRC32_INIT, dev->peb_buf, total);
		}
		vh.sqnum = dev->sqnum++;
		err = ubi_io_write_vid_hdr(dev, pnum, &vh);
		if (!err)
			err = ubi_io_write_data(dev, pnum, 0, dev->peb_buf, total);
		if (!err) {
			set_mapping(dev, vol, lnum, pnum);
			ubi_wl_put_peb(dev, old, true);
			return 0;
		}
		ubi_wl_put_peb(dev, pnum, true);
		if (err != -EIO)
			break;
	}
	return err;
}

/* Write a new PEB for an unmapped LEB: VID header then data. */
static int write_new_peb(struct ubi_device *dev, struct ubi_volume *vol, uint32_t lnum,
			 const struct ubi_vid_hdr *tmpl, uint32_t off, const void *buf, size_t len)
{
	int err = -EIO;
	for (int tries = 0; tries < UBI_IO_RETRIES; tries++) {
		uint32_t pnum;
		err = ubi_wl_get_peb(dev, &pnum);
		if (err)
			return err;
		struct ubi_vid_hdr vh = *tmpl;
		vh.sqnum = dev->sqnum++;
		err = ubi_io_write_vid_hdr(dev, pnum, &vh);
		if (!err && len)
			err = ubi_io_write_data(dev, pnum, off, buf, len);
		if (!err) {
			set_mapping(dev, vol, lnum, pnum);
			return 0;
		}
		ubi_wl_put_peb(dev, pnum, true);
		if (err != -EIO || !dev->bad_allowed)
			break;
	}
	return write_failed(dev, err);
}

int ubi_eba_write(struct ubi_device *dev, struct ubi_volume *vol, uint32_t lnum, uint32_t off,
		  const void *buf, size_t len)
{
	if (dev->ro || dev->no_write)
		return ubi_err(dev, -EROFS, "LEB %u:%u: device is read-only%s%s", vol->vol_id, lnum,
			       dev->ro_reason[0] ? ": " : "", dev->ro_reason);
	int32_t pnum = vol->eba[lnum];
	if (pnum >= 0) {
		if (!len)
			return 0;
		int err = ubi_io_write_data(dev, (uint32_t)pnum, off, buf, len);
		if (err == -EIO && dev->bad_allowed)
			err = recover_peb(dev, vol, lnum, buf, off, len);
		if (err)
			return write_failed(dev, err);
		return 0;
	}
	struct ubi_vid_hdr vh;
	ubi_vid_hdr_for(vol, lnum, &vh);
	return write_new_peb(dev, vol, lnum, &vh, off, buf, len);
}

int ubi_eba_write_st(struct ubi_device *dev, struct ubi_volume *vol, uint32_t lnum, const void *buf,
		     uint32_t data_size, uint32_t used_ebs)
{
	if (dev->ro || dev->no_write)
		return ubi_err(dev, -EROFS, "LEB %u:%u: device is read-only", vol->vol_id, lnum);
	if (vol->eba[lnum] >= 0)
		return ubi_err(dev, -EINVAL, "LEB %u:%u: static write to a mapped LEB", vol->vol_id, lnum);
	struct ubi_vid_hdr vh;
	ubi_vid_hdr_for(vol, lnum, &vh);
	vh.data_size = data_size;
	vh.used_ebs = used_ebs;
	vh.data_crc = util_crc32(UTIL_CRC32_INIT, buf, data_size);
	return write_new_peb(dev, vol, lnum, &vh, 0, buf, align_io(dev, data_size));
}

int ubi_eba_change(struct ubi_device *dev, struct ubi_volume *vol, uint32_t lnum, const void *buf, size_t len)
{
	if (dev->ro || dev->no_write)
		return ubi_err(dev, -EROFS, "LEB %u:%u: device is read-only%s%s", vol->vol_id, lnum,
			       dev->ro_reason[0] ? ": " : "", dev->ro_reason);
	if (!len)
		return ubi_eba_unmap(dev, vol, lnum);
	int32_t old = vol->eba[lnum];
	struct ubi_vid_hdr vh;
	ubi_vid_hdr_for(vol, lnum, &vh);
	vh.copy_flag = 1;
	vh.data_size = (uint32_t)len;
	vh.data_crc = util_crc32(UTIL_CRC32_INIT, buf, len);
	vol->eba[lnum] = -1; /* so write_new_peb maps the new PEB */
	int err = write_new_peb(dev, vol, lnum, &vh, 0, buf, len);
	if (err) {
		vol->eba[lnum] = old;
		return err;
	}
	if (old >= 0)
		ubi_wl_put_peb(dev, (uint32_t)old, false);
	return 0;
}

int ubi_eba_unmap(struct ubi_device *dev, struct ubi_volume *vol, uint32_t lnum)
{
	if (dev->ro || dev->no_write)
		return ubi_err(dev, -EROFS, "LEB %u:%u: device is read-only", vol->vol_id, lnum);
	int32_t pnum = vol->eba[lnum];
	if (pnum < 0)
		return 0;
	vol->eba[lnum] = -1;
	ubi_wl_put_peb(dev, (uint32_t)pnum, false);
	/* Erase at unmap: the queue's older entries are erased now, as the
	 * kernel's background thread would have done by now; the PEB just
	 * freed waits for the next unmap. Erasing it at once would put a cut
	 * erase between the unmap and the LEB's rewrite (the master and log
	 * LEBs are unmapped and written again at once): the half-erased PEB,
	 * headers intact, would come back as the LEB, with no newer copy to
	 * win over it. A failed erase is handled as in the background (PEB
	 * marked bad, or the device read-only when no reserve is left, which
	 * the next write reports) and does not fail the unmap; a power cut
	 * does. */
	while (dev->erase_at_unmap && dev->peb[pnum].state == PEB_ERASE) {
		int64_t first = -1;
		for (uint32_t i = 0; i < dev->peb_count; i++)
			if (dev->peb[i].state == PEB_ERASE &&
			    (first < 0 || dev->peb[i].erase_order < dev->peb[first].erase_order))
				first = i;
		if (first == (int64_t)pnum)
			break;
		int r = ubi_wl_do_one_erase(dev);
		if (r < 0 && !dev->ro)
			return r;
		if (r <= 0)
			break;
	}
	return 0;
}

int ubi_eba_copy_leb(struct ubi_device *dev, uint32_t from, uint32_t to)
{
	struct ubi_peb *pf = &dev->peb[from];
	struct ubi_volume *vol = dev->vols[pf->vol_slot];
	if (!vol || pf->lnum >= vol->rec.reserved_pebs || vol->eba[pf->lnum] != (int32_t)from)
		return MOVE_CANCEL;
	uint32_t lnum = pf->lnum;
	struct ubi_vid_hdr vh;
	int r = ubi_io_read_vid_hdr(dev, from, &vh);
	if (r < 0)
		return r;
	if (r == UBI_IO_FF || r == UBI_IO_FF_BITFLIPS)
		return MOVE_CANCEL;
	if (r != UBI_IO_OK && r != UBI_IO_BITFLIPS)
		return MOVE_SOURCE_RD_ERR;
	if (vh.vol_id != vol->vol_id || vh.lnum != lnum)
		return MOVE_CANCEL;
	uint32_t data_size, aldata;
	if (vh.vol_type == UBI_VID_STATIC) {
		data_size = vh.data_size;
		aldata = align_io(dev, data_size);
	} else {
		data_size = aldata = dev->leb_size - vol->rec.data_pad;
	}
	if (aldata > dev->leb_size)
		return MOVE_SOURCE_RD_ERR;
	int err = ubi_io_read_data(dev, from, 0, dev->peb_buf, aldata);
	if (err && err != -EUCLEAN)
		return err == -EBADMSG ? MOVE_SOURCE_RD_ERR : err;
	if (vh.vol_type != UBI_VID_STATIC)
		data_size = aldata = ubi_calc_data_len(dev, dev->peb_buf, data_size);
	uint32_t crc = util_crc32(UTIL_CRC32_INIT, dev->peb_buf, data_size);
	if (data_size > 0) {
		vh.copy_flag = 1;
		vh.data_size = data_size;
		vh.data_crc = crc;
	}
	vh.sqnum = dev->sqnum++;
	err = ubi_io_write_vid_hdr(dev, to, &vh);
	if (err)
		return err == -EIO ? MOVE_TARGET_WR_ERR : err;
	struct ubi_vid_hdr back;
	r = ubi_io_read_vid_hdr(dev, to, &back);
	if (r < 0)
		return r == -EIO ? MOVE_TARGET_RD_ERR : r;
	if (r != UBI_IO_OK)
		return MOVE_TARGET_RD_ERR;
	if (aldata) {
		err = ubi_io_write_data(dev, to, 0, dev->peb_buf, aldata);
		if (err)
			return err == -EIO ? MOVE_TARGET_WR_ERR : err;
		err = ubi_io_read_data(dev, to, 0, dev->peb_buf2, aldata);
		if (err || memcmp(dev->peb_buf, dev->peb_buf2, aldata))
			return err && err != -EUCLEAN && err != -EBADMSG ? err : MOVE_TARGET_RD_ERR;
	}
	set_mapping(dev, vol, lnum, to);
	return 0;
}
