/* fuse_ubikit_priv — what the FUSE front end's files share: the session's
 * context, the error mapping and the attribute replies (fuse_ubikit.c),
 * used by the changing operations (fuse_ubikit_write.c). */
#ifndef UBIKIT_FUSE_UBIKIT_PRIV_H
#define UBIKIT_FUSE_UBIKIT_PRIV_H
#include <fuse_lowlevel.h>
#include <stdint.h>
#include <sys/stat.h>

struct ubikit_fs;
struct ubikit_stat;

/* A file open through the mount (fuse_ubikit_open.c). */
struct fu_open {
	uint64_t ino;
	unsigned count;
	int hidden; /* its last name was unlinked: now .ubikit_hidden_<ino> */
};

struct fu_ctx {
	struct ubikit_fs *fs;
	struct fu_open *open;
	size_t nopen, capopen;
	int (*flush)(void *arg); /* see struct fuse_ubikit_opts */
	void *flush_arg;
};

/* Open counts (fuse_ubikit_open.c): count an open, a release (the last
 * one of a hidden file unlinks it), hide an open file whose last name is
 * about to go (1 hidden, 0 nothing to do, <0 error), end of session. */
void fu_open_count(struct fu_ctx *c, uint64_t ino);
void fu_open_release(struct fu_ctx *c, uint64_t ino);
int fu_open_hide(struct fu_ctx *c, uint64_t parent, const char *name);
void fu_open_end(struct fu_ctx *c);

/* The flush hook after a successful fsync (0 if none). */
int fu_flush_below(fuse_req_t req);

struct ubikit_fs *fu_fs(fuse_req_t req);
/* negative errno of the fs layer -> the errno programs expect */
int fu_err(int neg);
void fu_to_stat(const struct ubikit_stat *u, struct stat *st);
int fu_entry(struct ubikit_fs *fs, uint64_t ino, struct fuse_entry_param *e);

void fu_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, struct fuse_file_info *fi);
void fu_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev);
void fu_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode);
void fu_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name);
void fu_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname);
void fu_unlink(fuse_req_t req, fuse_ino_t parent, const char *name);
void fu_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name);
void fu_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent, const char *newname,
	       unsigned int flags);
void fu_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set, struct fuse_file_info *fi);
void fu_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off, struct fuse_file_info *fi);
void fu_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void fu_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void fu_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi);
void fu_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi);
void fu_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value, size_t size, int flags);
void fu_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name);

#endif
