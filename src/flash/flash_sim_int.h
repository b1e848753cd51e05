/* flash_sim_int — internals of the flash simulator shared by its files:
 * the device struct, the storage layer (RAM, or a file in nanddump's layout,
 * with the "<image>.sim" sidecar) and the rule/fault engine.
 * Not for use outside src/flash. */
#ifndef UBIKIT_FLASH_SIM_INT_H
#define UBIKIT_FLASH_SIM_INT_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "flash/flash_sim.h"
#include "util/util_err.h"
#include "util/util_prng.h"

/* One injected bit flip at (peb, page). */
struct sim_flip {
	uint32_t peb, page;
	bool uncorrectable, sticky;
};

/* Bad-block state per PEB. */
enum { SIM_GOOD = 0, SIM_BAD_GROWN = 1, SIM_BAD_FACTORY = 2 };

#define SIM_SIDECAR_VERSION 1
/* Largest NAND page the simulator takes (real parts stop at 16 KiB). */
#define SIM_MAX_PAGE (1u << 20)

struct flash_sim {
	struct flash_dev dev; /* first: flash_dev * <-> flash_sim * */
	struct flash_sim_config cfg;
	char *path; /* NULL for RAM */

	/* Derived geometry. A "unit" is the NAND program unit (sub-page);
	 * a "page" is the NAND page, or a 256-byte chunk on NOR (used for
	 * timing and bit-flip places only). */
	uint32_t page_size;      /* bytes of data per page */
	uint32_t pages_per_peb;
	uint32_t unit_size;      /* NAND: subpage size; NOR: 1 */
	uint32_t units_per_peb;
	uint32_t page_stride;    /* bytes per page in storage (data [+ OOB]) */
	uint64_t peb_stride;     /* bytes per PEB in storage */
	bool store_oob;          /* storage holds OOB after each page */

	/* Storage. A PEB's bytes live in ram[peb] if set, else in the file
	 * unless hole[peb] (erased and not stored: reads 0xFF). A read-write
	 * file is mapped (map); a read-only one is read with pread, so that
	 * the process's memory does not grow with the image (issue 7). */
	uint8_t **ram;
	uint8_t *hole;
	uint8_t *map;
	size_t map_len;          /* bytes of the file stored PEBs lie in (mapped or not) */
	bool ro_file;            /* read-only file backend: pread, no map */
	int fd;
	bool sparse;             /* file: erased PEBs are punched holes */
	bool sidecar_dirty;
	uint8_t *reserved;       /* file: the PEB's range of the file has disk
				  * blocks (no holes), so touching it through the
				  * map cannot hit a full disk (a SIGBUS; on tmpfs
				  * even a read of a hole allocates); set at open
				  * (SEEK_HOLE) and by sim_peb_reserve. Other PEBs
				  * are read with pread. */

	/* Device state. */
	uint32_t *wear;          /* physical erase count per PEB */
	uint8_t *bad;            /* SIM_GOOD / SIM_BAD_* */
	uint8_t *nop;            /* programs per unit since erase (NAND) */
	int32_t *high_page;      /* highest programmed page per PEB, -1 none */
	uint8_t *fail_erase, *fail_prog;
	struct sim_flip *flips;
	size_t nflips, flips_cap;

	struct util_prng rng;
	uint64_t ops;            /* programs + erases so far */
	uint64_t cut_at;         /* op number that is cut; 0 = none */
	bool cut;

	struct flash_stats st;
	struct util_err err;
};

static inline struct flash_sim *sim_of(struct flash_dev *d)
{
	return (struct flash_sim *)d;
}
static inline const struct flash_sim *csim_of(const struct flash_dev *d)
{
	return (const struct flash_sim *)d;
}

/* ---- storage (flash_sim_store.c) ---- */
/* Allocate per-PEB arrays and derived geometry from s->cfg. */
int sim_store_init_arrays(struct flash_sim *s);
void sim_store_free(struct flash_sim *s);
/* Pointer to the PEB's first byte in memory (RAM copy or the read-write
 * map), or NULL if it is an unstored erased PEB or lies in a read-only
 * file (no map: use sim_store_read). */
uint8_t *sim_peb_ptr(struct flash_sim *s, uint32_t peb);
/* Does the PEB have stored bytes (else it reads 0xFF)? */
bool sim_peb_stored(const struct flash_sim *s, uint32_t peb);
/* Copy n bytes at byte off of the PEB's storage (data+OOB layout) to dst:
 * 0xFF for an unstored erased PEB; never faults on a file hole. */
int sim_store_read(struct flash_sim *s, uint32_t peb, uint64_t off, void *dst, size_t n);
/* Make the PEB stored (all 0xFF if it was a hole) and return its bytes.
 * NULL if there is no memory or (file) no disk space: the error is in s->err. */
uint8_t *sim_peb_materialize(struct flash_sim *s, uint32_t peb);
/* File backend: allocate the PEB's blocks on disk before the first write
 * through the map (a write into an unallocated page of a full disk is a
 * SIGBUS). 0, or -ENOSPC/-EIO with a message naming the file. */
int sim_peb_reserve(struct flash_sim *s, uint32_t peb);
/* Erase the PEB's storage: 0xFF over data and OOB (or a hole). */
void sim_peb_erase_store(struct flash_sim *s, uint32_t peb);
/* Write the Linux bad-block marker into OOB (if stored). */
void sim_peb_write_bbm(struct flash_sim *s, uint32_t peb);
/* File backends: create / open, and write the sidecar. */
int sim_store_create_file(struct flash_sim *s);
int sim_store_open_file(struct flash_sim *s, const char *path, const struct flash_geometry *geo,
			bool file_has_oob, bool read_only);
int sim_store_sync(struct flash_sim *s);

/* ---- core (flash_sim.c) ---- */
const struct flash_ops *sim_get_ops(void);
/* Check a geometry for the simulator; message in err. */
int sim_check_geometry(const struct flash_geometry *g, struct util_err *err);

#endif
