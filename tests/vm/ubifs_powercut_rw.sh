#!/bin/bash
# The kernel judges ubikit's read-write recovery (label vm): test_ubifs_powercut_rw
# cuts the power at every flash operation of its short workload; for every
# EVERY-th cut it exports the flash after ubikit recovered it (read-write
# mount, checks, a new file, a commit, a clean unmount) and ubikit's view of
# the tree. The kernel then mounts each flash with --ubifs-checks --strict
# (its self-checks at mount, commit and unmount: index, LPT against a scan,
# orphans, link counts, sizes) and must list the same files, sizes and md5s.
# Then the other way: the power cuts the kernel made (tests/data/ubifs/powercut),
# recovered read-write by ubikit (every 8th of them): the kernel mounts the
# result with the checks on and must show the tree it showed after its own
# recovery (NAME.manifest, tests/tools/ubifs_manifest.sh).
set -euo pipefail
S=${UBIKIT_SCRATCH:?}
: "${UBIKIT_SRC:?}" "${POWERCUT_TEST:?}"
VM=${LINUX_VM:-$UBIKIT_SRC/tests/vm/linux-ubifs-vm}
EVERY=${EVERY:-25}
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$S"
mkdir -p "$S/exp"
UBIKIT_TEST_FILTER="t_*e*" UBIKIT_PC_EXPORT="$S/exp" UBIKIT_PC_EXPORT_EVERY=$EVERY "$POWERCUT_TEST" >"$S/test.log" 2>&1 ||
	{ tail -30 "$S/test.log" >&2; fail "test_ubifs_powercut_rw"; }
n=0
for fl in "$S"/exp/cut*.flash; do
	c=$(basename "$fl" .flash)
	mkdir -p "$S/in-$c"
	cp "$S/exp/$c.list" "$S/in-$c/ubikit.list"
	set +e
	"$VM" run --flash "$fl" --nand 2048:64:128KiB --ubifs-checks --strict --timeout 300 --no-writeback \
		--copy-in "$S/in-$c" --out "$S/vm-$c" --cmd "cd \$MNT && find . -type f | LC_ALL=C sort |
while read f; do echo \"\$f \$(stat -c %s \"\$f\") \$(md5sum <\"\$f\" | cut -c1-32)\"; done >\$RESULTS/kernel.list &&
cmp \$RESULTS/kernel.list \$IN/in-$c/ubikit.list" >"$S/vm-$c.log" 2>&1
	rc=$?
	set -e
	if [ $rc != 0 ]; then
		cat "$S/vm-$c.log" >&2
		[ -f "$S/vm-$c/files/kernel.list" ] && diff -u "$S/in-$c/ubikit.list" "$S/vm-$c/files/kernel.list" >&2
		fail "$c: the kernel's check or view differs (exit $rc)"
	fi
	n=$((n + 1))
done
[ $n -ge 3 ] || fail "only $n images exported"
m=0
for fl in "$S"/exp/k*.flash; do
	c=$(basename "$fl" .flash)
	mkdir -p "$S/in-$c"
	cp "$S/exp/$c.manifest" "$S/in-$c/want.manifest"
	cp "$UBIKIT_SRC/tests/tools/ubifs_manifest.sh" "$S/in-$c/"
	set +e
	"$VM" run --flash "$fl" --nand 2048:64:128KiB --ubifs-checks --strict --timeout 300 --no-writeback \
		--copy-in "$S/in-$c" --out "$S/vm-$c" \
		--cmd "sh \$IN/in-$c/ubifs_manifest.sh \$MNT >\$RESULTS/kernel.manifest && cmp \$RESULTS/kernel.manifest \$IN/in-$c/want.manifest" \
		>"$S/vm-$c.log" 2>&1
	rc=$?
	set -e
	if [ $rc != 0 ]; then
		cat "$S/vm-$c.log" >&2
		[ -f "$S/vm-$c/files/kernel.manifest" ] && diff -u "$S/in-$c/want.manifest" "$S/vm-$c/files/kernel.manifest" >&2
		fail "$c: the kernel's check or view of ubikit's recovery differs (exit $rc)"
	fi
	m=$((m + 1))
done
[ $m -ge 3 ] || fail "only $m kernel power-cut images exported"
echo "PASS: $n post-cut images and $m kernel power cuts recovered read-write by ubikit: the kernel mounts them with --ubifs-checks --strict and shows the same trees"
