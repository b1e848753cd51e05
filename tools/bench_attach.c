/* bench_attach — workload "attach": the cost of attaching UBI (full scan,
 * as Linux without fastmap) on 256 MiB, 1 GiB and 4 GiB devices.
 *
 * Each device is a sparse simulator file (ctx->device geometry, BENCH.md's
 * default SLC NAND unless overridden) prepared through the raw flash API:
 * PEB 0/1 the layout volume with one dynamic volume "bench" that takes every
 * PEB UBI can give it; every LEB of that volume mapped and written half full
 * (SplitMix64 bytes, seed 1); the remaining PEBs free (EC header only).
 * Erase counters 0..6, sqnum = LEB number + 1.
 *
 * The attach itself runs in a forked child so that its peak RSS is not the
 * preparation's: the child opens the file, attaches, reports one record
 * ("attach-<size>": CPU, flash bytes read, peak RSS, plus pebs, the heap in
 * use with the device attached and the anonymous RSS), detaches and exits.
 * Peak RSS also counts the file pages the simulator's mmap brings in while
 * headers are read (the kernel maps pages around each fault), which is why
 * heap_kib / rss_anon_kib are reported too. */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "ubi/ubi.h"
#include "ubi/ubi_media.h"
#include "util/util_prng.h"

static int prepare(struct bench_ctx *ctx, const char *path, uint64_t size, uint32_t *vol_lebs)
{
	struct flash_sim_config c = ctx->device;
	c.path = path;
	c.sparse = true;
	c.file_has_oob = false;
	c.geo.peb_count = (uint32_t)(size / c.geo.peb_size);
	struct flash_dev *dev;
	int ret = flash_sim_create(&c, &dev);
	if (ret)
		return ret;
	const struct flash_geometry *g = &dev->geo;
	struct ubi_offsets off;
	ret = ubi_calc_offsets(g->peb_size, g->page_size, g->subpage_size, 0, &off);
	if (ret)
		goto out;
	uint32_t n = g->peb_count;
	uint32_t beb = (uint32_t)(((uint64_t)n * UBI_DEFAULT_BEB_PER1024 + 1023) / 1024);
	/* layout (2) + WL reserve (1) + atomic-change reserve (1) + bad-PEB reserve */
	if (n < 4 + beb + 1) {
		ret = -EINVAL;
		goto out;
	}
	uint32_t lebs = n - 4 - beb;
	*vol_lebs = lebs;
	uint32_t half = off.leb_size / 2 / g->page_size * g->page_size;
	size_t buflen = off.data_offset + (size_t)half;
	uint8_t *buf = malloc(buflen);
	uint8_t *data = malloc(half);
	if (!buf || !data) {
		free(buf);
		free(data);
		ret = -ENOMEM;
		goto out;
	}
	struct util_prng r;
	util_prng_seed(&r, 1);
	util_prng_fill(&r, data, half);
	uint32_t slots = ubi_vtbl_slots(off.leb_size);
	for (uint32_t p = 0; p < n && !ret; p++) {
		memset(buf, 0xFF, buflen);
		struct ubi_ec_hdr ec = {.version = UBI_VERSION,
					.ec = p % 7,
					.vid_hdr_offset = off.vid_hdr_offset,
					.data_offset = off.data_offset,
					.image_seq = 1};
		ubi_ec_hdr_pack(&ec, buf);
		size_t len = (UBI_HDR_SIZE + g->subpage_size - 1) / g->subpage_size * g->subpage_size;
		if (p < 2) {
			struct ubi_vid_hdr vid = {.vol_type = UBI_VID_DYNAMIC,
						  .compat = UBI_COMPAT_REJECT,
						  .vol_id = UBI_LAYOUT_VOLUME_ID,
						  .lnum = p,
						  .sqnum = 0};
			ubi_vid_hdr_pack(&vid, buf + off.vid_hdr_offset);
			struct ubi_vtbl_record rec = {.reserved_pebs = lebs,
						      .alignment = 1,
						      .vol_type = UBI_VID_DYNAMIC,
						      .name_len = 5};
			strcpy(rec.name, "bench");
			for (uint32_t s = 0; s < slots; s++) {
				struct ubi_vtbl_record empty = {0};
				ubi_vtbl_record_pack(s ? &empty : &rec, buf + off.data_offset + (size_t)s * UBI_VTBL_RECORD_SIZE);
			}
			len = off.data_offset + (size_t)slots * UBI_VTBL_RECORD_SIZE;
			len = (len + g->page_size - 1) / g->page_size * g->page_size;
			if (len > buflen)
				len = buflen;
		} else if (p - 2 < lebs) {
			struct ubi_vid_hdr vid = {.vol_type = UBI_VID_DYNAMIC, .vol_id = 0, .lnum = p - 2, .sqnum = p - 1};
			ubi_vid_hdr_pack(&vid, buf + off.vid_hdr_offset);
			memcpy(buf + off.data_offset, data, half);
			len = buflen;
		}
		ret = flash_write(dev, p, 0, buf, len);
	}
	free(buf);
	free(data);
out:
	flash_close(dev);
	return ret;
}

/* Anonymous resident memory of this process in KiB (file pages the
 * simulator maps are not counted), or -1. */
static long rss_anon_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	if (!f)
		return -1;
	char line[256];
	long v = -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "RssAnon: %ld", &v) == 1)
			break;
	fclose(f);
	return v;
}

static int attach_child(struct bench_ctx *ctx, const char *path, const char *phase, uint32_t vol_lebs)
{
	struct flash_dev *dev;
	int ret = flash_sim_open(path, NULL, false, false, &dev);
	if (ret)
		return ret;
	struct bench_phase ph;
	struct ubi_device *ubi;
	char msg[256];
	bench_phase_begin(ctx, &ph, phase, dev);
	ret = ubi_attach_msg(dev, NULL, &ubi, msg, sizeof(msg));
	if (ret) {
		fprintf(stderr, "bench attach: %s: %s\n", phase, msg);
		flash_close(dev);
		return ret;
	}
	struct mallinfo2 mi = mallinfo2();
	struct ubi_vol_info vi;
	ret = ubi_vol_info(ubi, 0, &vi);
	if (!ret && vi.reserved_pebs != vol_lebs)
		ret = -EIO; /* the attach did not find the volume that was written */
	bench_phase_extra(&ph, "pebs", dev->geo.peb_count);
	bench_phase_extra(&ph, "heap_kib", (double)mi.uordblks / 1024.0);
	bench_phase_extra(&ph, "rss_anon_kib", (double)rss_anon_kib());
	bench_phase_end(ctx, &ph, 0);
	ubi_detach(ubi);
	flash_close(dev);
	return ret;
}

int bench_attach(struct bench_ctx *ctx)
{
	static const struct {
		const char *phase;
		uint64_t size;
	} sizes[] = {{"attach-256MiB", 256ull << 20}, {"attach-1GiB", 1ull << 30}, {"attach-4GiB", 4ull << 30}};
	const char *tmp = getenv("TMPDIR");
	char path[4096];
	int ret = 0;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]) && !ret; i++) {
		snprintf(path, sizeof(path), "%s/ubikit-bench-attach-%d.img", tmp && *tmp ? tmp : "/tmp", (int)getpid());
		uint32_t vol_lebs = 0;
		ret = prepare(ctx, path, sizes[i].size, &vol_lebs);
		if (!ret) {
			fflush(NULL);
			pid_t pid = fork();
			if (pid < 0) {
				ret = -errno;
			} else if (pid == 0) {
				int r = attach_child(ctx, path, sizes[i].phase, vol_lebs);
				fflush(NULL);
				_exit(r ? 1 : 0);
			} else {
				int st;
				if (waitpid(pid, &st, 0) < 0)
					ret = -errno;
				else if (!WIFEXITED(st) || WEXITSTATUS(st))
					ret = -EIO;
				if (!ret)
					ctx->records++;
			}
		}
		unlink(path);
		char side[4110];
		snprintf(side, sizeof(side), "%s.sim", path);
		unlink(side);
	}
	return ret;
}
