/* flash_sim_store — where the simulator keeps its bytes: per-PEB RAM
 * buffers (an erased PEB holds no memory), or a file in nanddump's layout
 * (data only, or data+OOB per page) mapped with mmap, plus the sidecar
 * "<image>.sim" for what that layout cannot hold.
 *
 * File safety (issue 8): the image is locked (shared to read, exclusive to
 * write; the sidecar is only written under the image's exclusive lock);
 * disk blocks are allocated before a PEB is written through the map, so a
 * full disk is -ENOSPC and not a SIGBUS; the sidecar names the image it
 * describes (size, inode, mtime) and is replaced atomically (temp file,
 * fsync, rename); a read-write open writes it (or proves it writable)
 * before anything in the image changes. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "flash/flash_sim_int.h"
#include "util/util_crc.h"
#include "util/util_endian.h"
#include "util/util_file.h"
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
	s->reserved = calloc(n, 1);
	if (!s->ram || !s->hole || !s->wear || !s->bad || !s->nop || !s->high_page || !s->fail_erase ||
	    !s->fail_prog || !s->reserved)
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
	free(s->reserved);
	s->reserved = NULL;
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

bool sim_peb_stored(const struct flash_sim *s, uint32_t peb)
{
	if (s->ram[peb])
		return true;
	return !s->hole[peb] && (s->map || s->ro_file);
}

/* Memory must follow what the image holds, not its size: a read-only image
 * is not mapped but read with pread(2) (readahead off, POSIX_FADV_RANDOM at
 * open), so its pages stay in the page cache (reclaimable, shared) and
 * never count in the process's resident set: `ubikit extract` of a 400 MB
 * image keeps a few MiB of RSS, as does a scan of a 4 GiB file of zeros. */
int sim_store_read(struct flash_sim *s, uint32_t peb, uint64_t off, void *dst, size_t n)
{
	if (!sim_peb_stored(s, peb)) {
		memset(dst, 0xFF, n);
		return 0;
	}
	const uint8_t *p = sim_peb_ptr(s, peb);
	if (p && (s->ram[peb] || s->reserved[peb] || s->fd < 0)) {
		memcpy(dst, p + off, n);
		return 0;
	}
	uint64_t pos = (uint64_t)peb * s->peb_stride + off;
	/* A range that is all hole reads as zeros without asking the page
	 * cache, which would zero whole (large) folios for it: a 4 GiB image
	 * of holes cost 26 s of kernel memset for 64-byte header reads. A PEB
	 * with disk blocks everywhere (reserved) has no hole to look for. */
	if (!s->reserved[peb]) {
		off_t d = lseek(s->fd, (off_t)pos, SEEK_DATA);
		if (pos + n <= s->map_len && ((d < 0 && errno == ENXIO) || (d >= 0 && (uint64_t)d >= pos + n))) {
			memset(dst, 0, n);
			return 0;
		}
	}
	/* A read-only file, or part of a mapped one without disk blocks:
	 * read(2) returns zeros for a hole without allocating anything. */
	for (size_t done = 0; done < n;) {
		ssize_t r = pread(s->fd, (uint8_t *)dst + done, n - done, (off_t)(pos + done));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return util_err_set(&s->err, -errno, "%s: read of PEB %u failed: %s", s->path, peb, strerror(errno));
		if (r == 0) {
			memset((uint8_t *)dst + done, 0xFF, n - done); /* beyond the end: erased */
			break;
		}
		done += (size_t)r;
	}
	return 0;
}

/* Which PEBs of the file have disk blocks everywhere (no holes). */
static void find_allocated(struct flash_sim *s, uint64_t fsize)
{
	for (uint32_t i = 0; i < s->dev.geo.peb_count; i++) {
		uint64_t start = (uint64_t)i * s->peb_stride;
		if (start + s->peb_stride > fsize)
			break;
		off_t h = lseek(s->fd, (off_t)start, SEEK_HOLE);
		s->reserved[i] = h < 0 || (uint64_t)h >= start + s->peb_stride;
	}
}

/* Make sure [start, start+len) of the file has disk blocks: fallocate, or
 * where it is not supported, write the holes with zeros (what they read). */
static int reserve_range(int fd, uint64_t start, uint64_t len)
{
	if (fallocate(fd, 0, (off_t)start, (off_t)len) == 0)
		return 0;
	if (errno != EOPNOTSUPP && errno != ENOSYS)
		return -errno;
	static const uint8_t zero[4096];
	uint64_t end = start + len, pos = start;
	while (pos < end) {
		off_t h = lseek(fd, (off_t)pos, SEEK_HOLE);
		if (h < 0 || (uint64_t)h >= end)
			break;
		off_t d = lseek(fd, h, SEEK_DATA);
		uint64_t stop = d < 0 || (uint64_t)d > end ? end : (uint64_t)d;
		for (uint64_t q = (uint64_t)h; q < stop;) {
			size_t n = stop - q < sizeof(zero) ? (size_t)(stop - q) : sizeof(zero);
			ssize_t w = pwrite(fd, zero, n, (off_t)q);
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				return w < 0 ? -errno : -EIO;
			q += (uint64_t)w;
		}
		pos = stop;
	}
	return 0;
}

int sim_peb_reserve(struct flash_sim *s, uint32_t peb)
{
	if (!s->map || s->fd < 0 || s->dev.read_only || s->reserved[peb])
		return 0;
	int r = reserve_range(s->fd, (uint64_t)peb * s->peb_stride, s->peb_stride);
	if (r)
		return util_err_set(&s->err, r, "%s: cannot store PEB %u (%" PRIu64 " bytes at offset %" PRIu64 "): %s",
				    s->path, peb, s->peb_stride, (uint64_t)peb * s->peb_stride, strerror(-r));
	s->reserved[peb] = 1;
	return 0;
}

int flash_sim_reserve(struct flash_dev *dev)
{
	if (!flash_is_sim(dev))
		return -EINVAL;
	struct flash_sim *s = sim_of(dev);
	uint32_t n = dev->geo.peb_count;
	for (uint32_t i = 0; i < n; i++) {
		int r = sim_peb_reserve(s, i);
		if (!r)
			continue;
		/* Give back what this call took for erased (hole) PEBs of a sparse
		 * image; other PEBs read the same allocated or not. */
		for (uint32_t j = 0; j < i; j++) {
			if (s->sparse && s->hole[j] && s->reserved[j] &&
			    fallocate(s->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)((uint64_t)j * s->peb_stride),
				      (off_t)s->peb_stride) == 0)
				s->reserved[j] = 0;
		}
		return r;
	}
	return 0;
}

uint8_t *sim_peb_materialize(struct flash_sim *s, uint32_t peb)
{
	uint8_t *p = sim_peb_ptr(s, peb);
	if (p)
		return p;
	if (s->map) {
		if (sim_peb_reserve(s, peb))
			return NULL;
		p = s->map + (uint64_t)peb * s->peb_stride;
		memset(p, 0xFF, s->peb_stride);
		s->hole[peb] = 0;
		s->sidecar_dirty = true;
		return p;
	}
	p = malloc(s->peb_stride);
	if (!p) {
		util_err_set(&s->err, -ENOMEM, "PEB %u: no memory for its storage", peb);
		return NULL;
	}
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
		s->reserved[peb] = 0; /* its blocks went back to the file system */
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
	uint8_t b = 0xFF;
	sim_store_read(s, peb, s->page_size + bbm_pos(s), &b, 1);
	return b != 0xFF;
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

/* fsync the directory holding path, so a rename in it is durable. */
static void sync_dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
	if (!dir)
		return;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
	free(dir);
}

static void sidecar_print(struct flash_sim *s, FILE *f, const struct stat *st)
{
	const struct flash_geometry *g = &s->dev.geo;
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
	/* Which image this describes: its size, inode and mtime when this was
	 * written. image_mtime_ns ends the header. */
	fprintf(f, "image_size %" PRIu64 "\nimage_ino %" PRIu64 "\nimage_mtime_ns %" PRIu64 "\n", (uint64_t)st->st_size,
		(uint64_t)st->st_ino, stat_mtime_ns(st));
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
}

/* Write "<image>.sim" atomically: a temp file, fsync, rename over the old
 * one. On failure the old sidecar is left as it was. probe_only: only show
 * that the temp file can be created and written (then remove it). */
static int sidecar_write_ex(struct flash_sim *s, bool probe_only)
{
	struct stat st;
	if (fstat(s->fd, &st) < 0)
		return util_err_set(&s->err, -errno, "cannot stat %s: %s", s->path, strerror(errno));
	char *sp = sidecar_path(s->path);
	size_t tl = sp ? strlen(sp) + 5 : 0;
	char *tmp = sp ? malloc(tl) : NULL;
	if (!tmp) {
		free(sp);
		return util_err_set(&s->err, -ENOMEM, "out of memory");
	}
	snprintf(tmp, tl, "%s.tmp", sp);
	int ret = 0;
	const char *what = "create";
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		ret = -errno;
		if (fd >= 0)
			close(fd);
		goto out;
	}
	what = "write";
	sidecar_print(s, f, &st);
	if (fflush(f) != 0 || ferror(f)) {
		ret = errno ? -errno : -EIO;
		fclose(f);
		goto out_rm;
	}
	what = "sync";
	if (fsync(fileno(f)) < 0) {
		ret = -errno;
		fclose(f);
		goto out_rm;
	}
	what = "close";
	if (fclose(f) != 0) {
		ret = errno ? -errno : -EIO;
		goto out_rm;
	}
	if (probe_only)
		goto out_rm;
	what = "rename";
	if (rename(tmp, sp) != 0) {
		ret = -errno;
		goto out_rm;
	}
	sync_dir_of(sp);
	s->sidecar_dirty = false;
	goto out;
out_rm:
	unlink(tmp);
out:
	if (ret)
		util_err_set(&s->err, ret, "cannot %s the sidecar %s%s of %s: %s", what, sp,
			     strcmp(what, "rename") ? ".tmp" : "", s->path, strerror(-ret));
	free(sp);
	free(tmp);
	return ret;
}

static int sidecar_write(struct flash_sim *s)
{
	return sidecar_write_ex(s, false);
}

struct sidecar {
	bool present;
	struct flash_sim_config cfg;
	uint64_t image_size, image_mtime_ns, image_ino;
	bool have_ino;
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
		return e == ENOENT ? 0 : util_err_set(&s->err, -e, "cannot read the sidecar %s.sim: %s", path, strerror(e));
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
		else if (!strcmp(key, "image_ino")) {
			sc->image_ino = v;
			sc->have_ino = true;
		} else if (!strcmp(key, "image_mtime_ns")) {
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

/* Is there a valid UBI EC header at p (magic "UBI#", CRC)? The flash
 * layer checks only this much of UBI, to tell whether the eraseblocks of
 * the image sit where the sidecar's geometry puts them. */
static bool looks_like_ec_hdr(const uint8_t *p)
{
	return get_be32(p) == 0x55424923u && util_crc32(UTIL_CRC32_INIT, p, 60) == get_be32(p + 60);
}

/* The image changed since its sidecar was written (other inode or mtime:
 * replaced, copied, or written by another program). Keep trusting the
 * sidecar unless the UBI EC headers in the image's first eraseblocks show
 * another eraseblock size: UBI writes one at the start of every good PEB,
 * so the headers form a grid from offset 0 with the PEB stride as spacing.
 * A grid with another spacing means the sidecar is not this image's. (A
 * UBI image stored as data inside a volume is not a grid from 0: its
 * headers sit at a data offset.) */
static int check_layout(struct flash_sim *s, const char *path, uint64_t fsize)
{
	uint64_t limit = 16 * s->peb_stride;
	if (limit > (32u << 20))
		limit = 32u << 20;
	if (limit > fsize)
		limit = fsize;
	const size_t chunk = 1u << 20, max_hdrs = 4096;
	uint8_t *buf = malloc(chunk + 64);
	uint64_t *at = malloc(max_hdrs * sizeof(*at));
	if (!buf || !at) {
		free(buf);
		free(at);
		return -ENOMEM;
	}
	size_t found = 0;
	for (uint64_t base = 0; base < limit && found < max_hdrs; base += chunk) {
		size_t want = (size_t)(limit - base < chunk ? limit - base : chunk);
		ssize_t got = pread(s->fd, buf, want + 64 <= fsize - base ? want + 64 : (size_t)(fsize - base), (off_t)base);
		if (got <= 0)
			break;
		for (size_t o = 0; o < want && o + 64 <= (size_t)got && found < max_hdrs; o += 512)
			if (looks_like_ec_hdr(buf + o))
				at[found++] = base + o;
	}
	free(buf);
	uint64_t gap = UINT64_MAX;
	for (size_t k = 1; k < found; k++)
		if (at[k] - at[k - 1] < gap)
			gap = at[k] - at[k - 1];
	bool grid = found >= 2 && at[0] == 0;
	for (size_t k = 0; grid && k < found; k++)
		grid = at[k] % gap == 0;
	/* ... and a dense one: at least half its places hold a header. */
	if (grid && (uint64_t)found * 2 < at[found - 1] / gap + 1)
		grid = false;
	free(at);
	/* Smaller eraseblocks than the sidecar's: two headers already show it;
	 * larger ones: want a few, as erased or bad PEBs leave gaps. */
	if (grid && gap != s->peb_stride && (gap < s->peb_stride || found >= 4))
		return util_err_set(&s->err, -EINVAL,
				    "the sidecar %s.sim does not describe %s: the image was replaced or changed since "
				    "the sidecar was written, and its UBI EC headers are %" PRIu64
				    " bytes apart, not %" PRIu64 " as in the sidecar's geometry; remove %s.sim to open "
				    "the image as a plain dump",
				    path, path, gap, s->peb_stride, path);
	return 0;
}

/* Sparse image whose hole list cannot be trusted: a PEB that is entirely a
 * hole of the file was punched (erased) or never written. */
static void detect_holes(struct flash_sim *s, uint64_t fsize)
{
	for (uint32_t i = 0; i < s->dev.geo.peb_count; i++) {
		uint64_t start = (uint64_t)i * s->peb_stride;
		if (start + s->peb_stride > fsize)
			break;
		off_t d = lseek(s->fd, (off_t)start, SEEK_DATA);
		if ((d < 0 && errno == ENXIO) || (d >= 0 && (uint64_t)d >= start + s->peb_stride))
			s->hole[i] = 1;
	}
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
	return 0;
}

/* Fill [from, from+len) of the file with 0xFF through write(2), which
 * reports a full disk (a store into the map would be a SIGBUS). */
static int fill_ff(int fd, uint64_t from, uint64_t len, void (*progress)(void *, uint64_t, uint64_t), void *arg)
{
	if (!len)
		return 0;
	if (fallocate(fd, 0, (off_t)from, (off_t)len) < 0 && errno != EOPNOTSUPP && errno != ENOSYS)
		return -errno;
	size_t bs = 1u << 20;
	uint8_t *ff = malloc(bs);
	if (!ff)
		return -ENOMEM;
	memset(ff, 0xFF, bs);
	int ret = 0;
	for (uint64_t pos = from; pos < from + len;) {
		size_t n = from + len - pos < bs ? (size_t)(from + len - pos) : bs;
		ssize_t w = pwrite(fd, ff, n, (off_t)pos);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			ret = w < 0 ? -errno : -EIO;
			break;
		}
		pos += (uint64_t)w;
		/* every 64 MiB, so that a caller can show progress on large devices */
		if (progress && ((pos - from) % (64u << 20) == 0 || pos == from + len))
			progress(arg, pos - from, len);
	}
	free(ff);
	return ret;
}

/* Bytes the file system of fd can still give us, counting what the file
 * holds now (it is about to be rewritten). UINT64_MAX if unknown. */
static uint64_t space_for(int fd, const struct stat *st)
{
	struct statvfs vf;
	if (fstatvfs(fd, &vf) < 0 || !vf.f_frsize)
		return UINT64_MAX;
	uint64_t blocks = geteuid() == 0 ? vf.f_bfree : vf.f_bavail;
	return blocks * vf.f_frsize + (uint64_t)st->st_blocks * 512;
}

int sim_store_create_file(struct flash_sim *s)
{
	struct stat st;
	bool existed = lstat(s->path, &st) == 0, emptied = false;
	/* No O_TRUNC: nothing of an existing file changes before it is locked
	 * and every check passed. */
	s->fd = open(s->path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (s->fd < 0)
		return util_err_set(&s->err, -errno, "cannot create %s: %s", s->path, strerror(errno));
	int ret = util_file_lock(s->fd, true, s->path, &s->err);
	if (ret)
		goto fail_rm;
	if (fstat(s->fd, &st) < 0) {
		ret = util_err_set(&s->err, -errno, "cannot stat %s: %s", s->path, strerror(errno));
		goto fail_rm;
	}
	if (!S_ISREG(st.st_mode))
		return util_err_set(&s->err, -EINVAL, "%s is not a regular file", s->path);
	uint64_t size = s->peb_stride * s->dev.geo.peb_count;
	if (size > SIZE_MAX || size > (uint64_t)INT64_MAX) {
		ret = util_err_set(&s->err, -EFBIG, "cannot size %s to %" PRIu64 " bytes", s->path, size);
		goto fail_rm;
	}
	if (!s->sparse) {
		uint64_t room = space_for(s->fd, &st);
		if (room < size) {
			ret = util_err_set(&s->err, -ENOSPC,
					   "cannot create %s: it needs %" PRIu64 " bytes, its file system has %" PRIu64
					   " free: %s (or use --sparse)",
					   s->path, size, room, strerror(ENOSPC));
			goto fail_rm;
		}
	}
	/* The sidecar must be writable before the image is touched. */
	ret = sidecar_write_ex(s, true);
	if (ret)
		goto fail_rm;
	emptied = true;
	if (ftruncate(s->fd, 0) < 0 || ftruncate(s->fd, (off_t)size) < 0) {
		ret = util_err_set(&s->err, -errno, "cannot size %s to %" PRIu64 " bytes: %s", s->path, size,
				   strerror(errno));
		goto fail_rm;
	}
	if (!s->sparse) {
		ret = fill_ff(s->fd, 0, size, s->cfg.progress, s->cfg.progress_arg);
		if (ret) {
			util_err_set(&s->err, ret, "cannot write %s (%" PRIu64 " bytes): %s", s->path, size,
				     strerror(-ret));
			goto fail_rm;
		}
		memset(s->reserved, 1, s->dev.geo.peb_count);
	}
	ret = map_file(s, (size_t)size, true);
	if (ret)
		goto fail_rm;
	if (s->sparse)
		memset(s->hole, 1, s->dev.geo.peb_count);
	s->sidecar_dirty = true;
	ret = sim_store_sync(s);
	if (ret)
		goto fail_rm;
	return 0;
fail_rm:
	/* Leave no half-made image behind: a new file goes, an old one was
	 * already emptied (its old sidecar no longer matches it). */
	if (!existed)
		unlink(s->path);
	else if (emptied && ftruncate(s->fd, 0) < 0) {
		/* nothing more to do */
	}
	return ret;
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
	/* Reads of a scan are small and scattered (headers): no readahead, or
	 * a 4 GiB image of holes fills the page cache with zeros (and takes
	 * 40 s). A read-only file is never mapped (see sim_store_read). */
	if (read_only)
		posix_fadvise(s->fd, 0, 0, POSIX_FADV_RANDOM);
	/* Readers share the image, a writer has it alone. */
	ret = util_file_lock(s->fd, !read_only, path, &s->err);
	if (ret)
		goto fail;
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
	find_allocated(s, fsize);
	if (sc.present) {
		/* Does the sidecar describe this image? Its size must be the one
		 * recorded; with another inode or mtime, the headers in it must
		 * sit where the sidecar's geometry puts eraseblocks. */
		if (sc.image_size && sc.image_size != fsize) {
			ret = util_err_set(&s->err, -EINVAL,
					   "the sidecar %s.sim does not describe %s: it was written for a %" PRIu64
					   "-byte image, %s has %" PRIu64
					   " bytes (replaced or changed by another program); remove %s.sim to open the "
					   "image as a plain dump",
					   path, path, sc.image_size, path, fsize, path);
			goto fail;
		}
		bool same = sc.image_size == fsize && sc.image_mtime_ns == stat_mtime_ns(&st) &&
			    (!sc.have_ino || sc.image_ino == (uint64_t)st.st_ino);
		if (!same) {
			ret = check_layout(s, path, fsize);
			if (ret)
				goto fail;
		}
		/* Holes mean "erased" only if nobody changed the image since. */
		ret = sidecar_apply(s, &sc, same && s->sparse);
		if (ret)
			goto fail;
		if (s->sparse && !same) {
			detect_holes(s, fsize);
			s->sidecar_dirty = true;
		}
	}
	if (!read_only) {
		/* Before anything in the image changes: the sidecar can be
		 * written (a read-only directory, a full disk fail here). */
		ret = sc.present ? sidecar_write(s) : sidecar_write_ex(s, true);
		if (ret)
			goto fail;
	}
	uint32_t n = s->dev.geo.peb_count;
	uint32_t full = (uint32_t)(fsize / s->peb_stride); /* PEBs wholly inside the file */
	if (read_only) {
		s->ro_file = true;
		s->map_len = (size_t)fsize;
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
			memset(p, 0xFF, s->peb_stride);
			s->hole[full] = 0;
			ret = sim_store_read(s, full, 0, p, have);
			if (ret) {
				free(p);
				goto fail;
			}
			s->ram[full] = p;
			s->hole[full] = 0;
		}
	} else {
		if (fsize < size) {
			/* The missing tail is erased flash: 0xFF, or holes when sparse
			 * (the PEB cut by the end of the file is filled up). */
			uint64_t fill_to = s->sparse ? (fsize % s->peb_stride ? (uint64_t)(full + 1) * s->peb_stride : fsize)
						     : size;
			if (!s->sparse) {
				uint64_t room = space_for(s->fd, &st);
				uint64_t need = size - fsize;
				if (room != UINT64_MAX && room - (uint64_t)st.st_blocks * 512 < need) {
					ret = util_err_set(&s->err, -ENOSPC,
							   "cannot extend %s to %" PRIu64 " bytes: %s", path, size,
							   strerror(ENOSPC));
					goto fail;
				}
			}
			if (ftruncate(s->fd, (off_t)size) < 0) {
				ret = util_err_set(&s->err, -errno, "cannot extend %s to %" PRIu64 " bytes: %s", path,
						   size, strerror(errno));
				goto fail;
			}
			ret = fill_ff(s->fd, fsize, fill_to - fsize, NULL, NULL);
			if (ret) {
				util_err_set(&s->err, ret, "cannot extend %s to %" PRIu64 " bytes: %s", path, size,
					     strerror(-ret));
				if (ftruncate(s->fd, (off_t)fsize) < 0) {
					/* the file keeps the tail; it reads as erased flash anyway */
				}
				goto fail;
			}
			if (s->sparse)
				for (uint32_t i = fsize % s->peb_stride ? full + 1 : full; i < n; i++)
					s->hole[i] = 1;
			s->sidecar_dirty = true;
		}
		ret = map_file(s, (size_t)size, true);
		if (ret)
			goto fail;
	}
	if (s->store_oob)
		for (uint32_t i = 0; i < n; i++)
			if (!s->bad[i] && peb_has_bbm(s, i))
				s->bad[i] = SIM_BAD_FACTORY;
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
		return util_err_set(&s->err, -errno, "cannot write %s to disk (msync): %s", s->path, strerror(errno));
	if (!s->sidecar_dirty)
		return 0;
	return sidecar_write(s);
}
