#!/bin/bash
# `ubikit mkfs` (the kernel's view is tests/vm/ubifs_mkfs_kernel.sh):
#  - a rich tree (every file type, hard links, xattrs, sparse and large
#    files, 10000 names) on NAND 2K / 4K / NOR with every compressor:
#    `ubikit extract` of the image == the source (contents, modes, owners,
#    mtimes, links, devices, xattrs; sockets through `ubikit ls`);
#  - the same flags to mkfs.ubifs: its image holds the same tree and ours
#    is no larger (both sizes printed);
#  - reproducible: two runs (different thread counts) byte-identical under
#    SOURCE_DATE_EPOCH, and with --uuid;
#  - --ubinize, the device table, and the errors (tree too big with the
#    LEBs it needs, unreadable file named, LEB counts the geometry cannot
#    hold, bad device-table lines, unsupported mkfs.ubifs flags by name).
set -euo pipefail
. "$(dirname "$0")/ubifs_lib.sh"
. "$(dirname "$0")/ubifs_mkfs_lib.sh"
need mkfs.ubifs ubinize python3 setfattr getfattr xxd
S=${UBIKIT_SCRATCH:?}
rm -rf "$S"
mkdir -p "$S"
export TMPDIR_M=$S
mkfs_tree "$S/src"
if [ -z "${UBIKIT_LONG_TESTS:-}" ]; then # 2000 names instead of 10000 (time)
	rm -rf "$S/src/many" && mkdir "$S/src/many" && (cd "$S/src/many" && seq -f 'entry%05g' 0 1999 | xargs touch)
	touch -d '2022-03-04 05:06:07' "$S/src/many" "$S/src"
fi

# xattrs of a tree, one "path name=value" line each, sorted
xattrs() {
	(cd "$1" && getfattr -R -h -d -m - -e hex . 2>/dev/null | awk '
		/^# file: / { p = substr($0, 9); next }
		NF { print p " " $0 }' | LC_ALL=C sort)
}
xattrs "$S/src" >"$S/src.xattrs"
[ "$(wc -l <"$S/src.xattrs")" -ge 4 ] || fail "the source tree has too few xattrs"
manifest "$S/src" | grep -v '^sock	' >"$S/src.manifest"

check_image() { # IMAGE WHAT [noxattrs]
	local img=$1 what=$2
	rm -rf "$S/x"
	expect_ok "$UBIKIT" extract -q "$img" -o "$S/x"
	manifest "$S/x" >"$S/x.manifest"
	diff -u "$S/src.manifest" "$S/x.manifest" | head -20 >&2 || true
	cmp -s "$S/src.manifest" "$S/x.manifest" || fail "$what: extracted tree differs from the source"
	if [ -z "${3:-}" ]; then
		xattrs "$S/x" >"$S/x.xattrs"
		diff -u "$S/src.xattrs" "$S/x.xattrs" | head -10 >&2 || true
		cmp -s "$S/src.xattrs" "$S/x.xattrs" || fail "$what: xattrs differ from the source"
		expect_ok "$UBIKIT" ls -l "$img" /sock
		grep -q '^s' "$T_OUT" || fail "$what: /sock is not a socket: $(cat "$T_OUT")"
	fi
	[ "$(stat -c '%a %Y' "$S/src")" = "$(stat -c '%a %Y' "$S/x")" ] || fail "$what: root mode/mtime differ"
}

declare -A GEO=([nand2k]="-m 2048 -e 129024 -c 400" [nand4k]="-m 4096 -e 253952 -c 200" [nor]="-m 8 -e 65408 -c 800")
declare -A COMPRS=([nand2k]="none lzo zlib zstd favor_lzo" [nand4k]="lzo" [nor]="zstd")
[ -z "${UBIKIT_LONG_TESTS:-}" ] || COMPRS=([nand2k]="none lzo zlib zstd favor_lzo" [nand4k]="none lzo zlib zstd favor_lzo" [nor]="none lzo zlib zstd favor_lzo")
for g in nand2k nand4k nor; do
	for c in ${COMPRS[$g]}; do
		# shellcheck disable=SC2086
		expect_ok "$UBIKIT" mkfs -r "$S/src" ${GEO[$g]} -x $c -o "$S/$g-$c.img"
		grep -qE '^mkfs: [0-9]+ files, [0-9]+ bytes in, [0-9]+ bytes on flash .*ratio [0-9.]+, [0-9]+ LEBs of' "$T_OUT" ||
			fail "$g $c: no summary line: $(cat "$T_OUT")"
		check_image "$S/$g-$c.img" "$g $c"
	done
done
echo "ok: every geometry and compressor reads back as the source"

# mkfs.ubifs with the same flags: same tree, ours no larger
for gc in "nand2k lzo" "nand2k zstd" "nor zstd"; do
	set -- $gc
	g=$1 c=$2
	# shellcheck disable=SC2086
	mkfs.ubifs -r "$S/src" ${GEO[$g]} -x $c -o "$S/$g-$c.mtd.img" >/dev/null || fail "mkfs.ubifs $g $c"
	[ -f "$S/$g-$c.img" ] || expect_ok "$UBIKIT" mkfs -r "$S/src" ${GEO[$g]} -x $c -o "$S/$g-$c.img"
	check_image "$S/$g-$c.mtd.img" "mkfs.ubifs $g $c" noxattrs
	ours=$(stat -c %s "$S/$g-$c.img") theirs=$(stat -c %s "$S/$g-$c.mtd.img")
	echo "size $g $c: ubikit mkfs $ours bytes, mkfs.ubifs $theirs bytes"
	[ "$ours" -le "$theirs" ] || fail "$g $c: our image ($ours) is larger than mkfs.ubifs's ($theirs)"
done

# reproducible
SOURCE_DATE_EPOCH=1600000000 expect_ok "$UBIKIT" mkfs -r "$S/src" ${GEO[nand2k]} -x zstd -o "$S/r1.img"
SOURCE_DATE_EPOCH=1600000000 expect_ok "$UBIKIT" mkfs --threads 1 -r "$S/src" ${GEO[nand2k]} -x zstd -o "$S/r2.img"
cmp "$S/r1.img" "$S/r2.img" >&2 || fail "two runs with SOURCE_DATE_EPOCH differ"
expect_ok "$UBIKIT" ls -l "$S/r1.img" /
grep -q ' 2020-09-13 ' "$T_OUT" || fail "SOURCE_DATE_EPOCH did not clamp the times: $(head -3 "$T_OUT")"
expect_ok "$UBIKIT" mkfs --uuid 0123456789abcdef0123456789abcdef --threads 3 -r "$S/src" ${GEO[nor]} -x lzo -o "$S/u1.img"
expect_ok "$UBIKIT" mkfs --uuid 01234567-89ab-cdef-0123-456789abcdef --threads 1 -r "$S/src" ${GEO[nor]} -x lzo -o "$S/u2.img"
cmp "$S/u1.img" "$S/u2.img" >&2 || fail "two runs with the same --uuid differ"
expect_ok "$UBIKIT" info "$S/u1.img"
grep -q 'uuid: 01234567-89ab-cdef-0123-456789abcdef' "$T_OUT" || fail "--uuid not in the superblock"
echo "ok: reproducible"

# --ubinize
expect_ok "$UBIKIT" mkfs -r "$S/src" ${GEO[nand2k]} --ubinize "$S/u.ubi" --peb-size 128KiB --sub-page-size 512 --vol-name data
check_image "$S/u.ubi" "--ubinize"
expect_ok "$UBIKIT" info "$S/u.ubi"
grep -q 'data' "$T_OUT" || fail "--ubinize: volume name missing"

# device table
cat >"$S/dev.tab" <<'EOF'
# name type mode uid gid major minor start inc count
/dev d 755 0 0
/dev/console c 600 0 5 5 1
/dev/tty c 666 0 0 4 0 0 1 3
/dev/loop b 640 0 6 7 0
/hello.txt f 640 7 8
/sub d 700 3 4
EOF
expect_ok "$UBIKIT" mkfs -r "$S/src" ${GEO[nand2k]} -D "$S/dev.tab" -o "$S/dev.img"
expect_ok "$UBIKIT" ls -l "$S/dev.img" /dev
for want in '^crw------- +1 +0 +5 +5, +1 .* console$' '^crw-rw-rw- .* 4, +2 .* tty2$' '^brw-r----- +1 +0 +6 +7, +0 .* loop$'; do
	grep -qE "$want" "$T_OUT" || { cat "$T_OUT" >&2; fail "device table: no line like $want"; }
done
expect_ok "$UBIKIT" ls -l "$S/dev.img" /hello.txt
grep -qE '^-rw-r----- +3 +7 +8 ' "$T_OUT" || fail "device table: /hello.txt attributes: $(cat "$T_OUT")"
expect_ok "$UBIKIT" ls -l "$S/dev.img" /
grep -qE '^drwx------ +[0-9]+ +3 +4 .* sub$' "$T_OUT" || fail "device table: /sub attributes: $(cat "$T_OUT")"
printf '/dev d 755 0 0\n/bad\n' >"$S/bad1.tab"
expect_fail 1 "bad1.tab line 2 does not parse" "$UBIKIT" mkfs -r "$S/src" ${GEO[nand2k]} -D "$S/bad1.tab" -o "$S/e.img"
printf '/x z 755 0 0\n' >"$S/bad2.tab"
expect_fail 1 "bad2.tab line 1: unsupported file type 'z'" "$UBIKIT" mkfs -r "$S/src" ${GEO[nand2k]} -D "$S/bad2.tab" -o "$S/e.img"
printf 'rel c 600 0 0 1 1\n' >"$S/bad3.tab"
expect_fail 1 "bad3.tab line 1: path 'rel' must be absolute" "$UBIKIT" mkfs -r "$S/src" ${GEO[nand2k]} -D "$S/bad3.tab" -o "$S/e.img"
[ ! -e "$S/e.img" ] || fail "a failed mkfs left its output file"
echo "ok: device table"

# errors
expect_fail 1 "does not fit: it needs [0-9]+ LEBs, the maximum is 30" "$UBIKIT" mkfs -r "$S/src" -m 2048 -e 129024 -c 30 -x none -o "$S/e.img"
expect_fail 1 "maximum LEB count 10 is too small, minimum is 17" "$UBIKIT" mkfs -r "$S/src" -m 2048 -e 129024 -c 10 -o "$S/e.img"
expect_fail 1 "LPT of 2000000000 LEBs does not fit" "$UBIKIT" mkfs -r "$S/src" -m 8 -e 15360 -c 2000000000 -o "$S/e.img"
expect_fail 1 "too small LEB size 8192" "$UBIKIT" mkfs -r "$S/src" -m 8 -e 8192 -c 100 -o "$S/e.img"
expect_fail 2 "-m, -e and -c are required" "$UBIKIT" mkfs -r "$S/src" -e 129024 -c 100 -o "$S/e.img"
expect_fail 2 "output file cannot be inside the source tree" "$UBIKIT" mkfs -r "$S/src" ${GEO[nand2k]} -o "$S/src/sub/self.img"
[ ! -e "$S/src/sub/self.img" ] || fail "an image was written into the source tree"
expect_fail 2 "no output file" "$UBIKIT" mkfs -r "$S/src" ${GEO[nand2k]}
expect_fail 2 "option -a is not supported" "$UBIKIT" mkfs -a -r "$S/src" ${GEO[nand2k]} -o "$S/e.img"
expect_fail 2 "option --selinux is not supported .*SELinux" "$UBIKIT" mkfs --selinux x -r "$S/src" ${GEO[nand2k]} -o "$S/e.img"
expect_fail 2 "option --cipher is not supported .*encryption" "$UBIKIT" mkfs --cipher x -r "$S/src" ${GEO[nand2k]} -o "$S/e.img"
expect_fail 2 "option --auth-key is not supported .*authentication" "$UBIKIT" mkfs --auth-key x -r "$S/src" ${GEO[nand2k]} -o "$S/e.img"
expect_fail 2 'bad compressor "lz4"' "$UBIKIT" mkfs -x lz4 -r "$S/src" ${GEO[nand2k]} -o "$S/e.img"
expect_fail 2 'bad value "0" for -X' "$UBIKIT" mkfs -x favor_lzo -X 0 -r "$S/src" ${GEO[nand2k]} -o "$S/e.img"
expect_fail 1 "bad root directory .*nonexistent" "$UBIKIT" mkfs -r "$S/nonexistent" ${GEO[nand2k]} -o "$S/e.img"
# geometry options against mkfs.ubifs: the same flags give the same
# superblock (every field but leb_cnt, which depends on the layout, and the
# UUID); flags mkfs.ubifs refuses are refused, with the reason
sbfields() { # IMG: the superblock's fields (../shared/spec/UBIFS-FORMAT.md §14 offsets)
	python3 - "$1" <<'PY'
import struct, sys
b = open(sys.argv[1], 'rb').read(4096)
assert b[:4] == b'\x31\x18\x10\x06' and b[20] == 6, 'no superblock node at offset 0'
f = [('key_hash', 26, 'B'), ('key_fmt', 27, 'B'), ('flags', 28, 'I'), ('min_io', 32, 'I'), ('leb_size', 36, 'I'),
     ('max_leb_cnt', 44, 'I'), ('max_bud_bytes', 48, 'Q'), ('log_lebs', 56, 'I'), ('lpt_lebs', 60, 'I'),
     ('orph_lebs', 64, 'I'), ('jhead_cnt', 68, 'I'), ('fanout', 72, 'I'), ('lsave_cnt', 76, 'I'),
     ('fmt_version', 80, 'I'), ('default_compr', 84, 'H'), ('rp_uid', 88, 'I'), ('rp_gid', 92, 'I'),
     ('rp_size', 96, 'Q'), ('time_gran', 104, 'I'), ('hash_algo', 256, 'H')]
print(' '.join('%s=%d' % (n, struct.unpack_from('<' + t, b, o)[0]) for n, o, t in f))
PY
}
mkdir -p "$S/tiny/d"
echo hello >"$S/tiny/a"
seq 1 3000 >"$S/tiny/d/numbers"
ln -s a "$S/tiny/l"
geo_same() { # mkfs flags...: both accept, same superblock fields, ours holds the tree
	rm -f "$S/g.mtd.img" "$S/g.img"
	mkfs.ubifs -r "$S/tiny" "$@" -o "$S/g.mtd.img" >/dev/null 2>&1 || fail "mkfs.ubifs $* refused"
	expect_ok "$UBIKIT" mkfs -q -r "$S/tiny" "$@" -o "$S/g.img"
	want=$(sbfields "$S/g.mtd.img") && got=$(sbfields "$S/g.img") || fail "superblock of $*"
	[ "$want" = "$got" ] || fail "mkfs $*: superblock fields differ from mkfs.ubifs's:
  mkfs.ubifs: $want
  ubikit:     $got"
	expect_ok "$UBIKIT" cat "$S/g.img" /d/numbers
	cmp -s "$T_OUT" "$S/tiny/d/numbers" || fail "mkfs $*: /d/numbers differs from the source"
}
geo_same -m 512 -e 15872 -c 60000 -x none          # big LPT model, journal capped at 8 MiB
geo_same -m 2048 -e 126976 -c 200 -f 32 -l 6 -p 3 -j 1MiB -R 2MiB -F -k test -x zlib
geo_same -m 8 -e 15360 -c 100 -l 2 -x zstd         # NOR, the smallest LEB, the smallest log
geo_same -m 2048 -e 126976 -c 200 -l 182 -x lzo    # the largest log mkfs.ubifs takes
geo_same -m 2048 -e 126976 -c 40 -l 12 -p 10 -x lzo # areas leaving the kernel's minimum main area
geo_same -m 4096 -e 253952 -c 100 -f 3000 -j 2MiB -x favor_lzo
geo_refused() { # regex mkfs flags...: mkfs.ubifs refuses too
	local re=$1
	shift
	if mkfs.ubifs -r "$S/tiny" "$@" -o "$S/g.mtd.img" >/dev/null 2>&1; then fail "mkfs.ubifs took $*"; fi
	expect_fail 1 "$re" "$UBIKIT" mkfs -q -r "$S/tiny" "$@" -o "$S/e.img"
	[ ! -e "$S/e.img" ] || fail "mkfs $*: a refused mkfs left its output file"
}
geo_refused "bad log LEB count 1: at least 2" -m 2048 -e 126976 -c 200 -l 1
geo_refused "bad log LEB count 183: at least 2, and 200 LEBs \(-c\) allow at most 182" -m 2048 -e 126976 -c 200 -l 183
geo_refused "bad log LEB count 4: at least 2, and 17 LEBs \(-c\) allow at most 0" -m 2048 -e 126976 -c 17
geo_refused "bad orphan LEB count 183: 200 LEBs \(-c\) allow at most 182" -m 2048 -e 126976 -c 200 -p 183
geo_refused "40 LEBs \(-c\) are too few for 22 log and 22 orphan LEBs: at least 58 needed" -m 2048 -e 126976 -c 40 -l 22 -p 22
geo_refused "40 LEBs \(-c\) are too few for 20 log and 16 orphan LEBs: at least 50 needed" -m 2048 -e 126976 -c 40 -l 20 -p 16
# mkfs.ubifs writes these, but no kernel mounts them: max_leb_cnt below
# 1 + 2 + log + LPT + orphan + 3 heads + 6 LEBs (validate_sb, spec §2.2)
for c in 30 35; do
	mkfs.ubifs -r "$S/tiny" -m 2048 -e 126976 -c $c -l 12 -p 10 -o "$S/g.mtd.img" >/dev/null 2>&1 || fail "mkfs.ubifs -c $c -l 12 -p 10"
	expect_fail 1 "$c LEBs \(-c\) are too few for 12 log and 10 orphan LEBs: at least 36 needed" \
		"$UBIKIT" mkfs -q -r "$S/tiny" -m 2048 -e 126976 -c $c -l 12 -p 10 -o "$S/e.img"
done
geo_refused "too few log LEBs \(2\) for a journal of 8388608 bytes, minimum 3" -m 2048 -e 126976 -c 200 -l 2 -j 8MiB
geo_refused "min. I/O unit size 3000 is not a power of 2" -m 3000 -e 126976 -c 200
geo_refused "LEB size 127000 is not a multiple of the min. I/O unit 2048" -m 2048 -e 127000 -c 200
geo_refused "too small LEB size 1000, minimum is 15360" -m 2048 -e 1000 -c 200
geo_refused "fanout 4534 out of range \(3\.\.3173\)" -m 2048 -e 126976 -c 200 -f 4534
# a journal under 3 LEBs: mkfs.ubifs writes it, the kernel's validate_sb
# refuses such a superblock (max_bud_bytes < 3 x leb_size, spec §2.2)
mkfs.ubifs -r "$S/tiny" -m 2048 -e 126976 -c 200 -j 200KiB -o "$S/g.mtd.img" >/dev/null 2>&1 || fail "mkfs.ubifs -j 200KiB"
expect_fail 1 "too small journal \(204800 bytes\), at least 380928" "$UBIKIT" mkfs -q -r "$S/tiny" -m 2048 -e 126976 -c 200 -j 200KiB -o "$S/e.img"
echo "ok: geometry options as mkfs.ubifs"
if is_root && command -v setpriv >/dev/null; then
	mkdir -p "$S/unread/d"
	echo secret >"$S/unread/d/secret"
	chmod 000 "$S/unread/d/secret"
	chmod -R a+rX "$S/unread/d" 2>/dev/null || true
	chmod 000 "$S/unread/d/secret"
	chmod 777 "$S"
	expect_fail 1 "cannot read '.*unread/d/secret': Permission denied" \
		setpriv --reuid=65534 --regid=65534 --clear-groups "$UBIKIT" mkfs -r "$S/unread" ${GEO[nand2k]} -o "$S/e2.img"
fi
echo "PASS: ubikit mkfs"
