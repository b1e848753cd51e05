#!/bin/bash
# Bad input is never fatal: 'ubikit ubi info' and 'ubikit ubi read' on
# mtd-utils images with corrupted EC headers, VID headers, volume-table
# records and data must exit 0 or 1 (never crash, hang or trip ASan/UBSan),
# name the place in their error, and never change the image (read-only); a
# read that succeeds gives exactly the volume's data (the static volume's
# data CRC and the headers' CRCs catch what the damage hit).
set -euo pipefail
: "${UBIKIT:?}" "${UBIKIT_SCRATCH:?}"
. "$(dirname "$0")/test_lib.sh"
T_SOFT=1
need ubinize python3
rm -rf "$UBIKIT_SCRATCH"; mkdir -p "$UBIKIT_SCRATCH"; cd "$UBIKIT_SCRATCH"

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
# (issue 12 class 2: an image that ends where its data ends attaches as on a
# device, with erased PEBs assumed after its end)
"$UBIKIT" ubi info v.ubi "${G[@]}" >/dev/null || fail "the unpadded image does not attach (volumes larger than it)"
python3 -c "open('ok.img','wb').write(open('v.ubi','rb').read() + b'\xff' * ((4 << 20) - $(stat -c %s v.ubi)))"
"$UBIKIT" ubi info ok.img "${G[@]}" >/dev/null || fail "the uncorrupted image does not attach"
attached=0 reads=0
for ((i = 0; i < n; i++)); do
  f=$(printf 'c%03d.img' "$i")
  sum=$(md5sum < "$f")
  for cmd in "info --json" "read -n 0 -o vol0.bin" "read -n 3 -o vol3.bin"; do
    rm -f vol0.bin vol3.bin
    # shellcheck disable=SC2086
    run timeout 20 "$UBIKIT" ubi $cmd "$f" "${G[@]}"
    rc=$T_RC
    if [ "$rc" -gt 1 ]; then
      head -20 "$T_ERR" >&2; fail "$f: 'ubi $cmd' exit $rc"
    elif [ "$rc" = 1 ] && ! grep -qE 'PEB|LEB|volume|header|table|record|CRC' "$T_ERR"; then
      cat "$T_ERR" >&2; fail "$f: 'ubi $cmd' failed without naming the place"
    fi
    [ "$rc" = 0 ] && [ "$cmd" = "info --json" ] && attached=$((attached + 1))
    # a successful read gives the volume's data, never other bytes: the
    # dynamic volume d.bin then erased (0xFF) space, the static one d.bin
    # (dynamic volumes have no data CRC: damage to their data bytes, kind 3,
    # is for the flash's ECC to see, not UBI; a damaged VID header loses its
    # LEB, which then reads as erased, as in the kernel)
    if [ "$rc" = 0 ] && [ -e vol0.bin ] && [ $((i % 5)) != 3 ]; then
      python3 - vol0.bin d.bin $((i % 5)) <<'PY' || fail "$f: 'ubi $cmd' succeeded with other bytes than the volume's"
import sys
got, want, kind = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read(), int(sys.argv[3])
leb = 16384 - 512
want += b"\xff" * (len(got) - len(want))
if len(got) % leb or len(got) < 300000:
    sys.exit("size %d" % len(got))
for o in range(0, len(got), leb):
    g, w = got[o:o + leb], want[o:o + leb]
    if g != w and not (kind in (1, 4) and g == b"\xff" * leb):
        sys.exit("LEB %d differs" % (o // leb))
PY
      reads=$((reads + 1))
    fi
    if [ "$rc" = 0 ] && [ -e vol3.bin ]; then
      cmp -s vol3.bin d.bin || fail "$f: 'ubi $cmd' succeeded with other bytes than the static volume's"
      reads=$((reads + 1))
    fi
  done
  [ "$(md5sum < "$f")" = "$sum" ] || fail "$f: a read-only command changed the image"
done
echo "$n corrupted images checked; $attached attached despite the damage; $reads volume reads gave the right bytes"
# Most single-byte damage is survivable (one layout copy, data, a free PEB):
# if almost nothing attaches, the test is not exercising attach any more.
[ "$attached" -ge $((n / 5)) ] || fail "only $attached of $n damaged images attached"

finish ubi_corrupt
cd / && rm -rf "$UBIKIT_SCRATCH"   # large images: keep them only after a failure
