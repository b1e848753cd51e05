/* af_wrap — allocation-failure injection for tests, at link time: a test
 * binary linked with -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,
 * --wrap=strdup,--wrap=strndup (tests/fs/CMakeLists.txt) sends every
 * allocation of the ubikit libraries through af_wrap.c, which counts the
 * allocations made while armed and fails the one chosen (returns NULL). The
 * libraries are not changed: production code has no hook.
 *
 * The plan used by the tests: run a scenario once with nothing failing,
 * recording the call site (return address) of each allocation; then rerun
 * it once per call site, failing the first and then the last allocation
 * made there. Every run must end either with the full, correct result or
 * with -ENOMEM, and free all it allocated (LeakSanitizer in the ASan build). */
#ifndef UBIKIT_TESTS_FS_AF_WRAP_H
#define UBIKIT_TESTS_FS_AF_WRAP_H
#include <stddef.h>
#include <stdint.h>

#define AF_MAX_SITES 4096

struct af_site {
	uintptr_t ra;        /* return address of the call (identifies the site) */
	long first, last;    /* indices (1-based) of its first/last allocation in a clean run */
};

/* Count (and maybe fail) allocations only while armed. */
void af_arm(void);
void af_disarm(void);
/* Start a run: fail the allocation with this index (1-based; 0 = none). */
void af_reset(long fail_at);
/* After a run: allocations counted; did the chosen one fail; the call site of
 * the one that failed. */
long af_count(void);
int af_failed(void);
uintptr_t af_failed_ra(void);
/* Record the call sites of the next run (af_reset(0) first); then read
 * them: the number of distinct sites, filled into sites[] (up to max). */
void af_record(int on);
size_t af_sites(struct af_site *sites, size_t max);

/* Allocation for the test's own bookkeeping, never failed or counted. */
void *af_test_malloc(size_t n);
void *af_test_realloc(void *p, size_t n);

#endif
