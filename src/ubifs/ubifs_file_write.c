/* ubifs_file_write — file contents and attributes on a read-write mount:
 * writing data goes to the write-back cache (ubifs_wcache.c: budgeted
 * block by block, written back whole up to the file size, as the kernel's
 * page writeback does),
 * truncation (shrinking writes a truncation node and cuts the last block,
 * growing only changes the size: holes stay holes), setattr. The inode is
 * written after its data, as writeback writes the inode after the pages. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ubifs/ubifs_budget.h"
#include "ubifs/ubifs_journal.h"
#include "ubifs/ubifs_priv.h"
#include "ubifs/ubifs_wcache.h"

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
	if (!ui)
		return -ENOMEM;
	err = get_file(fs, inum, ui);
	ssize_t ret = err ? err : len ? ubifs_wcache_write(fs, ui, buf, len, off) : 0;
	free(ui);
	return ret;
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
	/* kernel do_truncation / do_setattr: the inode, and a cut last block */
	struct ubifs_budget_req req = {.dirtied_ino = 1};
	if (!err && size < ui->size && (size & (UBIFS_BLOCK_SIZE - 1)))
		req.dirtied_page = 1;
	if (!err) {
		err = ubifs_budget_space(fs, &req);
		if (err == -ENOSPC && size == 0 && size < ui->size)
			err = 0; /* truncation to zero frees space: allowed without a budget */
	}
	if (!err) {
		uint64_t old = ui->size;
		ubifs_wcache_truncate(fs, inum, size); /* cached blocks beyond go, the last one is cut */
		ui->size = size;
		ubifs_now(fs, &ui->mtime_sec, &ui->mtime_nsec);
		ui->ctime_sec = ui->mtime_sec;
		ui->ctime_nsec = ui->mtime_nsec;
		if (size < old)
			err = ubifs_jnl_truncate(fs, ui, old, size);
		else
			err = ubifs_jnl_write_inode(fs, ui);
		ubifs_wcache_times_written(fs, inum);
		ubifs_release_budget(fs, &req);
		if (!err && size < old)
			ubifs_budget_deleted(fs);
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
	struct ubifs_budget_req req = {.dirtied_ino = 1};
	if (!err) {
		req.dirtied_ino_d = ubifs_align8(ui->data_len);
		err = ubifs_budget_space(fs, &req);
	}
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
		ubifs_wcache_times_written(fs, inum);
		ubifs_release_budget(fs, &req);
	}
	free(ui);
	return err;
}
