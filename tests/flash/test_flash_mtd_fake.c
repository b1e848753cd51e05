/* test_flash_mtd_fake — the MTD backend (flash_mtd.c) on any machine: the
 * test is linked with -Wl,--wrap=ioctl, so the backend's ioctls reach a
 * fake mtdchar below (data in a plain file through the backend's own
 * pread/pwrite). The fake follows the kernel's mtdchar contract
 * (include/uapi/mtd/mtd-abi.h, drivers/mtd/mtdchar.c): read() returns the
 * data even on ECC errors and only ECCGETSTATS' counters tell, MEMERASE64
 * sets the range to 0xFF, MEMGETBADBLOCK answers 0/1 or EOPNOTSUPP.
 * Checked: the ECC-counter mapping (failed -> -EBADMSG, corrected ->
 * -EUCLEAN, failed wins, no ECCGETSTATS -> plain reads), geometry from
 * MEMGETINFO, open errors, erase, bad blocks, read-only refusals.
 * test_flash_mtd covers a real /dev/mtd (nandsim) when one exists. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include <mtd/mtd-user.h>

#include "flash/flash_mtd.h"

#define WORK UBIKIT_BUILD_DIR "/flash-mtd-fake"
#define IMG WORK "/mtd.bin"

enum { PAGE = 2048, PEB = 128 * 1024, NPEB = 8 };

/* the fake device */
static struct {
	int fd;                 /* the backend's fd once MEMGETINFO was asked */
	struct mtd_info_user info;
	int info_errno;         /* MEMGETINFO fails with this (0: succeeds) */
	bool no_ecc_stats;      /* ECCGETSTATS -> ENOTTY */
	struct mtd_ecc_stats st;
	unsigned ecc_calls;
	uint32_t next_corrected, next_failed; /* added by the read in progress */
	int bad[NPEB];
	bool badblock_unsupported;
	int erase_errno;
	unsigned erases;
} fk;

int __real_ioctl(int fd, unsigned long req, ...);
int __wrap_ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	va_start(ap, req);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	switch (req) {
	case MEMGETINFO:
		if (fk.info_errno) {
			errno = fk.info_errno;
			return -1;
		}
		fk.fd = fd;
		memcpy(arg, &fk.info, sizeof(fk.info));
		return 0;
	case ECCGETSTATS:
		if (fk.no_ecc_stats) {
			errno = ENOTTY;
			return -1;
		}
		/* the backend asks before and after each read: the read's
		 * ECC events land in between */
		if (fk.ecc_calls++ % 2 == 1) {
			fk.st.corrected += fk.next_corrected;
			fk.st.failed += fk.next_failed;
			fk.next_corrected = fk.next_failed = 0;
		}
		memcpy(arg, &fk.st, sizeof(fk.st));
		return 0;
	case MEMERASE64: {
		const struct erase_info_user64 *ei = arg;
		if (fk.erase_errno) {
			errno = fk.erase_errno;
			return -1;
		}
		if (ei->start % PEB || ei->length != PEB) {
			errno = EINVAL;
			return -1;
		}
		uint8_t *ff = malloc(PEB);
		memset(ff, 0xFF, PEB);
		ssize_t n = pwrite(fd, ff, PEB, (off_t)ei->start);
		free(ff);
		fk.erases++;
		return n == PEB ? 0 : -1;
	}
	case MEMGETBADBLOCK:
		if (fk.badblock_unsupported) {
			errno = EOPNOTSUPP;
			return -1;
		}
		return fk.bad[*(long long *)arg / PEB];
	case MEMSETBADBLOCK:
		fk.bad[*(long long *)arg / PEB] = 1;
		return 0;
	default:
		return __real_ioctl(fd, req, arg);
	}
}

static int setup(void **state)
{
	(void)state;
	memset(&fk, 0, sizeof(fk));
	fk.fd = -1;
	fk.info.type = MTD_NANDFLASH;
	fk.info.flags = MTD_CAP_NANDFLASH;
	fk.info.size = NPEB * PEB;
	fk.info.erasesize = PEB;
	fk.info.writesize = PAGE;
	fk.info.oobsize = 64;
	int fd = open(IMG, O_RDWR | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, NPEB * PEB), 0);
	uint8_t *ff = malloc(NPEB * PEB);
	memset(ff, 0xFF, NPEB * PEB);
	assert_int_equal(pwrite(fd, ff, NPEB * PEB, 0), NPEB * PEB);
	free(ff);
	close(fd);
	return 0;
}

static void test_geometry_and_io(void **state)
{
	(void)state;
	struct flash_dev *d;
	assert_int_equal(flash_mtd_open(IMG, false, &d), 0);
	assert_true(flash_is_mtd(d));
	assert_int_equal(d->geo.type, FLASH_NAND);
	assert_int_equal(d->geo.page_size, PAGE);
	assert_int_equal(d->geo.subpage_size, PAGE); /* not a char device: no sysfs */
	assert_int_equal(d->geo.oob_size, 64);
	assert_int_equal(d->geo.peb_size, PEB);
	assert_int_equal(d->geo.peb_count, NPEB);
	static uint8_t a[PAGE * 2], b[PAGE * 2];
	for (size_t i = 0; i < sizeof(a); i++)
		a[i] = (uint8_t)(i * 7 + 1);
	assert_int_equal(flash_write(d, 3, PAGE, a, sizeof(a)), 0);
	assert_int_equal(flash_read(d, 3, PAGE, b, sizeof(b)), 0);
	assert_memory_equal(a, b, sizeof(a));
	/* bounds and alignment */
	assert_int_equal(flash_read(d, NPEB, 0, b, 1), -EINVAL);
	assert_int_equal(flash_read(d, 0, PEB - 1, b, 2), -EINVAL);
	assert_int_equal(flash_write(d, 0, 100, a, PAGE), -EINVAL);
	assert_int_equal(flash_write(d, 0, 0, a, 100), -EINVAL);
	/* erase: the PEB reads back as 0xFF */
	assert_int_equal(flash_erase(d, 3), 0);
	assert_int_equal(fk.erases, 1);
	assert_int_equal(flash_read(d, 3, PAGE, b, PAGE), 0);
	for (int i = 0; i < PAGE; i++)
		assert_int_equal(b[i], 0xFF);
	assert_int_equal(flash_erase(d, NPEB), -EINVAL);
	fk.erase_errno = EIO;
	assert_int_equal(flash_erase(d, 2), -EIO);
	assert_int_equal(flash_sync(d), 0);
	flash_close(d);
}

static void test_ecc_counters(void **state)
{
	(void)state;
	struct flash_dev *d;
	assert_int_equal(flash_mtd_open(IMG, true, &d), 0);
	static uint8_t b[PAGE];
	assert_int_equal(flash_read(d, 1, 0, b, PAGE), 0);
	/* corrected bit flips (mtd_read's -EUCLEAN) */
	fk.next_corrected = 2;
	assert_int_equal(flash_read(d, 1, 0, b, PAGE), -EUCLEAN);
	/* the counters are compared per read, not absolute */
	assert_int_equal(flash_read(d, 1, 0, b, PAGE), 0);
	/* uncorrectable (mtd_read's -EBADMSG) */
	fk.next_failed = 1;
	assert_int_equal(flash_read(d, 1, 0, b, PAGE), -EBADMSG);
	/* both in one read: the uncorrectable error wins */
	fk.next_failed = 1;
	fk.next_corrected = 5;
	assert_int_equal(flash_read(d, 1, 0, b, PAGE), -EBADMSG);
	assert_int_equal(flash_read(d, 1, 0, b, PAGE), 0);
	/* the data comes back even on an ECC error (mtdchar returns it) */
	assert_int_equal(b[0], 0xFF);
	flash_close(d);

	/* a driver without ECCGETSTATS: reads are plain, never -EUCLEAN */
	fk.no_ecc_stats = true;
	assert_int_equal(flash_mtd_open(IMG, true, &d), 0);
	fk.next_corrected = 1;
	assert_int_equal(flash_read(d, 1, 0, b, PAGE), 0);
	assert_int_equal(flash_read(d, 1, 0, b, PAGE), 0);
	flash_close(d);
}

static void test_bad_blocks_and_read_only(void **state)
{
	(void)state;
	struct flash_dev *d;
	fk.bad[5] = 1;
	assert_int_equal(flash_mtd_open(IMG, true, &d), 0);
	assert_int_equal(flash_is_bad(d, 5), 1);
	assert_int_equal(flash_is_bad(d, 4), 0);
	assert_int_equal(flash_is_bad(d, NPEB), -EINVAL);
	static uint8_t a[PAGE];
	assert_int_equal(flash_write(d, 0, 0, a, PAGE), -EROFS);
	assert_int_equal(flash_erase(d, 0), -EROFS);
	assert_int_equal(flash_mark_bad(d, 0), -EROFS);
	flash_close(d);
	assert_int_equal(flash_mtd_open(IMG, false, &d), 0);
	assert_int_equal(flash_mark_bad(d, 6), 0);
	assert_int_equal(fk.bad[6], 1);
	assert_int_equal(flash_is_bad(d, 6), 1);
	assert_int_equal(flash_mark_bad(d, NPEB), -EINVAL);
	fk.badblock_unsupported = true;
	assert_int_equal(flash_is_bad(d, 6), 0);
	flash_close(d);
	/* NOR: no bad blocks, write unit = writesize */
	fk.badblock_unsupported = false;
	fk.info.type = MTD_NORFLASH;
	fk.info.writesize = 1;
	assert_int_equal(flash_mtd_open(IMG, true, &d), 0);
	assert_int_equal(d->geo.type, FLASH_NOR);
	assert_int_equal(d->geo.subpage_size, 1);
	assert_int_equal(flash_is_bad(d, 5), 0);
	flash_close(d);
}

static void test_open_errors(void **state)
{
	(void)state;
	struct flash_dev *d = (struct flash_dev *)1;
	assert_int_equal(flash_mtd_open(WORK "/does-not-exist", true, &d), -ENOENT);
	assert_null(d);
	/* not an MTD device: MEMGETINFO -> ENOTTY */
	fk.info_errno = ENOTTY;
	assert_int_equal(flash_mtd_open(IMG, true, &d), -ENODEV);
	fk.info_errno = EPERM;
	assert_int_equal(flash_mtd_open(IMG, true, &d), -EPERM);
	fk.info_errno = 0;
	/* nonsense geometry */
	fk.info.erasesize = 0;
	assert_int_equal(flash_mtd_open(IMG, true, &d), -EINVAL);
	fk.info.erasesize = PEB;
	fk.info.size = NPEB * PEB + 1;
	assert_int_equal(flash_mtd_open(IMG, true, &d), -EINVAL);
	fk.info.size = NPEB * PEB;
	fk.info.writesize = 0;
	assert_int_equal(flash_mtd_open(IMG, true, &d), -EINVAL);
}

int main(void)
{
	mkdir(UBIKIT_BUILD_DIR, 0755);
	mkdir(WORK, 0755);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_geometry_and_io, setup),
		cmocka_unit_test_setup(test_ecc_counters, setup),
		cmocka_unit_test_setup(test_bad_blocks_and_read_only, setup),
		cmocka_unit_test_setup(test_open_errors, setup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
