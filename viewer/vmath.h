/* Small double-precision vector helpers for the viewer (camera, picking, forces). */
#ifndef COFEM_VIEWER_VMATH_H
#define COFEM_VIEWER_VMATH_H
#include <math.h>

static inline void v3_set(double* o, double x, double y, double z) {
  o[0] = x;
  o[1] = y;
  o[2] = z;
}
static inline void v3_copy(double* o, const double* a) {
  o[0] = a[0];
  o[1] = a[1];
  o[2] = a[2];
}
static inline void v3_add(double* o, const double* a, const double* b) {
  o[0] = a[0] + b[0];
  o[1] = a[1] + b[1];
  o[2] = a[2] + b[2];
}
static inline void v3_sub(double* o, const double* a, const double* b) {
  o[0] = a[0] - b[0];
  o[1] = a[1] - b[1];
  o[2] = a[2] - b[2];
}
static inline void v3_scale(double* o, const double* a, double s) {
  o[0] = a[0] * s;
  o[1] = a[1] * s;
  o[2] = a[2] * s;
}
/* o += a * s */
static inline void v3_axpy(double* o, const double* a, double s) {
  o[0] += a[0] * s;
  o[1] += a[1] * s;
  o[2] += a[2] * s;
}
static inline double v3_dot(const double* a, const double* b) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}
static inline void v3_cross(double* o, const double* a, const double* b) {
  double x = a[1] * b[2] - a[2] * b[1], y = a[2] * b[0] - a[0] * b[2],
         z = a[0] * b[1] - a[1] * b[0];
  o[0] = x;
  o[1] = y;
  o[2] = z;
}
static inline double v3_norm(const double* a) {
  return sqrt(v3_dot(a, a));
}
static inline void v3_normalize(double* a) {
  double n = v3_norm(a);
  if (n > 0) v3_scale(a, a, 1.0 / n);
}

/* 3x3 row-major: o = A b */
static inline void m3_mulv(double* o, const double* A, const double* b) {
  double x = A[0] * b[0] + A[1] * b[1] + A[2] * b[2];
  double y = A[3] * b[0] + A[4] * b[1] + A[5] * b[2];
  double z = A[6] * b[0] + A[7] * b[1] + A[8] * b[2];
  o[0] = x;
  o[1] = y;
  o[2] = z;
}
static inline double m3_det(const double* A) {
  return A[0] * (A[4] * A[8] - A[5] * A[7]) - A[1] * (A[3] * A[8] - A[5] * A[6]) +
         A[2] * (A[3] * A[7] - A[4] * A[6]);
}
/* inverse; returns 0 if singular */
static inline int m3_inv(double* o, const double* A) {
  double det = m3_det(A);
  if (!(fabs(det) > 0)) return 0;
  double r = 1.0 / det, B[9];
  B[0] = (A[4] * A[8] - A[5] * A[7]) * r;
  B[1] = (A[2] * A[7] - A[1] * A[8]) * r;
  B[2] = (A[1] * A[5] - A[2] * A[4]) * r;
  B[3] = (A[5] * A[6] - A[3] * A[8]) * r;
  B[4] = (A[0] * A[8] - A[2] * A[6]) * r;
  B[5] = (A[2] * A[3] - A[0] * A[5]) * r;
  B[6] = (A[3] * A[7] - A[4] * A[6]) * r;
  B[7] = (A[1] * A[6] - A[0] * A[7]) * r;
  B[8] = (A[0] * A[4] - A[1] * A[3]) * r;
  for (int i = 0; i < 9; i++) o[i] = B[i];
  return 1;
}
#endif
