/* bench_w3 — BENCH.md W3, random overwrite, two records:
 * "fill": create /rw, 256 writes of 64 KiB (16 MiB), close;
 * "overwrite+unmount": open /rw read-write, 8192 overwrites of 4096 B at
 * slot * 4096 with slot = SplitMix64(seed 3) mod 4096 (pwrite: seek +
 * write), fsync after every 64th, close, unmount. User data 32 MiB.
 * At full scale the first slots are checked against BENCH.md's. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>

#include "bench_fs.h"
#include "util/util_prng.h"

static int fill(struct bench_fs *b)
{
	return bench_fs_create_file(b, "/rw", bench_scale(b->ctx)->w3_fill_writes, 65536);
}

static const uint64_t first_slots[8] = {4077, 2441, 3329, 2511, 2454, 3847, 3512, 534};

static int overwrite(struct bench_fs *b)
{
	const struct bench_scale *s = bench_scale(b->ctx);
	uint64_t slots = (uint64_t)s->w3_fill_writes * 16;
	struct ubikit_file *f;
	int ret = ubikit_open(b->fs, "/rw", O_RDWR, 0, &f);
	if (ret)
		return bench_fs_failed(b, "open", "/rw", ret);
	struct util_prng r;
	util_prng_seed(&r, 3);
	for (unsigned i = 0; i < s->w3_overwrites && !ret; i++) {
		uint64_t slot = util_prng_below(&r, slots);
		if (slots == 4096 && i < 8 && slot != first_slots[i]) {
			snprintf(b->err, sizeof(b->err), "overwrite %u: slot %llu, BENCH.md says %llu (PRNG broken)", i,
				 (unsigned long long)slot, (unsigned long long)first_slots[i]);
			ret = -EPROTO;
			break;
		}
		ssize_t n = ubikit_pwrite(f, bench_fs_data(b, 4096), 4096, slot * 4096);
		if (n != 4096) {
			ret = bench_fs_failed(b, "pwrite", "/rw", n < 0 ? (int)n : -EIO);
			break;
		}
		b->user_bytes += 4096;
		if ((i + 1) % 64 == 0 && (ret = ubikit_fsync(f)) != 0)
			ret = bench_fs_failed(b, "fsync", "/rw", ret);
	}
	int c = ubikit_close(f);
	if (!ret && c)
		ret = bench_fs_failed(b, "close", "/rw", c);
	return ret;
}

int bench_w3(struct bench_ctx *ctx)
{
	struct bench_fs b;
	struct bench_phase ph;
	int ret = bench_fs_format(ctx, &b);
	if (!ret)
		ret = bench_fs_mount(&b);
	if (ret) {
		fprintf(stderr, "ubikit bench: %s: %s\n", ctx->workload, b.err);
		bench_fs_close(&b);
		return ret;
	}
	bench_phase_begin(ctx, &ph, "fill", b.dev);
	ph.compressor = BENCH_COMPRESSOR;
	ret = fill(&b);
	if (ret) {
		bench_phase_fail(ctx, &ph, b.user_bytes, "%s", b.err);
		bench_fs_close(&b);
		return ret;
	}
	bench_phase_end(ctx, &ph, b.user_bytes);
	b.user_bytes = 0;
	bench_phase_begin(ctx, &ph, "overwrite+unmount", b.dev);
	ph.compressor = BENCH_COMPRESSOR;
	ret = overwrite(&b);
	if (!ret)
		ret = bench_fs_unmount(&b);
	if (ret)
		bench_phase_fail(ctx, &ph, b.user_bytes, "%s", b.err);
	else
		bench_phase_end(ctx, &ph, b.user_bytes);
	bench_fs_close(&b);
	return ret;
}
