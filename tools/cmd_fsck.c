/* cmd_fsck — 'ubikit fsck [-n|-a|-y] [--json] [image options] IMAGE':
 * check (and repair) the UBIFS in an image (library: <ubikit/fsck.h>).
 * Problems go to stderr, one line each naming its place; --json prints
 * the report on stdout. Exit status as fsck(8): 0 clean, 1 corrected,
 * 4 errors left, 8 operational error, 16 usage. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <ubikit/fsck.h>

#include "commands.h"
#include "tool_image.h"

static void fsck_usage(FILE *out)
{
	fprintf(out, "usage: ubikit fsck [-n|-a|-y] [--json] [image options] IMAGE\n"
		     "Check the UBIFS in IMAGE (and with -a/-y repair it).\n"
		     "  -n, --no         check only: the image is opened read-only, never written (default)\n"
		     "  -a, -p, --auto   repair what can be repaired without losing anything\n"
		     "  -y, --yes        repair everything, accepting loss\n"
		     "      --json       print the report as JSON on stdout\n"
		     "  -h, --help       this help\n"
		     "exit status: 0 clean, 1 errors corrected, 4 errors left, 8 operational error, 16 usage\n"
		     TOOL_IMAGE_OPTS_HELP);
}

static void json_str(const char *s)
{
	putchar('"');
	for (; s && *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\')
			printf("\\%c", ch);
		else if (ch < 0x20)
			printf("\\u%04x", ch);
		else
			putchar(ch);
	}
	putchar('"');
}

static void print_json(const char *image, const char *mode, int rc, const struct ubikit_fsck_report *r)
{
	printf("{\"image\": ");
	json_str(image);
	printf(", \"mode\": \"%s\", \"exit\": %d, \"repaired\": %s, \"inodes\": %" PRIu64 ", \"dentries\": %" PRIu64
	       ", \"bytes_read\": %" PRIu64 ", \"problems\": [",
	       mode, rc, r->repaired ? "true" : "false", r->inodes, r->dentries, r->bytes_read);
	for (size_t i = 0; i < r->count; i++) {
		const struct ubikit_fsck_problem *p = &r->problems[i];
		printf("%s\n  {\"msg\": ", i ? "," : "");
		json_str(p->msg);
		if (p->peb >= 0)
			printf(", \"peb\": %" PRId64, p->peb);
		if (p->lnum >= 0)
			printf(", \"leb\": %" PRId64, p->lnum);
		if (p->offs >= 0)
			printf(", \"offset\": %" PRId64, p->offs);
		if (p->inum)
			printf(", \"inode\": %" PRIu64, p->inum);
		if (p->path) {
			printf(", \"path\": ");
			json_str(p->path);
		}
		printf(", \"fixed\": %s, \"loss\": %s, \"fatal\": %s}", (p->flags & UBIKIT_FSCK_FIXED) ? "true" : "false",
		       (p->flags & UBIKIT_FSCK_LOSS) ? "true" : "false", (p->flags & UBIKIT_FSCK_FATAL) ? "true" : "false");
	}
	printf("]}\n");
}

int cmd_fsck(int argc, char **argv)
{
	static const struct option lopts[] = {{"no", no_argument, NULL, 'n'},
					      {"auto", no_argument, NULL, 'a'},
					      {"yes", no_argument, NULL, 'y'},
					      {"json", no_argument, NULL, 0x2000},
					      {"help", no_argument, NULL, 'h'},
					      TOOL_IMAGE_LONGOPTS,
					      {NULL, 0, NULL, 0}};
	struct tool_image_opts io;
	tool_image_opts_init(&io);
	enum ubikit_fsck_mode mode = UBIKIT_FSCK_CHECK;
	int json = 0, modes = 0;
	int opt;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "napyhv", lopts, NULL)) != -1) {
		int r = tool_image_opt(&io, opt, optarg, "fsck");
		if (r < 0)
			return UBIKIT_FSCK_USAGE;
		if (r)
			continue;
		switch (opt) {
		case 'n': mode = UBIKIT_FSCK_CHECK; modes++; break;
		case 'a':
		case 'p': mode = UBIKIT_FSCK_AUTO; modes++; break;
		case 'y': mode = UBIKIT_FSCK_YES; modes++; break;
		case 0x2000: json = 1; break;
		case 'h': fsck_usage(stdout); return 0;
		default: fsck_usage(stderr); return UBIKIT_FSCK_USAGE;
		}
	}
	if (optind + 1 != argc || modes > 1) {
		if (modes > 1)
			fprintf(stderr, "ubikit fsck: give one of -n, -a, -y\n");
		fsck_usage(stderr);
		return UBIKIT_FSCK_USAGE;
	}
	const char *image = argv[optind];
	struct ubikit_fsck_report rep;
	ubikit_fsck_report_init(&rep);
	char msg[1024];
	int rc = ubikit_fsck_image(image, &io.img, mode, &rep, msg, sizeof(msg));
	for (size_t i = 0; i < rep.count; i++) {
		const struct ubikit_fsck_problem *p = &rep.problems[i];
		fprintf(stderr, "ubikit fsck: %s%s%s%s%s\n", p->msg, p->path && !strstr(p->msg, p->path) ? " (path " : "",
			p->path && !strstr(p->msg, p->path) ? p->path : "", p->path && !strstr(p->msg, p->path) ? ")" : "",
			(p->flags & UBIKIT_FSCK_FIXED) ? (p->flags & UBIKIT_FSCK_LOSS) ? " [fixed, loss]" : " [fixed]" : "");
	}
	const char *mname = mode == UBIKIT_FSCK_CHECK ? "check" : mode == UBIKIT_FSCK_AUTO ? "auto" : "yes";
	if (json)
		print_json(image, mname, rc, &rep);
	else
		printf("%s: %s (%zu problem%s, %" PRIu64 " inodes, %" PRIu64 " entries, %" PRIu64 " bytes read)\n",
		       image,
		       rc == UBIKIT_FSCK_CLEAN ? "clean" : rc == UBIKIT_FSCK_CORRECTED ? "errors corrected"
			 : rc == UBIKIT_FSCK_LEFT ? "errors left" : "operational error",
		       rep.count, rep.count == 1 ? "" : "s", rep.inodes, rep.dentries, rep.bytes_read);
	ubikit_fsck_report_free(&rep);
	return rc;
}
