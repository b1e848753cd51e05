/* test_fs_errnos — the path API's results judged by the host kernel: the
 * same tree is built in a host directory and (through mkfs.ubifs) in a
 * read-write ubikit mount, then one list of calls (trailing slashes,
 * dangling and looping symlinks, ENOTDIR/EISDIR/ENOTEMPTY/EEXIST/EPERM,
 * rename flags, xattr flags, names too long) runs on both. Each call must
 * give the host's result (0 or the same errno), and at the end both trees
 * must hold the same names, types, sizes, contents and link targets. The
 * host is the reference: nothing expected is written in this file. */
#include <dirent.h>
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
#include <sys/xattr.h>
#include <unistd.h>
#include <cmocka.h>
#include <ubikit/ubikit.h>

#include "ubi/ubi_flat.h"

#define WORK UBIKIT_BUILD_DIR "/fs-errnos"
#define HOST WORK "/host"

enum kind {
	OPEN, MKDIR, RMDIR, UNLINK, RENAME, LINK, SYMLINK, TRUNCATE, CHMOD, STAT, LSTAT, READLINK, MKFIFO,
	OPENDIR, SETXATTR, GETXATTR, REMOVEXATTR, LISTXATTR, UTIMENS,
};

struct op {
	enum kind k;
	const char *a, *b; /* paths (a symlink's target is a), xattr name in b */
	int flags;         /* open flags, rename flags, xattr flags, size */
};

static const char *kname[] = {"open", "mkdir", "rmdir", "unlink", "rename", "link", "symlink", "truncate", "chmod",
			      "stat", "lstat", "readlink", "mkfifo", "opendir", "setxattr", "getxattr",
			      "removexattr", "listxattr", "utimens"};

static char *hp(char *buf, const char *p)
{
	snprintf(buf, PATH_MAX, "%s%s", *p ? HOST : "", p); /* "" stays "" */
	return buf;
}

static int host_rc(long r)
{
	return r < 0 ? -errno : 0;
}

static int host_op(const struct op *o)
{
	char a[PATH_MAX], b[PATH_MAX], v[64];
	switch (o->k) {
	case OPEN: {
		int fd = open(hp(a, o->a), o->flags, 0644);
		if (fd < 0)
			return -errno;
		close(fd);
		return 0;
	}
	case MKDIR: return host_rc(mkdir(hp(a, o->a), 0755));
	case RMDIR: return host_rc(rmdir(hp(a, o->a)));
	case UNLINK: return host_rc(unlink(hp(a, o->a)));
	case RENAME: return host_rc(renameat2(AT_FDCWD, hp(a, o->a), AT_FDCWD, hp(b, o->b), (unsigned)o->flags));
	case LINK: return host_rc(link(hp(a, o->a), hp(b, o->b)));
	case SYMLINK: return host_rc(symlink(o->a, hp(b, o->b)));
	case TRUNCATE: return host_rc(truncate(hp(a, o->a), o->flags));
	case CHMOD: return host_rc(chmod(hp(a, o->a), 0600));
	case STAT: {
		struct stat st;
		return host_rc(stat(hp(a, o->a), &st));
	}
	case LSTAT: {
		struct stat st;
		return host_rc(lstat(hp(a, o->a), &st));
	}
	case READLINK: {
		ssize_t n = readlink(hp(a, o->a), v, sizeof(v));
		return n < 0 ? -errno : (int)n;
	}
	case MKFIFO: return host_rc(mkfifo(hp(a, o->a), 0644));
	case OPENDIR: {
		DIR *d = opendir(hp(a, o->a));
		if (!d)
			return -errno;
		closedir(d);
		return 0;
	}
	case SETXATTR: return host_rc(lsetxattr(hp(a, o->a), o->b, "v", 1, o->flags));
	case GETXATTR: {
		ssize_t n = lgetxattr(hp(a, o->a), o->b, v, (size_t)o->flags);
		return n < 0 ? -errno : (int)n;
	}
	case REMOVEXATTR: return host_rc(lremovexattr(hp(a, o->a), o->b));
	case LISTXATTR: {
		/* security.* labels a host may add are left out by counting user.* only */
		char l[1024];
		ssize_t n = llistxattr(hp(a, o->a), l, sizeof(l));
		if (n < 0)
			return -errno;
		int users = 0;
		for (ssize_t i = 0; i < n; i += (ssize_t)strlen(l + i) + 1)
			users += !strncmp(l + i, "user.", 5);
		return users;
	}
	case UTIMENS: {
		struct timespec ts[2] = {{1000, 0}, {2000, 0}};
		return host_rc(utimensat(AT_FDCWD, hp(a, o->a), ts, 0));
	}
	}
	return -ENOSYS;
}

static int ubi_op(struct ubikit_fs *fs, const struct op *o)
{
	struct ubikit_stat st;
	char v[64];
	switch (o->k) {
	case OPEN: {
		struct ubikit_file *f;
		int err = ubikit_open(fs, o->a, o->flags, 0644, &f);
		if (!err)
			err = ubikit_close(f);
		return err;
	}
	case MKDIR: return ubikit_mkdir(fs, o->a, 0755);
	case RMDIR: return ubikit_rmdir(fs, o->a);
	case UNLINK: return ubikit_unlink(fs, o->a);
	case RENAME: {
		unsigned fl = 0;
		if (o->flags & RENAME_NOREPLACE)
			fl |= UBIKIT_RENAME_NOREPLACE;
		if (o->flags & RENAME_EXCHANGE)
			fl |= UBIKIT_RENAME_EXCHANGE;
		return ubikit_rename(fs, o->a, o->b, fl);
	}
	case LINK: return ubikit_link(fs, o->a, o->b);
	case SYMLINK: return ubikit_symlink(fs, o->a, o->b);
	case TRUNCATE: return ubikit_truncate(fs, o->a, (uint64_t)o->flags);
	case CHMOD: return ubikit_chmod(fs, o->a, 0600);
	case STAT: return ubikit_stat(fs, o->a, &st);
	case LSTAT: return ubikit_lstat(fs, o->a, &st);
	case READLINK: return (int)ubikit_readlink(fs, o->a, v, sizeof(v));
	case MKFIFO: return ubikit_mknod(fs, o->a, S_IFIFO | 0644, 0, 0);
	case OPENDIR: {
		struct ubikit_dir *d;
		int err = ubikit_opendir(fs, o->a, &d);
		if (!err)
			err = ubikit_closedir(d);
		return err;
	}
	case SETXATTR: {
		int fl = (o->flags & XATTR_CREATE ? UBIKIT_XATTR_CREATE : 0) |
			 (o->flags & XATTR_REPLACE ? UBIKIT_XATTR_REPLACE : 0);
		return ubikit_setxattr(fs, o->a, o->b, "v", 1, fl);
	}
	case GETXATTR: return (int)ubikit_getxattr(fs, o->a, o->b, v, (size_t)o->flags);
	case REMOVEXATTR: return ubikit_removexattr(fs, o->a, o->b);
	case LISTXATTR: {
		char l[1024];
		ssize_t n = ubikit_listxattr(fs, o->a, l, sizeof(l));
		if (n < 0)
			return (int)n;
		int users = 0;
		for (ssize_t i = 0; i < n; i += (ssize_t)strlen(l + i) + 1)
			users += !strncmp(l + i, "user.", 5);
		return users;
	}
	case UTIMENS: {
		int64_t at = 1000, mt = 2000;
		return ubikit_utimens(fs, o->a, &at, NULL, &mt, NULL);
	}
	}
	return -ENOSYS;
}

#define N32 "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn"
#define LONGNAME "/" N32 N32 N32 N32 N32 N32 N32 N32 /* 256 bytes: one too many */

/* Starting tree (both sides): f (6 bytes), d/, d/g, d/sub/, empty/, l -> f,
 * ld -> d, dl -> nope (dangling), loop -> loop, up -> d/../f, x (mkfs.ubifs
 * 2.1 copies no xattrs: both sides get theirs from the list). A root "/"
 * cannot be compared (the host's is a plain directory). */
static const struct op ops[] = {
	/* open: trailing slashes, symlinks, flags */
	{OPEN, "/new/", 0, O_CREAT | O_WRONLY},
	{OPEN, "/new/", 0, O_CREAT | O_RDONLY},
	{OPEN, "/f/", 0, O_RDONLY},
	{OPEN, "/f/", 0, O_CREAT | O_WRONLY},
	{OPEN, "/d/", 0, O_RDONLY},
	{OPEN, "/d/", 0, O_WRONLY},
	{OPEN, "/d", 0, O_RDWR},
	{OPEN, "/d", 0, O_CREAT | O_WRONLY},
	{OPEN, "/d/", 0, O_CREAT | O_WRONLY},
	{OPEN, "/ld/", 0, O_RDONLY},
	{OPEN, "/ld", 0, O_RDONLY | O_DIRECTORY},
	{OPEN, "/l/", 0, O_RDONLY},
	{OPEN, "/l", 0, O_RDONLY | O_NOFOLLOW},
	{OPEN, "/l", 0, O_RDONLY | O_DIRECTORY},
	{OPEN, "/f", 0, O_RDONLY | O_DIRECTORY},
	{OPEN, "/f/x", 0, O_RDONLY},
	{OPEN, "/f/x", 0, O_CREAT | O_WRONLY},
	{OPEN, "/nope/x", 0, O_CREAT | O_WRONLY},
	{OPEN, "/loop", 0, O_RDONLY},
	{OPEN, "/loop/x", 0, O_RDONLY},
	{OPEN, "/loop", 0, O_CREAT | O_WRONLY},
	{OPEN, "/dl", 0, O_CREAT | O_EXCL | O_WRONLY},
	{OPEN, "/l", 0, O_CREAT | O_EXCL | O_WRONLY},
	{OPEN, "/f", 0, O_CREAT | O_EXCL | O_WRONLY},
	{OPEN, "/up", 0, O_RDONLY},
	{OPEN, "/d/./../f", 0, O_RDONLY},
	{OPEN, "//d//g", 0, O_RDWR},
	{OPEN, "", 0, O_RDONLY},
	{OPEN, LONGNAME, 0, O_RDONLY},
	{OPEN, LONGNAME, 0, O_CREAT | O_WRONLY},
	{OPEN, "/created", 0, O_CREAT | O_EXCL | O_WRONLY},
	{OPEN, "/created", 0, O_WRONLY | O_TRUNC},
	{OPEN, "/t", 0, O_RDONLY | O_TRUNC}, /* Linux truncates */
	/* mkdir */
	{MKDIR, "/nd/", 0, 0},
	{MKDIR, "/nd2//", 0, 0},
	{MKDIR, "/f/", 0, 0},
	{MKDIR, "/f", 0, 0},
	{MKDIR, "/d", 0, 0},
	{MKDIR, "/f/x", 0, 0},
	{MKDIR, "/dl", 0, 0},
	{MKDIR, "/l/", 0, 0},
	{MKDIR, "/nope/x", 0, 0},
	{MKDIR, "/d/.", 0, 0},
	{MKDIR, "/d/..", 0, 0},
	{MKDIR, LONGNAME, 0, 0},
	{MKDIR, "/ld/viaLink", 0, 0},
	/* rmdir */
	{RMDIR, "/f", 0, 0},
	{RMDIR, "/d", 0, 0},
	{RMDIR, "/d/.", 0, 0},
	{RMDIR, "/d/..", 0, 0},
	{RMDIR, "/ld", 0, 0},
	{RMDIR, "/ld/", 0, 0},
	{RMDIR, "/nope", 0, 0},
	{RMDIR, "/f/x", 0, 0},
	{RMDIR, "/nd2/", 0, 0},
	{RMDIR, "/nd2", 0, 0},
	/* unlink */
	{UNLINK, "/d", 0, 0},
	{UNLINK, "/d/", 0, 0},
	{UNLINK, "/f/", 0, 0},
	{UNLINK, "/l/", 0, 0},
	{UNLINK, "/ld/", 0, 0},
	{UNLINK, "/nope", 0, 0},
	{UNLINK, "/f/x", 0, 0},
	{UNLINK, "/dl/", 0, 0},
	{UNLINK, "/created", 0, 0},
	{UNLINK, "/created", 0, 0},
	/* rename */
	{RENAME, "/f", "/d", 0},
	{RENAME, "/d", "/f", 0},
	{RENAME, "/d", "/d/sub/x", 0},
	{RENAME, "/d", "/d", 0},
	{RENAME, "/f", "/f", 0},
	{RENAME, "/f/", "/g", 0},
	{RENAME, "/f", "/g/", 0},
	{RENAME, "/nope", "/g", 0},
	{RENAME, "/f", "/nope/g", 0},
	{RENAME, "/empty", "/d", 0},
	{RENAME, "/d/.", "/x2", 0},
	{RENAME, "/f", "/d/..", 0},
	{RENAME, "/f", "/l", RENAME_NOREPLACE},
	{RENAME, "/f", "/nope", RENAME_EXCHANGE},
	{RENAME, "/f", "/l", RENAME_NOREPLACE | RENAME_EXCHANGE},
	{RENAME, "/l", "/ld", RENAME_EXCHANGE},
	{RENAME, "/empty/", "/empty2/", 0},
	{RENAME, "/nd/", "/empty2", 0},
	{RENAME, "/d/g", "/moved", RENAME_NOREPLACE},
	/* link */
	{LINK, "/d", "/dd", 0},
	{LINK, "/f", "/d/g", 0},
	{LINK, "/f", "/new/", 0},
	{LINK, "/f/", "/hl", 0},
	{LINK, "/nope", "/hl", 0},
	{LINK, "/f", "/nope/hl", 0},
	{LINK, "/l", "/hl-of-link", 0},
	{LINK, "/f", "/hl", 0},
	/* symlink */
	{SYMLINK, "t", "/f", 0},
	{SYMLINK, "t", "/s1/", 0},
	{SYMLINK, "t", "/nope/s", 0},
	{SYMLINK, "t", "/f/s", 0},
	{SYMLINK, "", "/s2", 0},
	{SYMLINK, "d", "/s3", 0},
	{SYMLINK, "t", "/dl", 0},
	/* truncate, chmod, utimens */
	{TRUNCATE, "/d", 0, 0},
	{TRUNCATE, "/l", 0, 3},
	{TRUNCATE, "/nope", 0, 0},
	{TRUNCATE, "/f/", 0, 0},
	{TRUNCATE, "/dl", 0, 0},
	{TRUNCATE, "/loop", 0, 0},
	{CHMOD, "/dl", 0, 0},
	{CHMOD, "/f/", 0, 0},
	{CHMOD, "/ld/", 0, 0},
	{UTIMENS, "/loop", 0, 0},
	{UTIMENS, "/d/g/", 0, 0},
	/* stat, readlink, opendir */
	{STAT, "/dl", 0, 0},
	{LSTAT, "/dl", 0, 0},
	{LSTAT, "/dl/", 0, 0},
	{STAT, "/loop", 0, 0},
	{LSTAT, "/loop", 0, 0},
	{STAT, "/f/", 0, 0},
	{STAT, "/ld/", 0, 0},
	{LSTAT, "/ld/", 0, 0},
	{LSTAT, "/l/", 0, 0},
	{STAT, "", 0, 0},
	{STAT, LONGNAME, 0, 0},
	{READLINK, "/f", 0, 0},
	{READLINK, "/d", 0, 0},
	{READLINK, "/l", 0, 0},
	{READLINK, "/l/", 0, 0},
	{READLINK, "/ld/", 0, 0},
	{READLINK, "/dl", 0, 0},
	{READLINK, "/nope", 0, 0},
	{OPENDIR, "/f", 0, 0},
	{OPENDIR, "/ld", 0, 0},
	{OPENDIR, "/dl", 0, 0},
	{OPENDIR, "/d/sub/", 0, 0},
	/* fifos */
	{MKFIFO, "/fifo", 0, 0},
	{MKFIFO, "/fifo", 0, 0},
	{MKFIFO, "/fifo2/", 0, 0},
	{OPEN, "/fifo/", 0, O_RDONLY},
	/* xattrs (user namespace, flags, sizes) */
	{SETXATTR, "/x", "user.a", XATTR_REPLACE},
	{SETXATTR, "/x", "user.a", XATTR_CREATE},
	{SETXATTR, "/x", "user.a", XATTR_CREATE},
	{SETXATTR, "/x", "user.b", XATTR_REPLACE},
	{SETXATTR, "/x", "user.b", XATTR_CREATE},
	{SETXATTR, "/x", "user.b", XATTR_REPLACE},
	{SETXATTR, "/x", "user.c", 0},
	{GETXATTR, "/x", "user.a", 64},
	{GETXATTR, "/x", "user.a", 0},
	{GETXATTR, "/x", "user.none", 64},
	{GETXATTR, "/nope", "user.a", 64},
	{LISTXATTR, "/x", 0, 0},
	{REMOVEXATTR, "/x", "user.c", 0},
	{REMOVEXATTR, "/x", "user.c", 0},
	{LISTXATTR, "/x", 0, 0},
	{SETXATTR, "/nope", "user.a", 0},
	{REMOVEXATTR, "/x/", "user.a", 0},
	{SETXATTR, "/d", "user.ondir", 0},
	{GETXATTR, "/d/", "user.ondir", 64},
	/* a directory renamed into place over an empty one, then removed */
	{MKDIR, "/r1", 0, 0},
	{MKDIR, "/r2", 0, 0},
	{RENAME, "/r1", "/r2", 0},
	{RMDIR, "/r1", 0, 0},
	{RMDIR, "/r2/", 0, 0},
	/* O_CREAT through a dangling symlink creates its target */
	{OPEN, "/dl", 0, O_CREAT | O_WRONLY},
	{OPEN, "/d", 0, O_CREAT | O_RDONLY},
	{OPEN, "/d/..", 0, O_CREAT | O_RDONLY},
	{OPEN, "/nope/x/", 0, O_CREAT | O_RDONLY},
	{UNLINK, "/d/.", 0, 0},
	{LINK, "/f", "/d/.", 0},
	{SYMLINK, "t", "/d/..", 0},
	{MKFIFO, "/.", 0, 0},
};

/* The tree under a directory, one line per entry, sorted: name, type,
 * size (files), target (symlinks), a checksum of the content (files). */
static void host_tree(const char *dir, const char *rel, FILE *out)
{
	DIR *d = opendir(dir);
	assert_non_null(d);
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		char p[PATH_MAX], r[PATH_MAX];
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		snprintf(r, sizeof(r), "%s/%s", rel, e->d_name);
		struct stat st;
		assert_int_equal(lstat(p, &st), 0);
		if (S_ISDIR(st.st_mode)) {
			fprintf(out, "%s dir %o\n", r, st.st_mode & 07777);
			host_tree(p, r, out);
		} else if (S_ISLNK(st.st_mode)) {
			char t[256];
			ssize_t n = readlink(p, t, sizeof(t) - 1);
			assert_true(n >= 0);
			t[n] = 0;
			fprintf(out, "%s link %s\n", r, t);
		} else if (S_ISREG(st.st_mode)) {
			unsigned long sum = 0;
			FILE *f = fopen(p, "rb");
			assert_non_null(f);
			int c;
			while ((c = fgetc(f)) != EOF)
				sum = sum * 31 + (unsigned char)c;
			fclose(f);
			fprintf(out, "%s file %o %lld %lx nlink=%lu\n", r, st.st_mode & 07777, (long long)st.st_size, sum,
				(unsigned long)st.st_nlink);
		} else {
			fprintf(out, "%s other %o\n", r, st.st_mode & 07777);
		}
	}
	closedir(d);
}

static void ubi_tree(struct ubikit_fs *fs, const char *rel, FILE *out)
{
	struct ubikit_dir *d;
	assert_int_equal(ubikit_opendir(fs, *rel ? rel : "/", &d), 0);
	struct ubikit_dirent e;
	int r;
	while ((r = ubikit_readdir(d, &e)) == 1) {
		char p[PATH_MAX];
		snprintf(p, sizeof(p), "%s/%s", rel, e.name);
		struct ubikit_stat st;
		assert_int_equal(ubikit_lstat(fs, p, &st), 0);
		if (S_ISDIR(st.mode)) {
			fprintf(out, "%s dir %o\n", p, st.mode & 07777);
			ubi_tree(fs, p, out);
		} else if (S_ISLNK(st.mode)) {
			char t[256];
			ssize_t n = ubikit_readlink(fs, p, t, sizeof(t) - 1);
			assert_true(n >= 0);
			t[n] = 0;
			fprintf(out, "%s link %s\n", p, t);
		} else if (S_ISREG(st.mode)) {
			unsigned long sum = 0;
			struct ubikit_file *f;
			assert_int_equal(ubikit_open(fs, p, O_RDONLY, 0, &f), 0);
			unsigned char buf[4096];
			ssize_t n;
			uint64_t off = 0;
			while ((n = ubikit_pread(f, buf, sizeof(buf), off)) > 0) {
				for (ssize_t i = 0; i < n; i++)
					sum = sum * 31 + buf[i];
				off += (uint64_t)n;
			}
			assert_true(n == 0);
			ubikit_close(f);
			fprintf(out, "%s file %o %llu %lx nlink=%lu\n", p, st.mode & 07777, (unsigned long long)st.size, sum,
				(unsigned long)st.nlink);
		} else {
			fprintf(out, "%s other %o\n", p, st.mode & 07777);
		}
	}
	assert_int_equal(r, 0);
	ubikit_closedir(d);
}

/* the lines fill() writes, sorted; the caller frees them */
static char *sorted(void (*fill)(FILE *, void *), void *arg, const char *name)
{
	char path[PATH_MAX], cmd[PATH_MAX * 2 + 32];
	snprintf(path, sizeof(path), "%s/%s", WORK, name);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fill(f, arg);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "sort -o %s %s", path, path);
	assert_int_equal(system(cmd), 0);
	f = fopen(path, "r");
	assert_non_null(f);
	char *b = calloc(1, 16384);
	assert_non_null(b);
	size_t n = fread(b, 1, 16383, f);
	b[n] = 0;
	fclose(f);
	return b;
}

static void fill_host(FILE *out, void *arg)
{
	(void)arg;
	host_tree(HOST, "", out);
}

static void fill_ubi(FILE *out, void *arg)
{
	ubi_tree(arg, "", out);
}

static struct ubikit_fs *mnt(struct ubi_vol_io *vol)
{
	assert_int_equal(ubi_flat_open(WORK "/img", 0, 0, vol), 0);
	struct ubikit_mount_opts o = {0};
	struct ubikit_fs *fs = NULL;
	char msg[512];
	if (ubikit_mount_ex(vol, &o, &fs, msg, sizeof(msg)))
		fail_msg("mount: %s", msg);
	return fs;
}

static void t_errnos_as_host(void **s)
{
	(void)s;
	umask(0); /* modes as asked on both sides */
	/* The tree is made on the host first, then copied by mkfs.ubifs. */
	int r = system("set -e; rm -rf " WORK "; mkdir -p " HOST "/d/sub " HOST "/empty; cd " HOST
		       "; printf hello. > f; echo g > d/g; : > x; echo trunc me > t; ln -s f l; ln -s d ld; ln -s nope dl;"
		       " ln -s loop loop; ln -s d/../f up;"
		       " mkfs.ubifs -r " HOST " -m 2048 -e 126976 -c 64 -o " WORK "/img");
	if (r != 0) {
		printf("SKIP: could not build the reference tree (mkfs.ubifs of mtd-utils missing?)\n");
		exit(77);
	}
	struct ubi_vol_io vol;
	struct ubikit_fs *fs = mnt(&vol);
	/* a host directory without user xattrs (tmpfs before Linux 6.6)
	 * judges no xattr call */
	int host_xattrs = lsetxattr(HOST "/x", "user.probe", "p", 1, 0) == 0;
	if (host_xattrs)
		assert_int_equal(lremovexattr(HOST "/x", "user.probe"), 0);
	else
		printf("note: %s has no user xattrs (%s): xattr calls not judged\n", HOST, strerror(errno));
	int bad = 0;
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		enum kind k = ops[i].k;
		if (!host_xattrs && (k == SETXATTR || k == GETXATTR || k == REMOVEXATTR || k == LISTXATTR))
			continue;
		int want = host_op(&ops[i]);
		int got = ubi_op(fs, &ops[i]);
		if (want != got) {
			printf("op %zu %s(%s%s%s, %#x): host %d (%s), ubikit %d (%s)\n", i, kname[ops[i].k],
			       strlen(ops[i].a) > 40 ? "<long>" : ops[i].a, ops[i].b ? ", " : "",
			       ops[i].b ? ops[i].b : "", ops[i].flags, want, want < 0 ? strerror(-want) : "ok", got,
			       got < 0 ? strerror(-got) : "ok");
			bad++;
		}
	}
	char *h = sorted(fill_host, NULL, "host.tree");
	char *u = sorted(fill_ubi, fs, "ubikit.tree");
	if (strcmp(h, u))
		printf("trees differ (diff %s/host.tree %s/ubikit.tree):\n--- host\n%s--- ubikit\n%s", WORK, WORK, h, u);
	assert_string_equal(h, u);
	/* the same after a commit and a fresh mount */
	assert_int_equal(ubikit_unmount(fs), 0);
	ubi_flat_close(&vol);
	fs = mnt(&vol);
	free(u);
	u = sorted(fill_ubi, fs, "ubikit2.tree");
	assert_string_equal(h, u);
	free(h);
	free(u);
	assert_int_equal(ubikit_unmount(fs), 0);
	ubi_flat_close(&vol);
	assert_int_equal(bad, 0);
}

/* Calls on open files (write, pwrite, ftruncate, O_APPEND) through the same
 * open flags on both sides: each result (bytes or errno) and the files'
 * contents after, the host's being the reference. */
static long h_call(int fd, int what, off_t arg)
{
	long r;
	switch (what) {
	case 0: r = write(fd, "zz", 2); break;
	case 1: r = pwrite(fd, "PQ", 2, arg); break;
	default: r = ftruncate(fd, arg); break;
	}
	return r < 0 ? -errno : r;
}

static long u_call(struct ubikit_file *f, int what, off_t arg)
{
	switch (what) {
	case 0: return ubikit_write(f, "zz", 2);
	case 1: return ubikit_pwrite(f, "PQ", 2, (uint64_t)arg);
	default: return ubikit_ftruncate(f, (uint64_t)arg);
	}
}

static void t_fd_calls(void **s)
{
	(void)s;
	umask(0);
	int r = system("set -e; rm -rf " WORK "; mkdir -p " HOST "/d; cd " HOST
		       "; for n in 0 1 2 3 4 5; do printf hello. > f$n; done;"
		       " mkfs.ubifs -r " HOST " -m 2048 -e 126976 -c 64 -o " WORK "/img");
	if (r != 0) {
		printf("SKIP: could not build the reference tree (mkfs.ubifs of mtd-utils missing?)\n");
		exit(77);
	}
	struct ubi_vol_io vol;
	struct ubikit_fs *fs = mnt(&vol);
	static const struct {
		const char *path;
		int flags;
		int what; /* 0 write, 1 pwrite, 2 ftruncate */
		off_t arg;
	} c[] = {
		{"/f0", O_RDONLY, 0, 0},           {"/f0", O_RDONLY, 1, 0},
		{"/f0", O_RDONLY, 2, 1},           {"/d", O_RDONLY, 0, 0},
		{"/d", O_RDONLY | O_DIRECTORY, 2, 0},
		{"/f1", O_WRONLY | O_APPEND, 0, 0}, {"/f1", O_WRONLY | O_APPEND, 0, 0},
		{"/f2", O_WRONLY, 2, 3},           {"/f2", O_WRONLY, 0, 0},
		{"/f3", O_RDWR, 2, 20},            {"/f3", O_RDWR, 1, 15},
		{"/f4", O_RDWR | O_APPEND, 2, 2},   {"/f4", O_RDWR | O_APPEND, 0, 0},
		{"/f5", O_WRONLY, 1, 10},          {"/f5", O_WRONLY, 0, 0},
	};
	int bad = 0;
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		char hpath[256];
		snprintf(hpath, sizeof(hpath), "%s%s", HOST, c[i].path);
		int fd = open(hpath, c[i].flags);
		assert_true(fd >= 0);
		struct ubikit_file *f = NULL;
		assert_int_equal(ubikit_open(fs, c[i].path, c[i].flags, 0, &f), 0);
		long want = h_call(fd, c[i].what, c[i].arg), got = u_call(f, c[i].what, c[i].arg);
		if (want != got) {
			printf("call %zu (%s, flags %#x, %s %ld): host %ld, ubikit %ld\n", i, c[i].path, c[i].flags,
			       c[i].what == 0 ? "write" : c[i].what == 1 ? "pwrite" : "ftruncate", (long)c[i].arg, want,
			       got);
			bad++;
		}
		close(fd);
		assert_int_equal(ubikit_close(f), 0);
	}
	/* O_CREAT through chains of dangling symlinks (Linux follows 40, the
	 * 41st is ELOOP), relative targets taken from the link's directory,
	 * O_EXCL and O_NOFOLLOW not following, a path of PATH_MAX bytes */
	for (int chain = 39; chain <= 41; chain++) {
		for (int k = 1; k <= chain; k++) {
			char lk[64], tg[64], hl[320];
			snprintf(lk, sizeof(lk), "/c%d_%d", chain, k);
			if (k < chain)
				snprintf(tg, sizeof(tg), "c%d_%d", chain, k + 1);
			else
				snprintf(tg, sizeof(tg), "d/made%d", chain);
			snprintf(hl, sizeof(hl), "%s%s", HOST, lk);
			assert_int_equal(symlink(tg, hl), 0);
			assert_int_equal(ubikit_symlink(fs, tg, lk), 0);
		}
	}
	assert_int_equal(symlink("relt", HOST "/d/rl"), 0);
	assert_int_equal(ubikit_symlink(fs, "relt", "/d/rl"), 0);
	static char longp[4200];
	memset(longp, 'a', sizeof(longp) - 1);
	longp[0] = '/';
	static const struct {
		const char *path;
		int flags;
	} cr[] = {
		{"/c39_1", O_CREAT | O_WRONLY},          {"/c40_1", O_CREAT | O_WRONLY},
		{"/c41_1", O_CREAT | O_WRONLY},          {"/d/rl", O_CREAT | O_WRONLY},
		{"/c39_5", O_CREAT | O_EXCL | O_WRONLY}, {"/c39_6", O_CREAT | O_NOFOLLOW | O_WRONLY},
		{longp, O_CREAT | O_WRONLY},
	};
	for (size_t i = 0; i < sizeof(cr) / sizeof(cr[0]); i++) {
		static char hpath[sizeof(longp) + 300];
		snprintf(hpath, sizeof(hpath), "%s%s", HOST, cr[i].path);
		int fd = open(cr[i].path == longp ? cr[i].path : hpath, cr[i].flags, 0644);
		int want = fd < 0 ? -errno : 0;
		if (fd >= 0)
			close(fd);
		struct ubikit_file *f = NULL;
		int got = ubikit_open(fs, cr[i].path, cr[i].flags, 0644, &f);
		if (f)
			assert_int_equal(ubikit_close(f), 0);
		if (want != got) {
			printf("open %.40s flags %#x: host %d, ubikit %d\n", cr[i].path, cr[i].flags, want, got);
			bad++;
		}
	}
	char *h = sorted(fill_host, NULL, "host-fd.tree");
	char *u = sorted(fill_ubi, fs, "ubikit-fd.tree");
	if (strcmp(h, u))
		printf("trees differ:\n--- host\n%s--- ubikit\n%s", h, u);
	assert_string_equal(h, u);
	free(h);
	free(u);
	assert_int_equal(ubikit_unmount(fs), 0);
	ubi_flat_close(&vol);
	assert_int_equal(bad, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_errnos_as_host),
		cmocka_unit_test(t_fd_calls),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
