#!/bin/bash
# make_powercut_images.sh [CUT...] — let the Linux kernel (tests/vm/linux-ubifs-vm)
# make power-cut images with tests/ubifs/vm_powercut.sh, all in one VM boot:
# for each cut point (ubi:N = UBI's emulation at the N+1st VID header write,
# ubifs:K = UBIFS's torn-write emulation, a random cut per run) a fresh
# UBIFS, the workload, the cut, the dump, and the kernel's next mount of the
# dump (its manifest). Results go to $OUT (default: a new temporary
# directory): NAME.img.gz, NAME.manifest, NAME.log, LIST. Check them through
# the library with UBIKIT_POWERCUT_DIR=$OUT BUILD/tests/ubifs/test_ubifs_replay
# (t_powercut), through the CLI with tests/tools/ubifs_kernel_view.sh.
# With STORE=1 they are also added to tests/data/ubifs/powercut/ (gzip -9)
# and its LIST. Without arguments: the cut points of the stored set (UBIFS's
# cuts are random, so a new run gives other images of the same kind).
# Environment: ROUNDS (workload rounds, default 40), BGWRITE=1 and UBIFS_OPTS
# (see vm_powercut.sh), LINUX_VM.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
VM=${LINUX_VM:-$SRC/tests/vm/linux-ubifs-vm}
OUT=${OUT:-$(mktemp -d)}
GEOM=${GEOM:-2048:64:128KiB:16MiB}
ROUNDS=${ROUNDS:-40}
CUTS=("$@")
if [ ${#CUTS[@]} = 0 ]; then
	CUTS=(ubi:1 ubi:3 ubi:5 ubi:8 ubi:11 ubi:14 ubi:18 ubi:22 ubi:27 ubifs:1 ubifs:2 ubifs:3 ubifs:4 ubifs:5)
fi
mkdir -p "$OUT"
rm -f "$OUT/LIST.new"
rc=0
"$VM" run --flash "$OUT/vm.img" --nand "$GEOM" --format-fresh --no-writeback \
	--timeout $((120 + 150 * ${#CUTS[@]})) --out "$OUT/vm" \
	--copy-in "$SRC/tests/ubifs/vm_powercut.sh" --copy-in "$SRC/tests/tools/ubifs_manifest.sh" \
	--cmd "CUTS='${CUTS[*]}' ROUNDS=$ROUNDS BGWRITE=${BGWRITE:-0} UBIFS_OPTS='${UBIFS_OPTS:-}' sh \$IN/vm_powercut.sh" >"$OUT/vm.log" 2>&1 || rc=$?
# the emulated cuts are kernel errors (123); anything else is a failure
if [ $rc != 0 ] && [ $rc != 123 ]; then
	tail -30 "$OUT/vm.log" >&2
	echo "make_powercut_images: VM run failed ($rc)" >&2
	exit 1
fi
cat "$OUT/vm/script.stdout"
n=0
for c in "${CUTS[@]}"; do
	name=${c/:/-}
	f=$OUT/vm/files/$name
	[ -s "$f.manifest" ] && [ -s "$f.img.gz" ] || { echo "$name: no result" >&2; exit 1; }
	cp "$f.manifest" "$f.log" "$OUT/"
	echo "$name" >>"$OUT/LIST.new"
	gzip -dc "$f.img.gz" | gzip -9 -n >"$OUT/$name.img.gz"
	n=$((n + 1))
done
mv "$OUT/LIST.new" "$OUT/LIST"
rm -f "$OUT/vm.img"
echo "$n cut points in $OUT"
# STORE=1: add these cuts to the stored set (PREFIX names them apart from
# earlier batches: the cut points of UBIFS's emulation are random)
if [ "${STORE:-0}" = 1 ]; then
	DEST=$SRC/tests/data/ubifs/powercut
	mkdir -p "$DEST"
	touch "$DEST/LIST"
	for c in "${CUTS[@]}"; do
		name=${c/:/-}
		to=${PREFIX:-}$name
		cp "$OUT/$name.img.gz" "$DEST/$to.img.gz"
		cp "$OUT/$name.manifest" "$DEST/$to.manifest"
		# the cut and the kernel's recovery lines, for the record
		grep -e vm_powercut -e 'power cut' -e 'emulat' -e recover -e 'UBIFS error' -e 'UBIFS warning' \
			"$OUT/$name.log" | sed 's/^\(next mount: \)\?\[ *[0-9.]*\] //' >"$DEST/$to.kernel.txt" || true
		grep -qx "$to" "$DEST/LIST" || echo "$to" >>"$DEST/LIST"
	done
	du -sh "$DEST"
fi
