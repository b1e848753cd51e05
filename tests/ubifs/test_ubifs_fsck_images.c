/* test_ubifs_fsck_images — the 53 kernel-written images of the mtd-utils
 * fsck test suite (tests/data/fsck-images, NOR mtdram, 16 KiB PEBs), read
 * through the real UBI attach (read-only) and the UBIFS read path.
 *  - good: exactly the tree of the README (md5s, xattr, devices, links);
 *  - sb_*: the superblock is corrupt: mount must fail naming the superblock;
 *  - every other image either mounts and can be walked completely (every
 *    failing call leaves an error message) or fails with a message that
 *    names a place. Nothing may crash, hang, leak or write;
 *  - the data, driven by the README's table: a file read in full gives the
 *    README's bytes, never other ones (the README's "read:" notes list the
 *    two images whose file differs), a failed read leaves a message, and a
 *    file the table says the damage leaves intact must read when the image
 *    mounts and a checker would repair it without a rebuild. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>
#include <cmocka.h>
#include <ubikit/ubikit.h>

#include "flash/flash.h"
#include "flash/flash_sim.h"
#include "fs/fs.h"
#include "ubi/ubi.h"
#include "ubifs/ubifs.h"
#include "ubifs_test_tree.h"
#include "test_md5.h"

#define IMGDIR UBIKIT_TEST_DATA "/fsck-images"
#define WORK UBIKIT_BUILD_DIR "/ubifs-fsck"
#define DEV_SIZE (1u << 20)
#define PEB_SIZE 16384u

static const char *const images[] = {
	"good", "sb_fanout", "sb_fmt_version", "sb_leb_size", "sb_log_lebs", "sb_min_io_size", "master_highest_inum",
	"master_lpt", "master_tnc", "master_total_dead", "master_total_dirty", "master_total_free", "journal_log",
	"journal_bud", "orphan_node", "lpt_dirty", "lpt_flags", "lpt_free", "lpt_pos", "ltab_dirty", "ltab_free",
	"index_size", "tnc_lv0_key", "tnc_lv0_len", "tnc_lv0_pos", "tnc_noleaf_key", "tnc_noleaf_len",
	"tnc_noleaf_pos", "corrupted_data_leb", "corrupted_idx_leb", "inode_data", "inode_mode", "inode_nlink",
	"inode_size", "inode_xcnt", "soft_link_inode_mode", "soft_link_data_len", "dentry_key", "dentry_nlen",
	"dentry_type", "xinode_flags", "xinode_key", "xinode_mode", "xentry_key", "xentry_nlen", "xentry_type",
	"xent_host", "dir_many_dentry", "dir_lost", "dir_lost_duplicated", "dir_lost_not_recover", "root_dir",
	"empty_tnc",
};

struct img {
	struct flash_dev *flash;
	struct ubi_device *ubi;
	struct ubi_vol_io vol;
	char path[512];
};

/* Unpack name.gz into a 1 MiB device image (rest erased) and attach it. */
static int open_img(const char *name, struct img *m, char *msg, size_t msglen)
{
	memset(m, 0, sizeof(*m));
	char gz[512];
	snprintf(gz, sizeof(gz), "%s/%s.gz", IMGDIR, name);
	snprintf(m->path, sizeof(m->path), "%s/%s.img", WORK, name);
	uint8_t *buf = malloc(DEV_SIZE);
	assert_non_null(buf);
	memset(buf, 0xFF, DEV_SIZE);
	gzFile g = gzopen(gz, "rb");
	assert_non_null(g);
	int n = gzread(g, buf, DEV_SIZE);
	gzclose(g);
	assert_true(n > 0);
	FILE *f = fopen(m->path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, DEV_SIZE, f), DEV_SIZE);
	fclose(f);
	free(buf);
	struct flash_geometry geo = {.type = FLASH_NOR, .page_size = 1, .subpage_size = 1, .oob_size = 0,
				     .peb_size = PEB_SIZE, .peb_count = DEV_SIZE / PEB_SIZE};
	char e[256];
	int err = flash_sim_open_ex(m->path, &geo, false, true, &m->flash, e, sizeof(e));
	if (err)
		fail_msg("%s: flash_sim_open: %d %s", name, err, e);
	struct ubi_attach_opts o;
	ubi_attach_opts_default(&o);
	o.read_only = true;
	err = ubi_attach_msg(m->flash, &o, &m->ubi, msg, msglen);
	if (err)
		return err;
	err = ubi_volume_io(m->ubi, 0, &m->vol);
	if (err)
		snprintf(msg, msglen, "no volume 0 (%d)", err);
	return err;
}

static void close_img(struct img *m)
{
	if (m->ubi)
		ubi_detach(m->ubi);
	if (m->flash)
		flash_close(m->flash);
	remove(m->path);
}

static void md5_of(struct ubikit_fs *fs, const char *path, char hex[33])
{
	struct ubikit_file *f;
	assert_int_equal(ubikit_open(fs, path, 0, 0, &f), 0);
	struct util_md5 c;
	util_md5_init(&c);
	uint8_t buf[4096];
	ssize_t n;
	while ((n = ubikit_read(f, buf, sizeof(buf))) > 0)
		util_md5_update(&c, buf, (size_t)n);
	assert_int_equal(n, 0);
	ubikit_close(f);
	util_md5_hex(&c, hex);
}

/* The README's table: per image the mode and the F Fc H Hc S D Dc columns. */
struct row {
	char name[32], mode[32];
	int F, Fc, H, Hc, S, D, Dc;
};

static int readme_row(const char *name, struct row *out)
{
	FILE *f = fopen(IMGDIR "/README.md", "r");
	assert_non_null(f);
	char line[512];
	int found = 0;
	while (!found && fgets(line, sizeof(line), f)) {
		struct row r;
		int Fx, Hx;
		if (sscanf(line, "| %31[a-z0-9_] | %31[a-z_] | %d | %d | %d | %d | %d | %d | %d | %d | %d |", r.name,
			   r.mode, &r.F, &r.Fc, &Fx, &r.H, &r.Hc, &Hx, &r.S, &r.D, &r.Dc) == 11 &&
		    !strcmp(r.name, name)) {
			*out = r;
			found = 1;
		}
	}
	fclose(f);
	return found;
}

/* the README's "read:" note for (image, path): "prefix=N", "other" or "" */
static void readme_note(const char *name, const char *path, char *note, size_t len)
{
	FILE *f = fopen(IMGDIR "/README.md", "r");
	assert_non_null(f);
	char line[512], n[64], p[128], v[64];
	note[0] = 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "| read: | %63[a-z0-9_] | %127[a-z_/] | %63[a-z0-9=] |", n, p, v) == 3 &&
		    !strcmp(n, name) && !strcmp(p, path))
			snprintf(note, len, "%s", v);
	fclose(f);
}

/* Read a whole file: 0 and its md5 (and first bytes), or the error. */
static int read_all(struct ubikit_fs *fs, const char *path, char hex[33], uint8_t *head, size_t *headlen)
{
	struct ubikit_file *f;
	int err = ubikit_open(fs, path, 0, 0, &f);
	if (err)
		return err;
	struct util_md5 c;
	util_md5_init(&c);
	uint8_t buf[4096];
	ssize_t n;
	size_t hl = 0;
	while ((n = ubikit_read(f, buf, sizeof(buf))) > 0) {
		util_md5_update(&c, buf, (size_t)n);
		size_t take = hl + (size_t)n <= *headlen ? (size_t)n : *headlen - hl;
		memcpy(head + hl, buf, take);
		hl += take;
	}
	ubikit_close(f);
	if (n < 0)
		return (int)n;
	*headlen = hl;
	util_md5_hex(&c, hex);
	return 0;
}

static uint8_t good_corrupt_file[2048]; /* from t_good, checked against the README md5 */

static int check_data(struct ubikit_fs *fs, const char *name)
{
	struct row r;
	assert_true(readme_row(name, &r));
	struct {
		const char *path;
		int present, same;
		const char *md5;
	} files[] = {
		{"/corrupt_file", r.F, r.Fc, "7d2f953e91033c743ab6a801d5ee6e15"},
		{"/hardl_corrupt_file", r.H, r.Hc, "7d2f953e91033c743ab6a801d5ee6e15"},
		{"/softl_corrupt_file", r.S && r.F, r.Fc, "7d2f953e91033c743ab6a801d5ee6e15"},
		{"/dir/file", r.D, r.Dc, "ba1f2511fc30423bdbb183fe33f3dd0f"},
	};
	bool repairable = !strcmp(r.mode, "safe") || !strcmp(r.mode, "danger_default");
	int reads = 0;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char hex[33], note[64];
		uint8_t head[4096];
		size_t hl = sizeof(head);
		int err = read_all(fs, files[i].path, hex, head, &hl);
		if (err) {
			/* (ENOENT, EISDIR: the entry is gone or is no file: plain errno) */
			if (err != -ENOENT && err != -EISDIR && !ubikit_errmsg(fs)[0])
				fail_msg("%s: %s: error %d without a message", name, files[i].path, err);
			if (files[i].present && files[i].same && repairable)
				fail_msg("%s: %s: %d (%s), but the README says the damage leaves it intact", name,
					 files[i].path, err, ubikit_errmsg(fs));
			continue;
		}
		reads++;
		if (!strcmp(hex, files[i].md5))
			continue;
		readme_note(name, files[i].path, note, sizeof(note));
		if (!strncmp(note, "prefix=", 7)) {
			size_t want = (size_t)atoi(note + 7);
			if (hl != want || memcmp(head, good_corrupt_file, want))
				fail_msg("%s: %s: not the file's first %zu bytes", name, files[i].path, want);
		} else if (strcmp(note, "other") != 0) {
			fail_msg("%s: %s: read other bytes (md5 %s, README %s)", name, files[i].path, hex, files[i].md5);
		}
	}
	return reads;
}

static void t_good(void **s)
{
	(void)s;
	struct img m;
	char msg[512] = "";
	if (open_img("good", &m, msg, sizeof(msg)))
		fail_msg("attach good: %s", msg);
	struct ubikit_fs *fs;
	int err = ubikit_mount_ex(&m.vol, NULL, &fs, msg, sizeof(msg));
	if (err)
		fail_msg("mount good: %d %s", err, msg);
	struct ubikit_stat st, st2;
	char hex[33];
	assert_int_equal(ubikit_lstat(fs, "/corrupt_file", &st), 0);
	assert_true(S_ISREG(st.mode));
	assert_int_equal(st.ino, 65);
	assert_int_equal(st.size, 2048);
	assert_int_equal(st.nlink, 2);
	md5_of(fs, "/corrupt_file", hex);
	assert_string_equal(hex, "7d2f953e91033c743ab6a801d5ee6e15");
	size_t gl = sizeof(good_corrupt_file);
	assert_int_equal(read_all(fs, "/corrupt_file", hex, good_corrupt_file, &gl), 0);
	assert_int_equal(gl, sizeof(good_corrupt_file));
	assert_int_equal(ubikit_lstat(fs, "/hardl_corrupt_file", &st2), 0);
	assert_int_equal(st2.ino, st.ino);
	char v[16];
	assert_int_equal(ubikit_getxattr(fs, "/corrupt_file", "user.corrupt", v, sizeof(v)), 3);
	assert_memory_equal(v, "123", 3);
	assert_int_equal(ubikit_getxattr(fs, "/hardl_corrupt_file", "user.corrupt", v, sizeof(v)), 3);
	assert_int_equal(ubikit_getxattr(fs, "/corrupt_file", "user.nope", v, sizeof(v)), -ENODATA);
	char list[64];
	assert_int_equal(ubikit_listxattr(fs, "/corrupt_file", list, sizeof(list)), 13);
	assert_string_equal(list, "user.corrupt");
	assert_int_equal(ubikit_listxattr(fs, "/corrupt_file", NULL, 0), 13);
	assert_int_equal(ubikit_getxattr(fs, "/corrupt_file", "user.corrupt", NULL, 0), 3);
	assert_int_equal(ubikit_lstat(fs, "/softl_corrupt_file", &st), 0);
	assert_true(S_ISLNK(st.mode));
	char t[64];
	assert_int_equal(ubikit_readlink(fs, "/softl_corrupt_file", t, sizeof(t)), 12);
	assert_memory_equal(t, "corrupt_file", 12);
	assert_int_equal(ubikit_stat(fs, "/softl_corrupt_file", &st), 0);
	assert_int_equal(st.ino, 65);
	assert_int_equal(ubikit_lstat(fs, "/dir", &st), 0);
	assert_true(S_ISDIR(st.mode));
	assert_int_equal(ubikit_lstat(fs, "/dir/file", &st), 0);
	assert_int_equal(st.ino, 72);
	md5_of(fs, "/dir/file", hex);
	assert_string_equal(hex, "ba1f2511fc30423bdbb183fe33f3dd0f");
	assert_int_equal(ubikit_lstat(fs, "/dir/dir", &st), 0);
	assert_true(S_ISDIR(st.mode));
	assert_int_equal(ubikit_lstat(fs, "/dir/block_dev", &st), 0);
	assert_true(S_ISBLK(st.mode));
	assert_int_equal(st.rdev_major, 1);
	assert_int_equal(st.rdev_minor, 2);
	assert_int_equal(ubikit_lstat(fs, "/dir/char_dev", &st), 0);
	assert_true(S_ISCHR(st.mode));
	assert_int_equal(st.rdev_major, 0);
	assert_int_equal(st.rdev_minor, 1);
	/* exactly these names */
	const char *want_root[] = {"corrupt_file", "dir", "hardl_corrupt_file", "softl_corrupt_file"};
	const char *want_dir[] = {"block_dev", "char_dev", "dir", "file"};
	const char *const *want[] = {want_root, want_dir};
	const char *dirs[] = {"/", "/dir"};
	for (int d = 0; d < 2; d++) {
		struct ubikit_dir *dh;
		assert_int_equal(ubikit_opendir(fs, dirs[d], &dh), 0);
		struct ubikit_dirent e;
		int cnt = 0, r;
		while ((r = ubikit_readdir(dh, &e)) == 1) {
			int found = 0;
			for (int i = 0; i < 4; i++)
				found |= !strcmp(e.name, want[d][i]);
			assert_true(found);
			cnt++;
		}
		assert_int_equal(r, 0);
		assert_int_equal(cnt, 4);
		ubikit_closedir(dh);
	}
	assert_int_equal(ubikit_lstat(fs, "/dir/dir", &st), 0);
	struct ubikit_dir *dh;
	assert_int_equal(ubikit_opendir(fs, "/dir/dir", &dh), 0);
	struct ubikit_dirent e;
	assert_int_equal(ubikit_readdir(dh, &e), 0);
	ubikit_closedir(dh);
	struct ubifs_fs_info info;
	assert_int_equal(ubifs_get_info(fs_ubifs(fs), &info), 0);
	/* the kernel's clean unmount left a journal (spec §11.2: 2 buds) */
	assert_int_equal(info.need_recovery, 0);
	assert_int_equal(info.mst.cmt_no, 2);
	assert_int_equal(info.sb.leb_size, 16256);
	assert_int_equal(info.min_io_size, 8);
	fprintf(stderr, "good: %u buds, %llu journal nodes replayed, max_sqnum %llu, highest_inum %llu\n", info.buds,
		(unsigned long long)info.replayed_nodes, (unsigned long long)info.max_sqnum,
		(unsigned long long)info.highest_inum);
	ubikit_unmount(fs);
	close_img(&m);
}

static void t_all(void **s)
{
	(void)s;
	int mounted = 0, refused = 0, reads = 0;
	for (size_t i = 0; i < sizeof(images) / sizeof(images[0]); i++) {
		const char *name = images[i];
		struct img m;
		char msg[512] = "";
		int err = open_img(name, &m, msg, sizeof(msg));
		if (err) {
			fprintf(stderr, "%-22s UBI attach failed: %s\n", name, msg);
			assert_true(msg[0] != 0);
			close_img(&m);
			refused++;
			continue;
		}
		struct ubikit_fs *fs;
		err = ubikit_mount_ex(&m.vol, NULL, &fs, msg, sizeof(msg));
		if (!strncmp(name, "sb_", 3)) {
			assert_true(err < 0);
			assert_non_null(strstr(msg, "superblock"));
		}
		if (err) {
			fprintf(stderr, "%-22s mount refused (%d): %s\n", name, err, msg);
			assert_true(strlen(msg) > 10);
			assert_non_null(strstr(msg, "LEB") ? msg : strstr(msg, "inode") ? msg : strstr(msg, "superblock"));
			refused++;
		} else {
			uint64_t entries, errors;
			assert_int_equal(tt_walk_all(fs, &entries, &errors), 0);
			fprintf(stderr, "%-22s mounted: %llu entries walked, %llu failing calls%s%s\n", name,
				(unsigned long long)entries, (unsigned long long)errors, errors ? "; last: " : "",
				errors ? ubikit_errmsg(fs) : "");
			if (errors)
				assert_true(strlen(ubikit_errmsg(fs)) > 10);
			reads += check_data(fs, name);
			ubikit_unmount(fs);
			mounted++;
		}
		close_img(&m);
	}
	fprintf(stderr, "%d mounted, %d refused, %d whole-file reads checked against the README\n", mounted, refused,
		reads);
	assert_int_equal(mounted + refused, (int)(sizeof(images) / sizeof(images[0])));
	assert_true(mounted > 20);
}

static int setup(void **s)
{
	(void)s;
	return tt_run("mkdir -p '%s'", WORK) ? -1 : 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(t_good), cmocka_unit_test(t_all)};
	return cmocka_run_group_tests(tests, setup, NULL);
}
