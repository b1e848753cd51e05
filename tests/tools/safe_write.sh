#!/bin/bash
# Commands that write never damage the user's files (issue 8, classes 1, 2,
# 3 and 6). Each check runs the command a careless or hostile user would,
# then checks the exact exit status, the message, and that the files it
# must not touch are byte-identical (md5) afterwards:
#  1. no command writes to a file it reads (compared by device and inode:
#     the same file under another name, a hard link, stdout redirected);
#  2. a writer locks the image: a second writer (another ubikit, a FUSE
#     mount, or any program holding a lock) gets "in use" with the holder's
#     pid and command line, at once; readers share;
#  3. destructive commands check everything first (format -f of an image
#     with a broken eraseblock 20, a volume table reserving more than the
#     flash has, -x 0; ubi update from a directory, or a file too large);
#     an update that cannot finish (input too short, writer killed) leaves
#     its update marker: the flash attaches and says so;
#  6. a sidecar left from another image is refused with a message naming
#     it; a sidecar that cannot be written fails the command before the
#     image changes; no message shows a bare errno number.
set -uo pipefail
: "${UBIKIT:?}" "${UBIKIT_SCRATCH:?}"
. "$(dirname "$0")/test_lib.sh"
T_SOFT=1
S=$UBIKIT_SCRATCH
rm -rf "$S"; mkdir -p "$S"; cd "$S" || exit 1
trap 'rc=$?; mountpoint -q "$S/mnt" 2>/dev/null && fusermount3 -u "$S/mnt"; t_on_exit $rc' EXIT
U() { "$UBIKIT" "$@"; }
sums() { md5sum "$@" 2>/dev/null; }
# Wait until some process holds a lock on FILE (by inode, in /proc/locks).
wait_lock() { local i; i=$(stat -c %i "$1"); for _ in $(seq 100); do grep -q ":$i " /proc/locks && return; sleep 0.1; done; fail "no lock on $1"; }

# expect RC REGEX WHAT -- command...: test_lib's run (sanitizer reports and
# crashes fail), then exit status RC exactly, stderr matching REGEX
# (extended, case-insensitive), and never a bare "(-13)" errno.
expect() {
	local want=$1 re=$2 what=$3
	shift 4
	run "$@"
	if [ "$T_RC" != "$want" ]; then
		fail "$what: exit $T_RC, expected $want"; sed 's/^/    /' "$T_ERR" >&2; return 0
	fi
	[ -z "$re" ] || grep -Eqi -- "$re" "$T_ERR" || { fail "$what: message does not match /$re/:"; sed 's/^/    /' "$T_ERR" >&2; }
	if grep -Eq '\(-?[0-9]+\)$|failed \(-?[0-9]+\)' "$T_ERR"; then
		fail "$what: bare errno number in the message:"; sed 's/^/    /' "$T_ERR" >&2
	fi
	return 0
}
# same WHAT SUMFILE: the files listed in SUMFILE are unchanged.
same() { md5sum -c --quiet "$2" >/dev/null 2>&1 || { fail "$1: files changed:"; md5sum -c "$2" 2>&1 | grep -v ': OK' | sed 's/^/    /' >&2; }; }

python3 -c "import random; r=random.Random(8); open('a.bin','wb').write(bytes(r.getrandbits(8) for _ in range(300000)))"
U flash create f.img --size 16MiB >/dev/null || exit 1
U format f.img -q -Q 5 || exit 1
U ubi mkvol f.img -N data -s 1MiB >/dev/null || exit 1
U ubi update f.img -N data a.bin || exit 1
U ubi read f.img -N data -o data.before || exit 1
sums f.img f.img.sim >f.md5

# ---- 1. no command writes to a file it reads ----
expect 1 'is the input "f.img"' "ubi read -o FLASH" -- U ubi read f.img -n 0 -o f.img
same "ubi read -o FLASH" f.md5
expect 1 'is the input' "ubi read -o FLASH.sim" -- U ubi read f.img -n 0 -o f.img.sim
same "ubi read -o FLASH.sim" f.md5
ln f.img hard.img
expect 1 'is the input "f.img"' "ubi read -o a hard link of FLASH" -- U ubi read f.img -n 0 -o hard.img
same "ubi read -o hard link" f.md5
ln -s f.img sym.img
expect 1 'is the input' "ubi read -o a symlink to FLASH" -- U ubi read f.img -n 0 -o sym.img
same "ubi read -o symlink" f.md5
expect 1 'standard output is the flash image' "ubi read >> FLASH" -- sh -c '"$0" ubi read f.img -n 0 >>f.img' "$UBIKIT"
same "ubi read >> FLASH" f.md5
expect 1 'is the flash image' "ubi update with FLASH as input" -- U ubi update f.img -N data f.img
expect 1 'is the flash image' "ubi update with a link of FLASH as input" -- U ubi update f.img -N data hard.img
same "ubi update FLASH from itself" f.md5
expect 1 'is the flash being formatted' "format FLASH -f FLASH" -- U format f.img -f hard.img
same "format FLASH -f FLASH" f.md5
# ubinize: the output may be neither a volume image nor the ini file.
cp a.bin vol.bin
printf '[v]\nmode=ubi\nimage=vol.bin\nvol_id=0\nvol_size=1MiB\nvol_type=dynamic\nvol_name=v\n' >u.ini
sums vol.bin u.ini >u.md5
expect 1 'is the input "vol.bin"' "ubinize -o IMAGE-of-the-ini" -- U ubinize -o vol.bin -p 128KiB -m 2048 u.ini
same "ubinize -o IMAGE" u.md5
expect 1 'is the input "u.ini"' "ubinize -o the-ini" -- U ubinize -o u.ini -p 128KiB -m 2048 u.ini
same "ubinize -o INI" u.md5
# A read command whose standard output is its image (>> keeps the content).
zcat "${UBIKIT_SRC:?}/tests/data/kernel-images/nand2k-clean.img.gz" >k.img
sums k.img >k.md5
expect 1 'standard output is the image' "cat IMG FILE >> IMG" -- sh -c '"$0" cat k.img /deep >>k.img' "$UBIKIT"
expect 1 'standard output is the image' "ls IMG >> IMG" -- sh -c '"$0" ls k.img >>k.img' "$UBIKIT"
same "read commands >> IMG" k.md5

# ---- 2. locks: one writer at a time, readers share ----
# Another program holds a write lock: writers and readers are refused at
# once, with its pid and command line.
flock -F -x f.img sleep 30 &
holder=$!
wait_lock f.img
expect 1 "in use: pid $holder \\(sleep 30\\) holds a write lock" "ubi mkvol while locked" -- \
	timeout 10 "$UBIKIT" ubi mkvol f.img -N x -S 1
expect 1 "in use: pid [0-9]+ .*cannot read it now" "ubi info while write-locked" -- timeout 10 "$UBIKIT" ubi info f.img
expect 1 "in use" "format while locked" -- timeout 10 "$UBIKIT" format f.img -q
expect 1 "in use" "flash erase while locked" -- timeout 10 "$UBIKIT" flash erase f.img --peb 3
kill $holder; wait $holder 2>/dev/null
same "writers refused while locked" f.md5
# A shared (read) lock: readers go on, writers are refused.
flock -F -s f.img sleep 30 &
holder=$!
wait_lock f.img
expect 0 "" "ubi info while read-locked" -- timeout 10 "$UBIKIT" ubi info f.img
expect 1 "holds a read lock on it; cannot change it now" "ubi update while read-locked" -- \
	timeout 10 "$UBIKIT" ubi update f.img -N data a.bin
kill $holder; wait $holder 2>/dev/null
same "writer refused while read-locked" f.md5
# Two ubikit writers: the first waits on its standard input while it holds
# the flash; the second is told who has it; the first then finishes right.
mkfifo feed
"$UBIKIT" ubi update f.img -N data - -s 300000 <feed >upd1.out 2>&1 &
first=$!
exec 7>feed
wait_lock f.img
expect 1 "in use: pid $first \\(.*ubi update f.img -N data - -s 300000\\) holds a write lock" \
	"second ubi update during the first" -- timeout 10 "$UBIKIT" ubi update f.img -N data vol.bin
cat a.bin >&7
exec 7>&-
wait $first || { fail "the first update failed"; cat upd1.out; }
U ubi read f.img -N data -o data.after
cmp -s data.before data.after || fail "volume contents after two concurrent updates"
U ubi info f.img | grep -q 'State: *OK' || fail "volume not OK after the concurrent updates"
sums f.img f.img.sim >f.md5

# A mounted image (FUSE; the mount process forks into the background and
# keeps the lock): a writer is told which process has it.
if [ -c /dev/fuse ] && command -v fusermount3 >/dev/null; then
	mkdir -p mnt
	if U mount -o ro k.img mnt 2>mount.err; then
		expect 1 "k.img is in use: pid [0-9]+ \\(.*ubikit mount -o ro k.img mnt\\) holds a read lock" \
			"format of a mounted image" -- U format k.img -q --page 2048 --peb 128KiB
		fusermount3 -u mnt || fail "fusermount3 -u"
		same "format of a mounted image" k.md5
	else
		echo "note: FUSE mount not possible here ($(cat mount.err)): mounted-image lock not tested"
	fi
else
	echo "note: no /dev/fuse or fusermount3: mounted-image lock not tested"
fi

# ---- 3. destructive commands check everything before they destroy ----
# The image: eraseblock 20 of a ubinize image has a broken EC header.
head -c 3MiB /dev/urandom >big.bin
printf '[v]\nmode=ubi\nimage=big.bin\nvol_id=0\nvol_size=4MiB\nvol_type=dynamic\nvol_name=v\n' >big.ini
U ubinize -o big.ubi -p 128KiB -m 2048 -Q 9 big.ini || fail "ubinize big.ini"
printf 'XXXX' | dd of=big.ubi bs=1 seek=$((20 * 131072)) conv=notrunc 2>/dev/null
expect 1 'eraseblock 20: no valid UBI EC header.*nothing was written' "format -f IMG with a bad eraseblock 20" -- \
	U format f.img -q -f big.ubi
same "format -f with a bad eraseblock 20" f.md5
expect 1 'eraseblock 20' "format -f - (stdin) with a bad eraseblock 20" -- \
	sh -c '"$0" format f.img -q -f - -S $(stat -c %s big.ubi) <big.ubi' "$UBIKIT"
same "format -f - with a bad eraseblock 20" f.md5
# The image's volume table reserves more PEBs than this flash has.
head -c 100KiB /dev/urandom >small.bin
printf '[v]\nmode=ubi\nimage=small.bin\nvol_id=0\nvol_size=100MiB\nvol_type=dynamic\nvol_name=v\n' >huge.ini
U ubinize -o huge.ubi -p 128KiB -m 2048 huge.ini || fail "ubinize huge.ini"
expect 1 'reserves [0-9]+ eraseblocks.*only 128 good' "format -f IMG reserving more than the flash" -- \
	U format f.img -q -f huge.ubi
same "format -f reserving too much" f.md5
expect 2 'UBI version 0 would not attach' "format -x 0" -- U format f.img -q -x 0
same "format -x 0" f.md5
# ubi update from a directory, a non-file, a file too large: refused, the
# volume as it was.
mkdir adir
expect 1 '"adir" is a directory.*not changed' "ubi update VOL DIR" -- U ubi update f.img -N data adir
expect 2 'not a regular file: give its size' "ubi update VOL /dev/zero" -- U ubi update f.img -N data /dev/zero
head -c 2MiB /dev/zero >toobig.bin
expect 1 'does not fit volume' "ubi update with a file too large" -- U ubi update f.img -N data toobig.bin
U ubi read f.img -N data -o data.after
cmp -s data.before data.after || fail "volume changed by a refused update"
same "refused updates" f.md5
# An update that cannot finish (the input ends early) leaves UBI's update
# marker: the flash attaches and says the volume is incomplete.
expect 1 'ended [0-9]+ bytes early.*update marker' "update from a short stdin" -- \
	sh -c 'head -c 1000 a.bin | "$0" ubi update f.img -N data - -s 300000' "$UBIKIT"
U ubi info f.img >info.txt || fail "flash does not attach after an interrupted update"
grep -q 'State: *update interrupted' info.txt || { fail "no 'update interrupted' state"; cat info.txt; }
U ubi update f.img -N data a.bin || fail "update again after the interrupted one"
# The writer killed half way (as by a power cut or kill -9): the flash
# attaches, the volume says "update interrupted", the lock is gone.
rm -f feed2; mkfifo feed2
"$UBIKIT" ubi update f.img -N data - -s 300000 <feed2 >/dev/null 2>&1 &
victim=$!
exec 8>feed2
wait_lock f.img
head -c 200000 a.bin >&8
sleep 1
kill -9 $victim; wait $victim 2>/dev/null
exec 8>&-
U ubi info f.img >info.txt 2>&1 || { fail "flash does not attach after kill -9 of a writer"; cat info.txt; }
grep -q 'State: *update interrupted' info.txt || { fail "no 'update interrupted' after kill -9"; cat info.txt; }
U ubi update f.img -N data a.bin || fail "update again after the killed one"
U ubi info f.img | grep -q 'State: *OK' || fail "volume not OK after the repeated update"
sums f.img f.img.sim >f.md5

# ---- 6. stale and unwritable sidecars ----
# A NOR image's sidecar left next to a NAND UBI image of the same size.
U flash create n.img --nor --size 16MiB >/dev/null
cp f.img n.img                      # replaced: same size, other content
sums n.img n.img.sim >n.md5
expect 1 'sidecar n.img.sim does not describe n.img.*remove n.img.sim' "format with a stale sidecar" -- \
	U format n.img -q
expect 1 'sidecar n.img.sim does not describe n.img' "ubi info with a stale sidecar" -- U ubi info n.img
expect 1 'sidecar n.img.sim does not describe n.img' "flash info with a stale sidecar" -- U flash info n.img
same "stale sidecar" n.md5
# ... and next to an image of another size.
head -c 8MiB /dev/zero | tr '\0' '\377' >n.img
sums n.img n.img.sim >n.md5
expect 1 'written for a 16777216-byte image, n.img has 8388608 bytes' "stale sidecar, other size" -- \
	U ubi mkvol n.img -N x -S 1
same "stale sidecar, other size" n.md5
# The image with its sidecar, copied elsewhere (new inode, new mtime), is
# still the same flash.
cp f.img c.img && cp f.img.sim c.img.sim
U ubi read c.img -N data -o c.out || fail "a copied image with its sidecar is refused"
cmp -s c.out data.before || fail "copied image reads differently"
# The sidecar cannot be written: the command fails before the image changes.
mkdir f.img.sim.tmp
expect 1 'cannot create the sidecar .*f.img.sim.tmp.*Is a directory' "mkvol with an unwritable sidecar" -- \
	U ubi mkvol f.img -N y -S 1
same "unwritable sidecar" f.md5
expect 1 'cannot create the sidecar' "flash erase with an unwritable sidecar" -- U flash erase f.img --peb 100
same "unwritable sidecar (erase)" f.md5
rmdir f.img.sim.tmp
U ubi mkvol f.img -N y -S 1 >/dev/null || fail "mkvol once the sidecar is writable"

finish safe_write
cd / && rm -rf "$S"
