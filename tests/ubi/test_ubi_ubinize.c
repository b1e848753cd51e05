/* test_ubi_ubinize — attach an image made at test time by mtd-utils'
 * ubinize (dynamic autoresize volume + static aligned volume), loaded into
 * a RAM NAND simulator the way ubiformat/nandwrite would put it: check the
 * volumes, the data, autoresize, then write and re-attach. Skipped when
 * ubinize is not installed. */
#include "ubi_test.h"

#include <unistd.h>

static void load_image(struct flash_dev *f, const char *path)
{
	FILE *fp = fopen(path, "rb");
	assert_non_null(fp);
	uint32_t psz = f->geo.peb_size, page = f->geo.page_size;
	uint8_t *buf = malloc(psz);
	uint32_t p = 0;
	while (fread(buf, 1, psz, fp) == psz) {
		/* program pages that are not all 0xFF (as ubiformat does) */
		for (uint32_t off = 0; off < psz; off += page) {
			bool ff = true;
			for (uint32_t i = 0; i < page && ff; i++)
				ff = buf[off + i] == 0xFF;
			if (!ff)
				assert_int_equal(flash_write(f, p, off, buf + off, page), 0);
		}
		p++;
	}
	fclose(fp);
	free(buf);
}

static void test_ubinize_image(void **state)
{
	(void)state;
	if (system("command -v ubinize >/dev/null 2>&1") != 0) {
		/* 77: CTest shows "Skipped" (cmocka's skip() would pass) */
		fprintf(stderr, "SKIP: mtd-utils ubinize is not installed\n");
		exit(77);
	}
	char dir[] = "/tmp/ubi_ubinize_XXXXXX";
	assert_non_null(mkdtemp(dir));
	char cmd[1024], path[512];
	size_t n = 300000;
	uint8_t *data = malloc(n);
	t_fill(data, n, 77);
	snprintf(path, sizeof(path), "%s/data.bin", dir);
	FILE *fp = fopen(path, "wb");
	assert_non_null(fp);
	assert_int_equal(fwrite(data, 1, n, fp), n);
	fclose(fp);
	snprintf(path, sizeof(path), "%s/cfg.ini", dir);
	fp = fopen(path, "w");
	fprintf(fp, "[rootfs]\nmode=ubi\nimage=%s/data.bin\nvol_id=0\nvol_type=dynamic\nvol_name=rootfs\n"
		    "vol_flags=autoresize\n[kern]\nmode=ubi\nimage=%s/data.bin\nvol_id=3\nvol_type=static\n"
		    "vol_name=kernel\nvol_alignment=4096\n",
		dir, dir);
	fclose(fp);
	snprintf(cmd, sizeof(cmd), "ubinize -o %s/x.img -p 128KiB -m 2048 -s 512 -Q 12345 %s/cfg.ini 2>/dev/null", dir,
		 dir);
	assert_int_equal(system(cmd), 0);
	struct flash_dev *f = t_nand2k(64, 1);
	snprintf(path, sizeof(path), "%s/x.img", dir);
	load_image(f, path);

	/* read-only first: nothing written, autoresize skipped */
	struct ubi_attach_opts o;
	ubi_attach_opts_default(&o);
	o.read_only = true;
	struct ubi_device *u = t_attach_opts(f, &o);
	struct ubi_vol_info vi;
	T_OK(u, ubi_vol_info(u, 0, &vi));
	assert_int_equal(vi.reserved_pebs, 3);
	assert_string_equal(vi.name, "rootfs");
	ubi_detach(u);

	u = t_attach(f);
	struct ubi_dev_info di;
	ubi_dev_info(u, &di);
	assert_int_equal(di.image_seq, 12345);
	assert_int_equal(di.leb_size, 129024);
	T_OK(u, ubi_vol_info(u, 3, &vi));
	assert_string_equal(vi.name, "kernel");
	assert_int_equal(vi.vol_type, UBI_VID_STATIC);
	assert_int_equal(vi.data_pad, 2048);
	assert_int_equal(vi.used_bytes, n);
	T_OK(u, ubi_vol_check(u, 3));
	uint8_t *rd = malloc(129024);
	uint32_t us = vi.usable_leb_size;
	for (uint32_t l = 0; l < vi.used_ebs; l++) {
		uint32_t k = l == vi.used_ebs - 1 ? vi.last_eb_bytes : us;
		T_OK(u, ubi_leb_read(u, 3, l, 0, rd, k));
		assert_memory_equal(rd, data + (size_t)l * us, k);
	}
	T_OK(u, ubi_vol_info(u, 0, &vi));
	/* 64 - 2 layout - 2 (WL+EBA) - beb ceil(64*20/1024)=2 - kernel 3 */
	assert_int_equal(vi.reserved_pebs, 64 - 2 - 2 - 2 - 3);
	assert_int_equal(vi.flags, 0);
	for (uint32_t l = 0; l < 3; l++) {
		uint32_t k = l == 2 ? (uint32_t)(n - 2 * 129024) : 129024;
		T_OK(u, ubi_leb_read(u, 0, l, 0, rd, k));
		assert_memory_equal(rd, data + (size_t)l * 129024, k);
	}
	/* write, change, re-attach */
	T_OK(u, ubi_leb_change(u, 0, 1, data, 4096));
	T_OK(u, ubi_leb_write(u, 0, 10, 0, data + 8192, 2048));
	u = t_reattach(u, f);
	T_OK(u, ubi_leb_read(u, 0, 1, 0, rd, 4096));
	assert_memory_equal(rd, data, 4096);
	T_OK(u, ubi_leb_read(u, 0, 10, 0, rd, 2048));
	assert_memory_equal(rd, data + 8192, 2048);
	T_OK(u, ubi_vol_check(u, 3));
	ubi_detach(u);
	flash_close(f);
	free(rd);
	free(data);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_ubinize_image)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
