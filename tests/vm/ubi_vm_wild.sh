#!/bin/bash
# Images from the wild (issue 12), judged by the Linux kernel in the VM
# (tests/vm/linux-ubifs-vm):
#   1  (UBIKIT_LONG_TESTS=1) a ubinize -p 1024 NOR image (1 KiB PEBs): the
#      kernel attaches it on a 1 KiB-eraseblock mtdram; every volume ubikit
#      reads ('ubi read') has the kernel's md5
#   2  Buildroot's minimal autoresize image: the kernel grows the volume and
#      mounts it; 'ubikit extract' of the image as built gives the tree the
#      kernel shows
#   6  the kernel makes files with hostile names (newline, escape, tab,
#      invalid UTF-8) in that file system; ubikit extracts them exactly and
#      'ls -b' escapes them
#   3  the kernel-written flash behind a 1004-byte vendor header and before a
#      second UBI device: 'extract' of each device (--ubi-index, --offset)
#      gives the kernel's tree
set -euo pipefail
: "${UBIKIT:?}" "${UBIKIT_SCRATCH:?}" "${LINUX_VM:?}"
. "$(dirname "$0")/../tools/test_lib.sh"
T_SOFT=1
need ubinize mkfs.ubifs qemu-system-x86_64
rm -rf "$UBIKIT_SCRATCH"; mkdir -p "$UBIKIT_SCRATCH"; cd "$UBIKIT_SCRATCH"

# tree_of DIR: one line per entry (path, type, size, md5 or link target)
tree_of() { # (names with newlines too: NUL-separated, printed with %q)
	(cd "$1" && find . -mindepth 1 -print0 | LC_ALL=C sort -z | while IFS= read -r -d '' p; do
		if [ -L "$p" ]; then printf '%q l %q\n' "$p" "$(readlink "$p")"
		elif [ -d "$p" ]; then printf '%q d\n' "$p"
		else printf '%q f %s %s\n' "$p" "$(stat -c %s "$p")" "$(md5sum < "$p" | cut -d' ' -f1)"; fi
	done)
}
# the same, run by busybox in the VM on $MNT (names without newlines only)
VM_TREE='cd $MNT && find . -mindepth 1 | LC_ALL=C sort | while IFS= read -r p; do
	if [ -L "$p" ]; then echo "$p l $(readlink "$p")"
	elif [ -d "$p" ]; then echo "$p d"
	else echo "$p f $(stat -c %s "$p") $(md5sum < "$p" | cut -d" " -f1)"; fi
done'

mkdir root root/d
echo hello > root/a
seq 1 20000 > root/d/nums
ln -s a root/l
LC_ALL=C awk 'BEGIN { srand(7); for (i = 0; i < 10000; i++) printf "%c", int(rand() * 256) }' > raw.bin

# ---- class 1: 1 KiB PEBs (a second VM boot: with UBIKIT_LONG_TESTS=1; the
# default run checks class 1 against mtd-utils images in ubi_wild_geometry)
if [ "${UBIKIT_LONG_TESTS:-0}" = 1 ]; then
printf '[data]\nmode=ubi\nimage=raw.bin\nvol_id=0\nvol_type=static\nvol_name=data\n[dyn]\nmode=ubi\nimage=raw.bin\nvol_id=1\nvol_size=20KiB\nvol_name=dyn\n' > p1k.ini
ubinize -o p1k.ubi -p 1024 -m 1 p1k.ini >/dev/null 2>&1
for id in 0 1; do
	expect_ok "$UBIKIT" ubi read p1k.ubi -n $id -o v$id.out
	echo "$id $(md5sum < v$id.out | cut -d' ' -f1)"
done > p1k.expect
cmd='for v in /sys/class/ubi/ubi0_*; do id=${v##*_}; echo "$id $(md5sum < /dev/ubi0_$id | cut -d" " -f1)"; done | sort -n > $RESULTS/volumes.txt'
if ! "$LINUX_VM" run --flash p1k.ubi --nor 1KiB:128KiB --no-mount --no-writeback --strict --timeout 300 \
	--out vm1 --cmd "$cmd" > vm1.log 2>&1; then
	fail "1 KiB PEBs: the kernel did not attach:"; tail -20 vm1.log >&2
elif ! diff -u vm1/files/volumes.txt p1k.expect >&2; then
	fail "1 KiB PEBs: ubikit reads other volume contents than the kernel"
else
	echo "class 1: kernel attached 1 KiB PEBs; volumes match"
fi
fi

# ---- classes 2 and 6: minimal autoresize image; names made by the kernel ----
mkfs.ubifs -m 2048 -e 126976 -c 2048 -r root -o br.ubifs
printf '[ubifs]\nmode=ubi\nvol_id=0\nvol_type=dynamic\nvol_name=rootfs\nvol_alignment=1\nvol_flags=autoresize\nimage=br.ubifs\n' > br.ini
ubinize -o br.ubi -m 2048 -p 128KiB -s 2048 br.ini >/dev/null 2>&1
cp br.ubi flash.img
cmd="($VM_TREE) > \$RESULTS/tree.txt"'
cd $MNT && mkdir w && for n in "a
b" "$(printf "e\033[31mred")" "$(printf "t\tab")" "$(printf "bad\377")" "sp ace" "back\\slash"; do echo "$n" > "w/$n"; done
ln -s "$(printf "x\ny")" w/lnk; cd /; sync'
if ! "$LINUX_VM" run --flash flash.img --nand 2048:64:128KiB:16MiB --vid-hdr-offset 2048 --strict --timeout 300 --out vm2 \
	--cmd "$cmd" > vm2.log 2>&1; then
	fail "autoresize: the kernel did not mount the image:"; tail -20 vm2.log >&2
else
	rm -rf x; expect_ok "$UBIKIT" extract -q br.ubi -o x
	tree_of x > br.tree
	diff -u vm2/files/tree.txt br.tree >&2 || fail "autoresize: ubikit's tree of the image as built differs from the kernel's"
	rm -rf k; expect_ok "$UBIKIT" extract -q flash.img -o k
	printf '%s\n' 'a\nb' 'back\\slash' 'bad\377' 'e\033[31mred' 'lnk' 'sp\ ace' 't\tab' > w.expect
	expect_ok "$UBIKIT" ls -b flash.img /w
	diff -u w.expect "$T_OUT" >&2 || fail "kernel-made names: ls -b differs"
	[ "$(LC_ALL=C ls -b k/w)" = "$(cat w.expect)" ] || fail "kernel-made names: extracted names differ: $(LC_ALL=C ls -b k/w)"
	[ "$(cat "k/w/$(printf 'a\nb')")" = "$(printf 'a\nb')" ] || fail "kernel-made names: content of 'a\\nb'"
	[ "$(readlink k/w/lnk)" = "$(printf 'x\ny')" ] || fail "kernel-made names: link target"
	echo "classes 2, 6: kernel tree and kernel-made names match"

	# ---- class 3: the kernel's flash behind a vendor header, then a second device
	mkdir root2; echo second > root2/b
	mkfs.ubifs -m 2048 -e 126976 -c 100 -r root2 -o r2.ubifs
	printf '[fs]\nmode=ubi\nimage=r2.ubifs\nvol_id=0\nvol_size=3MiB\nvol_name=data\n' > r2.ini
	ubinize -o r2.ubi -m 2048 -p 128KiB -Q 4242 r2.ini >/dev/null 2>&1
	# (the kernel's flash ends in erased PEBs: the second device follows them)
	{ printf 'VNDR'; head -c 1000 raw.bin; cat flash.img; head -c 4096 raw.bin; cat r2.ubi; } > chip.bin
	tree_of k > k.tree
	rm -rf x; expect_ok "$UBIKIT" extract -q chip.bin -o x
	[ "$(tree_of x)" = "$(cat k.tree)" ] || fail "chip: device 0 (behind a 1004-byte header) differs from the kernel's tree"
	rm -rf x; expect_ok "$UBIKIT" extract -q --offset 1004 chip.bin -o x
	[ "$(tree_of x)" = "$(cat k.tree)" ] || fail "chip: --offset 1004 differs from the kernel's tree"
	rm -rf x; expect_ok "$UBIKIT" extract -q --ubi-index 1 chip.bin -o x
	[ "$(tree_of x)" = "$(tree_of root2)" ] || fail "chip: --ubi-index 1 differs"
	echo "class 3: both devices of the kernel-made chip dump read"
fi

finish ubi_vm_wild
