/* test_fs_write — the write side of the ubikit fs API by path and by open
 * file on a read-write mount of a mkfs.ubifs image: create with O_CREAT /
 * O_EXCL / O_TRUNC / O_APPEND, write/pwrite beyond the end (a hole reads
 * zeros), ftruncate, mkdir, mknod, symlink, link, unlink, rmdir, rename with
 * its flags, chmod/chown/utimens, xattrs — each result checked with stat,
 * read and readdir, then again after unmount (with commit) and a read-only
 * mount. Errors are the POSIX ones. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>
#include <ubikit/ubikit.h>

#include "ubi/ubi_flat.h"

#define WORK UBIKIT_BUILD_DIR "/fs-write"

static struct ubikit_fs *mnt(struct ubi_vol_io *vol, int ro)
{
	assert_int_equal(ubi_flat_open(WORK "/img", 0, ro, vol), 0);
	struct ubikit_mount_opts o = {.flags = ro ? UBIKIT_MOUNT_RDONLY : 0};
	struct ubikit_fs *fs = NULL;
	char msg[512];
	int err = ubikit_mount_ex(vol, &o, &fs, msg, sizeof(msg));
	if (err)
		fail_msg("mount: %s", msg);
	return fs;
}

static void expect_file(struct ubikit_fs *fs, const char *path, const char *content, size_t len)
{
	struct ubikit_file *f;
	assert_int_equal(ubikit_open(fs, path, O_RDONLY, 0, &f), 0);
	static char buf[80000];
	ssize_t n = ubikit_pread(f, buf, sizeof(buf), 0);
	assert_int_equal(n, (ssize_t)len);
	assert_memory_equal(buf, content, len);
	ubikit_close(f);
}

static void check_all(struct ubikit_fs *fs, const char *big, size_t big_len)
{
	struct ubikit_stat st;
	expect_file(fs, "/d/hello", "hello world", 11);
	expect_file(fs, "/d/big", big, big_len);
	expect_file(fs, "/appended", "onetwo", 6);
	assert_int_equal(ubikit_stat(fs, "/d/sub", &st), 0);
	assert_true(S_ISDIR(st.mode));
	assert_int_equal(st.nlink, 2);
	assert_int_equal(ubikit_stat(fs, "/d", &st), 0);
	assert_int_equal(st.nlink, 3);
	/* size: 160 + ALIGN(56 + nlen + 1, 8) per entry: hello(6->64) big(4->64) sub(4->64) hard(5->64) */
	assert_int_equal(st.size, 160 + 4 * 64);
	assert_int_equal(ubikit_lstat(fs, "/d/link", &st), -ENOENT); /* renamed away */
	assert_int_equal(ubikit_lstat(fs, "/moved-link", &st), 0);
	assert_true(S_ISLNK(st.mode));
	char t[64];
	assert_int_equal(ubikit_readlink(fs, "/moved-link", t, sizeof(t)), 5);
	assert_memory_equal(t, "hello", 5);
	assert_int_equal(ubikit_stat(fs, "/d/hard", &st), 0);
	assert_int_equal(st.nlink, 2);
	assert_int_equal(st.mode & 07777, 0600);
	assert_int_equal(st.uid, 1234);
	assert_int_equal(st.gid, 99);
	assert_int_equal(st.mtime_sec, 1000000000);
	assert_int_equal(ubikit_stat(fs, "/fifo", &st), 0);
	assert_true(S_ISFIFO(st.mode));
	assert_int_equal(ubikit_stat(fs, "/cdev", &st), 0);
	assert_true(S_ISCHR(st.mode));
	assert_int_equal(st.rdev_major, 4);
	assert_int_equal(st.rdev_minor, 77);
	char v[32];
	assert_int_equal(ubikit_getxattr(fs, "/d/hello", "user.k", v, sizeof(v)), 3);
	assert_memory_equal(v, "val", 3);
	assert_int_equal(ubikit_getxattr(fs, "/d/hello", "user.gone", v, sizeof(v)), -ENODATA);
	/* exchange and whiteout */
	expect_file(fs, "/x1", "B", 1);
	expect_file(fs, "/x2", "A", 1);
	assert_int_equal(ubikit_lstat(fs, "/wh", &st), 0);
	assert_true(S_ISCHR(st.mode));
	assert_int_equal(st.rdev_major, 0);
	expect_file(fs, "/wh-target", "w", 1);
	assert_int_equal(ubikit_stat(fs, "/trunc", &st), 0);
	assert_int_equal(st.size, 10000);
	char z[10000], want[10000];
	memset(want, 0, sizeof(want));
	memcpy(want, "0123", 4);
	expect_file(fs, "/trunc", want, sizeof(want));
	(void)z;
}

static void t_write_api(void **s)
{
	(void)s;
	assert_int_equal(system("rm -rf " WORK " && mkdir -p " WORK "/empty && mkfs.ubifs -r " WORK
				"/empty -m 2048 -e 126976 -c 200 -x zlib -o " WORK "/img"),
			 0);
	struct ubi_vol_io vol;
	struct ubikit_fs *fs = mnt(&vol, 0);
	struct ubikit_file *f;
	assert_int_equal(ubikit_mkdir(fs, "/d", 0755), 0);
	assert_int_equal(ubikit_mkdir(fs, "/d", 0755), -EEXIST);
	assert_int_equal(ubikit_mkdir(fs, "/d/sub", 0700), 0);
	assert_int_equal(ubikit_mkdir(fs, "/nope/x", 0700), -ENOENT);
	assert_int_equal(ubikit_open(fs, "/d/hello", O_WRONLY | O_CREAT | O_EXCL, 0644, &f), 0);
	assert_int_equal(ubikit_write(f, "hello world", 11), 11);
	ubikit_close(f);
	assert_int_equal(ubikit_open(fs, "/d/hello", O_WRONLY | O_CREAT | O_EXCL, 0644, &f), -EEXIST);
	/* a big file with a hole, written through pwrite */
	static char big[65536 + 5000];
	memset(big, 0, sizeof(big));
	for (size_t i = 40000; i < sizeof(big); i++)
		big[i] = (char)(i * 7);
	assert_int_equal(ubikit_open(fs, "/d/big", O_RDWR | O_CREAT, 0644, &f), 0);
	assert_int_equal(ubikit_pwrite(f, big + 40000, sizeof(big) - 40000, 40000), (ssize_t)(sizeof(big) - 40000));
	assert_int_equal(ubikit_fsync(f), 0);
	ubikit_close(f);
	assert_int_equal(ubikit_open(fs, "/appended", O_WRONLY | O_CREAT | O_APPEND, 0644, &f), 0);
	assert_int_equal(ubikit_write(f, "one", 3), 3);
	ubikit_close(f);
	assert_int_equal(ubikit_open(fs, "/appended", O_WRONLY | O_APPEND, 0, &f), 0);
	assert_int_equal(ubikit_write(f, "two", 3), 3);
	ubikit_close(f);
	assert_int_equal(ubikit_symlink(fs, "hello", "/d/link"), 0);
	assert_int_equal(ubikit_rename(fs, "/d/link", "/moved-link", 0), 0);
	assert_int_equal(ubikit_link(fs, "/d/hello", "/d/hard"), 0);
	assert_int_equal(ubikit_chmod(fs, "/d/hard", 0600), 0);
	assert_int_equal(ubikit_chown(fs, "/d/hard", 1234, 99), 0);
	int64_t mt = 1000000000;
	assert_int_equal(ubikit_utimens(fs, "/d/hard", NULL, NULL, &mt, NULL), 0);
	assert_int_equal(ubikit_mknod(fs, "/fifo", S_IFIFO | 0600, 0, 0), 0);
	assert_int_equal(ubikit_mknod(fs, "/cdev", S_IFCHR | 0600, 4, 77), 0);
	assert_int_equal(ubikit_setxattr(fs, "/d/hello", "user.k", "val", 3, UBIKIT_XATTR_CREATE), 0);
	assert_int_equal(ubikit_setxattr(fs, "/d/hello", "user.k", "v2", 2, UBIKIT_XATTR_CREATE), -EEXIST);
	assert_int_equal(ubikit_setxattr(fs, "/d/hello", "user.gone", "x", 1, 0), 0);
	assert_int_equal(ubikit_removexattr(fs, "/d/hello", "user.gone"), 0);
	assert_int_equal(ubikit_removexattr(fs, "/d/hello", "user.gone"), -ENODATA);
	/* unlink, rmdir */
	assert_int_equal(ubikit_mkdir(fs, "/tmpdir", 0755), 0);
	assert_int_equal(ubikit_open(fs, "/tmpdir/f", O_WRONLY | O_CREAT, 0644, &f), 0);
	ubikit_close(f);
	assert_int_equal(ubikit_rmdir(fs, "/tmpdir"), -ENOTEMPTY);
	assert_int_equal(ubikit_unlink(fs, "/tmpdir"), -EISDIR);
	assert_int_equal(ubikit_unlink(fs, "/tmpdir/f"), 0);
	assert_int_equal(ubikit_rmdir(fs, "/tmpdir"), 0);
	assert_int_equal(ubikit_rmdir(fs, "/"), -EBUSY);
	/* rename flags */
	assert_int_equal(ubikit_open(fs, "/x1", O_WRONLY | O_CREAT, 0644, &f), 0);
	assert_int_equal(ubikit_write(f, "A", 1), 1);
	ubikit_close(f);
	assert_int_equal(ubikit_open(fs, "/x2", O_WRONLY | O_CREAT, 0644, &f), 0);
	assert_int_equal(ubikit_write(f, "B", 1), 1);
	ubikit_close(f);
	assert_int_equal(ubikit_rename(fs, "/x1", "/x2", UBIKIT_RENAME_NOREPLACE), -EEXIST);
	assert_int_equal(ubikit_rename(fs, "/x1", "/x2", UBIKIT_RENAME_EXCHANGE), 0);
	assert_int_equal(ubikit_rename(fs, "/d", "/d/sub/in", 0), -EINVAL);
	assert_int_equal(ubikit_open(fs, "/wh", O_WRONLY | O_CREAT, 0644, &f), 0);
	assert_int_equal(ubikit_write(f, "w", 1), 1);
	ubikit_close(f);
	assert_int_equal(ubikit_rename(fs, "/wh", "/wh-target", UBIKIT_RENAME_WHITEOUT), 0);
	/* O_TRUNC and ftruncate (grow: a hole) */
	assert_int_equal(ubikit_open(fs, "/trunc", O_WRONLY | O_CREAT, 0644, &f), 0);
	assert_int_equal(ubikit_write(f, "0123456789abcdef", 16), 16);
	ubikit_close(f);
	assert_int_equal(ubikit_open(fs, "/trunc", O_RDWR | O_TRUNC, 0, &f), 0);
	assert_int_equal(ubikit_write(f, "0123", 4), 4);
	assert_int_equal(ubikit_ftruncate(f, 10000), 0);
	ubikit_close(f);
	check_all(fs, big, sizeof(big));
	assert_int_equal(ubikit_unmount(fs), 0);
	assert_int_equal(ubi_flat_close(&vol), 0);
	fs = mnt(&vol, 1);
	check_all(fs, big, sizeof(big));
	assert_int_equal(ubikit_mkdir(fs, "/ro", 0755), -EROFS);
	assert_int_equal(ubikit_open(fs, "/d/hello", O_WRONLY, 0, &f), -EROFS);
	ubikit_unmount(fs);
	ubi_flat_close(&vol);
}

/* compr_type of every data node of inode inum in the bare image, read from
 * the raw bytes (UBIFS data node: common header 24, key 16, size 4, then
 * compr_type le16 at 44), independent of ubikit's node parsing. Returns how
 * many nodes were found; *mask gets 1 << compr_type of each. */
static int data_node_comprs(uint64_t inum, unsigned *mask)
{
	FILE *fp = fopen(WORK "/img", "rb");
	assert_non_null(fp);
	static unsigned char leb[126976];
	int found = 0;
	*mask = 0;
	while (fread(leb, 1, sizeof(leb), fp) == sizeof(leb)) {
		for (size_t o = 0; o + 48 <= sizeof(leb); o += 8) {
			const unsigned char *n = leb + o;
			if (n[0] != 0x31 || n[1] != 0x18 || n[2] != 0x10 || n[3] != 0x06 || n[20] != 1 /* DATA */)
				continue;
			uint32_t key_inum = n[24] | n[25] << 8 | n[26] << 16 | (uint32_t)n[27] << 24;
			if (key_inum != inum)
				continue;
			*mask |= 1u << (n[44] | n[45] << 8);
			found++;
		}
	}
	fclose(fp);
	return found;
}

/* The compr= mount option (UBIKIT_MOUNT_COMPR_*): new data goes out with the
 * chosen compressor whatever the superblock says; data that does not shrink
 * is stored uncompressed, as the kernel stores it. */
static void t_compr_option(void **s)
{
	(void)s;
	static const unsigned flags[] = {UBIKIT_MOUNT_COMPR_NONE, UBIKIT_MOUNT_COMPR_LZO, UBIKIT_MOUNT_COMPR_ZLIB,
					 UBIKIT_MOUNT_COMPR_ZSTD};
	static char text[65536], noise[16384];
	for (size_t i = 0; i < sizeof(text); i++)
		text[i] = "the quick brown fox jumps over the lazy dog "[i % 44];
	uint32_t x = 2463534242u;
	for (size_t i = 0; i < sizeof(noise); i++) {
		x ^= x << 13, x ^= x >> 17, x ^= x << 5;
		noise[i] = (char)(x >> 24);
	}
	for (unsigned c = 0; c < 4; c++) {
		/* the superblock says zlib (2); c == 2 is the default spelled out */
		assert_int_equal(system("rm -rf " WORK " && mkdir -p " WORK "/empty && mkfs.ubifs -r " WORK
					"/empty -m 2048 -e 126976 -c 60 -x zlib -o " WORK "/img"),
				 0);
		struct ubi_vol_io vol;
		assert_int_equal(ubi_flat_open(WORK "/img", 0, 0, &vol), 0);
		struct ubikit_mount_opts o = {.flags = flags[c]};
		struct ubikit_fs *fs = NULL;
		assert_int_equal(ubikit_mount(&vol, &o, &fs), 0);
		struct ubikit_file *f;
		assert_int_equal(ubikit_open(fs, "/text", O_WRONLY | O_CREAT, 0644, &f), 0);
		assert_int_equal(ubikit_write(f, text, sizeof(text)), (ssize_t)sizeof(text));
		ubikit_close(f);
		assert_int_equal(ubikit_open(fs, "/noise", O_WRONLY | O_CREAT, 0644, &f), 0);
		assert_int_equal(ubikit_write(f, noise, sizeof(noise)), (ssize_t)sizeof(noise));
		ubikit_close(f);
		struct ubikit_stat st_text, st_noise;
		assert_int_equal(ubikit_stat(fs, "/text", &st_text), 0);
		assert_int_equal(ubikit_stat(fs, "/noise", &st_noise), 0);
		assert_int_equal(ubikit_unmount(fs), 0);
		assert_int_equal(ubi_flat_close(&vol), 0);
		unsigned mask;
		assert_int_equal(data_node_comprs(st_text.ino, &mask), 16);
		assert_int_equal(mask, 1u << c); /* UBIFS_COMPR_NONE 0, LZO 1, ZLIB 2, ZSTD 3 */
		assert_int_equal(data_node_comprs(st_noise.ino, &mask), 4);
		assert_int_equal(mask, 1u << 0);
		fs = mnt(&vol, 1);
		expect_file(fs, "/text", text, sizeof(text));
		expect_file(fs, "/noise", noise, sizeof(noise));
		ubikit_unmount(fs);
		ubi_flat_close(&vol);
	}
	/* an unknown compressor number is refused with a message */
	struct ubi_vol_io vol;
	assert_int_equal(ubi_flat_open(WORK "/img", 0, 0, &vol), 0);
	struct ubikit_mount_opts o = {.flags = 6u << 8};
	struct ubikit_fs *fs = NULL;
	char msg[256] = "";
	assert_int_equal(ubikit_mount_ex(&vol, &o, &fs, msg, sizeof(msg)), -EINVAL);
	assert_non_null(strstr(msg, "unknown compressor"));
	ubi_flat_close(&vol);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(t_write_api), cmocka_unit_test(t_compr_option)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
