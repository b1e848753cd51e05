/* ubifs_orphan_write — owns the open counts of inodes and the orphan list
 * of a read-write mount, and writes the orphan area at commit (rules from
 * the kernel's orphan.c, facts only; see ubifs_orphan_write.h). Reading the
 * area after an unclean unmount (killing orphans) is ubifs_orphan.c. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ubifs/ubifs_journal.h"
#include "ubifs/ubifs_orphan_write.h"
#include "ubifs/ubifs_priv.h"
#include "util/util_endian.h"

struct orph {
	uint64_t inum;
	uint64_t host;      /* 0: the orphan itself; else the orphan whose xattr inode this is */
	uint64_t del_cmtno; /* commit number when the last link went (kernel ui->del_cmtno) */
	int is_new;         /* not yet written to the orphan area */
};

struct open_ref {
	uint64_t inum;
	uint32_t cnt;
};

struct ubifs_orph {
	struct orph *list; /* in the order they were added (kernel orph_list) */
	uint32_t cnt, cap, new_cnt;
	struct open_ref *open;
	uint32_t open_cnt, open_cap;
	uint32_t ohead_lnum, ohead_offs;
	uint32_t max_orphans;
	uint8_t *buf; /* one LEB */
};

/* orphans that fit in the area, halved (kernel tot_avail_orphs) */
static uint32_t tot_avail(const struct ubifs_fs *fs)
{
	uint32_t per_leb = (fs->leb_size - UBIFS_ORPH_NODE_SZ) / 8;
	return (fs->orph_last - fs->orph_first + 1) * per_leb / 2;
}

int ubifs_orph_open(struct ubifs_fs *fs, struct ubifs_orph **out)
{
	struct ubifs_orph *o = calloc(1, sizeof(*o));
	if (!o)
		return -ENOMEM;
	o->buf = malloc(fs->leb_size);
	if (!o->buf) {
		free(o);
		return -ENOMEM;
	}
	o->ohead_lnum = fs->orph_first;
	o->ohead_offs = 0;
	o->max_orphans = tot_avail(fs);
	*out = o;
	return 0;
}

void ubifs_orph_close(struct ubifs_orph *o)
{
	if (!o)
		return;
	free(o->list);
	free(o->open);
	free(o->buf);
	free(o);
}

uint32_t ubifs_orph_count_all(const struct ubifs_orph *o)
{
	return o ? o->cnt : 0;
}

static int find(const struct ubifs_orph *o, uint64_t inum)
{
	for (uint32_t i = 0; i < o->cnt; i++)
		if (o->list[i].inum == inum)
			return (int)i;
	return -1;
}

int ubifs_orph_is_orphan(const struct ubifs_orph *o, uint64_t inum)
{
	return o && find(o, inum) >= 0;
}

static int add(struct ubifs_fs *fs, struct ubifs_orph *o, uint64_t inum, uint64_t host, uint64_t del_cmtno)
{
	if (find(o, inum) >= 0)
		return util_err_set(&fs->err, -EINVAL, "orphan: inode %llu is already an orphan",
				    (unsigned long long)inum);
	if (o->cnt >= o->max_orphans)
		return util_err_set(&fs->err, -ENFILE, "orphan: too many orphans (the orphan area holds %u)",
				    o->max_orphans);
	if (o->cnt == o->cap) {
		uint32_t cap = o->cap ? o->cap * 2 : 16;
		struct orph *n = realloc(o->list, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		o->list = n;
		o->cap = cap;
	}
	o->list[o->cnt++] = (struct orph){inum, host, del_cmtno, 1};
	o->new_cnt++;
	return 0;
}

/* remove inum and the xattr orphans listed under it */
static void remove_orphan(struct ubifs_orph *o, uint64_t inum)
{
	uint32_t out = 0;
	for (uint32_t i = 0; i < o->cnt; i++) {
		struct orph *e = &o->list[i];
		if (e->inum == inum || e->host == inum) {
			if (e->is_new)
				o->new_cnt--;
			continue;
		}
		o->list[out++] = *e;
	}
	o->cnt = out;
}

/* Linux 6.1 ubifs_add_orphan: the inode, then each of its xattr inodes */
static int add_with_xattrs(struct ubifs_fs *fs, struct ubifs_orph *o, uint64_t inum, uint64_t del_cmtno)
{
	int err = add(fs, o, inum, 0, del_cmtno);
	if (err)
		return err;
	struct ubifs_key k = ubifs_key_make((uint32_t)inum, UBIFS_XENT_KEY, 0);
	struct ubifs_tnc_pos pos;
	err = ubifs_tnc_seek(fs, &k, 0, &pos);
	while (!err) {
		const struct ubifs_zbranch *zb = ubifs_tnc_at(&pos);
		if (zb->key.inum != inum || ubifs_key_type(&zb->key) != UBIFS_XENT_KEY)
			break;
		struct ubifs_zbranch copy = *zb;
		err = ubifs_tnc_read_leaf(fs, &copy, fs->nbuf);
		if (err)
			break;
		err = add(fs, o, get_le64(fs->nbuf + 40), inum, del_cmtno);
		if (!err)
			err = ubifs_tnc_next(fs, &pos);
	}
	if (err == -ENOENT)
		err = 0;
	if (err)
		remove_orphan(o, inum);
	return err;
}

static struct open_ref *find_open(const struct ubifs_orph *o, uint64_t inum)
{
	for (uint32_t i = 0; i < o->open_cnt; i++)
		if (o->open[i].inum == inum)
			return &o->open[i];
	return NULL;
}

int ubifs_orph_dying(struct ubifs_fs *fs, uint64_t inum, uint64_t del_cmtno)
{
	struct ubifs_orph *o = fs->orph;
	if (!o || find(o, inum) >= 0)
		return 0;
	return add_with_xattrs(fs, o, inum, del_cmtno);
}

void ubifs_orph_not_dying(struct ubifs_fs *fs, uint64_t inum)
{
	if (fs->orph)
		remove_orphan(fs->orph, inum);
}

int ubifs_orph_last_link(struct ubifs_fs *fs, const struct ubifs_inode *ino, uint64_t del_cmtno)
{
	struct ubifs_orph *o = fs->orph;
	if (o && find_open(o, ino->inum))
		return ubifs_orph_dying(fs, ino->inum, del_cmtno); /* listed already, normally */
	/* A commit may run before the deletion is written (it may need a new
	 * bud): it lists the inode in the orphan area, as its index holds it
	 * with no link. Not an orphan once the deletion is in the journal. */
	int err = ubifs_jnl_delete_inode(fs, ino, del_cmtno);
	if (!err && o)
		remove_orphan(o, ino->inum);
	return err;
}

/* the orphan's last reference is gone: delete it (kernel evict_inode) */
static int delete_now(struct ubifs_fs *fs, uint64_t inum)
{
	struct ubifs_orph *o = fs->orph;
	int at = find(o, inum);
	if (at < 0)
		return 0;
	uint64_t del_cmtno = o->list[at].del_cmtno;
	struct ubifs_inode *ui = malloc(sizeof(*ui));
	if (!ui)
		return -ENOMEM;
	/* an orphan until its deletion is written: a commit the deletion
	 * may need first lists it in the orphan area */
	int err = ubifs_read_inode(fs, inum, ui);
	if (!err && ui->nlink == 0)
		err = ubifs_jnl_delete_inode(fs, ui, del_cmtno);
	else if (err == -ENOENT)
		err = 0;
	if (!err)
		remove_orphan(o, inum);
	free(ui);
	return err;
}

int ubifs_open_ref(struct ubifs_fs *fs, uint64_t inum)
{
	struct ubifs_orph *o = fs ? fs->orph : NULL;
	if (!o)
		return 0; /* read-only: nothing is deleted */
	struct open_ref *r = find_open(o, inum);
	if (r) {
		r->cnt++;
		return 0;
	}
	if (o->open_cnt == o->open_cap) {
		uint32_t cap = o->open_cap ? o->open_cap * 2 : 16;
		struct open_ref *n = realloc(o->open, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		o->open = n;
		o->open_cap = cap;
	}
	o->open[o->open_cnt++] = (struct open_ref){inum, 1};
	return 0;
}

int ubifs_close_ref(struct ubifs_fs *fs, uint64_t inum)
{
	struct ubifs_orph *o = fs ? fs->orph : NULL;
	if (!o)
		return 0;
	struct open_ref *r = find_open(o, inum);
	if (!r)
		return 0;
	if (--r->cnt)
		return 0;
	*r = o->open[--o->open_cnt];
	if (fs->ro_error)
		return 0;
	return delete_now(fs, inum);
}

int ubifs_orph_unmount(struct ubifs_fs *fs)
{
	struct ubifs_orph *o = fs->orph;
	if (!o)
		return 0;
	o->open_cnt = 0;
	int err = 0;
	while (!err && o->cnt) {
		uint64_t inum = o->list[0].host ? o->list[0].host : o->list[0].inum;
		err = delete_now(fs, inum);
	}
	return err;
}

/* ---- the orphan area at commit (kernel commit_orphans) ---- */

static uint32_t avail_orphs(const struct ubifs_fs *fs, const struct ubifs_orph *o)
{
	uint32_t per_leb = (fs->leb_size - UBIFS_ORPH_NODE_SZ) / 8;
	uint32_t avail = (fs->orph_last - o->ohead_lnum) * per_leb;
	uint32_t gap = fs->leb_size - o->ohead_offs;
	if (gap >= UBIFS_ORPH_NODE_SZ + 8)
		avail += (gap - UBIFS_ORPH_NODE_SZ) / 8;
	return avail;
}

/* Write orphans list[from .. from+n) in nodes from the orphan head; atomic:
 * each LEB replaced at once (consolidation), else appended. */
static int write_nodes(struct ubifs_fs *fs, struct ubifs_orph *o, const uint64_t *inums, uint32_t n, int atomic)
{
	uint32_t done = 0;
	while (done < n) {
		uint32_t gap = fs->leb_size - o->ohead_offs;
		if (gap < UBIFS_ORPH_NODE_SZ + 8) {
			o->ohead_lnum++;
			o->ohead_offs = 0;
			gap = fs->leb_size;
			if (o->ohead_lnum > fs->orph_last)
				return util_err_set(&fs->err, -EINVAL, "commit: out of space in the orphan area");
		}
		uint32_t cnt = (gap - UBIFS_ORPH_NODE_SZ) / 8;
		if (cnt > n - done)
			cnt = n - done;
		uint32_t len = UBIFS_ORPH_NODE_SZ + cnt * 8;
		uint32_t alen = (len + fs->min_io_size - 1) / fs->min_io_size * fs->min_io_size;
		if (alen > gap)
			alen = gap;
		/* the last node of this commit has bit 63 of cmt_no set */
		ubifs_orph_pack(o->buf, fs->cmt_no, done + cnt == n, inums + done, cnt);
		int err;
		if (atomic) {
			ubifs_node_finish(o->buf, len, ubifs_next_sqnum(fs));
			uint32_t a8 = ubifs_align8(len);
			memset(o->buf + len, 0, a8 - len);
			ubifs_pad_pack(o->buf + a8, alen - a8);
			err = ubifs_leb_change(fs, o->ohead_lnum, o->buf, alen);
		} else {
			err = o->ohead_offs == 0 ? ubifs_leb_unmap(fs, o->ohead_lnum) : 0;
			if (!err)
				err = ubifs_write_node(fs, o->buf, len, o->ohead_lnum, o->ohead_offs);
		}
		if (err)
			return err;
		o->ohead_offs = ubifs_align8(o->ohead_offs + alen);
		done += cnt;
	}
	if (atomic)
		for (uint32_t lnum = o->ohead_lnum + 1; lnum <= fs->orph_last; lnum++) {
			int err = ubifs_leb_unmap(fs, lnum);
			if (err)
				return err;
		}
	return 0;
}

int ubifs_orph_commit(struct ubifs_fs *fs, int *no_orphs)
{
	struct ubifs_orph *o = fs->orph;
	*no_orphs = !o || o->cnt == 0;
	if (!o || o->new_cnt == 0)
		return 0;
	uint32_t n = o->new_cnt;
	int atomic = 0;
	if (avail_orphs(fs, o) < n) {
		/* consolidate: the whole list, from the start of the area */
		if (o->cnt > tot_avail(fs))
			return util_err_set(&fs->err, -EINVAL, "commit: out of space in the orphan area");
		n = o->cnt;
		o->ohead_lnum = fs->orph_first;
		o->ohead_offs = 0;
		atomic = 1;
	}
	uint64_t *inums = malloc((size_t)n * sizeof(*inums));
	if (!inums)
		return -ENOMEM;
	uint32_t k = 0;
	for (uint32_t i = 0; i < o->cnt; i++)
		if (atomic || o->list[i].is_new)
			inums[k++] = o->list[i].inum;
	int err = write_nodes(fs, o, inums, k, atomic);
	free(inums);
	if (!err) {
		for (uint32_t i = 0; i < o->cnt; i++)
			o->list[i].is_new = 0;
		o->new_cnt = 0;
	}
	return err;
}
