/* test_ubifs_budget — budgeting, write-back and statfs (ubifs_budget.c,
 * ubifs_wcache.c), through the library API (ubikit_*):
 *  - fill: small mkfs.ubifs devices of three geometries are filled with
 *    small and large files and directories until the file system is full.
 *    ENOSPC may only come from a write, create or mkdir call (a write may
 *    take fewer bytes first); fsync, sync, close and unmount must succeed;
 *    at full, unlink works and the other changes fit or say ENOSPC. A
 *    model records every byte and name the calls accepted; after unmount a
 *    read-only mount must show exactly that, and the LPT must equal a scan
 *    of the flash (ubifs_lpt_check, the kernel's rules).
 *  - statfs: after each added file and a sync, f_bfree never grows and
 *    equals the kernel's formula (budget.c ubifs_get_free_space, super.c
 *    statfs), computed here on its own from the LPT's totals and the
 *    master node.
 *  - write-back: data not fsynced causes no flash write (a spy on the
 *    volume counts them) until fsync/sync, the dirty bound holds, reads
 *    and sizes see the cache, truncation cuts cached blocks.
 * Deleting and refilling needs garbage collection (h-gc), not tested here. */
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

#include "fs/fs.h"
#include "ubi/ubi_flat.h"
#include "ubifs/ubifs_budget.h"
#include "ubifs/ubifs_lpt.h"
#include "ubifs/ubifs_priv.h"
#include "ubifs/ubifs_wcache.h"
#include "ubifs_test_tree.h"

#define WORK UBIKIT_BUILD_DIR "/ubifs-budget"

/* ---- a volume that counts the writes reaching it ---- */
struct spy {
	struct ubi_vol_io vol, *inner;
	uint64_t writes, bytes;
};
static int spy_read(void *c, uint32_t l, uint32_t o, void *b, size_t n)
{
	struct spy *s = c;
	return s->inner->read(s->inner->ctx, l, o, b, n);
}
static int spy_write(void *c, uint32_t l, uint32_t o, const void *b, size_t n)
{
	struct spy *s = c;
	s->writes++;
	s->bytes += n;
	return s->inner->write(s->inner->ctx, l, o, b, n);
}
static int spy_change(void *c, uint32_t l, const void *b, size_t n)
{
	struct spy *s = c;
	s->writes++;
	s->bytes += n;
	return s->inner->change(s->inner->ctx, l, b, n);
}
static int spy_unmap(void *c, uint32_t l)
{
	struct spy *s = c;
	return s->inner->unmap(s->inner->ctx, l);
}
static int spy_map(void *c, uint32_t l)
{
	struct spy *s = c;
	return s->inner->map(s->inner->ctx, l);
}
static int spy_is_mapped(void *c, uint32_t l)
{
	struct spy *s = c;
	return s->inner->is_mapped ? s->inner->is_mapped(s->inner->ctx, l) : 1;
}
static int spy_sync(void *c)
{
	struct spy *s = c;
	return s->inner->sync ? s->inner->sync(s->inner->ctx) : 0;
}
static void spy_wrap(struct spy *s, struct ubi_vol_io *inner)
{
	memset(s, 0, sizeof(*s));
	s->inner = inner;
	s->vol = *inner;
	s->vol.ctx = s;
	s->vol.read = spy_read;
	s->vol.write = spy_write;
	s->vol.change = spy_change;
	s->vol.unmap = spy_unmap;
	s->vol.map = spy_map;
	s->vol.is_mapped = inner->is_mapped ? spy_is_mapped : NULL;
	s->vol.sync = spy_sync;
}

static void make_img(const char *img, const char *mkfs_args)
{
	assert_int_equal(tt_run("mkdir -p '%s/empty' && mkfs.ubifs -r '%s/empty' %s -o '%s'", WORK, WORK, mkfs_args, img),
			 0);
}

static struct ubikit_fs *mount_fs(struct ubi_vol_io *vol, int ro, size_t dirty_max)
{
	struct ubikit_mount_opts o = {.flags = ro ? UBIKIT_MOUNT_RDONLY : 0, .dirty_bytes_max = dirty_max};
	struct ubikit_fs *fs = NULL;
	char e[512];
	int err = ubikit_mount_ex(vol, &o, &fs, e, sizeof(e));
	if (err)
		fail_msg("mount (%s): %d %s", ro ? "ro" : "rw", err, e);
	return fs;
}

/* file content: a function of (file id, offset), incompressible enough */
static uint8_t content(uint32_t id, uint64_t off)
{
	uint64_t h = (id + 1) * 0x9E3779B97F4A7C15ull ^ (off * 0xC2B2AE3D27D4EB4Full);
	h ^= h >> 29;
	h *= 0xBF58476D1CE4E5B9ull;
	h ^= h >> 32;
	return (uint8_t)h;
}

static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* ---- the model of what the calls accepted ---- */
struct ment {
	char path[96];
	int is_dir; /* 1 directory, 2 other (symlink, fifo), 3 removed */
	uint32_t id;
	uint64_t size;
	uint64_t zero_from; /* grown by truncate: zeros from here (0: not) */
	int xattr;          /* has user.full = "v" */
};
struct model {
	struct ment *e;
	size_t n, cap;
};
static struct ment *m_add(struct model *m, const char *path, int is_dir, uint32_t id)
{
	if (m->n == m->cap) {
		m->cap = m->cap ? m->cap * 2 : 256;
		m->e = realloc(m->e, m->cap * sizeof(*m->e));
		assert_non_null(m->e);
	}
	struct ment *x = &m->e[m->n++];
	memset(x, 0, sizeof(*x));
	snprintf(x->path, sizeof(x->path), "%.95s", path);
	x->is_dir = is_dir;
	x->id = id;
	return x;
}

static void check_model(struct ubikit_fs *fs, const struct model *m, const char *name)
{
	uint8_t *buf = malloc(65536);
	assert_non_null(buf);
	size_t dirs = 1, files = 0;
	for (size_t i = 0; i < m->n; i++) {
		const struct ment *x = &m->e[i];
		struct ubikit_stat st;
		if (x->is_dir == 3)
			continue;
		int err = ubikit_lstat(fs, x->path, &st);
		if (err)
			fail_msg("%s: %s: stat %d (accepted by the call, missing after remount)", name, x->path, err);
		if (x->is_dir == 1) {
			assert_true(S_ISDIR(st.mode));
			dirs++;
			continue;
		}
		if (x->is_dir == 2) {
			files++;
			continue;
		}
		if (x->xattr) {
			char v[8];
			assert_int_equal(ubikit_getxattr(fs, x->path, "user.full", v, sizeof(v)), 1);
			assert_int_equal(v[0], 'v');
		}
		files++;
		if (st.size != x->size)
			fail_msg("%s: %s: size %llu, the calls accepted %llu", name, x->path, (unsigned long long)st.size,
				 (unsigned long long)x->size);
		struct ubikit_file *f;
		assert_int_equal(ubikit_open(fs, x->path, O_RDONLY, 0, &f), 0);
		for (uint64_t off = 0; off < x->size;) {
			ssize_t n = ubikit_pread(f, buf, 65536, off);
			assert_true(n > 0);
			for (ssize_t k = 0; k < n; k++)
				if (buf[k] != (x->zero_from && off + (uint64_t)k >= x->zero_from ? 0 : content(x->id, off + (uint64_t)k)))
					fail_msg("%s: %s: byte %llu differs", name, x->path, (unsigned long long)(off + (uint64_t)k));
			off += (uint64_t)n;
		}
		ubikit_close(f);
	}
	/* nothing more than the model: count the entries of every directory */
	size_t seen = 0;
	for (size_t i = 0; i <= m->n; i++) {
		const char *dpath = i == m->n ? "/" : m->e[i].path;
		if (i < m->n && m->e[i].is_dir != 1)
			continue;
		struct ubikit_dir *d;
		assert_int_equal(ubikit_opendir(fs, dpath, &d), 0);
		struct ubikit_dirent de;
		while (ubikit_readdir(d, &de) == 1)
			seen++;
		ubikit_closedir(d);
	}
	size_t removed = 0;
	for (size_t i = 0; i < m->n; i++)
		removed += m->e[i].is_dir == 3;
	(void)removed;
	assert_int_equal(seen, dirs - 1 + files);
	free(buf);
}

static void lpt_ok(struct ubikit_fs *fs, const char *name)
{
	struct ubifs_fs *u = fs_ubifs(fs);
	int err = ubifs_lpt_check(u->lpt);
	if (err)
		fail_msg("%s: LPT check: %s", name, ubifs_errmsg(u));
}

/* Fill until ENOSPC, from write/create/mkdir only. big_max: largest file. */
static void fill(const char *name, const char *mkfs_args, uint64_t big_max, uint64_t seed)
{
	char img[512];
	snprintf(img, sizeof(img), "%s/%s.img", WORK, name);
	make_img(img, mkfs_args);
	struct ubi_vol_io vol;
	assert_int_equal(ubi_flat_open(img, 0, 0, &vol), 0);
	struct ubikit_fs *fs = mount_fs(&vol, 0, 0); /* default bound (4 MiB): most of the device can sit in the cache */
	struct ubikit_statfs st0;
	assert_int_equal(ubikit_statfs(fs, &st0), 0);
	struct model m = {0};
	uint64_t rng = seed, bytes = 0;
	unsigned enospc_write = 0, enospc_create = 0, enospc_mkdir = 0, short_writes = 0, ndirs = 0, nfiles = 0;
	uint8_t *buf = malloc(65536);
	assert_non_null(buf);
	char path[128];
	for (unsigned op = 0; op < 20000 && enospc_write + enospc_create + enospc_mkdir < 30; op++) {
		unsigned r = (unsigned)(rng_next(&rng) % 100);
		/* a parent: the root or one of the directories made so far */
		const char *parent = "";
		if (ndirs && rng_next(&rng) % 2) {
			size_t k = rng_next(&rng) % m.n;
			while (!m.e[k].is_dir)
				k = (k + 1) % m.n;
			if (strlen(m.e[k].path) < 80) /* keep paths short */
				parent = m.e[k].path;
		}
		if (r < 8) {
			snprintf(path, sizeof(path), "%.80s/d%u", parent, op);
			int err = ubikit_mkdir(fs, path, 0755);
			if (err == -ENOSPC) {
				enospc_mkdir++;
				continue;
			}
			if (err)
				fail_msg("%s: mkdir %s: %d %s", name, path, err, ubikit_errmsg(fs));
			m_add(&m, path, 1, 0);
			ndirs++;
			continue;
		}
		struct ubikit_file *f = NULL;
		struct ment *x;
		uint64_t want;
		int err;
		if (r < 20 && nfiles) {
			/* append to a file made earlier */
			size_t k = rng_next(&rng) % m.n;
			while (m.e[k].is_dir)
				k = (k + 1) % m.n;
			x = &m.e[k];
			snprintf(path, sizeof(path), "%s", x->path);
			err = ubikit_open(fs, path, O_WRONLY | O_APPEND, 0, &f);
			if (err)
				fail_msg("%s: open %s: %d %s", name, path, err, ubikit_errmsg(fs));
			want = x->size + 1 + rng_next(&rng) % 20000;
		} else {
			snprintf(path, sizeof(path), "%.80s/f%u", parent, op);
			err = ubikit_open(fs, path, O_CREAT | O_EXCL | O_WRONLY, 0644, &f);
			if (err == -ENOSPC) {
				enospc_create++;
				continue;
			}
			if (err)
				fail_msg("%s: create %s: %d %s", name, path, err, ubikit_errmsg(fs));
			x = m_add(&m, path, 0, op);
			nfiles++;
			want = r < 75 ? 1 + rng_next(&rng) % 6000 : 65536 + rng_next(&rng) % big_max;
		}
		while (x->size < want) {
			size_t len = 1 + (size_t)(rng_next(&rng) % 40000);
			if (len > want - x->size)
				len = (size_t)(want - x->size);
			for (size_t k = 0; k < len; k++)
				buf[k] = content(x->id, x->size + k);
			ssize_t n = ubikit_write(f, buf, len);
			if (n == -ENOSPC) {
				enospc_write++;
				break;
			}
			if (n < 0)
				fail_msg("%s: write %s: %zd %s", name, path, n, ubikit_errmsg(fs));
			x->size += (uint64_t)n;
			bytes += (uint64_t)n;
			if ((size_t)n < len) {
				short_writes++;
				break;
			}
		}
		if (rng_next(&rng) % 5 == 0) {
			err = ubikit_fsync(f);
			if (err)
				fail_msg("%s: fsync %s: %d %s (ENOSPC must come at the write)", name, path, err,
					 ubikit_errmsg(fs));
		}
		assert_int_equal(ubikit_close(f), 0);
		if (op % 25 == 24) {
			err = ubikit_sync(fs); /* a commit: never ENOSPC either */
			if (err)
				fail_msg("%s: sync: %d %s", name, err, ubikit_errmsg(fs));
		}
	}
	/* the file system is full: a deletion must work; every other change
	 * either fits or answers ENOSPC at once, and nothing is lost */
	size_t vi = m.n, bg = m.n;
	for (size_t i = 0; i < m.n; i++) {
		if (!m.e[i].is_dir && m.e[i].size > 0 && m.e[i].size < 6000 && vi == m.n)
			vi = i;
		else if (!m.e[i].is_dir && m.e[i].size > 0 && bg == m.n)
			bg = i;
	}
	assert_true(vi < m.n && bg < m.n);
	int err = ubikit_unlink(fs, m.e[vi].path);
	if (err)
		fail_msg("%s: unlink on a full file system: %d %s", name, err, ubikit_errmsg(fs));
	m.e[vi].is_dir = 3;
	unsigned at_full_ok = 0, at_full_enospc = 0;
#define AT_FULL(call, on_ok)                                                                                           \
	do {                                                                                                           \
		int e_ = (call);                                                                                       \
		if (e_ == 0) {                                                                                         \
			at_full_ok++;                                                                                  \
			on_ok;                                                                                         \
		} else if (e_ == -ENOSPC) {                                                                            \
			at_full_enospc++;                                                                              \
		} else {                                                                                               \
			fail_msg("%s: %s at full: %d %s", name, #call, e_, ubikit_errmsg(fs));                         \
		}                                                                                                      \
	} while (0)
	char bigp[96], newp[96];
	snprintf(bigp, sizeof(bigp), "%s", m.e[bg].path);
	AT_FULL(ubikit_symlink(fs, bigp, "/full_sl"), m_add(&m, "/full_sl", 2, 0));
	AT_FULL(ubikit_mknod(fs, "/full_fifo", S_IFIFO | 0644, 0, 0), m_add(&m, "/full_fifo", 2, 0));
	AT_FULL(ubikit_mkdir(fs, "/full_dir", 0755), m_add(&m, "/full_dir", 1, 0));
	AT_FULL(ubikit_setxattr(fs, bigp, "user.full", "v", 1, 0), m.e[bg].xattr = 1);
	AT_FULL(ubikit_truncate(fs, bigp, m.e[bg].size + 10000), (m.e[bg].zero_from = m.e[bg].size, m.e[bg].size += 10000));
	AT_FULL(ubikit_link(fs, bigp, "/full_link"), m_add(&m, "/full_link", 2, 0));
	snprintf(newp, sizeof(newp), "%.90s_r", bigp);
	AT_FULL(ubikit_rename(fs, bigp, newp, 0), snprintf(m.e[bg].path, sizeof(m.e[bg].path), "%s", newp));
	printf("  %s at full: unlink ok; symlink, mknod, mkdir, setxattr, truncate-grow, link, rename: %u done, %u "
	       "ENOSPC\n",
	       name, at_full_ok, at_full_enospc);
	struct ubikit_statfs st1;
	assert_int_equal(ubikit_statfs(fs, &st1), 0);
	struct ubifs_budget_info bi;
	ubifs_budget_get_info(fs_ubifs(fs), &bi);
	err = ubikit_unmount(fs);
	if (err)
		fail_msg("%s: unmount: %d (ENOSPC must come at the write)", name, err);
	assert_int_equal(ubi_flat_close(&vol), 0);
	assert_true(enospc_write + enospc_create + enospc_mkdir > 0);
	/* full means full: the file system took most of what statfs offered */
	assert_true(bytes >= st0.blocks_free * 4096 / 2);
	printf("  %s: %u files, %u dirs, %llu bytes accepted (statfs offered %llu free blocks, now %llu); "
	       "ENOSPC at write %u, create %u, mkdir %u; short writes %u; commits to make space %llu\n",
	       name, nfiles, ndirs, (unsigned long long)bytes, (unsigned long long)st0.blocks_free,
	       (unsigned long long)st1.blocks_free, enospc_write, enospc_create, enospc_mkdir, short_writes,
	       (unsigned long long)bi.mkspc_commits);
	/* every accepted call is on flash, exactly */
	assert_int_equal(ubi_flat_open(img, 0, 1, &vol), 0);
	fs = mount_fs(&vol, 1, 0);
	check_model(fs, &m, name);
	lpt_ok(fs, name);
	ubikit_unmount(fs);
	ubi_flat_close(&vol);
	/* and a read-write mount of the full file system works (deletions, GC: h-gc) */
	assert_int_equal(ubi_flat_open(img, 0, 0, &vol), 0);
	fs = mount_fs(&vol, 0, 0);
	assert_int_equal(ubikit_unmount(fs), 0);
	ubi_flat_close(&vol);
	free(m.e);
	free(buf);
}

static void t_fill_nand2k(void **s)
{
	(void)s;
	fill("fill_nand2k", "-m 2048 -e 126976 -c 40 -x lzo", 600 * 1024, 11);
}
static void t_fill_nor(void **s)
{
	(void)s;
	fill("fill_nor", "-m 8 -e 65408 -c 64 -x none", 300 * 1024, 12);
}
static void t_fill_nand512(void **s)
{
	(void)s;
	fill("fill_nand512", "-m 512 -e 15872 -c 200 -x zstd", 200 * 1024, 13);
}

/* ---- statfs: the kernel's formula, written out here on its own ---- */
static uint64_t kernel_bfree(struct ubifs_fs *u)
{
	struct ubifs_fs_info info;
	assert_int_equal(ubifs_get_info(u, &info), 0);
	uint64_t leb = info.leb_size, min_io = info.min_io_size;
	uint64_t fanout = info.sb.fanout;
	int64_t max_idx = (28 + 20 * (int64_t)fanout + 7) / 8 * 8; /* ALIGN(UBIFS_IDX_NODE_SZ + fanout * branch, 8) */
	int64_t dark_wm = (4096 + 160 + (int64_t)min_io - 1) / (int64_t)min_io * (int64_t)min_io;
	int64_t overhead = (int64_t)leb % (48 + 4096);
	/* after a sync: nothing outstanding, the index is the committed one */
	int64_t idx = (int64_t)info.mst.index_size * 3;
	int64_t min_idx = (idx + ((int64_t)leb - max_idx) - 1) / ((int64_t)leb - max_idx) + 1;
	if (min_idx < 2)
		min_idx = 2;
	struct ubifs_lp_stats t;
	ubifs_lpt_stats(u->lpt, &t);
	/* freeable LEBs, counted here from the properties of every LEB */
	int64_t freeable = 0;
	for (uint32_t l = info.main_first; l < info.main_first + info.main_lebs; l++) {
		struct ubifs_lprops lp;
		assert_int_equal(ubifs_lpt_lookup(u->lpt, l, &lp), 0);
		if (!(lp.flags & (UBIFS_LPROPS_TAKEN | UBIFS_LPROPS_INDEX)) && lp.free != leb && lp.free + lp.dirty == leb)
			freeable++;
	}
	int64_t avail = (int64_t)info.main_lebs * (int64_t)leb - (int64_t)t.total_used;
	avail -= (min_idx + 1 + 3 + 1) * (int64_t)leb; /* index, GC LEB, 3 journal heads, deletions */
	avail -= (int64_t)t.total_dead + (int64_t)t.total_dark;
	if ((int64_t)t.idx_lebs > min_idx)
		avail -= ((int64_t)t.idx_lebs - min_idx) * dark_wm;
	if (avail < 0)
		avail = 0;
	int64_t rsvd = min_idx > (int64_t)t.idx_lebs ? min_idx - (int64_t)t.idx_lebs : 0;
	int64_t lebs = (int64_t)t.empty_lebs + freeable - (int64_t)t.taken_empty_lebs - rsvd;
	avail += lebs * (dark_wm - overhead);
	if (avail <= 0)
		return 0;
	int64_t f = fanout > 3 ? (int64_t)fanout / 2 : 2;
	int64_t rep = avail * 4096 / (4144 + max_idx * 3 / (f - 1));
	return (uint64_t)rep >> 12;
}

static void t_statfs(void **s)
{
	(void)s;
	char img[512];
	snprintf(img, sizeof(img), "%s/statfs.img", WORK);
	make_img(img, "-m 2048 -e 126976 -c 48 -x none");
	struct ubi_vol_io vol;
	assert_int_equal(ubi_flat_open(img, 0, 0, &vol), 0);
	struct ubikit_fs *fs = mount_fs(&vol, 0, 0);
	struct ubikit_statfs st;
	assert_int_equal(ubikit_sync(fs), 0);
	assert_int_equal(ubikit_statfs(fs, &st), 0);
	assert_int_equal(st.blocks_free, kernel_bfree(fs_ubifs(fs)));
	assert_true(st.blocks_free <= st.blocks);
	uint64_t prev = st.blocks_free, first = st.blocks_free;
	uint8_t *buf = malloc(40000);
	assert_non_null(buf);
	unsigned i = 0, drops = 0;
	for (; i < 60; i++) { /* well below full: without GC the budget stops early (dirty space) */
		char path[32];
		snprintf(path, sizeof(path), "/s%u", i);
		struct ubikit_file *f;
		int err = ubikit_open(fs, path, O_CREAT | O_WRONLY, 0644, &f);
		if (err == -ENOSPC)
			break;
		assert_int_equal(err, 0);
		size_t len = 1000 + (i * 7919u) % 39000;
		for (size_t k = 0; k < len; k++)
			buf[k] = content(i, k);
		ssize_t n = ubikit_write(f, buf, len);
		ubikit_close(f);
		if (n == -ENOSPC)
			break;
		assert_true(n > 0);
		assert_int_equal(ubikit_sync(fs), 0);
		assert_int_equal(ubikit_statfs(fs, &st), 0);
		uint64_t want = kernel_bfree(fs_ubifs(fs));
		if (st.blocks_free != want)
			fail_msg("after %u files: statfs f_bfree %llu, the kernel's formula %llu", i + 1,
				 (unsigned long long)st.blocks_free, (unsigned long long)want);
		if (st.blocks_free > prev)
			fail_msg("after %u files: f_bfree grew from %llu to %llu", i + 1, (unsigned long long)prev,
				 (unsigned long long)st.blocks_free);
		drops += st.blocks_free < prev;
		prev = st.blocks_free;
		if (st.blocks_free == 0)
			break;
	}
	printf("  statfs: %u files, f_bfree %llu -> %llu blocks (f_blocks %llu), fell %u times, always the kernel's "
	       "formula\n",
	       i, (unsigned long long)first, (unsigned long long)prev, (unsigned long long)st.blocks, drops);
	assert_true(drops > 10);
	/* cached data counts before it is written back (outstanding budget) */
	struct ubikit_file *f;
	assert_int_equal(ubikit_open(fs, "/last", O_CREAT | O_WRONLY, 0644, &f), 0);
	struct ubikit_statfs a, b;
	assert_int_equal(ubikit_statfs(fs, &a), 0);
	ssize_t n = ubikit_write(f, buf, 8192);
	assert_true(n == 8192 || n == -ENOSPC);
	assert_int_equal(ubikit_statfs(fs, &b), 0);
	if (n == 8192 && a.blocks_free > 4)
		assert_true(b.blocks_free < a.blocks_free);
	ubikit_close(f);
	free(buf);
	assert_int_equal(ubikit_unmount(fs), 0);
	ubi_flat_close(&vol);
}

/* ---- write-back ---- */
static void fill_buf(uint8_t *b, size_t n, uint32_t id, uint64_t off)
{
	for (size_t k = 0; k < n; k++)
		b[k] = content(id, off + k);
}

static void t_writeback(void **s)
{
	(void)s;
	char img[512];
	snprintf(img, sizeof(img), "%s/wb.img", WORK);
	make_img(img, "-m 2048 -e 126976 -c 100 -x none");
	struct ubi_vol_io inner;
	assert_int_equal(ubi_flat_open(img, 0, 0, &inner), 0);
	struct spy spy;
	spy_wrap(&spy, &inner);
	const size_t bound = 256 * 1024;
	struct ubikit_fs *fs = mount_fs(&spy.vol, 0, bound);
	struct ubifs_fs *u = fs_ubifs(fs);
	uint8_t *buf = malloc(1 << 20), *rd = malloc(1 << 20);
	assert_non_null(buf);
	assert_non_null(rd);

	/* 1. data not fsynced stays off the flash; fsync writes it */
	struct ubikit_file *a;
	assert_int_equal(ubikit_open(fs, "/a", O_CREAT | O_RDWR, 0644, &a), 0);
	assert_int_equal(ubikit_fsync(a), 0);
	spy.writes = spy.bytes = 0;
	fill_buf(buf, 100 * 1024, 1, 0);
	for (size_t off = 0; off < 100 * 1024; off += 10000) {
		size_t len = 100 * 1024 - off < 10000 ? 100 * 1024 - off : 10000;
		assert_int_equal(ubikit_write(a, buf + off, len), (ssize_t)len);
	}
	assert_int_equal(spy.writes, 0);
	struct ubikit_stat st;
	assert_int_equal(ubikit_stat(fs, "/a", &st), 0);
	assert_int_equal(st.size, 100 * 1024);
	assert_int_equal(ubikit_pread(a, rd, 100 * 1024, 0), 100 * 1024);
	assert_memory_equal(rd, buf, 100 * 1024);
	struct ubifs_wcache_stats ws;
	ubifs_wcache_get_stats(u, &ws);
	assert_int_equal(ws.dirty_bytes, 25 * 4096);
	assert_int_equal(ubikit_fsync(a), 0);
	assert_true(spy.bytes >= 100 * 1024);
	ubifs_wcache_get_stats(u, &ws);
	assert_int_equal(ws.dirty_bytes, 0);
	printf("  write-back: 100 KiB written: 0 flash writes before fsync, %llu bytes after\n",
	       (unsigned long long)spy.bytes);

	/* 2. the dirty bound holds; beyond it the data is written back */
	spy.writes = spy.bytes = 0;
	struct ubikit_file *b;
	assert_int_equal(ubikit_open(fs, "/b", O_CREAT | O_RDWR, 0644, &b), 0);
	fill_buf(buf, 1 << 20, 2, 0);
	size_t peak = 0;
	for (size_t off = 0; off < (1 << 20); off += 8192) {
		assert_int_equal(ubikit_write(b, buf + off, 8192), 8192);
		ubifs_wcache_get_stats(u, &ws);
		if (ws.dirty_bytes > bound)
			fail_msg("dirty bytes %zu above the bound %zu", ws.dirty_bytes, bound);
		if (ws.dirty_bytes > peak)
			peak = ws.dirty_bytes;
	}
	ubifs_wcache_get_stats(u, &ws);
	assert_true(ws.bound_flushes >= 3);
	assert_true(spy.bytes >= (1 << 20) - bound);
	printf("  write-back: 1 MiB with a %zu KiB bound: peak %zu KiB dirty, %llu bound write-backs, %llu bytes "
	       "on flash before any sync\n",
	       bound / 1024, peak / 1024, (unsigned long long)ws.bound_flushes, (unsigned long long)spy.bytes);
	assert_int_equal(ubikit_pread(b, rd, 1 << 20, 0), 1 << 20);
	assert_memory_equal(rd, buf, 1 << 20);

	/* 3. truncation and holes over cached blocks */
	struct ubikit_file *c;
	assert_int_equal(ubikit_open(fs, "/c", O_CREAT | O_RDWR, 0644, &c), 0);
	fill_buf(buf, 20000, 3, 0);
	assert_int_equal(ubikit_write(c, buf, 20000), 20000);
	assert_int_equal(ubikit_ftruncate(c, 5000), 0);
	assert_int_equal(ubikit_stat(fs, "/c", &st), 0);
	assert_int_equal(st.size, 5000);
	assert_int_equal(ubikit_pwrite(c, "xyz", 3, 10000), 3);
	assert_int_equal(ubikit_pread(c, rd, 20000, 0), 10003);
	assert_memory_equal(rd, buf, 5000);
	for (int k = 5000; k < 10000; k++)
		assert_int_equal(rd[k], 0);
	assert_memory_equal(rd + 10000, "xyz", 3);
	/* a cached file grown by truncate, then written inside */
	assert_int_equal(ubikit_ftruncate(c, 30000), 0);
	assert_int_equal(ubikit_pwrite(c, "q", 1, 25000), 1);

	/* 3b. a deleted file's cached blocks and their budgets go at once */
	assert_int_equal(ubikit_fsync(c), 0);
	struct ubifs_budget_info b0, b1, b2;
	ubifs_budget_get_info(u, &b0);
	struct ubikit_file *d;
	assert_int_equal(ubikit_open(fs, "/d", O_CREAT | O_RDWR, 0644, &d), 0);
	fill_buf(buf, 200 * 1024, 4, 0);
	assert_int_equal(ubikit_write(d, buf, 200 * 1024), 200 * 1024);
	ubikit_close(d);
	ubifs_budget_get_info(u, &b1);
	assert_true(b1.data_growth + b1.dd_growth >= b0.data_growth + b0.dd_growth + 50 * 4144);
	assert_int_equal(ubikit_unlink(fs, "/d"), 0);
	ubifs_budget_get_info(u, &b2);
	assert_int_equal(b2.data_growth + b2.dd_growth, b0.data_growth + b0.dd_growth);
	ubifs_wcache_get_stats(u, &ws);
	assert_int_equal(ws.dirty_bytes, 0);
	assert_int_equal(ubikit_stat(fs, "/d", &st), -ENOENT);

	/* 4. sync writes everything; unmount keeps it */
	spy.writes = 0;
	assert_int_equal(ubikit_pwrite(a, "hello", 5, 50), 5);
	assert_int_equal(spy.writes, 0);
	assert_int_equal(ubikit_sync(fs), 0);
	assert_true(spy.writes > 0);
	ubifs_wcache_get_stats(u, &ws);
	assert_int_equal(ws.dirty_bytes, 0);
	assert_int_equal(ubikit_pwrite(a, "later", 5, 200), 5); /* cached at unmount */
	ubikit_close(a);
	ubikit_close(b);
	ubikit_close(c);
	assert_int_equal(ubikit_unmount(fs), 0);
	assert_int_equal(ubi_flat_close(&inner), 0);

	assert_int_equal(ubi_flat_open(img, 0, 1, &inner), 0);
	fs = mount_fs(&inner, 1, 0);
	fill_buf(buf, 100 * 1024, 1, 0);
	memcpy(buf + 50, "hello", 5);
	memcpy(buf + 200, "later", 5);
	assert_int_equal(ubikit_open(fs, "/a", O_RDONLY, 0, &a), 0);
	assert_int_equal(ubikit_pread(a, rd, 1 << 20, 0), 100 * 1024);
	assert_memory_equal(rd, buf, 100 * 1024);
	ubikit_close(a);
	fill_buf(buf, 1 << 20, 2, 0);
	assert_int_equal(ubikit_open(fs, "/b", O_RDONLY, 0, &b), 0);
	assert_int_equal(ubikit_pread(b, rd, 1 << 20, 0), 1 << 20);
	assert_memory_equal(rd, buf, 1 << 20);
	ubikit_close(b);
	assert_int_equal(ubikit_open(fs, "/c", O_RDONLY, 0, &c), 0);
	assert_int_equal(ubikit_pread(c, rd, 1 << 20, 0), 30000);
	fill_buf(buf, 5000, 3, 0);
	assert_memory_equal(rd, buf, 5000);
	for (int k = 5000; k < 30000; k++)
		if (k != 10000 && k != 10001 && k != 10002 && k != 25000)
			assert_int_equal(rd[k], 0);
	assert_memory_equal(rd + 10000, "xyz", 3);
	assert_int_equal(rd[25000], 'q');
	ubikit_close(c);
	lpt_ok(fs, "writeback");
	ubikit_unmount(fs);
	ubi_flat_close(&inner);
	free(buf);
	free(rd);
}

int main(void)
{
	if (tt_run("command -v mkfs.ubifs >/dev/null") != 0) {
		printf("mkfs.ubifs not found: skipped\n");
		return 77;
	}
	tt_run("mkdir -p '%s'", WORK);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_writeback),
		cmocka_unit_test(t_statfs),
		cmocka_unit_test(t_fill_nand2k),
		cmocka_unit_test(t_fill_nor),
		cmocka_unit_test(t_fill_nand512),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
