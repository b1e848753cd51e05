#!/bin/sh
# ubifs_manifest.sh DIR — a listing of a file tree that is the same whether
# it runs under busybox in the Linux VM (over the kernel's UBIFS mount) or
# under GNU tools on the host (over 'ubikit extract' output): per entry the
# path, type, raw mode, links, owner, size, mtime and md5 / link target /
# device numbers, then every xattr (hex values, sorted). Directory sizes and
# link counts are left out (they depend on the host file system).
cd "$1" || exit 1
export LC_ALL=C
find . | sort | while IFS= read -r p; do
	if [ -L "$p" ]; then
		echo "$p l $(stat -c '%f %h %u %g %s %Y' "$p") -> $(readlink "$p")"
	elif [ -d "$p" ]; then
		echo "$p d $(stat -c '%f %u %g %Y' "$p")"
	elif [ -f "$p" ]; then
		echo "$p f $(stat -c '%f %h %u %g %s %Y' "$p") $(md5sum <"$p" | cut -c1-32)"
	elif [ -c "$p" ] || [ -b "$p" ]; then
		echo "$p dev $(stat -c '%f %h %u %g %Y %t:%T' "$p")"
	else
		echo "$p other $(stat -c '%f %h %u %g %Y' "$p")"
	fi
done
echo "== xattrs"
find . | sort | while IFS= read -r p; do
	getfattr -h -d -m - -e hex "$p" 2>/dev/null | grep -v '^#' | grep . | sort | sed "s|^|$p |"
done
exit 0
