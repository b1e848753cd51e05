/* test_flash_mtd — the MTD char-device backend (the VM test runs the fuller
 * tests/flash/mtd_probe.c on nandsim). Runs only where an MTD
 * device exists (a board, or nandsim in the VM); skipped elsewhere. Read
 * only: checks geometry against sysfs and that reads and bad-block queries
 * work; also that a non-MTD file is refused. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
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

static void test_mtd0(void **state)
{
	(void)state;
	const char *path = getenv("UBIKIT_TEST_MTD") ? getenv("UBIKIT_TEST_MTD") : "/dev/mtd0";
	if (access(path, R_OK) != 0) {
		skip();
		return;
	}
	struct flash_dev *d = NULL;
	assert_int_equal(flash_mtd_open(path, true, &d), 0);
	assert_true(flash_is_mtd(d));
	assert_true(d->geo.peb_size > 0 && d->geo.peb_count > 0 && d->geo.page_size > 0);
	assert_int_equal(d->geo.peb_size % d->geo.page_size, 0);
	uint8_t *buf = malloc(d->geo.page_size);
	int r = flash_read(d, 0, 0, buf, d->geo.page_size);
	assert_true(r == 0 || r == -EUCLEAN || r == -EBADMSG);
	assert_true(flash_is_bad(d, 0) >= 0);
	assert_int_equal(flash_write(d, 0, 0, buf, d->geo.page_size), -EROFS);
	assert_int_equal(flash_erase(d, 0), -EROFS);
	free(buf);
	flash_close(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_not_mtd),
		cmocka_unit_test(test_mtd0),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
