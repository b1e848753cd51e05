/* ubifs_write_model — see ubifs_write_model.h. The model keeps inodes
 * (type, mode, data, target, device, xattrs) and directory entries in
 * plain arrays; operations pick valid targets from the model (and some
 * invalid ones whose error is known). Expected accounting follows the
 * kernel's rules: a directory's size is 160 + ALIGN(56 + nlen + 1, 8) per
 * entry and its link count 2 + subdirectories; an inode's xattr_size is
 * ALIGN(56 + nlen + 1, 8) + ALIGN(160 + len + 1, 8) per xattr. */
#include "ubifs_write_model.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "test_md5.h"
#include "ubifs/ubifs.h"
#include "util/util_prng.h"

#define A8(x) (((x) + 7u) & ~7u)
#define DENT_SZ(n) A8(56u + (uint32_t)(n) + 1u)
#define XATTR_SZ(n) A8(160u + (uint32_t)(n) + 1u)

struct mx {
	char name[64];
	uint8_t *val;
	size_t len;
};

struct mino {
	uint64_t inum;
	uint32_t mode;
	uint32_t nlink; /* names pointing here (dirs: computed) */
	uint8_t *data;
	size_t size, cap;
	char target[128];
	uint32_t maj, min;
	struct mx *x;
	size_t nx;
	int live;
};

struct ment {
	uint64_t dir, inum;
	char name[64];
};

struct wm {
	struct util_prng r;
	struct mino *ino;
	size_t nino, cap_ino;
	struct ment *ent;
	size_t nent, cap_ent;
	uint64_t root; /* "/w" */
	unsigned ops, made;
	uint64_t bytes;
	uint64_t limit; /* wm_set_limit: bound on live file bytes (0: none) */
	size_t *slot;   /* inum -> index in ino + 1 (find_ino without a scan) */
	size_t nslot;
	unsigned limit_truncs;
};

#define WM_SLOT_MAX (1u << 22)

static struct mino *find_ino(const struct wm *m, uint64_t inum)
{
	if (inum < m->nslot) {
		size_t s = m->slot[inum];
		struct mino *i = s ? &m->ino[s - 1] : NULL;
		return i && i->live && i->inum == inum ? i : NULL;
	}
	if (inum < WM_SLOT_MAX)
		return NULL;
	for (size_t i = 0; i < m->nino; i++)
		if (m->ino[i].live && m->ino[i].inum == inum)
			return &m->ino[i];
	return NULL;
}

static struct mino *add_ino(struct wm *m, uint64_t inum, uint32_t mode)
{
	if (m->nino == m->cap_ino) {
		m->cap_ino = m->cap_ino ? m->cap_ino * 2 : 64;
		m->ino = realloc(m->ino, m->cap_ino * sizeof(*m->ino));
	}
	if (inum < WM_SLOT_MAX) {
		if (inum >= m->nslot) {
			size_t n = m->nslot ? m->nslot : 1024;
			while (n <= inum)
				n *= 2;
			m->slot = realloc(m->slot, n * sizeof(*m->slot));
			memset(m->slot + m->nslot, 0, (n - m->nslot) * sizeof(*m->slot));
			m->nslot = n;
		}
		m->slot[inum] = m->nino + 1;
	}
	struct mino *i = &m->ino[m->nino++];
	memset(i, 0, sizeof(*i));
	i->inum = inum;
	i->mode = mode;
	i->live = 1;
	return i;
}

static void drop_ino(struct mino *i)
{
	free(i->data);
	for (size_t k = 0; k < i->nx; k++)
		free(i->x[k].val);
	free(i->x);
	memset(i, 0, sizeof(*i));
}

static struct ment *find_ent(const struct wm *m, uint64_t dir, const char *name)
{
	for (size_t i = 0; i < m->nent; i++)
		if (m->ent[i].dir == dir && !strcmp(m->ent[i].name, name))
			return &m->ent[i];
	return NULL;
}

static void add_ent(struct wm *m, uint64_t dir, const char *name, uint64_t inum)
{
	if (m->nent == m->cap_ent) {
		m->cap_ent = m->cap_ent ? m->cap_ent * 2 : 64;
		m->ent = realloc(m->ent, m->cap_ent * sizeof(*m->ent));
	}
	struct ment *e = &m->ent[m->nent++];
	e->dir = dir;
	e->inum = inum;
	size_t nlen = strnlen(name, sizeof(e->name) - 1);
	memcpy(e->name, name, nlen);
	e->name[nlen] = 0;
}

static void del_ent(struct wm *m, struct ment *e)
{
	*e = m->ent[--m->nent];
}

static size_t count_ents(const struct wm *m, uint64_t dir, int dirs_only)
{
	size_t n = 0;
	for (size_t i = 0; i < m->nent; i++)
		if (m->ent[i].dir == dir) {
			if (!dirs_only)
				n++;
			else {
				struct mino *c = find_ino(m, m->ent[i].inum);
				if (c && S_ISDIR(c->mode))
					n++;
			}
		}
	return n;
}

static uint64_t dir_size(const struct wm *m, uint64_t dir)
{
	uint64_t s = 160;
	for (size_t i = 0; i < m->nent; i++)
		if (m->ent[i].dir == dir)
			s += DENT_SZ(strlen(m->ent[i].name));
	return s;
}

static uint32_t links(const struct wm *m, const struct mino *i)
{
	if (S_ISDIR(i->mode))
		return 2 + (uint32_t)count_ents(m, i->inum, 1);
	uint32_t n = 0;
	for (size_t k = 0; k < m->nent; k++)
		if (m->ent[k].inum == i->inum)
			n++;
	return n;
}

int wm_new(struct ubifs_fs *fs, uint64_t seed, struct wm **out)
{
	struct wm *m = calloc(1, sizeof(*m));
	util_prng_seed(&m->r, seed);
	char name[16];
	snprintf(name, sizeof(name), "w%llu", (unsigned long long)seed);
	int err = ubifs_mknod(fs, 1, name, strlen(name), S_IFDIR | 0755, 0, 0, 0, 0, &m->root);
	if (err) {
		free(m);
		return err;
	}
	add_ino(m, m->root, S_IFDIR | 0755);
	*out = m;
	return 0;
}

static void set_len(struct mino *i, size_t n);

static int adopt_dir(struct wm *m, struct ubifs_fs *fs, uint64_t dir, int depth, char *why, size_t whysz)
{
	struct ubifs_dirent de;
	uint64_t pos = 0;
	int r;
	struct ubifs_inode *ui = malloc(sizeof(*ui));
	while (depth < 64 && (r = ubifs_readdir(fs, dir, pos, &de)) == 1) {
		pos = de.pos;
		add_ent(m, dir, de.name, de.inum);
		if (find_ino(m, de.inum))
			continue; /* another link */
		if (ubifs_read_inode(fs, de.inum, ui)) {
			snprintf(why, whysz, "inode %llu of %s", (unsigned long long)de.inum, de.name);
			free(ui);
			return -1;
		}
		struct mino *i = add_ino(m, de.inum, ui->mode);
		i->size = S_ISREG(ui->mode) || S_ISLNK(ui->mode) || S_ISCHR(ui->mode) ? ui->size : 0;
		if (S_ISREG(ui->mode)) {
			size_t sz = (size_t)ui->size;
			i->size = 0;
			set_len(i, sz);
			if (sz && ubifs_read_data(fs, ui, i->data, sz, 0) != (ssize_t)sz) {
				snprintf(why, whysz, "data of %s", de.name);
				free(ui);
				return -1;
			}
		} else if (S_ISLNK(ui->mode)) {
			snprintf(i->target, sizeof(i->target), "%.*s", (int)ui->data_len, (const char *)ui->data);
		} else if (S_ISCHR(ui->mode)) {
			i->maj = ui->rdev_major;
			i->min = ui->rdev_minor;
		}
		char names[4096];
		ssize_t nl = ubifs_listxattr(fs, de.inum, names, sizeof(names));
		for (ssize_t o = 0; nl > 0 && o < nl; o += (ssize_t)strlen(names + o) + 1) {
			uint8_t val[4096];
			ssize_t vl = ubifs_getxattr(fs, de.inum, names + o, val, sizeof(val));
			if (vl < 0)
				continue;
			i->x = realloc(i->x, (i->nx + 1) * sizeof(*i->x));
			struct mx *x = &i->x[i->nx++];
			snprintf(x->name, sizeof(x->name), "%s", names + o);
			x->val = malloc((size_t)vl + 1);
			memcpy(x->val, val, (size_t)vl);
			x->len = (size_t)vl;
		}
		if (S_ISDIR(ui->mode) && adopt_dir(m, fs, de.inum, depth + 1, why, whysz)) {
			free(ui);
			return -1;
		}
	}
	free(ui);
	return 0;
}

int wm_adopt(struct ubifs_fs *fs, uint64_t seed, struct wm **out, char *why, size_t whysz)
{
	struct wm *m = calloc(1, sizeof(*m));
	util_prng_seed(&m->r, seed ^ 0x5eed);
	char name[16];
	snprintf(name, sizeof(name), "w%llu", (unsigned long long)seed);
	if (ubifs_lookup(fs, 1, name, strlen(name), &m->root, NULL)) {
		snprintf(why, whysz, "no /%s", name);
		free(m);
		return -1;
	}
	add_ino(m, m->root, S_IFDIR | 0755);
	struct ubifs_inode *ri = malloc(sizeof(*ri));
	if (!ubifs_read_inode(fs, m->root, ri))
		m->ino[0].mode = ri->mode;
	free(ri);
	if (adopt_dir(m, fs, m->root, 0, why, whysz)) {
		wm_free(m);
		return -1;
	}
	*out = m;
	return 0;
}

void wm_free(struct wm *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nino; i++)
		if (m->ino[i].live)
			drop_ino(&m->ino[i]);
	free(m->ino);
	free(m->slot);
	free(m->ent);
	free(m);
}

static uint64_t rnd(struct wm *m, uint64_t n)
{
	return n ? util_prng_below(&m->r, n) : 0;
}

static void rand_name(struct wm *m, char *out)
{
	static const char al[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.";
	size_t len = 1 + rnd(m, rnd(m, 4) ? 12 : 60);
	for (size_t i = 0; i < len; i++)
		out[i] = al[rnd(m, sizeof(al) - 1)];
	out[len] = 0;
	if (!strcmp(out, ".") || !strcmp(out, ".."))
		out[0] = 'x';
}

/* a random live directory (the root of the model included) */
static struct mino *rand_dir(struct wm *m)
{
	size_t cnt = 0;
	for (size_t i = 0; i < m->nino; i++)
		if (m->ino[i].live && S_ISDIR(m->ino[i].mode))
			cnt++;
	size_t k = rnd(m, cnt);
	for (size_t i = 0; i < m->nino; i++)
		if (m->ino[i].live && S_ISDIR(m->ino[i].mode) && k-- == 0)
			return &m->ino[i];
	return NULL;
}

static struct ment *rand_ent(struct wm *m, int want) /* want: 0 any, 1 non-dir, 2 dir, 3 regular */
{
	size_t cnt = 0;
	for (int pass = 0; pass < 2; pass++) {
		size_t k = pass ? rnd(m, cnt) : 0;
		for (size_t i = 0; i < m->nent; i++) {
			struct mino *x = find_ino(m, m->ent[i].inum);
			int ok = want == 0 || (want == 1 && !S_ISDIR(x->mode)) || (want == 2 && S_ISDIR(x->mode)) ||
				 (want == 3 && S_ISREG(x->mode));
			if (!ok)
				continue;
			if (!pass)
				cnt++;
			else if (k-- == 0)
				return &m->ent[i];
		}
		if (!cnt)
			return NULL;
	}
	return NULL;
}

/* is a (dir inode) an ancestor of or equal to b? */
static int is_ancestor(const struct wm *m, uint64_t a, uint64_t b)
{
	for (int depth = 0; depth < 1000; depth++) {
		if (a == b)
			return 1;
		if (b == m->root)
			return 0;
		uint64_t parent = 0;
		for (size_t i = 0; i < m->nent; i++)
			if (m->ent[i].inum == b) {
				parent = m->ent[i].dir;
				break;
			}
		if (!parent)
			return 0;
		b = parent;
	}
	return 0;
}

#define FAIL(...)                                                                                                      \
	do {                                                                                                           \
		snprintf(why, whysz, __VA_ARGS__);                                                                     \
		return -1;                                                                                             \
	} while (0)

static void set_len(struct mino *i, size_t n)
{
	if (n > i->cap) {
		size_t c = i->cap ? i->cap : 4096;
		while (c < n)
			c *= 2;
		i->data = realloc(i->data, c);
		i->cap = c;
	}
	if (n > i->size)
		memset(i->data + i->size, 0, n - i->size);
	i->size = n;
}

static void gone_if_unlinked(struct wm *m, struct mino *i)
{
	if (links(m, i) == 0)
		drop_ino(i);
}

void wm_set_limit(struct wm *m, uint64_t max_bytes)
{
	m->limit = max_bytes;
}

/* file bytes the model holds (each inode once, hard links or not) */
uint64_t wm_live_bytes(const struct wm *m)
{
	uint64_t n = 0;
	for (size_t k = 0; k < m->nino; k++)
		if (m->ino[k].live && S_ISREG(m->ino[k].mode))
			n += m->ino[k].size;
	return n;
}

static uint64_t live_bytes(const struct wm *m)
{
	return wm_live_bytes(m);
}

static int trace_on = -1;
#define TRACE(...)                                                                                                     \
	do {                                                                                                           \
		if (trace_on < 0)                                                                                      \
			trace_on = getenv("WM_TRACE") != NULL;                                                         \
		if (trace_on)                                                                                          \
			fprintf(stderr, __VA_ARGS__);                                                                  \
	} while (0)

int wm_run(struct wm *m, struct ubifs_fs *fs, unsigned n, int big, char *why, size_t whysz)
{
	uint8_t *buf = malloc(300 * 1024);
	for (unsigned op = 0; op < n; op++, m->ops++) {
		unsigned kind = (unsigned)rnd(m, 100);
		/* bounded: names (creations, links) give way to removals */
		if (m->limit && m->nent > 300 && (kind < 14 || (kind >= 58 && kind < 64)))
			kind = 48 + kind % 10;
		char name[64];
		int err;
		if (kind < 14) { /* create a file, dir, symlink, fifo, device, socket */
			struct mino *d = rand_dir(m);
			uint64_t dinum = d->inum; /* add_ino may move the array */
			rand_name(m, name);
			int exists = find_ent(m, d->inum, name) != NULL;
			unsigned t = (unsigned)rnd(m, 10);
			uint64_t inum = 0;
			uint32_t mode;
			if (t < 5)
				mode = S_IFREG | 0644;
			else if (t < 8)
				mode = S_IFDIR | 0755;
			else
				mode = t == 8 ? (S_IFIFO | 0600) : (rnd(m, 2) ? S_IFCHR | 0640 : S_IFSOCK | 0755);
			if (t == 9 && rnd(m, 3) == 0) {
				const char *tg = rnd(m, 2) ? "../some/target" : "/abs/path/to/nowhere";
				err = ubifs_symlink(fs, d->inum, name, strlen(name), tg, strlen(tg), 0, 0, &inum);
				mode = S_IFLNK | 0777;
				if (exists ? err != -EEXIST : err != 0)
					FAIL("op %u: symlink %s: %d (%s)", m->ops, name, err, ubifs_errmsg(fs));
				if (!exists) {
					struct mino *i = add_ino(m, inum, mode);
					snprintf(i->target, sizeof(i->target), "%s", tg);
					i->size = strlen(tg);
					add_ent(m, dinum, name, inum);
				}
				continue;
			}
			uint32_t maj = (uint32_t)rnd(m, 300), mi = (uint32_t)rnd(m, 2000);
			err = ubifs_mknod(fs, d->inum, name, strlen(name), mode, maj, mi, 0, 0, &inum);
			TRACE("op %u mknod %llu/%s 0%o -> %llu (%d)\n", m->ops, (unsigned long long)d->inum, name, mode,
			      (unsigned long long)inum, err);
			if (exists ? err != -EEXIST : err != 0)
				FAIL("op %u: mknod %s 0%o in dir %llu: %d (%s)", m->ops, name, mode,
				     (unsigned long long)d->inum, err, ubifs_errmsg(fs));
			if (!exists) {
				struct mino *i = add_ino(m, inum, mode);
				if (S_ISCHR(mode)) {
					i->maj = maj;
					i->min = mi;
					i->size = 4;
				}
				add_ent(m, dinum, name, inum);
				m->made++;
			}
		} else if (kind < 40) { /* write */
			struct ment *e = rand_ent(m, 3);
			if (!e)
				continue;
			struct mino *i = find_ino(m, e->inum);
			size_t maxlen = big && rnd(m, 10) == 0 ? 256 * 1024 : 12000;
			if (m->limit && maxlen > m->limit / 8)
				maxlen = (size_t)(m->limit / 8);
			size_t len = 1 + rnd(m, maxlen);
			uint64_t off = rnd(m, 3) == 0 ? i->size : rnd(m, i->size + 8192);
			if (m->limit && live_bytes(m) + (off + len > i->size ? off + len - i->size : 0) > m->limit) {
				/* keep the live data bounded: empty this file instead */
				err = ubifs_truncate(fs, i->inum, 0);
				if (err)
					FAIL("op %u: truncate %llu to 0 (limit): %d (%s)", m->ops, (unsigned long long)i->inum,
					     err, ubifs_errmsg(fs));
				set_len(i, 0);
				m->limit_truncs++;
				continue;
			}
			if (rnd(m, 2))
				util_prng_fill(&m->r, buf, len);
			else
				for (size_t k = 0; k < len; k++)
					buf[k] = (uint8_t)("ubifs journal text "[(k + off) % 19]);
			ssize_t w = ubifs_write_data(fs, i->inum, buf, len, off);
			if (w != (ssize_t)len)
				FAIL("op %u: write %zu at %llu: %zd (%s)", m->ops, len, (unsigned long long)off, w,
				     ubifs_errmsg(fs));
			if (off + len > i->size)
				set_len(i, off + len);
			memcpy(i->data + off, buf, len);
			m->bytes += len;
		} else if (kind < 48) { /* truncate */
			struct ment *e = rand_ent(m, 3);
			if (!e)
				continue;
			struct mino *i = find_ino(m, e->inum);
			uint64_t ns = rnd(m, 3) == 0 ? 0 : rnd(m, i->size + 10000);
			err = ubifs_truncate(fs, i->inum, ns);
			if (err)
				FAIL("op %u: truncate %llu to %llu: %d (%s)", m->ops, (unsigned long long)i->inum,
				     (unsigned long long)ns, err, ubifs_errmsg(fs));
			set_len(i, ns);
		} else if (kind < 58) { /* unlink / rmdir */
			int dir = rnd(m, 3) == 0;
			struct ment *e = rand_ent(m, dir ? 2 : 1);
			if (!e)
				continue;
			struct mino *i = find_ino(m, e->inum);
			int nonempty = dir && count_ents(m, i->inum, 0) > 0;
			TRACE("op %u %s %llu/%s (%llu)\n", m->ops, dir ? "rmdir" : "unlink", (unsigned long long)e->dir, e->name,
			      (unsigned long long)e->inum);
			err = dir ? ubifs_rmdir(fs, e->dir, e->name, strlen(e->name))
				  : ubifs_unlink(fs, e->dir, e->name, strlen(e->name));
			if (nonempty ? err != -ENOTEMPTY : err != 0)
				FAIL("op %u: %s %s: %d (%s)", m->ops, dir ? "rmdir" : "unlink", e->name, err,
				     ubifs_errmsg(fs));
			if (!nonempty) {
				del_ent(m, e);
				if (dir)
					drop_ino(i);
				else
					gone_if_unlinked(m, i);
			}
		} else if (kind < 64) { /* link */
			struct ment *e = rand_ent(m, 1);
			if (!e)
				continue;
			struct mino *d = rand_dir(m);
			rand_name(m, name);
			int exists = find_ent(m, d->inum, name) != NULL;
			uint64_t target = e->inum;
			err = ubifs_link(fs, target, d->inum, name, strlen(name));
			if (exists ? err != -EEXIST : err != 0)
				FAIL("op %u: link %s: %d (%s)", m->ops, name, err, ubifs_errmsg(fs));
			if (!exists)
				add_ent(m, d->inum, name, target);
		} else if (kind < 80) { /* rename */
			struct ment *e = rand_ent(m, 0);
			if (!e)
				continue;
			struct ment src = *e;
			struct mino *si = find_ino(m, src.inum);
			struct mino *d = rand_dir(m);
			struct ment *dst = NULL;
			if (rnd(m, 2)) { /* onto an existing name */
				struct ment *o = rand_ent(m, 0);
				if (o) {
					d = find_ino(m, o->dir);
					snprintf(name, sizeof(name), "%s", o->name);
					dst = o;
				} else
					rand_name(m, name);
			} else {
				rand_name(m, name);
				dst = find_ent(m, d->inum, name);
			}
			unsigned flags = 0;
			unsigned f = (unsigned)rnd(m, 8);
			if (f == 0)
				flags = UBIFS_RENAME_NOREPLACE;
			else if (f == 1)
				flags = UBIFS_RENAME_EXCHANGE;
			else if (f == 2)
				flags = UBIFS_RENAME_WHITEOUT;
			struct mino *di = dst ? find_ino(m, dst->inum) : NULL;
			int expect = 0;
			if ((flags & UBIFS_RENAME_NOREPLACE) && dst)
				expect = -EEXIST;
			else if (dst && dst->inum == src.inum)
				expect = 1; /* same inode: nothing happens */
			else if ((flags & UBIFS_RENAME_EXCHANGE) && !dst)
				expect = -ENOENT;
			else if (S_ISDIR(si->mode) && is_ancestor(m, si->inum, d->inum))
				expect = -EINVAL;
			else if ((flags & UBIFS_RENAME_EXCHANGE) && S_ISDIR(di->mode) &&
				 is_ancestor(m, di->inum, src.dir))
				expect = -EINVAL;
			else if (!(flags & UBIFS_RENAME_EXCHANGE) && dst && S_ISDIR(di->mode) && !S_ISDIR(si->mode))
				expect = -EISDIR;
			else if (!(flags & UBIFS_RENAME_EXCHANGE) && dst && !S_ISDIR(di->mode) && S_ISDIR(si->mode))
				expect = -ENOTDIR;
			else if (!(flags & UBIFS_RENAME_EXCHANGE) && dst && S_ISDIR(di->mode) && count_ents(m, di->inum, 0))
				expect = -ENOTEMPTY;
			TRACE("op %u rename %llu/%s (%llu) -> %llu/%s (%llu) flags %u expect %d\n", m->ops,
			      (unsigned long long)src.dir, src.name, (unsigned long long)src.inum, (unsigned long long)d->inum,
			      name, dst ? (unsigned long long)dst->inum : 0ull, flags, expect);
			err = ubifs_rename(fs, src.dir, src.name, strlen(src.name), d->inum, name, strlen(name), flags);
			if (err != (expect == 1 ? 0 : expect))
				FAIL("op %u: rename %s -> %s flags %u: %d, expected %d (%s)", m->ops, src.name, name, flags,
				     err, expect, ubifs_errmsg(fs));
			if (expect)
				continue;
			if (flags & UBIFS_RENAME_EXCHANGE) {
				uint64_t a = src.inum;
				find_ent(m, src.dir, src.name)->inum = dst->inum;
				dst->inum = a;
				continue;
			}
			if (dst) {
				uint64_t victim = dst->inum;
				del_ent(m, dst);
				struct mino *vi = find_ino(m, victim);
				if (vi && !S_ISDIR(vi->mode))
					gone_if_unlinked(m, vi);
				else if (vi)
					drop_ino(vi);
			}
			struct ment *se = find_ent(m, src.dir, src.name);
			se->dir = d->inum;
			snprintf(se->name, sizeof(se->name), "%s", name);
			if (flags & UBIFS_RENAME_WHITEOUT) {
				uint64_t wi = 0;
				if (ubifs_lookup(fs, src.dir, src.name, strlen(src.name), &wi, NULL))
					FAIL("op %u: whiteout %s missing", m->ops, src.name);
				add_ino(m, wi, S_IFCHR);
				find_ino(m, wi)->size = 0;
				add_ent(m, src.dir, src.name, wi);
			}
		} else if (kind < 92) { /* xattrs */
			struct ment *e = rand_ent(m, 0);
			if (!e)
				continue;
			struct mino *i = find_ino(m, e->inum);
			if (S_ISLNK(i->mode) || (i->mode & S_IFMT) == S_IFCHR || S_ISFIFO(i->mode) || S_ISSOCK(i->mode))
				continue; /* user.* only on files and directories */
			if (i->nx && rnd(m, 3) == 0) {
				size_t k = rnd(m, i->nx);
				err = ubifs_removexattr(fs, i->inum, i->x[k].name);
				if (err)
					FAIL("op %u: removexattr %s: %d (%s)", m->ops, i->x[k].name, err, ubifs_errmsg(fs));
				free(i->x[k].val);
				i->x[k] = i->x[--i->nx];
				continue;
			}
			char xn[64];
			snprintf(xn, sizeof(xn), "user.%c%u", 'a' + (int)rnd(m, 26), (unsigned)rnd(m, 5));
			size_t vl = 1 + rnd(m, rnd(m, 4) ? 40 : 2000);
			util_prng_fill(&m->r, buf, vl);
			size_t k = 0;
			while (k < i->nx && strcmp(i->x[k].name, xn))
				k++;
			err = ubifs_setxattr(fs, i->inum, xn, buf, vl, 0);
			if (err)
				FAIL("op %u: setxattr %s: %d (%s)", m->ops, xn, err, ubifs_errmsg(fs));
			if (k == i->nx) {
				i->x = realloc(i->x, (i->nx + 1) * sizeof(*i->x));
				snprintf(i->x[k].name, sizeof(i->x[k].name), "%s", xn);
				i->x[k].val = NULL;
				i->nx++;
			}
			free(i->x[k].val);
			i->x[k].val = malloc(vl);
			memcpy(i->x[k].val, buf, vl);
			i->x[k].len = vl;
		} else { /* chmod */
			struct ment *e = rand_ent(m, 0);
			if (!e)
				continue;
			struct mino *i = find_ino(m, e->inum);
			if (S_ISLNK(i->mode))
				continue;
			struct ubifs_setattr a = {.valid = UBIFS_SET_MODE, .mode = (uint32_t)rnd(m, 01000)};
			err = ubifs_setattr(fs, i->inum, &a);
			if (err)
				FAIL("op %u: chmod: %d (%s)", m->ops, err, ubifs_errmsg(fs));
			i->mode = (i->mode & S_IFMT) | a.mode;
		}
	}
	free(buf);
	return 0;
}

static const char *path_of(const struct wm *m, uint64_t inum, uint64_t dir, const char *name, char *out, size_t sz)
{
	(void)inum;
	char tmp[8192];
	snprintf(out, sz, "%s", name);
	while (dir != m->root) {
		const struct ment *pe = NULL;
		for (size_t i = 0; i < m->nent; i++)
			if (m->ent[i].inum == dir) {
				pe = &m->ent[i];
				break;
			}
		if (!pe)
			break;
		snprintf(tmp, sizeof(tmp), "%s/%.4000s", pe->name, out);
		snprintf(out, sz, "%.4000s", tmp);
		dir = pe->dir;
	}
	snprintf(tmp, sizeof(tmp), "./%.4000s", out);
	snprintf(out, sz, "%.4000s", tmp);
	return out;
}

int wm_check(const struct wm *m, struct ubifs_fs *fs, char *why, size_t whysz)
{
	struct ubifs_inode *ui = malloc(sizeof(*ui));
	uint8_t *buf = malloc(1 << 20);
	int ret = -1;
	/* every live inode: attributes, data, xattrs, accounting */
	for (size_t k = 0; k < m->nino; k++) {
		const struct mino *i = &m->ino[k];
		if (!i->live)
			continue;
		int err = ubifs_read_inode(fs, i->inum, ui);
		if (err) {
			snprintf(why, whysz, "inode %llu: read %d (%s)", (unsigned long long)i->inum, err, ubifs_errmsg(fs));
			goto out;
		}
		uint32_t nl = links(m, i);
		uint64_t size = S_ISDIR(i->mode) ? dir_size(m, i->inum) : i->size;
		if (ui->mode != i->mode || ui->nlink != nl || ui->size != size) {
			snprintf(why, whysz, "inode %llu: mode 0%o nlink %u size %llu, model 0%o %u %llu",
				 (unsigned long long)i->inum, ui->mode, ui->nlink, (unsigned long long)ui->size, i->mode, nl,
				 (unsigned long long)size);
			goto out;
		}
		if (S_ISREG(i->mode)) {
			for (size_t off = 0; off < i->size || off == 0; off += 1 << 20) {
				size_t want = i->size - off < (1u << 20) ? i->size - off : (1u << 20);
				ssize_t got = ubifs_read_data(fs, ui, buf, 1 << 20, off);
				if (got != (ssize_t)want || (want && memcmp(buf, i->data + off, want))) {
					snprintf(why, whysz, "inode %llu: data at %zu differs (read %zd of %zu)",
						 (unsigned long long)i->inum, off, got, want);
					goto out;
				}
				if (!i->size)
					break;
			}
		} else if (S_ISLNK(i->mode)) {
			if (ui->data_len != strlen(i->target) || memcmp(ui->data, i->target, ui->data_len)) {
				snprintf(why, whysz, "inode %llu: symlink target differs", (unsigned long long)i->inum);
				goto out;
			}
		} else if (S_ISCHR(i->mode)) {
			if (ui->rdev_major != i->maj || ui->rdev_minor != i->min) {
				snprintf(why, whysz, "inode %llu: device %u:%u, model %u:%u", (unsigned long long)i->inum,
					 ui->rdev_major, ui->rdev_minor, i->maj, i->min);
				goto out;
			}
		}
		uint32_t xs = 0, xn = 0;
		for (size_t x = 0; x < i->nx; x++) {
			xs += DENT_SZ(strlen(i->x[x].name)) + XATTR_SZ(i->x[x].len);
			xn += (uint32_t)strlen(i->x[x].name);
			ssize_t got = ubifs_getxattr(fs, i->inum, i->x[x].name, buf, 4096);
			if (got != (ssize_t)i->x[x].len || memcmp(buf, i->x[x].val, i->x[x].len)) {
				snprintf(why, whysz, "inode %llu: xattr %s differs (%zd)", (unsigned long long)i->inum,
					 i->x[x].name, got);
				goto out;
			}
		}
		if (ui->xattr_cnt != i->nx || ui->xattr_size != xs || ui->xattr_names != xn) {
			snprintf(why, whysz, "inode %llu: xattr cnt/size/names %u/%u/%u, model %zu/%u/%u",
				 (unsigned long long)i->inum, ui->xattr_cnt, ui->xattr_size, ui->xattr_names, i->nx, xs, xn);
			goto out;
		}
		ssize_t ll = ubifs_listxattr(fs, i->inum, NULL, 0);
		size_t want_ll = 0;
		for (size_t x = 0; x < i->nx; x++)
			want_ll += strlen(i->x[x].name) + 1;
		if (ll != (ssize_t)want_ll) {
			snprintf(why, whysz, "inode %llu: listxattr %zd, model %zu", (unsigned long long)i->inum, ll, want_ll);
			goto out;
		}
		if (S_ISDIR(i->mode)) {
			/* readdir: exactly the model's entries */
			struct ubifs_dirent de;
			uint64_t pos = 0;
			size_t cnt = 0;
			int r;
			while ((r = ubifs_readdir(fs, i->inum, pos, &de)) == 1) {
				pos = de.pos;
				const struct ment *e = find_ent(m, i->inum, de.name);
				if (!e || e->inum != de.inum) {
					snprintf(why, whysz, "dir %llu: unexpected entry %s -> %llu",
						 (unsigned long long)i->inum, de.name, (unsigned long long)de.inum);
					goto out;
				}
				cnt++;
			}
			if (r < 0 || cnt != count_ents(m, i->inum, 0)) {
				snprintf(why, whysz, "dir %llu: readdir %d, %zu entries, model %zu",
					 (unsigned long long)i->inum, r, cnt, count_ents(m, i->inum, 0));
				goto out;
			}
		}
	}
	ret = 0;
out:
	free(ui);
	free(buf);
	return ret;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void wm_manifest(const struct wm *m, FILE *out)
{
	char **lines = calloc(m->nent + 1, sizeof(*lines));
	char **xl = NULL;
	size_t nxl = 0;
	size_t n = 0;
	for (size_t k = 0; k < m->nent; k++) {
		const struct ment *e = &m->ent[k];
		const struct mino *i = find_ino(m, e->inum);
		char p[4096], line[8192];
		path_of(m, e->inum, e->dir, e->name, p, sizeof(p));
		uint32_t nl = links(m, i);
		if (S_ISDIR(i->mode))
			snprintf(line, sizeof(line), "%s d %x %u %llu", p, i->mode, nl, (unsigned long long)dir_size(m, i->inum));
		else if (S_ISREG(i->mode)) {
			struct util_md5 md;
			char hex[33];
			util_md5_init(&md);
			util_md5_update(&md, i->data ? i->data : (const uint8_t *)"", i->size);
			util_md5_hex(&md, hex);
			snprintf(line, sizeof(line), "%s f %x %u %zu %s", p, i->mode, nl, i->size, hex);
		} else if (S_ISLNK(i->mode))
			snprintf(line, sizeof(line), "%s l %x %u %zu -> %s", p, i->mode, nl, i->size, i->target);
		else if (S_ISCHR(i->mode))
			snprintf(line, sizeof(line), "%s c %x %u %x:%x", p, i->mode, nl, i->maj, i->min);
		else
			snprintf(line, sizeof(line), "%s o %x %u", p, i->mode, nl);
		lines[n++] = strdup(line);
		for (size_t x = 0; x < i->nx; x++) {
			size_t len = strlen(p) + strlen(i->x[x].name) + 2 * i->x[x].len + 16;
			char *s = malloc(len);
			int o = snprintf(s, len, "%s %s=0x", p, i->x[x].name);
			for (size_t b = 0; b < i->x[x].len; b++)
				o += snprintf(s + o, len - (size_t)o, "%02x", i->x[x].val[b]);
			xl = realloc(xl, (nxl + 1) * sizeof(*xl));
			xl[nxl++] = s;
		}
	}
	qsort(lines, n, sizeof(*lines), cmp_str);
	for (size_t k = 0; k < n; k++) {
		fprintf(out, "%s\n", lines[k]);
		free(lines[k]);
	}
	fprintf(out, "== xattrs\n");
	qsort(xl, nxl, sizeof(*xl), cmp_str);
	for (size_t k = 0; k < nxl; k++) {
		fprintf(out, "%s\n", xl[k]);
		free(xl[k]);
	}
	free(xl);
	free(lines);
}

void wm_stats(const struct wm *m, unsigned *ops, unsigned *files, uint64_t *bytes)
{
	*ops = m->ops;
	*files = m->made;
	*bytes = m->bytes;
}
