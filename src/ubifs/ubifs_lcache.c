/* ubifs_lcache — see ubifs_lcache.h.
 *
 * The LEBs live in one anonymous mapping reserved up front (address space
 * only: pages are touched as LEBs are read) and handed out in slots of one
 * LEB each. One mapping with huge pages asked for costs a page fault per
 * 2 MiB instead of one per 4 KiB: with a malloc per LEB, the faults of a
 * 160 MiB cache took three times the CPU of the whole check in a VM. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "ubifs/ubifs_lcache.h"
#include "ubifs/ubifs_priv.h"

enum { TRIED_NO, TRIED_READ, TRIED_UNMAPPED };

#define NO_SLOT UINT32_MAX

struct ubifs_lcache {
	uint8_t *region;  /* nslots * leb_size bytes, mmap'ed */
	size_t region_len;
	uint32_t *slot;   /* per LEB number: its slot, NO_SLOT if none yet */
	uint8_t *cached;  /* per LEB number: 1 when its slot holds the LEB */
	uint8_t *tried;   /* TRIED_READ: a whole-LEB read failed, not again;
			   * TRIED_UNMAPPED: UBI says unmapped, reads give 0xff */
	uint32_t nlebs, leb_size, nslots, next_slot;
	uint64_t lebs_read;
};

static void lcache_free(struct ubifs_lcache *c)
{
	if (c->region)
		munmap(c->region, c->region_len);
	free(c->slot);
	free(c->cached);
	free(c->tried);
	free(c);
}

int ubifs_lcache_enable(struct ubifs_fs *fs, uint64_t limit)
{
	if (fs->lcache)
		return 0;
	struct ubifs_lcache *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->nlebs = fs->vol->leb_count;
	c->leb_size = fs->leb_size;
	uint64_t fit = fs->leb_size ? limit / fs->leb_size : 0;
	c->nslots = fit < c->nlebs ? (uint32_t)fit : c->nlebs;
	size_t n = c->nlebs ? c->nlebs : 1;
	c->slot = malloc(n * sizeof(*c->slot));
	c->cached = calloc(n, 1);
	c->tried = calloc(n, 1);
	if (!c->slot || !c->cached || !c->tried) {
		lcache_free(c);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < c->nlebs; i++)
		c->slot[i] = NO_SLOT;
	if (c->nslots) {
		c->region_len = (size_t)c->nslots * c->leb_size;
		void *p = mmap(NULL, c->region_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
			       -1, 0);
		if (p == MAP_FAILED) {
			/* no address space for it: run without a cache */
			c->region_len = 0;
			c->nslots = 0;
		} else {
			c->region = p;
#ifdef MADV_HUGEPAGE
			(void)madvise(p, c->region_len, MADV_HUGEPAGE); /* a hint only */
#endif
		}
	}
	fs->lcache = c;
	return 0;
}

void ubifs_lcache_disable(struct ubifs_fs *fs)
{
	if (!fs->lcache)
		return;
	lcache_free(fs->lcache);
	fs->lcache = NULL;
}

int ubifs_lcache_read(struct ubifs_lcache *c, struct ubifs_fs *fs, uint32_t lnum, uint32_t offs, void *buf,
		      size_t len)
{
	if (lnum >= c->nlebs)
		return 0;
	if (!c->cached[lnum]) {
		if (c->tried[lnum] == TRIED_UNMAPPED) {
			memset(buf, 0xff, len);
			return 1;
		}
		if (c->tried[lnum])
			return 0;
		/* an unmapped LEB reads as erased: nothing to read or keep (the
		 * space checks scan every LEB, a third of them unmapped) */
		if (fs->vol->is_mapped && fs->vol->is_mapped(fs->vol->ctx, lnum) == 0) {
			c->tried[lnum] = TRIED_UNMAPPED;
			memset(buf, 0xff, len);
			return 1;
		}
		if (c->slot[lnum] == NO_SLOT) {
			if (c->next_slot >= c->nslots)
				return 0; /* full: the caller reads */
			c->slot[lnum] = c->next_slot++;
		}
		c->tried[lnum] = TRIED_READ;
		uint8_t *b = c->region + (size_t)c->slot[lnum] * c->leb_size;
		/* only a clean read is kept: a corrected (-EUCLEAN) or failed
		 * one goes to the caller's own read, which reports it */
		if (fs->vol->read(fs->vol->ctx, lnum, 0, b, c->leb_size) != 0)
			return 0;
		c->cached[lnum] = 1;
		c->lebs_read++;
	}
	memcpy(buf, c->region + (size_t)c->slot[lnum] * c->leb_size + offs, len);
	return 1;
}

void ubifs_lcache_drop(struct ubifs_lcache *c, uint32_t lnum)
{
	if (!c || lnum >= c->nlebs)
		return;
	c->cached[lnum] = 0; /* the slot stays this LEB's, for its next read */
	c->tried[lnum] = TRIED_NO;
}

uint64_t ubifs_lcache_lebs_read(const struct ubifs_lcache *c)
{
	return c ? c->lebs_read : 0;
}
