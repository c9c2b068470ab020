/* Rotation invariance of the co-rotational forces: a whole mesh rigidly rotated by 90 degrees
 * about a random axis and translated gives zero elastic force; a deformed shape rotated gives the
 * rotated forces and the rotated-stiffness relation K_R(Qx) = Q K_R(x) Q^T. Also: the element
 * consistent tangent equals a finite-difference derivative of the elastic force. */
#include <string.h>

#include "cf_test.h"
#include "cofem/fem.h"
#include "cofem/mesh_box.h"
#include "cofem/static.h"
#include "fem/fem_element.h"

static void axis_angle(const double* axis, double angle, double* Q) {
  double n = sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
  double s = sin(angle / 2) / n;
  double q[4] = {cos(angle / 2), axis[0] * s, axis[1] * s, axis[2] * s};
  cf_quat_to_rot(q, Q);
}

static void transform(const cfModel* m, const double* Q, const double* t, const double* in, double* out) {
  for (int n = 0; n < m->nnode; n++)
    for (int i = 0; i < 3; i++)
      out[3 * n + i] = Q[3 * i] * in[3 * n] + Q[3 * i + 1] * in[3 * n + 1] + Q[3 * i + 2] * in[3 * n + 2] + t[i];
}

static double norm(const double* a, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += a[i] * a[i];
  return sqrt(s);
}

int main(void) {
  cfMesh mesh;
  CHECK_OK(cf_mesh_box(6, 2, 2, 0.6, 0.1, 0.1, &mesh));
  cfModelDef def = cf_default_model_def();
  cfModel* m;
  cfData* d;
  CHECK_OK(cf_model_create(&mesh, &def, &m));
  CHECK_OK(cf_data_create(m, &d));
  const int n = m->ndof;
  double axis[3] = {0.3, -0.8, 0.52}, t[3] = {1.5, -2.0, 0.7}, Q[9];
  axis_angle(axis, M_PI / 2, Q);

  /* rigid motion of the rest shape: no force */
  transform(m, Q, t, m->X, d->x);
  cf_stage_polar(m, d);
  cf_stage_elastic(m, d);
  double fscale = def.E * 0.1 * 0.1 * 1e-3; /* force of a 0.1% strain over the section */
  CHECK(norm(d->f_el, n) < 1e-9 * fscale);

  /* a deformed shape (bending + twist) and the same shape rotated */
  double* xdef = malloc(sizeof(double) * n);
  double* f0 = malloc(sizeof(double) * n);
  double* f1 = malloc(sizeof(double) * n);
  double* Qf0 = malloc(sizeof(double) * n);
  for (int k = 0; k < m->nnode; k++) {
    const double* X = m->X + 3 * k;
    double a = 0.4 * X[0]; /* twist angle along the length */
    xdef[3 * k] = X[0] + 0.01 * X[1];
    xdef[3 * k + 1] = 0.05 + cos(a) * (X[1] - 0.05) - sin(a) * (X[2] - 0.05);
    xdef[3 * k + 2] = 0.05 + sin(a) * (X[1] - 0.05) + cos(a) * (X[2] - 0.05) + 0.2 * X[0] * X[0];
  }
  cf_data_reset(m, d);
  memcpy(d->x, xdef, sizeof(double) * n);
  cf_stage_polar(m, d);
  cf_stage_elastic(m, d);
  memcpy(f0, d->f_el, sizeof(double) * n);
  double* KR0 = malloc(sizeof(double) * 144 * m->ntet);
  memcpy(KR0, d->KR, sizeof(double) * 144 * m->ntet);
  CHECK(norm(f0, n) > 10 * fscale); /* the deformation does produce forces */
  cf_data_reset(m, d);
  transform(m, Q, t, xdef, d->x);
  cf_stage_polar(m, d);
  cf_stage_elastic(m, d);
  memcpy(f1, d->f_el, sizeof(double) * n);
  double zero[3] = {0, 0, 0};
  transform(m, Q, zero, f0, Qf0);
  for (int i = 0; i < n; i++) CHECK_CLOSE(f1[i], Qf0[i], 1e-9 * norm(f0, n) / sqrt(n), 0);
  /* K_R(Q x) = Q K_R(x) Q^T, block by block */
  double kmax = 0;
  for (int i = 0; i < 144 * m->ntet; i++) kmax = fmax(kmax, fabs(KR0[i]));
  for (int e = 0; e < m->ntet; e += 7)
    for (int a = 0; a < 4; a++)
      for (int b = 0; b < 4; b++) {
        double B[9], T[9], QBQt[9];
        for (int i = 0; i < 3; i++)
          for (int j = 0; j < 3; j++) B[3 * i + j] = KR0[144 * e + (3 * a + i) * 12 + 3 * b + j];
        cf_mul3(Q, B, T);
        for (int i = 0; i < 3; i++)
          for (int j = 0; j < 3; j++) QBQt[3 * i + j] = T[3 * i] * Q[3 * j] + T[3 * i + 1] * Q[3 * j + 1] + T[3 * i + 2] * Q[3 * j + 2];
        for (int i = 0; i < 3; i++)
          for (int j = 0; j < 3; j++)
            CHECK_CLOSE(d->KR[144 * e + (3 * a + i) * 12 + 3 * b + j], QBQt[3 * i + j], 1e-11 * kmax, 0);
      }

  /* consistent tangent vs central finite differences of the element force */
  cf_data_reset(m, d);
  memcpy(d->x, xdef, sizeof(double) * n);
  cf_stage_polar(m, d);
  const double lam = m->def.E * m->def.nu / ((1 + m->def.nu) * (1 - 2 * m->def.nu));
  const double mu = m->def.E / (2 * (1 + m->def.nu));
  double max_err = 0, max_ref = 0;
  for (int e = 0; e < m->ntet; e += 5) {
    double Kt[144];
    cf_elem_consistent_tangent(m, d, e, Kt);
    for (int c = 0; c < 12; c++) {
      int dof = 3 * m->tet[4 * e + c / 3] + c % 3;
      double h = 1e-7, fp[12], fm[12];
      double keep = d->x[dof];
      double Rk[9];
      memcpy(Rk, d->R + 9 * e, sizeof Rk);
      d->x[dof] = keep + h;
      cf_elem_polar(e, m->tet, m->Dm_inv, d->x, d->R);
      cf_elem_rotate(e, m->tet, m->Dm_inv, m->vol, lam, mu, d->R, d->x, d->KR, d->fe);
      memcpy(fp, d->fe + 12 * e, sizeof fp);
      d->x[dof] = keep - h;
      cf_elem_polar(e, m->tet, m->Dm_inv, d->x, d->R);
      cf_elem_rotate(e, m->tet, m->Dm_inv, m->vol, lam, mu, d->R, d->x, d->KR, d->fe);
      memcpy(fm, d->fe + 12 * e, sizeof fm);
      d->x[dof] = keep;
      memcpy(d->R + 9 * e, Rk, sizeof Rk);
      for (int r = 0; r < 12; r++) {
        double fd = (fp[r] - fm[r]) / (2 * h);
        max_err = fmax(max_err, fabs(fd - Kt[12 * r + c]));
        max_ref = fmax(max_ref, fabs(Kt[12 * r + c]));
      }
    }
  }
  printf("consistent tangent vs finite differences: max error %.3g of max entry %.3g\n", max_err, max_ref);
  CHECK(max_err < 1e-5 * max_ref);
  free(xdef); free(f0); free(f1); free(Qf0); free(KR0);
  cf_data_free(d);
  cf_model_free(m);
  cf_mesh_free(&mesh);
  TEST_END();
}
