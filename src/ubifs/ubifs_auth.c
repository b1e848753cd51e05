/* ubifs_auth — authenticated UBIFS (mkfs.ubifs --auth-key, the kernel's
 * CONFIG_UBIFS_FS_AUTHENTICATION), read side, without any key. The
 * superblock names a hash (sha256, ...) and holds the hash of the master
 * node (offline-made images; a kernel-written master carries an HMAC
 * instead); the master holds the hash of the root index node; each index
 * branch holds the hash of its child (index node or leaf). Those hashes are
 * checked here as nodes are read, with OpenSSL's libcrypto. What needs a
 * secret or a certificate is not checked: the HMACs (superblock, master of
 * a kernel-written file system, the journal's authentication nodes) and the
 * superblock's PKCS#7 signature. */
#include <errno.h>
#include <string.h>

#include <openssl/evp.h>

#include "ubifs/ubifs_priv.h"

static int digest(struct ubifs_fs *fs, const uint8_t *data, size_t len, uint8_t *out)
{
	const char *name = ubifs_auth_hash_name(fs->sb.hash_algo);
	const EVP_MD *md = name ? EVP_get_digestbyname(name) : NULL;
	unsigned int ol = 0;
	if (!md || !EVP_Digest(data, len, out, &ol, md, NULL) || ol != fs->hash_len)
		return util_err_set(&fs->err, -EIO, "authenticated UBIFS: hash %s not available (OpenSSL)",
				    name ? name : "?");
	return 0;
}

int ubifs_auth_check(struct ubifs_fs *fs, const uint8_t *node, uint32_t len, const uint8_t *want, uint32_t lnum,
		     uint32_t offs)
{
	uint8_t h[EVP_MAX_MD_SIZE];
	int err = digest(fs, node, len, h);
	if (err)
		return err;
	if (memcmp(h, want, fs->hash_len))
		return util_err_set(&fs->err, -EBADMSG,
				    "authenticated UBIFS: %s node at LEB %u:%u (%u bytes) does not match the hash its "
				    "index branch holds: the node was changed",
				    ubifs_node_type_name(node[20]), lnum, offs, len);
	fs->auth_checked++;
	return 0;
}

int ubifs_auth_master(struct ubifs_fs *fs, const uint8_t *mst)
{
	static const uint8_t zero[UBIFS_MAX_HMAC_LEN];
	if (memcmp(fs->mst.hmac, zero, sizeof(zero))) {
		fs->auth_mst_hmac = 1; /* protected by an HMAC: needs the key */
		return 0;
	}
	uint8_t h[EVP_MAX_MD_SIZE];
	int err = digest(fs, mst + UBIFS_CH_SZ, UBIFS_MST_NODE_SZ - UBIFS_CH_SZ, h);
	if (err)
		return err;
	if (memcmp(h, fs->sb.hash_mst, fs->hash_len))
		return util_err_set(&fs->err, -EBADMSG,
				    "authenticated UBIFS: master node at LEB %u:%u does not match the superblock's hash of it",
				    fs->mst_lnum, fs->mst_offs);
	fs->auth_mst_ok = 1;
	return 0;
}
