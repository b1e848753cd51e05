#!/bin/bash
# Live kernel case (label vm): the Linux VM creates a UBIFS, runs the
# workload and is stopped as at a power cut (ubifs_kernel_workload.sh,
# MODE=unclean), then mounts the result again and prints what it sees
# (recovery included). 'ubikit extract' and 'ubikit ls -R' of the same image
# must show exactly that. Same steps as the stored reference images, made
# fresh with the kernel at hand.
set -euo pipefail
S=${UBIKIT_SCRATCH:?}
: "${UBIKIT:?}" "${UBIKIT_SRC:?}"
. "$(dirname "$0")/../tools/test_lib.sh"
is_root || skip "needs root (owners, devices, trusted.* xattrs compared)"
rm -rf "$S"
mkdir -p "$S/data"
DEST=$S/data WORK=$S/work LINUX_VM=${LINUX_VM:-$UBIKIT_SRC/tests/vm/linux-ubifs-vm} \
	bash "$UBIKIT_SRC/tests/vm/ubifs_make_kernel_images.sh" nand2k-unclean || fail "VM runs failed"
name=nand2k-unclean
gzip -dc "$S/data/$name.img.gz" >"$S/img"
grep -q 'recovery needed' "$S/data/$name.kernel-mount.txt" || fail "the kernel did not need recovery: not an unclean image"
"$UBIKIT" extract -q "$S/img" -o "$S/out" || fail "extract failed"
sh "$UBIKIT_SRC/tests/tools/ubifs_manifest.sh" "$S/out" >"$S/actual"
diff -u "$S/data/$name.manifest" "$S/actual" >&2 || fail "ubikit extract differs from what the kernel showed"
"$UBIKIT" ls -R "$S/img" / | awk '/^$/ { next } /:$/ { d = substr($0, 1, length($0) - 1); if (d == "/") d = ""; next }
	{ print "." d "/" $0 }' | LC_ALL=C sort >"$S/ls.paths"
awk '/^== xattrs/ { exit } /^\.\// { print $1 }' "$S/data/$name.manifest" | LC_ALL=C sort >"$S/kernel.paths"
diff -u "$S/kernel.paths" "$S/ls.paths" >&2 || fail "ubikit ls -R names differ from the kernel's"
echo "PASS: live kernel power-cut image read as the kernel reads it"
