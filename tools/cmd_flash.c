/* cmd_flash — 'ubikit flash': create, describe, erase and inject faults
 * into simulated flash images (src/flash/flash_sim). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "flash/flash_sim.h"
#include "ubi_tool_num.h"
#include "util/util_size.h"

static void usage_main(FILE *out)
{
	fprintf(out, "usage: ubikit flash SUBCOMMAND IMAGE [OPTIONS]\n\n"
		     "Simulated flash images: the data in nanddump's layout (page after page, or\n"
		     "page+OOB with --with-oob) and the simulator's state in IMAGE.sim.\n\n"
		     "subcommands:\n"
		     "  create   make a new erased flash image\n"
		     "  info     geometry, bad blocks, wear, used/erased PEBs\n"
		     "  erase    erase one PEB or all of them\n"
		     "  inject   make a PEB bad, add a bit flip, or set a PEB's wear\n\n"
		     "'ubikit flash SUBCOMMAND --help' describes each.\n");
}

static void usage_create(FILE *out)
{
	fprintf(out,
		"usage: ubikit flash create IMAGE [OPTIONS]\n\n"
		"Create an erased flash image. Defaults: SLC NAND, 256 MiB, page 2048, OOB 64,\n"
		"PEB 128 KiB, no sub-pages, data-only layout.\n\n"
		"  --size SIZE        device size (default 256MiB)\n"
		"  --page SIZE        NAND page (min. I/O unit) size (default 2048)\n"
		"  --oob SIZE         OOB bytes per page (default 64)\n"
		"  --peb SIZE         erase block size (default 128KiB; NOR 64KiB)\n"
		"  --subpage SIZE     sub-page size (default: the page size, no sub-pages)\n"
		"  --nor              NOR flash (1-byte writes, no OOB); same as --profile nor\n"
		"  --profile NAME     slc (default), mlc (endurance 3000, bit flips), nor\n"
		"  --with-oob         store page+OOB per page (nanddump -o / nandwrite -o layout)\n"
		"  --endurance N      erase cycles per PEB before it fails and goes bad (0 = no limit)\n"
		"  --nop N            programs allowed per sub-page between erases (default 1)\n"
		"  --in-order         pages of a PEB must be programmed in ascending order\n"
		"  --sparse           keep erased PEBs as holes (small file; holes are listed in\n"
		"                     IMAGE.sim, so the file alone is not a plain nanddump image)\n"
		"  --seed N           seed for bit flips and power-cut patterns (default 1)\n"
		"  --force            replace IMAGE if it exists (otherwise an existing IMAGE is\n"
		"                     refused)\n"
		"SIZE: a number with an optional unit KiB, MiB, GiB, TiB (or K, M, G, T), powers\n"
		"of 1024; KB, MB, Mb and the like are refused. Without --sparse the whole image is\n"
		"written, so the free space is checked first and progress is shown on long work.\n");
}

static void usage_info(FILE *out)
{
	fprintf(out, "usage: ubikit flash info IMAGE [--json] [GEOMETRY]\n\n"
		     "Describe a flash image. Without IMAGE.sim (a plain dump or ubinize output),\n"
		     "the geometry is taken from the options (defaults: page 2048, OOB 64,\n"
		     "PEB 128KiB, data only, size = the file's):\n"
		     "  --page SIZE --oob SIZE --peb SIZE --subpage SIZE --size SIZE --with-oob --nor\n"
		     "  --json             one JSON object instead of text\n");
}

static void usage_erase(FILE *out)
{
	fprintf(out, "usage: ubikit flash erase IMAGE (--peb N | --all)\n\n"
		     "Erase one PEB, or every good PEB. Counts toward wear.\n");
}

static void usage_inject(FILE *out)
{
	fprintf(out, "usage: ubikit flash inject IMAGE KIND [OPTIONS]\n\n"
		     "  bad --peb N [--grown]          mark PEB N bad (factory bad unless --grown)\n"
		     "  bitflip --peb N --page P [--uncorrectable]\n"
		     "                                 reads of that page report a corrected bit flip\n"
		     "                                 (-EUCLEAN) or an ECC failure (-EBADMSG) until\n"
		     "                                 the PEB is erased\n"
		     "  wear --peb N --count C         set PEB N's physical erase count to C\n");
}

static int bad_arg(const char *sub, const char *fmt, const char *arg)
{
	fprintf(stderr, "ubikit flash %s: ", sub);
	fprintf(stderr, fmt, arg);
	fprintf(stderr, " (try 'ubikit flash %s --help')\n", sub);
	return 2;
}

/* Every number goes through the one parser and a range check (tool_num). */
static int parse_num(const char *sub, const char *opt, const char *text, bool size, uint64_t min, uint64_t max,
		     uint64_t *out)
{
	char who[64];
	snprintf(who, sizeof(who), "ubikit flash %s", sub);
	return tool_num(who, opt, text, size, min, max, out) ? 2 : 0;
}

static int parse_u32(const char *sub, const char *opt, const char *text, bool size, uint32_t min, uint32_t max,
		     uint32_t *out)
{
	uint64_t v;
	if (parse_num(sub, opt, text, size, min, max, &v))
		return 2;
	*out = (uint32_t)v;
	return 0;
}

enum {
	O_SIZE = 1000, O_PAGE, O_OOB, O_PEB, O_SUBPAGE, O_NOR, O_PROFILE, O_WITH_OOB, O_ENDURANCE, O_SEED, O_NOP,
	O_IN_ORDER, O_SPARSE, O_FORCE, O_JSON, O_ALL, O_PEBN, O_PAGEN, O_UNCORR, O_COUNT, O_GROWN, O_HELP
};

/* Geometry options shared by create and info. */
struct geo_opts {
	uint64_t size;
	uint32_t page, oob, peb, subpage;
	bool nor, with_oob;
	bool have_size, have_page, have_oob, have_peb, have_subpage;
};

static int geo_opt(const char *sub, int c, struct geo_opts *g)
{
	switch (c) {
	case O_SIZE:
		g->have_size = true;
		return parse_num(sub, "--size", optarg, true, 1, UINT64_MAX, &g->size);
	case O_PAGE:
		g->have_page = true;
		return parse_u32(sub, "--page", optarg, true, 1, UINT32_MAX, &g->page);
	case O_OOB:
		g->have_oob = true;
		return parse_u32(sub, "--oob", optarg, true, 0, UINT32_MAX, &g->oob);
	case O_PEB:
		g->have_peb = true;
		return parse_u32(sub, "--peb", optarg, true, 1, UINT32_MAX, &g->peb);
	case O_SUBPAGE:
		g->have_subpage = true;
		return parse_u32(sub, "--subpage", optarg, true, 1, UINT32_MAX, &g->subpage);
	case O_NOR:
		g->nor = true;
		return 0;
	case O_WITH_OOB:
		g->with_oob = true;
		return 0;
	}
	return -1;
}

/* Apply geometry options onto a geometry; size -> PEB count. */
static int geo_apply(const char *sub, const struct geo_opts *o, struct flash_geometry *geo, bool need_count)
{
	if (o->nor) {
		geo->type = FLASH_NOR;
		geo->page_size = geo->subpage_size = 1;
		geo->oob_size = 0;
		if (o->have_page && o->page != 1)
			return bad_arg(sub, "%s", "--page must be 1 for NOR flash");
		if (o->have_oob && o->oob)
			return bad_arg(sub, "%s", "NOR flash has no OOB (--oob)");
	} else {
		if (o->have_page)
			geo->page_size = geo->subpage_size = o->page;
		if (o->have_oob)
			geo->oob_size = o->oob;
	}
	if (o->have_subpage)
		geo->subpage_size = o->subpage;
	if (o->have_peb)
		geo->peb_size = o->peb;
	if (o->have_size) {
		if (!geo->peb_size || o->size % geo->peb_size || !o->size) {
			fprintf(stderr, "ubikit flash %s: --size %" PRIu64 " is not a non-zero multiple of the PEB size %u\n",
				sub, o->size, geo->peb_size);
			return 2;
		}
		if (o->size / geo->peb_size > UINT32_MAX) {
			fprintf(stderr, "ubikit flash %s: --size is too large\n", sub);
			return 2;
		}
		geo->peb_count = (uint32_t)(o->size / geo->peb_size);
	} else if (!need_count) {
		geo->peb_count = 0;
	}
	return 0;
}

/* Before anything is written: IMAGE must not exist, unless --force (the
 * library checks the free space for the whole image). */
static int check_target(const char *image, bool force)
{
	struct stat st;
	if (stat(image, &st) == 0 && !force) {
		fprintf(stderr, "ubikit flash create: %s already exists (use --force to replace it)\n", image);
		return 1;
	}
	return 0;
}

/* Progress of filling a large image: on a terminal always, otherwise in
 * 10% steps for images of 1 GiB or more. */
struct create_progress {
	const char *image;
	int last; /* last percentage shown, -1 = none */
};

static void show_progress(void *arg, uint64_t done, uint64_t total)
{
	struct create_progress *p = arg;
	bool tty = isatty(STDERR_FILENO);
	if (total < (tty ? (64ull << 20) : (1ull << 30)))
		return;
	int pct = (int)(done * 100 / total);
	if (pct == p->last || (!tty && pct / 10 == p->last / 10 && p->last >= 0))
		return;
	p->last = pct;
	if (tty)
		fprintf(stderr, "\r%s: writing erased flash: %3d%% (%" PRIu64 " of %" PRIu64 " MiB)", p->image, pct,
			done >> 20, total >> 20);
	else
		fprintf(stderr, "%s: writing erased flash: %d%% (%" PRIu64 " of %" PRIu64 " MiB)\n", p->image, pct,
			done >> 20, total >> 20);
}

static int flash_cmd_create(int argc, char **argv)
{
	static const struct option lo[] = {
		{"size", 1, 0, O_SIZE},         {"page", 1, 0, O_PAGE},           {"oob", 1, 0, O_OOB},
		{"peb", 1, 0, O_PEB},           {"subpage", 1, 0, O_SUBPAGE},     {"nor", 0, 0, O_NOR},
		{"profile", 1, 0, O_PROFILE},   {"with-oob", 0, 0, O_WITH_OOB},   {"endurance", 1, 0, O_ENDURANCE},
		{"seed", 1, 0, O_SEED},         {"nop", 1, 0, O_NOP},             {"in-order", 0, 0, O_IN_ORDER},
		{"sparse", 0, 0, O_SPARSE},     {"force", 0, 0, O_FORCE},         {"help", 0, 0, O_HELP},
		{0, 0, 0, 0},
	};
	struct geo_opts g = {0};
	const char *profile = NULL;
	uint32_t endurance = 0, nop = 1;
	uint64_t seed = 1;
	bool have_endurance = false, in_order = false, sparse = false, force = false;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		int r = geo_opt("create", c, &g);
		if (r > 0)
			return r;
		if (r == 0)
			continue;
		switch (c) {
		case O_PROFILE:
			profile = optarg;
			break;
		case O_ENDURANCE:
			have_endurance = true;
			if (parse_u32("create", "--endurance", optarg, false, 0, UINT32_MAX, &endurance))
				return 2;
			break;
		case O_SEED:
			if (parse_num("create", "--seed", optarg, false, 0, UINT64_MAX, &seed))
				return 2;
			break;
		case O_NOP:
			if (parse_u32("create", "--nop", optarg, false, 1, 255, &nop))
				return 2;
			break;
		case O_IN_ORDER:
			in_order = true;
			break;
		case O_SPARSE:
			sparse = true;
			break;
		case O_FORCE:
			force = true;
			break;
		case 'h':
		case O_HELP:
			usage_create(stdout);
			return 0;
		default:
			return bad_arg("create", "unknown or incomplete option '%s'", argv[optind - 1]);
		}
	}
	if (optind != argc - 1)
		return bad_arg("create", "%s", optind >= argc ? "IMAGE is missing" : "more than one IMAGE given");
	const char *image = argv[optind];

	struct flash_sim_config cfg;
	flash_sim_config_default(&cfg);
	if (g.nor && !profile)
		profile = "nor";
	if (profile) {
		if (flash_sim_config_profile(&cfg, profile))
			return bad_arg("create", "unknown profile '%s' (slc, mlc or nor)", profile);
		if (!strcmp(profile, "nor"))
			g.nor = true;
		else if (g.nor)
			return bad_arg("create", "--nor conflicts with --profile %s", profile);
	}
	if (g.nor && g.with_oob)
		return bad_arg("create", "%s", "--with-oob: NOR flash has no OOB");
	if (!g.have_size) {
		g.have_size = true;
		g.size = 256ull << 20;
	}
	int r = geo_apply("create", &g, &cfg.geo, true);
	if (r)
		return r;
	if (have_endurance)
		cfg.endurance = endurance;
	cfg.nop = nop;
	cfg.in_order = in_order;
	cfg.seed = seed;
	cfg.sparse = sparse;
	cfg.file_has_oob = g.with_oob;
	cfg.path = image;
	char msg[1100];
	if (flash_sim_check_geometry(&cfg.geo, msg, sizeof(msg))) {
		fprintf(stderr, "ubikit flash create: invalid geometry: %s\n", msg);
		return 2;
	}
	r = check_target(image, force);
	if (r)
		return r;
	struct create_progress pr = {image, -1};
	cfg.progress = show_progress;
	cfg.progress_arg = &pr;
	struct flash_dev *dev;
	r = flash_sim_create_ex(&cfg, &dev, msg, sizeof(msg));
	if (pr.last >= 0 && isatty(STDERR_FILENO))
		fputc('\n', stderr);
	if (r == -EINVAL) {
		/* Geometry problems are argument errors. */
		fprintf(stderr, "ubikit flash create: invalid geometry: %s\n", msg);
		return 2;
	}
	if (r) {
		fprintf(stderr, "ubikit flash create: %s\n", msg);
		return 1;
	}
	r = flash_sync(dev);
	if (r) {
		fprintf(stderr, "ubikit flash create: %s\n", flash_sim_last_error(dev));
		flash_close(dev);
		return 1;
	}
	flash_close(dev);
	printf("%s: %s, %" PRIu64 " bytes: %u PEBs of %u bytes, page %u, sub-page %u, OOB %u%s\n", image,
	       cfg.geo.type == FLASH_NOR ? "NOR" : "NAND", (uint64_t)cfg.geo.peb_count * cfg.geo.peb_size,
	       cfg.geo.peb_count, cfg.geo.peb_size, cfg.geo.page_size, cfg.geo.subpage_size, cfg.geo.oob_size,
	       g.with_oob ? " (data+OOB layout)" : "");
	return 0;
}

/* Open IMAGE: its sidecar if any, otherwise geometry from options. */
static int open_image(const char *sub, const char *image, const struct geo_opts *g, bool read_only,
		      struct flash_dev **dev, bool *have_sidecar)
{
	char sc[4096];
	snprintf(sc, sizeof(sc), "%s.sim", image);
	*have_sidecar = access(sc, F_OK) == 0;
	struct flash_geometry geo;
	struct flash_sim_config d;
	flash_sim_config_default(&d);
	geo = d.geo;
	const struct flash_geometry *gp = NULL;
	if (!*have_sidecar) {
		if (g->nor) {
			flash_sim_config_profile(&d, "nor");
			geo = d.geo;
		}
		int r = geo_apply(sub, g, &geo, false);
		if (r)
			return -1000 - r;
		gp = &geo;
	}
	char msg[1100];
	int r = flash_sim_open_ex(image, gp, g->with_oob, read_only, dev, msg, sizeof(msg));
	if (r)
		fprintf(stderr, "ubikit flash %s: %s\n", sub, msg);
	return r;
}

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
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

static int flash_cmd_info(int argc, char **argv)
{
	static const struct option lo[] = {
		{"json", 0, 0, O_JSON},       {"size", 1, 0, O_SIZE},     {"page", 1, 0, O_PAGE},
		{"oob", 1, 0, O_OOB},         {"peb", 1, 0, O_PEB},       {"subpage", 1, 0, O_SUBPAGE},
		{"nor", 0, 0, O_NOR},         {"with-oob", 0, 0, O_WITH_OOB}, {"help", 0, 0, O_HELP},
		{0, 0, 0, 0},
	};
	struct geo_opts g = {0};
	bool json = false;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		int r = geo_opt("info", c, &g);
		if (r > 0)
			return r;
		if (r == 0)
			continue;
		if (c == O_JSON)
			json = true;
		else if (c == 'h' || c == O_HELP) {
			usage_info(stdout);
			return 0;
		} else
			return bad_arg("info", "unknown or incomplete option '%s'", argv[optind - 1]);
	}
	if (optind != argc - 1)
		return bad_arg("info", "%s", optind >= argc ? "IMAGE is missing" : "more than one IMAGE given");
	const char *image = argv[optind];
	struct flash_dev *dev;
	bool sidecar;
	int r = open_image("info", image, &g, true, &dev, &sidecar);
	if (r <= -1000)
		return -r - 1000;
	if (r)
		return 1;
	struct flash_sim_config cfg;
	flash_sim_get_config(dev, &cfg);
	const struct flash_geometry *geo = &dev->geo;
	uint32_t n = geo->peb_count, nbad = 0, nerased = 0, nused = 0;
	for (uint32_t i = 0; i < n; i++) {
		if (flash_sim_bad_kind(dev, i) > 0)
			nbad++;
		else if (flash_sim_peb_is_erased(dev, i) == 1)
			nerased++;
		else
			nused++;
	}
	struct flash_wear_stats ws;
	flash_sim_wear_stats(dev, &ws);
	const char *type = geo->type == FLASH_NOR ? "nor" : "nand";
	if (json) {
		printf("{\"image\": ");
		json_str(image);
		printf(", \"sidecar\": %s, \"type\": \"%s\", \"page_size\": %u, \"subpage_size\": %u, "
		       "\"oob_size\": %u, \"peb_size\": %u, \"peb_count\": %u, \"size\": %" PRIu64 ", "
		       "\"file_has_oob\": %s, \"sparse\": %s, \"nop\": %u, \"in_order\": %s, \"endurance\": %u, "
		       "\"seed\": %" PRIu64 ", \"used_pebs\": %u, \"erased_pebs\": %u, \"bad_pebs\": %u, "
		       "\"bad_blocks\": [",
		       sidecar ? "true" : "false", type, geo->page_size, geo->subpage_size, geo->oob_size,
		       geo->peb_size, n, flash_size(dev), cfg.file_has_oob ? "true" : "false",
		       cfg.sparse ? "true" : "false", cfg.nop, cfg.in_order ? "true" : "false", cfg.endurance,
		       cfg.seed, nused, nerased, nbad);
		bool first = true;
		for (uint32_t i = 0; i < n; i++) {
			int k = flash_sim_bad_kind(dev, i);
			if (k > 0) {
				printf("%s{\"peb\": %u, \"kind\": \"%s\"}", first ? "" : ", ", i,
				       k == 2 ? "factory" : "grown");
				first = false;
			}
		}
		printf("], \"wear\": {\"min\": %u, \"max\": %u, \"mean\": %.4f, \"stddev\": %.4f}}\n", ws.min, ws.max,
		       ws.mean, ws.stddev);
	} else {
		printf("image:      %s%s\n", image, sidecar ? "" : " (no .sim sidecar: geometry from options/defaults)");
		printf("type:       %s\n", geo->type == FLASH_NOR ? "NOR" : "NAND");
		printf("geometry:   %u PEBs x %u bytes = %" PRIu64 " bytes; page %u, sub-page %u, OOB %u\n", n,
		       geo->peb_size, flash_size(dev), geo->page_size, geo->subpage_size, geo->oob_size);
		printf("layout:     %s%s\n", cfg.file_has_oob ? "data+OOB per page (nanddump -o)" : "data only",
		       cfg.sparse ? ", sparse" : "");
		printf("rules:      NOP %u, %s, endurance %u, seed %" PRIu64 "\n", cfg.nop,
		       cfg.in_order ? "in-order programming" : "any page order", cfg.endurance, cfg.seed);
		printf("PEBs:       %u used, %u erased, %u bad\n", nused, nerased, nbad);
		if (nbad) {
			printf("bad:       ");
			for (uint32_t i = 0; i < n; i++) {
				int k = flash_sim_bad_kind(dev, i);
				if (k > 0)
					printf(" %u%s", i, k == 2 ? "(factory)" : "(grown)");
			}
			printf("\n");
		}
		printf("wear:       erase count min %u, max %u, mean %.2f, stddev %.2f\n", ws.min, ws.max, ws.mean,
		       ws.stddev);
	}
	flash_close(dev);
	return 0;
}

static int flash_cmd_erase(int argc, char **argv)
{
	static const struct option lo[] = {
		{"peb", 1, 0, O_PEBN}, {"all", 0, 0, O_ALL}, {"help", 0, 0, O_HELP}, {0, 0, 0, 0},
	};
	bool all = false, have_peb = false;
	uint32_t peb = 0;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		if (c == O_PEBN) {
			have_peb = true;
			if (parse_u32("erase", "--peb", optarg, false, 0, UINT32_MAX, &peb))
				return 2;
		} else if (c == O_ALL)
			all = true;
		else if (c == 'h' || c == O_HELP) {
			usage_erase(stdout);
			return 0;
		} else
			return bad_arg("erase", "unknown or incomplete option '%s'", argv[optind - 1]);
	}
	if (optind != argc - 1)
		return bad_arg("erase", "%s", optind >= argc ? "IMAGE is missing" : "more than one IMAGE given");
	if (all == have_peb)
		return bad_arg("erase", "%s", "give exactly one of --peb N and --all");
	const char *image = argv[optind];
	struct geo_opts g = {0};
	struct flash_dev *dev;
	bool sidecar;
	int r = open_image("erase", image, &g, false, &dev, &sidecar);
	if (r <= -1000)
		return -r - 1000;
	if (r)
		return 1;
	int status = 0;
	if (have_peb) {
		if (peb >= dev->geo.peb_count) {
			fprintf(stderr, "ubikit flash erase: --peb %u out of range (the device has %u PEBs)\n", peb,
				dev->geo.peb_count);
			flash_close(dev);
			return 2;
		}
		r = flash_erase(dev, peb);
		if (r) {
			fprintf(stderr, "ubikit flash erase: PEB %u: %s\n", peb, flash_sim_last_error(dev));
			status = 1;
		}
	} else {
		uint32_t done = 0, skipped = 0, failed = 0;
		for (uint32_t i = 0; i < dev->geo.peb_count; i++) {
			if (flash_is_bad(dev, i) == 1) {
				skipped++;
				continue;
			}
			if (flash_erase(dev, i)) {
				fprintf(stderr, "ubikit flash erase: PEB %u: %s\n", i, flash_sim_last_error(dev));
				failed++;
			} else
				done++;
		}
		printf("%s: erased %u PEBs, skipped %u bad, %u failed\n", image, done, skipped, failed);
		status = failed ? 1 : 0;
	}
	r = flash_sync(dev);
	if (r) {
		fprintf(stderr, "ubikit flash erase: %s\n", flash_sim_last_error(dev));
		status = 1;
	}
	flash_close(dev);
	return status;
}

static int flash_cmd_inject(int argc, char **argv)
{
	static const struct option lo[] = {
		{"peb", 1, 0, O_PEBN},   {"page", 1, 0, O_PAGEN},   {"uncorrectable", 0, 0, O_UNCORR},
		{"count", 1, 0, O_COUNT}, {"grown", 0, 0, O_GROWN}, {"help", 0, 0, O_HELP},
		{0, 0, 0, 0},
	};
	bool have_peb = false, have_page = false, have_count = false, uncorr = false, grown = false;
	uint32_t peb = 0, page = 0, count = 0;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case O_PEBN:
			have_peb = true;
			if (parse_u32("inject", "--peb", optarg, false, 0, UINT32_MAX, &peb))
				return 2;
			break;
		case O_PAGEN:
			have_page = true;
			if (parse_u32("inject", "--page", optarg, false, 0, UINT32_MAX, &page))
				return 2;
			break;
		case O_COUNT:
			have_count = true;
			/* The physical erase counter is 32 bits: leave room to count up. */
			if (parse_u32("inject", "--count", optarg, false, 0, UINT32_MAX - 1, &count))
				return 2;
			break;
		case O_UNCORR:
			uncorr = true;
			break;
		case O_GROWN:
			grown = true;
			break;
		case 'h':
		case O_HELP:
			usage_inject(stdout);
			return 0;
		default:
			return bad_arg("inject", "unknown or incomplete option '%s'", argv[optind - 1]);
		}
	}
	if (argc - optind != 2)
		return bad_arg("inject", "%s", "expected IMAGE and KIND (bad, bitflip or wear)");
	const char *image = argv[optind], *kind = argv[optind + 1];
	bool k_bad = !strcmp(kind, "bad"), k_flip = !strcmp(kind, "bitflip"), k_wear = !strcmp(kind, "wear");
	if (!k_bad && !k_flip && !k_wear)
		return bad_arg("inject", "unknown KIND '%s' (bad, bitflip or wear)", kind);
	if (!have_peb)
		return bad_arg("inject", "%s", "--peb N is required");
	if (k_flip && !have_page)
		return bad_arg("inject", "%s", "bitflip needs --page P");
	if (k_wear && !have_count)
		return bad_arg("inject", "%s", "wear needs --count C");
	if ((!k_flip && (have_page || uncorr)) || (!k_wear && have_count) || (!k_bad && grown))
		return bad_arg("inject", "option not valid for KIND '%s'", kind);
	struct geo_opts g = {0};
	struct flash_dev *dev;
	bool sidecar;
	int r = open_image("inject", image, &g, false, &dev, &sidecar);
	if (r <= -1000)
		return -r - 1000;
	if (r)
		return 1;
	if (peb >= dev->geo.peb_count) {
		fprintf(stderr, "ubikit flash inject: --peb %u out of range (the device has %u PEBs)\n", peb,
			dev->geo.peb_count);
		flash_close(dev);
		return 2;
	}
	if (k_flip) {
		uint32_t ppb = dev->geo.type == FLASH_NOR ? dev->geo.peb_size / 256 : dev->geo.peb_size / dev->geo.page_size;
		if (page >= ppb) {
			fprintf(stderr, "ubikit flash inject: --page %u out of range (a PEB has %u pages)\n", page, ppb);
			flash_close(dev);
			return 2;
		}
		r = flash_sim_inject_bitflip(dev, peb, page, uncorr, true);
	} else if (k_bad) {
		r = grown ? flash_mark_bad(dev, peb) : flash_sim_set_factory_bad(dev, peb);
	} else {
		r = flash_sim_set_wear(dev, peb, count);
	}
	int s = flash_sync(dev);
	if (r || s) {
		const char *m = flash_sim_last_error(dev);
		fprintf(stderr, "ubikit flash inject: %s: %s\n", image, m[0] ? m : strerror(-(r ? r : s)));
		flash_close(dev);
		return 1;
	}
	flash_close(dev);
	return 0;
}

int cmd_flash(int argc, char **argv)
{
	if (argc < 2) {
		usage_main(stderr);
		return 2;
	}
	const char *sub = argv[1];
	if (!strcmp(sub, "--help") || !strcmp(sub, "-h") || !strcmp(sub, "help")) {
		usage_main(stdout);
		return 0;
	}
	if (!strcmp(sub, "create"))
		return flash_cmd_create(argc - 1, argv + 1);
	if (!strcmp(sub, "info"))
		return flash_cmd_info(argc - 1, argv + 1);
	if (!strcmp(sub, "erase"))
		return flash_cmd_erase(argc - 1, argv + 1);
	if (!strcmp(sub, "inject"))
		return flash_cmd_inject(argc - 1, argv + 1);
	fprintf(stderr, "ubikit flash: unknown subcommand '%s' (create, info, erase, inject)\n", sub);
	return 2;
}
