#!/bin/bash
# make_images.sh — (re)generate the authenticated and fscrypt-encrypted UBIFS
# test images in tests/data/crypt/ (issue 12 classes 4 and 5):
#   mkfs.ubifs (Debian mtd-utils) -K/-C images (fscrypt policy v1) and
#   --auth-key/--auth-cert images (sha256, sha512), each ubinized;
#   the Linux VM's view of each encrypted image without the key (its no-key
#   names and symlink targets) and with it (ubifs_manifest.sh), stored as
#   NAME.kernel;
#   crypt-kernel: an image the Linux kernel encrypted itself (VM run 1,
#   vm_write.sh: a fresh UBIFS with v1/ and v2/ directories, fscrypt
#   policies v1 and v2, both under v1.key), then its view without and with
#   the key after a new boot (VM run 2, vm_view.sh), stored as
#   crypt-kernel.kernel; run 2's view with the key must equal what run 1
#   wrote.
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
			--cmd "sh \$IN/vm_view.sh \$MNT 0123456789abcdef \$IN/v1.key" >"$W/$name.log" 2>&1 ||
			{ tail -30 "$W/$name.log"; echo "VM run of $name failed" >&2; exit 1; }
		cp "$W/$name.run/script.stdout" "$D/$name.kernel" ;;
	esac
	echo "$name: $(stat -c %s "$D/$name.ubi.gz") bytes gzipped"
done <<<"$CASES"

# the kernel's own encrypted tree: the same tree plus a compressible
# multi-block file and a symlink target longer than 149 bytes (the sparse
# file and the xattrs are made in the VM)
if [ $# = 0 ] || case " $* " in *" crypt-kernel "*) true ;; *) false ;; esac; then
	name=crypt-kernel
	tree "$W/ksrc"
	seq 1 6000 >"$W/ksrc/d/numbers.txt"
	ln -s "$(printf 'target/%.0s' $(seq 1 40))end" "$W/ksrc/d/sub/longtarget"
	prng 33 100 >"$W/sparse.part"
	rm "$W/ksrc/d/sparse"
	find "$W/ksrc" -exec touch -h -d '2024-05-06 07:08:09 UTC' {} +
	tar -cf "$W/tree.tar" -C "$W/ksrc" --owner=0 --group=0 --numeric-owner .
	cp "$D/vm_write.sh" "$W/"
	rm -f "$W/$name.img"
	KVM="--nand 2048:64:128KiB:16MiB --timeout 300 --copy-in $W/fscrypt_vm_key --copy-in $W/v1.key --copy-in $W/ubifs_manifest.sh"
	# shellcheck disable=SC2086
	"$VM" run --flash "$W/$name.img" $KVM --format-fresh --out "$W/$name.run1" \
		--copy-in "$W/vm_write.sh" --copy-in "$W/tree.tar" --copy-in "$W/sparse.part" \
		--cmd "sh \$IN/vm_write.sh \$MNT 0123456789abcdef \$IN/v1.key" >"$W/$name.log1" 2>&1 ||
		{ tail -30 "$W/$name.log1"; cat "$W/$name.run1/script.stderr"; echo "VM run 1 of $name failed" >&2; exit 1; }
	# shellcheck disable=SC2086
	"$VM" run --flash "$W/$name.img" $KVM --no-writeback --out "$W/$name.run2" --copy-in "$W/vm_view.sh" \
		--cmd "sh \$IN/vm_view.sh \$MNT 0123456789abcdef \$IN/v1.key" >"$W/$name.log2" 2>&1 ||
		{ tail -30 "$W/$name.log2"; echo "VM run 2 of $name failed" >&2; exit 1; }
	sed -n '/^== withkey/,$p' "$W/$name.run2/script.stdout" | sed 1d >"$W/$name.withkey"
	diff -u "$W/$name.run1/files/written.manifest" "$W/$name.withkey" >&2 ||
		{ echo "$name: the kernel's view after a new boot differs from what it wrote" >&2; exit 1; }
	grep -q "^v2 identifier $(sed -n 's/^== v2 identifier //p' "$W/$name.run2/script.stdout")\$" \
		"$W/$name.run1/script.stdout" || { echo "$name: v2 identifiers differ" >&2; exit 1; }
	cp "$W/$name.run2/script.stdout" "$D/$name.kernel"
	gzip -9 -n -c "$W/$name.img" >"$D/$name.img.gz"
	echo "$name: $(stat -c %s "$D/$name.img.gz") bytes gzipped"
fi
# the source tree's manifest (what extract with the key must give)
(cd "$W/src" && sh "$SRC/tests/tools/ubifs_manifest.sh" .) >"$D/source.manifest"
# the kernel-style HMAC'd image (superblock/master HMACs, a journal bud with
# authentication nodes) made from auth-sha256 with the fixed HMAC key
[ -f "$D/hmac.key" ] || python3 -c "import hashlib,sys;open(sys.argv[1],'wb').write(hashlib.sha256(b'ubikit UBIFS HMAC test key').digest())" "$D/hmac.key"
gzip -dc "$D/auth-sha256.ubi.gz" >"$W/auth-sha256.ubi"
python3 "$D/make_hmac_image.py" "$W/auth-sha256.ubi" "$D/hmac.key" "$W/auth-hmac-sha256.ubi"
gzip -9 -n -c "$W/auth-hmac-sha256.ubi" >"$D/auth-hmac-sha256.ubi.gz"
