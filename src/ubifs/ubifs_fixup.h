/* ubifs_fixup — the superblock's free-space fixup (mkfs.ubifs -F) on the
 * first read-write mount, as the kernel's ubifs_fixup_free_space. */
#ifndef UBIKIT_UBIFS_FIXUP_H
#define UBIKIT_UBIFS_FIXUP_H

struct ubifs_fs;

/* Nothing to do unless the flag is set (read-write mounts only): every LEB
 * with free space rewritten with its used part only, then the flag cleared
 * in the superblock. Call when the LPT, the log and the master are up. */
int ubifs_fixup_free_space(struct ubifs_fs *fs);

#endif
