#!/bin/bash
# make_recovery_manifests.sh BUILD_DIR [CASE...] — what the Linux kernel makes
# of the damaged volumes of test_ubifs_recovery: the test writes each damaged
# UBIFS volume out (UBIKIT_RECOVERY_EXPORT), then one VM boot
# (tests/vm/linux-ubifs-vm) attaches tests/data/ubifs/replay-nand2k, and for
# each case writes the volume with ubiupdatevol, mounts it (read-write: the
# kernel's own recovery) and lists it with tests/tools/ubifs_manifest.sh, or
# records "REFUSED" when the mount fails. Results in $OUT (default: a new
# temporary directory): CASE.manifest, CASE.log (the kernel's lines).
# STORE=1 copies the manifests to tests/data/ubifs/recovery/.
# CHECK=1 compares them with the stored ones instead (exit 1 on a drift).
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
VM=${LINUX_VM:-$SRC/tests/vm/linux-ubifs-vm}
BUILD=${1:?usage: make_recovery_manifests.sh BUILD_DIR [CASE...]}
shift
OUT=${OUT:-$(mktemp -d)}
DEST=$SRC/tests/data/ubifs/recovery
mkdir -p "$OUT/export"
rm -f "$OUT/export/"*
UBIKIT_RECOVERY_EXPORT=$OUT/export "$BUILD/tests/ubifs/test_ubifs_recovery" >"$OUT/export.log" 2>&1 ||
	{ tail -20 "$OUT/export.log"; echo "export failed" >&2; exit 1; }
if [ $# -gt 0 ]; then
	for f in "$OUT/export/"*.flat.gz; do
		c=$(basename "$f" .flat.gz)
		keep=0
		for w in "$@"; do [ "$w" = "$c" ] && keep=1; done
		[ $keep = 1 ] || rm -f "$f"
	done
fi
CASES=$(cd "$OUT/export" && ls *.flat.gz | sed 's/\.flat\.gz$//')
[ -n "$CASES" ] || { echo "no cases exported" >&2; exit 1; }
gzip -dc "$SRC/tests/data/ubifs/replay-nand2k.img.gz" >"$OUT/base.img"
cat >"$OUT/vm_recovery.sh" <<'EOF'
# inside the VM: each damaged volume written over volume 0, then mounted
cd /
umount "$MNT" || exit 1
for c in $CASES; do
	gzip -dc "$IN/export/$c.flat.gz" >/tmp/vol || exit 1
	ubiupdatevol /dev/ubi0_0 /tmp/vol || { echo "$c: ubiupdatevol failed"; exit 1; }
	rm -f /tmp/vol
	dmesg -c >/dev/null
	if mount -t ubifs ubi0_0 "$MNT" 2>"$RESULTS/$c.mount"; then
		sh "$IN/ubifs_manifest.sh" "$MNT" >"$RESULTS/$c.manifest"
		umount "$MNT"
		echo "$c: mounted"
	else
		echo REFUSED >"$RESULTS/$c.manifest"
		echo "$c: refused"
	fi
	dmesg | grep -e UBI -e ubi0 >"$RESULTS/$c.log"
done
# leave a mounted volume for the tool's unmount (the last case, or $LAST)
if ! mount -t ubifs -o ro ubi0_0 "$MNT" 2>/dev/null; then
	gzip -dc "$IN/export/$LAST.flat.gz" >/tmp/vol && ubiupdatevol /dev/ubi0_0 /tmp/vol
	mount -t ubifs -o ro ubi0_0 "$MNT"
fi
exit 0
EOF
LAST=$(echo "$CASES" | grep -x -e untouched -e torn-tail | head -1 || true)
[ -n "$LAST" ] || LAST=$(echo "$CASES" | head -1)
rc=0
"$VM" run --flash "$OUT/base.img" --nand 2048:64:128KiB:16MiB --mount-opts ro --no-writeback \
	--timeout 600 --out "$OUT/vm" --copy-in "$OUT/export" --copy-in "$SRC/tests/tools/ubifs_manifest.sh" \
	--copy-in "$OUT/vm_recovery.sh" \
	--cmd "CASES='$(echo $CASES)' LAST=$LAST sh \$IN/vm_recovery.sh" >"$OUT/vm.log" 2>&1 || rc=$?
# a refused mount is a kernel error line (123)
if [ $rc != 0 ] && [ $rc != 123 ]; then
	tail -30 "$OUT/vm.log" >&2
	echo "VM run failed ($rc)" >&2
	exit 1
fi
cat "$OUT/vm/script.stdout"
drift=0
for c in $CASES; do
	f=$OUT/vm/files/$c.manifest
	[ -s "$f" ] || { echo "$c: no manifest from the VM" >&2; exit 1; }
	cp "$f" "$OUT/vm/files/$c.log" "$OUT/"
	if [ "${CHECK:-0}" = 1 ]; then
		if ! cmp -s "$f" "$DEST/$c.manifest"; then
			echo "$c: the kernel's view differs from tests/data/ubifs/recovery/$c.manifest:" >&2
			diff -u "$DEST/$c.manifest" "$f" | head -20 >&2 || true
			drift=1
		fi
	fi
done
# the method: the untouched volume shows the tree of the original image
if [ -s "$OUT/untouched.manifest" ] && ! cmp -s "$OUT/untouched.manifest" "$SRC/tests/data/ubifs/replay-nand2k.manifest"; then
	echo "untouched volume: the kernel's view differs from replay-nand2k.manifest" >&2
	diff -u "$SRC/tests/data/ubifs/replay-nand2k.manifest" "$OUT/untouched.manifest" | head -20 >&2 || true
	drift=1
fi
if [ "${STORE:-0}" = 1 ]; then
	mkdir -p "$DEST"
	for c in $CASES; do cp "$OUT/$c.manifest" "$DEST/"; done
	echo "stored $(echo $CASES | wc -w) manifests in $DEST"
fi
rm -f "$OUT/base.img"
exit $drift
