/* cmd_ubi — 'ubikit ubi SUBCOMMAND FLASH ...': UBI volume management on a
 * flash image through the UBI library, like the mtd-utils tools on an
 * attached device:
 *   info    ubinfo -a        (--json for machine-readable output)
 *   mkvol   ubimkvol         rmvol  ubirmvol      rsvol  ubirsvol
 *   rename  ubirename        update ubiupdatevol  read   volume contents out
 * Each command attaches (scan), does its work, syncs (pending erasures
 * done) and detaches. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "flash/flash.h"
#include "image/image.h"
#include "util/util_file.h"
#include "ubi/ubi.h"
#include "ubi_tool_flash.h"
#include "ubi_tool_num.h"

static const char *const prog = "ubikit ubi";

struct ubi_cmd {
	const char *sub;
	struct ubi_tool_geo_opts geo;
	struct ubi_attach_opts aopts;
	bool json;
	/* volume selection and parameters */
	int64_t vol_id; /* -1: not given */
	const char *vol_name;
	uint64_t bytes;
	int64_t lebs; /* -1: not given */
	bool max;
	int vol_type;
	uint32_t alignment;
	uint8_t flags;
	bool truncate;
	const char *out;
	uint64_t update_size; /* -S for update from stdin */
	bool have_update_size;
	char size_opt[32];        /* the size option as typed (-s, --size, -S), for messages */
	/* attached state */
	const char *path;
	struct util_file_id image_ids[2]; /* the flash image and its sidecar */
	struct flash_dev *flash;
	struct ubi_device *ubi;
	struct ubikit_image *img; /* info/read on a plain image file: opened by the image layer */
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: ubikit ubi COMMAND FLASH [options]\n\n"
		"UBI volumes on a flash image (a simulator image, or a raw dump):\n"
		"  info   FLASH [--json]                  the device and its volumes (like ubinfo -a)\n"
		"  mkvol  FLASH -N NAME (-s SIZE|-S LEBS|-m) [-t dynamic|static] [-a ALIGN] [-n ID]\n"
		"                                         [--autoresize] [-k|--skip-check]\n"
		"                                         create a volume (ubimkvol)\n"
		"  rmvol  FLASH (-n ID|-N NAME)           remove a volume (ubirmvol)\n"
		"  rsvol  FLASH (-n ID|-N NAME) (-s SIZE|-S LEBS)  resize a volume (ubirsvol)\n"
		"  rename FLASH OLD NEW [OLD2 NEW2 ...]   rename volumes in one step (ubirename)\n"
		"  update FLASH (-n ID|-N NAME) (FILE|-t) write a whole volume from FILE ('-' = stdin,\n"
		"                                         then -s SIZE is needed), or wipe it with -t\n"
		"                                         (ubiupdatevol)\n"
		"  read   FLASH (-n ID|-N NAME) [-o FILE] the volume contents (dynamic: all LEBs;\n"
		"                                         static: the data) to FILE or stdout\n\n"
		"common options:\n"
		"  -O, --vid-hdr-offset=<num>  VID header offset to attach with (like ubiattach -O)\n"
		"  -b, --max-beb-per1024=<num> bad-PEB reserve per 1024 PEBs (default 20)\n"
		"  --wl-threshold=<num>        wear-leveling threshold (default 4096)\n"
		"  --json                      machine-readable output (info)\n"
		"  -h, --help                  this help\n\n" UBI_TOOL_GEO_HELP);
}

static void json_str(FILE *o, const char *s)
{
	fputc('"', o);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\')
			fprintf(o, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(o, "\\u%04x", ch);
		else
			fputc(ch, o);
	}
	fputc('"', o);
}

/* info and read on an image file without sidecar: the image layer opens it
 * as every read command does (detection of PEB size, offset and UBI device,
 * erased PEBs assumed after the end of an image that ends where its data
 * ends), so what opens for 'ubikit ls' opens here. */
static void image_opts(const struct ubi_cmd *c, struct ubikit_image_opts *o)
{
	ubikit_image_opts_init(o);
	o->flags = UBIKIT_IMAGE_NO_MOUNT | UBIKIT_IMAGE_NO_VOLUME;
	o->peb_size = c->geo.peb;
	o->page_size = c->geo.nor ? 1 : c->geo.page;
	o->oob_size = c->geo.oob;
	if (c->geo.has_oob || c->geo.oob)
		o->with_oob = 1;
	o->vid_hdr_offset = c->aopts.vid_hdr_offset;
}

/* Does the image layer find UBI in this file (else the old path says why not)? */
static bool image_detects(const struct ubi_cmd *c, const char *path)
{
	struct ubikit_image_opts o;
	struct ubikit_image_geo g;
	char msg[512];
	image_opts(c, &o);
	return ubikit_image_detect(path, &o, &g, msg, sizeof(msg)) == 0 &&
	       (g.kind == UBIKIT_IMAGE_UBI || g.kind == UBIKIT_IMAGE_NAND_OOB);
}

static int attach_image(struct ubi_cmd *c, const char *path)
{
	struct ubikit_image_opts o;
	image_opts(c, &o);
	char msg[1100];
	int r = ubikit_image_open(path, &o, &c->img, msg, sizeof(msg));
	if (r) {
		fprintf(stderr, "%s %s: error: cannot attach UBI on %s\n", prog, c->sub, msg);
		c->img = NULL;
		return r;
	}
	if (c->geo.verbose)
		fprintf(stderr, "%s %s: %s\n", prog, c->sub, ubikit_image_geometry(c->img)->how);
	c->ubi = c->img->ubi;
	c->flash = c->img->flash;
	return 0;
}

static int attach(struct ubi_cmd *c, const char *path, bool ro)
{
	char msg[1100];
	c->path = path;
	util_file_id_image(path, c->image_ids);
	struct stat st;
	char side[4096];
	snprintf(side, sizeof(side), "%s.sim", path);
	if (ro && !stat(path, &st) && S_ISREG(st.st_mode) && access(side, F_OK) != 0 &&
	    image_detects(c, path))
		return attach_image(c, path);
	int r = ubi_tool_flash_open(path, &c->geo, ro, &c->flash, msg, sizeof(msg));
	if (r) {
		fprintf(stderr, "%s %s: error: %s\n", prog, c->sub, msg);
		return r;
	}
	c->aopts.read_only = ro;
	r = ubi_attach_msg(c->flash, &c->aopts, &c->ubi, msg, sizeof(msg));
	if (r) {
		fprintf(stderr, "%s %s: error: cannot attach UBI on \"%s\": %s\n", prog, c->sub, path,
			msg[0] ? msg : strerror(-r));
		flash_close(c->flash);
		c->flash = NULL;
	}
	return r;
}

/* Sync (finish erasures), detach and close. Returns 0 or the sync error. */
static int detach(struct ubi_cmd *c, bool sync)
{
	int r = 0;
	if (c->img) {
		ubikit_image_close(c->img); /* read-only: nothing to write */
		c->img = NULL;
		c->ubi = NULL;
		c->flash = NULL;
		return 0;
	}
	if (c->ubi && sync) {
		r = ubi_sync(c->ubi);
		if (r)
			fprintf(stderr, "%s %s: error: sync failed: %s\n", prog, c->sub, ubi_errmsg(c->ubi));
	}
	if (c->ubi)
		ubi_detach(c->ubi);
	c->ubi = NULL;
	if (c->flash) {
		int s = flash_sync(c->flash);
		if (s && !r) {
			const char *m = flash_errmsg(c->flash);
			fprintf(stderr, "%s %s: error: cannot write \"%s\" to disk: %s\n", prog, c->sub, c->path,
				m[0] ? m : strerror(-s));
			r = s;
		}
		flash_close(c->flash);
	}
	c->flash = NULL;
	return r;
}

static int fail_op(struct ubi_cmd *c, int r, const char *what)
{
	const char *m = c->ubi ? ubi_errmsg(c->ubi) : "";
	fprintf(stderr, "%s %s: error: %s: %s%s%s\n", prog, c->sub, what, strerror(-r), m[0] ? ": " : "", m);
	return 1;
}

/* Resolve -n/-N to a volume ID. */
/* Returns the exit status: 0, 2 (usage: no or two selectors) or 1 (no such volume). */
static int select_vol(struct ubi_cmd *c, uint32_t *id)
{
	if (c->vol_id >= 0 && c->vol_name) {
		fprintf(stderr, "%s %s: error: give either -n or -N, not both\n", prog, c->sub);
		return 2;
	}
	if (c->vol_name) {
		int r = ubi_vol_find(c->ubi, c->vol_name);
		if (r < 0) {
			fprintf(stderr, "%s %s: error: no volume named \"%s\"\n", prog, c->sub, c->vol_name);
			return 1;
		}
		*id = (uint32_t)r;
		return 0;
	}
	if (c->vol_id < 0) {
		fprintf(stderr, "%s %s: error: the volume was not given (-n ID or -N NAME)\n", prog, c->sub);
		return 2;
	}
	struct ubi_vol_info vi;
	if (ubi_vol_info(c->ubi, (uint32_t)c->vol_id, &vi)) {
		fprintf(stderr, "%s %s: error: no volume with ID %" PRId64 "\n", prog, c->sub, c->vol_id);
		return 1;
	}
	*id = (uint32_t)c->vol_id;
	return 0;
}

static const char *type_name(uint8_t t)
{
	return t == UBI_VID_STATIC ? "static" : "dynamic";
}

static void print_bytes(FILE *o, uint64_t b)
{
	fprintf(o, "%" PRIu64 " bytes", b);
	if (b >= (1ull << 30))
		fprintf(o, " (%.1f GiB)", (double)b / (1ull << 30));
	else if (b >= (1ull << 20))
		fprintf(o, " (%.1f MiB)", (double)b / (1ull << 20));
	else if (b >= 1024)
		fprintf(o, " (%.1f KiB)", (double)b / 1024);
}

static int do_info(struct ubi_cmd *c)
{
	struct ubi_dev_info di;
	int r = ubi_dev_info(c->ubi, &di);
	if (r)
		return fail_op(c, r, "cannot get device information");
	uint32_t ids[UBI_MAX_VOLUMES];
	int n = ubi_vol_list(c->ubi, ids, UBI_MAX_VOLUMES);
	if (n < 0)
		return fail_op(c, n, "cannot list volumes");
	if (n > UBI_MAX_VOLUMES)
		n = UBI_MAX_VOLUMES;
	FILE *o = stdout;
	if (c->json) {
		fprintf(o,
			"{\n  \"peb_size\": %u,\n  \"peb_count\": %u,\n  \"leb_size\": %u,\n  \"min_io_size\": %u,\n"
			"  \"hdrs_min_io_size\": %u,\n  \"max_write_size\": %u,\n  \"vid_hdr_offset\": %u,\n"
			"  \"data_offset\": %u,\n  \"image_seq\": %u,\n  \"good_pebs\": %u,\n  \"bad_pebs\": %u,\n"
			"  \"corrupt_pebs\": %u,\n  \"alien_pebs\": %u,\n  \"beb_rsvd_pebs\": %u,\n  \"rsvd_pebs\": %u,\n"
			"  \"avail_pebs\": %u,\n  \"free_pebs\": %u,\n  \"min_ec\": %u,\n  \"max_ec\": %u,\n"
			"  \"mean_ec\": %u,\n  \"vtbl_slots\": %u,\n  \"vol_count\": %d,\n  \"next_sqnum\": %" PRIu64
			",\n  \"read_only\": %s,\n  \"volumes\": [",
			di.peb_size, di.peb_count, di.leb_size, di.min_io_size, di.hdrs_min_io_size, di.max_write_size,
			di.vid_hdr_offset, di.data_offset, di.image_seq, di.good_pebs, di.bad_pebs, di.corrupt_pebs,
			di.alien_pebs, di.beb_rsvd_pebs, di.rsvd_pebs, di.avail_pebs, di.free_pebs, di.min_ec,
			di.max_ec, di.mean_ec, di.vtbl_slots, n, di.next_sqnum, di.read_only ? "true" : "false");
	} else {
		fprintf(o, "UBI device (ubikit)\n");
		fprintf(o, "Volumes count:                           %d\n", n);
		fprintf(o, "Logical eraseblock size:                 ");
		print_bytes(o, di.leb_size);
		fprintf(o, "\nTotal amount of logical eraseblocks:     %u (", di.good_pebs);
		print_bytes(o, (uint64_t)di.good_pebs * di.leb_size);
		fprintf(o, ")\nAmount of available logical eraseblocks: %u (", di.avail_pebs);
		print_bytes(o, (uint64_t)di.avail_pebs * di.leb_size);
		fprintf(o, ")\nMaximum count of volumes                 %u\n", di.vtbl_slots);
		fprintf(o, "Count of bad physical eraseblocks:       %u\n", di.bad_pebs);
		fprintf(o, "Count of reserved physical eraseblocks:  %u\n", di.beb_rsvd_pebs);
		fprintf(o, "Current maximum erase counter value:     %u\n", di.max_ec);
		fprintf(o, "Minimum input/output unit size:          %u bytes\n", di.min_io_size);
		fprintf(o, "Sub-page size:                           %u bytes\n", di.hdrs_min_io_size);
		fprintf(o, "PEB size / count:                        %u bytes / %u\n", di.peb_size, di.peb_count);
		fprintf(o, "VID header offset / data offset:         %u / %u\n", di.vid_hdr_offset, di.data_offset);
		fprintf(o, "Image sequence number:                   %u\n", di.image_seq);
		fprintf(o, "Erase counters min / mean / max:         %u / %u / %u\n", di.min_ec, di.mean_ec,
			di.max_ec);
		fprintf(o, "Corrupted / alien PEBs:                  %u / %u\n", di.corrupt_pebs, di.alien_pebs);
		if (di.read_only)
			fprintf(o, "Read-only:                               yes (%s)\n",
				di.ro_reason[0] ? di.ro_reason : "as requested");
	}
	for (int i = 0; i < n; i++) {
		struct ubi_vol_info vi;
		r = ubi_vol_info(c->ubi, ids[i], &vi);
		if (r)
			return fail_op(c, r, "cannot get volume information");
		if (c->json) {
			fprintf(o, "%s\n    {\"vol_id\": %u, \"name\": ", i ? "," : "", vi.vol_id);
			json_str(o, vi.name);
			fprintf(o,
				", \"type\": \"%s\", \"reserved_lebs\": %u, \"alignment\": %u, \"data_pad\": %u, "
				"\"usable_leb_size\": %u, \"used_ebs\": %u, \"last_eb_bytes\": %u, \"used_bytes\": "
				"%" PRIu64 ", \"size_bytes\": %" PRIu64 ", \"mapped_lebs\": %u, \"autoresize\": %s, "
				"\"skip_check\": %s, \"upd_marker\": %s, \"corrupted\": %s}",
				type_name(vi.vol_type), vi.reserved_pebs, vi.alignment, vi.data_pad, vi.usable_leb_size,
				vi.used_ebs, vi.last_eb_bytes, vi.used_bytes,
				(uint64_t)vi.reserved_pebs * vi.usable_leb_size, vi.mapped_lebs,
				vi.flags & UBI_VTBL_AUTORESIZE_FLG ? "true" : "false",
				vi.flags & UBI_VTBL_SKIP_CRC_CHECK_FLG ? "true" : "false",
				vi.upd_marker ? "true" : "false", vi.corrupted ? "true" : "false");
		} else {
			fprintf(o, "\nVolume ID:   %u (on ubi0)\nType:        %s\nAlignment:   %u\nSize:        %u LEBs (",
				vi.vol_id, type_name(vi.vol_type), vi.alignment, vi.reserved_pebs);
			print_bytes(o, (uint64_t)vi.reserved_pebs * vi.usable_leb_size);
			fprintf(o, ")\nState:       %s\nName:        %s\n",
				vi.upd_marker ? "update interrupted" : vi.corrupted ? "corrupted" : "OK", vi.name);
			if (vi.vol_type == UBI_VID_STATIC) {
				fprintf(o, "Data bytes:  ");
				print_bytes(o, vi.used_bytes);
				fprintf(o, "\n");
			}
			fprintf(o, "Mapped LEBs: %u\n", vi.mapped_lebs);
			if (vi.flags)
				fprintf(o, "Flags:       %s%s\n", vi.flags & UBI_VTBL_AUTORESIZE_FLG ? "autoresize " : "",
					vi.flags & UBI_VTBL_SKIP_CRC_CHECK_FLG ? "skip-check" : "");
		}
	}
	if (c->json)
		fprintf(o, "%s]\n}\n", n ? "\n  " : "");
	return 0;
}

/* LEB count for -s bytes / -S lebs / -m. */
static int want_lebs(struct ubi_cmd *c, uint32_t usable, uint32_t avail_extra, uint32_t *lebs)
{
	int given = (c->bytes > 0) + (c->lebs >= 0) + c->max;
	if (given != 1) {
		fprintf(stderr, "%s %s: error: give exactly one of -s SIZE, -S LEBS%s\n", prog, c->sub,
			!strcmp(c->sub, "mkvol") ? " or -m" : "");
		return -EINVAL;
	}
	uint64_t n;
	if (c->max)
		n = avail_extra;
	else if (c->lebs >= 0)
		n = (uint64_t)c->lebs;
	else
		n = (c->bytes + usable - 1) / usable;
	if (n == 0 || n > UINT32_MAX) {
		fprintf(stderr, "%s %s: error: the volume size must be at least one LEB (%u bytes)%s\n", prog, c->sub,
			usable, c->max ? ": no space left on the device" : "");
		return -EINVAL;
	}
	*lebs = (uint32_t)n;
	return 0;
}

static int do_mkvol(struct ubi_cmd *c)
{
	struct ubi_dev_info di;
	int r = ubi_dev_info(c->ubi, &di);
	if (r)
		return fail_op(c, r, "cannot get device information");
	if (!c->vol_name || !*c->vol_name) {
		fprintf(stderr, "%s mkvol: error: the volume name was not given (-N NAME)\n", prog);
		return 2;
	}
	uint32_t align = c->alignment ? c->alignment : 1;
	if (align > di.leb_size) {
		fprintf(stderr, "%s mkvol: error: alignment %u is larger than the LEB size %u\n", prog, align,
			di.leb_size);
		return 2;
	}
	uint32_t usable = di.leb_size - di.leb_size % align;
	uint32_t lebs;
	if (want_lebs(c, usable, di.avail_pebs, &lebs))
		return 2;
	struct ubi_mkvol_req req = {.vol_id = c->vol_id >= 0 ? (int)c->vol_id : UBI_VOL_NUM_AUTO,
				    .name = c->vol_name,
				    .leb_count = lebs,
				    .vol_type = (uint8_t)c->vol_type,
				    .alignment = align,
				    .flags = c->flags};
	uint32_t id;
	r = ubi_vol_create(c->ubi, &req, &id);
	if (r)
		return fail_op(c, r, "cannot create the volume");
	printf("Volume ID %u, size %u LEBs (", id, lebs);
	print_bytes(stdout, (uint64_t)lebs * usable);
	printf("), LEB size ");
	print_bytes(stdout, usable);
	printf(", %s, name \"%s\", alignment %u\n", type_name(req.vol_type), c->vol_name, align);
	return 0;
}

static int do_rmvol(struct ubi_cmd *c)
{
	uint32_t id;
	int sel = select_vol(c, &id);
	if (sel)
		return sel;
	int r = ubi_vol_remove(c->ubi, id);
	if (r)
		return fail_op(c, r, "cannot remove the volume");
	return 0;
}

static int do_rsvol(struct ubi_cmd *c)
{
	uint32_t id;
	int sel = select_vol(c, &id);
	if (sel)
		return sel;
	struct ubi_vol_info vi;
	int r = ubi_vol_info(c->ubi, id, &vi);
	if (r)
		return fail_op(c, r, "cannot get volume information");
	uint32_t lebs;
	if (c->max) {
		fprintf(stderr, "%s rsvol: error: -m is not supported by rsvol; give -s or -S\n", prog);
		return 2;
	}
	if (want_lebs(c, vi.usable_leb_size, 0, &lebs))
		return 2;
	r = ubi_vol_resize(c->ubi, id, lebs);
	if (r)
		return fail_op(c, r, "cannot resize the volume");
	return 0;
}

static int do_rename(struct ubi_cmd *c, char **pairs, int npairs)
{
	if (npairs < 2 || npairs % 2) {
		fprintf(stderr, "%s rename: error: give OLD NEW name pairs\n", prog);
		return 2;
	}
	size_t n = (size_t)npairs / 2;
	struct ubi_rename_req *req = calloc(n, sizeof(*req));
	int *taken = calloc(n, sizeof(*taken)); /* volume whose name pair i takes, or -1 */
	if (!req || !taken) {
		free(req);
		free(taken);
		return 1;
	}
	int ret = 1;
	for (size_t i = 0; i < n; i++) {
		int id = ubi_vol_find(c->ubi, pairs[2 * i]);
		if (id < 0) {
			fprintf(stderr, "%s rename: error: no volume named \"%s\"\n", prog, pairs[2 * i]);
			goto out;
		}
		req[i].vol_id = (uint32_t)id;
		req[i].new_name = pairs[2 * i + 1];
	}
	for (size_t i = 0; i < n; i++) {
		taken[i] = ubi_vol_find(c->ubi, req[i].new_name);
		for (size_t j = 0; j < n && taken[i] >= 0; j++)
			if ((uint32_t)taken[i] == req[j].vol_id)
				taken[i] = -1; /* renamed away itself, or renamed to its own name */
	}
	int r = ubi_vol_rename(c->ubi, req, n);
	if (r) {
		fail_op(c, r, "cannot rename");
		goto out;
	}
	/* As in the kernel, a volume whose name a rename takes (and that is
	 * not itself renamed) is removed; say so, it is not undoable. */
	for (size_t i = 0; i < n; i++)
		if (taken[i] >= 0)
			fprintf(stderr, "%s rename: volume %d \"%s\" was removed: its name now belongs to volume %u\n",
				prog, taken[i], req[i].new_name, req[i].vol_id);
	ret = 0;
out:
	free(req);
	free(taken);
	return ret;
}

/* Read the whole input once before the volume is wiped: an unreadable or
 * shrinking file fails here, with the volume untouched. Leaves fd at 0. */
static int read_all_check(int fd, const char *file, uint64_t size, uint8_t *buf, size_t bufsz)
{
	uint64_t left = size;
	while (left) {
		ssize_t got = read(fd, buf, left < bufsz ? (size_t)left : bufsz);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			fprintf(stderr, "%s update: error: cannot read \"%s\"%s%s; the volume was not changed\n", prog,
				file, got < 0 ? ": " : " (it is shorter than its size)", got < 0 ? strerror(errno) : "");
			return -1;
		}
		left -= (uint64_t)got;
	}
	if (lseek(fd, 0, SEEK_SET) < 0) {
		fprintf(stderr, "%s update: error: cannot rewind \"%s\": %s\n", prog, file, strerror(errno));
		return -1;
	}
	return 0;
}

static int do_update(struct ubi_cmd *c, const char *file)
{
	uint32_t id;
	int sel = select_vol(c, &id);
	if (sel)
		return sel;
	int r;
	if (c->truncate) {
		if (file) {
			fprintf(stderr, "%s update: error: -t takes no input file\n", prog);
			return 2;
		}
		r = ubi_vol_update(c->ubi, id, NULL, 0);
		if (r)
			return fail_op(c, r, "cannot wipe the volume");
		return 0;
	}
	if (!file) {
		fprintf(stderr, "%s update: error: give the input file (or -t to wipe the volume)\n", prog);
		return 2;
	}
	int fd = strcmp(file, "-") ? open(file, O_RDONLY | O_CLOEXEC) : STDIN_FILENO;
	if (fd < 0) {
		fprintf(stderr, "%s update: error: cannot open \"%s\": %s\n", prog, file, strerror(errno));
		return 1;
	}
	/* Everything about the input is checked before the volume is wiped. */
	if (util_fd_is_input(fd, c->image_ids, 2) >= 0) {
		fprintf(stderr, "%s update: error: \"%s\" is the flash image \"%s\" (or its sidecar) itself\n", prog,
			file, c->path);
		if (fd != STDIN_FILENO)
			close(fd);
		return 1;
	}
	uint64_t size;
	bool regular = false;
	if (c->bytes && !c->have_update_size) { /* ubiupdatevol spells it -s */
		c->update_size = c->bytes;
		c->have_update_size = true;
	}
	if (fd == STDIN_FILENO) {
		if (!c->have_update_size) {
			fprintf(stderr, "%s update: error: reading stdin needs -s SIZE (or -S SIZE)\n", prog);
			return 2;
		}
		size = c->update_size;
	} else {
		struct stat st;
		if (fstat(fd, &st)) {
			fprintf(stderr, "%s update: error: cannot stat \"%s\": %s\n", prog, file, strerror(errno));
			close(fd);
			return 1;
		}
		if (S_ISDIR(st.st_mode) || (!S_ISREG(st.st_mode) && !c->have_update_size)) {
			fprintf(stderr, "%s update: error: \"%s\" is %s; the volume was not changed\n", prog, file,
				S_ISDIR(st.st_mode) ? "a directory, not a file"
						    : "not a regular file: give its size with -s SIZE");
			close(fd);
			return S_ISDIR(st.st_mode) ? 1 : 2;
		}
		regular = S_ISREG(st.st_mode);
		size = regular ? (uint64_t)st.st_size : c->update_size;
		if (c->have_update_size && c->update_size != size && S_ISREG(st.st_mode)) {
			fprintf(stderr, "%s update: error: %s %" PRIu64 " differs from the size of \"%s\" (%" PRIu64 ")\n",
				prog, c->size_opt, c->update_size, file, size);
			close(fd);
			return 2;
		}
	}
	struct ubi_vol_info vi;
	r = ubi_vol_info(c->ubi, id, &vi);
	if (!r && size > (uint64_t)vi.reserved_pebs * vi.usable_leb_size) {
		fprintf(stderr, "%s update: error: \"%s\" (%" PRIu64 " bytes) does not fit volume %u (%" PRIu64
				" bytes)\n",
			prog, file, size, id, (uint64_t)vi.reserved_pebs * vi.usable_leb_size);
		if (fd != STDIN_FILENO)
			close(fd);
		return 1;
	}
	int ret = 1;
	size_t bufsz = 1u << 20;
	uint8_t *buf = malloc(bufsz);
	if (!buf)
		goto out;
	if (regular && read_all_check(fd, file, size, buf, bufsz))
		goto out;
	r = ubi_vol_update_start(c->ubi, id, size);
	if (r) {
		fail_op(c, r, "cannot start the volume update");
		goto out;
	}
	uint64_t left = size;
	while (left) {
		size_t want = left < bufsz ? (size_t)left : bufsz;
		ssize_t got = read(fd, buf, want);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			fprintf(stderr,
				"%s update: error: \"%s\" ended %" PRIu64 " bytes early%s%s; volume %u keeps its "
				"update marker (shown as \"update interrupted\"): run the update again\n",
				prog, file, left, got < 0 ? ": " : "", got < 0 ? strerror(errno) : "", id);
			goto out;
		}
		r = ubi_vol_update_write(c->ubi, id, buf, (size_t)got);
		if (r) {
			fail_op(c, r, "volume update write failed (the volume keeps its update marker)");
			goto out;
		}
		left -= (uint64_t)got;
	}
	ret = 0;
out:
	free(buf);
	if (fd != STDIN_FILENO)
		close(fd);
	return ret;
}

static int do_read(struct ubi_cmd *c)
{
	uint32_t id;
	int sel = select_vol(c, &id);
	if (sel)
		return sel;
	struct ubi_vol_info vi;
	int r = ubi_vol_info(c->ubi, id, &vi);
	if (r)
		return fail_op(c, r, "cannot get volume information");
	/* Never hand out other bytes: an interrupted update, or a static
	 * volume that misses LEBs or fails its data CRCs, is an error (the
	 * kernel refuses the first, and marks the second corrupted). */
	r = ubi_vol_check(c->ubi, id);
	if (r) {
		char what[64];
		snprintf(what, sizeof(what), "volume %u cannot be read", id);
		return fail_op(c, r, what);
	}
	FILE *o = stdout;
	const char *names[2] = {c->path, "its sidecar"};
	if (c->out && strcmp(c->out, "-")) {
		struct util_err e;
		int fd = util_open_output(c->out, c->image_ids, names, 2, &e);
		o = fd >= 0 ? fdopen(fd, "wb") : NULL;
		if (!o) {
			fprintf(stderr, "%s read: error: %s\n", prog, fd < 0 ? e.msg : strerror(errno));
			if (fd >= 0)
				close(fd);
			return 1;
		}
	} else if (util_fd_is_input(STDOUT_FILENO, c->image_ids, 2) >= 0) {
		fprintf(stderr, "%s read: error: standard output is the flash image \"%s\" (or its sidecar)\n", prog,
			c->path);
		return 1;
	}
	uint8_t *buf = malloc(vi.usable_leb_size);
	int ret = 1;
	if (!buf)
		goto out;
	uint64_t left = vi.vol_type == UBI_VID_STATIC ? vi.used_bytes
						      : (uint64_t)vi.reserved_pebs * vi.usable_leb_size;
	for (uint32_t l = 0; left; l++) {
		size_t len = left < vi.usable_leb_size ? (size_t)left : vi.usable_leb_size;
		r = ubi_leb_read(c->ubi, id, l, 0, buf, len);
		if (r) {
			char what[64];
			snprintf(what, sizeof(what), "cannot read LEB %u of volume %u", l, id);
			fail_op(c, r, what);
			goto out;
		}
		if (fwrite(buf, 1, len, o) != len) {
			fprintf(stderr, "%s read: error: write failed: %s\n", prog, strerror(errno));
			goto out;
		}
		left -= len;
	}
	ret = 0;
out:
	free(buf);
	if (o != stdout) {
		if (fclose(o) && !ret) {
			fprintf(stderr, "%s read: error: cannot write \"%s\"\n", prog, c->out);
			ret = 1;
		}
	} else if (fflush(o)) {
		ret = 1;
	}
	return ret;
}

int cmd_ubi(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	static const char *const subs[] = {"info", "mkvol", "rmvol", "rsvol", "rename", "update", "read"};
	struct ubi_cmd c = {.vol_id = -1, .lebs = -1, .vol_type = UBI_VID_DYNAMIC};
	for (size_t i = 0; i < sizeof(subs) / sizeof(subs[0]); i++)
		if (!strcmp(argv[1], subs[i]))
			c.sub = subs[i];
	if (!c.sub) {
		fprintf(stderr, "%s: error: unknown command \"%s\" (try 'ubikit ubi --help')\n", prog, argv[1]);
		return 2;
	}
	ubi_attach_opts_default(&c.aopts);
	enum { OPT_JSON = 0x300, OPT_WL, OPT_AUTORESIZE, OPT_SKIPCHECK };
	static const struct option longopts[] = {{"json", no_argument, NULL, OPT_JSON},
						 {"wl-threshold", required_argument, NULL, OPT_WL},
						 {"autoresize", no_argument, NULL, OPT_AUTORESIZE},
						 {"skip-check", no_argument, NULL, OPT_SKIPCHECK},
						 {"skipcheck", no_argument, NULL, OPT_SKIPCHECK},
						 {"vid-hdr-offset", required_argument, NULL, 'O'},
						 {"max-beb-per1024", required_argument, NULL, 'b'},
						 {"name", required_argument, NULL, 'N'},
						 {"vol_id", required_argument, NULL, 'n'},
						 {"vol-id", required_argument, NULL, 'n'},
						 {"size", required_argument, NULL, 's'},
						 {"lebs", required_argument, NULL, 'S'},
						 {"maxavsize", no_argument, NULL, 'm'},
						 {"type", required_argument, NULL, 't'},
						 {"alignment", required_argument, NULL, 'a'},
						 {"truncate", no_argument, NULL, 'T'},
						 {"output", required_argument, NULL, 'o'},
						 {"help", no_argument, NULL, 'h'},
						 UBI_TOOL_GEO_LONGOPTS,
						 {NULL, 0, NULL, 0}};
	/* -t means "type" for mkvol and "truncate" for update (as in mtd-utils). */
	bool is_update = !strcmp(c.sub, "update");
	optind = 1;
	int ch;
	uint64_t v;
	int64_t sv;
	const char *optstr = is_update ? "O:b:N:n:s:S:mta:o:hvk" : "O:b:N:n:s:S:mt:a:o:hvk";
	while ((ch = getopt_long(argc - 1, argv + 1, optstr, longopts, NULL)) != -1) {
		int r = ubi_tool_geo_opt(&c.geo, ch, optarg, prog);
		if (r < 0)
			return 2;
		if (r)
			continue;
		switch (ch) {
		case OPT_JSON:
			c.json = true;
			break;
		case OPT_WL:
			if (!ubi_tool_parse_u64(optarg, &v) || !v || v > UBI_MAX_ERASECOUNTER)
				goto badval;
			c.aopts.wl_threshold = (uint32_t)v;
			break;
		case OPT_AUTORESIZE:
			c.flags |= UBI_VTBL_AUTORESIZE_FLG;
			break;
		case OPT_SKIPCHECK:
		case 'k': /* ubimkvol -k, --skipcheck */
			c.flags |= UBI_VTBL_SKIP_CRC_CHECK_FLG;
			break;
		case 'O':
			if (!ubi_tool_parse_u64(optarg, &v) || v > INT32_MAX)
				goto badval;
			c.aopts.vid_hdr_offset = (uint32_t)v;
			break;
		case 'b':
			if (!ubi_tool_parse_u64(optarg, &v) || v > 768)
				goto badval;
			c.aopts.beb_per1024 = (int)v;
			break;
		case 'N':
			c.vol_name = optarg;
			break;
		case 'n':
			if (!ubi_tool_parse_i64(optarg, &sv) || sv < 0 || sv >= UBI_MAX_VOLUMES)
				goto badval;
			c.vol_id = sv;
			break;
		case 's':
			if (!ubi_tool_parse_bytes(optarg, &c.bytes) || !c.bytes)
				goto badval;
			if (!c.have_update_size)
				tool_opt_typed(argv + 1, optind, optarg, ch, c.size_opt, sizeof(c.size_opt));
			break;
		case 'S':
			if (is_update) {
				tool_opt_typed(argv + 1, optind, optarg, ch, c.size_opt, sizeof(c.size_opt));
				if (!ubi_tool_parse_bytes(optarg, &c.update_size))
					goto badval;
				c.have_update_size = true;
			} else {
				if (!ubi_tool_parse_u64(optarg, &v) || !v || v > UINT32_MAX)
					goto badval;
				c.lebs = (int64_t)v;
			}
			break;
		case 'm':
			c.max = true;
			break;
		case 't':
			if (is_update) {
				c.truncate = true;
				break;
			}
			if (!strcmp(optarg, "static"))
				c.vol_type = UBI_VID_STATIC;
			else if (!strcmp(optarg, "dynamic"))
				c.vol_type = UBI_VID_DYNAMIC;
			else
				goto badval;
			break;
		case 'T':
			c.truncate = true;
			break;
		case 'a':
			if (!ubi_tool_parse_u64(optarg, &v) || !v || v > UINT32_MAX)
				goto badval;
			c.alignment = (uint32_t)v;
			break;
		case 'o':
			c.out = optarg;
			break;
		case 'v':
			c.geo.verbose = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			fprintf(stderr, "Try 'ubikit ubi --help'\n");
			return 2;
		}
		continue;
	badval: {
		char typed[64];
		fprintf(stderr, "%s %s: error: bad value \"%s\" for option %s\n", prog, c.sub, optarg,
			tool_opt_typed(argv + 1, optind, optarg, ch, typed, sizeof(typed)));
		return 2;
	}
	}
	/* Positional: FLASH, then command-specific words. */
	int npos = argc - 1 - optind;
	char **pos = argv + 1 + optind;
	if (npos < 1) {
		fprintf(stderr, "%s %s: error: the flash image was not given\n", prog, c.sub);
		return 2;
	}
	const char *path = pos[0];
	bool ro = !strcmp(c.sub, "info") || !strcmp(c.sub, "read");
	bool rename = !strcmp(c.sub, "rename");
	if (!rename && npos > (is_update ? 2 : 1)) {
		fprintf(stderr, "%s %s: error: unexpected argument \"%s\"\n", prog, c.sub, pos[is_update ? 2 : 1]);
		return 2;
	}
	if (attach(&c, path, ro))
		return 1;
	int ret;
	if (!strcmp(c.sub, "info"))
		ret = do_info(&c);
	else if (!strcmp(c.sub, "mkvol"))
		ret = do_mkvol(&c);
	else if (!strcmp(c.sub, "rmvol"))
		ret = do_rmvol(&c);
	else if (!strcmp(c.sub, "rsvol"))
		ret = do_rsvol(&c);
	else if (rename)
		ret = do_rename(&c, pos + 1, npos - 1);
	else if (is_update)
		ret = do_update(&c, npos > 1 ? pos[1] : NULL);
	else
		ret = do_read(&c);
	int r = detach(&c, !ro);
	return ret ? ret : r ? 1 : 0;
}
