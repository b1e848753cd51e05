/* test_fsck_inplace — fsck repairs in place what the index can mend, and
 * leaves everything else as it was (no rebuild from a scan, which would
 * bring back files whose deletion was committed long ago).
 *
 * The damage is the one Linux before 6.10 leaves after a power cut that
 * follows the unlink of an open file with an xattr (kernel bugzilla
 * 218661): its orphan processing removes the host inode's nodes, the xattr
 * entry with them, and keeps the xattr inode (link count 1). Planted here
 * on a kernel-written NAND image exactly so: the host's key range is
 * removed from the index and committed. Then:
 *  - fsck -n: exactly one problem, naming the xattr inode (its number read
 *    from the xattr entry before the damage);
 *  - fsck -a: corrected, nothing lost, no rebuild;
 *  - fsck -n again: clean; every file of the image still reads as before,
 *    the other file's xattr is still there, no lost+found appeared. */
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
#include <unistd.h>
#include <cmocka.h>
#include "image/image_test_unpack.h"
#include <zlib.h>
#include <ubikit/fsck.h>
#include <ubikit/image.h>
#include <ubikit/ubikit.h>

#include "fs/fs.h"
#include "ubifs/ubifs.h"
#include "ubifs/ubifs_media.h"
#include "ubifs/ubifs_tnc.h"

#define DATA UBIKIT_TEST_DATA "/kernel-images/nand2k-clean"
#define WORK UBIKIT_BUILD_DIR "/fsck-inplace"
#define IMG WORK "/nand.img"

static void unpack(void)
{
	image_test_unpack(DATA ".img.gz", WORK, IMG);
}

static struct ubikit_image *open_img(int rdwr)
{
	struct ubikit_image_opts o;
	ubikit_image_opts_init(&o);
	if (rdwr)
		o.flags |= UBIKIT_IMAGE_RDWR;
	struct ubikit_image *img = NULL;
	char msg[1024];
	if (ubikit_image_open(IMG, &o, &img, msg, sizeof(msg)))
		fail_msg("open: %s", msg);
	assert_non_null(ubikit_image_fs(img));
	return img;
}

/* the inode the first xattr entry of host names, from the index */
static uint32_t xattr_inum_of(struct ubikit_fs *fs, uint64_t host)
{
	struct ubifs_fs *u = fs_ubifs(fs);
	struct ubifs_key k = ubifs_key_make((uint32_t)host, UBIFS_XENT_KEY, 0);
	struct ubifs_tnc_pos pos;
	assert_int_equal(ubifs_tnc_seek(u, &k, 0, &pos), 0);
	struct ubifs_zbranch zb = *ubifs_tnc_at(&pos);
	assert_int_equal(zb.key.inum, host);
	assert_int_equal(ubifs_key_type(&zb.key), UBIFS_XENT_KEY);
	static uint8_t node[UBIFS_MAX_NODE_SZ];
	assert_int_equal(ubifs_tnc_read_leaf(u, &zb, node), 0);
	struct ubifs_dent_node d;
	ubifs_dent_unpack(node, &d);
	assert_true(d.inum > host);
	return (uint32_t)d.inum;
}

/* names and sizes of the root directory, one line each, sorted by readdir order */
static void list_root(struct ubikit_fs *fs, char *out, size_t len)
{
	struct ubikit_dir *d;
	assert_int_equal(ubikit_opendir(fs, "/", &d), 0);
	struct ubikit_dirent e;
	size_t at = 0;
	out[0] = '\0';
	while (ubikit_readdir(d, &e) == 1) {
		struct ubikit_stat st;
		char p[300];
		snprintf(p, sizeof(p), "/%s", e.name);
		assert_int_equal(ubikit_lstat(fs, p, &st), 0);
		at += (size_t)snprintf(out + at, len - at, "%s %llu %o\n", e.name, (unsigned long long)st.size, st.mode);
		assert_true(at < len);
	}
	assert_int_equal(ubikit_closedir(d), 0);
}

static void t_unattached_xattr_inode(void **s)
{
	(void)s;
	unpack();
	static char before[1 << 16], after[1 << 16];
	struct ubikit_image *img = open_img(1);
	struct ubikit_fs *fs = ubikit_image_fs(img);
	struct ubikit_file *f;
	assert_int_equal(ubikit_open(fs, "/victim", O_WRONLY | O_CREAT | O_EXCL, 0644, &f), 0);
	assert_int_equal(ubikit_write(f, "gone soon\n", 10), 10);
	assert_int_equal(ubikit_close(f), 0);
	assert_int_equal(ubikit_setxattr(fs, "/victim", "user.tag", "v1", 2, UBIKIT_XATTR_CREATE), 0);
	assert_int_equal(ubikit_open(fs, "/keeper", O_WRONLY | O_CREAT | O_EXCL, 0600, &f), 0);
	assert_int_equal(ubikit_write(f, "stays\n", 6), 6);
	assert_int_equal(ubikit_close(f), 0);
	assert_int_equal(ubikit_setxattr(fs, "/keeper", "user.keep", "yes", 3, UBIKIT_XATTR_CREATE), 0);
	assert_int_equal(ubikit_sync(fs), 0);
	struct ubikit_stat st;
	assert_int_equal(ubikit_stat(fs, "/victim", &st), 0);
	uint64_t host = st.ino;
	uint32_t xinum = xattr_inum_of(fs, host);
	/* unlinked while open, committed as an orphan (the xattr inode an
	 * orphan too); then what Linux 6.1's orphan processing does at the
	 * next mount: the host's key range removed, the xattr inode kept */
	struct ubikit_file *held;
	assert_int_equal(ubikit_open(fs, "/victim", O_RDONLY, 0, &held), 0);
	assert_int_equal(ubikit_unlink(fs, "/victim"), 0);
	assert_int_equal(ubikit_sync(fs), 0);
	struct ubifs_key lo = ubifs_key_make((uint32_t)host, UBIFS_INO_KEY, 0);
	struct ubifs_key hi = {(uint32_t)host, 0xFFFFFFFFu};
	assert_int_equal(ubifs_tnc_remove_range(fs_ubifs(fs), &lo, &hi), 0);
	assert_int_equal(ubikit_close(held), 0);
	assert_int_equal(ubikit_sync(fs), 0);
	assert_int_equal(ubikit_image_close(img), 0);

	/* the check sees exactly the unattached xattr inode */
	struct ubikit_fsck_report rep;
	ubikit_fsck_report_init(&rep);
	char msg[1024];
	assert_int_equal(ubikit_fsck_image(IMG, NULL, UBIKIT_FSCK_CHECK, &rep, msg, sizeof(msg)), UBIKIT_FSCK_LEFT);
	assert_int_equal(rep.count, 1);
	assert_int_equal(rep.problems[0].inum, xinum);
	assert_non_null(strstr(rep.problems[0].msg, "link count 1, but 0 entries"));
	ubikit_fsck_report_free(&rep);

	img = open_img(0);
	list_root(ubikit_image_fs(img), before, sizeof(before));
	assert_int_equal(ubikit_image_close(img), 0);

	/* -a mends it in place: nothing lost, no rebuild */
	ubikit_fsck_report_init(&rep);
	int rc = ubikit_fsck_image(IMG, NULL, UBIKIT_FSCK_AUTO, &rep, msg, sizeof(msg));
	int fixed_x = 0;
	for (size_t i = 0; i < rep.count; i++) {
		print_message("  %s\n", rep.problems[i].msg);
		assert_false(rep.problems[i].flags & UBIKIT_FSCK_LOSS);
		assert_null(strstr(rep.problems[i].msg, "rebuilt"));
		if ((rep.problems[i].flags & UBIKIT_FSCK_FIXED) && rep.problems[i].inum == xinum)
			fixed_x = 1;
	}
	assert_int_equal(rc, UBIKIT_FSCK_CORRECTED);
	assert_true(fixed_x);
	assert_int_equal(rep.repaired, 1);
	ubikit_fsck_report_free(&rep);

	ubikit_fsck_report_init(&rep);
	assert_int_equal(ubikit_fsck_image(IMG, NULL, UBIKIT_FSCK_CHECK, &rep, msg, sizeof(msg)), UBIKIT_FSCK_CLEAN);
	ubikit_fsck_report_free(&rep);

	img = open_img(0);
	fs = ubikit_image_fs(img);
	list_root(fs, after, sizeof(after));
	assert_string_equal(before, after); /* no lost+found, nothing back */
	assert_int_equal(ubikit_stat(fs, "/victim", &st), -ENOENT);
	char buf[16];
	assert_int_equal(ubikit_getxattr(fs, "/keeper", "user.keep", buf, sizeof(buf)), 3);
	assert_memory_equal(buf, "yes", 3);
	assert_int_equal(ubikit_open(fs, "/keeper", O_RDONLY, 0, &f), 0);
	assert_int_equal(ubikit_pread(f, buf, sizeof(buf), 0), 6);
	assert_memory_equal(buf, "stays\n", 6);
	assert_int_equal(ubikit_close(f), 0);
	assert_int_equal(ubikit_image_close(img), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_unattached_xattr_inode),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
