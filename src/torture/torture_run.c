/* torture_run — the scenarios of `ubikit torture`: cycles of the model's
 * random workload on a simulated device, each ending (by scenario) in a
 * power cut and a checked recovery, a clean remount and an exact
 * comparison, or under bit flips, failing and worn-out blocks until UBI's
 * reserve is gone; and the exhaustive run, one fresh device per cut point
 * of a small workload. Every problem becomes a finding naming the seed, the
 * cycle and the flash operation the cut hit. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "flash/flash_sim.h"
#include "torture/torture_priv.h"

static const char *const names[UBIKIT_TORTURE_SCENARIOS] = {
	"mix", "powercut", "powercut-recovery", "bitflip", "badblock", "wearout", "exhaustive",
};

int ubikit_torture_scenario_by_name(const char *name)
{
	for (int i = 0; i < UBIKIT_TORTURE_SCENARIOS; i++)
		if (name && !strcmp(name, names[i]))
			return i;
	return -1;
}

const char *ubikit_torture_scenario_name(int s)
{
	return s >= 0 && s < UBIKIT_TORTURE_SCENARIOS ? names[s] : "?";
}

struct run {
	const struct ubikit_torture_opts *o;
	struct ubikit_torture_result *r;
	const char *device;
	struct tdev d;
	int have_dev;
	struct tmodel m;
	struct util_prng rng;
	uint64_t wl_flash_ops, wl_file_ops; /* flash operations per file operation, measured */
	char ctx[256];      /* seed / cycle / cut operation, for findings */
	char msg[512];
	struct timespec t0;
	int ro_seen;        /* UBI went read-only in this device's life */
	int planted;        /* the planted bug (opts.plant) has been put on the flash */
};

static double elapsed(const struct run *u)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - u->t0.tv_sec) + (double)(t.tv_nsec - u->t0.tv_nsec) / 1e9;
}

static void finding(struct run *u, const char *fmt, ...)
{
	u->r->findings++;
	if (u->r->findings > 1)
		return;
	if (u->o->export_dir && u->have_dev) { /* the flash the finding was made on, to debug */
		char p[1024];
		snprintf(p, sizeof(p), "%s/finding-%06llu.flash", u->o->export_dir, (unsigned long long)u->r->cycles);
		tdev_export(&u->d, p);
	}
	char what[600];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(u->r->first_finding, sizeof(u->r->first_finding), "%s %.10s seed %llu %.230s: %.470s",
		 ubikit_torture_scenario_name(u->o->scenario), u->device, (unsigned long long)u->o->seed, u->ctx,
		 what);
}

static int scen(const struct run *u)
{
	return u->o->scenario;
}

static void drop_device(struct run *u)
{
	if (!u->have_dev)
		return;
	struct flash_stats fs;
	flash_sim_get_stats(u->d.sim, &fs);
	u->r->bitflips_corrected += fs.bitflips_corrected;
	u->r->uncorrectable_reads += fs.ecc_failures;
	u->r->flash_programs += fs.programs;
	u->r->flash_erases += fs.erases;
	u->r->bad_blocks += u->d.bad_marked;
	tm_drop_handles(&u->m);
	tdev_destroy(&u->d);
	tm_free(&u->m);
	u->have_dev = 0;
}

static int new_device(struct run *u)
{
	drop_device(u);
	int s = scen(u);
	uint64_t seed = u->o->seed * 1000003u + u->r->fresh_devices;
	double flips = s == UBIKIT_TORTURE_BITFLIP ? 2e-3 : 0;
	double uncorr = s == UBIKIT_TORTURE_BITFLIP ? 3e-4 : 0;
	uint32_t wear = s == UBIKIT_TORTURE_WEAROUT ? 2940 : 0;
	int err = tdev_create(&u->d, u->device, seed, flips, uncorr, wear, (u->o->erase_at_unmap ? TDEV_ERASE_AT_UNMAP : 0u) | (u->o->erase_cut_per_page ? TDEV_ERASE_CUT_PAGES : 0u),
			      u->msg, sizeof(u->msg));
	if (err)
		return err;
	u->have_dev = 1;
	u->ro_seen = 0;
	u->r->fresh_devices++;
	size_t lebs = u->o->fill_up && u->d.vol.leb_count / 8 > 3 ? u->d.vol.leb_count / 8 : 3;
	tm_init(&u->m, seed, (size_t)u->d.vol.leb_size * lebs);
	u->m.fill_up = u->o->fill_up;
	u->m.trace = u->o->trace;
	u->m.lost_fsync = u->o->plant == UBIKIT_TORTURE_PLANT_LOST_FSYNC;
	u->m.lost_handle_writes = u->o->plant == UBIKIT_TORTURE_PLANT_LOST_WRITE;
	u->m.fsync_eio = u->o->plant == UBIKIT_TORTURE_PLANT_FSYNC_EIO;
	u->d.plant_reprogram = u->o->plant == UBIKIT_TORTURE_PLANT_REPROGRAM;
	u->d.trace_flash = u->o->trace > 1;
	err = tm_make_dirs(u->d.fs);
	if (err)
		snprintf(u->msg, sizeof(u->msg), "making the directories on a fresh device: %d", err);
	return err;
}

/* A program or erase the simulator refused as against NAND's rules: 1 */
static int flash_rules_broken(struct run *u)
{
	if (!u->have_dev || u->d.violations <= u->d.violations_reported)
		return 0;
	finding(u, "the stack programmed or erased the flash against its rules %llu time(s); first: %s",
		(unsigned long long)(u->d.violations - u->d.violations_reported), u->d.violation_msg);
	u->d.violations_reported = u->d.violations;
	return 1;
}

/* A mount after a cut (or at end of life): strict check, then every
 * synced file against the model. 1 on a finding. */
static int check_mounted(struct run *u)
{
	if (flash_rules_broken(u))
		return 1;
	if (!u->o->no_check && tdev_check(&u->d, u->msg, sizeof(u->msg))) {
		finding(u, "%s", u->msg);
		return 1;
	}
	u->r->checks++;
	if (tm_check_after_cut(&u->m, u->d.fs, &u->r->synced_files_checked)) {
		finding(u, "%s", u->m.err);
		return 1;
	}
	return 0;
}

/* scenarios in which blocks die: UBI may end read-only or unattachable */
static int dying_blocks(struct run *u)
{
	return scen(u) == UBIKIT_TORTURE_WEAROUT || scen(u) == UBIKIT_TORTURE_BADBLOCK ||
	       scen(u) == UBIKIT_TORTURE_BITFLIP;
}

static int end_of_life(struct run *u);

static int ubi_is_ro(struct run *u)
{
	struct ubi_dev_info di;
	return u->d.ubi && !ubi_dev_info(u->d.ubi, &di) && di.read_only;
}

/* The planted bugs that change the flash behind the stack's back (test
 * hooks, opts.plant), once per run, after a cut and before its recovery;
 * the context names what was done, for the finding to be judged by. */
static void plant_after_cut(struct run *u)
{
	size_t cl = strlen(u->ctx);
	if (u->planted)
		return;
	if (u->o->plant == UBIKIT_TORTURE_PLANT_ERASE_ALL) {
		for (uint32_t p = 0; p < u->d.sim->geo.peb_count; p++)
			flash_erase(u->d.sim, p); /* a bad block stays bad: its error does not matter */
		u->planted = 1;
		snprintf(u->ctx + cl, sizeof(u->ctx) - cl, " (planted: every PEB erased)");
		return;
	}
	if (u->o->plant != UBIKIT_TORTURE_PLANT_FLIP_SYNCED)
		return;
	for (int i = 0; i < TM_NAMES; i++) {
		if (!u->m.pinned[i] || u->m.plen[i] < 64)
			continue;
		/* 32 bytes from the middle of the file's first 4 KiB block */
		size_t off = (u->m.plen[i] < 4096 ? u->m.plen[i] : 4096) / 2 - 16;
		const uint8_t *pat = u->m.pdata[i] + off;
		int distinct = 0, seen[256] = {0};
		for (int k = 0; k < 32; k++)
			distinct += !seen[pat[k]]++;
		if (distinct < 16)
			continue; /* a hole or text: other places may hold the same bytes */
		if (tdev_change_copies(&u->d, pat, 32) > 0) {
			char p[32];
			u->planted = 1;
			snprintf(u->ctx + cl, sizeof(u->ctx) - cl, " (planted: byte %zu of %s changed)", off + 16,
				 tm_path(i, p));
			return;
		}
	}
}

/* "program of PEB 3:2048 len 2048, then 2 cut(s) in recovery mounts, the
 * last in the erase of PEB 9" */
static void cut_desc(char *out, size_t n, const char *cut_op, int rec_cuts, const char *rec_op)
{
	if (rec_cuts)
		snprintf(out, n, "%.90s, then %d cut(s) in recovery mounts, the last in the %.90s", cut_op, rec_cuts,
			 rec_op);
	else
		snprintf(out, n, "%.90s", cut_op);
}

/* Mount after a cut: read-write recovery, maybe cut again inside it. */
static int recover(struct run *u)
{
	char cut_op[96], rec_op[96] = "", desc[256];
	int rec_cuts = 0;
	snprintf(cut_op, sizeof(cut_op), "%s", u->d.last_op);
	int in_erase = u->d.last_was_erase;
	tm_drop_handles(&u->m);
	tdev_unmount(&u->d);
	flash_sim_reopen(u->d.sim);
	if (u->o->export_dir && u->o->export_every && u->r->cuts % u->o->export_every == 0 && u->r->cuts) {
		char p[1024];
		snprintf(p, sizeof(p), "%s/%06llu.flash", u->o->export_dir, (unsigned long long)u->r->cuts);
		int e = tdev_export(&u->d, p);
		snprintf(p, sizeof(p), "%s/%06llu.synced", u->o->export_dir, (unsigned long long)u->r->cuts);
		if (!e)
			e = tm_write_list(&u->m, NULL, p);
		if (e)
			finding(u, "export to %s: %s", u->o->export_dir, strerror(-e));
	}
	if (u->o->plant)
		plant_after_cut(u);
	size_t cl = strlen(u->ctx);
	if (scen(u) == UBIKIT_TORTURE_POWERCUT_RECOVERY) {
		for (int k = 0; k < 3 && util_prng_below(&u->rng, 2); k++) {
			flash_sim_power_cut_after(u->d.sim, 1 + util_prng_below(&u->rng, 60));
			int err = tdev_mount(&u->d, 0, u->msg, sizeof(u->msg));
			if (!flash_sim_is_cut(u->d.sim)) {
				flash_sim_power_cut_after(u->d.sim, 0);
				if (err)
					break; /* the plain mount below says it again */
				cut_desc(desc, sizeof(desc), cut_op, rec_cuts, rec_op);
				snprintf(u->ctx + cl, sizeof(u->ctx) - cl, " (cut: %s; recovery mount not cut)", desc);
				goto mounted;
			}
			u->r->cuts_in_recovery++;
			rec_cuts++;
			snprintf(rec_op, sizeof(rec_op), "%s", u->d.last_op);
			tdev_unmount(&u->d);
			flash_sim_reopen(u->d.sim);
		}
	}
	flash_sim_power_cut_after(u->d.sim, 0);
	cut_desc(desc, sizeof(desc), cut_op, rec_cuts, rec_op);
	snprintf(u->ctx + cl, sizeof(u->ctx) - cl, " (cut: %s)", desc);
	if (u->o->trace)
		fprintf(stderr, "CUT: %s\n", desc);
	int merr = tdev_mount(&u->d, 0, u->msg, sizeof(u->msg));
	if (merr == -ENOSPC && dying_blocks(u)) {
		/* blocks died until fewer good PEBs are left than the volume
		 * reserves plus WL's and EBA's one each: Linux refuses to attach
		 * such a device too (ubi_wl_init, the volume table) */
		u->r->read_only++;
		u->r->eol_unattachable++;
		return 1;
	}
	if (merr && u->d.mount_left_ubi_ro && dying_blocks(u)) {
		/* the recovery's own erases or writes met a dying block with no
		 * reserve left: UBI is read-only, as Linux's would be; what was
		 * synced must still read back on a read-only mount */
		end_of_life(u);
		return 1;
	}
	if (merr) {
		if (u->o->export_dir) { /* the flash as the failed mount saw it, to debug */
			char p[1024];
			snprintf(p, sizeof(p), "%s/refused-%06llu.flash", u->o->export_dir,
				 (unsigned long long)u->r->cycles);
			tdev_export(&u->d, p);
		}
		u->r->refused_mounts++;
		finding(u, "mount after the power cut failed: %s", u->msg);
		return 1;
	}
mounted:
	if (check_mounted(u))
		return 1;
	if (in_erase)
		u->r->cuts_in_erase++;
	else
		u->r->cuts_in_program++;
	u->r->cuts++;
	if (tm_adopt(&u->m, u->d.fs)) {
		if (ubi_is_ro(u))
			return 0; /* the reserve ran out during the recovery's commit: the caller sees it */
		finding(u, "%s", u->m.err);
		return 1;
	}
	return 0;
}

/* UBI has gone read-only (no reserve left): what was synced must still be
 * there on a read-only mount, and the file system must check clean. */
static int end_of_life(struct run *u)
{
	u->r->read_only++;
	u->ro_seen = 1;
	size_t cl = strlen(u->ctx);
	snprintf(u->ctx + cl, sizeof(u->ctx) - cl, " (UBI read-only: reserve gone)");
	/* first through the live mount: the synced files read back */
	if (u->d.fs && !flash_sim_is_cut(u->d.sim) &&
	    tm_check_after_cut(&u->m, u->d.fs, &u->r->synced_files_checked)) {
		finding(u, "on the live mount once UBI went read-only: %s", u->m.err);
		return 1;
	}
	tm_drop_handles(&u->m);
	tdev_unmount(&u->d);
	if (flash_sim_is_cut(u->d.sim))
		flash_sim_reopen(u->d.sim);
	int err = tdev_mount(&u->d, 1, u->msg, sizeof(u->msg));
	if (err == -ENOSPC) {
		/* Linux's rule too (ubi_wl_init, the volume table): fewer good
		 * PEBs than the volumes reserve plus WL and EBA's two refuses to
		 * attach; here the worn blocks read as bad after the reboot */
		u->r->eol_unattachable++;
		return 0;
	}
	if (err) {
		finding(u, "read-only mount after the reserve ran out: %s", u->msg);
		return 1;
	}
	if (check_mounted(u))
		return 1;
	return 0;
}

static void inject_faults(struct run *u)
{
	int s = scen(u);
	if (s != UBIKIT_TORTURE_BADBLOCK)
		return;
	uint32_t n = u->d.sim->geo.peb_count;
	if (util_prng_below(&u->rng, 3))
		return;
	uint32_t p = (uint32_t)util_prng_below(&u->rng, n);
	if (util_prng_below(&u->rng, 2))
		flash_sim_fail_next_erase(u->d.sim, p);
	else
		flash_sim_fail_next_program(u->d.sim, p);
}

static int uses_cuts(int s)
{
	return s != UBIKIT_TORTURE_MIX && s != UBIKIT_TORTURE_EXHAUSTIVE;
}

/* One cycle of a chained scenario. 0 go on, 1 the device must be replaced. */
static int cycle(struct run *u)
{
	int s = scen(u);
	unsigned nops = u->o->ops_per_cycle ? u->o->ops_per_cycle : s == UBIKIT_TORTURE_MIX ? 150 : 100;
	snprintf(u->ctx, sizeof(u->ctx), "cycle %llu", (unsigned long long)u->r->cycles);
	if (u->o->trace)
		fprintf(stderr, "cycle %llu\n", (unsigned long long)u->r->cycles);
	uint64_t op0 = flash_sim_op_count(u->d.sim);
	int cut_armed = uses_cuts(s) && (s != UBIKIT_TORTURE_BADBLOCK || util_prng_below(&u->rng, 2));
	/* the cut falls anywhere in the flash operations a whole cycle would do */
	uint64_t est = u->wl_file_ops ? u->wl_flash_ops * nops / u->wl_file_ops : 200;
	if (cut_armed)
		flash_sim_power_cut_after(u->d.sim, 1 + util_prng_below(&u->rng, est + est / 4 + 1));
	inject_faults(u);
	int err = 0;
	for (unsigned k = 0; k < nops && !err; k++) {
		err = tm_step(&u->m, u->d.fs);
		u->r->ops++;
		u->wl_file_ops++;
		if (err == -ENOSPC && !flash_sim_is_cut(u->d.sim) && !ubi_is_ro(u)) {
			u->r->enospc++;
			err = 0;
		}
		if (!err && util_prng_below(&u->rng, 8) == 0 && u->d.ubi) {
			int b = ubi_background_step(u->d.ubi); /* erasures, scrubbing, WL moves */
			if (b < 0 && !flash_sim_is_cut(u->d.sim) && !ubi_is_ro(u)) {
				finding(u, "UBI background work failed without a cut: %s (%d)", ubi_errmsg(u->d.ubi), b);
				return 1;
			}
			if (b < 0)
				err = b;
		}
	}
	u->wl_flash_ops += flash_sim_op_count(u->d.sim) - op0;
	if (flash_sim_is_cut(u->d.sim)) {
		if (err == 1)
			finding(u, "%s", u->m.err);
		if (recover(u))
			return 1;
		if (ubi_is_ro(u)) /* the reserve ran out in the recovery */
			return end_of_life(u), 1;
		return 0;
	}
	flash_sim_power_cut_after(u->d.sim, 0);
	if (err && (ubi_is_ro(u) || err == -EROFS) && dying_blocks(u)) {
		end_of_life(u);
		return 1;
	}
	if (err) {
		if (err == 1)
			finding(u, "%s", u->m.err);
		else
			finding(u, "a file operation failed without a fault to explain it: %s (%d)%s%.300s",
				strerror(-err), err, u->m.err[0] ? ": " : "", u->m.err);
		return 1;
	}
	if (s == UBIKIT_TORTURE_MIX || util_prng_below(&u->rng, 8) == 0) {
		/* a clean unmount and mount: the tree is exactly the model's */
		tm_drop_handles(&u->m);
		char why[300];
		snprintf(why, sizeof(why), "%s", u->d.ubi ? ubi_errmsg(u->d.ubi) : "");
		int uerr = ubikit_unmount(u->d.fs);
		if (uerr)
			snprintf(why, sizeof(why), "UBI: %s", ubi_errmsg(u->d.ubi));
		u->d.fs = NULL;
		if (uerr && ubi_is_ro(u)) { /* the reserve ran out during the unmount's writes */
			end_of_life(u);
			return 1;
		}
		tdev_unmount(&u->d);
		if (uerr) {
			finding(u, "clean unmount failed: %s (%d): %s", strerror(-uerr), uerr, why);
			return 1;
		}
		if (tdev_mount(&u->d, 0, u->msg, sizeof(u->msg))) {
			finding(u, "mount after a clean unmount: %s", u->msg);
			return 1;
		}
		u->r->remounts++;
		if (!u->o->no_check && tdev_check(&u->d, u->msg, sizeof(u->msg))) {
			finding(u, "after a clean remount: %s", u->msg);
			return 1;
		}
		u->r->checks++;
		/* handles were closed: inodes only they held are gone */
		for (int i = 0; i < TM_INODES; i++) {
			int named = 0;
			for (int k = 0; k < TM_NAMES; k++)
				named |= u->m.name[k] == i;
			if (!named && u->m.ino[i].used) {
				free(u->m.ino[i].data);
				memset(&u->m.ino[i], 0, sizeof(u->m.ino[i]));
			}
		}
		if (tm_check_exact(&u->m, u->d.fs)) {
			finding(u, "after a clean remount: %s", u->m.err);
			return 1;
		}
	}
	return 0;
}

static int stop(struct run *u)
{
	if (u->o->max_cycles && u->r->cycles >= u->o->max_cycles)
		return 1;
	if (u->o->max_seconds > 0 && elapsed(u) >= u->o->max_seconds)
		return 1;
	return 0;
}

static int run_chained(struct run *u)
{
	while (!stop(u)) {
		if (!u->have_dev) {
			int err = new_device(u);
			if (err)
				return err;
		}
		int replace = cycle(u);
		flash_rules_broken(u);
		u->r->cycles++;
		if (replace)
			drop_device(u);
		u->r->seconds = elapsed(u);
		if (u->o->progress)
			u->o->progress(u->o->progress_arg, u->r);
	}
	drop_device(u);
	return 0;
}

/* Exhaustive: the same small workload from the same fresh device, cut at
 * flash operation 1, 2, 3, ... until it runs to its end without a cut. */
static int run_exhaustive(struct run *u)
{
	unsigned nops = u->o->ops_per_cycle ? u->o->ops_per_cycle : 20;
	for (uint64_t cut = 1; !stop(u); cut++) {
		int err = new_device(u);
		if (err)
			return err;
		util_prng_seed(&u->m.r, u->o->seed); /* the same workload every time */
		snprintf(u->ctx, sizeof(u->ctx), "cut point %llu", (unsigned long long)cut);
		flash_sim_power_cut_after(u->d.sim, cut);
		err = 0;
		for (unsigned k = 0; k < nops && !err; k++) {
			err = tm_step(&u->m, u->d.fs);
			u->r->ops++;
		}
		if (!flash_sim_is_cut(u->d.sim)) {
			tm_drop_handles(&u->m);
			if (!err)
				err = tdev_unmount(&u->d);
			if (!flash_sim_is_cut(u->d.sim)) {
				if (err == 1)
					finding(u, "%s", u->m.err);
				else if (err)
					finding(u, "the workload failed without a cut: %s (%d)%s%.300s", strerror(-err),
						err, u->m.err[0] ? ": " : "", u->m.err);
				flash_rules_broken(u);
				u->r->cycles++;
				break; /* every flash operation of the workload has been cut */
			}
		}
		if (err == 1)
			finding(u, "%s", u->m.err);
		recover(u);
		u->r->cycles++;
		u->r->seconds = elapsed(u);
		if (u->o->progress)
			u->o->progress(u->o->progress_arg, u->r);
	}
	drop_device(u);
	return 0;
}

int ubikit_torture_run(const struct ubikit_torture_opts *o, struct ubikit_torture_result *r, char *errbuf,
		       size_t errlen)
{
	memset(r, 0, sizeof(*r));
	if (o->scenario < 0 || o->scenario >= UBIKIT_TORTURE_SCENARIOS) {
		if (errbuf)
			snprintf(errbuf, errlen, "unknown scenario %d", o->scenario);
		return -EINVAL;
	}
	if (o->plant < 0 || o->plant >= UBIKIT_TORTURE_PLANTS) {
		if (errbuf)
			snprintf(errbuf, errlen, "unknown planted bug %d", o->plant);
		return -EINVAL;
	}
	struct run *u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	struct ubikit_torture_opts def;
	if (!o->max_cycles && o->max_seconds <= 0) {
		def = *o;
		def.max_cycles = 100;
		o = &def;
	}
	u->o = o;
	u->r = r;
	u->device = o->device ? o->device : o->scenario == UBIKIT_TORTURE_WEAROUT ? "mlc" : "nand2k";
	util_prng_seed(&u->rng, o->seed ^ 0x746f7274757265ull);
	clock_gettime(CLOCK_MONOTONIC, &u->t0);
	int err = o->scenario == UBIKIT_TORTURE_EXHAUSTIVE ? run_exhaustive(u) : run_chained(u);
	if (err && errbuf)
		snprintf(errbuf, errlen, "%s", u->msg);
	drop_device(u);
	r->seconds = elapsed(u);
	free(u);
	return err;
}
