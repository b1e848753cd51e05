/* tool_name — names from an image (file names, link targets, volume names)
 * on a terminal: bytes that would move the cursor, start an escape sequence
 * or split a line are written as 'ls -b' writes them (\n, \t, \\, "\ ",
 * \ooo), so a hostile image cannot forge entries or drive the terminal.
 * Valid UTF-8 is kept; JSON output has its own exact escaping (tool_out). */
#ifndef UBIKIT_TOOLS_TOOL_NAME_H
#define UBIKIT_TOOLS_TOOL_NAME_H
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Write s escaped like 'ls -b' (esc) or as it is (!esc). */
void tool_name_put(FILE *f, const char *s, bool esc);
/* Write s with control bytes and invalid UTF-8 escaped, spaces kept (text
 * values of 'info' that hold a volume or file name among words). */
void tool_name_put_text(FILE *f, const char *s);
/* s escaped into buf (always NUL-terminated, cut if too small); returns buf.
 * For messages on stderr, which are always escaped. */
const char *tool_name_esc(const char *s, char *buf, size_t buflen);
/* Escape by default when f is a terminal (as ls does). */
bool tool_name_tty(FILE *f);

#endif
