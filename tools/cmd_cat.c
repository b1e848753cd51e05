/* cmd_cat — 'ubikit cat IMAGE PATH...': copy files of the UBIFS inside an
 * image to stdout (symlinks followed, inside the image). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
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

static int cat_one(struct ubikit_fs *fs, const char *path)
{
	struct ubikit_stat st;
	int ret = ubikit_stat(fs, path, &st);
	if (!ret && S_ISDIR(st.mode)) {
		tool_err("cat", "%s: is a directory", path);
		return 1;
	}
	struct ubikit_file *f = NULL;
	if (!ret)
		ret = ubikit_open(fs, path, O_RDONLY, 0, &f);
	if (ret) {
		tool_err("cat", "%s: %s", path, ubikit_errmsg(fs)[0] ? ubikit_errmsg(fs) : strerror(-ret));
		return 1;
	}
	size_t bsz = 1 << 16;
	char *buf = malloc(bsz);
	int rc = 0;
	if (!buf) {
		ubikit_close(f);
		return 1;
	}
	for (;;) {
		ssize_t n = ubikit_read(f, buf, bsz);
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
	}
	free(buf);
	ubikit_close(f);
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
	struct tool_image *img = tool_image_open_mounted("cat", argv[optind], &io);
	if (!img)
		return 1;
	int rc = 0;
	for (int i = optind + 1; i < argc; i++)
		rc |= cat_one(img->fs, argv[i]);
	tool_image_close(img);
	return rc;
}
