#!/bin/bash
# The Linux kernel judges the read-write mount's recoveries of
# test_ubifs_rwgaps (label vm): the images ubikit left after consolidating
# a full log (c*), after recovering a full file system by GC into the
# GC head (g*), after replaying a deletion over dangling xattr branches
# (x*), after old log LEBs came back (l*, e*, b*), after recovery mounts
# cut one after another (r*), after inode sizes fixed by a recovery mount
# that was cut (s*) and after a head LEB emptied by the recovery with the
# unmapped LEBs back (h*), each recovered by
# ubikit, become UBI volumes of one NAND flash (2 KiB pages, 128 KiB
# blocks). The kernel mounts every one with --ubifs-checks --strict (index,
# LPT against a scan of every LEB, orphans, every inode, at mount, commit
# and unmount): no error or warning, the names and every file's md5 as in
# ubikit's manifest;
# then it writes a file, commits and unmounts, checking again.
# Default: one image of each kind (one VM boot); UBIKIT_LONG_TESTS=1 at run
# time: every consolidated-log result and several recovery-GC ones.
set -euo pipefail
S=${UBIKIT_SCRATCH:?}
: "${UBIKIT_SRC:?}" "${RWGAPS_TEST:?}"
VM=${LINUX_VM:-$UBIKIT_SRC/tests/vm/linux-ubifs-vm}
fail() { echo "FAIL: $*" >&2; exit 1; }
LEB=126976 PAGE=2048 OOB=64 PEB=128
rm -rf "$S"
mkdir -p "$S/exp" "$S/in"
UBIKIT_RWGAPS_EXPORT="$S/exp" "$RWGAPS_TEST" >"$S/test.log" 2>&1 || { cat "$S/test.log" >&2; fail "test_ubifs_rwgaps"; }
vols=()
for img in "$S"/exp/*.img; do
	vols+=("$(basename "$img" .img)")
done
[ ${#vols[@]} -ge 2 ] || fail "the test exported ${#vols[@]} images, want at least 2"
{
	id=0
	for v in "${vols[@]}"; do
		lebs=$(($(stat -c %s "$S/exp/$v.img") / LEB))
		cat <<INI
[$v]
mode=ubi
image=$S/exp/$v.img
vol_id=$id
vol_type=dynamic
vol_name=$v
vol_size=$((lebs * LEB))
INI
		id=$((id + 1))
		# what the VM lists (few processes: busybox under TCG is slow):
		# every name, then md5 and path of every regular file
		awk '$1 == "==" { exit } { print $1 }' "$S/exp/$v.manifest" | LC_ALL=C sort >"$S/in/$v.expected"
		awk '$1 == "==" { exit } $2 == "f" { print $9 "  " $1 }' "$S/exp/$v.manifest" | LC_ALL=C sort -k2 \
			>>"$S/in/$v.expected"
	done
} >"$S/ubi.ini"
# the flash: every volume's LEBs, UBI's own 4 PEBs and its bad-block
# reserve (20 per 1024), in MiB of 8 PEBs, at least 16
total=0
for v in "${vols[@]}"; do total=$((total + $(stat -c %s "$S/exp/$v.img") / LEB)); done
MIB=$(((total + 4 + 20 + 8 + 7) / 8))
((MIB >= 16)) || MIB=16
ubinize -o "$S/ubi.img" -m $PAGE -p ${PEB}KiB -O $PAGE "$S/ubi.ini" || fail "ubinize"
head -c $((MIB << 20)) /dev/zero | tr '\0' '\377' >"$S/flash"
dd if="$S/ubi.img" of="$S/flash" conv=notrunc status=none
printf '%s\n' "${vols[@]}" >"$S/in/vols"
# the first volume is the tool's mount ($MNT); the others are mounted by
# the script, under the same self-checks
cmd='rc=0; for v in $(cat $IN/in/vols); do
  if [ "$v" = "'"${vols[0]}"'" ]; then m=$MNT; else m=/mnt-$v; mkdir -p $m; mount -t ubifs ubi0:$v $m || { echo "mount $v failed"; rc=1; continue; }; fi
  (cd $m && find . | LC_ALL=C sort && find . -type f | LC_ALL=C sort | xargs md5sum | LC_ALL=C sort -k2) >$RESULTS/$v.manifest
  cmp -s $RESULTS/$v.manifest $IN/in/$v.expected || { echo "$v: tree differs from ubikit manifest"; rc=1; }
  echo kernel >$m/kernel-was-here && sync
  [ "$m" = "$MNT" ] || umount $m || rc=1
done; exit $rc'
set +e
"$VM" run --flash "$S/flash" --nand $PAGE:$OOB:${PEB}KiB:${MIB}MiB --vid-hdr-offset $PAGE --volume "${vols[0]}" \
	--ubifs-checks --strict --timeout 300 --copy-in "$S/in" --out "$S/vm" --cmd "$cmd" >"$S/vm.log" 2>&1
rc=$?
set -e
if [ $rc = 77 ]; then
	cat "$S/vm.log" >&2
	exit 77
fi
if [ $rc != 0 ]; then
	cat "$S/vm.log" >&2
	cat "$S/vm/script.stdout" >&2 2>/dev/null || true
	for v in "${vols[@]}"; do
		[ -f "$S/vm/files/$v.manifest" ] && diff -u "$S/in/$v.expected" "$S/vm/files/$v.manifest" | head -20 >&2
	done
	fail "kernel run exited $rc (123: kernel error/warning)"
fi
echo "PASS: the kernel (--ubifs-checks --strict) mounted ${#vols[@]} ubikit recoveries (${vols[*]}), trees as ubikit saw them"
