#!/usr/bin/env bash
# lib_install — libubikit as an installed library (issue 7 part 2):
# `cmake --install` into a temporary prefix, then outside the source tree
#   - the files are there: tool, libubikit.so.X.Y.Z with SONAME
#     libubikit.so.X, libubikit.a, headers, ubikit.pc, the CMake package,
#     man pages (ubikit(1) and one per command);
#   - the shared library exports exactly the functions the public headers
#     declare (ubikit_*), nothing of the layers' insides;
#   - every public header compiles on its own (C, and C++ when there is g++);
#   - examples/ubikit-list builds with pkg-config, and with find_package()
#     against the shared and the static library, and each binary lists a
#     directory and prints a file of a kernel-written NAND dump with OOB
#     (tests/data/kernel-images) exactly as its manifest says.
# The installed build is UBIKIT_INSTALL_BUILD (the GCC Release build in
# scripts/test.sh: a sanitizer build's library cannot be linked by a
# plain program).
set -euo pipefail
. "$UBIKIT_SRC/tests/tools/test_lib.sh"
B=${UBIKIT_INSTALL_BUILD:?}
[ -f "$B/CMakeCache.txt" ] || fail "no build in $B"
if grep -q '^UBIKIT_SANITIZE:BOOL=ON' "$B/CMakeCache.txt"; then
	skip "$B is a sanitizer build; configure with -DUBIKIT_MAIN_JOB_BUILD=<Release build> (scripts/test.sh does)"
fi
need cc pkg-config cmake readelf nm gunzip md5sum
S=$UBIKIT_SCRATCH
rm -rf "$S"
mkdir -p "$S"
P=$S/prefix
t0=$SECONDS
cmake --install "$B" --prefix "$P" >"$S/install.log" 2>&1 || { cat "$S/install.log"; fail "cmake --install failed"; }

echo "[$((SECONDS - t0)) s] the installed files"
# ---- the installed files ----
pc=$(find "$P" -name ubikit.pc)
[ -n "$pc" ] || fail "no ubikit.pc installed"
libdir=$(dirname "$(dirname "$pc")")
ver=$(sed -n 's/^Version: //p' "$pc")
major=${ver%%.*}
[ -x "$P/bin/ubikit" ] || fail "no bin/ubikit"
so=$libdir/libubikit.so.$ver
[ -f "$so" ] && [ ! -L "$so" ] || fail "no $so"
[ "$(readlink "$libdir/libubikit.so.$major")" = "libubikit.so.$ver" ] || fail "libubikit.so.$major is not a link to the library"
[ -L "$libdir/libubikit.so" ] || fail "no libubikit.so development link"
[ -f "$libdir/libubikit.a" ] || fail "no libubikit.a"
soname=$(readelf -d "$so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = "libubikit.so.$major" ] || fail "SONAME is '$soname', not libubikit.so.$major"
for h in ubikit.h image.h version.h; do
	[ -f "$P/include/ubikit/$h" ] || fail "header ubikit/$h not installed"
done
[ -f "$libdir/cmake/ubikit/ubikitConfig.cmake" ] || fail "no CMake package config"
expect_ok "$P/bin/ubikit" --version
grep -qx "ubikit $ver (libubikit $ver)" "$T_OUT" || fail "ubikit --version says '$(cat "$T_OUT")', want $ver"
man1=$P/share/man/man1
[ -f "$man1/ubikit.1" ] || fail "no man page ubikit.1"
cmds=$("$P/bin/ubikit" --help | awk '/^commands:/{on=1;next} on && /^  [a-z]/{print $1}')
[ "$(echo "$cmds" | wc -l)" -ge 10 ] || fail "ubikit --help lists only: $cmds"
for c in $cmds; do
	[ -f "$man1/ubikit-$c.1" ] || fail "no man page ubikit-$c.1"
done
grep -q -- '--output' "$man1/ubikit-extract.1" || fail "ubikit-extract.1 does not hold extract's options"
if command -v man >/dev/null; then
	MANWIDTH=80 man -l "$man1/ubikit-extract.1" 2>"$S/man.err" | grep -q "ubikit-extract" ||
		fail "man cannot render ubikit-extract.1: $(cat "$S/man.err")"
fi

echo "[$((SECONDS - t0)) s] exports: exactly the public functions"
# ---- exports: exactly the public functions ----
nm -D --defined-only "$so" | awk '$2 ~ /^[TWDBR]$/ {print $3}' | sed 's/@.*//' | sort -u >"$S/exported"
grep -v '^ubikit_' "$S/exported" >"$S/foreign" && fail "libubikit.so exports more than ubikit_*: $(head -5 "$S/foreign" | tr '\n' ' ')"
cat "$P"/include/ubikit/*.h | tr -s ' \t\n' ' ' | grep -o '[a-z_0-9* ]ubikit_[a-z_0-9]* *(' |
	sed 's/^.//; s/ *(//' | sort -u >"$S/declared"
[ "$(wc -l <"$S/declared")" -ge 60 ] || fail "found only $(wc -l <"$S/declared") declarations in the headers"
comm -23 "$S/declared" "$S/exported" >"$S/missing"
[ -s "$S/missing" ] && fail "declared but not exported: $(tr '\n' ' ' <"$S/missing")"
comm -13 "$S/declared" "$S/exported" >"$S/extra"
[ -s "$S/extra" ] && fail "exported but declared in no public header: $(tr '\n' ' ' <"$S/extra")"

echo "[$((SECONDS - t0)) s] each public header on its own"
# ---- each public header on its own ----
for h in "$P"/include/ubikit/*.h; do
	printf '#include <ubikit/%s>\n#include <ubikit/%s>\n' "${h##*/}" "${h##*/}" >"$S/h.c"
	cc -std=c99 -Wall -Wextra -Werror -pedantic -I"$P/include" -fsyntax-only "$S/h.c" 2>"$S/h.err" ||
		fail "ubikit/${h##*/} does not compile on its own (C99): $(cat "$S/h.err")"
	if command -v g++ >/dev/null; then
		g++ -Wall -Wextra -Werror -I"$P/include" -fsyntax-only -x c++ "$S/h.c" 2>"$S/h.err" ||
			fail "ubikit/${h##*/} does not compile on its own (C++): $(cat "$S/h.err")"
	fi
done

echo "[$((SECONDS - t0)) s] the example, outside the tree"
# ---- the example, outside the tree (docs/library.md shows it whole) ----
awk '/^## A complete example/ {on = 1} on && /^```c$/ {p = 1; next} p && /^```$/ {exit} p' \
	"$UBIKIT_SRC/docs/library.md" | diff - "$UBIKIT_SRC/examples/ubikit-list/ubikit-list.c" >"$S/doc.diff" ||
	fail "docs/library.md does not show examples/ubikit-list/ubikit-list.c as it is: $(head -20 "$S/doc.diff")"
E=$S/example
cp -r "$UBIKIT_SRC/examples/ubikit-list" "$E"
export PKG_CONFIG_PATH=$libdir/pkgconfig
# shellcheck disable=SC2046
cc -Wall -Wextra -Werror -o "$S/list-pc" "$E/ubikit-list.c" $(pkg-config --cflags --libs ubikit) \
	-Wl,-rpath,"$libdir" 2>"$S/cc.err" || fail "pkg-config build failed: $(cat "$S/cc.err")"
cmake -S "$E" -B "$S/b" -DCMAKE_PREFIX_PATH="$P" -DCMAKE_BUILD_RPATH="$libdir" >"$S/cm.log" 2>&1 &&
	cmake --build "$S/b" >>"$S/cm.log" 2>&1 || { cat "$S/cm.log"; fail "find_package build failed"; }
cp "$S/b/ubikit-list" "$S/list-shared"
cp "$S/b/ubikit-list-static" "$S/list-static"
readelf -d "$S/list-pc" | grep -q "NEEDED.*\[libubikit.so.$major\]" || fail "the pkg-config build does not use libubikit.so.$major"
readelf -d "$S/list-shared" | grep -q "NEEDED.*\[libubikit.so.$major\]" || fail "find_package(ubikit::ubikit) does not link libubikit.so.$major"
readelf -d "$S/list-static" | grep -q "NEEDED.*libubikit" && fail "ubikit::ubikit_static links libubikit.so"

echo "[$((SECONDS - t0)) s] run them on a NAND dump"
# ---- run them on a NAND dump with OOB written by the kernel ----
name=nand4k-oob-zstd-unclean
gunzip -c "$UBIKIT_SRC/tests/data/kernel-images/$name.img.gz" >"$S/nand.img"
man=$UBIKIT_SRC/tests/data/kernel-images/$name.manifest
# want: "f SIZE NAME" / "d 0 NAME" ... of ./dir's entries, sorted
awk '$1 ~ /^\.\/dir\/[^\/]*$/ && $2 ~ /^(f|d|l|dev|other)$/ {
	n = substr($1, 7)
	if ($2 == "f") print "f", $7, n; else if ($2 == "d" || $2 == "l") print $2, n; else print "o", n
}' "$man" | sort >"$S/want"
[ "$(wc -l <"$S/want")" -ge 3 ] || fail "manifest gives too few entries of /dir"
want_md5=$(awk '$1 == "./dir/hello" && $2 == "f" {print $9}' "$man")
for bin in list-pc list-shared list-static; do
	expect_ok "$S/$bin" "$S/nand.img" /dir /dir/hello
	head -1 "$T_OUT" | grep -q '^# raw NAND dump with OOB, 256 PEBs of 262144 bytes$' ||
		fail "$bin: detected '$(head -1 "$T_OUT")', want a NAND dump with OOB of 256 PEBs of 256 KiB"
	n_ls=$(wc -l <"$S/want")
	sed -n "2,$((n_ls + 1))p" "$T_OUT" | awk '{ if ($1 == "f") print; else print $1, $3 }' | sort >"$S/got"
	diff "$S/want" "$S/got" >"$S/diff" || fail "$bin: /dir listing differs from the manifest: $(cat "$S/diff")"
	got_md5=$(tail -n +$((n_ls + 2)) "$T_OUT" | md5sum | cut -d' ' -f1)
	[ "$got_md5" = "$want_md5" ] || fail "$bin: /dir/hello has md5 $got_md5, manifest $want_md5"
done
expect_fail 1 'nand.img.missing' "$S/list-shared" "$S/nand.img.missing"
echo "lib_install: $((SECONDS - t0)) s"
echo "lib_install: all passed (libubikit $ver installed, example built 3 ways and run)"
