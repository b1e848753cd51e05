/* util_err — see util_err.h. */
#include "util/util_err.h"

#include <stdarg.h>
#include <stdio.h>

int util_err_set(struct util_err *e, int err, const char *fmt, ...)
{
	if (!e)
		return err;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return err;
}
