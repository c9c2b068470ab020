/* Polar decomposition on thousands of random F, including reflections (det F < 0) and
 * near-singular ones: R orthonormal with det +1 to 1e-12, R^T F symmetric, and equal to the
 * rotation from an independent SVD (LAPACKE dgesvd): R = U diag(1, 1, det(U V^T)) V^T. */
#include <lapacke.h>
#include <string.h>

#include "cf_test.h"
#include "fem/fem_element.h"

static unsigned long long rng = 88172645463325252ULL;
static double urand(void) {
  rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
  return (double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

static void svd_rotation(const double* F, double* R) {
  double A[9], s[3], U[9], VT[9], superb[2];
  memcpy(A, F, sizeof A);
  LAPACKE_dgesvd(LAPACK_ROW_MAJOR, 'A', 'A', 3, 3, A, 3, s, U, 3, VT, 3, superb);
  double UV[9];
  cf_mul3(U, VT, UV);
  double sgn = cf_det3(UV) < 0 ? -1.0 : 1.0;
  for (int i = 0; i < 3; i++) U[3 * i + 2] *= sgn;
  cf_mul3(U, VT, R);
}

static void check_one(const double* F, const double* Q, int compare_svd, int warm_path) {
  double R[9], RtF[9], RtR[9];
  if (warm_path) cf_polar_rotation_warm(F, Q, R);
  else cf_polar_rotation(F, Q, R);
  cf_mul3_tn(R, R, RtR);
  for (int i = 0; i < 9; i++) CHECK_CLOSE(RtR[i], (i % 4 == 0) ? 1.0 : 0.0, 1e-12, 0);
  CHECK_CLOSE(cf_det3(R), 1.0, 1e-12, 0);
  cf_mul3_tn(R, F, RtF);
  double fn = 0;
  for (int i = 0; i < 9; i++) fn += F[i] * F[i];
  fn = sqrt(fn);
  CHECK(fabs(RtF[1] - RtF[3]) <= 1e-12 * fn);
  CHECK(fabs(RtF[2] - RtF[6]) <= 1e-12 * fn);
  CHECK(fabs(RtF[5] - RtF[7]) <= 1e-12 * fn);
  if (compare_svd) {
    double Rs[9];
    svd_rotation(F, Rs);
    for (int i = 0; i < 9; i++) CHECK_CLOSE(R[i], Rs[i], 1e-9, 0);
  }
}

static void random_rotation(double* Q) {
  double q[4];
  double n;
  do {
    for (int i = 0; i < 4; i++) q[i] = urand();
    n = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
  } while (n < 0.01 || n > 1);
  cf_quat_to_rot(q, Q);
}

int main(void) {
  int failures_before;
  for (int trial = 0; trial < 4000; trial++) {
    double F[9], Q[9];
    for (int i = 0; i < 9; i++) F[i] = urand();
    int kind = trial % 4;
    if (kind == 1 && cf_det3(F) > 0)  /* a reflection: det F < 0 */
      for (int i = 0; i < 3; i++) F[3 * i] = -F[3 * i];
    if (kind == 2) { /* near-singular: third column almost a combination of the others */
      for (int i = 0; i < 3; i++) F[3 * i + 2] = 0.3 * F[3 * i] - 0.7 * F[3 * i + 1] + 1e-9 * urand();
    }
    if (kind == 3) { /* rotation with small stretch, as in a simulation */
      double Rr[9], S[9] = {1 + 0.05 * urand(), 0.02 * urand(), 0, 0, 1 + 0.05 * urand(), 0.02 * urand(),
                            0, 0, 1 + 0.05 * urand()};
      S[3] = S[1]; S[7] = S[5];
      random_rotation(Rr);
      cf_mul3(Rr, S, F);
    }
    failures_before = cf_test_failures;
    /* well-separated singular values make the rotation unique: compare with the SVD then */
    double A[9], s[3], U[9], VT[9], superb[2];
    memcpy(A, F, sizeof A);
    LAPACKE_dgesvd(LAPACK_ROW_MAJOR, 'N', 'N', 3, 3, A, 3, s, U, 3, VT, 3, superb);
    int unique = s[1] + (cf_det3(F) < 0 ? -s[2] : s[2]) > 1e-3 * s[0];
    check_one(F, NULL, unique, 0);
    random_rotation(Q);
    check_one(F, Q, unique, 0); /* warm start from anywhere gives the same answer */
    check_one(F, Q, unique, 1); /* so does the Newton fast path (falling back when far) */
    /* the fast path from a nearby guess, as in a time step: perturb the answer slightly */
    double Rt[9], Qn[9], dq[4] = {1, 0.01 * urand(), 0.01 * urand(), 0.01 * urand()}, D[9];
    cf_polar_rotation(F, NULL, Rt);
    cf_quat_to_rot(dq, D);
    cf_mul3(Rt, D, Qn);
    check_one(F, Qn, unique, 1);
    if (cf_test_failures != failures_before) {
      fprintf(stderr, "trial %d kind %d failed\n", trial, kind);
      break;
    }
  }
  /* exact cases: a pure rotation is returned as is; an inverted element still gets det +1 */
  double Q[9], R[9];
  random_rotation(Q);
  cf_polar_rotation(Q, NULL, R);
  for (int i = 0; i < 9; i++) CHECK_CLOSE(R[i], Q[i], 1e-13, 0);
  double flat[9] = {1, 0, 0, 0, 1, 0, 0, 0, 0};
  cf_polar_rotation(flat, NULL, R);
  CHECK_CLOSE(cf_det3(R), 1.0, 1e-12, 0);
  double mirror[9] = {1, 0, 0, 0, 1, 0, 0, 0, -0.5};
  cf_polar_rotation(mirror, NULL, R);
  CHECK_CLOSE(cf_det3(R), 1.0, 1e-12, 0);
  TEST_END();
}
