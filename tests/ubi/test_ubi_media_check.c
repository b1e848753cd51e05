/* test_ubi_media_check — the field checks on VID headers and volume-table
 * records, one rule at a time, each from the kernel's list
 * (drivers/mtd/ubi/io.c validate_vid_hdr, vtbl.c vtbl_check): a valid
 * header or record is changed in one field and must be refused with the
 * reason; the valid ones pass. Also ubi_calc_offsets' refusals of
 * geometries the kernel's io_init refuses. */
#include "ubi_test.h"

#include "ubi/ubi_media.h"
#include "util/util_crc.h"
#include "util/util_endian.h"

enum { LS = 15872 };

static struct ubi_vid_hdr dyn(void)
{
	struct ubi_vid_hdr h = {.version = UBI_VERSION, .vol_type = UBI_VID_DYNAMIC, .vol_id = 3, .lnum = 7,
				.sqnum = 99};
	return h;
}

static struct ubi_vid_hdr stat_hdr(void)
{
	struct ubi_vid_hdr h = {.version = UBI_VERSION, .vol_type = UBI_VID_STATIC, .vol_id = 3, .lnum = 1,
				.data_size = LS, .used_ebs = 3, .data_crc = 5, .sqnum = 99};
	return h;
}

#define REFUSED(h, why)                                                                                     \
	do {                                                                                                \
		const char *r_ = ubi_vid_hdr_check(&(h), LS);                                              \
		if (!r_ || !strstr(r_, why))                                                                \
			fail_msg("line %d: got '%s', expected '%s'", __LINE__, r_ ? r_ : "(valid)", why);   \
	} while (0)

static void test_vid(void **state)
{
	(void)state;
	struct ubi_vid_hdr h = dyn();
	assert_null(ubi_vid_hdr_check(&h, LS));
	h = stat_hdr();
	assert_null(ubi_vid_hdr_check(&h, LS));
	h.lnum = 2; /* the last LEB: any data_size > 0 */
	h.data_size = 10;
	assert_null(ubi_vid_hdr_check(&h, LS));
	/* a copy of a dynamic LEB carries data_size and CRC */
	h = dyn();
	h.copy_flag = 1;
	h.data_size = 100;
	h.data_crc = 7;
	assert_null(ubi_vid_hdr_check(&h, LS));
	/* internal volume with a known compat */
	h = dyn();
	h.vol_id = UBI_LAYOUT_VOLUME_ID;
	h.compat = UBI_COMPAT_REJECT;
	assert_null(ubi_vid_hdr_check(&h, LS));

	h = dyn(); h.version = 2; REFUSED(h, "version");
	h = dyn(); h.copy_flag = 2; REFUSED(h, "copy_flag");
	h = dyn(); h.vol_id = 0x80000000u; REFUSED(h, "negative volume ID");
	/* even with a compat value that an internal volume could have */
	h = dyn(); h.vol_id = 0xFFFFFFF0u; h.compat = UBI_COMPAT_PRESERVE; REFUSED(h, "negative volume ID");
	h = dyn(); h.lnum = 0x80000000u; REFUSED(h, "negative field");
	h = dyn(); h.data_pad = 0x80000000u; REFUSED(h, "negative field");
	h = dyn(); h.vol_id = UBI_MAX_VOLUMES; REFUSED(h, "volume ID out of range");
	h = dyn(); h.compat = UBI_COMPAT_DELETE; REFUSED(h, "compat set on a user volume");
	h = dyn(); h.vol_id = UBI_LAYOUT_VOLUME_ID; h.compat = 3; REFUSED(h, "bad compat");
	h = dyn(); h.vol_type = 3; REFUSED(h, "bad volume type");
	h = dyn(); h.data_pad = LS / 2; REFUSED(h, "data_pad");
	h = dyn(); h.copy_flag = 1; h.data_size = LS + 1; REFUSED(h, "larger than LEB");
	h = stat_hdr(); h.used_ebs = 0; REFUSED(h, "used_ebs 0");
	h = stat_hdr(); h.data_size = 0; REFUSED(h, "data_size 0");
	h = stat_hdr(); h.data_size = LS - 8; REFUSED(h, "non-last LEB not full");
	h = stat_hdr(); h.lnum = 3; REFUSED(h, "beyond used_ebs");
	h = dyn(); h.used_ebs = 1; REFUSED(h, "used_ebs set");
	h = dyn(); h.data_crc = 1; REFUSED(h, "without copy_flag");
	h = dyn(); h.data_size = 1; REFUSED(h, "without copy_flag");
	h = dyn(); h.copy_flag = 1; REFUSED(h, "copy with data_size 0");
}

static void rec(uint8_t *b, uint32_t rsvd, uint32_t align, uint32_t pad, uint8_t type, uint8_t upd, const char *name,
		uint16_t nlen)
{
	memset(b, 0, UBI_VTBL_RECORD_SIZE);
	put_be32(b, rsvd);
	put_be32(b + 4, align);
	put_be32(b + 8, pad);
	b[12] = type;
	b[13] = upd;
	put_be16(b + 14, nlen);
	memcpy(b + 16, name, strlen(name));
	put_be32(b + 168, util_crc32(UTIL_CRC32_INIT, b, UBI_VTBL_RECORD_SIZE_CRC));
}

#define VT_REFUSED(why)                                                                                     \
	do {                                                                                                \
		const char *r_ = ubi_vtbl_record_unpack(b, LS, 512, &r);                                   \
		if (!r_ || !strstr(r_, why))                                                                \
			fail_msg("line %d: got '%s', expected '%s'", __LINE__, r_ ? r_ : "(valid)", why);   \
	} while (0)

static void test_vtbl(void **state)
{
	(void)state;
	uint8_t b[UBI_VTBL_RECORD_SIZE];
	struct ubi_vtbl_record r;
	rec(b, 4, 1, 0, UBI_VID_DYNAMIC, 0, "rootfs", 6);
	assert_null(ubi_vtbl_record_unpack(b, LS, 512, &r));
	assert_string_equal(r.name, "rootfs");
	assert_int_equal(r.reserved_pebs, 4);
	/* an empty record is all zeros (but the CRC) */
	rec(b, 0, 0, 0, 0, 0, "", 0);
	assert_null(ubi_vtbl_record_unpack(b, LS, 512, &r));
	assert_int_equal(r.reserved_pebs, 0);
	rec(b, 0, 1, 0, 0, 0, "", 0);
	VT_REFUSED("empty record with non-zero bytes");
	/* alignment 2048 on LEB 15872: data_pad 15872 % 2048 = 1536 */
	rec(b, 4, 2048, 1536, UBI_VID_STATIC, 1, "s", 1);
	assert_null(ubi_vtbl_record_unpack(b, LS, 512, &r));
	rec(b, 4, 1, 0, UBI_VID_DYNAMIC, 0, "rootfs", 6);
	b[0] ^= 1;
	VT_REFUSED("CRC");
	rec(b, 0x80000000u, 1, 0, UBI_VID_DYNAMIC, 0, "v", 1);
	VT_REFUSED("negative reserved_pebs");
	rec(b, 4, 0, 0, UBI_VID_DYNAMIC, 0, "v", 1);
	VT_REFUSED("bad alignment");
	rec(b, 4, LS + 1, 0, UBI_VID_DYNAMIC, 0, "v", 1);
	VT_REFUSED("bad alignment");
	rec(b, 4, 100, 72, UBI_VID_DYNAMIC, 0, "v", 1);
	VT_REFUSED("multiple of min I/O");
	rec(b, 4, 2048, 0, UBI_VID_DYNAMIC, 0, "v", 1);
	VT_REFUSED("data_pad");
	rec(b, 4, 1, 0, 3, 0, "v", 1);
	VT_REFUSED("volume type");
	rec(b, 4, 1, 0, UBI_VID_DYNAMIC, 2, "v", 1);
	VT_REFUSED("update marker");
	rec(b, 4, 1, 0, UBI_VID_DYNAMIC, 0, "v", 0);
	VT_REFUSED("name length");
	rec(b, 4, 1, 0, UBI_VID_DYNAMIC, 0, "v", 200);
	VT_REFUSED("name length");
	rec(b, 4, 1, 0, UBI_VID_DYNAMIC, 0, "", 1);
	VT_REFUSED("empty name");
	rec(b, 4, 1, 0, UBI_VID_DYNAMIC, 0, "abc", 2);
	VT_REFUSED("does not match");
	rec(b, 4, 1, 0, UBI_VID_DYNAMIC, 0, "a", 3);
	VT_REFUSED("does not match");
}

static void test_offsets(void **state)
{
	(void)state;
	struct ubi_offsets o;
	/* NAND 2048/512: VID header at 512, data at 2048 (the kernel's) */
	assert_int_equal(ubi_calc_offsets(131072, 2048, 512, 0, &o), 0);
	assert_int_equal(o.vid_hdr_offset, 512);
	assert_int_equal(o.data_offset, 2048);
	/* no sub-pages given: the min. I/O unit */
	assert_int_equal(ubi_calc_offsets(131072, 2048, 0, 0, &o), 0);
	assert_int_equal(o.vid_hdr_offset, 2048);
	assert_int_equal(o.data_offset, 4096);
	/* NOR, min I/O 1: headers of 64 bytes */
	assert_int_equal(ubi_calc_offsets(65536, 1, 1, 0, &o), 0);
	assert_int_equal(o.vid_hdr_offset, 64);
	assert_int_equal(o.data_offset, 128);
	/* refused: VID header inside the EC header, beyond the PEB,
	 * misaligned, no PEB */
	assert_int_equal(ubi_calc_offsets(131072, 2048, 512, 8, &o), -EINVAL);
	assert_int_equal(ubi_calc_offsets(131072, 2048, 512, 131072, &o), -EINVAL);
	assert_int_equal(ubi_calc_offsets(131072, 2048, 512, 102, &o), -EINVAL); /* shift not 4-aligned */
	assert_int_equal(ubi_calc_offsets(131072, 2048, 512, 100, &o), 0);     /* the kernel allows 100 */
	assert_int_equal(ubi_calc_offsets(0, 2048, 512, 0, &o), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vid),
		cmocka_unit_test(test_vtbl),
		cmocka_unit_test(test_offsets),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
