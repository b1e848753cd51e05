/* bench_list — the table of 'ubikit bench' workloads. To add one: write
 * tools/bench_<name>.c with int bench_<name>(struct bench_ctx *), declare it
 * below and add a line to the table. */
#include "bench.h"

int bench_flash_raw(struct bench_ctx *ctx);
int bench_attach(struct bench_ctx *ctx);
int bench_extract(struct bench_ctx *ctx);

const struct bench_workload bench_workloads[] = {
	{"flash-raw", "program the whole device page by page, read it back, erase it (no UBI)", bench_flash_raw},
	{"attach", "UBI attach (full scan) of 256 MiB, 1 GiB, 4 GiB sparse-file devices: CPU, bytes read, peak RSS", bench_attach},
	{"extract", "mount + extract a 100 MiB + 10000-file image made by mkfs.ubifs/ubinize (UBI and bare)", bench_extract},
	{NULL, NULL, NULL},
};
