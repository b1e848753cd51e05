/* bench_w1 — BENCH.md W1, small files: mkdir /d00../d09, then 200 files
 * /dDD/fIII of 4096 B each (one write call) per directory, then unmount
 * (the "sync"). One record, "files+unmount"; user data 8 MiB. */
#include <stdio.h>

#include "bench_fs.h"

int bench_w1_steps(struct bench_fs *b)
{
	const struct bench_scale *s = bench_scale(b->ctx);
	char path[64];
	for (unsigned d = 0; d < s->w1_dirs; d++) {
		snprintf(path, sizeof(path), "/d%02u", d);
		int ret = ubikit_mkdir(b->fs, path, 0755);
		if (ret)
			return bench_fs_failed(b, "mkdir", path, ret);
	}
	for (unsigned d = 0; d < s->w1_dirs; d++)
		for (unsigned i = 0; i < s->w1_files; i++) {
			snprintf(path, sizeof(path), "/d%02u/f%03u", d, i);
			int ret = bench_fs_create_file(b, path, 1, 4096);
			if (ret)
				return ret;
		}
	return 0;
}

int bench_w1(struct bench_ctx *ctx)
{
	return bench_fs_simple(ctx, "files+unmount", bench_w1_steps);
}
