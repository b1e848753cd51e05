/* ubi_tool_num — number and size parsing with mtd-utils' rules, shared by
 * the UBI tools (ubinize, format, ubi): C-style bases (0x.., 0..), sizes
 * with an optional KiB/MiB/GiB suffix (also K/KB/M/MB/G/GB, a superset of
 * mtd-utils). The whole string must be consumed. */
#ifndef UBIKIT_TOOLS_UBI_TOOL_NUM_H
#define UBIKIT_TOOLS_UBI_TOOL_NUM_H
#include <stdbool.h>
#include <stdint.h>

/* Plain unsigned number (no suffix). false on bad syntax or overflow. */
bool ubi_tool_parse_u64(const char *s, uint64_t *out);
/* Signed number (for ini values like vol_id that may be written negative). */
bool ubi_tool_parse_i64(const char *s, int64_t *out);
/* Size with an optional unit suffix. */
bool ubi_tool_parse_bytes(const char *s, uint64_t *out);
/* A random 32-bit image sequence number (from the OS entropy source). */
uint32_t ubi_tool_random_seq(void);

#endif
