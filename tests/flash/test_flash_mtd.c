/* test_flash_mtd — the MTD char-device backend where no MTD device exists:
 * a non-MTD file and a missing path are refused. The backend on a real
 * /dev/mtdX (geometry from sysfs, reads, bad-block query and marking,
 * erase, sub-page programs, the read-only open refusing writes) is tested
 * inside the Linux VM on nandsim by tests/flash/mtd_probe.c, run by
 * test_flash_vm: a host never has /dev/mtd0, and a test that could only
 * skip here would hide that. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <cmocka.h>

#include "flash/flash_mtd.h"

static void test_not_mtd(void **state)
{
	(void)state;
	struct flash_dev *d = NULL;
	assert_true(flash_mtd_open("/dev/null", true, &d) < 0);
	assert_null(d);
	assert_true(flash_mtd_open("/nonexistent/mtd", true, &d) < 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_not_mtd),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
