/* ubifs_super — mount and unmount, the info report and statfs. Mount order
 * as the kernel's mount_ubifs: superblock, master, LPT (and the index head
 * check), (read-write: the master marked DIRTY) index root, journal replay (with recovery of torn
 * tails), orphans, inode sizes, (read-write: free-space check, the GC LEB
 * taken and unmapped) root inode. Only the index root is loaded; the rest
 * comes on demand. A read-write unmount syncs the journal heads and writes
 * the master clean, as the kernel's put_super (no commit: the journal stays,
 * the next mount replays it). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ubifs/ubifs_fixup.h"
#include "ubifs/ubifs_format.h"
#include "ubifs/ubifs_budget.h"
#include "ubifs/ubifs_gc.h"
#include "ubifs/ubifs_journal.h"
#include "ubifs/ubifs_log.h"
#include "ubifs/ubifs_lpt.h"
#include "ubifs/ubifs_orphan_write.h"
#include "ubifs/ubifs_recovery_write.h"
#include "ubifs/ubifs_lcache.h"
#include "ubifs/ubifs_priv.h"
#include "ubifs/ubifs_wcache.h"

static void fs_free(struct ubifs_fs *fs)
{
	if (!fs)
		return;
	ubifs_wcache_close(fs->wcache);
	ubifs_lcache_disable(fs);
	ubifs_budget_close(fs->budget);
	ubifs_jnl_close(fs->jnl);
	fs->jnl = NULL;
	ubifs_orph_close(fs->orph);
	fs->orph = NULL;
	ubifs_gc_close(fs->gc);
	fs->gc = NULL;
	ubifs_log_close(fs->log);
	ubifs_lpt_close(fs->lpt);
	ubifs_tnc_destroy(fs);
	ubifs_decompress_free(fs);
	free(fs->sbuf);
	free(fs->nbuf);
	free(fs->size_fix);
	free(fs);
}

/* Read-write, before the replay: what the kernel refuses or we cannot do
 * yet is refused with a reason; then the LPT, the log and the journal
 * heads, and the master marked DIRTY (an unclean reboot from now on is
 * noticed at the next mount). */
static int rw_prepare(struct ubifs_fs *fs, const struct ubifs_mount_opts *opts)
{
	if (fs->mst.gc_lnum < fs->main_first || fs->mst.gc_lnum >= fs->leb_cnt)
		return util_err_set(&fs->err, -EINVAL, "mount: the master node names no GC LEB (%u)", fs->mst.gc_lnum);
	fs->default_compr = opts && opts->compr >= 0 && opts->compr_set ? (unsigned)opts->compr : fs->sb.default_compr;
	int err = 0;
	if (fs->leb_cnt != fs->sb.leb_cnt) {
		/* kernel auto-resize: the new LEBs are empty (ubifs_read_master),
		 * the superblock says the new count */
		uint32_t growth = fs->leb_cnt - fs->mst.leb_cnt;
		uint32_t dark_wm = (UBIFS_MAX_NODE_SZ + fs->min_io_size - 1) / fs->min_io_size * fs->min_io_size;
		fs->mst.leb_cnt = fs->leb_cnt;
		fs->mst.empty_lebs += growth;
		fs->mst.total_free += (uint64_t)growth * fs->leb_size;
		fs->mst.total_dark += (uint64_t)growth * dark_wm;
		err = ubifs_sb_write_leb_cnt(fs);
		if (err)
			return err;
	}
	if (fs->need_recovery) {
		/* kernel: the recovered master written back, then the index and
		 * LPT heads cleaned of a half-written commit */
		if (fs->mst_recovered)
			err = ubifs_rcvry_write_master(fs);
		if (!err)
			err = ubifs_rcvry_inl_heads(fs);
		if (err)
			return err;
	}
	/* kernel lpt_init_rw: LPT LEBs the ltab calls free are unmapped (a
	 * commit may have been cut after its master, before it unmapped them) */
	for (uint32_t l = fs->lpt_first; l <= fs->lpt_last; l++) {
		uint32_t lfree, ldirty;
		if (!ubifs_lpt_ltab(fs->lpt, l, &lfree, &ldirty) && lfree == fs->leb_size && (err = ubifs_leb_unmap(fs, l)))
			return err;
	}
	err = ubifs_log_open(fs, &fs->log);
	if (!err)
		err = ubifs_jnl_open(fs, &fs->jnl);
	if (err)
		return err;
	if (fs->need_recovery)
		return 0; /* the master says DIRTY already */
	fs->mst.flags |= UBIFS_MST_DIRTY;
	return ubifs_master_write(fs);
}

/* kernel check_free_space, take_gc_lnum and the GC LEB unmap */
static int rw_finish(struct ubifs_fs *fs)
{
	struct ubifs_lp_stats st;
	ubifs_lpt_stats(fs->lpt, &st);
	uint32_t dark_wm = (UBIFS_MAX_NODE_SZ + fs->min_io_size - 1) / fs->min_io_size * fs->min_io_size;
	if (st.total_free + st.total_dirty < dark_wm)
		return util_err_set(&fs->err, -ENOSPC, "mount: insufficient free space to mount read-write");
	uint32_t lhead, lhead_offs, ltail;
	ubifs_log_positions(fs->log, &lhead, &lhead_offs, &ltail);
	uint32_t next = lhead + 1 > fs->log_last ? fs->log_first : lhead + 1;
	int err = 0;
	if (next == ltail) { /* kernel mount_ubifs: the log is full */
		err = ubifs_log_consolidate(fs->log);
		fs->log_consolidated++;
	}
	if (!err)
		err = ubifs_orph_open(fs, &fs->orph);
	if (err)
		return err;
	/* after an unclean unmount: a GC LEB taken anew and a commit, which makes
	 * the killed orphans and fixed sizes part of the index */
	err = ubifs_gc_open(fs); /* GC state before the recovery's commit */
	if (err)
		return err;
	if (fs->need_recovery)
		return ubifs_rcvry_gc_commit(fs);
	/* kernel ubifs_clear_orphans: a clean file system has no orphans */
	for (uint32_t lnum = fs->orph_first; lnum <= fs->orph_last; lnum++) {
		int e = ubifs_leb_unmap(fs, lnum);
		if (e)
			return e;
	}
	return ubifs_gc_mount(fs);
}

int ubifs_mount(struct ubi_vol_io *vol, const struct ubifs_mount_opts *opts, struct ubifs_fs **out,
		struct util_err *errp)
{
	*out = NULL;
	if (!vol || !vol->read || vol->leb_size == 0)
		return util_err_set(errp, -EINVAL, "mount: no volume");
	int read_only = opts ? opts->read_only : 1;
	if (!read_only && (vol->read_only || !vol->write))
		return util_err_set(errp, -EROFS, "mount: the volume is read-only, mount read-only");
	int empty = read_only ? 0 : ubifs_vol_is_empty(vol);
	if (empty < 0) /* not a reason to mount as if it held a file system */
		return util_err_set(errp, empty, "mount: cannot tell whether the volume is empty (error %d)", empty);
	if (empty) {
		/* kernel: the first mount of an empty volume formats it */
		/* kernel get_default_compressor: zstd when built in, else LZO */
#ifdef UBIKIT_HAVE_ZSTD
		unsigned dflt = UBIFS_COMPR_ZSTD;
#else
		unsigned dflt = UBIFS_COMPR_LZO;
#endif
		struct ubifs_format_opts fo = {.compr = opts->compr_set ? (unsigned)opts->compr : dflt};
		int e = ubifs_format(vol, &fo, errp);
		if (e)
			return e;
	}
	struct ubifs_fs *fs = calloc(1, sizeof(*fs));
	if (!fs)
		return util_err_set(errp, -ENOMEM, "mount: out of memory");
	fs->vol = vol;
	fs->read_only = read_only;
	fs->skip_crc = opts ? opts->unsafe_skip_crc : 0;
	if (opts && opts->fscrypt_key && opts->fscrypt_key_len) {
		fs->fscrypt_key_len = opts->fscrypt_key_len > sizeof(fs->fscrypt_key) ? sizeof(fs->fscrypt_key)
											 : opts->fscrypt_key_len;
		memcpy(fs->fscrypt_key, opts->fscrypt_key, fs->fscrypt_key_len);
	}
	size_t limit = opts && opts->tnc_cache_bytes ? opts->tnc_cache_bytes : UBIFS_DEFAULT_TNC_CACHE;
	int err = ubifs_sb_read_check(fs);
	if (!err && opts && opts->auth_hmac_key) {
		/* before the certificate: a key that does not fit is the clearer error */
		fs->hmac_key = opts->auth_hmac_key;
		fs->hmac_key_len = opts->auth_hmac_key_len;
		err = ubifs_auth_sb_hmac(fs);
	}
	if (!err && opts && opts->auth_cert)
		err = ubifs_auth_verify_signature(fs, opts->auth_cert, opts->auth_cert_len);
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
	/* the whole LPT, read-only mounts too; then the kernel's replay-time
	 * check that the index head is where the LPT's free space says */
	err = ubifs_lpt_open(fs, &fs->lpt);
	if (err)
		goto fail;
	err = ubifs_lpt_check_ihead(fs->lpt, fs->mst.ihead_lnum, fs->mst.ihead_offs);
	if (!err)
		err = ubifs_budget_open(fs, &fs->budget);
	if (err)
		goto fail;
	if (!read_only) {
		err = rw_prepare(fs, opts);
		if (err)
			goto fail;
	}
	err = ubifs_tnc_init(fs, fs->mst.root_lnum, fs->mst.root_offs, fs->mst.root_len, limit);
	if (err)
		goto fail;
	fs->tnc.idx_size = fs->mst.index_size;
	fs->tnc.ihead_lnum = fs->mst.ihead_lnum;
	fs->tnc.ihead_offs = fs->mst.ihead_offs;
	err = ubifs_replay_journal(fs);
	if (err)
		goto fail;
	/* kernel mount_ubifs: min_idx_lebs right after the replay, so that the
	 * LEB finders of the recovery (its GC and commit) keep the index's
	 * reserve; again below once the mount's own writes are done */
	ubifs_budget_mounted(fs);
	if (!read_only)
		ubifs_log_set_head(fs->log, fs->lhead_lnum, fs->lhead_offs);
	err = ubifs_mount_orphans(fs);
	if (err)
		goto fail;
	if (fs->need_recovery) {
		err = ubifs_recover_size(fs);
		if (err)
			goto fail;
	}
	if (!read_only) {
		err = rw_finish(fs);
		if (!err)
			err = ubifs_wcache_open(fs, opts ? opts->dirty_limit : 0, &fs->wcache);
		if (!err) /* dirty space counts as available now: GC can reclaim it */
			ubifs_budget_set_gc(fs, ubifs_budget_run_gc);
		if (!err)
			err = ubifs_fixup_free_space(fs);
		if (err)
			goto fail;
	}
	ubifs_budget_mounted(fs); /* after the recovery's commit and the fixup */
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
	fs->hmac_key = NULL; /* the caller's memory, for the mount only */
	fs->hmac_key_len = 0;
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

static int unmount(struct ubifs_fs *fs, int commit)
{
	int err = 0;
	if (fs && !fs->read_only && !fs->ro_error) {
		err = ubifs_orph_unmount(fs); /* files still open: their orphans are deleted first */
		if (!err)
			err = ubifs_wcache_flush_all(fs); /* cached data, as the kernel's sync before put_super */
		if (!err)
			err = commit ? ubifs_commit(fs) : ubifs_jnl_sync_all(fs);
		if (!err) {
			fs->mst.flags &= ~UBIFS_MST_DIRTY;
			fs->mst.flags |= UBIFS_MST_NO_ORPHS;
			fs->mst.gc_lnum = fs->gc_lnum;
			err = ubifs_master_write(fs);
		}
		if (!err && fs->vol->sync)
			err = fs->vol->sync(fs->vol->ctx);
	}
	fs_free(fs);
	return err;
}

int ubifs_unmount(struct ubifs_fs *fs)
{
	return unmount(fs, 1);
}

int ubifs_unmount_journal(struct ubifs_fs *fs)
{
	return unmount(fs, 0);
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
	o->auth_mst_ok = fs->auth_mst_ok;
	o->auth_mst_hmac = fs->auth_mst_hmac;
	o->auth_sig_ok = fs->auth_sig_ok;
	o->auth_checked = fs->auth_checked;
	o->auth_key = fs->auth_key;
	o->auth_sb_hmac_ok = fs->auth_sb_hmac_ok;
	o->auth_mst_hmac_ok = fs->auth_mst_hmac_ok;
	o->auth_journal_hmacs = fs->auth_journal_hmacs;
	o->auth_dropped = fs->auth_dropped;
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
	o->log_consolidated = fs->log_consolidated;
	o->rcvry_gc_head = fs->rcvry_gc_head;
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
	/* the kernel's estimate (budget.c): what a file of that size would still fit */
	ubifs_budget_statfs(fs, &st->blocks, &st->blocks_free, &st->blocks_avail);
	st->files = fs->highest_inum;
	st->name_max = UBIFS_MAX_NLEN;
	return 0;
}
