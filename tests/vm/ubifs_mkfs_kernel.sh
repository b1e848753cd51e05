#!/bin/bash
# The Linux kernel judges `ubikit mkfs` and ubikit's formatting (label vm),
# all with --ubifs-checks --strict (index, LPT against a scan, every inode's
# link count and size, directory and xattr sizes; a warning fails too):
#  1. per geometry (NAND 2 KiB with 512-byte sub-pages, NAND 4 KiB, NOR):
#     one UBI image with a volume per compressor (none, lzo, zlib, zstd,
#     favor_lzo) and one made with -F (free-space fixup: the kernel does it
#     on its first read-write mount; the default run spreads these over
#     the geometries, UBIKIT_LONG_TESTS=1 does all on each), each volume a few LEBs larger than
#     the image (the kernel grows it); a compressor written C@vol goes
#     into an empty volume of the UBI image by `ubikit mkfs FLASH
#     --vol-name` (C@new: the volume is created by it, the image padded
#     with erased PEBs to make room). The kernel mounts every volume and
#     must show exactly the source tree (contents, modes, owners, mtimes,
#     link counts, symlinks, devices, fifos, sockets, xattrs), then writes
#     to each (new files, a copy, removals, a sync) without an error.
#  2. an empty UBI volume: ubikit's read-write mount formats it with the
#     kernel's defaults (ubifs_format), runs the write-model workload and
#     commits; the kernel mounts it and shows the model's tree.
#  3. ubikit's read-write mount of a small image made with -F (ours and
#     mkfs.ubifs's): the fixup is done and the LEB count grown to
#     max_leb_cnt by ubikit; the kernel checks the result.
set -euo pipefail
PARTS=${PARTS:-"nand2k nand4k nor empty fix"} # which parts run (for debugging)
part() { case " $PARTS " in *" $1 "*) return 0 ;; esac; return 1; }
: "${UBIKIT:?}" "${UBIKIT_SRC:?}" "${WRITE_TOOL:?}"
S=${UBIKIT_SCRATCH:?}
VM=${LINUX_VM:-$UBIKIT_SRC/tests/vm/linux-ubifs-vm}
. "$UBIKIT_SRC/tests/tools/ubifs_lib.sh"
. "$UBIKIT_SRC/tests/tools/ubifs_mkfs_lib.sh"
need mkfs.ubifs ubinize python3 setfattr getfattr xxd
[ -x "$VM" ] || skip "no Linux VM tool"
rm -rf "$S"
mkdir -p "$S/in"
mkfs_tree "$S/src"
# keep the VM's manifest quick (busybox forks are slow under TCG)
rm -rf "$S/src/many" && mkdir "$S/src/many" && (cd "$S/src/many" && seq -f 'entry%03g' 0 199 | xargs touch)
touch -d '2022-03-04 05:06:07' "$S/src/many" "$S/src"
cp "$UBIKIT_SRC/tests/vm/ubifs_mkfs_manifest.sh" "$S/in/manifest.sh"
sh "$S/in/manifest.sh" "$S/src" >"$S/in/expected"
grep -q ' s ' "$S/in/expected" || fail "the source tree has no socket"

# the VM script: mount every volume, compare, write, sync, unmount
cat >"$S/in/check.sh" <<'EOF'
rc=0
for v in $VOLS; do
	if [ "$v" = "$FIRST" ]; then m=$MNT; else m=/tmp/m-$v; mkdir -p $m; mount -t ubifs ubi0:$v $m || { echo "mount $v failed"; rc=1; continue; }; fi
	sh $IN/in/manifest.sh $m >$RESULTS/$v.manifest
	cmp -s $RESULTS/$v.manifest $IN/in/expected || { echo "volume $v: tree differs"; rc=1; }
	mkdir $m/kernel-was-here && i=0 && while [ $i -lt 30 ]; do echo "kernel $i" >$m/kernel-was-here/f$i; i=$((i+1)); done
	cp -a $m/sub $m/kernel-was-here/sub-copy && dd if=/dev/urandom of=$m/kernel-was-here/big bs=4096 count=300 2>/dev/null
	rm -f $m/hello.txt $m/mixed.bin && setfattr -n user.k -v 1 $m/text.txt && sync || { echo "volume $v: writing failed"; rc=1; }
	[ "$m" = "$MNT" ] || umount $m || rc=1
done
exit $rc
EOF

vm() { # name, flash, geometry args..., then -- extra args
	local name=$1 flash=$2
	shift 2
	set +e
	"$VM" run --flash "$flash" "$@" --ubifs-checks --strict --timeout 600 --copy-in "$S/in" \
		--out "$S/vm-$name" >"$S/vm-$name.log" 2>&1
	local rc=$?
	set -e
	if [ $rc != 0 ]; then
		tail -40 "$S/vm-$name.log" >&2
		for f in "$S/vm-$name"/files/*.manifest; do
			[ -f "$f" ] && diff -u "$S/in/expected" "$f" | head -30 >&2
		done
		fail "kernel run $name exited $rc (123: kernel error or warning)"
	fi
}

# 1. every geometry, every compressor
# Under TCG the kernel's walk of each volume costs ~15 s, so the default run
# spreads the compressors over the geometries (each one once, -F once);
# UBIKIT_LONG_TESTS=1 mounts every compressor on every geometry.
run_geometry() { # name minio leb peb subpage max-lebs compressors vm-geometry-args...
	local g=$1 minio=$2 leb=$3 peb=$4 sub=$5 maxlebs=$6 comprs=$7
	shift 7
	[ "${UBIKIT_LONG_TESTS:-0}" = 1 ] && comprs="none lzo zlib zstd favor_lzo fixup zstd@vol lzo@new"
	local ini=$S/$g.ini vols="" id=0 first="" later=()
	: >"$ini"
	for c in $comprs; do
		local x=${c%@*} v=${c/@/-} extra=()
		[ $x = fixup ] && x=lzo extra=(-F)
		vols="$vols $v"
		[ -n "$first" ] || first=$v
		case $c in
		*@new) later+=("$v $x $id") ;;
		*@vol) # an empty volume, filled below by ubikit mkfs FLASH
			printf '[%s]\nmode=ubi\nvol_id=%d\nvol_type=dynamic\nvol_name=%s\nvol_size=%d\n' \
				"$v" $id "$v" $((maxlebs * leb)) >>"$ini"
			later+=("$v $x") ;;
		*)
			expect_ok "$UBIKIT" mkfs -r "$S/src" -m "$minio" -e "$leb" -c $maxlebs -x $x "${extra[@]}" -o "$S/$g-$c.img"
			local lebs=$maxlebs # the kernel grows the file system to it
			printf '[%s]\nmode=ubi\nimage=%s\nvol_id=%d\nvol_type=dynamic\nvol_name=%s\nvol_size=%d\n' \
				"$c" "$S/$g-$c.img" $id "$c" $((lebs * leb)) >>"$ini" ;;
		esac
		id=$((id + 1))
	done
	[ -s "$ini" ] || printf '[spare]\nmode=ubi\nvol_id=100\nvol_type=dynamic\nvol_name=spare\nvol_size=%d\n' "$leb" >"$ini"
	ubinize -o "$S/$g.ubi" -m "$minio" -p "$peb" -s "$sub" "$ini" >/dev/null || fail "ubinize $g"
	if [ ${#later[@]} -gt 0 ]; then # a UBI image padded with erased PEBs: room for new volumes
		head -c $((48 << 20)) /dev/zero | tr '\0' '\377' >"$S/$g.pad"
		dd if="$S/$g.ubi" of="$S/$g.pad" conv=notrunc status=none && mv "$S/$g.pad" "$S/$g.ubi"
	fi
	local l lv lx lid
	for l in "${later[@]}"; do
		read -r lv lx lid <<<"$l"
		if [ -n "$lid" ]; then
			expect_ok "$UBIKIT" mkfs "$S/$g.ubi" --vol-name "$lv" --vol-id "$lid" -r "$S/src" -x "$lx" -c $maxlebs
			grep -q "created volume $lid \"$lv\" ($maxlebs LEBs" "$T_OUT" || fail "$g $lv: $(cat "$T_OUT")"
		else
			expect_ok "$UBIKIT" mkfs "$S/$g.ubi" --vol-name "$lv" -r "$S/src" -x "$lx"
			grep -q "replaced volume [0-9]* \"$lv\" ($maxlebs LEBs" "$T_OUT" || fail "$g $lv: $(cat "$T_OUT")"
		fi
	done
	vm "$g" "$S/$g.ubi" "$@" --cmd "VOLS='$vols' FIRST=$first sh \$IN/in/check.sh"
	echo "PASS: $g: the kernel mounts ubikit mkfs images ($vols) with --ubifs-checks, tree = source, writes fine"
}
part nand2k && run_geometry nand2k 2048 129024 128KiB 512 100 "none zstd fixup" --nand 2048:64:128KiB:96MiB
part nand4k && run_geometry nand4k 4096 258048 256KiB 1024 36 "lzo favor_lzo@vol" --nand 4096:128:256KiB:64MiB
part nor && run_geometry nor 8 65408 64KiB 1 120 "zlib@new" --nor 64KiB:64MiB

# 2. an empty volume: ubikit's read-write mount formats it
cp "$UBIKIT_SRC/tests/vm/ubifs_write_manifest.sh" "$S/in/wmanifest.sh"
if part empty; then
printf '[empty]\nmode=ubi\nvol_id=0\nvol_type=dynamic\nvol_name=rootfs\nvol_size=%d\n' $((300 * 129024)) >"$S/empty.ini"
ubinize -o "$S/empty.ubi" -m 2048 -p 128KiB -s 512 "$S/empty.ini" >/dev/null || fail "ubinize empty"
head -c $((64 << 20)) /dev/zero | tr '\0' '\377' >"$S/empty.flash"
dd if="$S/empty.ubi" of="$S/empty.flash" conv=notrunc status=none
"$WRITE_TOOL" "nand2k:$S/empty.flash" 5 300 commit "$S/in/w.expected" 1 100 >"$S/wt-empty.log" 2>&1 ||
	{ cat "$S/wt-empty.log" >&2; fail "ubikit on the empty volume"; }
vm empty "$S/empty.flash" --nand 2048:64:128KiB:64MiB \
	--cmd "sh \$IN/in/wmanifest.sh \$MNT/w5 >\$RESULTS/w.manifest && cmp -s \$RESULTS/w.manifest \$IN/in/w.expected && echo more >\$MNT/after && sync"
grep -q 'UBIFS.*default file-system created' "$S/vm-empty/dmesg.txt" && fail "the kernel formatted the volume, not ubikit"
echo "PASS: an empty volume formatted by ubikit's read-write mount: kernel checks clean, tree as the model"
fi
part fix || exit 0

# 3. -F images (ours and mkfs.ubifs's) fixed up and grown by ubikit's read-write mount
mkdir -p "$S/tiny"
echo tiny >"$S/tiny/file"
expect_ok "$UBIKIT" mkfs -r "$S/tiny" -m 2048 -e 129024 -c 200 -F -o "$S/fix-ours.img"
mkfs.ubifs -r "$S/tiny" -m 2048 -e 129024 -c 200 -F -o "$S/fix-mtd.img" || fail "mkfs.ubifs -F"
: >"$S/fix.ini"
id=0
for k in ours mtd; do
	"$WRITE_TOOL" "$S/fix-$k.img" 9 200 commit "$S/in/w-$k.expected" 1 80 >"$S/wt-$k.log" 2>&1 ||
		{ cat "$S/wt-$k.log" >&2; fail "ubikit read-write on the -F image ($k)"; }
	expect_ok "$UBIKIT" info "$S/fix-$k.img"
	grep -q 'space_fixup: no' "$T_OUT" || fail "$k: the fixup flag is still set after ubikit's read-write mount"
	grep -qE '^ +leb_cnt: 200$' "$T_OUT" || fail "$k: the LEB count did not grow to max_leb_cnt"
	printf '[%s]\nmode=ubi\nimage=%s\nvol_id=%d\nvol_type=dynamic\nvol_name=%s\nvol_size=%d\n' \
		"$k" "$S/fix-$k.img" $id "fix$k" $((200 * 129024)) >>"$S/fix.ini"
	id=$((id + 1))
done
ubinize -o "$S/fix.ubi" -m 2048 -p 128KiB -s 512 "$S/fix.ini" >/dev/null || fail "ubinize fix"
vm fix "$S/fix.ubi" --nand 2048:64:128KiB:64MiB --cmd "
sh \$IN/in/wmanifest.sh \$MNT/w9 >\$RESULTS/ours.manifest && cmp -s \$RESULTS/ours.manifest \$IN/in/w-ours.expected &&
mkdir -p /tmp/m2 && mount -t ubifs ubi0:fixmtd /tmp/m2 && sh \$IN/in/wmanifest.sh /tmp/m2/w9 >\$RESULTS/mtd.manifest &&
cmp -s \$RESULTS/mtd.manifest \$IN/in/w-mtd.expected && echo x >/tmp/m2/y && sync && umount /tmp/m2"
echo "PASS: -F images (ubikit and mkfs.ubifs) fixed up and grown by ubikit, kernel checks clean"
