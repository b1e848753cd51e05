/* ubi_test_ini — the ubinize ini dialect (tools/ubi_tool_ini.c) and the
 * mtd-utils number/size rules (tools/ubi_tool_num.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "ubi_tool_ini.h"
#include "ubi_tool_num.h"

static char *write_tmp(const char *text)
{
	char *path = strdup("/tmp/ubikit-ini-XXXXXX");
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

static int load(const char *text, struct ubi_ini *ini, struct util_err *err)
{
	char *p = write_tmp(text);
	int r = ubi_ini_load(p, ini, err);
	unlink(p);
	free(p);
	return r;
}

static void test_ini_basic(void **state)
{
	(void)state;
	struct ubi_ini ini;
	struct util_err err = {{0}};
	assert_int_equal(load("; comment\n# other comment\n\n"
			      "[RootFS]\n"
			      "Mode = ubi\n"
			      "vol_name = \"My Vol ; # x\"\n"
			      "vol_size=2MiB   # trailing comment\n"
			      "image = 'a b.img'\n"
			      "empty =\n"
			      "empty2 = \"\"\n"
			      "long = abc\\\n"
			      "def\n"
			      "[second]\n"
			      "vol_id=1\n"
			      "vol_id=2\n"
			      "[rootfs]\n"
			      "extra=yes\n",
			      &ini, &err),
			 0);
	assert_int_equal(ubi_ini_nsec(&ini), 2);
	assert_string_equal(ubi_ini_secname(&ini, 0), "rootfs");
	assert_string_equal(ubi_ini_secname(&ini, 1), "second");
	assert_null(ubi_ini_secname(&ini, 2));
	assert_string_equal(ubi_ini_get(&ini, "rootfs", "mode"), "ubi");
	assert_string_equal(ubi_ini_get(&ini, "ROOTFS", "MODE"), "ubi");
	assert_string_equal(ubi_ini_get(&ini, "rootfs", "vol_name"), "My Vol ; # x");
	assert_string_equal(ubi_ini_get(&ini, "rootfs", "vol_size"), "2MiB");
	assert_string_equal(ubi_ini_get(&ini, "rootfs", "image"), "a b.img");
	assert_string_equal(ubi_ini_get(&ini, "rootfs", "empty"), "");
	assert_string_equal(ubi_ini_get(&ini, "rootfs", "empty2"), "");
	assert_string_equal(ubi_ini_get(&ini, "rootfs", "long"), "abcdef");
	assert_string_equal(ubi_ini_get(&ini, "rootfs", "extra"), "yes");
	assert_string_equal(ubi_ini_get(&ini, "second", "vol_id"), "2"); /* later value wins */
	assert_null(ubi_ini_get(&ini, "second", "mode"));
	assert_null(ubi_ini_get(&ini, "third", "vol_id"));
	ubi_ini_free(&ini);
}

static void test_ini_errors(void **state)
{
	(void)state;
	struct ubi_ini ini;
	struct util_err err = {{0}};
	assert_int_equal(load("[a]\nmode=ubi\nno equals sign here\n", &ini, &err), -EINVAL);
	assert_non_null(strstr(util_err_msg(&err), "line 3"));
	assert_int_equal(load("[a]\n= value without key\n", &ini, &err), -EINVAL);
	assert_non_null(strstr(util_err_msg(&err), "line 2"));
	assert_int_equal(ubi_ini_load("/nonexistent/ubikit.ini", &ini, &err), -ENOENT);
	assert_non_null(strstr(util_err_msg(&err), "/nonexistent/ubikit.ini"));
	/* keys before any section are not a section */
	assert_int_equal(load("mode=ubi\n", &ini, &err), 0);
	assert_int_equal(ubi_ini_nsec(&ini), 0);
	ubi_ini_free(&ini);
}

static void test_numbers(void **state)
{
	(void)state;
	uint64_t v;
	int64_t s;
	assert_true(ubi_tool_parse_bytes("128KiB", &v));
	assert_int_equal(v, 131072);
	assert_true(ubi_tool_parse_bytes("2 MiB", &v)); /* mtd-utils allows a space */
	assert_int_equal(v, 2 << 20);
	assert_true(ubi_tool_parse_bytes("0x800", &v));
	assert_int_equal(v, 2048);
	assert_true(ubi_tool_parse_bytes("1G", &v));
	assert_int_equal(v, 1 << 30);
	assert_false(ubi_tool_parse_bytes("12XB", &v));
	assert_false(ubi_tool_parse_bytes("", &v));
	assert_false(ubi_tool_parse_bytes("-5", &v));
	assert_false(ubi_tool_parse_bytes("99999999999GiB", &v));
	assert_true(ubi_tool_parse_u64("0x10", &v));
	assert_int_equal(v, 16);
	assert_true(ubi_tool_parse_u64("010", &v)); /* C octal, as strtoul base 0 */
	assert_int_equal(v, 8);
	assert_false(ubi_tool_parse_u64("12k", &v));
	assert_false(ubi_tool_parse_u64("-1", &v));
	assert_true(ubi_tool_parse_i64("-3", &s));
	assert_int_equal(s, -3);
	assert_false(ubi_tool_parse_i64("x1", &s));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ini_basic),
		cmocka_unit_test(test_ini_errors),
		cmocka_unit_test(test_numbers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
