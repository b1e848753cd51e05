#!/usr/bin/env bash
# The test command (README): installs dependencies, builds ubikit with clang,
# AddressSanitizer + UndefinedBehaviorSanitizer and libFuzzer targets, then runs
# every test through CTest: unit suites, CLI and mtd-utils interop, Linux-kernel
# interop in a QEMU VM (label "vm"), and brief fuzzing (label "fuzz").
# First it builds what users build: the default compiler (GCC) in Release, as
# scripts/main.sh does (a warning only GCC -O2 sees fails here); the CTest
# entry main_job then runs the main job's short form on that build.
#   UBIKIT_LONG_TESTS=1    longer torture/power-cut runs
#   UBIKIT_FUZZ_SECONDS=N  fuzz each target N seconds (default 20)
#   UBIKIT_CTEST_ARGS="-LE vm"  extra ctest arguments (e.g. skip VM tests)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
build=${UBIKIT_BUILD_DIR:-build-test}
release=${UBIKIT_RELEASE_BUILD_DIR:-build-release}
cmake -S . -B "$release" -DCMAKE_BUILD_TYPE=Release -DUBIKIT_BUILD_TESTS=OFF >/dev/null
cmake --build "$release" -j"$(nproc)"
CC=clang cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	-DUBIKIT_SANITIZE=ON -DUBIKIT_FUZZ=ON \
	-DUBIKIT_MAIN_JOB_BUILD="$PWD/$release" >/dev/null
cmake --build "$build" -j"$(nproc)"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
cd "$build"
# shellcheck disable=SC2086
exec ctest --output-on-failure -j"$(nproc)" ${UBIKIT_CTEST_ARGS:-}
