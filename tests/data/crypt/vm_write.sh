#!/bin/sh
# vm_write.sh MNT DESC KEYFILE — run in the Linux VM on a fresh UBIFS: the
# kernel itself encrypts two directories with the master key KEYFILE,
# v1/ (policy v1, descriptor DESC, names padded to 16) and v2/ (policy v2,
# HKDF-SHA512 per-file keys, names padded to 32), both AES-256-XTS contents
# and AES-256-CTS-CBC names, and fills each with the tree in $IN/tree.tar
# plus what tar cannot carry into busybox: a sparse file and xattrs. Prints
# the v2 key identifier the kernel computed and writes the manifest of what
# it wrote to $RESULTS/written.manifest. Used by make_images.sh.
set -e
K=$IN/fscrypt_vm_key
cd "$1"
echo "not encrypted" >plain.txt
mkdir v1 v2
"$K" v1add "$1" "$2" "$3"
"$K" v1set "$1/v1" "$2" 16
id=$("$K" v2add "$1" "$3")
echo "v2 identifier $id"
"$K" v2set "$1/v2" "$id" 32
for d in v1 v2; do
	tar -xf "$IN/tree.tar" -C "$1/$d"
	# a file with a hole: 1 MiB, 100 bytes at 700000, the rest never written
	truncate -s 1048576 "$1/$d/d/sparse"
	dd if="$IN/sparse.part" of="$1/$d/d/sparse" bs=1 seek=700000 conv=notrunc 2>/dev/null
	setfattr -n user.color -v blue "$1/$d/a.txt"
	setfattr -n user.empty "$1/$d/d/sub"
	touch -d '2024-05-06 07:08:09' "$1/$d/d/sparse" "$1/$d/a.txt" "$1/$d/d/sub" "$1/$d/d" "$1/$d"
done
cd /
sync
sh "$IN/ubifs_manifest.sh" "$1" >"$RESULTS/written.manifest"
