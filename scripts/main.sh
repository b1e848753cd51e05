#!/usr/bin/env bash
# The main job (README): build ubikit, then on the default simulated NAND
# (256 MiB SLC, 2048+64-byte pages, 128 KiB blocks) put a UBIFS file system
# holding a sample tree (`ubikit mkfs`: once as an image put on the flash by
# `ubikit format`, once straight into a new volume), read both back with
# ubikit and check them, then run the benchmark workloads. Output goes to BUILD/main/.
#   --short               only the flash-raw and extract benchmarks (the test
#                         command runs this form as the CTest entry main_job)
#   UBIKIT_MAIN_BUILD=DIR build directory (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
short=0
case "${1:-}" in
--short) short=1 ;;
"") ;;
*) echo "usage: scripts/main.sh [--short]" >&2; exit 2 ;;
esac
B=${UBIKIT_MAIN_BUILD:-build}
bash scripts/deps.sh
# The default compiler (GCC on Debian) in Release, as users build it.
cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$B" -j"$(nproc)"
U=$B/tools/ubikit
W=$B/main
rm -rf "$W" && mkdir -p "$W/tree/dir/sub"
head -c 3000000 /dev/urandom >"$W/tree/random.bin"
seq 1 20000 >"$W/tree/dir/numbers.txt"
echo "hello from ubikit" >"$W/tree/dir/sub/hello.txt"
ln -s dir/sub/hello.txt "$W/tree/link"
ln "$W/tree/dir/numbers.txt" "$W/tree/hardlink.txt"

echo "== 1. simulated NAND"
$U flash create "$W/nand.img"
$U flash info "$W/nand.img"

echo "== 2. UBIFS image (ubikit mkfs --ubinize: mkfs.ubifs's options) -> flash (ubikit format)"
$U mkfs -r "$W/tree" -m 2048 -e 126976 -c 1000 -x lzo -o "$W/rootfs.ubifs" \
	--ubinize "$W/ubi.img" --peb-size 128KiB --vol-name rootfs --vol-size $((1000 * 126976))
$U format "$W/nand.img" -f "$W/ubi.img" -y

echo "== 3. UBIFS straight onto the flash, into a new volume (ubikit mkfs FLASH --vol-name)"
$U mkfs "$W/nand.img" --vol-name data -r "$W/tree" -x zstd -c 500

echo "== 4. read it back"
$U info "$W/nand.img"
$U ls -lR "$W/nand.img" /
for v in rootfs data; do
	$U extract --vol-name $v "$W/nand.img" -o "$W/extracted-$v"
	diff -r "$W/tree" "$W/extracted-$v" || { echo "volume $v: the extracted tree differs from the source" >&2; exit 1; }
	echo "volume $v: extracted tree equals the source tree"
done

echo "== 5. benchmarks"
if [ "$short" = 1 ]; then
	$U bench flash-raw extract
else
	$U bench
fi
