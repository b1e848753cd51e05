/* ubifs_io — reading LEBs and single nodes from the volume, with the
 * checks every node read goes through. (Write buffers come with the write
 * path.) */
#include <errno.h>
#include <string.h>

#include "ubifs/ubifs_priv.h"
#include "util/util_endian.h"

int ubifs_leb_read(struct ubifs_fs *fs, uint32_t lnum, uint32_t offs, void *buf, size_t len)
{
	if (lnum >= fs->vol->leb_count || offs > fs->leb_size || len > fs->leb_size - offs)
		return util_err_set(&fs->err, -EINVAL, "read of LEB %u:%u len %zu is outside the volume (%u LEBs of %u)",
				    lnum, offs, len, fs->vol->leb_count, fs->leb_size);
	int err = fs->vol->read(fs->vol->ctx, lnum, offs, buf, len);
	if (err)
		return util_err_set(&fs->err, err < 0 ? err : -EIO, "cannot read LEB %u:%u len %zu (error %d)", lnum,
				    offs, len, err);
	return 0;
}

int ubifs_read_node(struct ubifs_fs *fs, uint8_t *buf, unsigned type, uint32_t len, uint32_t lnum, uint32_t offs)
{
	int err = ubifs_leb_read(fs, lnum, offs, buf, len);
	if (err)
		return err;
	enum ubifs_chk c = ubifs_fs_check_node(fs, buf, len, offs);
	if (c != UBIFS_CHK_OK)
		return util_err_set(&fs->err, -EINVAL, "expected %s node (len %u) at LEB %u:%u: %s",
				    ubifs_node_type_name(type), len, lnum, offs, ubifs_chk_str(c));
	if (buf[20] != type)
		return util_err_set(&fs->err, -EINVAL, "expected %s node at LEB %u:%u, found %s node",
				    ubifs_node_type_name(type), lnum, offs, ubifs_node_type_name(buf[20]));
	if (get_le32(buf + 16) != len)
		return util_err_set(&fs->err, -EINVAL, "%s node at LEB %u:%u has length %u, expected %u",
				    ubifs_node_type_name(type), lnum, offs, get_le32(buf + 16), len);
	return 0;
}

int ubifs_is_empty(const uint8_t *buf, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (buf[i] != 0xFF)
			return 0;
	return 1;
}

enum ubifs_chk ubifs_fs_check_node(const struct ubifs_fs *fs, const uint8_t *buf, size_t avail, uint32_t offs)
{
	enum ubifs_chk c = ubifs_check_node(buf, avail, offs, fs->leb_size, fs->fanout);
	if (c == UBIFS_CHK_BAD_CRC && fs->skip_crc)
		c = UBIFS_CHK_OK;
	return c;
}
