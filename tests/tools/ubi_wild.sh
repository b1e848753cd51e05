#!/bin/bash
# Images as found in the wild (issue 12), made with Debian's mtd-utils the way
# build systems make them; each class of input must open with the read tools:
#   1  PEBs smaller than 4 KiB (ubinize -p 512/1024/2048, NOR)
#   2  minimal autoresize UBIFS volume (Buildroot's ubinize.cfg), also with an
#      explicit --peb, and 'ubi info'/'ubi read' on images whose volume table
#      reserves more PEBs than the file holds
#   3  UBI behind a vendor header (not PEB-aligned), several UBI devices in one
#      dump: listed by 'info', chosen with --ubi-index / --offset
#   6  hostile names: escaped on a terminal like 'ls -b', exact in --json
#   7  dump --pnum (PEB number) next to the image option --peb SIZE, a PEB
#      past the end is an error, 'info --json' prints what was found when
#      the attach fails, the zeroed signature node of mkfs.ubifs >= 2.1
set -euo pipefail
: "${UBIKIT:?}" "${UBIKIT_SCRATCH:?}"
. "$(dirname "$0")/test_lib.sh"
T_SOFT=1
need ubinize mkfs.ubifs python3
rm -rf "$UBIKIT_SCRATCH"; mkdir -p "$UBIKIT_SCRATCH"; cd "$UBIKIT_SCRATCH"

# A small tree and raw volume contents.
mkdir root root/d
echo hello > root/a
seq 1 3000 > root/d/nums
ln -s a root/l
python3 -c "import random; r=random.Random(12); open('raw.bin','wb').write(bytes(r.getrandbits(8) for _ in range(10000)))"

# tree_of DIR: one line per entry (path, type, size, md5 or link target)
tree_of() {
	(cd "$1" && find . -mindepth 1 | LC_ALL=C sort | while IFS= read -r p; do
		if [ -L "$p" ]; then echo "$p l $(readlink "$p")"
		elif [ -d "$p" ]; then echo "$p d"
		else echo "$p f $(stat -c %s "$p") $(md5sum < "$p" | cut -d' ' -f1)"; fi
	done)
}
tree_of root > root.tree

# ---- class 1: small PEBs ----------------------------------------------------
cat > small.ini <<'INI'
[data]
mode=ubi
image=raw.bin
vol_id=0
vol_type=static
vol_name=data
[dyn]
mode=ubi
image=raw.bin
vol_id=1
vol_type=dynamic
vol_size=20KiB
vol_name=dyn
INI
for p in 512 1024 2048; do
	ubinize -o p$p.ubi -p $p -m 1 small.ini >/dev/null 2>&1 || { fail "ubinize -p $p"; continue; }
	expect_ok "$UBIKIT" info --json p$p.ubi
	grep -q "\"peb_size\": $p," "$T_OUT" || fail "-p $p: info does not find PEB size $p: $(grep -m1 peb_size "$T_OUT")"
	for v in data dyn; do
		expect_ok "$UBIKIT" ubi read p$p.ubi -N $v -o $v.out
		head -c 10000 $v.out | cmp -s - raw.bin || fail "-p $p: volume $v reads wrong"
	done
	# the image layer (what ls/extract use) reads the static volume too
	expect_ok "$UBIKIT" dump --ubi p$p.ubi
	grep -q "vol 0 LEB 0" "$T_OUT" || fail "-p $p: dump shows no volume 0 LEB 0"
done
# small-page NAND (512-byte pages, 16 KiB PEBs): the smallest UBIFS LEB
mkfs.ubifs -m 512 -e 15360 -c 300 -r root -o n16k.ubifs
printf '[fs]\nmode=ubi\nimage=n16k.ubifs\nvol_id=0\nvol_size=2MiB\nvol_name=fs\n' > n16k.ini
ubinize -o n16k.ubi -p 16KiB -m 512 n16k.ini >/dev/null 2>&1
rm -rf x; expect_ok "$UBIKIT" extract -q n16k.ubi -o x
[ "$(tree_of x)" = "$(cat root.tree)" ] || fail "16 KiB PEBs, 512-byte pages: extracted tree differs"

# ---- class 2: minimal autoresize ------------------------------------------
mkfs.ubifs -m 2048 -e 126976 -c 2048 -r root -o br.ubifs
cat > br.ini <<'INI'
[ubifs]
mode=ubi
vol_id=0
vol_type=dynamic
vol_name=rootfs
vol_alignment=1
vol_flags=autoresize
image=br.ubifs
INI
ubinize -o br.ubi -m 2048 -p 128KiB -s 2048 br.ini >/dev/null 2>&1
for peb in "" "--peb 128KiB"; do
	# shellcheck disable=SC2086
	rm -rf x; expect_ok "$UBIKIT" extract -q $peb br.ubi -o x
	[ "$(tree_of x)" = "$(cat root.tree)" ] || fail "autoresize ${peb:-detected}: extracted tree differs"
	# shellcheck disable=SC2086
	expect_ok "$UBIKIT" ls $peb br.ubi /d
	grep -qx nums "$T_OUT" || fail "autoresize ${peb:-detected}: ls /d"
done
# a volume table reserving more PEBs than the file holds (vol_size given,
# ubinize writes only the data): 'ubi info' and 'ubi read' as on a device
mkfs.ubifs -m 2048 -e 126976 -c 60 -r root -o big.ubifs
printf '[fs]\nmode=ubi\nimage=big.ubifs\nvol_id=0\nvol_size=6MiB\nvol_name=rootfs\n[k]\nmode=ubi\nimage=raw.bin\nvol_id=1\nvol_type=static\nvol_name=kernel\n' > big.ini
ubinize -o big.ubi -m 2048 -p 128KiB -s 2048 big.ini >/dev/null 2>&1
for peb in "" "--peb 128KiB"; do
	# shellcheck disable=SC2086
	expect_ok "$UBIKIT" ubi info $peb big.ubi
	grep -q "Volumes count: *2" "$T_OUT" || fail "ubi info ${peb:-detected}: not 2 volumes"
	# shellcheck disable=SC2086
	expect_ok "$UBIKIT" ubi read $peb big.ubi -N kernel -o k.out
	cmp -s k.out raw.bin || fail "ubi read ${peb:-detected}: kernel volume differs"
	# shellcheck disable=SC2086
	rm -rf x; expect_ok "$UBIKIT" extract -q $peb big.ubi -o x
	[ "$(tree_of x)" = "$(cat root.tree)" ] || fail "vol_size image ${peb:-detected}: extracted tree differs"
done

# ---- class 6: hostile names ------------------------------------------------
mkdir nm
python3 - <<'PY'
import os
for n in [b"a\nb", b"e\x1b[31mred", b"sp ace", b"back\\slash", b"t\tab", b"u\xc3\xa9", b"bad\xff", b"del\x7f", b"cr\r"]:
    open(os.path.join(b"nm", n), "wb").write(n)
os.symlink(b"x\ny", b"nm/lnk")
PY
mkfs.ubifs -m 2048 -e 126976 -c 100 -r nm -o nm.ubifs
printf '%s\n' 'a\nb' 'back\\slash' 'bad\377' 'cr\r' 'del\177' 'e\033[31mred' 'lnk' 'sp\ ace' 't\tab' 'ué' > nm.expect
expect_ok "$UBIKIT" ls -b nm.ubifs
diff -u nm.expect "$T_OUT" >&2 || fail "ls -b: names not escaped like ls -b"
# on a terminal escaping is the default (a pty through script(1))
if command -v script >/dev/null; then
	script -qc "$UBIKIT ls -l nm.ubifs" /dev/null > tty.out 2>&1 < /dev/null || true
	tr -d '\r' < tty.out > tty.txt
	grep -q 'a\\nb' tty.txt && grep -q -- '-> x\\ny' tty.txt || fail "ls on a terminal: not escaped: $(head -3 tty.txt)"
	LC_ALL=C grep -q "$(printf '\033')" tty.txt && fail "ls on a terminal: an escape byte reached the terminal"
else
	skip_part "script(1) missing: the terminal case is not checked"
fi
# not a terminal, or -N: the names as they are (ls does the same)
expect_ok "$UBIKIT" ls -N nm.ubifs
python3 - "$T_OUT" <<'PY' || fail "ls -N: names not raw"
import sys
got = open(sys.argv[1], "rb").read()
assert b"a\nb\n" in got and b"e\x1b[31mred\n" in got and b"bad\xff\n" in got, got
PY
rm -rf x; expect_ok "$UBIKIT" extract -q nm.ubifs -o x
python3 - <<'PY' || fail "extract: names not exact"
import os
assert sorted(os.listdir(b"x")) == sorted(os.listdir(b"nm")), os.listdir(b"x")
assert os.readlink(b"x/lnk") == b"x\ny"
PY
# a UBI volume name with an escape byte: exact in --json, escaped in text
printf '[v]\nmode=ubi\nimage=nm.ubifs\nvol_id=0\nvol_size=4MiB\nvol_name=v\033[1mx\n' > nmv.ini
ubinize -o nmv.ubi -m 2048 -p 128KiB nmv.ini >/dev/null 2>&1
expect_ok "$UBIKIT" info --json nmv.ubi
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); n=d['ubi']['volumes'][0]['name']; assert n=='v\x1b[1mx', repr(n)" "$T_OUT" \
	|| fail "info --json: volume name not exact"
expect_ok "$UBIKIT" info nmv.ubi
grep -qF "v\\033[1mx" "$T_OUT" || fail "info: volume name not escaped"

# ---- class 7: dump and info details ------------------------------------------
expect_ok "$UBIKIT" dump --peb 128KiB --pnum 3 br.ubi
grep -q "^PEB 3 .*vol 0 LEB 1" "$T_OUT" || fail "dump --peb SIZE --pnum 3: $(head -2 "$T_OUT")"
expect_fail 1 "PEB 16 is past the end" "$UBIKIT" dump --pnum 16 br.ubi
expect_ok "$UBIKIT" dump --leb 0 br.ubifs
grep -q "0:4096 *signature .*zeroed signature node" "$T_OUT" || fail "dump: zeroed signature node not named"
grep -qi "problem\|!$" "$T_OUT" && fail "dump: LEB 0 of a fresh mkfs.ubifs image has a problem: $(grep -i problem "$T_OUT")"
python3 -c "
b=bytearray(open('br.ubi','rb').read())
for p in (0, 1): b[p*131072 + 2048 + 10] ^= 0xff   # both volume table VID headers
open('novt.ubi','wb').write(b)"
expect_fail 1 "UBI attach failed" "$UBIKIT" info --json novt.ubi
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['image']['peb_size']==131072 and 'attach failed' in d['ubi']['error'], d" "$T_OUT" \
	|| fail "info --json on a failed attach: $(head -c 300 "$T_OUT")"

finish ubi_wild
