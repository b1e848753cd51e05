/* cmd_ubinize — 'ubikit ubinize': build a UBI image from an ini file, with
 * mtd-utils ubinize's flags and ini format, producing the same bytes as
 * mtd-utils for the same input (spec UBI-FORMAT.md §17):
 *   PEB 0, 1   layout volume LEB 0/1 (the volume table, then 0xFF)
 *   PEB 2..    the volumes that have an image, in section order, one PEB
 *              per LEB-sized piece; LEBs past the image are left unmapped.
 * Each PEB: EC header at 0, VID header at the VID offset, data at the data
 * offset, 0xFF everywhere else. sqnum is 0 everywhere. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "ubi/ubi_media.h"
#include "ubi_tool_ini.h"
#include "ubi_tool_num.h"
#include "util/util_crc.h"
#include "util/util_file.h"

#define UBINIZE_MAX_PEB_SIZE (2u * 1024 * 1024) /* mtd-utils' limit */

struct unz_geo {
	uint32_t peb_size, min_io, subpage, vid_off, data_off, leb_size;
	uint32_t max_volumes;
	uint64_t ec;
	uint8_t ubi_ver;
	uint32_t image_seq;
};

struct unz_vol {
	const char *section;
	const char *image; /* NULL: no contents */
	uint64_t image_size;
	uint32_t id;
	uint64_t bytes; /* vol_size */
	uint8_t type;
	const char *name;
	uint32_t alignment, data_pad, usable;
	uint8_t flags;
};

static const char *const prog = "ubikit ubinize";

static int fail(const char *fmt, const char *a, const char *b)
{
	fprintf(stderr, "%s: error: ", prog);
	fprintf(stderr, fmt, a, b);
	fputc('\n', stderr);
	return -1;
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: ubikit ubinize [options] <ini-file>\n\n"
		"Build a UBI image holding the volumes described in the ini file (one\n"
		"section per volume; keys mode=ubi, image, vol_id, vol_size, vol_type,\n"
		"vol_name, vol_alignment, vol_flags). Same flags and output as mtd-utils'\n"
		"ubinize.\n\n"
		"-o, --output=<file>          output file (mandatory)\n"
		"-p, --peb-size=<bytes>       physical eraseblock size (mandatory; KiB/MiB ok)\n"
		"-m, --min-io-size=<bytes>    minimum I/O unit (NAND page; 1 for NOR) (mandatory)\n"
		"-s, --sub-page-size=<bytes>  sub-page size used for the UBI headers\n"
		"                             (default: the min. I/O unit size)\n"
		"-O, --vid-hdr-offset=<num>   VID header offset (default: the next sub-page\n"
		"                             after the EC header)\n"
		"-e, --erase-counter=<num>    erase counter to put in the EC headers (default 0)\n"
		"-x, --ubi-ver=<num>          UBI version in the headers (default 1)\n"
		"-Q, --image-seq=<num>        32-bit image sequence number (default: random)\n"
		"-v, --verbose                be verbose\n"
		"-h, --help                   print this help\n"
		"-V, --version                print the version\n");
}

static bool is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

/* Parse one ini section into *v. 0 ok, 1 skip (mode != ubi), -1 error. */
static int read_section(const struct ubi_ini *ini, const struct unz_geo *g, const char *sname,
			struct unz_vol *v, int verbose)
{
	memset(v, 0, sizeof(*v));
	v->section = sname;
	if (strlen(sname) > 128)
		return fail("too long section name \"%s\"%s", sname, "");
	const char *p = ubi_ini_get(ini, sname, "mode");
	if (!p)
		return fail("\"mode\" key not found in section \"%s\"%s (it must be \"mode=ubi\" for a UBI volume)",
			    sname, "");
	if (strcmp(p, "ubi")) {
		if (verbose)
			printf("%s: skip non-ubi section \"%s\"\n", prog, sname);
		return 1;
	}

	p = ubi_ini_get(ini, sname, "vol_type");
	if (!p || !strcmp(p, "dynamic"))
		v->type = UBI_VID_DYNAMIC;
	else if (!strcmp(p, "static"))
		v->type = UBI_VID_STATIC;
	else
		return fail("invalid volume type \"%s\" in section \"%s\" (expected \"dynamic\" or \"static\")", p,
			    sname);

	p = ubi_ini_get(ini, sname, "image");
	if (p && *p) {
		struct stat st;
		v->image = p;
		if (stat(p, &st)) {
			fprintf(stderr, "%s: error: cannot stat \"%s\" referred from section \"%s\": %s\n", prog, p,
				sname, strerror(errno));
			return -1;
		}
		if (!S_ISREG(st.st_mode))
			return fail("\"%s\" referred from section \"%s\" is not a regular file", p, sname);
		if (st.st_size == 0)
			return fail("empty file \"%s\" referred from section \"%s\"", p, sname);
		v->image_size = (uint64_t)st.st_size;
	} else if (v->type == UBI_VID_STATIC) {
		return fail("image is not specified for static volume in section \"%s\"%s", sname, "");
	}

	p = ubi_ini_get(ini, sname, "vol_id");
	int64_t id;
	if (!p)
		return fail("\"vol_id\" key not found in section \"%s\"%s", sname, "");
	if (!ubi_tool_parse_i64(p, &id))
		return fail("bad volume ID \"%s\" in section \"%s\"", p, sname);
	if (id < 0)
		return fail("negative volume ID %s in section \"%s\"", p, sname);
	if (id >= g->max_volumes) {
		fprintf(stderr, "%s: error: too high volume ID %lld in section \"%s\", max. is %u\n", prog,
			(long long)id, sname, g->max_volumes - 1);
		return -1;
	}
	v->id = (uint32_t)id;

	p = ubi_ini_get(ini, sname, "vol_size");
	if (p) {
		if (!ubi_tool_parse_bytes(p, &v->bytes) || v->bytes == 0)
			return fail("bad \"vol_size\" key value \"%s\" (section \"%s\")", p, sname);
		/* reserved_pebs is a signed 32-bit count in the kernel. */
		uint64_t lebs = v->bytes / g->leb_size + (v->bytes % g->leb_size != 0);
		if (lebs > INT32_MAX) {
			fprintf(stderr,
				"%s: error: \"vol_size\" %s in section \"%s\" needs %llu LEBs of %u bytes; a UBI "
				"volume has at most %d\n",
				prog, p, sname, (unsigned long long)lebs, g->leb_size, INT32_MAX);
			return -1;
		}
		if (v->image && v->image_size > v->bytes) {
			fprintf(stderr,
				"%s: error: in section \"%s\": size of the image file \"%s\" is %llu, which is larger "
				"than volume size %llu\n",
				prog, sname, v->image, (unsigned long long)v->image_size,
				(unsigned long long)v->bytes);
			return -1;
		}
	} else {
		if (!v->image)
			return fail("neither image file (\"image=\") nor volume size (\"vol_size=\") specified in "
				    "section \"%s\"%s",
				    sname, "");
		v->bytes = v->image_size;
		if (verbose)
			printf("%s: volume size was not specified in section \"%s\", assume minimum to fit image "
			       "\"%s\" (%llu bytes)\n",
			       prog, sname, v->image, (unsigned long long)v->bytes);
	}

	p = ubi_ini_get(ini, sname, "vol_name");
	if (!p)
		return fail("\"vol_name\" key not found in section \"%s\"%s", sname, "");
	if (!*p)
		return fail("empty volume name in section \"%s\"%s", sname, "");
	if (strlen(p) > UBI_VOL_NAME_MAX) {
		fprintf(stderr, "%s: error: too long volume name in section \"%s\", max. is %d characters\n", prog,
			sname, UBI_VOL_NAME_MAX);
		return -1;
	}
	v->name = p;

	p = ubi_ini_get(ini, sname, "vol_alignment");
	int64_t align = 1;
	if (p && !ubi_tool_parse_i64(p, &align))
		return fail("bad volume alignment \"%s\" in section \"%s\"", p, sname);
	if (align <= 0)
		return fail("not positive volume alignment %s in section \"%s\"", p, sname);
	if (align >= g->leb_size) {
		fprintf(stderr, "%s: error: too large alignment %lld in section \"%s\", max is %u (LEB size)\n",
			prog, (long long)align, sname, g->leb_size);
		return -1;
	}
	v->alignment = (uint32_t)align;

	p = ubi_ini_get(ini, sname, "vol_flags");
	if (p && *p) {
		if (!strcmp(p, "autoresize"))
			v->flags = UBI_VTBL_AUTORESIZE_FLG;
		else if (!strcmp(p, "skip-check"))
			v->flags = UBI_VTBL_SKIP_CRC_CHECK_FLG;
		else
			return fail("unknown flags \"%s\" in section \"%s\" (expected \"autoresize\" or "
				    "\"skip-check\")",
				    p, sname);
	}
	v->data_pad = g->leb_size % v->alignment;
	v->usable = g->leb_size - v->data_pad;
	if (verbose)
		printf("%s: section \"%s\": volume ID %u, %s, name \"%s\", size %llu, alignment %u%s\n", prog, sname,
		       v->id, v->type == UBI_VID_STATIC ? "static" : "dynamic", v->name,
		       (unsigned long long)v->bytes, v->alignment, v->image ? "" : ", no image");
	return 0;
}

/* Lay out one PEB in buf: 0xFF, EC header, VID header, data (in that order,
 * as mtd-utils does, so that odd -O values overlap identically). */
static void build_peb(const struct unz_geo *g, uint8_t *buf, const struct ubi_vid_hdr *vid, const void *data,
		      size_t len)
{
	memset(buf, 0xFF, g->peb_size);
	struct ubi_ec_hdr ec = {.version = g->ubi_ver,
				.ec = g->ec,
				.vid_hdr_offset = g->vid_off,
				.data_offset = g->data_off,
				.image_seq = g->image_seq};
	ubi_ec_hdr_pack(&ec, buf);
	if (g->ubi_ver != UBI_VERSION) { /* the packer never writes version 0 */
		buf[4] = g->ubi_ver;
		uint32_t crc = util_crc32(UTIL_CRC32_INIT, buf, 60);
		buf[60] = (uint8_t)(crc >> 24), buf[61] = (uint8_t)(crc >> 16), buf[62] = (uint8_t)(crc >> 8),
		buf[63] = (uint8_t)crc;
	}
	uint8_t vh[UBI_HDR_SIZE];
	struct ubi_vid_hdr v = *vid;
	v.version = g->ubi_ver;
	ubi_vid_hdr_pack(&v, vh);
	if (g->ubi_ver != UBI_VERSION) {
		vh[4] = g->ubi_ver;
		uint32_t crc = util_crc32(UTIL_CRC32_INIT, vh, 60);
		vh[60] = (uint8_t)(crc >> 24), vh[61] = (uint8_t)(crc >> 16), vh[62] = (uint8_t)(crc >> 8),
		vh[63] = (uint8_t)crc;
	}
	memcpy(buf + g->vid_off, vh, UBI_HDR_SIZE);
	if (len)
		memcpy(buf + g->data_off, data, len);
}

static int write_all(int fd, const void *buf, size_t len, uint64_t off, const char *out)
{
	const uint8_t *p = buf;
	while (len) {
		ssize_t w = pwrite(fd, p, len, (off_t)off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			fprintf(stderr, "%s: error: cannot write to \"%s\": %s\n", prog, out,
				w < 0 ? strerror(errno) : "short write");
			return -1;
		}
		p += w, len -= (size_t)w, off += (uint64_t)w;
	}
	return 0;
}

/* Write the PEBs of one volume's image starting at PEB *peb. */
static int write_volume(const struct unz_geo *g, const struct unz_vol *v, int out_fd, const char *out,
			uint64_t *peb, uint8_t *pebbuf, uint8_t *leb)
{
	int in = open(v->image, O_RDONLY);
	if (in < 0) {
		fprintf(stderr, "%s: error: cannot open \"%s\": %s\n", prog, v->image, strerror(errno));
		return -1;
	}
	uint64_t left = v->image_size;
	uint32_t used_ebs = (uint32_t)((v->image_size + v->usable - 1) / v->usable);
	uint32_t lnum = 0;
	int ret = 0;
	while (left) {
		size_t len = left < v->usable ? (size_t)left : v->usable;
		size_t got = 0;
		while (got < len) {
			ssize_t r = read(in, leb + got, len - got);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0) {
				fprintf(stderr, "%s: error: cannot read %zu bytes from \"%s\": %s\n", prog, len - got,
					v->image, r < 0 ? strerror(errno) : "file shrank");
				ret = -1;
				goto out;
			}
			got += (size_t)r;
		}
		struct ubi_vid_hdr vid = {.vol_type = v->type,
					  .vol_id = v->id,
					  .lnum = lnum,
					  .data_pad = v->data_pad,
					  .compat = 0};
		if (v->type == UBI_VID_STATIC) {
			vid.data_size = (uint32_t)len;
			vid.used_ebs = used_ebs;
			vid.data_crc = util_crc32(UTIL_CRC32_INIT, leb, len);
		}
		build_peb(g, pebbuf, &vid, leb, len);
		if (write_all(out_fd, pebbuf, g->peb_size, *peb * g->peb_size, out)) {
			ret = -1;
			goto out;
		}
		(*peb)++;
		lnum++;
		left -= len;
	}
out:
	close(in);
	return ret;
}

static int parse_args(int argc, char **argv, struct unz_geo *g, const char **in, const char **out, int *verbose)
{
	static const struct option longopts[] = {
		{"output", required_argument, NULL, 'o'},	  {"peb-size", required_argument, NULL, 'p'},
		{"min-io-size", required_argument, NULL, 'm'},	  {"sub-page-size", required_argument, NULL, 's'},
		{"vid-hdr-offset", required_argument, NULL, 'O'}, {"erase-counter", required_argument, NULL, 'e'},
		{"ubi-ver", required_argument, NULL, 'x'},	  {"image-seq", required_argument, NULL, 'Q'},
		{"verbose", no_argument, NULL, 'v'},		  {"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},		  {NULL, 0, NULL, 0}};
	uint64_t peb = 0, minio = 0, sub = 0, vidoff = 0, ec = 0, ver = 1, seq = 0;
	bool have_peb = false, have_minio = false, have_sub = false, have_seq = false;
	optind = 1;
	opterr = 1;
	int c;
	while ((c = getopt_long(argc, argv, "o:p:m:s:O:e:x:Q:vhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			*out = optarg;
			break;
		case 'p':
			if (!ubi_tool_parse_bytes(optarg, &peb) || !peb)
				return fail("bad physical eraseblock size: \"%s\"%s", optarg, "");
			have_peb = true;
			break;
		case 'm':
			if (!ubi_tool_parse_bytes(optarg, &minio) || !minio)
				return fail("bad min. I/O unit size: \"%s\"%s", optarg, "");
			if (!is_pow2(minio))
				return fail("min. I/O unit size should be power of 2 (got \"%s\")%s", optarg, "");
			have_minio = true;
			break;
		case 's':
			if (!ubi_tool_parse_bytes(optarg, &sub) || !sub)
				return fail("bad sub-page size: \"%s\"%s", optarg, "");
			if (!is_pow2(sub))
				return fail("sub-page size should be power of 2 (got \"%s\")%s", optarg, "");
			have_sub = true;
			break;
		case 'O':
			if (!ubi_tool_parse_u64(optarg, &vidoff) || vidoff > INT32_MAX)
				return fail("bad VID header offset: \"%s\"%s", optarg, "");
			break;
		case 'e':
			if (!ubi_tool_parse_u64(optarg, &ec) || ec > INT32_MAX)
				return fail("bad erase counter value: \"%s\"%s", optarg, "");
			break;
		case 'x':
			/* one byte in the EC header */
			if (!ubi_tool_parse_u64(optarg, &ver) || ver > 255)
				return fail("bad UBI version: \"%s\" (0..255)%s", optarg, "");
			break;
		case 'Q':
			if (!ubi_tool_parse_u64(optarg, &seq) || seq > 0xFFFFFFFFu)
				return fail("bad UBI image sequence number: \"%s\"%s", optarg, "");
			have_seq = true;
			break;
		case 'v':
			*verbose = 1;
			break;
		case 'h':
			usage(stdout);
			return 1;
		case 'V':
			printf("ubikit ubinize 0.1.0 (mtd-utils ubinize compatible)\n");
			return 1;
		default:
			fprintf(stderr, "Use -h for help\n");
			return -2;
		}
	}
	if (optind == argc)
		return fail("input configuration file was not specified (use -h for help)%s%s", "", "");
	if (optind != argc - 1)
		return fail("more than one configuration file was specified (use -h for help)%s%s", "", "");
	*in = argv[optind];
	if (!have_peb)
		return fail("physical eraseblock size was not specified (use -h for help)%s%s", "", "");
	if (peb > UBINIZE_MAX_PEB_SIZE) {
		fprintf(stderr, "%s: error: too high physical eraseblock size %llu (max. %u)\n", prog,
			(unsigned long long)peb, UBINIZE_MAX_PEB_SIZE);
		return -1;
	}
	if (!have_minio)
		return fail("min. I/O unit size was not specified (use -h for help)%s%s", "", "");
	if (!have_sub)
		sub = minio;
	if (sub > minio)
		return fail("sub-page cannot be larger than min. I/O unit%s%s", "", "");
	if (peb % minio)
		return fail("physical eraseblock should be multiple of min. I/O units%s%s", "", "");
	if (minio % sub)
		return fail("min. I/O unit size should be multiple of sub-page size%s%s", "", "");
	if (!*out)
		return fail("output file was not specified (use -h for help)%s%s", "", "");
	if (vidoff) {
		if (vidoff + UBI_HDR_SIZE >= peb)
			return fail("bad VID header position%s%s", "", "");
		if (vidoff % 8)
			return fail("VID header offset has to be multiple of 8%s%s", "", "");
	}
	g->peb_size = (uint32_t)peb;
	g->min_io = (uint32_t)minio;
	g->subpage = (uint32_t)sub;
	/* Offsets exactly as mtd-utils computes them (it does not apply the
	 * kernel's sanity rules; we warn about those below). */
	g->vid_off = vidoff ? (uint32_t)vidoff : (UBI_HDR_SIZE + g->subpage - 1) / g->subpage * g->subpage;
	g->data_off = (g->vid_off + UBI_HDR_SIZE + g->min_io - 1) / g->min_io * g->min_io;
	if (g->data_off >= g->peb_size || g->peb_size - g->data_off < UBI_VTBL_RECORD_SIZE)
		return fail("no room for data: the data offset is at or past the end of the eraseblock%s%s", "", "");
	g->leb_size = g->peb_size - g->data_off;
	g->ec = ec;
	g->ubi_ver = (uint8_t)ver;
	g->image_seq = have_seq ? (uint32_t)seq : ubi_tool_random_seq();
	g->max_volumes = g->leb_size / UBI_VTBL_RECORD_SIZE;
	if (g->max_volumes > UBI_MAX_VOLUMES)
		g->max_volumes = UBI_MAX_VOLUMES;
	struct ubi_offsets k;
	if (ubi_calc_offsets(g->peb_size, g->min_io, g->subpage, g->vid_off, &k))
		fprintf(stderr,
			"%s: warning: VID header offset %u with sub-page %u and min. I/O %u breaks the kernel's "
			"rules: Linux will refuse to attach this image\n",
			prog, g->vid_off, g->subpage, g->min_io);
	if (g->ubi_ver != UBI_VERSION)
		fprintf(stderr, "%s: warning: UBI version %u in the headers: Linux attaches only version %d\n", prog,
			g->ubi_ver, UBI_VERSION);
	return 0;
}

int cmd_ubinize(int argc, char **argv)
{
	struct unz_geo g = {0};
	const char *in = NULL, *out = NULL;
	int verbose = 0;
	int r = parse_args(argc, argv, &g, &in, &out, &verbose);
	if (r == 1)
		return 0;
	if (r)
		return 2; /* every error found in the arguments is a usage error */
	if (verbose) {
		printf("%s: LEB size:                  %u\n", prog, g.leb_size);
		printf("%s: PEB size:                  %u\n", prog, g.peb_size);
		printf("%s: min. I/O size:             %u\n", prog, g.min_io);
		printf("%s: sub-page size:             %u\n", prog, g.subpage);
		printf("%s: VID offset:                %u\n", prog, g.vid_off);
		printf("%s: data offset:               %u\n", prog, g.data_off);
		printf("%s: UBI image sequence number: %u\n", prog, g.image_seq);
	}

	struct ubi_ini ini;
	struct util_err err = {{0}};
	if (ubi_ini_load(in, &ini, &err)) {
		fprintf(stderr, "%s: error: cannot load the input ini file: %s\n", prog, util_err_msg(&err));
		return 1;
	}
	int ret = 1;
	struct unz_vol *vols = NULL;
	uint8_t *pebbuf = NULL, *leb = NULL, *vtbl = NULL;
	int out_fd = -1;
	size_t nsec = ubi_ini_nsec(&ini), nvol = 0;
	if (nsec == 0) {
		fail("no sections found in the ini-file \"%s\"%s", in, "");
		goto out;
	}
	if (nsec > g.max_volumes) {
		fprintf(stderr, "%s: error: too many sections (%zu) in the ini-file \"%s\": each section is a UBI "
				"volume, maximum count of volumes is %u\n",
			prog, nsec, in, g.max_volumes);
		goto out;
	}
	vols = calloc(nsec, sizeof(*vols));
	pebbuf = malloc(g.peb_size);
	leb = malloc(g.leb_size);
	vtbl = malloc((size_t)g.max_volumes * UBI_VTBL_RECORD_SIZE);
	if (!vols || !pebbuf || !leb || !vtbl) {
		fail("out of memory%s%s", "", "");
		goto out;
	}
	bool autoresize = false;
	for (size_t i = 0; i < nsec; i++) {
		const char *sname = ubi_ini_secname(&ini, i);
		struct unz_vol *v = &vols[nvol];
		r = read_section(&ini, &g, sname, v, verbose);
		if (r < 0)
			goto out;
		if (r > 0)
			continue;
		for (size_t j = 0; j < nvol; j++) {
			if (vols[j].id == v->id) {
				fprintf(stderr, "%s: error: volume IDs must be unique, but ID %u in section \"%s\" is "
						"not (also in section \"%s\")\n",
					prog, v->id, sname, vols[j].section);
				goto out;
			}
			if (!strcmp(vols[j].name, v->name)) {
				fprintf(stderr, "%s: error: volume names must be unique, but name \"%s\" in section "
						"\"%s\" is not (also in section \"%s\")\n",
					prog, v->name, sname, vols[j].section);
				goto out;
			}
		}
		if ((v->flags & UBI_VTBL_SKIP_CRC_CHECK_FLG) && v->type != UBI_VID_STATIC) {
			fail("skip-check is only valid for static volumes (section \"%s\")%s", sname, "");
			goto out;
		}
		if (v->flags & UBI_VTBL_AUTORESIZE_FLG) {
			if (autoresize) {
				fail("only one volume is allowed to have the autoresize flag (section \"%s\")%s",
				     sname, "");
				goto out;
			}
			autoresize = true;
		}
		nvol++;
	}

	{
		/* The output must be none of the inputs (the ini file, the volume
		 * images): compared by device and inode before it is truncated. */
		struct util_file_id *ids = calloc(nvol + 1, sizeof(*ids));
		const char **names = calloc(nvol + 1, sizeof(*names));
		if (!ids || !names) {
			free(ids);
			free(names);
			goto out;
		}
		util_file_id_path(in, &ids[0]);
		names[0] = in;
		for (size_t i = 0; i < nvol; i++) {
			if (vols[i].image)
				util_file_id_path(vols[i].image, &ids[i + 1]);
			names[i + 1] = vols[i].image;
		}
		struct util_err oe;
		out_fd = util_open_output(out, ids, names, nvol + 1, &oe);
		free(ids);
		free(names);
		if (out_fd < 0) {
			fprintf(stderr, "%s: error: %s\n", prog, util_err_msg(&oe));
			out_fd = -1;
			goto out;
		}
	}
	/* Volume table: every slot the empty record, then the volumes. */
	struct ubi_vtbl_record empty = {0};
	for (uint32_t i = 0; i < g.max_volumes; i++)
		ubi_vtbl_record_pack(&empty, vtbl + (size_t)i * UBI_VTBL_RECORD_SIZE);
	uint64_t peb = UBI_LAYOUT_VOLUME_EBS;
	for (size_t i = 0; i < nvol; i++) {
		const struct unz_vol *v = &vols[i];
		struct ubi_vtbl_record rec = {0};
		/* mtd-utils rounds by the full LEB size, not the usable size. */
		rec.reserved_pebs = (uint32_t)((v->bytes + g.leb_size - 1) / g.leb_size);
		rec.alignment = v->alignment;
		rec.data_pad = v->data_pad;
		rec.vol_type = v->type;
		rec.name_len = (uint16_t)strlen(v->name);
		memcpy(rec.name, v->name, rec.name_len + 1);
		rec.flags = v->flags;
		ubi_vtbl_record_pack(&rec, vtbl + (size_t)v->id * UBI_VTBL_RECORD_SIZE);
		if (v->image) {
			if (verbose)
				printf("%s: writing volume %u from \"%s\"\n", prog, v->id, v->image);
			if (write_volume(&g, v, out_fd, out, &peb, pebbuf, leb))
				goto out_rm;
		}
	}
	for (uint32_t l = 0; l < UBI_LAYOUT_VOLUME_EBS; l++) {
		struct ubi_vid_hdr vid = {.vol_type = UBI_VID_DYNAMIC,
					  .vol_id = UBI_LAYOUT_VOLUME_ID,
					  .lnum = l,
					  .compat = UBI_COMPAT_REJECT};
		build_peb(&g, pebbuf, &vid, vtbl, (size_t)g.max_volumes * UBI_VTBL_RECORD_SIZE);
		if (write_all(out_fd, pebbuf, g.peb_size, (uint64_t)l * g.peb_size, out))
			goto out_rm;
	}
	if (verbose)
		printf("%s: done: %llu PEBs written to \"%s\"\n", prog, (unsigned long long)peb, out);
	ret = 0;
	goto out;
out_rm:
	close(out_fd);
	out_fd = -1;
	unlink(out);
out:
	if (out_fd >= 0)
		close(out_fd);
	free(vols);
	free(pebbuf);
	free(leb);
	free(vtbl);
	ubi_ini_free(&ini);
	return ret;
}
