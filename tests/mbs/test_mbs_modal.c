/* Modal bodies in the multibody core (issue 9, host/mbs/mbs_modal.c):
 *  1. a stiff modal body (steel box, consistent mass, cantilever modes clamped at the hinge face,
 *     > 400 Hz) hinged as a pendulum: the reduction's mass, centre and inertia equal the box's in
 *     closed form (2e-14); its period equals the rigid closed-form box's (4.4e-8) and the physical
 *     pendulum's elliptic-integral period times the trapezoidal rule's 1 + (w h)^2/12 (4.5e-7);
 *     energy (kinetic + gravity + elastic) kept within 1e-5 of the swing energy (1.8e-6);
 *  2. a free-floating soft modal body (free-free elastic modes, 378 Hz and up, the six rigid-body
 *     modes left to the frame) spinning and vibrating with no forces keeps its linear momentum to
 *     1e-6 (2e-10 seen) and its angular momentum to 1e-6 relative over 1 s at dt 0.1 ms (7.4e-7
 *     seen; 2.6e-6 at dt 0.2 ms); its elastic energy is not zero; the deformed mesh is written to
 *     VTK. What is left of the angular momentum error is the trapezoidal rule's: it is an
 *     oscillation (no drift) that goes as dt^2 (3.9e-5, 1.0e-5, 2.6e-6, 7.4e-7, 1.7e-7 at dt 0.8,
 *     0.4, 0.2, 0.1, 0.05 ms; 4.4e-8 at 0.025 ms with the Newton tolerances at 1e-11), set by the
 *     elastic modes (w h = 0.47 for the first at 0.2 ms): the rule keeps linear momentum, linear
 *     in qd, up to round-off, but angular momentum, quadratic in (q, qd), only to O(h^2).
 *     cf_mbs_modal_momentum equals sum_a e_a x (M(q) qd)_a with the assembled M(q) to 1e-16, so
 *     the model is consistent. The test checks the dt^2 ratio between 0.2 and 0.1 ms (3.5 seen;
 *     the Newton tolerance 1e-9 adds up to 1.6e-7);
 *  3. the rigid body of the same mass and inertia spinning the same way keeps its angular momentum
 *     to 1e-8 (7e-10 seen at dt 0.2 ms, the trapezoidal rule's (w h)^2 with the slow rigid
 *     rotation), also with 100 times the default penalty. Until the velocity projection solved for
 *     the correction (host/mbs/mbs_kinematics.c, cf_mbs__project) its round-off, proportional to the
 *     penalty, took it to 7e-7 (6e-5 at 100 times): with the default penalty 1e5 mref 4/h^2 it
 *     grows as 1/h^2, which is why the modal body's error first seemed independent of dt (3e-6 at
 *     0.2 ms, 2e-6 at 0.1 ms, 7e-6 at 0.025 ms). */
#include <stdio.h>
#include <string.h>

#include "cf_test.h"
#include "cofem/mbs_modal.h"
#include "cofem/mesh_box.h"

static const double G = 9.81;

static int build_reduction(cfMesh* mesh, double E, double rho, int clamp_xmin, int nmodes, double zeta,
                           cfModel** model, cfReduction* red) {
  if (cf_mesh_box(6, 1, 1, 0.3, 0.05, 0.05, mesh) < 0) return -1;
  cfModelDef def = cf_default_model_def();
  def.E = E, def.nu = 0.3, def.rho = rho;
  def.consistent_mass = clamp_xmin; /* the pendulum: the exact inertia of the box (closed form below) */
  if (cf_model_create(mesh, &def, model) < 0) return -1;
  if (clamp_xmin) {
    const cfNodeSet* s = cf_mesh_find_nset(mesh, "xmin");
    if (!s || cf_model_fix_nodes(*model, s->nodes, s->count, 7) < 0) return -1;
  }
  cfReduceOptions ro = cf_default_reduce_options();
  ro.nmodes = nmodes;
  ro.damping = zeta;
  return cf_reduce(*model, NULL, 0, &ro, red);
}

/* joint angle history: period from the upward crossings of angle = centre */
static double run_pendulum(cfMbsDef* def, double tend, double theta0, double* period, double* ediff, double* escale) {
  cfMbsModel* m = NULL;
  cfMbsData* d = NULL;
  CHECK_OK(cf_mbs_model_create(def, &m));
  if (!m) return -1;
  CHECK_OK(cf_mbs_data_create(m, &d));
  double T0, V0;
  cf_mbs_energy(m, d, &T0, &V0);
  double E0 = T0 + V0, emax = 0, tmax = 0, prev = cf_mbs_joint_angle(m, d, 0) + theta0, tprev = 0;
  double first = -1, last = -1;
  int ncross = 0;
  while (d->t < tend - 1e-12) {
    if (cf_mbs_step(m, d) < 0) {
      CHECK_OK(-1);
      break;
    }
    double a = cf_mbs_joint_angle(m, d, 0) + theta0;
    if (prev < 0 && a >= 0) {
      double tc = tprev + (d->t - tprev) * (-prev) / (a - prev);
      if (first < 0) first = tc;
      last = tc;
      ncross++;
    }
    prev = a, tprev = d->t;
    double T, V;
    cf_mbs_energy(m, d, &T, &V);
    emax = fmax(emax, fabs(T + V - E0));
    tmax = fmax(tmax, T);
    CHECK(d->phi_max < 1e-8);
  }
  *period = ncross > 1 ? (last - first) / (ncross - 1) : 0;
  *ediff = emax, *escale = tmax;
  cf_mbs_data_free(d);
  cf_mbs_model_free(m);
  return 0;
}

static void test_pendulum(void) {
  cfMesh mesh;
  cfModel* model = NULL;
  cfReduction red;
  memset(&red, 0, sizeof red);
  CHECK_OK(build_reduction(&mesh, 210e9, 7850, 1, 8, 0.01, &model, &red));
  printf("stiff box: %d modes, first %.1f Hz, mass %.4f kg\n", red.n, cf_reduction_freq_hz(&red, 0), red.mass);
  CHECK(cf_reduction_freq_hz(&red, 0) > 100);
  double theta0 = 0.3, ph[3] = {0, 0.025, 0.025}, z[3] = {0, 0, 1};
  cfMbsBodyDef fb = cf_mbs_default_body_def();
  snprintf(fb.name, sizeof fb.name, "box");
  cf_mbs_axis_angle(z, -M_PI / 2 + theta0, fb.rot);
  for (int i = 0; i < 3; i++) fb.pos[i] = -(fb.rot[3 * i] * ph[0] + fb.rot[3 * i + 1] * ph[1] + fb.rot[3 * i + 2] * ph[2]);
  cfMbsJointDef j = cf_mbs_default_joint_def();
  snprintf(j.name, sizeof j.name, "hinge");
  j.type = CF_MBS_REVOLUTE, j.body1 = CF_MBS_GROUND, j.body2 = 0;
  memcpy(j.axis, z, sizeof z);

  /* the box 0.3 x 0.05 x 0.05 m of steel in closed form, not from the reduction: mass, centre,
   * inertia about the centre; the consistent mass integrates them exactly, so the reduction's
   * rigid-body properties must equal these */
  const double Lb = 0.3, ab = 0.05, mass = 7850 * Lb * ab * ab;
  const double com[3] = {Lb / 2, ab / 2, ab / 2};
  const double Iref[6] = {mass * (2 * ab * ab) / 12, mass * (Lb * Lb + ab * ab) / 12, mass * (Lb * Lb + ab * ab) / 12,
                          0, 0, 0};
  /* the physical pendulum in closed form: pivot at ph, arm d = |com - ph| = L/2,
   * T = 4 sqrt(I_pivot / (m g d)) K(sin(theta0 / 2)), K by the arithmetic-geometric mean */
  const double dpiv = Lb / 2, Ipiv = Iref[2] + mass * dpiv * dpiv;
  double ka = 1, kb = sqrt(1 - pow(sin(theta0 / 2), 2));
  for (int i = 0; i < 30; i++) {
    double an = (ka + kb) / 2;
    kb = sqrt(ka * kb), ka = an;
  }
  const double T_exact = 4 * sqrt(Ipiv / (mass * G * dpiv)) * M_PI / (2 * ka);
  const double def_dt = 1e-3;
  double per[2], ed[2], es[2];
  for (int flex = 1; flex >= 0; flex--) {
    cfMbsDef def;
    cf_mbs_def_init(&def);
    def.opt.dt = def_dt;
    def.opt.gravity[1] = -G;
    if (flex) {
      cfMbsModalDef md = cf_mbs_default_modal_def();
      md.red = &red, md.X = mesh.X;
      CHECK(cf_mbs_add_modal_body(&def, &fb, &md) == 0);
      const cfMbsBodyDef* b = &def.body[0];
      double ei = 0;
      for (int k = 0; k < 6; k++) ei = fmax(ei, fabs(b->inertia[k] - Iref[k]) / Iref[0]);
      printf("reduction's rigid body: mass %.12g kg (rho V %.12g), com (%.9g, %.9g, %.9g), inertia error %.2e of I_xx\n",
             b->mass, mass, b->com[0], b->com[1], b->com[2], ei);
      CHECK_CLOSE(b->mass, mass, 0, 1e-12); /* measured 0 */
      for (int k = 0; k < 3; k++) CHECK_CLOSE(b->com[k], com[k], 1e-12, 0);
      CHECK(ei < 1e-12); /* measured 2e-14 */
    } else { /* the rigid body: the closed-form box */
      fb.mass = mass;
      memcpy(fb.com, com, sizeof com);
      memcpy(fb.inertia, Iref, sizeof Iref);
      CHECK(cf_mbs_add_body(&def, &fb) == 0);
    }
    CHECK(cf_mbs_add_joint(&def, &j) >= 0);
    run_pendulum(&def, 2.0, theta0, &per[flex], &ed[flex], &es[flex]);
    cf_mbs_def_free(&def);
  }
  printf("pendulum: period flexible %.6f s, rigid %.6f s (%.2e), closed form %.6f s (flexible %+.2e, rigid %+.2e); "
         "energy drift flexible %.2e, rigid %.2e of %.4g J\n",
         per[1], per[0], per[1] / per[0] - 1, T_exact, per[1] / T_exact - 1, per[0] / T_exact - 1, ed[1] / es[1],
         ed[0] / es[0], es[1]);
  CHECK(per[0] > 0.5);
  /* the trapezoidal rule lengthens the period by (w h)^2 / 12 (4.0e-6 here); what is left:
   * measured 4.1e-7 rigid, 4.5e-7 flexible */
  const double T_h = T_exact * (1 + pow(2 * M_PI / T_exact * def_dt, 2) / 12);
  CHECK_CLOSE(per[1], per[0], 0, 2e-7); /* measured 4.4e-8 */
  CHECK_CLOSE(per[0], T_h, 0, 2e-6);
  CHECK_CLOSE(per[1], T_h, 0, 2e-6);
  CHECK(ed[1] < 1e-5 * es[1]); /* measured 1.8e-6 */
  CHECK(ed[0] < 1e-5 * es[0]); /* measured 1.1e-6 */
  /* modal damping: the frame welded to the ground, the first clamped mode started at 1e-6:
   * y1'' + 2 zeta w y1' + w^2 y1 = 0, so successive maxima fall by exp(-2 pi zeta / sqrt(1 - zeta^2))
   * (closed form; the trapezoidal rule adds no damping); zeta the reduction's 0.01, then 0.03 by
   * cfMbsModalDef.damping */
  for (int pass = 0; pass < 2; pass++) {
    const double zeta = pass ? 0.03 : 0.01;
    cfMbsDef def;
    cf_mbs_def_init(&def);
    const double w1 = 2 * M_PI * cf_reduction_freq_hz(&red, 0);
    def.opt.dt = 2 * M_PI / w1 / 200;
    cfMbsModalDef md = cf_mbs_default_modal_def();
    md.red = &red, md.X = mesh.X;
    if (pass) md.damping = zeta;
    CHECK(cf_mbs_add_modal_body(&def, &fb, &md) == 0);
    cfMbsJointDef jf = cf_mbs_default_joint_def();
    snprintf(jf.name, sizeof jf.name, "weld");
    jf.type = CF_MBS_FIXED, jf.body1 = CF_MBS_GROUND, jf.body2 = 0;
    CHECK(cf_mbs_add_joint(&def, &jf) >= 0);
    cfMbsModel* m = NULL;
    cfMbsData* d = NULL;
    CHECK_OK(cf_mbs_model_create(&def, &m));
    if (m) CHECK_OK(cf_mbs_data_create(m, &d));
    if (d) {
      double* y = (double*)cf_mbs_modal_y(m, d, 0); /* the initial condition, set in place */
      y[0] = 1e-6;
      double peaks[16], y_2 = y[0], y_1 = y[0];
      double yd_1 = cf_mbs_modal_yd(m, d, 0)[0], yd_err = 0, yd_max = 0; /* the rates against the steps of y */
      int np = 0;
      for (int k = 0; k < 200 * 12 && np < 12; k++) {
        if (cf_mbs_step(m, d) < 0) {
          CHECK_OK(-1);
          break;
        }
        double y0 = cf_mbs_modal_y(m, d, 0)[0];
        double yd0 = cf_mbs_modal_yd(m, d, 0)[0];
        if (k >= 1) {
          double e = fabs((y0 - y_1) / def.opt.dt - 0.5 * (yd0 + yd_1));
          yd_err = fmax(yd_err, e);
          yd_max = fmax(yd_max, fabs(yd_1));
        }
        yd_1 = yd0;
        if (k >= 2 && y_1 > y_2 && y_1 >= y0) { /* a maximum at the step before: parabola through 3 */
          double den = y_2 - 2 * y_1 + y0;
          peaks[np++] = y_1 - 0.125 * (y0 - y_2) * (y0 - y_2) / den;
        }
        y_2 = y_1, y_1 = y0;
      }
      CHECK(np >= 11);
      /* cf_mbs_modal_yd: the trapezoidal rule's (y1 - y0) / h = (yd0 + yd1) / 2 (measured 5.8e-8 of max |yd|) */
      printf("modal rate: |(y1 - y0) / h - (yd0 + yd1) / 2| <= %.2e of max |yd| %.3e\n", yd_err / yd_max, yd_max);
      CHECK(yd_max > 0 && yd_err <= 1e-6 * yd_max);
      double dec = np >= 11 ? log(peaks[0] / peaks[10]) / 10 : 0, dec_ref = 2 * M_PI * zeta / sqrt(1 - zeta * zeta);
      printf("modal damping zeta %.2f (%s): log decrement per period %.6f, closed form %.6f (%+.2e)\n", zeta,
             pass ? "cfMbsModalDef.damping" : "the reduction's", dec, dec_ref, dec / dec_ref - 1);
      CHECK_CLOSE(dec, dec_ref, 0, 5e-4); /* measured -1.6e-4 (the rule's O(w h)^2 at T/200) */
    }
    cf_mbs_data_free(d);
    cf_mbs_model_free(m);
    cf_mbs_def_free(&def);
  }
  cf_reduction_free(&red);
  cf_model_free(model);
  cf_mesh_free(&mesh);
}

/* momentum of rigid body 0: p = (M qd)_r, L = sum_a e_a x (M qd)_a over r, u, v, w (as cf_mbs_modal_momentum) */
static void rigid_momentum(const cfMbsModel* m, const cfMbsData* d, double p[3], double L[3]) {
  const double* Mb = m->body_Mbar;
  for (int i = 0; i < 3; i++) L[i] = 0;
  for (int al = 0; al < 4; al++) {
    double w[3] = {0, 0, 0};
    for (int be = 0; be < 4; be++)
      for (int i = 0; i < 3; i++) w[i] += Mb[4 * al + be] * d->qd[3 * be + i];
    if (al == 0) memcpy(p, w, 3 * sizeof(double));
    const double* e = d->q + 3 * al;
    L[0] += e[1] * w[2] - e[2] * w[1], L[1] += e[2] * w[0] - e[0] * w[2], L[2] += e[0] * w[1] - e[1] * w[0];
  }
}

/* free box spinning with modal velocities (rigid: the rigid body of the reduction's mass and
 * inertia, same spin), no forces, 1 s; max |L - L0|/|L0| over the steps (component-wise) */
static double free_spin(const cfReduction* red, const cfMesh* mesh, double dt, int rigid, double penalty_factor,
                        int checks) {
  cfMbsDef def;
  cf_mbs_def_init(&def);
  cfMbsBodyDef fb = cf_mbs_default_body_def();
  snprintf(fb.name, sizeof fb.name, "box");
  double ax[3] = {1, 2, 3};
  cf_mbs_axis_angle(ax, 0.4, fb.rot);
  fb.pos[0] = 0.1, fb.vel[0] = 0.1, fb.vel[2] = 0.2;
  fb.omega[0] = 0.5, fb.omega[1] = 2, fb.omega[2] = 1;
  double yd0[6] = {0.05, -0.03, 0.04, 0.02, -0.05, 0.03};
  cfMbsModalDef md = cf_mbs_default_modal_def();
  md.red = red, md.X = mesh->X, md.yd0 = yd0;
  CHECK(cf_mbs_add_modal_body(&def, &fb, &md) == 0);
  if (rigid) {
    fb = def.body[0]; /* mass, com and inertia of the reduction */
    cf_mbs_def_free(&def);
    cf_mbs_def_init(&def);
    CHECK(cf_mbs_add_body(&def, &fb) == 0);
  }
  def.opt.dt = dt;
  if (penalty_factor > 0) def.opt.penalty = penalty_factor * 1e5 * fb.mass * 4 / (dt * dt); /* mref = mass here */
  cfMbsModel* m = NULL;
  cfMbsData* d = NULL;
  CHECK_OK(cf_mbs_model_create(&def, &m));
  if (m) CHECK_OK(cf_mbs_data_create(m, &d));
  if (!d) return INFINITY;
  double p0[3], L0[3], p[3], L[3], dp = 0, dL = 0, umax = 0, T0, V0, T, V, de = 0;
  if (rigid) rigid_momentum(m, d, p0, L0);
  else {
    CHECK(cf_mbs_modal_nmodes(m, 0) == red->n - 6);
    cf_mbs_modal_momentum(m, d, 0, p0, L0);
  }
  cf_mbs_energy(m, d, &T0, &V0);
  while (d->t < 1.0 - 1e-12) {
    if (cf_mbs_step(m, d) < 0) {
      CHECK_OK(-1);
      break;
    }
    if (rigid) rigid_momentum(m, d, p, L);
    else {
      cf_mbs_modal_momentum(m, d, 0, p, L);
      umax = fmax(umax, cf_mbs_modal_elastic_energy(m, d, 0));
    }
    for (int i = 0; i < 3; i++) dp = fmax(dp, fabs(p[i] - p0[i])), dL = fmax(dL, fabs(L[i] - L0[i]));
    cf_mbs_energy(m, d, &T, &V);
    de = fmax(de, fabs(T + V - T0 - V0));
  }
  double np = sqrt(p0[0] * p0[0] + p0[1] * p0[1] + p0[2] * p0[2]), nL = sqrt(L0[0] * L0[0] + L0[1] * L0[1] + L0[2] * L0[2]);
  printf("free %s body, dt %.2g ms%s: |dp|/|p| %.2e, |dL|/|L| %.2e, max elastic energy %.3g J, energy drift %.2e of %.4g J\n",
         rigid ? "rigid" : "modal", dt * 1e3, penalty_factor > 0 ? ", 100 x penalty" : "", dp / np, dL / nL, umax,
         de / (T0 + V0), T0 + V0);
  CHECK(dp <= 3e-9 * np); /* measured 8.3e-10 at most */
  if (!rigid) CHECK(umax > 1e-4);
  CHECK(de < 3e-5 * (T0 + V0)); /* measured 8.0e-6 at most (modal, 0.2 ms) */
  if (checks) {
    CHECK_OK(cf_mbs_modal_write_vtu(m, d, 0, NULL, mesh, "test_mbs_modal_free.vtu"));
    FILE* f = fopen("test_mbs_modal_free.vtu", "r");
    CHECK(f != NULL);
    if (f) fclose(f), remove("test_mbs_modal_free.vtu");
  }
  cf_mbs_data_free(d);
  cf_mbs_model_free(m);
  cf_mbs_def_free(&def);
  return dL / nL;
}

static void test_free_floating(void) {
  cfMesh mesh;
  cfModel* model = NULL;
  cfReduction red;
  memset(&red, 0, sizeof red);
  CHECK_OK(build_reduction(&mesh, 2e8, 1000, 0, 12, 0.0, &model, &red));
  CHECK(red.nrigid == 6);
  printf("soft free box: %d modes (%d rigid), first elastic %.1f Hz\n", red.n, red.nrigid,
         cf_reduction_freq_hz(&red, red.nrigid));
  double e2 = free_spin(&red, &mesh, 2e-4, 0, 0, 1);
  double e1 = free_spin(&red, &mesh, 1e-4, 0, 0, 0);
  printf("modal body: angular momentum error ratio dt 0.2 ms / 0.1 ms %.2f (dt^2: 4)\n", e2 / e1);
  CHECK(e1 <= 1e-6);
  CHECK(e2 <= 4e-6);
  CHECK(e2 > 2.5 * e1 && e2 < 6 * e1); /* the trapezoidal rule's O(h^2) */
  CHECK(free_spin(&red, &mesh, 2e-4, 1, 0, 0) <= 3e-9); /* measured 7.9e-10 */
  CHECK(free_spin(&red, &mesh, 2e-4, 1, 100, 0) <= 3e-9); /* measured 8.1e-10 */
  cf_reduction_free(&red);
  cf_model_free(model);
  cf_mesh_free(&mesh);
}

int main(void) {
  test_pendulum();
  test_free_floating();
  TEST_END();
}
