/* The `cofem` subcommands, one file each (host/cli/cmd_*.c), and what they share (cli_common.c).
 * Each takes argv as given to the tool (argv[1] is the subcommand) and returns the exit status:
 * 0 success, 1 error (message on stderr), 2 usage. */
#ifndef COFEM_CLI_COMMANDS_H
#define COFEM_CLI_COMMANDS_H
#include <stddef.h>

#include "cofem/scene.h"

int cf_cmd_run(int argc, char** argv);      /* cmd_run.c: an FE scene; a mechanism goes to cf_cmd_run_mbs */
int cf_cmd_run_mbs(int argc, char** argv);  /* cmd_run_mbs.c: a mechanism scene */
int cf_cmd_static_mbs(int argc, char** argv); /* cmd_static_mbs.c: a mechanism's static equilibrium */
int cf_cmd_static(int argc, char** argv);   /* cmd_static.c */
int cf_cmd_info(int argc, char** argv);     /* cmd_info.c */
int cf_cmd_reduce(int argc, char** argv);   /* cmd_reduce.c: Craig-Bampton reduction */
int cf_cmd_accuracy(int argc, char** argv); /* cmd_accuracy.c: comparison against CalculiX */

/* shared by the subcommands (cli_common.c) */
int cf_cli_usage(void);
int cf_cli_fail(int st);
int cf_cli_fail_scene(const char* scene_path, int st);
/* The value after option argv[*i] (*i advances), or NULL with "cofem: error: --out wants a value"
 * on stderr. */
const char* cf_cli_arg_value(int argc, char** argv, int* i);
/* Strict option values (cf_parse_long/double/choice, cofem/status.h): the whole text, in range;
 * 0 on success, else 2 (the usage exit status) after "cofem: error: --steps wants an integer
 * from 1 to 1000000000, got '1e12'" or "--tangent bogus: use consistent or KR" on stderr. */
int cf_cli_opt_long(int argc, char** argv, int* i, long lo, long hi, long* out);
/* the output budget: an error when total (bytes, made of `what`) is over budget or over the free
 * space where out_dir is (or would be) */
#define CF_CLI_DEFAULT_MAX_OUTPUT 2000000000L /* 2 GB, raised by --max-output BYTES */
int cf_cli_output_budget(double total, double budget, const char* out_dir, const char* what);
void cf_cli_human_bytes(double b, char* out, size_t n);
int cf_cli_opt_int(int argc, char** argv, int* i, int lo, int hi, int* out);
int cf_cli_opt_double(int argc, char** argv, int* i, double lo, double hi, double* out);
int cf_cli_opt_choice(int argc, char** argv, int* i, const char* const* choices, int* out);
/* an unknown option or extra argument: "cofem: error: unknown option '--x'" and the usage; 2 */
int cf_cli_bad_arg(const char* arg);
void cf_cli_default_out_dir(const cfScene* s, char* out, size_t n);
double cf_cli_max_displacement(const cfModel* m, const cfData* d);
#endif
