#!/bin/bash
# make_replay_images.sh — regenerate tests/data/ubifs/*: run 1 lets the Linux
# kernel write vm_replay_workload.sh's work onto a fresh UBIFS and stop as at
# a power cut; run 2 mounts the result with the kernel (recovery, orphans) and
# records its view (tests/tools/ubifs_manifest.sh format). Needs the VM.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
VM=${LINUX_VM:-$SRC/tests/vm/linux-ubifs-vm}
DEST=$SRC/tests/data/ubifs
WORK=${WORK:-$(mktemp -d)}
mkdir -p "$DEST"
gen() { # name filler-count geometry...
	local name=$1 filler=$2 rc=0
	shift 2
	if [ -n "$ONLY" ] && [ "$ONLY" != "$name" ]; then return 0; fi
	local img=$WORK/$name.img
	rm -rf "$img" "$WORK/$name.run1" "$WORK/$name.run2"
	"$VM" run --flash "$img" "$@" --format-fresh --timeout 300 --out "$WORK/$name.run1" \
		--copy-in "$SRC/tests/ubifs/vm_replay_workload.sh" \
		--cmd "FILLER=$filler sh \$IN/vm_replay_workload.sh" >"$WORK/$name.run1.log" 2>&1 || rc=$?
	# ro_error makes the kernel log errors at unmount: 123 is expected
	if [ $rc != 0 ] && [ $rc != 123 ]; then
		tail -30 "$WORK/$name.run1.log"
		echo "run 1 of $name failed ($rc)" >&2
		return 1
	fi
	grep -q "ro_error set" "$WORK/$name.run1/script.stdout" || { echo "$name: workload did not finish" >&2; return 1; }
	"$VM" run --flash "$img" "$@" --no-writeback --timeout 300 --out "$WORK/$name.run2" \
		--copy-in "$SRC/tests/tools/ubifs_manifest.sh" \
		--cmd 'sh $IN/ubifs_manifest.sh $MNT' >"$WORK/$name.run2.log" 2>&1 ||
		{ tail -30 "$WORK/$name.run2.log"; echo "run 2 of $name failed" >&2; return 1; }
	cp "$WORK/$name.run2/script.stdout" "$DEST/$name.manifest"
	grep -E 'UBIFS|recover' "$WORK/$name.run2/kernel-ubi.txt" >"$DEST/$name.kernel-mount.txt" || true
	gzip -9 -n -c "$img" >"$DEST/$name.img.gz"
	echo "$name: $(wc -l <"$DEST/$name.manifest") manifest lines, $(stat -c %s "$DEST/$name.img.gz") bytes gzipped"
}
gen replay-nand2k 40 --nand 2048:64:128KiB:16MiB
gen replay-nor 14 --nor 64KiB:16MiB --mount-opts compr=lzo
