#!/bin/bash
# The 53 kernel-written images of the mtd-utils fsck.ubifs test suite
# (tests/data/fsck-images, NOR 16 KiB PEBs, min I/O 1). `good` must extract
# to exactly the tree its README describes. Every corrupted one must either
# read or fail cleanly: exit 1 with a message that names the problem and the
# place, never a crash, a sanitizer report or a hang, and never a write to
# the image. Run against the ASan+UBSan build this is a robustness test.
set -euo pipefail
. "$(dirname "$0")/ubifs_lib.sh"
S=${UBIKIT_SCRATCH:?}
D=${UBIKIT_SRC:?}/tests/data/fsck-images
[ -d "$D" ] || fail "$D missing (part of the repository)"
rm -rf "$S"
mkdir -p "$S"
export ASAN_OPTIONS=${ASAN_OPTIONS:-}:exitcode=86:detect_leaks=1
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-}:exitcode=87:halt_on_error=1:print_stacktrace=1

# --- good: exactly the README tree
gzip -dc "$D/good.gz" >"$S/good.img"
"$UBIKIT" extract -q "$S/good.img" -o "$S/good" || fail "good: extract failed"
(
	cd "$S/good"
	find . | LC_ALL=C sort | tr '\n' ' '
) >"$S/good.list"
expect=". ./corrupt_file ./dir ./dir/block_dev ./dir/char_dev ./dir/dir ./dir/file ./hardl_corrupt_file ./softl_corrupt_file "
[ "$(cat "$S/good.list")" = "$expect" ] || fail "good: tree is '$(cat "$S/good.list")', expected '$expect'"
[ "$(md5sum <"$S/good/corrupt_file" | cut -c1-32)" = 7d2f953e91033c743ab6a801d5ee6e15 ] || fail "good: corrupt_file content"
[ "$(stat -c %s "$S/good/corrupt_file")" = 2048 ] || fail "good: corrupt_file size"
[ "$(md5sum <"$S/good/dir/file" | cut -c1-32)" = ba1f2511fc30423bdbb183fe33f3dd0f ] || fail "good: dir/file content"
[ "$(stat -c %i "$S/good/corrupt_file")" = "$(stat -c %i "$S/good/hardl_corrupt_file")" ] || fail "good: hard link"
[ "$(readlink "$S/good/softl_corrupt_file")" = corrupt_file ] || fail "good: symlink target"
[ "$(getfattr --absolute-names --only-values -n user.corrupt "$S/good/corrupt_file")" = 123 ] || fail "good: xattr user.corrupt"
[ "$(getfattr --absolute-names --only-values -n user.corrupt "$S/good/hardl_corrupt_file")" = 123 ] || fail "good: xattr via the hard link"
if is_root; then
	[ "$(stat -c '%F %t:%T' "$S/good/dir/block_dev")" = "block special file 1:2" ] || fail "good: block_dev"
	[ "$(stat -c '%F %t:%T' "$S/good/dir/char_dev")" = "character special file 0:1" ] || fail "good: char_dev"
fi
echo "ok good"

# --- every image: read or fail cleanly
n=0 ok=0 failed=0
for gz in "$D"/*.gz; do
	name=$(basename "$gz" .gz)
	img=$S/$name.img
	gzip -dc "$gz" >"$img"
	sum0=$(md5sum <"$img")
	for cmd in "extract -q -o $S/x-$name" "ls -lR" "info" "dump"; do
		set +e
		args=${cmd#* }
		[ "$args" = "$cmd" ] && args=
		# shellcheck disable=SC2086
		timeout 60 "$UBIKIT" ${cmd%% *} "$img" $args >"$S/out" 2>"$S/err"
		rc=$?
		set -e
		case $rc in
		0 | 1) ;;
		124) fail "$name: ubikit ${cmd%% *} hung (killed after 60 s)" ;;
		*) cat "$S/err" >&2; fail "$name: ubikit ${cmd%% *} exit $rc (crash or sanitizer report)" ;;
		esac
		if grep -qE 'runtime error|AddressSanitizer|LeakSanitizer' "$S/err"; then
			cat "$S/err" >&2
			fail "$name: sanitizer report from ubikit ${cmd%% *}"
		fi
		if [ $rc = 1 ]; then
			[ -s "$S/err" ] || fail "$name: ubikit ${cmd%% *} failed without a message"
			grep -qE 'LEB|PEB|inode|node|superblock|master|index|volume|offset' "$S/err" ||
				{ cat "$S/err" >&2; fail "$name: ubikit ${cmd%% *}: message does not name a place"; }
		fi
		if [ "${cmd%% *}" = extract ]; then
			if [ $rc = 0 ]; then ok=$((ok + 1)); else failed=$((failed + 1)); fi
			printf '%-28s extract exit %d  %s\n' "$name" $rc "$(grep -v '^extracted\|^skipped\|errors$' "$S/err" | head -1 | cut -c1-150)"
		fi
	done
	[ "$(md5sum <"$img")" = "$sum0" ] || fail "$name: the image was modified"
	rm -rf "$img" "$S/x-$name"
	n=$((n + 1))
done
[ $n = 53 ] || fail "expected 53 images, found $n"

# --- the data: driven by the README table (which files the damage leaves
# intact). Reading without repair, per file (ubikit cat, through the link
# for the symlink): exit 0 must give exactly the README's bytes, never other
# ones; exit 1 must name the damage. Where the table says the file is
# present and unchanged (1) and the image mounts, the read must succeed, for
# images a checker repairs without rebuilding (safe, danger_default); with
# danger_rebuild or none the index itself is hit, so an error is also right.
# The README's second table lists the images where the reference differs.
README=$D/README.md
ref_corrupt=7d2f953e91033c743ab6a801d5ee6e15
ref_dirfile=ba1f2511fc30423bdbb183fe33f3dd0f
rows=$(awk -F'|' '/^\| [a-z0-9_]+ \| (safe|danger_default|danger_rebuild|none) \|/ {
	gsub(/ /, ""); print $2, $3, $4, $5, $7, $8, $10, $11, $12 }' "$README")
[ "$(printf '%s\n' "$rows" | wc -l)" = 53 ] || fail "README: expected 53 table rows"
exception() { # image path -> the README's "reading" note for it, if any
	awk -F'|' -v i="$1" -v p="$2" '/^\| *read: / { gsub(/ /, ""); if ($3 == i && $4 == p) print $5 }' "$README"
}
checked=0
while read -r name mode F Fc H Hc Sl Dd Dc; do
	img=$S/$name.img
	gzip -dc "$D/$name.gz" >"$img"
	run "$UBIKIT" ls "$img" /
	mounts=$([ "$T_RC" = 0 ] && echo 1 || echo 0)
	[ "$name" != good ] || [ "$mounts" = 1 ] || fail "good does not mount"
	for item in "/corrupt_file $F $Fc $ref_corrupt" "/hardl_corrupt_file $H $Hc $ref_corrupt" \
		"/softl_corrupt_file $Sl$F $Fc $ref_corrupt" "/dir/file $Dd $Dc $ref_dirfile"; do
		read -r path present same ref <<<"$item"
		run "$UBIKIT" cat "$img" "$path"
		case $T_RC in
		0)
			got=$(md5sum <"$T_OUT" | cut -c1-32)
			if [ "$got" != "$ref" ]; then
				ex=$(exception "$name" "$path")
				case $ex in
				prefix=*)
					[ "$(stat -c %s "$T_OUT")" = "${ex#prefix=}" ] && cmp -s -n "${ex#prefix=}" "$T_OUT" "$S/good$path" ||
						fail "$name: cat $path: not the first ${ex#prefix=} bytes of the file (README)" ;;
				other) ;;
				*) fail "$name: cat $path returned other bytes (md5 $got, expected $ref)" ;;
				esac
			fi ;;
		1)
			grep -qE 'LEB|inode|node|superblock|master|index|volume|No such file|is a directory' "$T_ERR" ||
				{ cat "$T_ERR" >&2; fail "$name: cat $path: the error does not name the damage"; }
			case $mounts$present$same:$mode in
			111:safe | 111:danger_default | 1111:safe | 1111:danger_default)
				cat "$T_ERR" >&2
				fail "$name: cat $path failed, but the damage leaves it intact (README: $mode, present and unchanged)" ;;
			esac ;;
		*) fail "$name: cat $path: exit $T_RC" ;;
		esac
		checked=$((checked + 1))
	done
	rm -f "$img"
done <<<"$rows"
echo "data: $checked file reads checked against the README table"
echo "PASS: $n fsck images: $ok extracted fully, $failed failed cleanly with a message"
