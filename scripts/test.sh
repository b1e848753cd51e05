#!/usr/bin/env bash
# The test command (README): installs dependencies, builds ubikit with clang,
# AddressSanitizer + UndefinedBehaviorSanitizer and libFuzzer targets, then runs
# every test through CTest: unit suites, CLI and mtd-utils interop, Linux-kernel
# interop in a QEMU VM (label "vm"), and brief fuzzing (label "fuzz").
# First it builds what users build: the default compiler (GCC) in Release, as
# scripts/main.sh does, tests included (a warning only GCC -O2 sees fails here); the CTest
# entry main_job then runs the main job's short form on that build.
#   UBIKIT_LONG_TESTS=1    longer torture/power-cut runs
#   UBIKIT_FUZZ_SECONDS=N  fuzz each target N seconds (default 20)
#   UBIKIT_CTEST_ARGS="-LE vm"  extra ctest arguments (e.g. leave out VM tests)
# A test that skips itself (exit 77: a tool, root, /dev/fuse missing) fails
# this script, since it installs everything itself (CI runs it as root).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
build=${UBIKIT_BUILD_DIR:-build-test}
release=${UBIKIT_RELEASE_BUILD_DIR:-build-release}
cmake -S . -B "$release" -DCMAKE_BUILD_TYPE=Release -DUBIKIT_BUILD_TESTS=ON >/dev/null
cmake --build "$release" -j"$(nproc)"
CC=clang cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	-DUBIKIT_SANITIZE=ON -DUBIKIT_FUZZ=ON \
	-DUBIKIT_MAIN_JOB_BUILD="$PWD/$release" >/dev/null
cmake --build "$build" -j"$(nproc)"
# (each CTest entry sets ASAN_OPTIONS/UBSAN_OPTIONS itself: sanitizer
# reports exit 86, never 1 or 2 like an expected error; tests/CMakeLists.txt)
cd "$build"
# This script installed every dependency, so a test that cannot run here
# (exit 77, "Skipped" in the summary) is a failure of this run, not a pass.
# The CTest summary stays the last output; it names the skipped tests.
log=$(mktemp)
trap 'rm -f "$log"' EXIT
echo "scripts/test.sh: any test skipped here fails the run (everything it needs was installed)"
rc=0
# shellcheck disable=SC2086
ctest --output-on-failure -j"$(nproc)" ${UBIKIT_CTEST_ARGS:-} | tee "$log" || rc=$? # (pipefail: ctest's status)
if [ "$rc" = 0 ] && grep -q '(Skipped)$' "$log"; then
	rc=1
fi
exit "$rc"
