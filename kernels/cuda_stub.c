/* The CUDA backend API in a build without CUDA: every call fails with CF_ERR_UNSUPPORTED. */
#include <stdio.h>
#include <string.h>

#include "cofem/cuda.h"

#define CF_NO_CUDA "cofem was built without CUDA"

static int unsupported(const char* fn) {
  return cf_error(CF_ERR_UNSUPPORTED, "%s: " CF_NO_CUDA, fn);
}

cfCudaOptions cf_cuda_default_options(void) {
  cfCudaOptions o;
  memset(&o, 0, sizeof o);
  o.check_every = 8;
  o.use_graphs = 1;
  o.amg_float = 0; /* accepted by create_ex and not used: the stub creates nothing */
  return o;
}

int cf_cuda_available(char* why, int n) {
  return cf_cuda_device_available(0, why, n);
}

int cf_cuda_device_available(int device, char* why, int n) {
  if (why && n > 0) snprintf(why, (size_t)n, "%s", CF_NO_CUDA);
  return 0;
}

int cf_cuda_create(const cfModel* m, const cfData* d, cfCuda** out) {
  return cf_cuda_create_ex(m, d, NULL, out);
}
/* the model is checked first, as in the CUDA build: an unsupported model gets the same message */
int cf_cuda_create_ex(const cfModel* m, const cfData* d, const cfCudaOptions* opt, cfCuda** out) {
  if (out) *out = NULL;
  int st = cf_cuda_check_model(m);
  if (st < 0) return st;
  return unsupported("cf_cuda_create");
}
void cf_cuda_free(cfCuda* g) {}
int cf_cuda_set_forces(cfCuda* g, const double* f_ext) {
  return unsupported("cf_cuda_set_forces");
}
int cf_cuda_set_supports(cfCuda* g, int active) {
  return unsupported("cf_cuda_set_supports");
}
int cf_cuda_step(cfCuda* g, const cfModel* m, cfData* d) {
  return unsupported("cf_cuda_step");
}
int cf_cuda_upload(cfCuda* g, const cfData* d, int what) {
  return unsupported("cf_cuda_upload");
}
int cf_cuda_download(cfCuda* g, cfData* d, int what) {
  return unsupported("cf_cuda_download");
}
int cf_cuda_download_async(cfCuda* g, int what) {
  return unsupported("cf_cuda_download_async");
}
int cf_cuda_download_wait(cfCuda* g, cfData* d) {
  return unsupported("cf_cuda_download_wait");
}
int cf_cuda_kernel_times(const cfCuda* g, double* ms, long* steps) {
  (void)g;
  for (int k = 0; ms && k < CF_CUDA_KT_COUNT; k++) ms[k] = 0;
  if (steps) *steps = 0;
  return unsupported("cf_cuda_kernel_times");
}

int cf_cuda_bus_bytes(const cfCuda* g, unsigned long long* h2d, unsigned long long* d2h) {
  (void)g;
  if (h2d) *h2d = 0;
  if (d2h) *d2h = 0;
  return unsupported("cf_cuda_bus_bytes");
}
int cf_cuda_sync(cfCuda* g) {
  return unsupported("cf_cuda_sync");
}
int cf_cuda_stage_polar(cfCuda* g, const cfModel* m, cfData* d) {
  return unsupported("cf_cuda_stage_polar");
}
int cf_cuda_stage_elastic(cfCuda* g, const cfModel* m) {
  return unsupported("cf_cuda_stage_elastic");
}
int cf_cuda_stage_assemble_system(cfCuda* g, const cfModel* m, double h) {
  return unsupported("cf_cuda_stage_assemble_system");
}
int cf_cuda_stage_pcg(cfCuda* g, const cfModel* m, cfData* d) {
  return unsupported("cf_cuda_stage_pcg");
}
int cf_cuda_stage_warm_start(cfCuda* g, const cfModel* m, double* c) {
  return unsupported("cf_cuda_stage_warm_start");
}
int cf_cuda_stage_update(cfCuda* g, const cfModel* m, double h) {
  return unsupported("cf_cuda_stage_update");
}
int cf_cuda_apply_A(cfCuda* g, int spmv, const double* x, double* y) {
  return unsupported("cf_cuda_apply_A");
}
int cf_cuda_monitor_stats(cfCuda* g, const cfModel* m, int full, cfMonitorStats* st, double* work) {
  (void)g, (void)m, (void)full, (void)st, (void)work;
  return unsupported("cf_cuda_monitor_stats");
}
int cf_cuda_apply_amg(cfCuda* g, const double* r, double* z) {
  return unsupported("cf_cuda_apply_amg");
}
const char* cf_cuda_device_name(const cfCuda* g) {
  return "none (" CF_NO_CUDA ")";
}
int cf_cuda_system(cfCuda* g, const cfModel* m, double cm, double ck, double eps) {
  return unsupported("cf_cuda_system");
}
int cf_cuda_solve(cfCuda* g, const cfModel* m, cfData* d, int nrhs, const double* const* b, double* const* x,
                  int warm) {
  return unsupported("cf_cuda_solve");
}
int cf_cuda_vec_create(cfCuda* g, int nvec) {
  return unsupported("cf_cuda_vec_create");
}
int cf_cuda_vec_set(cfCuda* g, int v, const double* x) {
  return unsupported("cf_cuda_vec_set");
}
int cf_cuda_vec_get(cfCuda* g, int v, double* x) {
  return unsupported("cf_cuda_vec_get");
}
int cf_cuda_vec_get_nodes(cfCuda* g, int v, int nn, const int* nodes, double* out) {
  return unsupported("cf_cuda_vec_get_nodes");
}
int cf_cuda_vec_set_nodes(cfCuda* g, int v, int nn, const int* nodes, const double* in) {
  return unsupported("cf_cuda_vec_set_nodes");
}
int cf_cuda_vec_comb(cfCuda* g, int y, double beta, int nsrc, const int* src, const double* c) {
  return unsupported("cf_cuda_vec_comb");
}
int cf_cuda_vec_maxabs(cfCuda* g, int v, double* out) {
  return unsupported("cf_cuda_vec_maxabs");
}
int cf_cuda_vec_field(cfCuda* g, int v, int field, int to_field) {
  return unsupported("cf_cuda_vec_field");
}
int cf_cuda_vec_mass(cfCuda* g, int x, int y) {
  return unsupported("cf_cuda_vec_mass");
}
int cf_cuda_vec_unfix(cfCuda* g, int v) {
  return unsupported("cf_cuda_vec_unfix");
}
int cf_cuda_vec_solve(cfCuda* g, const cfModel* m, cfData* d, int nrhs, const int* b, const int* x,
                      const double* b_scale, int warm, int v1) {
  return unsupported("cf_cuda_vec_solve");
}
int cf_cuda_node_rotations(cfCuda* g, int nn, const int* nodes, double* out) {
  return unsupported("cf_cuda_node_rotations");
}
int cf_cuda_set_node_rotations(cfCuda* g, int nn, const int* nodes, const double* R) {
  return unsupported("cf_cuda_set_node_rotations");
}
int cf_cuda_rotation_spread(cfCuda* g, double* out) {
  return unsupported("cf_cuda_rotation_spread");
}
int cf_cuda_vec_turn(cfCuda* g, int y, const int* src, const double* c) {
  return unsupported("cf_cuda_vec_turn");
}
int cf_cuda_vec_radius(cfCuda* g, int v, double* out) {
  return unsupported("cf_cuda_vec_radius");
}
int cf_cuda_vec_dot(cfCuda* g, int a, int b, double* out) {
  return unsupported("cf_cuda_vec_dot");
}
int cf_cuda_vec_rigid_sums(cfCuda* g, int v0, int v1, double* out) {
  return unsupported("cf_cuda_vec_rigid_sums");
}
int cf_cuda_polar_step(cfCuda* g, int v) {
  return unsupported("cf_cuda_polar_step");
}
int cf_cuda_turn_rotations(cfCuda* g, const double* D) {
  return unsupported("cf_cuda_turn_rotations");
}
int cf_cuda_turn_beyond(cfCuda* g, int v, double* out) {
  return unsupported("cf_cuda_turn_beyond");
}
