/* Dynamics: (1) small-amplitude free vibration of a cantilever started in its first mode has the
 * period of the first eigenfrequency of the same mesh (dense generalized eigenproblem
 * K phi = w^2 M phi, LAPACKE dsygv, with K and M formed in this test from the element formulas,
 * not taken from the model) times the integrator's closed-form period ratio (backward Euler
 * w h / atan(w h), trapezoidal w h / (2 atan(w h / 2))), and backward Euler's amplitude decays as
 * (1 + (w h)^2)^(-n/2); (2) total energy never increases once
 * the external load is gone (large motion, dt 0.01 s); (3) the warm start takes fewer PCG
 * iterations than the cold start on the same run; (4) results do not depend on the thread count. */
#include <lapacke.h>
#include <omp.h>
#include <string.h>

#include "cf_test.h"
#include "cofem/fem.h"
#include "cofem/mesh_box.h"
#include "cofem/scene.h"

static cfModel* beam_model(cfMesh* mesh, cfModelDef* def) {
  cfModel* m;
  CHECK_OK(cf_model_create(mesh, def, &m));
  const cfNodeSet* clamp = cf_mesh_find_nset(mesh, "xmin");
  CHECK_OK(cf_model_fix_nodes(m, clamp->nodes, clamp->count, 7));
  return m;
}

/* The element stiffness V B^T D B of a linear tet, written here from the formulas (not the
 * model's m->Ke): grad N_a for a = 1..3 are the rows of [X1-X0 X2-X0 X3-X0]^-1, grad N_0 = -sum;
 * K_(ai)(bj) = V (lambda g_ai g_bj + mu g_aj g_bi + mu delta_ij g_a . g_b) */
static void tet_stiffness(const double* X, const int* t, double lam, double mu, double* K, double* vol) {
  double D[9];
  for (int c = 0; c < 3; c++)
    for (int r = 0; r < 3; r++) D[3 * r + c] = X[3 * t[c + 1] + r] - X[3 * t[0] + r];
  double det = D[0] * (D[4] * D[8] - D[5] * D[7]) - D[1] * (D[3] * D[8] - D[5] * D[6]) +
               D[2] * (D[3] * D[7] - D[4] * D[6]);
  double Inv[9] = {(D[4] * D[8] - D[5] * D[7]) / det, (D[2] * D[7] - D[1] * D[8]) / det,
                   (D[1] * D[5] - D[2] * D[4]) / det, (D[5] * D[6] - D[3] * D[8]) / det,
                   (D[0] * D[8] - D[2] * D[6]) / det, (D[2] * D[3] - D[0] * D[5]) / det,
                   (D[3] * D[7] - D[4] * D[6]) / det, (D[1] * D[6] - D[0] * D[7]) / det,
                   (D[0] * D[4] - D[1] * D[3]) / det};
  double g[4][3];
  for (int i = 0; i < 3; i++) {
    g[0][i] = 0;
    for (int a = 1; a < 4; a++) g[0][i] -= (g[a][i] = Inv[3 * (a - 1) + i]);
  }
  double V = fabs(det) / 6;
  for (int a = 0; a < 4; a++)
    for (int b = 0; b < 4; b++) {
      double gg = g[a][0] * g[b][0] + g[a][1] * g[b][1] + g[a][2] * g[b][2];
      for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
          K[12 * (3 * a + i) + 3 * b + j] = V * (lam * g[a][i] * g[b][j] + mu * g[a][j] * g[b][i] + (i == j ? mu * gg : 0));
    }
  *vol = V;
}

/* first eigenpair of the free DOFs of K phi = w^2 M phi, with K and M formed here from the mesh,
 * E, nu, rho (tet_stiffness; mass rho V / 4 per vertex, or rho V / 20 (1 + delta_ab) consistent),
 * not from the model, so that a wrong K or M in the model does not cancel against the
 * dynamics; returns omega, mode written into phi [ndof] */
static double first_mode(const cfModel* m, const cfModelDef* def, double* phi) {
  double E = def->E, nu = def->nu, lam = E * nu / ((1 + nu) * (1 - 2 * nu)), mu = E / (2 * (1 + nu));
  int* map = malloc(sizeof(int) * m->ndof);
  int nf = 0;
  for (int i = 0; i < m->ndof; i++) map[i] = m->fixed[i] ? -1 : nf++;
  double* K = calloc((size_t)nf * nf, sizeof(double));
  double* M = calloc((size_t)nf * nf, sizeof(double));
  for (int e = 0; e < m->ntet; e++) {
    double Ke[144], V;
    const int* t = m->tet + 4 * e;
    tet_stiffness(m->X, t, lam, mu, Ke, &V);
    for (int r = 0; r < 12; r++)
      for (int c = 0; c < 12; c++) {
        int gr = map[3 * t[r / 3] + r % 3], gc = map[3 * t[c / 3] + c % 3];
        if (gr >= 0 && gc >= 0) K[(size_t)gr * nf + gc] += Ke[12 * r + c];
      }
    for (int a = 0; a < 4; a++)
      for (int b = 0; b < 4; b++) {
        double mab = def->consistent_mass ? def->rho * V / 20 * (a == b ? 2 : 1) : (a == b ? def->rho * V / 4 : 0);
        for (int i = 0; i < 3; i++) {
          int gr = map[3 * t[a] + i], gc = map[3 * t[b] + i];
          if (gr >= 0 && gc >= 0) M[(size_t)gr * nf + gc] += mab;
        }
      }
  }
  double* w = malloc(sizeof(double) * nf);
  int info = LAPACKE_dsygv(LAPACK_ROW_MAJOR, 1, 'V', 'U', nf, K, nf, M, nf, w);
  CHECK(info == 0);
  for (int i = 0; i < m->ndof; i++) phi[i] = map[i] >= 0 ? K[(size_t)map[i] * nf + 0] : 0.0;
  double omega = sqrt(w[0]);
  free(map); free(K); free(M); free(w);
  return omega;
}

int main(void) {
  /* (1) period of the first mode */
  {
    cfMesh mesh;
    CHECK_OK(cf_mesh_box(10, 2, 2, 1.0, 0.1, 0.1, &mesh));
    cfModelDef def = cf_default_model_def();
    def.pcg_tol = 1e-12;
    cfModel* m0 = beam_model(&mesh, &def);
    cfData* d;
    double* phi = malloc(sizeof(double) * m0->ndof);
    double omega = first_mode(m0, &def, phi);
    double T = 2 * M_PI / omega;
    cf_model_free(m0);
    def.dt = T / 400;
    cfModel* m = beam_model(&mesh, &def);
    CHECK_OK(cf_data_create(m, &d));
    /* tip amplitude 1 mm: small against the 1 m length */
    double amax = 0;
    for (int i = 0; i < m->ndof; i++) amax = fmax(amax, fabs(phi[i]));
    for (int i = 0; i < m->ndof; i++) d->x[i] = m->X[i] + 1e-3 * phi[i] / amax;
    int probe = -1;
    for (int i = 0; i < m->ndof; i++)
      if (fabs(phi[i]) == amax) probe = i;
    double prev = d->x[probe] - m->X[probe];
    double crossings[8];
    int nc = 0;
    for (int k = 0; k < 2000 && nc < 5; k++) {
      CHECK(cf_step(m, d) == CF_OK);
      double cur = d->x[probe] - m->X[probe];
      if ((prev > 0) != (cur > 0)) /* linear interpolation of the zero crossing */
        crossings[nc++] = d->t - def.dt * cur / (cur - prev);
      prev = cur;
    }
    CHECK(nc == 5);
    double T_sim = (crossings[4] - crossings[0]) / 2;
    printf("first mode: %.3f Hz from the eigenproblem, period %.6e s; simulated period %.6e s (%+.3e)\n",
           omega / (2 * M_PI), T, T_sim, (T_sim - T) / T);
    /* backward Euler's discrete period: phase atan(w h) per step, T_h / T = w h / atan(w h) (+8.2e-5
     * at T/400); measured +8.13e-5 against the eigenperiod */
    double wh = omega * def.dt, be_ratio = wh / atan(wh);
    printf("  backward Euler's closed-form period ratio %.6e: simulated / closed form - 1 = %+.2e\n", be_ratio - 1,
           T_sim / (T * be_ratio) - 1);
    CHECK_CLOSE(T_sim, T, 0, 2.5e-4);         /* measured 8.1e-5 */
    CHECK_CLOSE(T_sim, T * be_ratio, 0, 4e-6); /* measured -9.5e-7 */
    cf_data_free(d);
    cf_model_free(m);
    /* Newmark average acceleration at a coarse dt = T/40: period within 1% and no numerical
     * damping (amplitude kept over 5 periods), where backward Euler loses most of it */
    for (int integ = 0; integ <= 1; integ++) {
      def.integrator = integ;
      def.dt = T / 40;
      m = beam_model(&mesh, &def);
      CHECK_OK(cf_data_create(m, &d));
      for (int i = 0; i < m->ndof; i++) d->x[i] = m->X[i] + 1e-3 * phi[i] / amax;
      double a0 = fabs(d->x[probe] - m->X[probe]), amp_last = 0;
      prev = d->x[probe] - m->X[probe];
      nc = 0;
      for (int k = 0; k < 200; k++) {
        CHECK(cf_step(m, d) == CF_OK);
        double cur = d->x[probe] - m->X[probe];
        if ((prev > 0) != (cur > 0) && nc < 8) crossings[nc++] = d->t - def.dt * cur / (cur - prev);
        if (k >= 160) amp_last = fmax(amp_last, fabs(cur));
        prev = cur;
      }
      double Tn = (crossings[nc - 1] - crossings[0]) / ((nc - 1) / 2.0);
      printf("%s at dt = T/40: period error %+.4e, amplitude after 5 periods %.4f of the initial\n",
             integ ? "Newmark" : "backward Euler", (Tn - T) / T, amp_last / a0);
      /* closed forms of the schemes on an undamped oscillator (w h = 2 pi / 40): backward Euler
       * x_n+1 = x_n / (1 - i w h): phase atan(w h), modulus (1 + (w h)^2)^-1/2 per step; the
       * trapezoidal rule: phase 2 atan(w h / 2), modulus 1 */
      double wh40 = omega * def.dt, ratio = integ ? wh40 / (2 * atan(wh40 / 2)) : wh40 / atan(wh40);
      double amp_ref = integ ? 1.0 : pow(1 + wh40 * wh40, -160 / 2.0); /* largest |x| from step 160 on */
      printf("  closed form: period ratio - 1 = %+.4e (simulated / closed - 1 = %+.2e), amplitude %.4f (%+.2e)\n",
             ratio - 1, Tn / (T * ratio) - 1, amp_ref, amp_last / a0 / amp_ref - 1);
      CHECK_CLOSE(Tn / T, ratio, 0, 4e-5); /* measured +1.7e-6 (Newmark), +9.5e-6 (backward Euler) */
      if (integ) {
        CHECK(amp_last / a0 > 0.995); /* no numerical damping; sampled maxima of a sine at T/40 */
        CHECK(amp_last / a0 < 1.001);  /* measured 0.9984 */
      } else {
        CHECK_CLOSE(amp_last / a0, amp_ref, 0, 0.03); /* backward Euler damps: measured -1.3e-2 */
      }
      cf_data_free(d);
      cf_model_free(m);
    }
    def.integrator = 0;
    free(phi);
    cf_mesh_free(&mesh);
  }
  /* (2) a large swing: soft beam, tip impulse for 0.05 s, then free; dt 0.01 s */
  {
    cfMesh mesh;
    CHECK_OK(cf_mesh_box(12, 2, 2, 1.2, 0.05, 0.05, &mesh));
    cfModelDef def = cf_default_model_def();
    def.E = 5e7;
    def.rho = 1000;
    def.pcg_tol = 1e-9;
    cfModel* m = beam_model(&mesh, &def);
    cfData* d;
    CHECK_OK(cf_data_create(m, &d));
    const cfNodeSet* tip = cf_mesh_find_nset(&mesh, "xmax");
    double e_prev = INFINITY, max_tip = 0;
    int increases = 0;
    for (int k = 0; k < 150; k++) {
      memset(d->f_ext, 0, sizeof(double) * m->ndof);
      if (k < 5)
        for (int i = 0; i < tip->count; i++) d->f_ext[3 * tip->nodes[i] + 2] = -150.0 / tip->count;
      CHECK(cf_step(m, d) >= 0);
      for (int i = 0; i < m->ndof; i++) CHECK(isfinite(d->x[i]));
      double u[3];
      cf_set_displacement(&mesh, tip, d->x, u);
      max_tip = fmax(max_tip, sqrt(u[0] * u[0] + u[2] * u[2]));
      double e = cf_kinetic_energy(m, d) + cf_strain_energy(m, d);
      if (k >= 5 && e > e_prev * (1 + 1e-9)) increases++;
      e_prev = e;
    }
    printf("large swing: max tip displacement %.3f m, final energy %.4g J, %d energy increases\n", max_tip,
           e_prev, increases);
    CHECK(max_tip > 0.2); /* large rotation regime */
    CHECK(increases == 0);
    cf_data_free(d);
    cf_model_free(m);
    cf_mesh_free(&mesh);
  }
  /* (3) warm vs cold start on a steel cantilever whose tip load ramps up (a slow pull, as in the
   * interactive demo): same trajectory, fewer iterations warm */
  {
    cfMesh mesh;
    CHECK_OK(cf_mesh_box(12, 2, 2, 1.2, 0.05, 0.05, &mesh));
    cfModelDef def = cf_default_model_def();
    def.pcg_tol = 1e-6;
    long iters[2];
    double tipz[2];
    for (int warm = 0; warm <= 1; warm++) {
      def.warm_start = warm;
      cfModel* m = beam_model(&mesh, &def);
      cfData* d;
      CHECK_OK(cf_data_create(m, &d));
      const cfNodeSet* tip = cf_mesh_find_nset(&mesh, "xmax");
      for (int k = 0; k < 60; k++) {
        for (int i = 0; i < tip->count; i++) d->f_ext[3 * tip->nodes[i] + 2] = -4000.0 * k / 100 / tip->count;
        CHECK(cf_step(m, d) >= 0);
      }
      double u[3];
      cf_set_displacement(&mesh, tip, d->x, u);
      iters[warm] = d->pcg_iters_total;
      tipz[warm] = u[2];
      cf_data_free(d);
      cf_model_free(m);
    }
    printf("ramped pull, 60 steps: PCG iterations warm %ld, cold %ld (%.2f); tip w %.6e / %.6e\n", iters[1],
           iters[0], (double)iters[1] / iters[0], tipz[1], tipz[0]);
    CHECK(iters[1] < iters[0]);
    CHECK_CLOSE(tipz[1], tipz[0], 0, 1e-4);
    cf_mesh_free(&mesh);
  }
  {
    cfMesh mesh;
    cfModelDef def = cf_default_model_def();
    /* (4) thread count: 1 thread vs 2 threads give bitwise identical positions, on a mesh large
     * enough that every parallel loop is actually split */
    CHECK_OK(cf_mesh_box(60, 6, 6, 1.2, 0.12, 0.12, &mesh));
    double* xs[2];
    for (int th = 1; th <= 2; th++) {
      omp_set_num_threads(th);
      cfModel* m = beam_model(&mesh, &def);
      cfData* d;
      CHECK_OK(cf_data_create(m, &d));
      const cfNodeSet* tip = cf_mesh_find_nset(&mesh, "xmax");
      for (int k = 0; k < 20; k++) {
        memset(d->f_ext, 0, sizeof(double) * m->ndof);
        for (int i = 0; i < tip->count; i++) d->f_ext[3 * tip->nodes[i] + 2] = -40.0 / tip->count;
        cf_step(m, d);
      }
      xs[th - 1] = malloc(sizeof(double) * m->ndof);
      memcpy(xs[th - 1], d->x, sizeof(double) * m->ndof);
      CHECK(memcmp(xs[0], xs[th - 1], sizeof(double) * m->ndof) == 0);
      cf_data_free(d);
      cf_model_free(m);
    }
    free(xs[0]);
    free(xs[1]);
    cf_mesh_free(&mesh);
  }
  TEST_END();
}
