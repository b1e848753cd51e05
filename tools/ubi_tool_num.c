/* ubi_tool_num — see ubi_tool_num.h. */
#include "ubi_tool_num.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/time.h>
#include <unistd.h>

#include "util/util_size.h"

bool ubi_tool_parse_u64(const char *s, uint64_t *out)
{
	return util_parse_uint(s, out) == 0;
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
	return util_parse_size(s, out) == 0;
}

int tool_num(const char *who, const char *what, const char *text, bool is_size, uint64_t min, uint64_t max,
	     uint64_t *out)
{
	uint64_t v = 0;
	int r = is_size ? util_parse_size(text, &v) : util_parse_uint(text, &v);
	if (!r && v >= min && v <= max) {
		*out = v;
		return 0;
	}
	if (r == -EINVAL)
		fprintf(stderr, "%s: error: bad value \"%s\" for %s: %s\n", who, text, what,
			is_size ? "not a number or size (a number, 0x for hex, with an optional unit " UTIL_SIZE_UNITS ")"
				: "not a number (decimal, or 0x for hex)");
	else if (max == UINT64_MAX)
		fprintf(stderr, "%s: error: bad value \"%s\" for %s: must be at least %" PRIu64 "\n", who, text, what,
			min);
	else
		fprintf(stderr, "%s: error: bad value \"%s\" for %s: must be %" PRIu64 "..%" PRIu64 "\n", who, text,
			what, min, max);
	return -1;
}

const char *tool_opt_typed(char *const *argv, int ind, const char *arg, int ch, char *buf, size_t len)
{
	/* With a separate argument ("-s 5", "--size 5") the option is two words back. */
	const char *w = NULL;
	if (arg && ind >= 2 && argv[ind - 1] == arg)
		w = argv[ind - 2];
	else if (ind >= 1)
		w = argv[ind - 1];
	if (w && w[0] == '-' && w[1] == '-' && w[2]) {
		size_t n = strcspn(w, "=");
		snprintf(buf, len, "%.*s", (int)n, w);
		return buf;
	}
	if (ch > 0 && ch < 0x100 && isalnum(ch)) {
		snprintf(buf, len, "-%c", ch);
		return buf;
	}
	snprintf(buf, len, "%s", w ? w : "?");
	return buf;
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
