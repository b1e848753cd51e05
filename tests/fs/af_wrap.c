/* af_wrap — see af_wrap.h. Test-only; linked with --wrap so that the
 * libraries' malloc/calloc/realloc/strdup/strndup land here. */
#include "af_wrap.h"

#include <stdlib.h>
#include <string.h>

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t sz);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);

static int armed, recording, failed;
static long count, fail_at;
static uintptr_t failed_ra;
static struct af_site sites[AF_MAX_SITES];
static size_t nsites;

void af_arm(void)
{
	armed = 1;
}

void af_disarm(void)
{
	armed = 0;
}

void af_reset(long at)
{
	count = 0;
	fail_at = at;
	failed = 0;
	failed_ra = 0;
}

long af_count(void)
{
	return count;
}

int af_failed(void)
{
	return failed;
}

uintptr_t af_failed_ra(void)
{
	return failed_ra;
}

void af_record(int on)
{
	recording = on;
	if (on)
		nsites = 0;
}

size_t af_sites(struct af_site *out, size_t max)
{
	size_t n = nsites < max ? nsites : max;
	memcpy(out, sites, n * sizeof(*out));
	return nsites;
}

/* 1: this allocation must fail */
static int hit(uintptr_t ra)
{
	if (!armed)
		return 0;
	count++;
	if (recording) {
		size_t i;
		for (i = 0; i < nsites && sites[i].ra != ra; i++)
			;
		if (i == nsites && nsites < AF_MAX_SITES)
			sites[nsites++] = (struct af_site){ra, count, count};
		else if (i < nsites)
			sites[i].last = count;
	}
	if (count != fail_at)
		return 0;
	failed = 1;
	failed_ra = ra;
	return 1;
}

#define RA ((uintptr_t)__builtin_return_address(0))

void *__wrap_malloc(size_t n)
{
	return hit(RA) ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t sz)
{
	return hit(RA) ? NULL : __real_calloc(n, sz);
}

void *__wrap_realloc(void *p, size_t n)
{
	return hit(RA) ? NULL : __real_realloc(p, n);
}

char *__wrap_strdup(const char *s)
{
	return hit(RA) ? NULL : __real_strdup(s);
}

char *__wrap_strndup(const char *s, size_t n)
{
	return hit(RA) ? NULL : __real_strndup(s, n);
}

void *af_test_malloc(size_t n)
{
	return __real_malloc(n);
}

void *af_test_realloc(void *p, size_t n)
{
	return __real_realloc(p, n);
}
