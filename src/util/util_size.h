/* util_size — parsing of sizes and numbers given on command lines and in
 * ini files: decimal, 0x hex, with K/KiB/M/MiB/G/GiB suffixes (powers of 2). */
#ifndef UBIKIT_UTIL_SIZE_H
#define UBIKIT_UTIL_SIZE_H
#include <stdint.h>

/* Parse text into *out. Returns 0, or -EINVAL (bad syntax or unknown
 * suffix) / -ERANGE (overflow). Whole string must be consumed. */
int util_parse_size(const char *text, uint64_t *out);

#endif
