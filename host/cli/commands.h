/* The `cofem` subcommands, one file each (host/cli/cmd_*.c), and what they share (cli_common.c).
 * Each takes argv as given to the tool (argv[1] is the subcommand) and returns the exit status:
 * 0 success, 1 error (message on stderr), 2 usage. */
#ifndef COFEM_CLI_COMMANDS_H
#define COFEM_CLI_COMMANDS_H
#include <stddef.h>
#include <stdio.h>

#include "cofem/scene.h"

int cf_cmd_run(int argc, char** argv);      /* cmd_run.c: an FE scene; a mechanism goes to cf_cmd_run_mbs */
int cf_cmd_run_mbs(int argc, char** argv);  /* cmd_run_mbs.c: a mechanism scene */
int cf_cmd_static_mbs(int argc, char** argv); /* cmd_static_mbs.c: a mechanism's static equilibrium */
int cf_cmd_static(int argc, char** argv);   /* cmd_static.c */
int cf_cmd_info(int argc, char** argv);     /* cmd_info.c */
int cf_cmd_reduce(int argc, char** argv);   /* cmd_reduce.c: Craig-Bampton reduction */
int cf_cmd_accuracy(int argc, char** argv); /* cmd_accuracy.c: comparison against CalculiX */

/* shared by the subcommands (cli_common.c) */
int cf_cli_usage(void); /* the current command's usage (all when none) on stderr; returns 2 */
/* the command being run (main sets it: run, static, ...), NULL before */
extern const char* cf_cli_command;
int cf_cli_known_command(const char* cmd);
/* the usage lines of cmd (all commands when NULL) */
void cf_cli_print_usage(FILE* f, const char* cmd);
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
/* A mechanism's threads: one (OpenMP, process-wide, and CHOLMOD's BLAS) when its FE bodies are
 * small (cf_default_threads of their node count, cofem/fem.h); then the note says so and 1 is
 * returned, else 0 and the note is empty. */
struct cfMbsScene;
int cf_cli_mbs_threads(const struct cfMbsScene* s, char* note, size_t n);
void cf_cli_human_bytes(double b, char* out, size_t n);
int cf_cli_opt_int(int argc, char** argv, int* i, int lo, int hi, int* out);
int cf_cli_opt_double(int argc, char** argv, int* i, double lo, double hi, double* out);
int cf_cli_opt_choice(int argc, char** argv, int* i, const char* const* choices, int* out);
/* an unknown option or extra argument: "cofem: error: unknown option '--x'" and the usage; 2 */
int cf_cli_bad_arg(const char* arg);
void cf_cli_default_out_dir(const cfScene* s, char* out, size_t n);

/* ---- the output folder and interrupts (cli_output.c; docs/reliability.md, "Outputs") ---- */
#include <signal.h>
/* set by SIGINT/SIGTERM (the signal number); the run loops poll it between steps, finish the step,
 * close their files and exit with cf_cli_interrupt_code() (130 for SIGINT). A second signal exits
 * at once. The library installs no handler. */
extern volatile sig_atomic_t cf_cli_interrupted;
void cf_cli_catch_interrupts(void);
int cf_cli_interrupt_code(void);
const char* cf_cli_interrupt_name(void);
typedef struct cfCliOut {
  char dir[CF_PATH_MAX];
  char created[CF_PATH_MAX]; /* the first folder of dir that this run made ("" if dir existed) */
} cfCliOut;
/* make dir (and its parents), remembering which part the run created */
int cf_cli_out_make(cfCliOut* o, const char* dir);
/* a run that failed before its first step: remove the folders it created if they are empty
 * (sub: NULL-terminated subfolders, e.g. "frames", removed first when empty) */
void cf_cli_out_abandon(const cfCliOut* o, const char* const* sub);
/* A kind of file a command writes: in folder sub ("" for the run's folder), named prefix + digits
 * + suffix (ndigit digits; 0: none; -1: four or more), starting with head (NULL: the VTK writer's
 * first two lines, by the suffix .vtu/.pvd). */
typedef struct cfCliOutPattern {
  const char* sub;
  const char* prefix;
  int ndigit;
  const char* suffix;
  const char* head;
} cfCliOutPattern;
/* Before a run writes: a file matching a pattern that cofem did not write is an error naming it
 * (nothing removed); otherwise the previous run's files matching the patterns are removed, so
 * that the folder never mixes two runs. *removed counts them. */
int cf_cli_out_clean(const cfCliOut* o, const cfCliOutPattern* pat, int npat, int* removed);
double cf_cli_max_displacement(const cfModel* m, const cfData* d);
#endif
