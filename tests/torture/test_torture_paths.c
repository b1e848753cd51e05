/* test_torture_paths — the torture runner's own paths, through the library
 * (include/ubikit/torture.h): options refused with a clear error, every
 * device, the trace, the export of post-cut flashes, the progress callback,
 * and above all that a run sees bugs: each planted bug (opts.plant) must
 * come back as a finding that names what was planted. The scenarios'
 * long runs are test_torture and test_torture_b. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include <ubikit/torture.h>

#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

static int run(struct ubikit_torture_opts *o, struct ubikit_torture_result *r)
{
	char err[512] = "";
	int rc = ubikit_torture_run(o, r, err, sizeof(err));
	if (rc)
		fail_msg("%s could not run: %d %s", ubikit_torture_scenario_name(o->scenario), rc, err);
	printf("%-18s %-7s seed %llu: %.1fs cycles %llu ops %llu cuts %llu checks %llu synced %llu remounts %llu "
	       "enospc %llu refused %llu findings %llu%s%s\n",
	       ubikit_torture_scenario_name(o->scenario), o->device ? o->device : "-", (unsigned long long)o->seed,
	       r->seconds, (unsigned long long)r->cycles, (unsigned long long)r->ops, (unsigned long long)r->cuts,
	       (unsigned long long)r->checks, (unsigned long long)r->synced_files_checked,
	       (unsigned long long)r->remounts, (unsigned long long)r->enospc, (unsigned long long)r->refused_mounts,
	       (unsigned long long)r->findings, r->findings ? ": " : "", r->findings ? r->first_finding : "");
	fflush(stdout);
	return rc;
}

static void no_findings(const struct ubikit_torture_result *r)
{
	if (r->findings)
		fail_msg("%llu findings; first: %s", (unsigned long long)r->findings, r->first_finding);
}

/* ---- options ---- */

static void t_names(void **state)
{
	(void)state;
	static const char *const want[] = {"mix",     "powercut", "powercut-recovery", "bitflip",
					   "badblock", "wearout",  "exhaustive"};
	assert_int_equal(sizeof(want) / sizeof(want[0]), UBIKIT_TORTURE_SCENARIOS);
	for (int s = 0; s < UBIKIT_TORTURE_SCENARIOS; s++) {
		assert_string_equal(ubikit_torture_scenario_name(s), want[s]);
		assert_int_equal(ubikit_torture_scenario_by_name(want[s]), s);
	}
	assert_int_equal(ubikit_torture_scenario_by_name("powercut-recover"), -1);
	assert_int_equal(ubikit_torture_scenario_by_name("all"), -1);
	assert_int_equal(ubikit_torture_scenario_by_name(NULL), -1);
	assert_string_equal(ubikit_torture_scenario_name(-1), "?");
	assert_string_equal(ubikit_torture_scenario_name(UBIKIT_TORTURE_SCENARIOS), "?");
}

static void t_bad_options(void **state)
{
	(void)state;
	struct ubikit_torture_result r;
	char err[256];
	struct ubikit_torture_opts o = {.scenario = UBIKIT_TORTURE_SCENARIOS, .max_cycles = 1};
	assert_int_equal(ubikit_torture_run(&o, &r, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "unknown scenario 7");
	o.scenario = -1;
	assert_int_equal(ubikit_torture_run(&o, &r, NULL, 0), -EINVAL); /* no message wanted */
	o.scenario = UBIKIT_TORTURE_MIX;
	o.plant = UBIKIT_TORTURE_PLANTS;
	assert_int_equal(ubikit_torture_run(&o, &r, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "unknown planted bug 7");
	o.plant = -1;
	assert_int_equal(ubikit_torture_run(&o, &r, NULL, 0), -EINVAL);
	o.plant = 0;
	o.device = "nand8k";
	assert_int_equal(ubikit_torture_run(&o, &r, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "unknown device 'nand8k' (nand2k, nand4k, nor, mlc)");
	assert_int_equal(r.cycles, 0);
	assert_int_equal(r.fresh_devices, 0);
	assert_int_equal(ubikit_torture_run(&o, &r, NULL, 0), -EINVAL);
	o.scenario = UBIKIT_TORTURE_EXHAUSTIVE; /* the other runner refuses it too */
	assert_int_equal(ubikit_torture_run(&o, &r, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "unknown device 'nand8k' (nand2k, nand4k, nor, mlc)");
}

/* ---- every device, the progress callback ---- */

struct prog {
	uint64_t calls, last_cycles, bad_order;
};

static void progress(void *arg, const struct ubikit_torture_result *r)
{
	struct prog *p = arg;
	p->calls++;
	if (r->cycles != p->last_cycles + 1)
		p->bad_order++;
	p->last_cycles = r->cycles;
}

static void t_devices(void **state)
{
	(void)state;
	static const char *const devs[] = {NULL, "nand2k", "nand4k", "nor", "mlc"};
	for (size_t i = 0; i < sizeof(devs) / sizeof(devs[0]); i++) {
		struct prog p = {0};
		struct ubikit_torture_opts o = {.scenario = UBIKIT_TORTURE_POWERCUT, .device = devs[i], .seed = 40 + i};
		o.max_cycles = 6;
		o.ops_per_cycle = 40;
		o.progress = progress;
		o.progress_arg = &p;
		struct ubikit_torture_result r;
		run(&o, &r);
		no_findings(&r);
		assert_int_equal(r.cycles, 6);
		assert_int_equal(p.calls, 6); /* once per cycle, in order */
		assert_int_equal(p.bad_order, 0);
		assert_true(r.ops >= 4);
		assert_true(r.cuts >= 1);
		assert_int_equal(r.fresh_devices, 1);
		assert_int_equal(r.checks, r.cuts + r.remounts);
		assert_true(r.flash_programs > 0 && r.flash_erases > 0);
	}
}

/* the default number of cycles (neither max_cycles nor max_seconds): 100 */
static void t_default_cycles(void **state)
{
	(void)state;
	struct ubikit_torture_opts o = {.scenario = UBIKIT_TORTURE_POWERCUT, .device = "nor", .seed = 3};
	o.ops_per_cycle = SANITIZED ? 2 : 5;
	struct ubikit_torture_result r;
	run(&o, &r);
	no_findings(&r);
	assert_int_equal(r.cycles, 100);
}

/* opts.fill_up: the fill bursts fill the device; ENOSPC comes, the
 * workload frees space (deleting on a full file system must work) and the
 * tree still equals the model exactly after every clean remount. The
 * default workload of the same seed never fills the device. */
static void t_fill_up(void **state)
{
	(void)state;
	struct ubikit_torture_opts o = {.scenario = UBIKIT_TORTURE_MIX, .device = "nand2k", .seed = 4};
	o.max_cycles = 10;
	struct ubikit_torture_result r;
	run(&o, &r);
	no_findings(&r);
	assert_int_equal(r.enospc, 0);
	o.fill_up = 1;
	run(&o, &r);
	no_findings(&r);
	assert_true(r.enospc >= 2);
	assert_int_equal(r.remounts, 10);
	assert_int_equal(r.checks, 10);
}

/* ---- the trace ---- */

/* Run with stderr in a file; returns its contents (malloc'd). */
static char *run_traced(struct ubikit_torture_opts *o, struct ubikit_torture_result *r)
{
	char path[] = "/tmp/ubikit-torture-trace-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	unlink(path);
	fflush(stderr);
	int saved = dup(STDERR_FILENO);
	assert_true(saved >= 0);
	assert_true(dup2(fd, STDERR_FILENO) >= 0);
	char err[512] = "";
	int rc = ubikit_torture_run(o, r, err, sizeof(err));
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	assert_int_equal(rc, 0);
	off_t len = lseek(fd, 0, SEEK_END);
	assert_true(len > 0);
	char *buf = malloc((size_t)len + 1);
	assert_non_null(buf);
	assert_int_equal(pread(fd, buf, (size_t)len, 0), len);
	buf[len] = 0;
	close(fd);
	return buf;
}

static void t_trace(void **state)
{
	(void)state;
	struct ubikit_torture_opts o = {.scenario = UBIKIT_TORTURE_POWERCUT, .device = "nand2k", .seed = 5};
	o.max_cycles = 3;
	o.ops_per_cycle = 40;
	o.trace = 1;
	struct ubikit_torture_result r;
	char *t = run_traced(&o, &r);
	no_findings(&r);
	/* -T: every cycle, the file operations, every cut */
	assert_non_null(strstr(t, "cycle 0\n"));
	assert_non_null(strstr(t, "cycle 2\n"));
	assert_non_null(strstr(t, " O_CREAT (existed "));
	assert_non_null(strstr(t, ": pwrite "));
	assert_non_null(strstr(t, "CUT: "));
	assert_null(strstr(t, "flash: ")); /* flash operations only with -T -T */
	size_t cuts = 0;
	for (const char *s = t; (s = strstr(s, "CUT: ")); s++)
		cuts++;
	assert_int_equal(cuts, r.cuts + r.refused_mounts);
	free(t);
	o.trace = 2;
	t = run_traced(&o, &r);
	no_findings(&r);
	assert_non_null(strstr(t, "    flash: program PEB "));
	assert_non_null(strstr(t, "    flash: erase PEB "));
	free(t);
}

/* ---- the export ---- */

static char *scratch(const char *what)
{
	const char *base = getenv("UBIKIT_SCRATCH");
	char *p = malloc(1024);
	snprintf(p, 1024, "%s/%s-XXXXXX", base && *base ? base : "/tmp", what);
	if (base && *base)
		mkdir(base, 0755);
	assert_non_null(mkdtemp(p));
	return p;
}

static void rm_tree(const char *path)
{
	char cmd[1200];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
	assert_int_equal(system(cmd), 0);
}

static long file_size(const char *path)
{
	struct stat st;
	return stat(path, &st) ? -1 : (long)st.st_size;
}

static void t_export(void **state)
{
	(void)state;
	char *dir = scratch("torture-export");
	struct ubikit_torture_opts o = {.scenario = UBIKIT_TORTURE_POWERCUT, .device = "nand2k", .seed = 12};
	o.max_cycles = 6;
	o.export_dir = dir;
	o.export_every = 2;
	struct ubikit_torture_result r;
	run(&o, &r);
	no_findings(&r);
	assert_true(r.cuts >= 4);
	/* every 2nd cut: NNNNNN.flash, the whole device (64 PEBs of 128 KiB,
	 * no OOB, starting with an EC header), and NNNNNN.synced, the tree */
	/* the k-th recovery (k = 1, 2, ...) exports when k - 1 cuts were
	 * survived and k - 1 is a multiple of 2: NNNNNN = k - 1 */
	unsigned flashes = 0;
	for (uint64_t c = 1; c <= r.cuts + 1; c++) {
		char p[1200];
		snprintf(p, sizeof(p), "%s/%06llu.flash", dir, (unsigned long long)c);
		long sz = file_size(p);
		if (c % 2 || c >= r.cuts) {
			assert_int_equal(sz, -1);
			continue;
		}
		assert_int_equal(sz, 64L * 128 * 1024);
		FILE *f = fopen(p, "rb");
		assert_non_null(f);
		char magic[4];
		assert_int_equal(fread(magic, 1, 4, f), 4);
		fclose(f);
		assert_memory_equal(magic, "UBI#", 4);
		snprintf(p, sizeof(p), "%s/%06llu.synced/d/e", dir, (unsigned long long)c);
		struct stat st;
		assert_int_equal(stat(p, &st), 0);
		assert_true(S_ISDIR(st.st_mode));
		flashes++;
	}
	assert_int_equal(flashes, (r.cuts - 1) / 2);
	rm_tree(dir);
	free(dir);
}

/* an export that cannot be written is a finding that says where and why */
static void t_export_fails(void **state)
{
	(void)state;
	struct ubikit_torture_opts o = {.scenario = UBIKIT_TORTURE_POWERCUT, .device = "nand2k", .seed = 12};
	o.max_cycles = 2;
	o.export_dir = "/nonexistent/ubikit-export";
	o.export_every = 1;
	struct ubikit_torture_result r;
	run(&o, &r);
	assert_true(r.findings >= 1);
	assert_non_null(strstr(r.first_finding, "export to /nonexistent/ubikit-export: No such file or directory"));
	/* the first export is at the second cut (cuts survived: 1) */
	assert_non_null(strstr(r.first_finding, "powercut nand2k seed 12 cycle 1"));
}

/* ---- planted bugs: the run must see each ---- */

/* fsync returns 0 and writes nothing: a synced file is lost or old after a
 * cut. The finding names the file and what differs. */
static void t_plant_lost_fsync(void **state)
{
	(void)state;
	struct ubikit_torture_opts o = {.scenario = UBIKIT_TORTURE_POWERCUT, .device = "nand2k", .seed = 12};
	o.max_cycles = SANITIZED ? 8 : 20; /* the finding comes in cycle 0 */
	o.plant = UBIKIT_TORTURE_PLANT_LOST_FSYNC;
	struct ubikit_torture_result r;
	run(&o, &r);
	assert_true(r.findings >= 1);
	const char *f = r.first_finding;
	assert_true(strstr(f, " was synced (") || strstr(f, " bytes after the cut; synced were ") ||
		    strstr(f, " after the cut; synced was 0x"));
	assert_true(strstr(f, ": /f") || strstr(f, ": /d/g") || strstr(f, ": /d/e/h"));
	/* the same run without the planted bug finds nothing */
	o.plant = 0;
	run(&o, &r);
	no_findings(&r);
}

/* One byte of a synced file changed on the flash, ECC silent: the file's
 * read (the node's CRC) or the strict check must say so, naming it. */
static void t_plant_flip_synced(void **state)
{
	(void)state;
	/* seed 3: the changed node is in the index, not in the journal the
	 * recovery replays (seeds 1, 2: the replay refuses the mount) */
	struct ubikit_torture_opts o = {.scenario = UBIKIT_TORTURE_POWERCUT, .device = "nand2k", .seed = 3};
	o.max_cycles = SANITIZED ? 8 : 20; /* the finding comes in cycle 0 */
	o.plant = UBIKIT_TORTURE_PLANT_FLIP_SYNCED;
	o.no_check = 1; /* the model's check: it names the file */
	struct ubikit_torture_result r;
	run(&o, &r);
	assert_int_equal(r.findings, 1);
	const char *f = r.first_finding, *pl = strstr(f, "(planted: byte ");
	assert_non_null(pl);
	char path[32];
	size_t byte;
	assert_int_equal(sscanf(pl, "(planted: byte %zu of %31s changed)", &byte, path), 2);
	path[strcspn(path, ")")] = 0;
	char want[64];
	snprintf(want, sizeof(want), ": %s: read error -", path);
	if (!strstr(f, want))
		fail_msg("the finding does not say that %s reads with an error: %s", path, f);
	/* with the strict check, it sees the corrupt node first; with an
	 * export directory the flash it saw goes to finding-CYCLE.flash (and
	 * nothing else: no cut reaches the export interval) */
	o.no_check = 0;
	char *dir = scratch("torture-finding");
	o.export_dir = dir;
	o.export_every = 1000;
	run(&o, &r);
	assert_int_equal(r.findings, 1);
	assert_non_null(strstr(r.first_finding, "(planted: byte "));
	assert_non_null(strstr(r.first_finding, "fsck: "));
	unsigned long long cyc;
	const char *cy = strstr(r.first_finding, " cycle ");
	assert_non_null(cy);
	assert_int_equal(sscanf(cy, " cycle %llu", &cyc), 1);
	char fp[1200];
	snprintf(fp, sizeof(fp), "%s/finding-%06llu.flash", dir, cyc);
	assert_int_equal(file_size(fp), 64L * 128 * 1024);
	unsigned entries = 0;
	DIR *dd = opendir(dir);
	assert_non_null(dd);
	for (struct dirent *de; (de = readdir(dd));)
		entries += de->d_name[0] != '.';
	closedir(dd);
	assert_int_equal(entries, 1);
	rm_tree(dir);
	free(dir);
	o.export_dir = NULL;
	/* NOR, seed 2: the changed copy is in the journal the recovery
	 * replays; the replay refuses the mount on the node's CRC */
	o.device = "nor";
	o.seed = 2;
	run(&o, &r);
	assert_int_equal(r.findings, 1);
	assert_int_equal(r.refused_mounts, 1);
	assert_non_null(strstr(r.first_finding, "(planted: byte 981 of /f0 changed)"));
	assert_non_null(strstr(r.first_finding, "mount after the power cut failed: LEB 13:832: bad node CRC"));
}

/* Writes through the handles the workload keeps open are dropped (reported
 * as done), no cut needed: the read back through the handle, the read by
 * path and the exact comparison after a clean remount each see it, by
 * seed (mix, nand2k, cycle 0 each). */
static void t_plant_lost_write(void **state)
{
	(void)state;
	static const struct {
		uint64_t seed;
		const char *what;
	} want[] = {
		{1, "mix nand2k seed 1 cycle 0: read through an open handle: 417 bytes read, the model has 207395"},
		{3, "mix nand2k seed 3 cycle 0: /f0: contents differ from the model at byte 81850 of 187491"},
		{4, "mix nand2k seed 4 cycle 0: after a clean remount: /d/g11: contents differ from the model at byte "
		    "132306 of 353551"},
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct ubikit_torture_opts o = {.scenario = UBIKIT_TORTURE_MIX, .device = "nand2k", .seed = want[i].seed};
		o.max_cycles = 1;
		o.plant = UBIKIT_TORTURE_PLANT_LOST_WRITE;
		struct ubikit_torture_result r;
		run(&o, &r);
		assert_int_equal(r.findings, 1);
		assert_string_equal(r.first_finding, want[i].what);
		o.plant = 0; /* the same cycle without it: clean */
		run(&o, &r);
		no_findings(&r);
		assert_int_equal(r.remounts, 1);
	}
}

/* fsync fails with -EIO though nothing failed: the chained runner and the
 * exhaustive one each report an error no fault explains (and the
 * exhaustive one first recovers the cut point before it). */
static void t_plant_fsync_eio(void **state)
{
	(void)state;
	struct ubikit_torture_opts o = {.scenario = UBIKIT_TORTURE_MIX, .device = "nand2k", .seed = 1};
	o.max_cycles = 3;
	o.plant = UBIKIT_TORTURE_PLANT_FSYNC_EIO;
	struct ubikit_torture_result r;
	run(&o, &r);
	assert_int_equal(r.findings, 3); /* one a cycle, each on a new device */
	assert_int_equal(r.fresh_devices, 3);
	assert_string_equal(r.first_finding, "mix nand2k seed 1 cycle 0: a file operation failed without a fault to "
					     "explain it: Input/output error (-5)");
	o.scenario = UBIKIT_TORTURE_EXHAUSTIVE;
	o.seed = 2;
	o.ops_per_cycle = 12;
	o.max_cycles = 50;
	run(&o, &r);
	assert_int_equal(r.findings, 1);
	assert_int_equal(r.cuts, 1);
	assert_int_equal(r.cycles, 2); /* the run ends at the first uncut workload */
	assert_string_equal(r.first_finding, "exhaustive nand2k seed 2 cut point 2: the workload failed without a cut: "
					     "Input/output error (-5)");
}

/* A refused recovery mount is a finding, counted, and with an export
 * directory the flash the mount refused goes there. */
static void t_plant_erase_all(void **state)
{
	(void)state;
	char *dir = scratch("torture-refused");
	struct ubikit_torture_opts o = {.scenario = UBIKIT_TORTURE_POWERCUT, .device = "nand2k", .seed = 12};
	o.max_cycles = 3;
	o.plant = UBIKIT_TORTURE_PLANT_ERASE_ALL;
	o.export_dir = dir;
	o.export_every = 0; /* no post-cut exports, only the refused flash */
	struct ubikit_torture_result r;
	run(&o, &r);
	assert_int_equal(r.findings, 1);
	assert_int_equal(r.refused_mounts, 1);
	assert_non_null(strstr(r.first_finding, "(planted: every PEB erased)"));
	assert_non_null(strstr(r.first_finding, "mount after the power cut failed: "));
	assert_int_equal(r.fresh_devices, 2); /* the run goes on with a new device */
	char p[1200];
	snprintf(p, sizeof(p), "%s/refused-000000.flash", dir);
	FILE *f = fopen(p, "rb");
	assert_non_null(f);
	uint8_t buf[4096];
	size_t n, total = 0, ff = 0;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0) {
		for (size_t i = 0; i < n; i++)
			ff += buf[i] == 0xFF;
		total += n;
	}
	fclose(f);
	assert_int_equal(total, 64 * 128 * 1024);
	assert_int_equal(ff, total); /* what the mount saw: all erased */
	rm_tree(dir);
	free(dir);
}

/* The stack programs a page twice: the simulator refuses the second
 * program where the page allows one (nand4k: NOP 1), and the run reports
 * it as a finding naming the rule; the same run without the planted bug
 * finds nothing. */
static void t_plant_reprogram(void **state)
{
	(void)state;
	struct ubikit_torture_opts o = {.scenario = UBIKIT_TORTURE_MIX, .device = "nand4k", .seed = 5};
	o.max_cycles = 3;
	o.plant = UBIKIT_TORTURE_PLANT_REPROGRAM;
	struct ubikit_torture_result r;
	run(&o, &r);
	assert_int_equal(r.findings, 1);
	if (!strstr(r.first_finding, "the stack programmed or erased the flash against its rules 1 time(s); first: ") ||
	    !strstr(r.first_finding, "(NOP limit 1)"))
		fail_msg("not the planted double program: %s", r.first_finding);
	o.plant = 0;
	run(&o, &r);
	no_findings(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_names),
		cmocka_unit_test(t_bad_options),
		cmocka_unit_test(t_devices),
		cmocka_unit_test(t_default_cycles),
		cmocka_unit_test(t_fill_up),
		cmocka_unit_test(t_trace),
		cmocka_unit_test(t_export),
		cmocka_unit_test(t_export_fails),
		cmocka_unit_test(t_plant_lost_fsync),
		cmocka_unit_test(t_plant_flip_synced),
		cmocka_unit_test(t_plant_lost_write),
		cmocka_unit_test(t_plant_fsync_eio),
		cmocka_unit_test(t_plant_erase_all),
		cmocka_unit_test(t_plant_reprogram),
	};
	const char *only = getenv("UBIKIT_TEST_FILTER");
	if (only && *only)
		cmocka_set_test_filter(only);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
