/* util_file — host-file safety shared by every layer that opens user files:
 * advisory locks that name their holder, file identity (device + inode, not
 * names) and opening an output that must not be one of the inputs.
 *
 * Locks are flock(2) locks on the open file: shared for readers, exclusive
 * for writers, never waited for. A refused lock is reported with the pid
 * and command line of a holder, found in /proc/locks. */
#ifndef UBIKIT_UTIL_FILE_H
#define UBIKIT_UTIL_FILE_H
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "util/util_err.h"

/* Who a file is: equal ids are the same file whatever the path. */
struct util_file_id {
	dev_t dev;
	ino_t ino;
	bool valid; /* false: the file does not exist (matches nothing) */
};

/* Lock fd (the file at path, for messages) shared or exclusive without
 * waiting. 0 on success (also when the file system has no locks);
 * -EBUSY with "PATH is in use by pid N (CMDLINE), which holds a
 * read/write lock on it" in err when another open file holds a
 * conflicting lock. */
int util_file_lock(int fd, bool exclusive, const char *path, struct util_err *err);

/* Identity of path (stat, following links) or of an open fd. A missing
 * path gives valid = false and returns 0; other failures -errno. */
int util_file_id_path(const char *path, struct util_file_id *id);
int util_file_id_fd(int fd, struct util_file_id *id);
bool util_file_id_same(const struct util_file_id *a, const struct util_file_id *b);

/* Identity of path and of its flash-simulator sidecar "path.sim" (both
 * must never be written while path is read): ids[0], ids[1]. */
void util_file_id_image(const char *path, struct util_file_id ids[2]);

/* Open path for writing as an output (created 0666 & ~umask if missing),
 * refusing it when it is one of the n input files in `inputs` (names
 * in `names`, for the message) before anything in it changes: the file is
 * opened without O_TRUNC, compared by device and inode, and only then
 * truncated (regular files). Returns the fd, or -errno with a message. */
int util_open_output(const char *path, const struct util_file_id *inputs, const char *const *names, size_t n,
		     struct util_err *err);

/* Is the open fd (e.g. standard output) one of the inputs? Returns the
 * index of the input, or -1. */
int util_fd_is_input(int fd, const struct util_file_id *inputs, size_t n);

#endif
