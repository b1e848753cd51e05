/* ubifs_xattr — extended attributes, read side (spec §7): xattr entries
 * keyed (host, XENT, hash(name)) name an xattr inode whose inline data is
 * the value. The encryption context ("c") is hidden, as the kernel does. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ubifs/ubifs_priv.h"

static int visible(const char *name, size_t nlen)
{
	return !(nlen == 1 && name[0] == 'c');
}

ssize_t ubifs_listxattr(struct ubifs_fs *fs, uint64_t inum, char *buf, size_t size)
{
	ubifs_tnc_shrink(fs);
	if (inum == 0 || inum > UBIFS_MAX_INUM)
		return -ENOENT;
	struct ubifs_key k = ubifs_key_make((uint32_t)inum, UBIFS_XENT_KEY, 0);
	struct ubifs_tnc_pos p;
	size_t total = 0;
	int err = ubifs_tnc_seek(fs, &k, 0, &p);
	while (!err) {
		const struct ubifs_zbranch *zb = ubifs_tnc_at(&p);
		if (zb->key.inum != inum || ubifs_key_type(&zb->key) != UBIFS_XENT_KEY)
			break;
		err = ubifs_tnc_read_leaf(fs, zb, fs->nbuf);
		if (err)
			return err;
		struct ubifs_dent_node d;
		ubifs_dent_unpack(fs->nbuf, &d);
		if (visible(d.name, d.nlen)) {
			if (size) {
				if (total + d.nlen + 1 > size)
					return -ERANGE;
				memcpy(buf + total, d.name, d.nlen);
				buf[total + d.nlen] = 0;
			}
			total += d.nlen + 1u;
		}
		err = ubifs_tnc_next(fs, &p);
	}
	if (err && err != -ENOENT)
		return err;
	return (ssize_t)total;
}

static ssize_t getxattr(struct ubifs_fs *fs, uint64_t inum, const char *name, void *buf, size_t size, int raw)
{
	ubifs_tnc_shrink(fs);
	size_t nlen = strlen(name);
	if (nlen == 0 || nlen > UBIFS_MAX_NLEN)
		return nlen ? -ERANGE : -ENODATA;
	if (inum == 0 || inum > UBIFS_MAX_INUM || (!raw && !visible(name, nlen)))
		return -ENODATA;
	struct ubifs_key k = ubifs_key_make((uint32_t)inum, UBIFS_XENT_KEY, ubifs_name_hash(fs->key_hash, name, nlen));
	uint32_t len;
	int err = ubifs_tnc_lookup_nm(fs, &k, name, nlen, fs->nbuf, &len);
	if (err == -ENOENT)
		return -ENODATA;
	if (err)
		return err;
	struct ubifs_dent_node d;
	ubifs_dent_unpack(fs->nbuf, &d);
	struct ubifs_inode *xi = malloc(sizeof(*xi));
	if (!xi)
		return -ENOMEM;
	err = ubifs_read_inode(fs, d.inum, xi);
	if (err == -ENOENT)
		err = util_err_set(&fs->err, -EINVAL, "xattr '%s' of inode %llu names inode %llu, which does not exist",
				   name, (unsigned long long)inum, (unsigned long long)d.inum);
	else if (!err && !(xi->flags & UBIFS_XATTR_FL))
		err = util_err_set(&fs->err, -EINVAL, "xattr '%s' of inode %llu: inode %llu is not an xattr inode", name,
				   (unsigned long long)inum, (unsigned long long)d.inum);
	ssize_t ret = err;
	if (!err) {
		ret = (ssize_t)xi->data_len;
		if (size) {
			if (xi->data_len > size)
				ret = -ERANGE;
			else
				memcpy(buf, xi->data, xi->data_len);
		}
	}
	free(xi);
	return ret;
}

ssize_t ubifs_getxattr(struct ubifs_fs *fs, uint64_t inum, const char *name, void *buf, size_t size)
{
	return getxattr(fs, inum, name, buf, size, 0);
}

ssize_t ubifs_getxattr_raw(struct ubifs_fs *fs, uint64_t inum, const char *name, void *buf, size_t size)
{
	return getxattr(fs, inum, name, buf, size, 1);
}
