/* util_size — the one parser for numbers and sizes given on command lines,
 * in ini files and in sidecars, and the range check every field goes
 * through before use.
 *
 * Syntax: decimal, 0x hex or 0-prefixed octal (C rules, as mtd-utils), then
 * for sizes an optional unit, with optional blanks before it. Units are
 * powers of 1024 and spelled explicitly: KiB, MiB, GiB, TiB (mtd-utils
 * knows the first three), or the one-letter K, M, G, T for the same. Units
 * that read as decimal or as bits (KB, MB, Mb, kb, kB, ...) are refused,
 * not guessed: "10Mb" is an error, never 10 MiB. */
#ifndef UBIKIT_UTIL_SIZE_H
#define UBIKIT_UTIL_SIZE_H
#include <stdint.h>

/* Size with an optional unit. Returns 0, -EINVAL (bad syntax, unknown
 * unit) or -ERANGE (does not fit 64 bits). The whole string is consumed. */
int util_parse_size(const char *text, uint64_t *out);
/* Plain unsigned number, no unit. Same returns. */
int util_parse_uint(const char *text, uint64_t *out);
/* Either of the above, then min <= value <= max, else -ERANGE. */
int util_parse_size_in(const char *text, uint64_t min, uint64_t max, uint64_t *out);
int util_parse_uint_in(const char *text, uint64_t min, uint64_t max, uint64_t *out);
/* The units accepted, for error messages. */
/* Greatest common divisor (0 when both are 0): strides of headers in a dump. */
static inline uint64_t util_gcd64(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

#define UTIL_SIZE_UNITS "KiB, MiB, GiB, TiB (or K, M, G, T: powers of 1024)"

#endif
