#!/bin/bash
# Interop (b): a flash that ubikit wrote attaches in the Linux kernel with the
# same volumes and contents. ubikit formats a simulated flash, the UBI library
# runs a workload (LEB writes, unmap/map, atomic LEB changes, wear-leveling
# moves with a tiny threshold: tests/tools/ubi_workload.c), then the CLI does
# mkvol, update (dynamic and static), rsvol, rename (two at once) and rmvol.
# The kernel (tests/vm/linux-ubifs-vm, --no-mount) must attach without UBI
# errors and give each volume's name, type, size and md5 as expected.
set -euo pipefail
: "${UBIKIT:?}" "${UBIKIT_SCRATCH:?}" "${LINUX_VM:?}"
WORKLOAD=$(dirname "$UBIKIT")/../tests/tools/ubi_workload
[ -x "$WORKLOAD" ] || { echo "FAIL: $WORKLOAD not built"; exit 1; }
rm -rf "$UBIKIT_SCRATCH"; mkdir -p "$UBIKIT_SCRATCH"; cd "$UBIKIT_SCRATCH"
. "$(dirname "$0")/../tools/test_lib.sh"
T_SOFT=1

run_case() { # name flash-create-options vm-geometry [bad-PEB]
  local name=$1 copts=$2 vmgeo=$3 bad=${4:-}
  mkdir -p "$name/exp"; cd "$name"
  # shellcheck disable=SC2086
  "$UBIKIT" flash create f.img --size 32MiB $copts >/dev/null
  if [ -n "$bad" ]; then
    "$UBIKIT" flash inject f.img bad --peb "$bad" >/dev/null
    vmgeo="$vmgeo --bad-blocks $bad"
  fi
  "$UBIKIT" format f.img -q -Q 4711
  "$WORKLOAD" write f.img exp 7 || { fail "$name: workload"; cd ..; return; }
  local usable
  usable=$("$UBIKIT" ubi info f.img --json | python3 -c "import json,sys; print(json.load(sys.stdin)['leb_size'])")
  python3 -c "import random; r=random.Random(3); open('cli.bin','wb').write(bytes(r.getrandbits(8) for _ in range(int(2.3*$usable))))"
  python3 -c "import random; r=random.Random(4); open('st.bin','wb').write(bytes(r.getrandbits(8) for _ in range(12345)))"
  "$UBIKIT" ubi mkvol f.img -N clivol -S 5 -n 5 >/dev/null
  "$UBIKIT" ubi update f.img -N clivol cli.bin
  "$UBIKIT" ubi mkvol f.img -N st2 -t static -s 100KiB -n 6 >/dev/null
  "$UBIKIT" ubi update f.img -n 6 st.bin
  "$UBIKIT" ubi mkvol f.img -N gone -S 2 >/dev/null
  "$UBIKIT" ubi rmvol f.img -N gone
  "$UBIKIT" ubi rsvol f.img -n 0 -S 10
  "$UBIKIT" ubi rsvol f.img -N clivol -S 7
  "$UBIKIT" ubi rename f.img atomic atomic-renamed clivol cli-renamed
  # Take every PEB ubikit says is available: the kernel must agree on the
  # accounting (reserves for bad PEBs, WL, atomic change) or it will not
  # attach cleanly.
  "$UBIKIT" ubi mkvol f.img -N fill -m -n 3 >/dev/null
  local fill_lebs
  fill_lebs=$("$UBIKIT" ubi info f.img --json | python3 -c "import json,sys; d=json.load(sys.stdin); print([v['reserved_lebs'] for v in d['volumes'] if v['name']=='fill'][0], d['avail_pebs'])")
  [ "${fill_lebs#* }" = 0 ] || fail "$name: PEBs still available after mkvol -m: $fill_lebs"
  fill_lebs=${fill_lebs% *}
  # expected: "id name type reserved_lebs md5"
  python3 - "$usable" "$fill_lebs" > expected.txt <<'PY'
import hashlib, sys
u, fill = int(sys.argv[1]), int(sys.argv[2])
def md5(b): return hashlib.md5(b).hexdigest()
v0 = open("exp/vol0.bin", "rb").read()[:10 * u]
v1 = open("exp/vol1.bin", "rb").read()
v2 = open("exp/vol2.bin", "rb").read()
cli = open("cli.bin", "rb").read(); cli += b"\xff" * (7 * u - len(cli))
st = open("st.bin", "rb").read()
print(0, "leb-writes", "dynamic", 10, md5(v0))
print(1, "atomic-renamed", "dynamic", 3, md5(v1))
cold_lebs = [l.split()[3] for l in open("exp/volumes.txt") if l.split()[0] == "2"][0]
print(2, "cold-static", "static", cold_lebs, md5(v2))
print(3, "fill", "dynamic", fill, md5(b"\xff" * (fill * u)))
print(5, "cli-renamed", "dynamic", 7, md5(cli))
print(6, "st2", "static", (100 * 1024 + u - 1) // u, md5(st))
PY
  # ubikit itself reads back the same (re-attach after all the CLI steps)
  while read -r id vname _type _lebs sum; do
    got=$("$UBIKIT" ubi read f.img -n "$id" | md5sum | cut -d' ' -f1)
    [ "$got" = "$sum" ] || fail "$name: ubikit reads volume $id ($vname) as $got, expected $sum"
  done < expected.txt
  # the kernel's view
  local cmd='ubinfo -a >$RESULTS/ubinfo.txt; grep "Amount of available logical eraseblocks" $RESULTS/ubinfo.txt > $RESULTS/avail.txt; for v in /sys/class/ubi/ubi0_*; do id=${v##*_}; t=$(cat $v/type); echo "$id $(cat $v/name) $t $(cat $v/reserved_ebs) $(md5sum < /dev/ubi0_$id | cut -d" " -f1)"; done | sort -n > $RESULTS/volumes.txt'
  # shellcheck disable=SC2086
  if ! "$LINUX_VM" run --flash f.img $vmgeo --no-mount --no-writeback --strict --timeout 180 --out vm --cmd "$cmd" > vm.log 2>&1; then
    fail "$name: the kernel did not attach cleanly (exit $?):"; tail -30 vm.log
  elif ! grep -Eq "eraseblocks: *0 " vm/files/avail.txt; then
    fail "$name: the kernel counts PEBs available that ubikit gave to 'fill': $(cat vm/files/avail.txt)"
  elif ! diff -u expected.txt vm/files/volumes.txt; then
    fail "$name: kernel volumes differ from the expected ones"
  else
    echo "$name: kernel attached; volumes match: $(wc -l < expected.txt)"
  fi
  cd ..
}

run_case nand2k "--page 2048 --subpage 512 --oob 64 --peb 128KiB" "--nand 2048:64:128KiB" 5
run_case nor64k "--nor --peb 64KiB" "--nor 64KiB"

# 'ubikit format -f' of an mtd-utils ubinize image onto a used flash with a
# bad block: the kernel attaches it with the image's volumes and the erase
# counters format kept (+1).
fmt_case() {
  mkdir -p fmt; cd fmt
  python3 -c "import random; r=random.Random(21); open('d.bin','wb').write(bytes(r.getrandbits(8) for _ in range(300000)))"
  printf '[d]\nmode=ubi\nimage=d.bin\nvol_id=0\nvol_size=1MiB\nvol_name=dyn\n[s]\nmode=ubi\nimage=d.bin\nvol_id=1\nvol_type=static\nvol_name=stat\n' > v.ini
  ubinize -o v.ubi -p 128KiB -m 2048 -s 512 -Q 9 v.ini >/dev/null 2>&1 || { fail "fmt: mtd-utils ubinize"; cd ..; return; }
  "$UBIKIT" flash create f.img --size 16MiB --page 2048 --subpage 512 --peb 128KiB >/dev/null
  "$UBIKIT" format f.img -q -e 5
  "$UBIKIT" flash inject f.img bad --peb 3 >/dev/null
  "$UBIKIT" format f.img -q -f v.ubi
  python3 - > expected.txt <<'PY'
import hashlib
d = open("d.bin", "rb").read()
print(0, "dyn", "dynamic", 9, hashlib.md5(d + b"\xff" * (9 * 129024 - len(d))).hexdigest())
print(1, "stat", "static", 3, hashlib.md5(d).hexdigest())
PY
  local cmd='for v in /sys/class/ubi/ubi0_*; do id=${v##*_}; echo "$id $(cat $v/name) $(cat $v/type) $(cat $v/reserved_ebs) $(md5sum < /dev/ubi0_$id | cut -d" " -f1)"; done | sort -n > $RESULTS/volumes.txt'
  if ! "$LINUX_VM" run --flash f.img --nand 2048:64:128KiB --bad-blocks 3 --no-mount --no-writeback --strict \
       --timeout 180 --out vm --cmd "$cmd" > vm.log 2>&1; then
    fail "fmt: the kernel did not attach cleanly:"; tail -30 vm.log
  elif ! diff -u expected.txt vm/files/volumes.txt; then
    fail "fmt: kernel volumes differ"
  elif ! grep -q "max/mean erase counter: 6/6" vm/kernel-ubi.txt; then
    fail "fmt: erase counters not kept: $(grep -o 'max/mean erase counter: [0-9/]*' vm/kernel-ubi.txt)"
  else
    echo "fmt: kernel attached the formatted image; volumes and erase counters match"
  fi
  cd ..
}
command -v ubinize >/dev/null && fmt_case

if [ "$T_FAILS" -ne 0 ]; then echo "$T_FAILS failure(s); files kept in $UBIKIT_SCRATCH"; exit 1; fi
cd / && rm -rf "$UBIKIT_SCRATCH"   # large images: keep them only after a failure
echo "ubi_kernel_reads: all passed"
