/* The `cofem` subcommands, one file each (host/cli/cmd_*.c), and what they share (cli_common.c).
 * Each takes argv as given to the tool (argv[1] is the subcommand) and returns the exit status:
 * 0 success, 1 error (message on stderr), 2 usage. */
#ifndef COFEM_CLI_COMMANDS_H
#define COFEM_CLI_COMMANDS_H
#include <stddef.h>

#include "cofem/scene.h"

int cf_cmd_run(int argc, char** argv);      /* cmd_run.c: an FE scene; a mechanism goes to cf_cmd_run_mbs */
int cf_cmd_run_mbs(int argc, char** argv);  /* cmd_run_mbs.c: a mechanism scene */
int cf_cmd_static(int argc, char** argv);   /* cmd_static.c */
int cf_cmd_info(int argc, char** argv);     /* cmd_info.c */
int cf_cmd_reduce(int argc, char** argv);   /* cmd_reduce.c: Craig-Bampton reduction */
int cf_cmd_accuracy(int argc, char** argv); /* cmd_accuracy.c: comparison against CalculiX */

/* shared by the subcommands (cli_common.c) */
int cf_cli_usage(void);
int cf_cli_fail(int st);
int cf_cli_fail_scene(const char* scene_path, int st);
const char* cf_cli_arg_value(int argc, char** argv, int* i);
void cf_cli_default_out_dir(const cfScene* s, char* out, size_t n);
double cf_cli_max_displacement(const cfModel* m, const cfData* d);
#endif
