/* test_ubifs_tnc — the in-memory index against a reference model: random
 * inserts, replacements, removals and range removals of keys on top of a
 * real on-flash index (mkfs.ubifs image, fanout 3 and 8), with a tiny cache
 * so that clean znodes are evicted and reloaded all the time. After every
 * batch the whole index is iterated and compared with the model, and the
 * image's own entries must be untouched. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <ubikit/ubikit.h>

#include "fs/fs.h"
#include "ubi/ubi_flat.h"
#include "ubifs/ubifs_priv.h"
#include "ubifs/ubifs_tnc.h"
#include "ubifs_test_tree.h"
#include "util/util_prng.h"

#define WORK UBIKIT_BUILD_DIR "/ubifs-tnc"
#define BASE_INUM 100000u

struct ent {
	struct ubifs_key k;
	uint32_t offs;
};

static int ecmp(const void *a, const void *b)
{
	return ubifs_key_cmp(&((const struct ent *)a)->k, &((const struct ent *)b)->k);
}

static int find(struct ent *m, size_t n, const struct ubifs_key *k)
{
	for (size_t i = 0; i < n; i++)
		if (!ubifs_key_cmp(&m[i].k, k))
			return (int)i;
	return -1;
}

/* The kernel's lookup rule for the index we write: it descends through the
 * last branch whose key is <= K, so a non-hashed key equal to a branch key
 * must be below that branch, not below the one on its left (the kernel
 * would not find it). Checked on every loaded znode. Returns the largest
 * key under z (NULL key when z has no loaded leaves). */
static int subtree_max(const struct ubifs_znode *z, struct ubifs_key *max)
{
	if (z->level == 0) {
		if (!z->child_cnt)
			return 0;
		*max = z->zbranch[z->child_cnt - 1].key;
		return 1;
	}
	int have = 0;
	for (uint32_t i = 0; i < z->child_cnt; i++) {
		struct ubifs_key cm;
		if (!z->zbranch[i].child || !subtree_max(z->zbranch[i].child, &cm))
			continue;
		if (i + 1 < z->child_cnt && !ubifs_key_is_hash(&cm) &&
		    ubifs_key_cmp(&cm, &z->zbranch[i + 1].key) >= 0)
			fail_msg("level %u branch %u: key (%u,%08x) below it is not less than the next branch key (%u,%08x)",
				 z->level, i, cm.inum, cm.w1, z->zbranch[i + 1].key.inum, z->zbranch[i + 1].key.w1);
		*max = cm;
		have = 1;
	}
	return have;
}

/* all entries >= BASE_INUM in index order, compared with the sorted model */
static void check(struct ubifs_fs *u, struct ent *m, size_t n, uint64_t base_cnt)
{
	struct ubifs_key mx;
	subtree_max(u->tnc.root, &mx);
	qsort(m, n, sizeof(*m), ecmp);
	struct ubifs_tnc_pos p;
	struct ubifs_key lo = ubifs_key_make(0, UBIFS_INO_KEY, 0);
	int err = ubifs_tnc_seek(u, &lo, 0, &p);
	uint64_t below = 0;
	size_t i = 0;
	struct ubifs_key prev = lo;
	while (!err) {
		const struct ubifs_zbranch *zb = ubifs_tnc_at(&p);
		assert_true(ubifs_key_cmp(&prev, &zb->key) <= 0);
		prev = zb->key;
		if (zb->key.inum < BASE_INUM) {
			below++;
		} else {
			assert_true(i < n);
			assert_int_equal(ubifs_key_cmp(&zb->key, &m[i].k), 0);
			assert_int_equal(zb->offs, m[i].offs);
			i++;
		}
		err = ubifs_tnc_next(u, &p);
	}
	assert_int_equal(err, -ENOENT);
	assert_int_equal(i, n);
	assert_int_equal(below, base_cnt);
	/* point lookups through seek */
	for (size_t j = 0; j < n; j += 7) {
		assert_int_equal(ubifs_tnc_seek(u, &m[j].k, 0, &p), 0);
		assert_int_equal(ubifs_key_cmp(&ubifs_tnc_at(&p)->key, &m[j].k), 0);
		if (j + 1 < n) {
			assert_int_equal(ubifs_tnc_seek(u, &m[j].k, 1, &p), 0);
			assert_int_equal(ubifs_key_cmp(&ubifs_tnc_at(&p)->key, &m[j + 1].k), 0);
		}
	}
}

static void run(const char *mkfs_args, uint64_t seed)
{
	assert_int_equal(tt_run("rm -rf %s/src && mkdir -p %s/src/d && cd %s/src && for i in $(seq 1 60); do "
				"echo $i > d/f$i; done && mkfs.ubifs -r %s/src %s -o %s/img",
				WORK, WORK, WORK, WORK, mkfs_args, WORK),
			 0);
	struct ubi_vol_io vol;
	assert_int_equal(ubi_flat_open(WORK "/img", 0, 1, &vol), 0);
	struct ubikit_fs *fs;
	struct ubikit_mount_opts o = {.flags = UBIKIT_MOUNT_RDONLY, .tnc_cache_bytes = 2048};
	assert_int_equal(ubikit_mount(&vol, &o, &fs), 0);
	struct ubifs_fs *u = fs_ubifs(fs);
	/* count the image's own entries */
	uint64_t base_cnt = 0;
	struct ubifs_tnc_pos p;
	struct ubifs_key lo = ubifs_key_make(0, UBIFS_INO_KEY, 0);
	for (int err = ubifs_tnc_seek(u, &lo, 0, &p); !err; err = ubifs_tnc_next(u, &p))
		base_cnt++;
	assert_true(base_cnt > 120);
	size_t cap = 4096, n = 0;
	struct ent *m = calloc(cap, sizeof(*m));
	struct util_prng r;
	util_prng_seed(&r, seed);
	uint32_t lnum = u->main_first;
	for (int op = 1; op <= 4000; op++) {
		ubifs_tnc_shrink(u);
		uint64_t x = util_prng_below(&r, 100);
		uint32_t inum = BASE_INUM + (uint32_t)util_prng_below(&r, 40);
		struct ubifs_key k = x % 3 ? ubifs_key_make(inum, UBIFS_DATA_KEY, (uint32_t)util_prng_below(&r, 60))
					   : ubifs_key_make(inum, UBIFS_INO_KEY, 0);
		if (x < 60) { /* add or replace */
			uint32_t offs = (uint32_t)op * 8;
			assert_int_equal(ubifs_tnc_add(u, &k, lnum, offs, 160), 0);
			int i = find(m, n, &k);
			if (i >= 0)
				m[i].offs = offs;
			else {
				assert_true(n < cap);
				m[n++] = (struct ent){k, offs};
			}
		} else if (x < 92) { /* remove one (present or not) */
			assert_int_equal(ubifs_tnc_remove(u, &k), 0);
			int i = find(m, n, &k);
			if (i >= 0)
				m[i] = m[--n];
		} else { /* remove a range: all keys of an inode, or some blocks */
			struct ubifs_key a = ubifs_key_make(inum, x & 1 ? UBIFS_INO_KEY : UBIFS_DATA_KEY, x & 1 ? 0 : 10);
			struct ubifs_key b = x & 1 ? (struct ubifs_key){inum, 0xFFFFFFFFu}
						   : ubifs_key_make(inum, UBIFS_DATA_KEY, 30);
			assert_int_equal(ubifs_tnc_remove_range(u, &a, &b), 0);
			for (size_t i = 0; i < n;)
				if (ubifs_key_cmp(&m[i].k, &a) >= 0 && ubifs_key_cmp(&m[i].k, &b) <= 0)
					m[i] = m[--n];
				else
					i++;
		}
		if (op % 250 == 0)
			check(u, m, n, base_cnt);
	}
	check(u, m, n, base_cnt);
	/* removing everything again leaves the image's index as it was */
	struct ubifs_key a = {BASE_INUM, 0}, b = {0xFFFFFFFFu, 0xFFFFFFFFu};
	assert_int_equal(ubifs_tnc_remove_range(u, &a, &b), 0);
	check(u, m, 0, base_cnt);
	struct ubikit_stat st;
	assert_int_equal(ubikit_stat(fs, "/d/f60", &st), 0);
	fprintf(stderr, "%s: %zu keys at the end, %llu loads, %llu evictions, peak %zu bytes\n", mkfs_args, n,
		(unsigned long long)u->tnc.loads, (unsigned long long)u->tnc.evictions, u->tnc.peak);
	assert_true(u->tnc.evictions > 0);
	free(m);
	ubikit_unmount(fs);
	ubi_flat_close(&vol);
}

static void t_fanout3(void **s)
{
	(void)s;
	run("-m 2048 -e 126976 -c 100 -f 3", 1);
}

static void t_fanout8(void **s)
{
	(void)s;
	run("-m 2048 -e 126976 -c 100 -f 8", 2);
}

static void t_fanout32(void **s)
{
	(void)s;
	run("-m 8 -e 16256 -c 100 -f 32", 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(t_fanout3), cmocka_unit_test(t_fanout8),
					   cmocka_unit_test(t_fanout32)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
