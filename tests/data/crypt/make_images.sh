#!/bin/bash
# make_images.sh — (re)generate the authenticated and fscrypt-encrypted UBIFS
# test images in tests/data/crypt/ (issue 12 classes 4 and 5):
#   mkfs.ubifs (Debian mtd-utils) -K/-C images (fscrypt policy v1) and
#   --auth-key/--auth-cert images (sha256, sha512), each ubinized;
#   the Linux VM's view of each encrypted image without the key (its no-key
#   names and symlink targets), stored as NAME.kernel. (The view with the key
#   is not made: the VM's initramfs lacks the xts/cts crypto modules, so
#   the kernel cannot set up the keys; source.manifest is the reference.)
# Not part of the default test run (needs mkfs.ubifs, ubinize, openssl, gcc
# -static and the VM). The source tree is made deterministically here.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../../.." && pwd)
D=$SRC/tests/data/crypt
VM=${LINUX_VM:-$SRC/tests/vm/linux-ubifs-vm}
W=${WORK:-$(mktemp -d)}
MKFS=${MKFS_UBIFS:-/usr/sbin/mkfs.ubifs}
UBINIZE=${UBINIZE:-/usr/sbin/ubinize}
mkdir -p "$W"

# deterministic pseudo-random bytes: AES-CTR of zeros under a fixed key
prng() { head -c "$2" /dev/zero | openssl enc -aes-128-ctr -nosalt -K "$1" -iv 0 2>/dev/null; }

tree() { # DIR
	rm -rf "$1"; mkdir -p "$1/d/sub" "$1/emptydir"
	echo hello >"$1/a.txt"
	: >"$1/empty"
	prng 11 20000 >"$1/d/big.bin"
	prng 22 4096 >"$1/d/sub/block.bin"
	truncate -s 1M "$1/d/sparse"; prng 33 100 | dd of="$1/d/sparse" bs=1 seek=700000 conv=notrunc status=none
	ln -s a.txt "$1/link"
	ln -s d/sub/../big.bin/this/is/a/long/target/xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx "$1/longlink"
	ln "$1/a.txt" "$1/d/hardlink"
	echo 15 >"$1/abcdefghijklmno"; echo 16 >"$1/abcdefghijklmnop"; echo 17 >"$1/abcdefghijklmnopq"
	echo long >"$1/$(printf 'L%.0s' $(seq 1 200))"
	echo max >"$1/d/$(printf 'M%.0s' $(seq 1 255))"
	printf 'x' >"$1/d/sub/one"
	find "$1" -exec touch -h -d '2024-05-06 07:08:09 UTC' {} +
}

# fixed 64-byte keys (fscrypt master keys)
prng 44 64 >"$D/v1.key"
[ "$(stat -c %s "$D/v1.key")" = 64 ]
[ -f "$D/auth-key.pem" ] || openssl req -newkey rsa:2048 -nodes -keyout "$D/auth-key.pem" -x509 -days 36500 \
	-subj /CN=ubikit-test -out "$D/auth-cert.pem" 2>/dev/null

tree "$W/src"
ubinize_img() { # UBIFS-IMG OUT
	printf '[fs]\nmode=ubi\nvol_id=0\nvol_type=dynamic\nvol_name=rootfs\nvol_size=12MiB\nimage=%s\n' "$1" >"$W/ubi.ini"
	"$UBINIZE" -o "$2" -p 128KiB -m 2048 -s 512 -Q 12345 "$W/ubi.ini"
}
MK="-m 2048 -e 129024 -c 100 -F"
# name | mkfs options
CASES="crypt-v1-xts|-K $D/v1.key -b 0123456789abcdef -C AES-256-XTS
crypt-v1-xts-pad16|-K $D/v1.key -b 0123456789abcdef -C AES-256-XTS -P 16 -x zlib
auth-sha256|--hash-algo=sha256 --auth-key=$D/auth-key.pem --auth-cert=$D/auth-cert.pem
auth-sha512|--hash-algo=sha512 --auth-key=$D/auth-key.pem --auth-cert=$D/auth-cert.pem -x zlib"
gcc -static -O2 -o "$W/fscrypt_vm_key" "$SRC/tests/vm/fscrypt_vm_key.c"
cp "$D/vm_view.sh" "$SRC/tests/tools/ubifs_manifest.sh" "$D/v1.key" "$W/"
while IFS='|' read -r name opts; do
	[ $# -gt 0 ] && case " $* " in *" $name "*) ;; *) continue ;; esac
	# shellcheck disable=SC2086
	"$MKFS" $MK -r "$W/src" $opts -o "$W/$name.ubifs" >/dev/null
	ubinize_img "$W/$name.ubifs" "$W/$name.ubi"
	gzip -9 -n -c "$W/$name.ubi" >"$D/$name.ubi.gz"
	case $name in crypt-*)
		"$VM" run --flash "$W/$name.ubi" --nand 2048:64:128KiB:16MiB --no-writeback --timeout 300 --out "$W/$name.run" \
			--copy-in "$W/vm_view.sh" --copy-in "$W/ubifs_manifest.sh" --copy-in "$W/fscrypt_vm_key" --copy-in "$W/v1.key" \
			--cmd "sh \$IN/vm_view.sh \$MNT" >"$W/$name.log" 2>&1 ||
			{ tail -30 "$W/$name.log"; echo "VM run of $name failed" >&2; exit 1; }
		cp "$W/$name.run/script.stdout" "$D/$name.kernel" ;;
	esac
	echo "$name: $(stat -c %s "$D/$name.ubi.gz") bytes gzipped"
done <<<"$CASES"
# the source tree's manifest (what extract with the key must give)
(cd "$W/src" && sh "$SRC/tests/tools/ubifs_manifest.sh" .) >"$D/source.manifest"
# the kernel-style HMAC'd image (superblock/master HMACs, a journal bud with
# authentication nodes) made from auth-sha256 with the fixed HMAC key
[ -f "$D/hmac.key" ] || python3 -c "import hashlib,sys;open(sys.argv[1],'wb').write(hashlib.sha256(b'ubikit UBIFS HMAC test key').digest())" "$D/hmac.key"
gzip -dc "$D/auth-sha256.ubi.gz" >"$W/auth-sha256.ubi"
python3 "$D/make_hmac_image.py" "$W/auth-sha256.ubi" "$D/hmac.key" "$W/auth-hmac-sha256.ubi"
gzip -9 -n -c "$W/auth-hmac-sha256.ubi" >"$D/auth-hmac-sha256.ubi.gz"
