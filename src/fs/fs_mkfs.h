/* fs_mkfs — make a UBIFS from a host directory tree (`ubikit mkfs`): the
 * tree is scanned in a stable order (names sorted byte-wise, depth first),
 * the mkfs.ubifs device table applied, regular files compressed in
 * parallel (one thread per core, results written in tree order so the
 * output does not depend on timing), and everything laid out in one pass
 * by ubifs_build. Kept beyond mkfs.ubifs: xattrs, hard links, holes,
 * devices, fifos, sockets, symlinks; SOURCE_DATE_EPOCH-style time clamp. */
#ifndef UBIKIT_FS_MKFS_H
#define UBIKIT_FS_MKFS_H
#include <stdint.h>

#include "ubifs/ubifs_build.h"
#include "util/util_err.h"

struct ubi_vol_io;

struct fs_mkfs_opts {
	const char *root;              /* host directory; NULL: an empty root */
	struct ubifs_build_params bp;  /* geometry and superblock fields */
	int favor_lzo;                 /* with bp.default_compr LZO */
	unsigned favor_percent;        /* 0: 20 */
	int squash_uids;               /* -U: every owner root */
	const char *devtable;          /* -D file, or NULL */
	int clamp_time;                /* times later than clamp are set to it */
	int64_t clamp;
	int no_xattrs;
	int threads;                   /* 0: one per online CPU */
	void (*progress)(void *ctx, uint64_t done, uint64_t total);
	void *progress_ctx;
};

struct fs_mkfs_stats {
	uint64_t files;     /* inodes written (all types, xattr inodes not counted) */
	uint64_t bytes_in;  /* regular file bytes read */
	uint64_t data_bytes_out; /* data node payload after compression */
	uint32_t leb_cnt;
	uint64_t image_bytes; /* leb_cnt * leb_size */
	struct ubifs_build_stats build;
};

int fs_mkfs(struct ubi_vol_io *vol, const struct fs_mkfs_opts *o, struct fs_mkfs_stats *st, struct util_err *e);

/* An image file as an erased volume of max_lebs LEBs: written LEBs go to
 * the file, close fills every LEB below leb_cnt that was not written to
 * its end with 0xFF and truncates the file to leb_cnt LEBs. */
int fs_mkfs_file_vol_open(const char *path, uint32_t leb_size, uint32_t min_io, uint32_t max_lebs,
			  struct ubi_vol_io **out, struct util_err *e);
int fs_mkfs_file_vol_close(struct ubi_vol_io *vol, uint32_t leb_cnt, struct util_err *e);

#endif
