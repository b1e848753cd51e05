/* test_util — CRC vectors (spec TEST-VECTORS.md), size parsing, SplitMix64,
 * and who holds a lock (util_file_lock) against the host kernel's view of
 * the processes this test starts. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "util/util_crc.h"
#include "util/util_endian.h"
#include "util/util_file.h"
#include "util/util_prng.h"
#include "util/util_size.h"

static void test_crc32_vector(void **state)
{
	(void)state;
	assert_int_equal(util_crc32(UTIL_CRC32_INIT, "123456789", 9), 0x340BC6D9u);
	/* Continuation equals one-shot. */
	uint32_t c = util_crc32(UTIL_CRC32_INIT, "1234", 4);
	assert_int_equal(util_crc32(c, "56789", 5), 0x340BC6D9u);
	uint8_t zeros[168] = {0};
	assert_int_equal(util_crc32(UTIL_CRC32_INIT, zeros, sizeof(zeros)), 0xF116C36Bu);
}

static void test_crc16_vector(void **state)
{
	(void)state;
	/* CRC-16/MODBUS check value. */
	assert_int_equal(util_crc16(UTIL_CRC16_INIT, "123456789", 9), 0x4B37);
}

static void test_sizes(void **state)
{
	(void)state;
	uint64_t v;
	assert_int_equal(util_parse_size("2048", &v), 0);
	assert_int_equal(v, 2048);
	assert_int_equal(util_parse_size("128KiB", &v), 0);
	assert_int_equal(v, 131072);
	assert_int_equal(util_parse_size("256MiB", &v), 0);
	assert_int_equal(v, 256u << 20);
	assert_int_equal(util_parse_size("4G", &v), 0);
	assert_int_equal(v, 4ull << 30);
	assert_int_equal(util_parse_size("0x800", &v), 0);
	assert_int_equal(v, 2048);
	assert_int_equal(util_parse_size("12XB", &v), -EINVAL);
	assert_int_equal(util_parse_size("", &v), -EINVAL);
	assert_int_equal(util_parse_size("-1", &v), -EINVAL);
	assert_int_equal(util_parse_size("99999999999999999999", &v), -ERANGE);
	assert_int_equal(util_parse_size("17179869184GiB", &v), -ERANGE);
	/* Units are explicit powers of 1024; decimal- or bit-looking ones are refused. */
	assert_int_equal(util_parse_size("10 MiB", &v), 0);
	assert_int_equal(v, 10u << 20);
	assert_int_equal(util_parse_size("1TiB", &v), 0);
	assert_int_equal(v, 1ull << 40);
	assert_int_equal(util_parse_size("10Mb", &v), -EINVAL);
	assert_int_equal(util_parse_size("10MB", &v), -EINVAL);
	assert_int_equal(util_parse_size("10kb", &v), -EINVAL);
	assert_int_equal(util_parse_size("10mib", &v), -EINVAL);
	assert_int_equal(util_parse_size(" 10", &v), -EINVAL);
	assert_int_equal(util_parse_size("10 ", &v), -EINVAL);
	assert_int_equal(util_parse_uint("10K", &v), -EINVAL);
	assert_int_equal(util_parse_uint("0x10", &v), 0);
	assert_int_equal(v, 16);
	/* Range checks. */
	assert_int_equal(util_parse_uint_in("255", 0, 255, &v), 0);
	assert_int_equal(util_parse_uint_in("999", 0, 255, &v), -ERANGE);
	assert_int_equal(util_parse_size_in("0", 1, 100, &v), -ERANGE);
	assert_int_equal(util_parse_size_in("4294965249", 0, UINT32_MAX, &v), 0);
	assert_int_equal(util_parse_size_in("4GiB", 0, UINT32_MAX, &v), -ERANGE);
}

static void test_splitmix(void **state)
{
	(void)state;
	struct util_prng r;
	util_prng_seed(&r, 3);
	assert_int_equal(util_prng_next(&r), 0x1d0b14e4db018fedull);
	/* BENCH.md W3: first slots with seed 3. */
	util_prng_seed(&r, 3);
	const unsigned slots[] = {4077, 2441, 3329, 2511, 2454, 3847, 3512, 534};
	for (int i = 0; i < 8; i++)
		assert_int_equal(util_prng_below(&r, 4096), slots[i]);
}

static void test_endian(void **state)
{
	(void)state;
	uint8_t b[8];
	put_be32(b, 0x55424923u);
	assert_memory_equal(b, "UBI#", 4);
	put_le64(b, 0x0102030405060708ull);
	assert_int_equal(b[0], 8);
	assert_int_equal(get_le64(b), 0x0102030405060708ull);
	put_be64(b, 0x0102030405060708ull);
	assert_int_equal(b[0], 1);
	assert_int_equal(get_be64(b), 0x0102030405060708ull);
}

#define LOCKF UBIKIT_BUILD_DIR "/scratch/test_util_lock"

/* A child that takes a lock on LOCKF (exclusive or not), then, if
 * daemon, forks a grandchild that keeps the open file and exits itself;
 * the process keeping the lock ends up as `sleep 30` (exec keeps the
 * descriptor). Returns the pid of the process keeping the lock. */
static pid_t start_holder(bool exclusive, bool daemon)
{
	int p[2];
	assert_int_equal(pipe(p), 0);
	pid_t c = fork();
	assert_true(c >= 0);
	if (c == 0) {
		close(p[0]);
		int fd = open(LOCKF, O_RDWR);
		if (fd < 0 || flock(fd, exclusive ? LOCK_EX : LOCK_SH))
			_exit(1);
		pid_t keeper = getpid();
		if (daemon) {
			keeper = fork();
			if (keeper < 0)
				_exit(1);
			if (keeper > 0) {
				if (write(p[1], &keeper, sizeof(keeper)) != sizeof(keeper))
					_exit(1);
				_exit(0); /* the lock's taker is gone */
			}
			keeper = getpid();
		} else if (write(p[1], &keeper, sizeof(keeper)) != sizeof(keeper)) {
			_exit(1);
		}
		close(p[1]);
		execlp("sleep", "sleep", "30", (char *)NULL);
		_exit(1);
	}
	close(p[1]);
	pid_t keeper = 0;
	assert_int_equal(read(p[0], &keeper, sizeof(keeper)), sizeof(keeper));
	close(p[0]);
	if (daemon) {
		int st;
		assert_int_equal(waitpid(c, &st, 0), c);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	/* wait for the exec: the kernel shows the new command line */
	char want[64], got[64];
	snprintf(want, sizeof(want), "/proc/%d/cmdline", (int)keeper);
	for (int i = 0; i < 500; i++) {
		FILE *f = fopen(want, "r");
		size_t n = f ? fread(got, 1, sizeof(got) - 1, f) : 0;
		if (f)
			fclose(f);
		got[n] = 0;
		if (!strcmp(got, "sleep"))
			break;
		usleep(10000);
	}
	return keeper;
}

static void stop(pid_t pid, bool child)
{
	kill(pid, SIGKILL);
	if (child)
		waitpid(pid, NULL, 0);
	/* a grandchild is reaped by init; its files are closed once it is dead */
}

static void test_lock_holders(void **state)
{
	(void)state;
	assert_int_equal(system("mkdir -p " UBIKIT_BUILD_DIR "/scratch && : > " LOCKF), 0);
	int fd = open(LOCKF, O_RDWR);
	assert_true(fd >= 0);
	struct util_err e;
	char want[200];
	/* a reader: readers may share, a writer is told who reads */
	pid_t r = start_holder(false, false);
	util_err_clear(&e);
	assert_int_equal(util_file_lock(fd, false, LOCKF, &e), 0);
	flock(fd, LOCK_UN);
	assert_int_equal(util_file_lock(fd, true, LOCKF, &e), -EBUSY);
	snprintf(want, sizeof(want), "in use: pid %d (sleep 30) holds a read lock on it; cannot change it now", (int)r);
	if (!strstr(util_err_msg(&e), want))
		fail_msg("\"%s\", want \"%s\"", util_err_msg(&e), want);
	stop(r, true);
	/* a writer that has become a daemon: the lock's taker exited, the
	 * process that keeps the file open is named */
	pid_t w = start_holder(true, true);
	util_err_clear(&e);
	assert_int_equal(util_file_lock(fd, false, LOCKF, &e), -EBUSY);
	snprintf(want, sizeof(want), "in use: pid %d (sleep 30) holds a write lock on it; cannot read it now", (int)w);
	if (!strstr(util_err_msg(&e), want))
		fail_msg("\"%s\", want \"%s\"", util_err_msg(&e), want);
	stop(w, false);
	/* our own other open file holds it: no other program to name */
	int fd2 = open(LOCKF, O_RDWR);
	assert_true(fd2 >= 0);
	assert_int_equal(flock(fd2, LOCK_EX), 0);
	util_err_clear(&e);
	assert_int_equal(util_file_lock(fd, false, LOCKF, &e), -EBUSY);
	assert_non_null(strstr(util_err_msg(&e), LOCKF " is in use by another program (locked); cannot read it now"));
	close(fd2);
	assert_int_equal(util_file_lock(fd, true, LOCKF, &e), 0);
	close(fd);
	unlink(LOCKF);
}

/* File identities and output files against the host's own answers (stat,
 * open): a missing path or one through a file is "no file", a symlink loop
 * is the host's ELOOP; an output that is an input is refused, names or not;
 * an output in a missing directory gets the host's ENOENT; an existing
 * regular output is emptied, a character device is not. */
static void test_outputs(void **state)
{
	(void)state;
	const char *d = UBIKIT_BUILD_DIR "/scratch/test_util_out";
	assert_int_equal(system("rm -rf " UBIKIT_BUILD_DIR "/scratch/test_util_out && mkdir -p " UBIKIT_BUILD_DIR
				"/scratch/test_util_out && cd " UBIKIT_BUILD_DIR "/scratch/test_util_out && "
				"printf abc > in && printf old > out && ln -s loop loop"),
			 0);
	char p[512], q[512];
	struct util_file_id id[3];
	snprintf(p, sizeof(p), "%s/in/x", d);
	struct stat st;
	assert_int_equal(stat(p, &st), -1);
	assert_int_equal(errno, ENOTDIR);
	assert_int_equal(util_file_id_path(p, &id[0]), 0);
	assert_false(id[0].valid);
	snprintf(p, sizeof(p), "%s/loop", d);
	assert_int_equal(stat(p, &st), -1);
	assert_int_equal(util_file_id_path(p, &id[0]), -errno);
	assert_false(util_file_id_same(&id[0], &id[0])); /* no file is no file */
	snprintf(p, sizeof(p), "%s/in", d);
	util_file_id_image(p, id); /* the image and its (missing) sidecar */
	assert_true(id[0].valid);
	assert_false(id[1].valid);
	assert_true(util_file_id_same(&id[0], &id[0]));
	struct util_err e;
	util_err_clear(&e);
	/* the input itself, through another name: refused whatever the names */
	snprintf(q, sizeof(q), "%s/in2", d);
	assert_int_equal(link(p, q), 0);
	assert_int_equal(util_open_output(q, id, NULL, 2, &e), -EINVAL);
	assert_non_null(strstr(util_err_msg(&e), "is the input \"?\" (same file)"));
	const char *names[2] = {"IN", NULL};
	assert_int_equal(util_open_output(q, id, names, 2, &e), -EINVAL);
	assert_non_null(strstr(util_err_msg(&e), "is the input \"IN\" (same file)"));
	FILE *f = fopen(p, "r");
	assert_non_null(f);
	assert_int_equal(fgetc(f), 'a'); /* untouched */
	fclose(f);
	/* a missing directory: the host's errno */
	snprintf(q, sizeof(q), "%s/no/out", d);
	assert_int_equal(open(q, O_WRONLY | O_CREAT, 0666), -1);
	int herr = errno;
	assert_int_equal(util_open_output(q, id, names, 2, &e), -herr);
	assert_non_null(strstr(util_err_msg(&e), "cannot create \""));
	/* an existing file is emptied, /dev/null is left as it is */
	snprintf(q, sizeof(q), "%s/out", d);
	int fd = util_open_output(q, id, names, 2, &e);
	assert_true(fd >= 0);
	assert_int_equal(util_fd_is_input(fd, id, 2), -1);
	close(fd);
	assert_int_equal(stat(q, &st), 0);
	assert_int_equal(st.st_size, 0);
	fd = util_open_output("/dev/null", id, names, 2, &e);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(util_fd_is_input(fd, id, 2), -1); /* a closed descriptor is no input */
	fd = open(p, O_RDONLY);
	assert_int_equal(util_fd_is_input(fd, id, 2), 0);
	close(fd);
	assert_int_equal(system("rm -rf " UBIKIT_BUILD_DIR "/scratch/test_util_out"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crc32_vector), cmocka_unit_test(test_crc16_vector),
		cmocka_unit_test(test_sizes),        cmocka_unit_test(test_splitmix),
		cmocka_unit_test(test_endian),       cmocka_unit_test(test_lock_holders),
		cmocka_unit_test(test_outputs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
