#!/usr/bin/env bash
# gen_man.sh UBIKIT OUTDIR VERSION — man pages ubikit(1) and
# ubikit-COMMAND(1) made from `ubikit --help` and `ubikit COMMAND --help`
# (the help text is the reference; the page shows it verbatim). Run by the
# build (cmake/ubikit_lib.cmake); pages land in OUTDIR.
set -euo pipefail
ubikit=$1 out=$2 version=$3
mkdir -p "$out"
# A sanitizer build's tool must not fail the build on a report at exit.
export ASAN_OPTIONS=detect_leaks=0
date=$(date -u -d "@${SOURCE_DATE_EPOCH:-$(date +%s)}" +%Y-%m-%d)

# troff-safe text: backslashes doubled, a leading . or ' made literal.
esc() { sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"; }

# The command list: the lines "  NAME  summary" after "commands:".
mapfile -t cmds < <("$ubikit" --help | awk '/^commands:/{on=1;next} on && /^  [a-z]/{print $1}')
[ ${#cmds[@]} -gt 0 ] || { echo "gen_man.sh: no commands in '$ubikit --help'" >&2; exit 1; }

page() { # NAME SECTION-TITLE SUMMARY HELP-CMD...
	local name=$1 summary=$2
	shift 2
	local help
	help=$("$@" 2>&1) || true
	[ -n "$help" ] || { echo "gen_man.sh: '$*' printed nothing" >&2; exit 1; }
	{
		printf '.TH %s 1 "%s" "ubikit %s" "ubikit manual"\n' "$(echo "$name" | tr a-z A-Z)" "$date" "$version"
		printf '.SH NAME\n%s \\- %s\n' "$name" "$(printf '%s' "$summary" | esc)"
		printf '.SH DESCRIPTION\n.nf\n'
		printf '%s\n' "$help" | esc
		printf '.fi\n'
		if [ "$name" = ubikit ]; then
			printf '.SH SEE ALSO\n'
			local sep=
			for c in "${cmds[@]}"; do
				printf '%s.BR ubikit-%s (1)' "$sep" "$c"
				sep=$',\n'
			done
			printf '\n'
		else
			printf '.SH SEE ALSO\n.BR ubikit (1)\n'
		fi
		printf '.SH VERSION\nubikit %s\n' "$version"
	} >"$out/$name.1.tmp"
	mv "$out/$name.1.tmp" "$out/$name.1"
}

for c in "${cmds[@]}"; do
	summary=$("$ubikit" --help | awk -v c="$c" '$1 == c { $1 = ""; sub(/^ +/, ""); print; exit }')
	page "ubikit-$c" "$summary" "$ubikit" "$c" --help
done
# last: the build's output file (its date says the set is complete)
page ubikit "UBI and UBIFS, the Linux flash stack, in user space" "$ubikit" --help
