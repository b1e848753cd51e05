/* test_ubifs_compr_err — data nodes whose compressed bytes are damaged but
 * whose node CRC was recomputed (so only the decompressor can tell), for
 * each compressor (lzo, zlib, zstd): images made by mkfs.ubifs at test
 * time, one data node of one file rewritten in the image. As the kernel
 * (fs/ubifs/file.c read_block: a decompression failure or a size mismatch
 * is a bad data node, the read fails), reading that block must fail with
 * an error, a read of the other blocks and of the other file must return
 * the source bytes, and nothing may ever return other bytes. Damage kinds:
 * garbage payload, the second half of the payload zeroed, payload that
 * decompresses to more bytes than the node's size says. */
#include <errno.h>
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
#include "ubifs_test_tree.h"
#include "util/util_crc.h"
#include "util/util_endian.h"

#define WORK UBIKIT_BUILD_DIR "/ubifs-compr-err"
enum { LEB = 126976, BLK = 4096, FSZ = 5 * BLK + 100 };

static uint8_t src_a[FSZ], src_b[FSZ];

static void make_src(void)
{
	/* compressible, different per block, so each block has its own node */
	for (size_t i = 0; i < FSZ; i++) {
		src_a[i] = (uint8_t)("abcdefgh\n"[(i / 3) % 9] + (i / BLK));
		src_b[i] = (uint8_t)("0123456789ABCDEF"[(i / 5) % 16] ^ (i / BLK));
	}
	assert_int_equal(tt_run("rm -rf '%s/src' && mkdir -p '%s/src'", WORK, WORK), 0);
	FILE *f = fopen(WORK "/src/a", "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(src_a, 1, FSZ, f), FSZ);
	fclose(f);
	f = fopen(WORK "/src/b", "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(src_b, 1, FSZ, f), FSZ);
	fclose(f);
}

static uint8_t *load(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	*len = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *b = malloc(*len);
	assert_int_equal(fread(b, 1, *len, f), *len);
	fclose(f);
	return b;
}

/* The data node of (inum, block) in a flat image: offset or 0. Nodes are
 * 8-byte aligned; the magic, the type and the key identify it, and its
 * CRC must match (no stale copy). */
static size_t find_data_node(const uint8_t *img, size_t len, uint32_t inum, uint32_t block)
{
	for (size_t o = 0; o + 48 <= len; o += 8) {
		if (get_le32(img + o) != 0x06101831u || img[o + 20] != 1 /* UBIFS_DATA_NODE */)
			continue;
		uint32_t nlen = get_le32(img + o + 16);
		if (nlen < 48 || nlen > BLK + 48 || (o % LEB) + nlen > LEB)
			continue;
		if (get_le32(img + o + 24) != inum || get_le32(img + o + 28) != (block | (1u << 29)))
			continue;
		if (util_crc32(UTIL_CRC32_INIT, img + o + 8, nlen - 8) != get_le32(img + o + 4))
			continue;
		return o;
	}
	return 0;
}

static void fix_crc(uint8_t *node)
{
	uint32_t nlen = get_le32(node + 16);
	put_le32(node + 4, util_crc32(UTIL_CRC32_INIT, node + 8, nlen - 8));
}

enum damage { GARBAGE, TRUNCATE, SIZE_MISMATCH };

/* 1: mounted and checked */
static void check_damaged(const char *name, uint8_t *img, size_t len, uint32_t inum, enum damage how, unsigned compr)
{
	size_t o = find_data_node(img, len, inum, 2);
	assert_int_not_equal(o, 0);
	uint8_t *n = img + o;
	uint32_t nlen = get_le32(n + 16);
	assert_int_equal(get_le16(n + 44), compr); /* the compressor under test */
	uint32_t clen = nlen - 48;
	assert_true(clen > 8 && clen < BLK); /* really compressed */
	uint8_t *save = malloc(nlen);
	memcpy(save, n, nlen);
	switch (how) {
	case GARBAGE:
		for (uint32_t i = 0; i < clen; i++)
			n[48 + i] = (uint8_t)(0xA5 ^ (i * 31));
		break;
	case TRUNCATE:
		/* the stream's second half zeroed (the node keeps its length,
		 * which the index also records) */
		memset(n + 48 + clen / 2, 0, clen - clen / 2);
		break;
	case SIZE_MISMATCH:
		/* the node claims one byte less than its data gives */
		assert_int_equal(get_le32(n + 40), BLK);
		put_le32(n + 40, BLK - 1);
		break;
	}
	fix_crc(n);
	struct ubi_vol_io vol;
	assert_int_equal(ubi_flat_open_mem(img, len, 0, 1, &vol, NULL), 0);
	struct ubikit_fs *fs;
	char msg[512];
	if (ubikit_mount_ex(&vol, NULL, &fs, msg, sizeof(msg)))
		fail_msg("%s: mount: %s", name, msg);
	static uint8_t b[FSZ];
	struct ubikit_stat st;
	assert_int_equal(ubikit_stat(fs, "/a", &st), 0);
	uint64_t ia = st.ino;
	assert_int_equal(ubikit_stat(fs, "/b", &st), 0);
	uint64_t ib = st.ino;
	const uint8_t *srcd = ia == inum ? src_a : src_b;
	const uint8_t *srco = ia == inum ? src_b : src_a;
	uint64_t other = ia == inum ? ib : ia;
	/* the damaged block fails, with a message naming it */
	memset(b, 0, sizeof(b));
	ssize_t r = ubikit_pread_ino(fs, inum, b, BLK, 2 * BLK);
	if (r >= 0)
		fail_msg("%s: damaged block read returned %zd bytes", name, r);
	assert_true(r == -EINVAL || r == -EIO);
	if (!strstr(ubikit_errmsg(fs), "block 2"))
		fail_msg("%s: message: %s", name, ubikit_errmsg(fs));
	/* a read across it: an error, or only the bytes before it, all right */
	r = ubikit_pread_ino(fs, inum, b, FSZ, 0);
	assert_true(r < 0 || r <= 2 * BLK);
	if (r > 0)
		assert_memory_equal(b, srcd, (size_t)r);
	/* the rest of that file and the other file are intact */
	assert_int_equal(ubikit_pread_ino(fs, inum, b, 2 * BLK, 0), 2 * BLK);
	assert_memory_equal(b, srcd, 2 * BLK);
	assert_int_equal(ubikit_pread_ino(fs, inum, b, FSZ - 3 * BLK, 3 * BLK), FSZ - 3 * BLK);
	assert_memory_equal(b, srcd + 3 * BLK, FSZ - 3 * BLK);
	assert_int_equal(ubikit_pread_ino(fs, other, b, FSZ, 0), FSZ);
	assert_memory_equal(b, srco, FSZ);
	ubikit_unmount(fs);
	ubi_flat_close(&vol);
	memcpy(n, save, nlen);
	free(save);
}

static void run(const char *compr, unsigned id)
{
	char img[512];
	snprintf(img, sizeof(img), "%s/%s.img", WORK, compr);
	make_src();
	int rc = tt_run("mkfs.ubifs -r '%s/src' -m 2048 -e %u -c 64 -x %s -o '%s'", WORK, LEB, compr, img);
	if (rc)
		fail_msg("mkfs.ubifs -x %s failed (%d)", compr, rc);
	size_t len;
	uint8_t *b = load(img, &len);
	/* the undamaged image reads back the sources (the reference) */
	struct ubi_vol_io vol;
	assert_int_equal(ubi_flat_open_mem(b, len, 0, 1, &vol, NULL), 0);
	struct ubikit_fs *fs;
	assert_int_equal(ubikit_mount(&vol, NULL, &fs), 0);
	struct ubikit_stat st;
	assert_int_equal(ubikit_stat(fs, "/a", &st), 0);
	uint32_t ia = (uint32_t)st.ino;
	assert_int_equal(ubikit_stat(fs, "/b", &st), 0);
	uint32_t ib = (uint32_t)st.ino;
	static uint8_t r[FSZ];
	assert_int_equal(ubikit_pread_ino(fs, ia, r, FSZ, 0), FSZ);
	assert_memory_equal(r, src_a, FSZ);
	ubikit_unmount(fs);
	ubi_flat_close(&vol);
	char name[64];
	snprintf(name, sizeof(name), "%s garbage", compr);
	check_damaged(name, b, len, ia, GARBAGE, id);
	snprintf(name, sizeof(name), "%s truncated", compr);
	check_damaged(name, b, len, ib, TRUNCATE, id);
	snprintf(name, sizeof(name), "%s size mismatch", compr);
	check_damaged(name, b, len, ia, SIZE_MISMATCH, id);
	free(b);
}

static void t_lzo(void **s) { (void)s; run("lzo", 1); }
static void t_zlib(void **s) { (void)s; run("zlib", 2); }
static void t_zstd(void **s) { (void)s; run("zstd", 3); }

int main(void)
{
	if (tt_run("command -v mkfs.ubifs >/dev/null") != 0) {
		fprintf(stderr, "mkfs.ubifs (mtd-utils) not installed\n");
		return 77;
	}
	mkdir(UBIKIT_BUILD_DIR, 0755);
	mkdir(WORK, 0755);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_lzo),
		cmocka_unit_test(t_zlib),
		cmocka_unit_test(t_zstd),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
