/* Small double-precision vector helpers for the viewer (camera, picking, forces); the products,
 * norms and 3x3 matrices are the library's (host/util/math3.h) under the viewer's names. */
#ifndef COFEM_VIEWER_VMATH_H
#define COFEM_VIEWER_VMATH_H
#include <math.h>

#include "util/math3.h"

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
static inline double v3_dot(const double* a, const double* b) { return cf_dot3(a, b); }
static inline void v3_cross(double* o, const double* a, const double* b) { cf_cross3(a, b, o); }
static inline double v3_norm(const double* a) { return cf_norm3(a); }
static inline void v3_normalize(double* a) {
  double n = v3_norm(a);
  if (n > 0) v3_scale(a, a, 1.0 / n);
}

/* 3x3 row-major: o = A b */
static inline void m3_mulv(double* o, const double* A, const double* b) { cf_mat3_vec(A, b, o); }
static inline double m3_det(const double* A) { return cf_det3(A); }
/* inverse (o may be A); returns 0 if singular, o unchanged */
static inline int m3_inv(double* o, const double* A) {
  double B[9];
  if (!(fabs(cf_inv3(A, B)) > 0)) return 0;
  for (int i = 0; i < 9; i++) o[i] = B[i];
  return 1;
}
#endif
