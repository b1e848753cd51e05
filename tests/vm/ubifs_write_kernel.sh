#!/bin/bash
# The Linux kernel judges ubikit's write path (label vm): a mkfs.ubifs image
# is changed by ubikit (random operations of the reference model,
# tests/ubifs/ubifs_write_tool), ubinized, and mounted by the kernel in the
# VM with its UBIFS self-checks on (--ubifs-checks: index, LPT against a
# scan, every inode's link count and size, directory and xattr sizes). The
# tree the kernel shows must equal the model's manifest, with no UBIFS error
# or warning.
#   MODE=journal (default): ubikit unmounts without a commit, the kernel
#                 replays ubikit's journal.
#   MODE=commit:  ubikit commits (index, LPT, master) before unmounting.
set -euo pipefail
S=${UBIKIT_SCRATCH:?}
: "${UBIKIT_SRC:?}" "${WRITE_TOOL:?}"
VM=${LINUX_VM:-$UBIKIT_SRC/tests/vm/linux-ubifs-vm}
MODE=${MODE:-journal}
SEED=${SEED:-7}
OPS=${OPS:-600}
ROUNDS=${ROUNDS:-1}
SYNC_EVERY=${SYNC_EVERY:-0} # commit mode: also a commit after every that many operations
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$S"
mkdir -p "$S/empty" "$S/in"
mkfs.ubifs -r "$S/empty" -m 2048 -e 129024 -c 420 -x lzo -o "$S/fs.img" || fail "mkfs.ubifs"
"$WRITE_TOOL" "$S/fs.img" "$SEED" "$OPS" "$MODE" "$S/in/expected" "$ROUNDS" "$SYNC_EVERY" || fail "ubikit workload"
size=$((420 * 129024)) # the volume the file system was resized to
cat >"$S/ubi.ini" <<INI
[ubifs]
mode=ubi
image=$S/fs.img
vol_id=0
vol_type=dynamic
vol_name=rootfs
vol_size=$size
INI
ubinize -o "$S/ubi.img" -m 2048 -p 128KiB -s 512 "$S/ubi.ini" || fail "ubinize"
cp "$UBIKIT_SRC/tests/vm/ubifs_write_manifest.sh" "$S/in/manifest.sh"
set +e
"$VM" run --flash "$S/ubi.img" --nand 2048:64:128KiB:64MiB --ubifs-checks --strict --timeout 300 \
	--copy-in "$S/in" --out "$S/vm" \
	--cmd "sh \$IN/in/manifest.sh \$MNT/w$SEED >\$RESULTS/kernel.manifest; cmp -s \$RESULTS/kernel.manifest \$IN/in/expected" \
	>"$S/vm.log" 2>&1
rc=$?
set -e
if [ $rc != 0 ]; then
	cat "$S/vm.log" >&2
	[ -f "$S/vm/files/kernel.manifest" ] && diff -u "$S/in/expected" "$S/vm/files/kernel.manifest" | head -50 >&2
	fail "kernel run exited $rc (123: kernel error/warning, 1: tree differs)"
fi
grep -i 'ubifs' "$S/vm/kernel-ubi.txt" | head -20 || true
echo "PASS: the kernel replays/mounts ubikit's $MODE ($OPS ops, seed $SEED) with --ubifs-checks, tree as the model"
