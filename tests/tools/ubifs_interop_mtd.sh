#!/bin/bash
# Interop matrix: images made by Debian's mkfs.ubifs (+ ubinize) at test time,
# for each compressor and for NAND 2 KiB/128 KiB, NAND 4 KiB/256 KiB and NOR
# geometries, bare and ubinized; 'ubikit extract' must give back the source
# tree (content, modes, hard links, symlinks, devices/fifos, mtimes, sparse
# files). The 100 MiB file is done once (every combination with
# UBIKIT_LONG_TESTS=1).
set -euo pipefail
. "$(dirname "$0")/ubifs_lib.sh"

need mkfs.ubifs ubinize
S=${UBIKIT_SCRATCH:?}
rm -rf "$S"
mkdir -p "$S"
export TMPDIR_M=$S
LONG=${UBIKIT_LONG_TESTS:-0}
# Extract into tmpfs when there is one: creating 10000 files per case is
# the slow part on a busy disk.
OUT=$S/out
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
	OUT=$(mktemp -d /dev/shm/ubifs-interop.XXXXXX)/out
	trap 'rc=$?; rm -rf "$(dirname "$OUT")"; t_on_exit $rc' EXIT
fi

make_tree "$S/tree"
if [ "$LONG" = 1 ]; then
	cp -a "$S/tree" "$S/tree-big" && head -c 100M /dev/urandom >"$S/tree-big/big.bin"
fi

compressors="none lzo zlib"
mkfs.ubifs -x zstd -m 2048 -e 129024 -c 100 -o "$S/probe.img" 2>/dev/null && compressors="$compressors zstd"
rm -f "$S/probe.img"
echo "compressors: $compressors"

# name  mkfs -m  LEB    max LEBs  ubinize -p  -m   -s
geometries="nand2k:2048:129024:400:128KiB:2048:512
nand4k:4096:258048:200:256KiB:4096:1024
nor:8:65408:800:64KiB:1:1"
if [ "$LONG" = 1 ]; then # room for the 100 MiB file in every case
	geometries="nand2k:2048:129024:1200:128KiB:2048:512
nand4k:4096:258048:600:256KiB:4096:1024
nor:8:65408:2400:64KiB:1:1"
fi

run_case() { # geometry-line compressor tree
	local line=$1 comp=$2 tree=$3 name m leb cnt peb um us
	IFS=: read -r name m leb cnt peb um us <<<"$line"
	local tag="$name-$comp" img=$S/$name-$comp.ubifs ubi=$S/$name-$comp.ubi
	local t0=$SECONDS
	mkfs.ubifs -r "$tree" -m "$m" -e "$leb" -c "$cnt" -x "$comp" -o "$img" || fail "$tag: mkfs.ubifs failed"
	cat >"$S/ini" <<-EOF
		[rootfs]
		mode=ubi
		image=$img
		vol_id=0
		vol_type=dynamic
		vol_size=$((leb * cnt))
		vol_name=rootfs
		vol_flags=autoresize
	EOF
	ubinize -o "$ubi" -p "$peb" -m "$um" -s "$us" "$S/ini" || fail "$tag: ubinize failed"
	for form in bare ubi; do
		local f=$img
		[ $form = ubi ] && f=$ubi
		rm -rf "$OUT"
		"$UBIKIT" extract -q "$f" -o "$OUT" 2>"$S/err" || { cat "$S/err"; fail "$tag/$form: extract failed"; }
		compare_trees "$tree" "$OUT" "$tag/$form"
		# sparse file written sparse
		local blocks
		[ -e "$tree/sparse.bin" ] || continue
		blocks=$(stat -c %b "$OUT/sparse.bin")
		[ "$blocks" -lt 1000 ] || fail "$tag/$form: sparse.bin not sparse ($blocks blocks)"
	done
	echo "ok $tag (bare + ubinized) in $((SECONDS - t0)) s"
	rm -rf "$OUT" "$img" "$ubi"
}

while read -r g; do
	for c in $compressors; do
		if [ "$LONG" = 1 ]; then
			run_case "$g" "$c" "$S/tree-big"
		else
			run_case "$g" "$c" "$S/tree"
		fi
	done
done <<<"$geometries"

if [ "$LONG" != 1 ]; then
	# the 100 MiB file once: NAND 2K, lzo, bare and ubinized
	mkdir -p "$S/bigtree/d"
	head -c 100M /dev/urandom >"$S/bigtree/big.bin"
	printf 'small\n' >"$S/bigtree/d/small"
	run_case "nand2k:2048:129024:1000:128KiB:2048:512" lzo "$S/bigtree" 2>&1 | sed 's/^/big: /'
	[ "${PIPESTATUS[0]}" = 0 ] || fail "100 MiB case"
fi
echo "PASS: interop matrix"
