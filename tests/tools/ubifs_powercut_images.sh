#!/bin/bash
# Power cuts the Linux kernel made itself (tests/data/ubifs/powercut, made by
# tests/ubifs/make_powercut_images.sh with UBI's and UBIFS's power-cut
# emulation in the VM): for each stored dump, 'ubikit extract' and
# 'ubikit ls -R' must show what the kernel showed at its next mount of that
# dump (its manifest). No VM needed.
set -euo pipefail
: "${UBIKIT:?}" "${UBIKIT_SRC:?}"
S=${UBIKIT_SCRATCH:?}
D=$UBIKIT_SRC/tests/data/ubifs/powercut
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (owners, device nodes and trusted.* xattrs are compared)"; exit 77; }
rm -rf "$S"
mkdir -p "$S"
n=0 bad=0
while read -r name; do
	gzip -dc "$D/$name.img.gz" >"$S/img"
	bash "$UBIKIT_SRC/tests/tools/ubifs_kernel_view.sh" "$S/img" "$D/$name.manifest" "$S/w" || bad=$((bad + 1))
	n=$((n + 1))
done <"$D/LIST"
rm -f "$S/img"
[ $n -ge 8 ] || { echo "FAIL: expected at least 8 power-cut images, found $n" >&2; exit 1; }
[ $bad = 0 ] || { echo "FAIL: $bad of $n power-cut images differ from the kernel's view" >&2; exit 1; }
echo "PASS: $n kernel power-cut images read as the kernel reads them"
