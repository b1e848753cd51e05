/* bench_w4 — BENCH.md W4, mount and traversal, a sequence on one device:
 * "w1" (W1 with its unmount), "w2" (mount not measured, W2, unmount), then
 * measured separately "mount" (UBI attach + read-write mount), "list+stat"
 * (read each directory completely from /, closing it, then stat every entry
 * by full path and recurse into directories), "read-all" (the same walk
 * without the stats, the entry types coming from readdir: open every file,
 * read it to EOF with a 64 KiB buffer, close), "unmount" (unmount + UBI
 * detach), and "remounts" (N x mount + unmount, with per-mount extras).
 * The walks check they saw every file and byte W1 and W2 wrote. */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench_fs.h"

struct walk {
	uint64_t files, dirs, bytes;
	uint8_t *buf;
};

static int read_file(struct bench_fs *b, const char *path, struct walk *w)
{
	struct ubikit_file *f;
	int ret = ubikit_open(b->fs, path, O_RDONLY, 0, &f);
	if (ret)
		return bench_fs_failed(b, "open", path, ret);
	ssize_t n;
	while ((n = ubikit_read(f, w->buf, 65536)) > 0)
		w->bytes += (uint64_t)n;
	ubikit_close(f);
	if (n < 0)
		return bench_fs_failed(b, "read", path, (int)n);
	w->files++;
	return 0;
}

/* One directory: names first (directory closed), then each entry. */
static int walk(struct bench_fs *b, const char *dir, int read_all, struct walk *w)
{
	struct ubikit_dir *d;
	int ret = ubikit_opendir(b->fs, dir, &d);
	if (ret)
		return bench_fs_failed(b, "opendir", dir, ret);
	size_t n = 0, cap = 0;
	struct ubikit_dirent *ents = NULL, e;
	while ((ret = ubikit_readdir(d, &e)) == 1) {
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			struct ubikit_dirent *p = realloc(ents, cap * sizeof(*ents));
			if (!p) {
				ret = -ENOMEM;
				break;
			}
			ents = p;
		}
		ents[n++] = e;
	}
	ubikit_closedir(d);
	if (ret < 0) {
		free(ents);
		return bench_fs_failed(b, "readdir", dir, ret);
	}
	w->dirs++;
	char path[1024];
	for (size_t i = 0; i < n && !ret; i++) {
		snprintf(path, sizeof(path), "%s/%s", strcmp(dir, "/") ? dir : "", ents[i].name);
		int is_dir = ents[i].type == 4; /* DT_DIR */
		if (!read_all) {
			struct ubikit_stat st;
			ret = ubikit_stat(b->fs, path, &st);
			if (ret) {
				ret = bench_fs_failed(b, "stat", path, ret);
				break;
			}
			is_dir = S_ISDIR(st.mode);
			if (!is_dir) {
				w->files++;
				w->bytes += st.size;
			}
		} else if (!is_dir) {
			ret = read_file(b, path, w);
		}
		if (!ret && is_dir)
			ret = walk(b, path, read_all, w);
	}
	free(ents);
	return ret;
}

static int check_walk(struct bench_fs *b, const struct walk *w)
{
	const struct bench_scale *s = bench_scale(b->ctx);
	uint64_t files = (uint64_t)s->w1_dirs * s->w1_files + 1;
	uint64_t bytes = (uint64_t)s->w1_dirs * s->w1_files * 4096 + (uint64_t)s->w2_writes * 65536;
	if (w->files != files || w->bytes != bytes || w->dirs != s->w1_dirs + 1) {
		snprintf(b->err, sizeof(b->err),
			 "the walk saw %llu files, %llu directories, %llu bytes; W1 + W2 wrote %llu, %u, %llu",
			 (unsigned long long)w->files, (unsigned long long)w->dirs, (unsigned long long)w->bytes,
			 (unsigned long long)files, s->w1_dirs + 1, (unsigned long long)bytes);
		return -EIO;
	}
	return 0;
}

static int w1_unmount(struct bench_fs *b)
{
	int ret = bench_w1_steps(b);
	return ret ? ret : bench_fs_unmount(b);
}

static int w2_unmount(struct bench_fs *b)
{
	int ret = bench_w2_steps(b);
	return ret ? ret : bench_fs_unmount(b);
}

static int walk_check(struct bench_fs *b, int read_all, struct walk *w)
{
	int ret = walk(b, "/", read_all, w);
	return ret ? ret : check_walk(b, w);
}

/* Run one measured step as its own record; 0 or the failure. */
#define STEP(name, user, expr)                                                                                 \
	do {                                                                                                   \
		bench_phase_begin(ctx, &ph, name, b.dev);                                                      \
		ph.compressor = BENCH_COMPRESSOR;                                                              \
		ret = (expr);                                                                                  \
		if (ret) {                                                                                     \
			bench_phase_fail(ctx, &ph, (user), "%s", b.err);                                       \
			goto out;                                                                              \
		}                                                                                              \
	} while (0)

int bench_w4(struct bench_ctx *ctx)
{
	const struct bench_scale *s = bench_scale(ctx);
	struct bench_fs b;
	struct bench_phase ph;
	struct walk w = {0};
	int ret = bench_fs_format(ctx, &b);
	if (!ret)
		ret = bench_fs_mount(&b);
	if (ret) {
		fprintf(stderr, "ubikit bench: %s: %s\n", ctx->workload, b.err);
		goto out;
	}
	w.buf = malloc(65536);
	if (!w.buf) {
		ret = -ENOMEM;
		goto out;
	}
	STEP("w1", b.user_bytes, w1_unmount(&b));
	bench_phase_end(ctx, &ph, b.user_bytes);
	b.user_bytes = 0;
	if ((ret = bench_fs_mount(&b)) != 0) {
		fprintf(stderr, "ubikit bench: %s: %s\n", ctx->workload, b.err);
		goto out;
	}
	STEP("w2", b.user_bytes, w2_unmount(&b));
	bench_phase_end(ctx, &ph, b.user_bytes);
	b.user_bytes = 0;

	STEP("mount", 0, bench_fs_mount(&b));
	bench_phase_end(ctx, &ph, 0);
	STEP("list+stat", 0, walk_check(&b, 0, &w));
	bench_phase_extra(&ph, "files", (double)w.files);
	bench_phase_extra(&ph, "directories", (double)w.dirs);
	bench_phase_end(ctx, &ph, 0);
	memset(&w, 0, offsetof(struct walk, buf));
	STEP("read-all", 0, walk_check(&b, 1, &w));
	bench_phase_extra(&ph, "files", (double)w.files);
	bench_phase_extra(&ph, "file_bytes_read", (double)w.bytes);
	bench_phase_end(ctx, &ph, 0);
	STEP("unmount", 0, bench_fs_unmount(&b));
	bench_phase_end(ctx, &ph, 0);

	struct flash_stats f0, f1;
	flash_sim_get_stats(b.dev, &f0);
	double cpu0 = bench_cpu_s();
	unsigned i;
	bench_phase_begin(ctx, &ph, "remounts", b.dev);
	ph.compressor = BENCH_COMPRESSOR;
	for (i = 0; i < s->w4_remounts && !ret; i++)
		if ((ret = bench_fs_mount(&b)) == 0)
			ret = bench_fs_unmount(&b);
	if (ret) {
		bench_phase_fail(ctx, &ph, 0, "mount + unmount %u: %s", i, b.err);
		goto out;
	}
	flash_sim_get_stats(b.dev, &f1);
	double n = s->w4_remounts;
	bench_phase_extra(&ph, "mounts", n);
	bench_phase_extra(&ph, "cpu_s_per_mount", (bench_cpu_s() - cpu0) / n);
	bench_phase_extra(&ph, "flash_bytes_read_per_mount", (double)(f1.bytes_read - f0.bytes_read) / n);
	bench_phase_extra(&ph, "flash_bytes_programmed_per_mount",
			  (double)(f1.bytes_programmed - f0.bytes_programmed) / n);
	bench_phase_extra(&ph, "sim_time_s_per_mount", (double)(f1.sim_time_ns - f0.sim_time_ns) / 1e9 / n);
	bench_phase_end(ctx, &ph, 0);
out:
	free(w.buf);
	bench_fs_close(&b);
	return ret;
}
