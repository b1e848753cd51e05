/* ubifs_crypt — fscrypt-encrypted UBIFS, read side. An encrypted inode has
 * the UBIFS_CRYPT_FL flag and an encryption context in its hidden xattr
 * "c" (policy v1: 28 bytes, v2: 40 bytes: modes, flags, master key
 * descriptor or identifier, 16-byte nonce). Without the master key names
 * are shown as the kernel shows them (its "no-key names": base64url of the
 * entry's name hash, cookie and ciphertext; names whose ciphertext is
 * longer than 149 bytes keep its first 149 bytes and a SHA-256 of the
 * rest), symlink targets the same way with a zero hash, and contents
 * cannot be read (-ENOKEY). With the key (ubifs_mount_opts.fscrypt_key):
 * per-file keys (v1: AES-128-ECB of the master key under the nonce; v2:
 * HKDF-SHA512), names and symlink targets in AES-256-CTS-CBC, contents in
 * AES-256-XTS per 4 KiB block (tweak = block number), decrypted before
 * decompression. All cryptography is OpenSSL's libcrypto. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/params.h>

#include "ubifs/ubifs_priv.h"
#include "util/util_endian.h"

#define MODE_AES_256_XTS 1
#define MODE_AES_256_CTS 4
#define FLAG_DIRECT_KEY 0x4
#define NOKEY_BYTES 149 /* ciphertext bytes a no-key name holds in full */

struct crypt_ctx {
	unsigned version, contents_mode, names_mode, flags;
	uint8_t ident[16]; /* v2: the master key's identifier */
	uint8_t nonce[16];
};

/* HKDF-SHA512 as fscrypt uses it: the master key as input key material (no
 * salt), info "fscrypt\0", a context byte, then info; out_len bytes. */
static int fscrypt_hkdf(const uint8_t *mk, size_t mk_len, uint8_t context, const uint8_t *info, size_t info_len,
			uint8_t *out, size_t out_len)
{
	uint8_t full[8 + 1 + 16];
	if (info_len > 16)
		return -EINVAL;
	memcpy(full, "fscrypt\0", 8);
	full[8] = context;
	if (info_len)
		memcpy(full + 9, info, info_len);
	EVP_KDF *kdf = EVP_KDF_fetch(NULL, "HKDF", NULL);
	EVP_KDF_CTX *k = kdf ? EVP_KDF_CTX_new(kdf) : NULL;
	OSSL_PARAM p[] = {OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, (char *)"SHA512", 0),
			  OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, (void *)mk, mk_len),
			  OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, full, 9 + info_len),
			  OSSL_PARAM_construct_end()};
	int ok = k && EVP_KDF_derive(k, out, out_len, p) > 0;
	EVP_KDF_CTX_free(k);
	EVP_KDF_free(kdf);
	return ok ? 0 : -EIO;
}

static void hex16(const uint8_t *b, char out[33])
{
	for (int i = 0; i < 16; i++)
		snprintf(out + 2 * i, 3, "%02x", b[i]);
}

/* The encryption context of inode inum (its xattr "c"). */
static int read_ctx(struct ubifs_fs *fs, uint64_t inum, struct crypt_ctx *c)
{
	uint8_t raw[64];
	ssize_t n = ubifs_getxattr_raw(fs, inum, "c", raw, sizeof(raw));
	if (n == -ENODATA || n == -ERANGE)
		return util_err_set(&fs->err, -EINVAL, "inode %llu is encrypted but has no usable encryption context",
				    (unsigned long long)inum);
	if (n < 0)
		return (int)n;
	if (!((raw[0] == 1 && n == 28) || (raw[0] == 2 && n == 40)))
		return util_err_set(&fs->err, -EINVAL, "inode %llu: unknown fscrypt context (version %u, %zd bytes)",
				    (unsigned long long)inum, raw[0], n);
	c->version = raw[0];
	c->contents_mode = raw[1];
	c->names_mode = raw[2];
	c->flags = raw[3];
	memcpy(c->nonce, raw + (raw[0] == 1 ? 12 : 24), 16);
	if (raw[0] == 2)
		memcpy(c->ident, raw + 8, 16);
	if (c->contents_mode != MODE_AES_256_XTS || c->names_mode != MODE_AES_256_CTS || (c->flags & ~3u))
		return util_err_set(&fs->err, -EOPNOTSUPP,
				    "inode %llu: fscrypt modes %u/%u flags 0x%x not supported (only AES-256-XTS contents, "
				    "AES-256-CTS names, no DIRECT_KEY/IV_INO_LBLK flags)",
				    (unsigned long long)inum, c->contents_mode, c->names_mode, c->flags);
	return 0;
}

/* The 64-byte per-file key of inode inum. */
static int file_key(struct ubifs_fs *fs, uint64_t inum, uint8_t key[64])
{
	if (!fs->fscrypt_key_len)
		return -ENOKEY;
	if (fs->crypt_key_inum == inum && inum) {
		memcpy(key, fs->crypt_key, 64);
		return 0;
	}
	struct crypt_ctx cc, *c = &cc;
	int err = read_ctx(fs, inum, c);
	if (err)
		return err;
	int ok = 0;
	if (c->version == 1) {
		/* v1: the master key encrypted with AES-128-ECB under the nonce */
		if (fs->fscrypt_key_len < 64)
			return util_err_set(&fs->err, -EINVAL, "fscrypt key: %zu bytes, AES-256-XTS needs 64",
					    fs->fscrypt_key_len);
		EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
		int l1 = 0, l2 = 0;
		ok = x && EVP_EncryptInit_ex(x, EVP_aes_128_ecb(), NULL, c->nonce, NULL) &&
		     EVP_CIPHER_CTX_set_padding(x, 0) && EVP_EncryptUpdate(x, key, &l1, fs->fscrypt_key, 64) &&
		     EVP_EncryptFinal_ex(x, key + l1, &l2) && l1 + l2 == 64;
		EVP_CIPHER_CTX_free(x);
	} else {
		/* v2: the policy names its master key by identifier (HKDF context 1,
		 * no info): a key that is not it is refused here, not later as
		 * garbage names; the per-file key is HKDF context 2 of the nonce */
		if (!fs->crypt_key_id_ok) {
			if (fscrypt_hkdf(fs->fscrypt_key, fs->fscrypt_key_len, 1, NULL, 0, fs->crypt_key_id, 16))
				return util_err_set(&fs->err, -EIO, "fscrypt key identifier: HKDF-SHA512 failed (OpenSSL)");
			fs->crypt_key_id_ok = 1;
		}
		if (memcmp(fs->crypt_key_id, c->ident, 16)) {
			char want[33], have[33];
			hex16(c->ident, want);
			hex16(fs->crypt_key_id, have);
			return util_err_set(&fs->err, -EKEYREJECTED,
					    "inode %llu: the fscrypt key given is not its master key (policy v2 key "
					    "identifier %s; the key's is %s)",
					    (unsigned long long)inum, want, have);
		}
		ok = !fscrypt_hkdf(fs->fscrypt_key, fs->fscrypt_key_len, 2, c->nonce, 16, key, 64);
	}
	if (!ok)
		return util_err_set(&fs->err, -EIO, "inode %llu: fscrypt key derivation failed (OpenSSL)",
				    (unsigned long long)inum);
	fs->crypt_key_inum = inum;
	memcpy(fs->crypt_key, key, 64);
	return 0;
}

/* AES-256-CTS-CBC (CS3, IV 0) decryption of a name or symlink target. */
static int cts_decrypt(const uint8_t key[32], const uint8_t *in, size_t len, uint8_t *out)
{
	if (len < 16)
		return -EINVAL;
	EVP_CIPHER *ci = EVP_CIPHER_fetch(NULL, "AES-256-CBC-CTS", NULL);
	EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
	uint8_t iv[16] = {0};
	OSSL_PARAM p[] = {OSSL_PARAM_construct_utf8_string(OSSL_CIPHER_PARAM_CTS_MODE, (char *)"CS3", 0),
			  OSSL_PARAM_construct_end()};
	int l1 = 0, l2 = 0;
	int ok = ci && x && EVP_DecryptInit_ex2(x, ci, key, iv, p) && EVP_CIPHER_CTX_set_padding(x, 0) &&
		 EVP_DecryptUpdate(x, out, &l1, in, (int)len) && EVP_DecryptFinal_ex(x, out + l1, &l2) &&
		 (size_t)(l1 + l2) == len;
	EVP_CIPHER_CTX_free(x);
	EVP_CIPHER_free(ci);
	return ok ? 0 : -EIO;
}

static void base64url(const uint8_t *in, size_t len, char *out)
{
	static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
	uint32_t acc = 0;
	int bits = 0;
	size_t o = 0;
	for (size_t i = 0; i < len; i++) {
		acc = (acc << 8) | in[i];
		bits += 8;
		while (bits >= 6) {
			bits -= 6;
			out[o++] = a[(acc >> bits) & 63];
		}
	}
	if (bits)
		out[o++] = a[(acc << (6 - bits)) & 63];
	out[o] = 0;
}

/* The kernel's no-key name of ciphertext ct (hash/cookie: the entry's). */
static void nokey_name(uint32_t hash, uint32_t cookie, const uint8_t *ct, size_t len, char *out)
{
	uint8_t b[8 + NOKEY_BYTES + 32];
	put_le32(b, hash);
	put_le32(b + 4, cookie);
	size_t n;
	if (len <= NOKEY_BYTES) {
		memcpy(b + 8, ct, len);
		n = 8 + len;
	} else {
		memcpy(b + 8, ct, NOKEY_BYTES);
		unsigned int hl = 0;
		EVP_Digest(ct + NOKEY_BYTES, len - NOKEY_BYTES, b + 8 + NOKEY_BYTES, &hl, EVP_sha256(), NULL);
		n = sizeof(b);
	}
	base64url(b, n, out);
}

/* Decrypted name: strip the NUL padding; a NUL (or in a name a '/') inside means the key is wrong.
 * out holds len + 1 bytes; a name's ciphertext is at most 256 bytes, a
 * symlink target's up to the inode's data (4096). */
static int plain_name(struct ubifs_fs *fs, uint64_t inum, const uint8_t *ct, size_t len, char *out, size_t *olen,
		      const char *what, int is_target)
{
	uint8_t key[64];
	int err = file_key(fs, inum, key);
	if (err)
		return err;
	uint8_t pt[UBIFS_MAX_INO_DATA];
	if (len > (is_target ? sizeof(pt) : UBIFS_MAX_NLEN + 1) || cts_decrypt(key, ct, len, pt))
		return util_err_set(&fs->err, -EINVAL, "%s of inode %llu: cannot decrypt %zu bytes", what,
				    (unsigned long long)inum, len);
	size_t n = len;
	while (n && !pt[n - 1])
		n--;
	if (!n || memchr(pt, 0, n) || (!is_target && (memchr(pt, '/', n) || n > UBIFS_MAX_NLEN)))
		return util_err_set(&fs->err, -EKEYREJECTED,
				    "%s of inode %llu decrypts to an invalid name: wrong fscrypt key?", what,
				    (unsigned long long)inum);
	memcpy(out, pt, n);
	out[n] = 0;
	*olen = n;
	return 0;
}

int ubifs_crypt_dir_encrypted(struct ubifs_fs *fs, uint64_t dir)
{
	if (!(fs->sb.flags & UBIFS_FLG_ENCRYPTION))
		return 0;
	if (fs->crypt_dir_inum == dir && dir)
		return fs->crypt_dir_enc;
	struct ubifs_inode *ino = malloc(sizeof(*ino));
	if (!ino)
		return -ENOMEM;
	int err = ubifs_read_inode(fs, dir, ino);
	int enc = !err && (ino->flags & UBIFS_CRYPT_FL);
	free(ino);
	if (err)
		return err;
	fs->crypt_dir_inum = dir;
	fs->crypt_dir_enc = enc;
	return enc;
}

int ubifs_crypt_name(struct ubifs_fs *fs, uint64_t dir, struct ubifs_dirent *ent)
{
	char out[UBIFS_MAX_NLEN + 2];
	size_t olen = 0;
	int err = -ENOKEY;
	if (fs->fscrypt_key_len)
		err = plain_name(fs, dir, (const uint8_t *)ent->name, ent->nlen, out, &olen, "a name in directory", 0);
	if (err == -ENOKEY) {
		nokey_name(ent->hash, ent->cookie, (const uint8_t *)ent->name, ent->nlen, out);
		olen = strlen(out);
		err = 0;
	}
	if (err)
		return err;
	memcpy(ent->name, out, olen + 1);
	ent->nlen = (uint16_t)olen;
	return 0;
}

int ubifs_crypt_symlink(struct ubifs_fs *fs, const struct ubifs_inode *ino, char *out, size_t cap, size_t *olen)
{
	if (!(ino->flags & UBIFS_CRYPT_FL)) {
		if (ino->data_len + 1 > cap)
			return -ENAMETOOLONG;
		memcpy(out, ino->data, ino->data_len);
		out[ino->data_len] = 0;
		*olen = ino->data_len;
		return 0;
	}
	/* fscrypt_symlink_data: le16 length, then the ciphertext */
	uint32_t clen = ino->data_len >= 2 ? get_le16(ino->data) : 0;
	if (clen < 16 || clen + 2 > ino->data_len)
		return util_err_set(&fs->err, -EINVAL, "encrypted symlink inode %llu: bad target length %u",
				    (unsigned long long)ino->inum, clen);
	char buf[UBIFS_MAX_INO_DATA + 16];
	size_t n = 0;
	int err = -ENOKEY;
	if (fs->fscrypt_key_len)
		err = plain_name(fs, ino->inum, ino->data + 2, clen, buf, &n, "the symlink target", 1);
	if (err == -ENOKEY) {
		char nk[300];
		nokey_name(0, 0, ino->data + 2, clen, nk);
		n = strlen(nk);
		memcpy(buf, nk, n + 1);
		err = 0;
	}
	if (err)
		return err;
	if (n + 1 > cap)
		return -ENAMETOOLONG;
	memcpy(out, buf, n + 1);
	*olen = n;
	return 0;
}

int ubifs_crypt_prepare(struct ubifs_fs *fs, uint64_t inum)
{
	uint8_t key[64];
	int err = file_key(fs, inum, key);
	if (err == -ENOKEY)
		return util_err_set(&fs->err, -ENOKEY, "inode %llu is encrypted (fscrypt) and no key was given",
				    (unsigned long long)inum);
	return err;
}

int ubifs_crypt_data(struct ubifs_fs *fs, uint64_t inum, uint32_t block, uint8_t *data, uint32_t len)
{
	uint8_t key[64];
	int err = file_key(fs, inum, key);
	if (err == -ENOKEY)
		return util_err_set(&fs->err, -ENOKEY, "inode %llu is encrypted (fscrypt) and no key was given",
				    (unsigned long long)inum);
	if (err)
		return err;
	if (len < 16 || len % 16)
		return util_err_set(&fs->err, -EINVAL, "inode %llu block %u: encrypted data of %u bytes",
				    (unsigned long long)inum, block, len);
	uint8_t iv[16] = {0};
	put_le32(iv, block); /* le64 logical block number, high half 0 (blocks are 32-bit) */
	EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
	int l1 = 0, l2 = 0;
	int ok = x && EVP_DecryptInit_ex(x, EVP_aes_256_xts(), NULL, key, iv) && EVP_CIPHER_CTX_set_padding(x, 0) &&
		 EVP_DecryptUpdate(x, data, &l1, data, (int)len) && EVP_DecryptFinal_ex(x, data + l1, &l2);
	EVP_CIPHER_CTX_free(x);
	if (!ok)
		return util_err_set(&fs->err, -EIO, "inode %llu block %u: AES-XTS decryption failed (OpenSSL)",
				    (unsigned long long)inum, block);
	return 0;
}
