/* test_fuse_replies — every reply of the FUSE front end (src/fuse), errors
 * first, without /dev/fuse: the test defines the libfuse functions the
 * front end calls (its own definitions win over the shared library), so
 * fuse_session_new hands it the operations table and fuse_session_loop
 * runs the requests below, each answered into a recorder. The image is a
 * small tree made by mkfs.ubifs at test time, and for xattrs the
 * kernel-written tests/data/ubifs/replay-nand2k. Expected answers are what
 * the kernel's VFS gives for the same calls on a read-only file system
 * (lookup of a missing name ENOENT, through a file ENOTDIR; open for
 * writing EROFS; open of a directory EISDIR; opendir of a file ENOTDIR;
 * readlink of a non-symlink EINVAL; a missing xattr ENODATA; a buffer too
 * small ERANGE; size 0 asks for the size) and the source tree's contents;
 * ubifs_fuse.sh checks a real mount. */
#define FUSE_USE_VERSION 35
#include <errno.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <cmocka.h>
#include <ubikit/ubikit.h>

#include "fuse/fuse_ubikit.h"
#include "flash/flash.h"
#include "ubi/ubi_flat.h"
#include "ubifs/ubifs_test_tree.h"

#define WORK UBIKIT_BUILD_DIR "/fuse-replies"

/* ---- the recorder: what the last request was answered ---- */
enum kind { R_NONE, R_ERR, R_ENTRY, R_ATTR, R_READLINK, R_OPEN, R_BUF, R_STATFS, R_XATTR, R_NOREPLY };
static struct {
	enum kind kind;
	int err;
	struct fuse_entry_param entry;
	struct stat attr;
	char text[4200];
	uint8_t buf[65536];
	size_t len;
	struct statvfs sv;
	size_t xsize;
	struct fuse_file_info fi;
} rep;
static const struct fuse_lowlevel_ops *ops;
static void *udata;
static void (*body)(void);

static void reset(void)
{
	memset(&rep, 0, sizeof(rep));
}

/* a request is an opaque pointer to libfuse: any non-NULL value */
#define REQ ((fuse_req_t)&rep)

void *fuse_req_userdata(fuse_req_t req)
{
	(void)req;
	return udata;
}
int fuse_reply_err(fuse_req_t req, int err)
{
	(void)req;
	rep.kind = R_ERR;
	rep.err = err;
	return 0;
}
void fuse_reply_none(fuse_req_t req)
{
	(void)req;
	rep.kind = R_NOREPLY;
}
int fuse_reply_entry(fuse_req_t req, const struct fuse_entry_param *e)
{
	(void)req;
	rep.kind = R_ENTRY;
	rep.entry = *e;
	return 0;
}
int fuse_reply_attr(fuse_req_t req, const struct stat *attr, double timeout)
{
	(void)req;
	(void)timeout;
	rep.kind = R_ATTR;
	rep.attr = *attr;
	return 0;
}
int fuse_reply_readlink(fuse_req_t req, const char *link)
{
	(void)req;
	rep.kind = R_READLINK;
	snprintf(rep.text, sizeof(rep.text), "%s", link);
	return 0;
}
int fuse_reply_open(fuse_req_t req, const struct fuse_file_info *fi)
{
	(void)req;
	rep.kind = R_OPEN;
	rep.fi = *fi;
	return 0;
}
int fuse_reply_buf(fuse_req_t req, const char *buf, size_t size)
{
	(void)req;
	rep.kind = R_BUF;
	assert_true(size <= sizeof(rep.buf));
	memcpy(rep.buf, buf, size);
	rep.len = size;
	return 0;
}
int fuse_reply_statfs(fuse_req_t req, const struct statvfs *stbuf)
{
	(void)req;
	rep.kind = R_STATFS;
	rep.sv = *stbuf;
	return 0;
}
int fuse_reply_xattr(fuse_req_t req, size_t count)
{
	(void)req;
	rep.kind = R_XATTR;
	rep.xsize = count;
	return 0;
}
/* Directory entries in our own packing: name NUL, ino (8), off (8),
 * mode (4); returns the size needed, writes only if it fits (as libfuse). */
static size_t add_entry(char *buf, size_t bufsize, const char *name, const struct stat *st, off_t off)
{
	size_t need = strlen(name) + 1 + 20;
	if (need > bufsize)
		return need;
	memcpy(buf, name, strlen(name) + 1);
	uint64_t ino = st->st_ino, o = (uint64_t)off;
	uint32_t mode = st->st_mode;
	memcpy(buf + strlen(name) + 1, &ino, 8);
	memcpy(buf + strlen(name) + 9, &o, 8);
	memcpy(buf + strlen(name) + 17, &mode, 4);
	return need;
}
size_t fuse_add_direntry(fuse_req_t req, char *buf, size_t bufsize, const char *name, const struct stat *stbuf,
			 off_t off)
{
	(void)req;
	return add_entry(buf, bufsize, name, stbuf, off);
}
size_t fuse_add_direntry_plus(fuse_req_t req, char *buf, size_t bufsize, const char *name,
			      const struct fuse_entry_param *e, off_t off)
{
	(void)req;
	return add_entry(buf, bufsize, name, &e->attr, off);
}

/* ---- the session: runs body() inside fuse_session_loop ---- */
static int session_token;
struct fuse_session *fuse_session_new(struct fuse_args *args, const struct fuse_lowlevel_ops *op, size_t op_size,
				      void *userdata)
{
	(void)args;
	assert_true(op_size >= sizeof(*op));
	ops = op;
	udata = userdata;
	return (struct fuse_session *)&session_token;
}
int fuse_set_signal_handlers(struct fuse_session *se)
{
	(void)se;
	return 0;
}
void fuse_remove_signal_handlers(struct fuse_session *se)
{
	(void)se;
}
int fuse_session_mount(struct fuse_session *se, const char *mountpoint)
{
	(void)se;
	(void)mountpoint;
	return 0;
}
int fuse_daemonize(int foreground)
{
	assert_true(foreground);
	return 0;
}
int fuse_session_loop(struct fuse_session *se)
{
	(void)se;
	body();
	return 0;
}
void fuse_session_unmount(struct fuse_session *se)
{
	(void)se;
}
void fuse_session_destroy(struct fuse_session *se)
{
	(void)se;
}

/* ---- the image ---- */
static uint8_t hello[10000];
static struct ubi_vol_io vol;
static struct ubikit_fs *fs;
static uint64_t ino_hello, ino_dir, ino_link, ino_xa;
static struct ubi_vol_io xvol;
static struct ubikit_fs *xfs;
static uint8_t *ximg;

static int sh(const char *cmd)
{
	return system(cmd);
}

static int setup(void **state)
{
	(void)state;
	mkdir(UBIKIT_BUILD_DIR, 0755);
	if (sh("rm -rf '" WORK "' && mkdir -p '" WORK "/src/dir'"))
		return -1;
	for (size_t i = 0; i < sizeof(hello); i++)
		hello[i] = (uint8_t)(i * 13 + i / 256);
	FILE *f = fopen(WORK "/src/hello", "wb");
	if (!f || fwrite(hello, 1, sizeof(hello), f) != sizeof(hello))
		return -1;
	fclose(f);
	for (int i = 0; i < 40; i++) {
		char p[256];
		snprintf(p, sizeof(p), WORK "/src/dir/entry-with-a-long-name-%02d", i);
		f = fopen(p, "w");
		if (!f)
			return -1;
		fclose(f);
	}
	if (symlink("hello", WORK "/src/ln"))
		return -1;
	if (sh("mkfs.ubifs -r '" WORK "/src' -m 2048 -e 126976 -c 64 -x lzo -o '" WORK "/img' >/dev/null"))
		return -1;
	if (ubi_flat_open(WORK "/img", 0, 1, &vol))
		return -1;
	struct ubikit_mount_opts o = {.flags = UBIKIT_MOUNT_RDONLY};
	if (ubikit_mount(&vol, &o, &fs))
		return -1;
	struct ubikit_stat st;
	if (ubikit_lstat(fs, "/hello", &st))
		return -1;
	ino_hello = st.ino;
	if (ubikit_lstat(fs, "/dir", &st))
		return -1;
	ino_dir = st.ino;
	if (ubikit_lstat(fs, "/ln", &st))
		return -1;
	ino_link = st.ino;
	/* xattrs: the kernel-written replay image (mkfs.ubifs of Debian does
	 * not copy them) */
	struct flash_geometry geo = {FLASH_NAND, 2048, 512, 64, 131072, 128};
	size_t xlen;
	uint32_t leb;
	if (tt_ubi_gz_to_flat(UBIKIT_TEST_DATA "/ubifs/replay-nand2k.img.gz", &geo, 0, WORK "/nand.img", &ximg, &xlen,
			      &leb))
		return -1;
	if (ubi_flat_open_mem(ximg, xlen, leb, 1, &xvol, NULL) || ubikit_mount(&xvol, &o, &xfs))
		return -1;
	if (ubikit_lstat(xfs, "/xa", &st))
		return -1;
	ino_xa = st.ino;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	ubikit_unmount(fs);
	ubi_flat_close(&vol);
	ubikit_unmount(xfs);
	ubi_flat_close(&xvol);
	free(ximg);
	return 0;
}

#define MISSING_INO 987654u
#define BAD_INO ((uint64_t)1 << 33) /* beyond UBIFS inode numbers */

static void expect_err(int e)
{
	if (rep.kind != R_ERR || rep.err != e)
		fail_msg("expected error %d (%s), got reply kind %d err %d", e, strerror(e), rep.kind, rep.err);
}

static void body_errors(void)
{
	struct fuse_file_info fi;
	/* lookup */
	reset();
	ops->lookup(REQ, FUSE_ROOT_ID, "no-such-name");
	expect_err(ENOENT);
	reset();
	ops->lookup(REQ, ino_hello, "x"); /* the VFS never sends this; an error either way */
	assert_int_equal(rep.kind, R_ERR);
	assert_true(rep.err == ENOTDIR || rep.err == ENOENT);
	reset();
	ops->lookup(REQ, FUSE_ROOT_ID, "hello");
	assert_int_equal(rep.kind, R_ENTRY);
	assert_int_equal(rep.entry.ino, ino_hello);
	assert_int_equal(rep.entry.attr.st_size, sizeof(hello));
	assert_true(S_ISREG(rep.entry.attr.st_mode));
	/* getattr */
	reset();
	ops->getattr(REQ, MISSING_INO, NULL);
	expect_err(ENOENT);
	reset();
	ops->getattr(REQ, ino_dir, NULL);
	assert_int_equal(rep.kind, R_ATTR);
	assert_true(S_ISDIR(rep.attr.st_mode));
	assert_int_equal(rep.attr.st_nlink, 2);
	/* readlink */
	reset();
	ops->readlink(REQ, ino_hello);
	expect_err(EINVAL);
	reset();
	ops->readlink(REQ, ino_link);
	assert_int_equal(rep.kind, R_READLINK);
	assert_string_equal(rep.text, "hello");
	/* open: read-only file system */
	int bad_flags[] = {O_WRONLY, O_RDWR, O_RDONLY | O_TRUNC};
	for (size_t i = 0; i < sizeof(bad_flags) / sizeof(bad_flags[0]); i++) {
		memset(&fi, 0, sizeof(fi));
		fi.flags = bad_flags[i];
		reset();
		ops->open(REQ, ino_hello, &fi);
		expect_err(EROFS);
	}
	memset(&fi, 0, sizeof(fi));
	fi.flags = O_RDONLY;
	reset();
	ops->open(REQ, ino_dir, &fi);
	expect_err(EISDIR);
	reset();
	ops->open(REQ, MISSING_INO, &fi);
	expect_err(ENOENT);
	reset();
	ops->open(REQ, ino_hello, &fi);
	assert_int_equal(rep.kind, R_OPEN);
	/* read */
	reset();
	ops->read(REQ, ino_hello, 100, -1, &fi);
	expect_err(EINVAL);
	reset();
	ops->read(REQ, ino_dir, 100, 0, &fi);
	expect_err(EISDIR);
	reset();
	ops->read(REQ, ino_hello, 5000, 4000, &fi);
	assert_int_equal(rep.kind, R_BUF);
	assert_int_equal(rep.len, 5000);
	assert_memory_equal(rep.buf, hello + 4000, 5000);
	reset();
	ops->read(REQ, ino_hello, 5000, 9000, &fi); /* short at EOF */
	assert_int_equal(rep.kind, R_BUF);
	assert_int_equal(rep.len, 1000);
	assert_memory_equal(rep.buf, hello + 9000, 1000);
	reset();
	ops->read(REQ, ino_hello, 0, 0, &fi);
	assert_int_equal(rep.kind, R_BUF);
	assert_int_equal(rep.len, 0);
	/* opendir */
	reset();
	ops->opendir(REQ, ino_hello, &fi);
	expect_err(ENOTDIR);
	reset();
	ops->opendir(REQ, MISSING_INO, &fi);
	expect_err(ENOENT);
	/* statfs, forget */
	reset();
	ops->statfs(REQ, FUSE_ROOT_ID);
	assert_int_equal(rep.kind, R_STATFS);
	assert_true(rep.sv.f_flag & ST_RDONLY);
	assert_int_equal(rep.sv.f_namemax, 255);
	reset();
	ops->forget(REQ, ino_hello, 1);
	assert_int_equal(rep.kind, R_NOREPLY);
	reset();
	ops->forget_multi(REQ, 0, NULL);
	assert_int_equal(rep.kind, R_NOREPLY);
}

static void body_xattrs(void)
{
	/* /xa of the kernel-made replay image: user.k2=v2new, trusted.t=tv
	 * (tests/data/ubifs/replay-nand2k.manifest, the kernel's view) */
	reset();
	ops->getxattr(REQ, ino_xa, "user.none", 100);
	expect_err(ENODATA);
	reset();
	ops->getxattr(REQ, ino_xa, "user.k2", 2);
	expect_err(ERANGE);
	reset();
	ops->getxattr(REQ, ino_xa, "user.k2", 0);
	assert_int_equal(rep.kind, R_XATTR);
	assert_int_equal(rep.xsize, 5);
	reset();
	ops->getxattr(REQ, ino_xa, "user.k2", 100);
	assert_int_equal(rep.kind, R_BUF);
	assert_int_equal(rep.len, 5);
	assert_memory_equal(rep.buf, "v2new", 5);
	reset();
	ops->getxattr(REQ, ino_xa, "trusted.t", 2);
	assert_int_equal(rep.kind, R_BUF);
	assert_memory_equal(rep.buf, "tv", 2);
	const size_t all = sizeof("user.k2") + sizeof("trusted.t");
	reset();
	ops->listxattr(REQ, ino_xa, 3);
	expect_err(ERANGE);
	reset();
	ops->listxattr(REQ, ino_xa, 0);
	assert_int_equal(rep.kind, R_XATTR);
	assert_int_equal(rep.xsize, all);
	reset();
	ops->listxattr(REQ, ino_xa, 100);
	assert_int_equal(rep.kind, R_BUF);
	assert_int_equal(rep.len, all);
	assert_true(memmem(rep.buf, rep.len, "user.k2", sizeof("user.k2")) != NULL);
	assert_true(memmem(rep.buf, rep.len, "trusted.t", sizeof("trusted.t")) != NULL);
	reset();
	ops->listxattr(REQ, BAD_INO, 100);
	expect_err(ENOENT);
	reset();
	ops->getxattr(REQ, MISSING_INO, "user.k2", 100);
	expect_err(ENODATA);
}

/* Read a whole directory with buffers of `size` bytes; returns the number
 * of entries and checks each name appears once. */
static int read_dir(bool plus, size_t size, uint64_t dir)
{
	struct fuse_file_info fi;
	memset(&fi, 0, sizeof(fi));
	off_t off = 0;
	int n = 0, seen[40] = {0}, dots = 0;
	for (int round = 0; round < 1000; round++) {
		reset();
		if (plus)
			ops->readdirplus(REQ, dir, size, off, &fi);
		else
			ops->readdir(REQ, dir, size, off, &fi);
		assert_int_equal(rep.kind, R_BUF);
		if (rep.len == 0)
			break;
		size_t p = 0;
		while (p < rep.len) {
			const char *name = (const char *)rep.buf + p;
			size_t nl = strlen(name);
			uint64_t o;
			memcpy(&o, rep.buf + p + nl + 9, 8);
			if (!strcmp(name, ".") || !strcmp(name, ".."))
				dots++;
			else {
				int k;
				assert_int_equal(sscanf(name, "entry-with-a-long-name-%d", &k), 1);
				assert_true(k >= 0 && k < 40);
				assert_int_equal(seen[k]++, 0);
			}
			n++;
			off = (off_t)o;
			p += nl + 21;
		}
	}
	assert_int_equal(dots, 2);
	for (int k = 0; k < 40; k++)
		assert_int_equal(seen[k], 1);
	return n;
}

static void body_dirs(void)
{
	struct fuse_file_info fi;
	memset(&fi, 0, sizeof(fi));
	reset();
	ops->opendir(REQ, ino_dir, &fi);
	assert_int_equal(rep.kind, R_OPEN);
	/* whole directory in one buffer, and in buffers holding ~1 entry */
	assert_int_equal(read_dir(false, 65536, ino_dir), 42);
	assert_int_equal(read_dir(false, 60, ino_dir), 42);
	assert_int_equal(read_dir(true, 65536, ino_dir), 42);
	assert_int_equal(read_dir(true, 50, ino_dir), 42);
	/* an offset past every name hash (seekdir can send any): empty */
	reset();
	ops->readdir(REQ, ino_dir, 4096, INT64_MAX, &fi);
	assert_int_equal(rep.kind, R_BUF);
	assert_int_equal(rep.len, 0);
	/* a directory that does not exist: an error, once past "." and ".." */
	reset();
	ops->readdir(REQ, BAD_INO, 4096, 2, &fi);
	expect_err(ENOENT);
	reset();
	ops->readdirplus(REQ, BAD_INO, 4096, 2, &fi);
	expect_err(ENOENT);
	/* from the start, "." and ".." come first, then the error on the
	 * next call */
	reset();
	ops->readdir(REQ, BAD_INO, 4096, 0, &fi);
	assert_int_equal(rep.kind, R_BUF);
	assert_int_equal(rep.len, 2 * 21 + 1 + 2);
}

static void run_body(struct ubikit_fs *on, void (*b)(void))
{
	body = b;
	struct fuse_ubikit_opts o = {.foreground = true, .fsname = "img,with\\odd chars"};
	assert_int_equal(fuse_ubikit_main(on, WORK, &o), 0);
}

static void test_errors(void **state)
{
	(void)state;
	run_body(fs, body_errors);
}

static void test_dirs(void **state)
{
	(void)state;
	run_body(fs, body_dirs);
}

static void test_xattrs(void **state)
{
	(void)state;
	run_body(xfs, body_xattrs);
}

int main(void)
{
	if (system("command -v mkfs.ubifs >/dev/null") != 0) {
		fprintf(stderr, "mkfs.ubifs (mtd-utils) not installed\n");
		return 77;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_dirs),
		cmocka_unit_test(test_xattrs),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
