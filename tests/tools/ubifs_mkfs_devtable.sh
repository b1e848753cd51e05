#!/bin/bash
# `ubikit mkfs -D TABLE` against mkfs.ubifs -D with the same table and tree
# (mtd-utils is the reference):
#  - tables both accept: the root's attributes, new directories, devices
#    (one and ranges with and without an increment), fifos, attributes of
#    the tree's directories, files and symlinks, comments, blank lines and
#    leading blanks: the two images extract to the same tree (types, modes,
#    owners, rdev, sizes, md5s, link targets, hard-link groups, 100 of
#    them; times left out: made entries get "now", or SOURCE_DATE_EPOCH
#    when set);
#  - tables both refuse (ubikit names the table, the line and the reason,
#    and leaves no output): a name given twice (also through a range), a
#    link mode other than 777, a device or fifo of the tree, a name of
#    another type, a file or link not in the tree, an increment without a
#    count, '//', '.', '..' and a trailing '/', an unknown type, a missing
#    table;
#  - entries mkfs.ubifs drops without a word (a directory not in the tree,
#    a path under a file): ubikit refuses them by name, and mkfs.ubifs's
#    image indeed lacks them.
set -euo pipefail
. "$(dirname "$0")/ubifs_lib.sh"
need mkfs.ubifs
S=${UBIKIT_SCRATCH:?}
rm -rf "$S"
mkdir -p "$S/src/dir/inner" "$S/src/etc"
export TMPDIR_M=$S
printf 'hello\n' >"$S/src/file"
seq 1 5000 >"$S/src/etc/seq"
ln -s file "$S/src/lnk"
mkfifo "$S/src/ff"
if is_root; then mknod "$S/src/cdev" c 1 3; fi
# more hard-linked inodes than mkfs's first link table holds
mkdir "$S/src/hl"
for i in $(seq 1 100); do echo "$i" >"$S/src/hl/a$i"; ln "$S/src/hl/a$i" "$S/src/hl/b$i"; done
GEO=(-m 2048 -e 126976 -c 64)

# both: accepted, same tree
same() { # WHAT TABLE-TEXT
	printf "$2" >"$S/tab"
	rm -rf "$S/ref.img" "$S/my.img" "$S/ref" "$S/my"
	mkfs.ubifs -r "$S/src" "${GEO[@]}" -D "$S/tab" -o "$S/ref.img" >/dev/null 2>&1 ||
		{ fail "$1: mkfs.ubifs refused the table (test is wrong)"; return 0; }
	expect_ok "$UBIKIT" mkfs -r "$S/src" "${GEO[@]}" -D "$S/tab" -o "$S/my.img"
	expect_ok "$UBIKIT" extract -q "$S/ref.img" -o "$S/ref"
	expect_ok "$UBIKIT" extract -q "$S/my.img" -o "$S/my"
	manifest "$S/ref" | cut -f1-6 >"$S/m.ref"
	manifest "$S/my" | cut -f1-6 >"$S/m.my"
	diff -u "$S/m.ref" "$S/m.my" >&2 || fail "$1: the tree differs from mkfs.ubifs's"
	[ "$(stat -c '%a %u %g' "$S/ref")" = "$(stat -c '%a %u %g' "$S/my")" ] || fail "$1: root attributes differ"
}

# both: refused; ubikit's message says RE and no image is left
refused() { # WHAT RE TABLE-TEXT
	printf "$3" >"$S/tab"
	rm -f "$S/ref.img" "$S/my.img"
	if mkfs.ubifs -r "$S/src" "${GEO[@]}" -D "$S/tab" -o "$S/ref.img" >/dev/null 2>&1; then
		fail "$1: mkfs.ubifs accepted the table (test is wrong)"
	fi
	expect_fail 1 "$2" "$UBIKIT" mkfs -r "$S/src" "${GEO[@]}" -D "$S/tab" -o "$S/my.img"
	[ ! -e "$S/my.img" ] || fail "$1: a refused table left an image"
}

# mkfs.ubifs drops the entry silently; ubikit refuses it by name
dropped() { # WHAT RE TABLE-TEXT NAME-NOT-IN-REF
	printf "$3" >"$S/tab"
	rm -rf "$S/ref.img" "$S/my.img" "$S/ref"
	mkfs.ubifs -r "$S/src" "${GEO[@]}" -D "$S/tab" -o "$S/ref.img" >/dev/null 2>&1 ||
		{ fail "$1: mkfs.ubifs refused the table (test is wrong)"; return 0; }
	expect_ok "$UBIKIT" extract -q "$S/ref.img" -o "$S/ref"
	[ ! -e "$S/ref$4" ] && [ ! -L "$S/ref$4" ] || fail "$1: mkfs.ubifs made $4"
	expect_fail 1 "$2" "$UBIKIT" mkfs -r "$S/src" "${GEO[@]}" -D "$S/tab" -o "$S/my.img"
	[ ! -e "$S/my.img" ] || fail "$1: a refused table left an image"
}

same "the root's attributes" '/ d 700 7 8\n'
same "new entries and the tree's attributes" '# name type mode uid gid major minor start inc count

/dev d 755 0 0
   /dev/null c 666 0 0 1 3
\t/dev/tty c 620 0 5 4 0 0 1 4
/dev/sda b 660 0 6 8 0 1 16 3
/dev/mtdblock b 640 0 0 31 0 0 0 2
/dev/initctl p 600 0 0
/dev/pts d 755 0 0
/dev/pts/x p 640 9 9
/dir d 700 11 12
/dir/inner d 750 1 2
/dir/made d 711 3 4
/etc/seq f 600 13 14
/file f 444 15 16
/lnk l 777 17 18
/etc/fifo p 666 1 1
'
# SOURCE_DATE_EPOCH clamps every time (reproducible-builds.org): the
# entries the table makes ("now") get it
printf '/made d 755 0 0\n/made/n c 666 0 0 1 3\n' >"$S/tab"
rm -rf "$S/my.img" "$S/my"
expect_ok env SOURCE_DATE_EPOCH=1600000000 "$UBIKIT" mkfs -r "$S/src" "${GEO[@]}" -D "$S/tab" -o "$S/my.img"
expect_ok "$UBIKIT" extract -q "$S/my.img" -o "$S/my"
[ "$(stat -c %Y "$S/my/made/n")" = 1600000000 ] || fail "SOURCE_DATE_EPOCH: /made/n mtime $(stat -c %Y "$S/my/made/n")"
echo "ok: accepted tables"

refused "twice" "line 2: '/null' is named twice" '/null c 666 0 0 1 3\n/null c 666 0 0 1 4\n'
refused "twice by a range" "line 2: '/tty1' is named twice" '/tty c 600 0 0 4 0 0 1 3\n/tty1 c 600 0 0 4 9\n'
refused "an existing directory twice" "line 2: '/dir' is named twice" '/dir d 700 1 1\n/dir d 755 2 2\n'
refused "link mode" "line 1: link '/lnk' must have mode 777, not 644" '/lnk l 644 5 6\n'
refused "a fifo of the tree" "line 1: '/ff' is a device or fifo of the tree already" '/ff p 600 1 2\n'
if is_root; then
	refused "a device of the tree" "line 1: '/cdev' is a device or fifo of the tree already" '/cdev c 600 0 0 1 3\n'
fi
refused "another type" "line 1: '/file' exists with another type" '/file d 755 0 0\n'
refused "a file not in the tree" "line 1: '/nofile' is not in the tree" '/nofile f 644 0 0\n'
refused "a link not in the tree" "line 1: '/nolink' is not in the tree" '/nolink l 777 0 0\n'
refused "increment without count" "line 1: count cannot be 0 with an increment" '/d c 600 0 0 1 2 0 1 0\n'
for p in /dir/ //a /a/./b /a/../b /a/. /a/..; do
	refused "path $p" "line 2: path '$p' must be absolute, without" "/dev d 755 0 0\n$p d 755 0 0\n"
done
refused "unknown type" "line 1: unsupported file type 'z'" '/x z 755 0 0\n'
rm -f "$S/tab"
expect_fail 1 "cannot open device table '$S/none.tab'" "$UBIKIT" mkfs -r "$S/src" "${GEO[@]}" -D "$S/none.tab" -o "$S/my.img"
echo "ok: refused tables"

dropped "a directory not in the tree" "line 1: a directory of '/nodir/x' is not in the tree" '/nodir/x c 600 0 0 1 2\n' /nodir
dropped "a path under a file" "line 1: a directory of '/file/x' is not in the tree" '/file/x c 600 0 0 1 2\n' /file/x
echo "ok: entries mkfs.ubifs drops"

finish ubifs_mkfs_devtable
