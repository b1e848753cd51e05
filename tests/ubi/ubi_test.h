/* ubi_test — helpers shared by the UBI test suites: small simulated
 * flashes, attach/re-attach, and deterministic data patterns. */
#ifndef UBIKIT_TESTS_UBI_TEST_H
#define UBIKIT_TESTS_UBI_TEST_H
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "flash/flash_sim.h"
#include "ubi/ubi.h"
#include "util/util_prng.h"

/* NAND, 512-byte pages with 256-byte sub-pages, 16 KiB PEBs:
 * VID header at 256, data at 512, LEB 15872. */
static inline struct flash_dev *t_nand(uint32_t pebs, uint64_t seed)
{
	struct flash_sim_config c;
	flash_sim_config_default(&c);
	c.geo.page_size = 512;
	c.geo.subpage_size = 256;
	c.geo.oob_size = 16;
	c.geo.peb_size = 16384;
	c.geo.peb_count = pebs;
	c.seed = seed;
	struct flash_dev *d = NULL;
	assert_int_equal(flash_sim_create(&c, &d), 0);
	return d;
}

/* NAND 2 KiB pages / 512 sub-pages / 128 KiB PEBs (the common geometry). */
static inline struct flash_dev *t_nand2k(uint32_t pebs, uint64_t seed)
{
	struct flash_sim_config c;
	flash_sim_config_default(&c);
	c.geo.subpage_size = 512;
	c.geo.peb_count = pebs;
	c.seed = seed;
	struct flash_dev *d = NULL;
	assert_int_equal(flash_sim_create(&c, &d), 0);
	return d;
}

static inline struct flash_dev *t_nor(uint32_t pebs, uint32_t peb_size, uint64_t seed)
{
	struct flash_sim_config c;
	flash_sim_config_default(&c);
	assert_int_equal(flash_sim_config_profile(&c, "nor"), 0);
	c.geo.peb_size = peb_size;
	c.geo.peb_count = pebs;
	c.seed = seed;
	struct flash_dev *d = NULL;
	assert_int_equal(flash_sim_create(&c, &d), 0);
	return d;
}

static inline struct ubi_device *t_attach_opts(struct flash_dev *f, const struct ubi_attach_opts *o)
{
	struct ubi_device *u = NULL;
	char msg[512];
	int err = ubi_attach_msg(f, o, &u, msg, sizeof(msg));
	if (err)
		fail_msg("attach failed: %d: %s", err, msg);
	return u;
}

static inline struct ubi_device *t_attach(struct flash_dev *f)
{
	return t_attach_opts(f, NULL);
}

static inline struct ubi_device *t_reattach(struct ubi_device *u, struct flash_dev *f)
{
	ubi_detach(u);
	return t_attach(f);
}

static inline void t_fill(void *b, size_t n, uint64_t seed)
{
	struct util_prng r;
	util_prng_seed(&r, seed);
	util_prng_fill(&r, b, n);
}

static inline uint32_t t_mkvol(struct ubi_device *u, const char *name, uint32_t lebs, uint8_t type)
{
	struct ubi_mkvol_req r = {.vol_id = UBI_VOL_NUM_AUTO, .name = name, .leb_count = lebs, .vol_type = type};
	uint32_t id;
	int err = ubi_vol_create(u, &r, &id);
	if (err)
		fail_msg("create %s: %d %s", name, err, ubi_errmsg(u));
	return id;
}

#define T_OK(u, expr)                                                                                       \
	do {                                                                                                \
		int t_err_ = (expr);                                                                        \
		if (t_err_ < 0)                                                                             \
			fail_msg("%s = %d: %s", #expr, t_err_, ubi_errmsg(u));                               \
	} while (0)

#endif
