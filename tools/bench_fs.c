/* bench_fs — the device, scale and helpers of the W1-W7 workloads (see
 * bench_fs.h). */
#include "bench_fs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/util_prng.h"

static const struct bench_scale full_scale = {
	.w1_dirs = 10, .w1_files = 200, .w2_writes = 1024, .w3_fill_writes = 256, .w3_overwrites = 8192,
	.w4_remounts = 100, .w5_files = 192, .w5_total = 1ull << 30, .w6_files = 5000, .w7_appends = 1000,
};

/* --short: seconds per workload, for tests. Same definitions, smaller counts. */
static const struct bench_scale short_scale = {
	.w1_dirs = 2, .w1_files = 20, .w2_writes = 64, .w3_fill_writes = 16, .w3_overwrites = 512,
	.w4_remounts = 3, .w5_files = 12, .w5_total = 64ull << 20, .w6_files = 200, .w7_appends = 100,
};

const struct bench_scale *bench_scale(const struct bench_ctx *ctx)
{
	return ctx->short_scale ? &short_scale : &full_scale;
}

#define POOL_BYTES (8u << 20)
#define POOL_SEED 0x75b1c17ull

double bench_cpu_s(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
	       (double)ru.ru_stime.tv_usec / 1e6;
}

static void __attribute__((format(printf, 2, 3))) seterr(struct bench_fs *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(b->err, sizeof(b->err), fmt, ap);
	va_end(ap);
}

int bench_fs_failed(struct bench_fs *b, const char *call, const char *path, int err)
{
	const char *why = b->fs ? ubikit_errmsg(b->fs) : "";
	seterr(b, "%s %s: %s%s%s", call, path ? path : "", strerror(err < 0 ? -err : err),
		 why && why[0] ? " - " : "", why ? why : "");
	return err < 0 ? err : -err;
}

const uint8_t *bench_fs_data(struct bench_fs *b, size_t len)
{
	if (b->pool_pos + len > b->pool_len)
		b->pool_pos = 0;
	const uint8_t *p = b->pool + b->pool_pos;
	/* an odd step: no two writes of a run get the same bytes at the same offset */
	b->pool_pos += len + 24;
	return p;
}

static void vol_hook(void *arg, struct bench_phase *ph, int end);

/* mkfs.ubifs of an empty directory for this volume, read into memory. */
static int make_empty_ubifs(struct bench_fs *b, uint32_t min_io, uint32_t leb_size, uint32_t lebs, uint8_t **img,
			    size_t *len)
{
	const char *tmp = getenv("TMPDIR");
	char dir[1024], cmd[8192], path[1100];
	snprintf(dir, sizeof(dir), "%s/ubikit-bench-mkfs-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		seterr(b, "cannot make a scratch directory in %s: %s", dir, strerror(errno));
		return -errno;
	}
	snprintf(path, sizeof(path), "%s/empty", dir);
	int ret = mkdir(path, 0755) ? -errno : 0;
	if (!ret) {
		snprintf(cmd, sizeof(cmd),
			 "mkfs.ubifs -r '%s/empty' -m %u -e %u -c %u -o '%s/fs.ubifs' >'%s/log' 2>&1", dir, min_io,
			 leb_size, lebs, dir, dir);
		if (system(cmd) != 0) {
			snprintf(b->err, sizeof(b->err),
				 "mkfs.ubifs (mtd-utils) failed or is not on PATH; the empty UBIFS of each workload "
				 "is made with it (-m %u -e %u -c %u)",
				 min_io, leb_size, lebs);
			ret = -ENOENT;
		}
	}
	if (!ret) {
		snprintf(path, sizeof(path), "%s/fs.ubifs", dir);
		FILE *f = fopen(path, "rb");
		struct stat st;
		if (!f || fstat(fileno(f), &st) || !(*img = malloc((size_t)st.st_size + 1)) ||
		    fread(*img, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
			seterr(b, "cannot read %s", path);
			ret = -EIO;
		} else {
			*len = (size_t)st.st_size;
		}
		if (f)
			fclose(f);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0 && !ret)
		ret = 0; /* a scratch directory left behind is not the benchmark's failure */
	return ret;
}

int bench_fs_format(struct bench_ctx *ctx, struct bench_fs *b)
{
	memset(b, 0, sizeof(*b));
	b->ctx = ctx;
	b->phase = "format";
	const char *trace = getenv("UBIKIT_BENCH_TRACE");
	if (trace && trace[0])
		b->trace = fopen(trace, "a");
	ctx->phase_hook = vol_hook;
	ctx->phase_hook_arg = b;
	b->pool_len = POOL_BYTES;
	b->pool = malloc(b->pool_len);
	if (!b->pool) {
		seterr(b, "out of memory");
		return -ENOMEM;
	}
	struct util_prng r;
	util_prng_seed(&r, POOL_SEED);
	util_prng_fill(&r, b->pool, b->pool_len);
	int ret = bench_device(ctx, &b->dev);
	if (ret) {
		seterr(b, "cannot create the simulated device: %s", strerror(-ret));
		return ret;
	}
	char msg[512];
	ret = ubi_attach_msg(b->dev, NULL, &b->ubi, msg, sizeof(msg));
	if (ret) {
		seterr(b, "UBI attach of the new device: %s", msg);
		return ret;
	}
	struct ubi_dev_info di;
	ubi_dev_info(b->ubi, &di);
	struct ubi_mkvol_req req = {.vol_id = 0, .name = "bench", .leb_count = di.avail_pebs,
				    .vol_type = UBI_VID_DYNAMIC, .alignment = 1};
	ret = ubi_vol_create(b->ubi, &req, &b->vol_id);
	if (ret) {
		seterr(b, "UBI volume of %u LEBs: %s", di.avail_pebs, ubi_errmsg(b->ubi));
		return ret;
	}
	uint8_t *img = NULL;
	size_t len = 0;
	ret = make_empty_ubifs(b, di.min_io_size, di.leb_size, di.avail_pebs, &img, &len);
	if (!ret) {
		ret = ubi_vol_update(b->ubi, b->vol_id, img, len);
		if (ret)
			seterr(b, "writing the empty UBIFS to the volume: %s",
				 ubi_errmsg(b->ubi));
	}
	free(img);
	return ret;
}

/* The counting wrapper around the volume UBIFS writes to. */
static int vw_read(void *c, uint32_t lnum, uint32_t off, void *buf, size_t len)
{
	struct bench_fs *b = c;
	b->vs.reads++;
	b->vs.read_bytes += len;
	return b->inner.read(b->inner.ctx, lnum, off, buf, len);
}

static int vw_write(void *c, uint32_t lnum, uint32_t off, const void *buf, size_t len)
{
	struct bench_fs *b = c;
	b->vs.writes++;
	b->vs.write_bytes += len;
	if (b->trace)
		fprintf(b->trace, "%s %s write %u %u %zu\n", b->ctx->workload, b->phase, lnum, off, len);
	return b->inner.write(b->inner.ctx, lnum, off, buf, len);
}

static int vw_change(void *c, uint32_t lnum, const void *buf, size_t len)
{
	struct bench_fs *b = c;
	b->vs.changes++;
	b->vs.change_bytes += len;
	if (b->trace)
		fprintf(b->trace, "%s %s change %u 0 %zu\n", b->ctx->workload, b->phase, lnum, len);
	return b->inner.change(b->inner.ctx, lnum, buf, len);
}

static int vw_unmap(void *c, uint32_t lnum)
{
	struct bench_fs *b = c;
	b->vs.unmaps++;
	if (b->trace)
		fprintf(b->trace, "%s %s unmap %u 0 0\n", b->ctx->workload, b->phase, lnum);
	return b->inner.unmap(b->inner.ctx, lnum);
}

static int vw_map(void *c, uint32_t lnum)
{
	struct bench_fs *b = c;
	b->vs.maps++;
	return b->inner.map(b->inner.ctx, lnum);
}

static int vw_is_mapped(void *c, uint32_t lnum)
{
	struct bench_fs *b = c;
	return b->inner.is_mapped(b->inner.ctx, lnum);
}

static int vw_sync(void *c)
{
	struct bench_fs *b = c;
	return b->inner.sync ? b->inner.sync(b->inner.ctx) : 0;
}

/* Phase hook: the volume counters of the phase as extras. */
static void vol_hook(void *arg, struct bench_phase *ph, int end)
{
	struct bench_fs *b = arg;
	uint64_t now[8] = {b->vs.writes, b->vs.write_bytes, b->vs.changes, b->vs.change_bytes, b->vs.unmaps,
			   b->vs.maps, b->vs.reads, b->vs.read_bytes};
	if (!end) {
		memcpy(ph->hook_data, now, sizeof(now));
		b->phase = ph->phase;
		ph->compressor = BENCH_COMPRESSOR;
		return;
	}
	bench_phase_extra(ph, "ubifs_leb_writes", (double)(now[0] - ph->hook_data[0]));
	bench_phase_extra(ph, "ubifs_leb_write_bytes", (double)(now[1] - ph->hook_data[1]));
	bench_phase_extra(ph, "ubifs_leb_changes", (double)(now[2] - ph->hook_data[2]));
	bench_phase_extra(ph, "ubifs_leb_change_bytes", (double)(now[3] - ph->hook_data[3]));
	bench_phase_extra(ph, "ubifs_leb_unmaps", (double)(now[4] - ph->hook_data[4]));
	bench_phase_extra(ph, "ubifs_leb_reads", (double)(now[6] - ph->hook_data[6]));
	bench_phase_extra(ph, "ubifs_leb_read_bytes", (double)(now[7] - ph->hook_data[7]));
}

int bench_fs_mount(struct bench_fs *b)
{
	char msg[512];
	int ret;
	if (!b->ubi) {
		ret = ubi_attach_msg(b->dev, NULL, &b->ubi, msg, sizeof(msg));
		if (ret) {
			seterr(b, "UBI attach: %s", msg);
			return ret;
		}
	}
	ret = ubi_volume_io(b->ubi, b->vol_id, &b->inner);
	if (ret) {
		seterr(b, "UBI volume %u: %s", b->vol_id, ubi_errmsg(b->ubi));
		return ret;
	}
	b->vol = b->inner;
	b->vol.ctx = b;
	b->vol.read = vw_read;
	b->vol.write = vw_write;
	b->vol.change = vw_change;
	b->vol.unmap = vw_unmap;
	b->vol.map = vw_map;
	b->vol.is_mapped = vw_is_mapped;
	b->vol.sync = vw_sync;
	struct ubikit_mount_opts o = {.flags = 0};
	ret = ubikit_mount_ex(&b->vol, &o, &b->fs, msg, sizeof(msg));
	if (ret)
		seterr(b, "read-write mount: %s", msg);
	return ret;
}

int bench_fs_unmount(struct bench_fs *b)
{
	int ret = 0;
	if (b->fs) {
		ret = ubikit_unmount(b->fs);
		b->fs = NULL;
		if (ret)
			seterr(b, "unmount: %s", strerror(-ret));
	}
	if (b->ubi) {
		ubi_detach(b->ubi);
		b->ubi = NULL;
	}
	return ret;
}

void bench_fs_close(struct bench_fs *b)
{
	if (b->fs)
		ubikit_unmount(b->fs);
	b->fs = NULL;
	if (b->ubi)
		ubi_detach(b->ubi);
	b->ubi = NULL;
	if (b->dev)
		flash_close(b->dev);
	b->dev = NULL;
	free(b->pool);
	b->pool = NULL;
	if (b->trace)
		fclose(b->trace);
	b->trace = NULL;
	if (b->ctx && b->ctx->phase_hook_arg == b) {
		b->ctx->phase_hook = NULL;
		b->ctx->phase_hook_arg = NULL;
	}
}

int bench_fs_create_file(struct bench_fs *b, const char *path, unsigned writes, size_t wsize)
{
	struct ubikit_file *f;
	int ret = ubikit_open(b->fs, path, O_CREAT | O_EXCL | O_WRONLY, 0644, &f);
	if (ret)
		return bench_fs_failed(b, "create", path, ret);
	for (unsigned i = 0; i < writes; i++) {
		const uint8_t *p = bench_fs_data(b, wsize);
		/* a short write (the file system filled up part way) is continued,
		 * as POSIX callers do: the next call says why */
		for (size_t done = 0; done < wsize;) {
			ssize_t n = ubikit_write(f, p + done, wsize - done);
			if (n <= 0) {
				ret = bench_fs_failed(b, "write", path, n < 0 ? (int)n : -EIO);
				ubikit_close(f);
				return ret;
			}
			done += (size_t)n;
		}
		b->user_bytes += wsize;
	}
	ret = ubikit_close(f);
	if (ret)
		return bench_fs_failed(b, "close", path, ret);
	return 0;
}

int bench_fs_simple(struct bench_ctx *ctx, const char *phase, int (*steps)(struct bench_fs *))
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
	bench_phase_begin(ctx, &ph, phase, b.dev);
	ph.compressor = BENCH_COMPRESSOR;
	ret = steps(&b);
	if (!ret)
		ret = bench_fs_unmount(&b);
	if (ret)
		bench_phase_fail(ctx, &ph, b.user_bytes, "%s", b.err);
	else
		bench_phase_end(ctx, &ph, b.user_bytes);
	bench_fs_close(&b);
	return ret;
}
