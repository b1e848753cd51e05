/* test_ubifs_replay — journal replay and power-cut recovery against images
 * the Linux kernel wrote (Linux VM): the kernel created a UBIFS, worked on
 * it and stopped as at a power cut (debugfs ro_error) or unmounted cleanly
 * without a commit; the .manifest is what the kernel itself showed when it
 * mounted the image again. We attach the image with our UBI (read-only),
 * mount it with our UBIFS and build the same manifest through the fs API
 * (tests/tools/ubifs_manifest.sh format), which must match line for line.
 * Images: tests/data/ubifs (ours: collisions, truncations, xattr removal,
 * orphans; make_replay_images.sh) and tests/data/kernel-images (the tools'
 * workload, clean and unclean, NAND/NOR/OOB). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>
#include <cmocka.h>
#include <ubikit/ubikit.h>

#include "flash/flash.h"
#include "flash/flash_sim.h"
#include "fs/fs.h"
#include "ubi/ubi.h"
#include "ubifs/ubifs.h"
#include "ubifs_test_manifest.h"
#include "util/util_crc.h"
#include "util/util_endian.h"
#include "ubifs_test_tree.h"

#define WORK UBIKIT_BUILD_DIR "/ubifs-replay"

struct case_def {
	const char *dir, *name;
	struct flash_geometry geo;
	int has_oob;
	int unclean, expect_orphans, expect_journal;
	int collect; /* report a difference to the caller instead of failing */
	/* changes the raw flash before the attach; returns how many nodes */
	int (*patch)(uint8_t *flash, size_t len, const struct case_def *c);
};

#define NAND2K {FLASH_NAND, 2048, 512, 64, 131072, 128}
static const struct case_def cases[] = {
	{"ubifs", "replay-nand2k", NAND2K, 0, 1, 1, 1, 0, NULL},
	{"ubifs", "replay-nor", {FLASH_NOR, 1, 1, 0, 65536, 256}, 0, 1, 1, 1, 0, NULL},
	{"kernel-images", "nand2k-clean", NAND2K, 0, 0, 0, 0, 0, NULL} /* clean unmount commits */,
	{"kernel-images", "nand2k-unclean", NAND2K, 0, 1, 0, 1, 0, NULL},
	{"kernel-images", "nor-zlib-unclean", {FLASH_NOR, 1, 1, 0, 65536, 256}, 0, 1, 0, 1, 0, NULL},
	{"kernel-images", "nand4k-oob-zstd-unclean", {FLASH_NAND, 4096, 1024, 128, 262144, 256}, 1, 1, 0, 1, 0, NULL},
};

/* spy on the volume: the read-only mount must never write */
struct spy {
	struct ubi_vol_io in;
	int writes;
};
static int s_read(void *c, uint32_t l, uint32_t o, void *b, size_t n)
{
	struct spy *s = c;
	return s->in.read(s->in.ctx, l, o, b, n);
}
static int s_write(void *c, uint32_t l, uint32_t o, const void *b, size_t n)
{
	(void)l, (void)o, (void)b, (void)n;
	return ((struct spy *)c)->writes++, -EROFS;
}
static int s_change(void *c, uint32_t l, const void *b, size_t n)
{
	(void)l, (void)b, (void)n;
	return ((struct spy *)c)->writes++, -EROFS;
}
static int s_lnum(void *c, uint32_t l)
{
	(void)l;
	return ((struct spy *)c)->writes++, -EROFS;
}

/* Returns 0 when our view equals the kernel's manifest, -1 otherwise (with
 * a diff printed); fails the test on anything else. */
static int run_case(const struct case_def *c, struct ubifs_fs_info *info_out)
{
	char gz[512], img[512], mf[512];
	const char *top = c->dir[0] == '/' ? "" : UBIKIT_TEST_DATA "/"; /* absolute: elsewhere */
	snprintf(gz, sizeof(gz), "%s%s/%s.img.gz", top, c->dir, c->name);
	snprintf(mf, sizeof(mf), "%s%s/%s.manifest", top, c->dir, c->name);
	snprintf(img, sizeof(img), "%s/%s.img", WORK, c->name);
	char *want = tm_slurp(mf);
	if (!want) /* part of the repository: missing is an error, not a skip */
		fail_msg("%s: %s not present", c->name, mf);
	/* unpack, padded with erased flash to the device size */
	uint64_t page = c->geo.page_size + (c->has_oob ? c->geo.oob_size : 0);
	uint64_t dev = (uint64_t)c->geo.peb_size / c->geo.page_size * page * c->geo.peb_count;
	uint8_t *buf = malloc(dev);
	memset(buf, 0xFF, dev);
	gzFile g = gzopen(gz, "rb");
	assert_non_null(g);
	assert_true(gzread(g, buf, (unsigned)dev) > 0);
	gzclose(g);
	if (c->patch)
		fprintf(stderr, "%s: %d nodes changed\n", c->name, c->patch(buf, dev, c));
	FILE *f = fopen(img, "wb");
	assert_int_equal(fwrite(buf, 1, dev, f), dev);
	fclose(f);
	free(buf);
	struct flash_dev *fl;
	char e[512];
	int err = flash_sim_open_ex(img, &c->geo, c->has_oob, true, &fl, e, sizeof(e));
	if (err)
		fail_msg("%s: flash open %d %s", c->name, err, e);
	struct ubi_attach_opts o;
	ubi_attach_opts_default(&o);
	o.read_only = true;
	struct ubi_device *ubi;
	err = ubi_attach_msg(fl, &o, &ubi, e, sizeof(e));
	if (err)
		fail_msg("%s: attach %d %s", c->name, err, e);
	struct spy spy;
	assert_int_equal(ubi_volume_io(ubi, 0, &spy.in), 0);
	spy.writes = 0;
	struct ubi_vol_io vol = spy.in;
	vol.ctx = &spy;
	vol.read = s_read;
	vol.write = s_write;
	vol.change = s_change;
	vol.unmap = s_lnum;
	vol.map = s_lnum;
	struct ubikit_fs *fs;
	struct ubikit_mount_opts mo = {.flags = UBIKIT_MOUNT_RDONLY, .tnc_cache_bytes = 64 * 1024};
	err = ubikit_mount_ex(&vol, &mo, &fs, e, sizeof(e));
	int refused = !strcmp(want, "REFUSED\n"); /* the kernel did not mount it */
	if (err || refused) {
		int same = err && refused ? 0 : -1;
		if (err)
			fprintf(stderr, "%s: mount refused (%d): %s; the kernel %s\n", c->name, err, e,
				refused ? "refused it too" : "mounted it");
		else
			fprintf(stderr, "%s: mounted, but the kernel refused it\n", c->name), ubikit_unmount(fs);
		if (same && !c->collect)
			fail_msg("%s: the kernel %s, we %s", c->name, refused ? "refused" : "mounted",
				 err ? "refused" : "mounted");
		free(want);
		ubi_detach(ubi);
		flash_close(fl);
		remove(img);
		return same;
	}
	char *got = tm_manifest(fs);
	struct ubifs_fs_info info;
	assert_int_equal(ubifs_get_info(fs_ubifs(fs), &info), 0);
	if (info_out)
		*info_out = info;
	fprintf(stderr, "%s: need_recovery %d, %u log LEBs%s, %u buds (%u referred to again), %llu journal nodes, %u torn tails cut, %u orphans killed, highest inum %llu\n",
		c->name, info.need_recovery, info.log_lebs_used, info.log_wraps ? " (wrapped)" : "", info.buds,
		info.bud_rerefs, (unsigned long long)info.replayed_nodes,
		info.recovered_lebs, info.orphans_killed, (unsigned long long)info.highest_inum);
	int same = tm_compare(got, mf, WORK, c->name);
	int lost = tm_lost_inodes(fs, c->name);
	if (lost)
		same = -1;
	/* the consistency checker must find nothing in what the kernel made */
	if (ubifs_check(fs_ubifs(fs))) {
		fprintf(stderr, "%s: ubifs_check: %s\n", c->name, ubifs_errmsg(fs_ubifs(fs)));
		same = -1;
	}
	if (same && !c->collect)
		fail_msg("%s: our view differs from the kernel's", c->name);
	assert_int_equal(info.need_recovery, c->unclean);
	if (c->expect_journal)
		assert_true(info.replayed_nodes > 0);
	if (c->expect_orphans)
		assert_true(info.orphans_killed >= 1);
	free(got);
	free(want);
	ubikit_unmount(fs);
	assert_int_equal(spy.writes, 0);
	ubi_detach(ubi);
	flash_close(fl);
	remove(img);
	return same;
}

static void t_replay_ours(void **s)
{
	(void)s;
	run_case(&cases[0], NULL);
	run_case(&cases[1], NULL);
}

static void t_kernel_images(void **s)
{
	(void)s;
	for (size_t i = 2; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_case(&cases[i], NULL);
}

/* Power cuts the kernel itself made (tests/ubifs/make_powercut_images.sh:
 * UBI's and UBIFS's power-cut emulation in the middle of a workload that
 * commits often, so the log wraps, a commit cut short leaves a bud
 * referenced twice, orphans and deleted files with xattrs wait in the
 * journal): our view of each dump must equal the kernel's next mount. */
static void t_powercut(void **s)
{
	(void)s;
	/* UBIKIT_POWERCUT_DIR: check a freshly generated set instead
	 * (make_powercut_images.sh's OUT directory) */
	const char *other = getenv("UBIKIT_POWERCUT_DIR");
	char dir[512], list[600];
	snprintf(dir, sizeof(dir), "%s", other && *other ? other : "ubifs/powercut");
	snprintf(list, sizeof(list), "%s%s/LIST", dir[0] == '/' ? "" : UBIKIT_TEST_DATA "/", dir);
	FILE *f = fopen(list, "r");
	assert_non_null(f);
	char name[128];
	int n = 0, bad = 0, wrapped = 0, twice = 0, torn = 0, orphans = 0, refused = 0;
	char failed[2048] = "";
	while (fscanf(f, "%127s", name) == 1) {
		struct case_def c = {dir, name, NAND2K, 0, 1, 0, 0, 1, NULL};
		struct ubifs_fs_info info;
		memset(&info, 0, sizeof(info));
		info.need_recovery = -1;
		if (run_case(&c, &info)) {
			bad++;
			snprintf(failed + strlen(failed), sizeof(failed) - strlen(failed), " %s", name);
		}
		n++;
		if (info.need_recovery < 0)
			refused++;
		wrapped += info.log_wraps > 0;
		twice += info.bud_rerefs > 0;
		torn += info.recovered_lebs > 0;
		orphans += info.orphans_killed > 0;
	}
	fclose(f);
	fprintf(stderr, "power cuts: %d images, %d differ from the kernel%s; %d refused by both; replay: %d wrapped the log, %d met a bud referred to twice, %d cut a torn tail, %d killed orphans\n",
		n, bad, failed, refused, wrapped, twice, torn, orphans);
	assert_int_equal(bad, 0);
	if (other && *other)
		return;
	/* the stored set must keep covering what it was made for */
	assert_true(n >= 8);
	assert_true(wrapped >= 1);
	assert_true(twice >= 1);
	assert_true(torn >= 1);
	assert_true(orphans >= 1);
	assert_int_equal(bad, 0);
}

static int setup(void **s)
{
	(void)s;
	return tt_run("mkdir -p '%s'", WORK) ? -1 : 0;
}

/* Kernels before 4.18-ish journalled only the host inode when an inode with
 * xattrs was deleted; replay then removes its xattr entries and xattr inodes
 * together with it (the kernel's ubifs_tnc_remove_ino). 6.1 also journals a
 * deletion for each xattr inode: pad those away (as an older kernel would
 * have written) and replay must still leave no xattr inode behind, with the
 * same tree the kernel showed for the dump. Raw NAND 2K: UBIFS data from
 * offset 2048 of each PEB. */
static int pad_xattr_deletions(uint8_t *flash, size_t len, const struct case_def *c)
{
	int n = 0;
	for (size_t peb = 0; peb + c->geo.peb_size <= len; peb += c->geo.peb_size) {
		size_t prev = 0;
		for (size_t o = peb + 2048; o + 24 <= peb + c->geo.peb_size; o += 8) {
			uint8_t *nd = flash + o;
			uint32_t nl = get_le32(nd + 16);
			if (get_le32(nd) != 0x06101831u || nl < 24 || o + nl > peb + c->geo.peb_size ||
			    get_le32(nd + 4) != util_crc32(UTIL_CRC32_INIT, nd + 8, nl - 8))
				continue;
			if (nd[20] == 0 /* INO */ && nl >= 160 && get_le32(nd + 92) == 0 && (get_le32(nd + 108) & 0x20)) {
				uint32_t span = (nl + 7) & ~7u;
				if (nd[21] == 2 && prev) { /* it ended a group: the node before ends it now */
					uint8_t *pn = flash + prev;
					pn[21] = 2;
					put_le32(pn + 4, util_crc32(UTIL_CRC32_INIT, pn + 8, get_le32(pn + 16) - 8));
				}
				memset(nd + 8, 0, span - 8);
				put_le32(nd + 16, 28);
				nd[20] = 5; /* PAD */
				put_le32(nd + 24, span - 28);
				put_le32(nd + 4, util_crc32(UTIL_CRC32_INIT, nd + 8, 20));
				n++;
			}
			prev = o;
			o += ((nl + 7) & ~7u) - 8;
		}
	}
	return n;
}

static void t_old_xattr_deletion(void **s)
{
	(void)s;
	char list[512];
	snprintf(list, sizeof(list), "%s/ubifs/powercut/LIST", UBIKIT_TEST_DATA);
	FILE *f = fopen(list, "r");
	assert_non_null(f);
	char name[128];
	int n = 0;
	while (fscanf(f, "%127s", name) == 1 && n < 6) {
		struct case_def c = {"ubifs/powercut", name, NAND2K, 0, 1, 0, 0, 0, pad_xattr_deletions};
		run_case(&c, NULL);
		n++;
	}
	fclose(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(t_replay_ours), cmocka_unit_test(t_kernel_images),
					   cmocka_unit_test(t_powercut), cmocka_unit_test(t_old_xattr_deletion)};
	return cmocka_run_group_tests(tests, setup, NULL);
}
