/* ubi_tool_flash — see ubi_tool_flash.h. */
#include "ubi_tool_flash.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "flash/flash_sim.h"
#include "ubi/ubi_media.h"
#include "ubi_tool_num.h"

int ubi_tool_geo_opt(struct ubi_tool_geo_opts *g, int key, const char *arg, const char *prog)
{
	uint64_t v = 0;
	if (key == 0x204) {
		g->nor = true;
		return 1;
	}
	if (key == 0x205) {
		g->has_oob = true;
		return 1;
	}
	if (key < 0x200 || key > 0x203)
		return 0;
	static const char *const names[] = {"--page", "--peb", "--subpage", "--oob"};
	if (!ubi_tool_parse_bytes(arg, &v) || v > UINT32_MAX || (key != 0x203 && v == 0)) {
		fprintf(stderr, "%s: error: bad value \"%s\" for %s\n", prog, arg, names[key - 0x200]);
		return -1;
	}
	if (key == 0x200)
		g->page = (uint32_t)v;
	else if (key == 0x201)
		g->peb = (uint32_t)v;
	else if (key == 0x202)
		g->subpage = (uint32_t)v;
	else
		g->oob = (uint32_t)v;
	return 1;
}

static bool is_pow2(uint32_t v)
{
	return v && !(v & (v - 1));
}

static bool read_at(int fd, uint64_t off, void *buf, size_t len)
{
	return pread(fd, buf, len, (off_t)off) == (ssize_t)len;
}

/* Detect PEB size, min. I/O and sub-page size of a data-only dump from its
 * EC headers: the PEB size is the smallest distance between two valid EC
 * headers (at 512-byte steps; NOR at 64-byte steps is too slow to scan, so
 * NOR dumps need --peb); min. I/O and sub-page follow from the offsets the
 * headers carry (spec §3.1). */
static int detect(int fd, uint64_t fsize, struct flash_geometry *geo, char *msg, size_t msglen)
{
	uint8_t h[UBI_HDR_SIZE];
	struct ubi_ec_hdr ec0;
	if (!read_at(fd, 0, h, sizeof(h)) || ubi_ec_hdr_unpack(h, &ec0) != UBI_HDR_OK) {
		snprintf(msg, msglen,
			 "cannot detect the geometry: offset 0 holds no valid UBI EC header (give --page/--peb, "
			 "or use a simulator image with its .sim sidecar)");
		return -EINVAL;
	}
	uint64_t limit = fsize < (64ull << 20) ? fsize : (64ull << 20);
	uint64_t prev = 0, best = 0;
	for (uint64_t off = 512; off + UBI_HDR_SIZE <= limit; off += 512) {
		struct ubi_ec_hdr e;
		if (!read_at(fd, off, h, sizeof(h)))
			break;
		if (ubi_ec_hdr_unpack(h, &e) != UBI_HDR_OK || e.vid_hdr_offset != ec0.vid_hdr_offset ||
		    e.data_offset != ec0.data_offset)
			continue;
		uint64_t d = off - prev;
		if (!best || d < best)
			best = d;
		prev = off;
		if (best && off >= 16 * best)
			break;
	}
	if (!best) {
		if (fsize > UINT32_MAX || !is_pow2((uint32_t)fsize)) {
			snprintf(msg, msglen,
				 "cannot detect the PEB size: only one EC header found (give --peb and --page)");
			return -EINVAL;
		}
		best = fsize; /* a one-PEB image */
	}
	uint32_t vid = ec0.vid_hdr_offset, data = ec0.data_offset;
	uint32_t minio = 0, sub = 0;
	if (vid == UBI_HDR_SIZE && data == 2 * UBI_HDR_SIZE) {
		minio = sub = 1;
	} else {
		/* Default placement puts the VID header at the sub-page size;
		 * the min. I/O unit is the smallest NAND page (>= 512) that
		 * yields the data offset. */
		sub = vid >= UBI_HDR_SIZE && is_pow2(vid) ? vid : 0;
		for (uint32_t p = sub > 512 ? sub : 512; p <= data && p <= 65536; p <<= 1) {
			if ((vid + UBI_HDR_SIZE + p - 1) / p * p == data) {
				minio = p;
				break;
			}
		}
		if (!sub)
			sub = minio;
	}
	if (!minio || !is_pow2((uint32_t)best) || best % minio) {
		snprintf(msg, msglen,
			 "cannot detect the geometry from the EC headers (VID header offset %u, data offset %u, "
			 "PEB size guess %llu): give --page, --subpage and --peb",
			 vid, data, (unsigned long long)best);
		return -EINVAL;
	}
	geo->type = minio == 1 ? FLASH_NOR : FLASH_NAND;
	geo->page_size = minio;
	geo->subpage_size = sub;
	geo->oob_size = 0;
	geo->peb_size = (uint32_t)best;
	return 0;
}

int ubi_tool_flash_open(const char *path, const struct ubi_tool_geo_opts *g, bool read_only, struct flash_dev **out,
			char *msg, size_t msglen)
{
	*out = NULL;
	msg[0] = '\0';
	struct stat st;
	if (stat(path, &st)) {
		int e = errno;
		snprintf(msg, msglen, "cannot open flash image \"%s\": %s", path, strerror(e));
		return -e;
	}
	char *side = malloc(strlen(path) + 5);
	if (!side)
		return -ENOMEM;
	sprintf(side, "%s.sim", path);
	bool have_side = access(side, F_OK) == 0;
	free(side);
	bool geo_given = g->page || g->peb || g->subpage || g->oob || g->nor;
	struct flash_geometry geo = {0};
	int ret;
	if (have_side) {
		char ferr[512] = "";
		ret = flash_sim_open_ex(path, NULL, g->has_oob, read_only, out, ferr, sizeof(ferr));
		if (ret) {
			snprintf(msg, msglen, "cannot open simulator image \"%s\": %s", path, ferr[0] ? ferr : strerror(-ret));
			return ret;
		}
		const struct flash_geometry *dg = &(*out)->geo;
		if ((g->page && g->page != dg->page_size) || (g->peb && g->peb != dg->peb_size) ||
		    (g->subpage && g->subpage != dg->subpage_size) || (g->oob && g->oob != dg->oob_size) ||
		    (g->nor && dg->type != FLASH_NOR)) {
			snprintf(msg, msglen,
				 "the geometry options contradict the sidecar of \"%s\" (page %u, sub-page %u, OOB %u, "
				 "PEB %u): leave them out",
				 path, dg->page_size, dg->subpage_size, dg->oob_size, dg->peb_size);
			flash_close(*out);
			*out = NULL;
			return -EINVAL;
		}
		return 0;
	}
	if (geo_given) {
		if (!g->peb) {
			snprintf(msg, msglen, "--peb is needed to open \"%s\" (no .sim sidecar)", path);
			return -EINVAL;
		}
		geo.type = g->nor ? FLASH_NOR : FLASH_NAND;
		geo.page_size = g->nor ? 1 : g->page;
		if (!geo.page_size) {
			snprintf(msg, msglen, "--page is needed for NAND (or --nor for NOR flash)");
			return -EINVAL;
		}
		geo.subpage_size = g->nor ? 1 : (g->subpage ? g->subpage : geo.page_size);
		geo.oob_size = g->nor ? 0 : g->oob;
		geo.peb_size = g->peb;
		if (!is_pow2(geo.page_size) || !is_pow2(geo.subpage_size) || geo.subpage_size > geo.page_size ||
		    geo.peb_size % geo.page_size) {
			snprintf(msg, msglen,
				 "bad geometry: page %u, sub-page %u, PEB %u (page and sub-page must be powers of 2, "
				 "sub-page <= page, PEB a multiple of the page)",
				 geo.page_size, geo.subpage_size, geo.peb_size);
			return -EINVAL;
		}
		if (g->has_oob && !geo.oob_size) {
			snprintf(msg, msglen, "--has-oob needs --oob");
			return -EINVAL;
		}
	} else {
		if (g->has_oob) {
			snprintf(msg, msglen, "an image with OOB needs --page, --oob and --peb");
			return -EINVAL;
		}
		int fd = open(path, O_RDONLY);
		if (fd < 0) {
			int e = errno;
			snprintf(msg, msglen, "cannot open flash image \"%s\": %s", path, strerror(e));
			return -e;
		}
		ret = detect(fd, (uint64_t)st.st_size, &geo, msg, msglen);
		close(fd);
		if (ret)
			return ret;
		if (g->verbose)
			fprintf(stderr, "detected geometry of \"%s\": %s, min. I/O %u, sub-page %u, PEB %u\n", path,
				geo.type == FLASH_NOR ? "NOR" : "NAND", geo.page_size, geo.subpage_size, geo.peb_size);
	}
	uint64_t stride = geo.peb_size + (g->has_oob ? (uint64_t)geo.oob_size * (geo.peb_size / geo.page_size) : 0);
	if ((uint64_t)st.st_size % stride || st.st_size == 0) {
		snprintf(msg, msglen,
			 "size of \"%s\" (%llu bytes) is not a non-zero multiple of the eraseblock size %llu%s", path,
			 (unsigned long long)st.st_size, (unsigned long long)stride,
			 g->has_oob ? " (with OOB)" : "");
		return -EINVAL;
	}
	geo.peb_count = (uint32_t)((uint64_t)st.st_size / stride);
	char ferr[512] = "";
	ret = flash_sim_open_ex(path, &geo, g->has_oob, read_only, out, ferr, sizeof(ferr));
	if (ret) {
		snprintf(msg, msglen, "cannot open flash image \"%s\": %s", path, ferr[0] ? ferr : strerror(-ret));
		return ret;
	}
	return 0;
}
