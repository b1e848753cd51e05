#!/usr/bin/env python3
"""safe_patch.py — make hostile but valid UBIFS images for the issue-8 tests,
independently of ubikit: find nodes by their common header in an image made
by mkfs.ubifs (bare, or inside ubinize output: nodes are 8-byte aligned in
any case), change a field, and recompute the node CRC (CRC-32 over the node
from byte 8, the kernel's crc32_le seeded with ~0, no final inversion).

  safe_patch.py inode-size IMG OLD NEW   inode nodes of size OLD get size NEW
  safe_patch.py dent-name IMG OLD NEW    entries named OLD (directory and
                                         readdir-index entries) get name NEW
                                         (same length; NEW may hold \\x00
                                         written as the two characters \\0)
  safe_patch.py data-size IMG OLD NEW    data nodes holding OLD bytes claim NEW
Prints how many nodes were changed; exits 1 if none.
"""
import struct
import sys
import zlib

MAGIC = struct.pack("<I", 0x06101831)
INO, DENT, XENT = 0, 2, 3


def nodes(img):
    pos = 0
    while True:
        pos = img.find(MAGIC, pos)
        if pos < 0:
            return
        if pos % 8 == 0 and pos + 24 <= len(img):
            ln = struct.unpack_from("<I", img, pos + 16)[0]
            if 24 <= ln <= 1 << 20 and pos + ln <= len(img):
                crc = struct.unpack_from("<I", img, pos + 4)[0]
                if crc == zlib.crc32(bytes(img[pos + 8:pos + ln])) ^ 0xFFFFFFFF:
                    yield pos, img[pos + 20], ln
        pos += 8


def fix_crc(img, pos, ln):
    struct.pack_into("<I", img, pos + 4, zlib.crc32(bytes(img[pos + 8:pos + ln])) ^ 0xFFFFFFFF)


def main():
    what, path, old, new = sys.argv[1:5]
    img = bytearray(open(path, "rb").read())
    n = 0
    for pos, typ, ln in list(nodes(img)):
        if what == "inode-size" and typ == INO:
            if struct.unpack_from("<Q", img, pos + 48)[0] == int(old, 0):
                struct.pack_into("<Q", img, pos + 48, int(new, 0))
                fix_crc(img, pos, ln)
                n += 1
        elif what == "dent-name" and typ == DENT:
            nlen = struct.unpack_from("<H", img, pos + 50)[0]
            name = bytes(img[pos + 56:pos + 56 + nlen])
            o = old.encode().replace(b"\\0", b"\0")
            w = new.encode().replace(b"\\0", b"\0")
            if name == o and len(w) == len(o):
                img[pos + 56:pos + 56 + nlen] = w
                fix_crc(img, pos, ln)
                n += 1
        elif what == "data-size" and typ == 1:
            if struct.unpack_from("<I", img, pos + 40)[0] == int(old, 0):
                struct.pack_into("<I", img, pos + 40, int(new, 0))
                fix_crc(img, pos, ln)
                n += 1
    if not n:
        sys.exit("safe_patch.py: no matching node in " + path)
    open(path, "wb").write(img)
    print(n)


main()
