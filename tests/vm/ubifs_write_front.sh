#!/bin/bash
# The Linux kernel judges what the front ends write (label vm):
#   1. a mkfs.ubifs image (empty) gets a tree with 'ubikit put' (as /put)
#      and the same tree with 'cp -a' through a read-write 'ubikit mount'
#      (as /fuse; skipped without /dev/fuse), is ubinized, and the kernel
#      mounts it with its UBIFS self-checks (--ubifs-checks --strict: no
#      error, no warning): both trees equal the source's manifest
#      (tests/tools/ubifs_manifest.sh: types, modes, owners, sizes, times,
#      md5, targets, devices, xattrs);
#   2. a raw NAND dump with OOB and a factory-bad block (no sidecar) is
#      changed in place by 'ubikit put' and handed to the kernel as it is
#      (--image-has-oob: the bad-block marker becomes a nandsim bad block).
set -euo pipefail
S=${UBIKIT_SCRATCH:?}
: "${UBIKIT_SRC:?}" "${UBIKIT:?}"
VM=${LINUX_VM:-$UBIKIT_SRC/tests/vm/linux-ubifs-vm}
fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }
command -v mkfs.ubifs >/dev/null && command -v ubinize >/dev/null || skip "mtd-utils not installed"
[ -x "$VM" ] || skip "no Linux VM tool"
rm -rf "$S"
mkdir -p "$S/src/d/e" "$S/empty" "$S/in" "$S/mnt"
cd "$S"
pid=
cleanup() {
	local rc=$?
	mountpoint -q "$S/mnt" 2>/dev/null && fusermount3 -u "$S/mnt"
	[ -n "$pid" ] && wait "$pid" 2>/dev/null
	exit $rc
}
trap cleanup EXIT

# ---- the source tree ----
head -c 400000 /dev/urandom >src/random.bin
for i in $(seq 1 5000); do echo "line $i of text"; done >src/text
printf 'hello\n' >src/a
ln src/a src/d/hard
ln -s ../a src/d/sym
ln -s /no/such/target src/dangling
mkfifo src/fifo
truncate -s 700000 src/sparse && printf 'end' >>src/sparse
for i in $(seq 1 150); do printf 'file %d\n' "$i" >"src/d/e/f$i"; done
chmod 04755 src/random.bin
chmod 02750 src/d
chmod 0600 src/a
setfattr -n user.k -v val src/a 2>/dev/null && setfattr -n user.bin -v 0x00ff10 src/text || true
if [ "$(id -u)" = 0 ]; then mknod src/cdev c 4 5 && mknod src/bdev b 8 11; fi
touch -d '2001-02-03 04:05:06' src/d/e/f1 src/text src/d/e src/d src
manifest() { sh "$UBIKIT_SRC/tests/tools/ubifs_manifest.sh" "$1"; }
manifest src >in/expected
cp "$UBIKIT_SRC/tests/tools/ubifs_manifest.sh" in/manifest.sh

# ---- 1. put + FUSE into a bare image, ubinized ----
mkfs.ubifs -r empty -m 2048 -e 129024 -c 420 -x lzo -o fs.img || fail "mkfs.ubifs"
"$UBIKIT" put fs.img src /put || fail "ubikit put"
fuse=0
if [ -c /dev/fuse ] && command -v fusermount3 >/dev/null; then
	"$UBIKIT" mount -f fs.img mnt 2>mount.err &
	pid=$!
	for _ in $(seq 100); do mountpoint -q mnt && break; sleep 0.1; done
	mountpoint -q mnt || { cat mount.err >&2; fail "ubikit mount did not mount"; }
	cp -a src mnt/fuse || fail "cp -a into the FUSE mount"
	fusermount3 -u mnt
	wait $pid || fail "ubikit mount exited $? (final commit)"
	pid=
	fuse=1
else
	echo "note: no /dev/fuse: the FUSE half is not tested"
fi
printf '[ubifs]\nmode=ubi\nimage=%s\nvol_id=0\nvol_type=dynamic\nvol_name=rootfs\nvol_size=%s\n' \
	"$S/fs.img" $((420 * 129024)) >ubi.ini
ubinize -o ubi.img -m 2048 -p 128KiB -s 512 ubi.ini || fail "ubinize"
check='sh $IN/in/manifest.sh $MNT/put >$RESULTS/put.manifest; cmp -s $RESULTS/put.manifest $IN/in/expected || exit 1'
[ $fuse = 1 ] && check="$check"'; sh $IN/in/manifest.sh $MNT/fuse >$RESULTS/fuse.manifest; cmp -s $RESULTS/fuse.manifest $IN/in/expected || exit 1'
set +e
"$VM" run --flash ubi.img --nand 2048:64:128KiB:64MiB --ubifs-checks --strict --timeout 300 \
	--copy-in "$S/in" --out "$S/vm1" --cmd "$check" >vm1.log 2>&1
rc=$?
set -e
if [ $rc != 0 ]; then
	cat vm1.log >&2
	for m in put fuse; do
		[ -f "vm1/files/$m.manifest" ] && diff -u in/expected "vm1/files/$m.manifest" | head -40 >&2
	done
	fail "kernel run 1 exited $rc (123: kernel error/warning, 1: a tree differs)"
fi
echo "ok: the kernel mounts the image 'ubikit put'$([ $fuse = 1 ] && echo " and FUSE cp -a") wrote, trees equal"

# ---- 2. a NAND dump with OOB and a bad block, changed in place ----
"$UBIKIT" flash create nand.img --size 64MiB --page 2048 --oob 64 --peb 128KiB --subpage 512 --with-oob >/dev/null
"$UBIKIT" flash inject nand.img bad --peb 5 >/dev/null
mkfs.ubifs -r empty -m 2048 -e 129024 -c 420 -x zstd -o fs0.img || fail "mkfs.ubifs (2)"
sed "s|$S/fs.img|$S/fs0.img|" ubi.ini >ubi0.ini
ubinize -o ubi0.img -m 2048 -p 128KiB -s 512 ubi0.ini || fail "ubinize (2)"
"$UBIKIT" format nand.img -f ubi0.img -y -q >/dev/null || fail "ubikit format"
rm -f nand.img.sim
"$UBIKIT" put nand.img src /put || fail "ubikit put into the NAND dump"
[ ! -e nand.img.sim ] || fail "a sidecar appeared next to the dump"
check='sh $IN/in/manifest.sh $MNT/put >$RESULTS/put.manifest; cmp -s $RESULTS/put.manifest $IN/in/expected || exit 1'
set +e
"$VM" run --flash nand.img --image-has-oob --nand 2048:64:128KiB:64MiB --ubifs-checks --strict --timeout 300 \
	--copy-in "$S/in" --out "$S/vm2" --cmd "$check" >vm2.log 2>&1
rc=$?
set -e
if [ $rc != 0 ]; then
	cat vm2.log >&2
	[ -f vm2/files/put.manifest ] && diff -u in/expected vm2/files/put.manifest | head -40 >&2
	fail "kernel run 2 exited $rc (123: kernel error/warning, 1: the tree differs)"
fi
grep -q "bad PEBs: 1," vm2/dmesg.txt || fail "the kernel did not see the bad block of the dump"
echo "PASS: the kernel (--ubifs-checks --strict) mounts what put and FUSE wrote, trees equal the source"
