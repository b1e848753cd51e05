/* ubi_vol — the public volume and LEB API over the internals: argument
 * checks (ranges, min-I/O alignment, static-volume rules), volume create /
 * remove / resize / rename (Linux vmt.c: the table change is the commit
 * point), volume update with the update marker (upd.c), static CRC check,
 * the ubi_vol_io vtable for UBIFS, device info and background entry
 * points. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ubi/ubi_priv.h"

static int writable(struct ubi_device *dev)
{
	if (dev->no_write)
		return ubi_err(dev, -EROFS, "device attached read-only");
	if (dev->ro)
		return ubi_err(dev, -EROFS, "device is read-only: %s", dev->ro_reason);
	return 0;
}

static int lookup(const struct ubi_device *cdev, uint32_t vol_id, bool allow_layout, struct ubi_volume **out)
{
	struct ubi_device *dev = (struct ubi_device *)cdev;
	struct ubi_volume *vol = ubi_vol_by_id(dev, vol_id);
	if (!vol || (!allow_layout && vol_id == UBI_LAYOUT_VOLUME_ID)) {
		/* Return the constant, not ubi_err()'s result: callers use *out
		 * only on 0, and the compiler can only see that when the error
		 * path is visibly non-zero (GCC -O2 -Warray-bounds otherwise
		 * assumes a NULL *out on success). */
		ubi_err(dev, -ENOENT, "volume %u does not exist", vol_id);
		*out = NULL;
		return -ENOENT;
	}
	*out = vol;
	return 0;
}

/* ---- device ---- */

int ubi_dev_info(const struct ubi_device *dev, struct ubi_dev_info *o)
{
	memset(o, 0, sizeof(*o));
	o->peb_size = dev->peb_size;
	o->peb_count = dev->peb_count;
	o->leb_size = dev->leb_size;
	o->min_io_size = dev->min_io;
	o->hdrs_min_io_size = dev->off.hdrs_min_io_size;
	o->max_write_size = dev->min_io;
	o->vid_hdr_offset = dev->off.vid_hdr_offset;
	o->data_offset = dev->off.data_offset;
	o->image_seq = dev->image_seq;
	o->good_pebs = dev->good_peb_count;
	o->bad_pebs = dev->bad_peb_count;
	o->corrupt_pebs = dev->corr_peb_count;
	o->alien_pebs = dev->alien_peb_count;
	o->beb_rsvd_pebs = dev->beb_rsvd_pebs;
	o->avail_pebs = dev->avail_pebs > 0 ? (uint32_t)dev->avail_pebs : 0;
	o->free_pebs = ubi_wl_count(dev, PEB_FREE);
	o->erase_pending = ubi_wl_count(dev, PEB_ERASE);
	uint64_t sum = 0, n = 0;
	o->min_ec = UINT32_MAX;
	for (uint32_t i = 0; i < dev->peb_count; i++) {
		const struct ubi_peb *p = &dev->peb[i];
		if (p->state == PEB_BAD)
			continue;
		o->scrub_pending += p->state == PEB_USED && p->scrub;
		sum += p->ec;
		n++;
		if (p->ec < o->min_ec)
			o->min_ec = p->ec;
		if (p->ec > o->max_ec)
			o->max_ec = p->ec;
	}
	if (!n)
		o->min_ec = 0;
	o->mean_ec = n ? (uint32_t)(sum / n) : 0;
	uint64_t rs = 0;
	for (int i = 0; i <= UBI_MAX_VOLUMES; i++)
		if (dev->vols[i]) {
			rs += dev->vols[i]->rec.reserved_pebs;
			o->vol_count += i != UBI_LAYOUT_SLOT;
		}
	o->rsvd_pebs = (uint32_t)rs;
	o->vtbl_slots = dev->vtbl_slots;
	o->next_sqnum = dev->sqnum;
	o->wl_threshold = dev->wl_threshold;
	o->read_only = dev->ro || dev->no_write;
	if (dev->ro)
		memcpy(o->ro_reason, dev->ro_reason, sizeof(o->ro_reason));
	else if (dev->no_write)
		strcpy(o->ro_reason, "attached read-only");
	o->formatted = dev->formatted;
	return 0;
}

void ubi_get_stats(const struct ubi_device *dev, struct ubi_stats *st)
{
	*st = dev->stats;
}

int64_t ubi_peb_ec(const struct ubi_device *dev, uint32_t pnum)
{
	if (pnum >= dev->peb_count || dev->peb[pnum].state == PEB_BAD)
		return -1;
	return dev->peb[pnum].ec;
}

int ubi_background_step(struct ubi_device *dev)
{
	return ubi_wl_background(dev);
}

int ubi_flush_background(struct ubi_device *dev)
{
	/* Bounded: each WL move narrows the spread, so this ends; the cap is
	 * a guard against a policy bug turning into a hang. */
	uint64_t cap = 16ull * dev->peb_count + 1000;
	for (uint64_t i = 0; i < cap; i++) {
		int r = ubi_wl_background(dev);
		if (r <= 0)
			return r;
	}
	return 0;
}

int ubi_sync(struct ubi_device *dev)
{
	if (dev->no_write || dev->ro)
		return 0;
	int err = ubi_wl_flush_erase(dev);
	if (err < 0)
		return err;
	err = flash_sync(dev->flash);
	return err ? ubi_err(dev, err, "flash sync failed: %s", ubi_flash_why(dev, err)) : 0;
}

/* ---- volumes ---- */

static int check_name(struct ubi_device *dev, const char *name, size_t *len)
{
	if (!name)
		return ubi_err(dev, -EINVAL, "volume name missing");
	*len = strnlen(name, UBI_VOL_NAME_MAX + 1);
	if (*len == 0 || *len > UBI_VOL_NAME_MAX)
		return ubi_err(dev, -EINVAL, "volume name must be 1..%d bytes", UBI_VOL_NAME_MAX);
	return 0;
}

static int name_owner(const struct ubi_device *dev, const char *name)
{
	for (uint32_t i = 0; i < UBI_MAX_VOLUMES; i++)
		if (dev->vols[i] && !strcmp(dev->vols[i]->rec.name, name))
			return (int)i;
	return -1;
}

int ubi_vol_create(struct ubi_device *dev, const struct ubi_mkvol_req *req, uint32_t *vol_id_out)
{
	int err = writable(dev);
	if (err)
		return err;
	size_t nlen = 0;
	err = check_name(dev, req->name, &nlen);
	if (err)
		return err;
	if (name_owner(dev, req->name) >= 0)
		return ubi_err(dev, -EEXIST, "volume \"%s\" already exists", req->name);
	if (req->vol_type != UBI_VID_DYNAMIC && req->vol_type != UBI_VID_STATIC)
		return ubi_err(dev, -EINVAL, "volume type %u: expected 1 (dynamic) or 2 (static)", req->vol_type);
	uint32_t align = req->alignment ? req->alignment : 1;
	if (align > dev->leb_size || (align != 1 && align % dev->min_io))
		return ubi_err(dev, -EINVAL, "alignment %u: must be 1 or a multiple of %u up to %u", align, dev->min_io,
			       dev->leb_size);
	if (req->flags & ~(UBI_VTBL_AUTORESIZE_FLG | UBI_VTBL_SKIP_CRC_CHECK_FLG))
		return ubi_err(dev, -EINVAL, "unknown volume flags 0x%x", req->flags);
	if ((req->flags & UBI_VTBL_SKIP_CRC_CHECK_FLG) && req->vol_type != UBI_VID_STATIC)
		return ubi_err(dev, -EINVAL, "skip-check flag is for static volumes only");
	if (req->flags & UBI_VTBL_AUTORESIZE_FLG) {
		for (uint32_t i = 0; i < UBI_MAX_VOLUMES; i++)
			if (dev->vols[i] && (dev->vols[i]->rec.flags & UBI_VTBL_AUTORESIZE_FLG))
				return ubi_err(dev, -EINVAL, "volume %u already has the autoresize flag", i);
	}
	if (req->leb_count == 0)
		return ubi_err(dev, -EINVAL, "volume size 0");
	uint32_t id;
	if (req->vol_id == UBI_VOL_NUM_AUTO) {
		for (id = 0; id < dev->vtbl_slots && dev->vols[id]; id++)
			;
		if (id == dev->vtbl_slots)
			return ubi_err(dev, -ENFILE, "all %u volume slots are used", dev->vtbl_slots);
	} else {
		if (req->vol_id < 0 || (uint32_t)req->vol_id >= dev->vtbl_slots)
			return ubi_err(dev, -EINVAL, "volume ID %d out of range 0..%u", req->vol_id, dev->vtbl_slots - 1);
		id = (uint32_t)req->vol_id;
		if (dev->vols[id])
			return ubi_err(dev, -EEXIST, "volume ID %u already exists", id);
	}
	if ((int64_t)req->leb_count > dev->avail_pebs)
		return ubi_err(dev, -ENOSPC, "not enough PEBs: %u requested, %lld available", req->leb_count,
			       (long long)dev->avail_pebs);
	struct ubi_vtbl_record rec = {
		.reserved_pebs = req->leb_count,
		.alignment = align,
		.data_pad = dev->leb_size % align,
		.vol_type = req->vol_type,
		.name_len = (uint16_t)nlen,
		.flags = req->flags,
	};
	memcpy(rec.name, req->name, nlen);
	struct ubi_volume *vol = ubi_vol_alloc(dev, id, &rec);
	if (!vol)
		return -ENOMEM;
	dev->vols[id] = vol;
	ubi_vtbl_set_record(dev, id, &rec);
	err = ubi_vtbl_write(dev);
	if (err) {
		dev->vols[id] = NULL;
		ubi_vtbl_set_record(dev, id, NULL);
		ubi_vol_free(vol);
		return err;
	}
	dev->avail_pebs -= req->leb_count;
	dev->rsvd_pebs += req->leb_count;
	if (vol_id_out)
		*vol_id_out = id;
	return 0;
}

int ubi_vol_remove(struct ubi_device *dev, uint32_t vol_id)
{
	struct ubi_volume *vol = NULL;
	int err = lookup(dev, vol_id, false, &vol);
	if (err)
		return err;
	if ((err = writable(dev)))
		return err;
	/* The table change is the commit point; PEBs of a volume without a
	 * record are erased at attach if we are cut before unmapping. */
	ubi_vtbl_set_record(dev, vol_id, NULL);
	err = ubi_vtbl_write(dev);
	if (err) {
		ubi_vtbl_set_record(dev, vol_id, &vol->rec);
		return err;
	}
	for (uint32_t i = 0; i < vol->rec.reserved_pebs; i++)
		ubi_eba_unmap(dev, vol, i);
	dev->avail_pebs += vol->rec.reserved_pebs;
	dev->rsvd_pebs -= vol->rec.reserved_pebs;
	if (dev->autoresize_slot == (int)vol_id)
		dev->autoresize_slot = -1;
	dev->vols[vol_id] = NULL;
	ubi_vol_free(vol);
	return 0;
}

int ubi_vol_resize(struct ubi_device *dev, uint32_t vol_id, uint32_t leb_count)
{
	struct ubi_volume *vol = NULL;
	int err = lookup(dev, vol_id, false, &vol);
	if (err)
		return err;
	if ((err = writable(dev)))
		return err;
	if (leb_count == 0)
		return ubi_err(dev, -EINVAL, "volume %u: size 0", vol_id);
	if (vol->rec.vol_type == UBI_VID_STATIC && leb_count < vol->used_ebs)
		return ubi_err(dev, -EINVAL, "volume %u: %u LEBs too small, %u LEBs hold data", vol_id, leb_count,
			       vol->used_ebs);
	uint32_t old = vol->rec.reserved_pebs;
	int64_t delta = (int64_t)leb_count - old;
	if (delta > dev->avail_pebs)
		return ubi_err(dev, -ENOSPC, "volume %u: %lld more PEBs needed, %lld available", vol_id,
			       (long long)delta, (long long)dev->avail_pebs);
	if (delta > 0) {
		int32_t *n = realloc(vol->eba, sizeof(int32_t) * leb_count);
		if (!n)
			return -ENOMEM;
		vol->eba = n;
		for (uint32_t i = old; i < leb_count; i++)
			n[i] = -1;
	} else if (delta < 0) {
		/* Unmap and erase the cut-off LEBs before the table shrinks, so
		 * no PEB of a LEB beyond the new size survives a power cut. */
		for (uint32_t i = leb_count; i < old; i++)
			ubi_eba_unmap(dev, vol, i);
		err = ubi_wl_flush_erase(dev);
		if (err < 0)
			return err;
	}
	struct ubi_vtbl_record rec = vol->rec;
	rec.reserved_pebs = leb_count;
	ubi_vtbl_set_record(dev, vol_id, &rec);
	err = ubi_vtbl_write(dev);
	if (err) {
		ubi_vtbl_set_record(dev, vol_id, &vol->rec);
		return err;
	}
	vol->rec = rec;
	dev->avail_pebs -= delta;
	dev->rsvd_pebs += delta;
	if (vol->rec.vol_type == UBI_VID_DYNAMIC) {
		vol->used_ebs = leb_count;
		vol->used_bytes = (uint64_t)leb_count * vol->usable;
	}
	return 0;
}

int ubi_vol_rename(struct ubi_device *dev, const struct ubi_rename_req *reqs, size_t n)
{
	int err = writable(dev);
	if (err)
		return err;
	if (n == 0 || n > UBI_MAX_VOLUMES)
		return ubi_err(dev, -EINVAL, "rename: %zu requests", n);
	bool renamed[UBI_MAX_VOLUMES] = {0};
	bool remove[UBI_MAX_VOLUMES] = {0};
	for (size_t i = 0; i < n; i++) {
		struct ubi_volume *vol = NULL;
		if ((err = lookup(dev, reqs[i].vol_id, false, &vol)))
			return err;
		size_t len = 0;
		if ((err = check_name(dev, reqs[i].new_name, &len)))
			return err;
		if (renamed[reqs[i].vol_id])
			return ubi_err(dev, -EINVAL, "rename: volume %u listed twice", reqs[i].vol_id);
		renamed[reqs[i].vol_id] = true;
		for (size_t j = 0; j < i; j++)
			if (!strcmp(reqs[i].new_name, reqs[j].new_name))
				return ubi_err(dev, -EINVAL, "rename: name \"%s\" given twice", reqs[i].new_name);
	}
	for (size_t i = 0; i < n; i++) {
		int owner = name_owner(dev, reqs[i].new_name);
		if (owner >= 0 && !renamed[owner])
			remove[owner] = true; /* Linux: the old holder of the name goes */
	}
	uint8_t *saved = malloc(dev->vtbl_size);
	if (!saved)
		return -ENOMEM;
	memcpy(saved, dev->vtbl, dev->vtbl_size);
	for (size_t i = 0; i < n; i++) {
		struct ubi_vtbl_record rec = dev->vols[reqs[i].vol_id]->rec;
		size_t len = strlen(reqs[i].new_name);
		memset(rec.name, 0, sizeof(rec.name));
		memcpy(rec.name, reqs[i].new_name, len);
		rec.name_len = (uint16_t)len;
		ubi_vtbl_set_record(dev, reqs[i].vol_id, &rec);
	}
	for (uint32_t i = 0; i < UBI_MAX_VOLUMES; i++)
		if (remove[i])
			ubi_vtbl_set_record(dev, i, NULL);
	err = ubi_vtbl_write(dev);
	if (err) {
		memcpy(dev->vtbl, saved, dev->vtbl_size);
		free(saved);
		return err;
	}
	free(saved);
	for (size_t i = 0; i < n; i++) {
		struct ubi_volume *vol = dev->vols[reqs[i].vol_id];
		size_t len = strlen(reqs[i].new_name);
		memset(vol->rec.name, 0, sizeof(vol->rec.name));
		memcpy(vol->rec.name, reqs[i].new_name, len);
		vol->rec.name_len = (uint16_t)len;
	}
	for (uint32_t i = 0; i < UBI_MAX_VOLUMES; i++) {
		if (!remove[i])
			continue;
		struct ubi_volume *vol = dev->vols[i];
		for (uint32_t l = 0; l < vol->rec.reserved_pebs; l++)
			ubi_eba_unmap(dev, vol, l);
		dev->avail_pebs += vol->rec.reserved_pebs;
		dev->rsvd_pebs -= vol->rec.reserved_pebs;
		if (dev->autoresize_slot == (int)i)
			dev->autoresize_slot = -1;
		dev->vols[i] = NULL;
		ubi_vol_free(vol);
	}
	return 0;
}

int ubi_vol_info(const struct ubi_device *dev, uint32_t vol_id, struct ubi_vol_info *o)
{
	struct ubi_volume *vol = NULL;
	int err = lookup(dev, vol_id, true, &vol);
	if (err)
		return err;
	memset(o, 0, sizeof(*o));
	o->vol_id = vol_id;
	memcpy(o->name, vol->rec.name, sizeof(o->name));
	o->vol_type = vol->rec.vol_type;
	o->reserved_pebs = vol->rec.reserved_pebs;
	o->alignment = vol->rec.alignment;
	o->data_pad = vol->rec.data_pad;
	o->usable_leb_size = vol->usable;
	o->used_ebs = vol->used_ebs;
	o->last_eb_bytes = vol->last_eb_bytes;
	o->used_bytes = vol->used_bytes;
	for (uint32_t i = 0; i < vol->rec.reserved_pebs; i++)
		o->mapped_lebs += vol->eba[i] >= 0;
	o->flags = vol->rec.flags;
	o->upd_marker = vol->rec.upd_marker;
	o->corrupted = vol->corrupted;
	return 0;
}

int ubi_vol_list(const struct ubi_device *dev, uint32_t *ids, size_t max)
{
	size_t n = 0;
	for (uint32_t i = 0; i < UBI_MAX_VOLUMES; i++)
		if (dev->vols[i]) {
			if (n < max)
				ids[n] = i;
			n++;
		}
	return (int)n;
}

int ubi_vol_find(const struct ubi_device *dev, const char *name)
{
	int id = name ? name_owner(dev, name) : -1;
	return id >= 0 ? id : -ENOENT;
}

/* ---- volume update ---- */

static int set_marker(struct ubi_device *dev, struct ubi_volume *vol, uint8_t marker)
{
	struct ubi_vtbl_record rec = vol->rec;
	rec.upd_marker = marker;
	ubi_vtbl_set_record(dev, vol->vol_id, &rec);
	int err = ubi_vtbl_write(dev);
	if (err) {
		ubi_vtbl_set_record(dev, vol->vol_id, &vol->rec);
		return err;
	}
	vol->rec.upd_marker = marker;
	return 0;
}

static int finish_update(struct ubi_device *dev, struct ubi_volume *vol)
{
	int err = ubi_wl_flush_erase(dev);
	if (err < 0)
		return err;
	err = set_marker(dev, vol, 0);
	if (err)
		return err;
	if (vol->rec.vol_type == UBI_VID_STATIC) {
		vol->used_ebs = vol->upd_ebs;
		vol->used_bytes = vol->upd_bytes;
		uint32_t r = (uint32_t)(vol->upd_bytes % vol->usable);
		vol->last_eb_bytes = vol->upd_bytes ? (r ? r : vol->usable) : 0;
		vol->corrupted = false;
	}
	vol->updating = false;
	free(vol->upd_buf);
	vol->upd_buf = NULL;
	return 0;
}

int ubi_vol_update_start(struct ubi_device *dev, uint32_t vol_id, uint64_t bytes)
{
	struct ubi_volume *vol = NULL;
	int err = lookup(dev, vol_id, false, &vol);
	if (err)
		return err;
	if ((err = writable(dev)))
		return err;
	if (bytes > (uint64_t)vol->rec.reserved_pebs * vol->usable)
		return ubi_err(dev, -EINVAL, "volume %u: update of %llu bytes larger than the volume (%llu)", vol_id,
			       (unsigned long long)bytes, (unsigned long long)vol->rec.reserved_pebs * vol->usable);
	err = set_marker(dev, vol, 1);
	if (err)
		return err;
	for (uint32_t i = 0; i < vol->rec.reserved_pebs; i++)
		ubi_eba_unmap(dev, vol, i);
	err = ubi_wl_flush_erase(dev);
	if (err < 0)
		return err;
	free(vol->upd_buf);
	vol->upd_buf = NULL;
	vol->upd_bytes = bytes;
	vol->upd_received = 0;
	vol->upd_fill = 0;
	vol->upd_ebs = (uint32_t)((bytes + vol->usable - 1) / vol->usable);
	vol->updating = true;
	if (vol->rec.vol_type == UBI_VID_STATIC) {
		vol->used_ebs = 0;
		vol->used_bytes = 0;
		vol->last_eb_bytes = 0;
	}
	if (bytes == 0)
		return finish_update(dev, vol);
	vol->upd_buf = malloc(dev->leb_size);
	if (!vol->upd_buf)
		return -ENOMEM;
	return 0;
}

/* Write the buffered LEB (n bytes of data). */
static int flush_upd_leb(struct ubi_device *dev, struct ubi_volume *vol, uint32_t lnum, uint32_t n)
{
	uint32_t al = (n + dev->min_io - 1) / dev->min_io * dev->min_io;
	memset(vol->upd_buf + n, 0xFF, al - n);
	if (vol->rec.vol_type == UBI_VID_STATIC)
		return ubi_eba_write_st(dev, vol, lnum, vol->upd_buf, n, vol->upd_ebs);
	uint32_t len = ubi_calc_data_len(dev, vol->upd_buf, al);
	if (!len)
		return 0; /* all 0xFF: leave the LEB unmapped, as Linux */
	return ubi_eba_write(dev, vol, lnum, 0, vol->upd_buf, len);
}

int ubi_vol_update_write(struct ubi_device *dev, uint32_t vol_id, const void *buf, size_t len)
{
	struct ubi_volume *vol = NULL;
	int err = lookup(dev, vol_id, false, &vol);
	if (err)
		return err;
	if (!vol->updating)
		return ubi_err(dev, -EINVAL, "volume %u: no update in progress", vol_id);
	if (len > vol->upd_bytes - vol->upd_received)
		return ubi_err(dev, -EINVAL, "volume %u: %zu bytes written past the announced update size", vol_id,
			       len);
	const uint8_t *p = buf;
	while (len) {
		uint32_t room = vol->usable - vol->upd_fill;
		uint32_t k = len < room ? (uint32_t)len : room;
		memcpy(vol->upd_buf + vol->upd_fill, p, k);
		vol->upd_fill += k;
		vol->upd_received += k;
		p += k;
		len -= k;
		if (vol->upd_fill == vol->usable || vol->upd_received == vol->upd_bytes) {
			uint32_t lnum = (uint32_t)((vol->upd_received - 1) / vol->usable);
			err = flush_upd_leb(dev, vol, lnum, vol->upd_fill);
			if (err)
				return err;
			vol->upd_fill = 0;
		}
	}
	if (vol->upd_received == vol->upd_bytes)
		return finish_update(dev, vol);
	return 0;
}

int ubi_vol_update_pending(const struct ubi_device *dev, uint32_t vol_id)
{
	struct ubi_volume *vol = NULL;
	int err = lookup(dev, vol_id, false, &vol);
	if (err)
		return err;
	return vol->updating;
}

int ubi_vol_update(struct ubi_device *dev, uint32_t vol_id, const void *buf, uint64_t len)
{
	int err = ubi_vol_update_start(dev, vol_id, len);
	if (err || !len)
		return err;
	return ubi_vol_update_write(dev, vol_id, buf, (size_t)len);
}

int ubi_vol_check(struct ubi_device *dev, uint32_t vol_id)
{
	struct ubi_volume *vol = NULL;
	int err = lookup(dev, vol_id, false, &vol);
	if (err)
		return err;
	if (vol->rec.upd_marker)
		return ubi_err(dev, -EBADF, "volume %u: interrupted update (update marker set)", vol_id);
	if (vol->rec.vol_type != UBI_VID_STATIC)
		return 0;
	if (vol->corrupted)
		return ubi_err(dev, -EBADMSG, "static volume %u misses LEBs (corrupted)", vol_id);
	uint8_t *buf = malloc(vol->usable ? vol->usable : 1);
	if (!buf)
		return -ENOMEM;
	for (uint32_t i = 0; i < vol->used_ebs && !err; i++) {
		uint32_t size = i == vol->used_ebs - 1 ? vol->last_eb_bytes : vol->usable;
		if (vol->eba[i] < 0)
			err = ubi_err(dev, -EBADMSG, "static volume %u: LEB %u missing", vol_id, i);
		else
			err = ubi_eba_read(dev, vol, i, 0, buf, size, true);
	}
	free(buf);
	if (err == -EBADMSG)
		vol->corrupted = true;
	return err;
}

/* ---- LEB API ---- */

static int leb_args(struct ubi_device *dev, struct ubi_volume *vol, uint32_t lnum, uint64_t off, uint64_t len)
{
	if (lnum >= vol->rec.reserved_pebs)
		return ubi_err(dev, -EINVAL, "volume %u: LEB %u out of range (%u LEBs)", vol->vol_id, lnum,
			       vol->rec.reserved_pebs);
	if (off + len > vol->usable)
		return ubi_err(dev, -EINVAL, "LEB %u:%u: range %llu+%llu beyond usable LEB size %u", vol->vol_id, lnum,
			       (unsigned long long)off, (unsigned long long)len, vol->usable);
	if (vol->updating)
		return ubi_err(dev, -EBUSY, "volume %u: update in progress", vol->vol_id);
	return 0;
}

static int write_args(struct ubi_device *dev, struct ubi_volume *vol, uint32_t lnum, uint64_t off, uint64_t len)
{
	int err = leb_args(dev, vol, lnum, off, len);
	if (err)
		return err;
	if ((err = writable(dev)))
		return err;
	if (vol->rec.vol_type == UBI_VID_STATIC)
		return ubi_err(dev, -EROFS, "volume %u is static: use a volume update", vol->vol_id);
	if (off % dev->min_io || len % dev->min_io)
		return ubi_err(dev, -EINVAL, "LEB %u:%u: offset %llu / length %llu not multiples of min I/O %u",
			       vol->vol_id, lnum, (unsigned long long)off, (unsigned long long)len, dev->min_io);
	if (vol->rec.upd_marker)
		return ubi_err(dev, -EBADF, "volume %u: interrupted update, contents invalid", vol->vol_id);
	return 0;
}

int ubi_leb_read(struct ubi_device *dev, uint32_t vol_id, uint32_t lnum, uint32_t off, void *buf, size_t len)
{
	struct ubi_volume *vol = NULL;
	int err = lookup(dev, vol_id, true, &vol);
	if (err)
		return err;
	if ((err = leb_args(dev, vol, lnum, off, len)))
		return err;
	if (vol->rec.upd_marker)
		return ubi_err(dev, -EBADF, "volume %u: interrupted update, contents invalid", vol_id);
	if (vol->rec.vol_type == UBI_VID_STATIC) {
		if (vol->used_ebs == 0 || !len)
			return 0;
		if (lnum >= vol->used_ebs || (lnum == vol->used_ebs - 1 && off + len > vol->last_eb_bytes))
			return ubi_err(dev, -EINVAL, "static volume %u: LEB %u read %u+%zu beyond the data", vol_id,
				       lnum, off, len);
		if (vol->eba[lnum] < 0)
			return ubi_err(dev, -EBADMSG, "static volume %u: LEB %u is missing", vol_id, lnum);
	}
	if (!len)
		return 0;
	return ubi_eba_read(dev, vol, lnum, off, buf, len, true);
}

int ubi_leb_write(struct ubi_device *dev, uint32_t vol_id, uint32_t lnum, uint32_t off, const void *buf,
		  size_t len)
{
	struct ubi_volume *vol = NULL;
	int err = lookup(dev, vol_id, false, &vol);
	if (err)
		return err;
	if ((err = write_args(dev, vol, lnum, off, len)))
		return err;
	if (!len)
		return 0;
	return ubi_eba_write(dev, vol, lnum, off, buf, len);
}

int ubi_leb_change(struct ubi_device *dev, uint32_t vol_id, uint32_t lnum, const void *buf, size_t len)
{
	struct ubi_volume *vol = NULL;
	int err = lookup(dev, vol_id, false, &vol);
	if (err)
		return err;
	if ((err = write_args(dev, vol, lnum, 0, len)))
		return err;
	return ubi_eba_change(dev, vol, lnum, buf, len);
}

int ubi_leb_unmap(struct ubi_device *dev, uint32_t vol_id, uint32_t lnum)
{
	struct ubi_volume *vol = NULL;
	int err = lookup(dev, vol_id, false, &vol);
	if (err)
		return err;
	if ((err = write_args(dev, vol, lnum, 0, 0)))
		return err;
	return ubi_eba_unmap(dev, vol, lnum);
}

int ubi_leb_map(struct ubi_device *dev, uint32_t vol_id, uint32_t lnum)
{
	struct ubi_volume *vol = NULL;
	int err = lookup(dev, vol_id, false, &vol);
	if (err)
		return err;
	if ((err = write_args(dev, vol, lnum, 0, 0)))
		return err;
	if (vol->eba[lnum] >= 0)
		return ubi_err(dev, -EBADMSG, "LEB %u:%u is already mapped", vol_id, lnum);
	return ubi_eba_write(dev, vol, lnum, 0, NULL, 0);
}

int ubi_leb_is_mapped(const struct ubi_device *dev, uint32_t vol_id, uint32_t lnum)
{
	struct ubi_volume *vol = NULL;
	int err = lookup(dev, vol_id, true, &vol);
	if (err)
		return err;
	if (lnum >= vol->rec.reserved_pebs)
		return ubi_err((struct ubi_device *)dev, -EINVAL, "volume %u: LEB %u out of range", vol_id, lnum);
	return vol->eba[lnum] >= 0;
}

/* ---- vtable for UBIFS ---- */

static int vio_read(void *ctx, uint32_t lnum, uint32_t off, void *buf, size_t len)
{
	struct ubi_vol_ctx *c = ctx;
	return ubi_leb_read(c->dev, c->vol_id, lnum, off, buf, len);
}
static int vio_write(void *ctx, uint32_t lnum, uint32_t off, const void *buf, size_t len)
{
	struct ubi_vol_ctx *c = ctx;
	return ubi_leb_write(c->dev, c->vol_id, lnum, off, buf, len);
}
static int vio_change(void *ctx, uint32_t lnum, const void *buf, size_t len)
{
	struct ubi_vol_ctx *c = ctx;
	return ubi_leb_change(c->dev, c->vol_id, lnum, buf, len);
}
static int vio_unmap(void *ctx, uint32_t lnum)
{
	struct ubi_vol_ctx *c = ctx;
	return ubi_leb_unmap(c->dev, c->vol_id, lnum);
}
static int vio_map(void *ctx, uint32_t lnum)
{
	struct ubi_vol_ctx *c = ctx;
	return ubi_leb_map(c->dev, c->vol_id, lnum);
}
static int vio_is_mapped(void *ctx, uint32_t lnum)
{
	struct ubi_vol_ctx *c = ctx;
	return ubi_leb_is_mapped(c->dev, c->vol_id, lnum);
}
static int vio_sync(void *ctx)
{
	struct ubi_vol_ctx *c = ctx;
	return ubi_sync(c->dev);
}

int ubi_volume_io(struct ubi_device *dev, uint32_t vol_id, struct ubi_vol_io *out)
{
	struct ubi_volume *vol = NULL;
	int err = lookup(dev, vol_id, false, &vol);
	if (err)
		return err;
	memset(out, 0, sizeof(*out));
	out->ctx = &vol->ctx;
	out->leb_size = vol->usable;
	out->leb_count = vol->rec.reserved_pebs;
	out->min_io_size = dev->min_io;
	out->max_write_size = dev->min_io;
	out->read_only = dev->ro || dev->no_write || vol->rec.vol_type == UBI_VID_STATIC;
	out->read = vio_read;
	out->write = vio_write;
	out->change = vio_change;
	out->unmap = vio_unmap;
	out->map = vio_map;
	out->is_mapped = vio_is_mapped;
	out->sync = vio_sync;
	return 0;
}
