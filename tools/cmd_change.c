/* cmd_change — commands that change a UBIFS inside an image without FUSE:
 * 'ubikit put', 'mkdir', 'rm', 'mv', 'ln', 'chmod', 'setfattr'. Each opens
 * the image read-write through the library (ubikit_image_open with
 * UBIKIT_IMAGE_RDWR), does its work through <ubikit/ubikit.h>, and ends
 * with a clean unmount (a commit) and the image's way back to disk. The
 * file copying of 'put' is cmd_put.c. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <ubikit/image.h>
#include <ubikit/ubikit.h>

#include "commands.h"
#include "tool_change.h"
#include "tool_image.h"

char *tool_change_join(const char *dir, const char *name)
{
	return tool_path_join(dir, name);
}

const char *tool_change_base(const char *path, char **to_free)
{
	char *c = strdup(path);
	*to_free = c;
	if (!c)
		return "";
	size_t l = strlen(c);
	while (l > 1 && c[l - 1] == '/')
		c[--l] = '\0';
	char *s = strrchr(c, '/');
	return s && s[1] ? s + 1 : c;
}

int tool_change_fail(const char *cmd, const char *what, const char *path, int neg_errno)
{
	fprintf(stderr, "ubikit %s: %s '%s': %s\n", cmd, what, path, strerror(-neg_errno));
	return 1;
}

int tool_change_is_dir(struct ubikit_fs *fs, const char *path)
{
	struct ubikit_stat st;
	return ubikit_stat(fs, path, &st) == 0 && S_ISDIR(st.mode);
}

/* One command: its name, usage text, short options, and the work on the
 * mounted file system with the arguments after IMAGE. */
struct change_cmd {
	const char *name;
	const char *usage;
	const char *shortopts;
	int min_args; /* after IMAGE */
	int (*run)(struct ubikit_fs *fs, int argc, char **argv, const int *flags, const char *const *vals);
};

enum { F_P, F_R, F_F, F_S, F_N, F_X, F_V, F_M, F_EXCH, F_NOREPL, F_SQUASH, F_NFLAGS };

/* ---- mkdir ---- */
static int mkdir_p(struct ubikit_fs *fs, const char *path, uint32_t mode)
{
	char *p = strdup(path);
	if (!p)
		return -ENOMEM;
	int err = 0;
	for (char *s = p + 1;; s++) {
		if (*s == '/' || !*s) {
			char c = *s;
			*s = '\0';
			if (!tool_change_is_dir(fs, p)) {
				err = ubikit_mkdir(fs, p, c ? 0777 & ~022u : mode);
				if (err == -EEXIST)
					err = tool_change_is_dir(fs, p) ? 0 : -ENOTDIR;
				if (err)
					break;
			}
			*s = c;
			if (!c)
				break;
		}
	}
	free(p);
	return err;
}

static int parse_mode(const char *s, uint32_t old, uint32_t *out);

static int run_mkdir(struct ubikit_fs *fs, int argc, char **argv, const int *fl, const char *const *val)
{
	int rc = 0;
	uint32_t mode = 0755;
	if (val[F_M] && parse_mode(val[F_M], 0777, &mode)) {
		fprintf(stderr, "ubikit mkdir: invalid mode '%s'\n", val[F_M]);
		return 2;
	}
	for (int i = 0; i < argc; i++) {
		int err = fl[F_P] ? mkdir_p(fs, argv[i], mode) : ubikit_mkdir(fs, argv[i], mode);
		if (err)
			rc = tool_change_fail("mkdir", "cannot create directory", argv[i], err);
		else if (fl[F_V])
			printf("ubikit mkdir: created directory '%s'\n", argv[i]);
	}
	return rc;
}

/* ---- rm ---- */
static int rm_tree(struct ubikit_fs *fs, const char *path)
{
	struct ubikit_stat st;
	int err = ubikit_lstat(fs, path, &st);
	if (err)
		return err;
	if (!S_ISDIR(st.mode))
		return ubikit_unlink(fs, path);
	for (;;) {
		/* Read one entry at a time and remove it: the listing changes. */
		struct ubikit_dir *d;
		err = ubikit_opendir(fs, path, &d);
		if (err)
			return err;
		struct ubikit_dirent de;
		int r = ubikit_readdir(d, &de);
		ubikit_closedir(d);
		if (r < 0)
			return r;
		if (r == 0)
			break;
		if (!de.name[0] || strchr(de.name, '/') || !strcmp(de.name, ".") || !strcmp(de.name, ".."))
			return -EIO; /* a damaged entry: cannot be named, cannot be removed */
		char *c = tool_change_join(path, de.name);
		if (!c)
			return -ENOMEM;
		err = rm_tree(fs, c);
		free(c);
		if (err)
			return err;
	}
	return ubikit_rmdir(fs, path);
}

static int run_rm(struct ubikit_fs *fs, int argc, char **argv, const int *fl, const char *const *val)
{
	(void)val;
	int rc = 0;
	for (int i = 0; i < argc; i++) {
		struct ubikit_stat st;
		int err = ubikit_lstat(fs, argv[i], &st);
		if (err == -ENOENT && fl[F_F])
			continue;
		if (!err && S_ISDIR(st.mode) && !fl[F_R]) {
			fprintf(stderr, "ubikit rm: cannot remove '%s': Is a directory (use -r)\n", argv[i]);
			rc = 1;
			continue;
		}
		if (!err && st.ino == UBIKIT_ROOT_INO) {
			fprintf(stderr, "ubikit rm: it is dangerous to operate recursively on '/'\n");
			rc = 1;
			continue;
		}
		if (!err)
			err = fl[F_R] ? rm_tree(fs, argv[i]) : ubikit_unlink(fs, argv[i]);
		if (err)
			rc = tool_change_fail("rm", "cannot remove", argv[i], err);
		else if (fl[F_V])
			printf("removed '%s'\n", argv[i]);
	}
	return rc;
}

/* ---- mv ---- */
static int run_mv(struct ubikit_fs *fs, int argc, char **argv, const int *fl, const char *const *val)
{
	(void)val;
	const char *dest = argv[argc - 1];
	bool into = tool_change_is_dir(fs, dest) && !fl[F_EXCH];
	if (argc > 2 && !into) {
		fprintf(stderr, "ubikit mv: target '%s' is not a directory\n", dest);
		return 1;
	}
	unsigned flags = (fl[F_NOREPL] ? UBIKIT_RENAME_NOREPLACE : 0) | (fl[F_EXCH] ? UBIKIT_RENAME_EXCHANGE : 0);
	int rc = 0;
	for (int i = 0; i < argc - 1; i++) {
		char *tf = NULL, *to = NULL;
		const char *target = dest;
		if (into) {
			to = tool_change_join(dest, tool_change_base(argv[i], &tf));
			target = to;
		}
		int err = target ? ubikit_rename(fs, argv[i], target, flags) : -ENOMEM;
		if (err) {
			fprintf(stderr, "ubikit mv: cannot move '%s' to '%s': %s\n", argv[i], target ? target : dest,
				strerror(-err));
			rc = 1;
		} else if (fl[F_V]) {
			printf("renamed '%s' -> '%s'\n", argv[i], target);
		}
		free(tf);
		free(to);
	}
	return rc;
}

/* ---- ln ---- */
static int run_ln(struct ubikit_fs *fs, int argc, char **argv, const int *fl, const char *const *val)
{
	(void)val;
	const char *target = argv[0];
	char *tf = NULL, *to = NULL;
	const char *link = argc > 1 ? argv[1] : NULL;
	if (!link || tool_change_is_dir(fs, link)) {
		to = tool_change_join(link ? link : "/", tool_change_base(target, &tf));
		link = to;
	}
	int rc = 0;
	if (!link) {
		rc = tool_change_fail("ln", "cannot link", target, -ENOMEM);
		goto out;
	}
	if (fl[F_F]) {
		struct ubikit_stat st;
		if (ubikit_lstat(fs, link, &st) == 0 && !S_ISDIR(st.mode)) {
			int err = ubikit_unlink(fs, link);
			if (err) {
				rc = tool_change_fail("ln", "cannot remove", link, err);
				goto out;
			}
		}
	}
	int err = fl[F_S] ? ubikit_symlink(fs, target, link) : ubikit_link(fs, target, link);
	if (err) {
		fprintf(stderr, "ubikit ln: failed to create %s link '%s'%s%s: %s\n", fl[F_S] ? "symbolic" : "hard", link,
			fl[F_S] ? " -> '" : " => '", target, strerror(-err));
		rc = 1;
	}
out:
	free(tf);
	free(to);
	return rc;
}

/* ---- chmod ---- */
/* Octal, or symbolic as chmod(1): [ugoa]*[+-=][rwxXst]*, comma-separated. */
static int parse_mode(const char *s, uint32_t old, uint32_t *out)
{
	if (isdigit((unsigned char)*s)) {
		char *end;
		unsigned long v = strtoul(s, &end, 8);
		if (*end || v > 07777)
			return -1;
		*out = (uint32_t)v;
		return 0;
	}
	uint32_t m = old & 07777;
	const char *p = s;
	while (*p) {
		uint32_t who = 0;
		for (; *p && strchr("ugoa", *p); p++)
			who |= *p == 'u' ? 04700u : *p == 'g' ? 02070u : *p == 'o' ? 01007u : 07777u;
		if (!who)
			who = 07777u; /* (umask ignored: the image has none) */
		if (!*p || !strchr("+-=", *p))
			return -1;
		while (*p && strchr("+-=", *p)) {
			char op = *p++;
			uint32_t bits = 0;
			for (; *p && strchr("rwxXst", *p); p++) {
				switch (*p) {
				case 'r': bits |= 0444; break;
				case 'w': bits |= 0222; break;
				case 'x': bits |= 0111; break;
				case 'X': if ((old & S_IFMT) == S_IFDIR || (m & 0111)) bits |= 0111; break;
				case 's': bits |= 06000; break;
				case 't': bits |= 01000; break;
				}
			}
			bits &= who;
			if (op == '+')
				m |= bits;
			else if (op == '-')
				m &= ~bits;
			else
				m = (m & ~who) | bits;
		}
		if (*p == ',')
			p++;
		else if (*p)
			return -1;
	}
	*out = m;
	return 0;
}

static int chmod_one(struct ubikit_fs *fs, const char *path, const char *mode, bool recurse, int verbose)
{
	struct ubikit_stat st;
	int err = ubikit_stat(fs, path, &st);
	if (err)
		return tool_change_fail("chmod", "cannot access", path, err);
	uint32_t m;
	if (parse_mode(mode, st.mode, &m)) {
		fprintf(stderr, "ubikit chmod: invalid mode: '%s'\n", mode);
		return 1;
	}
	err = ubikit_chmod(fs, path, m);
	if (err)
		return tool_change_fail("chmod", "changing permissions of", path, err);
	if (verbose)
		printf("mode of '%s' changed to %04o\n", path, m);
	int rc = 0;
	if (recurse && S_ISDIR(st.mode)) {
		struct ubikit_dir *d;
		err = ubikit_opendir(fs, path, &d);
		if (err)
			return tool_change_fail("chmod", "cannot read directory", path, err);
		struct ubikit_dirent de;
		int r;
		while ((r = ubikit_readdir(d, &de)) > 0) {
			if (de.type == 10 /* DT_LNK */ || !de.name[0] || strchr(de.name, '/'))
				continue;
			char *c = tool_change_join(path, de.name);
			if (!c) {
				rc = 1;
				break;
			}
			int r2 = chmod_one(fs, c, mode, true, verbose);
			rc = rc ? rc : r2;
			free(c);
		}
		ubikit_closedir(d);
		if (r < 0)
			rc = tool_change_fail("chmod", "cannot read directory", path, r);
	}
	return rc;
}

static int run_chmod(struct ubikit_fs *fs, int argc, char **argv, const int *fl, const char *const *val)
{
	(void)val;
	int rc = 0;
	for (int i = 1; i < argc; i++) {
		int r = chmod_one(fs, argv[i], argv[0], fl[F_R], fl[F_V]);
		if (r > rc)
			rc = r;
	}
	return rc;
}

/* ---- setfattr ---- */
/* Values as setfattr(1): "0x..." hex, "0s..." base64, else text (quotes
 * around it are dropped). */
static int decode_value(const char *v, char **out, size_t *len)
{
	size_t n = strlen(v);
	char *b = malloc(n + 1);
	if (!b)
		return -ENOMEM;
	size_t o = 0;
	if (n >= 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X')) {
		for (size_t i = 2; i < n; i += 2) {
			unsigned x;
			if (i + 1 >= n || sscanf(v + i, "%2x", &x) != 1 || !isxdigit((unsigned char)v[i + 1])) {
				free(b);
				return -EINVAL;
			}
			b[o++] = (char)x;
		}
	} else if (n >= 2 && v[0] == '0' && (v[1] == 's' || v[1] == 'S')) {
		static const char *tab = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
		uint32_t acc = 0;
		int bits = 0;
		for (size_t i = 2; i < n && v[i] != '='; i++) {
			const char *c = strchr(tab, v[i]);
			if (!c || !v[i]) {
				free(b);
				return -EINVAL;
			}
			acc = (acc << 6) | (uint32_t)(c - tab);
			bits += 6;
			if (bits >= 8) {
				bits -= 8;
				b[o++] = (char)(acc >> bits);
			}
		}
	} else if (n >= 2 && v[0] == '"' && v[n - 1] == '"') {
		memcpy(b, v + 1, n - 2);
		o = n - 2;
	} else {
		memcpy(b, v, n);
		o = n;
	}
	*out = b;
	*len = o;
	return 0;
}

static int run_setfattr(struct ubikit_fs *fs, int argc, char **argv, const int *fl, const char *const *val)
{
	(void)fl;
	const char *name = val[F_N], *rm = val[F_X];
	if (!!name == !!rm) {
		fprintf(stderr, "ubikit setfattr: give either -n NAME [-v VALUE] or -x NAME\n");
		return 2;
	}
	char *v = NULL;
	size_t vlen = 0;
	if (name && val[F_V] && decode_value(val[F_V], &v, &vlen)) {
		fprintf(stderr, "ubikit setfattr: bad value '%s' (text, 0x hex or 0s base64)\n", val[F_V]);
		return 2;
	}
	int rc = 0;
	for (int i = 0; i < argc; i++) {
		int err = name ? ubikit_setxattr(fs, argv[i], name, v ? v : "", vlen, 0) : ubikit_removexattr(fs, argv[i], rm);
		if (err) {
			fprintf(stderr, "ubikit setfattr: %s: %s: %s\n", argv[i], name ? name : rm,
				err == -ENODATA ? "No such attribute" : strerror(-err));
			rc = 1;
		}
	}
	free(v);
	return rc;
}

/* ---- put ---- */
static int run_put(struct ubikit_fs *fs, int argc, char **argv, const int *fl, const char *const *val)
{
	(void)val;
	const char *dest = argv[argc - 1];
	bool into = tool_change_is_dir(fs, dest);
	if (argc > 2 && !into) {
		fprintf(stderr, "ubikit put: target '%s' is not a directory\n", dest);
		return 1;
	}
	unsigned errors = 0;
	for (int i = 0; i < argc - 1; i++) {
		char *tf = NULL, *to = NULL;
		const char *target = dest;
		if (into) {
			to = tool_change_join(dest, tool_change_base(argv[i], &tf));
			target = to;
		}
		if (!target)
			errors++;
		else
			tool_put(fs, argv[i], target, fl[F_V] | (fl[F_SQUASH] ? TOOL_PUT_SQUASH : 0), &errors);
		free(tf);
		free(to);
	}
	return errors ? 1 : 0;
}

static const struct change_cmd change_cmds[] = {
	{"put", "put [-v] [-U] [image options] IMAGE HOSTPATH... DEST\n"
		"Copy files and trees from the host into the image, as 'cp -a': contents (holes stay\n"
		"holes), modes, owners, times, xattrs, hard links, symlinks, devices, fifos, sockets.\n"
		"DEST an existing directory: each HOSTPATH goes inside it; else HOSTPATH becomes DEST.\n"
		"  -U, --squash-uids  owner and group root (as mkfs.ubifs -U)\n",
	 "vU", 2, run_put},
	{"mkdir", "mkdir [-p] [-m MODE] [-v] [image options] IMAGE PATH...\n"
		  "Create directories in the image (-p: parents too, no error if existing).\n",
	 "pm:v", 1, run_mkdir},
	{"rm", "rm [-r] [-f] [-v] [image options] IMAGE PATH...\n"
	       "Remove files (and with -r directories and their contents) from the image.\n",
	 "rRfv", 1, run_rm},
	{"mv", "mv [-n] [--exchange] [-v] [image options] IMAGE SOURCE... DEST\n"
	       "Rename or move inside the image (atomic). -n: do not replace an existing DEST;\n"
	       "--exchange: swap SOURCE and DEST atomically.\n",
	 "nv", 2, run_mv},
	{"ln", "ln [-s] [-f] [image options] IMAGE TARGET [LINK_NAME]\n"
	       "Make a hard link (or with -s a symbolic link holding TARGET) in the image.\n",
	 "sfv", 1, run_ln},
	{"chmod", "chmod [-R] [-v] [image options] IMAGE MODE PATH...\n"
		  "Change permission bits: octal (0644) or symbolic (u+x,go-w).\n",
	 "Rv", 2, run_chmod},
	{"setfattr", "setfattr {-n NAME [-v VALUE] | -x NAME} [image options] IMAGE PATH...\n"
		     "Set or remove an extended attribute (VALUE: text, 0x hex or 0s base64).\n",
	 "n:v:x:", 1, run_setfattr},
};

static int change_main(const struct change_cmd *c, int argc, char **argv)
{
	static const struct option lopts[] = {{"help", no_argument, NULL, 'h'},
					      {"exchange", no_argument, NULL, 0x2000},
					      {"no-clobber", no_argument, NULL, 'n'},
					      {"parents", no_argument, NULL, 'p'},
					      {"recursive", no_argument, NULL, 'r'},
					      {"force", no_argument, NULL, 'f'},
					      {"symbolic", no_argument, NULL, 's'},
					      {"mode", required_argument, NULL, 'm'},
					      {"squash-uids", no_argument, NULL, 'U'},
					      TOOL_IMAGE_LONGOPTS,
					      {NULL, 0, NULL, 0}};
	struct tool_image_opts io;
	tool_image_opts_init(&io);
	int fl[F_NFLAGS] = {0};
	const char *val[F_NFLAGS] = {0};
	char shortopts[32];
	/* -v is "verbose" of the image options except for setfattr's -v VALUE */
	snprintf(shortopts, sizeof(shortopts), "h%s", c->shortopts);
	bool setf = !strcmp(c->name, "setfattr");
	int opt;
	optind = 1;
	while ((opt = getopt_long(argc, argv, shortopts, lopts, NULL)) != -1) {
		if (opt == 'v' && !setf) {
			fl[F_V] = 1;
			continue;
		}
		if (opt != 'v' || !setf) {
			int r = tool_image_opt(&io, opt, optarg, c->name);
			if (r < 0)
				return 2;
			if (r)
				continue;
		}
		if (opt == 'h') {
			printf("usage: ubikit %s%s", c->usage, TOOL_IMAGE_OPTS_HELP);
			return 0;
		}
		const char *known = c->shortopts;
		bool ok = opt < 0x100 && strchr(known, opt);
		if (opt == 0x2000 && !strcmp(c->name, "mv")) {
			fl[F_EXCH] = 1;
			continue;
		}
		if (!ok) {
			fprintf(stderr, "usage: ubikit %s", c->usage);
			return 2;
		}
		switch (opt) {
		case 'p': fl[F_P] = 1; break;
		case 'r': case 'R': fl[F_R] = 1; break;
		case 'f': fl[F_F] = 1; break;
		case 's': fl[F_S] = 1; break;
		case 'n': if (setf) val[F_N] = optarg; else fl[F_NOREPL] = 1; break;
		case 'x': val[F_X] = optarg; break;
		case 'v': val[F_V] = optarg; break;
		case 'm': val[F_M] = optarg; break;
		case 'U': fl[F_SQUASH] = 1; break;
		}
	}
	if (argc - optind < 1 + c->min_args) {
		fprintf(stderr, "ubikit %s: missing operand\nusage: ubikit %s", c->name, c->usage);
		return 2;
	}
	if (setf && !!val[F_N] == !!val[F_X]) {
		fprintf(stderr, "ubikit setfattr: give either -n NAME [-v VALUE] or -x NAME\n");
		return 2;
	}
	const char *path = argv[optind];
	struct ubikit_image *img = tool_image_open_rw(c->name, path, &io);
	if (!img)
		return 1;
	int rc = c->run(ubikit_image_fs(img), argc - optind - 1, argv + optind + 1, fl, val);
	/* Unmount = commit; close = to disk. A failure there loses the work. */
	if (tool_image_close_cmd(c->name, img))
		rc = 1;
	return rc;
}

static int run_named(const char *name, int argc, char **argv)
{
	for (size_t i = 0; i < sizeof(change_cmds) / sizeof(change_cmds[0]); i++)
		if (!strcmp(change_cmds[i].name, name))
			return change_main(&change_cmds[i], argc, argv);
	return 2;
}

int cmd_put(int argc, char **argv) { return run_named("put", argc, argv); }
int cmd_mkdir(int argc, char **argv) { return run_named("mkdir", argc, argv); }
int cmd_rm(int argc, char **argv) { return run_named("rm", argc, argv); }
int cmd_mv(int argc, char **argv) { return run_named("mv", argc, argv); }
int cmd_ln(int argc, char **argv) { return run_named("ln", argc, argv); }
int cmd_chmod(int argc, char **argv) { return run_named("chmod", argc, argv); }
int cmd_setfattr(int argc, char **argv) { return run_named("setfattr", argc, argv); }
