/* Global vs semi-recursive (topological) formulation, rigid bodies (issue 29):
 *   cofem_bench_topo [--repeat N] [--label NAME] [--quick] [--only PREFIX]
 * Both formulations of the same model, in the same process, one after the other:
 *  - an N-link pendulum chain (bars of 1 m, 1 kg, revolute joints about z, released horizontal),
 *    N = 1 .. 256, dt 1 ms, 1 s (0.2 s above 64): an open tree, no closure equations;
 *  - the double four-bar of paper 000 (scenes/mbs/double_fourbar.json, dt 10 ms, 5 s; their Table 2,
 *    MATLAB, rigid: global 0.91 s, topological 4.85 s);
 *  - paper 001's scalable four-bar linkage: a crank of 2 and k RRR dyads, all other lengths 6, the crank
 *    driven at 1 rad/s, gravity, dt 10 ms, 5 s: one closure loop per dyad;
 *  - a vehicle-like tree of 29 bodies: a floating chassis and 4 double-wishbone suspensions (lower and
 *    upper arm, upright, wheel, tie rod, damper cylinder and piston), spring-dampers, a tyre spring
 *    from each wheel centre to the ground, dt 1 ms, 1 s; and the same with its 8 arms as modal bodies
 *    (one free-free steel bar 0.3 x 0.04 x 0.03 m, 4 flexible modes, jointed at frame points: paper 000's
 *    vehicle with flexible arms, Table 7); and again with the arms jointed through interface points as paper
 *    000's Craig-Bampton arms are (vehicle_29_points: per arm length, 0.35 and 0.25 m, a free-free reduction with
 *    one rigid (RBE2) interface point at each end face, 6 flexible modes; the chassis pivots at the inner points,
 *    the ball joints to the upright at the outer ones).
 * Printed per case: the coordinates of each formulation (natural nq, relative nz, and the closure
 * equations), the fastest of N runs' CPU time per step (process CPU time) of each, the ratio, the
 * real-time ratio, the Newton iterations per step; and the largest difference of the bodies' centres of
 * mass between the two at the end (the check that both ran the same mechanism). Then the largest
 * stable dt of each (of 1, 2, 5, 10, 20, 50 ms: every step converges and the energy never rises by
 * more than 1%) for the 8-link chain, the double four-bar and the vehicle, with the real-time ratio
 * there. Last, the kinematic analysis of the scalable linkage, k up to 46 (the size of paper 001's Table
 * 1): the global kinematic step vs the one by structural groups (cofem/mbs_topology.h). Every number
 * is measured in this run. With --label: perf/results/<label>/bench_topo.csv. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cofem/fem.h"
#include "cofem/mbs.h"
#include "cofem/mbs_semirecursive.h"
#include "cofem/mbs_modal.h"
#include "cofem/mbs_topology.h"
#include "cofem/mesh_box.h"
#include "cofem/status.h"
#include "results_csv.h"

static double cpu_time(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

/* ---- mechanisms ---- */
static int add_bar(cfMbsDef* def, const char* name, double L, double m, const double p0[3], const double p1[3]) {
  cfMbsBodyDef b = cf_mbs_default_body_def();
  snprintf(b.name, sizeof b.name, "%s", name);
  double d[3] = {p1[0] - p0[0], p1[1] - p0[1], p1[2] - p0[2]};
  double ang = atan2(d[1], d[0]), z[3] = {0, 0, 1};
  b.mass = m;
  b.com[0] = L / 2;
  b.inertia[0] = 1e-4 * m, b.inertia[1] = b.inertia[2] = m * L * L / 12;
  memcpy(b.pos, p0, sizeof b.pos);
  cf_mbs_axis_angle(z, ang, b.rot);
  return cf_mbs_add_body(def, &b);
}

static int add_box(cfMbsDef* def, const char* name, double m, double x, double y, double z, double I) {
  cfMbsBodyDef b = cf_mbs_default_body_def();
  snprintf(b.name, sizeof b.name, "%s", name);
  b.mass = m;
  b.inertia[0] = b.inertia[1] = b.inertia[2] = I;
  b.pos[0] = x, b.pos[1] = y, b.pos[2] = z;
  return cf_mbs_add_body(def, &b);
}

static void add_joint_mp(cfMbsDef* def, const char* name, int type, int b1, int b2, double x, double y, double z,
                         const double* axis, const double* axis2, int mp1, int mp2) {
  cfMbsJointDef j = cf_mbs_default_joint_def();
  snprintf(j.name, sizeof j.name, "%s", name);
  j.type = type, j.body1 = b1, j.body2 = b2;
  j.modal_point1 = mp1, j.modal_point2 = mp2;
  j.point[0] = x, j.point[1] = y, j.point[2] = z;
  if (axis) memcpy(j.axis, axis, sizeof j.axis);
  if (axis2) memcpy(j.axis2, axis2, sizeof j.axis2);
  cf_mbs_add_joint(def, &j);
}

static void add_joint(cfMbsDef* def, const char* name, int type, int b1, int b2, double x, double y, double z,
                      const double* axis, const double* axis2) {
  add_joint_mp(def, name, type, b1, b2, x, y, z, axis, axis2, -1, -1);
}

static const double AX[3] = {1, 0, 0}, AY[3] = {0, 1, 0}, AZ[3] = {0, 0, 1};

static void make_chain(cfMbsDef* def, int n) {
  def->opt.dt = 1e-3;
  def->opt.gravity[1] = -9.81;
  for (int i = 0; i < n; i++) {
    char name[32];
    snprintf(name, sizeof name, "link%d", i);
    double p0[3] = {i, 0, 0}, p1[3] = {i + 1, 0, 0};
    int b = add_bar(def, name, 1, 1, p0, p1);
    snprintf(name, sizeof name, "J%d", i);
    add_joint(def, name, CF_MBS_REVOLUTE, i ? b - 1 : CF_MBS_GROUND, b, i, 0, 0, AZ, NULL);
  }
}

/* crank A1 (0,0) - B1 (0,2); rod B1 - C1 (6,2); rocker C1 - D1 (6,-4); dyad k: a rod from the previous
 * rocker's midpoint B_k, 6 to the right, to C_k; a rocker from C_k 6 down to the ground at D_k */
static void make_linkage(cfMbsDef* def, int k) {
  def->opt.dt = 0.01;
  def->opt.gravity[1] = -9.81;
  def->opt.redundant = 3 * (k + 1); /* planar loops of spatial revolute joints */
  double A[3] = {0, 0, 0}, B[3] = {0, 2, 0}, C[3] = {6, 2, 0}, D[3] = {6, -4, 0};
  int crank = add_bar(def, "crank", 2, 1, A, B), rod = add_bar(def, "rod0", 6, 1, B, C), rocker = add_bar(def, "rocker0", 6, 1, C, D);
  add_joint(def, "A1", CF_MBS_REVOLUTE, CF_MBS_GROUND, crank, A[0], A[1], 0, AZ, NULL);
  add_joint(def, "B1", CF_MBS_REVOLUTE, crank, rod, B[0], B[1], 0, AZ, NULL);
  add_joint(def, "C1", CF_MBS_REVOLUTE, rod, rocker, C[0], C[1], 0, AZ, NULL);
  add_joint(def, "D1", CF_MBS_REVOLUTE, CF_MBS_GROUND, rocker, D[0], D[1], 0, AZ, NULL);
  for (int i = 1; i <= k; i++) {
    double Bk[3] = {0.5 * (C[0] + D[0]), 0.5 * (C[1] + D[1]), 0}, Ck[3] = {Bk[0] + 6, Bk[1], 0}, Dk[3] = {Ck[0], Ck[1] - 6, 0};
    char n1[32], n2[32], j[32];
    snprintf(n1, sizeof n1, "rod%d", i), snprintf(n2, sizeof n2, "rocker%d", i);
    int r = add_bar(def, n1, 6, 1, Bk, Ck), q = add_bar(def, n2, 6, 1, Ck, Dk);
    snprintf(j, sizeof j, "B%d", i + 1), add_joint(def, j, CF_MBS_REVOLUTE, rocker, r, Bk[0], Bk[1], 0, AZ, NULL);
    snprintf(j, sizeof j, "C%d", i + 1), add_joint(def, j, CF_MBS_REVOLUTE, r, q, Ck[0], Ck[1], 0, AZ, NULL);
    snprintf(j, sizeof j, "D%d", i + 1), add_joint(def, j, CF_MBS_REVOLUTE, CF_MBS_GROUND, q, Dk[0], Dk[1], 0, AZ, NULL);
    rocker = q;
    memcpy(C, Ck, sizeof C), memcpy(D, Dk, sizeof D);
  }
  cfMbsDriverDef dr = cf_mbs_default_driver_def();
  snprintf(dr.name, sizeof dr.name, "crank_speed");
  dr.type = CF_MBS_DRIVE_ANGLE, dr.joint = 0;
  dr.f = cf_mbs_func_const(1.0);
  dr.f.rate = 1;
  cf_mbs_add_driver(def, &dr);
}

static void add_spring(cfMbsDef* def, const char* name, int b1, const double p1[3], int b2, const double p2[3], double k,
                       double c, double rest) {
  cfMbsForceDef f = cf_mbs_default_force_def();
  snprintf(f.name, sizeof f.name, "%s", name);
  f.type = CF_MBS_SPRING, f.body1 = b1, f.body2 = b2;
  memcpy(f.point1, p1, sizeof f.point1), memcpy(f.point2, p2, sizeof f.point2);
  f.k = k, f.c = c, f.rest = rest;
  cf_mbs_add_force(def, &f);
}

/* the modal arm: one reduction shared by the 8 arms (NULL: rigid arms) */
typedef struct ModalArm {
  const cfReduction* red;
  const cfMesh* mesh;
} ModalArm;
static ModalArm g_arm;
/* the arms with interface points at their end faces (modal points 0: inner, 1: outer), per length: [0] the lower
 * arm's 0.35 m, [1] the upper arm's 0.25 m; used when g_points */
typedef struct PointArm {
  cfMesh mesh;
  cfModel* model;
  cfReduction red;
  int ok;
} PointArm;
static PointArm g_parm[2];
static int g_points;

/* an arm from p0 towards p1 (horizontal, along +-y): a modal bar when g_arm.red is set, its frame turned
 * so that the bar's x runs from p0 to p1 and its section is centred on the line; else a rigid box */
static int add_arm(cfMbsDef* def, const char* name, double m, const double p0[3], const double p1[3], double I) {
  if (!g_arm.red && !g_points) return add_box(def, name, m, p0[0], p0[1], p0[2], I);
  const PointArm* pa = g_points ? &g_parm[fabs(p1[1] - p0[1]) > 0.3 ? 0 : 1] : NULL;
  cfMbsBodyDef b = cf_mbs_default_body_def();
  snprintf(b.name, sizeof b.name, "%s", name);
  double z[3] = {0, 0, 1}, off[3] = {0, -0.02, -0.015}, o[3];
  cf_mbs_axis_angle(z, atan2(p1[1] - p0[1], p1[0] - p0[0]), b.rot);
  for (int i = 0; i < 3; i++) o[i] = b.rot[3 * i] * off[0] + b.rot[3 * i + 1] * off[1] + b.rot[3 * i + 2] * off[2];
  for (int i = 0; i < 3; i++) b.pos[i] = p0[i] + o[i];
  cfMbsModalDef md = cf_mbs_default_modal_def();
  md.red = pa ? &pa->red : g_arm.red, md.X = pa ? pa->mesh.X : g_arm.mesh->X;
  int id = cf_mbs_add_modal_body(def, &b, &md);
  if (pa && id >= 0) {
    const cfNodeSet *in = cf_mesh_find_nset(&pa->mesh, "xmin"), *out = cf_mesh_find_nset(&pa->mesh, "xmax");
    cf_mbs_add_modal_point(def, id, "inner", in->nodes, in->count);
    cf_mbs_add_modal_point(def, id, "outer", out->nodes, out->count);
  }
  return id;
}

/* a floating chassis and four double-wishbone corners (7 bodies each): 29 bodies */
static void make_vehicle(cfMbsDef* def) {
  def->opt.dt = 1e-3;
  def->opt.gravity[2] = -9.81;
  int ch = add_box(def, "chassis", 600, 0, 0, 0.5, 200);
  for (int corner = 0; corner < 4; corner++) {
    double sx = corner & 1 ? -1 : 1, sy = corner & 2 ? -1 : 1, x = 1.2 * sx;
    char n[64];
    const char* tag[4] = {"fl", "rl", "fr", "rr"};
#define NAME(s) (snprintf(n, sizeof n, "%s_%s", s, tag[corner]), n)
    const double lo0[3] = {x, sy * 0.3, 0.2}, lo1[3] = {x, sy * 0.65, 0.2}, up0[3] = {x, sy * 0.35, 0.5}, up1[3] = {x, sy * 0.6, 0.5};
    int lo = add_arm(def, NAME("lower_arm"), 4, lo0, lo1, 0.05);
    int up = add_arm(def, NAME("upper_arm"), 3, up0, up1, 0.04);
    int ur = add_box(def, NAME("upright"), 6, x, sy * 0.62, 0.35, 0.06);
    int wh = add_box(def, NAME("wheel"), 15, x, sy * 0.75, 0.35, 0.4);
    int tr = add_box(def, NAME("tie_rod"), 1, x + 0.15, sy * 0.33, 0.35, 0.01);
    int cy = add_box(def, NAME("damper_cyl"), 1.5, x, sy * 0.45, 0.8, 0.02);
    int pi = add_box(def, NAME("damper_rod"), 1, x, sy * 0.5, 0.2, 0.01);
    int mpi = g_points ? 0 : -1, mpo = g_points ? 1 : -1; /* the arms' interface points, when they have them */
    add_joint_mp(def, NAME("lower_pivot"), CF_MBS_REVOLUTE, ch, lo, x, sy * 0.3, 0.2, AX, NULL, -1, mpi);
    add_joint_mp(def, NAME("upper_pivot"), CF_MBS_REVOLUTE, ch, up, x, sy * 0.35, 0.5, AX, NULL, -1, mpi);
    add_joint_mp(def, NAME("lower_ball"), CF_MBS_SPHERICAL, lo, ur, x, sy * 0.65, 0.2, NULL, NULL, mpo, -1);
    add_joint_mp(def, NAME("upper_ball"), CF_MBS_SPHERICAL, up, ur, x, sy * 0.6, 0.5, NULL, NULL, mpo, -1);
    add_joint(def, NAME("hub"), CF_MBS_REVOLUTE, ur, wh, x, sy * 0.75, 0.35, AY, NULL);
    add_joint(def, NAME("tie_inner"), CF_MBS_SPHERICAL, ch, tr, x + 0.15, sy * 0.33, 0.35, NULL, NULL);
    add_joint(def, NAME("tie_outer"), CF_MBS_SPHERICAL, tr, ur, x + 0.15, sy * 0.62, 0.35, NULL, NULL);
    /* the damper along the line top (x, 0.45, 0.8) - bottom (x, 0.5, 0.2) */
    double top[3] = {x, sy * 0.45, 0.8}, bot[3] = {x, sy * 0.5, 0.2}, dl[3] = {0, bot[1] - top[1], bot[2] - top[2]};
    double dn = sqrt(dl[1] * dl[1] + dl[2] * dl[2]);
    dl[1] /= dn, dl[2] /= dn;
    const double across[3] = {0, dl[2], -dl[1]}; /* perpendicular to x and to the damper line */
    add_joint(def, NAME("damper_top"), CF_MBS_UNIVERSAL, ch, cy, top[0], top[1], top[2], AX, across);
    add_joint(def, NAME("damper_slide"), CF_MBS_CYLINDRICAL, cy, pi, top[0], top[1], top[2], dl, NULL);
    add_joint(def, NAME("damper_bottom"), CF_MBS_SPHERICAL, pi, lo, bot[0], bot[1], bot[2], NULL, NULL);
    add_spring(def, NAME("spring"), ch, top, lo, bot, 3e4, 2.5e3, NAN);
    double wc[3] = {x, sy * 0.75, 0.35}, gp[3] = {x, sy * 0.75, 0.0};
    add_spring(def, NAME("tyre"), CF_MBS_GROUND, gp, wh, wc, 2e5, 5e2, 0.36);
#undef NAME
  }
}

/* ---- one formulation of one model, N runs ---- */
typedef struct Timing {
  double cpu_per_step, iters;
  int ok;
  char err[256];
} Timing;

static Timing time_formulation(const cfMbsModel* m, int semi, long steps, int repeat, double* com_end) {
  Timing t = {INFINITY, 0, 1, ""};
  for (int k = 0; k < repeat && t.ok; k++) {
    cfMbsData* d = NULL;
    cfMbsSr* sr = NULL;
    int st = cf_mbs_data_create(m, &d);
    if (st >= 0 && semi) st = cf_mbs_sr_create(m, d, &sr);
    double c0 = cpu_time();
    for (long n = 0; n < steps && st >= 0; n++) st = semi ? cf_mbs_sr_step(m, sr, d) : cf_mbs_step(m, d);
    double c = cpu_time() - c0;
    if (st < 0) {
      t.ok = 0;
      snprintf(t.err, sizeof t.err, "%s", cf_last_error());
    } else {
      t.cpu_per_step = fmin(t.cpu_per_step, c / (double)steps);
      t.iters = (double)d->iters_total / (double)steps;
      for (int b = 0; com_end && b < m->nbody; b++) cf_mbs_point(m, d, b, m->body_com + 3 * b, com_end + 3 * b);
    }
    cf_mbs_sr_free(sr);
    cf_mbs_data_free(d);
  }
  return t;
}

/* The largest dt of `dts` (ascending) at which the formulation runs t_end: every step converges and the
 * total energy never rises above its initial value by more than 1% of the energy scale (a mechanism
 * that nothing drives: dampers only take energy out). Returns it, and its CPU time per step in *ms. */
static double largest_stable_dt(cfMbsDef* def, int semi, double t_end, const double* dts, int ndt, double* ms) {
  double best = NAN, dt0 = def->opt.dt;
  *ms = NAN;
  for (int i = 0; i < ndt; i++) {
    def->opt.dt = dts[i];
    cfMbsModel* m = NULL;
    cfMbsData* d = NULL;
    cfMbsSr* sr = NULL;
    int st = cf_mbs_model_create(def, &m);
    if (st >= 0) st = cf_mbs_data_create(m, &d);
    if (st >= 0 && semi) st = cf_mbs_sr_create(m, d, &sr);
    long steps = lround(t_end / dts[i]);
    double T0 = 0, V0 = 0, rise = 0;
    if (st >= 0) cf_mbs_energy(m, d, &T0, &V0);
    double scale = fabs(T0) + fabs(V0) + 1e-300, c = 0; /* c: the steps' CPU time, not the energy checks' */
    for (long n = 0; n < steps && st >= 0; n++) {
      double c0 = cpu_time();
      st = semi ? cf_mbs_sr_step(m, sr, d) : cf_mbs_step(m, d);
      c += cpu_time() - c0;
      double T, V;
      if (st >= 0) { /* the scale: the initial energies and the largest kinetic energy so far */
        cf_mbs_energy(m, d, &T, &V);
        scale = fmax(scale, fabs(T0) + fabs(V0) + T);
        rise = fmax(rise, (T + V - T0 - V0) / scale);
      }
      if (!(rise < 0.01)) st = -1;
    }
    cf_mbs_sr_free(sr);
    cf_mbs_data_free(d);
    cf_mbs_model_free(m);
    if (st < 0) break;
    best = dts[i], *ms = 1e3 * c / (double)steps;
  }
  def->opt.dt = dt0;
  return best;
}

static FILE* g_stable_csv; /* --label: perf/results/<label>/bench_topo_stable.csv, opened with its first row */
static const char* g_label;
static char g_stable_path[700];
static const char* g_only;  /* --only: the cases whose name starts with it (profiling one case) */
static int skip(const char* name) { return g_only && strncmp(name, g_only, strlen(g_only)) != 0; }

static void stable_dt_case(const char* name, cfMbsDef* def, double t_end) {
  if (skip(name)) return;
  static const double dts[] = {0.001, 0.002, 0.005, 0.01, 0.02, 0.05};
  int n = (int)(sizeof dts / sizeof dts[0]);
  double mg, ms, dg = largest_stable_dt(def, 0, t_end, dts, n, &mg), ds = largest_stable_dt(def, 1, t_end, dts, n, &ms);
  printf("%-22s largest stable dt of %g .. %g s over %g s: global %g s (%.4f ms/step, %.0fx real time), semi-recursive "
         "%g s (%.4f ms/step, %.0fx real time)\n", name, dts[0], dts[n - 1], t_end, dg, mg, dg / (1e-3 * mg), ds, ms,
         ds / (1e-3 * ms));
  if (g_label && !g_stable_csv &&
      (g_stable_csv = open_results_csv(g_label, "bench_topo_stable.csv", g_stable_path, sizeof g_stable_path)))
    fprintf(g_stable_csv, "case,t_end,global_dt,global_cpu_ms_per_step,global_real_time,semi_dt,semi_cpu_ms_per_step,"
                          "semi_real_time\n");
  if (g_stable_csv)
    fprintf(g_stable_csv, "%s,%g,%g,%.6g,%.4g,%g,%.6g,%.4g\n", name, t_end, dg, mg, dg / (1e-3 * mg), ds, ms, ds / (1e-3 * ms));
  fflush(stdout);
}

typedef struct Row {
  char name[64];
  int nbody, nq, nz, ncut_eq;
  double dt, t_end, g_ms, s_ms, g_it, s_it, com_diff;
} Row;

static int run_case(const char* name, cfMbsDef* def, double t_end, int repeat, Row* row) {
  if (skip(name)) return -1;
  cfMbsModel* m = NULL;
  cfMbsTopology* topo = NULL;
  int st = cf_mbs_model_create(def, &m);
  if (st >= 0) st = cf_mbs_topology_create(m, &topo);
  if (st < 0) {
    fprintf(stderr, "%s: %s\n", name, cf_last_error());
    cf_mbs_model_free(m);
    return st;
  }
  long steps = lround(t_end / m->opt.dt);
  double* cg = calloc(3 * (size_t)m->nbody, sizeof(double));
  double* cs = calloc(3 * (size_t)m->nbody, sizeof(double));
  Timing g = time_formulation(m, 0, steps, repeat, cg);
  Timing s = time_formulation(m, 1, steps, repeat, cs);
  memset(row, 0, sizeof *row);
  snprintf(row->name, sizeof row->name, "%s", name);
  row->nbody = m->nbody, row->nq = m->nq, row->nz = topo->nz, row->ncut_eq = topo->ncut_eq + m->ndriver;
  for (int i = 0; i < m->nmodal; i++) row->nz += cf_mbs_modal_nmodes(m, i); /* the amplitudes are coordinates too */
  row->dt = m->opt.dt, row->t_end = t_end;
  row->g_ms = g.ok ? 1e3 * g.cpu_per_step : NAN, row->s_ms = s.ok ? 1e3 * s.cpu_per_step : NAN;
  row->g_it = g.iters, row->s_it = s.iters;
  for (int i = 0; i < 3 * m->nbody; i++) row->com_diff = fmax(row->com_diff, fabs(cg[i] - cs[i]));
  if (!g.ok || !s.ok) row->com_diff = NAN;
  printf("%-22s %5d %6d %5d %6d  %9.4f %9.4f  %6.2f  %9.3gx %9.3gx  %5.2f %5.2f  %9.2e\n", name, row->nbody, row->nq,
         row->nz, row->ncut_eq, row->g_ms, row->s_ms, row->g_ms / row->s_ms, row->dt / (1e-3 * row->g_ms),
         row->dt / (1e-3 * row->s_ms), row->g_it, row->s_it, row->com_diff);
  if (!g.ok) printf("    global failed: %s\n", g.err);
  if (!s.ok) printf("    semi-recursive failed: %s\n", s.err);
  fflush(stdout);
  free(cg), free(cs);
  cf_mbs_topology_free(topo);
  cf_mbs_model_free(m);
  return CF_OK;
}

int main(int argc, char** argv) {
  int repeat = 3, quick = 0;
  const char* label = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--repeat") && i + 1 < argc) repeat = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--label") && i + 1 < argc) label = argv[++i];
    else if (!strcmp(argv[i], "--quick")) quick = 1;
    else if (!strcmp(argv[i], "--only") && i + 1 < argc) g_only = argv[++i];
    else {
      fprintf(stderr, "usage: cofem_bench_topo [--repeat N] [--label NAME] [--quick] [--only PREFIX]\n");
      return 2;
    }
  }
  if (repeat < 1) repeat = 1;
  /* the modal arm's reduction (free-free: 6 rigid-body vectors, which the frame carries, and 4 modes) */
  cfMesh arm_mesh;
  cfModel* arm_model = NULL;
  cfReduction arm_red;
  memset(&arm_mesh, 0, sizeof arm_mesh), memset(&arm_red, 0, sizeof arm_red);
  {
    cfModelDef md = cf_default_model_def();
    md.E = 2.1e11, md.nu = 0.3, md.rho = 7850;
    cfReduceOptions ro = cf_default_reduce_options();
    ro.nmodes = 6 + 4;
    if (cf_mesh_box(10, 2, 2, 0.3, 0.04, 0.03, &arm_mesh) >= 0 && cf_model_create(&arm_mesh, &md, &arm_model) >= 0 &&
        cf_reduce(arm_model, NULL, 0, &ro, &arm_red) >= 0) {
      g_arm.red = &arm_red, g_arm.mesh = &arm_mesh;
      printf("modal arm: %.3g kg, %d flexible modes from %.0f Hz\n", arm_red.mass, arm_red.n - arm_red.nrigid,
             cf_reduction_freq_hz(&arm_red, arm_red.nrigid));
    } else
      fprintf(stderr, "modal arm: %s (the modal vehicle is left out)\n", cf_last_error());
  }
  for (int a = 0; a < 2; a++) { /* the arms with interface points: 0.35 and 0.25 m */
    PointArm* pa = &g_parm[a];
    double L = a ? 0.25 : 0.35;
    cfModelDef md = cf_default_model_def();
    md.E = 2.1e11, md.nu = 0.3, md.rho = 7850;
    cfReduceOptions ro = cf_default_reduce_options();
    ro.nmodes = 0; /* the two points' 12 static modes: 6 rigid (the frame's) + 6 flexible */
    if (cf_mesh_box(10, 2, 2, L, 0.04, 0.03, &pa->mesh) >= 0 && cf_model_create(&pa->mesh, &md, &pa->model) >= 0) {
      const cfNodeSet *in = cf_mesh_find_nset(&pa->mesh, "xmin"), *out = cf_mesh_find_nset(&pa->mesh, "xmax");
      cfInterfacePoint pts[2] = {{in->nodes, in->count, CF_POINT_RIGID, 0}, {out->nodes, out->count, CF_POINT_RIGID, 0}};
      pa->ok = cf_reduce_points(pa->model, NULL, 0, pts, 2, &ro, &pa->red) >= 0;
    }
    if (pa->ok)
      printf("arm with interface points, %.2f m: %.3g kg, %d flexible modes from %.0f Hz\n", L, pa->red.mass,
             pa->red.n - pa->red.nrigid, cf_reduction_freq_hz(&pa->red, pa->red.nrigid));
    else
      fprintf(stderr, "arm with interface points: %s (vehicle_29_points is left out)\n", cf_last_error());
  }
  printf("global (natural coordinates, sparse CHOLMOD) vs semi-recursive (relative coordinates, dense) formulation; "
         "fastest of %d runs, process CPU time\n", repeat);
  printf("%-22s %5s %6s %5s %6s  %9s %9s  %6s  %10s %10s  %5s %5s  %9s\n", "case", "bodies", "nq", "nz", "closure",
         "glob ms", "semi ms", "g/s", "glob RT", "semi RT", "it g", "it s", "|dcom| m");
  Row rows[64];
  int nrow = 0;
  static const int chain_n[] = {1, 2, 4, 8, 16, 32, 64, 128, 256};
  for (size_t i = 0; i < sizeof chain_n / sizeof chain_n[0]; i++) {
    if (quick && chain_n[i] > 8) break;
    cfMbsDef def;
    cf_mbs_def_init(&def);
    make_chain(&def, chain_n[i]);
    char name[64];
    snprintf(name, sizeof name, "chain_%d", chain_n[i]);
    if (run_case(name, &def, quick ? 0.2 : chain_n[i] > 64 ? 0.2 : 1.0, repeat, &rows[nrow]) >= 0) nrow++;
    cf_mbs_def_free(&def);
  }
  {
    cfMbsScene s;
    char path[1024];
    snprintf(path, sizeof path, "%s/scenes/mbs/double_fourbar.json", COFEM_SOURCE_DIR);
    if (cf_mbs_scene_load(path, &s) >= 0) {
      if (run_case("double_fourbar", &s.def, s.t_end, repeat, &rows[nrow]) >= 0) nrow++;
      printf("    paper 000 Table 2 (MATLAB, rigid, 5 s): global 0.91 s, topological 4.85 s (5.3x slower)\n");
      cf_mbs_scene_free(&s);
    } else
      fprintf(stderr, "%s: %s\n", path, cf_last_error());
  }
  static const int dyads[] = {1, 2, 4, 8, 16, 32};
  for (size_t i = 0; i < sizeof dyads / sizeof dyads[0]; i++) {
    if (quick && dyads[i] > 4) break;
    cfMbsDef def;
    cf_mbs_def_init(&def);
    make_linkage(&def, dyads[i]);
    char name[64];
    snprintf(name, sizeof name, "linkage_k%d", dyads[i]);
    if (run_case(name, &def, quick ? 1.0 : 5.0, repeat, &rows[nrow]) >= 0) nrow++;
    cf_mbs_def_free(&def);
  }
  {
    cfMbsDef def;
    cf_mbs_def_init(&def);
    const ModalArm arm = g_arm;
    g_arm.red = NULL; /* rigid arms */
    make_vehicle(&def);
    g_arm = arm;
    if (run_case("vehicle_29", &def, quick ? 0.2 : 1.0, repeat, &rows[nrow]) >= 0) nrow++;
    cf_mbs_def_free(&def);
    if (g_arm.red) {
      cf_mbs_def_init(&def);
      make_vehicle(&def);
      if (run_case("vehicle_29_modal", &def, quick ? 0.2 : 1.0, repeat, &rows[nrow]) >= 0) nrow++;
      cf_mbs_def_free(&def);
    }
    if (g_parm[0].ok && g_parm[1].ok) {
      cf_mbs_def_init(&def);
      g_points = 1;
      make_vehicle(&def);
      g_points = 0;
      if (run_case("vehicle_29_points", &def, quick ? 0.2 : 1.0, repeat, &rows[nrow]) >= 0) nrow++;
      cf_mbs_def_free(&def);
    }
  }
  /* kinematic analysis of the scalable linkage: global (cf_mbs_kinematic_step) vs group by group
   * (paper 001, Table 1: up to 558 coordinates, 30 s at 1 rad/s; here dt 10 ms, 4 s, k up to 46) */
  printf("\nkinematic analysis, paper 001's scalable linkage (crank 2, k RRR dyads of 6, 1 rad/s), dt 10 ms, %g s:\n",
         quick ? 1.0 : 4.0);
  printf("%-22s %5s %6s %6s  %10s %10s  %6s  %9s\n", "case", "bodies", "nq", "groups", "global ms", "groups ms", "g/gr",
         "max |dq|");
  static const int kin_k[] = {1, 2, 4, 8, 16, 22, 32, 46};
  char kpath[700];
  FILE* kcsv = NULL; /* opened with its first row: --only on other cases leaves the last results alone */
  for (size_t i = 0; i < sizeof kin_k / sizeof kin_k[0]; i++) {
    if (quick && kin_k[i] > 8) break;
    char kname[64];
    snprintf(kname, sizeof kname, "linkage_k%d", kin_k[i]);
    if (skip(kname)) continue;
    if (label && !kcsv && (kcsv = open_results_csv(label, "bench_topo_kinematics.csv", kpath, sizeof kpath)))
      fprintf(kcsv, "case,bodies,nq,groups,global_cpu_ms_per_step,groups_cpu_ms_per_step,max_q_diff\n");
    cfMbsDef def;
    cf_mbs_def_init(&def);
    make_linkage(&def, kin_k[i]);
    cfMbsModel* m = NULL;
    cfMbsGroupKin* gk = NULL;
    if (cf_mbs_model_create(&def, &m) < 0 || cf_mbs_group_kin_create(m, &gk) < 0) {
      fprintf(stderr, "linkage k = %d: %s\n", kin_k[i], cf_last_error());
      cf_mbs_model_free(m);
      cf_mbs_def_free(&def);
      continue;
    }
    long steps = lround((quick ? 1.0 : 4.0) / m->opt.dt);
    double best[2] = {INFINITY, INFINITY}, dq = 0;
    cfMbsData* dd[2] = {NULL, NULL};
    int ok = 1;
    for (int rep = 0; rep < repeat && ok; rep++)
      for (int w = 0; w < 2 && ok; w++) {
        cf_mbs_data_free(dd[w]);
        dd[w] = NULL;
        ok = cf_mbs_data_create(m, &dd[w]) >= 0;
        double c0 = cpu_time();
        for (long n = 0; n < steps && ok; n++) ok = (w ? cf_mbs_group_kin_step(m, gk, dd[w]) : cf_mbs_kinematic_step(m, dd[w])) >= 0;
        best[w] = fmin(best[w], (cpu_time() - c0) / (double)steps);
      }
    if (!ok) fprintf(stderr, "linkage k = %d: %s\n", kin_k[i], cf_last_error());
    for (int j = 0; ok && j < m->nq; j++) dq = fmax(dq, fabs(dd[0]->q[j] - dd[1]->q[j]));
    char name[64];
    snprintf(name, sizeof name, "linkage_k%d", kin_k[i]);
    printf("%-22s %5d %6d %6d  %10.4f %10.4f  %6.2f  %9.2e\n", name, m->nbody, m->nq, cf_mbs_group_kin_topology(gk)->ngroup,
           1e3 * best[0], 1e3 * best[1], best[0] / best[1], dq);
    if (kcsv)
      fprintf(kcsv, "%s,%d,%d,%d,%.6g,%.6g,%.3e\n", name, m->nbody, m->nq, cf_mbs_group_kin_topology(gk)->ngroup,
              1e3 * best[0], 1e3 * best[1], dq);
    fflush(stdout);
    cf_mbs_data_free(dd[0]), cf_mbs_data_free(dd[1]);
    cf_mbs_group_kin_free(gk);
    cf_mbs_model_free(m);
    cf_mbs_def_free(&def);
  }
  if (kcsv) fclose(kcsv), printf("wrote %s\n", kpath);
  /* the largest stable step of each formulation (the energy criterion above; one run per dt) */
  printf("\n");
  g_label = label;
  {
    cfMbsDef def;
    cf_mbs_def_init(&def);
    make_chain(&def, 8);
    stable_dt_case("chain_8", &def, quick ? 0.5 : 2.0);
    cf_mbs_def_free(&def);
    cfMbsScene s;
    char path[1024];
    snprintf(path, sizeof path, "%s/scenes/mbs/double_fourbar.json", COFEM_SOURCE_DIR);
    if (cf_mbs_scene_load(path, &s) >= 0) {
      stable_dt_case("double_fourbar", &s.def, s.t_end);
      cf_mbs_scene_free(&s);
    }
    cf_mbs_def_init(&def);
    const ModalArm arm = g_arm;
    g_arm.red = NULL;
    make_vehicle(&def);
    stable_dt_case("vehicle_29", &def, quick ? 0.5 : 2.0);
    cf_mbs_def_free(&def);
    g_arm = arm;
    if (g_arm.red) {
      cf_mbs_def_init(&def);
      make_vehicle(&def);
      stable_dt_case("vehicle_29_modal", &def, quick ? 0.5 : 2.0);
      cf_mbs_def_free(&def);
    }
    if (g_parm[0].ok && g_parm[1].ok) {
      cf_mbs_def_init(&def);
      g_points = 1;
      make_vehicle(&def);
      g_points = 0;
      stable_dt_case("vehicle_29_points", &def, quick ? 0.5 : 2.0);
      cf_mbs_def_free(&def);
    }
  }
  if (g_stable_csv) fclose(g_stable_csv), printf("wrote %s\n", g_stable_path);
  if (label && nrow > 0) { /* (none under --only naming other cases: the last results kept) */
    char path[700];
    FILE* f = open_results_csv(label, "bench_topo.csv", path, sizeof path);
    if (!f) return 1;
    fprintf(f, "case,bodies,nq_global,nz_semi,closure_eqs,dt,t_end,global_cpu_ms_per_step,semi_cpu_ms_per_step,"
               "global_over_semi,global_iters,semi_iters,com_diff_end\n");
    for (int i = 0; i < nrow; i++)
      fprintf(f, "%s,%d,%d,%d,%d,%g,%g,%.6g,%.6g,%.4g,%.3f,%.3f,%.3e\n", rows[i].name, rows[i].nbody, rows[i].nq,
              rows[i].nz, rows[i].ncut_eq, rows[i].dt, rows[i].t_end, rows[i].g_ms, rows[i].s_ms,
              rows[i].g_ms / rows[i].s_ms, rows[i].g_it, rows[i].s_it, rows[i].com_diff);
    fclose(f);
    printf("wrote %s\n", path);
  }
  for (int a = 0; a < 2; a++) {
    if (g_parm[a].ok) cf_reduction_free(&g_parm[a].red);
    cf_model_free(g_parm[a].model);
    cf_mesh_free(&g_parm[a].mesh);
  }
  if (g_arm.red) cf_reduction_free(&arm_red);
  cf_model_free(arm_model);
  cf_mesh_free(&arm_mesh);
  return 0;
}
