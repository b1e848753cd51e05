/* ubi — the public API of the UBI layer: attach a raw flash device (scan of
 * every PEB, as Linux does without fastmap), manage volumes, read and write
 * LEBs, and run the background work (erasure, wear leveling, scrubbing).
 *
 * One struct ubi_device per attached flash; no global state; single-threaded
 * (callers serialize). Every function returns 0 (or a count) on success and a
 * negative errno on failure; ubi_errmsg() then names the place and cause.
 * The on-flash format and the attach rules are Linux's (spec UBI-FORMAT.md).
 *
 * Errors used: -EINVAL bad argument, -ENOENT no such volume, -EEXIST name or
 * ID taken, -ENOSPC not enough PEBs, -EROFS device read-only (attached so, or
 * switched after running out of reserve PEBs), -EBADMSG uncorrectable data or
 * static-volume CRC mismatch, -EBADF volume has an interrupted update,
 * -EUCLEAN never (corrected reads return 0 and the PEB is scrubbed later). */
#ifndef UBIKIT_UBI_H
#define UBIKIT_UBI_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "flash/flash.h"
#include "ubi/ubi_media.h"
#include "ubi/ubi_vol_io.h"

struct ubi_device;

#define UBI_DEFAULT_WL_THRESHOLD 4096u /* CONFIG_MTD_UBI_WL_THRESHOLD */
#define UBI_DEFAULT_BEB_PER1024 20     /* CONFIG_MTD_UBI_BEB_LIMIT */
#define UBI_VOL_NUM_AUTO (-1)

struct ubi_attach_opts {
	uint32_t vid_hdr_offset; /* 0 = computed from the geometry (spec §3.1) */
	bool read_only;          /* never write to the flash (no format/repair/scrub) */
	uint32_t wl_threshold;   /* erase-count spread that triggers a WL move; 0 = default 4096 */
	int beb_per1024;         /* bad-PEB reserve per 1024 PEBs (NAND only); <0 = default 20, 0 = none */
	uint64_t seed;           /* image_seq of a freshly formatted empty flash derives from it */
	bool autoformat;         /* empty flash: format it (EC headers + empty layout volume) */
	bool erase_at_unmap;     /* an unmap erases the PEBs queued before the one it frees,
				  * as the kernel's background thread would have by then
				  * (default off: see docs/ubi.md); off, PEBs wait until a
				  * free one is needed */
};

/* Defaults: as Linux (threshold 4096, reserve 20/1024, autoformat on). */
void ubi_attach_opts_default(struct ubi_attach_opts *o);

/* Attach by scanning. opts NULL = defaults. On failure *out is NULL and, if
 * errmsg is not NULL, the reason is copied there (up to errmsg_len bytes). */
int ubi_attach(struct flash_dev *flash, const struct ubi_attach_opts *opts, struct ubi_device **out);
/* Same, also returning the error message of a failed attach. */
int ubi_attach_msg(struct flash_dev *flash, const struct ubi_attach_opts *opts, struct ubi_device **out,
		   char *errmsg, size_t errmsg_len);
/* Detach: erases PEBs still queued for erasure (so unmapped LEBs stay
 * unmapped; only a power cut can bring them back, as in Linux), syncs the
 * flash and frees memory; does not close the flash device. */
void ubi_detach(struct ubi_device *dev);
/* Message of the last failure on this device ("" if none). */
const char *ubi_errmsg(const struct ubi_device *dev);

struct ubi_dev_info {
	uint32_t peb_size, peb_count;
	uint32_t leb_size;          /* peb_size - data_offset */
	uint32_t min_io_size, hdrs_min_io_size, max_write_size;
	uint32_t vid_hdr_offset, data_offset;
	uint32_t image_seq;
	uint32_t good_pebs, bad_pebs, corrupt_pebs, alien_pebs;
	uint32_t beb_rsvd_pebs;     /* currently reserved for bad-PEB handling */
	uint32_t rsvd_pebs;         /* reserved by volumes (incl. layout) */
	uint32_t avail_pebs;        /* still available for new volumes / growth */
	uint32_t free_pebs, erase_pending, scrub_pending;
	uint32_t min_ec, max_ec, mean_ec; /* over good PEBs with a known EC */
	uint32_t vtbl_slots, vol_count;
	uint64_t next_sqnum;
	uint32_t wl_threshold;
	bool read_only;
	char ro_reason[128];        /* why read-only ("" if writable) */
	bool formatted;             /* this attach formatted an empty flash */
};
int ubi_dev_info(const struct ubi_device *dev, struct ubi_dev_info *out);

/* Cumulative counters since attach. */
struct ubi_stats {
	uint64_t erases, torture_tests, wl_moves, scrubs, marked_bad, vtbl_updates;
	uint64_t corrected_reads, uncorrectable_reads;
	uint64_t read_retries; /* failed reads tried again (Linux: UBI_IO_RETRIES) */
};
void ubi_get_stats(const struct ubi_device *dev, struct ubi_stats *st);
/* Erase counter UBI keeps for a PEB; -1 for bad/unknown. */
int64_t ubi_peb_ec(const struct ubi_device *dev, uint32_t pnum);

/* ---- volumes ---- */
struct ubi_mkvol_req {
	int vol_id;          /* 0..vtbl_slots-1, or UBI_VOL_NUM_AUTO */
	const char *name;    /* 1..127 bytes, unique */
	uint32_t leb_count;  /* size in LEBs (reserved_pebs) */
	uint8_t vol_type;    /* UBI_VID_DYNAMIC or UBI_VID_STATIC */
	uint32_t alignment;  /* 0/1, or a multiple of min I/O <= LEB size */
	uint8_t flags;       /* UBI_VTBL_AUTORESIZE_FLG, UBI_VTBL_SKIP_CRC_CHECK_FLG */
};

struct ubi_vol_info {
	uint32_t vol_id;
	char name[UBI_VOL_NAME_MAX + 1];
	uint8_t vol_type;          /* UBI_VID_DYNAMIC / UBI_VID_STATIC */
	uint32_t reserved_pebs;    /* size in LEBs */
	uint32_t alignment, data_pad;
	uint32_t usable_leb_size;  /* leb_size - data_pad */
	uint32_t used_ebs;         /* static: LEBs holding data; dynamic: reserved_pebs */
	uint32_t last_eb_bytes;    /* static: bytes in the last used LEB */
	uint64_t used_bytes;       /* static: data length; dynamic: reserved * usable */
	uint32_t mapped_lebs;
	uint8_t flags;             /* vtbl flags */
	bool upd_marker;           /* an update was interrupted: contents invalid */
	bool corrupted;            /* static volume failed its checks */
};

/* Create a volume; *vol_id_out (may be NULL) gets its ID. */
int ubi_vol_create(struct ubi_device *dev, const struct ubi_mkvol_req *req, uint32_t *vol_id_out);
int ubi_vol_remove(struct ubi_device *dev, uint32_t vol_id);
/* New size in LEBs. Shrinking unmaps the LEBs cut off. */
int ubi_vol_resize(struct ubi_device *dev, uint32_t vol_id, uint32_t leb_count);

struct ubi_rename_req {
	uint32_t vol_id;
	const char *new_name;
};
/* Rename several volumes in one volume-table update (atomic). As Linux: if a
 * new name belongs to a volume not in the list, that volume is removed in the
 * same update. */
int ubi_vol_rename(struct ubi_device *dev, const struct ubi_rename_req *reqs, size_t n);

int ubi_vol_info(const struct ubi_device *dev, uint32_t vol_id, struct ubi_vol_info *out);
/* Fill ids (up to max) with the existing volume IDs in ascending order;
 * returns how many volumes exist (may be > max). */
int ubi_vol_list(const struct ubi_device *dev, uint32_t *ids, size_t max);
/* Volume ID for a name, or -ENOENT. */
int ubi_vol_find(const struct ubi_device *dev, const char *name);

/* Volume update (ubiupdatevol): start sets upd_marker in the vtbl and
 * unmaps the volume; write appends data (any length); when `bytes` were
 * written the last LEB is flushed and the marker cleared. bytes = 0 just
 * wipes the volume. Static volumes get data_size/used_ebs/data_crc. */
int ubi_vol_update_start(struct ubi_device *dev, uint32_t vol_id, uint64_t bytes);
int ubi_vol_update_write(struct ubi_device *dev, uint32_t vol_id, const void *buf, size_t len);
/* 1 if an update of vol_id is in progress (started, not all bytes written). */
int ubi_vol_update_pending(const struct ubi_device *dev, uint32_t vol_id);
/* Whole update in one call. */
int ubi_vol_update(struct ubi_device *dev, uint32_t vol_id, const void *buf, uint64_t len);
/* Static volume: read every LEB and check data_size/data_crc (0 good,
 * -EBADMSG corrupted, and the volume is marked so). Dynamic: 0. */
int ubi_vol_check(struct ubi_device *dev, uint32_t vol_id);

/* ---- LEB I/O (EBA) ----
 * Offsets/lengths of writes must be multiples of min_io_size (spec); reads
 * are any range inside the usable LEB. Unmapped LEBs read as 0xFF. Static
 * volumes: reads limited to the data (used_ebs, last_eb_bytes), CRC-checked;
 * LEB writes are refused (-EROFS): use the volume update. */
int ubi_leb_read(struct ubi_device *dev, uint32_t vol_id, uint32_t lnum, uint32_t off, void *buf, size_t len);
int ubi_leb_write(struct ubi_device *dev, uint32_t vol_id, uint32_t lnum, uint32_t off, const void *buf,
		  size_t len);
/* Atomic replace (new PEB with copy_flag=1, data_size, data_crc; then the
 * old PEB is released). len = 0 means unmap. */
int ubi_leb_change(struct ubi_device *dev, uint32_t vol_id, uint32_t lnum, const void *buf, size_t len);
int ubi_leb_unmap(struct ubi_device *dev, uint32_t vol_id, uint32_t lnum);
/* Map an unmapped LEB to an empty PEB (VID header only); -EBADMSG if mapped. */
int ubi_leb_map(struct ubi_device *dev, uint32_t vol_id, uint32_t lnum);
/* 1 mapped, 0 not, <0 error. */
int ubi_leb_is_mapped(const struct ubi_device *dev, uint32_t vol_id, uint32_t lnum);

/* Fill the vtable UBIFS uses (ubi_vol_io.h) for one volume. The vtable
 * stays valid until the volume is removed or the device detached. */
int ubi_volume_io(struct ubi_device *dev, uint32_t vol_id, struct ubi_vol_io *out);

/* ---- background work ----
 * One unit: erase a queued PEB (+ new EC header), or scrub one PEB, or one
 * wear-leveling move. Returns 1 if it did work, 0 if idle, <0 on error. */
int ubi_background_step(struct ubi_device *dev);
/* Run background work until idle. */
int ubi_flush_background(struct ubi_device *dev);
/* Finish pending erasures and sync the flash. */
int ubi_sync(struct ubi_device *dev);

#endif
