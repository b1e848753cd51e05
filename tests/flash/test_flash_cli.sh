#!/bin/bash
# test_flash_cli — 'ubikit flash' create / info --json / erase / inject, file
# layouts checked byte by byte, read-only info on plain images, and bad
# arguments (exit status 2 and a message naming the problem).
set -euo pipefail
S="$UBIKIT_SCRATCH"
. "$(dirname "$0")/../tools/test_lib.sh"
rm -rf "$S"; mkdir -p "$S"
U="$UBIKIT"
has() { grep -qF -- "$2" <<<"$1" || fail "expected '$2' in: $1"; }
# byte at offset, as two hex digits
byte() { od -An -tx1 -j "$2" -N1 "$1" | tr -d ' \n'; }

# --- create (data only) ---
"$U" flash create "$S/a.img" --size 4MiB >/dev/null
[ "$(stat -c %s "$S/a.img")" = 4194304 ] || fail "a.img size"
[ -f "$S/a.img.sim" ] || fail "no sidecar"
cmp -s "$S/a.img" <(head -c 4194304 /dev/zero | tr '\0' '\377') || fail "fresh image not all 0xFF"
j=$("$U" flash info "$S/a.img" --json)
has "$j" '"type": "nand"'
has "$j" '"page_size": 2048'
has "$j" '"oob_size": 64'
has "$j" '"peb_size": 131072'
has "$j" '"peb_count": 32'
has "$j" '"erased_pebs": 32'
has "$j" '"bad_pebs": 0'
has "$j" '"file_has_oob": false'
"$U" flash info "$S/a.img" >"$S/info.txt"
grep -q "32 PEBs x 131072 bytes" "$S/info.txt" || fail "text info"

# --- inject ---
"$U" flash inject "$S/a.img" bad --peb 3
"$U" flash inject "$S/a.img" wear --peb 5 --count 77
"$U" flash inject "$S/a.img" bitflip --peb 2 --page 1 --uncorrectable
grep -q "^flip 2 1 uncorrectable$" "$S/a.img.sim" || fail "flip not in sidecar"
j=$("$U" flash info "$S/a.img" --json)
has "$j" '"bad_blocks": [{"peb": 3, "kind": "factory"}]'
has "$j" '"max": 77'
has "$j" '"bad_pebs": 1'

# --- erase ---
out=$("$U" flash erase "$S/a.img" --all)
has "$out" "erased 31 PEBs, skipped 1 bad"
"$U" flash erase "$S/a.img" --peb 5
j=$("$U" flash info "$S/a.img" --json)
has "$j" '"min": 0, "max": 79'
grep -q "^flip" "$S/a.img.sim" && fail "erase did not clear the bit flip"
expect_fail 1 "PEB 3: erase of bad PEB 3" "$U" flash erase "$S/a.img" --peb 3

# --- create with OOB: nanddump -o layout, Linux bad-block marker ---
"$U" flash create "$S/o.img" --size 1MiB --with-oob --subpage 512 >/dev/null
[ "$(stat -c %s "$S/o.img")" = $((8 * 64 * 2112)) ] || fail "o.img size"
"$U" flash inject "$S/o.img" bad --peb 2
[ "$(byte "$S/o.img" $((2 * 64 * 2112 + 2048)))" = 00 ] || fail "no bad-block marker in OOB"
[ "$(byte "$S/o.img" $((1 * 64 * 2112 + 2048)))" = ff ] || fail "marker on a good PEB"
j=$("$U" flash info "$S/o.img" --json)
has "$j" '"subpage_size": 512'
has "$j" '"file_has_oob": true'
# Without the sidecar (a raw dump), the marker alone says bad.
rm "$S/o.img.sim"
j=$("$U" flash info "$S/o.img" --with-oob --json)
has "$j" '"sidecar": false'
has "$j" '"peb_count": 8'
has "$j" '"bad_blocks": [{"peb": 2, "kind": "factory"}]'
[ -e "$S/o.img.sim" ] && fail "info created a sidecar"

# --- a plain, short image (like ubinize output): read-only, padded ---
head -c $((3 * 131072)) /dev/urandom >"$S/p.img"
sum0=$(md5sum <"$S/p.img"); t0=$(stat -c %Y.%y "$S/p.img")
j=$("$U" flash info "$S/p.img" --size 1MiB --json)
has "$j" '"peb_count": 8'
has "$j" '"used_pebs": 3'
has "$j" '"erased_pebs": 5'
[ "$(md5sum <"$S/p.img")" = "$sum0" ] || fail "info changed the image"
[ "$(stat -c %Y.%y "$S/p.img")" = "$t0" ] || fail "info touched the image"
[ -e "$S/p.img.sim" ] && fail "info created a sidecar for a plain image"
# An image larger than the given device is refused.
expect_fail 1 "image has 393216 bytes, more than the 262144-byte device" "$U" flash info "$S/p.img" --size 256KiB

# --- NOR ---
"$U" flash create "$S/n.img" --nor --size 1MiB >/dev/null
j=$("$U" flash info "$S/n.img" --json)
has "$j" '"type": "nor"'
has "$j" '"peb_size": 65536'
has "$j" '"peb_count": 16'
has "$j" '"page_size": 1'

# --- profiles, sparse ---
"$U" flash create "$S/m.img" --size 1MiB --profile mlc >/dev/null
has "$("$U" flash info "$S/m.img" --json)" '"endurance": 3000'
"$U" flash create "$S/s.img" --size 64MiB --sparse >/dev/null
[ "$(stat -c %b "$S/s.img")" -lt 1024 ] || fail "sparse image is not sparse"
has "$("$U" flash info "$S/s.img" --json)" '"erased_pebs": 512'

# --- help ---
for sub in create info erase inject; do
	"$U" flash $sub --help >"$S/help.txt"
	grep -q "usage: ubikit flash $sub" "$S/help.txt" || fail "$sub --help"
done
"$U" flash --help >"$S/help.txt"
grep -q "subcommands" "$S/help.txt" || fail "flash --help"

# --- bad arguments: exit 2 and a clear message ---
expect2() { local want=$1; shift; expect_fail 2 "$want" "$U" "$@"; }
expect2 "IMAGE is missing" flash create
expect2 "not a non-zero multiple" flash create "$S/x.img" --size 1000
expect2 "not a number" flash create "$S/x.img" --page abc
expect2 "unknown profile" flash create "$S/x.img" --profile tlc
expect2 "not a power of two" flash create "$S/x.img" --page 3000 --size 3000KiB --peb 3000KiB
expect2 "unknown or incomplete option" flash create "$S/x.img" --bogus
expect2 "unknown or incomplete option" flash create "$S/x.img" --size
expect2 "exactly one of" flash erase "$S/a.img"
expect2 "out of range" flash erase "$S/a.img" --peb 32
expect2 "unknown KIND" flash inject "$S/a.img" frob --peb 1
expect2 "needs --page" flash inject "$S/a.img" bitflip --peb 1
expect2 "needs --count" flash inject "$S/a.img" wear --peb 1
expect2 "--peb N is required" flash inject "$S/a.img" bad
expect2 "out of range" flash inject "$S/a.img" bitflip --peb 1 --page 64
expect2 "unknown subcommand" flash frob
[ -e "$S/x.img" ] && fail "a refused create left a file"
expect_fail 1 "missing.img.*no such file" "$U" flash info "$S/missing.img"
echo "test_flash_cli: all passed"
