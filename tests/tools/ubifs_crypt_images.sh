#!/bin/bash
# fscrypt-encrypted UBIFS (issue 12 class 5): images made by Debian's
# mkfs.ubifs -K v1.key -C AES-256-XTS (policy v1; padding 4 and 16),
# tests/data/crypt, made by make_images.sh, which also stored what the Linux
# 6.1 kernel in the VM lists without the key (NAME.kernel: its no-key names
# and symlink targets).
#  - without the key: 'ls -R' gives exactly the kernel's names, extract the
#    kernel's symlink targets, encrypted non-empty files are skipped with one
#    summary line (no error), 'cat' fails naming the missing key;
#  - with --key: extract equals the source tree (source.manifest);
#  - with a wrong key: extract fails, saying the key looks wrong.
# crypt-kernel: directories the kernel encrypted itself, policies v1 and v2
# (the only v2 reference): ls/extract without the key give the kernel's
# no-key view, extract with the key its view with the key (see below).
# Damaged encryption contexts are refused as fscrypt's policy rules say.
set -euo pipefail
. "$(dirname "$0")/ubifs_lib.sh"
S=${UBIKIT_SCRATCH:?}
D=${UBIKIT_SRC:?}/tests/data/crypt
rm -rf "$S"
mkdir -p "$S"
is_root || skip "needs root (owners are compared with the source manifest)"
for name in crypt-v1-xts crypt-v1-xts-pad16; do
	img=$S/$name.ubi
	gzip -dc "$D/$name.ubi.gz" >"$img"
	sum0=$(md5sum <"$img")
	# the kernel's view without the key
	sed -n '/^== nokey/,/^== v2 identifier/p' "$D/$name.kernel" | sed '1d;$d' >"$S/kernel.view"
	sed 's/ -> .*//' "$S/kernel.view" | grep -v '^\.$' | LC_ALL=C sort >"$S/kernel.paths"
	"$UBIKIT" ls -R "$img" / 2>/dev/null | awk '
		/^$/ { next }
		/:$/ { d = substr($0, 1, length($0) - 1); if (d == "/") d = ""; next }
		{ print "." d "/" $0 }' | LC_ALL=C sort >"$S/ls.paths"
	diff -u "$S/kernel.paths" "$S/ls.paths" >&2 || fail "$name: ls -R without the key differs from the kernel's no-key names"
	rm -rf "$S/nokey"
	"$UBIKIT" extract "$img" -o "$S/nokey" 2>"$S/err" || { cat "$S/err"; fail "$name: extract without the key failed"; }
	# mkfs.ubifs 2.1.5 leaves hard-linked files unencrypted (no CRYPT_FL, plain data): they are extracted
	nfiles=$(awk '$2 == "f" && $7 != 0 && $4 == 1' "$D/source.manifest" | wc -l)
	grep -q "^skipped $nfiles encrypted files" "$S/err" || { cat "$S/err"; fail "$name: no summary of $nfiles skipped files"; }
	[ "$(grep -c '^ubikit' "$S/err" || true)" = 0 ] || { cat "$S/err"; fail "$name: errors without the key"; }
	(cd "$S/nokey" && find . -type l | LC_ALL=C sort | while IFS= read -r p; do echo "$p -> $(readlink "$p")"; done) >"$S/links"
	grep -- ' -> ' "$S/kernel.view" | LC_ALL=C sort >"$S/kernel.links"
	diff -u "$S/kernel.links" "$S/links" >&2 || fail "$name: symlink targets without the key differ from the kernel's"
	# cat of an encrypted file (one the no-key extract skipped) fails naming the key
	p=$(while IFS= read -r q; do [ -e "$S/nokey/$q" ] || { echo "${q#.}"; break; }; done <"$S/kernel.paths")
	[ -n "$p" ] || fail "$name: no skipped file"
	if "$UBIKIT" cat "$img" "$p" >/dev/null 2>"$S/err"; then fail "$name: cat of an encrypted file without the key worked"; fi
	grep -q "is encrypted (fscrypt) and no key was given" "$S/err" || { cat "$S/err"; fail "$name: cat without key message"; }
	# with the key: the source tree
	rm -rf "$S/out"
	"$UBIKIT" extract -q --key "$D/v1.key" "$img" -o "$S/out" 2>"$S/err" || { cat "$S/err"; fail "$name: extract with the key failed"; }
	sh "$UBIKIT_SRC/tests/tools/ubifs_manifest.sh" "$S/out" >"$S/$name.actual"
	diff -u "$D/source.manifest" "$S/$name.actual" >&2 || fail "$name: extract with the key differs from the source tree"
	# and the kernel's view with the key, but for the two hard-linked files
	# mkfs.ubifs left unencrypted: the kernel refuses to open them
	# ("Inconsistent encryption context", EPERM; empty md5 in its view)
	sed -n '/^== withkey/,$p' "$D/$name.kernel" | sed 1d >"$S/kernel.withkey"
	awk '$2 == "f" && NF == 8 { print $1 }' "$S/kernel.withkey" >"$S/refused"
	[ "$(tr '\n' ' ' <"$S/refused")" = "./a.txt ./d/hardlink " ] || { cat "$S/refused"; fail "$name: files the kernel refused"; }
	awk 'NR == FNR { r[$1] = 1; next } $2 == "f" && ($1 in r) { $NF = "" } 1' "$S/refused" "$S/$name.actual" >"$S/actual.cmp"
	diff -u "$S/kernel.withkey" "$S/actual.cmp" >&2 || fail "$name: extract with the key differs from the kernel's view with the key"
	"$UBIKIT" cat --key "$D/v1.key" "$img" /d/big.bin | cmp - "$S/out/d/big.bin" || fail "$name: cat with the key differs"
	# a wrong key
	head -c 64 /dev/zero | tr '\0' 'k' >"$S/wrong.key"
	rm -rf "$S/wrong"
	if "$UBIKIT" extract -q --key "$S/wrong.key" "$img" -o "$S/wrong" 2>"$S/err"; then fail "$name: a wrong key was not noticed"; fi
	grep -q "wrong fscrypt key?" "$S/err" || { head -3 "$S/err"; fail "$name: wrong-key message"; }
	[ "$(md5sum <"$img")" = "$sum0" ] || fail "$name: the image was modified"
	echo "ok $name ($(wc -l <"$S/kernel.paths") entries)"
done

# crypt-kernel: encrypted by the Linux 6.1 kernel itself (make_images.sh,
# vm_write.sh): v1/ under policy v1 (names padded to 16), v2/ under policy v2
# (HKDF-SHA512 per-file keys, names padded to 32), both from v1.key, plus a
# plain file at the top. crypt-kernel.kernel holds the kernel's views after
# a new boot: without the key (no-key names, symlink targets) and with it
# (ubifs_manifest.sh: names, modes, owners, sizes, mtimes, md5 of contents,
# symlink targets, xattrs).
name=crypt-kernel
img=$S/$name.img
gzip -dc "$D/$name.img.gz" >"$img"
sum0=$(md5sum <"$img")
sed -n '/^== nokey/,/^== v2 identifier/p' "$D/$name.kernel" | sed '1d;$d' >"$S/kernel.view"
sed -n '/^== withkey/,$p' "$D/$name.kernel" | sed 1d >"$S/kernel.withkey"
[ -s "$S/kernel.view" ] && [ -s "$S/kernel.withkey" ] || fail "$name: kernel views missing"
sed 's/ -> .*//' "$S/kernel.view" | grep -v '^\.$' | LC_ALL=C sort >"$S/kernel.paths"
"$UBIKIT" ls -R "$img" / 2>/dev/null | awk '
	/^$/ { next }
	/:$/ { d = substr($0, 1, length($0) - 1); if (d == "/") d = ""; next }
	{ print "." d "/" $0 }' | LC_ALL=C sort >"$S/ls.paths"
diff -u "$S/kernel.paths" "$S/ls.paths" >&2 || fail "$name: ls -R without the key differs from the kernel's no-key names"
# without the key: the kernel's names and symlink targets; only the plain file's contents
rm -rf "$S/nokey"
"$UBIKIT" extract "$img" -o "$S/nokey" 2>"$S/err" || { cat "$S/err"; fail "$name: extract without the key failed"; }
(cd "$S/nokey" && find . | LC_ALL=C sort | while IFS= read -r p; do
	if [ -L "$p" ]; then echo "$p -> $(readlink "$p")"; else echo "$p"; fi
done) | grep -v '^\.$' >"$S/nokey.view"
# extract skips encrypted non-empty regular files (no file made): the kernel's view without them
nfiles=$(awk '$2 == "f" && $7 != 0 && $1 ~ /^\.\/v[12]\//' "$S/kernel.withkey" | wc -l)
grep -q "^skipped $nfiles encrypted files" "$S/err" || { cat "$S/err"; fail "$name: no summary of $nfiles skipped files"; }
while IFS= read -r p; do
	q=${p%% -> *}
	[ -e "$S/nokey/$q" ] || [ -L "$S/nokey/$q" ] || continue
	echo "$p"
done <"$S/kernel.view" | grep -v '^\.$' >"$S/kernel.present"
diff -u "$S/kernel.present" "$S/nokey.view" >&2 || fail "$name: extract without the key differs from the kernel's no-key view"
[ "$(grep -c ' -> ' "$S/nokey.view")" = 6 ] || fail "$name: expected 6 symlinks without the key"
cmp -s "$S/nokey/plain.txt" <(echo "not encrypted") || fail "$name: the plain file"
# with the key: exactly the kernel's view with the key
rm -rf "$S/out"
"$UBIKIT" extract -q --key "$D/v1.key" "$img" -o "$S/out" 2>"$S/err" || { cat "$S/err"; fail "$name: extract with the key failed"; }
sh "$UBIKIT_SRC/tests/tools/ubifs_manifest.sh" "$S/out" >"$S/$name.actual"
diff -u "$S/kernel.withkey" "$S/$name.actual" >&2 || fail "$name: extract with the key differs from the kernel's view with the key"
for v in v1 v2; do
	"$UBIKIT" cat --key "$D/v1.key" "$img" /$v/d/numbers.txt | cmp - <(seq 1 6000) || fail "$name: cat $v/d/numbers.txt with the key"
	"$UBIKIT" ls -l --key "$D/v1.key" "$img" /$v/d/sub 2>/dev/null | grep -q " 283 .* longtarget -> \(target/\)\{40\}end$" ||
		fail "$name: ls of the $v long symlink with the key"
done
rm -rf "$S/wrong"
if "$UBIKIT" extract -q --key "$S/wrong.key" "$img" -o "$S/wrong" 2>"$S/err"; then fail "$name: a wrong key was not noticed"; fi
grep -q "wrong fscrypt key?" "$S/err" || { head -3 "$S/err"; fail "$name: wrong-key message"; }
# policy v2 names its key by identifier (HKDF-SHA512 of it): a wrong key is
# refused naming the identifier the kernel computed and stored
kid=$(sed -n 's/^== v2 identifier //p' "$D/$name.kernel")
[ ${#kid} = 32 ] || fail "$name: no v2 identifier in the kernel's view"
if "$UBIKIT" ls --key "$S/wrong.key" "$img" /v2 >/dev/null 2>"$S/err"; then fail "$name: ls /v2 with a wrong key worked"; fi
grep -q "not its master key (policy v2 key identifier $kid; the key's is [0-9a-f]\{32\})" "$S/err" ||
	{ cat "$S/err"; fail "$name: v2 wrong-key message"; }
[ "$(md5sum <"$img")" = "$sum0" ] || fail "$name: the image was modified"
echo "ok $name ($(wc -l <"$S/kernel.paths") entries, policies v1 and v2, kernel-encrypted)"

# damaged encryption contexts (the xattr "c" of each encrypted inode, node
# CRCs made valid again): fscrypt's own rules (fs/crypto/policy.c) take
# only contexts v1 (28 bytes) and v2 (40 bytes), AES-256-XTS contents with
# AES-256-CTS names here, and the padding flags: each change is refused
# with the key given, naming the inode and what is not supported
ctx_flip() { # IN OUT BYTE VALUE: set BYTE of every v1/v2 context to VALUE
	python3 - "$@" <<'PY'
import struct, sys, zlib
src, dst, byte, val = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4], 0)
b = bytearray(open(src, 'rb').read())
n, magic = 0, b'\x31\x18\x10\x06'
i = b.find(magic)
while i >= 0:
    if b[i + 20] == 0 and i + 200 < len(b):  # an inode node (spec §5)
        ln, dl = struct.unpack_from('<I', b, i + 16)[0], struct.unpack_from('<I', b, i + 112)[0]
        d = i + 160
        if (ln, dl) in ((188, 28), (200, 40)) and b[d] == (1 if dl == 28 else 2) and b[d + 1:d + 3] == b'\x01\x04':
            b[d + byte] = val
            struct.pack_into('<I', b, i + 4, zlib.crc32(bytes(b[i + 8:i + ln])) ^ 0xffffffff)
            n += 1
    i = b.find(magic, i + 8)
assert n >= 10, 'only %d contexts found' % n
open(dst, 'wb').write(b)
PY
}
gzip -dc "$D/crypt-v1-xts.ubi.gz" >"$S/v1.ubi"
ctx_flip "$S/v1.ubi" "$S/bad.ubi" 0 3
expect_fail 1 "/d: inode [0-9]+: unknown fscrypt context \(version 3, 28 bytes\)" "$UBIKIT" ls --key "$D/v1.key" "$S/bad.ubi" /d
ctx_flip "$S/v1.ubi" "$S/bad.ubi" 1 9
expect_fail 1 "inode [0-9]+: fscrypt modes 9/4 flags 0x0 not supported" "$UBIKIT" extract -q --key "$D/v1.key" "$S/bad.ubi" -o "$S/bad"
ctx_flip "$S/v1.ubi" "$S/bad.ubi" 3 0x10
expect_fail 1 "inode [0-9]+: fscrypt modes 1/4 flags 0x10 not supported" "$UBIKIT" cat --key "$D/v1.key" "$S/bad.ubi" /d/big.bin
ctx_flip "$img" "$S/bad.img" 2 9
expect_fail 1 "/v2: .*inode [0-9]+: fscrypt modes 1/9 flags 0x3 not supported" "$UBIKIT" ls --key "$D/v1.key" "$S/bad.img" /v2
echo "ok damaged encryption contexts refused"
