/* PCG internals shared by the step (internal; the stage API is in cofem/fem.h). */
#ifndef COFEM_FEM_PCG_H
#define COFEM_FEM_PCG_H
#include "cofem/fem.h"

/* Nodes per chunk of the fused warm-start sums (fixed chunks summed in order: thread-independent). */
enum { CF_WARM_CHUNK = 512 };

/* Starting guess of the PCG (the warm start): d->v = c0 v0 + c1 v1 minimising the energy of
 * A v = b over span{v0, v1} (cf_warm_coefficients in fem_element.h), v0 = d->v and v1 the
 * velocities of the step before, both projected on the free DOFs in place. Needs d->A and d->b;
 * uses d->q and d->z as scratch. */
void cf_pcg_warm_start(const cfModel* m, cfData* d, double* v1);
#endif
