#!/bin/bash
# A full host disk (issue 8, class 4), for real: a 6 MiB tmpfs is mounted
# and filled. Every command must fail with "No space left on device" (exit
# 1, never a SIGBUS: exit 135), leaving the image as it was, or leaving no
# half-made image; once there is room again the same command works:
#   - flash create of a 16 MiB image;
#   - format of a sparse simulator image (every PEB gets written);
#   - format of a file with holes (truncate -s: a plain dump, no sidecar);
#   - a write through the memory-mapped simulator (flash erase, ubi mkvol)
#     into a part of the file that has no disk blocks yet.
# Needs root to mount: skipped (exit 77) otherwise, never passed.
set -uo pipefail
: "${UBIKIT:?}" "${UBIKIT_SCRATCH:?}"
. "$(dirname "$0")/test_lib.sh"
T_SOFT=1
S=$UBIKIT_SCRATCH
M=$S/mnt
rm -rf "$S"; mkdir -p "$M" || exit 1
is_root || skip "needs root to mount a small tmpfs"
mount -t tmpfs -o size=6m,mode=0755 tmpfs "$M" 2>/dev/null || skip "cannot mount a small tmpfs here"
trap 'rc=$?; umount "$M" 2>/dev/null; t_on_exit $rc' EXIT
cd "$S" || exit 1
U() { "$UBIKIT" "$@"; }
expect() { # RC REGEX WHAT -- command...
	local want=$1 re=$2 what=$3
	shift 4
	run "$@"
	if [ "$T_RC" != "$want" ]; then
		fail "$what: exit $T_RC, expected $want"; sed 's/^/    /' "$T_ERR" >&2; return 0
	fi
	[ -z "$re" ] || grep -Eqi -- "$re" "$T_ERR" || { fail "$what: message does not match /$re/:"; sed 's/^/    /' "$T_ERR" >&2; }
	return 0
}
same() { md5sum -c --quiet "$2" >/dev/null 2>&1 || { fail "$1: files changed"; md5sum -c "$2" 2>&1 | grep -v ': OK' >&2; }; }
# Fill the tmpfs but for KiB kibibytes.
fill_but() { rm -f "$M/filler"; local free; free=$(df -B1K --output=avail "$M" | tail -1)
	[ "$free" -gt "$1" ] && head -c $(((free - $1) * 1024)) /dev/zero >"$M/filler" 2>/dev/null; true; }

# flash create: 16 MiB does not fit in 6 MiB: refused before writing, no
# image or sidecar left.
expect 1 'No space left on device' "flash create 16MiB on a 6MiB disk" -- U flash create "$M/c.img" --size 16MiB
[ -e "$M/c.img" ] && fail "flash create left a partial image"
[ -e "$M/c.img.sim" ] && fail "flash create left a sidecar"

# format of a sparse image: 16 MiB of PEBs on a 6 MiB disk.
U flash create "$M/s.img" --size 16MiB --sparse >/dev/null || fail "flash create --sparse"
md5sum "$M/s.img" "$M/s.img.sim" >s.md5
used0=$(du -k "$M/s.img" | cut -f1)
expect 1 'No space left on device.*nothing was written' "format of a sparse image on a full disk" -- U format "$M/s.img" -q
same "format of a sparse image" s.md5
[ "$(du -k "$M/s.img" | cut -f1)" -le "$((used0 + 4))" ] || fail "the failed format left disk blocks allocated"

# format of a file with holes and no sidecar (geometry from options).
rm -f "$M/s.img" "$M/s.img.sim"
truncate -s 8MiB "$M/h.img"
md5sum "$M/h.img" >h.md5
fill_but 64
expect 1 'No space left on device' "format of a file with holes" -- U format "$M/h.img" -q --page 2048 --peb 128KiB
same "format of a file with holes" h.md5
[ -e "$M/h.img.sim" ] && fail "failed format left a sidecar"

# A write through the mapped simulator into a part of the file with no
# disk blocks (non-sparse image: an erase writes 0xFF over the PEB).
expect 1 'cannot store PEB 40 .*No space left on device' "flash erase into a hole" -- U flash erase "$M/h.img" --peb 40
same "flash erase into a hole" h.md5
[ -e "$M/h.img.sim" ] && fail "failed erase left a sidecar"
rm -f "$M/filler"
U flash erase "$M/h.img" --peb 40 >/dev/null || fail "flash erase once there is room"
cmp -s <(dd if="$M/h.img" bs=128K skip=40 count=1 2>/dev/null) <(head -c 128K /dev/zero | tr '\0' '\377') ||
	fail "PEB 40 not erased"
rm -f "$M/h.img" "$M/h.img.sim"

# UBI commands on a disk so full that not even the sidecar fits: refused
# before the image changes.
U flash create "$M/u.img" --size 2MiB >/dev/null || fail "create u.img"
U format "$M/u.img" -q -Q 3 || fail "format u.img"
md5sum "$M/u.img" "$M/u.img.sim" >u.md5
fill_but 0
expect 1 'sidecar.*No space left on device' "ubi mkvol on a full disk" -- U ubi mkvol "$M/u.img" -N v -S 2
same "ubi mkvol on a full disk" u.md5
rm -f "$M/filler"
U ubi mkvol "$M/u.img" -N v -S 2 >/dev/null || fail "mkvol once there is room"

# Room again: flash create works.
rm -f "$M"/*
U flash create "$M/c.img" --size 4MiB >/dev/null || fail "flash create once there is room"

finish safe_disk_full
