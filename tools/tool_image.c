/* tool_image — image options of the commands and their use of the
 * library's image layer (ubikit_image_open); see tool_image.h. */
#include "tool_image.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <ubikit/ubikit.h>

#include "ubi_tool_num.h"
#include "ubi/ubi_media.h"

void tool_err(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "ubikit %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int tool_image_open(const char *path, const struct tool_image_opts *o, bool need_vol, struct ubikit_image **out,
		    char *msg, size_t msglen)
{
	struct ubikit_image_opts io = o->img;
	io.flags |= UBIKIT_IMAGE_NO_MOUNT;
	if (!need_vol)
		io.flags |= UBIKIT_IMAGE_NO_VOLUME;
	if (o->keep_flash_on_attach_failure)
		io.flags |= UBIKIT_IMAGE_KEEP_FLASH;
	size_t detected = 0;
	if (o->verbose) {
		struct ubikit_image_geo g;
		char dm[512];
		if (!ubikit_image_detect(path, &io, &g, dm, sizeof(dm))) {
			tool_image_print_geo(&g, stderr);
			detected = strlen(g.how);
		}
	}
	int ret = ubikit_image_open(path, &io, out, msg, msglen);
	if (!ret && io.ubi_index < 0 && io.offset < 0) {
		const struct ubikit_image_geo *g = ubikit_image_geometry(*out);
		if (g->ubi_dev_count > 1)
			fprintf(stderr,
				"note: %s holds %d UBI devices; reading the first (offset %" PRIu64
				"); choose with --ubi-index N or --offset BYTES ('ubikit info' lists them)\n",
				path, g->ubi_dev_count, g->offset);
	}
	if (!ret && o->verbose) {
		/* what opening added (more PEBs assumed, autoresize view) */
		const char *how = ubikit_image_geometry(*out)->how;
		if (strlen(how) > detected)
			fprintf(stderr, "note:%s\n", how + detected);
	}
	return ret;
}

int tool_image_mount(struct ubikit_image *img)
{
	return ubikit_image_mount(img, 0);
}

int tool_image_close_cmd(const char *cmd, struct ubikit_image *img)
{
	char msg[1024];
	int ret = ubikit_image_close_msg(img, msg, sizeof(msg));
	if (ret && cmd[0])
		tool_err(cmd, "%s", msg[0] ? msg : strerror(-ret));
	return ret;
}

static struct ubikit_image *open_mounted(const char *cmd, const char *path, const struct tool_image_opts *o,
					 bool rw)
{
	char msg[1024];
	struct ubikit_image *img;
	struct tool_image_opts oo = *o;
	if (rw)
		oo.img.flags |= UBIKIT_IMAGE_RDWR;
	if (tool_image_open(path, &oo, true, &img, msg, sizeof(msg))) {
		tool_err(cmd, "%s", msg);
		return NULL;
	}
	if (ubikit_image_mount(img, oo.img.mount_flags)) {
		tool_err(cmd, "%s: cannot mount UBIFS%s: %s", path, rw ? " read-write" : "", ubikit_image_errmsg(img));
		tool_image_close(img);
		return NULL;
	}
	struct ubikit_security sec;
	if (!ubikit_security(ubikit_image_fs(img), &sec)) {
		if (sec.authenticated && sec.auth_hmac_key) {
			int sb_ok = sec.auth_sb_hmac_ok || sec.auth_signature_ok;
			int mst_ok = sec.auth_master_hmac_ok || sec.auth_master_hash_ok;
			char dropped[160] = "";
			if (sec.auth_nodes_dropped)
				snprintf(dropped, sizeof(dropped),
					 "; %u journal nodes after the last authentication node not replayed (as the kernel)",
					 sec.auth_nodes_dropped);
			fprintf(stderr,
				"note: %s: authenticated UBIFS (%s): verified with the HMAC key: %s, %s, %u journal "
				"authentication nodes; index and node hashes checked as read%s%s\n",
				path, sec.hash_name,
				sec.auth_sb_hmac_ok	  ? "superblock HMAC"
				: sec.auth_signature_ok ? "superblock signature (certificate)"
							: "superblock signed offline, signature not verified (no --auth-cert)",
				sec.auth_master_hmac_ok ? "master node HMAC" : "master node hash", sec.auth_journal_hmacs,
				sb_ok && mst_ok ? ": the file system is authentic" : "", dropped);
		} else if (sec.authenticated && sec.auth_signature_ok && sec.auth_master_hash_ok)
			fprintf(stderr,
				"note: %s: authenticated UBIFS (%s): superblock signature verified with the certificate, "
				"master node hash, index and node hashes checked as read: the committed file system is "
				"authentic; HMACs not verified (nodes written after the last commit unchecked)\n",
				path, sec.hash_name);
		else if (sec.authenticated && sec.auth_signature_ok)
			fprintf(stderr,
				"note: %s: authenticated UBIFS (%s): superblock signature verified with the certificate; "
				"the master node carries an HMAC, not checked without the key, so the index and node "
				"hashes below it are checked for consistency only\n",
				path, sec.hash_name);
		else if (sec.authenticated)
			fprintf(stderr,
				"note: %s: authenticated UBIFS (%s): %s, index and node hashes checked as read; "
				"HMACs and signature not verified (no key or certificate taken)\n",
				path, sec.hash_name,
				sec.auth_master_hash_ok ? "master node hash" : "master node HMAC not checked");
		if (sec.encrypted && !sec.fscrypt_key)
			fprintf(stderr, "note: %s: fscrypt-encrypted UBIFS without --key: encrypted names are the kernel's "
					"no-key names, encrypted contents cannot be read\n",
				path);
	}
	return img;
}

struct ubikit_image *tool_image_open_mounted(const char *cmd, const char *path, const struct tool_image_opts *o)
{
	return open_mounted(cmd, path, o, false);
}

struct ubikit_image *tool_image_open_rw(const char *cmd, const char *path, const struct tool_image_opts *o)
{
	return open_mounted(cmd, path, o, true);
}

char *tool_path_join(const char *dir, const char *name)
{
	size_t dl = strlen(dir), nl = strlen(name);
	char *p = malloc(dl + nl + 2);
	if (!p)
		return NULL;
	memcpy(p, dir, dl);
	size_t o = dl;
	if (!dl || dir[dl - 1] != '/')
		p[o++] = '/';
	memcpy(p + o, name, nl + 1);
	return p;
}

void tool_mode_string(uint32_t mode, char out[11])
{
	char t = '?';
	switch (mode & S_IFMT) {
	case S_IFREG: t = '-'; break;
	case S_IFDIR: t = 'd'; break;
	case S_IFLNK: t = 'l'; break;
	case S_IFCHR: t = 'c'; break;
	case S_IFBLK: t = 'b'; break;
	case S_IFIFO: t = 'p'; break;
	case S_IFSOCK: t = 's'; break;
	}
	out[0] = t;
	const char *rwx = "rwxrwxrwx";
	for (int i = 0; i < 9; i++)
		out[1 + i] = (mode & (0400u >> i)) ? rwx[i] : '-';
	if (mode & S_ISUID)
		out[3] = (mode & S_IXUSR) ? 's' : 'S';
	if (mode & S_ISGID)
		out[6] = (mode & S_IXGRP) ? 's' : 'S';
	if (mode & S_ISVTX)
		out[9] = (mode & S_IXOTH) ? 't' : 'T';
	out[10] = '\0';
}

void tool_image_opts_init(struct tool_image_opts *to)
{
	memset(to, 0, sizeof(*to));
	ubikit_image_opts_init(&to->img);
}

/* Through the one number parser; 0 is refused where it would silently mean
 * "detect" (an explicit --peb 0 is a mistake, not a request to guess). */
static int parse_u32(const char *cmd, const char *what, const char *arg, bool size, uint32_t min, uint32_t max,
		     uint32_t *out)
{
	char who[64];
	uint64_t v;
	snprintf(who, sizeof(who), "ubikit %s", cmd);
	if (tool_num(who, what, arg, size, min, max, &v))
		return -1;
	*out = (uint32_t)v;
	return 1;
}

/* An option's file (key, certificate): all of it into buf. *n gets its
 * length; 0, or -1 with a message naming the option and what is expected
 * (what == NULL: the caller checks the length itself). */
static int read_opt_file(const char *cmd, const char *opt, const char *path, uint8_t *buf, size_t cap, size_t *n,
			 const char *what)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		tool_err(cmd, "%s %s: %s", opt, path, strerror(errno));
		return -1;
	}
	*n = fread(buf, 1, cap, f);
	int more = fgetc(f) != EOF;
	fclose(f);
	if (what && (!*n || more)) {
		tool_err(cmd, "%s %s: %s, expected %s", opt, path, *n ? "too large" : "empty", what);
		return -1;
	}
	if (more)
		*n = cap + 1; /* longer than the buffer: the caller's length check refuses it */
	return 0;
}

int tool_image_opt(struct tool_image_opts *to, int opt, const char *arg, const char *cmd)
{
	struct ubikit_image_opts *o = &to->img;
	char what[128];
	size_t n;
	switch (opt) {
	case 0x1020:
		if (read_opt_file(cmd, "--key", arg, to->fscrypt_key, sizeof(to->fscrypt_key), &n, NULL))
			return -1;
		if (n != sizeof(to->fscrypt_key)) {
			tool_err(cmd, "--key %s: %s, expected a raw 64-byte fscrypt master key", arg,
				 n > sizeof(to->fscrypt_key) ? "more than 64 bytes" : "fewer than 64 bytes");
			return -1;
		}
		o->fscrypt_key = to->fscrypt_key;
		o->fscrypt_key_len = n;
		return 1;
	case 0x1021:
		snprintf(what, sizeof(what), "an X.509 certificate (PEM or DER, up to %zu bytes)", sizeof(to->auth_cert));
		if (read_opt_file(cmd, "--auth-cert", arg, to->auth_cert, sizeof(to->auth_cert), &n, what))
			return -1;
		o->auth_cert = to->auth_cert;
		o->auth_cert_len = n;
		return 1;
	case 0x1022:
		snprintf(what, sizeof(what), "the raw HMAC key (1 to %zu bytes)", sizeof(to->auth_hmac_key));
		if (read_opt_file(cmd, "--auth-hmac-key", arg, to->auth_hmac_key, sizeof(to->auth_hmac_key), &n, what))
			return -1;
		o->auth_hmac_key = to->auth_hmac_key;
		o->auth_hmac_key_len = n;
		return 1;
	case 0x1000:
		if (!strcmp(arg, "ubi"))
			o->kind = UBIKIT_IMAGE_UBI;
		else if (!strcmp(arg, "nand-oob") || !strcmp(arg, "oob"))
			o->kind = UBIKIT_IMAGE_NAND_OOB;
		else if (!strcmp(arg, "ubifs"))
			o->kind = UBIKIT_IMAGE_UBIFS;
		else if (!strcmp(arg, "sim"))
			o->kind = UBIKIT_IMAGE_SIM;
		else if (!strcmp(arg, "mtd"))
			o->kind = UBIKIT_IMAGE_MTD;
		else if (!strcmp(arg, "auto"))
			o->kind = UBIKIT_IMAGE_AUTO;
		else {
			tool_err(cmd, "unknown --kind '%s' (ubi, nand-oob, ubifs, sim, mtd, auto)", arg);
			return -1;
		}
		return 1;
	case 0x1001:
		return parse_u32(cmd, "--peb", arg, true, 1, UINT32_MAX, &o->peb_size);
	case 0x1002:
		return parse_u32(cmd, "--page", arg, true, 1, UINT32_MAX, &o->page_size);
	case 0x1003:
		o->with_oob = 1;
		return parse_u32(cmd, "--oob", arg, true, 0, UINT32_MAX, &o->oob_size);
	case 0x1004:
		o->with_oob = 1;
		return 1;
	case 0x1005:
		o->with_oob = 0;
		return 1;
	case 0x1006:
		return parse_u32(cmd, "--vid-hdr-offset", arg, false, UBI_HDR_SIZE, UINT32_MAX, &o->vid_hdr_offset);
	case 0x1007:
		return parse_u32(cmd, "--leb-size", arg, true, 1, UINT32_MAX, &o->leb_size);
	case 0x1008:
		o->vol_name = arg;
		return 1;
	case 0x1009: {
		uint32_t v;
		if (parse_u32(cmd, "--vol-id", arg, false, 0, INT32_MAX, &v) < 0)
			return -1;
		o->vol_id = v;
		return 1;
	}
	case 0x100A: {
		uint32_t v;
		if (parse_u32(cmd, "--ubi-index", arg, false, 0, UBIKIT_IMAGE_MAX_UBI_DEVS - 1, &v) < 0)
			return -1;
		o->ubi_index = (int)v;
		return 1;
	}
	case 0x100B: {
		char who[64];
		uint64_t v;
		snprintf(who, sizeof(who), "ubikit %s", cmd);
		if (tool_num(who, "--offset", arg, true, 0, INT64_MAX, &v))
			return -1;
		o->offset = (int64_t)v;
		return 1;
	}
	case 'v':
		to->verbose++;
		return 1;
	}
	return 0;
}

void tool_image_print_geo(const struct ubikit_image_geo *g, FILE *out)
{
	fprintf(out, "image kind:       %s\n", ubikit_image_kind_name(g->kind));
	fprintf(out, "file size:        %" PRIu64 "\n", g->file_size);
	if (g->kind == UBIKIT_IMAGE_UBIFS) {
		fprintf(out, "LEB size:         %u\nmin I/O:          %u\nLEBs in file:     %u\n", g->leb_size,
			g->page_size, g->peb_count);
	} else if (g->kind != UBIKIT_IMAGE_MTD || g->peb_size) {
		fprintf(out, "flash type:       %s\n", g->flash_type == UBIKIT_IMAGE_FLASH_NOR ? "NOR" : "NAND");
		fprintf(out, "PEB size:         %u\n", g->peb_size);
		fprintf(out, "PEB count:        %u\n", g->peb_count);
		fprintf(out, "min I/O:          %u\n", g->page_size);
		fprintf(out, "sub-page:         %u\n", g->subpage_size);
		if (g->has_oob)
			fprintf(out, "OOB per page:     %u (PEB stride in file %u)\n", g->oob_size, g->peb_stride);
		fprintf(out, "VID header offs:  %u\ndata offset:      %u\nLEB size:         %u\n", g->vid_hdr_offset,
			g->data_offset, g->leb_size);
	}
	if (g->offset)
		fprintf(out, "UBI offset:       %" PRIu64 "\n", g->offset);
	if (g->how[0])
		fprintf(out, "detected:         %s\n", g->how);
}
