/* bench — phase measurement and the JSON/table records of 'ubikit bench'
 * (see bench.h). */
#include "bench.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

int bench_device(struct bench_ctx *ctx, struct flash_dev **out)
{
	struct flash_sim_config c = ctx->device;
	c.path = NULL;
	return flash_sim_create(&c, out);
}

void bench_phase_begin(struct bench_ctx *ctx, struct bench_phase *ph, const char *phase, struct flash_dev *dev)
{
	memset(ph, 0, sizeof(*ph));
	ph->phase = phase;
	ph->compressor = "none";
	ph->dev = dev;
	if (ctx->phase_hook)
		ctx->phase_hook(ctx->phase_hook_arg, ph, 0);
	if (dev)
		flash_sim_get_stats(dev, &ph->fs0);
	clock_gettime(CLOCK_MONOTONIC, &ph->wall0);
	getrusage(RUSAGE_SELF, &ph->ru0);
}

void bench_phase_extra(struct bench_phase *ph, const char *key, double value)
{
	if (ph->nextra < BENCH_MAX_EXTRA) {
		ph->extra_key[ph->nextra] = key;
		ph->extra_val[ph->nextra] = value;
		ph->nextra++;
	}
}

/* s as the inside of a JSON string. */
static void json_str(FILE *o, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(o, "\\%c", c);
		else if (c < 0x20)
			fprintf(o, "\\u%04x", c);
		else
			fputc(c, o);
	}
}

static double tv_s(struct timeval t)
{
	return (double)t.tv_sec + (double)t.tv_usec / 1e6;
}

void bench_phase_end(struct bench_ctx *ctx, struct bench_phase *ph, uint64_t user_bytes)
{
	struct rusage ru1;
	struct timespec wall1;
	if (ctx->phase_hook)
		ctx->phase_hook(ctx->phase_hook_arg, ph, 1);
	getrusage(RUSAGE_SELF, &ru1);
	clock_gettime(CLOCK_MONOTONIC, &wall1);
	double cpu = tv_s(ru1.ru_utime) - tv_s(ph->ru0.ru_utime) + tv_s(ru1.ru_stime) - tv_s(ph->ru0.ru_stime);
	double wall = (double)(wall1.tv_sec - ph->wall0.tv_sec) + (double)(wall1.tv_nsec - ph->wall0.tv_nsec) / 1e9;
	long rss = ctx->rss_kib ? ctx->rss_kib() : ru1.ru_maxrss;

	struct flash_stats a = {0}, d = {0};
	struct flash_wear_stats ws = {0};
	struct flash_sim_config cfg = ctx->device;
	if (ph->dev) {
		flash_sim_get_stats(ph->dev, &a);
		flash_sim_wear_stats(ph->dev, &ws);
		flash_sim_get_config(ph->dev, &cfg);
	}
	d.reads = a.reads - ph->fs0.reads;
	d.programs = a.programs - ph->fs0.programs;
	d.erases = a.erases - ph->fs0.erases;
	d.bytes_read = a.bytes_read - ph->fs0.bytes_read;
	d.bytes_programmed = a.bytes_programmed - ph->fs0.bytes_programmed;
	d.sim_time_ns = a.sim_time_ns - ph->fs0.sim_time_ns;
	d.pages_read = a.pages_read - ph->fs0.pages_read;
	d.pages_programmed = a.pages_programmed - ph->fs0.pages_programmed;
	const struct flash_geometry *g = &cfg.geo;
	FILE *o = ctx->out;
	if (ctx->json) {
		fprintf(o, "{\"workload\": \"%s\", \"phase\": \"%s\", \"cpu_s\": %.6f, \"wall_s\": %.6f, ", ctx->workload,
			ph->phase, cpu, wall);
		fprintf(o,
			"\"user_bytes\": %" PRIu64 ", \"flash_bytes_read\": %" PRIu64
			", \"flash_bytes_programmed\": %" PRIu64 ", \"flash_reads\": %" PRIu64
			", \"flash_programs\": %" PRIu64 ", \"flash_pages_read\": %" PRIu64
			", \"flash_pages_programmed\": %" PRIu64 ", \"erases\": %" PRIu64 ", ",
			user_bytes, d.bytes_read, d.bytes_programmed, d.reads, d.programs, d.pages_read,
			d.pages_programmed, d.erases);
		if (user_bytes)
			fprintf(o, "\"write_amplification\": %.6f, ", (double)d.bytes_programmed / (double)user_bytes);
		else
			fprintf(o, "\"write_amplification\": null, ");
		fprintf(o,
			"\"sim_time_s\": %.6f, \"erase_count\": {\"min\": %u, \"max\": %u, \"mean\": %.4f, "
			"\"stddev\": %.4f}, \"peak_rss_kib\": %ld, ",
			(double)d.sim_time_ns / 1e9, ws.min, ws.max, ws.mean, ws.stddev, rss);
		fprintf(o,
			"\"device\": {\"type\": \"%s\", \"size\": %" PRIu64 ", \"page_size\": %u, \"subpage_size\": %u, "
			"\"oob_size\": %u, \"peb_size\": %u, \"peb_count\": %u, \"endurance\": %u, \"timing\": "
			"{\"page_read_us\": %.3f, \"page_program_us\": %.3f, \"block_erase_us\": %.3f, "
			"\"bus_mb_per_s\": %.3f}}, \"compressor\": \"%s\"",
			g->type == FLASH_NOR ? "nor" : "nand", (uint64_t)g->peb_size * g->peb_count, g->page_size,
			g->subpage_size, g->oob_size, g->peb_size, g->peb_count, cfg.endurance,
			(double)cfg.timing.page_read_ns / 1e3, (double)cfg.timing.page_program_ns / 1e3,
			(double)cfg.timing.block_erase_ns / 1e3, (double)cfg.timing.bus_bytes_per_sec / 1e6,
			ph->compressor);
		for (unsigned i = 0; i < ph->nextra; i++)
			fprintf(o, ", \"%s\": %.12g", ph->extra_key[i], ph->extra_val[i]);
		if (ph->error[0]) {
			fprintf(o, ", \"completed\": false, \"error\": \"");
			json_str(o, ph->error);
			fprintf(o, "\"");
		}
		fprintf(o, "}\n");
	} else {
		if (!ctx->records)
			fprintf(o, "%-14s %-18s %8s %10s %10s %8s %7s %10s %21s %9s\n", "workload", "phase", "cpu_s",
				"read_MiB", "prog_MiB", "erases", "WA", "sim_s", "EC min/max/mean/sd", "rss_MiB");
		char wa[16];
		if (user_bytes)
			snprintf(wa, sizeof(wa), "%.3f", (double)d.bytes_programmed / (double)user_bytes);
		else
			snprintf(wa, sizeof(wa), "-");
		char ec[48];
		snprintf(ec, sizeof(ec), "%u/%u/%.2f/%.2f", ws.min, ws.max, ws.mean, ws.stddev);
		fprintf(o, "%-14s %-18s %8.3f %10.2f %10.2f %8" PRIu64 " %7s %10.3f %21s %9.1f\n", ctx->workload,
			ph->phase, cpu, (double)d.bytes_read / 1048576.0, (double)d.bytes_programmed / 1048576.0,
			d.erases, wa, (double)d.sim_time_ns / 1e9, ec, (double)rss / 1024.0);
		for (unsigned i = 0; i < ph->nextra; i++)
			fprintf(o, "%-14s %-18s   %s = %.12g\n", "", "", ph->extra_key[i], ph->extra_val[i]);
		if (ph->error[0])
			fprintf(o, "%-14s %-18s   FAILED: %s\n", "", "", ph->error);
	}
	fflush(o);
	ctx->records++;
}

void bench_phase_fail(struct bench_ctx *ctx, struct bench_phase *ph, uint64_t user_bytes, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(ph->error, sizeof(ph->error), fmt, ap);
	va_end(ap);
	fprintf(stderr, "ubikit bench: %s: %s failed: %s, after %" PRIu64 " bytes of user data\n", ctx->workload,
		ph->phase, ph->error, user_bytes);
	bench_phase_end(ctx, ph, user_bytes);
}
