#!/bin/bash
# 'ubikit mount' read-write (the default) through the kernel's FUSE:
#   1. cp -a of a tree (every file type, hard links, xattrs, set-id modes,
#      a sparse file) into the mount, then rename, link, unlink, rmdir,
#      chmod, truncate, setfattr/removexattr with the ordinary tools;
#      unmount (the final commit); 'ubikit extract' of the image equals the
#      host tree with the same operations (tests/tools/ubifs_manifest.sh);
#   2. fsx-style random I/O on one file through the mount, compared with a
#      host file at every read (tests/tools/fsx_lite.py, seeded), then
#      again after unmount and a read-only mount;
#   3. -o ro refuses writes and leaves the image as it was;
#   4. an unlinked or replaced file still open keeps its data until closed;
#   5. fsync is durable: the mount process killed after it (bare, simulator).
# Needs /dev/fuse (skipped with exit 77 otherwise).
set -euo pipefail
. "$(dirname "$0")/ubifs_lib.sh"
[ -c /dev/fuse ] || skip "no /dev/fuse: FUSE read-write mount not tested"
need fusermount3 mkfs.ubifs ubinize getfattr setfattr python3 mountpoint
S=${UBIKIT_SCRATCH:?}
SEED=${SEED:-1}
OPS=${FSX_OPS:-3000}
rm -rf "$S"
mkdir -p "$S/mnt" "$S/src/d/e" "$S/empty"
cd "$S"
pid=
cleanup() {
	local rc=$?
	mountpoint -q "$S/mnt" && fusermount3 -u "$S/mnt"
	[ -n "$pid" ] && wait "$pid" 2>/dev/null
	t_on_exit $rc
}
trap cleanup EXIT
# Foreground in the background: 'wait' then knows when the final commit is
# done (fusermount3 -u returns before the daemon has written the image).
mount_fg() {
	"$UBIKIT" mount -f "$@" 2>"$S/mount.err" &
	pid=$!
	for _ in $(seq 100); do mountpoint -q "$S/mnt" && return 0; sleep 0.1; done
	cat "$S/mount.err" >&2
	fail "not mounted after 10 s: $*"
}
umount_wait() {
	fusermount3 -u "$S/mnt" || fail "fusermount3 -u"
	local rc=0
	wait "$pid" || rc=$?
	pid=
	[ $rc = 0 ] || { cat "$S/mount.err" >&2; fail "ubikit mount exited $rc after the unmount"; }
}
snap() { sh "$UBIKIT_SRC/tests/tools/ubifs_manifest.sh" "$1" | awk '$2 == "d" { NF-- } $2 == "l" { $8 = "-" } { print }'; }

# ---- the tree ----
head -c 300000 /dev/urandom >src/random.bin
for i in $(seq 1 3000); do echo "line $i"; done >src/text
printf 'hello\n' >src/a
ln src/a src/d/hard
ln -s ../a src/d/sym
mkfifo src/fifo
truncate -s 500000 src/sparse && printf 'end' >>src/sparse
chmod 04755 src/random.bin
chmod 02750 src/d
touch -d '2001-02-03 04:05:06.5' src/d/e src/text
xattrs=1
setfattr -n user.k -v val src/a 2>/dev/null || xattrs=0
if is_root; then mknod src/cdev c 1 3; fi

ops() { # the same changes, on the mount and on the host copy
	local r=$1
	mv "$r/copy/d" "$r/copy/moved"
	ln "$r/copy/text" "$r/copy/text.link"
	rm "$r/copy/fifo"
	mkdir "$r/copy/newdir" && rmdir "$r/copy/newdir"
	mkdir -p "$r/copy/x/y"
	printf 'new file\n' >"$r/copy/x/y/new"
	chmod 0600 "$r/copy/x/y/new"
	truncate -s 1000 "$r/copy/random.bin"
	truncate -s 5000 "$r/copy/text.link"
	# (utimens through FUSE; the times the changes above set are "now")
	touch -d '2020-05-05 05:05:05.25' "$r/copy/random.bin" "$r/copy/text" "$r/copy/x/y/new"
	if [ $xattrs = 1 ]; then
		setfattr -n user.added -v 0x0102 "$r/copy/text"
		setfattr -x user.k "$r/copy/a"
	fi
}

mkfs.ubifs -r empty -m 2048 -e 129024 -c 300 -x lzo -o fs.ubifs
mount_fg fs.ubifs mnt
grep -q " $S/mnt fuse.ubikit rw," /proc/mounts || fail "not a read-write fuse.ubikit mount: $(grep "$S/mnt" /proc/mounts || true)"
cp -a src mnt/copy || fail "cp -a into the mount failed"
ops "$S/mnt"
diff -r --no-dereference src mnt/copy >/dev/null 2>&1 && fail "the changes did not reach the mount"
# fsync of a directory is a commit; the mount goes on
python3 -c 'import os; fd = os.open("'"$S/mnt"'", os.O_RDONLY); os.fsync(fd); os.close(fd)' || fail "fsync of the root directory"
# ---- 2. fsx through FUSE ----
python3 "$UBIKIT_SRC/tests/tools/fsx_lite.py" mnt/fsx.bin fsx.ref "$SEED" "$OPS" || fail "fsx_lite through FUSE (seed $SEED)"
umount_wait

mkdir host && cp -a src host/copy && ops "$S/host"
rm -rf out
expect_ok "$UBIKIT" extract -q fs.ubifs -o out
cmp out/fsx.bin fsx.ref || fail "fsx file differs after unmount"
rm out/fsx.bin
snap host >host.manifest
snap out >img.manifest
diff -u host.manifest img.manifest >&2 || fail "after cp -a and changes through FUSE, the image differs from the host tree"

# ---- 3. read-only ----
mount_fg -o ro fs.ubifs mnt
grep -q " $S/mnt fuse.ubikit ro," /proc/mounts || fail "-o ro: not a read-only mount"
if touch mnt/nope 2>/dev/null; then fail "-o ro: a write succeeded"; fi
cmp mnt/copy/text host/copy/text || fail "-o ro: content"
sum=$(md5sum <fs.ubifs)
umount_wait
[ "$(md5sum <fs.ubifs)" = "$sum" ] || fail "-o ro: the image was changed"
# ---- 4. an unlinked (or replaced) file that is still open lives on until
# its last close (under a hidden name, not listed), and leaves nothing
# behind ----
mkfs.ubifs -r empty -m 2048 -e 129024 -c 100 -x lzo -o u.img
mount_fg u.img mnt
python3 - "$S/mnt" <<'PY' || fail "unlink / rename over an open file through FUSE"
import os, sys, time
m = sys.argv[1]
fd = os.open(m + "/tmpf", os.O_RDWR | os.O_CREAT, 0o644)
os.write(fd, b"abc")
os.unlink(m + "/tmpf")
os.write(fd, b"def")
os.lseek(fd, 0, 0)
assert os.read(fd, 10) == b"abcdef", "unlinked open file lost its data"
assert os.listdir(m) == [], "listing shows %r" % os.listdir(m)
with open(m + "/b", "w") as f:
    f.write("old")
fd2 = os.open(m + "/b", os.O_RDONLY)
with open(m + "/c", "w") as f:
    f.write("new")
os.rename(m + "/c", m + "/b")
assert os.read(fd2, 10) == b"old", "replaced open file lost its data"
os.close(fd2)
os.close(fd)
PY
umount_wait
expect_ok "$UBIKIT" ls -l u.img /
[ "$(awk '{ print $NF }' "$T_OUT")" = b ] || { cat "$T_OUT" >&2; fail "hidden files left in the image"; }
expect_ok "$UBIKIT" cat u.img /b
[ "$(cat "$T_OUT")" = new ] || fail "rename over an open file: wrong content"

# ---- 5. fsync is durable: the mount process killed (-9) after an fsync ----
for kind in bare sim; do
	if [ $kind = bare ]; then
		mkfs.ubifs -r empty -m 2048 -e 129024 -c 100 -x lzo -o k.img
	else
		rm -f k.img k.img.sim
		mkfs.ubifs -r empty -m 2048 -e 129024 -c 100 -x lzo -o k.ubifs
		printf '[u]\nmode=ubi\nimage=%s\nvol_id=0\nvol_type=dynamic\nvol_name=rootfs\nvol_flags=autoresize\n' \
			"$S/k.ubifs" >k.ini
		ubinize -o k.ubi -p 128KiB -m 2048 -s 512 k.ini 2>/dev/null
		"$UBIKIT" flash create k.img --size 16MiB --page 2048 --oob 64 --peb 128KiB --subpage 512 >/dev/null
		"$UBIKIT" format k.img -f k.ubi -q -y >/dev/null
	fi
	mount_fg k.img mnt
	python3 - "$S/mnt/synced" <<'PY' || fail "$kind: write + fsync through FUSE"
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT, 0o644)
os.write(fd, b"durable line\n" * 5000)
os.fsync(fd)
os.close(fd)
PY
	kill -9 "$pid"
	wait "$pid" 2>/dev/null || :
	pid=
	fusermount3 -u mnt 2>/dev/null || umount -l mnt 2>/dev/null || :
	expect_ok "$UBIKIT" cat k.img /synced
	[ "$(md5sum <"$T_OUT")" = "$(python3 -c 'import sys; sys.stdout.write("durable line\n" * 5000)' | md5sum)" ] ||
		fail "$kind: the fsync'ed file is not in the image after the mount process was killed"
done
echo "PASS: ubifs_write_fuse (fsx $OPS ops, seed $SEED)"
