/* util_size — see util_size.h. */
#include "util/util_size.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int util_parse_size(const char *text, uint64_t *out)
{
	if (!text || !*text || *text == '-' || isspace((unsigned char)*text))
		return -EINVAL;
	errno = 0;
	char *end = NULL;
	unsigned long long v = strtoull(text, &end, 0);
	if (errno == ERANGE)
		return -ERANGE;
	if (end == text)
		return -EINVAL;
	static const struct {
		const char *suffix;
		unsigned shift;
	} units[] = {
		{"", 0},      {"k", 10},   {"kb", 10}, {"kib", 10}, {"m", 20}, {"mb", 20},
		{"mib", 20},  {"g", 30},   {"gb", 30}, {"gib", 30}, {"t", 40}, {"tib", 40},
	};
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcasecmp(end, units[i].suffix) == 0) {
			unsigned s = units[i].shift;
			if (s && v > (~0ull >> s))
				return -ERANGE;
			*out = (uint64_t)v << s;
			return 0;
		}
	}
	return -EINVAL;
}
