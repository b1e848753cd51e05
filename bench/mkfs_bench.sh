#!/bin/bash
# mkfs_bench.sh [UBIKIT] — `ubikit mkfs` against mkfs.ubifs, side by side
# in one run, on a tree of real files as a Debian system has them: docs
# (/usr/share/doc), man pages (/usr/share/man), locale files
# (/usr/share/locale) and Python modules (/usr/lib/python3*), a fixed
# sample of every Nth file of each (sorted), about 10,000 files / 170 MiB.
# Not a timed test: the figures go to docs/bench.md. Per compressor (lzo,
# zstd, zlib): wall and CPU time and image size of mkfs.ubifs and of ubikit
# mkfs with 1 and 2 threads (best of RUNS, the load average printed with
# each); the 1- and 2-thread images must be byte-identical and both tools'
# images must extract to the same tree.
# Env: SRCS (source dirs copied whole instead of the sample), SCRATCH
# (default /tmp/ubikit-mkfs-bench), GEOMETRY (default NAND 2 KiB:
# -m 2048 -e 126976 -c 4000), RUNS (default 3), COMPRS (default "lzo zstd zlib").
set -euo pipefail
UBIKIT=${1:-$(dirname "$0")/../build-rel/tools/ubikit}
SRCS=${SRCS:-}
W=${SCRATCH:-/tmp/ubikit-mkfs-bench}
GEOMETRY=${GEOMETRY:-"-m 2048 -e 126976 -c 4000"}
RUNS=${RUNS:-3}
COMPRS=${COMPRS:-"lzo zstd zlib"}
command -v mkfs.ubifs >/dev/null || { echo "mkfs.ubifs not installed"; exit 77; }
rm -rf "$W"
# shellcheck source=bench/bench_lib.sh
. "$(dirname "$0")/bench_lib.sh"
real_tree "$W/tree"
SRCS=$REAL_TREE_DESC
files=$(find "$W/tree" -type f | wc -l)
mib=$(du -sm --apparent-size "$W/tree" | cut -f1)
echo "tree: $files files, $mib MiB ($SRCS); $(nproc) CPUs; geometry $GEOMETRY; best of $RUNS"
# warm the page cache once: both tools then read from memory
tar -cf - -C "$W/tree" . >/dev/null
for c in $COMPRS; do
	# shellcheck disable=SC2086
	best_of "mkfs.ubifs -x $c" mkfs.ubifs -r "$W/tree" $GEOMETRY -x $c -o "$W/mtd-$c.img"
	echo "  $(stat -c %s "$W/mtd-$c.img") bytes"
	# shellcheck disable=SC2086
	export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-1700000000} # 1 and N threads must give the same bytes
	best_of "ubikit mkfs -x $c --threads 1" "$UBIKIT" mkfs --threads 1 -r "$W/tree" $GEOMETRY -x $c -o "$W/uk1-$c.img"
	echo "  $(stat -c %s "$W/uk1-$c.img") bytes"
	# shellcheck disable=SC2086
	best_of "ubikit mkfs -x $c --threads 2" "$UBIKIT" mkfs --threads 2 -r "$W/tree" $GEOMETRY -x $c -o "$W/uk-$c.img"
	echo "  $(stat -c %s "$W/uk-$c.img") bytes"
	cmp -s "$W/uk1-$c.img" "$W/uk-$c.img" || echo "  NOTE: 1 thread and 2 threads gave different images"
	awk -v a="$(stat -c %s "$W/mtd-$c.img")" -v b="$(stat -c %s "$W/uk-$c.img")" \
		'BEGIN { printf "  image: ubikit %.2f%% of mkfs.ubifs\n", 100 * b / a }'

	unset SOURCE_DATE_EPOCH
	rm -rf "$W/a" "$W/b"
	"$UBIKIT" mkfs -r "$W/tree" $GEOMETRY -x $c -o "$W/uk-$c.img" >/dev/null # with the source's own times
	"$UBIKIT" extract -q "$W/uk-$c.img" -o "$W/a" && "$UBIKIT" extract -q "$W/mtd-$c.img" -o "$W/b"
	diff -r --no-dereference "$W/a" "$W/b" >/dev/null && echo "  same tree in both images" || echo "  TREES DIFFER"
done
