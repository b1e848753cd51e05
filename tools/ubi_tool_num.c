/* ubi_tool_num — see ubi_tool_num.h. */
#include "ubi_tool_num.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/time.h>
#include <unistd.h>

#include "util/util_size.h"

bool ubi_tool_parse_u64(const char *s, uint64_t *out)
{
	if (!s || !*s || *s == '-' || isspace((unsigned char)*s))
		return false;
	errno = 0;
	char *end;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno || end == s || *end)
		return false;
	*out = v;
	return true;
}

bool ubi_tool_parse_i64(const char *s, int64_t *out)
{
	if (!s || !*s || isspace((unsigned char)*s))
		return false;
	errno = 0;
	char *end;
	long long v = strtoll(s, &end, 0);
	if (errno || end == s || *end)
		return false;
	*out = v;
	return true;
}

bool ubi_tool_parse_bytes(const char *s, uint64_t *out)
{
	if (!s || !*s || *s == '-' || isspace((unsigned char)*s))
		return false;
	errno = 0;
	char *end;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno || end == s)
		return false;
	const char *suf = end;
	while (*suf == ' ' || *suf == '\t')
		suf++;
	static const struct {
		const char *name;
		unsigned shift;
	} units[] = {{"", 0}, {"KiB", 10}, {"MiB", 20}, {"GiB", 30}};
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (!strcmp(suf, units[i].name)) {
			if (units[i].shift && v > (~0ull >> units[i].shift))
				return false;
			*out = (uint64_t)v << units[i].shift;
			return true;
		}
	}
	uint64_t r;
	if (util_parse_size(s, &r) == 0) {
		*out = r;
		return true;
	}
	return false;
}

uint32_t ubi_tool_random_seq(void)
{
	uint32_t v = 0;
	if (getrandom(&v, sizeof(v), 0) == (ssize_t)sizeof(v))
		return v;
	struct timeval tv;
	gettimeofday(&tv, NULL);
	return (uint32_t)(tv.tv_sec * 1000003u + tv.tv_usec) * (uint32_t)getpid();
}
