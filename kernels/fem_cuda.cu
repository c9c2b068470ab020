/* The CUDA backend of the co-rotational step (include/cofem/cuda.h).
 *
 * Every kernel is one thread per element, block or node and calls the CF_HD body of
 * host/fem/fem_element.h that the CPU stage calls in its loop; what is left here is launch
 * configuration, device memory, the PCG control flow and the reductions.
 *
 *   polar     k_polar        cf_elem_polar        per element (+ inverted count)
 *   elastic   k_rotate       cf_elem_rotate       per element
 *             k_node_gather  cf_node_gather       per node
 *   assemble  k_block_gather cf_block_gather      per block (a gather: no atomics)
 *             k_rhs          cf_node_rhs_euler    per node (+ partial norms of b_scale)
 *             k_jacobi       cf_block_jacobi      per node
 *   warm      k_warm_*       cf_node_warm_sums, cf_warm_coefficients: the PCG's starting guess
 *                            c0 v0 + c1 v_-1 (cf_pcg_warm_start of host/fem/fem_pcg.c)
 *   pcg       k_spmv_dot     cf_bsr_row + projection + partial p.q   per block row
 *             k_finish_*     one block sums the partials in a fixed order (deterministic)
 *             k_update_xrz   x += a p, r -= a q, z = P r, partials of r.r and r.z
 *             k_update_p     p = z + beta p
 *   update    k_update_x     x += h v (the step: k_update_x_ok, none after a failed solve)
 *
 * The PCG scalars (alpha, beta, norms, iteration count, a `done` flag) live on the device; the
 * kernels of an iteration return at once when `done` is set, so the host launches iterations
 * in batches of check_every and reads the flag back once per batch.
 *
 * The host side of a step is the CPU's own where the two must agree: the A coefficients
 * (cf_system_coefficients), the PCG's stopping rule (cf_pcg_target, on the device) and result
 * (cf_pcg_result: counters, warnings, the non-finite right side), the end-of-step bookkeeping
 * (cf_step_finish), the model check (cf_cuda_check_model) and the field table (cf_cuda_field). */
#include <cuda_runtime.h>
#include <cusparse.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cofem/cuda.h"
#include "cuda_bsr_warp.h"
#include "cuda_util.h"
#include "fem/fem_backend.h"
#include "fem_cuda_amg.h"
#include "fem/fem_element.h"
extern "C" {
#include "fem/fem_precond.h" /* cf_system_coefficients */
}

namespace {

/* Block size of every kernel; the reductions assume a power of two. */
constexpr int kThreads = 256;

/* ---- error reporting (CU, CU_LAUNCHED, TRY: kernels/cuda_util.h) ------------------------------ */

int cusparse_fail(cusparseStatus_t s, const char* call, const char* file, int line) {
  int len = 0;
  while (call[len] && call[len] != '(') len++;
  return cf_error(CF_ERR_CUDA, "%.*s: %s (cuSPARSE status %d) at %s:%d", len, call,
                  cusparseGetErrorString(s), (int)s, cf_cuda_base_name(file), line);
}

#define CUSP(call)                                                                                \
  do {                                                                                            \
    cusparseStatus_t cs_e_ = (call);                                                              \
    if (cs_e_ != CUSPARSE_STATUS_SUCCESS) return cusparse_fail(cs_e_, #call, __FILE__, __LINE__); \
  } while (0)

int blocks_for(long n) {
  return (int)((n + kThreads - 1) / kThreads);
}

/* ---- device-resident scalars of a step ------------------------------------------------------ */
struct DevState {
  /* PCG, set by k_pcg_reset */
  double tol;
  int max_iter;
  int use_fixed; /* supports active and some DOF fixed */
  int warm;
  /* warm start: coefficients of v0 and v_prev in the starting guess */
  double wc0, wc1;
  /* assemble: |M v0| + h (|f_ext + M g| + |f_el|) over the free DOFs, the force scale of the
   * PCG tolerance (cfData.b_scale); not touched by k_pcg_reset */
  double b_scale;
  /* PCG, evolving */
  double bnorm, scale, rnorm, target, rz, alpha, beta;
  int it;     /* iterations completed */
  int done;   /* 1: converged, capped or broken down; the iteration kernels return at once */
  int status; /* CF_OK, CF_WARN_PCG_NOT_CONVERGED, CF_WARN_INDEFINITE, CF_ERR_ARG (b not finite) */
  /* polar */
  int ninverted;
  /* generalized-alpha: the sums of a Newton residual (cfNewtonOps.residual) or |du|^2 */
  double ga_out[6];
};

/* divergence monitor: the figures of a state (the block "divergence monitor" below) */
struct MonDev {
  double sum[5]; /* sum m x, sum m y, sum m z, v^T M v, work increment */
  double dev2;   /* largest |(x_i - c) - (X_i - C)|^2 */
  double strain;
  int dev_node;
  int bad; /* first non-finite DOF (INT_MAX: none) */
};
enum { MON_NSUM = 5, MON_WORK_NONE = 0, MON_WORK_EULER = 1, MON_WORK_GA = 2 };

/* ---- reductions (fixed order: deterministic for a fixed launch configuration) -------------- */

/* Sum of v over the block into sh[0]; every thread must call it; the result is valid in all
 * threads on return. */
__device__ double block_sum(double v, double* sh) {
  sh[threadIdx.x] = v;
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s >>= 1) {
    if ((int)threadIdx.x < s) sh[threadIdx.x] += sh[threadIdx.x + s];
    __syncthreads();
  }
  return sh[0];
}

/* Sum of part[0..n) by one block: thread t adds t, t + kThreads, ... in order, then the tree. */
__device__ double ordered_sum(const double* part, int n, double* sh) {
  double s = 0;
  for (int i = threadIdx.x; i < n; i += kThreads) s += part[i];
  return block_sum(s, sh);
}

/* ---- stage kernels: one thread per entity, bodies from fem_element.h ------------------------ */

__global__ void __launch_bounds__(kThreads) k_probe(int* out) {
  if (threadIdx.x == 0 && blockIdx.x == 0) *out = 42;
}

__global__ void __launch_bounds__(kThreads) k_polar(int ntet, const int* tet, const double* Dm_inv,
                                                    const double* x, double* R, DevState* st) {
  int e = blockIdx.x * kThreads + threadIdx.x;
  int inv = 0;
  if (e < ntet) inv = cf_elem_polar(e, tet, Dm_inv, x, R);
  /* integer count: order-independent, so one atomic per block stays deterministic */
  int count = __syncthreads_count(inv);
  if (threadIdx.x == 0 && count > 0) atomicAdd(&st->ninverted, count);
}

__global__ void __launch_bounds__(kThreads)
    k_rotate(int ntet, const int* tet, const double* Dm_inv, const double* vol, double lam,
             double mu, const double* R, const double* x, double* KR, double* fe) {
  int e = blockIdx.x * kThreads + threadIdx.x;
  if (e < ntet) cf_elem_rotate(e, tet, Dm_inv, vol, lam, mu, R, x, KR, fe);
}

/* Quadratic (10-node) tetrahedra, as host/fem/fem_polar.c and fem_assemble.c: the rotation of the
 * centroid's deformation gradient (cf_tet10_elem_polar; node rotations, monitor, stress) and, with
 * "rotations": "quadrature" (Gq non-NULL), one per quadrature point (cf_tet10_elem_polar_qp) */
__global__ void __launch_bounds__(kThreads) k_polar10(int ntet, const int* tet, const double* Gc, const double* Gq,
                                                      const double* x, double* R, double* Rq, DevState* st) {
  int e = blockIdx.x * kThreads + threadIdx.x;
  int inv = 0;
  if (e < ntet) inv = cf_tet10_elem_polar(e, tet, Gc, x, R) | (Gq ? cf_tet10_elem_polar_qp(e, tet, Gq, x, Rq) : 0);
  int count = __syncthreads_count(inv);
  if (threadIdx.x == 0 && count > 0) atomicAdd(&st->ninverted, count);
}

/* the 30 x 30 K_R and the 30 forces: per quadrature point (Gq, Wq, Rq) or with the element's
 * rotation and its stiffness at rest (Ke, X) */
__global__ void __launch_bounds__(kThreads)
    k_rotate10(int ntet, const int* tet, const double* Gq, const double* Wq, const double* Rq, const double* Ke,
               const double* R, const double* X, double lam, double mu, const double* x, double* KR, double* fe) {
  int e = blockIdx.x * kThreads + threadIdx.x;
  if (e >= ntet) return;
  if (Gq) cf_tet10_rotate_qp(e, tet, Gq, Wq, lam, mu, x, Rq, KR, fe);
  else cf_tet10_rotate(e, tet, Ke, R, X, x, KR, fe);
}

__global__ void __launch_bounds__(kThreads)
    k_node_gather(int nnode, const int* src_ptr, const int* src, const double* fe, double* f_el) {
  int n = blockIdx.x * kThreads + threadIdx.x;
  if (n < nnode) cf_node_gather(n, src_ptr, src, fe, f_el);
}

__global__ void __launch_bounds__(kThreads)
    k_block_gather(int nnzb, int npe, const int* src_ptr, const int* src, const double* KR,
                   const double* Mblk, double cm, double ck, double* A) {
  int k = blockIdx.x * kThreads + threadIdx.x;
  if (k < nnzb) cf_block_gather_n(k, npe, src_ptr, src, KR, Mblk, cm, ck, A);
}

/* b = M v0 + h (f_ext + m g - f_el), in the order of apply_mass and cf_stage_assemble_system;
 * partials of |M v0|^2, |f_ext + m g|^2, |f_el|^2 over the free DOFs (for b_scale) */
__global__ void __launch_bounds__(kThreads)
    k_rhs(int nnode, const int* row_ptr, const int* col, const double* Mblk,
          const double* node_mass, const double* v, const double* f_ext, const double* f_el,
          const unsigned char* fixed, int use_fixed, double h, double g0, double g1, double g2,
          double* b, double* part_mv, double* part_fx, double* part_fe) {
  __shared__ double sh0[kThreads], sh1[kThreads], sh2[kThreads];
  int n = blockIdx.x * kThreads + threadIdx.x;
  double sq[3] = {0, 0, 0};
  if (n < nnode)
    cf_node_rhs_euler(n, row_ptr, col, Mblk, node_mass, v, f_ext, f_el, fixed, use_fixed, h, g0, g1, g2, b, sq);
  double mv2 = sq[0], fx2 = sq[1], fe2 = sq[2];
  double t0 = block_sum(mv2, sh0);
  double t1 = block_sum(fx2, sh1);
  double t2 = block_sum(fe2, sh2);
  if (threadIdx.x == 0) {
    part_mv[blockIdx.x] = t0;
    part_fx[blockIdx.x] = t1;
    part_fe[blockIdx.x] = t2;
  }
}

__global__ void __launch_bounds__(kThreads)
    k_finish_bscale(DevState* st, const double* part_mv, const double* part_fx,
                    const double* part_fe, int npart, double h) {
  __shared__ double sh0[kThreads], sh1[kThreads], sh2[kThreads];
  double mv2 = ordered_sum(part_mv, npart, sh0);
  double fx2 = ordered_sum(part_fx, npart, sh1);
  double fe2 = ordered_sum(part_fe, npart, sh2);
  if (threadIdx.x == 0) st->b_scale = sqrt(mv2) + h * (sqrt(fx2) + sqrt(fe2));
}

__global__ void __launch_bounds__(kThreads)
    k_jacobi(int nnode, const int* diag, const double* A, const unsigned char* fixed, int use_fixed,
             double* Pinv) {
  int n = blockIdx.x * kThreads + threadIdx.x;
  if (n < nnode) cf_block_jacobi(n, diag, A, fixed, use_fixed, Pinv);
}

/* A_nn += eps I (the mechanism's regularisation of a free part's matrix, cf_cuda_system) */
__global__ void __launch_bounds__(kThreads) k_add_diag(int nnode, const int* diag, double eps, double* A) {
  int n = blockIdx.x * kThreads + threadIdx.x;
  if (n >= nnode) return;
  double* B = A + 9 * (long)diag[n];
  B[0] += eps, B[4] += eps, B[8] += eps;
}

__global__ void __launch_bounds__(kThreads)
    k_update_x(int ndof, double h, const double* v, double* x) {
  int i = blockIdx.x * kThreads + threadIdx.x;
  if (i < ndof) x[i] += h * v[i];
}

/* the step graph's update (cfCudaOptions.step_graph): as k_update_x, skipped when the solve failed
 * (a right side not finite: cf_cuda_step does not update then, and puts v back) */
__global__ void __launch_bounds__(kThreads)
    k_update_x_ok(int ndof, double h, const double* v, double* x, const DevState* st) {
  int i = blockIdx.x * kThreads + threadIdx.x;
  if (i < ndof && st->status >= 0) x[i] += h * v[i];
}

/* the step graph's PCG loop (a conditional WHILE node): one more iteration while the solve is not
 * done; the iteration cap is the kernels' own (they set done at max_iter), the bound here only
 * stops a loop whose done flag a bug never set */
__global__ void k_pcg_loop_set(const DevState* st, cudaGraphConditionalHandle loop) {
  cudaGraphSetConditional(loop, !st->done && st->it <= st->max_iter);
}

/* ---- PCG kernels ---------------------------------------------------------------------------- */

__device__ void project3(int n, const unsigned char* fixed, int use_fixed, double* y) {
  if (!use_fixed) return;
  for (int i = 0; i < 3; i++)
    if (fixed[3 * n + i]) y[3 * n + i] = 0;
}

__global__ void __launch_bounds__(kThreads) k_spmv(int nnode, const int* row_ptr, const int* col,
                                                   const double* A, const double* x, double* y) {
  int i = blockIdx.x * kThreads + threadIdx.x;
  if (i < nnode) cf_bsr_row(i, row_ptr, col, A, x, y);
}

/* warm start: v0 and v1 (a copy of the velocities of the step before) zeroed on fixed DOFs */
__global__ void __launch_bounds__(kThreads)
    k_warm_project(int nnode, const unsigned char* fixed, int use_fixed, double* v, double* v1) {
  int n = blockIdx.x * kThreads + threadIdx.x;
  if (n >= nnode) return;
  project3(n, fixed, use_fixed, v);
  project3(n, fixed, use_fixed, v1);
}

/* partials of the CF_WARM_NSUM sums (Av0 in q, Av1 in z): sum k of block j at k * npart + j */
__global__ void __launch_bounds__(kThreads)
    k_warm_sums(int nnode, const unsigned char* fixed, int use_fixed, const double* v,
                const double* v1, const double* Av, const double* Av1, const double* b,
                double* part, int npart) {
  __shared__ double sh[kThreads];
  int n = blockIdx.x * kThreads + threadIdx.x;
  double s[CF_WARM_NSUM];
  for (int k = 0; k < CF_WARM_NSUM; k++) s[k] = 0;
  if (n < nnode) cf_node_warm_sums(n, v, v1, Av, Av1, b, fixed, use_fixed, s);
  for (int k = 0; k < CF_WARM_NSUM; k++) {
    double t = block_sum(s[k], sh);
    if (threadIdx.x == 0) part[k * npart + blockIdx.x] = t;
    __syncthreads(); /* sh is reused by the next sum */
  }
}

__global__ void __launch_bounds__(kThreads)
    k_warm_finish(DevState* st, const double* part, int npart, double tol) {
  __shared__ double sh[kThreads];
  double s[CF_WARM_NSUM];
  for (int k = 0; k < CF_WARM_NSUM; k++) {
    s[k] = ordered_sum(part + k * npart, npart, sh);
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    double c[2];
    cf_warm_coefficients(s, tol, st->b_scale, c);
    st->wc0 = c[0];
    st->wc1 = c[1];
  }
}

/* v = c0 v0 + c1 v1 (the starting guess); v_prev, which holds the unprojected v0 for the next
 * step (as cf_step keeps it), is not touched here */
__global__ void __launch_bounds__(kThreads)
    k_warm_combine(int ndof, double* v, const double* v1, const DevState* st) {
  int i = blockIdx.x * kThreads + threadIdx.x;
  if (i >= ndof) return;
  v[i] = st->wc0 * v[i] + st->wc1 * v1[i];
}

__global__ void k_pcg_reset(DevState* st, double tol, int max_iter, int use_fixed, int warm) {
  st->tol = tol;
  st->max_iter = max_iter;
  st->use_fixed = use_fixed;
  st->warm = warm;
  st->bnorm = st->scale = st->rnorm = st->target = st->rz = st->alpha = st->beta = 0;
  st->it = 0;
  st->done = 0;
  st->status = CF_OK;
}

/* x = warm ? x : 0 projected; r = b projected; partial of r.r */
__global__ void __launch_bounds__(kThreads)
    k_pcg_init_r(int nnode, const unsigned char* fixed, const double* b, double* x, double* r,
                 const DevState* st, double* part) {
  __shared__ double sh[kThreads];
  int n = blockIdx.x * kThreads + threadIdx.x;
  double s = 0;
  if (n < nnode) {
    for (int i = 0; i < 3; i++) {
      if (!st->warm) x[3 * n + i] = 0;
      r[3 * n + i] = b[3 * n + i];
    }
    project3(n, fixed, st->use_fixed, x);
    project3(n, fixed, st->use_fixed, r);
    for (int i = 0; i < 3; i++) s += r[3 * n + i] * r[3 * n + i];
  }
  double t = block_sum(s, sh);
  if (threadIdx.x == 0) part[blockIdx.x] = t;
}

__global__ void __launch_bounds__(kThreads)
    k_pcg_finish_b(DevState* st, const double* part, int npart) {
  __shared__ double sh[kThreads];
  double bb = ordered_sum(part, npart, sh);
  if (threadIdx.x == 0) {
    st->bnorm = sqrt(bb);
    /* a NaN or Inf in b or b_scale: fail (CF_ERR_ARG, as the CPU), never "converge" on NaN */
    if (!cf_pcg_target(st->bnorm, st->b_scale, st->tol, &st->scale, &st->target)) {
      st->status = CF_ERR_ARG;
      st->done = 1;
    }
  }
}

/* q = A p with fixed rows projected (body cf_bsr_row); partial of p.q */
__global__ void __launch_bounds__(kThreads)
    k_spmv_dot(int nnode, const int* row_ptr, const int* col, const double* A,
               const unsigned char* fixed, const double* p, double* q, const DevState* st,
               double* part) {
  __shared__ double sh[kThreads];
  if (st->done) return; /* uniform over the grid */
  int n = blockIdx.x * kThreads + threadIdx.x;
  double s = 0;
  if (n < nnode) {
    cf_bsr_row(n, row_ptr, col, A, p, q);
    project3(n, fixed, st->use_fixed, q);
    for (int i = 0; i < 3; i++) s += p[3 * n + i] * q[3 * n + i];
  }
  double t = block_sum(s, sh);
  if (threadIdx.x == 0) part[blockIdx.x] = t;
}

/* k_spmv_dot with a warp per row (CF_CUDA_SPMV_WARP: cf_warp_bsr_row, cuda_bsr_warp.h): the grid
 * of g->npart blocks strides over the rows, kThreads / 32 at a time per block, so the partials keep
 * their count and order */
__global__ void __launch_bounds__(kThreads)
    k_spmv_dot_warp(int nnode, const int* row_ptr, const int* col, const double* A, const unsigned char* fixed,
                    const double* p, double* q, const DevState* st, double* part) {
  __shared__ double sh[kThreads];
  if (st->done) return; /* uniform over the grid */
  const int lane = threadIdx.x & 31, warps = kThreads / 32;
  double s = 0;
  for (int n = blockIdx.x * warps + (threadIdx.x >> 5); n < nnode; n += gridDim.x * warps) {
    double y0, y1, y2;
    cf_warp_bsr_row(n, row_ptr, col, A, p, lane, &y0, &y1, &y2);
    if (lane == 0) {
      q[3 * n] = y0, q[3 * n + 1] = y1, q[3 * n + 2] = y2;
      project3(n, fixed, st->use_fixed, q);
      for (int i = 0; i < 3; i++) s += p[3 * n + i] * q[3 * n + i];
    }
  }
  double t = block_sum(s, sh);
  if (threadIdx.x == 0) part[blockIdx.x] = t;
}

/* y = A x, a warp per row, no projection (the warm start's products, cf_cuda_apply_A) */
__global__ void __launch_bounds__(kThreads)
    k_spmv_warp(int nnode, const int* row_ptr, const int* col, const double* A, const double* x, double* y) {
  const int lane = threadIdx.x & 31, warps = kThreads / 32;
  for (int n = blockIdx.x * warps + (threadIdx.x >> 5); n < nnode; n += gridDim.x * warps) {
    double y0, y1, y2;
    cf_warp_bsr_row(n, row_ptr, col, A, x, lane, &y0, &y1, &y2);
    if (lane == 0) y[3 * n] = y0, y[3 * n + 1] = y1, y[3 * n + 2] = y2;
  }
}

/* the same projection and partial after a library SpMV */
__global__ void __launch_bounds__(kThreads)
    k_project_dot(int nnode, const unsigned char* fixed, const double* p, double* q,
                  const DevState* st, double* part) {
  __shared__ double sh[kThreads];
  if (st->done) return;
  int n = blockIdx.x * kThreads + threadIdx.x;
  double s = 0;
  if (n < nnode) {
    project3(n, fixed, st->use_fixed, q);
    for (int i = 0; i < 3; i++) s += p[3 * n + i] * q[3 * n + i];
  }
  double t = block_sum(s, sh);
  if (threadIdx.x == 0) part[blockIdx.x] = t;
}

/* r -= q, projected; z = P r; p = z; partials of r.r and r.z (after q = A x) */
__global__ void __launch_bounds__(kThreads)
    k_pcg_init_z(int nnode, const unsigned char* fixed, const double* Pinv, const double* q,
                 double* r, double* z, double* p, const DevState* st, double* part_rr,
                 double* part_rz) {
  __shared__ double sh0[kThreads], sh1[kThreads];
  int n = blockIdx.x * kThreads + threadIdx.x;
  double srr = 0, srz = 0;
  if (n < nnode) {
    double rn[3];
    for (int i = 0; i < 3; i++) r[3 * n + i] -= q[3 * n + i];
    project3(n, fixed, st->use_fixed, r);
    for (int i = 0; i < 3; i++) rn[i] = r[3 * n + i];
    const double* P = Pinv + 9 * n;
    for (int i = 0; i < 3; i++) {
      double zi = P[3 * i] * rn[0] + P[3 * i + 1] * rn[1] + P[3 * i + 2] * rn[2];
      z[3 * n + i] = zi;
      p[3 * n + i] = zi;
      srr += rn[i] * rn[i];
      srz += rn[i] * zi;
    }
  }
  double t0 = block_sum(srr, sh0);
  double t1 = block_sum(srz, sh1);
  if (threadIdx.x == 0) {
    part_rr[blockIdx.x] = t0;
    part_rz[blockIdx.x] = t1;
  }
}

/* rnorm; stop if already converged (as the CPU: `if (rnorm > target)` guards the loop) */
__global__ void __launch_bounds__(kThreads)
    k_pcg_finish_init(DevState* st, const double* part_rr, const double* part_rz, int npart) {
  __shared__ double sh0[kThreads], sh1[kThreads];
  if (st->done) return; /* the right side was not finite (k_pcg_finish_b) */
  double rr = ordered_sum(part_rr, npart, sh0);
  double rz = ordered_sum(part_rz, npart, sh1);
  if (threadIdx.x == 0) {
    st->rnorm = sqrt(rr);
    if (!(st->rnorm > st->target))
      st->done = 1;
    else
      st->rz = rz;
  }
}

/* pq = p.q; breakdown check; alpha = rz / pq */
__global__ void __launch_bounds__(kThreads)
    k_pcg_finish_pq(DevState* st, const double* part, int npart) {
  __shared__ double sh[kThreads];
  if (st->done) return;
  double pq = ordered_sum(part, npart, sh);
  if (threadIdx.x == 0) {
    if (!(pq > 0) || !isfinite(pq)) {
      st->status = CF_WARN_INDEFINITE; /* st->it stays the number of completed iterations */
      st->done = 1;
    } else {
      st->alpha = st->rz / pq;
    }
  }
}

/* x += alpha p; r -= alpha q; z = P r; partials of r.r and r.z */
__global__ void __launch_bounds__(kThreads)
    k_update_xrz(int nnode, const double* Pinv, const double* p, const double* q, double* x,
                 double* r, double* z, const DevState* st, double* part_rr, double* part_rz) {
  __shared__ double sh0[kThreads], sh1[kThreads];
  if (st->done) return;
  const double alpha = st->alpha;
  int n = blockIdx.x * kThreads + threadIdx.x;
  double srr = 0, srz = 0;
  if (n < nnode) {
    double rn[3];
    for (int i = 0; i < 3; i++) {
      x[3 * n + i] += alpha * p[3 * n + i];
      rn[i] = r[3 * n + i] - alpha * q[3 * n + i];
      r[3 * n + i] = rn[i];
    }
    const double* P = Pinv + 9 * n;
    for (int i = 0; i < 3; i++) {
      double zi = P[3 * i] * rn[0] + P[3 * i + 1] * rn[1] + P[3 * i + 2] * rn[2];
      z[3 * n + i] = zi;
      srr += rn[i] * rn[i];
      srz += rn[i] * zi;
    }
  }
  double t0 = block_sum(srr, sh0);
  double t1 = block_sum(srz, sh1);
  if (threadIdx.x == 0) {
    part_rr[blockIdx.x] = t0;
    part_rz[blockIdx.x] = t1;
  }
}

/* rnorm, convergence, iteration cap; beta = rz_new / rz */
__global__ void __launch_bounds__(kThreads)
    k_pcg_finish_rr(DevState* st, const double* part_rr, const double* part_rz, int npart) {
  __shared__ double sh0[kThreads], sh1[kThreads];
  if (st->done) return;
  double rr = ordered_sum(part_rr, npart, sh0);
  double rz = ordered_sum(part_rz, npart, sh1);
  if (threadIdx.x == 0) {
    st->it += 1;
    st->rnorm = sqrt(rr);
    if (st->rnorm <= st->target) {
      st->done = 1;
    } else if (st->it >= st->max_iter) {
      st->status = CF_WARN_PCG_NOT_CONVERGED;
      st->done = 1;
    } else {
      st->beta = rz / st->rz;
      st->rz = rz;
    }
  }
}

__global__ void __launch_bounds__(kThreads)
    k_update_p(int ndof, const double* z, double* p, const DevState* st) {
  if (st->done) return;
  const double beta = st->beta;
  int i = blockIdx.x * kThreads + threadIdx.x;
  if (i < ndof) p[i] = z[i] + beta * p[i];
}

/* ---- AMG (kernels/fem_cuda_amg.cu): the node rotations, and the PCG kernels without the block-
 * Jacobi product: z = P r comes from the V-cycle between k_update_xr and k_pcg_finish_rr ---------- */

/* node rotation n follows the polar of the sum of the element rotations around it by one Newton
 * correction, or to convergence from where it was (node_rotation of host/fem/fem_precond.c; the
 * linear coupling turns its columns with converged ones: a correction short would show as a force) */
__global__ void __launch_bounds__(kThreads) k_node_rotation(int nnode, int npe, const int* src_ptr, const int* src,
                                                            const double* R, double* node_R, int converged) {
  int n = blockIdx.x * kThreads + threadIdx.x;
  if (n >= nnode) return;
  double S[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
  for (int k = src_ptr[n]; k < src_ptr[n + 1]; k++) {
    const double* Re = R + 9 * (size_t)(src[k] / npe);
    for (int i = 0; i < 9; i++) S[i] += Re[i];
  }
  double Rn[9];
  if (converged)
    (void)cf_polar_rotation_warm(S, node_R + 9 * (size_t)n, Rn);
  else
    cf_polar_rotation_step(S, node_R + 9 * (size_t)n, Rn);
  for (int i = 0; i < 9; i++) node_R[9 * (size_t)n + i] = Rn[i];
}

/* r -= q, projected (after q = A x); partial of r.r */
__global__ void __launch_bounds__(kThreads)
    k_pcg_init_r_amg(int nnode, const unsigned char* fixed, const double* q, double* r, const DevState* st,
                     double* part_rr) {
  __shared__ double sh[kThreads];
  int n = blockIdx.x * kThreads + threadIdx.x;
  double srr = 0;
  if (n < nnode) {
    for (int i = 0; i < 3; i++) r[3 * n + i] -= q[3 * n + i];
    project3(n, fixed, st->use_fixed, r);
    for (int i = 0; i < 3; i++) srr += r[3 * n + i] * r[3 * n + i];
  }
  double t = block_sum(srr, sh);
  if (threadIdx.x == 0) part_rr[blockIdx.x] = t;
}

/* z projected (Q y is not zero on the fixed DOFs; the CPU projects p = z instead: the same p, and
 * r.z is the same since r is projected); p = z, the first direction; partial of r.z */
__global__ void __launch_bounds__(kThreads)
    k_pcg_first_p_amg(int nnode, const unsigned char* fixed, const double* r, double* z, double* p,
                      const DevState* st, double* part_rz) {
  __shared__ double sh[kThreads];
  int n = blockIdx.x * kThreads + threadIdx.x;
  double srz = 0;
  if (n < nnode) {
    project3(n, fixed, st->use_fixed, z);
    for (int i = 0; i < 3; i++) {
      p[3 * n + i] = z[3 * n + i];
      srz += r[3 * n + i] * z[3 * n + i];
    }
  }
  double t = block_sum(srz, sh);
  if (threadIdx.x == 0) part_rz[blockIdx.x] = t;
}

/* x += alpha p; r -= alpha q; partial of r.r */
__global__ void __launch_bounds__(kThreads)
    k_update_xr_amg(int nnode, const double* p, const double* q, double* x, double* r, const DevState* st,
                    double* part_rr) {
  __shared__ double sh[kThreads];
  if (st->done) return;
  const double alpha = st->alpha;
  int n = blockIdx.x * kThreads + threadIdx.x;
  double srr = 0;
  if (n < nnode)
    for (int i = 0; i < 3; i++) {
      x[3 * n + i] += alpha * p[3 * n + i];
      const double ri = r[3 * n + i] - alpha * q[3 * n + i];
      r[3 * n + i] = ri;
      srr += ri * ri;
    }
  double t = block_sum(srr, sh);
  if (threadIdx.x == 0) part_rr[blockIdx.x] = t;
}

/* ---- generalized-alpha (cfNewtonOps of fem/fem_backend.h; the CPU's in host/fem/fem_newton.c) */

__device__ __forceinline__ int ga_held(int i, const unsigned char* fixed, int use_fixed) {
  return use_fixed && fixed[i];
}

/* held DOFs: v = a = 0 */
__global__ void __launch_bounds__(kThreads)
    k_ga_zero_held(int ndof, const unsigned char* fixed, int use_fixed, double* v, double* a) {
  int i = blockIdx.x * kThreads + threadIdx.x;
  if (i < ndof && ga_held(i, fixed, use_fixed)) v[i] = a[i] = 0;
}

/* y = c0 y0 + c1 (y1 - y0)  (the loads of a substep: f_prev + th (f - f_prev)) */
__global__ void __launch_bounds__(kThreads)
    k_ga_loads(int ndof, const double* f_prev, const double* f, double th0, double th1, double* F0, double* F1) {
  int i = blockIdx.x * kThreads + threadIdx.x;
  if (i >= ndof) return;
  F0[i] = f_prev[i] + th0 * (f[i] - f_prev[i]);
  F1[i] = f_prev[i] + th1 * (f[i] - f_prev[i]);
}

/* predictor x = x0 + h v0 + h^2/2 a0 (x0 on held DOFs) */
__global__ void __launch_bounds__(kThreads)
    k_ga_predict(int ndof, const unsigned char* fixed, int use_fixed, double h, const double* x0,
                 const double* v0, const double* a0, double* x) {
  int i = blockIdx.x * kThreads + threadIdx.x;
  if (i >= ndof) return;
  x[i] = ga_held(i, fixed, use_fixed) ? x0[i] : x0[i] + h * v0[i] + 0.5 * h * h * a0[i];
}

/* a, v from x (Newmark relations); am_ = (1 - am) a + am a0, vf = (1 - af) v + af v0 */
__global__ void __launch_bounds__(kThreads)
    k_ga_kinematics(int ndof, const unsigned char* fixed, int use_fixed, double h, double am, double af,
                    double gam, double be, const double* x, const double* x0, const double* v0,
                    const double* a0, double* a, double* v, double* a_m, double* v_f) {
  int i = blockIdx.x * kThreads + threadIdx.x;
  if (i >= ndof) return;
  double ai = 0, vi = 0;
  if (!ga_held(i, fixed, use_fixed)) {
    ai = (x[i] - x0[i] - h * v0[i] - h * h * (0.5 - be) * a0[i]) / (be * h * h);
    vi = v0[i] + h * ((1 - gam) * a0[i] + gam * ai);
  }
  a[i] = ai;
  v[i] = vi;
  a_m[i] = (1 - am) * ai + am * a0[i];
  v_f[i] = (1 - af) * vi + af * v0[i];
}

/* r = M a_m + C v_f + (1 - af) f_el + af f0 - (1 - af) F1 - af F0 - m g (0 on held DOFs; C v_f
 * given in cvf, NULL: undamped); partials of |M a_m|^2, |C v_f|^2, |f_el,f|^2, |F_f + m g|^2,
 * |r|^2 (free DOFs) and |x - x0|^2 at part[k * npart + block] */
__global__ void __launch_bounds__(kThreads)
    k_ga_residual(int nnode, const int* row_ptr, const int* col, const double* Mblk,
                  const double* node_mass, const unsigned char* fixed, int use_fixed, double af,
                  double g0, double g1, double g2, const double* a_m, const double* cvf,
                  const double* f_el, const double* f0, const double* F0, const double* F1,
                  const double* x, const double* x0, double* r, double* part, int npart) {
  __shared__ double sh[kThreads];
  int n = blockIdx.x * kThreads + threadIdx.x;
  double s[6] = {0, 0, 0, 0, 0, 0};
  if (n < nnode) {
    double ma[3];
    cf_node_mass_row(n, row_ptr, col, Mblk, a_m, ma);
    const double g[3] = {g0, g1, g2};
    for (int k = 0; k < 3; k++) {
      const int i = 3 * n + k;
      const double dx = x[i] - x0[i];
      s[5] += dx * dx;
      if (ga_held(i, fixed, use_fixed)) {
        r[i] = 0;
        continue;
      }
      const double c = cvf ? cvf[i] : 0.0;
      const double fel = (1 - af) * f_el[i] + af * f0[i];
      const double fx = (1 - af) * F1[i] + af * F0[i] + node_mass[n] * g[k];
      const double ri = ma[k] + c + fel - fx;
      r[i] = ri;
      s[0] += ma[k] * ma[k];
      s[1] += c * c;
      s[2] += fel * fel;
      s[3] += fx * fx;
      s[4] += ri * ri;
    }
  }
  for (int k = 0; k < 6; k++) {
    double t = block_sum(s[k], sh);
    if (threadIdx.x == 0) part[k * npart + blockIdx.x] = t;
    __syncthreads(); /* sh is reused by the next sum */
  }
}

__global__ void __launch_bounds__(kThreads)
    k_ga_finish(DevState* st, const double* part, int npart, int nsum) {
  __shared__ double sh[kThreads];
  for (int k = 0; k < nsum; k++) {
    double t = ordered_sum(part + k * npart, npart, sh);
    if (threadIdx.x == 0) st->ga_out[k] = t;
    __syncthreads();
  }
}

/* b = -s r */
__global__ void __launch_bounds__(kThreads) k_ga_rhs(int ndof, double s, const double* r, double* b) {
  int i = blockIdx.x * kThreads + threadIdx.x;
  if (i < ndof) b[i] = -s * r[i];
}

__global__ void k_set_bscale(DevState* st, double b_scale) { st->b_scale = b_scale; }

/* x += du; partial of |du|^2 over the free DOFs */
__global__ void __launch_bounds__(kThreads)
    k_ga_add(int nnode, const unsigned char* fixed, int use_fixed, const double* du, double* x, double* part) {
  __shared__ double sh[kThreads];
  int n = blockIdx.x * kThreads + threadIdx.x;
  double s = 0;
  if (n < nnode)
    for (int i = 3 * n; i < 3 * n + 3; i++) {
      if (!ga_held(i, fixed, use_fixed)) s += du[i] * du[i];
      x[i] += du[i];
    }
  double t = block_sum(s, sh);
  if (threadIdx.x == 0) part[blockIdx.x] = t;
}

/* the right side of M a = F0 + m g - f_el - C v (0 on held DOFs; cv NULL: undamped) */
__global__ void __launch_bounds__(kThreads)
    k_ga_acc_rhs(int nnode, const double* node_mass, const unsigned char* fixed, int use_fixed,
                 double g0, double g1, double g2, const double* F0, const double* f_el, const double* cv,
                 double* b) {
  int n = blockIdx.x * kThreads + threadIdx.x;
  if (n >= nnode) return;
  const double g[3] = {g0, g1, g2};
  for (int k = 0; k < 3; k++) {
    const int i = 3 * n + k;
    b[i] = ga_held(i, fixed, use_fixed) ? 0.0 : F0[i] + node_mass[n] * g[k] - f_el[i] - (cv ? cv[i] : 0.0);
  }
}

}  // namespace

/* ---- the device mirror ---------------------------------------------------------------------- */
struct cfCuda {
  int nnode, ntet, ndof, nnzb, nfixed;
  int npe;   /* nodes per element: 4, or 10 (quadratic) */
  int has_q; /* quadratic with rotations per quadrature point (cfModel.Gq) */
  int device;
  cfCudaOptions opt;
  int supports_active;
  int sys_jacobi; /* cf_cuda_system formed block Jacobi (a backend with AMG: for a mass-only A) */
  char name[256];
  unsigned long long bus_h2d, bus_d2h; /* bytes copied over the bus (cf_cuda_bus_bytes) */
  cudaStream_t s;    /* all compute, in order */
  cudaStream_t copy; /* asynchronous downloads */
  cudaEvent_t ev[5]; /* stage boundaries of the last step (timers) */
  /* cfCudaOptions.kernel_timers: the kernel groups' boundaries of a step (kmark), their summed
   * times and the steps timed (cf_cuda_kernel_times) */
  cudaEvent_t kev[CF_CUDA_KT_COUNT + 1];
  double kt_ms[CF_CUDA_KT_COUNT];
  long kt_steps;
  cudaEvent_t ev_snap, ev_copied;

  /* model (immutable) */
  double *X, *Dm_inv, *vol, *node_mass, *Mblk;
  /* quadratic: the centroid's gradients [30 ne]; per quadrature point the gradients [120 ne] and
   * weights [4 ne] (has_q), else the 30 x 30 stiffness at rest [900 ne] (cfModel's names) */
  double *Gc, *Gq, *Wq, *Ke;
  double lam, mu; /* Lame constants of the material (K_e = V B^T D B, see cf_elem_rotate) */
  int *tet, *row_ptr, *col, *diag, *blk_src_ptr, *blk_src, *node_src_ptr, *node_src;
  unsigned char* fixed;
  /* state, inputs and per-step arrays (as in cfData) */
  double *x, *v, *f_ext, *R, *KR, *fe, *f_el, *A, *b, *Pinv;
  double* Rq; /* [36 ne] the quadrature points' rotations (has_q; they travel with CF_CUDA_R) */
  double* v_prev; /* velocities of the step before (the warm start's second vector) */
  double* f_ext_prev; /* f_ext of the step before (generalized-alpha's load at the step's start) */
  /* generalized-alpha (allocated for that integrator only; cfData's names): a, the (sub)step's
   * start, its loads, the increment, the step's first increment, the residual, the step's start */
  int ga;       /* the model was generalized-alpha at create: the arrays below exist */
  int ga_ready; /* a and ga_f0 belong to the current x, v (as cfData.ga_ready) */
  double *acc, *ga_x0, *ga_v0, *ga_a0, *ga_f0, *ga_F0, *ga_F1, *ga_du, *ga_du1, *ga_r, *ga_a_step, *ga_x_step;
  /* the PCG's vectors; before the PCG starts the warm start's (cfData's warm_v1, warm_Av0,
   * warm_Av1 on the host) in p, q and z: device memory bounds the largest parts */
  double *r, *z, *p, *q;
  double *part0, *part1, *part2; /* [npart] per-block partial sums */
  double* part_warm;             /* [CF_WARM_NSUM * npart] */
  int npart;
  DevState* st;
  DevState* st_host; /* pinned mirror, read at PCG check points and at the end of a step */

  /* cfCudaOptions.step_graph: the whole backward-Euler step as one graph (capture_step), the
   * parameters it was captured with, the stream its PCG loop's body is captured on; capturing: the
   * stream is being captured (event records become graph nodes, record_event) */
  cudaGraphExec_t step_exec;
  double step_key[12];
  cudaStream_t body_s;
  int capturing;

  /* PCG batch as a CUDA graph (captured on first use; all arguments are fixed pointers) */
  cudaGraphExec_t graph;
  int graph_k;
  int graph_key; /* graph_key() at capture */

  /* cuSPARSE (handle always; descriptors and buffer on first use) */
  cusparseHandle_t sp;
  int sp_ready;
  cusparseSpMatDescr_t spA;
  cusparseDnVecDescr_t spx, spy;
  void* sp_buf;

  /* AMG (def.preconditioner CF_PRECOND_AMG): the CPU's hierarchies uploaded (with the supports
   * active, amg_sup; off, or a part without fixed DOFs, amg_free) and the node rotations */
  int amg_on;
  cfCudaAmg *amg_sup, *amg_free;
  double* node_R;
  size_t amg_bytes; /* device bytes of both hierarchies (the free-memory check) */
  int node_R_ok;    /* node_R holds 9 nnode doubles: AMG's (the table's), or made by ensure_node_R */

  /* resident vectors (cf_cuda_vec_*, allocated on first use): nvec vectors of ndof doubles back to
   * back; a node list and its values (room for vcap nodes, 9 doubles each); vlast [nnode] the last
   * entry of each node in a scattered list (duplicates: the last one wins, as on the CPU); red: a
   * reduction's result */
  double* vec;
  int nvec;
  int* vnodes;
  double* vbuf;
  int vcap;
  int* vlast;
  double* red;
  double* red4;            /* cf_cuda_vec_radius: the nodes' sum [3] and the largest squared distance */
  double* red16;           /* cf_cuda_vec_rigid_sums' 16 sums */

  /* divergence monitor: x at the step's start (Euler), partial sums, the results */
  double *mon_x0, *mon_part;
  MonDev* mon_dev;

  /* asynchronous download: device snapshot -> pinned host */
  double *snap_x, *snap_v, *snap_R, *snap_f_el, *snap_Rq;
  double *pin_x, *pin_v, *pin_R, *pin_f_el, *pin_Rq;
  int pending;
};

namespace {

int check_model(const cfCuda* g, const cfModel* m) {
  if (!g || !m) return cf_error(CF_ERR_ARG, "cuda: NULL backend or model");
  TRY(cf_cuda_check_model(m)); /* the method may have been changed since create */
  if (m->nnode != g->nnode || m->ntet != g->ntet || m->nnzb != g->nnzb || m->npe != g->npe)
    return cf_error(CF_ERR_ARG,
                    "cuda: model (%d nodes, %d elements, %d blocks) is not the one uploaded "
                    "(%d, %d, %d)",
                    m->nnode, m->ntet, m->nnzb, g->nnode, g->ntet, g->nnzb);
  return CF_OK;
}

/* host <-> device copies on the backend's compute stream, counted in g->bus_h2d / bus_d2h */
template <class T>
int upload_array(cfCuda* g, T* dst, const T* src, size_t count) {
  if (count == 0) return CF_OK;
  CU(cudaMemcpyAsync(dst, src, count * sizeof(T), cudaMemcpyHostToDevice, g->s));
  g->bus_h2d += count * sizeof(T);
  return CF_OK;
}

template <class T>
int download_array(cfCuda* g, T* dst, const T* src, size_t count) {
  if (count == 0) return CF_OK;
  CU(cudaMemcpyAsync(dst, src, count * sizeof(T), cudaMemcpyDeviceToHost, g->s));
  g->bus_d2h += count * sizeof(T);
  return CF_OK;
}

/* wait for the stream; a kernel fault surfaces here, named with `what` */
int sync_stream(cudaStream_t s, const char* what) {
  cudaError_t e = cudaStreamSynchronize(s);
  if (e != cudaSuccess)
    return cf_error(CF_ERR_CUDA, "cudaStreamSynchronize after %s: %s (%s)", what,
                    cudaGetErrorString(e), cudaGetErrorName(e));
  return CF_OK;
}

/* Every device array of the backend with its size in bytes: f(void** ptr, size_t bytes) is
 * called for each, in order, until it returns nonzero (returned). One list for the memory
 * estimate, the allocation and the release, so that the free-memory check of cf_cuda_create
 * counts everything allocated (the cuSPARSE buffer, whose size only cuSPARSE knows, is
 * allocated right after, in create). g's sizes must be set. */
template <class F>
int each_array(cfCuda* g, F f) {
  const size_t nn = (size_t)g->nnode, ne = (size_t)g->ntet, nb = (size_t)g->nnzb, nd = 3 * nn;
  const size_t np = (size_t)g->npart, D = sizeof(double), I = sizeof(int);
  const size_t ga = g->ga ? nd : 0, nrot = g->amg_on ? 9 * nn : 0;
  const size_t npm = np > (size_t)blocks_for(g->ntet) ? np : (size_t)blocks_for(g->ntet); /* monitor */
  const size_t pe = (size_t)g->npe, nk = 3 * pe, q10 = g->npe == 10 ? ne : 0, qq = g->has_q ? ne : 0;
  const size_t ke10 = g->npe == 10 && !g->has_q ? ne : 0;
  struct {
    void** p;
    size_t bytes;
  } a[] = {
      /* model */
      {(void**)&g->X, nd * D}, {(void**)&g->Dm_inv, 9 * ne * D}, {(void**)&g->vol, ne * D},
      {(void**)&g->node_mass, nn * D}, {(void**)&g->Mblk, nb * D}, {(void**)&g->tet, pe * ne * I},
      {(void**)&g->row_ptr, (nn + 1) * I}, {(void**)&g->col, nb * I}, {(void**)&g->diag, nn * I},
      {(void**)&g->blk_src_ptr, (nb + 1) * I}, {(void**)&g->blk_src, pe * pe * ne * I},
      {(void**)&g->node_src_ptr, (nn + 1) * I}, {(void**)&g->node_src, pe * ne * I},
      {(void**)&g->fixed, nd}, {(void**)&g->Gc, 30 * q10 * D}, {(void**)&g->Gq, 120 * qq * D},
      {(void**)&g->Wq, 4 * qq * D}, {(void**)&g->Ke, 900 * ke10 * D},
      /* state, inputs, stage arrays */
      {(void**)&g->x, nd * D}, {(void**)&g->v, nd * D}, {(void**)&g->v_prev, nd * D},
      {(void**)&g->f_ext, nd * D}, {(void**)&g->R, 9 * ne * D}, {(void**)&g->KR, nk * nk * ne * D},
      {(void**)&g->fe, nk * ne * D}, {(void**)&g->Rq, 36 * qq * D}, {(void**)&g->f_el, nd * D}, {(void**)&g->A, 9 * nb * D},
      {(void**)&g->b, nd * D}, {(void**)&g->Pinv, 9 * nn * D}, {(void**)&g->f_ext_prev, nd * D},
      {(void**)&g->node_R, nrot * D},
      /* generalized-alpha */
      {(void**)&g->acc, ga * D}, {(void**)&g->ga_x0, ga * D}, {(void**)&g->ga_v0, ga * D},
      {(void**)&g->ga_a0, ga * D}, {(void**)&g->ga_f0, ga * D}, {(void**)&g->ga_F0, ga * D},
      {(void**)&g->ga_F1, ga * D}, {(void**)&g->ga_du, ga * D}, {(void**)&g->ga_du1, ga * D},
      {(void**)&g->ga_r, ga * D}, {(void**)&g->ga_a_step, ga * D}, {(void**)&g->ga_x_step, ga * D},
      /* PCG vectors, partial sums, scalars */
      {(void**)&g->r, nd * D}, {(void**)&g->z, nd * D}, {(void**)&g->p, nd * D},
      {(void**)&g->q, nd * D}, {(void**)&g->part0, np * D}, {(void**)&g->part1, np * D},
      {(void**)&g->part2, np * D}, {(void**)&g->part_warm, CF_WARM_NSUM * np * D},
      {(void**)&g->st, sizeof(DevState)},
      /* divergence monitor */
      {(void**)&g->mon_x0, nd * D}, {(void**)&g->mon_part, (MON_NSUM + 2) * npm * D},
      {(void**)&g->mon_dev, sizeof(MonDev)},
      /* snapshots of the asynchronous download */
      {(void**)&g->snap_x, nd * D}, {(void**)&g->snap_v, nd * D}, {(void**)&g->snap_R, 9 * ne * D},
      {(void**)&g->snap_f_el, nd * D}, {(void**)&g->snap_Rq, 36 * qq * D},
  };
  for (size_t i = 0; i < sizeof a / sizeof a[0]; i++) {
    int r = f(a[i].p, a[i].bytes > 0 ? a[i].bytes : 1);
    if (r) return r;
  }
  return 0;
}

/* device bytes of everything each_array allocates, and of the AMG hierarchies */
size_t device_bytes(cfCuda* g) {
  size_t total = g->amg_bytes;
  each_array(g, [&](void**, size_t bytes) {
    total += (bytes + 255) / 256 * 256; /* cudaMalloc's alignment */
    return 0;
  });
  return total;
}

/* device `device` runs a kernel: catches a missing kernel image for this GPU or a broken
 * driver. 1, or 0 with the reason in why[n]. Leaves `device` current. */
int probe_device(int device, char* why, int n) {
  char buf[256];
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    snprintf(buf, sizeof buf, "cudaGetDeviceCount: %s", cudaGetErrorString(e));
  } else if (count == 0) {
    snprintf(buf, sizeof buf, "cudaGetDeviceCount: no CUDA device");
  } else if (device < 0 || device >= count) {
    snprintf(buf, sizeof buf, "CUDA device %d requested, %d present (ordinals 0..%d)", device,
             count, count - 1);
  } else if ((e = cudaSetDevice(device)) != cudaSuccess) {
    snprintf(buf, sizeof buf, "cudaSetDevice(%d): %s", device, cudaGetErrorString(e));
  } else {
    int* dflag = NULL;
    int flag = 0;
    e = cudaMalloc((void**)&dflag, sizeof(int));
    if (e == cudaSuccess) {
      k_probe<<<1, 1>>>(dflag);
      e = cudaGetLastError();
      if (e == cudaSuccess) e = cudaMemcpy(&flag, dflag, sizeof(int), cudaMemcpyDeviceToHost);
      cudaFree(dflag);
    }
    if (e != cudaSuccess) {
      snprintf(buf, sizeof buf, "CUDA probe kernel on device %d: %s", device, cudaGetErrorString(e));
    } else if (flag != 42) {
      snprintf(buf, sizeof buf, "CUDA probe kernel did not run on device %d", device);
    } else {
      if (why && n > 0) why[0] = 0;
      return 1;
    }
  }
  if (why && n > 0) snprintf(why, (size_t)n, "%s", buf);
  return 0;
}

/* the device array behind one field bit (cf_cuda_field gives the host side and the length) */
double* dev_field(cfCuda* g, int bit) {
  switch (bit) {
    case CF_CUDA_X: return g->x;
    case CF_CUDA_V: return g->v;
    case CF_CUDA_V_PREV: return g->v_prev;
    case CF_CUDA_R: return g->R;
    case CF_CUDA_F_EXT: return g->f_ext;
    case CF_CUDA_KR: return g->KR;
    case CF_CUDA_FE: return g->fe;
    case CF_CUDA_F_EL: return g->f_el;
    case CF_CUDA_A: return g->A;
    case CF_CUDA_B: return g->b;
    case CF_CUDA_PINV: return g->Pinv;
    case CF_CUDA_F_EXT_PREV: return g->f_ext_prev;
    case CF_CUDA_ACC: return g->ga ? g->acc : NULL;
    default: return NULL;
  }
}

/* ---- launch helpers: enqueue on g->s, no sync ----------------------------------------------- */

/* boundary k of the kernel timers (cfCudaOptions.kernel_timers; kernel group k - 1 ends, k begins) */
int record_event(cfCuda* g, cudaEvent_t e) {
  /* in a capture a plain record only orders streams; External makes it an event node of the graph */
  if (g->capturing) CU(cudaEventRecordWithFlags(e, g->s, cudaEventRecordExternal));
  else CU(cudaEventRecord(e, g->s));
  return CF_OK;
}

int kmark(cfCuda* g, int k) {
  if (g->opt.kernel_timers) TRY(record_event(g, g->kev[k]));
  return CF_OK;
}

int enqueue_polar(cfCuda* g) {
  CU(cudaMemsetAsync(&g->st->ninverted, 0, sizeof(int), g->s));
  if (g->npe == 10) {
    k_polar10<<<blocks_for(g->ntet), kThreads, 0, g->s>>>(g->ntet, g->tet, g->Gc, g->has_q ? g->Gq : NULL, g->x, g->R,
                                                          g->Rq, g->st);
    CU_LAUNCHED(k_polar10);
    return CF_OK;
  }
  k_polar<<<blocks_for(g->ntet), kThreads, 0, g->s>>>(g->ntet, g->tet, g->Dm_inv, g->x, g->R,
                                                      g->st);
  CU_LAUNCHED(k_polar);
  return CF_OK;
}

int enqueue_elastic(cfCuda* g) {
  if (g->npe == 10) {
    k_rotate10<<<blocks_for(g->ntet), kThreads, 0, g->s>>>(g->ntet, g->tet, g->has_q ? g->Gq : NULL, g->Wq, g->Rq,
                                                           g->Ke, g->R, g->X, g->lam, g->mu, g->x, g->KR, g->fe);
    CU_LAUNCHED(k_rotate10);
  } else {
    k_rotate<<<blocks_for(g->ntet), kThreads, 0, g->s>>>(g->ntet, g->tet, g->Dm_inv, g->vol, g->lam,
                                                         g->mu, g->R, g->x, g->KR, g->fe);
    CU_LAUNCHED(k_rotate);
  }
  TRY(kmark(g, CF_CUDA_KT_NODE_GATHER));
  k_node_gather<<<blocks_for(g->nnode), kThreads, 0, g->s>>>(g->nnode, g->node_src_ptr, g->node_src,
                                                             g->fe, g->f_el);
  CU_LAUNCHED(k_node_gather);
  return kmark(g, CF_CUDA_KT_BLOCK_GATHER);
}

/* the preconditioner of the device's A: AMG's node rotations from R (its hierarchy is fixed), or
 * block Jacobi's inverse blocks */
int enqueue_precond_setup(cfCuda* g, int amg) {
  if (amg) {
    k_node_rotation<<<blocks_for(g->nnode), kThreads, 0, g->s>>>(g->nnode, g->npe, g->node_src_ptr, g->node_src, g->R,
                                                                 g->node_R, 0);
    CU_LAUNCHED(k_node_rotation);
    return CF_OK;
  }
  k_jacobi<<<blocks_for(g->nnode), kThreads, 0, g->s>>>(g->nnode, g->diag, g->A, g->fixed,
                                                        g->supports_active, g->Pinv);
  CU_LAUNCHED(k_jacobi);
  return CF_OK;
}

int enqueue_assemble(cfCuda* g, const cfModel* m, double h) {
  double cm, ck; /* the CPU's own coefficients of A = cm M + ck K_R */
  cf_system_coefficients(m, h, &cm, &ck);
  k_block_gather<<<blocks_for(g->nnzb), kThreads, 0, g->s>>>(g->nnzb, g->npe, g->blk_src_ptr, g->blk_src,
                                                             g->KR, g->Mblk, cm, ck, g->A);
  CU_LAUNCHED(k_block_gather);
  TRY(kmark(g, CF_CUDA_KT_RHS));
  const double* gr = m->def.gravity;
  k_rhs<<<g->npart, kThreads, 0, g->s>>>(g->nnode, g->row_ptr, g->col, g->Mblk, g->node_mass, g->v,
                                         g->f_ext, g->f_el, g->fixed, g->supports_active, h, gr[0],
                                         gr[1], gr[2], g->b, g->part0, g->part1, g->part2);
  CU_LAUNCHED(k_rhs);
  k_finish_bscale<<<1, kThreads, 0, g->s>>>(g->st, g->part0, g->part1, g->part2, g->npart, h);
  CU_LAUNCHED(k_finish_bscale);
  TRY(kmark(g, CF_CUDA_KT_PRECOND));
  /* as cf_stage_assemble_system with d->precond: the node rotations, no Pinv */
  return enqueue_precond_setup(g, g->amg_on);
}

/* y = A x on g->s by the own kernels (a thread or, CF_CUDA_SPMV_WARP, a warp per row) */
int enqueue_spmv_plain(cfCuda* g, const double* x, double* y) {
  if (g->opt.spmv == CF_CUDA_SPMV_WARP) {
    k_spmv_warp<<<g->npart, kThreads, 0, g->s>>>(g->nnode, g->row_ptr, g->col, g->A, x, y);
    CU_LAUNCHED(k_spmv_warp);
    return CF_OK;
  }
  k_spmv<<<blocks_for(g->nnode), kThreads, 0, g->s>>>(g->nnode, g->row_ptr, g->col, g->A, x, y);
  CU_LAUNCHED(k_spmv);
  return CF_OK;
}

/* the PCG's starting guess from v = v0 and v1 (in p), a copy of the velocities of the step before
 * (as cf_pcg_warm_start; cf_cuda_step fills p); A v0 and A v1 in q and z */
int enqueue_warm_start(cfCuda* g, double tol) {
  const int use_fixed = g->supports_active && g->nfixed > 0;
  double *v1 = g->p, *Av0 = g->q, *Av1 = g->z;
  k_warm_project<<<blocks_for(g->nnode), kThreads, 0, g->s>>>(g->nnode, g->fixed, use_fixed, g->v,
                                                              v1);
  CU_LAUNCHED(k_warm_project);
  TRY(enqueue_spmv_plain(g, g->v, Av0));
  TRY(enqueue_spmv_plain(g, v1, Av1));
  k_warm_sums<<<g->npart, kThreads, 0, g->s>>>(g->nnode, g->fixed, use_fixed, g->v, v1, Av0, Av1,
                                               g->b, g->part_warm, g->npart);
  CU_LAUNCHED(k_warm_sums);
  k_warm_finish<<<1, kThreads, 0, g->s>>>(g->st, g->part_warm, g->npart, tol);
  CU_LAUNCHED(k_warm_finish);
  k_warm_combine<<<blocks_for(g->ndof), kThreads, 0, g->s>>>(g->ndof, g->v, v1, g->st);
  CU_LAUNCHED(k_warm_combine);
  return CF_OK;
}

int enqueue_update(cfCuda* g, double h) {
  k_update_x<<<blocks_for(g->ndof), kThreads, 0, g->s>>>(g->ndof, h, g->v, g->x);
  CU_LAUNCHED(k_update_x);
  return CF_OK;
}

int sparse_setup(cfCuda* g) {
  if (g->sp_ready) return CF_OK;
  CUSP(cusparseCreateBsr(&g->spA, g->nnode, g->nnode, g->nnzb, 3, 3, g->row_ptr, g->col, g->A,
                         CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                         CUDA_R_64F, CUSPARSE_ORDER_ROW));
  CUSP(cusparseCreateDnVec(&g->spx, g->ndof, g->p, CUDA_R_64F));
  CUSP(cusparseCreateDnVec(&g->spy, g->ndof, g->q, CUDA_R_64F));
  const double one = 1.0, zero = 0.0;
  size_t bytes = 0;
  CUSP(cusparseSpMV_bufferSize(g->sp, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, g->spA, g->spx, &zero,
                               g->spy, CUDA_R_64F, CUSPARSE_SPMV_ALG_DEFAULT, &bytes));
  if (bytes > 0) CU(cudaMalloc(&g->sp_buf, bytes));
  g->sp_ready = 1;
  return CF_OK;
}

/* y = A x (no projection) with cuSPARSE; x, y device arrays of length ndof */
int sparse_spmv(cfCuda* g, const double* x, double* y) {
  TRY(sparse_setup(g));
  CUSP(cusparseDnVecSetValues(g->spx, (void*)x));
  CUSP(cusparseDnVecSetValues(g->spy, y));
  const double one = 1.0, zero = 0.0;
  CUSP(cusparseSpMV(g->sp, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, g->spA, g->spx, &zero, g->spy,
                    CUDA_R_64F, CUSPARSE_SPMV_ALG_DEFAULT, g->sp_buf));
  return CF_OK;
}

/* q = A src projected, partial of src.q into part0 (skipped on the device once done) */
int enqueue_spmv_dot(cfCuda* g, const double* src) {
  if (g->opt.spmv == CF_CUDA_SPMV_CUSPARSE) {
    TRY(sparse_spmv(g, src, g->q));
    k_project_dot<<<g->npart, kThreads, 0, g->s>>>(g->nnode, g->fixed, src, g->q, g->st, g->part0);
    CU_LAUNCHED(k_project_dot);
  } else if (g->opt.spmv == CF_CUDA_SPMV_WARP) {
    k_spmv_dot_warp<<<g->npart, kThreads, 0, g->s>>>(g->nnode, g->row_ptr, g->col, g->A, g->fixed, src, g->q, g->st,
                                                     g->part0);
    CU_LAUNCHED(k_spmv_dot_warp);
  } else {
    k_spmv_dot<<<g->npart, kThreads, 0, g->s>>>(g->nnode, g->row_ptr, g->col, g->A, g->fixed, src,
                                                g->q, g->st, g->part0);
    CU_LAUNCHED(k_spmv_dot);
  }
  return CF_OK;
}

/* z = Q AMG(A0) Q^T r with the hierarchy of the current support state (cf_precond_apply) */
int enqueue_amg(cfCuda* g) {
  const int sup = g->supports_active && g->amg_sup;
  return cf_cuda_amg_apply(sup ? g->amg_sup : g->amg_free, g->s, g->node_R, g->fixed, sup, g->r, g->z,
                           &g->st->done);
}

/* one PCG iteration; every kernel returns at once when st->done */
int enqueue_iteration(cfCuda* g) {
  TRY(enqueue_spmv_dot(g, g->p));
  k_pcg_finish_pq<<<1, kThreads, 0, g->s>>>(g->st, g->part0, g->npart);
  CU_LAUNCHED(k_pcg_finish_pq);
  if (g->amg_on) { /* x, r; z by the V-cycle (one more than the CPU's on the last iteration); r.z */
    k_update_xr_amg<<<g->npart, kThreads, 0, g->s>>>(g->nnode, g->p, g->q, g->v, g->r, g->st, g->part0);
    CU_LAUNCHED(k_update_xr_amg);
    TRY(enqueue_amg(g));
    /* z projected (so that p = z + beta p stays projected, as the CPU's project(p)), partial of r.z:
     * the same kernel as after a library SpMV */
    k_project_dot<<<g->npart, kThreads, 0, g->s>>>(g->nnode, g->fixed, g->r, g->z, g->st, g->part1);
    CU_LAUNCHED(k_project_dot);
    k_pcg_finish_rr<<<1, kThreads, 0, g->s>>>(g->st, g->part0, g->part1, g->npart);
    CU_LAUNCHED(k_pcg_finish_rr);
    k_update_p<<<blocks_for(g->ndof), kThreads, 0, g->s>>>(g->ndof, g->z, g->p, g->st);
    CU_LAUNCHED(k_update_p);
    return CF_OK;
  }
  k_update_xrz<<<g->npart, kThreads, 0, g->s>>>(g->nnode, g->Pinv, g->p, g->q, g->v, g->r, g->z,
                                                g->st, g->part0, g->part1);
  CU_LAUNCHED(k_update_xrz);
  k_pcg_finish_rr<<<1, kThreads, 0, g->s>>>(g->st, g->part0, g->part1, g->npart);
  CU_LAUNCHED(k_pcg_finish_rr);
  k_update_p<<<blocks_for(g->ndof), kThreads, 0, g->s>>>(g->ndof, g->z, g->p, g->st);
  CU_LAUNCHED(k_update_p);
  return CF_OK;
}

/* Ends the capture of g->s begun for `what` and instantiates its graph into *exec; st: the status
 * of what was enqueued in it (an error is returned with `what` and the option that avoids it). */
int end_capture(cfCuda* g, int st, const char* what, const char* avoid, cudaGraphExec_t* exec) {
  cudaGraph_t graph = NULL;
  cudaError_t e = cudaStreamEndCapture(g->s, &graph);
  if (st < 0 || e != cudaSuccess) {
    char msg[768];
    if (st >= 0) st = cf_cuda_fail(e, "cudaStreamEndCapture", __FILE__, __LINE__);
    snprintf(msg, sizeof msg, "%s", cf_last_error());
    if (graph) cudaGraphDestroy(graph);
    (void)cudaGetLastError();
    return cf_error(st, "%s (while capturing %s; %s avoids it)", msg, what, avoid);
  }
  e = cudaGraphInstantiate(exec, graph, 0);
  cudaGraphDestroy(graph);
  if (e != cudaSuccess) {
    *exec = NULL;
    char msg[768];
    cf_cuda_fail(e, "cudaGraphInstantiate", __FILE__, __LINE__); /* its message, extended below */
    snprintf(msg, sizeof msg, "%s", cf_last_error());
    return cf_error(CF_ERR_CUDA, "%s (%s; %s avoids it)", msg, what, avoid);
  }
  return CF_OK;
}

/* which hierarchy the AMG kernels of a captured graph use (0 without AMG) */
int graph_key(const cfCuda* g) { return g->amg_on ? 1 + (g->supports_active && g->amg_sup) : 0; }

/* Capture check_every iterations as one graph (own SpMV only: no library calls inside). A graph
 * keeps its kernels' arguments: the AMG's hierarchy and its zero_fixed are chosen on the host, so
 * a change of the supports recaptures it (the block-Jacobi kernels read use_fixed on the device).
 * The device run of 2026-11-26 (H200) found it: the graph captured with the supports kept their
 * hierarchy after they were released, exactly the released steps differed from the CPU. */
int capture_batch(cfCuda* g) {
  if (g->graph && g->graph_key == graph_key(g)) return CF_OK;
  if (g->graph) {
    CU(cudaGraphExecDestroy(g->graph));
    g->graph = NULL;
  }
  const int k = g->opt.check_every;
  CU(cudaStreamBeginCapture(g->s, cudaStreamCaptureModeThreadLocal));
  int st = CF_OK;
  for (int i = 0; i < k && st >= 0; i++) st = enqueue_iteration(g);
  TRY(end_capture(g, st, "the PCG graph", "cfCudaOptions.use_graphs = 0", &g->graph));
  g->graph_k = k;
  g->graph_key = graph_key(g);
  return CF_OK;
}

/* the PCG's start: its state reset, r = b - A x, the first z and p (every kernel a no-op once done) */
int enqueue_pcg_start(cfCuda* g, const cfModel* m) {
  const int use_fixed = g->supports_active && g->nfixed > 0;
  k_pcg_reset<<<1, 1, 0, g->s>>>(g->st, m->def.pcg_tol, m->def.pcg_max_iter, use_fixed,
                                 m->def.warm_start);
  CU_LAUNCHED(k_pcg_reset);
  k_pcg_init_r<<<g->npart, kThreads, 0, g->s>>>(g->nnode, g->fixed, g->b, g->v, g->r, g->st,
                                                g->part0);
  CU_LAUNCHED(k_pcg_init_r);
  k_pcg_finish_b<<<1, kThreads, 0, g->s>>>(g->st, g->part0, g->npart);
  CU_LAUNCHED(k_pcg_finish_b);
  TRY(enqueue_spmv_dot(g, g->v)); /* q = A x; its partial is unused */
  if (g->amg_on) {
    k_pcg_init_r_amg<<<g->npart, kThreads, 0, g->s>>>(g->nnode, g->fixed, g->q, g->r, g->st, g->part0);
    CU_LAUNCHED(k_pcg_init_r_amg);
    TRY(enqueue_amg(g)); /* skipped on the device when b was not finite (done) */
    k_pcg_first_p_amg<<<g->npart, kThreads, 0, g->s>>>(g->nnode, g->fixed, g->r, g->z, g->p, g->st, g->part1);
    CU_LAUNCHED(k_pcg_first_p_amg);
  } else {
    k_pcg_init_z<<<g->npart, kThreads, 0, g->s>>>(g->nnode, g->fixed, g->Pinv, g->q, g->r, g->z, g->p,
                                                  g->st, g->part0, g->part1);
    CU_LAUNCHED(k_pcg_init_z);
  }
  k_pcg_finish_init<<<1, kThreads, 0, g->s>>>(g->st, g->part0, g->part1, g->npart);
  CU_LAUNCHED(k_pcg_finish_init);
  return CF_OK;
}

/* The PCG for A v = b (as cf_stage_pcg; block Jacobi or AMG); the host reads st back every
 * check_every iterations. Leaves the final DevState in g->st_host. */
int run_pcg(cfCuda* g, const cfModel* m) {
  TRY(enqueue_pcg_start(g, m));
  const int graphs = g->opt.use_graphs && g->opt.spmv != CF_CUDA_SPMV_CUSPARSE;
  /* cusparseSpMV cannot read the device's `done` flag: batched, it would run up to
   * check_every - 1 full products after convergence. So the cuSPARSE path checks after every
   * iteration (one sync each): it is the comparison path, not the fast one. */
  const int k = g->opt.spmv == CF_CUDA_SPMV_CUSPARSE ? 1 : g->opt.check_every;
  if (graphs) TRY(capture_batch(g));
  /* the device stops itself at max_iter; the bound only guards against a bug. A solve that
   * converged in the init runs one batch of no-op launches rather than paying an extra sync. */
  const long max_batches = (long)m->def.pcg_max_iter / k + 2;
  for (long batch = 1;; batch++) {
    if (graphs) {
      CU(cudaGraphLaunch(g->graph, g->s));
    } else {
      for (int i = 0; i < k; i++) TRY(enqueue_iteration(g));
    }
    CU(cudaMemcpyAsync(g->st_host, g->st, sizeof(DevState), cudaMemcpyDeviceToHost, g->s));
    g->bus_d2h += sizeof(DevState);
    TRY(sync_stream(g->s, "PCG iterations"));
    if (g->st_host->done) break;
    if (batch >= max_batches)
      return cf_error(CF_ERR_CUDA,
                      "cuda PCG: no stop after %ld batches of %d iterations (device "
                      "iteration count %d, cap %d)",
                      batch, k, g->st_host->it, m->def.pcg_max_iter);
  }
  return CF_OK;
}

/* ---- the whole backward-Euler step as one CUDA graph (cfCudaOptions.step_graph) --------------
 * Small parts spend their step in launches and host syncs (docs/cuda.md, "The step's bytes": the
 * lug at 21x its bytes' limit). Here the step is one graph launch and one sync: polar, elastic,
 * assembly, warm start and the PCG's start as in cf_cuda_step, then the PCG's iterations in a
 * conditional WHILE node (CUDA 12.4: its body one iteration and k_pcg_loop_set, which ends the
 * loop on the device as soon as the solve is done: no empty iterations, no host check points),
 * the guarded update and the DevState copied to the pinned host mirror. A graph keeps its
 * kernels' arguments, so it is captured again when one of them changes (step_graph_key). */

/* what the step graph's kernels were given: dt, the PCG's tolerance and cap, warm start, gravity,
 * A's coefficients, the supports and the AMG hierarchy (graph_key) */
void step_graph_key(const cfCuda* g, const cfModel* m, double* key) {
  double cm, ck;
  cf_system_coefficients(m, m->def.dt, &cm, &ck);
  const double k[12] = {m->def.dt, m->def.pcg_tol, (double)m->def.pcg_max_iter, (double)m->def.warm_start,
                        m->def.gravity[0], m->def.gravity[1], m->def.gravity[2], cm, ck,
                        (double)g->supports_active, (double)graph_key(g), (double)g->nfixed};
  memcpy(key, k, sizeof k);
}

/* A backward-Euler step before its PCG, as cf_step: polar; v_prev (the step before's velocities)
 * as the warm start's second vector in p, then v_prev = v0, unprojected, every step, warm start or
 * not (*saved: v_prev holds v0, the state can be put back); the element forces, K_R, A, b and the
 * preconditioner; the warm start. With the stage events and the kernel marks between. */
int enqueue_step_front(cfCuda* g, const cfModel* m, int* saved) {
  const size_t nd = (size_t)g->ndof * sizeof(double);
  TRY(record_event(g, g->ev[0]));
  TRY(kmark(g, CF_CUDA_KT_POLAR));
  TRY(enqueue_polar(g));
  TRY(record_event(g, g->ev[1]));
  TRY(kmark(g, CF_CUDA_KT_ROTATE)); /* the velocity copies go with k_rotate */
  if (m->def.warm_start) CU(cudaMemcpyAsync(g->p, g->v_prev, nd, cudaMemcpyDeviceToDevice, g->s));
  CU(cudaMemcpyAsync(g->v_prev, g->v, nd, cudaMemcpyDeviceToDevice, g->s));
  *saved = 1;
  TRY(enqueue_elastic(g));
  TRY(enqueue_assemble(g, m, m->def.dt));
  TRY(record_event(g, g->ev[2]));
  TRY(kmark(g, CF_CUDA_KT_WARM));
  if (m->def.warm_start) TRY(enqueue_warm_start(g, m->def.pcg_tol));
  return kmark(g, CF_CUDA_KT_PCG);
}

/* ... and after it: the update (k_update_x_ok: none when the right side was not finite) and the
 * DevState, which carries the polar's count too, into the pinned host mirror */
int enqueue_step_back(cfCuda* g, const cfModel* m) {
  TRY(record_event(g, g->ev[3]));
  TRY(kmark(g, CF_CUDA_KT_UPDATE));
  k_update_x_ok<<<blocks_for(g->ndof), kThreads, 0, g->s>>>(g->ndof, m->def.dt, g->v, g->x, g->st);
  CU_LAUNCHED(k_update_x_ok);
  TRY(record_event(g, g->ev[4]));
  TRY(kmark(g, CF_CUDA_KT_COUNT));
  CU(cudaMemcpyAsync(g->st_host, g->st, sizeof(DevState), cudaMemcpyDeviceToHost, g->s));
  return CF_OK; /* the caller counts the copy when it runs (not when it is captured) */
}

/* the step graph's kernels onto the capturing stream g->s: the step's front, the PCG's start and
 * its loop, the step's back */
int enqueue_step_body(cfCuda* g, const cfModel* m) {
  int saved = 0;
  TRY(enqueue_step_front(g, m, &saved));
  TRY(enqueue_pcg_start(g, m));
  /* the loop: its condition set from the start's state, then a WHILE node after the capture's
   * current nodes, whose body is captured on a stream of its own into the node's graph */
  cudaStreamCaptureStatus cs;
  cudaGraph_t graph = NULL;
  const cudaGraphNode_t* deps = NULL;
  const cudaGraphEdgeData* edges = NULL;
  size_t ndeps = 0;
  CU(cudaStreamGetCaptureInfo(g->s, &cs, NULL, &graph, NULL, NULL, NULL));
  cudaGraphConditionalHandle loop;
  CU(cudaGraphConditionalHandleCreate(&loop, graph, 0, cudaGraphCondAssignDefault));
  k_pcg_loop_set<<<1, 1, 0, g->s>>>(g->st, loop);
  CU_LAUNCHED(k_pcg_loop_set);
  CU(cudaStreamGetCaptureInfo(g->s, &cs, NULL, &graph, &deps, &edges, &ndeps));
  /* all of it zero but what is set (the reserved members must be), the union by its padding */
  cudaGraphNodeParams cp = {cudaGraphNodeTypeConditional, {0, 0, 0}, {{0}}, 0};
  cp.conditional.handle = loop;
  cp.conditional.type = cudaGraphCondTypeWhile;
  cp.conditional.size = 1;
  cudaGraphNode_t node;
  CU(cudaGraphAddNode(&node, graph, deps, edges, ndeps, &cp));
  CU(cudaStreamUpdateCaptureDependencies(g->s, &node, NULL, 1, cudaStreamSetCaptureDependencies));
  cudaGraph_t body = cp.conditional.phGraph_out[0];
  CU(cudaStreamBeginCaptureToGraph(g->body_s, body, NULL, NULL, 0, cudaStreamCaptureModeThreadLocal));
  cudaStream_t main_s = g->s;
  g->s = g->body_s; /* the iteration's launches go to the body's stream */
  int st = enqueue_iteration(g);
  if (st >= 0) {
    k_pcg_loop_set<<<1, 1, 0, g->s>>>(g->st, loop);
    st = cudaGetLastError() == cudaSuccess ? CF_OK : cf_error(CF_ERR_CUDA, "k_pcg_loop_set: launch failed");
  }
  g->s = main_s;
  cudaError_t e = cudaStreamEndCapture(g->body_s, &body);
  if (st < 0) return st;
  if (e != cudaSuccess) return cf_cuda_fail(e, "cudaStreamEndCapture (the PCG loop's body)", __FILE__, __LINE__);
  return enqueue_step_back(g, m);
}

/* the step graph for the model's current parameters: kept, or captured anew */
int capture_step(cfCuda* g, const cfModel* m) {
  double key[12];
  step_graph_key(g, m, key);
  if (g->step_exec && !memcmp(key, g->step_key, sizeof key)) return CF_OK;
  if (g->step_exec) {
    CU(cudaGraphExecDestroy(g->step_exec));
    g->step_exec = NULL;
  }
  if (!g->body_s) CU(cudaStreamCreateWithFlags(&g->body_s, cudaStreamNonBlocking));
  CU(cudaStreamBeginCapture(g->s, cudaStreamCaptureModeThreadLocal));
  g->capturing = 1;
  int st = enqueue_step_body(g, m);
  g->capturing = 0;
  TRY(end_capture(g, st, "the step graph (its conditional loop needs a CUDA 12.4 driver)",
                  "cfCudaOptions.step_graph = 0", &g->step_exec));
  memcpy(g->step_key, key, sizeof key);
  return CF_OK;
}

/* counters, warning or error of a finished solve (g->st_host): the CPU's cf_pcg_result */
int record_pcg(const cfCuda* g, const cfModel* m, cfData* d) {
  const DevState* s = g->st_host;
  return cf_pcg_result(m, d, s->status, s->it, s->rnorm, s->bnorm, s->b_scale);
}

/* pinned host buffers of the asynchronous download (host memory; the device snapshots are
 * allocated with everything else in create) */
int ensure_async_buffers(cfCuda* g) {
  if (g->pin_f_el) return CF_OK;
  const size_t nd = (size_t)g->ndof, nr = 9 * (size_t)g->ntet;
  if (!g->pin_x) CU(cudaMallocHost((void**)&g->pin_x, nd * sizeof(double)));
  if (!g->pin_v) CU(cudaMallocHost((void**)&g->pin_v, nd * sizeof(double)));
  if (!g->pin_R) CU(cudaMallocHost((void**)&g->pin_R, nr * sizeof(double)));
  if (g->has_q && !g->pin_Rq) CU(cudaMallocHost((void**)&g->pin_Rq, 4 * nr * sizeof(double)));
  CU(cudaMallocHost((void**)&g->pin_f_el, nd * sizeof(double)));
  return CF_OK;
}

/* ---- generalized-alpha: the GPU's cfNewtonOps (the driver and its bookkeeping are the CPU's
 * cf_newton_step, host/fem/fem_newton.c; each op here mirrors the CPU op of the same name) ------ */
struct GpuNewton {
  cfCuda* g;
  const cfModel* m;
  cfData* d;
};

int ga_use_fixed(const cfCuda* g) { return g->supports_active && g->nfixed > 0; }

int dcopy(cfCuda* g, double* dst, const double* src) {
  CU(cudaMemcpyAsync(dst, src, (size_t)g->ndof * sizeof(double), cudaMemcpyDeviceToDevice, g->s));
  return CF_OK;
}

/* C y into out (A = alpha M + beta K_R gathered from the current KR); NULL when undamped */
int ga_damping(cfCuda* g, const cfModel* m, const double* y, double* out, const double** cy) {
  const double al = m->def.rayleigh_alpha, be = m->def.rayleigh_beta;
  *cy = NULL;
  if (al == 0 && be == 0) return CF_OK;
  k_block_gather<<<blocks_for(g->nnzb), kThreads, 0, g->s>>>(g->nnzb, g->npe, g->blk_src_ptr, g->blk_src, g->KR, g->Mblk,
                                                             al, be, g->A);
  CU_LAUNCHED(k_block_gather);
  k_spmv<<<blocks_for(g->nnode), kThreads, 0, g->s>>>(g->nnode, g->row_ptr, g->col, g->A, y, out);
  CU_LAUNCHED(k_spmv);
  *cy = out;
  return CF_OK;
}

/* M a = F(t) + m g - f_el(x) - C v by PCG on A = M (block Jacobi), a = 0 on held DOFs; ga_f0 =
 * f_el(x). The PCG solves into g->v: v is kept in ga_v0 meanwhile. */
int ga_initial_acceleration(GpuNewton* c) {
  cfCuda* g = c->g;
  const cfModel* m = c->m;
  const int uf = ga_use_fixed(g);
  TRY(enqueue_polar(g));
  TRY(enqueue_elastic(g));
  TRY(dcopy(g, g->ga_f0, g->f_el));
  const double* cv = NULL;
  TRY(ga_damping(g, m, g->v, g->z, &cv));
  const double* gr = m->def.gravity;
  k_ga_acc_rhs<<<blocks_for(g->nnode), kThreads, 0, g->s>>>(g->nnode, g->node_mass, g->fixed, uf, gr[0], gr[1],
                                                            gr[2], g->f_ext_prev, g->f_el, cv, g->b);
  CU_LAUNCHED(k_ga_acc_rhs);
  k_set_bscale<<<1, 1, 0, g->s>>>(g->st, 0.0);
  CU_LAUNCHED(k_set_bscale);
  k_block_gather<<<blocks_for(g->nnzb), kThreads, 0, g->s>>>(g->nnzb, g->npe, g->blk_src_ptr, g->blk_src, g->KR, g->Mblk,
                                                             1.0, 0.0, g->A);
  CU_LAUNCHED(k_block_gather);
  k_jacobi<<<blocks_for(g->nnode), kThreads, 0, g->s>>>(g->nnode, g->diag, g->A, g->fixed, g->supports_active,
                                                        g->Pinv);
  CU_LAUNCHED(k_jacobi);
  TRY(dcopy(g, g->ga_v0, g->v));
  CU(cudaMemsetAsync(g->v, 0, (size_t)g->ndof * sizeof(double), g->s));
  /* block Jacobi for the mass, with or without AMG (the CPU's initial_acceleration, fem_newton.c, sets its
   * precond aside): the hierarchy is of the Newton matrix */
  const int amg = g->amg_on;
  g->amg_on = 0;
  int st = run_pcg(g, m);
  g->amg_on = amg;
  if (st < 0) return st;
  st = record_pcg(g, m, c->d);
  TRY(dcopy(g, g->acc, g->v));
  TRY(dcopy(g, g->v, g->ga_v0));
  k_ga_zero_held<<<blocks_for(g->ndof), kThreads, 0, g->s>>>(g->ndof, g->fixed, uf, g->acc, g->acc);
  CU_LAUNCHED(k_ga_zero_held);
  TRY(sync_stream(g->s, "generalized-alpha initial acceleration"));
  return st;
}

int gpu_step_begin(void* ctx) {
  GpuNewton* c = (GpuNewton*)ctx;
  cfCuda* g = c->g;
  k_ga_zero_held<<<blocks_for(g->ndof), kThreads, 0, g->s>>>(g->ndof, g->fixed, ga_use_fixed(g), g->v, g->acc);
  CU_LAUNCHED(k_ga_zero_held);
  if (!g->ga_ready) {
    double t0 = cf_wall_time();
    int st = ga_initial_acceleration(c);
    c->d->timer[CF_STAGE_ASSEMBLE] += cf_wall_time() - t0;
    if (st < 0) return st;
    g->ga_ready = 1;
  }
  /* the step's start: x, v (in v_prev, as the CPU), a */
  TRY(dcopy(g, g->ga_x_step, g->x));
  TRY(dcopy(g, g->v_prev, g->v));
  TRY(dcopy(g, g->ga_a_step, g->acc));
  return CF_OK;
}

int gpu_step_restore(void* ctx) {
  GpuNewton* c = (GpuNewton*)ctx;
  cfCuda* g = c->g;
  TRY(dcopy(g, g->x, g->ga_x_step));
  TRY(dcopy(g, g->v, g->v_prev));
  TRY(dcopy(g, g->acc, g->ga_a_step));
  TRY(enqueue_polar(g));
  TRY(enqueue_elastic(g));
  TRY(dcopy(g, g->ga_f0, g->f_el));
  return sync_stream(g->s, "generalized-alpha: the step's start restored");
}

int gpu_sub_begin(void* ctx, double th0, double th1) {
  cfCuda* g = ((GpuNewton*)ctx)->g;
  k_ga_loads<<<blocks_for(g->ndof), kThreads, 0, g->s>>>(g->ndof, g->f_ext_prev, g->f_ext, th0, th1, g->ga_F0,
                                                         g->ga_F1);
  CU_LAUNCHED(k_ga_loads);
  TRY(dcopy(g, g->ga_x0, g->x));
  TRY(dcopy(g, g->ga_v0, g->v));
  TRY(dcopy(g, g->ga_a0, g->acc));
  return CF_OK;
}

int gpu_sub_accept(void* ctx) {
  cfCuda* g = ((GpuNewton*)ctx)->g;
  return dcopy(g, g->ga_f0, g->f_el); /* f_el(x0) of the next (sub)step */
}

int gpu_sub_restore(void* ctx) {
  cfCuda* g = ((GpuNewton*)ctx)->g;
  TRY(dcopy(g, g->x, g->ga_x0));
  TRY(dcopy(g, g->v, g->ga_v0));
  TRY(dcopy(g, g->acc, g->ga_a0));
  return CF_OK;
}

int gpu_predict(void* ctx, double h) {
  cfCuda* g = ((GpuNewton*)ctx)->g;
  k_ga_predict<<<blocks_for(g->ndof), kThreads, 0, g->s>>>(g->ndof, g->fixed, ga_use_fixed(g), h, g->ga_x0,
                                                           g->ga_v0, g->ga_a0, g->x);
  CU_LAUNCHED(k_ga_predict);
  return CF_OK;
}

/* a_m in q, v_f in p, C v_f in z (PCG scratch, free between solves) */
int gpu_residual(void* ctx, const double* par, double h, double* out) {
  GpuNewton* c = (GpuNewton*)ctx;
  cfCuda* g = c->g;
  const cfModel* m = c->m;
  const int uf = ga_use_fixed(g);
  double t0 = cf_wall_time();
  k_ga_kinematics<<<blocks_for(g->ndof), kThreads, 0, g->s>>>(g->ndof, g->fixed, uf, h, par[0], par[1], par[2],
                                                              par[3], g->x, g->ga_x0, g->ga_v0, g->ga_a0, g->acc,
                                                              g->v, g->q, g->p);
  CU_LAUNCHED(k_ga_kinematics);
  TRY(enqueue_polar(g));
  TRY(enqueue_elastic(g));
  const double* cvf = NULL;
  TRY(ga_damping(g, m, g->p, g->z, &cvf));
  const double* gr = m->def.gravity;
  k_ga_residual<<<g->npart, kThreads, 0, g->s>>>(g->nnode, g->row_ptr, g->col, g->Mblk, g->node_mass, g->fixed, uf,
                                                 par[1], gr[0], gr[1], gr[2], g->q, cvf, g->f_el, g->ga_f0, g->ga_F0,
                                                 g->ga_F1, g->x, g->ga_x0, g->ga_r, g->part_warm, g->npart);
  CU_LAUNCHED(k_ga_residual);
  k_ga_finish<<<1, kThreads, 0, g->s>>>(g->st, g->part_warm, g->npart, 6);
  CU_LAUNCHED(k_ga_finish);
  CU(cudaMemcpyAsync(g->st_host, g->st, sizeof(DevState), cudaMemcpyDeviceToHost, g->s));
  g->bus_d2h += sizeof(DevState);
  TRY(sync_stream(g->s, "generalized-alpha residual"));
  for (int k = 0; k < 6; k++) out[k] = g->st_host->ga_out[k];
  c->d->ninverted = g->st_host->ninverted;
  c->d->timer[CF_STAGE_ASSEMBLE] += cf_wall_time() - t0;
  return CF_OK;
}

/* A du = -s r with A = cm M + ck K_R; the PCG solves into g->v (v is formed anew from x by the
 * next residual), started from du1 or the last du and scaled by the warm start; x += du */
int gpu_solve(void* ctx, double cm, double ck, double s, double b_scale, int first, double* dx2, int* pcg_iters) {
  GpuNewton* c = (GpuNewton*)ctx;
  cfCuda* g = c->g;
  const cfModel* m = c->m;
  double t0 = cf_wall_time();
  *pcg_iters = 0;
  k_block_gather<<<blocks_for(g->nnzb), kThreads, 0, g->s>>>(g->nnzb, g->npe, g->blk_src_ptr, g->blk_src, g->KR, g->Mblk,
                                                             cm, ck, g->A);
  CU_LAUNCHED(k_block_gather);
  /* its preconditioner: block Jacobi of A, or AMG's node rotations of the current R (the CPU's
   * cf_precond_update; the hierarchy, uploaded at create, is of cf_system_coefficients' Newton
   * matrix at rest, as the CPU's) */
  TRY(enqueue_precond_setup(g, g->amg_on));
  k_ga_rhs<<<blocks_for(g->ndof), kThreads, 0, g->s>>>(g->ndof, s, g->ga_r, g->b);
  CU_LAUNCHED(k_ga_rhs);
  k_set_bscale<<<1, 1, 0, g->s>>>(g->st, b_scale);
  CU_LAUNCHED(k_set_bscale);
  if (first) TRY(dcopy(g, g->ga_du, g->ga_du1));
  TRY(dcopy(g, g->v, g->ga_du));
  if (m->def.warm_start) {
    /* no second vector: the guess is only scaled */
    CU(cudaMemsetAsync(g->p, 0, (size_t)g->ndof * sizeof(double), g->s));
    TRY(enqueue_warm_start(g, m->def.pcg_tol));
  }
  TRY(run_pcg(g, m));
  int st = record_pcg(g, m, c->d);
  *pcg_iters = c->d->pcg_iters;
  if (st < 0) {
    c->d->timer[CF_STAGE_PCG] += cf_wall_time() - t0;
    return st;
  }
  TRY(dcopy(g, g->ga_du, g->v));
  if (first) TRY(dcopy(g, g->ga_du1, g->ga_du));
  k_ga_add<<<g->npart, kThreads, 0, g->s>>>(g->nnode, g->fixed, ga_use_fixed(g), g->ga_du, g->x, g->part_warm);
  CU_LAUNCHED(k_ga_add);
  k_ga_finish<<<1, kThreads, 0, g->s>>>(g->st, g->part_warm, g->npart, 1);
  CU_LAUNCHED(k_ga_finish);
  CU(cudaMemcpyAsync(g->st_host, g->st, sizeof(DevState), cudaMemcpyDeviceToHost, g->s));
  g->bus_d2h += sizeof(DevState);
  TRY(sync_stream(g->s, "generalized-alpha Newton update"));
  *dx2 = g->st_host->ga_out[0];
  c->d->timer[CF_STAGE_PCG] += cf_wall_time() - t0;
  return st;
}

/* ---- divergence monitor (fem_divergence.c decides; here only the figures) ------------------------
 * After a step: k_mon_nodes (per node: the first non-finite DOF, the mass-weighted sums of x,
 * v^T M v by cf_node_kinetic2, the work increment dx . ((Fa + Fb)/2 + m g) over the free DOFs),
 * k_mon_dev (per node |(x_i - c) - (X_i - C)|^2, the block's largest and its node), on every
 * 8th step k_mon_strain (cf_elem_strain_energy_fast per element); each followed by a one-block
 * fixed-order sum. One MonDev (7 doubles, 2 ints: 64 bytes) comes back per step; 16 bytes more (x and v
 * of the DOF) when a DOF is not finite. */
__global__ void k_mon_reset(MonDev* md) {
  md->bad = 0x7fffffff;
  md->dev2 = 0;
  md->dev_node = 0;
  md->strain = 0;
}

/* dx = h v (Euler: x1 = x0 + h v1) or x - x0 (generalized-alpha), as fem_step.c's calls of
 * cf_divergence_add_work; kind MON_WORK_NONE: no work */
__global__ void __launch_bounds__(kThreads)
    k_mon_nodes(int nnode, const int* row_ptr, const int* col, const double* Mblk, const double* node_mass,
                const unsigned char* fixed, int use_fixed, const double* x, const double* v, const double* x0,
                int kind, double h, const double* Fa, const double* Fb, double g0, double g1, double g2,
                double* part, int np, MonDev* md) {
  __shared__ double sh[kThreads];
  const int n = blockIdx.x * kThreads + threadIdx.x;
  double s[MON_NSUM] = {0, 0, 0, 0, 0};
  if (n < nnode) {
    const double g[3] = {g0, g1, g2};
    for (int k = 0; k < 3; k++) {
      const int i = 3 * n + k;
      if (!isfinite(x[i]) || !isfinite(v[i])) atomicMin(&md->bad, i);
      s[k] = node_mass[n] * x[i];
      if (kind != MON_WORK_NONE && !(use_fixed && fixed[i])) {
        const double dx = kind == MON_WORK_EULER ? h * v[i] : 1.0 * x[i] + -1.0 * x0[i];
        s[4] += dx * (0.5 * (Fa[i] + Fb[i]) + node_mass[n] * g[k]);
      }
    }
    s[3] = cf_node_kinetic2(n, row_ptr, col, Mblk, v);
  }
  for (int k = 0; k < MON_NSUM; k++) {
    const double t = block_sum(s[k], sh);
    if (threadIdx.x == 0) part[k * np + blockIdx.x] = t;
    __syncthreads(); /* sh is reused by the next sum */
  }
}

__global__ void k_mon_sums(const double* part, int np, MonDev* md) {
  __shared__ double sh[kThreads];
  for (int k = 0; k < MON_NSUM; k++) {
    const double t = ordered_sum(part + k * np, np, sh);
    if (threadIdx.x == 0) md->sum[k] = t;
    __syncthreads();
  }
}

/* the larger of (s, i) and (sh[j], shi[j]); the lower node on a tie (the CPU's first maximum) */
__device__ void argmax_block(double s, int i, double* sh, int* shi) {
  sh[threadIdx.x] = s;
  shi[threadIdx.x] = i;
  __syncthreads();
  for (int w = kThreads / 2; w > 0; w >>= 1) {
    if ((int)threadIdx.x < w) {
      const double o = sh[threadIdx.x + w];
      const int oi = shi[threadIdx.x + w];
      if (o > sh[threadIdx.x] || (o == sh[threadIdx.x] && oi < shi[threadIdx.x])) {
        sh[threadIdx.x] = o;
        shi[threadIdx.x] = oi;
      }
    }
    __syncthreads();
  }
}

/* c = sum m x / mass from k_mon_sums; C / mass from the host (rest state: as the CPU computes it) */
__global__ void __launch_bounds__(kThreads)
    k_mon_dev(int nnode, const double* x, const double* X, double mass, double C0, double C1, double C2,
              const MonDev* md, double* part, int np) {
  __shared__ double sh[kThreads];
  __shared__ int shi[kThreads];
  const int n = blockIdx.x * kThreads + threadIdx.x;
  double s = -1;
  if (n < nnode) {
    const double C[3] = {C0, C1, C2};
    s = 0;
    for (int k = 0; k < 3; k++) {
      const double u = (x[3 * n + k] - md->sum[k] / mass) - (X[3 * n + k] - C[k] / mass);
      s += u * u;
    }
  }
  argmax_block(s, n, sh, shi);
  if (threadIdx.x == 0) {
    part[blockIdx.x] = sh[0];
    part[np + blockIdx.x] = (double)shi[0];
  }
}

__global__ void k_mon_dev_finish(const double* part, int np, MonDev* md) {
  __shared__ double sh[kThreads];
  __shared__ int shi[kThreads];
  double best = -1;
  int at = 0x7fffffff;
  for (int j = threadIdx.x; j < np; j += kThreads)
    if (part[j] > best) best = part[j], at = (int)part[np + j]; /* blocks in node order: first wins */
  argmax_block(best, at, sh, shi);
  if (threadIdx.x == 0) {
    md->dev2 = sh[0];
    md->dev_node = shi[0];
  }
}

__global__ void __launch_bounds__(kThreads)
    k_mon_strain(int ntet, const double* x, const int* tet, const double* Dm_inv, const double* R,
                 const double* vol, double lam, double mu, double* part) {
  __shared__ double sh[kThreads];
  const int e = blockIdx.x * kThreads + threadIdx.x;
  const double s = e < ntet ? cf_elem_strain_energy_fast(x, tet, Dm_inv, R, vol[e], lam, mu, e) : 0.0;
  const double t = block_sum(s, sh);
  if (threadIdx.x == 0) part[blockIdx.x] = t;
}

/* the quadratic element's strain energy, as fem_divergence.c's cf_strain_energy_fast: per
 * quadrature point with its rotations, else 1/2 u^T K_e u in the element's frame */
__global__ void __launch_bounds__(kThreads)
    k_mon_strain10(int ntet, const double* x, const int* tet, const double* Gq, const double* Wq, const double* Rq,
                   const double* R, const double* Ke, const double* X, double lam, double mu, double* part) {
  __shared__ double sh[kThreads];
  const int e = blockIdx.x * kThreads + threadIdx.x;
  double s = 0.0;
  if (e < ntet)
    s = Gq ? cf_tet10_strain_energy_qp(e, tet, Gq, Wq, lam, mu, Rq, x)
           : cf_elem_strain_energy_n(R + 9 * (size_t)e, tet + 10 * (size_t)e, 10, Ke + 900 * (size_t)e, X, x);
  const double t = block_sum(s, sh);
  if (threadIdx.x == 0) part[blockIdx.x] = t;
}

__global__ void k_mon_strain_finish(const double* part, int np, MonDev* md) {
  __shared__ double sh[kThreads];
  const double t = ordered_sum(part, np, sh);
  if (threadIdx.x == 0) md->strain = t;
}

/* The figures of the device state into st (cfMonitorStats, as cf_divergence_stats) and the work
 * increment into *work; full: the strain energy too. Blocking. */
int mon_stats(cfCuda* g, const cfModel* m, int kind, double h, int full, cfMonitorStats* st, double* work) {
  const int np = g->npart, npe = blocks_for(g->ntet);
  const int uf = g->supports_active && g->nfixed > 0;
  const double* x0 = kind == MON_WORK_GA ? g->ga_x_step : g->mon_x0;
  const double* Fa = kind == MON_WORK_GA ? g->f_ext_prev : g->f_ext;
  const double* gr = m->def.gravity;
  double mass = 0, C[3] = {0, 0, 0}; /* the CPU's order */
  for (int n = 0; n < m->nnode; n++) {
    for (int k = 0; k < 3; k++) C[k] += m->node_mass[n] * m->X[3 * n + k];
    mass += m->node_mass[n];
  }
  k_mon_reset<<<1, 1, 0, g->s>>>(g->mon_dev);
  CU_LAUNCHED(k_mon_reset);
  k_mon_nodes<<<np, kThreads, 0, g->s>>>(g->nnode, g->row_ptr, g->col, g->Mblk, g->node_mass, g->fixed, uf, g->x,
                                         g->v, x0, kind, h, Fa, g->f_ext, gr[0], gr[1], gr[2], g->mon_part, np,
                                         g->mon_dev);
  CU_LAUNCHED(k_mon_nodes);
  k_mon_sums<<<1, kThreads, 0, g->s>>>(g->mon_part, np, g->mon_dev);
  CU_LAUNCHED(k_mon_sums);
  k_mon_dev<<<np, kThreads, 0, g->s>>>(g->nnode, g->x, g->X, mass, C[0], C[1], C[2], g->mon_dev,
                                       g->mon_part + MON_NSUM * np, np);
  CU_LAUNCHED(k_mon_dev);
  k_mon_dev_finish<<<1, kThreads, 0, g->s>>>(g->mon_part + MON_NSUM * np, np, g->mon_dev);
  CU_LAUNCHED(k_mon_dev_finish);
  if (full) {
    if (g->npe == 10) {
      k_mon_strain10<<<npe, kThreads, 0, g->s>>>(g->ntet, g->x, g->tet, g->has_q ? g->Gq : NULL, g->Wq, g->Rq, g->R,
                                                 g->Ke, g->X, g->lam, g->mu, g->mon_part);
      CU_LAUNCHED(k_mon_strain10);
    } else {
      k_mon_strain<<<npe, kThreads, 0, g->s>>>(g->ntet, g->x, g->tet, g->Dm_inv, g->R, g->vol, g->lam, g->mu,
                                               g->mon_part);
      CU_LAUNCHED(k_mon_strain);
    }
    k_mon_strain_finish<<<1, kThreads, 0, g->s>>>(g->mon_part, npe, g->mon_dev);
    CU_LAUNCHED(k_mon_strain_finish);
  }
  MonDev md;
  CU(cudaMemcpyAsync(&md, g->mon_dev, sizeof md, cudaMemcpyDeviceToHost, g->s));
  g->bus_d2h += sizeof md;
  TRY(sync_stream(g->s, "divergence monitor"));
  memset(st, 0, sizeof *st);
  st->bad_dof = md.bad == 0x7fffffff ? -1 : md.bad;
  if (st->bad_dof >= 0) {
    CU(cudaMemcpy(&st->bad_x, g->x + st->bad_dof, sizeof(double), cudaMemcpyDeviceToHost));
    CU(cudaMemcpy(&st->bad_v, g->v + st->bad_dof, sizeof(double), cudaMemcpyDeviceToHost));
    g->bus_d2h += 2 * sizeof(double);
  }
  st->dev = sqrt(md.dev2);
  st->dev_node = md.dev_node;
  st->kinetic = 0.5 * md.sum[3];
  st->full = full;
  st->strain = full ? md.strain : 0.0;
  *work = md.sum[4];
  return CF_OK;
}

/* steps == 0: the run's reference energy, as cf_divergence_restart (the device's x, v, R) */
int mon_begin(cfCuda* g, const cfModel* m, cfData* d) {
  if (d->steps != 0) return CF_OK;
  cfMonitorStats st;
  double w;
  TRY(mon_stats(g, m, MON_WORK_NONE, 0.0, 1, &st, &w));
  cf_divergence_restart_energy(m, d, st.kinetic + st.strain);
  return CF_OK;
}

/* After a step (t already advanced): the decision of fem_divergence.c on the figures; on a
 * divergence the step's start back on the device (generalized-alpha: the Newton driver's own
 * restore; Euler: x from mon_x0, v = v_prev = v0, R of x0), t back, the monitor's message kept. */
int mon_decide(cfCuda* g, const cfModel* m, cfData* d, const cfMonitorStats* st, double w, void* ga_ctx) {
  const double work0 = d->mon_work;
  char warn[1024];
  snprintf(warn, sizeof warn, "%s", cf_last_error()); /* a PCG or step-cut warning, kept if all is well */
  cf_divergence_record_work(d, w);
  int dv = cf_divergence_decide(m, d, st);
  if (dv >= 0) {
    cf_error(CF_OK, "%s", warn);
    return CF_OK;
  }
  char msg[1024];
  snprintf(msg, sizeof msg, "%s", cf_last_error());
  d->t -= m->def.dt;
  d->mon_work = work0;
  int rs;
  if (ga_ctx) {
    rs = gpu_step_restore(ga_ctx);
  } else {
    rs = [&]() -> int {
      TRY(dcopy(g, g->x, g->mon_x0));
      TRY(dcopy(g, g->v, g->v_prev));
      TRY(enqueue_polar(g));
      return sync_stream(g->s, "divergence monitor: the step's start restored");
    }();
  }
  if (rs < 0) return cf_error(dv, "%s (and the state could not be restored: %s)", msg, cf_last_error());
  return cf_error(dv, "%s", msg);
}

/* one generalized-alpha step: the CPU's driver on the GPU's stages, then the end of the step as
 * the CPU's (fem_step.c): f_ext_prev = f_ext, t += h, the divergence monitor */
int ga_step(cfCuda* g, const cfModel* m, cfData* d) {
  if (!g->ga)
    return cf_error(CF_ERR_ARG, "cf_cuda_step: generalized-alpha on a backend created for another integrator "
                                "(its arrays were not allocated); create it again");
  GpuNewton c = {g, m, d};
  const cfNewtonOps ops = {&c,         gpu_step_begin, gpu_step_restore, gpu_sub_begin, gpu_sub_accept,
                           gpu_sub_restore, gpu_predict, gpu_residual,   gpu_solve};
  int st = cf_newton_step(m, d, &ops);
  if (st < 0) return st;
  char msg[1024];
  snprintf(msg, sizeof msg, "%s", cf_last_error()); /* a step-cut warning */
  /* divergence monitor: the figures before f_ext_prev moves on (the work's F at the start) */
  cfMonitorStats ms;
  double mw = 0;
  if (m->def.divergence_check) TRY(mon_stats(g, m, MON_WORK_GA, m->def.dt, cf_divergence_full_step(d), &ms, &mw));
  TRY(dcopy(g, g->f_ext_prev, g->f_ext));
  TRY(sync_stream(g->s, "generalized-alpha step"));
  cf_error(st, "%s", msg);
  d->t += m->def.dt;
  if (m->def.divergence_check) TRY(mon_decide(g, m, d, &ms, mw, &c));
  return cf_step_finish(d, st);
}

}  // namespace

/* ---- public API ----------------------------------------------------------------------------- */

extern "C" {

cfCudaOptions cf_cuda_default_options(void) {
  cfCudaOptions o;
  memset(&o, 0, sizeof o);
  o.device = 0;
  o.spmv = CF_CUDA_SPMV_OWN;
  o.check_every = 8;
  o.use_graphs = 1;
  o.amg_float = 0;
  return o;
}

int cf_cuda_available(char* why, int n) {
  return cf_cuda_device_available(0, why, n);
}

int cf_cuda_device_available(int device, char* why, int n) {
  return probe_device(device, why, n);
}

int cf_cuda_create(const cfModel* m, const cfData* d, cfCuda** out) {
  cfCudaOptions o = cf_cuda_default_options();
  return cf_cuda_create_ex(m, d, &o, out);
}

int cf_cuda_create_ex(const cfModel* m, const cfData* d, const cfCudaOptions* opt, cfCuda** out) {
  if (!out) return cf_error(CF_ERR_ARG, "cf_cuda_create: NULL output");
  *out = NULL;
  if (!m || !d) return cf_error(CF_ERR_ARG, "cf_cuda_create: NULL model or data");
  TRY(cf_cuda_check_model(m)); /* before any device call: the same refusal without a GPU */
  cfCudaOptions o = opt ? *opt : cf_cuda_default_options();
  if (o.spmv != CF_CUDA_SPMV_OWN && o.spmv != CF_CUDA_SPMV_CUSPARSE && o.spmv != CF_CUDA_SPMV_WARP)
    return cf_error(CF_ERR_ARG, "cf_cuda_create: unknown SpMV kind %d", o.spmv);
  if (o.amg_float != 0 && o.amg_float != 1)
    return cf_error(CF_ERR_ARG, "cf_cuda_create: amg_float = %d must be 0 or 1", o.amg_float);
  if (o.kernel_timers != 0 && o.kernel_timers != 1)
    return cf_error(CF_ERR_ARG, "cf_cuda_create: kernel_timers = %d must be 0 or 1", o.kernel_timers);
  if (o.step_graph != 0 && o.step_graph != 1)
    return cf_error(CF_ERR_ARG, "cf_cuda_create: step_graph = %d must be 0 or 1", o.step_graph);
  if (o.step_graph && (!o.use_graphs || o.spmv == CF_CUDA_SPMV_CUSPARSE))
    return cf_error(CF_ERR_ARG, "cf_cuda_create: step_graph needs use_graphs and an own SpMV (a library SpMV cannot "
                    "read the device's done flag inside the graph's loop)");
  if (o.check_every < 1 || o.check_every > 1024)
    return cf_error(CF_ERR_ARG, "cf_cuda_create: check_every = %d must lie in [1, 1024]",
                    o.check_every);
  char why[256];
  if (!probe_device(o.device, why, sizeof why))
    return cf_error(CF_ERR_CUDA, "cf_cuda_create: device %d not usable: %s", o.device, why);
  cudaDeviceProp prop;
  CU(cudaGetDeviceProperties(&prop, o.device));

  cfCuda* g = (cfCuda*)calloc(1, sizeof(cfCuda));
  if (!g) return cf_error(CF_ERR_NOMEM, "cf_cuda_create: out of host memory");
  g->nnode = m->nnode;
  g->ntet = m->ntet;
  g->npe = m->npe;
  g->has_q = m->npe == 10 && m->Gq != NULL;
  g->ndof = m->ndof;
  g->nnzb = m->nnzb;
  g->nfixed = m->nfixed;
  g->device = o.device;
  g->opt = o;
  g->supports_active = d->supports_active;
  g->ga = m->def.integrator == CF_INTEGRATOR_GENERALIZED_ALPHA;
  g->amg_on = m->def.preconditioner == CF_PRECOND_AMG;
  const cfAmg* amg_sup = g->amg_on ? cf_precond_amg(d, 1) : NULL;
  const cfAmg* amg_free = g->amg_on ? cf_precond_amg(d, 0) : NULL;
  if (g->amg_on && !amg_free) {
    free(g);
    return cf_error(CF_ERR_ARG, "cf_cuda_create: the model asks for AMG and the data has no hierarchy (cf_data_create "
                    "builds it)");
  }
  const cfAmg* amg_both[2] = {amg_sup, amg_free};
  for (const cfAmg* a : amg_both) /* before the byte count: a stalled coarsening's dense level */
    if (a && cf_cuda_amg_check(a) < 0) {
      char msg[1024];
      snprintf(msg, sizeof msg, "%s", cf_last_error());
      free(g);
      return cf_error(CF_ERR_UNSUPPORTED, "cf_cuda_create: %s (the hierarchy %s)", msg,
                      a == amg_sup ? "with the supports" : "of the free body");
    }
  if (amg_sup) g->amg_bytes += cf_cuda_amg_bytes(amg_sup, o.amg_float);
  if (amg_free) g->amg_bytes += cf_cuda_amg_bytes(amg_free, o.amg_float);
  g->npart = blocks_for(m->nnode);
  cf_lame(m->def.E, m->def.nu, &g->lam, &g->mu);
  snprintf(g->name, sizeof g->name, "%.200s (sm_%d%d)", prop.name, prop.major, prop.minor);

  size_t free_b = 0, total_b = 0;
  const size_t need = device_bytes(g);
  cudaError_t me = cudaMemGetInfo(&free_b, &total_b);
  if (me != cudaSuccess) {
    free(g);
    return cf_cuda_fail(me, "cudaMemGetInfo", __FILE__, __LINE__);
  }
  if (need > free_b) {
    free(g);
    return cf_error(CF_ERR_CUDA,
                    "cf_cuda_create: %d nodes, %d elements need %.2f GB of device "
                    "memory, %.2f GB free on %s",
                    m->nnode, m->ntet, need / 1e9, free_b / 1e9, prop.name);
  }

  int st = [&]() -> int {
    CU(cudaStreamCreateWithFlags(&g->s, cudaStreamNonBlocking));
    CU(cudaStreamCreateWithFlags(&g->copy, cudaStreamNonBlocking));
    for (int i = 0; i < 5; i++) CU(cudaEventCreate(&g->ev[i]));
    for (int i = 0; g->opt.kernel_timers && i <= CF_CUDA_KT_COUNT; i++) CU(cudaEventCreate(&g->kev[i]));
    CU(cudaEventCreateWithFlags(&g->ev_snap, cudaEventDisableTiming));
    CU(cudaEventCreateWithFlags(&g->ev_copied, cudaEventDisableTiming));
    CUSP(cusparseCreate(&g->sp));
    CUSP(cusparseSetStream(g->sp, g->s));
    CU(cudaMallocHost((void**)&g->st_host, sizeof(DevState)));
    memset(g->st_host, 0, sizeof(DevState));

    TRY(each_array(g, [](void** p, size_t bytes) -> int {
      *p = NULL;
      CU(cudaMalloc(p, bytes));
      return 0;
    }));
    g->node_R_ok = g->amg_on; /* else node_R is the table's 1-byte placeholder */
    /* the cuSPARSE descriptors and buffer now, so that no device allocation is left for later */
    TRY(sparse_setup(g));

    const size_t nn = (size_t)m->nnode, ne = (size_t)m->ntet, nb = (size_t)m->nnzb, nd = 3 * nn;
    TRY(upload_array(g, g->X, m->X, nd));
    TRY(upload_array(g, g->Dm_inv, m->Dm_inv, 9 * ne));
    TRY(upload_array(g, g->vol, m->vol, ne));
    TRY(upload_array(g, g->node_mass, m->node_mass, nn));
    TRY(upload_array(g, g->Mblk, m->Mblk, nb));
    const size_t pe = (size_t)m->npe, nk = 3 * pe;
    TRY(upload_array(g, g->tet, m->tet, pe * ne));
    TRY(upload_array(g, g->row_ptr, m->row_ptr, nn + 1));
    TRY(upload_array(g, g->col, m->col, nb));
    TRY(upload_array(g, g->diag, m->diag, nn));
    TRY(upload_array(g, g->blk_src_ptr, m->blk_src_ptr, nb + 1));
    TRY(upload_array(g, g->blk_src, m->blk_src, pe * pe * ne));
    TRY(upload_array(g, g->node_src_ptr, m->node_src_ptr, nn + 1));
    TRY(upload_array(g, g->node_src, m->node_src, pe * ne));
    TRY(upload_array(g, g->fixed, m->fixed, nd));
    if (g->npe == 10) { /* the quadratic element's data (each_array sized them) */
      TRY(upload_array(g, g->Gc, m->Gc, 30 * ne));
      if (g->has_q) {
        TRY(upload_array(g, g->Gq, m->Gq, 120 * ne));
        TRY(upload_array(g, g->Wq, m->Wq, 4 * ne));
        CU(cudaMemsetAsync(g->Rq, 0, 36 * ne * sizeof(double), g->s));
      } else {
        TRY(upload_array(g, g->Ke, m->Ke, 900 * ne));
      }
    }
    /* scratch starts defined (a stage run alone may read it) */
    CU(cudaMemsetAsync(g->KR, 0, nk * nk * ne * sizeof(double), g->s));
    CU(cudaMemsetAsync(g->fe, 0, nk * ne * sizeof(double), g->s));
    CU(cudaMemsetAsync(g->f_el, 0, nd * sizeof(double), g->s));
    CU(cudaMemsetAsync(g->A, 0, 9 * nb * sizeof(double), g->s));
    CU(cudaMemsetAsync(g->b, 0, nd * sizeof(double), g->s));
    CU(cudaMemsetAsync(g->Pinv, 0, 9 * nn * sizeof(double), g->s));
    CU(cudaMemsetAsync(g->r, 0, nd * sizeof(double), g->s));
    CU(cudaMemsetAsync(g->z, 0, nd * sizeof(double), g->s));
    CU(cudaMemsetAsync(g->p, 0, nd * sizeof(double), g->s));
    CU(cudaMemsetAsync(g->q, 0, nd * sizeof(double), g->s));
    CU(cudaMemsetAsync(g->st, 0, sizeof(DevState), g->s));
    CU(cudaMemsetAsync(g->f_ext_prev, 0, nd * sizeof(double), g->s));
    if (g->ga) {
      double* ga_arrays[] = {g->acc, g->ga_x0, g->ga_v0, g->ga_a0, g->ga_f0, g->ga_F0,
                             g->ga_F1, g->ga_du, g->ga_du1, g->ga_r, g->ga_a_step, g->ga_x_step};
      for (double* a : ga_arrays) CU(cudaMemsetAsync(a, 0, nd * sizeof(double), g->s));
    }
    if (g->amg_on) { /* the hierarchies, level 0 on the model's pattern just uploaded */
      if (amg_sup) TRY(cf_cuda_amg_create(amg_sup, o.amg_float, g->row_ptr, g->col, g->s, &g->amg_sup));
      TRY(cf_cuda_amg_create(amg_free, o.amg_float, g->row_ptr, g->col, g->s, &g->amg_free));
      /* CF_CUDA_SPMV_WARP: level 0's products a warp per row too */
      cf_cuda_amg_set_warp_spmv(g->amg_sup, o.spmv == CF_CUDA_SPMV_WARP);
      cf_cuda_amg_set_warp_spmv(g->amg_free, o.spmv == CF_CUDA_SPMV_WARP);
    }
    TRY(sync_stream(g->s, "model upload"));
    return cf_cuda_upload(g, d, CF_CUDA_STATE | CF_CUDA_F_EXT); /* with the node rotations */
  }();
  if (st < 0) {
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", cf_last_error());
    cf_cuda_free(g);
    return cf_error(st, "%s", msg);
  }
  *out = g;
  return CF_OK;
}

void cf_cuda_free(cfCuda* g) {
  if (!g) return;
  /* errors are ignored here: after a device fault every call fails, and freeing must go on */
  cudaSetDevice(g->device);
  if (g->s) cudaStreamSynchronize(g->s);
  if (g->copy) cudaStreamSynchronize(g->copy);
  if (g->graph) cudaGraphExecDestroy(g->graph);
  if (g->step_exec) cudaGraphExecDestroy(g->step_exec);
  if (g->body_s) cudaStreamDestroy(g->body_s);
  if (g->spA) cusparseDestroySpMat(g->spA);
  if (g->spx) cusparseDestroyDnVec(g->spx);
  if (g->spy) cusparseDestroyDnVec(g->spy);
  if (g->sp) cusparseDestroy(g->sp);
  cf_cuda_amg_free(g->amg_sup);
  cf_cuda_amg_free(g->amg_free);
  /* the resident vectors' arrays (node_R, even when ensure_node_R replaced it, is the table's) */
  void* vec_arrays[] = {g->vec, g->vnodes, g->vbuf, g->vlast, g->red, g->red4, g->red16};
  for (void* a : vec_arrays)
    if (a) cudaFree(a);
  each_array(g, [](void** p, size_t) {
    if (*p) cudaFree(*p);
    *p = NULL;
    return 0;
  });
  if (g->sp_buf) cudaFree(g->sp_buf);
  void* pinned[] = {g->st_host, g->pin_x, g->pin_v, g->pin_R, g->pin_f_el, g->pin_Rq};
  for (size_t i = 0; i < sizeof pinned / sizeof pinned[0]; i++)
    if (pinned[i]) cudaFreeHost(pinned[i]);
  for (int i = 0; i < 5; i++)
    if (g->ev[i]) cudaEventDestroy(g->ev[i]);
  for (int i = 0; i <= CF_CUDA_KT_COUNT; i++)
    if (g->kev[i]) cudaEventDestroy(g->kev[i]);
  if (g->ev_snap) cudaEventDestroy(g->ev_snap);
  if (g->ev_copied) cudaEventDestroy(g->ev_copied);
  if (g->s) cudaStreamDestroy(g->s);
  if (g->copy) cudaStreamDestroy(g->copy);
  free(g);
}

int cf_cuda_monitor_stats(cfCuda* g, const cfModel* m, int full, cfMonitorStats* st, double* work) {
  TRY(check_model(g, m));
  if (!st || !work) return cf_error(CF_ERR_ARG, "cf_cuda_monitor_stats: NULL output");
  CU(cudaSetDevice(g->device));
  return mon_stats(g, m, MON_WORK_EULER, m->def.dt, full, st, work);
}

const char* cf_cuda_device_name(const cfCuda* g) {
  return g ? g->name : "none";
}

int cf_cuda_set_forces(cfCuda* g, const double* f_ext) {
  if (!g || !f_ext) return cf_error(CF_ERR_ARG, "cf_cuda_set_forces: NULL argument");
  CU(cudaSetDevice(g->device));
  TRY(upload_array(g, g->f_ext, f_ext, (size_t)g->ndof));
  /* the host array may be reused as soon as we return */
  return sync_stream(g->s, "cf_cuda_set_forces");
}

int cf_cuda_set_supports(cfCuda* g, int active) {
  if (!g) return cf_error(CF_ERR_ARG, "cf_cuda_set_supports: NULL backend");
  g->supports_active = active ? 1 : 0;
  return CF_OK;
}

int cf_cuda_sync(cfCuda* g) {
  if (!g) return cf_error(CF_ERR_ARG, "cf_cuda_sync: NULL backend");
  CU(cudaSetDevice(g->device));
  TRY(sync_stream(g->s, "cf_cuda_sync (compute stream)"));
  return sync_stream(g->copy, "cf_cuda_sync (copy stream)");
}

int cf_cuda_bus_bytes(const cfCuda* g, unsigned long long* h2d, unsigned long long* d2h) {
  if (!g) return cf_error(CF_ERR_ARG, "cf_cuda_bus_bytes: no backend");
  if (h2d) *h2d = g->bus_h2d;
  if (d2h) *d2h = g->bus_d2h;
  return CF_OK;
}

int cf_cuda_kernel_times(const cfCuda* g, double* ms, long* steps) {
  if (!g || !ms) return cf_error(CF_ERR_ARG, "cf_cuda_kernel_times: NULL argument");
  if (!g->opt.kernel_timers)
    return cf_error(CF_ERR_ARG, "cf_cuda_kernel_times: the backend was created without cfCudaOptions.kernel_timers");
  for (int k = 0; k < CF_CUDA_KT_COUNT; k++) ms[k] = g->kt_ms[k];
  if (steps) *steps = g->kt_steps;
  return CF_OK;
}

int cf_cuda_upload(cfCuda* g, const cfData* d, int what) {
  if (!g || !d) return cf_error(CF_ERR_ARG, "cf_cuda_upload: NULL argument");
  if (what & ~CF_CUDA_ALL)
    return cf_error(CF_ERR_ARG, "cf_cuda_upload: unknown field bits 0x%x", what);
  if ((what & CF_CUDA_ACC) && d->a && !g->ga)
    return cf_error(CF_ERR_ARG, "cf_cuda_upload: accelerations for a backend created for another integrator");
  CU(cudaSetDevice(g->device));
  for (int bit = 1; bit <= CF_CUDA_ALL; bit <<= 1) {
    if (!(what & bit)) continue;
    size_t n = 0;
    /* the table takes a non-const cfData; nothing is written through it here */
    const double* h = cf_cuda_field((cfData*)d, g->nnode, g->ntet, g->npe, g->nnzb, bit, &n);
    TRY(upload_array(g, dev_field(g, bit), h, n));
  }
  if (what & CF_CUDA_B) TRY(upload_array(g, &g->st->b_scale, &d->b_scale, 1));
  /* the node rotations of the AMG preconditioner travel with the element rotations */
  if (g->amg_on && (what & CF_CUDA_R)) TRY(upload_array(g, g->node_R, d->node_R, 9 * (size_t)g->nnode));
  /* ... and the quadrature points' rotations (quadratic elements) */
  if (g->has_q && (what & CF_CUDA_R) && d->Rq) TRY(upload_array(g, g->Rq, d->Rq, 36 * (size_t)g->ntet));
  /* generalized-alpha: a and f_el(x) travel with their flag; a new x or v without them makes
   * the next step form them anew (as cf_data_reset does on the CPU) */
  if (g->ga && (what & CF_CUDA_ACC) && d->a) {
    TRY(upload_array(g, g->ga_f0, d->ga_f0, (size_t)g->ndof));
    g->ga_ready = d->ga_ready;
  } else if (what & (CF_CUDA_X | CF_CUDA_V | CF_CUDA_ACC)) {
    g->ga_ready = 0;
  }
  if (g->ga && !g->ga_ready) { /* a new start: the last step's first increment goes too, as in
                                  cf_data_reset (the Newton warm start of the next step) */
    CU(cudaMemsetAsync(g->ga_du1, 0, (size_t)g->ndof * sizeof(double), g->s));
    CU(cudaMemsetAsync(g->ga_du, 0, (size_t)g->ndof * sizeof(double), g->s));
  }
  return sync_stream(g->s, "cf_cuda_upload");
}

int cf_cuda_download(cfCuda* g, cfData* d, int what) {
  if (!g || !d) return cf_error(CF_ERR_ARG, "cf_cuda_download: NULL argument");
  if (what & ~CF_CUDA_ALL)
    return cf_error(CF_ERR_ARG, "cf_cuda_download: unknown field bits 0x%x", what);
  CU(cudaSetDevice(g->device));
  double t0 = cf_wall_time();
  for (int bit = 1; bit <= CF_CUDA_ALL; bit <<= 1) {
    if (!(what & bit)) continue;
    size_t n = 0;
    double* h = cf_cuda_field(d, g->nnode, g->ntet, g->npe, g->nnzb, bit, &n);
    if (bit == CF_CUDA_ACC && !g->ga) n = 0; /* none on the device */
    TRY(download_array(g, h, dev_field(g, bit), n));
  }
  if (what & CF_CUDA_B) TRY(download_array(g, &d->b_scale, &g->st->b_scale, 1));
  if (g->amg_on && (what & CF_CUDA_R)) TRY(download_array(g, d->node_R, g->node_R, 9 * (size_t)g->nnode));
  if (g->has_q && (what & CF_CUDA_R) && d->Rq) TRY(download_array(g, d->Rq, g->Rq, 36 * (size_t)g->ntet));
  if (g->ga && (what & CF_CUDA_ACC) && d->a) {
    TRY(download_array(g, d->ga_f0, g->ga_f0, (size_t)g->ndof));
    d->ga_ready = g->ga_ready;
  }
  TRY(sync_stream(g->s, "cf_cuda_download"));
  d->timer[CF_STAGE_TRANSFER] += cf_wall_time() - t0; /* counted here only (not by cf_sim_fetch) */
  return CF_OK;
}

int cf_cuda_download_async(cfCuda* g, int what) {
  if (!g) return cf_error(CF_ERR_ARG, "cf_cuda_download_async: NULL backend");
  const int allowed = CF_CUDA_X | CF_CUDA_V | CF_CUDA_R | CF_CUDA_F_EL;
  if (what & ~allowed)
    return cf_error(CF_ERR_ARG, "cf_cuda_download_async: only X, V, R and F_EL (got 0x%x)", what);
  if (!what) return CF_OK;
  CU(cudaSetDevice(g->device));
  TRY(ensure_async_buffers(g));
  const size_t nd = (size_t)g->ndof * sizeof(double), nr = 9 * (size_t)g->ntet * sizeof(double);
  /* the snapshot may be overwritten only once the previous copy has read it */
  CU(cudaStreamWaitEvent(g->s, g->ev_copied, 0));
  if (what & CF_CUDA_X) CU(cudaMemcpyAsync(g->snap_x, g->x, nd, cudaMemcpyDeviceToDevice, g->s));
  if (what & CF_CUDA_V) CU(cudaMemcpyAsync(g->snap_v, g->v, nd, cudaMemcpyDeviceToDevice, g->s));
  if (what & CF_CUDA_R) CU(cudaMemcpyAsync(g->snap_R, g->R, nr, cudaMemcpyDeviceToDevice, g->s));
  if ((what & CF_CUDA_R) && g->has_q) CU(cudaMemcpyAsync(g->snap_Rq, g->Rq, 4 * nr, cudaMemcpyDeviceToDevice, g->s));
  if (what & CF_CUDA_F_EL)
    CU(cudaMemcpyAsync(g->snap_f_el, g->f_el, nd, cudaMemcpyDeviceToDevice, g->s));
  CU(cudaEventRecord(g->ev_snap, g->s));
  CU(cudaStreamWaitEvent(g->copy, g->ev_snap, 0));
  if (what & CF_CUDA_X)
    {
      CU(cudaMemcpyAsync(g->pin_x, g->snap_x, nd, cudaMemcpyDeviceToHost, g->copy));
      g->bus_d2h += nd;
    }
  if (what & CF_CUDA_V)
    {
      CU(cudaMemcpyAsync(g->pin_v, g->snap_v, nd, cudaMemcpyDeviceToHost, g->copy));
      g->bus_d2h += nd;
    }
  if (what & CF_CUDA_R)
    {
      CU(cudaMemcpyAsync(g->pin_R, g->snap_R, nr, cudaMemcpyDeviceToHost, g->copy));
      g->bus_d2h += nr;
    }
  if ((what & CF_CUDA_R) && g->has_q)
    {
      CU(cudaMemcpyAsync(g->pin_Rq, g->snap_Rq, 4 * nr, cudaMemcpyDeviceToHost, g->copy));
      g->bus_d2h += 4 * nr;
    }
  if (what & CF_CUDA_F_EL)
    {
      CU(cudaMemcpyAsync(g->pin_f_el, g->snap_f_el, nd, cudaMemcpyDeviceToHost, g->copy));
      g->bus_d2h += nd;
    }
  CU(cudaEventRecord(g->ev_copied, g->copy));
  g->pending |= what;
  return CF_OK;
}

int cf_cuda_download_wait(cfCuda* g, cfData* d) {
  if (!g || !d) return cf_error(CF_ERR_ARG, "cf_cuda_download_wait: NULL argument");
  if (!g->pending) return CF_OK;
  CU(cudaSetDevice(g->device));
  double t0 = cf_wall_time();
  cudaError_t e = cudaEventSynchronize(g->ev_copied);
  if (e != cudaSuccess)
    return cf_error(CF_ERR_CUDA, "cudaEventSynchronize (asynchronous download): %s (%s)",
                    cudaGetErrorString(e), cudaGetErrorName(e));
  const size_t nd = (size_t)g->ndof * sizeof(double), nr = 9 * (size_t)g->ntet * sizeof(double);
  if (g->pending & CF_CUDA_X) memcpy(d->x, g->pin_x, nd);
  if (g->pending & CF_CUDA_V) memcpy(d->v, g->pin_v, nd);
  if (g->pending & CF_CUDA_R) memcpy(d->R, g->pin_R, nr);
  if ((g->pending & CF_CUDA_R) && g->has_q && d->Rq) memcpy(d->Rq, g->pin_Rq, 4 * nr);
  if (g->pending & CF_CUDA_F_EL) memcpy(d->f_el, g->pin_f_el, nd);
  g->pending = 0;
  d->timer[CF_STAGE_TRANSFER] += cf_wall_time() - t0;
  return CF_OK;
}

int cf_cuda_stage_polar(cfCuda* g, const cfModel* m, cfData* d) {
  TRY(check_model(g, m));
  CU(cudaSetDevice(g->device));
  TRY(enqueue_polar(g));
  CU(cudaMemcpyAsync(g->st_host, g->st, sizeof(DevState), cudaMemcpyDeviceToHost, g->s));
  g->bus_d2h += sizeof(DevState);
  TRY(sync_stream(g->s, "k_polar"));
  if (d) d->ninverted = g->st_host->ninverted;
  return CF_OK;
}

int cf_cuda_stage_elastic(cfCuda* g, const cfModel* m) {
  TRY(check_model(g, m));
  CU(cudaSetDevice(g->device));
  TRY(enqueue_elastic(g));
  return sync_stream(g->s, "k_rotate / k_node_gather");
}

int cf_cuda_stage_assemble_system(cfCuda* g, const cfModel* m, double h) {
  TRY(check_model(g, m));
  CU(cudaSetDevice(g->device));
  TRY(enqueue_assemble(g, m, h));
  return sync_stream(g->s, "k_block_gather / k_rhs / k_jacobi");
}

int cf_cuda_stage_pcg(cfCuda* g, const cfModel* m, cfData* d) {
  TRY(check_model(g, m));
  if (!d) return cf_error(CF_ERR_ARG, "cf_cuda_stage_pcg: NULL data");
  CU(cudaSetDevice(g->device));
  TRY(run_pcg(g, m));
  return record_pcg(g, m, d);
}

int cf_cuda_stage_warm_start(cfCuda* g, const cfModel* m, double* c) {
  TRY(check_model(g, m));
  CU(cudaSetDevice(g->device));
  /* as cf_cuda_step: p = v_prev is the second vector */
  CU(cudaMemcpyAsync(g->p, g->v_prev, (size_t)g->ndof * sizeof(double), cudaMemcpyDeviceToDevice,
                     g->s));
  TRY(enqueue_warm_start(g, m->def.pcg_tol));
  CU(cudaMemcpyAsync(g->st_host, g->st, sizeof(DevState), cudaMemcpyDeviceToHost, g->s));
  g->bus_d2h += sizeof(DevState);
  TRY(sync_stream(g->s, "k_warm_*"));
  if (c) {
    c[0] = g->st_host->wc0;
    c[1] = g->st_host->wc1;
  }
  return CF_OK;
}

int cf_cuda_stage_update(cfCuda* g, const cfModel* m, double h) {
  TRY(check_model(g, m));
  CU(cudaSetDevice(g->device));
  TRY(enqueue_update(g, h));
  return sync_stream(g->s, "k_update_x");
}

int cf_cuda_system(cfCuda* g, const cfModel* m, double cm, double ck, double eps) {
  TRY(check_model(g, m));
  CU(cudaSetDevice(g->device));
  k_block_gather<<<blocks_for(g->nnzb), kThreads, 0, g->s>>>(g->nnzb, g->npe, g->blk_src_ptr, g->blk_src, g->KR, g->Mblk,
                                                             cm, ck, g->A);
  CU_LAUNCHED(k_block_gather);
  if (eps != 0) {
    k_add_diag<<<blocks_for(g->nnode), kThreads, 0, g->s>>>(g->nnode, g->diag, eps, g->A);
    CU_LAUNCHED(k_add_diag);
  }
  /* AMG (its hierarchy, uploaded at create, is of the Newton matrix): the node rotations of the
   * device's R, as enqueue_assemble; a mass-only A (ck = 0, the projections): block Jacobi */
  g->sys_jacobi = !(g->amg_on && ck > 0);
  TRY(enqueue_precond_setup(g, !g->sys_jacobi));
  return sync_stream(g->s, "cf_cuda_system");
}

/* the PCGs of cf_cuda_solve; with sys_jacobi the AMG is off for them (run_pcg and the graph
 * follow amg_on; the graph is recaptured when it changes) */
static int solve_columns(cfCuda* g, const cfModel* m, cfData* d, int nrhs, const double* const* b, double* const* x,
                         int warm) {
  const size_t nd = (size_t)g->ndof;
  for (int c = 0; c < nrhs; c++) {
    if (!b[c] || !x[c]) return cf_error(CF_ERR_ARG, "cf_cuda_solve: NULL column %d", c);
    TRY(upload_array(g, g->b, b[c], nd));
    k_set_bscale<<<1, 1, 0, g->s>>>(g->st, 0.0); /* the tolerance relative to |b| */
    CU_LAUNCHED(k_set_bscale);
    if (warm)
      TRY(upload_array(g, g->v, x[c], nd)); /* the start; run_pcg zeroes it without def.warm_start */
    else
      CU(cudaMemsetAsync(g->v, 0, nd * sizeof(double), g->s));
    TRY(run_pcg(g, m));
    int st = record_pcg(g, m, d);
    TRY(download_array(g, x[c], g->v, nd));
    TRY(sync_stream(g->s, "cf_cuda_solve"));
    if (st != CF_OK) return st;
  }
  return CF_OK;
}

int cf_cuda_solve(cfCuda* g, const cfModel* m, cfData* d, int nrhs, const double* const* b, double* const* x,
                  int warm) {
  TRY(check_model(g, m));
  if (!d || nrhs < 0 || (nrhs > 0 && (!b || !x))) return cf_error(CF_ERR_ARG, "cf_cuda_solve: NULL argument");
  CU(cudaSetDevice(g->device));
  const int amg = g->amg_on;
  if (g->sys_jacobi) g->amg_on = 0;
  int st = solve_columns(g, m, d, nrhs, b, x, warm);
  g->amg_on = amg;
  return st;
}

int cf_cuda_apply_A(cfCuda* g, int spmv, const double* x, double* y) {
  if (!g || !x || !y) return cf_error(CF_ERR_ARG, "cf_cuda_apply_A: NULL argument");
  if (spmv != CF_CUDA_SPMV_OWN && spmv != CF_CUDA_SPMV_CUSPARSE && spmv != CF_CUDA_SPMV_WARP)
    return cf_error(CF_ERR_ARG, "cf_cuda_apply_A: unknown SpMV kind %d", spmv);
  CU(cudaSetDevice(g->device));
  const size_t nd = (size_t)g->ndof;
  /* p and q are PCG scratch: free between solves */
  TRY(upload_array(g, g->p, x, nd));
  if (spmv == CF_CUDA_SPMV_CUSPARSE) {
    TRY(sparse_spmv(g, g->p, g->q));
  } else if (spmv == CF_CUDA_SPMV_WARP) {
    k_spmv_warp<<<g->npart, kThreads, 0, g->s>>>(g->nnode, g->row_ptr, g->col, g->A, g->p, g->q);
    CU_LAUNCHED(k_spmv_warp);
  } else {
    k_spmv<<<blocks_for(g->nnode), kThreads, 0, g->s>>>(g->nnode, g->row_ptr, g->col, g->A, g->p,
                                                        g->q);
    CU_LAUNCHED(k_spmv);
  }
  TRY(download_array(g, y, g->q, nd));
  return sync_stream(g->s, "cf_cuda_apply_A");
}

int cf_cuda_apply_amg(cfCuda* g, const double* r, double* z) {
  if (!g || !r || !z) return cf_error(CF_ERR_ARG, "cf_cuda_apply_amg: NULL argument");
  if (!g->amg_on) return cf_error(CF_ERR_ARG, "cf_cuda_apply_amg: the backend was created without AMG");
  CU(cudaSetDevice(g->device));
  const size_t nd = (size_t)g->ndof;
  /* r and z are PCG scratch, free between solves; the V-cycle's kernels run while done is 0 */
  TRY(upload_array(g, g->r, r, nd));
  CU(cudaMemsetAsync(&g->st->done, 0, sizeof(int), g->s));
  TRY(enqueue_amg(g));
  TRY(download_array(g, z, g->z, nd));
  return sync_stream(g->s, "cf_cuda_apply_amg");
}

int cf_cuda_step(cfCuda* g, const cfModel* m, cfData* d) {
  TRY(check_model(g, m));
  if (!d) return cf_error(CF_ERR_ARG, "cf_cuda_step: NULL data");
  CU(cudaSetDevice(g->device));
  if (m->def.divergence_check) { /* the run's reference energy; Euler: x0 kept for a roll-back */
    TRY(mon_begin(g, m, d));
    if (m->def.integrator != CF_INTEGRATOR_GENERALIZED_ALPHA) TRY(dcopy(g, g->mon_x0, g->x));
  }
  if (m->def.integrator == CF_INTEGRATOR_GENERALIZED_ALPHA) return ga_step(g, m, d);
  const double h = m->def.dt;
  int saved = 0; /* v_prev holds v0: the state can be put back */
  const int step_graph = g->opt.step_graph;
  int st = step_graph ? [&]() -> int {
    TRY(capture_step(g, m)); /* on first use, and again when its parameters changed */
    CU(cudaGraphLaunch(g->step_exec, g->s));
    saved = 1; /* v_prev = v0 is the graph's second copy */
    g->bus_d2h += sizeof(DevState); /* its DevState copy */
    return sync_stream(g->s, "cf_cuda_step (the step graph)");
  }() : [&]() -> int {
    TRY(enqueue_step_front(g, m, &saved));
    TRY(run_pcg(g, m)); /* syncs at its check points; leaves the solve's DevState in st_host */
    if (g->st_host->status < 0) return CF_OK; /* the solve failed: no update (record_pcg says why) */
    TRY(enqueue_step_back(g, m));
    g->bus_d2h += sizeof(DevState);
    return sync_stream(g->s, "cf_cuda_step"); /* one sync ends the step */
  }();
  if (saved) d->ninverted = g->st_host->ninverted; /* read back with the PCG's scalars */
  if (st >= 0) st = record_pcg(g, m, d); /* CF_ERR_ARG for a non-finite right side */
  if (st < 0) {
    /* nothing is advanced, as in cf_step: v back to v0 (x was not updated) */
    if (saved) {
      char msg[1024];
      snprintf(msg, sizeof msg, "%s", cf_last_error());
      cudaError_t e = cudaMemcpyAsync(g->v, g->v_prev, (size_t)g->ndof * sizeof(double),
                                      cudaMemcpyDeviceToDevice, g->s);
      if (e == cudaSuccess) e = cudaStreamSynchronize(g->s);
      if (e != cudaSuccess)
        return cf_error(st, "%s (and the state could not be restored: %s)", msg,
                        cudaGetErrorString(e));
      cf_error(st, "%s", msg);
    }
    return st;
  }
  const int stages[4] = {CF_STAGE_POLAR, CF_STAGE_ASSEMBLE, CF_STAGE_PCG, CF_STAGE_UPDATE};
  for (int i = 0; i < 4; i++) {
    float ms = 0;
    CU(cudaEventElapsedTime(&ms, g->ev[i], g->ev[i + 1]));
    d->timer[stages[i]] += 1e-3 * (double)ms;
  }
  for (int k = 0; g->opt.kernel_timers && k < CF_CUDA_KT_COUNT; k++) {
    float ms = 0;
    CU(cudaEventElapsedTime(&ms, g->kev[k], g->kev[k + 1]));
    g->kt_ms[k] += (double)ms;
  }
  if (g->opt.kernel_timers) g->kt_steps++;
  d->ninverted = g->st_host->ninverted;
  if (m->def.divergence_check) { /* work dx = h v1, F = f_ext (cf_step's); decided at the step's end time */
    cfMonitorStats ms;
    double mw = 0;
    TRY(mon_stats(g, m, MON_WORK_EULER, h, cf_divergence_full_step(d), &ms, &mw));
    d->t += h;
    TRY(mon_decide(g, m, d, &ms, mw, NULL));
  } else {
    d->t += h;
  }
  return cf_step_finish(d, st);
}

}  // extern "C"

/* ---- resident vectors (a mechanism's linearly coupled FE body; mbs_fe.c) ----------------------
 * A mechanism's FE body in its own coordinates keeps its vectors (positions, modes, right sides,
 * solutions) on the device and moves only the interface nodes and a few scalars over the bus per
 * step (docs/cuda.md, "Why the mesh crosses"). The kernels below are the CPU's loops of the mock
 * (tests/cuda/mock/cuda_mock.c) entry by entry in the same order, so that the two agree to rounding
 * (bit for bit with COFEM_CUDA_FMAD=OFF). */

namespace {

/* the sources of k_vec_comb, by value: no upload of pointers or coefficients */
struct CombSrc {
  const double* x[CF_CUDA_COMB_MAX];
  double c[CF_CUDA_COMB_MAX];
};

/* y may be one of the sources: each thread reads its entry of every source before writing y[i] */
__global__ void __launch_bounds__(kThreads) k_vec_comb(int n, double* y, double beta, int nsrc, CombSrc s) {
  const size_t i = (size_t)blockIdx.x * kThreads + threadIdx.x;
  if (i >= (size_t)n) return;
  double t = beta != 0 ? beta * y[i] : 0.0; /* beta 0: y may hold NaN and is not read */
  for (int k = 0; k < nsrc; k++) t += s.c[k] * s.x[k][i];
  y[i] = t;
}

/* fmax over the block (NaN dropped, as fmax); the result valid in all threads */
__device__ double block_max(double v, double* sh) {
  sh[threadIdx.x] = v;
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s >>= 1) {
    if ((int)threadIdx.x < s) sh[threadIdx.x] = fmax(sh[threadIdx.x], sh[threadIdx.x + s]);
    __syncthreads();
  }
  return sh[0];
}

/* *out = fmax(*out, v) for v > 0 (*out >= +0, never NaN): positive doubles order as their bits, so
 * one integer atomic per block, and the maximum does not depend on the order */
__device__ void atomic_max_pos(double* out, double v) {
  if (v > 0) atomicMax((unsigned long long*)out, (unsigned long long)__double_as_longlong(v));
}

/* grid-stride, so that a capped grid covers any n */
__global__ void __launch_bounds__(kThreads) k_vec_maxabs(long n, const double* x, double* out) {
  __shared__ double sh[kThreads];
  double m = 0;
  for (long i = (long)blockIdx.x * kThreads + threadIdx.x; i < n; i += (long)gridDim.x * kThreads)
    m = fmax(m, fabs(x[i]));
  m = block_max(m, sh);
  if (threadIdx.x == 0) atomic_max_pos(out, m);
}

/* 3 - trace(R_e^T Q_n) over the (element, node) pairs i = npe e + a */
__global__ void __launch_bounds__(kThreads)
    k_rotation_spread(long n, int npe, const int* tet, const double* R, const double* Q, double* out) {
  __shared__ double sh[kThreads];
  double m = 0;
  for (long i = (long)blockIdx.x * kThreads + threadIdx.x; i < n; i += (long)gridDim.x * kThreads) {
    const double* Re = R + 9 * (size_t)(i / npe);
    const double* Qn = Q + 9 * (size_t)tet[i];
    double tr = 0;
    for (int k = 0; k < 9; k++) tr += Re[k] * Qn[k];
    m = fmax(m, 3 - tr);
  }
  m = block_max(m, sh);
  if (threadIdx.x == 0) atomic_max_pos(out, m);
}

/* y = M x over the block pattern, each row's blocks in order from 0 (the mock's loop) */
__global__ void __launch_bounds__(kThreads) k_vec_mass(int nnode, const int* row_ptr, const int* col,
                                                       const double* Mblk, const double* x, double* y) {
  const int n = blockIdx.x * kThreads + threadIdx.x;
  if (n >= nnode) return;
  double t0 = 0, t1 = 0, t2 = 0;
  for (int p = row_ptr[n]; p < row_ptr[n + 1]; p++) {
    const double mb = Mblk[p], *xc = x + 3 * (size_t)col[p];
    t0 += mb * xc[0];
    t1 += mb * xc[1];
    t2 += mb * xc[2];
  }
  y[3 * (size_t)n] = t0, y[3 * (size_t)n + 1] = t1, y[3 * (size_t)n + 2] = t2;
}

__global__ void __launch_bounds__(kThreads) k_vec_unfix(int ndof, const unsigned char* fixed, double* x) {
  const size_t i = (size_t)blockIdx.x * kThreads + threadIdx.x;
  if (i < (size_t)ndof && fixed[i]) x[i] = 0;
}

/* y_n = Q_n (c0 x0 + c1 x1 + c2 x2)_n, 0 at fixed DOFs; y is none of the x */
__global__ void __launch_bounds__(kThreads)
    k_vec_turn(int nnode, const double* Q, const unsigned char* fixed, const double* x0, const double* x1,
               const double* x2, double c0, double c1, double c2, double* y) {
  const int n = blockIdx.x * kThreads + threadIdx.x;
  if (n >= nnode) return;
  const size_t i = 3 * (size_t)n;
  const double* Qn = Q + 9 * (size_t)n;
  double u[3];
  for (int a = 0; a < 3; a++) u[a] = c0 * x0[i + a] + c1 * x1[i + a] + c2 * x2[i + a];
  for (int a = 0; a < 3; a++) {
    const double ya = Qn[3 * a] * u[0] + Qn[3 * a + 1] * u[1] + Qn[3 * a + 2] * u[2];
    y[i + a] = fixed[i + a] ? 0.0 : ya;
  }
}

__global__ void __launch_bounds__(kThreads) k_rot_identity(int nnode, double* Q) {
  const int n = blockIdx.x * kThreads + threadIdx.x;
  if (n >= nnode) return;
  for (int k = 0; k < 9; k++) Q[9 * (size_t)n + k] = k % 4 == 0 ? 1.0 : 0.0;
}

/* out[w k + j] = src[w nodes[k] + j], j < w */
__global__ void __launch_bounds__(kThreads)
    k_vec_gather(int nn, int w, const int* nodes, const double* src, double* out) {
  const int k = blockIdx.x * kThreads + threadIdx.x;
  if (k >= nn) return;
  for (int j = 0; j < w; j++) out[(size_t)w * k + j] = src[(size_t)w * nodes[k] + j];
}

/* last[n] = the largest k with nodes[k] = n (last: -1 before) */
__global__ void __launch_bounds__(kThreads) k_vec_last(int nn, const int* nodes, int* last) {
  const int k = blockIdx.x * kThreads + threadIdx.x;
  if (k < nn) atomicMax(last + nodes[k], k);
}

/* dst[w nodes[k] + j] = in[w k + j] for the last k of each node: one writer per entry */
__global__ void __launch_bounds__(kThreads)
    k_vec_scatter(int nn, int w, const int* nodes, const int* last, const double* in, double* dst) {
  const int k = blockIdx.x * kThreads + threadIdx.x;
  if (k >= nn || last[nodes[k]] != k) return;
  for (int j = 0; j < w; j++) dst[(size_t)w * nodes[k] + j] = in[(size_t)w * k + j];
}

/* cudaMalloc into *p only on success (the pointers are freed by cf_cuda_free when not NULL) */
template <class T>
int dev_alloc(T** p, size_t bytes) {
  void* q = NULL;
  CU(cudaMalloc(&q, bytes));
  *p = (T*)q;
  return CF_OK;
}

/* at most this many blocks for the reductions (grid-stride beyond) */
constexpr int kRedBlocks = 1024;

int red_blocks(long n) {
  const int b = blocks_for(n);
  return b < kRedBlocks ? b : kRedBlocks;
}

int vec_check(const cfCuda* g, int v, const char* fn) {
  if (!g) return cf_error(CF_ERR_ARG, "%s: NULL backend", fn);
  if (v < 0 || v >= g->nvec) return cf_error(CF_ERR_ARG, "%s: no vector %d (%d created)", fn, v, g->nvec);
  return CF_OK;
}

double* vec_at(const cfCuda* g, int v) { return g->vec + (size_t)v * (size_t)g->ndof; }

/* a node list: nn >= 0, the arrays there when nn > 0, every node a node of the model (the device
 * would read or write outside its arrays) */
int nodes_check(const cfCuda* g, int nn, const int* nodes, const void* vals, const char* fn) {
  if (!g) return cf_error(CF_ERR_ARG, "%s: NULL backend", fn);
  if (nn < 0) return cf_error(CF_ERR_ARG, "%s: %d nodes", fn, nn);
  if (nn > 0 && (!nodes || !vals)) return cf_error(CF_ERR_ARG, "%s: NULL node list or values", fn);
  for (int k = 0; k < nn; k++)
    if (nodes[k] < 0 || nodes[k] >= g->nnode)
      return cf_error(CF_ERR_ARG, "%s: node %d (entry %d) outside 0 .. %d", fn, nodes[k], k, g->nnode - 1);
  return CF_OK;
}

/* the node list up into vnodes (counted: a host -> device copy every call), its room grown first */
int put_nodes(cfCuda* g, int nn, const int* nodes) {
  if (nn > g->vcap) {
    TRY(sync_stream(g->s, "resident vectors (node list)")); /* the old buffers may be in use */
    if (g->vnodes) CU(cudaFree(g->vnodes));
    if (g->vbuf) CU(cudaFree(g->vbuf));
    g->vnodes = NULL, g->vbuf = NULL, g->vcap = 0;
    const int cap = nn > 64 ? nn : 64;
    TRY(dev_alloc(&g->vnodes, (size_t)cap * sizeof(int)));
    TRY(dev_alloc(&g->vbuf, 9 * (size_t)cap * sizeof(double)));
    g->vcap = cap;
  }
  return upload_array(g, g->vnodes, nodes, (size_t)nn);
}

/* dst[w nodes[k] + j] = in[w k + j] (nodes in vnodes by put_nodes); a node listed twice takes its
 * last values, as the CPU's loop */
int scatter_nodes(cfCuda* g, int nn, int w, const double* in, double* dst) {
  if (nn == 0) return CF_OK;
  if (!g->vlast) TRY(dev_alloc(&g->vlast, (size_t)g->nnode * sizeof(int)));
  TRY(upload_array(g, g->vbuf, in, (size_t)w * nn));
  CU(cudaMemsetAsync(g->vlast, 0xff, (size_t)g->nnode * sizeof(int), g->s)); /* -1 */
  k_vec_last<<<blocks_for(nn), kThreads, 0, g->s>>>(nn, g->vnodes, g->vlast);
  CU_LAUNCHED(k_vec_last);
  k_vec_scatter<<<blocks_for(nn), kThreads, 0, g->s>>>(nn, w, g->vnodes, g->vlast, g->vbuf, dst);
  CU_LAUNCHED(k_vec_scatter);
  return CF_OK;
}

/* out[w k + j] = src[w nodes[k] + j], down to the host */
int gather_nodes(cfCuda* g, int nn, int w, const double* src, double* out) {
  if (nn == 0) return CF_OK;
  k_vec_gather<<<blocks_for(nn), kThreads, 0, g->s>>>(nn, w, g->vnodes, src, g->vbuf);
  CU_LAUNCHED(k_vec_gather);
  return download_array(g, out, g->vbuf, (size_t)w * nn);
}

/* node_R with 9 nnode doubles: without AMG the table left a placeholder; the rotations start as
 * identities (as cf_data_reset's) */
int ensure_node_R(cfCuda* g) {
  if (g->node_R_ok) return CF_OK;
  TRY(sync_stream(g->s, "node rotations"));
  if (g->node_R) CU(cudaFree(g->node_R));
  g->node_R = NULL;
  TRY(dev_alloc(&g->node_R, 9 * (size_t)g->nnode * sizeof(double)));
  k_rot_identity<<<blocks_for(g->nnode), kThreads, 0, g->s>>>(g->nnode, g->node_R);
  CU_LAUNCHED(k_rot_identity);
  g->node_R_ok = 1;
  return CF_OK;
}

/* the reductions' one double, zeroed (+0: the start of fmax) */
int red_reset(cfCuda* g) {
  if (!g->red) TRY(dev_alloc(&g->red, sizeof(double)));
  CU(cudaMemsetAsync(g->red, 0, sizeof(double), g->s));
  return CF_OK;
}

/* vector x[c] = A^-1 vector b[c] (the AMG switch is the caller's, as solve_columns) */
int vec_solve_columns(cfCuda* g, const cfModel* m, cfData* d, int nrhs, const int* b, const int* x,
                      const double* b_scale, int warm, int v1) {
  const size_t bytes = (size_t)g->ndof * sizeof(double);
  for (int c = 0; c < nrhs; c++) {
    CU(cudaMemcpyAsync(g->b, vec_at(g, b[c]), bytes, cudaMemcpyDeviceToDevice, g->s));
    const double scale = b_scale && b_scale[c] > 0 ? b_scale[c] : 0.0; /* 0: relative to |b| */
    k_set_bscale<<<1, 1, 0, g->s>>>(g->st, scale);
    CU_LAUNCHED(k_set_bscale);
    if (warm) /* run_pcg zeroes the start without def.warm_start */
      CU(cudaMemcpyAsync(g->v, vec_at(g, x[c]), bytes, cudaMemcpyDeviceToDevice, g->s));
    else
      CU(cudaMemsetAsync(g->v, 0, bytes, g->s));
    if (v1 >= 0) { /* the best combination of the two starts (cf_cuda_step's: p is the second) */
      CU(cudaMemcpyAsync(g->p, vec_at(g, v1), bytes, cudaMemcpyDeviceToDevice, g->s));
      TRY(enqueue_warm_start(g, m->def.pcg_tol));
    }
    TRY(run_pcg(g, m));
    int st = record_pcg(g, m, d);
    CU(cudaMemcpyAsync(vec_at(g, x[c]), g->v, bytes, cudaMemcpyDeviceToDevice, g->s));
    TRY(sync_stream(g->s, "cf_cuda_vec_solve"));
    if (st != CF_OK) return st;
  }
  return CF_OK;
}

}  // namespace

extern "C" {

int cf_cuda_vec_create(cfCuda* g, int nvec) {
  if (!g) return cf_error(CF_ERR_ARG, "cf_cuda_vec_create: NULL backend");
  if (nvec < 0) return cf_error(CF_ERR_ARG, "cf_cuda_vec_create: %d vectors", nvec);
  CU(cudaSetDevice(g->device));
  TRY(sync_stream(g->s, "cf_cuda_vec_create")); /* the old vectors may be in use */
  if (g->vec) CU(cudaFree(g->vec));
  g->vec = NULL, g->nvec = 0;
  if (nvec == 0) return CF_OK;
  const size_t bytes = (size_t)nvec * (size_t)g->ndof * sizeof(double);
  TRY(dev_alloc(&g->vec, bytes));
  CU(cudaMemsetAsync(g->vec, 0, bytes, g->s));
  g->nvec = nvec;
  return sync_stream(g->s, "cf_cuda_vec_create");
}

int cf_cuda_vec_set(cfCuda* g, int v, const double* x) {
  TRY(vec_check(g, v, "cf_cuda_vec_set"));
  if (!x) return cf_error(CF_ERR_ARG, "cf_cuda_vec_set: NULL array");
  CU(cudaSetDevice(g->device));
  TRY(upload_array(g, vec_at(g, v), x, (size_t)g->ndof));
  return CF_OK; /* queued: the next call that returns values waits for it */
}

int cf_cuda_vec_get(cfCuda* g, int v, double* x) {
  TRY(vec_check(g, v, "cf_cuda_vec_get"));
  if (!x) return cf_error(CF_ERR_ARG, "cf_cuda_vec_get: NULL array");
  CU(cudaSetDevice(g->device));
  TRY(download_array(g, x, vec_at(g, v), (size_t)g->ndof));
  return sync_stream(g->s, "cf_cuda_vec_get");
}

int cf_cuda_vec_get_nodes(cfCuda* g, int v, int nn, const int* nodes, double* out) {
  TRY(vec_check(g, v, "cf_cuda_vec_get_nodes"));
  TRY(nodes_check(g, nn, nodes, out, "cf_cuda_vec_get_nodes"));
  if (nn == 0) return CF_OK;
  CU(cudaSetDevice(g->device));
  TRY(put_nodes(g, nn, nodes));
  TRY(gather_nodes(g, nn, 3, vec_at(g, v), out));
  return sync_stream(g->s, "cf_cuda_vec_get_nodes");
}

int cf_cuda_vec_set_nodes(cfCuda* g, int v, int nn, const int* nodes, const double* in) {
  TRY(vec_check(g, v, "cf_cuda_vec_set_nodes"));
  TRY(nodes_check(g, nn, nodes, in, "cf_cuda_vec_set_nodes"));
  if (nn == 0) return CF_OK;
  CU(cudaSetDevice(g->device));
  TRY(put_nodes(g, nn, nodes));
  TRY(scatter_nodes(g, nn, 3, in, vec_at(g, v)));
  return CF_OK; /* queued: the next call that returns values waits for it */
}

int cf_cuda_vec_comb(cfCuda* g, int y, double beta, int nsrc, const int* src, const double* c) {
  TRY(vec_check(g, y, "cf_cuda_vec_comb"));
  if (nsrc < 0 || nsrc > CF_CUDA_COMB_MAX)
    return cf_error(CF_ERR_ARG, "cf_cuda_vec_comb: %d sources (0 .. %d)", nsrc, (int)CF_CUDA_COMB_MAX);
  if (nsrc > 0 && (!src || !c)) return cf_error(CF_ERR_ARG, "cf_cuda_vec_comb: NULL sources or coefficients");
  CombSrc s;
  memset(&s, 0, sizeof s);
  for (int k = 0; k < nsrc; k++) {
    TRY(vec_check(g, src[k], "cf_cuda_vec_comb"));
    s.x[k] = vec_at(g, src[k]);
    s.c[k] = c[k];
  }
  CU(cudaSetDevice(g->device));
  k_vec_comb<<<blocks_for(g->ndof), kThreads, 0, g->s>>>(g->ndof, vec_at(g, y), beta, nsrc, s);
  CU_LAUNCHED(k_vec_comb);
  return CF_OK; /* queued: the next call that returns values waits for it */
}

int cf_cuda_vec_maxabs(cfCuda* g, int v, double* out) {
  TRY(vec_check(g, v, "cf_cuda_vec_maxabs"));
  if (!out) return cf_error(CF_ERR_ARG, "cf_cuda_vec_maxabs: NULL output");
  CU(cudaSetDevice(g->device));
  TRY(red_reset(g));
  if (g->ndof > 0) {
    k_vec_maxabs<<<red_blocks(g->ndof), kThreads, 0, g->s>>>(g->ndof, vec_at(g, v), g->red);
    CU_LAUNCHED(k_vec_maxabs);
  }
  TRY(download_array(g, out, g->red, 1));
  return sync_stream(g->s, "cf_cuda_vec_maxabs");
}

/* the nodes' sum (three block sums added atomically: the order, and so the last bits, vary) */
__global__ void __launch_bounds__(kThreads) k_vec_node_sum(int nnode, const double* x, double* sum) {
  __shared__ double sh[3][kThreads];
  double t[3] = {0, 0, 0};
  for (int n = blockIdx.x * kThreads + threadIdx.x; n < nnode; n += gridDim.x * kThreads)
    for (int k = 0; k < 3; k++) t[k] += x[3 * (size_t)n + k];
  for (int k = 0; k < 3; k++) sh[k][threadIdx.x] = t[k];
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s >>= 1) {
    if ((int)threadIdx.x < s)
      for (int k = 0; k < 3; k++) sh[k][threadIdx.x] += sh[k][threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0)
    for (int k = 0; k < 3; k++) atomicAdd(sum + k, sh[k][0]);
}

/* out[3] = max_n |x_n - c|^2, c = sum / nnode (a NaN: +inf) */
__global__ void __launch_bounds__(kThreads) k_vec_radius2(int nnode, const double* x, double* red) {
  __shared__ double sh[kThreads];
  const double c[3] = {red[0] / nnode, red[1] / nnode, red[2] / nnode};
  double m = 0;
  for (int n = blockIdx.x * kThreads + threadIdx.x; n < nnode; n += gridDim.x * kThreads) {
    double s = 0;
    for (int k = 0; k < 3; k++) s += (x[3 * (size_t)n + k] - c[k]) * (x[3 * (size_t)n + k] - c[k]);
    m = fmax(m, isnan(s) ? INFINITY : s);
  }
  m = block_max(m, sh);
  if (threadIdx.x == 0) atomic_max_pos(red + 3, m);
}

/* sum a_i b_i: block sums added atomically (the order, and so the last bits, vary) */
__global__ void __launch_bounds__(kThreads) k_vec_dot(long n, const double* a, const double* b, double* out) {
  __shared__ double sh[kThreads];
  double t = 0;
  for (long i = (long)blockIdx.x * kThreads + threadIdx.x; i < n; i += (long)gridDim.x * kThreads) t += a[i] * b[i];
  sh[threadIdx.x] = t;
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s >>= 1) {
    if ((int)threadIdx.x < s) sh[threadIdx.x] += sh[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(out, sh[0]);
}

int cf_cuda_vec_dot(cfCuda* g, int a, int b, double* out) {
  TRY(vec_check(g, a, "cf_cuda_vec_dot"));
  TRY(vec_check(g, b, "cf_cuda_vec_dot"));
  if (!out) return cf_error(CF_ERR_ARG, "cf_cuda_vec_dot: NULL output");
  CU(cudaSetDevice(g->device));
  TRY(red_reset(g));
  if (g->ndof > 0) {
    k_vec_dot<<<red_blocks(g->ndof), kThreads, 0, g->s>>>(g->ndof, vec_at(g, a), vec_at(g, b), g->red);
    CU_LAUNCHED(k_vec_dot);
  }
  TRY(download_array(g, out, g->red, 1));
  return sync_stream(g->s, "cf_cuda_vec_dot");
}

int cf_cuda_vec_radius(cfCuda* g, int v, double* out) {
  TRY(vec_check(g, v, "cf_cuda_vec_radius"));
  if (!out) return cf_error(CF_ERR_ARG, "cf_cuda_vec_radius: NULL output");
  CU(cudaSetDevice(g->device));
  if (!g->red4) TRY(dev_alloc(&g->red4, 4 * sizeof(double)));
  CU(cudaMemsetAsync(g->red4, 0, 4 * sizeof(double), g->s));
  double r2 = 0;
  if (g->nnode > 0) {
    k_vec_node_sum<<<red_blocks(g->nnode), kThreads, 0, g->s>>>(g->nnode, vec_at(g, v), g->red4);
    CU_LAUNCHED(k_vec_node_sum);
    k_vec_radius2<<<red_blocks(g->nnode), kThreads, 0, g->s>>>(g->nnode, vec_at(g, v), g->red4);
    CU_LAUNCHED(k_vec_radius2);
    TRY(download_array(g, &r2, g->red4 + 3, 1));
  }
  TRY(sync_stream(g->s, "cf_cuda_vec_radius"));
  *out = sqrt(r2);
  return CF_OK;
}

int cf_cuda_vec_field(cfCuda* g, int v, int field, int to_field) {
  TRY(vec_check(g, v, "cf_cuda_vec_field"));
  if (field != CF_CUDA_X && field != CF_CUDA_F_EL)
    return cf_error(CF_ERR_ARG, "cf_cuda_vec_field: field 0x%x (CF_CUDA_X or CF_CUDA_F_EL)", field);
  CU(cudaSetDevice(g->device));
  double* f = field == CF_CUDA_X ? g->x : g->f_el;
  TRY(to_field ? dcopy(g, f, vec_at(g, v)) : dcopy(g, vec_at(g, v), f));
  return CF_OK; /* queued: the next call that returns values waits for it */
}

int cf_cuda_vec_mass(cfCuda* g, int x, int y) {
  TRY(vec_check(g, x, "cf_cuda_vec_mass"));
  TRY(vec_check(g, y, "cf_cuda_vec_mass"));
  if (x == y) return cf_error(CF_ERR_ARG, "cf_cuda_vec_mass: x and y are both vector %d", x);
  CU(cudaSetDevice(g->device));
  k_vec_mass<<<blocks_for(g->nnode), kThreads, 0, g->s>>>(g->nnode, g->row_ptr, g->col, g->Mblk, vec_at(g, x),
                                                         vec_at(g, y));
  CU_LAUNCHED(k_vec_mass);
  return CF_OK; /* queued: the next call that returns values waits for it */
}

int cf_cuda_vec_unfix(cfCuda* g, int v) {
  TRY(vec_check(g, v, "cf_cuda_vec_unfix"));
  CU(cudaSetDevice(g->device));
  if (g->nfixed > 0) {
    k_vec_unfix<<<blocks_for(g->ndof), kThreads, 0, g->s>>>(g->ndof, g->fixed, vec_at(g, v));
    CU_LAUNCHED(k_vec_unfix);
  }
  return CF_OK; /* queued: the next call that returns values waits for it */
}

int cf_cuda_vec_solve(cfCuda* g, const cfModel* m, cfData* d, int nrhs, const int* b, const int* x,
                      const double* b_scale, int warm, int v1) {
  TRY(check_model(g, m));
  if (!d || nrhs < 0 || (nrhs > 0 && (!b || !x))) return cf_error(CF_ERR_ARG, "cf_cuda_vec_solve: NULL argument");
  for (int c = 0; c < nrhs; c++) { /* all columns before the first solve */
    TRY(vec_check(g, b[c], "cf_cuda_vec_solve"));
    TRY(vec_check(g, x[c], "cf_cuda_vec_solve"));
  }
  CU(cudaSetDevice(g->device));
  const int amg = g->amg_on; /* as cf_cuda_solve: a mass-only A of cf_cuda_system solves without AMG */
  if (g->sys_jacobi) g->amg_on = 0;
  if (v1 >= 0) {
    TRY(vec_check(g, v1, "cf_cuda_vec_solve"));
    if (nrhs != 1 || !warm) return cf_error(CF_ERR_ARG, "cf_cuda_vec_solve: a second start vector takes one right side, warm");
  }
  int st = vec_solve_columns(g, m, d, nrhs, b, x, b_scale, warm, v1);
  g->amg_on = amg;
  return st;
}

int cf_cuda_node_rotations(cfCuda* g, int nn, const int* nodes, double* out) {
  TRY(nodes_check(g, nn, nodes, out, "cf_cuda_node_rotations"));
  CU(cudaSetDevice(g->device));
  TRY(ensure_node_R(g));
  k_node_rotation<<<blocks_for(g->nnode), kThreads, 0, g->s>>>(g->nnode, g->npe, g->node_src_ptr, g->node_src, g->R,
                                                               g->node_R, 1);
  CU_LAUNCHED(k_node_rotation);
  if (nn > 0) {
    TRY(put_nodes(g, nn, nodes));
    TRY(gather_nodes(g, nn, 9, g->node_R, out));
  }
  return sync_stream(g->s, "cf_cuda_node_rotations");
}

int cf_cuda_set_node_rotations(cfCuda* g, int nn, const int* nodes, const double* R) {
  TRY(nodes_check(g, nn, nodes, R, "cf_cuda_set_node_rotations"));
  CU(cudaSetDevice(g->device));
  TRY(ensure_node_R(g));
  if (nn > 0) {
    TRY(put_nodes(g, nn, nodes));
    TRY(scatter_nodes(g, nn, 9, R, g->node_R));
  }
  return CF_OK; /* queued: the next call that returns values waits for it */
}

int cf_cuda_rotation_spread(cfCuda* g, double* out) {
  if (!g || !out) return cf_error(CF_ERR_ARG, "cf_cuda_rotation_spread: NULL argument");
  CU(cudaSetDevice(g->device));
  TRY(ensure_node_R(g));
  TRY(red_reset(g));
  const long n = (long)g->ntet * g->npe;
  if (n > 0) {
    k_rotation_spread<<<red_blocks(n), kThreads, 0, g->s>>>(n, g->npe, g->tet, g->R, g->node_R, g->red);
    CU_LAUNCHED(k_rotation_spread);
  }
  TRY(download_array(g, out, g->red, 1));
  return sync_stream(g->s, "cf_cuda_rotation_spread");
}

int cf_cuda_vec_turn(cfCuda* g, int y, const int* src, const double* c) {
  TRY(vec_check(g, y, "cf_cuda_vec_turn"));
  if (!src || !c) return cf_error(CF_ERR_ARG, "cf_cuda_vec_turn: NULL sources or coefficients");
  for (int a = 0; a < 3; a++) {
    TRY(vec_check(g, src[a], "cf_cuda_vec_turn"));
    if (src[a] == y) return cf_error(CF_ERR_ARG, "cf_cuda_vec_turn: y (vector %d) is source %d", y, a);
  }
  CU(cudaSetDevice(g->device));
  TRY(ensure_node_R(g));
  k_vec_turn<<<blocks_for(g->nnode), kThreads, 0, g->s>>>(g->nnode, g->node_R, g->fixed, vec_at(g, src[0]),
                                                         vec_at(g, src[1]), vec_at(g, src[2]), c[0], c[1], c[2],
                                                         vec_at(g, y));
  CU_LAUNCHED(k_vec_turn);
  return CF_OK; /* queued: the next call that returns values waits for it */
}

/* ---- the linear coupling's predicted rotations (mbs_fe.c, linear_rotations on the device) ---- */

/* the rigid fit's 16 sums over the nodes (m, m x0, m x1, m x1 x0^T): block sums added atomically */
__global__ void __launch_bounds__(kThreads)
    k_rigid_sums(int nnode, const double* mass, const double* x0, const double* x1, double* out) {
  __shared__ double sh[kThreads];
  double t[16];
  for (int k = 0; k < 16; k++) t[k] = 0;
  for (int n = blockIdx.x * kThreads + threadIdx.x; n < nnode; n += gridDim.x * kThreads) {
    const double mn = mass[n], *a = x0 + 3 * (size_t)n, *b = x1 + 3 * (size_t)n;
    t[0] += mn;
    for (int i = 0; i < 3; i++) t[1 + i] += mn * a[i], t[4 + i] += mn * b[i];
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) t[7 + 3 * i + j] += mn * b[i] * a[j];
  }
  for (int k = 0; k < 16; k++) {
    sh[threadIdx.x] = t[k];
    __syncthreads();
    for (int s = kThreads / 2; s > 0; s >>= 1) {
      if ((int)threadIdx.x < s) sh[threadIdx.x] += sh[threadIdx.x + s];
      __syncthreads();
    }
    if (threadIdx.x == 0) atomicAdd(out + k, sh[0]);
    __syncthreads();
  }
}

__global__ void __launch_bounds__(kThreads)
    k_polar_step(int ntet, const int* tet, const double* Dm_inv, const double* x, double* R) {
  const int e = blockIdx.x * kThreads + threadIdx.x;
  if (e < ntet) cf_elem_polar_step(e, tet, Dm_inv, x, R);
}

struct Rot3 {
  double D[9];
};

/* Q_i = D Q_i for n 3x3 blocks */
__global__ void __launch_bounds__(kThreads) k_turn_blocks(int n, Rot3 d, double* Q) {
  const int i = blockIdx.x * kThreads + threadIdx.x;
  if (i >= n) return;
  double* q = Q + 9 * (size_t)i;
  double o[9];
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < 3; c++) o[3 * r + c] = d.D[3 * r] * q[c] + d.D[3 * r + 1] * q[3 + c] + d.D[3 * r + 2] * q[6 + c];
  for (int k = 0; k < 9; k++) q[k] = o[k];
}

__global__ void __launch_bounds__(kThreads)
    k_turn_beyond(int ntet, const int* tet, const double* Dm_inv, const double* x, const double* R, double* out) {
  __shared__ double sh[kThreads];
  double m = 0;
  for (int e = blockIdx.x * kThreads + threadIdx.x; e < ntet; e += gridDim.x * kThreads) {
    const double a = cf_elem_turn_beyond2(e, tet, Dm_inv, x, R);
    m = fmax(m, isnan(a) ? INFINITY : a);
  }
  m = block_max(m, sh);
  if (threadIdx.x == 0) atomic_max_pos(out, m);
}

int cf_cuda_vec_rigid_sums(cfCuda* g, int v0, int v1, double* out) {
  TRY(vec_check(g, v0, "cf_cuda_vec_rigid_sums"));
  TRY(vec_check(g, v1, "cf_cuda_vec_rigid_sums"));
  if (!out) return cf_error(CF_ERR_ARG, "cf_cuda_vec_rigid_sums: NULL output");
  CU(cudaSetDevice(g->device));
  if (!g->red16) TRY(dev_alloc(&g->red16, 16 * sizeof(double)));
  CU(cudaMemsetAsync(g->red16, 0, 16 * sizeof(double), g->s));
  if (g->nnode > 0) {
    k_rigid_sums<<<red_blocks(g->nnode), kThreads, 0, g->s>>>(g->nnode, g->node_mass, vec_at(g, v0), vec_at(g, v1),
                                                              g->red16);
    CU_LAUNCHED(k_rigid_sums);
  }
  TRY(download_array(g, out, g->red16, 16));
  return sync_stream(g->s, "cf_cuda_vec_rigid_sums");
}

int cf_cuda_polar_step(cfCuda* g, int v) {
  TRY(vec_check(g, v, "cf_cuda_polar_step"));
  if (g->npe != 4) return cf_error(CF_ERR_UNSUPPORTED, "cf_cuda_polar_step: linear tetrahedra only");
  CU(cudaSetDevice(g->device));
  k_polar_step<<<blocks_for(g->ntet), kThreads, 0, g->s>>>(g->ntet, g->tet, g->Dm_inv, vec_at(g, v), g->R);
  CU_LAUNCHED(k_polar_step);
  return CF_OK; /* queued: the next call that returns values waits for it */
}

int cf_cuda_turn_rotations(cfCuda* g, const double* D) {
  if (!g || !D) return cf_error(CF_ERR_ARG, "cf_cuda_turn_rotations: NULL argument");
  CU(cudaSetDevice(g->device));
  TRY(ensure_node_R(g));
  Rot3 d;
  for (int k = 0; k < 9; k++) d.D[k] = D[k];
  k_turn_blocks<<<blocks_for(g->ntet), kThreads, 0, g->s>>>(g->ntet, d, g->R);
  CU_LAUNCHED(k_turn_blocks);
  k_turn_blocks<<<blocks_for(g->nnode), kThreads, 0, g->s>>>(g->nnode, d, g->node_R);
  CU_LAUNCHED(k_turn_blocks);
  return CF_OK; /* queued: the next call that returns values waits for it */
}

int cf_cuda_turn_beyond(cfCuda* g, int v, double* out) {
  TRY(vec_check(g, v, "cf_cuda_turn_beyond"));
  if (!out) return cf_error(CF_ERR_ARG, "cf_cuda_turn_beyond: NULL output");
  if (g->npe != 4) return cf_error(CF_ERR_UNSUPPORTED, "cf_cuda_turn_beyond: linear tetrahedra only");
  CU(cudaSetDevice(g->device));
  TRY(red_reset(g));
  if (g->ntet > 0) {
    k_turn_beyond<<<red_blocks(g->ntet), kThreads, 0, g->s>>>(g->ntet, g->tet, g->Dm_inv, vec_at(g, v), g->R, g->red);
    CU_LAUNCHED(k_turn_beyond);
  }
  TRY(download_array(g, out, g->red, 1));
  return sync_stream(g->s, "cf_cuda_turn_beyond");
}

}  // extern "C"
