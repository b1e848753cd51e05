/* ubifs_dir_write — name operations on a read-write mount, as the kernel's
 * dir.c: create (all file types), symlink, link, unlink, rmdir, rename
 * (plain, NOREPLACE, EXCHANGE, WHITEOUT), with the kernel's accounting:
 * a directory's size is UBIFS_INO_NODE_SZ plus ALIGN(56 + nlen + 1, 8) per
 * entry; a directory has 2 + subdirectories links; times are "now"
 * truncated to the superblock's time granularity. Each operation is one
 * journal update (ubifs_journal.c). Unlinking the last name removes the
 * inode at once (no open files at this layer; orphans come with the fs
 * layer's open files). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "ubifs/ubifs_budget.h"
#include "ubifs/ubifs_journal.h"
#include "ubifs/ubifs_orphan_write.h"
#include "ubifs/ubifs_priv.h"
#include "ubifs/ubifs_wcache.h"

#define CALC_DENT_SIZE(nlen) ubifs_align8(UBIFS_DENT_NODE_SZ + (uint32_t)(nlen) + 1)

void ubifs_now(const struct ubifs_fs *fs, int64_t *sec, uint32_t *nsec)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	uint32_t gran = fs->sb.time_gran ? fs->sb.time_gran : 1;
	*sec = ts.tv_sec;
	uint32_t ns = (uint32_t)ts.tv_nsec;
	*nsec = gran >= 1000000000u ? 0 : ns - ns % gran;
}

int ubifs_check_rw(struct ubifs_fs *fs)
{
	if (fs->read_only)
		return -EROFS;
	if (fs->ro_error)
		return util_err_set(&fs->err, -EROFS, "an earlier write failed; the file system is read-only now");
	ubifs_tnc_shrink(fs);
	return 0;
}

static int check_name(const char *name, size_t nlen)
{
	if (nlen == 0)
		return -ENOENT;
	if (nlen > UBIFS_MAX_NLEN)
		return -ENAMETOOLONG;
	if (memchr(name, '/', nlen) || memchr(name, 0, nlen))
		return -EINVAL;
	if ((nlen == 1 && name[0] == '.') || (nlen == 2 && name[0] == '.' && name[1] == '.'))
		return -EEXIST;
	return 0;
}

/* kernel ubifs_new_inode + inherit_flags */
int ubifs_new_inode(struct ubifs_fs *fs, const struct ubifs_inode *dir, uint32_t mode, uint32_t uid, uint32_t gid,
		    struct ubifs_inode *ui)
{
	if (fs->highest_inum >= UBIFS_INUM_WATERMARK)
		return util_err_set(&fs->err, -EINVAL, "out of inode numbers");
	memset(ui, 0, sizeof(*ui));
	ui->inum = ++fs->highest_inum;
	ui->creat_sqnum = ubifs_next_sqnum(fs);
	ui->nlink = 1;
	ui->uid = uid;
	ui->gid = gid;
	if (S_ISDIR(dir->mode) && (dir->mode & S_ISGID)) { /* inode_init_owner */
		ui->gid = dir->gid;
		if (S_ISDIR(mode))
			mode |= S_ISGID;
	}
	ui->mode = mode;
	ubifs_now(fs, &ui->mtime_sec, &ui->mtime_nsec);
	ui->atime_sec = ui->ctime_sec = ui->mtime_sec;
	ui->atime_nsec = ui->ctime_nsec = ui->mtime_nsec;
	if (S_ISDIR(dir->mode)) {
		ui->flags = dir->flags & (UBIFS_COMPR_FL | UBIFS_SYNC_FL | UBIFS_DIRSYNC_FL);
		if (!S_ISDIR(mode))
			ui->flags &= ~UBIFS_DIRSYNC_FL;
	}
	ui->compr_type = S_ISREG(mode) ? (uint16_t)fs->default_compr : UBIFS_COMPR_NONE;
	if (S_ISDIR(mode))
		ui->size = UBIFS_INO_NODE_SZ;
	return 0;
}

/* load a directory inode for a change */
static int get_dir(struct ubifs_fs *fs, uint64_t inum, struct ubifs_inode *d)
{
	int err = ubifs_read_inode(fs, inum, d);
	if (err)
		return err;
	if (!S_ISDIR(d->mode))
		return -ENOTDIR;
	if (d->flags & UBIFS_CRYPT_FL)
		return util_err_set(&fs->err, -EOPNOTSUPP, "directory %llu is encrypted: writing there is not supported",
				    (unsigned long long)inum);
	return 0;
}

static int exists(struct ubifs_fs *fs, uint64_t dir, const char *name, size_t nlen, uint64_t *inum)
{
	uint64_t x;
	int err = ubifs_lookup(fs, dir, name, nlen, inum ? inum : &x, NULL);
	if (err == -ENOENT)
		return 0;
	return err ? err : 1;
}

/* add a new inode under name in dir (create, mkdir, mknod, symlink) */
static int add_new(struct ubifs_fs *fs, struct ubifs_inode *d, const char *name, size_t nlen, struct ubifs_inode *ui,
		   uint64_t *inum)
{
	d->size += CALC_DENT_SIZE(nlen);
	d->mtime_sec = d->ctime_sec = ui->ctime_sec;
	d->mtime_nsec = d->ctime_nsec = ui->ctime_nsec;
	if (S_ISDIR(ui->mode)) {
		ui->nlink = 2;
		d->nlink++;
	}
	int err = ubifs_jnl_update(fs, d, name, nlen, ui, 0, 0);
	if (!err && inum)
		*inum = ui->inum;
	return err;
}

struct two_inodes {
	struct ubifs_inode a, b;
};

int ubifs_mknod(struct ubifs_fs *fs, uint64_t dir, const char *name, size_t nlen, uint32_t mode, uint32_t rdev_major,
		uint32_t rdev_minor, uint32_t uid, uint32_t gid, uint64_t *inum)
{
	int err = ubifs_check_rw(fs);
	if (!err)
		err = check_name(name, nlen);
	if (err)
		return err;
	switch (mode & S_IFMT) {
	case S_IFREG:
	case S_IFDIR:
	case S_IFIFO:
	case S_IFSOCK:
		break;
	case S_IFCHR:
	case S_IFBLK:
		if (rdev_major >= 4096 || rdev_minor >= (1u << 20)) /* new_valid_dev */
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
	struct two_inodes *t = malloc(sizeof(*t));
	if (!t)
		return -ENOMEM;
	/* kernel ubifs_create/mkdir/mknod: the inode, its entry, the parent */
	struct ubifs_budget_req req = {.new_ino = 1, .new_dent = 1, .dirtied_ino = 1};
	if (S_ISCHR(mode) || S_ISBLK(mode))
		req.new_ino_d = 8;
	err = get_dir(fs, dir, &t->a);
	if (!err && t->a.nlink == 0)
		err = -ENOENT;
	if (!err && (err = exists(fs, dir, name, nlen, NULL)) > 0)
		err = -EEXIST;
	if (!err)
		err = ubifs_budget_space(fs, &req);
	if (!err)
		err = ubifs_new_inode(fs, &t->a, mode, uid, gid, &t->b);
	if (!err && (S_ISCHR(mode) || S_ISBLK(mode))) {
		uint32_t dev = ubifs_encode_dev(rdev_major, rdev_minor);
		t->b.data[0] = (uint8_t)dev;
		t->b.data[1] = (uint8_t)(dev >> 8);
		t->b.data[2] = (uint8_t)(dev >> 16);
		t->b.data[3] = (uint8_t)(dev >> 24);
		t->b.data_len = 4;
		t->b.size = 4;
		t->b.rdev_major = rdev_major;
		t->b.rdev_minor = rdev_minor;
	}
	if (!err)
		err = add_new(fs, &t->a, name, nlen, &t->b, inum);
	ubifs_release_budget(fs, &req);
	free(t);
	return err;
}

int ubifs_symlink(struct ubifs_fs *fs, uint64_t dir, const char *name, size_t nlen, const char *target, size_t tlen,
		  uint32_t uid, uint32_t gid, uint64_t *inum)
{
	int err = ubifs_check_rw(fs);
	if (!err)
		err = check_name(name, nlen);
	if (err)
		return err;
	if (tlen == 0)
		return -ENOENT;
	if (tlen > UBIFS_MAX_INO_DATA)
		return -ENAMETOOLONG;
	struct two_inodes *t = malloc(sizeof(*t));
	if (!t)
		return -ENOMEM;
	struct ubifs_budget_req req = {.new_ino = 1, .new_dent = 1, .dirtied_ino = 1};
	req.new_ino_d = ubifs_align8((uint32_t)tlen);
	err = get_dir(fs, dir, &t->a);
	if (!err && t->a.nlink == 0)
		err = -ENOENT;
	if (!err && (err = exists(fs, dir, name, nlen, NULL)) > 0)
		err = -EEXIST;
	if (!err)
		err = ubifs_budget_space(fs, &req);
	if (!err)
		err = ubifs_new_inode(fs, &t->a, S_IFLNK | 0777, uid, gid, &t->b);
	if (!err) {
		memcpy(t->b.data, target, tlen);
		t->b.data_len = (uint32_t)tlen;
		t->b.size = tlen;
		err = add_new(fs, &t->a, name, nlen, &t->b, inum);
	}
	ubifs_release_budget(fs, &req);
	free(t);
	return err;
}

int ubifs_link(struct ubifs_fs *fs, uint64_t inum, uint64_t dir, const char *name, size_t nlen)
{
	int err = ubifs_check_rw(fs);
	if (!err)
		err = check_name(name, nlen);
	if (err)
		return err;
	struct two_inodes *t = malloc(sizeof(*t));
	if (!t)
		return -ENOMEM;
	err = get_dir(fs, dir, &t->a);
	if (!err && t->a.nlink == 0)
		err = -ENOENT;
	if (!err && (err = exists(fs, dir, name, nlen, NULL)) > 0)
		err = -EEXIST;
	if (!err)
		err = ubifs_read_inode(fs, inum, &t->b);
	if (!err && S_ISDIR(t->b.mode))
		err = -EPERM;
	if (!err && t->b.nlink >= 0xFFFFFFFFu)
		err = -EMLINK;
	struct ubifs_budget_req req = {.new_dent = 1, .dirtied_ino = 2};
	if (!err) {
		req.dirtied_ino_d = ubifs_align8(t->b.data_len);
		err = ubifs_budget_space(fs, &req);
	}
	if (!err) {
		t->b.nlink++;
		ubifs_now(fs, &t->b.ctime_sec, &t->b.ctime_nsec);
		t->a.size += CALC_DENT_SIZE(nlen);
		t->a.mtime_sec = t->a.ctime_sec = t->b.ctime_sec;
		t->a.mtime_nsec = t->a.ctime_nsec = t->b.ctime_nsec;
		err = ubifs_jnl_update(fs, &t->a, name, nlen, &t->b, 0, 0);
	}
	ubifs_release_budget(fs, &req);
	free(t);
	return err;
}

/* unlink / rmdir: entry gone, inode's link count down; the last link
 * deletes it (kernel: ubifs_jnl_update(deletion), then on eviction
 * ubifs_jnl_delete_inode) */
static int remove_name(struct ubifs_fs *fs, uint64_t dir, const char *name, size_t nlen, int is_rmdir)
{
	int err = ubifs_check_rw(fs);
	if (err)
		return err;
	if (nlen == 0 || nlen > UBIFS_MAX_NLEN)
		return nlen ? -ENAMETOOLONG : -ENOENT;
	struct two_inodes *t = malloc(sizeof(*t));
	if (!t)
		return -ENOMEM;
	uint64_t inum = 0;
	err = get_dir(fs, dir, &t->a);
	if (!err && (err = exists(fs, dir, name, nlen, &inum)) == 0)
		err = -ENOENT;
	if (err == 1)
		err = ubifs_read_inode(fs, inum, &t->b);
	if (!err && is_rmdir && !S_ISDIR(t->b.mode))
		err = -ENOTDIR;
	if (!err && !is_rmdir && S_ISDIR(t->b.mode))
		err = -EISDIR;
	if (!err && is_rmdir) {
		struct ubifs_dirent *de = malloc(sizeof(*de));
		err = de ? ubifs_readdir(fs, inum, 0, de) : -ENOMEM;
		free(de);
		if (err == 1)
			err = -ENOTEMPTY;
	}
	/* kernel ubifs_unlink/rmdir: a deletion may go on without a budget
	 * (one LEB is kept for deletions) */
	struct ubifs_budget_req req = {.mod_dent = 1, .dirtied_ino = 2};
	int budgeted = 1;
	if (!err) {
		err = ubifs_budget_space(fs, &req);
		if (err == -ENOSPC) {
			util_err_clear(&fs->err);
			budgeted = 0;
			err = 0;
		}
	}
	if (!err) {
		ubifs_now(fs, &t->b.ctime_sec, &t->b.ctime_nsec);
		if (is_rmdir) {
			t->b.nlink = 0;
			t->a.nlink--;
		} else {
			t->b.nlink--;
		}
		t->a.size -= CALC_DENT_SIZE(nlen);
		t->a.mtime_sec = t->a.ctime_sec = t->b.ctime_sec;
		t->a.mtime_nsec = t->a.ctime_nsec = t->b.ctime_nsec;
		uint64_t cmt_no = fs->cmt_no;
		if (t->b.nlink == 0)
			err = ubifs_orph_dying(fs, t->b.inum, cmt_no);
		if (!err) {
			err = ubifs_jnl_update(fs, &t->a, name, nlen, &t->b, 1, 0);
			if (err && t->b.nlink == 0)
				ubifs_orph_not_dying(fs, t->b.inum);
		}
		if (!err && t->b.nlink == 0)
			err = ubifs_orph_last_link(fs, &t->b, cmt_no);
		if (!err && t->b.nlink == 0) {
			ubifs_wcache_drop_deleted(fs, t->b.inum); /* unless an open file keeps it */
			ubifs_budget_deleted(fs);
		}
		/* kernel: something was deleted without a budget: clear the
		 * no-space flags (a budgeted one clears them at the release) */
		if (!err && !budgeted)
			ubifs_budget_deleted(fs);
	}
	ubifs_release_budget(fs, &req);
	free(t);
	return err;
}

int ubifs_unlink(struct ubifs_fs *fs, uint64_t dir, const char *name, size_t nlen)
{
	return remove_name(fs, dir, name, nlen, 0);
}

int ubifs_rmdir(struct ubifs_fs *fs, uint64_t dir, const char *name, size_t nlen)
{
	return remove_name(fs, dir, name, nlen, 1);
}

/* is `anc` an ancestor of (or equal to) directory d? UBIFS stores no
 * parent, so this walks from the root: only used to refuse moving a
 * directory into itself, for the directories of one rename. */
static int dir_contains(struct ubifs_fs *fs, uint64_t anc, uint64_t d, int depth)
{
	if (anc == d)
		return 1;
	if (depth > 4096)
		return -ELOOP;
	struct ubifs_dirent *de = malloc(sizeof(*de));
	if (!de)
		return -ENOMEM;
	uint64_t pos = 0;
	int r = 0;
	for (;;) {
		int e = ubifs_readdir(fs, anc, pos, de);
		if (e <= 0) {
			r = e;
			break;
		}
		pos = de->pos;
		if (de->type != UBIFS_ITYPE_DIR)
			continue;
		r = dir_contains(fs, de->inum, d, depth + 1);
		if (r)
			break;
	}
	free(de);
	return r;
}

struct rename_set {
	struct ubifs_inode old_dir, new_dir, old_ino, new_ino, wh;
};

int ubifs_rename(struct ubifs_fs *fs, uint64_t old_dir, const char *old_name, size_t old_nlen, uint64_t new_dir,
		 const char *new_name, size_t new_nlen, unsigned flags)
{
	int err = ubifs_check_rw(fs);
	if (err)
		return err;
	if (flags & ~(UBIFS_RENAME_NOREPLACE | UBIFS_RENAME_EXCHANGE | UBIFS_RENAME_WHITEOUT))
		return -EINVAL;
	if ((flags & UBIFS_RENAME_EXCHANGE) && (flags & (UBIFS_RENAME_NOREPLACE | UBIFS_RENAME_WHITEOUT)))
		return -EINVAL;
	if ((err = check_name(new_name, new_nlen)) != 0 || (err = check_name(old_name, old_nlen)) != 0)
		return err == -EEXIST ? -EBUSY : err;
	struct rename_set *r = malloc(sizeof(*r));
	if (!r)
		return -ENOMEM;
	/* kernel ubifs_rename: new entry, old entry, up to four inodes (and a
	 * whiteout inode) in one request */
	struct ubifs_budget_req req = {.new_dent = 1, .mod_dent = 1, .dirtied_ino = 4};
	uint64_t oi = 0, ni = 0;
	int have_new = 0;
	err = get_dir(fs, old_dir, &r->old_dir);
	if (!err)
		err = get_dir(fs, new_dir, &r->new_dir);
	if (!err && (err = exists(fs, old_dir, old_name, old_nlen, &oi)) == 0)
		err = -ENOENT;
	if (err == 1)
		err = ubifs_read_inode(fs, oi, &r->old_ino);
	if (!err) {
		err = exists(fs, new_dir, new_name, new_nlen, &ni);
		have_new = err == 1;
		if (err == 1)
			err = ubifs_read_inode(fs, ni, &r->new_ino);
	}
	if (err)
		goto out;
	if ((flags & UBIFS_RENAME_NOREPLACE) && have_new) {
		err = -EEXIST;
		goto out;
	}
	if (oi == ni) /* the same inode (also hard links of it): nothing to do */
		goto out;
	int is_dir = S_ISDIR(r->old_ino.mode);
	int move = old_dir != new_dir;
	if ((flags & UBIFS_RENAME_EXCHANGE) && !have_new) {
		err = -ENOENT;
		goto out;
	}
	/* no directory into itself */
	if (move && is_dir && (err = dir_contains(fs, oi, new_dir, 0)) != 0) {
		err = err > 0 ? -EINVAL : err;
		goto out;
	}
	if ((flags & UBIFS_RENAME_EXCHANGE) && move && S_ISDIR(r->new_ino.mode) &&
	    (err = dir_contains(fs, ni, old_dir, 0)) != 0) {
		err = err > 0 ? -EINVAL : err;
		goto out;
	}
	req.dirtied_ino_d = ubifs_align8(r->old_ino.data_len) + (have_new ? ubifs_align8(r->new_ino.data_len) : 0);
	if (flags & UBIFS_RENAME_WHITEOUT) {
		req.new_ino = 1;
		req.new_ino_d = 8;
	}
	err = ubifs_budget_space(fs, &req);
	if (err)
		goto out;
	int64_t ts;
	uint32_t tn;
	ubifs_now(fs, &ts, &tn);
	if (flags & UBIFS_RENAME_EXCHANGE) {
		r->old_dir.mtime_sec = r->old_dir.ctime_sec = ts;
		r->old_dir.mtime_nsec = r->old_dir.ctime_nsec = tn;
		struct ubifs_inode *nd = move ? &r->new_dir : &r->old_dir;
		nd->mtime_sec = nd->ctime_sec = ts;
		nd->mtime_nsec = nd->ctime_nsec = tn;
		if (move) {
			if (is_dir && !S_ISDIR(r->new_ino.mode)) {
				r->new_dir.nlink++;
				r->old_dir.nlink--;
			} else if (!is_dir && S_ISDIR(r->new_ino.mode)) {
				r->new_dir.nlink--;
				r->old_dir.nlink++;
			}
		}
		err = ubifs_jnl_xrename(fs, &r->old_dir, &r->old_ino, old_name, old_nlen, nd, &r->new_ino, new_name,
					new_nlen);
		/* simple_rename_timestamp: both inodes' ctime, written back later */
		r->old_ino.ctime_sec = r->new_ino.ctime_sec = ts;
		r->old_ino.ctime_nsec = r->new_ino.ctime_nsec = tn;
		if (!err)
			err = ubifs_jnl_write_inode(fs, &r->old_ino);
		if (!err)
			err = ubifs_jnl_write_inode(fs, &r->new_ino);
		goto out;
	}
	if (have_new) {
		if (S_ISDIR(r->new_ino.mode) && !is_dir) {
			err = -EISDIR;
			goto out;
		}
		if (!S_ISDIR(r->new_ino.mode) && is_dir) {
			err = -ENOTDIR;
			goto out;
		}
		if (is_dir) {
			struct ubifs_dirent *de = malloc(sizeof(*de));
			err = de ? ubifs_readdir(fs, ni, 0, de) : -ENOMEM;
			free(de);
			if (err) {
				err = err == 1 ? -ENOTEMPTY : err;
				goto out;
			}
		}
	}
	struct ubifs_inode *nd = move ? &r->new_dir : &r->old_dir;
	uint32_t new_sz = CALC_DENT_SIZE(new_nlen), old_sz = CALC_DENT_SIZE(old_nlen);
	struct ubifs_inode *wh = NULL;
	if (flags & UBIFS_RENAME_WHITEOUT) {
		err = ubifs_new_inode(fs, &r->old_dir, S_IFCHR, r->old_ino.uid, r->old_ino.gid, &r->wh);
		if (err)
			goto out;
		memset(r->wh.data, 0, 4);
		r->wh.data_len = 4; /* encode_dev(0, 0) */
		wh = &r->wh;
		old_sz = 0; /* the old name stays, naming the whiteout */
	}
	/* simple_rename_timestamp */
	r->old_dir.mtime_sec = r->old_dir.ctime_sec = ts;
	r->old_dir.mtime_nsec = r->old_dir.ctime_nsec = tn;
	nd->mtime_sec = nd->ctime_sec = ts;
	nd->mtime_nsec = nd->ctime_nsec = tn;
	r->old_ino.ctime_sec = ts;
	r->old_ino.ctime_nsec = tn;
	if (is_dir) {
		if (move) {
			r->old_dir.nlink--;
			if (!have_new)
				r->new_dir.nlink++;
		} else if (have_new) {
			r->old_dir.nlink--;
		}
	}
	r->old_dir.size -= old_sz;
	if (have_new) {
		r->new_ino.ctime_sec = ts;
		r->new_ino.ctime_nsec = tn;
		if (S_ISDIR(r->new_ino.mode))
			r->new_ino.nlink = 0;
		else
			r->new_ino.nlink--;
	} else {
		nd->size += new_sz;
	}
	uint64_t cmt_no = fs->cmt_no;
	int dying = have_new && r->new_ino.nlink == 0;
	if (dying)
		err = ubifs_orph_dying(fs, r->new_ino.inum, cmt_no);
	if (!err) {
		err = ubifs_jnl_rename(fs, &r->old_dir, &r->old_ino, old_name, old_nlen, nd,
				       have_new ? &r->new_ino : NULL, new_name, new_nlen, wh);
		if (err && dying)
			ubifs_orph_not_dying(fs, r->new_ino.inum);
	}
	/* the moved inode's new ctime: written back as the kernel's writeback would */
	if (!err)
		err = ubifs_jnl_write_inode(fs, &r->old_ino);
	if (!err && have_new && r->new_ino.nlink == 0)
		err = ubifs_orph_last_link(fs, &r->new_ino, cmt_no);
	if (!err && have_new && r->new_ino.nlink == 0)
		ubifs_wcache_drop_deleted(fs, r->new_ino.inum);
out:
	ubifs_release_budget(fs, &req);
	free(r);
	return err < 0 ? err : 0;
}

int ubifs_sync(struct ubifs_fs *fs)
{
	if (fs->read_only)
		return 0;
	if (fs->ro_error)
		return -EROFS;
	int err = ubifs_wcache_flush_all(fs); /* kernel sync_fs: written-back data, then the commit */
	return err ? err : ubifs_commit(fs);
}

int ubifs_fsync(struct ubifs_fs *fs, uint64_t inum)
{
	if (fs->read_only)
		return 0;
	if (fs->ro_error)
		return -EROFS;
	int err = ubifs_wcache_flush_ino(fs, inum); /* its cached blocks and inode into the journal */
	return err ? err : ubifs_jnl_sync_ino(fs, (uint32_t)inum);
}
