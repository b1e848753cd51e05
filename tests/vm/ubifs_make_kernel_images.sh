#!/bin/bash
# ubifs_make_kernel_images.sh [CASE...] — (re)generate the kernel-written
# reference images in tests/data/kernel-images/ with the Linux VM:
#   run 1: --format-fresh, the kernel creates a UBIFS and runs
#          ubifs_kernel_workload.sh (clean unmount, or MODE=unclean: writes
#          stopped by debugfs ro_error, as after a power cut); the flash is
#          dumped back into the image;
#   run 2: the kernel mounts that image again (recovery included, nothing
#          written back) and prints ubifs_manifest.sh of what it sees.
# Stores CASE.img.gz, CASE.manifest (the kernel's view) and CASE.opts (the
# VM geometry options). Not part of the default test run; needs the VM.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
VM=${LINUX_VM:-$SRC/tests/vm/linux-ubifs-vm}
DEST=${DEST:-$SRC/tests/data/kernel-images}
WORK=${WORK:-$(mktemp -d)}
mkdir -p "$DEST" "$WORK"

# name | VM geometry/options | workload mode
CASES="nand2k-clean|--nand 2048:64:128KiB:16MiB|clean
nand2k-unclean|--nand 2048:64:128KiB:16MiB|unclean
nand4k-oob-zstd-unclean|--nand 4096:128:256KiB:64MiB --image-has-oob --mount-opts compr=zstd|unclean
nor-zlib-unclean|--nor 64KiB:16MiB --mount-opts compr=zlib|unclean"

gen() { # name opts mode
	local name=$1 opts=$2 mode=$3 img=$WORK/$1.img rc=0
	rm -rf "$img" "$WORK/$name.run1" "$WORK/$name.run2"
	# shellcheck disable=SC2086
	"$VM" run --flash "$img" $opts --format-fresh --timeout 300 --out "$WORK/$name.run1" \
		--copy-in "$SRC/tests/vm/ubifs_kernel_workload.sh" \
		--cmd "MODE=$mode sh \$IN/ubifs_kernel_workload.sh" >"$WORK/$name.run1.log" 2>&1 || rc=$?
	if [ $rc != 0 ] && ! { [ "$mode" = unclean ] && [ $rc = 123 ]; }; then
		tail -30 "$WORK/$name.run1.log"
		echo "run 1 of $name failed ($rc)" >&2
		return 1
	fi
	grep -q 'rewritten' "$WORK/$name.run1.log" || { echo "$name: image not written back" >&2; return 1; }
	# shellcheck disable=SC2086
	"$VM" run --flash "$img" ${opts/--mount-opts compr=*/} --no-writeback --timeout 300 --out "$WORK/$name.run2" \
		--copy-in "$SRC/tests/tools/ubifs_manifest.sh" \
		--cmd 'sh $IN/ubifs_manifest.sh $MNT' >"$WORK/$name.run2.log" 2>&1 ||
		{ tail -30 "$WORK/$name.run2.log"; echo "run 2 of $name failed" >&2; return 1; }
	cp "$WORK/$name.run2/script.stdout" "$DEST/$name.manifest"
	echo "$opts" >"$DEST/$name.opts"
	grep -E 'UBIFS|recover' "$WORK/$name.run2/kernel-ubi.txt" >"$DEST/$name.kernel-mount.txt" || true
	gzip -9 -n -c "$img" >"$DEST/$name.img.gz"
	echo "$name: $(wc -l <"$DEST/$name.manifest") manifest lines, $(stat -c %s "$DEST/$name.img.gz") bytes gzipped"
}

while IFS='|' read -r name opts mode; do
	if [ $# -gt 0 ]; then
		case " $* " in *" $name "*) ;; *) continue ;; esac
	fi
	gen "$name" "$opts" "$mode"
done <<<"$CASES"
