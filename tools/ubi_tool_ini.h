/* ubi_tool_ini — the ini-file dialect ubinize reads (mtd-utils' iniparser):
 * "[section]" lines, "key = value" lines, '#'/';' comment lines, quoted
 * values, trailing ';'/'#' comments after unquoted values, '\' line
 * continuation. Section names and keys are case-insensitive (stored
 * lower-case); values keep their case. A repeated key replaces the earlier
 * value; a repeated section keeps its first position. */
#ifndef UBIKIT_TOOLS_UBI_TOOL_INI_H
#define UBIKIT_TOOLS_UBI_TOOL_INI_H
#include <stddef.h>

#include "util/util_err.h"

struct ubi_ini_entry {
	char *key; /* "section" (a section) or "section:key" (a value) */
	char *val; /* NULL for sections */
};

struct ubi_ini {
	struct ubi_ini_entry *e;
	size_t n, cap;
};

/* Parse a file. Returns 0, or negative errno with a message naming the
 * file and line in *err. */
int ubi_ini_load(const char *path, struct ubi_ini *ini, struct util_err *err);
void ubi_ini_free(struct ubi_ini *ini);
/* Number of sections, and the name of section i (0-based, file order). */
size_t ubi_ini_nsec(const struct ubi_ini *ini);
const char *ubi_ini_secname(const struct ubi_ini *ini, size_t i);
/* Value of key in section (case-insensitive), or NULL if absent. */
const char *ubi_ini_get(const struct ubi_ini *ini, const char *section, const char *key);

#endif
