#define _POSIX_C_SOURCE 200809L
/* cofem: command-line tool.
 *   cofem run SCENE [--steps N] [--end T] [--out DIR] [--cold] [--backend cpu|cuda|auto] [--quiet]
 *   cofem static SCENE [--out DIR] [--increments N] [--tangent consistent|KR]
 *   cofem info MESH
 * Exit status: 0 success, 1 error (message on stderr), 2 usage. */
#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cofem/cofem.h"
#include "cofem/mbs.h"

int cf_reduce_cli(int argc, char** argv); /* tools/cmd_reduce.c */

static int usage(void) {
  fprintf(stderr,
          "usage: cofem run SCENE [--steps N] [--end T] [--out DIR] [--cold] [--precond block_jacobi|rotated_cholesky]\n"
          "                 [--backend cpu|cuda|auto] [--quiet]\n"
          "       cofem static SCENE [--out DIR] [--increments N] [--tangent consistent|KR]\n"
          "       cofem reduce SCENE [--interface SET ...] [--modes N] [--out FILE] (Craig-Bampton)\n"
          "       cofem info MESH\n");
  return 2;
}

static int fail(int st) {
  fprintf(stderr, "cofem: error: %s (%s)\n", cf_last_error(), cf_status_name(st));
  return 1;
}

/* an error while running a scene: named by the scene unless the message already names it */
static int fail_scene(const char* scene_path, int st) {
  const char* msg = cf_last_error();
  if (strstr(msg, scene_path)) return fail(st);
  fprintf(stderr, "cofem: error: %s: %s (%s)\n", scene_path, msg, cf_status_name(st));
  return 1;
}

static const char* arg_value(int argc, char** argv, int* i) {
  if (*i + 1 >= argc) return NULL;
  return argv[++*i];
}

static void default_out_dir(const cfScene* s, char* out, size_t n) {
  if (s->out_dir[0]) {
    snprintf(out, n, "%s", s->out_dir);
    return;
  }
  const char* base = strrchr(s->path, '/');
  base = base ? base + 1 : s->path;
  snprintf(out, n, "out/%.*s", (int)(strcspn(base, ".")), base);
}

static double max_displacement(const cfModel* m, const cfData* d) {
  double mx = 0;
  for (int n = 0; n < m->nnode; n++) {
    double s = 0;
    for (int k = 0; k < 3; k++) s += (d->x[3 * n + k] - m->X[3 * n + k]) * (d->x[3 * n + k] - m->X[3 * n + k]);
    mx = fmax(mx, sqrt(s));
  }
  return mx;
}

/* ---- cofem run -------------------------------------------------------------------------------- */
static int cmd_run(int argc, char** argv) {
  const char* scene_path = NULL;
  const char* out_arg = NULL;
  const char* backend = NULL;
  long steps = -1;
  double t_end = -1;
  int cold = 0, quiet = 0, precond = -1;
  for (int i = 2; i < argc; i++) {
    const char* a = argv[i];
    if (!strcmp(a, "--steps")) { const char* v = arg_value(argc, argv, &i); if (!v) return usage(); steps = atol(v); }
    else if (!strcmp(a, "--end")) { const char* v = arg_value(argc, argv, &i); if (!v) return usage(); t_end = atof(v); }
    else if (!strcmp(a, "--out")) { out_arg = arg_value(argc, argv, &i); if (!out_arg) return usage(); }
    else if (!strcmp(a, "--backend")) { backend = arg_value(argc, argv, &i); if (!backend) return usage(); }
    else if (!strcmp(a, "--cold")) cold = 1;
    else if (!strcmp(a, "--precond")) {
      const char* v = arg_value(argc, argv, &i);
      if (!v || (strcmp(v, "block_jacobi") && strcmp(v, "rotated_cholesky"))) return usage();
      precond = !strcmp(v, "rotated_cholesky");
    }
    else if (!strcmp(a, "--quiet")) quiet = 1;
    else if (a[0] == '-') return usage();
    else if (!scene_path) scene_path = a;
    else return usage();
  }
  if (!scene_path) return usage();
  /* a mechanism scene (bodies, joints) goes to the multibody core, which reads the same options */
  if (cf_mbs_scene_is_mechanism(scene_path) > 0) return cf_mbs_run_cli(argc, argv);
  cfScene s;
  int st = cf_scene_load(scene_path, &s);
  if (st < 0) return fail(st);
  if (cold) s.def.warm_start = 0;
  if (precond >= 0) s.def.preconditioner = precond;
  if (backend) snprintf(s.backend, sizeof s.backend, "%s", backend);
  if (t_end > 0) s.t_end = t_end;
  if (s.def.threads > 0) omp_set_num_threads(s.def.threads);
  char out_dir[CF_PATH_MAX];
  if (out_arg) snprintf(out_dir, sizeof out_dir, "%s", out_arg);
  else default_out_dir(&s, out_dir, sizeof out_dir);

  cfModel* m;
  cfData* d;
  st = cf_scene_build(&s, &m, &d);
  if (st < 0) { cf_scene_free(&s); return fail_scene(scene_path, st); }
  cfSim* sim = NULL;
  st = cf_sim_create(m, d, s.backend, &sim);
  if (st < 0) { cf_data_free(d); cf_model_free(m); cf_scene_free(&s); return fail_scene(scene_path, st); }
  if (steps < 0) steps = (long)ceil(s.t_end / s.def.dt - 1e-9);

  st = cf_make_dirs(out_dir);
  char csv_path[CF_PATH_MAX + 32], csv_tmp[CF_PATH_MAX + 40];
  snprintf(csv_path, sizeof csv_path, "%s/probes.csv", out_dir);
  snprintf(csv_tmp, sizeof csv_tmp, "%s.tmp", csv_path);
  FILE* csv = st < 0 ? NULL : fopen(csv_tmp, "w");
  if (!csv) {
    if (st >= 0) st = cf_error(CF_ERR_IO, "%s: cannot write: %s", csv_tmp, strerror(errno));
    cf_sim_free(sim); cf_data_free(d); cf_model_free(m); cf_scene_free(&s);
    return fail(st);
  }
  fprintf(csv, "step,t,pcg_iters,pcg_residual,kinetic_energy,strain_energy");
  for (int p = 0; p < s.nprobe; p++) fprintf(csv, ",%s_ux,%s_uy,%s_uz", s.probe[p], s.probe[p], s.probe[p]);
  fprintf(csv, "\n");

  printf("cofem run %s\n", scene_path);
  printf("  mesh %s: %d nodes, %d tetrahedra, %d DOFs (%d fixed), %d matrix blocks\n", s.mesh_path,
         m->nnode, m->ntet, m->ndof, m->nfixed, m->nnzb);
  printf("  E %.4g Pa, nu %.3g, rho %.4g kg/m^3; dt %g s, %ld steps, %s; PCG %s tol %.1e, %s start; backend %s, %d threads\n",
         s.def.E, s.def.nu, s.def.rho, s.def.dt, steps,
         s.def.integrator == CF_INTEGRATOR_NEWMARK ? "Newmark" : "backward Euler",
         s.def.preconditioner == CF_PRECOND_ROTATED_CHOLESKY ? "rotated-Cholesky" : "block-Jacobi",
         s.def.pcg_tol, s.def.warm_start ? "warm" : "cold",
         cf_sim_backend_name(sim), omp_get_max_threads());

  int nframes = 0, cap = 0;
  char** frames = NULL;
  double* ftimes = NULL;
  double* von = s.vtu_every > 0 ? malloc(sizeof(double) * m->ntet) : NULL;
  char frame_dir[CF_PATH_MAX + 16];
  snprintf(frame_dir, sizeof frame_dir, "%s/frames", out_dir);
  if (s.vtu_every > 0) cf_make_dirs(frame_dir);

  double wall0 = cf_wall_time();
  int last_status = 0, worst = 0;
  long iters_sum = 0;
  int iters_max = 0;
  double peak = 0;
  for (long k = 1; k <= steps && st >= 0; k++) {
    cf_scene_forces(&s, d->t + s.def.dt, 1.0, d->f_ext);
    cf_sim_set_forces(sim, d->f_ext);
    st = cf_sim_step(sim);
    if (st < 0) break;
    if (st > 0) last_status = st, worst++;
    iters_sum += d->pcg_iters;
    if (d->pcg_iters > iters_max) iters_max = d->pcg_iters;
    int want_state = s.nprobe > 0 || (s.vtu_every > 0 && k % s.vtu_every == 0) || k == steps;
    if (want_state) {
      cf_sim_fetch(sim);
      peak = fmax(peak, max_displacement(m, d));
    }
    fprintf(csv, "%ld,%.9g,%d,%.3e,%.9g,%.9g", k, d->t, d->pcg_iters, d->pcg_residual,
            want_state ? cf_kinetic_energy(m, d) : NAN, want_state ? cf_strain_energy(m, d) : NAN);
    for (int p = 0; p < s.nprobe; p++) {
      double u[3];
      cf_set_displacement(&s.mesh, cf_mesh_find_nset(&s.mesh, s.probe[p]), d->x, u);
      fprintf(csv, ",%.9g,%.9g,%.9g", u[0], u[1], u[2]);
    }
    fprintf(csv, "\n");
    if (s.vtu_every > 0 && k % s.vtu_every == 0) {
      char name[64], path[CF_PATH_MAX + 96];
      snprintf(name, sizeof name, "frames/frame_%06ld.vtu", k);
      snprintf(path, sizeof path, "%s/%s", out_dir, name);
      cf_von_mises(m, d, von);
      st = cf_vtu_write(path, &s.mesh, d->x, d->v, von);
      if (st < 0) break;
      if (nframes == cap) {
        cap = cap ? 2 * cap : 64;
        frames = realloc(frames, sizeof(char*) * cap);
        ftimes = realloc(ftimes, sizeof(double) * cap);
      }
      frames[nframes] = strdup(name);
      ftimes[nframes++] = d->t;
    }
    if (!quiet && (k % 10 == 0 || k == steps)) {
      double el = cf_wall_time() - wall0;
      printf("%s  step %ld/%ld  t %.3f s  PCG %d it (res %.1e)  %.1fx real time", isatty(1) ? "\r" : "",
             k, steps, d->t, d->pcg_iters, d->pcg_residual, d->t / el);
      if (!isatty(1)) printf("\n");
      fflush(stdout);
    }
  }
  double wall = cf_wall_time() - wall0;
  if (isatty(1) && !quiet) printf("\n");
  fclose(csv);
  if (st < 0) {
    remove(csv_tmp);
    int code = fail_scene(scene_path, st);
    cf_sim_free(sim); cf_data_free(d); cf_model_free(m); cf_scene_free(&s);
    for (int i = 0; i < nframes; i++) free(frames[i]);
    free(frames); free(ftimes); free(von);
    return code;
  }
  rename(csv_tmp, csv_path);
  char pvd[CF_PATH_MAX + 16];
  if (nframes > 0) {
    snprintf(pvd, sizeof pvd, "%s/result.pvd", out_dir);
    st = cf_pvd_write(pvd, nframes, (const char* const*)frames, ftimes);
    if (st < 0) fail_scene(scene_path, st);
  }
  cf_sim_fetch(sim);
  long done = d->steps;
  printf("done: %ld steps, %.3f s simulated in %.3f s wall: %.2fx real time, %.3f ms/step\n", done, d->t, wall,
         d->t / wall, 1e3 * wall / (done ? done : 1));
  printf("  PCG iterations per step: mean %.1f, max %d\n", (double)iters_sum / (done ? done : 1), iters_max);
  printf("  stage times per step [ms]: polar %.3f, assemble %.3f, pcg %.3f, update %.3f, transfer %.3f\n",
         1e3 * d->timer[CF_STAGE_POLAR] / done, 1e3 * d->timer[CF_STAGE_ASSEMBLE] / done,
         1e3 * d->timer[CF_STAGE_PCG] / done, 1e3 * d->timer[CF_STAGE_UPDATE] / done,
         1e3 * d->timer[CF_STAGE_TRANSFER] / done);
  printf("  peak displacement over the run %.6g m (sampled at probe steps), final %.6g m; kinetic energy %.6g J; strain energy %.6g J\n",
         peak, max_displacement(m, d),
         cf_kinetic_energy(m, d), cf_strain_energy(m, d));
  for (int p = 0; p < s.nprobe; p++) {
    double u[3];
    cf_set_displacement(&s.mesh, cf_mesh_find_nset(&s.mesh, s.probe[p]), d->x, u);
    printf("  probe %s: u = (%.6g, %.6g, %.6g) m\n", s.probe[p], u[0], u[1], u[2]);
  }
  printf("  warnings: %d PCG not converged, %d steps with inverted elements, %d indefinite%s%s\n",
         d->warning[CF_WARN_PCG_NOT_CONVERGED], d->warning[CF_WARN_INVERTED], d->warning[CF_WARN_INDEFINITE],
         last_status ? "; last: " : "", last_status ? cf_last_error() : "");
  printf("  wrote %s", csv_path);
  if (nframes) printf(", %s (%d frames)", pvd, nframes);
  printf("\n");
  (void)worst;
  cf_sim_free(sim);
  cf_data_free(d);
  cf_model_free(m);
  cf_scene_free(&s);
  for (int i = 0; i < nframes; i++) free(frames[i]);
  free(frames); free(ftimes); free(von);
  return 0;
}

/* ---- cofem static ----------------------------------------------------------------------------- */
typedef struct StaticLog {
  FILE* csv;
  const cfScene* s;
  const double* u_lin; /* [3*nprobe] linear probe displacements at full load */
} StaticLog;

static int on_increment(double lambda, int iters, const cfModel* m, const cfData* d, void* user) {
  StaticLog* L = user;
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
  return 0;
}

static int cmd_static(int argc, char** argv) {
  const char* scene_path = NULL;
  const char* out_arg = NULL;
  int increments = 0;
  const char* tangent = NULL;
  for (int i = 2; i < argc; i++) {
    const char* a = argv[i];
    if (!strcmp(a, "--out")) { out_arg = arg_value(argc, argv, &i); if (!out_arg) return usage(); }
    else if (!strcmp(a, "--increments")) { const char* v = arg_value(argc, argv, &i); if (!v) return usage(); increments = atoi(v); }
    else if (!strcmp(a, "--tangent")) { tangent = arg_value(argc, argv, &i); if (!tangent) return usage(); }
    else if (a[0] == '-') return usage();
    else if (!scene_path) scene_path = a;
    else return usage();
  }
  if (!scene_path) return usage();
  cfScene s;
  int st = cf_scene_load(scene_path, &s);
  if (st < 0) return fail(st);
  if (increments > 0) s.stat.increments = increments;
  if (tangent) s.stat.tangent = strcmp(tangent, "KR") == 0 ? CF_TANGENT_KR : CF_TANGENT_CONSISTENT;
  char out_dir[CF_PATH_MAX];
  if (out_arg) snprintf(out_dir, sizeof out_dir, "%s", out_arg);
  else default_out_dir(&s, out_dir, sizeof out_dir);
  cfModel* m;
  cfData* d;
  st = cf_scene_build(&s, &m, &d);
  if (st < 0) { cf_scene_free(&s); return fail_scene(scene_path, st); }
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
  double t0 = cf_wall_time();
  st = cf_linear_static(m, d, f);
  if (st < 0) goto out;
  for (int p = 0; p < s.nprobe; p++)
    cf_set_displacement(&s.mesh, cf_mesh_find_nset(&s.mesh, s.probe[p]), d->x, u_lin + 3 * p);
  cf_data_reset(m, d);
  st = cf_make_dirs(out_dir);
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
  StaticLog log = {csv, &s, u_lin};
  st = cf_static_solve(m, d, f, &s.stat, on_increment, &log);
  fclose(csv);
  if (st < 0) { remove(tmp); goto out; }
  rename(tmp, csv_path);
  printf("done in %.3f s: max displacement %.6g m", cf_wall_time() - t0, max_displacement(m, d));
  for (int p = 0; p < s.nprobe; p++)
    printf("; %s linear u = (%.4g, %.4g, %.4g)", s.probe[p], u_lin[3 * p], u_lin[3 * p + 1], u_lin[3 * p + 2]);
  printf("\n  wrote %s\n", csv_path);
  if (st > 0) printf("  warning: %s\n", cf_last_error());
out:;
  int code = st < 0 ? fail_scene(scene_path, st) : (st > 0 ? 1 : 0);
  free(f);
  free(u_lin);
  cf_data_free(d);
  cf_model_free(m);
  cf_scene_free(&s);
  return code;
}

/* ---- cofem info ------------------------------------------------------------------------------- */
static int cmd_info(int argc, char** argv) {
  if (argc != 3) return usage();
  cfMesh mesh;
  int st = cf_mesh_read(argv[2], &mesh);
  if (st < 0) return fail(st);
  cfMeshQuality q;
  cf_mesh_quality(&mesh, &q);
  printf("%s: %d nodes, %d tetrahedra, %d boundary triangles\n", argv[2], mesh.nnode, mesh.ntet, mesh.ntri);
  printf("  bounding box [%g, %g] x [%g, %g] x [%g, %g]\n", q.bbox_min[0], q.bbox_max[0], q.bbox_min[1],
         q.bbox_max[1], q.bbox_min[2], q.bbox_max[2]);
  printf("  volume %.6g (element volumes %.3g .. %.3g)\n", q.volume, q.min_elem_volume, q.max_elem_volume);
  printf("  dihedral angles %.2f .. %.2f deg, max aspect ratio %.2f\n", q.min_dihedral_deg, q.max_dihedral_deg,
         q.max_aspect_ratio);
  for (int i = 0; i < mesh.nnset; i++) printf("  node set %-16s %6d nodes\n", mesh.nsets[i].name, mesh.nsets[i].count);
  for (int i = 0; i < mesh.neset; i++) printf("  element set %-13s %6d elements\n", mesh.esets[i].name, mesh.esets[i].count);
  cf_mesh_free(&mesh);
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 2) return usage();
  if (!strcmp(argv[1], "run")) return cmd_run(argc, argv);
  if (!strcmp(argv[1], "reduce")) return cf_reduce_cli(argc, argv);
  if (!strcmp(argv[1], "static")) return cmd_static(argc, argv);
  if (!strcmp(argv[1], "info")) return cmd_info(argc, argv);
  if (!strcmp(argv[1], "accuracy")) { int cofem_cmd_accuracy(int, char**); return cofem_cmd_accuracy(argc, argv); }
  if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) { usage(); return 0; }
  return usage();
}
