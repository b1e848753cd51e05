/* bench_w2 — BENCH.md W2, sequential: create /big, 1024 writes of 64 KiB
 * (64 MiB), close, unmount. One record, "write+unmount". */
#include "bench_fs.h"

int bench_w2_steps(struct bench_fs *b)
{
	return bench_fs_create_file(b, "/big", bench_scale(b->ctx)->w2_writes, 65536);
}

int bench_w2(struct bench_ctx *ctx)
{
	return bench_fs_simple(ctx, "write+unmount", bench_w2_steps);
}
