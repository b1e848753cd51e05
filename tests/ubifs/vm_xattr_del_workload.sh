#!/bin/sh
# vm_xattr_del_workload.sh — runs inside the Linux VM (busybox sh) on a fresh
# kernel-made UBIFS at $MNT: files with xattrs are committed (sync), then one
# is deleted with only the journal recording it, then a power cut (debugfs
# ro_error). Replay must delete the inode and the inodes of its xattrs.
set -e
cd "$MNT"
printf 'gone\n' >xd
setfattr -n user.a -v alpha xd
setfattr -n user.b -v beta xd
setfattr -n trusted.c -v gamma xd
printf 'kept\n' >keep
setfattr -n user.k -v kval keep
sync
# --- from here on: journal only
rm xd
printf 'after\n' | dd of=later conv=fsync 2>/dev/null
sleep 8
echo 1 >/sys/kernel/debug/ubifs/ubi0_0/ro_error
echo "ro_error set"
exit 0
