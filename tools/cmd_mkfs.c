/* cmd_mkfs — 'ubikit mkfs': mkfs.ubifs's command line (so build scripts
 * switch by changing the program name), plus --uuid, --threads,
 * --no-xattrs, SOURCE_DATE_EPOCH, --ubinize (the result wrapped into a
 * UBI image by `ubikit ubinize`) and `ubikit mkfs FLASH --vol-name NAME`
 * (straight onto a UBI volume of a flash image). Options mkfs.ubifs has
 * but ubikit does not support are refused by name. The work is fs_mkfs
 * (src/fs) and image_mkfs (src/image). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "commands.h"
#include "fs/fs_mkfs.h"
#include "image/image_mkfs.h"
#include "tool_image.h"
#include "ubi/ubi_vol_io.h"
#include "ubi_tool_num.h"
#include "ubifs/ubifs_compr_ctx.h"
#include "ubifs/ubifs_media.h"

#define WHO "ubikit mkfs"

enum {
	OPT_UUID = 1000,
	OPT_THREADS,
	OPT_NO_XATTRS,
	OPT_UBINIZE,
	OPT_PEB,
	OPT_SUB,
	OPT_VIDOFF,
	OPT_VOLNAME,
	OPT_VOLID,
	OPT_VOLSIZE,
	OPT_QUIET,
	OPT_REFUSE,
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: ubikit mkfs [options] -o FILE\n"
		"       ubikit mkfs [options] FLASH --vol-name NAME\n"
		"Make a UBIFS image from a directory, with mkfs.ubifs's options:\n"
		"  -r, -d, --root=DIR        source tree (default: an empty root)\n"
		"  -m, --min-io-size=SIZE    minimum I/O unit\n"
		"  -e, --leb-size=SIZE       logical erase block size\n"
		"  -c, --max-leb-cnt=COUNT   maximum LEB count\n"
		"  -o, --output=FILE         output image\n"
		"  -j, --jrn-size=SIZE       journal size\n"
		"  -R, --reserved=SIZE       space reserved for the superuser\n"
		"  -x, --compr=TYPE          lzo (default), favor_lzo, zlib, zstd or none\n"
		"  -X, --favor-percent=N     favor_lzo: zlib only when N%% smaller (default 20)\n"
		"  -f, --fanout=N            index fanout (default 8)\n"
		"  -F, --space-fixup         free-space fixup on first mount\n"
		"  -k, --keyhash=TYPE        r5 (default) or test\n"
		"  -l, --log-lebs=COUNT      log LEBs\n"
		"  -p, --orph-lebs=COUNT     orphan LEBs (default 1)\n"
		"  -D, --devtable=FILE       device table\n"
		"  -U, --squash-uids         all files owned by root\n"
		"  -y, --yes                 (accepted; nothing is asked)\n"
		"  -v, --verbose             print the geometry\n"
		"  -V, --version             print the version\n"
		"Beyond mkfs.ubifs:\n"
		"  --uuid=UUID               file system UUID (default: random, or from SOURCE_DATE_EPOCH)\n"
		"  --threads=N               compression threads (default: one per CPU)\n"
		"  --no-xattrs               do not copy extended attributes\n"
		"  --quiet                   no summary line\n"
		"  --ubinize=FILE            also write a UBI image holding the file system;\n"
		"      --peb-size=SIZE (required), --sub-page-size=SIZE, --vid-hdr-offset=N,\n"
		"      --vol-name=NAME (default rootfs), --vol-id=N (0), --vol-size=SIZE\n"
		"      (default: -c LEBs, and autoresize)\n"
		"FLASH (a simulator flash, NAND dump with or without OOB, UBI image, MTD device\n"
		"holding UBI): the file system goes into volume NAME, replacing its contents\n"
		"(as ubiupdatevol); if there is no such volume, a dynamic one is created (as\n"
		"ubimkvol) of --vol-size, else -c LEBs, else all the free space; --vol-id N\n"
		"chooses its ID. -m, -e and -c default to the flash's and the volume's.\n"
		"      --kind ubi|nand-oob|sim|mtd, --with-oob, --no-oob, --oob=SIZE,\n"
		"      --peb-size=SIZE, --vid-hdr-offset=N: what FLASH is (detected otherwise)\n"
		"Sizes take KiB, MiB, GiB. SOURCE_DATE_EPOCH: later times are clamped to it.\n"
		"Times are stored in whole seconds, as mkfs.ubifs stores them.\n");
}

static int parse_uuid(const char *s, uint8_t out[16])
{
	int n = 0;
	for (const char *p = s; *p; p++) {
		if (*p == '-')
			continue;
		int v;
		if (*p >= '0' && *p <= '9')
			v = *p - '0';
		else if (*p >= 'a' && *p <= 'f')
			v = *p - 'a' + 10;
		else if (*p >= 'A' && *p <= 'F')
			v = *p - 'A' + 10;
		else
			return -1;
		if (n >= 32)
			return -1;
		out[n / 2] = (uint8_t)((n % 2) ? (out[n / 2] | v) : (v << 4));
		n++;
	}
	return n == 32 ? 0 : -1;
}

/* mkfs.ubifs refuses an output inside the tree it reads: it would read
 * its own half-written image */
static int inside_root(const char *root, const char *out)
{
	char r[PATH_MAX], d[PATH_MAX], tmp[PATH_MAX];
	if (!root || !out || !realpath(root, r))
		return 0;
	snprintf(tmp, sizeof(tmp), "%s", out);
	if (!realpath(dirname(tmp), d))
		return 0;
	size_t n = strlen(r);
	return !strcmp(r, d) || (!strncmp(r, d, n) && (d[n] == '/' || !strcmp(r, "/")));
}

static void progress(void *ctx, uint64_t done, uint64_t total)
{
	int *last = ctx;
	int pct = total ? (int)(done * 100 / total) : 100;
	if (pct == *last)
		return;
	*last = pct;
	fprintf(stderr, "\r" WHO ": %3d%% of %" PRIu64 " MiB", pct, total >> 20);
	fflush(stderr);
}

static int run_ubinize(const char *img, const char *out, uint64_t peb, uint32_t minio, uint64_t sub, const char *vidoff,
		       const char *vname, uint64_t vid, uint64_t vsize, int autoresize)
{
	char ini[] = "/tmp/ubikit-mkfs-ini-XXXXXX";
	int fd = mkstemp(ini);
	if (fd < 0) {
		fprintf(stderr, WHO ": cannot create a temporary file: %s\n", strerror(errno));
		return 1;
	}
	FILE *f = fdopen(fd, "w");
	fprintf(f, "[ubifs]\nmode=ubi\nimage=%s\nvol_id=%" PRIu64 "\nvol_type=dynamic\nvol_name=%s\n", img, vid, vname);
	/* default: room for max_leb_cnt LEBs (the journal was sized for
	 * them), and the rest of the flash when attached (autoresize) */
	fprintf(f, "vol_size=%" PRIu64 "\n", vsize);
	if (autoresize)
		fprintf(f, "vol_flags=autoresize\n");
	fclose(f);
	char pbuf[32], mbuf[32], sbuf[32];
	snprintf(pbuf, sizeof(pbuf), "%" PRIu64, peb);
	snprintf(mbuf, sizeof(mbuf), "%u", minio);
	snprintf(sbuf, sizeof(sbuf), "%" PRIu64, sub ? sub : minio);
	char *av[16];
	int ac = 0;
	av[ac++] = "ubinize";
	av[ac++] = "-o";
	av[ac++] = (char *)out;
	av[ac++] = "-p";
	av[ac++] = pbuf;
	av[ac++] = "-m";
	av[ac++] = mbuf;
	av[ac++] = "-s";
	av[ac++] = sbuf;
	if (vidoff) {
		av[ac++] = "-O";
		av[ac++] = (char *)vidoff;
	}
	av[ac++] = ini;
	av[ac] = NULL;
	optind = 0;
	int rc = cmd_ubinize(ac, av);
	unlink(ini);
	return rc;
}

static void summary(const struct fs_mkfs_stats *st, uint32_t max_leb_cnt)
{
	printf("mkfs: %" PRIu64 " files, %" PRIu64 " bytes in, %" PRIu64 " bytes on flash (data %" PRIu64
	       "), ratio %.2f, %u LEBs of %u max\n",
	       st->files, st->bytes_in, st->image_bytes, st->data_bytes_out,
	       st->data_bytes_out ? (double)st->bytes_in / (double)st->data_bytes_out : 1.0, st->leb_cnt, max_leb_cnt);
}

/* `ubikit mkfs FLASH --vol-name NAME`: image_mkfs does the work */
static int mkfs_flash(const char *flash, struct tool_image_opts *fo, struct fs_mkfs_opts *o, const char *vname,
		      long vid, uint64_t vsize, uint64_t peb, const char *vidoff, int verbose, int quiet, const int *bar)
{
	if (peb)
		fo->img.peb_size = (uint32_t)peb;
	if (vidoff) {
		uint64_t v;
		if (!ubi_tool_parse_u64(vidoff, &v) || v < 64 || v > UINT32_MAX) {
			fprintf(stderr, WHO ": error: bad --vid-hdr-offset \"%s\"\n", vidoff);
			return 2;
		}
		fo->img.vid_hdr_offset = (uint32_t)v;
	}
	struct image_mkfs_target t = {.vol_name = vname, .vol_id = vid, .vol_size = vsize};
	struct fs_mkfs_stats st;
	struct image_mkfs_result r;
	memset(&st, 0, sizeof(st));
	char msg[1024];
	int err = image_mkfs_volume(flash, &fo->img, &t, o, &st, &r, msg, sizeof(msg));
	if (*bar >= 0)
		fputc('\n', stderr);
	if (err) {
		fprintf(stderr, WHO ": error: %s\n", msg[0] ? msg : strerror(-err));
		return 1;
	}
	if (verbose)
		printf("ubikit mkfs\n\troot:         %s\n\tmin_io_size:  %u\n\tleb_size:     %u\n\tmax_leb_cnt:  %u\n"
		       "\tflash:        %s\n\tvolume:       %u \"%s\" (%u LEBs%s)\n\tleb_cnt:      %u\n",
		       o->root ? o->root : "(empty)", r.min_io_size, r.leb_size, o->bp.max_leb_cnt, flash, r.vol_id,
		       vname, r.vol_lebs, r.created ? ", created" : "", st.leb_cnt);
	if (!quiet) {
		summary(&st, o->bp.max_leb_cnt);
		printf("mkfs: %s volume %u \"%s\" (%u LEBs of %u bytes) on %s\n", r.created ? "created" : "replaced",
		       r.vol_id, vname, r.vol_lebs, r.leb_size, flash);
	}
	return 0;
}

int cmd_mkfs(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"root", 1, NULL, 'r'},           {"min-io-size", 1, NULL, 'm'},   {"leb-size", 1, NULL, 'e'},
		{"max-leb-cnt", 1, NULL, 'c'},    {"output", 1, NULL, 'o'},        {"devtable", 1, NULL, 'D'},
		{"yes", 0, NULL, 'y'},            {"help", 0, NULL, 'h'},          {"verbose", 0, NULL, 'v'},
		{"version", 0, NULL, 'V'},        {"debug-level", 1, NULL, 'g'},   {"jrn-size", 1, NULL, 'j'},
		{"reserved", 1, NULL, 'R'},       {"compr", 1, NULL, 'x'},         {"favor-percent", 1, NULL, 'X'},
		{"fanout", 1, NULL, 'f'},         {"space-fixup", 0, NULL, 'F'},   {"keyhash", 1, NULL, 'k'},
		{"log-lebs", 1, NULL, 'l'},       {"orph-lebs", 1, NULL, 'p'},     {"squash-uids", 0, NULL, 'U'},
		{"set-inode-attr", 0, NULL, 'a'}, {"selinux", 1, NULL, 's'},       {"key", 1, NULL, 'K'},
		{"key-descriptor", 1, NULL, 'b'}, {"padding", 1, NULL, 'P'},       {"cipher", 1, NULL, 'C'},
		{"hash-algo", 1, NULL, OPT_REFUSE}, {"auth-key", 1, NULL, OPT_REFUSE}, {"auth-cert", 1, NULL, OPT_REFUSE},
		{"uuid", 1, NULL, OPT_UUID},      {"threads", 1, NULL, OPT_THREADS}, {"no-xattrs", 0, NULL, OPT_NO_XATTRS},
		{"ubinize", 1, NULL, OPT_UBINIZE}, {"peb-size", 1, NULL, OPT_PEB}, {"sub-page-size", 1, NULL, OPT_SUB},
		{"vid-hdr-offset", 1, NULL, OPT_VIDOFF}, {"vol-name", 1, NULL, OPT_VOLNAME}, {"vol-id", 1, NULL, OPT_VOLID},
		{"vol-size", 1, NULL, OPT_VOLSIZE}, {"quiet", 0, NULL, OPT_QUIET},
		{"kind", 1, NULL, 0x1000},        {"oob", 1, NULL, 0x1003},        {"with-oob", 0, NULL, 0x1004},
		{"no-oob", 0, NULL, 0x1005},      {NULL, 0, NULL, 0}};
	struct fs_mkfs_opts o;
	memset(&o, 0, sizeof(o));
	o.bp.default_compr = UBIFS_COMPR_LZO;
	o.bp.key_hash = UBIFS_KEY_HASH_R5;
	uint64_t minio = 0, leb = 0, maxleb = 0, v;
	const char *out = NULL, *ubi_out = NULL, *vidoff = NULL, *vname = "rootfs";
	uint64_t peb = 0, sub = 0, vid = 0, vsize = 0, rp = 0;
	int verbose = 0, quiet = 0, have_uuid = 0, have_vname = 0, have_vid = 0, c;
	struct tool_image_opts fo; /* FLASH: how to open it */
	tool_image_opts_init(&fo);
	char ob[64];
	optind = 0;
	while ((c = getopt_long(argc, argv, "d:r:m:o:D:yh?vVe:c:g:f:Fp:k:x:X:j:R:l:UQqaK:b:P:C:s:", longopts, NULL)) != -1) {
		const char *typed = tool_opt_typed(argv, optind, optarg, c, ob, sizeof(ob));
		switch (c) {
		case 'r':
		case 'd':
			o.root = optarg;
			break;
		case 'm':
			if (tool_num(WHO, typed, optarg, true, 1, 1u << 20, &minio))
				return 2;
			break;
		case 'e':
			if (tool_num(WHO, typed, optarg, true, 1, 1u << 30, &leb))
				return 2;
			break;
		case 'c':
			if (tool_num(WHO, typed, optarg, true, 1, 0x7FFFFFFF, &maxleb))
				return 2;
			break;
		case 'o':
			out = optarg;
			break;
		case 'D':
			o.devtable = optarg;
			break;
		case 'y':
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'v':
			verbose = 1;
			break;
		case 'V':
			printf("ubikit mkfs (mkfs.ubifs compatible)\n");
			return 0;
		case 'j':
			if (tool_num(WHO, typed, optarg, true, 1, UINT64_MAX >> 1, &o.bp.max_bud_bytes))
				return 2;
			break;
		case 'R':
			if (tool_num(WHO, typed, optarg, true, 0, UINT64_MAX >> 16, &rp))
				return 2;
			break;
		case 'x':
			if (!strcmp(optarg, "none"))
				o.bp.default_compr = UBIFS_COMPR_NONE;
			else if (!strcmp(optarg, "lzo"))
				o.bp.default_compr = UBIFS_COMPR_LZO;
			else if (!strcmp(optarg, "zlib"))
				o.bp.default_compr = UBIFS_COMPR_ZLIB;
			else if (!strcmp(optarg, "zstd"))
				o.bp.default_compr = UBIFS_COMPR_ZSTD;
			else if (!strcmp(optarg, "favor_lzo")) {
				o.bp.default_compr = UBIFS_COMPR_LZO;
				o.favor_lzo = 1;
			} else {
				fprintf(stderr, WHO ": error: bad compressor \"%s\" for %s (none, lzo, favor_lzo, zlib, zstd)\n",
					optarg, typed);
				return 2;
			}
			break;
		case 'X':
			if (tool_num(WHO, typed, optarg, false, 1, 99, &v))
				return 2;
			o.favor_percent = (unsigned)v;
			break;
		case 'f':
			if (tool_num(WHO, typed, optarg, false, UBIFS_MIN_FANOUT, 65535, &v))
				return 2;
			o.bp.fanout = (uint32_t)v;
			break;
		case 'F':
			o.bp.space_fixup = 1;
			break;
		case 'k':
			if (!strcmp(optarg, "r5"))
				o.bp.key_hash = UBIFS_KEY_HASH_R5;
			else if (!strcmp(optarg, "test"))
				o.bp.key_hash = UBIFS_KEY_HASH_TEST;
			else {
				fprintf(stderr, WHO ": error: bad key hash \"%s\" for %s (r5 or test)\n", optarg, typed);
				return 2;
			}
			break;
		case 'l':
			if (tool_num(WHO, typed, optarg, false, 1, 0x7FFFFFFF, &v))
				return 2;
			o.bp.log_lebs = (uint32_t)v;
			break;
		case 'p':
			if (tool_num(WHO, typed, optarg, false, 1, 0x7FFFFFFF, &v))
				return 2;
			o.bp.orph_lebs = (uint32_t)v;
			break;
		case 'U':
			o.squash_uids = 1;
			break;
		case OPT_UUID:
			if (parse_uuid(optarg, o.bp.uuid)) {
				fprintf(stderr, WHO ": error: bad UUID \"%s\" for --uuid (32 hex digits, dashes allowed)\n",
					optarg);
				return 2;
			}
			have_uuid = 1;
			break;
		case OPT_THREADS:
			if (tool_num(WHO, typed, optarg, false, 1, 64, &v))
				return 2;
			o.threads = (int)v;
			break;
		case OPT_NO_XATTRS:
			o.no_xattrs = 1;
			break;
		case OPT_QUIET:
			quiet = 1;
			break;
		case OPT_UBINIZE:
			ubi_out = optarg;
			break;
		case OPT_PEB:
			if (tool_num(WHO, typed, optarg, true, 1, 1u << 30, &peb))
				return 2;
			break;
		case OPT_SUB:
			if (tool_num(WHO, typed, optarg, true, 1, 1u << 20, &sub))
				return 2;
			break;
		case OPT_VIDOFF:
			vidoff = optarg;
			break;
		case OPT_VOLNAME:
			vname = optarg;
			have_vname = 1;
			break;
		case OPT_VOLID:
			if (tool_num(WHO, typed, optarg, false, 0, 127, &vid))
				return 2;
			have_vid = 1;
			break;
		case 0x1000:
		case 0x1003:
		case 0x1004:
		case 0x1005:
			if (tool_image_opt(&fo, c, optarg, "mkfs") < 0)
				return 2;
			break;
		case OPT_VOLSIZE:
			if (tool_num(WHO, typed, optarg, true, 1, UINT64_MAX >> 1, &vsize))
				return 2;
			break;
		case 'g':
		case 'a':
		case 's':
		case 'K':
		case 'b':
		case 'P':
		case 'C':
		case 'Q':
		case 'q':
		case OPT_REFUSE:
			fprintf(stderr, WHO ": error: option %s is not supported by ubikit mkfs (%s)\n", typed,
				c == 'g' ? "debug level" : c == 'a' ? "inode-number xattrs" : c == 's' ? "SELinux labels"
				: c == OPT_REFUSE ? "authentication" : "encryption");
			return 2;
		default:
			usage(stderr);
			return 2;
		}
	}
	const char *flash = optind < argc ? argv[optind++] : NULL;
	if (optind < argc) {
		fprintf(stderr, WHO ": error: unexpected argument \"%s\"\n", argv[optind]);
		return 2;
	}
	if (flash && (out || ubi_out)) {
		fprintf(stderr, WHO ": error: FLASH (%s) and %s exclude each other: the file system goes onto the flash\n",
			flash, out ? "-o" : "--ubinize");
		return 2;
	}
	if (flash && !have_vname) {
		fprintf(stderr, WHO ": error: writing onto %s needs --vol-name NAME (the UBI volume to replace or create)\n",
			flash);
		return 2;
	}
	if (!flash && (fo.img.kind || fo.img.with_oob != -1)) {
		fprintf(stderr, WHO ": error: --kind, --oob, --with-oob and --no-oob describe a FLASH argument; there is none\n");
		return 2;
	}
	if (!out && !ubi_out && !flash) {
		fprintf(stderr, WHO ": error: no output file (-o FILE, --ubinize FILE, or FLASH --vol-name NAME)\n");
		return 2;
	}
	if (!flash && (!minio || !leb || !maxleb)) {
		fprintf(stderr, WHO ": error: %s was not specified (-m, -e and -c are required, as for mkfs.ubifs)\n",
			!minio ? "the min. I/O unit size (-m)" : !leb ? "the LEB size (-e)" : "the maximum LEB count (-c)");
		return 2;
	}
	if (inside_root(o.root, out) || inside_root(o.root, ubi_out) || inside_root(o.root, flash)) {
		fprintf(stderr, WHO ": error: the output file cannot be inside the source tree %s\n", o.root);
		return 2;
	}
	if (ubi_out && !peb) {
		fprintf(stderr, WHO ": error: --ubinize needs --peb-size\n");
		return 2;
	}
	if (!ubifs_compr_supported(o.bp.default_compr) || (o.favor_lzo && !ubifs_compr_supported(UBIFS_COMPR_ZLIB))) {
		fprintf(stderr, WHO ": error: this build has no %s compressor\n", ubifs_compr_name(o.bp.default_compr));
		return 2;
	}
	o.bp.min_io_size = (uint32_t)minio;
	o.bp.leb_size = (uint32_t)leb;
	o.bp.max_leb_cnt = (uint32_t)maxleb;
	const char *sde = getenv("SOURCE_DATE_EPOCH");
	if (sde && *sde) {
		uint64_t t;
		if (!ubi_tool_parse_u64(sde, &t) || t > INT64_MAX) {
			fprintf(stderr, WHO ": error: bad SOURCE_DATE_EPOCH \"%s\"\n", sde);
			return 2;
		}
		o.clamp_time = 1;
		o.clamp = (int64_t)t;
		if (!have_uuid) { /* reproducible: derived from the epoch */
			uint64_t x = t ^ 0x75626b69746d6b66ull;
			for (int i = 0; i < 16; i++) {
				x = x * 6364136223846793005ull + 1442695040888963407ull;
				o.bp.uuid[i] = (uint8_t)(x >> 56);
			}
			have_uuid = 1;
		}
	}
	if (!have_uuid && getrandom(o.bp.uuid, 16, 0) != 16) {
		fprintf(stderr, WHO ": error: no random UUID: %s\n", strerror(errno));
		return 1;
	}
	if (!have_uuid || sde) {
		o.bp.uuid[6] = (uint8_t)((o.bp.uuid[6] & 0x0F) | 0x40);
		o.bp.uuid[8] = (uint8_t)((o.bp.uuid[8] & 0x3F) | 0x80);
	}
	/* mkfs.ubifs add_space_overhead: the reserve the user asked for plus
	 * the index and node headers it costs */
	if (rp) {
		uint32_t fan = o.bp.fanout ? o.bp.fanout : 8;
		uint32_t f = fan > 3 ? fan >> 1 : 2;
		uint64_t factor = UBIFS_DATA_NODE_SZ + UBIFS_BLOCK_SIZE + (ubifs_idx_node_len(fan) * 3) / (f - 1);
		o.bp.rp_size = rp * factor / UBIFS_BLOCK_SIZE;
	}
	int last = -1;
	if (isatty(2) && !quiet) {
		o.progress = progress;
		o.progress_ctx = &last;
	}
	if (flash)
		return mkfs_flash(flash, &fo, &o, vname, have_vid ? (long)vid : -1, vsize, peb, vidoff, verbose, quiet,
				  &last);
	uint32_t eff_min_io = o.bp.min_io_size < 8 ? 8 : o.bp.min_io_size;
	char tmp[] = "/tmp/ubikit-mkfs-XXXXXX";
	const char *img = out;
	if (!img) {
		int fd = mkstemp(tmp);
		if (fd < 0) {
			fprintf(stderr, WHO ": cannot create a temporary file: %s\n", strerror(errno));
			return 1;
		}
		close(fd);
		img = tmp;
	}
	struct util_err e = {{0}};
	struct ubi_vol_io *vol;
	int err = fs_mkfs_file_vol_open(img, o.bp.leb_size, eff_min_io, o.bp.max_leb_cnt, &vol, &e);
	struct fs_mkfs_stats st;
	memset(&st, 0, sizeof(st));
	if (!err)
		err = fs_mkfs(vol, &o, &st, &e);
	if (!err || vol) {
		int e2 = vol ? fs_mkfs_file_vol_close(vol, err ? 0 : st.leb_cnt, err ? NULL : &e) : 0;
		if (!err)
			err = e2;
	}
	if (last >= 0)
		fputc('\n', stderr);
	if (err) {
		fprintf(stderr, WHO ": error: %s\n", e.msg[0] ? e.msg : strerror(-err));
		if (!out)
			unlink(tmp);
		return 1;
	}
	if (verbose)
		printf("ubikit mkfs\n\troot:         %s\n\tmin_io_size:  %u\n\tleb_size:     %u\n\tmax_leb_cnt:  %u\n"
		       "\toutput:       %s\n\tmain_first:   %u\n\tdata lebs:    %u\n\tindex lebs:   %u\n\tgc leb:       %u\n"
		       "\tleb_cnt:      %u\n",
		       o.root ? o.root : "(empty)", eff_min_io, o.bp.leb_size, o.bp.max_leb_cnt, img, st.build.main_first,
		       st.build.data_lebs, st.build.idx_lebs, st.build.gc_lnum, st.leb_cnt);
	if (!quiet)
		summary(&st, o.bp.max_leb_cnt);
	int rc = 0;
	if (ubi_out)
		rc = run_ubinize(img, ubi_out, peb, eff_min_io, sub, vidoff, vname, vid,
				 vsize ? vsize : (uint64_t)o.bp.max_leb_cnt * o.bp.leb_size, !vsize);
	if (!out)
		unlink(tmp);
	return rc;
}
