#!/bin/sh
# vm_powercut.sh — runs inside the Linux VM (busybox sh, NAND through nandsim)
# and makes kernel-written power-cut images in one boot. For each cut point
# in $CUTS it lets the kernel create a fresh UBIFS, runs a workload long
# enough to wrap the log (many commits), with xattrs on files that are later
# deleted and files unlinked while open (orphans), and stops the kernel in
# the middle of it:
#   ubi:N    UBI's power-cut emulation (debugfs tst_emulate_power_cut, bit 2 =
#            VID header writes): the N+1st VID header write after the cut is
#            armed fails and UBI turns read-only, as if the power went while
#            UBIFS mapped a new LEB (new bud, log LEB, index/LPT LEB, master
#            LEB change during a commit).
#   ubifs:K  UBIFS's own emulation (debugfs tst_recovery): it picks a random
#            write, writes part of it with garbage/0xFF in the last write
#            unit (a torn write) and refuses every later write. K only names
#            the run (a different random cut each time).
# After the cut: unmount, detach, dump the flash ($RESULTS/NAME.img.gz), then
# the kernel's next mount of that dump (attach, mount: recovery) and its view
# ($RESULTS/NAME.manifest, tests/tools/ubifs_manifest.sh format, or a line
# "REFUSED" if it does not mount), plus the kernel's lines ($RESULTS/NAME.log).
# Needs: $CUTS, $ROUNDS (workload rounds at most), ubifs_manifest.sh in $IN.
# Optional: BGWRITE=1 (see round), UBIFS_OPTS (mount options of the workload,
# e.g. compr=none so that compressible data still fills LEBs).
cd /
umount "$MNT" || exit 1
ubidetach -m 0 || exit 1
DBG=/sys/kernel/debug
ROUNDS=${ROUNDS:-60}
mark() { echo "vm_powercut: $*" >/dev/kmsg; }

# write FILE SIZE TAG: pattern data (compressible, unique per tag), fsync'ed
wr() {
	awk -v n="$2" -v t="$3" 'BEGIN { s = ""; while (length(s) < n && length(s) < 1024) s = s t " " length(s) "\n"
		while (length(s) < n) s = s s; printf "%s", substr(s, 1, n) }' |
		dd of="$1" conv=fsync 2>/dev/null
}

cut_seen() { dmesg | grep -q -e 'emulating a power cut' -e 'Power cut emulated'; }

# one round of work; returns non-zero at the first failure (the cut)
round() {
	r=$1
	mkdir -p "$MNT/d$((r % 5))" || return 1
	d=$MNT/d$((r % 5))
	i=0
	while [ $i -lt 6 ]; do
		wr "$d/f$r.$i" $((300 + (r * 977 + i * 3001) % 3000)) "r$r.$i" || return 1
		i=$((i + 1))
	done
	setfattr -n user.round -v "r$r" "$d/f$r.0" || return 1
	setfattr -n user.big -v "$(printf '%0200d' $r)" "$d/f$r.1" || return 1
	setfattr -n trusted.t -v "t$r" "$d/f$r.2" || return 1
	# files with xattrs from two rounds ago: deleted
	o=$((r - 2))
	if [ $o -ge 0 ]; then
		od=$MNT/d$((o % 5))
		rm -f "$od/f$o.0" "$od/f$o.1" || return 1
		setfattr -x user.round "$od/f$o.2" 2>/dev/null
		mv "$od/f$o.3" "$od/f$o.2" || return 1
	fi
	# an orphan with an xattr: unlinked while open, kept open for a while
	wr "$MNT/orph$r" 5000 "orphan$r" || return 1
	setfattr -n user.orphan -v "o$r" "$MNT/orph$r" || return 1
	if [ $((r % 2)) = 0 ]; then
		exec 4<&- 4<"$MNT/orph$r"
	else
		exec 5<&- 5<"$MNT/orph$r"
	fi
	rm "$MNT/orph$r" || return 1
	# hard link, truncation, symlink
	ln "$d/f$r.4" "$d/l$r" || return 1
	rm "$d/f$r.4" || return 1
	truncate -s $((r * 37 % 2000)) "$d/f$r.5" || return 1
	ln -sf "f$r.5" "$d/s$r" || return 1
	# commits: explicit every other round, and whenever the journal fills;
	# with BGWRITE=1 a writer fills the journal heads while the commit runs,
	# so new buds are referred to after the commit start node
	if [ $((r % 2)) = 1 ]; then
		if [ "${BGWRITE:-0}" = 1 ]; then
			rm -f "$MNT/bg$((r - 4))"
			wr "$MNT/bg$r" 300000 "bg$r" &
			bg=$!
			sync || return 1
			wait $bg || return 1
		else
			sync || return 1
		fi
	fi
	cut_seen && return 1
	return 0
}

for spec in $CUTS; do
	kind=${spec%%:*}
	n=${spec#*:}
	name=$(echo "$spec" | tr : -)
	dmesg -c >/dev/null
	ubiformat /dev/mtd0 -y -q >/dev/null 2>&1 || { echo "$name: ubiformat failed"; continue; }
	ubiattach -m 0 -d 0 >/dev/null || { echo "$name: attach failed"; continue; }
	ubimkvol /dev/ubi0 -N rootfs -m >/dev/null || { echo "$name: mkvol failed"; continue; }
	mount -t ubifs ${UBIFS_OPTS:+-o "$UBIFS_OPTS"} ubi0:rootfs "$MNT" || { echo "$name: mount failed"; continue; }
	mark "$name: armed"
	if [ "$kind" = ubi ]; then
		echo "$n" >$DBG/ubi/ubi0/tst_emulate_power_cut_min
		echo "$n" >$DBG/ubi/ubi0/tst_emulate_power_cut_max
		echo 2 >$DBG/ubi/ubi0/tst_emulate_power_cut
	else
		echo 1 >$DBG/ubifs/ubi0_0/tst_recovery
	fi
	r=0
	while [ $r -lt "$ROUNDS" ] && round $r; do r=$((r + 1)); done
	exec 4<&- 5<&-
	if ! cut_seen; then
		# the workload ended first: cut it here, as the earlier images were
		echo 1 >$DBG/ubifs/ubi0_0/ro_error
		how="no emulated cut within $ROUNDS rounds: ro_error"
	else
		how="cut in round $r"
	fi
	echo "$name: $how"
	umount "$MNT"
	ubidetach -m 0
	dmesg | grep -e UBI -e ubi0 -e vm_powercut >"$RESULTS/$name.log"
	nanddump -q -n --bb=dumpbad -f /tmp/dump.img /dev/mtd0 || { echo "$name: dump failed"; continue; }
	gzip -1 -c /tmp/dump.img >"$RESULTS/$name.img.gz"
	# the kernel's next mount of the dump
	dmesg -c >/dev/null
	ubiattach -m 0 -d 0 >/dev/null
	if mount -t ubifs ubi0:rootfs "$MNT" 2>/dev/null; then
		sh "$IN/ubifs_manifest.sh" "$MNT" >"$RESULTS/$name.manifest"
		umount "$MNT"
	else
		echo REFUSED >"$RESULTS/$name.manifest"
	fi
	dmesg | grep -e UBI -e ubi0 | sed 's/^/next mount: /' >>"$RESULTS/$name.log"
	ubidetach -m 0
	rm -f /tmp/dump.img
done
# leave a mounted UBIFS behind for the tool's own unmount and dump
ubiformat /dev/mtd0 -y -q >/dev/null 2>&1
ubiattach -m 0 -d 0 >/dev/null
ubimkvol /dev/ubi0 -N rootfs -m >/dev/null
mount -t ubifs ubi0:rootfs "$MNT"
exit 0
