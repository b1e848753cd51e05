/* ubifs_lpt_tool — test helper for tests/vm/ubifs_lpt_kernel.sh: LPT-only
 * commits on a bare UBIFS image (ubifs_lpt_churn.c), checked in process;
 * the kernel then mounts the result with its self-checks.
 *   ubifs_lpt_tool IMAGE SEED COMMITS
 *   ubifs_lpt_tool IMAGE check     (only ubifs_lpt_check on a read-only mount)
 * Exit 0 when every check passed. */
#include <stdio.h>
#include <stdlib.h>

#include "ubi/ubi_flat.h"
#include "ubifs/ubifs.h"
#include "ubifs/ubifs_lpt.h"
#include "ubifs/ubifs_priv.h"
#include "ubifs_lpt_churn.h"
#include <string.h>

static int check_only(const char *img)
{
	struct ubi_vol_io vol;
	if (ubi_flat_open(img, 0, 1, &vol))
		return fprintf(stderr, "cannot open %s\n", img), 1;
	struct ubifs_mount_opts o = {.read_only = 1};
	struct ubifs_fs *fs;
	struct util_err e = {{0}};
	if (ubifs_mount(&vol, &o, &fs, &e))
		return fprintf(stderr, "mount: %s\n", e.msg), 1;
	const char *show = getenv("LPT_SHOW_LEB");
	if (show) {
		struct ubifs_lprops lp;
		if (!ubifs_lpt_lookup(fs->lpt, (uint32_t)atoi(show), &lp))
			printf("LEB %u: free %u dirty %u flags 0x%x\n", lp.lnum, lp.free, lp.dirty, lp.flags);
	}
	int err = ubifs_lpt_check(fs->lpt);
	if (err)
		fprintf(stderr, "%s\n", fs->err.msg);
	else
		printf("LPT equals the flash\n");
	ubifs_unmount(fs);
	ubi_flat_close(&vol);
	return err ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc < 3 || (argc < 4 && strcmp(argv[2], "check"))) {
		fprintf(stderr, "usage: ubifs_lpt_tool IMAGE SEED COMMITS\n");
		return 2;
	}
	if (!strcmp(argv[2], "check"))
		return check_only(argv[1]);
	char why[600];
	struct lpt_churn_stats st;
	if (lpt_churn(argv[1], strtoull(argv[2], NULL, 0), (unsigned)strtoul(argv[3], NULL, 0), 4, why, sizeof(why), &st)) {
		fprintf(stderr, "ubifs_lpt_tool: %s\n", why);
		return 1;
	}
	printf("%u LPT commits (%s model), %u checks, ltab moved %u times, %u LPT GC passes, %u whole-tree rewrites, master sqnum %llu; LPT LEBs free/dirty:",
	       st.commits, st.big_model ? "big" : "small", st.checks, st.ltab_moves, st.gc_runs, st.write_all_runs,
	       (unsigned long long)st.master_sqnum);
	for (unsigned i = 0; i < st.lpt_lebs && i < 16; i++)
		printf(" %u/%u", st.ltab_free[i], st.ltab_dirty[i]);
	printf("\n");
	return 0;
}
