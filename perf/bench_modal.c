/* Modal (Craig-Bampton) bodies: reduction time and real-time ratio, for the lug and the hinge
 * (meshes/lug.msh, hinge.msh; steel E 210 GPa, nu 0.3, rho 7850; lumped mass, the model default)
 * with 6, 12 and 24 fixed-interface normal modes.
 *
 *   cofem_bench_modal [--steps N] [--dt H] [--mbs-steps N] [--mbs-dt H] [--repeat R] [--label NAME]
 *
 * Reduction: clamped at "support", interface "probe" (one node: 3 constraint modes), so the
 * basis has 9, 15, 27 modes; time best of R (default 3).
 *
 * Two runs per reduction:
 *  1. "elastic": the reduced elastic equations alone, M_r qdd + C_r qd + K_r q = B^T f(t)
 *     (orthonormal basis: diagonal; modal damping 1%), 1 kN along z at the probe ramped over
 *     1 ms, the average-acceleration Newmark rule at dt (default 1e-5 s), N steps (default
 *     100000), the probe displacement recovered from B every step. No floating frame.
 *  2. "mbs": the whole modal body in the multibody core (cf_mbs_add_modal_body, cf_mbs_step:
 *     natural-coordinate frame + modal amplitudes, mass matrix from the inertia invariants,
 *     quadratic velocity forces, K_r, modal damping 1%, gravity; trapezoidal rule, index-3
 *     augmented Lagrangian, Newton, projections). The part is a pendulum: its frame is hinged to
 *     the ground by a revolute joint about the y axis through the centroid of the "support"
 *     nodes (joints act on the frame; the reduction is clamped there, so the support does not
 *     move with the modes), the part starts horizontal (the lug's z axis turned to +x; the
 *     hinge as meshed, its arm along +x) at rest under gravity (0, 0, -9.81) and swings down;
 *     the sudden gravity load sets the modes vibrating. dt is about T1/20, T1 the first
 *     elastic period (lug 2741 Hz: 20 us; hinge 295 Hz: 150 us), overridden by --mbs-dt;
 *     N steps (default 500), best of R runs from the same initial state (cf_mbs_reset). The
 *     probe node's elastic displacement is read every step (cf_mbs_modal_node_disp).
 *
 * Printed per case: ms per step (wall clock, best run) and the real-time ratio, simulated time /
 * wall time (> 1: faster than real time); also CPU time. With --label, writes
 * perf/results/NAME/bench_modal.csv. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cofem/cofem.h"
#include "cofem/mbs_modal.h"
#include "cofem/reduce.h"

#ifndef COFEM_SOURCE_DIR
#define COFEM_SOURCE_DIR "."
#endif
#include "results_csv.h" /* after COFEM_SOURCE_DIR */
#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

static double cpu_time(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

typedef struct Row {
  const char* part;
  const char* kind;  /* "elastic" or "mbs" */
  int free_dofs, n, nb, nk, nq;
  double reduce_s, f1, dt, t_sim, wall, cpu, newton, umax, angle, setup_s;
  double stage[CF_MBS_STAGE_COUNT]; /* mbs: per-stage wall time of the best run [s] */
  long steps;
} Row;

/* 1. the reduced elastic equations alone */
static void run_elastic(const cfReduction* r, int pn, long steps, double dt, Row* row) {
  int n = r->n;
  double* g = malloc(sizeof(double) * n);
  double *q = calloc(n, sizeof(double)), *qd = calloc(n, sizeof(double)), *qdd = calloc(n, sizeof(double));
  double* Bp = malloc(sizeof(double) * 3 * n); /* probe rows of B */
  for (int j = 0; j < n; j++) {
    g[j] = 1000.0 * r->basis[(size_t)j * r->ndof + 3 * pn + 2];
    for (int a = 0; a < 3; a++) Bp[3 * j + a] = r->basis[(size_t)j * r->ndof + 3 * pn + a];
  }
  double up[3] = {0, 0, 0};
  double c0 = cpu_time(), t0 = cf_wall_time(), t = 0;
  for (long s = 0; s < steps; s++) {
    t += dt;
    double ramp = t < 1e-3 ? t / 1e-3 : 1.0;
    for (int j = 0; j < n; j++) { /* Newmark beta 1/4, gamma 1/2, diagonal modal equations */
      double w2 = r->omega2[j], cd = 2 * r->zeta[j] * sqrt(fabs(w2));
      double qp = q[j] + dt * qd[j] + 0.25 * dt * dt * qdd[j];
      double vp = qd[j] + 0.5 * dt * qdd[j];
      double a = (ramp * g[j] - cd * vp - w2 * qp) / (1 + 0.5 * dt * cd + 0.25 * dt * dt * w2);
      q[j] = qp + 0.25 * dt * dt * a;
      qd[j] = vp + 0.5 * dt * a;
      qdd[j] = a;
    }
    up[0] = up[1] = up[2] = 0;
    for (int j = 0; j < n; j++)
      for (int a = 0; a < 3; a++) up[a] += Bp[3 * j + a] * q[j];
  }
  row->wall = cf_wall_time() - t0;
  row->cpu = cpu_time() - c0;
  row->kind = "elastic";
  row->dt = dt, row->steps = steps, row->t_sim = t;
  row->umax = sqrt(up[0] * up[0] + up[1] * up[1] + up[2] * up[2]); /* at the end */
  row->newton = 0, row->nq = n, row->angle = 0, row->setup_s = 0;
  free(g); free(q); free(qd); free(qdd); free(Bp);
}

/* 2. the modal body as a pendulum in the multibody core */
static int run_mbs(const cfReduction* r, const cfMesh* mesh, const cfNodeSet* sup, int pn, int turn, long steps,
                   double dt, int repeat, Row* row) {
  double p[3] = {0, 0, 0}; /* pivot: centroid of the support nodes (mesh frame) */
  for (int k = 0; k < sup->count; k++)
    for (int a = 0; a < 3; a++) p[a] += mesh->X[3 * sup->nodes[k] + a] / sup->count;
  double ydir[3] = {0, 1, 0};
  cfMbsBodyDef fb = cf_mbs_default_body_def();
  snprintf(fb.name, sizeof fb.name, "part");
  cf_mbs_axis_angle(ydir, turn ? M_PI / 2 : 0.0, fb.rot); /* lug: z -> +x */
  for (int i = 0; i < 3; i++) fb.pos[i] = -(fb.rot[3 * i] * p[0] + fb.rot[3 * i + 1] * p[1] + fb.rot[3 * i + 2] * p[2]);
  cfMbsDef def;
  cf_mbs_def_init(&def);
  def.opt.dt = dt;
  def.opt.gravity[2] = -9.81;
  cfMbsModalDef md = cf_mbs_default_modal_def();
  md.red = r, md.X = mesh->X;
  int st = cf_mbs_add_modal_body(&def, &fb, &md);
  cfMbsJointDef j = cf_mbs_default_joint_def();
  snprintf(j.name, sizeof j.name, "pivot");
  j.type = CF_MBS_REVOLUTE, j.body1 = CF_MBS_GROUND, j.body2 = st;
  memcpy(j.axis, ydir, sizeof ydir); /* point: the global origin, where the pivot is at t = 0 */
  if (st >= 0) st = cf_mbs_add_joint(&def, &j);
  cfMbsModel* m = NULL;
  cfMbsData* d = NULL;
  double t0 = cf_wall_time();
  if (st >= 0) st = cf_mbs_model_create(&def, &m);
  if (st >= 0) st = cf_mbs_data_create(m, &d);
  row->setup_s = cf_wall_time() - t0;
  row->wall = row->cpu = INFINITY;
  for (int k = 0; k < repeat && st >= 0; k++) {
    st = cf_mbs_reset(m, d);
    double umax = 0, c0 = cpu_time(), w0 = cf_wall_time();
    long its0 = d->iters_total;
    for (long s = 0; s < steps && st >= 0; s++) {
      st = cf_mbs_step(m, d);
      double u[3];
      cf_mbs_modal_node_disp(m, d, 0, pn, u);
      umax = fmax(umax, sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]));
    }
    double w = cf_wall_time() - w0, c = cpu_time() - c0;
    if (st >= 0 && w < row->wall) {
      row->wall = w, row->cpu = c;
      row->newton = (double)(d->iters_total - its0) / (double)steps;
      row->umax = umax;
      row->angle = cf_mbs_joint_angle(m, d, 0);
      row->t_sim = d->t;
      memcpy(row->stage, d->timer, sizeof row->stage);
      if (d->phi_max > 1e-8) fprintf(stderr, "warning: constraint violation %.2e after the run\n", d->phi_max);
    }
  }
  if (st >= 0) row->nq = m->nq;
  row->kind = "mbs";
  row->dt = dt, row->steps = steps;
  cf_mbs_data_free(d);
  cf_mbs_model_free(m);
  cf_mbs_def_free(&def);
  return st;
}

int main(int argc, char** argv) {
  long steps = 100000, mbs_steps = 500;
  double dt = 1e-5, mbs_dt = 0;
  int repeat = 3;
  const char* label = NULL;
  for (int i = 1; i < argc; i++) {
    /* strict values (cf_parse_*, cofem/status.h): the whole text, in range */
    const char* a = argv[i];
    const char* v = i + 1 < argc ? argv[++i] : NULL;
    int st = CF_OK;
    if (v && !strcmp(a, "--steps")) st = cf_parse_long(a, v, 1, 1000000000L, &steps);
    else if (v && !strcmp(a, "--dt")) st = cf_parse_double(a, v, 1e-12, 1.0, &dt);
    else if (v && !strcmp(a, "--mbs-steps")) st = cf_parse_long(a, v, 1, 1000000000L, &mbs_steps);
    else if (v && !strcmp(a, "--mbs-dt")) st = cf_parse_double(a, v, 0, 1.0, &mbs_dt);
    else if (v && !strcmp(a, "--repeat")) st = cf_parse_int(a, v, 1, 100000, &repeat);
    else if (v && !strcmp(a, "--label")) label = v;
    else {
      fprintf(stderr, "usage: cofem_bench_modal [--steps N] [--dt H] [--mbs-steps N] [--mbs-dt H] [--repeat R] "
                      "[--label NAME]\n");
      return 2;
    }
    if (st < 0) {
      fprintf(stderr, "cofem_bench_modal: %s\n", cf_last_error());
      return 2;
    }
  }
  if (repeat < 1) repeat = 1;
  if (steps < 1 || mbs_steps < 1 || !(dt > 0) || mbs_dt < 0) {
    fprintf(stderr, "cofem_bench_modal: steps and dt must be positive\n");
    return 2;
  }
  const char* parts[2] = {"lug", "hinge"};
  const double part_dt[2] = {2e-5, 1.5e-4}; /* about T1/20 */
  const int nms[3] = {6, 12, 24};
  Row rows[12];
  int nrow = 0;
  for (int ip = 0; ip < 2; ip++) {
    char path[600];
    snprintf(path, sizeof path, "%s/meshes/%s.msh", COFEM_SOURCE_DIR, parts[ip]);
    cfMesh mesh;
    if (cf_mesh_read(path, &mesh) < 0) { fprintf(stderr, "%s\n", cf_last_error()); return 1; }
    cfModelDef def = cf_default_model_def();
    cfModel* m;
    if (cf_model_create(&mesh, &def, &m) < 0) { fprintf(stderr, "%s\n", cf_last_error()); return 1; }
    const cfNodeSet* sup = cf_mesh_find_nset(&mesh, "support");
    const cfNodeSet* probe = cf_mesh_find_nset(&mesh, "probe");
    if (!sup || !probe) { fprintf(stderr, "%s: no support/probe set\n", path); return 1; }
    cf_model_fix_nodes(m, sup->nodes, sup->count, 7);
    int pn = probe->nodes[0];
    for (int c = 0; c < 3; c++) {
      cfReduceOptions o = cf_default_reduce_options();
      o.nmodes = nms[c];
      cfReduction r;
      double best = 1e30;
      for (int rep = 0; rep < repeat; rep++) {
        double t0 = cf_wall_time();
        if (cf_reduce(m, probe->nodes, probe->count, &o, &r) < 0) { fprintf(stderr, "%s\n", cf_last_error()); return 1; }
        best = fmin(best, cf_wall_time() - t0);
        if (rep < repeat - 1) cf_reduction_free(&r);
      }
      Row base = {.part = parts[ip], .kind = "", .free_dofs = m->ndof - m->nfixed, .n = r.n, .nb = r.nb, .nk = r.nk,
                  .reduce_s = best, .f1 = cf_reduction_freq_hz(&r, 0)};
      Row* re = &rows[nrow++];
      *re = base;
      run_elastic(&r, pn, steps, dt, re);
      Row* rm = &rows[nrow++];
      *rm = base;
      if (run_mbs(&r, &mesh, sup, pn, ip == 0, mbs_steps, mbs_dt > 0 ? mbs_dt : part_dt[ip], repeat, rm) < 0) {
        fprintf(stderr, "%s, %d modes: multibody run: %s\n", parts[ip], nms[c], cf_last_error());
        return 1;
      }
      cf_reduction_free(&r);
    }
    cf_model_free(m);
    cf_mesh_free(&mesh);
  }

  printf("Craig-Bampton reduction (clamped at support, interface probe) and simulation, best of %d\n\n", repeat);
  printf("| part | free DOFs | modes (constraint + normal) | reduction [s] | first freq [Hz] |\n|---|---:|---:|---:|---:|\n");
  for (int i = 0; i < nrow; i += 2)
    printf("| %s | %d | %d (%d + %d) | %.3f | %.1f |\n", rows[i].part, rows[i].free_dofs, rows[i].n, rows[i].nb,
           rows[i].nk, rows[i].reduce_s, rows[i].f1);
  printf("\nmodal body in the multibody core (pendulum about the support, gravity; frame 12 + modes coordinates):\n\n");
  printf("| part | modes | coordinates | dt [s] | steps | setup [ms] | ms/step | real-time ratio | CPU ms/step | Newton it/step "
         "| swing [deg] | max probe elastic |u| [m] |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (int i = 1; i < nrow; i += 2) {
    const Row* r = &rows[i];
    printf("| %s | %d (%d + %d) | %d | %.3g | %ld | %.2f | %.3f | %.3g | %.3f | %.2f | %.1f | %.3e |\n", r->part, r->n, r->nb,
           r->nk, r->nq, r->dt, r->steps, 1e3 * r->setup_s, 1e3 * r->wall / r->steps, r->t_sim / r->wall, 1e3 * r->cpu / r->steps,
           r->newton, r->angle * 180 / M_PI, r->umax);
  }
  printf("\nper step [ms] (cf_mbs_step's stages; the modal mass and forces are in assemble and forces):\n\n");
  printf("| part | modes | constraints | forces | assemble | factor | solve |\n|---|---:|---:|---:|---:|---:|---:|\n");
  for (int i = 1; i < nrow; i += 2) {
    const Row* r = &rows[i];
    printf("| %s | %d |", r->part, r->n);
    for (int k = 0; k < CF_MBS_STAGE_COUNT; k++) printf(" %.4f |", 1e3 * r->stage[k] / r->steps);
    printf("\n");
  }
  printf("\nreduced elastic equations alone (no frame; Newmark, 1 kN at the probe):\n\n");
  printf("| part | modes | dt [s] | steps | us/step | real-time ratio | probe |u| at end [m] |\n|---|---:|---:|---:|---:|---:|---:|\n");
  for (int i = 0; i < nrow; i += 2) {
    const Row* r = &rows[i];
    printf("| %s | %d | %.3g | %ld | %.3f | %.3g | %.4e |\n", r->part, r->n, r->dt, r->steps, 1e6 * r->wall / r->steps,
           r->t_sim / r->wall, r->umax);
  }
  if (label) {
    char path[700];
    FILE* f = open_results_csv(label, "bench_modal.csv", path, sizeof path);
    if (!f) return 1;
    fprintf(f, "part,run,free_dofs,modes,constraint_modes,normal_modes,reduction_s,first_hz,coordinates,dt_s,steps,sim_s,"
               "setup_s,wall_s,cpu_s,ms_per_step,realtime_ratio,newton_per_step,swing_deg,probe_u_m,constraints_ms,forces_ms,"
               "assemble_ms,factor_ms,solve_ms\n");
    for (int i = 0; i < nrow; i++) {
      const Row* r = &rows[i];
      fprintf(f, "%s,%s,%d,%d,%d,%d,%.4g,%.6g,%d,%.4g,%ld,%.6g,%.4g,%.6g,%.6g,%.5g,%.4g,%.3f,%.3f,%.4e", r->part, r->kind,
              r->free_dofs, r->n, r->nb, r->nk, r->reduce_s, r->f1, r->nq, r->dt, r->steps, r->t_sim, r->setup_s, r->wall,
              r->cpu, 1e3 * r->wall / r->steps, r->t_sim / r->wall, r->newton, r->angle * 180 / M_PI, r->umax);
      for (int k = 0; k < CF_MBS_STAGE_COUNT; k++) fprintf(f, ",%.5g", 1e3 * r->stage[k] / r->steps);
      fprintf(f, "\n");
    }
    fclose(f);
    printf("\nwrote %s\n", path);
  }
  return 0;
}
