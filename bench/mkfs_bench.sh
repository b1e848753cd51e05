#!/bin/bash
# mkfs_bench.sh [UBIKIT] — `ubikit mkfs` against mkfs.ubifs, side by side
# in one run, on a tree of real files (Python modules, docs, locale data as
# a Debian system has them; about 10,000 files / 170 MiB). Not a timed test:
# the figures go to docs/bench.md. Per compressor (lzo, zstd): wall and CPU
# time and image size of mkfs.ubifs and of ubikit mkfs with 1 thread and
# with one per CPU; the two images must hold the same tree (ubikit extract).
# Env: SRCS (source dirs), SCRATCH (default /tmp/ubikit-mkfs-bench),
# GEOMETRY (default NAND 2 KiB: -m 2048 -e 126976 -c 4000), RUNS (default 1).
set -euo pipefail
UBIKIT=${1:-$(dirname "$0")/../build-rel/tools/ubikit}
SRCS=${SRCS:-"/usr/lib/python3 /usr/share/doc /usr/share/i18n"}
W=${SCRATCH:-/tmp/ubikit-mkfs-bench}
GEOMETRY=${GEOMETRY:-"-m 2048 -e 126976 -c 4000"}
RUNS=${RUNS:-1}
command -v mkfs.ubifs >/dev/null || { echo "mkfs.ubifs not installed"; exit 77; }
rm -rf "$W"
mkdir -p "$W/tree"
for d in $SRCS; do
	[ -d "$d" ] && cp -a "$d" "$W/tree/$(echo "$d" | tr / _)"
done
files=$(find "$W/tree" -type f | wc -l)
mib=$(du -sm --apparent-size "$W/tree" | cut -f1)
echo "tree: $files files, $mib MiB ($SRCS); $(nproc) CPUs; geometry $GEOMETRY"
# warm the page cache once: both tools then read from memory
tar -cf - -C "$W/tree" . >/dev/null
t() { # label, command...: best of RUNS
	local label=$1 best="" cpu=""
	shift
	for _ in $(seq 1 "$RUNS"); do
		/usr/bin/time -f '%e %U %S' -o "$W/time" "$@" >/dev/null 2>"$W/err" || { cat "$W/err"; exit 1; }
		read -r e u s <"$W/time"
		if [ -z "$best" ] || awk "BEGIN{exit !($e < $best)}"; then best=$e cpu=$(awk "BEGIN{print $u + $s}"); fi
	done
	printf '%-28s %7.2f s wall %7.2f s CPU' "$label" "$best" "$cpu"
}
for c in lzo zstd; do
	# shellcheck disable=SC2086
	t "mkfs.ubifs -x $c" mkfs.ubifs -r "$W/tree" $GEOMETRY -x $c -o "$W/mtd-$c.img"
	echo "  $(stat -c %s "$W/mtd-$c.img") bytes"
	# shellcheck disable=SC2086
	export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-1700000000} # 1 and N threads must give the same bytes
	t "ubikit mkfs -x $c --threads 1" "$UBIKIT" mkfs --threads 1 -r "$W/tree" $GEOMETRY -x $c -o "$W/uk1-$c.img"
	echo "  $(stat -c %s "$W/uk1-$c.img") bytes"
	# shellcheck disable=SC2086
	t "ubikit mkfs -x $c" "$UBIKIT" mkfs -r "$W/tree" $GEOMETRY -x $c -o "$W/uk-$c.img"
	echo "  $(stat -c %s "$W/uk-$c.img") bytes"
	cmp -s "$W/uk1-$c.img" "$W/uk-$c.img" || echo "  NOTE: 1 thread and $(nproc) threads gave different images"
	unset SOURCE_DATE_EPOCH
	rm -rf "$W/a" "$W/b"
	"$UBIKIT" mkfs -r "$W/tree" $GEOMETRY -x $c -o "$W/uk-$c.img" >/dev/null # with the source's own times
	"$UBIKIT" extract -q "$W/uk-$c.img" -o "$W/a" && "$UBIKIT" extract -q "$W/mtd-$c.img" -o "$W/b"
	diff -r --no-dereference "$W/a" "$W/b" >/dev/null && echo "  same tree in both images" || echo "  TREES DIFFER"
done
