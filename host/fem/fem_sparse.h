/* Sparse direct solves over the model's 3x3-block pattern (internal): the block matrix is
 * copied into a scalar CSC matrix with fixed DOFs as identity rows/columns and factored with
 * CHOLMOD (symmetric) or UMFPACK (general). Used by the statics and the rotated-Cholesky
 * preconditioner. */
#ifndef COFEM_FEM_SPARSE_H
#define COFEM_FEM_SPARSE_H
#include <cholmod.h>

#include "cofem/fem.h"

typedef struct cfSparseSolver {
  int n, nnz, symmetric;
  int *Ap, *Ai;
  double* Ax;
  int* blk_of;   /* [nnz] block index feeding each CSC entry */
  int* ent_of;   /* [nnz] entry (3r + c) inside that block */
  cholmod_common cc;
  cholmod_factor* L;
  void* symbolic;
  void* numeric;
  /* cholmod_solve2 workspaces, kept so that repeated solves allocate nothing */
  cholmod_dense *B, *X, *Y, *E;
} cfSparseSolver;

/* Pattern of the model's blocks (upper triangle if symmetric). */
int cf_sparse_init(const cfModel* m, int symmetric, cfSparseSolver* s);
/* Numeric factorisation of the blocks A (fixed: DOF mask or NULL), symbolic analysis the first time. */
int cf_sparse_factor(cfSparseSolver* s, const double* A, const unsigned char* fixed);
/* x = A^-1 b with the last factorisation (b and x may not alias). */
int cf_sparse_solve(cfSparseSolver* s, const double* b, double* x);
/* Factor and solve in one call. */
int cf_sparse_factor_solve(cfSparseSolver* s, const cfModel* m, const double* A,
                           const unsigned char* fixed, const double* b, double* x);
void cf_sparse_free(cfSparseSolver* s);
#endif
