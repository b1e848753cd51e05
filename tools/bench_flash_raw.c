/* bench_flash_raw — workload "flash-raw": the raw simulator alone. Program
 * every page of every PEB of the device in order with SplitMix64 bytes
 * (seed 1), read everything back and check it, then erase every PEB.
 * A baseline for the cost of the flash layer itself (WA = 1). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "util/util_prng.h"

int bench_flash_raw(struct bench_ctx *ctx)
{
	struct flash_dev *dev;
	int ret = bench_device(ctx, &dev);
	if (ret)
		return ret;
	const struct flash_geometry *g = &dev->geo;
	/* NOR has no pages: use 2 KiB writes there. */
	uint32_t unit = g->type == FLASH_NOR ? 2048 : g->page_size;
	if (g->peb_size % unit)
		unit = g->peb_size;
	uint8_t *buf = malloc(unit), *chk = malloc(unit);
	if (!buf || !chk) {
		ret = -ENOMEM;
		goto out;
	}
	struct bench_phase ph;
	struct util_prng r;

	bench_phase_begin(ctx, &ph, "program", dev);
	util_prng_seed(&r, 1);
	uint64_t written = 0;
	for (uint32_t peb = 0; peb < g->peb_count && !ret; peb++)
		for (uint32_t off = 0; off < g->peb_size && !ret; off += unit) {
			util_prng_fill(&r, buf, unit);
			ret = flash_write(dev, peb, off, buf, unit);
			written += unit;
		}
	if (ret)
		goto out;
	bench_phase_end(ctx, &ph, written);

	bench_phase_begin(ctx, &ph, "read", dev);
	util_prng_seed(&r, 1);
	for (uint32_t peb = 0; peb < g->peb_count && !ret; peb++)
		for (uint32_t off = 0; off < g->peb_size && !ret; off += unit) {
			util_prng_fill(&r, chk, unit);
			ret = flash_read(dev, peb, off, buf, unit);
			if (!ret && memcmp(buf, chk, unit))
				ret = -EIO; /* the simulator returned other data than programmed */
		}
	if (ret)
		goto out;
	bench_phase_end(ctx, &ph, 0);

	bench_phase_begin(ctx, &ph, "erase", dev);
	for (uint32_t peb = 0; peb < g->peb_count && !ret; peb++)
		ret = flash_erase(dev, peb);
	if (ret)
		goto out;
	bench_phase_end(ctx, &ph, 0);
out:
	free(buf);
	free(chk);
	flash_close(dev);
	return ret;
}
