/* util_file — see util_file.h. */
#include "util/util_file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* The command line of pid, arguments joined by spaces (empty if gone). */
static void proc_cmdline(long pid, char *out, size_t outlen)
{
	out[0] = '\0';
	char p[64];
	snprintf(p, sizeof(p), "/proc/%ld/cmdline", pid);
	FILE *f = fopen(p, "r");
	if (!f)
		return;
	size_t n = fread(out, 1, outlen - 1, f);
	fclose(f);
	out[n] = '\0';
	while (n && out[n - 1] == '\0')
		n--;
	for (size_t i = 0; i < n; i++)
		if (out[i] == '\0' || out[i] == '\n')
			out[i] = ' ';
	out[n] = '\0';
}

/* Find a process other than us holding a lock on (dev, ino) in
 * /proc/locks. Returns its pid (0 if none found) and whether it writes. */
static long find_holder(const struct stat *st, bool *writes)
{
	FILE *f = fopen("/proc/locks", "r");
	if (!f)
		return 0;
	char line[256];
	long found = 0;
	while (!found && fgets(line, sizeof(line), f)) {
		if (strstr(line, "->"))
			continue; /* a waiter, not a holder */
		char type[16], mode[16], access[16];
		long pid;
		unsigned maj, min;
		unsigned long long ino;
		const char *c = strchr(line, ':');
		if (!c)
			continue;
		if (sscanf(c + 1, " %15s %15s %15s %ld %x:%x:%llu", type, mode, access, &pid, &maj, &min, &ino) != 7)
			continue;
		if (maj != major(st->st_dev) || min != minor(st->st_dev) || ino != (unsigned long long)st->st_ino)
			continue;
		if (pid == (long)getpid() || pid <= 0)
			continue;
		found = pid;
		*writes = !strcmp(access, "WRITE");
	}
	fclose(f);
	return found;
}

/* A process other than us with the file (dev, ino) open: the one that
 * keeps a lock whose taker has exited (a daemon after fork). 0 if none. */
static long find_opener(const struct stat *st)
{
	DIR *proc = opendir("/proc");
	if (!proc)
		return 0;
	long found = 0;
	struct dirent *de;
	while (!found && (de = readdir(proc))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		if (*end || pid <= 0 || pid == (long)getpid())
			continue;
		char dir[64];
		snprintf(dir, sizeof(dir), "/proc/%ld/fd", pid);
		DIR *fds = opendir(dir);
		if (!fds)
			continue;
		struct dirent *fe;
		while ((fe = readdir(fds))) {
			char p[96];
			struct stat fst;
			snprintf(p, sizeof(p), "%s/%.20s", dir, fe->d_name);
			if (fe->d_name[0] != '.' && stat(p, &fst) == 0 && fst.st_dev == st->st_dev && fst.st_ino == st->st_ino) {
				found = pid;
				break;
			}
		}
		closedir(fds);
	}
	closedir(proc);
	return found;
}

int util_file_lock(int fd, bool exclusive, const char *path, struct util_err *err)
{
	for (;;) {
		if (flock(fd, (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB) == 0)
			return 0;
		if (errno == EINTR)
			continue;
		if (errno != EWOULDBLOCK)
			return 0; /* no locks on this file system (ENOLCK, EINVAL): go on unlocked */
		break;
	}
	struct stat st;
	bool writes = false;
	long pid = fstat(fd, &st) == 0 ? find_holder(&st, &writes) : 0;
	const char *want = exclusive ? "cannot change it" : "cannot read it";
	if (!pid)
		return util_err_set(err, -EBUSY, "%s is in use by another program (locked); %s now", path, want);
	char cmd[200];
	proc_cmdline(pid, cmd, sizeof(cmd));
	if (!cmd[0]) {
		/* The taker is gone (e.g. a daemon's parent): name who has it open. */
		long other = find_opener(&st);
		if (other) {
			pid = other;
			proc_cmdline(pid, cmd, sizeof(cmd));
		}
	}
	return util_err_set(err, -EBUSY, "%s is in use: pid %ld (%s) holds a %s lock on it; %s now", path, pid,
			    cmd[0] ? cmd : "gone; a process it started keeps the lock", writes ? "write" : "read", want);
}

int util_file_id_fd(int fd, struct util_file_id *id)
{
	struct stat st;
	memset(id, 0, sizeof(*id));
	if (fstat(fd, &st) < 0)
		return -errno;
	id->dev = st.st_dev;
	id->ino = st.st_ino;
	id->valid = true;
	return 0;
}

int util_file_id_path(const char *path, struct util_file_id *id)
{
	struct stat st;
	memset(id, 0, sizeof(*id));
	if (stat(path, &st) < 0)
		return errno == ENOENT || errno == ENOTDIR ? 0 : -errno;
	id->dev = st.st_dev;
	id->ino = st.st_ino;
	id->valid = true;
	return 0;
}

bool util_file_id_same(const struct util_file_id *a, const struct util_file_id *b)
{
	return a->valid && b->valid && a->dev == b->dev && a->ino == b->ino;
}

void util_file_id_image(const char *path, struct util_file_id ids[2])
{
	util_file_id_path(path, &ids[0]);
	size_t n = strlen(path);
	char *side = malloc(n + 5);
	memset(&ids[1], 0, sizeof(ids[1]));
	if (!side)
		return;
	memcpy(side, path, n);
	memcpy(side + n, ".sim", 5);
	util_file_id_path(side, &ids[1]);
	free(side);
}

int util_fd_is_input(int fd, const struct util_file_id *inputs, size_t n)
{
	struct util_file_id me;
	if (util_file_id_fd(fd, &me))
		return -1;
	for (size_t i = 0; i < n; i++)
		if (util_file_id_same(&me, &inputs[i]))
			return (int)i;
	return -1;
}

int util_open_output(const char *path, const struct util_file_id *inputs, const char *const *names, size_t n,
		     struct util_err *err)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
	if (fd < 0) {
		int e = errno;
		return util_err_set(err, -e, "cannot create \"%s\": %s", path, strerror(e));
	}
	int k = util_fd_is_input(fd, inputs, n);
	if (k >= 0) {
		close(fd);
		return util_err_set(err, -EINVAL, "the output \"%s\" is the input \"%s\" (same file): refusing to overwrite it",
				    path, names && names[k] ? names[k] : "?");
	}
	struct stat st;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size && ftruncate(fd, 0) < 0) {
		int e = errno;
		close(fd);
		return util_err_set(err, -e, "cannot truncate \"%s\": %s", path, strerror(e));
	}
	return fd;
}
