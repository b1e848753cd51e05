/* cmd_bench — 'ubikit bench': run benchmark workloads (BENCH.md) from the
 * table in bench_list.c and print one record per measured phase. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "commands.h"

static void usage(FILE *out)
{
	fprintf(out, "usage: ubikit bench [--json] [WORKLOAD...]\n"
		     "       ubikit bench --list\n\n"
		     "Run benchmark workloads on a simulated flash in RAM (default device: SLC NAND,\n"
		     "256 MiB, PEB 128 KiB, page 2048 + 64 OOB; page read 25 us, page program 200 us,\n"
		     "block erase 1.5 ms, bus 40 MB/s). Without WORKLOAD, all run. Each measured\n"
		     "phase prints CPU time, flash counters, write amplification, simulated device\n"
		     "time, erase-count spread and peak RSS.\n\n"
		     "  --json     one JSON object per phase (default: a table)\n"
		     "  --list     list the workloads\n");
}

static const struct bench_workload *find(const char *name)
{
	for (const struct bench_workload *w = bench_workloads; w->name; w++)
		if (!strcmp(w->name, name))
			return w;
	return NULL;
}

static int run_one(struct bench_ctx *ctx, const struct bench_workload *w)
{
	ctx->workload = w->name;
	int r = w->run(ctx);
	if (r) {
		fprintf(stderr, "ubikit bench: workload %s failed: %s\n", w->name, strerror(r < 0 ? -r : r));
		return 1;
	}
	return 0;
}

int cmd_bench(int argc, char **argv)
{
	static const struct option lo[] = {
		{"json", 0, 0, 'j'}, {"list", 0, 0, 'l'}, {"help", 0, 0, 'h'}, {0, 0, 0, 0},
	};
	struct bench_ctx ctx = {0};
	ctx.out = stdout;
	flash_sim_config_default(&ctx.device);
	bool list = false;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'j':
			ctx.json = true;
			break;
		case 'l':
			list = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			fprintf(stderr, "ubikit bench: unknown option '%s' (try 'ubikit bench --help')\n",
				argv[optind - 1]);
			return 2;
		}
	}
	if (list) {
		for (const struct bench_workload *w = bench_workloads; w->name; w++)
			printf("%-14s %s\n", w->name, w->summary);
		return 0;
	}
	for (int i = optind; i < argc; i++)
		if (!find(argv[i])) {
			fprintf(stderr, "ubikit bench: unknown workload '%s' (see 'ubikit bench --list')\n", argv[i]);
			return 2;
		}
	int status = 0;
	if (optind == argc) {
		for (const struct bench_workload *w = bench_workloads; w->name; w++)
			status |= run_one(&ctx, w);
	} else {
		for (int i = optind; i < argc; i++)
			status |= run_one(&ctx, find(argv[i]));
	}
	return status;
}
