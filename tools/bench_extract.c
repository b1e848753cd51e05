/* bench_extract — workload "extract": the read tools on a big image.
 *
 * Preparation (not measured): a tree with /big (100 MiB of SplitMix64
 * bytes, seed 1, incompressible) and /many/fNNNNN (10000 files of 512
 * SplitMix64 bytes, seed 2), made into an image by Debian's mkfs.ubifs
 * (-m 2048 -e 129024 -c 1200 -x lzo) and ubinize (-p 128KiB -m 2048 -s 512,
 * volume 1200 LEBs), as a user brings it. Needs mkfs.ubifs and ubinize on
 * PATH (or UBIKIT_BENCH_EXTRACT_IMAGE=path of an image to use instead).
 *
 * Phases: "mount" (detect, attach UBI read-only, mount UBIFS: what every
 * read command pays first), "extract" (the whole tree into a scratch
 * directory, as 'ubikit extract' does), then the same two for the bare
 * UBIFS image ("mount-bare", "extract-bare"). Flash counters are those of
 * the image file read through the simulator's file backend; peak RSS is the
 * process's, so "extract" includes "mount". Then "fsck": 'ubikit fsck -n' of
 * the same image (its own open and mount included), to compare a check with
 * a read-only mount plus extract; "lebs_scanned" says how many LEBs are in
 * use, so flash_bytes_read / (lebs_scanned * LEB size) is how many times the
 * check read them. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"
#include "tool_extract.h"
#include "tool_image.h"
#include "ubikit/fsck.h"
#include "image/image.h"
#include "util/util_prng.h"

#define BIG_BYTES (100ull << 20)
#define MANY 10000
#define MANY_BYTES 512

static int write_file(const char *path, struct util_prng *r, uint64_t len, uint8_t *buf, size_t bufsz)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	int ret = 0;
	while (len && !ret) {
		size_t n = len < bufsz ? (size_t)len : bufsz;
		util_prng_fill(r, buf, n);
		if (write(fd, buf, n) != (ssize_t)n)
			ret = -EIO;
		len -= n;
	}
	if (close(fd) && !ret)
		ret = -errno;
	return ret;
}

static int make_tree(const char *root)
{
	char p[4400];
	size_t bufsz = 1 << 20;
	uint8_t *buf = malloc(bufsz);
	if (!buf)
		return -ENOMEM;
	struct util_prng r;
	int ret = mkdir(root, 0755) ? -errno : 0;
	if (!ret) {
		snprintf(p, sizeof(p), "%s/big", root);
		util_prng_seed(&r, 1);
		ret = write_file(p, &r, BIG_BYTES, buf, bufsz);
	}
	if (!ret) {
		snprintf(p, sizeof(p), "%s/many", root);
		ret = mkdir(p, 0755) ? -errno : 0;
	}
	util_prng_seed(&r, 2);
	for (int i = 0; i < MANY && !ret; i++) {
		snprintf(p, sizeof(p), "%s/many/f%05d", root, i);
		ret = write_file(p, &r, MANY_BYTES, buf, bufsz);
	}
	free(buf);
	return ret;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

static void rm_rf(const char *path)
{
	nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static int run_cmd(const char *cmd)
{
	int st = system(cmd);
	return st == 0 ? 0 : -ECHILD;
}

/* 'ubikit fsck -n' of the image: open, read-only mount, the whole check */
static int measure_fsck(struct bench_ctx *ctx, const char *image, struct tool_image_opts *io, const char *suffix)
{
	char name[64];
	struct bench_phase ph;
	struct ubikit_image *img = NULL;
	char msg[1024];
	snprintf(name, sizeof(name), "fsck%s", suffix);
	bench_phase_begin(ctx, &ph, name, NULL);
	int ret = tool_image_open(image, io, true, &img, msg, sizeof(msg));
	if (!ret && (ret = tool_image_mount(img)) != 0)
		snprintf(msg, sizeof(msg), "%s", img->err);
	if (ret) {
		fprintf(stderr, "ubikit bench extract: fsck: %s\n", msg);
		tool_image_close(img);
		return ret;
	}
	struct ubikit_fsck_report rep;
	ubikit_fsck_report_init(&rep);
	ret = ubikit_fsck_fs(ubikit_image_fs(img), &rep);
	ph.dev = img->flash;
	ph.compressor = "lzo";
	bench_phase_extra(&ph, "problems", (double)rep.count);
	bench_phase_extra(&ph, "lebs_scanned", (double)rep.lebs_scanned);
	bench_phase_extra(&ph, "file_bytes", (double)rep.bytes_read);
	bench_phase_end(ctx, &ph, 0);
	if (!ret && rep.count) {
		fprintf(stderr, "ubikit bench extract: fsck found %zu problems (first: %s)\n", rep.count,
			rep.problems[0].msg);
		ret = -EIO;
	}
	ubikit_fsck_report_free(&rep);
	tool_image_close(img);
	return ret;
}

static int measure(struct bench_ctx *ctx, const char *image, const char *outdir, const char *suffix)
{
	struct tool_image_opts io;
	tool_image_opts_init(&io);
	struct ubikit_image *img = NULL;
	char msg[1024], name[64];
	struct bench_phase ph;
	snprintf(name, sizeof(name), "mount%s", suffix);
	/* The flash device exists only once the image is open: counters of
	 * the mount phase start at zero on it. */
	bench_phase_begin(ctx, &ph, name, NULL);
	int ret = tool_image_open(image, &io, true, &img, msg, sizeof(msg));
	if (!ret && (ret = tool_image_mount(img)) != 0)
		snprintf(msg, sizeof(msg), "%s", img->err);
	if (ret) {
		fprintf(stderr, "ubikit bench extract: %s\n", msg);
		tool_image_close(img);
		return ret;
	}
	ph.dev = img->flash;
	ph.compressor = "lzo";
	bench_phase_end(ctx, &ph, 0);

	snprintf(name, sizeof(name), "extract%s", suffix);
	bench_phase_begin(ctx, &ph, name, img->flash);
	ph.compressor = "lzo";
	/* as 'ubikit extract' does: workers on their own mounts of the image */
	struct tool_extract_reopen again = {.path = image, .io = &io};
	struct tool_extract_opts xo = {.open_fs = tool_extract_reopen, .close_fs = tool_extract_reclose, .open_arg = &again};
	const char *th = getenv("UBIKIT_EXTRACT_THREADS");
	if (th)
		xo.threads = atoi(th);
	struct tool_extract_stats s;
	ret = tool_extract(ubikit_image_fs(img), "/", outdir, &xo, &s);
	bench_phase_extra(&ph, "files", (double)s.files);
	bench_phase_extra(&ph, "file_bytes", (double)s.bytes);
	bench_phase_extra(&ph, "directories", (double)s.dirs);
	bench_phase_end(ctx, &ph, 0);
	tool_image_close(img);
	if (!ret)
		ret = measure_fsck(ctx, image, &io, suffix);
	if (!ret && (s.files != MANY + 1 || s.bytes != BIG_BYTES + (uint64_t)MANY * MANY_BYTES) &&
	    !getenv("UBIKIT_BENCH_EXTRACT_IMAGE")) {
		fprintf(stderr, "ubikit bench extract: extracted %llu files / %llu bytes, expected %d / %llu\n",
			(unsigned long long)s.files, (unsigned long long)s.bytes, MANY + 1,
			(unsigned long long)(BIG_BYTES + (uint64_t)MANY * MANY_BYTES));
		ret = -EIO;
	}
	return ret;
}

int bench_extract(struct bench_ctx *ctx)
{
	const char *tmp = getenv("TMPDIR");
	char dir[4096], tree[4200], bare[4200], ubi[4200], ini[4200], out[4200], cmd[16384];
	snprintf(dir, sizeof(dir), "%s/ubikit-bench-extract-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
	if (!mkdtemp(dir))
		return -errno;
	snprintf(tree, sizeof(tree), "%s/tree", dir);
	snprintf(bare, sizeof(bare), "%s/fs.ubifs", dir);
	snprintf(ubi, sizeof(ubi), "%s/fs.ubi", dir);
	snprintf(ini, sizeof(ini), "%s/ubinize.ini", dir);
	int ret = 0;
	const char *given = getenv("UBIKIT_BENCH_EXTRACT_IMAGE");
	if (given) {
		snprintf(out, sizeof(out), "%s/out", dir);
		ret = measure(ctx, given, out, "");
		rm_rf(dir);
		return ret;
	}
	if (run_cmd("command -v mkfs.ubifs >/dev/null && command -v ubinize >/dev/null")) {
		fprintf(stderr, "ubikit bench extract: needs mkfs.ubifs and ubinize (mtd-utils) on PATH, or "
				"UBIKIT_BENCH_EXTRACT_IMAGE=IMAGE\n");
		rm_rf(dir);
		return -ENOENT;
	}
	ret = make_tree(tree);
	if (!ret) {
		snprintf(cmd, sizeof(cmd), "mkfs.ubifs -r '%s' -m 2048 -e 129024 -c 1200 -x lzo -o '%s'", tree, bare);
		ret = run_cmd(cmd);
	}
	if (!ret) {
		FILE *f = fopen(ini, "w");
		if (!f) {
			ret = -errno;
		} else {
			fprintf(f, "[rootfs]\nmode=ubi\nimage=%s\nvol_id=0\nvol_size=%llu\nvol_type=dynamic\n"
				   "vol_name=rootfs\nvol_flags=autoresize\n",
				bare, 1200ull * 129024);
			fclose(f);
			snprintf(cmd, sizeof(cmd), "ubinize -o '%s' -p 128KiB -m 2048 -s 512 '%s' 2>/dev/null", ubi, ini);
			ret = run_cmd(cmd);
		}
	}
	rm_rf(tree);
	if (!ret) {
		snprintf(out, sizeof(out), "%s/out-ubi", dir);
		ret = measure(ctx, ubi, out, "");
		rm_rf(out);
	}
	if (!ret) {
		snprintf(out, sizeof(out), "%s/out-bare", dir);
		ret = measure(ctx, bare, out, "-bare");
	}
	rm_rf(dir);
	return ret;
}
