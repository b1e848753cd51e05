/* ubifs_orphan — orphans at mount (spec §14): after an unclean unmount,
 * inodes listed in the orphan area that still have nlink 0 are deleted
 * from the in-memory index, as the kernel's kill_orphans does. A clean
 * file system (master NO_ORPHS or not DIRTY) skips the area. */
#include <errno.h>

#include "ubifs/ubifs_priv.h"
#include "util/util_endian.h"

static int do_kill_orphans(struct ubifs_fs *fs, struct ubifs_sleb *sleb, uint64_t *last_cmt_no, int *outofdate,
			   int *last_flagged)
{
	int first = 1;
	for (uint32_t i = 0; i < sleb->nodes_cnt; i++) {
		const struct ubifs_snode *s = &sleb->nodes[i];
		if (s->type != UBIFS_ORPH_NODE)
			return util_err_set(&fs->err, -EINVAL, "%s node in the orphan area at LEB %u:%u",
					    ubifs_node_type_name(s->type), sleb->lnum, s->offs);
		const uint8_t *node = sleb->buf + s->offs;
		uint64_t raw = get_le64(node + 24);
		uint64_t cmt_no = raw & 0x7FFFFFFFFFFFFFFFull;
		if (cmt_no > fs->cmt_no)
			fs->cmt_no = cmt_no; /* failed commits still advanced the number */
		if (cmt_no < *last_cmt_no && *last_flagged) {
			if (!first)
				return util_err_set(&fs->err, -EINVAL,
						    "out of order commit number %llu in orphan node at LEB %u:%u",
						    (unsigned long long)cmt_no, sleb->lnum, s->offs);
			*outofdate = 1;
			return 0;
		}
		first = 0;
		uint32_t n = ubifs_orph_count(s->len);
		for (uint32_t j = 0; j < n; j++) {
			uint64_t inum = get_le64(node + UBIFS_ORPH_NODE_SZ + 8 * j);
			if (inum > UBIFS_MAX_INUM)
				continue;
			struct ubifs_key k = ubifs_key_make((uint32_t)inum, UBIFS_INO_KEY, 0);
			uint32_t len;
			int err = ubifs_tnc_lookup(fs, &k, fs->nbuf, &len);
			/* the inode node itself gone with its LEB (see
			 * index_may_dangle): only a deleted inode's nodes are
			 * collected, so it is deleted */
			int gone = err == -EINVAL && fs->index_may_dangle;
			if (err && err != -ENOENT && !gone)
				return err;
			if (gone)
				util_err_clear(&fs->err);
			/* an inode re-linked since (O_TMPFILE + linkat) survives */
			if (gone || (!err && get_le32(fs->nbuf + 92) == 0)) {
				struct ubifs_key hi = {(uint32_t)inum, 0xFFFFFFFFu};
				/* read-only: Linux 6.1's view (its xattr inodes stay); read-write:
				 * the xattr inodes go too, so the result passes the kernel's checks */
				err = fs->read_only ? ubifs_tnc_remove_range(fs, &k, &hi) : ubifs_tnc_remove_ino(fs, (uint32_t)inum);
				if (err)
					return err;
				fs->orphans_killed++;
			}
		}
		*last_cmt_no = cmt_no;
		*last_flagged = !!(raw >> 63);
	}
	return 0;
}

static int kill_orphans(struct ubifs_fs *fs);

int ubifs_mount_orphans(struct ubifs_fs *fs)
{
	if (!fs->need_recovery || fs->no_orphs)
		return 0;
	/* The killing completes the replay: an orphan's nodes may sit in a LEB
	 * unmapped and erased after the commit (an earlier recovery killed it,
	 * collected the LEB, and was cut before its commit). Its dangling xattr
	 * entries are dropped; the sweep then removes the xattr inodes no
	 * entry names. */
	fs->index_may_dangle = 1;
	fs->replay_dangling_xents = 0;
	int err = kill_orphans(fs);
	if (!err && fs->replay_dangling_xents)
		err = ubifs_xattr_sweep(fs, 0, NULL, NULL, NULL);
	fs->index_may_dangle = 0;
	return err;
}

static int kill_orphans(struct ubifs_fs *fs)
{
	uint64_t last_cmt_no = 0;
	int outofdate = 0, last_flagged = 0;
	for (uint32_t lnum = fs->orph_first; lnum <= fs->orph_last; lnum++) {
		struct ubifs_sleb sleb;
		int err = ubifs_scan(fs, lnum, 0, &sleb);
		if (err == -EUCLEAN)
			err = ubifs_recover_leb(fs, lnum, 0, &sleb, -1);
		if (err)
			return err;
		err = do_kill_orphans(fs, &sleb, &last_cmt_no, &outofdate, &last_flagged);
		ubifs_sleb_free(&sleb);
		if (err)
			return err;
		if (outofdate)
			break;
	}
	return 0;
}
