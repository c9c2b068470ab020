/* A running simulation on a chosen backend (CPU reference or CUDA), one interface for the CLI,
 * the viewer and the benchmarks. On CUDA the state lives on the device; cf_sim_fetch brings
 * it (positions, velocities, rotations) back into the cfData. */
#ifndef COFEM_SIM_H
#define COFEM_SIM_H
#include "cofem/fem.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cfSim cfSim;

/* backend: "cpu", "cuda" (error naming the CUDA error if no usable device) or "auto". */
int cf_sim_create(const cfModel* m, cfData* d, const char* backend, cfSim** out);
const char* cf_sim_backend_name(const cfSim* s);
/* d->f_ext changed: take it (CUDA: upload). */
int cf_sim_set_forces(cfSim* s, const double* f_ext);
/* d->supports_active changed. */
int cf_sim_set_supports(cfSim* s, int active);
int cf_sim_step(cfSim* s);
/* Make the state current on the host: d->x, d->v, d->v_prev (the warm start's second vector)
 * and d->R (CUDA: one download, counted in d->timer[CF_STAGE_TRANSFER]). */
int cf_sim_fetch(cfSim* s);
/* Back to rest on every backend. */
int cf_sim_reset(cfSim* s);
void cf_sim_free(cfSim* s);

#ifdef __cplusplus
}
#endif
#endif
