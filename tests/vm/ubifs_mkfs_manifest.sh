#!/bin/sh
# ubifs_mkfs_manifest.sh DIR — the tree under DIR, one line per entry, in a
# form that GNU coreutils on the host and busybox in the Linux VM print the
# same: path, type, mode, owner, group, link count, mtime (seconds), then
# md5 (files), target (symlinks), major:minor (devices); directory sizes
# are left out (the host's file system counts them differently). Then
# every xattr (hex), then the root directory itself.
cd "$1" || exit 1
export LC_ALL=C
find . ! -name . | sort | while IFS= read -r p; do
	m=$(stat -c '%a %u %g %h %Y' "$p")
	if [ -L "$p" ]; then
		echo "$p l $m -> $(readlink "$p")"
	elif [ -d "$p" ]; then
		echo "$p d $m"
	elif [ -f "$p" ]; then
		echo "$p f $m $(stat -c %s "$p") $(md5sum <"$p" | cut -c1-32)"
	elif [ -c "$p" ]; then
		echo "$p c $m $(stat -c '%t:%T' "$p")"
	elif [ -b "$p" ]; then
		echo "$p b $m $(stat -c '%t:%T' "$p")"
	elif [ -p "$p" ]; then
		echo "$p p $m"
	elif [ -S "$p" ]; then
		echo "$p s $m"
	else
		echo "$p ? $m"
	fi
done
echo "== xattrs"
find . | sort | while IFS= read -r p; do
	[ -L "$p" ] && continue
	getfattr -h -d -m - -e hex "$p" 2>/dev/null | grep -v '^#' | grep . | sed "s|^|$p |"
done
echo "== root $(stat -c '%a %u %g %Y' .)"
