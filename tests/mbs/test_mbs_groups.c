/* Kinematics by structural groups (paper 001; cofem/mbs_topology.h, host/mbs/mbs_groups.c):
 *  1. paper 001's scalable four-bar linkage (a crank of 2, k RRR dyads of length 6, the crank driven at
 *     1 rad/s) for k = 1, 4, 16: the groups are the crank then k + 1 dyads, and the positions,
 *     velocities and accelerations solved group by group equal the global kinematic analysis's
 *     (cf_mbs_kinematic_step, both converged to 1e-12) to 1e-10 over a full crank turn; the dyads in
 *     closed form (the crank's group alone iterates) give the positions of the Gauss-Newton on every group;
 *  2. the shipped crank-rocker (fourbar_kinematic.json): the dyad keeps its assembly branch over a turn
 *     (the sign of coupler x rocker never changes), every equation holds after each step;
 *  3. the same four-bar driven at its rocker: the crank-coupler dyad reaches its dead point, and the
 *     step fails with an error naming the group;
 *  4. the slider-crank (slider_crank.json): its RRP dyad in closed form gives the global kinematic
 *     analysis's positions, velocities and accelerations to 1e-10 over a crank turn with no Gauss-Newton
 *     update of the dyad, the slider stays on its side of the crank (the assembly branch); an offset
 *     slider-crank whose rod can no longer reach the slider's line stops at the dead point with an error
 *     naming the group;
 *  5. an inverted slider-crank (Whitworth's quick return: a block hinged to the crank slides on a rocker hinged
 *     to the ground): its RPR dyad in closed form against the global kinematic analysis over a crank turn, the
 *     block kept on its side of the rocker's pivot; with the slide line offset from the pivot, the dead point
 *     where the crank pin comes within the offset of the pivot;
 *  6. a PRP dyad (a block sliding along the driven crank's line hinged to a block sliding on a fixed line: the
 *     pin at the two lines' intersection): against the global analysis and the exact intersection, and the
 *     dead point where the lines turn parallel. */
#include <string.h>

#include "cf_test.h"
#include "cofem/mbs.h"
#include "cofem/mbs_topology.h"
#include "cofem/status.h"

#define SRC COFEM_SOURCE_DIR

static int add_bar(cfMbsDef* def, const char* name, double L, const double p0[3], const double p1[3]) {
  cfMbsBodyDef b = cf_mbs_default_body_def();
  snprintf(b.name, sizeof b.name, "%s", name);
  double z[3] = {0, 0, 1};
  b.mass = 1;
  b.com[0] = L / 2;
  b.inertia[0] = 1e-4, b.inertia[1] = b.inertia[2] = L * L / 12;
  memcpy(b.pos, p0, sizeof b.pos);
  cf_mbs_axis_angle(z, atan2(p1[1] - p0[1], p1[0] - p0[0]), b.rot);
  return cf_mbs_add_body(def, &b);
}

static void add_rev(cfMbsDef* def, const char* name, int b1, int b2, const double p[3]) {
  cfMbsJointDef j = cf_mbs_default_joint_def();
  snprintf(j.name, sizeof j.name, "%s", name);
  j.type = CF_MBS_REVOLUTE, j.body1 = b1, j.body2 = b2;
  memcpy(j.point, p, sizeof j.point);
  j.axis[0] = 0, j.axis[1] = 0, j.axis[2] = 1;
  cf_mbs_add_joint(def, &j);
}

/* A1 (0,0) crank to B1 (0,2); rod to C1 (6,2); rocker to D1 (6,-4); dyad i: from the previous rocker's
 * midpoint 6 to the right, then 6 down to the ground (as perf/bench_topo.c) */
static void make_linkage(cfMbsDef* def, int k, double dt) {
  def->opt.dt = dt;
  def->opt.redundant = 3 * (k + 1);
  def->opt.tol_phi = def->opt.tol_dq = 1e-12;
  double A[3] = {0, 0, 0}, B[3] = {0, 2, 0}, C[3] = {6, 2, 0}, D[3] = {6, -4, 0};
  int crank = add_bar(def, "crank", 2, A, B), rod = add_bar(def, "rod0", 6, B, C), rocker = add_bar(def, "rocker0", 6, C, D);
  add_rev(def, "A1", CF_MBS_GROUND, crank, A), add_rev(def, "B1", crank, rod, B);
  add_rev(def, "C1", rod, rocker, C), add_rev(def, "D1", CF_MBS_GROUND, rocker, D);
  for (int i = 1; i <= k; i++) {
    double Bk[3] = {0.5 * (C[0] + D[0]), 0.5 * (C[1] + D[1]), 0}, Ck[3] = {Bk[0] + 6, Bk[1], 0}, Dk[3] = {Ck[0], Ck[1] - 6, 0};
    char n1[32], n2[32], j[32];
    snprintf(n1, sizeof n1, "rod%d", i), snprintf(n2, sizeof n2, "rocker%d", i);
    int r = add_bar(def, n1, 6, Bk, Ck), q = add_bar(def, n2, 6, Ck, Dk);
    snprintf(j, sizeof j, "B%d", i + 1), add_rev(def, j, rocker, r, Bk);
    snprintf(j, sizeof j, "C%d", i + 1), add_rev(def, j, r, q, Ck);
    snprintf(j, sizeof j, "D%d", i + 1), add_rev(def, j, CF_MBS_GROUND, q, Dk);
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

static double maxdiff(int n, const double* a, const double* b) {
  double m = 0;
  for (int i = 0; i < n; i++) m = fmax(m, fabs(a[i] - b[i]));
  return m;
}

static void check_linkage(int k) {
  cfMbsDef def;
  cf_mbs_def_init(&def);
  make_linkage(&def, k, 0.05);
  cfMbsModel* m = NULL;
  cfMbsData *dg = NULL, *dk = NULL;
  cfMbsGroupKin* gk = NULL;
  CHECK_OK(cf_mbs_model_create(&def, &m));
  if (m) {
    CHECK_OK(cf_mbs_data_create(m, &dg));
    CHECK_OK(cf_mbs_data_create(m, &dk));
  }
  if (m) CHECK_OK(cf_mbs_group_kin_create(m, &gk));
  if (!gk || !dg || !dk) goto done;
  const cfMbsTopology* t = cf_mbs_group_kin_topology(gk);
  CHECK(t->ngroup == k + 2);
  CHECK(!strcmp(t->group_kind[0], "input"));
  for (int g = 1; g < t->ngroup; g++) CHECK(!strcmp(t->group_kind[g], "dyad RRR"));
  double e[3] = {0, 0, 0};
  int n = (int)lround(2 * M_PI / m->opt.dt), ok = 1;
  for (int s = 0; s < n && ok; s++) {
    ok = cf_mbs_group_kin_step(m, gk, dg) >= 0 && cf_mbs_kinematic_step(m, dk) >= 0;
    e[0] = fmax(e[0], maxdiff(m->nq, dg->q, dk->q));
    e[1] = fmax(e[1], maxdiff(m->nq, dg->qd, dk->qd));
    e[2] = fmax(e[2], maxdiff(m->nq, dg->qdd, dk->qdd));
  }
  CHECK(ok);
  double it_closed = (double)cf_mbs_group_kin_newton_iterations(gk) / n;
  printf("scalable linkage, k = %d (%d coordinates, %d groups), a crank turn: groups vs global: positions %.1e, "
         "velocities %.1e, accelerations %.1e; Gauss-Newton updates per step %.2f\n", k, m->nq, t->ngroup, e[0], e[1],
         e[2], it_closed);
  /* the dyads in closed form: only the crank's group iterates (measured 3.00 updates per step at the
   * test's tolerance of 1e-12) */
  CHECK(it_closed <= 3.5);
  /* and the same without the closed form: every group iterates, to the same positions */
  {
    cfMbsData* dn = NULL;
    cfMbsGroupKin* gn = NULL;
    CHECK_OK(cf_mbs_data_create(m, &dn));
    CHECK_OK(cf_mbs_group_kin_create(m, &gn));
    if (dn && gn) {
      cf_mbs_group_kin_set_closed_form(gn, 0);
      cf_mbs_data_free(dg);
      dg = NULL;
      CHECK_OK(cf_mbs_data_create(m, &dg));
      double en = 0;
      for (int s = 0; s < n && ok; s++) {
        ok = cf_mbs_group_kin_step(m, gn, dn) >= 0 && cf_mbs_group_kin_step(m, gk, dg) >= 0;
        en = fmax(en, maxdiff(m->nq, dg->q, dn->q));
      }
      CHECK(ok);
      double it_newton = (double)cf_mbs_group_kin_newton_iterations(gn) / n;
      printf("  without the closed form: %.2f updates per step; positions differ by %.1e\n", it_newton, en);
      CHECK(en < 1e-10); /* measured 8.7e-15 (k = 1, 4), 7.0e-13 (k = 16) */
      CHECK(it_newton > it_closed + k + 1); /* every dyad iterates (measured 8.84, 16.06, 40.06) */
    }
    cf_mbs_group_kin_free(gn);
    cf_mbs_data_free(dn);
  }
  CHECK(e[0] < 1e-10); /* measured 5e-15 (k = 1, 4), 6.8e-13 (k = 16) */
  CHECK(e[1] < 1e-10); /* measured 2.2e-11: the global velocity projection's tolerance */
  CHECK(e[2] < 1e-9);  /* measured 2.6e-11 */
done:
  cf_mbs_group_kin_free(gk);
  cf_mbs_data_free(dg);
  cf_mbs_data_free(dk);
  cf_mbs_model_free(m);
  cf_mbs_def_free(&def);
}

/* z of (coupler direction x rocker direction): the side the dyad's elbow is on */
static double elbow(const cfMbsModel* m, const cfMbsData* d) {
  double Rc[9], Rr[9];
  cf_mbs_rotation(m, d, cf_mbs_find_body(m, "coupler"), Rc);
  cf_mbs_rotation(m, d, cf_mbs_find_body(m, "rocker"), Rr);
  return Rc[0] * Rr[3] - Rc[3] * Rr[0]; /* x axes: columns 0 */
}

static void check_branch_and_dead_point(void) {
  cfMbsScene s;
  char path[512];
  snprintf(path, sizeof path, "%s/scenes/mbs/fourbar_kinematic.json", SRC);
  CHECK_OK(cf_mbs_scene_load(path, &s));
  cfMbsModel* m = NULL;
  cfMbsData* d = NULL;
  cfMbsGroupKin* gk = NULL;
  CHECK_OK(cf_mbs_model_create(&s.def, &m));
  if (m) CHECK_OK(cf_mbs_data_create(m, &d));
  if (d) CHECK_OK(cf_mbs_group_kin_create(m, &gk));
  if (gk) {
    double side0 = elbow(m, d), worst = 0, vmax = 0;
    int flips = 0, ok = 1;
    for (int k = 0; k < 200 && ok; k++) { /* 1 s: one crank turn */
      ok = cf_mbs_group_kin_step(m, gk, d) >= 0;
      double v[3];
      cf_mbs_violation(m, d, v);
      vmax = fmax(vmax, v[0]), worst = fmax(worst, fmax(v[1], v[2] * 1e-2));
      flips += elbow(m, d) * side0 <= 0;
    }
    CHECK(ok);
    printf("crank-rocker by groups, one turn: the dyad's elbow changed side %d times; violation position %.1e, velocity "
           "and acceleration / 100 %.1e\n", flips, vmax, worst);
    CHECK(flips == 0);
    CHECK(vmax < 1e-10); /* measured 3e-16 */
    CHECK(worst < 1e-10); /* measured 7e-15 */
  }
  cf_mbs_group_kin_free(gk);
  cf_mbs_data_free(d);
  cf_mbs_model_free(m);
  /* the rocker driven: the crank-coupler dyad stretches out at the rocker's extreme */
  s.def.driver[0].joint = cf_mbs_def_find_body(&s.def, "rocker") >= 0 ? 3 : 0; /* joint O4 */
  m = NULL, d = NULL, gk = NULL;
  CHECK_OK(cf_mbs_model_create(&s.def, &m));
  if (m) CHECK_OK(cf_mbs_data_create(m, &d));
  if (d) CHECK_OK(cf_mbs_group_kin_create(m, &gk));
  if (gk) {
    int st = CF_OK, k;
    for (k = 0; k < 400 && st >= 0; k++) st = cf_mbs_group_kin_step(m, gk, d);
    printf("rocker-driven four-bar: step %d, t = %.3f s: %s\n", k, d->t, cf_last_error());
    CHECK(st == CF_ERR_SOLVER);
    CHECK(strstr(cf_last_error(), "structural group 2") != NULL);
    CHECK(strstr(cf_last_error(), "dead point") != NULL);
  }
  cf_mbs_group_kin_free(gk);
  cf_mbs_data_free(d);
  cf_mbs_model_free(m);
  cf_mbs_scene_free(&s);
}

static void check_slider_crank(void) {
  cfMbsScene s;
  char path[512];
  snprintf(path, sizeof path, "%s/scenes/mbs/slider_crank.json", SRC);
  CHECK_OK(cf_mbs_scene_load(path, &s));
  s.def.opt.tol_phi = s.def.opt.tol_dq = 1e-12;
  cfMbsModel* m = NULL;
  cfMbsData *dg = NULL, *dk = NULL, *dn = NULL;
  cfMbsGroupKin *gk = NULL, *gn = NULL;
  CHECK_OK(cf_mbs_model_create(&s.def, &m));
  if (m) {
    CHECK_OK(cf_mbs_data_create(m, &dg));
    CHECK_OK(cf_mbs_data_create(m, &dk));
    CHECK_OK(cf_mbs_data_create(m, &dn));
    CHECK_OK(cf_mbs_group_kin_create(m, &gk));
    CHECK_OK(cf_mbs_group_kin_create(m, &gn));
  }
  if (gk && gn && dg && dk && dn) {
    const cfMbsTopology* t = cf_mbs_group_kin_topology(gk);
    CHECK(t->ngroup == 2 && !strcmp(t->group_kind[1], "dyad RRP"));
    cf_mbs_group_kin_set_closed_form(gn, 0);
    int n = (int)lround(2 * M_PI / 124.8 / m->opt.dt), ok = 1, slider = cf_mbs_find_body(m, "slider");
    double e[4] = {0, 0, 0, 0}, xmin = INFINITY;
    for (int k = 0; k < n && ok; k++) {
      ok = cf_mbs_group_kin_step(m, gk, dg) >= 0 && cf_mbs_kinematic_step(m, dk) >= 0 && cf_mbs_group_kin_step(m, gn, dn) >= 0;
      e[0] = fmax(e[0], maxdiff(m->nq, dg->q, dk->q));
      e[1] = fmax(e[1], maxdiff(m->nq, dg->qd, dk->qd));
      e[2] = fmax(e[2], maxdiff(m->nq, dg->qdd, dk->qdd));
      e[3] = fmax(e[3], maxdiff(m->nq, dg->q, dn->q));
      xmin = fmin(xmin, dg->q[m->body_qadr[slider]]);
    }
    CHECK(ok);
    double it_closed = (double)cf_mbs_group_kin_newton_iterations(gk) / n, it_newton = (double)cf_mbs_group_kin_newton_iterations(gn) / n;
    printf("slider-crank by groups, a crank turn (%d steps): vs global: positions %.1e, velocities %.1e, accelerations "
           "%.1e (relative to 124.8^2 x 0.15 m/s^2: %.1e); vs the Newton on the dyad %.1e; updates per step %.2f "
           "(closed form) vs %.2f; the slider's least x %.4f m\n", n, e[0], e[1], e[2], e[2] / (124.8 * 124.8 * 0.1524), e[3],
           it_closed, it_newton, xmin);
    CHECK(e[0] < 1e-10); /* measured 8.7e-14 */
    CHECK(e[3] < 1e-10); /* measured 2.0e-15 */
    CHECK(e[1] < 2e-10); /* m/s at 19 m/s: measured 4.0e-11 (the global velocity projection's tolerance) */
    CHECK(e[2] < 1e-11 * 124.8 * 124.8 * 0.1524); /* measured 2.1e-12 relative */
    CHECK(it_newton > it_closed + 0.5); /* the dyad iterates without the closed form only: measured 2.00 vs 4.00 */
    /* the branch: the slider stays in x = 0.1524 .. 0.4572 m (the other root: x = -0.4572 .. -0.1524) */
    CHECK(xmin > 0.15);
  }
  cf_mbs_group_kin_free(gk), cf_mbs_group_kin_free(gn);
  cf_mbs_data_free(dg), cf_mbs_data_free(dk), cf_mbs_data_free(dn);
  cf_mbs_model_free(m);
  cf_mbs_scene_free(&s);
  /* an offset slider-crank: crank 1 about the origin pointing down, rod 2 to a slider on the line y = -1.8;
   * the crank turning at 1 rad/s lifts its pin until the rod stands perpendicular to the line
   * (pin y = 0.2: t = acos(-0.2) = 1.772 s), the dyad's dead point */
  cfMbsDef def;
  cf_mbs_def_init(&def);
  def.opt.dt = 0.01;
  def.opt.redundant = 3;
  double O[3] = {0, 0, 0}, A[3] = {0, -1, 0}, B[3] = {sqrt(4 - 0.64), -1.8, 0};
  int crank = add_bar(&def, "crank", 1, O, A), rod = add_bar(&def, "rod", 2, A, B);
  cfMbsBodyDef sb = cf_mbs_default_body_def();
  snprintf(sb.name, sizeof sb.name, "slider");
  sb.mass = 1, sb.inertia[0] = sb.inertia[1] = sb.inertia[2] = 0.01;
  memcpy(sb.pos, B, sizeof sb.pos);
  int slider = cf_mbs_add_body(&def, &sb);
  add_rev(&def, "O", CF_MBS_GROUND, crank, O), add_rev(&def, "A", crank, rod, A), add_rev(&def, "B", rod, slider, B);
  cfMbsJointDef pj = cf_mbs_default_joint_def();
  snprintf(pj.name, sizeof pj.name, "P");
  pj.type = CF_MBS_PRISMATIC, pj.body1 = CF_MBS_GROUND, pj.body2 = slider;
  memcpy(pj.point, B, sizeof pj.point);
  pj.axis[0] = 1, pj.axis[1] = 0, pj.axis[2] = 0;
  cf_mbs_add_joint(&def, &pj);
  cfMbsDriverDef dr = cf_mbs_default_driver_def();
  snprintf(dr.name, sizeof dr.name, "crank_speed");
  dr.type = CF_MBS_DRIVE_ANGLE, dr.joint = 0;
  dr.f = cf_mbs_func_const(1.0);
  dr.f.rate = 1;
  cf_mbs_add_driver(&def, &dr);
  m = NULL, dg = NULL, gk = NULL;
  CHECK_OK(cf_mbs_model_create(&def, &m));
  if (m) CHECK_OK(cf_mbs_data_create(m, &dg));
  if (dg) CHECK_OK(cf_mbs_group_kin_create(m, &gk));
  if (gk) {
    CHECK(!strcmp(cf_mbs_group_kin_topology(gk)->group_kind[1], "dyad RRP"));
    int st = CF_OK, k;
    for (k = 0; k < 300 && st >= 0; k++) st = cf_mbs_group_kin_step(m, gk, dg);
    printf("offset slider-crank: step %d, t = %.3f s: %s\n", k, dg->t, cf_last_error());
    CHECK(st == CF_ERR_SOLVER);
    CHECK(strstr(cf_last_error(), "structural group 2") && strstr(cf_last_error(), "dead point") &&
          strstr(cf_last_error(), "perpendicular"));
    CHECK(dg->t > 1.70 && dg->t < 1.78); /* the dead point at 1.772 s; the state left at the last good step */
  }
  cf_mbs_group_kin_free(gk);
  cf_mbs_data_free(dg);
  cf_mbs_model_free(m);
  cf_mbs_def_free(&def);
}

/* a driver turning joint j at `rate` rad/s */
static void add_spin(cfMbsDef* def, int j, double rate) {
  cfMbsDriverDef dr = cf_mbs_default_driver_def();
  snprintf(dr.name, sizeof dr.name, "spin");
  dr.type = CF_MBS_DRIVE_ANGLE, dr.joint = j;
  dr.f = cf_mbs_func_const(rate);
  dr.f.rate = 1;
  cf_mbs_add_driver(def, &dr);
}

static void add_prism(cfMbsDef* def, const char* name, int b1, int b2, const double p[3], const double axis[3]) {
  cfMbsJointDef j = cf_mbs_default_joint_def();
  snprintf(j.name, sizeof j.name, "%s", name);
  j.type = CF_MBS_PRISMATIC, j.body1 = b1, j.body2 = b2;
  memcpy(j.point, p, sizeof j.point);
  memcpy(j.axis, axis, sizeof j.axis);
  cf_mbs_add_joint(def, &j);
}

/* the Whitworth quick return: crank 1 about O = (0, 0) from (1, 0), driven at 1 rad/s; a rocker hinged to the
 * ground at Q = (0, qy); a block hinged to the crank pin A, sliding on the rocker along a line through A at
 * `offset` from Q */
static void make_quick_return(cfMbsDef* def, double qy, double offset) {
  cf_mbs_def_init(def);
  def->opt.dt = 0.01;
  def->opt.redundant = 3;
  def->opt.tol_phi = def->opt.tol_dq = 1e-12;
  double O[3] = {0, 0, 0}, A[3] = {1, 0, 0}, Q[3] = {0, qy, 0};
  double qa = hypot(A[0] - Q[0], A[1] - Q[1]), ang = atan2(A[1] - Q[1], A[0] - Q[0]) - asin(offset / qa);
  double u[3] = {cos(ang), sin(ang), 0}, R[3] = {Q[0] + 3 * u[0], Q[1] + 3 * u[1], 0}, A2[3] = {A[0] + u[0], A[1] + u[1], 0};
  (void)R;
  int crank = add_bar(def, "crank", 1, O, A);
  double Qs[3] = {A[0] - 2 * u[0], A[1] - 2 * u[1], 0}; /* the rocker along the slide line (its frame off Q when offset) */
  int rocker = add_bar(def, "rocker", 3, Qs, R), block = add_bar(def, "block", 0.2, A, A2);
  add_rev(def, "O", CF_MBS_GROUND, crank, O);
  add_rev(def, "Q", CF_MBS_GROUND, rocker, Q);
  add_rev(def, "A", crank, block, A);
  add_prism(def, "slide", rocker, block, A, u);
  add_spin(def, 0, 1.0);
}

static void check_rpr(void) {
  cfMbsDef def;
  make_quick_return(&def, -2, 0);
  cfMbsModel* m = NULL;
  cfMbsData *dg = NULL, *dk = NULL, *dn = NULL;
  cfMbsGroupKin *gk = NULL, *gn = NULL;
  CHECK_OK(cf_mbs_model_create(&def, &m));
  if (m) {
    CHECK_OK(cf_mbs_data_create(m, &dg));
    CHECK_OK(cf_mbs_data_create(m, &dk));
    CHECK_OK(cf_mbs_data_create(m, &dn));
    CHECK_OK(cf_mbs_group_kin_create(m, &gk));
    CHECK_OK(cf_mbs_group_kin_create(m, &gn));
  }
  if (gk && gn && dg && dk && dn) {
    const cfMbsTopology* t = cf_mbs_group_kin_topology(gk);
    CHECK(t->ngroup == 2 && !strcmp(t->group_kind[1], "dyad RPR"));
    cf_mbs_group_kin_set_closed_form(gn, 0);
    int n = (int)lround(2 * M_PI / m->opt.dt), ok = 1, block = cf_mbs_find_body(m, "block"), rocker = cf_mbs_find_body(m, "rocker");
    double e[4] = {0, 0, 0, 0}, smin = INFINITY;
    for (int k = 0; k < n && ok; k++) {
      ok = cf_mbs_group_kin_step(m, gk, dg) >= 0 && cf_mbs_kinematic_step(m, dk) >= 0 && cf_mbs_group_kin_step(m, gn, dn) >= 0;
      e[0] = fmax(e[0], maxdiff(m->nq, dg->q, dk->q));
      e[1] = fmax(e[1], maxdiff(m->nq, dg->qd, dk->qd));
      e[2] = fmax(e[2], maxdiff(m->nq, dg->qdd, dk->qdd));
      e[3] = fmax(e[3], maxdiff(m->nq, dg->q, dn->q));
      /* the branch: the block's place along the rocker's axis from the pivot Q = (0, -2) */
      const double *qb = dg->q + m->body_qadr[block], *qr = dg->q + m->body_qadr[rocker];
      smin = fmin(smin, (qb[0] - 0) * qr[3] + (qb[1] + 2) * qr[4] + qb[2] * qr[5]);
    }
    CHECK(ok);
    double it_closed = (double)cf_mbs_group_kin_newton_iterations(gk) / n, it_newton = (double)cf_mbs_group_kin_newton_iterations(gn) / n;
    printf("quick return (RPR dyad) by groups, a crank turn (%d steps): vs global: positions %.1e, velocities %.1e, "
           "accelerations %.1e; vs the Newton on the dyad %.1e; updates per step %.2f (closed form) vs %.2f; the block's "
           "least distance from the pivot along the rocker %.4f (crank 1, pivot 2 below: 1 .. 3)\n", n, e[0], e[1], e[2],
           e[3], it_closed, it_newton, smin);
    CHECK(e[0] < 1e-10); /* measured 5.8e-12 (the global Newton's tolerance) */
    CHECK(e[1] < 1e-10); /* measured 1.0e-11 */
    CHECK(e[2] < 1e-9);  /* measured 2.1e-11 */
    CHECK(e[3] < 1e-10); /* measured 2.0e-15 */
    CHECK(it_newton > it_closed + 0.5); /* the dyad iterates without the closed form only: measured 2.00 vs 4.00 */
    CHECK(smin > 0.99); /* measured 1.0000; the other branch: the block beyond the pivot, at -1 .. -3 */
  }
  cf_mbs_group_kin_free(gk), cf_mbs_group_kin_free(gn);
  cf_mbs_data_free(dg), cf_mbs_data_free(dk), cf_mbs_data_free(dn);
  cf_mbs_model_free(m);
  cf_mbs_def_free(&def);
  /* the dead point: the pivot on the crank's circle (0, -1), the slide line 0.3 off it: no assembly while the pin
   * is within 0.3 of the pivot, first at the angle 3 pi / 2 - 2 asin(0.15) (t = 4.411 s) */
  make_quick_return(&def, -1, 0.3);
  m = NULL, dg = NULL, gk = NULL;
  CHECK_OK(cf_mbs_model_create(&def, &m));
  if (m) CHECK_OK(cf_mbs_data_create(m, &dg));
  if (dg) CHECK_OK(cf_mbs_group_kin_create(m, &gk));
  if (gk) {
    CHECK(!strcmp(cf_mbs_group_kin_topology(gk)->group_kind[1], "dyad RPR"));
    int st = CF_OK, k;
    for (k = 0; k < 700 && st >= 0; k++) st = cf_mbs_group_kin_step(m, gk, dg);
    printf("offset quick return: step %d, t = %.3f s: %s\n", k, dg->t, cf_last_error());
    CHECK(st == CF_ERR_SOLVER);
    CHECK(strstr(cf_last_error(), "structural group 2") && strstr(cf_last_error(), "dead point"));
    double t_dead = 1.5 * M_PI - 2 * asin(0.15);
    CHECK(dg->t > t_dead - 0.011 && dg->t < t_dead); /* the state left at the last good step */
  }
  cf_mbs_group_kin_free(gk);
  cf_mbs_data_free(dg);
  cf_mbs_model_free(m);
  cf_mbs_def_free(&def);
}

/* PRP: the crank about O = (0, 0) from the angle th0, driven at `rate`; block 1 slides along the crank's line,
 * block 2 along y = -1.5 on the ground, the two hinged at the lines' intersection */
static void make_prp(cfMbsDef* def, double th0, double rate) {
  cf_mbs_def_init(def);
  def->opt.dt = 0.01;
  def->opt.redundant = 3;
  def->opt.tol_phi = def->opt.tol_dq = 1e-12;
  double O[3] = {0, 0, 0}, A[3] = {cos(th0), sin(th0), 0}, C[3] = {-1.5 / tan(th0), -1.5, 0};
  double u[3] = {cos(th0), sin(th0), 0}, x[3] = {1, 0, 0}, C2[3] = {C[0] + 0.2 * u[0], C[1] + 0.2 * u[1], 0};
  double C3[3] = {C[0] + 0.2, C[1], 0};
  int crank = add_bar(def, "crank", 1, O, A), b1 = add_bar(def, "block1", 0.2, C, C2), b2 = add_bar(def, "block2", 0.2, C, C3);
  add_rev(def, "O", CF_MBS_GROUND, crank, O);
  add_prism(def, "along_crank", crank, b1, C, u);
  add_prism(def, "along_ground", CF_MBS_GROUND, b2, C, x);
  add_rev(def, "pin", b1, b2, C);
  add_spin(def, 0, rate);
}

static void check_prp(void) {
  cfMbsDef def;
  make_prp(&def, -M_PI / 3, -1.0); /* clockwise from -60 degrees: a second, to -117 degrees */
  cfMbsModel* m = NULL;
  cfMbsData *dg = NULL, *dk = NULL, *dn = NULL;
  cfMbsGroupKin *gk = NULL, *gn = NULL;
  CHECK_OK(cf_mbs_model_create(&def, &m));
  if (m) {
    CHECK_OK(cf_mbs_data_create(m, &dg));
    CHECK_OK(cf_mbs_data_create(m, &dk));
    CHECK_OK(cf_mbs_data_create(m, &dn));
    CHECK_OK(cf_mbs_group_kin_create(m, &gk));
    CHECK_OK(cf_mbs_group_kin_create(m, &gn));
  }
  if (gk && gn && dg && dk && dn) {
    const cfMbsTopology* t = cf_mbs_group_kin_topology(gk);
    CHECK(t->ngroup == 2 && !strcmp(t->group_kind[1], "dyad PRP"));
    cf_mbs_group_kin_set_closed_form(gn, 0);
    int n = 100, ok = 1, b2 = cf_mbs_find_body(m, "block2");
    double e[4] = {0, 0, 0, 0};
    for (int k = 0; k < n && ok; k++) {
      ok = cf_mbs_group_kin_step(m, gk, dg) >= 0 && cf_mbs_kinematic_step(m, dk) >= 0 && cf_mbs_group_kin_step(m, gn, dn) >= 0;
      e[0] = fmax(e[0], maxdiff(m->nq, dg->q, dk->q));
      e[1] = fmax(e[1], maxdiff(m->nq, dg->qd, dk->qd));
      e[2] = fmax(e[2], maxdiff(m->nq, dg->qdd, dk->qdd));
      /* exact: the pin at x = -1.5 / tan(th), th = -pi/3 - t (block 2's frame origin is the pin) */
      double th = -M_PI / 3 - dg->t;
      e[3] = fmax(e[3], fabs(dg->q[m->body_qadr[b2]] + 1.5 / tan(th)));
    }
    CHECK(ok);
    double it = (double)cf_mbs_group_kin_newton_iterations(gk) / n, it_newton = (double)cf_mbs_group_kin_newton_iterations(gn) / n;
    printf("PRP dyad by groups, 1 s: vs global: positions %.1e, velocities %.1e, accelerations %.1e; the pin's x vs "
           "-1.5 / tan(th) %.1e; updates per step %.2f (closed form) vs %.2f\n", e[0], e[1], e[2], e[3], it, it_newton);
    CHECK(e[0] < 1e-10); /* measured 6.7e-16 */
    CHECK(e[1] < 1e-10); /* measured 7.5e-12 */
    CHECK(e[2] < 1e-9);  /* measured 5.9e-12 */
    CHECK(e[3] < 1e-10); /* measured 4.4e-16 */
    CHECK(it_newton > it + 0.5);
  }
  cf_mbs_group_kin_free(gk), cf_mbs_group_kin_free(gn);
  cf_mbs_data_free(dg), cf_mbs_data_free(dk), cf_mbs_data_free(dn);
  cf_mbs_model_free(m);
  cf_mbs_def_free(&def);
  /* counter-clockwise from -60 degrees: the crank's line turns parallel to the ground line at t = pi / 3 */
  make_prp(&def, -M_PI / 3, 1.0);
  m = NULL, dg = NULL, gk = NULL;
  CHECK_OK(cf_mbs_model_create(&def, &m));
  if (m) CHECK_OK(cf_mbs_data_create(m, &dg));
  if (dg) CHECK_OK(cf_mbs_group_kin_create(m, &gk));
  if (gk) {
    int st = CF_OK, k;
    for (k = 0; k < 300 && st >= 0; k++) st = cf_mbs_group_kin_step(m, gk, dg);
    printf("PRP dyad turning parallel: step %d, t = %.3f s: %s\n", k, dg->t, cf_last_error());
    CHECK(st == CF_ERR_SOLVER);
    CHECK(strstr(cf_last_error(), "structural group 2") && strstr(cf_last_error(), "parallel"));
    CHECK(dg->t > M_PI / 3 - 0.011 && dg->t < M_PI / 3);
  }
  cf_mbs_group_kin_free(gk);
  cf_mbs_data_free(dg);
  cf_mbs_model_free(m);
  cf_mbs_def_free(&def);
}

int main(void) {
  check_linkage(1);
  check_linkage(4);
  check_linkage(16);
  check_branch_and_dead_point();
  check_slider_crank();
  check_rpr();
  check_prp();
  TEST_END();
}
