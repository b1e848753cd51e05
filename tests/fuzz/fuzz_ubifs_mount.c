/* fuzz_ubifs_mount — libFuzzer target for the UBIFS read path.
 *
 * Input: a bare UBIFS image (mkfs.ubifs output, LEBs back to back, missing
 * LEBs unmapped), or the same in a compact form so that seeds stay small:
 * "UBFZ", then records (le16 lnum, le16 length, bytes) giving the start of
 * each non-empty LEB (the rest of a LEB is 0xFF); the LEB size comes from
 * the superblock in LEB 0. The image is mounted read-only through ubi_flat
 * (memory), the whole tree is walked (stat, readdir, read, readlink,
 * xattrs; bounded so that directory cycles end), then unmounted. Crashes,
 * hangs, leaks and sanitizer reports are bugs; errors are fine.
 * Inputs of odd length are mounted with node CRC checks off (a fuzzing-only
 * option) so that mutations reach the parsers behind the CRCs. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <ubikit/ubikit.h>

#include "fs/fs.h"
#include "ubi/ubi_flat.h"
#include "ubifs/ubifs.h"
#include "util/util_err.h"

#include "fuzz_image_decode.h"

enum { BUDGET = 4000 };

static void walk(struct ubikit_fs *fs, uint64_t dir, int depth, int *budget, uint8_t *buf)
{
	uint64_t cookie = 0;
	struct ubikit_dirent e;
	while (*budget > 0 && ubikit_readdir_ino(fs, dir, cookie, &e) == 1) {
		(*budget)--;
		cookie = e.cookie;
		uint64_t ino;
		ubikit_lookup_ino(fs, dir, e.name, &ino);
		struct ubikit_stat st;
		if (ubikit_stat_ino(fs, e.ino, &st))
			continue;
		char xl[1024];
		ssize_t xn = ubikit_listxattr_ino(fs, e.ino, xl, sizeof(xl));
		for (ssize_t i = 0; i < xn; i += (ssize_t)strlen(xl + i) + 1)
			ubikit_getxattr_ino(fs, e.ino, xl + i, buf, 4096);
		if (S_ISREG(st.mode)) {
			uint64_t end = st.size < (1u << 20) ? st.size : (1u << 20);
			for (uint64_t off = 0; off < end && *budget > 0; off += 16384, (*budget)--)
				if (ubikit_pread_ino(fs, e.ino, buf, 16384, off) < 0)
					break;
			if (st.size > end)
				ubikit_pread_ino(fs, e.ino, buf, 4096, st.size - 100);
		} else if (S_ISLNK(st.mode)) {
			ubikit_readlink_ino(fs, e.ino, (char *)buf, 4096);
		} else if (S_ISDIR(st.mode) && depth < 16) {
			walk(fs, e.ino, depth + 1, budget, buf);
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > MAX_IMG)
		return 0;
	size_t len;
	uint8_t *img = decode(data, size, &len);
	if (!img)
		return 0;
	struct ubi_vol_io vol;
	struct util_err err;
	if (ubi_flat_open_mem(img, len, 0, 1, &vol, &err) == 0) {
		struct ubifs_mount_opts o = {.read_only = 1, .tnc_cache_bytes = 32 * 1024, .unsafe_skip_crc = (int)(size & 1)};
		struct ubikit_fs fsb, *fs = &fsb;
		memset(&fsb, 0, sizeof(fsb));
		fsb.read_only = 1;
		if (ubifs_mount(&vol, &o, &fsb.ubifs, &err) == 0) {
			uint8_t *buf = malloc(16384);
			int budget = BUDGET;
			if (buf)
				walk(fs, UBIKIT_ROOT_INO, 0, &budget, buf);
			struct ubikit_stat st;
			ubikit_stat(fs, "/a/b/../c", &st);
			struct ubikit_statfs sf;
			ubikit_statfs(fs, &sf);
			free(buf);
			ubifs_unmount(fsb.ubifs);
		}
		ubi_flat_close(&vol);
	}
	free(img);
	return 0;
}
