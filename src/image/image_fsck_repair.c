/* image_fsck_repair — repairing an image after the check found problems
 * (ubikit_fsck_image with -a / -y). Not written yet: nothing is changed
 * and the problems are left (4). */
#include <errno.h>
#include <stdio.h>

#include "fs/fs_fsck.h"
#include "image/image_fsck.h"

int image_fsck_repair(const char *path, const struct ubikit_image_opts *o, enum ubikit_fsck_mode mode,
		      struct ubikit_fsck_report *rep, char *msg, size_t msglen)
{
	(void)path, (void)o, (void)mode;
	if (msg && msglen)
		snprintf(msg, msglen, "repair is not implemented yet: nothing was changed");
	fs_fsck_add(rep, 0, -1, -1, -1, 0, NULL, "repair is not implemented yet: nothing was changed");
	return UBIKIT_FSCK_LEFT;
}
