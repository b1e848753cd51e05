/* cmd_bench — 'ubikit bench': run benchmark workloads (BENCH.md) from the
 * table in bench_list.c and print one record per measured phase. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "commands.h"
#include "util/util_size.h"

static void usage(FILE *out)
{
	fprintf(out, "usage: ubikit bench [--json] [--short] [WORKLOAD...|all]\n"
		     "       ubikit bench --list\n\n"
		     "Run benchmark workloads on a simulated flash in RAM (default device: SLC NAND,\n"
		     "256 MiB, PEB 128 KiB, page 2048 + 64 OOB; page read 25 us, page program 200 us,\n"
		     "block erase 1.5 ms, bus 40 MB/s). 'all' runs BENCH.md's w1..w7; without\n"
		     "WORKLOAD every workload of --list runs. w1..w7 start from a freshly\n"
		     "formatted device: UBI, one volume, an empty UBIFS (made by mkfs.ubifs, lzo).\n"
		     "Each measured phase prints CPU time, flash counters, write amplification,\n"
		     "simulated device time, erase-count spread and peak RSS; a phase that fails\n"
		     "prints its record so far with the error and the bytes written before it.\n\n"
		     "  --json       one JSON object per phase (default: a table)\n"
		     "  --list       list the workloads\n"
		     "  --size SIZE  device size (default 256MiB; PEB 128KiB)\n"
		     "  --short      w1..w7 at a small scale (seconds; for tests, see docs/bench.md)\n"
		     "  --subpage N  NAND sub-page size (default: none, = page size; nandsim's is 512)\n"
		     "  --no-fork    run workloads in this process (default: one child process\n"
		     "               each, so peak RSS is per workload)\n");
}

static const struct bench_workload *find(const char *name)
{
	for (const struct bench_workload *w = bench_workloads; w->name; w++)
		if (!strcmp(w->name, name))
			return w;
	return NULL;
}

static int run_here(struct bench_ctx *ctx, const struct bench_workload *w)
{
	ctx->workload = w->name;
	int r = w->run(ctx);
	if (r) {
		fprintf(stderr, "ubikit bench: workload %s failed: %s\n", w->name, strerror(r < 0 ? -r : r));
		return 1;
	}
	return 0;
}

/* Each workload in its own process: peak RSS and heap state do not leak
 * from one workload into the next. */
static int run_one(struct bench_ctx *ctx, const struct bench_workload *w, bool use_fork)
{
	if (!use_fork)
		return run_here(ctx, w);
	fflush(ctx->out);
	fflush(stderr);
	pid_t pid = fork();
	if (pid < 0)
		return run_here(ctx, w);
	if (pid == 0) {
		int st = run_here(ctx, w);
		fflush(ctx->out);
		fflush(stderr);
		_exit(st);
	}
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return 1;
	if (WIFSIGNALED(status)) {
		fprintf(stderr, "ubikit bench: workload %s killed by signal %d\n", w->name, WTERMSIG(status));
		return 1;
	}
	if (WEXITSTATUS(status))
		return 1;
	ctx->records++; /* the child printed the table header */
	return 0;
}

int cmd_bench(int argc, char **argv)
{
	static const struct option lo[] = {
		{"json", 0, 0, 'j'}, {"list", 0, 0, 'l'}, {"help", 0, 0, 'h'},
		{"size", 1, 0, 's'}, {"no-fork", 0, 0, 'F'}, {"short", 0, 0, 'S'}, {"subpage", 1, 0, 'P'}, {0, 0, 0, 0},
	};
	struct bench_ctx ctx = {0};
	ctx.out = stdout;
	flash_sim_config_default(&ctx.device);
	bool list = false, use_fork = true;
	uint64_t size;
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
		case 'F':
			use_fork = false;
			break;
		case 'S':
			ctx.short_scale = true;
			break;
		case 'P': {
			char why[256];
			struct flash_geometry g = ctx.device.geo;
			if (util_parse_size(optarg, &size) || size > g.page_size ||
			    (g.subpage_size = (uint32_t)size, flash_sim_check_geometry(&g, why, sizeof(why)))) {
				fprintf(stderr, "ubikit bench: --subpage %s: not a sub-page size of %u-byte pages\n", optarg,
					g.page_size);
				return 2;
			}
			ctx.device.geo.subpage_size = (uint32_t)size;
			break;
		}
		case 's':
			if (util_parse_size(optarg, &size) || !size || size % ctx.device.geo.peb_size ||
			    size / ctx.device.geo.peb_size > UINT32_MAX) {
				fprintf(stderr, "ubikit bench: --size %s is not a non-zero multiple of %u bytes\n", optarg,
					ctx.device.geo.peb_size);
				return 2;
			}
			ctx.device.geo.peb_count = (uint32_t)(size / ctx.device.geo.peb_size);
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
		if (strcmp(argv[i], "all") && !find(argv[i])) {
			fprintf(stderr, "ubikit bench: unknown workload '%s' (see 'ubikit bench --list')\n", argv[i]);
			return 2;
		}
	int status = 0;
	if (optind == argc) {
		for (const struct bench_workload *w = bench_workloads; w->name; w++)
			status |= run_one(&ctx, w, use_fork);
	} else {
		for (int i = optind; i < argc; i++) {
			if (strcmp(argv[i], "all")) {
				status |= run_one(&ctx, find(argv[i]), use_fork);
				continue;
			}
			for (const struct bench_workload *w = bench_workloads; w->name; w++)
				if (w->name[0] == 'w' && w->name[1] >= '1' && w->name[1] <= '7' && !w->name[2])
					status |= run_one(&ctx, w, use_fork);
		}
	}
	return status;
}
