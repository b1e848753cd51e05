#!/bin/bash
# The kernel judges ubikit's power cuts (label vm; issue 10): `ubikit torture`
# exports, every EVERY-th cut, the flash exactly as the cut left it (a torn
# page program or a torn erase, before any recovery) and a copy of the
# files that must survive the cut (fsync'ed or committed, untouched since).
# The kernel attaches each flash with nandsim, mounts it read-write (its own
# recovery) with --ubifs-checks --strict (self-checks at mount, commit and
# unmount: index, LPT against a scan, orphans, link counts, sizes), and
# every synced file must read back byte for byte.
set -euo pipefail
S=${UBIKIT_SCRATCH:?}
: "${UBIKIT_SRC:?}" "${UBIKIT:?}"
VM=${LINUX_VM:-$UBIKIT_SRC/tests/vm/linux-ubifs-vm}
CYCLES=${CYCLES:-60}
EVERY=${EVERY:-12}
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$S"
mkdir -p "$S/exp"
for sc in powercut powercut-recovery; do
	mkdir -p "$S/exp/$sc"
	"$UBIKIT" torture "$sc" -d nand2k -s 7 -n "$CYCLES" -e "$S/exp/$sc" --export-every "$EVERY" >"$S/$sc.log" 2>&1 ||
		{ cat "$S/$sc.log" >&2; fail "ubikit torture $sc found something"; }
done
n=0
for fl in "$S"/exp/*/*.flash; do
	c=$(basename "$(dirname "$fl")")-$(basename "$fl" .flash)
	mkdir -p "$S/in-$c"
	cp -r "${fl%.flash}.synced" "$S/in-$c/synced"
	set +e
	"$VM" run --flash "$fl" --nand 2048:64:128KiB --ubifs-checks --strict --timeout 300 --no-writeback \
		--copy-in "$S/in-$c" --out "$S/vm-$c" --cmd "cd \$IN/in-$c/synced && find . -type f | LC_ALL=C sort |
while read f; do cmp \"\$f\" \"\$MNT/\$f\" || exit 1; echo \"\$f ok\"; done >\$RESULTS/synced.txt" >"$S/vm-$c.log" 2>&1
	rc=$?
	set -e
	if [ $rc = 77 ]; then
		exit 77
	fi
	if [ $rc != 0 ]; then
		cat "$S/vm-$c.log" >&2
		fail "$c: the kernel refused the post-cut flash or a synced file differs (exit $rc)"
	fi
	n=$((n + 1))
done
[ $n -ge 4 ] || fail "only $n images exported"
echo "PASS: $n post-cut flashes of ubikit torture (powercut, powercut-recovery): the kernel recovers each with --ubifs-checks --strict and every synced file reads back exactly"
