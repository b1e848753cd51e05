/* test_fs_path — the fs API's path and handle semantics over a mkfs.ubifs
 * image made at test time: symlink chains (40 followed, 41 = ELOOP), loops,
 * "." and "..", trailing slashes, ENOTDIR/ENOENT/ENAMETOOLONG/EISDIR/EROFS,
 * readdir resumption by cookie, inode-based calls, and a mount that loads
 * only the top of the index. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include <ubikit/ubikit.h>

#include "fs/fs.h"
#include "ubi/ubi_flat.h"
#include "ubifs/ubifs.h"

#define WORK UBIKIT_BUILD_DIR "/fs-test"

static struct ubi_vol_io vol;
static struct ubikit_fs *fs;

static int sh(const char *cmd)
{
	int r = system(cmd);
	return r == 0 ? 0 : -1;
}

static int setup(void **s)
{
	(void)s;
	char cmd[8192];
	int n = snprintf(cmd, sizeof(cmd),
			 "set -e; rm -rf %s; mkdir -p %s/src/d/e %s/src/many; cd %s/src; echo content > d/e/f; "
			 "ln -s d/e/f rel; ln -s /d/e/f abs; ln -s ../../rel d/e/up; ln -s loop2 loop1; "
			 "ln -s loop1 loop2; ln -s self self; ln -s d dirlink; ln -s nowhere dangling; "
			 "ln -s c0 chain; i=0; while [ $i -lt 40 ]; do ln -s c$((i+1)) c$i; i=$((i+1)); done; "
			 "echo end > c40; ln -s l0 long; i=0; while [ $i -lt 41 ]; do ln -s l$((i+1)) l$i; i=$((i+1)); done; "
			 "echo end > l41; i=0; while [ $i -lt 700 ]; do : > many/f$i; i=$((i+1)); done; "
			 "mkfs.ubifs -r %s/src -m 2048 -e 126976 -c 100 -o %s/img",
			 WORK, WORK, WORK, WORK, WORK, WORK);
	if (n >= (int)sizeof(cmd) || sh(cmd))
		return -1;
	if (ubi_flat_open(WORK "/img", 0, 1, &vol))
		return -1;
	struct ubikit_mount_opts o = {.flags = UBIKIT_MOUNT_RDONLY};
	return ubikit_mount(&vol, &o, &fs);
}

static int teardown(void **s)
{
	(void)s;
	ubikit_unmount(fs);
	ubi_flat_close(&vol);
	return 0;
}

static void t_mount_is_lazy(void **s)
{
	(void)s;
	/* a fresh mount of its own: only the index root and the path to inode 1 */
	struct ubikit_fs *f2;
	assert_int_equal(ubikit_mount(&vol, NULL, &f2), 0);
	struct ubifs_fs_info info;
	assert_int_equal(ubifs_get_info(fs_ubifs(f2), &info), 0);
	fprintf(stderr, "after mount: %llu index nodes loaded, %zu bytes cached\n", (unsigned long long)info.tnc_loads,
		info.tnc_cached_bytes);
	assert_true(info.tnc_loads <= 6);
	ubikit_unmount(f2);
}

static void t_symlinks(void **s)
{
	(void)s;
	struct ubikit_stat st, f;
	assert_int_equal(ubikit_stat(fs, "/d/e/f", &f), 0);
	assert_int_equal(ubikit_stat(fs, "/rel", &st), 0);
	assert_int_equal(st.ino, f.ino);
	assert_int_equal(ubikit_stat(fs, "abs", &st), 0);
	assert_int_equal(st.ino, f.ino);
	assert_int_equal(ubikit_stat(fs, "/d/e/up", &st), 0); /* ../../rel from d/e = /rel */
	assert_int_equal(st.ino, f.ino);
	assert_int_equal(ubikit_stat(fs, "/dirlink/e/f", &st), 0);
	assert_int_equal(st.ino, f.ino);
	assert_int_equal(ubikit_stat(fs, "/dirlink/", &st), 0);
	assert_true(S_ISDIR(st.mode));
	assert_int_equal(ubikit_lstat(fs, "/dirlink", &st), 0);
	assert_true(S_ISLNK(st.mode));
	assert_int_equal(ubikit_lstat(fs, "/dirlink/", &st), 0); /* trailing slash follows */
	assert_true(S_ISDIR(st.mode));
	assert_int_equal(ubikit_stat(fs, "/loop1", &st), -ELOOP);
	assert_int_equal(ubikit_stat(fs, "/self", &st), -ELOOP);
	assert_int_equal(ubikit_lstat(fs, "/self", &st), 0);
	assert_int_equal(ubikit_stat(fs, "/chain", &st), -ELOOP); /* chain, c0..c39: 41 links */
	assert_int_equal(ubikit_stat(fs, "/c0", &st), 0);     /* c0..c39: 40 links */
	assert_int_equal(ubikit_stat(fs, "/l0", &st), -ELOOP); /* l0..l40: 41 links */
	assert_int_equal(ubikit_stat(fs, "/dangling", &st), -ENOENT);
	char buf[64];
	assert_int_equal(ubikit_readlink(fs, "/d/e/up", buf, sizeof(buf)), 9);
	assert_memory_equal(buf, "../../rel", 9);
	assert_int_equal(ubikit_readlink(fs, "/d/e/up", buf, 4), 4); /* truncated like readlink(2) */
	assert_int_equal(ubikit_readlink(fs, "/d", buf, sizeof(buf)), -EINVAL);
	struct ubikit_file *h;
	assert_int_equal(ubikit_open(fs, "/rel", O_RDONLY | O_NOFOLLOW, 0, &h), -ELOOP);
	assert_int_equal(ubikit_open(fs, "/rel", O_RDONLY, 0, &h), 0);
	assert_int_equal(ubikit_read(h, buf, sizeof(buf)), 8);
	assert_memory_equal(buf, "content\n", 8);
	assert_int_equal(ubikit_read(h, buf, sizeof(buf)), 0);
	assert_int_equal(ubikit_pread(h, buf, 3, 2), 3);
	assert_memory_equal(buf, "nte", 3);
	ubikit_close(h);
}

static void t_errors(void **s)
{
	(void)s;
	struct ubikit_stat st;
	assert_int_equal(ubikit_stat(fs, "/d/e/f/", &st), -ENOTDIR);
	assert_int_equal(ubikit_stat(fs, "/d/e/f/x", &st), -ENOTDIR);
	assert_int_equal(ubikit_stat(fs, "/d/nope/x", &st), -ENOENT);
	assert_int_equal(ubikit_stat(fs, "", &st), -ENOENT);
	char longn[300];
	memset(longn, 'a', 299);
	longn[0] = '/';
	longn[299] = 0;
	assert_int_equal(ubikit_stat(fs, longn, &st), -ENAMETOOLONG);
	assert_int_equal(ubikit_stat(fs, "/../../d/./e/../e/f", &st), 0);
	assert_int_equal(ubikit_stat(fs, "//d///e//f", &st), 0);
	assert_int_equal(ubikit_stat(fs, "/", &st), 0);
	assert_int_equal(st.ino, UBIKIT_ROOT_INO);
	assert_int_equal(ubikit_stat(fs, "/..", &st), 0);
	assert_int_equal(st.ino, UBIKIT_ROOT_INO);
	struct ubikit_file *h;
	assert_int_equal(ubikit_open(fs, "/d/e/f", O_WRONLY, 0, &h), -EROFS);
	assert_int_equal(ubikit_open(fs, "/new", O_RDONLY | O_CREAT, 0644, &h), -EROFS);
	assert_int_equal(ubikit_open(fs, "/d/e/f", O_RDONLY | O_DIRECTORY, 0, &h), -ENOTDIR);
	assert_int_equal(ubikit_open(fs, "/d", O_RDONLY, 0, &h), 0);
	char b[8];
	assert_int_equal(ubikit_read(h, b, sizeof(b)), -EISDIR);
	ubikit_close(h);
	struct ubikit_dir *d;
	assert_int_equal(ubikit_opendir(fs, "/d/e/f", &d), -ENOTDIR);
	assert_int_equal(ubikit_stat_ino(fs, 999999, &st), -ENOENT);
	assert_int_equal(ubikit_stat_ino(fs, 0, &st), -ENOENT);
	uint64_t ino;
	assert_int_equal(ubikit_lookup_ino(fs, UBIKIT_ROOT_INO, "d", &ino), 0);
	assert_int_equal(ubikit_lookup_ino(fs, ino, "e", &ino), 0);
	assert_int_equal(ubikit_lookup_ino(fs, ino, "zzz", &ino), -ENOENT);
	assert_int_equal(ubikit_lookup_ino(fs, UBIKIT_ROOT_INO, "d/e", &ino), -EINVAL);
	assert_int_equal(ubikit_listxattr(fs, "/d/e/f", NULL, 0), 0);
	assert_int_equal(ubikit_getxattr(fs, "/d/e/f", "user.x", b, sizeof(b)), -ENODATA);
	struct ubikit_statfs sf;
	assert_int_equal(ubikit_statfs(fs, &sf), 0);
	assert_true(sf.blocks > sf.blocks_free && sf.blocks_free > 0);
	assert_int_equal(sf.name_max, 255);
}

static void t_readdir_cookies(void **s)
{
	(void)s;
	uint64_t dir;
	assert_int_equal(ubikit_lookup_ino(fs, UBIKIT_ROOT_INO, "many", &dir), 0);
	/* one pass, keeping every cookie; resuming from any cookie gives the rest */
	static uint64_t cookies[800];
	static char names[800][256];
	int n = 0, r;
	struct ubikit_dirent e;
	uint64_t c = 0;
	while ((r = ubikit_readdir_ino(fs, dir, c, &e)) == 1) {
		assert_true(n < 800);
		assert_true(e.cookie > c); /* strictly increasing positions */
		cookies[n] = e.cookie;
		snprintf(names[n], sizeof(names[n]), "%s", e.name);
		c = e.cookie;
		n++;
	}
	assert_int_equal(r, 0);
	assert_int_equal(n, 700);
	for (int i = 0; i < n; i += 97) {
		assert_int_equal(ubikit_readdir_ino(fs, dir, cookies[i], &e), i + 1 < n);
		if (i + 1 < n)
			assert_string_equal(e.name, names[i + 1]);
	}
	/* the handle interface sees the same sequence */
	struct ubikit_dir *d;
	assert_int_equal(ubikit_opendir(fs, "/many", &d), 0);
	for (int i = 0; i < n; i++) {
		assert_int_equal(ubikit_readdir(d, &e), 1);
		assert_string_equal(e.name, names[i]);
		assert_int_equal(e.type, 8);
	}
	assert_int_equal(ubikit_readdir(d, &e), 0);
	assert_int_equal(ubikit_readdir(d, &e), 0);
	ubikit_closedir(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(t_mount_is_lazy), cmocka_unit_test(t_symlinks),
					   cmocka_unit_test(t_errors), cmocka_unit_test(t_readdir_cookies)};
	return cmocka_run_group_tests(tests, setup, teardown);
}
