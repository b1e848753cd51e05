/* ubifs_gc_tool — test helper for tests/vm/ubifs_gc_kernel.sh: on a raw
 * NAND flash image (ubikit's UBI, volume 0), run the reference model's
 * workload (ubifs_write_model.c) read-write with its live data bounded, so
 * that the small file system is overwritten `passes` times and garbage
 * collection (data and index LEBs), the in-the-gaps commit and LPT GC
 * must run; unmount (commit), check a read-only mount against the model,
 * write the model's manifest.
 *   ubifs_gc_tool GEOM:FLASH SEED PASSES LIMIT_PCT MANIFEST
 * GEOM: nand2k (2048/512 sub-pages, 64 OOB, 128 KiB PEBs), nand4k (4096/1024 sub-pages,
 * 224 OOB, 256 KiB PEBs, 256 MiB), both without OOB in the file; nand4koob: nand4k
 * with page+OOB in the file (nanddump -o layout); nor (64 KiB PEBs, 16 MiB, min. I/O 1, as
 * the kernel's mtdram). WM_RESUME=1: the tree
 * of an earlier run (same seed) is there: the model starts from it.
 * Budgeting's index reserve (min_idx_lebs) is set as the kernel computes it
 * (h-budget owns that; see test_ubifs_gc.c). Prints the GC counters.
 * UBIKIT_COMPR=none|lzo|zlib|zstd: write with that compressor instead of the
 * superblock's default (the mount option compr=). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flash/flash.h"
#include "flash/flash_sim.h"
#include "ubi/ubi.h"
#include "ubifs/ubifs.h"
#include "ubifs/ubifs_gc.h"
#include "ubifs/ubifs_lpt.h"
#include "ubifs/ubifs_priv.h"
#include "ubifs_write_model.h"

struct vol_h {
	struct ubi_vol_io vol;
	struct flash_dev *fl;
	struct ubi_device *ubi;
};

static int vol_open(const char *spec, int ro, struct vol_h *h, char *e, size_t el)
{
	memset(h, 0, sizeof(*h));
	struct flash_geometry geo;
	bool oob = false;
	const char *path;
	if (!strncmp(spec, "nand2k:", 7)) {
		geo = (struct flash_geometry){FLASH_NAND, 2048, 512, 64, 131072, 512};
		path = spec + 7;
	} else if (!strncmp(spec, "nand4k:", 7)) {
		geo = (struct flash_geometry){FLASH_NAND, 4096, 1024, 224, 262144, 1024};
		path = spec + 7;
	} else if (!strncmp(spec, "nand4koob:", 10)) {
		geo = (struct flash_geometry){FLASH_NAND, 4096, 1024, 224, 262144, 1024};
		path = spec + 10;
		oob = true;
	} else if (!strncmp(spec, "nor:", 4)) {
		geo = (struct flash_geometry){FLASH_NOR, 1, 1, 0, 65536, 256};
		path = spec + 4;
	} else {
		snprintf(e, el, "GEOM must be nand2k, nand4k, nand4koob or nor");
		return -1;
	}
	int err = flash_sim_open_ex(path, &geo, oob, ro, &h->fl, e, el);
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

static void vol_close(struct vol_h *h)
{
	ubi_detach(h->ubi);
	flash_close(h->fl);
}

static int die(const char *what, const char *msg)
{
	fprintf(stderr, "ubifs_gc_tool: %s: %s\n", what, msg);
	return 1;
}

static size_t dirty_znodes(const struct ubifs_znode *z)
{
	if (!z || !z->dirty)
		return 0;
	size_t n = 1;
	if (z->level > 0)
		for (uint32_t i = 0; i < z->child_cnt; i++)
			n += dirty_znodes(z->zbranch[i].child);
	return n;
}

/* kernel ubifs_calc_min_idx_lebs, as test_ubifs_gc.c */
static void set_idx_reserve(struct ubifs_fs *fs)
{
	uint32_t max_idx = (uint32_t)(UBIFS_IDX_NODE_SZ + fs->fanout * (UBIFS_BRANCH_SZ + 8));
	max_idx = (max_idx + 7) & ~7u;
	uint64_t idx = fs->tnc.idx_size + (uint64_t)dirty_znodes(fs->tnc.root) * max_idx;
	uint64_t idx_leb = fs->leb_size - max_idx;
	uint32_t lebs = (uint32_t)((idx * 3 + idx_leb - 1) / idx_leb) + 1;
	ubifs_lpt_set_min_idx_lebs(fs->lpt, lebs < 3 ? 3 : lebs);
	if (ubifs_gc_index_room(fs, lebs < 3 ? 3 : lebs))
		fprintf(stderr, "ubifs_gc_tool: no room for the index: %s\n", ubifs_errmsg(fs));
}

int main(int argc, char **argv)
{
	if (argc < 6)
		return die("usage", "GEOM:FLASH SEED PASSES LIMIT_PCT MANIFEST");
	const char *img = argv[1];
	uint64_t seed = strtoull(argv[2], NULL, 0);
	unsigned passes = (unsigned)strtoul(argv[3], NULL, 0);
	unsigned pct = (unsigned)strtoul(argv[4], NULL, 0);
	struct wm *m = NULL;
	char why[600], emsg[256];
	struct vol_h vh;
	if (vol_open(img, 0, &vh, emsg, sizeof(emsg)))
		return die(img, emsg);
	struct util_err e = {0};
	/* a one-block write-back bound: the churn's overwrites reach the flash
	 * (a larger cache merges them in memory and GC would have less to do) */
	struct ubifs_mount_opts o = {.read_only = 0, .dirty_limit = 4096};
	const char *compr = getenv("UBIKIT_COMPR");
	if (compr && *compr) {
		static const char *const names[] = {"none", "lzo", "zlib", "zstd"};
		o.compr = -1;
		for (int i = 0; i < 4; i++)
			if (!strcmp(compr, names[i]))
				o.compr = i;
		if (o.compr < 0)
			return die("UBIKIT_COMPR", "must be none, lzo, zlib or zstd");
		o.compr_set = 1;
	}
	struct ubifs_fs *fs;
	if (ubifs_mount(&vh.vol, &o, &fs, &e))
		return die("read-write mount", e.msg);
	if (getenv("WM_RESUME")) {
		if (wm_adopt(fs, seed, &m, why, sizeof(why)))
			return die("adopting the earlier tree", why);
	} else if (wm_new(fs, seed, &m))
		return die("mkdir", ubifs_errmsg(fs));
	uint64_t main_bytes = (uint64_t)fs->main_lebs * fs->leb_size;
	wm_set_limit(m, main_bytes * pct / 100);
	unsigned nops, files;
	uint64_t bytes0, bytes;
	wm_stats(m, &nops, &files, &bytes0);
	bytes = bytes0;
	while (bytes - bytes0 < main_bytes * passes) {
		set_idx_reserve(fs);
		if (wm_run(m, fs, 20, 1, why, sizeof(why)))
			return die("workload", why);
		wm_stats(m, &nops, &files, &bytes);
	}
	struct ubifs_gc_stats st;
	ubifs_gc_get_stats(fs, &st);
	uint32_t lpt_gc, lpt_all;
	ubifs_lpt_counters(fs->lpt, &lpt_gc, &lpt_all);
	printf("%u ops, %llu bytes written on a %llu-byte main area; GC: %llu data LEBs (%llu nodes moved), %llu index "
	       "LEBs, %llu freed at commit start, %llu index LEBs after commits; in-the-gaps commits %llu (%llu LEBs); "
	       "LPT GC %u, LPT rewrites %u; %llu commits\n",
	       nops, (unsigned long long)(bytes - bytes0), (unsigned long long)main_bytes,
	       (unsigned long long)st.data_lebs, (unsigned long long)st.nodes_moved, (unsigned long long)st.idx_lebs,
	       (unsigned long long)st.commit_freed, (unsigned long long)st.commit_idx_freed,
	       (unsigned long long)fs->tnc.gap_commits, (unsigned long long)fs->tnc.gap_lebs, lpt_gc, lpt_all,
	       (unsigned long long)fs->commits);
	if (!getenv("WM_RESUME") && (st.data_lebs == 0 || st.commit_freed == 0))
		return die("workload", "garbage collection did not run");
	set_idx_reserve(fs); /* the unmount commits */
	if (ubifs_unmount(fs))
		return die("unmount", "failed");
	vol_close(&vh);
	if (vol_open(img, 1, &vh, emsg, sizeof(emsg)))
		return die(img, emsg);
	o.read_only = 1;
	if (ubifs_mount(&vh.vol, &o, &fs, &e))
		return die("read-only mount after the workload", e.msg);
	if (wm_check(m, fs, why, sizeof(why)))
		return die("check after remount", why);
	if (ubifs_lpt_check(fs->lpt))
		return die("LPT check after remount", ubifs_errmsg(fs));
	ubifs_unmount(fs);
	vol_close(&vh);
	FILE *f = fopen(argv[5], "w");
	if (!f)
		return die(argv[5], "cannot write");
	wm_manifest(m, f);
	fclose(f);
	wm_free(m);
	return 0;
}
