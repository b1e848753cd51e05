/* fuzz_ubifs_rw — libFuzzer target for the UBIFS write path on damaged
 * images: the input (fuzz_image_decode.h) is mounted READ-WRITE through
 * ubi_flat (memory), so the replay, the recovery write-back, the LPT, GC,
 * budgeting and the commit all meet mutated on-flash structures; then a few
 * changes (create, write with a hole, truncate, mkdir, rename, link,
 * symlink, xattr, unlink of an existing name, fsync, sync), a bounded walk
 * and the unmount (commit). Crashes, hangs, leaks and sanitizer reports are
 * bugs; a refused mount or a failing operation is fine. Inputs of odd
 * length skip node CRC checks (fuzzing-only mount option) so that mutations
 * reach the parsers behind the CRCs. */
#include <errno.h>
#include <fcntl.h>
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

enum { WALK_BUDGET = 1000 };

static void walk(struct ubikit_fs *fs, uint64_t dir, int depth, int *budget, uint8_t *buf)
{
	uint64_t cookie = 0;
	struct ubikit_dirent e;
	while (*budget > 0 && ubikit_readdir_ino(fs, dir, cookie, &e) == 1) {
		(*budget)--;
		cookie = e.cookie;
		struct ubikit_stat st;
		if (ubikit_stat_ino(fs, e.ino, &st))
			continue;
		if (S_ISREG(st.mode))
			ubikit_pread_ino(fs, e.ino, buf, 8192, 0);
		else if (S_ISDIR(st.mode) && depth < 8)
			walk(fs, e.ino, depth + 1, budget, buf);
	}
}

/* Changes that reach every journal operation; their results do not matter. */
static void change(struct ubikit_fs *fs, uint8_t *buf)
{
	struct ubikit_file *f;
	memset(buf, 'z', 8192);
	if (ubikit_open(fs, "/fz", O_RDWR | O_CREAT, 0644, &f) == 0) {
		ubikit_write(f, buf, 8192);
		ubikit_pwrite(f, buf, 3000, 70000); /* a hole before it */
		ubikit_ftruncate(f, 5000);
		ubikit_fsync(f);
		ubikit_close(f);
	}
	ubikit_mkdir(fs, "/fd", 0755);
	ubikit_rename(fs, "/fz", "/fd/fz", 0);
	ubikit_link(fs, "/fd/fz", "/fl");
	ubikit_symlink(fs, "fd/fz", "/fs");
	ubikit_setxattr(fs, "/fd/fz", "user.fuzz", "v", 1, 0);
	/* an existing name: its inode, entries and xattrs as the image has them */
	struct ubikit_dirent e;
	if (ubikit_readdir_ino(fs, UBIKIT_ROOT_INO, 0, &e) == 1 && e.name[0] && !strchr(e.name, '/')) {
		char p[260] = "/";
		strncat(p, e.name, sizeof(p) - 2);
		if (ubikit_unlink(fs, p) == -EISDIR)
			ubikit_rmdir(fs, p);
	}
	ubikit_sync(fs);
	ubikit_unlink(fs, "/fl");
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
	if (ubi_flat_open_mem(img, len, 0, 0, &vol, &err) == 0) {
		struct ubifs_mount_opts o = {.read_only = 0, .tnc_cache_bytes = 32 * 1024, .unsafe_skip_crc = (int)(size & 1)};
		struct ubikit_fs fsb;
		memset(&fsb, 0, sizeof(fsb));
		if (ubifs_mount(&vol, &o, &fsb.ubifs, &err) == 0) {
			uint8_t *buf = malloc(16384);
			if (buf) {
				change(&fsb, buf);
				int budget = WALK_BUDGET;
				walk(&fsb, UBIKIT_ROOT_INO, 0, &budget, buf);
			}
			free(buf);
			ubifs_unmount(fsb.ubifs);
		}
		ubi_flat_close(&vol);
	}
	free(img);
	return 0;
}
