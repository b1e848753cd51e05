#!/bin/bash
# test_bench_fs — 'ubikit bench --short' runs BENCH.md's W1-W7 through the
# library on a 32 MiB simulated SLC NAND (2048-byte pages, no sub-pages).
# The records are checked against facts computed here from the workload
# definitions at the short scale (docs/bench.md) and from the device, not
# from ubikit's own output: user bytes of each phase, files and bytes the
# W4 walks see, write amplification = programmed / user, at least the user
# bytes programmed by each fsync or unmount (incompressible data), whole
# pages programmed, simulated time = the timing model applied
# to the counters, a cold read-all reads at least the file bytes from flash,
# every fsync of W7 programs at least one page. W5 may not complete yet
# (it needs garbage collection): then it must fail with ENOSPC in a failure
# record and on stderr with the bytes written before it, and exit 1; any
# other workload failing fails the test.
set -euo pipefail
S="$UBIKIT_SCRATCH"
rm -rf "$S"; mkdir -p "$S"
U="$UBIKIT"
. "$(dirname "$0")/../tools/test_lib.sh"
need mkfs.ubifs python3

run "$U" bench --short --size 32MiB --json all
[ "$T_RC" = 0 ] || [ "$T_RC" = 1 ] || fail "bench exited $T_RC: $(cat "$T_ERR")"
cp "$T_OUT" "$S/out.json"; cp "$T_ERR" "$S/err.txt"
echo "$T_RC" >"$S/rc"

python3 - "$S/out.json" "$S/err.txt" "$S/rc" <<'EOF' || fail "records do not match the definitions (above)"
import json, re, sys
out, err, rc = open(sys.argv[1]).read(), open(sys.argv[2]).read(), int(open(sys.argv[3]).read())
recs = [json.loads(l) for l in out.splitlines() if l.strip()]
KiB, MiB = 1024, 1 << 20
# The short scale of docs/bench.md, and the user bytes BENCH.md's definitions give.
w1 = 2 * 20 * 4096                 # 2 dirs x 20 files x 4096 B
w2 = 64 * 64 * KiB                 # 64 writes of 64 KiB
w5_fill, w5_total = 12 * MiB, 64 * MiB
want = {
    ("w1", "files+unmount"): w1,
    ("w2", "write+unmount"): w2,
    ("w3", "fill"): 16 * 64 * KiB,
    ("w3", "overwrite+unmount"): 512 * 4096,
    ("w4", "w1"): w1, ("w4", "w2"): w2, ("w4", "mount"): 0, ("w4", "list+stat"): 0,
    ("w4", "read-all"): 0, ("w4", "unmount"): 0, ("w4", "remounts"): 0,
    ("w5", "fill"): w5_fill,
    ("w5", "churn+unmount"): w5_total - w5_fill,
    ("w6", "create"): 0, ("w6", "stat"): 0, ("w6", "readdir"): 0, ("w6", "unmount"): 0,
    ("w7", "append+fsync"): 100 * 512, ("w7", "unmount"): 0,
}
bad = []
def check(cond, what):
    if not cond:
        bad.append(what)
seen = {(r["workload"], r["phase"]): r for r in recs}
totals = {}
failed = [r for r in recs if "error" in r]
for k in want:
    if k not in seen and not any(r["workload"] == k[0] for r in failed):
        bad.append("no record %s/%s" % k)
for r in recs:
    k = (r["workload"], r["phase"])
    name = "%s/%s" % k
    check(k in want, name + ": unexpected record")
    for key in ("cpu_s", "flash_bytes_read", "flash_bytes_programmed", "erases", "sim_time_s", "peak_rss_kib"):
        check(isinstance(r.get(key), (int, float)) and r[key] >= 0, name + ": " + key)
    ec = r["erase_count"]
    check(ec["min"] <= ec["mean"] <= ec["max"] and ec["stddev"] >= 0, name + ": erase_count")
    check(r["compressor"] == "lzo", name + ": compressor")
    d = r["device"]
    check((d["page_size"], d["subpage_size"], d["peb_size"], d["peb_count"]) == (2048, 2048, 131072, 256), name + ": device")
    # no sub-pages: every program is whole pages
    check(r["flash_bytes_programmed"] == 2048 * r["flash_pages_programmed"], name + ": bytes != pages x 2048")
    # the timing model: 25 us a page read, 200 us a page program, 1.5 ms an erase, 40 MB/s bus
    t = (25e-6 * r["flash_pages_read"] + 200e-6 * r["flash_pages_programmed"] + 1.5e-3 * r["erases"]
         + (r["flash_bytes_read"] + r["flash_bytes_programmed"]) / 40e6)
    check(abs(r["sim_time_s"] - t) < 1e-5 + 1e-6 * t, name + ": sim_time_s %s, timing model says %s" % (r["sim_time_s"], t))
    u = r["user_bytes"]
    if "error" in r:
        check(r.get("completed") is False and r["error"], name + ": failure record")
        # only W5 may fail today, and only for lack of space (no garbage collection yet)
        check(k[0] == "w5" and "No space left on device" in r["error"], name + ": failed: " + r["error"])
        check(u < want.get(k, 0) or want.get(k, 0) == 0, name + ": failed after all its bytes")
        check(re.search(r"ubikit bench: %s: %s failed: .*, after %d bytes of user data" % (k[0], re.escape(k[1]), u), err),
              name + ": no failure line on stderr with the bytes written")
        continue
    check(u == want.get(k), name + ": user_bytes %s, the definition gives %s" % (u, want.get(k)))
    # Data is on flash only at a durability point (fsync, unmount); with
    # write-back a phase that ends with close may leave it in memory, so
    # programmed >= user bytes is checked over the workload so far.
    cum = totals.setdefault(k[0], [0, 0])
    cum[0] += u
    cum[1] += r["flash_bytes_programmed"]
    # (W3's overwrites of one block between two fsyncs merge in the cache:
    # fewer bytes reach the flash than were written, so not checked there;
    # W5's churn deletes files whose data may never have left the cache)
    if re.search(r"unmount|fsync", k[1]) and cum[0] and k not in (("w3", "overwrite+unmount"), ("w5", "churn+unmount")):
        check(cum[1] >= cum[0], name + ": %d bytes programmed for %d bytes of incompressible user data" % (cum[1], cum[0]))
    if u:
        wa = r["write_amplification"]
        check(abs(wa - r["flash_bytes_programmed"] / u) < 1e-5, name + ": WA is not programmed / user")
    else:
        check(r["write_amplification"] is None, name + ": WA without user data")
# W4's walks see what W1 + W2 wrote; a cold read reads it all from flash.
ls, ra = seen.get(("w4", "list+stat")), seen.get(("w4", "read-all"))
if ls and "error" not in ls:
    check(ls["files"] == 41 and ls["directories"] == 3, "w4 list+stat counts")
if ra and "error" not in ra:
    check(ra["files"] == 41 and ra["file_bytes_read"] == w1 + w2, "w4 read-all counts")
    check(ra["flash_bytes_read"] >= w1 + w2, "w4 read-all read less from flash than the files hold")
m = seen.get(("w4", "remounts"))
if m and "error" not in m:
    check(m["mounts"] == 3 and abs(m["flash_bytes_read_per_mount"] * 3 - m["flash_bytes_read"]) < 2, "w4 remounts")
    check(m["flash_bytes_read"] > 0, "w4 remounts read nothing")
c = seen.get(("w5", "churn+unmount"))
if c and "error" not in c:
    check(c["iterations"] == (w5_total - w5_fill) // MiB, "w5 iterations")
for ph in ("create", "readdir"):
    r = seen.get(("w6", ph))
    if r and "error" not in r:
        check(r.get("files", r.get("entries")) == 200, "w6 " + ph + " count")
a = seen.get(("w7", "append+fsync"))
if a and "error" not in a:
    check(a["fsyncs"] == 100 and a["flash_pages_programmed"] >= 100, "w7: an fsync that programmed nothing")
    check(abs(a["pages_programmed_per_fsync"] * 100 - a["flash_pages_programmed"]) < 1e-6, "w7 per-fsync pages")
    check(abs(a["programs_per_fsync"] * 100 - a["flash_programs"]) < 1e-6, "w7 per-fsync programs")
check(rc == (1 if failed else 0), "exit status %d with %d failed records" % (rc, len(failed)))
for f in failed:
    print("note: %s/%s did not complete: %s" % (f["workload"], f["phase"], f["error"]))
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
EOF

# Table output, one workload, and an unknown one next to 'all'.
expect_ok "$U" bench --short --size 32MiB w7
grep -q "^w7 .*append+fsync" "$T_OUT" || fail "table: $(cat "$T_OUT")"
grep -q "pages_programmed_per_fsync = " "$T_OUT" || fail "table extras: $(cat "$T_OUT")"
expect_fail 2 "unknown workload 'w8'" "$U" bench --short all w8
expect_fail 2 "--subpage 300: not a sub-page size" "$U" bench --short --subpage 300 w7
expect_ok "$U" bench --short --size 32MiB --subpage 512 --json w2
grep -qF '"subpage_size": 512' "$T_OUT" || fail "--subpage 512: $(cat "$T_OUT")"
grep -qF '"user_bytes": 4194304' "$T_OUT" || fail "--subpage 512 w2: $(cat "$T_OUT")"
echo "test_bench_fs: all passed"
