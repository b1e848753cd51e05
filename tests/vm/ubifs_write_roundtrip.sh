#!/bin/bash
# ubikit and the Linux kernel take turns on one raw NAND flash (label vm):
#   1. ubikit (its UBI and UBIFS, read-write, on the flash image) runs the
#      reference-model workload under /w$SEED with commits;
#   2. the kernel mounts it with --ubifs-checks, must show the model's tree,
#      and changes the file system elsewhere (/k: files, dirs, renames,
#      removals, xattrs), then unmounts (its commit);
#   3. ubikit mounts the kernel's result read-write, takes /w$SEED as its
#      model, goes on, commits;
#   4. the kernel checks again: /w$SEED as the model says, /k as it left it.
set -euo pipefail
S=${UBIKIT_SCRATCH:?}
: "${UBIKIT_SRC:?}" "${WRITE_TOOL:?}"
VM=${LINUX_VM:-$UBIKIT_SRC/tests/vm/linux-ubifs-vm}
SEED=${SEED:-11}
OPS=${OPS:-400}
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$S"
mkdir -p "$S/empty" "$S/in"
mkfs.ubifs -r "$S/empty" -m 2048 -e 129024 -c 420 -x zstd -o "$S/fs.img" || fail "mkfs.ubifs"
cat >"$S/ubi.ini" <<INI
[ubifs]
mode=ubi
image=$S/fs.img
vol_id=0
vol_type=dynamic
vol_name=rootfs
vol_size=$((420 * 129024))
INI
ubinize -o "$S/ubi.img" -m 2048 -p 128KiB -s 512 "$S/ubi.ini" || fail "ubinize"
head -c $((64 << 20)) /dev/zero | tr '\0' '\377' >"$S/flash"
dd if="$S/ubi.img" of="$S/flash" conv=notrunc status=none
cp "$UBIKIT_SRC/tests/vm/ubifs_write_manifest.sh" "$S/in/manifest.sh"
vm() { # $1 = step name, $2 = script
	set +e
	"$VM" run --flash "$S/flash" --nand 2048:64:128KiB:64MiB --ubifs-checks --strict --timeout 300 \
		--copy-in "$S/in" --out "$S/vm-$1" --cmd "$2" >"$S/vm-$1.log" 2>&1
	local rc=$?
	set -e
	if [ $rc != 0 ]; then
		cat "$S/vm-$1.log" >&2
		[ -f "$S/vm-$1/files/w.manifest" ] && diff -u "$S/in/expected" "$S/vm-$1/files/w.manifest" | head -40 >&2
		fail "kernel step $1 exited $rc"
	fi
}
# 1. ubikit
"$WRITE_TOOL" "nand2k:$S/flash" "$SEED" "$OPS" commit "$S/in/expected" 1 100 || fail "ubikit round 1"
# 2. the kernel checks and changes /k
vm check1 "sh \$IN/in/manifest.sh \$MNT/w$SEED >\$RESULTS/w.manifest && cmp -s \$RESULTS/w.manifest \$IN/in/expected &&
mkdir -p \$MNT/k/a/b && i=0 && while [ \$i -lt 60 ]; do echo kernel file \$i >\$MNT/k/a/f\$i; i=\$((i+1)); done &&
dd if=/dev/urandom of=\$MNT/k/big bs=4096 count=100 2>/dev/null && ln -s a/f1 \$MNT/k/link && ln \$MNT/k/a/f2 \$MNT/k/hard &&
mv \$MNT/k/a/f3 \$MNT/k/a/b/f3 && rm \$MNT/k/a/f4 && setfattr -n user.k -v kernel \$MNT/k/a/f5 &&
truncate -s 5000 \$MNT/k/big && sh \$IN/in/manifest.sh \$MNT/k >\$RESULTS/k.manifest"
cp "$S/vm-check1/files/k.manifest" "$S/in/k.expected"
# 3. ubikit again, on the kernel's flash
WM_RESUME=1 "$WRITE_TOOL" "nand2k:$S/flash" "$SEED" "$OPS" commit "$S/in/expected" 1 100 || fail "ubikit round 2"
# 4. the kernel checks both trees
vm check2 "sh \$IN/in/manifest.sh \$MNT/w$SEED >\$RESULTS/w.manifest && cmp -s \$RESULTS/w.manifest \$IN/in/expected &&
sh \$IN/in/manifest.sh \$MNT/k >\$RESULTS/k.manifest && cmp -s \$RESULTS/k.manifest \$IN/in/k.expected"
echo "PASS: ubikit -> kernel -> ubikit -> kernel on one NAND flash, --ubifs-checks clean, both trees as expected"
