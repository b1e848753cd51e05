/* fuzz_image_decode — the input format shared by the UBIFS fuzz targets:
 * a bare UBIFS image, or "UBFZ" then records (le16 lnum, le16 length, bytes)
 * giving the start of each non-empty LEB (the rest of a LEB is 0xFF; the LEB
 * size comes from the superblock in LEB 0), so that seeds stay small. */
#ifndef UBIKIT_FUZZ_IMAGE_DECODE_H
#define UBIKIT_FUZZ_IMAGE_DECODE_H
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_IMG = 8 << 20 };

static uint8_t *decode(const uint8_t *d, size_t n, size_t *out_len)
{
	if (n < 4 || memcmp(d, "UBFZ", 4)) {
		uint8_t *b = malloc(n ? n : 1);
		if (b)
			memcpy(b, d, n);
		*out_len = n;
		return b;
	}
	/* first record must be LEB 0 with the superblock: LEB size at byte 36 */
	if (n < 8 + 40)
		return NULL;
	uint32_t leb = d[8 + 36] | (d[8 + 37] << 8) | (d[8 + 38] << 16) | ((uint32_t)d[8 + 39] << 24);
	if (leb < 4096 || leb > (1u << 20))
		return NULL;
	size_t cap = 0, pos = 4;
	uint8_t *img = NULL;
	while (pos + 4 <= n) {
		uint32_t lnum = d[pos] | (d[pos + 1] << 8), len = d[pos + 2] | (d[pos + 3] << 8);
		pos += 4;
		if (len > n - pos)
			len = (uint32_t)(n - pos);
		if (len > leb)
			len = leb;
		size_t end = (size_t)(lnum + 1) * leb;
		if (end > MAX_IMG)
			break;
		if (end > cap) {
			uint8_t *ni = realloc(img, end);
			if (!ni)
				break;
			memset(ni + cap, 0xFF, end - cap);
			img = ni;
			cap = end;
		}
		memcpy(img + (size_t)lnum * leb, d + pos, len);
		pos += len;
	}
	*out_len = cap;
	return img;
}

#endif
