/* Smoothed-aggregation algebraic multigrid for 3D elasticity (internal; fem_amg.c).
 * Built once for a symmetric positive definite 3x3-block matrix (the system matrix at rest A0 of
 * the rotated preconditioners, fem_precond.c); applied as one V-cycle from a zero guess, which
 * is a fixed symmetric positive definite operator z = B r (usable inside PCG). The structures
 * are open so that the tests can look at the hierarchy. */
#ifndef COFEM_FEM_AMG_H
#define COFEM_FEM_AMG_H
#include <cholmod.h>

/* scalar CSR: nrow x ncol, columns sorted in each row */
typedef struct cfCsr {
  int nrow, ncol;
  int* ptr;
  int* col;
  double* val;
} cfCsr;

typedef struct cfAmgOptions {
  double theta;    /* strength of connection: |A_ij|_F >= theta sqrt(|A_ii|_F |A_jj|_F) (0.02) */
  int nmodes;      /* near-null-space vectors: 6 rigid-body modes (3: the translations only) */
  int smooth_P;    /* 1: P = (I - omega D^-1 A) P_tent (smoothed aggregation); 0: P = P_tent */
  int cheb_degree; /* Chebyshev smoothing polynomial degree, pre and post (2) */
  int max_levels;  /* including the coarsest, >= 2 (25) */
  int coarse_max;  /* a level with at most this many unknowns is solved by CHOLMOD (3000) */
  int block_diag;  /* D of the smoothers: 1 = the nodes' diagonal blocks (1), 0 = diag(A) */
  int threads;     /* OpenMP threads of the setup and the cycle; 0: omp_get_max_threads() */
} cfAmgOptions;

cfAmgOptions cf_amg_default_options(void);

typedef struct cfAmgLevel {
  int n;           /* unknowns */
  cfCsr A;         /* level matrix (level 0: freed after the setup, the blocks below are used) */
  int nb;          /* level 0: 3x3 blocks of the matrix, the model's pattern (nnode rows) */
  const int *bptr, *bcol;
  double* bval;    /* [9 nb] copy, fixed DOFs as identity rows and columns */
  double* dinv;    /* [n] 1 / diag(A) */
  long* dptr;      /* [nnode + 1] block_diag: offsets of the inverse diagonal blocks in dblk */
  double* dblk;    /* their entries, row-major, one block per node */
  double lmax;     /* estimate of the largest eigenvalue of D^-1 A (power iterations) */
  int nnode;       /* nodes (level 0: mesh nodes; then the aggregates of the level above) */
  int* node_ptr;   /* [nnode + 1] their unknowns node_ptr[i] .. node_ptr[i+1]-1 */
  double* B;       /* [n x nmodes] near-null space, row-major (rows of unknowns held at 0: 0) */
  cfCsr P, R;      /* to and from the next level (R = P^T stored: SpMVs only, no atomics) */
  double *x, *b, *r, *d, *w; /* [n] V-cycle vectors */
} cfAmgLevel;

typedef struct cfAmg {
  cfAmgOptions opt;
  int nlevel;
  cfAmgLevel* lev;
  cholmod_common cc; /* the coarsest level: A = L L^T */
  int cc_started;
  cholmod_factor* L;
  cholmod_dense *cb, *cx, *cy, *ce;
  double setup_s;
} cfAmg;

/* Build the hierarchy for the nnode x nnode block matrix A (row_ptr/col: block CSR, columns
 * sorted, both triangles; A: 9 doubles per block, row-major). X: node coordinates (the rigid-body
 * modes). fixed: [3 nnode] DOFs held at zero (identity rows/columns, left out of the coarse
 * spaces) or NULL. opt NULL: defaults. The pattern arrays must outlive the hierarchy. */
int cf_amg_create(int nnode, const int* row_ptr, const int* col, const double* A, const double* X,
                  const unsigned char* fixed, const cfAmgOptions* opt, cfAmg** out);
void cf_amg_free(cfAmg* amg);
/* z = B r: one V-cycle for A z = r from z = 0 (r and z may not alias). */
int cf_amg_apply(cfAmg* amg, const double* r, double* z);
/* y = A_l x on level l */
void cf_amg_spmv(const cfAmg* amg, int l, const double* x, double* y);
/* Bytes one V-cycle moves at least (each matrix and vector read or written once per kernel;
 * the coarsest level: its Cholesky factor twice) and the operator complexity sum nnz(A_l) /
 * nnz(A_0) (scalar entries). */
double cf_amg_bytes_per_cycle(const cfAmg* amg, double* op_complexity);
/* The same on the GPU (kernels/fem_cuda_amg.cu), whose coarsest level is a dense inverse (one
 * warp per row reads its n_c^2 doubles) instead of the CPU's two triangular solves. */
double cf_amg_bytes_per_cycle_gpu(const cfAmg* amg);
/* Of these, the bytes of the matrices' values (8 per entry: A's 2 cheb_degree products per
 * level, P and R once each; the coarsest level's factor not counted): what a V-cycle with the
 * values stored as float (the GPU's cfCudaOptions.amg_float) moves less, by half. */
double cf_amg_value_bytes_per_cycle(const cfAmg* amg);
/* One line per level into buf: unknowns, nonzeros, nodes. */
void cf_amg_describe(const cfAmg* amg, char* buf, int size);

/* sparse helpers (exposed for the tests) */
void cf_csr_free(cfCsr* a);
int cf_csr_transpose(const cfCsr* a, cfCsr* t);                /* t = a^T */
void cf_csr_spmv(const cfCsr* a, const double* x, double* y);  /* y = a x, one thread */
#endif
