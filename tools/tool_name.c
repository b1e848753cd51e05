/* tool_name — 'ls -b' escaping of names from an image; see tool_name.h. */
#include "tool_name.h"

#include <stdint.h>
#include <string.h>
#include <unistd.h>

/* Length of a valid, printable UTF-8 sequence at s (0: not one). C1
 * controls (U+0080..U+009F), overlongs and surrogates are not printable. */
static size_t utf8_len(const unsigned char *s)
{
	unsigned c = s[0];
	size_t n;
	uint32_t cp;
	if (c >= 0xC2 && c <= 0xDF)
		n = 2, cp = c & 0x1F;
	else if (c >= 0xE0 && c <= 0xEF)
		n = 3, cp = c & 0x0F;
	else if (c >= 0xF0 && c <= 0xF4)
		n = 4, cp = c & 0x07;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3F);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) || (cp >= 0xD800 && cp <= 0xDFFF) ||
	    cp < 0xA0)
		return 0;
	return n;
}

/* The escaped form of the byte(s) at s into out (at least 5 bytes); returns
 * how many input bytes were used and sets *olen. */
static size_t esc_one(const unsigned char *s, char *out, size_t *olen, bool space)
{
	static const char cesc[] = {['\a'] = 'a', ['\b'] = 'b', ['\f'] = 'f', ['\n'] = 'n',
				    ['\r'] = 'r', ['\t'] = 't', ['\v'] = 'v'};
	unsigned c = s[0];
	if (c < sizeof(cesc) && cesc[c]) {
		out[0] = '\\', out[1] = cesc[c], *olen = 2;
		return 1;
	}
	if (c == ' ' && !space) {
		out[0] = ' ', *olen = 1;
		return 1;
	}
	if (c == '\\' || c == ' ') {
		out[0] = '\\', out[1] = (char)c, *olen = 2;
		return 1;
	}
	if (c > 0x20 && c < 0x7F) {
		out[0] = (char)c, *olen = 1;
		return 1;
	}
	size_t n = c >= 0x80 ? utf8_len(s) : 0;
	if (n) {
		memcpy(out, s, n);
		*olen = n;
		return n;
	}
	out[0] = '\\';
	out[1] = (char)('0' + (c >> 6));
	out[2] = (char)('0' + ((c >> 3) & 7));
	out[3] = (char)('0' + (c & 7));
	*olen = 4;
	return 1;
}

static void put(FILE *f, const char *s, bool space)
{
	const unsigned char *p = (const unsigned char *)s;
	while (*p) {
		char o[8];
		size_t ol;
		p += esc_one(p, o, &ol, space);
		fwrite(o, 1, ol, f);
	}
}

void tool_name_put(FILE *f, const char *s, bool esc)
{
	if (esc)
		put(f, s, true);
	else
		fputs(s, f);
}

void tool_name_put_text(FILE *f, const char *s)
{
	put(f, s, false);
}

const char *tool_name_esc(const char *s, char *buf, size_t buflen)
{
	if (!buflen)
		return buf;
	size_t used = 0;
	const unsigned char *p = (const unsigned char *)s;
	while (*p) {
		char o[8];
		size_t ol;
		size_t in = esc_one(p, o, &ol, true);
		if (used + ol >= buflen)
			break;
		memcpy(buf + used, o, ol);
		used += ol;
		p += in;
	}
	buf[used] = '\0';
	return buf;
}

bool tool_name_tty(FILE *f)
{
	return isatty(fileno(f)) == 1;
}
