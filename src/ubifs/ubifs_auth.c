/* ubifs_auth — authenticated UBIFS (mkfs.ubifs --auth-key, the kernel's
 * CONFIG_UBIFS_FS_AUTHENTICATION), read side, without any key. The
 * superblock names a hash (sha256, ...) and holds the hash of the master
 * node (offline-made images; a kernel-written master carries an HMAC
 * instead); the master holds the hash of the root index node; each index
 * branch holds the hash of its child (index node or leaf). Those hashes are
 * checked here as nodes are read, with OpenSSL's libcrypto. With the
 * signer's certificate, the superblock's PKCS#7 signature (the signature
 * node mkfs.ubifs writes after it in LEB 0) is verified too: the signed
 * superblock holds the master's hash, so the whole committed file system
 * is then authenticated. With the secret HMAC key (the payload of the
 * kernel's auth_key= logon key) the HMACs are verified as the kernel does:
 * the HMAC of the well-known message "UBIFS" in the superblock (tells a
 * wrong key from a changed file system), the superblock's and the master's
 * HMAC (over the node from byte 8, leaving out the HMAC's own digest-size
 * bytes), and the journal's authentication nodes (the HMAC of the running
 * hash of the commit start node, the reference nodes, and the bud's nodes
 * so far; replay drives that, ubifs_replay.c). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/cms.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/core_names.h>
#include <openssl/params.h>
#include <openssl/crypto.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "util/util_endian.h"

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

/* HMAC(key, a || b): out gets the digest size (fs->hash_len) bytes */
static int hmac2(struct ubifs_fs *fs, const void *a, size_t alen, const void *b, size_t blen, uint8_t *out)
{
	const char *name = ubifs_auth_hash_name(fs->sb.hash_algo);
	EVP_MAC *mac = name ? EVP_MAC_fetch(NULL, "HMAC", NULL) : NULL;
	EVP_MAC_CTX *c = mac ? EVP_MAC_CTX_new(mac) : NULL;
	OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, (char *)(name ? name : ""), 0),
			       OSSL_PARAM_construct_end()};
	size_t ol = 0;
	int ok = c && EVP_MAC_init(c, fs->hmac_key, fs->hmac_key_len, params) && EVP_MAC_update(c, a, alen) &&
		 (!blen || EVP_MAC_update(c, b, blen)) && EVP_MAC_final(c, out, &ol, EVP_MAX_MD_SIZE) &&
		 ol == fs->hash_len;
	EVP_MAC_CTX_free(c);
	EVP_MAC_free(mac);
	ERR_clear_error();
	if (!ok)
		return util_err_set(&fs->err, -EIO, "authenticated UBIFS: HMAC(%s) not available (OpenSSL)",
				    name ? name : "?");
	return 0;
}

/* The kernel's node HMAC: bytes 8 .. hmac_offs and, after the HMAC's
 * digest-size bytes (not the whole 64-byte field), the rest of the node. */
static int node_hmac(struct ubifs_fs *fs, const uint8_t *node, uint32_t len, uint32_t hmac_offs, uint8_t *out)
{
	uint32_t after = hmac_offs + fs->hash_len;
	return hmac2(fs, node + 8, hmac_offs - 8, node + after, len - after, out);
}

static int is_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

#define SB_HMAC_OFFS 128
#define SB_HMAC_WKM_OFFS 192
#define MST_HMAC_OFFS 296

int ubifs_auth_sb_hmac(struct ubifs_fs *fs)
{
	if (!fs->hash_len)
		return util_err_set(&fs->err, -EINVAL,
				    "an HMAC key was given, but this UBIFS is not authenticated (no HMAC to verify)");
	if (!fs->hmac_key_len || fs->hmac_key_len > 1024)
		return util_err_set(&fs->err, -EINVAL, "HMAC key: %zu bytes, expected 1 to 1024 bytes (raw key)",
				    fs->hmac_key_len);
	fs->auth_key = 1;
	uint8_t sb[UBIFS_SB_NODE_SZ], h[EVP_MAX_MD_SIZE];
	int err = ubifs_leb_read(fs, UBIFS_SB_LNUM, 0, sb, sizeof(sb));
	if (err)
		return err;
	if (is_zero(sb + SB_HMAC_OFFS, fs->hash_len))
		return 0; /* signed offline (mkfs.ubifs): no HMAC, the kernel checks the signature */
	static const char wkm[] = "UBIFS";
	err = hmac2(fs, wkm, sizeof(wkm) - 1, NULL, 0, h);
	if (err)
		return err;
	if (CRYPTO_memcmp(h, sb + SB_HMAC_WKM_OFFS, fs->hash_len))
		return util_err_set(&fs->err, -ENOKEY,
				    "authenticated UBIFS: the HMAC key does not match this file system (the superblock's "
				    "HMAC of the well-known message differs)");
	err = node_hmac(fs, sb, UBIFS_SB_NODE_SZ, SB_HMAC_OFFS, h);
	if (err)
		return err;
	if (CRYPTO_memcmp(h, sb + SB_HMAC_OFFS, fs->hash_len))
		return util_err_set(&fs->err, -EPERM,
				    "authenticated UBIFS: the superblock at LEB 0:0 does not match its HMAC: it was changed");
	fs->auth_sb_hmac_ok = 1;
	return 0;
}

void *ubifs_auth_hash_new(struct ubifs_fs *fs)
{
	const char *name = ubifs_auth_hash_name(fs->sb.hash_algo);
	const EVP_MD *md = name ? EVP_get_digestbyname(name) : NULL;
	EVP_MD_CTX *c = md ? EVP_MD_CTX_new() : NULL;
	if (c && !EVP_DigestInit_ex(c, md, NULL)) {
		EVP_MD_CTX_free(c);
		c = NULL;
	}
	return c;
}

void *ubifs_auth_hash_dup(void *h)
{
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	if (c && !EVP_MD_CTX_copy_ex(c, h)) {
		EVP_MD_CTX_free(c);
		c = NULL;
	}
	return c;
}

void ubifs_auth_hash_free(void *h)
{
	EVP_MD_CTX_free(h);
}

int ubifs_auth_hash_update(struct ubifs_fs *fs, void *h, const void *data, size_t len)
{
	if (!EVP_DigestUpdate(h, data, len))
		return util_err_set(&fs->err, -EIO, "authenticated UBIFS: hashing the journal failed (OpenSSL)");
	return 0;
}

int ubifs_auth_node_check(struct ubifs_fs *fs, void *h, const uint8_t *node, uint32_t len, uint32_t lnum,
			  uint32_t offs)
{
	if (len != UBIFS_CH_SZ + fs->hash_len)
		return util_err_set(&fs->err, -EINVAL,
				    "authentication node at bud LEB %u:%u: %u bytes, expected %u (header and HMAC)", lnum,
				    offs, len, UBIFS_CH_SZ + fs->hash_len);
	/* the hash of what came before, then its HMAC; the running hash goes on */
	uint8_t digest_[EVP_MAX_MD_SIZE], mac[EVP_MAX_MD_SIZE];
	unsigned int dl = 0;
	EVP_MD_CTX *c = ubifs_auth_hash_dup(h);
	int ok = c && EVP_DigestFinal_ex(c, digest_, &dl) && dl == fs->hash_len;
	EVP_MD_CTX_free(c);
	if (!ok)
		return util_err_set(&fs->err, -EIO, "authenticated UBIFS: hashing the journal failed (OpenSSL)");
	int err = hmac2(fs, digest_, dl, NULL, 0, mac);
	if (err)
		return err;
	if (CRYPTO_memcmp(mac, node + UBIFS_CH_SZ, fs->hash_len))
		return util_err_set(&fs->err, -EPERM,
				    "authenticated UBIFS: the authentication node at bud LEB %u:%u does not match the "
				    "journal nodes before it: the journal was changed",
				    lnum, offs);
	fs->auth_journal_hmacs++;
	return 0;
}

int ubifs_auth_master(struct ubifs_fs *fs, const uint8_t *mst)
{
	if (!is_zero(fs->mst.hmac, UBIFS_MAX_HMAC_LEN)) {
		fs->auth_mst_hmac = 1; /* protected by an HMAC: needs the key */
		if (!fs->hmac_key)
			return 0;
		uint8_t h[EVP_MAX_MD_SIZE];
		int err = node_hmac(fs, mst, UBIFS_MST_NODE_SZ, MST_HMAC_OFFS, h);
		if (err)
			return err;
		if (CRYPTO_memcmp(h, mst + MST_HMAC_OFFS, fs->hash_len))
			return util_err_set(&fs->err, -EPERM,
					    "authenticated UBIFS: the master node at LEB %u:%u does not match its HMAC: it "
					    "was changed",
					    fs->mst_lnum, fs->mst_offs);
		fs->auth_mst_hmac_ok = 1;
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

/* the signature node: common header, type (le32), length (le32), 32 bytes
 * of padding, then the signature (DER) */
#define SIG_NODE_HDR 64
#define SIG_TYPE_PKCS7 1

static X509 *load_cert(const uint8_t *cert, size_t len)
{
	BIO *b = BIO_new_mem_buf(cert, (int)len);
	X509 *x = b ? PEM_read_bio_X509(b, NULL, NULL, NULL) : NULL;
	BIO_free(b);
	if (!x) { /* not PEM: DER */
		const unsigned char *p = cert;
		x = d2i_X509(NULL, &p, (long)len);
	}
	ERR_clear_error();
	return x;
}

int ubifs_auth_verify_signature(struct ubifs_fs *fs, const uint8_t *cert, size_t cert_len)
{
	if (!fs->hash_len)
		return util_err_set(&fs->err, -EINVAL,
				    "a certificate was given, but this UBIFS is not authenticated (no signature to verify)");
	if (cert_len > (1u << 20))
		return util_err_set(&fs->err, -EINVAL, "certificate: %zu bytes, expected an X.509 certificate", cert_len);
	X509 *x = load_cert(cert, cert_len);
	if (!x)
		return util_err_set(&fs->err, -EINVAL, "certificate: not an X.509 certificate (PEM or DER)");
	uint32_t room = fs->leb_size - UBIFS_SB_NODE_SZ;
	uint8_t *buf = malloc(fs->leb_size);
	int err = buf ? ubifs_leb_read(fs, UBIFS_SB_LNUM, 0, buf, fs->leb_size) : -ENOMEM;
	if (err) {
		X509_free(x);
		free(buf);
		return err == -ENOMEM ? util_err_set(&fs->err, err, "mount: out of memory") : err;
	}
	const uint8_t *sig = buf + UBIFS_SB_NODE_SZ;
	struct ubifs_ch ch;
	ubifs_ch_unpack(sig, &ch);
	uint32_t sig_len = get_le32(sig + UBIFS_CH_SZ + 4);
	if (ch.magic != UBIFS_NODE_MAGIC || ch.node_type != UBIFS_SIG_NODE)
		err = util_err_set(&fs->err, -EBADMSG,
				   "authenticated UBIFS: no signature node at LEB 0:%u (a superblock the kernel "
				   "rewrote carries an HMAC instead, which needs the HMAC key)",
				   UBIFS_SB_NODE_SZ);
	else if (ch.len < SIG_NODE_HDR || ch.len > room || sig_len != ch.len - SIG_NODE_HDR)
		err = util_err_set(&fs->err, -EBADMSG,
				   "authenticated UBIFS: signature node at LEB 0:%u: length %u (signature %u bytes), "
				   "expected %u + the signature, within the LEB",
				   UBIFS_SB_NODE_SZ, ch.len, sig_len, SIG_NODE_HDR);
	else if (ubifs_node_crc(sig, ch.len) != ch.crc)
		err = util_err_set(&fs->err, -EBADMSG, "authenticated UBIFS: signature node at LEB 0:%u: bad CRC",
				   UBIFS_SB_NODE_SZ);
	else if (get_le32(sig + UBIFS_CH_SZ) != SIG_TYPE_PKCS7)
		err = util_err_set(&fs->err, -EOPNOTSUPP,
				   "authenticated UBIFS: signature type %u at LEB 0:%u, expected 1 (PKCS#7)",
				   get_le32(sig + UBIFS_CH_SZ), UBIFS_SB_NODE_SZ);
	if (!err) {
		/* the kernel verifies the superblock node as on flash, all of
		 * its 4096 bytes, against a detached signature whose signer is
		 * named by issuer and serial (no certificates inside) */
		const unsigned char *p = sig + SIG_NODE_HDR;
		CMS_ContentInfo *cms = d2i_CMS_ContentInfo(NULL, &p, (long)sig_len);
		BIO *content = BIO_new_mem_buf(buf, UBIFS_SB_NODE_SZ);
		STACK_OF(X509) *certs = sk_X509_new_null();
		int ok = cms && content && certs && sk_X509_push(certs, x) > 0;
		if (ok)
			x = NULL; /* the stack owns it */
		if (!cms)
			err = util_err_set(&fs->err, -EBADMSG,
					   "authenticated UBIFS: the signature at LEB 0:%u is not a PKCS#7/CMS structure",
					   UBIFS_SB_NODE_SZ + SIG_NODE_HDR);
		else if (!ok)
			err = util_err_set(&fs->err, -ENOMEM, "mount: out of memory");
		else if (CMS_verify(cms, certs, NULL, content, NULL,
				    CMS_BINARY | CMS_NOINTERN | CMS_NO_SIGNER_CERT_VERIFY) != 1)
			err = util_err_set(&fs->err, -EKEYREJECTED,
					   "authenticated UBIFS: the superblock's signature does not verify with this "
					   "certificate (signed by another key, or the superblock was changed)");
		else
			fs->auth_sig_ok = 1;
		sk_X509_pop_free(certs, X509_free);
		BIO_free(content);
		CMS_ContentInfo_free(cms);
		ERR_clear_error();
	}
	X509_free(x);
	free(buf);
	return err;
}
