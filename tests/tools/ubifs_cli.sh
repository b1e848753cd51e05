#!/bin/bash
# The read commands' command lines: --help, usage errors (exit 2), failures
# (exit 1 with a message), ls -l format, cat, info (text and JSON, and the
# mkfs.ubifs line it prints really recreates the superblock geometry), dump,
# detection messages (-v) and wrong overrides.
set -euo pipefail
. "$(dirname "$0")/ubifs_lib.sh"
S=${UBIKIT_SCRATCH:?}
D=${UBIKIT_SRC:?}/tests/data/kernel-images
rm -rf "$S"
mkdir -p "$S"
expect_rc() { # rc description command...
	local want=$1 what=$2 rc
	shift 2
	set +e
	"$@" >"$S/out" 2>"$S/err"
	rc=$?
	set -e
	[ $rc = "$want" ] || { cat "$S/err" >&2; fail "$what: exit $rc, expected $want"; }
}
for c in ls cat extract info dump mount; do
	expect_rc 0 "$c --help" "$UBIKIT" $c --help
	grep -q "^usage: ubikit $c" "$S/out" || fail "$c --help: no usage line"
	expect_rc 2 "$c without arguments" "$UBIKIT" $c
	expect_rc 2 "$c --bogus" "$UBIKIT" $c --bogus-option x
done
expect_rc 2 "extract without -o" "$UBIKIT" extract "$S/x"
expect_rc 2 "bad --peb" "$UBIKIT" ls --peb 12zz "$S/x"
expect_rc 2 "bad --kind" "$UBIKIT" ls --kind floppy "$S/x"
expect_rc 1 "missing image" "$UBIKIT" ls "$S/missing.img"
grep -q "missing.img" "$S/err" || fail "missing image: message does not name the file"
head -c 300000 /dev/urandom >"$S/random.bin"
expect_rc 1 "random file" "$UBIKIT" info "$S/random.bin"
grep -q "not a UBI/UBIFS image" "$S/err" || { cat "$S/err"; fail "random file: unclear message"; }

# odd inputs: clean failures
: >"$S/empty.img"
expect_rc 1 "empty file" "$UBIKIT" info "$S/empty.img"
head -c 100 /dev/zero | tr '\0' '\377' >"$S/ff.img"
expect_rc 1 "100 bytes of 0xFF" "$UBIKIT" ls "$S/ff.img"
expect_rc 1 "a directory as image" "$UBIKIT" ls "$S"
gzip -dc "$D/nand2k-clean.img.gz" >"$S/full.img"
head -c 200000 "$S/full.img" >"$S/trunc.img"
rm -f "$S/full.img"
set +e
"$UBIKIT" ls -lR "$S/trunc.img" >/dev/null 2>"$S/err"
rc=$?
set -e
[ $rc = 1 ] && [ -s "$S/err" ] || { cat "$S/err"; fail "truncated UBI image: exit $rc"; }

img=$S/k.img
gzip -dc "$D/nand2k-clean.img.gz" >"$img"
expect_rc 0 "ls -l" "$UBIKIT" ls -l "$img" /
grep -qE '^lrwxrwxrwx +1 +0 +0 +9 [0-9-]+ [0-9:]+ link -> dir/hello$' "$S/out" || { cat "$S/out"; fail "ls -l symlink line"; }
grep -qE '^brw-r--r-- +1 +0 +0 +8, 17 .* bdev$' "$S/out" || fail "ls -l block device line"
grep -qE '^prw-r--r-- .* fifo$' "$S/out" || fail "ls -l fifo line"
grep -qE '^drwxr-xr-x .* dir$' "$S/out" || fail "ls -l directory line"
expect_rc 0 "ls -l of one file" "$UBIKIT" ls -l "$img" /dir/sub/f6
grep -qE '^-rwsr-xr-x .* /dir/sub/f6$' "$S/out" || { cat "$S/out"; fail "ls -l setuid file"; }
expect_rc 1 "ls of a missing path" "$UBIKIT" ls "$img" /no/such
expect_rc 0 "ls -R" "$UBIKIT" ls -R "$img"
[ "$(grep -c '^/.*:$' "$S/out")" = 8 ] || fail "ls -R: $(grep -c '^/.*:$' "$S/out") directory headers, expected 8"

want=$(awk '$1 == "./text.big" { print $NF; exit }' "$D/nand2k-clean.manifest")
[ "$("$UBIKIT" cat "$img" /text.big | md5sum | cut -c1-32)" = "$want" ] || fail "cat text.big"
[ "$("$UBIKIT" cat "$img" /link)" = "$(printf 'hello\nappended')" ] || fail "cat through a symlink"
expect_rc 1 "cat of a directory" "$UBIKIT" cat "$img" /dir
expect_rc 1 "cat of a missing file" "$UBIKIT" cat "$img" /nope

expect_rc 0 "info -v" "$UBIKIT" info -v "$img"
grep -q "image kind:" "$S/err" || fail "-v did not describe the detection on stderr"
grep -q "kind: UBI image" "$S/out" || fail "info: kind"
grep -q "name: rootfs" "$S/out" || fail "info: volume name"
grep -q "fmt_version: 5" "$S/out" || fail "info: superblock"
grep -q "highest_inum:" "$S/out" || fail "info: master"
expect_rc 0 "info --json" "$UBIKIT" info --json "$img"
if command -v python3 >/dev/null; then
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["ubi"]["volumes"][0]["name"]=="rootfs"; assert d["ubifs"]["superblock"]["leb_size"]==129024' "$S/out" ||
		fail "info --json is not the expected JSON"
	expect_rc 0 "dump --json" "$UBIKIT" dump --json "$img"
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["ubifs_summary"]["nodes"]>100; assert d["ubifs_summary"]["bad_crc"]==0' "$S/out" ||
		fail "dump --json is not the expected JSON"
fi
expect_rc 0 "dump" "$UBIKIT" dump "$img"
grep -qE '^PEB +[0-9]+ +mapped, EC [0-9]+, layout volume LEB 0' "$S/out" || fail "dump: PEB lines"
grep -qE 'superblock len 4096 .* crc ok' "$S/out" || fail "dump: superblock node"
grep -qE 'dentry .* name "dir" inum' "$S/out" || fail "dump: dentry node details"
expect_rc 0 "dump --leb 1" "$UBIKIT" dump --leb 1 "$img"
grep -q "master len 512" "$S/out" || fail "dump --leb 1: no master node"
expect_rc 1 "dump --leb out of range" "$UBIKIT" dump --leb 99999 "$img"
expect_rc 1 "wrong --kind ubifs" "$UBIKIT" ls --kind ubifs "$img"
expect_rc 1 "no such volume" "$UBIKIT" ls --vol-name nope "$img"
grep -q "nope" "$S/err" || fail "--vol-name nope: message"
expect_rc 0 "--vol-id 0" "$UBIKIT" ls --vol-id 0 "$img"

# as an ordinary user: devices skipped and counted, ownership not restored, still exit 0
if is_root && command -v setpriv >/dev/null; then
	mkdir -p "$S/nr" && chmod 777 "$S/nr" && chmod 644 "$img"
	setpriv --reuid=65534 --regid=65534 --clear-groups "$UBIKIT" extract "$img" -o "$S/nr/out" 2>"$S/err" ||
		{ cat "$S/err"; fail "extract as an ordinary user failed"; }
	grep -q 'skipped 2 device nodes (not root)' "$S/err" || { cat "$S/err"; fail "non-root: device skip not reported"; }
	grep -q 'owner not restored on' "$S/err" || fail "non-root: ownership note missing"
	[ -p "$S/nr/out/fifo" ] && [ ! -e "$S/nr/out/bdev" ] || fail "non-root: fifo/device handling"
	[ "$(getfattr --absolute-names --only-values -n user.comment "$S/nr/out/dir/hello")" = changed ] ||
		fail "non-root: user.* xattr not restored"
fi

# several volumes: the first UBIFS one by default, others by name or ID
if command -v mkfs.ubifs >/dev/null; then
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
	expect_rc 1 "UBIFS read of a raw static volume" "$UBIKIT" ls --vol-id 0 "$S/multi.ubi"
	grep -q 'volume 0' "$S/err" || { cat "$S/err"; fail "raw volume: message does not name the volume"; }
	expect_rc 0 "info on several volumes" "$UBIKIT" info "$S/multi.ubi"
	[ "$(grep -c '^ *name: ' "$S/out")" = 3 ] || { cat "$S/out"; fail "info: 3 volumes expected"; }
	grep -q 'type: static' "$S/out" || fail "info: static volume"
	grep -q 'vol_name=second' "$S/out" || fail "info: ubinize.ini lists every volume"
fi

# info's mkfs.ubifs line recreates the same superblock geometry
if command -v mkfs.ubifs >/dev/null; then
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
fi
echo "PASS: read tools command lines"
