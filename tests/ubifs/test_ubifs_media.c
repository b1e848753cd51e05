/* test_ubifs_media — keys, name hashes (spec test vectors), node checks,
 * device number decoding. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "ubifs/ubifs_media.h"
#include "util/util_crc.h"
#include "util/util_endian.h"

static void t_hash(void **s)
{
	(void)s;
	struct {
		const char *n;
		uint32_t h;
	} v[] = {{"a", 0x42F2},	       {"hello", 0x11990232},	     {"lost+found", 0x1BD7DF7B},
		 {"link", 0x01A92C50},   {"subdir", 0x169515C7},	     {"hello.txt", 0x109521D5},
		 {"\xc3\xa9t\xc3\xa9", 0x15832DED}, {"c10072071", 0x0B7E1AA2}, {"c28000000", 0x0B7E1AA2},
		 {"user.comment", 0x1F386126}, {"corrupt_file", 0x0C95C026}, {"user.corrupt", 0x0016CEFE},
		 {"dir", 0x00240985}};
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		assert_int_equal(ubifs_hash_r5(v[i].n, strlen(v[i].n)), v[i].h);
	char n255[255];
	memset(n255, 'n', 255);
	assert_int_equal(ubifs_hash_r5(n255, 255), 0x1F12ED1A);
	assert_int_equal(ubifs_hash_r5("", 0), 3);
	assert_int_equal(ubifs_hash_test("link", 4), 0x0B6E696C);
	assert_int_equal(ubifs_hash_test("subdir", 6), 0x04627573);
	assert_int_equal(ubifs_hash_test("hello.txt", 9), 0x0C6C6568);
	assert_int_equal(ubifs_name_hash(1, "link", 4), 0x0B6E696C);
}

static void t_keys(void **s)
{
	(void)s;
	uint8_t b[8];
	struct ubifs_key k = ubifs_key_make(67, UBIFS_DATA_KEY, 0);
	ubifs_key_write(b, &k);
	assert_memory_equal(b, "\x43\x00\x00\x00\x00\x00\x00\x20", 8);
	k = ubifs_key_make(80, UBIFS_DATA_KEY, 3);
	ubifs_key_write(b, &k);
	assert_memory_equal(b, "\x50\x00\x00\x00\x03\x00\x00\x20", 8);
	k = ubifs_key_make(1, UBIFS_DENT_KEY, 0x109521D5);
	ubifs_key_write(b, &k);
	assert_memory_equal(b, "\x01\x00\x00\x00\xd5\x21\x95\x50", 8);
	k = ubifs_key_read((const uint8_t *)"\x4c\x00\x00\x00\x26\x61\x38\x7f");
	assert_int_equal(k.inum, 76);
	assert_int_equal(ubifs_key_type(&k), UBIFS_XENT_KEY);
	assert_int_equal(ubifs_key_value(&k), 0x1F386126);
	struct ubifs_key a = ubifs_key_make(5, UBIFS_XENT_KEY, 1), c = ubifs_key_make(6, UBIFS_INO_KEY, 0);
	assert_true(ubifs_key_cmp(&a, &c) < 0);
	a = ubifs_key_make(6, UBIFS_DATA_KEY, 0);
	assert_true(ubifs_key_cmp(&a, &c) > 0);
	char ks[64];
	assert_string_equal(ubifs_key_str(&a, ks, sizeof(ks)), "(6, DATA, 0)");
}

static void t_node_check(void **s)
{
	(void)s;
	/* the padding node of TEST-VECTORS §6.1 */
	uint8_t pad[28] = {0x31, 0x18, 0x10, 0x06, 0xc2, 0xf5, 0x9a, 0xba, 0, 0, 0, 0, 0, 0, 0, 0,
			   0x1c, 0, 0, 0, 5, 0, 0, 0, 0xf4, 0x03, 0, 0};
	assert_int_equal(ubifs_check_node(pad, 28, 1008, 129024, 8), UBIFS_CHK_OK);
	assert_int_equal(ubifs_check_node(pad, 28, 129024 - 20, 129024, 8), UBIFS_CHK_BAD_LEN);
	pad[25] ^= 1;
	assert_int_equal(ubifs_check_node(pad, 28, 0, 129024, 8), UBIFS_CHK_BAD_CRC);
	pad[20] = 14;
	assert_int_equal(ubifs_check_node(pad, 28, 0, 129024, 8), UBIFS_CHK_BAD_TYPE);
	pad[0] = 0;
	assert_int_equal(ubifs_check_node(pad, 28, 0, 129024, 8), UBIFS_CHK_BAD_MAGIC);
	/* a commit start node (TEST-VECTORS §6.2) */
	uint8_t cs[32] = {0x31, 0x18, 0x10, 0x06, 0xf1, 0x15, 0x66, 0x07, 0x12, 0, 0, 0, 0, 0, 0, 0,
			  0x20, 0, 0, 0, 10, 0, 0, 0};
	assert_int_equal(ubifs_check_node(cs, 32, 0, 129024, 8), UBIFS_CHK_OK);
	assert_int_equal(ubifs_cs_cmt_no(cs), 0);
}

static void t_dev(void **s)
{
	(void)s;
	uint32_t ma, mi;
	ubifs_decode_dev((const uint8_t *)"\x01\x00\x00\x00", 4, &ma, &mi);
	assert_int_equal(ma, 0);
	assert_int_equal(mi, 1);
	ubifs_decode_dev((const uint8_t *)"\x02\x01\x00\x00", 4, &ma, &mi);
	assert_int_equal(ma, 1);
	assert_int_equal(mi, 2);
	ubifs_decode_dev((const uint8_t *)"\x40\x04\x00\x00\x00\x00\x00\x00", 8, &ma, &mi);
	assert_int_equal(ma, 4);
	assert_int_equal(mi, 64);
	/* minor 300 = 0x12C: low byte 0x2C, high bits 0x100 << 12 */
	uint8_t d[4];
	put_le32(d, 0x2C | (10 << 8) | (0x100 << 12));
	ubifs_decode_dev(d, 4, &ma, &mi);
	assert_int_equal(ma, 10);
	assert_int_equal(mi, 300);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(t_hash), cmocka_unit_test(t_keys),
					   cmocka_unit_test(t_node_check), cmocka_unit_test(t_dev)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
