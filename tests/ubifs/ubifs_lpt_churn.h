/* ubifs_lpt_churn — LPT-only commits on a bare UBIFS image (see the .c). */
#ifndef UBIKIT_TESTS_UBIFS_LPT_CHURN_H
#define UBIKIT_TESTS_UBIFS_LPT_CHURN_H
#include <stddef.h>
#include <stdint.h>

struct lpt_churn_stats {
	unsigned commits, checks, ltab_moves, lpt_lebs;
	uint32_t gc_runs, write_all_runs;
	int big_model;
	uint64_t master_sqnum;
	uint32_t ltab_free[16], ltab_dirty[16];
};

/* 0, or -1 with the reason in why */
/* scan_every: the main-area scan check every scan_every-th check (the LPT
 * area is checked every 16 commits); always at the end on a fresh mount */
int lpt_churn(const char *img, uint64_t seed, unsigned commits, unsigned scan_every, char *why, size_t whylen,
	      struct lpt_churn_stats *out);

#endif
