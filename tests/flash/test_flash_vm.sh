#!/bin/bash
# test_flash_vm — an image made by 'ubikit flash create' (the default
# 256 MiB NAND, 2048:64:128KiB) is taken by the Linux kernel: nandsim gets
# it, ubiformat + ubimkvol + mount, a file is written and read back; the
# image dumped back by the VM is still readable by 'ubikit flash info'.
set -euo pipefail
S="$UBIKIT_SCRATCH"
rm -rf "$S"; mkdir -p "$S"
U="$UBIKIT"
fail() { echo "FAIL: $*" >&2; exit 1; }

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
echo "test_flash_vm: passed"
