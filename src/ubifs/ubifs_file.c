/* ubifs_file — inodes and file data, read side: loading an inode with the
 * kernel's validity checks (iget), and reading file data block by block
 * (holes read as zeros, data nodes decompressed and checked against their
 * size, nothing returned beyond the inode size). Data and sizes still in
 * the write-back cache (ubifs_wcache.c) are seen here. */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <string.h>
#include <sys/stat.h>

#include "ubifs/ubifs_priv.h"
#include "ubifs/ubifs_wcache.h"

int ubifs_read_inode(struct ubifs_fs *fs, uint64_t inum, struct ubifs_inode *ino)
{
	ubifs_tnc_shrink(fs);
	if (inum == 0 || inum > UBIFS_MAX_INUM)
		return -ENOENT;
	struct ubifs_key k = ubifs_key_make((uint32_t)inum, UBIFS_INO_KEY, 0);
	struct ubifs_zbranch at;
	int err = ubifs_tnc_lookup_at(fs, &k, fs->nbuf, &at);
	if (err)
		return err;
	uint32_t len = at.len;
	struct ubifs_ino_node n;
	ubifs_ino_unpack(fs->nbuf, &n);
	const char *bad = NULL;
	int code = 0;
	if (n.size > UBIFS_MAX_INODE_SZ)
		bad = "inode is too large", code = 1;
	else if (n.compr_type >= UBIFS_COMPR_TYPES_CNT)
		bad = "unknown compression type", code = 2;
	else if ((uint64_t)n.xattr_names + n.xattr_cnt > UBIFS_XATTR_LIST_MAX)
		bad = "too many xattr names", code = 3;
	else if (n.data_len > UBIFS_MAX_INO_DATA || UBIFS_INO_NODE_SZ + n.data_len != len)
		bad = "bad inline data length", code = 4;
	else if ((n.flags & UBIFS_XATTR_FL) && !S_ISREG(n.mode))
		bad = "xattr flag on a non-regular inode", code = 5;
	else {
		switch (n.mode & S_IFMT) {
		case S_IFREG:
			if (!(n.flags & UBIFS_XATTR_FL) && n.data_len != 0)
				bad = "regular file with inline data", code = 10;
			break;
		case S_IFDIR:
			if (n.data_len != 0)
				bad = "directory with inline data", code = 11;
			break;
		case S_IFLNK:
			if (n.data_len == 0)
				bad = "symlink without a target", code = 12;
			break;
		case S_IFBLK:
		case S_IFCHR:
			if (n.data_len != 4 && n.data_len != 8)
				bad = "device inode without a 4- or 8-byte device number", code = 13;
			break;
		case S_IFSOCK:
		case S_IFIFO:
			if (n.data_len != 0)
				bad = "fifo/socket with inline data", code = 14;
			break;
		default:
			bad = "unknown file type in mode", code = 15;
			break;
		}
	}
	if (bad) {
		return util_err_set(&fs->err, -EINVAL,
				    "inode %llu (node at LEB %u:%u): %s (mode 0%o, data_len %u, size %llu; kernel check %d)",
				    (unsigned long long)inum, at.lnum, at.offs, bad, n.mode, n.data_len,
				    (unsigned long long)n.size, code);
	}
	memset(ino, 0, offsetof(struct ubifs_inode, data));
	ino->inum = inum;
	ino->creat_sqnum = n.creat_sqnum;
	ino->size = n.size;
	ino->atime_sec = n.atime_sec;
	ino->ctime_sec = n.ctime_sec;
	ino->mtime_sec = n.mtime_sec;
	ino->atime_nsec = n.atime_nsec;
	ino->ctime_nsec = n.ctime_nsec;
	ino->mtime_nsec = n.mtime_nsec;
	ino->nlink = n.nlink;
	ino->uid = n.uid;
	ino->gid = n.gid;
	ino->mode = n.mode;
	ino->flags = n.flags;
	ino->xattr_cnt = n.xattr_cnt;
	ino->xattr_size = n.xattr_size;
	ino->xattr_names = n.xattr_names;
	ino->compr_type = n.compr_type;
	ino->data_len = n.data_len;
	memcpy(ino->data, n.data, n.data_len);
	if (S_ISBLK(n.mode) || S_ISCHR(n.mode))
		ubifs_decode_dev(n.data, n.data_len, &ino->rdev_major, &ino->rdev_minor);
	if (S_ISREG(n.mode)) {
		ubifs_size_fix_apply(fs, inum, &ino->size);
		ubifs_wcache_inode(fs, ino); /* written but not yet written back: size, times */
	}
	return 0;
}

/* One 4096-byte block of a file into out (zeros for a hole). */
static int read_block(struct ubifs_fs *fs, uint64_t inum, uint32_t block, uint8_t *out, int crypt)
{
	if (ubifs_wcache_block(fs, inum, block, out))
		return 0; /* dirty in the write-back cache */
	if (crypt) {
		int e = ubifs_crypt_prepare(fs, inum);
		if (e)
			return e;
	}
	struct ubifs_key k = ubifs_key_make((uint32_t)inum, UBIFS_DATA_KEY, block);
	struct ubifs_zbranch at;
	int err = ubifs_tnc_lookup_at(fs, &k, fs->nbuf, &at);
	uint32_t len = at.len;
	if (err == -ENOENT) {
		memset(out, 0, UBIFS_BLOCK_SIZE);
		return 0;
	}
	if (err)
		return err;
	struct ubifs_data_node d;
	ubifs_data_unpack(fs->nbuf, len, &d);
	if (d.size == 0 || d.size > UBIFS_BLOCK_SIZE)
		return util_err_set(&fs->err, -EINVAL, "data node of inode %llu block %u at LEB %u:%u: bad size %u",
				    (unsigned long long)inum, block, at.lnum, at.offs, d.size);
	uint32_t stored = d.data_len;
	if (crypt) {
		/* encrypted after compression, padded to 16 bytes: compr_size is the real length */
		if (d.compr_size == 0 || d.compr_size > d.data_len)
			return util_err_set(&fs->err, -EINVAL,
					    "data node of inode %llu block %u at LEB %u:%u: bad compr_size %u (%u stored bytes)",
					    (unsigned long long)inum, block, at.lnum, at.offs, d.compr_size, d.data_len);
		err = ubifs_crypt_data(fs, inum, block, (uint8_t *)d.data, d.data_len);
		if (err)
			return err;
		stored = d.compr_size;
	}
	size_t out_len = UBIFS_BLOCK_SIZE;
	err = ubifs_decompress(fs, d.data, stored, out, &out_len, d.compr_type);
	if (err == -EOPNOTSUPP)
		return util_err_set(&fs->err, err, "data node of inode %llu block %u: compressor %s not built in",
				    (unsigned long long)inum, block, ubifs_compr_name(d.compr_type));
	if (err == -ENOMEM)
		return util_err_set(&fs->err, err, "data node of inode %llu block %u: out of memory decompressing (%s)",
				    (unsigned long long)inum, block, ubifs_compr_name(d.compr_type));
	if (err || out_len != d.size)
		return util_err_set(&fs->err, -EINVAL,
				    "data node of inode %llu block %u at LEB %u:%u (%s, %u stored bytes): decompresses to %zu bytes, expected %u%s",
				    (unsigned long long)inum, block, at.lnum, at.offs, ubifs_compr_name(d.compr_type), d.data_len,
				    err ? (size_t)0 : out_len, d.size, err ? " (bad compressed data)" : "");
	if (d.size < UBIFS_BLOCK_SIZE)
		memset(out + d.size, 0, UBIFS_BLOCK_SIZE - d.size);
	return 0;
}

ssize_t ubifs_read_data(struct ubifs_fs *fs, const struct ubifs_inode *ino, void *buf, size_t len, uint64_t off)
{
	if (S_ISDIR(ino->mode))
		return -EISDIR;
	if (!S_ISREG(ino->mode))
		return -EINVAL;
	if ((ino->flags & UBIFS_CRYPT_FL) && !fs->fscrypt_key_len && ino->size)
		return util_err_set(&fs->err, -ENOKEY, "inode %llu is encrypted (fscrypt) and no key was given",
				    (unsigned long long)ino->inum);
	if (off >= ino->size)
		return 0;
	if (len > ino->size - off)
		len = (size_t)(ino->size - off);
	if (len > SSIZE_MAX)
		len = SSIZE_MAX;
	uint8_t block[UBIFS_BLOCK_SIZE];
	size_t done = 0;
	while (done < len) {
		ubifs_tnc_shrink(fs);
		uint64_t pos = off + done;
		uint32_t b = (uint32_t)(pos >> UBIFS_BLOCK_SHIFT);
		uint32_t in = (uint32_t)(pos & (UBIFS_BLOCK_SIZE - 1));
		int err = read_block(fs, ino->inum, b, block, !!(ino->flags & UBIFS_CRYPT_FL));
		if (err)
			return err;
		size_t n = UBIFS_BLOCK_SIZE - in;
		if (n > len - done)
			n = len - done;
		memcpy((uint8_t *)buf + done, block + in, n);
		done += n;
	}
	return (ssize_t)done;
}

int ubifs_next_data(struct ubifs_fs *fs, const struct ubifs_inode *ino, uint64_t off, uint64_t *data_off)
{
	if (!S_ISREG(ino->mode))
		return -EINVAL;
	if (off >= ino->size)
		return -ENXIO;
	/* Data keys of one inode are contiguous in the index, ordered by block:
	 * the first leaf at or after (inum, data, block of off) answers. */
	ubifs_tnc_shrink(fs);
	uint32_t b = (uint32_t)(off >> UBIFS_BLOCK_SHIFT);
	struct ubifs_key k = ubifs_key_make((uint32_t)ino->inum, UBIFS_DATA_KEY, b);
	struct ubifs_tnc_pos pos;
	int err = ubifs_tnc_seek(fs, &k, 0, &pos);
	if (err == -ENOENT)
		return -ENXIO;
	if (err)
		return err;
	const struct ubifs_key *at = &ubifs_tnc_at(&pos)->key;
	if (at->inum != (uint32_t)ino->inum || ubifs_key_type(at) != UBIFS_DATA_KEY)
		return -ENXIO;
	uint64_t start = (uint64_t)ubifs_key_value(at) << UBIFS_BLOCK_SHIFT;
	if (start < off)
		start = off;
	if (start >= ino->size)
		return -ENXIO;
	*data_off = start;
	return 0;
}
