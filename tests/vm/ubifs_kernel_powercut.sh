#!/bin/bash
# Live power cuts (label vm): the Linux VM makes fresh power-cut dumps with
# tests/ubifs/make_powercut_images.sh (UBI's emulation at a VID header write,
# UBIFS's torn-write emulation, in the middle of a workload that commits
# often, deletes files with xattrs and keeps orphans), mounts each dump again
# and records its view. ubikit's view of each dump (extract, ls -R) must be
# the same. Short by default (2 cut points, about a minute); with
# UBIKIT_LONG_TESTS=1 many more (UBIKIT_POWERCUTS overrides the list).
set -euo pipefail
: "${UBIKIT:?}" "${UBIKIT_SRC:?}"
S=${UBIKIT_SCRATCH:?}
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (owners, devices, trusted.* xattrs compared)"; exit 77; }
rm -rf "$S"
mkdir -p "$S"
if [ -n "${UBIKIT_POWERCUTS:-}" ]; then
	cuts=($UBIKIT_POWERCUTS)
	rounds=${ROUNDS:-40}
elif [ "${UBIKIT_LONG_TESTS:-0}" = 1 ]; then
	cuts=($(seq -f 'ubi:%g' 2 3 44) $(seq -f 'ubifs:%g' 1 16))
	rounds=40
else
	cuts=(ubi:4 ubifs:1)
	rounds=8
fi
OUT=$S/gen ROUNDS=$rounds LINUX_VM=${LINUX_VM:-$UBIKIT_SRC/tests/vm/linux-ubifs-vm} \
	bash "$UBIKIT_SRC/tests/ubifs/make_powercut_images.sh" "${cuts[@]}" || { echo "FAIL: VM runs failed" >&2; exit 1; }
n=0 bad=0
for c in "${cuts[@]}"; do
	name=${c/:/-}
	gzip -dc "$S/gen/$name.img.gz" >"$S/img"
	bash "$UBIKIT_SRC/tests/tools/ubifs_kernel_view.sh" "$S/img" "$S/gen/$name.manifest" "$S/w" || {
		bad=$((bad + 1))
		cp "$S/gen/$name.img.gz" "$S/gen/$name.manifest" "$S/" # kept for a regression case
	}
	n=$((n + 1))
done
rm -f "$S/img"
[ $bad = 0 ] || { echo "FAIL: $bad of $n fresh power-cut dumps differ from the kernel's view (kept in $S)" >&2; exit 1; }
echo "PASS: $n fresh kernel power cuts read as the kernel reads them"
