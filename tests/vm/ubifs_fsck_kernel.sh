#!/bin/bash
# The Linux kernel judges `ubikit fsck -y` (label vm): mtd-utils fsck images
# repaired by ubikit are loaded on the kernel's mtdram (NOR 16 KiB PEBs,
# 1 MiB), attached and mounted with --ubifs-checks --strict (index, LPT
# against a scan, link counts and sizes; a warning fails too); the kernel
# lists and reads every file, writes one and syncs; then ubikit's `fsck -n`
# of the image the kernel wrote back must be clean.
# Default run: root_dir (new root, /lost+found) and tnc_lv0_key (index
# rebuilt from a scan); UBIKIT_LONG_TESTS=1: a wider set.
set -euo pipefail
: "${UBIKIT:?}" "${UBIKIT_SRC:?}"
S=${UBIKIT_SCRATCH:?}
VM=${LINUX_VM:-$UBIKIT_SRC/tests/vm/linux-ubifs-vm}
. "$UBIKIT_SRC/tests/tools/ubifs_lib.sh"
[ -x "$VM" ] || skip "no Linux VM tool"
D=$UBIKIT_SRC/tests/data/fsck-images
rm -rf "$S"
mkdir -p "$S/in"
IMAGES="root_dir tnc_lv0_key"
[ "${UBIKIT_LONG_TESTS:-0}" = 1 ] &&
	IMAGES="root_dir tnc_lv0_key dir_lost_duplicated master_tnc journal_log xent_host orphan_node inode_size corrupted_idx_leb lpt_free"
cat >"$S/in/check.sh" <<'VMEOF'
ls -lRa $MNT >$RESULTS/ls.txt || exit 1
find $MNT -type f -exec cat {} + >/dev/null || exit 1
echo kernel >$MNT/kernel-was-here && sync || exit 1
VMEOF
for name in $IMAGES; do
	img=$S/$name.img
	# the whole 1 MiB device, the rest erased
	head -c $((1 << 20)) /dev/zero | tr '\0' '\377' >"$img"
	gzip -dc "$D/$name.gz" | dd of="$img" conv=notrunc status=none
	set +e
	"$UBIKIT" fsck -y "$img" >"$S/y.out" 2>&1
	rc=$?
	[ $rc = 1 ] || { cat "$S/y.out" >&2; fail "$name: fsck -y exit $rc, expected 1"; }
	"$VM" run --flash "$img" --nor 16KiB:1MiB --ubifs-checks --strict --timeout 300 --copy-in "$S/in" \
		--cmd 'sh $IN/in/check.sh' --out "$S/vm-$name" >"$S/vm-$name.log" 2>&1
	rc=$?
	set -e
	if [ $rc != 0 ]; then
		tail -30 "$S/vm-$name.log" >&2
		fail "$name: the kernel run after fsck -y exited $rc (123: kernel error or warning)"
	fi
	"$UBIKIT" fsck -n "$img" >"$S/n.out" 2>&1 || { cat "$S/n.out" >&2; fail "$name: fsck -n after the kernel's writes"; }
	"$UBIKIT" cat "$img" /kernel-was-here | grep -qx kernel || fail "$name: the kernel's file is not there"
	echo "PASS: $name: repaired by ubikit, mounted by the kernel with --ubifs-checks, written, fsck -n clean"
done
echo "ok ubifs_vm_fsck"
