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
	grep -q "authenticated UBIFS (${name#auth-}): master node hash, index and node hashes checked as read; HMACs and signature not verified" "$S/err" ||
		{ cat "$S/err"; fail "$name: no note of what was verified"; }
	sh "$UBIKIT_SRC/tests/tools/ubifs_manifest.sh" "$S/out" >"$S/$name.actual"
	diff -u "$D/source.manifest" "$S/$name.actual" >&2 || fail "$name: extract differs from the source tree"
	"$UBIKIT" cat "$img" /d/big.bin | cmp - "$S/out/d/big.bin" || fail "$name: cat differs"
	[ "$(md5sum <"$img")" = "$sum0" ] || fail "$name: reading modified the image"
	if "$UBIKIT" mkdir "$img" /newdir 2>"$S/err"; then fail "$name: a read-write change was accepted"; fi
	grep -q "authenticated UBIFS: writing would need the HMAC key" "$S/err" ||
		{ cat "$S/err"; fail "$name: read-write refusal message"; }
	# change one byte of the first data node, with a valid CRC: only the hash can tell
	python3 - "$img" "$S/bad.ubi" <<'PY'
import sys, zlib, struct
b = bytearray(open(sys.argv[1], 'rb').read())
i = 0
while True:
    i = b.index(b'\x31\x18\x10\x06', i)
    if b[i + 20] == 1:  # data node
        break
    i += 4
ln = struct.unpack_from('<I', b, i + 16)[0]
b[i + ln - 1] ^= 0x01
struct.pack_into('<I', b, i + 4, ~zlib.crc32(bytes(b[i + 8:i + ln])) & 0xffffffff)
open(sys.argv[2], 'wb').write(b)
PY
	rm -rf "$S/bad"
	if "$UBIKIT" extract -q "$S/bad.ubi" -o "$S/bad" 2>"$S/err"; then fail "$name: a changed data node was not noticed"; fi
	grep -q "data node at LEB [0-9]*:[0-9]* (.* bytes) does not match the hash its index branch holds" "$S/err" ||
		{ cat "$S/err"; fail "$name: changed data node message"; }
	echo "ok $name"
done
