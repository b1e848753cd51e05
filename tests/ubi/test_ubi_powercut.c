/* test_ubi_powercut — a power cut at EVERY flash operation of a workload of
 * LEB writes, atomic changes, unmaps, maps, background work (erasures and
 * wear-leveling moves) and volume-table updates (create, rename, remove).
 * After each cut the flash is "rebooted" and attached again: attach must
 * succeed, every LEB must hold its old or its new contents and the volume
 * table must be in the old or the new state.
 *
 * What "old or new" means per in-flight operation (as Linux UBI defines it):
 *   atomic change: exactly old or new (of a mapped LEB; an unmapped one
 *          may keep a torn copy, as in Linux: no older copy to fall back to);
 *   write: bytes outside the written range unchanged (a plain write is not
 *          atomic: UBIFS's journal handles torn pages);
 *   unmap: old or unmapped, or anything if the cut op was the erasure of its
 *          PEB (a half-erased NAND block keeps its headers: kernel
 *          documents that unmap is not guaranteed over unclean reboots);
 *   background, map, table updates: no LEB changes at all.
 * Then random workloads with a random cut point, every second one cut again
 * during the recovery attach and background work (2500 rounds; 20000 with
 * UBIKIT_LONG_TESTS=1). Both NAND and NOR geometries. */
#include "ubi_test.h"

enum { NPEB = 20, LMAX = 16256, NLEB = 6, WL_THR = 4, FULL = 0xFFFFFFFFu };

/* Geometry under test: small NAND (LEB 15872) or NOR (LEB 16256). */
static bool g_nor;
static uint32_t L = 15872;

/* ---- a flash wrapper that remembers the kind of the last operation ---- */
struct rec_flash {
	struct flash_dev base;
	struct flash_dev *in;
	int last_op;    /* the operation the power cut hit: 1 program, 2 erase */
	bool erase_cut; /* some power cut so far hit an erase */
};
static int rf_read(struct flash_dev *d, uint32_t p, uint32_t o, void *b, size_t n)
{
	return flash_read(((struct rec_flash *)d)->in, p, o, b, n);
}
/* Operations tried after the cut fail without touching the flash: they must
 * not overwrite which kind of operation the cut hit (an erase there would
 * relax the check of an in-flight unmap to "anything"). */
static void rf_note(struct rec_flash *r, int op)
{
	if (!flash_sim_is_cut(r->in))
		r->last_op = op;
}
static int rf_write(struct flash_dev *d, uint32_t p, uint32_t o, const void *b, size_t n)
{
	rf_note((struct rec_flash *)d, 1);
	return flash_write(((struct rec_flash *)d)->in, p, o, b, n);
}
static int rf_erase(struct flash_dev *d, uint32_t p)
{
	rf_note((struct rec_flash *)d, 2);
	return flash_erase(((struct rec_flash *)d)->in, p);
}
static int rf_is_bad(struct flash_dev *d, uint32_t p)
{
	return flash_is_bad(((struct rec_flash *)d)->in, p);
}
static int rf_mark_bad(struct flash_dev *d, uint32_t p)
{
	return flash_mark_bad(((struct rec_flash *)d)->in, p);
}
static int rf_sync(struct flash_dev *d)
{
	return flash_sync(((struct rec_flash *)d)->in);
}
static void rf_close(struct flash_dev *d)
{
	(void)d;
}
static const struct flash_ops rf_ops = {rf_read, rf_write, rf_erase, rf_is_bad, rf_mark_bad, rf_sync, rf_close, NULL};

/* ---- model ---- */
enum kind { W_WRITE, W_CHANGE, W_UNMAP, W_MAP, W_BG, W_MKVOL, W_RENAME, W_RMVOL, W_UPDATE };
enum { STVOL = 3 }; /* static volume updated by W_UPDATE */
struct step {
	enum kind k;
	uint32_t lnum, off, len;
	uint64_t seed;
};

struct vtstate {
	bool present[4];
	char name[4][16];
	uint32_t size[4];
};

struct model {
	uint8_t leb[NLEB][LMAX];
	bool mapped[NLEB];
	struct vtstate vt;
	uint64_t st_seed; /* static volume contents: t_fill(st_len, st_seed) */
	uint32_t st_len;
};

static uint32_t slen(const struct step *s)
{
	return s->len == FULL ? L : s->len;
}

static void apply(struct model *m, const struct step *s)
{
	static uint8_t buf[LMAX];
	switch (s->k) {
	case W_WRITE:
		t_fill(buf, slen(s), s->seed);
		if (!m->mapped[s->lnum])
			memset(m->leb[s->lnum], 0xFF, L);
		memcpy(m->leb[s->lnum] + s->off, buf, slen(s));
		m->mapped[s->lnum] = true;
		break;
	case W_CHANGE:
		t_fill(buf, slen(s), s->seed);
		memset(m->leb[s->lnum], 0xFF, L);
		memcpy(m->leb[s->lnum], buf, slen(s));
		m->mapped[s->lnum] = true;
		break;
	case W_UNMAP:
		memset(m->leb[s->lnum], 0xFF, L);
		m->mapped[s->lnum] = false;
		break;
	case W_MAP:
		if (!m->mapped[s->lnum])
			memset(m->leb[s->lnum], 0xFF, L);
		m->mapped[s->lnum] = true;
		break;
	case W_BG:
		break;
	case W_MKVOL:
		m->vt.present[s->lnum] = true;
		snprintf(m->vt.name[s->lnum], 16, "vol%u", s->lnum);
		m->vt.size[s->lnum] = s->len;
		break;
	case W_RENAME: /* swap names of volumes lnum and off */
	{
		char t[16];
		memcpy(t, m->vt.name[s->lnum], 16);
		memcpy(m->vt.name[s->lnum], m->vt.name[s->off], 16);
		memcpy(m->vt.name[s->off], t, 16);
		break;
	}
	case W_RMVOL:
		m->vt.present[s->lnum] = false;
		break;
	case W_UPDATE:
		m->st_seed = s->seed;
		m->st_len = s->len;
		break;
	}
}

static int run_step(struct ubi_device *u, const struct step *s)
{
	static uint8_t buf[LMAX];
	switch (s->k) {
	case W_WRITE:
		t_fill(buf, slen(s), s->seed);
		return ubi_leb_write(u, 0, s->lnum, s->off, buf, slen(s));
	case W_CHANGE:
		t_fill(buf, slen(s), s->seed);
		return ubi_leb_change(u, 0, s->lnum, buf, slen(s));
	case W_UNMAP: {
		int err = ubi_leb_unmap(u, 0, s->lnum);
		return err ? err : ubi_sync(u); /* erase now: see the header comment */
	}
	case W_MAP:
		if (ubi_leb_is_mapped(u, 0, s->lnum) == 1)
			return 0;
		return ubi_leb_map(u, 0, s->lnum);
	case W_BG:
		return ubi_flush_background(u);
	case W_MKVOL: {
		char name[16];
		snprintf(name, sizeof(name), "vol%u", s->lnum);
		struct ubi_mkvol_req r = {.vol_id = (int)s->lnum, .name = name, .leb_count = s->len,
					  .vol_type = UBI_VID_DYNAMIC};
		return ubi_vol_create(u, &r, NULL);
	}
	case W_RENAME: {
		struct ubi_vol_info a, b;
		int err = ubi_vol_info(u, s->lnum, &a);
		if (!err)
			err = ubi_vol_info(u, s->off, &b);
		if (err)
			return err;
		struct ubi_rename_req rr[2] = {{s->lnum, b.name}, {s->off, a.name}};
		return ubi_vol_rename(u, rr, 2);
	}
	case W_RMVOL: {
		int err = ubi_vol_remove(u, s->lnum);
		return err ? err : ubi_sync(u);
	}
	case W_UPDATE: {
		static uint8_t img[3 * LMAX];
		t_fill(img, s->len, s->seed);
		return ubi_vol_update(u, STVOL, img, s->len);
	}
	}
	return -EINVAL;
}

static struct ubi_attach_opts opts(void)
{
	struct ubi_attach_opts o;
	ubi_attach_opts_default(&o);
	o.wl_threshold = WL_THR;
	return o;
}

/* Formatted flash, volume 0 "data" (NLEB LEBs) with LEBs 0..3 written, a
 * hot LEB churned so erase counters spread (WL has work to do). */
static void setup(struct rec_flash *rf, struct model *m, uint64_t seed)
{
	memset(rf, 0, sizeof(*rf));
	rf->in = g_nor ? t_nor(NPEB, 16384, seed) : t_nand(NPEB, seed);
	rf->base.ops = &rf_ops;
	rf->base.geo = rf->in->geo;
	memset(m, 0, sizeof(*m));
	for (int i = 0; i < NLEB; i++)
		memset(m->leb[i], 0xFF, L);
	struct ubi_attach_opts o = opts();
	struct ubi_device *u = t_attach_opts(&rf->base, &o);
	t_mkvol(u, "data", NLEB, UBI_VID_DYNAMIC);
	m->vt.present[0] = true;
	strcpy(m->vt.name[0], "data");
	m->vt.size[0] = NLEB;
	for (uint32_t l = 0; l < 4; l++) {
		struct step s = {W_WRITE, l, 0, 3072 * (l + 1), seed * 100 + l};
		T_OK(u, run_step(u, &s));
		apply(m, &s);
	}
	struct ubi_mkvol_req sr = {.vol_id = STVOL, .name = "static", .leb_count = 3, .vol_type = UBI_VID_STATIC};
	T_OK(u, ubi_vol_create(u, &sr, NULL));
	m->vt.present[STVOL] = true;
	strcpy(m->vt.name[STVOL], "static");
	m->vt.size[STVOL] = 3;
	struct step su = {W_UPDATE, 0, 0, 20000, 4242};
	T_OK(u, run_step(u, &su));
	apply(m, &su);
	for (int i = 0; i < 100; i++) {
		struct step s = {W_CHANGE, 5, 0, 1024, seed * 1000 + (uint64_t)i};
		T_OK(u, run_step(u, &s));
		apply(m, &s);
	}
	ubi_detach(u);
}

static bool leb_ok(const struct model *old, const struct model *nw, const struct step *inflight, bool erase_cut,
		   uint32_t l, const uint8_t *got)
{
	if (!memcmp(got, old->leb[l], L))
		return true;
	if (!inflight || inflight->lnum != l || inflight->k > W_MAP)
		return false;
	switch (inflight->k) {
	case W_CHANGE:
		if (!memcmp(got, nw->leb[l], L))
			return true;
		/* Atomic only against a previous version: a torn change of an
		 * unmapped LEB leaves a lone copy with a bad data CRC, which
		 * Linux (and we) keep as it is. Must still not touch the tail. */
		return !old->mapped[l] &&
		       !memcmp(got + slen(inflight), old->leb[l] + slen(inflight), L - slen(inflight));
	case W_WRITE:
		return !memcmp(got, old->leb[l], inflight->off) &&
		       !memcmp(got + inflight->off + inflight->len, old->leb[l] + inflight->off + inflight->len,
			       L - inflight->off - inflight->len);
	case W_UNMAP:
		return !memcmp(got, nw->leb[l], L) || erase_cut;
	default:
		return false;
	}
}

static bool vt_equal(struct ubi_device *u, const struct vtstate *vt)
{
	for (uint32_t i = 0; i < 4; i++) {
		struct ubi_vol_info vi;
		int err = ubi_vol_info(u, i, &vi);
		if (!vt->present[i]) {
			if (err != -ENOENT)
				return false;
			continue;
		}
		if (err || strcmp(vi.name, vt->name[i]) || vi.reserved_pebs != vt->size[i])
			return false;
	}
	return true;
}

/* Attach after a cut and check against old/new. Returns the device. */
static struct ubi_device *verify(struct rec_flash *rf, const struct model *old, const struct model *nw,
				 const struct step *inflight, const char *what)
{
	struct ubi_attach_opts o = opts();
	struct ubi_device *u = NULL;
	char msg[512];
	int err = ubi_attach_msg(&rf->base, &o, &u, msg, sizeof(msg));
	if (err)
		fail_msg("%s: attach after the cut failed: %d %s", what, err, msg);
	static uint8_t got[LMAX];
	for (uint32_t l = 0; l < NLEB; l++) {
		T_OK(u, ubi_leb_read(u, 0, l, 0, got, L));
		if (!leb_ok(old, nw, inflight, rf->erase_cut, l, got))
			fail_msg("%s: LEB %u holds neither old nor new contents (in-flight step kind %d lnum %u)", what, l,
				 inflight ? (int)inflight->k : -1, inflight ? inflight->lnum : 0);
	}
	if (!vt_equal(u, &old->vt) && !(inflight && vt_equal(u, &nw->vt)))
		fail_msg("%s: volume table is neither the old nor the new one", what);
	/* static volume: old, new, or marked as an interrupted update */
	struct ubi_vol_info vi;
	T_OK(u, ubi_vol_info(u, STVOL, &vi));
	bool upd = inflight && inflight->k == W_UPDATE;
	if (vi.upd_marker) {
		if (!upd)
			fail_msg("%s: update marker set but no update was in flight", what);
	} else {
		static uint8_t img[3 * LMAX], want[3 * LMAX];
		uint64_t n = vi.used_bytes;
		for (uint32_t l = 0; l < vi.used_ebs; l++) {
			uint32_t k = l + 1 < vi.used_ebs ? vi.usable_leb_size : vi.last_eb_bytes;
			T_OK(u, ubi_leb_read(u, STVOL, l, 0, img + (size_t)l * vi.usable_leb_size, k));
		}
		T_OK(u, ubi_vol_check(u, STVOL));
		t_fill(want, old->st_len, old->st_seed);
		bool ok = n == old->st_len && !memcmp(img, want, n);
		if (!ok && upd) {
			t_fill(want, nw->st_len, nw->st_seed);
			ok = n == nw->st_len && !memcmp(img, want, n);
		}
		if (!ok)
			fail_msg("%s: static volume holds neither the old nor the new image (%llu bytes)", what,
				 (unsigned long long)n);
	}
	return u;
}

static const struct step workload[] = {
	{W_WRITE, 4, 0, 2048, 11},    {W_WRITE, 4, 2048, 4096, 12}, {W_CHANGE, 0, 0, 8192, 13},
	{W_BG, 0, 0, 0, 0},           {W_UNMAP, 1, 0, 0, 0},        {W_MKVOL, 1, 0, 2, 0},
	{W_CHANGE, 2, 0, FULL, 14},      {W_MAP, 1, 0, 0, 0},          {W_WRITE, 1, 0, 512, 15},
	{W_RENAME, 0, 1, 0, 0},       {W_BG, 0, 0, 0, 0},           {W_CHANGE, 5, 0, 3072, 16},
	{W_MKVOL, 2, 0, 1, 0},        {W_RMVOL, 1, 0, 0, 0},        {W_UNMAP, 4, 0, 0, 0},
	{W_WRITE, 3, 24 * 512, 1024, 17}, {W_UPDATE, 0, 0, 33000, 18}, {W_BG, 0, 0, 0, 0},
};
#define NSTEPS (sizeof(workload) / sizeof(workload[0]))

static void cut_every_op(void)
{
	struct rec_flash rf;
	static struct model m, nw;
	/* reference run: count the operations, check WL really moves data */
	setup(&rf, &m, 1);
	struct flash_stats s0, s1;
	flash_sim_get_stats(rf.in, &s0);
	struct ubi_attach_opts o = opts();
	struct ubi_device *u = t_attach_opts(&rf.base, &o);
	for (size_t i = 0; i < NSTEPS; i++) {
		T_OK(u, run_step(u, &workload[i]));
		apply(&m, &workload[i]);
	}
	struct ubi_stats st;
	ubi_get_stats(u, &st);
	assert_true(st.wl_moves > 0);
	assert_true(st.vtbl_updates >= 4);
	ubi_detach(u);
	flash_sim_get_stats(rf.in, &s1);
	uint64_t nops = (s1.programs - s0.programs) + (s1.erases - s0.erases);
	u = verify(&rf, &m, &m, NULL, "no cut");
	ubi_detach(u);
	flash_close(rf.in);

	unsigned cuts = 0, at_erase = 0;
	for (uint64_t k = 1; k <= nops; k++) {
		setup(&rf, &m, 1);
		u = t_attach_opts(&rf.base, &o);
		flash_sim_power_cut_after(rf.in, k);
		const struct step *inflight = NULL;
		for (size_t i = 0; i < NSTEPS; i++) {
			nw = m;
			apply(&nw, &workload[i]);
			int err = run_step(u, &workload[i]);
			/* after a cut no call completes, whatever it returned (a
			 * failed erase after an unmap does not fail the unmap) */
			if (err || flash_sim_is_cut(rf.in)) {
				if (!flash_sim_is_cut(rf.in))
					fail_msg("cut %llu: step %zu failed without a cut: %d %s", (unsigned long long)k, i,
						 err, ubi_errmsg(u));
				inflight = &workload[i];
				break;
			}
			m = nw;
		}
		ubi_detach(u);
		if (!flash_sim_is_cut(rf.in))
			fail_msg("cut %llu never happened", (unsigned long long)k);
		rf.erase_cut = rf.last_op == 2;
		cuts++;
		at_erase += rf.last_op == 2;
		assert_int_equal(flash_sim_reopen(rf.in), 0);
		char what[64];
		snprintf(what, sizeof(what), "cut at op %llu", (unsigned long long)k);
		u = verify(&rf, &m, &nw, inflight, what);
		/* every 5th: let background work finish, then attach once more */
		if (k % 5 == 0) {
			T_OK(u, ubi_flush_background(u));
			static uint8_t b1[LMAX], b2[LMAX];
			T_OK(u, ubi_leb_read(u, 0, 4, 0, b1, L));
			ubi_detach(u);
			u = t_attach_opts(&rf.base, &o);
			T_OK(u, ubi_leb_read(u, 0, 4, 0, b2, L));
			assert_memory_equal(b1, b2, L);
		}
		ubi_detach(u);
		flash_close(rf.in);
	}
	printf("power cuts (%s): %u cut points (every flash operation of the workload), %u of them during an "
	       "erase\n",
	       g_nor ? "NOR 16 KiB PEBs" : "NAND 512 B pages, 16 KiB PEBs", cuts, at_erase);
	/* what docs/ubi.md ("Measured") promises */
	assert_true(cuts >= (g_nor ? 130u : 88u));
	assert_true(at_erase >= 21);
}

static void test_cut_every_op_nand(void **state)
{
	(void)state;
	g_nor = false;
	L = 15872;
	cut_every_op();
}

static void test_cut_every_op_nor(void **state)
{
	(void)state;
	g_nor = true;
	L = 16256;
	cut_every_op();
}

/* Long random version: random steps, random cut point, and sometimes a
 * second cut during the recovery attach + background work. */
static void test_cut_random(void **state)
{
	(void)state;
	const char *env = getenv("UBIKIT_LONG_TESTS");
	bool lng = env && !strcmp(env, "1");
	struct ubi_attach_opts o = opts();
	unsigned rounds = lng ? 20000 : 2500, double_cuts = 0, cut_rounds = 0;
	for (unsigned r = 0; r < rounds; r++) {
		g_nor = r % 4 == 3;
		L = g_nor ? 16256 : 15872;
		struct util_prng g;
		util_prng_seed(&g, 1000 + r);
		struct rec_flash rf;
		static struct model m, nw;
		setup(&rf, &m, 2 + r % 3);
		struct step steps[40];
		for (int i = 0; i < 40; i++) {
			struct step *s = &steps[i];
			memset(s, 0, sizeof(*s));
			s->lnum = (uint32_t)util_prng_below(&g, NLEB);
			s->seed = util_prng_next(&g);
			switch (util_prng_below(&g, 7)) {
			case 0:
				s->k = W_CHANGE;
				s->len = 512 * (1 + (uint32_t)util_prng_below(&g, 15872 / 512));
				break;
			case 1:
				s->k = W_UNMAP;
				break;
			case 2:
				s->k = W_BG;
				break;
			case 3:
				s->k = W_MAP;
				break;
			case 4:
				s->k = W_UPDATE;
				s->len = 1 + (uint32_t)util_prng_below(&g, 3 * 15872);
				break;
			default:
				s->k = W_WRITE;
				s->lnum = 4 + (uint32_t)util_prng_below(&g, 2);
				s->off = 512 * (uint32_t)util_prng_below(&g, 8);
				s->len = 512 * (1 + (uint32_t)util_prng_below(&g, 4));
				/* keep writes on erased space: unmap first */
				break;
			}
		}
		struct ubi_device *u = t_attach_opts(&rf.base, &o);
		flash_sim_power_cut_random(rf.in, 77 + r, 160);
		const struct step *inflight = NULL;
		for (int i = 0; i < 40; i++) {
			struct step s = steps[i];
			if (s.k == W_WRITE) {
				/* write only to space not written yet since the last map */
				struct step um = {W_UNMAP, s.lnum, 0, 0, 0};
				nw = m;
				apply(&nw, &um);
				if (run_step(u, &um) || flash_sim_is_cut(rf.in)) {
					inflight = &steps[i];
					steps[i] = um;
					break;
				}
				m = nw;
			}
			nw = m;
			apply(&nw, &s);
			int err = run_step(u, &s);
			if (err || flash_sim_is_cut(rf.in)) {
				assert_true(flash_sim_is_cut(rf.in));
				inflight = &steps[i];
				break;
			}
			m = nw;
		}
		ubi_detach(u);
		if (!flash_sim_is_cut(rf.in)) {
			flash_close(rf.in);
			continue;
		}
		rf.erase_cut = rf.last_op == 2;
		cut_rounds++;
		assert_int_equal(flash_sim_reopen(rf.in), 0);
		char what[64];
		snprintf(what, sizeof(what), "random round %u", r);
		if (r % 2) {
			/* second cut during recovery attach / background work */
			double_cuts++;
			flash_sim_power_cut_random(rf.in, 999 + r, 30);
			struct ubi_device *u2 = NULL;
			if (!ubi_attach(&rf.base, &o, &u2)) {
				ubi_flush_background(u2);
				ubi_detach(u2);
			}
			if (flash_sim_is_cut(rf.in) && rf.last_op == 2)
				rf.erase_cut = true;
			flash_sim_reopen(rf.in);
			flash_sim_power_cut_after(rf.in, 0);
		}
		u = verify(&rf, &m, &nw, inflight, what);
		ubi_detach(u);
		flash_close(rf.in);
	}
	printf("random power cuts: %u rounds, %u cut, %u of them cut again during recovery\n", rounds, cut_rounds,
	       double_cuts);
	/* docs/ubi.md: nearly every round is cut, every second one cut twice */
	assert_true(cut_rounds >= rounds * 95 / 100);
	assert_true(double_cuts >= cut_rounds * 45 / 100);
}

/* A cut at every operation of the first attach of a blank flash (the
 * format): the next attach must give a usable, empty device. */
static void test_cut_format(void **state)
{
	(void)state;
	struct ubi_attach_opts o = opts();
	struct flash_dev *f = t_nand(NPEB, 5);
	struct flash_stats s0;
	struct ubi_device *u = t_attach_opts(f, &o);
	ubi_detach(u);
	flash_sim_get_stats(f, &s0);
	flash_close(f);
	uint64_t nops = s0.programs + s0.erases;
	for (uint64_t k = 1; k <= nops; k++) {
		f = t_nand(NPEB, 5);
		flash_sim_power_cut_after(f, k);
		assert_int_not_equal(ubi_attach(f, &o, &u), 0);
		assert_true(flash_sim_is_cut(f));
		assert_int_equal(flash_sim_reopen(f), 0);
		char msg[512];
		int err = ubi_attach_msg(f, &o, &u, msg, sizeof(msg));
		if (err)
			fail_msg("format cut at op %llu: re-attach failed: %d %s", (unsigned long long)k, err, msg);
		struct ubi_dev_info di;
		ubi_dev_info(u, &di);
		assert_int_equal(di.vol_count, 0);
		t_mkvol(u, "v", 2, UBI_VID_DYNAMIC);
		uint8_t b[512];
		memset(b, 0x42, sizeof(b));
		T_OK(u, ubi_leb_write(u, 0, 1, 0, b, 512));
		ubi_detach(u);
		u = t_attach_opts(f, &o);
		uint8_t r[512];
		T_OK(u, ubi_leb_read(u, 0, 1, 0, r, 512));
		assert_memory_equal(b, r, 512);
		ubi_detach(u);
		flash_close(f);
	}
	printf("format power cuts: %llu cut points\n", (unsigned long long)nops);
	assert_true(nops >= 44); /* docs/ubi.md */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cut_every_op_nand),
		cmocka_unit_test(test_cut_every_op_nor),
		cmocka_unit_test(test_cut_random),
		cmocka_unit_test(test_cut_format),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
