#!/bin/bash
# 'ubikit format' (ubiformat semantics) on simulator images: erase counters
# kept (+1) and unknown ones set to the mean, -e override, bad blocks skipped
# (image PEBs shift), the image's own PEB contents written with only the EC
# header changed, trailing 0xFF pages left unprogrammed (a later write there
# succeeds), an empty layout volume without image, and clear errors.
set -euo pipefail
: "${UBIKIT:?}" "${UBIKIT_SCRATCH:?}"
. "$(dirname "$0")/test_lib.sh"
T_SOFT=1
need ubinize python3
WORKLOAD=$(dirname "$UBIKIT")/../tests/tools/ubi_workload
rm -rf "$UBIKIT_SCRATCH"; mkdir -p "$UBIKIT_SCRATCH"; cd "$UBIKIT_SCRATCH"

# EC header fields of PEB n: "ec image_seq vid_off data_off" or "none"
ech() { python3 - "$1" "$2" "${3:-131072}" <<'PY'
import struct, sys, zlib
f, n, peb = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with open(f, "rb") as fh:
    fh.seek(n * peb); h = fh.read(64)
if h[:4] != b"UBI#" or struct.unpack(">I", h[60:64])[0] != (zlib.crc32(h[:60]) ^ 0xFFFFFFFF):
    print("none")
else:
    ec, vid, data, seq = struct.unpack(">QIII", h[8:28])
    print(ec, seq, vid, data)
PY
}

python3 -c "import random; r=random.Random(5); open('a.img','wb').write(bytes(r.getrandbits(8) for _ in range(300000)))"
cat > v.ini <<'INI'
[v]
mode=ubi
image=a.img
vol_id=0
vol_size=1MiB
vol_name=data
INI
ubinize -o img.ubi -p 128KiB -m 2048 -s 512 -Q 1 v.ini >/dev/null 2>&1

"$UBIKIT" flash create f.img --size 16MiB --page 2048 --subpage 512 --peb 128KiB >/dev/null

# 1. Empty format of an erased flash: EC 0 everywhere (unknown -> mean 0), layout volume in PEB 0/1.
"$UBIKIT" format f.img -Q 11 -q
[ "$(ech f.img 0)" = "0 11 512 2048" ] || fail "empty format: PEB 0 EC header is '$(ech f.img 0)'"
[ "$(ech f.img 127)" = "0 11 512 2048" ] || fail "empty format: PEB 127 EC header is '$(ech f.img 127)'"
"$UBIKIT" ubi info f.img --json > info0.json || fail "ubikit cannot attach its own empty format"
python3 -c "import json,sys; d=json.load(open('info0.json')); sys.exit(0 if d['vol_count']==0 and d['image_seq']==11 else 1)" \
  || fail "empty format: info says $(cat info0.json)"

# 2. Format with the image: ECs +1, image_seq replaced, image bytes intact apart from the EC header.
"$UBIKIT" format f.img -f img.ubi -Q 22 -q
[ "$(ech f.img 0)" = "1 22 512 2048" ] || fail "image format: PEB 0 EC header is '$(ech f.img 0)'"
[ "$(ech f.img 50)" = "1 22 512 2048" ] || fail "image format: PEB 50 EC header is '$(ech f.img 50)'"
for p in 0 1 2 3 4; do
  cmp -s <(dd if=f.img bs=64 skip=$((p * 2048 + 1)) count=$((2048 - 1)) 2>/dev/null) \
         <(dd if=img.ubi bs=64 skip=$((p * 2048 + 1)) count=$((2048 - 1)) 2>/dev/null) \
    || fail "image format: PEB $p differs from the image beyond the EC header"
done
"$UBIKIT" ubi read f.img -n 0 -o vol0.bin || fail "cannot read volume 0 after format -f"
cmp -s <(head -c 300000 vol0.bin) a.img || fail "volume 0 content differs from the image after format -f"

# 3. Trailing 0xFF pages of an image PEB were not programmed: write there now.
#    The image's LEB 2 holds 300000 - 2*129024 = 41952 bytes -> pages 0..20 used.
if [ -x "$WORKLOAD" ]; then
  "$WORKLOAD" append f.img 0 2 $((21 * 2048)) 4096 || fail "writing after the image data failed: trailing pages were programmed"
else
  fail "test helper $WORKLOAD missing"
fi

# 4. Unknown erase counters get the mean; -e overrides.
"$UBIKIT" format f.img -e 10 -q -Q 33
"$UBIKIT" flash erase f.img --peb 5 >/dev/null
"$UBIKIT" format f.img -q -Q 33
[ "$(ech f.img 5)" = "10 33 512 2048" ] || fail "unknown EC: PEB 5 got '$(ech f.img 5)', expected the mean 10"
[ "$(ech f.img 6)" = "11 33 512 2048" ] || fail "kept EC: PEB 6 got '$(ech f.img 6)', expected 11"

# 5. Bad blocks are skipped: the image shifts past them, nothing is written to them.
"$UBIKIT" flash inject f.img bad --peb 1 >/dev/null
"$UBIKIT" flash inject f.img bad --peb 3 >/dev/null
"$UBIKIT" format f.img -f img.ubi -q -Q 44
[ "$(ech f.img 1)" = "11 33 512 2048" ] || fail "bad PEB 1 was written: its EC header is now '$(ech f.img 1)'"
for pair in "0 0" "1 2" "2 4" "3 5" "4 6"; do
  set -- $pair
  cmp -s <(dd if=f.img bs=64 skip=$(($2 * 2048 + 1)) count=$((2048 - 1)) 2>/dev/null) \
         <(dd if=img.ubi bs=64 skip=$(($1 * 2048 + 1)) count=$((2048 - 1)) 2>/dev/null) \
    || fail "bad blocks: image PEB $1 is not on PEB $2"
done
"$UBIKIT" ubi read f.img -N data -o vol0b.bin || fail "cannot read volume 'data' on a flash with bad blocks"
cmp -s vol0.bin vol0b.bin || fail "volume content changed when bad blocks were skipped"
"$UBIKIT" ubi info f.img --json > info1.json
python3 -c "import json,sys; d=json.load(open('info1.json')); sys.exit(0 if d['bad_pebs']==2 else 1)" || fail "info: bad_pebs != 2"

# 5b. The image from standard input (-f - -S SIZE), as ubiformat.
"$UBIKIT" flash create p.img --size 16MiB --page 2048 --subpage 512 --peb 128KiB >/dev/null
"$UBIKIT" format p.img -q -Q 44 -f - -S "$(stat -c %s img.ubi)" < img.ubi || fail "format -f - failed"
"$UBIKIT" ubi read p.img -N data -o vol0c.bin || fail "cannot read the volume written from stdin"
cmp -s vol0.bin vol0c.bin || fail "format -f - wrote other contents"

# 6. Errors: clear message, the exact exit status (1 failure, 2 usage).
expect_err() { local rc=$1 re=$2; shift 2; expect_fail "$rc" "$re" "$UBIKIT" format "$@"; }
head -c 100000 img.ubi > short.ubi
expect_err 1 "not a multiple of the eraseblock size" f.img -f short.ubi
ubinize -o img4k.ubi -p 128KiB -m 2048 -s 2048 -Q 1 v.ini >/dev/null 2>&1
expect_err 1 "VID header offset 2048" f.img -f img4k.ubi
expect_err 1 'cannot open "no-such.ubi": No such file' f.img -f no-such.ubi
expect_err 1 "needs its size" f.img -f -
expect_err 1 "differs from the size" f.img -f img.ubi -S 4096
expect_err 1 "VID header offset 1000 is not usable" f.img -O 1000
expect_err 1 'cannot open flash image "no-such.img": No such file' no-such.img
python3 -c "open('raw.bin','wb').write(b'\xff'*(1<<20))"
expect_err 1 "cannot detect the geometry" raw.bin
expect_err 1 "--page is needed" raw.bin --peb 128KiB

# 7. A plain dump without sidecar, geometry from options; NOR.
python3 -c "open('nor.bin','wb').write(b'\xff'*(4<<20))"
"$UBIKIT" format nor.bin --nor --peb 64KiB -q -Q 55
[ "$(ech nor.bin 3 65536)" = "0 55 64 128" ] || fail "NOR format: PEB 3 EC header is '$(ech nor.bin 3 65536)'"

finish ubi_format
cd / && rm -rf "$UBIKIT_SCRATCH"   # large images: keep them only after a failure
