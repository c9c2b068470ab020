#define _POSIX_C_SOURCE 200809L
/* `cofem run SCENE` for mechanism scenes: the tool dispatches here when
 * cf_mbs_scene_is_mechanism(SCENE). Options as `cofem run`: --steps N, --end T, --out DIR, --quiet
 * (--cold, --precond X and --backend cpu|auto are accepted and have no effect: mechanisms run on
 * the CPU with CHOLMOD).
 * Prints the model, a progress line, and a summary (real-time ratio, Newton iterations, constraint
 * violation, energy); writes DIR/mbs.csv. Exit status: 0, 1 error, 2 usage. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cofem/fem.h"
#include "cofem/output.h"
#include "cofem/mbs_fe.h"
#include "cofem/mbs_modal.h"
#include "cofem/modal_part.h"
#include "cofem/output.h"
#include "mbs/mbs_internal.h"

static int usage(void) {
  fprintf(stderr, "usage: cofem run MECHANISM.json [--steps N] [--end T] [--out DIR] [--quiet]\n");
  return 2;
}

/* an error, named by the scene unless the message names it already */
static const char* g_scene = "";
static int fail(int st) {
  const char* msg = cf_last_error();
  if (g_scene[0] && !strstr(msg, g_scene)) fprintf(stderr, "cofem: error: %s: %s (%s)\n", g_scene, msg, cf_status_name(st));
  else fprintf(stderr, "cofem: error: %s (%s)\n", msg, cf_status_name(st));
  return 1;
}

static void write_row(FILE* csv, const cfMbsModel* m, const cfMbsData* d, const cfMbsScene* s, long k) {
  double T, V;
  cf_mbs_energy(m, d, &T, &V);
  fprintf(csv, "%ld,%.10g,%d,%.3e,%.3e,%.3e,%.12g,%.12g,%.12g", k, d->t, d->iters, d->phi_max, d->phid_max, d->phidd_max,
          T, V, T + V);
  for (int c = 0; c < s->nchannel; c++) {
    double v[3];
    cf_mbs_channel_eval(m, d, &s->channel[c], v);
    for (int i = 0; i < cf_mbs_channel_size(&s->channel[c]); i++) fprintf(csv, ",%.12g", v[i]);
  }
  fprintf(csv, "\n");
}

/* one VTU frame per flexible body; names kept (relative to the .pvd, which sits beside them) */
static int write_frames(const cfMbsModel* m, const cfMbsData* d, const cfMbsScene* s, const char* dir, char** files,
                        double* times, int* nframe, int cap) {
  if (*nframe >= cap) return CF_OK;
  for (int k = 0; k < s->nflex; k++) {
    char name[CF_MBS_NAME_MAX + 16], path[CF_MBS_PATH_MAX + CF_MBS_NAME_MAX + 20];
    snprintf(name, sizeof name, "%s_%04d.vtu", m->body_name[s->flex_body[k]], *nframe);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int fe = cf_mbs_fe_index(m, s->flex_body[k]);
    int st = fe >= 0 ? cf_mbs_fe_write_vtu(m, d, fe, &s->flex[k]->scene.mesh, path)
                     : cf_mbs_modal_write_vtu(m, d, cf_mbs_modal_index(m, s->flex_body[k]), &s->flex[k]->scene.mesh, path);
    if (st < 0) return st;
    files[(size_t)k * cap + *nframe] = strdup(name);
  }
  times[(*nframe)++] = d->t;
  return CF_OK;
}

static void free_frames(char** files, double* times, int n) {
  for (int i = 0; files && i < n; i++) free(files[i]);
  free(files), free(times);
}

int cf_cmd_run_mbs(int argc, char** argv) {
  const char* scene_path = NULL;
  const char* out_arg = NULL;
  static const char* const precond_names[] = {"block_jacobi", "rotated_cholesky", "amg", "auto", NULL}; /* enum order */
  static const char* const backend_names[] = {"cpu", "cuda", "auto", NULL};
  long steps = -1, max_output = CF_CLI_DEFAULT_MAX_OUTPUT;
  double t_end = -1;
  int quiet = 0, rc = 0, backend = -1, precond = -1;
  int i0 = (argc > 1 && !strcmp(argv[1], "run")) ? 2 : 1;
  for (int i = i0; i < argc && !rc; i++) { /* the options of cofem run, parsed as strictly */
    const char* a = argv[i];
    if (!strcmp(a, "--steps")) rc = cf_cli_opt_long(argc, argv, &i, 1, 1000000000000L, &steps);
    else if (!strcmp(a, "--end")) rc = cf_cli_opt_double(argc, argv, &i, 1e-9, 1e12, &t_end);
    else if (!strcmp(a, "--out")) { out_arg = cf_cli_arg_value(argc, argv, &i); if (!out_arg) rc = 2; }
    else if (!strcmp(a, "--backend")) rc = cf_cli_opt_choice(argc, argv, &i, backend_names, &backend);
    else if (!strcmp(a, "--precond")) rc = cf_cli_opt_choice(argc, argv, &i, precond_names, &precond);
    else if (!strcmp(a, "--max-output")) rc = cf_cli_opt_long(argc, argv, &i, 0, 0x7fffffffffffffffL, &max_output);
    else if (!strcmp(a, "--cold")) {
    } else if (!strcmp(a, "--quiet")) quiet = 1;
    else if (a[0] == '-' || scene_path) return cf_cli_bad_arg(a);
    else scene_path = a;
  }
  if (rc) return rc;
  if (!scene_path) return usage();
  g_scene = scene_path;
  cf_cli_catch_interrupts();
  if (backend == 1) { /* --precond has no effect on a mechanism; --backend cuda is refused */
    cf_error(CF_ERR_UNSUPPORTED, "mechanisms run on the CPU only (--backend cuda)");
    return fail(CF_ERR_UNSUPPORTED);
  }

  cfMbsScene s;
  int st = cf_mbs_scene_load(scene_path, &s);
  if (st < 0) return fail(st);
  if (t_end > 0) s.t_end = t_end;
  cfMbsModel* m = NULL;
  cfMbsData* d = NULL;
  st = cf_mbs_model_create(&s.def, &m);
  if (st < 0) {
    char prefix[CF_MBS_PATH_MAX + 4];
    snprintf(prefix, sizeof prefix, "%s: ", scene_path);
    st = cf_mbs__rethrow(st, prefix);
    cf_mbs_scene_free(&s);
    return fail(st);
  }
  st = cf_mbs_data_create(m, &d);
  if (st < 0) {
    cf_mbs_model_free(m);
    cf_mbs_scene_free(&s);
    return fail(st);
  }
  double h = m->opt.dt;
  if (steps < 0) steps = (long)ceil(s.t_end / h - 1e-9);
  if (s.kinematic && m->ndof != 0) {
    st = cf_error(CF_ERR_SCENE, "%s: \"solver.analysis\" is kinematic, but the mechanism has %d degree%s of freedom left "
                  "(every motion must be driven)", scene_path, m->ndof, m->ndof == 1 ? "" : "s");
    cf_mbs_data_free(d);
    cf_mbs_model_free(m);
    cf_mbs_scene_free(&s);
    return fail(st);
  }

  char out_dir[CF_MBS_PATH_MAX];
  if (out_arg) snprintf(out_dir, sizeof out_dir, "%s", out_arg);
  else if (s.out_dir[0]) snprintf(out_dir, sizeof out_dir, "%s", s.out_dir);
  else {
    const char* base = strrchr(scene_path, '/');
    base = base ? base + 1 : scene_path;
    snprintf(out_dir, sizeof out_dir, "out/%.*s", (int)strcspn(base, "."), base);
  }
  int vtu_every = s.vtu_every > 0 ? s.vtu_every : (int)(steps / 100 > 0 ? steps / 100 : 1);
  { /* the output budget, before anything is written: CSV rows and the flexible bodies' frames */
    int ncol = 9;
    for (int c = 0; c < s.nchannel; c++) ncol += cf_mbs_channel_size(&s.channel[c]);
    double rows = (double)steps / (s.every > 0 ? s.every : 1) + 1, frames = 0, frame = 0;
    for (int k = 0; k < s.nflex; k++) frame += cf_vtu_size_bound(&s.flex[k]->scene.mesh, 1, 0);
    if (s.nflex) frames = floor((double)steps / vtu_every) + 1;
    double total = rows * 24.0 * ncol + frames * (frame + 110.0 * s.nflex);
    char what[160], f[32];
    cf_cli_human_bytes(frame, f, sizeof f);
    snprintf(what, sizeof what, "%.0f CSV rows of %d columns, %.0f frames of %s", rows, ncol, frames, f);
    st = cf_cli_output_budget(total, (double)max_output, out_dir, what);
    if (st < 0) {
      cf_mbs_data_free(d);
      cf_mbs_model_free(m);
      cf_mbs_scene_free(&s);
      return fail(st);
    }
  }
  /* the folder: made now (nothing before this point writes); the previous run's files of this
   * scene's kinds removed (mbs.csv, BODY.pvd, BODY_NNNN.vtu), a foreign file with such a name refused */
  cfCliOut od;
  int removed = 0;
  st = cf_cli_out_make(&od, out_dir);
  if (st >= 0) {
    cfCliOutPattern pat[1 + 2 * CF_MBS_MAX_FLEX];
    char pre[CF_MBS_MAX_FLEX][CF_MBS_NAME_MAX + 2];
    int np = 0;
    pat[np++] = (cfCliOutPattern){"", "mbs.csv", 0, "", "step,t,newton_iters,"};
    for (int k = 0; k < s.nflex && k < CF_MBS_MAX_FLEX; k++) {
      snprintf(pre[k], sizeof pre[k], "%s_", m->body_name[s.flex_body[k]]);
      pat[np++] = (cfCliOutPattern){"", pre[k], 4, ".vtu", NULL};
      pat[np++] = (cfCliOutPattern){"", m->body_name[s.flex_body[k]], 0, ".pvd", NULL};
    }
    st = cf_cli_out_clean(&od, pat, np, &removed);
  }
  char csv_path[CF_MBS_PATH_MAX + 16], csv_tmp[CF_MBS_PATH_MAX + 24];
  snprintf(csv_path, sizeof csv_path, "%s/mbs.csv", out_dir);
  snprintf(csv_tmp, sizeof csv_tmp, "%s.tmp", csv_path);
  FILE* csv = st < 0 ? NULL : fopen(csv_tmp, "w");
  if (!csv) {
    if (st >= 0) st = cf_error(CF_ERR_IO, "%s: cannot write: %s", csv_tmp, strerror(errno));
    cf_cli_out_abandon(&od, NULL);
    cf_mbs_data_free(d);
    cf_mbs_model_free(m);
    cf_mbs_scene_free(&s);
    return fail(st);
  }
  fprintf(csv, "step,t,newton_iters,phi_max,phid_max,phidd_max,kinetic,potential,energy");
  for (int c = 0; c < s.nchannel; c++) {
    if (cf_mbs_channel_size(&s.channel[c]) == 1) fprintf(csv, ",%s", s.channel[c].label);
    else fprintf(csv, ",%s_x,%s_y,%s_z", s.channel[c].label, s.channel[c].label, s.channel[c].label);
  }
  fprintf(csv, "\n");

  int nvirt = 0, nblk = 0;
  for (int b = 0; b < m->nbody; b++) nvirt += m->body_virtual[b], nblk += m->body_modal[b] == 2;
  for (int i = 0; i < m->nfe; i++) nblk += (cf_mbs_fe_model(m, i)->nnode + 3) / 4 - 1; /* an FE body's node blocks */
  printf("cofem run %s (mechanism)\n", scene_path);
  printf("  %d bodies (%d virtual, %d flexible), %d joints, %d drivers, %d forces; %d coordinates, %d equations "
         "(rank %d, %d redundant), %d degree%s of freedom\n",
         m->nbody - nblk, nvirt, m->nmodal + m->nfe, m->njoint, m->ndriver, m->nforce, m->nq, m->ncon, m->rank, m->nredundant, m->ndof,
         m->ndof == 1 ? "" : "s");
  if (s.kinematic)
    printf("  kinematic analysis: dt %g s, %ld steps; position by Newton, velocity and acceleration by projection\n", h, steps);
  else
    printf("  dynamics: index-3 augmented Lagrangian, %s, projections; dt %g s, %ld steps; penalty %.3g; "
           "Newton tol |dq| %.1e, |Phi| %.1e; CHOLMOD %s (%d nonzeros)\n",
           m->opt.rho_inf < 1 ? "generalized-alpha" : "trapezoidal rule", h, steps, m->alpha, m->opt.tol_dq, m->opt.tol_phi,
           m->nfe ? "supernodal" : "simplicial", m->nnz);
  if (m->opt.rho_inf < 1) printf("  generalized-alpha: rho_inf %g\n", m->opt.rho_inf);
  if (m->assembly_shift > 1e-9) printf("  initial assembly moved the given poses by up to %.3g (coordinates)\n", m->assembly_shift);
  for (int k = 0; k < s.nflex; k++) {
    const cfModalPart* p = s.flex[k];
    if (cf_mbs_fe_index(m, s.flex_body[k]) >= 0) {
      int corot = s.def.fe[cf_mbs_def_fe_index(&s.def, s.flex_body[k])].corotational;
      printf("  flexible body '%s': %s, %d nodes, %d tets, mass %.6g kg; %s\n", m->body_name[s.flex_body[k]],
             p->scene.mesh_path, p->model->nnode, p->model->ntet,
             cf_mbs_fe_total_mass(m, cf_mbs_fe_index(m, s.flex_body[k])),
             corot ? "corotational formulation: the co-rotational part, condensed onto its joints by the solver"
                   : "lumped formulation: a point mass at every node, co-rotational internal forces");
      continue;
    }
    int ib = cf_mbs_modal_index(m, s.flex_body[k]), nm = cf_mbs_modal_nmodes(m, ib), f0 = p->red.nrigid;
    printf("  flexible body '%s': %s, %d nodes, %d tets; %d modes (%d constraint + %d normal, %d rigid left to the frame), "
           "%.1f .. %.1f Hz; reduction %s %.3f s\n",
           m->body_name[s.flex_body[k]], p->scene.mesh_path, p->red.nnode, p->red.ntet, nm, p->red.nb, p->red.nk,
           p->red.nrigid, nm ? cf_reduction_freq_hz(&p->red, f0) : 0.0, nm ? cf_reduction_freq_hz(&p->red, f0 + nm - 1) : 0.0,
           p->from_cache ? "read from cache in" : "computed in", p->t_total);
  }
  if (removed) printf("  removed %d file%s of a previous run from %s\n", removed, removed == 1 ? "" : "s", out_dir);
  /* deformed meshes of the flexible bodies: DIR/<body>_NNNN.vtu frames and DIR/<body>.pvd */
  int nframe_cap = s.nflex ? (int)(steps / vtu_every + 2) : 0, nframe = 0;
  char** frame_files = nframe_cap ? calloc((size_t)(nframe_cap * s.nflex), sizeof(char*)) : NULL;
  double* frame_t = nframe_cap ? calloc((size_t)nframe_cap, sizeof(double)) : NULL;
  if (nframe_cap && (!frame_files || !frame_t)) nframe_cap = 0;

  double T0, V0;
  cf_mbs_energy(m, d, &T0, &V0);
  double v[3];
  cf_mbs_violation(m, d, v);
  write_row(csv, m, d, &s, 0);
  st = write_frames(m, d, &s, out_dir, frame_files, frame_t, &nframe, nframe_cap);
  double worst[3] = {v[0], v[1], v[2]}, e_dev = 0;
  double wall0 = cf_wall_time();
  long report = steps >= 100 ? steps / 20 : 10;
  for (long k = 1; k <= steps && st >= 0 && !cf_cli_interrupted; k++) {
    st = s.kinematic ? cf_mbs_kinematic_step(m, d) : cf_mbs_step(m, d);
    if (st < 0) break;
    if (!s.kinematic) {
      double T, V;
      cf_mbs_energy(m, d, &T, &V);
      e_dev = fmax(e_dev, fabs(T + V - T0 - V0));
    }
    worst[0] = fmax(worst[0], d->phi_max);
    worst[1] = fmax(worst[1], d->phid_max);
    worst[2] = fmax(worst[2], d->phidd_max);
    if (k % s.every == 0 || k == steps) write_row(csv, m, d, &s, k);
    if ((k % vtu_every == 0 || k == steps) && (st = write_frames(m, d, &s, out_dir, frame_files, frame_t, &nframe, nframe_cap)) < 0)
      break;
    if (!quiet && (k % report == 0 || k == steps)) {
      double el = cf_wall_time() - wall0;
      printf("%s  step %ld/%ld  t %.4f s  Newton %d it  |Phi| %.1e  %.1fx real time", isatty(1) ? "\r" : "", k, steps,
             d->t, d->iters, d->phi_max, el > 0 ? d->t / el : INFINITY);
      if (!isatty(1)) printf("\n");
      fflush(stdout);
    }
  }
  double wall = cf_wall_time() - wall0;
  if (isatty(1) && !quiet) printf("\n");
  int bad_close = fclose(csv) != 0;
  if (bad_close && st >= 0) st = cf_error(CF_ERR_IO, "%s: write failed", csv_tmp);
  long good = d->steps; /* on an error the step left the state at the last good one */
  int interrupted = cf_cli_interrupted && good < steps;
  if ((st < 0 || interrupted) && good == 0) {
    /* nothing run: nothing left behind (the CSV's first row, the frames at t = 0, the folder) */
    remove(csv_tmp);
    for (int i = 0; frame_files && i < nframe_cap * s.nflex; i++)
      if (frame_files[i]) {
        char p[CF_MBS_PATH_MAX + CF_MBS_NAME_MAX + 20];
        snprintf(p, sizeof p, "%s/%s", out_dir, frame_files[i]);
        remove(p);
      }
    free_frames(frame_files, frame_t, nframe_cap * s.nflex);
    cf_cli_out_abandon(&od, NULL);
    int code = st < 0 ? fail(st) : cf_cli_interrupt_code();
    if (st >= 0) fprintf(stderr, "cofem: %s: %s before the first step; nothing written\n", scene_path, cf_cli_interrupt_name());
    cf_mbs_data_free(d);
    cf_mbs_model_free(m);
    cf_mbs_scene_free(&s);
    return code;
  }
  int stopped = st < 0 || interrupted, code = 0;
  if (stopped) { /* what was written up to the last good step stays, well-formed; said on stderr */
    if (st < 0) code = fail(st);
    else code = cf_cli_interrupt_code();
    if (st < 0)
      fprintf(stderr, "cofem: %s: stopped at step %ld of %ld (t = %.6g s)", scene_path, good + 1, steps, d->t + h);
    else
      fprintf(stderr, "cofem: %s: %s: stopped after step %ld of %ld (t = %.6g s)", scene_path, cf_cli_interrupt_name(),
              good, steps, d->t);
  }
  int kept_csv = !bad_close && rename(csv_tmp, csv_path) == 0;
  if (!kept_csv) remove(csv_tmp);
  if (stopped) fprintf(stderr, "; kept %s (to step %ld)%s", kept_csv ? csv_path : "no CSV", good, nframe ? " and" : "");
  for (int k = 0; k < s.nflex && nframe > 0; k++) {
    char pvd[CF_MBS_PATH_MAX + 80];
    snprintf(pvd, sizeof pvd, "%s/%s.pvd", out_dir, m->body_name[s.flex_body[k]]);
    if (cf_pvd_write(pvd, nframe, (const char* const*)frame_files + (size_t)k * nframe_cap, frame_t) < 0)
      fprintf(stderr, "cofem: warning: %s\n", cf_last_error());
    else if (stopped)
      fprintf(stderr, " %s (%d frames)", pvd, nframe);
    else
      printf("  wrote %s (%d frames of the deformed mesh)\n", pvd, nframe);
  }
  if (stopped) {
    fprintf(stderr, "\n");
    free_frames(frame_files, frame_t, nframe_cap * s.nflex);
    cf_mbs_data_free(d);
    cf_mbs_model_free(m);
    cf_mbs_scene_free(&s);
    return code;
  }
  free_frames(frame_files, frame_t, nframe_cap * s.nflex);
  long done = d->steps;
  printf("done: %ld steps, %.4g s simulated in %.4g s wall: %.1fx real time, %.4f ms/step\n", done, d->t, wall,
         wall > 0 ? d->t / wall : INFINITY, 1e3 * wall / (double)(done ? done : 1));
  if (!s.kinematic) {
    double T, V;
    cf_mbs_energy(m, d, &T, &V);
    printf("  Newton iterations per step: mean %.2f, max %d\n", (double)d->iters_total / (double)(done ? done : 1),
           d->iters_max);
    int conservative = m->ndriver == 0;
    for (int k = 0; k < s.nflex; k++) { /* loads at nodes of flexible bodies, Rayleigh damping of FE bodies */
      int ib = cf_mbs_modal_index(m, s.flex_body[k]), fe = cf_mbs_fe_index(m, s.flex_body[k]);
      if (ib >= 0 && s.def.modal[ib].nload > 0) conservative = 0;
      if (fe >= 0 && (s.def.fe[cf_mbs_def_fe_index(&s.def, s.flex_body[k])].nload > 0 ||
                      cf_mbs_fe_model(m, fe)->def.rayleigh_alpha > 0 || cf_mbs_fe_model(m, fe)->def.rayleigh_beta > 0))
        conservative = 0;
    }
    for (int e = 0; e < m->nforce; e++) {
      const cfMbsForce* f = &m->force[e];
      if (f->type == CF_MBS_POINT_FORCE || f->type == CF_MBS_TORQUE || f->c > 0 || f->has_actuator) conservative = 0;
    }
    printf("  energy: initial %.9g J, final %.9g J, largest deviation %.3g J (%.3g%%)%s\n", T0 + V0, T + V, e_dev,
           100 * e_dev / fmax(fabs(T0 + V0), fmax(fabs(T0), 1e-300)),
           conservative ? "" : " (not conserved: drivers, dampers, actuators or loads do work)");
  }
  printf("  largest constraint violation after a step: position %.2e, velocity %.2e, acceleration %.2e\n", worst[0],
         worst[1], worst[2]);
  printf("  time per step [ms]: constraints %.4f, forces %.4f, assemble %.4f, factor %.4f, solve %.4f\n",
         1e3 * d->timer[CF_MBS_STAGE_CONSTRAINTS] / (double)(done ? done : 1),
         1e3 * d->timer[CF_MBS_STAGE_FORCES] / (double)(done ? done : 1),
         1e3 * d->timer[CF_MBS_STAGE_ASSEMBLE] / (double)(done ? done : 1),
         1e3 * d->timer[CF_MBS_STAGE_FACTOR] / (double)(done ? done : 1),
         1e3 * d->timer[CF_MBS_STAGE_SOLVE] / (double)(done ? done : 1));
  if (d->warning[CF_MBS_WARN_VEL_PROJECTION] || d->warning[CF_MBS_WARN_ACC_PROJECTION])
    fprintf(stderr, "cofem: warning: %s: projections not converged within solver.proj_iter = %d iterations: velocity "
            "%d times, acceleration %d times (residuals left above tol_phi %.1e; the largest after a step: velocity "
            "%.2e, acceleration %.2e)\n", scene_path, m->opt.proj_iter, d->warning[CF_MBS_WARN_VEL_PROJECTION],
            d->warning[CF_MBS_WARN_ACC_PROJECTION], m->opt.tol_phi, worst[1], worst[2]);
  printf("  warnings: %d velocity and %d acceleration projections not converged\n",
         d->warning[CF_MBS_WARN_VEL_PROJECTION], d->warning[CF_MBS_WARN_ACC_PROJECTION]);
  printf("  wrote %s\n", csv_path);
  cf_mbs_data_free(d);
  cf_mbs_model_free(m);
  cf_mbs_scene_free(&s);
  return 0;
}
