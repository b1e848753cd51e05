# test_lib.sh — the helpers every shell test shares (sourced, bash).
#
# Why: an expected failure must not hide a sanitizer report. Sanitizers exit
# with status T_SAN_RC (86: ASan, LeakSanitizer and UBSan share one "exitcode"
# in clang's combined runtime, whichever of ASAN_OPTIONS / UBSAN_OPTIONS sets
# it last wins, so both say 86; CTest sets them for every test, see
# tests/CMakeLists.txt, and this file sets them too when a script is run by
# hand). Every helper below fails the test on that status or on a report in
# stderr, checks the exact exit status and, for errors, the message.
#
#   fail MSG...            "FAIL: MSG" on stderr; exit 1, or with T_SOFT=1
#                          count it in T_FAILS and go on (see finish)
#   skip REASON            "SKIP: REASON", exit 77 (CTest: SKIP_RETURN_CODE 77)
#   need CMD...            skip the test unless every CMD is installed
#   skip_part REASON       a part of the test cannot run here: the rest runs,
#                          then the test exits 77 (skipped) instead of passing
#   is_root                true when running as root
#   run CMD...             run CMD: stdout in $T_OUT, stderr in $T_ERR, status
#                          in $T_RC; fails on a sanitizer exit or report (a
#                          crash by signal, status > 128, fails too)
#   expect_ok CMD...       run; CMD must exit 0
#   expect_fail RC RE CMD...  run; CMD must exit exactly RC (1 = failure,
#                          2 = usage) and its stderr must match the extended
#                          regular expression RE (case-insensitive): the key
#                          phrase of what the tool must say
#   san_check WHAT FILE    fail if FILE holds a sanitizer report
#   finish NAME            end of a T_SOFT script: exit 1 if anything failed
#                          (scratch kept), else print "NAME: all passed"
#   t_on_exit [RC]         the EXIT trap this file installs; a script that
#                          sets its own EXIT trap must end it with
#                          "t_on_exit $rc", rc being $? taken first thing
# Needs UBIKIT_SCRATCH (a directory of its own; created if missing).
#
# Reports of commands whose status a script does not look at (inside $(...),
# a pipe, a condition) would be lost, so every report also goes to a file
# (the sanitizers' log_path) in $T_SAN_DIR, next to the scratch directory
# that scripts wipe; any such file fails the script at exit, and run() fails
# at once on a new one.

: "${UBIKIT_SCRATCH:?UBIKIT_SCRATCH must name the scratch directory of the test}"
T_SAN_RC=86
T_SAN_RE='ERROR: [A-Za-z]*Sanitizer|runtime error:|LeakSanitizer|SUMMARY: [A-Za-z]*Sanitizer'
T_OUT=$UBIKIT_SCRATCH/t.out
T_ERR=$UBIKIT_SCRATCH/t.err
T_RC=0
T_FAILS=0
T_SAN_DIR=${UBIKIT_SCRATCH%/}.san
rm -rf "$T_SAN_DIR"
mkdir -p "$T_SAN_DIR" && chmod 1777 "$T_SAN_DIR" # tests run tools as other users too
case ":${ASAN_OPTIONS:-}:" in *:exitcode=*) ;; *) export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}exitcode=$T_SAN_RC ;; esac
case ":${UBSAN_OPTIONS:-}:" in *:exitcode=*) ;; *) export UBSAN_OPTIONS=${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}halt_on_error=1:print_stacktrace=1:exitcode=$T_SAN_RC ;; esac
# (log_path is shared by ASan, LSan and UBSan in clang's combined runtime)
export ASAN_OPTIONS=$ASAN_OPTIONS:log_path=$T_SAN_DIR/report
export UBSAN_OPTIONS=$UBSAN_OPTIONS:log_path=$T_SAN_DIR/report

fail() {
	echo "FAIL: $*" >&2
	if [ "${T_SOFT:-0}" = 1 ]; then
		T_FAILS=$((T_FAILS + 1))
		return 0
	fi
	exit 1
}

skip() {
	echo "SKIP: $*"
	exit 77
}

need() {
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null || skip "$c is not installed (scripts/deps.sh installs it)"
	done
}

T_SKIPPED=
skip_part() {
	echo "SKIP (part): $*"
	T_SKIPPED="$T_SKIPPED; $*"
}

is_root() {
	[ "$(id -u)" = 0 ]
}

san_check() { # what file
	local r
	if grep -qE "$T_SAN_RE" "$2" 2>/dev/null; then
		head -40 "$2" >&2
		# a sanitizer report is never a soft failure
		T_SOFT=0 fail "$1: sanitizer report"
	fi
	for r in "$T_SAN_DIR"/report*; do
		[ -e "$r" ] || continue
		head -60 "$r" >&2
		T_SOFT=0 fail "$1: sanitizer report ($r)"
	done
}

t_on_exit() {
	local rc=${1:-$?} r
	for r in "$T_SAN_DIR"/report*; do
		[ -e "$r" ] || continue
		head -60 "$r" >&2
		echo "FAIL: sanitizer report from a command of this test ($r)" >&2
		rc=1
	done
	if [ "$rc" = 0 ] && [ -n "$T_SKIPPED" ]; then
		echo "SKIP: parts of this test did not run${T_SKIPPED}"
		rc=77
	fi
	exit $rc
}
trap t_on_exit EXIT

run() {
	mkdir -p "$UBIKIT_SCRATCH"
	local e=0
	"$@" >"$T_OUT" 2>"$T_ERR" || e=$?
	T_RC=$e
	san_check "$*" "$T_ERR"
	if [ "$e" = "$T_SAN_RC" ] || [ "$e" -gt 128 ]; then
		head -40 "$T_ERR" >&2
		T_SOFT=0 fail "$*: exit $e (sanitizer or crash)"
	fi
	return 0
}

expect_ok() {
	run "$@"
	if [ "$T_RC" != 0 ]; then
		head -20 "$T_ERR" >&2
		fail "$*: exit $T_RC, expected 0"
	fi
	return 0
}

expect_fail() { # rc regex command...
	local want=$1 re=$2
	shift 2
	run "$@"
	if [ "$T_RC" != "$want" ]; then
		head -20 "$T_ERR" >&2
		fail "$*: exit $T_RC, expected $want"
		return 0
	fi
	if ! grep -Eqi -- "$re" "$T_ERR"; then
		head -20 "$T_ERR" >&2
		fail "$*: the message does not say /$re/"
	fi
	return 0
}

finish() { # name
	if [ "$T_FAILS" -ne 0 ]; then
		echo "$1: $T_FAILS failure(s); files kept in $UBIKIT_SCRATCH" >&2
		exit 1
	fi
	echo "$1: all passed"
}
