/* test_ubi_model — random operations on volumes and LEBs compared with an
 * in-memory model, with re-attaches: contents, volume list and PEB
 * accounting (avail/reserved) must survive every re-attach unchanged. */
#include "ubi_test.h"

enum { NPEB = 48, L = 15872, MAXV = 4, MAXL = 12 };

struct mvol {
	bool present;
	char name[16];
	uint32_t size;
	uint8_t *leb[MAXL]; /* NULL = unmapped */
	uint32_t fill[MAXL]; /* bytes written so far (writes append) */
};

static void check_all(struct ubi_device *u, struct mvol *mv, const char *when, unsigned it)
{
	static uint8_t b[L], ff[L];
	memset(ff, 0xFF, L);
	for (uint32_t v = 0; v < MAXV; v++) {
		struct ubi_vol_info vi;
		int err = ubi_vol_info(u, v, &vi);
		if (!mv[v].present) {
			if (err != -ENOENT)
				fail_msg("%s %u: volume %u should not exist", when, it, v);
			continue;
		}
		if (err || strcmp(vi.name, mv[v].name) || vi.reserved_pebs != mv[v].size)
			fail_msg("%s %u: volume %u info mismatch", when, it, v);
		for (uint32_t l = 0; l < mv[v].size && l < MAXL; l++) {
			T_OK(u, ubi_leb_read(u, v, l, 0, b, L));
			const uint8_t *want = mv[v].leb[l] ? mv[v].leb[l] : ff;
			if (memcmp(b, want, L))
				fail_msg("%s %u: LEB %u:%u differs", when, it, v, l);
			if (ubi_leb_is_mapped(u, v, l) != (mv[v].leb[l] != NULL))
				fail_msg("%s %u: LEB %u:%u mapping differs", when, it, v, l);
		}
	}
}

static void test_random_model(void **state)
{
	(void)state;
	struct flash_dev *f = t_nand(NPEB, 21);
	struct ubi_device *u = t_attach(f);
	static struct mvol mv[MAXV];
	memset(mv, 0, sizeof(mv));
	struct util_prng g;
	util_prng_seed(&g, 1234);
	static uint8_t buf[L];
	unsigned ops[10] = {0};
	for (unsigned it = 0; it < 4000; it++) {
		uint32_t v = (uint32_t)util_prng_below(&g, MAXV);
		struct mvol *m = &mv[v];
		unsigned op = (unsigned)util_prng_below(&g, 10);
		struct ubi_dev_info di;
		ubi_dev_info(u, &di);
		if (!m->present) {
			uint32_t size = 1 + (uint32_t)util_prng_below(&g, MAXL);
			char name[16];
			snprintf(name, sizeof(name), "v%u_%u", v, it);
			struct ubi_mkvol_req r = {.vol_id = (int)v, .name = name, .leb_count = size,
						  .vol_type = UBI_VID_DYNAMIC};
			int err = ubi_vol_create(u, &r, NULL);
			if (size > di.avail_pebs) {
				assert_int_equal(err, -ENOSPC);
				continue;
			}
			T_OK(u, err);
			m->present = true;
			m->size = size;
			strcpy(m->name, name);
			ops[0]++;
			continue;
		}
		uint32_t l = (uint32_t)util_prng_below(&g, m->size);
		switch (op) {
		case 0: /* remove (rarely) */
			if (util_prng_below(&g, 4))
				break;
			T_OK(u, ubi_vol_remove(u, v));
			for (int i = 0; i < MAXL; i++) {
				free(m->leb[i]);
				m->leb[i] = NULL;
				m->fill[i] = 0;
			}
			m->present = false;
			ops[1]++;
			break;
		case 1: { /* resize */
			uint32_t ns = 1 + (uint32_t)util_prng_below(&g, MAXL);
			int err = ubi_vol_resize(u, v, ns);
			if (ns > m->size && ns - m->size > di.avail_pebs) {
				assert_int_equal(err, -ENOSPC);
				break;
			}
			T_OK(u, err);
			for (uint32_t i = ns; i < m->size; i++) {
				free(m->leb[i]);
				m->leb[i] = NULL;
				m->fill[i] = 0;
			}
			m->size = ns;
			ops[2]++;
			break;
		}
		case 2: { /* rename */
			char name[16];
			snprintf(name, sizeof(name), "r%u_%u", v, it);
			struct ubi_rename_req rr = {v, name};
			T_OK(u, ubi_vol_rename(u, &rr, 1));
			strcpy(m->name, name);
			ops[3]++;
			break;
		}
		case 3:
		case 4: { /* append */
			uint32_t room = L - m->fill[l];
			if (!room)
				break;
			uint32_t len = 512 * (1 + (uint32_t)util_prng_below(&g, room / 512));
			t_fill(buf, len, it);
			T_OK(u, ubi_leb_write(u, v, l, m->fill[l], buf, len));
			if (!m->leb[l]) {
				m->leb[l] = malloc(L);
				memset(m->leb[l], 0xFF, L);
			}
			memcpy(m->leb[l] + m->fill[l], buf, len);
			m->fill[l] += len;
			ops[4]++;
			break;
		}
		case 5:
		case 6: { /* atomic change */
			uint32_t len = 512 * (uint32_t)util_prng_below(&g, L / 512 + 1);
			t_fill(buf, len, it);
			T_OK(u, ubi_leb_change(u, v, l, buf, len));
			if (!len) {
				free(m->leb[l]);
				m->leb[l] = NULL;
				m->fill[l] = 0;
			} else {
				if (!m->leb[l])
					m->leb[l] = malloc(L);
				memset(m->leb[l], 0xFF, L);
				memcpy(m->leb[l], buf, len);
				m->fill[l] = len;
			}
			ops[5]++;
			break;
		}
		case 7: /* unmap / map */
			if (m->leb[l]) {
				T_OK(u, ubi_leb_unmap(u, v, l));
				free(m->leb[l]);
				m->leb[l] = NULL;
			} else {
				T_OK(u, ubi_leb_map(u, v, l));
				m->leb[l] = malloc(L);
				memset(m->leb[l], 0xFF, L);
			}
			m->fill[l] = 0;
			ops[6]++;
			break;
		case 8:
			T_OK(u, ubi_background_step(u));
			break;
		case 9: { /* re-attach: everything, including accounting, unchanged */
			if (util_prng_below(&g, 8))
				break;
			struct ubi_dev_info a, b;
			ubi_dev_info(u, &a);
			u = t_reattach(u, f);
			ubi_dev_info(u, &b);
			assert_int_equal(a.avail_pebs, b.avail_pebs);
			assert_int_equal(a.rsvd_pebs, b.rsvd_pebs);
			assert_int_equal(a.beb_rsvd_pebs, b.beb_rsvd_pebs);
			assert_int_equal(a.vol_count, b.vol_count);
			check_all(u, mv, "after re-attach at", it);
			ops[7]++;
			break;
		}
		}
		/* accounting invariant: reserved + available + bad reserve = usable */
		ubi_dev_info(u, &di);
		assert_int_equal(di.rsvd_pebs + di.avail_pebs + di.beb_rsvd_pebs + 2, di.good_pebs - di.corrupt_pebs);
	}
	check_all(u, mv, "end", 0);
	printf("model: %u creates, %u removes, %u resizes, %u renames, %u writes, %u changes, %u map/unmaps, %u "
	       "re-attaches\n",
	       ops[0], ops[1], ops[2], ops[3], ops[4], ops[5], ops[6], ops[7]);
	for (int v = 0; v < MAXV; v++)
		for (int i = 0; i < MAXL; i++)
			free(mv[v].leb[i]);
	ubi_detach(u);
	flash_close(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_random_model)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
