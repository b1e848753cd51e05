/* mtd_probe — exercises the MTD char-device backend (src/flash/flash_mtd.c)
 * on a real /dev/mtdX; built statically by test_flash_vm.sh and run inside
 * the Linux VM on nandsim. Checks geometry against the VM's environment,
 * erase, sub-page and page programs, read-back, bad-block query and
 * marking (PEB 5), and the read-only open. Prints "mtd_probe: OK". */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flash/flash_mtd.h"

#define CHECK(c)                                                                   \
	do {                                                                       \
		if (!(c)) {                                                        \
			fprintf(stderr, "mtd_probe: %s:%d: %s\n", __FILE__, __LINE__, #c); \
			exit(1);                                                   \
		}                                                                  \
	} while (0)

static unsigned long env(const char *k)
{
	const char *v = getenv(k);
	return v ? strtoul(v, NULL, 0) : 0;
}

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : "/dev/mtd0";
	struct flash_dev *d;
	int r = flash_mtd_open(path, false, &d);
	if (r) {
		fprintf(stderr, "mtd_probe: open %s: %s\n", path, strerror(-r));
		return 1;
	}
	const struct flash_geometry *g = &d->geo;
	printf("mtd_probe: %s page %u sub-page %u oob %u peb %u count %u\n", g->type == FLASH_NAND ? "nand" : "nor",
	       g->page_size, g->subpage_size, g->oob_size, g->peb_size, g->peb_count);
	if (env("PAGE_SIZE"))
		CHECK(g->page_size == env("PAGE_SIZE"));
	if (env("PEB_SIZE"))
		CHECK(g->peb_size == env("PEB_SIZE"));
	if (env("FLASH_SIZE"))
		CHECK((unsigned long)g->peb_size * g->peb_count == env("FLASH_SIZE"));
	CHECK(flash_is_mtd(d));
	unsigned page = g->page_size, sub = g->subpage_size;
	unsigned char *w = malloc(g->peb_size), *rb = malloc(g->peb_size);
	CHECK(w && rb);
	for (unsigned i = 0; i < g->peb_size; i++)
		w[i] = (unsigned char)(i * 7 + 3);

	CHECK(flash_is_bad(d, 1) == 0);
	CHECK(flash_erase(d, 1) == 0);
	CHECK(flash_read(d, 1, 0, rb, page) == 0);
	for (unsigned i = 0; i < page; i++)
		CHECK(rb[i] == 0xFF);
	/* Two sub-pages of page 0 separately (UBI's EC + VID header), then
	 * whole pages. */
	CHECK(flash_write(d, 1, 0, w, sub) == 0);
	if (sub < page)
		CHECK(flash_write(d, 1, sub, w + sub, sub) == 0);
	CHECK(flash_write(d, 1, page, w + page, 4 * page) == 0);
	CHECK(flash_read(d, 1, 0, rb, 5 * page) == 0);
	CHECK(memcmp(rb, w, 2 * sub) == 0);
	CHECK(memcmp(rb + page, w + page, 4 * page) == 0);
	/* Misaligned program refused before reaching the driver. */
	if (sub > 1)
		CHECK(flash_write(d, 1, 6 * page + 1, w, sub) == -EINVAL);
	/* Whole PEB 2 and readback. */
	CHECK(flash_erase(d, 2) == 0);
	CHECK(flash_write(d, 2, 0, w, g->peb_size) == 0);
	CHECK(flash_read(d, 2, 0, rb, g->peb_size) == 0);
	CHECK(memcmp(rb, w, g->peb_size) == 0);
	/* Bad blocks (NAND). */
	if (g->type == FLASH_NAND && g->peb_count > 5) {
		CHECK(flash_is_bad(d, 5) == 0);
		CHECK(flash_mark_bad(d, 5) == 0);
		CHECK(flash_is_bad(d, 5) == 1);
	}
	CHECK(flash_sync(d) == 0);
	flash_close(d);

	CHECK(flash_mtd_open(path, true, &d) == 0);
	CHECK(flash_write(d, 3, 0, w, page) == -EROFS);
	CHECK(flash_erase(d, 3) == -EROFS);
	CHECK(flash_read(d, 2, 0, rb, page) == 0);
	CHECK(memcmp(rb, w, page) == 0);
	flash_close(d);
	free(w);
	free(rb);
	printf("mtd_probe: OK\n");
	return 0;
}
