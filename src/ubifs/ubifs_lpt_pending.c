/* ubifs_lpt_pending — TEMPORARY stand-in for the LPT of ubifs_lpt.h until
 * the h-lpt branch (the real LPT: read from flash, committed) is merged;
 * this file is then deleted. It does not read or write the LPT area: it
 * scans the main area once (free = space after the last written byte, no
 * dirt known) so that the journal can be exercised before the real LPT is
 * there. It cannot commit. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ubifs/ubifs_lpt.h"
#include "ubifs/ubifs_priv.h"

struct ubifs_lpt {
	struct ubifs_fs *fs;
	struct ubifs_lprops *lp;
	uint32_t n;
};

int ubifs_lpt_open(struct ubifs_fs *fs, struct ubifs_lpt **out)
{
	struct ubifs_lpt *l = calloc(1, sizeof(*l));
	uint8_t *buf = malloc(fs->leb_size);
	if (!l || !buf) {
		free(l);
		free(buf);
		return -ENOMEM;
	}
	l->fs = fs;
	l->n = fs->main_lebs;
	l->lp = calloc(l->n, sizeof(*l->lp));
	for (uint32_t i = 0; i < l->n && l->lp; i++) {
		uint32_t lnum = fs->main_first + i;
		int err = ubifs_leb_read(fs, lnum, 0, buf, fs->leb_size);
		if (err) {
			free(buf);
			ubifs_lpt_close(l);
			return err;
		}
		uint32_t end = fs->leb_size;
		while (end > 0 && buf[end - 1] == 0xFF)
			end--;
		end = (end + fs->min_io_size - 1) / fs->min_io_size * fs->min_io_size;
		l->lp[i] = (struct ubifs_lprops){lnum, fs->leb_size - end, 0,
						 end && buf[20] == UBIFS_IDX_NODE ? UBIFS_LPROPS_INDEX : 0};
	}
	free(buf);
	if (!l->lp) {
		free(l);
		return -ENOMEM;
	}
	*out = l;
	return 0;
}

void ubifs_lpt_close(struct ubifs_lpt *l)
{
	if (!l)
		return;
	free(l->lp);
	free(l);
}

static struct ubifs_lprops *get(struct ubifs_lpt *l, uint32_t lnum)
{
	if (lnum < l->fs->main_first || lnum - l->fs->main_first >= l->n)
		return NULL;
	return &l->lp[lnum - l->fs->main_first];
}

int ubifs_lpt_lookup(struct ubifs_lpt *l, uint32_t lnum, struct ubifs_lprops *out)
{
	struct ubifs_lprops *p = get(l, lnum);
	if (!p)
		return util_err_set(&l->fs->err, -EINVAL, "LPT: LEB %u is not in the main area", lnum);
	*out = *p;
	return 0;
}

int ubifs_lpt_set(struct ubifs_lpt *l, uint32_t lnum, uint32_t free, uint32_t dirty, uint32_t flags)
{
	struct ubifs_lprops *p = get(l, lnum);
	if (!p)
		return util_err_set(&l->fs->err, -EINVAL, "LPT: LEB %u is not in the main area", lnum);
	p->free = free;
	p->dirty = (dirty + 7) & ~7u;
	p->flags = flags;
	return 0;
}

int ubifs_lpt_add_dirt(struct ubifs_lpt *l, uint32_t lnum, uint32_t dirty)
{
	struct ubifs_lprops *p = get(l, lnum);
	if (!p)
		return util_err_set(&l->fs->err, -EINVAL, "LPT: LEB %u is not in the main area", lnum);
	p->dirty = (p->dirty + dirty + 7) & ~7u;
	return 0;
}

void ubifs_lpt_stats(const struct ubifs_lpt *l, struct ubifs_lp_stats *out)
{
	memset(out, 0, sizeof(*out));
	for (uint32_t i = 0; i < l->n; i++) {
		out->total_free += l->lp[i].free;
		out->total_dirty += l->lp[i].dirty;
		out->total_used += l->fs->leb_size - l->lp[i].free - l->lp[i].dirty;
		if (l->lp[i].free == l->fs->leb_size)
			out->empty_lebs++;
		if (l->lp[i].flags & UBIFS_LPROPS_INDEX)
			out->idx_lebs++;
	}
}

static int take(struct ubifs_lpt *l, struct ubifs_lprops *p, uint32_t flags)
{
	p->flags |= UBIFS_LPROPS_TAKEN | flags;
	if (p->free == l->fs->leb_size)
		return ubifs_leb_unmap(l->fs, p->lnum);
	return 0;
}

int ubifs_lpt_find_free(struct ubifs_lpt *l, uint32_t min_space, int squeeze, uint32_t *lnum_out, uint32_t *offs_out)
{
	struct ubifs_lprops *best = NULL;
	for (uint32_t i = 0; i < l->n; i++) {
		struct ubifs_lprops *p = &l->lp[i];
		if ((p->flags & (UBIFS_LPROPS_TAKEN | UBIFS_LPROPS_INDEX)) || p->free < min_space)
			continue;
		if (!best || (squeeze ? p->free < best->free : p->free > best->free))
			best = p;
	}
	if (!best)
		return -ENOSPC;
	*lnum_out = best->lnum;
	*offs_out = l->fs->leb_size - best->free;
	return take(l, best, 0);
}

int ubifs_lpt_find_for_index(struct ubifs_lpt *l, uint32_t *lnum_out)
{
	(void)l, (void)lnum_out;
	return -EOPNOTSUPP;
}

int ubifs_lpt_commit(struct ubifs_lpt *l, struct ubifs_lpt_pos *pos)
{
	(void)pos;
	return util_err_set(&l->fs->err, -EOPNOTSUPP, "commit: the LPT stand-in cannot commit");
}
