/* test_flash_store_io — the file store's refusals and host I/O failures
 * (flash_sim_store.c): opening what is not an image (a directory, a missing
 * file, an empty file without a PEB count, a file larger than the device),
 * sidecars that do not parse (version, keys, numbers past 32 bits, per-PEB
 * lines, flips on pages that do not exist), and the host refusing to grow a
 * file (RLIMIT_FSIZE: the kernel's EFBIG, as a full disk would refuse) while
 * an image is created or a short one extended. Each refusal must come with
 * the errno the host gave and a message naming the file (or sidecar line),
 * and must leave the files as they were; a good sidecar's wear, bad blocks
 * and flips must be what the device then reports. t_model: the store
 * against a model of the flash bytes (the file in nanddump's layout);
 * t_damaged: store files changed, cut or mismatched behind the sidecar. */
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <cmocka.h>

#include "flash/flash_sim.h"

#define PAGE 2048u
#define PPB 8u
#define PEB (PAGE * PPB)
#define NPEB 8u
#define DIR UBIKIT_BUILD_DIR "/scratch/test_flash_store_io"
#define IMG DIR "/img"
#define SIDE DIR "/img.sim"

static const struct flash_geometry geo = {FLASH_NAND, PAGE, PAGE, 64, PEB, NPEB};

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	char *b = calloc(1, 65536);
	assert_non_null(b);
	size_t n = fread(b, 1, 65535, f);
	b[n] = 0;
	fclose(f);
	return b;
}

static off_t file_size(const char *path)
{
	struct stat st;
	return stat(path, &st) ? -1 : st.st_size;
}

/* A fresh file-backed device of NPEB erased PEBs (image + sidecar). */
static void make_image(bool sparse)
{
	assert_int_equal(system("rm -rf " DIR " && mkdir -p " DIR), 0);
	struct flash_sim_config c;
	flash_sim_config_default(&c);
	c.geo = geo;
	c.path = IMG;
	c.sparse = sparse;
	struct flash_dev *d;
	char msg[256];
	if (flash_sim_create_ex(&c, &d, msg, sizeof(msg)))
		fail_msg("create: %s", msg);
	flash_close(d);
}

static void expect_open_err(const char *path, const struct flash_geometry *g, bool ro, int err, const char *part)
{
	struct flash_dev *d = NULL;
	char msg[512] = "";
	int r = flash_sim_open_ex(path, g, false, ro, &d, msg, sizeof(msg));
	if (r != err || !strstr(msg, part))
		fail_msg("open %s: got %d \"%s\", want %d and \"%s\"", path, r, msg, err, part);
	assert_null(d);
}

static void t_not_images(void **s)
{
	(void)s;
	make_image(false);
	expect_open_err(DIR, &geo, true, -EINVAL, "not a regular file");
	expect_open_err(DIR "/missing", &geo, true, -ENOENT, DIR "/missing");
	write_file(DIR "/empty", "");
	struct flash_geometry nocount = geo;
	nocount.peb_count = 0;
	expect_open_err(DIR "/empty", &nocount, true, -EINVAL, "empty image and no PEB count");
	/* larger than the device it is opened as */
	struct flash_geometry small = geo;
	small.peb_count = NPEB / 2;
	assert_int_equal(rename(SIDE, DIR "/side.bak"), 0);
	expect_open_err(IMG, &small, true, -EINVAL, "more than the");
	/* no sidecar and no geometry */
	expect_open_err(IMG, NULL, true, -EINVAL, "no sidecar");
	/* without a count, the size decides (and a partial last PEB reads 0xFF) */
	assert_int_equal(truncate(IMG, (off_t)PEB * 3 + 100), 0);
	struct flash_dev *d;
	char msg[256];
	if (flash_sim_open_ex(IMG, &nocount, false, true, &d, msg, sizeof(msg)))
		fail_msg("open: %s", msg);
	assert_int_equal(d->geo.peb_count, 4);
	uint8_t page[PAGE];
	assert_int_equal(flash_read(d, 3, 0, page, sizeof(page)), 0);
	for (size_t i = 0; i < sizeof(page); i++)
		assert_int_equal(page[i], 0xFF);
	flash_close(d);
	assert_int_equal(file_size(IMG), (off_t)PEB * 3 + 100); /* read-only: untouched */
}

static void t_sidecars(void **s)
{
	(void)s;
	make_image(false);
	char *good = read_file(SIDE);
	/* the header, then one key per line */
	assert_non_null(strstr(good, "ubikit-flash-sim"));
	static const struct {
		const char *from, *to, *msg;
	} cases[] = {
		{"ubikit-flash-sim", "ubikit-flash-sin", "not a ubikit flash sidecar"},
		{"type nand", "type mram", "cannot parse"},
		{"type nand", "typo nand", "cannot parse"},
		{"type nand", "type", "cannot parse"},
		{"page_size 2048", "page_size 4294967296", "cannot parse"},
		{"peb_count 8", "peb_count -1", "cannot parse"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *at = strstr(good, cases[i].from);
		if (!at)
			fail_msg("sidecar has no \"%s\":\n%s", cases[i].from, good);
		char *bad = calloc(1, strlen(good) + 64);
		assert_non_null(bad);
		memcpy(bad, good, (size_t)(at - good));
		strcat(bad, cases[i].to);
		strcat(bad, at + strlen(cases[i].from));
		write_file(SIDE, bad);
		expect_open_err(IMG, NULL, true, -EINVAL, cases[i].msg);
		expect_open_err(IMG, NULL, false, -EINVAL, cases[i].msg);
		char *after = read_file(SIDE);
		assert_string_equal(after, bad); /* a refused sidecar is never rewritten */
		free(after);
		free(bad);
	}
	/* per-PEB lines: applied when good, refused when not */
	char *t = calloc(1, strlen(good) + 256);
	assert_non_null(t);
	strcpy(t, good);
	strcat(t, "wear 2 777\nbad 5 factory\nbad 6 grown\nflip 1 3 correctable\n");
	write_file(SIDE, t);
	struct flash_dev *d;
	char msg[256];
	if (flash_sim_open_ex(IMG, NULL, false, true, &d, msg, sizeof(msg)))
		fail_msg("open: %s", msg);
	assert_int_equal(flash_sim_get_wear(d, 2), 777);
	assert_int_equal(flash_sim_bad_kind(d, 5), 2);
	assert_int_equal(flash_sim_bad_kind(d, 6), 1);
	assert_int_equal(flash_sim_bad_kind(d, 4), 0);
	uint8_t page[PAGE];
	assert_int_equal(flash_read(d, 1, 3 * PAGE, page, PAGE), -EUCLEAN);
	assert_int_equal(flash_read(d, 1, 2 * PAGE, page, PAGE), 0);
	flash_close(d);
	static const char *bad_lines[] = {"flip 1 99 correctable\n", "wear x\n", "hole 5 2\n", "nonsense\n"};
	for (size_t i = 0; i < sizeof(bad_lines) / sizeof(bad_lines[0]); i++) {
		strcpy(t, good);
		strcat(t, bad_lines[i]);
		write_file(SIDE, t);
		expect_open_err(IMG, NULL, true, -EINVAL, i == 0 ? "bad flip line" : "cannot parse");
	}
	free(t);
	free(good);
}

/* The host refuses to grow files past 8 PEBs' worth of bytes minus one. */
static struct rlimit old_fsize;
static void limit_file_size(rlim_t bytes)
{
	signal(SIGXFSZ, SIG_IGN); /* EFBIG instead of the signal */
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old_fsize), 0);
	struct rlimit r = {bytes, old_fsize.rlim_max};
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &r), 0);
}
static void unlimit(void)
{
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old_fsize), 0);
	signal(SIGXFSZ, SIG_DFL);
}

static void t_host_refuses_growth(void **s)
{
	(void)s;
	assert_int_equal(system("rm -rf " DIR " && mkdir -p " DIR), 0);
	for (int sparse = 0; sparse <= 1; sparse++) {
		struct flash_sim_config c;
		flash_sim_config_default(&c);
		c.geo = geo;
		c.path = IMG;
		c.sparse = sparse;
		struct flash_dev *d = NULL;
		char msg[512] = "";
		limit_file_size((rlim_t)PEB * NPEB - 1);
		int r = flash_sim_create_ex(&c, &d, msg, sizeof(msg));
		unlimit();
		if (r != -EFBIG || !strstr(msg, IMG))
			fail_msg("create (sparse %d) past the file size limit: %d \"%s\"", sparse, r, msg);
		assert_null(d);
		/* nothing left behind: neither the image nor its sidecar */
		assert_int_equal(access(IMG, F_OK), -1);
		assert_int_equal(access(SIDE, F_OK), -1);
	}
	/* a short image (no sidecar) opened read-write is extended to the
	 * device's size: refused, the file keeps its size and bytes */
	FILE *f = fopen(IMG, "w");
	assert_non_null(f);
	for (unsigned i = 0; i < PEB; i++)
		fputc(0xA5, f);
	fclose(f);
	struct flash_dev *d = NULL;
	char msg[512] = "";
	limit_file_size((rlim_t)PEB * 2);
	int r = flash_sim_open_ex(IMG, &geo, false, false, &d, msg, sizeof(msg));
	unlimit();
	if (r != -EFBIG || !strstr(msg, "cannot extend " IMG))
		fail_msg("extend past the file size limit: %d \"%s\"", r, msg);
	assert_null(d);
	assert_int_equal(file_size(IMG), (off_t)PEB);
	/* within the limit it works, and the tail is erased flash */
	if (flash_sim_open_ex(IMG, &geo, false, false, &d, msg, sizeof(msg)))
		fail_msg("open: %s", msg);
	uint8_t page[PAGE];
	assert_int_equal(flash_read(d, 0, 0, page, PAGE), 0);
	assert_int_equal(page[0], 0xA5);
	assert_int_equal(flash_read(d, NPEB - 1, 0, page, PAGE), 0);
	assert_int_equal(page[PAGE - 1], 0xFF);
	flash_close(d);
	assert_int_equal(file_size(IMG), (off_t)PEB * NPEB);
	assert_int_equal(system("rm -rf " DIR), 0);
}

/* ---- the store against a model of the flash bytes ----
 * Random programs (NAND: whole pages, each once, multi-page spans; NOR:
 * AND-programming anywhere), erases, grown bad blocks and wear, with the
 * device closed and opened again (read-write and read-only, sidecar kept or
 * removed) between rounds. The model is what the chip holds; the file must
 * hold it in nanddump's layout (page data, then the page's OOB when the
 * file has OOB; the Linux bad-block marker in the first page's OOB: byte
 * 0 on large-page NAND, byte 5 on 512-byte pages; a sparse file's erased
 * PEBs may be holes). */
struct model {
	struct flash_geometry g;
	bool oob, sparse;
	uint32_t stride; /* bytes per page in the file */
	uint8_t *data;   /* peb_count x peb_size */
	uint8_t *prog;   /* per page: programmed since the last erase */
	uint8_t *bad;
	uint32_t *wear;
};

static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
	return *x;
}

static uint32_t m_pages(const struct model *m)
{
	return m->g.type == FLASH_NOR ? 1 : m->g.peb_size / m->g.page_size;
}

/* The device's view against the model: every byte, bad blocks, wear. */
static void m_check_dev(const struct model *m, struct flash_dev *d, bool bad_known, bool wear_known, uint64_t *x)
{
	uint32_t ps = m->g.peb_size;
	uint8_t *buf = malloc(ps);
	assert_non_null(buf);
	for (uint32_t b = 0; b < m->g.peb_count; b++) {
		const uint8_t *want = m->data + (size_t)b * ps;
		assert_int_equal(flash_read(d, b, 0, buf, ps), 0);
		if (memcmp(buf, want, ps))
			fail_msg("PEB %u differs from the model", b);
		bool erased = true;
		for (uint32_t i = 0; i < ps && erased; i++)
			erased = want[i] == 0xFF;
		assert_int_equal(flash_sim_peb_is_erased(d, b), erased ? 1 : 0);
		if (bad_known)
			assert_int_equal(flash_is_bad(d, b), m->bad[b] ? 1 : 0);
		if (wear_known)
			assert_int_equal(flash_sim_get_wear(d, b), m->wear[b]);
		/* small scattered reads (headers), across page boundaries */
		for (int k = 0; k < 8; k++) {
			uint32_t len = 1 + (uint32_t)(rnd(x) % 300);
			uint32_t off = (uint32_t)(rnd(x) % (ps - len + 1));
			assert_int_equal(flash_read(d, b, off, buf, len), 0);
			if (memcmp(buf, want + off, len))
				fail_msg("PEB %u: %u bytes at %u differ from the model", b, len, off);
		}
	}
	free(buf);
}

/* The file against the model, in nanddump's layout. */
static void m_check_file(const struct model *m, const char *path, bool bbm_known)
{
	uint32_t pages = m_pages(m), pg = m->g.type == FLASH_NOR ? m->g.peb_size : m->g.page_size;
	uint64_t peb_stride = (uint64_t)m->stride * pages;
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	uint8_t *buf = malloc(peb_stride);
	assert_non_null(buf);
	for (uint32_t b = 0; b < m->g.peb_count; b++) {
		size_t got = fread(buf, 1, peb_stride, f);
		if (got != peb_stride)
			fail_msg("%s: PEB %u: %zu bytes, want %" PRIu64, path, b, got, peb_stride);
		const uint8_t *want = m->data + (size_t)b * m->g.peb_size;
		bool erased = true;
		for (uint32_t i = 0; i < m->g.peb_size && erased; i++)
			erased = want[i] == 0xFF;
		if (m->sparse && erased && !m->bad[b]) {
			/* a hole (zeros) or erased bytes, all of the PEB alike */
			bool zero = true, ff = true;
			for (uint64_t i = 0; i < peb_stride; i++)
				zero = zero && !buf[i], ff = ff && buf[i] == 0xFF;
			if (!zero && !ff)
				fail_msg("%s: erased PEB %u of a sparse file is neither a hole nor 0xFF", path, b);
			continue;
		}
		for (uint32_t p = 0; p < pages; p++) {
			const uint8_t *fp = buf + (size_t)p * m->stride;
			if (memcmp(fp, want + (size_t)p * pg, pg))
				fail_msg("%s: PEB %u page %u: data differs from the model", path, b, p);
			for (uint32_t i = 0; m->oob && i < m->g.oob_size; i++) {
				uint8_t w = 0xFF;
				if (p == 0 && i == (m->g.page_size > 512 ? 0u : 5u) && m->bad[b] && bbm_known)
					w = 0x00;
				if (fp[pg + i] != w && !(p == 0 && m->bad[b] && !bbm_known))
					fail_msg("%s: PEB %u page %u OOB byte %u: %#x, want %#x", path, b, p, i, fp[pg + i], w);
			}
		}
	}
	assert_int_equal(fgetc(f), EOF); /* nothing after the last PEB */
	fclose(f);
	free(buf);
}

static void m_ops(struct model *m, struct flash_dev *d, uint64_t *x, int n)
{
	uint32_t ps = m->g.peb_size, pages = m_pages(m);
	bool nor = m->g.type == FLASH_NOR;
	uint8_t *w = malloc(ps);
	assert_non_null(w);
	for (int op = 0; op < n; op++) {
		uint32_t b = (uint32_t)(rnd(x) % m->g.peb_count);
		uint8_t *md = m->data + (size_t)b * ps;
		unsigned what = (unsigned)(rnd(x) % 100);
		if (what < 70) { /* program */
			uint32_t off, len;
			if (nor) {
				len = 1 + (uint32_t)(rnd(x) % 700);
				off = (uint32_t)(rnd(x) % (ps - len + 1));
			} else {
				uint32_t p = (uint32_t)(rnd(x) % pages), k = 1 + (uint32_t)(rnd(x) % 3);
				if (p + k > pages)
					k = pages - p;
				off = p * m->g.page_size, len = k * m->g.page_size;
			}
			for (uint32_t i = 0; i < len; i++)
				w[i] = (uint8_t)rnd(x);
			bool again = false;
			for (uint32_t p = off / m->g.page_size; !nor && p < (off + len) / m->g.page_size; p++)
				again = again || m->prog[(size_t)b * pages + p];
			int want = m->bad[b] || again ? -EIO : 0;
			int r = flash_write(d, b, off, w, len);
			if (r != want)
				fail_msg("program PEB %u:%u len %u: %d, want %d (%s)", b, off, len, r, want,
					 flash_sim_last_error(d));
			if (r)
				continue;
			for (uint32_t i = 0; i < len; i++)
				md[off + i] &= w[i];
			for (uint32_t p = off / m->g.page_size; !nor && p < (off + len) / m->g.page_size; p++)
				m->prog[(size_t)b * pages + p] = 1;
		} else if (what < 92) { /* erase */
			int r = flash_erase(d, b);
			assert_int_equal(r, m->bad[b] ? -EIO : 0);
			if (r)
				continue;
			memset(md, 0xFF, ps);
			memset(m->prog + (size_t)b * pages, 0, pages);
			m->wear[b]++;
		} else if (what < 97) { /* wear set from outside */
			uint32_t v = (uint32_t)(rnd(x) % 5000);
			assert_int_equal(flash_sim_set_wear(d, b, v), 0);
			m->wear[b] = v;
		} else if (b % 3 == 1) { /* a block going bad (a third of them at most) */
			assert_int_equal(flash_mark_bad(d, b), 0);
			m->bad[b] = 1;
		}
	}
	free(w);
}

static void t_model(void **s)
{
	(void)s;
	static const struct {
		struct flash_geometry g;
		bool oob, sparse;
	} v[] = {
		{{FLASH_NAND, 2048, 2048, 64, 2048 * 8, 10}, false, false},
		{{FLASH_NAND, 2048, 2048, 64, 2048 * 8, 10}, true, false},
		{{FLASH_NAND, 2048, 2048, 64, 2048 * 8, 10}, false, true},
		{{FLASH_NAND, 2048, 2048, 64, 2048 * 8, 10}, true, true},
		{{FLASH_NAND, 512, 512, 16, 512 * 16, 12}, true, false},
		{{FLASH_NOR, 1, 1, 0, 8192, 8}, false, false},
		{{FLASH_NOR, 1, 1, 0, 8192, 8}, false, true},
	};
	for (size_t vi = 0; vi < sizeof(v) / sizeof(v[0]); vi++) {
		assert_int_equal(system("rm -rf " DIR " && mkdir -p " DIR), 0);
		struct model m = {.g = v[vi].g, .oob = v[vi].oob, .sparse = v[vi].sparse};
		bool nor = m.g.type == FLASH_NOR;
		m.stride = nor ? 256 : m.g.page_size + (m.oob ? m.g.oob_size : 0);
		uint32_t pages = m_pages(&m);
		if (nor)
			m.stride = m.g.peb_size; /* one "page" per PEB in the model's file walk */
		m.data = malloc((size_t)m.g.peb_count * m.g.peb_size);
		m.prog = calloc((size_t)m.g.peb_count * pages, 1);
		m.bad = calloc(m.g.peb_count, 1);
		m.wear = calloc(m.g.peb_count, sizeof(*m.wear));
		assert_true(m.data && m.prog && m.bad && m.wear);
		memset(m.data, 0xFF, (size_t)m.g.peb_count * m.g.peb_size);
		struct flash_sim_config c;
		flash_sim_config_default(&c);
		c.geo = m.g;
		c.path = IMG;
		c.file_has_oob = m.oob;
		c.sparse = m.sparse;
		c.endurance = 0;
		struct flash_dev *d;
		char msg[512];
		if (flash_sim_create_ex(&c, &d, msg, sizeof(msg)))
			fail_msg("create: %s", msg);
		uint64_t x = 0x9E3779B97F4A7C15ull + vi;
		for (int round = 0; round < 6; round++) {
			m_ops(&m, d, &x, 60);
			m_check_dev(&m, d, true, true, &x);
			flash_close(d);
			m_check_file(&m, IMG, true);
			/* read-only: the same bytes, nothing written (the file's
			 * mtime and the sidecar stay), writes refused */
			struct stat st0, st1;
			assert_int_equal(stat(IMG, &st0), 0);
			if (flash_sim_open_ex(IMG, NULL, false, true, &d, msg, sizeof(msg)))
				fail_msg("open read-only: %s", msg);
			m_check_dev(&m, d, true, true, &x);
			uint8_t one = 0;
			assert_int_equal(flash_write(d, 0, 0, &one, nor ? 1 : 0), -EROFS);
			assert_int_equal(flash_erase(d, 0), -EROFS);
			assert_int_equal(flash_mark_bad(d, 0), -EROFS);
			flash_close(d);
			assert_int_equal(stat(IMG, &st1), 0);
			assert_int_equal(st0.st_mtim.tv_nsec, st1.st_mtim.tv_nsec);
			assert_int_equal(st0.st_size, st1.st_size);
			if (round == 4 && !m.sparse) {
				/* Without the sidecar the image is a plain dump: the
				 * geometry is given, wear is lost, and bad blocks are
				 * known only from the OOB's markers (factory bad, as Linux
				 * reads them), a data-only dump has none. */
				assert_int_equal(unlink(SIDE), 0);
				if (flash_sim_open_ex(IMG, &m.g, m.oob, false, &d, msg, sizeof(msg)))
					fail_msg("open without sidecar: %s", msg);
				for (uint32_t b = 0; b < m.g.peb_count; b++) {
					assert_int_equal(flash_sim_bad_kind(d, b), m.bad[b] && m.oob ? 2 : 0);
					if (!m.oob)
						m.bad[b] = 0;
					m.wear[b] = 0;
				}
				m_check_dev(&m, d, true, true, &x);
				continue; /* d stays open for the next round */
			}
			if (flash_sim_open_ex(IMG, NULL, false, false, &d, msg, sizeof(msg)))
				fail_msg("open: %s", msg);
		}
		flash_close(d);
		m_check_file(&m, IMG, true);
		free(m.data);
		free(m.prog);
		free(m.bad);
		free(m.wear);
	}
	assert_int_equal(system("rm -rf " DIR), 0);
}

static void fill_pattern(uint8_t *b, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)(i * 7 + seed * 31 + (i >> 9));
}

static void put_bytes(const char *path, off_t at, const uint8_t *b, size_t n)
{
	int fd = open(path, O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, b, n, at), (ssize_t)n);
	close(fd);
}

/* Replace the line starting with `key ` of the sidecar by `line`. */
static void sidecar_set(const char *key, const char *line)
{
	char *t = read_file(SIDE), *out = calloc(1, strlen(t) + 256);
	assert_non_null(out);
	char *at = strstr(t, key);
	assert_non_null(at);
	char *eol = strchr(at, '\n');
	memcpy(out, t, (size_t)(at - t));
	strcat(out, line);
	strcat(out, eol);
	write_file(SIDE, out);
	free(out);
	free(t);
}

static void expect_peb(struct flash_dev *d, uint32_t peb, const uint8_t *want)
{
	uint8_t r[PEB];
	assert_int_equal(flash_read(d, peb, 0, r, PEB), 0);
	for (size_t i = 0; i < PEB; i++)
		if (r[i] != want[i])
			fail_msg("PEB %u byte %zu: %#x, want %#x", peb, i, r[i], want[i]);
}

static void progress_cb(void *arg, uint64_t done, uint64_t total)
{
	uint64_t *last = arg;
	assert_true(done <= total);
	assert_true(done > last[0] || !last[2]);
	last[0] = done, last[1] = total, last[2]++;
}

/* Store files changed behind the sidecar's back, or damaged, or not what
 * they claim: opened with the file's bytes as the flash's (nanddump layout),
 * or refused naming the file and what was expected. */
static void t_damaged(void **s)
{
	(void)s;
	struct flash_dev *d;
	char msg[512];
	uint8_t page[PAGE], want[PEB], ff[PEB];
	memset(ff, 0xFF, sizeof(ff));
	fill_pattern(page, PAGE, 1);

	/* A sparse image another program wrote into (mtime moved): the
	 * sidecar's hole list is not trusted; a PEB with data in the file is
	 * the file's bytes (its holes read 0, as read(2) gives them), a PEB
	 * that is all hole is erased. */
	make_image(true);
	assert_int_equal(flash_sim_open_ex(IMG, NULL, false, false, &d, msg, sizeof(msg)), 0);
	assert_int_equal(flash_write(d, 1, 0, page, PAGE), 0);
	flash_close(d);
	uint8_t ext[4096];
	fill_pattern(ext, sizeof(ext), 2);
	put_bytes(IMG, (off_t)5 * PEB + PAGE, ext, sizeof(ext));
	if (flash_sim_open_ex(IMG, NULL, false, false, &d, msg, sizeof(msg)))
		fail_msg("open after an outside write: %s", msg);
	memset(want, 0, sizeof(want));
	memcpy(want + PAGE, ext, sizeof(ext));
	expect_peb(d, 5, want);
	assert_int_equal(flash_sim_peb_is_erased(d, 5), 0);
	memcpy(want, ff, PEB);
	memcpy(want, page, PAGE);
	expect_peb(d, 1, want);
	expect_peb(d, 3, ff);
	assert_int_equal(flash_sim_peb_is_erased(d, 3), 1);
	/* page 0 of PEB 5 is zeros, not erased: programming it is refused */
	assert_int_equal(flash_write(d, 5, 0, page, PAGE), -EIO);
	flash_close(d);
	char *side = read_file(SIDE);
	assert_non_null(strstr(side, "hole 2 4\nhole 6 7\n")); /* PEB 5 is no hole any more */
	free(side);

	/* A sparse image cut short, its sidecar of a version that did not
	 * record the size (image_size 0): the kept bytes stay, the rest of the
	 * cut PEB and the missing PEBs are erased flash, the file regains its
	 * size. Cut inside a PEB and on a PEB boundary. */
	for (int cut_mid = 1; cut_mid >= 0; cut_mid--) {
		make_image(true);
		assert_int_equal(flash_sim_open_ex(IMG, NULL, false, false, &d, msg, sizeof(msg)), 0);
		for (uint32_t b = 0; b < 3; b++)
			for (uint32_t p = 0; p < PPB; p++)
				assert_int_equal(flash_write(d, b, p * PAGE, page, PAGE), 0);
		flash_close(d);
		off_t cut = cut_mid ? (off_t)2 * PEB + 3 * PAGE + 100 : (off_t)2 * PEB;
		assert_int_equal(truncate(IMG, cut), 0);
		sidecar_set("image_size ", "image_size 0");
		if (flash_sim_open_ex(IMG, NULL, false, false, &d, msg, sizeof(msg)))
			fail_msg("open of the cut image: %s", msg);
		for (uint32_t p = 0; p < PPB; p++)
			memcpy(want + p * PAGE, page, PAGE);
		expect_peb(d, 1, want);
		if (cut_mid) {
			memset(want + 3 * PAGE + 100, 0xFF, PEB - 3 * PAGE - 100);
			expect_peb(d, 2, want);
		} else {
			expect_peb(d, 2, ff);
		}
		for (uint32_t b = 3; b < NPEB; b++)
			expect_peb(d, b, ff);
		/* the erased tail takes programs */
		assert_int_equal(flash_write(d, 7, 0, page, PAGE), 0);
		flash_close(d);
		assert_int_equal(file_size(IMG), (off_t)PEB * NPEB);
	}

	/* The host refusing to write the sidecar (RLIMIT_FSIZE below its
	 * size): a read-write open writes it before anything in the image
	 * changes, so it is refused with the host's EFBIG naming the temporary
	 * file, the old sidecar kept, nothing left behind; a sync refused the
	 * same way reports it, and a later sync within the limit works. */
	make_image(false);
	char *side0 = read_file(SIDE);
	limit_file_size(100);
	int rr = flash_sim_open_ex(IMG, NULL, false, false, &d, msg, sizeof(msg));
	unlimit();
	if (rr != -EFBIG || !strstr(msg, "cannot write the sidecar " SIDE ".tmp of " IMG ": File too large"))
		fail_msg("open with the sidecar refused: %d \"%s\"", rr, msg);
	char *side1 = read_file(SIDE);
	assert_string_equal(side0, side1);
	free(side1);
	assert_int_equal(access(SIDE ".tmp", F_OK), -1);
	if (flash_sim_open_ex(IMG, NULL, false, false, &d, msg, sizeof(msg)))
		fail_msg("open: %s", msg);
	assert_int_equal(flash_write(d, 2, 0, page, PAGE), 0);
	limit_file_size(100);
	rr = flash_sync(d);
	unlimit();
	assert_int_equal(rr, -EFBIG);
	assert_non_null(strstr(flash_sim_last_error(d), "cannot write the sidecar " SIDE ".tmp"));
	assert_int_equal(access(SIDE ".tmp", F_OK), -1);
	assert_int_equal(flash_sync(d), 0);
	flash_close(d);
	side1 = read_file(SIDE);
	assert_string_not_equal(side0, side1); /* the image's new mtime recorded */
	free(side0);
	free(side1);

	/* The geometry given must be the sidecar's (a count of 0: the
	 * sidecar's count) */
	make_image(false);
	static const struct flash_geometry other[] = {
		{FLASH_NOR, 1, 1, 0, PEB, NPEB},
		{FLASH_NAND, PAGE * 2, PAGE * 2, 64, PEB, NPEB},
		{FLASH_NAND, PAGE, PAGE, 64, PEB * 2, NPEB},
		{FLASH_NAND, PAGE, PAGE, 64, PEB, NPEB + 1},
	};
	for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++)
		expect_open_err(IMG, &other[i], true, -EINVAL, "geometry given differs from its sidecar " SIDE);
	struct flash_geometry nocount = geo;
	nocount.peb_count = 0;
	if (flash_sim_open_ex(IMG, &nocount, false, true, &d, msg, sizeof(msg)))
		fail_msg("open with a count of 0: %s", msg);
	assert_int_equal(d->geo.peb_count, NPEB);
	flash_close(d);
	/* per-PEB lines naming PEBs past the device */
	char *good = read_file(SIDE);
	static const char *past[] = {"bad 8 factory\n", "flip 8 0 correctable\n", "hole 3 8\n", "wear 8 5\n"};
	for (size_t i = 0; i < sizeof(past) / sizeof(past[0]); i++) {
		char *t = calloc(1, strlen(good) + 64);
		assert_non_null(t);
		strcpy(t, good);
		strcat(t, past[i]);
		write_file(SIDE, t);
		char part[80];
		snprintf(part, sizeof(part), "img.sim: cannot parse \"%.*s", (int)strlen(past[i]) - 1, past[i]);
		expect_open_err(IMG, NULL, true, -EINVAL, part);
		free(t);
	}
	/* a sidecar without image_ino (older): the size and mtime decide */
	write_file(SIDE, good);
	sidecar_set("image_ino ", "seed 1");
	if (flash_sim_open_ex(IMG, NULL, false, true, &d, msg, sizeof(msg)))
		fail_msg("open without image_ino: %s", msg);
	flash_close(d);
	/* an empty sidecar, a directory as sidecar, a sidecar that cannot be
	 * looked up (its "directory" is a file) */
	write_file(SIDE, "");
	expect_open_err(IMG, NULL, true, -EINVAL, SIDE ": not a ubikit flash sidecar");
	assert_int_equal(unlink(SIDE), 0);
	assert_int_equal(mkdir(SIDE, 0755), 0);
	expect_open_err(IMG, NULL, true, -EINVAL, SIDE ": not a ubikit flash sidecar");
	assert_int_equal(rmdir(SIDE), 0);
	expect_open_err(IMG "/x", &geo, true, -ENOTDIR, "cannot read the sidecar " IMG "/x.sim");
	free(good);

	/* a data+OOB dump larger than the device: the message counts the OOB */
	assert_int_equal(truncate(IMG, (off_t)(PAGE + 64) * PPB * NPEB + 1), 0);
	{
		struct flash_dev *x = NULL;
		int r = flash_sim_open_ex(IMG, &geo, true, true, &x, msg, sizeof(msg));
		if (r != -EINVAL || !strstr(msg, "(8 PEBs of 16896 bytes with OOB)"))
			fail_msg("OOB dump too big: %d \"%s\"", r, msg);
	}
	/* no count and a page size of 0: nothing to size the device by */
	struct flash_geometry nopage = {FLASH_NAND, 0, 0, 0, PEB, 0};
	expect_open_err(IMG, &nopage, true, -EINVAL, "empty image and no PEB count");

	/* create: not over a device node, not in a missing directory */
	struct flash_sim_config c;
	flash_sim_config_default(&c);
	c.geo = geo;
	c.path = "/dev/null";
	d = NULL;
	assert_int_equal(flash_sim_create_ex(&c, &d, msg, sizeof(msg)), -EINVAL);
	assert_non_null(strstr(msg, "/dev/null is not a regular file"));
	assert_null(d);
	c.path = DIR "/no/such/img";
	assert_int_equal(flash_sim_create_ex(&c, &d, msg, sizeof(msg)), -ENOENT);
	assert_non_null(strstr(msg, "cannot create " DIR "/no/such/img"));
	/* NOR keeps no OOB, whatever was asked; a NOR sector that is no
	 * multiple of 256 bytes; a relative path (its directory is "."); the
	 * progress of the 0xFF fill; in_order kept by the sidecar */
	char cwd[4096];
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(DIR), 0);
	flash_sim_config_default(&c);
	assert_int_equal(flash_sim_config_profile(&c, "nor"), 0);
	c.geo.peb_size = 1000;
	c.geo.peb_count = 5;
	c.file_has_oob = true;
	c.in_order = true;
	c.path = "rel";
	uint64_t prog[3] = {0, 0, 0};
	c.progress = progress_cb;
	c.progress_arg = prog;
	if (flash_sim_create_ex(&c, &d, msg, sizeof(msg)))
		fail_msg("create NOR: %s", msg);
	assert_int_equal(prog[0], 5000);
	assert_int_equal(prog[1], 5000);
	assert_int_equal(flash_write(d, 4, 990, page, 10), 0);
	flash_close(d);
	assert_int_equal(file_size("rel"), 5000);
	assert_int_equal(access("rel.sim", F_OK), 0);
	if (flash_sim_open_ex("rel", NULL, false, true, &d, msg, sizeof(msg)))
		fail_msg("open NOR: %s", msg);
	struct flash_sim_config got;
	flash_sim_get_config(d, &got);
	assert_true(got.in_order);
	assert_false(got.file_has_oob);
	uint8_t r[1000];
	assert_int_equal(flash_read(d, 4, 0, r, 1000), 0);
	assert_memory_equal(r + 990, page, 10);
	assert_int_equal(r[989], 0xFF);
	flash_close(d);
	FILE *f = fopen("rel", "rb");
	assert_non_null(f);
	assert_int_equal(fseek(f, 4990, SEEK_SET), 0);
	assert_int_equal(fread(r, 1, 10, f), 10);
	fclose(f);
	assert_memory_equal(r, page, 10);
	assert_int_equal(chdir(cwd), 0);

	/* a device larger than the host's free space, not sparse: refused
	 * before anything is written (the host's statvfs is the judge) */
	struct statvfs vf;
	assert_int_equal(statvfs(DIR, &vf), 0);
	uint64_t room = (uint64_t)vf.f_bfree * vf.f_frsize, peb = 4u << 20;
	uint64_t count = room / peb + 64;
	if (count < (1u << 20)) {
		flash_sim_config_default(&c);
		c.geo = (struct flash_geometry){FLASH_NAND, 1u << 20, 1u << 20, 0, (uint32_t)peb, (uint32_t)count};
		c.path = DIR "/huge";
		assert_int_equal(flash_sim_create_ex(&c, &d, msg, sizeof(msg)), -ENOSPC);
		char need[64];
		snprintf(need, sizeof(need), "it needs %" PRIu64 " bytes", peb * count);
		if (!strstr(msg, need) || !strstr(msg, "or use --sparse"))
			fail_msg("too large: \"%s\"", msg);
		assert_int_equal(access(DIR "/huge", F_OK), -1);
		assert_int_equal(access(DIR "/huge.sim", F_OK), -1);
	}
	assert_int_equal(system("rm -rf " DIR), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_not_images),
		cmocka_unit_test(t_sidecars),
		cmocka_unit_test(t_host_refuses_growth),
		cmocka_unit_test(t_model),
		cmocka_unit_test(t_damaged),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
