#!/bin/sh
# ubifs_write_manifest.sh DIR — inside the Linux VM (busybox): the tree under
# DIR in the format of the write-path reference model (wm_manifest in
# tests/ubifs/ubifs_write_model.c): path, type, raw mode (hex), links, size
# (directories too: the kernel's accounting), md5 / target / device; then
# every xattr in hex.
cd "$1" || exit 1
export LC_ALL=C
find . ! -name . | while IFS= read -r p; do
	if [ -L "$p" ]; then
		echo "$p l $(stat -c '%f %h %s' "$p") -> $(readlink "$p")"
	elif [ -d "$p" ]; then
		echo "$p d $(stat -c '%f %h %s' "$p")"
	elif [ -f "$p" ]; then
		echo "$p f $(stat -c '%f %h %s' "$p") $(md5sum <"$p" | cut -c1-32)"
	elif [ -c "$p" ]; then
		echo "$p c $(stat -c '%f %h %t:%T' "$p")"
	else
		echo "$p o $(stat -c '%f %h' "$p")"
	fi
done | sort
echo "== xattrs"
find . ! -name . | while IFS= read -r p; do
	[ -L "$p" ] && continue
	getfattr -h -d -m - -e hex "$p" 2>/dev/null | grep -v '^#' | grep . | sed "s|^|$p |"
done | sort
