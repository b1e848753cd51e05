/* ubifs_lpt_churn — LPT commits without file changes, for the LPT tests
 * (test_ubifs_lpt and, judged by the kernel, tests/vm/ubifs_lpt_kernel.sh).
 *
 * A bare UBIFS image is mounted through a test-only entry point: a
 * read-only mount (no journal, no log) whose volume is writable and whose
 * read_only flag is then cleared, so that only the LPT commit and the
 * master writer touch the flash. Each round changes LPT nodes without
 * changing what the flash holds in the main area: every node marked dirty,
 * random subsets marked dirty, LEBs taken by the finders (which also unmap
 * empty ones) and given back, values set and restored; then the LPT is
 * committed, the master gets the new LPT positions and totals, and the LPT
 * post-commit runs. Many rounds force LPT garbage collection and the ltab
 * wrapping round the LPT area. Checked along the way: the tree against a
 * scan of the flash (ubifs_lpt_check) and against a fresh ubifs_lpt_open of
 * what was written. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ubi/ubi_flat.h"
#include "ubifs/ubifs.h"
#include "ubifs/ubifs_lpt.h"
#include "ubifs/ubifs_priv.h"
#include "ubifs_lpt_churn.h"
#include "util/util_prng.h"

#define FAIL(...) (snprintf(why, whylen, __VA_ARGS__), -1)

static int reopen_equal(struct ubifs_fs *fs, char *why, size_t whylen)
{
	struct ubifs_lpt *l2 = NULL;
	int err = ubifs_lpt_open(fs, &l2);
	if (err)
		return FAIL("re-open of the committed LPT: %s", fs->err.msg);
	int bad = 0;
	for (uint32_t lnum = fs->main_first; lnum < fs->leb_cnt && !bad; lnum++) {
		struct ubifs_lprops a, b;
		ubifs_lpt_lookup(fs->lpt, lnum, &a);
		ubifs_lpt_lookup(l2, lnum, &b);
		if (a.free != b.free || a.dirty != b.dirty ||
		    (a.flags & UBIFS_LPROPS_INDEX) != (b.flags & UBIFS_LPROPS_INDEX))
			bad = FAIL("LEB %u: in memory free %u dirty %u flags %u, re-read %u %u %u", lnum, a.free, a.dirty,
				   a.flags, b.free, b.dirty, b.flags);
	}
	for (uint32_t lnum = fs->lpt_first; lnum <= fs->lpt_last && !bad; lnum++) {
		uint32_t f1, d1, f2, d2;
		ubifs_lpt_ltab(fs->lpt, lnum, &f1, &d1);
		ubifs_lpt_ltab(l2, lnum, &f2, &d2);
		if (f1 != f2 || d1 != d2)
			bad = FAIL("ltab of LPT LEB %u: in memory free %u dirty %u, re-read %u %u", lnum, f1, d1, f2, d2);
	}
	struct ubifs_lp_stats s1, s2;
	ubifs_lpt_stats(fs->lpt, &s1);
	ubifs_lpt_stats(l2, &s2);
	if (!bad && (s1.empty_lebs != s2.empty_lebs || s1.idx_lebs != s2.idx_lebs || s1.total_free != s2.total_free ||
		     s1.total_dirty != s2.total_dirty || s1.total_used != s2.total_used || s1.total_dead != s2.total_dead ||
		     s1.total_dark != s2.total_dark))
		bad = FAIL("totals differ after re-reading");
	ubifs_lpt_close(l2);
	return bad ? -1 : 0;
}

static int commit(struct ubifs_fs *fs, char *why, size_t whylen)
{
	struct ubifs_lpt_pos p;
	if (ubifs_lpt_commit(fs->lpt, &p))
		return FAIL("LPT commit: %s", fs->err.msg);
	struct ubifs_lp_stats st;
	ubifs_lpt_stats(fs->lpt, &st);
	struct ubifs_mst_node *m = &fs->mst;
	m->lpt_lnum = p.lpt_lnum, m->lpt_offs = p.lpt_offs;
	m->nhead_lnum = p.nhead_lnum, m->nhead_offs = p.nhead_offs;
	m->ltab_lnum = p.ltab_lnum, m->ltab_offs = p.ltab_offs;
	m->lsave_lnum = p.lsave_lnum, m->lsave_offs = p.lsave_offs;
	m->lscan_lnum = p.lscan_lnum;
	m->empty_lebs = st.empty_lebs, m->idx_lebs = st.idx_lebs;
	m->total_free = st.total_free, m->total_dirty = st.total_dirty, m->total_used = st.total_used;
	m->total_dead = st.total_dead, m->total_dark = st.total_dark;
	m->leb_cnt = fs->leb_cnt; /* the LPT covers the grown volume */
	if (ubifs_master_write(fs))
		return FAIL("master write: %s", fs->err.msg);
	if (ubifs_lpt_post_commit(fs->lpt))
		return FAIL("LPT post-commit: %s", fs->err.msg);
	return 0;
}

/* mostly a few hot LEBs: the pnodes of the others stay where they are, so
 * LPT LEBs keep live nodes and the LPT area runs short */
static uint32_t rnd_leb(struct util_prng *r, const struct ubifs_fs *fs)
{
	uint32_t n = fs->leb_cnt - fs->main_first;
	if (n > 32 && util_prng_below(r, 40))
		n = 32;
	return fs->main_first + (uint32_t)util_prng_below(r, n);
}

/* one round of changes that leave the main area's accounting as it is */
static int change(struct ubifs_fs *fs, struct util_prng *r, char *why, size_t whylen)
{
	struct ubifs_lpt *lpt = fs->lpt;
	/* marking everything is rare: partly live LPT LEBs must pile up for
	 * the LPT to run short (whole-tree rewrite, LPT GC) */
	unsigned what = (unsigned)util_prng_below(r, 6);
	if (what == 0 && util_prng_below(r, 12))
		what = 1;
	struct ubifs_lprops lp;
	uint32_t lnum, offs;
	int err = 0;
	switch (what) {
	case 0:
		err = ubifs_lpt_mark_all_dirty(lpt);
		break;
	case 1: {
		uint32_t gc, wa;
		struct ubifs_lpt_geom g;
		ubifs_lpt_geometry(lpt, &g);
		ubifs_lpt_counters(lpt, &gc, &wa);
		if (g.big_model && util_prng_below(r, 4) == 0) { /* an LPT GC pass now */
			err = ubifs_lpt_gc(lpt);
			if (err == -ENOSPC)
				err = 0;
			break;
		}
		unsigned n = 1 + (unsigned)util_prng_below(r, 8);
		for (unsigned i = 0; i < n && !err; i++)
			err = ubifs_lpt_mark_dirty(lpt, rnd_leb(r, fs));
		break;
	}
	case 2: /* the same values written back */
		lnum = rnd_leb(r, fs);
		err = ubifs_lpt_lookup(lpt, lnum, &lp);
		if (!err)
			err = ubifs_lpt_set(lpt, lnum, lp.free, lp.dirty, lp.flags);
		break;
	case 3: /* an empty LEB for the index, then given back */
		err = ubifs_lpt_find_for_index(lpt, &lnum);
		if (err == -ENOSPC)
			return 0;
		if (!err)
			err = ubifs_lpt_set(lpt, lnum, UBIFS_LPT_NC, UBIFS_LPT_NC, 0);
		break;
	case 4: /* space for a journal head, then given back */
		err = ubifs_lpt_find_free(lpt, 4096, (int)util_prng_below(r, 2), &lnum, &offs);
		if (err == -ENOSPC)
			return 0;
		if (!err)
			err = ubifs_lpt_lookup(lpt, lnum, &lp);
		if (!err)
			err = ubifs_lpt_set(lpt, lnum, UBIFS_LPT_NC, UBIFS_LPT_NC, lp.flags & ~UBIFS_LPROPS_TAKEN);
		break;
	default: /* an empty LEB taken, dirt added and taken back, released */
		err = ubifs_lpt_find_dirty(lpt, 0, 1, &lp);
		if (err == -ENOSPC)
			return 0;
		if (!err && lp.free == fs->leb_size) {
			err = ubifs_lpt_add_dirt(lpt, lp.lnum, 0);
			if (!err)
				err = ubifs_lpt_set(lpt, lp.lnum, lp.free, lp.dirty, lp.flags);
		}
		if (!err)
			err = ubifs_lpt_set(lpt, lp.lnum, UBIFS_LPT_NC, UBIFS_LPT_NC, lp.flags & ~UBIFS_LPROPS_TAKEN);
		break;
	}
	if (err)
		return FAIL("change %u: %s", what, fs->err.msg);
	return 0;
}

int lpt_churn(const char *img, uint64_t seed, unsigned commits, unsigned scan_every, char *why, size_t whylen,
	      struct lpt_churn_stats *out)
{
	struct ubi_vol_io vol;
	if (ubi_flat_open(img, 0, 0, &vol))
		return FAIL("cannot open %s", img);
	struct ubifs_mount_opts o = {.read_only = 1};
	struct ubifs_fs *fs = NULL;
	struct util_err e = {{0}};
	if (ubifs_mount(&vol, &o, &fs, &e)) {
		ubi_flat_close(&vol);
		return FAIL("mount: %s", e.msg);
	}
	fs->read_only = 0; /* test-only: the LPT commit and the master writer may write */
	struct util_prng r;
	util_prng_seed(&r, seed);
	memset(out, 0, sizeof(*out));
	int rc = 0;
	uint32_t last_ltab = fs->mst.ltab_lnum;
	for (unsigned i = 0; i < commits && !rc; i++) {
		unsigned n = 1 + (unsigned)util_prng_below(&r, 3);
		for (unsigned k = 0; k < n && !rc; k++)
			rc = change(fs, &r, why, whylen);
		if (!rc)
			rc = commit(fs, why, whylen);
		if (!rc && fs->mst.ltab_lnum != last_ltab) {
			out->ltab_moves++;
			last_ltab = fs->mst.ltab_lnum;
		}
		if (!rc && (i % 16 == 15 || i + 1 == commits)) {
			/* the LPT area every time, the main area every scan_every */
			int scan = scan_every && (i / 16 + 1) % scan_every == 0;
			if (scan ? ubifs_lpt_check(fs->lpt) : ubifs_lpt_check_ltab(fs->lpt))
				rc = FAIL("after commit %u: %s", i, fs->err.msg);
			if (!rc)
				rc = reopen_equal(fs, why, whylen);
			out->checks++;
		}
	}
	out->commits = commits;
	out->master_sqnum = fs->max_sqnum;
	for (uint32_t l = fs->lpt_first; l <= fs->lpt_last; l++) {
		uint32_t f, d;
		ubifs_lpt_ltab(fs->lpt, l, &f, &d);
		if (l - fs->lpt_first < 16)
			out->ltab_free[l - fs->lpt_first] = f, out->ltab_dirty[l - fs->lpt_first] = d;
	}
	out->lpt_lebs = fs->lpt_last - fs->lpt_first + 1;
	struct ubifs_lpt_geom g;
	ubifs_lpt_geometry(fs->lpt, &g);
	out->big_model = g.big_model;
	ubifs_lpt_counters(fs->lpt, &out->gc_runs, &out->write_all_runs);
	fs->read_only = 1; /* back to what was mounted: the unmount writes nothing */
	ubifs_unmount(fs);
	if (ubi_flat_close(&vol) && !rc)
		rc = FAIL("write-back of %s failed", img);
	if (rc)
		return rc;
	/* a fresh mount reads what was committed; the check still holds */
	if (ubi_flat_open(img, 0, 1, &vol))
		return FAIL("cannot reopen %s", img);
	if (ubifs_mount(&vol, &o, &fs, &e)) {
		ubi_flat_close(&vol);
		return FAIL("mount after the commits: %s", e.msg);
	}
	if (ubifs_lpt_check(fs->lpt))
		rc = FAIL("fresh mount: %s", fs->err.msg);
	ubifs_unmount(fs);
	ubi_flat_close(&vol);
	return rc;
}
