/* ubi_media — see ubi_media.h. */
#include "ubi/ubi_media.h"

#include <errno.h>
#include <string.h>

#include "util/util_crc.h"
#include "util/util_endian.h"

static uint32_t align_up(uint32_t v, uint32_t a)
{
	return (v + a - 1) / a * a;
}

int ubi_calc_offsets(uint32_t peb_size, uint32_t min_io_size, uint32_t subpage_size,
		     uint32_t vid_hdr_offset, struct ubi_offsets *o)
{
	if (!peb_size || !min_io_size)
		return -EINVAL;
	if (!subpage_size)
		subpage_size = min_io_size;
	memset(o, 0, sizeof(*o));
	o->min_io_size = min_io_size;
	o->hdrs_min_io_size = subpage_size;
	uint32_t ec_alsize = align_up(UBI_HDR_SIZE, subpage_size);
	o->vid_hdr_offset = vid_hdr_offset ? vid_hdr_offset : ec_alsize;
	o->vid_hdr_aloffset = o->vid_hdr_offset / subpage_size * subpage_size;
	o->vid_hdr_shift = o->vid_hdr_offset - o->vid_hdr_aloffset;
	o->data_offset = align_up(o->vid_hdr_offset + UBI_HDR_SIZE, min_io_size);
	if (o->vid_hdr_offset < UBI_HDR_SIZE || o->vid_hdr_shift % 4 ||
	    o->vid_hdr_shift + UBI_HDR_SIZE > ec_alsize || o->data_offset > peb_size - UBI_HDR_SIZE ||
	    o->data_offset >= peb_size)
		return -EINVAL;
	o->leb_size = peb_size - o->data_offset;
	return 0;
}

static bool all_ff(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != 0xFF)
			return false;
	return true;
}

void ubi_ec_hdr_pack(const struct ubi_ec_hdr *h, uint8_t out[UBI_HDR_SIZE])
{
	memset(out, 0, UBI_HDR_SIZE);
	put_be32(out, UBI_EC_HDR_MAGIC);
	out[4] = h->version ? h->version : UBI_VERSION;
	put_be64(out + 8, h->ec);
	put_be32(out + 16, h->vid_hdr_offset);
	put_be32(out + 20, h->data_offset);
	put_be32(out + 24, h->image_seq);
	put_be32(out + 60, util_crc32(UTIL_CRC32_INIT, out, 60));
}

void ubi_vid_hdr_pack(const struct ubi_vid_hdr *h, uint8_t out[UBI_HDR_SIZE])
{
	memset(out, 0, UBI_HDR_SIZE);
	put_be32(out, UBI_VID_HDR_MAGIC);
	out[4] = h->version ? h->version : UBI_VERSION;
	out[5] = h->vol_type;
	out[6] = h->copy_flag;
	out[7] = h->compat;
	put_be32(out + 8, h->vol_id);
	put_be32(out + 12, h->lnum);
	put_be32(out + 20, h->data_size);
	put_be32(out + 24, h->used_ebs);
	put_be32(out + 28, h->data_pad);
	put_be32(out + 32, h->data_crc);
	put_be64(out + 40, h->sqnum);
	put_be32(out + 60, util_crc32(UTIL_CRC32_INIT, out, 60));
}

static enum ubi_hdr_status classify(const uint8_t *in, uint32_t magic)
{
	if (get_be32(in) != magic)
		return all_ff(in, UBI_HDR_SIZE) ? UBI_HDR_FF : UBI_HDR_BAD;
	if (get_be32(in + 60) != util_crc32(UTIL_CRC32_INIT, in, 60))
		return UBI_HDR_BAD;
	return UBI_HDR_OK;
}

enum ubi_hdr_status ubi_ec_hdr_unpack(const uint8_t in[UBI_HDR_SIZE], struct ubi_ec_hdr *h)
{
	enum ubi_hdr_status s = classify(in, UBI_EC_HDR_MAGIC);
	if (s != UBI_HDR_OK)
		return s;
	h->version = in[4];
	h->ec = get_be64(in + 8);
	h->vid_hdr_offset = get_be32(in + 16);
	h->data_offset = get_be32(in + 20);
	h->image_seq = get_be32(in + 24);
	return UBI_HDR_OK;
}

enum ubi_hdr_status ubi_vid_hdr_unpack(const uint8_t in[UBI_HDR_SIZE], struct ubi_vid_hdr *h)
{
	enum ubi_hdr_status s = classify(in, UBI_VID_HDR_MAGIC);
	if (s != UBI_HDR_OK)
		return s;
	h->version = in[4];
	h->vol_type = in[5];
	h->copy_flag = in[6];
	h->compat = in[7];
	h->vol_id = get_be32(in + 8);
	h->lnum = get_be32(in + 12);
	h->data_size = get_be32(in + 20);
	h->used_ebs = get_be32(in + 24);
	h->data_pad = get_be32(in + 28);
	h->data_crc = get_be32(in + 32);
	h->sqnum = get_be64(in + 40);
	return UBI_HDR_OK;
}

const char *ubi_vid_hdr_check(const struct ubi_vid_hdr *h, uint32_t leb_size)
{
	if (h->version != UBI_VERSION)
		return "unsupported UBI version";
	if (h->copy_flag > 1)
		return "copy_flag is not 0 or 1";
	/* the kernel reads vol_id as an int: 0x80000000 and up are negative,
	 * not internal volumes (those end below) */
	if ((int32_t)h->vol_id < 0)
		return "negative volume ID";
	if ((int32_t)h->lnum < 0 || (int32_t)h->data_size < 0 || (int32_t)h->used_ebs < 0 ||
	    (int32_t)h->data_pad < 0)
		return "negative field";
	if (h->vol_id >= UBI_MAX_VOLUMES && h->vol_id < UBI_INTERNAL_VOL_START)
		return "volume ID out of range";
	if (h->vol_id < UBI_INTERNAL_VOL_START && h->compat != 0)
		return "compat set on a user volume";
	if (h->vol_id >= UBI_INTERNAL_VOL_START && h->compat != UBI_COMPAT_DELETE &&
	    h->compat != UBI_COMPAT_RO && h->compat != UBI_COMPAT_PRESERVE && h->compat != UBI_COMPAT_REJECT)
		return "bad compat value on an internal volume";
	if (h->vol_type != UBI_VID_DYNAMIC && h->vol_type != UBI_VID_STATIC)
		return "bad volume type";
	if (h->data_pad >= leb_size / 2)
		return "data_pad too large";
	if (h->data_size > leb_size)
		return "data_size larger than LEB";
	if (h->vol_type == UBI_VID_STATIC) {
		if (h->used_ebs == 0)
			return "static volume with used_ebs 0";
		if (h->data_size == 0)
			return "static volume LEB with data_size 0";
		if (h->lnum < h->used_ebs - 1) {
			if (h->data_size != leb_size - h->data_pad)
				return "static volume: non-last LEB not full";
		} else if (h->lnum > h->used_ebs - 1) {
			return "static volume: lnum beyond used_ebs";
		}
	} else {
		if (h->used_ebs != 0)
			return "dynamic volume with used_ebs set";
		if (h->copy_flag == 0 && (h->data_crc != 0 || h->data_size != 0))
			return "dynamic volume: data_size/data_crc set without copy_flag";
		if (h->copy_flag == 1 && h->data_size == 0)
			return "copy with data_size 0";
	}
	return NULL;
}

uint32_t ubi_vtbl_slots(uint32_t leb_size)
{
	uint32_t n = leb_size / UBI_VTBL_RECORD_SIZE;
	return n > UBI_MAX_VOLUMES ? UBI_MAX_VOLUMES : n;
}

void ubi_vtbl_record_pack(const struct ubi_vtbl_record *r, uint8_t out[UBI_VTBL_RECORD_SIZE])
{
	memset(out, 0, UBI_VTBL_RECORD_SIZE);
	if (r && r->reserved_pebs) {
		put_be32(out, r->reserved_pebs);
		put_be32(out + 4, r->alignment);
		put_be32(out + 8, r->data_pad);
		out[12] = r->vol_type;
		out[13] = r->upd_marker;
		size_t n = strnlen(r->name, UBI_VOL_NAME_MAX);
		put_be16(out + 14, (uint16_t)n);
		memcpy(out + 16, r->name, n);
		out[144] = r->flags;
	}
	put_be32(out + 168, util_crc32(UTIL_CRC32_INIT, out, UBI_VTBL_RECORD_SIZE_CRC));
}

const char *ubi_vtbl_record_unpack(const uint8_t in[UBI_VTBL_RECORD_SIZE], uint32_t leb_size,
				   uint32_t min_io_size, struct ubi_vtbl_record *r)
{
	memset(r, 0, sizeof(*r));
	if (get_be32(in + 168) != util_crc32(UTIL_CRC32_INIT, in, UBI_VTBL_RECORD_SIZE_CRC))
		return "record CRC mismatch";
	r->reserved_pebs = get_be32(in);
	if (r->reserved_pebs == 0) {
		for (int i = 0; i < UBI_VTBL_RECORD_SIZE_CRC; i++)
			if (in[i])
				return "empty record with non-zero bytes";
		return NULL;
	}
	r->alignment = get_be32(in + 4);
	r->data_pad = get_be32(in + 8);
	r->vol_type = in[12];
	r->upd_marker = in[13];
	r->name_len = get_be16(in + 14);
	r->flags = in[144];
	if ((int32_t)r->reserved_pebs < 0)
		return "negative reserved_pebs";
	if (r->alignment == 0 || r->alignment > leb_size)
		return "bad alignment";
	if (r->alignment != 1 && r->alignment % min_io_size)
		return "alignment not a multiple of min I/O size";
	if (r->data_pad != leb_size % r->alignment)
		return "data_pad does not match alignment";
	if (r->vol_type != UBI_VID_DYNAMIC && r->vol_type != UBI_VID_STATIC)
		return "bad volume type";
	if (r->upd_marker > 1)
		return "bad update marker";
	if (r->name_len == 0 || r->name_len > UBI_VOL_NAME_MAX)
		return "bad name length";
	if (in[16] == 0)
		return "empty name";
	if (in[16 + r->name_len] != 0 || memchr(in + 16, 0, r->name_len))
		return "name length does not match name";
	memcpy(r->name, in + 16, r->name_len);
	r->name[r->name_len] = '\0';
	return NULL;
}
