/* torture_dev — the device under torture: a flash simulator with a
 * recorder in front (which program or erase a power cut hit), UBI attached
 * over it, one volume, the UBIFS on it; create, mount, unmount, check,
 * export. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flash/flash_sim.h"
#include <ubikit/fsck.h>

#include "torture/torture_priv.h"

static struct tdev *td(struct flash_dev *f)
{
	return (struct tdev *)f;
}

static void note(struct tdev *d, int erase, uint32_t p, uint32_t o, size_t n)
{
	if (flash_sim_is_cut(d->sim))
		return;
	d->last_was_erase = erase;
	if (erase)
		snprintf(d->last_op, sizeof(d->last_op), "erase of PEB %u", p);
	else
		snprintf(d->last_op, sizeof(d->last_op), "program of PEB %u:%u len %zu", p, o, n);
}

/* after a failed program or erase: was it a rule the simulator enforces? */
static void note_violation(struct tdev *d)
{
	struct flash_stats st;
	flash_sim_get_stats(d->sim, &st);
	if (st.rule_violations <= d->violations)
		return;
	if (!d->violation_msg[0])
		snprintf(d->violation_msg, sizeof(d->violation_msg), "%s", flash_errmsg(d->sim));
	d->violations = st.rule_violations;
}

static int r_read(struct flash_dev *f, uint32_t p, uint32_t o, void *b, size_t n)
{
	return flash_read(td(f)->sim, p, o, b, n);
}
static int r_write(struct flash_dev *f, uint32_t p, uint32_t o, const void *b, size_t n)
{
	note(td(f), 0, p, o, n);
	if (td(f)->trace_flash)
		fprintf(stderr, "    flash: program PEB %u:%u len %zu\n", p, o, n);
	struct tdev *d = td(f);
	int err = flash_write(d->sim, p, o, b, n);
	if (err)
		note_violation(d);
	else if (d->plant_reprogram && ++d->programs == 100 && flash_write(d->sim, p, o, b, n))
		note_violation(d); /* the planted second program; the stack saw the first succeed */
	return err;
}
static int r_erase(struct flash_dev *f, uint32_t p)
{
	note(td(f), 1, p, 0, 0);
	if (td(f)->trace_flash)
		fprintf(stderr, "    flash: erase PEB %u\n", p);
	int err = flash_erase(td(f)->sim, p);
	if (err)
		note_violation(td(f));
	return err;
}
static int r_is_bad(struct flash_dev *f, uint32_t p)
{
	return flash_is_bad(td(f)->sim, p);
}
static int r_mark_bad(struct flash_dev *f, uint32_t p)
{
	int err = flash_mark_bad(td(f)->sim, p);
	if (!err)
		td(f)->bad_marked++;
	return err;
}
static int r_sync(struct flash_dev *f)
{
	return flash_sync(td(f)->sim);
}
static void r_close(struct flash_dev *f)
{
	(void)f;
}
static const char *r_errmsg(struct flash_dev *f)
{
	return flash_errmsg(td(f)->sim);
}
static const struct flash_ops rec_ops = {r_read, r_write, r_erase, r_is_bad, r_mark_bad, r_sync, r_close, r_errmsg};

/* The four devices: small, so that a run fills and churns them many times. */
static int profile(struct flash_sim_config *c, const char *name)
{
	flash_sim_config_default(c);
	if (!name || !strcmp(name, "nand2k")) {
		c->geo = (struct flash_geometry){FLASH_NAND, 2048, 512, 64, 128u * 1024, 64};
		c->nop = 4;
	} else if (!strcmp(name, "nand4k")) {
		c->geo = (struct flash_geometry){FLASH_NAND, 4096, 4096, 128, 256u * 1024, 40};
		c->nop = 1;
		c->in_order = true;
	} else if (!strcmp(name, "nor")) {
		flash_sim_config_profile(c, "nor");
		c->geo.peb_count = 128;
	} else if (!strcmp(name, "mlc")) {
		flash_sim_config_profile(c, "mlc");
		c->geo = (struct flash_geometry){FLASH_NAND, 4096, 4096, 224, 256u * 1024, 48};
		c->nop = 1;
		c->in_order = true;
		c->bitflip_rate = 0;
	} else {
		return -EINVAL;
	}
	return 0;
}

int tdev_create(struct tdev *d, const char *prof, uint64_t seed, double flip_rate, double uncorr_rate,
		uint32_t wear_from, unsigned flags, char *msg, size_t ml)
{
	memset(d, 0, sizeof(*d));
	d->erase_at_unmap = (flags & TDEV_ERASE_AT_UNMAP) != 0;
	struct flash_sim_config c;
	if (profile(&c, prof)) {
		snprintf(msg, ml, "unknown device '%s' (nand2k, nand4k, nor, mlc)", prof);
		return -EINVAL;
	}
	c.seed = seed;
	c.erase_cut_per_page = (flags & TDEV_ERASE_CUT_PAGES) != 0;
	if (flip_rate > 0)
		c.bitflip_rate = flip_rate;
	c.uncorrectable_rate = uncorr_rate;
	int err = flash_sim_create_ex(&c, &d->sim, msg, ml);
	if (err)
		return err;
	d->base = (struct flash_dev){&rec_ops, d->sim->geo, 0};
	if (wear_from && c.endurance > wear_from) {
		struct util_prng r;
		util_prng_seed(&r, seed ^ 0x5745415255ull);
		for (uint32_t p = 0; p < c.geo.peb_count; p++)
			flash_sim_set_wear(d->sim, p, wear_from + (uint32_t)util_prng_below(&r, c.endurance - wear_from));
	}
	struct ubi_attach_opts o;
	ubi_attach_opts_default(&o);
	o.seed = seed;
	o.erase_at_unmap = d->erase_at_unmap;
	err = ubi_attach_msg(&d->base, &o, &d->ubi, msg, ml);
	if (err)
		goto fail;
	struct ubi_dev_info di;
	ubi_dev_info(d->ubi, &di);
	struct ubi_mkvol_req rq = {.vol_id = 0, .name = "torture", .leb_count = di.avail_pebs,
				   .vol_type = UBI_VID_DYNAMIC};
	err = ubi_vol_create(d->ubi, &rq, NULL);
	if (err) {
		snprintf(msg, ml, "creating the volume (%u LEBs): %s", di.avail_pebs, ubi_errmsg(d->ubi));
		goto fail;
	}
	ubi_detach(d->ubi);
	d->ubi = NULL;
	err = tdev_mount(d, 0, msg, ml); /* the first read-write mount formats the volume */
	if (err)
		goto fail;
	return 0;
fail:
	tdev_destroy(d);
	return err;
}

int tdev_mount(struct tdev *d, int ro, char *msg, size_t ml)
{
	struct ubi_attach_opts o;
	ubi_attach_opts_default(&o);
	o.autoformat = false;
	o.erase_at_unmap = d->erase_at_unmap;
	int err = ubi_attach_msg(&d->base, &o, &d->ubi, msg, ml);
	if (err) {
		d->ubi = NULL;
		return err;
	}
	err = ubi_volume_io(d->ubi, 0, &d->vol);
	if (err) {
		snprintf(msg, ml, "UBI volume 0: %s", ubi_errmsg(d->ubi));
	} else {
		struct ubikit_mount_opts mo = {.flags = ro ? UBIKIT_MOUNT_RDONLY : 0};
		err = ubikit_mount_ex(&d->vol, &mo, &d->fs, msg, ml);
	}
	d->mount_left_ubi_ro = 0;
	if (err) {
		struct ubi_dev_info di;
		d->mount_left_ubi_ro = !ubi_dev_info(d->ubi, &di) && di.read_only;
		d->fs = NULL;
		ubi_detach(d->ubi);
		d->ubi = NULL;
		return err;
	}
	d->read_only = ro;
	return 0;
}

int tdev_unmount(struct tdev *d)
{
	int err = 0;
	if (d->fs)
		err = ubikit_unmount(d->fs);
	d->fs = NULL;
	if (d->ubi)
		ubi_detach(d->ubi);
	d->ubi = NULL;
	return err;
}

void tdev_destroy(struct tdev *d)
{
	tdev_unmount(d);
	if (d->sim)
		flash_close(d->sim);
	d->sim = NULL;
}

/* `fsck -n` of the mounted file system (ubikit_fsck_fs: the strict
 * check of index, leaves, counts, orphans and the LPT against the flash,
 * then a read walk of every file from the root). */
int tdev_check(struct tdev *d, char *msg, size_t ml)
{
	struct ubikit_fsck_report rep;
	ubikit_fsck_report_init(&rep);
	int err = ubikit_fsck_fs(d->fs, &rep);
	if (err)
		snprintf(msg, ml, "fsck could not run (%d): %s", err, ubikit_errmsg(d->fs));
	else if (rep.count) {
		snprintf(msg, ml, "fsck: %zu problem(s); first: %s", rep.count, rep.problems[0].msg);
		err = -EUCLEAN;
	}
	ubikit_fsck_report_free(&rep);
	return err;
}

int tdev_export(struct tdev *d, const char *path)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return -errno;
	uint32_t psz = d->sim->geo.peb_size;
	uint8_t *buf = malloc(psz);
	int err = buf ? 0 : -ENOMEM;
	for (uint32_t p = 0; !err && p < d->sim->geo.peb_count; p++) {
		int r = flash_read(d->sim, p, 0, buf, psz);
		if (r && r != -EUCLEAN && r != -EBADMSG)
			memset(buf, 0xFF, psz); /* bad block: as nanddump without OOB skips nothing, 0xFF */
		if (fwrite(buf, 1, psz, f) != psz)
			err = -EIO;
	}
	free(buf);
	if (fclose(f) && !err)
		err = -EIO;
	return err;
}

/* A planted bug for the tests (ubikit_torture_opts.plant): silent
 * corruption. The PEB is read, erased and programmed again page by page
 * (pages that read all 0xFF stay erased), so the simulator's ECC holds the
 * changed byte as good data and no read reports it. */
int tdev_change_copies(struct tdev *d, const uint8_t *pat, size_t n)
{
	uint32_t psz = d->sim->geo.peb_size, page = d->sim->geo.page_size;
	if (page < 512) /* NOR (1): program in runs, 0xFF bytes leave it as erased */
		page = 512;
	uint8_t *buf = malloc(psz);
	if (!buf)
		return -ENOMEM;
	int changed = 0, err = 0;
	for (uint32_t p = 0; !err && p < d->sim->geo.peb_count; p++) {
		int r = flash_read(d->sim, p, 0, buf, psz);
		if (r && r != -EUCLEAN)
			continue; /* bad or unreadable: nothing to plant there */
		int here = 0;
		for (size_t o = 0; o + n <= psz; o++)
			if (buf[o] == pat[0] && !memcmp(buf + o, pat, n)) {
				buf[o + n / 2] ^= 0x20;
				here++;
			}
		if (!here)
			continue;
		err = flash_erase(d->sim, p);
		for (uint32_t o = 0; !err && o < psz; o += page) {
			uint32_t k = 0;
			while (k < page && buf[o + k] == 0xFF)
				k++;
			if (k < page)
				err = flash_write(d->sim, p, o, buf + o, page);
		}
		changed += here;
	}
	free(buf);
	return err ? err : changed;
}
