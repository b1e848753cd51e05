/* fuse_ubikit_open — files open through the mount whose last name goes
 * away. POSIX keeps an unlinked open file alive until its last close; the
 * fs layer removes the inode with its last link at once, so an unlink (or
 * a rename over it) of an open file with one link renames it to a hidden
 * name in the root instead (".ubikit_hidden_<ino>", as libfuse's
 * .fuse_hidden files), and the last release unlinks it. What is still
 * hidden when the session ends is unlinked then. Open counts live in a
 * small table in the session context (no global state). */
#define FUSE_USE_VERSION 35
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <ubikit/ubikit.h>

#include "fuse/fuse_ubikit_priv.h"

static struct fu_open *find(struct fu_ctx *c, uint64_t ino)
{
	for (size_t i = 0; i < c->nopen; i++)
		if (c->open[i].ino == ino)
			return &c->open[i];
	return NULL;
}

static void hidden_name(uint64_t ino, char out[64])
{
	snprintf(out, 64, ".ubikit_hidden_%llu", (unsigned long long)ino);
}

void fu_open_count(struct fu_ctx *c, uint64_t ino)
{
	struct fu_open *o = find(c, ino);
	if (o) {
		o->count++;
		return;
	}
	if (c->nopen == c->capopen) {
		size_t n = c->capopen ? c->capopen * 2 : 16;
		struct fu_open *t = realloc(c->open, n * sizeof(*t));
		if (!t)
			return; /* only costs the hiding of this file */
		c->open = t;
		c->capopen = n;
	}
	c->open[c->nopen++] = (struct fu_open){.ino = ino, .count = 1};
}

void fu_open_release(struct fu_ctx *c, uint64_t ino)
{
	struct fu_open *o = find(c, ino);
	if (!o || --o->count > 0)
		return;
	if (o->hidden) {
		char n[64];
		hidden_name(ino, n);
		int err = ubikit_unlink_ino(c->fs, UBIKIT_ROOT_INO, n);
		if (err)
			fuse_log(FUSE_LOG_ERR, "ubikit: removing %s: %s\n", n, strerror(-err));
	}
	*o = c->open[--c->nopen];
}

int fu_open_hide(struct fu_ctx *c, uint64_t parent, const char *name)
{
	uint64_t ino;
	struct ubikit_stat st;
	if (ubikit_lookup_ino(c->fs, parent, name, &ino) || ubikit_stat_ino(c->fs, ino, &st))
		return 0;
	struct fu_open *o = find(c, ino);
	if (!o || o->hidden || S_ISDIR(st.mode) || st.nlink != 1)
		return 0;
	char n[64];
	hidden_name(ino, n);
	int err = ubikit_rename_ino(c->fs, parent, name, UBIKIT_ROOT_INO, n, 0);
	if (err)
		return err;
	o->hidden = 1;
	return 1;
}

void fu_open_end(struct fu_ctx *c)
{
	for (size_t i = 0; i < c->nopen; i++)
		if (c->open[i].hidden) {
			char n[64];
			hidden_name(c->open[i].ino, n);
			ubikit_unlink_ino(c->fs, UBIKIT_ROOT_INO, n);
		}
	free(c->open);
	c->open = NULL;
	c->nopen = c->capopen = 0;
}
