/* ubifs_media — keys, name hashes, node checks and unpacking (see ubifs_media.h). */
#include "ubifs/ubifs_media.h"

#include <stdio.h>
#include <string.h>

#include "util/util_crc.h"
#include "util/util_endian.h"

struct ubifs_key ubifs_key_read(const uint8_t *p)
{
	struct ubifs_key k = {get_le32(p), get_le32(p + 4)};
	return k;
}

void ubifs_key_write(uint8_t *p, const struct ubifs_key *k)
{
	put_le32(p, k->inum);
	put_le32(p + 4, k->w1);
}

const char *ubifs_key_str(const struct ubifs_key *k, char *buf, size_t size)
{
	static const char *const names[] = {"INO", "DATA", "DENT", "XENT", "TRUN", "INVALID", "?6", "?7"};
	unsigned t = ubifs_key_type(k);
	if (t == UBIFS_INO_KEY)
		snprintf(buf, size, "(%u, INO)", k->inum);
	else if (t == UBIFS_DENT_KEY || t == UBIFS_XENT_KEY)
		snprintf(buf, size, "(%u, %s, 0x%08x)", k->inum, names[t], ubifs_key_value(k));
	else
		snprintf(buf, size, "(%u, %s, %u)", k->inum, names[t], ubifs_key_value(k));
	return buf;
}

static uint32_t hash_mask(uint32_t h)
{
	h &= UBIFS_S_KEY_HASH_MASK;
	if (h <= 2) /* 0..2 are reserved for ".", ".." and end of directory */
		h += 3;
	return h;
}

uint32_t ubifs_hash_r5(const char *name, size_t len)
{
	uint32_t a = 0;
	for (size_t i = 0; i < len; i++) {
		int32_t s = (int8_t)name[i]; /* bytes are signed in the reiserfs R5 hash */
		a += (uint32_t)(s * 16);
		a += (uint32_t)(s >> 4);
		a *= 11;
	}
	return hash_mask(a);
}

uint32_t ubifs_hash_test(const char *name, size_t len)
{
	uint8_t b[4] = {0, 0, 0, 0};
	memcpy(b, name, len < 4 ? len : 4);
	return hash_mask(get_le32(b));
}

uint32_t ubifs_name_hash(unsigned key_hash, const char *name, size_t len)
{
	return key_hash == UBIFS_KEY_HASH_TEST ? ubifs_hash_test(name, len) : ubifs_hash_r5(name, len);
}

const char *ubifs_node_type_name(unsigned type)
{
	static const char *const n[] = {"inode", "data", "dentry", "xattr entry", "truncation", "padding", "superblock",
					"master", "reference", "index", "commit start", "orphan", "auth", "signature"};
	return type < UBIFS_NODE_TYPES_CNT ? n[type] : "unknown";
}

const char *ubifs_compr_name(unsigned compr)
{
	static const char *const n[] = {"none", "lzo", "zlib", "zstd"};
	return compr < UBIFS_COMPR_TYPES_CNT ? n[compr] : "unknown";
}

void ubifs_ch_unpack(const uint8_t *p, struct ubifs_ch *ch)
{
	ch->magic = get_le32(p);
	ch->crc = get_le32(p + 4);
	ch->sqnum = get_le64(p + 8);
	ch->len = get_le32(p + 16);
	ch->node_type = p[20];
	ch->group_type = p[21];
}

uint32_t ubifs_node_crc(const uint8_t *node, uint32_t len)
{
	return util_crc32(UTIL_CRC32_INIT, node + 8, len - 8);
}

void ubifs_node_len_range(unsigned type, uint32_t fanout, uint32_t leb_size, struct ubifs_len_range *r)
{
	switch (type) {
	case UBIFS_INO_NODE: r->min = UBIFS_INO_NODE_SZ; r->max = UBIFS_MAX_NODE_SZ; break;
	case UBIFS_DATA_NODE: r->min = UBIFS_DATA_NODE_SZ; r->max = UBIFS_DATA_NODE_SZ + UBIFS_BLOCK_SIZE; break;
	case UBIFS_DENT_NODE:
	case UBIFS_XENT_NODE: r->min = UBIFS_DENT_NODE_SZ; r->max = UBIFS_DENT_NODE_SZ + UBIFS_MAX_NLEN + 1; break;
	case UBIFS_TRUN_NODE: r->min = r->max = UBIFS_TRUN_NODE_SZ; break;
	case UBIFS_PAD_NODE: r->min = r->max = UBIFS_PAD_NODE_SZ; break;
	case UBIFS_SB_NODE: r->min = r->max = UBIFS_SB_NODE_SZ; break;
	case UBIFS_MST_NODE: r->min = r->max = UBIFS_MST_NODE_SZ; break;
	case UBIFS_REF_NODE: r->min = r->max = UBIFS_REF_NODE_SZ; break;
	case UBIFS_IDX_NODE:
		r->min = UBIFS_IDX_NODE_SZ + UBIFS_BRANCH_SZ;
		r->max = fanout ? UBIFS_IDX_NODE_SZ + fanout * UBIFS_BRANCH_SZ : leb_size;
		break;
	case UBIFS_CS_NODE: r->min = r->max = UBIFS_CS_NODE_SZ; break;
	case UBIFS_ORPH_NODE: r->min = UBIFS_ORPH_NODE_SZ + 8; r->max = leb_size; break;
	case UBIFS_AUTH_NODE: r->min = UBIFS_CH_SZ; r->max = UBIFS_CH_SZ + 64; break;
	case UBIFS_SIG_NODE: r->min = 64; r->max = leb_size > 4096 ? leb_size - 4096 : 64; break;
	default: r->min = 1; r->max = 0; break;
	}
}

void ubifs_idx_len_range(uint32_t fanout, uint32_t hash_len, uint32_t leb_size, struct ubifs_len_range *r)
{
	r->min = UBIFS_IDX_NODE_SZ + UBIFS_BRANCH_SZ + hash_len;
	r->max = fanout ? UBIFS_IDX_NODE_SZ + fanout * (UBIFS_BRANCH_SZ + hash_len) : leb_size;
}

uint32_t ubifs_auth_hash_len(unsigned hash_algo)
{
	switch (hash_algo) {
	case 2: return 20; /* HASH_ALGO_SHA1 */
	case 4: return 32; /* HASH_ALGO_SHA256 */
	case 5: return 48; /* HASH_ALGO_SHA384 */
	case 6: return 64; /* HASH_ALGO_SHA512 */
	case 7: return 28; /* HASH_ALGO_SHA224 */
	default: return 0;
	}
}

const char *ubifs_auth_hash_name(unsigned hash_algo)
{
	switch (hash_algo) {
	case 2: return "sha1";
	case 4: return "sha256";
	case 5: return "sha384";
	case 6: return "sha512";
	case 7: return "sha224";
	default: return NULL;
	}
}

enum ubifs_chk ubifs_check_node(const uint8_t *buf, size_t avail, uint32_t offs, uint32_t leb_size, uint32_t fanout)
{
	if (avail < UBIFS_CH_SZ)
		return UBIFS_CHK_BAD_LEN;
	if (get_le32(buf) != UBIFS_NODE_MAGIC)
		return UBIFS_CHK_BAD_MAGIC;
	unsigned type = buf[20];
	if (type >= UBIFS_NODE_TYPES_CNT)
		return UBIFS_CHK_BAD_TYPE;
	uint32_t len = get_le32(buf + 16);
	if ((uint64_t)offs + len > leb_size || len > avail || len < UBIFS_CH_SZ)
		return UBIFS_CHK_BAD_LEN;
	struct ubifs_len_range r;
	ubifs_node_len_range(type, fanout, leb_size, &r);
	if (len < r.min || len > r.max)
		return UBIFS_CHK_BAD_LEN;
	if (ubifs_node_crc(buf, len) != get_le32(buf + 4))
		return UBIFS_CHK_BAD_CRC;
	return UBIFS_CHK_OK;
}

const char *ubifs_chk_str(enum ubifs_chk c)
{
	switch (c) {
	case UBIFS_CHK_OK: return "ok";
	case UBIFS_CHK_BAD_MAGIC: return "bad node magic";
	case UBIFS_CHK_BAD_TYPE: return "bad node type";
	case UBIFS_CHK_BAD_LEN: return "bad node length";
	case UBIFS_CHK_BAD_CRC: return "bad node CRC";
	}
	return "?";
}

void ubifs_sb_unpack(const uint8_t *n, struct ubifs_sb_node *sb)
{
	memset(sb, 0, sizeof(*sb));
	sb->key_hash = n[26];
	sb->key_fmt = n[27];
	sb->flags = get_le32(n + 28);
	sb->min_io_size = get_le32(n + 32);
	sb->leb_size = get_le32(n + 36);
	sb->leb_cnt = get_le32(n + 40);
	sb->max_leb_cnt = get_le32(n + 44);
	sb->max_bud_bytes = get_le64(n + 48);
	sb->log_lebs = get_le32(n + 56);
	sb->lpt_lebs = get_le32(n + 60);
	sb->orph_lebs = get_le32(n + 64);
	sb->jhead_cnt = get_le32(n + 68);
	sb->fanout = get_le32(n + 72);
	sb->lsave_cnt = get_le32(n + 76);
	sb->fmt_version = get_le32(n + 80);
	sb->default_compr = get_le16(n + 84);
	sb->rp_uid = get_le32(n + 88);
	sb->rp_gid = get_le32(n + 92);
	sb->rp_size = get_le64(n + 96);
	sb->time_gran = get_le32(n + 104);
	memcpy(sb->uuid, n + 108, 16);
	sb->ro_compat_version = get_le32(n + 124);
	memcpy(sb->hmac, n + 128, UBIFS_MAX_HMAC_LEN);
	memcpy(sb->hmac_wkm, n + 192, UBIFS_MAX_HMAC_LEN);
	memcpy(sb->hash_mst, n + 258, UBIFS_MAX_HASH_LEN);
	sb->hash_algo = get_le16(n + 256);
}

void ubifs_mst_unpack(const uint8_t *n, struct ubifs_mst_node *m)
{
	memset(m, 0, sizeof(*m));
	m->sqnum = get_le64(n + 8);
	m->highest_inum = get_le64(n + 24);
	m->cmt_no = get_le64(n + 32);
	m->flags = get_le32(n + 40);
	m->log_lnum = get_le32(n + 44);
	m->root_lnum = get_le32(n + 48);
	m->root_offs = get_le32(n + 52);
	m->root_len = get_le32(n + 56);
	m->gc_lnum = get_le32(n + 60);
	m->ihead_lnum = get_le32(n + 64);
	m->ihead_offs = get_le32(n + 68);
	m->index_size = get_le64(n + 72);
	m->total_free = get_le64(n + 80);
	m->total_dirty = get_le64(n + 88);
	m->total_used = get_le64(n + 96);
	m->total_dead = get_le64(n + 104);
	m->total_dark = get_le64(n + 112);
	m->lpt_lnum = get_le32(n + 120);
	m->lpt_offs = get_le32(n + 124);
	m->nhead_lnum = get_le32(n + 128);
	m->nhead_offs = get_le32(n + 132);
	m->ltab_lnum = get_le32(n + 136);
	m->ltab_offs = get_le32(n + 140);
	m->lsave_lnum = get_le32(n + 144);
	m->lsave_offs = get_le32(n + 148);
	m->lscan_lnum = get_le32(n + 152);
	m->empty_lebs = get_le32(n + 156);
	m->idx_lebs = get_le32(n + 160);
	m->leb_cnt = get_le32(n + 164);
	memcpy(m->hash_root_idx, n + 168, UBIFS_MAX_HASH_LEN);
	memcpy(m->hash_lpt, n + 232, UBIFS_MAX_HASH_LEN);
	memcpy(m->hmac, n + 296, UBIFS_MAX_HMAC_LEN);
}

void ubifs_ino_unpack(const uint8_t *n, struct ubifs_ino_node *ino)
{
	ino->key = ubifs_key_read(n + 24);
	ino->creat_sqnum = get_le64(n + 40);
	ino->size = get_le64(n + 48);
	ino->atime_sec = (int64_t)get_le64(n + 56);
	ino->ctime_sec = (int64_t)get_le64(n + 64);
	ino->mtime_sec = (int64_t)get_le64(n + 72);
	ino->atime_nsec = get_le32(n + 80);
	ino->ctime_nsec = get_le32(n + 84);
	ino->mtime_nsec = get_le32(n + 88);
	ino->nlink = get_le32(n + 92);
	ino->uid = get_le32(n + 96);
	ino->gid = get_le32(n + 100);
	ino->mode = get_le32(n + 104);
	ino->flags = get_le32(n + 108);
	ino->data_len = get_le32(n + 112);
	ino->xattr_cnt = get_le32(n + 116);
	ino->xattr_size = get_le32(n + 120);
	ino->xattr_names = get_le32(n + 128);
	ino->compr_type = get_le16(n + 132);
	ino->data = n + UBIFS_INO_NODE_SZ;
}

void ubifs_dent_unpack(const uint8_t *n, struct ubifs_dent_node *d)
{
	d->key = ubifs_key_read(n + 24);
	d->inum = get_le64(n + 40);
	d->type = n[49];
	d->nlen = get_le16(n + 50);
	d->cookie = get_le32(n + 52);
	d->name = (const char *)n + UBIFS_DENT_NODE_SZ;
}

const char *ubifs_dent_check(const uint8_t *n, uint32_t len)
{
	struct ubifs_dent_node d;
	if (len < UBIFS_DENT_NODE_SZ + 1)
		return "entry node too short";
	ubifs_dent_unpack(n, &d);
	unsigned kt = ubifs_key_type(&d.key);
	if (len != (uint32_t)d.nlen + UBIFS_DENT_NODE_SZ + 1)
		return "entry length does not match its name length";
	if (d.type >= UBIFS_ITYPES_CNT)
		return "bad entry type";
	if (d.nlen > UBIFS_MAX_NLEN)
		return "name too long";
	if (d.name[d.nlen] != 0)
		return "name not NUL-terminated";
	if (kt == UBIFS_XENT_KEY && strnlen(d.name, d.nlen) != d.nlen)
		return "xattr name contains a NUL byte";
	if (d.inum > UBIFS_MAX_INUM)
		return "target inode number too large";
	if (kt != UBIFS_DENT_KEY && kt != UBIFS_XENT_KEY)
		return "bad key type in entry node";
	return NULL;
}

void ubifs_data_unpack(const uint8_t *n, uint32_t len, struct ubifs_data_node *d)
{
	d->key = ubifs_key_read(n + 24);
	d->size = get_le32(n + 40);
	d->compr_type = get_le16(n + 44);
	d->compr_size = get_le16(n + 46);
	d->data = n + UBIFS_DATA_NODE_SZ;
	d->data_len = len - UBIFS_DATA_NODE_SZ;
}

void ubifs_trun_unpack(const uint8_t *n, struct ubifs_trun_node *t)
{
	t->inum = get_le32(n + 24);
	t->old_size = get_le64(n + 40);
	t->new_size = get_le64(n + 48);
}

void ubifs_ref_unpack(const uint8_t *n, struct ubifs_ref_node *r)
{
	r->lnum = get_le32(n + 24);
	r->offs = get_le32(n + 28);
	r->jhead = get_le32(n + 32);
}

void ubifs_idx_unpack(const uint8_t *n, struct ubifs_idx_node *idx)
{
	idx->child_cnt = get_le16(n + 24);
	idx->level = get_le16(n + 26);
	idx->branch_sz = UBIFS_BRANCH_SZ;
	idx->branches = n + UBIFS_IDX_NODE_SZ;
}

void ubifs_idx_unpack_hash(const uint8_t *n, uint32_t hash_len, struct ubifs_idx_node *idx)
{
	ubifs_idx_unpack(n, idx);
	idx->branch_sz = UBIFS_BRANCH_SZ + hash_len;
}

void ubifs_idx_branch(const struct ubifs_idx_node *idx, unsigned i, struct ubifs_branch *br)
{
	const uint8_t *b = idx->branches + (size_t)i * idx->branch_sz;
	br->hash = idx->branch_sz > UBIFS_BRANCH_SZ ? b + UBIFS_BRANCH_SZ : NULL;
	br->lnum = get_le32(b);
	br->offs = get_le32(b + 4);
	br->len = get_le32(b + 8);
	br->key = ubifs_key_read(b + 12);
}

void ubifs_decode_dev(const uint8_t *data, uint32_t data_len, uint32_t *major, uint32_t *minor)
{
	/* Linux new_encode_dev: minor low byte, major << 8 (12 bits), minor high bits << 12;
	 * the 8-byte "huge" form holds the same value in its low 32 bits. */
	uint32_t dev = data_len >= 4 ? get_le32(data) : 0;
	*major = (dev & 0xFFF00u) >> 8;
	*minor = (dev & 0xFFu) | ((dev >> 12) & 0xFFF00u);
}

/* ---- packing ---- */

void ubifs_ch_pack(uint8_t *node, unsigned type, uint32_t len, unsigned group)
{
	memset(node, 0, UBIFS_CH_SZ);
	put_le32(node, UBIFS_NODE_MAGIC);
	put_le32(node + 16, len);
	node[20] = (uint8_t)type;
	node[21] = (uint8_t)group;
}

void ubifs_node_finish(uint8_t *node, uint32_t len, uint64_t sqnum)
{
	put_le64(node + 8, sqnum);
	put_le32(node + 4, ubifs_node_crc(node, len));
}

void ubifs_pad_pack(uint8_t *buf, uint32_t pad)
{
	if (pad >= UBIFS_PAD_NODE_SZ) {
		ubifs_ch_pack(buf, UBIFS_PAD_NODE, UBIFS_PAD_NODE_SZ, UBIFS_NO_NODE_GROUP);
		put_le32(buf + 24, pad - UBIFS_PAD_NODE_SZ);
		ubifs_node_finish(buf, UBIFS_PAD_NODE_SZ, 0);
		memset(buf + UBIFS_PAD_NODE_SZ, 0, pad - UBIFS_PAD_NODE_SZ);
	} else if (pad > 0) {
		memset(buf, UBIFS_PADDING_BYTE, pad);
	}
}

/* 16-byte key field: 8 key bytes, 8 zero bytes */
static void key_field(uint8_t *p, const struct ubifs_key *k)
{
	ubifs_key_write(p, k);
	memset(p + 8, 0, 8);
}

void ubifs_ino_pack(uint8_t *n, const struct ubifs_ino_node *ino, const void *data, uint32_t attach, unsigned group)
{
	uint32_t len = UBIFS_INO_NODE_SZ + attach;
	ubifs_ch_pack(n, UBIFS_INO_NODE, len, group);
	memset(n + UBIFS_CH_SZ, 0, UBIFS_INO_NODE_SZ - UBIFS_CH_SZ);
	key_field(n + 24, &ino->key);
	put_le64(n + 40, ino->creat_sqnum);
	put_le64(n + 48, ino->size);
	put_le64(n + 56, (uint64_t)ino->atime_sec);
	put_le64(n + 64, (uint64_t)ino->ctime_sec);
	put_le64(n + 72, (uint64_t)ino->mtime_sec);
	put_le32(n + 80, ino->atime_nsec);
	put_le32(n + 84, ino->ctime_nsec);
	put_le32(n + 88, ino->mtime_nsec);
	put_le32(n + 92, ino->nlink);
	put_le32(n + 96, ino->uid);
	put_le32(n + 100, ino->gid);
	put_le32(n + 104, ino->mode);
	put_le32(n + 108, ino->flags);
	put_le32(n + 112, ino->data_len);
	put_le32(n + 116, ino->xattr_cnt);
	put_le32(n + 120, ino->xattr_size);
	put_le32(n + 128, ino->xattr_names);
	put_le16(n + 132, ino->compr_type);
	if (attach)
		memcpy(n + UBIFS_INO_NODE_SZ, data, attach);
}

void ubifs_dent_pack(uint8_t *n, const struct ubifs_key *key, uint64_t inum, uint8_t type, const char *name,
		     uint16_t nlen, uint32_t cookie, unsigned group)
{
	uint32_t len = UBIFS_DENT_NODE_SZ + nlen + 1u;
	unsigned nt = ubifs_key_type(key) == UBIFS_XENT_KEY ? UBIFS_XENT_NODE : UBIFS_DENT_NODE;
	ubifs_ch_pack(n, nt, len, group);
	key_field(n + 24, key);
	put_le64(n + 40, inum);
	n[48] = 0;
	n[49] = type;
	put_le16(n + 50, nlen);
	put_le32(n + 52, cookie);
	memcpy(n + UBIFS_DENT_NODE_SZ, name, nlen);
	n[UBIFS_DENT_NODE_SZ + nlen] = 0;
}

void ubifs_data_pack(uint8_t *n, const struct ubifs_key *key, uint32_t size, uint16_t compr_type, const void *data,
		     uint32_t data_len, unsigned group)
{
	ubifs_ch_pack(n, UBIFS_DATA_NODE, UBIFS_DATA_NODE_SZ + data_len, group);
	key_field(n + 24, key);
	put_le32(n + 40, size);
	put_le16(n + 44, compr_type);
	put_le16(n + 46, 0); /* compr_size: only for encrypted data */
	if (data_len && data != n + UBIFS_DATA_NODE_SZ)
		memmove(n + UBIFS_DATA_NODE_SZ, data, data_len);
}

void ubifs_trun_pack(uint8_t *n, uint32_t inum, uint64_t old_size, uint64_t new_size, unsigned group)
{
	ubifs_ch_pack(n, UBIFS_TRUN_NODE, UBIFS_TRUN_NODE_SZ, group);
	memset(n + UBIFS_CH_SZ, 0, UBIFS_TRUN_NODE_SZ - UBIFS_CH_SZ);
	put_le32(n + 24, inum);
	put_le64(n + 40, old_size);
	put_le64(n + 48, new_size);
}

void ubifs_ref_pack(uint8_t *n, uint32_t lnum, uint32_t offs, uint32_t jhead)
{
	ubifs_ch_pack(n, UBIFS_REF_NODE, UBIFS_REF_NODE_SZ, UBIFS_NO_NODE_GROUP);
	memset(n + UBIFS_CH_SZ, 0, UBIFS_REF_NODE_SZ - UBIFS_CH_SZ);
	put_le32(n + 24, lnum);
	put_le32(n + 28, offs);
	put_le32(n + 32, jhead);
}

void ubifs_cs_pack(uint8_t *n, uint64_t cmt_no)
{
	ubifs_ch_pack(n, UBIFS_CS_NODE, UBIFS_CS_NODE_SZ, UBIFS_NO_NODE_GROUP);
	put_le64(n + 24, cmt_no);
}

void ubifs_idx_pack(uint8_t *n, uint16_t child_cnt, uint16_t level)
{
	ubifs_ch_pack(n, UBIFS_IDX_NODE, ubifs_idx_node_len(child_cnt), UBIFS_NO_NODE_GROUP);
	put_le16(n + 24, child_cnt);
	put_le16(n + 26, level);
}

void ubifs_idx_branch_pack(uint8_t *n, unsigned i, const struct ubifs_branch *br)
{
	uint8_t *b = n + UBIFS_IDX_NODE_SZ + (size_t)i * UBIFS_BRANCH_SZ;
	put_le32(b, br->lnum);
	put_le32(b + 4, br->offs);
	put_le32(b + 8, br->len);
	ubifs_key_write(b + 12, &br->key);
}

void ubifs_mst_pack(uint8_t *n, const struct ubifs_mst_node *m)
{
	ubifs_ch_pack(n, UBIFS_MST_NODE, UBIFS_MST_NODE_SZ, UBIFS_NO_NODE_GROUP);
	memset(n + UBIFS_CH_SZ, 0, UBIFS_MST_NODE_SZ - UBIFS_CH_SZ);
	put_le64(n + 24, m->highest_inum);
	put_le64(n + 32, m->cmt_no);
	put_le32(n + 40, m->flags);
	put_le32(n + 44, m->log_lnum);
	put_le32(n + 48, m->root_lnum);
	put_le32(n + 52, m->root_offs);
	put_le32(n + 56, m->root_len);
	put_le32(n + 60, m->gc_lnum);
	put_le32(n + 64, m->ihead_lnum);
	put_le32(n + 68, m->ihead_offs);
	put_le64(n + 72, m->index_size);
	put_le64(n + 80, m->total_free);
	put_le64(n + 88, m->total_dirty);
	put_le64(n + 96, m->total_used);
	put_le64(n + 104, m->total_dead);
	put_le64(n + 112, m->total_dark);
	put_le32(n + 120, m->lpt_lnum);
	put_le32(n + 124, m->lpt_offs);
	put_le32(n + 128, m->nhead_lnum);
	put_le32(n + 132, m->nhead_offs);
	put_le32(n + 136, m->ltab_lnum);
	put_le32(n + 140, m->ltab_offs);
	put_le32(n + 144, m->lsave_lnum);
	put_le32(n + 148, m->lsave_offs);
	put_le32(n + 152, m->lscan_lnum);
	put_le32(n + 156, m->empty_lebs);
	put_le32(n + 160, m->idx_lebs);
	put_le32(n + 164, m->leb_cnt);
}

void ubifs_orph_pack(uint8_t *n, uint64_t cmt_no, int last, const uint64_t *inos, uint32_t cnt)
{
	ubifs_ch_pack(n, UBIFS_ORPH_NODE, UBIFS_ORPH_NODE_SZ + cnt * 8u, UBIFS_NO_NODE_GROUP);
	put_le64(n + 24, cmt_no | (last ? 1ull << 63 : 0));
	for (uint32_t i = 0; i < cnt; i++)
		put_le64(n + UBIFS_ORPH_NODE_SZ + 8u * i, inos[i]);
}

uint32_t ubifs_encode_dev(uint32_t major, uint32_t minor)
{
	return (minor & 0xFFu) | ((major & 0xFFFu) << 8) | ((minor & ~0xFFu) << 12);
}
