/* tool_out — structured output for 'info' and 'dump': the same calls print
 * either indented "key: value" text or JSON. */
#ifndef UBIKIT_TOOLS_TOOL_OUT_H
#define UBIKIT_TOOLS_TOOL_OUT_H
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define TOOL_OUT_DEPTH 16

struct tool_out {
	FILE *f;
	bool json;
	int depth;
	bool first[TOOL_OUT_DEPTH]; /* no member printed yet at this depth */
	bool in_arr[TOOL_OUT_DEPTH];
};

void tool_out_init(struct tool_out *o, FILE *f, bool json);
void tool_out_finish(struct tool_out *o);
/* key may be NULL inside arrays. */
void tool_out_obj(struct tool_out *o, const char *key);
void tool_out_arr(struct tool_out *o, const char *key);
/* An array that has a header in JSON only (text mode prints its own lines). */
void tool_out_arr_json(struct tool_out *o, const char *key);
void tool_out_end(struct tool_out *o);
void tool_out_u64(struct tool_out *o, const char *key, uint64_t v);
void tool_out_i64(struct tool_out *o, const char *key, int64_t v);
void tool_out_hex(struct tool_out *o, const char *key, uint64_t v);
void tool_out_bool(struct tool_out *o, const char *key, bool v);
void tool_out_str(struct tool_out *o, const char *key, const char *s);
/* Text mode only: a free line (ignored in JSON). */
void tool_out_text(struct tool_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
