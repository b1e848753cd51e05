/* image_view — a volume seen with more LEBs than it has, for read-only
 * opening: reads beyond its LEBs are 0xFF (unmapped), writes are refused.
 * Used for a bare image (it holds only the LEBs mkfs.ubifs wrote; flashed,
 * it sits in a volume of up to max_leb_cnt LEBs) and for an autoresize
 * volume (the kernel grows it to every available PEB at its first attach;
 * a read-only attach does it here in memory only). A read-write image needs
 * neither: ubi_flat grows the file, a read-write UBI attach resizes. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "image/image.h"
#include "ubi/ubi.h"
#include "ubi/ubi_media.h"
#include "ubifs/ubifs_media.h"
#include "util/util_endian.h"

bool image_vol_has_ubifs(struct ubi_device *ubi, uint32_t vol_id)
{
	struct ubi_vol_io v;
	if (ubi_volume_io(ubi, vol_id, &v) || v.leb_size < UBIFS_SB_NODE_SZ)
		return false;
	uint8_t *b = malloc(UBIFS_SB_NODE_SZ);
	if (!b)
		return false;
	bool ok = v.read(v.ctx, 0, 0, b, UBIFS_SB_NODE_SZ) == 0 && get_le32(b) == UBIFS_NODE_MAGIC &&
		  b[20] == UBIFS_SB_NODE;
	free(b);
	return ok;
}

static int ext_read(void *ctx, uint32_t lnum, uint32_t off, void *buf, size_t len)
{
	struct ubi_vol_io *in = ctx;
	if (lnum < in->leb_count)
		return in->read(in->ctx, lnum, off, buf, len);
	if (off > in->leb_size || len > in->leb_size - off)
		return -EINVAL;
	memset(buf, 0xFF, len);
	return 0;
}

static int ext_is_mapped(void *ctx, uint32_t lnum)
{
	struct ubi_vol_io *in = ctx;
	return lnum < in->leb_count ? in->is_mapped(in->ctx, lnum) : 0;
}

static int ext_ro(void *ctx, uint32_t lnum)
{
	(void)ctx;
	(void)lnum;
	return -EROFS;
}

static int ext_ro_write(void *ctx, uint32_t lnum, uint32_t off, const void *buf, size_t len)
{
	(void)ctx;
	(void)lnum;
	(void)off;
	(void)buf;
	(void)len;
	return -EROFS;
}

static int ext_ro_change(void *ctx, uint32_t lnum, const void *buf, size_t len)
{
	(void)ctx;
	(void)lnum;
	(void)buf;
	(void)len;
	return -EROFS;
}

static int ext_sync(void *ctx)
{
	(void)ctx;
	return 0;
}

/* img->vol = img->inner seen with leb_count LEBs (never fewer than it has). */
static void ext_view(struct ubikit_image *img, uint32_t leb_count)
{
	struct ubi_vol_io *in = &img->inner;
	img->vol = *in;
	img->vol.ctx = in;
	img->vol.leb_count = leb_count > in->leb_count ? leb_count : in->leb_count;
	img->vol.read_only = 1;
	img->vol.read = ext_read;
	img->vol.is_mapped = ext_is_mapped;
	img->vol.write = ext_ro_write;
	img->vol.change = ext_ro_change;
	img->vol.unmap = ext_ro;
	img->vol.map = ext_ro;
	img->vol.sync = ext_sync;
}

/* max_leb_cnt of the UBIFS superblock in LEB 0 of inner (0: none). */
static uint32_t sb_max_leb_cnt(struct ubi_vol_io *in, uint32_t *leb_cnt)
{
	uint32_t m = 0;
	*leb_cnt = 0;
	uint8_t *sb = malloc(UBIFS_SB_NODE_SZ);
	if (sb && in->leb_size >= UBIFS_SB_NODE_SZ && in->read(in->ctx, 0, 0, sb, UBIFS_SB_NODE_SZ) == 0 &&
	    get_le32(sb) == UBIFS_NODE_MAGIC && sb[20] == UBIFS_SB_NODE) {
		*leb_cnt = get_le32(sb + 40);
		m = get_le32(sb + 44);
	}
	free(sb);
	return m;
}

void image_view_bare(struct ubikit_image *img)
{
	struct ubi_vol_io *in = &img->inner;
	uint32_t max_leb = in->leb_count, cnt;
	uint32_t m = sb_max_leb_cnt(in, &cnt);
	if (m > max_leb && m <= (1u << 20))
		max_leb = m;
	ext_view(img, max_leb);
}

/* The autoresize volume as the kernel has it after its first (read-write)
 * attach: reserved + available PEBs, less the bad-PEB reserve on NAND.
 * An image file that ends where its data ends (ubinize output, Buildroot's
 * minimal autoresize volume) has no available PEBs: on the device it is
 * flashed to, UBI grows the volume and UBIFS takes up to max_leb_cnt of it,
 * so a UBIFS volume smaller than its superblock's LEB count is seen with
 * max_leb_cnt LEBs (mkfs.ubifs writes fewer LEBs than UBIFS mounts with). */
void image_view_autoresize(struct ubikit_image *img, uint32_t vol_id)
{
	struct ubi_dev_info di;
	struct ubi_vol_info vi;
	if (ubi_vol_info(img->ubi, vol_id, &vi) || !(vi.flags & UBI_VTBL_AUTORESIZE_FLG) ||
	    vi.vol_type != UBI_VID_DYNAMIC)
		return;
	if (ubi_dev_info(img->ubi, &di))
		return;
	uint64_t avail = di.avail_pebs;
	if (img->geo.flash_type == UBIKIT_IMAGE_FLASH_NAND) {
		uint64_t limit = ((uint64_t)di.peb_count * UBI_DEFAULT_BEB_PER1024 + 1023) / 1024;
		uint64_t rsvd = limit > di.bad_pebs ? limit - di.bad_pebs : 0;
		avail = avail > rsvd ? avail - rsvd : 0;
	}
	uint64_t lebs = vi.reserved_pebs + avail;
	const char *why = "as the kernel grows it at attach";
	uint32_t sb_cnt, sb_max = sb_max_leb_cnt(&img->inner, &sb_cnt);
	bool file = img->geo.kind == UBIKIT_IMAGE_UBI || img->geo.kind == UBIKIT_IMAGE_NAND_OOB;
	uint32_t need = sb_cnt > UBIFS_MIN_LEB_CNT ? sb_cnt : UBIFS_MIN_LEB_CNT;
	if (file && sb_max && need > lebs && sb_max >= need && sb_max <= (1u << 20)) {
		lebs = sb_max;
		why = "the image holds fewer PEBs than its UBIFS needs; on a device UBI grows it, up to the "
		      "superblock's max_leb_cnt";
	}
	if (lebs <= vi.reserved_pebs)
		return;
	ext_view(img, (uint32_t)lebs);
	img->autoresized = img->vol.leb_count;
	char note[256];
	snprintf(note, sizeof(note), " volume %u has the autoresize flag: seen with %u LEBs, %s;", vi.vol_id,
		 img->vol.leb_count, why);
	size_t l = strlen(img->geo.how);
	snprintf(img->geo.how + l, sizeof(img->geo.how) - l, "%s", note);
}
