/* ubifs_scan — walking the nodes of a LEB: the strict scan of the mount path
 * (spec §4, the kernel's ubifs_scan) and the lenient walk for `ubikit dump`
 * (ubifs_scan_leb, see ubifs_scan.h). */
#include "ubifs/ubifs_scan.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ubi/ubi_vol_io.h"
#include "ubifs/ubifs_priv.h"
#include "util/util_endian.h"

static int scan_padding_bytes(const uint8_t *buf, uint32_t len)
{
	uint32_t max = len < UBIFS_PAD_NODE_SZ ? len : UBIFS_PAD_NODE_SZ, n = 0;
	while (n < max && buf[n] == UBIFS_PADDING_BYTE)
		n++;
	if (n == 0 || (n & 7))
		return UBIFS_SCANNED_GARBAGE;
	return (int)n;
}

int ubifs_scan_a_node(const struct ubifs_fs *fs, const uint8_t *buf, uint32_t len, uint32_t offs)
{
	uint32_t magic = get_le32(buf);
	if (magic == 0xFFFFFFFFu)
		return UBIFS_SCANNED_EMPTY_SPACE;
	if (magic != UBIFS_NODE_MAGIC)
		return scan_padding_bytes(buf, len);
	if (len < UBIFS_CH_SZ)
		return UBIFS_SCANNED_GARBAGE;
	if (ubifs_fs_check_node(fs, buf, len, offs) != UBIFS_CHK_OK)
		return UBIFS_SCANNED_A_CORRUPT_NODE;
	if (buf[20] == UBIFS_PAD_NODE) {
		int32_t pad_len = (int32_t)get_le32(buf + 24);
		uint32_t node_len = get_le32(buf + 16);
		if (pad_len < 0 || (uint64_t)offs + node_len + (uint32_t)pad_len > fs->leb_size)
			return UBIFS_SCANNED_A_BAD_PAD_NODE;
		if ((node_len + (uint32_t)pad_len) & 7)
			return UBIFS_SCANNED_A_BAD_PAD_NODE;
		return (int)(node_len + (uint32_t)pad_len);
	}
	return UBIFS_SCANNED_A_NODE;
}

int ubifs_sleb_add(struct ubifs_sleb *sleb, const uint8_t *node, uint32_t offs)
{
	if (sleb->nodes_cnt == sleb->nodes_cap) {
		uint32_t cap = sleb->nodes_cap ? sleb->nodes_cap * 2 : 32;
		struct ubifs_snode *n = realloc(sleb->nodes, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		sleb->nodes = n;
		sleb->nodes_cap = cap;
	}
	struct ubifs_snode *s = &sleb->nodes[sleb->nodes_cnt++];
	struct ubifs_ch ch;
	ubifs_ch_unpack(node, &ch);
	s->offs = offs;
	s->len = ch.len;
	s->type = ch.node_type;
	s->group_type = ch.group_type;
	s->sqnum = ch.sqnum;
	if (ch.node_type <= UBIFS_XENT_NODE)
		s->key = ubifs_key_read(node + 24);
	else
		s->key = ubifs_key_make(0, UBIFS_INVALID_KEY, 0);
	return 0;
}

void ubifs_sleb_free(struct ubifs_sleb *sleb)
{
	free(sleb->nodes);
	sleb->nodes = NULL;
	sleb->nodes_cnt = sleb->nodes_cap = 0;
}

static const char *scan_res_str(int ret)
{
	switch (ret) {
	case UBIFS_SCANNED_GARBAGE: return "garbage (no node, no padding)";
	case UBIFS_SCANNED_A_CORRUPT_NODE: return "corrupt node";
	case UBIFS_SCANNED_A_BAD_PAD_NODE: return "bad padding node";
	default: return "unexpected scan result";
	}
}

int ubifs_scan(struct ubifs_fs *fs, uint32_t lnum, uint32_t offs, struct ubifs_sleb *sleb)
{
	memset(sleb, 0, sizeof(*sleb));
	sleb->lnum = lnum;
	sleb->buf = fs->sbuf;
	int err = ubifs_leb_read(fs, lnum, offs, fs->sbuf + offs, fs->leb_size - offs);
	if (err)
		return err;
	uint8_t *buf = fs->sbuf + offs;
	uint32_t len = fs->leb_size - offs;
	while (len >= 8) {
		int ret = ubifs_scan_a_node(fs, buf, len, offs);
		if (ret > 0) {
			offs += (uint32_t)ret;
			buf += ret;
			len -= (uint32_t)ret;
			continue;
		}
		if (ret == UBIFS_SCANNED_EMPTY_SPACE)
			break;
		if (ret != UBIFS_SCANNED_A_NODE) {
			const char *why = scan_res_str(ret);
			if (ret == UBIFS_SCANNED_A_CORRUPT_NODE)
				why = ubifs_chk_str(ubifs_check_node(buf, len, offs, fs->leb_size, fs->fanout));
			ubifs_sleb_free(sleb);
			return util_err_set(&fs->err, -EUCLEAN, "LEB %u:%u: %s", lnum, offs, why);
		}
		err = ubifs_sleb_add(sleb, buf, offs);
		if (err) {
			ubifs_sleb_free(sleb);
			return err;
		}
		uint32_t nl = ubifs_align8(get_le32(buf + 16));
		if (nl > len)
			nl = len;
		offs += nl;
		buf += nl;
		len -= nl;
	}
	if (offs % fs->min_io_size) {
		ubifs_sleb_free(sleb);
		return util_err_set(&fs->err, -EUCLEAN, "LEB %u:%u: empty space starts at a non-aligned offset", lnum,
				    offs);
	}
	sleb->endpt = offs;
	for (uint32_t i = 0; i < len; i++)
		if (buf[i] != 0xFF) {
			ubifs_sleb_free(sleb);
			return util_err_set(&fs->err, -EUCLEAN, "LEB %u:%u: corrupt empty space (byte 0x%02x)", lnum,
					    offs + i, buf[i]);
		}
	return 0;
}

/* ---- the lenient walk for dump ---- */

static uint32_t resync(const uint8_t *leb, uint32_t leb_size, uint32_t from)
{
	uint32_t o = (from + 7) & ~7u;
	while (o + 4 <= leb_size && get_le32(leb + o) != UBIFS_NODE_MAGIC)
		o += 8;
	return o < leb_size ? o : leb_size;
}

int ubifs_scan_leb(struct ubi_vol_io *vol, uint32_t lnum, uint32_t fanout, ubifs_scan_cb cb, void *arg)
{
	if (!vol || !cb || lnum >= vol->leb_count || vol->leb_size < 64)
		return -EINVAL;
	uint32_t leb_size = vol->leb_size;
	uint8_t *leb = malloc(leb_size);
	if (!leb)
		return -ENOMEM;
	int ret = vol->read(vol->ctx, lnum, 0, leb, leb_size);
	if (ret) {
		free(leb);
		return ret < 0 ? ret : -EIO;
	}
	uint32_t offs = 0;
	ret = 0;
	while (offs < leb_size && !ret) {
		struct ubifs_scan_node n;
		memset(&n, 0, sizeof(n));
		n.lnum = lnum;
		n.offs = offs;
		uint32_t left = leb_size - offs;
		if (left < 8 || get_le32(leb + offs) == 0xFFFFFFFFu) {
			uint32_t i = 0;
			while (i < left && leb[offs + i] == 0xFF)
				i++;
			if (i == left) {
				n.kind = UBIFS_SCAN_EMPTY;
				n.len = left;
				ret = cb(arg, &n);
				break;
			}
			n.kind = UBIFS_SCAN_BAD_EMPTY;
			n.offs = offs + i;
			n.len = left - i;
			n.problem = "non-0xFF bytes in empty space";
			ret = cb(arg, &n);
			offs = resync(leb, leb_size, offs + i);
			continue;
		}
		if (get_le32(leb + offs) != UBIFS_NODE_MAGIC) {
			int p = scan_padding_bytes(leb + offs, left);
			if (p > 0) {
				n.kind = UBIFS_SCAN_PADDING;
				n.len = (uint32_t)p;
				ret = cb(arg, &n);
				offs += (uint32_t)p;
				continue;
			}
			uint32_t next = resync(leb, leb_size, offs + 1);
			n.kind = UBIFS_SCAN_GARBAGE;
			n.len = next - offs;
			n.problem = "garbage";
			ret = cb(arg, &n);
			offs = next;
			continue;
		}
		struct ubifs_ch ch;
		ubifs_ch_unpack(leb + offs, &ch);
		struct ubifs_len_range r;
		ubifs_node_len_range(ch.node_type, fanout, leb_size, &r);
		n.type = ch.node_type;
		n.group_type = ch.group_type;
		n.sqnum = ch.sqnum;
		if (ch.node_type >= UBIFS_NODE_TYPES_CNT || ch.len < UBIFS_CH_SZ || ch.len > left) {
			uint32_t next = resync(leb, leb_size, offs + 8);
			n.kind = UBIFS_SCAN_GARBAGE;
			n.len = next - offs;
			n.problem = ch.node_type >= UBIFS_NODE_TYPES_CNT ? "node with a bad type" : "node with a bad length";
			ret = cb(arg, &n);
			offs = next;
			continue;
		}
		n.len = ch.len;
		n.node = leb + offs;
		n.crc_ok = ubifs_node_crc(leb + offs, ch.len) == ch.crc;
		if (!n.crc_ok)
			n.problem = "bad CRC";
		else if (ch.len < r.min || ch.len > r.max)
			n.problem = "length outside the range of its type";
		if (ch.node_type <= UBIFS_XENT_NODE && ch.len >= UBIFS_CH_SZ + 8) {
			n.has_key = 1;
			n.key = ubifs_key_read(leb + offs + 24);
		}
		if (ch.node_type == UBIFS_PAD_NODE && n.crc_ok) {
			uint32_t pad = get_le32(leb + offs + 24);
			if ((uint64_t)offs + UBIFS_PAD_NODE_SZ + pad <= leb_size && !((UBIFS_PAD_NODE_SZ + pad) & 7)) {
				n.kind = UBIFS_SCAN_PADDING;
				n.len = UBIFS_PAD_NODE_SZ + pad;
				ret = cb(arg, &n);
				offs += n.len;
				continue;
			}
			n.problem = "bad padding length";
		}
		n.kind = UBIFS_SCAN_NODE;
		ret = cb(arg, &n);
		offs += ubifs_align8(ch.len);
	}
	free(leb);
	return ret;
}
