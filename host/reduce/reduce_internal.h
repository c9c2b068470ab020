/* Shared between the reduction's files (not installed). */
#ifndef COFEM_REDUCE_INTERNAL_H
#define COFEM_REDUCE_INTERNAL_H
#include "cofem/reduce.h"

/* y = A x with the model's 3x3 blocks A (or scalar blocks times I when scalar) */
void cf__reduce_block_mv(const cfModel* m, const double* A, int scalar, const double* x, double* y);
/* the number of rigid motions in span(r->basis) (modal_reduce.c, rigid_in_basis), or an error */
int cf__reduction_rigid_count(const cfModel* m, const cfReduction* r, double rigid_tol);

/* An interface point's geometry: its nodes, centroid X_P and the inverse of
 * I_w = sum_n (|r_n|^2 1 - r_n r_n^T), r_n = X_n - X_P. */
typedef struct cfPointGeometry {
  const int* nodes;
  int nnode;
  double x[3];
  double Iinv[9];
} cfPointGeometry;

int cf__point_geometry(const cfModel* m, const int* nodes, int nnode, cfPointGeometry* g);
/* bit a: the rigid unit motion a of the point moves a DOF the model fixes */
unsigned cf__point_blocked_dofs(const cfModel* m, const cfPointGeometry* g);
/* p = the least-squares rigid motion (translation of the centroid, small rotation) of the set's
 * displacements u [ndof] */
void cf__point_fit(const cfModel* m, const cfPointGeometry* g, const double* u, double p[6]);
/* v's entries at the set's nodes = the point's unit motion a (e_a, or e_(a-3) x r_n) */
void cf__point_rigid_motion(const cfModel* m, const cfPointGeometry* g, int a, double* v);
int cf__point_static_modes(const cfModel* m, cfReduction* r, const double* Kb, const unsigned char* fixed_i,
                           const cfPointGeometry* geo, const cfInterfacePoint* pts, int npoint, int nplain);
int cf__point_motions(const cfModel* m, cfReduction* r, const cfPointGeometry* geo);
#endif
