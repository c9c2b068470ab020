/* Rotated-Cholesky preconditioner (internal; see enum cfPreconditioner in cofem/fem.h). */
#ifndef COFEM_FEM_PRECOND_H
#define COFEM_FEM_PRECOND_H
#include "cofem/fem.h"

/* Factor A0 = cm M + ck K (rest stiffness) with and without the supports. */
int cf_precond_create(const cfModel* m, cfData* d);
void cf_precond_free(cfData* d);
/* Node rotations from the current element rotations (once per step, after the polar stage). */
void cf_precond_update(const cfModel* m, cfData* d);
/* z = Q A0^-1 Q^T r (r has its fixed DOFs zeroed; z is projected by the caller). */
int cf_precond_apply(const cfModel* m, cfData* d, const double* r, double* z);
/* [33 * ntet] scratch of the matrix-free step (fem_pcg.c): per-element products of two vectors
 * [2 x 12 ntet], then the rotated gradients G_e [9 ntet]. */
double* cf_precond_scratch(cfData* d);
/* The A-matrix coefficients of the integrator: A = cm M + ck K_R. */
void cf_system_coefficients(const cfModel* m, double h, double* cm, double* ck);
#endif
