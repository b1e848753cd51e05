/* bench — the benchmark framework of 'ubikit bench' (BENCH.md).
 *
 * A workload is a function in tools/bench_<name>.c plus one line in the
 * table in tools/bench_list.c. It makes its device with bench_device(),
 * brackets each measured phase with bench_phase_begin/bench_phase_end, and
 * returns 0 or a negative errno. bench_phase_end prints the phase's record
 * (JSON object or a table row): CPU time (user+sys, getrusage), flash
 * counters, write amplification, simulated device time, erase-count spread,
 * peak RSS, device description and compressor. */
#ifndef UBIKIT_TOOLS_BENCH_H
#define UBIKIT_TOOLS_BENCH_H
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/resource.h>
#include <time.h>

#include "flash/flash_sim.h"

struct bench_phase;

struct bench_ctx {
	bool json;                      /* one JSON object per phase, else a table */
	FILE *out;
	struct flash_sim_config device; /* BENCH.md default device unless overridden */
	const char *workload;           /* name of the running workload */
	unsigned records;               /* phases reported so far */
	int (*rss_kib)(void);           /* test hook; NULL = getrusage */
	bool short_scale;               /* --short: the small W1-W7 scale (bench_fs.h) */
	/* Called by bench_phase_begin (end = 0) and by bench_phase_end before
	 * the record is printed (end = 1): a workload's own counters go into
	 * ph->hook_data at the start and into extras at the end. */
	void (*phase_hook)(void *arg, struct bench_phase *ph, int end);
	void *phase_hook_arg;
};

struct bench_workload {
	const char *name;
	const char *summary;
	int (*run)(struct bench_ctx *ctx);
};

/* The table (tools/bench_list.c), terminated by a {NULL} entry. */
extern const struct bench_workload bench_workloads[];

/* A fresh simulated device in RAM with ctx->device's configuration. */
int bench_device(struct bench_ctx *ctx, struct flash_dev **out);

#define BENCH_MAX_EXTRA 16

struct bench_phase {
	const char *phase;
	const char *compressor;         /* "none" unless set */
	struct flash_dev *dev;          /* device whose counters are measured (may be NULL) */
	struct rusage ru0;
	struct timespec wall0;
	struct flash_stats fs0;
	unsigned nextra;
	const char *extra_key[BENCH_MAX_EXTRA];
	double extra_val[BENCH_MAX_EXTRA];
	char error[512];                /* set by bench_phase_fail: the phase did not complete */
	uint64_t hook_data[8];          /* for ctx->phase_hook */
};

/* Start measuring a phase over dev's counters. */
void bench_phase_begin(struct bench_ctx *ctx, struct bench_phase *ph, const char *phase, struct flash_dev *dev);
/* Attach a workload-specific number to the record (e.g. "mounts": 100). */
void bench_phase_extra(struct bench_phase *ph, const char *key, double value);
/* Stop and print the record; user_bytes = bytes of user data written in
 * the phase (0: write amplification is null). */
void bench_phase_end(struct bench_ctx *ctx, struct bench_phase *ph, uint64_t user_bytes);
/* The phase failed: print its record so far (user_bytes written before the
 * failure) with "error": the message, and the same on stderr as
 * "ubikit bench: W: PHASE failed: MESSAGE, after N bytes of user data". */
void bench_phase_fail(struct bench_ctx *ctx, struct bench_phase *ph, uint64_t user_bytes, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif
