#!/bin/bash
# test_bench_cli — 'ubikit bench': --list, the flash-raw workload's JSON
# records (counters follow from the default device: 256 MiB programmed
# once, read once, 2048 erases; simulated time from the timing defaults),
# and bad arguments.
set -euo pipefail
S="$UBIKIT_SCRATCH"
rm -rf "$S"; mkdir -p "$S"
U="$UBIKIT"
. "$(dirname "$0")/../tools/test_lib.sh"
has() { grep -qF -- "$2" <<<"$1" || fail "expected '$2' in: $1"; }

"$U" bench --list >"$S/list.txt"
grep -q "^flash-raw " "$S/list.txt" || fail "--list lacks flash-raw"
"$U" bench --help >"$S/help.txt"
grep -q "usage: ubikit bench" "$S/help.txt" || fail "--help"
"$U" bench --json flash-raw >"$S/out.json"
[ "$(wc -l <"$S/out.json")" = 3 ] || fail "expected 3 records: $(cat "$S/out.json")"
p=$(grep '"phase": "program"' "$S/out.json")
has "$p" '"user_bytes": 268435456'
has "$p" '"flash_bytes_programmed": 268435456'
has "$p" '"flash_pages_programmed": 131072'
has "$p" '"write_amplification": 1.000000'
# 131072 x 200 us + 256 MiB at 40 MB/s
has "$p" '"sim_time_s": 32.925286'
has "$p" '"page_read_us": 25.000, "page_program_us": 200.000, "block_erase_us": 1500.000, "bus_mb_per_s": 40.000'
has "$p" '"compressor": "none"'
has "$p" '"peb_count": 2048'
grep -q '"cpu_s": [0-9]' <<<"$p" || fail "no cpu_s"
grep -q '"peak_rss_kib": [1-9]' <<<"$p" || fail "no peak_rss_kib"
r=$(grep '"phase": "read"' "$S/out.json")
has "$r" '"flash_bytes_read": 268435456'
has "$r" '"sim_time_s": 9.987686'
has "$r" '"write_amplification": null'
e=$(grep '"phase": "erase"' "$S/out.json")
has "$e" '"erases": 2048'
has "$e" '"sim_time_s": 3.072000'
has "$e" '"erase_count": {"min": 1, "max": 1, "mean": 1.0000, "stddev": 0.0000}'
# Table output.
"$U" bench flash-raw >"$S/out.txt"
grep -q "^flash-raw .*program" "$S/out.txt" || fail "table output: $(cat "$S/out.txt")"

# A smaller device, in this process.
"$U" bench --json --size 4MiB --no-fork flash-raw >"$S/small.json"
grep '"phase": "program"' "$S/small.json" | grep -qF '"flash_bytes_programmed": 4194304' || fail "--size: $(cat "$S/small.json")"
grep -qF '"peb_count": 32' "$S/small.json" || fail "--size peb_count"

set +e
"$U" bench --size 1000 flash-raw 2>"$S/err"; rc=$?
set -e
[ $rc = 2 ] || fail "bad --size exited $rc"
set +e
"$U" bench no-such-workload 2>"$S/err"; rc=$?
set -e
[ $rc = 2 ] || fail "unknown workload exited $rc"
grep -q "unknown workload 'no-such-workload'" "$S/err" || fail "message: $(cat "$S/err")"
set +e
"$U" bench --frob 2>"$S/err"; rc=$?
set -e
[ $rc = 2 ] || fail "unknown option exited $rc"
echo "test_bench_cli: all passed"
