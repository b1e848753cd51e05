#!/bin/bash
# Raw NAND dumps with OOB (nanddump -o layout: 512+16, 2048+64, 4096+224,
# 8192+448 per page) holding a
# ubinize image written by 'ubikit format' around a factory-bad block, with
# the simulator sidecar removed so only the dump is left: detection must find
# the page+OOB stride, the reads must skip the bad block, and extract must
# give back the tree. Also checks the overrides and their errors.
set -euo pipefail
. "$(dirname "$0")/ubifs_lib.sh"

need mkfs.ubifs ubinize
S=${UBIKIT_SCRATCH:?}
rm -rf "$S"
mkdir -p "$S/tree/dir"
export TMPDIR_M=$S
head -c 3000000 /dev/urandom >"$S/tree/random.bin"
printf 'hello\n' >"$S/tree/dir/hello"
ln -s dir/hello "$S/tree/link"
ln "$S/tree/random.bin" "$S/tree/dir/hard"
touch -d '2020-01-01 00:00:00' "$S/tree/dir/hello" "$S/tree/dir" "$S/tree"

for geo in "2048:64:128KiB:129024:512:100" "4096:224:256KiB:258048:1024:100" "512:16:16KiB:15872:256:400" "8192:448:512KiB:507904:8192:40"; do
	IFS=: read -r page oob peb leb sub cnt <<<"$geo"
	tag="nand-$page+$oob"
	mkfs.ubifs -r "$S/tree" -m "$page" -e "$leb" -c "$cnt" -x lzo -o "$S/fs.ubifs"
	printf '[rootfs]\nmode=ubi\nimage=%s\nvol_id=0\nvol_type=dynamic\nvol_size=%s\nvol_name=rootfs\nvol_flags=autoresize\n' \
		"$S/fs.ubifs" "$((leb * cnt))" >"$S/ini"
	ubinize -o "$S/fs.ubi" -p "$peb" -m "$page" -s "$sub" "$S/ini"
	rm -f "$S/nand.img" "$S/nand.img.sim"
	"$UBIKIT" flash create "$S/nand.img" --size 32MiB --page "$page" --oob "$oob" --peb "$peb" --subpage "$sub" \
		--with-oob >/dev/null
	"$UBIKIT" flash inject "$S/nand.img" bad --peb 2 >/dev/null
	"$UBIKIT" format "$S/nand.img" -f "$S/fs.ubi" -y -q >/dev/null
	# with its sidecar it is a simulator image
	"$UBIKIT" info "$S/nand.img" >"$S/info.txt" 2>&1 || { cat "$S/info.txt"; fail "$tag: info (sim) failed"; }
	grep -q 'kind: ubikit flash simulator' "$S/info.txt" || { cat "$S/info.txt"; fail "$tag: not detected as a simulator image"; }
	rm -rf "$S/out"
	"$UBIKIT" extract -q "$S/nand.img" -o "$S/out" || fail "$tag: extract (sim) failed"
	compare_trees "$S/tree" "$S/out" "$tag sim"
	rm -f "$S/nand.img.sim"
	sum0=$(md5sum <"$S/nand.img")
	pebs=$(( $(stat -c %s "$S/nand.img") / ( ${peb%KiB} * 1024 / page * (page + oob) ) ))

	"$UBIKIT" info "$S/nand.img" >"$S/info.txt" 2>&1 || { cat "$S/info.txt"; fail "$tag: info failed"; }
	grep -q 'kind: raw NAND dump with OOB' "$S/info.txt" || { cat "$S/info.txt"; fail "$tag: not detected as NAND with OOB"; }
	grep -q "oob_size: $oob" "$S/info.txt" || fail "$tag: OOB size $oob not detected"
	grep -q "min_io_size: $page" "$S/info.txt" || fail "$tag: page size $page not detected"
	grep -q "peb_count: $pebs" "$S/info.txt" || fail "$tag: PEB count $pebs not detected"
	grep -q 'bad_pebs: 1' "$S/info.txt" || { cat "$S/info.txt"; fail "$tag: bad block not seen"; }

	rm -rf "$S/out"
	"$UBIKIT" extract -q "$S/nand.img" -o "$S/out" || fail "$tag: extract failed"
	compare_trees "$S/tree" "$S/out" "$tag"
	# explicit geometry gives the same
	rm -rf "$S/out"
	"$UBIKIT" extract -q --kind nand-oob --page "$page" --oob "$oob" --peb "$peb" "$S/nand.img" -o "$S/out" ||
		fail "$tag: extract with explicit geometry failed"
	compare_trees "$S/tree" "$S/out" "$tag explicit"
	# a wrong override fails cleanly (exit 1, a message, no crash)
	# (the OOB bytes then sit inside the pages: no volume table survives)
	expect_fail 1 "nand.img: UBI attach failed: .*(volume table copies are corrupted|layout volume \(volume table\) was not found)" \
		"$UBIKIT" ls --no-oob --peb "$peb" "$S/nand.img"
	[ ! -e "$S/nand.img.sim" ] || fail "$tag: read-only tools created a sidecar"
	[ "$(md5sum <"$S/nand.img")" = "$sum0" ] || fail "$tag: the image changed"
	echo "ok $tag"
done
echo "PASS: NAND dump with OOB and a bad block"
