/* ubifs_dir — directories, read side: name lookup (hash key, then names of
 * colliding entries compared) and readdir in the kernel's order, by key.
 * A readdir position is (hash << 32) | k: the k-th entry (1-based) of the
 * run of entries with that hash, in index order. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ubifs/ubifs_priv.h"

int ubifs_lookup(struct ubifs_fs *fs, uint64_t dir, const char *name, size_t nlen, uint64_t *inum, uint8_t *type)
{
	ubifs_tnc_shrink(fs);
	if (nlen == 0 || nlen > UBIFS_MAX_NLEN)
		return nlen ? -ENAMETOOLONG : -ENOENT;
	if (dir == 0 || dir > UBIFS_MAX_INUM)
		return -ENOENT;
	int enc = ubifs_crypt_dir_encrypted(fs, dir);
	if (enc < 0)
		return enc;
	if (enc) {
		/* names are shown decrypted or as no-key names: compare those */
		struct ubifs_dirent *e = malloc(sizeof(*e));
		if (!e)
			return -ENOMEM;
		uint64_t pos = 0;
		int r;
		while ((r = ubifs_readdir(fs, dir, pos, e)) == 1) {
			pos = e->pos;
			if (e->nlen == nlen && !memcmp(e->name, name, nlen)) {
				*inum = e->inum;
				if (type)
					*type = e->type;
				free(e);
				return 0;
			}
		}
		free(e);
		return r ? r : -ENOENT;
	}
	struct ubifs_key k = ubifs_key_make((uint32_t)dir, UBIFS_DENT_KEY, ubifs_name_hash(fs->key_hash, name, nlen));
	uint32_t len;
	int err = ubifs_tnc_lookup_nm(fs, &k, name, nlen, fs->nbuf, &len);
	if (err)
		return err;
	struct ubifs_dent_node d;
	ubifs_dent_unpack(fs->nbuf, &d);
	if (d.inum == 0)
		return -ENOENT;
	*inum = d.inum;
	if (type)
		*type = d.type;
	return 0;
}

int ubifs_readdir(struct ubifs_fs *fs, uint64_t dir, uint64_t pos, struct ubifs_dirent *ent)
{
	ubifs_tnc_shrink(fs);
	if (dir == 0 || dir > UBIFS_MAX_INUM)
		return -ENOENT;
	uint32_t hash = (uint32_t)(pos >> 32) & UBIFS_S_KEY_HASH_MASK;
	uint32_t skip = (uint32_t)pos; /* entries of that hash already returned */
	if (pos == 0)
		hash = 0, skip = 0;
	struct ubifs_key k = ubifs_key_make((uint32_t)dir, UBIFS_DENT_KEY, hash);
	struct ubifs_tnc_pos p;
	int err = ubifs_tnc_seek(fs, &k, 0, &p);
	uint32_t k_in_run = 0; /* index within the run of the current entry */
	uint32_t run_hash = hash;
	int first = 1;
	while (!err) {
		const struct ubifs_zbranch *zb = ubifs_tnc_at(&p);
		if (zb->key.inum != dir || ubifs_key_type(&zb->key) != UBIFS_DENT_KEY)
			return 0;
		uint32_t h = ubifs_key_value(&zb->key);
		if (pos && h < hash) /* a damaged index could otherwise make readdir go round */
			return util_err_set(&fs->err, -EINVAL,
					    "index out of key order: directory %llu entry hash 0x%08x found after 0x%08x (LEB %u:%u)",
					    (unsigned long long)dir, h, hash, zb->lnum, zb->offs);
		if (first || h != run_hash) {
			run_hash = h;
			k_in_run = 0;
			first = 0;
		}
		k_in_run++;
		if (h == hash && k_in_run <= skip) {
			err = ubifs_tnc_next(fs, &p);
			continue;
		}
		err = ubifs_tnc_read_leaf(fs, zb, fs->nbuf);
		if (err)
			return err;
		struct ubifs_dent_node d;
		ubifs_dent_unpack(fs->nbuf, &d);
		ent->inum = d.inum;
		ent->type = d.type;
		ent->nlen = d.nlen;
		memcpy(ent->name, d.name, d.nlen);
		ent->name[d.nlen] = 0;
		ent->hash = h;
		ent->cookie = d.cookie;
		ent->pos = ((uint64_t)h << 32) | k_in_run;
		int enc = ubifs_crypt_dir_encrypted(fs, dir);
		if (enc < 0)
			return enc;
		if (enc) {
			err = ubifs_crypt_name(fs, dir, ent);
			if (err)
				return err;
		}
		return 1;
	}
	return err == -ENOENT ? 0 : err;
}
