/* ubifs_fsck_fix — fsck's in-place repair of a file system mounted
 * read-write, for problems the index itself can mend without rebuilding
 * the volume from a scan (ubifs_rebuild.c, which cannot tell deleted
 * files whose deletion nodes were garbage-collected from live ones):
 *  - xattr inodes that no xattr entry names. Linux before 6.10 leaves them
 *    when a power cut follows the unlink of an open file with xattrs: at
 *    the next mount its orphan processing removes the host's nodes (its
 *    xattr entries with them) but keeps the xattr inodes, orphans too, as
 *    their link count is 1 (kernel bugzilla 218661). Nothing reaches them
 *    any more; they are removed with all their nodes.
 * The same sweep (ubifs_xattr_sweep) serves the replay: a deletion that
 * met a dangling xattr entry (its LEB reused after the commit) could not
 * learn the xattr inode's number.
 * Then a commit, so that the repair is on flash as one step. A dry run
 * (read-only mounts too) only reports what it would do: the image layer
 * goes in place only when that covers every problem the check found. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ubifs/ubifs_priv.h"
#include "ubifs/ubifs_tnc.h"

struct fix_set { /* sorted after collection */
	uint32_t *v;
	size_t n, cap;
};

static int set_add(struct fix_set *s, uint32_t inum)
{
	if (s->n == s->cap) {
		size_t nc = s->cap ? 2 * s->cap : 256;
		uint32_t *nv = realloc(s->v, nc * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		s->v = nv;
		s->cap = nc;
	}
	s->v[s->n++] = inum;
	return 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

static int set_has(const struct fix_set *s, uint32_t inum)
{
	return s->n && bsearch(&inum, s->v, s->n, sizeof(*s->v), cmp_u32) != NULL;
}

/* every xattr inode of the index (xino) and every inode an entry names (named) */
static int collect(struct ubifs_fs *fs, struct fix_set *xino, struct fix_set *named)
{
	struct ubifs_key k = {0, 0};
	struct ubifs_tnc_pos pos;
	int err = ubifs_tnc_seek(fs, &k, 0, &pos);
	while (!err) {
		struct ubifs_zbranch zb = *ubifs_tnc_at(&pos);
		unsigned type = ubifs_key_type(&zb.key);
		if (type == UBIFS_INO_KEY || type == UBIFS_DENT_KEY || type == UBIFS_XENT_KEY) {
			err = ubifs_tnc_read_leaf(fs, &zb, fs->nbuf);
			if (err == -EINVAL && fs->index_may_dangle && type == UBIFS_INO_KEY) {
				/* the replay's sweep: an inode branch whose node is
				 * gone (the xattr inode of a deleted file, in a LEB
				 * reused after the commit) counts as a candidate; one
				 * an entry names is kept */
				if ((err = set_add(xino, zb.key.inum)) != 0)
					return err;
				err = ubifs_tnc_next(fs, &pos);
				continue;
			}
			if (err)
				return err;
			if (type == UBIFS_INO_KEY) {
				struct ubifs_ino_node ino;
				ubifs_ino_unpack(fs->nbuf, &ino);
				if ((ino.flags & UBIFS_XATTR_FL) && (err = set_add(xino, zb.key.inum)))
					return err;
			} else {
				struct ubifs_dent_node d;
				ubifs_dent_unpack(fs->nbuf, &d);
				if (d.inum && (err = set_add(named, (uint32_t)d.inum)))
					return err;
			}
		}
		err = ubifs_tnc_next(fs, &pos);
	}
	return err == -ENOENT ? 0 : err;
}

int ubifs_xattr_sweep(struct ubifs_fs *fs, int dry_run, ubifs_check_cb cb, void *ctx, unsigned long *fixed)
{
	struct fix_set xino = {0}, named = {0};
	unsigned long n = 0;
	int err = collect(fs, &xino, &named);
	if (!err)
		qsort(named.v, named.n, sizeof(*named.v), cmp_u32);
	for (size_t i = 0; !err && i < xino.n; i++) {
		if (set_has(&named, xino.v[i]))
			continue;
		if (!dry_run && (err = ubifs_tnc_remove_ino(fs, xino.v[i])))
			break;
		n++;
		if (cb) {
			char msg[160];
			snprintf(msg, sizeof(msg),
				 "xattr inode %u has no entry naming it (its host was deleted): %s", xino.v[i],
				 dry_run ? "to be removed" : "removed");
			err = cb(ctx, msg, -1, -1, xino.v[i]);
		}
	}
	free(xino.v);
	free(named.v);
	if (fixed)
		*fixed = n;
	return err;
}

int ubifs_fsck_fix(struct ubifs_fs *fs, int dry_run, ubifs_check_cb cb, void *ctx, unsigned long *fixed)
{
	if (!fs)
		return -EINVAL;
	if (!dry_run && fs->read_only)
		return -EROFS;
	unsigned long n = 0;
	int err = ubifs_xattr_sweep(fs, dry_run, cb, ctx, &n);
	if (!err && n && !dry_run)
		err = ubifs_commit(fs);
	if (fixed)
		*fixed = n;
	return err;
}
