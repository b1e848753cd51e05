/* test_ubifs_recovery — the kernel's recovery rules on a kernel-written
 * power-cut image (tests/data/ubifs/replay-nand2k), damaged on purpose:
 *  - garbage in the last written unit of the last bud, 0xFF after it: a torn
 *    write, cut silently;
 *  - a corrupt last node of the last bud: dropped;
 *  - garbage followed by more data, or a bad node in a bud that is not the
 *    last of its head: refused, naming the LEB and offset;
 *  - a damaged copy of the master node: the other one is used;
 *    both master LEBs destroyed, or the log tail's commit start node broken:
 *    refused with a message.
 * The judge is the Linux kernel: tests/data/ubifs/recovery/CASE.manifest is
 * what it showed when it mounted the same damaged volume in the VM (or
 * "REFUSED"), made by tests/ubifs/make_recovery_manifests.sh. Our whole tree
 * (tests/tools/ubifs_manifest.sh format) must equal it, and we must refuse
 * exactly what the kernel refused. With UBIKIT_RECOVERY_EXPORT=DIR set, each
 * damaged volume is also written to DIR/CASE.flat.gz (LEBs back to back) for
 * that script. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <ubikit/ubikit.h>

#include "flash/flash.h"
#include "fs/fs.h"
#include "ubi/ubi_flat.h"
#include "ubifs/ubifs.h"
#include "ubifs/ubifs_scan.h"
#include "ubifs_test_manifest.h"
#include "ubifs_test_tree.h"
#include "util/util_crc.h"
#include "util/util_endian.h"

#define WORK UBIKIT_BUILD_DIR "/ubifs-recovery"

static uint8_t *base;
static size_t base_len;
static uint32_t leb;

struct bud {
	uint32_t lnum, offs, jhead;
};
static struct bud buds[64];
static int nbuds;
static uint32_t log_lnum;

static int mount_img(const uint8_t *img, struct ubikit_fs **fs, struct ubi_vol_io *vol, char *msg, size_t ml)
{
	struct util_err e;
	util_err_clear(&e);
	int err = ubi_flat_open_mem(img, base_len, leb, 1, vol, &e);
	if (err) {
		snprintf(msg, ml, "%s", e.msg);
		return err;
	}
	err = ubikit_mount_ex(vol, NULL, fs, msg, ml);
	if (err)
		ubi_flat_close(vol);
	return err;
}

static int ref_cb(void *arg, const struct ubifs_scan_node *n)
{
	(void)arg;
	if (n->kind == UBIFS_SCAN_NODE && n->type == UBIFS_REF_NODE && nbuds < 64) {
		buds[nbuds].lnum = get_le32(n->node + 24);
		buds[nbuds].offs = get_le32(n->node + 28);
		buds[nbuds].jhead = get_le32(n->node + 32);
		nbuds++;
	}
	return 0;
}

struct lastnode {
	uint32_t node_offs, node_len, empty_offs;
};
static int last_cb(void *arg, const struct ubifs_scan_node *n)
{
	struct lastnode *l = arg;
	if (n->kind == UBIFS_SCAN_NODE) {
		l->node_offs = n->offs;
		l->node_len = n->len;
	} else if (n->kind == UBIFS_SCAN_EMPTY) {
		l->empty_offs = n->offs;
	}
	return 0;
}

static int setup(void **s)
{
	(void)s;
	if (tt_run("mkdir -p '%s'", WORK))
		return -1;
	struct flash_geometry geo = {FLASH_NAND, 2048, 512, 64, 131072, 128};
	int err = tt_ubi_gz_to_flat(UBIKIT_TEST_DATA "/ubifs/replay-nand2k.img.gz", &geo, 0, WORK "/nand.img", &base,
				    &base_len, &leb);
	if (err)
		return -1;
	struct ubikit_fs *fs;
	struct ubi_vol_io vol;
	char msg[512];
	if (mount_img(base, &fs, &vol, msg, sizeof(msg))) {
		fprintf(stderr, "baseline mount: %s\n", msg);
		return -1;
	}
	struct ubifs_fs_info info;
	ubifs_get_info(fs_ubifs(fs), &info);
	log_lnum = info.mst.log_lnum;
	ubikit_unmount(fs);
	/* the buds, from the reference nodes of the log */
	if (ubifs_scan_leb(&vol, log_lnum, 8, ref_cb, NULL))
		return -1;
	ubi_flat_close(&vol);
	fprintf(stderr, "baseline: log LEB %u, %d buds\n", log_lnum, nbuds);
	return nbuds >= 2 ? 0 : -1;
}

static int teardown(void **s)
{
	(void)s;
	free(base);
	return 0;
}

static int last_bud_of(uint32_t jhead)
{
	int r = -1;
	for (int i = 0; i < nbuds; i++)
		if (buds[i].jhead == jhead)
			r = i;
	return r;
}

static struct lastnode scan_last(const uint8_t *img, uint32_t lnum)
{
	struct ubi_vol_io vol;
	struct lastnode l = {0, 0, leb};
	assert_int_equal(ubi_flat_open_mem(img, base_len, leb, 1, &vol, NULL), 0);
	assert_int_equal(ubifs_scan_leb(&vol, lnum, 8, last_cb, &l), 0);
	ubi_flat_close(&vol);
	return l;
}

/* Export a damaged volume for make_recovery_manifests.sh (then only that:
 * returns 1, the caller checks nothing). */
static int export_case(const char *name, const uint8_t *img)
{
	const char *dir = getenv("UBIKIT_RECOVERY_EXPORT");
	if (!dir || !*dir)
		return 0;
	char p[1024];
	snprintf(p, sizeof(p), "%s/%s.flat", dir, name);
	FILE *f = fopen(p, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(img, 1, base_len, f), base_len);
	fclose(f);
	assert_int_equal(tt_run("gzip -1 -f '%s'", p), 0);
	return 1;
}

/* What the kernel did with this damaged volume: 1 mounted, 0 refused. */
static int kernel_mounts(const char *name, char *mf, size_t ml)
{
	snprintf(mf, ml, "%s/ubifs/recovery/%s.manifest", UBIKIT_TEST_DATA, name);
	char *want = tm_slurp(mf);
	if (!want)
		fail_msg("%s: no kernel manifest %s (tests/ubifs/make_recovery_manifests.sh)", name, mf);
	int mounts = strcmp(want, "REFUSED\n") != 0;
	free(want);
	return mounts;
}

/* The kernel mounted it: so must we, with the same tree. */
static void expect_mount_ok(const char *name, const uint8_t *img, int expect_recovered)
{
	if (export_case(name, img))
		return;
	char mf[512];
	if (!kernel_mounts(name, mf, sizeof(mf)))
		fail_msg("%s: the kernel refuses this volume, the test expects it to mount", name);
	struct ubikit_fs *fs;
	struct ubi_vol_io vol;
	char msg[512];
	int err = mount_img(img, &fs, &vol, msg, sizeof(msg));
	if (err)
		fail_msg("%s: mount refused: %d %s (the kernel mounts it)", name, err, msg);
	struct ubifs_fs_info info;
	ubifs_get_info(fs_ubifs(fs), &info);
	char *got = tm_manifest(fs);
	fprintf(stderr, "  %s mounted: %u torn tails cut, master recovered %d\n", name, info.recovered_lebs,
		info.mst_recovered);
	if (tm_compare(got, mf, WORK, name))
		fail_msg("%s: our tree differs from the kernel's", name);
	/* after an unclean unmount the kernel leaves no inode unnamed (replay
	 * deletes, orphans are killed); on our volumes marked clean by hand the
	 * open-unlinked file of the original stays, as it would for the kernel */
	if (info.need_recovery)
		assert_int_equal(tm_lost_inodes(fs, name), 0);
	free(got);
	if (expect_recovered)
		assert_true(info.recovered_lebs >= 1);
	ubikit_unmount(fs);
	ubi_flat_close(&vol);
}

/* The kernel refused it: so must we, with a message naming the place. */
static void expect_refused(const char *name, const uint8_t *img, const char *must_contain)
{
	if (export_case(name, img))
		return;
	char mf[512];
	if (kernel_mounts(name, mf, sizeof(mf)))
		fail_msg("%s: the kernel mounts this volume, the test expects a refusal", name);
	struct ubikit_fs *fs;
	struct ubi_vol_io vol;
	char msg[512] = "";
	int err = mount_img(img, &fs, &vol, msg, sizeof(msg));
	if (!err) {
		ubikit_unmount(fs);
		ubi_flat_close(&vol);
		fail_msg("%s: mount should have been refused (the kernel refuses it)", name);
	}
	fprintf(stderr, "  %s refused (%d): %s\n", name, err, msg);
	assert_non_null(strstr(msg, must_contain));
}

static uint8_t *copy(void)
{
	uint8_t *c = malloc(base_len);
	memcpy(c, base, base_len);
	return c;
}

/* The method itself: the untouched volume, written back with ubiupdatevol,
 * must show the kernel the tree of tests/data/ubifs/replay-nand2k.manifest
 * (make_recovery_manifests.sh checks that), and us the same. */
static void t_untouched(void **s)
{
	(void)s;
	expect_mount_ok("untouched", base, 0);
}

static void t_torn_tail(void **s)
{
	(void)s;
	int b = last_bud_of(2);
	assert_true(b >= 0);
	uint8_t *img = copy();
	struct lastnode l = scan_last(img, buds[b].lnum);
	assert_true(l.empty_offs < leb - 4096);
	fprintf(stderr, "last data bud LEB %u, empty from %u\n", buds[b].lnum, l.empty_offs);
	memset(img + (size_t)buds[b].lnum * leb + l.empty_offs, 0x00, 100);
	expect_mount_ok("torn-tail", img, 1);
	/* the same torn tail on a file system marked clean: the kernel only
	 * recovers after an unclean unmount, otherwise it is corruption */
	uint8_t *clean = malloc(base_len);
	memcpy(clean, img, base_len);
	for (uint32_t m = 1; m <= 2; m++)
		for (uint32_t o = 0; o + 512 <= leb; o += 2048) {
			uint8_t *n = clean + (size_t)m * leb + o;
			if (get_le32(n) != 0x06101831u || n[20] != 7)
				continue;
			put_le32(n + 40, get_le32(n + 40) & ~1u); /* clear DIRTY */
			put_le32(n + 4, util_crc32(UTIL_CRC32_INIT, n + 8, 512 - 8));
		}
	char where0[64];
	snprintf(where0, sizeof(where0), "LEB %u:%u", buds[b].lnum, l.empty_offs);
	expect_refused("torn-tail-clean", clean, where0);
	memcpy(clean, base, base_len); /* an untouched journal mounts clean or not */
	for (uint32_t m = 1; m <= 2; m++)
		for (uint32_t o = 0; o + 512 <= leb; o += 2048) {
			uint8_t *n = clean + (size_t)m * leb + o;
			if (get_le32(n) != 0x06101831u || n[20] != 7)
				continue;
			put_le32(n + 40, get_le32(n + 40) & ~1u);
			put_le32(n + 4, util_crc32(UTIL_CRC32_INIT, n + 8, 512 - 8));
		}
	expect_mount_ok("untouched-clean", clean, 0);
	free(clean);
	/* more data two write units later: not a power cut any more */
	memset(img + (size_t)buds[b].lnum * leb + l.empty_offs + 3 * 2048, 0x5A, 64);
	char where[64];
	snprintf(where, sizeof(where), "LEB %u:", buds[b].lnum);
	expect_refused("torn-tail-more-data", img, where);
	free(img);
}

static void t_corrupt_last_node(void **s)
{
	(void)s;
	int b = last_bud_of(1);
	assert_true(b >= 0);
	uint8_t *img = copy();
	struct lastnode l = scan_last(img, buds[b].lnum);
	assert_true(l.node_len > 0);
	img[(size_t)buds[b].lnum * leb + l.node_offs + l.node_len - 1] ^= 0xFF;
	expect_mount_ok("corrupt-last-node", img, 0);
	free(img);
}

static void t_bad_node_in_older_bud(void **s)
{
	(void)s;
	int b = -1;
	for (int i = 0; i < nbuds && b < 0; i++)
		if (last_bud_of(buds[i].jhead) != i)
			b = i;
	if (b < 0) /* the stored image has one: its absence means a broken scan */
		fail_msg("no bud that is not the last of its head");
	uint8_t *img = copy();
	size_t at = (size_t)buds[b].lnum * leb + buds[b].offs;
	assert_int_equal(get_le32(img + at), 0x06101831u);
	img[at + 30] ^= 0x01; /* inside the first node: its CRC breaks */
	char where[64];
	snprintf(where, sizeof(where), "LEB %u:%u", buds[b].lnum, buds[b].offs);
	expect_refused("bad-node-older-bud", img, where);
	free(img);
}

static int mst_cb(void *arg, const struct ubifs_scan_node *n)
{
	if (n->kind == UBIFS_SCAN_NODE && n->type == UBIFS_MST_NODE)
		*(uint32_t *)arg = n->offs;
	return 0;
}

static void t_master(void **s)
{
	(void)s;
	uint8_t *img = copy();
	struct ubi_vol_io vol;
	uint32_t off2 = 0;
	assert_int_equal(ubi_flat_open_mem(img, base_len, leb, 1, &vol, NULL), 0);
	assert_int_equal(ubifs_scan_leb(&vol, 2, 8, mst_cb, &off2), 0);
	ubi_flat_close(&vol);
	/* the newest copy in LEB 2 damaged: LEB 1's copy is used */
	img[(size_t)2 * leb + off2 + 100] ^= 0x10;
	expect_mount_ok("master-copy-damaged", img, 0);
	/* both master LEBs destroyed */
	memset(img + (size_t)1 * leb, 0x00, 2 * (size_t)leb);
	expect_refused("master-both-destroyed", img, "master");
	free(img);
}

static void t_log_tail(void **s)
{
	(void)s;
	uint8_t *img = copy();
	img[(size_t)log_lnum * leb + 12] ^= 0x01; /* the commit start node's sqnum */
	char where[64];
	snprintf(where, sizeof(where), "LEB %u:0", log_lnum);
	expect_refused("log-tail-cs-broken", img, where);
	free(img);
}

/* An inode node whose size is smaller than the data the journal holds for
 * it (as after a power cut between writing data and the inode): after an
 * unclean unmount the kernel reads it with the size of its data
 * (ubifs_recover_size); on a clean file system it keeps the stored size. */
static void t_size_fixup(void **s)
{
	(void)s;
	struct ubikit_fs *fs;
	struct ubi_vol_io vol;
	char msg[512];
	assert_int_equal(mount_img(base, &fs, &vol, msg, sizeof(msg)), 0);
	/* the newest of m/n200..m/n299: its nodes are in the journal */
	struct ubikit_stat st;
	uint64_t inum = 0;
	char path[64];
	for (int i = 200; i < 300; i++) {
		char p[32];
		snprintf(p, sizeof(p), "/m/n%d", i);
		assert_int_equal(ubikit_stat(fs, p, &st), 0);
		if (st.ino > inum) {
			inum = st.ino;
			snprintf(path, sizeof(path), "%s", p);
		}
	}
	assert_int_equal(ubikit_stat(fs, path, &st), 0);
	uint64_t size = st.size;
	assert_true(size >= 4);
	ubikit_unmount(fs);
	ubi_flat_close(&vol);
	/* its newest inode node */
	uint8_t *img = copy();
	size_t best = 0;
	uint64_t best_sq = 0;
	for (size_t o = 0; o + 160 <= base_len; o += 8) {
		const uint8_t *n = img + o;
		if (get_le32(n) != 0x06101831u || n[20] != 0 || get_le32(n + 24) != inum || get_le32(n + 28) != 0)
			continue;
		if (get_le64(n + 8) > best_sq) {
			best_sq = get_le64(n + 8);
			best = o;
		}
	}
	assert_true(best_sq > 0);
	uint8_t *n = img + best;
	assert_int_equal(get_le64(n + 48), size);
	put_le64(n + 48, 1);
	put_le32(n + 4, util_crc32(UTIL_CRC32_INIT, n + 8, get_le32(n + 16) - 8));
	expect_mount_ok("size-fixup", img, 0);
	assert_int_equal(mount_img(img, &fs, &vol, msg, sizeof(msg)), 0);
	assert_int_equal(ubikit_stat(fs, path, &st), 0);
	fprintf(stderr, "  %s (inode %llu): inode node says 1, journal data reaches %llu: read size %llu\n", path,
		(unsigned long long)inum, (unsigned long long)size, (unsigned long long)st.size);
	assert_int_equal(st.size, size);
	ubikit_unmount(fs);
	ubi_flat_close(&vol);
	/* marked clean: no recovery, the stored size stands */
	for (uint32_t m = 1; m <= 2; m++)
		for (uint32_t o = 0; o + 512 <= leb; o += 2048) {
			uint8_t *mn = img + (size_t)m * leb + o;
			if (get_le32(mn) != 0x06101831u || mn[20] != 7)
				continue;
			put_le32(mn + 40, get_le32(mn + 40) & ~1u);
			put_le32(mn + 4, util_crc32(UTIL_CRC32_INIT, mn + 8, 512 - 8));
		}
	expect_mount_ok("size-fixup-clean", img, 0);
	assert_int_equal(mount_img(img, &fs, &vol, msg, sizeof(msg)), 0);
	assert_int_equal(ubikit_stat(fs, path, &st), 0);
	assert_int_equal(st.size, 1);
	ubikit_unmount(fs);
	ubi_flat_close(&vol);
	free(img);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_untouched), cmocka_unit_test(t_torn_tail), cmocka_unit_test(t_corrupt_last_node),
		cmocka_unit_test(t_bad_node_in_older_bud), cmocka_unit_test(t_master), cmocka_unit_test(t_log_tail), cmocka_unit_test(t_size_fixup),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
