/* test_ubi_basic — attach of a blank flash (format), volume management,
 * LEB operations and static volume updates, each checked again after a
 * re-attach (so the on-flash state, not only RAM, is right). */
#include "ubi_test.h"

#include "ubi/ubi_media.h"
#include "util/util_crc.h"

static void test_blank_format(void **state)
{
	(void)state;
	struct flash_dev *f = t_nand(64, 1);
	struct ubi_attach_opts o;
	ubi_attach_opts_default(&o);
	o.seed = 42;
	struct ubi_device *u = t_attach_opts(f, &o);
	struct ubi_dev_info di;
	ubi_dev_info(u, &di);
	assert_true(di.formatted);
	assert_int_equal(di.vid_hdr_offset, 256);
	assert_int_equal(di.data_offset, 512);
	assert_int_equal(di.leb_size, 15872);
	assert_int_equal(di.vtbl_slots, 92);
	assert_int_equal(di.vol_count, 0);
	assert_int_equal(di.beb_rsvd_pebs, 2); /* ceil(64 * 20 / 1024) */
	assert_int_equal(di.avail_pebs, 64 - 2 - 2 - 2);
	assert_int_equal(di.erase_pending, 0);
	assert_int_not_equal(di.image_seq, 0);
	uint32_t seq = di.image_seq;
	/* every PEB carries a valid EC header with ec 1 and the image_seq */
	for (uint32_t p = 0; p < 64; p++) {
		uint8_t b[64];
		struct ubi_ec_hdr h;
		assert_int_equal(flash_read(f, p, 0, b, 64), 0);
		assert_int_equal(ubi_ec_hdr_unpack(b, &h), UBI_HDR_OK);
		assert_int_equal(h.ec, 1);
		assert_int_equal(h.image_seq, seq);
		assert_int_equal(h.vid_hdr_offset, 256);
	}
	/* same seed -> same image_seq on another blank flash */
	struct flash_dev *f2 = t_nand(64, 9);
	struct ubi_device *u2 = t_attach_opts(f2, &o);
	struct ubi_dev_info di2;
	ubi_dev_info(u2, &di2);
	assert_int_equal(di2.image_seq, seq);
	ubi_detach(u2);
	flash_close(f2);

	u = t_reattach(u, f);
	ubi_dev_info(u, &di);
	assert_false(di.formatted);
	assert_int_equal(di.image_seq, seq);
	assert_int_equal(di.avail_pebs, 58);
	ubi_detach(u);

	/* read-only attach of a blank flash writes nothing */
	struct flash_dev *f3 = t_nand(16, 3);
	o.read_only = true;
	struct flash_stats s0, s1;
	flash_sim_get_stats(f3, &s0);
	u = t_attach_opts(f3, &o);
	ubi_dev_info(u, &di);
	assert_true(di.read_only);
	assert_int_equal(ubi_vol_create(u, &(struct ubi_mkvol_req){.vol_id = -1, .name = "x", .leb_count = 1,
							     .vol_type = UBI_VID_DYNAMIC},
					NULL),
			 -EROFS);
	ubi_detach(u);
	flash_sim_get_stats(f3, &s1);
	assert_int_equal(s0.programs, s1.programs);
	assert_int_equal(s0.erases, s1.erases);
	/* autoformat off: empty flash is refused */
	o.read_only = false;
	o.autoformat = false;
	assert_int_equal(ubi_attach(f3, &o, &u), -ENODEV);
	assert_null(u);
	flash_close(f3);
	flash_close(f);
}

static void test_volumes(void **state)
{
	(void)state;
	struct flash_dev *f = t_nand(64, 2);
	struct ubi_device *u = t_attach(f);
	uint32_t a = t_mkvol(u, "alpha", 10, UBI_VID_DYNAMIC);
	assert_int_equal(a, 0);
	struct ubi_mkvol_req r = {.vol_id = 5, .name = "beta", .leb_count = 4, .vol_type = UBI_VID_STATIC,
				  .alignment = 2048};
	uint32_t b;
	T_OK(u, ubi_vol_create(u, &r, &b));
	assert_int_equal(b, 5);
	/* errors */
	assert_int_equal(ubi_vol_create(u, &r, NULL), -EEXIST);
	r.vol_id = 6;
	assert_int_equal(ubi_vol_create(u, &r, NULL), -EEXIST); /* name */
	r.name = "gamma";
	r.leb_count = 1000;
	assert_int_equal(ubi_vol_create(u, &r, NULL), -ENOSPC);
	r.leb_count = 1;
	r.alignment = 100;
	assert_int_equal(ubi_vol_create(u, &r, NULL), -EINVAL);
	r.alignment = 1;
	r.vol_id = 92;
	assert_int_equal(ubi_vol_create(u, &r, NULL), -EINVAL);

	u = t_reattach(u, f);
	struct ubi_vol_info vi;
	T_OK(u, ubi_vol_info(u, 5, &vi));
	assert_string_equal(vi.name, "beta");
	assert_int_equal(vi.vol_type, UBI_VID_STATIC);
	assert_int_equal(vi.alignment, 2048);
	assert_int_equal(vi.data_pad, 15872 % 2048);
	assert_int_equal(vi.usable_leb_size, 15872 - 15872 % 2048);
	assert_int_equal(ubi_vol_find(u, "alpha"), 0);
	assert_int_equal(ubi_vol_find(u, "nope"), -ENOENT);
	uint32_t ids[8];
	assert_int_equal(ubi_vol_list(u, ids, 8), 2);
	assert_int_equal(ids[0], 0);
	assert_int_equal(ids[1], 5);

	/* resize */
	struct ubi_dev_info di;
	ubi_dev_info(u, &di);
	uint32_t avail = di.avail_pebs;
	T_OK(u, ubi_vol_resize(u, a, 20));
	uint8_t buf[15872];
	t_fill(buf, sizeof(buf), 1);
	T_OK(u, ubi_leb_write(u, a, 19, 0, buf, 1024));
	T_OK(u, ubi_leb_write(u, a, 3, 0, buf, 1024));
	u = t_reattach(u, f);
	T_OK(u, ubi_vol_info(u, a, &vi));
	assert_int_equal(vi.reserved_pebs, 20);
	assert_int_equal(vi.mapped_lebs, 2);
	ubi_dev_info(u, &di);
	assert_int_equal(di.avail_pebs, avail - 10);
	T_OK(u, ubi_vol_resize(u, a, 8)); /* LEB 19 cut off */
	u = t_reattach(u, f);
	T_OK(u, ubi_vol_info(u, a, &vi));
	assert_int_equal(vi.reserved_pebs, 8);
	assert_int_equal(vi.mapped_lebs, 1);
	ubi_dev_info(u, &di);
	assert_int_equal(di.avail_pebs, avail + 2);

	/* rename several at once; a name owned by another volume removes it */
	uint32_t c = t_mkvol(u, "gamma", 2, UBI_VID_DYNAMIC);
	T_OK(u, ubi_leb_write(u, c, 0, 0, buf, 512));
	struct ubi_rename_req rr[2] = {{a, "gamma"}, {b, "alpha"}};
	T_OK(u, ubi_vol_rename(u, rr, 2));
	u = t_reattach(u, f);
	assert_int_equal(ubi_vol_find(u, "gamma"), (int)a);
	assert_int_equal(ubi_vol_find(u, "alpha"), (int)b);
	assert_int_equal(ubi_vol_info(u, c, &vi), -ENOENT);
	ubi_dev_info(u, &di);
	assert_int_equal(di.vol_count, 2);
	/* swap names */
	struct ubi_rename_req sw[2] = {{a, "alpha"}, {b, "gamma"}};
	T_OK(u, ubi_vol_rename(u, sw, 2));
	u = t_reattach(u, f);
	assert_int_equal(ubi_vol_find(u, "alpha"), (int)a);
	assert_int_equal(ubi_vol_find(u, "gamma"), (int)b);

	/* remove */
	T_OK(u, ubi_vol_remove(u, a));
	assert_int_equal(ubi_vol_remove(u, a), -ENOENT);
	u = t_reattach(u, f);
	assert_int_equal(ubi_vol_find(u, "alpha"), -ENOENT);
	ubi_dev_info(u, &di);
	assert_int_equal(di.vol_count, 1);
	assert_int_equal(di.avail_pebs, 58 - 4);
	ubi_detach(u);
	flash_close(f);
}

static void check_leb(struct ubi_device *u, uint32_t v, uint32_t l, const uint8_t *want, size_t n)
{
	uint8_t *got = malloc(n);
	T_OK(u, ubi_leb_read(u, v, l, 0, got, n));
	assert_memory_equal(got, want, n);
	free(got);
}

static void test_leb_ops(void **state)
{
	(void)state;
	struct flash_dev *f = t_nand(32, 3);
	struct ubi_device *u = t_attach(f);
	uint32_t v = t_mkvol(u, "data", 8, UBI_VID_DYNAMIC);
	enum { L = 15872 };
	static uint8_t a[L], b[L], ff[L];
	memset(ff, 0xFF, L);
	t_fill(a, L, 10);
	t_fill(b, L, 11);
	check_leb(u, v, 0, ff, L);
	assert_int_equal(ubi_leb_is_mapped(u, v, 0), 0);
	/* alignment and range rules */
	assert_int_equal(ubi_leb_write(u, v, 0, 100, a, 512), -EINVAL);
	assert_int_equal(ubi_leb_write(u, v, 0, 0, a, 100), -EINVAL);
	assert_int_equal(ubi_leb_write(u, v, 8, 0, a, 512), -EINVAL);
	assert_int_equal(ubi_leb_write(u, v, 0, L - 512, a, 1024), -EINVAL);
	assert_int_equal(ubi_leb_write(u, 77, 0, 0, a, 512), -ENOENT);
	/* write in two pieces */
	T_OK(u, ubi_leb_write(u, v, 0, 0, a, 4096));
	T_OK(u, ubi_leb_write(u, v, 0, 4096, a + 4096, 4096));
	u = t_reattach(u, f);
	static uint8_t exp[L];
	memset(exp, 0xFF, L);
	memcpy(exp, a, 8192);
	check_leb(u, v, 0, exp, L);
	assert_int_equal(ubi_leb_is_mapped(u, v, 0), 1);
	/* partial reads at odd offsets */
	uint8_t small[37];
	T_OK(u, ubi_leb_read(u, v, 0, 1001, small, 37));
	assert_memory_equal(small, a + 1001, 37);
	/* atomic change */
	T_OK(u, ubi_leb_change(u, v, 0, b, 2048));
	u = t_reattach(u, f);
	memset(exp, 0xFF, L);
	memcpy(exp, b, 2048);
	check_leb(u, v, 0, exp, L);
	/* change to an unmapped LEB, full size */
	T_OK(u, ubi_leb_change(u, v, 3, a, L));
	u = t_reattach(u, f);
	check_leb(u, v, 3, a, L);
	/* unmap */
	T_OK(u, ubi_leb_unmap(u, v, 0));
	assert_int_equal(ubi_leb_is_mapped(u, v, 0), 0);
	check_leb(u, v, 0, ff, L);
	T_OK(u, ubi_sync(u));
	u = t_reattach(u, f);
	assert_int_equal(ubi_leb_is_mapped(u, v, 0), 0);
	check_leb(u, v, 0, ff, L);
	/* map */
	T_OK(u, ubi_leb_map(u, v, 0));
	assert_int_equal(ubi_leb_map(u, v, 0), -EBADMSG);
	u = t_reattach(u, f);
	assert_int_equal(ubi_leb_is_mapped(u, v, 0), 1);
	check_leb(u, v, 0, ff, L);
	T_OK(u, ubi_leb_write(u, v, 0, 0, a, 512));
	u = t_reattach(u, f);
	memset(exp, 0xFF, L);
	memcpy(exp, a, 512);
	check_leb(u, v, 0, exp, L);
	/* change with len 0 = unmap */
	T_OK(u, ubi_leb_change(u, v, 3, a, 0));
	assert_int_equal(ubi_leb_is_mapped(u, v, 3), 0);

	/* vol_io vtable */
	struct ubi_vol_io io;
	T_OK(u, ubi_volume_io(u, v, &io));
	assert_int_equal(io.leb_size, L);
	assert_int_equal(io.leb_count, 8);
	assert_int_equal(io.min_io_size, 512);
	T_OK(u, io.write(io.ctx, 5, 0, b, 1024));
	uint8_t rb[1024];
	T_OK(u, io.read(io.ctx, 5, 0, rb, 1024));
	assert_memory_equal(rb, b, 1024);
	assert_int_equal(io.is_mapped(io.ctx, 5), 1);
	T_OK(u, io.change(io.ctx, 5, a, 512));
	T_OK(u, io.unmap(io.ctx, 5));
	assert_int_equal(io.is_mapped(io.ctx, 5), 0);
	T_OK(u, io.map(io.ctx, 5));
	T_OK(u, io.sync(io.ctx));
	ubi_detach(u);
	flash_close(f);
}

static void test_static_update(void **state)
{
	(void)state;
	/* NOR: lets the test corrupt data bits in place. */
	struct flash_dev *f = t_nor(32, 16384, 4);
	struct ubi_device *u = t_attach(f);
	struct ubi_dev_info di;
	ubi_dev_info(u, &di);
	assert_int_equal(di.data_offset, 128);
	assert_int_equal(di.beb_rsvd_pebs, 0); /* NOR has no bad blocks */
	uint32_t usable = di.leb_size;
	uint32_t v = t_mkvol(u, "kernel", 6, UBI_VID_STATIC);
	size_t n = usable * 2 + 1000;
	uint8_t *img = malloc(n), *rd = malloc(usable);
	t_fill(img, n, 5);
	/* write in odd chunks */
	T_OK(u, ubi_vol_update_start(u, v, n));
	size_t done = 0, step = 777;
	while (done < n) {
		size_t k = n - done < step ? n - done : step;
		T_OK(u, ubi_vol_update_write(u, v, img + done, k));
		done += k;
	}
	assert_int_equal(ubi_vol_update_pending(u, v), 0);
	assert_int_equal(ubi_leb_write(u, v, 0, 0, img, 512), -EROFS);
	u = t_reattach(u, f);
	struct ubi_vol_info vi;
	T_OK(u, ubi_vol_info(u, v, &vi));
	assert_int_equal(vi.used_ebs, 3);
	assert_int_equal(vi.last_eb_bytes, 1000);
	assert_int_equal(vi.used_bytes, n);
	assert_false(vi.upd_marker);
	T_OK(u, ubi_vol_check(u, v));
	T_OK(u, ubi_leb_read(u, v, 1, 0, rd, usable));
	assert_memory_equal(rd, img + usable, usable);
	T_OK(u, ubi_leb_read(u, v, 2, 0, rd, 1000));
	assert_memory_equal(rd, img + 2 * usable, 1000);
	assert_int_equal(ubi_leb_read(u, v, 2, 0, rd, 1001), -EINVAL);
	assert_int_equal(ubi_leb_read(u, v, 3, 0, rd, 1), -EINVAL);

	/* whole-buffer update to a shorter image */
	T_OK(u, ubi_vol_update(u, v, img + 5, 4000));
	u = t_reattach(u, f);
	T_OK(u, ubi_vol_info(u, v, &vi));
	assert_int_equal(vi.used_ebs, 1);
	assert_int_equal(vi.used_bytes, 4000);
	T_OK(u, ubi_leb_read(u, v, 0, 0, rd, 4000));
	assert_memory_equal(rd, img + 5, 4000);
	T_OK(u, ubi_vol_check(u, v));

	/* corrupt one data byte on flash (NOR: clear bits) -> CRC error */
	ubi_detach(u);
	uint32_t pnum = UINT32_MAX;
	for (uint32_t p = 0; p < 32; p++) {
		uint8_t b[64];
		struct ubi_vid_hdr h;
		flash_read(f, p, 64, b, 64);
		if (ubi_vid_hdr_unpack(b, &h) == UBI_HDR_OK && h.vol_id == v && h.lnum == 0)
			pnum = p;
	}
	assert_int_not_equal(pnum, UINT32_MAX);
	uint8_t z = 0;
	assert_int_equal(flash_write(f, pnum, 128 + 100, &z, 1), 0);
	u = t_attach(f);
	assert_int_equal(ubi_vol_check(u, v), -EBADMSG);
	T_OK(u, ubi_vol_info(u, v, &vi));
	assert_true(vi.corrupted);
	assert_int_equal(ubi_leb_read(u, v, 0, 0, rd, 10), -EBADMSG);
	assert_non_null(strstr(ubi_errmsg(u), "CRC"));

	/* interrupted update: marker survives re-attach, reads refuse */
	T_OK(u, ubi_vol_update_start(u, v, n));
	T_OK(u, ubi_vol_update_write(u, v, img, usable + 10));
	u = t_reattach(u, f);
	T_OK(u, ubi_vol_info(u, v, &vi));
	assert_true(vi.upd_marker);
	assert_int_equal(ubi_leb_read(u, v, 0, 0, rd, 10), -EBADF);
	/* a new update repairs it; length 0 wipes */
	T_OK(u, ubi_vol_update(u, v, img, 0));
	u = t_reattach(u, f);
	T_OK(u, ubi_vol_info(u, v, &vi));
	assert_false(vi.upd_marker);
	assert_int_equal(vi.used_bytes, 0);

	/* dynamic volume update: trailing 0xFF not written */
	uint32_t d = t_mkvol(u, "dyn", 4, UBI_VID_DYNAMIC);
	memset(img + usable, 0xFF, usable);
	T_OK(u, ubi_vol_update(u, d, img, usable * 2));
	u = t_reattach(u, f);
	assert_int_equal(ubi_leb_is_mapped(u, d, 0), 1);
	assert_int_equal(ubi_leb_is_mapped(u, d, 1), 0);
	T_OK(u, ubi_leb_read(u, d, 0, 0, rd, usable));
	assert_memory_equal(rd, img, usable);
	free(img);
	free(rd);
	ubi_detach(u);
	flash_close(f);
}

static void test_autoresize(void **state)
{
	(void)state;
	struct flash_dev *f = t_nand(40, 6);
	struct ubi_device *u = t_attach(f);
	struct ubi_mkvol_req r = {.vol_id = 0, .name = "root", .leb_count = 3, .vol_type = UBI_VID_DYNAMIC,
				  .flags = UBI_VTBL_AUTORESIZE_FLG};
	T_OK(u, ubi_vol_create(u, &r, NULL));
	t_mkvol(u, "other", 5, UBI_VID_DYNAMIC);
	u = t_reattach(u, f);
	struct ubi_vol_info vi;
	T_OK(u, ubi_vol_info(u, 0, &vi));
	/* 40 - layout 2 - WL 1 - EBA 1 - beb ceil(40*20/1024)=1 - other 5 */
	assert_int_equal(vi.reserved_pebs, 40 - 2 - 1 - 1 - 1 - 5);
	assert_int_equal(vi.flags & UBI_VTBL_AUTORESIZE_FLG, 0);
	struct ubi_dev_info di;
	ubi_dev_info(u, &di);
	assert_int_equal(di.avail_pebs, 0);
	u = t_reattach(u, f);
	T_OK(u, ubi_vol_info(u, 0, &vi));
	assert_int_equal(vi.reserved_pebs, 30);
	ubi_detach(u);
	flash_close(f);
}

static void test_nand2k_geometry(void **state)
{
	(void)state;
	struct flash_dev *f = t_nand2k(32, 7);
	struct ubi_device *u = t_attach(f);
	struct ubi_dev_info di;
	ubi_dev_info(u, &di);
	assert_int_equal(di.vid_hdr_offset, 512);
	assert_int_equal(di.data_offset, 2048);
	assert_int_equal(di.leb_size, 129024);
	assert_int_equal(di.vtbl_slots, 128);
	uint32_t v = t_mkvol(u, "v", 4, UBI_VID_DYNAMIC);
	static uint8_t a[129024];
	t_fill(a, sizeof(a), 3);
	T_OK(u, ubi_leb_write(u, v, 1, 0, a, sizeof(a)));
	u = t_reattach(u, f);
	static uint8_t b[129024];
	T_OK(u, ubi_leb_read(u, v, 1, 0, b, sizeof(b)));
	assert_memory_equal(a, b, sizeof(a));
	ubi_detach(u);
	flash_close(f);

	/* VID header offset override (ubinize -O 1984 / ubiattach -O) */
	f = t_nand2k(16, 8);
	struct ubi_attach_opts o;
	ubi_attach_opts_default(&o);
	o.vid_hdr_offset = 1984;
	u = t_attach_opts(f, &o);
	ubi_dev_info(u, &di);
	assert_int_equal(di.vid_hdr_offset, 1984);
	assert_int_equal(di.data_offset, 2048);
	v = t_mkvol(u, "v", 2, UBI_VID_DYNAMIC);
	T_OK(u, ubi_leb_write(u, v, 0, 0, a, 4096));
	ubi_detach(u);
	u = t_attach_opts(f, &o);
	T_OK(u, ubi_leb_read(u, v, 0, 0, b, 4096));
	assert_memory_equal(a, b, 4096);
	ubi_detach(u);
	/* attaching with the default offset is refused, naming the field */
	char msg[512];
	assert_int_equal(ubi_attach_msg(f, NULL, &u, msg, sizeof(msg)), -EINVAL);
	assert_non_null(strstr(msg, "VID header offset 1984, expected 512"));
	/* an impossible override is refused too */
	o.vid_hdr_offset = 1990;
	assert_int_equal(ubi_attach_msg(f, &o, &u, msg, sizeof(msg)), -EINVAL);
	flash_close(f);
}

static bool raw_vid(struct flash_dev *f, uint32_t vol, uint32_t lnum, uint32_t vidoff, struct ubi_vid_hdr *out,
		    uint32_t *pnum)
{
	bool found = false;
	for (uint32_t p = 0; p < f->geo.peb_count; p++) {
		uint8_t b[64];
		struct ubi_vid_hdr h;
		flash_read(f, p, vidoff, b, 64);
		if (ubi_vid_hdr_unpack(b, &h) == UBI_HDR_OK && h.vol_id == vol && h.lnum == lnum &&
		    (!found || h.sqnum > out->sqnum)) {
			*out = h;
			*pnum = p;
			found = true;
		}
	}
	return found;
}

/* The headers we write carry what Linux writes (spec §9.2, §11). */
static void test_header_details(void **state)
{
	(void)state;
	struct flash_dev *f = t_nor(16, 16384, 8); /* like the kernel's mtdram images */
	struct ubi_device *u = t_attach(f);
	uint32_t v = t_mkvol(u, "v", 4, UBI_VID_DYNAMIC);
	struct ubi_vid_hdr h;
	uint32_t p = 0;
	/* vtbl copies: atomic changes, data_size = ALIGN(slots * 172, min I/O) */
	assert_true(raw_vid(f, UBI_LAYOUT_VOLUME_ID, 0, 64, &h, &p));
	assert_int_equal(h.copy_flag, 1);
	assert_int_equal(h.data_size, 94 * 172); /* 16168, as in the kernel image */
	assert_int_equal(h.compat, UBI_COMPAT_REJECT);
	uint8_t buf[16256];
	flash_read(f, p, 128, buf, h.data_size);
	assert_int_equal(h.data_crc, util_crc32(UTIL_CRC32_INIT, buf, h.data_size));
	/* plain write: copy_flag 0, no data_size/crc */
	uint8_t d[4096];
	t_fill(d, sizeof(d), 1);
	T_OK(u, ubi_leb_write(u, v, 0, 0, d, 1000));
	assert_true(raw_vid(f, v, 0, 64, &h, &p));
	assert_int_equal(h.copy_flag, 0);
	assert_int_equal(h.data_size, 0);
	assert_int_equal(h.data_crc, 0);
	uint64_t sq = h.sqnum;
	/* atomic change */
	T_OK(u, ubi_leb_change(u, v, 1, d, 3000));
	assert_true(raw_vid(f, v, 1, 64, &h, &p));
	assert_int_equal(h.copy_flag, 1);
	assert_int_equal(h.data_size, 3000);
	assert_int_equal(h.data_crc, util_crc32(UTIL_CRC32_INIT, d, 3000));
	assert_true(h.sqnum > sq);
	/* scrub move of LEB 0: trailing 0xFF trimmed, copy_flag + CRC */
	assert_true(raw_vid(f, v, 0, 64, &h, &p));
	assert_int_equal(flash_sim_inject_bitflip(f, p, 2, false, false), 0);
	T_OK(u, ubi_leb_read(u, v, 0, 0, buf, 16256));
	T_OK(u, ubi_flush_background(u));
	uint32_t q = 0;
	assert_true(raw_vid(f, v, 0, 64, &h, &q));
	assert_int_not_equal(p, q);
	assert_int_equal(h.copy_flag, 1);
	assert_int_equal(h.data_size, 1000);
	assert_int_equal(h.data_crc, util_crc32(UTIL_CRC32_INIT, d, 1000));
	ubi_detach(u);
	flash_close(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_blank_format),   cmocka_unit_test(test_volumes),
		cmocka_unit_test(test_leb_ops),        cmocka_unit_test(test_static_update),
		cmocka_unit_test(test_autoresize),     cmocka_unit_test(test_nand2k_geometry),
		cmocka_unit_test(test_header_details),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
