#!/bin/bash
# extract_bench.sh [UBIKIT] — `ubikit extract` against ubi_reader's
# ubireader_extract_files, side by side in one run (issue 7 part 3). Not a
# timed test: the figures go to docs/bench.md.
#
# Trees (TREES, default "real synthetic"):
#   real       the sample of real files of bench_lib.sh (docs, man pages,
#              locale files, Python modules; about 10,000 files / 170 MiB);
#   synthetic  what `ubikit bench extract` uses: /big (100 MiB of random
#              bytes) and /many/f00000..f09999 (512 random bytes each).
# Per tree and compressor (COMPRS, default "lzo zlib zstd"): mkfs.ubifs +
# ubinize make a UBI image (NAND 2 KiB pages, 128 KiB PEB, sub-page 512);
# each extractor writes it to a directory on tmpfs (SCRATCH, default
# /dev/shm/ubikit-extract-bench), best of RUNS (default 3), wall and CPU
# time; every extracted tree is compared with the source (diff -r). ubikit
# runs with 1 thread (-j 1) and with its default (one per CPU, at most 4).
#
# ubi_reader: UBIREADER names the command (default ubireader_extract_files
# from PATH). Without it, exit 77. It is not packaged by Debian; to run it
# from a source checkout with Debian's python3-lzo in place of lzallright:
#   apt-get install python3-lzo python3-cryptography
#   UBIREADER_SRC=/path/to/ubi_reader bench/extract_bench.sh
# (this script then writes the small lzallright shim itself; PYTHON names
# the interpreter, default /usr/bin/python3).
set -euo pipefail
UBIKIT=${1:-$(dirname "$0")/../build-rel/tools/ubikit}
W=${SCRATCH:-/dev/shm/ubikit-extract-bench}
RUNS=${RUNS:-3}
COMPRS=${COMPRS:-"lzo zlib zstd"}
TREES=${TREES:-"real synthetic"}
command -v mkfs.ubifs >/dev/null && command -v ubinize >/dev/null || { echo "needs mkfs.ubifs and ubinize"; exit 77; }
rm -rf "$W"
mkdir -p "$W"
# shellcheck source=bench/bench_lib.sh
. "$(dirname "$0")/bench_lib.sh"

if [ -n "${UBIREADER_SRC:-}" ]; then
	mkdir -p "$W/shim"
	cat >"$W/shim/lzallright.py" <<'PY'
# lzallright's LZOCompressor.decompress on Debian's python3-lzo (bench only)
import lzo
class LZOCompressor:
    @staticmethod
    def decompress(data, output_size_hint):
        return lzo.decompress(bytes(data), False, output_size_hint)
PY
	# Debian's python3 (its python3-lzo), not another python3 first on PATH
	py=${PYTHON:-/usr/bin/python3}
	UBIREADER="env PYTHONPATH=$UBIREADER_SRC:$W/shim $py -m ubireader.scripts.ubireader_extract_files"
	ver=$(sed -n 's/^version = "\(.*\)"/\1/p' "$UBIREADER_SRC/pyproject.toml" | head -1)
else
	UBIREADER=${UBIREADER:-ubireader_extract_files}
	ver=$($UBIREADER --version 2>/dev/null || echo "?")
fi
read -r -a UR <<<"$UBIREADER"
command -v "${UR[0]}" >/dev/null || { echo "ubi_reader not found (UBIREADER or UBIREADER_SRC)"; exit 77; }

synthetic_tree() { # DEST: the tree of `ubikit bench extract`
	mkdir -p "$1/many"
	python3 - "$1" <<'PY'
import random, sys
root = sys.argv[1]
r = random.Random(1)
with open(root + "/big", "wb") as f:
    for _ in range(100):
        f.write(r.randbytes(1 << 20))
for i in range(10000):
    with open("%s/many/f%05d" % (root, i), "wb") as f:
        f.write(r.randbytes(512))
PY
}

echo "ubi_reader $ver ($UBIREADER); $(nproc) CPUs; best of $RUNS; output on $(df --output=fstype "$W" | tail -1)"
for tree in $TREES; do
	rm -rf "$W/tree"
	if [ "$tree" = real ]; then
		real_tree "$W/tree"
	else
		synthetic_tree "$W/tree"
	fi
	files=$(find "$W/tree" -type f | wc -l)
	mib=$(du -sm --apparent-size "$W/tree" | cut -f1)
	echo "tree $tree: $files files, $mib MiB"
	for c in $COMPRS; do
		mkfs.ubifs -r "$W/tree" -m 2048 -e 129024 -c 4000 -x "$c" -o "$W/fs.ubifs"
		printf '[rootfs]\nmode=ubi\nimage=%s\nvol_id=0\nvol_type=dynamic\nvol_name=rootfs\nvol_flags=autoresize\n' \
			"$W/fs.ubifs" >"$W/u.ini"
		ubinize -o "$W/fs.ubi" -p 128KiB -m 2048 -s 512 "$W/u.ini" >/dev/null 2>&1
		rm -f "$W/fs.ubifs"
		echo "  -x $c: UBI image $(stat -c %s "$W/fs.ubi") bytes"
		BEFORE_EACH='rm -rf "$W/ur"'
		best_of "    ubi_reader" "${UR[@]}" -k -o "$W/ur" "$W/fs.ubi"
		ur_cpu=$BEST_CPU ur_wall=$BEST_WALL
		got=$(find "$W/ur" -mindepth 2 -maxdepth 2 -type d | head -1)
		diff -r --no-dereference "$W/tree" "$got" >/dev/null 2>&1 && echo "  same tree" ||
			echo "  TREE DIFFERS ($(diff -rq --no-dereference "$W/tree" "$got" 2>/dev/null | wc -l) differences)"
		rm -rf "$W/ur"
		for j in 1 default; do
			opt=()
			[ "$j" = default ] || opt=(-j "$j")
			BEFORE_EACH='rm -rf "$W/uk"'
			best_of "    ubikit extract ${opt[*]:-(threads: default)}" "$UBIKIT" extract -q "${opt[@]}" "$W/fs.ubi" -o "$W/uk"
			diff -r --no-dereference "$W/tree" "$W/uk" >/dev/null && printf '  same tree' || printf '  TREE DIFFERS'
			awk -v uw="$ur_wall" -v uc="$ur_cpu" -v w="$BEST_WALL" -v cpu="$BEST_CPU" \
				'BEGIN { printf "; ubi_reader/ubikit: %.1fx wall, %.1fx CPU\n", uw / w, uc / cpu }'
			rm -rf "$W/uk"
		done
	done
done
rm -rf "$W"
