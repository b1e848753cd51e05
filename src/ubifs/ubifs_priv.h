/* ubifs_priv — the mounted-file-system context shared by the files of the
 * UBIFS layer (not for other layers: they use ubifs.h). */
#ifndef UBIKIT_UBIFS_PRIV_H
#define UBIKIT_UBIFS_PRIV_H
#include <stddef.h>
#include <stdint.h>

#include "ubi/ubi_vol_io.h"
#include "ubifs/ubifs.h"
#include "ubifs/ubifs_media.h"
#include "ubifs/ubifs_tnc.h"
#include "util/util_err.h"

#define UBIFS_DEFAULT_TNC_CACHE (1u << 20)

/* an inode whose size the journal shows to be too small (recovery, §16) */
struct ubifs_size_fix {
	uint32_t inum;
	int exists;
	uint64_t i_size, d_size;
};

struct ubifs_lpt;
struct ubifs_log;
struct ubifs_budget;
struct ubifs_wcache;
struct ubifs_gc;

struct ubifs_fs {
	struct ubi_vol_io *vol;
	struct util_err err;
	int read_only;
	int skip_crc; /* fuzzing only */

	struct ubifs_sb_node sb;
	struct ubifs_mst_node mst;
	uint32_t mst_lnum, mst_offs;
	int mst_recovered;

	/* geometry */
	uint32_t leb_size, min_io_size, max_write_size;
	uint32_t leb_cnt, old_leb_cnt, fanout, jhead_cnt; /* jhead_cnt: all heads (sb + 2) */
	uint32_t log_first, log_last, lpt_first, lpt_last, orph_first, orph_last, main_first, main_lebs;
	unsigned key_hash;
	int double_hash;
	/* fscrypt (ubifs_crypt.c): the master key given at mount, the last
	 * per-file key derived, the last directory asked about; the master
	 * key's policy v2 identifier, once computed */
	uint8_t fscrypt_key[64], crypt_key[64], crypt_key_id[16];
	size_t fscrypt_key_len;
	int crypt_key_id_ok;
	uint64_t crypt_key_inum, crypt_dir_inum;
	int crypt_dir_enc;
	int auth_mst_ok;    /* authenticated: the master node matched the superblock's hash of it */
	int auth_sig_ok;    /* authenticated: the superblock's signature verified with the given certificate */
	int auth_mst_hmac;  /* authenticated: the master node carries an HMAC (kernel-written), not checked */
	uint64_t auth_checked; /* authenticated: index and leaf node hashes checked */
	const uint8_t *hmac_key; /* the HMAC key (the caller's memory: during ubifs_mount only), or NULL */
	size_t hmac_key_len;
	int auth_key, auth_sb_hmac_ok, auth_mst_hmac_ok; /* see struct ubifs_fs_info */
	uint32_t auth_journal_hmacs, auth_dropped;
	uint32_t hash_len; /* authenticated file system: length of the node hashes in index branches, else 0 */

	/* state */
	int need_recovery, no_orphs;
	uint64_t max_sqnum, highest_inum, cmt_no, cs_sqnum;
	uint32_t lhead_lnum, lhead_offs, ltail_lnum;
	uint32_t log_lebs_used, buds;
	uint32_t log_wraps, bud_rerefs; /* replay: log went past its last LEB; references to known buds */
	uint64_t replayed_nodes;
	uint32_t orphans_killed, recovered_lebs;
	uint32_t log_consolidated, rcvry_gc_head; /* read-write mount: see ubifs_fs_info */

	struct ubifs_size_fix *size_fix;
	size_t size_fix_cnt, size_fix_cap;

	/* decompression contexts, made at first use and kept until unmount
	 * (a zstd context per 4 KiB block cost a quarter of an extract):
	 * ZSTD_DCtx, z_stream and libdeflate_decompressor, opaque here
	 * (ubifs_compress.c) */
	void *dctx_zstd, *dctx_zlib, *dctx_deflate;

	struct ubifs_tnc tnc;

	/* write path: each subsystem owns its state, reached through its header */
	struct ubifs_lpt *lpt; /* ubifs_lpt.h: read at every mount, written by the commit */
	struct ubifs_log *log; /* ubifs_log.h */
	struct ubifs_jnl *jnl; /* ubifs_journal.h: heads and write-buffers */
	uint32_t gc_lnum;      /* the LEB kept empty for GC (master); changed only by ubifs_gc.c */
	int ro_error;          /* a write failed: no more writes (kernel ro_error) */
	int in_commit;
	int replaying;
	/* The committed index may name nodes whose LEB is gone: during the
	 * replay and the orphan killing after it, until the mount's commit.
	 * A LEB that garbage collection or a commit start unmapped after the
	 * last commit (the nodes were deleted in the journal, or by an earlier
	 * recovery's orphan killing whose commit was cut) can be erased before
	 * the next commit, as the kernel's background erase may do. Reads that
	 * meet such a "dangling branch" drop it instead of failing. */
	int index_may_dangle;
	uint32_t replay_dangling_xents; /* xattr entries of deleted inodes found dangling (replay, orphans) */
	uint64_t commits;      /* commits run by this mount */
	unsigned default_compr;
	uint64_t stat_bytes_written;
	struct ubifs_budget *budget; /* ubifs_budget.h: space reservations (read-only mounts too: statfs) */
	struct ubifs_wcache *wcache; /* ubifs_wcache.h: dirty file data not yet in the journal */
	struct ubifs_lcache *lcache; /* ubifs_lcache.h: whole-LEB read cache (fsck), NULL: off */
	struct ubifs_orph *orph; /* ubifs_orphan_write.h: open inodes and orphans (read-write) */

	struct ubifs_gc *gc;   /* ubifs_gc.h: GC state (read-write mounts) */

	uint8_t *sbuf; /* one LEB of scratch for scanning */
	uint8_t *nbuf; /* one node of scratch (UBIFS_MAX_NODE_SZ) */
};

/* ---- LEB access (ubifs_io.c) ---- */
int ubifs_leb_read(struct ubifs_fs *fs, uint32_t lnum, uint32_t offs, void *buf, size_t len);
int ubifs_leb_write(struct ubifs_fs *fs, uint32_t lnum, uint32_t offs, const void *buf, size_t len);
int ubifs_leb_change(struct ubifs_fs *fs, uint32_t lnum, const void *buf, size_t len);
int ubifs_leb_unmap(struct ubifs_fs *fs, uint32_t lnum);
int ubifs_leb_map(struct ubifs_fs *fs, uint32_t lnum);
uint64_t ubifs_next_sqnum(struct ubifs_fs *fs);
/* Give the node (len bytes at buf, header packed) a sqnum and CRC, pad it
 * to min_io_size (buf must have room) and write it at lnum:offs. */
int ubifs_write_node(struct ubifs_fs *fs, uint8_t *buf, uint32_t len, uint32_t lnum, uint32_t offs);
/* bytes still in a write-buffer (ubifs_journal.c) */
struct ubifs_jnl;
void ubifs_jnl_overlay(const struct ubifs_jnl *jnl, uint32_t lnum, uint32_t offs, void *buf, size_t len);
/* Read a node of the given type and exact length at lnum:offs and check it
 * (magic, type, length, CRC). Errors name the place. */
int ubifs_read_node(struct ubifs_fs *fs, uint8_t *buf, unsigned type, uint32_t len, uint32_t lnum, uint32_t offs);
int ubifs_is_empty(const uint8_t *buf, size_t len);
/* ubifs_check_node, honouring the fuzzing-only skip_crc option */
enum ubifs_chk ubifs_fs_check_node(const struct ubifs_fs *fs, const uint8_t *buf, size_t avail, uint32_t offs);

/* ---- authentication (ubifs_auth.c) ---- */
/* The hash of the node (len bytes) must equal want (fs->hash_len bytes):
 * 0, or -EBADMSG with a message naming the node. */
int ubifs_auth_check(struct ubifs_fs *fs, const uint8_t *node, uint32_t len, const uint8_t *want, uint32_t lnum,
		     uint32_t offs);
/* The master node (raw, UBIFS_MST_NODE_SZ) against the superblock: its hash
 * (mkfs.ubifs images) or its HMAC (kernel-written: checked with the key only;
 * -EPERM when it does not verify). */
int ubifs_auth_master(struct ubifs_fs *fs, const uint8_t *mst);
/* With the HMAC key (fs->hmac_key): the superblock as the kernel checks it.
 * Not authenticated: -EINVAL; a superblock with an HMAC: the HMAC of the
 * well-known message first (-ENOKEY: the key does not fit), then the
 * superblock's HMAC (-EPERM); a signed superblock (mkfs.ubifs) holds no
 * HMAC: 0 (the kernel checks the signature there). */
int ubifs_auth_sb_hmac(struct ubifs_fs *fs);
/* Running hash of the log and of each bud (the kernel's log_hash): an
 * opaque hash state; NULL is returned on failure (out of memory). */
void *ubifs_auth_hash_new(struct ubifs_fs *fs);
void *ubifs_auth_hash_dup(void *h);
int ubifs_auth_hash_update(struct ubifs_fs *fs, void *h, const void *data, size_t len);
void ubifs_auth_hash_free(void *h);
/* An authentication node (len bytes at lnum:offs): its HMAC must be the
 * HMAC of the hash of everything h has taken so far: 0, or -EPERM. */
int ubifs_auth_node_check(struct ubifs_fs *fs, void *h, const uint8_t *node, uint32_t len, uint32_t lnum,
			  uint32_t offs);
/* The superblock's PKCS#7 signature (the signature node after it in LEB 0)
 * against cert (X.509, PEM or DER): 0 and fs->auth_sig_ok set, or an error
 * (-EKEYREJECTED: does not verify; -EINVAL: not authenticated, bad cert). */
int ubifs_auth_verify_signature(struct ubifs_fs *fs, const uint8_t *cert, size_t cert_len);

/* ---- fscrypt (ubifs_crypt.c) ---- */
/* 1 if directory dir is encrypted, 0 if not, <0 error */
int ubifs_crypt_dir_encrypted(struct ubifs_fs *fs, uint64_t dir);
/* ent's raw (ciphertext) name replaced by the plain name (key given) or the kernel's no-key name */
int ubifs_crypt_name(struct ubifs_fs *fs, uint64_t dir, struct ubifs_dirent *ent);
/* derive (and keep) inode inum's file key: call before reading a data node
 * into fs->nbuf, since deriving reads the encryption context through it */
int ubifs_crypt_prepare(struct ubifs_fs *fs, uint64_t inum);
/* decrypt one data node's payload in place (len: stored bytes, a multiple of 16); -ENOKEY without key */
int ubifs_crypt_data(struct ubifs_fs *fs, uint64_t inum, uint32_t block, uint8_t *data, uint32_t len);
/* the xattr value, including the hidden encryption context "c" */
ssize_t ubifs_getxattr_raw(struct ubifs_fs *fs, uint64_t inum, const char *name, void *buf, size_t size);

/* ---- scanning (ubifs_scan.c) ---- */
struct ubifs_snode {
	uint32_t offs, len;
	uint8_t type, group_type;
	uint64_t sqnum;
	struct ubifs_key key;
};
struct ubifs_sleb {
	uint32_t lnum;
	uint32_t endpt; /* where the valid data ends */
	uint8_t *buf;   /* the whole LEB (fs->sbuf); node bytes at buf + offs */
	struct ubifs_snode *nodes;
	uint32_t nodes_cnt, nodes_cap;
};
enum ubifs_scan_res {
	UBIFS_SCANNED_EMPTY_SPACE = -1,
	UBIFS_SCANNED_A_NODE = -2,
	UBIFS_SCANNED_A_CORRUPT_NODE = -3,
	UBIFS_SCANNED_A_BAD_PAD_NODE = -4,
	UBIFS_SCANNED_GARBAGE = -5,
};
/* >0: padding bytes to skip; else one of ubifs_scan_res. */
int ubifs_scan_a_node(const struct ubifs_fs *fs, const uint8_t *buf, uint32_t len, uint32_t offs);
/* Strict scan from offs (spec §4). -EUCLEAN on corruption (message set). */
int ubifs_scan(struct ubifs_fs *fs, uint32_t lnum, uint32_t offs, struct ubifs_sleb *sleb);
int ubifs_sleb_add(struct ubifs_sleb *sleb, const uint8_t *node, uint32_t offs);
void ubifs_sleb_free(struct ubifs_sleb *sleb);

/* ---- recovery (ubifs_recovery.c) ---- */
/* Kernel's ubifs_recover_leb: scan, tolerating a torn tail (power-cut pattern)
 * after the last good node; jhead < 0 for non-journal LEBs (grouped). */
int ubifs_recover_leb(struct ubifs_fs *fs, uint32_t lnum, uint32_t offs, struct ubifs_sleb *sleb, int jhead);
int ubifs_recover_log_leb(struct ubifs_fs *fs, uint32_t lnum, uint32_t offs, struct ubifs_sleb *sleb);
/* 1 when log LEB lnum cannot continue the log, whatever the rest of it
 * holds: it starts with a good node older than newer_than (the commit
 * start, or the newest node of the log before this LEB), so it was written
 * before them, or its first min. I/O unit is empty; 0 when it may, <0 on a
 * read error. */
int ubifs_log_leb_is_stale(struct ubifs_fs *fs, uint32_t lnum, uint64_t newer_than);
/* 1 if log LEB lnum begins with a good commit start or reference node
 * newer than newer_than (CRC checked), 0 if not, <0 on a read error. */
int ubifs_log_leb_starts_log(struct ubifs_fs *fs, uint32_t lnum, uint64_t newer_than);
int ubifs_recover_master(struct ubifs_fs *fs, uint8_t *mst_out);
int ubifs_recover_size_accum(struct ubifs_fs *fs, const struct ubifs_key *key, int deletion, uint64_t new_size);
int ubifs_recover_size(struct ubifs_fs *fs);
void ubifs_size_fix_apply(const struct ubifs_fs *fs, uint64_t inum, uint64_t *size);

/* ---- write path ---- */
/* Do index changes move lprops? On read-write mounts always; on read-only
 * ones during the replay (as the kernel), not for later in-memory changes. */
static inline int ubifs_lprops_tracked(const struct ubifs_fs *fs)
{
	return fs->lpt && (!fs->read_only || fs->replaying);
}
/* Both master node copies (LEB 1 and 2), from fs->mst with the current
 * highest inode number (kernel ubifs_write_master). */
int ubifs_master_write(struct ubifs_fs *fs);
/* shared by the write operations (ubifs_dir_write.c) */
void ubifs_now(const struct ubifs_fs *fs, int64_t *sec, uint32_t *nsec);
int ubifs_check_rw(struct ubifs_fs *fs);
int ubifs_new_inode(struct ubifs_fs *fs, const struct ubifs_inode *dir, uint32_t mode, uint32_t uid, uint32_t gid,
		    struct ubifs_inode *ui);
/* Remove the xattr inodes of the index that no xattr entry names, each to cb
 * (may be NULL), *n how many; no commit (ubifs_fsck_fix.c). dry_run: count. */
int ubifs_xattr_sweep(struct ubifs_fs *fs, int dry_run, ubifs_check_cb cb, void *ctx, unsigned long *n);
/* Run a commit (ubifs_commit.c): journal -> index, LPT, new master, log reset. */
int ubifs_commit(struct ubifs_fs *fs);

/* ---- areas ---- */
int ubifs_sb_read_check(struct ubifs_fs *fs);  /* ubifs_sb.c */
/* read-write auto-resize: the superblock rewritten with fs->leb_cnt */
int ubifs_sb_write_leb_cnt(struct ubifs_fs *fs);
int ubifs_master_read(struct ubifs_fs *fs);    /* ubifs_master.c */
int ubifs_mst_cmp(const uint8_t *a, const uint8_t *b); /* 0 when the bodies match */
int ubifs_replay_journal(struct ubifs_fs *fs); /* ubifs_replay.c */
int ubifs_mount_orphans(struct ubifs_fs *fs);  /* ubifs_orphan.c */

/* ---- compression (ubifs_compress.c) ---- */
int ubifs_decompress(struct ubifs_fs *fs, const void *in, size_t in_len, void *out, size_t *out_len, unsigned compr);
/* Free the decompression contexts (unmount). */
void ubifs_decompress_free(struct ubifs_fs *fs);
/* *compr in: wanted compressor; out: what was used (NONE when it did not
 * pay, as the kernel decides). *out_len in: room at out (>= in_len). */
int ubifs_compress(const void *in, size_t in_len, void *out, size_t *out_len, unsigned *compr);

#endif
