#!/bin/bash
# make_xattr_del_image.sh — regenerate tests/data/ubifs/xattr-del.*: run 1
# lets the kernel run vm_xattr_del_workload.sh on a fresh UBIFS (a file with
# three xattrs committed, then deleted in the journal only, then a power
# cut); run 2 mounts the result with the kernel and records its view
# (tests/tools/ubifs_manifest.sh format). Needs the VM.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
VM=${LINUX_VM:-$SRC/tests/vm/linux-ubifs-vm}
DEST=$SRC/tests/data/ubifs
if [ -z "${WORK:-}" ]; then
	WORK=$(mktemp -d)
	trap 'rm -rf "$WORK"' EXIT
fi
img=$WORK/xattr-del.img
geo=(--nand 2048:64:128KiB:16MiB)
rc=0
"$VM" run --flash "$img" "${geo[@]}" --format-fresh --timeout 300 --out "$WORK/run1" \
	--copy-in "$SRC/tests/ubifs/vm_xattr_del_workload.sh" \
	--cmd 'sh $IN/vm_xattr_del_workload.sh' >"$WORK/run1.log" 2>&1 || rc=$?
if [ $rc != 0 ] && [ $rc != 123 ]; then tail -30 "$WORK/run1.log"; exit 1; fi
grep -q "ro_error set" "$WORK/run1/script.stdout"
"$VM" run --flash "$img" "${geo[@]}" --no-writeback --timeout 300 --out "$WORK/run2" \
	--copy-in "$SRC/tests/tools/ubifs_manifest.sh" \
	--cmd 'sh $IN/ubifs_manifest.sh $MNT' >"$WORK/run2.log" 2>&1 || { tail -30 "$WORK/run2.log"; exit 1; }
cp "$WORK/run2/script.stdout" "$DEST/xattr-del.manifest"
grep -E 'UBIFS|recover' "$WORK/run2/kernel-ubi.txt" >"$DEST/xattr-del.kernel-mount.txt" || true
gzip -9 -n -c "$img" >"$DEST/xattr-del.img.gz"
echo "xattr-del: $(wc -l <"$DEST/xattr-del.manifest") manifest lines, $(stat -c %s "$DEST/xattr-del.img.gz") bytes gzipped"
