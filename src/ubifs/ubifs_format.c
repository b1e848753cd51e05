/* ubifs_format — a fresh file system on an empty volume, as the kernel's
 * create_default_filesystem does on the first mount of an empty UBI
 * volume: geometry from the volume (journal 5% of the LEBs, at least
 * UBIFS_MIN_JNL_LEBS and at most 32 MiB; log for twice the reference nodes
 * of the journal plus a commit LEB, one more when the volume has room;
 * orphan LEBs 1, or 2 when there is room; LPT for 4x its size; lsave 256;
 * fanout 8; one data head; R5 key hash, double hash; reserved pool 5% of
 * the main area, at most 5 MiB), and a root directory inode 0755 owned by
 * root. Laid out with ubifs_build. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "ubi/ubi_vol_io.h"
#include "ubifs/ubifs_build.h"
#include "ubifs/ubifs_format.h"
#include "ubifs/ubifs_priv.h"

#define DFLT_JNL_PERCENT 5
#define DFLT_MAX_JNL (32u << 20)
#define MIN_JNL_LEBS 4
#define MIN_BUD_LEBS 3
#define DFLT_RP_PERCENT 5
#define DFLT_MAX_RP (5u << 20)

int ubifs_vol_is_empty(struct ubi_vol_io *vol)
{
	if (vol->is_mapped) {
		for (uint32_t l = 0; l < vol->leb_count; l++) {
			int r = vol->is_mapped(vol->ctx, l);
			if (r < 0)
				return r;
			if (r)
				return 0;
		}
		return 1;
	}
	/* no mapping information (bare images): every byte erased, so that a
	 * damaged file system whose superblock is gone is never formatted over */
	uint8_t *buf = malloc(vol->leb_size);
	if (!buf)
		return -ENOMEM;
	int err = 0, empty = 1;
	for (uint32_t l = 0; empty && !err && l < vol->leb_count; l++) {
		err = vol->read(vol->ctx, l, 0, buf, l ? vol->leb_size : UBIFS_SB_NODE_SZ);
		empty = !err && ubifs_is_empty(buf, l ? vol->leb_size : UBIFS_SB_NODE_SZ);
		if (l == 0 && empty) /* the rest of LEB 0 too */
			err = vol->read(vol->ctx, 0, 0, buf, vol->leb_size), empty = !err && ubifs_is_empty(buf, vol->leb_size);
	}
	free(buf);
	return err ? err : empty;
}

/* the kernel's defaults for a volume of leb_cnt LEBs */
static void kernel_defaults(const struct ubi_vol_io *vol, struct ubifs_build_params *p)
{
	uint32_t leb_cnt = vol->leb_count, leb_size = vol->leb_size;
	uint32_t min_io = vol->min_io_size < 8 ? 8 : vol->min_io_size;
	memset(p, 0, sizeof(*p));
	p->min_io_size = vol->min_io_size;
	p->leb_size = leb_size;
	p->leb_cnt = p->max_leb_cnt = leb_cnt;
	uint32_t jnl = leb_cnt < 0x7FFFFFFFu / DFLT_JNL_PERCENT ? leb_cnt * DFLT_JNL_PERCENT / 100
								   : leb_cnt / 100 * DFLT_JNL_PERCENT;
	if (jnl < MIN_JNL_LEBS)
		jnl = MIN_JNL_LEBS;
	if ((uint64_t)jnl * leb_size > DFLT_MAX_JNL)
		jnl = DFLT_MAX_JNL / leb_size;
	uint32_t ref_alsz = (UBIFS_REF_NODE_SZ + min_io - 1) / min_io * min_io;
	uint32_t log = (uint32_t)((2ull * ref_alsz * jnl + leb_size - 1) / leb_size) + 1;
	uint32_t min_leb_cnt = 1 + 2 + 2 /* min LPT */ + 1 /* orphan */ + 3 /* heads */ + 6 /* main minimum */;
	min_leb_cnt += log;
	if (leb_cnt - min_leb_cnt > 8) {
		log++;
		min_leb_cnt++;
	}
	uint32_t max_buds = jnl > log ? jnl - log : 0;
	if (max_buds < MIN_BUD_LEBS)
		max_buds = MIN_BUD_LEBS;
	p->orph_lebs = 1;
	if (leb_cnt - min_leb_cnt > 1)
		p->orph_lebs++;
	p->log_lebs = log;
	p->max_bud_bytes = (uint64_t)max_buds * leb_size;
	p->fanout = 8;
	p->lsave_cnt = 256;
	p->key_hash = UBIFS_KEY_HASH_R5;
	p->time_gran = 1000000000;
	p->double_hash = 1;
	p->kernel_limits = 1; /* not mkfs.ubifs's -l/-p limits: the kernel formats 19 LEBs with 2 + 2 */
}

int ubifs_format(struct ubi_vol_io *vol, const struct ubifs_format_opts *o, struct util_err *e)
{
	if (!vol || vol->read_only || !vol->write)
		return util_err_set(e, -EROFS, "format: the volume is read-only");
	struct ubifs_build_params p;
	kernel_defaults(vol, &p);
	p.default_compr = o ? o->compr : UBIFS_COMPR_LZO;
	if (o && o->uuid_set)
		memcpy(p.uuid, o->uuid, 16);
	else {
		/* random enough for a volume id; not a secret */
		uint64_t t = (uint64_t)time(NULL) ^ ((uint64_t)(uintptr_t)vol << 16);
		for (int i = 0; i < 16; i++) {
			t = t * 6364136223846793005ull + 1442695040888963407ull;
			p.uuid[i] = (uint8_t)(t >> 56);
		}
		p.uuid[6] = (uint8_t)((p.uuid[6] & 0x0F) | 0x40);
		p.uuid[8] = (uint8_t)((p.uuid[8] & 0x3F) | 0x80);
	}
	struct ubifs_build *b;
	int err = ubifs_build_new(&p, vol, &b, e);
	if (err)
		return err;
	uint32_t main_first, max_lebs;
	ubifs_build_geometry(b, &main_first, &max_lebs);
	/* reserved pool: 5% of the main area, at most 5 MiB */
	uint64_t rp = (uint64_t)(max_lebs - main_first) * p.leb_size * DFLT_RP_PERCENT / 100;
	ubifs_build_set_rp_size(b, rp > DFLT_MAX_RP ? DFLT_MAX_RP : rp);
	/* root directory inode */
	int64_t now = o && o->time_set ? o->time : (int64_t)time(NULL);
	uint8_t *node = calloc(1, UBIFS_MAX_NODE_SZ);
	if (!node) {
		ubifs_build_free(b);
		return util_err_set(e, -ENOMEM, "format: out of memory");
	}
	struct ubifs_ino_node ino;
	memset(&ino, 0, sizeof(ino));
	ino.key = ubifs_key_make(UBIFS_ROOT_INO_NUM, UBIFS_INO_KEY, 0);
	ino.creat_sqnum = ubifs_build_sqnum(b);
	ino.size = UBIFS_INO_NODE_SZ;
	ino.atime_sec = ino.ctime_sec = ino.mtime_sec = now;
	ino.nlink = 2;
	ino.mode = S_IFDIR | 0755;
	ino.flags = UBIFS_COMPR_FL;
	ino.compr_type = (uint16_t)p.default_compr;
	ubifs_ino_pack(node, &ino, NULL, 0, 0);
	err = ubifs_build_add(b, node, UBIFS_INO_NODE_SZ, &ino.key);
	free(node);
	if (!err)
		err = ubifs_build_finish(b, UBIFS_FIRST_INO, NULL);
	if (err)
		util_err_set(e, err, "format: %s", ubifs_build_errmsg(b));
	ubifs_build_free(b);
	return err;
}
