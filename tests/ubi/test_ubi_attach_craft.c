/* test_ubi_attach_craft — headers the Linux kernel's attach refuses
 * (drivers/mtd/ubi/io.c validate_ec_hdr / validate_vid_hdr, attach.c
 * ubi_compare_lebs / add_volume / scan_peb, vtbl.c check_attaching_info),
 * written into a file-backed simulated flash behind UBI's back with their
 * CRCs recomputed: UBI version, erase counter, VID/data offsets and image
 * sequence in an EC header; a layout-volume LEB out of range, an
 * incompatible internal volume, two copies of a LEB with the same sqnum,
 * VID headers of one volume that disagree, a volume ID beyond the table.
 * Each attach must fail with -EINVAL and a message naming the PEB and the
 * field; the untouched image attaches (the control). */
#include "ubi_test.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ubi/ubi_media.h"

#define WORK UBIKIT_BUILD_DIR "/ubi-attach-craft"
#define IMG WORK "/img"
enum { PEB = 16384, NPEB = 40, VIDOFF = 256 };

static uint32_t p_leb0, p_leb1, p_other;

/* A fresh image: volume 0 "d" (dynamic, 4 LEBs) with LEBs 0 and 1 written,
 * volume 1 "s" static with one LEB. */
static void make_image(void)
{
	unlink(IMG);
	unlink(IMG ".sim");
	struct flash_sim_config c;
	flash_sim_config_default(&c);
	c.geo.page_size = 512;
	c.geo.subpage_size = 256;
	c.geo.oob_size = 16;
	c.geo.peb_size = PEB;
	c.geo.peb_count = NPEB;
	c.path = IMG;
	struct flash_dev *f = NULL;
	assert_int_equal(flash_sim_create(&c, &f), 0);
	struct ubi_device *u = t_attach(f);
	uint32_t d = t_mkvol(u, "d", 4, UBI_VID_DYNAMIC);
	uint32_t s = t_mkvol(u, "s", 2, UBI_VID_STATIC);
	static uint8_t a[512];
	t_fill(a, sizeof(a), 1);
	T_OK(u, ubi_leb_write(u, d, 0, 0, a, 512));
	T_OK(u, ubi_leb_write(u, d, 1, 0, a, 512));
	T_OK(u, ubi_vol_update(u, s, a, 300));
	ubi_detach(u);
	/* which PEBs hold what */
	p_leb0 = p_leb1 = p_other = UINT32_MAX;
	for (uint32_t p = 0; p < NPEB; p++) {
		uint8_t b[64];
		struct ubi_vid_hdr h;
		if (flash_read(f, p, VIDOFF, b, 64) < 0 || ubi_vid_hdr_unpack(b, &h) != UBI_HDR_OK)
			continue;
		if (h.vol_id == d && h.lnum == 0)
			p_leb0 = p;
		else if (h.vol_id == d && h.lnum == 1)
			p_leb1 = p;
		else if (h.vol_id == s)
			p_other = p;
	}
	flash_close(f);
	assert_int_not_equal(p_leb0, UINT32_MAX);
	assert_int_not_equal(p_leb1, UINT32_MAX);
	assert_int_not_equal(p_other, UINT32_MAX);
}

static void edit_ec(uint32_t p, void (*edit)(struct ubi_ec_hdr *))
{
	int fd = open(IMG, O_RDWR);
	assert_true(fd >= 0);
	uint8_t b[UBI_HDR_SIZE];
	assert_int_equal(pread(fd, b, sizeof(b), (off_t)p * PEB), sizeof(b));
	struct ubi_ec_hdr h;
	assert_int_equal(ubi_ec_hdr_unpack(b, &h), UBI_HDR_OK);
	edit(&h);
	ubi_ec_hdr_pack(&h, b);
	assert_int_equal(pwrite(fd, b, sizeof(b), (off_t)p * PEB), sizeof(b));
	close(fd);
}

static struct ubi_vid_hdr vid_of(uint32_t p)
{
	int fd = open(IMG, O_RDONLY);
	assert_true(fd >= 0);
	uint8_t b[UBI_HDR_SIZE];
	assert_int_equal(pread(fd, b, sizeof(b), (off_t)p * PEB + VIDOFF), sizeof(b));
	close(fd);
	struct ubi_vid_hdr h;
	assert_int_equal(ubi_vid_hdr_unpack(b, &h), UBI_HDR_OK);
	return h;
}

static void put_vid(uint32_t p, const struct ubi_vid_hdr *h)
{
	int fd = open(IMG, O_RDWR);
	assert_true(fd >= 0);
	uint8_t b[UBI_HDR_SIZE];
	ubi_vid_hdr_pack(h, b);
	assert_int_equal(pwrite(fd, b, sizeof(b), (off_t)p * PEB + VIDOFF), sizeof(b));
	close(fd);
}

static void expect_refused(const char *what, const char *needle)
{
	struct flash_dev *f = NULL;
	assert_int_equal(flash_sim_open(IMG, NULL, false, true, &f), 0);
	struct ubi_attach_opts o;
	ubi_attach_opts_default(&o);
	o.read_only = true;
	struct ubi_device *u = NULL;
	char msg[512];
	int err = ubi_attach_msg(f, &o, &u, msg, sizeof(msg));
	flash_close(f);
	if (err != -EINVAL || !strstr(msg, needle)) {
		if (u)
			ubi_detach(u);
		fail_msg("%s: got %d '%s', expected -EINVAL '%s'", what, err, msg, needle);
	}
}

static void e_version(struct ubi_ec_hdr *h) { h->version = 2; }
static void e_ec(struct ubi_ec_hdr *h) { h->ec = 0x80000000ull; }
static void e_vidoff(struct ubi_ec_hdr *h) { h->vid_hdr_offset = 512; }
static void e_dataoff(struct ubi_ec_hdr *h) { h->data_offset = 1024; }
static void e_seq(struct ubi_ec_hdr *h) { h->image_seq ^= 0x5555; }

static void test_ec_headers(void **state)
{
	(void)state;
	make_image();
	struct flash_dev *f = NULL;
	assert_int_equal(flash_sim_open(IMG, NULL, false, true, &f), 0);
	struct ubi_device *u = t_attach(f); /* the control */
	ubi_detach(u);
	flash_close(f);
	edit_ec(p_leb0, e_version);
	expect_refused("EC version", "UBI version 2");
	make_image();
	edit_ec(p_leb0, e_ec);
	expect_refused("erase counter", "erase counter");
	make_image();
	edit_ec(p_leb0, e_vidoff);
	expect_refused("VID offset", "VID header offset 512");
	make_image();
	edit_ec(p_leb0, e_dataoff);
	expect_refused("data offset", "data offset 1024");
	make_image();
	edit_ec(p_leb1, e_seq);
	expect_refused("image sequence", "image sequence");
}

static void test_vid_headers(void **state)
{
	(void)state;
	/* a layout-volume LEB beyond its 2 LEBs */
	make_image();
	struct ubi_vid_hdr h = vid_of(p_leb0);
	h.vol_id = UBI_LAYOUT_VOLUME_ID;
	h.lnum = 5;
	h.compat = UBI_COMPAT_REJECT;
	put_vid(p_leb0, &h);
	expect_refused("layout LEB", "layout volume LEB 5");
	/* an internal volume this UBI does not know, compat "reject" */
	make_image();
	h = vid_of(p_leb0);
	h.vol_id = UBI_LAYOUT_VOLUME_ID + 7;
	h.compat = UBI_COMPAT_REJECT;
	put_vid(p_leb0, &h);
	expect_refused("internal volume", "incompatible internal volume");
	/* LEB 1's header copied onto LEB 0's PEB: two copies, same sqnum */
	make_image();
	h = vid_of(p_leb1);
	put_vid(p_leb0, &h);
	expect_refused("same sqnum", "sequence number");
	/* ... and both with sqnum 0 (the unsupported old format) */
	make_image();
	h = vid_of(p_leb1);
	h.sqnum = 0;
	put_vid(p_leb1, &h);
	put_vid(p_leb0, &h);
	expect_refused("sqnum 0", "sqnum is 0");
	/* one PEB of the dynamic volume says static */
	make_image();
	h = vid_of(p_leb1);
	h.vol_type = UBI_VID_STATIC;
	h.used_ebs = 2; /* LEB 1 is its last: a valid static header by itself */
	h.data_size = 512;
	put_vid(p_leb1, &h);
	expect_refused("inconsistent", "inconsistent VID header");
	/* a volume ID beyond the volume table's 92 slots */
	make_image();
	h = vid_of(p_leb1);
	h.vol_id = 100;
	put_vid(p_leb1, &h);
	expect_refused("volume ID", "100");
}

int main(void)
{
	mkdir(UBIKIT_BUILD_DIR, 0755);
	mkdir(WORK, 0755);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ec_headers),
		cmocka_unit_test(test_vid_headers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
