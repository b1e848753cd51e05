/* util_err — a per-context "last error" message.
 *
 * Functions return negative errno; the context that failed also records a
 * human sentence naming the place (PEB/LEB:offset, node type, what was
 * expected) so tools can print it. No global state: each device, volume or
 * file system context owns one. */
#ifndef UBIKIT_UTIL_ERR_H
#define UBIKIT_UTIL_ERR_H
#include <stddef.h>

#define UTIL_ERR_MSG_MAX 512

struct util_err {
	char msg[UTIL_ERR_MSG_MAX];
};

/* Record a message (printf-style) and return err unchanged, so callers can
 * write: return util_err_set(&c->err, -EINVAL, "PEB %u: bad EC magic", peb); */
int util_err_set(struct util_err *e, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static inline void util_err_clear(struct util_err *e)
{
	e->msg[0] = '\0';
}
static inline const char *util_err_msg(const struct util_err *e)
{
	return e->msg;
}

#endif
