/* ubifs_write_tool — test helper for the kernel checks of the write path
 * (tests/vm/ubifs_write_kernel.sh): on a bare UBIFS image, run the
 * reference-model workload (ubifs_write_model.c) read-write, unmount with or
 * without a commit, check the result with a read-only mount against the
 * model, and write the model's manifest for comparison with the kernel.
 *   ubifs_write_tool IMAGE SEED OPS journal|commit MANIFEST [ROUNDS [SYNC_EVERY]]
 * SYNC_EVERY: a sync (= commit) after every that many operations.
 * Exit 0 when all went as the model says. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ubi/ubi_flat.h"
#include "ubifs/ubifs.h"
#include "ubifs_write_model.h"

static int die(const char *what, const char *msg)
{
	fprintf(stderr, "ubifs_write_tool: %s: %s\n", what, msg);
	return 1;
}

int main(int argc, char **argv)
{
	if (argc < 6)
		return die("usage", "IMAGE SEED OPS journal|commit MANIFEST [ROUNDS]");
	const char *img = argv[1];
	uint64_t seed = strtoull(argv[2], NULL, 0);
	unsigned ops = (unsigned)strtoul(argv[3], NULL, 0);
	int commit = !strcmp(argv[4], "commit");
	int rounds = argc > 6 ? atoi(argv[6]) : 1;
	unsigned sync_every = argc > 7 ? (unsigned)strtoul(argv[7], NULL, 0) : 0;
	struct wm *m = NULL;
	char why[600];
	for (int round = 0; round < rounds; round++) {
		struct ubi_vol_io vol;
		if (ubi_flat_open(img, 0, 0, &vol))
			return die(img, "cannot open");
		struct util_err e = {0};
		struct ubifs_mount_opts o = {.read_only = 0};
		struct ubifs_fs *fs;
		if (ubifs_mount(&vol, &o, &fs, &e))
			return die("read-write mount", e.msg);
		if (!m && wm_new(fs, seed, &m))
			return die("mkdir", ubifs_errmsg(fs));
		for (unsigned done = 0; done < ops;) {
			unsigned step = sync_every && sync_every < ops - done ? sync_every : ops - done;
			if (wm_run(m, fs, step, 1, why, sizeof(why)))
				return die("workload", why);
			done += step;
			if (sync_every && done < ops && ubifs_sync(fs))
				return die("sync (commit)", ubifs_errmsg(fs));
		}
		int err = commit ? ubifs_unmount(fs) : ubifs_unmount_journal(fs);
		if (err)
			return die("unmount", "failed");
		if (ubi_flat_close(&vol))
			return die(img, "write-back failed");
		if (ubi_flat_open(img, 0, 1, &vol))
			return die(img, "cannot reopen");
		o.read_only = 1;
		if (ubifs_mount(&vol, &o, &fs, &e))
			return die("read-only mount after the workload", e.msg);
		if (wm_check(m, fs, why, sizeof(why)))
			return die("check after remount", why);
		struct ubifs_fs_info info;
		ubifs_get_info(fs, &info);
		unsigned nops, files;
		uint64_t bytes;
		wm_stats(m, &nops, &files, &bytes);
		printf("round %d: %u ops, %u created, %llu bytes; commit %llu, %u buds, %llu journal nodes replayed\n", round,
		       nops, files, (unsigned long long)bytes, (unsigned long long)info.mst.cmt_no, info.buds,
		       (unsigned long long)info.replayed_nodes);
		ubifs_unmount(fs);
		ubi_flat_close(&vol);
	}
	FILE *f = fopen(argv[5], "w");
	if (!f)
		return die(argv[5], "cannot write");
	wm_manifest(m, f);
	fclose(f);
	wm_free(m);
	return 0;
}
