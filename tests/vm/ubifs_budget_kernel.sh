#!/bin/bash
# The Linux kernel judges a file system ubikit filled to ENOSPC (label vm):
# tests/ubifs/ubifs_budget_tool fills a mkfs.ubifs image through the
# library until the budget answers ENOSPC (only ever at a write, create or
# mkdir), checks the result against its model and writes the model's
# manifest and ubikit's statfs. The image is ubinized and mounted by the
# kernel in the VM with its UBIFS self-checks on (--ubifs-checks --strict:
# index, LPT against a scan, every inode): no error or warning, the tree
# must equal the model, and the kernel's `stat -f` free-space estimate is
# compared with ubikit's statfs (f_bfree and f_bavail must be equal:
# both are the kernel's formula on the same LPT; f_blocks is compared
# loosely: kernels differ there, see docs/ubifs.md "Budgeting").
set -euo pipefail
S=${UBIKIT_SCRATCH:?}
: "${UBIKIT_SRC:?}" "${BUDGET_TOOL:?}"
VM=${LINUX_VM:-$UBIKIT_SRC/tests/vm/linux-ubifs-vm}
SEED=${SEED:-5}
MAX_BYTES=${MAX_BYTES:-0} # 0: fill until ENOSPC; else stop there (part-full)
LEBS=${LEBS:-60}
COMPR=${COMPR:-lzo}
fail() { echo "FAIL: $*" >&2; exit 1; }
[ -x "$VM" ] || { echo "SKIP: no VM tool"; exit 77; }
rm -rf "$S"
mkdir -p "$S/empty" "$S/in"
mkfs.ubifs -r "$S/empty" -m 2048 -e 129024 -c "$LEBS" -x "$COMPR" -o "$S/fs.img" || fail "mkfs.ubifs"
"$BUDGET_TOOL" "$S/fs.img" "$SEED" "$S/in/expected" "$S/ubikit.statfs" "$MAX_BYTES" || fail "ubikit fill"
cat >"$S/ubi.ini" <<INI
[ubifs]
mode=ubi
image=$S/fs.img
vol_id=0
vol_type=dynamic
vol_name=rootfs
vol_size=$((LEBS * 129024))
INI
ubinize -o "$S/ubi.img" -m 2048 -p 128KiB -s 512 "$S/ubi.ini" || fail "ubinize"
cat >"$S/in/manifest.sh" <<'SH'
cd "$1" || exit 1
find . ! -name . | while IFS= read -r p; do
	if [ -d "$p" ]; then echo "$p d"; else echo "$p f $(stat -c %s "$p") $(md5sum <"$p" | cut -c1-32)"; fi
done | LC_ALL=C sort
SH
set +e
"$VM" run --flash "$S/ubi.img" --nand 2048:64:128KiB:64MiB --ubifs-checks --strict --timeout 300 \
	--copy-in "$S/in" --out "$S/vm" \
	--cmd "stat -f -c '%b %f %a' \$MNT >\$RESULTS/kernel.statfs; df -k \$MNT >\$RESULTS/df.txt; sh \$IN/in/manifest.sh \$MNT >\$RESULTS/kernel.manifest; cmp -s \$RESULTS/kernel.manifest \$IN/in/expected" \
	>"$S/vm.log" 2>&1
rc=$?
set -e
if [ $rc != 0 ]; then
	cat "$S/vm.log" >&2
	[ -f "$S/vm/files/kernel.manifest" ] && diff -u "$S/in/expected" "$S/vm/files/kernel.manifest" | head -30 >&2
	fail "kernel run exited $rc (123: kernel error/warning, 1: tree differs)"
fi
read -r ub uf ua <"$S/ubikit.statfs"
read -r kb kf ka <"$S/vm/files/kernel.statfs"
echo "statfs 4 KiB blocks: ubikit total $ub free $uf avail $ua; kernel total $kb free $kf avail $ka"
cat "$S/vm/files/df.txt"
[ "$uf" = "$kf" ] || fail "f_bfree: ubikit $uf, kernel $kf"
[ "$ua" = "$ka" ] || fail "f_bavail: ubikit $ua, kernel $ka"
d=$((ub > kb ? ub - kb : kb - ub))
[ "$d" -le 64 ] || fail "f_blocks: ubikit $ub, kernel $kb"
echo "PASS: the kernel mounts ubikit's file system (max bytes $MAX_BYTES) ($(wc -l <"$S/in/expected") entries) with --ubifs-checks, tree as the model, f_bfree/f_bavail equal"
