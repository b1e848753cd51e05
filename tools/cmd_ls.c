/* cmd_ls — 'ubikit ls [-l] [-R] [-i] IMAGE [PATH]': list a directory of the
 * UBIFS inside an image, ls-style (entries sorted by name bytes; -l shows
 * mode, links, uid, gid, size or major,minor, mtime in UTC, name -> target). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <ubikit/ubikit.h>

#include "commands.h"
#include "tool_image.h"
#include "tool_name.h"

#define LS_MAX_DEPTH 1024

struct ls_ctx {
	struct ubikit_fs *fs;
	int depth;
	uint64_t ancestors[LS_MAX_DEPTH]; /* directory inodes on the current path */
	int longfmt, recursive, show_ino;
	bool esc; /* names escaped like 'ls -b' (default on a terminal) */
	int errors;
};

struct ls_ent {
	char *name;
	uint64_t ino;
	struct ubikit_stat st;
	int stat_err;
};

static void ls_usage(FILE *out)
{
	fprintf(out, "usage: ubikit ls [-l] [-R] [-i] [image options] IMAGE [PATH]\n"
		     "List PATH (default /) of the UBIFS in IMAGE (read-only).\n"
		     "  -l, --long       long format: mode, links, uid, gid, size, mtime (UTC), name\n"
		     "  -R, --recursive  list subdirectories too\n"
		     "  -i, --inode      print inode numbers\n"
		     "  -b, --escape     escape names like 'ls -b' (default on a terminal)\n"
		     "  -N, --literal    print names as they are, even on a terminal\n"
		     "  -h, --help       this help\n" TOOL_IMAGE_OPTS_HELP);
}

static int cmp_ent(const void *a, const void *b)
{
	return strcmp(((const struct ls_ent *)a)->name, ((const struct ls_ent *)b)->name);
}

static void print_ent(struct ls_ctx *c, const char *path, const char *name, const struct ubikit_stat *st)
{
	if (c->show_ino)
		printf("%8" PRIu64 " ", st->ino);
	if (!c->longfmt) {
		tool_name_put(stdout, name, c->esc);
		putchar('\n');
		return;
	}
	char mode[11];
	tool_mode_string(st->mode, mode);
	char size[48];
	if (S_ISCHR(st->mode) || S_ISBLK(st->mode))
		snprintf(size, sizeof(size), "%u, %u", st->rdev_major, st->rdev_minor);
	else
		snprintf(size, sizeof(size), "%" PRIu64, st->size);
	char tbuf[32];
	time_t t = (time_t)st->mtime_sec;
	struct tm tm;
	if (gmtime_r(&t, &tm))
		strftime(tbuf, sizeof(tbuf), "%Y-%m-%d %H:%M:%S", &tm);
	else
		snprintf(tbuf, sizeof(tbuf), "%" PRId64, st->mtime_sec);
	printf("%s %3u %5u %5u %10s %s ", mode, st->nlink, st->uid, st->gid, size, tbuf);
	tool_name_put(stdout, name, c->esc);
	if (S_ISLNK(st->mode)) {
		char target[4097];
		ssize_t n = ubikit_readlink_ino(c->fs, st->ino, target, sizeof(target) - 1);
		if (n >= 0) {
			target[n] = '\0';
			fputs(" -> ", stdout);
			tool_name_put(stdout, target, c->esc);
		} else {
			printf(" -> ?");
			char e[1024];
			fprintf(stderr, "ubikit ls: %s: cannot read link: %s\n", tool_name_esc(path, e, sizeof(e)),
				ubikit_errmsg(c->fs));
			c->errors++;
		}
	}
	putchar('\n');
}

static int list_dir(struct ls_ctx *c, const char *path, uint64_t dir_ino, int header)
{
	int ret = 0;
	for (int i = 0; i < c->depth; i++)
		if (c->ancestors[i] == dir_ino) {
			fprintf(stderr, "ubikit ls: %s: directory inode %" PRIu64 " is its own ancestor (a loop in the image): not followed\n",
				path, dir_ino);
			c->errors++;
			return -ELOOP;
		}
	if (c->depth >= LS_MAX_DEPTH) {
		fprintf(stderr, "ubikit ls: %s: deeper than %d levels: not followed\n", path, LS_MAX_DEPTH);
		c->errors++;
		return -ELOOP;
	}
	c->ancestors[c->depth] = dir_ino;
	size_t n = 0, cap = 64;
	struct ls_ent *ents = malloc(cap * sizeof(*ents));
	struct ubikit_dirent de;
	uint64_t cookie = 0;
	while (ents && (ret = ubikit_readdir_ino(c->fs, dir_ino, cookie, &de)) == 1) {
		cookie = de.cookie;
		if (n == cap) {
			struct ls_ent *ne = realloc(ents, cap * 2 * sizeof(*ents));
			if (!ne)
				break;
			ents = ne;
			cap *= 2;
		}
		ents[n].ino = de.ino;
		ents[n].name = strdup(de.name);
		if (!ents[n].name)
			break;
		n++;
	}
	if (ret < 0) {
		fprintf(stderr, "ubikit ls: %s: reading the directory: %s\n", path, ubikit_errmsg(c->fs));
		c->errors++;
	}
	if (!ents)
		return -ENOMEM;
	qsort(ents, n, sizeof(*ents), cmp_ent);
	if (header) {
		tool_name_put(stdout, path, c->esc);
		fputs(":\n", stdout);
	}
	for (size_t i = 0; i < n; i++) {
		char *p = tool_path_join(path, ents[i].name);
		ents[i].stat_err = p ? ubikit_stat_ino(c->fs, ents[i].ino, &ents[i].st) : -ENOMEM;
		if (ents[i].stat_err) {
			const char *m = ubikit_errmsg(c->fs);
			char e[1024];
			fprintf(stderr, "ubikit ls: %s: directory entry points to inode %" PRIu64 ", which cannot be read: %s\n",
				tool_name_esc(p ? p : ents[i].name, e, sizeof(e)), ents[i].ino,
				ents[i].stat_err == -ENOENT ? "no such inode" : (m[0] ? m : strerror(-ents[i].stat_err)));
			c->errors++;
		} else {
			print_ent(c, p, ents[i].name, &ents[i].st);
		}
		free(p);
	}
	if (c->recursive) {
		for (size_t i = 0; i < n; i++) {
			if (ents[i].stat_err || !S_ISDIR(ents[i].st.mode))
				continue;
			char *p = tool_path_join(path, ents[i].name);
			if (!p)
				continue;
			putchar('\n');
			c->depth++;
			list_dir(c, p, ents[i].st.ino, 1);
			c->depth--;
			free(p);
		}
	}
	for (size_t i = 0; i < n; i++)
		free(ents[i].name);
	free(ents);
	return 0;
}

int cmd_ls(int argc, char **argv)
{
	static const struct option lopts[] = {{"long", no_argument, NULL, 'l'},
					      {"recursive", no_argument, NULL, 'R'},
					      {"inode", no_argument, NULL, 'i'},
					      {"escape", no_argument, NULL, 'b'},
					      {"literal", no_argument, NULL, 'N'},
					      {"help", no_argument, NULL, 'h'},
					      TOOL_IMAGE_LONGOPTS,
					      {NULL, 0, NULL, 0}};
	struct tool_image_opts io;
	tool_image_opts_init(&io);
	struct ls_ctx c = {0};
	c.esc = tool_name_tty(stdout);
	int opt;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "lRibNhv", lopts, NULL)) != -1) {
		int r = tool_image_opt(&io, opt, optarg, "ls");
		if (r < 0)
			return 2;
		if (r)
			continue;
		switch (opt) {
		case 'l': c.longfmt = 1; break;
		case 'R': c.recursive = 1; break;
		case 'i': c.show_ino = 1; break;
		case 'b': c.esc = true; break;
		case 'N': c.esc = false; break;
		case 'h': ls_usage(stdout); return 0;
		default: ls_usage(stderr); return 2;
		}
	}
	if (optind >= argc || argc - optind > 2) {
		ls_usage(stderr);
		return 2;
	}
	const char *path = argc - optind == 2 ? argv[optind + 1] : "/";
	struct ubikit_image *img = tool_image_open_mounted("ls", argv[optind], &io);
	if (!img)
		return 1;
	c.fs = ubikit_image_fs(img);
	struct ubikit_stat st;
	int ret = ubikit_lstat(c.fs, path, &st);
	if (ret) {
		tool_err("ls", "%s: %s", path, ubikit_errmsg(c.fs)[0] ? ubikit_errmsg(c.fs) : strerror(-ret));
		tool_image_close(img);
		return 1;
	}
	if (S_ISDIR(st.mode))
		list_dir(&c, path, st.ino, c.recursive);
	else
		print_ent(&c, path, path, &st);
	tool_image_close(img);
	return c.errors ? 1 : 0;
}
