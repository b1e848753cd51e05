#!/bin/sh
# ubifs_kernel_workload.sh — runs inside the Linux VM (busybox sh) on a fresh
# kernel-made UBIFS at $MNT: creates every file type, xattrs, hard links,
# sparse and truncated files, then modifies, deletes and renames some.
# MODE=unclean: afterwards writes more (one file fsync'ed, others only in the
# page cache / write buffer) and then stops all UBIFS writes through debugfs
# ro_error, so the flash is left as after a power cut (no unmount commit).
set -e
cd "$MNT"
text() { # N lines of compressible text
	i=0
	while [ $i -lt "$1" ]; do echo "line $i of $2"; i=$((i + 1)); done
}
mkdir -p dir/sub deep/a/b/c empty.dir
echo hello >dir/hello
dd if=/dev/urandom of=random.bin bs=4096 count=64 2>/dev/null
text 20000 big >text.big
i=0
while [ $i -lt 400 ]; do echo "file $i" >dir/sub/f$i; i=$((i + 1)); done
ln -s dir/hello link
ln -s /absolute/target/that/does/not/exist abslink
ln dir/hello dir/hardlink
ln random.bin deep/a/random.hard
mknod cdev c 4 5
mknod bdev b 8 17
mkfifo fifo
setfattr -n user.comment -v "a comment" dir/hello
setfattr -n user.bin -v 0x00ff10ab random.bin
setfattr -n trusted.dirattr -v trustedval dir
setfattr -h -n trusted.onlink -v linkattr link
setfattr -n user.long -v "$(text 40 xattr | tr -d '\n' | cut -c1-1500)" text.big
dd if=/dev/urandom of=sparse bs=4096 count=2 seek=700 2>/dev/null
text 3000 trunc >truncated
inline="tiny"
printf '%s' "$inline" >tiny
chmod 0640 dir/sub/f5
chmod 4755 dir/sub/f6
chown 1000:100 dir/sub/f7
touch -d '2001-02-03 04:05:06' dir/sub/f8
sync
# --- modifications after a sync: these go to the journal
echo appended >>dir/hello
dd if=/dev/urandom of=random.bin bs=4096 count=4 seek=10 conv=notrunc 2>/dev/null
rm -f dir/sub/f1 dir/sub/f1[0-9] dir/sub/f1[0-9][0-9]
mv dir/sub/f2 dir/renamed
mv dir/sub/f3 dir/sub/f4
mv deep/a/b deep/moved
setfattr -x user.comment dir/hello
setfattr -n user.comment -v "changed" dir/hello
setfattr -n user.new -v "new value" dir/sub/f9
truncate -s 5000 truncated
rm dir/hardlink
ln text.big text.hard
rmdir empty.dir
mkdir new.dir
echo "in new dir" >new.dir/file
sync
if [ "$MODE" = unclean ]; then
	# fsync'ed: must survive
	text 500 fsynced | dd of=late.fsynced conv=fsync 2>/dev/null
	# written without sync: may or may not survive; whatever the kernel shows next
	text 800 late >late.nosync
	echo more >>dir/renamed
	rm dir/sub/f20 dir/sub/f21
	sleep 1
	echo 1 >/sys/kernel/debug/ubifs/ubi0_0/ro_error
	echo "ro_error set: no more UBIFS writes"
fi
exit 0
