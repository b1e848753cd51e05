/* tool_extract — copying a mounted UBIFS tree (or one file) into a host
 * directory; used by 'ubikit extract' and 'ubikit bench extract'. */
#ifndef UBIKIT_TOOLS_TOOL_EXTRACT_H
#define UBIKIT_TOOLS_TOOL_EXTRACT_H
#include <stdbool.h>
#include <stdint.h>

struct ubikit_fs;

struct tool_extract_opts {
	bool verbose;  /* name each entry on stderr */
	bool progress; /* progress bar on stderr (only used for big images) */
};

struct tool_extract_stats {
	uint64_t files, bytes, sparse_files, dirs, symlinks, hardlinks, devices, fifos, xattrs;
	uint64_t devices_skipped, sockets_skipped, owners_skipped, xattrs_skipped;
	uint64_t encrypted_skipped; /* fscrypt-encrypted regular files, no key given */
	uint64_t failed_files; /* regular files that could not be extracted (not in files) */
	uint64_t errors;
};

/* Extract src (a path inside fs) into outdir. Returns 0, or -EIO when any
 * entry failed (each failure was reported on stderr), or another -errno. */
int tool_extract(struct ubikit_fs *fs, const char *src, const char *outdir, const struct tool_extract_opts *o,
		 struct tool_extract_stats *s);

#endif
