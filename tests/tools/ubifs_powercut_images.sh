#!/bin/bash
# Power cuts the Linux kernel made itself (tests/data/ubifs/powercut, made by
# tests/ubifs/make_powercut_images.sh with UBI's and UBIFS's power-cut
# emulation in the VM): for each stored dump, 'ubikit extract' and
# 'ubikit ls -R' must show what the kernel showed at its next mount of that
# dump (its manifest). No VM needed. The library view of every image is
# checked by test_ubifs_replay (t_powercut); here, through the command line,
# four that cover the kinds (a torn tail cut, a wrapped log with buds referred
# to twice, orphans with xattrs, a UBIFS torn-write cut) by default, every one
# with UBIKIT_LONG_TESTS=1 (the listing script is slow: many small processes).
set -euo pipefail
: "${UBIKIT:?}" "${UBIKIT_SRC:?}"
S=${UBIKIT_SCRATCH:?}
D=$UBIKIT_SRC/tests/data/ubifs/powercut
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (owners, device nodes and trusted.* xattrs are compared)"; exit 77; }
rm -rf "$S"
mkdir -p "$S"
n=0 bad=0
if [ "${UBIKIT_LONG_TESTS:-0}" = 1 ]; then
	names=$(cat "$D/LIST")
else
	names="ubi-22 b2-ubifs-9 b3-ubi-4 ubifs-2"
fi
for name in $names; do
	gzip -dc "$D/$name.img.gz" >"$S/img"
	bash "$UBIKIT_SRC/tests/tools/ubifs_kernel_view.sh" "$S/img" "$D/$name.manifest" "$S/w" || bad=$((bad + 1))
	n=$((n + 1))
done
rm -f "$S/img"
[ $n -ge 4 ] || { echo "FAIL: expected at least 4 power-cut images, found $n" >&2; exit 1; }
[ $bad = 0 ] || { echo "FAIL: $bad of $n power-cut images differ from the kernel's view" >&2; exit 1; }
echo "PASS: $n kernel power-cut images read as the kernel reads them"
