/* test_ubifs_pack — the write path's byte format, against nodes written by
 * others: every node of a mkfs.ubifs image and of kernel-written images
 * (journals with reference, truncation and padding nodes) is unpacked and
 * packed again with ubikit's packers, and must come out byte for byte the
 * same (CRC included). Then the write-buffer: random node sequences with
 * random syncs, on several min. I/O / max. write sizes; the LEB must scan
 * (the kernel's strict scan rules) to exactly the nodes written, every
 * flash write must be min_io-aligned, and buffered bytes must read back
 * before they reach the flash. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "flash/flash.h"
#include "ubi/ubi_flat.h"
#include "ubifs/ubifs_priv.h"
#include "ubifs/ubifs_wbuf.h"
#include "ubifs_test_tree.h"
#include "util/util_endian.h"
#include "util/util_prng.h"

#define WORK UBIKIT_BUILD_DIR "/ubifs-pack"

struct counts {
	unsigned per_type[UBIFS_NODE_TYPES_CNT];
	unsigned mismatches;
};

/* repack one node, compare */
static void repack(const uint8_t *node, uint32_t len, struct counts *c, uint32_t lnum, uint32_t offs)
{
	struct ubifs_ch ch;
	ubifs_ch_unpack(node, &ch);
	uint8_t *out = calloc(1, len + 64);
	assert_non_null(out);
	unsigned t = ch.node_type;
	int handled = 1;
	switch (t) {
	case UBIFS_INO_NODE: {
		struct ubifs_ino_node n;
		ubifs_ino_unpack(node, &n);
		ubifs_ino_pack(out, &n, n.data, len - UBIFS_INO_NODE_SZ, ch.group_type);
		break;
	}
	case UBIFS_DENT_NODE:
	case UBIFS_XENT_NODE: {
		struct ubifs_dent_node d;
		ubifs_dent_unpack(node, &d);
		ubifs_dent_pack(out, &d.key, d.inum, d.type, d.name, d.nlen, d.cookie, ch.group_type);
		break;
	}
	case UBIFS_DATA_NODE: {
		struct ubifs_data_node d;
		ubifs_data_unpack(node, len, &d);
		ubifs_data_pack(out, &d.key, d.size, d.compr_type, d.data, d.data_len, ch.group_type);
		put_le16(out + 46, d.compr_size);
		break;
	}
	case UBIFS_TRUN_NODE: {
		struct ubifs_trun_node tr;
		ubifs_trun_unpack(node, &tr);
		ubifs_trun_pack(out, tr.inum, tr.old_size, tr.new_size, ch.group_type);
		break;
	}
	case UBIFS_REF_NODE: {
		struct ubifs_ref_node r;
		ubifs_ref_unpack(node, &r);
		ubifs_ref_pack(out, r.lnum, r.offs, r.jhead);
		break;
	}
	case UBIFS_CS_NODE:
		ubifs_cs_pack(out, ubifs_cs_cmt_no(node));
		break;
	case UBIFS_IDX_NODE: {
		struct ubifs_idx_node idx;
		ubifs_idx_unpack(node, &idx);
		ubifs_idx_pack(out, idx.child_cnt, idx.level);
		for (unsigned i = 0; i < idx.child_cnt; i++) {
			struct ubifs_branch br;
			ubifs_idx_branch(&idx, i, &br);
			ubifs_idx_branch_pack(out, i, &br);
		}
		break;
	}
	case UBIFS_MST_NODE: {
		struct ubifs_mst_node m;
		ubifs_mst_unpack(node, &m);
		ubifs_mst_pack(out, &m);
		break;
	}
	case UBIFS_ORPH_NODE: {
		uint32_t cnt = ubifs_orph_count(len);
		uint64_t *inos = calloc(cnt + 1, 8);
		for (uint32_t i = 0; i < cnt; i++)
			inos[i] = get_le64(node + UBIFS_ORPH_NODE_SZ + 8 * i);
		uint64_t cmt = get_le64(node + 24);
		ubifs_orph_pack(out, cmt & ~(1ull << 63), (int)(cmt >> 63), inos, cnt);
		free(inos);
		break;
	}
	case UBIFS_PAD_NODE:
		ubifs_pad_pack(out, UBIFS_PAD_NODE_SZ + get_le32(node + 24));
		len = UBIFS_PAD_NODE_SZ;
		break;
	default:
		handled = 0;
		break;
	}
	if (handled) {
		if (t != UBIFS_PAD_NODE)
			ubifs_node_finish(out, len, ch.sqnum);
		if (memcmp(out, node, len)) {
			uint32_t i = 0;
			while (out[i] == node[i])
				i++;
			print_error("%s node at LEB %u:%u (len %u) differs at byte %u: %02x, original %02x\n",
				    ubifs_node_type_name(t), lnum, offs, len, i, out[i], node[i]);
			c->mismatches++;
		}
		c->per_type[t]++;
	}
	free(out);
}

/* every node of every LEB outside the LPT area */
static void repack_image(struct ubi_vol_io *vol, struct counts *c)
{
	struct util_err e = {0};
	struct ubifs_mount_opts o = {.read_only = 1};
	struct ubifs_fs *fs;
	int err = ubifs_mount(vol, &o, &fs, &e);
	if (err)
		fail_msg("mount: %s", e.msg);
	for (uint32_t lnum = 1; lnum < fs->leb_cnt; lnum++) {
		if (lnum >= fs->lpt_first && lnum <= fs->lpt_last)
			continue;
		struct ubifs_sleb sleb;
		/* tolerant: torn journal tails of unclean images are cut */
		if (ubifs_recover_leb(fs, lnum, 0, &sleb, -1))
			continue;
		for (uint32_t i = 0; i < sleb.nodes_cnt; i++)
			repack(sleb.buf + sleb.nodes[i].offs, sleb.nodes[i].len, c, lnum, sleb.nodes[i].offs);
		/* padding nodes are not listed by the scan: find them too */
		for (uint32_t off = 0; off + UBIFS_PAD_NODE_SZ <= sleb.endpt; off += 8) {
			const uint8_t *p = sleb.buf + off;
			if (get_le32(p) == UBIFS_NODE_MAGIC && p[20] == UBIFS_PAD_NODE &&
			    ubifs_check_node(p, fs->leb_size - off, off, fs->leb_size, fs->fanout) == UBIFS_CHK_OK)
				repack(p, UBIFS_PAD_NODE_SZ + get_le32(p + 24), c, lnum, off);
		}
		ubifs_sleb_free(&sleb);
	}
	ubifs_unmount(fs);
}

static void t_mkfs_nodes(void **s)
{
	(void)s;
	int dev;
	assert_int_equal(tt_make_tree(WORK "/src", 0, &dev), 0);
	struct {
		const char *args;
	} cfgs[] = {{"-m 2048 -e 126976 -c 200 -x lzo"}, {"-m 8 -e 65408 -c 300 -x zstd"}, {"-m 512 -e 15872 -c 2000 -x none -f 3"}};
	for (size_t k = 0; k < sizeof(cfgs) / sizeof(cfgs[0]); k++) {
		char img[256];
		snprintf(img, sizeof(img), WORK "/m%zu.img", k);
		assert_int_equal(tt_run("mkfs.ubifs -r '%s/src' %s -o '%s'", WORK, cfgs[k].args, img), 0);
		struct ubi_vol_io vol;
		assert_int_equal(ubi_flat_open(img, 0, 1, &vol), 0);
		struct counts c = {0};
		repack_image(&vol, &c);
		ubi_flat_close(&vol);
		print_message("mkfs %s: ino %u dent %u xent %u data %u idx %u mst %u cs %u pad %u\n", cfgs[k].args,
			      c.per_type[0], c.per_type[2], c.per_type[3], c.per_type[1], c.per_type[9], c.per_type[7],
			      c.per_type[10], c.per_type[5]);
		assert_int_equal(c.mismatches, 0);
		assert_true(c.per_type[UBIFS_INO_NODE] > 10 && c.per_type[UBIFS_DATA_NODE] > 10 &&
			    c.per_type[UBIFS_DENT_NODE] > 10 && c.per_type[UBIFS_IDX_NODE] > 0 &&
			    c.per_type[UBIFS_MST_NODE] > 0 && c.per_type[UBIFS_CS_NODE] > 0);
	}
}

static void t_kernel_nodes(void **s)
{
	(void)s;
	struct {
		const char *gz;
		struct flash_geometry geo;
	} cases[] = {
		{UBIKIT_TEST_DATA "/ubifs/replay-nand2k.img.gz", {FLASH_NAND, 2048, 512, 64, 131072, 128}},
		{UBIKIT_TEST_DATA "/ubifs/replay-nor.img.gz", {FLASH_NOR, 1, 1, 0, 65536, 256}},
	};
	struct counts c = {0};
	for (size_t k = 0; k < 2; k++) {
		uint8_t *img;
		size_t len;
		uint32_t leb;
		assert_int_equal(tt_ubi_gz_to_flat(cases[k].gz, &cases[k].geo, 0, WORK "/k.raw", &img, &len, &leb), 0);
		struct ubi_vol_io vol;
		struct util_err e = {0};
		assert_int_equal(ubi_flat_open_mem(img, len, leb, 1, &vol, &e), 0);
		repack_image(&vol, &c);
		ubi_flat_close(&vol);
		free(img);
	}
	print_message("kernel: ino %u dent %u xent %u data %u trun %u ref %u idx %u mst %u cs %u pad %u orph %u\n",
		      c.per_type[0], c.per_type[2], c.per_type[3], c.per_type[1], c.per_type[4], c.per_type[8],
		      c.per_type[9], c.per_type[7], c.per_type[10], c.per_type[5], c.per_type[11]);
	assert_int_equal(c.mismatches, 0);
	assert_true(c.per_type[UBIFS_TRUN_NODE] > 0 && c.per_type[UBIFS_REF_NODE] > 0 && c.per_type[UBIFS_PAD_NODE] > 0 &&
		    c.per_type[UBIFS_XENT_NODE] > 0);
}

/* ---- write-buffer ---- */

struct spy {
	struct ubi_vol_io inner;
	uint32_t min_io;
	unsigned writes, bad;
};
static int spy_write(void *ctx, uint32_t lnum, uint32_t off, const void *buf, size_t len)
{
	struct spy *s = ctx;
	s->writes++;
	if (off % s->min_io || len % s->min_io)
		s->bad++;
	return s->inner.write(s->inner.ctx, lnum, off, buf, len);
}
static int spy_read(void *ctx, uint32_t lnum, uint32_t off, void *buf, size_t len)
{
	struct spy *s = ctx;
	return s->inner.read(s->inner.ctx, lnum, off, buf, len);
}

static void wbuf_case(uint32_t leb_size, uint32_t min_io, uint32_t mws, uint64_t seed)
{
	size_t img_len = (size_t)leb_size * 4;
	uint8_t *img = malloc(img_len);
	memset(img, 0xFF, img_len);
	struct ubi_vol_io inner;
	struct util_err e = {0};
	assert_int_equal(ubi_flat_open_mem(img, img_len, leb_size, 0, &inner, &e), 0);
	struct spy spy = {.inner = inner, .min_io = min_io};
	struct ubi_vol_io vol = inner;
	vol.ctx = &spy;
	vol.write = spy_write;
	vol.read = spy_read;
	struct ubifs_fs *fs = calloc(1, sizeof(*fs));
	fs->vol = &vol;
	fs->leb_size = leb_size;
	fs->min_io_size = min_io;
	fs->max_write_size = mws;
	fs->fanout = 8;
	fs->sbuf = malloc(leb_size);
	struct ubifs_wbuf w;
	assert_int_equal(ubifs_wbuf_init(fs, &w, 1), 0);
	struct util_prng r;
	util_prng_seed(&r, seed);
	uint32_t lnum = 2, start = (uint32_t)util_prng_below(&r, 3) * min_io;
	assert_int_equal(ubifs_wbuf_seek(&w, lnum, start), 0);
	uint32_t offs[4096], lens[4096], n = 0;
	uint8_t *node = malloc(UBIFS_MAX_NODE_SZ + 8);
	uint64_t sq = 1;
	uint32_t model = start; /* where the next node must go: the kernel's layout */
	for (;;) {
		/* an inode node with random inline data: any length 160..4256 */
		uint32_t dl = (uint32_t)util_prng_below(&r, util_prng_below(&r, 4) ? 64 : 4097);
		uint32_t len = UBIFS_INO_NODE_SZ + dl;
		if (ubifs_wbuf_room(&w, leb_size) < ubifs_align8(len))
			break;
		struct ubifs_ino_node in = {0};
		in.key = ubifs_key_make(64 + n, UBIFS_INO_KEY, 0);
		in.nlink = 1;
		in.mode = 0100644;
		in.data_len = dl;
		uint8_t data[4096];
		util_prng_fill(&r, data, dl);
		ubifs_ino_pack(node, &in, data, dl, 0);
		ubifs_node_finish(node, len, sq++);
		uint32_t at = w.offs + w.used;
		assert_int_equal(at, model);
		assert_int_equal(ubifs_wbuf_write(&w, node, len), 0);
		model += ubifs_align8(len);
		offs[n] = at;
		lens[n++] = len;
		/* the node reads back through the buffer overlay */
		uint8_t *back = malloc(len);
		assert_int_equal(vol.read(vol.ctx, lnum, at, back, len), 0);
		ubifs_wbuf_overlay(&w, lnum, at, back, len);
		assert_memory_equal(back, node, len);
		free(back);
		if (util_prng_below(&r, 5) == 0) {
			assert_int_equal(ubifs_wbuf_sync(&w), 0);
			model = (model + min_io - 1) / min_io * min_io; /* padded to the next min. I/O unit only */
		}
		assert_int_equal(w.offs % min_io, 0);
		if (leb_size - w.offs >= mws)
			assert_int_equal((w.offs + w.size) % mws, 0);
	}
	assert_int_equal(ubifs_wbuf_sync(&w), 0);
	assert_int_equal(w.used, 0);
	/* strict scan from the start offset: exactly our nodes */
	struct ubifs_sleb sleb;
	int err = ubifs_scan(fs, lnum, start, &sleb);
	if (err)
		fail_msg("scan (leb %u min_io %u mws %u seed %llu): %s", leb_size, min_io, mws, (unsigned long long)seed,
			 fs->err.msg);
	assert_int_equal(sleb.nodes_cnt, n);
	for (uint32_t i = 0; i < n; i++) {
		assert_int_equal(sleb.nodes[i].offs, offs[i]);
		assert_int_equal(sleb.nodes[i].len, lens[i]);
	}
	assert_int_equal(sleb.endpt % min_io, 0);
	ubifs_sleb_free(&sleb);
	assert_int_equal(spy.bad, 0);
	assert_true(spy.writes > 0);
	ubifs_wbuf_free(&w);
	free(node);
	free(fs->sbuf);
	free(fs);
	ubi_flat_close(&inner);
	free(img);
}

static void t_wbuf(void **s)
{
	(void)s;
	for (uint64_t seed = 1; seed <= 12; seed++) {
		wbuf_case(126976, 2048, 2048, seed);
		wbuf_case(253952, 4096, 4096, seed);
		wbuf_case(15872, 512, 512, seed);
		wbuf_case(65408, 8, 8, seed);
		wbuf_case(65536, 8, 256, seed);      /* NOR with a bigger max write unit */
		wbuf_case(126976, 512, 2048, seed); /* sub-pages */
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_mkfs_nodes),
		cmocka_unit_test(t_kernel_nodes),
		cmocka_unit_test(t_wbuf),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
