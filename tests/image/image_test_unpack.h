/* image_test_unpack — the image tests' fixture: a gzipped image from
 * tests/data unpacked to a work file (its simulator sidecar, if any, gone).
 * Include after <cmocka.h>. */
#ifndef UBIKIT_TESTS_IMAGE_TEST_UNPACK_H
#define UBIKIT_TESTS_IMAGE_TEST_UNPACK_H
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

static inline void image_test_unpack(const char *gz, const char *dir, const char *img)
{
	mkdir(dir, 0755);
	gzFile in = gzopen(gz, "rb");
	assert_non_null(in);
	FILE *out = fopen(img, "wb");
	assert_non_null(out);
	static char buf[1 << 16];
	int n;
	while ((n = gzread(in, buf, sizeof(buf))) > 0)
		assert_int_equal(fwrite(buf, 1, (size_t)n, out), (size_t)n);
	assert_int_equal(n, 0);
	gzclose(in);
	assert_int_equal(fclose(out), 0);
	char side[512];
	snprintf(side, sizeof(side), "%s.sim", img);
	unlink(side);
}

#endif
