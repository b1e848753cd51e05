/* tool_out — see tool_out.h. */
#include "tool_out.h"

#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

#include "tool_name.h"

void tool_out_init(struct tool_out *o, FILE *f, bool json)
{
	memset(o, 0, sizeof(*o));
	o->f = f;
	o->json = json;
	o->first[0] = true;
	if (json)
		fputc('{', f);
}

void tool_out_finish(struct tool_out *o)
{
	if (o->json)
		fputs("\n}\n", o->f);
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20 || *p >= 0x7f)
			fprintf(f, "\\u%04x", *p); /* bytes, not UTF-8 decoding: names are raw bytes */
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

static void indent(struct tool_out *o, int d)
{
	for (int i = 0; i < d; i++)
		fputs("  ", o->f);
}

/* Start a member: separator, newline, indentation and the key. */
static void member(struct tool_out *o, const char *key)
{
	if (o->json) {
		if (!o->first[o->depth])
			fputc(',', o->f);
		fputc('\n', o->f);
		indent(o, o->depth + 1);
		if (key && !o->in_arr[o->depth]) {
			json_str(o->f, key);
			fputs(": ", o->f);
		}
	} else {
		indent(o, o->depth);
		if (key)
			fprintf(o->f, "%s: ", key);
		else if (o->in_arr[o->depth])
			fputs("- ", o->f);
	}
	o->first[o->depth] = false;
}

static void open_(struct tool_out *o, const char *key, bool arr)
{
	if (o->json) {
		member(o, key);
		fputc(arr ? '[' : '{', o->f);
	} else {
		indent(o, o->depth);
		if (key)
			fprintf(o->f, "%s:\n", key);
		else
			fputs("-\n", o->f);
		o->first[o->depth] = false;
	}
	if (o->depth + 1 < TOOL_OUT_DEPTH) {
		o->depth++;
		o->first[o->depth] = true;
		o->in_arr[o->depth] = arr;
	}
}

void tool_out_obj(struct tool_out *o, const char *key)
{
	open_(o, key, false);
}

void tool_out_arr(struct tool_out *o, const char *key)
{
	open_(o, key, true);
}

void tool_out_arr_json(struct tool_out *o, const char *key)
{
	if (o->json) {
		open_(o, key, true);
	} else if (o->depth + 1 < TOOL_OUT_DEPTH) {
		o->depth++;
		o->first[o->depth] = true;
		o->in_arr[o->depth] = true;
	}
}

void tool_out_end(struct tool_out *o)
{
	bool arr = o->in_arr[o->depth];
	bool empty = o->first[o->depth];
	if (o->depth > 0)
		o->depth--;
	if (o->json) {
		if (!empty) {
			fputc('\n', o->f);
			indent(o, o->depth + 1);
		}
		fputc(arr ? ']' : '}', o->f);
	}
}

void tool_out_u64(struct tool_out *o, const char *key, uint64_t v)
{
	member(o, key);
	fprintf(o->f, o->json ? "%" PRIu64 : "%" PRIu64 "\n", v);
}

void tool_out_i64(struct tool_out *o, const char *key, int64_t v)
{
	member(o, key);
	fprintf(o->f, o->json ? "%" PRId64 : "%" PRId64 "\n", v);
}

void tool_out_hex(struct tool_out *o, const char *key, uint64_t v)
{
	member(o, key);
	if (o->json)
		fprintf(o->f, "\"0x%" PRIx64 "\"", v);
	else
		fprintf(o->f, "0x%" PRIx64 "\n", v);
}

void tool_out_bool(struct tool_out *o, const char *key, bool v)
{
	member(o, key);
	fprintf(o->f, o->json ? "%s" : "%s\n", v ? (o->json ? "true" : "yes") : (o->json ? "false" : "no"));
}

void tool_out_str(struct tool_out *o, const char *key, const char *s)
{
	member(o, key);
	if (o->json)
		json_str(o->f, s);
	else {
		tool_name_put_text(o->f, s); /* a name from the image cannot split the line */
		fputc('\n', o->f);
	}
}

void tool_out_text(struct tool_out *o, const char *fmt, ...)
{
	if (o->json)
		return;
	va_list ap;
	va_start(ap, fmt);
	vfprintf(o->f, fmt, ap);
	va_end(ap);
}
