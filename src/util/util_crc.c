/* util_crc — CRC-32 through libdeflate (carry-less multiply where the CPU
 * has it: several times zlib's speed, and every node read is checked) or
 * zlib, CRC-16 by table (see util_crc.h). */
#include "util/util_crc.h"

#ifdef UBIKIT_HAVE_LIBDEFLATE
#include <libdeflate.h>
#else
#include <zlib.h>
#endif

uint32_t util_crc32(uint32_t crc, const void *buf, size_t len)
{
#ifdef UBIKIT_HAVE_LIBDEFLATE
	/* like zlib, libdeflate inverts on entry and exit; UBI does neither */
	return ~libdeflate_crc32(~crc, buf, len);
#else
	/* zlib inverts on entry and exit; UBI does neither, so undo both. */
	uLong z = ~crc & 0xFFFFFFFFu;
	const unsigned char *p = buf;
	while (len > 0) {
		uInt chunk = len > 0x40000000u ? 0x40000000u : (uInt)len;
		z = crc32(z, p, chunk);
		p += chunk;
		len -= chunk;
	}
	return ~(uint32_t)z;
#endif
}

static uint16_t crc16_entry(unsigned idx)
{
	uint16_t c = (uint16_t)idx;
	for (int k = 0; k < 8; k++)
		c = (c & 1) ? (uint16_t)((c >> 1) ^ 0xA001u) : (uint16_t)(c >> 1);
	return c;
}

uint16_t util_crc16(uint16_t crc, const void *buf, size_t len)
{
	/* Built per call: LPT nodes are few and small, and it keeps us free of
	 * global state. 256 cheap iterations per node is noise next to I/O. */
	uint16_t table[256];
	for (unsigned i = 0; i < 256; i++)
		table[i] = crc16_entry(i);
	const uint8_t *p = buf;
	for (size_t i = 0; i < len; i++)
		crc = (uint16_t)((crc >> 8) ^ table[(crc ^ p[i]) & 0xFF]);
	return crc;
}
