#!/bin/bash
# Issue 8, class 9 — FUSE on hostile input and on signals, through a real
# mount: entries with impossible names (made by patching a mkfs.ubifs image
# with safe_patch.py, CRCs recomputed) are hidden and logged instead of
# failing the directory; a damaged file reads as EIO; a relative mount point
# unmounts cleanly on SIGTERM (background) and SIGINT (foreground); a
# regular file is refused as a mount point.
set -uo pipefail
. "$(dirname "$0")/test_lib.sh"
S=$UBIKIT_SCRATCH
P=${UBIKIT_SRC:?}/tests/tools/safe_patch.py
[ -c /dev/fuse ] || skip "/dev/fuse is missing: FUSE mount not tested"
need fusermount3 mkfs.ubifs python3 pgrep
rm -rf "$S"
mkdir -p "$S/tree" "$S/mnt"
cd "$S" || exit 1
cleanup() {
	local rc=$?
	mountpoint -q "$S/mnt" && fusermount3 -u "$S/mnt"
	t_on_exit $rc
}
trap cleanup EXIT
wait_mounted() { for _ in $(seq 50); do mountpoint -q "$S/mnt" && return 0; sleep 0.1; done; return 1; }
wait_unmounted() { for _ in $(seq 50); do mountpoint -q "$S/mnt" || return 0; sleep 0.1; done; return 1; }

for n in aXb x yy zzz keep; do echo "content of $n" >"tree/$n"; done
head -c 777 /dev/urandom >tree/damaged
mkfs.ubifs -x none -r tree -m 2048 -e 126976 -c 64 -o fs.ubifs || fail "mkfs.ubifs"
python3 "$P" dent-name fs.ubifs aXb a/b >/dev/null || fail "patch a/b"
python3 "$P" dent-name fs.ubifs x . >/dev/null || fail "patch ."
python3 "$P" dent-name fs.ubifs yy .. >/dev/null || fail "patch .."
python3 "$P" dent-name fs.ubifs zzz 'z\0z' >/dev/null || fail "patch NUL"
python3 "$P" data-size fs.ubifs 777 5000 >/dev/null || fail "patch data size"

# 1. impossible names: hidden and logged, the rest of the directory listed
"$UBIKIT" mount -o ro -f fs.ubifs mnt 2>fuse.err &
pid=$!
wait_mounted || fail "not mounted after 5 s"
ls -a mnt >ls.out 2>ls.err || fail "ls -a of a directory with impossible names failed: $(cat ls.err)"
[ "$(tr '\n' ' ' <ls.out)" = ". .. damaged keep " ] || fail "ls -a lists: $(tr '\n' ' ' <ls.out) (expected . .. damaged keep)"
[ "$(cat mnt/keep)" = "content of keep" ] || fail "mnt/keep reads '$(cat mnt/keep)'"
# 2. a damaged file reads as EIO
cat mnt/damaged >/dev/null 2>cat.err && fail "reading the damaged file succeeded"
grep -q "Input/output error" cat.err || fail "damaged file: expected EIO, got: $(cat cat.err)"
fusermount3 -u mnt || fail "fusermount3 -u"
wait $pid || fail "ubikit mount -f exited with $?"
for n in 'a/b' '"."' '".."' '""'; do
	grep -q "impossible name ${n#\"}" fuse.err 2>/dev/null || grep -qF "impossible name \"${n//\"/}\"" fuse.err ||
		fail "no log line for the hidden entry $n: $(cat fuse.err)"
done
grep -q "bad size 5000" fuse.err || fail "the damaged read was not logged: $(cat fuse.err)"

# 3. relative mount point, background, SIGTERM: unmounted, nothing left behind
"$UBIKIT" mount -o ro fs.ubifs mnt || fail "background mount failed"
wait_mounted || fail "background: not mounted after 5 s"
dpid=$(command -v fuser >/dev/null && fuser -m "$S/mnt" 2>/dev/null | tr -s " " "\n" | grep -E "^[0-9]+$" | head -1)
[ -n "$dpid" ] || dpid=$(pgrep -f "^$UBIKIT mount -o ro fs.ubifs mnt$" | head -1)
[ -n "$dpid" ] || fail "cannot find the mount daemon"
kill -TERM "$dpid"
wait_unmounted || fail "SIGTERM: still mounted after 5 s (relative mount point lost at daemonizing)"
grep -q " $S/mnt " /proc/mounts && fail "SIGTERM: a dead mount is left in /proc/mounts"
ls mnt >/dev/null 2>&1 || fail "SIGTERM: the mount point is not usable afterwards (dead mount)"

# 4. foreground, SIGINT (Ctrl-C): unmounted, exit 0. (Job control on: a
# script's background job would otherwise start with SIGINT ignored.)
set -m
"$UBIKIT" mount -o ro -f fs.ubifs mnt 2>/dev/null &
pid=$!
set +m
wait_mounted || fail "-f: not mounted after 5 s"
kill -INT $pid
for _ in $(seq 50); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
kill -0 $pid 2>/dev/null && { kill -TERM $pid; fail "SIGINT: ubikit mount -f still running after 5 s"; }
wait $pid; rc=$?
[ $rc = 0 ] || fail "SIGINT: ubikit mount -f exited with $rc"
wait_unmounted || fail "SIGINT: still mounted"

# 5. a regular file is no mount point
: >file
"$UBIKIT" mount fs.ubifs file 2>err; rc=$?
[ $rc = 1 ] || fail "mount on a regular file: exit $rc, expected 1"
grep -q "is not a directory" err || fail "mount on a regular file: message '$(cat err)'"
grep -q " $S/file " /proc/mounts && { umount "$S/file"; fail "mounted on a regular file"; }
echo "safe_fuse: all passed"
