/* test_image_api — the public image API (include/ubikit/image.h) used as
 * a program would, with the public headers only, on a NAND image the Linux
 * kernel wrote (tests/data/kernel-images/nand2k-clean: its manifest is
 * what the kernel itself showed):
 *   - detection: kind, geometry as the VM's nandsim had it (.opts);
 *   - the volume list and the choice by name and id (and wrong ones);
 *   - a read-only open reads the files as the kernel did (md5 from the
 *     manifest) and never changes the image;
 *   - a read-write open changes the dump in place (same size, no sidecar):
 *     after close a new open sees the new files, and the kernel's files
 *     are still intact;
 *   - errors: a missing file, a non-image, named in the message. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "image/image_test_unpack.h"
#include <zlib.h>
#include <ubikit/image.h>
#include <ubikit/ubikit.h>

#include "ubifs/test_md5.h"

#define DATA UBIKIT_TEST_DATA "/kernel-images/nand2k-clean"
#define WORK UBIKIT_BUILD_DIR "/image-api"
#define IMG WORK "/nand.img"

static void unpack(void)
{
	image_test_unpack(DATA ".img.gz", WORK, IMG);
}

static void file_md5(struct ubikit_fs *fs, const char *path, char hex[33])
{
	struct ubikit_file *f;
	assert_int_equal(ubikit_open(fs, path, O_RDONLY, 0, &f), 0);
	struct util_md5 m;
	util_md5_init(&m);
	static char buf[65536];
	ssize_t n;
	while ((n = ubikit_read(f, buf, sizeof(buf))) > 0)
		util_md5_update(&m, buf, (size_t)n);
	assert_true(n == 0);
	ubikit_close(f);
	util_md5_hex(&m, hex);
}

/* Every regular file of the kernel's manifest reads with the kernel's md5. */
static int check_manifest(struct ubikit_fs *fs)
{
	FILE *mf = fopen(DATA ".manifest", "r");
	assert_non_null(mf);
	char line[4096];
	int files = 0;
	while (fgets(line, sizeof(line), mf)) {
		if (!strncmp(line, "== xattrs", 9))
			break;
		char path[2048], type[8], md5[64];
		/* ./path f mode links uid gid size mtime md5 */
		if (sscanf(line, "%2047s %7s %*s %*s %*s %*s %*s %*s %63s", path, type, md5) != 3 || strcmp(type, "f"))
			continue;
		char got[33];
		file_md5(fs, path + 1, got);
		if (strcmp(got, md5))
			fail_msg("%s: md5 %s, the kernel read %s", path, got, md5);
		files++;
	}
	fclose(mf);
	return files;
}

static uint64_t file_sum(const char *path)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	uint64_t h = 1469598103934665603ull;
	int c;
	while ((c = getc(f)) != EOF)
		h = (h ^ (uint64_t)c) * 1099511628211ull;
	fclose(f);
	return h;
}

static void test_detect(void **state)
{
	(void)state;
	unpack();
	struct ubikit_image_opts o;
	ubikit_image_opts_init(&o);
	struct ubikit_image_geo g;
	char msg[1024];
	assert_int_equal(ubikit_image_detect(IMG, &o, &g, msg, sizeof(msg)), 0);
	/* the VM's nandsim: --nand 2048:64:128KiB:16MiB, dumped without OOB */
	assert_int_equal(g.kind, UBIKIT_IMAGE_UBI);
	assert_int_equal(g.peb_size, 128 * 1024);
	assert_int_equal(g.page_size, 2048);
	assert_int_equal(g.peb_count, 16 * 1024 / 128);
	assert_int_equal(g.flash_type, UBIKIT_IMAGE_FLASH_NAND);
	assert_false(g.has_oob);
	assert_true(g.how[0] != '\0');
}

static void test_read_only(void **state)
{
	(void)state;
	unpack();
	uint64_t sum = file_sum(IMG);
	struct ubikit_image_opts o;
	ubikit_image_opts_init(&o);
	struct ubikit_image *img;
	char msg[1024];
	int ret = ubikit_image_open(IMG, &o, &img, msg, sizeof(msg));
	if (ret)
		fail_msg("open: %s", msg);
	struct ubikit_image_volume v[8];
	assert_int_equal(ubikit_image_volumes(img, v, 8), 1);
	assert_string_equal(v[0].name, "rootfs");
	assert_true(v[0].has_ubifs && v[0].chosen && v[0].dynamic);
	struct ubikit_fs *fs = ubikit_image_fs(img);
	assert_non_null(fs);
	assert_int_equal(ubikit_is_read_only(fs), 1);
	assert_true(check_manifest(fs) > 3);
	assert_int_equal(ubikit_mkdir(fs, "/nope", 0755), -EROFS);
	/* choose again, by id then by a wrong name */
	assert_int_equal(ubikit_image_select(img, NULL, 0), 0);
	assert_null(ubikit_image_fs(img));
	assert_int_equal(ubikit_image_mount(img, 0), 0);
	assert_true(check_manifest(ubikit_image_fs(img)) > 3);
	assert_int_equal(ubikit_image_select(img, "nosuchvol", 0), -ENOENT);
	assert_non_null(strstr(ubikit_image_errmsg(img), "nosuchvol"));
	assert_int_equal(ubikit_image_close(img), 0);
	assert_true(file_sum(IMG) == sum);
	/* by name at open; a wrong one fails with the name in the message */
	o.vol_name = "rootfs";
	assert_int_equal(ubikit_image_open(IMG, &o, &img, msg, sizeof(msg)), 0);
	ubikit_image_close(img);
	o.vol_name = "other";
	assert_int_equal(ubikit_image_open(IMG, &o, &img, msg, sizeof(msg)), -ENOENT);
	assert_null(img);
	assert_non_null(strstr(msg, "no UBI volume named 'other'"));
}

static void test_read_write(void **state)
{
	(void)state;
	unpack();
	struct stat st0;
	assert_int_equal(stat(IMG, &st0), 0);
	struct ubikit_image_opts o;
	ubikit_image_opts_init(&o);
	o.flags = UBIKIT_IMAGE_RDWR;
	struct ubikit_image *img;
	char msg[1024];
	int ret = ubikit_image_open(IMG, &o, &img, msg, sizeof(msg));
	if (ret)
		fail_msg("open rw: %s", msg);
	struct ubikit_fs *fs = ubikit_image_fs(img);
	assert_int_equal(ubikit_is_read_only(fs), 0);
	assert_int_equal(ubikit_mkdir(fs, "/api", 0750), 0);
	struct ubikit_file *f;
	assert_int_equal(ubikit_open(fs, "/api/new", O_WRONLY | O_CREAT | O_EXCL, 0640, &f), 0);
	static char data[100000];
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (char)(i * 7 + i / 4096);
	assert_int_equal(ubikit_write(f, data, sizeof(data)), (ssize_t)sizeof(data));
	assert_int_equal(ubikit_close(f), 0);
	assert_int_equal(ubikit_rename(fs, "/dir/hello", "/api/hello", 0), 0);
	assert_int_equal(ubikit_image_close(img), 0);

	/* in place: same size, no sidecar */
	struct stat st1;
	assert_int_equal(stat(IMG, &st1), 0);
	assert_int_equal(st1.st_size, st0.st_size);
	assert_int_equal(access(IMG ".sim", F_OK), -1);

	o.flags = 0;
	assert_int_equal(ubikit_image_open(IMG, &o, &img, msg, sizeof(msg)), 0);
	fs = ubikit_image_fs(img);
	struct ubikit_stat us;
	assert_int_equal(ubikit_stat(fs, "/api/new", &us), 0);
	assert_int_equal(us.size, sizeof(data));
	assert_int_equal(us.mode, S_IFREG | 0640);
	static char back[sizeof(data)];
	assert_int_equal(ubikit_open(fs, "/api/new", O_RDONLY, 0, &f), 0);
	assert_int_equal(ubikit_read(f, back, sizeof(back)), (ssize_t)sizeof(back));
	ubikit_close(f);
	assert_memory_equal(back, data, sizeof(data));
	assert_int_equal(ubikit_stat(fs, "/dir/hello", &us), -ENOENT);
	char h[33];
	file_md5(fs, "/api/hello", h);
	assert_string_equal(h, "1b2eaf8f354357ad96b94e8cae5c0a4d"); /* the kernel's dir/hello */
	ubikit_image_close(img);
}

static void test_errors(void **state)
{
	(void)state;
	struct ubikit_image_opts o;
	ubikit_image_opts_init(&o);
	struct ubikit_image *img = (struct ubikit_image *)1;
	char msg[1024];
	assert_int_equal(ubikit_image_open(WORK "/missing.img", &o, &img, msg, sizeof(msg)), -ENOENT);
	assert_null(img);
	assert_non_null(strstr(msg, "missing.img"));
	FILE *f = fopen(WORK "/junk.img", "wb");
	assert_non_null(f);
	for (int i = 0; i < 300000; i++)
		fputc(i * 13, f);
	fclose(f);
	assert_true(ubikit_image_open(WORK "/junk.img", &o, &img, msg, sizeof(msg)) < 0);
	assert_null(img);
	assert_non_null(strstr(msg, "not a UBI/UBIFS image"));
	assert_string_equal(ubikit_image_kind_name(UBIKIT_IMAGE_NAND_OOB), "raw NAND dump with OOB");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_detect),
		cmocka_unit_test(test_read_only),
		cmocka_unit_test(test_read_write),
		cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
