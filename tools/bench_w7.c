/* bench_w7 — BENCH.md W7, fsync latency: create /log (not measured), then
 * record "append+fsync": 1000 x (write 512 B at the end, fsync), with the
 * flash programs, pages programmed, bytes programmed and simulated device
 * time per fsync as extras; then record "unmount". */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>

#include "bench_fs.h"

int bench_w7(struct bench_ctx *ctx)
{
	unsigned n = bench_scale(ctx)->w7_appends;
	struct bench_fs b;
	struct bench_phase ph;
	struct ubikit_file *f = NULL;
	int ret = bench_fs_format(ctx, &b);
	if (!ret)
		ret = bench_fs_mount(&b);
	if (!ret && (ret = ubikit_open(b.fs, "/log", O_CREAT | O_EXCL | O_WRONLY, 0644, &f)) != 0)
		bench_fs_failed(&b, "create", "/log", ret);
	if (ret) {
		fprintf(stderr, "ubikit bench: %s: %s\n", ctx->workload, b.err);
		goto out;
	}
	struct flash_stats f0, f1;
	flash_sim_get_stats(b.dev, &f0);
	bench_phase_begin(ctx, &ph, "append+fsync", b.dev);
	ph.compressor = BENCH_COMPRESSOR;
	for (unsigned i = 0; i < n && !ret; i++) {
		ssize_t w = ubikit_write(f, bench_fs_data(&b, 512), 512);
		if (w != 512) {
			ret = bench_fs_failed(&b, "write", "/log", w < 0 ? (int)w : -EIO);
			break;
		}
		b.user_bytes += 512;
		if ((ret = ubikit_fsync(f)) != 0)
			ret = bench_fs_failed(&b, "fsync", "/log", ret);
	}
	flash_sim_get_stats(b.dev, &f1);
	bench_phase_extra(&ph, "fsyncs", n);
	bench_phase_extra(&ph, "programs_per_fsync", (double)(f1.programs - f0.programs) / n);
	bench_phase_extra(&ph, "pages_programmed_per_fsync", (double)(f1.pages_programmed - f0.pages_programmed) / n);
	bench_phase_extra(&ph, "bytes_programmed_per_fsync", (double)(f1.bytes_programmed - f0.bytes_programmed) / n);
	bench_phase_extra(&ph, "sim_time_us_per_fsync", (double)(f1.sim_time_ns - f0.sim_time_ns) / 1e3 / n);
	if (ret) {
		bench_phase_fail(ctx, &ph, b.user_bytes, "%s", b.err);
		goto out;
	}
	bench_phase_end(ctx, &ph, b.user_bytes);
	bench_phase_begin(ctx, &ph, "unmount", b.dev);
	ph.compressor = BENCH_COMPRESSOR;
	ret = ubikit_close(f);
	f = NULL;
	if (ret)
		bench_fs_failed(&b, "close", "/log", ret);
	else
		ret = bench_fs_unmount(&b);
	if (ret) {
		bench_phase_fail(ctx, &ph, 0, "%s", b.err);
		goto out;
	}
	bench_phase_end(ctx, &ph, 0);
out:
	if (f)
		ubikit_close(f);
	bench_fs_close(&b);
	return ret;
}
