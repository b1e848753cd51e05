/* libubikit — the POSIX-like file-system API over UBIFS (the fs layer).
 *
 * One struct ubikit_fs per mounted file system; no global state. Every
 * function returns 0 / a count on success and a negative errno on failure;
 * ubikit_errmsg() then tells the place and cause in words.
 *
 * Two families: path-based calls for programs, inode-based calls (_ino) for
 * front ends that keep inode numbers themselves (FUSE low-level API). */
#ifndef UBIKIT_UBIKIT_H
#define UBIKIT_UBIKIT_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ubi_vol_io; /* src/ubi/ubi_vol_io.h: one UBI volume (or a bare UBIFS image) */
struct ubikit_fs;
struct ubikit_file;
struct ubikit_dir;

#define UBIKIT_ROOT_INO 1

enum {
	UBIKIT_MOUNT_RDONLY = 1 << 0, /* never write to the volume */
	/* new data written with this compressor instead of the superblock's
	 * default (the kernel's compr= mount option); data that does not
	 * shrink is stored uncompressed either way */
	UBIKIT_MOUNT_COMPR_NONE = 1 << 8,
	UBIKIT_MOUNT_COMPR_LZO = 2 << 8,
	UBIKIT_MOUNT_COMPR_ZLIB = 3 << 8,
	UBIKIT_MOUNT_COMPR_ZSTD = 4 << 8,
	UBIKIT_MOUNT_COMPR_MASK = 7 << 8,
};

struct ubikit_mount_opts {
	unsigned flags;          /* UBIKIT_MOUNT_* */
	size_t tnc_cache_bytes;  /* bound on cached index nodes; 0 = default */
	size_t dirty_bytes_max;  /* write-back: dirty file data kept in memory before it is written
				  * to the journal; 0 = default (4 MiB) */
	const uint8_t *fscrypt_key; /* fscrypt master key (64 bytes for AES-256-XTS), or NULL: names
				     * in encrypted directories are the kernel's no-key names and
				     * encrypted contents cannot be read (-ENOKEY) */
	size_t fscrypt_key_len;
	const uint8_t *auth_cert; /* authenticated UBIFS (mkfs.ubifs --auth-cert): the signer's X.509
				   * certificate, PEM or DER; the superblock's PKCS#7 signature must
				   * verify with it or the mount fails (-EKEYREJECTED). NULL: the
				   * signature is not verified (hashes still are) */
	size_t auth_cert_len;
	const uint8_t *auth_hmac_key; /* authenticated UBIFS: the secret HMAC key (the raw payload of
				       * the kernel's auth_key= logon key; not mkfs.ubifs's PEM
				       * --auth-key): the superblock's, master's and journal's HMACs
				       * are verified (-ENOKEY: the key does not fit, -EPERM: an
				       * HMAC does not match). NULL: HMACs not verified */
	size_t auth_hmac_key_len;
};

/* Authentication and encryption of a mounted file system. */
struct ubikit_security {
	int authenticated;   /* UBIFS authentication (mkfs.ubifs --auth-key, hash_name): the master
			      * node, index and leaf hashes are checked as nodes are read; the
			      * superblock's signature only with a certificate, the HMACs only
			      * with the HMAC key */
	char hash_name[16];  /* its hash algorithm ("sha256"), "" if none */
	int auth_master_hash_ok; /* the master node matched the superblock's hash (mkfs.ubifs images) */
	int auth_signature_ok;   /* the superblock's signature verified with ubikit_mount_opts.auth_cert:
				  * with the hashes, the committed file system is authenticated */
	int auth_master_hmac;    /* the master node is protected by an HMAC instead (checked only
				  * with ubikit_mount_opts.auth_hmac_key) */
	int auth_hmac_key;       /* an HMAC key was given (and fits: the mount fails otherwise) */
	int auth_sb_hmac_ok;     /* the superblock's HMAC verified with the key (kernel-written) */
	int auth_master_hmac_ok; /* the master node's HMAC verified with the key */
	uint32_t auth_journal_hmacs; /* journal authentication nodes verified with the key */
	uint32_t auth_nodes_dropped; /* journal nodes after the last authentication node of the last
				      * bud of a head, not replayed (as the kernel) */
	uint64_t auth_nodes_checked; /* index and leaf nodes whose hash was checked so far */
	int encrypted;       /* fscrypt feature flag in the superblock */
	int fscrypt_key;     /* a fscrypt master key was given */
};
int ubikit_security(struct ubikit_fs *fs, struct ubikit_security *out);

struct ubikit_stat {
	uint64_t ino;
	uint32_t mode;  /* S_IF* | permission bits */
	uint32_t nlink;
	uint32_t uid, gid;
	uint64_t size;
	uint64_t blocks; /* 512-byte units */
	uint32_t rdev_major, rdev_minor;
	int64_t atime_sec, mtime_sec, ctime_sec;
	uint32_t atime_nsec, mtime_nsec, ctime_nsec;
	uint32_t flags;  /* UBIFS inode flags */
};

struct ubikit_dirent {
	uint64_t ino;
	unsigned char type; /* DT_* */
	char name[256];     /* a name holding a NUL byte (a damaged image) comes back empty;
			     * callers must also expect "", ".", ".." and '/' in names */
	uint64_t cookie;    /* resume position for ubikit_readdir_ino */
};

struct ubikit_statfs {
	uint64_t block_size, blocks, blocks_free, blocks_avail;
	uint64_t files, name_max;
};

int ubikit_mount(struct ubi_vol_io *vol, const struct ubikit_mount_opts *opts, struct ubikit_fs **out);
/* Like ubikit_mount; on failure also copies the reason (NUL-terminated)
 * into errbuf (errlen bytes; errbuf may be NULL). */
int ubikit_mount_ex(struct ubi_vol_io *vol, const struct ubikit_mount_opts *opts, struct ubikit_fs **out,
		    char *errbuf, size_t errlen);
int ubikit_unmount(struct ubikit_fs *fs);
const char *ubikit_errmsg(const struct ubikit_fs *fs);
int ubikit_statfs(struct ubikit_fs *fs, struct ubikit_statfs *st);

/* ---- path-based ---- */
int ubikit_stat(struct ubikit_fs *fs, const char *path, struct ubikit_stat *st);  /* follows symlinks */
int ubikit_lstat(struct ubikit_fs *fs, const char *path, struct ubikit_stat *st);
int ubikit_open(struct ubikit_fs *fs, const char *path, int flags, uint32_t mode, struct ubikit_file **out);
ssize_t ubikit_read(struct ubikit_file *f, void *buf, size_t len);
ssize_t ubikit_pread(struct ubikit_file *f, void *buf, size_t len, uint64_t off);
int ubikit_close(struct ubikit_file *f);
int ubikit_opendir(struct ubikit_fs *fs, const char *path, struct ubikit_dir **out);
/* 1 = entry filled, 0 = end, <0 error. "." and ".." are not returned. */
int ubikit_readdir(struct ubikit_dir *d, struct ubikit_dirent *ent);
int ubikit_closedir(struct ubikit_dir *d);
ssize_t ubikit_readlink(struct ubikit_fs *fs, const char *path, char *buf, size_t size);
/* Like listxattr(2)/getxattr(2): size 0 asks for the needed size. */
ssize_t ubikit_listxattr(struct ubikit_fs *fs, const char *path, char *buf, size_t size);
ssize_t ubikit_getxattr(struct ubikit_fs *fs, const char *path, const char *name, void *buf, size_t size);

/* ---- changes (read-write mounts; read-only ones answer -EROFS) ----
 * ubikit_open takes O_WRONLY/O_RDWR, O_CREAT (mode), O_EXCL, O_TRUNC,
 * O_APPEND. Writes are cached in memory (write-back) and reach the
 * journal at ubikit_fsync/ubikit_sync/unmount or when dirty_bytes_max is
 * reached; every call that may add data reserves its space first, so a
 * full file system answers -ENOSPC at that call (a write may then take
 * fewer bytes than asked) and never loses what it accepted. New
 * inodes belong to the process's effective uid/gid. */
ssize_t ubikit_write(struct ubikit_file *f, const void *buf, size_t len);
ssize_t ubikit_pwrite(struct ubikit_file *f, const void *buf, size_t len, uint64_t off);
int ubikit_ftruncate(struct ubikit_file *f, uint64_t size);
int ubikit_fsync(struct ubikit_file *f);
int ubikit_sync(struct ubikit_fs *fs); /* commit, as sync(2) on UBIFS */
int ubikit_truncate(struct ubikit_fs *fs, const char *path, uint64_t size);
int ubikit_mkdir(struct ubikit_fs *fs, const char *path, uint32_t mode);
int ubikit_mknod(struct ubikit_fs *fs, const char *path, uint32_t mode, uint32_t major, uint32_t minor);
int ubikit_symlink(struct ubikit_fs *fs, const char *target, const char *linkpath);
int ubikit_link(struct ubikit_fs *fs, const char *oldpath, const char *newpath);
int ubikit_unlink(struct ubikit_fs *fs, const char *path);
int ubikit_rmdir(struct ubikit_fs *fs, const char *path);
#define UBIKIT_RENAME_NOREPLACE 1u
#define UBIKIT_RENAME_EXCHANGE 2u
#define UBIKIT_RENAME_WHITEOUT 4u
int ubikit_rename(struct ubikit_fs *fs, const char *oldpath, const char *newpath, unsigned flags);
int ubikit_chmod(struct ubikit_fs *fs, const char *path, uint32_t mode);
int ubikit_chown(struct ubikit_fs *fs, const char *path, uint32_t uid, uint32_t gid); /* (uint32_t)-1: keep */
/* times in seconds + nanoseconds; a NULL pointer leaves that time */
int ubikit_utimens(struct ubikit_fs *fs, const char *path, const int64_t *atime_sec, const uint32_t *atime_nsec,
		   const int64_t *mtime_sec, const uint32_t *mtime_nsec);
#define UBIKIT_XATTR_CREATE 1
#define UBIKIT_XATTR_REPLACE 2
int ubikit_setxattr(struct ubikit_fs *fs, const char *path, const char *name, const void *value, size_t size,
		    int flags);
int ubikit_removexattr(struct ubikit_fs *fs, const char *path, const char *name);

/* ---- inode-based ---- */
int ubikit_lookup_ino(struct ubikit_fs *fs, uint64_t parent, const char *name, uint64_t *ino);
int ubikit_stat_ino(struct ubikit_fs *fs, uint64_t ino, struct ubikit_stat *st);
ssize_t ubikit_pread_ino(struct ubikit_fs *fs, uint64_t ino, void *buf, size_t len, uint64_t off);
/* lseek(SEEK_DATA) on a file: the first offset >= off that may hold data
 * (all before it reads as zeros), or -ENXIO if only a hole is left. Lets a
 * copy skip holes without reading them. */
int ubikit_seek_data_ino(struct ubikit_fs *fs, uint64_t ino, uint64_t off, uint64_t *data_off);
/* Entries after `cookie` (0 = from the start), one at a time: 1/0/<0. */
int ubikit_readdir_ino(struct ubikit_fs *fs, uint64_t dir, uint64_t cookie, struct ubikit_dirent *ent);
ssize_t ubikit_readlink_ino(struct ubikit_fs *fs, uint64_t ino, char *buf, size_t size);
ssize_t ubikit_listxattr_ino(struct ubikit_fs *fs, uint64_t ino, char *buf, size_t size);
ssize_t ubikit_getxattr_ino(struct ubikit_fs *fs, uint64_t ino, const char *name, void *buf, size_t size);

/* ---- inode-based changes (front ends: FUSE) ----
 * As the path-based calls, on (directory inode, name) pairs; new inodes
 * get the uid/gid given (the caller's, as the front end knows it) and
 * their number in *ino (may be NULL). mode carries the type (S_IFREG,
 * S_IFDIR, S_IFCHR, S_IFBLK, S_IFIFO, S_IFSOCK). */
int ubikit_mknod_ino(struct ubikit_fs *fs, uint64_t parent, const char *name, uint32_t mode, uint32_t major,
		     uint32_t minor, uint32_t uid, uint32_t gid, uint64_t *ino);
int ubikit_symlink_ino(struct ubikit_fs *fs, uint64_t parent, const char *name, const char *target, uint32_t uid,
		       uint32_t gid, uint64_t *ino);
int ubikit_link_ino(struct ubikit_fs *fs, uint64_t ino, uint64_t newparent, const char *newname);
int ubikit_unlink_ino(struct ubikit_fs *fs, uint64_t parent, const char *name);
int ubikit_rmdir_ino(struct ubikit_fs *fs, uint64_t parent, const char *name);
int ubikit_rename_ino(struct ubikit_fs *fs, uint64_t parent, const char *name, uint64_t newparent,
		      const char *newname, unsigned flags);
ssize_t ubikit_pwrite_ino(struct ubikit_fs *fs, uint64_t ino, const void *buf, size_t len, uint64_t off);
int ubikit_truncate_ino(struct ubikit_fs *fs, uint64_t ino, uint64_t size);
#define UBIKIT_SET_MODE 1u  /* permission bits (the type stays) */
#define UBIKIT_SET_UID 2u
#define UBIKIT_SET_GID 4u
#define UBIKIT_SET_ATIME 8u
#define UBIKIT_SET_MTIME 16u
struct ubikit_setattr {
	unsigned valid; /* UBIKIT_SET_* */
	uint32_t mode, uid, gid;
	int64_t atime_sec, mtime_sec;
	uint32_t atime_nsec, mtime_nsec;
};
int ubikit_setattr_ino(struct ubikit_fs *fs, uint64_t ino, const struct ubikit_setattr *a);
int ubikit_setxattr_ino(struct ubikit_fs *fs, uint64_t ino, const char *name, const void *value, size_t size,
			int flags);
int ubikit_removexattr_ino(struct ubikit_fs *fs, uint64_t ino, const char *name);
int ubikit_fsync_ino(struct ubikit_fs *fs, uint64_t ino);
/* Is this a read-only mount? 1/0 */
int ubikit_is_read_only(const struct ubikit_fs *fs);

#ifdef __cplusplus
}
#endif
#endif
