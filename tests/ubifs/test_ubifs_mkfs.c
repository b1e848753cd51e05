/* test_ubifs_mkfs — images made at test time by Debian's mkfs.ubifs, for each
 * compressor and several geometries, mounted read-only through ubi_flat and
 * compared entry by entry with the source tree (content, modes, link counts,
 * owners, mtimes, sizes, symlink targets, device numbers, hard links,
 * readdir order). Also: key hash "test" (heavy collisions), a tiny TNC cache
 * (eviction), a >4 GiB sparse file, and the volume is never written. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>
#include <ubikit/ubikit.h>

#include "fs/fs.h"
#include "ubi/ubi_flat.h"
#include "ubifs/ubifs.h"
#include "ubifs/ubifs_scan.h"
#include "ubifs_test_tree.h"
#include "util/util_endian.h"

#define WORK UBIKIT_BUILD_DIR "/ubifs-test"

static int has_devices;

static int setup_tree(void **state)
{
	(void)state;
	if (tt_run("mkdir -p '%s'", WORK))
		return -1;
	if (tt_make_tree(WORK "/src", 0, &has_devices))
		return -1;
	if (!has_devices)
		fprintf(stderr, "note: not root, device nodes not tested\n");
	return 0;
}

/* Count writes: the read-only mount must never call them. */
struct spy {
	struct ubi_vol_io inner;
	int writes;
};
static int spy_read(void *ctx, uint32_t l, uint32_t o, void *b, size_t n)
{
	struct spy *s = ctx;
	return s->inner.read(s->inner.ctx, l, o, b, n);
}
static int spy_write(void *ctx, uint32_t l, uint32_t o, const void *b, size_t n)
{
	(void)l, (void)o, (void)b, (void)n;
	((struct spy *)ctx)->writes++;
	return -EROFS;
}
static int spy_change(void *ctx, uint32_t l, const void *b, size_t n)
{
	(void)l, (void)b, (void)n;
	((struct spy *)ctx)->writes++;
	return -EROFS;
}
static int spy_lnum(void *ctx, uint32_t l)
{
	(void)l;
	((struct spy *)ctx)->writes++;
	return -EROFS;
}

static void check_image(const char *img, const char *src, size_t cache, int expect_compr)
{
	struct ubi_vol_io vol;
	struct util_err e = {{0}};
	int err = ubi_flat_open_err(img, 0, 1, &vol, &e);
	if (err)
		fail_msg("ubi_flat_open %s: %d %s", img, err, e.msg);
	struct spy spy = {.inner = vol};
	struct ubi_vol_io sv = vol;
	sv.ctx = &spy;
	sv.read = spy_read;
	sv.write = spy_write;
	sv.change = spy_change;
	sv.unmap = spy_lnum;
	sv.map = spy_lnum;
	struct ubikit_mount_opts o = {.flags = UBIKIT_MOUNT_RDONLY, .tnc_cache_bytes = cache};
	struct ubikit_fs *fs;
	char msg[512];
	err = ubikit_mount_ex(&sv, &o, &fs, msg, sizeof(msg));
	if (err)
		fail_msg("mount %s: %d %s", img, err, msg);
	uint64_t entries = 0;
	int bad = tt_compare_tree(fs, src, &entries);
	struct ubifs_fs_info info;
	assert_int_equal(ubifs_get_info(fs_ubifs(fs), &info), 0);
	fprintf(stderr, "%s: %llu entries compared, %d mismatches; TNC peak %zu bytes (limit %zu), %llu loads, %llu evictions\n",
		img, (unsigned long long)entries, bad, info.tnc_peak_bytes, info.tnc_cache_bytes,
		(unsigned long long)info.tnc_loads, (unsigned long long)info.tnc_evictions);
	assert_int_equal(bad, 0);
	assert_true(entries > 2000);
	if (expect_compr >= 0)
		assert_int_equal(info.sb.default_compr, expect_compr);
	/* mkfs leaves an empty journal and a clean master */
	assert_int_equal(info.need_recovery, 0);
	assert_int_equal(info.replayed_nodes, 0);
	/* bounded cache: clean znodes beyond the limit are evicted */
	assert_true(info.tnc_cached_bytes <= info.tnc_cache_bytes + 64 * 1024);
	if (cache && cache < 64 * 1024)
		assert_true(info.tnc_evictions > 0);
	/* path semantics */
	struct ubikit_stat st;
	assert_int_equal(ubikit_stat(fs, "/link_to_hello", &st), 0);
	assert_true(S_ISREG(st.mode));
	assert_int_equal(ubikit_lstat(fs, "/link_to_hello", &st), 0);
	assert_true(S_ISLNK(st.mode));
	assert_int_equal(ubikit_stat(fs, "/dangling", &st), -ENOENT);
	assert_int_equal(ubikit_stat(fs, "/hello.txt/x", &st), -ENOTDIR);
	assert_int_equal(ubikit_stat(fs, "/dir_link/file", &st), 0);
	assert_int_equal(ubikit_stat(fs, "/dir_link/../deep/./deeper/x", &st), 0);
	assert_int_equal(ubikit_stat(fs, "/abs_link", &st), 0);
	assert_int_equal(st.size, 10);
	assert_int_equal(ubikit_stat(fs, "/nope", &st), -ENOENT);
	assert_int_equal(ubikit_lookup_ino(fs, UBIKIT_ROOT_INO, "many", &st.ino), 0);
	struct ubikit_file *f;
	assert_int_equal(ubikit_open(fs, "/hello.txt", 1 /* O_WRONLY */, 0, &f), -EROFS);
	ubikit_unmount(fs);
	assert_int_equal(spy.writes, 0);
	ubi_flat_close(&vol);
}

static void run_cfg(const char *name, const char *mkfs_args, size_t cache, int compr)
{
	char img[512];
	snprintf(img, sizeof(img), "%s/%s.img", WORK, name);
	int rc = tt_run("mkfs.ubifs -r '%s/src' %s -o '%s'", WORK, mkfs_args, img);
	if (rc)
		fail_msg("mkfs.ubifs %s failed (%d)", mkfs_args, rc);
	check_image(img, WORK "/src", cache, compr);
}

static void t_lzo_2k(void **s) { (void)s; run_cfg("lzo_2k", "-m 2048 -e 126976 -c 200 -x lzo", 0, 1); }
static void t_none_2k(void **s) { (void)s; run_cfg("none_2k", "-m 2048 -e 126976 -c 200 -x none", 0, 0); }
static void t_zlib_4k(void **s) { (void)s; run_cfg("zlib_4k", "-m 4096 -e 253952 -c 100 -x zlib", 0, 2); }
static void t_zstd_nor(void **s) { (void)s; run_cfg("zstd_nor", "-m 8 -e 65408 -c 300 -x zstd", 0, 3); }
static void t_favor_small(void **s) { (void)s; run_cfg("favor_small", "-m 8 -e 16256 -c 1000 -x favor_lzo", 0, 1); }
static void t_zstd_512(void **s) { (void)s; run_cfg("zstd_512", "-m 512 -e 15872 -c 2000 -x zstd -f 3", 0, 3); }
/* key hash "test": names sharing their first 4 bytes collide (2000 in many/) */
static void t_testhash(void **s) { (void)s; run_cfg("testhash", "-m 2048 -e 126976 -c 200 -k test -x lzo", 0, 1); }
/* a 16 KiB cache with fanout 4: constant eviction while walking */
static void t_tiny_cache(void **s) { (void)s; run_cfg("tiny_cache", "-m 2048 -e 126976 -c 200 -f 4 -x zlib", 16 * 1024, 2); }

/* the dump walker on damaged LEBs: keeps going, says what is wrong where */
struct dmg {
	unsigned nodes, badcrc, garbage, bad_empty, after_garbage;
	uint32_t garbage_at, empty_len;
};
static int dmg_cb(void *arg, const struct ubifs_scan_node *n)
{
	struct dmg *d = arg;
	if (n->kind == UBIFS_SCAN_NODE) {
		d->nodes++;
		d->badcrc += !n->crc_ok;
		if (d->garbage && n->offs > d->garbage_at)
			d->after_garbage++;
	} else if (n->kind == UBIFS_SCAN_GARBAGE) {
		d->garbage++;
		d->garbage_at = n->offs;
		assert_non_null(n->problem);
	} else if (n->kind == UBIFS_SCAN_BAD_EMPTY) {
		d->bad_empty++;
	} else if (n->kind == UBIFS_SCAN_EMPTY) {
		d->empty_len = n->len;
	}
	return 0;
}
static void t_scan_damaged(void **s)
{
	(void)s;
	struct ubi_vol_io vol;
	assert_int_equal(ubi_flat_open(WORK "/lzo_2k.img", 0, 1, &vol), 0);
	struct ubifs_sb_node sb;
	assert_int_equal(ubifs_read_sb(&vol, &sb, NULL), 0);
	uint32_t main_first = 3 + sb.log_lebs + sb.lpt_lebs + sb.orph_lebs, ls = vol.leb_size;
	uint8_t *leb = malloc(ls);
	/* a non-index main LEB with some empty space at its end */
	struct dmg clean;
	uint32_t l = main_first;
	for (;; l++) {
		assert_true(l < vol.leb_count);
		memset(&clean, 0, sizeof(clean));
		assert_int_equal(ubifs_scan_leb(&vol, l, 8, dmg_cb, &clean), 0);
		uint8_t t[24];
		assert_int_equal(vol.read(vol.ctx, l, 0, t, sizeof(t)), 0);
		if (clean.nodes > 10 && clean.empty_len > 4096 && t[20] != UBIFS_IDX_NODE)
			break;
	}
	assert_int_equal(vol.read(vol.ctx, l, 0, leb, ls), 0);
	ubi_flat_close(&vol);
	assert_true(clean.nodes > 10);
	assert_int_equal(clean.badcrc + clean.garbage + clean.bad_empty, 0);
	/* break the CRC of the 3rd node, overwrite 16 bytes at the 6th node's start,
	 * and put junk into the empty space at the end */
	uint32_t offs = 0, k = 0, third = 0, sixth = 0;
	while (offs < ls && get_le32(leb + offs) == 0x06101831u && k < 6) {
		if (k == 2)
			third = offs;
		if (k == 5)
			sixth = offs;
		offs += (get_le32(leb + offs + 16) + 7) & ~7u;
		k++;
	}
	assert_int_equal(k, 6);
	leb[third + 30] ^= 0x40;
	memset(leb + sixth, 0x55, 16);
	memset(leb + ls - 100, 0x00, 10);
	struct dmg d = {0};
	assert_int_equal(ubi_flat_open_mem(leb, ls, ls, 1, &vol, NULL), 0);
	assert_int_equal(ubifs_scan_leb(&vol, 0, 8, dmg_cb, &d), 0);
	ubi_flat_close(&vol);
	fprintf(stderr, "damaged LEB: %u nodes (%u before), %u bad CRC, %u garbage, %u bad empty, %u nodes after garbage\n",
		d.nodes, clean.nodes, d.badcrc, d.garbage, d.bad_empty, d.after_garbage);
	assert_int_equal(d.badcrc, 1);
	assert_int_equal(d.garbage, 1);
	assert_int_equal(d.bad_empty, 1);
	assert_int_equal(d.nodes, clean.nodes - 1);
	assert_true(d.after_garbage > 0);
	free(leb);
}

/* the comparison itself must notice differences */
static void t_compare_detects(void **s)
{
	(void)s;
	assert_int_equal(tt_run("rm -rf '%s/src2' && cp -a '%s/src' '%s/src2' && printf x >> '%s/src2/hello.txt' && "
				"chmod 0606 '%s/src2/empty' && ln -sf other '%s/src2/dangling' && touch '%s/src2/many/new'",
				WORK, WORK, WORK, WORK, WORK, WORK, WORK),
			 0);
	struct ubi_vol_io vol;
	assert_int_equal(ubi_flat_open(WORK "/lzo_2k.img", 0, 1, &vol), 0);
	struct ubikit_fs *fs;
	assert_int_equal(ubikit_mount(&vol, NULL, &fs), 0);
	uint64_t n;
	int bad = tt_compare_tree(fs, WORK "/src2", &n);
	fprintf(stderr, "(the mismatches above are expected: %d)\n", bad);
	assert_true(bad >= 4);
	ubikit_unmount(fs);
	ubi_flat_close(&vol);
	tt_run("rm -rf '%s/src2'", WORK);
}

/* a sparse file > 4 GiB (mkfs reads all 5 GiB: one configuration only) */
static void t_huge_sparse(void **s)
{
	(void)s;
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s/hsrc' && mkdir -p '%s/hsrc' && truncate -s 4294967396 '%s/hsrc/huge' && "
		 "printf 'tail of a >4GiB file' >> '%s/hsrc/huge' && truncate -s 5368709137 '%s/hsrc/huge' && "
		 "mkfs.ubifs -r '%s/hsrc' -m 2048 -e 126976 -c 100 -x zlib -o '%s/huge.img'",
		 WORK, WORK, WORK, WORK, WORK, WORK, WORK);
	assert_int_equal(tt_run("%s", cmd), 0);
	struct ubi_vol_io vol;
	assert_int_equal(ubi_flat_open(WORK "/huge.img", 0, 1, &vol), 0);
	struct ubikit_fs *fs;
	char msg[512];
	int err = ubikit_mount_ex(&vol, NULL, &fs, msg, sizeof(msg));
	if (err)
		fail_msg("mount: %d %s", err, msg);
	struct ubikit_stat st;
	assert_int_equal(ubikit_stat(fs, "/huge", &st), 0);
	assert_int_equal(st.size, 5368709137ull);
	struct ubikit_file *f;
	assert_int_equal(ubikit_open(fs, "/huge", 0, 0, &f), 0);
	char buf[64];
	assert_int_equal(ubikit_pread(f, buf, 20, 4294967396ull), 20);
	assert_memory_equal(buf, "tail of a >4GiB file", 20);
	assert_int_equal(ubikit_pread(f, buf, 64, 4294967396ull - 30), 64);
	for (int i = 0; i < 30; i++)
		assert_int_equal(buf[i], 0);
	assert_int_equal(ubikit_pread(f, buf, 64, 5368709137ull - 10), 10);
	assert_int_equal(ubikit_pread(f, buf, 64, 5368709137ull), 0);
	ubikit_close(f);
	ubikit_unmount(fs);
	ubi_flat_close(&vol);
	tt_run("rm -rf '%s/hsrc' '%s/huge.img'", WORK, WORK);
}

/* the dump scanner sees every node of a fresh image with a good CRC */
struct scnt {
	unsigned nodes, bad, idx, empty;
};
static int scan_cb(void *arg, const struct ubifs_scan_node *n)
{
	struct scnt *c = arg;
	if (n->kind == UBIFS_SCAN_NODE) {
		c->nodes++;
		if (!n->crc_ok)
			c->bad++;
		if (n->type == UBIFS_IDX_NODE)
			c->idx++;
	} else if (n->kind == UBIFS_SCAN_EMPTY) {
		c->empty++;
	} else if (n->kind != UBIFS_SCAN_PADDING) {
		fprintf(stderr, "scan: LEB %u:%u kind %d: %s\n", n->lnum, n->offs, n->kind, n->problem);
		c->bad++;
	}
	return 0;
}
static void t_scan(void **s)
{
	(void)s;
	struct ubi_vol_io vol;
	assert_int_equal(ubi_flat_open(WORK "/lzo_2k.img", 0, 1, &vol), 0);
	struct scnt c = {0};
	struct ubifs_sb_node sb;
	assert_int_equal(ubifs_read_sb(&vol, &sb, NULL), 0);
	uint32_t lpt_first = 3 + sb.log_lebs, lpt_end = lpt_first + sb.lpt_lebs, scanned = 0;
	for (uint32_t l = 0; l < vol.leb_count; l++) {
		if (l >= lpt_first && l < lpt_end)
			continue; /* LPT LEBs hold bit-packed LPT nodes, not UBIFS nodes */
		assert_int_equal(ubifs_scan_leb(&vol, l, 8, scan_cb, &c), 0);
		scanned++;
	}
	assert_true(c.nodes > 4000);
	assert_true(c.idx > 100);
	assert_int_equal(c.bad, 0);
	assert_true(c.empty > 0 && c.empty <= scanned);
	ubi_flat_close(&vol);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_lzo_2k),	cmocka_unit_test(t_none_2k),  cmocka_unit_test(t_zlib_4k),
		cmocka_unit_test(t_zstd_nor),	cmocka_unit_test(t_favor_small), cmocka_unit_test(t_zstd_512),
		cmocka_unit_test(t_testhash),	cmocka_unit_test(t_tiny_cache), cmocka_unit_test(t_scan), cmocka_unit_test(t_scan_damaged), cmocka_unit_test(t_compare_detects),
		cmocka_unit_test(t_huge_sparse),
	};
	return cmocka_run_group_tests(tests, setup_tree, NULL);
}
