/* test_util — CRC vectors (spec TEST-VECTORS.md), size parsing, SplitMix64. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "util/util_crc.h"
#include "util/util_endian.h"
#include "util/util_prng.h"
#include "util/util_size.h"

static void test_crc32_vector(void **state)
{
	(void)state;
	assert_int_equal(util_crc32(UTIL_CRC32_INIT, "123456789", 9), 0x340BC6D9u);
	/* Continuation equals one-shot. */
	uint32_t c = util_crc32(UTIL_CRC32_INIT, "1234", 4);
	assert_int_equal(util_crc32(c, "56789", 5), 0x340BC6D9u);
	uint8_t zeros[168] = {0};
	assert_int_equal(util_crc32(UTIL_CRC32_INIT, zeros, sizeof(zeros)), 0xF116C36Bu);
}

static void test_crc16_vector(void **state)
{
	(void)state;
	/* CRC-16/MODBUS check value. */
	assert_int_equal(util_crc16(UTIL_CRC16_INIT, "123456789", 9), 0x4B37);
}

static void test_sizes(void **state)
{
	(void)state;
	uint64_t v;
	assert_int_equal(util_parse_size("2048", &v), 0);
	assert_int_equal(v, 2048);
	assert_int_equal(util_parse_size("128KiB", &v), 0);
	assert_int_equal(v, 131072);
	assert_int_equal(util_parse_size("256MiB", &v), 0);
	assert_int_equal(v, 256u << 20);
	assert_int_equal(util_parse_size("4G", &v), 0);
	assert_int_equal(v, 4ull << 30);
	assert_int_equal(util_parse_size("0x800", &v), 0);
	assert_int_equal(v, 2048);
	assert_int_equal(util_parse_size("12XB", &v), -EINVAL);
	assert_int_equal(util_parse_size("", &v), -EINVAL);
	assert_int_equal(util_parse_size("-1", &v), -EINVAL);
	assert_int_equal(util_parse_size("99999999999999999999", &v), -ERANGE);
	assert_int_equal(util_parse_size("17179869184GiB", &v), -ERANGE);
	/* Units are explicit powers of 1024; decimal- or bit-looking ones are refused. */
	assert_int_equal(util_parse_size("10 MiB", &v), 0);
	assert_int_equal(v, 10u << 20);
	assert_int_equal(util_parse_size("1TiB", &v), 0);
	assert_int_equal(v, 1ull << 40);
	assert_int_equal(util_parse_size("10Mb", &v), -EINVAL);
	assert_int_equal(util_parse_size("10MB", &v), -EINVAL);
	assert_int_equal(util_parse_size("10kb", &v), -EINVAL);
	assert_int_equal(util_parse_size("10mib", &v), -EINVAL);
	assert_int_equal(util_parse_size(" 10", &v), -EINVAL);
	assert_int_equal(util_parse_size("10 ", &v), -EINVAL);
	assert_int_equal(util_parse_uint("10K", &v), -EINVAL);
	assert_int_equal(util_parse_uint("0x10", &v), 0);
	assert_int_equal(v, 16);
	/* Range checks. */
	assert_int_equal(util_parse_uint_in("255", 0, 255, &v), 0);
	assert_int_equal(util_parse_uint_in("999", 0, 255, &v), -ERANGE);
	assert_int_equal(util_parse_size_in("0", 1, 100, &v), -ERANGE);
	assert_int_equal(util_parse_size_in("4294965249", 0, UINT32_MAX, &v), 0);
	assert_int_equal(util_parse_size_in("4GiB", 0, UINT32_MAX, &v), -ERANGE);
}

static void test_splitmix(void **state)
{
	(void)state;
	struct util_prng r;
	util_prng_seed(&r, 3);
	assert_int_equal(util_prng_next(&r), 0x1d0b14e4db018fedull);
	/* BENCH.md W3: first slots with seed 3. */
	util_prng_seed(&r, 3);
	const unsigned slots[] = {4077, 2441, 3329, 2511, 2454, 3847, 3512, 534};
	for (int i = 0; i < 8; i++)
		assert_int_equal(util_prng_below(&r, 4096), slots[i]);
}

static void test_endian(void **state)
{
	(void)state;
	uint8_t b[8];
	put_be32(b, 0x55424923u);
	assert_memory_equal(b, "UBI#", 4);
	put_le64(b, 0x0102030405060708ull);
	assert_int_equal(b[0], 8);
	assert_int_equal(get_le64(b), 0x0102030405060708ull);
	put_be64(b, 0x0102030405060708ull);
	assert_int_equal(b[0], 1);
	assert_int_equal(get_be64(b), 0x0102030405060708ull);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crc32_vector), cmocka_unit_test(test_crc16_vector),
		cmocka_unit_test(test_sizes),        cmocka_unit_test(test_splitmix),
		cmocka_unit_test(test_endian),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
