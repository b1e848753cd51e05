#!/bin/bash
# ubinize byte-identity: 'ubikit ubinize' must write exactly the bytes of
# Debian's mtd-utils ubinize for the same ini file and flags, over several
# geometries and volume kinds; bad ini files must fail with a clear message.
set -euo pipefail
: "${UBIKIT:?}" "${UBIKIT_SCRATCH:?}"
. "$(dirname "$0")/test_lib.sh"
T_SOFT=1
need ubinize python3
rm -rf "$UBIKIT_SCRATCH"; mkdir -p "$UBIKIT_SCRATCH"; cd "$UBIKIT_SCRATCH"

# Deterministic inputs of awkward sizes (not multiples of any LEB size).
python3 - <<'PY'
import random
r = random.Random(1234)
for name, size in [("a.img", 300001), ("b.img", 50000), ("c.img", 129024 * 2), ("d.img", 1), ("e.img", 700000)]:
    open(name, "wb").write(bytes(r.getrandbits(8) for _ in range(size)))
PY

cat > multi.ini <<'INI'
; several volumes: dynamic with image + autoresize, static with alignment
; and skip-check, a dynamic volume without image, odd spacing and case
[Rootfs]
mode=ubi
image=a.img
vol_id=0
vol_type=dynamic
vol_name=rootfs
vol_flags=autoresize
vol_size = 2MiB  # trailing comment

[kern]
mode = ubi
image = b.img
vol_id = 3
vol_type = static
vol_name = "kernel A"
vol_alignment = 4096
vol_flags=skip-check

[empty]
MODE=ubi
vol_id=5
vol_size=1000000
vol_name=data
vol_alignment=2048
INI

cat > static.ini <<'INI'
[s1]
mode=ubi
image=c.img
vol_id=1
vol_type=static
vol_name=exact-lebs
[s2]
mode=ubi
image=d.img
vol_id=2
vol_type=static
vol_name=one-byte
[s3]
mode=ubi
image=e.img
vol_id=0
vol_type=static
vol_name=big
vol_alignment=512
INI

cat > single.ini <<'INI'
[ubifs]
mode=ubi
image=e.img
vol_id=0
vol_name=rootfs
INI

geos=(
  "-p 128KiB -m 2048 -s 512"
  "-p 128KiB -m 2048 -s 2048"
  "-p 128KiB -m 2048"
  "-p 256KiB -m 4096 -s 1024"
  "-p 256KiB -m 4096"
  "-p 64KiB -m 1"
  "-p 16KiB -m 512 -s 256"
  "-p 128KiB -m 2048 -s 512 -O 1984"
  "-p 128KiB -m 2048 -s 512 -e 12345"
  "-p 128KiB -m 2048 -x 1 -Q 0xdeadbeef"
  "-p 128KiB -m 2048 -s 512 -x 0"
  "--peb-size=131072 --min-io-size=2048 --sub-page-size=512 --vid-hdr-offset=512 --erase-counter=3 --image-seq=77"
)
n=0
for ini in multi.ini static.ini single.ini; do
  for g in "${geos[@]}"; do
    n=$((n + 1))
    # shellcheck disable=SC2086
    ubinize -o ref.img -Q 4242 $g "$ini" >/dev/null 2>ref.err || { cat ref.err >&2; fail "mtd-utils ubinize refused $g $ini"; continue; }
    # shellcheck disable=SC2086
    if ! "$UBIKIT" ubinize -o out.img -Q 4242 $g "$ini" 2>out.err; then
      cat out.err >&2; fail "ubikit ubinize $g $ini exited non-zero"; continue
    fi
    if ! cmp -s ref.img out.img; then
      fail "output differs from mtd-utils for: $g $ini"; cmp ref.img out.img || true
      ls -l ref.img out.img
    fi
  done
done
echo "byte-identity: $n cases checked"

# Without -Q the image_seq is random: two runs differ only in it.
"$UBIKIT" ubinize -o r1.img -p 128KiB -m 2048 -s 512 single.ini
"$UBIKIT" ubinize -o r2.img -p 128KiB -m 2048 -s 512 single.ini
s1=$(od -An -tx1 -j24 -N4 r1.img); s2=$(od -An -tx1 -j24 -N4 r2.img)
[ "$s1" != "$s2" ] || { fail "image_seq not random without -Q ($s1)"; }

# -v prints the geometry like ubinize
"$UBIKIT" ubinize -v -o r1.img -p 128KiB -m 2048 -s 512 -Q 1 single.ini > verbose.txt
grep -q "LEB size: *129024" verbose.txt || { cat verbose.txt >&2; fail "-v output lacks the LEB size"; }
"$UBIKIT" ubinize -h | grep -q -- "--vid-hdr-offset" || { fail "-h"; }

# Bad input: each must exit 1 for a bad ini file, 2 for bad command-line
# arguments (a usage error, as in every ubikit command: issue 8), print the
# expected words, and leave no output file.
bad_rc=1
bad() { # name expected-regex ini-text [flags...]
  local name=$1 re=$2 text=$3; shift 3
  printf '%s\n' "$text" > "bad-$name.ini"
  rm -f bad.img
  expect_fail $bad_rc "$re" "$UBIKIT" ubinize -o bad.img "$@" "bad-$name.ini"
  if [ -e bad.img ]; then fail "bad case '$name' left an output file"; fi
}
G=(-p 128KiB -m 2048 -s 512)
bad nomode 'mode' $'[v]\nimage=a.img\nvol_id=0\nvol_name=v' "${G[@]}"
bad noid 'vol_id' $'[v]\nmode=ubi\nimage=a.img\nvol_name=v' "${G[@]}"
bad badid 'volume ID' $'[v]\nmode=ubi\nimage=a.img\nvol_id=x1\nvol_name=v' "${G[@]}"
bad highid 'too high volume ID' $'[v]\nmode=ubi\nimage=a.img\nvol_id=128\nvol_name=v' "${G[@]}"
bad negid 'negative' $'[v]\nmode=ubi\nimage=a.img\nvol_id=-3\nvol_name=v' "${G[@]}"
bad noname 'vol_name' $'[v]\nmode=ubi\nimage=a.img\nvol_id=0' "${G[@]}"
bad longname 'too long volume name' "$(printf '[v]\nmode=ubi\nimage=a.img\nvol_id=0\nvol_name=%0128d' 0)" "${G[@]}"
bad nosize 'neither image' $'[v]\nmode=ubi\nvol_id=0\nvol_name=v' "${G[@]}"
bad noimg 'cannot stat' $'[v]\nmode=ubi\nimage=missing.img\nvol_id=0\nvol_name=v' "${G[@]}"
bad staticnoimg 'image is not specified' $'[v]\nmode=ubi\nvol_type=static\nvol_size=1MiB\nvol_id=0\nvol_name=v' "${G[@]}"
bad toosmall 'larger than volume size' $'[v]\nmode=ubi\nimage=a.img\nvol_size=1000\nvol_id=0\nvol_name=v' "${G[@]}"
bad badsize 'vol_size' $'[v]\nmode=ubi\nvol_size=12XB\nvol_id=0\nvol_name=v' "${G[@]}"
bad badtype 'invalid volume type' $'[v]\nmode=ubi\nimage=a.img\nvol_type=ro\nvol_id=0\nvol_name=v' "${G[@]}"
bad badflag 'unknown flags' $'[v]\nmode=ubi\nimage=a.img\nvol_flags=fast\nvol_id=0\nvol_name=v' "${G[@]}"
bad dupid 'IDs must be unique' $'[v]\nmode=ubi\nimage=a.img\nvol_id=0\nvol_name=v\n[w]\nmode=ubi\nimage=b.img\nvol_id=0\nvol_name=w' "${G[@]}"
bad dupname 'names must be unique' $'[v]\nmode=ubi\nimage=a.img\nvol_id=0\nvol_name=v\n[w]\nmode=ubi\nimage=b.img\nvol_id=1\nvol_name=v' "${G[@]}"
bad tworesize 'autoresize' $'[v]\nmode=ubi\nimage=a.img\nvol_id=0\nvol_name=v\nvol_flags=autoresize\n[w]\nmode=ubi\nimage=b.img\nvol_id=1\nvol_name=w\nvol_flags=autoresize' "${G[@]}"
bad skipdyn 'skip-check' $'[v]\nmode=ubi\nimage=a.img\nvol_id=0\nvol_name=v\nvol_flags=skip-check' "${G[@]}"
bad bigalign 'alignment' $'[v]\nmode=ubi\nimage=a.img\nvol_id=0\nvol_name=v\nvol_alignment=129024' "${G[@]}"
bad zeroalign 'alignment' $'[v]\nmode=ubi\nimage=a.img\nvol_id=0\nvol_name=v\nvol_alignment=0' "${G[@]}"
bad syntax 'syntax error.*line 3' $'[v]\nmode=ubi\nthis line has no equals sign\nvol_id=0' "${G[@]}"
bad nosection 'no sections' $'mode=ubi\nvol_id=0' "${G[@]}"
bad_rc=2
bad nopeb 'eraseblock size was not specified' $'[v]\nmode=ubi\nimage=a.img\nvol_id=0\nvol_name=v' -m 2048
bad nominio 'min. I/O unit size was not specified' $'[v]\nmode=ubi\nimage=a.img\nvol_id=0\nvol_name=v' -p 128KiB
bad pow2 'power of 2' $'[v]\nmode=ubi\nimage=a.img\nvol_id=0\nvol_name=v' -p 128KiB -m 2000
bad bigsub 'sub-page cannot be larger' $'[v]\nmode=ubi\nimage=a.img\nvol_id=0\nvol_name=v' -p 128KiB -m 512 -s 2048
bad vidoff8 'multiple of 8' $'[v]\nmode=ubi\nimage=a.img\nvol_id=0\nvol_name=v' -p 128KiB -m 2048 -O 100
bad hugepeb 'too high physical eraseblock' $'[v]\nmode=ubi\nimage=a.img\nvol_id=0\nvol_name=v' -p 4MiB -m 2048
bad badseq 'image sequence' $'[v]\nmode=ubi\nimage=a.img\nvol_id=0\nvol_name=v' -p 128KiB -m 2048 -Q 0x100000000
expect_fail 2 "output file was not specified" "$UBIKIT" ubinize -p 128KiB -m 2048 single.ini
expect_fail 1 'cannot open ini file "no-such.ini"' "$UBIKIT" ubinize -o x.img -p 128KiB -m 2048 no-such.ini

finish ubi_ubinize
cd / && rm -rf "$UBIKIT_SCRATCH"   # large images: keep them only after a failure
