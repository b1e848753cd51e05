/* libubikit — checking (and repairing) a UBIFS: `ubikit fsck` as a library.
 *
 * Two entry points:
 *  - ubikit_fsck_fs(): the check alone, on a file system that is already
 *    mounted (read-only or read-write) through <ubikit/ubikit.h> or the
 *    image layer. It never writes (a read-write mount's journal heads are
 *    synced to flash first, as the kernel's self-checks do). Used by the
 *    torture runs after every power cut.
 *  - ubikit_fsck_image(): a whole image file or device (every kind the
 *    image layer opens), check only or repair, with fsck(8)-style result
 *    codes.
 *
 * Every problem names its place (PEB, LEB:offset, inode, path where known)
 * and what was expected; the report is a list of problems.
 *
 *   struct ubikit_fsck_report rep;
 *   ubikit_fsck_report_init(&rep);
 *   int err = ubikit_fsck_fs(fs, &rep);  // <0: could not check; else rep.count problems
 *   for (size_t i = 0; i < rep.count; i++) puts(rep.problems[i].msg);
 *   ubikit_fsck_report_free(&rep);
 *
 * No global state; errors are negative errno. */
#ifndef UBIKIT_FSCK_H
#define UBIKIT_FSCK_H
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ubikit_fs;
struct ubikit_image_opts;

/* Result codes of ubikit_fsck_image (the exit status of `ubikit fsck`,
 * as fsck(8) and fsck.ubifs). */
enum {
	UBIKIT_FSCK_CLEAN = 0,     /* no problem found */
	UBIKIT_FSCK_CORRECTED = 1, /* problems found and all repaired */
	UBIKIT_FSCK_LEFT = 4,      /* problems left (check only, or not repairable) */
	UBIKIT_FSCK_OPERROR = 8,   /* operational error: cannot open, bad superblock, I/O */
	UBIKIT_FSCK_USAGE = 16,    /* usage error (command line) */
};

enum ubikit_fsck_mode {
	UBIKIT_FSCK_CHECK = 0, /* -n: check only, the image is opened read-only */
	UBIKIT_FSCK_AUTO = 1,  /* -a: repair only when nothing is lost */
	UBIKIT_FSCK_YES = 2,   /* -y: repair everything, accepting loss */
};

/* Problem flags */
enum {
	UBIKIT_FSCK_FIXED = 1 << 0, /* repaired */
	UBIKIT_FSCK_LOSS = 1 << 1,  /* repairing it loses data (or lost it) */
	UBIKIT_FSCK_FATAL = 1 << 2, /* stops the check (e.g. the mount failed) */
};

struct ubikit_fsck_problem {
	char *msg;      /* one sentence: what is wrong, where, what was expected */
	int64_t peb;    /* -1 when not known / not UBI */
	int64_t lnum;   /* LEB, -1 when not known */
	int64_t offs;   /* offset in the LEB, -1 when not known */
	uint64_t inum;  /* inode, 0 when not known */
	char *path;     /* path of the inode when known, else NULL */
	unsigned flags; /* UBIKIT_FSCK_* problem flags */
};

struct ubikit_fsck_report {
	struct ubikit_fsck_problem *problems;
	size_t count, cap;
	/* what was looked at */
	uint64_t inodes, dentries, data_nodes, lebs_scanned, bytes_read;
	int repaired; /* 1 when the image was written by a repair */
};

void ubikit_fsck_report_init(struct ubikit_fsck_report *r);
void ubikit_fsck_report_free(struct ubikit_fsck_report *r);

/* Check a mounted file system. Returns 0 when the check ran (problems are
 * in rep->count, 0 = clean), negative errno when it could not run. Never
 * writes to flash except, on a read-write mount, the journal heads' write
 * buffers (as a sync would). */
int ubikit_fsck_fs(struct ubikit_fs *fs, struct ubikit_fsck_report *rep);

/* Check (and with AUTO/YES repair) the UBIFS in the image at path, volume
 * chosen as the read tools do (o may be NULL for detection). Returns a
 * UBIKIT_FSCK_* result code; the reason of an operational error is in
 * msg and in the report as a FATAL problem. */
int ubikit_fsck_image(const char *path, const struct ubikit_image_opts *o, enum ubikit_fsck_mode mode,
		      struct ubikit_fsck_report *rep, char *msg, size_t msglen);

#ifdef __cplusplus
}
#endif
#endif
