/* test_ubifs_craft — journal replay and orphan paths that the kernel-written
 * images do not reach, made by editing the kernel-written replay-nand2k
 * image (tests/data/ubifs) at the flash level: nodes written with their
 * CRC, padding to the min. I/O unit as the kernel pads, LEBs moved by
 * rewriting VID headers, the master node's log_lnum changed in both copies.
 * The expected view of each crafted image is what the Linux kernel showed
 * when it mounted the same crafted image in the VM
 * (tests/data/ubifs/craft-NAME.manifest, made by make_craft_manifests.sh;
 * "MOUNT FAILED" when the kernel refused it). Cases:
 *   wrap        the log wrapped: commit start in the last log LEB, the
 *               rest in the first one
 *   dupref      a bud referenced twice (same head, same start)
 *   badref      a bud referenced again by another head (kernel: refused)
 *   lastbud     the old-UBIFS last-bud rule: an empty last bud after a bud
 *               with a torn tail, which may then be recovered
 *   relinked    an orphan entry naming a linked inode (O_TMPFILE+linkat):
 *               it survives
 *   orphorder   orphan nodes of commits out of order in one LEB (refused)
 *   logfirst, csno, logcs2, lognode, refsqnum, refrange: log nodes the
 *               kernel refuses (no commit start first, wrong commit number,
 *               a second commit start, a non-reference node, a sqnum
 *               below the commit's, a reference to no LEB)
 *   trun, dentkey: bud nodes the kernel refuses (a truncation that grows,
 *               an entry with an inode key)
 * and xattr-del (a kernel image, make_xattr_del_image.sh): a file whose
 * xattrs were committed is deleted in the journal; replay removes the
 * inodes of its xattrs too; xattrpurge: the same image with the xattr-inode
 * deletions the kernel journals turned into padding, so replay itself must
 * remove the xattr inodes of the deleted inode.
 * UBIKIT_CRAFT_WRITE=DIR: only write the crafted images there. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
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
#include "ubi/ubi_media.h"
#include "ubifs/ubifs.h"
#include "ubifs_test_manifest.h"
#include "ubifs_test_tree.h"
#include "util/util_crc.h"
#include "util/util_endian.h"

#define WORK UBIKIT_BUILD_DIR "/ubifs-craft"
enum { PEB = 131072, NPEB = 128, VIDOFF = 512, DOFF = 2048, LEBSZ = PEB - DOFF, MINIO = 2048 };
#define DEVSZ ((size_t)PEB * NPEB)

/* ---- UBI level, on the raw image ---- */
static int64_t peb_of(uint8_t *b, uint32_t lnum)
{
	int64_t best = -1;
	uint64_t bsq = 0;
	for (uint32_t p = 0; p < NPEB; p++) {
		struct ubi_vid_hdr h;
		if (ubi_vid_hdr_unpack(b + (size_t)p * PEB + VIDOFF, &h) != UBI_HDR_OK)
			continue;
		if (h.vol_id == 0 && h.lnum == lnum && (best < 0 || h.sqnum > bsq)) {
			best = p;
			bsq = h.sqnum;
		}
	}
	return best;
}

static uint64_t max_vid_sqnum(uint8_t *b, struct ubi_vid_hdr *tmpl)
{
	uint64_t m = 0;
	for (uint32_t p = 0; p < NPEB; p++) {
		struct ubi_vid_hdr h;
		if (ubi_vid_hdr_unpack(b + (size_t)p * PEB + VIDOFF, &h) != UBI_HDR_OK)
			continue;
		if (h.sqnum >= m) {
			m = h.sqnum;
			if (h.vol_id == 0)
				*tmpl = h;
		}
	}
	return m;
}

/* The data of LEB lnum, mapping it to a free PEB if needed. */
static uint8_t *leb(uint8_t *b, uint32_t lnum)
{
	int64_t p = peb_of(b, lnum);
	if (p >= 0)
		return b + (size_t)p * PEB + DOFF;
	struct ubi_vid_hdr h;
	uint64_t sq = max_vid_sqnum(b, &h);
	for (uint32_t q = 0; q < NPEB; q++) {
		uint8_t *pb = b + (size_t)q * PEB;
		struct ubi_ec_hdr ec;
		if (ubi_ec_hdr_unpack(pb, &ec) != UBI_HDR_OK)
			continue;
		int empty = 1;
		for (size_t i = 64; i < PEB && empty; i++)
			empty = pb[i] == 0xFF;
		if (!empty)
			continue;
		h.lnum = lnum;
		h.sqnum = sq + 1;
		h.copy_flag = 0;
		h.data_size = h.data_crc = 0;
		ubi_vid_hdr_pack(&h, pb + VIDOFF);
		return pb + DOFF;
	}
	fail_msg("no free PEB for LEB %u", lnum);
	return NULL;
}

static void unmap(uint8_t *b, uint32_t lnum)
{
	int64_t p = peb_of(b, lnum);
	assert_true(p >= 0);
	memset(b + (size_t)p * PEB + 64, 0xFF, PEB - 64);
}

/* ---- UBIFS nodes ---- */
static void ch(uint8_t *n, uint8_t type, uint32_t len, uint64_t sqnum)
{
	put_le32(n, 0x06101831u);
	put_le64(n + 8, sqnum);
	put_le32(n + 16, len);
	n[20] = type;
	n[21] = 0;
	n[22] = n[23] = 0;
}

static void crc(uint8_t *n)
{
	put_le32(n + 4, util_crc32(UTIL_CRC32_INIT, n + 8, get_le32(n + 16) - 8));
}

/* Pad [n, n + gap) as the kernel's ubifs_pad does. */
static void pad(uint8_t *n, uint32_t gap)
{
	if (gap < 28) {
		memset(n, 0xCE, gap);
		return;
	}
	memset(n, 0, gap);
	ch(n, 5, 28, 0);
	put_le32(n + 24, gap - 28);
	crc(n);
}

/* A reference node at leb+offs, padded to the next min. I/O unit. */
static void put_ref(uint8_t *l, uint32_t offs, uint32_t bud, uint32_t bud_offs, uint32_t jhead, uint64_t sqnum)
{
	uint8_t *n = l + offs;
	memset(n, 0, 64);
	ch(n, 8, 64, sqnum);
	put_le32(n + 24, bud);
	put_le32(n + 28, bud_offs);
	put_le32(n + 32, jhead);
	crc(n);
	pad(n + 64, MINIO - 64);
}

static void put_orph(uint8_t *l, uint32_t offs, uint64_t cmt_no, int last, const uint64_t *inos, uint32_t n_inos,
		     uint64_t sqnum)
{
	uint8_t *n = l + offs;
	uint32_t len = 32 + 8 * n_inos;
	ch(n, 11, len, sqnum);
	put_le64(n + 24, cmt_no | (last ? 1ull << 63 : 0));
	for (uint32_t i = 0; i < n_inos; i++)
		put_le64(n + 32 + 8 * i, inos[i]);
	crc(n);
	pad(n + len, MINIO - len);
}

/* The last valid master node of a master LEB. */
static uint8_t *last_master(uint8_t *l)
{
	uint8_t *last = NULL;
	for (uint32_t o = 0; o + 512 <= LEBSZ; o += 8)
		if (get_le32(l + o) == 0x06101831u && l[o + 20] == 7 && get_le32(l + o + 16) == 512 &&
		    util_crc32(UTIL_CRC32_INIT, l + o + 8, 504) == get_le32(l + o + 4))
			last = l + o;
	assert_non_null(last);
	return last;
}

static void set_log_lnum(uint8_t *b, uint32_t from, uint32_t to)
{
	for (uint32_t m = 1; m <= 2; m++) {
		uint8_t *n = last_master(leb(b, m));
		assert_int_equal(get_le32(n + 44), from);
		put_le32(n + 44, to);
		crc(n);
	}
}

/* Entry nodes (type 2 dent, 3 xent) on flash as the kernel wrote them:
 * those with a non-zero target, named name (NULL: any) and, if host is not
 * 0, of that host inode. Targets go to out (up to max); returns the count. */
static size_t entry_targets(uint8_t *b, uint8_t type, const char *name, uint64_t host, uint64_t *out, size_t max)
{
	size_t nl = name ? strlen(name) : 0, n = 0;
	for (uint32_t lnum = 10; lnum < 121; lnum++) {
		if (peb_of(b, lnum) < 0)
			continue;
		uint8_t *l = leb(b, lnum);
		for (uint32_t o = 0; o + 57 < LEBSZ; o += 8) {
			if (get_le32(l + o) != 0x06101831u || l[o + 20] != type)
				continue;
			uint32_t len = get_le32(l + o + 16), nlen = get_le16(l + o + 50);
			if (len != 57 + nlen || o + len > LEBSZ ||
			    util_crc32(UTIL_CRC32_INIT, l + o + 8, len - 8) != get_le32(l + o + 4))
				continue;
			if ((name && (nlen != nl || memcmp(l + o + 56, name, nl))) || (host && get_le32(l + o + 24) != host))
				continue;
			uint64_t t = get_le64(l + o + 40);
			int dup = 0;
			for (size_t i = 0; i < n; i++)
				dup |= out[i] == t;
			if (t && !dup && n < max)
				out[n++] = t;
		}
	}
	return n;
}

/* the inode number of a directory entry node named name (kernel's own) */
static uint64_t dent_inum(uint8_t *b, const char *name)
{
	uint64_t t = 0;
	if (entry_targets(b, 2, name, 0, &t, 1) != 1)
		fail_msg("no entry %s", name);
	return t;
}

/* ---- the cases (layout facts of replay-nand2k asserted as we go) ---- */
static void c_wrap(uint8_t *b)
{
	/* log LEBs 3-5, tail at 4: CS + ref at 0, refs at 2048..8192 */
	uint8_t *l4 = leb(b, 4);
	assert_int_equal(l4[20], 10 /* CS */);
	assert_int_equal(get_le32(l4 + 10240), 0xFFFFFFFFu);
	static uint8_t save[10240];
	memcpy(save, l4, sizeof(save));
	unmap(b, 4);
	uint8_t *l5 = leb(b, 5), *l3 = leb(b, 3);
	memcpy(l5, save, 4096);           /* CS, ref 15, ref 32 */
	memcpy(l3, save + 4096, 6144);    /* refs 18, 21, 20: after the wrap */
	set_log_lnum(b, 4, 5);
}

static void c_dupref(uint8_t *b)
{
	uint8_t *l4 = leb(b, 4);
	assert_int_equal(get_le32(l4 + 8192 + 24), 20); /* ref to bud 20, head 1 */
	assert_int_equal(get_le32(l4 + 8192 + 32), 1);
	put_ref(l4, 10240, 20, 0, 1, 3362);
}

static void c_badref(uint8_t *b)
{
	put_ref(leb(b, 4), 10240, 20, 0, 2, 3362);
}

static void c_lastbud(uint8_t *b)
{
	/* bud 20 (head 1) ends with the group inode 387 + root inode at
	 * 53712/53872; tear the last one (a torn write: the next min. I/O
	 * unit on is erased) */
	uint8_t *l20 = leb(b, 20);
	assert_int_equal(get_le32(l20 + 53872), 0x06101831u);
	assert_int_equal(get_le32(l20 + 53872 + 24), 1);
	memset(l20 + 53872 + 100, 0xFF, 60);
	/* and an empty bud 60 after it, referenced last */
	assert_true(peb_of(b, 60) < 0);
	put_ref(leb(b, 4), 10240, 60, 0, 1, 3362);
}

static void c_relinked(uint8_t *b)
{
	uint8_t *l8 = leb(b, 8);
	assert_int_equal(l8[20], 11);
	uint64_t raw = get_le64(l8 + 24);
	assert_true(raw >> 63); /* the only (last) orphan node of its commit */
	uint64_t ino = dent_inum(b, "x"); /* c/x: linked */
	put_orph(leb(b, 9), 0, raw & ~(1ull << 63), 1, &ino, 1, 201);
}

static void c_orphorder(uint8_t *b)
{
	uint8_t *l8 = leb(b, 8);
	uint64_t raw = get_le64(l8 + 24);
	assert_true(raw >> 63);
	uint64_t ino = dent_inum(b, "x");
	put_orph(l8, 2048, (raw & ~(1ull << 63)) - 1, 1, &ino, 1, 202);
}


/* ---- log and bud nodes the kernel refuses ---- */
static void c_logfirst(uint8_t *b)
{
	/* the commit start at the log tail replaced by a reference node */
	uint8_t *l4 = leb(b, 4);
	assert_int_equal(l4[20], 10);
	memset(l4, 0, 96);
	uint8_t *n = l4;
	ch(n, 8, 64, 2428);
	put_le32(n + 24, 15);
	put_le32(n + 28, 116736);
	put_le32(n + 32, 1);
	crc(n);
	pad(l4 + 64, 32);
}

static void c_csno(uint8_t *b)
{
	uint8_t *l4 = leb(b, 4);
	assert_int_equal(get_le64(l4 + 24), 7);
	put_le64(l4 + 24, 6);
	crc(l4);
}

static void c_logcs2(uint8_t *b)
{
	uint8_t *l4 = leb(b, 4), *n = l4 + 10240;
	memset(n, 0, 32);
	ch(n, 10, 32, 3362);
	put_le64(n + 24, 7);
	crc(n);
	pad(n + 32, MINIO - 32);
}

static void c_lognode(uint8_t *b)
{
	uint64_t ino = 70;
	put_orph(leb(b, 4), 10240, 7, 1, &ino, 1, 3362);
}

static void c_refsqnum(uint8_t *b)
{
	put_ref(leb(b, 4), 10240, 60, 0, 1, 100); /* below the commit start's sqnum */
}

static void c_refrange(uint8_t *b)
{
	put_ref(leb(b, 4), 10240, 200, 0, 1, 3362); /* no such LEB */
}

static void c_trun(uint8_t *b)
{
	/* bud 20's first node (a 61-byte entry) becomes a truncation node
	 * growing the file (old size <= new size), 0xCE padding after */
	uint8_t *n = leb(b, 20);
	assert_int_equal(n[20], 2);
	assert_int_equal(get_le32(n + 16), 61);
	memset(n, 0, 64);
	ch(n, 4, 56, get_le64(n + 8) ? get_le64(n + 8) : 2988);
	put_le64(n + 8, 2988);
	put_le32(n + 24, 66);
	put_le64(n + 40, 10);
	put_le64(n + 48, 20);
	crc(n);
	memset(n + 56, 0xCE, 8);
}

static void c_dentkey(uint8_t *b)
{
	/* bud 20's entry at 2048 with an inode key type */
	uint8_t *n = leb(b, 20) + 2048;
	assert_int_equal(n[20], 2);
	uint32_t w = get_le32(n + 28);
	assert_int_equal(w >> 29, 2 /* DENT key */);
	put_le32(n + 28, w & 0x1FFFFFFFu);
	crc(n);
}

/* xattr-del with the deletions of xd's xattr inodes (and xattr entries, if
 * a kernel wrote any) that the kernel journals with the host's deletion
 * turned into padding: only the host inode's deletion is left for replay,
 * which must then remove the xattr entries and inodes itself (the kernel's
 * ubifs_tnc_remove_ino does). */
static size_t entry_targets(uint8_t *b, uint8_t type, const char *name, uint64_t host, uint64_t *out, size_t max);
static uint64_t dent_inum(uint8_t *b, const char *name);
static void c_xattrpurge(uint8_t *b)
{
	uint64_t xd = dent_inum(b, "xd"), xin[8];
	size_t nx = entry_targets(b, 3, NULL, xd, xin, 8);
	assert_int_equal(nx, 3);
	unsigned xents = 0, xinos = 0;
	for (uint32_t lnum = 10; lnum < 121; lnum++) {
		if (peb_of(b, lnum) < 0)
			continue;
		uint8_t *l = leb(b, lnum);
		for (uint32_t o = 0; o + 160 <= LEBSZ; o += 8) {
			uint8_t *n = l + o;
			if (get_le32(n) != 0x06101831u)
				continue;
			uint32_t len = get_le32(n + 16);
			if (len < 24 || o + len > LEBSZ || util_crc32(UTIL_CRC32_INIT, n + 8, len - 8) != get_le32(n + 4))
				continue;
			int kill = 0;
			if (n[20] == 3 && get_le32(n + 24) == xd && get_le64(n + 40) == 0)
				kill = ++xents; /* xattr entry deletion */
			if (n[20] == 0 && get_le32(n + 92) == 0)
				for (size_t i = 0; i < nx; i++)
					if (get_le32(n + 24) == xin[i])
						kill = ++xinos; /* xattr inode deletion */
			if (kill)
				pad(n, (len + 7) & ~7u);
		}
	}
	/* Debian's kernel journals the three xattr inodes with nlink 0 in the
	 * host's deletion group (and no entry deletions) */
	assert_int_equal(xinos, 3);
	(void)xents;
}

struct craft {
	const char *name;
	void (*make)(uint8_t *);
	const char *base; /* tests/data/ubifs image; NULL: replay-nand2k */
};
static const struct craft crafts[] = {
	{"wrap", c_wrap, NULL},         {"dupref", c_dupref, NULL},     {"badref", c_badref, NULL},
	{"lastbud", c_lastbud, NULL},   {"relinked", c_relinked, NULL}, {"orphorder", c_orphorder, NULL},
	{"xattrpurge", c_xattrpurge, "xattr-del"},
	{"logfirst", c_logfirst, NULL},	{"csno", c_csno, NULL},		{"logcs2", c_logcs2, NULL},
	{"lognode", c_lognode, NULL},	{"refsqnum", c_refsqnum, NULL}, {"refrange", c_refrange, NULL},
	{"trun", c_trun, NULL},		{"dentkey", c_dentkey, NULL},
};

static uint8_t *load_image(const char *gz)
{
	uint8_t *b = malloc(DEVSZ);
	memset(b, 0xFF, DEVSZ);
	gzFile g = gzopen(gz, "rb");
	assert_non_null(g);
	assert_true(gzread(g, b, (unsigned)DEVSZ) > 0);
	gzclose(g);
	return b;
}

static uint8_t *base_image_of(const char *name)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/ubifs/%s.img.gz", UBIKIT_TEST_DATA, name ? name : "replay-nand2k");
	return load_image(p);
}

static void write_image(const char *path, const uint8_t *b)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(b, 1, DEVSZ, f), DEVSZ);
	fclose(f);
}

static void run_craft(const struct craft *c)
{
	char img[512], mf[512];
	snprintf(img, sizeof(img), "%s/craft-%s.img", WORK, c->name);
	snprintf(mf, sizeof(mf), "%s/ubifs/craft-%s.manifest", UBIKIT_TEST_DATA, c->name);
	const char *wr = getenv("UBIKIT_CRAFT_WRITE");
	if (wr && *wr) {
		snprintf(img, sizeof(img), "%s/craft-%s.img", wr, c->name);
		uint8_t *b = base_image_of(c->base);
		c->make(b);
		write_image(img, b);
		free(b);
		return;
	}
	char *want = tm_slurp(mf);
	if (!want)
		fail_msg("%s: the kernel's view %s is missing (make_craft_manifests.sh)", c->name, mf);
	uint8_t *b = base_image_of(c->base);
	c->make(b);
	write_image(img, b);
	free(b);
	struct flash_geometry geo = {FLASH_NAND, 2048, 512, 64, PEB, NPEB};
	struct flash_dev *fl;
	char e[512];
	int err = flash_sim_open_ex(img, &geo, 0, true, &fl, e, sizeof(e));
	if (err)
		fail_msg("%s: flash open %d %s", c->name, err, e);
	struct ubi_attach_opts o;
	ubi_attach_opts_default(&o);
	o.read_only = true;
	struct ubi_device *ubi;
	err = ubi_attach_msg(fl, &o, &ubi, e, sizeof(e));
	if (err)
		fail_msg("%s: attach %d %s", c->name, err, e);
	struct ubi_vol_io vol;
	assert_int_equal(ubi_volume_io(ubi, 0, &vol), 0);
	struct ubikit_fs *fs;
	struct ubikit_mount_opts mo = {.flags = UBIKIT_MOUNT_RDONLY};
	err = ubikit_mount_ex(&vol, &mo, &fs, e, sizeof(e));
	int kernel_refused = !strncmp(want, "MOUNT FAILED", 12);
	if (kernel_refused) {
		if (!err)
			fail_msg("%s: the kernel refused this image, we mounted it", c->name);
		fprintf(stderr, "%s: refused as by the kernel: %s\n", c->name, e);
	} else {
		if (err)
			fail_msg("%s: mount %d %s", c->name, err, e);
		char *got = tm_manifest(fs);
		struct ubifs_fs_info info;
		assert_int_equal(ubifs_get_info(fs_ubifs(fs), &info), 0);
		fprintf(stderr, "%s: %u log LEBs, %u buds, %llu journal nodes, %u torn tails cut, %u orphans killed\n",
			c->name, info.log_lebs_used, info.buds, (unsigned long long)info.replayed_nodes,
			info.recovered_lebs, info.orphans_killed);
		if (strcmp(got, want)) {
			char gp[600];
			snprintf(gp, sizeof(gp), "%s/craft-%s.actual", WORK, c->name);
			FILE *o2 = fopen(gp, "w");
			fputs(got, o2);
			fclose(o2);
			tt_run("diff -u '%s' '%s' | head -40 >&2", mf, gp);
			fail_msg("%s: our view differs from the kernel's", c->name);
		}
		if (!strcmp(c->name, "wrap"))
			assert_int_equal(info.log_lebs_used, 2);
		if (c->base && !strcmp(c->base, "xattr-del")) {
			/* the xattr inodes of the deleted xd are gone (the UBIFS
			 * layer reads xattr inodes; the fs API hides them) */
			uint8_t *orig = base_image_of(c->base);
			uint64_t xd = dent_inum(orig, "xd"), xin[8], kin[8];
			size_t nx = entry_targets(orig, 3, NULL, xd, xin, 8);
			size_t nk = entry_targets(orig, 3, NULL, dent_inum(orig, "keep"), kin, 8);
			free(orig);
			assert_int_equal(nx, 3);
			assert_int_equal(nk, 1);
			struct ubifs_inode ui;
			assert_int_equal(ubifs_read_inode(fs_ubifs(fs), xd, &ui), -ENOENT);
			for (size_t i = 0; i < nx; i++)
				if (ubifs_read_inode(fs_ubifs(fs), xin[i], &ui) != -ENOENT)
					fail_msg("xattr inode %llu of the deleted inode %llu is still in the index",
						 (unsigned long long)xin[i], (unsigned long long)xd);
			assert_int_equal(ubifs_read_inode(fs_ubifs(fs), kin[0], &ui), 0);
		}
		free(got);
		ubikit_unmount(fs);
	}
	free(want);
	ubi_detach(ubi);
	flash_close(fl);
	remove(img);
}

/* A file with three xattrs, committed, then deleted in the journal only
 * (make_xattr_del_image.sh): replay deletes its inode and the inodes of its
 * xattrs (kernel: replay applies the deletion with ubifs_tnc_remove_ino). */
static void t_xattr_del(void **s)
{
	(void)s;
	uint8_t *b = load_image(UBIKIT_TEST_DATA "/ubifs/xattr-del.img.gz");
	uint64_t xd = dent_inum(b, "xd"), keep = dent_inum(b, "keep");
	uint64_t xin[8], kin[8];
	size_t nx = entry_targets(b, 3, NULL, xd, xin, 8), nk = entry_targets(b, 3, NULL, keep, kin, 8);
	assert_int_equal(nx, 3); /* user.a, user.b, trusted.c */
	assert_int_equal(nk, 1);
	char img[512];
	snprintf(img, sizeof(img), "%s/xattr-del.img", WORK);
	write_image(img, b);
	free(b);
	struct flash_geometry geo = {FLASH_NAND, 2048, 512, 64, PEB, NPEB};
	struct flash_dev *fl;
	char e[512];
	assert_int_equal(flash_sim_open_ex(img, &geo, 0, true, &fl, e, sizeof(e)), 0);
	struct ubi_attach_opts o;
	ubi_attach_opts_default(&o);
	o.read_only = true;
	struct ubi_device *ubi;
	assert_int_equal(ubi_attach_msg(fl, &o, &ubi, e, sizeof(e)), 0);
	struct ubi_vol_io vol;
	assert_int_equal(ubi_volume_io(ubi, 0, &vol), 0);
	struct ubikit_fs *fs;
	struct ubikit_mount_opts mo = {.flags = UBIKIT_MOUNT_RDONLY};
	if (ubikit_mount_ex(&vol, &mo, &fs, e, sizeof(e)))
		fail_msg("mount: %s", e);
	char *want = tm_slurp(UBIKIT_TEST_DATA "/ubifs/xattr-del.manifest"), *got = tm_manifest(fs);
	assert_non_null(want);
	assert_string_equal(got, want);
	/* the UBIFS layer reads xattr inodes too (the fs API hides them) */
	struct ubifs_inode ui;
	assert_int_equal(ubifs_read_inode(fs_ubifs(fs), xd, &ui), -ENOENT);
	for (size_t i = 0; i < nx; i++)
		if (ubifs_read_inode(fs_ubifs(fs), xin[i], &ui) != -ENOENT)
			fail_msg("xattr inode %llu of the deleted inode %llu is still in the index",
				 (unsigned long long)xin[i], (unsigned long long)xd);
	/* the other file's xattr inode stays (the check can see inodes) */
	assert_int_equal(ubifs_read_inode(fs_ubifs(fs), kin[0], &ui), 0);
	free(want);
	free(got);
	ubikit_unmount(fs);
	ubi_detach(ubi);
	flash_close(fl);
	remove(img);
}

#define CASE(n, i)                                                                                          \
	static void t_##n(void **s)                                                                         \
	{                                                                                                   \
		(void)s;                                                                                    \
		run_craft(&crafts[i]);                                                                      \
	}
CASE(wrap, 0)
CASE(dupref, 1)
CASE(badref, 2)
CASE(lastbud, 3)
CASE(relinked, 4)
CASE(orphorder, 5)
CASE(xattrpurge, 6)
CASE(logfirst, 7)
CASE(csno, 8)
CASE(logcs2, 9)
CASE(lognode, 10)
CASE(refsqnum, 11)
CASE(refrange, 12)
CASE(trun, 13)
CASE(dentkey, 14)

int main(void)
{
	mkdir(UBIKIT_BUILD_DIR, 0755);
	mkdir(WORK, 0755);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_wrap),    cmocka_unit_test(t_dupref),   cmocka_unit_test(t_badref),
		cmocka_unit_test(t_lastbud), cmocka_unit_test(t_relinked), cmocka_unit_test(t_orphorder),
		cmocka_unit_test(t_xattr_del),  cmocka_unit_test(t_xattrpurge),
		cmocka_unit_test(t_logfirst),   cmocka_unit_test(t_csno),       cmocka_unit_test(t_logcs2),
		cmocka_unit_test(t_lognode),    cmocka_unit_test(t_refsqnum),   cmocka_unit_test(t_refrange),
		cmocka_unit_test(t_trun),       cmocka_unit_test(t_dentkey),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
