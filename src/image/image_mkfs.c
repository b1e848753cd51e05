/* image_mkfs — a UBIFS made from a host tree onto a UBI volume of a flash
 * image (image_mkfs.h): open the flash read-write, find or plan the
 * volume, build the file system into a temporary file with fs_mkfs, then
 * create the volume if needed and write the image into it by a UBI volume
 * update (trailing 0xFF of each LEB is not written, as ubiupdatevol). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "image/image.h"
#include "image/image_mkfs.h"
#include "ubi/ubi.h"
#include "ubi/ubi_media.h"
#include "ubifs/ubifs_media.h"
#include "util/util_err.h"

#define UPD_CHUNK (1u << 20)

static int fail(char *msg, size_t msglen, int err, const char *path, const char *what)
{
	if (msg && msglen)
		snprintf(msg, msglen, "%s: %s", path, what);
	return err;
}

/* Plan the volume: an existing one (must be dynamic) or the size of a new one. */
static int plan_volume(struct ubikit_image *img, const struct image_mkfs_target *t, const struct fs_mkfs_opts *o,
		       const struct ubi_dev_info *di, struct image_mkfs_result *r, char *why, size_t wlen)
{
	int id = ubi_vol_find(img->ubi, t->vol_name);
	r->min_io_size = di->min_io_size;
	if (id >= 0) {
		struct ubi_vol_info vi;
		int ret = ubi_vol_info(img->ubi, (uint32_t)id, &vi);
		if (ret) {
			snprintf(why, wlen, "volume '%s': %s", t->vol_name, ubi_errmsg(img->ubi));
			return ret;
		}
		if (vi.vol_type != UBI_VID_DYNAMIC) {
			snprintf(why, wlen, "volume %d '%s' is static; UBIFS needs a dynamic volume", id, t->vol_name);
			return -EINVAL;
		}
		if (t->vol_size || t->vol_id >= 0) {
			snprintf(why, wlen,
				 "volume '%s' exists (ID %d, %u LEBs): --vol-size and --vol-id only apply to a volume "
				 "mkfs creates",
				 t->vol_name, id, vi.reserved_pebs);
			return -EINVAL;
		}
		r->created = 0;
		r->vol_id = (uint32_t)id;
		r->vol_lebs = vi.reserved_pebs;
		r->leb_size = vi.usable_leb_size;
		return 0;
	}
	r->created = 1;
	r->leb_size = di->leb_size;
	uint64_t lebs;
	if (t->vol_size)
		lebs = (t->vol_size + di->leb_size - 1) / di->leb_size;
	else if (o->bp.max_leb_cnt)
		lebs = o->bp.max_leb_cnt;
	else
		lebs = di->avail_pebs;
	if (t->vol_id >= 0) {
		struct ubi_vol_info vi;
		if (!ubi_vol_info(img->ubi, (uint32_t)t->vol_id, &vi)) {
			snprintf(why, wlen, "cannot create volume '%s' with ID %ld: volume %ld '%s' exists", t->vol_name,
				 t->vol_id, t->vol_id, vi.name);
			return -EEXIST;
		}
	}
	if (lebs > di->avail_pebs || lebs == 0) {
		snprintf(why, wlen,
			 "no room for a new volume '%s' of %llu LEBs: UBI has %u PEBs available (make room with "
			 "`ubikit ubi rmvol`/`rsvol`, or give --vol-size or a smaller -c)",
			 t->vol_name, (unsigned long long)lebs, di->avail_pebs);
		return -ENOSPC;
	}
	if (lebs < UBIFS_MIN_LEB_CNT) {
		snprintf(why, wlen, "%s for a new volume '%s': %llu LEBs, UBIFS needs at least %d",
			 t->vol_size || o->bp.max_leb_cnt ? "too small" : "no room", t->vol_name,
			 (unsigned long long)lebs, UBIFS_MIN_LEB_CNT);
		return t->vol_size || o->bp.max_leb_cnt ? -EINVAL : -ENOSPC;
	}
	r->vol_lebs = (uint32_t)lebs;
	return 0;
}

/* Build the file system into a temporary file of lebs LEBs. */
static int build_tmp(char *tmp, size_t tlen, struct fs_mkfs_opts *o, uint32_t lebs, struct fs_mkfs_stats *st,
		     struct util_err *e)
{
	const char *dir = getenv("TMPDIR");
	snprintf(tmp, tlen, "%s/ubikit-mkfs-vol-XXXXXX", dir && *dir ? dir : "/tmp");
	int fd = mkstemp(tmp);
	if (fd < 0)
		return util_err_set(e, -errno, "cannot create a temporary file in %s: %s", dir && *dir ? dir : "/tmp",
				    strerror(errno));
	close(fd);
	uint32_t min_io = o->bp.min_io_size < 8 ? 8 : o->bp.min_io_size;
	struct ubi_vol_io *vol;
	int err = fs_mkfs_file_vol_open(tmp, o->bp.leb_size, min_io, lebs, &vol, e);
	if (err) {
		unlink(tmp);
		return err;
	}
	err = fs_mkfs(vol, o, st, e);
	int e2 = fs_mkfs_file_vol_close(vol, err ? 0 : st->leb_cnt, err ? NULL : e);
	if (err || e2)
		unlink(tmp);
	return err ? err : e2;
}

/* Volume update from the temporary image file. */
static int update_volume(struct ubi_device *ubi, uint32_t id, const char *tmp, uint64_t bytes, char *why,
			 size_t wlen)
{
	int fd = open(tmp, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(why, wlen, "cannot read back %.300s: %s", tmp, strerror(errno));
		return -errno;
	}
	uint8_t *buf = malloc(UPD_CHUNK);
	int ret = buf ? ubi_vol_update_start(ubi, id, bytes) : -ENOMEM;
	uint64_t done = 0;
	while (!ret && done < bytes) {
		size_t n = bytes - done < UPD_CHUNK ? (size_t)(bytes - done) : UPD_CHUNK;
		ssize_t got = pread(fd, buf, n, (off_t)done);
		if (got != (ssize_t)n) {
			snprintf(why, wlen, "cannot read back %.300s: %s", tmp, got < 0 ? strerror(errno) : "short read");
			ret = -EIO;
			break;
		}
		ret = ubi_vol_update_write(ubi, id, buf, n);
		done += n;
	}
	if (ret && !why[0])
		snprintf(why, wlen, "writing volume %u failed: %s", id, ubi_errmsg(ubi)[0] ? ubi_errmsg(ubi) : strerror(-ret));
	if (!ret) {
		ret = ubi_sync(ubi);
		if (ret)
			snprintf(why, wlen, "syncing the flash failed: %s", strerror(-ret));
	}
	free(buf);
	close(fd);
	return ret;
}

/* Open path (read-write or not), plan the volume and check the geometry
 * the user gave against the flash's. On success *out is open. */
static int open_plan(const char *path, const struct ubikit_image_opts *io, int rdwr,
		     const struct image_mkfs_target *t, const struct fs_mkfs_opts *o, struct ubikit_image **out,
		     struct image_mkfs_result *r, char *msg, size_t msglen)
{
	char why[768] = "";
	struct ubikit_image_opts oo = *io;
	oo.flags = (rdwr ? UBIKIT_IMAGE_RDWR : 0) | UBIKIT_IMAGE_NO_MOUNT | UBIKIT_IMAGE_NO_VOLUME;
	oo.vol_name = NULL;
	oo.vol_id = -1;
	struct ubikit_image *img;
	*out = NULL;
	int ret = ubikit_image_open(path, &oo, &img, msg, msglen);
	if (ret)
		return ret;
	if (!img->ubi) {
		ubikit_image_close(img);
		return fail(msg, msglen, -EINVAL, path,
			    "a bare UBIFS image, not flash with UBI: write a new image with -o instead");
	}
	struct ubi_dev_info di;
	ret = ubi_dev_info(img->ubi, &di);
	if (!ret && rdwr && di.read_only) {
		snprintf(why, sizeof(why), "UBI is read-only: %s", di.ro_reason);
		ret = -EROFS;
	}
	if (!ret)
		ret = plan_volume(img, t, o, &di, r, why, sizeof(why));
	/* the geometry: the flash's, and what the user gave must agree */
	uint32_t dev_io = di.min_io_size < 8 ? 8 : di.min_io_size;
	if (!ret && o->bp.min_io_size && (o->bp.min_io_size < 8 ? 8 : o->bp.min_io_size) != dev_io) {
		snprintf(why, sizeof(why), "-m %u does not match the flash's min. I/O unit (%u)", o->bp.min_io_size,
			 di.min_io_size);
		ret = -EINVAL;
	}
	if (!ret && o->bp.leb_size && o->bp.leb_size != r->leb_size) {
		snprintf(why, sizeof(why), "-e %u does not match the LEB size of volume '%s' (%u)", o->bp.leb_size,
			 t->vol_name, r->leb_size);
		ret = -EINVAL;
	}
	if (!ret && r->leb_size % dev_io) {
		snprintf(why, sizeof(why), "the LEB size %u of volume '%s' is not a multiple of the min. I/O unit %u",
			 r->leb_size, t->vol_name, dev_io);
		ret = -EINVAL;
	}
	if (ret) {
		ubikit_image_close(img);
		return fail(msg, msglen, ret, path, why[0] ? why : strerror(-ret));
	}
	*out = img;
	return 0;
}

int image_mkfs_volume(const char *path, const struct ubikit_image_opts *io, const struct image_mkfs_target *t,
		      struct fs_mkfs_opts *o, struct fs_mkfs_stats *st, struct image_mkfs_result *r, char *msg,
		      size_t msglen)
{
	char why[768] = "";
	memset(r, 0, sizeof(*r));
	if (msg && msglen)
		msg[0] = '\0';
	if (!t->vol_name || !*t->vol_name)
		return fail(msg, msglen, -EINVAL, path, "no volume name");
	if (strlen(t->vol_name) > UBI_VOL_NAME_MAX)
		return fail(msg, msglen, -ENAMETOOLONG, path, "the volume name is longer than 127 bytes");
	/* 1. read-only: the plan and the checks (a read-write attach may
	 * already write: EC headers, a UBI image file grown to hold its
	 * volumes), so that a refusal leaves the flash as it was */
	struct ubikit_image *img;
	int ret = open_plan(path, io, 0, t, o, &img, r, msg, msglen);
	if (ret)
		return ret;
	ubikit_image_close(img);
	o->bp.min_io_size = r->min_io_size;
	o->bp.leb_size = r->leb_size;
	int own_max = !o->bp.max_leb_cnt;
	if (own_max)
		o->bp.max_leb_cnt = r->vol_lebs;
	/* 2. build aside: a failure here leaves the flash as it was */
	char tmp[4096];
	struct util_err e;
	util_err_clear(&e);
	uint32_t lebs = o->bp.max_leb_cnt < r->vol_lebs ? o->bp.max_leb_cnt : r->vol_lebs;
	ret = build_tmp(tmp, sizeof(tmp), o, lebs, st, &e);
	char *c_note = own_max ? strstr(e.msg, " (-c)") : NULL;
	if (ret && c_note) /* the limit is the volume, -c was not given */
		snprintf(c_note, sizeof(e.msg) - (size_t)(c_note - e.msg), " (the volume's size)");
	if (ret)
		return fail(msg, msglen, ret, path, e.msg[0] ? e.msg : strerror(-ret));
	/* 3. read-write: the same plan again, then create and/or update */
	struct image_mkfs_result r2;
	memset(&r2, 0, sizeof(r2));
	struct fs_mkfs_opts o2 = *o; /* "all the free space" is less read-write: bad-PEB reserve */
	if (own_max)
		o2.bp.max_leb_cnt = 0;
	ret = open_plan(path, io, 1, t, &o2, &img, &r2, msg, msglen);
	if (!ret && (r2.created != r->created || r2.leb_size != r->leb_size || r2.vol_lebs < st->leb_cnt)) {
		ubikit_image_close(img);
		ret = fail(msg, msglen, -EAGAIN, path, "the flash changed while the file system was made");
	}
	if (ret) {
		unlink(tmp);
		return ret;
	}
	*r = r2;
	if (r->created) {
		struct ubi_mkvol_req req = {.vol_id = t->vol_id >= 0 ? (int)t->vol_id : UBI_VOL_NUM_AUTO,
					    .name = t->vol_name,
					    .leb_count = r->vol_lebs,
					    .vol_type = UBI_VID_DYNAMIC,
					    .alignment = 1};
		ret = ubi_vol_create(img->ubi, &req, &r->vol_id);
		if (ret)
			snprintf(why, sizeof(why), "cannot create volume '%s' (%u LEBs): %s", t->vol_name, r->vol_lebs,
				 ubi_errmsg(img->ubi)[0] ? ubi_errmsg(img->ubi) : strerror(-ret));
	}
	if (!ret)
		ret = update_volume(img->ubi, r->vol_id, tmp, (uint64_t)st->leb_cnt * r->leb_size, why, sizeof(why));
	unlink(tmp);
	char cmsg[512] = "";
	int e2 = ubikit_image_close_msg(img, cmsg, sizeof(cmsg));
	if (ret)
		return fail(msg, msglen, ret, path, why);
	if (e2)
		return fail(msg, msglen, e2, path, cmsg[0] ? cmsg : strerror(-e2));
	return 0;
}
