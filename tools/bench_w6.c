/* bench_w6 — BENCH.md W6, many files in one directory: mkdir /many (not
 * measured), then records "create" (/many/f00000../f04999, each created
 * and closed at once, empty), "stat" (stat /many/f<order[k]> with order a
 * Fisher-Yates shuffle of 0..4999 by SplitMix64 seed 6: for i = 4999..1,
 * j = next() mod (i+1), swap), "readdir" (open /many, read all 5000
 * entries, close) and "unmount". At full scale the shuffle is checked
 * against BENCH.md's (starts 1696, 1915, 3235, ..., ends 592). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench_fs.h"
#include "util/util_prng.h"

static const unsigned first_order[8] = {1696, 1915, 3235, 1645, 629, 2396, 3174, 2473};

static int create_all(struct bench_fs *b, unsigned n)
{
	char path[32];
	for (unsigned i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "/many/f%05u", i);
		struct ubikit_file *f;
		int ret = ubikit_open(b->fs, path, O_CREAT | O_EXCL | O_WRONLY, 0644, &f);
		if (ret)
			return bench_fs_failed(b, "create", path, ret);
		ret = ubikit_close(f);
		if (ret)
			return bench_fs_failed(b, "close", path, ret);
	}
	return 0;
}

static int stat_all(struct bench_fs *b, const unsigned *order, unsigned n)
{
	char path[32];
	for (unsigned k = 0; k < n; k++) {
		snprintf(path, sizeof(path), "/many/f%05u", order[k]);
		struct ubikit_stat st;
		int ret = ubikit_stat(b->fs, path, &st);
		if (ret)
			return bench_fs_failed(b, "stat", path, ret);
		if (st.size) {
			snprintf(b->err, sizeof(b->err), "stat %s: size %llu, created empty", path,
				 (unsigned long long)st.size);
			return -EIO;
		}
	}
	return 0;
}

static int readdir_all(struct bench_fs *b, unsigned n)
{
	struct ubikit_dir *d;
	int ret = ubikit_opendir(b->fs, "/many", &d);
	if (ret)
		return bench_fs_failed(b, "opendir", "/many", ret);
	struct ubikit_dirent e;
	unsigned count = 0;
	while ((ret = ubikit_readdir(d, &e)) == 1)
		count++;
	ubikit_closedir(d);
	if (ret < 0)
		return bench_fs_failed(b, "readdir", "/many", ret);
	if (count != n) {
		snprintf(b->err, sizeof(b->err), "readdir /many: %u entries, %u were created", count, n);
		return -EIO;
	}
	return 0;
}

int bench_w6(struct bench_ctx *ctx)
{
	unsigned n = bench_scale(ctx)->w6_files;
	struct bench_fs b;
	struct bench_phase ph;
	unsigned *order = malloc(n * sizeof(*order));
	int ret = order ? bench_fs_format(ctx, &b) : -ENOMEM;
	if (!ret)
		ret = bench_fs_mount(&b);
	if (!ret && (ret = ubikit_mkdir(b.fs, "/many", 0755)) != 0)
		bench_fs_failed(&b, "mkdir", "/many", ret);
	if (ret) {
		fprintf(stderr, "ubikit bench: %s: %s\n", ctx->workload, order ? b.err : "out of memory");
		goto out;
	}
	for (unsigned i = 0; i < n; i++)
		order[i] = i;
	struct util_prng r;
	util_prng_seed(&r, 6);
	for (unsigned i = n - 1; i >= 1; i--) {
		unsigned j = (unsigned)util_prng_below(&r, (uint64_t)i + 1), t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	if (n == 5000)
		for (unsigned k = 0; k < 9; k++)
			if (order[k < 8 ? k : n - 1] != (k < 8 ? first_order[k] : 592u)) {
				fprintf(stderr, "ubikit bench: %s: the shuffle differs from BENCH.md's (PRNG broken)\n",
					ctx->workload);
				ret = -EPROTO;
				goto out;
			}

	bench_phase_begin(ctx, &ph, "create", b.dev);
	ph.compressor = BENCH_COMPRESSOR;
	if ((ret = create_all(&b, n)) != 0) {
		bench_phase_fail(ctx, &ph, 0, "%s", b.err);
		goto out;
	}
	bench_phase_extra(&ph, "files", n);
	bench_phase_end(ctx, &ph, 0);
	bench_phase_begin(ctx, &ph, "stat", b.dev);
	ph.compressor = BENCH_COMPRESSOR;
	if ((ret = stat_all(&b, order, n)) != 0) {
		bench_phase_fail(ctx, &ph, 0, "%s", b.err);
		goto out;
	}
	bench_phase_end(ctx, &ph, 0);
	bench_phase_begin(ctx, &ph, "readdir", b.dev);
	ph.compressor = BENCH_COMPRESSOR;
	if ((ret = readdir_all(&b, n)) != 0) {
		bench_phase_fail(ctx, &ph, 0, "%s", b.err);
		goto out;
	}
	bench_phase_extra(&ph, "entries", n);
	bench_phase_end(ctx, &ph, 0);
	bench_phase_begin(ctx, &ph, "unmount", b.dev);
	ph.compressor = BENCH_COMPRESSOR;
	if ((ret = bench_fs_unmount(&b)) != 0) {
		bench_phase_fail(ctx, &ph, 0, "%s", b.err);
		goto out;
	}
	bench_phase_end(ctx, &ph, 0);
out:
	if (order)
		bench_fs_close(&b);
	free(order);
	return ret;
}
