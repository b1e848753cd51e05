/* torture_priv — what the files of the torture library share: the device
 * under test (torture_dev.c), the reference model and its random workload
 * (torture_model.c); the scenarios drive them (torture_run.c). */
#ifndef UBIKIT_TORTURE_PRIV_H
#define UBIKIT_TORTURE_PRIV_H
#include <stddef.h>
#include <stdint.h>
#include <ubikit/torture.h>
#include <ubikit/ubikit.h>

#include "flash/flash.h"
#include "ubi/ubi.h"
#include "util/util_prng.h"

/* ---- the device: simulator + a recorder of the last program/erase ---- */
struct tdev {
	struct flash_dev base;     /* what UBI sees: forwards to sim */
	struct flash_dev *sim;
	char last_op[96];          /* the last program/erase begun, e.g. "erase of PEB 7" */
	int last_was_erase;
	uint64_t bad_marked;       /* mark_bad calls that went through */
	struct ubi_device *ubi;
	struct ubi_vol_io vol;
	struct ubikit_fs *fs;
	int read_only;             /* mounted read-only */
	int mount_left_ubi_ro;     /* the last failed mount found UBI read-only (reserve gone) */
	int trace_flash;           /* print programs and erases to stderr */
	int erase_at_unmap;        /* UBI erases unmapped PEBs early (ubi_attach_opts) */
	/* programs and erases the simulator refused as against the flash's
	 * rules (a page programmed twice past NOP, out of order, not erased):
	 * real NAND would take them and lose data, so each is a finding */
	uint64_t violations, violations_reported;
	int plant_reprogram;       /* test hook: the 100th program made twice */
	uint64_t programs;
	char violation_msg[160]; /* the first one's message */
};

/* New erased simulated device by profile name; UBI attached (formats it),
 * one dynamic volume over all available PEBs, UBIFS made by the first
 * read-write mount. wear_from: with endurance, start every PEB's erase
 * count in [wear_from, endurance) (0: fresh). flags: TDEV_*; erase at unmap: every attach
 * erases unmapped PEBs early, as the kernel's background thread may. */
#define TDEV_ERASE_AT_UNMAP 1u  /* every attach erases unmapped PEBs early, as the kernel's thread may */
#define TDEV_ERASE_CUT_PAGES 2u /* the simulator's per-page cut erase (flash_sim_config) */
int tdev_create(struct tdev *d, const char *profile, uint64_t seed, double flip_rate, double uncorr_rate,
		uint32_t wear_from, unsigned flags, char *msg, size_t ml);
/* Attach + mount (read-write unless ro). On failure nothing stays attached. */
int tdev_mount(struct tdev *d, int ro, char *msg, size_t ml);
/* Unmount + detach; returns the first error (expected after a cut). */
int tdev_unmount(struct tdev *d);
void tdev_destroy(struct tdev *d);
/* The strict check of the mounted file system; 0 or -errno with msg. */
int tdev_check(struct tdev *d, char *msg, size_t ml);
/* Raw PEBs (no OOB) to a file, for the kernel. */
int tdev_export(struct tdev *d, const char *path);
/* Planted corruption (test hook): every copy of the n bytes pat on the
 * flash gets its byte pat[n / 2] changed, each PEB read, erased and
 * programmed again so that ECC sees good data. Returns the copies changed
 * or -errno. */
int tdev_change_copies(struct tdev *d, const uint8_t *pat, size_t n);

/* ---- the model and the workload ---- */
enum { TM_NAMES = 16, TM_INODES = 40, TM_OPEN = 4, TM_XATTRS = 3, TM_XVAL = 48 };

struct tm_inode {
	int used;
	uint8_t *data;
	size_t len, cap;
	int xset[TM_XATTRS];
	uint8_t xval[TM_XATTRS][TM_XVAL];
	size_t xlen[TM_XATTRS];
};

struct tm_open {
	struct ubikit_file *h;
	int ino; /* model inode, -1 if unused */
};

struct tmodel {
	struct tm_inode ino[TM_INODES];
	int name[TM_NAMES];       /* model inode of each name slot, -1 if none */
	int maybe[TM_NAMES];      /* the name may exist after a cut */
	int pinned[TM_NAMES];     /* its contents are durable (fsync/sync) and unchanged since */
	uint8_t *pdata[TM_NAMES];
	size_t plen[TM_NAMES];
	struct tm_open open[TM_OPEN];
	struct util_prng r;
	size_t maxlen;            /* biggest file */
	uint64_t ops, fsyncs, syncs, enospc;
	int freeing;              /* ENOSPC seen: the next operations free space */
	int fill_next;            /* the next write is a big one */
	char err[512];            /* what went wrong (model mismatch) */
	int trace;                /* print every operation to stderr (debugging a finding) */
	int lost_fsync;           /* planted bug (test hook): fsync not called, counted as done */
	int fsync_eio;            /* planted bug (test hook): fsync fails with -EIO, nothing written */
	int lost_handle_writes;   /* planted bug (test hook): writes through open handles not made */
	int fill_up;              /* fill bursts go on until ENOSPC (opts.fill_up) */
};

const char *tm_path(int slot, char *buf); /* "/f3", "/d/g8", "/d/e/h13" */
void tm_init(struct tmodel *m, uint64_t seed, size_t maxlen);
void tm_free(struct tmodel *m);
/* The directories the names live in, made and committed. */
int tm_make_dirs(struct ubikit_fs *fs);
/* One random operation, checked against the model. 0 ok; <0 the fs
 * error (after a cut: whatever the cut caused); 1 a model mismatch
 * without any fault (m->err says what). */
int tm_step(struct tmodel *m, struct ubikit_fs *fs);
/* Forget open handles (after a cut: closed, errors ignored). */
void tm_drop_handles(struct tmodel *m);
/* After a cut + recovery: pinned names exactly, no name or xattr outside
 * the model. 0 ok, 1 finding (m->err). *checked += pinned files seen. */
int tm_check_after_cut(struct tmodel *m, struct ubikit_fs *fs, uint64_t *checked);
/* After a clean remount: the tree equals the model exactly. 0/1. */
int tm_check_exact(struct tmodel *m, struct ubikit_fs *fs);
/* Take the recovered tree as the model's new state, and commit it. 0 or
 * -errno (m->err). */
int tm_adopt(struct tmodel *m, struct ubikit_fs *fs);
/* Copy the pinned names (what must survive the cut) into directory dir,
 * at their paths (dir/f3, dir/d/g8, ...), for the kernel to compare. */
int tm_write_list(struct tmodel *m, struct ubikit_fs *fs, const char *dir);

#endif
