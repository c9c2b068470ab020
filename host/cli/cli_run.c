#define _POSIX_C_SOURCE 200809L
/* The run loop and CSV of `cofem run`, shared by FE scenes and mechanisms (cli_run.h). */
#include "cli/cli_run.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cofem/cofem.h"

const char* const cf_cli_run_preconds[] = {"block_jacobi", "rotated_cholesky", "amg", "auto", NULL};
const char* const cf_cli_run_backends[] = {"cpu", "cuda", "auto", NULL};
const char* const cf_cli_run_couplings[] = {"newton", "linear", NULL};

int cf_cli_run_parse(int argc, char** argv, int i0, cfCliRunOpts* o) {
  *o = (cfCliRunOpts){NULL, NULL, -1, CF_CLI_DEFAULT_MAX_OUTPUT, -1, -1, -1, -1, 0, 0, 0};
  int rc = 0;
  for (int i = i0; i < argc && !rc; i++) {
    const char* a = argv[i];
    if (!strcmp(a, "--steps")) rc = cf_cli_opt_long(argc, argv, &i, 1, 1000000000000L, &o->steps);
    else if (!strcmp(a, "--end")) rc = cf_cli_opt_double(argc, argv, &i, 1e-9, 1e12, &o->t_end);
    else if (!strcmp(a, "--out")) { o->out_arg = cf_cli_arg_value(argc, argv, &i); if (!o->out_arg) rc = 2; }
    else if (!strcmp(a, "--backend")) rc = cf_cli_opt_choice(argc, argv, &i, cf_cli_run_backends, &o->backend);
    else if (!strcmp(a, "--precond")) rc = cf_cli_opt_choice(argc, argv, &i, cf_cli_run_preconds, &o->precond);
    else if (!strcmp(a, "--coupling")) rc = cf_cli_opt_choice(argc, argv, &i, cf_cli_run_couplings, &o->coupling);
    else if (!strcmp(a, "--max-output")) rc = cf_cli_opt_long(argc, argv, &i, 0, LONG_MAX, &o->max_output);
    else if (!strcmp(a, "--cold")) o->cold = 1;
    else if (!strcmp(a, "--quiet")) o->quiet = 1;
    else if (!strcmp(a, "--static")) o->static_start = 1;
    else if (a[0] == '-' || o->scene_path) return cf_cli_bad_arg(a);
    else o->scene_path = a;
  }
  return rc;
}

void cf_cli_csv_names(cfCliCsv* c, const char* dir, const char* name) {
  snprintf(c->path, sizeof c->path, "%s/%s", dir, name);
  snprintf(c->tmp, sizeof c->tmp, "%s.tmp", c->path);
  c->f = NULL;
  c->bad_close = 0;
  c->good = 0;
}

int cf_cli_row_end(FILE** f, const char* path, long* good) {
  errno = 0;
  if (fflush(*f) == 0 && !ferror(*f)) {
    long p = ftell(*f);
    if (p >= 0) *good = p;
    return CF_OK;
  }
  int err = errno ? errno : EIO;
  fclose(*f); /* what it still holds is the part of a row: cut below */
  *f = NULL;
  int cut = truncate(path, *good) == 0, cut_err = errno;
  /* named as the reader will know it: without the ".tmp" it is written under (the caller says
   * whether it keeps the whole rows before this one, or nothing) */
  size_t n = strlen(path);
  int shown = n > 4 && !strcmp(path + n - 4, ".tmp") ? (int)(n - 4) : (int)n;
  if (!cut)
    return cf_error(CF_ERR_IO, "%.*s: write failed: %s (and it could not be cut back to its last whole row: %s)",
                    shown, path, strerror(err), strerror(cut_err));
  return cf_error(CF_ERR_IO, "%.*s: write failed: %s", shown, path, strerror(err));
}

int cf_cli_csv_row(cfCliCsv* c) { return c->f ? cf_cli_row_end(&c->f, c->tmp, &c->good) : CF_ERR_IO; }

int cf_cli_csv_open(cfCliCsv* c) {
  c->f = fopen(c->tmp, "w");
  if (!c->f) return cf_error(CF_ERR_IO, "%s: cannot write: %s", c->tmp, strerror(errno));
  return CF_OK;
}

int cf_cli_csv_close(cfCliCsv* c, int st) {
  if (!c->f) return st; /* closed by a failed row, cut to its whole rows */
  c->bad_close = fclose(c->f) != 0;
  c->f = NULL;
  if (c->bad_close && st >= 0) st = cf_error(CF_ERR_IO, "%s: write failed", c->tmp);
  return st;
}

int cf_cli_csv_keep(cfCliCsv* c) {
  int kept = !c->bad_close && rename(c->tmp, c->path) == 0;
  if (!kept) remove(c->tmp);
  return kept;
}

int cf_cli_run_loop(const cfCliRunOps* ops, void* ctx, long steps, long report, int quiet, double* wall) {
  int st = CF_OK;
  double wall0 = cf_wall_time();
  for (long k = 1; k <= steps && st >= 0 && !cf_cli_interrupted; k++) {
    st = ops->step(ctx, k);
    if (st < 0) break;
    if (!quiet && (k % report == 0 || k == steps)) {
      /* on a terminal one line rewritten in place, else a line per report */
      printf("%s", isatty(1) ? "\r" : "");
      ops->progress(ctx, k, steps, cf_wall_time() - wall0);
      if (!isatty(1)) printf("\n");
      fflush(stdout);
    }
  }
  *wall = cf_wall_time() - wall0;
  if (isatty(1) && !quiet) printf("\n");
  return st;
}
