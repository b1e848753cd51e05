/* tool_image — opening what users bring to the read tools (ls, cat,
 * extract, info, dump, mount): a UBI image (ubinize output, PEBs without
 * OOB), a raw NAND dump with or without OOB (bad blocks allowed), a bare
 * UBIFS image (mkfs.ubifs output) or a simulator flash (image + ".sim").
 *
 * Detection reads the file itself (never writes): UBIFS superblock magic at
 * offset 0, or UBI EC headers ("UBI#" with a good CRC) whose spacing gives
 * the PEB size or, with OOB, the page+OOB stride. Every detected value can
 * be overridden. Opening then stacks flash -> UBI (read-only attach) ->
 * volume, or the flat UBIFS view, and mounts UBIFS read-only on demand. */
#ifndef UBIKIT_TOOLS_TOOL_IMAGE_H
#define UBIKIT_TOOLS_TOOL_IMAGE_H
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "flash/flash.h"
#include "ubi/ubi_vol_io.h"

struct ubi_device;
struct ubikit_fs;

enum tool_image_kind {
	TOOL_KIND_AUTO = 0,
	TOOL_KIND_UBI,      /* PEBs without OOB: ubinize output or nanddump without -o */
	TOOL_KIND_NAND_OOB, /* PEBs of (page + OOB) x pages: nanddump -o */
	TOOL_KIND_UBIFS,    /* bare UBIFS: LEBs concatenated (mkfs.ubifs -o) */
	TOOL_KIND_SIM,      /* ubikit flash simulator file with its .sim sidecar */
};

struct tool_image_opts {
	enum tool_image_kind kind; /* AUTO = detect */
	uint32_t peb_size;         /* 0 = detect (data bytes per PEB) */
	uint32_t page_size;        /* 0 = detect (NAND page = min I/O) */
	uint32_t oob_size;         /* 0 = detect (with OOB only) */
	int with_oob;              /* -1 detect, 0 no, 1 yes */
	uint32_t vid_hdr_offset;   /* 0 = from the EC header */
	uint32_t leb_size;         /* 0 = detect */
	const char *vol_name;      /* volume to use (NULL = first with UBIFS) */
	long vol_id;               /* -1 = not given */
	int verbose;
	bool keep_flash_on_attach_failure; /* dump: return the image with ubi NULL and err set */
};

/* What detection found (and how). */
struct tool_image_geo {
	enum tool_image_kind kind;
	uint64_t file_size;
	bool has_oob;
	uint32_t peb_size;       /* data bytes per PEB */
	uint32_t page_size;      /* min I/O (NAND page, 1 for NOR, UBIFS min_io for bare) */
	uint32_t subpage_size;
	uint32_t oob_size;
	uint32_t peb_stride;     /* bytes per PEB in the file (peb_size or pages*(page+oob)) */
	uint32_t peb_count;
	uint32_t vid_hdr_offset, data_offset;
	uint32_t leb_size;       /* UBI LEB size (PEB - data_offset) or UBIFS leb_size */
	uint32_t vtbl_pebs;      /* PEBs the volume table reserves for volumes (0 = unknown) */
	enum flash_type flash_type;
	char how[512];           /* human explanation of the detection */
};

struct tool_image {
	char *path;
	struct tool_image_geo geo;
	struct flash_dev *flash;      /* NULL for a bare UBIFS image */
	struct ubi_device *ubi;       /* NULL for a bare UBIFS image */
	bool have_vol;                /* a volume was chosen */
	uint32_t vol_id;              /* chosen UBI volume */
	struct ubi_vol_io vol;        /* the volume (or the flat image) */
	bool flat;                    /* bare image: inner is the ubi_flat volume */
	struct ubi_vol_io inner;      /* the volume as opened; vol may extend it (bare
				       * image: to max_leb_cnt; autoresize volume) */
	uint32_t autoresized;         /* LEBs of the autoresize view (0 = none) */
	struct ubikit_fs *fs;         /* after tool_image_mount() */
	char err[768];
};

/* Long options shared by every read command; ids start at 0x1000. */
#define TOOL_IMAGE_LONGOPTS                                                                              \
	{"kind", required_argument, NULL, 0x1000}, {"peb", required_argument, NULL, 0x1001},           \
	    {"peb-size", required_argument, NULL, 0x1001}, {"page", required_argument, NULL, 0x1002},  \
	    {"min-io-size", required_argument, NULL, 0x1002}, {"oob", required_argument, NULL, 0x1003}, \
	    {"with-oob", no_argument, NULL, 0x1004}, {"no-oob", no_argument, NULL, 0x1005},            \
	    {"vid-hdr-offset", required_argument, NULL, 0x1006},                                        \
	    {"leb-size", required_argument, NULL, 0x1007}, {"vol-name", required_argument, NULL, 0x1008}, \
	    {"vol-id", required_argument, NULL, 0x1009}, {"verbose", no_argument, NULL, 'v'}
#define TOOL_IMAGE_OPTS_HELP                                                                   \
	"image options (detected when not given):\n"                                            \
	"  --kind ubi|nand-oob|ubifs|sim  what the image is\n"                                  \
	"  --peb SIZE                     PEB (erase block) size, data bytes\n"                 \
	"  --page SIZE                    NAND page size (min. I/O unit)\n"                     \
	"  --oob SIZE                     OOB bytes per page (implies --with-oob)\n"             \
	"  --with-oob / --no-oob          the dump holds page+OOB per page, or not\n"           \
	"  --vid-hdr-offset N             UBI VID header offset\n"                              \
	"  --leb-size SIZE                LEB size (bare UBIFS image)\n"                        \
	"  --vol-name NAME / --vol-id N   UBI volume (default: first holding UBIFS)\n"          \
	"  -v, --verbose                  say what was detected (stderr)\n"

void tool_image_opts_init(struct tool_image_opts *o);
/* Handle one getopt result belonging to TOOL_IMAGE_LONGOPTS. Returns 1 if
 * handled, 0 if not ours, -1 on a bad value (message printed). */
int tool_image_opt(struct tool_image_opts *o, int opt, const char *arg, const char *cmd);

/* Detection only (no flash/UBI opened). Returns 0 or -errno with msg. */
int tool_image_detect(const char *path, const struct tool_image_opts *o, struct tool_image_geo *g, char *msg,
		      size_t msglen);

/* Detect, open flash + attach UBI (read-only) + choose the UBIFS volume. If
 * need_vol is false a UBI image without UBIFS volume is fine (info, dump).
 * On failure *out is NULL and msg holds the reason. */
int tool_image_open(const char *path, const struct tool_image_opts *o, bool need_vol, struct tool_image **out,
		    char *msg, size_t msglen);
/* Mount UBIFS read-only on the chosen volume (img->fs). */
int tool_image_mount(struct tool_image *img);
void tool_image_close(struct tool_image *img);
/* Open + mount for the read commands: on failure prints "ubikit CMD: ..."
 * and returns NULL; the caller exits 1. */
struct tool_image *tool_image_open_mounted(const char *cmd, const char *path, const struct tool_image_opts *o);

const char *tool_image_kind_name(enum tool_image_kind k);
/* Print the detection summary (for -v and info). */
void tool_image_print_geo(const struct tool_image_geo *g, FILE *out);

/* Helpers shared by the read commands. */
/* Print "ubikit CMD: msg" on stderr. */
void tool_err(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "dir/name" (one slash between), malloc'd; NULL on ENOMEM. */
char *tool_path_join(const char *dir, const char *name);
/* Format st_mode as "drwxr-xr-x" (11 bytes with NUL). */
void tool_mode_string(uint32_t mode, char out[11]);

#endif
