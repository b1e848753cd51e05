/* test_ubifs_write — the write path against a reference model
 * (ubifs_write_model.c): mkfs.ubifs images of several geometries and
 * compressors are mounted read-write, changed by random operation
 * sequences, unmounted without a commit (so the next mount must replay
 * what we journaled), mounted again read-only and compared with the model
 * (contents, modes, link counts, directory sizes, xattr accounting); then a
 * second read-write round on top of the replayed journal. The mkfs tree
 * must be untouched. The Linux kernel's view of the same kind of image is
 * checked by tests/vm/ubifs_write_kernel.sh. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ubi/ubi_flat.h"
#include "ubifs/ubifs.h"
#include "ubifs/ubifs_journal.h"
#include "ubifs/ubifs_lpt.h"
#include "ubifs/ubifs_priv.h"
#include "ubifs_test_tree.h"
#include "ubifs_write_model.h"

#define WORK UBIKIT_BUILD_DIR "/ubifs-write"

static struct ubifs_fs *mount_img(const char *img, int ro, struct ubi_vol_io *vol)
{
	assert_int_equal(ubi_flat_open(img, 0, ro, vol), 0);
	struct util_err e = {0};
	struct ubifs_mount_opts o = {.read_only = ro};
	struct ubifs_fs *fs = NULL;
	int err = ubifs_mount(vol, &o, &fs, &e);
	if (err)
		fail_msg("mount %s (%s): %d %s", img, ro ? "ro" : "rw", err, e.msg);
	return fs;
}

/* rounds: 0 journal only; 1 commit at unmount; 2 commits in the middle
 * too (ubifs_sync) — after a commit the LPT must equal a scan of the flash
 * (the kernel's dbg_check_lprops rules, ubifs_lpt_check) */
static void run_case(const char *name, const char *mkfs_args, uint64_t seed, unsigned ops)
{
	char img[512], why[512];
	snprintf(img, sizeof(img), "%s/%s.img", WORK, name);
	assert_int_equal(tt_run("mkdir -p '%s/empty' && mkfs.ubifs -r '%s/empty' %s -o '%s'", WORK, WORK, mkfs_args, img),
			 0);
	struct ubi_vol_io vol;
	struct wm *m = NULL;
	for (int round = 0; round < 3; round++) {
		struct ubifs_fs *fs = mount_img(img, 0, &vol);
		if (!m)
			assert_int_equal(wm_new(fs, seed, &m), 0);
		for (int part = 0; part < (round == 2 ? 3 : 1); part++) {
			if (wm_run(m, fs, ops / (round == 2 ? 3 : 1), 1, why, sizeof(why)))
				fail_msg("%s round %d: %s", name, round, why);
			if (round == 2) {
				if (ubifs_sync(fs))
					fail_msg("%s round %d: commit: %s", name, round, ubifs_errmsg(fs));
				if (ubifs_lpt_check(fs->lpt))
					fail_msg("%s round %d, LPT after a commit: %s", name, round, ubifs_errmsg(fs));
				if (ubifs_check(fs))
					fail_msg("%s round %d, ubifs_check after a commit: %s", name, round, ubifs_errmsg(fs));
			}
		}
		if (wm_check(m, fs, why, sizeof(why)))
			fail_msg("%s round %d, before unmount: %s", name, round, why);
		/* live, with a dirty index: write-buffers out, then lprops against the flash */
		assert_int_equal(ubifs_jnl_sync_all(fs), 0);
		if (ubifs_lpt_check(fs->lpt))
			fail_msg("%s round %d, live LPT: %s", name, round, ubifs_errmsg(fs));
		if (round == 0)
			assert_int_equal(ubifs_unmount_journal(fs), 0);
		else if (ubifs_unmount(fs))
			fail_msg("%s round %d: unmount with commit failed", name, round);
		assert_int_equal(ubi_flat_close(&vol), 0);
		fs = mount_img(img, 1, &vol);
		struct ubifs_fs_info info;
		ubifs_get_info(fs, &info);
		assert_true(round > 0 || info.replayed_nodes > 0);
		assert_true(round == 0 || info.mst.cmt_no > 0);
		if (wm_check(m, fs, why, sizeof(why)))
			fail_msg("%s round %d, after replay: %s", name, round, why);
		if (ubifs_lpt_check(fs->lpt))
			fail_msg("%s round %d, LPT after the unmount commit: %s", name, round, ubifs_errmsg(fs));
		if (ubifs_check(fs))
			fail_msg("%s round %d, ubifs_check after remount: %s", name, round, ubifs_errmsg(fs));

		unsigned nops, files;
		uint64_t bytes;
		wm_stats(m, &nops, &files, &bytes);
		print_message("%s round %d: %u ops, %u created, %llu bytes written; commit %llu, replay: %u buds, %llu nodes\n",
			      name, round, nops, files, (unsigned long long)bytes, (unsigned long long)info.mst.cmt_no,
			      info.buds, (unsigned long long)info.replayed_nodes);
		ubifs_unmount(fs);
		ubi_flat_close(&vol);
	}
	wm_free(m);
}

static void t_nand2k_lzo(void **s) { (void)s; run_case("nand2k_lzo", "-m 2048 -e 126976 -c 400 -x lzo", 1, 400); }
static void t_nor_zstd(void **s) { (void)s; run_case("nor_zstd", "-m 8 -e 65408 -c 400 -x zstd", 2, 400); }
static void t_nand512_none(void **s) { (void)s; run_case("nand512_none", "-m 512 -e 15872 -c 2000 -x none -f 4", 3, 150); }
static void t_nand4k_zlib(void **s) { (void)s; run_case("nand4k_zlib", "-m 4096 -e 253952 -c 200 -x zlib", 4, 400); }

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_nand2k_lzo),
		cmocka_unit_test(t_nor_zstd),
		cmocka_unit_test(t_nand512_none),
		cmocka_unit_test(t_nand4k_zlib),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
