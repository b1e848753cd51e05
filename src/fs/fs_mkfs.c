/* fs_mkfs — a UBIFS from a host tree (see fs_mkfs.h). Three steps:
 * 1. scan: the tree into memory (names sorted, depth first; hard links by
 *    device and inode number), then the device table; inode numbers in
 *    that order from 65 (as mkfs.ubifs: UBIFS_FIRST_INO + 1), the root 1;
 * 2. compress: regular files cut into chunks of up to 1 MiB as the scan
 *    finds them (the workers start with the scan), compressed by
 *    worker threads into packed data nodes (zero blocks and holes left
 *    out, as mkfs.ubifs does), small files taken in batches; at most
 *    WINDOW_BLOCKS are ahead of the writer, so memory stays bounded;
 * 3. write: in tree order — per inode its data (chunks in order), its
 *    xattrs (an entry and an xattr inode each, names sorted), its
 *    directory entries, then the inode — through ubifs_build, which does
 *    the index, LPT, master and superblock. The output depends only on the
 *    tree and the options, never on thread timing. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "fs/fs_mkfs.h"
#include "ubi/ubi_vol_io.h"
#include "ubifs/ubifs_build.h"
#include "ubifs/ubifs_compr_ctx.h"
#include "ubifs/ubifs_media.h"
#include "util/util_endian.h"

#define CHUNK_BLOCKS 256 /* 1 MiB of file per compression job */
#define WINDOW_BLOCKS (64 * CHUNK_BLOCKS) /* blocks compressed ahead of the writer */
#define BATCH_JOBS 64    /* jobs a worker takes at once (small files) */
#define JOB_BLOCK 4096
#define JOB_BLOCKS_MAX 65536 /* 2^28 jobs of 1 MiB */
#define NODE_MAX (UBIFS_DATA_NODE_SZ + 2 * UBIFS_BLOCK_SIZE)

struct mk_ent {
	char *name;
	uint16_t nlen;
	uint32_t ino; /* index into mk.inos */
};

struct mk_ino {
	char *path; /* on the host; NULL when made by the device table */
	uint32_t mode, uid, gid, rdev_major, rdev_minor;
	int64_t atime, mtime, ctime;
	uint64_t size;
	uint64_t inum;
	uint32_t nlink; /* links found in the tree (files), 2 + subdirectories (dirs) */
	struct mk_ent *ents;
	uint32_t nents, ents_cap;
	char *target;     /* symlink */
	uint32_t job0, njobs; /* regular files: its chunks */
};

struct job {
	uint32_t ino;
	const char *path; /* the inode's (workers do not read mk.inos: the scan grows it) */
	uint64_t size;
	uint32_t inum;
	uint64_t first_block, nblocks;
	/* result */
	uint8_t *out;   /* packed data nodes, each 8-aligned (no sqnum/CRC yet) */
	size_t out_len, out_cap;
	uint64_t payload; /* compressed bytes */
	int err;        /* negative errno */
	int done;
};

struct mk {
	const struct fs_mkfs_opts *o;
	struct util_err *e;
	struct mk_ino *inos;
	size_t n, cap;
	struct { dev_t dev; ino_t ino; uint32_t idx; } *hl;
	size_t hl_n, hl_cap;
	uint64_t next_inum;
	/* compression: jobs in blocks of JOB_BLOCK, the table of blocks sized
	 * once, so that workers read jobs while the scan appends */
	struct job **jobs;
	size_t njobs;      /* published to the workers */
	int scan_done;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	size_t next_job;   /* next to be taken by a worker */
	size_t written;    /* jobs consumed by the writer */
	uint64_t ahead_blocks; /* blocks of jobs taken but not yet written */
	int stop;
	uint64_t total_bytes, done_bytes;
};

static int mk_oom(struct mk *m)
{
	return util_err_set(m->e, -ENOMEM, "mkfs: out of memory");
}

static struct job *job_at(const struct mk *m, size_t k)
{
	return &m->jobs[k / JOB_BLOCK][k % JOB_BLOCK];
}

/* a regular file's chunks become jobs, published to the workers at once */
static int add_jobs(struct mk *m, uint32_t idx)
{
	struct mk_ino *i = &m->inos[idx];
	uint64_t blocks = (i->size + UBIFS_BLOCK_SIZE - 1) / UBIFS_BLOCK_SIZE;
	if (blocks > UBIFS_S_KEY_BLOCK_MASK)
		return util_err_set(m->e, -EFBIG, "mkfs: '%s' is larger than UBIFS allows", i->path);
	size_t n = m->njobs; /* only this thread adds */
	i->job0 = (uint32_t)n;
	for (uint64_t b = 0; b < blocks; b += CHUNK_BLOCKS, n++) {
		if (n / JOB_BLOCK >= JOB_BLOCKS_MAX)
			return util_err_set(m->e, -EFBIG, "mkfs: the tree is larger than mkfs handles");
		if (!m->jobs[n / JOB_BLOCK] && !(m->jobs[n / JOB_BLOCK] = calloc(JOB_BLOCK, sizeof(struct job))))
			return mk_oom(m);
		struct job *j = job_at(m, n);
		j->ino = idx;
		j->path = i->path;
		j->size = i->size;
		j->inum = (uint32_t)i->inum;
		j->first_block = b;
		j->nblocks = blocks - b < CHUNK_BLOCKS ? blocks - b : CHUNK_BLOCKS;
		i->njobs++;
	}
	pthread_mutex_lock(&m->lock);
	m->njobs = n;
	pthread_cond_broadcast(&m->cond);
	pthread_mutex_unlock(&m->lock);
	return 0;
}

static int64_t clamp_t(const struct mk *m, int64_t t)
{
	return m->o->clamp_time && t > m->o->clamp ? m->o->clamp : t;
}

static int new_ino(struct mk *m, const char *path, const struct stat *st, uint32_t *idx)
{
	if (m->n == m->cap) {
		size_t nc = m->cap ? m->cap * 2 : 256;
		struct mk_ino *ni = realloc(m->inos, nc * sizeof(*ni));
		if (!ni)
			return mk_oom(m);
		m->inos = ni;
		m->cap = nc;
	}
	struct mk_ino *i = &m->inos[m->n];
	memset(i, 0, sizeof(*i));
	if (path && !(i->path = strdup(path)))
		return mk_oom(m);
	i->mode = st->st_mode;
	i->uid = m->o->squash_uids ? 0 : st->st_uid;
	i->gid = m->o->squash_uids ? 0 : st->st_gid;
	i->rdev_major = major(st->st_rdev);
	i->rdev_minor = minor(st->st_rdev);
	i->atime = clamp_t(m, st->st_atime);
	i->mtime = clamp_t(m, st->st_mtime);
	i->ctime = clamp_t(m, st->st_ctime);
	i->size = S_ISREG(st->st_mode) ? (uint64_t)st->st_size : 0;
	i->inum = m->n == 0 ? UBIFS_ROOT_INO_NUM : ++m->next_inum;
	if (i->inum > UBIFS_INUM_WATERMARK)
		return util_err_set(m->e, -ENOSPC, "mkfs: too many inodes");
	*idx = (uint32_t)m->n++;
	return S_ISREG(i->mode) && i->path ? add_jobs(m, *idx) : 0;
}

static int add_ent(struct mk *m, uint32_t dir, const char *name, uint32_t ino)
{
	struct mk_ino *d = &m->inos[dir];
	size_t nlen = strlen(name);
	if (nlen == 0 || nlen > UBIFS_MAX_NLEN)
		return util_err_set(m->e, -ENAMETOOLONG, "mkfs: name '%s' in '%s' is longer than %u bytes", name,
				    d->path ? d->path : "/", UBIFS_MAX_NLEN);
	if (d->nents == d->ents_cap) {
		uint32_t nc = d->ents_cap ? d->ents_cap * 2 : 8;
		struct mk_ent *ne = realloc(d->ents, nc * sizeof(*ne));
		if (!ne)
			return mk_oom(m);
		d->ents = ne;
		d->ents_cap = nc;
	}
	struct mk_ent *en = &d->ents[d->nents];
	if (!(en->name = strdup(name)))
		return mk_oom(m);
	en->nlen = (uint16_t)nlen;
	en->ino = ino;
	d->nents++;
	m->inos[ino].nlink++;
	return 0;
}

static int find_hl(struct mk *m, dev_t dev, ino_t ino, uint32_t *idx)
{
	for (size_t i = 0; i < m->hl_n; i++) /* hard links are few */
		if (m->hl[i].dev == dev && m->hl[i].ino == ino) {
			*idx = m->hl[i].idx;
			return 1;
		}
	return 0;
}

static int add_hl(struct mk *m, dev_t dev, ino_t ino, uint32_t idx)
{
	if (m->hl_n == m->hl_cap) {
		size_t nc = m->hl_cap ? m->hl_cap * 2 : 64;
		void *p = realloc(m->hl, nc * sizeof(*m->hl));
		if (!p)
			return mk_oom(m);
		m->hl = p;
		m->hl_cap = nc;
	}
	m->hl[m->hl_n].dev = dev;
	m->hl[m->hl_n].ino = ino;
	m->hl[m->hl_n].idx = idx;
	m->hl_n++;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int scan_dir(struct mk *m, uint32_t dir, const char *path)
{
	DIR *d = opendir(path);
	if (!d)
		return util_err_set(m->e, -errno, "mkfs: cannot read directory '%s': %s", path, strerror(errno));
	char **names = NULL;
	size_t n = 0, cap = 0;
	int err = 0;
	struct dirent *de;
	errno = 0;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 32;
			char **nn = realloc(names, cap * sizeof(*nn));
			if (!nn) {
				err = mk_oom(m);
				break;
			}
			names = nn;
		}
		if (!(names[n] = strdup(de->d_name))) {
			err = mk_oom(m);
			break;
		}
		n++;
	}
	if (!err && errno)
		err = util_err_set(m->e, -errno, "mkfs: cannot read directory '%s': %s", path, strerror(errno));
	closedir(d);
	if (!err && n)
		qsort(names, n, sizeof(*names), cmp_str);
	for (size_t k = 0; k < n && !err; k++) {
		char *cp;
		if (asprintf(&cp, "%s/%s", path, names[k]) < 0) {
			err = mk_oom(m);
			break;
		}
		struct stat st;
		uint32_t idx;
		if (lstat(cp, &st)) {
			err = util_err_set(m->e, -errno, "mkfs: cannot stat '%s': %s", cp, strerror(errno));
		} else if (!S_ISDIR(st.st_mode) && st.st_nlink > 1 && find_hl(m, st.st_dev, st.st_ino, &idx)) {
			err = add_ent(m, dir, names[k], idx);
		} else {
			err = new_ino(m, cp, &st, &idx);
			if (!err && !S_ISDIR(st.st_mode) && st.st_nlink > 1)
				err = add_hl(m, st.st_dev, st.st_ino, idx);
			if (!err && S_ISLNK(st.st_mode)) {
				char buf[UBIFS_MAX_INO_DATA + 1];
				ssize_t l = readlink(cp, buf, sizeof(buf));
				if (l < 0)
					err = util_err_set(m->e, -errno, "mkfs: cannot read symlink '%s': %s", cp,
							   strerror(errno));
				else if (l > UBIFS_MAX_INO_DATA)
					err = util_err_set(m->e, -ENAMETOOLONG, "mkfs: symlink '%s' target longer than %u bytes",
							   cp, UBIFS_MAX_INO_DATA);
				else if (!(m->inos[idx].target = strndup(buf, (size_t)l)))
					err = mk_oom(m);
				else
					m->inos[idx].size = (uint64_t)l;
			}
			if (!err)
				err = add_ent(m, dir, names[k], idx);
			if (!err && S_ISDIR(st.st_mode))
				err = scan_dir(m, idx, cp);
		}
		free(cp);
	}
	for (size_t k = 0; k < n; k++)
		free(names[k]);
	free(names);
	return err;
}

/* ---- device table (mkfs.ubifs -D; the genext2fs format) ---- */

static int lookup_path(struct mk *m, const char *path, uint32_t *dir, uint32_t *idx, const char **last)
{
	/* path is absolute; walk all but the last component */
	uint32_t cur = 0;
	const char *p = path + 1;
	if (!*p) { /* "/": the root itself (mkfs.ubifs sets its attributes) */
		*dir = *idx = 0;
		*last = path;
		return 1;
	}
	for (;;) {
		const char *s = strchr(p, '/');
		if (!s) {
			*dir = cur;
			*last = p;
			struct mk_ino *d = &m->inos[cur];
			for (uint32_t k = 0; k < d->nents; k++)
				if (!strcmp(d->ents[k].name, p)) {
					*idx = d->ents[k].ino;
					return 1;
				}
			return 0;
		}
		size_t l = (size_t)(s - p);
		struct mk_ino *d = &m->inos[cur];
		uint32_t k;
		for (k = 0; k < d->nents; k++)
			if (strlen(d->ents[k].name) == l && !memcmp(d->ents[k].name, p, l))
				break;
		if (k == d->nents || !S_ISDIR(m->inos[d->ents[k].ino].mode))
			return -1;
		cur = d->ents[k].ino;
		p = s + 1;
	}
}

static int devtable_entry(struct mk *m, const char *file, unsigned line, const char *name, char type, unsigned mode,
			  unsigned uid, unsigned gid, unsigned maj, unsigned min)
{
	uint32_t fmt;
	switch (type) {
	case 'd': fmt = S_IFDIR; break;
	case 'f': fmt = S_IFREG; break;
	case 'p': fmt = S_IFIFO; break;
	case 'c': fmt = S_IFCHR; break;
	case 'b': fmt = S_IFBLK; break;
	case 'l': fmt = S_IFLNK; break;
	default:
		return util_err_set(m->e, -EINVAL, "mkfs: device table %s line %u: unsupported file type '%c' (d f p c b l)",
				    file, line, type);
	}
	/* as mkfs.ubifs: a symlink's permissions are always 0777 */
	if (fmt == S_IFLNK && (mode & 0777) != 0777)
		return util_err_set(m->e, -EINVAL, "mkfs: device table %s line %u: link '%s' must have mode 777, not %o", file,
				    line, name, mode & 07777);
	uint32_t dir, idx;
	const char *last;
	int r = lookup_path(m, name, &dir, &idx, &last);
	if (r < 0)
		return util_err_set(m->e, -ENOENT, "mkfs: device table %s line %u: a directory of '%s' is not in the tree",
				    file, line, name);
	if (r == 1) {
		struct mk_ino *i = &m->inos[idx];
		if ((i->mode & S_IFMT) != fmt)
			return util_err_set(m->e, -EINVAL, "mkfs: device table %s line %u: '%s' exists with another type",
					    file, line, name);
		/* as mkfs.ubifs: devices and fifos of the tree are the tree's */
		if (i->path && (fmt == S_IFCHR || fmt == S_IFBLK || fmt == S_IFIFO))
			return util_err_set(m->e, -EEXIST,
					    "mkfs: device table %s line %u: '%s' is a device or fifo of the tree already (only "
					    "directories, files and links of the tree take the table's attributes)",
					    file, line, name);
		i->mode = fmt | (mode & 07777);
		i->uid = uid;
		i->gid = gid;
		if (fmt == S_IFCHR || fmt == S_IFBLK)
			i->rdev_major = maj, i->rdev_minor = min;
		return 0;
	}
	if (fmt == S_IFREG || fmt == S_IFLNK)
		return util_err_set(m->e, -ENOENT, "mkfs: device table %s line %u: '%s' is not in the tree (only directories, devices and fifos are created)",
				    file, line, name);
	struct stat st;
	memset(&st, 0, sizeof(st));
	st.st_mode = fmt | (mode & 07777);
	st.st_uid = uid;
	st.st_gid = gid;
	st.st_rdev = makedev(maj, min);
	int64_t now = m->o->clamp_time ? m->o->clamp : (int64_t)time(NULL);
	st.st_atime = st.st_mtime = st.st_ctime = now;
	int err = new_ino(m, NULL, &st, &idx);
	if (!err)
		err = add_ent(m, dir, last, idx);
	return err;
}

/* The names a device table gave so far: mkfs.ubifs refuses one named twice. */
struct devtab_names {
	char **v;
	size_t n, cap;
};

static int devtab_once(struct mk *m, struct devtab_names *s, const char *file, unsigned line, const char *name)
{
	for (size_t k = 0; k < s->n; k++)
		if (!strcmp(s->v[k], name))
			return util_err_set(m->e, -EINVAL, "mkfs: device table %s line %u: '%s' is named twice", file, line,
					    name);
	if (s->n == s->cap) {
		size_t nc = s->cap ? s->cap * 2 : 32;
		char **nv = realloc(s->v, nc * sizeof(*nv));
		if (!nv)
			return mk_oom(m);
		s->v = nv;
		s->cap = nc;
	}
	if (!(s->v[s->n] = strdup(name)))
		return mk_oom(m);
	s->n++;
	return 0;
}

static int apply_devtable(struct mk *m, const char *file)
{
	FILE *f = fopen(file, "r");
	if (!f)
		return util_err_set(m->e, -errno, "mkfs: cannot open device table '%s': %s", file, strerror(errno));
	char line[1200];
	unsigned ln = 0;
	int err = 0;
	struct devtab_names seen = {0};
	while (!err && fgets(line, sizeof(line), f)) {
		ln++;
		char *p = line;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '#' || *p == '\n' || *p == '\0')
			continue;
		char name[1024], type;
		unsigned mode = 0755, uid = 0, gid = 0, maj = 0, min = 0, start = 0, inc = 0, count = 0;
		int got = sscanf(p, "%1023s %c %o %u %u %u %u %u %u %u", name, &type, &mode, &uid, &gid, &maj, &min, &start,
				 &inc, &count);
		if (got < 5 || (got > 5 && got < 7)) {
			err = util_err_set(m->e, -EINVAL,
					   "mkfs: device table %s line %u does not parse: expected NAME TYPE MODE UID GID [MAJOR MINOR [START INC COUNT]]",
					   file, ln);
			break;
		}
		size_t l = strlen(name);
		if (name[0] != '/' || strstr(name, "//") || (l > 1 && name[l - 1] == '/') || strstr(name, "/./") ||
		    strstr(name, "/../") || (l >= 2 && !strcmp(name + l - 2, "/.")) || (l >= 3 && !strcmp(name + l - 3, "/.."))) {
			err = util_err_set(m->e, -EINVAL,
					   "mkfs: device table %s line %u: path '%s' must be absolute, without '//', '.', '..' or a trailing '/'",
					   file, ln, name);
			break;
		}
		if (inc && !count) {
			err = util_err_set(m->e, -EINVAL, "mkfs: device table %s line %u: count cannot be 0 with an increment", file,
					   ln);
			break;
		}
		if (!count) {
			err = devtab_once(m, &seen, file, ln, name);
			if (!err)
				err = devtable_entry(m, file, ln, name, type, mode, uid, gid, maj, min);
			continue;
		}
		for (unsigned i = start; i < start + count && !err; i++) {
			char nm[1100];
			snprintf(nm, sizeof(nm), "%s%u", name, i);
			err = devtab_once(m, &seen, file, ln, nm);
			if (!err)
				err = devtable_entry(m, file, ln, nm, type, mode, uid, gid, maj, min + (i - start) * inc);
		}
	}
	fclose(f);
	for (size_t k = 0; k < seen.n; k++)
		free(seen.v[k]);
	free(seen.v);
	return err;
}

/* ---- compression workers ---- */

static int all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

/* A data node is never longer than its block stored uncompressed, so a
 * job's output fits in nblocks such nodes: allocated once, never grown */
static int job_alloc(struct job *j)
{
	j->out_cap = (size_t)j->nblocks * ubifs_align8(UBIFS_DATA_NODE_SZ + UBIFS_BLOCK_SIZE);
	j->out = malloc(j->out_cap ? j->out_cap : 1);
	return j->out ? 0 : -ENOMEM;
}

/* A job's blocks, read a data segment at a time: two lseeks find the next
 * run of data (holes are skipped in whole blocks), one pread brings the run
 * in; per block would be four system calls, a third of the time on a tree
 * of small files. */
static int run_job(struct mk *m, struct job *j, struct ubifs_compr_ctx *cc, uint8_t *buf, uint8_t *cbuf)
{
	(void)m;
	int fd = open(j->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int err = job_alloc(j);
	uint64_t end = (j->first_block + j->nblocks) * UBIFS_BLOCK_SIZE;
	if (end > j->size)
		end = j->size;
	uint64_t off = j->first_block * UBIFS_BLOCK_SIZE;
	while (!err && off < end) {
		off_t data = lseek(fd, (off_t)off, SEEK_DATA);
		if (data < 0 && errno == ENXIO)
			break; /* only a hole up to the end */
		uint64_t seg = off;
		if (data > (off_t)off)
			seg = (uint64_t)data / UBIFS_BLOCK_SIZE * UBIFS_BLOCK_SIZE; /* (no SEEK_DATA: all data) */
		if (seg < off)
			seg = off;
		if (seg >= end)
			break;
		off_t hole = lseek(fd, (off_t)seg, SEEK_HOLE);
		uint64_t seg_end = end;
		if (hole > (off_t)seg) {
			uint64_t h = ((uint64_t)hole + UBIFS_BLOCK_SIZE - 1) / UBIFS_BLOCK_SIZE * UBIFS_BLOCK_SIZE;
			if (h < seg_end)
				seg_end = h;
		}
		size_t want = (size_t)(seg_end - seg), got = 0;
		while (got < want) {
			ssize_t r = pread(fd, buf + got, want - got, (off_t)(seg + got));
			if (r < 0) {
				err = -errno;
				break;
			}
			if (r == 0) {
				err = -ESTALE; /* the file shrank while read */
				break;
			}
			got += (size_t)r;
		}
		for (size_t p = 0; !err && p < want; p += UBIFS_BLOCK_SIZE) {
			size_t bl = want - p < UBIFS_BLOCK_SIZE ? want - p : UBIFS_BLOCK_SIZE;
			const uint8_t *blk = buf + p;
			if (all_zero(blk, bl))
				continue; /* zero blocks are holes on flash, as mkfs.ubifs leaves them */
			size_t cl = 2 * UBIFS_BLOCK_SIZE;
			unsigned type = ubifs_compr_ctx_run(cc, blk, bl, cbuf, &cl);
			uint32_t len = UBIFS_DATA_NODE_SZ + (uint32_t)cl;
			if (j->out_len + ubifs_align8(len) > j->out_cap) {
				err = -EIO; /* cannot happen: see job_alloc */
				break;
			}
			uint32_t block = (uint32_t)((seg + p) / UBIFS_BLOCK_SIZE);
			struct ubifs_key key = ubifs_key_make(j->inum, UBIFS_DATA_KEY, block);
			uint8_t *node = j->out + j->out_len;
			ubifs_data_pack(node, &key, (uint32_t)bl, (uint16_t)type, cbuf, (uint32_t)cl, 0);
			memset(node + len, 0, ubifs_align8(len) - len);
			j->out_len += ubifs_align8(len);
			j->payload += cl;
		}
		off = seg_end;
	}
	close(fd);
	return err;
}

struct worker {
	struct mk *m;
	pthread_t t;
	int started;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct mk *m = w->m;
	struct ubifs_compr_ctx *cc = ubifs_compr_ctx_new(m->o->bp.default_compr, m->o->favor_lzo,
							  m->o->favor_percent ? m->o->favor_percent : 20);
	uint8_t *blk = malloc((size_t)CHUNK_BLOCKS * UBIFS_BLOCK_SIZE), *cbuf = malloc(2 * UBIFS_BLOCK_SIZE);
	pthread_mutex_lock(&m->lock);
	for (;;) {
		while (!m->stop && (m->next_job < m->njobs ? m->ahead_blocks >= WINDOW_BLOCKS : !m->scan_done))
			pthread_cond_wait(&m->cond, &m->lock);
		if (m->stop || m->next_job >= m->njobs)
			break; /* stopped, or the scan is done and every job taken */
		/* a batch: consecutive jobs up to one chunk of blocks, so a tree of
		 * small files costs one hand-over per batch, not per file */
		size_t first = m->next_job;
		uint64_t blocks = 0;
		do
			blocks += job_at(m, m->next_job++)->nblocks;
		while (m->next_job < m->njobs && m->next_job - first < BATCH_JOBS &&
		       blocks + job_at(m, m->next_job)->nblocks <= CHUNK_BLOCKS);
		size_t last = m->next_job;
		m->ahead_blocks += blocks;
		pthread_mutex_unlock(&m->lock);
		for (size_t k = first; k < last; k++)
			job_at(m, k)->err = (!cc || !blk || !cbuf) ? -ENOMEM : run_job(m, job_at(m, k), cc, blk, cbuf);
		pthread_mutex_lock(&m->lock);
		for (size_t k = first; k < last; k++)
			job_at(m, k)->done = 1;
		pthread_cond_broadcast(&m->cond);
	}
	pthread_mutex_unlock(&m->lock);
	ubifs_compr_ctx_free(cc);
	free(blk);
	free(cbuf);
	return NULL;
}

/* ---- writing ---- */

struct wr {
	struct mk *m;
	struct ubifs_build *b;
	uint8_t *node;
	struct fs_mkfs_stats *st;
};

static int b_add_node(struct wr *w, uint8_t *node, uint32_t len, const struct ubifs_key *key)
{
	int err = ubifs_build_add(w->b, node, len, key);
	if (err)
		return util_err_set(w->m->e, err, "%s", ubifs_build_errmsg(w->b));
	return 0;
}

static int b_add(struct wr *w, uint32_t len, const struct ubifs_key *key)
{
	return b_add_node(w, w->node, len, key);
}

static int write_data(struct wr *w, uint32_t idx)
{
	struct mk *m = w->m;
	const struct mk_ino *i = &m->inos[idx];
	for (uint32_t k = 0; k < i->njobs; k++) {
		struct job *j = job_at(m, i->job0 + k);
		pthread_mutex_lock(&m->lock);
		while (!j->done)
			pthread_cond_wait(&m->cond, &m->lock);
		pthread_mutex_unlock(&m->lock);
		int err = j->err;
		if (err == -ESTALE)
			err = util_err_set(m->e, -EIO, "mkfs: '%s' changed size while it was read", i->path);
		else if (err)
			err = util_err_set(m->e, err, "mkfs: cannot read '%s': %s", i->path, strerror(-err));
		for (size_t off = 0; !err && off < j->out_len;) {
			uint8_t *n = j->out + off;
			uint32_t len = get_le32(n + 16);
			struct ubifs_key key = ubifs_key_read(n + 24);
			err = b_add_node(w, n, len, &key); /* the job's buffer is ours now */
			off += ubifs_align8(len);
		}
		w->st->data_bytes_out += j->payload;
		free(j->out);
		j->out = NULL;
		pthread_mutex_lock(&m->lock);
		m->written++;
		m->ahead_blocks -= j->nblocks;
		m->done_bytes += j->nblocks * UBIFS_BLOCK_SIZE;
		pthread_cond_broadcast(&m->cond);
		pthread_mutex_unlock(&m->lock);
		if (err)
			return err;
		if (m->o->progress)
			m->o->progress(m->o->progress_ctx, m->done_bytes < m->total_bytes ? m->done_bytes : m->total_bytes,
				       m->total_bytes);
	}
	return 0;
}

static void fill_ino(const struct mk *m, const struct mk_ino *i, struct ubifs_ino_node *ino, uint64_t inum,
		     uint64_t creat_sqnum)
{
	memset(ino, 0, sizeof(*ino));
	ino->key = ubifs_key_make((uint32_t)inum, UBIFS_INO_KEY, 0);
	ino->creat_sqnum = creat_sqnum;
	ino->atime_sec = i->atime;
	ino->mtime_sec = i->mtime;
	ino->ctime_sec = i->ctime;
	ino->uid = i->uid;
	ino->gid = i->gid;
	ino->mode = i->mode;
	ino->compr_type = (uint16_t)m->o->bp.default_compr;
	ino->flags = m->o->bp.default_compr != UBIFS_COMPR_NONE ? UBIFS_COMPR_FL : 0;
}

static int write_xattrs(struct wr *w, const struct mk_ino *i, struct ubifs_ino_node *host)
{
	struct mk *m = w->m;
	if (m->o->no_xattrs || !i->path)
		return 0;
	ssize_t ll = llistxattr(i->path, NULL, 0);
	if (ll < 0) {
		if (errno == ENOTSUP || errno == ENODATA)
			return 0;
		return util_err_set(m->e, -errno, "mkfs: cannot list xattrs of '%s': %s", i->path, strerror(errno));
	}
	if (ll == 0)
		return 0;
	char *list = malloc((size_t)ll + 1);
	if (!list)
		return mk_oom(m);
	ll = llistxattr(i->path, list, (size_t)ll);
	if (ll < 0) {
		free(list);
		return util_err_set(m->e, -errno, "mkfs: cannot list xattrs of '%s': %s", i->path, strerror(errno));
	}
	size_t cnt = 0;
	for (ssize_t p = 0; p < ll; p += (ssize_t)strlen(list + p) + 1)
		cnt++;
	char **names = malloc((cnt ? cnt : 1) * sizeof(*names));
	if (!names) {
		free(list);
		return mk_oom(m);
	}
	cnt = 0;
	for (ssize_t p = 0; p < ll; p += (ssize_t)strlen(list + p) + 1)
		names[cnt++] = list + p;
	qsort(names, cnt, sizeof(*names), cmp_str);
	int err = 0;
	uint8_t *val = malloc(UBIFS_MAX_INO_DATA);
	if (!val)
		err = mk_oom(m);
	for (size_t k = 0; k < cnt && !err; k++) {
		const char *nm = names[k];
		size_t nlen = strlen(nm);
		ssize_t vl = lgetxattr(i->path, nm, val, UBIFS_MAX_INO_DATA);
		if (vl < 0) {
			err = errno == ERANGE ? util_err_set(m->e, -E2BIG, "mkfs: xattr '%s' of '%s' is larger than UBIFS allows (%u bytes)",
							    nm, i->path, UBIFS_MAX_INO_DATA)
					      : util_err_set(m->e, -errno, "mkfs: cannot read xattr '%s' of '%s': %s", nm, i->path,
							    strerror(errno));
			break;
		}
		if (nlen > UBIFS_MAX_NLEN) {
			err = util_err_set(m->e, -ENAMETOOLONG, "mkfs: xattr name '%s' of '%s' is too long", nm, i->path);
			break;
		}
		uint64_t xinum = ++m->next_inum;
		struct ubifs_key xk =
			ubifs_key_make((uint32_t)host->key.inum, UBIFS_XENT_KEY, ubifs_name_hash(m->o->bp.key_hash, nm, nlen));
		ubifs_dent_pack(w->node, &xk, xinum, UBIFS_ITYPE_REG, nm, (uint16_t)nlen, 0, 0);
		err = b_add(w, UBIFS_DENT_NODE_SZ + (uint32_t)nlen + 1, &xk);
		if (err)
			break;
		struct ubifs_ino_node x;
		fill_ino(m, i, &x, xinum, ubifs_build_sqnum(w->b));
		x.mode = S_IFREG | 0777;
		x.nlink = 1;
		x.size = (uint64_t)vl;
		x.data_len = (uint32_t)vl;
		x.flags = UBIFS_XATTR_FL;
		ubifs_ino_pack(w->node, &x, val, (uint32_t)vl, 0);
		err = b_add(w, UBIFS_INO_NODE_SZ + (uint32_t)vl, &x.key);
		host->xattr_cnt++;
		host->xattr_size += ubifs_align8(UBIFS_DENT_NODE_SZ + (uint32_t)nlen + 1) +
				    ubifs_align8(UBIFS_INO_NODE_SZ + (uint32_t)vl + 1);
		host->xattr_names += (uint32_t)nlen;
	}
	free(val);
	free(names);
	free(list);
	return err;
}

static uint8_t itype_of(uint32_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG: return UBIFS_ITYPE_REG;
	case S_IFDIR: return UBIFS_ITYPE_DIR;
	case S_IFLNK: return UBIFS_ITYPE_LNK;
	case S_IFBLK: return UBIFS_ITYPE_BLK;
	case S_IFCHR: return UBIFS_ITYPE_CHR;
	case S_IFIFO: return UBIFS_ITYPE_FIFO;
	default: return UBIFS_ITYPE_SOCK;
	}
}

static int write_inode(struct wr *w, uint32_t idx)
{
	struct mk *m = w->m;
	struct mk_ino *i = &m->inos[idx];
	struct ubifs_ino_node ino;
	fill_ino(m, i, &ino, i->inum, ubifs_build_sqnum(w->b));
	int err = 0;
	if (S_ISREG(i->mode))
		err = write_data(w, idx);
	if (!err)
		err = write_xattrs(w, i, &ino);
	uint8_t data[UBIFS_MAX_INO_DATA];
	uint32_t dlen = 0;
	if (S_ISDIR(i->mode)) {
		uint64_t size = UBIFS_INO_NODE_SZ;
		uint32_t nlink = 2;
		for (uint32_t k = 0; k < i->nents && !err; k++) {
			const struct mk_ent *en = &i->ents[k];
			const struct mk_ino *c = &m->inos[en->ino];
			struct ubifs_key dk =
				ubifs_key_make((uint32_t)i->inum, UBIFS_DENT_KEY, ubifs_name_hash(m->o->bp.key_hash, en->name, en->nlen));
			ubifs_dent_pack(w->node, &dk, c->inum, itype_of(c->mode), en->name, en->nlen, 0, 0);
			err = b_add(w, UBIFS_DENT_NODE_SZ + en->nlen + 1u, &dk);
			size += ubifs_align8(UBIFS_DENT_NODE_SZ + en->nlen + 1u);
			if (S_ISDIR(c->mode))
				nlink++;
		}
		ino.size = size;
		ino.nlink = nlink;
	} else {
		ino.nlink = i->nlink;
		ino.size = i->size;
		if (S_ISLNK(i->mode)) {
			dlen = (uint32_t)i->size;
			memcpy(data, i->target, dlen);
		} else if (S_ISCHR(i->mode) || S_ISBLK(i->mode)) {
			put_le32(data, ubifs_encode_dev(i->rdev_major, i->rdev_minor));
			dlen = 4;
		}
	}
	if (err)
		return err;
	ino.data_len = dlen;
	ubifs_ino_pack(w->node, &ino, data, dlen, 0);
	err = b_add(w, UBIFS_INO_NODE_SZ + dlen, &ino.key);
	w->st->files++;
	return err;
}

static unsigned online_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n > 64 ? 64 : (unsigned)n;
}

static void mk_free(struct mk *m)
{
	for (size_t k = 0; k < m->n; k++) {
		struct mk_ino *i = &m->inos[k];
		free(i->path);
		free(i->target);
		for (uint32_t e = 0; e < i->nents; e++)
			free(i->ents[e].name);
		free(i->ents);
	}
	free(m->inos);
	free(m->hl);
	for (size_t k = 0; k < m->njobs; k++)
		free(job_at(m, k)->out);
	for (size_t b = 0; m->jobs && b < JOB_BLOCKS_MAX && m->jobs[b]; b++)
		free(m->jobs[b]);
	free(m->jobs);
}

int fs_mkfs(struct ubi_vol_io *vol, const struct fs_mkfs_opts *o, struct fs_mkfs_stats *st, struct util_err *e)
{
	struct mk m;
	memset(&m, 0, sizeof(m));
	m.o = o;
	m.e = e;
	m.next_inum = UBIFS_FIRST_INO;
	memset(st, 0, sizeof(*st));
	if (!ubifs_compr_supported(o->bp.default_compr))
		return util_err_set(e, -EOPNOTSUPP, "mkfs: compressor %s is not built in", ubifs_compr_name(o->bp.default_compr));
	/* 1. scan */
	struct stat rst;
	int err = 0;
	uint32_t root;
	if (o->root) {
		if (stat(o->root, &rst))
			return util_err_set(e, -errno, "mkfs: bad root directory '%s': %s", o->root, strerror(errno));
		if (!S_ISDIR(rst.st_mode))
			return util_err_set(e, -ENOTDIR, "mkfs: root '%s' is not a directory", o->root);
	} else {
		memset(&rst, 0, sizeof(rst));
		rst.st_mode = S_IFDIR | 0755;
		rst.st_atime = rst.st_mtime = rst.st_ctime = o->clamp_time ? o->clamp : (int64_t)time(NULL);
	}
	/* the compression workers start with the scan: they take each file's
	 * chunks as it is found */
	if (!(m.jobs = calloc(JOB_BLOCKS_MAX, sizeof(*m.jobs))))
		return util_err_set(e, -ENOMEM, "mkfs: out of memory");
	pthread_mutex_init(&m.lock, NULL);
	pthread_cond_init(&m.cond, NULL);
	unsigned nthreads = o->threads > 0 ? (unsigned)o->threads : online_cpus();
	struct worker *ws = calloc(nthreads, sizeof(*ws));
	if (!ws)
		err = mk_oom(&m);
	for (unsigned t = 0; !err && t < nthreads; t++) {
		ws[t].m = &m;
		if (pthread_create(&ws[t].t, NULL, worker_main, &ws[t]) == 0)
			ws[t].started = 1;
		else if (t == 0)
			err = util_err_set(e, -EAGAIN, "mkfs: cannot start a compression thread");
	}
	if (!err)
		err = new_ino(&m, o->root, &rst, &root);
	if (!err && o->root)
		err = scan_dir(&m, root, o->root);
	if (!err && o->devtable)
		err = apply_devtable(&m, o->devtable);
	pthread_mutex_lock(&m.lock);
	m.scan_done = 1;
	pthread_cond_broadcast(&m.cond);
	pthread_mutex_unlock(&m.lock);
	for (size_t k = 0; !err && k < m.n; k++)
		if (S_ISREG(m.inos[k].mode) && m.inos[k].path) {
			m.total_bytes += m.inos[k].size;
			st->bytes_in += m.inos[k].size;
		}
	/* 3. build, in tree order, as the workers deliver */
	struct ubifs_build *b = NULL;
	if (!err)
		err = ubifs_build_new(&o->bp, vol, &b, e);
	struct wr w = {&m, b, malloc(NODE_MAX + 8), st};
	if (!err && !w.node)
		err = mk_oom(&m);
	for (size_t k = 0; !err && k < m.n; k++)
		err = write_inode(&w, (uint32_t)k);
	pthread_mutex_lock(&m.lock);
	m.stop = 1;
	pthread_cond_broadcast(&m.cond);
	pthread_mutex_unlock(&m.lock);
	for (unsigned t = 0; ws && t < nthreads; t++)
		if (ws[t].started)
			pthread_join(ws[t].t, NULL);
	free(ws);
	free(w.node);
	if (!err) {
		err = ubifs_build_finish(b, m.next_inum, &st->build);
		if (err)
			util_err_set(e, err, "%s", ubifs_build_errmsg(b));
	}
	if (!err) {
		st->leb_cnt = st->build.leb_cnt;
		st->image_bytes = (uint64_t)st->leb_cnt * o->bp.leb_size;
	}
	ubifs_build_free(b);
	pthread_mutex_destroy(&m.lock);
	pthread_cond_destroy(&m.cond);
	mk_free(&m);
	return err;
}
