#!/bin/bash
# test_flash_vm — an image made by 'ubikit flash create' (the default
# 256 MiB NAND, 2048:64:128KiB) is taken by the Linux kernel: nandsim gets
# it, ubiformat + ubimkvol + mount, a file is written and read back; the
# image dumped back by the VM is still readable by 'ubikit flash info'.
# Second part: the MTD backend (mtd_probe.c) on nandsim, and the bad-block
# marker round trip through OOB.
set -euo pipefail
S="$UBIKIT_SCRATCH"
rm -rf "$S"; mkdir -p "$S"
U="$UBIKIT"
. "$(dirname "$0")/../tools/test_lib.sh"

"$U" flash create "$S/vm.img" >/dev/null
[ "$(stat -c %s "$S/vm.img")" = 268435456 ] || fail "image size"
"$LINUX_VM" run --flash "$S/vm.img" --nand 2048:64:128KiB --format-fresh \
	--cmd 'echo hi > $MNT/x && cat $MNT/x' --out "$S/out" >"$S/vm.log" 2>&1 || {
	cat "$S/vm.log" >&2
	fail "the Linux VM run failed"
}
grep -qx "hi" "$S/vm.log" || { cat "$S/vm.log" >&2; fail "the file did not read back in the VM"; }
[ "$(stat -c %s "$S/vm.img")" = 268435456 ] || fail "dumped image size"
"$U" flash info "$S/vm.img" --json >"$S/info.json"
grep -q '"peb_count": 2048' "$S/info.json" || fail "info after VM: $(cat "$S/info.json")"
# ubiformat wrote an EC header into every PEB: none is erased any more.
grep -q '"erased_pebs": 0,' "$S/info.json" || fail "expected every PEB used: $(cat "$S/info.json")"
grep -q '"bad_pebs": 0' "$S/info.json" || fail "unexpected bad blocks: $(cat "$S/info.json")"
# The first PEB starts with the UBI EC header magic "UBI#".
[ "$(head -c 4 "$S/vm.img")" = "UBI#" ] || fail "no UBI EC header at PEB 0"
echo "test_flash_vm: kernel format+mount passed"

# --- The MTD backend on the kernel's nandsim, and the Linux bad-block
# marker round trip: a 16 MiB image with OOB and 512-byte sub-pages; the
# probe (built statically from src/flash/flash_mtd.c) erases, programs
# sub-pages and pages, reads back and marks PEB 5 bad on /dev/mtd0; the
# dump that comes back must hold its data and the marker.
cc -static -O1 -D_GNU_SOURCE -I"$UBIKIT_SRC/src" -o "$S/probe" \
	"$UBIKIT_SRC/tests/flash/mtd_probe.c" "$UBIKIT_SRC/src/flash/flash_mtd.c" \
	"$UBIKIT_SRC/src/util/util_file.c" "$UBIKIT_SRC/src/util/util_err.c" || fail "cannot build mtd_probe"
"$U" flash create "$S/o.img" --size 16MiB --with-oob --subpage 512 >/dev/null
"$LINUX_VM" run --flash "$S/o.img" --nand 2048:64:128KiB --image-has-oob --no-attach \
	--copy-in "$S/probe" --cmd '$IN/probe $MTD' --out "$S/out2" >"$S/vm2.log" 2>&1 || {
	cat "$S/vm2.log" >&2
	fail "mtd_probe failed in the VM"
}
grep -q "mtd_probe: OK" "$S/vm2.log" || { cat "$S/vm2.log" >&2; fail "no OK from mtd_probe"; }
grep -q "sub-page 512" "$S/vm2.log" || fail "MTD sub-page size not read from sysfs"
"$U" flash info "$S/o.img" --json >"$S/info2.json"
grep -qF '"bad_blocks": [{"peb": 5, "kind": "factory"}]' "$S/info2.json" || fail "bad-block marker: $(cat "$S/info2.json")"
grep -qF '"used_pebs": 2,' "$S/info2.json" || fail "used PEBs: $(cat "$S/info2.json")"
# PEB 2, page 0 holds the probe's pattern (byte i = 7i+3) in the nanddump -o layout.
[ "$(od -An -tx1 -j $((2 * 64 * 2112)) -N4 "$S/o.img" | tr -d ' \n')" = 030a1118 ] || fail "PEB 2 data"
echo "test_flash_vm: MTD backend passed"
