/* test_ubi_readerr — UBI read paths under damage that the other suites do
 * not reach (issue 13, item 6), judged by the data written and the kernel's
 * rules (drivers/mtd/ubi: eba.c, wl.c, attach.c), never by our own output:
 *  - checked reads of static volumes: a bad VID header, a VID header whose
 *    data_size is shorter than the read, a read past the volume's data, and
 *    correctable flips (data right, PEB scrubbed);
 *  - VID-header bit flips at attach: correctable (LEB kept, PEB scrubbed),
 *    uncorrectable with data behind (a corrupted PEB: kept, not used);
 *  - a read that fails once (a transient ECC failure) is tried again and
 *    gives the data (Linux ubi_io_read: UBI_IO_RETRIES more tries; found
 *    by `ubikit torture bitflip`, which could not even format a device);
 *  - a scrub whose target reads back wrong: the target, a whole copy with
 *    a newer sqnum, is erased at once (Linux do_sync_erase), so a power
 *    cut cannot bring the stale copy back over later writes (found by
 *    `ubikit torture bitflip`: a master node written after such a move
 *    was lost, the file system unmountable);
 *  - scrub and wear-leveling moves whose source read is uncorrectable: the
 *    data stays where it is (other pages still read), the target goes back
 *    to the free pool, the PEB is never picked again, and more such PEBs
 *    than max_erroneous switch the device to read-only.
 * Damage comes from the simulator's fault injection or from rewriting the
 * file-backed image behind UBI's back (headers packed with their CRC). */
#include "ubi_test.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ubi/ubi_media.h"
#include "util/util_crc.h"

#define WORK UBIKIT_BUILD_DIR "/ubi-readerr"

enum { L = 15872, PG = 512 };

static uint32_t find_leb(struct flash_dev *f, uint32_t vol, uint32_t lnum, uint32_t vid_off)
{
	uint32_t best = UINT32_MAX;
	uint64_t bsq = 0;
	for (uint32_t p = 0; p < f->geo.peb_count; p++) {
		uint8_t b[64];
		struct ubi_vid_hdr h;
		if (flash_read(f, p, vid_off, b, 64) < 0)
			continue;
		if (ubi_vid_hdr_unpack(b, &h) == UBI_HDR_OK && h.vol_id == vol && h.lnum == lnum &&
		    (best == UINT32_MAX || h.sqnum > bsq)) {
			best = p;
			bsq = h.sqnum;
		}
	}
	return best;
}

/* File-backed NAND of t_nand's geometry but without sub-pages: the VID
 * header has a page of its own (page 1, offset 512), data from page 2. */
static struct flash_dev *t_file_nand(const char *path, uint32_t pebs, bool subpages)
{
	struct flash_sim_config c;
	flash_sim_config_default(&c);
	c.geo.page_size = PG;
	c.geo.subpage_size = subpages ? 256 : PG;
	c.geo.oob_size = 16;
	c.geo.peb_size = 16384;
	c.geo.peb_count = pebs;
	c.seed = 7;
	c.path = path;
	unlink(path);
	char side[512];
	snprintf(side, sizeof(side), "%s.sim", path);
	unlink(side);
	struct flash_dev *d = NULL;
	assert_int_equal(flash_sim_create(&c, &d), 0);
	return d;
}

static struct flash_dev *t_reopen(const char *path)
{
	struct flash_dev *d = NULL;
	assert_int_equal(flash_sim_open(path, NULL, false, false, &d), 0);
	return d;
}

/* Rewrite the VID header of PEB p in the image file (CRC recomputed by
 * ubi_vid_hdr_pack); edit() changes the parsed header. */
static void rewrite_vid(const char *path, uint32_t p, uint32_t vid_off, void (*edit)(struct ubi_vid_hdr *, void *),
			void *arg)
{
	int fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	uint8_t b[UBI_HDR_SIZE];
	off_t at = (off_t)p * 16384 + vid_off;
	assert_int_equal(pread(fd, b, sizeof(b), at), sizeof(b));
	struct ubi_vid_hdr h;
	assert_int_equal(ubi_vid_hdr_unpack(b, &h), UBI_HDR_OK);
	edit(&h, arg);
	ubi_vid_hdr_pack(&h, b);
	assert_int_equal(pwrite(fd, b, sizeof(b), at), sizeof(b));
	close(fd);
}

static void smash_bytes(const char *path, uint64_t at, size_t n)
{
	int fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	uint8_t z[64];
	memset(z, 0x5A, sizeof(z));
	assert_int_equal(pwrite(fd, z, n, (off_t)at), (ssize_t)n);
	close(fd);
}

static void edit_data_size(struct ubi_vid_hdr *h, void *arg)
{
	/* a shorter data_size with the CRC of that shorter data */
	const uint8_t *data = arg;
	h->data_size = 100;
	h->data_crc = util_crc32(UTIL_CRC32_INIT, data, 100);
}

static void edit_data_size_nonlast(struct ubi_vid_hdr *h, void *arg)
{
	const uint8_t *data = arg;
	if (h->data_size == 100) { /* undo */
		h->data_size = L;
		h->data_crc = util_crc32(UTIL_CRC32_INIT, data, L);
		return;
	}
	h->data_size = 100;
	h->data_crc = util_crc32(UTIL_CRC32_INIT, data, 100);
}

static void t_read_retry(void **state)
{
	(void)state;
	struct flash_dev *f = t_nand(24, 3);
	struct ubi_device *u = t_attach(f);
	struct ubi_dev_info di;
	ubi_dev_info(u, &di);
	uint32_t v = t_mkvol(u, "d", 4, UBI_VID_DYNAMIC);
	static uint8_t a[L], b[L];
	t_fill(a, sizeof(a), 5);
	T_OK(u, ubi_leb_write(u, v, 1, 0, a, L));
	uint32_t p = find_leb(f, v, 1, di.vid_hdr_offset);
	/* one uncorrectable read of the data's second page, then good again */
	uint32_t page = di.data_offset / di.min_io_size + 1;
	assert_int_equal(flash_sim_inject_bitflip(f, p, page, true, false), 0);
	T_OK(u, ubi_leb_read(u, v, 1, 0, b, L));
	assert_memory_equal(b, a, L);
	struct ubi_stats st;
	ubi_get_stats(u, &st);
	assert_int_equal(st.read_retries, 1);
	/* a lasting failure is still one after the retries */
	assert_int_equal(flash_sim_inject_bitflip(f, p, page, true, true), 0);
	assert_int_equal(ubi_leb_read(u, v, 1, 0, b, L), -EBADMSG);
	ubi_get_stats(u, &st);
	assert_int_equal(st.read_retries, 1 + 3);
	ubi_detach(u);
	flash_close(f);
}

static unsigned count_copies(struct flash_dev *f, uint32_t vol, uint32_t lnum, uint32_t vid_off)
{
	unsigned n = 0;
	for (uint32_t p = 0; p < f->geo.peb_count; p++) {
		uint8_t b[64];
		struct ubi_vid_hdr h;
		if (flash_read(f, p, vid_off, b, 64) >= 0 && ubi_vid_hdr_unpack(b, &h) == UBI_HDR_OK &&
		    h.vol_id == vol && h.lnum == lnum)
			n++;
	}
	return n;
}

static void t_failed_move_target_erased(void **state)
{
	(void)state;
	struct flash_dev *f = t_nand(24, 4);
	struct ubi_device *u = t_attach(f);
	struct ubi_dev_info di;
	ubi_dev_info(u, &di);
	uint32_t v = t_mkvol(u, "d", 4, UBI_VID_DYNAMIC);
	static uint8_t a[L], b[L];
	t_fill(a, sizeof(a), 6);
	T_OK(u, ubi_leb_write(u, v, 0, 0, a, 4 * PG));
	T_OK(u, ubi_flush_background(u));
	uint32_t p = find_leb(f, v, 0, di.vid_hdr_offset);
	/* a corrected flip: LEB 0 is to be scrubbed */
	uint32_t data_page = di.data_offset / PG;
	assert_int_equal(flash_sim_inject_bitflip(f, p, data_page, false, false), 0);
	T_OK(u, ubi_leb_read(u, v, 0, 0, b, PG));
	ubi_dev_info(u, &di);
	assert_int_equal(di.scrub_pending, 1);
	/* every possible target reads back uncorrectably */
	for (uint32_t q = 0; q < f->geo.peb_count; q++) {
		uint8_t vh[64];
		int free_peb = flash_read(f, q, di.vid_hdr_offset, vh, sizeof(vh)) == 0;
		for (size_t i = 0; i < sizeof(vh) && free_peb; i++)
			free_peb = vh[i] == 0xFF;
		if (free_peb) /* no VID header: a free PEB, a possible target */
			assert_int_equal(flash_sim_inject_bitflip(f, q, data_page, true, true), 0);
	}
	struct ubi_stats st = {0};
	for (int k = 0; k < 3 && !st.scrubs; k++) {
		assert_true(ubi_background_step(u) >= 0);
		ubi_get_stats(u, &st);
		/* until a move succeeds, one PEB has LEB 0: a failed move's
		 * target is erased (and tortured) at once */
		if (!st.scrubs)
			assert_int_equal(count_copies(f, v, 0, di.vid_hdr_offset), 1);
	}
	assert_true(st.torture_tests >= 1);
	/* a write after the failed move, then a "power cut" (no detach):
	 * attach finds the write */
	T_OK(u, ubi_leb_write(u, v, 0, 4 * PG, a + 4 * PG, PG));
	flash_sim_power_cut_after(f, 1);
	ubi_leb_write(u, v, 1, 0, a, PG); /* the cut */
	assert_true(flash_sim_is_cut(f));
	ubi_detach(u);
	assert_int_equal(flash_sim_reopen(f), 0);
	u = t_attach(f);
	T_OK(u, ubi_leb_read(u, v, 0, 0, b, 5 * PG));
	assert_memory_equal(b, a, 5 * PG);
	ubi_detach(u);
	flash_close(f);
}

static void test_static_checked_reads(void **state)
{
	(void)state;
	const char *img = WORK "/static.img";
	struct flash_dev *f = t_file_nand(img, 24, true);
	struct ubi_device *u = t_attach(f);
	struct ubi_dev_info di;
	ubi_dev_info(u, &di);
	assert_int_equal(di.leb_size, L);
	uint32_t v = t_mkvol(u, "s", 4, UBI_VID_STATIC);
	static uint8_t a[3 * L], b[L];
	const size_t len = 2 * L + 1000;
	/* empty static volume: reads give erased bytes (kernel: unmapped LEB) */
	memset(b, 0, 64);
	T_OK(u, ubi_leb_read(u, v, 0, 0, b, 64));
	for (int i = 0; i < 64; i++)
		assert_int_equal(b[i], 0xFF);
	t_fill(a, sizeof(a), 21);
	T_OK(u, ubi_vol_update(u, v, a, len));
	/* whole LEBs and the partial last one read back */
	T_OK(u, ubi_leb_read(u, v, 0, 0, b, L));
	assert_memory_equal(b, a, L);
	T_OK(u, ubi_leb_read(u, v, 2, 0, b, 1000));
	assert_memory_equal(b, a + 2 * L, 1000);
	T_OK(u, ubi_leb_read(u, v, 1, 300, b, 700));
	assert_memory_equal(b, a + L + 300, 700);
	/* past the data: the kernel's leb_read_sanity_check says -EINVAL */
	assert_int_equal(ubi_leb_read(u, v, 2, 0, b, 1001), -EINVAL);
	assert_int_equal(ubi_leb_read(u, v, 2, 999, b, 2), -EINVAL);
	assert_int_equal(ubi_leb_read(u, v, 3, 0, b, 1), -EINVAL);
	T_OK(u, ubi_vol_check(u, v));

	/* correctable flip in LEB 1's data: right data, PEB scrubbed */
	uint32_t p1 = find_leb(f, v, 1, di.vid_hdr_offset);
	assert_int_equal(flash_sim_inject_bitflip(f, p1, 9, false, true), 0);
	T_OK(u, ubi_leb_read(u, v, 1, 0, b, 16));
	assert_memory_equal(b, a + L, 16);
	ubi_dev_info(u, &di);
	assert_int_equal(di.scrub_pending, 1);
	T_OK(u, ubi_flush_background(u));
	struct ubi_stats st;
	ubi_get_stats(u, &st);
	assert_int_equal(st.scrubs, 1);
	assert_int_not_equal(find_leb(f, v, 1, di.vid_hdr_offset), p1);
	T_OK(u, ubi_leb_read(u, v, 1, 0, b, L));
	assert_memory_equal(b, a + L, L);

	/* uncorrectable data: the CRC check fails, -EBADMSG, never other bytes */
	uint32_t p0 = find_leb(f, v, 0, di.vid_hdr_offset);
	assert_int_equal(flash_sim_inject_bitflip(f, p0, 20, true, true), 0);
	memset(b, 0, sizeof(b));
	assert_int_equal(ubi_leb_read(u, v, 0, 0, b, 64), -EBADMSG);
	assert_non_null(strstr(ubi_errmsg(u), "data CRC"));
	assert_int_equal(ubi_vol_check(u, v), -EBADMSG);
	/* LEB 2's header page (EC + VID) flips correctably: data right, and
	 * the PEB is scrubbed */
	uint32_t p2 = find_leb(f, v, 2, di.vid_hdr_offset);
	assert_int_equal(flash_sim_inject_bitflip(f, p2, 0, false, false), 0);
	T_OK(u, ubi_leb_read(u, v, 2, 0, b, 1000));
	assert_memory_equal(b, a + 2 * L, 1000);
	ubi_dev_info(u, &di);
	assert_int_equal(di.scrub_pending, 1);
	/* ... and becomes unreadable: the header is not trusted, -EBADMSG
	 * (kernel ubi_eba_read_leb: corrupted VID header) */
	assert_int_equal(flash_sim_inject_bitflip(f, p2, 0, true, true), 0);
	assert_int_equal(ubi_leb_read(u, v, 2, 0, b, 1000), -EBADMSG);
	assert_non_null(strstr(ubi_errmsg(u), "corrupted VID header"));
	ubi_detach(u);
	flash_close(f);

	/* a fresh image: damage behind UBI's back, then attach */
	f = t_file_nand(img, 40, true);
	u = t_attach(f);
	ubi_dev_info(u, &di);
	v = t_mkvol(u, "s", 4, UBI_VID_STATIC);
	T_OK(u, ubi_vol_update(u, v, a, len));
	p0 = find_leb(f, v, 0, di.vid_hdr_offset);
	p1 = find_leb(f, v, 1, di.vid_hdr_offset);
	p2 = find_leb(f, v, 2, di.vid_hdr_offset);
	ubi_detach(u);
	flash_close(f);
	/* a non-last LEB that is not full: the kernel's validate_vid_hdr
	 * rejects the header, and so the attach */
	rewrite_vid(img, p0, di.vid_hdr_offset, edit_data_size_nonlast, a);
	f = t_reopen(img);
	struct ubi_attach_opts o;
	ubi_attach_opts_default(&o);
	o.read_only = true;
	char msg[256];
	assert_int_equal(ubi_attach_msg(f, &o, &u, msg, sizeof(msg)), -EINVAL);
	assert_non_null(strstr(msg, "non-last LEB not full"));
	flash_close(f);
	/* the last LEB says data_size 100 (CRC of those 100 bytes): the
	 * volume's data ends there (kernel init_volumes: last_data_size from
	 * the VID header); LEB 1's header CRC broken */
	rewrite_vid(img, p0, di.vid_hdr_offset, edit_data_size_nonlast, a); /* undo: full again */
	rewrite_vid(img, p2, di.vid_hdr_offset, edit_data_size, a + 2 * L);
	f = t_reopen(img);
	u = t_attach_opts(f, &o);
	struct ubi_vol_info vi;
	T_OK(u, ubi_vol_info(u, v, &vi));
	assert_int_equal(vi.used_bytes, 2 * L + 100);
	assert_int_equal(vi.last_eb_bytes, 100);
	T_OK(u, ubi_leb_read(u, v, 2, 0, b, 100));
	assert_memory_equal(b, a + 2 * L, 100);
	assert_int_equal(ubi_leb_read(u, v, 2, 0, b, 101), -EINVAL);
	assert_int_equal(ubi_leb_read(u, v, 2, 50, b, 51), -EINVAL);
	T_OK(u, ubi_leb_read(u, v, 0, 0, b, L));
	assert_memory_equal(b, a, L);
	T_OK(u, ubi_vol_check(u, v));
	ubi_detach(u);
	flash_close(f);
	/* LEB 1's header CRC broken: attach cannot map it (kernel: a
	 * corrupted PEB, preserved); the static volume misses that LEB */
	smash_bytes(img, (uint64_t)p1 * 16384 + di.vid_hdr_offset + 8, 4);
	f = t_reopen(img);
	u = t_attach_opts(f, &o);
	T_OK(u, ubi_vol_info(u, v, &vi));
	assert_true(vi.corrupted);
	assert_int_equal(ubi_leb_read(u, v, 1, 0, b, 16), -EBADMSG);
	assert_int_equal(ubi_vol_check(u, v), -EBADMSG);
	ubi_detach(u);
	flash_close(f);
}

static void test_vid_flips_at_attach(void **state)
{
	(void)state;
	const char *img = WORK "/vidflip.img";
	struct flash_dev *f = t_file_nand(img, 40, false);
	struct ubi_device *u = t_attach(f);
	struct ubi_dev_info di;
	ubi_dev_info(u, &di);
	assert_int_equal(di.vid_hdr_offset, PG); /* its own page */
	uint32_t vid_page = di.vid_hdr_offset / PG;
	uint32_t v = t_mkvol(u, "d", 6, UBI_VID_DYNAMIC);
	static uint8_t a[4][L], b[L];
	for (int i = 0; i < 4; i++) {
		t_fill(a[i], L - PG, 30 + i);
		T_OK(u, ubi_leb_write(u, v, i, 0, a[i], L - PG));
	}
	uint32_t p0 = find_leb(f, v, 0, di.vid_hdr_offset);
	uint32_t p1 = find_leb(f, v, 1, di.vid_hdr_offset);
	ubi_detach(u);
	/* correctable flip on LEB 0's VID header page, uncorrectable on LEB 1's */
	assert_int_equal(flash_sim_inject_bitflip(f, p0, vid_page, false, true), 0);
	assert_int_equal(flash_sim_inject_bitflip(f, p1, vid_page, true, true), 0);
	u = t_attach(f);
	ubi_dev_info(u, &di);
	/* kernel scan_peb: BITFLIPS -> used and scrubbed; BAD_HDR_EBADMSG with a
	 * good EC header and data behind -> corrupted, preserved, LEB unmapped */
	assert_int_equal(di.scrub_pending, 1);
	assert_int_equal(di.corrupt_pebs, 1);
	assert_int_equal(ubi_leb_is_mapped(u, v, 0), 1);
	assert_int_equal(ubi_leb_is_mapped(u, v, 1), 0);
	T_OK(u, ubi_leb_read(u, v, 0, 0, b, L - PG));
	assert_memory_equal(b, a[0], L - PG);
	memset(b, 0, L);
	T_OK(u, ubi_leb_read(u, v, 1, 0, b, 64)); /* unmapped: erased bytes */
	for (int i = 0; i < 64; i++)
		assert_int_equal(b[i], 0xFF);
	T_OK(u, ubi_flush_background(u));
	struct ubi_stats st;
	ubi_get_stats(u, &st);
	assert_int_equal(st.scrubs, 1);
	uint32_t np0 = find_leb(f, v, 0, di.vid_hdr_offset);
	assert_int_not_equal(np0, p0);
	/* the corrupted PEB is neither erased nor reused */
	assert_int_equal(flash_sim_peb_is_erased(f, p1), 0);
	for (int i = 2; i < 4; i++) {
		T_OK(u, ubi_leb_read(u, v, i, 0, b, L - PG));
		assert_memory_equal(b, a[i], L - PG);
	}
	u = t_reattach(u, f);
	ubi_dev_info(u, &di);
	assert_int_equal(di.scrub_pending, 0);
	assert_int_equal(di.corrupt_pebs, 1);
	T_OK(u, ubi_leb_read(u, v, 0, 0, b, L - PG));
	assert_memory_equal(b, a[0], L - PG);
	ubi_detach(u);
	flash_close(f);

	/* kernel late_analysis: max_corr = peb_count / 20 (8 if that is 0);
	 * on 24 PEBs one corrupted PEB is already too many */
	f = t_file_nand(img, 24, false);
	u = t_attach(f);
	v = t_mkvol(u, "d", 6, UBI_VID_DYNAMIC);
	T_OK(u, ubi_leb_write(u, v, 0, 0, a[0], L - PG));
	p1 = find_leb(f, v, 0, di.vid_hdr_offset);
	ubi_detach(u);
	assert_int_equal(flash_sim_inject_bitflip(f, p1, vid_page, true, true), 0);
	char msg[256];
	assert_int_equal(ubi_attach_msg(f, NULL, &u, msg, sizeof(msg)), -EINVAL);
	assert_non_null(strstr(msg, "corrupted"));
	flash_close(f);
}

/* free PEBs of the device (UBI's view) */
static uint32_t free_pebs(struct ubi_device *u)
{
	struct ubi_dev_info di;
	ubi_dev_info(u, &di);
	return di.free_pebs;
}

static void test_scrub_move_uncorrectable(void **state)
{
	(void)state;
	struct flash_dev *f = t_nand(32, 41);
	struct ubi_device *u = t_attach(f);
	struct ubi_dev_info di;
	ubi_dev_info(u, &di);
	uint32_t v = t_mkvol(u, "d", 4, UBI_VID_DYNAMIC);
	static uint8_t a[L], b[L];
	t_fill(a, L, 42);
	T_OK(u, ubi_leb_write(u, v, 0, 0, a, L));
	T_OK(u, ubi_flush_background(u));
	uint32_t p = find_leb(f, v, 0, di.vid_hdr_offset);
	uint32_t fr = free_pebs(u);
	/* data page 3 flips (correctable), data page 10 is unreadable */
	assert_int_equal(flash_sim_inject_bitflip(f, p, 1 + 3, false, true), 0);
	assert_int_equal(flash_sim_inject_bitflip(f, p, 1 + 10, true, true), 0);
	T_OK(u, ubi_leb_read(u, v, 0, 3 * PG, b, PG));
	assert_memory_equal(b, a + 3 * PG, PG);
	ubi_dev_info(u, &di);
	assert_int_equal(di.scrub_pending, 1);
	T_OK(u, ubi_flush_background(u));
	/* kernel wl.c: MOVE_SOURCE_RD_ERR -> the PEB stays (erroneous), the
	 * target PEB is not lost */
	struct ubi_stats st;
	ubi_get_stats(u, &st);
	assert_int_equal(st.scrubs, 0);
	assert_int_equal(find_leb(f, v, 0, di.vid_hdr_offset), p);
	ubi_dev_info(u, &di);
	assert_int_equal(di.scrub_pending, 0);
	assert_int_equal(di.bad_pebs, 0);
	assert_int_equal(free_pebs(u), fr);
	T_OK(u, ubi_leb_read(u, v, 0, 0, b, 10 * PG));
	assert_memory_equal(b, a, 10 * PG);
	assert_int_equal(ubi_leb_read(u, v, 0, 10 * PG, b, PG), -EBADMSG);
	/* never picked again: another flip-triggered scrub request is dropped */
	T_OK(u, ubi_leb_read(u, v, 0, 3 * PG, b, PG));
	T_OK(u, ubi_flush_background(u));
	ubi_get_stats(u, &st);
	assert_int_equal(st.scrubs, 0);
	assert_int_equal(find_leb(f, v, 0, di.vid_hdr_offset), p);
	ubi_detach(u);
	flash_close(f);
}

static void test_wl_move_uncorrectable(void **state)
{
	(void)state;
	struct flash_dev *f = t_nand(24, 43);
	struct ubi_attach_opts o;
	ubi_attach_opts_default(&o);
	o.wl_threshold = 8;
	struct ubi_device *u = t_attach_opts(f, &o);
	struct ubi_dev_info di;
	ubi_dev_info(u, &di);
	uint32_t v = t_mkvol(u, "d", 6, UBI_VID_DYNAMIC);
	static uint8_t cold[L], hot[PG], b[L];
	t_fill(cold, L, 44);
	T_OK(u, ubi_leb_write(u, v, 5, 0, cold, L));
	T_OK(u, ubi_flush_background(u));
	uint32_t p = find_leb(f, v, 5, di.vid_hdr_offset);
	/* the cold LEB's last data page can no longer be read */
	assert_int_equal(flash_sim_inject_bitflip(f, p, 31, true, true), 0);
	/* churn: the free PEBs wear, WL wants to move the cold PEB */
	for (int i = 0; i < 600; i++) {
		t_fill(hot, PG, (uint64_t)i);
		T_OK(u, ubi_leb_change(u, v, i % 2, hot, PG));
		T_OK(u, ubi_background_step(u));
	}
	T_OK(u, ubi_flush_background(u));
	ubi_dev_info(u, &di);
	/* WL did try (spread far beyond the threshold otherwise impossible to
	 * keep), but the cold LEB never left its PEB and is still readable
	 * where the flash can read it */
	assert_true(di.max_ec > 2 * o.wl_threshold);
	assert_int_equal(find_leb(f, v, 5, di.vid_hdr_offset), p);
	assert_true(ubi_peb_ec(u, p) <= 2);
	T_OK(u, ubi_leb_read(u, v, 5, 0, b, 30 * PG));
	assert_memory_equal(b, cold, 30 * PG);
	assert_int_equal(ubi_leb_read(u, v, 5, 30 * PG, b, PG), -EBADMSG);
	assert_false(di.read_only);
	assert_int_equal(di.bad_pebs, 0);
	/* the other LEBs keep their data */
	T_OK(u, ubi_leb_read(u, v, 1, 0, b, PG));
	t_fill(hot, PG, 599);
	assert_memory_equal(b, hot, PG);
	ubi_detach(u);
	flash_close(f);
}

static void test_too_many_erroneous(void **state)
{
	(void)state;
	/* max_erroneous = max(peb_count / 10, 16) as the kernel: 17 erroneous
	 * PEBs switch the device to read-only; reads keep working */
	struct flash_dev *f = t_nand(40, 45);
	struct ubi_device *u = t_attach(f);
	struct ubi_dev_info di;
	ubi_dev_info(u, &di);
	uint32_t v = t_mkvol(u, "d", 20, UBI_VID_DYNAMIC);
	static uint8_t a[20][PG], b[PG];
	for (uint32_t l = 0; l < 20; l++) {
		t_fill(a[l], PG, 100 + l);
		T_OK(u, ubi_leb_write(u, v, l, 0, a[l], PG));
	}
	T_OK(u, ubi_flush_background(u));
	for (uint32_t l = 0; l < 17; l++) {
		uint32_t p = find_leb(f, v, l, di.vid_hdr_offset);
		assert_int_equal(flash_sim_inject_bitflip(f, p, 1, false, true), 0);
		assert_int_equal(flash_sim_inject_bitflip(f, p, 5, true, true), 0);
		T_OK(u, ubi_leb_read(u, v, l, 0, b, PG));
		assert_memory_equal(b, a[l], PG);
	}
	int r = ubi_flush_background(u);
	assert_int_equal(r, -EROFS);
	ubi_dev_info(u, &di);
	assert_true(di.read_only);
	assert_non_null(strstr(di.ro_reason, "erroneous"));
	assert_int_equal(ubi_leb_write(u, v, 19, PG, a[0], PG), -EROFS);
	for (uint32_t l = 0; l < 20; l++) {
		T_OK(u, ubi_leb_read(u, v, l, 0, b, PG));
		assert_memory_equal(b, a[l], PG);
	}
	ubi_detach(u);
	flash_close(f);
}

int main(void)
{
	mkdir(UBIKIT_BUILD_DIR, 0755);
	mkdir(WORK, 0755);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_read_retry),
		cmocka_unit_test(t_failed_move_target_erased),
		cmocka_unit_test(test_static_checked_reads),
		cmocka_unit_test(test_vid_flips_at_attach),
		cmocka_unit_test(test_scrub_move_uncorrectable),
		cmocka_unit_test(test_wl_move_uncorrectable),
		cmocka_unit_test(test_too_many_erroneous),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
