/* ubifs_commit — the commit: turns the journal into index (see docs/ubifs.md).
 * Not written yet: a full journal is reported as ENOSPC by the journal. */
#include <errno.h>

#include "ubifs/ubifs_priv.h"

int ubifs_commit(struct ubifs_fs *fs)
{
	return util_err_set(&fs->err, -EOPNOTSUPP, "commit: not implemented yet (the journal is full)");
}
