/* ubi_workload — drives the UBI library on a flash image so that the Linux
 * kernel can check the result (tests/vm/ubi_kernel_reads.sh) and ubikit can
 * re-check it:
 *   ubi_workload write FLASH OUTDIR [SEED]
 *     attach with a tiny wear-leveling threshold, create volumes, write LEBs
 *     (partial and full, page-aligned), unmap/map, atomic LEB changes, run the
 *     background work (erasures, WL moves), detach; then write the expected
 *     contents of every volume to OUTDIR/vol<ID>.bin (from an in-memory
 *     model, not from reading the flash back), "id name type lebs" lines to
 *     OUTDIR/volumes.txt, and fail if no WL move happened.
 *   ubi_workload append FLASH VOL_ID LNUM OFF LEN
 *     write LEN bytes (0x5A) at OFF of a mapped LEB: proves that the pages
 *     after OFF were left unprogrammed (NAND programs a page only once).
 * Exit status 0 = ok; messages name the step that failed. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flash/flash.h"
#include "flash/flash_sim.h"
#include "ubi/ubi.h"
#include "util/util_prng.h"

struct model_vol {
	uint32_t id, lebs, usable;
	uint8_t *data; /* lebs * usable bytes, 0xFF where unwritten */
};

static int die(const char *what, int r, struct ubi_device *u)
{
	fprintf(stderr, "ubi_workload: %s failed: %s%s%s\n", what, strerror(r < 0 ? -r : r), u ? ": " : "",
		u ? ubi_errmsg(u) : "");
	return 1;
}

static int mk(struct ubi_device *u, struct model_vol *m, int id, const char *name, uint32_t lebs, uint8_t type)
{
	struct ubi_mkvol_req req = {.vol_id = id, .name = name, .leb_count = lebs, .vol_type = type, .alignment = 1};
	uint32_t got;
	int r = ubi_vol_create(u, &req, &got);
	if (r)
		return die("ubi_vol_create", r, u);
	struct ubi_vol_info vi;
	r = ubi_vol_info(u, got, &vi);
	if (r)
		return die("ubi_vol_info", r, u);
	m->id = got;
	m->lebs = lebs;
	m->usable = vi.usable_leb_size;
	m->data = malloc((size_t)lebs * m->usable);
	if (!m->data)
		return die("malloc", ENOMEM, NULL);
	memset(m->data, 0xFF, (size_t)lebs * m->usable);
	return 0;
}

static int cmd_write(const char *flash_path, const char *outdir, uint64_t seed)
{
	struct flash_dev *fl;
	int r = flash_sim_open(flash_path, NULL, false, false, &fl);
	if (r)
		return die("flash_sim_open (the image needs its .sim sidecar)", r, NULL);
	struct ubi_attach_opts o;
	ubi_attach_opts_default(&o);
	o.wl_threshold = 3; /* tiny: wear leveling moves data during the workload */
	struct ubi_device *u;
	char msg[512];
	r = ubi_attach_msg(fl, &o, &u, msg, sizeof(msg));
	if (r) {
		fprintf(stderr, "ubi_workload: attach failed: %s\n", msg);
		return 1;
	}
	struct ubi_dev_info di;
	ubi_dev_info(u, &di);
	uint32_t io = di.min_io_size;
	struct util_prng rng;
	util_prng_seed(&rng, seed);
	struct model_vol vols[3];
	memset(vols, 0, sizeof(vols));
	/* vol 0: dynamic, LEB writes; vol 1: dynamic, atomic changes (churn);
	 * vol 2: static, written by a volume update (cold data for WL). */
	if (mk(u, &vols[0], 0, "leb-writes", 12, UBI_VID_DYNAMIC) || mk(u, &vols[1], 1, "atomic", 3, UBI_VID_DYNAMIC))
		return 1;
	/* The cold volume takes all but 16 of the free PEBs, so that the
	 * churn below wears the few free PEBs and wear leveling must move
	 * cold data onto them. */
	ubi_dev_info(u, &di);
	if (di.avail_pebs < 24) {
		fprintf(stderr, "ubi_workload: flash too small (%u PEBs available)\n", di.avail_pebs);
		return 1;
	}
	if (mk(u, &vols[2], 2, "cold-static", di.avail_pebs - 16, UBI_VID_STATIC))
		return 1;
	uint32_t usable = vols[0].usable;
	uint8_t *buf = malloc(usable);
	if (!buf)
		return die("malloc", ENOMEM, NULL);

	/* Static volume: all LEBs but half of the last through the update interface. */
	size_t slen = (size_t)vols[2].usable * (vols[2].lebs - 1) + vols[2].usable / 2 + 7;
	uint8_t *sdata = malloc(slen);
	if (!sdata)
		return die("malloc", ENOMEM, NULL);
	util_prng_fill(&rng, sdata, slen);
	r = ubi_vol_update(u, 2, sdata, slen);
	if (r)
		return die("ubi_vol_update (static)", r, u);
	memcpy(vols[2].data, sdata, slen);

	/* Volume 0: every LEB gets a few sequential page-aligned chunks. */
	for (uint32_t l = 0; l < vols[0].lebs; l++) {
		uint32_t off = 0;
		uint32_t chunks = 1 + (uint32_t)util_prng_below(&rng, 4);
		for (uint32_t c = 0; c < chunks && off < usable; c++) {
			uint32_t pages = 1 + (uint32_t)util_prng_below(&rng, (usable - off) / io > 8 ? 8 : (usable - off) / io);
			uint32_t len = pages * io;
			if (off + len > usable)
				len = (usable - off) / io * io;
			if (!len)
				break;
			util_prng_fill(&rng, buf, len);
			r = ubi_leb_write(u, 0, l, off, buf, len);
			if (r)
				return die("ubi_leb_write", r, u);
			memcpy(vols[0].data + (size_t)l * usable + off, buf, len);
			off += len + (uint32_t)util_prng_below(&rng, 2) * io; /* sometimes leave a gap */
		}
	}
	/* Unmap two LEBs, rewrite one of them, map another (empty). */
	r = ubi_leb_unmap(u, 0, 3);
	if (r)
		return die("ubi_leb_unmap", r, u);
	memset(vols[0].data + 3 * (size_t)usable, 0xFF, usable);
	r = ubi_leb_unmap(u, 0, 7);
	if (r)
		return die("ubi_leb_unmap", r, u);
	memset(vols[0].data + 7 * (size_t)usable, 0xFF, usable);
	util_prng_fill(&rng, buf, usable);
	r = ubi_leb_write(u, 0, 7, 0, buf, usable);
	if (r)
		return die("ubi_leb_write (full LEB after unmap)", r, u);
	memcpy(vols[0].data + 7 * (size_t)usable, buf, usable);
	r = ubi_leb_map(u, 0, 3);
	if (r)
		return die("ubi_leb_map", r, u);

	/* Volume 1: many atomic changes, each followed by background work. */
	for (int i = 0; i < 400; i++) {
		uint32_t l = (uint32_t)util_prng_below(&rng, vols[1].lebs);
		uint32_t len = (1 + (uint32_t)util_prng_below(&rng, usable / io)) * io;
		util_prng_fill(&rng, buf, len);
		r = ubi_leb_change(u, 1, l, buf, len);
		if (r)
			return die("ubi_leb_change", r, u);
		memset(vols[1].data + (size_t)l * usable, 0xFF, usable);
		memcpy(vols[1].data + (size_t)l * usable, buf, len);
		for (int s = 0; s < 4; s++) {
			r = ubi_background_step(u);
			if (r < 0)
				return die("ubi_background_step", r, u);
			if (r == 0)
				break;
		}
	}
	r = ubi_flush_background(u);
	if (r < 0)
		return die("ubi_flush_background", r, u);
	struct ubi_stats st;
	ubi_get_stats(u, &st);
	ubi_dev_info(u, &di);
	printf("ubi_workload: erases %llu, wl_moves %llu, scrubs %llu; EC min/mean/max %u/%u/%u\n",
	       (unsigned long long)st.erases, (unsigned long long)st.wl_moves, (unsigned long long)st.scrubs,
	       di.min_ec, di.mean_ec, di.max_ec);

	/* The model must equal what ubikit reads back before we trust it. */
	for (int v = 0; v < 3; v++) {
		size_t total = (size_t)vols[v].lebs * vols[v].usable;
		if (v == 2)
			total = slen;
		for (uint32_t l = 0; (size_t)l * usable < total; l++) {
			size_t len = total - (size_t)l * usable < usable ? total - (size_t)l * usable : usable;
			r = ubi_leb_read(u, vols[v].id, l, 0, buf, len);
			if (r)
				return die("ubi_leb_read", r, u);
			if (memcmp(buf, vols[v].data + (size_t)l * usable, len)) {
				fprintf(stderr, "ubi_workload: volume %u LEB %u reads back different data\n", vols[v].id, l);
				return 1;
			}
		}
		char path[4096];
		snprintf(path, sizeof(path), "%s/vol%u.bin", outdir, vols[v].id);
		FILE *f = fopen(path, "wb");
		if (!f || fwrite(vols[v].data, 1, total, f) != total || fclose(f))
			return die("writing the expected volume file", errno, NULL);
	}
	char lpath[4096];
	snprintf(lpath, sizeof(lpath), "%s/volumes.txt", outdir);
	FILE *lf = fopen(lpath, "w");
	if (!lf)
		return die("writing volumes.txt", errno, NULL);
	static const char *const names[] = {"leb-writes", "atomic", "cold-static"};
	for (int v = 0; v < 3; v++)
		fprintf(lf, "%u %s %s %u\n", vols[v].id, names[v], v == 2 ? "static" : "dynamic", vols[v].lebs);
	if (fclose(lf))
		return die("writing volumes.txt", errno, NULL);
	r = ubi_sync(u);
	if (r)
		return die("ubi_sync", r, u);
	ubi_detach(u);
	r = flash_sync(fl);
	flash_close(fl);
	if (r)
		return die("flash_sync", r, NULL);
	if (st.wl_moves == 0) {
		fprintf(stderr, "ubi_workload: no wear-leveling move happened (threshold 3): the test would not "
				"cover WL copies\n");
		return 1;
	}
	for (int v = 0; v < 3; v++)
		free(vols[v].data);
	free(buf);
	free(sdata);
	return 0;
}

static int cmd_append(const char *flash_path, char **a)
{
	struct flash_dev *fl;
	int r = flash_sim_open(flash_path, NULL, false, false, &fl);
	if (r)
		return die("flash_sim_open", r, NULL);
	struct ubi_device *u;
	char msg[512];
	r = ubi_attach_msg(fl, NULL, &u, msg, sizeof(msg));
	if (r) {
		fprintf(stderr, "ubi_workload: attach failed: %s\n", msg);
		return 1;
	}
	uint32_t vol = (uint32_t)strtoul(a[0], NULL, 0), lnum = (uint32_t)strtoul(a[1], NULL, 0);
	uint32_t off = (uint32_t)strtoul(a[2], NULL, 0), len = (uint32_t)strtoul(a[3], NULL, 0);
	uint8_t *buf = malloc(len);
	if (!buf)
		return 1;
	memset(buf, 0x5A, len);
	r = ubi_leb_write(u, vol, lnum, off, buf, len);
	if (r)
		return die("ubi_leb_write after the image data", r, u);
	r = ubi_sync(u);
	ubi_detach(u);
	flash_close(fl);
	free(buf);
	return r ? die("ubi_sync", r, NULL) : 0;
}

int main(int argc, char **argv)
{
	if (argc >= 4 && !strcmp(argv[1], "write"))
		return cmd_write(argv[2], argv[3], argc > 4 ? strtoull(argv[4], NULL, 0) : 1);
	if (argc == 7 && !strcmp(argv[1], "append"))
		return cmd_append(argv[2], argv + 3);
	fprintf(stderr, "usage: ubi_workload write FLASH OUTDIR [SEED] | append FLASH VOL LNUM OFF LEN\n");
	return 2;
}
