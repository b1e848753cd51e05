/* libubikit torture — power cuts, bit flips, bad blocks and wear-out on the
 * flash simulator, under a model-checked random workload of the fs API
 * (`ubikit torture`, issue 10).
 *
 * One run: a fresh simulated device (NAND 2 KiB or 4 KiB pages, NOR, MLC),
 * UBI attached and formatted, one volume, UBIFS made by the first
 * read-write mount; then cycles of random file operations (several open
 * files, renames, hard links, truncates, xattrs, big and small files,
 * fsync of some) compared against an in-memory model after every call.
 * Depending on the scenario a cycle ends in a power cut (inside a page
 * program or an erase, sometimes again during the recovery mount), or runs
 * under bit flips, failing blocks or worn blocks. After every cut the
 * device is "rebooted": attach, read-write mount (recovery), strict check
 * of the whole file system, every file whose fsync returned before the cut
 * has exactly its synced contents, no name or xattr outside the model, and
 * the workload goes on from the recovered tree.
 *
 * Deterministic: a run replays from (scenario, device, seed). */
#ifndef UBIKIT_TORTURE_H
#define UBIKIT_TORTURE_H
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ubikit_torture_result;

/* scenarios */
enum ubikit_torture_scenario {
	UBIKIT_TORTURE_MIX = 0,          /* the random workload alone, remounts; no faults */
	UBIKIT_TORTURE_POWERCUT,         /* a power cut at a random flash operation of each cycle */
	UBIKIT_TORTURE_POWERCUT_RECOVERY,/* as POWERCUT, and often a second cut inside the recovery mount */
	UBIKIT_TORTURE_BITFLIP,          /* correctable flips and transient uncorrectable reads, with cuts */
	UBIKIT_TORTURE_BADBLOCK,         /* program/erase failures: blocks go bad until the reserve is gone */
	UBIKIT_TORTURE_WEAROUT,          /* MLC endurance 3000 from worn blocks, until read-only */
	UBIKIT_TORTURE_EXHAUSTIVE,       /* a small workload cut at each of its flash operations in turn */
	UBIKIT_TORTURE_SCENARIOS
};

/* Planted bugs (ubikit_torture_opts.plant): test hooks, never for users. A
 * torture that cannot see a bug is worthless; each of these puts one behind
 * the stack's back so that a test can show the run reports it. */
enum ubikit_torture_plant {
	UBIKIT_TORTURE_PLANT_NONE = 0,
	/* the workload's fsyncs are not made, but the model counts them as
	 * done: a stack whose fsync returns 0 without writing anything */
	UBIKIT_TORTURE_PLANT_LOST_FSYNC,
	/* once, after a cut: one byte of a synced file's data changed on the
	 * flash (every copy of the file's first bytes, block erased and
	 * rewritten, so the ECC reads it as good): silent corruption */
	UBIKIT_TORTURE_PLANT_FLIP_SYNCED,
	/* after the first cut every PEB is erased: the recovery mount must be
	 * refused (a finding; with export_dir the flash goes to
	 * export_dir/refused-NNNNNN.flash) */
	UBIKIT_TORTURE_PLANT_ERASE_ALL,
	/* writes through open handles are not made but reported as done: a
	 * stack that drops written data without an error (no cut needed) */
	UBIKIT_TORTURE_PLANT_LOST_WRITE,
	/* fsync fails with -EIO although nothing failed: a stack reporting
	 * errors no fault explains */
	UBIKIT_TORTURE_PLANT_FSYNC_EIO,
	/* the 100th program of each device is made a second time, the same
	 * bytes again: a stack that programs a page twice (refused by the
	 * simulator where the page allows one program, e.g. nand4k) */
	UBIKIT_TORTURE_PLANT_REPROGRAM,
	UBIKIT_TORTURE_PLANTS
};

struct ubikit_torture_opts {
	int scenario;           /* enum ubikit_torture_scenario */
	const char *device;     /* "nand2k" (default), "nand4k", "nor", "mlc" */
	uint64_t seed;
	uint64_t max_cycles;    /* stop after this many cycles (0: no limit) */
	double max_seconds;     /* stop after this much time (0: no limit) */
	unsigned ops_per_cycle; /* file operations per cycle (0: default) */
	/* post-cut images for the kernel: every export_every-th cut, the flash
	 * as the cut left it (before any recovery) goes to
	 * export_dir/NNNNNN.flash (raw PEBs, no OOB) and the files that must
	 * survive it (fsync'ed or committed, unchanged since) to the tree
	 * export_dir/NNNNNN.synced/. The first finding's flash, as the check
	 * saw it, goes to export_dir/finding-CYCLE.flash. NULL: none. */
	const char *export_dir;
	unsigned export_every;
	/* called after every cycle (may be NULL) */
	void (*progress)(void *arg, const struct ubikit_torture_result *r);
	void *progress_arg;
	/* test hook: skip the strict check after recovery (never for users) */
	int no_check;
	/* print every file operation and cut to stderr (to follow a finding) */
	int trace;
	/* UBI erases each unmapped PEB early (at the next unmap) instead of
	 * when a free PEB is next needed: what the kernel's background erase
	 * may do, so UBIFS must not need an unmapped LEB's old contents */
	int erase_at_unmap;
	/* a power cut in an erase damages each page on its own (erased,
	 * untouched or random bits) instead of the whole block alike: states
	 * real NAND does not leave, some of which Linux's UBI refuses ("too
	 * many corrupted PEBs"); harsher for UBIFS */
	int erase_cut_per_page;
	/* the workload's fill bursts (one step in 400) go on until the file
	 * system is full: incompressible data, bigger files (up to an eighth of
	 * the volume), up to four rounds over the names; then ENOSPC and the
	 * workload frees space. Off by default: the default bursts seldom fill
	 * a device, and seeds replay as they did. */
	int fill_up;
	/* test hook: a planted bug, one of enum ubikit_torture_plant; 0 is
	 * none; never for users */
	int plant;
};

struct ubikit_torture_result {
	uint64_t cycles, ops;            /* cycles run, file operations done */
	uint64_t cuts;                   /* power cuts survived (recovered and checked) */
	uint64_t cuts_in_program, cuts_in_erase, cuts_in_recovery;
	uint64_t checks;                 /* strict checks passed */
	uint64_t synced_files_checked;   /* fsync'ed files found with their contents after a cut */
	uint64_t remounts;               /* clean unmount + mount cycles */
	uint64_t bitflips_corrected, uncorrectable_reads;
	uint64_t bad_blocks;             /* PEBs that went bad during the run */
	uint64_t read_only;              /* devices whose UBI ran out of reserve PEBs and went read-only */
	uint64_t eol_unattachable;       /* of those, refused at the next attach: fewer good PEBs than
					  * reserved (Linux's rule), checked on the live mount only */
	uint64_t enospc;                 /* times the file system filled up (the workload then frees space) */
	uint64_t fresh_devices;          /* devices started (exhaustive: one per cut point) */
	uint64_t refused_mounts;         /* a mount refused after a cut (each is also a finding) */
	uint64_t flash_programs, flash_erases; /* simulator operations over all devices */
	uint64_t findings;               /* problems found: 0 is a pass */
	char first_finding[768];         /* the first one, with seed, cycle and place */
	double seconds;
};

/* Names: "mix", "powercut", "powercut-recovery", "bitflip", "badblock",
 * "wearout", "exhaustive". -1 if unknown. */
int ubikit_torture_scenario_by_name(const char *name);
const char *ubikit_torture_scenario_name(int scenario);

/* Run one scenario. Returns 0 when the run was carried out (findings are
 * in r->findings), a negative errno when it could not run (bad options,
 * no memory); errbuf (may be NULL) then says why. */
int ubikit_torture_run(const struct ubikit_torture_opts *o, struct ubikit_torture_result *r, char *errbuf,
		       size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
