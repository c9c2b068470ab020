#define _POSIX_C_SOURCE 200809L
/* `cofem static MECHANISM.json`: the mechanism's static equilibrium (cf_mbs_static), dispatched
 * from `cofem static` when the scene is a mechanism. Options: --increments N (5), --time T (drivers
 * and load functions held at T: 0), --pseudo-dt H (the first pseudo-step: the scene's dt),
 * --tol X (1e-10 m), --max-steps N (500), --out DIR. Prints each increment and the joint
 * reactions; writes DIR/static.csv (a row per increment: load factor, pseudo-steps, Newton
 * iterations, the scene's channels) and each flexible body's deformed mesh (DIR/BODY_static.vtu).
 * Exit status 0, 1 error (no equilibrium included), 2 usage. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli_run.h"
#include "cli/commands.h"
#include "cofem/fem.h"
#include "cofem/mbs_fe.h"
#include "cofem/mbs_modal.h"
#include "cofem/modal_part.h"
#include "cofem/output.h"
#include "mbs/mbs_internal.h"

typedef struct StaticMbsLog {
  FILE* csv;
  const char* tmp; /* its name */
  long good;       /* its length after its last whole row (cf_cli_row_end) */
  int wst;         /* a failed write (< 0): the statics stop there */
  const cfMbsScene* s;
  int rows;
  double lf; /* the last load factor written */
} StaticMbsLog;

static int on_increment(double lf, int steps, int newton, double move, const cfMbsModel* m, const cfMbsData* d,
                        void* user) {
  StaticMbsLog* L = user;
  fprintf(L->csv, "%.9g,%d,%d,%.3e", lf, steps, newton, move);
  for (int c = 0; c < L->s->nchannel; c++) {
    double v[3];
    cf_mbs_channel_eval(m, d, &L->s->channel[c], v);
    for (int i = 0; i < cf_mbs_channel_size(&L->s->channel[c]); i++) fprintf(L->csv, ",%.12g", v[i]);
  }
  fprintf(L->csv, "\n");
  if ((L->wst = cf_cli_row_end(&L->csv, L->tmp, &L->good)) < 0) return 1; /* stop: the rows before it kept */
  L->rows++;
  L->lf = lf;
  printf("  load factor %.4f: %3d pseudo-steps, %4d Newton iterations, last move %.2e m\n", lf, steps, newton, move);
  fflush(stdout);
  return cf_cli_interrupted != 0; /* Ctrl-C: stop after this increment */
}

static int interrupted_now(void) { return cf_cli_interrupted != 0; }

static int fail(const char* path, int st) {
  const char* msg = cf_last_error();
  if (strstr(msg, path)) fprintf(stderr, "cofem: error: %s (%s)\n", msg, cf_status_name(st));
  else fprintf(stderr, "cofem: error: %s: %s (%s)\n", path, msg, cf_status_name(st));
  return 1;
}

int cf_cmd_static_mbs(int argc, char** argv) {
  const char* scene_path = NULL;
  const char* out_arg = NULL;
  cfMbsStaticOptions o;
  cf_mbs_static_defaults(&o);
  double pseudo_dt = 0;
  int rc = 0;
  for (int i = 2; i < argc && !rc; i++) {
    const char* a = argv[i];
    if (!strcmp(a, "--increments")) rc = cf_cli_opt_int(argc, argv, &i, 1, 1000000, &o.increments);
    else if (!strcmp(a, "--time")) rc = cf_cli_opt_double(argc, argv, &i, -1e12, 1e12, &o.time);
    else if (!strcmp(a, "--pseudo-dt")) rc = cf_cli_opt_double(argc, argv, &i, 1e-9, 1e6, &pseudo_dt);
    else if (!strcmp(a, "--tol")) rc = cf_cli_opt_double(argc, argv, &i, 1e-300, 1, &o.tol);
    else if (!strcmp(a, "--max-steps")) rc = cf_cli_opt_int(argc, argv, &i, 1, 100000000, &o.max_steps);
    else if (!strcmp(a, "--out")) { out_arg = cf_cli_arg_value(argc, argv, &i); if (!out_arg) rc = 2; }
    else if (!strcmp(a, "--tangent")) { /* listed in the usage, for FE statics */
      fprintf(stderr, "cofem: error: %s is an option of FE statics (cofem static SCENE); %s is a mechanism\n", a,
              scene_path ? scene_path : "the scene");
      return cf_cli_usage();
    } else if (a[0] == '-' || scene_path) return cf_cli_bad_arg(a);
    else scene_path = a;
  }
  if (rc) return rc;
  if (!scene_path) return cf_cli_usage();
  cf_cli_catch_interrupts();
  cfMbsScene s;
  int st = cf_mbs_scene_load(scene_path, &s);
  if (st < 0) return fail(scene_path, st);
  for (int k = 0; k < s.nwarning; k++) fprintf(stderr, "cofem: warning: %s\n", s.warning[k]);
  char threads_note[160];
  cf_cli_mbs_threads(&s, threads_note, sizeof threads_note);
  if (pseudo_dt > 0) s.def.opt.dt = pseudo_dt;
  cfMbsModel* m = NULL;
  cfMbsData* d = NULL;
  st = cf_mbs_model_create(&s.def, &m);
  if (st >= 0) st = cf_mbs_data_create(m, &d);
  if (st < 0) {
    cf_mbs_model_free(m);
    cf_mbs_scene_free(&s);
    return fail(scene_path, st);
  }
  char out_dir[CF_MBS_PATH_MAX];
  if (out_arg) snprintf(out_dir, sizeof out_dir, "%s", out_arg);
  else if (s.out_dir[0]) snprintf(out_dir, sizeof out_dir, "%s", s.out_dir);
  else snprintf(out_dir, sizeof out_dir, "out/static");
  printf("cofem static %s (mechanism)\n  %d bodies, %d joints, %d coordinates, %d degrees of freedom; %d load "
         "increments, drivers and loads at t = %g s, first pseudo-step %g s, converged at moves <= %.1e m\n",
         scene_path, m->nbody, m->njoint, m->nq, m->ndof, o.increments, o.time, m->opt.dt, o.tol);
  fputs(threads_note, stdout);
  char csv_path[CF_MBS_PATH_MAX + 32], tmp[CF_MBS_PATH_MAX + 40];
  FILE* csv = NULL;
  /* the folder: made now; static.csv and BODY_static.vtu of a previous run replaced, files of
   * those names that cofem did not write refused */
  cfCliOut od;
  int removed = 0, rows = 0, interrupted = 0;
  double lf_done = 0;
  st = cf_cli_out_make(&od, out_dir);
  if (st >= 0) {
    cfCliOutPattern pat[1 + CF_MBS_MAX_FLEX];
    char pre[CF_MBS_MAX_FLEX][CF_MBS_NAME_MAX + 8];
    int np = 0;
    pat[np++] = (cfCliOutPattern){"", "static.csv", 0, "", "load_factor,"};
    for (int k = 0; k < s.nflex && k < CF_MBS_MAX_FLEX; k++) {
      snprintf(pre[k], sizeof pre[k], "%s_static", m->body_name[s.flex_body[k]]);
      pat[np++] = (cfCliOutPattern){"", pre[k], 0, ".vtu", NULL};
    }
    st = cf_cli_out_clean(&od, pat, np, &removed);
  }
  if (st >= 0) {
    snprintf(csv_path, sizeof csv_path, "%s/static.csv", out_dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", csv_path);
    csv = fopen(tmp, "w");
    if (!csv) st = cf_error(CF_ERR_IO, "%s: cannot write: %s", tmp, strerror(errno));
  }
  double t0 = cf_wall_time();
  if (csv) {
    fprintf(csv, "load_factor,pseudo_steps,newton_iters,last_move");
    for (int c = 0; c < s.nchannel; c++) { /* as cofem run's mbs.csv */
      if (cf_mbs_channel_size(&s.channel[c]) == 1) fprintf(csv, ",%s", s.channel[c].label);
      else fprintf(csv, ",%s_x,%s_y,%s_z", s.channel[c].label, s.channel[c].label, s.channel[c].label);
    }
    fprintf(csv, "\n");
    StaticMbsLog log = {csv, tmp, 0, CF_OK, &s, 0, 0.0};
    log.wst = cf_cli_row_end(&log.csv, tmp, &log.good);
    o.interrupt = interrupted_now; /* Ctrl-C stops inside an increment, not at its end */
    if (log.wst >= 0) st = cf_mbs_static(m, d, &o, on_increment, &log);
    if (log.wst < 0) st = log.wst; /* named the file; it keeps its whole rows (closed) */
    else if (fclose(log.csv) != 0 && st >= 0) st = cf_error(CF_ERR_IO, "%s: write failed: %s", tmp, strerror(errno));
    rows = log.rows, lf_done = log.lf;
    interrupted = cf_cli_interrupted && log.lf < 1;
    /* increments that converged before an error or an interrupt stay in static.csv (said below) */
    if (rows > 0) rename(tmp, csv_path);
    else remove(tmp);
  }
  if (st < 0 || interrupted) {
    int code = st < 0 ? fail(scene_path, st) : cf_cli_interrupt_code();
    if (rows > 0)
      fprintf(stderr, "cofem: %s: %sstopped at load factor %.4g of 1; %s holds the %d converged increment%s\n",
              scene_path, interrupted && st >= 0 ? (cf_cli_interrupted == SIGTERM ? "SIGTERM: " : "SIGINT: ") : "", lf_done, csv_path, rows,
              rows == 1 ? "" : "s");
    else {
      if (st >= 0) fprintf(stderr, "cofem: %s: %s before the first increment converged; nothing written\n", scene_path,
                           cf_cli_interrupt_name());
      cf_cli_out_abandon(&od, NULL);
    }
    cf_mbs_data_free(d);
    cf_mbs_model_free(m);
    cf_mbs_scene_free(&s);
    return code;
  }
  if (st >= 0) {
    printf("done in %.3f s: equilibrium at load factor 1\n", cf_wall_time() - t0);
    for (int j = 0; j < m->njoint; j++) {
      double F[3];
      cf_mbs_joint_reaction(m, d, j, F);
      printf("  joint '%s' reaction on body2: (%.6g, %.6g, %.6g) N\n", m->joint_name[j], F[0], F[1], F[2]);
    }
    for (int k = 0; k < s.nflex && st >= 0; k++) {
      char path[CF_MBS_PATH_MAX + CF_MBS_NAME_MAX + 20];
      snprintf(path, sizeof path, "%s/%s_static.vtu", out_dir, m->body_name[s.flex_body[k]]);
      int fe = cf_mbs_fe_index(m, s.flex_body[k]);
      st = fe >= 0 ? cf_mbs_fe_write_vtu(m, d, fe, &s.flex[k]->scene.mesh, path)
                   : cf_mbs_modal_write_vtu(m, d, cf_mbs_modal_index(m, s.flex_body[k]), s.flex[k]->model,
                                            &s.flex[k]->scene.mesh, path);
      if (st >= 0) printf("  wrote %s\n", path);
    }
    if (st >= 0) printf("  wrote %s\n", csv_path);
  }
  int code = st < 0 ? fail(scene_path, st) : 0;
  cf_mbs_data_free(d);
  cf_mbs_model_free(m);
  cf_mbs_scene_free(&s);
  return code;
}
