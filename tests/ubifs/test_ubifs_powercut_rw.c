/* test_ubifs_powercut_rw — power cuts in ubikit's own write path (issue 9,
 * test item 3), and orphans.
 *
 * A simulated NAND (2048-byte pages, 512-byte sub-pages, 128 KiB blocks)
 * holds a UBI image made by mkfs.ubifs + ubinize. A read-write workload of
 * the fs API (creates, writes, fsync of some files, renames, unlink of an
 * open file, truncates, xattrs, commits) runs on ubikit's UBI and UBIFS and
 * the simulator cuts the power at flash operation k. After the cut the
 * flash is "rebooted", attached again and mounted read-write (recovery):
 *  - every file whose fsync (or a sync = commit) returned before the cut and
 *    that was not touched afterwards is there with exactly those contents;
 *  - no name appears that the workload never made (a reference model: the
 *    names at the last commit plus those created since);
 *  - ubifs_check (index, leaves, link counts, sizes, xattrs, orphans, and
 *    the LPT against the flash) passes;
 *  - writing goes on (a new file, fsync, a commit), a clean unmount, and a
 *    second read-write mount checks again.
 * The short workload is cut at every flash operation; the long one at a
 * seeded random sample (UBIKIT_LONG_TESTS=1: many more).
 * Orphans: an open unlinked file lives on, is listed in the orphan area at
 * commit (master without NO_ORPHS), is deleted at its last close, at unmount,
 * or, after a power cut, by the recovery. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <cmocka.h>
#include <zlib.h>
#include <ubikit/ubikit.h>

#include "flash/flash.h"
#include "flash/flash_sim.h"
#include "fs/fs.h"
#include "ubi/ubi.h"
#include "ubifs/ubifs.h"
#include "ubifs/test_md5.h"
#include "ubifs/ubifs_test_manifest.h"
#include "ubifs/ubifs_test_tree.h"
#include "util/util_prng.h"

#define WORK UBIKIT_BUILD_DIR "/ubifs-powercut-rw"
#define PEB (128u * 1024)
#define NPEB 32u

static uint8_t *g_img;
static size_t g_img_len;

/* ---- the flash, UBI and the mount ---- */

/* A flash wrapper that remembers what the cut operation was (the messages
 * name it; the simulator itself only says "powered off" afterwards). */
struct rec_flash {
	struct flash_dev base;
	struct flash_dev *in;
	char what[96];
};
static void rf_note(struct rec_flash *r, const char *op, uint32_t p, uint32_t o, size_t n)
{
	if (!flash_sim_is_cut(r->in))
		snprintf(r->what, sizeof(r->what), "%s of PEB %u:%u len %zu", op, p, o, n);
}
static int rf_read(struct flash_dev *d, uint32_t p, uint32_t o, void *b, size_t n)
{
	return flash_read(((struct rec_flash *)d)->in, p, o, b, n);
}
static int rf_write(struct flash_dev *d, uint32_t p, uint32_t o, const void *b, size_t n)
{
	rf_note((struct rec_flash *)d, "program", p, o, n);
	return flash_write(((struct rec_flash *)d)->in, p, o, b, n);
}
static int rf_erase(struct flash_dev *d, uint32_t p)
{
	rf_note((struct rec_flash *)d, "erase", p, 0, 0);
	return flash_erase(((struct rec_flash *)d)->in, p);
}
static int rf_is_bad(struct flash_dev *d, uint32_t p)
{
	return flash_is_bad(((struct rec_flash *)d)->in, p);
}
static int rf_mark_bad(struct flash_dev *d, uint32_t p)
{
	return flash_mark_bad(((struct rec_flash *)d)->in, p);
}
static int rf_sync(struct flash_dev *d)
{
	return flash_sync(((struct rec_flash *)d)->in);
}
static void rf_close(struct flash_dev *d)
{
	(void)d;
}
static const struct flash_ops rf_ops = {rf_read, rf_write, rf_erase, rf_is_bad, rf_mark_bad, rf_sync, rf_close, NULL};

static struct flash_dev *new_flash(void)
{
	struct flash_sim_config cfg;
	flash_sim_config_default(&cfg);
	cfg.geo = (struct flash_geometry){FLASH_NAND, 2048, 512, 64, PEB, NPEB};
	cfg.nop = 4;
	cfg.path = NULL;
	struct flash_dev *fl = NULL;
	char e[256];
	if (flash_sim_create_ex(&cfg, &fl, e, sizeof(e)))
		fail_msg("flash: %s", e);
	for (size_t off = 0; off < g_img_len; off += 2048) {
		const uint8_t *p = g_img + off;
		size_t i = 0;
		while (i < 2048 && p[i] == 0xFF)
			i++;
		if (i < 2048)
			assert_int_equal(flash_write(fl, (uint32_t)(off / PEB), (uint32_t)(off % PEB), p, 2048), 0);
	}
	return fl;
}

struct mnt {
	struct ubi_device *ubi;
	struct ubi_vol_io vol;
	struct ubikit_fs *fs;
};

static int mount_rw(struct flash_dev *fl, struct mnt *m, int ro, char *msg, size_t ml)
{
	memset(m, 0, sizeof(*m));
	struct ubi_attach_opts o;
	ubi_attach_opts_default(&o);
	/* lazy erase (the default) unless UBIKIT_PC_ERASE_AT_UNMAP=1 */
	const char *eu = getenv("UBIKIT_PC_ERASE_AT_UNMAP");
	o.erase_at_unmap = eu && !strcmp(eu, "1");
	int err = ubi_attach_msg(fl, &o, &m->ubi, msg, ml);
	if (err)
		return err;
	err = ubi_volume_io(m->ubi, 0, &m->vol);
	if (!err) {
		struct ubikit_mount_opts mo = {.flags = ro ? UBIKIT_MOUNT_RDONLY : 0};
		err = ubikit_mount_ex(&m->vol, &mo, &m->fs, msg, ml);
	}
	if (err) {
		ubi_detach(m->ubi);
		m->ubi = NULL;
	}
	return err;
}

static int umount(struct mnt *m)
{
	int err = m->fs ? ubikit_unmount(m->fs) : 0;
	if (m->ubi)
		ubi_detach(m->ubi);
	memset(m, 0, sizeof(*m));
	return err;
}

/* ---- the workload and its model ---- */

enum { NNAMES = 12, MAXLEN = 40000, NOPEN = 4 };

struct mfile {
	int exists;
	uint8_t *data;
	size_t len;
	int pinned; /* its contents since the last fsync/sync, untouched since */
	uint8_t *pdata;
	size_t plen;
	int maybe; /* the name may exist after a cut */
};

struct model {
	struct mfile f[NNAMES];
	struct ubikit_file *open[NOPEN]; /* open unlinked files (orphans) */
	uint64_t open_ino[NOPEN];
	struct util_prng r;
	unsigned ops, fsyncs, syncs, orphans;
};

static void name_of(int i, char *p)
{
	sprintf(p, i < NNAMES / 2 ? "/f%d" : "/d/g%d", i);
}

static void unpin(struct mfile *f)
{
	f->pinned = 0;
}

static void pin(struct mfile *f)
{
	free(f->pdata);
	f->pdata = malloc(f->len + 1);
	memcpy(f->pdata, f->data, f->len);
	f->plen = f->len;
	f->pinned = 1;
}

static void model_free(struct model *m)
{
	for (int i = 0; i < NNAMES; i++) {
		free(m->f[i].data);
		free(m->f[i].pdata);
	}
	memset(m, 0, sizeof(*m));
}

static void fill(struct util_prng *r, uint8_t *p, size_t n)
{
	/* half compressible, half not */
	int text = util_prng_below(r, 2);
	for (size_t i = 0; i < n; i++)
		p[i] = text ? (uint8_t)('a' + (i / 7) % 26) : (uint8_t)util_prng_next(r);
}

/* One operation; returns the fs API's error (after a cut: -EIO/-EROFS). */
static int step(struct model *m, struct ubikit_fs *fs)
{
	struct util_prng *r = &m->r;
	int i = (int)util_prng_below(r, NNAMES), j = (int)util_prng_below(r, NNAMES);
	struct mfile *f = &m->f[i], *g = &m->f[j];
	char p[32], q[32];
	name_of(i, p);
	name_of(j, q);
	unsigned kind = (unsigned)util_prng_below(r, 100);
	int err = 0;
	m->ops++;
	if (kind < 30 || !f->exists) { /* write at an offset (creates) */
		size_t off = f->exists && f->len && util_prng_below(r, 2) ? util_prng_below(r, f->len + 1) : 0;
		size_t len = 1 + util_prng_below(r, util_prng_below(r, 4) ? 3000 : 20000);
		if (off + len > MAXLEN)
			len = MAXLEN - off;
		uint8_t *buf = malloc(len);
		fill(r, buf, len);
		struct ubikit_file *h;
		f->maybe = 1;
		unpin(f);
		err = ubikit_open(fs, p, O_WRONLY | O_CREAT, 0644, &h);
		if (!err) {
			if (!f->exists) {
				f->exists = 1;
				f->len = 0;
				free(f->data);
				f->data = calloc(1, MAXLEN);
			}
			ssize_t n = ubikit_pwrite(h, buf, len, off);
			if (n == (ssize_t)len) {
				memcpy(f->data + off, buf, len);
				if (off + len > f->len)
					f->len = off + len;
			} else {
				/* a short write: the file system filled up part way (budget) */
				err = n < 0 ? (int)n : -ENOSPC;
			}
			if (!err && util_prng_below(r, 3) == 0) {
				err = ubikit_fsync(h);
				if (!err) {
					pin(f);
					m->fsyncs++;
				}
			}
			int e2 = ubikit_close(h);
			if (!err)
				err = e2;
		}
		free(buf);
	} else if (kind < 42) { /* truncate */
		size_t len = util_prng_below(r, f->len + 5000);
		if (len > MAXLEN)
			len = MAXLEN;
		unpin(f);
		err = ubikit_truncate(fs, p, len);
		if (!err) {
			if (len > f->len)
				memset(f->data + f->len, 0, len - f->len);
			f->len = len;
		}
	} else if (kind < 52) { /* rename over another name (or to a free one) */
		if (i == j)
			return 0;
		unpin(f);
		unpin(g);
		g->maybe = 1;
		err = ubikit_rename(fs, p, q, 0);
		if (!err) {
			free(g->data);
			free(g->pdata);
			*g = *f;
			free(g->pdata);
			g->pdata = NULL;
			g->pinned = 0;
			g->maybe = 1;
			memset(f, 0, sizeof(*f));
			f->maybe = 1; /* the old name may still be there */
		}
	} else if (kind < 60) { /* unlink */
		unpin(f);
		err = ubikit_unlink(fs, p);
		if (!err) {
			free(f->data);
			free(f->pdata);
			memset(f, 0, sizeof(*f));
			f->maybe = 1;
		}
	} else if (kind < 66) { /* unlink an open file, write to it: an orphan */
		int slot = -1;
		for (int k = 0; k < NOPEN; k++)
			if (!m->open[k])
				slot = k;
		if (slot < 0) { /* close one: the orphan goes */
			slot = (int)util_prng_below(r, NOPEN);
			err = ubikit_close(m->open[slot]);
			m->open[slot] = NULL;
			return err;
		}
		unpin(f);
		struct ubikit_file *h;
		err = ubikit_open(fs, p, O_RDWR, 0, &h);
		if (err)
			return err;
		struct ubikit_stat st;
		err = ubikit_stat(fs, p, &st);
		if (!err)
			err = ubikit_unlink(fs, p);
		if (err) {
			ubikit_close(h);
			return err;
		}
		free(f->data);
		free(f->pdata);
		memset(f, 0, sizeof(*f));
		f->maybe = 1;
		m->open[slot] = h;
		m->open_ino[slot] = st.ino;
		m->orphans++;
		uint8_t buf[5000];
		fill(r, buf, sizeof(buf));
		ssize_t n = ubikit_pwrite(h, buf, sizeof(buf), 1000);
		if (n < 0)
			return (int)n;
		/* a short write: the budget ran out part way (or a write-back it
		 * caused was cut); the next call would say which */
		if (n < (ssize_t)sizeof(buf))
			return -ENOSPC;
		/* still readable */
		uint8_t back[5000];
		if (ubikit_pread(h, back, sizeof(back), 1000) != (ssize_t)sizeof(back) || memcmp(back, buf, sizeof(buf)))
			fail_msg("an open unlinked file does not read back what was written to it");
	} else if (kind < 74) { /* xattr */
		char v[64];
		size_t vl = 1 + util_prng_below(r, sizeof(v) - 1);
		fill(r, (uint8_t *)v, vl);
		char nm[16];
		sprintf(nm, "user.x%u", (unsigned)util_prng_below(r, 3));
		unpin(f);
		if (util_prng_below(r, 4) == 0) {
			err = ubikit_removexattr(fs, p, nm);
			if (err == -ENODATA)
				err = 0;
		} else {
			err = ubikit_setxattr(fs, p, nm, v, vl, 0);
		}
	} else if (kind < 80) { /* sync = commit: the whole tree is durable */
		err = ubikit_sync(fs);
		if (!err) {
			m->syncs++;
			for (int k = 0; k < NNAMES; k++) {
				m->f[k].maybe = m->f[k].exists;
				if (m->f[k].exists)
					pin(&m->f[k]);
				else
					unpin(&m->f[k]);
			}
		}
	} else { /* fsync by path through a fresh handle */
		struct ubikit_file *h;
		err = ubikit_open(fs, p, O_RDONLY, 0, &h);
		if (!err) {
			err = ubikit_fsync(h);
			if (!err) {
				pin(f);
				m->fsyncs++;
			}
			int e2 = ubikit_close(h);
			if (!err)
				err = e2;
		}
	}
	return err;
}

static int start(struct model *m, struct ubikit_fs *fs, uint64_t seed)
{
	memset(m, 0, sizeof(*m));
	util_prng_seed(&m->r, seed);
	return ubikit_mkdir(fs, "/d", 0755);
}

/* After recovery: pinned files exactly, no unknown names. */
static void check_model(const struct model *m, struct ubikit_fs *fs, const char *ctx)
{
	static uint8_t buf[MAXLEN + 10];
	for (int i = 0; i < NNAMES; i++) {
		const struct mfile *f = &m->f[i];
		char p[32];
		name_of(i, p);
		struct ubikit_stat st;
		int err = ubikit_stat(fs, p, &st);
		if (f->pinned) {
			if (err)
				fail_msg("%s: %s was fsync'ed (%zu bytes) but is missing: %d", ctx, p, f->plen, err);
			struct ubikit_file *h;
			assert_int_equal(ubikit_open(fs, p, O_RDONLY, 0, &h), 0);
			ssize_t n = ubikit_pread(h, buf, sizeof(buf), 0);
			ubikit_close(h);
			if (n != (ssize_t)f->plen || memcmp(buf, f->pdata, f->plen))
				fail_msg("%s: %s has %zd bytes, fsync'ed were %zu (or the contents differ)", ctx, p, n,
					 f->plen);
		} else if (!err && !f->maybe) {
			fail_msg("%s: %s exists but the workload never left it there", ctx, p);
		}
	}
	const char *dirs[] = {"/", "/d"};
	for (int d = 0; d < 2; d++) {
		struct ubikit_dir *dh;
		int oerr = ubikit_opendir(fs, dirs[d], &dh);
		if (d && oerr == -ENOENT)
			continue; /* /d was made at the start, never synced before this cut */
		assert_int_equal(oerr, 0);
		struct ubikit_dirent e;
		int err;
		while ((err = ubikit_readdir(dh, &e)) == 1) {
			if (!strcmp(e.name, ".") || !strcmp(e.name, ".."))
				continue;
			int ok = d == 0 && (!strcmp(e.name, "d") || !strcmp(e.name, "after"));
			for (int i = 0; i < NNAMES && !ok; i++) {
				char p[32];
				name_of(i, p);
				ok = !strcmp(p + (d ? 3 : 1), e.name) && (d ? i >= NNAMES / 2 : i < NNAMES / 2);
			}
			if (!ok)
				fail_msg("%s: unknown name %s in %s", ctx, e.name, dirs[d]);
		}
		assert_true(err == 0 || err == 1);
		ubikit_closedir(dh);
	}
}

static void check_fs(struct ubikit_fs *fs, const char *ctx)
{
	if (ubifs_check(fs_ubifs(fs)))
		fail_msg("%s: %s", ctx, ubifs_errmsg(fs_ubifs(fs)));
}

/* ---- export for the kernel's judgement (tests/vm/ubifs_powercut_rw.sh):
 * UBIKIT_PC_EXPORT=DIR writes, for every UBIKIT_PC_EXPORT_EVERY-th cut of
 * the short workload, the flash after our recovery (and the writes after
 * it) as DIR/cutN.flash and our view as DIR/cutN.list: "./path size md5"
 * per regular file, sorted, as the VM lists it. */
static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void export_listing(struct ubikit_fs *fs, const char *path)
{
	char *names[64];
	int n = 0;
	const char *dirs[] = {"/", "/d/"};
	for (int d = 0; d < 2; d++) {
		struct ubikit_dir *dh;
		if (ubikit_opendir(fs, dirs[d], &dh))
			continue;
		struct ubikit_dirent e;
		while (ubikit_readdir(dh, &e) == 1 && n < 64) {
			char p[300];
			snprintf(p, sizeof(p), "%s%s", dirs[d], e.name);
			struct ubikit_stat st;
			if (strcmp(e.name, ".") && strcmp(e.name, "..") && !ubikit_lstat(fs, p, &st) && S_ISREG(st.mode))
				names[n++] = strdup(p);
		}
		ubikit_closedir(dh);
	}
	qsort(names, (size_t)n, sizeof(*names), cmp_str);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	static uint8_t buf[MAXLEN + 10000];
	for (int i = 0; i < n; i++) {
		struct ubikit_file *h;
		assert_int_equal(ubikit_open(fs, names[i], O_RDONLY, 0, &h), 0);
		ssize_t len = ubikit_pread(h, buf, sizeof(buf), 0);
		ubikit_close(h);
		assert_true(len >= 0);
		struct util_md5 md;
		char hex[33];
		util_md5_init(&md);
		util_md5_update(&md, buf, (size_t)len);
		util_md5_hex(&md, hex);
		fprintf(f, ".%s %zd %s\n", names[i], len, hex);
		free(names[i]);
	}
	fclose(f);
}

static void export_flash(struct flash_dev *fl, const char *path)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	static uint8_t buf[PEB];
	for (uint32_t peb = 0; peb < NPEB; peb++) {
		assert_int_equal(flash_read(fl, peb, 0, buf, PEB), 0);
		assert_int_equal(fwrite(buf, 1, PEB, f), PEB);
	}
	fclose(f);
}

static const char *export_dir(uint64_t cut)
{
	const char *d = getenv("UBIKIT_PC_EXPORT"), *e = getenv("UBIKIT_PC_EXPORT_EVERY");
	uint64_t every = e ? strtoull(e, NULL, 0) : 20;
	return d && *d && every && cut % every == 0 ? d : NULL;
}

struct figures;
static int mount_after_cut(struct flash_dev *fl, struct mnt *mt, const char *ctx, const char *cut_op,
			   const char *phase, struct figures *fig);

struct figures {
	unsigned runs, cut_in_mount, recovered, erase_refused;
};

/* One run: workload of nops steps from seed, power cut at flash operation
 * cut (0: none). Returns 1 when the cut came, 0 when the workload ended first. */
static int one_run(uint64_t seed, unsigned nops, uint64_t cut, struct figures *fig)
{
	struct flash_dev *fl = new_flash();
	struct rec_flash rec = {.base = {&rf_ops, fl->geo, 0}, .in = fl};
	char msg[512], ctx[200];
	snprintf(ctx, sizeof(ctx), "seed %llu cut %llu", (unsigned long long)seed, (unsigned long long)cut);
	if (cut)
		flash_sim_power_cut_after(fl, cut);
	struct mnt mt;
	struct model *m = calloc(1, sizeof(*m));
	int err = mount_rw(&rec.base, &mt, 0, msg, sizeof(msg));
	if (!err) {
		err = start(m, mt.fs, seed);
		for (unsigned k = 0; !err && k < nops; k++)
			err = step(m, mt.fs);
		for (int k = 0; k < NOPEN; k++)
			if (m->open[k]) {
				int e2 = ubikit_close(m->open[k]);
				m->open[k] = NULL;
				if (!err)
					err = e2;
			}
		int e2 = umount(&mt);
		if (!err)
			err = e2;
	} else {
		fig->cut_in_mount++;
	}
	int was_cut = flash_sim_is_cut(fl);
	char cut_op[96];
	snprintf(cut_op, sizeof(cut_op), "%s", rec.what);
	if (was_cut) /* name the cut operation in every message below */
		snprintf(ctx, sizeof(ctx), "seed %llu cut %llu (%s)", (unsigned long long)seed, (unsigned long long)cut,
			 cut_op);
	if (err && !was_cut)
		fail_msg("%s: error %d without a power cut: %s", ctx, err, msg);
	if (!was_cut) {
		/* no cut: the final state is all durable */
		for (int k = 0; k < NNAMES; k++) {
			m->f[k].maybe = m->f[k].exists;
			if (m->f[k].exists)
				pin(&m->f[k]);
		}
	}
	assert_int_equal(flash_sim_reopen(fl), 0);
	fig->runs++;
	/* recovery: read-write mount */
	if (mount_after_cut(&rec.base, &mt, ctx, cut_op, "read-write mount after the power cut", fig))
		goto out;
	fig->recovered++;
	check_model(m, mt.fs, ctx);
	check_fs(mt.fs, ctx);
	/* go on writing */
	struct ubikit_file *h;
	static uint8_t after[9000];
	memset(after, 0x5A, sizeof(after));
	if (ubikit_open(mt.fs, "/after", O_WRONLY | O_CREAT | O_TRUNC, 0600, &h))
		fail_msg("%s: create after recovery: %s", ctx, ubikit_errmsg(mt.fs));
	assert_int_equal(ubikit_pwrite(h, after, sizeof(after), 0), (ssize_t)sizeof(after));
	assert_int_equal(ubikit_fsync(h), 0);
	assert_int_equal(ubikit_close(h), 0);
	assert_int_equal(ubikit_sync(mt.fs), 0);
	assert_int_equal(umount(&mt), 0);
	if (mount_after_cut(&rec.base, &mt, ctx, cut_op, "second read-write mount", fig))
		goto out;
	check_model(m, mt.fs, ctx);
	check_fs(mt.fs, ctx);
	struct ubikit_stat st;
	assert_int_equal(ubikit_stat(mt.fs, "/after", &st), 0);
	assert_int_equal(st.size, sizeof(after));
	const char *exp = was_cut ? export_dir(cut) : NULL;
	char path[2048];
	if (exp) {
		snprintf(path, sizeof(path), "%s/cut%llu.list", exp, (unsigned long long)cut);
		export_listing(mt.fs, path);
	}
	assert_int_equal(umount(&mt), 0);
	if (exp) {
		snprintf(path, sizeof(path), "%s/cut%llu.flash", exp, (unsigned long long)cut);
		export_flash(fl, path);
	}
out:
	model_free(m);
	free(m);
	flash_close(fl);
	return was_cut;
}

/* UBI's limit, not UBIFS's: a cut in the erasure of an unmapped LEB's PEB
 * may bring that LEB back torn (headers intact, data random: the
 * simulator's erase cut; Linux UBI documents that unmap is not guaranteed
 * over unclean reboots, and Linux UBIFS's replay refuses such a log LEB the
 * same way). A refusal is accepted only after such a cut, and counted; any
 * other cut must recover. 1 = refused (the run ends). */
static int mount_after_cut(struct flash_dev *fl, struct mnt *mt, const char *ctx, const char *cut_op,
			   const char *phase, struct figures *fig)
{
	char msg[512];
	if (!mount_rw(fl, mt, 0, msg, sizeof(msg)))
		return 0;
	if (strncmp(cut_op, "erase", 5))
		fail_msg("%s: %s failed: %s", ctx, phase, msg);
	fig->erase_refused++;
	return 1;
}

static int setup(void **state)
{
	(void)state;
	if (tt_run("rm -rf '%s' && mkdir -p '%s/empty' && mkfs.ubifs -r '%s/empty' -m 2048 -e 129024 -c 24 -x lzo -o "
		   "'%s/fs.img' && printf '[ubifs]\\nmode=ubi\\nimage=%s/fs.img\\nvol_id=0\\nvol_type=dynamic\\n"
		   "vol_name=rootfs\\nvol_size=%u\\n' >'%s/ubi.ini' && ubinize -o '%s/ubi.img' -m 2048 -p 128KiB -s 512 "
		   "'%s/ubi.ini'",
		   WORK, WORK, WORK, WORK, WORK, 24u * 129024u, WORK, WORK, WORK))
		return -1;
	FILE *f = fopen(WORK "/ubi.img", "rb");
	if (!f)
		return -1;
	fseek(f, 0, SEEK_END);
	g_img_len = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	g_img = malloc(g_img_len);
	size_t got = fread(g_img, 1, g_img_len, f);
	fclose(f);
	return got == g_img_len && g_img_len <= (size_t)PEB * NPEB ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	free(g_img);
	return 0;
}

static int long_tests(void)
{
	const char *e = getenv("UBIKIT_LONG_TESTS");
	return e && *e && strcmp(e, "0");
}

/* ---- orphans, without power cuts first ---- */

static void t_orphans(void **state)
{
	(void)state;
	struct flash_dev *fl = new_flash();
	char msg[512];
	struct mnt mt;
	assert_int_equal(mount_rw(fl, &mt, 0, msg, sizeof(msg)), 0);
	struct ubikit_file *h, *h2;
	static uint8_t buf[20000];
	memset(buf, 'o', sizeof(buf));
	/* closed after unlink: gone at close */
	assert_int_equal(ubikit_open(mt.fs, "/a", O_RDWR | O_CREAT, 0644, &h), 0);
	assert_int_equal(ubikit_pwrite(h, buf, sizeof(buf), 0), (ssize_t)sizeof(buf));
	assert_int_equal(ubikit_setxattr(mt.fs, "/a", "user.q", "v", 1, 0), 0);
	struct ubikit_stat st;
	assert_int_equal(ubikit_stat(mt.fs, "/a", &st), 0);
	uint64_t ino_a = st.ino;
	assert_int_equal(ubikit_unlink(mt.fs, "/a"), 0);
	assert_int_equal(ubikit_stat(mt.fs, "/a", &st), -ENOENT);
	assert_int_equal(ubikit_stat_ino(mt.fs, ino_a, &st), 0); /* lives on */
	assert_int_equal(st.nlink, 0);
	assert_int_equal(ubikit_pwrite(h, buf, 100, sizeof(buf)), 100);
	assert_int_equal(ubikit_pread(h, buf, sizeof(buf), 0), (ssize_t)sizeof(buf));
	check_fs(mt.fs, "open orphan");
	assert_int_equal(ubikit_sync(mt.fs), 0); /* committed while open: in the orphan area */
	struct ubifs_fs_info info;
	ubifs_get_info(fs_ubifs(mt.fs), &info);
	assert_false(info.mst.flags & 2u /* UBIFS_MST_NO_ORPHS */);
	check_fs(mt.fs, "orphan after commit");
	assert_int_equal(ubikit_close(h), 0);
	assert_int_equal(ubikit_stat_ino(mt.fs, ino_a, &st), -ENOENT);
	check_fs(mt.fs, "orphan closed");
	assert_int_equal(ubikit_sync(mt.fs), 0);
	ubifs_get_info(fs_ubifs(mt.fs), &info);
	assert_true(info.mst.flags & 2u);
	/* still open at unmount: deleted by the unmount */
	assert_int_equal(ubikit_open(mt.fs, "/b", O_RDWR | O_CREAT, 0644, &h), 0);
	assert_int_equal(ubikit_pwrite(h, buf, 5000, 0), 5000);
	assert_int_equal(ubikit_stat(mt.fs, "/b", &st), 0);
	uint64_t ino_b = st.ino;
	assert_int_equal(ubikit_unlink(mt.fs, "/b"), 0);
	assert_int_equal(umount(&mt), 0);
	free(h); /* the handle outlived its mount: only its memory is left */
	assert_int_equal(mount_rw(fl, &mt, 0, msg, sizeof(msg)), 0);
	assert_int_equal(ubikit_stat_ino(mt.fs, ino_b, &st), -ENOENT);
	check_fs(mt.fs, "after unmount with an orphan");
	/* open twice, unlinked, committed, then the power goes: recovery kills it */
	assert_int_equal(ubikit_open(mt.fs, "/c", O_RDWR | O_CREAT, 0644, &h), 0);
	assert_int_equal(ubikit_open(mt.fs, "/c", O_RDONLY, 0, &h2), 0);
	assert_int_equal(ubikit_pwrite(h, buf, 7000, 0), 7000);
	assert_int_equal(ubikit_setxattr(mt.fs, "/c", "user.x", "val", 3, 0), 0);
	assert_int_equal(ubikit_stat(mt.fs, "/c", &st), 0);
	uint64_t ino_c = st.ino;
	assert_int_equal(ubikit_unlink(mt.fs, "/c"), 0);
	assert_int_equal(ubikit_close(h2), 0); /* one reference left */
	assert_int_equal(ubikit_stat_ino(mt.fs, ino_c, &st), 0);
	assert_int_equal(ubikit_sync(mt.fs), 0);
	/* the cut comes while another file is synced: nothing of /c's inode is
	 * in the journal after the commit, only the orphan area names it */
	assert_int_equal(ubikit_open(mt.fs, "/other", O_RDWR | O_CREAT, 0644, &h2), 0);
	ubikit_pwrite(h2, buf, 3000, 0);
	flash_sim_power_cut_after(fl, 1);
	ubikit_fsync(h2); /* the cut */
	assert_true(flash_sim_is_cut(fl));
	ubikit_close(h2);
	ubikit_close(h);
	umount(&mt);
	assert_int_equal(flash_sim_reopen(fl), 0);
	if (mount_rw(fl, &mt, 0, msg, sizeof(msg)))
		fail_msg("recovery mount: %s", msg);
	ubifs_get_info(fs_ubifs(mt.fs), &info);
	if (info.orphans_killed < 1)
		fail_msg("recovery killed no orphan (master flags 0x%x, need_recovery %d)", info.mst.flags,
			 info.need_recovery);
	assert_int_equal(ubikit_stat_ino(mt.fs, ino_c, &st), -ENOENT);
	check_fs(mt.fs, "orphan killed by the read-write recovery");
	assert_int_equal(umount(&mt), 0);
	/* read-only view after that: clean */
	assert_int_equal(mount_rw(fl, &mt, 1, msg, sizeof(msg)), 0);
	check_fs(mt.fs, "read-only after recovery");
	assert_int_equal(umount(&mt), 0);
	flash_close(fl);
}

/* ---- power cuts ---- */

static void t_every_cut(void **state)
{
	(void)state;
	const uint64_t seed = 5;
	const unsigned nops = long_tests() ? 150 : 40; /* long: every cut of a longer workload too */
	struct figures fig = {0};
	const char *from = getenv("UBIKIT_PC_FROM"); /* debugging: start at this cut */
	uint64_t cut = from ? strtoull(from, NULL, 0) : 1;
	time_t t0 = time(NULL);
	while (one_run(seed, nops, cut, &fig))
		cut++;
	printf("every cut: %u runs (cut at each of the %llu flash operations of the short workload; %u in the "
	       "first mount): %u recovered read-write and checked, %u refused after a cut erase (UBI), %lds\n",
	       fig.runs, (unsigned long long)cut - 1, fig.cut_in_mount, fig.recovered, fig.erase_refused,
	       (long)(time(NULL) - t0));
	assert_true(fig.runs > 50);
}

/* After a recovery (which ends with a commit) everything present is durable:
 * the model takes the recovered tree as its new start. */
static void adopt(struct model *m, struct ubikit_fs *fs)
{
	static uint8_t buf[MAXLEN + 10];
	for (int i = 0; i < NNAMES; i++) {
		struct mfile *f = &m->f[i];
		char p[32];
		name_of(i, p);
		free(f->data);
		free(f->pdata);
		memset(f, 0, sizeof(*f));
		struct ubikit_file *h;
		if (ubikit_open(fs, p, O_RDONLY, 0, &h))
			continue;
		ssize_t n = ubikit_pread(h, buf, sizeof(buf), 0);
		ubikit_close(h);
		assert_true(n >= 0 && n <= MAXLEN);
		f->exists = 1;
		f->data = calloc(1, MAXLEN);
		memcpy(f->data, buf, (size_t)n);
		f->len = (size_t)n;
		f->maybe = 1;
		pin(f);
	}
	memset(m->open, 0, sizeof(m->open));
	/* /d may not have survived (made but never synced before the cut) */
	int err = ubikit_mkdir(fs, "/d", 0755);
	assert_true(err == 0 || err == -EEXIST);
}

/* Cuts chained on one flash: a workload runs until the cut, the flash is
 * rebooted and recovered (sometimes with a second cut during the recovery
 * itself), checked, and the workload goes on from the recovered tree. */
static void t_random_cuts(void **state)
{
	(void)state;
	unsigned cycles = long_tests() ? 20000 : 1000;
	struct util_prng r;
	util_prng_seed(&r, 2024);
	time_t t0 = time(NULL);
	struct figures fig = {0};
	unsigned cuts = 0, in_recovery = 0, fresh = 0, full = 0, k;
	struct flash_dev *fl = NULL;
	struct rec_flash rec;
	struct mnt mt = {0};
	struct model *m = calloc(1, sizeof(*m));
	char msg[512], ctx[200];
	for (k = 0; k < cycles; k++) {
		if (!fl) { /* a fresh flash (at the start, after a refused mount) */
			fl = new_flash();
			rec = (struct rec_flash){.base = {&rf_ops, fl->geo, 0}, .in = fl};
			assert_int_equal(mount_rw(&rec.base, &mt, 0, msg, sizeof(msg)), 0);
			model_free(m);
			assert_int_equal(start(m, mt.fs, 1000 + k), 0);
			fresh++;
		}
		flash_sim_power_cut_after(fl, 1 + util_prng_below(&r, 120));
		int err = 0;
		for (unsigned n = 0; !err && n < 60; n++)
			err = step(m, mt.fs);
		if (!flash_sim_is_cut(fl) && err == -ENOSPC) {
			/* full (no garbage collection yet, helper h-gc): a fresh flash */
			for (int o = 0; o < NOPEN; o++)
				if (m->open[o])
					ubikit_close(m->open[o]);
			memset(m->open, 0, sizeof(m->open));
			umount(&mt);
			flash_close(fl);
			fl = NULL;
			full++;
			continue;
		}
		if (!flash_sim_is_cut(fl)) {
			if (err)
				fail_msg("cycle %u: error %d without a power cut", k, err);
			flash_sim_power_cut_after(fl, 0);
			continue;
		}
		cuts++;
		char cut_op[96];
		snprintf(cut_op, sizeof(cut_op), "%s", rec.what);
		for (int o = 0; o < NOPEN; o++)
			if (m->open[o])
				ubikit_close(m->open[o]);
		memset(m->open, 0, sizeof(m->open));
		umount(&mt);
		assert_int_equal(flash_sim_reopen(fl), 0);
		snprintf(ctx, sizeof(ctx), "cycle %u (%s)", k, cut_op);
		if (util_prng_below(&r, 4) == 0) { /* a cut during the recovery too */
			flash_sim_power_cut_after(fl, 1 + util_prng_below(&r, 40));
			if (mount_rw(&rec.base, &mt, 0, msg, sizeof(msg))) {
				if (!flash_sim_is_cut(fl) && strncmp(cut_op, "erase", 5))
					fail_msg("%s: recovery failed: %s", ctx, msg);
				if (flash_sim_is_cut(fl)) {
					in_recovery++;
					snprintf(cut_op, sizeof(cut_op), "%s", rec.what);
					snprintf(ctx, sizeof(ctx), "cycle %u (cut again in the recovery: %s)", k, cut_op);
				}
				assert_int_equal(flash_sim_reopen(fl), 0);
			} else {
				flash_sim_power_cut_after(fl, 0);
				goto recovered;
			}
			flash_sim_power_cut_after(fl, 0);
		}
		if (mount_after_cut(&rec.base, &mt, ctx, cut_op, "read-write mount after the power cut", &fig)) {
			flash_close(fl);
			fl = NULL;
			continue;
		}
	recovered:
		fig.recovered++;
		check_model(m, mt.fs, ctx);
		check_fs(mt.fs, ctx);
		adopt(m, mt.fs);
		if (!long_tests() && time(NULL) - t0 > 30)
			break; /* keep the default run short on a loaded machine */
	}
	if (fl) {
		for (int o = 0; o < NOPEN; o++)
			if (m->open[o])
				ubikit_close(m->open[o]);
		assert_int_equal(umount(&mt), 0);
		flash_close(fl);
	}
	model_free(m);
	free(m);
	printf("random cuts, chained: %u cycles, %u cuts (%u more during the recovery), %u recovered and checked, "
	       "%u refused after a cut erase (UBI); %u fresh flashes (%u after ENOSPC: no GC yet), %lds\n",
	       k, cuts, in_recovery, fig.recovered, fig.erase_refused, fresh, full, (long)(time(NULL) - t0));
	assert_true(cuts > 50);
}

/* The power cuts the kernel made itself (tests/data/ubifs/powercut: NAND
 * 2048, 128 KiB, 16 MiB, dumps without OOB), mounted read-write by ubikit:
 * our recovery must show the tree the kernel showed after its own
 * read-write recovery (NAME.manifest), pass ubifs_check, and mount again
 * cleanly. UBIKIT_PC_EXPORT: the results go to DIR/kNAME.flash for the
 * kernel to check (tests/vm/ubifs_powercut_rw.sh). */
static void t_kernel_images(void **state)
{
	(void)state;
	const char *dir = UBIKIT_TEST_DATA "/ubifs/powercut";
	FILE *lf = fopen(UBIKIT_TEST_DATA "/ubifs/powercut/LIST", "r");
	assert_non_null(lf);
	char name[128];
	int n = 0, refused = 0, idx = 0;
	const uint32_t npeb = 128;
	size_t dev = (size_t)PEB * npeb;
	uint8_t *buf = malloc(dev);
	while (fscanf(lf, "%127s", name) == 1) {
		char gz[600], mf[600], msg[512];
		snprintf(gz, sizeof(gz), "%s/%s.img.gz", dir, name);
		snprintf(mf, sizeof(mf), "%s/%s.manifest", dir, name);
		char *want = tm_slurp(mf);
		assert_non_null(want);
		if (!strcmp(want, "REFUSED\n")) {
			free(want);
			refused++;
			continue; /* test_ubifs_replay checks that we refuse it too */
		}
		free(want);
		if (!long_tests() && idx++ % 4) /* the default run: every 4th image */
			continue;
		memset(buf, 0xFF, dev);
		gzFile g = gzopen(gz, "rb");
		assert_non_null(g);
		assert_true(gzread(g, buf, (unsigned)dev) > 0);
		gzclose(g);
		struct flash_sim_config cfg;
		flash_sim_config_default(&cfg);
		cfg.geo = (struct flash_geometry){FLASH_NAND, 2048, 512, 64, PEB, npeb};
		cfg.nop = 4;
		struct flash_dev *fl;
		assert_int_equal(flash_sim_create_ex(&cfg, &fl, msg, sizeof(msg)), 0);
		for (size_t off = 0; off < dev; off += 2048) {
			size_t i = 0;
			while (i < 2048 && buf[off + i] == 0xFF)
				i++;
			if (i < 2048)
				assert_int_equal(flash_write(fl, (uint32_t)(off / PEB), (uint32_t)(off % PEB), buf + off, 2048), 0);
		}
		struct mnt mt;
		if (mount_rw(fl, &mt, 0, msg, sizeof(msg)))
			fail_msg("%s: read-write mount (recovery) of the kernel's power cut: %s", name, msg);
		check_fs(mt.fs, name);
		char *got = tm_manifest(mt.fs);
		if (tm_compare(got, mf, WORK, name))
			fail_msg("%s: after our read-write recovery the tree differs from the kernel's", name);
		free(got);
		assert_int_equal(umount(&mt), 0);
		if (mount_rw(fl, &mt, 0, msg, sizeof(msg)))
			fail_msg("%s: second read-write mount: %s", name, msg);
		check_fs(mt.fs, name);
		assert_int_equal(umount(&mt), 0);
		const char *exp = getenv("UBIKIT_PC_EXPORT");
		if (exp && *exp && n % (long_tests() ? 8 : 2) == 0) {
			char path[2048];
			snprintf(path, sizeof(path), "%s/k%s.flash", exp, name);
			FILE *f = fopen(path, "wb");
			assert_non_null(f);
			for (uint32_t peb = 0; peb < npeb; peb++) {
				assert_int_equal(flash_read(fl, peb, 0, buf, PEB), 0);
				assert_int_equal(fwrite(buf, 1, PEB, f), PEB);
			}
			fclose(f);
			snprintf(path, sizeof(path), "cp '%s' '%s/k%s.manifest'", mf, exp, name);
			assert_int_equal(system(path), 0);
		}
		flash_close(fl);
		n++;
	}
	fclose(lf);
	free(buf);
	printf("kernel power cuts: %d images recovered read-write by ubikit, equal to the kernel's view, checked (%d "
	       "the kernel refused: skipped)\n",
	       n, refused);
	assert_true(n >= 8);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_orphans),
		cmocka_unit_test(t_kernel_images),
		cmocka_unit_test(t_every_cut),
		cmocka_unit_test(t_random_cuts),
	};
	const char *only = getenv("UBIKIT_TEST_FILTER"); /* e.g. "t_kernel_images" */
	if (only && *only)
		cmocka_set_test_filter(only);
	return cmocka_run_group_tests(tests, setup, teardown);
}
