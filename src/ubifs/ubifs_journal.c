/* ubifs_journal — journal heads and the kernel's journal operations (see
 * ubifs_journal.h). Space in a head is reserved before sequence numbers are
 * taken (a new bud's reference node gets the lower sqnum), the group of
 * nodes goes through the head's write-buffer, then the TNC changes in
 * memory and the nodes it no longer needs become dirt in the LPT (the TNC
 * adds that dirt itself; the journal adds the dirt of nodes that are dead
 * on arrival: deletion entries, truncation nodes, deletion inodes). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ubifs/ubifs_gc.h"
#include "ubifs/ubifs_journal.h"
#include "ubifs/ubifs_orphan_write.h"
#include "ubifs/ubifs_log.h"
#include "ubifs/ubifs_lpt.h"
#include "ubifs/ubifs_priv.h"
#include "ubifs/ubifs_wbuf.h"
#include "util/util_endian.h"

struct ubifs_jnl {
	struct ubifs_fs *fs;
	unsigned cnt;
	struct ubifs_wbuf *heads;
};

/* kernel bud_wbuf_callback: the bud's free space follows the buffer; the
 * padding of a sync is dirt */
static int wbuf_cb(struct ubifs_fs *fs, uint32_t lnum, uint32_t free, uint32_t pad)
{
	struct ubifs_lprops lp;
	int err = ubifs_lpt_lookup(fs->lpt, lnum, &lp);
	if (err)
		return err;
	return ubifs_lpt_set(fs->lpt, lnum, free, lp.dirty + pad, lp.flags);
}

int ubifs_jnl_open(struct ubifs_fs *fs, struct ubifs_jnl **out)
{
	struct ubifs_jnl *j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	j->fs = fs;
	j->cnt = fs->jhead_cnt;
	j->heads = calloc(j->cnt, sizeof(*j->heads));
	if (!j->heads) {
		free(j);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < j->cnt; i++) {
		int err = ubifs_wbuf_init(fs, &j->heads[i], (int)i);
		if (err) {
			ubifs_jnl_close(j);
			return err;
		}
		j->heads[i].sync_cb = wbuf_cb;
	}
	*out = j;
	return 0;
}

void ubifs_jnl_close(struct ubifs_jnl *j)
{
	if (!j)
		return;
	for (unsigned i = 0; i < j->cnt; i++)
		ubifs_wbuf_free(&j->heads[i]);
	free(j->heads);
	free(j);
}

struct ubifs_wbuf *ubifs_jnl_head(struct ubifs_jnl *j, unsigned jhead)
{
	return jhead < j->cnt ? &j->heads[jhead] : NULL;
}

unsigned ubifs_jnl_head_cnt(const struct ubifs_jnl *j)
{
	return j->cnt;
}

void ubifs_jnl_overlay(const struct ubifs_jnl *j, uint32_t lnum, uint32_t offs, void *buf, size_t len)
{
	for (unsigned i = 0; i < j->cnt; i++)
		ubifs_wbuf_overlay(&j->heads[i], lnum, offs, buf, len);
}

int ubifs_jnl_sync_all(struct ubifs_fs *fs)
{
	for (unsigned i = 0; i < fs->jnl->cnt; i++) {
		int err = ubifs_wbuf_sync(&fs->jnl->heads[i]);
		if (err)
			return err;
	}
	return 0;
}

int ubifs_jnl_sync_ino(struct ubifs_fs *fs, uint32_t inum)
{
	for (unsigned i = 0; i < fs->jnl->cnt; i++) {
		struct ubifs_wbuf *w = &fs->jnl->heads[i];
		if (ubifs_wbuf_has_ino(w, inum)) {
			int err = ubifs_wbuf_sync(w);
			if (err)
				return err;
		}
	}
	return 0;
}

int ubifs_jnl_return_leb(struct ubifs_fs *fs, uint32_t lnum)
{
	struct ubifs_lprops lp;
	int err = ubifs_lpt_lookup(fs->lpt, lnum, &lp);
	if (err)
		return err;
	return ubifs_lpt_set(fs->lpt, lnum, lp.free, lp.dirty, lp.flags & ~UBIFS_LPROPS_TAKEN);
}

/* kernel reserve_space + make_reservation: room for len bytes in head
 * jhead, switching to a new bud when needed (a full log means a commit
 * first, then one more try). */
static int reserve(struct ubifs_fs *fs, unsigned jhead, uint32_t len)
{
	struct ubifs_wbuf *w = &fs->jnl->heads[jhead];
	int nospc = 0, commits = 0;
	for (int tries = 0;; tries++) {
		if (fs->ro_error)
			return -EROFS;
		if (w->lnum >= 0 && fs->leb_size - w->offs - w->used >= len)
			return 0;
		uint32_t lnum, offs;
		int err = ubifs_lpt_find_free(fs->lpt, len, jhead == UBIFS_BASE_HEAD, &lnum, &offs);
		if (err == -ENOSPC) /* GC makes a LEB free, or asks for a commit first */
			err = ubifs_gc_make_free(fs, &lnum, &offs, &nospc);
		if (err == -EAGAIN && commits++ < 128) {
			err = ubifs_commit(fs);
			if (err)
				return err;
			continue;
		}
		if (err == -EAGAIN)
			return util_err_set(&fs->err, -ENOSPC, "journal head %u: stuck in space allocation", jhead);
		if (err)
			return err;
		/* the old bud's bytes reach the flash before the new bud is
		 * referred to, or recovery would find the older one torn */
		err = ubifs_wbuf_sync(w);
		if (!err)
			err = ubifs_log_add_bud(fs->log, (int)jhead, lnum, offs);
		if (!err)
			return ubifs_wbuf_seek(w, lnum, offs);
		int e1 = ubifs_jnl_return_leb(fs, lnum);
		if (err == -EAGAIN && !e1 && tries < 2) {
			err = ubifs_commit(fs);
			if (err)
				return err;
			continue;
		}
		if (err == -EAGAIN)
			err = util_err_set(&fs->err, -ENOSPC, "journal head %u: the log stays full after a commit",
					   jhead);
		return e1 && err == -EAGAIN ? e1 : err;
	}
}

static int write_head(struct ubifs_fs *fs, unsigned jhead, const uint8_t *buf, uint32_t len, uint32_t *lnum,
		      uint32_t *offs, int sync)
{
	struct ubifs_wbuf *w = &fs->jnl->heads[jhead];
	*lnum = (uint32_t)w->lnum;
	*offs = w->offs + w->used;
	int err = ubifs_wbuf_write(w, buf, len);
	if (!err && sync)
		err = ubifs_wbuf_sync(w);
	return err;
}

static uint8_t dent_type(uint32_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFDIR:
		return UBIFS_ITYPE_DIR;
	case S_IFLNK:
		return UBIFS_ITYPE_LNK;
	case S_IFBLK:
		return UBIFS_ITYPE_BLK;
	case S_IFCHR:
		return UBIFS_ITYPE_CHR;
	case S_IFIFO:
		return UBIFS_ITYPE_FIFO;
	case S_IFSOCK:
		return UBIFS_ITYPE_SOCK;
	default:
		return UBIFS_ITYPE_REG;
	}
}

/* kernel pack_inode: a deletion inode (nlink 0) carries no data; group
 * member (last = end of the group) with the next sqnum */
static uint32_t pack_ino(struct ubifs_fs *fs, uint8_t *p, const struct ubifs_inode *ui, int last)
{
	struct ubifs_ino_node n;
	memset(&n, 0, sizeof(n));
	n.key = ubifs_key_make((uint32_t)ui->inum, UBIFS_INO_KEY, 0);
	n.creat_sqnum = ui->creat_sqnum;
	n.size = ui->size;
	n.atime_sec = ui->atime_sec;
	n.ctime_sec = ui->ctime_sec;
	n.mtime_sec = ui->mtime_sec;
	n.atime_nsec = ui->atime_nsec;
	n.ctime_nsec = ui->ctime_nsec;
	n.mtime_nsec = ui->mtime_nsec;
	n.nlink = ui->nlink;
	n.uid = ui->uid;
	n.gid = ui->gid;
	n.mode = ui->mode;
	n.flags = ui->flags;
	n.data_len = ui->data_len;
	n.xattr_cnt = ui->xattr_cnt;
	n.xattr_size = ui->xattr_size;
	n.xattr_names = ui->xattr_names;
	n.compr_type = ui->compr_type;
	uint32_t attach = ui->nlink ? ui->data_len : 0;
	uint32_t len = UBIFS_INO_NODE_SZ + attach;
	ubifs_ino_pack(p, &n, ui->data, attach, last ? UBIFS_LAST_OF_NODE_GROUP : UBIFS_IN_NODE_GROUP);
	ubifs_node_finish(p, len, ubifs_next_sqnum(fs));
	return len;
}

/* zero the 8-alignment gap after a node inside a group buffer */
static void gap0(uint8_t *p, uint32_t len)
{
	uint32_t a = ubifs_align8(len);
	if (a > len)
		memset(p + len, 0, a - len);
}

static struct ubifs_key dent_key(const struct ubifs_fs *fs, uint64_t dir, const char *name, size_t nlen, int xent)
{
	return ubifs_key_make((uint32_t)dir, xent ? UBIFS_XENT_KEY : UBIFS_DENT_KEY,
			      ubifs_name_hash(fs->key_hash, name, nlen));
}

/* cookie: random with double hashing (kernel set_dent_cookie), else 0 */
static uint32_t dent_cookie(struct ubifs_fs *fs)
{
	if (!fs->double_hash)
		return 0;
	uint64_t x = fs->max_sqnum * 0x9E3779B97F4A7C15ull;
	x ^= x >> 29;
	return (uint32_t)x;
}

static uint32_t pack_dent(struct ubifs_fs *fs, uint8_t *p, const struct ubifs_key *key, uint64_t inum, uint8_t type,
			  const char *name, size_t nlen)
{
	uint32_t len = UBIFS_DENT_NODE_SZ + (uint32_t)nlen + 1;
	ubifs_dent_pack(p, key, inum, type, name, (uint16_t)nlen, dent_cookie(fs), UBIFS_IN_NODE_GROUP);
	ubifs_node_finish(p, len, ubifs_next_sqnum(fs));
	gap0(p, len);
	return len;
}

static int add_dirt(struct ubifs_fs *fs, uint32_t lnum, uint32_t len)
{
	return ubifs_lpt_add_dirt(fs->lpt, lnum, len);
}

static int note_ino(struct ubifs_fs *fs, unsigned jhead, uint64_t inum)
{
	return ubifs_wbuf_add_ino(&fs->jnl->heads[jhead], (uint32_t)inum);
}

/* after a failed write or index change nothing more may be written */
static int fail(struct ubifs_fs *fs, int err)
{
	if (err && err != -ENOSPC)
		fs->ro_error = 1;
	return err;
}

int ubifs_jnl_update(struct ubifs_fs *fs, const struct ubifs_inode *dir, const char *name, size_t nlen,
		     const struct ubifs_inode *ino, int deletion, int xent)
{
	int last_ref = deletion && ino->nlink == 0;
	uint32_t dlen = UBIFS_DENT_NODE_SZ + (uint32_t)nlen + 1;
	uint32_t ilen = UBIFS_INO_NODE_SZ + (last_ref ? 0 : ino->data_len);
	uint32_t hlen = UBIFS_INO_NODE_SZ + dir->data_len;
	uint32_t len = ubifs_align8(dlen) + ubifs_align8(ilen) + hlen;
	uint8_t *buf = calloc(1, len + 8);
	if (!buf)
		return -ENOMEM;
	int err = reserve(fs, UBIFS_BASE_HEAD, len);
	if (err)
		goto out;
	struct ubifs_key key = dent_key(fs, dir->inum, name, nlen, xent);
	pack_dent(fs, buf, &key, deletion ? 0 : ino->inum, dent_type(ino->mode), name, nlen);
	uint8_t *p = buf + ubifs_align8(dlen);
	gap0(p, pack_ino(fs, p, ino, 0));
	pack_ino(fs, p + ubifs_align8(ilen), dir, 1);
	uint32_t lnum, offs;
	err = write_head(fs, UBIFS_BASE_HEAD, buf, len, &lnum, &offs, 0);
	if (!err)
		err = note_ino(fs, UBIFS_BASE_HEAD, ino->inum);
	if (!err)
		err = note_ino(fs, UBIFS_BASE_HEAD, dir->inum);
	if (err)
		goto out;
	if (deletion) {
		err = ubifs_tnc_remove_nm(fs, &key, name, nlen);
		if (!err)
			err = add_dirt(fs, lnum, dlen);
	} else {
		err = ubifs_tnc_add_nm(fs, &key, name, nlen, lnum, offs, dlen);
	}
	/* a deleted inode stays in the index until ubifs_jnl_delete_inode
	 * (it may still be open: the orphan case) */
	struct ubifs_key ik = ubifs_key_make((uint32_t)ino->inum, UBIFS_INO_KEY, 0);
	if (!err)
		err = ubifs_tnc_add(fs, &ik, lnum, offs + ubifs_align8(dlen), ilen);
	struct ubifs_key hk = ubifs_key_make((uint32_t)dir->inum, UBIFS_INO_KEY, 0);
	if (!err)
		err = ubifs_tnc_add(fs, &hk, lnum, offs + ubifs_align8(dlen) + ubifs_align8(ilen), hlen);
	err = fail(fs, err);
out:
	free(buf);
	return err;
}

int ubifs_jnl_write_data(struct ubifs_fs *fs, const struct ubifs_inode *ino, uint32_t block, const void *data,
			 uint32_t len)
{
	if (len > UBIFS_BLOCK_SIZE)
		return -EINVAL;
	uint8_t *buf = malloc(UBIFS_DATA_NODE_SZ + 2 * UBIFS_BLOCK_SIZE + 8);
	if (!buf)
		return -ENOMEM;
	unsigned compr = (ino->flags & UBIFS_COMPR_FL) ? ino->compr_type : UBIFS_COMPR_NONE;
	size_t out_len = 2 * UBIFS_BLOCK_SIZE;
	int err = ubifs_compress(data, len, buf + UBIFS_DATA_NODE_SZ, &out_len, &compr);
	if (err)
		goto out;
	uint32_t dlen = UBIFS_DATA_NODE_SZ + (uint32_t)out_len;
	struct ubifs_key key = ubifs_key_make((uint32_t)ino->inum, UBIFS_DATA_KEY, block);
	err = reserve(fs, UBIFS_DATA_HEAD, dlen);
	if (err)
		goto out;
	ubifs_data_pack(buf, &key, len, (uint16_t)compr, buf + UBIFS_DATA_NODE_SZ, (uint32_t)out_len,
			UBIFS_NO_NODE_GROUP);
	ubifs_node_finish(buf, dlen, ubifs_next_sqnum(fs));
	uint32_t lnum, offs;
	err = write_head(fs, UBIFS_DATA_HEAD, buf, dlen, &lnum, &offs, 0);
	if (!err)
		err = note_ino(fs, UBIFS_DATA_HEAD, ino->inum);
	if (!err)
		err = ubifs_tnc_add(fs, &key, lnum, offs, dlen);
	err = fail(fs, err);
out:
	free(buf);
	return err;
}

/* last_ref: the inode's deletion (no data, removed from the index) */
static int write_inode_in(struct ubifs_fs *fs, const struct ubifs_inode *ino, unsigned jhead, int last_ref)
{
	uint32_t len = UBIFS_INO_NODE_SZ + (last_ref ? 0 : ino->data_len);
	uint8_t *buf = calloc(1, len + 8);
	if (!buf)
		return -ENOMEM;
	int err = reserve(fs, jhead, len);
	if (err)
		goto out;
	pack_ino(fs, buf, ino, 1);
	uint32_t lnum, offs;
	err = write_head(fs, jhead, buf, len, &lnum, &offs, 0);
	if (!err)
		err = note_ino(fs, jhead, ino->inum);
	if (err)
		goto out;
	if (last_ref) {
		err = ubifs_tnc_remove_ino(fs, (uint32_t)ino->inum);
		if (!err)
			err = add_dirt(fs, lnum, len);
	} else {
		struct ubifs_key k = ubifs_key_make((uint32_t)ino->inum, UBIFS_INO_KEY, 0);
		err = ubifs_tnc_add(fs, &k, lnum, offs, len);
	}
	err = fail(fs, err);
out:
	free(buf);
	return err;
}

/* an open orphan keeps its inode (nlink 0) in the index until its last close */
static int is_last_ref(const struct ubifs_fs *fs, const struct ubifs_inode *ino)
{
	return ino->nlink == 0 && !ubifs_orph_is_orphan(fs->orph, ino->inum);
}

int ubifs_jnl_write_inode(struct ubifs_fs *fs, const struct ubifs_inode *ino)
{
	return write_inode_in(fs, ino, UBIFS_BASE_HEAD, is_last_ref(fs, ino));
}

int ubifs_jnl_write_inode_data(struct ubifs_fs *fs, const struct ubifs_inode *ino)
{
	/* The base head may hold this inode's directory entry or an earlier
	 * state of it (create, link, rename, unlink) not yet on flash: the
	 * kernel keeps those in one head, in order, so that the inode never
	 * reaches the flash before its entries. Written out first here, for
	 * the same order across the two heads. */
	struct ubifs_wbuf *base = &fs->jnl->heads[UBIFS_BASE_HEAD];
	if (ubifs_wbuf_has_ino(base, (uint32_t)ino->inum)) {
		int err = ubifs_wbuf_sync(base);
		if (err)
			return fail(fs, err);
	}
	return write_inode_in(fs, ino, UBIFS_DATA_HEAD, is_last_ref(fs, ino));
}

int ubifs_jnl_delete_inode(struct ubifs_fs *fs, const struct ubifs_inode *ino, uint64_t del_cmtno)
{
	/* still an orphan here (see ubifs_orph_last_link) */
	if (del_cmtno != fs->cmt_no)
		return write_inode_in(fs, ino, UBIFS_BASE_HEAD, 1);
	return fail(fs, ubifs_tnc_remove_ino(fs, (uint32_t)ino->inum));
}

/* kernel truncate_data_node: the kept head of the last block, compressed
 * again with the node's compressor */
static int cut_block(struct ubifs_fs *fs, uint8_t *dn, uint32_t dn_len, uint32_t new_len, uint32_t *out_node_len)
{
	unsigned compr = get_le16(dn + 44);
	uint8_t *tmp = malloc(UBIFS_BLOCK_SIZE);
	if (!tmp)
		return -ENOMEM;
	size_t got = UBIFS_BLOCK_SIZE;
	int err = ubifs_decompress(fs, dn + UBIFS_DATA_NODE_SZ, dn_len - UBIFS_DATA_NODE_SZ, tmp, &got, compr);
	if (err || got < new_len) {
		free(tmp);
		return err ? err : -EINVAL;
	}
	size_t out = 2 * UBIFS_BLOCK_SIZE;
	if (compr == UBIFS_COMPR_NONE) {
		memcpy(dn + UBIFS_DATA_NODE_SZ, tmp, new_len);
		out = new_len;
	} else {
		err = ubifs_compress(tmp, new_len, dn + UBIFS_DATA_NODE_SZ, &out, &compr);
	}
	free(tmp);
	if (err)
		return err;
	put_le16(dn + 44, (uint16_t)compr);
	put_le16(dn + 46, 0);
	put_le32(dn + 40, new_len);
	*out_node_len = UBIFS_DATA_NODE_SZ + (uint32_t)out;
	return 0;
}

int ubifs_jnl_truncate(struct ubifs_fs *fs, const struct ubifs_inode *ino, uint64_t old_size, uint64_t new_size)
{
	uint32_t inum = (uint32_t)ino->inum;
	uint8_t *buf = calloc(1, UBIFS_INO_NODE_SZ + UBIFS_TRUN_NODE_SZ + UBIFS_DATA_NODE_SZ + 2 * UBIFS_BLOCK_SIZE + 16);
	if (!buf)
		return -ENOMEM;
	uint8_t *trun = buf + UBIFS_INO_NODE_SZ;
	uint8_t *dn = trun + UBIFS_TRUN_NODE_SZ;
	uint32_t dlen = (uint32_t)(new_size & (UBIFS_BLOCK_SIZE - 1));
	uint32_t blk = (uint32_t)(new_size >> UBIFS_BLOCK_SHIFT);
	struct ubifs_key bkey = ubifs_key_make(inum, UBIFS_DATA_KEY, blk);
	int err = 0;
	if (dlen) {
		uint32_t nlen;
		err = ubifs_tnc_lookup(fs, &bkey, dn, &nlen);
		if (err == -ENOENT) {
			dlen = 0; /* a hole */
			err = 0;
		} else if (err) {
			goto out;
		} else {
			uint32_t size = get_le32(dn + 40);
			if (size == 0 || size > UBIFS_BLOCK_SIZE) {
				err = util_err_set(&fs->err, -EINVAL, "bad data node (block %u, inode %u)", blk, inum);
				goto out;
			}
			if (size <= dlen)
				dlen = 0; /* nothing to cut */
			else if ((err = cut_block(fs, dn, nlen, dlen, &dlen)) != 0)
				goto out;
		}
	}
	uint32_t len = UBIFS_INO_NODE_SZ + UBIFS_TRUN_NODE_SZ + dlen;
	err = reserve(fs, UBIFS_BASE_HEAD, len);
	if (err)
		goto out;
	pack_ino(fs, buf, ino, 0);
	ubifs_trun_pack(trun, inum, old_size, new_size, dlen ? UBIFS_IN_NODE_GROUP : UBIFS_LAST_OF_NODE_GROUP);
	ubifs_node_finish(trun, UBIFS_TRUN_NODE_SZ, ubifs_next_sqnum(fs));
	if (dlen) {
		dn[21] = UBIFS_LAST_OF_NODE_GROUP;
		put_le32(dn + 16, dlen);
		ubifs_node_finish(dn, dlen, ubifs_next_sqnum(fs));
	}
	uint32_t lnum, offs;
	err = write_head(fs, UBIFS_BASE_HEAD, buf, len, &lnum, &offs, 0);
	if (!err)
		err = note_ino(fs, UBIFS_BASE_HEAD, inum);
	if (err)
		goto out;
	if (dlen)
		err = ubifs_tnc_add(fs, &bkey, lnum, offs + UBIFS_INO_NODE_SZ + UBIFS_TRUN_NODE_SZ, dlen);
	struct ubifs_key ik = ubifs_key_make(inum, UBIFS_INO_KEY, 0);
	if (!err)
		err = ubifs_tnc_add(fs, &ik, lnum, offs, UBIFS_INO_NODE_SZ);
	if (!err)
		err = add_dirt(fs, lnum, UBIFS_TRUN_NODE_SZ);
	if (!err) {
		uint64_t first = (new_size >> UBIFS_BLOCK_SHIFT) + ((new_size & (UBIFS_BLOCK_SIZE - 1)) ? 1 : 0);
		uint64_t lastb = (old_size >> UBIFS_BLOCK_SHIFT) - ((old_size & (UBIFS_BLOCK_SIZE - 1)) ? 0 : 1);
		if (old_size && first <= lastb) {
			struct ubifs_key lo = ubifs_key_make(inum, UBIFS_DATA_KEY, (uint32_t)first);
			struct ubifs_key hi = ubifs_key_make(inum, UBIFS_DATA_KEY, (uint32_t)lastb);
			err = ubifs_tnc_remove_range(fs, &lo, &hi);
		}
	}
	err = fail(fs, err);
out:
	free(buf);
	return err;
}

int ubifs_jnl_rename(struct ubifs_fs *fs, const struct ubifs_inode *old_dir, const struct ubifs_inode *old_ino,
		     const char *old_name, size_t old_nlen, const struct ubifs_inode *new_dir,
		     const struct ubifs_inode *new_ino, const char *new_name, size_t new_nlen,
		     const struct ubifs_inode *whiteout)
{
	int move = old_dir->inum != new_dir->inum;
	int last_ref = new_ino && new_ino->nlink == 0;
	uint32_t dlen1 = UBIFS_DENT_NODE_SZ + (uint32_t)new_nlen + 1;
	uint32_t dlen2 = UBIFS_DENT_NODE_SZ + (uint32_t)old_nlen + 1;
	uint32_t ilen = new_ino ? UBIFS_INO_NODE_SZ + (last_ref ? 0 : new_ino->data_len) : 0;
	uint32_t wlen = whiteout ? UBIFS_INO_NODE_SZ + whiteout->data_len : 0;
	uint32_t plen = UBIFS_INO_NODE_SZ; /* directories carry no data */
	uint32_t len = ubifs_align8(dlen1) + ubifs_align8(dlen2) + ubifs_align8(ilen) + ubifs_align8(wlen) +
		       ubifs_align8(plen) + (move ? plen : 0);
	uint8_t *buf = calloc(1, len + 16);
	if (!buf)
		return -ENOMEM;
	int err = reserve(fs, UBIFS_BASE_HEAD, len);
	if (err)
		goto out;
	struct ubifs_key k1 = dent_key(fs, new_dir->inum, new_name, new_nlen, 0);
	struct ubifs_key k2 = dent_key(fs, old_dir->inum, old_name, old_nlen, 0);
	uint8_t *p = buf;
	pack_dent(fs, p, &k1, old_ino->inum, dent_type(old_ino->mode), new_name, new_nlen);
	p += ubifs_align8(dlen1);
	if (whiteout)
		pack_dent(fs, p, &k2, whiteout->inum, dent_type(whiteout->mode), old_name, old_nlen);
	else
		pack_dent(fs, p, &k2, 0, UBIFS_ITYPE_REG, old_name, old_nlen);
	p += ubifs_align8(dlen2);
	if (new_ino) {
		gap0(p, pack_ino(fs, p, new_ino, 0));
		p += ubifs_align8(ilen);
	}
	if (whiteout) {
		gap0(p, pack_ino(fs, p, whiteout, 0));
		p += ubifs_align8(wlen);
	}
	if (!move) {
		pack_ino(fs, p, old_dir, 1);
	} else {
		gap0(p, pack_ino(fs, p, old_dir, 0));
		p += ubifs_align8(plen);
		pack_ino(fs, p, new_dir, 1);
	}
	uint32_t lnum, offs;
	err = write_head(fs, UBIFS_BASE_HEAD, buf, len, &lnum, &offs, 0);
	if (!err)
		err = note_ino(fs, UBIFS_BASE_HEAD, new_dir->inum);
	if (!err)
		err = note_ino(fs, UBIFS_BASE_HEAD, old_dir->inum);
	if (!err && new_ino)
		err = note_ino(fs, UBIFS_BASE_HEAD, new_ino->inum);
	if (err)
		goto out;
	err = ubifs_tnc_add_nm(fs, &k1, new_name, new_nlen, lnum, offs, dlen1);
	offs += ubifs_align8(dlen1);
	if (!err) {
		if (whiteout) {
			err = ubifs_tnc_add_nm(fs, &k2, old_name, old_nlen, lnum, offs, dlen2);
		} else {
			err = add_dirt(fs, lnum, dlen2);
			if (!err)
				err = ubifs_tnc_remove_nm(fs, &k2, old_name, old_nlen);
		}
	}
	offs += ubifs_align8(dlen2);
	if (!err && new_ino) {
		struct ubifs_key k = ubifs_key_make((uint32_t)new_ino->inum, UBIFS_INO_KEY, 0);
		err = ubifs_tnc_add(fs, &k, lnum, offs, ilen);
		offs += ubifs_align8(ilen);
	}
	if (!err && whiteout) {
		struct ubifs_key k = ubifs_key_make((uint32_t)whiteout->inum, UBIFS_INO_KEY, 0);
		err = ubifs_tnc_add(fs, &k, lnum, offs, wlen);
		offs += ubifs_align8(wlen);
	}
	if (!err) {
		struct ubifs_key k = ubifs_key_make((uint32_t)old_dir->inum, UBIFS_INO_KEY, 0);
		err = ubifs_tnc_add(fs, &k, lnum, offs, plen);
	}
	if (!err && move) {
		offs += ubifs_align8(plen);
		struct ubifs_key k = ubifs_key_make((uint32_t)new_dir->inum, UBIFS_INO_KEY, 0);
		err = ubifs_tnc_add(fs, &k, lnum, offs, plen);
	}
	err = fail(fs, err);
out:
	free(buf);
	return err;
}

int ubifs_jnl_xrename(struct ubifs_fs *fs, const struct ubifs_inode *fst_dir, const struct ubifs_inode *fst_ino,
		      const char *fst_name, size_t fst_nlen, const struct ubifs_inode *snd_dir,
		      const struct ubifs_inode *snd_ino, const char *snd_name, size_t snd_nlen)
{
	int two = fst_dir->inum != snd_dir->inum;
	uint32_t dlen1 = UBIFS_DENT_NODE_SZ + (uint32_t)snd_nlen + 1;
	uint32_t dlen2 = UBIFS_DENT_NODE_SZ + (uint32_t)fst_nlen + 1;
	uint32_t plen = UBIFS_INO_NODE_SZ;
	uint32_t len = ubifs_align8(dlen1) + ubifs_align8(dlen2) + ubifs_align8(plen) + (two ? plen : 0);
	uint8_t *buf = calloc(1, len + 16);
	if (!buf)
		return -ENOMEM;
	int err = reserve(fs, UBIFS_BASE_HEAD, len);
	if (err)
		goto out;
	struct ubifs_key k1 = dent_key(fs, snd_dir->inum, snd_name, snd_nlen, 0);
	struct ubifs_key k2 = dent_key(fs, fst_dir->inum, fst_name, fst_nlen, 0);
	uint8_t *p = buf;
	pack_dent(fs, p, &k1, fst_ino->inum, dent_type(fst_ino->mode), snd_name, snd_nlen);
	p += ubifs_align8(dlen1);
	pack_dent(fs, p, &k2, snd_ino->inum, dent_type(snd_ino->mode), fst_name, fst_nlen);
	p += ubifs_align8(dlen2);
	if (!two) {
		pack_ino(fs, p, fst_dir, 1);
	} else {
		gap0(p, pack_ino(fs, p, fst_dir, 0));
		p += ubifs_align8(plen);
		pack_ino(fs, p, snd_dir, 1);
	}
	uint32_t lnum, offs;
	err = write_head(fs, UBIFS_BASE_HEAD, buf, len, &lnum, &offs, 0);
	if (!err)
		err = note_ino(fs, UBIFS_BASE_HEAD, fst_dir->inum);
	if (!err)
		err = note_ino(fs, UBIFS_BASE_HEAD, snd_dir->inum);
	if (err)
		goto out;
	err = ubifs_tnc_add_nm(fs, &k1, snd_name, snd_nlen, lnum, offs, dlen1);
	offs += ubifs_align8(dlen1);
	if (!err)
		err = ubifs_tnc_add_nm(fs, &k2, fst_name, fst_nlen, lnum, offs, dlen2);
	offs += ubifs_align8(dlen2);
	struct ubifs_key k = ubifs_key_make((uint32_t)fst_dir->inum, UBIFS_INO_KEY, 0);
	if (!err)
		err = ubifs_tnc_add(fs, &k, lnum, offs, plen);
	if (!err && two) {
		offs += ubifs_align8(plen);
		k = ubifs_key_make((uint32_t)snd_dir->inum, UBIFS_INO_KEY, 0);
		err = ubifs_tnc_add(fs, &k, lnum, offs, plen);
	}
	err = fail(fs, err);
out:
	free(buf);
	return err;
}

int ubifs_jnl_delete_xattr(struct ubifs_fs *fs, const struct ubifs_inode *host, const struct ubifs_inode *xino,
			   const char *name, size_t nlen)
{
	uint32_t xlen = UBIFS_DENT_NODE_SZ + (uint32_t)nlen + 1;
	uint32_t hlen = UBIFS_INO_NODE_SZ + host->data_len;
	uint32_t len = ubifs_align8(xlen) + UBIFS_INO_NODE_SZ + ubifs_align8(hlen);
	uint8_t *buf = calloc(1, len + 16);
	if (!buf)
		return -ENOMEM;
	int err = reserve(fs, UBIFS_BASE_HEAD, len);
	if (err)
		goto out;
	struct ubifs_key xk = dent_key(fs, host->inum, name, nlen, 1);
	pack_dent(fs, buf, &xk, 0, dent_type(xino->mode), name, nlen);
	/* kernel: the xent of a deletion carries cookie 0 */
	put_le32(buf + 52, 0);
	put_le32(buf + 4, ubifs_node_crc(buf, xlen));
	uint8_t *p = buf + ubifs_align8(xlen);
	pack_ino(fs, p, xino, 0); /* nlink 0: no data, 160 bytes */
	p += UBIFS_INO_NODE_SZ;
	pack_ino(fs, p, host, 1);
	uint32_t lnum, offs;
	err = write_head(fs, UBIFS_BASE_HEAD, buf, len, &lnum, &offs, 0);
	if (!err)
		err = note_ino(fs, UBIFS_BASE_HEAD, host->inum);
	if (err)
		goto out;
	err = ubifs_tnc_remove_nm(fs, &xk, name, nlen);
	if (!err)
		err = add_dirt(fs, lnum, xlen);
	if (!err) {
		struct ubifs_key lo = ubifs_key_make((uint32_t)xino->inum, UBIFS_INO_KEY, 0);
		struct ubifs_key hi = {(uint32_t)xino->inum, 0xFFFFFFFFu};
		err = ubifs_tnc_remove_range(fs, &lo, &hi);
	}
	if (!err)
		err = add_dirt(fs, lnum, UBIFS_INO_NODE_SZ);
	if (!err) {
		struct ubifs_key hk = ubifs_key_make((uint32_t)host->inum, UBIFS_INO_KEY, 0);
		err = ubifs_tnc_add(fs, &hk, lnum, offs + len - hlen, hlen);
	}
	err = fail(fs, err);
out:
	free(buf);
	return err;
}

int ubifs_jnl_change_xattr(struct ubifs_fs *fs, const struct ubifs_inode *xino, const struct ubifs_inode *host)
{
	uint32_t len1 = UBIFS_INO_NODE_SZ + host->data_len;
	uint32_t len2 = UBIFS_INO_NODE_SZ + xino->data_len;
	uint32_t a1 = ubifs_align8(len1);
	uint32_t len = a1 + ubifs_align8(len2);
	uint8_t *buf = calloc(1, len + 16);
	if (!buf)
		return -ENOMEM;
	int err = reserve(fs, UBIFS_BASE_HEAD, len);
	if (err)
		goto out;
	gap0(buf, pack_ino(fs, buf, host, 0));
	gap0(buf + a1, pack_ino(fs, buf + a1, xino, 1));
	uint32_t lnum, offs;
	err = write_head(fs, UBIFS_BASE_HEAD, buf, len, &lnum, &offs, 0);
	if (!err)
		err = note_ino(fs, UBIFS_BASE_HEAD, host->inum);
	if (!err)
		err = note_ino(fs, UBIFS_BASE_HEAD, xino->inum);
	if (err)
		goto out;
	struct ubifs_key k = ubifs_key_make((uint32_t)host->inum, UBIFS_INO_KEY, 0);
	err = ubifs_tnc_add(fs, &k, lnum, offs, len1);
	k = ubifs_key_make((uint32_t)xino->inum, UBIFS_INO_KEY, 0);
	if (!err)
		err = ubifs_tnc_add(fs, &k, lnum, offs + a1, len2);
	err = fail(fs, err);
out:
	free(buf);
	return err;
}
