#!/usr/bin/env bash
# mem_flat — the memory users see stays small and flat as images grow
# (issue 7 part 4): read-only opening reads the image on demand (pread)
# instead of mapping it, so the peak RSS of info, ls -R, cat and extract
# on a UBI image 4x as large as another is about the same. Images: trees of
# incompressible 6 MiB files (2 and 8 of them), no compression, made with
# `ubikit mkfs --ubinize`. Mapping the image (even with pages released
# every 32 MiB) fails the extract check by 20 MiB or more.
# Peak RSS (KiB) as users see it: /usr/bin/time (GNU time).
set -euo pipefail
. "$UBIKIT_SRC/tests/tools/test_lib.sh"
need /usr/bin/time
# ASan keeps freed memory in a quarantine (256 MiB by default), which grows
# with the bytes copied, not with the image: keep it small here.
export ASAN_OPTIONS=$ASAN_OPTIONS:quarantine_size_mb=1
S=$UBIKIT_SCRATCH
rm -rf "$S"
mkdir -p "$S"
SLACK_KIB=${UBIKIT_MEM_FLAT_SLACK_KIB:-3072}

peak() { # CMD... -> peak RSS (KiB) of CMD, stdout to /dev/null; fails on error
	/usr/bin/time -f 'PEAK %M' -o "$S/time.out" "$@" >/dev/null || return
	sed -n 's/^PEAK //p' "$S/time.out"
}

declare -A rss
for x in 1 4; do
	t=$S/tree$x
	mkdir -p "$t/d"
	for i in $(seq 1 $((2 * x))); do
		head -c $((6 << 20)) /dev/urandom >"$t/d/f$i"
	done
	expect_ok "$UBIKIT" mkfs -r "$t" -m 2048 -e 129024 -c $((120 * x)) -x none --quiet \
		--ubinize "$S/img$x" --peb-size 128KiB --sub-page-size 512
	rm -rf "$t"
	size=$(stat -c %s "$S/img$x")
	for cmd in info ls cat extract; do
		case $cmd in
		info) args=(info "$S/img$x") ;;
		ls) args=(ls -R "$S/img$x" /) ;;
		cat) args=(cat "$S/img$x" /d/f1) ;;
		extract) args=(extract -q "$S/img$x" -o "$S/out$x") ;;
		esac
		rss[$cmd$x]=$(peak "$UBIKIT" "${args[@]}" 2>"$T_ERR") || fail "ubikit ${args[*]}: $(cat "$T_ERR")"
		san_check "ubikit $cmd" "$T_ERR"
	done
	[ "$(find "$S/out$x" -type f | wc -l)" = $((2 * x)) ] || fail "extract of img$x: not all files came out"
	cmp "$S/out$x/d/f1" <("$UBIKIT" cat "$S/img$x" /d/f1) || fail "extract of img$x: d/f1 differs from cat"
	rm -rf "$S/out$x"
	echo "image ${x}x: $((size >> 20)) MiB; peak RSS KiB: info ${rss[info$x]}, ls -R ${rss[ls$x]}, cat ${rss[cat$x]}, extract ${rss[extract$x]}"
done
for cmd in info ls cat extract; do
	a=${rss[${cmd}1]} b=${rss[${cmd}4]}
	[ "$b" -le $((a + SLACK_KIB)) ] ||
		fail "peak RSS of $cmd grows with the image: $a KiB at 1x, $b KiB at 4x (more than $SLACK_KIB KiB more)"
done
echo "mem_flat: all passed"
