/* bench_list — the table of 'ubikit bench' workloads. To add one: write
 * tools/bench_<name>.c with int bench_<name>(struct bench_ctx *), declare it
 * below and add a line to the table. */
#include "bench.h"

int bench_flash_raw(struct bench_ctx *ctx);
int bench_attach(struct bench_ctx *ctx);
int bench_extract(struct bench_ctx *ctx);
int bench_w1(struct bench_ctx *ctx);
int bench_w2(struct bench_ctx *ctx);
int bench_w3(struct bench_ctx *ctx);
int bench_w4(struct bench_ctx *ctx);
int bench_w5(struct bench_ctx *ctx);
int bench_w6(struct bench_ctx *ctx);
int bench_w7(struct bench_ctx *ctx);

const struct bench_workload bench_workloads[] = {
	{"flash-raw", "program the whole device page by page, read it back, erase it (no UBI)", bench_flash_raw},
	{"attach", "UBI attach (full scan) of 256 MiB, 1 GiB, 4 GiB sparse-file devices: CPU, bytes read, peak RSS", bench_attach},
	{"extract", "mount + extract a 100 MiB + 10000-file image made by mkfs.ubifs/ubinize (UBI and bare)", bench_extract},
	{"w1", "BENCH.md W1: 2000 files of 4 KiB in 10 directories, unmount", bench_w1},
	{"w2", "BENCH.md W2: one 64 MiB file in 64 KiB writes, unmount", bench_w2},
	{"w3", "BENCH.md W3: 16 MiB file, 8192 random 4 KiB overwrites with an fsync every 64", bench_w3},
	{"w4", "BENCH.md W4: W1 + W2, then mount, list + stat, read all, unmount, 100 remounts", bench_w4},
	{"w5", "BENCH.md W5: fill 75% with 1 MiB files, churn to 1 GiB written; wear", bench_w5},
	{"w6", "BENCH.md W6: 5000 empty files in one directory: create, stat (shuffled), readdir", bench_w6},
	{"w7", "BENCH.md W7: 1000 appends of 512 B, fsync after each", bench_w7},
	{NULL, NULL, NULL},
};
