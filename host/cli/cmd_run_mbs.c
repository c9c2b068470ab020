#define _POSIX_C_SOURCE 200809L
/* `cofem run SCENE` for mechanism scenes: the tool dispatches here when
 * cf_mbs_scene_is_mechanism(SCENE). Options as `cofem run`: --steps N, --end T, --out DIR, --quiet
 * (--cold and --precond X are accepted with a warning that they have no effect; mechanisms run on
 * the CPU with CHOLMOD).
 * Prints the model, a progress line, and a summary (real-time ratio, Newton iterations, constraint
 * violation, energy); writes DIR/mbs.csv. Exit status: 0, 1 error, 2 usage. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli_run.h"
#include "cli/commands.h"
#include "cofem/cuda.h"
#include "cofem/fem.h"
#include "cofem/output.h"
#include "cofem/mbs_fe.h"
#include "cofem/mbs_modal.h"
#include "cofem/mbs_semirecursive.h"
#include "cofem/modal_part.h"
#include "cofem/output.h"
#include "mbs/mbs_internal.h"

static int usage(void) {
  fprintf(stderr, "usage: cofem run MECHANISM.json [--steps N] [--end T] [--out DIR] [--static] [--quiet]\n");
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

/* the CSV's row of step k (the library's text: Python's Mechanism.run(out=) writes the same) */
static void write_row(FILE* csv, const cfMbsModel* m, const cfMbsData* d, const cfMbsScene* s, long k) {
  char small[4096];
  int need = cf_mbs_csv_row(m, d, s, k, small, (int)sizeof small);
  char* text = need < (int)sizeof small ? small : malloc((size_t)need + 1);
  if (!text) { /* out of memory: the short row marks it (cf_cli_csv_row reports the stream's errors) */
    fputs(small, csv);
    return;
  }
  if (text != small) cf_mbs_csv_row(m, d, s, k, text, need + 1);
  fputs(text, csv);
  if (text != small) free(text);
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
                     : cf_mbs_modal_write_vtu(m, d, cf_mbs_modal_index(m, s->flex_body[k]), s->flex[k]->model,
                                              &s->flex[k]->scene.mesh, path);
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

/* one mechanism run: the scene, the model, where it writes, and what the summary reports */
typedef struct MbsRun {
  const char* scene_path;
  long steps;
  long last_row;             /* the step of the CSV's last whole row */
  int out_failed;            /* a step ran but its row or frames could not be written (the error set) */
  int quiet;
  cfMbsScene s;
  cfMbsModel* m;
  cfMbsData* d;
  cfMbsSr* sr;               /* "solver.formulation": "semi_recursive": the relative-coordinate dynamics,
                                which writes its state into d every step */
  cfMbsGroupKin* gk;         /* "structural_groups": the kinematic analysis group by group */
  char out_dir[CF_MBS_PATH_MAX];
  int vtu_every, removed;
  cfCliOut od;
  cfCliCsv csv;
  int nframe_cap, nframe;
  char** frame_files; /* [body][frame], nframe_cap frames per flexible body */
  double* frame_t;
  double T0, V0, e_dev; /* the initial energies, the largest deviation from their sum */
  double worst[3];      /* the largest position, velocity, acceleration violations */
  char threads_note[160]; /* cf_cli_mbs_threads: one thread on small FE bodies */
  int static_start;       /* --static: the run starts from static equilibrium */
  unsigned long long* bus0; /* [2 nfe] each GPU FE body's bus bytes (to, from the device) before the
                               first step: the per-step figure leaves the model's upload out */
} MbsRun;

static void mbs_free(MbsRun* r) {
  free(r->bus0);
  free_frames(r->frame_files, r->frame_t, r->nframe_cap * r->s.nflex);
  cf_mbs_sr_free(r->sr);
  cf_mbs_group_kin_free(r->gk);
  cf_mbs_data_free(r->d);
  cf_mbs_model_free(r->m);
  cf_mbs_scene_free(&r->s);
}

/* the output budget, before anything is written: CSV rows and the flexible bodies' frames */
static int mbs_check_output(const MbsRun* r, long max_output) {
  const cfMbsScene* s = &r->s;
  long steps = r->steps;
  int ncol = 9;
  for (int c = 0; c < s->nchannel; c++) ncol += cf_mbs_channel_size(&s->channel[c]);
  double rows = (double)steps / (s->every > 0 ? s->every : 1) + 1, frames = 0, frame = 0;
  for (int k = 0; k < s->nflex; k++) frame += cf_vtu_size_bound(&s->flex[k]->scene.mesh, 1, 1);
  if (s->nflex) frames = floor((double)steps / r->vtu_every) + 1;
  double total = rows * 24.0 * ncol + frames * (frame + 110.0 * s->nflex);
  char what[160], f[32];
  cf_cli_human_bytes(frame, f, sizeof f);
  snprintf(what, sizeof what, "%.0f CSV rows of %d columns, %.0f frames of %s", rows, ncol, frames, f);
  return cf_cli_output_budget(total, (double)max_output, r->out_dir, what);
}

/* load the scene, build the model with the options applied, check the output budget: 0 or the
 * exit status */
static int mbs_setup(MbsRun* r, const cfCliRunOpts* o) {
  cfMbsScene* s = &r->s;
  const char* scene_path = r->scene_path;
  int st = cf_mbs_scene_load(scene_path, s);
  if (st < 0) return fail(st);
  for (int k = 0; k < s->nwarning; k++) fprintf(stderr, "cofem: warning: %s\n", s->warning[k]);
  /* options of the FE run that nothing in a mechanism reads: said, not silently dropped */
  if (o->precond >= 0)
    fprintf(stderr, "cofem: warning: --precond %s has no effect on a mechanism (%s): a corotational FE body's PCG takes "
            "the \"preconditioner\" of its \"flexible\" entry or its FE scene's \"solver.preconditioner\"\n",
            cf_cli_run_preconds[o->precond], scene_path);
  if (o->cold)
    fprintf(stderr, "cofem: warning: --cold has no effect on a mechanism (%s): a corotational FE body's PCG starts as "
            "its FE scene's \"solver.warm_start\" says\n", scene_path);
  if (o->coupling >= 0) { /* --coupling: the scene's "solver.coupling" */
    int ncorot = 0;
    for (int i = 0; i < s->def.nfe; i++) ncorot += s->def.fe[i].corotational;
    if (!ncorot)
      fprintf(stderr, "cofem: warning: --coupling %s: %s has no corotational FE body, whose coupling it sets\n",
              cf_cli_run_couplings[o->coupling], scene_path);
    cf_mbs_scene_set_coupling(s, o->coupling);
  }
  if ((st = cf_mbs_scene_set_backend(s, o->backend)) < 0) {
    cf_mbs_scene_free(s);
    return fail(st);
  }
  if (o->t_end > 0) s->t_end = o->t_end;
  cf_cli_mbs_threads(s, r->threads_note, sizeof r->threads_note);
  st = cf_mbs_model_create(&s->def, &r->m);
  if (st < 0) {
    char prefix[CF_MBS_PATH_MAX + 4];
    snprintf(prefix, sizeof prefix, "%s: ", scene_path);
    st = cf_mbs__rethrow(st, prefix);
    mbs_free(r);
    return fail(st);
  }
  st = cf_mbs_data_create(r->m, &r->d);
  if (st < 0) { mbs_free(r); return fail(st); }
  if (s->formulation == CF_MBS_SEMI_RECURSIVE && (st = cf_mbs_sr_create(r->m, r->d, &r->sr)) < 0) {
    char prefix[CF_MBS_PATH_MAX + 4];
    snprintf(prefix, sizeof prefix, "%s: ", scene_path);
    st = cf_mbs__rethrow(st, prefix);
    mbs_free(r);
    return fail(st);
  }
  if (s->formulation == CF_MBS_STRUCTURAL_GROUPS && r->m->ndof == 0 && (st = cf_mbs_group_kin_create(r->m, &r->gk)) < 0) {
    mbs_free(r);
    return fail(st);
  }
  const cfMbsModel* m = r->m;
  double h = m->opt.dt;
  r->steps = o->steps >= 0 ? o->steps : (long)ceil(s->t_end / h - 1e-9);
  if (s->kinematic && m->ndof != 0) {
    st = cf_error(CF_ERR_SCENE, "%s: \"solver.analysis\" is kinematic, but the mechanism has %d degree%s of freedom left "
                  "(every motion must be driven)", scene_path, m->ndof, m->ndof == 1 ? "" : "s");
    mbs_free(r);
    return fail(st);
  }
  if (o->static_start) { /* --static: from static equilibrium at t = 0, the loads and drivers as they are then */
    if (s->kinematic || r->sr || r->gk)
      st = cf_error(CF_ERR_ARG, "%s: --static: the scene's %s has no static start (global dynamics only)", scene_path,
                    s->kinematic ? "kinematic analysis" : "semi-recursive formulation");
    else {
      cfMbsStaticOptions so;
      cf_mbs_static_defaults(&so);
      st = cf_mbs_static(r->m, r->d, &so, NULL, NULL);
      if (st < 0) st = cf_error(st, "%s: --static: %s", scene_path, cf_last_error());
      else if (st > 0) fprintf(stderr, "cofem: warning: %s: --static: %s\n", scene_path, cf_last_error());
    }
    if (st < 0) {
      mbs_free(r);
      return fail(st);
    }
    r->static_start = 1;
  }
  if (o->out_arg) snprintf(r->out_dir, sizeof r->out_dir, "%s", o->out_arg);
  else if (s->out_dir[0]) snprintf(r->out_dir, sizeof r->out_dir, "%s", s->out_dir);
  else {
    const char* base = strrchr(scene_path, '/');
    base = base ? base + 1 : scene_path;
    snprintf(r->out_dir, sizeof r->out_dir, "out/%.*s", (int)strcspn(base, "."), base);
  }
  r->vtu_every = s->vtu_every > 0 ? s->vtu_every : (int)(r->steps / 100 > 0 ? r->steps / 100 : 1);
  st = mbs_check_output(r, o->max_output);
  if (st < 0) { mbs_free(r); return fail(st); }
  return 0;
}

/* the folder: made now (nothing before this point writes); the previous run's files of this
 * scene's kinds removed (mbs.csv, BODY.pvd, BODY_NNNN.vtu), a foreign file with such a name
 * refused; the CSV opened with its header: 0 or the exit status */
static int mbs_prepare_output(MbsRun* r) {
  const cfMbsScene* s = &r->s;
  const cfMbsModel* m = r->m;
  int st = cf_cli_out_make(&r->od, r->out_dir);
  if (st >= 0) {
    cfCliOutPattern pat[1 + 2 * CF_MBS_MAX_FLEX];
    char pre[CF_MBS_MAX_FLEX][CF_MBS_NAME_MAX + 2];
    int np = 0;
    pat[np++] = (cfCliOutPattern){"", "mbs.csv", 0, "", "step,t,newton_iters,"};
    for (int k = 0; k < s->nflex && k < CF_MBS_MAX_FLEX; k++) {
      snprintf(pre[k], sizeof pre[k], "%s_", m->body_name[s->flex_body[k]]);
      pat[np++] = (cfCliOutPattern){"", pre[k], 4, ".vtu", NULL};
      pat[np++] = (cfCliOutPattern){"", m->body_name[s->flex_body[k]], 0, ".pvd", NULL};
    }
    st = cf_cli_out_clean(&r->od, pat, np, &r->removed);
  }
  cf_cli_csv_names(&r->csv, r->out_dir, "mbs.csv");
  if (st >= 0) st = cf_cli_csv_open(&r->csv);
  if (st < 0) {
    cf_cli_out_abandon(&r->od, NULL);
    mbs_free(r);
    return fail(st);
  }
  FILE* csv = r->csv.f;
  {
    int need = cf_mbs_csv_header(s, NULL, 0);
    char* head = malloc((size_t)need + 1);
    if (head) cf_mbs_csv_header(s, head, need + 1), fputs(head, csv);
    free(head);
  }
  if ((st = cf_cli_csv_row(&r->csv)) < 0) {
    remove(r->csv.tmp);
    cf_cli_out_abandon(&r->od, NULL);
    mbs_free(r);
    return fail(st);
  }
  return 0;
}

static void mbs_print_header(const MbsRun* r) {
  const cfMbsScene* s = &r->s;
  const cfMbsModel* m = r->m;
  double h = m->opt.dt;
  long steps = r->steps;
  int nvirt = 0, nblk = 0;
  for (int b = 0; b < m->nbody; b++) nvirt += m->body_virtual[b], nblk += m->body_modal[b] == 2;
  for (int i = 0; i < m->nfe; i++) nblk += (cf_mbs_fe_model(m, i)->nnode + 3) / 4 - 1; /* an FE body's node blocks */
  printf("cofem run %s (mechanism)\n", r->scene_path);
  printf("  %d bodies (%d virtual, %d flexible), %d joints, %d drivers, %d forces; %d coordinates, %d equations "
         "(rank %d, %d redundant), %d degree%s of freedom\n",
         m->nbody - nblk, nvirt, m->nmodal + m->nfe, m->njoint, m->ndriver, m->nforce, m->nq, m->ncon, m->rank, m->nredundant, m->ndof,
         m->ndof == 1 ? "" : "s");
  if (r->static_start) printf("  start: static equilibrium at t = 0 (--static)\n");
  if (r->gk) {
    const cfMbsTopology* t = cf_mbs_group_kin_topology(r->gk);
    printf("  kinematic analysis by structural groups (paper 001): dt %g s, %ld steps; %d groups, each by its own "
           "Gauss-Newton, velocity and acceleration solves (cofem info lists them)\n", h, steps, t->ngroup);
  } else if (s->kinematic)
    printf("  kinematic analysis: dt %g s, %ld steps; position by Newton, velocity and acceleration by projection\n", h, steps);
  else if (r->sr) {
    const cfMbsTopology* t = cf_mbs_sr_topology(r->sr);
    printf("  dynamics: semi-recursive (relative coordinates), index-3 augmented Lagrangian, trapezoidal rule, "
           "projections; dt %g s, %ld steps; %d relative coordinates, %d cut joint%s (%d closure equations), "
           "%d floating base%s; penalty %.3g; Newton tol |dz| %.1e, |Phi| %.1e; dense Cholesky\n",
           h, steps, t->nz, t->ncut, t->ncut == 1 ? "" : "s", t->ncut_eq, t->nfloating, t->nfloating == 1 ? "" : "s",
           cf_mbs_sr_penalty(r->sr), m->opt.tol_dq, m->opt.tol_phi);
  } else
    printf("  dynamics: index-3 augmented Lagrangian, %s, projections; dt %g s, %ld steps; penalty %.3g; "
           "Newton tol |dq| %.1e, |Phi| %.1e; CHOLMOD %s (%d nonzeros)\n",
           m->opt.rho_inf < 1 ? "generalized-alpha" : "trapezoidal rule", h, steps, m->alpha, m->opt.tol_dq, m->opt.tol_phi,
           m->nfe ? "supernodal" : "simplicial", m->nnz);
  if (m->opt.rho_inf < 1) printf("  generalized-alpha: rho_inf %g\n", m->opt.rho_inf);
  fputs(r->threads_note, stdout);
  if (m->assembly_shift > 1e-9) printf("  initial assembly moved the given poses by up to %.3g (coordinates)\n", m->assembly_shift);
  for (int k = 0; k < s->nflex; k++) {
    const cfModalPart* p = s->flex[k];
    if (cf_mbs_fe_index(m, s->flex_body[k]) >= 0) {
      const cfMbsFeDef* fe = &s->def.fe[cf_mbs_def_fe_index(&s->def, s->flex_body[k])];
      char how[256] = "";
      const int lin = fe->corotational && m->opt.coupling == CF_MBS_COUPLING_LINEAR;
      if (lin && fe->exact_factor && !fe->a0_pcg)
        snprintf(how, sizeof how, "; linear coupling: linearised once per step (twice where it turns beyond its prediction), its matrix factored each time");
      else if (lin && !fe->a0_pcg && !fe->cuda)
        snprintf(how, sizeof how, "; linear coupling: linearised once per step (twice where it turns beyond its prediction), its matrix "
                 "the rotated factor at rest (one factorisation; free motion and interface compliance by it)");
      else if (lin)
        snprintf(how, sizeof how, "; linear coupling: linearised once per step (twice where it turns beyond its prediction), its matrix by the PCG, its "
                 "interface compliance turned from rest");
      else if (fe->corotational)
        snprintf(how, sizeof how, "; its matrix %s", fe->a0_pcg ? "by the PCG" : fe->exact_factor ? "factored at every step"
                                                                                          : "factored at rest, turned with it");
      if (fe->a0_pcg)
        snprintf(how + strlen(how), sizeof how - strlen(how), " (%s, tol %.0e, %s)",
                 cf_preconditioner_name(p->model->def.preconditioner), p->model->def.pcg_tol, fe->cuda ? "on the GPU" : "on the CPU");
      printf("  flexible body '%s': %s, %d nodes, %d tets, mass %.6g kg; %s%s\n", m->body_name[s->flex_body[k]],
             p->scene.mesh_path, p->model->nnode, p->model->ntet,
             cf_mbs_fe_total_mass(m, cf_mbs_fe_index(m, s->flex_body[k])),
             !fe->corotational ? "lumped formulation: a point mass at every node, co-rotational internal forces"
             : lin ? "corotational formulation" : "corotational formulation: the co-rotational part, condensed onto its joints by the solver (Newton coupling)", how);
      continue;
    }
    int ib = cf_mbs_modal_index(m, s->flex_body[k]), nm = cf_mbs_modal_nmodes(m, ib), f0 = p->red.nrigid;
    printf("  flexible body '%s': %s, %d nodes, %d tets; %d modes (%d constraint + %d normal, %d rigid left to the frame), "
           "%.1f .. %.1f Hz; reduction %s %.3f s\n",
           m->body_name[s->flex_body[k]], p->scene.mesh_path, p->red.nnode, p->red.ntet, nm, p->red.nb, p->red.nk,
           p->red.nrigid, nm ? cf_reduction_freq_hz(&p->red, f0) : 0.0, nm ? cf_reduction_freq_hz(&p->red, f0 + nm - 1) : 0.0,
           p->from_cache ? "read from cache in" : "computed in", p->t_total);
  }
  if (r->removed) printf("  removed %d file%s of a previous run from %s\n", r->removed, r->removed == 1 ? "" : "s", r->out_dir);
}

/* cfCliRunOps.step: the step, the energy and violation records, the CSV row and frames */
static int mbs_step(void* ctx, long k) {
  MbsRun* r = ctx;
  const cfMbsScene* s = &r->s;
  const cfMbsModel* m = r->m;
  cfMbsData* d = r->d;
  int st = r->gk         ? cf_mbs_group_kin_step(m, r->gk, d)
           : s->kinematic ? cf_mbs_kinematic_step(m, d)
           : r->sr        ? cf_mbs_sr_step(m, r->sr, d)
                          : cf_mbs_step(m, d);
  if (st < 0) return st;
  if (r->sr) /* the tree joints' reactions, when a channel shows one */
    for (int c = 0; c < s->nchannel; c++)
      if (s->channel[c].what == CF_MBS_OUT_REACTION) {
        cf_mbs_sr_reactions(m, r->sr, d);
        break;
      }
  if (r->gk) { /* every equation's violation, as the global kinematic step reports it */
    double v[3];
    cf_mbs_violation(m, d, v);
  }
  if (!s->kinematic) {
    double T, V;
    cf_mbs_energy(m, d, &T, &V);
    r->e_dev = fmax(r->e_dev, fabs(T + V - r->T0 - r->V0));
  }
  r->worst[0] = fmax(r->worst[0], d->phi_max);
  r->worst[1] = fmax(r->worst[1], d->phid_max);
  r->worst[2] = fmax(r->worst[2], d->phidd_max);
  if (k % s->every == 0 || k == r->steps) { /* a failed write stops the run: the rows before it are kept */
    write_row(r->csv.f, m, d, s, k);
    if ((st = cf_cli_csv_row(&r->csv)) < 0) {
      r->out_failed = 1;
      return st;
    }
    r->last_row = k;
  }
  if (k % r->vtu_every == 0 || k == r->steps)
    st = write_frames(m, d, s, r->out_dir, r->frame_files, r->frame_t, &r->nframe, r->nframe_cap);
  if (st < 0) r->out_failed = 1;
  return st;
}

static void mbs_progress(void* ctx, long k, long steps, double el) {
  const cfMbsData* d = ((MbsRun*)ctx)->d;
  printf("  step %ld/%ld  t %.4f s  Newton %d it  |Phi| %.1e  %.1fx real time", k, steps, d->t, d->iters, d->phi_max,
         el > 0 ? d->t / el : INFINITY);
}

/* the run stopped before its first step: nothing left behind (the CSV's first row, the frames at
 * t = 0, the folder); the exit status */
static int mbs_nothing_run(MbsRun* r, int st) {
  remove(r->csv.tmp);
  for (int i = 0; r->frame_files && i < r->nframe_cap * r->s.nflex; i++)
    if (r->frame_files[i]) {
      char p[CF_MBS_PATH_MAX + CF_MBS_NAME_MAX + 20];
      snprintf(p, sizeof p, "%s/%s", r->out_dir, r->frame_files[i]);
      remove(p);
    }
  cf_cli_out_abandon(&r->od, NULL);
  int code = st < 0 ? fail(st) : cf_cli_interrupt_code();
  if (st >= 0) fprintf(stderr, "cofem: %s: %s before the first step; nothing written\n", r->scene_path, cf_cli_interrupt_name());
  return code;
}

/* the CSV and the .pvd files kept; a stopped run (error or interrupt) says on stderr where it
 * stopped and what it kept, well-formed to the last good step: 0 or the exit status */
static int mbs_keep_outputs(MbsRun* r, int st, int stopped) {
  const cfMbsModel* m = r->m;
  const cfMbsData* d = r->d;
  long good = d->steps;
  int code = 0;
  if (stopped) {
    code = st < 0 ? fail(st) : cf_cli_interrupt_code();
    if (st < 0 && r->out_failed) /* the step ran; its row or frames could not be written */
      fprintf(stderr, "cofem: %s: stopped after step %ld of %ld (t = %.6g s): its output could not be written",
              r->scene_path, good, r->steps, d->t);
    else if (st < 0)
      fprintf(stderr, "cofem: %s: stopped at step %ld of %ld (t = %.6g s)", r->scene_path, good + 1, r->steps, d->t + m->opt.dt);
    else
      fprintf(stderr, "cofem: %s: %s: stopped after step %ld of %ld (t = %.6g s)", r->scene_path, cf_cli_interrupt_name(),
              good, r->steps, d->t);
  }
  int kept_csv = cf_cli_csv_keep(&r->csv);
  if (stopped) fprintf(stderr, "; kept %s (to step %ld)%s", kept_csv ? r->csv.path : "no CSV", r->last_row, r->nframe ? " and" : "");
  for (int k = 0; k < r->s.nflex && r->nframe > 0; k++) {
    char pvd[CF_MBS_PATH_MAX + 80];
    snprintf(pvd, sizeof pvd, "%s/%s.pvd", r->out_dir, m->body_name[r->s.flex_body[k]]);
    if (cf_pvd_write(pvd, r->nframe, (const char* const*)r->frame_files + (size_t)k * r->nframe_cap, r->frame_t) < 0)
      fprintf(stderr, "cofem: warning: %s\n", cf_last_error());
    else if (stopped)
      fprintf(stderr, " %s (%d frames)", pvd, r->nframe);
    else
      printf("  wrote %s (%d frames of the deformed mesh)\n", pvd, r->nframe);
  }
  if (stopped) fprintf(stderr, "\n");
  return code;
}

/* energy: whether nothing does work on the mechanism (no drivers, dampers, actuators, loads) */
static int mbs_conservative(const MbsRun* r) {
  const cfMbsScene* s = &r->s;
  const cfMbsModel* m = r->m;
  int conservative = m->ndriver == 0;
  for (int k = 0; k < s->nflex; k++) { /* loads at nodes of flexible bodies, Rayleigh damping of FE bodies */
    int ib = cf_mbs_modal_index(m, s->flex_body[k]), fe = cf_mbs_fe_index(m, s->flex_body[k]);
    if (ib >= 0 && s->def.modal[ib].nload > 0) conservative = 0;
    if (fe >= 0 && (s->def.fe[cf_mbs_def_fe_index(&s->def, s->flex_body[k])].nload > 0 ||
                    cf_mbs_fe_model(m, fe)->def.rayleigh_alpha > 0 || cf_mbs_fe_model(m, fe)->def.rayleigh_beta > 0))
      conservative = 0;
  }
  for (int e = 0; e < m->nforce; e++) {
    const cfMbsForce* f = &m->force[e];
    if (f->type == CF_MBS_POINT_FORCE || f->type == CF_MBS_TORQUE || f->c > 0 || f->has_actuator) conservative = 0;
  }
  return conservative;
}

/* the end-of-run summary: stdout, and a warning on stderr when projections did not converge */
static void mbs_summary(const MbsRun* r, double wall) {
  const cfMbsModel* m = r->m;
  const cfMbsData* d = r->d;
  const double* worst = r->worst;
  long done = d->steps;
  printf("done: %ld steps, %.4g s simulated in %.4g s wall: %.1fx real time, %.4f ms/step\n", done, d->t, wall,
         wall > 0 ? d->t / wall : INFINITY, 1e3 * wall / (double)(done ? done : 1));
  if (!r->s.kinematic) {
    double T, V;
    cf_mbs_energy(m, d, &T, &V);
    printf("  Newton iterations per step: mean %.2f, max %d\n", (double)d->iters_total / (double)(done ? done : 1),
           d->iters_max);
    double E0 = r->T0 + r->V0;
    printf("  energy: initial %.9g J, final %.9g J, largest deviation %.3g J (%.3g%%)%s\n", E0, T + V, r->e_dev,
           100 * r->e_dev / fmax(fabs(E0), fmax(fabs(r->T0), 1e-300)),
           mbs_conservative(r) ? "" : " (not conserved: drivers, dampers, actuators or loads do work)");
  }
  for (int k = 0; k < m->nfe; k++) {
    long z = 0, it = cf_mbs_fe_pcg_iterations(m, d, k, &z);
    if (it > 0)
      printf("  FE body %d: %.1f PCG iterations per step, %.1f of them for the joints' columns\n", k,
             (double)it / (double)(done ? done : 1), (double)z / (double)(done ? done : 1));
    long ls, lc, lk, lf, li;
    cf_mbs_fe_linear_stats(m, d, k, &ls, &lc, &lk, &lf, &li);
    if (ls > 0 && (lf > 0 || lk > 0))
      printf("  FE body %d, linear coupling: %.1f PCG iterations per step for its free motion; interface columns "
             "turned from rest: %ld checked, %ld corrected by the PCG (%.1f iterations per step)\n", k,
             (double)lf / (double)ls, lc, lk, (double)li / (double)ls);
    int nrow = 0, nif = cf_mbs_fe_interface_nodes(m, d, k, &nrow);
    if (nif > 0)
      printf("  FE body %d, linear coupling: its interface, %d of its %d nodes (the node blocks of its sets) and %d joint "
             "equations: all a step reads of it beyond its own stages (docs/mbs.md, \"The linear coupling\")\n", k, nif,
             cf_mbs_fe_model(m, k)->nnode, nrow);
    unsigned long long up = 0, down = 0;
    if (cf_mbs_fe_bus_bytes(m, d, k, &up, &down) >= 0) {
      /* the steps' own traffic: the model's upload and the initial accelerations' before the first */
      const unsigned long long up0 = r->bus0 ? r->bus0[2 * k] : 0, down0 = r->bus0 ? r->bus0[2 * k + 1] : 0;
      printf("  FE body %d on the GPU: %llu bytes to the device and %llu back over the run (%llu and %llu of them "
             "before the first step: the model, the initial accelerations); the steps' %.1f kB up and %.1f kB down a "
             "step\n", k, up, down, up0, down0, (double)(up - up0) / 1e3 / (double)(done ? done : 1),
             (double)(down - down0) / 1e3 / (double)(done ? done : 1));
    } else
      cf_clear_error();
  }
  if (m->opt.coupling == CF_MBS_COUPLING_LINEAR && m->nfe > 0)
    printf("  linear coupling: %ld of %ld steps linearised twice (a part, or one of its elements, turned by more "
           "than it allows beyond its predicted rotation: 3e-4 rad free, 1e-2 clamped)\n", d->fe_twice, done);
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
            "%.2e, acceleration %.2e)\n", r->scene_path, m->opt.proj_iter, d->warning[CF_MBS_WARN_VEL_PROJECTION],
            d->warning[CF_MBS_WARN_ACC_PROJECTION], m->opt.tol_phi, worst[1], worst[2]);
  printf("  warnings: %d velocity and %d acceleration projections not converged; %d steps ended at Newton's round-off "
         "floor (|dq| stalled below %g m with the constraints held)\n", d->warning[CF_MBS_WARN_VEL_PROJECTION],
         d->warning[CF_MBS_WARN_ACC_PROJECTION], d->warning[CF_MBS_WARN_NEWTON_FLOOR], 100 * m->opt.tol_dq);
  if (d->warning[CF_MBS_WARN_ROTATED_FALLBACK])
    printf("  the rotated factor: %d steps failed with it and were taken again with the exact factor (each then "
           "kept for 50 steps; the part's stress stiffens it beyond the matrix at rest: \"factor\": \"exact\" "
           "avoids the failed tries)\n", d->warning[CF_MBS_WARN_ROTATED_FALLBACK]);
  printf("  wrote %s\n", r->csv.path);
}

int cf_cmd_run_mbs(int argc, char** argv) {
  cfCliRunOpts o;
  int i0 = (argc > 1 && !strcmp(argv[1], "run")) ? 2 : 1;
  int rc = cf_cli_run_parse(argc, argv, i0, &o); /* the options of cofem run, parsed as strictly */
  if (rc) return rc;
  if (!o.scene_path) return usage();
  g_scene = o.scene_path;
  cf_cli_catch_interrupts();
  /* --precond and --cold have no effect on a mechanism; --backend moves its corotational FE bodies
   * (cf_mbs_scene_set_backend) */
  MbsRun r = {.scene_path = o.scene_path, .quiet = o.quiet};
  if ((rc = mbs_setup(&r, &o)) != 0) return rc;
  if ((rc = mbs_prepare_output(&r)) != 0) return rc;
  mbs_print_header(&r);
  const cfMbsScene* s = &r.s;
  /* deformed meshes of the flexible bodies: DIR/<body>_NNNN.vtu frames and DIR/<body>.pvd */
  r.nframe_cap = s->nflex ? (int)(r.steps / r.vtu_every + 2) : 0;
  r.frame_files = r.nframe_cap ? calloc((size_t)(r.nframe_cap * s->nflex), sizeof(char*)) : NULL;
  r.frame_t = r.nframe_cap ? calloc((size_t)r.nframe_cap, sizeof(double)) : NULL;
  if (r.nframe_cap && (!r.frame_files || !r.frame_t)) r.nframe_cap = 0;

  cf_mbs_energy(r.m, r.d, &r.T0, &r.V0);
  cf_mbs_violation(r.m, r.d, r.worst);
  r.bus0 = r.m->nfe ? calloc(2 * (size_t)r.m->nfe, sizeof *r.bus0) : NULL;
  for (int k = 0; r.bus0 && k < r.m->nfe; k++)
    if (cf_mbs_fe_bus_bytes(r.m, r.d, k, &r.bus0[2 * k], &r.bus0[2 * k + 1]) < 0) cf_clear_error();
  write_row(r.csv.f, r.m, r.d, s, 0);
  int st = cf_cli_csv_row(&r.csv);
  if (st >= 0) st = write_frames(r.m, r.d, s, r.out_dir, r.frame_files, r.frame_t, &r.nframe, r.nframe_cap);
  double wall = 0;
  static const cfCliRunOps kOps = {mbs_step, mbs_progress};
  if (st >= 0) st = cf_cli_run_loop(&kOps, &r, r.steps, r.steps >= 100 ? r.steps / 20 : 10, r.quiet, &wall);
  st = cf_cli_csv_close(&r.csv, st);
  long good = r.d->steps; /* on an error the step left the state at the last good one */
  int stopped = st < 0 || (cf_cli_interrupted && good < r.steps);
  int code = stopped && good == 0 ? mbs_nothing_run(&r, st) : mbs_keep_outputs(&r, st, stopped);
  if (!stopped) mbs_summary(&r, wall);
  mbs_free(&r);
  return code;
}
