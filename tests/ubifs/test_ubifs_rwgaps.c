/* test_ubifs_rwgaps — the read-write mount's remaining kernel behaviours
 * (issue 9), on an in-memory UBI volume that can "lose power" at any
 * volume operation (a write at the cut is half done; UBI's atomic change
 * and unmap are all or nothing, as UBI guarantees):
 *  - log consolidation (kernel ubifs_consolidate_log): a file system with
 *    two log LEBs (the kernel's default on a small volume) cut during a
 *    commit, after the commit-start node went to the second log LEB and
 *    before the master named it as the tail, has a full log (the LEB after
 *    the head is the tail). The read-write mount must consolidate it, not
 *    refuse; every fsync'ed file keeps its contents, ubifs_check passes,
 *    writing and committing go on, and a second mount agrees.
 *  - recovery with no empty LEB (kernel ubifs_rcvry_gc_commit): a full
 *    file system cut with a GC bud in the journal mounts read-write by
 *    collecting a dirty LEB into the GC head.
 *  - the replay of a file's deletion whose xattr entry (and xattr inode)
 *    the committed index names in a LEB garbage-collected since: the
 *    dangling branches are dropped and the xattr inode swept (Linux 6.1
 *    keeps that inode and its self-check then refuses the mount).
 *  - log LEBs that come back after a cut (unmapped, not yet erased): an
 *    old one with garbage after its first nodes past the log head, and
 *    the commit starts of recovery mounts cut one after another, behind a
 *    torn one; the log ends where a LEB starts older than what precedes.
 *  - a commit between a rename's journal write and the deletion of the
 *    file it replaced: that commit's orphan area lists the file.
 * UBIKIT_RWGAPS_EXPORT=DIR writes results (after the recovery mount and
 * more writes, unmounted and mounted again) as bare UBIFS images
 * (DIR/NAME.img) with the tree ubikit sees (DIR/NAME.manifest, the format
 * of tests/tools/ubifs_manifest.sh) for the kernel's judgement
 * (tests/vm/ubifs_rwgaps_kernel.sh): one of each kind (c1: consolidated
 * log, g1: recovery GC, x1: a deletion replayed over a dangling xattr
 * entry, l1: an old log LEB with garbage after the log head, e1: the
 * same with its first page erased, r1: three
 * recovery mounts cut after their commit starts, s1: inode sizes fixed
 * by a recovery mount cut once, h1: a head LEB emptied by the recovery,
 * rebooted with unmapped LEBs back), or many with
 * UBIKIT_LONG_TESTS=1. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>
#include <ubikit/ubikit.h>

#include "fs/fs.h"
#include "ubi/ubi_vol_io.h"
#include "ubifs/ubifs.h"
#include "ubifs/ubifs_format.h"
#include "ubifs/ubifs_gc.h"
#include "ubifs/ubifs_journal.h"
#include "ubifs/ubifs_media.h"
#include "ubifs/ubifs_priv.h"
#include "ubifs/ubifs_tnc.h"
#include "ubifs_test_manifest.h"

/* ---- an in-memory volume with a power cut ---- */

struct memvol {
	struct ubi_vol_io vol;
	uint8_t *data;
	uint8_t *mapped;
	/* an unmapped LEB's last contents: UBI erases its PEB later, so after
	 * a cut before that erase the LEB comes back (mv_reboot_ghosts) */
	uint8_t *ghost, *has_ghost;
	uint32_t log_first, log_last; /* when set: log_write_op is the operation that */
	long log_write_op;            /* last wrote a log LEB from its start (-1: none) */
	long ops, cut_at; /* mutating operations so far; cut before op cut_at (-1: never) */
	int cut;
};

static int mv_count(struct memvol *m)
{
	if (m->cut)
		return -EIO;
	if (m->cut_at >= 0 && m->ops >= m->cut_at) {
		m->cut = 1;
		return 1; /* this operation is the cut one */
	}
	m->ops++;
	return 0;
}

static int mv_read(void *ctx, uint32_t lnum, uint32_t off, void *buf, size_t len)
{
	struct memvol *m = ctx;
	if (lnum >= m->vol.leb_count || off + len > m->vol.leb_size)
		return -EINVAL;
	memcpy(buf, m->data + (size_t)lnum * m->vol.leb_size + off, len);
	return 0;
}

static int mv_write(void *ctx, uint32_t lnum, uint32_t off, const void *buf, size_t len)
{
	struct memvol *m = ctx;
	if (lnum >= m->vol.leb_count || off + len > m->vol.leb_size || off % m->vol.min_io_size ||
	    len % m->vol.min_io_size)
		return -EINVAL;
	int c = mv_count(m);
	if (c < 0)
		return c;
	if (c == 1 && len <= m->vol.min_io_size && m->log_last)
		len = len < 240 ? len / 2 / 8 * 8 : 120; /* torn inside the unit, inside its first nodes (t_cut_recoveries) */
	else if (c == 1) /* torn: the first half of the min. I/O units */
		len = len / m->vol.min_io_size / 2 * m->vol.min_io_size;
	if (!m->mapped[lnum])
		m->has_ghost[lnum] = 0; /* a new PEB, newer than the ghost's */
	if (off == 0 && lnum >= m->log_first && lnum <= m->log_last && m->log_last)
		m->log_write_op = m->ops - (c ? 0 : 1);
	m->mapped[lnum] = 1;
	memcpy(m->data + (size_t)lnum * m->vol.leb_size + off, buf, len);
	return c ? -EIO : 0;
}

static int mv_change(void *ctx, uint32_t lnum, const void *buf, size_t len)
{
	struct memvol *m = ctx;
	if (lnum >= m->vol.leb_count || len > m->vol.leb_size)
		return -EINVAL;
	int c = mv_count(m);
	if (c)
		return -EIO;
	uint8_t *p = m->data + (size_t)lnum * m->vol.leb_size;
	memcpy(p, buf, len);
	memset(p + len, 0xFF, m->vol.leb_size - len);
	m->mapped[lnum] = 1;
	m->has_ghost[lnum] = 0;
	return 0;
}

static int mv_unmap(void *ctx, uint32_t lnum)
{
	struct memvol *m = ctx;
	if (lnum >= m->vol.leb_count)
		return -EINVAL;
	int c = mv_count(m);
	if (c)
		return -EIO;
	if (m->mapped[lnum]) {
		memcpy(m->ghost + (size_t)lnum * m->vol.leb_size, m->data + (size_t)lnum * m->vol.leb_size,
		       m->vol.leb_size);
		m->has_ghost[lnum] = 1;
	}
	memset(m->data + (size_t)lnum * m->vol.leb_size, 0xFF, m->vol.leb_size);
	m->mapped[lnum] = 0;
	return 0;
}

static int mv_map(void *ctx, uint32_t lnum)
{
	struct memvol *m = ctx;
	if (lnum >= m->vol.leb_count)
		return -EINVAL;
	if (m->mapped[lnum])
		return -EBADMSG;
	int c = mv_count(m);
	if (c)
		return -EIO;
	m->mapped[lnum] = 1;
	m->has_ghost[lnum] = 0;
	return 0;
}

static int mv_is_mapped(void *ctx, uint32_t lnum)
{
	struct memvol *m = ctx;
	return lnum < m->vol.leb_count ? m->mapped[lnum] : -EINVAL;
}

static int mv_sync(void *ctx)
{
	return ((struct memvol *)ctx)->cut ? -EIO : 0;
}

static void mv_init(struct memvol *m, uint32_t leb_size, uint32_t lebs, uint32_t min_io)
{
	memset(m, 0, sizeof(*m));
	m->data = malloc((size_t)leb_size * lebs);
	m->mapped = calloc(lebs, 1);
	m->ghost = malloc((size_t)leb_size * lebs);
	m->has_ghost = calloc(lebs, 1);
	assert_non_null(m->data);
	assert_non_null(m->mapped);
	assert_non_null(m->ghost);
	assert_non_null(m->has_ghost);
	memset(m->data, 0xFF, (size_t)leb_size * lebs);
	m->cut_at = -1;
	m->vol = (struct ubi_vol_io){.ctx = m,
				     .leb_size = leb_size,
				     .leb_count = lebs,
				     .min_io_size = min_io,
				     .max_write_size = min_io,
				     .read = mv_read,
				     .write = mv_write,
				     .change = mv_change,
				     .unmap = mv_unmap,
				     .map = mv_map,
				     .is_mapped = mv_is_mapped,
				     .sync = mv_sync};
}

/* the flash as it is after the power cut, rebooted */
static void mv_copy(struct memvol *dst, const struct memvol *src)
{
	mv_init(dst, src->vol.leb_size, src->vol.leb_count, src->vol.min_io_size);
	memcpy(dst->data, src->data, (size_t)src->vol.leb_size * src->vol.leb_count);
	memcpy(dst->mapped, src->mapped, src->vol.leb_count);
	memcpy(dst->ghost, src->ghost, (size_t)src->vol.leb_size * src->vol.leb_count);
	memcpy(dst->has_ghost, src->has_ghost, src->vol.leb_count);
	dst->log_first = src->log_first;
	dst->log_last = src->log_last;
	dst->ops = src->ops;
}

/* the reboot after a cut at which no unmapped LEB had been erased yet:
 * each comes back with its last contents (the worst case UBI allows) */
static void mv_reboot_ghosts(struct memvol *m)
{
	for (uint32_t l = 0; l < m->vol.leb_count; l++)
		if (m->has_ghost[l] && !m->mapped[l]) {
			memcpy(m->data + (size_t)l * m->vol.leb_size, m->ghost + (size_t)l * m->vol.leb_size,
			       m->vol.leb_size);
			m->mapped[l] = 1;
			m->has_ghost[l] = 0;
		}
}

static void mv_free(struct memvol *m)
{
	free(m->data);
	free(m->mapped);
	free(m->ghost);
	free(m->has_ghost);
}

/* Unmount fs (on m); when it is the n-th (from 1) result of a kind to
 * export (the first by default, every one with UBIKIT_LONG_TESTS=1), its
 * manifest first and the unmounted image after. */
static int long_tests(void)
{
	const char *lng = getenv("UBIKIT_LONG_TESTS");
	return lng && !strcmp(lng, "1");
}

/* exporting for the VM only (not the long run): the loops stop after
 * their first export */
static int export_only(void)
{
	const char *dir = getenv("UBIKIT_RWGAPS_EXPORT");
	return dir && *dir && !long_tests();
}

/* returns 1 when it exported */
static int unmount_export(const struct memvol *m, struct ubikit_fs *fs, const char *kind, unsigned n)
{
	const char *dir = getenv("UBIKIT_RWGAPS_EXPORT");
	if (!dir || !*dir || n == 0 || (n > 1 && !long_tests())) {
		assert_int_equal(ubikit_unmount(fs), 0);
		return 0;
	}
	char path[512];
	snprintf(path, sizeof(path), "%s/%s%u.manifest", dir, kind, n);
	char *man = tm_manifest(fs);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(man, f);
	fclose(f);
	free(man);
	assert_int_equal(ubikit_unmount(fs), 0);
	snprintf(path, sizeof(path), "%s/%s%u.img", dir, kind, n);
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(m->data, m->vol.leb_size, m->vol.leb_count, f), m->vol.leb_count);
	fclose(f);
	return 1;
}

/* ---- the file system ---- */

static struct ubikit_fs *mount_ok(struct memvol *m, const char *ctx)
{
	struct ubikit_mount_opts o = {0};
	struct ubikit_fs *fs = NULL;
	char msg[512] = "";
	int err = ubikit_mount_ex(&m->vol, &o, &fs, msg, sizeof(msg));
	if (err)
		fail_msg("%s: read-write mount: %d %s", ctx, err, msg);
	return fs;
}

static void check(struct ubikit_fs *fs, const char *ctx)
{
	if (ubifs_check(fs_ubifs(fs)))
		fail_msg("%s: ubifs_check: %s", ctx, ubifs_errmsg(fs_ubifs(fs)));
}

static void fill(uint8_t *buf, size_t len, unsigned seed)
{
	uint32_t x = seed * 2654435761u + 1;
	for (size_t i = 0; i < len; i++) {
		x = x * 1103515245u + 12345u;
		buf[i] = (uint8_t)(x >> 16);
	}
}

/* write a file of len bytes (pattern seed) and fsync it; the status of
 * the first failing call (after a cut) */
static int put_file(struct ubikit_fs *fs, const char *path, size_t len, unsigned seed)
{
	uint8_t *buf = malloc(len ? len : 1);
	assert_non_null(buf);
	fill(buf, len, seed);
	struct ubikit_file *f = NULL;
	int err = ubikit_open(fs, path, O_CREAT | O_TRUNC | O_WRONLY, 0644, &f);
	/* a short write (some blocks fitted) is followed by the rest, which
	 * then reports the error */
	for (size_t done = 0; !err && done < len;) {
		ssize_t w = ubikit_write(f, buf + done, len - done);
		if (w <= 0)
			err = w < 0 ? (int)w : -EIO;
		else
			done += (size_t)w;
	}
	if (!err)
		err = ubikit_fsync(f);
	if (f) {
		int e = ubikit_close(f);
		if (!err)
			err = e;
	}
	free(buf);
	return err;
}

static void want_file(struct ubikit_fs *fs, const char *path, size_t len, unsigned seed, const char *ctx)
{
	uint8_t *want = malloc(len + 1), *got = malloc(len + 1);
	assert_non_null(want);
	assert_non_null(got);
	fill(want, len, seed);
	struct ubikit_file *f = NULL;
	int err = ubikit_open(fs, path, O_RDONLY, 0, &f);
	if (err)
		fail_msg("%s: %s: open %d", ctx, path, err);
	ssize_t n = ubikit_pread(f, got, len + 1, 0);
	ubikit_close(f);
	if (n != (ssize_t)len || memcmp(want, got, len))
		fail_msg("%s: %s: %zd bytes read, want %zu (or different contents)", ctx, path, n, len);
	free(want);
	free(got);
}

/* ---- log consolidation ---- */

#define NAND_LEB 126976u
#define NAND_IO 2048u
#define C_LEBS 24u
#define C_FILES 6

/* an empty file system (no compression) on a new volume of lebs LEBs */
static void mv_format(struct memvol *m, uint32_t lebs)
{
	mv_init(m, NAND_LEB, lebs, NAND_IO);
	struct util_err e = {0};
	struct ubifs_format_opts fo = {.compr = UBIFS_COMPR_NONE};
	if (ubifs_format(&m->vol, &fo, &e))
		fail_msg("format: %s", e.msg);
}

static size_t c_len(int i)
{
	return 3000u + (size_t)i * 9000u;
}

/* the workload: files fsync'ed (they must survive), a commit (the cut
 * range), more fsync'ed files. k_commit, k_end: op counts at those points. */
static int c_workload(struct memvol *m, long *k_commit, long *k_end)
{
	struct ubikit_fs *fs = mount_ok(m, "workload");
	int err = ubikit_mkdir(fs, "/d", 0755);
	char path[64];
	for (int i = 0; !err && i < C_FILES; i++) {
		snprintf(path, sizeof(path), "/d/f%d", i);
		err = put_file(fs, path, c_len(i), (unsigned)i);
	}
	if (!err && k_commit)
		*k_commit = m->ops;
	if (!err)
		err = ubikit_sync(fs);
	for (int i = 0; !err && i < 3; i++) {
		snprintf(path, sizeof(path), "/d/g%d", i);
		err = put_file(fs, path, 5000, 100u + (unsigned)i);
	}
	if (!err && k_end)
		*k_end = m->ops;
	if (err) {
		assert_true(m->cut);
		ubikit_unmount(fs); /* fails: the power is off; frees everything */
	} else {
		assert_false(m->cut);
		assert_int_equal(ubikit_unmount(fs), 0);
	}
	return err;
}

static void want_c_files(struct ubikit_fs *fs, const char *ctx)
{
	char path[64];
	for (int i = 0; i < C_FILES; i++) {
		snprintf(path, sizeof(path), "/d/f%d", i);
		want_file(fs, path, c_len(i), (unsigned)i, ctx);
	}
}

/* power cuts during the read-write mount that consolidated the log (its
 * rewrite of the log, the recovery's commit): the mount after each must
 * still find the journal the consolidated log names */
static void nested_cuts(const struct memvol *pre, long mount_ops, const char *ctx0)
{
	for (long k = 0; k < mount_ops; k++) {
		char ctx[256];
		snprintf(ctx, sizeof(ctx), "%.100s, then at operation %ld of the consolidating mount", ctx0, k);
		struct memvol w, r;
		mv_copy(&w, pre);
		w.cut_at = k;
		struct ubikit_mount_opts o = {0};
		struct ubikit_fs *fs = NULL;
		if (!ubikit_mount(&w.vol, &o, &fs)) {
			/* the cut came after the mount's last write */
			assert_true(w.cut || w.ops <= k);
			ubikit_unmount(fs);
		}
		mv_copy(&r, &w);
		mv_free(&w);
		fs = mount_ok(&r, ctx);
		check(fs, ctx);
		want_c_files(fs, ctx);
		assert_int_equal(ubikit_unmount(fs), 0);
		mv_free(&r);
	}
}

static void t_log_consolidate(void **state)
{
	(void)state;
	struct memvol base;
	mv_init(&base, NAND_LEB, C_LEBS, NAND_IO);
	struct util_err e = {0};
	struct ubifs_format_opts fo = {.compr = UBIFS_COMPR_LZO};
	if (ubifs_format(&base.vol, &fo, &e))
		fail_msg("format: %s", e.msg);
	struct memvol m;
	mv_copy(&m, &base);
	long k0 = 0, k1 = 0;
	assert_int_equal(c_workload(&m, &k0, &k1), 0);
	mv_free(&m);
	assert_true(k1 > k0);
	unsigned consolidated = 0, cuts = 0;
	for (long k = k0; k < k1; k++) {
		char ctx[64];
		snprintf(ctx, sizeof(ctx), "cut at volume operation %ld", k);
		struct memvol w, r;
		mv_copy(&w, &base);
		w.cut_at = k;
		assert_int_not_equal(c_workload(&w, NULL, NULL), 0);
		mv_copy(&r, &w);
		mv_free(&w);
		struct memvol pre;
		mv_copy(&pre, &r);
		struct ubikit_fs *fs = mount_ok(&r, ctx);
		struct ubifs_fs_info info;
		ubifs_get_info(fs_ubifs(fs), &info);
		/* the first consolidating mount by default, every one with
		 * UBIKIT_LONG_TESTS=1 */
		if (info.log_consolidated && !export_only() && (consolidated == 0 || long_tests()))
			nested_cuts(&pre, r.ops, ctx);
		mv_free(&pre);
		assert_int_equal(info.sb.log_lebs, 2); /* the kernel's default here */
		consolidated += info.log_consolidated;
		check(fs, ctx);
		want_c_files(fs, ctx);
		/* writing and committing go on */
		assert_int_equal(put_file(fs, "/after", 40000, 7), 0);
		assert_int_equal(ubikit_sync(fs), 0);
		assert_int_equal(put_file(fs, "/after2", 9000, 8), 0);
		check(fs, ctx);
		assert_int_equal(ubikit_unmount(fs), 0);
		fs = mount_ok(&r, ctx);
		check(fs, ctx);
		want_file(fs, "/after", 40000, 7, ctx);
		want_file(fs, "/after2", 9000, 8, ctx);
		int exported = unmount_export(&r, fs, "c", info.log_consolidated ? consolidated : 0);
		mv_free(&r);
		cuts++;
		if (exported && export_only())
			break;
	}
	mv_free(&base);
	printf("log consolidation: %u cuts in the commit, %u mounts consolidated a full log\n", cuts,
	       consolidated);
	assert_true(consolidated > 0);
}

/* ---- recovery with no empty LEB: GC into the GC head ---- */

#define G_LEBS 22u
#define G_MAXF 64
#define G_LEN 15000u

static void t_rcvry_gc(void **state)
{
	(void)state;
	struct memvol m;
	mv_format(&m, G_LEBS);
	struct ubikit_fs *fs = mount_ok(&m, "fill");
	unsigned seed[G_MAXF] = {0};
	int live[G_MAXF] = {0}, n = 0, err = 0;
	char path[64];
	/* full: files until ENOSPC (incompressible data) */
	while (n < G_MAXF) {
		snprintf(path, sizeof(path), "/f%d", n);
		err = put_file(fs, path, G_LEN, (unsigned)n);
		if (err)
			break;
		seed[n] = (unsigned)n;
		live[n++] = 1;
	}
	if (err != -ENOSPC)
		fail_msg("filling: file %d: %d (%s), want -ENOSPC", n, err, ubikit_errmsg(fs));
	assert_true(n > 4);
	ubikit_unlink(fs, path); /* the one that did not fit */
	/* churn: one file deleted, another rewritten (GC makes room in the
	 * dirt), each state after an fsync is a power cut's image */
	unsigned via_gc = 0, snaps = 0;
	int rounds = long_tests() ? 4 * n : n; /* UBIKIT_LONG_TESTS=1: more churn */
	for (int r = 0; r < rounds; r++) {
		int del = (r * 7) % n, rw = (r * 5 + 3) % n;
		snprintf(path, sizeof(path), "/f%d", del);
		if (live[del] && ubikit_unlink(fs, path) == 0)
			live[del] = 0;
		snprintf(path, sizeof(path), "/f%d", rw);
		unsigned sd = 1000u + (unsigned)r;
		err = put_file(fs, path, G_LEN, sd);
		if (err == -ENOSPC) {
			ubikit_unlink(fs, path);
			live[rw] = 0;
			continue;
		}
		assert_int_equal(err, 0);
		live[rw] = 1;
		seed[rw] = sd;
		/* the flash now, after a cut: recovery must mount it read-write */
		char ctx[96];
		snprintf(ctx, sizeof(ctx), "power cut after round %d", r);
		struct memvol c;
		mv_copy(&c, &m);
		struct ubikit_fs *cfs = mount_ok(&c, ctx);
		struct ubifs_fs_info info;
		ubifs_get_info(fs_ubifs(cfs), &info);
		assert_true(info.need_recovery);
		via_gc += info.rcvry_gc_head;
		check(cfs, ctx);
		for (int i = 0; i < n; i++) {
			if (!live[i])
				continue;
			snprintf(path, sizeof(path), "/f%d", i);
			want_file(cfs, path, G_LEN, seed[i], ctx);
		}
		assert_int_equal(ubikit_unmount(cfs), 0);
		cfs = mount_ok(&c, ctx);
		check(cfs, ctx);
		int exported = unmount_export(&c, cfs, "g", info.rcvry_gc_head && via_gc % 20 == 1 ? via_gc / 20 + 1 : 0);
		mv_free(&c);
		snaps++;
		if (exported && export_only())
			break;
	}
	assert_int_equal(ubikit_unmount(fs), 0);
	mv_free(&m);
	printf("recovery GC: %u power-cut images of a full file system, %u recovered by GC into the GC head\n", snaps,
	       via_gc);
	assert_true(via_gc > 0);
}

/* ---- the replay of a deletion meets a dangling xattr entry ---- */

/* the index's branch for key (inum, type) at or after hash 0: its LEB, and
 * the inode a (x)entry names */
static uint32_t branch_lnum(struct ubikit_fs *fs, uint64_t inum, unsigned type, uint64_t *target)
{
	struct ubifs_fs *u = fs_ubifs(fs);
	struct ubifs_key k = ubifs_key_make((uint32_t)inum, type, 0);
	struct ubifs_tnc_pos pos;
	assert_int_equal(ubifs_tnc_seek(u, &k, 0, &pos), 0);
	struct ubifs_zbranch zb = *ubifs_tnc_at(&pos);
	assert_int_equal(zb.key.inum, inum);
	assert_int_equal(ubifs_key_type(&zb.key), type);
	if (target) {
		static uint8_t node[UBIFS_MAX_NODE_SZ];
		assert_int_equal(ubifs_tnc_read_leaf(u, &zb, node), 0);
		struct ubifs_dent_node d;
		ubifs_dent_unpack(node, &d);
		*target = d.inum;
	}
	return zb.lnum;
}

/* A file with an xattr, committed; then deleted in the journal, and the
 * LEB holding its xattr entry, now all dirt, collected and unmapped (the
 * kernel's GC frees such a LEB at once; a journal head may reuse it). After
 * a power cut the committed index still names the entry there, and the
 * replay of the file's deletion walks its xattr entries: that branch is
 * dangling, as the replay's name lookups already accept (kernel
 * fallible_resolve_collision). The mount must succeed, the file and its
 * xattr inode be gone, the check pass. (Torture seed 201 met it.) */
static void t_replay_dangling_xent(void **state)
{
	(void)state;
	struct memvol m;
	mv_format(&m, C_LEBS);
	struct ubikit_fs *fs = mount_ok(&m, "write");
	assert_int_equal(put_file(fs, "/h", 100, 1), 0);
	static char val[300];
	memset(val, 'v', sizeof(val));
	assert_int_equal(ubikit_setxattr(fs, "/h", "user.a", val, sizeof(val), UBIKIT_XATTR_CREATE), 0);
	struct ubikit_stat st;
	assert_int_equal(ubikit_stat(fs, "/h", &st), 0);
	uint64_t host = st.ino, xinum = 0;
	uint32_t a = branch_lnum(fs, host, UBIFS_XENT_KEY, &xinum);
	assert_true(xinum > host);
	/* more entries until the base head has left LEB a */
	char path[64];
	int n = 0;
	for (; n < 2000; n++) {
		snprintf(path, sizeof(path), "/n%d", n);
		struct ubikit_file *f;
		assert_int_equal(ubikit_open(fs, path, O_CREAT | O_WRONLY, 0644, &f), 0);
		assert_int_equal(ubikit_close(f), 0);
		assert_int_equal(ubikit_stat(fs, path, &st), 0);
		if (branch_lnum(fs, st.ino, UBIFS_INO_KEY, NULL) != a)
			break;
	}
	assert_true(n < 2000);
	assert_int_equal(ubikit_sync(fs), 0); /* the committed index: the xattr entry in LEB a */
	assert_int_equal(ubikit_unlink(fs, "/h"), 0);
	for (int i = 1; i <= n; i++) { /* /n0 stays: GC has a node to move */
		snprintf(path, sizeof(path), "/n%d", i);
		assert_int_equal(ubikit_unlink(fs, path), 0);
	}
	assert_int_equal(ubifs_jnl_sync_all(fs_ubifs(fs)), 0);
	/* GC collects LEB a (moves /n0's nodes to the GC head) */
	for (int i = 0; i < 8 && m.mapped[a]; i++) {
		/* kept as the GC LEB (then -ENOSPC: nothing else to collect), unmapped */
		int r = ubifs_garbage_collect(fs_ubifs(fs), 1);
		if (r < 0 && r != -ENOSPC)
			fail_msg("GC: %d (%s)", r, ubikit_errmsg(fs));
	}
	assert_false(m.mapped[a]);
	/* power cut now */
	struct memvol c;
	mv_copy(&c, &m);
	ubikit_unmount(fs); /* the abandoned mount: its state goes with it */
	mv_free(&m);
	struct ubikit_fs *cfs = mount_ok(&c, "after the cut");
	check(cfs, "after the cut");
	assert_int_equal(ubikit_stat(cfs, "/h", &st), -ENOENT);
	assert_int_equal(ubikit_stat_ino(cfs, xinum, &st), -ENOENT);
	assert_int_equal(ubikit_stat(cfs, "/n0", &st), 0);
	assert_int_equal(ubikit_stat(cfs, "/n1", &st), -ENOENT);
	assert_int_equal(ubikit_unmount(cfs), 0);
	cfs = mount_ok(&c, "mounted again");
	check(cfs, "mounted again");
	unmount_export(&c, cfs, "x", 1); /* for the kernel's judgement */
	mv_free(&c);
}

/* ---- a log LEB of an earlier round, brought back by a cut erase ---- */

static uint64_t le64_at(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* The log LEB after the head was unmapped at a commit; its erase was cut
 * after the first pages, so after the reboot UBI maps it again with its
 * old first nodes and garbage after them (the simulator's cut erase does
 * this: torture powercut -d nand2k -s 101, cycle 87991). Its first node is
 * older than the commit start: the end of the log, whatever follows. The
 * mount must recover every fsync'ed file, the check pass, and the log go on
 * through that LEB later. */
/* first_page: 0 the ghost's first pages intact, 1 erased, 2 garbage */
static void log_ghost(int first_page)
{
	struct memvol m;
	mv_format(&m, C_LEBS);
	struct ubikit_fs *fs = mount_ok(&m, "write");
	struct ubifs_fs_info info;
	assert_int_equal(ubifs_get_info(fs_ubifs(fs), &info), 0);
	uint32_t first = info.log_first, last = info.log_last, nlog = last - first + 1;
	uint8_t *old = calloc(nlog, NAND_LEB), *have = calloc(nlog, 1);
	assert_non_null(old);
	assert_non_null(have);
	char path[64];
	int files = 0;
	uint32_t ghost = UINT32_MAX;
	for (int r = 0; r < 40 && ghost == UINT32_MAX; r++) {
		snprintf(path, sizeof(path), "/f%d", files);
		assert_int_equal(put_file(fs, path, 2000u + (size_t)files * 700u, 500u + (unsigned)files), 0);
		files++;
		if (r % 2 == 1)
			assert_int_equal(ubikit_sync(fs), 0);
		/* the head: the mapped log LEB whose first node is the newest */
		uint32_t head = UINT32_MAX;
		uint64_t newest = 0;
		for (uint32_t l = first; l <= last; l++) {
			const uint8_t *p = m.data + (size_t)l * NAND_LEB;
			if (m.mapped[l] && le64_at(p) % 0x100000000ull == UBIFS_NODE_MAGIC && le64_at(p + 8) >= newest) {
				newest = le64_at(p + 8);
				head = l;
			}
		}
		assert_true(head != UINT32_MAX);
		uint32_t next = head == last ? first : head + 1;
		if (!m.mapped[next] && have[next - first]) {
			ghost = next;
			break;
		}
		for (uint32_t l = first; l <= last; l++)
			if (m.mapped[l]) {
				memcpy(old + (size_t)(l - first) * NAND_LEB, m.data + (size_t)l * NAND_LEB, NAND_LEB);
				have[l - first] = 1;
			}
	}
	assert_true(ghost != UINT32_MAX);
	/* power cut now; the erase of the ghost's PEB was cut after two pages */
	struct memvol c;
	mv_copy(&c, &m);
	ubikit_unmount(fs); /* the abandoned mount */
	mv_free(&m);
	uint8_t *g = c.data + (size_t)ghost * NAND_LEB;
	memcpy(g, old + (size_t)(ghost - first) * NAND_LEB, NAND_LEB);
	if (first_page) {
		/* the first page erased, the second still holding old nodes
		 * (torture powercut -d nand2k -s 101, cycle 146662); or the
		 * first page garbage (-s 23, cycle 2178): the log head LEB had
		 * room for more references, so the log ended there */
		memcpy(g + NAND_IO, g, NAND_IO);
		if (first_page == 1)
			memset(g, 0xFF, NAND_IO);
		else
			fill(g, NAND_IO, 55);
	}
	fill(g + 2 * NAND_IO, NAND_LEB - 2 * NAND_IO, 77);
	c.mapped[ghost] = 1;
	struct ubikit_fs *cfs = mount_ok(&c, first_page == 1   ? "an old log LEB with its first page erased after the log head"
					     : first_page == 2 ? "an old log LEB with garbage in its first page after the log head"
							       : "an old log LEB with garbage after the log head");
	check(cfs, "after the cut");
	for (int i = 0; i < files; i++) {
		snprintf(path, sizeof(path), "/f%d", i);
		want_file(cfs, path, 2000u + (size_t)i * 700u, 500u + (unsigned)i, "after the cut");
	}
	/* the log goes on through the ghost (unmapped before its reuse) */
	for (int r = 0; r < 3 * (int)nlog; r++) {
		snprintf(path, sizeof(path), "/g%d", r);
		assert_int_equal(put_file(cfs, path, 3000, 900u + (unsigned)r), 0);
		assert_int_equal(ubikit_sync(cfs), 0);
	}
	check(cfs, "after more commits");
	assert_int_equal(ubikit_unmount(cfs), 0);
	/* the ghost was unmapped when the log head came back to it */
	uint8_t junk[NAND_IO];
	fill(junk, sizeof(junk), 77);
	assert_true(memcmp(c.data + (size_t)ghost * NAND_LEB + 2 * NAND_IO, junk, NAND_IO) != 0);
	cfs = mount_ok(&c, "mounted again");
	check(cfs, "mounted again");
	for (int i = 0; i < files; i++) {
		snprintf(path, sizeof(path), "/f%d", i);
		want_file(cfs, path, 2000u + (size_t)i * 700u, 500u + (unsigned)i, "mounted again");
	}
	unmount_export(&c, cfs, first_page == 1 ? "e" : first_page == 2 ? "b" : "l", 1); /* for the kernel's judgement */
	mv_free(&c);
	free(old);
	free(have);
}

static void t_log_ghost(void **state)
{
	(void)state;
	log_ghost(0);
}

/* the same LEB with its first page erased and the next one intact: a log
 * LEB is written from its start, so it holds nothing of the log */
static void t_log_ghost_erased_start(void **state)
{
	(void)state;
	log_ghost(1);
}

/* the same LEB with garbage in its first page (a cut erase) and old nodes
 * after it: the head LEB before it has room for another reference, so the
 * log cannot go on into it */
static void t_log_ghost_garbage_start(void **state)
{
	(void)state;
	log_ghost(2);
}

/* ---- a commit between a rename's journal write and the deletion ---- */

#define R_ITER 4000
#define R_MAX 64

static uint64_t cmt_no_of(struct ubikit_fs *fs)
{
	return fs_ubifs(fs)->cmt_no;
}

/* Renames over an existing file (its last link goes), the base head moved
 * on by an xattr of varying size between them. rng: the volume operations
 * [from, to) of each rename during which a commit ran (when not NULL). */
static int r_workload(struct memvol *m, long *rng, int *nrng)
{
	struct ubikit_fs *fs = mount_ok(m, "rename workload");
	static char val[3600];
	memset(val, 'p', sizeof(val));
	int err = put_file(fs, "/keep", 10, 1);
	for (int i = 0; !err && i < R_ITER; i++) {
		/* no fsync: the base head fills without padding, so the LEB
		 * ends fall anywhere in the renames' writes */
		struct ubikit_file *f = NULL;
		err = ubikit_open(fs, "/t", O_CREAT | O_WRONLY, 0644, &f);
		if (!err)
			err = ubikit_close(f);
		if (!err)
			err = ubikit_setxattr(fs, "/keep", "user.p", val, 300 + (size_t)i * 379 % 3000, 0);
		if (!err)
			err = ubikit_open(fs, "/s", O_CREAT | O_WRONLY, 0644, &f);
		if (!err)
			err = ubikit_close(f);
		/* every other replaced file is open: deleted at its close */
		struct ubikit_file *h = NULL;
		if (!err && i % 2)
			err = ubikit_open(fs, "/t", O_RDONLY, 0, &h);
		for (int step = 0; step < 2 && !err; step++) {
			uint64_t c0 = cmt_no_of(fs);
			long o0 = m->ops;
			if (step == 0)
				err = ubikit_rename(fs, "/s", "/t", 0);
			else if (h)
				err = ubikit_close(h);
			if (!err && rng && cmt_no_of(fs) != c0 && *nrng < R_MAX) {
				rng[2 * *nrng] = o0;
				rng[2 * *nrng + 1] = m->ops;
				(*nrng)++;
			}
		}
	}
	if (err) {
		assert_true(m->cut);
		ubikit_unmount(fs);
	} else {
		assert_false(m->cut);
		assert_int_equal(ubikit_unmount(fs), 0);
	}
	return err;
}

/* The file a rename replaces loses its last link in the rename's journal
 * write and is deleted after it. When a commit runs in between (the
 * rename's next write needs a new bud and the journal is full), that
 * commit's index holds the inode with no link: the orphan area of the same
 * commit must list it, as the kernel adds the orphan inside the journal
 * update. A cut at every volume operation of each rename that spanned a
 * commit, and of each close that deleted a replaced open file and spanned
 * one: the recovery mount must pass the check (torture powercut-recovery
 * -d nor -s 102 met "link count 0 and is not an orphan"). */
static void t_rename_orphan(void **state)
{
	(void)state;
	struct memvol base;
	mv_format(&base, C_LEBS);
	long rng[2 * R_MAX];
	int nrng = 0;
	struct memvol w;
	mv_copy(&w, &base);
	assert_int_equal(r_workload(&w, rng, &nrng), 0);
	mv_free(&w);
	assert_true(nrng > 0);
	unsigned cuts = 0;
	for (int r = 0; r < nrng; r++)
		for (long k = rng[2 * r]; k < rng[2 * r + 1]; k++) {
			mv_copy(&w, &base);
			w.cut_at = k;
			r_workload(&w, NULL, NULL);
			assert_true(w.cut);
			struct memvol c;
			mv_copy(&c, &w);
			mv_free(&w);
			char ctx[96];
			snprintf(ctx, sizeof(ctx), "cut at volume operation %ld (rename %d of %d)", k, r, nrng);
			struct ubikit_fs *fs = mount_ok(&c, ctx);
			check(fs, ctx);
			assert_int_equal(ubikit_unmount(fs), 0);
			mv_free(&c);
			cuts++;
		}
	printf("renames over a file (or closes of the replaced file) that spanned a commit: %d, %u cuts in them\n", nrng, cuts);
	mv_free(&base);
}

/* ---- recovery mounts cut after their commit start, unmapped LEBs coming back ---- */

#define T_FILES 10
#define T_LEBS 32u /* the kernel's defaults give 3 log LEBs */

static size_t t_len(int i)
{
	return 4000u + (size_t)i * 2500u;
}

/* A mount attempt on m cut before its operation k (counted from now): 1
 * when the cut came inside it, 0 when it mounted before (then unmounted
 * cleanly, nothing cut). The op of its last commit start: *cs_op. */
static int cut_mount(struct memvol *m, long k, long *cs_op)
{
	long base = m->ops;
	m->cut_at = k < 0 ? -1 : base + k;
	m->log_write_op = -1;
	struct ubikit_mount_opts o = {0};
	struct ubikit_fs *fs = NULL;
	char msg[512] = "";
	int err = ubikit_mount_ex(&m->vol, &o, &fs, msg, sizeof(msg));
	int cut = m->cut;
	if (cs_op)
		*cs_op = m->log_write_op >= 0 ? m->log_write_op - base : -1;
	if (!err)
		ubikit_unmount(fs); /* fails after a cut: the mount is abandoned */
	if (!cut && err)
		fail_msg("mount failed without a cut: %d %s", err, msg);
	return cut;
}

/* the flash after a cut, rebooted with every unmapped LEB back */
static void reboot(struct memvol *dst, const struct memvol *src)
{
	mv_copy(dst, src);
	dst->ops = 0;
	mv_reboot_ghosts(dst);
}

/* After a cut, three recovery mounts in a row are each cut just after (or
 * inside) the write of their commit start to the next log LEB, and at
 * every reboot every unmapped LEB comes back (the worst case UBI allows):
 * a mount whose log is then full consolidates it, unmapping the earlier
 * mounts' commit starts, and the next cut brings them back after a torn
 * one (torture powercut-recovery -d nor -s 102: "unrecoverable log
 * corruption in LEB 5"). The fourth mount must recover every fsync'ed
 * file and pass the check. */
static void t_cut_recoveries(void **state)
{
	(void)state;
	struct memvol m;
	mv_format(&m, T_LEBS);
	struct ubikit_fs *fs = mount_ok(&m, "write");
	struct ubifs_fs_info info;
	assert_int_equal(ubifs_get_info(fs_ubifs(fs), &info), 0);
	assert_true(info.log_last - info.log_first + 1 >= 3);
	m.log_first = info.log_first;
	m.log_last = info.log_last;
	char path[64];
	for (int i = 0; i < T_FILES; i++) {
		snprintf(path, sizeof(path), "/w%d", i);
		assert_int_equal(put_file(fs, path, t_len(i), 300u + (unsigned)i), 0);
		if (i % 4 == 3)
			assert_int_equal(ubikit_sync(fs), 0);
	}
	struct memvol pre;
	reboot(&pre, &m); /* power cut now */
	ubikit_unmount(fs);
	mv_free(&m);
	unsigned runs = 0, full = 0;
	/* each stage: cut inside the commit start's write (torn), or 1 or 2
	 * operations after it */
	for (int d1 = 0; d1 < 3; d1++)
		for (int d2 = 0; d2 < 3; d2++)
			for (int d3 = 0; d3 < 3; d3++) {
				int d[3] = {d1, d2, d3};
				struct memvol cur;
				mv_copy(&cur, &pre);
				int stages = 0;
				for (int st = 0; st < 3; st++) {
					struct memvol probe;
					mv_copy(&probe, &cur);
					long cs = -1;
					cut_mount(&probe, -1, &cs); /* where this mount writes its commit start */
					mv_free(&probe);
					if (cs < 0)
						break;
					struct memvol w;
					mv_copy(&w, &cur);
					if (!cut_mount(&w, cs + d[st], NULL)) {
						mv_free(&w);
						break;
					}
					mv_free(&cur);
					reboot(&cur, &w);
					mv_free(&w);
					stages++;
				}
				char ctx[96];
				snprintf(ctx, sizeof(ctx), "recovery mounts cut at their commit start +%d, +%d, +%d", d1, d2, d3);
				struct ubikit_fs *cfs = mount_ok(&cur, ctx);
				check(cfs, ctx);
				for (int i = 0; i < T_FILES; i++) {
					snprintf(path, sizeof(path), "/w%d", i);
					want_file(cfs, path, t_len(i), 300u + (unsigned)i, ctx);
				}
				if (runs == 0)
					unmount_export(&cur, cfs, "r", 1); /* for the kernel's judgement */
				else
					assert_int_equal(ubikit_unmount(cfs), 0);
				mv_free(&cur);
				runs++;
				full += stages == 3;
			}
	printf("cut recoveries: %u, %u of them after three cut recovery mounts\n", runs, full);
	mv_free(&pre);
}

/* ---- inode sizes fixed before the recovery's commit ---- */

#define S_BIG 3000u   /* /big as fsync'ed */
#define S_EXT 60000u  /* then written up to here, not synced */
#define S_FILES 64

/* How many inodes the journal left with data beyond their size (a
 * read-only mount's size fixes) */
static size_t size_fixes(struct memvol *m)
{
	struct memvol r;
	mv_copy(&r, m);
	struct ubikit_mount_opts o = {.flags = UBIKIT_MOUNT_RDONLY};
	struct ubikit_fs *fs = NULL;
	char msg[512] = "";
	int err = ubikit_mount_ex(&r.vol, &o, &fs, msg, sizeof(msg));
	if (err)
		fail_msg("read-only mount after the cut: %d %s", err, msg);
	size_t n = fs_ubifs(fs)->size_fix_cnt;
	ubikit_unmount(fs);
	mv_free(&r);
	return n;
}

/* The workload: a full file system with every other file deleted (each
 * LEB half dirty, so GC runs and the GC head has a bud with room), /big
 * fsync'ed at S_BIG bytes, then extended to S_EXT and written back by a
 * sync. k0, k1 (uncut run): the op counts before the extension and
 * after the sync; live: which /fN are left. With a cut the sync fails. */
static int s_workload(struct memvol *m, long *k0, long *k1, int *live)
{
	struct ubikit_fs *fs = mount_ok(m, "write");
	char path[64];
	int n = 0, err = 0;
	while (n < S_FILES) {
		snprintf(path, sizeof(path), "/f%d", n);
		err = put_file(fs, path, G_LEN, 600u + (unsigned)n);
		if (err)
			break;
		live[n++] = 1;
	}
	assert_int_equal(err, -ENOSPC);
	assert_true(n > 8);
	ubikit_unlink(fs, path); /* the one that did not fit */
	for (int i = 0; i < n; i++) {
		if (i % 2 && (i < n / 4 || i >= 3 * n / 4))
			continue; /* kept: every other file, none in the middle half */
		snprintf(path, sizeof(path), "/f%d", i);
		assert_int_equal(ubikit_unlink(fs, path), 0);
		live[i] = 0;
	}
	assert_int_equal(ubikit_sync(fs), 0);
	/* new files in the dirt: GC makes their room, through the GC head */
	for (int i = 0; i < n / 6; i++) {
		snprintf(path, sizeof(path), "/g%d", i);
		assert_int_equal(put_file(fs, path, G_LEN, 700u + (unsigned)i), 0);
	}
	assert_int_equal(put_file(fs, "/big", S_BIG, 77), 0);
	if (k0)
		*k0 = m->ops;
	uint8_t *ext = malloc(S_EXT);
	assert_non_null(ext);
	fill(ext, S_EXT, 78);
	struct ubikit_file *f = NULL;
	assert_int_equal(ubikit_open(fs, "/big", O_WRONLY, 0, &f), 0);
	ssize_t w = ubikit_pwrite(f, ext + S_BIG, S_EXT - S_BIG, S_BIG);
	free(ext);
	err = w == (ssize_t)(S_EXT - S_BIG) ? ubikit_sync(fs) : w < 0 ? (int)w : -EIO;
	if (k1)
		*k1 = m->ops;
	ubikit_close(f);
	if (err) {
		assert_true(m->cut);
		ubikit_unmount(fs);
	} else {
		assert_int_equal(ubikit_unmount(fs), 0);
	}
	return err;
}

/* A cut in a sync's write-back leaves /big's new data nodes on flash
 * without the inode node that gives their size. The recovery mount must
 * make the inode say the data's size (kernel ubifs_recover_size) before
 * its first commit puts those nodes into the index: after that commit the
 * next mount replays only the journal behind it and sees no reason to fix
 * anything. Each recovery mount is cut at each of its volume operations;
 * the mount after must pass the check (no data beyond an inode's size)
 * and keep every fsync'ed byte (torture powercut-recovery -d nand4k -s
 * 303: 58 data nodes beyond the size of /f1 after a recovery mount that
 * collected a LEB into the GC head, committed, and was cut in its second
 * master copy; the fix was written after that commit). */
static void t_size_fix_cuts(void **state)
{
	(void)state;
	struct memvol m;
	mv_format(&m, G_LEBS);
	long k0 = 0, k1 = 0;
	int live[S_FILES] = {0};
	assert_int_equal(s_workload(&m, &k0, &k1, live), 0);
	mv_free(&m);
	assert_true(k1 > k0);
	unsigned images = 0, runs = 0, via_gc = 0;
	/* every third cut point of the write-back, every one with
	 * UBIKIT_LONG_TESTS=1 */
	int stop = 0;
	for (long k = k0; k < k1 && !stop; k += long_tests() ? 1 : 3) {
		struct memvol w;
		mv_format(&w, G_LEBS);
		w.cut_at = k;
		int lv[S_FILES] = {0};
		assert_int_not_equal(s_workload(&w, NULL, NULL, lv), 0);
		struct memvol cut;
		reboot(&cut, &w);
		mv_free(&w);
		if (!size_fixes(&cut)) {
			mv_free(&cut);
			continue;
		}
		images++;
		/* the recovery mount uncut: its operations, and whether it
		 * collected a LEB into the GC head (commit, GC, size fixes) */
		struct memvol probe;
		mv_copy(&probe, &cut);
		struct ubikit_fs *pfs = mount_ok(&probe, "recovery");
		struct ubifs_fs_info info;
		ubifs_get_info(fs_ubifs(pfs), &info);
		assert_true(info.need_recovery);
		via_gc += info.rcvry_gc_head;
		assert_int_equal(ubikit_unmount(pfs), 0);
		long mount_ops = probe.ops;
		mv_free(&probe);
		for (long k2 = 0; k2 <= mount_ops && !stop; k2++) {
			char ctx[128], path[64];
			snprintf(ctx, sizeof(ctx), "write-back cut at operation %ld, recovery mount cut at its operation %ld",
				 k, k2);
			struct memvol r1, r2;
			mv_copy(&r1, &cut);
			cut_mount(&r1, k2, NULL);
			reboot(&r2, &r1);
			mv_free(&r1);
			struct ubikit_fs *cfs = mount_ok(&r2, ctx);
			check(cfs, ctx);
			for (int i = 0; i < S_FILES; i++) {
				if (!live[i])
					continue;
				snprintf(path, sizeof(path), "/f%d", i);
				want_file(cfs, path, G_LEN, 600u + (unsigned)i, ctx);
			}
			/* /big: its synced bytes, then what the cut kept of the
			 * extension (written bytes, or a hole's zeros) */
			struct ubikit_stat st;
			assert_int_equal(ubikit_stat(cfs, "/big", &st), 0);
			if (st.size < S_BIG || st.size > S_EXT)
				fail_msg("%s: /big has %llu bytes, want %u to %u", ctx, (unsigned long long)st.size, S_BIG,
					 S_EXT);
			uint8_t *got = malloc(S_EXT), *want = malloc(S_EXT);
			assert_non_null(got);
			assert_non_null(want);
			fill(want, S_EXT, 78); /* the extension as s_workload wrote it */
			fill(want, S_BIG, 77); /* under the synced bytes */
			struct ubikit_file *g = NULL;
			assert_int_equal(ubikit_open(cfs, "/big", O_RDONLY, 0, &g), 0);
			assert_int_equal(ubikit_pread(g, got, S_EXT, 0), (ssize_t)st.size);
			ubikit_close(g);
			if (memcmp(got, want, S_BIG))
				fail_msg("%s: /big lost its synced bytes", ctx);
			for (size_t b = S_BIG; b < st.size; b++)
				if (got[b] != want[b] && got[b] != 0)
					fail_msg("%s: /big byte %zu is %u, written %u", ctx, b, got[b], want[b]);
			free(got);
			free(want);
			/* the first result (s1) goes to the kernel's self-checks */
			stop = unmount_export(&r2, cfs, "s", images == 1 && k2 == 0) && export_only();
			mv_free(&r2);
			runs++;
		}
		mv_free(&cut);
	}
	printf("size fixes: %u cut images with data beyond a size (%u recovered by GC into the GC head), %u "
	       "recovery mounts cut at each operation\n",
	       images, via_gc, runs);
	assert_true(images > 0);
	assert_true(via_gc > 0);
}

/* A journal head whose last bud held nothing good after a cut: the
 * recovery empties that LEB and the head stays at its offset 0, which the
 * recovery's commit start names as a bud. Unmapped, its old PEB (the torn
 * write) could come back after a later power loss before UBI erased it and
 * be replayed as that bud ("bad node CRC ... unmounted cleanly" here); the
 * recovery maps the LEB again at once. Each cut of a small sync, the
 * recovery mount uncut, then a reboot at which every unmapped LEB comes
 * back (the worst case: Linux's UBI drops pending erases at detach). */
static void t_head_ghost(void **state)
{
	(void)state;
	long k0 = 0, k1 = 0;
	unsigned images = 0;
	for (long k = -1; k < k1; k = k < 0 ? k0 : k + 1) {
		struct memvol w;
		mv_format(&w, T_LEBS);
		w.cut_at = k;
		struct ubikit_fs *fs = mount_ok(&w, "write");
		char path[64];
		for (int i = 0; i < 4; i++) {
			snprintf(path, sizeof(path), "/w%d", i);
			assert_int_equal(put_file(fs, path, t_len(i), 800u + (unsigned)i), 0);
		}
		assert_int_equal(ubikit_sync(fs), 0);
		if (k < 0)
			k0 = w.ops;
		/* a write-back long enough that some cuts tear a bud at the
		 * start of its LEB */
		int err = put_file(fs, "/x", 180000, 90);
		if (!err)
			err = ubikit_sync(fs);
		if (k < 0) {
			assert_int_equal(err, 0);
			k1 = w.ops;
			assert_int_equal(ubikit_unmount(fs), 0);
			mv_free(&w);
			continue;
		}
		assert_true(err && w.cut);
		ubikit_unmount(fs);
		struct memvol c, r;
		reboot(&c, &w);
		mv_free(&w);
		char ctx[96];
		snprintf(ctx, sizeof(ctx), "sync cut at operation %ld, a clean recovery mount, ghosts back", k);
		fs = mount_ok(&c, ctx);
		assert_int_equal(ubikit_unmount(fs), 0);
		reboot(&r, &c);
		mv_free(&c);
		fs = mount_ok(&r, ctx);
		check(fs, ctx);
		for (int i = 0; i < 4; i++) {
			snprintf(path, sizeof(path), "/w%d", i);
			want_file(fs, path, t_len(i), 800u + (unsigned)i, ctx);
		}
		images++;
		/* the first result (h1) goes to the kernel's self-checks */
		int exported = unmount_export(&r, fs, "h", images == 1);
		mv_free(&r);
		if (exported && export_only())
			break;
	}
	printf("head ghosts: %u cuts of a sync, each recovered and rebooted with unmapped LEBs back\n", images);
	assert_true(images > (export_only() ? 0u : 10u));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_log_consolidate),
		cmocka_unit_test(t_rcvry_gc),
		cmocka_unit_test(t_replay_dangling_xent),
		cmocka_unit_test(t_log_ghost),
		cmocka_unit_test(t_log_ghost_erased_start),
		cmocka_unit_test(t_log_ghost_garbage_start),
		cmocka_unit_test(t_rename_orphan),
		cmocka_unit_test(t_cut_recoveries),
		cmocka_unit_test(t_size_fix_cuts),
		cmocka_unit_test(t_head_ghost),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
