/* flash_sim_store — where the simulator keeps its bytes: per-PEB RAM
 * buffers (an erased PEB holds no memory), or a file in nanddump's layout
 * (data only, or data+OOB per page) mapped with mmap, plus the sidecar
 * "<image>.sim" for what that layout cannot hold. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "flash/flash_sim_int.h"

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
	memset(s->map + (uint64_t)peb * s->peb_stride, 0xFF, s->peb_stride);
}

void sim_peb_write_bbm(struct flash_sim *s, uint32_t peb)
{
	(void)s;
	(void)peb;
}

int sim_store_create_file(struct flash_sim *s)
{
	return util_err_set(&s->err, -ENOSYS, "file backend not implemented yet");
}

int sim_store_open_file(struct flash_sim *s, const char *path, const struct flash_geometry *geo,
			bool file_has_oob, bool read_only)
{
	(void)path;
	(void)geo;
	(void)file_has_oob;
	(void)read_only;
	return util_err_set(&s->err, -ENOSYS, "file backend not implemented yet");
}

int sim_store_sync(struct flash_sim *s)
{
	(void)s;
	return 0;
}
