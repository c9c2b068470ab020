#define _POSIX_C_SOURCE 200809L
/* cofem static SCENE: nonlinear statics by load increments, and the linear solution beside it. */
#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli_run.h"
#include "cli/commands.h"
#include "cofem/cofem.h"
#include "cofem/mbs.h"

/* ---- cofem static ----------------------------------------------------------------------------- */
typedef struct StaticLog {
  FILE* csv;
  const char* tmp; /* its name */
  long good;       /* its length after its last whole row (cf_cli_row_end) */
  int wst;         /* a failed write (< 0): the solve stops there */
  const cfScene* s;
  const double* u_lin; /* [3*nprobe] linear probe displacements at full load */
  double lambda;       /* the last converged load factor */
  int rows;            /* increments written */
} StaticLog;

static int on_increment(double lambda, int iters, const cfModel* m, const cfData* d, void* user) {
  StaticLog* L = user;
  const double lambda_before = L->lambda;
  L->lambda = lambda, L->rows++;
  fprintf(L->csv, "%.9g,%d", lambda, iters);
  printf("  load factor %.4f: %2d iterations", lambda, iters);
  for (int p = 0; p < L->s->nprobe; p++) {
    double u[3];
    cf_set_displacement(&L->s->mesh, cf_mesh_find_nset(&L->s->mesh, L->s->probe[p]), d->x, u);
    fprintf(L->csv, ",%.9g,%.9g,%.9g,%.9g,%.9g,%.9g", u[0], u[1], u[2], lambda * L->u_lin[3 * p],
            lambda * L->u_lin[3 * p + 1], lambda * L->u_lin[3 * p + 2]);
    printf("  %s u = (%.4g, %.4g, %.4g)", L->s->probe[p], u[0], u[1], u[2]);
  }
  fprintf(L->csv, "\n");
  printf("\n");
  fflush(stdout); /* progress, also into a file or pipe */
  if ((L->wst = cf_cli_row_end(&L->csv, L->tmp, &L->good)) < 0) { /* stop: the rows before it kept */
    L->rows--, L->lambda = lambda_before;
    return 1;
  }
  return cf_cli_interrupted != 0; /* Ctrl-C: stop after this increment */
}

int cf_cmd_static(int argc, char** argv) {
  static const char* const tangent_names[] = {"consistent", "KR", NULL};
  const char* scene_path = NULL;
  const char* out_arg = NULL;
  int increments = 0, tangent = -1, rc = 0, made = 0, rows = -1, interrupted = 0;
  cfCliOut od;
  /* a mechanism scene (bodies, joints) goes to the multibody statics, which has options of its own */
  for (int i = 2; i < argc; i++)
    if (argv[i][0] != '-' && cf_mbs_scene_is_mechanism(argv[i]) > 0) return cf_cmd_static_mbs(argc, argv);
  for (int i = 2; i < argc && !rc; i++) {
    const char* a = argv[i];
    if (!strcmp(a, "--out")) { out_arg = cf_cli_arg_value(argc, argv, &i); if (!out_arg) rc = 2; }
    else if (!strcmp(a, "--increments")) rc = cf_cli_opt_int(argc, argv, &i, 1, 1000000, &increments);
    else if (!strcmp(a, "--tangent")) rc = cf_cli_opt_choice(argc, argv, &i, tangent_names, &tangent);
    else if (!strcmp(a, "--time") || !strcmp(a, "--pseudo-dt") || !strcmp(a, "--tol") || !strcmp(a, "--max-steps")) {
      fprintf(stderr, "cofem: error: %s is an option of mechanism statics (cofem static MECHANISM); %s is an FE "
              "scene\n", a, scene_path ? scene_path : "the scene");
      return cf_cli_usage();
    } else if (a[0] == '-' || scene_path) return cf_cli_bad_arg(a);
    else scene_path = a;
  }
  if (rc) return rc;
  if (!scene_path) return cf_cli_usage();
  cf_cli_catch_interrupts();
  cfScene s;
  int st = cf_scene_load(scene_path, &s);
  if (st < 0) return cf_cli_fail(st);
  if (increments > 0) s.stat.increments = increments;
  if (tangent >= 0) s.stat.tangent = tangent == 1 ? CF_TANGENT_KR : CF_TANGENT_CONSISTENT;
  char out_dir[CF_PATH_MAX];
  if (out_arg) snprintf(out_dir, sizeof out_dir, "%s", out_arg);
  else cf_cli_default_out_dir(&s, out_dir, sizeof out_dir);
  cfModel* m;
  cfData* d;
  st = cf_scene_build(&s, &m, &d);
  if (st < 0) { cf_scene_free(&s); return cf_cli_fail_scene(scene_path, st); }
  double* f = malloc(sizeof(double) * m->ndof);
  double* u_lin = calloc(3 * (s.nprobe + 1), sizeof(double));
  /* full load: every load at full value, plus gravity */
  {
    /* statics applies every load in full, whatever its time profile */
    cfScene tmp = s;
    for (int l = 0; l < tmp.nload; l++) tmp.load[l].t_stop = INFINITY, tmp.load[l].t_start = 0, tmp.load[l].ramp = 0;
    cf_scene_forces(&tmp, 0.0, 1.0, f);
  }
  for (int n = 0; n < m->nnode; n++)
    for (int k = 0; k < 3; k++) f[3 * n + k] += m->node_mass[n] * s.def.gravity[k];
  printf("cofem static %s\n  mesh %s: %d nodes, %d tetrahedra; %d increments, %s tangent, tol %.1e\n", scene_path,
         s.mesh_path, m->nnode, m->ntet, s.stat.increments,
         s.stat.tangent == CF_TANGENT_KR ? "K_R" : "consistent", s.stat.tol);
  if (s.mesh.note[0]) printf("  note: %s: %s\n", s.mesh_path, s.mesh.note);
  double t0 = cf_wall_time();
  st = cf_linear_static(m, d, f);
  if (st < 0) goto out;
  for (int p = 0; p < s.nprobe; p++)
    cf_set_displacement(&s.mesh, cf_mesh_find_nset(&s.mesh, s.probe[p]), d->x, u_lin + 3 * p);
  cf_data_reset(m, d);
  /* the folder: made now; a static.csv there that cofem did not write is not overwritten */
  static const cfCliOutPattern kFiles[] = {{"", "static.csv", 0, "", "load_factor,"}, {"", "static", 0, ".vtu", NULL}};
  int removed = 0;
  st = cf_cli_out_make(&od, out_dir);
  made = 1;
  if (st >= 0) st = cf_cli_out_clean(&od, kFiles, 2, &removed);
  if (st < 0) goto out;
  char csv_path[CF_PATH_MAX + 32], tmp[CF_PATH_MAX + 40];
  snprintf(csv_path, sizeof csv_path, "%s/static.csv", out_dir);
  snprintf(tmp, sizeof tmp, "%s.tmp", csv_path);
  FILE* csv = fopen(tmp, "w");
  if (!csv) { st = cf_error(CF_ERR_IO, "%s: cannot write: %s", tmp, strerror(errno)); goto out; }
  fprintf(csv, "load_factor,iterations");
  for (int p = 0; p < s.nprobe; p++)
    fprintf(csv, ",%s_ux,%s_uy,%s_uz,%s_ux_linear,%s_uy_linear,%s_uz_linear", s.probe[p], s.probe[p], s.probe[p],
            s.probe[p], s.probe[p], s.probe[p]);
  fprintf(csv, "\n0,0");
  for (int p = 0; p < s.nprobe; p++) fprintf(csv, ",0,0,0,0,0,0");
  fprintf(csv, "\n");
  StaticLog log = {csv, tmp, 0, CF_OK, &s, u_lin, 0.0, 0};
  log.wst = cf_cli_row_end(&log.csv, tmp, &log.good);
  if (log.wst >= 0) st = cf_static_solve(m, d, f, &s.stat, on_increment, &log);
  int bad_close = log.wst >= 0 && fclose(log.csv) != 0;
  rows = log.rows;
  interrupted = cf_cli_interrupted && log.lambda < 1;
  if (log.wst < 0) { /* a write failed (named): the increments before it are kept, as after an interrupt */
    st = log.wst;
    if (rows > 0 || log.good > 0) {
      rename(tmp, csv_path);
      fprintf(stderr, "cofem: error: %s: %s\ncofem: %s: stopped at load factor %.4g of 1; %s holds the rest state and "
              "the %d increment%s written before\n", scene_path, cf_last_error(), scene_path, log.lambda, csv_path,
              rows, rows == 1 ? "" : "s");
      made = 0, st = CF_WARN_STATIC_NOT_CONVERGED; /* exit 1, the folder and the file kept */
    } else {
      remove(tmp);
    }
    goto out;
  }
  if (st < 0 || bad_close || (interrupted && log.rows == 0)) { /* nothing kept */
    remove(tmp);
    if (st >= 0 && bad_close) st = cf_error(CF_ERR_IO, "%s: write failed", tmp);
    if (st >= 0)
      fprintf(stderr, "cofem: %s: %s before the first increment converged; nothing written\n", scene_path,
              cf_cli_interrupt_name());
    goto out;
  }
  rename(tmp, csv_path);
  if (interrupted) {
    fprintf(stderr, "cofem: %s: %s: stopped after load factor %.4g of 1; %s holds the rest state and the %d converged "
            "increment%s\n", scene_path, cf_cli_interrupt_name(), log.lambda, csv_path, log.rows, log.rows == 1 ? "" : "s");
    goto out;
  }
  if (st > 0) { /* stopped short of the full load: no "done"; what stopped it and what the CSV holds, on stderr */
    fprintf(stderr, "cofem: error: %s: static solution stopped at load factor %.4g of 1: %s\n", scene_path, log.lambda,
            cf_last_error());
    if (log.rows == 0)
      fprintf(stderr, "cofem: %s holds only the rest state (load factor 0): no increment converged\n", csv_path);
    else
      fprintf(stderr, "cofem: %s holds the rest state and the %d converged increment%s up to load factor %.4g, "
                      "with the linear solution scaled to the same load factors\n", csv_path, log.rows,
              log.rows == 1 ? "" : "s", log.lambda);
    st = CF_WARN_STATIC_NOT_CONVERGED;
    goto out;
  }
  /* the solution for ParaView: DIR/static.vtu with its stress and strain (cell and point data) */
  char vtu_path[CF_PATH_MAX + 32];
  snprintf(vtu_path, sizeof vtu_path, "%s/static.vtu", out_dir);
  cfStressField sf;
  if ((st = cf_stress_field_init(&sf, m)) < 0) goto out;
  cf_stress_field_corotated(m, d->x, d->R, &sf);
  st = cf_vtu_write_stress(vtu_path, &s.mesh, d->x, NULL, &sf);
  cf_stress_field_free(&sf);
  if (st < 0) goto out;
  printf("done in %.3f s: max displacement %.6g m", cf_wall_time() - t0, cf_cli_max_displacement(m, d));
  for (int p = 0; p < s.nprobe; p++)
    printf("; %s linear u = (%.4g, %.4g, %.4g)", s.probe[p], u_lin[3 * p], u_lin[3 * p + 1], u_lin[3 * p + 2]);
  printf("\n  wrote %s, %s\n", csv_path, vtu_path);
out:;
  int code = st < 0 ? cf_cli_fail_scene(scene_path, st) : (st > 0 ? 1 : 0);
  if (st >= 0 && interrupted) code = cf_cli_interrupt_code();
  /* an error, or an interrupt before any increment: the folders this run made go again (when empty) */
  if (made && (st < 0 || (interrupted && rows <= 0))) cf_cli_out_abandon(&od, NULL);
  free(f);
  free(u_lin);
  cf_data_free(d);
  cf_model_free(m);
  cf_scene_free(&s);
  return code;
}
