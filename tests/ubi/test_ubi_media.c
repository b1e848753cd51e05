/* test_ubi_media — EC/VID/vtbl packing against the byte vectors of the spec
 * (TEST-VECTORS.md §4, taken from ubinize and kernel-written images), offset
 * calculation for the verified geometries, and the header checks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "ubi/ubi_media.h"

static const uint8_t ec_vec[64] = {
	0x55, 0x42, 0x49, 0x23, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0x02, 0, 0, 0, 0x08, 0, 0x12, 0x34, 0x56, 0x78, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x62, 0xa5, 0x03, 0x53,
};

static const uint8_t vid_vec[64] = {
	0x55, 0x42, 0x49, 0x21, 0x01, 0x01, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0x05,
	0, 0, 0, 0, 0, 0, 0, 0x40, 0, 0, 0, 0, 0, 0, 0, 0,
	0xb1, 0xa5, 0x73, 0x2f, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x05,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xe6, 0x20, 0x71, 0x01,
};

static void test_ec_vector(void **state)
{
	(void)state;
	struct ubi_ec_hdr h = {.ec = 0, .vid_hdr_offset = 512, .data_offset = 2048, .image_seq = 0x12345678};
	uint8_t out[64];
	ubi_ec_hdr_pack(&h, out);
	assert_memory_equal(out, ec_vec, 64);
	struct ubi_ec_hdr back;
	assert_int_equal(ubi_ec_hdr_unpack(ec_vec, &back), UBI_HDR_OK);
	assert_int_equal(back.vid_hdr_offset, 512);
	assert_int_equal(back.image_seq, 0x12345678);
	uint8_t bad[64];
	memcpy(bad, ec_vec, 64);
	bad[9] ^= 1;
	assert_int_equal(ubi_ec_hdr_unpack(bad, &back), UBI_HDR_BAD);
	memset(bad, 0xFF, 64);
	assert_int_equal(ubi_ec_hdr_unpack(bad, &back), UBI_HDR_FF);
	bad[3] = 0;
	assert_int_equal(ubi_ec_hdr_unpack(bad, &back), UBI_HDR_BAD);
}

static void test_vid_vector(void **state)
{
	(void)state;
	struct ubi_vid_hdr h = {.vol_type = UBI_VID_DYNAMIC, .copy_flag = 1, .vol_id = 0, .lnum = 5,
				.data_size = 64, .data_crc = 0xB1A5732F, .sqnum = 5};
	uint8_t out[64];
	ubi_vid_hdr_pack(&h, out);
	assert_memory_equal(out, vid_vec, 64);
	struct ubi_vid_hdr back;
	assert_int_equal(ubi_vid_hdr_unpack(vid_vec, &back), UBI_HDR_OK);
	assert_int_equal(back.lnum, 5);
	assert_null(ubi_vid_hdr_check(&back, 16256));
	back.compat = 1;
	assert_non_null(ubi_vid_hdr_check(&back, 16256));
	back.compat = 0;
	back.copy_flag = 0; /* dynamic without copy flag must not carry data_size */
	assert_non_null(ubi_vid_hdr_check(&back, 16256));
}

static void test_offsets(void **state)
{
	(void)state;
	/* Verified table of UBI-FORMAT.md §3.1. */
	const struct {
		uint32_t peb, io, sub, off, vid, data, leb;
	} t[] = {
		{131072, 2048, 512, 0, 512, 2048, 129024},   {131072, 2048, 2048, 0, 2048, 4096, 126976},
		{131072, 2048, 512, 1984, 1984, 2048, 129024}, {16384, 512, 256, 0, 256, 512, 15872},
		{262144, 4096, 4096, 0, 4096, 8192, 253952}, {65536, 1, 1, 0, 64, 128, 65408},
		{16384, 1, 1, 0, 64, 128, 16256},
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct ubi_offsets o;
		assert_int_equal(ubi_calc_offsets(t[i].peb, t[i].io, t[i].sub, t[i].off, &o), 0);
		assert_int_equal(o.vid_hdr_offset, t[i].vid);
		assert_int_equal(o.data_offset, t[i].data);
		assert_int_equal(o.leb_size, t[i].leb);
	}
	struct ubi_offsets o;
	assert_int_equal(ubi_calc_offsets(131072, 2048, 512, 32, &o), -22); /* VID offset < 64 */
}

static void test_vtbl(void **state)
{
	(void)state;
	assert_int_equal(ubi_vtbl_slots(129024), 128);
	assert_int_equal(ubi_vtbl_slots(16256), 94);
	uint8_t rec[UBI_VTBL_RECORD_SIZE];
	ubi_vtbl_record_pack(NULL, rec);
	struct ubi_vtbl_record r;
	assert_null(ubi_vtbl_record_unpack(rec, 129024, 2048, &r));
	assert_int_equal(r.reserved_pebs, 0);
	assert_int_equal(rec[168] << 24 | rec[169] << 16 | rec[170] << 8 | rec[171], (int)UBI_VTBL_EMPTY_CRC);

	struct ubi_vtbl_record v = {.reserved_pebs = 10, .alignment = 1, .vol_type = UBI_VID_DYNAMIC,
				    .flags = UBI_VTBL_AUTORESIZE_FLG};
	strcpy(v.name, "rootfs");
	ubi_vtbl_record_pack(&v, rec);
	assert_null(ubi_vtbl_record_unpack(rec, 129024, 2048, &r));
	assert_string_equal(r.name, "rootfs");
	assert_int_equal(r.name_len, 6);
	assert_int_equal(r.flags, UBI_VTBL_AUTORESIZE_FLG);
	rec[20] ^= 0xFF; /* corrupt the name: CRC must catch it */
	assert_non_null(ubi_vtbl_record_unpack(rec, 129024, 2048, &r));
	v.alignment = 3; /* not a multiple of min I/O */
	ubi_vtbl_record_pack(&v, rec);
	assert_non_null(ubi_vtbl_record_unpack(rec, 129024, 2048, &r));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ec_vector),
		cmocka_unit_test(test_vid_vector),
		cmocka_unit_test(test_offsets),
		cmocka_unit_test(test_vtbl),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
