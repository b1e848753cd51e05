# ubifs_lib.sh — shared helpers of the UBIFS read-tool tests (sourced).
# make_tree DIR [big]    a tree with every file type, a sparse file, a
#                        directory of 10000 entries, and (with "big") a
#                        100 MiB file
# manifest DIR           one line per entry: path, type, mode, size, link
#                        group, target or rdev or md5, mtime (seconds)
# compare_trees A B WHAT fail with a diff if the manifests differ
# (fail, skip, run, expect_ok, expect_fail: tests/tools/test_lib.sh)

: "${UBIKIT:?UBIKIT must point to the ubikit binary}"
. "$(dirname "${BASH_SOURCE[0]}")/test_lib.sh"

make_tree() {
	local d=$1 big=${2:-}
	mkdir -p "$d"
	(
		set -e
		cd "$d"
		printf 'hello\n' >hello.txt
		: >empty
		head -c 4095 /dev/urandom >f4095
		head -c 4096 /dev/urandom >f4096
		head -c 4097 /dev/urandom >f4097
		head -c 300000 /dev/urandom >random.bin
		for i in $(seq 1 3000); do echo "line $i of a compressible text file"; done >text.txt
		mkdir -p sub/deeper/deepest
		printf 'deep\n' >sub/deeper/deepest/file
		chmod 0600 hello.txt
		chmod 0755 f4095
		chmod 04755 f4096
		chmod 02711 f4097
		mkdir sticky && chmod 01777 sticky
		mkdir ro && printf 'x' >ro/inside && chmod 0555 ro
		ln -s hello.txt link.rel
		ln -s /nonexistent/absolute/target link.abs
		ln -s "$(printf 'x%.0s' $(seq 1 1000))" link.long
		ln -s sub/deeper link.dir
		ln hello.txt hard1
		ln hello.txt sub/hard2
		ln random.bin sub/deeper/hard3
		mkfifo fifo
		if [ "$(id -u)" = 0 ]; then
			mknod chardev c 1 3
			mknod blockdev b 7 42
			ln chardev chardev.hard
			chown 1234:5678 f4095
			chown -h 42:43 link.rel
			chown 1000:1000 sticky
		fi
		printf 'space name\n' >'name with spaces'
		printf 'utf8\n' >'été ünïcødé'
		printf 'long\n' >"$(printf 'n%.0s' $(seq 1 255))"
		# sparse: holes at the start, in the middle and at the end
		truncate -s 8M sparse.bin
		printf 'in the middle' | dd of=sparse.bin bs=1 seek=3000000 conv=notrunc 2>/dev/null
		head -c 10000 /dev/urandom | dd of=sparse.bin bs=4096 seek=1000 conv=notrunc 2>/dev/null
		mkdir many
		(cd many && seq -f 'entry%05g' 0 9999 | xargs touch)
		for i in 0 1 2 3 4 5 6 7 8 9; do printf '%s\n' "$i" >"many/entry0000$i"; done
		if [ -n "$big" ]; then
			head -c 100M /dev/urandom >big.bin
		fi
		# fixed, distinct times (directories last: creating entries changes them)
		touch -h -d '2021-02-03 04:05:06' link.rel link.abs
		touch -d '2020-01-02 03:04:05' hello.txt random.bin text.txt
		touch -d '2019-05-06 07:08:09' sub/deeper/deepest/file
		find . -type d | sort -r | while read -r x; do touch -d '2022-03-04 05:06:07' "$x"; done
	)
}

# Per entry: path, type, perms, size, hard-link group, md5/target/rdev, mtime.
manifest() {
	local d=$1
	(
		cd "$d"
		export LC_ALL=C
		find . -mindepth 1 ! -type d -printf '%i\t%P\n' | sort -t$'\t' -k2 | awk -F'\t' '
			{ if (!($1 in first)) first[$1]=$2; print $2 "\t" first[$1] }' | sort >"$TMPDIR_M/groups.$$"
		find . -mindepth 1 -type f -printf '%P\0' | sort -z | xargs -0 -r md5sum | \
			awk '{ h=$1; sub(/^[^ ]+  /, ""); print $0 "\t" h }' | sort >"$TMPDIR_M/md5.$$"
		find . -mindepth 1 \( -type c -o -type b \) -printf '%P\0' | xargs -0 -r stat -c '%n	%t:%T' | \
			sort >"$TMPDIR_M/dev.$$"
		find . -mindepth 1 -printf '%P\t%y\t%m:%U:%G\t%s\t%Ts\t%l\n' | sort | \
			awk -F'\t' -v G="$TMPDIR_M/groups.$$" -v M="$TMPDIR_M/md5.$$" -v D="$TMPDIR_M/dev.$$" '
			BEGIN {
				while ((getline l < G) > 0) { split(l, a, "\t"); grp[a[1]] = a[2] }
				while ((getline l < M) > 0) { n = split(l, a, "\t"); md5[a[1]] = a[2] }
				while ((getline l < D) > 0) { split(l, a, "\t"); dev[a[1]] = a[2] }
			}
			{
				p=$1; y=$2; m=$3; s=$4; t=$5; l=$6; g=(p in grp) ? grp[p] : "-"
				if (y == "f") x = md5[p]
				else if (y == "l") { x = l; s = "-" }
				else if (y == "c" || y == "b") { x = dev[p]; s = "-" }
				else { x = "-"; s = "-" }
				if (y == "d") g = "-"
				print p "\t" y "\t" m "\t" s "\t" g "\t" x "\t" t
			}'
		rm -f "$TMPDIR_M/groups.$$" "$TMPDIR_M/md5.$$" "$TMPDIR_M/dev.$$"
	)
}

compare_trees() {
	local a=$1 b=$2 what=$3
	TMPDIR_M=${TMPDIR_M:-${UBIKIT_SCRATCH:-/tmp}}
	# the source tree does not change: its manifest is made once
	local key
	key=$(printf '%s' "$a" | md5sum | cut -c1-16)
	[ -s "$TMPDIR_M/m.expected.$key" ] || manifest "$a" >"$TMPDIR_M/m.expected.$key"
	cp "$TMPDIR_M/m.expected.$key" "$TMPDIR_M/m.expected"
	manifest "$b" >"$TMPDIR_M/m.actual"
	if ! diff -u "$TMPDIR_M/m.expected" "$TMPDIR_M/m.actual" >"$TMPDIR_M/m.diff"; then
		head -40 "$TMPDIR_M/m.diff" >&2
		fail "$what: extracted tree differs from the source ($(grep -c '^[-+][^-+]' "$TMPDIR_M/m.diff") lines)"
	fi
	# the root directory's own mode and mtime too
	[ "$(stat -c '%a %Y' "$a")" = "$(stat -c '%a %Y' "$b")" ] ||
		fail "$what: root directory mode/mtime differ: $(stat -c '%a %Y' "$a") vs $(stat -c '%a %Y' "$b")"
}
