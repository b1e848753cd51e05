/* fs_fsck_report — the list of problems of an fsck report
 * (include/ubikit/fsck.h): init, append, free. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs/fs_fsck.h"

void ubikit_fsck_report_init(struct ubikit_fsck_report *r)
{
	memset(r, 0, sizeof(*r));
}

void ubikit_fsck_report_free(struct ubikit_fsck_report *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->count; i++) {
		free(r->problems[i].msg);
		free(r->problems[i].path);
	}
	free(r->problems);
	memset(r, 0, sizeof(*r));
}

int fs_fsck_add(struct ubikit_fsck_report *r, unsigned flags, int64_t peb, int64_t lnum, int64_t offs,
		uint64_t inum, const char *path, const char *fmt, ...)
{
	if (r->count == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 16;
		struct ubikit_fsck_problem *n = realloc(r->problems, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		r->problems = n;
		r->cap = cap;
	}
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	struct ubikit_fsck_problem *p = &r->problems[r->count];
	*p = (struct ubikit_fsck_problem){.msg = strdup(buf),
					  .peb = peb,
					  .lnum = lnum,
					  .offs = offs,
					  .inum = inum,
					  .path = path ? strdup(path) : NULL,
					  .flags = flags};
	if (!p->msg || (path && !p->path)) {
		free(p->msg);
		free(p->path);
		return -ENOMEM;
	}
	r->count++;
	return 0;
}
