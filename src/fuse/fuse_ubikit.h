/* fuse_ubikit — the FUSE front end: serves a mounted struct ubikit_fs
 * through libfuse3's low-level API, read-only, with inode numbers passed
 * straight through (FUSE's root 1 is UBIFS's root 1, so forget needs no
 * bookkeeping). Single-threaded session loop: calls into the fs are
 * serialized by construction. */
#ifndef UBIKIT_FUSE_UBIKIT_H
#define UBIKIT_FUSE_UBIKIT_H
#include <stdbool.h>

struct ubikit_fs;

struct fuse_ubikit_opts {
	bool foreground;       /* stay in the foreground (else daemonize after mounting) */
	bool debug;            /* libfuse debug output (implies foreground) */
	const char *fsname;    /* shown in /proc/mounts (e.g. the image path) */
	const char *extra_opts; /* more -o options for FUSE, e.g. "allow_other" (may be NULL) */
	/* After a successful fsync/fsyncdir: make it durable below the file
	 * system (ubikit_image_flush; may be NULL). */
	int (*flush)(void *arg);
	void *flush_arg;
};

/* Mount fs at mountpoint and serve requests until unmounted (fusermount3
 * -u) or interrupted. Returns 0 on a clean unmount, or a negative errno /
 * -EIO when mounting failed (message printed on stderr). */
int fuse_ubikit_main(struct ubikit_fs *fs, const char *mountpoint, const struct fuse_ubikit_opts *o);

#endif
