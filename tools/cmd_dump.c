/* cmd_dump — 'ubikit dump IMAGE [--leb N] [--pnum N] [--json]': node-level
 * listing for debugging. UBI level: every PEB with its EC header (erase
 * count) and VID header (volume, LEB, sqnum, copy flag) or why it has none.
 * UBIFS level: every node of the chosen volume's LEBs (or one LEB) with
 * offset, type, length, sqnum, key, group and CRC status, found by the
 * lenient scanner (src/ubifs/ubifs_scan.h), which also reports padding,
 * garbage and where the empty space starts. Never mounts, never writes. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "tool_image.h"
#include "image/image.h"
#include "ubi_tool_num.h"
#include "tool_out.h"
#include "ubi/ubi.h"
#include "ubifs/ubifs.h"
#include "ubifs/ubifs_scan.h"

struct dump_ctx {
	struct tool_out *o;
	bool all; /* also list empty LEBs */
	uint64_t nodes, bad_crc, garbage;
	bool leb_open;
	uint32_t cur_leb;
};

static void dump_usage(FILE *out)
{
	fprintf(out, "usage: ubikit dump [options] [image options] IMAGE\n"
		     "Node-level listing of IMAGE for debugging (read-only, no mount).\n"
		     "  --leb N      only UBIFS LEB N of the volume\n"
		     "  --pnum N     only UBI PEB number N (UBI level; --peb SIZE is the PEB size)\n"
		     "  --ubi        only the UBI level (PEB -> volume/LEB, erase counters)\n"
		     "  --ubifs      only the UBIFS level (nodes)\n"
		     "  -a, --all    also list empty LEBs / PEBs\n"
		     "  --json       machine-readable output\n"
		     "  -h, --help   this help\n" TOOL_IMAGE_OPTS_HELP);
}

static const char *scan_kind_name(enum ubifs_scan_kind k)
{
	switch (k) {
	case UBIFS_SCAN_NODE: return "node";
	case UBIFS_SCAN_PADDING: return "padding";
	case UBIFS_SCAN_GARBAGE: return "garbage";
	case UBIFS_SCAN_EMPTY: return "empty";
	case UBIFS_SCAN_BAD_EMPTY: return "bad-empty";
	}
	return "?";
}

/* Type-specific details of a node, as one short string. */
static void node_detail(const struct ubifs_scan_node *n, char *d, size_t dl)
{
	d[0] = '\0';
	if (!n->node || n->kind != UBIFS_SCAN_NODE)
		return;
	switch (n->type) {
	case 0: {
		if (n->len < UBIFS_INO_NODE_SZ)
			return;
		struct ubifs_ino_node ino;
		ubifs_ino_unpack(n->node, &ino);
		snprintf(d, dl, "size %" PRIu64 " nlink %u mode 0%o data_len %u xattrs %u", ino.size, ino.nlink, ino.mode,
			 ino.data_len, ino.xattr_cnt);
		break;
	}
	case 1: {
		if (n->len < UBIFS_DATA_NODE_SZ)
			return;
		struct ubifs_data_node dn;
		ubifs_data_unpack(n->node, n->len, &dn);
		snprintf(d, dl, "size %u compr %s stored %u", dn.size, ubifs_compr_name(dn.compr_type), dn.data_len);
		break;
	}
	case 2:
	case 3: {
		if (n->len < UBIFS_DENT_NODE_SZ)
			return;
		struct ubifs_dent_node de;
		ubifs_dent_unpack(n->node, &de);
		int nl = de.nlen <= n->len - UBIFS_DENT_NODE_SZ ? de.nlen : (int)(n->len - UBIFS_DENT_NODE_SZ);
		char name[UBIFS_MAX_NLEN * 4 + 1];
		size_t o = 0;
		for (int i = 0; i < nl && o + 5 < sizeof(name); i++) {
			unsigned char ch = (unsigned char)de.name[i];
			if (ch < 0x20 || ch >= 0x7f)
				o += (size_t)snprintf(name + o, sizeof(name) - o, "\\x%02x", ch);
			else
				name[o++] = (char)ch;
		}
		name[o] = '\0';
		snprintf(d, dl, "name \"%s\" inum %" PRIu64 "%s type %u", name, de.inum, de.inum ? "" : " (deletion)",
			 de.type);
		break;
	}
	case 4: {
		if (n->len < UBIFS_TRUN_NODE_SZ)
			return;
		struct ubifs_trun_node t;
		ubifs_trun_unpack(n->node, &t);
		snprintf(d, dl, "inum %u old_size %" PRIu64 " new_size %" PRIu64, t.inum, t.old_size, t.new_size);
		break;
	}
	case 8: {
		if (n->len < UBIFS_REF_NODE_SZ)
			return;
		struct ubifs_ref_node r;
		ubifs_ref_unpack(n->node, &r);
		snprintf(d, dl, "bud LEB %u:%u jhead %u", r.lnum, r.offs, r.jhead);
		break;
	}
	case 9: {
		if (n->len < UBIFS_IDX_NODE_SZ)
			return;
		struct ubifs_idx_node idx;
		ubifs_idx_unpack(n->node, &idx);
		snprintf(d, dl, "level %u children %u", idx.level, idx.child_cnt);
		break;
	}
	case 10:
		if (n->len >= UBIFS_CS_NODE_SZ)
			snprintf(d, dl, "cmt_no %" PRIu64, ubifs_cs_cmt_no(n->node));
		break;
	case 11:
		if (n->len >= UBIFS_ORPH_NODE_SZ + 8) {
			/* cmt_no (bit 63: the last orphan node of that commit), then the inode numbers */
			uint64_t cmt = 0;
			for (int b = 7; b >= 0; b--)
				cmt = cmt << 8 | n->node[UBIFS_CH_SZ + b];
			unsigned cnt = ubifs_orph_count(n->len);
			size_t at = (size_t)snprintf(d, dl, "cmt_no %" PRIu64 "%s, %u orphans:", cmt & ~(UINT64_C(1) << 63),
						     (cmt >> 63) ? " (last)" : "", cnt);
			for (unsigned i = 0; i < cnt && at < dl; i++) {
				uint64_t inum = 0;
				for (int b = 7; b >= 0; b--)
					inum = inum << 8 | n->node[UBIFS_ORPH_NODE_SZ + 8 * i + (unsigned)b];
				if (i == 32) {
					snprintf(d + at, dl - at, " ...");
					break;
				}
				at += (size_t)snprintf(d + at, dl - at, " %" PRIu64, inum);
			}
		}
		break;
	}
}

/* mkfs.ubifs >= 2.1 writes a signature node right after the superblock even
 * without authentication, left zeroed: a common header of node type 0 and
 * length 64 (the signature node's size) with nothing after it. The kernel
 * reads only the superblock of LEB 0 then; it is not a problem. */
static bool zeroed_sig_node(const struct ubifs_scan_node *n)
{
	if (n->lnum != 0 || n->kind != UBIFS_SCAN_NODE || n->type != 0 || n->len != 64 || !n->crc_ok || !n->node ||
	    n->offs != UBIFS_SB_NODE_SZ)
		return false;
	for (uint32_t i = UBIFS_CH_SZ; i < n->len; i++)
		if (n->node[i])
			return false;
	return true;
}

static int dump_node_cb(void *arg, const struct ubifs_scan_node *n0)
{
	struct dump_ctx *c = arg;
	struct ubifs_scan_node sig;
	const struct ubifs_scan_node *n = n0;
	bool is_sig = zeroed_sig_node(n0);
	if (is_sig) {
		sig = *n0;
		sig.has_key = 0;
		sig.problem = NULL;
		n = &sig;
	}
	struct tool_out *o = c->o;
	if (!c->all && n->kind == UBIFS_SCAN_EMPTY && n->offs == 0)
		return 0; /* an empty LEB */
	if (!c->leb_open) {
		if (o->json) {
			tool_out_obj(o, NULL);
			tool_out_u64(o, "leb", n->lnum);
			tool_out_arr(o, "nodes");
		} else {
			tool_out_text(o, "LEB %u:\n", n->lnum);
		}
		c->leb_open = true;
	}
	char key[64] = "";
	if (n->has_key)
		ubifs_key_str(&n->key, key, sizeof(key));
	char detail[1200];
	if (is_sig)
		snprintf(detail, sizeof(detail), "zeroed signature node (mkfs.ubifs >= 2.1 writes it; no authentication)");
	else
		node_detail(n, detail, sizeof(detail));
	const char *tname = is_sig ? "signature" : ubifs_node_type_name(n->type);
	if (n->kind == UBIFS_SCAN_NODE) {
		c->nodes++;
		if (!n->crc_ok)
			c->bad_crc++;
	} else if (n->kind == UBIFS_SCAN_GARBAGE || n->kind == UBIFS_SCAN_BAD_EMPTY) {
		c->garbage++;
	}
	if (o->json) {
		tool_out_obj(o, NULL);
		tool_out_u64(o, "offs", n->offs);
		tool_out_str(o, "kind", scan_kind_name(n->kind));
		tool_out_u64(o, "len", n->len);
		if (n->kind == UBIFS_SCAN_NODE) {
			tool_out_str(o, "type", tname);
			tool_out_u64(o, "sqnum", n->sqnum);
			tool_out_u64(o, "group", n->group_type);
			tool_out_bool(o, "crc_ok", n->crc_ok);
			if (n->has_key)
				tool_out_str(o, "key", key);
			if (detail[0])
				tool_out_str(o, "detail", detail);
		}
		if (n->problem)
			tool_out_str(o, "problem", n->problem);
		tool_out_end(o);
	} else if (n->kind == UBIFS_SCAN_NODE) {
		tool_out_text(o, "  %u:%-7u %-6s len %-5u sqnum %-8" PRIu64 " %s%s%s%s%s%s%s\n", n->lnum, n->offs,
			      tname, n->len, n->sqnum, n->crc_ok ? "crc ok" : "CRC BAD",
			      n->group_type ? (n->group_type == 2 ? " group-end" : " group") : "", key[0] ? " key " : "",
			      key, detail[0] ? " " : "", detail, n->problem && n->crc_ok ? " !" : "");
		if (n->problem && n->crc_ok)
			tool_out_text(o, "           problem: %s\n", n->problem);
	} else {
		tool_out_text(o, "  %u:%-7u %s, %u bytes%s%s\n", n->lnum, n->offs, scan_kind_name(n->kind), n->len,
			      n->problem ? ": " : "", n->problem ? n->problem : "");
	}
	return 0;
}

static int dump_ubifs(struct tool_out *o, struct ubikit_image *img, long leb, bool all)
{
	struct ubifs_sb_node sb;
	struct util_err e;
	util_err_clear(&e);
	uint32_t fanout = 0;
	if (ubifs_read_sb(&img->vol, &sb, &e) == 0)
		fanout = sb.fanout;
	else
		tool_out_text(o, "(superblock unreadable: %s; index nodes checked against LEB size only)\n", e.msg);
	struct dump_ctx c = {.o = o, .all = all || leb >= 0};
	int rc = 0;
	tool_out_arr_json(o, "ubifs_lebs");
	uint32_t first = leb >= 0 ? (uint32_t)leb : 0, last = leb >= 0 ? (uint32_t)leb : img->vol.leb_count - 1;
	if (leb >= 0 && (uint64_t)leb >= img->vol.leb_count) {
		tool_out_end(o);
		tool_err("dump", "LEB %ld out of range (volume has %u LEBs)", leb, img->vol.leb_count);
		return 1;
	}
	for (uint32_t l = first; img->vol.leb_count && l <= last; l++) {
		c.leb_open = false;
		int ret = ubifs_scan_leb(&img->vol, l, fanout, dump_node_cb, &c);
		if (ret < 0) {
			if (!c.leb_open && o->json) {
				tool_out_obj(o, NULL);
				tool_out_u64(o, "leb", l);
				tool_out_str(o, "error", strerror(-ret));
				tool_out_end(o);
			} else if (!o->json) {
				tool_out_text(o, "LEB %u: read error: %s\n", l, strerror(-ret));
			}
			rc = 1;
		}
		if (c.leb_open && o->json) {
			tool_out_end(o); /* nodes */
			tool_out_end(o); /* leb object */
		}
	}
	tool_out_end(o);
	tool_out_obj(o, "ubifs_summary");
	tool_out_u64(o, "nodes", c.nodes);
	tool_out_u64(o, "bad_crc", c.bad_crc);
	tool_out_u64(o, "garbage_areas", c.garbage);
	tool_out_end(o);
	return rc;
}

static int dump_ubi(struct tool_out *o, struct ubikit_image *img, long peb, bool all)
{
	struct flash_dev *fl = img->flash;
	uint32_t vid_off = img->geo.vid_hdr_offset;
	struct ubi_dev_info di;
	if (img->ubi && !ubi_dev_info(img->ubi, &di))
		vid_off = di.vid_hdr_offset;
	/* The PEBs the file holds: erased PEBs assumed after the end of an
	 * image (for UBI's reserves) are not in it. */
	uint32_t count = fl->geo.peb_count;
	bool file = img->geo.kind == UBIKIT_IMAGE_UBI || img->geo.kind == UBIKIT_IMAGE_NAND_OOB;
	if (file && img->geo.peb_count && img->geo.peb_count < count)
		count = img->geo.peb_count;
	tool_out_arr_json(o, "pebs");
	uint32_t first = peb >= 0 ? (uint32_t)peb : 0, last = peb >= 0 ? (uint32_t)peb : count - 1;
	if (peb >= 0 && (uint64_t)peb >= count) {
		tool_out_end(o);
		tool_err("dump", "PEB %ld is past the end of the image (it has %u PEBs, 0-%u)", peb, count,
			 count ? count - 1 : 0);
		return 1;
	}
	uint32_t n_empty = 0;
	for (uint32_t p = first; count && p <= last; p++) {
		uint8_t eh[UBI_HDR_SIZE], vh[UBI_HDR_SIZE];
		struct ubi_ec_hdr ec;
		struct ubi_vid_hdr vid;
		int bad = flash_is_bad(fl, p);
		int r1 = bad == 1 ? 0 : flash_read(fl, p, 0, eh, sizeof(eh));
		int r2 = bad == 1 ? 0 : flash_read(fl, p, vid_off, vh, sizeof(vh));
		enum ubi_hdr_status es = UBI_HDR_FF, vs = UBI_HDR_FF;
		const char *state;
		if (bad == 1)
			state = "bad block";
		else if (r1 && r1 != -EUCLEAN)
			state = "EC header unreadable";
		else if ((es = ubi_ec_hdr_unpack(eh, &ec)) == UBI_HDR_FF)
			state = "erased (no EC header)";
		else if (es == UBI_HDR_BAD)
			state = "corrupt EC header";
		else if (r2 && r2 != -EUCLEAN)
			state = "VID header unreadable";
		else if ((vs = ubi_vid_hdr_unpack(vh, &vid)) == UBI_HDR_FF)
			state = "free";
		else if (vs == UBI_HDR_BAD)
			state = "corrupt VID header";
		else
			state = "mapped";
		bool empty = bad != 1 && es != UBI_HDR_BAD && vs == UBI_HDR_FF && !r1 && !r2;
		if (empty && !all && peb < 0) {
			n_empty++;
			continue;
		}
		if (o->json) {
			tool_out_obj(o, NULL);
			tool_out_u64(o, "peb", p);
			tool_out_str(o, "state", state);
			if (es == UBI_HDR_OK) {
				tool_out_u64(o, "ec", ec.ec);
				tool_out_hex(o, "image_seq", ec.image_seq);
			}
			if (vs == UBI_HDR_OK && es == UBI_HDR_OK) {
				tool_out_u64(o, "vol_id", vid.vol_id);
				tool_out_u64(o, "lnum", vid.lnum);
				tool_out_u64(o, "sqnum", vid.sqnum);
				tool_out_str(o, "vol_type", vid.vol_type == UBI_VID_STATIC ? "static" : "dynamic");
				tool_out_u64(o, "copy_flag", vid.copy_flag);
				tool_out_u64(o, "data_size", vid.data_size);
				tool_out_u64(o, "used_ebs", vid.used_ebs);
				tool_out_u64(o, "data_pad", vid.data_pad);
				tool_out_hex(o, "data_crc", vid.data_crc);
			}
			tool_out_end(o);
		} else {
			tool_out_text(o, "PEB %-5u %s", p, state);
			if (es == UBI_HDR_OK)
				tool_out_text(o, ", EC %" PRIu64, ec.ec);
			if (vs == UBI_HDR_OK && es == UBI_HDR_OK) {
				if (vid.vol_id == UBI_LAYOUT_VOLUME_ID)
					tool_out_text(o, ", layout volume LEB %u", vid.lnum);
				else
					tool_out_text(o, ", vol %u LEB %u", vid.vol_id, vid.lnum);
				tool_out_text(o, ", sqnum %" PRIu64 "%s%s", vid.sqnum, vid.copy_flag ? ", copy" : "",
					      vid.vol_type == UBI_VID_STATIC ? ", static" : "");
				if (vid.copy_flag || vid.vol_type == UBI_VID_STATIC)
					tool_out_text(o, ", data_size %u, data_crc 0x%08x", vid.data_size, vid.data_crc);
			}
			tool_out_text(o, "\n");
		}
	}
	tool_out_end(o);
	if (n_empty)
		tool_out_text(o, "(%u free or erased PEBs not listed; -a lists them)\n", n_empty);
	return 0;
}

int cmd_dump(int argc, char **argv)
{
	static const struct option lopts[] = {{"leb", required_argument, NULL, 0x2001},
					      {"pnum", required_argument, NULL, 0x2002},
					      {"ubi", no_argument, NULL, 0x2003},
					      {"ubifs", no_argument, NULL, 0x2004},
					      {"all", no_argument, NULL, 'a'},
					      {"json", no_argument, NULL, 'j'},
					      {"help", no_argument, NULL, 'h'},
					      TOOL_IMAGE_LONGOPTS,
					      {NULL, 0, NULL, 0}};
	struct tool_image_opts io;
	tool_image_opts_init(&io);
	io.keep_flash_on_attach_failure = true;
	bool json = false, all = false, only_ubi = false, only_ubifs = false;
	long leb = -1, peb = -1;
	int opt;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "ahv", lopts, NULL)) != -1) {
		int r = tool_image_opt(&io, opt, optarg, "dump");
		if (r < 0)
			return 2;
		if (r)
			continue;
		switch (opt) {
		case 0x2001:
		case 0x2002: {
			uint64_t v;
			if (tool_num("ubikit dump", opt == 0x2001 ? "--leb" : "--pnum", optarg, false, 0, INT32_MAX, &v))
				return 2;
			if (opt == 0x2001) {
				leb = (long)v;
				only_ubifs = true;
			} else {
				peb = (long)v;
				only_ubi = true;
			}
			break;
		}
		case 0x2003: only_ubi = true; break;
		case 0x2004: only_ubifs = true; break;
		case 'a': all = true; break;
		case 'j': json = true; break;
		case 'h': dump_usage(stdout); return 0;
		default: dump_usage(stderr); return 2;
		}
	}
	if (argc - optind != 1 || (only_ubi && only_ubifs)) {
		dump_usage(stderr);
		return 2;
	}
	char msg[1024];
	struct ubikit_image *img;
	if (tool_image_open(argv[optind], &io, false, &img, msg, sizeof(msg))) {
		tool_err("dump", "%s", msg);
		return 1;
	}
	struct tool_out o;
	tool_out_init(&o, stdout, json);
	int rc = 0;
	if (img->flash && !img->ubi) {
		tool_err("dump", "%s: %s (showing the PEB headers only)", argv[optind], img->err);
		rc = 1;
	}
	if (img->flash && !only_ubifs)
		rc |= dump_ubi(&o, img, peb, all);
	if (!only_ubi) {
		if (img->have_vol) {
			tool_out_text(&o, "%sUBIFS nodes%s:\n", img->flash && !only_ubifs ? "\n" : "",
				      img->ubi ? " (chosen UBI volume)" : "");
			rc |= dump_ubifs(&o, img, leb, all);
		} else if (only_ubifs) {
			tool_err("dump", "%s: no UBIFS volume (choose one with --vol-name/--vol-id)", argv[optind]);
			rc = 1;
		}
	}
	tool_out_finish(&o);
	tool_image_close(img);
	return rc;
}
