/* commands — the ubikit subcommands. Each lives in cmd_<name>.c and takes
 * (argc, argv) with argv[0] = the subcommand name; returns the process exit
 * status (0 ok, 1 failure, 2 usage error). */
#ifndef UBIKIT_TOOLS_COMMANDS_H
#define UBIKIT_TOOLS_COMMANDS_H

int cmd_flash(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_ubinize(int argc, char **argv);
int cmd_format(int argc, char **argv);
int cmd_ubi(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_ls(int argc, char **argv);
int cmd_cat(int argc, char **argv);
int cmd_extract(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_mount(int argc, char **argv);
/* cmd_change.c: commands that change an image */
int cmd_put(int argc, char **argv);
int cmd_mkdir(int argc, char **argv);
int cmd_rm(int argc, char **argv);
int cmd_mv(int argc, char **argv);
int cmd_ln(int argc, char **argv);
int cmd_chmod(int argc, char **argv);
int cmd_setfattr(int argc, char **argv);
int cmd_mkfs(int argc, char **argv);
/* cmd_fsck.c: exit status as fsck(8) (0/1/4/8/16) */
int cmd_fsck(int argc, char **argv);
int cmd_torture(int argc, char **argv);

#endif
