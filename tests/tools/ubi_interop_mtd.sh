#!/bin/bash
# Interop (a): images made by mtd-utils' ubinize, for each geometry, attach
# in ubikit with the same volumes (ubikit ubi info --json) and the same
# contents (ubikit ubi read), both as a raw dump (geometry from options or
# detected from the headers) and after 'ubikit format -f' onto a simulator.
set -euo pipefail
: "${UBIKIT:?}" "${UBIKIT_SCRATCH:?}"
. "$(dirname "$0")/test_lib.sh"
T_SOFT=1
need ubinize python3
rm -rf "$UBIKIT_SCRATCH"; mkdir -p "$UBIKIT_SCRATCH"; cd "$UBIKIT_SCRATCH"

python3 - <<'PY'
import random
r = random.Random(99)
for name, size in [("dyn.img", 700001), ("st.img", 333333), ("st2.img", 5000)]:
    open(name, "wb").write(bytes(r.getrandbits(8) for _ in range(size)))
PY
cat > vols.ini <<'INI'
[rootfs]
mode=ubi
image=dyn.img
vol_id=0
vol_type=dynamic
vol_size=2MiB
vol_name=rootfs
[kernel]
mode=ubi
image=st.img
vol_id=1
vol_type=static
vol_name=kernel
[dtb]
mode=ubi
image=st2.img
vol_id=4
vol_type=static
vol_alignment=4096
vol_name=dtb
vol_flags=skip-check
[spare]
mode=ubi
vol_id=7
vol_size=300KiB
vol_name=spare
[data]
mode=ubi
vol_id=9
vol_size=64KiB
vol_name=data
vol_flags=autoresize
INI

# check IMAGE-INFO-JSON LEB-SIZE LABEL: volumes as the ini file says; then read each volume back.
check() {
  local flash=$1 leb=$2 label=$3; shift 3
  if ! "$UBIKIT" ubi info "$flash" --json "$@" > info.json 2> info.err; then
    fail "$label: ubikit cannot attach: $(cat info.err)"; return
  fi
  python3 - "$leb" "$label" <<'PY' || T_FAILS=$((T_FAILS + 1))
import json, sys
leb, label = int(sys.argv[1]), sys.argv[2]
d = json.load(open("info.json"))
ceil = lambda a, b: (a + b - 1) // b
exp = {  # id: (name, type, reserved LEBs (mtd-utils rounds by the full LEB size), alignment)
    0: ("rootfs", "dynamic", ceil(2 << 20, leb), 1),
    1: ("kernel", "static", ceil(333333, leb), 1),
    4: ("dtb", "static", ceil(5000, leb), 4096),
    7: ("spare", "dynamic", ceil(300 << 10, leb), 1),
    9: ("data", "dynamic", None, 1),
}
got = {v["vol_id"]: v for v in d["volumes"]}
bad = []
if d["leb_size"] != leb: bad.append("leb_size %d != %d" % (d["leb_size"], leb))
if sorted(got) != sorted(exp): bad.append("volume ids %s" % sorted(got))
for i, (name, typ, lebs, align) in exp.items():
    v = got.get(i)
    if not v: continue
    if v["name"] != name or v["type"] != typ or v["alignment"] != align:
        bad.append("volume %d: %s %s align %d" % (i, v["name"], v["type"], v["alignment"]))
    if lebs is not None and v["reserved_lebs"] != lebs:
        bad.append("volume %d: %d LEBs, expected %d" % (i, v["reserved_lebs"], lebs))
    if v["upd_marker"] or v["corrupted"]:
        bad.append("volume %d marked corrupted/updating" % i)
if got.get(9) and got[9]["reserved_lebs"] < 1: bad.append("autoresize volume empty")
if got.get(4) and not got[4]["skip_check"]: bad.append("dtb lost skip-check")
if got.get(1) and got[1]["used_bytes"] != 333333: bad.append("kernel used_bytes %d" % got[1]["used_bytes"])
if bad:
    print("FAIL: %s: info: %s" % (label, "; ".join(bad))); sys.exit(1)
PY
  local id img
  for pair in "0 dyn.img" "1 st.img" "4 st2.img" "7 -" "9 -"; do
    set -- $pair; id=$1; img=$2
    if ! "$UBIKIT" ubi read "$flash" -n "$id" -o "vol$id.bin" 2> read.err; then
      fail "$label: cannot read volume $id: $(cat read.err)"; continue
    fi
    python3 - "vol$id.bin" "$img" "$label" "$id" <<'PY' || T_FAILS=$((T_FAILS + 1))
import json, sys
out, img, label, vid = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
data = open(out, "rb").read()
v = [x for x in json.load(open("info.json"))["volumes"] if x["vol_id"] == vid][0]
if v["type"] == "static":
    ok = data == open(img, "rb").read()
else:
    exp = open(img, "rb").read() if img != "-" else b""
    size = v["reserved_lebs"] * v["usable_leb_size"]
    ok = len(data) == size and data[:len(exp)] == exp and data[len(exp):] == b"\xff" * (size - len(exp))
if not ok:
    print("FAIL: %s: volume %d content differs (%d bytes read)" % (label, vid, len(data))); sys.exit(1)
PY
  done
}

# geometry name | ubinize flags | ubikit geometry options ("-": detected from
# the EC headers) | LEB size | flash-create options
cases=(
  "nand2k-sp512|-p 128KiB -m 2048 -s 512|-|129024|--page 2048 --subpage 512 --peb 128KiB"
  "nand2k-nosub|-p 128KiB -m 2048 -s 2048|--page 2048 --peb 128KiB|126976|--page 2048 --peb 128KiB"
  "nand4k|-p 256KiB -m 4096 -s 1024|-|258048|--page 4096 --subpage 1024 --oob 128 --peb 256KiB"
  "nand4k-opts|-p 256KiB -m 4096 -s 1024|--page 4096 --subpage 1024 --peb 256KiB|258048|--page 4096 --subpage 1024 --oob 128 --peb 256KiB"
  "nand512|-p 16KiB -m 512 -s 256|-|15872|--page 512 --subpage 256 --oob 16 --peb 16KiB"
  "nor64k|-p 64KiB -m 1|-|65408|--nor --peb 64KiB"
)
for c in "${cases[@]}"; do
  IFS='|' read -r name uflags gopts leb copts <<< "$c"
  # shellcheck disable=SC2086
  ubinize -o "$name.ubi" $uflags -Q 777 vols.ini >/dev/null 2>&1 || { fail "$name: mtd-utils ubinize failed"; continue; }
  # raw dump: the image padded with 0xFF to 16 MiB, no sidecar
  python3 - "$name.ubi" "$name.raw" <<'PY'
import sys
d = open(sys.argv[1], "rb").read()
open(sys.argv[2], "wb").write(d + b"\xff" * ((16 << 20) - len(d)))
PY
  [ "$gopts" = "-" ] && gopts=""
  # shellcheck disable=SC2086
  check "$name.raw" "$leb" "$name raw dump" $gopts
  [ -e "$name.raw.sim" ] && fail "$name: read-only info/read created a sidecar"
  # the same image flashed with 'ubikit format -f' onto a simulator with a bad block
  # shellcheck disable=SC2086
  "$UBIKIT" flash create "$name.sim.img" --size 16MiB $copts >/dev/null
  "$UBIKIT" flash inject "$name.sim.img" bad --peb 2 >/dev/null
  if "$UBIKIT" format "$name.sim.img" -f "$name.ubi" -q; then
    check "$name.sim.img" "$leb" "$name after format -f"
  else
    fail "$name: ubikit format -f failed"
  fi
done

if [ "$T_FAILS" -ne 0 ]; then echo "$T_FAILS failure(s); files kept in $UBIKIT_SCRATCH"; exit 1; fi
cd / && rm -rf "$UBIKIT_SCRATCH"   # large images: keep them only after a failure
echo "ubi_interop_mtd: all passed"
