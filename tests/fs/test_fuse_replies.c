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
 * ubifs_fuse.sh checks a real mount. The changing operations run on a
 * read-write mount of a fresh image (test_writes): each reply is what
 * Linux answers for the same call (EEXIST, ENOTEMPTY, EPERM for a hard
 * link to a directory, EINVAL for renameat2 flags it does not know,
 * EOPNOTSUPP for POSIX ACLs, XATTR_CREATE/REPLACE errors), and the tree
 * they leave is read back through the path API after a remount; on a
 * read-only mount every change answers EROFS. */
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
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <ubikit/ubikit.h>

#include "fuse/fuse_ubikit.h"
#include "flash/flash.h"
#include "ubi/ubi_flat.h"
#include "ubifs/ubifs_test_tree.h"

#define WORK UBIKIT_BUILD_DIR "/fuse-replies"

/* ---- the recorder: what the last request was answered ---- */
enum kind { R_NONE, R_ERR, R_ENTRY, R_ATTR, R_READLINK, R_OPEN, R_BUF, R_STATFS, R_XATTR, R_NOREPLY, R_CREATE, R_WRITE };
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
int fuse_reply_create(fuse_req_t req, const struct fuse_entry_param *e, const struct fuse_file_info *fi)
{
	(void)req;
	rep.kind = R_CREATE;
	rep.entry = *e;
	rep.fi = *fi;
	return 0;
}
int fuse_reply_write(fuse_req_t req, size_t count)
{
	(void)req;
	rep.kind = R_WRITE;
	rep.len = count;
	return 0;
}
static struct fuse_ctx req_ctx = {.uid = 4321, .gid = 765};
const struct fuse_ctx *fuse_req_ctx(fuse_req_t req)
{
	(void)req;
	return &req_ctx;
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

/* ---- the changing side: a read-write mount of an empty image ---- */
static struct ubikit_fs *wfs;
static int flushes;

static int count_flush(void *arg)
{
	(void)arg;
	flushes++;
	return 0;
}

static uint64_t entry_ino(void)
{
	if (rep.kind != R_ENTRY)
		fail_msg("expected an entry, got reply kind %d err %d (%s)", rep.kind, rep.err, strerror(rep.err));
	return rep.entry.ino;
}

static void expect_ok(void)
{
	if (rep.kind != R_ERR || rep.err != 0)
		fail_msg("expected success, got reply kind %d err %d (%s)", rep.kind, rep.err, strerror(rep.err));
}

static void body_writes(void)
{
	struct fuse_file_info fi;
	memset(&fi, 0, sizeof(fi));
	/* mkdir, create: new inodes belong to the caller */
	reset();
	ops->mkdir(REQ, FUSE_ROOT_ID, "d", 0755);
	uint64_t d = entry_ino();
	assert_true(S_ISDIR(rep.entry.attr.st_mode));
	assert_int_equal(rep.entry.attr.st_mode & 07777, 0755);
	assert_int_equal(rep.entry.attr.st_uid, 4321);
	assert_int_equal(rep.entry.attr.st_gid, 765);
	reset();
	ops->mkdir(REQ, FUSE_ROOT_ID, "d", 0755);
	expect_err(EEXIST);
	reset();
	ops->mkdir(REQ, MISSING_INO, "x", 0755);
	expect_err(ENOENT);
	fi.flags = O_WRONLY | O_CREAT;
	reset();
	ops->create(REQ, d, "f", 0640, &fi);
	assert_int_equal(rep.kind, R_CREATE);
	uint64_t f = rep.entry.ino;
	assert_true(S_ISREG(rep.entry.attr.st_mode));
	assert_int_equal(rep.entry.attr.st_mode & 07777, 0640);
	reset();
	ops->create(REQ, d, "f", 0640, &fi);
	expect_err(EEXIST);
	/* write: bytes and offsets */
	reset();
	ops->write(REQ, f, "hello world", 11, 0, &fi);
	assert_int_equal(rep.kind, R_WRITE);
	assert_int_equal(rep.len, 11);
	reset();
	ops->write(REQ, f, "x", 1, -1, &fi);
	expect_err(EINVAL);
	reset();
	ops->write(REQ, d, "x", 1, 0, &fi);
	assert_int_equal(rep.kind, R_ERR);
	assert_true(rep.err == EISDIR || rep.err == EINVAL || rep.err == EBADF);
	reset();
	ops->write(REQ, f, "END", 3, 20000, &fi);
	assert_int_equal(rep.kind, R_WRITE);
	assert_int_equal(rep.len, 3);
	reset();
	ops->read(REQ, f, 11, 0, &fi);
	assert_int_equal(rep.kind, R_BUF);
	assert_memory_equal(rep.buf, "hello world", 11);
	reset();
	ops->flush(REQ, f, &fi);
	expect_ok();
	reset();
	ops->fsync(REQ, f, 0, &fi);
	expect_ok();
	assert_int_equal(flushes, 1);
	/* setattr: size, mode, owner, times */
	struct stat a;
	memset(&a, 0, sizeof(a));
	a.st_size = -1;
	reset();
	ops->setattr(REQ, f, &a, FUSE_SET_ATTR_SIZE, NULL);
	expect_err(EINVAL);
	a.st_size = 5;
	a.st_mode = 0604;
	a.st_uid = 11;
	a.st_gid = 22;
	a.st_atim.tv_sec = 1000000000;
	a.st_atim.tv_nsec = 5;
	a.st_mtim.tv_sec = 1100000000;
	reset();
	ops->setattr(REQ, f, &a,
		     FUSE_SET_ATTR_SIZE | FUSE_SET_ATTR_MODE | FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID |
			     FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME,
		     NULL);
	assert_int_equal(rep.kind, R_ATTR);
	assert_int_equal(rep.attr.st_size, 5);
	assert_int_equal(rep.attr.st_mode & 07777, 0604);
	assert_int_equal(rep.attr.st_uid, 11);
	assert_int_equal(rep.attr.st_gid, 22);
	assert_int_equal(rep.attr.st_atim.tv_sec, 1000000000);
	assert_int_equal(rep.attr.st_mtim.tv_sec, 1100000000);
	time_t before = time(NULL);
	reset();
	ops->setattr(REQ, f, &a, FUSE_SET_ATTR_ATIME_NOW | FUSE_SET_ATTR_MTIME_NOW, NULL);
	assert_int_equal(rep.kind, R_ATTR);
	assert_true(rep.attr.st_mtim.tv_sec >= before && rep.attr.st_atim.tv_sec >= before);
	reset();
	ops->setattr(REQ, MISSING_INO, &a, FUSE_SET_ATTR_MODE, NULL);
	expect_err(ENOENT);
	/* mknod, symlink, link */
	reset();
	ops->mknod(REQ, d, "fifo", S_IFIFO | 0600, 0);
	assert_true(S_ISFIFO(rep.entry.attr.st_mode));
	(void)entry_ino();
	reset();
	ops->mknod(REQ, d, "cdev", S_IFCHR | 0600, makedev(4, 77));
	(void)entry_ino();
	assert_int_equal(major(rep.entry.attr.st_rdev), 4);
	assert_int_equal(minor(rep.entry.attr.st_rdev), 77);
	reset();
	ops->symlink(REQ, "d/f", FUSE_ROOT_ID, "sl");
	uint64_t sl = entry_ino();
	assert_true(S_ISLNK(rep.entry.attr.st_mode));
	reset();
	ops->readlink(REQ, sl);
	assert_string_equal(rep.text, "d/f");
	reset();
	ops->symlink(REQ, "x", FUSE_ROOT_ID, "sl");
	expect_err(EEXIST);
	reset();
	ops->link(REQ, f, FUSE_ROOT_ID, "hard");
	assert_int_equal(entry_ino(), f);
	assert_int_equal(rep.entry.attr.st_nlink, 2);
	reset();
	ops->link(REQ, d, FUSE_ROOT_ID, "dirlink");
	expect_err(EPERM);
	reset();
	ops->link(REQ, f, FUSE_ROOT_ID, "hard");
	expect_err(EEXIST);
	/* unlink, rmdir */
	reset();
	ops->unlink(REQ, FUSE_ROOT_ID, "nope");
	expect_err(ENOENT);
	reset();
	ops->rmdir(REQ, FUSE_ROOT_ID, "d");
	expect_err(ENOTEMPTY);
	reset();
	ops->rmdir(REQ, d, "fifo");
	expect_err(ENOTDIR);
	reset();
	ops->unlink(REQ, FUSE_ROOT_ID, "d");
	expect_err(EISDIR);
	reset();
	ops->unlink(REQ, d, "cdev");
	expect_ok();
	reset();
	ops->mkdir(REQ, d, "empty", 0700);
	(void)entry_ino();
	reset();
	ops->rmdir(REQ, d, "empty");
	expect_ok();
	/* an open file unlinked: readable until its release, then gone */
	memset(&fi, 0, sizeof(fi));
	fi.flags = O_RDWR | O_CREAT;
	reset();
	ops->create(REQ, FUSE_ROOT_ID, "open", 0600, &fi);
	assert_int_equal(rep.kind, R_CREATE);
	uint64_t o = rep.entry.ino;
	reset();
	ops->write(REQ, o, "still here", 10, 0, &fi);
	assert_int_equal(rep.len, 10);
	reset();
	ops->unlink(REQ, FUSE_ROOT_ID, "open");
	expect_ok();
	reset();
	ops->lookup(REQ, FUSE_ROOT_ID, "open");
	expect_err(ENOENT);
	reset();
	ops->read(REQ, o, 100, 0, &fi);
	assert_int_equal(rep.kind, R_BUF);
	assert_int_equal(rep.len, 10);
	assert_memory_equal(rep.buf, "still here", 10);
	reset();
	ops->release(REQ, o, &fi);
	expect_ok();
	reset();
	ops->getattr(REQ, o, NULL);
	expect_err(ENOENT);
	/* open with O_TRUNC (FUSE passes it with atomic_o_trunc) empties the
	 * file, as open(2) on Linux does: also with O_RDONLY (the host kernel
	 * truncates on O_RDONLY | O_TRUNC) */
	memset(&fi, 0, sizeof(fi));
	fi.flags = O_WRONLY | O_CREAT;
	reset();
	ops->create(REQ, FUSE_ROOT_ID, "trunc", 0600, &fi);
	uint64_t t = rep.entry.ino;
	for (int k = 0; k < 2; k++) {
		fi.flags = O_WRONLY;
		reset();
		ops->write(REQ, t, "0123456789", 10, 0, &fi);
		assert_int_equal(rep.len, 10);
		reset();
		ops->release(REQ, t, &fi);
		reset();
		ops->getattr(REQ, t, NULL);
		assert_int_equal(rep.attr.st_size, 10);
		fi.flags = (k ? O_RDONLY : O_WRONLY) | O_TRUNC;
		reset();
		ops->open(REQ, t, &fi);
		assert_int_equal(rep.kind, R_OPEN);
		reset();
		ops->getattr(REQ, t, NULL);
		assert_int_equal(rep.attr.st_size, 0);
		reset();
		ops->release(REQ, t, &fi);
	}
	reset();
	ops->unlink(REQ, FUSE_ROOT_ID, "trunc");
	expect_ok();
	/* an open target replaced by a rename lives on the same way */
	fi.flags = O_RDONLY;
	reset();
	ops->open(REQ, sl, &fi); /* (any inode: the VFS opens files only) */
	reset();
	ops->mknod(REQ, FUSE_ROOT_ID, "r1", S_IFREG | 0600, 0);
	(void)entry_ino();
	reset();
	ops->mknod(REQ, FUSE_ROOT_ID, "r2", S_IFREG | 0600, 0);
	uint64_t r2 = entry_ino();
	reset();
	ops->open(REQ, r2, &fi);
	assert_int_equal(rep.kind, R_OPEN);
	reset();
	ops->rename(REQ, FUSE_ROOT_ID, "r1", FUSE_ROOT_ID, "r2", 0);
	expect_ok();
	reset();
	ops->getattr(REQ, r2, NULL);
	assert_int_equal(rep.kind, R_ATTR); /* open: still there */
	reset();
	ops->release(REQ, r2, &fi);
	reset();
	ops->getattr(REQ, r2, NULL);
	expect_err(ENOENT);
	reset();
	ops->release(REQ, sl, &fi);
	/* rename flags */
	reset();
	ops->rename(REQ, FUSE_ROOT_ID, "r2", FUSE_ROOT_ID, "x", 8);
	expect_err(EINVAL);
	reset();
	ops->rename(REQ, FUSE_ROOT_ID, "r2", FUSE_ROOT_ID, "hard", 1 /* NOREPLACE */);
	expect_err(EEXIST);
	reset();
	ops->rename(REQ, FUSE_ROOT_ID, "r2", FUSE_ROOT_ID, "sl", 2 /* EXCHANGE */);
	expect_ok();
	reset();
	ops->rename(REQ, FUSE_ROOT_ID, "nope", FUSE_ROOT_ID, "sl", 2);
	expect_err(ENOENT);
	reset();
	ops->rename(REQ, FUSE_ROOT_ID, "sl", d, "moved", 4 /* WHITEOUT */);
	expect_ok();
	reset();
	ops->lookup(REQ, FUSE_ROOT_ID, "sl");
	(void)entry_ino(); /* the whiteout: a 0/0 character device */
	assert_true(S_ISCHR(rep.entry.attr.st_mode));
	assert_int_equal(rep.entry.attr.st_rdev, 0);
	reset();
	ops->rename(REQ, FUSE_ROOT_ID, "d", d, "sub", 0);
	assert_int_equal(rep.kind, R_ERR); /* into itself (the VFS never sends it: EINVAL before) */
	assert_true(rep.err != 0);
	/* xattrs */
	reset();
	ops->setxattr(REQ, f, "system.posix_acl_access", "x", 1, 0);
	expect_err(EOPNOTSUPP);
	reset();
	ops->setxattr(REQ, f, "user.k", "v1", 2, 2 /* REPLACE */);
	expect_err(ENODATA);
	reset();
	ops->setxattr(REQ, f, "user.k", "v1", 2, 1 /* CREATE */);
	expect_ok();
	reset();
	ops->setxattr(REQ, f, "user.k", "v2", 2, 1);
	expect_err(EEXIST);
	reset();
	ops->setxattr(REQ, f, "user.k", "value", 5, 2);
	expect_ok();
	reset();
	ops->setxattr(REQ, f, "user.gone", "g", 1, 0);
	expect_ok();
	reset();
	ops->removexattr(REQ, f, "user.gone");
	expect_ok();
	reset();
	ops->removexattr(REQ, f, "user.gone");
	expect_err(ENODATA);
	reset();
	ops->fsyncdir(REQ, FUSE_ROOT_ID, 0, &fi);
	expect_ok();
	assert_int_equal(flushes, 2);
	reset();
	ops->statfs(REQ, FUSE_ROOT_ID);
	assert_int_equal(rep.kind, R_STATFS);
	assert_false(rep.sv.f_flag & ST_RDONLY);
}

/* every change on a read-only mount: EROFS */
static void body_rofs(void)
{
	struct fuse_file_info fi;
	memset(&fi, 0, sizeof(fi));
	struct stat a;
	memset(&a, 0, sizeof(a));
	a.st_mode = 0600;
	reset();
	ops->mkdir(REQ, FUSE_ROOT_ID, "x", 0755);
	expect_err(EROFS);
	fi.flags = O_WRONLY | O_CREAT;
	reset();
	ops->create(REQ, FUSE_ROOT_ID, "x", 0644, &fi);
	expect_err(EROFS);
	reset();
	ops->write(REQ, ino_hello, "x", 1, 0, &fi);
	expect_err(EROFS);
	reset();
	ops->setattr(REQ, ino_hello, &a, FUSE_SET_ATTR_MODE, NULL);
	expect_err(EROFS);
	reset();
	ops->unlink(REQ, FUSE_ROOT_ID, "hello");
	expect_err(EROFS);
	reset();
	ops->rename(REQ, FUSE_ROOT_ID, "hello", FUSE_ROOT_ID, "x", 0);
	expect_err(EROFS);
	reset();
	ops->symlink(REQ, "t", FUSE_ROOT_ID, "x");
	expect_err(EROFS);
	reset();
	ops->setxattr(REQ, ino_hello, "user.x", "v", 1, 0);
	expect_err(EROFS);
	reset();
	ops->fsyncdir(REQ, FUSE_ROOT_ID, 0, &fi);
	expect_ok(); /* nothing to make durable */
}

static void expect_path(struct ubikit_fs *on, const char *path, const char *data, size_t len)
{
	struct ubikit_file *fh;
	assert_int_equal(ubikit_open(on, path, O_RDONLY, 0, &fh), 0);
	char buf[64];
	assert_int_equal(ubikit_pread(fh, buf, sizeof(buf), 0), (ssize_t)len);
	assert_memory_equal(buf, data, len);
	ubikit_close(fh);
}

static void test_writes(void **state)
{
	(void)state;
	assert_int_equal(sh("rm -rf '" WORK "/w' && mkdir -p '" WORK "/w/empty' && mkfs.ubifs -r '" WORK
			    "/w/empty' -m 2048 -e 126976 -c 64 -o '" WORK "/w/img' >/dev/null"),
			 0);
	struct ubi_vol_io wvol;
	assert_int_equal(ubi_flat_open(WORK "/w/img", 0, 0, &wvol), 0);
	struct ubikit_mount_opts mo = {0};
	assert_int_equal(ubikit_mount(&wvol, &mo, &wfs), 0);
	body = body_writes;
	flushes = 0;
	struct fuse_ubikit_opts o = {.foreground = true, .fsname = "rw", .flush = count_flush};
	assert_int_equal(fuse_ubikit_main(wfs, WORK, &o), 0);
	assert_int_equal(ubikit_unmount(wfs), 0);
	ubi_flat_close(&wvol);
	/* what the session left, read back after a remount */
	assert_int_equal(ubi_flat_open(WORK "/w/img", 0, 1, &wvol), 0);
	mo.flags = UBIKIT_MOUNT_RDONLY;
	assert_int_equal(ubikit_mount(&wvol, &mo, &wfs), 0);
	expect_path(wfs, "/d/f", "hello", 5);
	expect_path(wfs, "/hard", "hello", 5);
	struct ubikit_stat st;
	assert_int_equal(ubikit_stat(wfs, "/d/f", &st), 0);
	assert_int_equal(st.nlink, 2);
	assert_int_equal(st.mode & 07777, 0604);
	assert_int_equal(st.uid, 11);
	char v[16];
	assert_int_equal(ubikit_getxattr(wfs, "/d/f", "user.k", v, sizeof(v)), 5);
	assert_memory_equal(v, "value", 5);
	assert_int_equal(ubikit_getxattr(wfs, "/d/f", "user.gone", v, sizeof(v)), -ENODATA);
	assert_int_equal(ubikit_lstat(wfs, "/d/fifo", &st), 0);
	assert_true(S_ISFIFO(st.mode));
	assert_int_equal(ubikit_lstat(wfs, "/d/cdev", &st), -ENOENT);
	assert_int_equal(ubikit_lstat(wfs, "/d/empty", &st), -ENOENT);
	/* r2 went to sl by the exchange, then to d/moved by the whiteout rename */
	assert_int_equal(ubikit_lstat(wfs, "/d/moved", &st), 0);
	assert_true(S_ISREG(st.mode));
	assert_int_equal(ubikit_lstat(wfs, "/r2", &st), 0);
	assert_true(S_ISLNK(st.mode));
	assert_int_equal(ubikit_lstat(wfs, "/sl", &st), 0);
	assert_true(S_ISCHR(st.mode));
	/* no hidden names left, nothing else in the root */
	struct ubikit_dir *dh;
	assert_int_equal(ubikit_opendir(wfs, "/", &dh), 0);
	struct ubikit_dirent e;
	int n = 0;
	while (ubikit_readdir(dh, &e) == 1) {
		assert_true(!strcmp(e.name, "d") || !strcmp(e.name, "hard") || !strcmp(e.name, "r2") ||
			    !strcmp(e.name, "sl"));
		n++;
	}
	ubikit_closedir(dh);
	assert_int_equal(n, 4);
	assert_int_equal(ubikit_unmount(wfs), 0);
	ubi_flat_close(&wvol);
}

static void test_rofs(void **state)
{
	(void)state;
	run_body(fs, body_rofs);
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
		cmocka_unit_test(test_writes),
		cmocka_unit_test(test_rofs),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
