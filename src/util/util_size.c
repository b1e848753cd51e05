/* util_size — see util_size.h. */
#include "util/util_size.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* The number in front; *end is left at what follows it. */
static int parse_number(const char *text, uint64_t *out, const char **end)
{
	/* strtoull would accept "-1" (as 2^64-1) and leading blanks. */
	if (!text || !isdigit((unsigned char)*text))
		return -EINVAL;
	errno = 0;
	char *e = NULL;
	unsigned long long v = strtoull(text, &e, 0);
	if (errno == ERANGE)
		return -ERANGE;
	if (e == text)
		return -EINVAL;
	*out = v;
	*end = e;
	return 0;
}

int util_parse_uint(const char *text, uint64_t *out)
{
	const char *end;
	uint64_t v;
	int r = parse_number(text, &v, &end);
	if (r)
		return r;
	if (*end)
		return -EINVAL;
	*out = v;
	return 0;
}

int util_parse_size(const char *text, uint64_t *out)
{
	static const struct {
		const char *unit;
		unsigned shift;
	} units[] = {
		{"", 0},	 {"K", 10},  {"KiB", 10}, {"M", 20},  {"MiB", 20},
		{"G", 30},	 {"GiB", 30}, {"T", 40},  {"TiB", 40},
	};
	const char *end;
	uint64_t v;
	int r = parse_number(text, &v, &end);
	if (r)
		return r;
	const char *u = end;
	while (*u == ' ' || *u == '\t')
		u++;
	if (u != end && !*u)
		return -EINVAL; /* trailing blanks without a unit */
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(u, units[i].unit))
			continue;
		unsigned s = units[i].shift;
		if (s && v > (UINT64_MAX >> s))
			return -ERANGE;
		*out = v << s;
		return 0;
	}
	return -EINVAL;
}

static int in_range(int r, uint64_t v, uint64_t min, uint64_t max, uint64_t *out)
{
	if (r)
		return r;
	if (v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int util_parse_size_in(const char *text, uint64_t min, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;
	int r = util_parse_size(text, &v);
	return in_range(r, v, min, max, out);
}

int util_parse_uint_in(const char *text, uint64_t min, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;
	int r = util_parse_uint(text, &v);
	return in_range(r, v, min, max, out);
}
