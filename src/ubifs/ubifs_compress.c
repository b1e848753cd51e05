/* ubifs_compress — data node (de)compression: none, LZO1X (liblzo2), zlib
 * (raw deflate with the kernel's 2 KiB window: the kernel inflates with
 * 11 window bits, so a larger window would not read back there) and zstd.
 * Compressors can be compiled out; a data node using one then fails with a
 * clear error, and writing falls back to no compression. zlib nodes are read
 * with libdeflate where it is built in (two to three times faster than
 * zlib's inflate, which was most of an extract's time); a node libdeflate
 * does not decode completely goes to zlib, whose rules (the kernel's) then
 * decide, so what reads back never depends on which library is built in. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ubifs/ubifs_priv.h"

#ifdef UBIKIT_HAVE_LZO
#include <lzo/lzo1x.h>
#endif
#ifdef UBIKIT_HAVE_ZLIB
#include <zlib.h>
#endif
#ifdef UBIKIT_HAVE_LIBDEFLATE
#include <libdeflate.h>
#endif
#ifdef UBIKIT_HAVE_ZSTD
#include <zstd.h>
#include <zstd_errors.h>
#endif

#ifdef UBIKIT_HAVE_ZLIB
/* The mount's inflate stream (raw deflate), made at first use. */
static z_stream *zlib_ctx(struct ubifs_fs *fs)
{
	if (fs->dctx_zlib)
		return fs->dctx_zlib;
	z_stream *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	if (inflateInit2(s, -MAX_WBITS) != Z_OK) {
		free(s);
		return NULL;
	}
	fs->dctx_zlib = s;
	return s;
}
#endif

void ubifs_decompress_free(struct ubifs_fs *fs)
{
#ifdef UBIKIT_HAVE_LIBDEFLATE
	libdeflate_free_decompressor(fs->dctx_deflate);
	fs->dctx_deflate = NULL;
#endif
#ifdef UBIKIT_HAVE_ZLIB
	if (fs->dctx_zlib) {
		inflateEnd(fs->dctx_zlib);
		free(fs->dctx_zlib);
		fs->dctx_zlib = NULL;
	}
#endif
#ifdef UBIKIT_HAVE_ZSTD
	ZSTD_freeDCtx(fs->dctx_zstd);
	fs->dctx_zstd = NULL;
#endif
}

int ubifs_decompress(struct ubifs_fs *fs, const void *in, size_t in_len, void *out, size_t *out_len, unsigned compr)
{
	size_t cap = *out_len;
	switch (compr) {
	case UBIFS_COMPR_NONE:
		if (in_len > cap)
			return -EINVAL;
		memcpy(out, in, in_len);
		*out_len = in_len;
		return 0;
#ifdef UBIKIT_HAVE_LZO
	case UBIFS_COMPR_LZO: {
		lzo_uint ol = cap;
		int r = lzo1x_decompress_safe(in, in_len, out, &ol, NULL);
		if (r != LZO_E_OK)
			return -EINVAL;
		*out_len = ol;
		return 0;
	}
#endif
#ifdef UBIKIT_HAVE_ZLIB
	case UBIFS_COMPR_ZLIB: {
#ifdef UBIKIT_HAVE_LIBDEFLATE
		if (!fs->dctx_deflate)
			fs->dctx_deflate = libdeflate_alloc_decompressor();
		if (fs->dctx_deflate) {
			size_t used, got;
			/* bytes after the final block are ignored, as zlib does */
			if (libdeflate_deflate_decompress_ex(fs->dctx_deflate, in, in_len, out, cap, &used, &got) ==
			    LIBDEFLATE_SUCCESS) {
				*out_len = got;
				return 0;
			}
		}
#endif
		z_stream *s = zlib_ctx(fs);
		if (!s)
			return -ENOMEM;
		s->next_in = (Bytef *)(uintptr_t)in;
		s->avail_in = (uInt)in_len;
		s->next_out = out;
		s->avail_out = (uInt)cap;
		int r = inflate(s, Z_FINISH);
		size_t got = cap - s->avail_out;
		if (inflateReset(s) != Z_OK) { /* cannot fail on a valid stream; start afresh next time */
			inflateEnd(s);
			free(s);
			fs->dctx_zlib = NULL;
		}
		if (r == Z_MEM_ERROR) /* inflate allocates its window at first use */
			return -ENOMEM;
		/* the kernel accepts a stream that fills the output exactly */
		if (r != Z_STREAM_END && !(r == Z_BUF_ERROR && got == cap) && !(r == Z_OK && got == cap))
			return -EINVAL;
		*out_len = got;
		return 0;
	}
#endif
#ifdef UBIKIT_HAVE_ZSTD
	case UBIFS_COMPR_ZSTD: {
		if (!fs->dctx_zstd && !(fs->dctx_zstd = ZSTD_createDCtx()))
			return -ENOMEM;
		size_t r = ZSTD_decompressDCtx(fs->dctx_zstd, out, cap, in, in_len);
		if (ZSTD_isError(r))
			return ZSTD_getErrorCode(r) == ZSTD_error_memory_allocation ? -ENOMEM : -EINVAL;
		*out_len = r;
		return 0;
	}
#endif
	default:
		(void)fs;
		return compr < UBIFS_COMPR_TYPES_CNT ? -EOPNOTSUPP : -EINVAL;
	}
}

/* The kernel's ubifs_compress rules: blocks under 128 bytes, compressor
 * failures and savings under 64 bytes are stored uncompressed. */
#define UBIFS_MIN_COMPR_LEN 128
#define UBIFS_MIN_COMPRESS_DIFF 64

int ubifs_compress(const void *in, size_t in_len, void *out, size_t *out_len, unsigned *compr)
{
	size_t cap = *out_len;
	int ok = 0;
	size_t got = 0;
	if (in_len >= UBIFS_MIN_COMPR_LEN) {
		switch (*compr) {
#ifdef UBIKIT_HAVE_LZO
		case UBIFS_COMPR_LZO: {
			void *wrk = malloc(LZO1X_1_MEM_COMPRESS);
			lzo_uint ol = cap;
			if (wrk && cap >= in_len + in_len / 16 + 64 + 3 &&
			    lzo1x_1_compress(in, in_len, out, &ol, wrk) == LZO_E_OK) {
				ok = 1;
				got = ol;
			}
			free(wrk);
			break;
		}
#endif
#ifdef UBIKIT_HAVE_ZLIB
		case UBIFS_COMPR_ZLIB: {
			z_stream s;
			memset(&s, 0, sizeof(s));
			if (deflateInit2(&s, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -11, 8, Z_DEFAULT_STRATEGY) != Z_OK)
				break;
			s.next_in = (Bytef *)(uintptr_t)in;
			s.avail_in = (uInt)in_len;
			s.next_out = out;
			s.avail_out = (uInt)cap;
			if (deflate(&s, Z_FINISH) == Z_STREAM_END) {
				ok = 1;
				got = cap - s.avail_out;
			}
			deflateEnd(&s);
			break;
		}
#endif
#ifdef UBIKIT_HAVE_ZSTD
		case UBIFS_COMPR_ZSTD: {
			size_t r = ZSTD_compress(out, cap, in, in_len, 3);
			if (!ZSTD_isError(r)) {
				ok = 1;
				got = r;
			}
			break;
		}
#endif
		default:
			break;
		}
	}
	if (!ok || got + UBIFS_MIN_COMPRESS_DIFF > in_len) {
		if (in_len > cap)
			return -EINVAL;
		memcpy(out, in, in_len);
		*out_len = in_len;
		*compr = UBIFS_COMPR_NONE;
		return 0;
	}
	*out_len = got;
	return 0;
}
