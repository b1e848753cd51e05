#!/bin/bash
# Kernel-written images (tests/data/kernel-images, made by
# tests/vm/ubifs_make_kernel_images.sh): the Linux kernel created a UBIFS,
# wrote, modified, deleted, renamed and set xattrs, then unmounted cleanly or
# stopped writing as at a power cut. The .manifest is what the kernel itself
# showed at its next mount (recovery included). 'ubikit extract' must give
# exactly that tree (ubifs_manifest.sh over both), and 'ubikit ls -R' the
# same names. No VM needed.
set -euo pipefail
. "$(dirname "$0")/ubifs_lib.sh"
S=${UBIKIT_SCRATCH:?}
D=${UBIKIT_SRC:?}/tests/data/kernel-images
rm -rf "$S"
mkdir -p "$S"
is_root || skip "needs root (owners, device nodes and trusted.* xattrs are compared)"
n=0
for gz in "$D"/*.img.gz; do
	name=$(basename "$gz" .img.gz)
	img=$S/$name.img
	gzip -dc "$gz" >"$img"
	sum0=$(md5sum <"$img")
	rm -rf "$S/out"
	"$UBIKIT" extract -q "$img" -o "$S/out" 2>"$S/err" || { cat "$S/err"; fail "$name: extract failed"; }
	sh "$UBIKIT_SRC/tests/tools/ubifs_manifest.sh" "$S/out" >"$S/$name.actual"
	if ! diff -u "$D/$name.manifest" "$S/$name.actual" >"$S/$name.diff"; then
		head -40 "$S/$name.diff" >&2
		fail "$name: ubikit extract differs from what the kernel showed"
	fi
	# ls -R gives the same set of names
	"$UBIKIT" ls -R "$img" / | awk '
		/^$/ { next }
		/:$/ { d = substr($0, 1, length($0) - 1); if (d == "/") d = ""; next }
		{ print "." d "/" $0 }' | LC_ALL=C sort >"$S/ls.paths"
	awk '/^== xattrs/ { exit } /^\.\// { print $1 }' "$D/$name.manifest" | LC_ALL=C sort >"$S/kernel.paths"
	diff -u "$S/kernel.paths" "$S/ls.paths" >&2 || fail "$name: ubikit ls -R names differ from the kernel's"
	[ "$(md5sum <"$img")" = "$sum0" ] || fail "$name: the image was modified"
	echo "ok $name ($(grep -c '^\./' "$D/$name.manifest") entries)"
	n=$((n + 1))
	rm -f "$img"
done
[ $n -ge 4 ] || fail "expected at least 4 kernel images, found $n"
echo "PASS: kernel-written images read as the kernel reads them"
