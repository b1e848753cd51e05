/* bench_w5 — BENCH.md W5, wear and churn, two records:
 * "fill": /c00000../c00191, 1 MiB each as 16 x 64 KiB, closed (192 MiB);
 * "churn+unmount": while user bytes (fill included) < 1 GiB: v =
 * SplitMix64(seed 5) mod 192, remove /c<live[v]>, create the next id as a
 * 1 MiB file the same way, live[v] = id (832 iterations); then unmount.
 * The churn record's erase counts are per PEB over all 2048 PEBs since the
 * device was created (UBI's format included); "iterations" is an extra.
 * At full scale the first victims are checked against BENCH.md's. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench_fs.h"
#include "util/util_prng.h"

static const uint64_t first_victims[8] = {26, 184, 71, 5, 133, 4, 33, 171};

int bench_w5(struct bench_ctx *ctx)
{
	const struct bench_scale *s = bench_scale(ctx);
	struct bench_fs b;
	struct bench_phase ph;
	char path[32];
	unsigned *live = calloc(s->w5_files, sizeof(*live));
	int ret = live ? bench_fs_format(ctx, &b) : -ENOMEM;
	if (!ret)
		ret = bench_fs_mount(&b);
	if (ret) {
		fprintf(stderr, "ubikit bench: %s: %s\n", ctx->workload, live ? b.err : "out of memory");
		goto out;
	}
	bench_phase_begin(ctx, &ph, "fill", b.dev);
	ph.compressor = BENCH_COMPRESSOR;
	for (unsigned id = 0; id < s->w5_files && !ret; id++) {
		snprintf(path, sizeof(path), "/c%05u", id);
		ret = bench_fs_create_file(&b, path, 16, 65536);
		live[id] = id;
	}
	if (ret) {
		bench_phase_fail(ctx, &ph, b.user_bytes, "%s", b.err);
		goto out;
	}
	bench_phase_end(ctx, &ph, b.user_bytes);
	uint64_t total = b.user_bytes;
	b.user_bytes = 0;

	bench_phase_begin(ctx, &ph, "churn+unmount", b.dev);
	ph.compressor = BENCH_COMPRESSOR;
	struct util_prng r;
	util_prng_seed(&r, 5);
	unsigned iter = 0, next_id = s->w5_files;
	while (total + b.user_bytes < s->w5_total && !ret) {
		uint64_t v = util_prng_below(&r, s->w5_files);
		if (s->w5_files == 192 && iter < 8 && v != first_victims[iter]) {
			snprintf(b.err, sizeof(b.err), "iteration %u: victim %llu, BENCH.md says %llu (PRNG broken)",
				 iter, (unsigned long long)v, (unsigned long long)first_victims[iter]);
			ret = -EPROTO;
			break;
		}
		snprintf(path, sizeof(path), "/c%05u", live[v]);
		ret = ubikit_unlink(b.fs, path);
		if (ret) {
			ret = bench_fs_failed(&b, "unlink", path, ret);
			break;
		}
		snprintf(path, sizeof(path), "/c%05u", next_id);
		ret = bench_fs_create_file(&b, path, 16, 65536);
		live[v] = next_id++;
		iter++;
	}
	if (!ret)
		ret = bench_fs_unmount(&b);
	bench_phase_extra(&ph, "iterations", iter);
	if (ret) {
		bench_phase_fail(ctx, &ph, b.user_bytes, "iteration %u: %s", iter, b.err);
		goto out;
	}
	bench_phase_end(ctx, &ph, b.user_bytes);
out:
	free(live);
	if (live)
		bench_fs_close(&b);
	return ret;
}
