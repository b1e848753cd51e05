#!/usr/bin/env python3
"""fsx_lite.py FILE REFERENCE SEED OPS [MAXLEN] — fsx-style random I/O:
the same seeded sequence of writes, truncates (grow and shrink), reads,
fsyncs and close/reopen on FILE (through the file system under test) and
on REFERENCE (a host file); every read and, at the end, the whole file
and its size must be the same. Prints the first difference (operation
number, offset) and exits 1 on a mismatch."""
import os
import random
import sys


def main():
    path, ref, seed, ops = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    maxlen = int(sys.argv[5]) if len(sys.argv) > 5 else 1 << 20
    rnd = random.Random(seed)
    fds = [os.open(p, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644) for p in (path, ref)]
    size = 0
    log = []
    for n in range(ops):
        r = rnd.random()
        if r < 0.45:  # write
            off = rnd.randrange(0, maxlen)
            ln = rnd.choice((1, 7, 512, 4095, 4096, 4097, rnd.randrange(1, 65536)))
            ln = min(ln, maxlen - off) or 1
            data = bytes(rnd.getrandbits(8) for _ in range(min(ln, 64))) * (ln // 64 + 1)
            data = data[:ln]
            for fd in fds:
                if os.pwrite(fd, data, off) != ln:
                    sys.exit(f"op {n}: short write")
            size = max(size, off + ln)
            log.append(f"{n} write {off} {ln}")
        elif r < 0.60:  # truncate
            ns = rnd.randrange(0, maxlen)
            for fd in fds:
                os.ftruncate(fd, ns)
            size = ns
            log.append(f"{n} truncate {ns}")
        elif r < 0.90:  # read
            off = rnd.randrange(0, max(size, 1) + 4096)
            ln = rnd.randrange(1, 70000)
            a, b = (os.pread(fd, ln, off) for fd in fds)
            if a != b:
                i = next((k for k in range(min(len(a), len(b))) if a[k] != b[k]), min(len(a), len(b)))
                print("\n".join(log[-20:]), file=sys.stderr)
                sys.exit(f"op {n}: read of {ln} at {off} differs at byte {off + i} "
                         f"(got {len(a)} bytes, expected {len(b)})")
            log.append(f"{n} read {off} {ln}")
        elif r < 0.95:  # fsync
            for fd in fds:
                os.fsync(fd)
            log.append(f"{n} fsync")
        else:  # close and reopen: what the kernel caches is dropped too
            for fd in fds:
                os.close(fd)
            fds = [os.open(p, os.O_RDWR) for p in (path, ref)]
            log.append(f"{n} reopen")
    for fd in fds:
        os.close(fd)
    if os.path.getsize(path) != os.path.getsize(ref):
        sys.exit(f"final size {os.path.getsize(path)}, expected {os.path.getsize(ref)}")
    with open(path, "rb") as f, open(ref, "rb") as g:
        if f.read() != g.read():
            sys.exit("final contents differ")
    print(f"fsx_lite: {ops} operations, seed {seed}, final size {size}: same")


if __name__ == "__main__":
    main()
