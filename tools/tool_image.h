/* tool_image — the command line of image opening, over the library's
 * image layer (include/ubikit/image.h, src/image): the options every
 * command that reads or changes a UBIFS takes (--kind, --peb, --page,
 * --oob, --vol-name, ...), the detection summary for -v and info, and
 * shared helpers of the commands. Detecting, attaching, choosing the volume
 * and mounting are the library's (ubikit_image_open). */
#ifndef UBIKIT_TOOLS_TOOL_IMAGE_H
#define UBIKIT_TOOLS_TOOL_IMAGE_H
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <ubikit/image.h>

struct ubikit_fs;

struct tool_image_opts {
	struct ubikit_image_opts img; /* what the library takes */
	int verbose;
	bool keep_flash_on_attach_failure; /* dump: return the image with ubi NULL and err set */
	uint8_t fscrypt_key[64];           /* --key FILE (img.fscrypt_key points here) */
	uint8_t auth_cert[32768];          /* --auth-cert FILE (img.auth_cert points here) */
	uint8_t auth_hmac_key[1024];       /* --auth-hmac-key FILE (img.auth_hmac_key points here) */
};

/* Long options shared by every read command; ids start at 0x1000. */
#define TOOL_IMAGE_LONGOPTS                                                                              \
	{"kind", required_argument, NULL, 0x1000}, {"peb", required_argument, NULL, 0x1001},           \
	    {"peb-size", required_argument, NULL, 0x1001}, {"page", required_argument, NULL, 0x1002},  \
	    {"min-io-size", required_argument, NULL, 0x1002}, {"oob", required_argument, NULL, 0x1003}, \
	    {"with-oob", no_argument, NULL, 0x1004}, {"no-oob", no_argument, NULL, 0x1005},            \
	    {"vid-hdr-offset", required_argument, NULL, 0x1006},                                        \
	    {"leb-size", required_argument, NULL, 0x1007}, {"vol-name", required_argument, NULL, 0x1008}, \
	    {"vol-id", required_argument, NULL, 0x1009}, {"ubi-index", required_argument, NULL, 0x100A},   \
	    {"offset", required_argument, NULL, 0x100B}, {"verbose", no_argument, NULL, 'v'},           \
	    {"key", required_argument, NULL, 0x1020}, {"auth-cert", required_argument, NULL, 0x1021}, \
	    {"auth-hmac-key", required_argument, NULL, 0x1022}
#define TOOL_IMAGE_OPTS_HELP                                                                   \
	"image options (detected when not given):\n"                                            \
	"  --kind ubi|nand-oob|ubifs|sim|mtd  what the image is\n"                                  \
	"  --peb SIZE                     PEB (erase block) size, data bytes\n"                 \
	"  --page SIZE                    NAND page size (min. I/O unit)\n"                     \
	"  --oob SIZE                     OOB bytes per page (implies --with-oob)\n"             \
	"  --with-oob / --no-oob          the dump holds page+OOB per page, or not\n"           \
	"  --vid-hdr-offset N             UBI VID header offset\n"                              \
	"  --leb-size SIZE                LEB size (bare UBIFS image)\n"                        \
	"  --vol-name NAME / --vol-id N   UBI volume (default: first holding UBIFS)\n"          \
	"  --ubi-index N                  which UBI device of the file (default: the first;\n"  \
	"                                 'ubikit info' lists them)\n"                          \
	"  --offset BYTES                 the UBI device starts at this byte offset\n"          \
	"  -v, --verbose                  say what was detected (stderr)\n"                     \
	"  --key FILE                     fscrypt master key (raw, 64 bytes) of an encrypted UBIFS\n" \
	"  --auth-cert FILE               authenticated UBIFS: the signer's X.509 certificate (PEM\n" \
	"                                 or DER); its superblock signature must verify\n" \
	"  --auth-hmac-key FILE           authenticated UBIFS: the secret HMAC key, raw bytes (the\n" \
	"                                 kernel's auth_key= payload, not mkfs.ubifs's PEM\n" \
	"                                 --auth-key): superblock, master and journal HMACs must\n" \
	"                                 verify\n"

void tool_image_opts_init(struct tool_image_opts *o);
/* Handle one getopt result belonging to TOOL_IMAGE_LONGOPTS. Returns 1 if
 * handled, 0 if not ours, -1 on a bad value (message printed). */
int tool_image_opt(struct tool_image_opts *o, int opt, const char *arg, const char *cmd);

/* ubikit_image_open without mounting (UBIKIT_IMAGE_NO_MOUNT); -v prints
 * the detection first. need_vol false: a UBI image without UBIFS is fine. */
int tool_image_open(const char *path, const struct tool_image_opts *o, bool need_vol, struct ubikit_image **out,
		    char *msg, size_t msglen);
/* Mount the chosen volume as the image was opened (ubikit_image_mount). */
int tool_image_mount(struct ubikit_image *img);
/* Close; a failure of a read-write image's way to disk is printed with
 * cmd and returned. */
int tool_image_close_cmd(const char *cmd, struct ubikit_image *img);
#define tool_image_close(img) ((void)tool_image_close_cmd("", (img)))
/* Open + mount for the commands: read-only, or read-write (rw). On failure
 * prints "ubikit CMD: ..." and returns NULL; the caller exits 1. */
struct ubikit_image *tool_image_open_mounted(const char *cmd, const char *path, const struct tool_image_opts *o);
struct ubikit_image *tool_image_open_rw(const char *cmd, const char *path, const struct tool_image_opts *o);

/* Print the detection summary (for -v and info). */
void tool_image_print_geo(const struct ubikit_image_geo *g, FILE *out);

/* Helpers shared by the read commands. */
/* Print "ubikit CMD: msg" on stderr. */
void tool_err(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "dir/name" (one slash between), malloc'd; NULL on ENOMEM. */
char *tool_path_join(const char *dir, const char *name);
/* Format st_mode as "drwxr-xr-x" (11 bytes with NUL). */
void tool_mode_string(uint32_t mode, char out[11]);

#endif
