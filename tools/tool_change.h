/* tool_change — what the commands that change an image (put, mkdir, rm,
 * mv, ln, chmod, setfattr) share: their option parsing around the image
 * options, the read-write open, and the end (unmount = commit, close =
 * write back), with the exit status of the other tools (0 ok, 1 failure,
 * 2 usage). Errors on single paths are reported and counted; the rest is
 * still done and committed. */
#ifndef UBIKIT_TOOLS_TOOL_CHANGE_H
#define UBIKIT_TOOLS_TOOL_CHANGE_H
#include <stdint.h>

struct ubikit_fs;
struct ubikit_image;

/* Join an image directory and a name ("/" + "a" = "/a"); malloc'd. */
char *tool_change_join(const char *dir, const char *name);
/* The last component of a path ("a/b/" -> "b"), in a static-free way:
 * returns a pointer into a malloc'd copy the caller frees via *to_free. */
const char *tool_change_base(const char *path, char **to_free);
/* Print "ubikit CMD: WHAT 'PATH': strerror" and return 1. */
int tool_change_fail(const char *cmd, const char *what, const char *path, int neg_errno);
/* Is PATH an existing directory in the image (symlinks followed)? */
int tool_change_is_dir(struct ubikit_fs *fs, const char *path);

/* cmd_put.c; flags: 1 verbose, TOOL_PUT_SQUASH owners root */
#define TOOL_PUT_SQUASH 2
int tool_put(struct ubikit_fs *fs, const char *host, const char *dest, int flags, unsigned *errors);

#endif
