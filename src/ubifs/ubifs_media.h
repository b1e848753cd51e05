/* ubifs_media — the UBIFS on-flash format: constants, keys and name hashes,
 * the common-header check every node read goes through, and unpacking of
 * each node type into plain C structs (never cast structs onto flash bytes).
 * Format: shared spec UBIFS-FORMAT.md §3-§6. Packing for the write path
 * (ubifs_*_pack) writes every byte of a node, unused fields zeroed as the
 * kernel zeroes them; the common header's sqnum and CRC are set last by
 * ubifs_node_finish. */
#ifndef UBIKIT_UBIFS_MEDIA_H
#define UBIKIT_UBIFS_MEDIA_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define UBIFS_NODE_MAGIC 0x06101831u
#define UBIFS_CH_SZ 24
#define UBIFS_PADDING_BYTE 0xCE
#define UBIFS_BLOCK_SIZE 4096
#define UBIFS_BLOCK_SHIFT 12
#define UBIFS_MAX_NLEN 255
#define UBIFS_MAX_INO_DATA 4096
#define UBIFS_SQNUM_WATERMARK 0xFFFFFFFFFF000000ull
#define UBIFS_MAX_INUM 0xFFFFFFFFull
#define UBIFS_INUM_WATERMARK 0xFFFFFF00u
#define UBIFS_MAX_LEVELS 512
#define UBIFS_MIN_LEB_SZ 15360
#define UBIFS_MIN_LEB_CNT 17 /* SB(1)+MST(2)+LOG(2)+LPT(2)+ORPH(1)+JHEADS(3)+MIN_MAIN(6) */
#define UBIFS_MIN_MAIN_LEBS 9 /* kernel: UBIFS_MIN_MAIN_LEBS after resize checks */
#define UBIFS_MIN_FANOUT 3
#define UBIFS_MAX_FANOUT_SANITY 65536 /* our own sanity cap; kernel bound: fits a LEB */
#define UBIFS_FORMAT_VERSION 5
#define UBIFS_RO_COMPAT_VERSION 0
#define UBIFS_MAX_INODE_SZ ((uint64_t)UBIFS_BLOCK_SIZE << 29) /* 2 TiB */
#define UBIFS_XATTR_LIST_MAX 65536
#define UBIFS_NONDATA_JHEADS 2
#define UBIFS_GC_HEAD 0
#define UBIFS_BASE_HEAD 1
#define UBIFS_DATA_HEAD 2

/* fixed LEB numbers */
#define UBIFS_ROOT_INO_NUM 1
#define UBIFS_FIRST_INO 64
#define UBIFS_SB_LNUM 0
#define UBIFS_MST_LNUM 1
#define UBIFS_LOG_LNUM 3

/* node sizes */
#define UBIFS_INO_NODE_SZ 160
#define UBIFS_DATA_NODE_SZ 48
#define UBIFS_DENT_NODE_SZ 56
#define UBIFS_TRUN_NODE_SZ 56
#define UBIFS_PAD_NODE_SZ 28
#define UBIFS_SB_NODE_SZ 4096
#define UBIFS_MST_NODE_SZ 512
#define UBIFS_REF_NODE_SZ 64
#define UBIFS_IDX_NODE_SZ 28
#define UBIFS_BRANCH_SZ 20
#define UBIFS_MAX_HASH_LEN 64 /* authentication: hash and HMAC fields in the superblock and master node */
#define UBIFS_MAX_HMAC_LEN 64
#define UBIFS_CS_NODE_SZ 32
#define UBIFS_ORPH_NODE_SZ 32
#define UBIFS_MAX_NODE_SZ (UBIFS_INO_NODE_SZ + UBIFS_MAX_INO_DATA)

enum ubifs_node_type {
	UBIFS_INO_NODE = 0,
	UBIFS_DATA_NODE = 1,
	UBIFS_DENT_NODE = 2,
	UBIFS_XENT_NODE = 3,
	UBIFS_TRUN_NODE = 4,
	UBIFS_PAD_NODE = 5,
	UBIFS_SB_NODE = 6,
	UBIFS_MST_NODE = 7,
	UBIFS_REF_NODE = 8,
	UBIFS_IDX_NODE = 9,
	UBIFS_CS_NODE = 10,
	UBIFS_ORPH_NODE = 11,
	UBIFS_AUTH_NODE = 12,
	UBIFS_SIG_NODE = 13,
	UBIFS_NODE_TYPES_CNT = 14,
};

enum ubifs_group { UBIFS_NO_NODE_GROUP = 0, UBIFS_IN_NODE_GROUP = 1, UBIFS_LAST_OF_NODE_GROUP = 2 };

enum ubifs_key_type {
	UBIFS_INO_KEY = 0,
	UBIFS_DATA_KEY = 1,
	UBIFS_DENT_KEY = 2,
	UBIFS_XENT_KEY = 3,
	UBIFS_TRUN_KEY = 4, /* in memory only (replay) */
	UBIFS_INVALID_KEY = 5,
};

enum ubifs_compr { UBIFS_COMPR_NONE = 0, UBIFS_COMPR_LZO = 1, UBIFS_COMPR_ZLIB = 2, UBIFS_COMPR_ZSTD = 3, UBIFS_COMPR_TYPES_CNT = 4 };

enum ubifs_itype {
	UBIFS_ITYPE_REG = 0,
	UBIFS_ITYPE_DIR = 1,
	UBIFS_ITYPE_LNK = 2,
	UBIFS_ITYPE_BLK = 3,
	UBIFS_ITYPE_CHR = 4,
	UBIFS_ITYPE_FIFO = 5,
	UBIFS_ITYPE_SOCK = 6,
	UBIFS_ITYPES_CNT = 7,
};

/* superblock flags */
#define UBIFS_FLG_BIGLPT 0x02
#define UBIFS_FLG_SPACE_FIXUP 0x04
#define UBIFS_FLG_DOUBLE_HASH 0x08
#define UBIFS_FLG_ENCRYPTION 0x10
#define UBIFS_FLG_AUTHENTICATION 0x20
#define UBIFS_FLG_MASK 0x3E

/* master flags */
#define UBIFS_MST_DIRTY 0x1
#define UBIFS_MST_NO_ORPHS 0x2
#define UBIFS_MST_RCVRY 0x4

/* inode flags */
#define UBIFS_COMPR_FL 0x01
#define UBIFS_SYNC_FL 0x02
#define UBIFS_IMMUTABLE_FL 0x04
#define UBIFS_APPEND_FL 0x08
#define UBIFS_DIRSYNC_FL 0x10
#define UBIFS_XATTR_FL 0x20
#define UBIFS_CRYPT_FL 0x40

/* key hash functions (superblock key_hash) */
#define UBIFS_KEY_HASH_R5 0
#define UBIFS_KEY_HASH_TEST 1
#define UBIFS_SIMPLE_KEY_FMT 0

#define UBIFS_S_KEY_BLOCK_BITS 29
#define UBIFS_S_KEY_BLOCK_MASK 0x1FFFFFFFu
#define UBIFS_S_KEY_HASH_MASK 0x1FFFFFFFu

static inline uint32_t ubifs_align8(uint32_t x)
{
	return (x + 7u) & ~7u;
}

/* ---- keys ---- */

/* An 8-byte "simple" key, as two 32-bit words; ordered by (inum, word1). */
struct ubifs_key {
	uint32_t inum;
	uint32_t w1; /* type << 29 | value */
};

static inline struct ubifs_key ubifs_key_make(uint32_t inum, unsigned type, uint32_t value)
{
	struct ubifs_key k = {inum, ((uint32_t)type << UBIFS_S_KEY_BLOCK_BITS) | (value & UBIFS_S_KEY_BLOCK_MASK)};
	return k;
}
static inline unsigned ubifs_key_type(const struct ubifs_key *k)
{
	return k->w1 >> UBIFS_S_KEY_BLOCK_BITS;
}
static inline uint32_t ubifs_key_value(const struct ubifs_key *k) /* block number or hash */
{
	return k->w1 & UBIFS_S_KEY_BLOCK_MASK;
}
static inline int ubifs_key_cmp(const struct ubifs_key *a, const struct ubifs_key *b)
{
	if (a->inum != b->inum)
		return a->inum < b->inum ? -1 : 1;
	if (a->w1 != b->w1)
		return a->w1 < b->w1 ? -1 : 1;
	return 0;
}
static inline bool ubifs_key_is_hash(const struct ubifs_key *k)
{
	unsigned t = ubifs_key_type(k);
	return t == UBIFS_DENT_KEY || t == UBIFS_XENT_KEY;
}
/* 8 key bytes as stored (index branches, first 8 of a node's 16-byte key) */
struct ubifs_key ubifs_key_read(const uint8_t *p);
void ubifs_key_write(uint8_t *p, const struct ubifs_key *k);
/* "(65, DATA, 3)" style text into buf; returns buf. */
const char *ubifs_key_str(const struct ubifs_key *k, char *buf, size_t size);

/* Name hashes (spec §5.1). key_hash selects R5 or test. */
uint32_t ubifs_hash_r5(const char *name, size_t len);
uint32_t ubifs_hash_test(const char *name, size_t len);
uint32_t ubifs_name_hash(unsigned key_hash, const char *name, size_t len);

const char *ubifs_node_type_name(unsigned type);
const char *ubifs_compr_name(unsigned compr);

/* ---- common header ---- */
struct ubifs_ch {
	uint32_t magic, crc;
	uint64_t sqnum;
	uint32_t len;
	uint8_t node_type, group_type;
};
void ubifs_ch_unpack(const uint8_t *p, struct ubifs_ch *ch);
uint32_t ubifs_node_crc(const uint8_t *node, uint32_t len); /* CRC of bytes 8..len-1 */

/* Length rules per node type (spec §3); fanout sets the index node max. */
struct ubifs_len_range {
	uint32_t min, max; /* equal when the length is fixed */
};
void ubifs_node_len_range(unsigned type, uint32_t fanout, uint32_t leb_size, struct ubifs_len_range *r);
/* index node lengths when each branch carries a hash of hash_len bytes (authenticated) */
void ubifs_idx_len_range(uint32_t fanout, uint32_t hash_len, uint32_t leb_size, struct ubifs_len_range *r);
/* Length of the superblock's hash_algo (Linux hash_info.h numbering: sha1,
 * sha224, sha256, sha384, sha512), 0 for one not supported; and its name. */
uint32_t ubifs_auth_hash_len(unsigned hash_algo);
const char *ubifs_auth_hash_name(unsigned hash_algo);

enum ubifs_chk {
	UBIFS_CHK_OK = 0,
	UBIFS_CHK_BAD_MAGIC = 1,
	UBIFS_CHK_BAD_TYPE = 2,
	UBIFS_CHK_BAD_LEN = 3,
	UBIFS_CHK_BAD_CRC = 4, /* header sane, only CRC wrong */
};
/* The kernel's node check: magic, type, length rule, offs + len <= leb_size,
 * avail >= len, CRC. */
enum ubifs_chk ubifs_check_node(const uint8_t *buf, size_t avail, uint32_t offs, uint32_t leb_size, uint32_t fanout);
const char *ubifs_chk_str(enum ubifs_chk c);

/* ---- node bodies ---- */
struct ubifs_sb_node {
	uint8_t key_hash, key_fmt;
	uint32_t flags, min_io_size, leb_size, leb_cnt, max_leb_cnt;
	uint64_t max_bud_bytes;
	uint32_t log_lebs, lpt_lebs, orph_lebs, jhead_cnt, fanout, lsave_cnt, fmt_version;
	uint16_t default_compr;
	uint32_t rp_uid, rp_gid;
	uint64_t rp_size;
	uint32_t time_gran;
	uint8_t uuid[16];
	uint32_t ro_compat_version;
	uint16_t hash_algo;
	/* authentication (UBIFS_FLG_AUTHENTICATION): HMAC of this node, HMAC of
	 * the well-known message "UBIFS", hash of the master node (mkfs images) */
	uint8_t hmac[UBIFS_MAX_HMAC_LEN], hmac_wkm[UBIFS_MAX_HMAC_LEN], hash_mst[UBIFS_MAX_HASH_LEN];
};
void ubifs_sb_unpack(const uint8_t *node, struct ubifs_sb_node *sb);

struct ubifs_mst_node {
	uint64_t sqnum; /* from the common header */
	/* authentication: hash of the root index node, of the LPT, HMAC of this node */
	uint8_t hash_root_idx[UBIFS_MAX_HASH_LEN], hash_lpt[UBIFS_MAX_HASH_LEN], hmac[UBIFS_MAX_HMAC_LEN];
	uint64_t highest_inum, cmt_no;
	uint32_t flags, log_lnum, root_lnum, root_offs, root_len, gc_lnum, ihead_lnum, ihead_offs;
	uint64_t index_size, total_free, total_dirty, total_used, total_dead, total_dark;
	uint32_t lpt_lnum, lpt_offs, nhead_lnum, nhead_offs, ltab_lnum, ltab_offs, lsave_lnum, lsave_offs, lscan_lnum;
	uint32_t empty_lebs, idx_lebs, leb_cnt;
};
void ubifs_mst_unpack(const uint8_t *node, struct ubifs_mst_node *m);

struct ubifs_ino_node {
	struct ubifs_key key;
	uint64_t creat_sqnum, size;
	int64_t atime_sec, ctime_sec, mtime_sec;
	uint32_t atime_nsec, ctime_nsec, mtime_nsec;
	uint32_t nlink, uid, gid, mode, flags, data_len, xattr_cnt, xattr_size, xattr_names;
	uint16_t compr_type;
	const uint8_t *data; /* points into the node buffer */
};
void ubifs_ino_unpack(const uint8_t *node, struct ubifs_ino_node *ino);

struct ubifs_dent_node {
	struct ubifs_key key;
	uint64_t inum;
	uint8_t type;
	uint16_t nlen;
	uint32_t cookie;
	const char *name; /* points into the node buffer, nlen bytes */
};
void ubifs_dent_unpack(const uint8_t *node, struct ubifs_dent_node *d);
/* Kernel's ubifs_validate_entry: NULL if ok, else a reason. */
const char *ubifs_dent_check(const uint8_t *node, uint32_t len);

struct ubifs_data_node {
	struct ubifs_key key;
	uint32_t size;
	uint16_t compr_type, compr_size;
	const uint8_t *data;
	uint32_t data_len; /* stored bytes = len - 48 */
};
void ubifs_data_unpack(const uint8_t *node, uint32_t len, struct ubifs_data_node *d);

struct ubifs_trun_node {
	uint32_t inum;
	uint64_t old_size, new_size;
};
void ubifs_trun_unpack(const uint8_t *node, struct ubifs_trun_node *t);

struct ubifs_ref_node {
	uint32_t lnum, offs, jhead;
};
void ubifs_ref_unpack(const uint8_t *node, struct ubifs_ref_node *r);

static inline uint64_t ubifs_cs_cmt_no(const uint8_t *node)
{
	const uint8_t *p = node + 24;
	return (uint64_t)p[0] | ((uint64_t)p[1] << 8) | ((uint64_t)p[2] << 16) | ((uint64_t)p[3] << 24) |
	       ((uint64_t)p[4] << 32) | ((uint64_t)p[5] << 40) | ((uint64_t)p[6] << 48) | ((uint64_t)p[7] << 56);
}

struct ubifs_idx_node {
	uint16_t child_cnt, level;
	uint32_t branch_sz;      /* UBIFS_BRANCH_SZ, + the hash length when authenticated */
	const uint8_t *branches; /* child_cnt × branch_sz bytes */
};
struct ubifs_branch {
	uint32_t lnum, offs, len;
	struct ubifs_key key;
	const uint8_t *hash; /* the child's hash (authenticated file systems), else NULL */
};
void ubifs_idx_unpack(const uint8_t *node, struct ubifs_idx_node *idx);
/* the same for an authenticated file system: each branch ends with a hash of hash_len bytes */
void ubifs_idx_unpack_hash(const uint8_t *node, uint32_t hash_len, struct ubifs_idx_node *idx);
void ubifs_idx_branch(const struct ubifs_idx_node *idx, unsigned i, struct ubifs_branch *br);

/* orphan node: cmt_no (bit 63 = last of commit) and (len-32)/8 inode numbers */
static inline uint32_t ubifs_orph_count(uint32_t len)
{
	return (len - UBIFS_ORPH_NODE_SZ) / 8;
}

/* ---- packing (write path) ----
 * Each ubifs_*_pack fills a node body at `node` (bytes 24..) and the header
 * fields magic, len, node_type, group_type (sqnum and CRC stay zero);
 * ubifs_node_finish(node, len, sqnum) then stores sqnum and the CRC over
 * bytes 8..len-1. Nodes are laid out 8-byte aligned one after the other. */
void ubifs_ch_pack(uint8_t *node, unsigned type, uint32_t len, unsigned group);
void ubifs_node_finish(uint8_t *node, uint32_t len, uint64_t sqnum);
/* The kernel's padding of `pad` bytes at buf: a padding node (sqnum 0,
 * pad_len = the bytes after it, which are zeroed) when pad >= 28, else
 * 0xCE padding bytes. */
void ubifs_pad_pack(uint8_t *buf, uint32_t pad);
/* attach: bytes of data to store (0 for a deletion inode, whose data_len
 * field still says ino->data_len, as the kernel writes it) */
void ubifs_ino_pack(uint8_t *node, const struct ubifs_ino_node *ino, const void *data, uint32_t attach,
		    unsigned group);
/* dent/xent: key type picks DENT or XENT; length 56 + nlen + 1 (NUL). */
void ubifs_dent_pack(uint8_t *node, const struct ubifs_key *key, uint64_t inum, uint8_t type, const char *name,
		     uint16_t nlen, uint32_t cookie, unsigned group);
void ubifs_data_pack(uint8_t *node, const struct ubifs_key *key, uint32_t size, uint16_t compr_type,
		     const void *data, uint32_t data_len, unsigned group);
void ubifs_trun_pack(uint8_t *node, uint32_t inum, uint64_t old_size, uint64_t new_size, unsigned group);
void ubifs_ref_pack(uint8_t *node, uint32_t lnum, uint32_t offs, uint32_t jhead);
void ubifs_cs_pack(uint8_t *node, uint64_t cmt_no);
/* index node header; then ubifs_idx_branch_pack for each branch */
void ubifs_idx_pack(uint8_t *node, uint16_t child_cnt, uint16_t level);
void ubifs_idx_branch_pack(uint8_t *node, unsigned i, const struct ubifs_branch *br);
static inline uint32_t ubifs_idx_node_len(uint32_t child_cnt)
{
	return UBIFS_IDX_NODE_SZ + child_cnt * UBIFS_BRANCH_SZ;
}
void ubifs_mst_pack(uint8_t *node, const struct ubifs_mst_node *m);
/* orphan node with cnt inode numbers; last: bit 63 of cmt_no */
void ubifs_orph_pack(uint8_t *node, uint64_t cmt_no, int last, const uint64_t *inos, uint32_t cnt);
/* Linux new_encode_dev, as the kernel stores a device number (4 bytes) */
uint32_t ubifs_encode_dev(uint32_t major, uint32_t minor);

/* device number as the kernel stores it in inode data (4 or 8 bytes) */
void ubifs_decode_dev(const uint8_t *data, uint32_t data_len, uint32_t *major, uint32_t *minor);

#endif
