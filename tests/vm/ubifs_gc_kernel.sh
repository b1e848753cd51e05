#!/bin/bash
# The Linux kernel judges ubikit's garbage collection (label vm): a small
# UBIFS (GEOM nand2k: 2048-byte pages, 512-byte sub-pages; nand4k: 4096) on
# a raw NAND flash is churned by ubikit (tests/ubifs/ubifs_gc_tool: the
# reference model's operations with live data bounded to LIMIT % of the main
# area, until PASSES times the main area was written: GC of data and index
# LEBs, in-the-gaps commits); then
#   1. the kernel mounts it with --ubifs-checks --strict (its dbg_check_lprops
#      compares every LEB's space with a scan, the index and LPT are checked
#      at mount, commit and unmount): no error or warning, /w$SEED equal to
#      the model's manifest; the kernel writes files under /k and unmounts;
#   2. ubikit mounts the kernel's result, adopts /w$SEED, churns on (GC
#      again, over the kernel's LEBs too), unmounts;
#   3. the kernel checks again: /w$SEED as the model says, /k as it left it.
set -euo pipefail
S=${UBIKIT_SCRATCH:?}
: "${UBIKIT_SRC:?}" "${GC_TOOL:?}"
VM=${LINUX_VM:-$UBIKIT_SRC/tests/vm/linux-ubifs-vm}
GEOM=${GEOM:-nand2k}
SEED=${SEED:-21}
PASSES=${PASSES:-3}
LIMIT=${LIMIT:-30}
fail() { echo "FAIL: $*" >&2; exit 1; }
case $GEOM in
nand2k) PAGE=2048 SUB=512 OOB=64 PEB=128 LEB=129024 LEBS=48 MIB=64 ;;
nand4k) PAGE=4096 SUB=1024 OOB=224 PEB=256 LEB=258048 LEBS=32 MIB=256 ;; # nandsim: 1 KiB sub-pages; > 128 MiB
*) fail "GEOM $GEOM" ;;
esac
rm -rf "$S"
mkdir -p "$S/empty" "$S/in"
mkfs.ubifs -r "$S/empty" -m $PAGE -e $LEB -c $LEBS -x lzo -o "$S/fs.img" || fail "mkfs.ubifs"
cat >"$S/ubi.ini" <<INI
[ubifs]
mode=ubi
image=$S/fs.img
vol_id=0
vol_type=dynamic
vol_name=rootfs
vol_size=$((LEBS * LEB))
INI
ubinize -o "$S/ubi.img" -m $PAGE -p ${PEB}KiB -s $SUB "$S/ubi.ini" || fail "ubinize"
head -c $((MIB << 20)) /dev/zero | tr '\0' '\377' >"$S/flash"
dd if="$S/ubi.img" of="$S/flash" conv=notrunc status=none
cp "$UBIKIT_SRC/tests/vm/ubifs_write_manifest.sh" "$S/in/manifest.sh"
vm() { # $1 = step name, $2 = script
	set +e
	"$VM" run --flash "$S/flash" --nand $PAGE:$OOB:${PEB}KiB:${MIB}MiB --ubifs-checks --strict --timeout 300 \
		--copy-in "$S/in" --out "$S/vm-$1" --cmd "$2" >"$S/vm-$1.log" 2>&1
	local rc=$?
	set -e
	if [ $rc != 0 ]; then
		cat "$S/vm-$1.log" >&2
		[ -f "$S/vm-$1/files/w.manifest" ] && diff -u "$S/in/expected" "$S/vm-$1/files/w.manifest" | head -40 >&2
		fail "kernel step $1 exited $rc (123: kernel error/warning)"
	fi
}
"$GC_TOOL" "$GEOM:$S/flash" "$SEED" "$PASSES" "$LIMIT" "$S/in/expected" || fail "ubikit churn 1"
vm check1 "sh \$IN/in/manifest.sh \$MNT/w$SEED >\$RESULTS/w.manifest && cmp -s \$RESULTS/w.manifest \$IN/in/expected &&
mkdir -p \$MNT/k/a && i=0 && while [ \$i -lt 40 ]; do echo kernel file \$i >\$MNT/k/a/f\$i; i=\$((i+1)); done &&
dd if=/dev/urandom of=\$MNT/k/big bs=4096 count=120 2>/dev/null && rm \$MNT/k/a/f4 && setfattr -n user.k -v kernel \$MNT/k/a/f5 &&
truncate -s 7000 \$MNT/k/big && sh \$IN/in/manifest.sh \$MNT/k >\$RESULTS/k.manifest"
cp "$S/vm-check1/files/k.manifest" "$S/in/k.expected"
WM_RESUME=1 "$GC_TOOL" "$GEOM:$S/flash" "$SEED" 2 "$LIMIT" "$S/in/expected" || fail "ubikit churn 2"
vm check2 "sh \$IN/in/manifest.sh \$MNT/w$SEED >\$RESULTS/w.manifest && cmp -s \$RESULTS/w.manifest \$IN/in/expected &&
sh \$IN/in/manifest.sh \$MNT/k >\$RESULTS/k.manifest && cmp -s \$RESULTS/k.manifest \$IN/in/k.expected"
grep -i 'ubifs' "$S/vm-check2/kernel-ubi.txt" | head -5 || true
echo "PASS: ubikit GC churn ($GEOM, $PASSES passes) -> kernel (--ubifs-checks --strict) -> ubikit GC -> kernel: both trees as expected"
