/* util_crc — the two checksums of the UBI/UBIFS formats.
 *
 * CRC-32 as UBI and UBIFS use it: init 0xFFFFFFFF, reflected poly 0xEDB88320,
 * no final XOR (the bitwise NOT of zlib's crc32()). CRC-16 as the UBIFS LPT
 * uses it: init 0xFFFF, reflected poly 0xA001, no final XOR. */
#ifndef UBIKIT_UTIL_CRC_H
#define UBIKIT_UTIL_CRC_H
#include <stddef.h>
#include <stdint.h>

#define UTIL_CRC32_INIT 0xFFFFFFFFu
#define UTIL_CRC16_INIT 0xFFFFu

/* Continue a UBI-style CRC-32; start with UTIL_CRC32_INIT. */
uint32_t util_crc32(uint32_t crc, const void *buf, size_t len);
/* Continue a UBIFS LPT CRC-16; start with UTIL_CRC16_INIT. */
uint16_t util_crc16(uint16_t crc, const void *buf, size_t len);

#endif
