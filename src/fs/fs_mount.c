/* fs_mount — mounting a ubikit_fs over a UBI volume (the UBIFS below),
 * unmount, error messages and statfs. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs/fs.h"

int ubikit_mount_ex(struct ubi_vol_io *vol, const struct ubikit_mount_opts *opts, struct ubikit_fs **out,
		    char *errbuf, size_t errlen)
{
	if (errbuf && errlen)
		errbuf[0] = 0;
	if (!out)
		return -EINVAL;
	*out = NULL;
	struct ubikit_fs *fs = calloc(1, sizeof(*fs));
	if (!fs)
		return -ENOMEM;
	struct ubifs_mount_opts o = {
		.read_only = opts ? !!(opts->flags & UBIKIT_MOUNT_RDONLY) : 1,
		.tnc_cache_bytes = opts ? opts->tnc_cache_bytes : 0,
		.dirty_limit = opts ? opts->dirty_bytes_max : 0,
		.fscrypt_key = opts ? opts->fscrypt_key : NULL,
		.fscrypt_key_len = opts ? opts->fscrypt_key_len : 0,
		.auth_cert = opts ? opts->auth_cert : NULL,
		.auth_cert_len = opts ? opts->auth_cert_len : 0,
		.auth_hmac_key = opts ? opts->auth_hmac_key : NULL,
		.auth_hmac_key_len = opts ? opts->auth_hmac_key_len : 0,
	};
	fs->fscrypt_key = opts && opts->fscrypt_key && opts->fscrypt_key_len;
	unsigned compr = opts ? (opts->flags & UBIKIT_MOUNT_COMPR_MASK) >> 8 : 0;
	if (compr > 4) {
		if (errbuf && errlen)
			snprintf(errbuf, errlen, "mount: unknown compressor %u in the mount flags (expected none, lzo, zlib or zstd)", compr);
		free(fs);
		return -EINVAL;
	}
	if (compr) { /* UBIKIT_MOUNT_COMPR_x = (UBIFS_COMPR_x + 1) << 8 */
		o.compr_set = 1;
		o.compr = (int)compr - 1;
	}
	struct util_err err;
	util_err_clear(&err);
	int ret = ubifs_mount(vol, &o, &fs->ubifs, &err);
	if (ret) {
		if (errbuf && errlen)
			snprintf(errbuf, errlen, "%s", err.msg[0] ? err.msg : "mount failed");
		free(fs);
		return ret;
	}
	fs->read_only = o.read_only;
	*out = fs;
	return 0;
}

int ubikit_mount(struct ubi_vol_io *vol, const struct ubikit_mount_opts *opts, struct ubikit_fs **out)
{
	return ubikit_mount_ex(vol, opts, out, NULL, 0);
}

int ubikit_unmount(struct ubikit_fs *fs)
{
	if (!fs)
		return 0;
	int err = ubifs_unmount(fs->ubifs);
	free(fs);
	return err;
}

const char *ubikit_errmsg(const struct ubikit_fs *fs)
{
	if (!fs)
		return "";
	if (fs->err.msg[0])
		return fs->err.msg;
	return ubifs_errmsg(fs->ubifs);
}

int ubikit_statfs(struct ubikit_fs *fs, struct ubikit_statfs *st)
{
	struct ubifs_statfs s;
	int err = ubifs_statfs(fs->ubifs, &s);
	if (err)
		return err;
	memset(st, 0, sizeof(*st));
	st->block_size = s.block_size;
	st->blocks = s.blocks;
	st->blocks_free = s.blocks_free;
	st->blocks_avail = s.blocks_avail;
	st->files = s.files;
	st->name_max = s.name_max;
	return 0;
}

int ubikit_security(struct ubikit_fs *fs, struct ubikit_security *out)
{
	struct ubifs_fs_info *i = malloc(sizeof(*i));
	if (!i)
		return -ENOMEM;
	int err = ubifs_get_info(fs->ubifs, i);
	if (!err) {
		memset(out, 0, sizeof(*out));
		out->authenticated = !!(i->sb.flags & UBIFS_FLG_AUTHENTICATION);
		const char *h = out->authenticated ? ubifs_auth_hash_name(i->sb.hash_algo) : NULL;
		snprintf(out->hash_name, sizeof(out->hash_name), "%s", h ? h : "");
		out->auth_master_hash_ok = i->auth_mst_ok;
		out->auth_signature_ok = i->auth_sig_ok;
		out->auth_master_hmac = i->auth_mst_hmac;
		out->auth_nodes_checked = i->auth_checked;
		out->auth_hmac_key = i->auth_key;
		out->auth_sb_hmac_ok = i->auth_sb_hmac_ok;
		out->auth_master_hmac_ok = i->auth_mst_hmac_ok;
		out->auth_journal_hmacs = i->auth_journal_hmacs;
		out->auth_nodes_dropped = i->auth_dropped;
		out->encrypted = !!(i->sb.flags & UBIFS_FLG_ENCRYPTION);
		out->fscrypt_key = fs->fscrypt_key;
	}
	free(i);
	return err;
}
