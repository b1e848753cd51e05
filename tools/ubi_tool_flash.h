/* ubi_tool_flash — how the UBI tools (format, ubi, bench attach) open a
 * flash image: a simulator file with its sidecar (geometry known), or a
 * plain dump (nanddump/ubinize output) whose geometry comes from the
 * --page/--peb/--subpage/--oob/--nor options or, failing those, is detected
 * from the UBI EC headers in it. */
#ifndef UBIKIT_TOOLS_UBI_TOOL_FLASH_H
#define UBIKIT_TOOLS_UBI_TOOL_FLASH_H
#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "flash/flash.h"

struct ubi_tool_geo_opts {
	uint32_t page, peb, subpage, oob; /* 0 = not given */
	bool nor;                         /* --nor: NOR flash (min. I/O 1) */
	bool has_oob;                     /* --has-oob: file holds page+OOB per page */
	bool verbose;                     /* say what was detected */
};

/* Long options the tools accept for geometry; keys are >= 0x200. */
#define UBI_TOOL_GEO_LONGOPTS                                                                                  \
	{"page", required_argument, NULL, 0x200}, {"peb", required_argument, NULL, 0x201},                     \
		{"subpage", required_argument, NULL, 0x202}, {"oob", required_argument, NULL, 0x203},          \
		{"nor", no_argument, NULL, 0x204}, {"has-oob", no_argument, NULL, 0x205},                      \
		{"with-oob", no_argument, NULL, 0x205}
#define UBI_TOOL_GEO_HELP                                                                                      \
	"geometry (only for images without a .sim sidecar; detected from the UBI headers if left out):\n"     \
	"  --page=<bytes>      NAND page size (min. I/O unit)\n"                                               \
	"  --peb=<bytes>       eraseblock size (KiB/MiB ok)\n"                                                 \
	"  --subpage=<bytes>   sub-page size (default: the page size)\n"                                       \
	"  --oob=<bytes>       OOB bytes per page\n"                                                           \
	"  --with-oob          the file holds page+OOB for each page (nanddump -o layout;\n"      \
	"                      also --has-oob)\n"                   \
	"  --nor               NOR flash (min. I/O unit 1 byte)\n"

/* Handle one geometry option (key from UBI_TOOL_GEO_LONGOPTS). Returns 1 if
 * handled, 0 if key is not a geometry option, -1 on a bad value (message
 * printed with prog). */
int ubi_tool_geo_opt(struct ubi_tool_geo_opts *g, int key, const char *arg, const char *prog);

/* Open path as a flash device. read_only: never write. On failure returns
 * negative errno and puts the reason in msg. */
int ubi_tool_flash_open(const char *path, const struct ubi_tool_geo_opts *g, bool read_only, struct flash_dev **out,
			char *msg, size_t msglen);

#endif
