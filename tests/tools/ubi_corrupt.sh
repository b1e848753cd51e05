#!/bin/bash
# Bad input is never fatal: 'ubikit ubi info' and 'ubikit ubi read' on
# mtd-utils images with corrupted EC headers, VID headers, volume-table
# records and data must exit 0 or 1 (never crash, hang or trip ASan/UBSan),
# name the place in their error, and never change the image (read-only).
set -euo pipefail
: "${UBIKIT:?}" "${UBIKIT_SCRATCH:?}"
command -v ubinize >/dev/null || { echo "SKIP: mtd-utils ubinize not installed"; exit 77; }
rm -rf "$UBIKIT_SCRATCH"; mkdir -p "$UBIKIT_SCRATCH"; cd "$UBIKIT_SCRATCH"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

python3 -c "import random; r=random.Random(2); open('d.bin','wb').write(bytes(r.getrandbits(8) for _ in range(300000)))"
printf '[d]\nmode=ubi\nimage=d.bin\nvol_id=0\nvol_size=1MiB\nvol_name=dyn\n[s]\nmode=ubi\nimage=d.bin\nvol_id=3\nvol_type=static\nvol_name=stat\n' > v.ini
ubinize -o v.ubi -p 16KiB -m 512 -s 256 -Q 9 v.ini >/dev/null 2>&1
G=(--page 512 --subpage 256 --peb 16KiB)
n=${UBIKIT_CORRUPT_CASES:-60}
python3 - "$n" <<'PY'
import random, struct, sys
n = int(sys.argv[1])
img = open("v.ubi", "rb").read()
peb, vid, data = 16384, 256, 512
npeb = len(img) // peb           # corrupt only the PEBs ubinize wrote
img += b"\xff" * ((4 << 20) - len(img))  # a 4 MiB flash: room for the volumes
r = random.Random(1234)
for i in range(n):
    b = bytearray(img)
    kind = i % 5
    for _ in range(1 + r.randrange(3)):
        p = r.randrange(npeb)
        if kind == 0:   # EC header byte (CRC then wrong, or all kinds of values)
            off = p * peb + r.randrange(64)
        elif kind == 1: # VID header byte
            off = p * peb + vid + r.randrange(64)
        elif kind == 2: # a volume-table record in LEB 0 and/or 1
            off = r.randrange(2) * peb + data + r.randrange(2) * 172 + r.randrange(172)
        elif kind == 3: # data bytes (static CRC)
            off = p * peb + data + r.randrange(peb - data)
        else:           # a header with a valid CRC but hostile fields
            base = p * peb + (vid if r.randrange(2) else 0)
            f = r.choice([4, 5, 6, 7, 8, 12, 16, 20, 24, 28])
            b[base + f:base + f + 4] = struct.pack(">I", r.choice([0, 1, 2, 0x7FFFFFFF, 0xFFFFFFFF, 0x80000000, r.getrandbits(32)]))
            import zlib
            b[base + 60:base + 64] = struct.pack(">I", zlib.crc32(bytes(b[base:base + 60])) ^ 0xFFFFFFFF)
            continue
        b[off] ^= 1 << r.randrange(8) if r.randrange(2) else r.randrange(1, 256)
    open("c%03d.img" % i, "wb").write(bytes(b))
PY
"$UBIKIT" ubi info v.ubi "${G[@]}" >/dev/null 2>&1 && fail "the unpadded image should not attach (volumes larger than it)"
python3 -c "open('ok.img','wb').write(open('v.ubi','rb').read() + b'\xff' * ((4 << 20) - $(stat -c %s v.ubi)))"
"$UBIKIT" ubi info ok.img "${G[@]}" >/dev/null || fail "the uncorrupted image does not attach"
attached=0
for ((i = 0; i < n; i++)); do
  f=$(printf 'c%03d.img' "$i")
  sum=$(md5sum < "$f")
  for cmd in "info --json" "read -n 0 -o /dev/null" "read -n 3 -o /dev/null"; do
    set +e
    # shellcheck disable=SC2086
    timeout 20 "$UBIKIT" ubi $cmd "$f" "${G[@]}" > out.txt 2> err.txt
    rc=$?
    set -e
    if [ "$rc" -gt 1 ] || grep -q "Sanitizer\|runtime error" err.txt; then
      fail "$f: 'ubi $cmd' exit $rc"; head -20 err.txt
    elif [ "$rc" = 1 ] && ! [ -s err.txt ]; then
      fail "$f: 'ubi $cmd' failed without a message"
    fi
    [ "$rc" = 0 ] && [ "$cmd" = "info --json" ] && attached=$((attached + 1))
  done
  [ "$(md5sum < "$f")" = "$sum" ] || fail "$f: a read-only command changed the image"
done
echo "$n corrupted images checked; $attached attached despite the damage"
# Most single-byte damage is survivable (one layout copy, data, a free PEB):
# if almost nothing attaches, the test is not exercising attach any more.
[ "$attached" -ge $((n / 5)) ] || fail "only $attached of $n damaged images attached"

if [ "$fails" -ne 0 ]; then echo "$fails failure(s); files kept in $UBIKIT_SCRATCH"; exit 1; fi
cd / && rm -rf "$UBIKIT_SCRATCH"   # large images: keep them only after a failure
echo "ubi_corrupt: all passed"
