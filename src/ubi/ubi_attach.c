/* ubi_attach — attaching a flash by scanning every PEB (Linux attach.c,
 * vtbl.c, build.c without fastmap): classification of each PEB from its EC
 * and VID headers, image_seq checks, choice between two PEBs holding the
 * same LEB (sqnum, copy_flag, data CRC), mean EC for lost counters, the
 * max_corr rule, blank-flash detection and formatting, the volume table
 * from either copy (repairing the other), consistency of the scan with the
 * table, PEB accounting and reserves, and autoresize. Also detach. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ubi/ubi_priv.h"
#include "util/util_crc.h"
#include "util/util_prng.h"

enum scan_kind { SC_BAD, SC_ERASE, SC_FREE, SC_USED, SC_CORRUPT, SC_ALIEN };

struct scan_peb {
	uint8_t kind;
	bool ec_known;
	bool scrub;
	bool erase_head;
	bool fastmap; /* a fastmap PEB: must be gone before we write anything */
	uint32_t ec;
	struct ubi_vid_hdr vid;
};

struct scan_info {
	struct scan_peb *p;
	uint32_t empty_count, maybe_bad, bad_count, alien_count, corr_count;
	uint64_t ec_sum, ec_count;
	uint64_t max_sqnum;
	bool have_sqnum;
	uint32_t fastmap_count;
	bool is_empty;
};

void ubi_attach_opts_default(struct ubi_attach_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->wl_threshold = UBI_DEFAULT_WL_THRESHOLD;
	o->beb_per1024 = UBI_DEFAULT_BEB_PER1024;
	o->autoformat = true;
	/* erase_at_unmap stays off: it evens wear under churn (W5: 2.0x the
	 * mean instead of 2.46x) but erases a GC'd LEB while the committed
	 * index may still name nodes in it, and a cut before the next commit
	 * then leaves a replay that reads them from erased flash (torture
	 * powercut-recovery -d nor -s 3, docs/ubi.md) */
	o->erase_at_unmap = false;
}

const char *ubi_errmsg(const struct ubi_device *dev)
{
	return dev ? dev->err.msg : "no device";
}

/* VID header corrupted, EC header fine: a power-cut victim if the data area
 * is all 0xFF or unreadable, otherwise preserved as corrupted (Linux
 * check_corruption). 0 = power cut, 1 = corrupted, <0 error. */
static int check_corruption(struct ubi_device *dev, uint32_t pnum)
{
	memset(dev->peb_buf, 0, dev->leb_size);
	int err = ubi_io_read_data(dev, pnum, 0, dev->peb_buf, dev->leb_size);
	if (err == -EUCLEAN || err == -EBADMSG)
		return 0;
	if (err)
		return err;
	return ubi_all_ff(dev->peb_buf, dev->leb_size) ? 0 : 1;
}

static int scan_peb(struct ubi_device *dev, struct scan_info *ai, uint32_t pnum)
{
	struct scan_peb *sp = &ai->p[pnum];
	int bad = flash_is_bad(dev->flash, pnum);
	if (bad < 0)
		return ubi_err(dev, bad, "PEB %u: bad-block check failed: %s", pnum, ubi_flash_why(dev, bad));
	if (bad) {
		sp->kind = SC_BAD;
		ai->bad_count++;
		return 0;
	}
	struct ubi_ec_hdr ech;
	int r = ubi_io_read_ec_hdr(dev, pnum, &ech);
	if (r < 0)
		return r;
	int ec_err = 0;
	bool bitflips = false;
	switch (r) {
	case UBI_IO_OK:
		break;
	case UBI_IO_BITFLIPS:
		bitflips = true;
		break;
	case UBI_IO_FF:
	case UBI_IO_FF_BITFLIPS:
		ai->empty_count++;
		sp->kind = SC_ERASE;
		sp->erase_head = r == UBI_IO_FF_BITFLIPS;
		return 0;
	default: /* BAD_HDR, BAD_HDR_EBADMSG: look at the VID header too */
		ec_err = r;
		bitflips = true;
		break;
	}
	if (!ec_err) {
		if (ech.version != UBI_VERSION)
			return ubi_err(dev, -EINVAL, "PEB %u:4: EC header has UBI version %u, expected %u", pnum,
				       ech.version, UBI_VERSION);
		if (ech.ec > UBI_MAX_ERASECOUNTER)
			return ubi_err(dev, -EINVAL, "PEB %u:8: erase counter %llu exceeds the maximum %u", pnum,
				       (unsigned long long)ech.ec, UBI_MAX_ERASECOUNTER);
		if (ech.vid_hdr_offset != dev->off.vid_hdr_offset)
			return ubi_err(dev, -EINVAL,
				       "PEB %u:16: EC header gives VID header offset %u, expected %u for this "
				       "geometry",
				       pnum, ech.vid_hdr_offset, dev->off.vid_hdr_offset);
		if (ech.data_offset != dev->off.data_offset)
			return ubi_err(dev, -EINVAL,
				       "PEB %u:20: EC header gives data offset %u, expected %u for this geometry",
				       pnum, ech.data_offset, dev->off.data_offset);
		if (!dev->image_seq)
			dev->image_seq = ech.image_seq;
		if (ech.image_seq && ech.image_seq != dev->image_seq)
			return ubi_err(dev, -EINVAL, "PEB %u:24: bad image sequence number 0x%08x, expected 0x%08x",
				       pnum, ech.image_seq, dev->image_seq);
		sp->ec = (uint32_t)ech.ec;
		sp->ec_known = true;
	}

	struct ubi_vid_hdr *vh = &sp->vid;
	r = ubi_io_read_vid_hdr(dev, pnum, vh);
	if (r < 0)
		return r;
	switch (r) {
	case UBI_IO_OK:
		break;
	case UBI_IO_BITFLIPS:
		bitflips = true;
		break;
	case UBI_IO_BAD_HDR_EBADMSG:
	case UBI_IO_BAD_HDR:
		if (r == UBI_IO_BAD_HDR_EBADMSG && ec_err == UBI_IO_BAD_HDR_EBADMSG)
			ai->maybe_bad++;
		if (ec_err) {
			/* both headers bad: garbage of a cut erase, or NOR erase preparation */
			sp->kind = SC_ERASE;
			sp->erase_head = true;
		} else {
			int c = check_corruption(dev, pnum);
			if (c < 0)
				return c;
			if (c) {
				sp->kind = SC_CORRUPT;
				ai->corr_count++;
				snprintf(dev->err.msg, sizeof(dev->err.msg),
					 "PEB %u:%u: corrupted VID header but data area not all 0xFF (preserved)", pnum,
					 dev->off.vid_hdr_offset);
			} else {
				sp->kind = SC_ERASE;
				sp->erase_head = true;
			}
		}
		goto adjust_mean_ec;
	case UBI_IO_FF_BITFLIPS:
		sp->kind = SC_ERASE;
		sp->erase_head = true;
		goto adjust_mean_ec;
	case UBI_IO_FF:
		if (ec_err || bitflips) {
			sp->kind = SC_ERASE;
			sp->erase_head = true;
		} else {
			sp->kind = SC_FREE;
		}
		goto adjust_mean_ec;
	}

	const char *why = ubi_vid_hdr_check(vh, dev->leb_size);
	if (why)
		return ubi_err(dev, -EINVAL, "PEB %u:%u: bad VID header: %s (vol_id %u, lnum %u)", pnum,
			       dev->off.vid_hdr_offset, why, vh->vol_id, vh->lnum);
	if (!ai->have_sqnum || vh->sqnum > ai->max_sqnum)
		ai->max_sqnum = vh->sqnum;
	ai->have_sqnum = true;
	if (vh->vol_id >= UBI_MAX_VOLUMES && vh->vol_id != UBI_LAYOUT_VOLUME_ID) {
		switch (vh->compat) {
		case UBI_COMPAT_DELETE: /* fastmap and friends: erase */
			sp->kind = SC_ERASE;
			sp->erase_head = true;
			sp->fastmap = vh->vol_id == UBI_FM_SB_VOLUME_ID || vh->vol_id == UBI_FM_DATA_VOLUME_ID;
			ai->fastmap_count += sp->fastmap;
			goto adjust_mean_ec;
		case UBI_COMPAT_RO:
			ubi_ro_mode(dev, "read-only compatible internal volume found");
			sp->kind = SC_ALIEN;
			ai->alien_count++;
			goto adjust_mean_ec;
		case UBI_COMPAT_PRESERVE:
			sp->kind = SC_ALIEN;
			ai->alien_count++;
			goto adjust_mean_ec;
		default:
			return ubi_err(dev, -EINVAL, "PEB %u:%u: incompatible internal volume 0x%08x:%u found", pnum,
				       dev->off.vid_hdr_offset, vh->vol_id, vh->lnum);
		}
	}
	if (vh->vol_id == UBI_LAYOUT_VOLUME_ID && vh->lnum >= UBI_LAYOUT_VOLUME_EBS)
		return ubi_err(dev, -EINVAL, "PEB %u:%u: layout volume LEB %u (it has only %u LEBs)", pnum,
			       dev->off.vid_hdr_offset, vh->lnum, UBI_LAYOUT_VOLUME_EBS);
	sp->kind = SC_USED;
	sp->scrub = bitflips;

adjust_mean_ec:
	if (!ec_err) {
		ai->ec_sum += sp->ec;
		ai->ec_count++;
	}
	return 0;
}

static int cmp_used(const void *a, const void *b, void *ctx)
{
	const struct scan_info *ai = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	const struct ubi_vid_hdr *hx = &ai->p[x].vid, *hy = &ai->p[y].vid;
	if (hx->vol_id != hy->vol_id)
		return hx->vol_id < hy->vol_id ? -1 : 1;
	if (hx->lnum != hy->lnum)
		return hx->lnum < hy->lnum ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* Two PEBs claim one LEB: which one stays (Linux ubi_compare_lebs)?
 * Returns the winner (a or b) in *keep, or <0. */
static int compare_lebs(struct ubi_device *dev, struct scan_info *ai, uint32_t a, uint32_t b, uint32_t *keep)
{
	struct scan_peb *pa = &ai->p[a], *pb = &ai->p[b];
	if (pa->vid.sqnum == pb->vid.sqnum) {
		if (pa->vid.sqnum)
			return ubi_err(dev, -EINVAL, "PEB %u and PEB %u both hold LEB %u:%u with sequence number %llu",
				       a, b, pa->vid.vol_id, pa->vid.lnum, (unsigned long long)pa->vid.sqnum);
		return ubi_err(dev, -EINVAL,
			       "PEB %u and PEB %u both hold LEB %u:%u and sqnum is 0: unsupported old UBI format",
			       a, b, pa->vid.vol_id, pa->vid.lnum);
	}
	bool b_newer = pb->vid.sqnum > pa->vid.sqnum;
	uint32_t newer = b_newer ? b : a, older = b_newer ? a : b;
	struct scan_peb *pn = &ai->p[newer];
	if (!pn->vid.copy_flag) {
		*keep = newer;
		ai->p[older].erase_head = false;
		return 0;
	}
	uint32_t len = pn->vid.data_size;
	int err = ubi_io_read_data(dev, newer, 0, dev->peb_buf, len);
	if (err && err != -EUCLEAN && err != -EBADMSG)
		return err;
	uint32_t crc = util_crc32(UTIL_CRC32_INIT, dev->peb_buf, len);
	if (crc != pn->vid.data_crc) {
		/* torn copy: keep the older one, erase the copy first */
		*keep = older;
		pn->erase_head = true;
		return 0;
	}
	*keep = newer;
	if (err)
		pn->scrub = true;
	ai->p[older].erase_head = false;
	return 0;
}

/* Per-volume summary of the scan. */
struct scan_vol {
	bool present;
	uint32_t leb_count, highest_lnum, used_ebs, data_pad, last_data_size;
	uint8_t vol_type;
	uint32_t first_pnum;
};

static uint32_t slot_of_id(uint32_t vol_id)
{
	return vol_id == UBI_LAYOUT_VOLUME_ID ? UBI_LAYOUT_SLOT : vol_id;
}

/* Resolve duplicates; afterwards SC_USED PEBs are the winners. */
static int resolve_used(struct ubi_device *dev, struct scan_info *ai, struct scan_vol *sv)
{
	uint32_t n = 0;
	uint32_t *list = malloc(sizeof(uint32_t) * (dev->peb_count ? dev->peb_count : 1));
	if (!list)
		return -ENOMEM;
	for (uint32_t i = 0; i < dev->peb_count; i++)
		if (ai->p[i].kind == SC_USED)
			list[n++] = i;
	qsort_r(list, n, sizeof(uint32_t), cmp_used, ai);
	int err = 0;
	for (uint32_t i = 0; i < n;) {
		uint32_t keep = list[i], j = i + 1;
		const struct ubi_vid_hdr *h0 = &ai->p[keep].vid;
		while (j < n && ai->p[list[j]].vid.vol_id == h0->vol_id && ai->p[list[j]].vid.lnum == h0->lnum) {
			uint32_t w = keep;
			err = compare_lebs(dev, ai, keep, list[j], &w);
			if (err)
				goto out;
			uint32_t loser = w == keep ? list[j] : keep;
			ai->p[loser].kind = SC_ERASE;
			keep = w;
			h0 = &ai->p[keep].vid;
			j++;
		}
		const struct ubi_vid_hdr *h = &ai->p[keep].vid;
		struct scan_vol *v = &sv[slot_of_id(h->vol_id)];
		if (!v->present) {
			v->present = true;
			v->vol_type = h->vol_type;
			v->used_ebs = h->used_ebs;
			v->data_pad = h->data_pad;
			v->first_pnum = keep;
			v->highest_lnum = h->lnum;
			v->last_data_size = h->data_size;
		} else if (v->vol_type != h->vol_type || v->used_ebs != h->used_ebs || v->data_pad != h->data_pad) {
			err = ubi_err(dev, -EINVAL,
				      "PEB %u:%u: inconsistent VID header for volume %u (type %u used_ebs %u data_pad "
				      "%u; PEB %u has %u/%u/%u)",
				      keep, dev->off.vid_hdr_offset, h->vol_id, h->vol_type, h->used_ebs, h->data_pad,
				      v->first_pnum, v->vol_type, v->used_ebs, v->data_pad);
			goto out;
		}
		if (h->lnum >= v->highest_lnum) {
			v->highest_lnum = h->lnum;
			v->last_data_size = h->data_size;
		}
		v->leb_count++;
		i = j;
	}
out:
	free(list);
	return err;
}

void ubi_vol_free(struct ubi_volume *vol)
{
	if (!vol)
		return;
	free(vol->eba);
	free(vol->upd_buf);
	free(vol);
}

struct ubi_volume *ubi_vol_alloc(struct ubi_device *dev, uint32_t vol_id, const struct ubi_vtbl_record *rec)
{
	struct ubi_volume *vol = calloc(1, sizeof(*vol));
	if (!vol)
		return NULL;
	vol->vol_id = vol_id;
	vol->rec = *rec;
	vol->usable = dev->leb_size - rec->data_pad;
	vol->eba = malloc(sizeof(int32_t) * (rec->reserved_pebs ? rec->reserved_pebs : 1));
	if (!vol->eba) {
		free(vol);
		return NULL;
	}
	for (uint32_t i = 0; i < rec->reserved_pebs; i++)
		vol->eba[i] = -1;
	vol->ctx.dev = dev;
	vol->ctx.vol_id = vol_id;
	if (rec->vol_type == UBI_VID_DYNAMIC) {
		vol->used_ebs = rec->reserved_pebs;
		vol->last_eb_bytes = vol->usable;
		vol->used_bytes = (uint64_t)vol->used_ebs * vol->usable;
	}
	return vol;
}

static void free_device(struct ubi_device *dev)
{
	if (!dev)
		return;
	for (int i = 0; i <= UBI_MAX_VOLUMES; i++)
		ubi_vol_free(dev->vols[i]);
	free(dev->peb);
	free(dev->vtbl);
	free(dev->peb_buf);
	free(dev->peb_buf2);
	free(dev->hdr_buf);
	free(dev);
}

void ubi_detach(struct ubi_device *dev)
{
	if (!dev)
		return;
	if (!dev->no_write && !dev->ro) {
		/* Unmapped LEBs' old PEBs still carry their VID headers: erase
		 * them so a clean detach never brings unmapped LEBs back. */
		ubi_wl_flush_erase(dev);
		flash_sync(dev->flash);
	}
	free_device(dev);
}

static uint32_t align_up(uint32_t v, uint32_t a)
{
	return (v + a - 1) / a * a;
}

static int setup_geometry(struct ubi_device *dev, const struct ubi_attach_opts *o)
{
	const struct flash_geometry *g = &dev->flash->geo;
	if (!g->peb_count || !g->peb_size || !g->page_size)
		return ubi_err(dev, -EINVAL, "flash geometry: %u PEBs of %u bytes, page %u: not usable", g->peb_count,
			       g->peb_size, g->page_size);
	uint32_t sub = g->subpage_size ? g->subpage_size : g->page_size;
	int err = ubi_calc_offsets(g->peb_size, g->page_size, sub, o->vid_hdr_offset, &dev->off);
	if (err)
		return ubi_err(dev, err,
			       "geometry PEB %u, min I/O %u, sub-page %u, VID header offset %u: offsets break UBI's "
			       "rules",
			       g->peb_size, g->page_size, sub, o->vid_hdr_offset);
	dev->peb_size = g->peb_size;
	dev->peb_count = g->peb_count;
	dev->min_io = g->page_size;
	dev->leb_size = dev->off.leb_size;
	dev->ec_hdr_alsize = align_up(UBI_HDR_SIZE, sub);
	dev->vid_hdr_alsize = align_up(dev->off.vid_hdr_shift + UBI_HDR_SIZE, sub);
	dev->nor = g->type == FLASH_NOR;
	dev->bad_allowed = g->type == FLASH_NAND;
	dev->vtbl_slots = ubi_vtbl_slots(dev->leb_size);
	if (dev->vtbl_slots == 0)
		return ubi_err(dev, -EINVAL, "LEB size %u too small for a volume table", dev->leb_size);
	dev->vtbl_size = ubi_vtbl_size(dev);
	if (dev->vtbl_size > dev->leb_size)
		dev->vtbl_size = dev->vtbl_slots * UBI_VTBL_RECORD_SIZE;
	uint32_t hb = dev->ec_hdr_alsize > dev->vid_hdr_alsize ? dev->ec_hdr_alsize : dev->vid_hdr_alsize;
	dev->peb = calloc(dev->peb_count, sizeof(*dev->peb));
	dev->peb_buf = malloc(dev->leb_size);
	dev->peb_buf2 = malloc(dev->leb_size);
	dev->hdr_buf = malloc(hb);
	dev->vtbl = malloc(dev->vtbl_size);
	if (!dev->peb || !dev->peb_buf || !dev->peb_buf2 || !dev->hdr_buf || !dev->vtbl)
		return ubi_err(dev, -ENOMEM, "out of memory for %u PEBs", dev->peb_count);
	if (dev->off.vid_hdr_offset + UBI_HDR_SIZE <= sub)
		ubi_ro_mode(dev, "EC and VID headers share one I/O unit");
	if (dev->flash->read_only)
		ubi_ro_mode(dev, "flash device is read-only");
	return 0;
}

static void empty_vtbl(struct ubi_device *dev)
{
	memset(dev->vtbl, 0, dev->vtbl_size);
	for (uint32_t i = 0; i < dev->vtbl_slots; i++)
		ubi_vtbl_set_record(dev, i, NULL);
}

/* Read the layout volume copies; choose (spec §9.2). *restore = copy to
 * rewrite (-1 none). */
static int read_vtbl(struct ubi_device *dev, struct scan_info *ai, const int64_t lpeb[2], int *restore,
		     bool *both_bad)
{
	*both_bad = false;
	uint8_t *leb[2] = {NULL, NULL};
	int corrupted[2] = {1, 1};
	int err = 0;
	char msg0[UTIL_ERR_MSG_MAX] = "";
	*restore = -1;
	for (int i = 0; i < 2; i++) {
		if (lpeb[i] < 0)
			continue;
		leb[i] = malloc(dev->vtbl_size);
		if (!leb[i]) {
			err = -ENOMEM;
			goto out;
		}
		int r = ubi_io_read_data(dev, (uint32_t)lpeb[i], 0, leb[i], dev->vtbl_size);
		if (r == -EUCLEAN || r == -EBADMSG)
			ai->p[lpeb[i]].scrub = true;
		else if (r) {
			err = r;
			goto out;
		}
	}
	if (leb[0]) {
		corrupted[0] = ubi_vtbl_check(dev, leb[0], 0);
		if (corrupted[0] < 0) {
			err = corrupted[0];
			goto out;
		}
		if (corrupted[0])
			snprintf(msg0, sizeof(msg0), "%s", dev->err.msg);
	} else {
		snprintf(msg0, sizeof(msg0), "volume table copy 0 (layout LEB 0) not found");
	}
	if (!corrupted[0]) {
		if (!leb[1] || memcmp(leb[0], leb[1], dev->vtbl_size))
			*restore = 1;
		memcpy(dev->vtbl, leb[0], dev->vtbl_size);
		goto out;
	}
	if (leb[1]) {
		corrupted[1] = ubi_vtbl_check(dev, leb[1], 1);
		if (corrupted[1] < 0) {
			err = corrupted[1];
			goto out;
		}
	}
	if (corrupted[1]) {
		char msg1[UTIL_ERR_MSG_MAX];
		snprintf(msg1, sizeof(msg1), "%s", leb[1] ? dev->err.msg : "copy 1 (layout LEB 1) not found");
		err = ubi_err(dev, -EINVAL, "both volume table copies are corrupted: %.200s; %.200s", msg0, msg1);
		*both_bad = true;
		goto out;
	}
	*restore = 0;
	memcpy(dev->vtbl, leb[1], dev->vtbl_size);
out:
	free(leb[0]);
	free(leb[1]);
	return err;
}

static int init_volumes(struct ubi_device *dev, struct scan_info *ai, struct scan_vol *sv)
{
	struct ubi_vtbl_record lrec = {
		.reserved_pebs = UBI_LAYOUT_VOLUME_EBS,
		.alignment = 1,
		.vol_type = UBI_VID_DYNAMIC,
		.name_len = sizeof(UBI_LAYOUT_VOLUME_NAME) - 1,
		.name = UBI_LAYOUT_VOLUME_NAME,
	};
	dev->vols[UBI_LAYOUT_SLOT] = ubi_vol_alloc(dev, UBI_LAYOUT_VOLUME_ID, &lrec);
	if (!dev->vols[UBI_LAYOUT_SLOT])
		return -ENOMEM;
	dev->autoresize_slot = -1;
	dev->avail_pebs = (int64_t)dev->good_peb_count - dev->corr_peb_count;
	dev->rsvd_pebs = 0;
	for (uint32_t i = 0; i <= UBI_MAX_VOLUMES; i++) {
		struct ubi_vtbl_record rec;
		uint32_t vol_id = i;
		if (i == UBI_LAYOUT_SLOT) {
			rec = lrec;
			vol_id = UBI_LAYOUT_VOLUME_ID;
		} else {
			if (i >= dev->vtbl_slots)
				continue;
			if (ubi_vtbl_record_unpack(dev->vtbl + i * UBI_VTBL_RECORD_SIZE, dev->leb_size, dev->min_io,
						   &rec))
				return ubi_err(dev, -EINVAL, "volume table record %u invalid", i);
			if (!rec.reserved_pebs)
				continue;
			dev->vols[i] = ubi_vol_alloc(dev, i, &rec);
			if (!dev->vols[i])
				return -ENOMEM;
			if (rec.flags & UBI_VTBL_AUTORESIZE_FLG) {
				if (dev->autoresize_slot >= 0)
					return ubi_err(dev, -EINVAL, "more than one auto-resize volume (%d and %u)",
						       dev->autoresize_slot, i);
				dev->autoresize_slot = (int)i;
			}
		}
		struct ubi_volume *vol = dev->vols[i];
		vol->rec.upd_marker = rec.upd_marker;
		struct scan_vol *v = &sv[i];
		if (rec.vol_type == UBI_VID_STATIC && v->present && v->leb_count) {
			if (v->leb_count != v->used_ebs) {
				vol->corrupted = true; /* static volume misses LEBs */
			} else {
				vol->used_ebs = v->used_ebs;
				vol->last_eb_bytes = v->last_data_size;
				vol->used_bytes = (uint64_t)(v->used_ebs - 1) * vol->usable + v->last_data_size;
			}
		}
		/* Reading needs no spare PEBs: a read-only attach of a worn-out
		 * device still gives its data back. */
		if ((int64_t)rec.reserved_pebs > dev->avail_pebs && !dev->no_write && !dev->ro)
			return ubi_err(dev, -ENOSPC, "volume %u: not enough PEBs, required %u, available %lld%s", vol_id,
				       rec.reserved_pebs, (long long)dev->avail_pebs,
				       dev->corr_peb_count ? " (some PEBs are corrupted)" : "");
		dev->avail_pebs -= rec.reserved_pebs;
		dev->rsvd_pebs += rec.reserved_pebs;
		(void)ai;
	}
	return 0;
}

/* Check the scan against the table; move LEB PEBs into the EBA tables. */
static int check_and_map(struct ubi_device *dev, struct scan_info *ai, struct scan_vol *sv)
{
	for (uint32_t s = 0; s <= UBI_MAX_VOLUMES; s++) {
		struct scan_vol *v = &sv[s];
		if (!v->present)
			continue;
		struct ubi_volume *vol = dev->vols[s];
		if (s != UBI_LAYOUT_SLOT && s >= dev->vtbl_slots)
			return ubi_err(dev, -EINVAL, "PEB %u: volume ID %u found, but the table has only %u slots",
				       v->first_pnum, s, dev->vtbl_slots);
		if (!vol)
			continue; /* no record: an interrupted removal, its PEBs get erased */
		if (v->vol_type != vol->rec.vol_type || v->data_pad != vol->rec.data_pad ||
		    v->used_ebs > vol->rec.reserved_pebs)
			return ubi_err(dev, -EINVAL,
				       "volume %u: scanned PEBs (e.g. PEB %u) say type %u data_pad %u used_ebs %u, the "
				       "volume table says type %u data_pad %u reserved_pebs %u",
				       vol->vol_id, v->first_pnum, v->vol_type, v->data_pad, v->used_ebs,
				       vol->rec.vol_type, vol->rec.data_pad, vol->rec.reserved_pebs);
	}
	for (uint32_t p = 0; p < dev->peb_count; p++) {
		struct scan_peb *sp = &ai->p[p];
		if (sp->kind != SC_USED)
			continue;
		struct ubi_volume *vol = dev->vols[slot_of_id(sp->vid.vol_id)];
		if (!vol || sp->vid.lnum >= vol->rec.reserved_pebs) {
			/* volume removed / shrunk before the PEB was erased */
			sp->kind = SC_ERASE;
			continue;
		}
		vol->eba[sp->vid.lnum] = (int32_t)p;
	}
	return 0;
}

static void build_pebs(struct ubi_device *dev, struct scan_info *ai)
{
	for (uint32_t p = 0; p < dev->peb_count; p++) {
		struct scan_peb *sp = &ai->p[p];
		struct ubi_peb *e = &dev->peb[p];
		e->ec = sp->ec_known ? sp->ec : dev->mean_ec;
		switch (sp->kind) {
		case SC_BAD:
			e->state = PEB_BAD;
			break;
		case SC_FREE:
			e->state = PEB_FREE;
			break;
		case SC_USED:
			e->state = PEB_USED;
			e->vol_slot = slot_of_id(sp->vid.vol_id);
			e->lnum = sp->vid.lnum;
			e->scrub = sp->scrub;
			break;
		case SC_CORRUPT:
			e->state = PEB_CORRUPT;
			break;
		case SC_ALIEN:
			e->state = PEB_ALIEN;
			break;
		default:
			e->state = PEB_ERASE;
			e->erase_order = sp->erase_head ? dev->erase_order_head-- : dev->erase_order_next++;
			e->leb_known = false; /* which LEB it held: not tracked for the attach queue */
			break;
		}
	}
}

static int reserve_pebs(struct ubi_device *dev)
{
	if (dev->avail_pebs < UBI_WL_RESERVED_PEBS + UBI_EBA_RESERVED_PEBS && !dev->no_write && !dev->ro)
		return ubi_err(dev, -ENOSPC, "not enough PEBs: %lld available, %d needed for WL and atomic change",
			       (long long)dev->avail_pebs, UBI_WL_RESERVED_PEBS + UBI_EBA_RESERVED_PEBS);
	dev->avail_pebs -= UBI_WL_RESERVED_PEBS + UBI_EBA_RESERVED_PEBS;
	dev->rsvd_pebs += UBI_WL_RESERVED_PEBS + UBI_EBA_RESERVED_PEBS;
	if (dev->bad_allowed && dev->beb_per1024 > 0) {
		uint64_t lim = (uint64_t)dev->peb_count * (uint64_t)dev->beb_per1024;
		dev->bad_peb_limit = (uint32_t)((lim + 1023) / 1024);
		int64_t want = (int64_t)dev->bad_peb_limit - dev->bad_peb_count;
		if (want < 0)
			want = 0;
		if (dev->avail_pebs < want)
			want = dev->avail_pebs;
		if (want < 0)
			want = 0;
		dev->beb_rsvd_pebs = (uint32_t)want;
		dev->avail_pebs -= want;
		dev->rsvd_pebs += want;
	}
	return 0;
}

static int do_autoresize(struct ubi_device *dev)
{
	struct ubi_volume *vol = dev->vols[dev->autoresize_slot];
	if (dev->ro || dev->no_write)
		return 0; /* Linux: skip auto-resize in R/O mode */
	vol->rec.flags &= (uint8_t)~UBI_VTBL_AUTORESIZE_FLG;
	if (dev->avail_pebs == 0) {
		ubi_vtbl_set_record(dev, vol->vol_id, &vol->rec);
		return ubi_vtbl_write(dev);
	}
	return ubi_vol_resize(dev, vol->vol_id, vol->rec.reserved_pebs + (uint32_t)dev->avail_pebs);
}

/* Blank flash: write the empty layout volume (erasing PEBs as needed),
 * then erase the rest so every PEB carries an EC header. */
static int format_empty(struct ubi_device *dev, uint64_t seed)
{
	struct util_prng r;
	util_prng_seed(&r, seed);
	uint32_t seq = dev->image_seq; /* a re-format keeps the EC headers' value */
	while (!seq)
		seq = (uint32_t)util_prng_next(&r);
	dev->image_seq = seq;
	empty_vtbl(dev);
	struct ubi_volume *layout = dev->vols[UBI_LAYOUT_SLOT];
	for (uint32_t i = 0; i < UBI_LAYOUT_VOLUME_EBS; i++) {
		int err = ubi_eba_write(dev, layout, i, 0, dev->vtbl, dev->vtbl_size);
		if (err)
			return err;
	}
	dev->formatted = true;
	return ubi_wl_flush_erase(dev);
}

int ubi_attach_msg(struct flash_dev *flash, const struct ubi_attach_opts *opts, struct ubi_device **out,
		   char *errmsg, size_t errmsg_len)
{
	struct ubi_attach_opts def;
	if (!opts) {
		ubi_attach_opts_default(&def);
		opts = &def;
	}
	*out = NULL;
	if (errmsg && errmsg_len)
		errmsg[0] = '\0';
	if (!flash)
		return -EINVAL;
	struct ubi_device *dev = calloc(1, sizeof(*dev));
	if (!dev)
		return -ENOMEM;
	int err = 0;
	struct scan_info ai = {0};
	struct scan_vol *sv = NULL;
	dev->flash = flash;
	dev->no_write = opts->read_only;
	dev->wl_threshold = opts->wl_threshold ? opts->wl_threshold : UBI_DEFAULT_WL_THRESHOLD;
	dev->erase_at_unmap = opts->erase_at_unmap;
	dev->beb_per1024 = opts->beb_per1024 < 0 ? UBI_DEFAULT_BEB_PER1024 : opts->beb_per1024;
	if (dev->beb_per1024 > 768) {
		err = ubi_err(dev, -EINVAL, "bad-PEB reserve %d per 1024 PEBs is more than 768", dev->beb_per1024);
		goto fail_err;
	}
	dev->erase_order_next = 0;
	dev->erase_order_head = -1;
	err = setup_geometry(dev, opts);
	if (err)
		goto fail_err;
	dev->max_erroneous = dev->peb_count / 10 < 16 ? 16 : dev->peb_count / 10;
	ai.p = calloc(dev->peb_count, sizeof(*ai.p));
	sv = calloc(UBI_MAX_VOLUMES + 1, sizeof(*sv));
	if (!ai.p || !sv) {
		err = -ENOMEM;
		goto fail_err;
	}
	for (uint32_t p = 0; p < dev->peb_count; p++) {
		err = scan_peb(dev, &ai, p);
		if (err)
			goto fail_err;
	}
	dev->mean_ec = ai.ec_count ? (uint32_t)(ai.ec_sum / ai.ec_count) : 0;
	dev->bad_peb_count = ai.bad_count;
	dev->good_peb_count = dev->peb_count - ai.bad_count;
	dev->corr_peb_count = ai.corr_count;
	dev->alien_peb_count = ai.alien_count;
	uint32_t n = dev->peb_count - ai.bad_count - ai.alien_count;
	uint32_t max_corr = n / 20 ? n / 20 : 8;
	if (ai.corr_count && ai.corr_count >= max_corr) {
		char last[UTIL_ERR_MSG_MAX];
		snprintf(last, sizeof(last), "%s", dev->err.msg);
		err = ubi_err(dev, -EINVAL, "%u PEBs are corrupted (limit %u), refusing to attach; last: %.300s",
			      ai.corr_count, max_corr, last);
		goto fail_err;
	}
	if (ai.empty_count + ai.maybe_bad == n) {
		if (ai.maybe_bad > 2) {
			err = ubi_err(dev, -EINVAL,
				      "flash is not UBI-formatted and possibly holds non-UBI data (%u PEBs unreadable)",
				      ai.maybe_bad);
			goto fail_err;
		}
		ai.is_empty = true;
	}
	err = resolve_used(dev, &ai, sv);
	if (err)
		goto fail_err;
	dev->sqnum = ai.max_sqnum + 1; /* as Linux: ubinize's 0s are all older */

	int64_t lpeb[2] = {-1, -1};
	for (uint32_t p = 0; p < dev->peb_count; p++)
		if (ai.p[p].kind == SC_USED && ai.p[p].vid.vol_id == UBI_LAYOUT_VOLUME_ID)
			lpeb[ai.p[p].vid.lnum] = p;
	int restore = -1;
	bool format = false;
	/* An interrupted format (ours or the kernel's: layout volume written
	 * first) leaves EC headers and at most a torn layout volume, and no
	 * other data. Formatting again beats refusing forever; with any user
	 * data present we refuse, as Linux does. */
	bool no_user_data = ai.corr_count == 0 && ai.alien_count == 0;
	for (uint32_t p = 0; p < dev->peb_count; p++)
		if (ai.p[p].kind == SC_USED && ai.p[p].vid.vol_id != UBI_LAYOUT_VOLUME_ID)
			no_user_data = false;
	bool can_format = opts->autoformat && !dev->no_write && !dev->ro;
	if (lpeb[0] < 0 && lpeb[1] < 0) {
		if (!ai.is_empty && !(no_user_data && can_format)) {
			err = ubi_err(dev, -EINVAL, "the layout volume (volume table) was not found on a non-empty flash");
			goto fail_err;
		}
		if (!opts->autoformat && !opts->read_only) {
			err = ubi_err(dev, -ENODEV, "flash is empty (not UBI-formatted) and autoformat is off");
			goto fail_err;
		}
		empty_vtbl(dev);
		format = can_format;
	} else {
		bool both_bad;
		err = read_vtbl(dev, &ai, lpeb, &restore, &both_bad);
		if (err && both_bad && no_user_data && can_format) {
			for (int i = 0; i < 2; i++)
				if (lpeb[i] >= 0)
					ai.p[lpeb[i]].kind = SC_ERASE;
			memset(sv, 0, (UBI_MAX_VOLUMES + 1) * sizeof(*sv));
			empty_vtbl(dev);
			restore = -1;
			format = true;
			err = 0;
		}
		if (err)
			goto fail_err;
	}
	err = init_volumes(dev, &ai, sv);
	if (err)
		goto fail_err;
	err = check_and_map(dev, &ai, sv);
	if (err)
		goto fail_err;
	build_pebs(dev, &ai);
	/* layout volume LEBs */
	err = reserve_pebs(dev);
	if (err)
		goto fail_err;
	if (ai.fastmap_count && !dev->no_write && !dev->ro) {
		/* A kernel with fastmap would attach from the stale map and miss
		 * everything we write: erase the fastmap before any write (they
		 * sit at the head of the erase queue). */
		for (uint32_t p = 0; p < dev->peb_count; p++) {
			while (ai.p[p].fastmap && dev->peb[p].state == PEB_ERASE) {
				err = ubi_wl_do_one_erase(dev);
				if (err < 0)
					goto fail_err;
			}
		}
	}
	if (format) {
		err = format_empty(dev, opts->seed);
		if (err)
			goto fail_err;
	}
	if (restore >= 0 && !dev->no_write && !dev->ro) {
		err = ubi_eba_change(dev, dev->vols[UBI_LAYOUT_SLOT], (uint32_t)restore, dev->vtbl, dev->vtbl_size);
		if (err)
			goto fail_err;
	}
	if (dev->autoresize_slot >= 0) {
		err = do_autoresize(dev);
		if (err)
			goto fail_err;
	}
	free(ai.p);
	free(sv);
	util_err_clear(&dev->err);
	*out = dev;
	return 0;

fail_err:
	if (errmsg && errmsg_len)
		snprintf(errmsg, errmsg_len, "%s", dev->err.msg[0] ? dev->err.msg : "attach failed");
	free(ai.p);
	free(sv);
	free_device(dev);
	return err;
}

int ubi_attach(struct flash_dev *flash, const struct ubi_attach_opts *opts, struct ubi_device **out)
{
	return ubi_attach_msg(flash, opts, out, NULL, 0);
}
