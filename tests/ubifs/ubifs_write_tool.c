/* ubifs_write_tool — test helper for the kernel checks of the write path
 * (tests/vm/ubifs_write_kernel.sh): on a bare UBIFS image, run the
 * reference-model workload (ubifs_write_model.c) read-write, unmount with or
 * without a commit, check the result with a read-only mount against the
 * model, and write the model's manifest for comparison with the kernel.
 *   ubifs_write_tool IMAGE SEED OPS journal|commit MANIFEST [ROUNDS [SYNC_EVERY]]
 * SYNC_EVERY: a sync (= commit) after every that many operations.
 * IMAGE "nand2k:FILE": a raw 2048+0 / 128 KiB NAND flash image (no OOB),
 * attached read-write with ubikit's UBI (volume 0); otherwise a bare UBIFS
 * image (ubi_flat). WM_RESUME=1: the tree of an earlier run (same seed) is
 * already there: the model starts from it (wm_adopt).
 * Exit 0 when all went as the model says. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flash/flash.h"
#include "flash/flash_sim.h"
#include "ubi/ubi.h"
#include "ubi/ubi_flat.h"
#include "ubifs/ubifs.h"
#include "ubifs_write_model.h"

struct vol_h {
	struct ubi_vol_io vol;
	struct flash_dev *fl;
	struct ubi_device *ubi;
	int flat;
};

static int vol_open(const char *img, int ro, struct vol_h *h, char *e, size_t el)
{
	memset(h, 0, sizeof(*h));
	if (strncmp(img, "nand2k:", 7)) {
		h->flat = 1;
		snprintf(e, el, "cannot open");
		return ubi_flat_open(img, 0, ro, &h->vol);
	}
	struct flash_geometry geo = {FLASH_NAND, 2048, 512, 64, 131072, 512};
	int err = flash_sim_open_ex(img + 7, &geo, false, ro, &h->fl, e, el);
	if (err)
		return err;
	struct ubi_attach_opts o;
	ubi_attach_opts_default(&o);
	o.read_only = ro;
	err = ubi_attach_msg(h->fl, &o, &h->ubi, e, el);
	if (!err)
		err = ubi_volume_io(h->ubi, 0, &h->vol);
	if (err) {
		if (h->ubi)
			ubi_detach(h->ubi);
		flash_close(h->fl);
	}
	return err;
}

static int vol_close(struct vol_h *h)
{
	if (h->flat)
		return ubi_flat_close(&h->vol);
	ubi_detach(h->ubi);
	flash_close(h->fl);
	return 0;
}

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
		struct vol_h vh;
		char emsg[256];
		if (vol_open(img, 0, &vh, emsg, sizeof(emsg)))
			return die(img, emsg);
		struct util_err e = {0};
		struct ubifs_mount_opts o = {.read_only = 0};
		struct ubifs_fs *fs;
		if (ubifs_mount(&vh.vol, &o, &fs, &e))
			return die("read-write mount", e.msg);
		if (!m && getenv("WM_RESUME")) {
			if (wm_adopt(fs, seed, &m, why, sizeof(why)))
				return die("adopting the earlier tree", why);
		} else if (!m && wm_new(fs, seed, &m))
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
		if (vol_close(&vh))
			return die(img, "write-back failed");
		if (vol_open(img, 1, &vh, emsg, sizeof(emsg)))
			return die(img, emsg);
		o.read_only = 1;
		if (ubifs_mount(&vh.vol, &o, &fs, &e))
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
		vol_close(&vh);
	}
	FILE *f = fopen(argv[5], "w");
	if (!f)
		return die(argv[5], "cannot write");
	wm_manifest(m, f);
	fclose(f);
	wm_free(m);
	return 0;
}
