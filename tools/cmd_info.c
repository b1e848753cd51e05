/* cmd_info — 'ubikit info' (placeholder until its issue lands). */
#include <stdio.h>

#include "commands.h"

int cmd_info(int argc, char **argv)
{
	(void)argc;
	fprintf(stderr, "ubikit %s: not implemented yet\n", argv[0]);
	return 2;
}
