/* ubi_tool_num — number and size arguments of every ubikit command: thin
 * wrappers over util_size (the one parser: C-style bases, explicit
 * power-of-1024 units), the range check with one message format, and the
 * name of an option as the user typed it (for messages). */
#ifndef UBIKIT_TOOLS_UBI_TOOL_NUM_H
#define UBIKIT_TOOLS_UBI_TOOL_NUM_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Plain unsigned number (no suffix). false on bad syntax or overflow. */
bool ubi_tool_parse_u64(const char *s, uint64_t *out);
/* Signed number (for ini values like vol_id that may be written negative). */
bool ubi_tool_parse_i64(const char *s, int64_t *out);
/* Size with an optional unit suffix. */
bool ubi_tool_parse_bytes(const char *s, uint64_t *out);
/* A random 32-bit image sequence number (from the OS entropy source). */
uint32_t ubi_tool_random_seq(void);

/* Parse TEXT (a size with units if is_size, else a plain number) into
 * [min, max]. On failure prints "WHO: error: bad value "TEXT" for WHAT: ..."
 * saying what was expected, and returns -1; 0 on success. */
int tool_num(const char *who, const char *what, const char *text, bool is_size, uint64_t min, uint64_t max,
	     uint64_t *out);

/* The option that getopt_long just returned, as the user spelled it
 * ("-s", "--size"), from argv, optind (ind) and optarg (arg). buf holds the result. */
const char *tool_opt_typed(char *const *argv, int ind, const char *arg, int ch, char *buf, size_t len);

#endif
