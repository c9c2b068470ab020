/* The CUDA backend of the co-rotational FEM step: the same four stages as the CPU reference
 * (cofem/fem.h), run on one device, one thread per element / block / node, with the per-thread
 * bodies taken from host/fem/fem_element.h (the code the CPU tests check).
 *
 * Ownership: the immutable model is uploaded once by cf_cuda_create. Between calls the device
 * copy of the state (x, v, R) and of the inputs (f_ext, supports_active) is the truth; the
 * cfData passed to the step receives counters, warnings and timers, and receives state only
 * through cf_cuda_download. Changing d->f_ext or d->supports_active after cf_cuda_create has no
 * effect on the device until cf_cuda_set_forces / cf_cuda_set_supports (or cf_cuda_upload).
 *
 * Every function returns a cfStatus (negative: error, with cf_last_error() naming the CUDA call
 * and its error string; positive: a numerical warning as on the CPU). Nothing exits.
 * In a build without CUDA the same functions exist and return CF_ERR_UNSUPPORTED. */
#ifndef COFEM_CUDA_H
#define COFEM_CUDA_H
#include "cofem/fem.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cfCuda cfCuda;

/* Block SpMV used by the PCG */
enum cfCudaSpmv {
  CF_CUDA_SPMV_OWN = 0,     /* one thread per block row, body cf_bsr_row (default) */
  CF_CUDA_SPMV_CUSPARSE = 1, /* cusparseSpMV on a 3x3 BSR descriptor (row-major blocks) */
  CF_CUDA_SPMV_WARP = 2      /* one warp per block row, the row's values read coalesced (issue 28:
                                the thread-per-row kernel reaches ~40% of the copy bandwidth at 1M);
                                not yet run on a device (2026-11-29) */
};

typedef struct cfCudaOptions {
  int device;      /* CUDA device ordinal (default 0) */
  int spmv;        /* enum cfCudaSpmv */
  int check_every; /* PCG: read the convergence flag back every this many iterations (8) */
  int use_graphs;  /* PCG: launch each batch of check_every iterations as one CUDA graph (1);
                      only with the own SpMVs (CF_CUDA_SPMV_OWN, CF_CUDA_SPMV_WARP) */
  int amg_float;   /* AMG (CF_PRECOND_AMG): 1 stores the V-cycle's matrices (A0's blocks on level
                      0, the coarser levels' A, P and R) as float, halving the bytes of their
                      values; the products still sum in double, the vectors, the smoother's
                      inverse blocks, the coarsest solve and the PCG itself stay double. The
                      cycle remains a fixed symmetric operator (the PCG stays valid); a few more
                      iterations at most. 0: all double (default). Ignored without AMG. */
  int step_graph;    /* 1: each backward-Euler cf_cuda_step is one CUDA graph launch and one host
                        sync: polar to update, the PCG's iterations in a conditional WHILE node that
                        ends on the device when the solve is done (no empty iterations, no check
                        points; a driver for CUDA 12.4 or later); captured at the first step and
                        again when dt, the PCG's tolerance or cap, gravity or the supports change.
                        Needs use_graphs and an own SpMV. 0 (default): the PCG in batches of
                        check_every iterations with a sync after each. Not yet run on a device
                        (2026-11-29). */
  int kernel_timers; /* 1: CUDA events between the kernels of each backward-Euler cf_cuda_step
                        (cf_cuda_kernel_times: the element stages kernel by kernel); 0 (default):
                        only the four stage timers of cfData.timer */
} cfCudaOptions;

/* The kernels (and groups of them) cf_cuda_kernel_times splits a backward-Euler step into:
 * k_polar; the two velocity copies and k_rotate (K_R and the element forces); k_node_gather (f_el);
 * k_block_gather (A); k_rhs and its b_scale; the preconditioner's setup (AMG's node rotations or
 * block Jacobi's inverse blocks); the warm start; the PCG; k_update_x. */
enum { CF_CUDA_KT_POLAR, CF_CUDA_KT_ROTATE, CF_CUDA_KT_NODE_GATHER, CF_CUDA_KT_BLOCK_GATHER, CF_CUDA_KT_RHS,
       CF_CUDA_KT_PRECOND, CF_CUDA_KT_WARM, CF_CUDA_KT_PCG, CF_CUDA_KT_UPDATE, CF_CUDA_KT_COUNT };
/* "polar", "rotate", ... for CF_CUDA_KT_*; "?" outside */
const char* cf_cuda_kernel_time_name(int k);

cfCudaOptions cf_cuda_default_options(void);

/* 1 if device 0 is usable (a probe kernel ran on it); else 0 and a one-line reason in why
 * (e.g. "cudaGetDeviceCount: no CUDA-capable device is detected"). why may be NULL. */
int cf_cuda_available(char* why, int n);
/* The same for the device of the given ordinal (cfCudaOptions.device). */
int cf_cuda_device_available(int device, char* why, int n);

/* CF_OK if the GPU implements the model's method (backward Euler or generalized-alpha with Newton
 * iterations, the K_R tangent, block-Jacobi or AMG PCG (AMG with generalized-alpha not yet run on a
 * device); lumped or
 * consistent mass, Rayleigh damping, warm or cold start); else CF_ERR_UNSUPPORTED with a message
 * naming what the model asks for. Needs no device; cf_cuda_create calls it first.
 * The divergence monitor (def.divergence_check) runs on the GPU too: cf_cuda_step computes its
 * figures by device reductions and fem_divergence.c's decision (the CPU's) takes them. */
int cf_cuda_check_model(const cfModel* m);

/* Upload the model and the current state of d (x, v, v_prev, R, f_ext, supports_active).
 * Refuses (CF_ERR_UNSUPPORTED) a model the GPU does not implement (cf_cuda_check_model), and
 * (CF_ERR_CUDA) a device that fails the probe or lacks the memory for everything the backend
 * allocates: nothing is allocated on the device after create. */
int cf_cuda_create(const cfModel* m, const cfData* d, cfCuda** out);
int cf_cuda_create_ex(const cfModel* m, const cfData* d, const cfCudaOptions* opt, cfCuda** out);
void cf_cuda_free(cfCuda* g);

/* Inputs: uploaded only when the caller says they changed. */
int cf_cuda_set_forces(cfCuda* g, const double* f_ext /* [3*nnode] */);
int cf_cuda_set_supports(cfCuda* g, int active);

/* One implicit step on the device (polar, elastic + gather, A/b/Pinv, PCG, update). Writes into
 * d: t, steps, ninverted, pcg_iters, pcg_residual, pcg_iters_total, warning[], timer[] (device
 * times from CUDA events). Returns CF_OK, a positive warning, or a negative error; on an error
 * the device state is left as cf_step leaves the host's (x, t, steps unchanged, v back to v0,
 * v_prev = v0, R the rotations of x), e.g. CF_ERR_ARG for a non-finite right side.
 * With def.divergence_check the step ends with the divergence monitor (cf_step's): its figures
 * (finiteness, 1/2 v^T M v, the loads' work, every 8th step the strain energy, the largest
 * displacement relative to the mass centre's motion) by device reductions, 64 bytes read back,
 * the decision and message of cf_divergence_decide; on CF_ERR_DIVERGED the device state is back
 * at the step's start (x, v = v_prev = v0, R of x; generalized-alpha also a) and t, steps and
 * d->mon_work are unchanged, as cf_step leaves the host's. */
int cf_cuda_step(cfCuda* g, const cfModel* m, cfData* d);
/* The monitor's figures of the device's current state (what cf_cuda_step hands the decision):
 * full: the strain energy too; *work: dt v . (f_ext + M g) over the free DOFs (backward Euler's
 * work increment with v the step's end velocity). For tests. */
int cf_cuda_monitor_stats(cfCuda* g, const cfModel* m, int full, cfMonitorStats* st, double* work);

/* Fields for upload / download (bit mask). */
enum cfCudaField {
  CF_CUDA_X = 1 << 0,
  CF_CUDA_V = 1 << 1,
  CF_CUDA_R = 1 << 2,
  CF_CUDA_F_EXT = 1 << 3,
  CF_CUDA_KR = 1 << 4,
  CF_CUDA_FE = 1 << 5,
  CF_CUDA_F_EL = 1 << 6,
  CF_CUDA_A = 1 << 7,
  CF_CUDA_B = 1 << 8, /* with b_scale */
  CF_CUDA_PINV = 1 << 9,
  CF_CUDA_V_PREV = 1 << 10, /* velocities of the step before (the warm start's second vector) */
  CF_CUDA_F_EXT_PREV = 1 << 11, /* f_ext of the step before (generalized-alpha: the load at t) */
  /* generalized-alpha's accelerations d->a (none for the other integrators), with f_el of the
   * current x (d->ga_f0) and whether both belong to the state (d->ga_ready) */
  CF_CUDA_ACC = 1 << 12,
  /* everything a step carries to the next: after cf_sim_reset / cf_data_reset, upload this */
  CF_CUDA_STATE = CF_CUDA_X | CF_CUDA_V | CF_CUDA_R | CF_CUDA_V_PREV | CF_CUDA_F_EXT_PREV | CF_CUDA_ACC,
  CF_CUDA_ALL = (1 << 13) - 1
};

/* Copy the named fields of d to the device (blocking). */
int cf_cuda_upload(cfCuda* g, const cfData* d, int what);
/* Copy the named fields from the device into d (blocking). */
int cf_cuda_download(cfCuda* g, cfData* d, int what);
/* Asynchronous download of X, V, R and/or F_EL (other bits are an error): a device-side snapshot
 * is taken now, in stream order after the last step, and copied to pinned host memory while the
 * next steps run; cf_cuda_download_wait blocks until it has arrived and copies it into d.
 * Fields requested by several cf_cuda_download_async calls before one wait come from the
 * latest snapshot that included them. */
int cf_cuda_download_async(cfCuda* g, int what);
int cf_cuda_download_wait(cfCuda* g, cfData* d);
/* Wait for all work queued on the device. */
int cf_cuda_sync(cfCuda* g);
/* The bytes copied between the host and this backend's device since cf_cuda_create: *h2d host to
 * device, *d2h device to host (the model's upload included; either pointer may be NULL). What a
 * mechanism's FE body moves over the bus per step is the difference across the step
 * (cf_mbs_fe_bus_bytes). */
int cf_cuda_bus_bytes(const cfCuda* g, unsigned long long* h2d, unsigned long long* d2h);
/* ms[CF_CUDA_KT_COUNT]: the milliseconds of each kernel group summed over the backward-Euler steps
 * since cf_cuda_create, and *steps their number; CF_ERR_ARG when the backend was created without
 * cfCudaOptions.kernel_timers. */
int cf_cuda_kernel_times(const cfCuda* g, double* ms, long* steps);

/* The stages on their own, on the device copy of the state (for tests and benchmarks); each
 * blocks until done. polar writes d->ninverted; pcg writes d->pcg_iters, d->pcg_residual,
 * d->pcg_iters_total and counts warnings, as cf_stage_pcg. */
int cf_cuda_stage_polar(cfCuda* g, const cfModel* m, cfData* d);
int cf_cuda_stage_elastic(cfCuda* g, const cfModel* m);
int cf_cuda_stage_assemble_system(cfCuda* g, const cfModel* m, double h);
int cf_cuda_stage_pcg(cfCuda* g, const cfModel* m, cfData* d);
/* The warm start alone (cf_pcg_warm_start): v = c0 v + c1 v_prev on the device's A, b, b_scale,
 * v and v_prev (v_prev itself unchanged); the coefficients into c[2] when c is not NULL. */
int cf_cuda_stage_warm_start(cfCuda* g, const cfModel* m, double* c);
int cf_cuda_stage_update(cfCuda* g, const cfModel* m, double h);

/* y = A x with the device's current A and the chosen SpMV (enum cfCudaSpmv), no projection of
 * fixed DOFs; x and y are host arrays [3*nnode]. For tests and benchmarks. */
int cf_cuda_apply_A(cfCuda* g, int spmv, const double* x, double* y);
/* z = Q AMG(A0) Q^T r: one application of the AMG preconditioner on the device (a backend
 * created for a model with CF_PRECOND_AMG), with the device's node rotations Q (uploaded with
 * CF_CUDA_R, or formed by its steps) and the hierarchy of the current support state, as the CPU's
 * preconditioner of the same cfData; r and z are host arrays [3*nnode]. For tests. */
int cf_cuda_apply_amg(cfCuda* g, const double* r, double* z);

/* The corotational FE body of a mechanism (host/mbs/mbs_fe.c, "factor": "pcg", "backend": "cuda"):
 * its stages are cf_cuda_upload(CF_CUDA_X), cf_cuda_stage_polar, cf_cuda_stage_elastic and
 * cf_cuda_download(CF_CUDA_F_EL); its solves are these two.
 * cf_cuda_system: A = cm M + ck K_R + eps I from the device's K_R (of the last elastic stage) and
 * its preconditioner: a backend made for AMG, with ck > 0, the node rotations of the device's R
 * for its hierarchy (the host builds that hierarchy with the Newton matrix's coefficients before
 * cf_cuda_create uploads it: cf_precond_create_amg_with); otherwise block Jacobi (the CPU's
 * cf_block_gather and cf_block_jacobi; fixed DOFs as the support state), and the solves that
 * follow run with the AMG off.
 * cf_cuda_solve: x[c] = A^-1 b[c] for c < nrhs, each by the PCG to def.pcg_tol relative to |b[c]|
 * (b_scale 0) within def.pcg_max_iter, started from x[c] when warm and def.warm_start, else from
 * 0; b and x are host arrays [3 nnode]. Overwrites the device's b and v (the FE step's velocities:
 * a mechanism keeps its state on the host). Iterations into d->pcg_iters (the last solve's) and
 * d->pcg_iters_total; returns at the first column that does not converge (a positive warning, as
 * cf_stage_pcg), or an error. */
int cf_cuda_system(cfCuda* g, const cfModel* m, double cm, double ck, double eps);
int cf_cuda_solve(cfCuda* g, const cfModel* m, cfData* d, int nrhs, const double* const* b, double* const* x,
                  int warm);

/* ---- Resident vectors: a mechanism's linearly coupled FE body keeps its nodes on the device ----
 * (host/mbs/mbs_fe.c, "own coordinates"; docs/cuda.md, "Why the mesh crosses"). nvec vectors of
 * ndof = 3 nnode doubles on the device, numbered 0 .. nvec - 1, zero when created. Every copy
 * between the host and the device (vectors, node lists, coefficients, results) is counted in
 * cf_cuda_bus_bytes. The calls are queued in order on the backend's stream; those that return values
 * to the host (get, get_nodes, maxabs, radius, dot, solve, node_rotations, rotation_spread) wait for
 * them, and a device fault of a queued call surfaces there. A host array passed in may be reused on
 * return. A vector index out of range, an unknown field or a NULL array: CF_ERR_ARG. */
enum { CF_CUDA_COMB_MAX = 16 };
/* nvec vectors (again: the old ones freed first), all zero */
int cf_cuda_vec_create(cfCuda* g, int nvec);
/* vector v = x [ndof] (up) / x = vector v (down) */
int cf_cuda_vec_set(cfCuda* g, int v, const double* x);
int cf_cuda_vec_get(cfCuda* g, int v, double* x);
/* vector v's 3 coordinates at node nodes[k], k < nn: down into out [3 nn] / up from in [3 nn] (its
 * other nodes kept); nn 0 copies nothing */
int cf_cuda_vec_get_nodes(cfCuda* g, int v, int nn, const int* nodes, double* out);
int cf_cuda_vec_set_nodes(cfCuda* g, int v, int nn, const int* nodes, const double* in);
/* vector y = beta y + sum_{k < nsrc} c[k] vector src[k], entry by entry, the terms added in that
 * order (beta 0: y is not read); y may be one of src; 0 <= nsrc <= CF_CUDA_COMB_MAX */
int cf_cuda_vec_comb(cfCuda* g, int y, double beta, int nsrc, const int* src, const double* c);
/* *out = max |vector v| over its entries, a NaN left out (as fmax) */
int cf_cuda_vec_maxabs(cfCuda* g, int v, double* out);
/* *out = sum_i vector a[i] vector b[i] */
int cf_cuda_vec_dot(cfCuda* g, int a, int b, double* out);
/* *out = max_n |x_n - c| over the nodes' positions x_n in vector v, c their mean (the divergence
 * monitor's radius, mbs_monitor.c); a NaN gives +inf */
int cf_cuda_vec_radius(cfCuda* g, int v, double* out);
/* vector v and one of the FE state's device arrays of ndof doubles (CF_CUDA_X the positions,
 * CF_CUDA_F_EL the elastic forces of the last elastic stage): to_field 1 copies v into the field,
 * 0 the field into v */
int cf_cuda_vec_field(cfCuda* g, int v, int field, int to_field);
/* vector y = M vector x: the model's consistent mass (Mblk[p] times the 3x3 identity over the block
 * pattern, the CPU's cf_bsr_apply of the mass); x != y */
int cf_cuda_vec_mass(cfCuda* g, int x, int y);
/* vector v = 0 at the model's fixed DOFs */
int cf_cuda_vec_unfix(cfCuda* g, int v);
/* cf_cuda_solve with vectors: vector x[c] = A^-1 vector b[c] (A of the last cf_cuda_system) by the
 * PCG, started from vector x[c] when warm and def.warm_start, else from 0, to def.pcg_tol times
 * b_scale[c] when b_scale is not NULL and b_scale[c] > 0, else relative to |b[c]|; the device's b
 * and v are overwritten. v1 >= 0 (warm, one right side): the start is the best combination of
 * vector x[0] and vector v1 (cf_pcg_warm_start, the part's own step's two-vector start). Iterations,
 * warnings and return as cf_cuda_solve. */
int cf_cuda_vec_solve(cfCuda* g, const cfModel* m, cfData* d, int nrhs, const int* b, const int* x,
                      const double* b_scale, int warm, int v1);
/* The node rotations Q (the AMG's and cf_cuda_vec_turn's): Q_n = the polar of the sum of the
 * rotations R of node n's elements (the device's R, of the last polar stage), to convergence from
 * the Q_n before (cf_polar_rotation_warm, as the CPU's cf_precond_update_n with
 * CF_PRECOND_CONVERGED); then Q of node nodes[k], k < nn, down into out [9 nn] (nn may be 0). */
int cf_cuda_node_rotations(cfCuda* g, int nn, const int* nodes, double* out);
/* Q_n = R [9 k .. 9 k + 8] for n = nodes[k], k < nn (up) */
int cf_cuda_set_node_rotations(cfCuda* g, int nn, const int* nodes, const double* R);
/* *out = the largest 3 - trace(R_e^T Q_n) over the elements e and their nodes n: 2 (1 - cos) of the
 * largest angle between an element's rotation and its nodes' (the CPU's check in mbs_fe.c,
 * linear_operator) */
int cf_cuda_rotation_spread(cfCuda* g, double* out);
/* vector y = Q_n (c[0] x0 + c[1] x1 + c[2] x2) node by node, x_a = vector src[a], then zero at the
 * fixed DOFs (mbs_fe.c's turned_column); y is none of src */
int cf_cuda_vec_turn(cfCuda* g, int y, const int* src, const double* c);

/* The linear coupling's predicted rotations on the device (mbs_fe.c, linear_rotations):
 * out[16] = sum m, sum m x0 [3], sum m x1 [3], sum m x1 x0^T [9, row-major] over the nodes (m the
 * node masses, x0, x1 the nodes' positions in vectors v0, v1): the rigid fit of x1 to x0 */
int cf_cuda_vec_rigid_sums(cfCuda* g, int v0, int v1, double* out);
/* each element's rotation R one Newton correction towards the polar of its F at the positions of
 * vector v (cf_elem_polar_step; linear tetrahedra only: CF_ERR_UNSUPPORTED for quadratic ones) */
int cf_cuda_polar_step(cfCuda* g, int v);
/* R_e = D R_e for every element, and Q_n = D Q_n for every node (D [9] row-major) */
int cf_cuda_turn_rotations(cfCuda* g, const double* D);
/* *out = the largest cf_elem_turn_beyond2 over the elements at the positions of vector v with the
 * device's R (a NaN: +inf); linear tetrahedra only */
int cf_cuda_turn_beyond(cfCuda* g, int v, double* out);

/* Name of the device in use and its compute capability, e.g. "NVIDIA H100 80GB HBM3 (sm_90)". */
const char* cf_cuda_device_name(const cfCuda* g);

#ifdef __cplusplus
}
#endif
#endif
