#!/bin/bash
# 'ubikit ubi' volume commands on a simulator flash: mkvol (-s/-S/-m, static,
# alignment, explicit and automatic IDs), update (file, stdin with -S, -t),
# rsvol, rename (several pairs at once), rmvol, read, info (text and JSON);
# and clear errors for bad arguments, missing volumes and missing geometry.
set -euo pipefail
: "${UBIKIT:?}" "${UBIKIT_SCRATCH:?}"
. "$(dirname "$0")/test_lib.sh"
T_SOFT=1
need python3
rm -rf "$UBIKIT_SCRATCH"; mkdir -p "$UBIKIT_SCRATCH"; cd "$UBIKIT_SCRATCH"
U() { "$UBIKIT" ubi "$@"; }
jq_() { python3 -c "import json,sys; d=json.load(open('info.json')); v={x['name']: x for x in d['volumes']}; print($1)"; }

"$UBIKIT" flash create f.img --size 16MiB --page 2048 --subpage 512 --peb 128KiB >/dev/null
"$UBIKIT" format f.img -q -Q 5
python3 -c "import random; r=random.Random(8); open('a.bin','wb').write(bytes(r.getrandbits(8) for _ in range(200000)))"
LEB=129024

U mkvol f.img -N alpha -s 300KiB >/dev/null                 # 3 LEBs, ID 0
U mkvol f.img -N beta -S 2 -t static -n 7 >/dev/null        # ID 7
U mkvol f.img -N gamma -S 1 -a 4096 >/dev/null              # ID 1, aligned
U mkvol f.img -N rest -m >/dev/null                         # all that is left
U info f.img --json > info.json
[ "$(jq_ "v['alpha']['reserved_lebs'], v['alpha']['vol_id'], v['beta']['vol_id'], v['beta']['type'], v['gamma']['vol_id'], v['gamma']['alignment'], v['gamma']['usable_leb_size']")" = \
  "3 0 7 static 1 4096 $((LEB / 4096 * 4096))" ] || fail "mkvol results: $(cat info.json)"
[ "$(jq_ "d['avail_pebs']")" = 0 ] || fail "mkvol -m left PEBs available: $(jq_ "d['avail_pebs']")"
U info f.img | grep -q "Name: *rest" || fail "text info lacks volume 'rest'"

U update f.img -N alpha a.bin
U update f.img -n 7 - -s 200000 < a.bin
U read f.img -N beta -o beta.bin
cmp -s beta.bin a.bin || fail "static volume read back differs"
U read f.img -n 0 > alpha.bin
cmp -s <(head -c 200000 alpha.bin) a.bin || fail "dynamic volume read back differs"
[ "$(stat -c %s alpha.bin)" = $((3 * LEB)) ] || fail "dynamic volume read size $(stat -c %s alpha.bin)"
U info f.img --json > info.json
[ "$(jq_ "v['beta']['used_bytes']")" = 200000 ] || fail "static used_bytes"

U rmvol f.img -N rest
U rsvol f.img -N alpha -S 5
U rsvol f.img -n 0 -s 200KiB                                  # shrink to 2 LEBs
U rename f.img alpha one beta two
U info f.img --json > info.json
[ "$(jq_ "sorted(v), v['one']['reserved_lebs'], v['two']['vol_id']")" = "['gamma', 'one', 'two'] 2 7" ] \
  || fail "after rsvol/rename: $(cat info.json)"
U read f.img -N one -o one.bin
cmp -s <(head -c 200000 one.bin) a.bin || fail "data lost by rsvol/rename"
U update f.img -N one -t
U read f.img -N one | python3 -c "import sys; d=sys.stdin.buffer.read(); sys.exit(0 if d == b'\xff'*len(d) and d else 1)" \
  || fail "update -t did not wipe the volume"

# Errors: the exact exit status (1 failure, 2 usage) and a message naming the problem.
expect_err() { local rc=$1 re=$2; shift 2; expect_fail "$rc" "$re" "$UBIKIT" ubi "$@"; }
expect_err 1 "no volume named" rmvol f.img -N nope
expect_err 1 "no volume with ID" read f.img -n 99
expect_err 2 "name was not given" mkvol f.img -S 1
expect_err 2 "exactly one of" mkvol f.img -N x
expect_err 1 'volume "one" already exists' mkvol f.img -N one -S 1
expect_err 1 'not enough PEBs: 100000 requested' mkvol f.img -N huge -S 100000
expect_err 1 "does not fit" update f.img -N gamma a.bin
expect_err 2 "needs -s" update f.img -N gamma -
expect_err 2 "OLD NEW" rename f.img one
expect_err 2 "unknown command" frob f.img
expect_err 2 "flash image was not given" info
expect_err 2 "bad value" mkvol f.img -N z -t weird -S 1
expect_err 1 'cannot open flash image "no-such.img": No such file' info no-such.img
python3 -c "open('raw.bin','wb').write(b'\xff'*(1<<20))"
expect_err 1 "cannot detect the geometry" info raw.bin
expect_err 1 "--peb is needed" info raw.bin --page 2048
expect_err 1 "not a non-zero multiple" info raw.bin --page 2048 --peb 3MiB
expect_err 1 "contradict the sidecar" info f.img --peb 256KiB
[ -e raw.bin.sim ] && fail "a failed read-only command created a sidecar"

finish ubi_cli
cd / && rm -rf "$UBIKIT_SCRATCH"   # large images: keep them only after a failure
