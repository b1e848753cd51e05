/* cmd_mount — 'ubikit mount [-o OPTS] [-f] IMAGE MOUNTPOINT': serve the UBIFS
 * of an image through FUSE (src/fuse), read-write like mount(8) unless
 * '-o ro'. Background by default; unmount with 'fusermount3 -u
 * MOUNTPOINT', which ends with the final commit and the image's way back
 * to disk (a bare UBIFS image is written back then). */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ubikit/ubikit.h>

#include "commands.h"
#include "tool_image.h"
#ifdef UBIKIT_HAVE_FUSE
#include "fuse/fuse_ubikit.h"
#endif

static void mount_usage(FILE *out)
{
	fprintf(out, "usage: ubikit mount [-o OPTS] [-f] [-d] [image options] IMAGE MOUNTPOINT\n"
		     "Mount the UBIFS of IMAGE at MOUNTPOINT through FUSE, read-write unless -o ro.\n"
		     "Unmount with: fusermount3 -u MOUNTPOINT (commits; the image is complete after it)\n"
		     "  -o OPTS           mount options: ro (read-only), rw (the default), allow_other,\n"
		     "                    compr=none|lzo|zlib|zstd (new data; default: the superblock's);\n"
		     "                    other FUSE options are passed on\n"
		     "  -f, --foreground  stay in the foreground\n"
		     "  -d, --debug       FUSE debug output (implies -f)\n"
		     "  -h, --help        this help\n" TOOL_IMAGE_OPTS_HELP);
}

#ifdef UBIKIT_HAVE_FUSE
static int mount_flush(void *img)
{
	return ubikit_image_flush(img);
}
#endif

int cmd_mount(int argc, char **argv)
{
	static const struct option lopts[] = {{"foreground", no_argument, NULL, 'f'},
					      {"debug", no_argument, NULL, 'd'},
					      {"options", required_argument, NULL, 'o'},
					      {"help", no_argument, NULL, 'h'},
					      TOOL_IMAGE_LONGOPTS,
					      {NULL, 0, NULL, 0}};
	struct tool_image_opts io;
	tool_image_opts_init(&io);
	bool fg = false, debug = false, ro = false;
	char extra[512] = "";
	int opt;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "fdo:hv", lopts, NULL)) != -1) {
		int r = tool_image_opt(&io, opt, optarg, "mount");
		if (r < 0)
			return 2;
		if (r)
			continue;
		switch (opt) {
		case 'f': fg = true; break;
		case 'd': debug = true; break;
		case 'o': {
			/* ro/rw choose how the image is opened; the last one wins */
			char *copy = strdup(optarg), *save = NULL;
			if (!copy)
				return 1;
			for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
				if (!strcmp(t, "ro") || !strcmp(t, "rw")) {
					ro = !strcmp(t, "ro");
					continue;
				}
				if (!strncmp(t, "compr=", 6)) {
					static const char *const names[] = {"none", "lzo", "zlib", "zstd"};
					unsigned c = 0;
					while (c < 4 && strcmp(t + 6, names[c]))
						c++;
					if (c == 4) {
						tool_err("mount", "-o %s: unknown compressor (expected none, lzo, zlib or zstd)", t);
						free(copy);
						return 2;
					}
					io.img.mount_flags = (io.img.mount_flags & ~(unsigned)UBIKIT_MOUNT_COMPR_MASK) | ((c + 1) << 8);
					continue;
				}
				size_t l = strlen(extra);
				snprintf(extra + l, sizeof(extra) - l, "%s%s", l ? "," : "", t);
			}
			free(copy);
			break;
		}
		case 'h': mount_usage(stdout); return 0;
		default: mount_usage(stderr); return 2;
		}
	}
	if (argc - optind != 2) {
		mount_usage(stderr);
		return 2;
	}
#ifndef UBIKIT_HAVE_FUSE
	tool_err("mount", "this ubikit was built without FUSE support");
	return 1;
#else
	if (access("/dev/fuse", R_OK | W_OK)) {
		tool_err("mount", "/dev/fuse: %s (is the fuse module loaded?)", strerror(errno));
		return 1;
	}
	/* A mount point that cannot be used is found before the image is
	 * opened (read-write opening and closing would commit). */
	struct stat mst;
	if (stat(argv[optind + 1], &mst)) {
		tool_err("mount", "mount point %s: %s", argv[optind + 1], strerror(errno));
		return 1;
	}
	if (!S_ISDIR(mst.st_mode)) {
		tool_err("mount", "mount point %s is not a directory", argv[optind + 1]);
		return 1;
	}
	struct ubikit_image *img = ro ? tool_image_open_mounted("mount", argv[optind], &io)
				      : tool_image_open_rw("mount", argv[optind], &io);
	if (!img)
		return 1;
	char *abs = realpath(argv[optind], NULL);
	struct fuse_ubikit_opts fo = {
		.foreground = fg, .debug = debug, .fsname = abs ? abs : argv[optind], .extra_opts = extra,
		.flush = mount_flush, .flush_arg = img};
	int ret = fuse_ubikit_main(ubikit_image_fs(img), argv[optind + 1], &fo);
	free(abs);
	/* the final commit and the image's way to disk */
	if (tool_image_close_cmd("mount", img))
		return 1;
	if (ret) {
		tool_err("mount", "FUSE mount at %s failed or ended with an error", argv[optind + 1]);
		return 1;
	}
	return 0;
#endif
}
