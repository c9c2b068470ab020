/* A CPU mock of the CUDA backend API (cofem/cuda.h) for checking test_cuda_stages' logic without
 * a device (tests/cuda/mock/run-mock.sh): the "device" is a private cfData stepped by the CPU
 * stages. Not the GPU's arithmetic: it checks the test's plumbing, scenarios and bookkeeping, and
 * a mock broken on purpose (v_prev left out of the upload, a NaN load "converging", supports not
 * switched back on, a warm start without v_prev) shows which of the test's checks catch what.
 * Not built by CMake. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cofem/cuda.h"
#include "fem/fem_backend.h"
#include "fem/fem_element.h"
#include "fem/fem_newton.h"
#include "fem/fem_pcg.h"
#include "fem/fem_precond.h"

struct cfCuda {
  const cfModel* m;
  cfData* d;
  int supports;
  cfCudaOptions opt;
  int pending;
  cfData* snap;
  /* the mechanism's solves (cf_cuda_system): AMG of the Newton matrix, held aside (d->precond
   * NULL) while block Jacobi serves a mass-only A */
  struct cfPrecond* amg;
  double amg_coef[3];
  unsigned long long h2d, d2h; /* cf_cuda_bus_bytes: the arrays fem_cuda.cu copies (its 64-byte status
                                  reads and the model's upload left out) */
  long kt_steps; /* kernel_timers: the backward-Euler steps (their fake times: the stages', below) */
  double* vec;   /* [nvec][ndof] the resident vectors (cf_cuda_vec_create) */
  int nvec;
};
/* the bytes of the fields `what` as fem_cuda.cu's upload/download copy them */
static unsigned long long field_bytes(const cfModel* m, const cfData* d, int what) {
  unsigned long long b = 0;
  for (int bit = 1; bit <= CF_CUDA_ALL; bit <<= 1) {
    if (!(what & bit)) continue;
    size_t n = 0;
    (void)cf_cuda_field((cfData*)d, m->nnode, m->ntet, m->npe, m->nnzb, bit, &n);
    b += n * sizeof(double);
  }
  if (what & CF_CUDA_B) b += sizeof(double);
  if ((what & CF_CUDA_R) && m->def.preconditioner == CF_PRECOND_AMG) b += sizeof(double) * 9 * (size_t)m->nnode;
  if ((what & CF_CUDA_R) && d->Rq) b += sizeof(double) * 36 * (size_t)m->ntet;
  if ((what & CF_CUDA_ACC) && d->a) b += sizeof(double) * (size_t)m->ndof;
  return b;
}
int cf_cuda_kernel_times(const cfCuda* g, double* ms, long* steps) {
  if (!g->opt.kernel_timers) return cf_error(CF_ERR_ARG, "cf_cuda_kernel_times: the backend was created without kernel_timers");
  /* the four stages' fake 1e-6 s a step (cf_cuda_step below), shared out over the groups */
  for (int k = 0; k < CF_CUDA_KT_COUNT; k++) ms[k] = 4e-3 * (double)g->kt_steps / CF_CUDA_KT_COUNT;
  if (steps) *steps = g->kt_steps;
  return CF_OK;
}
int cf_cuda_bus_bytes(const cfCuda* g, unsigned long long* h2d, unsigned long long* d2h) {
  if (h2d) *h2d = g->h2d;
  if (d2h) *d2h = g->d2h;
  return 0;
}

cfCudaOptions cf_cuda_default_options(void) {
  cfCudaOptions o;
  memset(&o, 0, sizeof o);
  o.check_every = 8;
  o.use_graphs = 1;
  /* amg_float: accepted (0 or 1, as fem_cuda.cu) and ignored: the mock's "device" runs the
   * CPU's double V-cycle, so its float AMG is the double one; only the device run tests it */
  o.amg_float = 0;
  return o;
}
int cf_cuda_available(char* why, int n) { return cf_cuda_device_available(0, why, n); }
int cf_cuda_device_available(int device, char* why, int n) {
  if (device != 0) { if (why) snprintf(why, n, "mock: device %d absent", device); return 0; }
  if (why && n) why[0] = 0;
  return 1;
}
static void copy_fields(const cfModel* m, cfData* dst, cfData* src, int what) {
  for (int bit = 1; bit <= CF_CUDA_ALL; bit <<= 1) {
    if (!(what & bit)) continue;
    size_t n = 0, n2 = 0;
    double* a = cf_cuda_field(dst, m->nnode, m->ntet, m->npe, m->nnzb, bit, &n);
    double* b = cf_cuda_field(src, m->nnode, m->ntet, m->npe, m->nnzb, bit, &n2);
    if (n && a && b) memcpy(a, b, n * sizeof(double)); /* a field the model lacks (no a without
                                                          generalized-alpha): NULL, nothing to copy */
  }
  if (what & CF_CUDA_B) dst->b_scale = src->b_scale;
  /* AMG: the node rotations travel with R (as fem_cuda.cu's upload/download) */
  if ((what & CF_CUDA_R) && m->def.preconditioner == CF_PRECOND_AMG)
    memcpy(dst->node_R, src->node_R, sizeof(double) * 9 * m->nnode);
  /* quadratic elements: the quadrature points' rotations travel with R too */
  if ((what & CF_CUDA_R) && dst->Rq && src->Rq) memcpy(dst->Rq, src->Rq, sizeof(double) * 36 * m->ntet);
  /* generalized-alpha: a travels with f_el(x) and the flag (as fem_cuda.cu's upload/download) */
  if ((what & CF_CUDA_ACC) && dst->a && src->a) {
    memcpy(dst->ga_f0, src->ga_f0, sizeof(double) * m->ndof);
    dst->ga_ready = src->ga_ready;
  }
}
/* the upload's rule (fem_cuda.cu): x or v without a make a stale; a new start clears the Newton
 * warm start's increment, as cf_data_reset does */
static void ga_upload_rule(const cfModel* m, cfData* dev, int what) {
  if (!dev->a) return;
  if (!(what & CF_CUDA_ACC) && (what & (CF_CUDA_X | CF_CUDA_V))) dev->ga_ready = 0;
  if (!dev->ga_ready) {
    memset(dev->ga_du1, 0, sizeof(double) * m->ndof);
    memset(dev->ga_du, 0, sizeof(double) * m->ndof);
  }
}
int cf_cuda_create(const cfModel* m, const cfData* d, cfCuda** out) { return cf_cuda_create_ex(m, d, NULL, out); }
int cf_cuda_create_ex(const cfModel* m, const cfData* d, const cfCudaOptions* opt, cfCuda** out) {
  *out = NULL;
  int st = cf_cuda_check_model(m);
  if (st < 0) return st;
  cfCuda* g = calloc(1, sizeof *g);
  g->m = m;
  g->opt = opt ? *opt : cf_cuda_default_options();
  if (g->opt.device != 0) { int dev = g->opt.device; free(g); return cf_error(CF_ERR_CUDA, "mock: no device %d", dev); }
  if (g->opt.amg_float != 0 && g->opt.amg_float != 1) {
    int v = g->opt.amg_float;
    free(g);
    return cf_error(CF_ERR_ARG, "cf_cuda_create: amg_float = %d must be 0 or 1", v);
  }
  cf_data_create(m, &g->d);
  cf_data_create(m, &g->snap);
  copy_fields(m, g->d, (cfData*)d, CF_CUDA_STATE | CF_CUDA_F_EXT);
  ga_upload_rule(m, g->d, CF_CUDA_STATE | CF_CUDA_F_EXT);
  g->supports = d->supports_active;
  *out = g;
  return CF_OK;
}
void cf_cuda_free(cfCuda* g) { if (!g) return; if (g->amg && !g->d->precond) g->d->precond = g->amg; cf_data_free(g->d); cf_data_free(g->snap); free(g->vec); free(g); }
int cf_cuda_set_forces(cfCuda* g, const double* f) { memcpy(g->d->f_ext, f, sizeof(double) * g->m->ndof); g->h2d += sizeof(double) * g->m->ndof; return 0; }
int cf_cuda_set_supports(cfCuda* g, int a) { g->supports = a ? 1 : 0; return 0; }
int cf_cuda_step(cfCuda* g, const cfModel* m, cfData* d) {
  cfData* p = g->d;
  p->supports_active = g->supports;
  p->steps = d->steps; p->t = d->t; p->pcg_iters_total = d->pcg_iters_total;
  memcpy(p->warning, d->warning, sizeof d->warning);
  p->newton_iters_total = d->newton_iters_total;
  /* the monitor's running sums live in d (the GPU keeps them on the host) */
  p->mon_energy0 = d->mon_energy0; p->mon_energy = d->mon_energy;
  p->mon_work = d->mon_work; p->mon_work_max = d->mon_work_max;
  int st = cf_step(m, p); /* with the divergence monitor, as fem_cuda.cu's steps */
  d->mon_energy0 = p->mon_energy0; d->mon_energy = p->mon_energy;
  d->mon_work = p->mon_work; d->mon_work_max = p->mon_work_max;
  if (m->def.integrator == CF_INTEGRATOR_GENERALIZED_ALPHA) {
    d->newton_iters = p->newton_iters; d->newton_iters_total = p->newton_iters_total;
    d->newton_residual = p->newton_residual; d->step_cuts = p->step_cuts;
  }
  d->ninverted = p->ninverted;
  if (st < 0) return st;
  d->steps = p->steps; d->t = p->t; d->pcg_iters = p->pcg_iters; d->pcg_residual = p->pcg_residual;
  d->pcg_iters_total = p->pcg_iters_total;
  memcpy(d->warning, p->warning, sizeof d->warning);
  for (int i = 0; i < CF_STAGE_COUNT; i++) d->timer[i] += 1e-6;
  if (g->opt.kernel_timers && m->def.integrator != CF_INTEGRATOR_GENERALIZED_ALPHA) g->kt_steps++;
  return st;
}
int cf_cuda_upload(cfCuda* g, const cfData* d, int what) {
  g->h2d += field_bytes(g->m, g->d, what);
  copy_fields(g->m, g->d, (cfData*)d, what);
  ga_upload_rule(g->m, g->d, what);
  return 0;
}
int cf_cuda_download(cfCuda* g, cfData* d, int what) {
  g->d2h += field_bytes(g->m, g->d, what);
  copy_fields(g->m, d, g->d, what);
  double t0 = cf_wall_time();
  d->timer[CF_STAGE_TRANSFER] += cf_wall_time() - t0 + 1e-9;
  return 0;
}
int cf_cuda_download_async(cfCuda* g, int what) {
  g->d2h += field_bytes(g->m, g->d, what & (CF_CUDA_X | CF_CUDA_V | CF_CUDA_R | CF_CUDA_F_EL)) -
            ((what & CF_CUDA_R) && g->m->def.preconditioner == CF_PRECOND_AMG ? sizeof(double) * 9 * (size_t)g->m->nnode : 0);
  copy_fields(g->m, g->snap, g->d, what);
  g->pending |= what;
  return 0;
}
int cf_cuda_download_wait(cfCuda* g, cfData* d) { copy_fields(g->m, d, g->snap, g->pending); g->pending = 0; return 0; }
int cf_cuda_sync(cfCuda* g) { return 0; }
int cf_cuda_stage_polar(cfCuda* g, const cfModel* m, cfData* d) { cf_stage_polar(m, g->d); if (d) d->ninverted = g->d->ninverted; return 0; }
int cf_cuda_stage_elastic(cfCuda* g, const cfModel* m) { cf_stage_elastic(m, g->d); return 0; }
int cf_cuda_stage_assemble_system(cfCuda* g, const cfModel* m, double h) { g->d->supports_active = g->supports; cf_stage_assemble_system(m, g->d, h); return 0; }
int cf_cuda_stage_pcg(cfCuda* g, const cfModel* m, cfData* d) {
  g->d->supports_active = g->supports;
  g->d->pcg_iters_total = d->pcg_iters_total;
  memcpy(g->d->warning, d->warning, sizeof d->warning);
  int st = cf_stage_pcg(m, g->d);
  d->pcg_iters = g->d->pcg_iters; d->pcg_residual = g->d->pcg_residual; d->pcg_iters_total = g->d->pcg_iters_total;
  memcpy(d->warning, g->d->warning, sizeof d->warning);
  return st;
}
int cf_cuda_stage_warm_start(cfCuda* g, const cfModel* m, double* c) {
  cfData* d = g->d;
  d->supports_active = g->supports;
  size_t nd = m->ndof;
  double *x = malloc(nd * 8), *v1 = malloc(nd * 8), *y = malloc(nd * 8), *y1 = malloc(nd * 8);
  int use_fixed = d->supports_active && m->nfixed;
  memcpy(x, d->v, nd * 8); memcpy(v1, d->v_prev, nd * 8);
  for (size_t i = 0; i < nd; i++) if (use_fixed && m->fixed[i]) x[i] = v1[i] = 0;
  for (int i = 0; i < m->nnode; i++) { cf_bsr_row(i, m->row_ptr, m->col, d->A, x, y); cf_bsr_row(i, m->row_ptr, m->col, d->A, v1, y1); }
  double s[CF_WARM_NSUM] = {0};
  for (int i = 0; i < m->nnode; i++) cf_node_warm_sums(i, x, v1, y, y1, d->b, m->fixed, use_fixed, s);
  if (c) cf_warm_coefficients(s, m->def.pcg_tol, d->b_scale, c);
  memcpy(v1, d->v_prev, nd * 8);
  cf_pcg_warm_start(m, d, v1);
  free(x); free(v1); free(y); free(y1);
  return 0;
}
int cf_cuda_stage_update(cfCuda* g, const cfModel* m, double h) { cf_stage_update(m, g->d, h); return 0; }
int cf_cuda_apply_A(cfCuda* g, int spmv, const double* x, double* y) {
  g->h2d += sizeof(double) * g->m->ndof, g->d2h += sizeof(double) * g->m->ndof;
  for (int i = 0; i < g->m->nnode; i++) cf_bsr_row(i, g->m->row_ptr, g->m->col, g->d->A, x, y);
  return 0;
}
int cf_cuda_monitor_stats(cfCuda* g, const cfModel* m, int full, cfMonitorStats* st, double* work) {
  cfData* p = g->d;
  p->supports_active = g->supports;
  cf_divergence_stats(m, p, st);
  st->full = full;
  st->strain = full ? cf_strain_energy_fast(m, p) : 0.0;
  const int use_fixed = p->supports_active && m->nfixed;
  double w = 0;
  for (int i = 0; i < m->ndof; i++)
    if (!(use_fixed && m->fixed[i])) w += m->def.dt * p->v[i] * (p->f_ext[i] + m->node_mass[i / 3] * m->def.gravity[i % 3]);
  *work = w;
  return CF_OK;
}
int cf_cuda_apply_amg(cfCuda* g, const double* r, double* z) {
  if (g->m->def.preconditioner != CF_PRECOND_AMG) return cf_error(CF_ERR_ARG, "mock: no AMG");
  g->h2d += sizeof(double) * g->m->ndof, g->d2h += sizeof(double) * g->m->ndof;
  g->d->supports_active = g->supports;
  return cf_precond_apply(g->m, g->d, r, z);
}
const char* cf_cuda_device_name(const cfCuda* g) { return "mock (CPU)"; }
/* the mechanism's solves (fem_cuda.cu's cf_cuda_system / cf_cuda_solve) by the CPU's block
 * Jacobi PCG on the mock's private data */
int cf_cuda_system(cfCuda* g, const cfModel* m, double cm, double ck, double eps) {
  cfData* p = g->d;
  if (m->def.preconditioner == CF_PRECOND_AMG) {
    if (!g->amg && p->precond) g->amg = p->precond;
    p->precond = NULL;
    if (ck > 0) {
      double coef[3] = {cm, ck, eps};
      p->precond = g->amg;
      if (memcmp(coef, g->amg_coef, sizeof coef)) {
        int st = cf_precond_create_amg_with(m, p, cm, ck, eps);
        g->amg = p->precond;
        if (st < 0) return st;
        memcpy(g->amg_coef, coef, sizeof coef);
      }
      cf_precond_update(m, p);
    }
  }
  for (int k = 0; k < m->nnzb; k++) cf_block_gather(k, m->blk_src_ptr, m->blk_src, p->KR, m->Mblk, cm, ck, p->A);
  for (int n = 0; eps != 0 && n < m->nnode; n++)
    for (int a = 0; a < 3; a++) p->A[9 * (size_t)m->diag[n] + 4 * a] += eps;
  for (int n = 0; n < m->nnode; n++) cf_block_jacobi(n, m->diag, p->A, m->fixed, g->supports, p->Pinv);
  return CF_OK;
}
int cf_cuda_solve(cfCuda* g, const cfModel* m, cfData* d, int nrhs, const double* const* b, double* const* x, int warm) {
  cfData* p = g->d;
  p->supports_active = g->supports;
  for (int c = 0; c < nrhs; c++) {
    g->h2d += sizeof(double) * m->ndof * (warm ? 2 : 1), g->d2h += sizeof(double) * m->ndof;
    memcpy(p->b, b[c], sizeof(double) * m->ndof);
    p->b_scale = 0;
    if (warm) memcpy(p->v, x[c], sizeof(double) * m->ndof);
    else memset(p->v, 0, sizeof(double) * m->ndof);
    p->pcg_iters_total = d->pcg_iters_total;
    memcpy(p->warning, d->warning, sizeof d->warning);
    int st = cf_stage_pcg(m, p);
    d->pcg_iters = p->pcg_iters; d->pcg_residual = p->pcg_residual; d->pcg_iters_total = p->pcg_iters_total;
    memcpy(d->warning, p->warning, sizeof d->warning);
    memcpy(x[c], p->v, sizeof(double) * m->ndof);
    if (st != CF_OK) return st;
  }
  return CF_OK;
}

/* ---- resident vectors (fem_cuda.cu's, by the CPU on the mock's memory; the bus bytes as the device
 * copies them: vectors, node lists and results) ---- */
#define VEC(g, v) ((g)->vec + (size_t)(v) * (size_t)(g)->m->ndof)
static int vec_ok(const cfCuda* g, int v, const char* fn) {
  return g && v >= 0 && v < g->nvec ? CF_OK : cf_error(CF_ERR_ARG, "%s: no vector %d", fn, v);
}
int cf_cuda_vec_create(cfCuda* g, int nvec) {
  free(g->vec);
  g->vec = calloc((size_t)(nvec > 0 ? nvec : 1) * (size_t)g->m->ndof, sizeof(double));
  g->nvec = g->vec ? nvec : 0;
  return g->vec ? CF_OK : cf_error(CF_ERR_NOMEM, "cf_cuda_vec_create: out of memory");
}
int cf_cuda_vec_set(cfCuda* g, int v, const double* x) {
  if (vec_ok(g, v, "cf_cuda_vec_set") < 0) return CF_ERR_ARG;
  memcpy(VEC(g, v), x, sizeof(double) * g->m->ndof);
  g->h2d += sizeof(double) * g->m->ndof;
  return CF_OK;
}
int cf_cuda_vec_get(cfCuda* g, int v, double* x) {
  if (vec_ok(g, v, "cf_cuda_vec_get") < 0) return CF_ERR_ARG;
  memcpy(x, VEC(g, v), sizeof(double) * g->m->ndof);
  g->d2h += sizeof(double) * g->m->ndof;
  return CF_OK;
}
int cf_cuda_vec_get_nodes(cfCuda* g, int v, int nn, const int* nodes, double* out) {
  if (vec_ok(g, v, "cf_cuda_vec_get_nodes") < 0) return CF_ERR_ARG;
  for (int k = 0; k < nn; k++) memcpy(out + 3 * k, VEC(g, v) + 3 * (size_t)nodes[k], 3 * sizeof(double));
  g->h2d += sizeof(int) * (size_t)nn, g->d2h += 3 * sizeof(double) * (size_t)nn;
  return CF_OK;
}
int cf_cuda_vec_set_nodes(cfCuda* g, int v, int nn, const int* nodes, const double* in) {
  if (vec_ok(g, v, "cf_cuda_vec_set_nodes") < 0) return CF_ERR_ARG;
  for (int k = 0; k < nn; k++) memcpy(VEC(g, v) + 3 * (size_t)nodes[k], in + 3 * k, 3 * sizeof(double));
  g->h2d += (sizeof(int) + 3 * sizeof(double)) * (size_t)nn;
  return CF_OK;
}
int cf_cuda_vec_comb(cfCuda* g, int y, double beta, int nsrc, const int* src, const double* c) {
  if (vec_ok(g, y, "cf_cuda_vec_comb") < 0) return CF_ERR_ARG;
  if (nsrc < 0 || nsrc > CF_CUDA_COMB_MAX) return cf_error(CF_ERR_ARG, "cf_cuda_vec_comb: %d sources", nsrc);
  for (int k = 0; k < nsrc; k++)
    if (vec_ok(g, src[k], "cf_cuda_vec_comb") < 0) return CF_ERR_ARG;
  double* Y = VEC(g, y);
  for (int i = 0; i < g->m->ndof; i++) {
    double t = beta != 0 ? beta * Y[i] : 0;
    for (int k = 0; k < nsrc; k++) t += c[k] * VEC(g, src[k])[i];
    Y[i] = t;
  }
  return CF_OK;
}
int cf_cuda_vec_maxabs(cfCuda* g, int v, double* out) {
  if (vec_ok(g, v, "cf_cuda_vec_maxabs") < 0) return CF_ERR_ARG;
  double mx = 0;
  for (int i = 0; i < g->m->ndof; i++) mx = fmax(mx, fabs(VEC(g, v)[i]));
  *out = mx;
  g->d2h += sizeof(double);
  return CF_OK;
}
int cf_cuda_vec_field(cfCuda* g, int v, int field, int to_field) {
  if (vec_ok(g, v, "cf_cuda_vec_field") < 0) return CF_ERR_ARG;
  double* f = field == CF_CUDA_X ? g->d->x : field == CF_CUDA_F_EL ? g->d->f_el : NULL;
  if (!f) return cf_error(CF_ERR_ARG, "cf_cuda_vec_field: field %d", field);
  if (to_field) memcpy(f, VEC(g, v), sizeof(double) * g->m->ndof);
  else memcpy(VEC(g, v), f, sizeof(double) * g->m->ndof);
  return CF_OK;
}
int cf_cuda_vec_mass(cfCuda* g, int x, int y) {
  if (vec_ok(g, x, "cf_cuda_vec_mass") < 0 || vec_ok(g, y, "cf_cuda_vec_mass") < 0 || x == y)
    return cf_error(CF_ERR_ARG, "cf_cuda_vec_mass: vectors %d, %d", x, y);
  const cfModel* m = g->m;
  const double* X = VEC(g, x);
  double* Y = VEC(g, y);
  for (int n = 0; n < m->nnode; n++)
    for (int a = 0; a < 3; a++) {
      double t = 0;
      for (int p = m->row_ptr[n]; p < m->row_ptr[n + 1]; p++) t += m->Mblk[p] * X[3 * (size_t)m->col[p] + a];
      Y[3 * n + a] = t;
    }
  return CF_OK;
}
int cf_cuda_vec_unfix(cfCuda* g, int v) {
  if (vec_ok(g, v, "cf_cuda_vec_unfix") < 0) return CF_ERR_ARG;
  for (int i = 0; g->m->nfixed && i < g->m->ndof; i++)
    if (g->m->fixed[i]) VEC(g, v)[i] = 0;
  return CF_OK;
}
int cf_cuda_vec_solve(cfCuda* g, const cfModel* m, cfData* d, int nrhs, const int* b, const int* x, const double* b_scale,
                      int warm, int v1) {
  if (v1 >= 0 && (vec_ok(g, v1, "cf_cuda_vec_solve") < 0 || nrhs != 1 || !warm))
    return cf_error(CF_ERR_ARG, "cf_cuda_vec_solve: a second start vector takes one right side, warm");
  cfData* p = g->d;
  p->supports_active = g->supports;
  for (int c = 0; c < nrhs; c++) {
    if (vec_ok(g, b[c], "cf_cuda_vec_solve") < 0 || vec_ok(g, x[c], "cf_cuda_vec_solve") < 0) return CF_ERR_ARG;
    memcpy(p->b, VEC(g, b[c]), sizeof(double) * m->ndof);
    p->b_scale = b_scale && b_scale[c] > 0 ? b_scale[c] : 0;
    if (warm) memcpy(p->v, VEC(g, x[c]), sizeof(double) * m->ndof);
    else memset(p->v, 0, sizeof(double) * m->ndof);
    if (v1 >= 0) cf_pcg_warm_start(m, p, VEC(g, v1));
    p->pcg_iters_total = d->pcg_iters_total;
    memcpy(p->warning, d->warning, sizeof d->warning);
    int st = cf_stage_pcg(m, p);
    d->pcg_iters = p->pcg_iters; d->pcg_residual = p->pcg_residual; d->pcg_iters_total = p->pcg_iters_total;
    memcpy(d->warning, p->warning, sizeof d->warning);
    memcpy(VEC(g, x[c]), p->v, sizeof(double) * m->ndof);
    if (st != CF_OK) return st;
  }
  return CF_OK;
}
int cf_cuda_node_rotations(cfCuda* g, int nn, const int* nodes, double* out) {
  cf_precond_update_n(g->m, g->d, CF_PRECOND_CONVERGED);
  for (int k = 0; k < nn; k++) memcpy(out + 9 * k, g->d->node_R + 9 * (size_t)nodes[k], 9 * sizeof(double));
  g->h2d += sizeof(int) * (size_t)nn, g->d2h += 9 * sizeof(double) * (size_t)nn;
  return CF_OK;
}
int cf_cuda_set_node_rotations(cfCuda* g, int nn, const int* nodes, const double* R) {
  for (int k = 0; k < nn; k++) memcpy(g->d->node_R + 9 * (size_t)nodes[k], R + 9 * k, 9 * sizeof(double));
  g->h2d += (sizeof(int) + 9 * sizeof(double)) * (size_t)nn;
  return CF_OK;
}
int cf_cuda_rotation_spread(cfCuda* g, double* out) {
  const cfModel* m = g->m;
  double mis = 0;
  for (int e = 0; e < m->ntet; e++)
    for (int a = 0; a < m->npe; a++) {
      const double *R = g->d->R + 9 * (size_t)e, *Q = g->d->node_R + 9 * (size_t)m->tet[(size_t)m->npe * e + a];
      double tr = 0;
      for (int k = 0; k < 9; k++) tr += R[k] * Q[k];
      mis = fmax(mis, 3 - tr);
    }
  *out = mis;
  g->d2h += sizeof(double);
  return CF_OK;
}
int cf_cuda_vec_turn(cfCuda* g, int y, const int* src, const double* c) {
  for (int a = 0; a < 3; a++)
    if (vec_ok(g, src[a], "cf_cuda_vec_turn") < 0 || src[a] == y) return cf_error(CF_ERR_ARG, "cf_cuda_vec_turn: vector %d", src[a]);
  if (vec_ok(g, y, "cf_cuda_vec_turn") < 0) return CF_ERR_ARG;
  const cfModel* m = g->m;
  const double *Q = g->d->node_R, *x0 = VEC(g, src[0]), *x1 = VEC(g, src[1]), *x2 = VEC(g, src[2]);
  double* Y = VEC(g, y);
  for (int n = 0; n < m->nnode; n++) {
    double u[3];
    for (int a = 0; a < 3; a++) u[a] = c[0] * x0[3 * n + a] + c[1] * x1[3 * n + a] + c[2] * x2[3 * n + a];
    for (int a = 0; a < 3; a++) Y[3 * n + a] = Q[9 * n + 3 * a] * u[0] + Q[9 * n + 3 * a + 1] * u[1] + Q[9 * n + 3 * a + 2] * u[2];
  }
  return cf_cuda_vec_unfix(g, y);
}
int cf_cuda_vec_radius(cfCuda* g, int v, double* out) {
  if (vec_ok(g, v, "cf_cuda_vec_radius") < 0) return CF_ERR_ARG;
  const int n = g->m->nnode;
  const double* x = VEC(g, v);
  double c[3] = {0, 0, 0}, r2 = 0;
  for (int i = 0; i < n; i++)
    for (int k = 0; k < 3; k++) c[k] += x[3 * i + k];
  for (int k = 0; k < 3; k++) c[k] /= n;
  for (int i = 0; i < n; i++) {
    double s = 0;
    for (int k = 0; k < 3; k++) s += (x[3 * i + k] - c[k]) * (x[3 * i + k] - c[k]);
    r2 = fmax(r2, isnan(s) ? INFINITY : s);
  }
  *out = sqrt(r2);
  g->d2h += sizeof(double);
  return CF_OK;
}
int cf_cuda_vec_dot(cfCuda* g, int a, int b, double* out) {
  if (vec_ok(g, a, "cf_cuda_vec_dot") < 0 || vec_ok(g, b, "cf_cuda_vec_dot") < 0) return CF_ERR_ARG;
  double t = 0;
  for (int i = 0; i < g->m->ndof; i++) t += VEC(g, a)[i] * VEC(g, b)[i];
  *out = t;
  g->d2h += sizeof(double);
  return CF_OK;
}
int cf_cuda_vec_rigid_sums(cfCuda* g, int v0, int v1, double* out) {
  if (vec_ok(g, v0, "cf_cuda_vec_rigid_sums") < 0 || vec_ok(g, v1, "cf_cuda_vec_rigid_sums") < 0) return CF_ERR_ARG;
  const double *x0 = VEC(g, v0), *x1 = VEC(g, v1);
  memset(out, 0, 16 * sizeof(double));
  for (int n = 0; n < g->m->nnode; n++) {
    const double mn = g->m->node_mass[n];
    out[0] += mn;
    for (int a = 0; a < 3; a++) out[1 + a] += mn * x0[3 * n + a], out[4 + a] += mn * x1[3 * n + a];
    for (int a = 0; a < 3; a++)
      for (int b = 0; b < 3; b++) out[7 + 3 * a + b] += mn * x1[3 * n + a] * x0[3 * n + b];
  }
  g->d2h += 16 * sizeof(double);
  return CF_OK;
}
int cf_cuda_polar_step(cfCuda* g, int v) {
  if (vec_ok(g, v, "cf_cuda_polar_step") < 0) return CF_ERR_ARG;
  if (g->m->npe != 4) return cf_error(CF_ERR_UNSUPPORTED, "cf_cuda_polar_step: linear tetrahedra only");
  for (int e = 0; e < g->m->ntet; e++) cf_elem_polar_step(e, g->m->tet, g->m->Dm_inv, VEC(g, v), g->d->R);
  return CF_OK;
}
int cf_cuda_turn_rotations(cfCuda* g, const double* D) {
  double O[9];
  for (int e = 0; e < g->m->ntet; e++) {
    cf_mul3(D, g->d->R + 9 * (size_t)e, O);
    memcpy(g->d->R + 9 * (size_t)e, O, sizeof O);
  }
  for (int n = 0; n < g->m->nnode; n++) {
    cf_mul3(D, g->d->node_R + 9 * (size_t)n, O);
    memcpy(g->d->node_R + 9 * (size_t)n, O, sizeof O);
  }
  g->h2d += 9 * sizeof(double);
  return CF_OK;
}
int cf_cuda_turn_beyond(cfCuda* g, int v, double* out) {
  if (vec_ok(g, v, "cf_cuda_turn_beyond") < 0) return CF_ERR_ARG;
  if (g->m->npe != 4) return cf_error(CF_ERR_UNSUPPORTED, "cf_cuda_turn_beyond: linear tetrahedra only");
  double t2 = 0;
  for (int e = 0; e < g->m->ntet; e++) {
    const double a = cf_elem_turn_beyond2(e, g->m->tet, g->m->Dm_inv, VEC(g, v), g->d->R);
    t2 = fmax(t2, isnan(a) ? INFINITY : a);
  }
  *out = t2;
  g->d2h += sizeof(double);
  return CF_OK;
}
