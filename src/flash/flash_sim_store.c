/* flash_sim_store — where the simulator keeps its bytes: per-PEB RAM
 * buffers (an erased PEB holds no memory), or a file in nanddump's layout
 * (data only, or data+OOB per page) mapped with mmap, plus the sidecar
 * "<image>.sim" for what that layout cannot hold. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "flash/flash_sim_int.h"
#include "util/util_size.h"

#define SIM_NOR_CHUNK 256u

int sim_store_init_arrays(struct flash_sim *s)
{
	const struct flash_geometry *g = &s->dev.geo;
	if (g->type == FLASH_NOR) {
		s->page_size = g->peb_size % SIM_NOR_CHUNK ? g->peb_size : SIM_NOR_CHUNK;
		s->unit_size = 1;
	} else {
		s->page_size = g->page_size;
		s->unit_size = g->subpage_size;
	}
	s->pages_per_peb = g->peb_size / s->page_size;
	s->units_per_peb = g->type == FLASH_NAND ? g->peb_size / s->unit_size : 0;
	s->page_stride = s->page_size + (s->store_oob ? g->oob_size : 0);
	s->peb_stride = (uint64_t)s->page_stride * s->pages_per_peb;

	uint32_t n = g->peb_count;
	s->ram = calloc(n, sizeof(*s->ram));
	s->hole = calloc(n, 1);
	s->wear = calloc(n, sizeof(*s->wear));
	s->bad = calloc(n, 1);
	s->nop = calloc((size_t)n * (s->units_per_peb ? s->units_per_peb : 1), 1);
	s->high_page = malloc(n * sizeof(*s->high_page));
	s->fail_erase = calloc(n, 1);
	s->fail_prog = calloc(n, 1);
	if (!s->ram || !s->hole || !s->wear || !s->bad || !s->nop || !s->high_page || !s->fail_erase ||
	    !s->fail_prog)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++)
		s->high_page[i] = -1;
	/* RAM: every PEB starts as an unstored erased block. */
	if (!s->path)
		memset(s->hole, 1, n);
	return 0;
}

void sim_store_free(struct flash_sim *s)
{
	if (s->ram) {
		for (uint32_t i = 0; i < s->dev.geo.peb_count; i++)
			free(s->ram[i]);
		free(s->ram);
	}
	if (s->map)
		munmap(s->map, s->map_len);
	if (s->fd >= 0)
		close(s->fd);
	free(s->hole);
	free(s->wear);
	free(s->bad);
	free(s->nop);
	free(s->high_page);
	free(s->fail_erase);
	free(s->fail_prog);
	s->ram = NULL;
	s->map = NULL;
	s->fd = -1;
}

uint8_t *sim_peb_ptr(struct flash_sim *s, uint32_t peb)
{
	if (s->ram[peb])
		return s->ram[peb];
	if (s->hole[peb] || !s->map)
		return NULL;
	return s->map + (uint64_t)peb * s->peb_stride;
}

/* Memory must follow what the image holds, not its size: a read-only image
 * is mapped whole, and every page a scan touches (a 64-byte EC header per
 * PEB of a 4 GiB file of zeros) would stay resident. Readahead is off for
 * that map (MADV_RANDOM, set at open) and the pages are dropped from the
 * mapping (MADV_DONTNEED: they stay in the page cache, reclaimable) after
 * every SIM_RO_RELEASE bytes read. */
#define SIM_RO_RELEASE ((size_t)32 << 20)
void sim_store_read_done(struct flash_sim *s, size_t len)
{
	if (!s->map || !s->dev.read_only)
		return;
	/* A short read still maps a page, and the kernel maps up to 64 KiB of
	 * cached neighbours with it (fault-around). */
	s->map_touched += len + ((size_t)64 << 10);
	if (s->map_touched < SIM_RO_RELEASE)
		return;
	s->map_touched = 0;
	madvise(s->map, s->map_len, MADV_DONTNEED);
}

uint8_t *sim_peb_materialize(struct flash_sim *s, uint32_t peb)
{
	uint8_t *p = sim_peb_ptr(s, peb);
	if (p)
		return p;
	if (s->map) {
		p = s->map + (uint64_t)peb * s->peb_stride;
		memset(p, 0xFF, s->peb_stride);
		s->hole[peb] = 0;
		s->sidecar_dirty = true;
		return p;
	}
	p = malloc(s->peb_stride);
	if (!p)
		return NULL;
	memset(p, 0xFF, s->peb_stride);
	s->ram[peb] = p;
	s->hole[peb] = 0;
	return p;
}

void sim_peb_erase_store(struct flash_sim *s, uint32_t peb)
{
	if (s->ram[peb]) {
		free(s->ram[peb]);
		s->ram[peb] = NULL;
		if (!s->map) {
			s->hole[peb] = 1;
			return;
		}
	}
	if (!s->map) {
		s->hole[peb] = 1;
		return;
	}
	if (s->hole[peb])
		return;
	uint64_t start = (uint64_t)peb * s->peb_stride;
	if (s->sparse && s->fd >= 0 &&
	    fallocate(s->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)start, (off_t)s->peb_stride) == 0) {
		/* The PEB is now a hole (zeros on disk); the sidecar says it is erased. */
		s->hole[peb] = 1;
		s->sidecar_dirty = true;
		return;
	}
	/* Skip the write when already erased: keeps clean file pages clean. */
	uint8_t *p = s->map + start;
	uint64_t i = 0;
	while (i < s->peb_stride && p[i] == 0xFF)
		i++;
	if (i < s->peb_stride)
		memset(p + i, 0xFF, s->peb_stride - i);
}

/* Where Linux puts the bad-block marker: OOB byte 0 of the first page on
 * large-page NAND, byte 5 on 512-byte-page NAND. */
static uint32_t bbm_pos(const struct flash_sim *s)
{
	return s->page_size > 512 ? 0 : 5;
}

void sim_peb_write_bbm(struct flash_sim *s, uint32_t peb)
{
	if (!s->store_oob || s->dev.read_only)
		return;
	uint8_t *p = sim_peb_materialize(s, peb);
	if (p)
		p[s->page_size + bbm_pos(s)] = 0x00;
}

static bool peb_has_bbm(struct flash_sim *s, uint32_t peb)
{
	const uint8_t *p = sim_peb_ptr(s, peb);
	return p && p[s->page_size + bbm_pos(s)] != 0xFF;
}

/* ---- sidecar ---- */

static char *sidecar_path(const char *path)
{
	size_t n = strlen(path);
	char *p = malloc(n + 5);
	if (p) {
		memcpy(p, path, n);
		memcpy(p + n, ".sim", 5);
	}
	return p;
}

static uint64_t stat_mtime_ns(const struct stat *st)
{
	return (uint64_t)st->st_mtim.tv_sec * 1000000000ull + (uint64_t)st->st_mtim.tv_nsec;
}

/* Write "<image>.sim" atomically (temp file + rename). */
static int sidecar_write(struct flash_sim *s)
{
	const struct flash_geometry *g = &s->dev.geo;
	struct stat st;
	if (fstat(s->fd, &st) < 0)
		return -errno;
	char *sp = sidecar_path(s->path);
	if (!sp)
		return -ENOMEM;
	size_t tl = strlen(sp) + 5;
	char *tmp = malloc(tl);
	if (!tmp) {
		free(sp);
		return -ENOMEM;
	}
	snprintf(tmp, tl, "%s.tmp", sp);
	FILE *f = fopen(tmp, "w");
	if (!f) {
		int e = util_err_set(&s->err, -errno, "cannot write sidecar %s: %s", tmp, strerror(errno));
		free(sp);
		free(tmp);
		return e;
	}
	fprintf(f, "ubikit-flash-sim %d\n", SIM_SIDECAR_VERSION);
	fprintf(f, "type %s\n", g->type == FLASH_NOR ? "nor" : "nand");
	fprintf(f, "page_size %u\nsubpage_size %u\noob_size %u\npeb_size %u\npeb_count %u\n", g->page_size,
		g->subpage_size, g->oob_size, g->peb_size, g->peb_count);
	fprintf(f, "file_has_oob %d\nsparse %d\n", s->store_oob ? 1 : 0, s->sparse ? 1 : 0);
	fprintf(f, "nop %u\nin_order %d\nendurance %u\nseed %" PRIu64 "\n", s->cfg.nop, s->cfg.in_order ? 1 : 0,
		s->cfg.endurance, s->cfg.seed);
	fprintf(f, "bitflip_rate %.17g\nuncorrectable_rate %.17g\n", s->cfg.bitflip_rate,
		s->cfg.uncorrectable_rate);
	fprintf(f, "page_read_ns %" PRIu64 "\npage_program_ns %" PRIu64 "\nblock_erase_ns %" PRIu64
		   "\nbus_bytes_per_sec %" PRIu64 "\n",
		s->cfg.timing.page_read_ns, s->cfg.timing.page_program_ns, s->cfg.timing.block_erase_ns,
		s->cfg.timing.bus_bytes_per_sec);
	/* The image's size and mtime when this was written: if the image is
	 * changed by another program later, the hole list no longer holds. */
	fprintf(f, "image_size %" PRIu64 "\nimage_mtime_ns %" PRIu64 "\n", (uint64_t)st.st_size,
		stat_mtime_ns(&st));
	for (uint32_t i = 0; i < g->peb_count; i++)
		if (s->wear[i])
			fprintf(f, "wear %u %u\n", i, s->wear[i]);
	for (uint32_t i = 0; i < g->peb_count; i++)
		if (s->bad[i])
			fprintf(f, "bad %u %s\n", i, s->bad[i] == SIM_BAD_FACTORY ? "factory" : "grown");
	for (size_t i = 0; i < s->nflips; i++)
		if (s->flips[i].sticky)
			fprintf(f, "flip %u %u %s\n", s->flips[i].peb, s->flips[i].page,
				s->flips[i].uncorrectable ? "uncorrectable" : "correctable");
	if (s->sparse)
		for (uint32_t i = 0; i < g->peb_count;) {
			if (!s->hole[i]) {
				i++;
				continue;
			}
			uint32_t j = i;
			while (j + 1 < g->peb_count && s->hole[j + 1])
				j++;
			fprintf(f, "hole %u %u\n", i, j);
			i = j + 1;
		}
	int bad = ferror(f);
	if (fclose(f) != 0 || bad || rename(tmp, sp) != 0) {
		int e = errno ? -errno : -EIO;
		unlink(tmp);
		free(sp);
		free(tmp);
		return util_err_set(&s->err, e, "cannot write sidecar for %s", s->path);
	}
	free(sp);
	free(tmp);
	s->sidecar_dirty = false;
	return 0;
}

struct sidecar {
	bool present;
	struct flash_sim_config cfg;
	uint64_t image_size, image_mtime_ns;
	FILE *f; /* positioned after the header lines, for the per-PEB lines */
};

/* Parse the header keys of the sidecar; per-PEB lines are applied by
 * sidecar_apply once arrays exist. */
static int sidecar_read(struct flash_sim *s, const char *path, struct sidecar *sc)
{
	memset(sc, 0, sizeof(*sc));
	char *sp = sidecar_path(path);
	if (!sp)
		return -ENOMEM;
	FILE *f = fopen(sp, "r");
	if (!f) {
		int e = errno;
		free(sp);
		return e == ENOENT ? 0 : util_err_set(&s->err, -e, "cannot read sidecar %s.sim", path);
	}
	free(sp);
	flash_sim_config_default(&sc->cfg);
	char line[256];
	int version = -1;
	if (!fgets(line, sizeof(line), f) || sscanf(line, "ubikit-flash-sim %d", &version) != 1 ||
	    version != SIM_SIDECAR_VERSION) {
		fclose(f);
		return util_err_set(&s->err, -EINVAL, "%s.sim: not a ubikit flash sidecar of version %d", path,
				    SIM_SIDECAR_VERSION);
	}
	struct flash_sim_config *c = &sc->cfg;
	int lineno = 1;
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		char key[64], val[128];
		if (sscanf(line, "%63s %127s", key, val) != 2)
			goto bad;
		unsigned long long v = strtoull(val, NULL, 0);
		/* 32-bit fields: a number that fits, not whatever strtoull and a cast make of it. */
		static const char *const u32_keys[] = {"page_size", "subpage_size", "oob_size", "peb_size",
						       "peb_count",  "nop",          "endurance"};
		for (size_t i = 0; i < sizeof(u32_keys) / sizeof(u32_keys[0]); i++) {
			uint64_t chk;
			if (!strcmp(key, u32_keys[i]) && (util_parse_uint(val, &chk) || chk > UINT32_MAX))
				goto bad;
		}
		if (!strcmp(key, "type")) {
			if (!strcmp(val, "nand"))
				c->geo.type = FLASH_NAND;
			else if (!strcmp(val, "nor"))
				c->geo.type = FLASH_NOR;
			else
				goto bad;
		} else if (!strcmp(key, "page_size"))
			c->geo.page_size = (uint32_t)v;
		else if (!strcmp(key, "subpage_size"))
			c->geo.subpage_size = (uint32_t)v;
		else if (!strcmp(key, "oob_size"))
			c->geo.oob_size = (uint32_t)v;
		else if (!strcmp(key, "peb_size"))
			c->geo.peb_size = (uint32_t)v;
		else if (!strcmp(key, "peb_count"))
			c->geo.peb_count = (uint32_t)v;
		else if (!strcmp(key, "file_has_oob"))
			c->file_has_oob = v != 0;
		else if (!strcmp(key, "sparse"))
			c->sparse = v != 0;
		else if (!strcmp(key, "nop"))
			c->nop = (unsigned)v;
		else if (!strcmp(key, "in_order"))
			c->in_order = v != 0;
		else if (!strcmp(key, "endurance"))
			c->endurance = (uint32_t)v;
		else if (!strcmp(key, "seed"))
			c->seed = v;
		else if (!strcmp(key, "bitflip_rate"))
			c->bitflip_rate = strtod(val, NULL);
		else if (!strcmp(key, "uncorrectable_rate"))
			c->uncorrectable_rate = strtod(val, NULL);
		else if (!strcmp(key, "page_read_ns"))
			c->timing.page_read_ns = v;
		else if (!strcmp(key, "page_program_ns"))
			c->timing.page_program_ns = v;
		else if (!strcmp(key, "block_erase_ns"))
			c->timing.block_erase_ns = v;
		else if (!strcmp(key, "bus_bytes_per_sec"))
			c->timing.bus_bytes_per_sec = v;
		else if (!strcmp(key, "image_size"))
			sc->image_size = v;
		else if (!strcmp(key, "image_mtime_ns")) {
			sc->image_mtime_ns = v;
			break; /* per-PEB lines follow */
		} else
			goto bad;
	}
	sc->present = true;
	sc->f = f;
	return 0;
bad:
	fclose(f);
	return util_err_set(&s->err, -EINVAL, "%s.sim line %d: cannot parse \"%.60s\"", path, lineno, line);
}

static int sidecar_apply(struct flash_sim *s, struct sidecar *sc, bool holes_valid)
{
	char line[128];
	uint32_t n = s->dev.geo.peb_count;
	int ret = 0;
	while (fgets(line, sizeof(line), sc->f)) {
		unsigned a, b;
		char kind[16];
		if (sscanf(line, "wear %u %u", &a, &b) == 2 && a < n)
			s->wear[a] = b;
		else if (sscanf(line, "bad %u %15s", &a, kind) == 2 && a < n)
			s->bad[a] = !strcmp(kind, "factory") ? SIM_BAD_FACTORY : SIM_BAD_GROWN;
		else if (sscanf(line, "flip %u %u %15s", &a, &b, kind) == 3 && a < n) {
			int r = flash_sim_inject_bitflip(&s->dev, a, b, !strcmp(kind, "uncorrectable"), true);
			if (r) {
				ret = util_err_set(&s->err, r, "%s.sim: bad flip line \"%.60s\"", s->path, line);
				break;
			}
		} else if (sscanf(line, "hole %u %u", &a, &b) == 2 && a <= b && b < n) {
			if (holes_valid)
				memset(s->hole + a, 1, b - a + 1);
		} else {
			ret = util_err_set(&s->err, -EINVAL, "%s.sim: cannot parse \"%.60s\"", s->path, line);
			break;
		}
	}
	fclose(sc->f);
	sc->f = NULL;
	return ret;
}

/* ---- file create / open ---- */

static int map_file(struct flash_sim *s, size_t len, bool rw)
{
	if (!len)
		return 0;
	void *m = mmap(NULL, len, rw ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, s->fd, 0);
	if (m == MAP_FAILED)
		return util_err_set(&s->err, -errno, "cannot mmap %s (%zu bytes): %s", s->path, len, strerror(errno));
	s->map = m;
	s->map_len = len;
	if (!rw)
		madvise(m, len, MADV_RANDOM); /* see sim_store_read_done */
	return 0;
}

int sim_store_create_file(struct flash_sim *s)
{
	s->fd = open(s->path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (s->fd < 0)
		return util_err_set(&s->err, -errno, "cannot create %s: %s", s->path, strerror(errno));
	uint64_t size = s->peb_stride * s->dev.geo.peb_count;
	if (size > SIZE_MAX || ftruncate(s->fd, (off_t)size) < 0)
		return util_err_set(&s->err, -EFBIG, "cannot size %s to %" PRIu64 " bytes", s->path, size);
	int ret = map_file(s, (size_t)size, true);
	if (ret)
		return ret;
	if (s->sparse) {
		memset(s->hole, 1, s->dev.geo.peb_count);
	} else {
		/* In steps, so that a caller can show progress on large devices. */
		const size_t step = (size_t)64 << 20;
		for (size_t done = 0; done < s->map_len;) {
			size_t n = s->map_len - done < step ? s->map_len - done : step;
			memset(s->map + done, 0xFF, n);
			done += n;
			if (s->cfg.progress)
				s->cfg.progress(s->cfg.progress_arg, done, s->map_len);
		}
	}
	s->sidecar_dirty = true;
	return sim_store_sync(s);
}

int sim_store_open_file(struct flash_sim *s, const char *path, const struct flash_geometry *geo,
			bool file_has_oob, bool read_only)
{
	struct sidecar sc;
	int ret = sidecar_read(s, path, &sc);
	if (ret)
		return ret;
	if (sc.present) {
		if (geo && geo->peb_count &&
		    (geo->type != sc.cfg.geo.type || geo->page_size != sc.cfg.geo.page_size ||
		     geo->peb_size != sc.cfg.geo.peb_size || geo->peb_count != sc.cfg.geo.peb_count)) {
			fclose(sc.f);
			return util_err_set(&s->err, -EINVAL, "%s: geometry given differs from its sidecar %s.sim",
					    path, path);
		}
		s->cfg = sc.cfg;
		s->cfg.path = NULL;
		file_has_oob = sc.cfg.file_has_oob;
		s->sparse = sc.cfg.sparse;
		util_prng_seed(&s->rng, s->cfg.seed);
		s->dev.geo = sc.cfg.geo;
	} else {
		if (!geo)
			return util_err_set(&s->err, -EINVAL, "%s: no sidecar %s.sim; the geometry must be given", path,
					    path);
		s->dev.geo = *geo;
	}
	if (!s->cfg.nop)
		s->cfg.nop = 1;
	s->dev.read_only = read_only;
	s->store_oob = file_has_oob && s->dev.geo.type == FLASH_NAND;

	s->fd = open(path, (read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC);
	if (s->fd < 0) {
		ret = util_err_set(&s->err, -errno, "cannot open %s: %s", path, strerror(errno));
		goto fail;
	}
	struct stat st;
	if (fstat(s->fd, &st) < 0) {
		ret = util_err_set(&s->err, -errno, "cannot stat %s: %s", path, strerror(errno));
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		ret = util_err_set(&s->err, -EINVAL, "%s is not a regular file", path);
		goto fail;
	}
	uint64_t fsize = (uint64_t)st.st_size;
	if (!sc.present && s->dev.geo.peb_count == 0) {
		/* Geometry without a count: the image's size decides. */
		uint32_t stride = s->dev.geo.page_size + (s->store_oob ? s->dev.geo.oob_size : 0);
		uint64_t pebs = s->dev.geo.page_size ? s->dev.geo.peb_size / s->dev.geo.page_size : 0;
		uint64_t ps = pebs * stride;
		if (!ps || !fsize) {
			ret = util_err_set(&s->err, -EINVAL, "%s: empty image and no PEB count given", path);
			goto fail;
		}
		s->dev.geo.peb_count = (uint32_t)((fsize + ps - 1) / ps);
	}
	ret = sim_check_geometry(&s->dev.geo, &s->err);
	if (ret) {
		if (sc.present) { /* the numbers came from the sidecar: say so */
			char why[UTIL_ERR_MSG_MAX];
			snprintf(why, sizeof(why), "%s", util_err_msg(&s->err));
			util_err_set(&s->err, ret, "%s.sim: %s", path, why);
		}
		goto fail;
	}
	ret = sim_store_init_arrays(s);
	if (ret)
		goto fail;
	uint64_t size = s->peb_stride * s->dev.geo.peb_count;
	if (fsize > size) {
		ret = util_err_set(&s->err, -EINVAL,
				   "%s: image has %" PRIu64 " bytes, more than the %" PRIu64
				   "-byte device (%u PEBs of %" PRIu64 " bytes%s)",
				   path, fsize, size, s->dev.geo.peb_count, s->peb_stride,
				   s->store_oob ? " with OOB" : "");
		goto fail;
	}
	if (sc.present) {
		/* Holes mean "erased" only if nobody changed the image since. */
		bool holes_valid = sc.image_size == fsize && sc.image_mtime_ns == stat_mtime_ns(&st);
		ret = sidecar_apply(s, &sc, holes_valid && s->sparse);
		if (ret)
			goto fail;
		if (s->sparse && !holes_valid)
			s->sidecar_dirty = true;
	}
	uint32_t n = s->dev.geo.peb_count;
	uint32_t full = (uint32_t)(fsize / s->peb_stride); /* PEBs wholly inside the file */
	if (read_only) {
		ret = map_file(s, (size_t)fsize, false);
		if (ret)
			goto fail;
		for (uint32_t i = full; i < n; i++)
			s->hole[i] = 1;
		if (full < n && fsize % s->peb_stride) {
			/* The PEB cut by the end of the file: a RAM copy padded with 0xFF. */
			uint8_t *p = malloc(s->peb_stride);
			if (!p) {
				ret = -ENOMEM;
				goto fail;
			}
			size_t have = (size_t)(fsize % s->peb_stride);
			memcpy(p, s->map + (uint64_t)full * s->peb_stride, have);
			memset(p + have, 0xFF, s->peb_stride - have);
			s->ram[full] = p;
			s->hole[full] = 0;
		}
	} else {
		if (fsize < size && ftruncate(s->fd, (off_t)size) < 0) {
			ret = util_err_set(&s->err, -errno, "cannot extend %s to %" PRIu64 " bytes: %s", path, size, strerror(errno));
			goto fail;
		}
		ret = map_file(s, (size_t)size, true);
		if (ret)
			goto fail;
		if (fsize < size) {
			/* Missing tail reads as erased flash. */
			uint64_t from = fsize;
			if (s->sparse) {
				uint32_t h = full;
				if (fsize % s->peb_stride) {
					memset(s->map + from, 0xFF, (size_t)((full + 1) * s->peb_stride - from));
					h++;
				}
				for (uint32_t i = h; i < n; i++)
					s->hole[i] = 1;
			} else {
				memset(s->map + from, 0xFF, (size_t)(size - from));
			}
			s->sidecar_dirty = true;
		}
	}
	if (s->store_oob)
		for (uint32_t i = 0; i < n; i++)
			if (!s->bad[i] && peb_has_bbm(s, i))
				s->bad[i] = SIM_BAD_FACTORY;
	if (!read_only && !sc.present)
		s->sidecar_dirty = true;
	return 0;
fail:
	if (sc.f)
		fclose(sc.f);
	return ret;
}

int sim_store_sync(struct flash_sim *s)
{
	if (!s->path || s->fd < 0 || s->dev.read_only)
		return 0;
	if (s->map && msync(s->map, s->map_len, MS_SYNC) < 0)
		return util_err_set(&s->err, -errno, "msync of %s failed: %s", s->path, strerror(errno));
	if (!s->sidecar_dirty)
		return 0;
	return sidecar_write(s);
}
