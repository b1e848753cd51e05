#!/bin/bash
# Robustness sweep: a kernel-written UBI image (fsck 'good', NOR 16 KiB PEBs)
# with random damage (seeded: byte runs overwritten in EC/VID headers, the
# volume table, UBIFS nodes and data), then info, ls -lR, extract and dump.
# Each must finish with exit 0 or 1 (with a message), within 60 s, with no
# sanitizer report, and leave the image unchanged. 100 cases by default,
# 2000 with UBIKIT_LONG_TESTS=1.
set -euo pipefail
. "$(dirname "$0")/ubifs_lib.sh"
S=${UBIKIT_SCRATCH:?}
rm -rf "$S"
mkdir -p "$S"
export ASAN_OPTIONS=${ASAN_OPTIONS:-}:exitcode=86
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-}:exitcode=87:halt_on_error=1
N=100
[ "${UBIKIT_LONG_TESTS:-0}" = 1 ] && N=2000
gzip -dc "$UBIKIT_SRC/tests/data/fsck-images/good.gz" >"$S/good.img"
size=$(stat -c %s "$S/good.img")
# seeded plan: case offset length byte
awk -v n=$N -v size="$size" 'BEGIN {
	srand(20261203)
	for (i = 0; i < n; i++) {
		r = rand()
		peb = int(rand() * 24) * 16384
		if (r < 0.25) off = peb + int(rand() * 64)            # EC header
		else if (r < 0.5) off = peb + 64 + int(rand() * 64)   # VID header
		else off = int(rand() * size)                          # anywhere
		len = 1 + int(rand() * (rand() < 0.8 ? 4 : 64))
		print i, off, len, int(rand() * 256)
	}
}' >"$S/plan"
fails=0 oks=0
while read -r i off len byte; do
	cp "$S/good.img" "$S/img"
	head -c "$len" /dev/zero | tr '\0' "\\$(printf '%03o' "$byte")" |
		dd of="$S/img" bs=1 seek="$off" conv=notrunc 2>/dev/null
	sum0=$(md5sum <"$S/img")
	for cmd in info "ls -lR" "extract -q -o $S/out" dump; do
		rm -rf "$S/out"
		set +e
		# shellcheck disable=SC2086
		timeout 60 "$UBIKIT" ${cmd%% *} "$S/img" $([ "${cmd#* }" = "$cmd" ] || echo "${cmd#* }") >/dev/null 2>"$S/err"
		rc=$?
		set -e
		if [ $rc != 0 ] && [ $rc != 1 ] || grep -qE 'runtime error|AddressSanitizer|LeakSanitizer' "$S/err"; then
			cat "$S/err" >&2
			cp "$S/img" "$S/failing-case-$i.img"
			fail "case $i (offset $off, $len bytes of $byte): ubikit ${cmd%% *} exit $rc; image kept as failing-case-$i.img"
		fi
		if [ $rc = 1 ]; then
			[ -s "$S/err" ] || fail "case $i: ubikit ${cmd%% *} failed without a message"
			fails=$((fails + 1))
		else
			oks=$((oks + 1))
		fi
	done
	[ "$(md5sum <"$S/img")" = "$sum0" ] || fail "case $i: the image was modified"
done <"$S/plan"
echo "PASS: $N damaged images: $oks command runs succeeded, $fails failed cleanly"
