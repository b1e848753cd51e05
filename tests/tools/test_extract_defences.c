/* test_extract_defences — 'ubikit extract' on hostile images: mkfs.ubifs
 * makes the tree, then directory-entry nodes are rewritten in place (CRC
 * recomputed; the index still points at them, as a hand-made attack image
 * would): names "..", "." and "a/b", and a subdirectory entry that points
 * back at its own parent (a loop). A second image nests directories deeper
 * than extract follows (1024). Each run must: exit non-zero, name the
 * problem, write nothing outside the output directory, skip only what is
 * bad, and extract every other file equal to the source tree. */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "util/util_crc.h"
#include "util/util_endian.h"

#define WORK UBIKIT_BUILD_DIR "/extract-defences"
#define UBIKIT UBIKIT_BUILD_DIR "/tools/ubikit"
enum { LEB = 126976 };

static int run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int run(const char *fmt, ...)
{
	char cmd[8192];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	int st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static uint8_t *load(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	*len = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *b = malloc(*len);
	assert_int_equal(fread(b, 1, *len, f), *len);
	fclose(f);
	return b;
}

static void save(const char *path, const uint8_t *b, size_t len)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(b, 1, len, f), len);
	fclose(f);
}

/* The directory-entry node named `name` (valid CRC): its offset, or 0. */
static size_t find_dent(const uint8_t *img, size_t len, const char *name)
{
	size_t nl = strlen(name);
	for (size_t o = 0; o + 56 + nl < len; o += 8) {
		if (get_le32(img + o) != 0x06101831u || img[o + 20] != 2 /* UBIFS_DENT_NODE */)
			continue;
		uint32_t n = get_le32(img + o + 16);
		if (n != 56 + nl + 1 || get_le16(img + o + 50) != nl || memcmp(img + o + 56, name, nl))
			continue;
		if (util_crc32(UTIL_CRC32_INIT, img + o + 8, n - 8) != get_le32(img + o + 4))
			continue;
		return o;
	}
	return 0;
}

static void fix_crc(uint8_t *node)
{
	uint32_t n = get_le32(node + 16);
	put_le32(node + 4, util_crc32(UTIL_CRC32_INIT, node + 8, n - 8));
}

static void rename_dent(uint8_t *img, size_t len, const char *from, const char *to)
{
	assert_int_equal(strlen(from), strlen(to));
	size_t o = find_dent(img, len, from);
	if (!o)
		fail_msg("no entry node named %s", from);
	memcpy(img + o + 56, to, strlen(to));
	fix_crc(img + o);
}

static uint64_t dent_target(const uint8_t *img, size_t len, const char *name)
{
	size_t o = find_dent(img, len, name);
	assert_int_not_equal(o, 0);
	return get_le64(img + o + 40);
}

static void retarget_dent(uint8_t *img, size_t len, const char *name, uint64_t inum)
{
	size_t o = find_dent(img, len, name);
	assert_int_not_equal(o, 0);
	put_le64(img + o + 40, inum);
	fix_crc(img + o);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int count_in(const char *dir)
{
	DIR *d = opendir(dir);
	assert_non_null(d);
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static void test_bad_names_and_loop(void **state)
{
	(void)state;
	assert_int_equal(run("rm -rf '%s' && mkdir -p '%s/src/sub/inner' '%s/src/loopdir' '%s/src/zz'", WORK, WORK, WORK, WORK), 0);
	/* names of the lengths the attack names will have */
	write_file(WORK "/src/xx", "becomes dot-dot\n");
	write_file(WORK "/src/y", "becomes dot\n");
	write_file(WORK "/src/sub/a_b", "becomes a/b\n");
	write_file(WORK "/src/keep", "kept\n");
	write_file(WORK "/src/sub/inner/deep", "deep kept\n");
	write_file(WORK "/src/zz/escape", "must stay inside\n");
	write_file(WORK "/src/loopdir/f", "in loopdir\n");
	assert_int_equal(run("mkdir -p '%s/src/loopdir/back'", WORK), 0);
	assert_int_equal(run("mkfs.ubifs -r '%s/src' -m 2048 -e %u -c 64 -x none -o '%s/good.img'", WORK, LEB, WORK), 0);
	size_t len;
	uint8_t *img = load(WORK "/good.img", &len);
	rename_dent(img, len, "xx", "..");
	rename_dent(img, len, "y", ".");
	rename_dent(img, len, "a_b", "a/b");
	/* zz is a directory: as "..", extracting it would write beside DIR */
	rename_dent(img, len, "zz", "..");
	/* loopdir/back -> loopdir itself */
	retarget_dent(img, len, "back", dent_target(img, len, "loopdir"));
	save(WORK "/bad.img", img, len);
	free(img);

	/* the output directory sits one level down, so ".." would land in out/ */
	assert_int_equal(run("mkdir -p '%s/out'", WORK), 0);
	int rc = run("'%s' extract '%s/bad.img' -o '%s/out/x' >'%s/log' 2>&1", UBIKIT, WORK, WORK, WORK);
	if (rc == 0)
		fail_msg("extract of the hostile image exited 0");
	assert_int_equal(run("grep -q \"unusable name '\\.\\.'\" '%s/log'", WORK), 0);
	assert_int_equal(run("grep -q \"unusable name '\\.'\" '%s/log'", WORK), 0);
	assert_int_equal(run("grep -q \"unusable name 'a/b'\" '%s/log'", WORK), 0);
	assert_int_equal(run("grep -q 'its own ancestor' '%s/log'", WORK), 0);
	/* nothing outside out/x: out holds only x */
	assert_int_equal(count_in(WORK "/out"), 1);
	/* nothing named a/b created (no directory a in sub) */
	struct stat st;
	assert_int_not_equal(lstat(WORK "/out/x/sub/a", &st), 0);
	assert_int_not_equal(lstat(WORK "/out/escape", &st), 0);
	/* the rest equals the source */
	assert_int_equal(run("cmp -s '%s/src/keep' '%s/out/x/keep'", WORK, WORK), 0);
	assert_int_equal(run("cmp -s '%s/src/sub/inner/deep' '%s/out/x/sub/inner/deep'", WORK, WORK), 0);
	assert_int_equal(run("cmp -s '%s/src/loopdir/f' '%s/out/x/loopdir/f'", WORK, WORK), 0);
	/* root: keep, sub, loopdir (xx, y, zz skipped) */
	assert_int_equal(count_in(WORK "/out/x"), 3);
	/* the loop is cut where it closes: loopdir/back exists, empty */
	assert_int_equal(count_in(WORK "/out/x/loopdir/back"), 0);
	/* the undamaged image extracts cleanly (the reference run) */
	assert_int_equal(run("'%s' extract '%s/good.img' -o '%s/good-out' >/dev/null 2>&1", UBIKIT, WORK, WORK), 0);
	assert_int_equal(run("diff -r '%s/src' '%s/good-out' >/dev/null", WORK, WORK), 0);
}

static void test_depth(void **state)
{
	(void)state;
	assert_int_equal(run("rm -rf '%s' && mkdir -p '%s/src'", WORK, WORK), 0);
	/* 1030 nested directories "d", a file at the bottom and at level 1000 */
	char *p = malloc(8192);
	size_t n = (size_t)snprintf(p, 8192, "%s/src", WORK);
	for (int i = 0; i < 1030; i++) {
		n += (size_t)snprintf(p + n, 8192 - n, "/d");
		if (mkdir(p, 0755))
			fail_msg("mkdir level %d: %s", i, strerror(errno));
		if (i == 999) {
			char f[8192];
			snprintf(f, sizeof(f), "%s/at1000", p);
			write_file(f, "level 1000\n");
		}
	}
	char f[8192];
	snprintf(f, sizeof(f), "%s/bottom", p);
	write_file(f, "too deep\n");
	free(p);
	assert_int_equal(run("mkfs.ubifs -r '%s/src' -m 2048 -e %u -c 200 -x none -o '%s/deep.img'", WORK, LEB, WORK), 0);
	int rc = run("'%s' extract '%s/deep.img' -o '%s/out' >'%s/log' 2>&1", UBIKIT, WORK, WORK, WORK);
	assert_int_not_equal(rc, 0);
	assert_int_equal(run("grep -q 'deeper than 1024 levels' '%s/log'", WORK), 0);
	/* levels up to 1024 are there, with the file at level 1000 intact */
	assert_int_equal(run("cd '%s/out' && n=0 && while [ -d d ]; do cd d; n=$((n+1)); done && test $n -eq 1024", WORK), 0);
	assert_int_equal(run("cd '%s/out' && for i in $(seq 1000); do cd d; done && test \"$(cat at1000)\" = 'level 1000'", WORK), 0);
}

int main(void)
{
	if (run("command -v mkfs.ubifs >/dev/null") != 0) {
		fprintf(stderr, "mkfs.ubifs (mtd-utils) not installed\n");
		return 77;
	}
	mkdir(UBIKIT_BUILD_DIR, 0755);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_names_and_loop),
		cmocka_unit_test(test_depth),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
