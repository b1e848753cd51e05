#!/usr/bin/env bash
# The test command (README): installs dependencies, builds ubikit with clang,
# AddressSanitizer + UndefinedBehaviorSanitizer and libFuzzer targets, then runs
# every test through CTest: unit suites, CLI and mtd-utils interop, Linux-kernel
# interop in a QEMU VM (label "vm"), and brief fuzzing (label "fuzz").
#   UBIKIT_LONG_TESTS=1    longer torture/power-cut runs
#   UBIKIT_FUZZ_SECONDS=N  fuzz each target N seconds (default 20)
#   UBIKIT_CTEST_ARGS="-LE vm"  extra ctest arguments (e.g. skip VM tests)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
build=${UBIKIT_BUILD_DIR:-build-test}
CC=clang cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	-DUBIKIT_SANITIZE=ON -DUBIKIT_FUZZ=ON >/dev/null
cmake --build "$build" -j"$(nproc)"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
cd "$build"
# shellcheck disable=SC2086
exec ctest --output-on-failure -j"$(nproc)" ${UBIKIT_CTEST_ARGS:-}
