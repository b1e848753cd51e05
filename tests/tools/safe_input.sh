#!/bin/bash
# Issue 8, classes 5, 7 and 10 — numbers checked before use, existing files
# and directories respected, output and exit codes. Each check names what it
# expects: exact exit status, the message, and the files left behind.
# Reference images come from mtd-utils (mkfs.ubifs, ubinize); damaged ones
# from safe_patch.py (independent of ubikit, CRCs recomputed).
set -uo pipefail
. "$(dirname "$0")/test_lib.sh"
S=$UBIKIT_SCRATCH
U=${UBIKIT:?}
P=${UBIKIT_SRC:?}/tests/tools/safe_patch.py
need mkfs.ubifs ubinize python3
# SAFE_KEEP_GOING=1: report every failed check, not just the first (to see
# which checks an older build fails).
[ "${SAFE_KEEP_GOING:-}" = 1 ] && T_SOFT=1
rm -rf "$S"
mkdir -p "$S"
cd "$S" || exit 1

# expect STATUS PATTERN CMD...: run CMD (test_lib's run: a sanitizer report
# or a crash fails), check its exact exit status and that stderr matches
# PATTERN (grep -E, case-sensitive; "" = anything). Leaves out and err.
expect() {
	local want=$1 pat=$2
	shift 2
	run "$@"
	cp "$T_OUT" out
	cp "$T_ERR" err
	[ "$T_RC" = "$want" ] || { fail "$*: exit $T_RC, expected $want; stderr: $(head -c 300 err)"; return 0; }
	[ -z "$pat" ] || grep -qE -- "$pat" err || fail "$*: stderr does not match /$pat/: $(head -c 300 err)"
	return 0
}

# Reference UBIFS and UBI images (mtd-utils).
mkdir -p tree/d
echo hello >tree/d/hello
head -c 20000 /dev/urandom >tree/data
head -c 777 /dev/urandom >tree/damaged
chmod 0700 tree
chmod 0705 tree/d
touch -d '1999-09-09 09:09:09' tree
mkfs.ubifs -x none -r tree -m 2048 -e 126976 -c 64 -o fs.ubifs || fail "mkfs.ubifs"
printf '[v]\nmode=ubi\nimage=fs.ubifs\nvol_id=0\nvol_size=3MiB\nvol_type=dynamic\nvol_name=rootfs\n' >u.ini
ubinize -o u.img -p 128KiB -m 2048 u.ini || fail "ubinize"

echo "== class 5: numbers are checked against what they must fit"
expect 2 'bad value "10Mb" for --size: .*KiB, MiB, GiB, TiB' "$U" flash create m.img --size 10Mb
expect 2 'bad value "10MB" for --size' "$U" flash create m.img --size 10MB
[ ! -e m.img ] || fail "--size 10Mb left an image"
expect 0 '' "$U" flash create m.img --size 10MiB --sparse
grep -q "^peb_count 80$" m.img.sim || fail "--size 10MiB is not 80 PEBs of 128 KiB: $(grep peb_count m.img.sim)"
expect 2 'bad value "0" for --peb' "$U" flash create z.img --peb 0
expect 2 'bad value "0" for --page' "$U" flash create z.img --page 0
expect 2 'bad value "0" for --peb' "$U" ls --peb 0 u.img
expect 2 'bad value "0" for --page' "$U" info --page 0 u.img
expect 2 'bad value "0" for --leb-size' "$U" extract --leb-size 0 fs.ubifs -o x0
[ ! -e x0 ] || fail "extract --leb-size 0 created its output"
# page+OOB stride must not wrap 32 bits: from the option ...
expect 2 'OOB size 4294965249 is larger than the page size 2048' "$U" flash create o.img --size 4MiB --oob 4294965249 --with-oob
[ ! -e o.img ] && [ ! -e o.img.sim ] || fail "--oob 4294965249 left files"
# ... and from a sidecar line
expect 0 '' "$U" flash create o.img --size 4MiB --with-oob
sed -i 's/^oob_size .*/oob_size 4294965249/' o.img.sim
sum=$(md5sum <o.img)
expect 1 'o.img.sim: OOB size 4294965249 is larger than the page size 2048' "$U" flash info o.img
expect 1 'OOB size 4294965249' "$U" info o.img
[ "$(md5sum <o.img)" = "$sum" ] || fail "a bad sidecar changed the image"
sed -i 's/^oob_size .*/oob_size 4294967360/' o.img.sim # 2^32 + 64: must not be read as 64
expect 1 'o.img.sim line [0-9]+: cannot parse "oob_size 4294967360' "$U" flash info o.img
expect 2 'bad value "x" for --leb' "$U" dump --leb x u.img
# ini sizes and versions
printf '[v]\nmode=ubi\nvol_id=0\nvol_size=1000TiB\nvol_name=huge\n' >huge.ini
expect 1 "vol_size\" 1000TiB in section \"v\" needs $(((1000 << 40) / 126976 + 1)) LEBs of 126976 bytes; a UBI volume has at most 2147483647" \
	"$U" ubinize -o huge.img -p 128KiB -m 2048 huge.ini
expect 2 'bad UBI version: "999" \(0..255\)' "$U" ubinize -o x.img -p 128KiB -m 2048 -x 999 u.ini
# injected wear: range-checked, and the counter never wraps to 0
expect 0 '' "$U" flash create w.img --size 1MiB --endurance 0 --sparse
expect 2 'bad value "4294967295" for --count: must be 0..4294967294' "$U" flash inject w.img wear --peb 1 --count 4294967295
expect 0 '' "$U" flash inject w.img wear --peb 1 --count 4294967294
expect 0 '' "$U" flash erase w.img --peb 1
expect 0 '' "$U" flash erase w.img --peb 1
"$U" flash info --json w.img | grep -q '"max": 4294967295' || fail "wear wrapped: $("$U" flash info w.img | grep wear)"
# a non-sparse image larger than the free space (counting root's reserve):
# refused before writing
free=$(($(stat -f -c '%f' .) * $(stat -f -c '%S' .)))
pebs=$((free / 131072 + 8192))
# (ulimit -f: should the check ever go, the test must not fill the disk)
expect 1 'cannot create big.img: it needs [0-9]+ bytes, its file system has [0-9]+ free' bash -c 'ulimit -f 65536; exec "$@"' sh \
	"$U" flash create big.img --size $((pebs * 131072))
[ ! -e big.img ] || fail "the too-large image was created"
# progress on long work (shown on a terminal)
if command -v script >/dev/null; then
	script -qec "$U flash create p.img --size 128MiB" /dev/null >prog.out 2>&1 </dev/null
	grep -q "writing erased flash: 100%" prog.out || fail "no progress shown: $(tr '\r' '\n' <prog.out | tail -3)"
fi

echo "== class 7: existing files and directories"
expect 0 '' "$U" flash create e.img --size 2MiB
expect 0 '' "$U" flash inject e.img bad --peb 3
sum=$(cat e.img e.img.sim | md5sum)
expect 1 'e.img already exists \(use --force to replace it\)' "$U" flash create e.img --size 4MiB
[ "$(cat e.img e.img.sim | md5sum)" = "$sum" ] || fail "a refused create changed the existing image"
expect 0 '' "$U" flash create e.img --size 4MiB --force
grep -q "^peb_count 32$" e.img.sim || fail "--force did not replace the image"
# extract into an existing directory: it keeps its own metadata
mkdir out7
chmod 0751 out7
chown 4321:8765 out7 2>/dev/null || true
touch -d '2001-02-03 04:05:06' out7
before=$(stat -c '%a %u %g' out7)
expect 0 '' "$U" extract -q fs.ubifs -o out7
# (its mtime moves with what is created in it, but is not the image root's)
[ "$(stat -c '%a %u %g' out7)" = "$before" ] || fail "extract changed the existing directory: $before -> $(stat -c '%a %u %g' out7)"
[ "$(stat -c %Y out7)" != "$(stat -c %Y tree)" ] || fail "extract gave the existing directory the image root's mtime"
[ "$(stat -c %a out7/d)" = 705 ] || fail "a directory extract created lacks the image's mode: $(stat -c %a out7/d)"
[ "$(cat out7/d/hello)" = hello ] || fail "extracted content"
# ... while a directory extract creates gets the image root's
expect 0 '' "$U" extract -q fs.ubifs -o out7new
[ "$(stat -c '%a %Y' out7new)" = "$(stat -c '%a %Y' tree)" ] ||
	fail "a new output directory lacks the image root's mode/mtime: $(stat -c '%a %Y' out7new) vs $(stat -c '%a %Y' tree)"
# ubi rename onto an existing name removes that volume, and says so
expect 0 '' "$U" flash create r.img --size 16MiB --sparse
expect 0 '' "$U" format r.img
expect 0 '' "$U" ubi mkvol r.img -N v0 -s 1MiB
expect 0 '' "$U" ubi mkvol r.img -N v1 -s 1MiB
expect 0 'volume 1 "v1" was removed: its name now belongs to volume 0' "$U" ubi rename r.img v0 v1
"$U" ubi info r.img >info.out || fail "ubi info after rename"
grep -q 'Volumes count: *1$' info.out || grep -q '^Present volumes: *0$' info.out || fail "after the rename: $(cat info.out)"
expect 0 '' "$U" ubi rename r.img v1 v2
grep -q removed err && fail "a plain rename claims to remove a volume: $(cat err)"

echo "== class 10: output and exit codes"
expect 0 '' "$U" flash create f.img --size 16MiB --sparse
expect 0 '' "$U" format f.img -f u.img
for c in "info f.img" "ls -lR f.img" "dump f.img" "ubi info f.img" "flash info f.img"; do
	# shellcheck disable=SC2086
	"$U" $c >/dev/full 2>err
	rc=$?
	san_check "$c >/dev/full" err
	[ $rc = 1 ] || fail "$c >/dev/full: exit $rc, expected 1"
	grep -q "error writing to standard output: No space left on device" err || fail "$c >/dev/full: $(cat err)"
done
# extract's summary counts only what was extracted
cp fs.ubifs dmg.ubifs
python3 "$P" data-size dmg.ubifs 777 5000 >/dev/null || fail "patch"
expect 1 'extracted 2 files \(' "$U" extract dmg.ubifs -o out10
grep -q "^1 files could not be extracted" err || fail "extract summary: $(cat err)"
# usage errors exit 2 in every subcommand
for c in "flash create" "flash info" "flash erase" "flash inject" ubinize format "ubi info" "ubi mkvol" \
	"ubi update" info ls cat extract dump mount bench; do
	# shellcheck disable=SC2086
	run "$U" $c --no-such-option x
	[ "$T_RC" = 2 ] || fail "$c --no-such-option: exit $T_RC, expected 2"
done
expect 2 'bad physical eraseblock size' "$U" ubinize -o x.img -p 0 -m 2048 u.ini
expect 2 'the volume was not given' "$U" ubi rmvol r.img
expect 2 'the volume was not given' "$U" ubi update r.img hosts
# messages name the option as typed
echo abc >three
expect 2 'error: -s 5 differs from the size of "three" \(4\)' "$U" ubi update r.img -n 0 -s 5 three
expect 2 'error: --size 5 differs' "$U" ubi update r.img -n 0 --size=5 three
expect 2 'bad value "10Mb" for option --size' "$U" ubi mkvol r.img -N x --size 10Mb
expect 2 'bad value "10Mb" for option -s' "$U" ubi mkvol r.img -N x -s 10Mb
finish safe_input
