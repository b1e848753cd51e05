/* cmd_info — 'ubikit info IMAGE [--json]': what the image is (kind and
 * geometry, how it was detected), the UBI device and volume table, the
 * UBIFS superblock and master node, space used, and the mkfs.ubifs and
 * ubinize command lines (and ini) that would recreate an image like it. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ubikit/ubikit.h>

#include "commands.h"
#include "fs/fs.h"
#include "tool_image.h"
#include "image/image.h"
#include "tool_out.h"
#include "ubi/ubi.h"
#include "ubifs/ubifs.h"

static void info_usage(FILE *out)
{
	fprintf(out, "usage: ubikit info [--json] [image options] IMAGE\n"
		     "Describe IMAGE: kind and geometry, UBI device and volumes, UBIFS superblock\n"
		     "and master node, space used, and how to recreate it with mtd-utils.\n"
		     "  --json      machine-readable output\n"
		     "  -h, --help  this help\n" TOOL_IMAGE_OPTS_HELP);
}

static void out_geo(struct tool_out *o, const struct ubikit_image_geo *g)
{
	tool_out_obj(o, "image");
	tool_out_str(o, "kind", ubikit_image_kind_name(g->kind));
	tool_out_u64(o, "file_size", g->file_size);
	if (g->kind == UBIKIT_IMAGE_UBIFS) {
		tool_out_u64(o, "leb_size", g->leb_size);
		tool_out_u64(o, "min_io_size", g->page_size);
		tool_out_u64(o, "lebs_in_file", g->peb_count);
	} else {
		tool_out_str(o, "flash_type", g->flash_type == UBIKIT_IMAGE_FLASH_NOR ? "NOR" : "NAND");
		tool_out_u64(o, "peb_size", g->peb_size);
		tool_out_u64(o, "peb_count", g->peb_count);
		tool_out_u64(o, "min_io_size", g->page_size);
		tool_out_u64(o, "subpage_size", g->subpage_size);
		tool_out_bool(o, "has_oob", g->has_oob);
		if (g->has_oob) {
			tool_out_u64(o, "oob_size", g->oob_size);
			tool_out_u64(o, "peb_stride", g->peb_stride);
		}
		tool_out_u64(o, "vid_hdr_offset", g->vid_hdr_offset);
		tool_out_u64(o, "data_offset", g->data_offset);
		tool_out_u64(o, "leb_size", g->leb_size);
	}
	if (g->how[0])
		tool_out_str(o, "detected", g->how);
	if (g->kind == UBIKIT_IMAGE_UBI || g->kind == UBIKIT_IMAGE_NAND_OOB) {
		tool_out_u64(o, "ubi_offset", g->offset);
		tool_out_arr(o, "ubi_devices");
		for (int i = 0; i < g->ubi_dev_count && i < UBIKIT_IMAGE_MAX_UBI_DEVS; i++) {
			const struct ubikit_image_ubi_dev *d = &g->ubi_devs[i];
			tool_out_obj(o, NULL);
			tool_out_u64(o, "index", (uint64_t)i);
			tool_out_u64(o, "offset", d->offset);
			tool_out_u64(o, "size", d->size);
			tool_out_u64(o, "peb_stride", d->peb_stride);
			tool_out_u64(o, "ec_headers", d->ec_headers);
			tool_out_hex(o, "image_seq", d->image_seq);
			tool_out_bool(o, "chosen", i == g->ubi_dev_index);
			tool_out_end(o);
		}
		tool_out_end(o);
	}
	tool_out_end(o);
}

static const char *vol_type_name(uint8_t t)
{
	return t == UBI_VID_STATIC ? "static" : "dynamic";
}

static void out_ubi(struct tool_out *o, struct ubikit_image *img, bool *vol_is_ubifs)
{
	struct ubi_dev_info di;
	if (ubi_dev_info(img->ubi, &di))
		return;
	tool_out_obj(o, "ubi");
	tool_out_u64(o, "peb_size", di.peb_size);
	tool_out_u64(o, "peb_count", di.peb_count);
	tool_out_u64(o, "leb_size", di.leb_size);
	tool_out_u64(o, "min_io_size", di.min_io_size);
	tool_out_u64(o, "hdrs_min_io_size", di.hdrs_min_io_size);
	tool_out_u64(o, "vid_hdr_offset", di.vid_hdr_offset);
	tool_out_u64(o, "data_offset", di.data_offset);
	tool_out_hex(o, "image_seq", di.image_seq);
	tool_out_u64(o, "good_pebs", di.good_pebs);
	tool_out_u64(o, "bad_pebs", di.bad_pebs);
	tool_out_u64(o, "corrupt_pebs", di.corrupt_pebs);
	tool_out_u64(o, "alien_pebs", di.alien_pebs);
	tool_out_u64(o, "beb_rsvd_pebs", di.beb_rsvd_pebs);
	tool_out_u64(o, "avail_pebs", di.avail_pebs);
	tool_out_u64(o, "free_pebs", di.free_pebs);
	tool_out_u64(o, "erase_pending", di.erase_pending);
	tool_out_u64(o, "min_ec", di.min_ec);
	tool_out_u64(o, "max_ec", di.max_ec);
	tool_out_u64(o, "mean_ec", di.mean_ec);
	tool_out_u64(o, "vtbl_slots", di.vtbl_slots);
	tool_out_u64(o, "volume_count", di.vol_count);
	tool_out_arr(o, "volumes");
	uint32_t ids[UBI_MAX_VOLUMES];
	int n = ubi_vol_list(img->ubi, ids, UBI_MAX_VOLUMES);
	for (int i = 0; i < n && i < UBI_MAX_VOLUMES; i++) {
		struct ubi_vol_info vi;
		if (ubi_vol_info(img->ubi, ids[i], &vi))
			continue;
		tool_out_obj(o, NULL);
		tool_out_u64(o, "id", vi.vol_id);
		tool_out_str(o, "name", vi.name);
		tool_out_str(o, "type", vol_type_name(vi.vol_type));
		tool_out_u64(o, "reserved_lebs", vi.reserved_pebs);
		tool_out_u64(o, "size_bytes", (uint64_t)vi.reserved_pebs * vi.usable_leb_size);
		tool_out_u64(o, "usable_leb_size", vi.usable_leb_size);
		tool_out_u64(o, "alignment", vi.alignment);
		tool_out_u64(o, "data_pad", vi.data_pad);
		tool_out_u64(o, "mapped_lebs", vi.mapped_lebs);
		if (vi.vol_type == UBI_VID_STATIC) {
			tool_out_u64(o, "used_ebs", vi.used_ebs);
			tool_out_u64(o, "used_bytes", vi.used_bytes);
		}
		tool_out_bool(o, "autoresize", vi.flags & UBI_VTBL_AUTORESIZE_FLG);
		tool_out_bool(o, "update_marker", vi.upd_marker);
		tool_out_bool(o, "corrupted", vi.corrupted);
		tool_out_bool(o, "chosen", img->have_vol && img->vol_id == vi.vol_id);
		tool_out_end(o);
	}
	tool_out_end(o);
	tool_out_end(o);
	*vol_is_ubifs = img->have_vol;
}

static const char *compr_opt(unsigned c)
{
	switch (c) {
	case 0: return "none";
	case 1: return "lzo";
	case 2: return "zlib";
	case 3: return "zstd";
	default: return "?";
	}
}

static void out_sb(struct tool_out *o, const struct ubifs_sb_node *sb)
{
	tool_out_obj(o, "superblock");
	tool_out_u64(o, "fmt_version", sb->fmt_version);
	tool_out_u64(o, "ro_compat_version", sb->ro_compat_version);
	tool_out_u64(o, "min_io_size", sb->min_io_size);
	tool_out_u64(o, "leb_size", sb->leb_size);
	tool_out_u64(o, "leb_cnt", sb->leb_cnt);
	tool_out_u64(o, "max_leb_cnt", sb->max_leb_cnt);
	tool_out_u64(o, "max_bud_bytes", sb->max_bud_bytes);
	tool_out_u64(o, "log_lebs", sb->log_lebs);
	tool_out_u64(o, "lpt_lebs", sb->lpt_lebs);
	tool_out_u64(o, "orph_lebs", sb->orph_lebs);
	tool_out_u64(o, "jhead_cnt", sb->jhead_cnt);
	tool_out_u64(o, "fanout", sb->fanout);
	tool_out_u64(o, "lsave_cnt", sb->lsave_cnt);
	tool_out_str(o, "default_compr", compr_opt(sb->default_compr));
	tool_out_str(o, "key_hash", sb->key_hash == 1 ? "test" : "r5");
	tool_out_hex(o, "flags", sb->flags);
	tool_out_bool(o, "big_lpt", sb->flags & UBIFS_FLG_BIGLPT);
	tool_out_bool(o, "space_fixup", sb->flags & UBIFS_FLG_SPACE_FIXUP);
	tool_out_bool(o, "double_hash", sb->flags & UBIFS_FLG_DOUBLE_HASH);
	tool_out_bool(o, "encryption", sb->flags & UBIFS_FLG_ENCRYPTION);
	tool_out_bool(o, "authentication", sb->flags & UBIFS_FLG_AUTHENTICATION);
	tool_out_u64(o, "rp_uid", sb->rp_uid);
	tool_out_u64(o, "rp_gid", sb->rp_gid);
	tool_out_u64(o, "rp_size", sb->rp_size);
	tool_out_u64(o, "time_gran", sb->time_gran);
	char uuid[40];
	const uint8_t *u = sb->uuid;
	snprintf(uuid, sizeof(uuid), "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
		 u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
	tool_out_str(o, "uuid", uuid);
	tool_out_end(o);
}

static void out_mounted(struct tool_out *o, struct ubikit_image *img)
{
	struct ubifs_fs_info fi;
	if (ubifs_get_info(fs_ubifs(img->fs), &fi))
		return;
	const struct ubifs_mst_node *m = &fi.mst;
	tool_out_obj(o, "master");
	tool_out_u64(o, "lnum", fi.mst_lnum);
	tool_out_u64(o, "offs", fi.mst_offs);
	tool_out_bool(o, "recovered", fi.mst_recovered);
	tool_out_u64(o, "sqnum", m->sqnum);
	tool_out_u64(o, "cmt_no", m->cmt_no);
	tool_out_hex(o, "flags", m->flags);
	tool_out_bool(o, "dirty", m->flags & UBIFS_MST_DIRTY);
	tool_out_u64(o, "highest_inum", m->highest_inum);
	tool_out_u64(o, "log_lnum", m->log_lnum);
	tool_out_u64(o, "root_lnum", m->root_lnum);
	tool_out_u64(o, "root_offs", m->root_offs);
	tool_out_u64(o, "root_len", m->root_len);
	tool_out_u64(o, "gc_lnum", m->gc_lnum);
	tool_out_u64(o, "ihead_lnum", m->ihead_lnum);
	tool_out_u64(o, "ihead_offs", m->ihead_offs);
	tool_out_u64(o, "index_size", m->index_size);
	tool_out_u64(o, "total_free", m->total_free);
	tool_out_u64(o, "total_dirty", m->total_dirty);
	tool_out_u64(o, "total_used", m->total_used);
	tool_out_u64(o, "total_dead", m->total_dead);
	tool_out_u64(o, "total_dark", m->total_dark);
	tool_out_u64(o, "lpt_lnum", m->lpt_lnum);
	tool_out_u64(o, "lpt_offs", m->lpt_offs);
	tool_out_u64(o, "empty_lebs", m->empty_lebs);
	tool_out_u64(o, "idx_lebs", m->idx_lebs);
	tool_out_u64(o, "leb_cnt", m->leb_cnt);
	tool_out_end(o);

	tool_out_obj(o, "areas");
	char b[64];
	snprintf(b, sizeof(b), "%u-%u", fi.log_first, fi.log_last);
	tool_out_str(o, "log", b);
	snprintf(b, sizeof(b), "%u-%u", fi.lpt_first, fi.lpt_last);
	tool_out_str(o, "lpt", b);
	snprintf(b, sizeof(b), "%u-%u", fi.orph_first, fi.orph_last);
	tool_out_str(o, "orphan", b);
	snprintf(b, sizeof(b), "%u-%u", fi.main_first, fi.main_first + fi.main_lebs - 1);
	tool_out_str(o, "main", b);
	tool_out_u64(o, "leb_cnt_in_use", fi.leb_cnt);
	tool_out_u64(o, "volume_lebs", fi.vol_leb_cnt);
	tool_out_end(o);

	tool_out_obj(o, "mount");
	tool_out_bool(o, "needed_recovery", fi.need_recovery);
	tool_out_u64(o, "max_sqnum", fi.max_sqnum);
	tool_out_u64(o, "log_lebs_replayed", fi.log_lebs_used);
	tool_out_u64(o, "buds_replayed", fi.buds);
	tool_out_u64(o, "journal_nodes_replayed", fi.replayed_nodes);
	tool_out_u64(o, "recovered_lebs", fi.recovered_lebs);
	tool_out_u64(o, "orphans_removed", fi.orphans_killed);
	tool_out_end(o);

	struct ubikit_statfs sf;
	if (!ubikit_statfs(img->fs, &sf)) {
		tool_out_obj(o, "space");
		tool_out_u64(o, "block_size", sf.block_size);
		tool_out_u64(o, "total_bytes", sf.blocks * sf.block_size);
		tool_out_u64(o, "used_bytes", (sf.blocks - sf.blocks_free) * sf.block_size);
		tool_out_u64(o, "free_bytes", sf.blocks_free * sf.block_size);
		tool_out_u64(o, "available_bytes", sf.blocks_avail * sf.block_size);
		tool_out_u64(o, "files", sf.files);
		tool_out_end(o);
	}
}

/* mkfs.ubifs stores -R SIZE inflated by the index/data-node overhead (it
 * reverses the kernel's reported-space estimate); give back the SIZE that
 * reproduces rp_size exactly. */
static uint64_t mkfs_rp_arg(const struct ubifs_sb_node *sb)
{
	uint32_t fanout = sb->fanout >= 3 && sb->fanout < 65536 ? sb->fanout : 8;
	uint64_t idx_sz = 28 + (uint64_t)fanout * 20;
	uint64_t f = fanout > 3 ? fanout >> 1 : 2;
	uint64_t factor = 4144 + idx_sz * 3 / (f - 1);
	uint64_t x0 = sb->rp_size * 4096 / factor;
	for (uint64_t x = x0 > 2 ? x0 - 2 : 0; x <= x0 + 2; x++)
		if (x * factor / 4096 == sb->rp_size)
			return x;
	return x0;
}

static void out_recreate(struct tool_out *o, struct ubikit_image *img, const struct ubifs_sb_node *sb, bool have_sb)
{
	tool_out_obj(o, "recreate");
	char mk[1024] = "";
	if (have_sb) {
		snprintf(mk, sizeof(mk),
			 "mkfs.ubifs -m %u -e %u -c %u -x %s -f %u -k %s -l %u -p %u -j %" PRIu64 " -R %" PRIu64 "%s -r ROOTDIR -o %s",
			 sb->min_io_size, sb->leb_size, sb->max_leb_cnt, compr_opt(sb->default_compr), sb->fanout,
			 sb->key_hash == 1 ? "test" : "r5", sb->log_lebs, sb->orph_lebs, sb->max_bud_bytes, mkfs_rp_arg(sb),
			 (sb->flags & UBIFS_FLG_SPACE_FIXUP) ? " -F" : "", img->ubi ? "ubifs.img" : "IMAGE.ubifs");
		tool_out_str(o, "mkfs_ubifs", mk);
	}
	if (img->ubi) {
		struct ubi_dev_info di;
		if (!ubi_dev_info(img->ubi, &di)) {
			char cmd[512];
			int l = snprintf(cmd, sizeof(cmd), "ubinize -o IMAGE.ubi -p %u -m %u", di.peb_size, di.min_io_size);
			if (di.hdrs_min_io_size != di.min_io_size)
				l += snprintf(cmd + l, sizeof(cmd) - (size_t)l, " -s %u", di.hdrs_min_io_size);
			struct ubi_offsets def;
			if (ubi_calc_offsets(di.peb_size, di.min_io_size, di.hdrs_min_io_size, 0, &def) ||
			    def.vid_hdr_offset != di.vid_hdr_offset)
				l += snprintf(cmd + l, sizeof(cmd) - (size_t)l, " -O %u", di.vid_hdr_offset);
			snprintf(cmd + l, sizeof(cmd) - (size_t)l, " -Q %u ubinize.ini", di.image_seq);
			tool_out_str(o, "ubinize", cmd);
			char *ini = NULL;
			size_t inilen = 0;
			FILE *m = open_memstream(&ini, &inilen);
			uint32_t ids[UBI_MAX_VOLUMES];
			int n = ubi_vol_list(img->ubi, ids, UBI_MAX_VOLUMES);
			for (int i = 0; m && i < n && i < UBI_MAX_VOLUMES; i++) {
				struct ubi_vol_info vi;
				if (ubi_vol_info(img->ubi, ids[i], &vi))
					continue;
				bool ubifs = img->have_vol && img->vol_id == vi.vol_id;
				fprintf(m, "[%s]\nmode=ubi\nimage=%s%s\nvol_id=%u\nvol_size=%" PRIu64 "\nvol_type=%s\nvol_name=%s\n",
					vi.name, ubifs ? "ubifs.img" : vi.name, ubifs ? "" : ".bin", vi.vol_id,
					(uint64_t)vi.reserved_pebs * vi.usable_leb_size, vol_type_name(vi.vol_type), vi.name);
				if (vi.alignment > 1)
					fprintf(m, "vol_alignment=%u\n", vi.alignment);
				if (vi.flags & UBI_VTBL_AUTORESIZE_FLG)
					fprintf(m, "vol_flags=autoresize\n");
				if (vi.flags & UBI_VTBL_SKIP_CRC_CHECK_FLG)
					fprintf(m, "vol_flags=skip-check\n");
				fputc('\n', m);
			}
			if (m) {
				fclose(m);
				if (o->json) {
					tool_out_str(o, "ubinize_ini", ini ? ini : "");
				} else {
					tool_out_text(o, "  ubinize.ini:\n");
					for (char *line = ini, *nl; line && *line; line = nl + 1) {
						nl = strchr(line, '\n');
						if (!nl)
							break;
						tool_out_text(o, "    %.*s\n", (int)(nl - line), line);
					}
				}
			}
			free(ini);
		}
	}
	tool_out_end(o);
}

int cmd_info(int argc, char **argv)
{
	static const struct option lopts[] = {
		{"json", no_argument, NULL, 'j'}, {"help", no_argument, NULL, 'h'}, TOOL_IMAGE_LONGOPTS, {NULL, 0, NULL, 0}};
	struct tool_image_opts io;
	tool_image_opts_init(&io);
	bool json = false;
	int opt;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "hv", lopts, NULL)) != -1) {
		int r = tool_image_opt(&io, opt, optarg, "info");
		if (r < 0)
			return 2;
		if (r)
			continue;
		switch (opt) {
		case 'j': json = true; break;
		case 'h': info_usage(stdout); return 0;
		default: info_usage(stderr); return 2;
		}
	}
	if (argc - optind != 1) {
		info_usage(stderr);
		return 2;
	}
	char msg[1024];
	struct ubikit_image *img;
	/* A failed attach still says what was found (kind, geometry) and why. */
	io.keep_flash_on_attach_failure = true;
	struct tool_out o;
	if (tool_image_open(argv[optind], &io, false, &img, msg, sizeof(msg))) {
		if (json) {
			tool_out_init(&o, stdout, json);
			tool_out_str(&o, "error", msg);
			tool_out_finish(&o);
		}
		tool_err("info", "%s", msg);
		return 1;
	}
	int rc = 0;
	tool_out_init(&o, stdout, json);
	out_geo(&o, &img->geo);
	if (!img->ubi && img->flash) {
		tool_out_obj(&o, "ubi");
		tool_out_str(&o, "error", img->err);
		tool_out_end(&o);
		tool_out_finish(&o);
		tool_err("info", "%s: %s", argv[optind], img->err);
		tool_image_close(img);
		return 1;
	}
	bool is_ubifs = !img->ubi;
	if (img->ubi)
		out_ubi(&o, img, &is_ubifs);
	struct ubifs_sb_node sb;
	bool have_sb = false;
	if (is_ubifs && img->have_vol) {
		tool_out_obj(&o, "ubifs");
		if (img->ubi)
			tool_out_u64(&o, "ubi_volume", img->vol_id);
		struct util_err e;
		util_err_clear(&e);
		int ret = ubifs_read_sb(&img->vol, &sb, &e);
		if (ret) {
			tool_out_str(&o, "superblock_error", e.msg[0] ? e.msg : strerror(-ret));
			rc = 1;
		} else {
			have_sb = true;
			out_sb(&o, &sb);
		}
		if (tool_image_mount(img)) {
			tool_out_str(&o, "mount_error", img->err);
			rc = 1;
		} else {
			out_mounted(&o, img);
		}
		tool_out_end(&o);
	}
	out_recreate(&o, img, &sb, have_sb);
	tool_out_finish(&o);
	if (rc)
		tool_err("info", "%s: the UBIFS could not be read completely: %s", argv[optind], img->err);
	tool_image_close(img);
	return rc;
}
