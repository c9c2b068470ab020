/* The joint graph (cofem/mbs_topology.h) and the semi-recursive dynamics (cofem/mbs_semirecursive.h),
 * each against something independent:
 *  1. topology of the shipped four-bar, double four-bar and slider-crank: relative coordinates, cut
 *     joints and mobility equal to the hand count (paper 000 Table 1: the double four-bar has 5);
 *     a spatial RSUR loop is cut at its spherical joint; a joint-less body floats with 6;
 *  2. a single pendulum at 60 degrees: its period against the exact large-amplitude period
 *     T = 4 sqrt(I_O / (m g d)) K(sin(theta0 / 2));
 *  3. the rigid double four-bar of paper 000 over 5 s against the global formulation at dt 10, 5 and
 *     2.5 ms: the difference shrinks about 4x per halving (both second order); its revolutions beside
 *     the paper's ~2.7; energy; every equation of the global model (rigidity, tree joints) holds at the
 *     natural coordinates the tree writes; 1/2 z_dot^T M_z z_dot equals the global kinetic energy;
 *     the tree joints' reactions (cf_mbs_sr_reactions) equal the global formulation's: the pendulum's
 *     hinge, the double four-bar's A0 to the trajectories' second order;
 *  4. a torque-free asymmetric body on a floating base (gyroscopic terms): its angular momentum
 *     R I R^T w is conserved and its centre of mass falls freely, to the integrator's O(h^2);
 *  5. every shipped rigid mechanism scene runs with both formulations: trajectories (the bodies'
 *     centres of mass), energy and constraint violation compared;
 *  6. a modal body and generalized-alpha are refused with messages naming them. */
#include <string.h>

#include "cf_test.h"
#include "cofem/mbs.h"
#include "cofem/mbs_semirecursive.h"
#include "cofem/mbs_topology.h"
#include "cofem/session.h"
#include "cofem/status.h"
#include "mbs/swing_period.h"

#define SRC COFEM_SOURCE_DIR

static int load(const char* rel, cfMbsScene* s, cfMbsModel** m) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", SRC, rel);
  int st = cf_mbs_scene_load(path, s);
  if (st < 0) return st;
  st = cf_mbs_model_create(&s->def, m);
  if (st < 0) cf_mbs_scene_free(s);
  return st;
}

static int is_cut(const cfMbsModel* m, const cfMbsTopology* t, const char* name) {
  int j = cf_mbs_find_joint(m, name);
  return j >= 0 && t->role[j] == CF_MBS_ROLE_CUT;
}

/* ---- 1. topology ---- */
static void check_scene_topology(const char* rel, int nz, int ncut, const char* cut1, const char* cut2, int mobility,
                                 int ngroup) {
  cfMbsScene s;
  cfMbsModel* m = NULL;
  cfMbsTopology* t = NULL;
  CHECK_OK(load(rel, &s, &m));
  if (!m) return;
  CHECK_OK(cf_mbs_topology_create(m, &t));
  if (t) {
    printf("%s: %d coordinates, %d cut joints, mobility %d (planar %d), %d groups\n", rel, t->nz, t->ncut, t->mobility,
           t->planar, t->ngroup);
    CHECK(t->nz == nz);
    CHECK(t->ncut == ncut);
    CHECK(is_cut(m, t, cut1));
    if (cut2) CHECK(is_cut(m, t, cut2));
    CHECK(t->planar);
    CHECK(t->mobility == mobility);
    CHECK(t->ngroup == ngroup);
    /* every group but the inputs is a dyad of two bodies here */
    for (int g = 0; g < t->ngroup; g++) CHECK(t->group_ptr[g + 1] - t->group_ptr[g] == (g == 0 ? 1 : 2));
  }
  cf_mbs_topology_free(t);
  cf_mbs_model_free(m);
  cf_mbs_scene_free(&s);
}

static cfMbsBodyDef body_at(const char* name, double mass, double x, double y, double z) {
  cfMbsBodyDef b = cf_mbs_default_body_def();
  snprintf(b.name, sizeof b.name, "%s", name);
  b.mass = mass;
  b.inertia[0] = 0.1 * mass, b.inertia[1] = 0.2 * mass, b.inertia[2] = 0.3 * mass;
  b.pos[0] = x, b.pos[1] = y, b.pos[2] = z;
  return b;
}

static void add_joint(cfMbsDef* def, const char* name, int type, int b1, int b2, const double p[3], const double a[3],
                      const double a2[3]) {
  cfMbsJointDef j = cf_mbs_default_joint_def();
  snprintf(j.name, sizeof j.name, "%s", name);
  j.type = type, j.body1 = b1, j.body2 = b2;
  memcpy(j.point, p, sizeof j.point);
  if (a) memcpy(j.axis, a, sizeof j.axis);
  if (a2) memcpy(j.axis2, a2, sizeof j.axis2);
  cf_mbs_add_joint(def, &j);
}

/* spatial RSUR four-bar (6 x 3 - 5 - 3 - 4 - 5 = 1) plus a free body: the loop is cut at the spherical
 * joint although breadth-first order from the crank would reach the coupler through it first */
static void check_spatial_topology(void) {
  cfMbsDef def;
  cf_mbs_def_init(&def);
  def.opt.dt = 0.01;
  cfMbsBodyDef bc = body_at("crank", 1, 0, 0, 0), bk = body_at("coupler", 1, 0, 1, 0), br = body_at("rocker", 1, 2, 0, 0);
  cfMbsBodyDef bf = body_at("free", 1, 5, 5, 5);
  int c = cf_mbs_add_body(&def, &bc), k = cf_mbs_add_body(&def, &bk), r = cf_mbs_add_body(&def, &br);
  cf_mbs_add_body(&def, &bf);
  const double p0[3] = {0, 0, 0}, p1[3] = {0, 1, 0}, p2[3] = {2, 1, 0.5}, p3[3] = {2, 0, 0};
  const double ax[3] = {1, 0, 0}, ay[3] = {0, 1, 0}, az[3] = {0, 0, 1};
  add_joint(&def, "O", CF_MBS_REVOLUTE, CF_MBS_GROUND, c, p0, ax, NULL);
  add_joint(&def, "S", CF_MBS_SPHERICAL, c, k, p1, NULL, NULL);
  add_joint(&def, "U", CF_MBS_UNIVERSAL, k, r, p2, az, ay);
  add_joint(&def, "R", CF_MBS_REVOLUTE, CF_MBS_GROUND, r, p3, ay, NULL);
  /* the rocker's and coupler's t = 0 poses must agree with the joints: rocker at x = 2 turning about y,
   * coupler point p2 on it (r = 2 0 0, so p2 - r = 0 1 0.5 is in the rocker's plane x = 0 ... fine for
   * the graph, which does not need an assembled pose; the model assembles what it can) */
  cfMbsModel* m = NULL;
  cfMbsTopology* t = NULL;
  int st = cf_mbs_model_create(&def, &m);
  if (st < 0) printf("RSUR model: %s (the graph test needs the model)\n", cf_last_error());
  CHECK_OK(st);
  if (m) CHECK_OK(cf_mbs_topology_create(m, &t));
  if (t) {
    printf("RSUR + free body: %d coordinates, %d cut, spatial mobility %d, floating %d\n", t->nz, t->ncut,
           t->mobility_spatial, t->nfloating);
    CHECK(is_cut(m, t, "S"));
    CHECK(!is_cut(m, t, "U"));
    CHECK(t->ncut == 1);
    CHECK(t->nz == 1 + 1 + 2 + 6); /* O, R, U, the free body */
    CHECK(t->nfloating == 1);
    CHECK(!t->planar);
    CHECK(t->mobility_spatial == 1 + 6);
  }
  cf_mbs_topology_free(t);
  cf_mbs_model_free(m);
  cf_mbs_def_free(&def);
}

/* ---- helpers: run a model with both formulations ---- */
typedef struct Run {
  cfMbsModel* m;
  cfMbsData* d;
  cfMbsSr* sr; /* NULL: the global formulation */
} Run;

static int run_open(cfMbsModel* m, int semi, Run* r) {
  memset(r, 0, sizeof *r);
  r->m = m;
  int st = cf_mbs_data_create(m, &r->d);
  if (st >= 0 && semi) st = cf_mbs_sr_create(m, r->d, &r->sr);
  return st;
}
static int run_step(Run* r) { return r->sr ? cf_mbs_sr_step(r->m, r->sr, r->d) : cf_mbs_step(r->m, r->d); }
static void run_close(Run* r) {
  cf_mbs_sr_free(r->sr);
  cf_mbs_data_free(r->d);
}

/* complete elliptic integral of the first kind by the arithmetic-geometric mean */
static double ellipk(double k) {
  double a = 1, b = sqrt(1 - k * k);
  for (int i = 0; i < 30; i++) {
    double an = 0.5 * (a + b);
    b = sqrt(a * b), a = an;
  }
  return M_PI / (2 * a);
}

/* ---- 2. pendulum period ---- */
static void check_pendulum(void) {
  cfMbsScene s;
  cfMbsModel* m = NULL;
  CHECK_OK(load("scenes/mbs/pendulum.json", &s, &m));
  if (!m) return;
  Run r;
  CHECK_OK(run_open(m, 1, &r));
  int n = (int)(4.0 / m->opt.dt);
  double* ang = malloc(sizeof(double) * (size_t)(n + 1));
  ang[0] = 0;
  int j = cf_mbs_find_joint(m, "hinge"), ok = r.sr != NULL;
  for (int k = 1; k <= n && ok; k++) {
    ok = run_step(&r) >= 0;
    ang[k] = cf_mbs_joint_angle(m, r.d, j);
  }
  CHECK(ok);
  /* bar of 1 kg, 1 m, hinge at one end: I_O = Izz + m d^2, d = 0.5; released 60 degrees off the vertical */
  double IO = s.def.body[0].inertia[2] + 0.25, theta0 = M_PI / 3;
  double T_exact = 4 * sqrt(IO / (9.81 * 0.5)) * ellipk(sin(theta0 / 2));
  double T = swing_period(ang, n, m->opt.dt);
  printf("pendulum, semi-recursive, dt %g: period %.9f s, exact %.9f s (relative error %.2e)\n", m->opt.dt, T, T_exact,
         fabs(T - T_exact) / T_exact);
  CHECK_CLOSE(T, T_exact, 0, 2e-5); /* measured 7.6e-07 (sampling and O(h^2) of the trapezoidal rule) */
  free(ang);
  run_close(&r);
  cf_mbs_model_free(m);
  cf_mbs_scene_free(&s);
}

/* ---- 3. double four-bar: both formulations, dt halved twice ---- */
typedef struct FourbarResult {
  double diff;      /* max over the run of |A0 angle (semi-recursive) - A0 angle (global)| */
  double diff_end;  /* the same at 5 s */
  double rev;       /* revolutions of the crank in 5 s (semi-recursive) */
  double e_dev;     /* largest |E - E0| / E0 (semi-recursive) */
  double viol;      /* largest |Phi| of every global equation at the tree's natural coordinates */
  double viol_v, viol_a; /* ... of its velocity and acceleration equations at the natural q_dot, q_ddot */
  double ke_err;    /* largest |1/2 zd' Mz zd - T_global| / T */
} FourbarResult;

static FourbarResult run_fourbar(double dt) {
  FourbarResult res = {0, 0, 0, 0, 0, 0, 0, 0};
  cfMbsScene s;
  cfMbsModel* m = NULL;
  char path[512];
  snprintf(path, sizeof path, "%s/scenes/mbs/double_fourbar.json", SRC);
  CHECK_OK(cf_mbs_scene_load(path, &s));
  s.def.opt.dt = dt;
  CHECK_OK(cf_mbs_model_create(&s.def, &m));
  if (!m) return res;
  Run g, r;
  CHECK_OK(run_open(m, 0, &g));
  CHECK_OK(run_open(m, 1, &r));
  int j = cf_mbs_find_joint(m, "A0"), n = (int)lround(5.0 / dt), ok = r.sr && g.d;
  double T0, V0;
  if (ok) cf_mbs_energy(m, r.d, &T0, &V0);
  int nz = ok ? cf_mbs_sr_nz(r.sr) : 0;
  double* Mz = malloc(sizeof(double) * (size_t)(nz * nz + 1));
  for (int k = 1; k <= n && ok; k++) {
    ok = run_step(&g) >= 0 && run_step(&r) >= 0;
    if (!ok) break;
    double a = cf_mbs_joint_angle(m, r.d, j), b = cf_mbs_joint_angle(m, g.d, j);
    res.diff = fmax(res.diff, fabs(a - b));
    double T, V, viol[3];
    cf_mbs_energy(m, r.d, &T, &V);
    res.e_dev = fmax(res.e_dev, fabs(T + V - T0 - V0) / (T0 + V0));
    if (k % 10 == 0) {
      cf_mbs_violation(m, r.d, viol); /* every equation of the global model: rigidity, tree joints, cuts */
      res.viol = fmax(res.viol, viol[0]), res.viol_v = fmax(res.viol_v, viol[1]), res.viol_a = fmax(res.viol_a, viol[2]);
      cf_mbs_sr_mass_matrix(m, r.sr, r.d, Mz);
      const double* zd = cf_mbs_sr_zd(r.sr);
      double Tz = 0;
      for (int p = 0; p < nz; p++)
        for (int q = 0; q < nz; q++) Tz += 0.5 * zd[p] * Mz[p * nz + q] * zd[q];
      res.ke_err = fmax(res.ke_err, fabs(Tz - T) / T);
    }
    if (k == n) res.rev = fabs(a) / (2 * M_PI), res.diff_end = fabs(a - b);
  }
  CHECK(ok);
  free(Mz);
  run_close(&g);
  run_close(&r);
  cf_mbs_model_free(m);
  cf_mbs_scene_free(&s);
  return res;
}

static void check_double_fourbar(void) {
  enum { NDT = 4 };
  FourbarResult r[NDT];
  double dts[NDT] = {0.01, 0.005, 0.0025, 0.00125};
  for (int i = 0; i < NDT; i++) {
    r[i] = run_fourbar(dts[i]);
    printf("double four-bar dt %.5f: |A0 semi-recursive - global| max %.3e rad, at 5 s %.3e rad; %.3f revolutions, "
           "energy %.2e, violation %.1e (velocity %.1e, acceleration %.1e), kinetic energy from M_z %.1e\n", dts[i],
           r[i].diff, r[i].diff_end, r[i].rev, r[i].e_dev, r[i].viol, r[i].viol_v, r[i].viol_a, r[i].ke_err);
  }
  for (int i = 0; i + 1 < NDT; i++)
    printf("  ratio per halving of dt %.5f -> %.5f: max %.2f, at 5 s %.2f (second order: 4)\n", dts[i], dts[i + 1],
           r[i].diff / r[i + 1].diff, r[i].diff_end / r[i + 1].diff_end);
  /* the ratios approach 4 as dt falls (measured max: 5.32, 4.79, 4.25) */
  for (int i = 0; i + 1 < NDT; i++) CHECK(r[i].diff / r[i + 1].diff > 3.5 && r[i].diff / r[i + 1].diff < 6);
  CHECK(fabs(r[NDT - 2].diff / r[NDT - 1].diff - 4) < 0.6);
  CHECK(r[0].diff < 0.1);    /* measured 1.8e-2 rad at dt 10 ms */
  CHECK(r[0].rev > 2.55 && r[0].rev < 2.85); /* measured 2.651; paper 000: "approximately 2.7" */
  CHECK(r[0].e_dev < 2e-3);  /* measured 3.8e-4 at 10 ms */
  for (int i = 0; i < NDT; i++) {
    CHECK(r[i].viol < 1e-9);   /* measured 1.2e-11 */
    CHECK(r[i].viol_v < 1e-9); /* measured 6.6e-11 */
    CHECK(r[i].viol_a < 1e-7); /* measured 8.7e-10 */
    CHECK(r[i].ke_err < 1e-10); /* measured 1e-15 */
  }
}

/* ---- 3b. tree joints' reactions (cf_mbs_sr_reactions) against the global formulation's ---- */
static double check_reactions(const char* rel, const char* joint, double dt) {
  cfMbsScene s;
  cfMbsModel* m = NULL;
  char path[512];
  snprintf(path, sizeof path, "%s/%s", SRC, rel);
  CHECK_OK(cf_mbs_scene_load(path, &s));
  s.def.opt.dt = dt;
  CHECK_OK(cf_mbs_model_create(&s.def, &m));
  if (!m) return NAN;
  Run g, r;
  CHECK_OK(run_open(m, 0, &g));
  CHECK_OK(run_open(m, 1, &r));
  int j = cf_mbs_find_joint(m, joint), n = (int)lround(1.0 / dt), ok = g.d && r.sr;
  double diff = 0, scale = 0;
  for (int k = 1; k <= n && ok; k++) {
    ok = run_step(&g) >= 0 && run_step(&r) >= 0;
    if (!ok) break;
    cf_mbs_sr_reactions(m, r.sr, r.d);
    double Fg[3], Fr[3];
    cf_mbs_joint_reaction(m, g.d, j, Fg);
    cf_mbs_joint_reaction(m, r.d, j, Fr);
    for (int i = 0; i < 3; i++) diff = fmax(diff, fabs(Fg[i] - Fr[i])), scale = fmax(scale, fabs(Fg[i]));
  }
  CHECK(ok);
  printf("%s, joint '%s' (tree), dt %g, 1 s: reaction vs global, largest difference %.3e N of %.3g N\n", rel, joint, dt,
         diff, scale);
  run_close(&g);
  run_close(&r);
  cf_mbs_model_free(m);
  cf_mbs_scene_free(&s);
  return ok ? diff / scale : NAN;
}

/* ---- 4. a torque-free asymmetric body on a floating base ---- */
static void check_floating(void) {
  cfMbsDef def;
  cf_mbs_def_init(&def);
  def.opt.dt = 0.001;
  def.opt.gravity[2] = -9.81;
  cfMbsBodyDef b = body_at("brick", 2, 0.3, -0.2, 1.0);
  b.com[0] = 0.1, b.com[1] = 0.05; /* the origin away from the centre of mass */
  b.inertia[0] = 0.1, b.inertia[1] = 0.25, b.inertia[2] = 0.3, b.inertia[3] = 0.02;
  double ax[3] = {1, 2, 3};
  cf_mbs_axis_angle(ax, 0.4, b.rot);
  b.omega[0] = 0.3, b.omega[1] = 4.0, b.omega[2] = 0.5; /* near the unstable middle axis: tumbles */
  cf_mbs_add_body(&def, &b);
  cfMbsModel* m = NULL;
  CHECK_OK(cf_mbs_model_create(&def, &m));
  Run r;
  if (m) CHECK_OK(run_open(m, 1, &r));
  if (!m || !r.sr) return;
  const double* in = m->body_inertia;
  double Ic[9] = {in[0], in[3], in[4], in[3], in[1], in[5], in[4], in[5], in[2]};
  double H0[3] = {0, 0, 0}, g0[3], v0[3] = {0, 0, 0}, herr = 0, gerr = 0, c[3] = {0.1, 0.05, 0};
  for (int k = 0; k <= 1000; k++) {
    if (k > 0 && run_step(&r) < 0) {
      CHECK(0);
      break;
    }
    /* angular momentum about the centre of mass, global: R Ic R^T w */
    double R[9], w[3], H[3], Rt_w[3], t1[3], x[3];
    cf_mbs_rotation(m, r.d, 0, R);
    cf_mbs_omega(m, r.d, 0, w);
    for (int i = 0; i < 3; i++) Rt_w[i] = R[i] * w[0] + R[3 + i] * w[1] + R[6 + i] * w[2];
    for (int i = 0; i < 3; i++) t1[i] = Ic[3 * i] * Rt_w[0] + Ic[3 * i + 1] * Rt_w[1] + Ic[3 * i + 2] * Rt_w[2];
    for (int i = 0; i < 3; i++) H[i] = R[3 * i] * t1[0] + R[3 * i + 1] * t1[1] + R[3 * i + 2] * t1[2];
    cf_mbs_point(m, r.d, 0, c, x);
    if (k == 0) {
      memcpy(H0, H, sizeof H0), memcpy(g0, x, sizeof g0);
      cf_mbs_point_vel(m, r.d, 0, c, v0);
    }
    for (int i = 0; i < 3; i++) herr = fmax(herr, fabs(H[i] - H0[i]));
    /* x_G = x_G0 + v_G0 t + g t^2 / 2 */
    double t = k * def.opt.dt;
    for (int i = 0; i < 3; i++) gerr = fmax(gerr, fabs(x[i] - (g0[i] + v0[i] * t - (i == 2) * 0.5 * 9.81 * t * t)));
  }
  double Hn = sqrt(H0[0] * H0[0] + H0[1] * H0[1] + H0[2] * H0[2]);
  printf("floating brick, 1 s: angular momentum drift %.2e of %.3f N m s, centre of mass off free fall by %.2e m\n", herr,
         Hn, gerr);
  /* both second-order errors of the trapezoidal rule on the origin and the Cardan angles (measured at dt 1 ms;
   * at 0.5 ms 4.7e-6 and 3.5e-7: 3.9x less) */
  CHECK(herr < 1e-4 * Hn); /* measured 1.8e-5 relative */
  CHECK(gerr < 1e-5);      /* measured 1.4e-6 m */
  run_close(&r);
  cf_mbs_model_free(m);
  cf_mbs_def_free(&def);
}

/* ---- 4b. every tree joint type in one spatial mechanism, against the global formulation ----
 * A hangs from the ground by a universal joint, B slides and turns on A (cylindrical), C swings on B
 * (spherical), D slides on the ground (prismatic) and is welded to E (fixed); a distance joint C - E
 * closes the loop (always cut). Gravity and initial spins; 0.5 s at dt 2 and 1 ms: the difference
 * of the centres of mass shrinks as dt^2. */
static double run_spatial(double dt, double* viol, int* nz_out) {
  cfMbsDef def;
  cf_mbs_def_init(&def);
  def.opt.dt = dt;
  def.opt.gravity[2] = -9.81;
  cfMbsBodyDef A = body_at("A", 2, 0, 0, 1), B = body_at("B", 1, 0, 0, 0.6), C = body_at("C", 1.5, 0.3, 0, 0.4);
  cfMbsBodyDef D = body_at("D", 1, 1, 0, 0), E = body_at("E", 0.5, 1, 0.2, 0.1);
  A.com[2] = -0.2, B.com[2] = -0.1, C.com[0] = 0.1, D.com[1] = 0.05;
  A.omega[0] = 1.0, A.omega[1] = -0.5, C.omega[2] = 2.0;
  int a = cf_mbs_add_body(&def, &A), b = cf_mbs_add_body(&def, &B), c = cf_mbs_add_body(&def, &C);
  int dd = cf_mbs_add_body(&def, &D), e = cf_mbs_add_body(&def, &E);
  const double ax[3] = {1, 0, 0}, ay[3] = {0, 1, 0}, az[3] = {0, 0, 1};
  const double pA[3] = {0, 0, 1}, pB[3] = {0, 0, 0.6}, pC[3] = {0.2, 0, 0.45}, pD[3] = {1, 0, 0}, pE[3] = {1, 0.1, 0.05};
  add_joint(&def, "U", CF_MBS_UNIVERSAL, CF_MBS_GROUND, a, pA, ax, ay);
  add_joint(&def, "Cyl", CF_MBS_CYLINDRICAL, a, b, pB, az, NULL);
  add_joint(&def, "S", CF_MBS_SPHERICAL, b, c, pC, NULL, NULL);
  add_joint(&def, "P", CF_MBS_PRISMATIC, CF_MBS_GROUND, dd, pD, ay, NULL);
  add_joint(&def, "F", CF_MBS_FIXED, dd, e, pE, NULL, NULL);
  cfMbsJointDef dist = cf_mbs_default_joint_def();
  snprintf(dist.name, sizeof dist.name, "L");
  dist.type = CF_MBS_DISTANCE, dist.body1 = c, dist.body2 = e, dist.distance = -1;
  dist.point[0] = 0.5, dist.point[1] = 0, dist.point[2] = 0.4;   /* on C */
  dist.point2[0] = 1, dist.point2[1] = 0.2, dist.point2[2] = 0.1; /* on E */
  cf_mbs_add_joint(&def, &dist);
  cfMbsModel* m = NULL;
  double diff = NAN;
  *viol = 0;
  CHECK_OK(cf_mbs_model_create(&def, &m));
  Run g, r;
  if (m) {
    CHECK_OK(run_open(m, 0, &g));
    CHECK_OK(run_open(m, 1, &r));
    if (r.sr) *nz_out = cf_mbs_sr_nz(r.sr);
    int n = (int)lround(0.5 / dt), ok = g.d && r.sr;
    diff = 0;
    for (int k = 1; k <= n && ok; k++) {
      ok = run_step(&g) >= 0 && run_step(&r) >= 0;
      for (int bb = 0; ok && bb < m->nbody; bb++) {
        double xg[3], xr[3];
        cf_mbs_point(m, g.d, bb, m->body_com + 3 * bb, xg);
        cf_mbs_point(m, r.d, bb, m->body_com + 3 * bb, xr);
        for (int i = 0; i < 3; i++) diff = fmax(diff, fabs(xg[i] - xr[i]));
      }
      double v[3];
      if (ok) cf_mbs_violation(m, r.d, v), *viol = fmax(*viol, fmax(v[0], v[1]));
    }
    CHECK(ok);
    if (!ok) printf("spatial mechanism, dt %g: %s\n", dt, cf_last_error());
    run_close(&g);
    run_close(&r);
  }
  cf_mbs_model_free(m);
  cf_mbs_def_free(&def);
  return diff;
}

static void check_spatial_dynamics(void) {
  double v1, v2;
  int nz = 0;
  double d1 = run_spatial(0.002, &v1, &nz), d2 = run_spatial(0.001, &v2, &nz);
  printf("spatial tree (universal, cylindrical, spherical, prismatic, fixed; distance cut), %d relative coordinates, "
         "0.5 s: centres of mass vs global %.3e m at dt 2 ms, %.3e m at 1 ms (ratio %.2f); violation %.1e\n", nz, d1,
         d2, d1 / d2, fmax(v1, v2));
  CHECK(nz == 2 + 2 + 3 + 1 + 0);
  CHECK(d1 < 2e-5);                        /* measured 4.0e-6 m */
  CHECK(d1 / d2 > 3 && d1 / d2 < 5.5);     /* measured 3.98 */
  CHECK(fmax(v1, v2) < 1e-8);              /* measured 8e-10 */
}

/* ---- 5. every shipped rigid scene with both formulations ---- */
static void check_shipped_scenes(void) {
  static const struct {
    const char* rel;
    double bound; /* on the largest centre-of-mass difference over 0.5 s [m]; measured beside */
  } sc[] = {
      {"scenes/mbs/pendulum.json", 1e-5},          /* measured 4.5e-07 */
      {"scenes/mbs/double_fourbar.json", 1e-2},    /* 7.4e-04 (dt 10 ms) */
      {"scenes/mbs/slider_crank.json", 1e-6},      /* 2.0e-12 (driven) */
      {"scenes/mbs/slider_crank_virtual1.json", 1e-6},
      {"scenes/mbs/slider_crank_virtual2.json", 1e-6},
      {"scenes/mbs/quarter_car.json", 1e-10},      /* 2.4e-13: W = M + h/2 C + h^2/4 K in both */
      {"scenes/mbs/door.json", 1e-4},              /* 3.3e-06 */
      {"scenes/mbs/virtual_chain.json", 1e-4},     /* 2.5e-06 */
      {"scenes/mbs/double_fourbar_modal4.json", 3e-4}, /* 6.9e-05 (dt 10 ms): five modal bars, couplers on the cranks' tip points */
      {"scenes/mbs/flexible_lug_rbe2.json", 3e-7},     /* 5.1e-08: a modal lug hanging from a pin at its own RBE2 point */
      {"scenes/mbs/fourbar_kinematic.json", 1e-10},    /* 3.4e-12: driven, its dynamics is its kinematics */
      {"scenes/mbs/compare/double_fourbar_k0.json", 3e-4}, /* 4.1e-05: the rigid double four-bar of the comparison */
  };
  for (size_t i = 0; i < sizeof sc / sizeof sc[0]; i++) {
    cfMbsScene s;
    cfMbsModel* m = NULL;
    CHECK_OK(load(sc[i].rel, &s, &m));
    if (!m) continue;
    Run g, r;
    CHECK_OK(run_open(m, 0, &g));
    CHECK_OK(run_open(m, 1, &r));
    int n = (int)lround(fmin(0.5, s.t_end) / m->opt.dt), ok = g.d && r.sr;
    double dmax = 0, vmax = 0, vmax_v = 0, vmax_a = 0, e_g = 0, e_r = 0, T0, V0;
    if (ok) cf_mbs_energy(m, g.d, &T0, &V0);
    double scale = fabs(T0) + fabs(V0) + 1e-300;
    for (int k = 1; k <= n && ok; k++) {
      ok = run_step(&g) >= 0 && run_step(&r) >= 0;
      if (!ok) break;
      for (int b = 0; b < m->nbody; b++) {
        double xg[3], xr[3]; /* the centre of mass (a pendulum's origin sits on its hinge) */
        cf_mbs_point(m, g.d, b, m->body_com + 3 * b, xg);
        cf_mbs_point(m, r.d, b, m->body_com + 3 * b, xr);
        for (int c = 0; c < 3; c++) dmax = fmax(dmax, fabs(xg[c] - xr[c]));
      }
      double T, V, viol[3];
      cf_mbs_energy(m, g.d, &T, &V);
      e_g = fmax(e_g, fabs(T + V - T0 - V0) / scale);
      cf_mbs_energy(m, r.d, &T, &V);
      e_r = fmax(e_r, fabs(T + V - T0 - V0) / scale);
      cf_mbs_violation(m, r.d, viol);
      vmax = fmax(vmax, viol[0]), vmax_v = fmax(vmax_v, viol[1]), vmax_a = fmax(vmax_a, viol[2]);
    }
    CHECK(ok);
    printf("%s, %d steps: centres of mass differ by %.2e m; energy change global %.2e, semi-recursive %.2e; "
           "violation (all equations) %.1e, velocity %.1e, acceleration %.1e\n", sc[i].rel, n, dmax, e_g, e_r, vmax,
           vmax_v, vmax_a);
    CHECK(dmax < sc[i].bound);
    CHECK(vmax < 1e-8);    /* measured 1.3e-13 at most */
    CHECK(vmax_v < 1e-7);  /* measured 8.4e-9 at most (the slider-crank at 124.8 rad/s) */
    CHECK(vmax_a < 1e-4);  /* measured 2.3e-6 at most (the slider-crank: accelerations of 2e3 m/s^2) */
    /* energy: the same to the integrators' order; where work is done (drivers, dampers), both see it */
    CHECK(fabs(e_r - e_g) < 0.05 * e_g + 1e-4); /* measured: equal to 3 digits where work is done */
    run_close(&g);
    run_close(&r);
    cf_mbs_model_free(m);
    cf_mbs_scene_free(&s);
  }
}

/* ---- 6. refusals ---- */
static void check_refusals(void) {
  cfMbsScene s;
  cfMbsModel* m = NULL;
  CHECK_OK(load("scenes/mbs/pendulum.json", &s, &m));
  if (m) {
    cfMbsData* d = NULL;
    cfMbsSr* sr = NULL;
    CHECK_OK(cf_mbs_data_create(m, &d));
    m->opt.rho_inf = 0.9; /* generalized-alpha: the trapezoidal rule only */
    CHECK(cf_mbs_sr_create(m, d, &sr) == CF_ERR_UNSUPPORTED && !sr);
    CHECK(strstr(cf_last_error(), "rho_inf") != NULL);
    cf_mbs_data_free(d);
    cf_mbs_model_free(m);
    cf_mbs_scene_free(&s);
  }
  /* a modal body jointed at a node set (the flexible lug, reduced at load): refused, naming the joint and body */
  m = NULL;
  int st = load("scenes/mbs/flexible_lug.json", &s, &m);
  if (st >= 0 && m) {
    cfMbsData* d = NULL;
    cfMbsSr* sr = NULL;
    CHECK_OK(cf_mbs_data_create(m, &d));
    CHECK(cf_mbs_sr_create(m, d, &sr) == CF_ERR_UNSUPPORTED && !sr);
    printf("refused: %s\n", cf_last_error());
    CHECK(strstr(cf_last_error(), "'lug'") != NULL);
    cf_mbs_data_free(d);
    cf_mbs_model_free(m);
    cf_mbs_scene_free(&s);
  } else
    printf("flexible_lug.json not loaded (%s): modal refusal not checked\n", cf_last_error());
  /* the scene key: an unknown formulation, and the kinematic analysis, are refused by the parser */
  const char* bad = "{\"bodies\": [{\"name\": \"b\", \"mass\": 1, \"inertia\": [1, 1, 1]}],"
                    " \"solver\": {\"formulation\": \"recursive\"}}";
  memset(&s, 0, sizeof s);
  CHECK(cf_mbs_scene_parse(bad, "bad.json", &s) == CF_ERR_SCENE);
  CHECK(strstr(cf_last_error(), "semi_recursive") != NULL);
}

static double maxabs_diff(int n, const double* a, const double* b) {
  double m = 0;
  for (int i = 0; i < n; i++) m = fmax(m, fabs(a[i] - b[i]));
  return m;
}

/* the scene file rel with `from` replaced by `to` (once), malloc'd; NULL if either is missing */
static char* scene_text(const char* rel, const char* from, const char* to) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", SRC, rel);
  FILE* f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char* t = malloc((size_t)n + 1);
  if (t && fread(t, 1, (size_t)n, f) != (size_t)n) free(t), t = NULL;
  fclose(f);
  if (!t) return NULL;
  t[n] = 0;
  char* at = strstr(t, from);
  char* out = at ? malloc((size_t)n + strlen(to) + 1) : NULL;
  if (out) {
    memcpy(out, t, (size_t)(at - t));
    strcpy(out + (at - t), to);
    strcat(out, at + strlen(from));
  }
  free(t);
  return out;
}

/* ---- 7. sessions (the viewer's and Python's handle) in the semi-recursive and structural-group formulations:
 * the same steps as the solvers called directly, reactions, reset ---- */
static void check_sessions(void) {
  /* the double four-bar, semi-recursive: 100 steps by the session and by cf_mbs_sr_step, then a reset */
  char* text = scene_text("scenes/mbs/double_fourbar.json", "\"time\":", "\"solver\": {\"formulation\": \"semi_recursive\"}, \"time\":");
  CHECK(text != NULL);
  cfMbsSession* ss = NULL;
  if (text) {
    int st = cf_mbs_session_open_text(text, "double_fourbar_sr.json", &ss);
    if (st < 0) printf("session: %s\n", cf_last_error());
    CHECK_OK(st);
  }
  cfMbsScene sc;
  cfMbsModel* m = NULL;
  CHECK_OK(load("scenes/mbs/double_fourbar.json", &sc, &m));
  if (ss && m) {
    Run r;
    CHECK_OK(run_open(m, 1, &r));
    int nq = cf_mbs_session_nq(ss), ok = r.sr != NULL, j = cf_mbs_find_joint(m, "A0");
    for (int k = 0; k < 100 && ok; k++) ok = run_step(&r) >= 0;
    CHECK(ok);
    CHECK_OK(cf_mbs_session_step(ss, 100));
    double dq = maxabs_diff(nq, cf_mbs_session_q(ss), r.d->q), F[3], Fd[3];
    CHECK_OK(cf_mbs_session_joint_reaction(ss, j, F)); /* a tree joint's: the backward recursion */
    cf_mbs_sr_reactions(m, r.sr, r.d);
    cf_mbs_joint_reaction(m, r.d, j, Fd);
    double df = fmax(fabs(F[0] - Fd[0]), fmax(fabs(F[1] - Fd[1]), fabs(F[2] - Fd[2])));
    double* q1 = malloc(sizeof(double) * (size_t)nq);
    if (q1) memcpy(q1, cf_mbs_session_q(ss), sizeof(double) * (size_t)nq);
    CHECK_OK(cf_mbs_session_reset(ss));
    CHECK(cf_mbs_session_time(ss) == 0);
    CHECK_OK(cf_mbs_session_step(ss, 100));
    double dr = q1 ? maxabs_diff(nq, cf_mbs_session_q(ss), q1) : INFINITY;
    printf("session, semi-recursive double four-bar, 100 steps: q vs cf_mbs_sr_step %.1e; A0's reaction %.1e N "
           "(|F| %.3g N); after a reset, the same steps again: %.1e\n", dq, df, sqrt(F[0] * F[0] + F[1] * F[1] + F[2] * F[2]), dr);
    CHECK(dq == 0);             /* the same calls in the same order */
    CHECK(df == 0 && isfinite(F[0]) && fabs(F[0]) + fabs(F[1]) > 1);
    CHECK(dr == 0);
    CHECK(cf_mbs_session_static(ss) < 0); /* statics: the global formulation's */
    free(q1);
    run_close(&r);
  }
  cf_mbs_session_free(ss);
  cf_mbs_model_free(m);
  if (m) cf_mbs_scene_free(&sc);
  free(text);
  /* the driven four-bar by structural groups: the session against cf_mbs_group_kin_step */
  text = scene_text("scenes/mbs/fourbar_kinematic.json", "\"analysis\": \"kinematic\"",
                    "\"analysis\": \"kinematic\", \"formulation\": \"structural_groups\"");
  CHECK(text != NULL);
  ss = NULL, m = NULL;
  if (text) CHECK_OK(cf_mbs_session_open_text(text, "fourbar_groups.json", &ss));
  CHECK_OK(load("scenes/mbs/fourbar_kinematic.json", &sc, &m));
  if (ss && m) {
    cfMbsData* d = NULL;
    cfMbsGroupKin* gk = NULL;
    CHECK_OK(cf_mbs_data_create(m, &d));
    if (d) CHECK_OK(cf_mbs_group_kin_create(m, &gk));
    int ok = gk != NULL;
    for (int k = 0; k < 50 && ok; k++) ok = cf_mbs_group_kin_step(m, gk, d) >= 0;
    CHECK(ok);
    CHECK_OK(cf_mbs_session_step(ss, 50));
    double dq = maxabs_diff(m->nq, cf_mbs_session_q(ss), d->q);
    printf("session, four-bar by structural groups, 50 steps: q vs cf_mbs_group_kin_step %.1e\n", dq);
    CHECK(dq == 0);
    cf_mbs_group_kin_free(gk);
    cf_mbs_data_free(d);
  }
  cf_mbs_session_free(ss);
  cf_mbs_model_free(m);
  if (m) cf_mbs_scene_free(&sc);
  free(text);
}

int main(void) {
  /* fourbar_kinematic: crank, coupler, rocker; its driver makes the crank the input */
  check_scene_topology("scenes/mbs/fourbar_kinematic.json", 3, 1, "C", NULL, 1, 2);
  check_scene_topology("scenes/mbs/double_fourbar.json", 5, 2, "B1", "C1", 1, 3);
  check_scene_topology("scenes/mbs/slider_crank.json", 3, 1, "B", NULL, 1, 2);
  check_spatial_topology();
  check_pendulum();
  check_double_fourbar();
  {
    double rp = check_reactions("scenes/mbs/pendulum.json", "hinge", 0.001);
    double r1 = check_reactions("scenes/mbs/double_fourbar.json", "A0", 0.005);
    double r2 = check_reactions("scenes/mbs/double_fourbar.json", "A0", 0.0025);
    printf("  double four-bar reaction difference ratio per halving of dt: %.2f\n", r1 / r2);
    CHECK(rp < 1e-4);                   /* measured 2.6e-6 relative */
    CHECK(r2 < 1e-2);                   /* measured 4.8e-3 relative: the trajectories' O(h^2) */
    CHECK(r1 / r2 > 3 && r1 / r2 < 6); /* measured 4.44 */
  }
  check_floating();
  check_spatial_dynamics();
  check_shipped_scenes();
  check_refusals();
  check_sessions();
  TEST_END();
}
