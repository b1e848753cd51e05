/* test_ubifs_fuzz_corpus — runs every input of the fuzz_ubifs_mount corpus
 * (seeds and inputs that once crashed) through the fuzz target in the
 * ordinary (gcc, ASan/UBSan) build, so regressions show up without clang. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "../fuzz/fuzz_ubifs_mount.c"

#define CORPUS UBIKIT_TEST_DATA "/../fuzz/corpus/ubifs_mount"

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
		char p[1024];
		snprintf(p, sizeof(p), "%s/%s", CORPUS, e->d_name);
		FILE *f = fopen(p, "rb");
		assert_non_null(f);
		static uint8_t buf[MAX_IMG];
		size_t len = fread(buf, 1, sizeof(buf), f);
		fclose(f);
		assert_int_equal(LLVMFuzzerTestOneInput(buf, len), 0);
		/* and once more with the other CRC mode */
		if (len > 1)
			assert_int_equal(LLVMFuzzerTestOneInput(buf, len - 1), 0);
		n++;
	}
	closedir(d);
	fprintf(stderr, "%d corpus inputs run\n", n);
	assert_true(n >= 5);
}

/* a deterministic sweep: every 13th byte of some seeds changed in turn,
 * CRC checks off (odd length) so that the parsers behind them see it */
static void t_sweep(void **s)
{
	(void)s;
	const char *seeds[] = {"kernel_good", "kernel_journal_bud", "mkfs_seed2"};
	uint64_t runs = 0;
	for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
		char p[1024];
		snprintf(p, sizeof(p), "%s/%s", CORPUS, seeds[i]);
		FILE *f = fopen(p, "rb");
		assert_non_null(f);
		static uint8_t buf[MAX_IMG];
		size_t len = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		if (!(len & 1))
			buf[len++] = 0xFF; /* odd: CRCs skipped */
		for (size_t at = 8; at < len; at += 13) {
			uint8_t was = buf[at];
			buf[at] = (uint8_t)(was ^ (1u << (at % 8))) + (uint8_t)(at % 3 == 0);
			assert_int_equal(LLVMFuzzerTestOneInput(buf, len), 0);
			buf[at] = was;
			runs++;
		}
	}
	fprintf(stderr, "%llu mutated mounts\n", (unsigned long long)runs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(t_corpus), cmocka_unit_test(t_sweep)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
