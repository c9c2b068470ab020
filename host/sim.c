/* Backend dispatch for a running simulation (see cofem/sim.h). */
#include <stdlib.h>
#include <string.h>

#include "cofem/sim.h"

struct cfSim {
  const cfModel* m;
  cfData* d;
  int cuda;
};

int cf_sim_create(const cfModel* m, cfData* d, const char* backend, cfSim** out) {
  *out = NULL;
  if (strcmp(backend, "cpu") && strcmp(backend, "cuda") && strcmp(backend, "auto"))
    return cf_error(CF_ERR_ARG, "backend \"%s\": use cpu, cuda or auto", backend);
  cfSim* s = calloc(1, sizeof *s);
  if (!s) return cf_error(CF_ERR_NOMEM, "sim: out of memory");
  s->m = m;
  s->d = d;
  if (!strcmp(backend, "cuda")) {
    free(s);
    return cf_error(CF_ERR_UNSUPPORTED, "backend cuda: not available in this build");
  }
  *out = s;
  return CF_OK;
}

const char* cf_sim_backend_name(const cfSim* s) { return s->cuda ? "cuda" : "cpu"; }
int cf_sim_set_forces(cfSim* s, const double* f_ext) {
  if (f_ext != s->d->f_ext) memcpy(s->d->f_ext, f_ext, sizeof(double) * s->m->ndof);
  return CF_OK;
}
int cf_sim_set_supports(cfSim* s, int active) {
  s->d->supports_active = active;
  return CF_OK;
}
int cf_sim_step(cfSim* s) { return cf_step(s->m, s->d); }
int cf_sim_fetch(cfSim* s) { return CF_OK; }
int cf_sim_reset(cfSim* s) {
  cf_data_reset(s->m, s->d);
  return CF_OK;
}
void cf_sim_free(cfSim* s) { free(s); }
