/* bench_fs — what the BENCH.md file-system workloads W1-W7 share: their
 * scale (full, or --short for tests), a freshly formatted device (simulator
 * in RAM -> UBI -> one dynamic volume filling the device -> an empty UBIFS),
 * mount/unmount through the library, the incompressible data pool and the
 * file-writing helpers that count user bytes and put a failure into words.
 *
 * The workloads use only the public API (include/ubikit/ubikit.h) on the
 * mounted file system; UBI and the simulator are touched only to make and
 * attach the device and to read its counters. */
#ifndef UBIKIT_TOOLS_BENCH_FS_H
#define UBIKIT_TOOLS_BENCH_FS_H
#include <stddef.h>
#include <stdint.h>
#include <ubikit/ubikit.h>

#include "bench.h"
#include "ubi/ubi.h"

/* Counts of BENCH.md's definitions; the full scale is BENCH.md's. */
struct bench_scale {
	unsigned w1_dirs, w1_files;       /* W1: directories, files of 4096 B per directory */
	unsigned w2_writes;               /* W2: 64 KiB writes to /big */
	unsigned w3_fill_writes;          /* W3 phase 1: 64 KiB writes; slots = writes * 16 */
	unsigned w3_overwrites;           /* W3 phase 2: 4 KiB overwrites (fsync every 64th) */
	unsigned w4_remounts;             /* W4 extra: mount + unmount cycles */
	unsigned w5_files;                /* W5: live 1 MiB files */
	uint64_t w5_total;                /* W5: churn until this many user bytes (fill included) */
	unsigned w6_files;                /* W6: empty files in /many */
	unsigned w7_appends;              /* W7: 512 B append + fsync */
};
const struct bench_scale *bench_scale(const struct bench_ctx *ctx);

#define BENCH_COMPRESSOR "lzo" /* mkfs.ubifs' default, what the empty UBIFS is made with */

/* What UBIFS asked of its volume (counted by a wrapper around the volume's
 * vtable): with the flash counters, it splits write amplification into the
 * part UBIFS makes and the part UBI and page padding add. */
struct bench_vol_stats {
	uint64_t writes, write_bytes;    /* LEB writes (journal heads, log, index, LPT, master) */
	uint64_t changes, change_bytes;  /* atomic LEB changes */
	uint64_t unmaps, maps;
	uint64_t reads, read_bytes;      /* LEB reads (what the caches above did not hold) */
};

struct bench_fs {
	struct bench_ctx *ctx;
	struct flash_dev *dev;
	struct ubi_device *ubi;
	uint32_t vol_id;
	struct ubi_vol_io vol;          /* what UBIFS is given: the counting wrapper of inner */
	struct ubi_vol_io inner;        /* the UBI volume */
	struct bench_vol_stats vs;
	FILE *trace;                    /* UBIKIT_BENCH_TRACE=FILE: every volume write/change/unmap */
	const char *phase;              /* the phase being measured, for the trace */
	struct ubikit_fs *fs;
	uint8_t *pool;          /* incompressible bytes (SplitMix64) the writes take slices of */
	size_t pool_len, pool_pos;
	uint64_t user_bytes;    /* user data written since the workload's phase began */
	char err[512];          /* the last failure, in words */
};

/* A freshly formatted device: simulator in RAM (ctx->device), UBI attached
 * (its autoformat writes the EC headers), one dynamic volume "bench" of all
 * available PEBs, and an empty UBIFS on it made by mkfs.ubifs (of an empty
 * directory, default settings: compressor lzo) written with a volume update.
 * Left attached, not mounted. On failure b->err says why. */
int bench_fs_format(struct bench_ctx *ctx, struct bench_fs *b);
/* Attach UBI (unless attached) and mount the volume read-write. */
int bench_fs_mount(struct bench_fs *b);
/* Unmount, then detach UBI (which finishes the queued erasures). */
int bench_fs_unmount(struct bench_fs *b);
/* Free everything, mounted or not (after a failure). */
void bench_fs_close(struct bench_fs *b);

/* The next len (<= 1 MiB) incompressible bytes. */
const uint8_t *bench_fs_data(struct bench_fs *b, size_t len);
/* Create path (O_CREAT|O_EXCL|O_WRONLY, 0644), make `writes` write calls of
 * wsize bytes, close. Counts user bytes; on failure b->err names the call. */
int bench_fs_create_file(struct bench_fs *b, const char *path, unsigned writes, size_t wsize);
/* Put a failed library call into b->err and return err. */
int bench_fs_failed(struct bench_fs *b, const char *call, const char *path, int err);

/* The steps of W1 and W2 before their unmount, on a mounted b (W4 runs
 * them too). 0 or a negative errno with b->err set. */
int bench_w1_steps(struct bench_fs *b);
int bench_w2_steps(struct bench_fs *b);
/* A workload whose phases are the steps plus the unmount, from a freshly
 * formatted device: one record named `phase`. */
int bench_fs_simple(struct bench_ctx *ctx, const char *phase, int (*steps)(struct bench_fs *));

/* CPU seconds (user+sys) of this process so far. */
double bench_cpu_s(void);

#endif
