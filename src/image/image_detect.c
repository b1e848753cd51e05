/* image_detect — find out what an image file is and its geometry,
 * reading it with pread only: bare UBIFS (superblock node at offset 0),
 * simulator flash (".sim" sidecar), or UBI PEBs with or without OOB.
 *
 * For UBI the PEB stride in the file is the gcd of the distances between
 * the first EC headers (magic "UBI#" and a good CRC) — bad or erased PEBs
 * just leave gaps. A power-of-two stride is a PEB without OOB; otherwise the
 * stride is pages x (page + OOB) and the candidate layouts are told apart by
 * where the VID headers are found. The UBIFS superblock's min_io_size (the
 * UBI min I/O the file system was made for) settles the page size when the
 * EC header offsets allow two answers. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image/image.h"
#include "ubi/ubi_media.h"
#include "util/util_crc.h"
#include "util/util_endian.h"
#include "util/util_size.h"

#define UBIFS_NODE_MAGIC 0x06101831u
#define UBIFS_SB_NODE 6
#define UBIFS_SB_NODE_SZ 4096
#define MAX_EC_SEEN 16
/* Smallest PEB detection accepts: ubinize -p 512 on NOR (headers at 0/64,
 * data at 128) still leaves room for the volume table. */
#define UBI_MIN_PEB_SIZE 256

static int pread_full(int fd, void *buf, size_t len, uint64_t off)
{
	uint8_t *p = buf;
	while (len) {
		ssize_t n = pread(fd, p, len, (off_t)off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -ENODATA;
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

static void how_add(struct ubikit_image_geo *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void how_add(struct ubikit_image_geo *g, const char *fmt, ...)
{
	size_t used = strlen(g->how);
	if (used + 2 >= sizeof(g->how))
		return;
	if (used)
		g->how[used++] = ' ', g->how[used] = '\0';
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(g->how + used, sizeof(g->how) - used, fmt, ap);
	va_end(ap);
}

static bool is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

/* A UBIFS superblock node (magic, type, length, CRC) in buf[0..4096)? */
static bool is_ubifs_sb(const uint8_t *b)
{
	if (get_le32(b) != UBIFS_NODE_MAGIC || b[20] != UBIFS_SB_NODE || get_le32(b + 16) != UBIFS_SB_NODE_SZ)
		return false;
	return get_le32(b + 4) == util_crc32(UTIL_CRC32_INIT, b + 8, UBIFS_SB_NODE_SZ - 8);
}

/* File offset of byte `off` of a PEB under a page+OOB layout. */
static uint64_t map_off(const struct ubikit_image_geo *g, uint32_t off)
{
	if (!g->has_oob)
		return off;
	return (uint64_t)(off / g->page_size) * (g->page_size + g->oob_size) + off % g->page_size;
}

/* Read bytes [off, off+len) of PEB `peb` (len within one page if OOB). */
static int read_peb(int fd, const struct ubikit_image_geo *g, uint32_t peb, uint32_t off, void *buf, size_t len)
{
	uint8_t *p = buf;
	while (len) {
		size_t chunk = len;
		if (g->has_oob) {
			size_t room = g->page_size - off % g->page_size;
			if (chunk > room)
				chunk = room;
		}
		int ret = pread_full(fd, p, chunk, g->offset + (uint64_t)peb * g->peb_stride + map_off(g, off));
		if (ret)
			return ret;
		p += chunk;
		off += (uint32_t)chunk;
		len -= chunk;
	}
	return 0;
}

/* Score a page+OOB hypothesis by how many VID headers sit where it says
 * they are (-1: a header area that is neither a header nor erased). */
static int score_layout(int fd, struct ubikit_image_geo *g, const uint64_t *ec_off, int n_ec)
{
	int score = 0;
	for (int i = 0; i < n_ec; i++) {
		if (ec_off[i] % g->peb_stride)
			return -1;
		uint8_t h[UBI_HDR_SIZE];
		if (read_peb(fd, g, (uint32_t)(ec_off[i] / g->peb_stride), g->vid_hdr_offset, h, sizeof(h)))
			return -1;
		struct ubi_vid_hdr vh;
		enum ubi_hdr_status s = ubi_vid_hdr_unpack(h, &vh);
		if (s == UBI_HDR_OK)
			score++;
		else if (s == UBI_HDR_BAD)
			return -1;
	}
	return score;
}

/* Sum of reserved_pebs over the volume table in a layout-volume PEB. */
static uint32_t vtbl_reserved(int fd, struct ubikit_image_geo *g, uint32_t peb)
{
	uint32_t leb = g->peb_size - g->data_offset, slots = ubi_vtbl_slots(leb), sum = 0;
	uint8_t rec[UBI_VTBL_RECORD_SIZE];
	for (uint32_t i = 0; i < slots; i++) {
		struct ubi_vtbl_record r;
		if (read_peb(fd, g, peb, g->data_offset + i * UBI_VTBL_RECORD_SIZE, rec, sizeof(rec)))
			break;
		if (!ubi_vtbl_record_unpack(rec, leb, g->page_size ? g->page_size : 1, &r) && r.reserved_pebs < (1u << 24))
			sum += r.reserved_pebs;
	}
	return sum;
}

/* Look for the UBIFS superblock in LEB 0 of some user volume; returns its
 * min_io_size and leb_size (0 if none found). Also notes how many PEBs the
 * volume table reserves (g->vtbl_pebs). */
static void find_ubifs_sb(int fd, struct ubikit_image_geo *g, uint32_t *min_io, uint32_t *leb_size)
{
	*min_io = 0;
	*leb_size = 0;
	uint8_t *sb = malloc(UBIFS_SB_NODE_SZ);
	if (!sb)
		return;
	bool have_vtbl = false;
	for (uint32_t peb = 0; peb < g->peb_count; peb++) {
		uint8_t h[UBI_HDR_SIZE];
		struct ubi_vid_hdr vh;
		if (read_peb(fd, g, peb, g->vid_hdr_offset, h, sizeof(h)) ||
		    ubi_vid_hdr_unpack(h, &vh) != UBI_HDR_OK)
			continue;
		if (vh.vol_id == UBI_LAYOUT_VOLUME_ID && !have_vtbl) {
			g->vtbl_pebs = vtbl_reserved(fd, g, peb);
			have_vtbl = true;
			if (*min_io)
				break;
		}
		if (vh.vol_id >= UBI_INTERNAL_VOL_START || vh.lnum != 0 || *min_io)
			continue;
		if (g->data_offset + UBIFS_SB_NODE_SZ > g->peb_size ||
		    read_peb(fd, g, peb, g->data_offset, sb, UBIFS_SB_NODE_SZ))
			continue;
		if (is_ubifs_sb(sb)) {
			*min_io = get_le32(sb + 32);
			*leb_size = get_le32(sb + 36);
			if (have_vtbl)
				break;
		}
	}
	free(sb);
}

static const uint32_t page_sizes[] = {512, 2048, 4096, 8192, 16384};

/* Which UBI device of the file to read: every device is listed in g; the
 * chosen one (o->offset, o->ubi_index, else the first) sets g->offset and
 * *dev_size (bytes from there that belong to it). */
static int choose_ubi_dev(int fd, const struct ubikit_image_opts *o, struct ubikit_image_geo *g, uint64_t *dev_size,
			  char *msg, size_t msglen)
{
	int n = image_scan_ubi_devs(fd, g->file_size, g->ubi_devs, UBIKIT_IMAGE_MAX_UBI_DEVS);
	if (n < 0)
		return n;
	g->ubi_dev_count = n;
	/* A first device whose PEBs line up with the file start is read from
	 * offset 0 (its first PEBs may be erased or bad). */
	if (n && g->ubi_devs[0].peb_stride && g->ubi_devs[0].offset % g->ubi_devs[0].peb_stride == 0 &&
	    g->ubi_devs[0].offset < (64ull << 20)) {
		g->ubi_devs[0].size += g->ubi_devs[0].offset;
		g->ubi_devs[0].offset = 0;
	}
	g->ubi_dev_index = 0;
	if (o->offset >= 0) {
		if ((uint64_t)o->offset >= g->file_size) {
			snprintf(msg, msglen, "--offset %" PRId64 " is past the end of the file (%" PRIu64 " bytes)",
				 o->offset, g->file_size);
			return -EINVAL;
		}
		g->offset = (uint64_t)o->offset;
		g->ubi_dev_index = -1;
		*dev_size = g->file_size - g->offset;
		for (int i = 0; i < n; i++)
			if (g->ubi_devs[i].offset == g->offset) {
				g->ubi_dev_index = i;
				if (i + 1 < n)
					*dev_size = g->ubi_devs[i].size;
			}
		how_add(g, "UBI device at offset %" PRIu64 " given;", g->offset);
		return 0;
	}
	int idx = o->ubi_index >= 0 ? o->ubi_index : 0;
	if (idx >= n) {
		if (o->ubi_index >= 0)
			snprintf(msg, msglen, "--ubi-index %d: the file holds %d UBI device(s) (0-%d)", idx, n,
				 n ? n - 1 : 0);
		return n ? -ENOENT : 0; /* none found: the usual search says so */
	}
	g->ubi_dev_index = idx;
	g->offset = g->ubi_devs[idx].offset;
	/* the last device keeps the rest of the file (erased PEBs after it) */
	*dev_size = idx + 1 < n ? g->ubi_devs[idx].size : g->file_size - g->offset;
	if (n > 1)
		how_add(g, "%d UBI devices in the file (image_seq differ or data between them): reading device %d "
			   "at offset %" PRIu64 ";", n, idx, g->offset);
	else if (g->offset)
		how_add(g, "UBI device at offset %" PRIu64 " (not at the start of the file);", g->offset);
	return 0;
}

static int detect_ubi(int fd, const struct ubikit_image_opts *o, struct ubikit_image_geo *g, char *msg, size_t msglen)
{
	uint64_t dev_size = g->file_size;
	int cret = choose_ubi_dev(fd, o, g, &dev_size, msg, msglen);
	if (cret)
		return cret;
	/* Collect the first EC headers: offsets step 16 (every known page+OOB
	 * size is a multiple of 16). */
	uint64_t ec_off[MAX_EC_SEEN];
	int n_ec = 0;
	struct ubi_ec_hdr first = {0};
	size_t bufsz = 1 << 20;
	uint8_t *buf = malloc(bufsz + UBI_HDR_SIZE);
	if (!buf)
		return -ENOMEM;
	uint64_t step = 16;
	if (o->peb_size && o->with_oob == 0)
		step = o->peb_size;
	/* Bounded: time follows what the image holds, not its size. The first
	 * header must come early, and the next within any PEB stride of the
	 * last one; past that the rest of a file (zeros to 4 GiB, a 1 TiB
	 * file of nothing) is not read at all. */
	const uint64_t first_within = 64ull << 20, gap_within = 32ull << 20;
	/* offsets relative to the chosen device's start (g->offset) */
	for (uint64_t base = 0; base < dev_size && n_ec < MAX_EC_SEEN; base += bufsz) {
		if (n_ec == 0 ? base >= first_within : base > ec_off[n_ec - 1] + gap_within)
			break;
		size_t len = dev_size - base < bufsz + UBI_HDR_SIZE ? (size_t)(dev_size - base) : bufsz + UBI_HDR_SIZE;
		int ret = pread_full(fd, buf, len, g->offset + base);
		if (ret) {
			free(buf);
			snprintf(msg, msglen, "read error at offset %" PRIu64 ": %s", base, strerror(-ret));
			return ret;
		}
		for (size_t off = (size_t)((step - base % step) % step); off + UBI_HDR_SIZE <= len && off < bufsz;
		     off += step) {
			if (get_be32(buf + off) != UBI_EC_HDR_MAGIC)
				continue;
			struct ubi_ec_hdr eh;
			if (ubi_ec_hdr_unpack(buf + off, &eh) != UBI_HDR_OK)
				continue;
			if (n_ec == 0)
				first = eh;
			else if (eh.vid_hdr_offset != first.vid_hdr_offset || eh.data_offset != first.data_offset)
				continue;
			ec_off[n_ec++] = base + off;
			if (n_ec == MAX_EC_SEEN)
				break;
			/* Skip ahead: the next PEB starts after this one's data
			 * offset at the earliest (PEBs as small as 512 bytes). */
			if (eh.data_offset > step && eh.data_offset < bufsz)
				off += (eh.data_offset / step) * step - step;
		}
		if (step > bufsz)
			break;
	}
	free(buf);
	if (n_ec == 0) {
		snprintf(msg, msglen,
			 "no UBIFS superblock at offset 0 and no UBI erase-counter header (\"UBI#\" with a good "
			 "CRC) in the first %" PRIu64 " MiB: not a UBI/UBIFS image (or give --kind and the geometry)",
			 first_within >> 20);
		return -EINVAL;
	}
	g->vid_hdr_offset = o->vid_hdr_offset ? o->vid_hdr_offset : first.vid_hdr_offset;
	g->data_offset = first.data_offset;
	if (first.vid_hdr_offset < UBI_HDR_SIZE || first.data_offset <= first.vid_hdr_offset) {
		snprintf(msg, msglen, "EC header at offset %" PRIu64 ": impossible VID header offset %u / data offset %u",
			 ec_off[0], first.vid_hdr_offset, first.data_offset);
		return -EINVAL;
	}
	uint64_t stride = 0;
	for (int i = 1; i < n_ec; i++)
		stride = util_gcd64(stride, ec_off[i] - ec_off[0]);
	if (stride)
		stride = util_gcd64(stride, ec_off[0]) ? util_gcd64(stride, ec_off[0]) : stride;
	how_add(g, "found %d EC headers (first at offset %" PRIu64 ", VID header offset %u, data offset %u);", n_ec,
		ec_off[0], first.vid_hdr_offset, first.data_offset);
	if (o->peb_size && o->page_size && o->oob_size) {
		stride = (uint64_t)o->peb_size / o->page_size * (o->page_size + o->oob_size);
		how_add(g, "PEB size %u, page %u and OOB %u given;", o->peb_size, o->page_size, o->oob_size);
	} else if (o->peb_size && o->with_oob != 1) {
		stride = o->peb_size;
		how_add(g, "PEB size %u given;", o->peb_size);
	} else if (!stride) {
		stride = dev_size - ec_off[0];
		how_add(g, "one EC header only: PEB = rest of file (%" PRIu64 ");", stride);
	} else {
		how_add(g, "EC header spacing %" PRIu64 ";", stride);
	}
	if (stride > UINT32_MAX || stride < UBI_MIN_PEB_SIZE || stride <= g->data_offset) {
		snprintf(msg, msglen, "EC headers are %" PRIu64 " bytes apart: no plausible PEB size (give --peb)",
			 stride);
		return -EINVAL;
	}
	g->peb_stride = (uint32_t)stride;

	bool oob = false;
	if (o->with_oob == 1 || o->oob_size)
		oob = true;
	else if (o->with_oob == -1 && !is_pow2(stride))
		oob = true;

	if (!oob) {
		g->kind = UBIKIT_IMAGE_UBI;
		g->has_oob = false;
		g->peb_size = (uint32_t)stride;
		if (!o->peb_size)
			how_add(g, "power of two: PEB size %u without OOB;", g->peb_size);
	} else {
		/* Try page sizes and pages per PEB; keep the best-scoring layout. */
		struct ubikit_image_geo best = *g;
		int best_score = -1;
		int best_pref = 0;
		for (size_t pi = 0; pi < sizeof(page_sizes) / sizeof(page_sizes[0]); pi++) {
			uint32_t p = page_sizes[pi];
			if (o->page_size && p != o->page_size)
				continue;
			for (uint32_t n = 4; n <= 4096; n *= 2) {
				if (stride % n || (o->peb_size && (uint64_t)n * p != o->peb_size))
					continue;
				uint64_t per = stride / n;
				if (per <= p)
					continue;
				uint32_t oobsz = (uint32_t)(per - p);
				if (o->oob_size ? oobsz != o->oob_size : (oobsz < p / 64 || oobsz > p / 8))
					continue;
				if (g->data_offset % p && !o->page_size)
					continue;
				struct ubikit_image_geo t = *g;
				t.has_oob = true;
				t.page_size = p;
				t.oob_size = oobsz;
				t.peb_size = n * p;
				int s = score_layout(fd, &t, ec_off, n_ec);
				/* Layouts that place the same headers alike are told apart by
				 * what UBI would choose: data at the page (headers in
				 * sub-pages) or VID header at the page and data at the next. */
				int pref = (p == g->data_offset ||
					    (p == g->vid_hdr_offset && g->data_offset == 2 * p)) ? 2 : 1;
				if (s > best_score || (s == best_score && pref > best_pref)) {
					best = t;
					best_score = s;
					best_pref = pref;
				}
			}
		}
		if (best_score < 0) {
			snprintf(msg, msglen,
				 "EC headers are %" PRIu64 " bytes apart, which is not a power of two and matches no "
				 "page+OOB layout (give --peb, --page and --oob)",
				 stride);
			return -EINVAL;
		}
		*g = best;
		g->kind = UBIKIT_IMAGE_NAND_OOB;
		how_add(g, "%" PRIu64 " = %u pages x (%u + %u OOB): NAND dump with OOB (%d VID headers confirm);",
			stride, g->peb_size / g->page_size, g->page_size, g->oob_size, best_score);
	}
	/* A partial last PEB is kept (the missing bytes read as erased). */
	g->dev_size = dev_size;
	g->peb_count = (uint32_t)((dev_size + g->peb_stride - 1) / g->peb_stride);
	if (dev_size % g->peb_stride)
		how_add(g, "file size is not a whole number of PEBs (last PEB has only %" PRIu64 " bytes: truncated?);",
			dev_size % g->peb_stride);
	if (g->data_offset >= g->peb_size) {
		snprintf(msg, msglen, "data offset %u is not inside a PEB of %u bytes", g->data_offset, g->peb_size);
		return -EINVAL;
	}
	g->leb_size = g->peb_size - g->data_offset;

	/* Min I/O unit. */
	uint32_t sb_min_io, sb_leb;
	find_ubifs_sb(fd, g, &sb_min_io, &sb_leb);
	if (o->page_size) {
		g->page_size = o->page_size;
		how_add(g, "min I/O %u given;", g->page_size);
	} else if (g->has_oob) {
		/* page size known from the layout */
	} else if (g->vid_hdr_offset == 64 && g->data_offset == 128) {
		g->page_size = 1;
		how_add(g, "VID header at 64, data at 128: NOR-like flash, min I/O 1;");
	} else if (sb_min_io >= 8 && g->data_offset % sb_min_io == 0) {
		g->page_size = sb_min_io;
		how_add(g, "min I/O %u from the UBIFS superblock;", sb_min_io);
	} else {
		g->page_size = g->data_offset;
		how_add(g, "min I/O %u = data offset;", g->page_size);
	}
	if (sb_min_io == 8 && g->data_offset == 128 && !o->page_size)
		g->page_size = 1;
	g->flash_type = g->page_size == 1 ? UBIKIT_IMAGE_FLASH_NOR : UBIKIT_IMAGE_FLASH_NAND;
	g->subpage_size = g->page_size;
	if (g->vid_hdr_offset < g->page_size && g->page_size > 1) {
		/* headers written in sub-pages */
		g->subpage_size = g->vid_hdr_offset / UBI_HDR_SIZE * UBI_HDR_SIZE;
		while (g->subpage_size && g->page_size % g->subpage_size)
			g->subpage_size--;
		if (!g->subpage_size || !is_pow2(g->subpage_size))
			g->subpage_size = g->page_size;
	}
	if (sb_leb && sb_leb != g->leb_size)
		how_add(g, "UBIFS LEB size %u (volume data_pad %u);", sb_leb, g->leb_size - sb_leb);
	return 0;
}

int ubikit_image_detect(const char *path, const struct ubikit_image_opts *o, struct ubikit_image_geo *g, char *msg,
		      size_t msglen)
{
	memset(g, 0, sizeof(*g));
	msg[0] = '\0';
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		snprintf(msg, msglen, "cannot open %s: %s", path, strerror(e));
		return -e;
	}
	struct stat st;
	if (!fstat(fd, &st) && (S_ISCHR(st.st_mode) || o->kind == UBIKIT_IMAGE_MTD)) {
		/* MTD character device: the driver knows the geometry (opened later) */
		close(fd);
		if (!S_ISCHR(st.st_mode)) {
			snprintf(msg, msglen, "%s: --kind mtd needs an MTD character device (/dev/mtdN)", path);
			return -EINVAL;
		}
		g->kind = UBIKIT_IMAGE_MTD;
		how_add(g, "character device: Linux MTD device, geometry from the driver;");
		return 0;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		/* block devices / MTD char devices: size via lseek */
		off_t end = lseek(fd, 0, SEEK_END);
		if (end <= 0) {
			close(fd);
			snprintf(msg, msglen, "%s: not a regular file of known size", path);
			return -EINVAL;
		}
		g->file_size = (uint64_t)end;
	} else {
		g->file_size = (uint64_t)st.st_size;
	}
	int ret = 0;
	char side[4096];
	snprintf(side, sizeof(side), "%s.sim", path);
	uint8_t *head = calloc(1, UBIFS_SB_NODE_SZ);
	if (!head) {
		close(fd);
		return -ENOMEM;
	}
	size_t hl = g->file_size < UBIFS_SB_NODE_SZ ? (size_t)g->file_size : UBIFS_SB_NODE_SZ;
	if (hl && (ret = pread_full(fd, head, hl, 0))) {
		snprintf(msg, msglen, "%s: read error: %s", path, strerror(-ret));
		goto out;
	}
	enum ubikit_image_kind kind = o->kind;
	if (kind == UBIKIT_IMAGE_AUTO) {
		if (access(side, F_OK) == 0)
			kind = UBIKIT_IMAGE_SIM;
		else if (hl == UBIFS_SB_NODE_SZ && get_le32(head) == UBIFS_NODE_MAGIC && head[20] == UBIFS_SB_NODE)
			kind = UBIKIT_IMAGE_UBIFS;
		else if (g->file_size == 0) {
			snprintf(msg, msglen, "%s: empty file", path);
			ret = -EINVAL;
			goto out;
		}
	}
	if (kind == UBIKIT_IMAGE_SIM) {
		g->kind = UBIKIT_IMAGE_SIM;
		how_add(g, "%s exists: ubikit flash simulator image, geometry from the sidecar;", side);
		goto out;
	}
	if (kind == UBIKIT_IMAGE_UBIFS) {
		g->kind = UBIKIT_IMAGE_UBIFS;
		if (!is_ubifs_sb(head)) {
			snprintf(msg, msglen, "%s: LEB 0:0: UBIFS superblock node has a bad CRC or wrong type/length", path);
			ret = -EINVAL;
			goto out;
		}
		g->page_size = get_le32(head + 32);
		g->leb_size = o->leb_size ? o->leb_size : get_le32(head + 36);
		if (g->leb_size < 4096 || g->leb_size > (64u << 20)) {
			snprintf(msg, msglen, "%s: LEB 0:0: superblock LEB size %u is not plausible", path, g->leb_size);
			ret = -EINVAL;
			goto out;
		}
		g->peb_count = (uint32_t)(g->file_size / g->leb_size);
		how_add(g, "UBIFS superblock node at offset 0: bare UBIFS image (mkfs.ubifs output), LEB size %u, "
			   "min I/O %u, %u LEBs in the file (superblock says leb_cnt %u);",
			g->leb_size, g->page_size, g->peb_count, get_le32(head + 40));
		if (g->file_size % g->leb_size)
			how_add(g, "file size is not a multiple of the LEB size (tail ignored);");
		goto out;
	}
	if (kind == UBIKIT_IMAGE_UBI || kind == UBIKIT_IMAGE_NAND_OOB || kind == UBIKIT_IMAGE_AUTO) {
		struct ubikit_image_opts oo = *o;
		if (kind == UBIKIT_IMAGE_NAND_OOB && oo.with_oob == -1)
			oo.with_oob = 1;
		if (kind == UBIKIT_IMAGE_UBI && oo.with_oob == -1)
			oo.with_oob = 0;
		ret = detect_ubi(fd, &oo, g, msg, msglen);
	}
out:
	free(head);
	close(fd);
	return ret;
}

const char *ubikit_image_kind_name(enum ubikit_image_kind k)
{
	switch (k) {
	case UBIKIT_IMAGE_UBI:
		return "UBI image (PEBs without OOB)";
	case UBIKIT_IMAGE_NAND_OOB:
		return "raw NAND dump with OOB";
	case UBIKIT_IMAGE_UBIFS:
		return "bare UBIFS image";
	case UBIKIT_IMAGE_SIM:
		return "ubikit flash simulator";
	case UBIKIT_IMAGE_MTD:
		return "Linux MTD device";
	default:
		return "unknown";
	}
}
