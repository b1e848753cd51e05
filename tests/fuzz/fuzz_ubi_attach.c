/* fuzz_ubi_attach — libFuzzer target for the UBI attach path.
 *
 * Input: byte 0 selects the flash (bit 0: NOR with 16 KiB PEBs, else NAND
 * with 512-byte pages, 256-byte sub-pages, 16 KiB PEBs; bit 1: also attach
 * read-write and run the background work; bit 2: recompute every header,
 * vtbl record and copy data CRC first, so mutations reach the logic behind
 * the CRC checks), the rest is the flash image
 * (2..16 PEBs, missing bytes 0xFF). The image goes into a RAM simulator,
 * is attached read-only, every LEB of every volume is read (static volumes
 * CRC-checked), then detached. Any crash, hang, leak or sanitizer report
 * is a bug: bad images must only produce errors. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "flash/flash_sim.h"
#include "ubi/ubi.h"
#include "util/util_crc.h"
#include "util/util_endian.h"

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

static void put_crc(uint8_t *p, size_t n)
{
	put_be32(p + n, util_crc32(UTIL_CRC32_INIT, p, n));
}

/* Make every CRC in the image right (mode bit 2). */
static void fix_crcs(uint8_t *img, size_t len, bool nor)
{
	uint32_t vidoff = nor ? 64 : 256, doff = nor ? 128 : 512, leb = PEB - doff;
	uint32_t slots = leb / 172 > 128 ? 128 : leb / 172;
	for (size_t base = 0; base + PEB <= len; base += PEB) {
		uint8_t *pe = img + base;
		if (get_be32(pe) == 0x55424923u)
			put_crc(pe, 60);
		uint8_t *vh = pe + vidoff;
		if (get_be32(vh) != 0x55424921u)
			continue;
		uint32_t vol_id = get_be32(vh + 8), data_size = get_be32(vh + 20);
		if (vol_id == UBI_LAYOUT_VOLUME_ID)
			for (uint32_t i = 0; i < slots; i++)
				put_crc(pe + doff + i * 172, 168);
		if (data_size <= leb && (vh[6] == 1 || vh[5] == 2))
			put_be32(vh + 32, util_crc32(UTIL_CRC32_INIT, pe + doff, data_size));
		put_crc(vh, 60);
	}
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
	struct flash_dev *f;
	if (mode & 4) {
		uint8_t *img = malloc(size ? size : 1);
		if (!img)
			return 0;
		memcpy(img, data, size);
		fix_crcs(img, size, mode & 1);
		f = load(img, size, mode & 1);
		free(img);
	} else {
		f = load(data, size, mode & 1);
	}
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
