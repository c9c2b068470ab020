/* Small 3-vector and 3x3 matrix math (matrices row-major), one copy for the FE element bodies
 * (fem_element.h, also compiled by nvcc for the CUDA kernels: CF_HD), the multibody core, the
 * mesh checks and the viewer. Header only. */
#ifndef COFEM_UTIL_MATH3_H
#define COFEM_UTIL_MATH3_H
#include <math.h>

#ifndef CF_HD
#if defined(__CUDACC__)
#define CF_HD __host__ __device__ __forceinline__
#else
#define CF_HD static inline
#endif
#endif

CF_HD double cf_dot3(const double* a, const double* b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
CF_HD double cf_norm3(const double* a) { return sqrt(cf_dot3(a, a)); }
/* r = a - b */
CF_HD void cf_sub3(const double* a, const double* b, double* r) {
  r[0] = a[0] - b[0];
  r[1] = a[1] - b[1];
  r[2] = a[2] - b[2];
}
/* c = a x b (c may be a or b) */
CF_HD void cf_cross3(const double* a, const double* b, double* c) {
  double x = a[1] * b[2] - a[2] * b[1], y = a[2] * b[0] - a[0] * b[2], z = a[0] * b[1] - a[1] * b[0];
  c[0] = x;
  c[1] = y;
  c[2] = z;
}
/* y = A x (y may be x) */
CF_HD void cf_mat3_vec(const double* A, const double* x, double* y) {
  double a = A[0] * x[0] + A[1] * x[1] + A[2] * x[2];
  double b = A[3] * x[0] + A[4] * x[1] + A[5] * x[2];
  double c = A[6] * x[0] + A[7] * x[1] + A[8] * x[2];
  y[0] = a;
  y[1] = b;
  y[2] = c;
}
CF_HD double cf_det3(const double* A) {
  return A[0] * (A[4] * A[8] - A[5] * A[7]) - A[1] * (A[3] * A[8] - A[5] * A[6]) +
         A[2] * (A[3] * A[7] - A[4] * A[6]);
}
/* C = A B */
CF_HD void cf_mul3(const double* A, const double* B, double* C) {
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      C[3 * i + j] = A[3 * i] * B[j] + A[3 * i + 1] * B[3 + j] + A[3 * i + 2] * B[6 + j];
}
/* C = A^T B */
CF_HD void cf_mul3_tn(const double* A, const double* B, double* C) {
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      C[3 * i + j] = A[i] * B[j] + A[3 + i] * B[3 + j] + A[6 + i] * B[6 + j];
}
/* C = A B^T */
CF_HD void cf_mul3_nt(const double* A, const double* B, double* C) {
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      C[3 * i + j] = A[3 * i] * B[3 * j] + A[3 * i + 1] * B[3 * j + 1] + A[3 * i + 2] * B[3 * j + 2];
}
/* Inverse by the adjugate; returns the determinant (the caller decides what tiny means; Ai is
 * not finite when it is 0). Ai must not be A. */
CF_HD double cf_inv3(const double* A, double* Ai) {
  double det = cf_det3(A);
  double s = 1.0 / det;
  Ai[0] = (A[4] * A[8] - A[5] * A[7]) * s;
  Ai[1] = (A[2] * A[7] - A[1] * A[8]) * s;
  Ai[2] = (A[1] * A[5] - A[2] * A[4]) * s;
  Ai[3] = (A[5] * A[6] - A[3] * A[8]) * s;
  Ai[4] = (A[0] * A[8] - A[2] * A[6]) * s;
  Ai[5] = (A[2] * A[3] - A[0] * A[5]) * s;
  Ai[6] = (A[3] * A[7] - A[4] * A[6]) * s;
  Ai[7] = (A[1] * A[6] - A[0] * A[7]) * s;
  Ai[8] = (A[0] * A[4] - A[1] * A[3]) * s;
  return det;
}
#endif
