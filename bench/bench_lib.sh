# bench_lib.sh — sourced by the bench scripts.
# real_tree DEST fills DEST with
# a fixed sample of real files as a Debian system has them (every 2nd file of
# /usr/share/doc, 8th of /usr/share/man, 4th of /usr/share/locale, all of
# /usr/lib/python3, every 2nd of /usr/lib/python3.X; sorted, so the sample is
# stable), about 10,000 files / 170 MiB. With SRCS set, those directories are
# copied whole instead. Sets REAL_TREE_DESC to say what was taken.
real_tree_sample() { # DEST DIR EVERY
	[ -d "$2" ] || return 0
	(cd / && find "${2#/}" -type f | LC_ALL=C sort | awk -v k="$3" 'NR % k == 0' |
		cpio -pdm --quiet "$1" 2>/dev/null) || true
}
real_tree() { # DEST
	mkdir -p "$1"
	if [ -n "${SRCS:-}" ]; then
		for d in $SRCS; do
			[ -d "$d" ] && cp -a "$d" "$1/$(echo "$d" | tr / _)"
		done
		REAL_TREE_DESC="$SRCS"
		return 0
	fi
	real_tree_sample "$1" /usr/share/doc 2
	real_tree_sample "$1" /usr/share/man 8
	real_tree_sample "$1" /usr/share/locale 4
	real_tree_sample "$1" /usr/lib/python3 1
	for d in /usr/lib/python3.[0-9]*; do real_tree_sample "$1" "$d" 2; done
	REAL_TREE_DESC="every 2nd file of /usr/share/doc, 8th of /usr/share/man, 4th of /usr/share/locale, all of /usr/lib/python3, every 2nd of $(echo /usr/lib/python3.[0-9]*)"
}

# best_of LABEL COMMAND...: runs COMMAND $RUNS times (its output to $W/out.log
# and $W/err), prints LABEL with the best wall time, that run's CPU time
# (user + sys) and the load average then; sets BEST_WALL and BEST_CPU.
best_of() {
	local label=$1 best="" cpu="" load=""
	shift
	for _ in $(seq 1 "$RUNS"); do
		[ -z "${BEFORE_EACH:-}" ] || eval "$BEFORE_EACH"
		/usr/bin/time -f '%e %U %S' -o "$W/time" "$@" >"$W/out.log" 2>"$W/err" || { cat "$W/err"; exit 1; }
		read -r e u s <"$W/time"
		if [ -z "$best" ] || awk "BEGIN{exit !($e < $best)}"; then
			best=$e cpu=$(awk "BEGIN{print $u + $s}") load=$(cut -d' ' -f1 /proc/loadavg)
		fi
	done
	BEST_WALL=$best BEST_CPU=$cpu
	printf '%-36s %7.2f s wall %7.2f s CPU (load %s)' "$label" "$best" "$cpu" "$load"
}
