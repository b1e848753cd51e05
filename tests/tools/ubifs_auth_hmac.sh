#!/bin/bash
# Authenticated UBIFS with the secret HMAC key (issue 12 class 4): the image
# tests/data/crypt/auth-hmac-sha256 is what the kernel leaves after a
# read-write mount with auth_key= (superblock and master HMACs, a journal bud
# of data nodes and authentication nodes, the last data node written without
# its authentication node: a power cut), made by make_hmac_image.py from the
# mkfs.ubifs image with Python's hashlib/hmac following the kernel's rules
# (the VM's kernel has no CONFIG_UBIFS_FS_AUTHENTICATION). References: the
# HMACs are recomputed here with OpenSSL's command line; the expected file
# content is the source tree's (make_images.sh's prng) with the journal's
# blocks; the outcomes of changed nodes are the kernel's (master.c: a master
# whose HMAC does not verify fails the mount; replay.c authenticate_sleb: an
# authentication node that does not verify fails it, nodes after the last
# authentication node of a head's last bud are not replayed).
set -euo pipefail
. "$(dirname "$0")/ubifs_lib.sh"
S=${UBIKIT_SCRATCH:?}
D=${UBIKIT_SRC:?}/tests/data/crypt
rm -rf "$S"
mkdir -p "$S"
command -v openssl >/dev/null || skip "needs openssl"
is_root || skip "needs root (owners are compared with the source manifest)"
img=$S/h.ubi
gzip -dc "$D/auth-hmac-sha256.ubi.gz" >"$img"
sum0=$(md5sum <"$img")
KEY=$D/hmac.key
hexkey=$(od -An -tx1 -v "$KEY" | tr -d ' \n')
mac() { openssl mac -digest sha256 -macopt "hexkey:$hexkey" -in "$1" HMAC | tr 'A-F' 'a-f'; }

# LEB LNUM of volume 0 as a file (PEB 128 KiB, data at 2048)
leb() { # IMG LNUM OUT
	python3 - "$@" <<'PY'
import sys, struct
b = open(sys.argv[1], 'rb').read()
for o in range(0, len(b), 131072):
    if b[o + 512:o + 516] == b'UBI!' and struct.unpack_from('>II', b, o + 520) == (0, int(sys.argv[2])):
        open(sys.argv[3], 'wb').write(b[o + 2048:o + 131072])
        break
else:
    sys.exit('no LEB ' + sys.argv[2])
PY
}
# IMG OUT LNUM NODE_OFFS BYTE: flip one byte of the node at LNUM:NODE_OFFS
# (BYTE from the node's start; LNUM 1 changes both master copies) and fix
# its CRC, so that only a hash or HMAC can tell
flip() {
	python3 - "$@" <<'PY'
import sys, struct, zlib
b = bytearray(open(sys.argv[1], 'rb').read())
lnums = [int(sys.argv[3])] + ([2] if sys.argv[3] == '1' else [])
done = 0
for o in range(0, len(b), 131072):
    if b[o + 512:o + 516] == b'UBI!':
        vol, lnum = struct.unpack_from('>II', b, o + 520)
        if vol == 0 and lnum in lnums:
            n = o + 2048 + int(sys.argv[4])
            ln = struct.unpack_from('<I', b, n + 16)[0]
            b[n + int(sys.argv[5])] ^= 0x20
            struct.pack_into('<I', b, n + 4, zlib.crc32(bytes(b[n + 8:n + ln])) ^ 0xffffffff)
            done += 1
assert done == len(lnums)
open(sys.argv[2], 'wb').write(b)
PY
}

# --- the HMACs, recomputed with OpenSSL (checks the generator's bytes) ---
leb "$img" 0 "$S/sb"
leb "$img" 1 "$S/mst"
leb "$img" 3 "$S/log"
leb "$img" 13 "$S/bud"
printf UBIFS >"$S/wkm"
[ "$(mac "$S/wkm")" = "$(od -An -tx1 -v -j192 -N32 "$S/sb" | tr -d ' \n')" ] || fail "hmac_wkm differs from openssl's"
{ dd if="$S/sb" bs=1 skip=8 count=120 status=none; dd if="$S/sb" bs=1 skip=160 count=3936 status=none; } >"$S/sb.part"
[ "$(mac "$S/sb.part")" = "$(od -An -tx1 -v -j128 -N32 "$S/sb" | tr -d ' \n')" ] || fail "superblock HMAC differs from openssl's"
{ dd if="$S/mst" bs=1 skip=8 count=288 status=none; dd if="$S/mst" bs=1 skip=328 count=184 status=none; } >"$S/mst.part"
[ "$(mac "$S/mst.part")" = "$(od -An -tx1 -v -j296 -N32 "$S/mst" | tr -d ' \n')" ] || fail "master HMAC differs from openssl's"
# first authentication node (bud 13:4144): HMAC of sha256(CS node, reference node, data node)
{ head -c 32 "$S/log"; dd if="$S/log" bs=1 skip=2048 count=64 status=none; head -c 4144 "$S/bud"; } |
	openssl dgst -sha256 -binary >"$S/h1"
[ "$(mac "$S/h1")" = "$(od -An -tx1 -v -j$((4144 + 24)) -N32 "$S/bud" | tr -d ' \n')" ] ||
	fail "authentication node HMAC differs from openssl's"
echo "ok openssl agrees with the image's HMACs"

# --- expected content: the source's d/big.bin (make_images.sh prng 11) with
# the journal's blocks ---
head -c 20000 /dev/zero | openssl enc -aes-128-ctr -nosalt -K 11 -iv 0 2>/dev/null >"$S/big.src"
expect() { # OUT BLOCKS...
	python3 - "$S/big.src" "$@" <<'PY'
import sys
b = bytearray(open(sys.argv[1], 'rb').read())
for i in map(int, sys.argv[3:]):
    line = b'written to the journal, block %d\n' % i
    b[i * 4096:(i + 1) * 4096] = (line * 200)[:4096]
open(sys.argv[2], 'wb').write(b)
PY
}
expect "$S/big.key" 0 1    # the third block has no authentication node
expect "$S/big.nokey" 0 1 2

# --- the right key: all verified, the uncovered node not replayed ---
"$UBIKIT" extract -q --auth-hmac-key "$KEY" "$img" -o "$S/out" 2>"$S/err" || { cat "$S/err"; fail "extract with the key failed"; }
grep -q "authenticated UBIFS (sha256): verified with the HMAC key: superblock HMAC, master node HMAC, 2 journal authentication nodes; index and node hashes checked as read: the file system is authentic; 1 journal nodes after the last authentication node not replayed (as the kernel)" "$S/err" ||
	{ cat "$S/err"; fail "no note of what the key verified"; }
cmp "$S/out/d/big.bin" "$S/big.key" || fail "with the key: d/big.bin is not the source with journal blocks 0 and 1"
sh "$UBIKIT_SRC/tests/tools/ubifs_manifest.sh" "$S/out" | grep -v '^\./d/big\.bin ' >"$S/actual"
grep -v '^\./d/big\.bin ' "$D/source.manifest" >"$S/expected"
diff -u "$S/expected" "$S/actual" >&2 || fail "with the key: the rest of the tree differs from the source"
# without a key: read as before (HMACs not verified, every journal node replayed)
"$UBIKIT" cat "$img" /d/big.bin 2>"$S/err" | cmp - "$S/big.nokey" || { cat "$S/err"; fail "without the key: d/big.bin"; }
grep -q "HMACs and signature not verified" "$S/err" || { cat "$S/err"; fail "without the key: note"; }
echo "ok right key"

# --- a wrong key ---
printf 'not the key' >"$S/wrong.key"
if "$UBIKIT" ls --auth-hmac-key "$S/wrong.key" "$img" / >/dev/null 2>"$S/err"; then fail "a wrong key was accepted"; fi
grep -q "the HMAC key does not match this file system" "$S/err" || { cat "$S/err"; fail "wrong-key message"; }
echo "ok wrong key"

# --- changed nodes (valid CRCs): the kernel's outcome ---
# superblock: a padding byte (HMAC'd, not hashed anywhere else)
flip "$img" "$S/sb.ubi" 0 0 4000
"$UBIKIT" ls "$S/sb.ubi" / >/dev/null 2>&1 || fail "changed superblock: does not read without the key"
if "$UBIKIT" ls --auth-hmac-key "$KEY" "$S/sb.ubi" / >/dev/null 2>"$S/err"; then fail "changed superblock accepted"; fi
grep -q "the superblock at LEB 0:0 does not match its HMAC" "$S/err" || { cat "$S/err"; fail "changed superblock message"; }
# master node (both copies): a padding byte after the HMAC
flip "$img" "$S/mst.ubi" 1 0 400
"$UBIKIT" ls "$S/mst.ubi" / >/dev/null 2>&1 || fail "changed master: does not read without the key"
if "$UBIKIT" ls --auth-hmac-key "$KEY" "$S/mst.ubi" / >/dev/null 2>"$S/err"; then fail "changed master accepted"; fi
grep -q "the master node at LEB 1:0 does not match its HMAC" "$S/err" || { cat "$S/err"; fail "changed master message"; }
# a journal node covered by an authentication node: the mount fails
flip "$img" "$S/j0.ubi" 13 0 100
"$UBIKIT" ls "$S/j0.ubi" / >/dev/null 2>&1 || fail "changed journal node: does not read without the key"
if "$UBIKIT" ls --auth-hmac-key "$KEY" "$S/j0.ubi" / >/dev/null 2>"$S/err"; then fail "changed covered journal node accepted"; fi
grep -q "the authentication node at bud LEB 13:4144 does not match the journal nodes before it" "$S/err" ||
	{ cat "$S/err"; fail "changed journal node message"; }
# the node after the last authentication node: not replayed, changed or not
flip "$img" "$S/j2.ubi" 13 8400 100
"$UBIKIT" cat --auth-hmac-key "$KEY" "$S/j2.ubi" /d/big.bin 2>"$S/err" | cmp - "$S/big.key" ||
	{ cat "$S/err"; fail "uncovered journal node: not dropped"; }
# a second bud of the same head after it: the uncovered node is then not
# at the end of the head's last bud, and the mount fails (authenticate_sleb)
python3 - "$img" "$S/2bud.ubi" <<'PY'
import sys, struct, zlib
crc = lambda b: zlib.crc32(b) ^ 0xffffffff
b = bytearray(open(sys.argv[1], 'rb').read())
def leb(n):
    for o in range(0, len(b), 131072):
        if b[o + 512:o + 516] == b'UBI!' and struct.unpack_from('>II', b, o + 520) == (0, n):
            return o + 2048
def node(t, ln, sq):
    x = bytearray(ln)
    struct.pack_into('<IIQIB', x, 0, 0x06101831, 0, sq, ln, t)
    return x
def fix(x):
    struct.pack_into('<I', x, 4, crc(bytes(x[8:struct.unpack_from('<I', x, 16)[0]])))
lo = leb(3)
assert b[lo + 4096:lo + 6144] == b'\xff' * 2048
ref = node(8, 64, 10**6)
struct.pack_into('<III', ref, 24, 14, 0, 2)
fix(ref)
pad = node(5, 28, 0)
struct.pack_into('<I', pad, 24, 2048 - 64 - 28)
fix(pad)
b[lo + 4096:lo + 6144] = ref + pad + bytes(2048 - 64 - 28)
dn = bytearray(b[leb(13):leb(13) + 4144])  # a copy of the first data node
struct.pack_into('<Q', dn, 8, 10**6 + 1)
fix(dn)
pad = node(5, 28, 0)
struct.pack_into('<I', pad, 24, 6144 - 4144 - 28)
fix(pad)
peb = bytearray(b'\xff' * 131072)
peb[0:64] = b[0:64]
vid = bytearray(b[leb(13) - 2048 + 512:leb(13) - 2048 + 576])
struct.pack_into('>I', vid, 12, 14)
struct.pack_into('>Q', vid, 40, struct.unpack_from('>Q', vid, 40)[0] + 1)
struct.pack_into('>I', vid, 60, crc(bytes(vid[:60])))
peb[512:576] = vid
peb[2048:2048 + 6144] = dn + pad + bytes(6144 - 4144 - 28)
open(sys.argv[2], 'wb').write(b + peb)
PY
"$UBIKIT" ls "$S/2bud.ubi" / >/dev/null 2>&1 || fail "two buds: does not read without the key"
if "$UBIKIT" ls --auth-hmac-key "$KEY" "$S/2bud.ubi" / >/dev/null 2>"$S/err"; then fail "two buds: uncovered node accepted"; fi
grep -q "1 nodes at the end of bud LEB 13 (journal head 2) are not covered by an authentication node, and it is not the last bud of its head" "$S/err" ||
	{ cat "$S/err"; fail "two buds: message"; }
echo "ok changed nodes"

# --- a key for file systems that carry no HMAC ---
gzip -dc "$D/crypt-v1-xts.ubi.gz" >"$S/plain.ubi"
if "$UBIKIT" ls --auth-hmac-key "$KEY" "$S/plain.ubi" / >/dev/null 2>"$S/err"; then fail "key for a plain image accepted"; fi
grep -q "an HMAC key was given, but this UBIFS is not authenticated" "$S/err" || { cat "$S/err"; fail "plain image message"; }
# mkfs.ubifs's image is signed, not HMAC'd: the key cannot be checked against it
gzip -dc "$D/auth-sha256.ubi.gz" >"$S/signed.ubi"
"$UBIKIT" ls --auth-hmac-key "$KEY" "$S/signed.ubi" / >/dev/null 2>"$S/err" || { cat "$S/err"; fail "signed image with a key"; }
grep -q "verified with the HMAC key: superblock signed offline, signature not verified (no --auth-cert), master node hash, 0 journal authentication nodes" "$S/err" ||
	{ cat "$S/err"; fail "signed image with a key: note"; }
"$UBIKIT" ls --auth-hmac-key "$KEY" --auth-cert "$D/auth-cert.pem" "$S/signed.ubi" / >/dev/null 2>"$S/err" ||
	{ cat "$S/err"; fail "signed image with a key and the certificate"; }
grep -q "superblock signature (certificate), master node hash, 0 journal authentication nodes; index and node hashes checked as read: the file system is authentic" "$S/err" ||
	{ cat "$S/err"; fail "signed image with a key and the certificate: note"; }
echo "ok key without HMACs"
[ "$(md5sum <"$img")" = "$sum0" ] || fail "reading modified the image"
echo "ok"
