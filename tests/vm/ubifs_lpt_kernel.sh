#!/bin/bash
# The Linux kernel judges ubikit's LPT commit (label vm): a mkfs.ubifs image
# gets many LPT-only commits from ubikit (tests/ubifs/ubifs_lpt_tool: LPT
# nodes marked dirty in random sets and all at once, LEBs taken by the
# finders and given back, each round committed with a new master; enough
# rounds for the LPT to wrap round its area and, its area short, to be
# rewritten whole (small model)),
# is ubinized and mounted by the kernel with its UBIFS self-checks on
# (--ubifs-checks: chk_lprops compares the LPT with a scan of every LEB and
# checks the ltab against the LPT area) and --strict (no UBI/UBIFS warning).
# The files must be unchanged; the kernel then writes and syncs a file and
# unmounts, committing on top of ubikit's LPT with the checks on.
set -euo pipefail
S=${UBIKIT_SCRATCH:?}
: "${UBIKIT_SRC:?}" "${LPT_TOOL:?}"
VM=${LINUX_VM:-$UBIKIT_SRC/tests/vm/linux-ubifs-vm}
SEED=${SEED:-11}
COMMITS=${COMMITS:-800}
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$S"
mkdir -p "$S/src/d1/d2" "$S/in"
for i in $(seq 1 12); do
	head -c $((i * 37000)) /dev/urandom >"$S/src/f$i"
	printf 'text %s\n' "$i" >"$S/src/d1/t$i"
done
ln -s f1 "$S/src/link"
mkfs.ubifs -r "$S/src" -m 2048 -e 129024 -c 420 -x lzo -o "$S/fs.img" || fail "mkfs.ubifs"
"$LPT_TOOL" "$S/fs.img" "$SEED" "$COMMITS" || [ -n "${IGNORE_TOOL:-}" ] || fail "ubikit LPT commits"
(cd "$S/src" && find . -type f | sort | xargs md5sum) >"$S/in/expected.md5"
size=$((420 * 129024))
cat >"$S/ubi.ini" <<INI
[ubifs]
mode=ubi
image=$S/fs.img
vol_id=0
vol_type=dynamic
vol_name=rootfs
vol_size=$size
INI
ubinize -o "$S/ubi.img" -m 2048 -p 128KiB -s 512 "$S/ubi.ini" || fail "ubinize"
set +e
"$VM" run --flash "$S/ubi.img" --nand 2048:64:128KiB:64MiB --ubifs-checks --strict --timeout 300 \
	--copy-in "$S/in" --out "$S/vm" \
	--cmd "cd \$MNT && find . -type f | sort | xargs md5sum >\$RESULTS/kernel.md5 && cmp -s \$RESULTS/kernel.md5 \$IN/in/expected.md5 && head -c 300000 /dev/urandom >\$MNT/new && sync && cd /" \
	>"$S/vm.log" 2>&1
rc=$?
set -e
if [ $rc != 0 ]; then
	cat "$S/vm.log" >&2
	[ -f "$S/vm/files/kernel.md5" ] && diff -u "$S/in/expected.md5" "$S/vm/files/kernel.md5" | head -30 >&2
	fail "kernel run exited $rc (123: kernel error/warning, 1: files differ)"
fi
grep -i 'ubifs' "$S/vm/kernel-ubi.txt" | head -20 || true
echo "PASS: the kernel mounts ubikit's LPT after $COMMITS LPT commits (seed $SEED) with --ubifs-checks --strict, files unchanged"
