/* ubi_priv — internal structures of the UBI layer shared by its files:
 * the device (geometry, accounting, per-PEB state), volumes and their EBA
 * tables, and the internal functions each file exports to the others.
 * Not part of the public API (ubi.h). */
#ifndef UBIKIT_UBI_PRIV_H
#define UBIKIT_UBI_PRIV_H
#include <stdbool.h>
#include <stdint.h>

#include "ubi/ubi.h"
#include "util/util_err.h"

#define UBI_IO_RETRIES 3
#define UBI_PROT_LEN 10          /* erasures a fresh PEB is protected from WL (Linux UBI_PROT_QUEUE_LEN) */
#define UBI_WL_RESERVED_PEBS 1
#define UBI_EBA_RESERVED_PEBS 1
#define UBI_LAYOUT_SLOT UBI_MAX_VOLUMES /* vols[] index of the layout volume */

/* What a PEB currently is. */
enum ubi_peb_state {
	PEB_BAD = 0,   /* marked bad (factory or grown) */
	PEB_FREE,      /* EC header written, rest erased */
	PEB_USED,      /* holds a LEB */
	PEB_ERASE,     /* waiting to be erased (+ EC header) */
	PEB_CORRUPT,   /* corrupted VID header with data: preserved, never touched */
	PEB_ALIEN,     /* internal volume we do not know (compat PRESERVE/RO) */
	PEB_ERRONEOUS, /* unreadable data found by a move: left alone */
};

struct ubi_peb {
	uint32_t ec;
	uint8_t state;
	bool scrub;     /* bit flips seen: move the data and erase */
	bool torture;   /* erase with torture test (after a write error) */
	uint32_t vol_slot, lnum; /* for PEB_USED */
	uint64_t prot_until;     /* PEB_USED: not moved by WL before dev->erase_ops reaches this */
	int64_t erase_order;     /* PEB_ERASE: lower goes first */
	bool leb_known;          /* PEB_ERASE: vol_slot/lnum say which LEB it held (queued since attach) */
};

struct ubi_device;

/* Context for the ubi_vol_io vtable of one volume. */
struct ubi_vol_ctx {
	struct ubi_device *dev;
	uint32_t vol_id;
};

struct ubi_volume {
	uint32_t vol_id;  /* user ID, or UBI_LAYOUT_VOLUME_ID */
	struct ubi_vtbl_record rec;
	uint32_t usable;  /* leb_size - data_pad */
	int32_t *eba;     /* reserved_pebs entries, -1 = unmapped */
	uint32_t used_ebs, last_eb_bytes;
	uint64_t used_bytes;
	bool corrupted;
	/* volume update in progress */
	bool updating;
	uint64_t upd_bytes, upd_received;
	uint32_t upd_ebs;
	uint8_t *upd_buf; /* one LEB */
	uint32_t upd_fill;
	struct ubi_vol_ctx ctx;
};

struct ubi_device {
	struct flash_dev *flash;
	struct util_err err;
	struct ubi_offsets off;
	uint32_t peb_size, peb_count, leb_size, min_io;
	uint32_t ec_hdr_alsize, vid_hdr_alsize;
	uint32_t image_seq;
	uint64_t sqnum; /* next sqnum to hand out */
	bool ro;
	char ro_reason[128];
	bool no_write;  /* read_only attach: never write, even for repairs */
	bool bad_allowed; /* NAND: PEBs may go bad */
	bool nor;
	bool formatted;
	uint32_t wl_threshold;
	int beb_per1024;
	bool erase_at_unmap; /* ubi_attach_opts */

	struct ubi_peb *peb;
	uint32_t good_peb_count, bad_peb_count, corr_peb_count, alien_peb_count;
	uint32_t bad_peb_limit, beb_rsvd_pebs;
	int64_t rsvd_pebs, avail_pebs;
	uint32_t erroneous_count, max_erroneous;
	uint32_t mean_ec;
	uint64_t erase_ops;   /* erasures done since attach (protection clock) */
	bool bg_move_turn;    /* background: next step tries a WL/scrub move first */
	int64_t erase_order_next; /* tail of the erase queue */
	int64_t erase_order_head; /* head (torn copies go first) */

	uint32_t vtbl_slots, vtbl_size;
	uint8_t *vtbl; /* vtbl_size bytes, as on flash */
	struct ubi_volume *vols[UBI_MAX_VOLUMES + 1]; /* + layout */
	int autoresize_slot;

	uint8_t *peb_buf;  /* leb_size scratch */
	uint8_t *peb_buf2; /* leb_size scratch (read-back checks) */
	uint8_t *hdr_buf;  /* one header I/O unit pair scratch */
	struct ubi_stats stats;
};

/* Convenience for error messages. */
int ubi_err(struct ubi_device *dev, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Why a flash operation failed, for messages: the backend's sentence if it
 * keeps one (the sim names file, PEB and cause), else strerror(-err). */
const char *ubi_flash_why(struct ubi_device *dev, int err);
void ubi_ro_mode(struct ubi_device *dev, const char *why);

/* ---- ubi_io.c: PEB-level I/O ---- */
enum ubi_io_res {
	UBI_IO_OK = 0,
	UBI_IO_BITFLIPS = 1,
	UBI_IO_FF = 2,
	UBI_IO_FF_BITFLIPS = 3,
	UBI_IO_BAD_HDR = 4,
	UBI_IO_BAD_HDR_EBADMSG = 5,
};
/* Read data area / raw PEB bytes: 0, -EUCLEAN (corrected), -EBADMSG, <0. */
int ubi_io_read(struct ubi_device *dev, uint32_t pnum, uint32_t off, void *buf, size_t len);
int ubi_io_read_data(struct ubi_device *dev, uint32_t pnum, uint32_t off, void *buf, size_t len);
int ubi_io_write(struct ubi_device *dev, uint32_t pnum, uint32_t off, const void *buf, size_t len);
int ubi_io_write_data(struct ubi_device *dev, uint32_t pnum, uint32_t off, const void *buf, size_t len);
/* Header reads: enum ubi_io_res (>= 0) or negative errno. */
int ubi_io_read_ec_hdr(struct ubi_device *dev, uint32_t pnum, struct ubi_ec_hdr *h);
int ubi_io_read_vid_hdr(struct ubi_device *dev, uint32_t pnum, struct ubi_vid_hdr *h);
int ubi_io_write_ec_hdr(struct ubi_device *dev, uint32_t pnum, uint64_t ec);
int ubi_io_write_vid_hdr(struct ubi_device *dev, uint32_t pnum, const struct ubi_vid_hdr *h);
/* Erase (torture first if asked): number of erasures done (>0) or <0. */
int ubi_io_sync_erase(struct ubi_device *dev, uint32_t pnum, bool torture);
int ubi_io_mark_bad(struct ubi_device *dev, uint32_t pnum);
bool ubi_all_ff(const void *buf, size_t len);
/* Length of buf without trailing 0xFF, rounded up to min I/O. */
uint32_t ubi_calc_data_len(const struct ubi_device *dev, const uint8_t *buf, uint32_t len);

/* ---- ubi_wl.c: PEB pool, erasure, wear leveling, scrubbing ---- */
/* Take a free PEB for new data (erasing queued PEBs if needed). */
int ubi_wl_get_peb(struct ubi_device *dev, uint32_t *pnum);
/* Release a PEB (it is queued for erasure). */
void ubi_wl_put_peb(struct ubi_device *dev, uint32_t pnum, bool torture);
void ubi_wl_put_peb_head(struct ubi_device *dev, uint32_t pnum);
/* One unit of background work: 1 done, 0 idle, <0 error. */
int ubi_wl_background(struct ubi_device *dev);
/* Ask for a PEB to be scrubbed (after corrected bit flips). */
void ubi_wl_scrub_peb(struct ubi_device *dev, uint32_t pnum);
/* Erase every queued PEB now. */
int ubi_wl_flush_erase(struct ubi_device *dev);
int ubi_wl_do_one_erase(struct ubi_device *dev);
uint32_t ubi_wl_count(const struct ubi_device *dev, enum ubi_peb_state st);

/* ---- ubi_eba.c: LEB -> PEB ---- */
struct ubi_volume *ubi_vol_by_id(const struct ubi_device *dev, uint32_t vol_id);
int ubi_eba_read(struct ubi_device *dev, struct ubi_volume *vol, uint32_t lnum, uint32_t off, void *buf,
		 size_t len, bool check);
int ubi_eba_write(struct ubi_device *dev, struct ubi_volume *vol, uint32_t lnum, uint32_t off,
		  const void *buf, size_t len);
int ubi_eba_write_st(struct ubi_device *dev, struct ubi_volume *vol, uint32_t lnum, const void *buf,
		     uint32_t data_size, uint32_t used_ebs);
int ubi_eba_change(struct ubi_device *dev, struct ubi_volume *vol, uint32_t lnum, const void *buf, size_t len);
int ubi_eba_unmap(struct ubi_device *dev, struct ubi_volume *vol, uint32_t lnum);
/* Move the LEB in PEB `from` to free PEB `to` (WL / scrub). Returns 0,
 * or one of the MOVE_* codes (> 0), or <0. */
enum { MOVE_CANCEL = 1, MOVE_SOURCE_RD_ERR, MOVE_TARGET_WR_ERR, MOVE_TARGET_RD_ERR };
int ubi_eba_copy_leb(struct ubi_device *dev, uint32_t from, uint32_t to);
void ubi_vid_hdr_for(const struct ubi_volume *vol, uint32_t lnum, struct ubi_vid_hdr *h);

/* ---- ubi_vtbl.c ---- */
uint32_t ubi_vtbl_size(const struct ubi_device *dev);
/* Check a table copy: 0 good, 1 corrupted (message in dev->err), <0 fatal. */
int ubi_vtbl_check(struct ubi_device *dev, const uint8_t *vtbl, int copy);
/* Write the in-memory table to both layout LEBs (atomic changes). */
int ubi_vtbl_write(struct ubi_device *dev);
/* Update record of slot from vol (NULL = empty record) in dev->vtbl only. */
void ubi_vtbl_set_record(struct ubi_device *dev, uint32_t slot, const struct ubi_vtbl_record *rec);

/* ---- ubi_vol.c ---- */
void ubi_vol_free(struct ubi_volume *vol);
struct ubi_volume *ubi_vol_alloc(struct ubi_device *dev, uint32_t vol_id, const struct ubi_vtbl_record *rec);

#endif
