/* cmd_format — 'ubikit format': put UBI onto a flash image, as mtd-utils'
 * ubiformat does (spec UBI-FORMAT.md §17.2):
 *   - read every EC header first; erase counters found are kept (+1 for the
 *     erase done now), unknown ones get the mean of the known ones;
 *   - bad PEBs are skipped (image PEB k may land on a later physical PEB);
 *     a PEB whose erase or program fails is marked bad and the next one used;
 *   - with -f IMAGE (ubinize output) each image PEB is written with its EC
 *     header rewritten (erase counter, image_seq), without its trailing
 *     all-0xFF min. I/O units, so they stay programmable;
 *   - every other good PEB gets an EC header only; without an image the first
 *     two also become an empty layout volume (unless -n).
 * Nothing is erased before everything is known to fit (issue 8): the whole
 * image is read and checked first (EC headers, offsets, the volume table's
 * reservations against the good PEBs of this flash), the image may not be
 * the flash itself, and the host disk space for the whole flash is
 * allocated before the first erase. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "flash/flash.h"
#include "flash/flash_sim.h"
#include "ubi/ubi_media.h"
#include "ubi_tool_flash.h"
#include "ubi_tool_num.h"
#include "util/util_crc.h"
#include "util/util_endian.h"
#include "util/util_file.h"

static const char *const prog = "ubikit format";

#define EC_UNKNOWN (-1)
#define EC_BAD (-2)

struct fmt {
	struct flash_dev *dev;
	struct ubi_offsets off;
	uint32_t image_seq;
	bool override_ec;
	uint64_t ec_value;
	uint8_t ubi_ver;
	int64_t *ec; /* per PEB: erase counter, EC_UNKNOWN, EC_BAD */
	uint64_t mean_ec;
	int verbose, quiet;
	uint32_t marked_bad;
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: ubikit format FLASH [options]\n\n"
		"Format a flash image for UBI, like mtd-utils' ubiformat: keep the erase counters\n"
		"already on flash, skip bad blocks, then either write a UBI image (ubinize output)\n"
		"or leave an empty UBI (EC headers + an empty volume table).\n\n"
		"-f, --flash-image=<file>     UBI image to write (ubinize output; '-' = stdin)\n"
		"-S, --image-size=<bytes>     size of the image (needed with -f -)\n"
		"-e, --erase-counter=<num>    use this erase counter for every PEB instead of\n"
		"                             keeping the old ones\n"
		"-Q, --image-seq=<num>        32-bit image sequence number (default: random)\n"
		"-s, --sub-page-size=<bytes>  sub-page size for the UBI headers (default: the\n"
		"                             flash's)\n"
		"-O, --vid-hdr-offset=<num>   VID header offset (default: after the EC header)\n"
		"-x, --ubi-ver=<num>          UBI version in the EC headers (default 1)\n"
		"-n, --no-volume-table        do not write an empty volume table (no image)\n"
		"-y, --yes                    do not ask (ubikit never asks; for compatibility)\n"
		"-q, --quiet                  print nothing but errors\n"
		"-v, --verbose                be verbose\n"
		"-h, --help                   print this help\n\n" UBI_TOOL_GEO_HELP);
}

static bool all_ff(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != 0xFF)
			return false;
	return true;
}

/* Length of buf without trailing all-0xFF min. I/O units. */
static size_t drop_ffs(const uint8_t *buf, size_t len, uint32_t min_io)
{
	while (len >= min_io && all_ff(buf + len - min_io, min_io))
		len -= min_io;
	return len;
}

static uint64_t next_ec(const struct fmt *f, uint32_t peb)
{
	if (f->override_ec)
		return f->ec_value;
	if (f->ec[peb] >= 0 && (uint64_t)f->ec[peb] < UBI_MAX_ERASECOUNTER)
		return (uint64_t)f->ec[peb] + 1;
	return f->mean_ec;
}

/* Rewrite the EC header at the start of buf with ec and image_seq. */
static void set_ec_hdr(uint8_t *buf, uint64_t ec, uint32_t seq)
{
	put_be64(buf + 8, ec);
	put_be32(buf + 24, seq);
	put_be32(buf + 60, util_crc32(UTIL_CRC32_INIT, buf, 60));
}

/* Erase peb and program len bytes of buf at 0. On an erase or program
 * failure the PEB is marked bad and 1 is returned (try the next PEB). */
static int erase_write(struct fmt *f, uint32_t peb, const uint8_t *buf, size_t len)
{
	int r = flash_erase(f->dev, peb);
	if (!r && len)
		r = flash_write(f->dev, peb, 0, buf, len);
	if (!r)
		return 0;
	if (r != -EIO) {
		const char *m = flash_errmsg(f->dev);
		fprintf(stderr, "%s: error: PEB %u: %s failed: %s\n", prog, peb, len ? "erase/program" : "erase",
			m[0] ? m : strerror(-r));
		return r;
	}
	fprintf(stderr, "%s: warning: PEB %u: erase or program failed, marking it bad\n", prog, peb);
	int m = flash_mark_bad(f->dev, peb);
	if (m) {
		fprintf(stderr, "%s: error: PEB %u: cannot mark bad: %s\n", prog, peb, strerror(-m));
		return m;
	}
	f->ec[peb] = EC_BAD;
	f->marked_bad++;
	return 1;
}

static int scan(struct fmt *f, uint32_t *good, uint32_t *bad, uint32_t *unknown, uint32_t *alien)
{
	const struct flash_geometry *g = &f->dev->geo;
	uint8_t h[UBI_HDR_SIZE];
	uint64_t sum = 0, known = 0;
	*good = *bad = *unknown = *alien = 0;
	for (uint32_t p = 0; p < g->peb_count; p++) {
		int b = flash_is_bad(f->dev, p);
		if (b < 0) {
			fprintf(stderr, "%s: error: PEB %u: cannot check the bad-block state: %s\n", prog, p,
				strerror(-b));
			return b;
		}
		if (b) {
			f->ec[p] = EC_BAD;
			(*bad)++;
			continue;
		}
		(*good)++;
		f->ec[p] = EC_UNKNOWN;
		int r = flash_read(f->dev, p, 0, h, sizeof(h));
		if (r && r != -EUCLEAN && r != -EBADMSG) {
			fprintf(stderr, "%s: error: PEB %u: read of the EC header failed: %s\n", prog, p,
				strerror(-r));
			return r;
		}
		struct ubi_ec_hdr ec;
		enum ubi_hdr_status s = r == -EBADMSG ? UBI_HDR_BAD : ubi_ec_hdr_unpack(h, &ec);
		if (s == UBI_HDR_OK && ec.ec <= UBI_MAX_ERASECOUNTER) {
			f->ec[p] = (int64_t)ec.ec;
			sum += ec.ec;
			known++;
			continue;
		}
		(*unknown)++;
		if (s == UBI_HDR_BAD) {
			(*alien)++;
			if (f->verbose)
				fprintf(stderr, "%s: PEB %u: no valid EC header (erase counter lost)\n", prog, p);
		}
	}
	f->mean_ec = known ? sum / known : 0;
	return 0;
}

/* Read exactly len bytes (pipes deliver in pieces). */
static bool read_full(int fd, uint8_t *buf, size_t len)
{
	while (len) {
		ssize_t r = read(fd, buf, len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return false;
		buf += r;
		len -= (size_t)r;
	}
	return true;
}

/* The -f image, opened and checked in full before anything is written. */
struct fmt_image {
	const char *name;
	int fd;        /* seekable: the file, or a temp copy of standard input */
	uint64_t pebs; /* eraseblocks in it */
};

/* Copy standard input (size bytes) into an unlinked temp file, so the image
 * can be checked in full and then written. */
static int stdin_to_tmp(uint64_t size, uint8_t *buf, size_t bufsz)
{
	FILE *t = tmpfile();
	if (!t) {
		fprintf(stderr, "%s: error: cannot make a temp file for standard input: %s\n", prog, strerror(errno));
		return -1;
	}
	int fd = dup(fileno(t));
	fclose(t);
	if (fd < 0)
		return -1;
	for (uint64_t left = size; left;) {
		size_t n = left < bufsz ? (size_t)left : bufsz;
		if (!read_full(STDIN_FILENO, buf, n)) {
			fprintf(stderr, "%s: error: standard input ended before the %llu bytes given with -S\n", prog,
				(unsigned long long)size);
			close(fd);
			return -1;
		}
		if (write(fd, buf, n) != (ssize_t)n) {
			fprintf(stderr, "%s: error: cannot write the temp copy of standard input: %s\n", prog,
				strerror(errno));
			close(fd);
			return -1;
		}
		left -= n;
	}
	return fd;
}

/* Open the image (image "-" = standard input, whose size must be given
 * with -S) and check all of it against this flash. */
static int image_check(struct fmt *f, const char *image, uint64_t image_size, const struct util_file_id flash_ids[2],
		       struct fmt_image *im)
{
	const struct flash_geometry *g = &f->dev->geo;
	bool is_stdin = !strcmp(image, "-");
	im->name = is_stdin ? "standard input" : image;
	im->fd = -1;
	uint8_t *buf = malloc(g->peb_size);
	if (!buf) {
		fprintf(stderr, "%s: error: out of memory\n", prog);
		return -1;
	}
	int ret = -1;
	uint64_t size;
	if (is_stdin) {
		if (!image_size) {
			fprintf(stderr, "%s: error: an image read from standard input needs its size (-S)\n", prog);
			goto out;
		}
	}
	int in = is_stdin ? STDIN_FILENO : open(image, O_RDONLY | O_CLOEXEC);
	if (in < 0) {
		fprintf(stderr, "%s: error: cannot open \"%s\": %s\n", prog, image, strerror(errno));
		goto out;
	}
	if (util_fd_is_input(in, flash_ids, 2) >= 0) {
		fprintf(stderr, "%s: error: the image \"%s\" is the flash being formatted (or its sidecar)\n", prog,
			im->name);
		if (!is_stdin)
			close(in);
		goto out;
	}
	struct stat st;
	if (!is_stdin) {
		im->fd = in;
		if (fstat(in, &st) || !S_ISREG(st.st_mode)) {
			fprintf(stderr, "%s: error: \"%s\" is not a regular file\n", prog, image);
			goto out;
		}
		if (image_size && (uint64_t)st.st_size != image_size) {
			fprintf(stderr, "%s: error: -S %llu differs from the size of \"%s\" (%lld bytes)\n", prog,
				(unsigned long long)image_size, image, (long long)st.st_size);
			goto out;
		}
		size = (uint64_t)st.st_size;
	} else {
		size = image_size;
	}
	if (size == 0 || size % g->peb_size) {
		fprintf(stderr,
			"%s: error: image \"%s\" (%llu bytes) is not a multiple of the eraseblock size (%u bytes): "
			"was it made for another PEB size?\n",
			prog, im->name, (unsigned long long)size, g->peb_size);
		goto out;
	}
	im->pebs = size / g->peb_size;
	uint32_t good = 0;
	for (uint32_t p = 0; p < g->peb_count; p++)
		good += f->ec[p] != EC_BAD;
	if (im->pebs > good) {
		fprintf(stderr, "%s: error: image \"%s\" has %llu eraseblocks, the flash only %u good ones\n", prog,
			im->name, (unsigned long long)im->pebs, good);
		goto out;
	}
	if (is_stdin) {
		im->fd = stdin_to_tmp(size, buf, g->peb_size);
		if (im->fd < 0)
			goto out;
	}
	if (lseek(im->fd, 0, SEEK_SET) < 0) {
		fprintf(stderr, "%s: error: cannot seek in \"%s\": %s\n", prog, im->name, strerror(errno));
		goto out;
	}
	/* Every eraseblock: a good EC header with this flash's offsets; the
	 * layout volume's table: what the volumes reserve must fit. */
	uint64_t reserved = 0;
	bool have_vtbl = false;
	for (uint64_t i = 0; i < im->pebs; i++) {
		if (!read_full(im->fd, buf, g->peb_size)) {
			fprintf(stderr, "%s: error: cannot read eraseblock %llu of \"%s\"%s%s\n", prog,
				(unsigned long long)i, im->name, errno ? ": " : "", errno ? strerror(errno) : "");
			goto out;
		}
		struct ubi_ec_hdr ec;
		if (ubi_ec_hdr_unpack(buf, &ec) != UBI_HDR_OK) {
			fprintf(stderr,
				"%s: error: image \"%s\" eraseblock %llu: no valid UBI EC header (bad magic or CRC); "
				"the image is not ubinize output for this PEB size; nothing was written\n",
				prog, im->name, (unsigned long long)i);
			goto out;
		}
		if (ec.vid_hdr_offset != f->off.vid_hdr_offset || ec.data_offset != f->off.data_offset) {
			fprintf(stderr,
				"%s: error: image \"%s\" eraseblock %llu: VID header offset %u and data offset %u, "
				"but this flash needs %u and %u (use -s/-O, or rebuild the image for this flash)\n",
				prog, im->name, (unsigned long long)i, ec.vid_hdr_offset, ec.data_offset,
				f->off.vid_hdr_offset, f->off.data_offset);
			goto out;
		}
		struct ubi_vid_hdr vid;
		if (have_vtbl || ubi_vid_hdr_unpack(buf + f->off.vid_hdr_offset, &vid) != UBI_HDR_OK ||
		    vid.vol_id != UBI_LAYOUT_VOLUME_ID)
			continue;
		have_vtbl = true;
		uint32_t slots = ubi_vtbl_slots(f->off.leb_size);
		for (uint32_t k = 0; k < slots; k++) {
			struct ubi_vtbl_record rec;
			const char *why = ubi_vtbl_record_unpack(buf + f->off.data_offset + (size_t)k * UBI_VTBL_RECORD_SIZE,
								 f->off.leb_size, f->off.min_io_size, &rec);
			if (why) {
				fprintf(stderr, "%s: error: image \"%s\" eraseblock %llu: volume table record %u: %s\n",
					prog, im->name, (unsigned long long)i, k, why);
				goto out;
			}
			reserved += rec.reserved_pebs;
		}
	}
	/* As at attach: the volumes, the layout volume and one PEB each for
	 * wear-leveling and atomic LEB change. */
	uint64_t need = reserved + UBI_LAYOUT_VOLUME_EBS + 2;
	if (have_vtbl && need > good) {
		fprintf(stderr,
			"%s: error: the volume table of \"%s\" reserves %llu eraseblocks for its volumes; with the "
			"layout volume and UBI's reserve that makes %llu, but the flash has only %u good "
			"eraseblocks: it would not attach; nothing was written\n",
			prog, im->name, (unsigned long long)reserved, (unsigned long long)need, good);
		goto out;
	}
	if (lseek(im->fd, 0, SEEK_SET) < 0) {
		fprintf(stderr, "%s: error: cannot seek in \"%s\": %s\n", prog, im->name, strerror(errno));
		goto out;
	}
	ret = 0;
out:
	free(buf);
	if (ret && im->fd >= 0) {
		close(im->fd);
		im->fd = -1;
	}
	return ret;
}

/* Write the checked image from its start. */
static int flash_image(struct fmt *f, struct fmt_image *im, uint32_t *next_peb)
{
	const struct flash_geometry *g = &f->dev->geo;
	int ret = -1;
	uint8_t *buf = malloc(g->peb_size);
	if (!buf)
		goto out;
	uint32_t peb = 0;
	for (uint64_t i = 0; i < im->pebs; i++) {
		if (!read_full(im->fd, buf, g->peb_size)) {
			fprintf(stderr, "%s: error: cannot read eraseblock %llu of \"%s\" again\n", prog,
				(unsigned long long)i, im->name);
			goto out;
		}
		size_t len = drop_ffs(buf, g->peb_size, f->off.min_io_size);
		for (;;) {
			while (peb < g->peb_count && f->ec[peb] == EC_BAD)
				peb++;
			if (peb >= g->peb_count) {
				fprintf(stderr, "%s: error: ran out of good eraseblocks at image eraseblock %llu\n",
					prog, (unsigned long long)i);
				goto out;
			}
			set_ec_hdr(buf, next_ec(f, peb), f->image_seq);
			if (f->ubi_ver != UBI_VERSION) {
				buf[4] = f->ubi_ver;
				put_be32(buf + 60, util_crc32(UTIL_CRC32_INIT, buf, 60));
			}
			int r = erase_write(f, peb, buf, len);
			if (r < 0)
				goto out;
			if (r == 0)
				break;
			peb++;
		}
		if (f->verbose)
			fprintf(stderr, "%s: image eraseblock %llu -> PEB %u (%zu bytes written)\n", prog,
				(unsigned long long)i, peb, len);
		peb++;
	}
	*next_peb = peb;
	if (!f->quiet)
		printf("%s: flashed %llu eraseblocks of \"%s\"\n", prog, (unsigned long long)im->pebs, im->name);
	ret = 0;
out:
	free(buf);
	return ret;
}

/* Format PEBs from `from` on: EC header only, or (first two good PEBs when
 * layout is set) an empty layout volume. */
static int format_rest(struct fmt *f, uint32_t from, bool layout)
{
	const struct flash_geometry *g = &f->dev->geo;
	uint32_t slots = ubi_vtbl_slots(f->off.leb_size);
	size_t vtbl_len = (size_t)slots * UBI_VTBL_RECORD_SIZE;
	size_t buflen = f->off.data_offset + vtbl_len;
	uint8_t *buf = malloc(buflen + f->off.min_io_size);
	if (!buf)
		return -ENOMEM;
	int layout_done = layout ? 0 : UBI_LAYOUT_VOLUME_EBS;
	uint32_t formatted = 0;
	int ret = 0;
	for (uint32_t p = from; p < g->peb_count; p++) {
		if (f->ec[p] == EC_BAD)
			continue;
		memset(buf, 0xFF, buflen + f->off.min_io_size);
		struct ubi_ec_hdr ec = {.version = UBI_VERSION,
					.ec = next_ec(f, p),
					.vid_hdr_offset = f->off.vid_hdr_offset,
					.data_offset = f->off.data_offset,
					.image_seq = f->image_seq};
		ubi_ec_hdr_pack(&ec, buf);
		if (f->ubi_ver != UBI_VERSION) {
			buf[4] = f->ubi_ver;
			put_be32(buf + 60, util_crc32(UTIL_CRC32_INIT, buf, 60));
		}
		/* NAND programs whole sub-pages: the header goes out as one. */
		size_t len = (UBI_HDR_SIZE + g->subpage_size - 1) / g->subpage_size * g->subpage_size;
		if (layout_done < UBI_LAYOUT_VOLUME_EBS) {
			struct ubi_vid_hdr vid = {.version = UBI_VERSION,
						  .vol_type = UBI_VID_DYNAMIC,
						  .compat = UBI_COMPAT_REJECT,
						  .vol_id = UBI_LAYOUT_VOLUME_ID,
						  .lnum = (uint32_t)layout_done};
			ubi_vid_hdr_pack(&vid, buf + f->off.vid_hdr_offset);
			struct ubi_vtbl_record empty = {0};
			for (uint32_t s = 0; s < slots; s++)
				ubi_vtbl_record_pack(&empty, buf + f->off.data_offset + (size_t)s * UBI_VTBL_RECORD_SIZE);
			len = (buflen + f->off.min_io_size - 1) / f->off.min_io_size * f->off.min_io_size;
		}
		int r = erase_write(f, p, buf, len);
		if (r < 0) {
			ret = r;
			break;
		}
		if (r > 0)
			continue;
		if (layout_done < UBI_LAYOUT_VOLUME_EBS) {
			if (f->verbose)
				fprintf(stderr, "%s: PEB %u: layout volume LEB %d (empty volume table)\n", prog, p,
					layout_done);
			layout_done++;
		}
		formatted++;
	}
	free(buf);
	if (!ret && layout_done < UBI_LAYOUT_VOLUME_EBS) {
		fprintf(stderr, "%s: error: not enough good eraseblocks for the volume table\n", prog);
		return -ENOSPC;
	}
	if (!ret && !f->quiet)
		printf("%s: formatted %u eraseblocks%s\n", prog, formatted, layout ? " (with an empty volume table)" : "");
	return ret;
}

int cmd_format(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"flash-image", required_argument, NULL, 'f'}, {"erase-counter", required_argument, NULL, 'e'},
		{"image-size", required_argument, NULL, 'S'},
		{"image-seq", required_argument, NULL, 'Q'},   {"sub-page-size", required_argument, NULL, 's'},
		{"vid-hdr-offset", required_argument, NULL, 'O'}, {"ubi-ver", required_argument, NULL, 'x'},
		{"no-volume-table", no_argument, NULL, 'n'},   {"yes", no_argument, NULL, 'y'},
		{"quiet", no_argument, NULL, 'q'},	       {"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},	       UBI_TOOL_GEO_LONGOPTS,
		{NULL, 0, NULL, 0}};
	struct fmt f = {.ubi_ver = UBI_VERSION};
	struct ubi_tool_geo_opts geo = {0};
	const char *image = NULL;
	uint64_t sub = 0, vidoff = 0, seq = 0, v, image_size = 0;
	bool have_seq = false, novtbl = false;
	optind = 1;
	int c;
	while ((c = getopt_long(argc, argv, "f:S:e:Q:s:O:x:nyqvh", longopts, NULL)) != -1) {
		int r = ubi_tool_geo_opt(&geo, c, optarg, prog);
		if (r < 0)
			return 2;
		if (r)
			continue;
		switch (c) {
		case 'f':
			image = optarg;
			break;
		case 'S':
			if (!ubi_tool_parse_bytes(optarg, &image_size) || !image_size) {
				fprintf(stderr, "%s: error: bad image size \"%s\"\n", prog, optarg);
				return 2;
			}
			break;
		case 'e':
			if (!ubi_tool_parse_u64(optarg, &v) || v > UBI_MAX_ERASECOUNTER) {
				fprintf(stderr, "%s: error: bad erase counter value \"%s\"\n", prog, optarg);
				return 2;
			}
			f.override_ec = true;
			f.ec_value = v;
			break;
		case 'Q':
			if (!ubi_tool_parse_u64(optarg, &seq) || seq > 0xFFFFFFFFu) {
				fprintf(stderr, "%s: error: bad UBI image sequence number \"%s\"\n", prog, optarg);
				return 2;
			}
			have_seq = true;
			break;
		case 's':
			if (!ubi_tool_parse_bytes(optarg, &sub) || !sub || (sub & (sub - 1))) {
				fprintf(stderr, "%s: error: bad sub-page size \"%s\" (a power of 2)\n", prog, optarg);
				return 2;
			}
			break;
		case 'O':
			if (!ubi_tool_parse_u64(optarg, &vidoff) || vidoff > INT32_MAX) {
				fprintf(stderr, "%s: error: bad VID header offset \"%s\"\n", prog, optarg);
				return 2;
			}
			break;
		case 'x':
			if (!ubi_tool_parse_u64(optarg, &v) || v > 255) {
				fprintf(stderr, "%s: error: bad UBI version \"%s\"\n", prog, optarg);
				return 2;
			}
			if (v != UBI_VERSION) {
				/* Linux refuses every EC header of another version. */
				fprintf(stderr, "%s: error: -x %llu: UBI version %llu would not attach (Linux knows only "
						"version %d)\n",
					prog, (unsigned long long)v, (unsigned long long)v, UBI_VERSION);
				return 2;
			}
			f.ubi_ver = (uint8_t)v;
			break;
		case 'n':
			novtbl = true;
			break;
		case 'y':
			break;
		case 'q':
			f.quiet = 1;
			break;
		case 'v':
			f.verbose = 1;
			geo.verbose = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			fprintf(stderr, "Use -h for help\n");
			return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "%s: error: %s (use -h for help)\n", prog,
			optind == argc ? "the flash image was not specified" : "more than one flash image given");
		return 2;
	}
	const char *path = argv[optind];
	struct util_file_id flash_ids[2];
	util_file_id_image(path, flash_ids);
	struct fmt_image im = {.fd = -1};
	char msg[1100];
	int r = ubi_tool_flash_open(path, &geo, false, &f.dev, msg, sizeof(msg));
	if (r) {
		fprintf(stderr, "%s: error: %s\n", prog, msg);
		return 1;
	}
	const struct flash_geometry *g = &f.dev->geo;
	uint32_t subpage = sub ? (uint32_t)sub : g->subpage_size;
	int ret = 1;
	if (subpage > g->page_size || g->page_size % subpage) {
		fprintf(stderr, "%s: error: sub-page size %u does not fit the page size %u\n", prog, subpage,
			g->page_size);
		goto out;
	}
	if (ubi_calc_offsets(g->peb_size, g->page_size, subpage, (uint32_t)vidoff, &f.off)) {
		fprintf(stderr,
			"%s: error: VID header offset %llu is not usable with page %u, sub-page %u, PEB %u (the kernel "
			"would refuse it)\n",
			prog, (unsigned long long)vidoff, g->page_size, subpage, g->peb_size);
		goto out;
	}
	f.image_seq = have_seq ? (uint32_t)seq : ubi_tool_random_seq();
	f.ec = calloc(g->peb_count, sizeof(*f.ec));
	if (!f.ec) {
		fprintf(stderr, "%s: error: out of memory\n", prog);
		goto out;
	}
	uint32_t good, bad, unknown, alien;
	if (scan(&f, &good, &bad, &unknown, &alien))
		goto out;
	if (!f.quiet) {
		printf("%s: %s flash, %u eraseblocks of %u bytes, min. I/O %u, sub-page %u\n", prog,
		       g->type == FLASH_NOR ? "NOR" : "NAND", g->peb_count, g->peb_size, g->page_size, subpage);
		printf("%s: VID header offset %u, data offset %u, LEB size %u, image_seq %u\n", prog,
		       f.off.vid_hdr_offset, f.off.data_offset, f.off.leb_size, f.image_seq);
		printf("%s: %u bad eraseblocks, %u without a valid erase counter%s, mean erase counter %llu\n", prog,
		       bad, unknown, f.override_ec ? " (all set by -e)" : "", (unsigned long long)f.mean_ec);
	}
	if (alien && !f.quiet)
		fprintf(stderr,
			"%s: warning: %u eraseblocks held no UBI EC header (not UBI, or corrupted); their erase "
			"counters are set to the mean\n",
			prog, alien);
	if (good < 2 + 2) {
		fprintf(stderr, "%s: error: only %u good eraseblocks: too few for UBI\n", prog, good);
		goto out;
	}
	if (image && image_check(&f, image, image_size, flash_ids, &im))
		goto out;
	/* format rewrites every PEB: the host disk space first, so a full disk
	 * fails here with the flash as it was. */
	if (flash_is_sim(f.dev)) {
		r = flash_sim_reserve(f.dev);
		if (r) {
			fprintf(stderr, "%s: error: %s; nothing was written\n", prog, flash_sim_last_error(f.dev));
			goto out;
		}
	}
	uint32_t next = 0;
	if (image && flash_image(&f, &im, &next))
		goto out;
	if (format_rest(&f, next, !image && !novtbl))
		goto out;
	r = flash_sync(f.dev);
	if (r) {
		const char *m = flash_errmsg(f.dev);
		fprintf(stderr, "%s: error: cannot write \"%s\" to disk: %s\n", prog, path, m[0] ? m : strerror(-r));
		goto out;
	}
	if (f.marked_bad && !f.quiet)
		printf("%s: %u eraseblocks went bad and were marked bad\n", prog, f.marked_bad);
	ret = 0;
out:
	if (im.fd >= 0)
		close(im.fd);
	free(f.ec);
	flash_close(f.dev);
	return ret;
}
