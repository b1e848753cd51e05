/* flash_sim — the simulator's operations: NAND/NOR programming rules, erase
 * and wear, bad blocks, bit flips, power cuts, timing and counters.
 * Storage (RAM or file, sidecar) is in flash_sim_store.c. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flash/flash_sim_int.h"


void flash_sim_config_default(struct flash_sim_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->geo.type = FLASH_NAND;
	cfg->geo.page_size = 2048;
	cfg->geo.subpage_size = 2048;
	cfg->geo.oob_size = 64;
	cfg->geo.peb_size = 128 * 1024;
	cfg->geo.peb_count = 2048;
	cfg->nop = 1;
	cfg->in_order = false;
	cfg->endurance = 100000;
	cfg->seed = 1;
	cfg->timing.page_read_ns = 25000;
	cfg->timing.page_program_ns = 200000;
	cfg->timing.block_erase_ns = 1500000;
	cfg->timing.bus_bytes_per_sec = 40000000;
}

int flash_sim_config_profile(struct flash_sim_config *cfg, const char *name)
{
	if (!strcmp(name, "slc")) {
		cfg->geo.type = FLASH_NAND;
		cfg->endurance = 100000;
		return 0;
	}
	if (!strcmp(name, "mlc")) {
		cfg->geo.type = FLASH_NAND;
		cfg->endurance = 3000;
		cfg->bitflip_rate = 1e-4;
		return 0;
	}
	if (!strcmp(name, "nor")) {
		/* NOR: byte-programmable, 64 KiB sectors, slow erase. */
		cfg->geo.type = FLASH_NOR;
		cfg->geo.page_size = 1;
		cfg->geo.subpage_size = 1;
		cfg->geo.oob_size = 0;
		cfg->geo.peb_size = 64 * 1024;
		cfg->file_has_oob = false;
		cfg->endurance = 100000;
		/* per 256-byte chunk: read ~1 us, buffer program ~256 us; sector erase 0.4 s */
		cfg->timing.page_read_ns = 1000;
		cfg->timing.page_program_ns = 256000;
		cfg->timing.block_erase_ns = 400000000;
		cfg->timing.bus_bytes_per_sec = 40000000;
		return 0;
	}
	return -EINVAL;
}

int sim_check_geometry(const struct flash_geometry *g, struct util_err *err)
{
	if (g->type != FLASH_NAND && g->type != FLASH_NOR)
		return util_err_set(err, -EINVAL, "flash type %d is neither NAND nor NOR", (int)g->type);
	if (!g->peb_size || !g->peb_count)
		return util_err_set(err, -EINVAL, "PEB size and PEB count must be non-zero");
	if (g->type == FLASH_NOR) {
		if (g->page_size != 1 || g->subpage_size != 1 || g->oob_size)
			return util_err_set(err, -EINVAL, "NOR flash has 1-byte min I/O and no OOB");
		return 0;
	}
	if (!g->page_size || (g->page_size & (g->page_size - 1)))
		return util_err_set(err, -EINVAL, "page size %u is not a power of two", g->page_size);
	/* Bounds that keep page + OOB (the file layout's stride) far from
	 * wrapping 32 bits, whether the numbers come from options or a sidecar. */
	if (g->page_size > SIM_MAX_PAGE)
		return util_err_set(err, -EINVAL, "page size %u is larger than %u", g->page_size, SIM_MAX_PAGE);
	if (g->oob_size > g->page_size)
		return util_err_set(err, -EINVAL, "OOB size %u is larger than the page size %u", g->oob_size,
				    g->page_size);
	if (!g->subpage_size || g->subpage_size > g->page_size || g->page_size % g->subpage_size ||
	    (g->subpage_size & (g->subpage_size - 1)))
		return util_err_set(err, -EINVAL, "sub-page size %u does not divide page size %u", g->subpage_size,
				    g->page_size);
	if (g->peb_size % g->page_size)
		return util_err_set(err, -EINVAL, "PEB size %u is not a multiple of page size %u", g->peb_size,
				    g->page_size);
	if (g->page_size / g->subpage_size > 255)
		return util_err_set(err, -EINVAL, "too many sub-pages per page");
	return 0;
}

/* ---- helpers ---- */

static int sim_gate(struct flash_sim *s, uint32_t peb)
{
	if (s->cut)
		return util_err_set(&s->err, -EIO, "device is powered off (power cut); reopen it");
	if (peb >= s->dev.geo.peb_count)
		return util_err_set(&s->err, -EINVAL, "PEB %u out of range (device has %u)", peb,
				    s->dev.geo.peb_count);
	return 0;
}

static uint64_t bus_ns(const struct flash_sim *s, uint64_t bytes)
{
	uint64_t rate = s->cfg.timing.bus_bytes_per_sec;
	return rate ? bytes * 1000000000ull / rate : 0;
}

static double rnd_unit(struct flash_sim *s)
{
	return (double)(util_prng_next(&s->rng) >> 11) * (1.0 / 9007199254740992.0);
}

static int violation(struct flash_sim *s, int err)
{
	s->st.rule_violations++;
	return err;
}

/* Is this op the power-cut one? Counts the op. */
static bool sim_op_cuts(struct flash_sim *s)
{
	s->ops++;
	return s->cut_at && s->ops == s->cut_at;
}

static void sim_power_off(struct flash_sim *s)
{
	s->cut = true;
	s->cut_at = 0;
}

/* One more erase; the counter sticks at its maximum instead of wrapping to 0. */
static void wear_inc(struct flash_sim *s, uint32_t peb)
{
	if (s->wear[peb] < UINT32_MAX)
		s->wear[peb]++;
}

/* Remove injected flips of a PEB (on erase, sticky ones end). */
static void flips_drop_peb(struct flash_sim *s, uint32_t peb)
{
	size_t j = 0;
	if (s->path && s->nflips)
		s->sidecar_dirty = true;
	for (size_t i = 0; i < s->nflips; i++)
		if (s->flips[i].peb != peb)
			s->flips[j++] = s->flips[i];
	s->nflips = j;
}

/* Flip a few bits of buf (what an uncorrectable read returns). */
static void flip_bits(struct flash_sim *s, uint8_t *buf, size_t len)
{
	if (!len)
		return;
	for (int i = 0; i < 3; i++) {
		uint64_t r = util_prng_next(&s->rng);
		buf[(r >> 8) % len] ^= (uint8_t)(1u << (r & 7));
	}
}

/* ---- operations ---- */

static int sim_read(struct flash_dev *d, uint32_t peb, uint32_t off, void *buf, size_t len)
{
	struct flash_sim *s = sim_of(d);
	int ret = sim_gate(s, peb);
	if (ret)
		return ret;
	if (off > d->geo.peb_size || len > d->geo.peb_size - off)
		return util_err_set(&s->err, -EINVAL, "read PEB %u:%u len %zu beyond PEB size %u", peb, off, len,
				    d->geo.peb_size);
	s->st.reads++;
	s->st.bytes_read += len;
	s->st.sim_time_ns += bus_ns(s, len);
	if (!len)
		return 0;
	bool stored = sim_peb_stored(s, peb);
	uint8_t *out = buf;
	uint32_t first = off / s->page_size, last = (uint32_t)((off + len - 1) / s->page_size);
	int result = 0;
	/* One storage read for the whole range (a read-only file is read with
	 * pread: one system call, not one per page): data only, it is the
	 * range itself; with OOB, the pages and their OOB into span. */
	const uint8_t *span = NULL;
	if (stored && !s->store_oob) {
		int r = sim_store_read(s, peb, off, buf, len);
		if (r)
			return r;
	} else if (stored && first < last) {
		if (!s->span_buf && !(s->span_buf = malloc(s->peb_stride)))
			return util_err_set(&s->err, -ENOMEM, "read PEB %u: out of memory", peb);
		int r = sim_store_read(s, peb, (uint64_t)first * s->page_stride, s->span_buf,
				       (size_t)(last - first) * s->page_stride + s->page_size);
		if (r)
			return r;
		span = s->span_buf;
	}
	for (uint32_t p = first; p <= last; p++) {
		uint32_t a = p == first ? off % s->page_size : 0;
		uint32_t b = p == last ? (uint32_t)((off + len - 1) % s->page_size) + 1 : s->page_size;
		uint8_t *dst = out + ((uint64_t)p * s->page_size + a - off);
		if (span) {
			memcpy(dst, span + (uint64_t)(p - first) * s->page_stride + a, b - a);
		} else if (stored && s->store_oob) {
			int r = sim_store_read(s, peb, (uint64_t)p * s->page_stride + a, dst, b - a);
			if (r)
				return r;
		} else if (!stored) {
			memset(dst, 0xFF, b - a);
		}
		s->st.pages_read++;
		s->st.sim_time_ns += s->cfg.timing.page_read_ns;

		/* Bit flips: injected places first, then the random rates. */
		int kind = 0; /* 1 correctable, 2 uncorrectable */
		for (size_t i = 0; i < s->nflips; i++) {
			struct sim_flip *f = &s->flips[i];
			if (f->peb != peb || f->page != p)
				continue;
			int k = f->uncorrectable ? 2 : 1;
			if (k > kind)
				kind = k;
			if (!f->sticky) {
				s->flips[i] = s->flips[--s->nflips];
				i--;
			}
		}
		if (s->cfg.bitflip_rate > 0 || s->cfg.uncorrectable_rate > 0) {
			double u = rnd_unit(s);
			if (u < s->cfg.uncorrectable_rate)
				kind = 2;
			else if (u < s->cfg.uncorrectable_rate + s->cfg.bitflip_rate && kind < 1)
				kind = 1;
		}
		if (kind == 2) {
			s->st.ecc_failures++;
			flip_bits(s, dst, b - a);
			result = -EBADMSG;
		} else if (kind == 1) {
			s->st.bitflips_corrected++;
			if (!result)
				result = -EUCLEAN;
		}
	}
	if (result == -EBADMSG)
		util_err_set(&s->err, -EBADMSG, "PEB %u:%u: uncorrectable ECC error", peb, off);
	return result;
}

/* Program bytes [a, b) of a unit at storage pointer dst with src, AND
 * semantics (bits only go 1 -> 0). */
static void program_bytes(uint8_t *dst, const uint8_t *src, size_t n)
{
	for (size_t i = 0; i < n; i++)
		dst[i] &= src[i];
}

/* A power cut during this program: finish the units before cut_unit,
 * leave cut_unit partly programmed, leave the rest untouched. */
static void program_cut_unit(struct flash_sim *s, uint8_t *dst, const uint8_t *src, size_t n)
{
	if (util_prng_next(&s->rng) & 1) {
		/* A prefix of the bytes got programmed. */
		size_t k = n > 1 ? 1 + util_prng_below(&s->rng, n - 1) : 0;
		program_bytes(dst, src, k);
	} else {
		/* A random subset of the bits that should go to 0 did. */
		for (size_t i = 0; i < n; i++)
			dst[i] &= (uint8_t)(src[i] | (uint8_t)util_prng_next(&s->rng));
	}
}

static int sim_write(struct flash_dev *d, uint32_t peb, uint32_t off, const void *buf, size_t len)
{
	struct flash_sim *s = sim_of(d);
	int ret = sim_gate(s, peb);
	if (ret)
		return ret;
	if (d->read_only)
		return util_err_set(&s->err, -EROFS, "device is read-only");
	if (off > d->geo.peb_size || len > d->geo.peb_size - off)
		return violation(s, util_err_set(&s->err, -EINVAL, "program PEB %u:%u len %zu beyond PEB size %u",
						 peb, off, len, d->geo.peb_size));
	if (off % s->unit_size || len % s->unit_size)
		return violation(s, util_err_set(&s->err, -EINVAL,
						 "program PEB %u:%u len %zu not aligned to the %u-byte program unit",
						 peb, off, len, s->unit_size));
	if (!len)
		return 0;
	if (s->bad[peb])
		return util_err_set(&s->err, -EIO, "program of bad PEB %u", peb);

	bool nand = d->geo.type == FLASH_NAND;
	uint32_t first_page = off / s->page_size;
	uint32_t last_page = (uint32_t)((off + len - 1) / s->page_size);
	/* Disk blocks first: a full host disk fails here, before any change. */
	ret = sim_peb_reserve(s, peb);
	if (ret)
		return ret;
	uint8_t *base = sim_peb_materialize(s, peb);
	if (!base)
		return -ENOMEM; /* the reason is in s->err */

	/* NAND rules, checked before anything changes. */
	if (nand) {
		if (s->cfg.in_order && (int32_t)first_page < s->high_page[peb])
			return violation(s, util_err_set(&s->err, -EIO,
							 "PEB %u: program of page %u below page %d already programmed "
							 "(in-order programming)",
							 peb, first_page, s->high_page[peb]));
		for (uint32_t u = off / s->unit_size; u < (off + len) / s->unit_size; u++) {
			uint8_t *n = &s->nop[(uint64_t)peb * s->units_per_peb + u];
			if (*n >= s->cfg.nop)
				return violation(s, util_err_set(&s->err, -EIO,
								 "PEB %u:%u: sub-page programmed %u time(s) since erase "
								 "(NOP limit %u)",
								 peb, u * s->unit_size, *n, s->cfg.nop));
			if (*n == 0) {
				/* Not known as programmed (file reopened, power cut): must be erased. */
				uint32_t p = u * s->unit_size / s->page_size;
				const uint8_t *q = base + (uint64_t)p * s->page_stride + (u * s->unit_size) % s->page_size;
				for (uint32_t i = 0; i < s->unit_size; i++)
					if (q[i] != 0xFF) {
						if (s->cfg.nop > 1)
							break; /* partial programming allowed */
						return violation(s, util_err_set(&s->err, -EIO,
										 "PEB %u:%u: program of a sub-page "
										 "that is not erased",
										 peb, u * s->unit_size));
					}
			}
		}
	}
	if (s->fail_prog[peb]) {
		s->fail_prog[peb] = 0;
		s->ops++;
		s->st.programs++;
		return util_err_set(&s->err, -EIO, "PEB %u: injected program failure", peb);
	}

	bool cut = sim_op_cuts(s);
	s->st.programs++;
	if (s->path)
		s->sidecar_dirty = true; /* the image's mtime moves: record it again */
	/* The unit the cut hits (counted in program units over the request). */
	uint64_t nunits = len / s->unit_size;
	uint64_t cut_unit = cut ? util_prng_below(&s->rng, nunits) : UINT64_MAX;
	const uint8_t *src = buf;
	uint64_t done = 0;
	for (uint32_t p = first_page; p <= last_page; p++) {
		uint32_t a = p == first_page ? off % s->page_size : 0;
		uint32_t b = p == last_page ? (uint32_t)((off + len - 1) % s->page_size) + 1 : s->page_size;
		uint8_t *dst = base + (uint64_t)p * s->page_stride;
		/* NAND programs unit by unit (for the NOP and cut rules); NOR
		 * programs bytes. */
		for (uint32_t x = a; x < b;) {
			uint32_t n = nand ? s->unit_size : b - x;
			uint64_t unit_idx = ((uint64_t)p * s->page_size + x - off) / s->unit_size;
			if (!nand && cut_unit != UINT64_MAX && cut_unit >= unit_idx && cut_unit < unit_idx + n) {
				/* NOR: bytes before the cut byte programmed, cut byte partial. */
				uint32_t k = (uint32_t)(cut_unit - unit_idx);
				program_bytes(dst + x, src + done, k);
				program_cut_unit(s, dst + x + k, src + done + k, 1);
				done += k + 1;
				goto cut_out;
			}
			if (nand && unit_idx == cut_unit) {
				program_cut_unit(s, dst + x, src + done, n);
				s->nop[(uint64_t)peb * s->units_per_peb + (p * s->page_size + x) / s->unit_size]++;
				goto cut_out;
			}
			program_bytes(dst + x, src + done, n);
			if (nand)
				s->nop[(uint64_t)peb * s->units_per_peb + (p * s->page_size + x) / s->unit_size]++;
			s->st.bytes_programmed += n;
			done += n;
			x += n;
		}
		/* NAND: one page program (tPROG) per page touched, whether it
		 * writes the whole page or some of its sub-pages (the driver pads
		 * the rest with 0xFF). NOR: per 256-byte chunk. */
		s->st.pages_programmed++;
		s->st.sim_time_ns += s->cfg.timing.page_program_ns;
		if ((int32_t)p > s->high_page[peb])
			s->high_page[peb] = (int32_t)p;
	}
	s->st.sim_time_ns += bus_ns(s, len);
	return 0;

cut_out:
	s->st.sim_time_ns += bus_ns(s, len) + s->cfg.timing.page_program_ns;
	sim_power_off(s);
	return util_err_set(&s->err, -EIO, "power cut during program of PEB %u:%u len %zu", peb, off, len);
}

/* A power cut during erase, erase_cut_per_page: pages come out erased,
 * untouched, or with random bits set, each on its own; never all 0xFF. */
static void erase_cut_pages(struct flash_sim *s, uint8_t *base)
{
	uint32_t sure = (uint32_t)util_prng_below(&s->rng, s->pages_per_peb);
	for (uint32_t p = 0; p < s->pages_per_peb; p++) {
		uint8_t *q = base + (uint64_t)p * s->page_stride;
		uint64_t mode = util_prng_below(&s->rng, 3);
		if (p == sure)
			mode = 2;
		if (mode == 0)
			memset(q, 0xFF, s->page_stride);
		else if (mode == 2)
			for (uint32_t i = 0; i < s->page_stride; i++)
				q[i] |= (uint8_t)util_prng_next(&s->rng);
	}
	/* Never leave it looking cleanly erased. */
	uint8_t *q = base + (uint64_t)sure * s->page_stride;
	bool all = true;
	for (uint64_t i = 0; i < s->peb_stride && all; i++)
		all = base[i] == 0xFF;
	if (all)
		q[util_prng_below(&s->rng, s->page_size)] = 0x5A;
}

/* 64 random bits, each set with chance k/8 (k in 1..7) */
static uint64_t bits_with_chance(struct util_prng *r, unsigned k)
{
	uint64_t a = util_prng_next(r), b = util_prng_next(r), c = util_prng_next(r);
	switch (k) {
	case 1: return a & b & c;
	case 2: return a & b;
	case 3: return a & (b | c);
	case 4: return a;
	case 5: return a | (b & c);
	case 6: return a | b;
	default: return a | b | c;
	}
}

/* A power cut during erase, as NAND erases: the whole block's cells move
 * towards erased together, so the pages come out alike. A quarter of the
 * cuts leave the block untouched (cut before the pulse did anything), a
 * quarter erased but for a few of its 0 bits that stayed 0, half partly erased:
 * every bit set with one chance (1/8 to 7/8) for the whole block, so
 * every header page comes out damaged. Pages that were erased stay so. */
static void erase_cut_block(struct flash_sim *s, uint8_t *base)
{
	uint64_t mode = util_prng_below(&s->rng, 4);
	if (mode == 0)
		return;
	if (mode == 1) {
		/* 1-4 of the bits that were 0 stay 0 (found by probing; a block
		 * with few 0 bits may keep none) */
		uint64_t at[4];
		uint8_t keep[4];
		unsigned n = 0, want = 1 + (unsigned)util_prng_below(&s->rng, 4);
		for (unsigned tries = 0; n < want && tries < 256; tries++) {
			uint64_t i = util_prng_below(&s->rng, s->peb_stride);
			uint8_t zeros = (uint8_t)~base[i];
			if (!zeros)
				continue;
			unsigned b = (unsigned)util_prng_below(&s->rng, 8);
			while (!(zeros & (1u << b)))
				b = (b + 1) & 7;
			at[n] = i;
			keep[n++] = (uint8_t)~(1u << b);
		}
		memset(base, 0xFF, s->peb_stride);
		for (unsigned k = 0; k < n; k++)
			base[at[k]] &= keep[k];
		return;
	}
	unsigned k = 1 + (unsigned)util_prng_below(&s->rng, 7);
	uint64_t i = 0;
	for (; i + 8 <= s->peb_stride; i += 8) {
		uint64_t w;
		memcpy(&w, base + i, 8);
		if (w != ~0ull) {
			w |= bits_with_chance(&s->rng, k);
			memcpy(base + i, &w, 8);
		}
	}
	for (; i < s->peb_stride; i++)
		base[i] |= (uint8_t)bits_with_chance(&s->rng, k);
}

static void erase_cut(struct flash_sim *s, uint32_t peb)
{
	uint8_t *base = sim_peb_materialize(s, peb);
	if (!base)
		return;
	if (s->cfg.erase_cut_per_page)
		erase_cut_pages(s, base);
	else
		erase_cut_block(s, base);
}

static int sim_erase(struct flash_dev *d, uint32_t peb)
{
	struct flash_sim *s = sim_of(d);
	int ret = sim_gate(s, peb);
	if (ret)
		return ret;
	if (d->read_only)
		return util_err_set(&s->err, -EROFS, "device is read-only");
	if (s->bad[peb])
		return util_err_set(&s->err, -EIO, "erase of bad PEB %u", peb);
	if (!(s->sparse && s->hole[peb])) {
		ret = sim_peb_reserve(s, peb);
		if (ret)
			return ret;
	}
	bool cut = sim_op_cuts(s);
	s->st.erases++;
	s->st.sim_time_ns += s->cfg.timing.block_erase_ns;
	if (cut) {
		wear_inc(s, peb);
		s->sidecar_dirty = true;
		erase_cut(s, peb);
		memset(&s->nop[(uint64_t)peb * s->units_per_peb], 0, s->units_per_peb);
		s->high_page[peb] = -1;
		sim_power_off(s);
		return util_err_set(&s->err, -EIO, "power cut during erase of PEB %u", peb);
	}
	if (s->fail_erase[peb]) {
		s->fail_erase[peb] = 0;
		return util_err_set(&s->err, -EIO, "PEB %u: injected erase failure", peb);
	}
	if (s->cfg.endurance && s->wear[peb] >= s->cfg.endurance) {
		/* Worn out: the erase fails and the block goes bad. */
		s->bad[peb] = SIM_BAD_GROWN;
		s->sidecar_dirty = true;
		return util_err_set(&s->err, -EIO, "PEB %u worn out after %u erases (endurance %u)", peb,
				    s->wear[peb], s->cfg.endurance);
	}
	wear_inc(s, peb);
	s->sidecar_dirty = true;
	sim_peb_erase_store(s, peb);
	memset(&s->nop[(uint64_t)peb * s->units_per_peb], 0, s->units_per_peb);
	s->high_page[peb] = -1;
	flips_drop_peb(s, peb);
	return 0;
}

static int sim_is_bad(struct flash_dev *d, uint32_t peb)
{
	struct flash_sim *s = sim_of(d);
	int ret = sim_gate(s, peb);
	if (ret)
		return ret;
	return s->bad[peb] ? 1 : 0;
}

static int sim_mark_bad(struct flash_dev *d, uint32_t peb)
{
	struct flash_sim *s = sim_of(d);
	int ret = sim_gate(s, peb);
	if (ret)
		return ret;
	if (d->read_only)
		return util_err_set(&s->err, -EROFS, "device is read-only");
	if (!s->bad[peb])
		s->bad[peb] = SIM_BAD_GROWN;
	sim_peb_write_bbm(s, peb);
	s->sidecar_dirty = true;
	return 0;
}

static int sim_sync(struct flash_dev *d)
{
	struct flash_sim *s = sim_of(d);
	if (d->read_only)
		return 0;
	return sim_store_sync(s);
}

/* Free a simulator whether it was fully set up or failed half way. */
static void sim_destroy(struct flash_sim *s)
{
	sim_store_free(s);
	free(s->flips);
	free(s->path);
	free(s);
}

static void sim_close(struct flash_dev *d)
{
	struct flash_sim *s = sim_of(d);
	if (!d->read_only)
		sim_store_sync(s);
	sim_destroy(s);
}

static const char *sim_errmsg(struct flash_dev *d)
{
	return util_err_msg(&sim_of(d)->err);
}

static const struct flash_ops sim_ops = {
	.read = sim_read,
	.write = sim_write,
	.erase = sim_erase,
	.is_bad = sim_is_bad,
	.mark_bad = sim_mark_bad,
	.sync = sim_sync,
	.close = sim_close,
	.errmsg = sim_errmsg,
};

const struct flash_ops *sim_get_ops(void)
{
	return &sim_ops;
}

bool flash_is_sim(const struct flash_dev *dev)
{
	return dev && dev->ops == &sim_ops;
}

/* ---- create / open ---- */

static struct flash_sim *sim_alloc(const struct flash_sim_config *cfg)
{
	struct flash_sim *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->cfg = *cfg;
	s->cfg.path = NULL;
	if (!s->cfg.nop)
		s->cfg.nop = 1;
	s->dev.ops = &sim_ops;
	s->dev.geo = cfg->geo;
	s->fd = -1;
	util_prng_seed(&s->rng, cfg->seed);
	return s;
}

static void copy_err(char *errbuf, size_t errlen, const struct util_err *e, int ret)
{
	if (!errbuf || !errlen)
		return;
	if (util_err_msg(e)[0])
		snprintf(errbuf, errlen, "%s", util_err_msg(e));
	else
		snprintf(errbuf, errlen, "%s", strerror(-ret));
}

int flash_sim_create(const struct flash_sim_config *cfg, struct flash_dev **out)
{
	return flash_sim_create_ex(cfg, out, NULL, 0);
}

int flash_sim_open(const char *path, const struct flash_geometry *geo, bool file_has_oob, bool read_only,
		   struct flash_dev **out)
{
	return flash_sim_open_ex(path, geo, file_has_oob, read_only, out, NULL, 0);
}

int flash_sim_check_geometry(const struct flash_geometry *geo, char *errbuf, size_t errlen)
{
	struct util_err err;
	util_err_clear(&err);
	int ret = sim_check_geometry(geo, &err);
	if (ret)
		copy_err(errbuf, errlen, &err, ret);
	return ret;
}

int flash_sim_create_ex(const struct flash_sim_config *cfg, struct flash_dev **out, char *errbuf, size_t errlen)
{
	struct util_err err;
	util_err_clear(&err);
	*out = NULL;
	int ret = sim_check_geometry(&cfg->geo, &err);
	if (ret) {
		copy_err(errbuf, errlen, &err, ret);
		return ret;
	}
	struct flash_sim *s = sim_alloc(cfg);
	if (!s)
		return -ENOMEM;
	if (cfg->path) {
		s->path = strdup(cfg->path);
		if (!s->path) {
			free(s);
			return -ENOMEM;
		}
	}
	s->store_oob = cfg->path && cfg->file_has_oob && cfg->geo.type == FLASH_NAND;
	s->sparse = cfg->path && cfg->sparse;
	ret = sim_store_init_arrays(s);
	if (!ret && cfg->path)
		ret = sim_store_create_file(s);
	if (ret) {
		copy_err(errbuf, errlen, &s->err, ret);
		sim_destroy(s);
		return ret;
	}
	*out = &s->dev;
	return 0;
}

int flash_sim_open_ex(const char *path, const struct flash_geometry *geo, bool file_has_oob, bool read_only,
		      struct flash_dev **out, char *errbuf, size_t errlen)
{
	struct flash_sim_config cfg;
	flash_sim_config_default(&cfg);
	*out = NULL;
	struct flash_sim *s = sim_alloc(&cfg);
	if (!s)
		return -ENOMEM;
	s->path = strdup(path);
	if (!s->path) {
		free(s);
		return -ENOMEM;
	}
	int ret = sim_store_open_file(s, path, geo, file_has_oob, read_only);
	if (ret) {
		copy_err(errbuf, errlen, &s->err, ret);
		sim_destroy(s);
		return ret;
	}
	*out = &s->dev;
	return 0;
}

const char *flash_sim_last_error(const struct flash_dev *dev)
{
	return flash_is_sim(dev) ? util_err_msg(&csim_of(dev)->err) : "";
}

void flash_sim_get_config(const struct flash_dev *dev, struct flash_sim_config *cfg)
{
	if (!flash_is_sim(dev)) {
		memset(cfg, 0, sizeof(*cfg));
		return;
	}
	*cfg = csim_of(dev)->cfg;
	cfg->geo = dev->geo;
	cfg->path = NULL;
	cfg->file_has_oob = csim_of(dev)->store_oob;
	cfg->sparse = csim_of(dev)->sparse;
}

int flash_sim_bad_kind(const struct flash_dev *dev, uint32_t peb)
{
	if (!flash_is_sim(dev) || peb >= dev->geo.peb_count)
		return -EINVAL;
	return csim_of(dev)->bad[peb];
}

int flash_sim_peb_is_erased(const struct flash_dev *dev, uint32_t peb)
{
	if (!flash_is_sim(dev) || peb >= dev->geo.peb_count)
		return -EINVAL;
	struct flash_sim *s = sim_of((struct flash_dev *)dev);
	if (!sim_peb_stored(s, peb))
		return 1;
	uint8_t *q = malloc(s->page_size);
	if (!q)
		return -ENOMEM;
	int ret = 1;
	for (uint32_t pg = 0; pg < s->pages_per_peb && ret == 1; pg++) {
		int r = sim_store_read(s, peb, (uint64_t)pg * s->page_stride, q, s->page_size);
		if (r)
			ret = r;
		for (uint32_t i = 0; i < s->page_size && ret == 1; i++)
			if (q[i] != 0xFF)
				ret = 0;
	}
	free(q);
	return ret;
}

/* ---- fault injection ---- */

int flash_sim_set_factory_bad(struct flash_dev *dev, uint32_t peb)
{
	if (!flash_is_sim(dev) || peb >= dev->geo.peb_count)
		return -EINVAL;
	struct flash_sim *s = sim_of(dev);
	s->bad[peb] = SIM_BAD_FACTORY;
	if (!dev->read_only)
		sim_peb_write_bbm(s, peb);
	s->sidecar_dirty = true;
	return 0;
}

int flash_sim_inject_bitflip(struct flash_dev *dev, uint32_t peb, uint32_t page, bool uncorrectable, bool sticky)
{
	if (!flash_is_sim(dev) || peb >= dev->geo.peb_count)
		return -EINVAL;
	struct flash_sim *s = sim_of(dev);
	if (page >= s->pages_per_peb)
		return -EINVAL;
	if (s->nflips == s->flips_cap) {
		size_t cap = s->flips_cap ? 2 * s->flips_cap : 16;
		struct sim_flip *f = realloc(s->flips, cap * sizeof(*f));
		if (!f)
			return -ENOMEM;
		s->flips = f;
		s->flips_cap = cap;
	}
	s->flips[s->nflips++] = (struct sim_flip){peb, page, uncorrectable, sticky};
	if (sticky)
		s->sidecar_dirty = true;
	return 0;
}

int flash_sim_set_wear(struct flash_dev *dev, uint32_t peb, uint32_t erase_count)
{
	if (!flash_is_sim(dev) || peb >= dev->geo.peb_count)
		return -EINVAL;
	struct flash_sim *s = sim_of(dev);
	s->wear[peb] = erase_count;
	s->sidecar_dirty = true;
	return 0;
}

uint32_t flash_sim_get_wear(const struct flash_dev *dev, uint32_t peb)
{
	if (!flash_is_sim(dev) || peb >= dev->geo.peb_count)
		return 0;
	return csim_of(dev)->wear[peb];
}

int flash_sim_fail_next_erase(struct flash_dev *dev, uint32_t peb)
{
	if (!flash_is_sim(dev) || peb >= dev->geo.peb_count)
		return -EINVAL;
	sim_of(dev)->fail_erase[peb] = 1;
	return 0;
}

int flash_sim_fail_next_program(struct flash_dev *dev, uint32_t peb)
{
	if (!flash_is_sim(dev) || peb >= dev->geo.peb_count)
		return -EINVAL;
	sim_of(dev)->fail_prog[peb] = 1;
	return 0;
}

void flash_sim_power_cut_after(struct flash_dev *dev, uint64_t ops)
{
	if (!flash_is_sim(dev))
		return;
	struct flash_sim *s = sim_of(dev);
	s->cut_at = ops ? s->ops + ops : 0;
}

void flash_sim_power_cut_random(struct flash_dev *dev, uint64_t seed, uint64_t max_ops)
{
	struct util_prng r;
	util_prng_seed(&r, seed);
	flash_sim_power_cut_after(dev, max_ops ? 1 + util_prng_below(&r, max_ops) : 0);
}

uint64_t flash_sim_op_count(const struct flash_dev *dev)
{
	return flash_is_sim(dev) ? csim_of(dev)->ops : 0;
}

bool flash_sim_is_cut(const struct flash_dev *dev)
{
	return flash_is_sim(dev) && csim_of(dev)->cut;
}

int flash_sim_reopen(struct flash_dev *dev)
{
	if (!flash_is_sim(dev))
		return -EINVAL;
	struct flash_sim *s = sim_of(dev);
	s->cut = false;
	s->cut_at = 0;
	util_err_clear(&s->err);
	return 0;
}

/* ---- counters ---- */

void flash_sim_get_stats(const struct flash_dev *dev, struct flash_stats *st)
{
	if (!flash_is_sim(dev)) {
		memset(st, 0, sizeof(*st));
		return;
	}
	*st = csim_of(dev)->st;
}

void flash_sim_reset_stats(struct flash_dev *dev)
{
	if (flash_is_sim(dev))
		memset(&sim_of(dev)->st, 0, sizeof(sim_of(dev)->st));
}

void flash_sim_wear_stats(const struct flash_dev *dev, struct flash_wear_stats *ws)
{
	memset(ws, 0, sizeof(*ws));
	if (!flash_is_sim(dev) || !dev->geo.peb_count)
		return;
	const struct flash_sim *s = csim_of(dev);
	uint32_t n = dev->geo.peb_count;
	double sum = 0, sq = 0;
	ws->min = UINT32_MAX;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t w = s->wear[i];
		if (w < ws->min)
			ws->min = w;
		if (w > ws->max)
			ws->max = w;
		sum += w;
	}
	ws->mean = sum / n;
	for (uint32_t i = 0; i < n; i++) {
		double dlt = s->wear[i] - ws->mean;
		sq += dlt * dlt;
	}
	ws->stddev = sqrt(sq / n);
}
