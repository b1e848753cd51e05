#!/usr/bin/env python3
"""make_hmac_image.py — turn an authenticated mkfs.ubifs image (make_images.sh:
auth-sha256.ubi) into what the kernel (CONFIG_UBIFS_FS_AUTHENTICATION, mounted
with auth_key=<logon key holding KEY>, auth_hash_name=sha256) leaves after a
read-write mount that wrote to the journal and lost power before a commit.
Independent of ubikit: Python's hashlib/hmac and the kernel's rules as read in
fs/ubifs/auth.c, sb.c, master.c, log.c, journal.c, replay.c (the VM kernel has
no CONFIG_UBIFS_FS_AUTHENTICATION, so it cannot make one).

What the kernel writes, and what is done here:
- superblock (sb.c ubifs_write_sb_node, as at its first read-write mount:
  space fixup done, LEB count grown to the volume's): hmac_wkm = HMAC of the
  5 bytes "UBIFS"; hmac = HMAC over the node's bytes 8..127 and, after the
  digest-size bytes of the hmac field at 128, bytes 128+32..4095 (the rest
  of the 64-byte field, zeros, included); written alone into LEB 0 (the
  mkfs signature node after it is gone).
- master node (master.c, both copies): hmac at 296 likewise over the 512
  bytes; flags dirty (the mount before the power cut).
- log (log.c): the commit start node stays; a reference node for the bud
  (LEB BUD, offset 0, data head 2) after it, padded to the min. I/O unit.
- bud (journal.c write_head / ubifs_hash_nodes / ubifs_prepare_auth_node):
  the bud's running hash starts as the log hash (commit start node, then the
  reference node: replay.c replay_log_leb / add_replay_bud); each write of
  nodes goes into it (each node's len bytes, not the 8-byte alignment), and
  is followed by an authentication node whose HMAC is HMAC(key, hash of the
  state so far); the running hash is not reset. Writes here: data node of
  block 0, auth node; block 1, auth node; block 2 with no auth node (a power
  cut between the two: replay.c authenticate_sleb drops it, this being the
  last bud of its head).
Data nodes rewrite blocks 0..2 of /d/big.bin with block_bytes(i) below,
uncompressed.

usage: make_hmac_image.py IN.ubi KEYFILE OUT.ubi
"""
import hashlib
import hmac
import struct
import sys
import zlib

MAGIC = 0x06101831
PEB, VID_OFF, DATA_OFF, MIN_IO = 131072, 512, 2048, 2048
LEB = PEB - DATA_OFF
HASH = 'sha256'
HLEN = 32
BUD = 13  # first LEB after the mkfs image's 13: unmapped, empty
DATAHD = 2


def block_bytes(i):
    line = b'written to the journal, block %d\n' % i
    return (line * (4096 // len(line) + 1))[:4096]


def crc(b):
    return zlib.crc32(b) ^ 0xffffffff  # UBI/UBIFS: CRC-32 without the final inversion


def ch_fix(node, sqnum=None):
    if sqnum is not None:
        struct.pack_into('<Q', node, 8, sqnum)
    struct.pack_into('<I', node, 4, crc(bytes(node[8:struct.unpack_from('<I', node, 16)[0]])))


def new_node(ntype, length, sqnum):
    n = bytearray(length)
    struct.pack_into('<IIQIBB', n, 0, MAGIC, 0, sqnum, length, ntype, 0)
    return n


def node_hmac(key, node, length, ofs):
    m = hmac.new(key, digestmod=HASH)
    m.update(bytes(node[8:ofs]))
    m.update(bytes(node[ofs + HLEN:length]))
    return m.digest()


def pad_to(buf, off, end):
    """padding node (or 0xCE bytes when under 28) from off to end, as ubifs_pad"""
    gap = end - off
    if gap <= 0:
        return
    if gap >= 28:
        p = new_node(5, 28, 0)
        struct.pack_into('<I', p, 24, gap - 28)
        ch_fix(p)
        buf[off:off + 28] = p
        buf[off + 28:end] = bytes(gap - 28)
    else:
        buf[off:end] = b'\xce' * gap


def main():
    img = bytearray(open(sys.argv[1], 'rb').read())
    key = open(sys.argv[2], 'rb').read()
    lebs = {}
    max_vsq = 0
    for p in range(len(img) // PEB):
        o = p * PEB
        if img[o + VID_OFF:o + VID_OFF + 4] == b'UBI!':
            vol, lnum = struct.unpack_from('>II', img, o + VID_OFF + 8)
            max_vsq = max(max_vsq, struct.unpack_from('>Q', img, o + VID_OFF + 40)[0])
            if vol == 0:
                lebs[lnum] = o + DATA_OFF
    assert BUD not in lebs

    def leb(n):
        return lebs[n]

    # the dent of d/big.bin gives its inode number
    inum = None
    for n, o in lebs.items():
        i = o
        while i < o + LEB - 56:
            if struct.unpack_from('<I', img, i)[0] == MAGIC and img[i + 20] == 2:
                nlen = struct.unpack_from('<H', img, i + 50)[0]
                if img[i + 56:i + 56 + nlen] == b'big.bin':
                    inum = struct.unpack_from('<Q', img, i + 40)[0]
            i += 8
    assert inum, 'no big.bin'

    # superblock
    s0 = leb(0)
    sb = bytearray(img[s0:s0 + 4096])
    assert sb[20] == 6 and struct.unpack_from('<H', sb, 256)[0] == 4  # sha256
    flags = struct.unpack_from('<I', sb, 28)[0]
    struct.pack_into('<I', sb, 28, flags & ~0x4)  # space fixup done
    struct.pack_into('<I', sb, 40, 98)  # grown to the volume
    sb[128:256] = bytes(128)
    sb[192:192 + HLEN] = hmac.new(key, b'UBIFS', HASH).digest()
    sb[128:128 + HLEN] = node_hmac(key, sb, 4096, 128)
    ch_fix(sb)
    img[s0:s0 + LEB] = sb + b'\xff' * (LEB - 4096)

    # sequence numbers after everything on flash
    sq = 0
    for o in lebs.values():
        for i in range(o, o + LEB - 24, 8):
            if struct.unpack_from('<I', img, i)[0] == MAGIC:
                sq = max(sq, struct.unpack_from('<Q', img, i + 8)[0])
    mst_sq, ref_sq = sq + 1, sq + 2

    # master node, both copies
    m1 = leb(1)
    mst = bytearray(img[m1:m1 + 512])
    assert mst[20] == 7
    log_lnum = struct.unpack_from('<I', mst, 44)[0]
    struct.pack_into('<I', mst, 40, struct.unpack_from('<I', mst, 40)[0] | 1)  # dirty
    struct.pack_into('<Q', mst, 8, mst_sq)
    mst[296:360] = bytes(64)
    mst[296:296 + HLEN] = node_hmac(key, mst, 512, 296)
    ch_fix(mst)
    for n in (1, 2):
        img[leb(n):leb(n) + 512] = mst

    # log: reference node after the commit start node
    lo = leb(log_lnum)
    cs = bytes(img[lo:lo + 32])
    assert cs[20] == 10 and img[lo + MIN_IO:lo + 2 * MIN_IO] == b'\xff' * MIN_IO
    ref = new_node(8, 64, ref_sq)
    struct.pack_into('<III', ref, 24, BUD, 0, DATAHD)
    ch_fix(ref)
    logbuf = bytearray(MIN_IO)
    logbuf[0:64] = ref
    pad_to(logbuf, 64, MIN_IO)
    img[lo + MIN_IO:lo + 2 * MIN_IO] = logbuf
    log_hash = hashlib.new(HASH)
    log_hash.update(cs)
    log_hash.update(bytes(ref))

    # the bud: its hash starts as the log's
    h = log_hash.copy()
    bud = bytearray(b'\xff' * LEB)
    off = 0
    sqn = ref_sq
    for blk, with_auth in ((0, True), (1, True), (2, False)):
        sqn += 1
        dn = new_node(1, 48 + 4096, sqn)
        struct.pack_into('<II', dn, 24, inum, (1 << 29) | blk)  # data key
        struct.pack_into('<IHH', dn, 40, 4096, 0, 0)  # size, no compression
        dn[48:] = block_bytes(blk)
        ch_fix(dn)
        bud[off:off + len(dn)] = dn
        h.update(bytes(dn))
        off += (len(dn) + 7) & ~7
        if with_auth:
            sqn += 1
            au = new_node(12, 24 + HLEN, sqn)
            au[24:] = hmac.new(key, h.copy().digest(), HASH).digest()
            ch_fix(au)
            bud[off:off + len(au)] = au
            off += (len(au) + 7) & ~7
    end = (off + MIN_IO - 1) // MIN_IO * MIN_IO
    pad_to(bud, off, end)

    # a new PEB for the bud: EC header as PEB 0's, VID header for LEB BUD
    peb = bytearray(b'\xff' * PEB)
    peb[0:64] = img[0:64]
    vid = None
    for o in range(0, len(img), PEB):
        if img[o + VID_OFF:o + VID_OFF + 4] == b'UBI!' and struct.unpack_from('>I', img, o + VID_OFF + 8)[0] == 0:
            vid = bytearray(img[o + VID_OFF:o + VID_OFF + 64])
            break
    struct.pack_into('>I', vid, 12, BUD)
    struct.pack_into('>Q', vid, 40, max_vsq + 1)
    struct.pack_into('>I', vid, 60, crc(bytes(vid[:60])))
    peb[VID_OFF:VID_OFF + 64] = vid
    peb[DATA_OFF:] = bud
    img += peb
    open(sys.argv[3], 'wb').write(img)


if __name__ == '__main__':
    main()
