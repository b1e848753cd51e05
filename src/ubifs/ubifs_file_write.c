/* ubifs_file_write — file contents and attributes on a read-write mount:
 * writing data block by block (a block partly written is read, merged and
 * written whole up to the file size, as the kernel's page writeback does),
 * truncation (shrinking writes a truncation node and cuts the last block,
 * growing only changes the size: holes stay holes), setattr. The inode is
 * written after its data, as writeback writes the inode after the pages. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ubifs/ubifs_journal.h"
#include "ubifs/ubifs_priv.h"

static int get_file(struct ubifs_fs *fs, uint64_t inum, struct ubifs_inode *ui)
{
	int err = ubifs_read_inode(fs, inum, ui);
	if (err)
		return err;
	if (S_ISDIR(ui->mode))
		return -EISDIR;
	if (!S_ISREG(ui->mode) || (ui->flags & UBIFS_XATTR_FL))
		return -EINVAL;
	if (ui->flags & UBIFS_CRYPT_FL)
		return util_err_set(&fs->err, -EOPNOTSUPP, "inode %llu is encrypted: writing is not supported",
				    (unsigned long long)inum);
	return 0;
}

ssize_t ubifs_write_data(struct ubifs_fs *fs, uint64_t inum, const void *buf, size_t len, uint64_t off)
{
	int err = ubifs_check_rw(fs);
	if (err)
		return err;
	if (off > UBIFS_MAX_INODE_SZ || len > UBIFS_MAX_INODE_SZ - off)
		return -EFBIG;
	struct ubifs_inode *ui = malloc(sizeof(*ui));
	uint8_t *blk = malloc(UBIFS_BLOCK_SIZE);
	if (!ui || !blk) {
		free(ui);
		free(blk);
		return -ENOMEM;
	}
	err = get_file(fs, inum, ui);
	if (err || len == 0)
		goto out;
	uint64_t end = off + len, new_size = end > ui->size ? end : ui->size;
	const uint8_t *src = buf;
	for (uint64_t b = off / UBIFS_BLOCK_SIZE; b * UBIFS_BLOCK_SIZE < end; b++) {
		uint64_t bstart = b * UBIFS_BLOCK_SIZE;
		uint64_t from = off > bstart ? off : bstart;
		uint64_t to = end < bstart + UBIFS_BLOCK_SIZE ? end : bstart + UBIFS_BLOCK_SIZE;
		uint32_t blen = (uint32_t)((new_size - bstart) < UBIFS_BLOCK_SIZE ? new_size - bstart : UBIFS_BLOCK_SIZE);
		memset(blk, 0, UBIFS_BLOCK_SIZE);
		if (from > bstart || to < bstart + blen) {
			/* partly written block: keep what is there */
			ssize_t got = ubifs_read_data(fs, ui, blk, UBIFS_BLOCK_SIZE, bstart);
			if (got < 0) {
				err = (int)got;
				goto out;
			}
		}
		memcpy(blk + (from - bstart), src + (from - off), (size_t)(to - from));
		err = ubifs_jnl_write_data(fs, ui, (uint32_t)b, blk, blen);
		if (err)
			goto out;
	}
	ui->size = new_size;
	ubifs_now(fs, &ui->mtime_sec, &ui->mtime_nsec);
	ui->ctime_sec = ui->mtime_sec;
	ui->ctime_nsec = ui->mtime_nsec;
	err = ubifs_jnl_write_inode(fs, ui);
out:
	free(ui);
	free(blk);
	return err ? err : (ssize_t)len;
}

int ubifs_truncate(struct ubifs_fs *fs, uint64_t inum, uint64_t size)
{
	int err = ubifs_check_rw(fs);
	if (err)
		return err;
	if (size > UBIFS_MAX_INODE_SZ)
		return -EFBIG;
	struct ubifs_inode *ui = malloc(sizeof(*ui));
	if (!ui)
		return -ENOMEM;
	err = get_file(fs, inum, ui);
	if (!err) {
		uint64_t old = ui->size;
		ui->size = size;
		ubifs_now(fs, &ui->mtime_sec, &ui->mtime_nsec);
		ui->ctime_sec = ui->mtime_sec;
		ui->ctime_nsec = ui->mtime_nsec;
		if (size < old)
			err = ubifs_jnl_truncate(fs, ui, old, size);
		else
			err = ubifs_jnl_write_inode(fs, ui);
	}
	free(ui);
	return err;
}

int ubifs_setattr(struct ubifs_fs *fs, uint64_t inum, const struct ubifs_setattr *a)
{
	int err = ubifs_check_rw(fs);
	if (err)
		return err;
	struct ubifs_inode *ui = malloc(sizeof(*ui));
	if (!ui)
		return -ENOMEM;
	err = ubifs_read_inode(fs, inum, ui);
	if (!err && (ui->flags & UBIFS_XATTR_FL))
		err = -ENOENT;
	if (!err) {
		if (a->valid & UBIFS_SET_MODE)
			ui->mode = (ui->mode & S_IFMT) | (a->mode & 07777);
		if (a->valid & UBIFS_SET_UID)
			ui->uid = a->uid;
		if (a->valid & UBIFS_SET_GID)
			ui->gid = a->gid;
		if (a->valid & UBIFS_SET_ATIME) {
			ui->atime_sec = a->atime_sec;
			ui->atime_nsec = a->atime_nsec;
		}
		if (a->valid & UBIFS_SET_MTIME) {
			ui->mtime_sec = a->mtime_sec;
			ui->mtime_nsec = a->mtime_nsec;
		}
		if (a->valid & UBIFS_SET_CTIME) {
			ui->ctime_sec = a->ctime_sec;
			ui->ctime_nsec = a->ctime_nsec;
		} else {
			ubifs_now(fs, &ui->ctime_sec, &ui->ctime_nsec);
		}
		err = ubifs_jnl_write_inode(fs, ui);
	}
	free(ui);
	return err;
}
