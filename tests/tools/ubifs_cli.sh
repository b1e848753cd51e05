#!/bin/bash
# The read commands' command lines: --help, usage errors (exit 2), failures
# (exit 1 with a message), ls -l format, cat, info (text and JSON, and the
# mkfs.ubifs line it prints really recreates the superblock geometry), dump,
# detection messages (-v) and wrong overrides.
set -euo pipefail
. "$(dirname "$0")/ubifs_lib.sh"
need mkfs.ubifs ubinize python3 getfattr
S=${UBIKIT_SCRATCH:?}
D=${UBIKIT_SRC:?}/tests/data/kernel-images
rm -rf "$S"
mkdir -p "$S"
for c in ls cat extract info dump mount; do
	expect_ok "$UBIKIT" $c --help
	grep -q "^usage: ubikit $c" "$T_OUT" || fail "$c --help: no usage line"
	expect_fail 2 "^usage: ubikit $c" "$UBIKIT" $c
	expect_fail 2 "unrecognized option '--bogus-option'" "$UBIKIT" $c --bogus-option x
done
expect_fail 2 "-o DIR is required" "$UBIKIT" extract "$S/x"
expect_fail 2 'bad value "12zz" for --peb' "$UBIKIT" ls --peb 12zz "$S/x"
expect_fail 2 "unknown --kind 'floppy'" "$UBIKIT" ls --kind floppy "$S/x"
expect_fail 1 "cannot open .*missing.img: No such file" "$UBIKIT" ls "$S/missing.img"
head -c 300000 /dev/urandom >"$S/random.bin"
expect_fail 1 "random.bin: .*not a UBI/UBIFS image" "$UBIKIT" info "$S/random.bin"

# odd inputs: clean failures
: >"$S/empty.img"
expect_fail 1 "empty.img: empty file" "$UBIKIT" info "$S/empty.img"
head -c 100 /dev/zero | tr '\0' '\377' >"$S/ff.img"
expect_fail 1 "ff.img: .*not a UBI/UBIFS image" "$UBIKIT" ls "$S/ff.img"
expect_fail 1 "read error: Is a directory" "$UBIKIT" ls "$S"
gzip -dc "$D/nand2k-clean.img.gz" >"$S/full.img"
head -c 200000 "$S/full.img" >"$S/trunc.img"
rm -f "$S/full.img"
expect_fail 1 "trunc.img: UBI attach failed: the layout volume .* not found" "$UBIKIT" ls -lR "$S/trunc.img"

img=$S/k.img
gzip -dc "$D/nand2k-clean.img.gz" >"$img"
expect_ok "$UBIKIT" ls -l "$img" /
grep -qE '^lrwxrwxrwx +1 +0 +0 +9 [0-9-]+ [0-9:]+ link -> dir/hello$' "$T_OUT" || { cat "$T_OUT"; fail "ls -l symlink line"; }
grep -qE '^brw-r--r-- +1 +0 +0 +8, 17 .* bdev$' "$T_OUT" || fail "ls -l block device line"
grep -qE '^prw-r--r-- .* fifo$' "$T_OUT" || fail "ls -l fifo line"
grep -qE '^drwxr-xr-x .* dir$' "$T_OUT" || fail "ls -l directory line"
expect_ok "$UBIKIT" ls -l "$img" /dir/sub/f6
grep -qE '^-rwsr-xr-x .* /dir/sub/f6$' "$T_OUT" || { cat "$T_OUT"; fail "ls -l setuid file"; }
expect_fail 1 "/no/such: No such file or directory" "$UBIKIT" ls "$img" /no/such
expect_ok "$UBIKIT" ls -R "$img"
# the directory headers name exactly the kernel's directories (its manifest)
diff <(grep '^/.*:$' "$T_OUT" | sed 's/:$//' | LC_ALL=C sort) \
	<(awk '$2 == "d" { p = substr($1, 2); print p == "" ? "/" : p }' "$D/nand2k-clean.manifest" | LC_ALL=C sort) >&2 ||
	fail "ls -R: directory headers differ from the kernel's directories"

# extract creates the missing parents of -o DIR (as its --help says)
rm -rf "$S/np"
expect_ok "$UBIKIT" extract -q "$img" /dir -o "$S/np/a/b"
[ -d "$S/np/a/b" ] && [ -n "$(ls -A "$S/np/a/b")" ] || fail "extract -o with missing parents: nothing extracted"
: >"$S/np/file"
expect_fail 1 "np/file/x.*cannot create: Not a directory" "$UBIKIT" extract "$img" -o "$S/np/file/x/y"

want=$(awk '$1 == "./text.big" { print $NF; exit }' "$D/nand2k-clean.manifest")
[ "$("$UBIKIT" cat "$img" /text.big | md5sum | cut -c1-32)" = "$want" ] || fail "cat text.big"
[ "$("$UBIKIT" cat "$img" /link)" = "$(printf 'hello\nappended')" ] || fail "cat through a symlink"
expect_fail 1 "/dir: is a directory" "$UBIKIT" cat "$img" /dir
expect_fail 1 "/nope: No such file or directory" "$UBIKIT" cat "$img" /nope

expect_ok "$UBIKIT" info -v "$img"
grep -q "image kind:" "$T_ERR" || fail "-v did not describe the detection on stderr"
grep -q "kind: UBI image" "$T_OUT" || fail "info: kind"
grep -q "name: rootfs" "$T_OUT" || fail "info: volume name"
grep -q "fmt_version: 5" "$T_OUT" || fail "info: superblock"
grep -q "highest_inum:" "$T_OUT" || fail "info: master"
expect_ok "$UBIKIT" info --json "$img"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["ubi"]["volumes"][0]["name"]=="rootfs"; assert d["ubifs"]["superblock"]["leb_size"]==129024' "$T_OUT" ||
	fail "info --json is not the expected JSON"
expect_ok "$UBIKIT" dump --json "$img"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["ubifs_summary"]["nodes"]>100; assert d["ubifs_summary"]["bad_crc"]==0' "$T_OUT" ||
	fail "dump --json is not the expected JSON"
expect_ok "$UBIKIT" dump "$img"
grep -qE '^PEB +[0-9]+ +mapped, EC [0-9]+, layout volume LEB 0' "$T_OUT" || fail "dump: PEB lines"
grep -qE 'superblock len 4096 .* crc ok' "$T_OUT" || fail "dump: superblock node"
grep -qE 'dentry .* name "dir" inum' "$T_OUT" || fail "dump: dentry node details"
expect_ok "$UBIKIT" dump --leb 1 "$img"
grep -q "master len 512" "$T_OUT" || fail "dump --leb 1: no master node"
expect_fail 1 "LEB 99999 out of range \\(volume has 121 LEBs\\)" "$UBIKIT" dump --leb 99999 "$img"
expect_fail 1 "LEB 0:0: UBIFS superblock node has a bad CRC" "$UBIKIT" ls --kind ubifs "$img"
expect_fail 1 "no UBI volume named 'nope'" "$UBIKIT" ls --vol-name nope "$img"
expect_ok "$UBIKIT" ls --vol-id 0 "$img"

# as an ordinary user: devices skipped and counted, ownership not restored, still exit 0
if ! is_root || ! command -v setpriv >/dev/null; then
	skip_part "extract as an ordinary user (needs root and setpriv)"
else
	mkdir -p "$S/nr" && chmod 777 "$S/nr" && chmod 644 "$img"
	setpriv --reuid=65534 --regid=65534 --clear-groups "$UBIKIT" extract "$img" -o "$S/nr/out" 2>"$T_ERR" ||
		{ cat "$T_ERR"; fail "extract as an ordinary user failed"; }
	grep -q 'skipped 2 device nodes (not root)' "$T_ERR" || { cat "$T_ERR"; fail "non-root: device skip not reported"; }
	grep -q 'owner not restored on' "$T_ERR" || fail "non-root: ownership note missing"
	[ -p "$S/nr/out/fifo" ] && [ ! -e "$S/nr/out/bdev" ] || fail "non-root: fifo/device handling"
	[ "$(getfattr --absolute-names --only-values -n user.comment "$S/nr/out/dir/hello")" = changed ] ||
		fail "non-root: user.* xattr not restored"
fi

# several volumes: the first UBIFS one by default, others by name or ID
{
	mkdir -p "$S/t1" "$S/t2"
	head -c 2500000 /dev/urandom >"$S/t1/one"
	head -c 2500000 /dev/urandom >"$S/t2/two"
	head -c 300000 /dev/urandom >"$S/raw.bin"
	mkfs.ubifs -r "$S/t1" -m 2048 -e 129024 -c 40 -o "$S/v1.ubifs"
	mkfs.ubifs -r "$S/t2" -m 2048 -e 129024 -c 40 -x zlib -o "$S/v2.ubifs"
	cat >"$S/multi.ini" <<-EOF2
		[raw]
		mode=ubi
		image=$S/raw.bin
		vol_id=0
		vol_type=static
		vol_name=raw
		[first]
		mode=ubi
		image=$S/v1.ubifs
		vol_id=3
		vol_size=$((129024 * 40))
		vol_type=dynamic
		vol_name=first
		[second]
		mode=ubi
		image=$S/v2.ubifs
		vol_id=5
		vol_size=$((129024 * 40))
		vol_type=dynamic
		vol_name=second
	EOF2
	ubinize -o "$S/multi.ubi" -p 128KiB -m 2048 -s 512 "$S/multi.ini"
	[ "$("$UBIKIT" ls "$S/multi.ubi")" = one ] || fail "multi-volume: default is not the first UBIFS volume"
	[ "$("$UBIKIT" ls --vol-name second "$S/multi.ubi")" = two ] || fail "multi-volume: --vol-name second"
	[ "$("$UBIKIT" ls --vol-id 5 "$S/multi.ubi")" = two ] || fail "multi-volume: --vol-id 5"
	cmp -s <("$UBIKIT" cat --vol-name second "$S/multi.ubi" /two) "$S/t2/two" || fail "multi-volume: cat from the second"
	expect_fail 1 "volume 0" "$UBIKIT" ls --vol-id 0 "$S/multi.ubi"
	expect_ok "$UBIKIT" info "$S/multi.ubi"
	[ "$(sed -n 's/^ *name: //p' "$T_OUT" | LC_ALL=C sort | tr '\n' ' ')" = "first raw second " ] ||
		{ cat "$T_OUT"; fail "info: volumes raw, first and second expected"; }
	grep -q 'type: static' "$T_OUT" || fail "info: static volume"
	grep -q 'vol_name=second' "$T_OUT" || fail "info: ubinize.ini lists every volume"
}

# info's mkfs.ubifs line recreates the same superblock geometry
{
	mkdir -p "$S/tree"
	head -c 3000000 /dev/urandom >"$S/tree/r"
	mkfs.ubifs -r "$S/tree" -m 2048 -e 129024 -c 300 -x zlib -f 16 -l 5 -p 2 -j 2MiB -R 200KiB -o "$S/a.ubifs"
	"$UBIKIT" info "$S/a.ubifs" >"$S/a.info"
	line=$(sed -n 's/^ *mkfs_ubifs: //p' "$S/a.info")
	[ -n "$line" ] || fail "info printed no mkfs.ubifs line"
	line=${line/ROOTDIR/$S/tree}
	line=${line/IMAGE.ubifs/$S/b.ubifs}
	eval "$line" || fail "the printed mkfs.ubifs line failed: $line"
	"$UBIKIT" info "$S/b.ubifs" >"$S/b.info"
	sb() { sed -n '/^  superblock:/,/^  [a-z]/p' "$1" | grep -v uuid; }
	diff <(sb "$S/a.info") <(sb "$S/b.info") >&2 || fail "recreated image has a different superblock"
}
echo "PASS: read tools command lines"
