#!/bin/bash
# FUSE: mount a kernel-written reference image with 'ubikit mount -o ro' (in the
# background, and with -f in the foreground), drive it with ordinary tools
# (ls -lR, cat, stat, getfattr, cp -a, diff -r) and compare with what the
# kernel showed (the image's manifest) and with 'ubikit extract' output.
set -euo pipefail
. "$(dirname "$0")/ubifs_lib.sh"
S=${UBIKIT_SCRATCH:?}
D=${UBIKIT_SRC:?}/tests/data/kernel-images
[ -c /dev/fuse ] || skip "no /dev/fuse: FUSE mount not tested"
need fusermount3 getfattr
is_root || skip "needs root (owners, devices, trusted.* xattrs compared)"
rm -rf "$S"
mkdir -p "$S/mnt"
cleanup() {
	local rc=$?
	mountpoint -q "$S/mnt" && fusermount3 -u "$S/mnt"
	t_on_exit $rc
}
trap cleanup EXIT
name=nand2k-unclean
gzip -dc "$D/$name.img.gz" >"$S/img"
sum0=$(md5sum <"$S/img")

"$UBIKIT" mount -o ro "$S/img" "$S/mnt" || fail "ubikit mount failed"
for _ in $(seq 50); do mountpoint -q "$S/mnt" && break; sleep 0.1; done
mountpoint -q "$S/mnt" || fail "not mounted after 5 s"
grep -q " $S/mnt fuse.ubikit ro," /proc/mounts || fail "not a read-only fuse.ubikit mount: $(grep "$S/mnt" /proc/mounts)"

# 1. exactly what the kernel showed
sh "$UBIKIT_SRC/tests/tools/ubifs_manifest.sh" "$S/mnt" >"$S/fuse.manifest"
diff -u "$D/$name.manifest" "$S/fuse.manifest" >&2 || fail "FUSE view differs from the kernel's"
# 2. ordinary tools against extract output
"$UBIKIT" extract -q "$S/img" -o "$S/ext" || fail "extract failed"
lsn() { (cd "$1" && ls -lRn --time-style=+%s . | grep -v '^total ' | awk '$1 ~ /^d/ { $5 = "-" } { $1 = $1; print }'); }
diff -u <(lsn "$S/ext") <(lsn "$S/mnt") >&2 || fail "ls -lR of the mount differs from the extracted tree"
cp -a "$S/mnt/." "$S/copy" || fail "cp -a from the mount failed"
# (diff -r reports special files it cannot compare; the manifest below checks them)
# diff says 1 for differences (the special files at least), 2 for trouble
drc=0
diff -r --no-dereference "$S/ext" "$S/copy" >"$S/diff.raw" 2>&1 || drc=$?
[ $drc -le 1 ] || { cat "$S/diff.raw" >&2; fail "diff -r of the copy failed (exit $drc)"; }
grep -vE '^File .* is a (fifo|(block|character) special file) while file .* is a (fifo|(block|character) special file)$' \
	"$S/diff.raw" >"$S/diff.out" || :
[ ! -s "$S/diff.out" ] || { cat "$S/diff.out" >&2; fail "cp -a copy differs from extract output"; }
sh "$UBIKIT_SRC/tests/tools/ubifs_manifest.sh" "$S/copy" >"$S/copy.manifest"
diff -u "$D/$name.manifest" "$S/copy.manifest" >&2 || fail "cp -a copy (times, modes, xattrs) differs from the kernel's view"
[ "$(cat "$S/mnt/dir/hello")" = "$(printf 'hello\nappended')" ] || fail "cat dir/hello"
[ "$(stat -c '%F %t:%T' "$S/mnt/bdev")" = "block special file 8:11" ] || fail "stat bdev: $(stat -c '%F %t:%T' "$S/mnt/bdev")"
getfattr -h -d -m - "$S/mnt/random.bin" 2>/dev/null | grep -q '^user.bin=0sAP8Qqw==' || fail "getfattr -d random.bin"
stat -f -c '%b %a' "$S/mnt" | grep -qE '^[0-9]+ [0-9]+$' || fail "statfs"
# writes are refused
if touch "$S/mnt/newfile" 2>/dev/null; then fail "a write to the read-only mount succeeded"; fi
fusermount3 -u "$S/mnt" || fail "fusermount3 -u failed"

# 3. foreground mode: runs until unmounted, then exits 0
"$UBIKIT" mount -o ro -f "$S/img" "$S/mnt" &
pid=$!
for _ in $(seq 50); do mountpoint -q "$S/mnt" && break; sleep 0.1; done
mountpoint -q "$S/mnt" || fail "-f: not mounted after 5 s"
# the entries of dir/sub are exactly the kernel's (names, not only a count)
diff <(LC_ALL=C ls -A "$S/mnt/dir/sub" | LC_ALL=C sort) \
	<(sed '/^== xattrs$/q' "$D/$name.manifest" | awk '$1 ~ /^\.\/dir\/sub\/[^/]+$/ { print substr($1, 11) }' | LC_ALL=C sort) >&2 ||
	fail "-f: the entries of dir/sub differ from the kernel's"
[ "$(LC_ALL=C ls -A "$S/mnt/dir/sub" | wc -l)" = 287 ] || fail "-f: dir/sub does not hold the 287 entries of the manifest"
fusermount3 -u "$S/mnt"
wait $pid || fail "ubikit mount -f exited with $?"
[ "$(md5sum <"$S/img")" = "$sum0" ] || fail "the image was modified"
# usage errors (2) and a missing image (1)
expect_fail 2 "^usage: ubikit mount" "$UBIKIT" mount "$S/img"
expect_fail 2 "^usage: ubikit mount" "$UBIKIT" mount -o ro "$S/img"
expect_fail 1 "cannot open .*nonexistent: No such file" "$UBIKIT" mount "$S/nonexistent" "$S/mnt"
mountpoint -q "$S/mnt" && fail "a failed mount left a mount behind"
echo "PASS: FUSE mount"
