/* Backend dispatch for a running simulation (see cofem/sim.h): the CPU reference stages, or the
 * CUDA backend with the state on the device (kernels/; the stub returns CF_ERR_UNSUPPORTED in
 * builds without CUDA). */
#include <stdlib.h>
#include <string.h>

#include "cofem/cuda.h"
#include "cofem/sim.h"

struct cfSim {
  const cfModel* m;
  cfData* d;
  cfCuda* gpu; /* NULL: CPU */
};

int cf_sim_create(const cfModel* m, cfData* d, const char* backend, cfSim** out) {
  *out = NULL;
  if (strcmp(backend, "cpu") && strcmp(backend, "cuda") && strcmp(backend, "auto"))
    return cf_error(CF_ERR_ARG, "backend \"%s\": use cpu, cuda or auto", backend);
  cfSim* s = calloc(1, sizeof *s);
  if (!s) return cf_error(CF_ERR_NOMEM, "sim: out of memory");
  s->m = m;
  s->d = d;
  if (strcmp(backend, "cpu") != 0) {
    char why[256];
    /* the GPU's own check (cf_cuda_create refuses the same models): auto falls back to the CPU */
    int gpu_can = cf_cuda_check_model(m) >= 0;
    if (!gpu_can && !strcmp(backend, "cuda")) {
      free(s);
      return cf_error(CF_ERR_UNSUPPORTED, "backend cuda: %s", cf_last_error());
    }
    if (gpu_can && cf_cuda_available(why, sizeof why)) {
      int st = cf_cuda_create(m, d, &s->gpu);
      if (st < 0) {
        free(s);
        return st;
      }
    } else if (!strcmp(backend, "cuda")) {
      free(s);
      return cf_error(CF_ERR_CUDA, "backend cuda: no usable device: %s", why);
    }
  }
  *out = s;
  return CF_OK;
}

const char* cf_sim_backend_name(const cfSim* s) { return s->gpu ? "cuda" : "cpu"; }

int cf_sim_set_forces(cfSim* s, const double* f_ext) {
  if (f_ext != s->d->f_ext) memcpy(s->d->f_ext, f_ext, sizeof(double) * s->m->ndof);
  return s->gpu ? cf_cuda_set_forces(s->gpu, s->d->f_ext) : CF_OK;
}

int cf_sim_set_supports(cfSim* s, int active) {
  s->d->supports_active = active;
  return s->gpu ? cf_cuda_set_supports(s->gpu, active) : CF_OK;
}

int cf_sim_step(cfSim* s) { return s->gpu ? cf_cuda_step(s->gpu, s->m, s->d) : cf_step(s->m, s->d); }

/* the whole state a step carries (x, v, v_prev, R): the host copy can take over from there;
 * cf_cuda_download adds its time to timer[CF_STAGE_TRANSFER] itself */
int cf_sim_fetch(cfSim* s) {
  if (!s->gpu) return CF_OK;
  return cf_cuda_download(s->gpu, s->d, CF_CUDA_STATE);
}

/* The state a step carries (x, v, v_prev, R) and the loads; not the per-step arrays (KR, A, b,
 * Pinv), which the GPU path never fills on the host and every step forms anew on the device. */
int cf_sim_reset(cfSim* s) {
  cf_data_reset(s->m, s->d);
  return s->gpu ? cf_cuda_upload(s->gpu, s->d, CF_CUDA_STATE | CF_CUDA_F_EXT) : CF_OK;
}

void cf_sim_free(cfSim* s) {
  if (!s) return;
  if (s->gpu) cf_cuda_free(s->gpu);
  free(s);
}
