/* ubi_media — UBI on-flash structures: EC header, VID header, volume table
 * record; their constants, packing to and parsing from big-endian bytes, and
 * the header/data offsets that follow from flash geometry.
 * Format: shared spec UBI-FORMAT.md §3-§9. */
#ifndef UBIKIT_UBI_MEDIA_H
#define UBIKIT_UBI_MEDIA_H
#include <stdbool.h>
#include <stdint.h>

#define UBI_EC_HDR_MAGIC 0x55424923u  /* "UBI#" */
#define UBI_VID_HDR_MAGIC 0x55424921u /* "UBI!" */
#define UBI_VERSION 1
#define UBI_HDR_SIZE 64
#define UBI_MAX_ERASECOUNTER 0x7FFFFFFFu
#define UBI_MAX_VOLUMES 128
#define UBI_VOL_NAME_MAX 127
#define UBI_INTERNAL_VOL_START 0x7FFFEFFFu
#define UBI_LAYOUT_VOLUME_ID UBI_INTERNAL_VOL_START
#define UBI_LAYOUT_VOLUME_EBS 2
#define UBI_LAYOUT_VOLUME_NAME "layout volume"
#define UBI_FM_SB_VOLUME_ID (UBI_INTERNAL_VOL_START + 1)
#define UBI_FM_DATA_VOLUME_ID (UBI_INTERNAL_VOL_START + 2)
#define UBI_VTBL_RECORD_SIZE 172
#define UBI_VTBL_RECORD_SIZE_CRC 168
#define UBI_VTBL_EMPTY_CRC 0xF116C36Bu

enum ubi_vol_type { UBI_VID_DYNAMIC = 1, UBI_VID_STATIC = 2 };
enum ubi_compat { UBI_COMPAT_DELETE = 1, UBI_COMPAT_RO = 2, UBI_COMPAT_PRESERVE = 4, UBI_COMPAT_REJECT = 5 };
#define UBI_VTBL_AUTORESIZE_FLG 0x01
#define UBI_VTBL_SKIP_CRC_CHECK_FLG 0x02

struct ubi_ec_hdr {
	uint8_t version;
	uint64_t ec;
	uint32_t vid_hdr_offset;
	uint32_t data_offset;
	uint32_t image_seq;
};

struct ubi_vid_hdr {
	uint8_t version;
	uint8_t vol_type;
	uint8_t copy_flag;
	uint8_t compat;
	uint32_t vol_id;
	uint32_t lnum;
	uint32_t data_size;
	uint32_t used_ebs;
	uint32_t data_pad;
	uint32_t data_crc;
	uint64_t sqnum;
};

struct ubi_vtbl_record {
	uint32_t reserved_pebs;
	uint32_t alignment;
	uint32_t data_pad;
	uint8_t vol_type;
	uint8_t upd_marker;
	uint16_t name_len;
	char name[UBI_VOL_NAME_MAX + 1]; /* NUL-terminated */
	uint8_t flags;
};

/* Result of reading a header (spec §7). */
enum ubi_hdr_status {
	UBI_HDR_OK = 0,
	UBI_HDR_FF = 1,  /* all 0xFF: nothing written */
	UBI_HDR_BAD = 2, /* wrong magic (not all FF) or wrong CRC */
};

/* Header offsets for a geometry (spec §3.1). vid_hdr_offset 0 = default. */
struct ubi_offsets {
	uint32_t min_io_size, hdrs_min_io_size;
	uint32_t vid_hdr_offset, vid_hdr_aloffset, vid_hdr_shift;
	uint32_t data_offset;
	uint32_t leb_size; /* peb_size - data_offset */
};
/* Returns 0 or -EINVAL when the combination breaks a kernel sanity rule. */
int ubi_calc_offsets(uint32_t peb_size, uint32_t min_io_size, uint32_t subpage_size,
		     uint32_t vid_hdr_offset, struct ubi_offsets *out);

/* Pack into 64 bytes (CRC filled in). */
void ubi_ec_hdr_pack(const struct ubi_ec_hdr *h, uint8_t out[UBI_HDR_SIZE]);
void ubi_vid_hdr_pack(const struct ubi_vid_hdr *h, uint8_t out[UBI_HDR_SIZE]);
/* Classify and parse 64 bytes. On UBI_HDR_OK *h is filled (field validity
 * beyond magic/CRC is checked by ubi_vid_hdr_check / the attach code). */
enum ubi_hdr_status ubi_ec_hdr_unpack(const uint8_t in[UBI_HDR_SIZE], struct ubi_ec_hdr *h);
enum ubi_hdr_status ubi_vid_hdr_unpack(const uint8_t in[UBI_HDR_SIZE], struct ubi_vid_hdr *h);
/* Kernel validity checks of a CRC-good VID header (spec §5). Returns NULL if
 * valid, else a short reason for error messages. */
const char *ubi_vid_hdr_check(const struct ubi_vid_hdr *h, uint32_t leb_size);

/* vtbl: number of slots for a LEB size, min(128, leb_size / 172). */
uint32_t ubi_vtbl_slots(uint32_t leb_size);
void ubi_vtbl_record_pack(const struct ubi_vtbl_record *r, uint8_t out[UBI_VTBL_RECORD_SIZE]);
/* Parse + check one record (spec §9.1). Returns NULL if valid (empty records
 * come back with reserved_pebs 0), else a reason. */
const char *ubi_vtbl_record_unpack(const uint8_t in[UBI_VTBL_RECORD_SIZE], uint32_t leb_size,
				   uint32_t min_io_size, struct ubi_vtbl_record *r);

#endif
