/* ubi_vtbl — the volume table kept in the two LEBs of the layout volume:
 * checking a copy as the kernel does (every record valid, unused slots
 * exactly empty, names unique, sizes possible), and writing the in-memory
 * table to LEB 0 then LEB 1, each with an atomic LEB change, so that a
 * power cut leaves at least one complete copy of the old or the new table
 * and attach prefers LEB 0 (spec §9.2). */
#include <errno.h>
#include <string.h>

#include "ubi/ubi_priv.h"

uint32_t ubi_vtbl_size(const struct ubi_device *dev)
{
	uint32_t n = dev->vtbl_slots * UBI_VTBL_RECORD_SIZE;
	return (n + dev->min_io - 1) / dev->min_io * dev->min_io;
}

int ubi_vtbl_check(struct ubi_device *dev, const uint8_t *vtbl, int copy)
{
	struct ubi_vtbl_record r[UBI_MAX_VOLUMES];
	for (uint32_t i = 0; i < dev->vtbl_slots; i++) {
		const char *why = ubi_vtbl_record_unpack(vtbl + i * UBI_VTBL_RECORD_SIZE, dev->leb_size, dev->min_io,
							 &r[i]);
		if (why) {
			ubi_err(dev, 1, "volume table copy %d (layout LEB %d), record %u at offset %u: %s", copy, copy,
				i, i * UBI_VTBL_RECORD_SIZE, why);
			return 1;
		}
		if (r[i].reserved_pebs > dev->good_peb_count) {
			ubi_err(dev, 1,
				"volume table copy %d, record %u: reserved_pebs %u larger than the %u good PEBs", copy,
				i, r[i].reserved_pebs, dev->good_peb_count);
			return 1;
		}
	}
	for (uint32_t i = 0; i < dev->vtbl_slots; i++) {
		if (!r[i].reserved_pebs)
			continue;
		for (uint32_t j = i + 1; j < dev->vtbl_slots; j++)
			if (r[j].reserved_pebs && r[i].name_len == r[j].name_len &&
			    !memcmp(r[i].name, r[j].name, r[i].name_len))
				return ubi_err(dev, -EINVAL,
					       "volume table copy %d: volumes %u and %u have the same name \"%s\"", copy,
					       i, j, r[i].name);
	}
	return 0;
}

void ubi_vtbl_set_record(struct ubi_device *dev, uint32_t slot, const struct ubi_vtbl_record *rec)
{
	ubi_vtbl_record_pack(rec, dev->vtbl + slot * UBI_VTBL_RECORD_SIZE);
}

int ubi_vtbl_write(struct ubi_device *dev)
{
	struct ubi_volume *layout = dev->vols[UBI_LAYOUT_SLOT];
	for (uint32_t i = 0; i < UBI_LAYOUT_VOLUME_EBS; i++) {
		int err = ubi_eba_change(dev, layout, i, dev->vtbl, dev->vtbl_size);
		if (err)
			return err;
	}
	dev->stats.vtbl_updates++;
	return 0;
}
