/* image_fsck — ubikit_fsck_image (include/ubikit/fsck.h): the whole
 * check of an image file or device, as `ubikit fsck` runs it:
 *  1. open it read-only (check) and attach UBI: a failure is an
 *     operational error (8), reported with its place;
 *  2. the superblock alone: a bad one is refused (8), the image untouched
 *     (as fsck.ubifs: nothing can be trusted without it);
 *  3. mount read-only (master, log and buds, replay): a failure is a
 *     problem left (4) or, when repairing, a reason to rebuild;
 *  4. ubikit_fsck_fs on the mounted file system.
 * Repairs are image_fsck_repair.c. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <ubikit/fsck.h>
#include <ubikit/image.h>

#include "fs/fs_fsck.h"
#include "image/image.h"
#include "image/image_fsck.h"

static int operror(struct ubikit_fsck_report *rep, char *msg, size_t msglen, const char *what, const char *why)
{
	if (msg && msglen)
		snprintf(msg, msglen, "%s: %s", what, why);
	fs_fsck_add(rep, UBIKIT_FSCK_FATAL, -1, -1, -1, 0, NULL, "%s: %s", what, why);
	return UBIKIT_FSCK_OPERROR;
}

int image_fsck_check(const char *path, const struct ubikit_image_opts *o, struct ubikit_fsck_report *rep,
		     int *mounted, char *msg, size_t msglen)
{
	struct ubikit_image_opts io;
	if (o)
		io = *o;
	else
		ubikit_image_opts_init(&io);
	io.flags &= ~(unsigned)UBIKIT_IMAGE_RDWR;
	io.flags |= UBIKIT_IMAGE_NO_MOUNT;
	*mounted = 0;
	struct ubikit_image *img = NULL;
	char m[1024] = "";
	int err = ubikit_image_open(path, &io, &img, m, sizeof(m));
	if (err)
		return operror(rep, msg, msglen, "cannot open the image", m[0] ? m : strerror(-err));
	if (!img->have_vol) {
		ubikit_image_close(img);
		return operror(rep, msg, msglen, path, "no UBIFS volume");
	}
	err = fs_fsck_read_sb(&img->vol, m, sizeof(m));
	if (err) {
		char what[1200];
		snprintf(what, sizeof(what), "%s: bad superblock (LEB 0)", path);
		ubikit_image_close(img);
		return operror(rep, msg, msglen, what,
			       strncat(m, "; refused, the image is left untouched", sizeof(m) - strlen(m) - 1));
	}
	err = ubikit_image_mount(img, 0);
	if (err) {
		fs_fsck_add(rep, UBIKIT_FSCK_FATAL, -1, -1, -1, 0, NULL, "cannot mount the file system: %s",
			    ubikit_image_errmsg(img));
		ubikit_image_close(img);
		return UBIKIT_FSCK_LEFT;
	}
	*mounted = 1;
	err = ubikit_fsck_fs(ubikit_image_fs(img), rep);
	ubikit_image_close(img);
	if (err)
		return operror(rep, msg, msglen, "the check could not run", strerror(-err));
	return rep->count ? UBIKIT_FSCK_LEFT : UBIKIT_FSCK_CLEAN;
}

int ubikit_fsck_image(const char *path, const struct ubikit_image_opts *o, enum ubikit_fsck_mode mode,
		      struct ubikit_fsck_report *rep, char *msg, size_t msglen)
{
	if (!path || !rep)
		return UBIKIT_FSCK_USAGE;
	if (msg && msglen)
		msg[0] = '\0';
	int mounted;
	int rc = image_fsck_check(path, o, rep, &mounted, msg, msglen);
	if (rc != UBIKIT_FSCK_LEFT || mode == UBIKIT_FSCK_CHECK)
		return rc;
	return image_fsck_repair(path, o, mode, rep, msg, msglen);
}
