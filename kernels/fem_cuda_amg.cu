/* The AMG preconditioner on the device (kernels/fem_cuda_amg.h; the CPU's is host/fem/fem_amg.c).
 *
 *   rotate      k_amg_rotate_in / _out   t = Q^T r (fixed DOFs zeroed), z = Q y     per node
 *   level 0     k_amg_bsr                 w = A0 x, A0's 3x3 blocks (cf_bsr_row)   per block row
 *               k_amg_bsr_warp            the same, a warp per block row (CF_CUDA_SPMV_WARP)
 *   levels >= 1 k_amg_csr                 y (+)= A x for A, P and R: one warp per row
 *   smoother    k_amg_cheb_first          r = b (- A x), d = D^-1 r / theta, x (+)= d   per node
 *               k_amg_cheb_step           r -= A d, d = c1 d + c2 D^-1 r, x += d       per node
 *               k_amg_sub                 r -= w (the residual handed to the coarser level)
 *   coarsest    k_amg_dense               x = A_c^-1 b, the inverse dense: one warp per row
 * D^-1: the inverse diagonal blocks of the level's nodes (3x3 on level 0, up to 6x6 above), as
 * the CPU's diag_node. Reductions inside a row run in a fixed order (deterministic); they differ
 * from the CPU's sequential sums by round-off only.
 *
 * amg_float (cfCudaOptions.amg_float): the matrices of the V-cycle (level 0's A0 blocks, the
 * coarser levels' A, P and R) stored as float, the same indices; every product still
 * accumulates in double and every vector (x, b, r, d, w), the inverse diagonal blocks and the
 * coarsest level's dense inverse stay double. The cycle is then the double V-cycle of the
 * matrices rounded to float: still a fixed linear operator, and symmetric as before (a symmetric
 * A rounds to a symmetric A; R = P^T rounds to R = P^T), so the PCG stays valid; it moves 4 bytes
 * less per matrix entry read, which is what the V-cycle's time is made of (its SpMVs). Vectors in
 * float would save another ~16 of the ~400 bytes per level-0 unknown of each smoother product,
 * at the price of round-off in every vector update; not done. */
#include "fem_cuda_amg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lapacke.h>

#include "cofem/status.h"
#include "cuda_bsr_warp.h"
#include "cuda_util.h"
#include "fem/fem_element.h"

namespace {

constexpr int kThreads = 256;
constexpr int kWarp = 32;
constexpr int kMaxDegree = 8; /* Chebyshev degree (cfAmgOptions.cheb_degree; the default is 2) */
constexpr int kMaxCoarse = 8192; /* coarsest unknowns: a 512 MiB dense inverse (coarse_max is 3000) */

int blocks(long n) { return (int)((n + kThreads - 1) / kThreads); }
int warp_blocks(long rows) { return (int)((rows * kWarp + kThreads - 1) / kThreads); }

/* ---- kernels ------------------------------------------------------------------------------- */

__global__ void __launch_bounds__(kThreads)
    k_amg_rotate_in(int nnode, const double* Q, const unsigned char* fixed, int zero_fixed, const double* r,
                    double* t, const int* done) {
  if (*done) return;
  int n = blockIdx.x * kThreads + threadIdx.x;
  if (n >= nnode) return;
  const double* q = Q + 9 * (size_t)n;
  const double r0 = r[3 * n], r1 = r[3 * n + 1], r2 = r[3 * n + 2];
  for (int i = 0; i < 3; i++) {
    double v = q[i] * r0 + q[3 + i] * r1 + q[6 + i] * r2;
    t[3 * n + i] = zero_fixed && fixed[3 * n + i] ? 0.0 : v;
  }
}

__global__ void __launch_bounds__(kThreads)
    k_amg_rotate_out(int nnode, const double* Q, const double* y, double* z, const int* done) {
  if (*done) return;
  int n = blockIdx.x * kThreads + threadIdx.x;
  if (n >= nnode) return;
  const double* q = Q + 9 * (size_t)n;
  const double y0 = y[3 * n], y1 = y[3 * n + 1], y2 = y[3 * n + 2];
  for (int i = 0; i < 3; i++) z[3 * n + i] = q[3 * i] * y0 + q[3 * i + 1] * y1 + q[3 * i + 2] * y2;
}

/* block row i of y = A x: the double blocks by cf_bsr_row (the CPU's body); the float blocks of
 * amg_float in the same order, each entry widened to double before its product */
__device__ __forceinline__ void amg_bsr_row(int i, const int* row_ptr, const int* col, const double* A,
                                            const double* x, double* y) {
  cf_bsr_row(i, row_ptr, col, A, x, y);
}
__device__ __forceinline__ void amg_bsr_row(int i, const int* row_ptr, const int* col, const float* A,
                                            const double* x, double* y) {
  double s0 = 0, s1 = 0, s2 = 0;
  for (int k = row_ptr[i]; k < row_ptr[i + 1]; k++) {
    const float* B = A + 9 * (long)k;
    const double* xj = x + 3 * col[k];
    s0 += (double)B[0] * xj[0] + (double)B[1] * xj[1] + (double)B[2] * xj[2];
    s1 += (double)B[3] * xj[0] + (double)B[4] * xj[1] + (double)B[5] * xj[2];
    s2 += (double)B[6] * xj[0] + (double)B[7] * xj[1] + (double)B[8] * xj[2];
  }
  y[3 * i] = s0;
  y[3 * i + 1] = s1;
  y[3 * i + 2] = s2;
}

template <class T>
__global__ void __launch_bounds__(kThreads)
    k_amg_bsr(int nnode, const int* row_ptr, const int* col, const T* val, const double* x, double* y,
              const int* done) {
  if (*done) return;
  int i = blockIdx.x * kThreads + threadIdx.x;
  if (i < nnode) amg_bsr_row(i, row_ptr, col, val, x, y);
}

/* k_amg_bsr with a warp per block row (the backend's CF_CUDA_SPMV_WARP: cf_warp_bsr_row) */
template <class T>
__global__ void __launch_bounds__(kThreads)
    k_amg_bsr_warp(int nnode, const int* row_ptr, const int* col, const T* val, const double* x, double* y,
                   const int* done) {
  if (*done) return;
  const long gt = (long)blockIdx.x * kThreads + threadIdx.x;
  const int row = (int)(gt / kWarp), lane = (int)(gt % kWarp);
  if (row >= nnode) return; /* whole warps leave together */
  double y0, y1, y2;
  cf_warp_bsr_row(row, row_ptr, col, val, x, lane, &y0, &y1, &y2);
  if (lane == 0) y[3 * row] = y0, y[3 * row + 1] = y1, y[3 * row + 2] = y2;
}

/* y[i] = (add ? y[i] : 0) + sum_k val[k] x[col[k]], one warp per row, lanes strided, then a
 * butterfly sum in a fixed order; T: double, or float (amg_float) widened to double */
template <class T>
__global__ void __launch_bounds__(kThreads)
    k_amg_csr(int nrow, const int* ptr, const int* col, const T* val, const double* x, double* y, int add,
              const int* done) {
  if (*done) return;
  const long gt = (long)blockIdx.x * kThreads + threadIdx.x;
  const int row = (int)(gt / kWarp), lane = (int)(gt % kWarp);
  if (row >= nrow) return; /* whole warps leave together: nrow * 32 threads are in use */
  double s = 0;
  for (int k = ptr[row] + lane; k < ptr[row + 1]; k += kWarp) s += (double)val[k] * x[col[k]];
  for (int off = kWarp / 2; off > 0; off >>= 1) s += __shfl_xor_sync(0xffffffffu, s, off);
  if (lane == 0) y[row] = add ? y[row] + s : s;
}

/* x = Cinv b, Cinv dense n x n row-major (symmetric), one warp per row */
__global__ void __launch_bounds__(kThreads)
    k_amg_dense(int n, const double* C, const double* b, double* x, const int* done) {
  if (*done) return;
  const long gt = (long)blockIdx.x * kThreads + threadIdx.x;
  const int row = (int)(gt / kWarp), lane = (int)(gt % kWarp);
  if (row >= n) return;
  const double* c = C + (size_t)row * n;
  double s = 0;
  for (int j = lane; j < n; j += kWarp) s += c[j] * b[j];
  for (int off = kWarp / 2; off > 0; off >>= 1) s += __shfl_xor_sync(0xffffffffu, s, off);
  if (lane == 0) x[row] = s;
}

/* out = D_i^-1 in over node i's unknowns a .. a + sz - 1 (diag_node of fem_amg.c) */
__device__ __forceinline__ void diag_block(const double* D, int a, int sz, const double* in, double* out) {
  for (int r = 0; r < sz; r++) {
    double t = 0;
    for (int c = 0; c < sz; c++) t += D[r * sz + c] * in[a + c];
    out[r] = t;
  }
}

/* first Chebyshev term: zero: r = b, x = d; else r = b - w (w = A x), x += d; d = D^-1 r / theta */
__global__ void __launch_bounds__(kThreads)
    k_amg_cheb_first(int nnode, const int* node_ptr, const long* dptr, const double* dblk, const double* b,
                     const double* w, double* r, double* d, double* x, double theta, int zero, const int* done) {
  if (*done) return;
  int i = blockIdx.x * kThreads + threadIdx.x;
  if (i >= nnode) return;
  const int a = node_ptr[i], sz = node_ptr[i + 1] - a;
  for (int j = a; j < a + sz; j++) r[j] = zero ? b[j] : b[j] - w[j];
  double t[6];
  diag_block(dblk + dptr[i], a, sz, r, t);
  for (int k = 0; k < sz; k++) {
    const double dk = t[k] / theta;
    d[a + k] = dk;
    x[a + k] = zero ? dk : x[a + k] + dk;
  }
}

/* later terms: r -= w (w = A d), d = c1 d + c2 D^-1 r, x += d */
__global__ void __launch_bounds__(kThreads)
    k_amg_cheb_step(int nnode, const int* node_ptr, const long* dptr, const double* dblk, const double* w,
                    double* r, double* d, double* x, double c1, double c2, const int* done) {
  if (*done) return;
  int i = blockIdx.x * kThreads + threadIdx.x;
  if (i >= nnode) return;
  const int a = node_ptr[i], sz = node_ptr[i + 1] - a;
  for (int j = a; j < a + sz; j++) r[j] -= w[j];
  double t[6];
  diag_block(dblk + dptr[i], a, sz, r, t);
  for (int k = 0; k < sz; k++) {
    const double dk = c1 * d[a + k] + c2 * t[k];
    d[a + k] = dk;
    x[a + k] += dk;
  }
}

__global__ void __launch_bounds__(kThreads) k_amg_sub(int n, double* r, const double* w, const int* done) {
  if (*done) return;
  int i = blockIdx.x * kThreads + threadIdx.x;
  if (i < n) r[i] -= w[i];
}

}  // namespace

/* ---- the hierarchy on the device ------------------------------------------------------------ */

/* a matrix's values on the device: double, or float with amg_float (one of the two is set) */
struct DevVal {
  double* d;
  float* f;
};

struct AmgDevLevel {
  int n, nnode, nrow_P, nc; /* unknowns, nodes; P is n x nc */
  /* the level's matrix: level 0 the model's block pattern with A0's values, else scalar CSR */
  const int *bptr, *bcol;
  DevVal bval; /* level 0 (bptr set) */
  int *Aptr, *Acol;
  DevVal Aval;
  int* node_ptr;
  long* dptr;
  double* dblk;
  int *Pptr, *Pcol, *Rptr, *Rcol;
  DevVal Pval, Rval;
  double *x, *b, *r, *d, *w;
  int warp; /* level 0: its products a warp per block row (cf_cuda_amg_set_warp_spmv) */
  /* Chebyshev: 1 / theta and (c1, c2) of the terms 1 .. degree - 1 */
  double theta, c1[kMaxDegree], c2[kMaxDegree];
};

struct cfCudaAmg {
  int nlevel, degree, nnode0;
  int f32; /* amg_float: the matrices' values as float */
  AmgDevLevel* lev;
  double* Cinv; /* coarsest level, dense inverse */
  double bytes_per_apply;
  void** allocs; /* every device allocation, released by cf_cuda_amg_free */
  int nallocs, cap;
};

namespace {

template <class T>
int dev_copy(cfCudaAmg* a, cudaStream_t s, T** dst, const T* src, size_t count) {
  *dst = NULL;
  if (a->nallocs == a->cap) {
    int cap = a->cap ? 2 * a->cap : 64;
    void** p = (void**)realloc(a->allocs, sizeof(void*) * cap);
    if (!p) return cf_error(CF_ERR_NOMEM, "AMG on the GPU: out of host memory");
    a->allocs = p, a->cap = cap;
  }
  void* ptr = NULL;
  CU(cudaMalloc(&ptr, (count ? count : 1) * sizeof(T)));
  a->allocs[a->nallocs++] = ptr;
  *dst = (T*)ptr;
  if (src && count) CU(cudaMemcpyAsync(ptr, src, count * sizeof(T), cudaMemcpyHostToDevice, s));
  else CU(cudaMemsetAsync(ptr, 0, (count ? count : 1) * sizeof(T), s));
  return CF_OK;
}

/* vs: bytes per value (8, or 4 with amg_float) */
size_t csr_bytes(const cfCsr* c, size_t vs) {
  return c->nrow > 0 ? (size_t)(c->nrow + 1) * sizeof(int) + (size_t)c->ptr[c->nrow] * (sizeof(int) + vs) : 0;
}

/* the values src[count] on the device, as double or (f32) rounded to float: a host copy in
 * float first, freed once the stream has taken it */
int dev_values(cfCudaAmg* a, cudaStream_t s, DevVal* dst, const double* src, size_t count) {
  dst->d = NULL;
  dst->f = NULL;
  if (!a->f32) return dev_copy(a, s, &dst->d, src, count);
  float* h = (float*)malloc((count ? count : 1) * sizeof(float));
  if (!h) return cf_error(CF_ERR_NOMEM, "AMG on the GPU: out of host memory for %zu float values", count);
  for (size_t i = 0; i < count; i++) h[i] = (float)src[i];
  int st = dev_copy(a, s, &dst->f, (const float*)h, count);
  cudaError_t e = st < 0 ? cudaSuccess : cudaStreamSynchronize(s); /* before h is freed */
  free(h);
  TRY(st);
  if (e != cudaSuccess) return cf_cuda_fail(e, "cudaStreamSynchronize", __FILE__, __LINE__);
  return CF_OK;
}

/* the dense inverse of the coarsest level's matrix (its CSR, both triangles) */
int dense_inverse(const cfCsr* A, double** out) {
  const int n = A->nrow;
  double* C = (double*)calloc((size_t)n * n + 1, sizeof(double));
  if (!C) return cf_error(CF_ERR_NOMEM, "AMG on the GPU: out of host memory for the coarsest level (%d unknowns)", n);
  for (int i = 0; i < n; i++)
    for (int k = A->ptr[i]; k < A->ptr[i + 1]; k++) C[(size_t)i * n + A->col[k]] = A->val[k];
  lapack_int info = LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', n, C, n);
  if (info == 0) info = LAPACKE_dpotri(LAPACK_ROW_MAJOR, 'L', n, C, n);
  if (info != 0) {
    free(C);
    return cf_error(CF_ERR_SOLVER, "AMG on the GPU: the coarsest level (%d unknowns) is not positive definite (LAPACKE %d)",
                    n, (int)info);
  }
  for (int r = 0; r < n; r++)
    for (int c = r + 1; c < n; c++) C[(size_t)r * n + c] = C[(size_t)c * n + r];
  *out = C;
  return CF_OK;
}

/* the coefficients of chebyshev() in fem_amg.c */
void cheb_coefficients(double lmax, int degree, AmgDevLevel* L) {
  const double up = 1.1 * lmax, lo = up / 30.0;
  const double theta = 0.5 * (up + lo), delta = 0.5 * (up - lo), sigma = theta / delta;
  double rho = 1.0 / sigma;
  L->theta = theta;
  for (int k = 1; k < degree; k++) {
    const double rho1 = 1.0 / (2.0 * sigma - rho);
    L->c1[k] = rho1 * rho;
    L->c2[k] = 2.0 * rho1 / delta;
    rho = rho1;
  }
}

/* y (+)= M x for a scalar CSR M of nrow rows, with M's double or float values; label: the
 * launch's name in a failure ("k_amg_csr (P)") */
int csr_launch(int nrow, const int* ptr, const int* col, const DevVal& val, cudaStream_t s, const double* x,
               double* y, int add, const int* done, const char* label) {
  if (val.f) k_amg_csr<float><<<warp_blocks(nrow), kThreads, 0, s>>>(nrow, ptr, col, val.f, x, y, add, done);
  else k_amg_csr<double><<<warp_blocks(nrow), kThreads, 0, s>>>(nrow, ptr, col, val.d, x, y, add, done);
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) return cf_cuda_launch_fail(e, label, __FILE__, __LINE__);
  return CF_OK;
}

int level_spmv(const AmgDevLevel* L, cudaStream_t s, const double* x, double* y, const int* done) {
  if (L->bptr && L->warp) {
    if (L->bval.f)
      k_amg_bsr_warp<float><<<warp_blocks(L->nnode), kThreads, 0, s>>>(L->nnode, L->bptr, L->bcol, L->bval.f, x, y,
                                                                      done);
    else
      k_amg_bsr_warp<double><<<warp_blocks(L->nnode), kThreads, 0, s>>>(L->nnode, L->bptr, L->bcol, L->bval.d, x,
                                                                       y, done);
    CU_LAUNCHED(k_amg_bsr_warp);
  } else if (L->bptr) {
    if (L->bval.f)
      k_amg_bsr<float><<<blocks(L->nnode), kThreads, 0, s>>>(L->nnode, L->bptr, L->bcol, L->bval.f, x, y, done);
    else
      k_amg_bsr<double><<<blocks(L->nnode), kThreads, 0, s>>>(L->nnode, L->bptr, L->bcol, L->bval.d, x, y, done);
    CU_LAUNCHED(k_amg_bsr);
  } else {
    TRY(csr_launch(L->n, L->Aptr, L->Acol, L->Aval, s, x, y, 0, done, "k_amg_csr"));
  }
  return CF_OK;
}

/* chebyshev() of fem_amg.c on level L: x (+)= S (b - A x); want_r: r = b - A x after */
int chebyshev(const cfCudaAmg* a, const AmgDevLevel* L, cudaStream_t s, int zero, int want_r, const int* done) {
  if (!zero) TRY(level_spmv(L, s, L->x, L->w, done));
  k_amg_cheb_first<<<blocks(L->nnode), kThreads, 0, s>>>(L->nnode, L->node_ptr, L->dptr, L->dblk, L->b, L->w, L->r,
                                                         L->d, L->x, L->theta, zero, done);
  CU_LAUNCHED(k_amg_cheb_first);
  for (int k = 1; k < a->degree; k++) {
    TRY(level_spmv(L, s, L->d, L->w, done));
    k_amg_cheb_step<<<blocks(L->nnode), kThreads, 0, s>>>(L->nnode, L->node_ptr, L->dptr, L->dblk, L->w, L->r, L->d,
                                                          L->x, L->c1[k], L->c2[k], done);
    CU_LAUNCHED(k_amg_cheb_step);
  }
  if (want_r) {
    TRY(level_spmv(L, s, L->d, L->w, done));
    k_amg_sub<<<blocks(L->n), kThreads, 0, s>>>(L->n, L->r, L->w, done);
    CU_LAUNCHED(k_amg_sub);
  }
  return CF_OK;
}

/* vcycle() of fem_amg.c: lev[l].x = V(lev[l].b) */
/* st, with " (level l)" added to the message of a failure */
int at_level(int st, int l) {
  if (st >= 0) return st;
  char msg[1024];
  snprintf(msg, sizeof msg, "%s", cf_last_error());
  return cf_error(st, "%s (level %d)", msg, l);
}

int vcycle(const cfCudaAmg* a, int l, cudaStream_t s, const int* done) {
  const AmgDevLevel* L = a->lev + l;
  if (l == a->nlevel - 1) {
    k_amg_dense<<<warp_blocks(L->n), kThreads, 0, s>>>(L->n, a->Cinv, L->b, L->x, done);
    return at_level([]() -> int { CU_LAUNCHED(k_amg_dense); return CF_OK; }(), l);
  }
  const AmgDevLevel* C = L + 1;
  TRY(at_level([&]() -> int {
    TRY(chebyshev(a, L, s, 1, 1, done)); /* x = S b, r = b - A x */
    return csr_launch(C->n, L->Rptr, L->Rcol, L->Rval, s, L->r, C->b, 0, done, "k_amg_csr (R)"); /* b_c = R r */
  }(), l));
  TRY(vcycle(a, l + 1, s, done));
  return at_level([&]() -> int {
    TRY(csr_launch(L->n, L->Pptr, L->Pcol, L->Pval, s, C->x, L->x, 1, done, "k_amg_csr (P)")); /* x += P x_c */
    return chebyshev(a, L, s, 0, 0, done); /* x += S (b - A x) */
  }(), l);
}

}  // namespace

int cf_cuda_amg_check(const cfAmg* amg) {
  if (!amg || amg->nlevel < 1) return cf_error(CF_ERR_ARG, "AMG on the GPU: no hierarchy");
  if (amg->opt.cheb_degree < 1 || amg->opt.cheb_degree > kMaxDegree)
    return cf_error(CF_ERR_UNSUPPORTED, "AMG on the GPU: Chebyshev degree %d (at most %d)", amg->opt.cheb_degree,
                    kMaxDegree);
  const int nc = amg->lev[amg->nlevel - 1].n;
  if (nc > kMaxCoarse) /* coarsening stalled above coarse_max, or max_levels reached */
    return cf_error(CF_ERR_UNSUPPORTED, "AMG on the GPU: the coarsest level (level %d) has %d unknowns; its dense "
                    "inverse takes at most %d (cfAmgOptions.coarse_max, max_levels)", amg->nlevel - 1, nc, kMaxCoarse);
  for (int l = 0; l < amg->nlevel - 1; l++) {
    const cfAmgLevel* H = amg->lev + l;
    if (!H->dblk)
      return cf_error(CF_ERR_UNSUPPORTED, "AMG on the GPU: level %d smooths with diag(A); the GPU takes the node "
                      "blocks only (cfAmgOptions.block_diag = 1)", l);
    for (int i = 0; i < H->nnode; i++)
      if (H->node_ptr[i + 1] - H->node_ptr[i] > 6)
        return cf_error(CF_ERR_UNSUPPORTED, "AMG on the GPU: node %d of level %d has %d unknowns (at most 6)", i, l,
                        H->node_ptr[i + 1] - H->node_ptr[i]);
  }
  return CF_OK;
}

size_t cf_cuda_amg_bytes(const cfAmg* amg, int f32) {
  const size_t vs = f32 ? sizeof(float) : sizeof(double); /* the matrices' values */
  size_t total = 0;
  for (int l = 0; l < amg->nlevel; l++) {
    const cfAmgLevel* L = amg->lev + l;
    total += 5 * (size_t)L->n * sizeof(double); /* x, b, r, d, w */
    if (l == amg->nlevel - 1) {
      total += (size_t)L->n * L->n * sizeof(double);
      continue;
    }
    if (L->bval) total += 9 * (size_t)L->nb * vs;
    else total += csr_bytes(&L->A, vs);
    total += (size_t)(L->nnode + 1) * (sizeof(int) + sizeof(long));
    if (L->dptr) total += (size_t)L->dptr[L->nnode] * sizeof(double); /* none: create refuses it */
    total += csr_bytes(&L->P, vs) + csr_bytes(&L->R, vs);
  }
  return total + 256 * 16 * (size_t)amg->nlevel; /* cudaMalloc's alignment, ~16 arrays a level */
}

int cf_cuda_amg_create(const cfAmg* amg, int f32, const int* row_ptr_dev, const int* col_dev, cudaStream_t s,
                       cfCudaAmg** out) {
  *out = NULL;
  TRY(cf_cuda_amg_check(amg));
  cfCudaAmg* a = (cfCudaAmg*)calloc(1, sizeof *a);
  if (!a) return cf_error(CF_ERR_NOMEM, "AMG on the GPU: out of host memory");
  a->lev = (AmgDevLevel*)calloc(amg->nlevel, sizeof(AmgDevLevel));
  if (!a->lev) {
    free(a);
    return cf_error(CF_ERR_NOMEM, "AMG on the GPU: out of host memory");
  }
  a->nlevel = amg->nlevel;
  a->f32 = f32 != 0;
  a->degree = amg->opt.cheb_degree;
  a->nnode0 = amg->lev[0].nnode;
  double* Cinv = NULL;
  int up_level = -1; /* the level being uploaded, for the message of a failure */
  int st = [&]() -> int {
    for (int l = 0; l < amg->nlevel; l++) {
      up_level = l;
      const cfAmgLevel* H = amg->lev + l;
      AmgDevLevel* L = a->lev + l;
      L->n = H->n;
      L->nnode = H->nnode;
      TRY(dev_copy(a, s, &L->x, (const double*)NULL, H->n));
      TRY(dev_copy(a, s, &L->b, (const double*)NULL, H->n));
      TRY(dev_copy(a, s, &L->r, (const double*)NULL, H->n));
      TRY(dev_copy(a, s, &L->d, (const double*)NULL, H->n));
      TRY(dev_copy(a, s, &L->w, (const double*)NULL, H->n));
      if (l == amg->nlevel - 1) { /* the coarsest: dense inverse (its CSR is kept by the setup) */
        if (H->A.nrow != H->n || !H->A.ptr)
          return cf_error(CF_ERR_ARG, "AMG on the GPU: the coarsest level has no matrix");
        TRY(dense_inverse(&H->A, &Cinv));
        TRY(dev_copy(a, s, &a->Cinv, Cinv, (size_t)H->n * H->n));
        continue;
      }
      if (H->bval) {
        L->bptr = row_ptr_dev;
        L->bcol = col_dev;
        TRY(dev_values(a, s, &L->bval, H->bval, 9 * (size_t)H->nb));
      } else {
        TRY(dev_copy(a, s, &L->Aptr, H->A.ptr, (size_t)H->n + 1));
        TRY(dev_copy(a, s, &L->Acol, H->A.col, (size_t)H->A.ptr[H->n]));
        TRY(dev_values(a, s, &L->Aval, H->A.val, (size_t)H->A.ptr[H->n]));
      }
      TRY(dev_copy(a, s, &L->node_ptr, H->node_ptr, (size_t)H->nnode + 1));
      TRY(dev_copy(a, s, &L->dptr, H->dptr, (size_t)H->nnode + 1));
      TRY(dev_copy(a, s, &L->dblk, H->dblk, (size_t)H->dptr[H->nnode]));
      TRY(dev_copy(a, s, &L->Pptr, H->P.ptr, (size_t)H->P.nrow + 1));
      TRY(dev_copy(a, s, &L->Pcol, H->P.col, (size_t)H->P.ptr[H->P.nrow]));
      TRY(dev_values(a, s, &L->Pval, H->P.val, (size_t)H->P.ptr[H->P.nrow]));
      TRY(dev_copy(a, s, &L->Rptr, H->R.ptr, (size_t)H->R.nrow + 1));
      TRY(dev_copy(a, s, &L->Rcol, H->R.col, (size_t)H->R.ptr[H->R.nrow]));
      TRY(dev_values(a, s, &L->Rval, H->R.val, (size_t)H->R.ptr[H->R.nrow]));
      if (H->P.nrow != H->n || H->R.ncol != H->n || H->R.nrow != amg->lev[l + 1].n)
        return cf_error(CF_ERR_ARG, "AMG on the GPU: level %d's P (%d x %d) or R (%d x %d) does not fit %d -> %d unknowns",
                        l, H->P.nrow, H->P.ncol, H->R.nrow, H->R.ncol, H->n, amg->lev[l + 1].n);
      cheb_coefficients(H->lmax, a->degree, L);
    }
    up_level = -1;
    CU(cudaStreamSynchronize(s)); /* the host copies (Cinv) are freed below */
    return CF_OK;
  }();
  if (up_level >= 0) st = at_level(st, up_level);
  free(Cinv);
  if (st < 0) {
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", cf_last_error());
    cf_cuda_amg_free(a);
    return cf_error(st, "%s", msg);
  }
  double opc = 0;
  const double nn = a->nnode0;
  /* the V-cycle's bytes as the CPU counts them, and the two rotations (Q, r in, t out; y in, z out) */
  a->bytes_per_apply = cf_amg_bytes_per_cycle(amg, &opc) + 2 * (9 * nn + 6 * nn) * sizeof(double);
  if (a->f32) a->bytes_per_apply -= 0.5 * cf_amg_value_bytes_per_cycle(amg); /* 4 of every 8 bytes */
  *out = a;
  return CF_OK;
}

void cf_cuda_amg_free(cfCudaAmg* a) {
  if (!a) return;
  for (int i = 0; i < a->nallocs; i++) cudaFree(a->allocs[i]);
  free(a->allocs);
  free(a->lev);
  free(a);
}

double cf_cuda_amg_bytes_per_apply(const cfCudaAmg* a) { return a ? a->bytes_per_apply : 0; }

void cf_cuda_amg_set_warp_spmv(cfCudaAmg* a, int on) {
  if (a && a->nlevel > 0) a->lev[0].warp = on ? 1 : 0;
}

int cf_cuda_amg_apply(cfCudaAmg* a, cudaStream_t s, const double* node_R, const unsigned char* fixed,
                      int zero_fixed, const double* r, double* z, const int* done) {
  AmgDevLevel* L0 = a->lev;
  k_amg_rotate_in<<<blocks(a->nnode0), kThreads, 0, s>>>(a->nnode0, node_R, fixed, zero_fixed, r, L0->b, done);
  CU_LAUNCHED(k_amg_rotate_in);
  TRY(vcycle(a, 0, s, done));
  k_amg_rotate_out<<<blocks(a->nnode0), kThreads, 0, s>>>(a->nnode0, node_R, L0->x, z, done);
  CU_LAUNCHED(k_amg_rotate_out);
  return CF_OK;
}
