/* ubifs — the UBIFS layer as the fs layer and the tools see it: mount and
 * unmount over a struct ubi_vol_io, read operations by inode number
 * (inode, lookup, readdir, data, xattrs), and the superblock/master/
 * geometry report behind `ubikit info`.
 *
 * Everything returns a negative errno on failure and records a sentence
 * naming the place (LEB:offset, node type, what was expected) in the
 * fs's error buffer (ubifs_errmsg) or in the util_err passed to mount.
 * The write path (journal, commit, GC, LPT) comes later; the read side is
 * built so it can be added (dirty-capable TNC, no LPT needed to read). */
#ifndef UBIKIT_UBIFS_H
#define UBIKIT_UBIFS_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ubifs/ubifs_media.h"
#include "util/util_err.h"

struct ubi_vol_io;
struct ubifs_fs;

struct ubifs_mount_opts {
	int read_only;          /* 0: read-write (clean file systems only for now) */
	int compr_set, compr;   /* compr_set: write with compressor compr (UBIFS_COMPR_*) instead of the sb default */
	size_t tnc_cache_bytes; /* bound on clean cached index nodes; 0 = default (1 MiB) */
	int unsafe_skip_crc;    /* FUZZING ONLY: accept nodes whose CRC is wrong (the superblock's
				 * is still checked), so that mutated images get past the CRCs */
	size_t dirty_limit;     /* write-back: bytes of dirty file data cached before it is written
				 * back; 0 = default (4 MiB) */
	const uint8_t *fscrypt_key; /* fscrypt master key (up to 64 bytes), or NULL: encrypted
				     * names are shown as no-key names, contents cannot be read */
	size_t fscrypt_key_len;
	const uint8_t *auth_cert; /* authenticated UBIFS: the signer's X.509 certificate (PEM or
				   * DER): the superblock's signature must verify with it, or the
				   * mount fails; NULL: not verified */
	size_t auth_cert_len;
	const uint8_t *auth_hmac_key; /* authenticated UBIFS: the secret HMAC key (the kernel's
				       * auth_key= payload): superblock, master and journal HMACs are
				       * verified, or the mount fails; NULL: not verified */
	size_t auth_hmac_key_len;
};

/* Mount: superblock, master, index root, log + bud replay (with the kernel's
 * recovery of a torn journal tail), orphans. On failure *out is NULL and
 * err (may be NULL) holds the reason. Never writes in read-only mode. */
int ubifs_mount(struct ubi_vol_io *vol, const struct ubifs_mount_opts *opts, struct ubifs_fs **out,
		struct util_err *err);
/* Read-write: a commit (as the kernel's sync_fs before unmount), then the
 * master node is written clean. Returns the first error of that; the fs is
 * freed in any case. */
int ubifs_unmount(struct ubifs_fs *fs);
/* Read-write without the commit: the journal heads are written out and the
 * master written clean, so the next mount replays the journal (tests, and
 * what a kernel unmount leaves when its commit fails). */
int ubifs_unmount_journal(struct ubifs_fs *fs);
const char *ubifs_errmsg(const struct ubifs_fs *fs);

/* Read and check just the superblock (LEB 0) of a volume, without mounting
 * (for `ubikit info` on images that do not mount). */
int ubifs_read_sb(struct ubi_vol_io *vol, struct ubifs_sb_node *sb, struct util_err *err);

/* ---- report for `ubikit info` ---- */
struct ubifs_fs_info {
	struct ubifs_sb_node sb;   /* superblock as stored */
	struct ubifs_mst_node mst; /* the master node in use (as stored) */
	uint32_t mst_lnum, mst_offs; /* where it was found */
	int mst_recovered;         /* master had to be recovered (§10.3) */
	/* derived geometry (after in-memory auto-resize) */
	uint32_t leb_cnt;          /* in use (may exceed sb.leb_cnt: auto-resize) */
	uint32_t vol_leb_cnt;      /* LEBs of the volume */
	uint32_t min_io_size, max_write_size, leb_size;
	uint32_t log_first, log_last, lpt_first, lpt_last, orph_first, orph_last, main_first, main_lebs;
	/* mount state */
	int need_recovery;         /* master DIRTY: unclean unmount */
	uint64_t max_sqnum;        /* after replay */
	uint64_t highest_inum;     /* after replay */
	uint32_t log_lebs_used;    /* log LEBs replayed */
	uint32_t log_wraps;        /* the replayed log went on from its last LEB to its first */
	uint32_t bud_rerefs;       /* reference nodes to a bud already referred to (skipped) */
	uint32_t buds;             /* buds replayed */
	uint64_t replayed_nodes;   /* journal nodes applied */
	uint32_t lhead_lnum, lhead_offs; /* log head after replay */
	uint32_t orphans_killed;
	uint32_t recovered_lebs;   /* buds/log LEBs whose torn tail was cut */
	uint32_t log_consolidated; /* read-write mount found the log full and consolidated it */
	uint32_t rcvry_gc_head;    /* recovery GC'd a LEB into the GC head (no empty LEB was left) */
	/* authentication: master checked against the superblock's hash; master
	 * carries an HMAC (not checked); index/leaf node hashes checked so far */
	int auth_mst_ok, auth_mst_hmac, auth_sig_ok;
	/* with the HMAC key: superblock / master HMAC verified, journal
	 * authentication nodes verified, nodes after the last one dropped */
	int auth_key, auth_sb_hmac_ok, auth_mst_hmac_ok;
	uint32_t auth_journal_hmacs, auth_dropped;
	uint64_t auth_checked;
	/* TNC cache */
	size_t tnc_cache_bytes;  /* the limit on clean cached index nodes */
	size_t tnc_cached_bytes; /* all index nodes in memory now (dirty ones are pinned) */
	size_t tnc_clean_bytes;  /* the evictable part of it */
	size_t tnc_peak_bytes;
	uint64_t tnc_loads, tnc_evictions;
};
int ubifs_get_info(const struct ubifs_fs *fs, struct ubifs_fs_info *out);

/* ---- inodes ---- */
struct ubifs_inode {
	uint64_t inum;
	uint64_t creat_sqnum, size;
	int64_t atime_sec, ctime_sec, mtime_sec;
	uint32_t atime_nsec, ctime_nsec, mtime_nsec;
	uint32_t nlink, uid, gid, mode, flags;
	uint32_t xattr_cnt, xattr_size, xattr_names;
	uint16_t compr_type;
	uint32_t rdev_major, rdev_minor; /* block/char devices */
	uint32_t data_len;
	uint8_t data[UBIFS_MAX_INO_DATA]; /* symlink target, device number, xattr value */
};
/* Read and validate (kernel iget rules) inode inum. -ENOENT if absent. */
int ubifs_read_inode(struct ubifs_fs *fs, uint64_t inum, struct ubifs_inode *ino);

/* Look a name up in directory dir. -ENOENT if absent. type = UBIFS_ITYPE_*. */
int ubifs_lookup(struct ubifs_fs *fs, uint64_t dir, const char *name, size_t nlen, uint64_t *inum, uint8_t *type);

struct ubifs_dirent {
	uint64_t inum;
	uint8_t type; /* UBIFS_ITYPE_* */
	uint16_t nlen;
	char name[UBIFS_MAX_NLEN + 1]; /* NUL-terminated */
	uint32_t hash, cookie;
	uint64_t pos; /* readdir position of this entry (never 0) */
};
/* The first entry of dir after position pos (0 = from the start), in the
 * kernel's order (by key: name hash; colliding hashes in index order).
 * Returns 1 (ent filled), 0 (end), <0 error. */
int ubifs_readdir(struct ubifs_fs *fs, uint64_t dir, uint64_t pos, struct ubifs_dirent *ent);

/* A symlink's target into out (cap bytes, NUL-terminated): as stored, or
 * for an encrypted symlink decrypted (key given) or as the kernel's no-key name. */
int ubifs_crypt_symlink(struct ubifs_fs *fs, const struct ubifs_inode *ino, char *out, size_t cap, size_t *olen);

/* Read file data (holes read as zeros; nothing beyond size). Returns bytes. */
ssize_t ubifs_read_data(struct ubifs_fs *fs, const struct ubifs_inode *ino, void *buf, size_t len, uint64_t off);
/* Like lseek(SEEK_DATA): the first offset >= off (and < size) inside a block
 * that has a data node; everything before it from off is a hole. 0, or
 * -ENXIO when only holes are left, or another -errno. Cost: one index
 * search, whatever the size of the hole. */
int ubifs_next_data(struct ubifs_fs *fs, const struct ubifs_inode *ino, uint64_t off, uint64_t *data_off);

/* Like listxattr(2)/getxattr(2) on inode inum (size 0 = return size needed). */
ssize_t ubifs_listxattr(struct ubifs_fs *fs, uint64_t inum, char *buf, size_t size);
ssize_t ubifs_getxattr(struct ubifs_fs *fs, uint64_t inum, const char *name, void *buf, size_t size);

/* The kernel's statfs: blocks = c->block_cnt, blocks_free from
 * ubifs_get_free_space (budget.c), blocks_avail without the reserved pool. */
struct ubifs_statfs {
	uint64_t block_size, blocks, blocks_free;
	uint64_t files, name_max;
	uint64_t blocks_avail;
};
int ubifs_statfs(struct ubifs_fs *fs, struct ubifs_statfs *st);

/* ---- changes (read-write mounts) ----
 * The kernel's inode operations (fs/ubifs/dir.c, file.c, xattr.c) with its
 * accounting: directory sizes (UBIFS_INO_NODE_SZ + the aligned size of each
 * entry), link counts, xattr counts/sizes/names, times (truncated to the
 * superblock's time granularity). Each change is one journal write; it
 * reaches the flash with ubifs_sync/ubifs_fsync or when its write-buffer
 * fills. Read-only mounts answer -EROFS. Names are 1..255 bytes, no '/'
 * checks here (the fs layer resolves paths). */
#define UBIFS_RENAME_NOREPLACE 1u /* Linux RENAME_* values */
#define UBIFS_RENAME_EXCHANGE 2u
#define UBIFS_RENAME_WHITEOUT 4u
#define UBIFS_XATTR_CREATE 1
#define UBIFS_XATTR_REPLACE 2

/* Regular files, directories, devices, fifos and sockets by mode (rdev for
 * devices). *inum (may be NULL) gets the new inode number. */
int ubifs_mknod(struct ubifs_fs *fs, uint64_t dir, const char *name, size_t nlen, uint32_t mode, uint32_t rdev_major,
		uint32_t rdev_minor, uint32_t uid, uint32_t gid, uint64_t *inum);
int ubifs_symlink(struct ubifs_fs *fs, uint64_t dir, const char *name, size_t nlen, const char *target,
		  size_t tlen, uint32_t uid, uint32_t gid, uint64_t *inum);
int ubifs_link(struct ubifs_fs *fs, uint64_t inum, uint64_t dir, const char *name, size_t nlen);
/* Not for directories (-EISDIR); the last link removes the inode. */
int ubifs_unlink(struct ubifs_fs *fs, uint64_t dir, const char *name, size_t nlen);
int ubifs_rmdir(struct ubifs_fs *fs, uint64_t dir, const char *name, size_t nlen);
int ubifs_rename(struct ubifs_fs *fs, uint64_t old_dir, const char *old_name, size_t old_nlen, uint64_t new_dir,
		 const char *new_name, size_t new_nlen, unsigned flags);
/* Write len bytes at off (extends the file; holes stay holes) into the
 * write-back cache (ubifs_wcache.h), each block budgeted first. Returns
 * the bytes taken: len, fewer when the file system filled up part way,
 * -ENOSPC when nothing fitted. */
ssize_t ubifs_write_data(struct ubifs_fs *fs, uint64_t inum, const void *buf, size_t len, uint64_t off);
/* Set the size (shrink cuts blocks, grow leaves a hole). */
int ubifs_truncate(struct ubifs_fs *fs, uint64_t inum, uint64_t size);
#define UBIFS_SET_MODE 1u
#define UBIFS_SET_UID 2u
#define UBIFS_SET_GID 4u
#define UBIFS_SET_ATIME 8u
#define UBIFS_SET_MTIME 16u
#define UBIFS_SET_CTIME 32u /* ctime is set to now by any change; this sets it explicitly */
struct ubifs_setattr {
	unsigned valid;
	uint32_t mode, uid, gid; /* mode: permission bits only (the type stays) */
	int64_t atime_sec, mtime_sec, ctime_sec;
	uint32_t atime_nsec, mtime_nsec, ctime_nsec;
};
int ubifs_setattr(struct ubifs_fs *fs, uint64_t inum, const struct ubifs_setattr *a);
int ubifs_setxattr(struct ubifs_fs *fs, uint64_t inum, const char *name, const void *value, size_t size, int flags);
int ubifs_removexattr(struct ubifs_fs *fs, uint64_t inum, const char *name);
/* sync/syncfs: a commit, as the kernel's ubifs_sync_fs. */
int ubifs_sync(struct ubifs_fs *fs);
/* Write out the heads holding nodes of this inode (fsync). */
int ubifs_fsync(struct ubifs_fs *fs, uint64_t inum);
/* An inode opened / closed (the VFS's reference): an inode that loses its
 * last link while open lives on as an orphan until its last close (or the
 * unmount). No-ops on read-only mounts. */
int ubifs_open_ref(struct ubifs_fs *fs, uint64_t inum);
int ubifs_close_ref(struct ubifs_fs *fs, uint64_t inum);

/* Consistency check as strict as the kernel's self-checks (index, leaves,
 * link counts, sizes, xattr accounting, orphans, then the LPT against the
 * flash). 0, or -EUCLEAN with the place and the expectation in
 * ubifs_errmsg(). Mounted file systems, read-only or read-write. */
int ubifs_check(struct ubifs_fs *fs);
/* The same check, every problem to cb (one sentence, its LEB:offset and
 * inode, -1/-1/0 when not known; a negative return stops the check with
 * that error); goes on past each problem where it can. Returns 0 when the
 * check ran (*problems = how many, may be NULL), negative errno when it
 * could not (-ENOMEM, a failed journal sync). */
typedef int (*ubifs_check_cb)(void *ctx, const char *msg, int64_t lnum, int64_t offs, uint64_t inum);
int ubifs_check_report(struct ubifs_fs *fs, ubifs_check_cb cb, void *ctx, unsigned long *problems);
/* fsck's read-back of every main-area LEB in use (ubifs_fsck_scan.c):
 * node headers and CRCs, erased space; problems to cb; *lebs += LEBs read. */
int ubifs_fsck_scan(struct ubifs_fs *fs, ubifs_check_cb cb, void *ctx, unsigned long *problems, uint64_t *lebs);
/* fsck's in-place repair of a read-write mount (ubifs_fsck_fix.c): what the
 * index can mend without a rebuild (xattr inodes no entry names), each fix
 * to cb (with its inode), *fixed = how many; a commit when anything
 * changed. dry_run: report only (any mount). */
int ubifs_fsck_fix(struct ubifs_fs *fs, int dry_run, ubifs_check_cb cb, void *ctx, unsigned long *fixed);

/* One step of background garbage collection (ubifs_gc.c): a commit when
 * the journal asks for one, else one LEB with at least half of it dirty is
 * collected. 1: did work, 0: nothing worth doing, <0: error (-EROFS on a
 * read-only mount). */
int ubifs_gc_step(struct ubifs_fs *fs);

#endif
