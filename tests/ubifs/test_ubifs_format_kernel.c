/* test_ubifs_format_kernel — the first read-write mount of an empty volume
 * formats it (ubifs_format.c) as the kernel's create_default_filesystem
 * does. The reference is the kernel itself: the kernel-images of
 * tests/data were made by Linux formatting a fresh volume (--format-fresh,
 * tests/data/kernel-images/README.md; a 19-LEB volume in
 * tests/data/ubifs/format-nand2k-24peb), so their superblocks hold the
 * kernel's own choices for that geometry (journal, log, LPT and orphan
 * LEBs, reserved pool, fanout, lsave, format version, flags). The same
 * volume geometry, empty, is formatted by our mount, and every superblock
 * field but the UUID must be the kernel's. The volume here has no
 * is_mapped (emptiness is then read: every byte 0xFF); a volume with one
 * programmed byte is not empty and is not formatted. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "flash/flash.h"
#include "ubi/ubi_flat.h"
#include "ubifs/ubifs.h"
#include "ubifs/ubifs_format.h"
#include "ubifs/ubifs_media.h"
#include "ubifs/ubifs_priv.h"
#include "ubifs_test_tree.h"
#include "util/util_endian.h"

#define WORK UBIKIT_BUILD_DIR "/ubifs-format-kernel"
#define NAND2K {FLASH_NAND, 2048, 512, 64, 131072, 128}

static void run_case(const char *name, struct flash_geometry geo, int has_oob, int compr)
{
	char gz[512], work[512];
	if (strchr(name, '/'))
		snprintf(gz, sizeof(gz), "%s/%s.img.gz", UBIKIT_TEST_DATA, name);
	else
		snprintf(gz, sizeof(gz), "%s/kernel-images/%s.img.gz", UBIKIT_TEST_DATA, name);
	snprintf(work, sizeof(work), "%s/%s.flash", WORK, strrchr(name, '/') ? strrchr(name, '/') + 1 : name);
	assert_int_equal(tt_run("mkdir -p '%s'", WORK), 0);
	uint8_t *kimg;
	size_t len;
	uint32_t leb;
	assert_int_equal(tt_ubi_gz_to_flat(gz, &geo, has_oob, work, &kimg, &len, &leb), 0);
	const uint8_t *ksb = kimg; /* the kernel's superblock: LEB 0, offset 0 */
	assert_int_equal(get_le32(ksb), UBIFS_NODE_MAGIC);
	assert_int_equal(ksb[20], UBIFS_SB_NODE);
	assert_int_equal(get_le32(ksb + 36), leb);
	assert_int_equal((size_t)get_le32(ksb + 40) * leb, len); /* formatted over the whole volume */

	/* the same volume, empty (no is_mapped: read to find out) */
	uint8_t *img = malloc(len);
	assert_non_null(img);
	memset(img, 0xFF, len);
	struct ubi_vol_io vol;
	struct util_err e = {0};
	assert_int_equal(ubi_flat_open_mem(img, len, leb, 0, &vol, &e), 0);
	vol.min_io_size = get_le32(ksb + 32);
	if (vol.max_write_size < vol.min_io_size)
		vol.max_write_size = vol.min_io_size;
	vol.is_mapped = NULL;
	assert_int_equal(ubifs_vol_is_empty(&vol), 1);
	struct ubifs_mount_opts o = {.read_only = 0, .compr_set = compr >= 0, .compr = compr};
	struct ubifs_fs *fs = NULL;
	if (ubifs_mount(&vol, &o, &fs, &e))
		fail_msg("%s: mount of the empty volume: %s", name, e.msg);
	assert_int_equal(ubifs_unmount(fs), 0);
	uint8_t sb[UBIFS_SB_NODE_SZ];
	assert_int_equal(vol.read(vol.ctx, 0, 0, sb, sizeof(sb)), 0);
	static const struct {
		unsigned off, len;
		const char *what;
	} f[] = {
		{20, 1, "node type"},     {26, 1, "key_hash"},     {27, 1, "key_fmt"},        {28, 4, "flags"},
		{32, 4, "min_io_size"},   {36, 4, "leb_size"},     {40, 4, "leb_cnt"},        {44, 4, "max_leb_cnt"},
		{48, 8, "max_bud_bytes"}, {56, 4, "log_lebs"},     {60, 4, "lpt_lebs"},       {64, 4, "orph_lebs"},
		{68, 4, "jhead_cnt"},     {72, 4, "fanout"},       {76, 4, "lsave_cnt"},      {80, 4, "fmt_version"},
		{84, 2, "default_compr"}, {88, 4, "rp_uid"},       {92, 4, "rp_gid"},         {96, 8, "rp_size"},
		{104, 4, "time_gran"},    {124, 4, "ro_compat"},   {256, 2, "hash_algo"},
	};
	int bad = 0;
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		if (memcmp(sb + f[i].off, ksb + f[i].off, f[i].len)) {
			uint64_t a = 0, b = 0;
			memcpy(&a, sb + f[i].off, f[i].len);
			memcpy(&b, ksb + f[i].off, f[i].len);
			print_message("%s: %s is %#llx, the kernel's %#llx\n", name, f[i].what, (unsigned long long)a,
				      (unsigned long long)b);
			bad++;
		}
	print_message("%s: %u LEBs of %u bytes: log %u, LPT %u, orphan %u LEBs, journal %llu bytes\n", name,
		      get_le32(ksb + 40), leb, get_le32(ksb + 56), get_le32(ksb + 60), get_le32(ksb + 64),
		      (unsigned long long)get_le64(ksb + 48));
	assert_int_equal(bad, 0);
	/* mounted again: an empty root directory */
	o.read_only = 1;
	assert_int_equal(ubifs_mount(&vol, &o, &fs, &e), 0);
	assert_int_equal(ubifs_check(fs), 0);
	ubifs_unmount(fs);
	ubi_flat_close(&vol);

	/* one programmed byte anywhere: not empty, not formatted */
	const size_t spots[] = {UBIFS_SB_NODE_SZ + 16, (size_t)leb * 5 + 100, len - 1};
	for (size_t i = 0; i < 3; i++) {
		memset(img, 0xFF, len);
		img[spots[i]] = 0x00;
		assert_int_equal(ubi_flat_open_mem(img, len, leb, 0, &vol, &e), 0);
		vol.is_mapped = NULL;
		assert_int_equal(ubifs_vol_is_empty(&vol), 0);
		int err = ubifs_mount(&vol, &o, &fs, &e);
		assert_int_not_equal(err, 0); /* no superblock: refused, not formatted */
		assert_true(img[0] == 0xFF || get_le32(img) != UBIFS_NODE_MAGIC);
		ubi_flat_close(&vol);
	}
	free(img);
	free(kimg);
}

static void t_nand2k(void **s)
{
	(void)s;
	run_case("nand2k-clean", (struct flash_geometry)NAND2K, 0, -1);
}
static void t_nor_zlib(void **s)
{
	(void)s;
	run_case("nor-zlib-unclean", (struct flash_geometry){FLASH_NOR, 1, 1, 0, 65536, 256}, 0, UBIFS_COMPR_ZLIB);
}
static void t_nand4k_zstd(void **s)
{
	(void)s;
	run_case("nand4k-oob-zstd-unclean", (struct flash_geometry){FLASH_NAND, 4096, 1024, 128, 262144, 256}, 1,
		 UBIFS_COMPR_ZSTD);
}
/* a volume of 19 LEBs (24 PEBs): the kernel formats it (log 2, orphan 2
 * LEBs, 10 main LEBs); mkfs.ubifs's limits on -l/-p would refuse it */
static void t_nand2k_tiny(void **s)
{
	(void)s;
	run_case("ubifs/format-nand2k-24peb", (struct flash_geometry){FLASH_NAND, 2048, 512, 64, 131072, 24}, 0, -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_nand2k),
		cmocka_unit_test(t_nor_zlib),
		cmocka_unit_test(t_nand4k_zstd),
		cmocka_unit_test(t_nand2k_tiny),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
