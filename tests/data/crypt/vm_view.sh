#!/bin/sh
# vm_view.sh MNT [DESC KEYFILE] — run in the Linux VM over an encrypted UBIFS:
# the listing the kernel shows without the key (no-key names, symlink
# targets), then, with KEYFILE added to the file system's keyring as the
# policy v1 key DESC and as a policy v2 key (the kernel prints its
# identifier), the full manifest. Used by make_images.sh; output stored as
# *.kernel.
cd "$1" || exit 1
export LC_ALL=C
echo "== nokey"
find . | sort | while IFS= read -r p; do
	if [ -L "$p" ]; then echo "$p -> $(readlink "$p")"; else echo "$p"; fi
done
if [ -n "$2" ]; then
	"$IN/fscrypt_vm_key" v1add "$1" "$2" "$3" || exit 1
	id=$("$IN/fscrypt_vm_key" v2add "$1" "$3") || exit 1
	echo "== v2 identifier $id"
	cd /; sync; echo 3 >/proc/sys/vm/drop_caches; cd "$1" || exit 1
	echo "== withkey"
	sh "$IN/ubifs_manifest.sh" "$1"
fi
exit 0
