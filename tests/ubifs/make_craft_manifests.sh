#!/bin/bash
# make_craft_manifests.sh — regenerate tests/data/ubifs/craft-*.manifest: the
# Linux kernel's view of each image test_ubifs_craft makes by editing
# replay-nand2k (UBIKIT_CRAFT_WRITE). The kernel mounts each crafted image in
# the VM (recovery, orphans) and records it with tests/tools/ubifs_manifest.sh;
# "MOUNT FAILED" and the kernel's UBIFS errors when it refuses the image.
#   [ONLY='NAME...'] make_craft_manifests.sh BUILD_DIR   (needs the VM: tests/vm/linux-ubifs-vm)
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
B=${1:?usage: make_craft_manifests.sh BUILD_DIR}
VM=${LINUX_VM:-$SRC/tests/vm/linux-ubifs-vm}
DEST=$SRC/tests/data/ubifs
if [ -z "${WORK:-}" ]; then
	WORK=$(mktemp -d)
	trap 'rm -rf "$WORK"' EXIT
fi
UBIKIT_CRAFT_WRITE=$WORK "$B/tests/ubifs/test_ubifs_craft" >/dev/null
for img in "$WORK"/craft-*.img; do
	name=$(basename "$img" .img)
	if [ -n "${ONLY:-}" ] && ! [[ " $ONLY " == *" ${name#craft-} "* ]]; then continue; fi
	rc=0
	"$VM" run --flash "$img" --nand 2048:64:128KiB:16MiB --no-writeback --timeout 300 --out "$WORK/$name.run" \
		--copy-in "$SRC/tests/tools/ubifs_manifest.sh" \
		--cmd 'sh $IN/ubifs_manifest.sh $MNT' >"$WORK/$name.log" 2>&1 || rc=$?
	if [ $rc = 0 ] && [ -s "$WORK/$name.run/script.stdout" ]; then
		cp "$WORK/$name.run/script.stdout" "$DEST/$name.manifest"
	else
		{
			echo "MOUNT FAILED"
			grep -E 'UBIFS error|mount' "$WORK/$name.run/kernel-ubi.txt" 2>/dev/null | sed 's/^\[[^]]*\] //' | head -5 || true
		} >"$DEST/$name.manifest"
	fi
	echo "$name: rc $rc, $(head -1 "$DEST/$name.manifest")"
done
