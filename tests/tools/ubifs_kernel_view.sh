#!/bin/bash
# ubifs_kernel_view.sh IMG MANIFEST WORKDIR — does ubikit see the flash image
# IMG (raw, as the Linux VM dumped it) as the kernel did? MANIFEST is what the
# kernel showed when it mounted IMG (tests/tools/ubifs_manifest.sh format), or
# the single line REFUSED when it did not mount it. 'ubikit extract' must give
# exactly that tree (or fail when the kernel refused), 'ubikit ls -R' the same
# names, and the image must stay untouched. Exit 0 if so; otherwise prints
# the difference and exits 1. Used by the power-cut tests, with and without
# the VM. Needs root (owners, device nodes and trusted.* xattrs).
set -uo pipefail
: "${UBIKIT:?}" "${UBIKIT_SRC:?}"
img=$1 mf=$2 w=$3
name=$(basename "$mf" .manifest)
rm -rf "$w/out"
mkdir -p "$w"
sum0=$(md5sum <"$img")
if [ "$(cat "$mf")" = REFUSED ]; then
	rc=0
	"$UBIKIT" extract -q "$img" -o "$w/out" 2>"$w/err" || rc=$?
	if [ $rc = 0 ]; then
		echo "$name: the kernel refused to mount it, ubikit extract read it" >&2
		exit 1
	fi
	# a refusal is a clean error, not a crash or a sanitizer report (exit 86)
	if [ $rc != 1 ] || grep -qE 'Sanitizer|runtime error' "$w/err"; then
		cat "$w/err" >&2
		echo "$name: ubikit extract failed with status $rc instead of refusing" >&2
		exit 1
	fi
	echo "ok $name (refused by both: $(head -c 200 "$w/err"))"
	exit 0
fi
"$UBIKIT" extract -q "$img" -o "$w/out" 2>"$w/err" || {
	cat "$w/err" >&2
	echo "$name: ubikit extract failed, the kernel mounted it" >&2
	exit 1
}
sh "$UBIKIT_SRC/tests/tools/ubifs_manifest.sh" "$w/out" >"$w/$name.actual"
if ! diff -u "$mf" "$w/$name.actual" >"$w/$name.diff"; then
	head -40 "$w/$name.diff" >&2
	echo "$name: ubikit extract differs from what the kernel showed" >&2
	exit 1
fi
"$UBIKIT" ls -R "$img" / | awk '
	/^$/ { next }
	/:$/ { d = substr($0, 1, length($0) - 1); if (d == "/") d = ""; next }
	{ print "." d "/" $0 }' | LC_ALL=C sort >"$w/ls.paths"
awk '/^== xattrs/ { exit } /^\.\// { print $1 }' "$mf" | LC_ALL=C sort >"$w/kernel.paths"
if ! diff -u "$w/kernel.paths" "$w/ls.paths" >&2; then
	echo "$name: ubikit ls -R names differ from the kernel's" >&2
	exit 1
fi
[ "$(md5sum <"$img")" = "$sum0" ] || { echo "$name: the image was modified" >&2; exit 1; }
echo "ok $name ($(grep -c '^\./' "$mf") entries)"
rm -rf "$w/out"
