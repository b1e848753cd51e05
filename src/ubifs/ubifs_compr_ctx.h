/* ubifs_compr_ctx — block compression for image building (mkfs), one
 * context per thread; mkfs.ubifs's compressor settings and choices. */
#ifndef UBIKIT_UBIFS_COMPR_CTX_H
#define UBIKIT_UBIFS_COMPR_CTX_H
#include <stddef.h>

struct ubifs_compr_ctx;

/* 1 if this build can compress with compr (UBIFS_COMPR_*) */
int ubifs_compr_supported(unsigned compr);
/* NULL when compr is not supported (or out of memory). favor_lzo: LZO
 * unless zlib is more than favor_percent % smaller. */
struct ubifs_compr_ctx *ubifs_compr_ctx_new(unsigned compr, int favor_lzo, unsigned favor_percent);
void ubifs_compr_ctx_free(struct ubifs_compr_ctx *c);
/* Compress one block (<= 4096 bytes) into out (room *out_len, at least
 * 2 x 4096); returns the type used (UBIFS_COMPR_NONE: out holds the block). */
unsigned ubifs_compr_ctx_run(struct ubifs_compr_ctx *c, const void *in, size_t in_len, void *out, size_t *out_len);

#endif
