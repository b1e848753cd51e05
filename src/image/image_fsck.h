/* image_fsck — the image layer's fsck steps (image_fsck.c: the check;
 * image_fsck_repair.c: the repair), behind ubikit_fsck_image. */
#ifndef UBIKIT_IMAGE_IMAGE_FSCK_H
#define UBIKIT_IMAGE_IMAGE_FSCK_H
#include <stddef.h>
#include <ubikit/fsck.h>

/* Check only (read-only open); *mounted = the file system mounted. Returns
 * a UBIKIT_FSCK_* code (CLEAN, LEFT, OPERROR). */
int image_fsck_check(const char *path, const struct ubikit_image_opts *o, struct ubikit_fsck_report *rep,
		     int *mounted, char *msg, size_t msglen);
/* Repair after a check found problems (rep holds them). Returns CORRECTED,
 * LEFT or OPERROR. */
int image_fsck_repair(const char *path, const struct ubikit_image_opts *o, enum ubikit_fsck_mode mode,
		      struct ubikit_fsck_report *rep, char *msg, size_t msglen);

#endif
