#!/bin/bash
# Live recovery references (label vm): tests/ubifs/make_recovery_manifests.sh
# lets the Linux kernel mount again two of test_ubifs_recovery's damaged
# volumes and checks that it still shows exactly the stored manifests in
# tests/data/ubifs/recovery (which test_ubifs_recovery holds ubikit to): a
# drift of the kernel, or of how the test damages the image, shows here.
# UBIKIT_LONG_TESTS=1: every case.
set -euo pipefail
: "${UBIKIT:?}" "${UBIKIT_SRC:?}"
S=${UBIKIT_SCRATCH:?}
rm -rf "$S"
mkdir -p "$S"
BUILD=$(cd "$(dirname "$UBIKIT")/.." && pwd)
[ -x "$BUILD/tests/ubifs/test_ubifs_recovery" ] || { echo "FAIL: no test_ubifs_recovery in $BUILD" >&2; exit 1; }
cases=(log-tail-cs-broken torn-tail) # one refused, one recovered: about two minutes
[ "${UBIKIT_LONG_TESTS:-0}" = 1 ] && cases=()
OUT=$S/gen CHECK=1 LINUX_VM=${LINUX_VM:-$UBIKIT_SRC/tests/vm/linux-ubifs-vm} \
	bash "$UBIKIT_SRC/tests/ubifs/make_recovery_manifests.sh" "$BUILD" "${cases[@]}" ||
	{ echo "FAIL: the kernel's view of the damaged volumes drifted from tests/data/ubifs/recovery" >&2; exit 1; }
echo "PASS: the kernel still shows the stored recovery manifests"
