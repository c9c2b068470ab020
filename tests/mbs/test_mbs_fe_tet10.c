/* FE bodies of mechanisms on quadratic (10-node) tetrahedra (issue 30 item 1; host/mbs/mbs_fe.c):
 * the steel lug in quadratic tetrahedra (scenes/lug_pull_o2.json, meshes/lug_o2.msh) hung at its
 * eye by a revolute joint at the 'load' node set and released 0.4 rad off the vertical swings as the
 * compound pendulum of its mass. For every path that takes tet10:
 *  1. "corotational" with the Newton coupling (the reference), with the linear coupling ("factor":
 *     "exact") and with the linear coupling's PCG ("factor": "pcg", which assembles K_R for quadratic
 *     parts): the period against the compound pendulum of the node masses (closed form with the
 *     amplitude series; mass, centre and I_pin summed over the nodes here, independent of the
 *     mechanism code); the energy kept (generalized-alpha, rho_inf 0.9, dt 4 ms);
 *     "lumped" (HRZ node masses, everything factored by the multibody integrator: the same equations
 *     as the Newton coupling, 8x its cost here) over the first 60 steps against the Newton coupling's
 *     swing angle;
 *  2. the corotational body with the consistent mass: the period against the compound pendulum of
 *     the consistent mass matrix's own inertia (sum_ab M_ab (X_a - P).(X_b - P) over the model's
 *     blocks, the mass the solver never forms this way);
 *  3. the Craig-Bampton modal body of the same tet10 scene (24 modes): the same period as the
 *     corotational FE body (a third formulation of the same part);
 *  4. the matrix-free path does not exist for tet10: a linear-coupling run reports it took the
 *     assembled one (it runs; checked by 1). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cf_test.h"
#include "cofem/mbs_fe.h"
#include "cofem/modal_part.h"
#include "lug_pendulum.h"
#include "swing_period.h"

static const char* kPath = COFEM_SOURCE_DIR "/scenes/mbs/test_fe_tet10.json"; /* for relative paths only */

static void lug_json(char* out, size_t n, const char* scene, const char* flexible, double theta0, double dt,
                     const char* coupling) {
  snprintf(out, n,
           "{\"gravity\": [0, 0, -9.81],\n"
           " \"bodies\": [{\"name\": \"lug\", \"flexible\": {\"scene\": \"%s\", %s},"
           " \"rotation\": {\"axis\": [0, 1, 0], \"angle\": %.17g}}],\n"
           " \"joints\": [{\"name\": \"pin\", \"type\": \"revolute\", \"body1\": \"ground\", \"body2\": \"lug\", "
           "\"node2\": \"load\", \"axis\": [0, 1, 0]}],\n"
           " \"time\": {\"dt\": %g, \"end\": 1.0}, \"solver\": {\"coupling\": \"%s\"}}\n",
           scene, flexible, theta0, dt, coupling);
}

enum { NSTEP = 260, NLUMPED = 60 }; /* 1.8 periods at dt 4 ms: two upward crossings of the swing's centre */
static double g_ang[NSTEP + 1], g_ref[NSTEP + 1];

/* period and energy drift (max |E - E0| relative to the largest kinetic energy) of a swing */
static int run_swing(const char* json, int modal, int nstep, double dt, double* period, double* drift) {
  *period = 0, *drift = INFINITY;
  cfMbsScene s;
  int st = cf_mbs_scene_parse(json, kPath, &s);
  CHECK_OK(st);
  if (st < 0) return st;
  cfMbsModel* m = NULL;
  cfMbsData* d = NULL;
  CHECK_OK(st = cf_mbs_model_create(&s.def, &m));
  if (m) CHECK_OK(st = cf_mbs_data_create(m, &d));
  if (!d) {
    cf_mbs_model_free(m);
    cf_mbs_scene_free(&s);
    return -1;
  }
  double T0, V0, emax = 0, tmax = 0;
  cf_mbs_energy(m, d, &T0, &V0);
  const int ib = modal ? 0 : cf_mbs_fe_index(m, s.flex_body[0]);
  g_ang[0] = modal ? cf_mbs_joint_angle(m, d, 0) : swing_angle(m, d, ib);
  int k;
  for (k = 1; k <= nstep; k++) {
    if ((st = cf_mbs_step(m, d)) < 0) {
      CHECK_OK(st);
      break;
    }
    double T, V;
    cf_mbs_energy(m, d, &T, &V);
    g_ang[k] = modal ? cf_mbs_joint_angle(m, d, 0) : swing_angle(m, d, ib);
    emax = fmax(emax, fabs(T + V - T0 - V0)), tmax = fmax(tmax, T);
  }
  *period = swing_period(g_ang, k - 1, dt);
  *drift = emax / tmax;
  cf_mbs_data_free(d);
  cf_mbs_model_free(m);
  cf_mbs_scene_free(&s);
  return st;
}

/* the compound pendulum's period, I_pin from the node masses (consistent = 0) or from the consistent
 * mass blocks: T = 2 pi sqrt(I / (m g d)) (1 + a^2/16 + 11 a^4/3072) */
static double compound_period(const char* json, int consistent, double theta0) {
  cfMbsScene s;
  CHECK_OK(cf_mbs_scene_parse(json, kPath, &s));
  if (s.nflex != 1) return 0;
  const cfModel* fem = s.flex[0]->model;
  CHECK(fem->npe == 10);
  double mass, c[3], P[3], Iy;
  node_pendulum(fem, &s.flex[0]->scene.mesh, &mass, c, P, &Iy);
  if (consistent) { /* sum_ab M_ab over the blocks: mass, first moment, I about the pin's y axis */
    double mc = 0, s1[3] = {0, 0, 0}, I = 0;
    for (int a = 0; a < fem->nnode; a++)
      for (int p = fem->row_ptr[a]; p < fem->row_ptr[a + 1]; p++) {
        const double Mab = fem->Mblk[p], *Xa = fem->X + 3 * a, *Xb = fem->X + 3 * fem->col[p];
        mc += Mab;
        for (int i = 0; i < 3; i++) s1[i] += Mab * Xa[i];
        I += Mab * ((Xa[0] - P[0]) * (Xb[0] - P[0]) + (Xa[2] - P[2]) * (Xb[2] - P[2]));
      }
    printf("  consistent mass blocks: mass %.6f kg (node masses %.6f), I_pin %.6e (node masses %.6e)\n", mc, mass, I, Iy);
    mass = mc, Iy = I;
    for (int i = 0; i < 3; i++) c[i] = s1[i] / mc;
  }
  cf_mbs_scene_free(&s);
  const double dist = hypot(c[0] - P[0], c[2] - P[2]), amp = theta0 + atan2(c[0] - P[0], P[2] - c[2]);
  return 2 * M_PI * sqrt(Iy / (mass * 9.81 * dist)) * (1 + amp * amp / 16 + 11 * pow(amp, 4) / 3072);
}

int main(void) {
  char json[4096];
  const double theta0 = -0.4, dt = 4e-3;
  const char* lumped_scene = "../lug_pull_o2.json";
  lug_json(json, sizeof json, lumped_scene, "\"formulation\": \"lumped\"", theta0, dt, "newton");
  const double T_exp = compound_period(json, 0, theta0);
  printf("tet10 lug (meshes/lug_o2.msh), HRZ node masses: compound pendulum %.6f s\n", T_exp);

  /* 1. every corotational path that takes tet10; the lumped body over the first steps */
  static const struct {
    const char *name, *flexible, *coupling;
    double tol_T, tol_e; /* bounds; measured values beside them */
  } kPath10[] = {
      {"corotational, Newton", "\"formulation\": \"corotational\"", "newton", 6e-4, 1e-3}, /* measured 2.3e-4, 3.0e-4 */
      {"corotational, linear (exact)", "\"formulation\": \"corotational\", \"factor\": \"exact\"", "linear", 6e-4,
       1e-3}, /* measured 2.3e-4, 2.6e-4 */
      {"corotational, linear (pcg)", "\"formulation\": \"corotational\", \"factor\": \"pcg\", \"tol\": 1e-6", "linear",
       6e-4, 1e-3}, /* measured 2.3e-4, 2.6e-4 */
  };
  double T_newton = 0, T, drift;
  for (size_t v = 0; v < sizeof kPath10 / sizeof kPath10[0]; v++) {
    lug_json(json, sizeof json, lumped_scene, kPath10[v].flexible, theta0, dt, kPath10[v].coupling);
    double t0 = cf_wall_time();
    CHECK_OK(run_swing(json, 0, NSTEP, dt, &T, &drift));
    printf("tet10 lug pendulum, %s, dt %g s: period %.6f s (%+.2e from the compound pendulum), energy drift %.2e; "
           "%.2f ms/step\n", kPath10[v].name, dt, T, T / T_exp - 1, drift, 1e3 * (cf_wall_time() - t0) / NSTEP);
    CHECK_CLOSE(T, T_exp, 0, kPath10[v].tol_T);
    CHECK(drift < kPath10[v].tol_e);
    if (v == 0) {
      T_newton = T;
      memcpy(g_ref, g_ang, sizeof g_ref);
    }
  }
  /* the lumped body: the Newton coupling's equations, every coordinate factored with the mechanism */
  lug_json(json, sizeof json, lumped_scene, "\"formulation\": \"lumped\"", theta0, dt, "newton");
  double t0 = cf_wall_time();
  CHECK_OK(run_swing(json, 0, NLUMPED, dt, &T, &drift));
  double dmax = 0;
  for (int k = 0; k <= NLUMPED; k++) dmax = fmax(dmax, fabs(g_ang[k] - g_ref[k]));
  printf("tet10 lug pendulum, lumped: swing angle over %d steps within %.2e rad of the Newton coupling's (amplitude "
         "%.2f rad); %.2f ms/step\n", NLUMPED, dmax, fabs(theta0), 1e3 * (cf_wall_time() - t0) / NLUMPED);
  CHECK(dmax < 1e-8); /* measured 2.7e-11 */

  /* 2. the consistent mass */
  lug_json(json, sizeof json, "../../tests/data/fe/lug_o2_consistent.json", "\"formulation\": \"corotational\"", theta0,
           dt, "newton");
  const double T_cons = compound_period(json, 1, theta0);
  CHECK_OK(run_swing(json, 0, NSTEP, dt, &T, &drift));
  printf("tet10 lug pendulum, corotational, consistent mass: period %.6f s, compound pendulum of the mass blocks "
         "%.6f s (%+.2e); energy drift %.2e\n", T, T_cons, T / T_cons - 1, drift);
  CHECK_CLOSE(T, T_cons, 0, 6e-4); /* measured 2.3e-4 */
  CHECK(drift < 1e-3);             /* measured 3.0e-4 */

  /* 3. the modal body of the same tet10 scene */
  lug_json(json, sizeof json, lumped_scene, "\"interface\": [\"load\"], \"modes\": 24, \"damping\": 0", theta0, dt,
           "newton");
  CHECK_OK(run_swing(json, 1, NSTEP, dt, &T, &drift));
  printf("tet10 lug pendulum, modal (24 modes): period %.6f s; corotational / modal - 1 = %.2e\n", T, T_newton / T - 1);
  CHECK_CLOSE(T_newton, T, 0, 5e-5); /* measured 1.2e-5 */
  TEST_END();
}
