/* cmd_torture — 'ubikit torture': run the torture scenarios of the library
 * (include/ubikit/torture.h) and print what they found. Exit 0 when no
 * scenario found anything, 1 when one did, 2 on a usage error. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ubikit/torture.h>

#include "commands.h"

static const char *const prog = "ubikit torture";

static void usage(FILE *out)
{
	fprintf(out,
		"usage: ubikit torture [options] [SCENARIO...]\n\n"
		"Model-checked random file operations on a simulated flash, with faults:\n"
		"  mix                the workload alone, clean remounts, exact comparison\n"
		"  powercut           a power cut (inside a page program or an erase) every cycle\n"
		"  powercut-recovery  the same, often cut again inside the recovery mount\n"
		"  bitflip            correctable bit flips and transient uncorrectable reads, with cuts\n"
		"  badblock           program/erase failures until UBI's bad-block reserve is gone\n"
		"  wearout            MLC, endurance 3000, worn blocks dying until read-only\n"
		"  exhaustive         a small workload cut at each of its flash operations\n"
		"  all                each of the above in turn (the default)\n"
		"After every cut: read-write recovery mount, strict check, every fsync'ed file\n"
		"with exactly its synced contents, nothing outside the model; then go on.\n\n"
		"options:\n"
		"  -d, --device NAME     nand2k (default; wearout: mlc), nand4k, nor, mlc\n"
		"  -s, --seed N          seed (default 1); a run replays from it\n"
		"  -t, --seconds S       time per scenario (default 10)\n"
		"  -n, --cycles N        stop a scenario after N cycles instead\n"
		"  -o, --ops N           file operations per cycle\n"
		"  -e, --export DIR      post-cut flash images (raw PEBs) + the synced files they must hold,\n"
		"                        and the flash of the first finding (finding-CYCLE.flash)\n"
		"      --export-every N  every Nth cut (default 50)\n"
		"  -v, --verbose         progress once a second\n"
		"  -T, --trace           every file operation and cut on stderr (to follow a finding);\n"
		"                        twice: every flash program and erase too\n"
		"      --erase-at-unmap  UBI erases unmapped PEBs early, as the kernel's background\n"
		"                        erase may (UBIFS must not read an unmapped LEB again)\n"
		"      --erase-cut-per-page  a cut erase damages each page on its own, not the whole\n"
		"                        block alike as NAND does (harsher; Linux's UBI refuses some results)\n"
		"      --fill            the workload's fill bursts go on until the file system is\n"
		"                        full (ENOSPC), then it frees space (default: seldom full)\n"
		"  -h, --help\n");
}

struct prog_state {
	int verbose;
	double last;
};

static void progress(void *arg, const struct ubikit_torture_result *r)
{
	struct prog_state *p = arg;
	if (!p->verbose || r->seconds - p->last < 1.0)
		return;
	p->last = r->seconds;
	fprintf(stderr, "  %.0fs: %llu cycles, %llu cuts, %llu findings\n", r->seconds, (unsigned long long)r->cycles,
		(unsigned long long)r->cuts, (unsigned long long)r->findings);
}

static void report(const char *name, const char *dev, const struct ubikit_torture_result *r)
{
	printf("%-18s %-7s %6.1fs  cycles %llu  ops %llu  cuts %llu (program %llu, erase %llu, in recovery %llu, "
	       "%.0f/s)  checks %llu  synced files verified %llu  remounts %llu  ENOSPC %llu",
	       name, dev, r->seconds, (unsigned long long)r->cycles, (unsigned long long)r->ops,
	       (unsigned long long)r->cuts, (unsigned long long)r->cuts_in_program,
	       (unsigned long long)r->cuts_in_erase, (unsigned long long)r->cuts_in_recovery,
	       r->seconds > 0 ? (double)r->cuts / r->seconds : 0.0, (unsigned long long)r->checks,
	       (unsigned long long)r->synced_files_checked, (unsigned long long)r->remounts,
	       (unsigned long long)r->enospc);
	if (r->bitflips_corrected || r->uncorrectable_reads)
		printf("  bit flips corrected %llu, uncorrectable reads %llu", (unsigned long long)r->bitflips_corrected,
		       (unsigned long long)r->uncorrectable_reads);
	if (r->bad_blocks || r->read_only)
		printf("  blocks gone bad %llu%s", (unsigned long long)r->bad_blocks,
		       r->read_only ? ", reserve exhausted: read-only, synced data checked" : "");
	printf("  flash programs %llu erases %llu  devices %llu  findings %llu\n", (unsigned long long)r->flash_programs,
	       (unsigned long long)r->flash_erases, (unsigned long long)r->fresh_devices,
	       (unsigned long long)r->findings);
	if (r->findings)
		printf("  FIRST FINDING: %s\n", r->first_finding);
}

int cmd_torture(int argc, char **argv)
{
	static const struct option lo[] = {
		{"device", required_argument, NULL, 'd'}, {"seed", required_argument, NULL, 's'},
		{"seconds", required_argument, NULL, 't'}, {"cycles", required_argument, NULL, 'n'},
		{"ops", required_argument, NULL, 'o'},     {"export", required_argument, NULL, 'e'},
		{"export-every", required_argument, NULL, 'E'}, {"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'}, {"trace", no_argument, NULL, 'T'}, {"erase-at-unmap", no_argument, NULL, 'U'}, {"erase-cut-per-page", no_argument, NULL, 'P'},
		{"fill", no_argument, NULL, 'F'},          {NULL, 0, NULL, 0},
	};
	struct ubikit_torture_opts o = {.seed = 1, .max_seconds = 10, .export_every = 50};
	struct prog_state ps = {0};
	int c;
	char *end;
	optind = 1;
	while ((c = getopt_long(argc, argv, "d:s:t:n:o:e:vTh", lo, NULL)) != -1) {
		switch (c) {
		case 'd':
			o.device = optarg;
			break;
		case 's':
			o.seed = strtoull(optarg, &end, 0);
			if (*end)
				goto bad;
			break;
		case 't':
			o.max_seconds = strtod(optarg, &end);
			if (*end || o.max_seconds < 0)
				goto bad;
			break;
		case 'n':
			o.max_cycles = strtoull(optarg, &end, 0);
			if (*end)
				goto bad;
			if (o.max_cycles)
				o.max_seconds = 0;
			break;
		case 'o':
			o.ops_per_cycle = (unsigned)strtoul(optarg, &end, 0);
			if (*end)
				goto bad;
			break;
		case 'e':
			o.export_dir = optarg;
			break;
		case 'E':
			o.export_every = (unsigned)strtoul(optarg, &end, 0);
			if (*end || !o.export_every)
				goto bad;
			break;
		case 'v':
			ps.verbose = 1;
			break;
		case 'U':
			o.erase_at_unmap = 1;
			break;
		case 'P':
			o.erase_cut_per_page = 1;
			break;
		case 'F':
			o.fill_up = 1;
			break;
		case 'T':
			o.trace++;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (o.device && strcmp(o.device, "nand2k") && strcmp(o.device, "nand4k") && strcmp(o.device, "nor") &&
	    strcmp(o.device, "mlc")) {
		fprintf(stderr, "%s: unknown device '%s' (nand2k, nand4k, nor, mlc)\n", prog, o.device);
		return 2;
	}
	int list[UBIKIT_TORTURE_SCENARIOS], n = 0;
	for (int i = optind; i < argc; i++) {
		if (!strcmp(argv[i], "all")) {
			for (int s = 0; s < UBIKIT_TORTURE_SCENARIOS; s++)
				list[n++ % UBIKIT_TORTURE_SCENARIOS] = s;
			continue;
		}
		int s = ubikit_torture_scenario_by_name(argv[i]);
		if (s < 0) {
			fprintf(stderr, "%s: unknown scenario '%s' (see --help)\n", prog, argv[i]);
			return 2;
		}
		if (n < UBIKIT_TORTURE_SCENARIOS)
			list[n++] = s;
	}
	if (!n)
		for (int s = 0; s < UBIKIT_TORTURE_SCENARIOS; s++)
			list[n++] = s;
	if (n > UBIKIT_TORTURE_SCENARIOS)
		n = UBIKIT_TORTURE_SCENARIOS;
	o.progress = progress;
	o.progress_arg = &ps;
	int found = 0;
	for (int i = 0; i < n; i++) {
		struct ubikit_torture_result r;
		char err[512] = "";
		o.scenario = list[i];
		ps.last = 0;
		int rc = ubikit_torture_run(&o, &r, err, sizeof(err));
		const char *dev = o.device ? o.device : list[i] == UBIKIT_TORTURE_WEAROUT ? "mlc" : "nand2k";
		if (rc) {
			fprintf(stderr, "%s: %s on %s could not run: %s\n", prog, ubikit_torture_scenario_name(list[i]), dev,
				err);
			return 1;
		}
		report(ubikit_torture_scenario_name(list[i]), dev, &r);
		fflush(stdout);
		found |= r.findings != 0;
	}
	return found ? 1 : 0;
bad:
	fprintf(stderr, "%s: bad value '%s' for -%c\n", prog, optarg, c);
	return 2;
}
