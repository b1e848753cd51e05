/* ubikit — the command-line entry point: dispatches to a subcommand. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <ubikit/version.h>

#include "commands.h"

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{"flash", cmd_flash, "create, inspect, erase and inject faults into a simulated flash"},
	{"ubinize", cmd_ubinize, "build a UBI image from an ini file (mtd-utils ubinize flags)"},
	{"format", cmd_format, "write a UBI image or an empty UBI onto a flash (like ubiformat)"},
	{"ubi", cmd_ubi, "UBI volumes on a flash image: info, mkvol, rmvol, rsvol, rename, update"},
	{"info", cmd_info, "describe an image: UBI, volumes, UBIFS superblock and master"},
	{"ls", cmd_ls, "list a directory inside an image"},
	{"cat", cmd_cat, "print a file from an image"},
	{"extract", cmd_extract, "extract the whole file system of an image into a directory"},
	{"dump", cmd_dump, "node-level listing of an image, for debugging"},
	{"mount", cmd_mount, "mount an image through FUSE"},
	{"bench", cmd_bench, "run the benchmark workloads (see docs/bench.md)"},
	{"put", cmd_put, "copy host files and trees into an image (as cp -a)"},
	{"mkdir", cmd_mkdir, "make directories in an image"},
	{"rm", cmd_rm, "remove files or trees from an image"},
	{"mv", cmd_mv, "rename or move inside an image"},
	{"ln", cmd_ln, "make a hard or symbolic link in an image"},
	{"chmod", cmd_chmod, "change permission bits in an image"},
	{"setfattr", cmd_setfattr, "set or remove an extended attribute in an image"},
	{"mkfs", cmd_mkfs, "make a UBIFS image from a directory (mkfs.ubifs options)"},
	{"fsck", cmd_fsck, "check (and repair) the UBIFS in an image"},
	{"torture", cmd_torture, "power cuts, bit flips, bad blocks, wear on a simulated flash, model-checked"},
};

static void usage(FILE *out)
{
	fprintf(out, "usage: ubikit COMMAND [ARGS]\n\n"
		     "UBI and UBIFS, the Linux flash stack, in user space.\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-9s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\n'ubikit COMMAND --help' describes a command.\n");
}

/* Output that did not reach stdout (a full disk, /dev/full, a closed pipe
 * reader) is a failure of the command, whatever it returned: flush here,
 * once for every command, and say so. */
static int check_stdout(const char *cmd, int status)
{
	errno = 0;
	if (fflush(stdout) == 0 && !ferror(stdout))
		return status;
	int e = errno;
	fprintf(stderr, "ubikit %s: error writing to standard output: %s\n", cmd, e ? strerror(e) : "write error");
	return status ? status : 1;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return check_stdout("--help", 0);
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("ubikit %s (libubikit %s)\n", UBIKIT_VERSION_STRING, ubikit_version());
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name)) {
			/* "flash info", "ubi info": name the subcommand too in the message. */
			char name[64];
			bool sub = (!strcmp(argv[1], "flash") || !strcmp(argv[1], "ubi")) && argc > 2 && argv[2][0] != '-';
			snprintf(name, sizeof(name), "%s%s%.40s", argv[1], sub ? " " : "", sub ? argv[2] : "");
			int status = commands[i].run(argc - 1, argv + 1);
			return check_stdout(name, status);
		}
	fprintf(stderr, "ubikit: unknown command '%s' (try 'ubikit --help')\n", argv[1]);
	return 2;
}
