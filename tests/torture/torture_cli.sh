#!/bin/bash
# `ubikit torture` (tools/cmd_torture.c): bad options refused with a clear
# error and exit 2; the post-cut flashes it exports (-e) are UBI images that
# `ubikit fsck -n` accepts and from which `ubikit extract` (a read-only
# mount: the journal replayed in memory) gives back every file of the
# exported .synced tree byte for byte — that tree is the model's list of
# what must survive the cut, kept apart from ubikit's read path; -T/-T -T
# name the operations, -v reports progress, "all" runs every scenario,
# --fill reaches ENOSPC.
set -euo pipefail
: "${UBIKIT:?}" "${UBIKIT_SCRATCH:?}"
. "$(dirname "$0")/../tools/test_lib.sh"
T_SOFT=1
rm -rf "$UBIKIT_SCRATCH"; mkdir -p "$UBIKIT_SCRATCH"; cd "$UBIKIT_SCRATCH"
T() { "$UBIKIT" torture "$@"; }

# ---- usage errors: exit 2, the message names the bad value ----
expect_fail 2 "unknown device 'sd' \(nand2k, nand4k, nor, mlc\)" T -d sd mix
expect_fail 2 "unknown scenario 'powercuts'" T powercuts
expect_fail 2 "bad value 'x1' for -s" T -s x1 mix
expect_fail 2 "bad value '-1' for -t" T -t -1 mix
expect_fail 2 "bad value '5k' for -n" T -n 5k mix
expect_fail 2 "bad value '1x' for -o" T -o 1x mix
expect_fail 2 "bad value '0' for -E" T --export-every 0 mix
expect_fail 2 "usage: ubikit torture" T --no-such-option
expect_ok T --help
grep -q -- "--fill" "$T_OUT" || fail "--help does not list --fill"
grep -q -- "--erase-cut-per-page" "$T_OUT" || fail "--help does not list --erase-cut-per-page"

# ---- export: every 2nd cut, judged by fsck -n and by the synced tree ----
mkdir exp
expect_ok T powercut -d nand2k -s 12 -n 8 -e exp --export-every 2
grep -q "findings 0" "$T_OUT" || fail "export run: $(cat "$T_OUT")"
n=0 files=0
for fl in exp/*.flash; do
	[ -e "$fl" ] || break
	b=${fl%.flash}
	[ -d "$b.synced/d/e" ] || fail "$b.synced: no directory tree"
	[ "$(stat -c %s "$fl")" = $((64 * 131072)) ] || fail "$fl: $(stat -c %s "$fl") bytes, the device has 64 PEBs of 128 KiB"
	expect_ok "$UBIKIT" fsck -n "$fl"
	rm -rf "x-$n"
	expect_ok "$UBIKIT" extract -q "$fl" -o "x-$n"
	while IFS= read -r f; do
		cmp -s "$b.synced/$f" "x-$n/$f" || fail "$fl: synced file $f differs from what the image holds"
		files=$((files + 1))
	done < <(cd "$b.synced" && find . -type f | sed 's|^\./||')
	n=$((n + 1))
done
[ "$n" -ge 3 ] || fail "only $n flashes exported (8 cycles, every 2nd cut)"
[ "$files" -ge 5 ] || fail "only $files synced files in $n exports"
# the list is not empty by accident: a synced file changed is seen
if [ "$files" -gt 0 ]; then
	f=$(cd exp && find . -path '*.synced/*' -type f -size +1c | head -1)
	c=X
	[ "$(head -c1 "exp/$f")" != X ] || c=Y
	printf '%s' "$c" | dd of="exp/$f" bs=1 seek=0 conv=notrunc status=none
	fl=exp/${f%%.synced/*}.flash
	rm -rf xc && "$UBIKIT" extract -q "$fl" -o xc
	! cmp -s "exp/$f" "xc/${f#*.synced/}" || fail "a changed synced copy still compares equal: the comparison sees nothing"
fi

# ---- the trace: -T the file operations and cuts, -T -T the flash too ----
expect_ok T powercut -s 5 -n 3 -o 40 -T
grep -q "^cycle 1$" "$T_ERR" || fail "-T: no cycle lines"
grep -q ": pwrite [0-9]* at [0-9]* -> " "$T_ERR" || fail "-T: no pwrite lines"
grep -q "^CUT: " "$T_ERR" || fail "-T: no CUT line"
! grep -q "flash: " "$T_ERR" || fail "-T alone traces the flash"
expect_ok T powercut -s 5 -n 3 -o 40 -T -T
grep -q "^    flash: program PEB [0-9]*:[0-9]* len " "$T_ERR" || fail "-T -T: no flash programs"

# ---- -v, all, every device, the options ----
expect_ok T mix -t 2.5 -o 20 -v
grep -q "^  [12]s: [0-9]* cycles, 0 cuts, 0 findings$" "$T_ERR" || fail "-v: no progress line: $(cat "$T_ERR")"
expect_ok T all -n 1 -o 10
[ "$(grep -c "findings 0$" "$T_OUT")" = 7 ] || fail "all: not 7 scenarios: $(cat "$T_OUT")"
grep -q "^wearout  *mlc " "$T_OUT" || fail "all: wearout not on mlc"
for d in nand2k nand4k nor mlc; do
	expect_ok T powercut -d "$d" -n 2 -o 20
	grep -q "^powercut  *$d .*findings 0$" "$T_OUT" || fail "-d $d: $(cat "$T_OUT")"
done
expect_ok T powercut-recovery -d nand4k -n 3 -o 20 --erase-at-unmap --erase-cut-per-page
expect_ok T mix -s 4 -n 10 --fill
e=$(sed -n 's/.*ENOSPC \([0-9]*\).*/\1/p' "$T_OUT")
[ "${e:-0}" -ge 2 ] || fail "--fill: ENOSPC $e: $(cat "$T_OUT")"
finish torture_cli
