/* Rotated-Cholesky and AMG preconditioners (internal; see enum cfPreconditioner in cofem/fem.h). */
#ifndef COFEM_FEM_PRECOND_H
#define COFEM_FEM_PRECOND_H
#include "cofem/fem.h"

/* Factor A0 = cm M + ck K (rest stiffness) with and without the supports (rotated Cholesky), or
 * build the AMG hierarchies of the same A0 (CF_PRECOND_AMG). */
int cf_precond_create(const cfModel* m, cfData* d);
/* A0 = cm M + ck K, the system matrix at rest (R_e = I), in the model's blocks [9 nnzb]. */
void cf_precond_rest_matrix(const cfModel* m, double* A0);
/* The rotated Cholesky (whatever def.preconditioner says) of A0 = cm M + ck K + eps I with the
 * caller's coefficients (the multibody core's corotational FE bodies, host/mbs/mbs_fe.c); an
 * existing preconditioner of d is replaced. */
int cf_precond_create_with(const cfModel* m, cfData* d, double cm, double ck, double eps);
/* The AMG hierarchies (both support states) of the same A0 with the caller's coefficients (the
 * mechanism's corotational bodies with "factor": "pcg" and an AMG scene); d's is replaced. */
int cf_precond_create_amg_with(const cfModel* m, cfData* d, double cm, double ck, double eps);
void cf_precond_free(cfData* d);
/* Node rotations from the current element rotations (once per step, after the polar stage). */
void cf_precond_update(const cfModel* m, cfData* d);
/* The same with `corrections` Newton corrections of each node's polar (the sum of its elements'
 * rotations formed once): as many calls of cf_precond_update, bit for bit, for less (the mechanism's
 * parts, which move further between updates than a part's own step does, take 3). */
void cf_precond_update_n(const cfModel* m, cfData* d, int corrections);
/* corrections CF_PRECOND_CONVERGED: each node's polar to convergence (cf_polar_rotation_warm, from
 * the last rotation: one or two corrections where the part moved little) */
enum { CF_PRECOND_CONVERGED = -1 };
/* z = Q A0^-1 Q^T r, or z = Q AMG(A0) Q^T r (r has its fixed DOFs zeroed; z is projected by the
 * caller). */
int cf_precond_apply(const cfModel* m, cfData* d, const double* r, double* z);
/* z[c] = Q A0^-1 Q^T r[c] for c < nrhs in one pass over the factor (the same as nrhs calls of
 * cf_precond_apply to round-off; r[c] and z[c] of ndof each, not aliased); work holds
 * cf_precond_apply_multi_work(m, nrhs) doubles. AMG or a factor not copied: column by column. */
int cf_precond_apply_multi(const cfModel* m, cfData* d, int nrhs, const double* const* r, double* const* z,
                           double* work);
long cf_precond_apply_multi_work(const cfModel* m, int nrhs);
/* [33 * ntet] scratch of the matrix-free step (fem_pcg.c): per-element products of two vectors
 * [2 x 12 ntet], then the rotated gradients G_e [9 ntet]. */
double* cf_precond_scratch(cfData* d);
/* The AMG preconditioner's hierarchy (d->precond made with CF_PRECOND_AMG; the one used with the
 * supports active when there are any): bytes one V-cycle moves at least, operator complexity,
 * setup seconds (both hierarchies) and a line per level into desc. Returns 0 when d has none. */
int cf_precond_amg_info(const cfData* d, double* bytes_per_cycle, double* op_complexity, double* setup_s,
                        char* desc, int size);
/* Of cf_precond_amg_info's bytes per V-cycle, those of the matrices' values (the same
 * hierarchy; cf_amg_value_bytes_per_cycle): a V-cycle with float values (the GPU's
 * cfCudaOptions.amg_float) moves half of them less. 0 when d has no AMG. */
double cf_precond_amg_value_bytes(const cfData* d);
/* cf_precond_amg_info's bytes per V-cycle as the GPU moves them (cf_amg_bytes_per_cycle_gpu: the
 * coarsest level a dense inverse, of which dense_bytes, if not NULL: 8 n_c^2); 0 when d has no AMG. */
double cf_precond_amg_gpu_bytes(const cfData* d, double* dense_bytes);
/* The AMG hierarchy the preconditioner applies with the supports active (supports = 1; NULL when
 * the part has no fixed DOFs) or off (0); NULL when d has no AMG preconditioner. For the CUDA
 * backend, which uploads both. */
const struct cfAmg* cf_precond_amg(const cfData* d, int supports);
/* The A-matrix coefficients of the integrator: A = cm M + ck K_R. */
void cf_system_coefficients(const cfModel* m, double h, double* cm, double* ck);
#endif
