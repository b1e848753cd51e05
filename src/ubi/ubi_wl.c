/* ubi_wl — the PEB pool: handing out free PEBs, the erase queue (erase +
 * new EC header with ec + erasures done), wear leveling on the erase
 * counters, scrubbing of PEBs that showed bit flips, torture and bad-PEB
 * handling with the reserve pool, and the read-only switch.
 *
 * Policy (Linux wl.c): a fresh PEB is protected from moves for
 * UBI_PROT_LEN erasures; a WL move happens when a free PEB's EC (highest
 * below min free EC + 2*threshold) exceeds the lowest used EC by >=
 * threshold; scrubs go first. Free PEBs for new data come from the middle
 * of the free ECs (closest to their mean) unless the spread is large. The
 * per-PEB state is a flat array scanned linearly: devices are a few
 * thousand PEBs at most. */
#include <errno.h>
#include <string.h>

#include "ubi/ubi_priv.h"

uint32_t ubi_wl_count(const struct ubi_device *dev, enum ubi_peb_state st)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < dev->peb_count; i++)
		n += dev->peb[i].state == st;
	return n;
}

/* Free PEB with the highest EC below (lowest free EC + diff): Linux
 * find_wl_entry. -1 if none. */
static int64_t find_wl_entry(const struct ubi_device *dev, uint32_t diff)
{
	int64_t first = -1;
	for (uint32_t i = 0; i < dev->peb_count; i++)
		if (dev->peb[i].state == PEB_FREE && (first < 0 || dev->peb[i].ec < dev->peb[first].ec))
			first = i;
	if (first < 0)
		return -1;
	uint64_t max = (uint64_t)dev->peb[first].ec + diff;
	int64_t best = first;
	for (uint32_t i = 0; i < dev->peb_count; i++)
		if (dev->peb[i].state == PEB_FREE && dev->peb[i].ec < max && dev->peb[i].ec > dev->peb[best].ec)
			best = i;
	return best;
}

/* PEB for new data: near the mean of free ECs, or a lower one if the free
 * spread is large (Linux find_mean_wl_entry). */
static int64_t find_mean_entry(const struct ubi_device *dev)
{
	uint32_t mn = UINT32_MAX, mx = 0, n = 0;
	uint64_t sum = 0;
	for (uint32_t i = 0; i < dev->peb_count; i++) {
		const struct ubi_peb *p = &dev->peb[i];
		if (p->state != PEB_FREE)
			continue;
		n++;
		sum += p->ec;
		if (p->ec < mn)
			mn = p->ec;
		if (p->ec > mx)
			mx = p->ec;
	}
	if (!n)
		return -1;
	/* Linux switches to low-EC free PEBs at a free spread of 2*threshold;
	 * switching at 1*threshold keeps the whole spread near the threshold
	 * (measured in tests/ubi/test_ubi_wear.c) at no cost in moves. */
	if ((uint64_t)mx - mn >= dev->wl_threshold)
		return find_wl_entry(dev, dev->wl_threshold / 2);
	uint64_t mean = sum / n;
	int64_t best = -1;
	uint64_t bestd = UINT64_MAX;
	for (uint32_t i = 0; i < dev->peb_count; i++) {
		const struct ubi_peb *p = &dev->peb[i];
		if (p->state != PEB_FREE)
			continue;
		uint64_t d = p->ec > mean ? p->ec - mean : mean - p->ec;
		if (d < bestd) {
			bestd = d;
			best = i;
		}
	}
	return best;
}

void ubi_wl_put_peb(struct ubi_device *dev, uint32_t pnum, bool torture)
{
	struct ubi_peb *p = &dev->peb[pnum];
	p->leb_known = p->state == PEB_USED;
	p->state = PEB_ERASE;
	p->torture = torture;
	p->scrub = false;
	p->erase_order = dev->erase_order_next++;
}

void ubi_wl_put_peb_head(struct ubi_device *dev, uint32_t pnum)
{
	ubi_wl_put_peb(dev, pnum, false);
	dev->peb[pnum].erase_order = dev->erase_order_head--;
}

void ubi_wl_scrub_peb(struct ubi_device *dev, uint32_t pnum)
{
	if (pnum < dev->peb_count && dev->peb[pnum].state == PEB_USED)
		dev->peb[pnum].scrub = true;
}

/* A PEB failed erase/torture with -EIO: mark it bad, taking the place from
 * the bad-PEB reserve, else from the available PEBs, else go read-only
 * (Linux erase_worker). */
static int handle_bad_peb(struct ubi_device *dev, uint32_t pnum)
{
	struct ubi_peb *p = &dev->peb[pnum];
	if (!dev->bad_allowed) {
		p->state = PEB_ERRONEOUS;
		ubi_ro_mode(dev, "PEB failed and the flash cannot have bad blocks");
		return ubi_err(dev, -EROFS, "PEB %u: erase failed on flash without bad blocks; read-only", pnum);
	}
	bool from_avail = false;
	if (dev->beb_rsvd_pebs == 0) {
		if (dev->avail_pebs <= 0) {
			p->state = PEB_ERRONEOUS;
			ubi_ro_mode(dev, "no reserved or available PEBs left for bad-PEB handling");
			return ubi_err(dev, -EROFS,
				       "PEB %u went bad and no reserved/available PEBs are left; switched to read-only",
				       pnum);
		}
		dev->avail_pebs--;
		from_avail = true;
	}
	int err = ubi_io_mark_bad(dev, pnum);
	if (err) {
		if (from_avail)
			dev->avail_pebs++;
		p->state = PEB_ERRONEOUS;
		ubi_ro_mode(dev, "marking a PEB bad failed");
		return err;
	}
	if (!from_avail) {
		dev->beb_rsvd_pebs--;
		dev->rsvd_pebs--;
	}
	p->state = PEB_BAD;
	dev->bad_peb_count++;
	dev->good_peb_count--;
	return 0;
}

static int erase_queued(struct ubi_device *dev, int64_t sel);

/* Erase one queued PEB (lowest erase_order). 1 done, 0 none, <0 error. */
int ubi_wl_do_one_erase(struct ubi_device *dev)
{
	int64_t sel = -1;
	for (uint32_t i = 0; i < dev->peb_count; i++)
		if (dev->peb[i].state == PEB_ERASE && (sel < 0 || dev->peb[i].erase_order < dev->peb[sel].erase_order))
			sel = i;
	if (sel < 0)
		return 0;
	return erase_queued(dev, sel);
}

/* The queued PEB to erase when a new one is needed and none is free: the
 * least worn, so that churn spreads over every PEB waiting in the queue
 * (FIFO order hands each new LEB whichever PEB was freed longest ago, and
 * erase counts then spread like a random walk: BENCH.md W5). Two orders
 * stay as in a FIFO, because a cut erase can bring back what it did not
 * finish:
 *  - not the PEB queued last: a LEB unmapped to be written again at once
 *    (master, log) must not lose its old PEB to a cut erase before the new
 *    one is written;
 *  - not a PEB while an older copy of the same LEB waits in the queue: an
 *    unmapped LEB must never come back with older contents than the last
 *    ones it had (a bud mapped empty, unmapped, and its stale copy from
 *    before returning as the bud: torture powercut -s 11).
 * PEBs queued by the attach (their LEB unknown here) and PEBs put at the
 * head go first, in FIFO order. -1: use the FIFO. */
static bool older_copy_queued(const struct ubi_device *dev, uint32_t pnum)
{
	const struct ubi_peb *p = &dev->peb[pnum];
	for (uint32_t i = 0; i < dev->peb_count; i++) {
		const struct ubi_peb *q = &dev->peb[i];
		if (i != pnum && q->state == PEB_ERASE && q->leb_known && q->vol_slot == p->vol_slot &&
		    q->lnum == p->lnum && q->erase_order < p->erase_order)
			return true;
	}
	return false;
}

static int64_t pick_for_new_peb(struct ubi_device *dev)
{
	int64_t newest = -1, first = -1, n = 0;
	for (uint32_t i = 0; i < dev->peb_count; i++) {
		const struct ubi_peb *p = &dev->peb[i];
		if (p->state != PEB_ERASE)
			continue;
		n++;
		if (newest < 0 || p->erase_order > dev->peb[newest].erase_order)
			newest = i;
		if (first < 0 || p->erase_order < dev->peb[first].erase_order)
			first = i;
	}
	if (n < 2 || dev->peb[first].erase_order < 0 || !dev->peb[first].leb_known)
		return -1;
	/* lowest EC first; a candidate with an older copy queued is passed
	 * over (rare: a LEB unmapped twice while both PEBs wait) */
	uint64_t floor_ec = 0;
	int64_t floor_order = INT64_MIN;
	for (;;) {
		int64_t sel = -1;
		for (uint32_t i = 0; i < dev->peb_count; i++) {
			const struct ubi_peb *p = &dev->peb[i];
			if (p->state != PEB_ERASE || i == newest || !p->leb_known)
				continue;
			/* candidates after (floor_ec, floor_order) in (ec, order) */
			if (p->ec < floor_ec || (p->ec == floor_ec && p->erase_order <= floor_order))
				continue;
			if (sel < 0 || p->ec < dev->peb[sel].ec ||
			    (p->ec == dev->peb[sel].ec && p->erase_order < dev->peb[sel].erase_order))
				sel = i;
		}
		if (sel < 0)
			return -1;
		if (!older_copy_queued(dev, (uint32_t)sel))
			return sel;
		floor_ec = dev->peb[sel].ec;
		floor_order = dev->peb[sel].erase_order;
	}
}

static int erase_queued(struct ubi_device *dev, int64_t sel)
{
	if (dev->ro || dev->no_write)
		return ubi_err(dev, -EROFS, "cannot erase PEB %u: device is read-only", (uint32_t)sel);
	uint32_t pnum = (uint32_t)sel;
	struct ubi_peb *p = &dev->peb[pnum];
	int ret = ubi_io_sync_erase(dev, pnum, p->torture);
	if (ret > 0) {
		uint64_t ec = (uint64_t)p->ec + (uint64_t)ret;
		if (ec > UBI_MAX_ERASECOUNTER) {
			p->state = PEB_ERRONEOUS;
			ubi_ro_mode(dev, "erase counter overflow");
			return ubi_err(dev, -EROFS, "PEB %u: erase counter overflow (%llu)", pnum,
				       (unsigned long long)ec);
		}
		int err = ubi_io_write_ec_hdr(dev, pnum, ec);
		if (!err) {
			p->ec = (uint32_t)ec;
			p->state = PEB_FREE;
			p->torture = false;
			dev->erase_ops++;
			return 1;
		}
		ret = err;
	}
	if (ret == -EROFS)
		return ret;
	if (ret != -EIO) {
		ubi_ro_mode(dev, "unexpected error while erasing");
		return ret;
	}
	int err = handle_bad_peb(dev, pnum);
	return err ? err : 1;
}

int ubi_wl_flush_erase(struct ubi_device *dev)
{
	for (;;) {
		int r = ubi_wl_do_one_erase(dev);
		if (r <= 0)
			return r;
	}
}

int ubi_wl_get_peb(struct ubi_device *dev, uint32_t *pnum)
{
	for (;;) {
		if (dev->ro || dev->no_write)
			return ubi_err(dev, -EROFS, "no new PEB: device is read-only%s%s",
				       dev->ro_reason[0] ? ": " : "", dev->ro_reason);
		int64_t e = find_mean_entry(dev);
		if (e >= 0) {
			struct ubi_peb *p = &dev->peb[e];
			p->state = PEB_USED;
			p->scrub = false;
			p->prot_until = dev->erase_ops + UBI_PROT_LEN;
			*pnum = (uint32_t)e;
			return 0;
		}
		int64_t sel = pick_for_new_peb(dev);
		int r = sel >= 0 ? erase_queued(dev, sel) : ubi_wl_do_one_erase(dev);
		if (r < 0)
			return r;
		if (r == 0)
			return ubi_err(dev, -ENOSPC, "no free PEBs left");
	}
}

/* One move (scrub or wear leveling). 1 done, 0 nothing to do, <0 error. */
/* Erase (with torture) one PEB at once, ahead of the queue. */
static int erase_now(struct ubi_device *dev, uint32_t pnum)
{
	ubi_wl_put_peb_head(dev, pnum);
	dev->peb[pnum].torture = true;
	int r = ubi_wl_do_one_erase(dev);
	return r < 0 ? r : 0;
}

static int wl_move(struct ubi_device *dev)
{
	int64_t e1 = -1;
	bool scrub = false;
	for (uint32_t i = 0; i < dev->peb_count; i++)
		if (dev->peb[i].state == PEB_USED && dev->peb[i].scrub) {
			e1 = i;
			scrub = true;
			break;
		}
	if (!scrub)
		for (uint32_t i = 0; i < dev->peb_count; i++) {
			const struct ubi_peb *p = &dev->peb[i];
			if (p->state != PEB_USED || p->prot_until > dev->erase_ops)
				continue;
			if (e1 < 0 || p->ec < dev->peb[e1].ec)
				e1 = i;
		}
	if (e1 < 0)
		return 0;
	int64_t e2 = find_wl_entry(dev, 2 * dev->wl_threshold);
	bool erased = false;
	if (e2 < 0) {
		/* No free target: make one first. (With a steady stream of user
		 * writes every freshly erased PEB is taken at once, and a move
		 * would wait forever.) */
		int r = ubi_wl_do_one_erase(dev);
		if (r <= 0)
			return r;
		erased = true;
		e2 = find_wl_entry(dev, 2 * dev->wl_threshold);
		if (e2 < 0)
			return 1;
	}
	if (!scrub && (dev->peb[e2].ec < dev->peb[e1].ec || dev->peb[e2].ec - dev->peb[e1].ec < dev->wl_threshold))
		return erased ? 1 : 0;
	uint32_t from = (uint32_t)e1, to = (uint32_t)e2;
	struct ubi_peb *pf = &dev->peb[from], *pt = &dev->peb[to];
	pt->state = PEB_USED; /* reserved for the move */
	pt->scrub = false;
	int r = ubi_eba_copy_leb(dev, from, to);
	if (r == 0) {
		pt->prot_until = 0;
		ubi_wl_put_peb(dev, from, false);
		if (scrub)
			dev->stats.scrubs++;
		else
			dev->stats.wl_moves++;
		return 1;
	}
	switch (r) {
	case MOVE_CANCEL:
		pt->state = PEB_FREE;
		pf->prot_until = dev->erase_ops + UBI_PROT_LEN;
		pf->scrub = false;
		return 1;
	case MOVE_SOURCE_RD_ERR:
		pt->state = PEB_FREE;
		/* Keep the data where it is (reads report -EBADMSG) and never
		 * try to move this PEB again. */
		pf->scrub = false;
		pf->prot_until = UINT64_MAX;
		dev->erroneous_count++;
		if (dev->erroneous_count > dev->max_erroneous) {
			ubi_ro_mode(dev, "too many erroneous PEBs");
			return ubi_err(dev, -EROFS, "too many erroneous PEBs (%u)", dev->erroneous_count);
		}
		return 1;
	case MOVE_TARGET_WR_ERR:
	case MOVE_TARGET_RD_ERR: {
		/* The target may hold a whole copy with a newer sqnum than the
		 * source: erase (and torture) it now, before any write to the
		 * LEB, or after a power cut attach would prefer the stale copy
		 * and lose what was written to the source since (Linux
		 * wear_leveling_worker: do_sync_erase of the target; found by
		 * `ubikit torture bitflip`). */
		int e = erase_now(dev, to);
		return e < 0 ? e : 1;
	}
	default: {
		/* Target may hold a partial copy: erase it. */
		int e = erase_now(dev, to);
		return e < 0 ? e : r;
	}
	}
}

int ubi_wl_background(struct ubi_device *dev)
{
	if (dev->ro || dev->no_write)
		return 0;
	/* Alternate erasures and moves, as Linux queues a WL check behind
	 * every erasure: a steady stream of erasures must not starve WL. */
	int r;
	if (dev->bg_move_turn) {
		dev->bg_move_turn = false;
		r = wl_move(dev);
		if (r)
			return r;
		return ubi_wl_do_one_erase(dev);
	}
	r = ubi_wl_do_one_erase(dev);
	if (r) {
		dev->bg_move_turn = true;
		return r;
	}
	return wl_move(dev);
}
