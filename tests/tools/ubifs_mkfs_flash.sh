#!/bin/bash
# `ubikit mkfs FLASH --vol-name NAME` (issue 11: straight onto a flash
# volume) and the rest of mkfs's command line:
#  - a simulator flash with an empty UBI: a volume created of -c LEBs, one
#    of all the free space, then the first replaced by another tree (other
#    compressor); each extracts equal to its source, the other volume
#    untouched;
#  - a NAND dump with OOB (no sidecar) around a factory-bad block, and a
#    UBI image (ubinize output, dump without OOB) with an empty volume:
#    the volume is filled in place, the bad block kept, no sidecar left;
#  - errors, each leaving the flash byte-identical: a tree that does not
#    fit the volume (with the LEBs it needs), an unreadable file or
#    directory (named), a static volume, -e/-m that are not the flash's,
#    no room for a new volume, --vol-size on an existing volume, a bare
#    UBIFS image, FLASH with -o, no --vol-name;
#  - --vol-id/--vol-size: the volume ubimkvol -n/-s would make (size rounded
#    up to LEBs); an ID in use, no room, too small and a name over 127
#    bytes refused, the flash unchanged;
#  - every mkfs.ubifs flag of the issue accepted (and seen in the
#    superblock where it lands there) or refused by name.
# The kernel mounts a FLASH-written volume in tests/vm/ubifs_mkfs_kernel.sh.
set -euo pipefail
. "$(dirname "$0")/ubifs_lib.sh"
need ubinize python3
S=${UBIKIT_SCRATCH:?}
rm -rf "$S"
mkdir -p "$S"
export TMPDIR_M=$S
U() { "$UBIKIT" "$@"; }
make_tree "$S/a"
rm -rf "$S/a/many" && mkdir "$S/a/many" && (cd "$S/a/many" && seq -f 'e%03g' 0 99 | xargs touch)
touch -d '2022-03-04 05:06:07' "$S/a/many" "$S/a"
mkdir -p "$S/b/d"
for i in $(seq 1 200); do echo "second tree $i"; done >"$S/b/d/text"
head -c 200000 /dev/urandom >"$S/b/rand"
ln -s d/text "$S/b/link"
touch -d '2021-01-01 00:00:00' "$S/b/d" "$S/b"

check_vol() { # FLASH VOL SRC WHAT
	rm -rf "$S/x"
	expect_ok U extract -q --vol-name "$2" "$1" -o "$S/x"
	compare_trees "$3" "$S/x" "$4"
}
sum() { { cat "$1" && { [ ! -e "$1.sim" ] || cat "$1.sim"; }; } | md5sum; }
unchanged() { # FLASH MD5 WHAT
	[ "$(sum "$1")" = "$2" ] || fail "$3: the flash changed"
}

# 1. simulator flash, empty UBI: create two volumes, replace one
U flash create "$S/sim.img" --size 32MiB --page 2048 --oob 64 --peb 128KiB --subpage 512 >/dev/null
U format "$S/sim.img" -y -q >/dev/null
expect_ok U mkfs "$S/sim.img" --vol-name data -r "$S/a" -c 60
grep -q '^mkfs: created volume 0 "data" (60 LEBs of 129024 bytes)' "$T_OUT" || fail "sim: summary: $(cat "$T_OUT")"
expect_ok U mkfs "$S/sim.img" --vol-name root -r "$S/b" -x zstd -v
grep -qE 'volume: +1 "root" \([0-9]+ LEBs, created\)' "$T_OUT" || fail "sim: -v: $(cat "$T_OUT")"
check_vol "$S/sim.img" data "$S/a" "sim data (created, -c 60)"
check_vol "$S/sim.img" root "$S/b" "sim root (created, all free space)"
expect_ok U info --vol-name root "$S/sim.img"
grep -q 'compr.*zstd\|zstd' "$T_OUT" || fail "sim root: not zstd"
expect_ok U mkfs "$S/sim.img" --vol-name data -r "$S/b" -x zlib
grep -q '^mkfs: replaced volume 0 "data" (60 LEBs' "$T_OUT" || fail "sim: replace summary: $(cat "$T_OUT")"
check_vol "$S/sim.img" data "$S/b" "sim data (replaced)"
check_vol "$S/sim.img" root "$S/b" "sim root (after data was replaced)"
echo "ok: simulator flash (create -c, create all, replace)"

# errors on the simulator flash: nothing changes
s0=$(sum "$S/sim.img")
head -c 12M /dev/urandom >"$S/b/huge" 2>/dev/null
expect_fail 1 "does not fit: it needs [0-9]+ LEBs, the maximum is 60 \(the volume's size\)" \
	U mkfs "$S/sim.img" --vol-name data -r "$S/b"
rm -f "$S/b/huge"
unchanged "$S/sim.img" "$s0" "a tree too big"
expect_fail 1 "no room for a new volume 'new': [0-9]+ LEBs, UBIFS needs at least 17" \
	U mkfs "$S/sim.img" --vol-name new -r "$S/b"
expect_fail 1 "-e 126976 does not match the LEB size of volume 'data' \(129024\)" \
	U mkfs "$S/sim.img" --vol-name data -r "$S/b" -e 126976
expect_fail 1 "-m 4096 does not match the flash's min. I/O unit \(2048\)" \
	U mkfs "$S/sim.img" --vol-name data -r "$S/b" -m 4096
expect_fail 1 "--vol-size and --vol-id only apply to a volume mkfs creates" \
	U mkfs "$S/sim.img" --vol-name data -r "$S/b" --vol-size 1MiB
expect_fail 1 "bad root directory .*nonexistent" U mkfs "$S/sim.img" --vol-name data -r "$S/nonexistent"
printf '/dev d 755 0 0\n/bad\n' >"$S/bad.tab"
expect_fail 1 "bad.tab line 2 does not parse" U mkfs "$S/sim.img" --vol-name data -r "$S/b" -D "$S/bad.tab"
if is_root && command -v setpriv >/dev/null; then
	mkdir -p "$S/unread/d"
	echo secret >"$S/unread/d/secret"
	chmod 000 "$S/unread/d/secret"
	chmod 777 "$S" "$S/sim.img" "$S/sim.img.sim"
	expect_fail 1 "cannot read '.*unread/d/secret': Permission denied" \
		setpriv --reuid=65534 --regid=65534 --clear-groups "$UBIKIT" mkfs "$S/sim.img" --vol-name data -r "$S/unread"
	# a directory that cannot be listed: refused by name, as mkfs.ubifs refuses it
	rm -f "$S/unread/d/secret"
	chmod 000 "$S/unread/d"
	if setpriv --reuid=65534 --regid=65534 --clear-groups mkfs.ubifs -r "$S/unread" -m 2048 -e 129024 -c 60 \
		-o "$S/nobody.img" >/dev/null 2>&1; then
		fail "mkfs.ubifs read a directory it may not list (test is wrong)"
	fi
	expect_fail 1 "cannot read directory '.*unread/d': Permission denied" \
		setpriv --reuid=65534 --regid=65534 --clear-groups "$UBIKIT" mkfs "$S/sim.img" --vol-name data -r "$S/unread"
	chmod 755 "$S/unread/d"
fi
unchanged "$S/sim.img" "$s0" "the failed runs"
expect_fail 2 "needs --vol-name NAME" U mkfs "$S/sim.img" -r "$S/b"
expect_fail 2 "FLASH .* and -o exclude each other" U mkfs "$S/sim.img" --vol-name data -r "$S/b" -o "$S/e.img"
expect_fail 2 "--kind, --oob, --with-oob and --no-oob describe a FLASH argument" \
	U mkfs -r "$S/b" -m 2048 -e 126976 -c 100 --with-oob -o "$S/e.img"
expect_fail 2 "unexpected argument \"extra\"" U mkfs "$S/sim.img" extra --vol-name data
unchanged "$S/sim.img" "$s0" "the refused command lines"
echo "ok: simulator flash errors (flash unchanged)"

# 1b. --vol-id and --vol-size on a fresh simulator flash: the volume as
# ubimkvol -n ID -s SIZE makes it (SIZE rounded up to whole LEBs); refusals
# (an ID in use, no room, too small, a name over 127 bytes) change nothing
U flash create "$S/vs.img" --size 32MiB --page 2048 --oob 64 --peb 128KiB --subpage 512 >/dev/null
U format "$S/vs.img" -y -q >/dev/null
expect_ok U mkfs "$S/vs.img" --vol-name sized -r "$S/b" --vol-id 5 --vol-size 3MiB
lebs=$(((3 * 1048576 + 129024 - 1) / 129024))
grep -q "^mkfs: created volume 5 \"sized\" ($lebs LEBs of 129024 bytes)" "$T_OUT" || fail "--vol-size: $(cat "$T_OUT")"
expect_ok U ubi info "$S/vs.img"
grep -A5 '^Volume ID: *5 ' "$T_OUT" | grep -q "^Size: *$lebs LEBs" || fail "--vol-size: ubi info: $(cat "$T_OUT")"
check_vol "$S/vs.img" sized "$S/b" "--vol-id 5 --vol-size 3MiB"
s2=$(sum "$S/vs.img")
expect_fail 1 "cannot create volume 'other' with ID 5: volume 5 'sized' exists" \
	U mkfs "$S/vs.img" --vol-name other -r "$S/b" --vol-id 5
expect_fail 1 "no room for a new volume 'big' of [0-9]+ LEBs: UBI has [0-9]+ PEBs available" \
	U mkfs "$S/vs.img" --vol-name big -r "$S/b" --vol-size 100MiB
expect_fail 1 "too small" U mkfs "$S/vs.img" --vol-name small -r "$S/b" --vol-size 1MiB
expect_fail 1 "the volume name is longer than 127 bytes" \
	U mkfs "$S/vs.img" --vol-name "$(printf 'n%.0s' $(seq 1 128))" -r "$S/b"
expect_fail 1 "--vol-size and --vol-id only apply to a volume mkfs creates" \
	U mkfs "$S/vs.img" --vol-name sized -r "$S/b" --vol-id 6
expect_fail 1 "too small for a new volume 'tiny': 10 LEBs, UBIFS needs at least 17" \
	U mkfs "$S/vs.img" --vol-name tiny -r "$S/b" -c 10
expect_fail 1 "cannot create a temporary file in $S/no-such-dir" \
	env TMPDIR="$S/no-such-dir" "$UBIKIT" mkfs "$S/vs.img" --vol-name sized -r "$S/b"
unchanged "$S/vs.img" "$s2" "the refused --vol-id/--vol-size runs"
# -c below the existing volume's size, the temporary file in TMPDIR: the
# tree as given, no temporary file left
mkdir -p "$S/tmpd"
expect_ok env TMPDIR="$S/tmpd" "$UBIKIT" mkfs "$S/vs.img" --vol-name sized -r "$S/a" -c 24 -m 2048
[ -z "$(ls -A "$S/tmpd")" ] || fail "TMPDIR: left behind: $(ls -A "$S/tmpd")"
check_vol "$S/vs.img" sized "$S/a" "-c 24 in a volume of $lebs LEBs"
echo "ok: --vol-id, --vol-size (as ubimkvol), refusals"

# 2. NAND dump with OOB around a bad block, no sidecar
U flash create "$S/nand.img" --size 16MiB --page 4096 --oob 224 --peb 256KiB --subpage 4096 --with-oob >/dev/null
U flash inject "$S/nand.img" bad --peb 3 >/dev/null
U format "$S/nand.img" -y -q >/dev/null
rm -f "$S/nand.img.sim"
size0=$(stat -c %s "$S/nand.img")
expect_ok U mkfs "$S/nand.img" --vol-name rootfs -r "$S/a" -x lzo
[ ! -e "$S/nand.img.sim" ] || fail "nand-oob: a sidecar was left behind"
[ "$(stat -c %s "$S/nand.img")" = "$size0" ] || fail "nand-oob: the dump changed size"
check_vol "$S/nand.img" rootfs "$S/a" "NAND dump with OOB"
expect_ok U info "$S/nand.img"
grep -qi 'bad' "$T_OUT" || fail "nand-oob: the bad block is not reported any more"
grep -q 'kind: raw NAND dump with OOB' "$T_OUT" || fail "nand-oob: kind: $(head -5 "$T_OUT")"
echo "ok: NAND dump with OOB, bad block kept, no sidecar"

# 3. UBI image (ubinize output) with an empty volume and a static one
printf '[e]\nmode=ubi\nvol_id=0\nvol_type=dynamic\nvol_name=empty\nvol_size=%d\n[s]\nmode=ubi\nimage=%s\nvol_id=1\nvol_type=static\nvol_name=st\n' \
	$((80 * 129024)) "$S/b/rand" >"$S/u.ini"
ubinize -o "$S/u.ubi" -p 128KiB -m 2048 -s 512 "$S/u.ini" >/dev/null
s1=$(sum "$S/u.ubi")
expect_fail 1 "volume 1 'st' is static; UBIFS needs a dynamic volume" U mkfs "$S/u.ubi" --vol-name st -r "$S/b"
unchanged "$S/u.ubi" "$s1" "static volume refused"
expect_ok U mkfs "$S/u.ubi" --vol-name empty -r "$S/a" -x zstd -m 2048 -e 129024 -c 200
check_vol "$S/u.ubi" empty "$S/a" "UBI image, existing volume, -c 200 > volume"
expect_ok U info --vol-name empty "$S/u.ubi"
grep -qE 'max_leb_cnt: 200' "$T_OUT" || fail "UBI image: max_leb_cnt: $(grep -i leb "$T_OUT")"
expect_ok U mkfs -r "$S/b" -m 2048 -e 129024 -c 100 -o "$S/bare.img"
expect_fail 1 "a bare UBIFS image, not flash with UBI" U mkfs "$S/bare.img" --vol-name x -r "$S/b"
echo "ok: UBI image (existing volume filled, static refused, bare refused)"

# 4. mkfs.ubifs's flags: applied as mkfs.ubifs applies them (the superblock
# fields they set equal those of mkfs.ubifs's image with the same flags),
# or refused by name
G=(-m 2048 -e 126976 -c 300)
SB='^ +(min_io_size|leb_size|max_leb_cnt|max_bud_bytes|log_lebs|lpt_lebs|orph_lebs|jhead_cnt|fanout|default_compr|key_hash|big_lpt|space_fixup|rp_size|fmt_version):'
same_sb() { # what mkfs-args...: our superblock fields == mkfs.ubifs's
	local what=$1
	shift
	expect_ok U mkfs -r "$S/b" "${G[@]}" "$@" -o "$S/f.img"
	expect_ok U info "$S/f.img"
	grep -E "$SB" "$T_OUT" >"$S/sb.ours"
	mkfs.ubifs -r "$S/b" "${G[@]}" "$@" -o "$S/f.mtd.img" >/dev/null 2>&1 || fail "$what: mkfs.ubifs $*"
	expect_ok U info "$S/f.mtd.img"
	grep -E "$SB" "$T_OUT" >"$S/sb.mtd"
	diff -u "$S/sb.mtd" "$S/sb.ours" >&2 || fail "$what: superblock differs from mkfs.ubifs's with $*"
}
same_sb "defaults"
same_sb "-j -R -l -p -k -f -F -x zlib" -j 2MiB -R 1MiB -l 7 -p 3 -k test -f 16 -F -x zlib
same_sb "-x favor_lzo -X -U -y" -x favor_lzo -X 30 -U -y
same_sb "-x zstd, sizes, -d" -x zstd -m 2KiB -e 124KiB -c 20000 -d "$S/b"
same_sb "-x none" -x none
expect_ok U mkfs -q --nosquash-rino-perm -r "$S/b" "${G[@]}" -o "$S/f.img" # older mkfs.ubifs's default, accepted
is_root && chown 1234:99 "$S/b/rand"
expect_ok U mkfs -r "$S/b" "${G[@]}" -U -o "$S/f.img"
expect_ok U ls -l "$S/f.img" /
! grep -vE '^total| 0 +0 ' "$T_OUT" | grep -q . || fail "-U: not every owner is root: $(cat "$T_OUT")"
expect_ok U mkfs -V
grep -q 'mkfs.ubifs compatible' "$T_OUT" || fail "-V"
expect_ok U mkfs -v -r "$S/b" "${G[@]}" -o "$S/f.img"
grep -q 'leb_size: *126976' "$T_OUT" || fail "-v: $(cat "$T_OUT")"
for f in "-g 1:debug level" "-a:inode-number xattrs" "-s x:SELinux" "--selinux=x:SELinux" "-K k:encryption" \
	"-b d:encryption" "-P 4:encryption" "-C aes:encryption" "--key=k:encryption" "--hash-algo=sha256:authentication" \
	"--auth-key=k:authentication" "--auth-cert=c:authentication" "-Q:squashed root" "--squash-rino-perm:squashed root"; do
	flag=${f%%:*} why=${f#*:}
	name=${flag%% *}
	name=${name%%=*}
	# shellcheck disable=SC2086
	expect_fail 2 "option $name is not supported by ubikit mkfs \($why" U mkfs $flag -r "$S/b" "${G[@]}" -o "$S/e.img"
done
expect_fail 2 'bad key hash "r6"' U mkfs -k r6 -r "$S/b" "${G[@]}" -o "$S/e.img"
expect_fail 2 "bad value" U mkfs -f 1 -r "$S/b" "${G[@]}" -o "$S/e.img"
expect_fail 2 "bad value" U mkfs -e 10Mb -r "$S/b" -m 2048 -c 300 -o "$S/e.img"
[ ! -e "$S/e.img" ] || fail "a refused command line left an output file"
echo "ok: every flag accepted and applied, or refused by name"
echo "PASS: ubikit mkfs FLASH and the flags"
