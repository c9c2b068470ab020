/* Dynamics: (1) small-amplitude free vibration of a cantilever started in its first mode has the
 * period of the first eigenfrequency of the same mesh (dense generalized eigenproblem
 * K phi = w^2 M phi, LAPACKE dsygv) within 1% at small dt; (2) total energy never increases once
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

/* first eigenpair of the free DOFs; returns omega, mode written into phi [ndof] */
static double first_mode(const cfModel* m, cfData* d, double* phi) {
  cf_data_reset(m, d);
  cf_stage_elastic(m, d); /* K_R at rest = K */
  int* map = malloc(sizeof(int) * m->ndof);
  int nf = 0;
  for (int i = 0; i < m->ndof; i++) map[i] = m->fixed[i] ? -1 : nf++;
  double* K = calloc((size_t)nf * nf, sizeof(double));
  double* M = calloc((size_t)nf * nf, sizeof(double));
  for (int e = 0; e < m->ntet; e++)
    for (int r = 0; r < 12; r++)
      for (int c = 0; c < 12; c++) {
        int gr = map[3 * m->tet[4 * e + r / 3] + r % 3], gc = map[3 * m->tet[4 * e + c / 3] + c % 3];
        if (gr >= 0 && gc >= 0) K[(size_t)gr * nf + gc] += m->Ke[144 * e + 12 * r + c];
      }
  for (int i = 0; i < m->nnode; i++)
    for (int k = m->row_ptr[i]; k < m->row_ptr[i + 1]; k++)
      for (int a = 0; a < 3; a++) {
        int gr = map[3 * i + a], gc = map[3 * m->col[k] + a];
        if (gr >= 0 && gc >= 0) M[(size_t)gr * nf + gc] += m->Mblk[k];
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
    CHECK_OK(cf_data_create(m0, &d));
    double* phi = malloc(sizeof(double) * m0->ndof);
    double omega = first_mode(m0, d, phi);
    double T = 2 * M_PI / omega;
    cf_data_free(d);
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
    printf("first mode: %.3f Hz from the eigenproblem, period %.6e s; simulated period %.6e s (%.3f%%)\n",
           omega / (2 * M_PI), T, T_sim, 100 * (T_sim - T) / T);
    CHECK_CLOSE(T_sim, T, 0, 0.01);
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
      printf("%s at dt = T/40: period error %.3f%%, amplitude after 5 periods %.4f of the initial\n",
             integ ? "Newmark" : "backward Euler", 100 * (Tn - T) / T, amp_last / a0);
      if (integ) {
        CHECK_CLOSE(Tn, T, 0, 0.01);
        CHECK(amp_last / a0 > 0.99);
      } else {
        CHECK(amp_last / a0 < 0.2); /* backward Euler damps: the reason for the option */
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
