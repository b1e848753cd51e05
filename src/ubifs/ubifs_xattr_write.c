/* ubifs_xattr_write — setxattr/removexattr on a read-write mount, as the
 * kernel's xattr.c: an xattr is an entry (host, XENT, hash(name)) naming an
 * xattr inode that holds the value; the host counts them (xattr_cnt), their
 * names (xattr_names) and the space they take (xattr_size: the aligned
 * entry plus ALIGN(160 + value + 1, 8) per xattr). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ubifs/ubifs_budget.h"
#include "ubifs/ubifs_journal.h"
#include "ubifs/ubifs_priv.h"
#include "util/util_endian.h"

#define CALC_DENT_SIZE(nlen) ubifs_align8(UBIFS_DENT_NODE_SZ + (uint32_t)(nlen) + 1)
#define CALC_XATTR_BYTES(len) ubifs_align8(UBIFS_INO_NODE_SZ + (uint32_t)(len) + 1)

struct xset {
	struct ubifs_inode host, xi;
};

/* 1 and *xinum when the host has xattr name, 0 when not */
static int find_xent(struct ubifs_fs *fs, uint64_t host, const char *name, size_t nlen, uint64_t *xinum)
{
	struct ubifs_key k = ubifs_key_make((uint32_t)host, UBIFS_XENT_KEY, ubifs_name_hash(fs->key_hash, name, nlen));
	uint32_t len;
	int err = ubifs_tnc_lookup_nm(fs, &k, name, nlen, fs->nbuf, &len);
	if (err == -ENOENT)
		return 0;
	if (err)
		return err;
	*xinum = get_le64(fs->nbuf + 40);
	return 1;
}

static int load(struct ubifs_fs *fs, uint64_t inum, const char *name, size_t nlen, struct xset *x, uint64_t *xinum)
{
	int err = ubifs_read_inode(fs, inum, &x->host);
	if (err)
		return err;
	if (x->host.flags & UBIFS_XATTR_FL)
		return -EINVAL;
	if (nlen == 0 || nlen > UBIFS_MAX_NLEN)
		return -ERANGE;
	err = find_xent(fs, inum, name, nlen, xinum);
	if (err == 1) {
		int e = ubifs_read_inode(fs, *xinum, &x->xi);
		if (e == -ENOENT || (!e && !(x->xi.flags & UBIFS_XATTR_FL)))
			e = util_err_set(&fs->err, -EINVAL, "xattr '%.*s' of inode %llu names inode %llu, not an xattr inode",
					 (int)nlen, name, (unsigned long long)inum, (unsigned long long)*xinum);
		if (e)
			return e;
	}
	return err;
}

int ubifs_setxattr(struct ubifs_fs *fs, uint64_t inum, const char *name, const void *value, size_t size, int flags)
{
	int err = ubifs_check_rw(fs);
	if (err)
		return err;
	if (size > UBIFS_MAX_INO_DATA)
		return -ERANGE;
	size_t nlen = strlen(name);
	struct xset *x = malloc(sizeof(*x));
	if (!x)
		return -ENOMEM;
	struct ubifs_budget_req req = {0};
	uint64_t xinum = 0;
	int found = load(fs, inum, name, nlen, x, &xinum);
	if (found < 0) {
		err = found;
		goto out;
	}
	if (found && (flags & UBIFS_XATTR_CREATE)) {
		err = -EEXIST;
		goto out;
	}
	if (!found && (flags & UBIFS_XATTR_REPLACE)) {
		err = -ENODATA;
		goto out;
	}
	/* kernel change_xattr / create_xattr budgets */
	req.dirtied_ino = 1;
	req.dirtied_ino_d = ubifs_align8(x->host.data_len);
	if (found) {
		req.dirtied_ino = 2;
		req.dirtied_ino_d += ubifs_align8((uint32_t)size);
	} else {
		req.new_ino = 1;
		req.new_dent = 1;
		req.new_ino_d = ubifs_align8((uint32_t)size);
	}
	err = ubifs_budget_space(fs, &req);
	if (err)
		goto out;
	ubifs_now(fs, &x->host.ctime_sec, &x->host.ctime_nsec);
	if (found) {
		x->host.xattr_size -= CALC_XATTR_BYTES(x->xi.data_len);
		x->host.xattr_size += CALC_XATTR_BYTES(size);
		memcpy(x->xi.data, value, size);
		x->xi.data_len = (uint32_t)size;
		x->xi.size = size;
		err = ubifs_jnl_change_xattr(fs, &x->xi, &x->host);
		goto out;
	}
	if ((uint64_t)x->host.xattr_names + x->host.xattr_cnt + nlen + 1 > UBIFS_XATTR_LIST_MAX) {
		err = -ENOSPC;
		goto out;
	}
	err = ubifs_new_inode(fs, &x->host, S_IFREG | 0777, x->host.uid, x->host.gid, &x->xi);
	if (err)
		goto out;
	x->xi.flags |= UBIFS_XATTR_FL;
	memcpy(x->xi.data, value, size);
	x->xi.data_len = (uint32_t)size;
	x->xi.size = size;
	x->host.xattr_cnt++;
	x->host.xattr_size += CALC_DENT_SIZE(nlen) + CALC_XATTR_BYTES(size);
	x->host.xattr_names += (uint32_t)nlen;
	err = ubifs_jnl_update(fs, &x->host, name, nlen, &x->xi, 0, 1);
out:
	ubifs_release_budget(fs, &req);
	free(x);
	return err;
}

int ubifs_removexattr(struct ubifs_fs *fs, uint64_t inum, const char *name)
{
	int err = ubifs_check_rw(fs);
	if (err)
		return err;
	size_t nlen = strlen(name);
	struct xset *x = malloc(sizeof(*x));
	if (!x)
		return -ENOMEM;
	uint64_t xinum = 0;
	int found = load(fs, inum, name, nlen, x, &xinum);
	if (found <= 0) {
		err = found == 0 ? -ENODATA : found;
		goto out;
	}
	struct ubifs_budget_req req = {.dirtied_ino = 2, .mod_dent = 1};
	req.dirtied_ino_d = ubifs_align8(x->host.data_len);
	err = ubifs_budget_space(fs, &req); /* kernel remove_xattr: no budget, no removal */
	if (err)
		goto out;
	ubifs_now(fs, &x->host.ctime_sec, &x->host.ctime_nsec);
	x->host.xattr_cnt--;
	x->host.xattr_size -= CALC_DENT_SIZE(nlen) + CALC_XATTR_BYTES(x->xi.data_len);
	x->host.xattr_names -= (uint32_t)nlen;
	x->xi.nlink = 0;
	err = ubifs_jnl_delete_xattr(fs, &x->host, &x->xi, name, nlen);
	ubifs_release_budget(fs, &req);
out:
	free(x);
	return err;
}
