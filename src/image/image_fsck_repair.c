/* image_fsck_repair — repairing an image after the check found problems
 * (ubikit_fsck_image with -a / -y), gentlest first:
 *  1. in place (fs_fsck_fix -> ubifs_fsck_fix: what the index can mend,
 *     nothing lost), when a dry run on a read-only mount shows that it
 *     covers every problem of the check; then checked again from scratch:
 *     clean means corrected, and nothing else was touched;
 *  2. else the volume is rebuilt from the nodes found on flash
 *     (fs_fsck_rebuild -> ubifs_rebuild), then checked again from scratch;
 *     only a clean second check counts as corrected. -a first runs the
 *     rebuild without writing and goes on only when nothing would be lost.
 * A rebuild cannot tell a file whose deletion was committed (and its
 * deletion node garbage-collected since) from a live one, so it is the
 * last resort. Bad superblocks and UBI that does not attach never get here. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <ubikit/image.h>

#include "fs/fs_fsck.h"
#include "image/image.h"
#include "image/image_fsck.h"

static int open_vol(const char *path, const struct ubikit_image_opts *o, int rdwr, struct ubikit_image **img,
		    char *msg, size_t msglen)
{
	struct ubikit_image_opts io;
	if (o)
		io = *o;
	else
		ubikit_image_opts_init(&io);
	io.flags |= UBIKIT_IMAGE_NO_MOUNT;
	if (rdwr)
		io.flags |= UBIKIT_IMAGE_RDWR;
	else
		io.flags &= ~(unsigned)UBIKIT_IMAGE_RDWR;
	return ubikit_image_open(path, &io, img, msg, msglen);
}

/* the second check, from scratch: its problems join rep ("after the repair") */
static int check_again(const char *path, const struct ubikit_image_opts *o, struct ubikit_fsck_report *rep,
		       char *msg, size_t msglen)
{
	struct ubikit_fsck_report again;
	ubikit_fsck_report_init(&again);
	int mounted;
	int rc = image_fsck_check(path, o, &again, &mounted, msg, msglen);
	for (size_t i = 0; i < again.count; i++)
		fs_fsck_add(rep, again.problems[i].flags, again.problems[i].peb, again.problems[i].lnum,
			    again.problems[i].offs, again.problems[i].inum, again.problems[i].path,
			    "after the repair: %s", again.problems[i].msg);
	rep->inodes = again.inodes;
	rep->dentries = again.dentries;
	rep->bytes_read = again.bytes_read;
	ubikit_fsck_report_free(&again);
	return rc;
}

/* Do the in-place fixes (a dry run on a read-only mount) cover every
 * problem the check found? Only then is the image opened for writing: a
 * read-write mount of a damaged file system (recovery, commit) is itself a
 * write, and -a promises none unless it repairs without loss. */
static int in_place_covers(const char *path, const struct ubikit_image_opts *io_ro,
			   const struct ubikit_fsck_report *rep)
{
	struct ubikit_image *img = NULL;
	char m[1024] = "";
	if (ubikit_image_open(path, io_ro, &img, m, sizeof(m)) || !ubikit_image_fs(img)) {
		if (img)
			ubikit_image_close(img);
		return 0;
	}
	struct ubikit_fsck_report would;
	ubikit_fsck_report_init(&would);
	unsigned long n = 0;
	int err = fs_fsck_fix(ubikit_image_fs(img), 1, &would, &n);
	ubikit_image_close(img);
	int covers = !err && n > 0 && rep->count > 0;
	for (size_t i = 0; covers && i < rep->count; i++) {
		const struct ubikit_fsck_problem *p = &rep->problems[i];
		int found = 0;
		for (size_t j = 0; !found && j < would.count; j++)
			found = p->inum && would.problems[j].inum == p->inum;
		if (!found || (p->flags & UBIKIT_FSCK_FATAL))
			covers = 0;
	}
	ubikit_fsck_report_free(&would);
	return covers;
}

/* Step 1. Returns CORRECTED when the in-place fixes left a clean file
 * system, OPERROR when it failed, else -1: go on with the rebuild. */
static int repair_in_place(const char *path, const struct ubikit_image_opts *o, struct ubikit_fsck_report *rep,
			   char *msg, size_t msglen)
{
	struct ubikit_image_opts io;
	if (o)
		io = *o;
	else
		ubikit_image_opts_init(&io);
	io.flags &= ~(unsigned)(UBIKIT_IMAGE_NO_MOUNT | UBIKIT_IMAGE_RDWR);
	if (!in_place_covers(path, &io, rep))
		return -1;
	io.flags |= UBIKIT_IMAGE_RDWR;
	struct ubikit_image *img = NULL;
	char m[1024] = "";
	if (ubikit_image_open(path, &io, &img, m, sizeof(m)) || !ubikit_image_fs(img)) {
		if (img)
			ubikit_image_close(img);
		return -1; /* no read-write mount: only the rebuild can help */
	}
	struct ubikit_fsck_report fixes;
	ubikit_fsck_report_init(&fixes);
	unsigned long fixed = 0;
	int err = fs_fsck_fix(ubikit_image_fs(img), 0, &fixes, &fixed);
	char cm[512] = "";
	int cerr = ubikit_image_close_msg(img, cm, sizeof(cm));
	for (size_t i = 0; i < fixes.count; i++)
		fs_fsck_add(rep, fixes.problems[i].flags, -1, fixes.problems[i].lnum, fixes.problems[i].offs,
			    fixes.problems[i].inum, NULL, "%s", fixes.problems[i].msg);
	ubikit_fsck_report_free(&fixes);
	if (err || cerr) {
		snprintf(msg, msglen, "repair in place failed: %s", err ? strerror(-err) : cm);
		fs_fsck_add(rep, UBIKIT_FSCK_FATAL, -1, -1, -1, 0, NULL, "%s", msg);
		return UBIKIT_FSCK_OPERROR;
	}
	if (!fixed)
		return -1;
	struct ubikit_fsck_report after;
	ubikit_fsck_report_init(&after);
	int rc = check_again(path, o, &after, msg, msglen);
	if (rc == UBIKIT_FSCK_CLEAN) {
		rep->inodes = after.inodes;
		rep->dentries = after.dentries;
		rep->bytes_read = after.bytes_read;
		rep->repaired = 1;
	}
	ubikit_fsck_report_free(&after);
	if (rc == UBIKIT_FSCK_CLEAN)
		return UBIKIT_FSCK_CORRECTED;
	return rc == UBIKIT_FSCK_OPERROR ? rc : -1;
}

int image_fsck_repair(const char *path, const struct ubikit_image_opts *o, enum ubikit_fsck_mode mode,
		      struct ubikit_fsck_report *rep, char *msg, size_t msglen)
{
	struct ubikit_image *img = NULL;
	char m[1024] = "";
	unsigned long losses = 0;
	int err;
	int rc = repair_in_place(path, o, rep, msg, msglen);
	if (rc >= 0)
		return rc;
	if (mode == UBIKIT_FSCK_AUTO) { /* what would be lost? */
		struct ubikit_fsck_report dry;
		ubikit_fsck_report_init(&dry);
		err = open_vol(path, o, 0, &img, m, sizeof(m));
		if (!err) {
			err = fs_fsck_rebuild(&img->vol, 1, &dry, &losses, m, sizeof(m));
			ubikit_image_close(img);
		}
		for (size_t i = 0; !err && losses && i < dry.count; i++)
			if (dry.problems[i].flags & UBIKIT_FSCK_LOSS)
				fs_fsck_add(rep, 0, -1, dry.problems[i].lnum, dry.problems[i].offs, dry.problems[i].inum,
					    NULL, "-a would: %s", dry.problems[i].msg);
		ubikit_fsck_report_free(&dry);
		if (err) {
			fs_fsck_add(rep, UBIKIT_FSCK_FATAL, -1, -1, -1, 0, NULL, "repair: %s", m);
			snprintf(msg, msglen, "repair: %s", m);
			return UBIKIT_FSCK_OPERROR;
		}
		if (losses) {
			fs_fsck_add(rep, 0, -1, -1, -1, 0, NULL,
				    "-a: the repair would lose data (%lu changes): nothing written; -y repairs", losses);
			return UBIKIT_FSCK_LEFT;
		}
	}
	err = open_vol(path, o, 1, &img, m, sizeof(m));
	if (err) {
		fs_fsck_add(rep, UBIKIT_FSCK_FATAL, -1, -1, -1, 0, NULL, "repair: cannot open for writing: %s", m);
		snprintf(msg, msglen, "repair: cannot open for writing: %s", m);
		return UBIKIT_FSCK_OPERROR;
	}
	err = fs_fsck_rebuild(&img->vol, 0, rep, &losses, m, sizeof(m));
	char cm[512] = "";
	int cerr = ubikit_image_close_msg(img, cm, sizeof(cm));
	if (err || cerr) {
		fs_fsck_add(rep, UBIKIT_FSCK_FATAL, -1, -1, -1, 0, NULL, "repair failed: %s", err ? m : cm);
		snprintf(msg, msglen, "repair failed: %s", err ? m : cm);
		return UBIKIT_FSCK_OPERROR;
	}
	rep->repaired = 1;
	fs_fsck_add(rep, UBIKIT_FSCK_FIXED, -1, -1, -1, 0, NULL,
		    "the file system was rebuilt from the nodes on flash (index, LPT, master, log, orphans new)");
	rc = check_again(path, o, rep, msg, msglen);
	return rc == UBIKIT_FSCK_CLEAN ? UBIKIT_FSCK_CORRECTED : rc;
}
