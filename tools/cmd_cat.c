/* cmd_cat — 'ubikit cat IMAGE PATH...': copy files of the UBIFS inside an
 * image to stdout (symlinks followed, inside the image). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <ubikit/ubikit.h>

#include "commands.h"
#include "tool_image.h"

static void cat_usage(FILE *out)
{
	fprintf(out, "usage: ubikit cat [image options] IMAGE PATH...\n"
		     "Write the files PATH of the UBIFS in IMAGE to stdout (read-only).\n"
		     "  -h, --help  this help\n" TOOL_IMAGE_OPTS_HELP);
}

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Where stdout goes, for holes: a regular file (not O_APPEND) can get a
 * hole by seeking past its end; anything else gets the zeros written. */
struct out_state {
	bool seekable;
	char *zeros;
};

/* A hole of len bytes at the current output position. */
static int put_hole(struct out_state *o, uint64_t len)
{
	if (o->seekable) {
		struct stat st;
		off_t pos = lseek(STDOUT_FILENO, 0, SEEK_CUR);
		/* Only past the end of the output: inside it, old bytes must be overwritten. */
		if (pos >= 0 && !fstat(STDOUT_FILENO, &st) && pos >= st.st_size) {
			off_t to = pos + (off_t)len;
			if (lseek(STDOUT_FILENO, to, SEEK_SET) == to)
				return ftruncate(STDOUT_FILENO, to) ? -errno : 0;
		}
	}
	while (len) {
		size_t n = len < (1u << 16) ? (size_t)len : (1u << 16);
		int w = write_all(STDOUT_FILENO, o->zeros, n);
		if (w)
			return w;
		len -= n;
	}
	return 0;
}

static int cat_one(struct ubikit_fs *fs, const char *path, struct out_state *o)
{
	struct ubikit_stat st;
	int ret = ubikit_stat(fs, path, &st);
	if (!ret && S_ISDIR(st.mode)) {
		tool_err("cat", "%s: is a directory", path);
		return 1;
	}
	if (ret) {
		tool_err("cat", "%s: %s", path, ubikit_errmsg(fs)[0] ? ubikit_errmsg(fs) : strerror(-ret));
		return 1;
	}
	size_t bsz = 1 << 16;
	char *buf = malloc(bsz);
	if (!buf)
		return 1;
	int rc = 0;
	uint64_t off = 0;
	/* Walk the data that exists; holes are skipped without reading them. */
	while (off < st.size) {
		uint64_t data;
		int r = S_ISREG(st.mode) ? ubikit_seek_data_ino(fs, st.ino, off, &data) : (data = off, 0);
		if (r == -ENXIO)
			data = st.size;
		else if (r) {
			tool_err("cat", "%s: %s", path, ubikit_errmsg(fs)[0] ? ubikit_errmsg(fs) : strerror(-r));
			rc = 1;
			break;
		}
		if (data > off) {
			int w = put_hole(o, data - off);
			if (w) {
				tool_err("cat", "writing stdout: %s", strerror(-w));
				rc = 1;
				break;
			}
			off = data;
			continue;
		}
		ssize_t n = ubikit_pread_ino(fs, st.ino, buf, bsz, off);
		if (n < 0) {
			tool_err("cat", "%s: %s", path, ubikit_errmsg(fs)[0] ? ubikit_errmsg(fs) : strerror((int)-n));
			rc = 1;
			break;
		}
		if (n == 0)
			break;
		int w = write_all(STDOUT_FILENO, buf, (size_t)n);
		if (w) {
			tool_err("cat", "writing stdout: %s", strerror(-w));
			rc = 1;
			break;
		}
		off += (uint64_t)n;
	}
	free(buf);
	return rc;
}

int cmd_cat(int argc, char **argv)
{
	static const struct option lopts[] = {{"help", no_argument, NULL, 'h'}, TOOL_IMAGE_LONGOPTS, {NULL, 0, NULL, 0}};
	struct tool_image_opts io;
	tool_image_opts_init(&io);
	int opt;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "hv", lopts, NULL)) != -1) {
		int r = tool_image_opt(&io, opt, optarg, "cat");
		if (r < 0)
			return 2;
		if (r)
			continue;
		if (opt == 'h') {
			cat_usage(stdout);
			return 0;
		}
		cat_usage(stderr);
		return 2;
	}
	if (argc - optind < 2) {
		cat_usage(stderr);
		return 2;
	}
	struct ubikit_image *img = tool_image_open_mounted("cat", argv[optind], &io);
	if (!img)
		return 1;
	struct out_state o = {false, calloc(1, 1u << 16)};
	if (!o.zeros) {
		tool_image_close(img);
		return 1;
	}
	struct stat os;
	int fl = fcntl(STDOUT_FILENO, F_GETFL);
	o.seekable = !fstat(STDOUT_FILENO, &os) && S_ISREG(os.st_mode) && fl >= 0 && !(fl & O_APPEND);
	int rc = 0;
	for (int i = optind + 1; i < argc; i++)
		rc |= cat_one(ubikit_image_fs(img), argv[i], &o);
	free(o.zeros);
	tool_image_close(img);
	return rc;
}
