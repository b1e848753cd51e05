#!/bin/bash
# Authenticated UBIFS (issue 12 class 4): images made by Debian's mkfs.ubifs
# with --hash-algo sha256/sha512 --auth-key --auth-cert (tests/data/crypt,
# made by make_images.sh). Read without any key: 'ubikit extract' gives the
# source tree (source.manifest), a note says that hashes, HMACs and the
# signature were not verified; a read-write mount is refused with a clear
# message; the image is never modified. (The VM's kernel has no
# CONFIG_UBIFS_FS_AUTHENTICATION, so there are no kernel-made ones.)
set -euo pipefail
. "$(dirname "$0")/ubifs_lib.sh"
S=${UBIKIT_SCRATCH:?}
D=${UBIKIT_SRC:?}/tests/data/crypt
rm -rf "$S"
mkdir -p "$S"
is_root || skip "needs root (owners are compared with the source manifest)"
for name in auth-sha256 auth-sha512; do
	img=$S/$name.ubi
	gzip -dc "$D/$name.ubi.gz" >"$img"
	sum0=$(md5sum <"$img")
	rm -rf "$S/out"
	"$UBIKIT" extract -q "$img" -o "$S/out" 2>"$S/err" || { cat "$S/err"; fail "$name: extract failed"; }
	grep -q "authenticated UBIFS (${name#auth-}): read without verifying" "$S/err" ||
		{ cat "$S/err"; fail "$name: no note that the HMACs/hashes were not verified"; }
	sh "$UBIKIT_SRC/tests/tools/ubifs_manifest.sh" "$S/out" >"$S/$name.actual"
	diff -u "$D/source.manifest" "$S/$name.actual" >&2 || fail "$name: extract differs from the source tree"
	"$UBIKIT" cat "$img" /d/big.bin | cmp - "$S/out/d/big.bin" || fail "$name: cat differs"
	[ "$(md5sum <"$img")" = "$sum0" ] || fail "$name: reading modified the image"
	if "$UBIKIT" mkdir "$img" /newdir 2>"$S/err"; then fail "$name: a read-write change was accepted"; fi
	grep -q "authenticated UBIFS: writing would need the HMAC key" "$S/err" ||
		{ cat "$S/err"; fail "$name: read-write refusal message"; }
	echo "ok $name"
done
