/* test_ubi_fuzz_corpus — runs every input of the fuzz_ubi_attach corpus
 * (seeds and inputs that once crashed) through the fuzz target in every
 * build, the non-fuzz ones included, so regressions show without clang's
 * libFuzzer; then a deterministic sweep of single-byte changes with the
 * target's "recompute every CRC" mode, so the checks behind the CRCs see
 * them. A crash, leak or sanitizer report fails the test. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "../fuzz/fuzz_ubi_attach.c"

#define CORPUS UBIKIT_TEST_DATA "/../fuzz/corpus/ubi_attach"
#define MAX_IN (1 + (size_t)MAXPEB * PEB)

static uint8_t buf[MAX_IN];

static size_t load_file(const char *name)
{
	char p[1024];
	snprintf(p, sizeof(p), "%s/%s", CORPUS, name);
	FILE *f = fopen(p, "rb");
	assert_non_null(f);
	size_t len = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	return len;
}

static void t_corpus(void **s)
{
	(void)s;
	DIR *d = opendir(CORPUS);
	assert_non_null(d);
	struct dirent *e;
	int n = 0;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		size_t len = load_file(e->d_name);
		assert_int_equal(LLVMFuzzerTestOneInput(buf, len), 0);
		n++;
	}
	closedir(d);
	fprintf(stderr, "%d corpus inputs run\n", n);
	assert_true(n >= 4);
}

static void t_sweep(void **s)
{
	(void)s;
	const char *seeds[] = {"nand_dynamic", "nor_static"};
	unsigned runs = 0;
	for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
		size_t len = load_file(seeds[i]);
		assert_true(len > 1);
		buf[0] |= 4; /* fix up the CRCs after the change */
		for (size_t at = 1; at < len; at += 257) {
			uint8_t was = buf[at];
			buf[at] = (uint8_t)(was ^ (1u << (at % 8)));
			assert_int_equal(LLVMFuzzerTestOneInput(buf, len), 0);
			buf[at] = was;
			runs++;
		}
	}
	fprintf(stderr, "%u mutated attaches\n", runs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(t_corpus), cmocka_unit_test(t_sweep)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
