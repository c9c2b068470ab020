/* Element stiffness: symmetric, positive semi-definite with exactly the six rigid-body modes in its
 * null space; patch test on a mesh: a linear displacement field gives its exact constant strain
 * and no out-of-balance force at interior nodes; the rotated stiffness and elastic force of
 * cf_elem_rotate and the matrix-free products (cf_elem_force_mf, cf_elem_apply_KR_mf) against
 * R K_e R^T and R K_e (R^T x - X) formed from the stored K_e, on a bent and twisted beam. */
#include <lapacke.h>
#include <string.h>

#include "cf_test.h"
#include "cofem/fem.h"
#include "cofem/mesh_box.h"
#include "fem/fem_element.h"

static void check_element(const double* Xe /* 4 nodes */) {
  double Dm[9], Dmi[9], Ke[144];
  int tet[4] = {0, 1, 2, 3};
  cf_edge_matrix(Xe, tet, 0, Dm);
  double vol = cf_inv3(Dm, Dmi) / 6.0;
  CHECK(vol > 0);
  const double E = 210e9, nu = 0.3;
  cf_elem_stiffness(Dmi, vol, E, nu, Ke);
  double kmax = 0;
  for (int i = 0; i < 144; i++) kmax = fmax(kmax, fabs(Ke[i]));
  for (int i = 0; i < 12; i++)
    for (int j = 0; j < 12; j++) CHECK_CLOSE(Ke[12 * i + j], Ke[12 * j + i], 1e-13 * kmax, 0);
  double A[144], w[12];
  memcpy(A, Ke, sizeof A);
  CHECK(LAPACKE_dsyev(LAPACK_ROW_MAJOR, 'N', 'U', 12, A, 12, w) == 0);
  /* eigenvalues ascending: six zeros (rigid modes), then six strictly positive */
  for (int i = 0; i < 6; i++) CHECK(fabs(w[i]) < 1e-10 * w[11]);
  CHECK(w[6] > 1e-6 * w[11]);
  /* the rigid modes themselves: translations and infinitesimal rotations give zero force */
  for (int mode = 0; mode < 6; mode++) {
    double u[12], f[12];
    for (int a = 0; a < 4; a++) {
      const double* p = Xe + 3 * a;
      double t[3] = {0, 0, 0};
      if (mode < 3) t[mode] = 1;
      else {
        double om[3] = {0, 0, 0};
        om[mode - 3] = 1;
        t[0] = om[1] * p[2] - om[2] * p[1];
        t[1] = om[2] * p[0] - om[0] * p[2];
        t[2] = om[0] * p[1] - om[1] * p[0];
      }
      for (int i = 0; i < 3; i++) u[3 * a + i] = t[i];
    }
    for (int i = 0; i < 12; i++) {
      f[i] = 0;
      for (int j = 0; j < 12; j++) f[i] += Ke[12 * i + j] * u[j];
      CHECK(fabs(f[i]) < 1e-9 * kmax);
    }
  }
}

int main(void) {
  double regular[12] = {1, 1, 1, 1, -1, -1, -1, 1, -1, -1, -1, 1};
  /* make it positively oriented */
  double Dm[9];
  int tet[4] = {0, 1, 2, 3};
  cf_edge_matrix(regular, tet, 0, Dm);
  if (cf_det3(Dm) < 0)
    for (int i = 0; i < 3; i++) {
      double t = regular[3 + i];
      regular[3 + i] = regular[6 + i];
      regular[6 + i] = t;
    }
  check_element(regular);
  double sliver[12] = {0, 0, 0, 0.01, 0, 0, 0, 0.02, 0, 0.003, 0.004, 0.0005};
  check_element(sliver);

  /* patch test: u = H X on a box, every element strain = sym(H), interior forces = 0 */
  cfMesh mesh;
  CHECK_OK(cf_mesh_box(4, 3, 3, 0.4, 0.3, 0.3, &mesh));
  cfModelDef def = cf_default_model_def();
  cfModel* m;
  cfData* d;
  CHECK_OK(cf_model_create(&mesh, &def, &m));
  CHECK_OK(cf_data_create(m, &d));
  const double H[9] = {1e-3, 2e-4, -3e-4, 5e-4, -2e-3, 1e-4, 0, 7e-4, 4e-4};
  for (int n = 0; n < m->nnode; n++)
    for (int i = 0; i < 3; i++) {
      double u = 0;
      for (int j = 0; j < 3; j++) u += H[3 * i + j] * m->X[3 * n + j];
      d->x[3 * n + i] = m->X[3 * n + i] + u;
    }
  /* linear FEM: R = I (do not run the polar stage) */
  cf_stage_elastic(m, d);
  double fscale = def.E * 1e-3 * 0.1 * 0.1;
  int interior_checked = 0;
  for (int n = 0; n < m->nnode; n++) {
    const double* X = m->X + 3 * n;
    int interior = X[0] > 1e-9 && X[0] < 0.4 - 1e-9 && X[1] > 1e-9 && X[1] < 0.3 - 1e-9 &&
                   X[2] > 1e-9 && X[2] < 0.3 - 1e-9;
    if (!interior) continue;
    interior_checked++;
    for (int i = 0; i < 3; i++) CHECK(fabs(d->f_el[3 * n + i]) < 1e-9 * fscale);
  }
  CHECK(interior_checked > 0);
  for (int e = 0; e < m->ntet; e++) {
    double g[12], Hn[9] = {0};
    cf_shape_gradients(m->Dm_inv + 9 * e, g);
    for (int a = 0; a < 4; a++)
      for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
          Hn[3 * i + j] += (d->x[3 * m->tet[4 * e + a] + i] - m->X[3 * m->tet[4 * e + a] + i]) * g[3 * a + j];
    for (int i = 0; i < 9; i++) CHECK_CLOSE(Hn[i], H[i], 1e-15, 1e-9);
  }
  cf_data_free(d);
  cf_model_free(m);
  cf_mesh_free(&mesh);

  /* rotated stiffness and forces against K_e: large rotation + strain, arbitrary vector y */
  {
    cfMesh beam;
    CHECK_OK(cf_mesh_box(6, 2, 2, 1.0, 0.1, 0.1, &beam));
    CHECK_OK(cf_model_create(&beam, &def, &m));
    CHECK_OK(cf_data_create(m, &d));
    for (int n = 0; n < m->nnode; n++) {
      const double* X = m->X + 3 * n;
      const double a = 1.2 * X[0], c = cos(a), sn = sin(a); /* bend about y by up to 1.2 rad */
      const double r = 1.0 / 1.2 + X[2];
      d->x[3 * n] = r * sn + 0.01 * X[1];
      d->x[3 * n + 1] = X[1] * (1 + 0.02 * X[0]);
      d->x[3 * n + 2] = 1.0 / 1.2 - r * c + 3.0;
    }
    cf_stage_polar(m, d);
    const double lam = def.E * def.nu / ((1 + def.nu) * (1 - 2 * def.nu)), mu = def.E / (2 * (1 + def.nu));
    double* G = malloc(sizeof(double) * 9 * m->ntet);
    double* fe = malloc(sizeof(double) * 12 * m->ntet);
    double* ye = malloc(sizeof(double) * 12 * m->ntet);
    double* y = malloc(sizeof(double) * m->ndof);
    for (int i = 0; i < m->ndof; i++) y[i] = sin(0.7 * i) + 0.3 * cos(2.3 * i);
    for (int e = 0; e < m->ntet; e++) {
      cf_elem_rotate(e, m->tet, m->Dm_inv, m->vol, lam, mu, d->R, d->x, d->KR, d->fe);
      cf_elem_rotated_gradients(e, m->Dm_inv, d->R, G);
      cf_elem_force_mf(e, m->tet, G, m->vol, lam, mu, d->x, fe);
      cf_elem_apply_KR_mf(e, m->tet, G, m->vol, lam, mu, y, ye + 12 * e);
    }
    double err_k = 0, max_k = 0, err_f = 0, err_f2 = 0, max_f = 0, err_y = 0, err_y2 = 0, max_y = 0;
    for (int e = 0; e < m->ntet; e++) {
      const double* Ke = m->Ke + 144 * e;
      const double* R = d->R + 9 * e;
      const int* t = m->tet + 4 * e;
      double Kr[144], u[12], f[12], yy[12], kry[12];
      /* reference R K_e R^T, block by block */
      for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++)
          for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) {
              double v = 0;
              for (int k = 0; k < 3; k++)
                for (int l = 0; l < 3; l++) v += R[3 * i + k] * Ke[(3 * a + k) * 12 + 3 * b + l] * R[3 * j + l];
              Kr[(3 * a + i) * 12 + 3 * b + j] = v;
            }
      /* reference force R K_e (R^T (x - x_0) - (X - X_0)) and product K_R y */
      for (int a = 0; a < 4; a++)
        for (int i = 0; i < 3; i++) {
          u[3 * a + i] = 0;
          for (int k = 0; k < 3; k++) u[3 * a + i] += R[3 * k + i] * (d->x[3 * t[a] + k] - d->x[3 * t[0] + k]);
          u[3 * a + i] -= m->X[3 * t[a] + i] - m->X[3 * t[0] + i];
          yy[3 * a + i] = y[3 * t[a] + i];
        }
      for (int r = 0; r < 12; r++) {
        double ku = 0;
        kry[r] = 0;
        for (int c = 0; c < 12; c++) {
          ku += Ke[12 * r + c] * u[c];
          kry[r] += Kr[12 * r + c] * yy[c];
        }
        f[r] = ku;
      }
      for (int a = 0; a < 4; a++) { /* rotate K_e u back: f_a = R (K_e u)_a */
        double k3[3] = {f[3 * a], f[3 * a + 1], f[3 * a + 2]};
        for (int i = 0; i < 3; i++) f[3 * a + i] = R[3 * i] * k3[0] + R[3 * i + 1] * k3[1] + R[3 * i + 2] * k3[2];
      }
      for (int i = 0; i < 144; i++) {
        err_k = fmax(err_k, fabs(d->KR[144 * e + i] - Kr[i]));
        max_k = fmax(max_k, fabs(Kr[i]));
      }
      for (int r = 0; r < 12; r++) {
        err_f = fmax(err_f, fabs(d->fe[12 * e + r] - f[r]));
        err_f2 = fmax(err_f2, fabs(fe[12 * e + r] - f[r]));
        max_f = fmax(max_f, fabs(f[r]));
        err_y = fmax(err_y, fabs(ye[12 * e + r] - kry[r]));
        max_y = fmax(max_y, fabs(kry[r]));
        double kr = 0;
        for (int c = 0; c < 12; c++) kr += d->KR[144 * e + 12 * r + c] * yy[c];
        err_y2 = fmax(err_y2, fabs(kr - kry[r]));
      }
    }
    printf("bent beam: |KR - R K_e R^T| %.2g, |fe - R K_e u| %.2g (matrix-free %.2g), |K_R y| products %.2g / %.2g "
           "(relative to the largest entry)\n", err_k / max_k, err_f / max_f, err_f2 / max_f, err_y / max_y,
           err_y2 / max_y);
    CHECK(max_f > 1e-3 * max_k); /* the deformation does produce forces */
    CHECK(err_k <= 1e-13 * max_k);
    CHECK(err_f <= 1e-9 * max_f); /* cancellation in R^T dx - dX and F R^T - I: ~|dx|/|u| ulps */
    CHECK(err_f2 <= 1e-9 * max_f);
    CHECK(err_y <= 1e-13 * max_y);
    CHECK(err_y2 <= 1e-13 * max_y);
    free(G);
    free(fe);
    free(ye);
    free(y);
    cf_data_free(d);
    cf_model_free(m);
    cf_mesh_free(&beam);
  }
  TEST_END();
}
