/* image_open — opening an image (include/ubikit/image.h): the stack
 * flash -> UBI attach -> volume choice, or the flat UBIFS view; the mount,
 * read-only or read-write; and the way back to disk at close. Detection is
 * image_detect.c. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <ubikit/ubikit.h>

#include "flash/flash_mtd.h"
#include "flash/flash_sim.h"
#include "flash/flash_window.h"
#include "image/image.h"
#include "ubi/ubi.h"
#include "ubi/ubi_flat.h"
#include "ubi/ubi_media.h"
#include "util/util_err.h"
#include "util/util_file.h"

void ubikit_image_opts_init(struct ubikit_image_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->with_oob = -1;
	o->vol_id = -1;
	o->offset = -1;
	o->ubi_index = -1;
}

static void how_note(struct ubikit_image *img, const char *note)
{
	size_t l = strlen(img->geo.how);
	snprintf(img->geo.how + l, sizeof(img->geo.how) - l, "%s", note);
}

static int use_volume(struct ubikit_image *img, uint32_t id)
{
	img->have_vol = false;
	img->autoresized = 0;
	img->vol_id = id;
	int ret = ubi_volume_io(img->ubi, id, &img->inner);
	if (ret) {
		snprintf(img->err, sizeof(img->err), "volume %u: %s", id, ubi_errmsg(img->ubi));
		return ret;
	}
	img->vol = img->inner;
	img->have_vol = true;
	/* read-write: the attach itself grew an autoresize volume */
	if (!img->rdwr)
		image_view_autoresize(img, id);
	return 0;
}

static int choose_volume(struct ubikit_image *img, const struct ubikit_image_opts *o)
{
	if (o->vol_name) {
		int id = ubi_vol_find(img->ubi, o->vol_name);
		if (id < 0) {
			snprintf(img->err, sizeof(img->err), "no UBI volume named '%s'", o->vol_name);
			return -ENOENT;
		}
		return use_volume(img, (uint32_t)id);
	}
	if (o->vol_id >= 0) {
		struct ubi_vol_info vi;
		if (ubi_vol_info(img->ubi, (uint32_t)o->vol_id, &vi)) {
			snprintf(img->err, sizeof(img->err), "no UBI volume with ID %ld", o->vol_id);
			return -ENOENT;
		}
		return use_volume(img, (uint32_t)o->vol_id);
	}
	uint32_t ids[UBI_MAX_VOLUMES];
	int n = ubi_vol_list(img->ubi, ids, UBI_MAX_VOLUMES);
	if (n < 0) {
		snprintf(img->err, sizeof(img->err), "cannot list volumes: %s", ubi_errmsg(img->ubi));
		return n;
	}
	if (n > UBI_MAX_VOLUMES)
		n = UBI_MAX_VOLUMES;
	for (int i = 0; i < n; i++)
		if (image_vol_has_ubifs(img->ubi, ids[i]))
			return use_volume(img, ids[i]);
	if (o->flags & UBIKIT_IMAGE_NO_VOLUME)
		return 0;
	snprintf(img->err, sizeof(img->err),
		 "none of the %d UBI volume(s) holds a UBIFS superblock in LEB 0 (choose one with "
		 "--vol-name/--vol-id)",
		 n);
	return -ENOENT;
}

static int attach(struct ubikit_image *img, const struct ubikit_image_opts *o)
{
	struct ubi_attach_opts ao;
	ubi_attach_opts_default(&ao);
	ao.read_only = !img->rdwr;
	ao.autoformat = false;
	if (!img->rdwr)
		ao.beb_per1024 = 0; /* read-only: no bad-PEB reserve needed */
	ao.vid_hdr_offset = o->vid_hdr_offset ? o->vid_hdr_offset : img->geo.vid_hdr_offset;
	char amsg[512] = "";
	int ret = ubi_attach_msg(img->flash, &ao, &img->ubi, amsg, sizeof(amsg));
	if (ret) {
		img->ubi = NULL;
		snprintf(img->err, sizeof(img->err), "UBI attach failed: %s", amsg[0] ? amsg : strerror(-ret));
	}
	return ret;
}

static void geo_from_flash(struct ubikit_image *img)
{
	struct flash_geometry *fg = &img->flash->geo;
	img->geo.flash_type = fg->type == FLASH_NOR ? UBIKIT_IMAGE_FLASH_NOR : UBIKIT_IMAGE_FLASH_NAND;
	img->geo.peb_size = fg->peb_size;
	img->geo.peb_count = fg->peb_count;
	img->geo.page_size = fg->page_size;
	img->geo.subpage_size = fg->subpage_size;
	img->geo.oob_size = fg->oob_size;
}

static int open_bare(struct ubikit_image *img, const struct ubikit_image_opts *o)
{
	struct util_err e;
	util_err_clear(&e);
	int ret = ubi_flat_open_err(img->path, o->leb_size, !img->rdwr, &img->inner, &e);
	if (ret) {
		snprintf(img->err, sizeof(img->err), "%s", e.msg[0] ? e.msg : strerror(-ret));
		return ret;
	}
	img->flat = true;
	img->have_vol = true;
	if (img->rdwr)
		img->vol = img->inner; /* ubi_flat already spans max_leb_cnt and grows the file */
	else
		image_view_bare(img);
	return 0;
}

/* A dump or ubinize output on the simulator backend. An image file often
 * ends where its data ends (ubinize output), while UBI needs spare PEBs
 * for its reserves: if the attach runs out of PEBs, the image is taken as
 * lying on a bigger flash whose remaining PEBs are erased, as after
 * flashing it onto a device (read-write, the file then grows). */
static int open_dump(struct ubikit_image *img, const struct ubikit_image_opts *o)
{
	char side[4096];
	snprintf(side, sizeof(side), "%s.sim", img->path);
	/* The simulator keeps state in a sidecar; a raw dump changed in place
	 * must stay a raw dump (bad blocks live in its OOB markers). */
	img->drop_sidecar = img->rdwr && access(side, F_OK) != 0;
	/* A UBI device that is not the whole file (behind a vendor header, one
	 * of several) is read through a window; it cannot be changed in place. */
	bool window = img->geo.offset != 0 || img->geo.ubi_dev_count > 1;
	if (window && img->rdwr) {
		snprintf(img->err, sizeof(img->err),
			 "the UBI device at offset %" PRIu64 " is not the whole file: it opens read-only only (copy it "
			 "out with dd first to change it)",
			 img->geo.offset);
		return -EROFS;
	}
	if (window && img->geo.has_oob && img->geo.offset % img->geo.peb_stride) {
		snprintf(img->err, sizeof(img->err),
			 "UBI device at offset %" PRIu64 " in a dump with OOB: the offset must be a multiple of the PEB "
			 "stride %u",
			 img->geo.offset, img->geo.peb_stride);
		return -EINVAL;
	}
	uint32_t extra = 0;
	/* layout volume (2) + WL and atomic-change reserve (2) */
	if (img->geo.vtbl_pebs && img->geo.vtbl_pebs + 4 > img->geo.peb_count &&
	    img->geo.vtbl_pebs < (1u << 20)) /* bound: a corrupt table must not ask for millions */
		extra = img->geo.vtbl_pebs + 4 - img->geo.peb_count;
	int ret;
	for (int attempt = 0;; attempt++) {
		struct flash_geometry fg = {
			.type = img->geo.flash_type == UBIKIT_IMAGE_FLASH_NOR ? FLASH_NOR : FLASH_NAND,
			.page_size = img->geo.page_size,
			.subpage_size = img->geo.subpage_size,
			.oob_size = img->geo.has_oob ? img->geo.oob_size : 0,
			.peb_size = img->geo.peb_size,
			.peb_count = img->geo.peb_count + extra,
		};
		if (fg.type == FLASH_NAND && !fg.oob_size)
			fg.oob_size = fg.page_size >= 2048 ? fg.page_size / 32 : 16;
		char ferr[256] = "";
		if (window) {
			/* the whole file below, the device's PEBs seen through a window */
			fg.peb_count = (uint32_t)((img->geo.file_size + img->geo.peb_stride - 1) / img->geo.peb_stride);
		}
		ret = flash_sim_open_ex(img->path, &fg, img->geo.has_oob, !img->rdwr, &img->flash, ferr, sizeof(ferr));
		if (ret) {
			snprintf(img->err, sizeof(img->err), "cannot open %s as flash (PEB %u x %u, page %u%s): %s",
				 img->path, fg.peb_size, fg.peb_count, fg.page_size, img->geo.has_oob ? " + OOB" : "",
				 ferr[0] ? ferr : strerror(-ret));
			return ret;
		}
		if (window) {
			struct flash_dev *w;
			uint64_t base = img->geo.has_oob ? img->geo.offset / img->geo.peb_stride * img->geo.peb_size
							 : img->geo.offset;
			uint64_t size = (uint64_t)img->geo.peb_count * img->geo.peb_size;
			uint64_t dev = img->geo.has_oob ? img->geo.dev_size / img->geo.peb_stride * img->geo.peb_size
							: img->geo.dev_size;
			if (dev && dev < size)
				size = dev;
			ret = flash_window_open(img->flash, base, size, img->geo.peb_count + extra, &w);
			if (ret) {
				flash_close(img->flash);
				img->flash = NULL;
				snprintf(img->err, sizeof(img->err), "cannot open the UBI device at offset %" PRIu64 ": %s",
					 img->geo.offset, strerror(-ret));
				return ret;
			}
			img->flash = w;
		}
		ret = attach(img, o);
		if (ret != -ENOSPC || attempt >= 12)
			break;
		ubi_detach(img->ubi);
		img->ubi = NULL;
		flash_close(img->flash);
		img->flash = NULL;
		extra = extra ? extra * 2 : 4;
	}
	if (extra && !ret) {
		char note[160];
		snprintf(note, sizeof(note),
			 " UBI needs more PEBs than the file has: %u erased PEBs assumed after its end;", extra);
		how_note(img, note);
	}
	return ret;
}

static int open_flash(struct ubikit_image *img, const struct ubikit_image_opts *o)
{
	int ret;
	if (img->geo.kind == UBIKIT_IMAGE_SIM) {
		char ferr[256] = "";
		ret = flash_sim_open_ex(img->path, NULL, o->with_oob == 1, !img->rdwr, &img->flash, ferr, sizeof(ferr));
		if (ret) {
			snprintf(img->err, sizeof(img->err), "cannot open simulator flash %s: %s", img->path,
				 ferr[0] ? ferr : strerror(-ret));
			return ret;
		}
		geo_from_flash(img);
		return attach(img, o);
	}
	if (img->geo.kind == UBIKIT_IMAGE_MTD) {
		ret = flash_mtd_open(img->path, !img->rdwr, &img->flash);
		if (ret) {
			snprintf(img->err, sizeof(img->err), "cannot open MTD device %s: %s", img->path, strerror(-ret));
			return ret;
		}
		geo_from_flash(img);
		img->geo.file_size = (uint64_t)img->geo.peb_size * img->geo.peb_count;
		return attach(img, o);
	}
	return open_dump(img, o);
}

int ubikit_image_open(const char *path, const struct ubikit_image_opts *o, struct ubikit_image **out, char *msg,
		      size_t msglen)
{
	if (msg && msglen)
		msg[0] = '\0';
	if (!out || !path || !o)
		return -EINVAL;
	*out = NULL;
	struct ubikit_image *img = calloc(1, sizeof(*img));
	if (!img)
		return -ENOMEM;
	/* Read-write: the file is written again at close, and a front end may
	 * have changed directory by then (FUSE goes to "/"): keep it absolute. */
	char *abs = (o->flags & UBIKIT_IMAGE_RDWR) ? realpath(path, NULL) : NULL;
	img->path = abs ? abs : strdup(path);
	if (!img->path) {
		free(img);
		return -ENOMEM;
	}
	img->rdwr = !!(o->flags & UBIKIT_IMAGE_RDWR);
	img->fscrypt_key = o->fscrypt_key;
	img->fscrypt_key_len = o->fscrypt_key_len;
	img->auth_cert = o->auth_cert;
	img->auth_cert_len = o->auth_cert_len;
	img->auth_hmac_key = o->auth_hmac_key;
	img->auth_hmac_key_len = o->auth_hmac_key_len;
	/* `ubikit cat IMG f >> IMG` would grow the image while it is read. */
	struct util_file_id ids[2];
	util_file_id_image(path, ids);
	int ret = 0;
	if (util_fd_is_input(STDOUT_FILENO, ids, 2) >= 0) {
		snprintf(img->err, sizeof(img->err), "standard output is the image (or its sidecar) itself");
		ret = -EINVAL;
		goto fail;
	}
	ret = ubikit_image_detect(path, o, &img->geo, img->err, sizeof(img->err));
	if (ret)
		goto fail;
	if (img->geo.kind == UBIKIT_IMAGE_UBIFS) {
		ret = open_bare(img, o);
		if (ret)
			goto fail;
	} else {
		ret = open_flash(img, o);
		if (ret) {
			if ((o->flags & UBIKIT_IMAGE_KEEP_FLASH) && img->flash) {
				img->ubi = NULL;
				*out = img;
				return 0;
			}
			goto fail;
		}
		if (img->geo.kind == UBIKIT_IMAGE_SIM || img->geo.kind == UBIKIT_IMAGE_MTD) {
			struct ubi_dev_info di;
			if (!ubi_dev_info(img->ubi, &di)) {
				img->geo.vid_hdr_offset = di.vid_hdr_offset;
				img->geo.data_offset = di.data_offset;
				img->geo.leb_size = di.leb_size;
			}
		}
		ret = choose_volume(img, o);
		if (ret)
			goto fail;
	}
	if (!(o->flags & UBIKIT_IMAGE_NO_MOUNT)) {
		ret = ubikit_image_mount(img, o->mount_flags);
		if (ret)
			goto fail;
	}
	*out = img;
	return 0;
fail:
	if (msg && msglen)
		snprintf(msg, msglen, "%s: %s", path, img->err[0] ? img->err : strerror(-ret));
	ubikit_image_close(img);
	return ret ? ret : -EINVAL;
}

const struct ubikit_image_geo *ubikit_image_geometry(const struct ubikit_image *img)
{
	return &img->geo;
}

struct ubikit_fs *ubikit_image_fs(const struct ubikit_image *img)
{
	return img ? img->fs : NULL;
}

const char *ubikit_image_errmsg(const struct ubikit_image *img)
{
	return img ? img->err : "";
}

int ubikit_image_volumes(const struct ubikit_image *img, struct ubikit_image_volume *vols, int max)
{
	if (!img->ubi) {
		if (!img->flat)
			return 0;
		if (max > 0) {
			memset(&vols[0], 0, sizeof(vols[0]));
			snprintf(vols[0].name, sizeof(vols[0].name), "%s", "ubifs");
			vols[0].dynamic = 1;
			vols[0].reserved_lebs = img->vol.leb_count;
			vols[0].leb_size = img->vol.leb_size;
			vols[0].has_ubifs = 1;
			vols[0].chosen = 1;
		}
		return 1;
	}
	uint32_t ids[UBI_MAX_VOLUMES];
	int n = ubi_vol_list(img->ubi, ids, UBI_MAX_VOLUMES);
	if (n < 0)
		return n;
	if (n > UBI_MAX_VOLUMES)
		n = UBI_MAX_VOLUMES;
	for (int i = 0; i < n && i < max; i++) {
		struct ubi_vol_info vi;
		memset(&vols[i], 0, sizeof(vols[i]));
		vols[i].id = ids[i];
		if (ubi_vol_info(img->ubi, ids[i], &vi))
			continue;
		snprintf(vols[i].name, sizeof(vols[i].name), "%s", vi.name);
		vols[i].dynamic = vi.vol_type == UBI_VID_DYNAMIC;
		vols[i].reserved_lebs = vi.reserved_pebs;
		vols[i].leb_size = vi.usable_leb_size;
		vols[i].has_ubifs = image_vol_has_ubifs(img->ubi, ids[i]);
		vols[i].chosen = img->have_vol && img->vol_id == ids[i];
	}
	return n;
}

int ubikit_image_select(struct ubikit_image *img, const char *name, uint32_t id)
{
	if (!img->ubi) {
		snprintf(img->err, sizeof(img->err), "%s: a bare UBIFS image has one volume only", img->path);
		return img->flat && !name && id == 0 ? 0 : -ENOENT;
	}
	int ret = ubikit_image_unmount(img);
	if (ret)
		return ret;
	struct ubikit_image_opts o;
	ubikit_image_opts_init(&o);
	o.vol_name = name;
	o.vol_id = name ? -1 : (long)id;
	return choose_volume(img, &o);
}

int ubikit_image_mount(struct ubikit_image *img, unsigned mount_flags)
{
	if (img->fs)
		return 0;
	if (!img->have_vol) {
		snprintf(img->err, sizeof(img->err), "no UBIFS volume");
		return -ENOENT;
	}
	struct ubikit_mount_opts mo = {.flags = mount_flags, .fscrypt_key = img->fscrypt_key,
				       .fscrypt_key_len = img->fscrypt_key_len, .auth_cert = img->auth_cert,
				       .auth_cert_len = img->auth_cert_len, .auth_hmac_key = img->auth_hmac_key,
				       .auth_hmac_key_len = img->auth_hmac_key_len};
	if (!img->rdwr)
		mo.flags |= UBIKIT_MOUNT_RDONLY;
	char e[512] = "";
	int ret = ubikit_mount_ex(&img->vol, &mo, &img->fs, e, sizeof(e));
	if (ret) {
		img->fs = NULL;
		if (img->ubi)
			snprintf(img->err, sizeof(img->err), "UBI volume %u: %s", img->vol_id, e[0] ? e : strerror(-ret));
		else
			snprintf(img->err, sizeof(img->err), "%s", e[0] ? e : strerror(-ret));
	}
	return ret;
}

int ubikit_image_flush(struct ubikit_image *img)
{
	if (!img->rdwr || !img->have_vol || !img->inner.sync)
		return 0;
	int ret = img->inner.sync(img->inner.ctx);
	if (ret)
		snprintf(img->err, sizeof(img->err), "%s: writing to disk failed: %s", img->path, strerror(-ret));
	return ret;
}

int ubikit_image_unmount(struct ubikit_image *img)
{
	if (!img->fs)
		return 0;
	int ret = ubikit_unmount(img->fs);
	img->fs = NULL;
	if (ret)
		snprintf(img->err, sizeof(img->err), "%s: unmount (final commit) failed: %s", img->path,
			 strerror(-ret));
	return ret;
}

int ubikit_image_close_msg(struct ubikit_image *img, char *msg, size_t msglen)
{
	if (msg && msglen)
		msg[0] = '\0';
	if (!img)
		return 0;
	int ret = ubikit_image_unmount(img);
	if (img->flat) {
		int r = ubi_flat_close(&img->inner);
		if (r && !ret) {
			ret = r;
			snprintf(img->err, sizeof(img->err), "%s: writing the image back failed: %s", img->path,
				 strerror(-r));
		}
	}
	if (img->ubi)
		ubi_detach(img->ubi);
	if (img->flash) {
		if (img->rdwr) {
			int r = flash_sync(img->flash);
			if (r && !ret) {
				ret = r;
				snprintf(img->err, sizeof(img->err), "%s: writing to disk failed: %s", img->path,
					 strerror(-r));
			}
		}
		flash_close(img->flash);
	}
	if (img->drop_sidecar) {
		char side[4096];
		snprintf(side, sizeof(side), "%s.sim", img->path);
		unlink(side);
	}
	if (ret && msg && msglen)
		snprintf(msg, msglen, "%s", img->err);
	free(img->path);
	free(img);
	return ret;
}

int ubikit_image_close(struct ubikit_image *img)
{
	return ubikit_image_close_msg(img, NULL, 0);
}
