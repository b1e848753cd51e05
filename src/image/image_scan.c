/* image_scan — find every UBI device in an image file: a dump of a whole
 * chip holds several one after another (each with its own image_seq), and
 * a UBI image may sit behind a vendor header at any byte offset.
 *
 * A device starts at an EC header ("UBI#" with a good CRC; searched at
 * every byte offset, holes of a sparse file skipped). Its PEB stride is the gcd
 * of the distances between its first headers (same image_seq and header
 * offsets). Then its PEBs are walked one stride at a time: a good EC header
 * of the same device or an erased header area goes on; a header of another
 * device, or anything else, ends it after its last PEB with a good header,
 * and the search for the next device goes on from there. Reads are bounded
 * by what the file holds, not by its size. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "image/image.h"
#include "ubi/ubi_media.h"
#include "util/util_endian.h"
#include "util/util_size.h"

#define SCAN_BUF (1u << 20)
#define STRIDE_HEADERS 16
/* How far past a device (data bytes, holes not counted) the next is looked for. */
#define GAP_LIMIT (256ull << 20)
/* Headers of one device are never further apart than this (a 32 MiB PEB). */
#define HDR_GAP_LIMIT (32ull << 20)

static int read_hdr(int fd, uint64_t off, uint8_t *h)
{
	ssize_t n = pread(fd, h, UBI_HDR_SIZE, (off_t)off);
	return n == UBI_HDR_SIZE ? 0 : -EIO;
}

/* Next good EC header at or after `from` (any byte offset), before `limit`
 * data bytes were read; returns its offset or UINT64_MAX. */
static uint64_t find_ec(int fd, uint64_t file_size, uint64_t from, uint64_t limit, uint8_t *buf,
			struct ubi_ec_hdr *eh)
{
	static const uint8_t magic[4] = {'U', 'B', 'I', '#'};
	uint64_t read_bytes = 0;
	uint64_t pos = from;
	while (pos + UBI_HDR_SIZE <= file_size && read_bytes < limit) {
		off_t d = lseek(fd, (off_t)pos, SEEK_DATA);
		if (d < 0)
			return UINT64_MAX; /* ENXIO: only a hole up to the end */
		if ((uint64_t)d > pos)
			pos = (uint64_t)d;
		size_t len = file_size - pos < SCAN_BUF ? (size_t)(file_size - pos) : SCAN_BUF;
		ssize_t n = pread(fd, buf, len, (off_t)pos);
		if (n < UBI_HDR_SIZE)
			return UINT64_MAX;
		read_bytes += (uint64_t)n;
		const uint8_t *p = buf, *end = buf + n - UBI_HDR_SIZE + 1;
		while (p < end && (p = memmem(p, (size_t)(end - p) + 3, magic, 4)) != NULL && p < end) {
			if (ubi_ec_hdr_unpack(p, eh) == UBI_HDR_OK)
				return pos + (uint64_t)(p - buf);
			p++;
		}
		/* the last bytes of a buffer start the next one */
		pos += (uint64_t)(n - UBI_HDR_SIZE + 1);
	}
	return UINT64_MAX;
}

static bool same_dev(const struct ubi_ec_hdr *a, const struct ubi_ec_hdr *b)
{
	return a->image_seq == b->image_seq && a->vid_hdr_offset == b->vid_hdr_offset &&
	       a->data_offset == b->data_offset;
}

static bool all_ff(const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (b[i] != 0xFF)
			return false;
	return true;
}

int image_scan_ubi_devs(int fd, uint64_t file_size, struct ubikit_image_ubi_dev *devs, int max)
{
	uint8_t *buf = malloc(SCAN_BUF);
	if (!buf)
		return -ENOMEM;
	int n = 0;
	uint64_t pos = 0;
	/* the first device must start within 64 MiB (as detection always had it) */
	uint64_t limit = 64ull << 20;
	while (n < max) {
		struct ubi_ec_hdr first, eh;
		uint64_t a = find_ec(fd, file_size, pos, limit, buf, &first);
		if (a == UINT64_MAX)
			break;
		limit = GAP_LIMIT;
		/* PEB stride: gcd of the distances to the next headers of this device */
		uint64_t stride = 0, at = a, last = a;
		for (int k = 0; k < STRIDE_HEADERS; k++) {
			/* headers are at least data_offset apart (> 64 bytes) */
			uint64_t b = find_ec(fd, file_size, at + first.data_offset, HDR_GAP_LIMIT, buf, &eh);
			if (b == UINT64_MAX || !same_dev(&first, &eh) || b - last > HDR_GAP_LIMIT)
				break;
			stride = util_gcd64(stride, b - a);
			last = at = b;
		}
		struct ubikit_image_ubi_dev *d = &devs[n];
		memset(d, 0, sizeof(*d));
		d->offset = a;
		d->image_seq = first.image_seq;
		d->vid_hdr_offset = first.vid_hdr_offset;
		d->data_offset = first.data_offset;
		d->ec_headers = 1;
		if (!stride || stride > UINT32_MAX || stride <= first.data_offset) {
			/* one header only: the device is the rest of the file */
			d->peb_stride = 0;
			d->size = file_size - a;
			n++;
			break;
		}
		d->peb_stride = (uint32_t)stride;
		/* walk the PEBs */
		uint64_t end = a + stride;
		uint8_t h[UBI_HDR_SIZE];
		for (uint64_t p = a + stride; p + UBI_HDR_SIZE <= file_size; p += stride) {
			if (read_hdr(fd, p, h))
				break;
			if (get_be32(h) == UBI_EC_HDR_MAGIC && ubi_ec_hdr_unpack(h, &eh) == UBI_HDR_OK) {
				if (!same_dev(&first, &eh)) {
					/* another device only if its next PEB is of it too: one
					 * odd header is a damaged PEB of this device */
					struct ubi_ec_hdr e2;
					uint8_t h2[UBI_HDR_SIZE];
					if (p + stride + UBI_HDR_SIZE > file_size || read_hdr(fd, p + stride, h2) ||
					    ubi_ec_hdr_unpack(h2, &e2) != UBI_HDR_OK || same_dev(&eh, &e2))
						break;
					continue;
				}
				d->ec_headers++;
				end = p + stride;
				continue;
			}
			if (!all_ff(h, sizeof(h))) {
				/* a hole (zeros) or other data: is there more of this
				 * device after it? (bad PEBs in a dump read as anything) */
				off_t dd = lseek(fd, (off_t)p, SEEK_DATA);
				if (dd < 0 || (uint64_t)dd > p + stride)
					break;
				if (ubi_ec_hdr_unpack(h, &eh) == UBI_HDR_BAD && get_be32(h) == UBI_EC_HDR_MAGIC)
					continue; /* a corrupt header of this device */
				/* look one PEB further: another good header of it goes on */
				uint8_t h2[UBI_HDR_SIZE];
				if (p + stride + UBI_HDR_SIZE > file_size || read_hdr(fd, p + stride, h2) ||
				    ubi_ec_hdr_unpack(h2, &eh) != UBI_HDR_OK || !same_dev(&first, &eh))
					break;
			}
		}
		if (end > file_size)
			end = file_size;
		d->size = end - a;
		pos = end;
		n++;
	}
	free(buf);
	return n;
}
