/* test_ubifs_sb_master — every check on the superblock and the master node,
 * one field at a time: an image made by mkfs.ubifs at test time, one field
 * of the superblock (LEB 0) or of both master copies (LEBs 1 and 2) set to
 * a value the kernel refuses (fs/ubifs/sb.c validate_sb, master.c
 * validate_master), the node CRC recomputed; the mount must fail with the
 * errno and a message naming the field. A few values the kernel accepts
 * (a newer format that is read-only compatible, on a read-only mount) must
 * mount and read the files back. Also: a master copy that differs from the
 * other (recovery picks the valid one, as the kernel's ubifs_recover_master)
 * and a superblock that is not one. */
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

#define WORK UBIKIT_BUILD_DIR "/ubifs-sb-master"
enum { LEB = 126976 };

static uint8_t *img;
static size_t img_len;

static int setup(void **state)
{
	(void)state;
	mkdir(UBIKIT_BUILD_DIR, 0755);
	if (tt_run("rm -rf '%s' && mkdir -p '%s/src' && echo hello >'%s/src/hello' && "
		   "mkfs.ubifs -r '%s/src' -m 2048 -e %u -c 100 -x lzo -o '%s/img' >/dev/null",
		   WORK, WORK, WORK, WORK, LEB, WORK))
		return -1;
	FILE *f = fopen(WORK "/img", "rb");
	if (!f)
		return -1;
	fseek(f, 0, SEEK_END);
	img_len = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	img = malloc(100 * (size_t)LEB);
	memset(img, 0xFF, 100 * (size_t)LEB);
	if (fread(img, 1, img_len, f) != img_len)
		return -1;
	fclose(f);
	img_len = 100 * (size_t)LEB; /* the whole volume: free LEBs erased */
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	free(img);
	return 0;
}

static void fix_crc(uint8_t *n)
{
	put_le32(n + 4, util_crc32(UTIL_CRC32_INIT, n + 8, get_le32(n + 16) - 8));
}

enum where { SB, MST, MST1 /* only the copy in LEB 1 */ };
enum width { W8 = 1, W16 = 2, W32 = 4, W64 = 8 };

struct mut {
	enum where where;
	uint32_t off;
	enum width w;
	uint64_t val;
	int op; /* 0 set, 1 or, 2 and-not */
	int err;        /* expected mount result (0: mounts) */
	const char *msg;
};

static void put(uint8_t *p, enum width w, uint64_t v)
{
	switch (w) {
	case W8: p[0] = (uint8_t)v; break;
	case W16: put_le16(p, (uint16_t)v); break;
	case W32: put_le32(p, (uint32_t)v); break;
	case W64: put_le64(p, v); break;
	}
}
static uint64_t get(const uint8_t *p, enum width w)
{
	switch (w) {
	case W8: return p[0];
	case W16: return get_le16(p);
	case W32: return get_le32(p);
	default: return get_le64(p);
	}
}

static int try_mount(uint8_t *b, char *msg, size_t len, int rdonly)
{
	struct ubi_vol_io vol;
	assert_int_equal(ubi_flat_open_mem(b, img_len, LEB, 1, &vol, NULL), 0);
	struct ubikit_fs *fs;
	struct ubikit_mount_opts o = {.flags = rdonly ? UBIKIT_MOUNT_RDONLY : 0};
	int err = ubikit_mount_ex(&vol, &o, &fs, msg, len);
	if (!err) {
		char buf[16] = {0};
		struct ubikit_file *f;
		assert_int_equal(ubikit_open(fs, "/hello", 0, 0, &f), 0);
		assert_int_equal(ubikit_read(f, buf, sizeof(buf)), 6);
		assert_string_equal(buf, "hello\n");
		ubikit_close(f);
		ubikit_unmount(fs);
	}
	ubi_flat_close(&vol);
	return err;
}

static void apply(uint8_t *b, const struct mut *m)
{
	uint32_t lebs[2] = {m->where == SB ? 0 : 1, 2};
	int n = m->where == MST ? 2 : 1;
	for (int i = 0; i < n; i++) {
		uint8_t *node = b + (size_t)lebs[i] * LEB;
		assert_int_equal(get_le32(node), 0x06101831u);
		assert_int_equal(node[20], m->where == SB ? 6 : 7);
		uint64_t v = get(node + m->off, m->w);
		v = m->op == 0 ? m->val : m->op == 1 ? v | m->val : v & ~m->val;
		put(node + m->off, m->w, v);
		fix_crc(node);
	}
}

/* superblock fields: struct ubifs_sb_node; master: struct ubifs_mst_node */
static const struct mut muts[] = {
	/* superblock */
	{SB, 80, W32, 2, 0, -EINVAL, "version 2"},
	{SB, 26, W8, 2, 0, -EINVAL, "key hash"},
	{SB, 27, W8, 1, 0, -EINVAL, "key format"},
	{SB, 28, W32, 0x40, 1, -EINVAL, "unknown feature flags"},
	/* (min. I/O: a bare image takes it from the superblock itself) */
	{SB, 36, W32, LEB - 8, 0, -EINVAL, "LEB size mismatch"},
	{SB, 56, W32, 1, 0, -EINVAL, "too few log"},
	{SB, 60, W32, 1, 0, -EINVAL, "too few log"},
	{SB, 64, W32, 0, 0, -EINVAL, "too few log"},
	{SB, 40, W32, 101, 0, -EINVAL, "LEB count"}, /* a bare image grows to the superblock count */
	{SB, 44, W32, 12, 0, -EINVAL, "bad LEB count"}, /* no auto-resize: 13 < the minimum */
	{SB, 48, W64, 1000, 0, -EINVAL, "too small journal"},
	{SB, 48, W64, 200ull * LEB, 0, -EINVAL, "larger than the main area"},
	{SB, 68, W32, 2, 0, -EINVAL, "journal head count"},
	{SB, 72, W32, 2, 0, -EINVAL, "bad fanout"},
	{SB, 72, W32, 100000, 0, -EINVAL, "bad fanout"},
	{SB, 76, W32, 0x80000000u, 0, -EINVAL, "lsave count"},
	{SB, 84, W16, 9, 0, -EINVAL, "default compressor"},
	{SB, 96, W64, 1ull << 63, 0, -EINVAL, "reserved pool"},
	{SB, 104, W32, 0, 0, -EINVAL, "time granularity"},
	{SB, 104, W32, 1000000001, 0, -EINVAL, "time granularity"},
	{SB, 80, W32, 5, 0, -EINVAL, "double-hash"}, /* this image has no double-hash flag */
	{SB, 20, W8, 1, 0, -EINVAL, "not a superblock"}, /* a data node may be 4096 bytes long */
	{SB, 0, W32, 0x12345678, 0, -EINVAL, "magic"},
	/* master (both copies) */
	{MST, 8, W64, 0xFFFFFFFFFFFFFF00ull, 0, -EINVAL, "watermark"},
	{MST, 32, W64, 1ull << 40, 0, -EINVAL, "commit number"},
	{MST, 24, W64, 0xFFFFFF00ull, 0, -EINVAL, "inode number"},
	{MST, 44, W32, 1, 0, -EINVAL, "log LEB"},
	{MST, 48, W32, 3, 0, -EINVAL, "index root"},
	{MST, 52, W32, 4, 0, -EINVAL, "index root"},
	{MST, 56, W32, 8, 0, -EINVAL, "index root"},
	{MST, 60, W32, 2, 0, -EINVAL, "GC LEB"},
	{MST, 64, W32, 200, 0, -EINVAL, "index head"},
	{MST, 68, W32, 100, 0, -EINVAL, "index head"},
	{MST, 72, W64, 7, 0, -EINVAL, "index size"},
	{MST, 120, W32, 1, 0, -EINVAL, "LPT positions"},
	{MST, 132, W32, 100, 0, -EINVAL, "LPT positions"},
	{MST, 136, W32, 99, 0, -EINVAL, "LPT positions"},
	{MST, 152, W32, 1, 0, -EINVAL, "LPT scan"},
	{MST, 156, W32, 0x80000000u, 0, -EINVAL, "empty LEB count"},
	{MST, 160, W32, 1000, 0, -EINVAL, "index LEB count"},
	{MST, 80, W64, 3, 0, -EINVAL, "space totals"},
	{MST, 88, W64, 1ull << 40, 0, -EINVAL, "space totals"},
	{MST, 112, W64, 1ull << 62, 0, -EINVAL, "space totals"},
	{MST, 164, W32, 1000, 0, -EINVAL, "LEB count"},
	{MST, 20, W8, 1, 0, -EINVAL, "node in master LEB"},
};

static void test_fields(void **state)
{
	(void)state;
	uint8_t *b = malloc(img_len);
	char msg[512];
	/* the unchanged image mounts (the reference: the source tree) */
	memcpy(b, img, img_len);
	if (try_mount(b, msg, sizeof(msg), 1))
		fail_msg("unchanged image: %s", msg);
	for (size_t i = 0; i < sizeof(muts) / sizeof(muts[0]); i++) {
		const struct mut *m = &muts[i];
		memcpy(b, img, img_len);
		apply(b, m);
		msg[0] = 0;
		int err = try_mount(b, msg, sizeof(msg), 1);
		if (err != m->err || (m->msg && !strstr(msg, m->msg)))
			fail_msg("case %zu (%s offset %u := 0x%llx): got %d '%s', expected %d '%s'", i,
				 m->where == SB ? "superblock" : "master", m->off, (unsigned long long)m->val, err, msg,
				 m->err, m->msg ? m->msg : "");
	}
	/* fmt 6 with ro_compat 0: read-only only; ro_compat 1: never */
	memcpy(b, img, img_len);
	struct mut fmt6 = {SB, 80, W32, 6, 0, 0, NULL}, dh = {SB, 28, W32, 0x8, 1, 0, NULL};
	apply(b, &fmt6);
	apply(b, &dh);
	if (try_mount(b, msg, sizeof(msg), 1))
		fail_msg("format 6, read-only compatible: %s", msg);
	struct mut roc = {SB, 124, W32, 1, 0, 0, NULL};
	apply(b, &roc);
	assert_int_equal(try_mount(b, msg, sizeof(msg), 1), -EINVAL);
	/* a log too small for the journal (init_constants_sb) */
	memcpy(b, img, img_len);
	struct mut l2 = {SB, 56, W32, 2, 0, 0, NULL}, mb = {SB, 48, W64, 70ull * LEB, 0, 0, NULL},
		   l2b = {SB, 48, W64, 40ull * LEB, 0, 0, NULL};
	apply(b, &l2);
	apply(b, &mb);
	assert_int_equal(try_mount(b, msg, sizeof(msg), 1), -EINVAL);
	if (!strstr(msg, "too small log"))
		fail_msg("log of 2 LEBs for 70 buds: %s", msg);
	apply(b, &l2b); /* 40 buds fit a 2-LEB log: on to the master, which no longer fits */
	assert_int_equal(try_mount(b, msg, sizeof(msg), 1), -EINVAL);
	assert_null(strstr(msg, "too small log"));
	/* authentication is read without the key, but its hash must be known
	 * (hash_algo 0 here; real images: tests/tools/ubifs_auth_images.sh) */
	memcpy(b, img, img_len);
	struct mut auth = {SB, 28, W32, 0x20 /* AUTHENTICATION */, 1, 0, NULL};
	apply(b, &auth);
	assert_int_equal(try_mount(b, msg, sizeof(msg), 1), -EINVAL);
	if (!strstr(msg, "hash algorithm"))
		fail_msg("authenticated, unknown hash: %s", msg);
	/* encryption needs format 5 */
	memcpy(b, img, img_len);
	struct mut enc = {SB, 28, W32, 0x10 /* ENCRYPTION */, 1, 0, NULL}, f4 = {SB, 80, W32, 4, 0, 0, NULL},
		   nodh = {SB, 28, W32, 0x8, 2, 0, NULL};
	apply(b, &enc);
	apply(b, &f4);
	apply(b, &nodh);
	assert_int_equal(try_mount(b, msg, sizeof(msg), 1), -EINVAL);
	assert_non_null(strstr(msg, "encryption"));
	free(b);
}

static void test_master_copies(void **state)
{
	(void)state;
	uint8_t *b = malloc(img_len);
	char msg[512];
	/* one copy damaged (kernel ubifs_recover_master_node): LEB 2's copy
	 * may have been about to be written, so LEB 1's is taken; LEB 1's copy
	 * damaged with LEB 2's at offset 0 (room left) cannot be explained by a
	 * power cut: refused */
	memcpy(b, img, img_len);
	b[(size_t)2 * LEB + 100] ^= 0xFF; /* CRC now wrong */
	if (try_mount(b, msg, sizeof(msg), 1))
		fail_msg("master copy 2 damaged: %s", msg);
	memcpy(b, img, img_len);
	b[(size_t)1 * LEB + 100] ^= 0xFF;
	assert_int_equal(try_mount(b, msg, sizeof(msg), 1), -EINVAL);
	/* both damaged: refused */
	memcpy(b, img, img_len);
	b[(size_t)1 * LEB + 100] ^= 0xFF;
	b[(size_t)2 * LEB + 100] ^= 0xFF;
	assert_int_equal(try_mount(b, msg, sizeof(msg), 1), -EINVAL);
	/* copies that differ, both valid: recovery (one must be older) or
	 * refusal, never a silent pick of a bad one */
	memcpy(b, img, img_len);
	struct mut m1 = {MST1, 44, W32, 1, 0, 0, NULL};
	apply(b, &m1);
	int err = try_mount(b, msg, sizeof(msg), 1);
	assert_true(err == 0 || err == -EINVAL);
	free(b);
}

int main(void)
{
	if (tt_run("command -v mkfs.ubifs >/dev/null") != 0) {
		fprintf(stderr, "mkfs.ubifs (mtd-utils) not installed\n");
		return 77;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fields),
		cmocka_unit_test(test_master_copies),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
