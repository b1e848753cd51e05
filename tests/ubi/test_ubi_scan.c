/* test_ubi_scan — attach-time classification of hand-crafted PEBs (packed
 * with ubi_media): corrupt EC / VID headers with and without data,
 * duplicate LEBs resolved by sqnum, copy_flag and data CRC, image_seq
 * mismatch, damaged volume-table copies (repaired) or both (refused),
 * internal volume compat values, the max_corr rule, bad blocks. */
#include "ubi_test.h"

#include "ubi/ubi_media.h"
#include "util/util_crc.h"

enum { NP = 24, L = 15872, VIDOFF = 256, DOFF = 512 };

struct env {
	struct flash_dev *f;
	uint32_t image_seq;
	uint32_t vol;
};

/* Formatted flash with volume "v" (dynamic, 6 LEBs), LEB 0..2 written. */
static void setup(struct env *e, uint32_t pebs)
{
	e->f = t_nand(pebs, 1);
	struct ubi_device *u = t_attach(e->f);
	e->vol = t_mkvol(u, "v", 6, UBI_VID_DYNAMIC);
	static uint8_t d[L];
	for (uint32_t l = 0; l < 3; l++) {
		t_fill(d, L, 100 + l);
		T_OK(u, ubi_leb_write(u, e->vol, l, 0, d, L));
	}
	struct ubi_dev_info di;
	ubi_dev_info(u, &di);
	e->image_seq = di.image_seq;
	T_OK(u, ubi_sync(u)); /* no pending erasures */
	ubi_detach(u);
}

static bool peb_free(struct flash_dev *f, uint32_t p)
{
	uint8_t b[64];
	struct ubi_ec_hdr eh;
	flash_read(f, p, 0, b, 64);
	if (ubi_ec_hdr_unpack(b, &eh) != UBI_HDR_OK)
		return false;
	flash_read(f, p, VIDOFF, b, 64);
	for (int i = 0; i < 64; i++)
		if (b[i] != 0xFF)
			return false;
	return true;
}

static uint32_t free_peb(struct flash_dev *f, uint32_t after)
{
	for (uint32_t p = after; p < f->geo.peb_count; p++)
		if (peb_free(f, p))
			return p;
	fail_msg("no free PEB");
	return 0;
}

/* PEB holding (vol, lnum), or UINT32_MAX. */
static uint32_t find_leb(struct flash_dev *f, uint32_t vol, uint32_t lnum)
{
	for (uint32_t p = 0; p < f->geo.peb_count; p++) {
		uint8_t b[64];
		struct ubi_vid_hdr h;
		if (flash_read(f, p, VIDOFF, b, 64))
			continue;
		if (ubi_vid_hdr_unpack(b, &h) == UBI_HDR_OK && h.vol_id == vol && h.lnum == lnum)
			return p;
	}
	return UINT32_MAX;
}

/* Erase p and write: EC header (or raw bytes), VID header (or raw), data. */
static void craft(struct env *e, uint32_t p, const uint8_t *ec_raw, const struct ubi_vid_hdr *vh,
		  const uint8_t *vid_raw, const uint8_t *data, size_t len)
{
	assert_int_equal(flash_erase(e->f, p), 0);
	uint8_t unit[256];
	memset(unit, 0, sizeof(unit));
	if (ec_raw) {
		memcpy(unit, ec_raw, 64);
	} else {
		struct ubi_ec_hdr eh = {.ec = 5, .vid_hdr_offset = VIDOFF, .data_offset = DOFF,
					.image_seq = e->image_seq};
		ubi_ec_hdr_pack(&eh, unit);
	}
	assert_int_equal(flash_write(e->f, p, 0, unit, 256), 0);
	if (vh || vid_raw) {
		memset(unit, 0, sizeof(unit));
		if (vh)
			ubi_vid_hdr_pack(vh, unit);
		else
			memcpy(unit, vid_raw, 64);
		assert_int_equal(flash_write(e->f, p, VIDOFF, unit, 256), 0);
	}
	if (len) {
		size_t al = (len + 511) / 512 * 512;
		uint8_t *b = malloc(al);
		memset(b, 0xFF, al);
		memcpy(b, data, len);
		assert_int_equal(flash_write(e->f, p, DOFF, b, al), 0);
		free(b);
	}
}

static struct ubi_vid_hdr vid(uint32_t vol, uint32_t lnum, uint64_t sqnum)
{
	struct ubi_vid_hdr h = {.vol_type = UBI_VID_DYNAMIC, .vol_id = vol, .lnum = lnum, .sqnum = sqnum};
	if (vol == UBI_LAYOUT_VOLUME_ID)
		h.compat = UBI_COMPAT_REJECT;
	return h;
}

static int try_attach(struct env *e, struct ubi_device **u, char *msg)
{
	return ubi_attach_msg(e->f, NULL, u, msg, 512);
}

static void expect_leb(struct ubi_device *u, uint32_t vol, uint32_t lnum, const uint8_t *want, size_t n)
{
	uint8_t *b = malloc(n);
	T_OK(u, ubi_leb_read(u, vol, lnum, 0, b, n));
	assert_memory_equal(b, want, n);
	free(b);
}

static void test_corrupt_ec_valid_vid(void **state)
{
	(void)state;
	struct env e;
	setup(&e, NP);
	static uint8_t d[L];
	t_fill(d, L, 555);
	uint8_t garbage[64];
	memset(garbage, 0x12, 64);
	uint32_t p = free_peb(e.f, 0);
	struct ubi_vid_hdr h = vid(e.vol, 4, 1000);
	craft(&e, p, garbage, &h, NULL, d, L);
	struct ubi_device *u = t_attach(e.f);
	expect_leb(u, e.vol, 4, d, L);
	struct ubi_dev_info di;
	ubi_dev_info(u, &di);
	assert_int_equal(di.scrub_pending, 1);
	T_OK(u, ubi_flush_background(u));
	ubi_dev_info(u, &di);
	assert_int_equal(di.scrub_pending, 0);
	u = t_reattach(u, e.f);
	expect_leb(u, e.vol, 4, d, L);
	/* the LEB moved to a PEB with a good EC header; the old one got one too */
	uint32_t q = find_leb(e.f, e.vol, 4);
	assert_int_not_equal(q, p);
	uint8_t b[64];
	struct ubi_ec_hdr eh;
	flash_read(e.f, p, 0, b, 64);
	assert_int_equal(ubi_ec_hdr_unpack(b, &eh), UBI_HDR_OK);
	ubi_detach(u);
	flash_close(e.f);
}

static void test_corrupt_vid(void **state)
{
	(void)state;
	struct env e;
	setup(&e, 64); /* max_corr = 3: one corrupted PEB is accepted */
	uint8_t garbage[64];
	memset(garbage, 0x33, 64);
	static uint8_t d[L];
	t_fill(d, L, 1);
	uint32_t p1 = free_peb(e.f, 0);
	craft(&e, p1, NULL, NULL, garbage, d, 4096); /* data present: preserved */
	uint32_t p2 = free_peb(e.f, p1 + 1);
	craft(&e, p2, NULL, NULL, garbage, NULL, 0); /* no data: power-cut victim */
	struct ubi_device *u = t_attach(e.f);
	struct ubi_dev_info di;
	ubi_dev_info(u, &di);
	assert_int_equal(di.corrupt_pebs, 1);
	assert_int_equal(di.erase_pending, 1);
	T_OK(u, ubi_flush_background(u));
	ubi_detach(u);
	/* p1 untouched, p2 free again */
	uint8_t b[4096];
	flash_read(e.f, p1, DOFF, b, 4096);
	assert_memory_equal(b, d, 4096);
	assert_true(peb_free(e.f, p2));
	flash_close(e.f);
}

static void test_too_many_corrupt(void **state)
{
	(void)state;
	struct env e;
	setup(&e, 64); /* max_corr = 64/20 = 3 */
	uint8_t garbage[64];
	memset(garbage, 0x33, 64);
	uint8_t d[512];
	memset(d, 0, sizeof(d));
	uint32_t p = 0;
	for (int i = 0; i < 2; i++) {
		p = free_peb(e.f, p);
		craft(&e, p, NULL, NULL, garbage, d, 512);
		p++;
	}
	struct ubi_device *u;
	char msg[512];
	assert_int_equal(try_attach(&e, &u, msg), 0);
	ubi_detach(u);
	p = free_peb(e.f, p);
	craft(&e, p, NULL, NULL, garbage, d, 512);
	assert_int_equal(try_attach(&e, &u, msg), -EINVAL);
	assert_non_null(strstr(msg, "corrupted"));
	flash_close(e.f);
}

static void test_duplicates(void **state)
{
	(void)state;
	struct env e;
	setup(&e, NP);
	static uint8_t old[L], nw[L];
	t_fill(old, L, 100); /* LEB 0 content from setup */
	t_fill(nw, L, 900);
	uint32_t orig = find_leb(e.f, e.vol, 0);
	assert_int_not_equal(orig, UINT32_MAX);

	/* (a) newer, copy_flag 0 -> newer wins, older erased */
	uint32_t p = free_peb(e.f, 0);
	struct ubi_vid_hdr h = vid(e.vol, 0, 5000);
	craft(&e, p, NULL, &h, NULL, nw, L);
	struct ubi_device *u = t_attach(e.f);
	expect_leb(u, e.vol, 0, nw, L);
	T_OK(u, ubi_flush_background(u));
	ubi_detach(u);
	assert_true(peb_free(e.f, orig));

	/* (b) newer copy with a good data CRC wins */
	p = free_peb(e.f, 0);
	h = vid(e.vol, 0, 6000);
	h.copy_flag = 1;
	h.data_size = 4096;
	h.data_crc = util_crc32(UTIL_CRC32_INIT, old, 4096);
	craft(&e, p, NULL, &h, NULL, old, 4096);
	u = t_attach(e.f);
	static uint8_t exp[L];
	memset(exp, 0xFF, L);
	memcpy(exp, old, 4096);
	expect_leb(u, e.vol, 0, exp, L);
	T_OK(u, ubi_flush_background(u));
	ubi_detach(u);

	/* (c) newer copy with a bad data CRC (torn) loses */
	p = free_peb(e.f, 0);
	h = vid(e.vol, 0, 7000);
	h.copy_flag = 1;
	h.data_size = 4096;
	h.data_crc = util_crc32(UTIL_CRC32_INIT, nw, 4096) ^ 1;
	craft(&e, p, NULL, &h, NULL, nw, 4096);
	u = t_attach(e.f);
	expect_leb(u, e.vol, 0, exp, L);
	struct ubi_dev_info di;
	ubi_dev_info(u, &di);
	assert_int_equal(di.erase_pending, 1);
	assert_int_equal(di.next_sqnum, 7001); /* sqnum counts every header seen */
	T_OK(u, ubi_flush_background(u));
	ubi_detach(u);
	assert_true(peb_free(e.f, p));

	/* (d) same sqnum twice -> refused, naming both PEBs */
	uint32_t cur = find_leb(e.f, e.vol, 0);
	p = free_peb(e.f, 0);
	h = vid(e.vol, 0, 6000);
	craft(&e, p, NULL, &h, NULL, nw, 512);
	char msg[512];
	assert_int_equal(try_attach(&e, &u, msg), -EINVAL);
	assert_non_null(strstr(msg, "sequence number 6000"));
	char pebs[64];
	snprintf(pebs, sizeof(pebs), "PEB %u", cur < p ? cur : p);
	assert_non_null(strstr(msg, pebs));
	flash_close(e.f);
}

static void test_image_seq_and_ec_checks(void **state)
{
	(void)state;
	struct env e;
	setup(&e, NP);
	uint32_t p = free_peb(e.f, 0);
	uint8_t ec[64];
	struct ubi_ec_hdr eh = {.ec = 1, .vid_hdr_offset = VIDOFF, .data_offset = DOFF, .image_seq = e.image_seq + 1};
	ubi_ec_hdr_pack(&eh, ec);
	craft(&e, p, ec, NULL, NULL, NULL, 0);
	struct ubi_device *u;
	char msg[512];
	assert_int_equal(try_attach(&e, &u, msg), -EINVAL);
	assert_non_null(strstr(msg, "image sequence"));
	assert_non_null(strstr(msg, ":24: bad image sequence number")); /* PEB:offset named */
	/* image_seq 0 is tolerated */
	eh.image_seq = 0;
	ubi_ec_hdr_pack(&eh, ec);
	craft(&e, p, ec, NULL, NULL, NULL, 0);
	assert_int_equal(try_attach(&e, &u, msg), 0);
	ubi_detach(u);
	/* wrong VID header offset in an EC header */
	eh.image_seq = e.image_seq;
	eh.vid_hdr_offset = 512;
	ubi_ec_hdr_pack(&eh, ec);
	craft(&e, p, ec, NULL, NULL, NULL, 0);
	assert_int_equal(try_attach(&e, &u, msg), -EINVAL);
	assert_non_null(strstr(msg, "VID header offset 512, expected 256"));
	/* wrong version */
	eh.vid_hdr_offset = VIDOFF;
	eh.version = 2;
	ubi_ec_hdr_pack(&eh, ec);
	craft(&e, p, ec, NULL, NULL, NULL, 0);
	assert_int_equal(try_attach(&e, &u, msg), -EINVAL);
	assert_non_null(strstr(msg, "version"));
	/* invalid VID header (CRC good, fields bad) */
	struct ubi_vid_hdr h = vid(e.vol, 1, 9999);
	h.vol_type = 7;
	craft(&e, p, NULL, &h, NULL, NULL, 0);
	assert_int_equal(try_attach(&e, &u, msg), -EINVAL);
	assert_non_null(strstr(msg, "bad VID header"));
	flash_close(e.f);
}

/* Write a table copy with record 0 damaged as a new layout LEB. */
static void damage_vtbl_copy(struct env *e, uint32_t copy, uint64_t sqnum)
{
	struct ubi_attach_opts o;
	ubi_attach_opts_default(&o);
	o.read_only = true; /* no repair of an earlier damage */
	struct ubi_device *u = t_attach_opts(e->f, &o);
	static uint8_t t[16384];
	uint32_t size = 92 * 172;
	T_OK(u, ubi_leb_read(u, UBI_LAYOUT_VOLUME_ID, copy, 0, t, size));
	ubi_detach(u);
	t[20] ^= 0x40; /* name byte of record 0: CRC now wrong */
	uint32_t p = free_peb(e->f, 0);
	struct ubi_vid_hdr h = vid(UBI_LAYOUT_VOLUME_ID, copy, sqnum);
	craft(e, p, NULL, &h, NULL, t, size);
}

static void test_vtbl_repair(void **state)
{
	(void)state;
	for (uint32_t copy = 0; copy < 2; copy++) {
		struct env e;
		setup(&e, NP);
		damage_vtbl_copy(&e, copy, 100000);
		/* read-only attach works but does not repair */
		struct ubi_attach_opts o;
		ubi_attach_opts_default(&o);
		o.read_only = true;
		struct ubi_device *u = t_attach_opts(e.f, &o);
		assert_int_equal(ubi_vol_find(u, "v"), (int)e.vol);
		ubi_detach(u);
		u = t_attach(e.f);
		assert_int_equal(ubi_vol_find(u, "v"), (int)e.vol);
		T_OK(u, ubi_flush_background(u));
		static uint8_t a[16384], b[16384];
		T_OK(u, ubi_leb_read(u, UBI_LAYOUT_VOLUME_ID, 0, 0, a, 92 * 172));
		T_OK(u, ubi_leb_read(u, UBI_LAYOUT_VOLUME_ID, 1, 0, b, 92 * 172));
		assert_memory_equal(a, b, 92 * 172);
		ubi_detach(u);
		u = t_attach(e.f);
		assert_int_equal(ubi_vol_find(u, "v"), (int)e.vol);
		ubi_detach(u);
		flash_close(e.f);
	}
	/* both damaged: refused with a clear message */
	struct env e;
	setup(&e, NP);
	damage_vtbl_copy(&e, 0, 100000);
	struct ubi_attach_opts o;
	ubi_attach_opts_default(&o);
	o.read_only = true; /* do not repair between the two damages */
	damage_vtbl_copy(&e, 1, 100001);
	struct ubi_device *u;
	char msg[512];
	assert_int_equal(ubi_attach_msg(e.f, &o, &u, msg, sizeof(msg)), -EINVAL);
	assert_non_null(strstr(msg, "both volume table copies are corrupted"));
	assert_non_null(strstr(msg, "record 0"));
	flash_close(e.f);
}

static void test_internal_volumes(void **state)
{
	(void)state;
	struct env e;
	setup(&e, NP);
	uint32_t p = free_peb(e.f, 0);
	struct ubi_vid_hdr h = vid(UBI_FM_SB_VOLUME_ID, 0, 50);
	h.compat = UBI_COMPAT_DELETE;
	craft(&e, p, NULL, &h, NULL, NULL, 0);
	struct ubi_device *u = t_attach(e.f);
	assert_true(peb_free(e.f, p)); /* fastmap anchor erased during attach, before any write */
	ubi_detach(u);

	h = vid(0x7FFFF0AA, 0, 51);
	h.compat = UBI_COMPAT_PRESERVE;
	craft(&e, p, NULL, &h, NULL, NULL, 0);
	u = t_attach(e.f);
	struct ubi_dev_info di;
	ubi_dev_info(u, &di);
	assert_int_equal(di.alien_pebs, 1);
	T_OK(u, ubi_flush_background(u));
	ubi_detach(u);
	assert_false(peb_free(e.f, p));

	h.compat = UBI_COMPAT_RO;
	craft(&e, p, NULL, &h, NULL, NULL, 0);
	u = t_attach(e.f);
	ubi_dev_info(u, &di);
	assert_true(di.read_only);
	ubi_detach(u);

	h.compat = UBI_COMPAT_REJECT;
	craft(&e, p, NULL, &h, NULL, NULL, 0);
	char msg[512];
	assert_int_equal(try_attach(&e, &u, msg), -EINVAL);
	assert_non_null(strstr(msg, "incompatible internal volume"));

	/* a user volume without a record: its PEB is erased */
	h = vid(40, 0, 52);
	craft(&e, p, NULL, &h, NULL, NULL, 0);
	u = t_attach(e.f);
	T_OK(u, ubi_flush_background(u));
	ubi_detach(u);
	assert_true(peb_free(e.f, p));
	flash_close(e.f);
}

static void test_no_layout_and_bad_blocks(void **state)
{
	(void)state;
	struct env e;
	setup(&e, NP);
	/* factory bad block on a free PEB */
	uint32_t p = free_peb(e.f, 0);
	assert_int_equal(flash_sim_set_factory_bad(e.f, p), 0);
	struct ubi_device *u = t_attach(e.f);
	struct ubi_dev_info di;
	ubi_dev_info(u, &di);
	assert_int_equal(di.bad_pebs, 1);
	assert_int_equal(di.good_pebs, NP - 1);
	ubi_detach(u);
	/* remove both layout LEBs: non-empty flash without a table is refused */
	for (uint32_t l = 0; l < 2; l++) {
		uint32_t q;
		while ((q = find_leb(e.f, UBI_LAYOUT_VOLUME_ID, l)) != UINT32_MAX)
			assert_int_equal(flash_erase(e.f, q), 0);
	}
	char msg[512];
	assert_int_equal(try_attach(&e, &u, msg), -EINVAL);
	assert_non_null(strstr(msg, "layout volume"));
	flash_close(e.f);
}

static void test_static_missing_leb(void **state)
{
	(void)state;
	struct flash_dev *f = t_nand(NP, 3);
	struct ubi_device *u = t_attach(f);
	uint32_t v = t_mkvol(u, "s", 4, UBI_VID_STATIC);
	static uint8_t d[3 * L];
	t_fill(d, sizeof(d), 4);
	T_OK(u, ubi_vol_update(u, v, d, 2 * L + 10));
	ubi_detach(u);
	uint32_t q = find_leb(f, v, 1);
	assert_int_equal(flash_erase(f, q), 0);
	u = t_attach(f);
	struct ubi_vol_info vi;
	T_OK(u, ubi_vol_info(u, v, &vi));
	assert_true(vi.corrupted);
	assert_int_equal(ubi_vol_check(u, v), -EBADMSG);
	ubi_detach(u);
	flash_close(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_corrupt_ec_valid_vid), cmocka_unit_test(test_corrupt_vid),
		cmocka_unit_test(test_too_many_corrupt),     cmocka_unit_test(test_duplicates),
		cmocka_unit_test(test_image_seq_and_ec_checks), cmocka_unit_test(test_vtbl_repair),
		cmocka_unit_test(test_internal_volumes),     cmocka_unit_test(test_no_layout_and_bad_blocks),
		cmocka_unit_test(test_static_missing_leb),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
