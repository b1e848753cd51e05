/* flash_sim — the NAND/NOR flash simulator (public API).
 *
 * Implements struct flash_dev with the rules of real flash (NAND: program
 * only erased pages, NOP limit, optional in-order programming; NOR: bits only
 * go 1->0), wear (per-PEB erase counts, endurance), factory and grown bad
 * blocks, seeded bit flips, power cuts and a timing model. Storage in RAM or
 * in a file in nanddump's layout (data only, or data+OOB per page) with a
 * sidecar "<image>.sim" for state that layout cannot hold.
 *
 * Everything random is seeded: a run replays from (seed, operation count). */
#ifndef UBIKIT_FLASH_SIM_H
#define UBIKIT_FLASH_SIM_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "flash/flash.h"

/* Datasheet-style timing, in nanoseconds and bytes/second. Defaults
 * (BENCH.md): read 25 us, program 200 us, erase 1.5 ms, bus 40 MB/s. */
struct flash_timing {
	uint64_t page_read_ns;
	uint64_t page_program_ns;
	uint64_t block_erase_ns;
	uint64_t bus_bytes_per_sec;
};

struct flash_sim_config {
	struct flash_geometry geo;
	unsigned nop;             /* programs allowed per page between erases (NAND), default 1 */
	bool in_order;            /* NAND: pages of a PEB must be programmed in ascending order */
	uint32_t endurance;       /* erase cycles before an erase fails and the block goes bad; 0 = unlimited */
	uint64_t seed;            /* for bit flips, power-cut bit patterns, random cut point */
	double bitflip_rate;      /* probability per page read of a correctable flip (-EUCLEAN) */
	double uncorrectable_rate;/* probability per page read of an uncorrectable error (-EBADMSG) */
	struct flash_timing timing;
	/* How a power cut leaves an erase (RAM devices and new files; not kept
	 * in the sidecar). false (default): as NAND erases a block, all pages
	 * together: untouched, partly erased (every programmed bit set with
	 * the same chance, so any header comes out damaged) or erased but for
	 * a few bits. true: each page on its own erased, untouched or damaged,
	 * which real blocks do not do (an intact EC header over a damaged VID
	 * header and intact data is what Linux calls corruption and keeps);
	 * harsher for the layers above, kept for torture runs that ask. */
	bool erase_cut_per_page;
	/* Backing store: NULL = RAM. Otherwise a file (created sparse). */
	const char *path;
	bool file_has_oob;        /* file holds page+OOB per page (nanddump -o layout) */
	bool sparse;              /* file: erased PEBs are holes (recorded in the sidecar);
				   * small on disk, but not a plain nanddump image */
	/* Optional: called while a new non-sparse file is filled with 0xFF
	 * (long work for large devices), with bytes done and the total. */
	void (*progress)(void *arg, uint64_t done, uint64_t total);
	void *progress_arg;
};

/* Fill a config with defaults: SLC NAND 2048+64, 128 KiB PEB, 256 MiB
 * (BENCH.md's default device), NOP 1, endurance 100000, default timing. */
void flash_sim_config_default(struct flash_sim_config *cfg);
/* Profiles by name: "slc" (default), "mlc" (endurance 3000, higher flip
 * rate), "nor" (NOR, 1-byte min I/O, 64 KiB PEB). Returns -EINVAL if unknown. */
int flash_sim_config_profile(struct flash_sim_config *cfg, const char *name);

/* Is this a geometry the simulator takes? 0, or -EINVAL with the reason
 * in errbuf (the check create and open do, for callers that must know
 * before they do other work). */
int flash_sim_check_geometry(const struct flash_geometry *geo, char *errbuf, size_t errlen);
/* Create a new erased device (RAM or a new file + sidecar). */
int flash_sim_create(const struct flash_sim_config *cfg, struct flash_dev **out);
/* Open an existing simulator image. Geometry and wear come from the sidecar
 * if present; otherwise from geo (which must then be given) and defaults.
 * read_only: no write to the image or sidecar ever. */
int flash_sim_open(const char *path, const struct flash_geometry *geo, bool file_has_oob,
		   bool read_only, struct flash_dev **out);

/* The message of the last refused or failed operation ("" if none). */
const char *flash_sim_last_error(const struct flash_dev *dev);

/* The configuration in force (geometry, rules, seed, timing); path is NULL. */
void flash_sim_get_config(const struct flash_dev *dev, struct flash_sim_config *cfg);
/* 0 good, 1 grown bad (marked bad or worn out), 2 factory bad; <0 error. */
int flash_sim_bad_kind(const struct flash_dev *dev, uint32_t peb);
/* 1 if every data byte of the PEB is 0xFF, 0 if not, <0 error. Looks at
 * the storage directly: no counters, no faults, works after a power cut. */
int flash_sim_peb_is_erased(const struct flash_dev *dev, uint32_t peb);

/* As flash_sim_create / flash_sim_open; on failure the reason (naming the
 * file, the sidecar line, the geometry) is copied into errbuf (may be NULL). */
int flash_sim_create_ex(const struct flash_sim_config *cfg, struct flash_dev **out, char *errbuf, size_t errlen);
int flash_sim_open_ex(const char *path, const struct flash_geometry *geo, bool file_has_oob, bool read_only,
		      struct flash_dev **out, char *errbuf, size_t errlen);

/* File-backed device: allocate host disk blocks for every PEB now, so no
 * later write can fail for lack of space (for commands that rewrite the
 * whole flash, like format). -ENOSPC (message in flash_sim_last_error) if
 * the disk is too small, and then the image is as it was. RAM: 0. */
int flash_sim_reserve(struct flash_dev *dev);

/* Is dev a simulator? (Other backends return false.) */
bool flash_is_sim(const struct flash_dev *dev);

/* ---- fault injection ---- */
int flash_sim_set_factory_bad(struct flash_dev *dev, uint32_t peb);
/* Next read covering (peb, page) returns a flip: correctable or not; sticky
 * until the PEB is erased when sticky is true. File-backed devices keep
 * sticky flips in the sidecar, so they survive a reopen. */
int flash_sim_inject_bitflip(struct flash_dev *dev, uint32_t peb, uint32_t page, bool uncorrectable,
			     bool sticky);
/* Set a PEB's physical erase count (to simulate wear). */
int flash_sim_set_wear(struct flash_dev *dev, uint32_t peb, uint32_t erase_count);
uint32_t flash_sim_get_wear(const struct flash_dev *dev, uint32_t peb);
/* Make the next erase (or program) of peb fail with -EIO. */
int flash_sim_fail_next_erase(struct flash_dev *dev, uint32_t peb);
int flash_sim_fail_next_program(struct flash_dev *dev, uint32_t peb);

/* Power cut at the `ops`-th program/erase operation from now: ops-1 more
 * complete normally, the ops-th is left partial (a program: earlier units
 * done, one unit partly programmed, later ones untouched; an erase: pages
 * erased, untouched or with random bits, never all 0xFF) and fails with
 * -EIO, and the device is "off" until flash_sim_reopen(). Refused calls
 * (rule violations, range errors) are not operations. ops = 0 disables. */
void flash_sim_power_cut_after(struct flash_dev *dev, uint64_t ops);
/* Power cut at a seeded random operation in [1, max_ops]. */
void flash_sim_power_cut_random(struct flash_dev *dev, uint64_t seed, uint64_t max_ops);
/* Program/erase operations done since creation/open (the counter the cut
 * point refers to): lets a torture test enumerate every cut point. */
uint64_t flash_sim_op_count(const struct flash_dev *dev);
/* True once a cut happened: every call then fails with -EIO. */
bool flash_sim_is_cut(const struct flash_dev *dev);
/* "Reboot": clear the cut state and accept calls again, contents as left. */
int flash_sim_reopen(struct flash_dev *dev);

/* ---- counters and timing ---- */
struct flash_stats {
	uint64_t reads, programs, erases;           /* operations */
	uint64_t bytes_read, bytes_programmed;
	uint64_t sim_time_ns;                       /* simulated device time */
	uint64_t bitflips_corrected, ecc_failures;
	uint64_t pages_read, pages_programmed;      /* pages touched (a sub-page program is one page program) */
	uint64_t rule_violations;                   /* caller bugs refused: misaligned, reprogram, NOP, order */
};
void flash_sim_get_stats(const struct flash_dev *dev, struct flash_stats *st);
void flash_sim_reset_stats(struct flash_dev *dev);
/* Erase-count summary over all PEBs. */
struct flash_wear_stats {
	uint32_t min, max;
	double mean, stddev;
};
void flash_sim_wear_stats(const struct flash_dev *dev, struct flash_wear_stats *ws);

#endif
