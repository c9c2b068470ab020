#define _POSIX_C_SOURCE 200809L
/* cofem run SCENE: dynamics of an FE scene (a mechanism scene goes to cmd_run_mbs.c). */
#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cofem/cofem.h"
#include "cofem/mbs.h"

/* ---- output budget ---------------------------------------------------------------------------- */

/* What the run will write, estimated from the step count, the frames and the CSV columns before
 * anything is built or written: beyond the budget, or beyond the free space, it is an error. */
static int check_output(const cfScene* s, double nsteps, double budget, const char* out_dir, double* total) {
  double nframes = s->vtu_every > 0 ? floor(nsteps / s->vtu_every) : 0;
  double frame = cf_vtu_size_bound(&s->mesh, 1, 1);
  double csv = 128 + 100 * (double)s->nprobe + nsteps * (94 + 54.0 * s->nprobe);
  double pvd = nframes > 0 ? 200 + nframes * 110 : 0;
  *total = nframes * frame + csv + pvd;
  char what[160], f[32], c[32];
  cf_cli_human_bytes(frame, f, sizeof f), cf_cli_human_bytes(csv, c, sizeof c);
  snprintf(what, sizeof what, "%.0f frames of %s, %s of probes.csv over %.0f steps", nframes, f, c, nsteps);
  return cf_cli_output_budget(*total, budget, out_dir, what);
}

/* ---- cofem run -------------------------------------------------------------------------------- */
int cf_cmd_run(int argc, char** argv) {
  static const char* const precond_names[] = {"block_jacobi", "rotated_cholesky", "amg", "auto", NULL}; /* enum order */
  static const char* const backend_names[] = {"cpu", "cuda", "auto", NULL};
  const char* scene_path = NULL;
  const char* out_arg = NULL;
  int backend = -1;
  long steps = -1, max_output = CF_CLI_DEFAULT_MAX_OUTPUT;
  double t_end = -1;
  int cold = 0, quiet = 0, precond = -1, rc = 0;
  for (int i = 2; i < argc && !rc; i++) {
    const char* a = argv[i];
    if (!strcmp(a, "--steps")) rc = cf_cli_opt_long(argc, argv, &i, 1, 1000000000000L, &steps);
    else if (!strcmp(a, "--end")) rc = cf_cli_opt_double(argc, argv, &i, 1e-9, 1e12, &t_end);
    else if (!strcmp(a, "--out")) { out_arg = cf_cli_arg_value(argc, argv, &i); if (!out_arg) rc = 2; }
    else if (!strcmp(a, "--backend")) rc = cf_cli_opt_choice(argc, argv, &i, backend_names, &backend);
    else if (!strcmp(a, "--precond")) rc = cf_cli_opt_choice(argc, argv, &i, precond_names, &precond);
    else if (!strcmp(a, "--max-output")) rc = cf_cli_opt_long(argc, argv, &i, 0, LONG_MAX, &max_output);
    else if (!strcmp(a, "--cold")) cold = 1;
    else if (!strcmp(a, "--quiet")) quiet = 1;
    else if (a[0] == '-' || scene_path) return cf_cli_bad_arg(a);
    else scene_path = a;
  }
  if (rc) return rc;
  if (!scene_path) return cf_cli_usage();
  cf_cli_catch_interrupts();
  /* a mechanism scene (bodies, joints) goes to the multibody core, which reads the same options */
  if (cf_mbs_scene_is_mechanism(scene_path) > 0) return cf_cmd_run_mbs(argc, argv);
  cfScene s;
  int st = cf_scene_load(scene_path, &s);
  if (st < 0) return cf_cli_fail(st);
  if (cold) s.def.warm_start = 0;
  if (precond >= 0) s.def.preconditioner = precond;
  if (backend >= 0) snprintf(s.backend, sizeof s.backend, "%s", backend_names[backend]);
  if (t_end > 0) s.t_end = t_end;
  /* threads (cfModelDef.threads, honoured by the library): the scene's solver.threads, else
   * OMP_NUM_THREADS, else one thread on small parts, where more were measured slower (the
   * thresholds in commands.h) */
  const char* threads_note = "";
  char tnote[96];
  const int min_nodes =
      omp_get_max_threads() >= CF_CLI_THREADS_MANY_CORES ? CF_CLI_THREADS_MIN_NODES_MANY : CF_CLI_THREADS_MIN_NODES;
  if (s.def.threads == 0 && !getenv("OMP_NUM_THREADS") && omp_get_max_threads() > 1 && s.mesh.nnode < min_nodes) {
    s.def.threads = 1;
    snprintf(tnote, sizeof tnote, " (one below %d nodes on %d cores; solver.threads to change)", min_nodes,
             omp_get_max_threads());
    threads_note = tnote;
  }
  char out_dir[CF_PATH_MAX];
  if (out_arg) snprintf(out_dir, sizeof out_dir, "%s", out_arg);
  else cf_cli_default_out_dir(&s, out_dir, sizeof out_dir);
  cfModel* m;
  cfData* d;
  st = cf_scene_build(&s, &m, &d);
  if (st < 0) { cf_scene_free(&s); return cf_cli_fail_scene(scene_path, st); }
  /* the model checked dt; the output is estimated before anything is written */
  double nsteps = steps > 0 ? (double)steps : ceil(s.t_end / s.def.dt - 1e-9), out_bytes = 0;
  st = check_output(&s, nsteps, (double)max_output, out_dir, &out_bytes);
  if (st < 0) { cf_data_free(d); cf_model_free(m); cf_scene_free(&s); return cf_cli_fail_scene(scene_path, st); }
  steps = (long)nsteps; /* below the budget, so far below LONG_MAX */
  cfSim* sim = NULL;
  st = cf_sim_create(m, d, s.backend, &sim);
  if (st < 0) { cf_data_free(d); cf_model_free(m); cf_scene_free(&s); return cf_cli_fail_scene(scene_path, st); }

  /* the folder: made now (nothing before this point writes), the previous run's files removed */
  static const cfCliOutPattern kFiles[] = {{"", "probes.csv", 0, "", "step,t,pcg_iters,"},
                                           {"", "result", 0, ".pvd", NULL},
                                           {"frames", "frame_", 6, ".vtu", NULL}};
  static const char* const kSub[] = {"frames", NULL};
  cfCliOut od;
  int removed = 0;
  st = cf_cli_out_make(&od, out_dir);
  if (st >= 0) st = cf_cli_out_clean(&od, kFiles, 3, &removed);
  char csv_path[CF_PATH_MAX + 32], csv_tmp[CF_PATH_MAX + 40];
  snprintf(csv_path, sizeof csv_path, "%s/probes.csv", out_dir);
  snprintf(csv_tmp, sizeof csv_tmp, "%s.tmp", csv_path);
  FILE* csv = st < 0 ? NULL : fopen(csv_tmp, "w");
  if (!csv) {
    if (st >= 0) st = cf_error(CF_ERR_IO, "%s: cannot write: %s", csv_tmp, strerror(errno));
    cf_cli_out_abandon(&od, kSub);
    cf_sim_free(sim); cf_data_free(d); cf_model_free(m); cf_scene_free(&s);
    return cf_cli_fail_scene(scene_path, st);
  }
  fprintf(csv, "step,t,pcg_iters,pcg_residual,kinetic_energy,strain_energy");
  for (int p = 0; p < s.nprobe; p++) fprintf(csv, ",%s_ux,%s_uy,%s_uz", s.probe[p], s.probe[p], s.probe[p]);
  fprintf(csv, "\n");

  printf("cofem run %s\n", scene_path);
  printf("  mesh %s: %d nodes, %d tetrahedra, %d DOFs (%d fixed), %d matrix blocks\n", s.mesh_path,
         m->nnode, m->ntet, m->ndof, m->nfixed, m->nnzb);
  if (s.mesh.note[0]) printf("  note: %s: %s\n", s.mesh_path, s.mesh.note);
  printf("  E %.4g Pa, nu %.3g, rho %.4g kg/m^3; dt %g s, %ld steps, %s; PCG %s tol %.1e, %s start; backend %s, %d threads%s\n",
         s.def.E, s.def.nu, s.def.rho, s.def.dt, steps,
         s.def.integrator == CF_INTEGRATOR_NEWMARK ? "Newmark"
         : s.def.integrator == CF_INTEGRATOR_GENERALIZED_ALPHA ? "generalized-alpha" : "backward Euler",
         cf_preconditioner_name(m->def.preconditioner), /* "auto" resolved by cf_scene_build */
         s.def.pcg_tol, s.def.warm_start ? "warm" : "cold",
         cf_sim_backend_name(sim), s.def.threads > 0 ? s.def.threads : omp_get_max_threads(), threads_note);
  if (s.def.integrator == CF_INTEGRATOR_GENERALIZED_ALPHA)
    printf("  generalized-alpha: rho_inf %g, Newton tol %.1e, at most %d iterations and %d step halvings, %s tangent\n",
           s.def.rho_inf, s.def.newton_tol, s.def.newton_max_iter, s.def.newton_max_cuts,
           s.def.dyn_tangent == CF_DYN_TANGENT_KR ? "K_R" : "symmetric consistent");
  {
    char t[32], b[32];
    cf_cli_human_bytes(out_bytes, t, sizeof t), cf_cli_human_bytes((double)max_output, b, sizeof b);
    printf("  output: at most about %s into %s (budget %s, --max-output)\n", t, out_dir, b);
    if (removed) printf("  removed %d file%s of a previous run from %s\n", removed, removed == 1 ? "" : "s", out_dir);
  }

  int nframes = 0, cap = 0;
  char** frames = NULL;
  double* ftimes = NULL;
  double* von = s.vtu_every > 0 ? malloc(sizeof(double) * m->ntet) : NULL;
  char frame_dir[CF_PATH_MAX + 16];
  snprintf(frame_dir, sizeof frame_dir, "%s/frames", out_dir);
  if (s.vtu_every > 0) st = cf_make_dirs(frame_dir);

  double wall0 = cf_wall_time();
  int last_status = 0, worst = 0;
  long iters_sum = 0, newton_sum = 0, cuts = 0;
  int iters_max = 0;
  double peak = 0;
  for (long k = 1; k <= steps && st >= 0 && !cf_cli_interrupted; k++) {
    cf_scene_forces(&s, d->t + s.def.dt, 1.0, d->f_ext);
    cf_sim_set_forces(sim, d->f_ext);
    st = cf_sim_step(sim);
    if (st < 0) break;
    if (st > 0) last_status = st, worst++;
    iters_sum += d->pcg_iters;
    newton_sum += d->newton_iters;
    cuts += d->step_cuts;
    if (d->pcg_iters > iters_max) iters_max = d->pcg_iters;
    int want_state = s.nprobe > 0 || (s.vtu_every > 0 && k % s.vtu_every == 0) || k == steps;
    if (want_state) {
      cf_sim_fetch(sim);
      peak = fmax(peak, cf_cli_max_displacement(m, d));
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
  int bad_close = fclose(csv) != 0;
  if (bad_close && st >= 0) st = cf_error(CF_ERR_IO, "%s: write failed", csv_tmp);
  char pvd[CF_PATH_MAX + 16];
  snprintf(pvd, sizeof pvd, "%s/result.pvd", out_dir);
  long good = d->steps; /* steps done; on an error the library left the state at the last good one */
  int interrupted = cf_cli_interrupted && good < steps;
  if ((st < 0 || interrupted) && good == 0) {
    /* nothing run: nothing left behind (the CSV's header, the folders this run made) */
    remove(csv_tmp);
    cf_cli_out_abandon(&od, kSub);
    int code = interrupted && st >= 0 ? cf_cli_interrupt_code() : (st == CF_ERR_DIVERGED ? 3 : 1);
    if (st < 0) cf_cli_fail_scene(scene_path, st);
    else fprintf(stderr, "cofem: %s: %s before the first step; nothing written\n", scene_path, cf_cli_interrupt_name());
    cf_sim_free(sim); cf_data_free(d); cf_model_free(m); cf_scene_free(&s);
    for (int i = 0; i < nframes; i++) free(frames[i]);
    free(frames); free(ftimes); free(von);
    return code;
  }
  if (st < 0 || interrupted) {
    /* the run stops; what it wrote so far stays valid: probes.csv (whole rows, the last one the
     * last good step) and result.pvd listing the frames written */
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", cf_last_error());
    int kept_csv = !bad_close && rename(csv_tmp, csv_path) == 0;
    if (!kept_csv) remove(csv_tmp);
    int kept_pvd = nframes > 0 && cf_pvd_write(pvd, nframes, (const char* const*)frames, ftimes) >= 0;
    if (nframes > 0 && !kept_pvd) fprintf(stderr, "cofem: %s\n", cf_last_error());
    int code;
    if (st < 0) {
      fprintf(stderr, "cofem: error: %s: %s (%s)\n", scene_path, msg, cf_status_name(st));
      code = st == CF_ERR_DIVERGED ? 3 : 1;
      fprintf(stderr, "cofem: %s: stopped at step %ld of %ld (t = %.6g s)%s", scene_path, good + 1, steps,
              d->t + s.def.dt, st == CF_ERR_DIVERGED ? ": diverged" : "");
    } else {
      code = cf_cli_interrupt_code();
      fprintf(stderr, "cofem: %s: %s: stopped after step %ld of %ld (t = %.6g s)", scene_path, cf_cli_interrupt_name(),
              good, steps, d->t);
    }
    fprintf(stderr, "; kept %s (%ld steps)%s%s", kept_csv ? csv_path : "no CSV", good, kept_pvd ? " and " : "",
            kept_pvd ? pvd : "");
    if (kept_pvd) fprintf(stderr, " (%d frames, to t = %.6g s)", nframes, ftimes[nframes - 1]);
    fprintf(stderr, "\n");
    if (st == CF_ERR_DIVERGED) /* the line the suite and users read on stdout (kept as before) */
      printf("stopped: diverged at step %ld of %ld (t = %.6g s); kept %s%s%s with the %ld steps before\n", good + 1,
             steps, d->t + s.def.dt, csv_path, nframes ? " and " : "", nframes ? pvd : "", good);
    cf_sim_free(sim); cf_data_free(d); cf_model_free(m); cf_scene_free(&s);
    for (int i = 0; i < nframes; i++) free(frames[i]);
    free(frames); free(ftimes); free(von);
    return code;
  }
  rename(csv_tmp, csv_path);
  if (nframes > 0) {
    st = cf_pvd_write(pvd, nframes, (const char* const*)frames, ftimes);
    if (st < 0) cf_cli_fail_scene(scene_path, st);
  }
  cf_sim_fetch(sim);
  long done = d->steps;
  printf("done: %ld steps, %.3f s simulated in %.3f s wall: %.2fx real time, %.3f ms/step\n", done, d->t, wall,
         d->t / wall, 1e3 * wall / (done ? done : 1));
  printf("  PCG iterations per step: mean %.1f, max %d\n", (double)iters_sum / (done ? done : 1), iters_max);
  if (s.def.integrator == CF_INTEGRATOR_GENERALIZED_ALPHA)
    printf("  Newton iterations per step: mean %.2f; %ld step halvings\n", (double)newton_sum / (done ? done : 1), cuts);
  printf("  stage times per step [ms]: polar %.3f, assemble %.3f, pcg %.3f, update %.3f, transfer %.3f\n",
         1e3 * d->timer[CF_STAGE_POLAR] / done, 1e3 * d->timer[CF_STAGE_ASSEMBLE] / done,
         1e3 * d->timer[CF_STAGE_PCG] / done, 1e3 * d->timer[CF_STAGE_UPDATE] / done,
         1e3 * d->timer[CF_STAGE_TRANSFER] / done);
  printf("  peak displacement over the run %.6g m (sampled at probe steps), final %.6g m; kinetic energy %.6g J; strain energy %.6g J\n",
         peak, cf_cli_max_displacement(m, d),
         cf_kinetic_energy(m, d), cf_strain_energy(m, d));
  for (int p = 0; p < s.nprobe; p++) {
    double u[3];
    cf_set_displacement(&s.mesh, cf_mesh_find_nset(&s.mesh, s.probe[p]), d->x, u);
    printf("  probe %s: u = (%.6g, %.6g, %.6g) m\n", s.probe[p], u[0], u[1], u[2]);
  }
  printf("  warnings: %d PCG not converged, %d steps with inverted elements, %d indefinite, %d steps halved%s%s\n",
         d->warning[CF_WARN_PCG_NOT_CONVERGED], d->warning[CF_WARN_INVERTED], d->warning[CF_WARN_INDEFINITE],
         d->warning[CF_WARN_STEP_CUT],
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
