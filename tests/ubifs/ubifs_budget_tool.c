/* ubifs_budget_tool — test helper for tests/vm/ubifs_budget_kernel.sh: fill
 * a bare UBIFS image through the library (ubikit_*) with small and large
 * files and directories until ENOSPC, which may only come from a write,
 * create or mkdir call (fsync, close and unmount must succeed). A model
 * records what the calls accepted; a read-only remount must show exactly
 * that, and its manifest ("PATH d" / "PATH f SIZE MD5", sorted) is written
 * for the kernel's view to be compared with. Then a read-write mount
 * reports statfs ("BLOCKS BFREE BAVAIL" in 4 KiB blocks) for comparison
 * with the kernel's `stat -f` on the same image.
 *   ubifs_budget_tool IMAGE SEED MANIFEST STATFS_OUT [MAX_BYTES]
 * MAX_BYTES: stop after that many bytes instead (a part-full file system).
 * Exit 0 when everything went as the model says. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <ubikit/ubikit.h>

#include "test_md5.h"
#include "ubi/ubi_flat.h"

struct ent {
	char path[96];
	int is_dir;
	uint32_t id;
	uint64_t size;
};

static uint8_t content(uint32_t id, uint64_t off)
{
	uint64_t h = (id + 1) * 0x9E3779B97F4A7C15ull ^ (off * 0xC2B2AE3D27D4EB4Full);
	h ^= h >> 29;
	h *= 0xBF58476D1CE4E5B9ull;
	h ^= h >> 32;
	return (uint8_t)h;
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static int die(const char *what, const char *msg)
{
	fprintf(stderr, "ubifs_budget_tool: %s: %s\n", what, msg);
	return 1;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static struct ubikit_fs *mnt(struct ubi_vol_io *vol, const char *img, int ro)
{
	if (ubi_flat_open(img, 0, ro, vol))
		return NULL;
	struct ubikit_mount_opts o = {.flags = ro ? UBIKIT_MOUNT_RDONLY : 0};
	struct ubikit_fs *fs = NULL;
	char e[512];
	if (ubikit_mount_ex(vol, &o, &fs, e, sizeof(e))) {
		fprintf(stderr, "ubifs_budget_tool: mount: %s\n", e);
		ubi_flat_close(vol);
		return NULL;
	}
	return fs;
}

int main(int argc, char **argv)
{
	if (argc < 5)
		return die("usage", "IMAGE SEED MANIFEST STATFS_OUT");
	const char *img = argv[1];
	uint64_t rng = strtoull(argv[2], NULL, 0) | 1;
	uint64_t max_bytes = argc > 5 ? strtoull(argv[5], NULL, 0) : 0;
	struct ubi_vol_io vol;
	struct ubikit_fs *fs = mnt(&vol, img, 0);
	if (!fs)
		return die(img, "read-write mount failed");
	struct ent *m = calloc(20000, sizeof(*m));
	uint8_t *buf = malloc(65536);
	if (!m || !buf)
		return die("memory", "out of memory");
	size_t n = 0, ndirs = 0;
	unsigned enospc = 0;
	uint64_t bytes = 0;
	char path[128];
	for (unsigned op = 0; op < 20000 && enospc < 30 && (!max_bytes || bytes < max_bytes); op++) {
		unsigned r = (unsigned)(rnd(&rng) % 100);
		const char *parent = "";
		if (ndirs && rnd(&rng) % 2) {
			size_t k = rnd(&rng) % n;
			while (!m[k].is_dir)
				k = (k + 1) % n;
			if (strlen(m[k].path) < 80)
				parent = m[k].path;
		}
		snprintf(path, sizeof(path), "%.80s/%c%u", parent, r < 8 ? 'd' : 'f', op);
		if (r < 8) {
			int err = ubikit_mkdir(fs, path, 0755);
			if (err == -ENOSPC) {
				enospc++;
				continue;
			}
			if (err)
				return die(path, ubikit_errmsg(fs));
			snprintf(m[n].path, sizeof(m[n].path), "%.95s", path);
			m[n++].is_dir = 1;
			ndirs++;
			continue;
		}
		struct ubikit_file *f;
		int err = ubikit_open(fs, path, O_CREAT | O_EXCL | O_WRONLY, 0644, &f);
		if (err == -ENOSPC) {
			enospc++;
			continue;
		}
		if (err)
			return die(path, ubikit_errmsg(fs));
		struct ent *x = &m[n++];
		snprintf(x->path, sizeof(x->path), "%.95s", path);
		x->id = op;
		uint64_t want = r < 75 ? 1 + rnd(&rng) % 6000 : 65536 + rnd(&rng) % (600 * 1024);
		while (x->size < want) {
			size_t len = 1 + (size_t)(rnd(&rng) % 40000);
			if (len > want - x->size)
				len = (size_t)(want - x->size);
			for (size_t k = 0; k < len; k++)
				buf[k] = content(x->id, x->size + k);
			ssize_t got = ubikit_write(f, buf, len);
			if (got == -ENOSPC) {
				enospc++;
				break;
			}
			if (got < 0)
				return die("write", ubikit_errmsg(fs));
			x->size += (uint64_t)got;
			bytes += (uint64_t)got;
			if ((size_t)got < len)
				break;
		}
		if (rnd(&rng) % 5 == 0 && ubikit_fsync(f))
			return die("fsync (ENOSPC must come at the write)", ubikit_errmsg(fs));
		if (ubikit_close(f))
			return die("close", path);
	}
	if (!enospc && !max_bytes)
		return die("fill", "the file system never filled up");
	if (ubikit_unmount(fs))
		return die("unmount (ENOSPC must come at the write)", "failed");
	if (ubi_flat_close(&vol))
		return die(img, "write-back failed");
	printf("filled: %zu entries, %llu bytes accepted, %u ENOSPC answers\n", n, (unsigned long long)bytes, enospc);

	/* every accepted call on flash, exactly; the manifest */
	fs = mnt(&vol, img, 1);
	if (!fs)
		return die(img, "read-only mount failed");
	char **lines = calloc(n + 1, sizeof(*lines));
	for (size_t i = 0; i < n; i++) {
		struct ubikit_stat st;
		if (ubikit_stat(fs, m[i].path, &st))
			return die(m[i].path, "missing after remount");
		char line[256];
		if (m[i].is_dir) {
			snprintf(line, sizeof(line), ".%s d", m[i].path);
		} else {
			if (st.size != m[i].size)
				return die(m[i].path, "size differs after remount");
			struct ubikit_file *f;
			if (ubikit_open(fs, m[i].path, O_RDONLY, 0, &f))
				return die(m[i].path, "open");
			struct util_md5 md;
			util_md5_init(&md);
			for (uint64_t off = 0; off < m[i].size;) {
				ssize_t got = ubikit_pread(f, buf, 65536, off);
				if (got <= 0)
					return die(m[i].path, "read");
				for (ssize_t k = 0; k < got; k++)
					if (buf[k] != content(m[i].id, off + (uint64_t)k))
						return die(m[i].path, "content differs after remount");
				util_md5_update(&md, buf, (size_t)got);
				off += (uint64_t)got;
			}
			ubikit_close(f);
			char hex[33];
			util_md5_hex(&md, hex);
			snprintf(line, sizeof(line), ".%s f %llu %s", m[i].path, (unsigned long long)m[i].size, hex);
		}
		lines[i] = strdup(line);
	}
	ubikit_unmount(fs);
	ubi_flat_close(&vol);
	qsort(lines, n, sizeof(*lines), cmp_str);
	FILE *out = fopen(argv[3], "w");
	if (!out)
		return die(argv[3], "cannot write");
	for (size_t i = 0; i < n; i++) {
		fprintf(out, "%s\n", lines[i]);
		free(lines[i]);
	}
	fclose(out);
	free(lines);

	/* statfs right after a read-write mount, as the kernel's first look */
	fs = mnt(&vol, img, 0);
	if (!fs)
		return die(img, "read-write remount failed");
	struct ubikit_statfs sf;
	if (ubikit_statfs(fs, &sf))
		return die("statfs", ubikit_errmsg(fs));
	ubikit_unmount(fs);
	ubi_flat_close(&vol);
	out = fopen(argv[4], "w");
	if (!out)
		return die(argv[4], "cannot write");
	fprintf(out, "%llu %llu %llu\n", (unsigned long long)sf.blocks, (unsigned long long)sf.blocks_free,
		(unsigned long long)sf.blocks_avail);
	fclose(out);
	printf("statfs (ubikit): blocks %llu free %llu avail %llu\n", (unsigned long long)sf.blocks,
	       (unsigned long long)sf.blocks_free, (unsigned long long)sf.blocks_avail);
	free(m);
	free(buf);
	return 0;
}
