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

#include "cli/cli_run.h"
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

/* one FE run: the scene, the model, where it writes, and the sums of the summary */
typedef struct FeRun {
  const char* scene_path;
  long steps;
  int quiet;
  cfScene s;
  cfModel* m;
  cfData* d;
  cfSim* sim;
  char out_dir[CF_PATH_MAX];
  double out_bytes, max_output;
  const char* threads_note;
  char tnote[96];
  cfCliOut od;
  int removed;
  cfCliCsv csv;
  int nframes, cap;
  char** frames; /* "frames/frame_NNNNNN.vtu", relative to result.pvd */
  double* ftimes;
  cfStressField stress; /* of the frame being written */
  int last_status; /* the last warning status of a step (> 0) */
  long rows;       /* the step of probes.csv's last whole row (0: none) */
  int out_failed;  /* a step ran but its row or frame could not be written (the error set) */
  long iters_sum, newton_sum, cuts;
  int iters_max;
  double peak; /* largest displacement at the steps whose state was fetched */
} FeRun;

static void fe_free(FeRun* r) {
  cf_sim_free(r->sim);
  cf_data_free(r->d);
  cf_model_free(r->m);
  cf_scene_free(&r->s);
  for (int i = 0; i < r->nframes; i++) free(r->frames[i]);
  free(r->frames), free(r->ftimes), cf_stress_field_free(&r->stress);
}

/* load and build the scene with the options applied, check the output budget: 0 or the exit status */
static int fe_setup(FeRun* r, const cfCliRunOpts* o) {
  cfScene* s = &r->s;
  int st = cf_scene_load(r->scene_path, s); /* first: a missing or unreadable file is said as such */
  if (st < 0) return cf_cli_fail(st);
  if (o->coupling >= 0) { /* a part alone has no joints to couple */
    cf_scene_free(s);
    return cf_cli_fail(cf_error(CF_ERR_ARG, "%s: --coupling applies to mechanisms (scenes with \"bodies\"); this is "
                                "an FE scene", r->scene_path));
  }
  if (o->static_start) { /* an FE scene's run starts at rest, unloaded (cofem static solves its statics) */
    cf_scene_free(s);
    return cf_cli_fail(cf_error(CF_ERR_ARG, "%s: --static applies to mechanisms (scenes with \"bodies\"); this is an FE "
                                "scene (cofem static SCENE solves its statics)", r->scene_path));
  }
  if (o->cold) s->def.warm_start = 0;
  if (o->precond >= 0) s->def.preconditioner = o->precond;
  if (o->backend >= 0) snprintf(s->backend, sizeof s->backend, "%s", cf_cli_run_backends[o->backend]);
  if (o->t_end > 0) s->t_end = o->t_end;
  /* threads (cfModelDef.threads, honoured by the library): the scene's solver.threads, else
   * OMP_NUM_THREADS, else one thread on small parts, where more were measured slower (the
   * thresholds in commands.h) */
  r->threads_note = "";
  if (s->def.threads == 0 && cf_default_threads(s->mesh.nnode) == 1) {
    s->def.threads = 1;
    cf_set_blas_threads(1); /* the rotated Cholesky's factor at rest */
    snprintf(r->tnote, sizeof r->tnote, " (one below %ld nodes on %d cores; solver.threads to change)",
             cf_default_threads_min_nodes(), omp_get_max_threads());
    r->threads_note = r->tnote;
  }
  if (o->out_arg) snprintf(r->out_dir, sizeof r->out_dir, "%s", o->out_arg);
  else cf_cli_default_out_dir(s, r->out_dir, sizeof r->out_dir);
  st = cf_scene_check_step(s, s->def.dt); /* a step the part's mass would be lost in */
  if (st >= 0) st = cf_scene_build(s, &r->m, &r->d);
  if (st < 0) { fe_free(r); return cf_cli_fail_scene(r->scene_path, st); }
  /* the model checked dt; the output is estimated before anything is written */
  double nsteps = o->steps > 0 ? (double)o->steps : ceil(s->t_end / s->def.dt - 1e-9);
  r->max_output = (double)o->max_output;
  st = check_output(s, nsteps, r->max_output, r->out_dir, &r->out_bytes);
  if (st < 0) { fe_free(r); return cf_cli_fail_scene(r->scene_path, st); }
  r->steps = (long)nsteps; /* below the budget, so far below LONG_MAX */
  st = cf_sim_create(r->m, r->d, s->backend, &r->sim);
  if (st < 0) { fe_free(r); return cf_cli_fail_scene(r->scene_path, st); }
  return 0;
}

static const char* const kSub[] = {"frames", NULL};

/* the folder: made now (nothing before this point writes), the previous run's files removed; the
 * CSV opened with its header and the frames' folder made: 0 or the exit status */
static int fe_prepare_output(FeRun* r) {
  static const cfCliOutPattern kFiles[] = {{"", "probes.csv", 0, "", "step,t,pcg_iters,"},
                                           {"", "result", 0, ".pvd", NULL},
                                           {"frames", "frame_", 6, ".vtu", NULL}};
  const cfScene* s = &r->s;
  int st = cf_cli_out_make(&r->od, r->out_dir);
  if (st >= 0) st = cf_cli_out_clean(&r->od, kFiles, 3, &r->removed);
  cf_cli_csv_names(&r->csv, r->out_dir, "probes.csv");
  if (st >= 0) st = cf_cli_csv_open(&r->csv);
  if (st < 0) {
    cf_cli_out_abandon(&r->od, kSub);
    fe_free(r);
    return cf_cli_fail_scene(r->scene_path, st);
  }
  FILE* csv = r->csv.f;
  fprintf(csv, "step,t,pcg_iters,pcg_residual,kinetic_energy,strain_energy");
  for (int p = 0; p < s->nprobe; p++) fprintf(csv, ",%s_ux,%s_uy,%s_uz", s->probe[p], s->probe[p], s->probe[p]);
  fprintf(csv, "\n");
  if ((st = cf_cli_csv_row(&r->csv)) < 0) {
    remove(r->csv.tmp);
    cf_cli_out_abandon(&r->od, kSub);
    fe_free(r);
    return cf_cli_fail_scene(r->scene_path, st);
  }
  return 0;
}

static void fe_print_header(const FeRun* r) {
  const cfScene* s = &r->s;
  const cfModel* m = r->m;
  printf("cofem run %s\n", r->scene_path);
  printf("  mesh %s: %d nodes, %d tetrahedra, %d DOFs (%d fixed), %d matrix blocks\n", s->mesh_path,
         m->nnode, m->ntet, m->ndof, m->nfixed, m->nnzb);
  if (s->mesh.note[0]) printf("  note: %s: %s\n", s->mesh_path, s->mesh.note);
  printf("  E %.4g Pa, nu %.3g, rho %.4g kg/m^3; dt %g s, %ld steps, %s; PCG %s tol %.1e, %s start; backend %s, %d threads%s\n",
         s->def.E, s->def.nu, s->def.rho, s->def.dt, r->steps,
         s->def.integrator == CF_INTEGRATOR_NEWMARK ? "Newmark"
         : s->def.integrator == CF_INTEGRATOR_GENERALIZED_ALPHA ? "generalized-alpha" : "backward Euler",
         cf_preconditioner_name(m->def.preconditioner), /* "auto" resolved by cf_scene_build */
         s->def.pcg_tol, s->def.warm_start ? "warm" : "cold",
         cf_sim_backend_name(r->sim), s->def.threads > 0 ? s->def.threads : omp_get_max_threads(), r->threads_note);
  if (s->def.integrator == CF_INTEGRATOR_GENERALIZED_ALPHA)
    printf("  generalized-alpha: rho_inf %g, Newton tol %.1e, at most %d iterations and %d step halvings, %s tangent\n",
           s->def.rho_inf, s->def.newton_tol, s->def.newton_max_iter, s->def.newton_max_cuts,
           s->def.dyn_tangent == CF_DYN_TANGENT_KR ? "K_R" : "symmetric consistent");
  char t[32], b[32];
  cf_cli_human_bytes(r->out_bytes, t, sizeof t), cf_cli_human_bytes(r->max_output, b, sizeof b);
  printf("  output: at most about %s into %s (budget %s, --max-output)\n", t, r->out_dir, b);
  if (r->removed) printf("  removed %d file%s of a previous run from %s\n", r->removed, r->removed == 1 ? "" : "s", r->out_dir);
}

/* frame k: DIR/frames/frame_NNNNNN.vtu, listed for result.pvd */
static int fe_write_frame(FeRun* r, long k) {
  char name[64], path[CF_PATH_MAX + 96];
  snprintf(name, sizeof name, "frames/frame_%06ld.vtu", k);
  snprintf(path, sizeof path, "%s/%s", r->out_dir, name);
  cf_stress_field_corotated(r->m, r->d->x, r->d->R, &r->stress);
  int st = cf_vtu_write_stress(path, &r->s.mesh, r->d->x, r->d->v, &r->stress);
  if (st < 0) return st;
  if (r->nframes == r->cap) {
    r->cap = r->cap ? 2 * r->cap : 64;
    r->frames = realloc(r->frames, sizeof(char*) * r->cap);
    r->ftimes = realloc(r->ftimes, sizeof(double) * r->cap);
  }
  r->frames[r->nframes] = strdup(name);
  r->ftimes[r->nframes++] = r->d->t;
  return st;
}

/* cfCliRunOps.step: the loads at the step's end time, the step, its CSV row and frame */
static int fe_step(void* ctx, long k) {
  FeRun* r = ctx;
  const cfScene* s = &r->s;
  const cfModel* m = r->m;
  cfData* d = r->d;
  cf_scene_forces(s, d->t + s->def.dt, 1.0, d->f_ext);
  cf_sim_set_forces(r->sim, d->f_ext);
  int st = cf_sim_step(r->sim);
  if (st < 0) return st;
  if (st > 0) r->last_status = st;
  r->iters_sum += d->pcg_iters;
  r->newton_sum += d->newton_iters;
  r->cuts += d->step_cuts;
  if (d->pcg_iters > r->iters_max) r->iters_max = d->pcg_iters;
  int frame = s->vtu_every > 0 && k % s->vtu_every == 0;
  int want_state = s->nprobe > 0 || frame || k == r->steps;
  if (want_state) {
    cf_sim_fetch(r->sim);
    r->peak = fmax(r->peak, cf_cli_max_displacement(m, d));
  }
  FILE* csv = r->csv.f;
  fprintf(csv, "%ld,%.9g,%d,%.3e,%.9g,%.9g", k, d->t, d->pcg_iters, d->pcg_residual,
          want_state ? cf_kinetic_energy(m, d) : NAN, want_state ? cf_strain_energy(m, d) : NAN);
  for (int p = 0; p < s->nprobe; p++) {
    double u[3];
    cf_set_displacement(&s->mesh, cf_mesh_find_nset(&s->mesh, s->probe[p]), d->x, u);
    fprintf(csv, ",%.9g,%.9g,%.9g", u[0], u[1], u[2]);
  }
  fprintf(csv, "\n");
  int wst = cf_cli_csv_row(&r->csv); /* a failed write stops the run: the rows before it are kept */
  if (wst >= 0) r->rows = k;
  if (wst >= 0 && frame) wst = fe_write_frame(r, k);
  if (wst < 0) r->out_failed = 1;
  return wst < 0 ? wst : st;
}

static void fe_progress(void* ctx, long k, long steps, double el) {
  const cfData* d = ((FeRun*)ctx)->d;
  printf("  step %ld/%ld  t %.3f s  PCG %d it (res %.1e)  %.1fx real time", k, steps, d->t, d->pcg_iters,
         d->pcg_residual, d->t / el);
}

/* the run stopped (error or interrupt): what it wrote so far stays valid: probes.csv (whole rows,
 * the last one the last good step) and result.pvd listing the frames written; the exit status */
static int fe_stopped(FeRun* r, int st, const char* pvd) {
  const cfData* d = r->d;
  long good = d->steps, steps = r->steps;
  /* nothing run, or nothing of it written: nothing left behind (the CSV's header, the folders this
   * run made) */
  if (good == 0 || r->rows == 0) {
    remove(r->csv.tmp);
    cf_cli_out_abandon(&r->od, kSub);
    int code = st >= 0 ? cf_cli_interrupt_code() : (st == CF_ERR_DIVERGED ? 3 : 1);
    if (st < 0) cf_cli_fail_scene(r->scene_path, st);
    else fprintf(stderr, "cofem: %s: %s before the first step; nothing written\n", r->scene_path, cf_cli_interrupt_name());
    return code;
  }
  char msg[1024];
  snprintf(msg, sizeof msg, "%s", cf_last_error());
  int kept_csv = cf_cli_csv_keep(&r->csv);
  int kept_pvd = r->nframes > 0 && cf_pvd_write(pvd, r->nframes, (const char* const*)r->frames, r->ftimes) >= 0;
  if (r->nframes > 0 && !kept_pvd) fprintf(stderr, "cofem: %s\n", cf_last_error());
  int code;
  if (st < 0) {
    fprintf(stderr, "cofem: error: %s: %s (%s)\n", r->scene_path, msg, cf_status_name(st));
    code = st == CF_ERR_DIVERGED ? 3 : 1;
    if (r->out_failed) /* the step ran; its row or frame could not be written */
      fprintf(stderr, "cofem: %s: stopped after step %ld of %ld (t = %.6g s): its output could not be written",
              r->scene_path, good, steps, d->t);
    else
      fprintf(stderr, "cofem: %s: stopped at step %ld of %ld (t = %.6g s)%s", r->scene_path, good + 1, steps,
              d->t + r->s.def.dt, st == CF_ERR_DIVERGED ? ": diverged" : "");
  } else {
    code = cf_cli_interrupt_code();
    fprintf(stderr, "cofem: %s: %s: stopped after step %ld of %ld (t = %.6g s)", r->scene_path, cf_cli_interrupt_name(),
            good, steps, d->t);
  }
  fprintf(stderr, "; kept %s (%ld steps)%s%s", kept_csv ? r->csv.path : "no CSV", r->rows, kept_pvd ? " and " : "",
          kept_pvd ? pvd : "");
  if (kept_pvd) fprintf(stderr, " (%d frames, to t = %.6g s)", r->nframes, r->ftimes[r->nframes - 1]);
  fprintf(stderr, "\n");
  if (st == CF_ERR_DIVERGED) /* the line the suite and users read on stdout (kept as before) */
    printf("stopped: diverged at step %ld of %ld (t = %.6g s); kept %s%s%s with the %ld steps before\n", good + 1,
           steps, d->t + r->s.def.dt, r->csv.path, r->nframes ? " and " : "", r->nframes ? pvd : "", good);
  return code;
}

/* the end-of-run summary on stdout */
static void fe_summary(FeRun* r, double wall, const char* pvd) {
  const cfScene* s = &r->s;
  const cfModel* m = r->m;
  const cfData* d = r->d;
  long done = d->steps;
  printf("done: %ld steps, %.3f s simulated in %.3f s wall: %.2fx real time, %.3f ms/step\n", done, d->t, wall,
         d->t / wall, 1e3 * wall / (done ? done : 1));
  printf("  PCG iterations per step: mean %.1f, max %d\n", (double)r->iters_sum / (done ? done : 1), r->iters_max);
  if (s->def.integrator == CF_INTEGRATOR_GENERALIZED_ALPHA)
    printf("  Newton iterations per step: mean %.2f; %ld step halvings\n", (double)r->newton_sum / (done ? done : 1),
           r->cuts);
  printf("  stage times per step [ms]: polar %.3f, assemble %.3f, pcg %.3f, update %.3f, transfer %.3f\n",
         1e3 * d->timer[CF_STAGE_POLAR] / done, 1e3 * d->timer[CF_STAGE_ASSEMBLE] / done,
         1e3 * d->timer[CF_STAGE_PCG] / done, 1e3 * d->timer[CF_STAGE_UPDATE] / done,
         1e3 * d->timer[CF_STAGE_TRANSFER] / done);
  printf("  peak displacement over the run %.6g m (sampled at probe steps), final %.6g m; kinetic energy %.6g J; strain energy %.6g J\n",
         r->peak, cf_cli_max_displacement(m, d),
         cf_kinetic_energy(m, d), cf_strain_energy(m, d));
  for (int p = 0; p < s->nprobe; p++) {
    double u[3];
    cf_set_displacement(&s->mesh, cf_mesh_find_nset(&s->mesh, s->probe[p]), d->x, u);
    printf("  probe %s: u = (%.6g, %.6g, %.6g) m\n", s->probe[p], u[0], u[1], u[2]);
  }
  printf("  warnings: %d PCG not converged, %d steps with inverted elements, %d indefinite, %d steps halved%s%s\n",
         d->warning[CF_WARN_PCG_NOT_CONVERGED], d->warning[CF_WARN_INVERTED], d->warning[CF_WARN_INDEFINITE],
         d->warning[CF_WARN_STEP_CUT],
         r->last_status ? "; last: " : "", r->last_status ? cf_last_error() : "");
  printf("  wrote %s", r->csv.path);
  if (r->nframes) printf(", %s (%d frames)", pvd, r->nframes);
  printf("\n");
}

int cf_cmd_run(int argc, char** argv) {
  cfCliRunOpts o;
  int rc = cf_cli_run_parse(argc, argv, 2, &o);
  if (rc) return rc;
  if (!o.scene_path) return cf_cli_usage();
  cf_cli_catch_interrupts();
  /* a mechanism scene (bodies, joints) goes to the multibody core, which reads the same options */
  if (cf_mbs_scene_is_mechanism(o.scene_path) > 0) return cf_cmd_run_mbs(argc, argv);
  FeRun r = {.scene_path = o.scene_path, .quiet = o.quiet};
  if ((rc = fe_setup(&r, &o)) != 0) return rc;
  if ((rc = fe_prepare_output(&r)) != 0) return rc;
  fe_print_header(&r);
  const cfScene* s = &r.s;
  int st = CF_OK;
  if (s->vtu_every > 0) st = cf_stress_field_init(&r.stress, r.m);
  char frame_dir[CF_PATH_MAX + 16];
  snprintf(frame_dir, sizeof frame_dir, "%s/frames", r.out_dir);
  if (s->vtu_every > 0 && st >= 0) st = cf_make_dirs(frame_dir);

  double wall = 0;
  static const cfCliRunOps kOps = {fe_step, fe_progress};
  if (st >= 0) st = cf_cli_run_loop(&kOps, &r, r.steps, 10, r.quiet, &wall);
  st = cf_cli_csv_close(&r.csv, st);
  char pvd[CF_PATH_MAX + 16];
  snprintf(pvd, sizeof pvd, "%s/result.pvd", r.out_dir);
  /* steps done; on an error the library left the state at the last good one */
  if (st < 0 || (cf_cli_interrupted && r.d->steps < r.steps)) {
    int code = fe_stopped(&r, st, pvd);
    fe_free(&r);
    return code;
  }
  cf_cli_csv_keep(&r.csv);
  if (r.nframes > 0) {
    st = cf_pvd_write(pvd, r.nframes, (const char* const*)r.frames, r.ftimes);
    if (st < 0) cf_cli_fail_scene(r.scene_path, st);
  }
  cf_sim_fetch(r.sim);
  fe_summary(&r, wall, pvd);
  fe_free(&r);
  return 0;
}
