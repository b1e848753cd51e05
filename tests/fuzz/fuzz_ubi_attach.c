/* fuzz_ubi_attach — libFuzzer target for the UBI attach path.
 *
 * Input: byte 0 selects the flash (bit 0: NOR with 16 KiB PEBs, else NAND
 * with 512-byte pages, 256-byte sub-pages, 16 KiB PEBs; bit 1: also attach
 * read-write and run the background work), the rest is the flash image
 * (2..16 PEBs, missing bytes 0xFF). The image goes into a RAM simulator,
 * is attached read-only, every LEB of every volume is read (static volumes
 * CRC-checked), then detached. Any crash, hang, leak or sanitizer report
 * is a bug: bad images must only produce errors. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "flash/flash_sim.h"
#include "ubi/ubi.h"

enum { PEB = 16384, MAXPEB = 16 };

static struct flash_dev *load(const uint8_t *img, size_t len, bool nor)
{
	struct flash_sim_config c;
	flash_sim_config_default(&c);
	if (nor) {
		flash_sim_config_profile(&c, "nor");
	} else {
		c.geo.page_size = 512;
		c.geo.subpage_size = 256;
		c.geo.oob_size = 16;
	}
	c.geo.peb_size = PEB;
	uint32_t n = (uint32_t)((len + PEB - 1) / PEB);
	c.geo.peb_count = n < 2 ? 2 : n > MAXPEB ? MAXPEB : n;
	struct flash_dev *f = NULL;
	if (flash_sim_create(&c, &f))
		return NULL;
	uint32_t unit = nor ? 256 : 512;
	uint8_t page[512];
	for (uint64_t off = 0; off < (uint64_t)c.geo.peb_count * PEB; off += unit) {
		memset(page, 0xFF, unit);
		if (off < len)
			memcpy(page, img + off, len - off < unit ? len - off : unit);
		bool ff = true;
		for (uint32_t i = 0; i < unit && ff; i++)
			ff = page[i] == 0xFF;
		if (!ff)
			flash_write(f, (uint32_t)(off / PEB), (uint32_t)(off % PEB), page, unit);
	}
	return f;
}

static void read_all(struct ubi_device *u)
{
	uint32_t ids[128];
	int n = ubi_vol_list(u, ids, 128);
	uint8_t *buf = malloc(PEB);
	if (!buf)
		return;
	for (int i = 0; i < n && i < 128; i++) {
		struct ubi_vol_info vi;
		if (ubi_vol_info(u, ids[i], &vi))
			continue;
		ubi_vol_check(u, ids[i]);
		for (uint32_t l = 0; l < vi.reserved_pebs && l < 64; l++) {
			uint32_t len = vi.usable_leb_size;
			if (vi.vol_type == UBI_VID_STATIC)
				len = l + 1 < vi.used_ebs ? vi.usable_leb_size : l + 1 == vi.used_ebs ? vi.last_eb_bytes : 0;
			if (len > PEB)
				len = PEB;
			ubi_leb_read(u, ids[i], l, 0, buf, len);
			ubi_leb_is_mapped(u, ids[i], l);
		}
	}
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	uint8_t mode = data[0];
	data++;
	size--;
	if (size > (size_t)MAXPEB * PEB)
		size = (size_t)MAXPEB * PEB;
	struct flash_dev *f = load(data, size, mode & 1);
	if (!f)
		return 0;
	struct ubi_attach_opts o;
	ubi_attach_opts_default(&o);
	o.read_only = true;
	struct ubi_device *u = NULL;
	char msg[256];
	if (!ubi_attach_msg(f, &o, &u, msg, sizeof(msg))) {
		struct ubi_dev_info di;
		ubi_dev_info(u, &di);
		read_all(u);
		ubi_detach(u);
	}
	if (mode & 2) {
		o.read_only = false;
		o.wl_threshold = 2;
		if (!ubi_attach_msg(f, &o, &u, msg, sizeof(msg))) {
			ubi_flush_background(u);
			read_all(u);
			ubi_sync(u);
			ubi_detach(u);
		}
	}
	flash_close(f);
	return 0;
}
