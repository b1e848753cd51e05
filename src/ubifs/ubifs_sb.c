/* ubifs_sb — reading and checking the superblock (LEB 0), with every check
 * the kernel applies at mount (sb.c validate_sb, super.c init_constants_sb),
 * and the area geometry that follows from it (spec §2, §6.6, §9). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ubifs/ubifs_priv.h"
#include "util/util_endian.h"

#define UBIFS_MIN_LOG_LEBS 2
#define UBIFS_MIN_LPT_LEBS 2
#define UBIFS_MIN_ORPH_LEBS 1
#define UBIFS_MIN_BUD_LEBS 3
#define UBIFS_DEFAULT_LSAVE_CNT 256

/* The UBIFS min. I/O unit for a volume's (UBI min I/O of 1 on NOR -> 8). */
static uint32_t ubifs_min_io(const struct ubi_vol_io *vol)
{
	return vol->min_io_size < 8 ? 8 : vol->min_io_size;
}

static int read_sb_node(struct ubi_vol_io *vol, struct ubifs_sb_node *sb, struct util_err *e)
{
	if (vol->leb_size < UBIFS_MIN_LEB_SZ)
		return util_err_set(e, -EINVAL, "LEB size %u is too small for UBIFS (at least %u)", vol->leb_size,
				    UBIFS_MIN_LEB_SZ);
	if (vol->leb_count < UBIFS_MIN_LEB_CNT)
		return util_err_set(e, -EINVAL, "volume has %u LEBs, UBIFS needs at least %u", vol->leb_count,
				    UBIFS_MIN_LEB_CNT);
	uint8_t *buf = malloc(UBIFS_SB_NODE_SZ);
	if (!buf)
		return -ENOMEM;
	int err = vol->read(vol->ctx, UBIFS_SB_LNUM, 0, buf, UBIFS_SB_NODE_SZ);
	if (err) {
		free(buf);
		return util_err_set(e, err < 0 ? err : -EIO, "cannot read the superblock (LEB 0:0), error %d", err);
	}
	enum ubifs_chk c = ubifs_check_node(buf, UBIFS_SB_NODE_SZ, 0, vol->leb_size, 0);
	if (c == UBIFS_CHK_OK && buf[20] != UBIFS_SB_NODE)
		err = util_err_set(e, -EINVAL, "LEB 0:0 holds a %s node, not a superblock",
				   ubifs_node_type_name(buf[20]));
	else if (c == UBIFS_CHK_BAD_MAGIC)
		err = util_err_set(e, -EINVAL, "no UBIFS superblock at LEB 0:0 (bad node magic 0x%08x)", get_le32(buf));
	else if (c != UBIFS_CHK_OK)
		err = util_err_set(e, -EINVAL, "superblock node at LEB 0:0: %s", ubifs_chk_str(c));
	else
		ubifs_sb_unpack(buf, sb);
	free(buf);
	return err;
}

/* Kernel checks. leb_cnt here is the count after auto-resize. */
static int validate_sb(const struct ubifs_sb_node *sb, uint32_t min_io, uint32_t leb_size, uint32_t vol_lebs,
		       uint32_t leb_cnt, int read_only, struct util_err *e)
{
	const char *p = "bad superblock (LEB 0:0)";
	if (sb->fmt_version > UBIFS_FORMAT_VERSION) {
		if (!read_only || sb->ro_compat_version > UBIFS_RO_COMPAT_VERSION)
			return util_err_set(e, sb->ro_compat_version <= UBIFS_RO_COMPAT_VERSION ? -EROFS : -EINVAL,
					    "%s: on-flash format version w%u/r%u, only up to w%u/r%u is supported%s", p,
					    sb->fmt_version, sb->ro_compat_version, UBIFS_FORMAT_VERSION,
					    UBIFS_RO_COMPAT_VERSION,
					    sb->ro_compat_version <= UBIFS_RO_COMPAT_VERSION ? " (read-only mount possible)"
											     : "");
	}
	if (sb->fmt_version < 3)
		return util_err_set(e, -EINVAL, "%s: on-flash format version %u is not supported", p, sb->fmt_version);
	if (sb->key_hash > UBIFS_KEY_HASH_TEST)
		return util_err_set(e, -EINVAL, "%s: unsupported key hash function %u", p, sb->key_hash);
	if (sb->key_fmt != UBIFS_SIMPLE_KEY_FMT)
		return util_err_set(e, -EINVAL, "%s: unsupported key format %u", p, sb->key_fmt);
	if (sb->flags & ~(uint32_t)UBIFS_FLG_MASK)
		return util_err_set(e, -EINVAL, "%s: unknown feature flags 0x%x", p, sb->flags & ~(uint32_t)UBIFS_FLG_MASK);
	if (sb->flags & UBIFS_FLG_AUTHENTICATION) {
		if (!ubifs_auth_hash_len(sb->hash_algo))
			return util_err_set(e, -EINVAL, "%s: authenticated UBIFS with an unknown hash algorithm %u", p,
					    sb->hash_algo);
		if (!read_only)
			return util_err_set(e, -EROFS,
					    "%s: authenticated UBIFS: writing would need the HMAC key and is not supported; "
					    "mount it read-only",
					    p);
	}
	if (sb->min_io_size != min_io)
		return util_err_set(e, -EINVAL, "%s: min. I/O unit mismatch: %u in superblock, %u real", p,
				    sb->min_io_size, min_io);
	if (sb->leb_size != leb_size)
		return util_err_set(e, -EINVAL, "%s: LEB size mismatch: %u in superblock, %u real", p, sb->leb_size,
				    leb_size);
	if (sb->log_lebs < UBIFS_MIN_LOG_LEBS || sb->lpt_lebs < UBIFS_MIN_LPT_LEBS ||
	    sb->orph_lebs < UBIFS_MIN_ORPH_LEBS)
		return util_err_set(e, -EINVAL, "%s: too few log (%u), LPT (%u) or orphan (%u) LEBs", p, sb->log_lebs,
				    sb->lpt_lebs, sb->orph_lebs);
	uint32_t jheads = sb->jhead_cnt + UBIFS_NONDATA_JHEADS;
	uint64_t fixed = 3ull + sb->log_lebs + sb->lpt_lebs + sb->orph_lebs;
	uint64_t min_leb_cnt = fixed + (uint64_t)jheads + 6;
	if (leb_cnt < min_leb_cnt || sb->leb_cnt > vol_lebs)
		return util_err_set(e, -EINVAL,
				    "%s: bad LEB count: %u in superblock (%u after auto-resize), %u on the volume, %llu minimum required",
				    p, sb->leb_cnt, leb_cnt, vol_lebs, (unsigned long long)min_leb_cnt);
	if (sb->max_leb_cnt < sb->leb_cnt)
		return util_err_set(e, -EINVAL, "%s: max. LEB count %u less than LEB count %u", p, sb->max_leb_cnt,
				    sb->leb_cnt);
	uint64_t main_lebs = leb_cnt - fixed;
	if (main_lebs < UBIFS_MIN_MAIN_LEBS)
		return util_err_set(e, -EINVAL, "%s: too few main LEBs (%llu), must be at least %u", p,
				    (unsigned long long)main_lebs, UBIFS_MIN_MAIN_LEBS);
	if (sb->max_bud_bytes < (uint64_t)leb_size * UBIFS_MIN_BUD_LEBS)
		return util_err_set(e, -EINVAL, "%s: too small journal (%llu bytes), must be at least %llu bytes", p,
				    (unsigned long long)sb->max_bud_bytes, (unsigned long long)leb_size * UBIFS_MIN_BUD_LEBS);
	uint64_t main_bytes = (uint64_t)leb_size * main_lebs;
	if (sb->max_bud_bytes > main_bytes)
		return util_err_set(e, -EINVAL, "%s: journal (%llu bytes) larger than the main area (%llu bytes)", p,
				    (unsigned long long)sb->max_bud_bytes, (unsigned long long)main_bytes);
	if (jheads != UBIFS_NONDATA_JHEADS + 1)
		return util_err_set(e, -EINVAL, "%s: bad journal head count %u", p, sb->jhead_cnt);
	uint32_t hlen = (sb->flags & UBIFS_FLG_AUTHENTICATION) ? ubifs_auth_hash_len(sb->hash_algo) : 0;
	if (sb->fanout < UBIFS_MIN_FANOUT ||
	    (uint64_t)UBIFS_IDX_NODE_SZ + (uint64_t)sb->fanout * (UBIFS_BRANCH_SZ + hlen) > leb_size)
		return util_err_set(e, -EINVAL, "%s: bad fanout %u", p, sb->fanout);
	if ((int32_t)sb->lsave_cnt < 0 ||
	    (sb->lsave_cnt > UBIFS_DEFAULT_LSAVE_CNT && (uint64_t)sb->lsave_cnt + fixed > sb->max_leb_cnt))
		return util_err_set(e, -EINVAL, "%s: bad lsave count %u", p, sb->lsave_cnt);
	if (sb->default_compr >= UBIFS_COMPR_TYPES_CNT)
		return util_err_set(e, -EINVAL, "%s: unknown default compressor %u", p, sb->default_compr);
	if ((int64_t)sb->rp_size < 0 || sb->rp_size > main_bytes)
		return util_err_set(e, -EINVAL, "%s: bad reserved pool size %llu", p, (unsigned long long)sb->rp_size);
	if (sb->time_gran < 1 || sb->time_gran > 1000000000)
		return util_err_set(e, -EINVAL, "%s: bad time granularity %u", p, sb->time_gran);
	if (!(sb->flags & UBIFS_FLG_DOUBLE_HASH) && sb->fmt_version >= 5)
		return util_err_set(e, -EINVAL, "%s: format version %u without the double-hash flag", p, sb->fmt_version);
	if ((sb->flags & UBIFS_FLG_ENCRYPTION) && sb->fmt_version < 5)
		return util_err_set(e, -EINVAL, "%s: encryption flag with format version %u", p, sb->fmt_version);
	/* init_constants_sb: a commit fits a LEB, the log holds a ref per bud */
	uint32_t cs = (UBIFS_CS_NODE_SZ + UBIFS_REF_NODE_SZ * jheads + min_io - 1) / min_io * min_io;
	if (cs > leb_size)
		return util_err_set(e, -EINVAL, "%s: LEB size %u too small for a commit (%u)", p, leb_size, cs);
	uint64_t max_bud_cnt = (sb->max_bud_bytes + leb_size - 1) / leb_size;
	uint64_t ref_alsz = (UBIFS_REF_NODE_SZ + min_io - 1) / min_io * min_io;
	uint64_t need_log = (ref_alsz * max_bud_cnt + leb_size - 1) / leb_size + 1;
	if (sb->log_lebs < need_log)
		return util_err_set(e, -EINVAL, "%s: too small log %u LEBs, required min. %llu LEBs", p, sb->log_lebs,
				    (unsigned long long)need_log);
	return 0;
}

int ubifs_read_sb(struct ubi_vol_io *vol, struct ubifs_sb_node *sb, struct util_err *e)
{
	int err = read_sb_node(vol, sb, e);
	if (err)
		return err;
	uint32_t leb_cnt = sb->leb_cnt;
	if (leb_cnt < vol->leb_count && leb_cnt < sb->max_leb_cnt)
		leb_cnt = sb->max_leb_cnt < vol->leb_count ? sb->max_leb_cnt : vol->leb_count;
	return validate_sb(sb, ubifs_min_io(vol), vol->leb_size, vol->leb_count, leb_cnt, 1, e);
}

int ubifs_sb_read_check(struct ubifs_fs *fs)
{
	struct ubi_vol_io *vol = fs->vol;
	struct ubifs_sb_node *sb = &fs->sb;
	int err = read_sb_node(vol, sb, &fs->err);
	if (err)
		return err;
	fs->leb_size = vol->leb_size;
	fs->min_io_size = ubifs_min_io(vol);
	fs->max_write_size = vol->max_write_size;
	if (fs->max_write_size < fs->min_io_size || fs->max_write_size % fs->min_io_size)
		fs->max_write_size = fs->min_io_size;
	fs->old_leb_cnt = fs->leb_cnt = sb->leb_cnt;
	/* auto-resize to the volume (in memory only on a read-only mount; a
	 * read-write mount rewrites the superblock, ubifs_sb_write_leb_cnt) */
	if (sb->leb_cnt < vol->leb_count && sb->leb_cnt < sb->max_leb_cnt)
		fs->leb_cnt = sb->max_leb_cnt < vol->leb_count ? sb->max_leb_cnt : vol->leb_count;
	err = validate_sb(sb, fs->min_io_size, fs->leb_size, vol->leb_count, fs->leb_cnt, fs->read_only, &fs->err);
	if (err)
		return err;
	fs->fanout = sb->fanout;
	fs->jhead_cnt = sb->jhead_cnt + UBIFS_NONDATA_JHEADS;
	fs->key_hash = sb->key_hash;
	fs->double_hash = !!(sb->flags & UBIFS_FLG_DOUBLE_HASH);
	fs->hash_len = (sb->flags & UBIFS_FLG_AUTHENTICATION) ? ubifs_auth_hash_len(sb->hash_algo) : 0;
	fs->log_first = UBIFS_LOG_LNUM;
	fs->log_last = UBIFS_LOG_LNUM + sb->log_lebs - 1;
	fs->lpt_first = fs->log_last + 1;
	fs->lpt_last = fs->lpt_first + sb->lpt_lebs - 1;
	fs->orph_first = fs->lpt_last + 1;
	fs->orph_last = fs->orph_first + sb->orph_lebs - 1;
	fs->main_first = fs->orph_last + 1;
	fs->main_lebs = fs->leb_cnt - fs->main_first;
	return 0;
}

int ubifs_sb_write_leb_cnt(struct ubifs_fs *fs)
{
	/* kernel: the superblock node read, leb_cnt changed, a new sqnum and CRC,
	 * padded to min. I/O and written with an atomic LEB change */
	uint32_t len = (UBIFS_SB_NODE_SZ + fs->min_io_size - 1) / fs->min_io_size * fs->min_io_size;
	uint8_t *buf = calloc(1, len);
	if (!buf)
		return -ENOMEM;
	int err = ubifs_leb_read(fs, UBIFS_SB_LNUM, 0, buf, UBIFS_SB_NODE_SZ);
	if (!err) {
		put_le32(buf + 40, fs->leb_cnt);
		ubifs_node_finish(buf, UBIFS_SB_NODE_SZ, ubifs_next_sqnum(fs));
		ubifs_pad_pack(buf + UBIFS_SB_NODE_SZ, len - UBIFS_SB_NODE_SZ);
		err = ubifs_leb_change(fs, UBIFS_SB_LNUM, buf, len);
	}
	free(buf);
	if (!err)
		fs->sb.leb_cnt = fs->old_leb_cnt = fs->leb_cnt;
	return err;
}
