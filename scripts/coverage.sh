#!/usr/bin/env bash
# Coverage build and report (docs/coverage.md): builds ubikit with clang's
# source-based coverage (-fprofile-instr-generate -fcoverage-mapping), runs the
# CTest suite without the VM tests (label "vm") unless --vm is given, merges
# the raw profiles with llvm-profdata and prints line and branch coverage per
# directory of src/ and tools/ (then the totals), from llvm-cov's per-file
# summary.
#   --vm            also run the Linux-VM tests
#   --no-run        only report on the profiles already in BUILD/prof
#   --files         also list every file, least covered lines first
#   -R REGEX        run only the tests matching REGEX (ctest -R)
#   UBIKIT_COV_BUILD=DIR   build directory (default build-cov)
#   UBIKIT_COV_JOBS=N      ctest -j (default: nproc)
# Output: the table on stdout; BUILD/coverage.json (llvm-cov export summary),
# BUILD/html/index.html (llvm-cov show, per-line and per-branch).
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD
vm=0 run=1 files=0 regex=
while [ $# -gt 0 ]; do
	case "$1" in
	--vm) vm=1 ;;
	--no-run) run=0 ;;
	--files) files=1 ;;
	-R) regex=$2; shift ;;
	-h | --help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "coverage.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
	esac
	shift
done
B=${UBIKIT_COV_BUILD:-build-cov}
# absolute, as LLVM_PROFILE_FILE needs (an absolute UBIKIT_COV_BUILD was prefixed with $PWD)
case $B in /*) ;; *) B=$PWD/$B ;; esac
jobs=${UBIKIT_COV_JOBS:-$(nproc)}
bash scripts/deps.sh
# llvm-cov and llvm-profdata come with Debian's clang (the default llvm-N).
ver=$(clang --version | sed -n 's/.*clang version \([0-9]*\).*/\1/p' | head -1)
PROFDATA=$(command -v "llvm-profdata-$ver" || command -v llvm-profdata)
COV=$(command -v "llvm-cov-$ver" || command -v llvm-cov)

if [ "$run" = 1 ]; then
	flags="-fprofile-instr-generate -fcoverage-mapping"
	CC=clang cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Debug \
		-DCMAKE_C_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" \
		-DUBIKIT_SANITIZE=OFF -DUBIKIT_FUZZ=OFF >/dev/null
	nice cmake --build "$B" -j"$jobs"
	rm -rf "$B/prof" && mkdir -p "$B/prof"
	# %p: one file per process (shell tests start many ubikit processes);
	# %m: merged per binary when a pid is reused.
	export LLVM_PROFILE_FILE="$B/prof/%p-%m.profraw"
	args=(--output-on-failure -j"$jobs")
	[ "$vm" = 1 ] || args+=(-LE vm)
	[ -n "$regex" ] && args+=(-R "$regex")
	# A failing test still leaves its profile; report anyway, fail at the end.
	rc=0
	(cd "$B" && ctest "${args[@]}") || rc=$?
else
	rc=0
fi

shopt -s nullglob
raws=("$B"/prof/*.profraw)
if [ ${#raws[@]} -eq 0 ]; then
	echo "coverage.sh: no profiles in $B/prof (run without --no-run first)" >&2
	exit 1
fi
"$PROFDATA" merge -sparse -o "$B/merged.profdata" "${raws[@]}"
# Every executable the build made (tests, ubikit, helpers): llvm-cov needs each
# binary whose counters it should read.
objs=()
while IFS= read -r f; do
	objs+=(-object "$f")
done < <(find "$B" -path "$B/CMakeFiles" -prune -o -type f -perm -u+x \
	-newer "$B/CMakeCache.txt" -print | while read -r f; do
	file -b "$f" | grep -q '^ELF' && echo "$f"; done)
ignore='(^|/)(tests|build[^/]*)/|^/usr/'
"$COV" export -summary-only -instr-profile="$B/merged.profdata" \
	-ignore-filename-regex="$ignore" "${objs[@]:1}" >"$B/coverage.json"
"$COV" show -format=html -output-dir="$B/html" -show-branches=count \
	-instr-profile="$B/merged.profdata" -ignore-filename-regex="$ignore" \
	"${objs[@]:1}" >/dev/null 2>&1 || true

# Per directory: sum of covered/total lines and branches over its files.
jq -r --arg src "$src/" --argjson files "$files" '
  def pct(c; n): if n == 0 then "   -  " else ((c * 1000 / n | floor) / 10 | tostring | . + "%") end;
  [.data[0].files[] | {f: (.filename | ltrimstr($src)),
    lc: .summary.lines.covered, ln: .summary.lines.count,
    bc: .summary.branches.covered, bn: .summary.branches.count}]
  | map(select(.f | test("^(src|tools)/"))) as $all
  | ($all | group_by(.f | split("/") | .[:-1] | join("/"))
     | map({d: (.[0].f | split("/") | .[:-1] | join("/")),
            lc: (map(.lc) | add), ln: (map(.ln) | add),
            bc: (map(.bc) | add), bn: (map(.bn) | add)})) as $dirs
  | def row: "\(.d | . + " " * (20 - length))  \(.lc | tostring | " " * (6 - length) + .)/\(.ln | tostring | . + " " * (6 - length)) \(pct(.lc; .ln) | " " * (6 - length) + .)   \(.bc | tostring | " " * (6 - length) + .)/\(.bn | tostring | . + " " * (6 - length)) \(pct(.bc; .bn) | " " * (6 - length) + .)";
  def tot(name; sel): ($all | map(select(.f | test(sel)))) as $x
    | {d: name, lc: ($x | map(.lc) | add), ln: ($x | map(.ln) | add),
       bc: ($x | map(.bc) | add), bn: ($x | map(.bn) | add)};
  ["directory                      lines          %          branches        %"]
  + ($dirs | map(row))
  + ["", (tot("src/ (total)"; "^src/") | row), (tot("tools/ (total)"; "^tools/") | row),
     (tot("all"; ".") | row)]
  + (if $files then ["", "files, least covered lines first:"]
       + ($all | sort_by(if .ln == 0 then 1 else .lc / .ln end)
          | map(.d = .f | row)) else [] end)
  | .[]' "$B/coverage.json"
echo "(html: $B/html/index.html)"
exit "$rc"
