/* What `cofem run` shares between an FE scene (cmd_run.c) and a mechanism (cmd_run_mbs.c): the
 * options, the CSV written beside as NAME.tmp and renamed when the run ends, and the stepping loop
 * with its progress lines and the interrupt check, the case's work given as callbacks. */
#ifndef COFEM_CLI_RUN_H
#define COFEM_CLI_RUN_H
#include <stdio.h>

#include "cofem/scene.h"

/* the options of `cofem run`, the same for both cases */
typedef struct cfCliRunOpts {
  const char* scene_path; /* NULL: none given */
  const char* out_arg;    /* --out, NULL when not given */
  long steps;             /* --steps, -1 when not given */
  long max_output;        /* --max-output, CF_CLI_DEFAULT_MAX_OUTPUT when not given */
  double t_end;           /* --end, -1 when not given */
  int backend, precond;   /* indices into cf_cli_run_backends / cf_cli_run_preconds, -1 when not given */
  int coupling;           /* mechanisms: enum cfMbsCoupling (cf_cli_run_couplings), -1 when not given */
  int cold, quiet;
  int static_start;       /* --static (mechanisms): start from static equilibrium (cf_mbs_static at t = 0) */
} cfCliRunOpts;
extern const char* const cf_cli_run_preconds[]; /* enum order of cfPreconditioner, then "auto" */
extern const char* const cf_cli_run_backends[];
extern const char* const cf_cli_run_couplings[]; /* enum order of cfMbsCoupling */
/* parse argv[i0..]: 0, or the exit status (2 after the message on stderr) */
int cf_cli_run_parse(int argc, char** argv, int i0, cfCliRunOpts* o);

/* DIR/NAME written as DIR/NAME.tmp, renamed to DIR/NAME when the run keeps it, so that a reader
 * never sees a half-written file under the final name */
typedef struct cfCliCsv {
  char path[CF_PATH_MAX + 32], tmp[CF_PATH_MAX + 40];
  FILE* f;                /* NULL once closed (also by a failed row, cf_cli_csv_row) */
  int bad_close;
  long good;              /* its length after the last whole row written */
} cfCliCsv;
void cf_cli_csv_names(cfCliCsv* c, const char* dir, const char* name);
/* open the .tmp; a status < 0 (the error set) when it cannot be written */
int cf_cli_csv_open(cfCliCsv* c);
/* the end of a row (or of the header): cf_cli_row_end on the .tmp */
int cf_cli_csv_row(cfCliCsv* c);
/* The end of a CSV row written to *f (the file `path`): flushed at once, so that a write that fails
 * (EFBIG under a file-size limit, the CLI ignoring SIGXFSZ; ENOSPC; EIO) is seen at this row. The file
 * is then cut back to its last whole row (*good: its length after the last row that reached it) and
 * closed (*f = NULL), and the error names it and the cause; CF_OK otherwise. */
int cf_cli_row_end(FILE** f, const char* path, long* good);
/* close it; st, or an I/O error when st was not an error and the close failed */
int cf_cli_csv_close(cfCliCsv* c, int st);
/* rename the .tmp to the final name (removed when that fails or the close failed): 1 if kept */
int cf_cli_csv_keep(cfCliCsv* c);

/* The stepping loop: step k = 1..steps until an error or an interrupt (cf_cli_interrupted).
 * step: advance and record step k (CSV row, frames); < 0 stops the loop.
 * progress: the progress line's text for step k (elapsed: wall seconds since the loop began),
 * printed every `report` steps and at the last one, unless quiet. */
typedef struct cfCliRunOps {
  int (*step)(void* ctx, long k);
  void (*progress)(void* ctx, long k, long steps, double elapsed);
} cfCliRunOps;
/* the last step's status (< 0: the error that stopped it); *wall: the loop's wall seconds */
int cf_cli_run_loop(const cfCliRunOps* ops, void* ctx, long steps, long report, int quiet, double* wall);
#endif
