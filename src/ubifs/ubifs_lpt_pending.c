/* ubifs_lpt_pending — TEMPORARY placeholders for the LPT functions of
 * ubifs_lpt.h, which the h-lpt branch implements; they only let this branch
 * link until that branch is merged (this file is then deleted). Every one
 * refuses, so a read-write mount fails cleanly here. */
#include <errno.h>

#include "ubifs/ubifs_lpt.h"
#include "ubifs/ubifs_priv.h"

int ubifs_lpt_open(struct ubifs_fs *fs, struct ubifs_lpt **out)
{
	*out = NULL;
	return util_err_set(&fs->err, -EOPNOTSUPP, "mount: the LPT is not available in this build");
}
void ubifs_lpt_close(struct ubifs_lpt *lpt)
{
	(void)lpt;
}
int ubifs_lpt_lookup(struct ubifs_lpt *lpt, uint32_t lnum, struct ubifs_lprops *out)
{
	(void)lpt, (void)lnum, (void)out;
	return -EOPNOTSUPP;
}
int ubifs_lpt_set(struct ubifs_lpt *lpt, uint32_t lnum, uint32_t free, uint32_t dirty, uint32_t flags)
{
	(void)lpt, (void)lnum, (void)free, (void)dirty, (void)flags;
	return -EOPNOTSUPP;
}
int ubifs_lpt_add_dirt(struct ubifs_lpt *lpt, uint32_t lnum, uint32_t dirty)
{
	(void)lpt, (void)lnum, (void)dirty;
	return -EOPNOTSUPP;
}
void ubifs_lpt_stats(const struct ubifs_lpt *lpt, struct ubifs_lp_stats *out)
{
	(void)lpt;
	*out = (struct ubifs_lp_stats){0};
}
int ubifs_lpt_find_free(struct ubifs_lpt *lpt, uint32_t min_space, int squeeze, uint32_t *lnum_out, uint32_t *offs_out)
{
	(void)lpt, (void)min_space, (void)squeeze, (void)lnum_out, (void)offs_out;
	return -EOPNOTSUPP;
}
int ubifs_lpt_find_for_index(struct ubifs_lpt *lpt, uint32_t *lnum_out)
{
	(void)lpt, (void)lnum_out;
	return -EOPNOTSUPP;
}
int ubifs_lpt_commit(struct ubifs_lpt *lpt, struct ubifs_lpt_pos *pos)
{
	(void)lpt, (void)pos;
	return -EOPNOTSUPP;
}
