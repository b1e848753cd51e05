#!/bin/bash
# Authenticated UBIFS (issue 12 class 4): images made by Debian's mkfs.ubifs
# with --hash-algo sha256/sha512 --auth-key --auth-cert (tests/data/crypt,
# made by make_images.sh). Read without any key: 'ubikit extract' gives the
# source tree (source.manifest), a note says that hashes, HMACs and the
# signature were not verified; a read-write mount is refused with a clear
# message; the image is never modified. With --auth-cert the superblock's
# PKCS#7 signature is verified; OpenSSL's own `openssl cms -verify` on the
# same bytes is the reference: both accept the signer's certificate, both
# refuse another one and a superblock changed behind a valid CRC; damaged
# signature nodes are refused as the kernel's ubifs_sb_verify_signature
# does (magic, length, CRC, type, not CMS). (The VM's
# kernel has no CONFIG_UBIFS_FS_AUTHENTICATION, so there are no kernel-made
# ones.)
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
	# --- the signature, with OpenSSL's command line as the reference ---
	other=$S/other-cert.pem
	[ -f "$other" ] || openssl req -newkey rsa:2048 -nodes -keyout "$S/other-key.pem" -x509 -days 2 \
		-subj /CN=not-the-signer -out "$other" 2>/dev/null
	# the UBIFS superblock (LEB 0 of volume 0: 4096 bytes) and the DER
	# signature of the signature node after it; SB_POKE changes a padding
	# byte of the superblock and fixes its CRC (only the signature sees it)
	sb_parts() { # IMG OUTPREFIX [poke]
		python3 - "$@" <<'PY'
import sys, struct, zlib
b = bytearray(open(sys.argv[1], 'rb').read())
peb = 0
while True:  # find the PEB size: the second EC header
    peb = b.index(b'UBI#', peb + 1)
    if peb % 512 == 0:
        break
vid_off, data_off = struct.unpack_from('>II', b, 16)
p = 0
while p < len(b):
    if b[p:p + 4] == b'UBI#' and b[p + vid_off:p + vid_off + 4] == b'UBI!':
        vol, lnum = struct.unpack_from('>II', b, p + vid_off + 8)
        if vol == 0 and lnum == 0:
            break
    p += peb
leb0 = p + data_off
sb = b[leb0:leb0 + 4096]
if len(sys.argv) > 3:
    sb[4000] ^= 0x5a
    struct.pack_into('<I', sb, 4, ~zlib.crc32(bytes(sb[8:4096])) & 0xffffffff)
    b[leb0:leb0 + 4096] = sb
    open(sys.argv[1] + '.poked', 'wb').write(b)
sig = b[leb0 + 4096:leb0 + 4096 + 4096]
assert sig[20] == 13, 'no signature node after the superblock'
ln = struct.unpack_from('<I', sig, 16)[0]
open(sys.argv[2] + '.sb', 'wb').write(sb)
open(sys.argv[2] + '.sig', 'wb').write(sig[64:ln])
PY
	}
	ossl_ok() { # PREFIX CERT
		openssl cms -verify -binary -inform DER -in "$1.sig" -content "$1.sb" -certfile "$2" -nointern \
			-noverify -out /dev/null 2>/dev/null
	}
	sb_parts "$img" "$S/ref"
	ossl_ok "$S/ref" "$D/auth-cert.pem" || fail "$name: openssl does not verify the signature with the signer's certificate"
	rm -rf "$S/out"
	"$UBIKIT" extract -q --auth-cert "$D/auth-cert.pem" "$img" -o "$S/out" 2>"$S/err" ||
		{ cat "$S/err"; fail "$name: extract with the signer's certificate failed"; }
	grep -q "superblock signature verified with the certificate, master node hash, index and node hashes checked as read: the committed file system is authentic" "$S/err" ||
		{ cat "$S/err"; fail "$name: no note that the signature was verified"; }
	sh "$UBIKIT_SRC/tests/tools/ubifs_manifest.sh" "$S/out" >"$S/$name.actual"
	diff -u "$D/source.manifest" "$S/$name.actual" >&2 || fail "$name: extract with --auth-cert differs"
	# DER works as PEM does
	openssl x509 -in "$D/auth-cert.pem" -outform DER -out "$S/cert.der"
	"$UBIKIT" ls --auth-cert "$S/cert.der" "$img" / >/dev/null 2>&1 || fail "$name: a DER certificate was refused"
	# another certificate: both refuse
	if ossl_ok "$S/ref" "$other"; then fail "$name: openssl verified with another certificate (bad reference)"; fi
	if "$UBIKIT" ls --auth-cert "$other" "$img" / >/dev/null 2>"$S/err"; then fail "$name: another certificate was accepted"; fi
	grep -q "the superblock's signature does not verify with this certificate" "$S/err" ||
		{ cat "$S/err"; fail "$name: wrong-certificate message"; }
	# a superblock changed behind a valid CRC: read without a certificate
	# (the superblock's padding is not hashed), refused with one, by both
	sb_parts "$img" "$S/poked" poke
	if ossl_ok "$S/poked" "$D/auth-cert.pem"; then fail "$name: openssl verified a changed superblock (bad reference)"; fi
	"$UBIKIT" ls "$img.poked" / >/dev/null 2>&1 || fail "$name: the poked image does not read without a certificate"
	if "$UBIKIT" ls --auth-cert "$D/auth-cert.pem" "$img.poked" / >/dev/null 2>"$S/err"; then
		fail "$name: a changed superblock passed the signature check"
	fi
	grep -q "does not verify with this certificate" "$S/err" || { cat "$S/err"; fail "$name: changed-superblock message"; }
	echo "ok $name"
done
# a certificate for a file system that is not authenticated, and one that is not a certificate
"$UBIKIT" mkfs -r "$UBIKIT_SRC/tests/data/crypt" -m 2048 -e 126976 -c 64 -o "$S/plain.img" >/dev/null
if "$UBIKIT" ls --auth-cert "$D/auth-cert.pem" "$S/plain.img" / >/dev/null 2>"$S/err"; then fail "plain image: --auth-cert accepted"; fi
grep -q "a certificate was given, but this UBIFS is not authenticated" "$S/err" || { cat "$S/err"; fail "plain image: message"; }
if "$UBIKIT" ls --auth-cert "$D/source.manifest" "$S/auth-sha256.ubi" / >/dev/null 2>"$S/err"; then fail "a text file was taken as a certificate"; fi
grep -q "certificate: not an X.509 certificate (PEM or DER)" "$S/err" || { cat "$S/err"; fail "bad certificate message"; }
echo "ok certificate errors"
# a damaged signature node (LEB 0 after the superblock): the kernel's
# ubifs_sb_verify_signature takes only a signature node (type 13) with a
# good CRC, a length that holds the signature, type 1 (PKCS#7) and a CMS
# structure inside; OpenSSL's command line refuses the changed DER too
sig_damage() { # IN OUT MODE
	python3 - "$@" <<'PY'
import struct, sys, zlib
b = bytearray(open(sys.argv[1], 'rb').read())
i = 0
while True:  # the superblock node, then the signature node 4096 bytes after it
    i = b.index(b'\x31\x18\x10\x06', i)
    if b[i + 20] == 6 and b[i + 4096:i + 4100] == b'\x31\x18\x10\x06' and b[i + 4096 + 20] == 13:
        break
    i += 4
n = i + 4096
ln = struct.unpack_from('<I', b, n + 16)[0]
mode = sys.argv[3]
if mode == 'magic':
    b[n:n + 4] = b'\0\0\0\0'
elif mode == 'len':
    struct.pack_into('<I', b, n + 16, 63)
elif mode == 'type':
    struct.pack_into('<I', b, n + 24, 2)
elif mode in ('crc', 'der'):
    b[n + 64] ^= 0x01  # the DER's first byte: SEQUENCE 0x30 becomes 0x31
open(sys.argv[4] if len(sys.argv) > 4 else sys.argv[2] + '.der', 'wb').write(bytes(b[n + 64:n + ln]))
if mode not in ('magic', 'crc'):
    end = n + struct.unpack_from('<I', b, n + 16)[0]
    struct.pack_into('<I', b, n + 4, zlib.crc32(bytes(b[n + 8:max(end, n + 24)])) ^ 0xffffffff)
open(sys.argv[2], 'wb').write(b)
PY
}
img=$S/auth-sha256.ubi
sig_damage "$img" "$S/sig.ubi" der
if openssl cms -cmsout -inform DER -in "$S/sig.ubi.der" >/dev/null 2>&1; then fail "openssl parsed the changed signature (bad reference)"; fi
for m in "magic:no signature node at LEB 0:4096" "len:signature node at LEB 0:4096: length 63" \
	"crc:signature node at LEB 0:4096: bad CRC" "type:signature type 2 at LEB 0:4096, expected 1 \(PKCS#7\)" \
	"der:the signature at LEB 0:4160 is not a PKCS#7/CMS structure"; do
	sig_damage "$img" "$S/sig.ubi" "${m%%:*}"
	expect_fail 1 "${m#*:}" "$UBIKIT" ls --auth-cert "$D/auth-cert.pem" "$S/sig.ubi" /
	"$UBIKIT" ls "$S/sig.ubi" / >/dev/null 2>&1 || fail "signature ${m%%:*}: the image does not read without a certificate"
done
echo "ok damaged signature nodes"
