#!/bin/bash
# `ubikit fsck` on the 53 kernel-written images of the mtd-utils fsck.ubifs
# suite (tests/data/fsck-images, README.md table):
#  -n (check only): good is clean (0); the five sb_* images are refused
#     (8) with "bad superblock"; every other image is found (4) with each
#     problem naming its place (LEB:offset, inode or path), except the
#     known misses below; the image is never written (md5 before/after);
#     --json is valid JSON with the same exit code.
# Known misses (listed, so a newly found one fails here and the list is
# updated): lpt_flags (the LPT check's kernel exceptions accept the flag).
# Run against the ASan+UBSan build this is also a robustness test.
set -euo pipefail
. "$(dirname "$0")/ubifs_lib.sh"
S=${UBIKIT_SCRATCH:?}
D=${UBIKIT_SRC:?}/tests/data/fsck-images
[ -d "$D" ] || fail "$D missing (part of the repository)"
rm -rf "$S"
mkdir -p "$S"
export ASAN_OPTIONS=${ASAN_OPTIONS:-}:exitcode=86:detect_leaks=1
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-}:exitcode=87:halt_on_error=1:print_stacktrace=1
KNOWN_MISSES=" lpt_flags "

# the README table: image -> mode (safe/danger_default/danger_rebuild/none)
declare -A MODE
while IFS='|' read -r _ img mode _; do
	img=${img// /}
	mode=${mode// /}
	[ -n "$img" ] && [ "$img" != image ] && [ "${img#-}" = "$img" ] && MODE[$img]=$mode
done < <(grep -E '^\| [a-z0-9_]+ \| (safe|none|danger_default|danger_rebuild) \|' "$D/README.md")
[ "${#MODE[@]}" = 53 ] || fail "README table: ${#MODE[@]} images, expected 53"

run_fsck() { # name args... -> rc in $rc, output in $S/out, $S/err
	local name=$1
	shift
	set +e
	timeout 60 "$UBIKIT" fsck "$@" >"$S/out" 2>"$S/err"
	rc=$?
	set -e
	[ "$rc" != 124 ] || fail "$name: ubikit fsck $* hung"
	if grep -qE 'runtime error|AddressSanitizer|LeakSanitizer' "$S/err"; then
		cat "$S/err" >&2
		fail "$name: sanitizer report"
	fi
	case $rc in 0 | 1 | 4 | 8 | 16) ;; *) cat "$S/err" >&2; fail "$name: ubikit fsck $* exit $rc" ;; esac
}

found=0 refused=0 missed=0
for gz in "$D"/*.gz; do
	name=$(basename "$gz" .gz)
	mode=${MODE[$name]:?$name not in the README table}
	img=$S/$name.img
	gzip -dc "$gz" >"$img"
	sum0=$(md5sum <"$img")
	run_fsck "$name" -n --json "$img"
	cp "$S/out" "$S/$name.json"
	echo "$name $rc" >>"$S/json.list"
	[ "$(md5sum <"$img")" = "$sum0" ] || fail "$name: fsck -n changed the image"
	if [ "$name" = good ]; then
		[ "$rc" = 0 ] || { cat "$S/err" >&2; fail "good: fsck -n exit $rc, expected 0"; }
		[ ! -s "$S/err" ] || fail "good: problems printed for a clean image"
		grep -q '"inodes": 8, ' "$S/out" || fail "good: report '$(cat "$S/out")'"
	elif [ "$mode" = none ]; then
		[ "$rc" = 8 ] || fail "$name: fsck -n exit $rc, expected 8 (bad superblock refused)"
		grep -q 'bad superblock' "$S/err" || fail "$name: no 'bad superblock' in '$(cat "$S/err")'"
		refused=$((refused + 1))
	elif [[ $KNOWN_MISSES == *" $name "* ]]; then
		[ "$rc" = 0 ] || fail "$name: now found (exit $rc): take it off KNOWN_MISSES"
		missed=$((missed + 1))
	else
		[ "$rc" = 4 ] || fail "$name: fsck -n exit $rc, expected 4 (errors left)"
		[ -s "$S/err" ] || fail "$name: exit 4 without a problem printed"
		# every problem names a place
		if grep -vE 'LEB [0-9]+(:[0-9]+)?|inode [0-9]+|^ubikit fsck: /|\(path /' "$S/err" | grep -q .; then
			grep -vE 'LEB [0-9]+(:[0-9]+)?|inode [0-9]+|^ubikit fsck: /|\(path /' "$S/err" >&2
			fail "$name: a problem without its place"
		fi
		found=$((found + 1))
	fi
done
echo "fsck -n: good clean, $found found, $refused refused (bad superblock), $missed known misses"
[ "$found" = 46 ] && [ "$refused" = 5 ] && [ "$missed" = 1 ] || fail "counts"
# every --json report valid, its exit and problems matching the exit status
python3 - "$S" <<'PY' || fail "--json output is not the report"
import json, sys
S = sys.argv[1]
for line in open(S + "/json.list"):
    name, rc = line.split()
    d = json.load(open("%s/%s.json" % (S, name)))
    assert d["exit"] == int(rc), name
    assert (len(d["problems"]) == 0) == (int(rc) == 0), name
    for p in d["problems"]:
        assert p["msg"], name
PY

# usage errors: 16
run_fsck usage -n -y "$S/good.img"
[ "$rc" = 16 ] || fail "fsck -n -y: exit $rc, expected 16"
set +e
"$UBIKIT" fsck >/dev/null 2>&1
rc=$?
set -e
[ "$rc" = 16 ] || fail "fsck without an image: exit $rc, expected 16"
run_fsck missing -n "$S/does-not-exist.img"
[ "$rc" = 8 ] || fail "fsck of a missing file: exit $rc, expected 8"
echo "ok ubifs_fsck_check"
