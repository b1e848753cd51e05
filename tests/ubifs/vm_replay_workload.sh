#!/bin/sh
# vm_replay_workload.sh — runs inside the Linux VM (busybox sh) on a fresh
# kernel-made UBIFS at $MNT and leaves work in the journal that replay must
# get right. Note: sync(1)/syncfs and unmount COMMIT in UBIFS (sync_fs runs a
# commit), so after the commit that a large write forces, nothing here syncs:
# file data is fsync'ed (journal only), metadata changes go to the journal
# directly and reach the flash with the write-buffer timers. Then a power cut
# (debugfs ro_error: no more UBIFS writes, no unmount commit).
# Journal content: hash-colliding names deleted/re-created/renamed over,
# truncations to partial blocks and to zero, xattrs added/replaced/removed,
# a hard link whose first name goes, an unlinked-but-open file (an orphan,
# recorded by the forced commit), many entries with deletions, a sparse file.
set -e
cd "$MNT"
w() { printf '%s\n' "$2" | dd of="$1" conv=fsync 2>/dev/null; }
mkdir c m
w c/c10072071 one
w c/c28000000 two
w c/x three
w orph orphan-data
exec 3<orph
rm orph
# more than the journal holds: the kernel commits (the orphan is recorded)
dd if=/dev/urandom of=filler bs=65536 count=${FILLER:-40} conv=fsync 2>/dev/null
rm filler
# --- from here on: journal only
rm c/c10072071
w c/c10072071 again
w c/tmp four
mv c/tmp c/c28000000
dd if=/dev/urandom of=t1 bs=1000 count=20 conv=fsync 2>/dev/null
truncate -s 4097 t1
dd if=/dev/urandom of=t2 bs=4096 count=8 conv=fsync 2>/dev/null
truncate -s 9000 t2
printf 'tail\n' | dd of=t2 bs=1 seek=9000 conv=notrunc,fsync 2>/dev/null
dd if=/dev/urandom of=t3 bs=4096 count=3 conv=fsync 2>/dev/null
truncate -s 0 t3
w xa x
setfattr -n user.k1 -v v1 xa
setfattr -n user.k2 -v v2 xa
setfattr -x user.k1 xa
setfattr -n user.k2 -v v2new xa
setfattr -n trusted.t -v tv xa
w xb y
setfattr -n user.gone -v 1 xb
setfattr -x user.gone xb
w h1 hl
ln h1 h2
rm h1
dd if=/dev/urandom of=sparse bs=4096 count=1 seek=1000 conv=fsync 2>/dev/null
i=0
while [ $i -lt 300 ]; do w m/n$i "$i"; i=$((i + 1)); done
rm m/n1*
ln -s c/x sym
mknod cdev c 4 5
mkfifo fifo
# let the write-buffer timers put everything on flash, then one unsynced write
sleep 8
echo late >late1
echo 1 >/sys/kernel/debug/ubifs/ubi0_0/ro_error
echo "ro_error set"
exec 3<&-
exit 0
