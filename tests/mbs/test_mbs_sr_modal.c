/* Modal bodies in the semi-recursive formulation (paper 000 sections 2-3; issue 29): a double pendulum of
 * two identical free-free Craig-Bampton bars (0.3 x 0.05 x 0.05 m, E 2e7 Pa: first bending mode near 29 Hz),
 * hinged at frame points (ground - bar 1 at its end, bar 1 - bar 2 at bar 1's other end), released
 * horizontal under gravity with modal velocities, no damping. Checked against the global formulation with
 * the same modal bodies (natural coordinates, paper 000 eq. 14's mass from the inertia invariants), an
 * independent code path for everything but the force evaluation:
 *  - the two runs' trajectories (frame poses and modal amplitudes) after 0.4 s differ by an amount that
 *    shrinks about 4x per halving of dt (both are second-order approximations of one DAE);
 *  - the semi-recursive run keeps the total energy (kinetic + gravity + strain) to the trapezoidal rule's
 *    accuracy, and the modes move (the strain energy is not zero);
 *  - the modal coordinates are coordinates of the formulation: nz = 2 joint angles + 2 x nm amplitudes. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cf_test.h"
#include "cofem/mbs_modal.h"
#include "cofem/mbs_semirecursive.h"
#include "cofem/mesh_box.h"
#include "cofem/status.h"

#define NM 4

static int build_reduction(cfMesh* mesh, cfModel** model, cfReduction* red) {
  if (cf_mesh_box(6, 1, 1, 0.3, 0.05, 0.05, mesh) < 0) return -1;
  cfModelDef def = cf_default_model_def();
  def.E = 2e7, def.nu = 0.3, def.rho = 7850;
  if (cf_model_create(mesh, &def, model) < 0) return -1;
  cfReduceOptions ro = cf_default_reduce_options();
  ro.nmodes = 6 + NM; /* the free-free part: 6 rigid-body modes (the frame carries them), then NM flexible */
  ro.damping = 0;
  return cf_reduce(*model, NULL, 0, &ro, red);
}

static void make_pendulum(cfMbsDef* def, const cfReduction* red, const cfMesh* mesh, double dt) {
  cf_mbs_def_init(def);
  def->opt.dt = dt;
  def->opt.gravity[1] = -9.81;
  def->opt.tol_phi = 1e-11, def->opt.tol_dq = 1e-11;
  static const double yd0[2][NM] = {{0.02, -0.01, 0.015, 0.005}, {-0.01, 0.02, 0.005, -0.015}};
  for (int i = 0; i < 2; i++) {
    cfMbsBodyDef fb = cf_mbs_default_body_def();
    snprintf(fb.name, sizeof fb.name, "bar%d", i + 1);
    fb.pos[0] = 0.3 * i, fb.pos[1] = -0.025, fb.pos[2] = -0.025; /* the box's corner: the hinge at (0.3 i, 0, 0) */
    cfMbsModalDef md = cf_mbs_default_modal_def();
    md.red = red, md.X = mesh->X, md.yd0 = yd0[i];
    int st = cf_mbs_add_modal_body(def, &fb, &md);
    if (st < 0) printf("%s: %s\n", fb.name, cf_last_error());
    CHECK(st == i); /* the body id */
    cfMbsJointDef j = cf_mbs_default_joint_def();
    snprintf(j.name, sizeof j.name, "hinge%d", i + 1);
    j.type = CF_MBS_REVOLUTE, j.body1 = i ? 0 : CF_MBS_GROUND, j.body2 = i;
    j.point[0] = 0.3 * i, j.point[1] = 0, j.point[2] = 0;
    j.axis[0] = 0, j.axis[1] = 0, j.axis[2] = 1;
    CHECK(cf_mbs_add_joint(def, &j) >= 0);
  }
}

/* both formulations to t_end; out: [global, semi] frame coordinates and amplitudes; returns the
 * semi-recursive run's energy drift / energy scale, and its largest strain energy */
static double run_both(const cfReduction* red, const cfMesh* mesh, double dt, double t_end, double* diff, double* umax,
                       int* nz) {
  cfMbsDef def;
  make_pendulum(&def, red, mesh, dt);
  cfMbsModel* m = NULL;
  cfMbsData *dg = NULL, *ds = NULL;
  cfMbsSr* sr = NULL;
  double drift = INFINITY;
  *diff = INFINITY, *umax = 0;
  CHECK_OK(cf_mbs_model_create(&def, &m));
  if (m) {
    CHECK_OK(cf_mbs_data_create(m, &dg));
    CHECK_OK(cf_mbs_data_create(m, &ds));
  }
  if (ds) {
    int st = cf_mbs_sr_create(m, ds, &sr);
    if (st < 0) printf("semi-recursive: %s\n", cf_last_error());
    CHECK_OK(st);
  }
  if (sr) {
    *nz = cf_mbs_sr_nz(sr);
    double T0, V0, T, V, de = 0, scale;
    cf_mbs_energy(m, ds, &T0, &V0);
    scale = fabs(T0) + fabs(V0);
    int ok = 1;
    long n = lround(t_end / dt);
    for (long k = 0; k < n && ok; k++) {
      ok = cf_mbs_step(m, dg) >= 0 && cf_mbs_sr_step(m, sr, ds) >= 0;
      cf_mbs_energy(m, ds, &T, &V);
      de = fmax(de, fabs(T + V - T0 - V0)), scale = fmax(scale, fabs(T0) + fabs(V0) + T); /* released at rest: T's peak */
      for (int i = 0; i < 2; i++) *umax = fmax(*umax, cf_mbs_modal_elastic_energy(m, ds, i));
    }
    if (!ok) printf("dt %g: %s\n", dt, cf_last_error());
    CHECK(ok);
    *diff = 0;
    for (int i = 0; i < m->nq; i++) *diff = fmax(*diff, fabs(dg->q[i] - ds->q[i]));
    drift = de / scale;
  }
  cf_mbs_sr_free(sr);
  cf_mbs_data_free(dg), cf_mbs_data_free(ds);
  cf_mbs_model_free(m);
  cf_mbs_def_free(&def);
  return drift;
}

int main(void) {
  cfMesh mesh;
  cfModel* model = NULL;
  cfReduction red;
  memset(&mesh, 0, sizeof mesh), memset(&red, 0, sizeof red);
  CHECK_OK(build_reduction(&mesh, &model, &red));
  printf("reduction: %d vectors, %d rigid, first flexible %.1f Hz\n", red.n, red.nrigid, cf_reduction_freq_hz(&red, red.nrigid));
  const double dts[3] = {2e-3, 1e-3, 5e-4};
  double diff[3], drift[3], umax[3];
  int nz = 0;
  for (int i = 0; i < 3; i++) {
    drift[i] = run_both(&red, &mesh, dts[i], 0.4, &diff[i], &umax[i], &nz);
    printf("dt %.1e s: semi-recursive (%d coordinates) vs global after 0.4 s: max |dq| %.3e; energy drift %.2e; "
           "largest strain energy %.3g J\n", dts[i], nz, diff[i], drift[i], umax[i]);
  }
  CHECK(nz == 2 + 2 * NM);
  for (int i = 0; i + 1 < 3; i++) {
    double r = diff[i] / diff[i + 1];
    printf("  ratio per halving %.2f\n", r);
    CHECK(r > 3 && r < 5.5); /* second order: measured 4.20, 4.07 */
  }
  CHECK(diff[2] < 2e-5);  /* m or modal amplitude: measured 5.3e-6 at dt 0.5 ms */
  CHECK(drift[2] < 1e-5); /* measured 2.3e-6 of the largest kinetic energy */
  CHECK(umax[2] > 1e-3);  /* the modes move: measured 5.9e-3 J (the kinetic energy peaks near 0.9 J) */
  cf_reduction_free(&red);
  cf_model_free(model);
  cf_mesh_free(&mesh);
  TEST_END();
}
