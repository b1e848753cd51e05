/* test_ubi_vol_args — the volume API's refusals, with the errno the Linux
 * UBI ioctls give for the same request (drivers/mtd/ubi/cdev.c
 * verify_mkvol_req / verify_rsvol_req / rename_volumes, vmt.c, upd.c,
 * kapi.c): bad names, types, flags, alignment, sizes, IDs, full volume
 * table, second auto-resize volume, resize below a static volume's data,
 * rename lists with duplicates, updates larger than the volume or written
 * past their announced size, LEB I/O out of range or on static volumes,
 * and reads of a volume with an interrupted update. Each refusal must
 * leave the device unchanged (checked against the state before). */
#include "ubi_test.h"

#include "ubi/ubi_media.h"

enum { L = 15872 };

static int mk(struct ubi_device *u, int id, const char *name, uint32_t lebs, uint8_t type, uint32_t align,
	      uint8_t flags)
{
	struct ubi_mkvol_req r = {.vol_id = id, .name = name, .leb_count = lebs, .vol_type = type,
				  .alignment = align, .flags = flags};
	return ubi_vol_create(u, &r, NULL);
}

static void same_state(struct ubi_device *u, const struct ubi_dev_info *before)
{
	struct ubi_dev_info now;
	ubi_dev_info(u, &now);
	assert_int_equal(now.vol_count, before->vol_count);
	assert_int_equal(now.avail_pebs, before->avail_pebs);
	assert_int_equal(now.rsvd_pebs, before->rsvd_pebs);
}

static void test_mkvol(void **state)
{
	(void)state;
	struct flash_dev *f = t_nand(40, 1);
	struct ubi_device *u = t_attach(f);
	struct ubi_dev_info d0;
	ubi_dev_info(u, &d0);
	char longname[200];
	memset(longname, 'n', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = 0;
	assert_int_equal(mk(u, UBI_VOL_NUM_AUTO, NULL, 1, UBI_VID_DYNAMIC, 0, 0), -EINVAL);
	assert_int_equal(mk(u, UBI_VOL_NUM_AUTO, "", 1, UBI_VID_DYNAMIC, 0, 0), -EINVAL);
	assert_int_equal(mk(u, UBI_VOL_NUM_AUTO, longname, 1, UBI_VID_DYNAMIC, 0, 0), -EINVAL);
	assert_int_equal(mk(u, UBI_VOL_NUM_AUTO, "v", 1, 3, 0, 0), -EINVAL);
	assert_int_equal(mk(u, UBI_VOL_NUM_AUTO, "v", 1, UBI_VID_DYNAMIC, L + 512, 0), -EINVAL);
	assert_int_equal(mk(u, UBI_VOL_NUM_AUTO, "v", 1, UBI_VID_DYNAMIC, 100, 0), -EINVAL);
	assert_int_equal(mk(u, UBI_VOL_NUM_AUTO, "v", 1, UBI_VID_DYNAMIC, 0, 0x80), -EINVAL);
	assert_int_equal(mk(u, UBI_VOL_NUM_AUTO, "v", 1, UBI_VID_DYNAMIC, 0, UBI_VTBL_SKIP_CRC_CHECK_FLG), -EINVAL);
	assert_int_equal(mk(u, UBI_VOL_NUM_AUTO, "v", 0, UBI_VID_DYNAMIC, 0, 0), -EINVAL);
	assert_int_equal(mk(u, -5, "v", 1, UBI_VID_DYNAMIC, 0, 0), -EINVAL);
	assert_int_equal(mk(u, (int)d0.vtbl_slots, "v", 1, UBI_VID_DYNAMIC, 0, 0), -EINVAL);
	assert_int_equal(mk(u, UBI_VOL_NUM_AUTO, "v", d0.avail_pebs + 1, UBI_VID_DYNAMIC, 0, 0), -ENOSPC);
	same_state(u, &d0);
	/* valid ones, then the duplicates */
	assert_int_equal(mk(u, 3, "a", 2, UBI_VID_DYNAMIC, 512, UBI_VTBL_AUTORESIZE_FLG), 0);
	assert_int_equal(mk(u, 4, "s", 2, UBI_VID_STATIC, 0, UBI_VTBL_SKIP_CRC_CHECK_FLG), 0);
	struct ubi_dev_info d1;
	ubi_dev_info(u, &d1);
	assert_int_equal(mk(u, 5, "a", 1, UBI_VID_DYNAMIC, 0, 0), -EEXIST);
	assert_int_equal(mk(u, 3, "b", 1, UBI_VID_DYNAMIC, 0, 0), -EEXIST);
	assert_int_equal(mk(u, 5, "b", 1, UBI_VID_DYNAMIC, 0, UBI_VTBL_AUTORESIZE_FLG), -EINVAL);
	same_state(u, &d1);
	struct ubi_vol_info vi;
	T_OK(u, ubi_vol_info(u, 3, &vi));
	assert_int_equal(vi.alignment, 512);
	assert_int_equal(vi.usable_leb_size, L); /* 15872 is a multiple of 512: no padding */
	assert_int_equal(ubi_vol_info(u, 9, &vi), -ENOENT);
	assert_int_equal(ubi_vol_find(u, "nope"), -ENOENT);
	assert_int_equal(ubi_vol_find(u, "s"), 4);
	/* layout volume: not for users */
	assert_int_equal(ubi_vol_remove(u, UBI_LAYOUT_VOLUME_ID), -ENOENT);
	assert_int_equal(ubi_vol_resize(u, UBI_LAYOUT_VOLUME_ID, 3), -ENOENT);
	ubi_detach(u);
	flash_close(f);
}

static void test_table_full(void **state)
{
	(void)state;
	/* 512-byte pages, 16 KiB PEBs: LEB 15872 holds 92 vtbl slots */
	struct flash_dev *f = t_nand(200, 2);
	struct ubi_device *u = t_attach(f);
	struct ubi_dev_info d;
	ubi_dev_info(u, &d);
	assert_int_equal(d.vtbl_slots, 92);
	for (uint32_t i = 0; i < d.vtbl_slots; i++) {
		char n[16];
		snprintf(n, sizeof(n), "v%u", i);
		assert_int_equal(mk(u, UBI_VOL_NUM_AUTO, n, 1, UBI_VID_DYNAMIC, 0, 0), 0);
	}
	assert_int_equal(mk(u, UBI_VOL_NUM_AUTO, "more", 1, UBI_VID_DYNAMIC, 0, 0), -ENFILE);
	uint32_t ids[4];
	assert_int_equal(ubi_vol_list(u, ids, 4), (int)d.vtbl_slots);
	assert_int_equal(ids[3], 3);
	ubi_detach(u);
	flash_close(f);
}

static void test_resize_rename_update(void **state)
{
	(void)state;
	struct flash_dev *f = t_nand(40, 3);
	struct ubi_device *u = t_attach(f);
	uint32_t s = t_mkvol(u, "s", 4, UBI_VID_STATIC);
	uint32_t d = t_mkvol(u, "d", 3, UBI_VID_DYNAMIC);
	static uint8_t a[3 * L], b[L];
	t_fill(a, sizeof(a), 5);
	T_OK(u, ubi_vol_update(u, s, a, 2 * L + 10));
	struct ubi_dev_info d0;
	ubi_dev_info(u, &d0);
	/* resize */
	assert_int_equal(ubi_vol_resize(u, s, 0), -EINVAL);
	assert_int_equal(ubi_vol_resize(u, s, 2), -EINVAL); /* 3 LEBs hold data */
	assert_int_equal(ubi_vol_resize(u, d, d0.avail_pebs + 4), -ENOSPC);
	assert_int_equal(ubi_vol_resize(u, 77, 2), -ENOENT);
	same_state(u, &d0);
	T_OK(u, ubi_vol_resize(u, s, 3));
	T_OK(u, ubi_leb_read(u, s, 2, 0, b, 10));
	assert_memory_equal(b, a + 2 * L, 10);
	/* rename */
	struct ubi_rename_req r2[2] = {{s, "x"}, {s, "y"}};
	assert_int_equal(ubi_vol_rename(u, r2, 2), -EINVAL);
	struct ubi_rename_req r3[2] = {{s, "x"}, {d, "x"}};
	assert_int_equal(ubi_vol_rename(u, r3, 2), -EINVAL);
	struct ubi_rename_req r4[1] = {{s, ""}};
	assert_int_equal(ubi_vol_rename(u, r4, 1), -EINVAL);
	struct ubi_rename_req r5[1] = {{55, "z"}};
	assert_int_equal(ubi_vol_rename(u, r5, 1), -ENOENT);
	assert_int_equal(ubi_vol_rename(u, r5, 0), -EINVAL);
	assert_int_equal(ubi_vol_find(u, "s"), (int)s);
	/* swap the names in one request */
	struct ubi_rename_req sw[2] = {{s, "d"}, {d, "s"}};
	T_OK(u, ubi_vol_rename(u, sw, 2));
	assert_int_equal(ubi_vol_find(u, "d"), (int)s);
	assert_int_equal(ubi_vol_find(u, "s"), (int)d);
	/* updates */
	assert_int_equal(ubi_vol_update_start(u, d, 4ull * L), -EINVAL); /* larger than the volume */
	assert_int_equal(ubi_vol_update_write(u, d, a, 10), -EINVAL);    /* none in progress */
	T_OK(u, ubi_vol_update_start(u, d, 100));
	assert_int_equal(ubi_vol_update_pending(u, d), 1);
	/* while it runs the volume is busy (the kernel: opened exclusively) */
	assert_int_equal(ubi_leb_read(u, d, 0, 0, b, 10), -EBUSY);
	assert_int_equal(ubi_vol_update_write(u, d, a, 101), -EINVAL);  /* past the announced size */
	T_OK(u, ubi_vol_update_write(u, d, a, 60));
	T_OK(u, ubi_vol_update_write(u, d, a + 60, 40));
	assert_int_equal(ubi_vol_update_pending(u, d), 0);
	T_OK(u, ubi_leb_read(u, d, 0, 0, b, 100));
	assert_memory_equal(b, a, 100);
	/* an update interrupted by a detach: the marker survives */
	T_OK(u, ubi_vol_update_start(u, d, 2 * L));
	T_OK(u, ubi_vol_update_write(u, d, a, L));
	u = t_reattach(u, f);
	struct ubi_vol_info vi;
	T_OK(u, ubi_vol_info(u, d, &vi));
	assert_true(vi.upd_marker);
	assert_int_equal(ubi_leb_read(u, d, 0, 0, b, 10), -EBADF);
	assert_int_equal(ubi_vol_check(u, d), -EBADF);
	/* LEB I/O */
	assert_int_equal(ubi_leb_write(u, s, 0, 0, a, 512), -EROFS); /* static: by update only */
	assert_int_equal(ubi_leb_read(u, s, 3, 0, b, 1), -EINVAL);    /* past the volume */
	assert_int_equal(ubi_leb_read(u, s, 0, L - 10, b, 20), -EINVAL);
	assert_int_equal(ubi_leb_write(u, d, 0, 100, a, 512), -EINVAL); /* unaligned */
	assert_int_equal(ubi_leb_write(u, d, 3, 0, a, 512), -EINVAL);
	assert_int_equal(ubi_leb_map(u, d, 3), -EINVAL);
	assert_int_equal(ubi_leb_unmap(u, d, 3), -EINVAL);
	assert_int_equal(ubi_leb_is_mapped(u, d, 3), -EINVAL);
	assert_int_equal(ubi_leb_change(u, d, 3, a, 512), -EINVAL);
	/* finishing the interrupted update by a new one clears the marker */
	T_OK(u, ubi_vol_update(u, d, a, 700));
	T_OK(u, ubi_leb_read(u, d, 0, 0, b, 700));
	assert_memory_equal(b, a, 700);
	ubi_detach(u);
	flash_close(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mkvol),
		cmocka_unit_test(test_table_full),
		cmocka_unit_test(test_resize_rename_update),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
