/* ubifs_master_write — writing the master node, both copies, as the
 * kernel's ubifs_write_master: the next slot after the current one in LEB 1,
 * then the same slot in LEB 2; when LEB 1 is full both LEBs are unmapped and
 * the master starts again at offset 0. (Kept apart from ubifs_master.c,
 * which reads and validates; the LPT commit's branch may provide the same
 * writer, in which case this file goes.) */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ubifs/ubifs_priv.h"

int ubifs_master_write(struct ubifs_fs *fs)
{
	uint32_t alsz = (UBIFS_MST_NODE_SZ + fs->min_io_size - 1) / fs->min_io_size * fs->min_io_size;
	uint32_t offs = fs->mst_offs + alsz;
	int err;
	if (fs->mst_lnum != UBIFS_MST_LNUM || offs + UBIFS_MST_NODE_SZ > fs->leb_size || fs->mst_recovered) {
		offs = 0;
		err = ubifs_leb_unmap(fs, UBIFS_MST_LNUM);
		if (err)
			return err;
	}
	fs->mst_lnum = UBIFS_MST_LNUM;
	fs->mst_offs = offs;
	fs->mst_recovered = 0;
	fs->mst.highest_inum = fs->highest_inum;
	uint8_t *buf = calloc(1, alsz);
	if (!buf)
		return util_err_set(&fs->err, -ENOMEM, "master node: out of memory");
	for (uint32_t lnum = UBIFS_MST_LNUM; lnum <= UBIFS_MST_LNUM + 1; lnum++) {
		if (lnum > UBIFS_MST_LNUM && offs == 0) {
			err = ubifs_leb_unmap(fs, lnum);
			if (err)
				break;
		}
		ubifs_mst_pack(buf, &fs->mst);
		err = ubifs_write_node(fs, buf, UBIFS_MST_NODE_SZ, lnum, offs);
		if (err)
			break;
	}
	free(buf);
	return err;
}
