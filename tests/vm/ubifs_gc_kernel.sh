#!/bin/bash
# The Linux kernel judges ubikit's read-write path round after round (label
# vm; issue 9 item 1). A small UBIFS on a raw flash (GEOM nand2k: 2048-byte
# pages, 512-byte sub-pages; nand4k: 4096-byte pages, 1 KiB sub-pages;
# nand4koob: the same with page+OOB in the file, nanddump -o layout; nor:
# 64 KiB erase blocks, min. I/O 1, the kernel's mtdram) is churned by ubikit
# (tests/ubifs/ubifs_gc_tool: the reference model's operations with live
# data bounded to LIMIT % of the main area, until PASSES times the main area
# was written: renames, hard links, truncates, xattrs, files over many LEBs;
# GC of data and index LEBs, in-the-gaps commits, LPT GC); then, ROUNDS times:
#   1. the kernel mounts it with --ubifs-checks --strict (its dbg_check_lprops
#      compares every LEB's space with a scan; the index, LPT, orphans and
#      every inode are checked at mount, commit and unmount): no error or
#      warning, /w$SEED equal to the model's manifest, every /kN an earlier
#      kernel round wrote as it left it; the kernel writes /kR and unmounts;
#   2. ubikit mounts the kernel's result, adopts /w$SEED and churns on (GC
#      again, over the kernel's LEBs too), unmounts.
# The last round ends with the kernel's check. Compressors rotate through
# COMPRS (mkfs, then ubikit's and the kernel's writes alternate: compr=
# mount options), so each geometry sees all four with ROUNDS >= 2.
# ROUNDS defaults to 2, to 4 with UBIKIT_LONG_TESTS=1.
set -euo pipefail
S=${UBIKIT_SCRATCH:?}
: "${UBIKIT_SRC:?}" "${GC_TOOL:?}"
VM=${LINUX_VM:-$UBIKIT_SRC/tests/vm/linux-ubifs-vm}
GEOM=${GEOM:-nand2k}
SEED=${SEED:-21}
PASSES=${PASSES:-3}
LIMIT=${LIMIT:-30}
ROUNDS=${ROUNDS:-2}
[ "${UBIKIT_LONG_TESTS:-0}" = 1 ] && ROUNDS=4
fail() { echo "FAIL: $*" >&2; exit 1; }
OOBFILE=0
case $GEOM in
nand2k) MINIO=2048 SUB=512 PEB=128KiB LEB=129024 LEBS=48 COMPRS="lzo zstd zlib none"
	VMGEO=(--nand 2048:64:128KiB:64MiB) FLASH=$((64 << 20)) ;;
nand4k) MINIO=4096 SUB=1024 PEB=256KiB LEB=258048 LEBS=32 COMPRS="zlib none zstd lzo"
	VMGEO=(--nand 4096:224:256KiB:256MiB) FLASH=$((256 << 20)) ;; # nandsim: 1 KiB sub-pages above 128 MiB
nand4koob) MINIO=4096 SUB=1024 PEB=256KiB LEB=258048 LEBS=32 COMPRS="zlib none zstd lzo" OOBFILE=1
	VMGEO=(--nand 4096:224:256KiB:256MiB --image-has-oob) FLASH=$((256 << 20)) ;;
nor) MINIO=8 SUB=1 PEB=64KiB LEB=65408 LEBS=96 COMPRS="zstd lzo none zlib"
	VMGEO=(--nor 64KiB:16MiB) FLASH=$((16 << 20)) ;;
*) fail "GEOM $GEOM" ;;
esac
read -r -a CM <<<"$COMPRS"
rm -rf "$S"
mkdir -p "$S/empty" "$S/in"
mkfs.ubifs -r "$S/empty" -m $MINIO -e $LEB -c $LEBS -x "${CM[0]}" -o "$S/fs.img" || fail "mkfs.ubifs"
cat >"$S/ubi.ini" <<INI
[ubifs]
mode=ubi
image=$S/fs.img
vol_id=0
vol_type=dynamic
vol_name=rootfs
vol_size=$((LEBS * LEB))
INI
ubinize -o "$S/ubi.img" -m $((MINIO == 8 ? 1 : MINIO)) -p $PEB -s $SUB "$S/ubi.ini" || fail "ubinize"
head -c $FLASH /dev/zero | tr '\0' '\377' >"$S/flash"
dd if="$S/ubi.img" of="$S/flash" conv=notrunc status=none
if [ $OOBFILE = 1 ]; then # page + 224 erased OOB bytes per page
	python3 - "$S/flash" <<'PY' || fail "adding OOB"
import sys
p = sys.argv[1]
with open(p, 'rb') as f, open(p + '.oob', 'wb') as o:
    oob = b'\xff' * 224
    while True:
        page = f.read(4096)
        if not page:
            break
        o.write(page + oob)
PY
	mv "$S/flash.oob" "$S/flash"
fi
cp "$UBIKIT_SRC/tests/vm/ubifs_write_manifest.sh" "$S/in/manifest.sh"
vm() { # $1 = step name, $2 = kernel compressor, $3 = script
	set +e
	"$VM" run --flash "$S/flash" "${VMGEO[@]}" --ubifs-checks --strict --timeout 300 \
		--mount-opts "compr=$2" --copy-in "$S/in" --out "$S/vm-$1" --cmd "$3" >"$S/vm-$1.log" 2>&1
	local rc=$?
	set -e
	if [ $rc != 0 ]; then
		cat "$S/vm-$1.log" >&2
		[ -f "$S/vm-$1/files/w.manifest" ] && diff -u "$S/in/expected" "$S/vm-$1/files/w.manifest" | head -40 >&2
		fail "kernel step $1 exited $rc (123: kernel error/warning)"
	fi
}
c=1
for r in $(seq 1 "$ROUNDS"); do
	uc=${CM[$((c % 4))]} kc=${CM[$(((c + 1) % 4))]}
	c=$((c + 2))
	resume=()
	passes=$PASSES
	[ $r -gt 1 ] && resume=(WM_RESUME=1) passes=2
	env "${resume[@]}" UBIKIT_COMPR="$uc" "$GC_TOOL" "$GEOM:$S/flash" "$SEED" "$passes" "$LIMIT" "$S/in/expected" ||
		fail "ubikit churn, round $r (compr $uc)"
	# the kernel: check /w and every earlier /kN, then write /kR
	chk="sh \$IN/in/manifest.sh \$MNT/w$SEED >\$RESULTS/w.manifest && cmp -s \$RESULTS/w.manifest \$IN/in/expected"
	for j in $(seq 1 $((r - 1))); do
		chk="$chk && sh \$IN/in/manifest.sh \$MNT/k$j >\$RESULTS/k$j.manifest && cmp -s \$RESULTS/k$j.manifest \$IN/in/k$j.expected"
	done
	vm round$r "$kc" "$chk &&
mkdir -p \$MNT/k$r/a && i=0 && while [ \$i -lt 40 ]; do echo kernel round $r file \$i >\$MNT/k$r/a/f\$i; i=\$((i+1)); done &&
dd if=/dev/urandom of=\$MNT/k$r/big bs=4096 count=120 2>/dev/null && rm \$MNT/k$r/a/f4 && setfattr -n user.k -v kernel$r \$MNT/k$r/a/f5 &&
ln \$MNT/k$r/a/f6 \$MNT/k$r/a/f6link && mv \$MNT/k$r/a/f7 \$MNT/k$r/f7moved &&
truncate -s 7000 \$MNT/k$r/big && sh \$IN/in/manifest.sh \$MNT/k$r >\$RESULTS/k$r.manifest"
	cp "$S/vm-round$r/files/k$r.manifest" "$S/in/k$r.expected"
	echo "round $r: ubikit wrote with $uc, the kernel checked and wrote with $kc"
done
grep -i 'ubifs' "$S/vm-round$ROUNDS/kernel-ubi.txt" | head -5 || true
echo "PASS: $GEOM: $ROUNDS rounds of ubikit churn (GC, commits) and kernel writes, each judged by the kernel (--ubifs-checks --strict); compressors $COMPRS"
