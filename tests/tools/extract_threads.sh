#!/usr/bin/env bash
# extract_threads — 'ubikit extract' with worker threads (issue 7 part 3:
# files read and written by workers, each on its own read-only mount;
# entries made relative to open directories, attributes set on the open
# file) gives the same tree as on one thread, and both match the manifest
# of a kernel-written image: content, modes, owners (as root), times, hard
# links, symlinks, devices, xattrs. Also part 5: -o a/b/c creates the
# missing parents.
set -euo pipefail
. "$UBIKIT_SRC/tests/tools/test_lib.sh"
need gunzip find getfattr
S=$UBIKIT_SCRATCH
rm -rf "$S"
mkdir -p "$S"
name=nand2k-clean
gunzip -c "$UBIKIT_SRC/tests/data/kernel-images/$name.img.gz" >"$S/img"
# what a tree holds, one line per entry: path type mode uid gid size mtime links target
describe() {
	(cd "$1" && find . -printf '%p %y %m %U %G %s %T@ %n %l\n' | sed 's/^\.\/*//' | sort)
	(cd "$1" && getfattr -R -d -m - --absolute-names . 2>/dev/null | grep -v '^$' | sort) || true
	(cd "$1" && find . -type f -exec md5sum {} + | sort -k2)
}
for j in 1 3; do
	expect_ok "$UBIKIT" extract -q -j $j "$S/img" -o "$S/new/a/b/out$j"
	describe "$S/new/a/b/out$j" >"$S/tree$j"
done
[ -d "$S/new/a/b/out1" ] || fail "-o did not create the missing parents"
diff "$S/tree1" "$S/tree3" >"$S/diff" || fail "3 threads give another tree than 1: $(head -20 "$S/diff")"
# against the manifest: every regular file's permission bits, size, mtime and md5
man=$UBIKIT_SRC/tests/data/kernel-images/$name.manifest
while read -r p t mode _ _ _ size mtime md5; do
	if [ "$t" = f ]; then printf '%s %o %s %s %s\n' "${p#./}" $((16#$mode & 07777)) "$size" "$mtime" "$md5"; fi
done <"$man" | sort >"$S/want"
(cd "$S/new/a/b/out3" && find . -type f -printf '%P %m %s %Ts\n' | sort >"$S/got.meta" &&
	find . -type f -printf '%P\0' | xargs -0 md5sum | awk '{ print $2, $1 }' | sort >"$S/got.md5")
join "$S/got.meta" "$S/got.md5" >"$S/got"
diff "$S/want" "$S/got" >"$S/diff" || fail "regular files differ from the manifest (mode size mtime md5): $(head -10 "$S/diff")"
n=$(wc -l <"$S/want")
[ "$n" -ge 100 ] || fail "only $n regular files checked"
# more threads than files, and a bad value
expect_ok "$UBIKIT" extract -q -j 64 "$S/img" -o "$S/j64" /dir
expect_fail 2 'threads.*1 to 64' "$UBIKIT" extract -j 0 "$S/img" -o "$S/j0"
echo "extract_threads: all passed ($n files checked)"
