#!/bin/bash
# Interop (c): a flash the Linux kernel wrote attaches in ubikit with the same
# volumes and contents. In the VM (tests/vm/linux-ubifs-vm, --no-mount):
# ubiformat, ubiattach, ubimkvol (dynamic, static, one to be removed),
# ubiupdatevol, ubirsvol, ubirename, ubirmvol; checksums taken in the VM.
# The dumped flash is then read by ubikit (raw dump: geometry detected from
# the headers, then given by options), and ubikit keeps working on it
# (mkvol + update + read back, then the kernel attaches that again).
set -euo pipefail
: "${UBIKIT:?}" "${UBIKIT_SCRATCH:?}" "${LINUX_VM:?}"
rm -rf "$UBIKIT_SCRATCH"; mkdir -p "$UBIKIT_SCRATCH"; cd "$UBIKIT_SCRATCH"
. "$(dirname "$0")/../tools/test_lib.sh"
T_SOFT=1

python3 - <<'PY'
import random
r = random.Random(11)
for name, size in [("d1.bin", 400000), ("s1.bin", 200001), ("d2.bin", 4096)]:
    open(name, "wb").write(bytes(r.getrandbits(8) for _ in range(size)))
PY

run_case() { # name vm-geometry ubikit-geometry-options flash-size [bad-PEB]
  local name=$1 vmgeo=$2 gopts=$3 size=$4 bad=${5:-}
  mkdir -p "$name"; cd "$name"
  python3 -c "open('f.img','wb').write(b'\xff' * ($size))"
  [ -n "$bad" ] && vmgeo="$vmgeo --bad-blocks $bad"
  local detect=""      # also try without geometry options (detection from the headers)
  case "$gopts" in *oob*) detect=skip ;; esac
  local cmd='set -e
ubidetach -p /dev/mtd0
ubiformat -y -q -Q 31337 /dev/mtd0
ubiattach -p /dev/mtd0 >/dev/null
ubimkvol /dev/ubi0 -N dyn -s 1MiB >/dev/null
ubimkvol /dev/ubi0 -N stat -t static -s 300KiB >/dev/null
ubimkvol /dev/ubi0 -N tmp -s 100KiB >/dev/null
ubimkvol /dev/ubi0 -N small -n 9 -s 64KiB >/dev/null
ubiupdatevol /dev/ubi0_0 $IN/d1.bin
ubiupdatevol /dev/ubi0_1 $IN/s1.bin
ubiupdatevol /dev/ubi0_9 $IN/d2.bin
ubirsvol /dev/ubi0 -N dyn -s 2MiB
ubirmvol /dev/ubi0 -N tmp
ubirename /dev/ubi0 dyn dyn2 small small2
ubinfo -a > $RESULTS/ubinfo.txt
for v in /sys/class/ubi/ubi0_*; do id=${v##*_}; echo "$id $(cat $v/name) $(cat $v/type) $(cat $v/reserved_ebs) $(md5sum < /dev/ubi0_$id | cut -d" " -f1)"; done | sort -n > $RESULTS/volumes.txt'
  # shellcheck disable=SC2086
  if ! "$LINUX_VM" run --flash f.img $vmgeo --no-mount --timeout 180 --out vm \
       --copy-in ../d1.bin --copy-in ../s1.bin --copy-in ../d2.bin --cmd "$cmd" > vm.log 2>&1; then
    fail "$name: the VM run failed:"; tail -30 vm.log; cd ..; return
  fi
  [ "$(wc -l < vm/files/volumes.txt)" = 3 ] || { fail "$name: kernel volumes: $(cat vm/files/volumes.txt)"; cd ..; return; }
  # ubikit: same volumes (id name type size) and the same md5 of each volume.
  local opts
  for opts in "$detect" "$gopts"; do
    [ "$opts" = skip ] && continue
    # shellcheck disable=SC2086
    if ! "$UBIKIT" ubi info f.img --json $opts > info.json 2> info.err; then
      fail "$name: ubikit cannot attach the kernel's flash (options '$opts'): $(cat info.err)"; continue
    fi
    : > got.txt
    python3 -c "
import json
for v in json.load(open('info.json'))['volumes']:
    print(v['vol_id'], v['name'], v['type'], v['reserved_lebs'])" > meta.txt
    while read -r id vname vtype lebs; do
      # shellcheck disable=SC2086
      sum=$("$UBIKIT" ubi read f.img -n "$id" $opts | md5sum | cut -d' ' -f1)
      echo "$id $vname $vtype $lebs $sum" >> got.txt
    done < meta.txt
    diff -u vm/files/volumes.txt got.txt || fail "$name: ubikit's volumes differ from the kernel's (options '$opts')"
  done
  python3 -c "import json,sys; d=json.load(open('info.json')); sys.exit(0 if d['image_seq']==31337 else 1)" \
    || fail "$name: image_seq is not ubiformat's -Q value"
  if [ -n "$bad" ]; then
    python3 -c "import json,sys; d=json.load(open('info.json')); sys.exit(0 if d['bad_pebs']==1 else 1)" \
      || fail "$name: ubikit does not see the bad block marked in the OOB"
  fi
  # ubikit writes on top of the kernel's flash; the kernel attaches that again.
  cp f.img g.img
  # shellcheck disable=SC2086
  if "$UBIKIT" ubi mkvol g.img -N added -S 4 -n 20 $gopts >/dev/null && "$UBIKIT" ubi update g.img -n 20 ../d1.bin $gopts; then
    local want
    want=$(python3 -c "import hashlib,json; d=open('../d1.bin','rb').read(); v=[x for x in json.load(open('info.json'))['volumes']][0]; print(hashlib.md5(d+b'\xff'*(4*v['usable_leb_size']-len(d))).hexdigest())")
    # shellcheck disable=SC2086
    if ! "$LINUX_VM" run --flash g.img $vmgeo --no-mount --no-writeback --strict --timeout 180 --out vm2 \
         --cmd 'md5sum < /dev/ubi0_20 | cut -d" " -f1 > $RESULTS/sum; cat /sys/class/ubi/ubi0_20/name >> $RESULTS/sum' > vm2.log 2>&1; then
      fail "$name: the kernel did not attach the flash after ubikit's mkvol/update:"; tail -20 vm2.log
    elif [ "$(cat vm2/files/sum)" != "$(printf '%s\nadded' "$want")" ]; then
      fail "$name: kernel reads ubikit's new volume as $(cat vm2/files/sum), expected $want"
    fi
  else
    fail "$name: ubikit mkvol/update on the kernel's flash failed"
  fi
  echo "$name: done"
  cd ..
}

run_case nand2k "--nand 2048:64:128KiB" "--page 2048 --subpage 512 --peb 128KiB" $((32 << 20))
# 4 KiB pages with OOB in the file (nanddump -o layout) and a bad block whose
# marker the kernel leaves in the OOB.
run_case nand4k-oob "--nand 4096:128:256KiB --image-has-oob" "--page 4096 --subpage 1024 --oob 128 --with-oob --peb 256KiB" $((256 * 64 * (4096 + 128))) 7

if [ "$T_FAILS" -ne 0 ]; then echo "$T_FAILS failure(s); files kept in $UBIKIT_SCRATCH"; exit 1; fi
cd / && rm -rf "$UBIKIT_SCRATCH"   # large images: keep them only after a failure
echo "ubi_kernel_writes: all passed"
