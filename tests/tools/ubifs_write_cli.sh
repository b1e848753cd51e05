#!/bin/bash
# The commands that change an image without FUSE (put, mkdir, rm, mv, ln,
# chmod, setfattr), on the four kinds of image users bring: a bare
# mkfs.ubifs image, a ubinized image, a simulator flash and a raw NAND dump
# with OOB around a factory-bad block (no sidecar). The same operations are
# done with coreutils on a host copy; 'ubikit extract' of each changed image
# must equal that host tree (contents, types, modes, owners, file times,
# hard-link counts, symlink targets, devices, xattrs; directory times
# left out: they are "now" on both sides). Also: the bad block stays bad,
# no sidecar appears next to the dump, a bare image grows within
# max_leb_cnt, errors read like coreutils' with exit 1, usage errors exit 2,
# and a failed command leaves the other changes committed.
set -euo pipefail
. "$(dirname "$0")/ubifs_lib.sh"
need mkfs.ubifs ubinize getfattr setfattr
S=${UBIKIT_SCRATCH:?}
rm -rf "$S"
mkdir -p "$S"
cd "$S"
U() { "$UBIKIT" "$@"; }

# ---- the source trees ----
mkdir -p base/keep src/d/e src2
printf 'base file\n' >base/keep/old
printf 'tmp\n' >base/gone
touch -d '2005-05-05 05:05:05' base/keep/old # (mkfs.ubifs keeps whole seconds)
head -c 200000 /dev/urandom >src/random.bin
for i in $(seq 1 2000); do echo "line $i"; done >src/text
printf 'hello\n' >src/a
ln src/a src/d/hard
ln -s ../a src/d/sym
ln -s /no/such/target src/dangling
mkfifo src/fifo
truncate -s 300000 src/sparse && printf 'tail' >>src/sparse
chmod 0640 src/a
chmod 02750 src/d
touch -d '2001-02-03 04:05:06.123456789' src/d/e src/text
xattrs=1
setfattr -n user.k -v val src/a 2>/dev/null || xattrs=0
[ $xattrs = 1 ] && setfattr -n user.bin -v 0x00ff10 src/text
devs=0
if is_root; then mknod src/cdev c 10 229 && mknod src/bdev b 8 1 && devs=1; fi
printf 'one\n' >src2/one
printf 'two\n' >src2/two
touch -d '2010-01-01 00:00:00' src2/one

# Directory mtimes are left out (changed "now" on both sides), and so are
# the times of the symlinks ln -s makes ("now").
snap() {
	sh "$UBIKIT_SRC/tests/tools/ubifs_manifest.sh" "$1" |
		awk '$2 == "d" { NF-- } $1 == "./a/sl" || $1 == "./a/b/sl2" { $8 = "-" } { print }'
	echo "== mtimes to the nanosecond"
	(cd "$1" && find . ! -type d ! -path ./a/sl ! -path ./a/b/sl2 -printf '%p %T@\n' | LC_ALL=C sort)
}

# ---- the operations: host (coreutils) and image (ubikit) ----
host_ops() {
	local h=$1
	cp -a src "$h/in"
	mkdir -p "$h/a/b/c"
	mkdir "$h/x"
	cp -a src2/one "$h/a/b/file1"
	cp -a src2/one src2/two "$h/x"
	mv "$h/in/d" "$h/a/moved"
	mv "$h/x/two" "$h/x/two.renamed"
	ln "$h/a/b/file1" "$h/a/hl"
	ln -s ../target "$h/a/sl"
	ln -s /abs/path "$h/a/b/sl2"
	chmod 0751 "$h/a/b"
	chmod -R go-w "$h/in"
	chmod u+s "$h/a/b/file1"
	if [ $xattrs = 1 ]; then
		setfattr -n user.foo -v bar "$h/a/b/file1"
		setfattr -x user.k "$h/in/a"
		setfattr -n user.hex -v 0x414243 "$h/x"
	fi
	rm "$h/in/fifo"
	rm -r "$h/a/b/c"
	rm -f "$h/nonexistent"
	rm -r "$h/gone"
}
image_ops() {
	local img=$1
	expect_ok U put "$img" src /in
	expect_ok U mkdir -p "$img" /a/b/c
	expect_ok U mkdir "$img" /x
	expect_ok U put "$img" src2/one /a/b/file1
	expect_ok U put "$img" src2/one src2/two /x
	expect_ok U mv "$img" /in/d /a/moved
	expect_ok U mv "$img" /x/two /x/two.renamed
	expect_ok U ln "$img" /a/b/file1 /a/hl
	expect_ok U ln -s "$img" ../target /a/sl
	expect_ok U ln -s "$img" /abs/path /a/b/sl2
	expect_ok U chmod "$img" 0751 /a/b
	expect_ok U chmod -R "$img" go-w /in
	expect_ok U chmod "$img" u+s /a/b/file1
	if [ $xattrs = 1 ]; then
		expect_ok U setfattr -n user.foo -v bar "$img" /a/b/file1
		expect_ok U setfattr -x user.k "$img" /in/a
		expect_ok U setfattr -n user.hex -v 0x414243 "$img" /x
	fi
	expect_ok U rm "$img" /in/fifo
	expect_ok U rm -r "$img" /a/b/c
	expect_ok U rm -f "$img" /nonexistent
	expect_ok U rm -r "$img" /gone
}

mkdir host && cp -a base/. host/
host_ops "$S/host"
snap host >host.manifest

check_image() {
	local img=$1 what=$2
	image_ops "$img"
	rm -rf out
	expect_ok U extract -q "$img" -o out
	snap out >img.manifest
	diff -u host.manifest img.manifest >&2 || fail "$what: the image differs from the same operations on the host"
	echo "ok: $what"
}

# 1. bare mkfs.ubifs image (grows up to max_leb_cnt)
mkfs.ubifs -r base -m 2048 -e 129024 -c 200 -x lzo -o bare.ubifs
size0=$(stat -c %s bare.ubifs)
check_image bare.ubifs "bare UBIFS image"
size1=$(stat -c %s bare.ubifs)
[ "$size1" -gt "$size0" ] || fail "bare image did not grow ($size0 -> $size1)"
[ "$size1" -le $((200 * 129024)) ] || fail "bare image grew past max_leb_cnt: $size1"
[ $((size1 % 129024)) = 0 ] || fail "bare image is not whole LEBs: $size1"

# 2. ubinized image
mkfs.ubifs -r base -m 2048 -e 129024 -c 200 -x zstd -o fs2.ubifs
printf '[rootfs]\nmode=ubi\nimage=%s\nvol_id=0\nvol_type=dynamic\nvol_size=%s\nvol_name=rootfs\n' \
	"$S/fs2.ubifs" "$((129024 * 100))" >ubi.ini
ubinize -o img0.ubi -p 128KiB -m 2048 -s 512 ubi.ini
cp img0.ubi img.ubi
check_image img.ubi "ubinized image"
[ ! -e img.ubi.sim ] || fail "a sidecar appeared next to the ubinized image"

# 3. simulator flash
U flash create sim.img --size 32MiB --page 2048 --oob 64 --peb 128KiB --subpage 512 >/dev/null
U format sim.img -f img0.ubi -y -q >/dev/null
check_image sim.img "simulator flash"
expect_ok U info sim.img
grep -q 'kind: ubikit flash simulator' "$T_OUT" || fail "sim: no longer a simulator image"

# 4. raw NAND dump with OOB and a factory-bad block, no sidecar
U flash create nand.img --size 32MiB --page 2048 --oob 64 --peb 128KiB --subpage 512 --with-oob >/dev/null
U flash inject nand.img bad --peb 2 >/dev/null
U format nand.img -f img0.ubi -y -q >/dev/null
rm -f nand.img.sim
nsize=$(stat -c %s nand.img)
check_image nand.img "raw NAND dump with OOB"
[ ! -e nand.img.sim ] || fail "a sidecar appeared next to the NAND dump"
[ "$(stat -c %s nand.img)" = "$nsize" ] || fail "the NAND dump changed size"
expect_ok U info nand.img
grep -q 'kind: raw NAND dump with OOB' "$T_OUT" || fail "nand: no longer detected as a dump with OOB"
grep -q 'bad_pebs: 1' "$T_OUT" || { cat "$T_OUT" >&2; fail "nand: the bad block is not bad any more"; }
# the bad block's marker (OOB byte 0 of its first page) is untouched
marker=$(od -An -tx1 -j $((2 * 64 * (2048 + 64) + 2048)) -N1 nand.img | tr -d ' ')
[ "$marker" != ff ] || fail "nand: bad-block marker of PEB 2 erased"

# ---- put -U: owners root (as mkfs.ubifs -U); without it the host's ----
if is_root; then
	printf 'owned\n' >owned && chown 1234:4321 owned
	expect_ok U put bare.ubifs owned /owned
	expect_ok U put -U bare.ubifs owned /squashed
	expect_ok U ls -l bare.ubifs /
	grep -Eq '^-rw-r--r-- +1 +1234 +4321 .* owned$' "$T_OUT" || { cat "$T_OUT" >&2; fail "put: owner not kept"; }
	grep -Eq '^-rw-r--r-- +1 +0 +0 .* squashed$' "$T_OUT" || { cat "$T_OUT" >&2; fail "put -U: owner not root"; }
fi

# ---- errors: as coreutils, exit 1; usage exit 2; other work still committed ----
expect_fail 1 "cannot remove '/a': Is a directory" U rm bare.ubifs /a
expect_fail 1 "cannot create directory '/x': File exists" U mkdir bare.ubifs /x
expect_fail 1 "cannot move '/nope' to '/y': No such file or directory" U mv bare.ubifs /nope /y
expect_fail 1 "cannot stat 'no-such-host-file'" U put bare.ubifs no-such-host-file /z
expect_fail 1 "target '/x/one' is not a directory" U put bare.ubifs src2/one src2/two /x/one
expect_fail 1 "invalid mode" U chmod bare.ubifs 9999 /x
expect_fail 1 "/x: user.none: No such attribute" U setfattr -x user.none bare.ubifs /x
expect_fail 2 "missing operand" U mkdir bare.ubifs
expect_fail 2 "^usage: ubikit rm" U rm -Z bare.ubifs /x
expect_fail 2 "either -n NAME" U setfattr bare.ubifs /x
expect_fail 1 "cannot open .*missing.img" U mkdir missing.img /x
# one path fails, the others are done and committed
expect_fail 1 "cannot create directory '/none/sub'" U mkdir bare.ubifs /p1 /none/sub /p2
expect_ok U ls bare.ubifs /
grep -qx p1 "$T_OUT" && grep -qx p2 "$T_OUT" || fail "mkdir: the good paths of a partly failed command were lost"
# a read-only image file cannot be changed (as non-root; root may write anyway)
if ! is_root; then
	chmod 0444 bare.ubifs
	expect_fail 1 "bare.ubifs" U mkdir bare.ubifs /q
	chmod 0644 bare.ubifs
fi
echo "PASS: ubifs_write_cli"
