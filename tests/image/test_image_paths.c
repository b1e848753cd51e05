/* test_image_paths — the image layer's option and error paths on images
 * made by mtd-utils (mkfs.ubifs, ubinize), each result judged by what those
 * tools were told to make or by the bytes of the files they wrote:
 *   - a UBI image with a static raw volume (ID 0) and a UBIFS volume (ID 3):
 *     the volume list as ubinize's ini describes it, the choice of the
 *     first volume with UBIFS, by --vol-id (a missing ID named), select
 *     between them, a volume list shorter than the volumes;
 *   - a UBI image with no UBIFS volume: refused, or opened with
 *     NO_VOLUME (then mount and fsck say "no UBIFS volume"), flush a no-op;
 *   - a bare UBIFS image (mkfs.ubifs -o): one volume "ubifs" of its LEB
 *     size; select and mount again; its read-only view reads the file's
 *     bytes, 0xFF past them up to max_leb_cnt (-c), refuses writes;
 *   - detection errors, each naming the place: an implausible superblock
 *     LEB size, an EC header with impossible offsets, --offset past the end,
 *     --kind mtd on a regular file, a character device that is not MTD,
 *     NULL arguments; a file with a tail after its LEBs still opens;
 *   - an autoresize volume (ubinize, only the image's LEBs): seen grown,
 *     erased past its LEBs, read-only;
 *   - two ubinize outputs in one file: each device by index and offset
 *     (image_seq and offsets as ubinize wrote them), the second read-only;
 *   - the kernel's NAND dump with OOB behind a one-PEB header, opened at
 *     its offset: the kernel's files (md5 of its manifest); an offset
 *     inside a PEB, and a device off the dump's PEB grid, refused;
 *   - EC headers with no plausible PEB size, one PEB only;
 *   - fsck (no options) of a clean mkfs.ubifs image of 1500+ inodes with
 *     hard links, a socket and a fifo: clean, each of the host tree's
 *     inodes (its root too) counted once. */
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
#include <zlib.h>
#include <ubikit/fsck.h>
#include <ubikit/image.h>
#include <ubikit/ubikit.h>

#include "image/image.h"
#include "image/image_test_unpack.h"
#include "ubifs/test_md5.h"

#define WORK UBIKIT_BUILD_DIR "/image-paths"
#define TREE WORK "/tree"
#define BARE WORK "/bare.ubifs"
#define MULTI WORK "/multi.ubi"
#define RAWONLY WORK "/raw.ubi"
#define AUTO WORK "/auto.ubi"
#define OOBDATA UBIKIT_TEST_DATA "/kernel-images/nand4k-oob-zstd-unclean"
#define STRIDE (64u * (4096u + 128u)) /* the VM's nandsim: 4096+128, 256 KiB PEBs */
#define LEB 126976u /* -e of mkfs.ubifs: 128 KiB PEB less two 2 KiB pages */
#define MAXLEB 64u  /* -c */

static char msg[1024];

static void sh(const char *cmd)
{
	if (system(cmd) != 0)
		fail_msg("command failed: %s", cmd);
}

static int setup(void **state)
{
	(void)state;
	/* A tree, its UBIFS made by mkfs.ubifs, and two ubinize images: the
	 * raw volume holds 3 LEBs of a pattern (static, vol_size 3 LEBs). */
	int r = system("set -e; rm -rf " WORK "; mkdir -p " TREE "/d; cd " WORK
		       "; printf 'hello paths\\n' >" TREE "/d/hello; seq 1 20000 >" TREE "/seq;"
		       " mkfs.ubifs -r " TREE " -m 2048 -e 126976 -c 64 -o " BARE " >/dev/null 2>&1;"
		       " head -c 300000 /dev/zero | tr '\\0' 'R' >raw.bin;"
		       " printf '[raw]\\nmode=ubi\\nimage=raw.bin\\nvol_id=0\\nvol_type=static\\nvol_name=raw\\n'"
		       " >multi.ini; cp multi.ini raw.ini;"
		       " printf '[fs]\\nmode=ubi\\nimage=bare.ubifs\\nvol_id=3\\nvol_type=dynamic\\nvol_name=fs\\n"
		       "vol_size=4MiB\\n' >>multi.ini;"
		       " ubinize -o " MULTI " -p 128KiB -m 2048 -O 2048 -Q 1111 multi.ini >/dev/null 2>&1;"
		       " ubinize -o " RAWONLY " -p 128KiB -m 2048 -O 2048 -Q 2222 raw.ini >/dev/null 2>&1;"
		       " printf '[fs]\\nmode=ubi\\nimage=bare.ubifs\\nvol_id=0\\nvol_type=dynamic\\nvol_name=grow\\n"
		       "vol_flags=autoresize\\n' >auto.ini;"
		       " ubinize -o " AUTO " -p 128KiB -m 2048 -O 2048 auto.ini >/dev/null 2>&1");
	if (r != 0) {
		printf("SKIP: mkfs.ubifs / ubinize (mtd-utils) missing or failing\n");
		exit(77);
	}
	return 0;
}

static void read_file(struct ubikit_fs *fs, const char *path, char *buf, size_t len, ssize_t *got)
{
	struct ubikit_file *f;
	assert_int_equal(ubikit_open(fs, path, O_RDONLY, 0, &f), 0);
	*got = ubikit_read(f, buf, len);
	ubikit_close(f);
}

static void check_hello(struct ubikit_fs *fs)
{
	char b[64] = "";
	ssize_t n;
	assert_non_null(fs);
	read_file(fs, "/d/hello", b, sizeof(b) - 1, &n);
	assert_int_equal(n, 12);
	assert_string_equal(b, "hello paths\n");
}

static void test_multi_volume(void **state)
{
	(void)state;
	struct ubikit_image_opts o;
	ubikit_image_opts_init(&o);
	struct ubikit_image *img;
	if (ubikit_image_open(MULTI, &o, &img, msg, sizeof(msg)))
		fail_msg("open: %s", msg);
	/* the ini: ID 0 "raw" static of 300000 bytes (3 LEBs), ID 3 "fs"
	 * dynamic of 4 MiB (34 LEBs of 126976); the first with UBIFS is 3 */
	struct ubikit_image_volume v[4];
	assert_int_equal(ubikit_image_volumes(img, v, 4), 2);
	assert_int_equal(v[0].id, 0);
	assert_string_equal(v[0].name, "raw");
	assert_false(v[0].dynamic);
	assert_int_equal(v[0].reserved_lebs, (300000 + LEB - 1) / LEB);
	assert_false(v[0].has_ubifs);
	assert_false(v[0].chosen);
	assert_int_equal(v[1].id, 3);
	assert_string_equal(v[1].name, "fs");
	assert_true(v[1].dynamic);
	assert_int_equal(v[1].reserved_lebs, (4u << 20) / LEB + ((4u << 20) % LEB != 0));
	assert_int_equal(v[1].leb_size, LEB);
	assert_true(v[1].has_ubifs && v[1].chosen);
	check_hello(ubikit_image_fs(img));
	/* a list shorter than the volumes: the count, one entry filled */
	memset(v, 0x5a, sizeof(v));
	assert_int_equal(ubikit_image_volumes(img, v, 1), 2);
	assert_int_equal(v[0].id, 0);
	assert_int_equal(v[1].id, 0x5a5a5a5a);
	/* mounting again while mounted changes nothing */
	struct ubikit_fs *fs = ubikit_image_fs(img);
	assert_int_equal(ubikit_image_mount(img, 0), 0);
	assert_ptr_equal(ubikit_image_fs(img), fs);
	/* select the raw volume: no UBIFS there, the mount fails naming it */
	assert_int_equal(ubikit_image_select(img, NULL, 0), 0);
	assert_null(ubikit_image_fs(img));
	assert_true(ubikit_image_mount(img, 0) < 0);
	assert_non_null(strstr(ubikit_image_errmsg(img), "UBI volume 0"));
	assert_int_equal(ubikit_image_select(img, NULL, 9), -ENOENT);
	assert_non_null(strstr(ubikit_image_errmsg(img), "no UBI volume with ID 9"));
	assert_int_equal(ubikit_image_select(img, "fs", 0), 0);
	assert_int_equal(ubikit_image_mount(img, 0), 0);
	check_hello(ubikit_image_fs(img));
	/* flush of a read-only image: nothing to do */
	assert_int_equal(ubikit_image_flush(img), 0);
	assert_int_equal(ubikit_image_close_msg(img, msg, sizeof(msg)), 0);

	/* by ID at open, and an ID that is not there */
	o.vol_id = 3;
	assert_int_equal(ubikit_image_open(MULTI, &o, &img, msg, sizeof(msg)), 0);
	check_hello(ubikit_image_fs(img));
	ubikit_image_close(img);
	o.vol_id = 7;
	assert_int_equal(ubikit_image_open(MULTI, &o, &img, msg, sizeof(msg)), -ENOENT);
	assert_null(img);
	assert_non_null(strstr(msg, "no UBI volume with ID 7"));
	assert_non_null(strstr(msg, MULTI));
	/* the VID header offset given (as ubinize -O had it) and the kind forced */
	ubikit_image_opts_init(&o);
	o.vid_hdr_offset = 2048;
	o.kind = UBIKIT_IMAGE_UBI;
	assert_int_equal(ubikit_image_open(MULTI, &o, &img, msg, sizeof(msg)), 0);
	assert_int_equal(ubikit_image_geometry(img)->vid_hdr_offset, 2048);
	assert_int_equal(ubikit_image_geometry(img)->data_offset, 4096);
	check_hello(ubikit_image_fs(img));
	ubikit_image_close(img);
}

static void test_no_ubifs_volume(void **state)
{
	(void)state;
	struct ubikit_image_opts o;
	ubikit_image_opts_init(&o);
	struct ubikit_image *img;
	assert_int_equal(ubikit_image_open(RAWONLY, &o, &img, msg, sizeof(msg)), -ENOENT);
	assert_null(img);
	assert_non_null(strstr(msg, "none of the 1 UBI volume(s) holds a UBIFS superblock"));
	/* NO_VOLUME alone still mounts: nothing to mount */
	o.flags = UBIKIT_IMAGE_NO_VOLUME;
	assert_int_equal(ubikit_image_open(RAWONLY, &o, &img, msg, sizeof(msg)), -ENOENT);
	assert_null(img);
	assert_non_null(strstr(msg, "no UBIFS volume"));
	o.flags = UBIKIT_IMAGE_NO_VOLUME | UBIKIT_IMAGE_NO_MOUNT;
	if (ubikit_image_open(RAWONLY, &o, &img, msg, sizeof(msg)))
		fail_msg("open NO_VOLUME: %s", msg);
	assert_null(ubikit_image_fs(img));
	struct ubikit_image_volume v;
	assert_int_equal(ubikit_image_volumes(img, &v, 1), 1);
	assert_false(v.chosen);
	assert_int_equal(ubikit_image_mount(img, 0), -ENOENT);
	assert_string_equal(ubikit_image_errmsg(img), "no UBIFS volume");
	assert_int_equal(ubikit_image_flush(img), 0);
	assert_int_equal(ubikit_image_close(img), 0);
	/* fsck with the same options: an operational error naming the reason */
	struct ubikit_fsck_report rep;
	ubikit_fsck_report_init(&rep);
	assert_int_equal(ubikit_fsck_image(RAWONLY, &o, UBIKIT_FSCK_CHECK, &rep, msg, sizeof(msg)),
			 UBIKIT_FSCK_OPERROR);
	assert_non_null(strstr(msg, "no UBIFS volume"));
	assert_true(rep.count >= 1);
	ubikit_fsck_report_free(&rep);
	ubikit_fsck_report_init(&rep);
	assert_int_equal(ubikit_fsck_image(NULL, &o, UBIKIT_FSCK_CHECK, &rep, msg, sizeof(msg)), UBIKIT_FSCK_USAGE);
	ubikit_fsck_report_free(&rep);
}

static void test_bare(void **state)
{
	(void)state;
	struct stat st;
	assert_int_equal(stat(BARE, &st), 0);
	uint32_t file_lebs = (uint32_t)(st.st_size / LEB);
	assert_true(file_lebs > 4 && file_lebs < MAXLEB);
	struct ubikit_image_opts o;
	ubikit_image_opts_init(&o);
	struct ubikit_image *img;
	if (ubikit_image_open(BARE, &o, &img, msg, sizeof(msg)))
		fail_msg("open: %s", msg);
	assert_int_equal(ubikit_image_geometry(img)->kind, UBIKIT_IMAGE_UBIFS);
	assert_int_equal(ubikit_image_geometry(img)->leb_size, LEB);
	struct ubikit_image_volume v;
	assert_int_equal(ubikit_image_volumes(img, &v, 1), 1);
	assert_string_equal(v.name, "ubifs");
	assert_int_equal(v.id, 0);
	assert_int_equal(v.leb_size, LEB);
	assert_int_equal(v.reserved_lebs, MAXLEB); /* seen as flashed: -c LEBs */
	assert_true(v.has_ubifs && v.chosen && v.dynamic);
	assert_int_equal(ubikit_image_volumes(img, NULL, 0), 1);
	/* one volume only */
	assert_int_equal(ubikit_image_select(img, NULL, 0), 0);
	assert_int_equal(ubikit_image_select(img, "other", 0), -ENOENT);
	assert_non_null(strstr(ubikit_image_errmsg(img), "a bare UBIFS image has one volume only"));
	assert_int_equal(ubikit_image_select(img, NULL, 1), -ENOENT);
	check_hello(ubikit_image_fs(img));
	assert_int_equal(ubikit_image_unmount(img), 0);
	assert_null(ubikit_image_fs(img));
	assert_int_equal(ubikit_image_mount(img, UBIKIT_MOUNT_RDONLY), 0);
	check_hello(ubikit_image_fs(img));

	/* The read-only view: the file's bytes, 0xFF past them, writes refused. */
	struct ubi_vol_io *vol = &img->vol;
	assert_int_equal(vol->leb_count, MAXLEB);
	assert_int_equal(vol->leb_size, LEB);
	assert_true(vol->read_only);
	static uint8_t a[LEB], b[LEB];
	FILE *f = fopen(BARE, "rb");
	assert_non_null(f);
	assert_int_equal(fseek(f, (long)LEB * 1 + 100, SEEK_SET), 0);
	assert_int_equal(fread(a, 1, 4000, f), 4000);
	fclose(f);
	assert_int_equal(vol->read(vol->ctx, 1, 100, b, 4000), 0);
	assert_memory_equal(a, b, 4000);
	memset(a, 0xFF, LEB);
	memset(b, 0, LEB);
	assert_int_equal(vol->read(vol->ctx, MAXLEB - 1, 0, b, LEB), 0);
	assert_memory_equal(a, b, LEB);
	assert_int_equal(vol->read(vol->ctx, file_lebs, 10, b, 100), 0);
	assert_memory_equal(a, b, 100);
	assert_int_equal(vol->read(vol->ctx, file_lebs, LEB - 10, b, 100), -EINVAL);
	assert_int_equal(vol->read(vol->ctx, file_lebs, LEB + 1, b, 0), -EINVAL);
	assert_int_equal(vol->is_mapped(vol->ctx, 0), 1);
	assert_int_equal(vol->is_mapped(vol->ctx, file_lebs + 1), 0);
	assert_int_equal(vol->write(vol->ctx, 1, 0, a, 2048), -EROFS);
	assert_int_equal(vol->change(vol->ctx, 1, a, 2048), -EROFS);
	assert_int_equal(vol->unmap(vol->ctx, 1), -EROFS);
	assert_int_equal(vol->map(vol->ctx, file_lebs + 1), -EROFS);
	assert_int_equal(vol->sync(vol->ctx), 0);
	assert_int_equal(ubikit_image_close(img), 0);

	/* A tail after the LEBs (a partial LEB): said, ignored, still opens */
	sh("cp " BARE " " WORK "/tail.ubifs && printf 'tail' >>" WORK "/tail.ubifs");
	struct ubikit_image_geo g;
	assert_int_equal(ubikit_image_detect(WORK "/tail.ubifs", &o, &g, msg, sizeof(msg)), 0);
	assert_int_equal(g.kind, UBIKIT_IMAGE_UBIFS);
	assert_non_null(strstr(g.how, "not a multiple of the LEB size"));
	assert_int_equal(ubikit_image_open(WORK "/tail.ubifs", &o, &img, msg, sizeof(msg)), 0);
	check_hello(ubikit_image_fs(img));
	ubikit_image_close(img);
}

/* An autoresize volume of ubinize's (only the LEBs of the image): read-only,
 * seen grown as the kernel's first attach grows it; past its own LEBs the
 * view reads erased bytes and refuses writes. */
static void test_autoresize_view(void **state)
{
	(void)state;
	struct ubikit_image_opts o;
	ubikit_image_opts_init(&o);
	struct ubikit_image *img;
	if (ubikit_image_open(AUTO, &o, &img, msg, sizeof(msg)))
		fail_msg("open: %s", msg);
	check_hello(ubikit_image_fs(img));
	struct ubi_vol_io *vol = &img->vol, *in = &img->inner;
	assert_true(img->autoresized > 0);
	assert_int_equal(vol->leb_count, img->autoresized);
	assert_true(vol->leb_count > in->leb_count);
	static uint8_t a[LEB], b[LEB];
	/* inside: the volume's own bytes */
	assert_int_equal(in->read(in->ctx, 2, 512, a, 8192), 0);
	assert_int_equal(vol->read(vol->ctx, 2, 512, b, 8192), 0);
	assert_memory_equal(a, b, 8192);
	/* past them: erased, bounds checked */
	memset(a, 0xFF, LEB);
	memset(b, 0, LEB);
	assert_int_equal(vol->read(vol->ctx, in->leb_count, 0, b, LEB), 0);
	assert_memory_equal(a, b, LEB);
	assert_int_equal(vol->read(vol->ctx, vol->leb_count - 1, LEB - 100, b, 100), 0);
	assert_memory_equal(a, b, 100);
	assert_int_equal(vol->read(vol->ctx, in->leb_count, LEB - 100, b, 101), -EINVAL);
	assert_int_equal(vol->is_mapped(vol->ctx, in->leb_count), 0);
	assert_int_equal(vol->write(vol->ctx, 0, 0, a, 2048), -EROFS);
	assert_int_equal(ubikit_image_close(img), 0);
}

/* Every regular file of the kernel's manifest reads with the kernel's md5. */
static int check_kernel_manifest(struct ubikit_fs *fs, const char *manifest)
{
	FILE *mf = fopen(manifest, "r");
	assert_non_null(mf);
	char line[4096];
	int files = 0;
	static char buf[65536];
	while (fgets(line, sizeof(line), mf)) {
		if (!strncmp(line, "== xattrs", 9))
			break;
		char path[2048], type[8], md5[64];
		if (sscanf(line, "%2047s %7s %*s %*s %*s %*s %*s %*s %63s", path, type, md5) != 3 || strcmp(type, "f"))
			continue;
		struct ubikit_file *f;
		assert_int_equal(ubikit_open(fs, path + 1, O_RDONLY, 0, &f), 0);
		struct util_md5 m;
		util_md5_init(&m);
		ssize_t n;
		while ((n = ubikit_read(f, buf, sizeof(buf))) > 0)
			util_md5_update(&m, buf, (size_t)n);
		assert_true(n == 0);
		ubikit_close(f);
		char got[33];
		util_md5_hex(&m, got);
		if (strcmp(got, md5))
			fail_msg("%s: md5 %s, the kernel read %s", path, got, md5);
		files++;
	}
	fclose(mf);
	return files;
}

/* A NAND dump with OOB (the kernel's) behind a one-PEB vendor header: read
 * through a window at the given offset, as the kernel saw it; an offset
 * that is not a whole PEB of the dump is refused. */
static void test_oob_window(void **state)
{
	(void)state;
	image_test_unpack(OOBDATA ".img.gz", WORK, WORK "/oob.img");
	FILE *f = fopen(WORK "/hdr.bin", "wb");
	assert_non_null(f);
	for (uint32_t i = 0; i < STRIDE; i++)
		fputc((int)(i * 7 % 251), f);
	fclose(f);
	sh("cat " WORK "/hdr.bin " WORK "/oob.img >" WORK "/vendor.img");
	struct ubikit_image_opts o;
	ubikit_image_opts_init(&o);
	o.offset = STRIDE;
	struct ubikit_image *img;
	if (ubikit_image_open(WORK "/vendor.img", &o, &img, msg, sizeof(msg)))
		fail_msg("open at offset: %s", msg);
	const struct ubikit_image_geo *g = ubikit_image_geometry(img);
	assert_int_equal(g->kind, UBIKIT_IMAGE_NAND_OOB);
	assert_int_equal(g->peb_stride, STRIDE);
	assert_int_equal(g->page_size, 4096);
	assert_int_equal(g->oob_size, 128);
	assert_int_equal(g->offset, STRIDE);
	assert_true(check_kernel_manifest(ubikit_image_fs(img), OOBDATA ".manifest") > 3);
	ubikit_image_close(img);
	/* an offset inside a PEB of the device: no PEB size fits the headers */
	o.offset = STRIDE + 4096;
	assert_int_equal(ubikit_image_open(WORK "/vendor.img", &o, &img, msg, sizeof(msg)), -EINVAL);
	assert_non_null(strstr(msg, "no plausible PEB size"));
	/* a header that is not whole PEBs of the dump: the device's PEBs do not
	 * line up with the file's (page + OOB) grid, which the flash below needs */
	sh("head -c 4096 " WORK "/hdr.bin >" WORK "/vendor2.img; cat " WORK "/oob.img >>" WORK "/vendor2.img");
	o.offset = 4096;
	assert_int_equal(ubikit_image_open(WORK "/vendor2.img", &o, &img, msg, sizeof(msg)), -EINVAL);
	if (!strstr(msg, "in a dump with OOB: the offset must be a multiple of the PEB stride 270336"))
		fail_msg("%s", msg);
}

/* Patch a copy: bytes at off (file offset). */
static void patch(const char *from, const char *to, long off, const void *bytes, size_t len)
{
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "cp %s %s", from, to);
	sh(cmd);
	FILE *f = fopen(to, "r+b");
	assert_non_null(f);
	assert_int_equal(fseek(f, off, SEEK_SET), 0);
	assert_int_equal(fwrite(bytes, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* fsck of a clean mkfs.ubifs image of a tree with more inodes than the
 * walk's first table holds, hard links, a socket and a fifo: clean, and
 * every inode of the host tree, its root too, counted once (the host's
 * own count). */
static void test_fsck_tree(void **state)
{
	(void)state;
	int r = system("set -e; cd " WORK "; rm -rf big; mkdir -p big/a big/b big/c; for d in a b c; do"
		       " (cd big/$d && seq -f 'f%04g' 1 500 | xargs touch); done; for i in $(seq 1 20); do"
		       " ln big/a/f0001 big/c/h$i; done; echo data >big/b/f0002; mkfifo big/fifo;"
		       " python3 -c 'import socket; socket.socket(socket.AF_UNIX).bind(\"big/sock\")';"
		       " mkfs.ubifs -r big -m 2048 -e 126976 -c 128 -o big.ubifs >/dev/null 2>&1;"
		       " find big -printf '%i\\n' | sort -u | wc -l >big.count");
	if (r != 0) {
		printf("SKIP: could not build the tree (python3 for the socket)\n");
		skip();
	}
	FILE *f = fopen(WORK "/big.count", "r");
	assert_non_null(f);
	unsigned long want = 0;
	assert_int_equal(fscanf(f, "%lu", &want), 1);
	fclose(f);
	assert_true(want > 1500);
	struct ubikit_fsck_report rep;
	ubikit_fsck_report_init(&rep);
	int rc = ubikit_fsck_image(WORK "/big.ubifs", NULL, UBIKIT_FSCK_CHECK, &rep, msg, sizeof(msg));
	for (size_t i = 0; i < rep.count; i++)
		printf("problem: %s\n", rep.problems[i].msg);
	assert_int_equal(rc, UBIKIT_FSCK_CLEAN);
	assert_int_equal(rep.count, 0);
	assert_int_equal(rep.inodes, want);
	assert_false(rep.repaired);
	ubikit_fsck_report_free(&rep);
}

static long file_size(const char *p)
{
	struct stat st;
	assert_int_equal(stat(p, &st), 0);
	return (long)st.st_size;
}

/* Two ubinize outputs one after the other (image_seq 1111 and 2222): two
 * UBI devices, chosen by index or offset; the second is read-only. */
static void test_two_devices(void **state)
{
	(void)state;
	sh("cat " MULTI " " RAWONLY " >" WORK "/two.ubi");
	long m = file_size(MULTI), r = file_size(RAWONLY);
	struct ubikit_image_opts o;
	ubikit_image_opts_init(&o);
	struct ubikit_image_geo g;
	assert_int_equal(ubikit_image_detect(WORK "/two.ubi", &o, &g, msg, sizeof(msg)), 0);
	assert_int_equal(g.ubi_dev_count, 2);
	assert_int_equal(g.ubi_devs[0].offset, 0);
	assert_int_equal(g.ubi_devs[0].image_seq, 1111);
	assert_int_equal(g.ubi_devs[1].offset, m);
	assert_int_equal(g.ubi_devs[1].size, r);
	assert_int_equal(g.ubi_devs[1].image_seq, 2222);
	assert_int_equal(g.ubi_devs[1].peb_stride, 128 * 1024);
	/* the first: by default and by offset 0 (it ends where the second starts) */
	struct ubikit_image *img;
	if (ubikit_image_open(WORK "/two.ubi", &o, &img, msg, sizeof(msg)))
		fail_msg("open: %s", msg);
	check_hello(ubikit_image_fs(img));
	ubikit_image_close(img);
	o.offset = 0;
	assert_int_equal(ubikit_image_detect(WORK "/two.ubi", &o, &g, msg, sizeof(msg)), 0);
	assert_int_equal(g.ubi_dev_index, 0);
	assert_int_equal(g.dev_size, m);
	assert_int_equal(ubikit_image_open(WORK "/two.ubi", &o, &img, msg, sizeof(msg)), 0);
	check_hello(ubikit_image_fs(img));
	ubikit_image_close(img);
	/* the second, by index and by offset: its one raw volume */
	o.offset = -1;
	o.ubi_index = 1;
	o.flags = UBIKIT_IMAGE_NO_VOLUME | UBIKIT_IMAGE_NO_MOUNT;
	for (int k = 0; k < 2; k++) {
		if (ubikit_image_open(WORK "/two.ubi", &o, &img, msg, sizeof(msg)))
			fail_msg("open device 1: %s", msg);
		assert_int_equal(ubikit_image_geometry(img)->offset, m);
		struct ubikit_image_volume v[2];
		assert_int_equal(ubikit_image_volumes(img, v, 2), 1);
		assert_string_equal(v[0].name, "raw");
		ubikit_image_close(img);
		o.ubi_index = -1;
		o.offset = m;
	}
	/* read-write: only the whole file */
	o.flags |= UBIKIT_IMAGE_RDWR;
	assert_int_equal(ubikit_image_open(WORK "/two.ubi", &o, &img, msg, sizeof(msg)), -EROFS);
	assert_non_null(strstr(msg, "is not the whole file: it opens read-only only"));
	/* no third device */
	ubikit_image_opts_init(&o);
	o.ubi_index = 2;
	assert_int_equal(ubikit_image_detect(WORK "/two.ubi", &o, &g, msg, sizeof(msg)), -ENOENT);
	assert_non_null(strstr(msg, "--ubi-index 2: the file holds 2 UBI device(s) (0-1)"));
}

/* EC headers placed so that no PEB size follows, or one PEB only. */
static void test_detect_layouts(void **state)
{
	(void)state;
	static uint8_t ec[64], buf[3 * 196608];
	FILE *f = fopen(MULTI, "rb");
	assert_non_null(f);
	assert_int_equal(fread(ec, 1, 64, f), 64);
	fclose(f);
	struct ubikit_image_opts o;
	ubikit_image_opts_init(&o);
	struct ubikit_image_geo g;
	/* one PEB of ubinize's output: the PEB is the rest of the file */
	sh("head -c 131072 " MULTI " >" WORK "/one.ubi");
	assert_int_equal(ubikit_image_detect(WORK "/one.ubi", &o, &g, msg, sizeof(msg)), 0);
	assert_int_equal(g.kind, UBIKIT_IMAGE_UBI);
	assert_int_equal(g.peb_size, 131072);
	assert_int_equal(g.peb_count, 1);
	assert_non_null(strstr(g.how, "one EC header only"));
	/* headers 3 x 64 KiB apart: no power of two, no page+OOB layout */
	memset(buf, 0xFF, sizeof(buf));
	for (int i = 0; i < 3; i++)
		memcpy(buf + i * 196608, ec, 64);
	f = fopen(WORK "/odd.ubi", "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, sizeof(buf), f), sizeof(buf));
	fclose(f);
	assert_int_equal(ubikit_image_detect(WORK "/odd.ubi", &o, &g, msg, sizeof(msg)), -EINVAL);
	assert_non_null(strstr(msg, "EC headers are 196608 bytes apart, which is not a power of two"));
	/* headers one data offset (4096) apart: PEBs with no room for data */
	memset(buf, 0xFF, sizeof(buf));
	for (int i = 0; i < 8; i++)
		memcpy(buf + i * 4096, ec, 64);
	f = fopen(WORK "/tight.ubi", "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, 8 * 4096, f), 8 * 4096);
	fclose(f);
	assert_int_equal(ubikit_image_detect(WORK "/tight.ubi", &o, &g, msg, sizeof(msg)), -EINVAL);
	assert_non_null(strstr(msg, "EC headers are 4096 bytes apart: no plausible PEB size"));
	/* a bare image with its LEB size given (as the superblock has it) */
	o.leb_size = LEB;
	assert_int_equal(ubikit_image_detect(BARE, &o, &g, msg, sizeof(msg)), 0);
	assert_int_equal(g.leb_size, LEB);
	/* a directory is no image */
	ubikit_image_opts_init(&o);
	struct ubikit_image *img;
	assert_true(ubikit_image_open(WORK "/tree", &o, &img, msg, sizeof(msg)) < 0);
	assert_null(img);
	assert_non_null(strstr(msg, WORK "/tree"));
}

static void test_detect_errors(void **state)
{
	(void)state;
	struct ubikit_image_opts o;
	ubikit_image_opts_init(&o);
	struct ubikit_image_geo g;
	struct ubikit_image *img = (struct ubikit_image *)1;

	/* superblock LEB size (le32 at 36) of 1000, CRC right (UBIFS: crc32
	 * seeded ~0 over bytes 8.. of the 4096-byte node, le32 at 4) */
	static uint8_t sb[4096];
	FILE *f = fopen(BARE, "rb");
	assert_non_null(f);
	assert_int_equal(fread(sb, 1, sizeof(sb), f), sizeof(sb));
	fclose(f);
	sb[36] = 0xe8, sb[37] = 0x03, sb[38] = 0, sb[39] = 0;
	uint32_t c = ~(uint32_t)crc32(0, sb + 8, sizeof(sb) - 8);
	sb[4] = (uint8_t)c, sb[5] = (uint8_t)(c >> 8), sb[6] = (uint8_t)(c >> 16), sb[7] = (uint8_t)(c >> 24);
	patch(BARE, WORK "/badleb.ubifs", 0, sb, sizeof(sb));
	assert_int_equal(ubikit_image_detect(WORK "/badleb.ubifs", &o, &g, msg, sizeof(msg)), -EINVAL);
	assert_non_null(strstr(msg, "LEB 0:0: superblock LEB size 1000 is not plausible"));

	/* LEB count (le32 at 40) of 0, LEB size back to the right one: the
	 * bare image's volume refuses the geometry */
	sb[36] = (uint8_t)LEB, sb[37] = (uint8_t)(LEB >> 8), sb[38] = (uint8_t)(LEB >> 16), sb[39] = 0;
	sb[40] = sb[41] = sb[42] = sb[43] = 0;
	c = ~(uint32_t)crc32(0, sb + 8, sizeof(sb) - 8);
	sb[4] = (uint8_t)c, sb[5] = (uint8_t)(c >> 8), sb[6] = (uint8_t)(c >> 16), sb[7] = (uint8_t)(c >> 24);
	patch(BARE, WORK "/nolebs.ubifs", 0, sb, sizeof(sb));
	assert_int_equal(ubikit_image_open(WORK "/nolebs.ubifs", &o, &img, msg, sizeof(msg)), -EINVAL);
	assert_null(img);
	if (!strstr(msg, "implausible superblock geometry: LEB size 126976, LEB count 0"))
		fail_msg("%s", msg);

	/* PEB 0's EC header says data offset 32 before VID header offset 64;
	 * its CRC is right (UBI: crc32 seeded ~0, no final inversion) */
	uint8_t ec[64];
	f = fopen(MULTI, "rb");
	assert_non_null(f);
	assert_int_equal(fread(ec, 1, 64, f), 64);
	fclose(f);
	assert_memory_equal(ec, "UBI#", 4);
	put_be32(ec + 16, 64);
	put_be32(ec + 20, 32);
	put_be32(ec + 60, ~(uint32_t)crc32(0, ec, 60));
	patch(MULTI, WORK "/badec.ubi", 0, ec, 64);
	assert_int_equal(ubikit_image_detect(WORK "/badec.ubi", &o, &g, msg, sizeof(msg)), -EINVAL);
	assert_non_null(strstr(msg, "impossible VID header offset 64 / data offset 32"));

	/* --offset at or past the end of the file */
	struct stat st;
	assert_int_equal(stat(MULTI, &st), 0);
	o.offset = st.st_size;
	assert_int_equal(ubikit_image_detect(MULTI, &o, &g, msg, sizeof(msg)), -EINVAL);
	assert_non_null(strstr(msg, "is past the end of the file"));
	assert_int_equal(ubikit_image_open(MULTI, &o, &img, msg, sizeof(msg)), -EINVAL);
	assert_null(img);

	/* --kind mtd on a regular file; a character device that is not MTD */
	ubikit_image_opts_init(&o);
	o.kind = UBIKIT_IMAGE_MTD;
	assert_int_equal(ubikit_image_detect(MULTI, &o, &g, msg, sizeof(msg)), -EINVAL);
	assert_non_null(strstr(msg, "--kind mtd needs an MTD character device"));
	ubikit_image_opts_init(&o);
	assert_int_equal(ubikit_image_detect("/dev/null", &o, &g, msg, sizeof(msg)), 0);
	assert_int_equal(g.kind, UBIKIT_IMAGE_MTD);
	img = (struct ubikit_image *)1;
	assert_true(ubikit_image_open("/dev/null", &o, &img, msg, sizeof(msg)) < 0);
	assert_null(img);
	assert_non_null(strstr(msg, "cannot open MTD device /dev/null"));

	/* NULL arguments; closing nothing */
	assert_int_equal(ubikit_image_open(NULL, &o, &img, msg, sizeof(msg)), -EINVAL);
	assert_int_equal(ubikit_image_open(MULTI, NULL, &img, msg, sizeof(msg)), -EINVAL);
	assert_int_equal(ubikit_image_open(MULTI, &o, NULL, msg, sizeof(msg)), -EINVAL);
	assert_int_equal(ubikit_image_close(NULL), 0);
	assert_string_equal(ubikit_image_errmsg(NULL), "");
	assert_null(ubikit_image_fs(NULL));
	assert_string_equal(ubikit_image_kind_name(UBIKIT_IMAGE_MTD), "Linux MTD device");
	assert_string_equal(ubikit_image_kind_name((enum ubikit_image_kind)99), "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_multi_volume),
		cmocka_unit_test(test_no_ubifs_volume),
		cmocka_unit_test(test_bare),
		cmocka_unit_test(test_autoresize_view),
		cmocka_unit_test(test_fsck_tree),
		cmocka_unit_test(test_oob_window),
		cmocka_unit_test(test_two_devices),
		cmocka_unit_test(test_detect_layouts),
		cmocka_unit_test(test_detect_errors),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
