/* ubifs_io — LEB access for the whole UBIFS layer: reads (which see the
 * bytes still in the journal heads' write-buffers, as the kernel's
 * ubifs_read_node_wbuf does), single-node reads with the checks every node
 * read goes through, and the write side: LEB write/map/unmap/change, the
 * sequence-number counter, and writing one node padded to min_io_size.
 * The write-buffers themselves are in ubifs_wbuf.c. */
#include <errno.h>
#include <string.h>

#include "ubifs/ubifs_lcache.h"
#include "ubifs/ubifs_priv.h"
#include "util/util_endian.h"

int ubifs_leb_read(struct ubifs_fs *fs, uint32_t lnum, uint32_t offs, void *buf, size_t len)
{
	if (lnum >= fs->vol->leb_count || offs > fs->leb_size || len > fs->leb_size - offs)
		return util_err_set(&fs->err, -EINVAL, "read of LEB %u:%u len %zu is outside the volume (%u LEBs of %u)",
				    lnum, offs, len, fs->vol->leb_count, fs->leb_size);
	int err = 0;
	if (!fs->lcache || ubifs_lcache_read(fs->lcache, fs, lnum, offs, buf, len) != 1)
		err = fs->vol->read(fs->vol->ctx, lnum, offs, buf, len);
	if (err)
		return util_err_set(&fs->err, err < 0 ? err : -EIO, "cannot read LEB %u:%u len %zu (error %d)", lnum,
				    offs, len, err);
	if (fs->jnl)
		ubifs_jnl_overlay(fs->jnl, lnum, offs, buf, len);
	return 0;
}

static int check_write(struct ubifs_fs *fs, uint32_t lnum, const char *what)
{
	if (fs->read_only || !fs->vol->write)
		return util_err_set(&fs->err, -EROFS, "%s of LEB %u on a read-only mount", what, lnum);
	if (fs->ro_error)
		return -EROFS;
	if (lnum >= fs->vol->leb_count)
		return util_err_set(&fs->err, -EINVAL, "%s of LEB %u outside the volume (%u LEBs)", what, lnum,
				    fs->vol->leb_count);
	return 0;
}

/* A failed write leaves the file system read-only, as in the kernel
 * (ubifs_ro_mode): nothing more may reach the flash. */
static int write_failed(struct ubifs_fs *fs, int err, const char *what, uint32_t lnum, uint32_t offs, size_t len)
{
	fs->ro_error = 1;
	return util_err_set(&fs->err, err < 0 ? err : -EIO, "%s of LEB %u:%u len %zu failed (error %d); now read-only",
			    what, lnum, offs, len, err);
}

int ubifs_leb_write(struct ubifs_fs *fs, uint32_t lnum, uint32_t offs, const void *buf, size_t len)
{
	int err = check_write(fs, lnum, "write");
	if (err)
		return err;
	ubifs_lcache_drop(fs->lcache, lnum);
	if (offs > fs->leb_size || len > fs->leb_size - offs || offs % fs->min_io_size || len % fs->min_io_size)
		return util_err_set(&fs->err, -EINVAL, "write of LEB %u:%u len %zu: not min. I/O aligned or past the end",
				    lnum, offs, len);
	fs->stat_bytes_written += len;
	err = fs->vol->write(fs->vol->ctx, lnum, offs, buf, len);
	return err ? write_failed(fs, err, "write", lnum, offs, len) : 0;
}

int ubifs_leb_change(struct ubifs_fs *fs, uint32_t lnum, const void *buf, size_t len)
{
	int err = check_write(fs, lnum, "atomic change");
	if (err)
		return err;
	ubifs_lcache_drop(fs->lcache, lnum);
	fs->stat_bytes_written += len;
	err = fs->vol->change(fs->vol->ctx, lnum, buf, len);
	return err ? write_failed(fs, err, "atomic change", lnum, 0, len) : 0;
}

int ubifs_leb_unmap(struct ubifs_fs *fs, uint32_t lnum)
{
	int err = check_write(fs, lnum, "unmap");
	if (err)
		return err;
	ubifs_lcache_drop(fs->lcache, lnum);
	err = fs->vol->unmap(fs->vol->ctx, lnum);
	return err ? write_failed(fs, err, "unmap", lnum, 0, 0) : 0;
}

int ubifs_leb_map(struct ubifs_fs *fs, uint32_t lnum)
{
	int err = check_write(fs, lnum, "map");
	if (err)
		return err;
	ubifs_lcache_drop(fs->lcache, lnum);
	err = fs->vol->map(fs->vol->ctx, lnum);
	return err ? write_failed(fs, err, "map", lnum, 0, 0) : 0;
}

uint64_t ubifs_next_sqnum(struct ubifs_fs *fs)
{
	return ++fs->max_sqnum;
}

int ubifs_write_node(struct ubifs_fs *fs, uint8_t *buf, uint32_t len, uint32_t lnum, uint32_t offs)
{
	uint32_t alen = (len + fs->min_io_size - 1) / fs->min_io_size * fs->min_io_size;
	ubifs_node_finish(buf, len, ubifs_next_sqnum(fs));
	uint32_t a8 = ubifs_align8(len);
	if (a8 > len)
		memset(buf + len, 0, a8 - len);
	ubifs_pad_pack(buf + a8, alen - a8);
	return ubifs_leb_write(fs, lnum, offs, buf, alen);
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
	/* index nodes of an authenticated file system are longer (hashes in the
	 * branches): their exact length is checked by the TNC */
	enum ubifs_chk c = ubifs_check_node(buf, avail, offs, fs->leb_size, fs->hash_len ? 0 : fs->fanout);
	if (c == UBIFS_CHK_BAD_CRC && fs->skip_crc)
		c = UBIFS_CHK_OK;
	return c;
}
