/* ubifs_lpt_tool — test helper for tests/vm/ubifs_lpt_kernel.sh: LPT-only
 * commits on a bare UBIFS image (ubifs_lpt_churn.c), checked in process;
 * the kernel then mounts the result with its self-checks.
 *   ubifs_lpt_tool IMAGE SEED COMMITS
 * Exit 0 when every check passed. */
#include <stdio.h>
#include <stdlib.h>

#include "ubifs_lpt_churn.h"

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: ubifs_lpt_tool IMAGE SEED COMMITS\n");
		return 2;
	}
	char why[600];
	struct lpt_churn_stats st;
	if (lpt_churn(argv[1], strtoull(argv[2], NULL, 0), (unsigned)strtoul(argv[3], NULL, 0), 4, why, sizeof(why), &st)) {
		fprintf(stderr, "ubifs_lpt_tool: %s\n", why);
		return 1;
	}
	printf("%u LPT commits (%s model), %u checks, ltab moved %u times, master sqnum %llu; LPT LEBs free/dirty:",
	       st.commits, st.big_model ? "big" : "small", st.checks, st.ltab_moves, (unsigned long long)st.master_sqnum);
	for (unsigned i = 0; i < st.lpt_lebs && i < 16; i++)
		printf(" %u/%u", st.ltab_free[i], st.ltab_dirty[i]);
	printf("\n");
	return 0;
}
