/* torture_model — the reference model of the torture workload and the
 * random operations it checks: 16 name slots in three directories, hard
 * links between them (so names map to model inodes), up to four open
 * handles (writes through them are cached, fsync of some), unlinked open
 * files (orphans), truncates, renames, xattrs, commits. Every call's result
 * is compared with what the model expects; after a power cut the model
 * says what must be there (names whose fsync or sync returned, with those
 * contents) and what may be (names touched since). */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "torture/torture_priv.h"

static const char *const dirs[] = {"/", "/d", "/d/e"};

static int dir_of(int slot)
{
	return slot < 6 ? 0 : slot < 12 ? 1 : 2;
}

const char *tm_path(int slot, char *buf)
{
	static const char *const fmt[] = {"/f%d", "/d/g%d", "/d/e/h%d"};
	sprintf(buf, fmt[dir_of(slot)], slot);
	return buf;
}

#define TR(m, ...)                                                                                             \
	do {                                                                                                   \
		if ((m)->trace)                                                                                \
			fprintf(stderr, __VA_ARGS__);                                                          \
	} while (0)

static int fail(struct tmodel *m, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(m->err, sizeof(m->err), fmt, ap);
	va_end(ap);
	return 1;
}

void tm_init(struct tmodel *m, uint64_t seed, size_t maxlen)
{
	memset(m, 0, sizeof(*m));
	util_prng_seed(&m->r, seed);
	m->maxlen = maxlen;
	for (int i = 0; i < TM_NAMES; i++)
		m->name[i] = -1;
	for (int i = 0; i < TM_OPEN; i++)
		m->open[i].ino = -1;
}

static void ino_free(struct tm_inode *in)
{
	free(in->data);
	memset(in, 0, sizeof(*in));
}

void tm_free(struct tmodel *m)
{
	for (int i = 0; i < TM_INODES; i++)
		ino_free(&m->ino[i]);
	for (int i = 0; i < TM_NAMES; i++) {
		free(m->pdata[i]);
		m->pdata[i] = NULL;
	}
}

int tm_make_dirs(struct ubikit_fs *fs)
{
	for (int d = 1; d < 3; d++) {
		int err = ubikit_mkdir(fs, dirs[d], 0755);
		if (err && err != -EEXIST)
			return err;
	}
	return ubikit_sync(fs);
}

static int ino_new(struct tmodel *m)
{
	for (int i = 0; i < TM_INODES; i++)
		if (!m->ino[i].used) {
			m->ino[i].used = 1;
			return i;
		}
	return -1;
}

/* Free a model inode nobody refers to (no name, no handle). */
static void ino_gc(struct tmodel *m, int ino)
{
	if (ino < 0)
		return;
	for (int i = 0; i < TM_NAMES; i++)
		if (m->name[i] == ino)
			return;
	for (int i = 0; i < TM_OPEN; i++)
		if (m->open[i].h && m->open[i].ino == ino)
			return;
	ino_free(&m->ino[ino]);
}

static void unpin(struct tmodel *m, int slot)
{
	m->pinned[slot] = 0;
}

/* The inode changed: no name of it keeps its pinned contents. */
static void unpin_ino(struct tmodel *m, int ino)
{
	for (int i = 0; i < TM_NAMES; i++)
		if (m->name[i] == ino)
			m->pinned[i] = 0;
}

static void pin(struct tmodel *m, int slot)
{
	struct tm_inode *in = &m->ino[m->name[slot]];
	free(m->pdata[slot]);
	m->pdata[slot] = malloc(in->len + 1);
	if (in->len)
		memcpy(m->pdata[slot], in->data, in->len);
	m->plen[slot] = in->len;
	m->pinned[slot] = 1;
}

/* fsync of an inode: every name it has now is durable with these contents. */
static void pin_ino(struct tmodel *m, int ino)
{
	for (int i = 0; i < TM_NAMES; i++)
		if (m->name[i] == ino)
			pin(m, i);
}

static void ino_resize(struct tm_inode *in, size_t len)
{
	if (len > in->cap) {
		size_t c = in->cap ? in->cap : 4096;
		while (c < len)
			c *= 2;
		in->data = realloc(in->data, c);
		in->cap = c;
	}
	if (len > in->len)
		memset(in->data + in->len, 0, len - in->len);
	in->len = len;
}

static void fill(struct util_prng *r, uint8_t *p, size_t n, int incompressible)
{
	int text = (int)util_prng_below(r, 2) && !incompressible; /* half compressible, half not */
	uint8_t base = (uint8_t)util_prng_next(r);
	for (size_t i = 0; i < n; i++)
		p[i] = text ? (uint8_t)('a' + (i / 7 + base) % 26) : (uint8_t)util_prng_next(r);
}

static size_t pick_len(struct tmodel *m)
{
	if (m->fill_next) { /* a big file: fills the device now and then */
		m->fill_next = 0;
		return m->maxlen / 2 + util_prng_below(&m->r, m->maxlen / 2);
	}
	unsigned k = (unsigned)util_prng_below(&m->r, 100);
	size_t max = k < 70 ? 3000 : k < 95 ? 30000 : m->maxlen; /* small, medium, big */
	return 1 + util_prng_below(&m->r, max);
}

static int slot_free_handle(struct tmodel *m)
{
	for (int i = 0; i < TM_OPEN; i++)
		if (!m->open[i].h)
			return i;
	return -1;
}

static int slot_used_handle(struct tmodel *m)
{
	int n = 0, pick[TM_OPEN];
	for (int i = 0; i < TM_OPEN; i++)
		if (m->open[i].h)
			pick[n++] = i;
	return n ? pick[util_prng_below(&m->r, (uint64_t)n)] : -1;
}

/* fsync; the planted bugs (test hooks): lost (nothing done, the model
 * counts it as done) or failing with -EIO for no reason */
static int do_fsync(struct tmodel *m, struct ubikit_file *h)
{
	if (m->fsync_eio)
		return -EIO;
	return m->lost_fsync ? 0 : ubikit_fsync(h);
}

static int close_handle(struct tmodel *m, int k)
{
	int err = ubikit_close(m->open[k].h);
	TR(m, "  close handle %d ino#%d -> %d\n", k, m->open[k].ino, err);
	int ino = m->open[k].ino;
	m->open[k].h = NULL;
	m->open[k].ino = -1;
	ino_gc(m, ino);
	return err;
}

void tm_drop_handles(struct tmodel *m)
{
	for (int k = 0; k < TM_OPEN; k++)
		if (m->open[k].h) {
			ubikit_close(m->open[k].h);
			m->open[k].h = NULL;
			m->open[k].ino = -1;
		}
}

/* pwrite through h into model inode ino; 0, or <0 fs error, 1 mismatch.
 * kept: h is one of the handles the model keeps open (m->open) */
static int do_write(struct tmodel *m, struct ubikit_file *h, int ino, const char *what, int kept)
{
	struct tm_inode *in = &m->ino[ino];
	size_t off = in->len && util_prng_below(&m->r, 2) ? util_prng_below(&m->r, in->len + 1) : 0;
	if (util_prng_below(&m->r, 10) == 0)
		off = in->len + util_prng_below(&m->r, 9000); /* a hole */
	int burst = m->fill_next && m->fill_up; /* a fill burst that must fill the device */
	size_t len = pick_len(m);
	if (off > m->maxlen)
		off = m->maxlen;
	if (off + len > m->maxlen)
		len = m->maxlen - off;
	if (!len)
		return 0;
	uint8_t *buf = malloc(len);
	fill(&m->r, buf, len, burst);
	unpin_ino(m, ino);
	/* the planted lost write (test hook): what goes through a kept handle
	 * is dropped, reported as written */
	ssize_t n = m->lost_handle_writes && kept ? (ssize_t)len : ubikit_pwrite(h, buf, len, off);
	TR(m, "  %s ino#%d: pwrite %zu at %zu -> %zd\n", what, ino, len, off, n);
	int ret = 0;
	if (n < 0) {
		ret = (int)n;
	} else if ((size_t)n > len) {
		ret = fail(m, "%s: pwrite of %zu bytes returned %zd", what, len, n);
	} else if (n > 0) {
		if (off + (size_t)n > in->len)
			ino_resize(in, off + (size_t)n);
		memcpy(in->data + off, buf, (size_t)n);
		if ((size_t)n < len)
			ret = -ENOSPC; /* a short write: the budget ran out part way */
	} else {
		ret = -ENOSPC;
	}
	free(buf);
	return ret;
}

/* Read a name or handle back and compare with the model inode. */
static int verify_ino(struct tmodel *m, struct ubikit_fs *fs, const char *path, struct ubikit_file *h, int ino)
{
	struct tm_inode *in = &m->ino[ino];
	uint8_t *buf = malloc(in->len + 4097);
	ssize_t n;
	if (h) {
		n = ubikit_pread(h, buf, in->len + 4096, 0);
	} else {
		struct ubikit_file *f;
		int err = ubikit_open(fs, path, O_RDONLY, 0, &f);
		if (err) {
			free(buf);
			return err == -ENOENT ? fail(m, "%s: missing (the model has %zu bytes)", path, in->len) : err;
		}
		n = ubikit_pread(f, buf, in->len + 4096, 0);
		int e2 = ubikit_close(f);
		if (n >= 0 && e2)
			n = e2;
	}
	int ret = 0;
	if (n < 0)
		ret = (int)n;
	else if ((size_t)n != in->len)
		ret = fail(m, "%s: %zd bytes read, the model has %zu", path, n, in->len);
	else if (in->len && memcmp(buf, in->data, in->len)) {
		size_t i = 0;
		while (buf[i] == in->data[i])
			i++;
		ret = fail(m, "%s: contents differ from the model at byte %zu of %zu", path, i, in->len);
	}
	free(buf);
	return ret;
}

/* The expected-vs-got rule: an error the model did not expect is a
 * mismatch, except the fault-caused ones the caller looks at (any error
 * once the flash is cut; -ENOSPC; -EROFS). */
static int expect(struct tmodel *m, int got, int want, const char *what)
{
	if (got == want)
		return 0;
	if (got < 0)
		return got; /* the caller decides: a fault, ENOSPC, or a finding */
	return fail(m, "%s: returned %d, the model expected %d", what, got, want);
}

static int op_write_path(struct tmodel *m, struct ubikit_fs *fs, int i, const char *p)
{
	struct ubikit_file *h;
	m->maybe[i] = 1;
	unpin(m, i);
	int existed = m->name[i] >= 0;
	int err = ubikit_open(fs, p, O_WRONLY | O_CREAT, 0644, &h);
	TR(m, "  open %s O_CREAT (existed %d) -> %d\n", p, existed, err);
	if (err)
		return err;
	if (!existed) {
		int ino = ino_new(m);
		if (ino < 0) {
			ubikit_close(h);
			return fail(m, "model: out of inodes");
		}
		m->name[i] = ino;
	}
	int ino = m->name[i];
	err = do_write(m, h, ino, p, 0);
	if (!err && util_prng_below(&m->r, 3) == 0) {
		err = do_fsync(m, h);
		TR(m, "  fsync (open file) %s -> %d\n", p, err);
		if (!err) {
			pin_ino(m, ino);
			m->fsyncs++;
		}
	}
	int e2 = ubikit_close(h);
	return err ? err : e2;
}

static int op_open(struct tmodel *m, struct ubikit_fs *fs, int i, const char *p)
{
	int k = slot_free_handle(m);
	if (k < 0)
		return close_handle(m, slot_used_handle(m));
	if (m->name[i] < 0)
		return expect(m, ubikit_open(fs, p, O_RDWR, 0, &m->open[k].h), -ENOENT, p);
	int err = ubikit_open(fs, p, O_RDWR, 0, &m->open[k].h);
	if (err) {
		m->open[k].h = NULL;
		return err;
	}
	m->open[k].ino = m->name[i];
	TR(m, "  open %s ino#%d as handle %d\n", p, m->name[i], k);
	return 0;
}

static int op_handle(struct tmodel *m, struct ubikit_fs *fs)
{
	int k = slot_used_handle(m);
	if (k < 0)
		return 0;
	unsigned c = (unsigned)util_prng_below(&m->r, 10);
	if (c < 6)
		return do_write(m, m->open[k].h, m->open[k].ino, "write through an open handle", 1);
	if (c < 8) {
		int err = do_fsync(m, m->open[k].h);
		TR(m, "  fsync handle %d ino#%d -> %d\n", k, m->open[k].ino, err);
		if (!err) {
			pin_ino(m, m->open[k].ino);
			m->fsyncs++;
		}
		return err;
	}
	if (c < 9)
		return verify_ino(m, fs, "read through an open handle", m->open[k].h, m->open[k].ino);
	return close_handle(m, k);
}

static int op_truncate(struct tmodel *m, struct ubikit_fs *fs, int i, const char *p)
{
	size_t len = util_prng_below(&m->r, m->name[i] >= 0 ? m->ino[m->name[i]].len + 5000 : 100);
	if (len > m->maxlen)
		len = m->maxlen;
	if (m->name[i] < 0)
		return expect(m, ubikit_truncate(fs, p, len), -ENOENT, p);
	unpin_ino(m, m->name[i]);
	int err = ubikit_truncate(fs, p, len);
	TR(m, "  truncate %s ino#%d (%zu) to %zu -> %d\n", p, m->name[i], m->ino[m->name[i]].len, len, err);
	if (!err)
		ino_resize(&m->ino[m->name[i]], len);
	return err;
}

static int op_rename(struct tmodel *m, struct ubikit_fs *fs, int i, int j, const char *p, const char *q)
{
	if (m->name[i] < 0)
		return expect(m, ubikit_rename(fs, p, q, 0), -ENOENT, p);
	unsigned flags = 0;
	if (m->name[j] >= 0 && util_prng_below(&m->r, 4) == 0)
		flags = UBIKIT_RENAME_EXCHANGE;
	unpin(m, i);
	unpin(m, j);
	m->maybe[i] = m->maybe[j] = 1;
	int err = ubikit_rename(fs, p, q, flags);
	TR(m, "  rename %s -> %s flags %u -> %d\n", p, q, flags, err);
	if (err)
		return err;
	if (i == j || m->name[i] == m->name[j])
		return 0; /* same inode: rename(2) does nothing */
	int old = m->name[j];
	m->name[j] = m->name[i];
	m->name[i] = flags == UBIKIT_RENAME_EXCHANGE ? old : -1;
	if (flags != UBIKIT_RENAME_EXCHANGE)
		ino_gc(m, old);
	return 0;
}

static int op_link(struct tmodel *m, struct ubikit_fs *fs, int i, int j, const char *p, const char *q)
{
	if (m->name[i] < 0)
		return expect(m, ubikit_link(fs, p, q), -ENOENT, p);
	if (m->name[j] >= 0)
		return expect(m, ubikit_link(fs, p, q), -EEXIST, q);
	m->maybe[j] = 1;
	int err = ubikit_link(fs, p, q);
	TR(m, "  link %s -> %s -> %d\n", p, q, err);
	if (!err)
		m->name[j] = m->name[i];
	return err;
}

static int op_unlink(struct tmodel *m, struct ubikit_fs *fs, int i, const char *p)
{
	if (m->name[i] < 0)
		return expect(m, ubikit_unlink(fs, p), -ENOENT, p);
	unpin(m, i);
	m->maybe[i] = 1;
	int err = ubikit_unlink(fs, p);
	TR(m, "  unlink %s ino#%d -> %d\n", p, m->name[i], err);
	if (!err) {
		int ino = m->name[i];
		m->name[i] = -1;
		ino_gc(m, ino);
	}
	return err;
}

static int op_xattr(struct tmodel *m, struct ubikit_fs *fs, int i, const char *p)
{
	int x = (int)util_prng_below(&m->r, TM_XATTRS);
	char nm[16];
	sprintf(nm, "user.x%d", x);
	if (m->name[i] < 0)
		return expect(m, ubikit_setxattr(fs, p, nm, "v", 1, 0), -ENOENT, p);
	struct tm_inode *in = &m->ino[m->name[i]];
	if (util_prng_below(&m->r, 4) == 0) {
		int err = ubikit_removexattr(fs, p, nm);
		if (!in->xset[x])
			return expect(m, err, -ENODATA, nm);
		if (!err)
			in->xset[x] = 0;
		return err;
	}
	if (util_prng_below(&m->r, 5) == 0) { /* read one back */
		uint8_t v[TM_XVAL + 1];
		ssize_t n = ubikit_getxattr(fs, p, nm, v, sizeof(v));
		if (!in->xset[x])
			return expect(m, (int)n, -ENODATA, nm);
		if (n < 0)
			return (int)n;
		if ((size_t)n != in->xlen[x] || memcmp(v, in->xval[x], in->xlen[x]))
			return fail(m, "%s %s: %zd bytes, the model has %zu (or they differ)", p, nm, n, in->xlen[x]);
		return 0;
	}
	size_t vl = 1 + util_prng_below(&m->r, TM_XVAL - 1);
	uint8_t v[TM_XVAL];
	fill(&m->r, v, vl, 0);
	int err = ubikit_setxattr(fs, p, nm, v, vl, 0);
	if (!err) {
		in->xset[x] = 1;
		memcpy(in->xval[x], v, vl);
		in->xlen[x] = vl;
	}
	return err;
}

static int op_sync(struct tmodel *m, struct ubikit_fs *fs)
{
	int err = ubikit_sync(fs);
	TR(m, "  sync -> %d\n", err);
	if (err)
		return err;
	m->syncs++;
	for (int k = 0; k < TM_NAMES; k++) {
		m->maybe[k] = m->name[k] >= 0;
		if (m->name[k] >= 0)
			pin(m, k);
		else
			unpin(m, k);
	}
	return 0;
}

static int op_fsync_path(struct tmodel *m, struct ubikit_fs *fs, int i, const char *p)
{
	struct ubikit_file *h;
	if (m->name[i] < 0)
		return expect(m, ubikit_open(fs, p, O_RDONLY, 0, &h), -ENOENT, p);
	int err = ubikit_open(fs, p, O_RDONLY, 0, &h);
	if (err)
		return err;
	err = do_fsync(m, h);
	TR(m, "  fsync %s ino#%d -> %d\n", p, m->name[i], err);
	if (!err) {
		pin_ino(m, m->name[i]);
		m->fsyncs++;
	}
	int e2 = ubikit_close(h);
	return err ? err : e2;
}

/* ENOSPC: close the handles (orphans hold space) and delete about half
 * the names; deleting must work on a full file system. */
static int free_space(struct tmodel *m, struct ubikit_fs *fs)
{
	for (int k = 0; k < TM_OPEN; k++)
		if (m->open[k].h) {
			int err = close_handle(m, k);
			if (err)
				return err;
		}
	for (int i = 0; i < TM_NAMES; i++) {
		if (m->name[i] < 0 || util_prng_below(&m->r, 2))
			continue;
		char p[32];
		int err = op_unlink(m, fs, i, tm_path(i, p));
		if (err == -ENOSPC)
			return fail(m, "unlink of %s on a full file system: ENOSPC", p);
		if (err)
			return err;
	}
	return 0;
}

int tm_step(struct tmodel *m, struct ubikit_fs *fs)
{
	m->err[0] = 0;
	if (m->freeing) {
		m->freeing = 0;
		return free_space(m, fs);
	}
	int i = (int)util_prng_below(&m->r, TM_NAMES), j = (int)util_prng_below(&m->r, TM_NAMES);
	char p[32], q[32];
	tm_path(i, p);
	tm_path(j, q);
	unsigned k = (unsigned)util_prng_below(&m->r, 100);
	m->ops++;
	int err;
	if (util_prng_below(&m->r, 400) == 0) {
		/* fill the device: big files into the names in turn until
		 * ENOSPC (then the next step frees space) */
		err = 0;
		int writes = m->fill_up ? 4 * TM_NAMES : TM_NAMES;
		for (int n = 0; n < writes && !err; n++) {
			int s = (i + n) % TM_NAMES;
			m->fill_next = 1;
			err = op_write_path(m, fs, s, tm_path(s, p));
		}
	} else if (k < 25 || (m->name[i] < 0 && k < 60)) {
		m->fill_next = util_prng_below(&m->r, 25) == 0;
		err = op_write_path(m, fs, i, p);
	}
	else if (k < 35)
		err = op_handle(m, fs);
	else if (k < 40)
		err = op_open(m, fs, i, p);
	else if (k < 47)
		err = op_truncate(m, fs, i, p);
	else if (k < 55)
		err = op_rename(m, fs, i, j, p, q);
	else if (k < 60)
		err = op_link(m, fs, i, j, p, q);
	else if (k < 68)
		err = op_unlink(m, fs, i, p);
	else if (k < 78)
		err = op_xattr(m, fs, i, p);
	else if (k < 81)
		err = op_sync(m, fs);
	else if (k < 89)
		err = op_fsync_path(m, fs, i, p);
	else if (m->name[i] >= 0)
		err = verify_ino(m, fs, p, NULL, m->name[i]);
	else {
		struct ubikit_stat st;
		err = expect(m, ubikit_stat(fs, p, &st), -ENOENT, p);
	}
	if (err == -ENOSPC) {
		m->enospc++;
		m->freeing = 1;
	}
	return err;
}

static int known_xattr(const char *n)
{
	return !strncmp(n, "user.x", 6) && n[6] >= '0' && n[6] < '0' + TM_XATTRS && !n[7];
}

static int check_xattr_names(struct tmodel *m, struct ubikit_fs *fs, const char *p)
{
	char list[512];
	ssize_t n = ubikit_listxattr(fs, p, list, sizeof(list));
	if (n < 0)
		return fail(m, "%s: listxattr: %zd", p, n);
	for (ssize_t o = 0; o < n; o += (ssize_t)strlen(list + o) + 1)
		if (!known_xattr(list + o))
			return fail(m, "%s: xattr '%s' the workload never set", p, list + o);
	return 0;
}

/* Every entry of the three directories is a known name (or a directory of
 * the layout). */
static int check_names(struct tmodel *m, struct ubikit_fs *fs)
{
	for (int d = 0; d < 3; d++) {
		struct ubikit_dir *dh;
		int err = ubikit_opendir(fs, dirs[d], &dh);
		if (err)
			return fail(m, "directory %s: %d", dirs[d], err);
		struct ubikit_dirent e;
		while ((err = ubikit_readdir(dh, &e)) == 1) {
			int ok = (d == 0 && !strcmp(e.name, "d")) || (d == 1 && !strcmp(e.name, "e"));
			for (int i = 0; i < TM_NAMES && !ok; i++) {
				char p[32];
				tm_path(i, p);
				ok = dir_of(i) == d && !strcmp(strrchr(p, '/') + 1, e.name);
			}
			if (!ok) {
				ubikit_closedir(dh);
				return fail(m, "unknown name '%s' in %s", e.name, dirs[d]);
			}
		}
		ubikit_closedir(dh);
		if (err < 0)
			return fail(m, "readdir %s: %d", dirs[d], err);
	}
	return 0;
}

int tm_check_after_cut(struct tmodel *m, struct ubikit_fs *fs, uint64_t *checked)
{
	m->err[0] = 0;
	for (int i = 0; i < TM_NAMES; i++) {
		char p[32];
		tm_path(i, p);
		struct ubikit_stat st;
		int err = ubikit_lstat(fs, p, &st);
		if (err && err != -ENOENT)
			return fail(m, "%s: stat after recovery: %d", p, err);
		if (m->pinned[i]) {
			if (err)
				return fail(m, "%s was synced (%zu bytes) but is missing after the cut", p, m->plen[i]);
			struct ubikit_file *h;
			uint8_t *buf = malloc(m->plen[i] + 4097);
			ssize_t n = ubikit_open(fs, p, O_RDONLY, 0, &h);
			if (!n) {
				n = ubikit_pread(h, buf, m->plen[i] + 4096, 0);
				ubikit_close(h);
			}
			size_t at = 0;
			while (n == (ssize_t)m->plen[i] && at < m->plen[i] && buf[at] == m->pdata[i][at])
				at++;
			uint8_t got = at < m->plen[i] ? buf[at] : 0;
			free(buf);
			if (n < 0)
				return fail(m, "%s: read error %zd after the cut; synced were %zu bytes", p, n, m->plen[i]);
			if (n != (ssize_t)m->plen[i])
				return fail(m, "%s: %zd bytes after the cut; synced were %zu bytes", p, n, m->plen[i]);
			if (at < m->plen[i])
				return fail(m, "%s: byte %zu of %zu is 0x%02x after the cut; synced was 0x%02x", p, at,
					    m->plen[i], got, m->pdata[i][at]);
			(*checked)++;
		} else if (!err && !m->maybe[i]) {
			return fail(m, "%s exists after the cut but the workload never left it there", p);
		}
		if (!err && !S_ISREG(st.mode))
			return fail(m, "%s: mode 0%o after the cut, the workload makes regular files only", p, st.mode);
		if (!err && check_xattr_names(m, fs, p))
			return 1;
	}
	return check_names(m, fs);
}

int tm_check_exact(struct tmodel *m, struct ubikit_fs *fs)
{
	m->err[0] = 0;
	for (int i = 0; i < TM_NAMES; i++) {
		char p[32];
		tm_path(i, p);
		struct ubikit_stat st;
		int err = ubikit_lstat(fs, p, &st);
		if (m->name[i] < 0) {
			if (err != -ENOENT)
				return fail(m, "%s: stat %d, the model has no such name", p, err);
			continue;
		}
		if (err)
			return fail(m, "%s: stat %d, the model has %zu bytes", p, err, m->ino[m->name[i]].len);
		int r = verify_ino(m, fs, p, NULL, m->name[i]);
		if (r)
			return r < 0 ? fail(m, "%s: read %d", p, r) : r;
		unsigned links = 0;
		for (int k = 0; k < TM_NAMES; k++)
			links += m->name[k] == m->name[i];
		if (st.nlink != links)
			return fail(m, "%s: %u links, the model has %u", p, st.nlink, links);
		struct tm_inode *in = &m->ino[m->name[i]];
		for (int x = 0; x < TM_XATTRS; x++) {
			char nm[16];
			uint8_t v[TM_XVAL + 1];
			sprintf(nm, "user.x%d", x);
			ssize_t n = ubikit_getxattr(fs, p, nm, v, sizeof(v));
			if (!in->xset[x] ? n != -ENODATA
					 : n != (ssize_t)in->xlen[x] || memcmp(v, in->xval[x], in->xlen[x]))
				return fail(m, "%s: xattr %s differs from the model (%zd)", p, nm, n);
		}
		if (check_xattr_names(m, fs, p))
			return 1;
	}
	return check_names(m, fs);
}

int tm_adopt(struct tmodel *m, struct ubikit_fs *fs)
{
	m->err[0] = 0;
	tm_drop_handles(m);
	for (int i = 0; i < TM_INODES; i++)
		ino_free(&m->ino[i]);
	int err = tm_make_dirs(fs);
	if (err) {
		snprintf(m->err, sizeof(m->err), "re-making the directories after recovery: %d", err);
		return err;
	}
	uint64_t fsino[TM_NAMES];
	for (int i = 0; i < TM_NAMES; i++) {
		char p[32];
		tm_path(i, p);
		m->name[i] = -1;
		unpin(m, i);
		m->maybe[i] = 0;
		struct ubikit_stat st;
		if (ubikit_lstat(fs, p, &st))
			continue;
		fsino[i] = st.ino;
		for (int k = 0; k < i; k++)
			if (m->name[k] >= 0 && fsino[k] == st.ino)
				m->name[i] = m->name[k];
		m->maybe[i] = 1;
		if (m->name[i] >= 0)
			continue;
		int ino = ino_new(m);
		struct tm_inode *in = &m->ino[ino];
		m->name[i] = ino;
		ino_resize(in, st.size);
		struct ubikit_file *h;
		err = ubikit_open(fs, p, O_RDONLY, 0, &h);
		if (!err) {
			ssize_t n = ubikit_pread(h, in->data, st.size, 0);
			ubikit_close(h);
			if (n != (ssize_t)st.size)
				err = n < 0 ? (int)n : -EIO;
		}
		for (int x = 0; !err && x < TM_XATTRS; x++) {
			char nm[16];
			sprintf(nm, "user.x%d", x);
			ssize_t n = ubikit_getxattr(fs, p, nm, in->xval[x], TM_XVAL);
			if (n >= 0) {
				in->xset[x] = 1;
				in->xlen[x] = (size_t)n;
			} else if (n != -ENODATA) {
				err = (int)n;
			}
		}
		if (err) {
			snprintf(m->err, sizeof(m->err), "reading %s back after recovery: %d", p, err);
			return err;
		}
	}
	err = ubikit_sync(fs);
	if (err) {
		snprintf(m->err, sizeof(m->err), "commit after recovery: %d", err);
		return err;
	}
	for (int i = 0; i < TM_NAMES; i++)
		if (m->name[i] >= 0)
			pin(m, i);
	m->freeing = 0;
	return 0;
}

int tm_write_list(struct tmodel *m, struct ubikit_fs *fs, const char *dir)
{
	(void)fs;
	char p[1200];
	static const char *const sub[] = {"", "/d", "/d/e"};
	for (int d = 0; d < 3; d++) {
		snprintf(p, sizeof(p), "%s%s", dir, sub[d]);
		if (mkdir(p, 0755) && errno != EEXIST)
			return -errno;
	}
	for (int i = 0; i < TM_NAMES; i++) {
		if (!m->pinned[i])
			continue;
		char n[32];
		snprintf(p, sizeof(p), "%s%s", dir, tm_path(i, n));
		FILE *f = fopen(p, "wb");
		if (!f)
			return -errno;
		size_t w = m->plen[i] ? fwrite(m->pdata[i], 1, m->plen[i], f) : 0;
		if (fclose(f) || w != m->plen[i])
			return -EIO;
	}
	return 0;
}
