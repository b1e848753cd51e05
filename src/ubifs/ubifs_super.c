/* ubifs_super — mount and unmount (read-only for now), the info report and
 * statfs. Mount order as the kernel's mount_ubifs: superblock, master, index
 * root, journal replay (with recovery of torn tails), orphans, inode sizes,
 * root inode. Only the index root is loaded; the rest comes on demand. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ubifs/ubifs_priv.h"

static void fs_free(struct ubifs_fs *fs)
{
	if (!fs)
		return;
	ubifs_tnc_destroy(fs);
	free(fs->sbuf);
	free(fs->nbuf);
	free(fs->size_fix);
	free(fs);
}

int ubifs_mount(struct ubi_vol_io *vol, const struct ubifs_mount_opts *opts, struct ubifs_fs **out,
		struct util_err *errp)
{
	*out = NULL;
	if (!vol || !vol->read || vol->leb_size == 0)
		return util_err_set(errp, -EINVAL, "mount: no volume");
	int read_only = opts ? opts->read_only : 1;
	if (!read_only)
		return util_err_set(errp, -EOPNOTSUPP, "mount: read-write UBIFS is not implemented yet, mount read-only");
	struct ubifs_fs *fs = calloc(1, sizeof(*fs));
	if (!fs)
		return util_err_set(errp, -ENOMEM, "mount: out of memory");
	fs->vol = vol;
	fs->read_only = read_only;
	fs->skip_crc = opts ? opts->unsafe_skip_crc : 0;
	size_t limit = opts && opts->tnc_cache_bytes ? opts->tnc_cache_bytes : UBIFS_DEFAULT_TNC_CACHE;
	int err = ubifs_sb_read_check(fs);
	if (err)
		goto fail;
	fs->sbuf = malloc(fs->leb_size);
	fs->nbuf = malloc(UBIFS_MAX_NODE_SZ);
	if (!fs->sbuf || !fs->nbuf) {
		err = util_err_set(&fs->err, -ENOMEM, "mount: out of memory");
		goto fail;
	}
	err = ubifs_master_read(fs);
	if (err)
		goto fail;
	err = ubifs_tnc_init(fs, fs->mst.root_lnum, fs->mst.root_offs, fs->mst.root_len, limit);
	if (err)
		goto fail;
	err = ubifs_replay_journal(fs);
	if (err)
		goto fail;
	err = ubifs_mount_orphans(fs);
	if (err)
		goto fail;
	if (fs->need_recovery) {
		err = ubifs_recover_size(fs);
		if (err)
			goto fail;
	}
	struct ubifs_inode *root = malloc(sizeof(*root));
	if (!root) {
		err = -ENOMEM;
		goto fail;
	}
	err = ubifs_read_inode(fs, UBIFS_ROOT_INO_NUM, root);
	if (err == -ENOENT)
		err = util_err_set(&fs->err, -EINVAL, "mount: the root directory inode 1 is missing from the index");
	else if (!err && !S_ISDIR(root->mode))
		err = util_err_set(&fs->err, -EINVAL, "mount: inode 1 is not a directory (mode 0%o)", root->mode);
	free(root);
	if (err)
		goto fail;
	ubifs_tnc_shrink(fs);
	util_err_clear(&fs->err);
	*out = fs;
	return 0;
fail:
	if (errp) {
		if (fs->err.msg[0])
			*errp = fs->err;
		else
			util_err_set(errp, err, "mount failed: %s", strerror(-err));
	}
	fs_free(fs);
	return err;
}

void ubifs_unmount(struct ubifs_fs *fs)
{
	fs_free(fs);
}

const char *ubifs_errmsg(const struct ubifs_fs *fs)
{
	return fs ? util_err_msg(&fs->err) : "";
}

int ubifs_get_info(const struct ubifs_fs *fs, struct ubifs_fs_info *o)
{
	if (!fs || !o)
		return -EINVAL;
	memset(o, 0, sizeof(*o));
	o->sb = fs->sb;
	o->mst = fs->mst;
	o->mst_lnum = fs->mst_lnum;
	o->mst_offs = fs->mst_offs;
	o->mst_recovered = fs->mst_recovered;
	o->leb_cnt = fs->leb_cnt;
	o->vol_leb_cnt = fs->vol->leb_count;
	o->min_io_size = fs->min_io_size;
	o->max_write_size = fs->max_write_size;
	o->leb_size = fs->leb_size;
	o->log_first = fs->log_first;
	o->log_last = fs->log_last;
	o->lpt_first = fs->lpt_first;
	o->lpt_last = fs->lpt_last;
	o->orph_first = fs->orph_first;
	o->orph_last = fs->orph_last;
	o->main_first = fs->main_first;
	o->main_lebs = fs->main_lebs;
	o->need_recovery = fs->need_recovery;
	o->max_sqnum = fs->max_sqnum;
	o->highest_inum = fs->highest_inum;
	o->log_lebs_used = fs->log_lebs_used;
	o->log_wraps = fs->log_wraps;
	o->bud_rerefs = fs->bud_rerefs;
	o->buds = fs->buds;
	o->replayed_nodes = fs->replayed_nodes;
	o->lhead_lnum = fs->lhead_lnum;
	o->lhead_offs = fs->lhead_offs;
	o->orphans_killed = fs->orphans_killed;
	o->recovered_lebs = fs->recovered_lebs;
	o->tnc_cache_bytes = fs->tnc.limit;
	o->tnc_cached_bytes = fs->tnc.bytes;
	o->tnc_clean_bytes = fs->tnc.clean_bytes;
	o->tnc_peak_bytes = fs->tnc.peak;
	o->tnc_loads = fs->tnc.loads;
	o->tnc_evictions = fs->tnc.evictions;
	return 0;
}

int ubifs_statfs(struct ubifs_fs *fs, struct ubifs_statfs *st)
{
	memset(st, 0, sizeof(*st));
	st->block_size = UBIFS_BLOCK_SIZE;
	st->blocks = (uint64_t)fs->main_lebs * fs->leb_size / UBIFS_BLOCK_SIZE;
	uint64_t free_b = fs->mst.total_free + fs->mst.total_dirty;
	uint64_t gone = fs->mst.total_dead + fs->mst.total_dark;
	free_b = free_b > gone ? free_b - gone : 0;
	/* auto-resized LEBs are empty */
	free_b += (uint64_t)(fs->leb_cnt - fs->mst.leb_cnt) * fs->leb_size;
	st->blocks_free = free_b / UBIFS_BLOCK_SIZE;
	st->files = fs->highest_inum;
	st->name_max = UBIFS_MAX_NLEN;
	return 0;
}
