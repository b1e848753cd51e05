#!/bin/bash
# Robustness sweep: a kernel-written UBI image (fsck 'good', NOR 16 KiB PEBs)
# with random damage (seeded: byte runs overwritten in EC/VID headers, the
# volume table, UBIFS nodes and data), then info, ls -lR, extract and dump.
# Each must finish with exit 0 or 1 (with a message), within 60 s, with no
# sanitizer report, and leave the image unchanged; a successful extract must
# give exactly the undamaged tree (README md5s), and after a failed one every
# file the error does not name must still be the undamaged one. 70 cases by default,
# 2000 with UBIKIT_LONG_TESTS=1.
set -euo pipefail
. "$(dirname "$0")/ubifs_lib.sh"
S=${UBIKIT_SCRATCH:?}
rm -rf "$S"
mkdir -p "$S"
export TMPDIR_M=$S
N=70
[ "${UBIKIT_LONG_TESTS:-0}" = 1 ] && N=2000
gzip -dc "$UBIKIT_SRC/tests/data/fsck-images/good.gz" >"$S/good.img"
size=$(stat -c %s "$S/good.img")
# The undamaged tree, checked against the md5s of tests/data/fsck-images/README.md:
# every successful read of a damaged image must give exactly this (nodes
# carry CRCs: damage either hits nothing in use or is detected).
expect_ok "$UBIKIT" extract -q "$S/good.img" -o "$S/ref"
[ "$(md5sum <"$S/ref/corrupt_file" | cut -c1-32)" = 7d2f953e91033c743ab6a801d5ee6e15 ] &&
	[ "$(md5sum <"$S/ref/dir/file" | cut -c1-32)" = ba1f2511fc30423bdbb183fe33f3dd0f ] ||
	fail "good: the undamaged tree is not the README's"
manifest "$S/ref" >"$S/ref.manifest"
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
# fail, keeping the damaged image of case $i for a rerun
keep_fail() {
	cp "$S/img" "$S/failing-case-$i.img"
	fail "case $i (offset $off, $len bytes of $byte): $*; image kept as failing-case-$i.img"
}
while read -r i off len byte; do
	cp "$S/good.img" "$S/img"
	head -c "$len" /dev/zero | tr '\0' "\\$(printf '%03o' "$byte")" |
		dd of="$S/img" bs=1 seek="$off" conv=notrunc 2>/dev/null
	sum0=$(md5sum <"$S/img")
	for cmd in info "ls -lR" "extract -q -o $S/out" dump; do
		rm -rf "$S/out"
		# shellcheck disable=SC2086
		run timeout 60 "$UBIKIT" ${cmd%% *} "$S/img" $([ "${cmd#* }" = "$cmd" ] || echo "${cmd#* }")
		rc=$T_RC
		if [ $rc != 0 ] && [ $rc != 1 ]; then
			head -20 "$T_ERR" >&2
			keep_fail "ubikit ${cmd%% *} exit $rc"
		fi
		if [ $rc = 1 ]; then
			[ -s "$T_ERR" ] || keep_fail "ubikit ${cmd%% *} failed without a message"
			fails=$((fails + 1))
		else
			oks=$((oks + 1))
		fi
		if [ "${cmd%% *}" = extract ]; then
			if [ $rc = 0 ]; then
				# a full read: exactly the undamaged tree
				manifest "$S/out" >"$S/out.manifest"
				diff -u "$S/ref.manifest" "$S/out.manifest" >&2 ||
					keep_fail "extract succeeded with another tree"
			else
				# a file the error does not name must still be the undamaged one
				for f in corrupt_file hardl_corrupt_file dir/file; do
					[ -f "$S/out/$f" ] && ! grep -qF "/$f" "$T_ERR" || continue
					cmp -s "$S/out/$f" "$S/ref/$f" ||
						keep_fail "extract failed elsewhere, and /$f holds other bytes"
				done
			fi
		fi
	done
	[ "$(md5sum <"$S/img")" = "$sum0" ] || fail "case $i: the image was modified"
done <"$S/plan"
echo "random damage: $N images: $oks command runs succeeded, $fails failed cleanly"

# Aimed damage: one byte in the payload of each data node of good (found
# with 'ubikit dump'; LEB -> PEB from its UBI listing, data offset 128 as
# the README says). The file the node belongs to must fail to read, naming
# the place, never give other bytes; the other file must read exactly.
declare -A path_of=([65]=/corrupt_file [72]=/dir/file)
expect_ok "$UBIKIT" dump "$S/good.img"
cp "$T_OUT" "$S/good.dump"
hits=0
while read -r leb offs inum stored; do
	peb=$(awk -v l="$leb" '$1 == "PEB" && $6 == "vol" && $7 == "0" && $8 == "LEB" && $9 == l"," { print $2 }' "$S/good.dump")
	[ -n "$peb" ] || fail "dump: no PEB for LEB $leb"
	at=$((peb * 16384 + 128 + offs + 48 + stored / 2))
	cp "$S/good.img" "$S/img"
	printf '%b' "\\x$(printf '%02x' $(( $(od -An -tu1 -j "$at" -N1 "$S/img") ^ 0x5a )))" |
		dd of="$S/img" bs=1 seek="$at" conv=notrunc 2>/dev/null
	for other in 65 72; do
		if [ "$other" = "$inum" ]; then
			expect_fail 1 "LEB $leb:$offs" "$UBIKIT" cat "$S/img" "${path_of[$other]}"
		else
			expect_ok "$UBIKIT" cat "$S/img" "${path_of[$other]}"
			cmp -s "$T_OUT" "$S/ref${path_of[$other]}" || fail "data node of inode $inum hit: ${path_of[$other]} changed"
		fi
	done
	hits=$((hits + 1))
done < <(awk '$2 == "data" && $3 == "len" { split($1, p, ":"); k = $10; sub(/^\(/, "", k); sub(/,$/, "", k)
	for (i = 1; i <= NF; i++) if ($i == "stored") st = $(i + 1)
	print p[1], p[2], k, st }' "$S/good.dump")
[ "$hits" = 2 ] || fail "expected the 2 data nodes of good (corrupt_file, dir/file), found $hits"
echo "PASS: $N randomly damaged images; $hits aimed data-node hits read as errors"
