/* test_fs_mkfs_out — the output volume of `ubikit mkfs -o FILE`
 * (fs_mkfs_out.c) against a model of its LEBs: sequential writes only (as
 * on flash), reads giving the written bytes and 0xFF after them, a written
 * LEB never changed nor unmapped, LEB numbers past the volume refused for
 * every call, and at close the file holding exactly leb_cnt whole LEBs
 * (the written bytes, then 0xFF: mkfs.ubifs writes whole LEBs), or no file
 * at all after a failed build; the host refusing to grow the file
 * (RLIMIT_FSIZE, the kernel's EFBIG as for a full disk) reported with its
 * reason. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "fs/fs_mkfs.h"
#include "ubi/ubi_vol_io.h"

#define DIR UBIKIT_BUILD_DIR "/scratch/test_fs_mkfs_out"
#define OUT DIR "/out.img"
#define LEB 4096u
#define NLEB 12u

static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
	return *x;
}

static void t_model(void **s)
{
	(void)s;
	assert_int_equal(system("rm -rf " DIR " && mkdir -p " DIR), 0);
	struct util_err e;
	util_err_clear(&e);
	struct ubi_vol_io *v;
	assert_int_equal(fs_mkfs_file_vol_open(OUT, LEB, 8, NLEB, &v, &e), 0);
	assert_int_equal(v->leb_size, LEB);
	assert_int_equal(v->leb_count, NLEB);
	static uint8_t model[NLEB][LEB], buf[LEB];
	uint32_t end[NLEB] = {0};
	memset(model, 0xFF, sizeof(model));
	uint64_t x = 88172645463325252ull;
	for (int op = 0; op < 400; op++) {
		uint32_t l = (uint32_t)(rnd(&x) % (NLEB - 2)); /* the last two LEBs stay unwritten */
		unsigned what = (unsigned)(rnd(&x) % 6);
		if (what <= 1) { /* append, sometimes at the wrong place */
			uint32_t len = 8 * (uint32_t)(rnd(&x) % 64), off = end[l];
			if (off + len > LEB)
				len = LEB - off;
			bool wrong = rnd(&x) % 5 == 0 && off;
			for (uint32_t i = 0; i < len; i++)
				buf[i] = (uint8_t)rnd(&x);
			int r = v->write(v->ctx, l, wrong ? off - 8 : off, buf, len);
			assert_int_equal(r, wrong ? -EINVAL : 0);
			if (!wrong) {
				memcpy(model[l] + off, buf, len);
				end[l] = off + len;
			}
		} else if (what == 2) { /* change: only a fresh LEB */
			uint32_t len = 8 * (uint32_t)(1 + rnd(&x) % 100);
			for (uint32_t i = 0; i < len; i++)
				buf[i] = (uint8_t)rnd(&x);
			int r = v->change(v->ctx, l, buf, len);
			assert_int_equal(r, end[l] ? -EINVAL : 0);
			if (!r) {
				memcpy(model[l], buf, len);
				end[l] = len;
			}
		} else if (what == 3) {
			assert_int_equal(v->unmap(v->ctx, l), end[l] ? -EINVAL : 0);
			assert_int_equal(v->is_mapped(v->ctx, l), end[l] != 0);
			assert_int_equal(v->map(v->ctx, l), 0);
		} else { /* read any range */
			uint32_t off = (uint32_t)(rnd(&x) % LEB), len = (uint32_t)(rnd(&x) % (LEB - off + 1));
			memset(buf, 0x11, sizeof(buf));
			assert_int_equal(v->read(v->ctx, l, off, buf, len), 0);
			if (memcmp(buf, model[l] + off, len))
				fail_msg("LEB %u: %u bytes at %u differ from the model", l, len, off);
		}
	}
	/* past the volume, past the LEB: refused by every call */
	assert_int_equal(v->read(v->ctx, NLEB, 0, buf, 8), -EINVAL);
	assert_int_equal(v->read(v->ctx, 0, LEB - 4, buf, 8), -EINVAL);
	assert_int_equal(v->write(v->ctx, NLEB, 0, buf, 8), -EINVAL);
	assert_int_equal(v->write(v->ctx, NLEB - 1, 0, buf, LEB + 8), -EINVAL);
	assert_int_equal(v->change(v->ctx, NLEB, buf, 8), -EINVAL);
	assert_int_equal(v->unmap(v->ctx, NLEB), -EINVAL);
	assert_int_equal(v->map(v->ctx, NLEB + 100), -EINVAL);
	assert_int_equal(v->is_mapped(v->ctx, UINT32_MAX), -EINVAL);
	/* close with NLEB - 1 LEBs: the file is those LEBs, whole */
	assert_int_equal(fs_mkfs_file_vol_close(v, NLEB - 1, &e), 0);
	FILE *f = fopen(OUT, "rb");
	assert_non_null(f);
	for (uint32_t l = 0; l < NLEB - 1; l++) {
		assert_int_equal(fread(buf, 1, LEB, f), LEB);
		if (memcmp(buf, model[l], LEB))
			fail_msg("LEB %u of the file differs from the model", l);
	}
	assert_int_equal(fgetc(f), EOF);
	fclose(f);

	/* a failed build (leb_cnt 0) leaves no file */
	assert_int_equal(fs_mkfs_file_vol_open(OUT, LEB, 8, NLEB, &v, &e), 0);
	assert_int_equal(v->write(v->ctx, 0, 0, buf, 64), 0);
	assert_int_equal(fs_mkfs_file_vol_close(v, 0, &e), 0);
	assert_int_equal(access(OUT, F_OK), -1);
	/* nowhere to create it */
	util_err_clear(&e);
	assert_int_equal(fs_mkfs_file_vol_open(DIR "/no/out.img", LEB, 8, NLEB, &v, &e), -ENOENT);
	assert_non_null(strstr(util_err_msg(&e), "cannot create '" DIR "/no/out.img'"));
	assert_int_equal(system("rm -rf " DIR), 0);
}

/* The host refuses to grow the file past 3.5 LEBs: a write past it and the
 * 0xFF completion at close report EFBIG (not a made-up EIO or "Success"). */
static void t_host_refuses(void **s)
{
	(void)s;
	assert_int_equal(system("rm -rf " DIR " && mkdir -p " DIR), 0);
	struct util_err e;
	util_err_clear(&e);
	struct ubi_vol_io *v;
	uint8_t buf[LEB];
	memset(buf, 0x5A, sizeof(buf));
	struct rlimit old, lim;
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = old;
	lim.rlim_cur = LEB * 3 + LEB / 2;
	signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(fs_mkfs_file_vol_open(OUT, LEB, 8, NLEB, &v, &e), 0);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	assert_int_equal(v->write(v->ctx, 0, 0, buf, 64), 0);
	int r = v->write(v->ctx, 4, 0, buf, 64);
	int r2 = fs_mkfs_file_vol_close(v, 5, &e);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, SIG_DFL);
	assert_int_equal(r, -EFBIG);
	if (r2 != -EFBIG || !strstr(util_err_msg(&e), "cannot write '" OUT "': File too large"))
		fail_msg("close past the file size limit: %d \"%s\"", r2, util_err_msg(&e));
	assert_int_equal(system("rm -rf " DIR), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_model),
		cmocka_unit_test(t_host_refuses),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
