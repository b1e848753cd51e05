/* tool_image — opening an image for the read tools: options, the stack
 * flash -> UBI (read-only attach) -> volume choice, or the flat UBIFS view,
 * and the read-only mount. Detection itself is in tool_image_detect.c. */
#include "tool_image.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <ubikit/ubikit.h>

#include "flash/flash_sim.h"
#include "ubi/ubi.h"
#include "ubi/ubi_flat.h"
#include "ubifs/ubifs_media.h"
#include "util/util_endian.h"
#include "util/util_err.h"
#include "ubi_tool_num.h"
#include "ubi/ubi_media.h"
#include "util/util_file.h"
#include "util/util_size.h"

void tool_err(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "ubikit %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

struct tool_image *tool_image_open_mounted(const char *cmd, const char *path, const struct tool_image_opts *o)
{
	char msg[1024];
	struct tool_image *img;
	if (tool_image_open(path, o, true, &img, msg, sizeof(msg))) {
		tool_err(cmd, "%s", msg);
		return NULL;
	}
	if (tool_image_mount(img)) {
		tool_err(cmd, "%s: cannot mount UBIFS: %s", path, img->err);
		tool_image_close(img);
		return NULL;
	}
	return img;
}

char *tool_path_join(const char *dir, const char *name)
{
	size_t dl = strlen(dir), nl = strlen(name);
	char *p = malloc(dl + nl + 2);
	if (!p)
		return NULL;
	memcpy(p, dir, dl);
	size_t o = dl;
	if (!dl || dir[dl - 1] != '/')
		p[o++] = '/';
	memcpy(p + o, name, nl + 1);
	return p;
}

void tool_mode_string(uint32_t mode, char out[11])
{
	char t = '?';
	switch (mode & S_IFMT) {
	case S_IFREG: t = '-'; break;
	case S_IFDIR: t = 'd'; break;
	case S_IFLNK: t = 'l'; break;
	case S_IFCHR: t = 'c'; break;
	case S_IFBLK: t = 'b'; break;
	case S_IFIFO: t = 'p'; break;
	case S_IFSOCK: t = 's'; break;
	}
	out[0] = t;
	const char *rwx = "rwxrwxrwx";
	for (int i = 0; i < 9; i++)
		out[1 + i] = (mode & (0400u >> i)) ? rwx[i] : '-';
	if (mode & S_ISUID)
		out[3] = (mode & S_IXUSR) ? 's' : 'S';
	if (mode & S_ISGID)
		out[6] = (mode & S_IXGRP) ? 's' : 'S';
	if (mode & S_ISVTX)
		out[9] = (mode & S_IXOTH) ? 't' : 'T';
	out[10] = '\0';
}

void tool_image_opts_init(struct tool_image_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->with_oob = -1;
	o->vol_id = -1;
}

/* Through the one number parser; 0 is refused where it would silently mean
 * "detect" (an explicit --peb 0 is a mistake, not a request to guess). */
static int parse_u32(const char *cmd, const char *what, const char *arg, bool size, uint32_t min, uint32_t max,
		     uint32_t *out)
{
	char who[64];
	uint64_t v;
	snprintf(who, sizeof(who), "ubikit %s", cmd);
	if (tool_num(who, what, arg, size, min, max, &v))
		return -1;
	*out = (uint32_t)v;
	return 1;
}

int tool_image_opt(struct tool_image_opts *o, int opt, const char *arg, const char *cmd)
{
	switch (opt) {
	case 0x1000:
		if (!strcmp(arg, "ubi"))
			o->kind = TOOL_KIND_UBI;
		else if (!strcmp(arg, "nand-oob") || !strcmp(arg, "oob"))
			o->kind = TOOL_KIND_NAND_OOB;
		else if (!strcmp(arg, "ubifs"))
			o->kind = TOOL_KIND_UBIFS;
		else if (!strcmp(arg, "sim"))
			o->kind = TOOL_KIND_SIM;
		else if (!strcmp(arg, "auto"))
			o->kind = TOOL_KIND_AUTO;
		else {
			tool_err(cmd, "unknown --kind '%s' (ubi, nand-oob, ubifs, sim, auto)", arg);
			return -1;
		}
		return 1;
	case 0x1001:
		return parse_u32(cmd, "--peb", arg, true, 1, UINT32_MAX, &o->peb_size);
	case 0x1002:
		return parse_u32(cmd, "--page", arg, true, 1, UINT32_MAX, &o->page_size);
	case 0x1003:
		o->with_oob = 1;
		return parse_u32(cmd, "--oob", arg, true, 0, UINT32_MAX, &o->oob_size);
	case 0x1004:
		o->with_oob = 1;
		return 1;
	case 0x1005:
		o->with_oob = 0;
		return 1;
	case 0x1006:
		return parse_u32(cmd, "--vid-hdr-offset", arg, false, UBI_HDR_SIZE, UINT32_MAX, &o->vid_hdr_offset);
	case 0x1007:
		return parse_u32(cmd, "--leb-size", arg, true, 1, UINT32_MAX, &o->leb_size);
	case 0x1008:
		o->vol_name = arg;
		return 1;
	case 0x1009: {
		uint32_t v;
		if (parse_u32(cmd, "--vol-id", arg, false, 0, INT32_MAX, &v) < 0)
			return -1;
		o->vol_id = v;
		return 1;
	}
	case 'v':
		o->verbose++;
		return 1;
	}
	return 0;
}

/* Does LEB 0 of this volume start with a UBIFS superblock node? */
static bool vol_has_ubifs(struct ubi_device *ubi, uint32_t vol_id)
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

static void autoresize_view(struct tool_image *img, const struct ubi_vol_info *vi);

static int choose_volume(struct tool_image *img, const struct tool_image_opts *o, bool need_vol)
{
	if (o->vol_name) {
		int id = ubi_vol_find(img->ubi, o->vol_name);
		if (id < 0) {
			snprintf(img->err, sizeof(img->err), "no UBI volume named '%s'", o->vol_name);
			return -ENOENT;
		}
		img->vol_id = (uint32_t)id;
	} else if (o->vol_id >= 0) {
		struct ubi_vol_info vi;
		if (ubi_vol_info(img->ubi, (uint32_t)o->vol_id, &vi)) {
			snprintf(img->err, sizeof(img->err), "no UBI volume with ID %ld", o->vol_id);
			return -ENOENT;
		}
		img->vol_id = (uint32_t)o->vol_id;
	} else {
		uint32_t ids[UBI_MAX_VOLUMES];
		int n = ubi_vol_list(img->ubi, ids, UBI_MAX_VOLUMES);
		if (n < 0) {
			snprintf(img->err, sizeof(img->err), "cannot list volumes: %s", ubi_errmsg(img->ubi));
			return n;
		}
		if (n > UBI_MAX_VOLUMES)
			n = UBI_MAX_VOLUMES;
		int found = -1;
		for (int i = 0; i < n && found < 0; i++)
			if (vol_has_ubifs(img->ubi, ids[i]))
				found = (int)ids[i];
		if (found < 0) {
			if (!need_vol)
				return 0;
			snprintf(img->err, sizeof(img->err),
				 "none of the %d UBI volume(s) holds a UBIFS superblock in LEB 0 (choose one with "
				 "--vol-name/--vol-id)",
				 n);
			return -ENOENT;
		}
		img->vol_id = (uint32_t)found;
	}
	int ret = ubi_volume_io(img->ubi, img->vol_id, &img->inner);
	if (ret) {
		snprintf(img->err, sizeof(img->err), "volume %u: %s", img->vol_id, ubi_errmsg(img->ubi));
		return ret;
	}
	img->vol = img->inner;
	img->have_vol = true;
	struct ubi_vol_info vi;
	if (!ubi_vol_info(img->ubi, img->vol_id, &vi) && (vi.flags & UBI_VTBL_AUTORESIZE_FLG) &&
	    vi.vol_type == UBI_VID_DYNAMIC)
		autoresize_view(img, &vi);
	return 0;
}

/* A volume seen with more LEBs than it has: reads beyond its LEBs are
 * 0xFF (unmapped), writes are refused. Used for a bare image (it holds only
 * the LEBs mkfs.ubifs wrote; flashed, it sits in a volume of up to
 * max_leb_cnt LEBs) and for an autoresize volume (the kernel grows it to
 * every available PEB at its first attach; a read-only attach here does it
 * in memory only). */
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
static void ext_view(struct tool_image *img, uint32_t leb_count)
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

static void bare_view(struct tool_image *img)
{
	struct ubi_vol_io *in = &img->inner;
	uint32_t max_leb = in->leb_count;
	uint8_t *sb = malloc(UBIFS_SB_NODE_SZ);
	if (sb && in->leb_size >= UBIFS_SB_NODE_SZ && in->read(in->ctx, 0, 0, sb, UBIFS_SB_NODE_SZ) == 0) {
		uint32_t m = get_le32(sb + 44);
		if (m > max_leb && m <= (1u << 20))
			max_leb = m;
	}
	free(sb);
	ext_view(img, max_leb);
}

/* The autoresize volume as the kernel has it after its first (read-write)
 * attach: reserved + available PEBs, less the bad-PEB reserve on NAND. */
static void autoresize_view(struct tool_image *img, const struct ubi_vol_info *vi)
{
	struct ubi_dev_info di;
	if (ubi_dev_info(img->ubi, &di) || !di.avail_pebs)
		return;
	uint64_t avail = di.avail_pebs;
	if (img->geo.flash_type == FLASH_NAND) {
		uint64_t limit = ((uint64_t)di.peb_count * UBI_DEFAULT_BEB_PER1024 + 1023) / 1024;
		uint64_t rsvd = limit > di.bad_pebs ? limit - di.bad_pebs : 0;
		avail = avail > rsvd ? avail - rsvd : 0;
	}
	if (!avail)
		return;
	ext_view(img, (uint32_t)(vi->reserved_pebs + avail));
	img->autoresized = img->vol.leb_count;
	char note[160];
	snprintf(note, sizeof(note),
		 " volume %u has the autoresize flag: seen with %u LEBs, as the kernel grows it at attach;", vi->vol_id,
		 img->vol.leb_count);
	size_t l = strlen(img->geo.how);
	snprintf(img->geo.how + l, sizeof(img->geo.how) - l, "%s", note);
}

static int attach(struct tool_image *img, const struct tool_image_opts *o)
{
	struct ubi_attach_opts ao;
	ubi_attach_opts_default(&ao);
	ao.read_only = true;
	ao.autoformat = false;
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

int tool_image_open(const char *path, const struct tool_image_opts *o, bool need_vol, struct tool_image **out,
		    char *msg, size_t msglen)
{
	*out = NULL;
	struct tool_image *img = calloc(1, sizeof(*img));
	if (!img)
		return -ENOMEM;
	img->path = strdup(path);
	if (!img->path) {
		free(img);
		return -ENOMEM;
	}
	/* `ubikit cat IMG f >> IMG` would grow the image while it is read. */
	struct util_file_id ids[2];
	util_file_id_image(path, ids);
	int ret = 0;
	if (util_fd_is_input(STDOUT_FILENO, ids, 2) >= 0) {
		snprintf(img->err, sizeof(img->err), "standard output is the image (or its sidecar) itself");
		ret = -EINVAL;
		goto fail;
	}
	ret = tool_image_detect(path, o, &img->geo, img->err, sizeof(img->err));
	if (ret)
		goto fail;
	if (o->verbose)
		tool_image_print_geo(&img->geo, stderr);

	if (img->geo.kind == TOOL_KIND_UBIFS) {
		struct util_err e;
		util_err_clear(&e);
		ret = ubi_flat_open_err(path, o->leb_size, 1, &img->inner, &e);
		if (ret) {
			snprintf(img->err, sizeof(img->err), "%s", e.msg[0] ? e.msg : strerror(-ret));
			goto fail;
		}
		img->flat = true;
		bare_view(img);
		img->have_vol = true;
		*out = img;
		return 0;
	}

	if (img->geo.kind == TOOL_KIND_SIM) {
		char ferr[256] = "";
		ret = flash_sim_open_ex(path, NULL, o->with_oob == 1, true, &img->flash, ferr, sizeof(ferr));
		if (ret) {
			snprintf(img->err, sizeof(img->err), "cannot open simulator flash %s: %s", path,
				 ferr[0] ? ferr : strerror(-ret));
			goto fail;
		}
		struct flash_geometry *fg = &img->flash->geo;
		img->geo.flash_type = fg->type;
		img->geo.peb_size = fg->peb_size;
		img->geo.peb_count = fg->peb_count;
		img->geo.page_size = fg->page_size;
		img->geo.subpage_size = fg->subpage_size;
		img->geo.oob_size = fg->oob_size;
	} else {
		/* An image file often ends where its data ends (ubinize output),
		 * while UBI needs spare PEBs for its reserves: if the attach runs
		 * out of PEBs, read the image as if it lay on a bigger flash whose
		 * remaining PEBs are erased, as after flashing it onto a device. */
		uint32_t extra = 0;
		/* layout volume (2) + WL and atomic-change reserve (2) */
		if (img->geo.vtbl_pebs && !o->peb_size && img->geo.vtbl_pebs + 4 > img->geo.peb_count &&
		    img->geo.vtbl_pebs < (1u << 20)) /* bound: a corrupt table must not ask for millions */
			extra = img->geo.vtbl_pebs + 4 - img->geo.peb_count;
		for (int attempt = 0;; attempt++) {
			struct flash_geometry fg = {
				.type = img->geo.flash_type,
				.page_size = img->geo.page_size,
				.subpage_size = img->geo.subpage_size,
				.oob_size = img->geo.has_oob ? img->geo.oob_size : 0,
				.peb_size = img->geo.peb_size,
				.peb_count = img->geo.peb_count + extra,
			};
			if (fg.type == FLASH_NAND && !fg.oob_size)
				fg.oob_size = fg.page_size >= 2048 ? fg.page_size / 32 : 16;
			char ferr[256] = "";
			ret = flash_sim_open_ex(path, &fg, img->geo.has_oob, true, &img->flash, ferr, sizeof(ferr));
			if (ret) {
				snprintf(img->err, sizeof(img->err), "cannot open %s as flash (PEB %u x %u, page %u%s): %s",
					 path, fg.peb_size, fg.peb_count, fg.page_size, img->geo.has_oob ? " + OOB" : "",
					 ferr[0] ? ferr : strerror(-ret));
				goto fail;
			}
			ret = attach(img, o);
			if (ret != -ENOSPC || attempt >= 12 || o->peb_size)
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
			size_t l = strlen(img->geo.how);
			snprintf(img->geo.how + l, sizeof(img->geo.how) - l, "%s", note);
			if (o->verbose)
				fprintf(stderr, "note:%s\n", note);
		}
	}
	if (img->geo.kind == TOOL_KIND_SIM)
		ret = attach(img, o);
	if (ret) {
		if (o->keep_flash_on_attach_failure && img->flash) {
			img->ubi = NULL;
			*out = img;
			return 0;
		}
		goto fail;
	}
	if (img->geo.kind == TOOL_KIND_SIM) {
		struct ubi_dev_info di;
		if (!ubi_dev_info(img->ubi, &di)) {
			img->geo.vid_hdr_offset = di.vid_hdr_offset;
			img->geo.data_offset = di.data_offset;
			img->geo.leb_size = di.leb_size;
		}
	}
	ret = choose_volume(img, o, need_vol);
	if (ret)
		goto fail;
	*out = img;
	return 0;
fail:
	snprintf(msg, msglen, "%s: %s", path, img->err[0] ? img->err : strerror(-ret));
	tool_image_close(img);
	return ret ? ret : -EINVAL;
}

int tool_image_mount(struct tool_image *img)
{
	if (img->fs)
		return 0;
	if (!img->have_vol) {
		snprintf(img->err, sizeof(img->err), "no UBIFS volume");
		return -ENOENT;
	}
	struct ubikit_mount_opts mo = {.flags = UBIKIT_MOUNT_RDONLY};
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

void tool_image_close(struct tool_image *img)
{
	if (!img)
		return;
	if (img->fs)
		ubikit_unmount(img->fs);
	if (img->flat)
		ubi_flat_close(&img->inner);
	if (img->ubi)
		ubi_detach(img->ubi);
	if (img->flash)
		flash_close(img->flash);
	free(img->path);
	free(img);
}
