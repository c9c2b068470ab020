/* Sparse direct solves over the block pattern (see fem_sparse.h). */
#include "fem/fem_sparse.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <umfpack.h>

int cf_sparse_init(const cfModel* m, int symmetric, cfSparseSolver* s) {
  memset(s, 0, sizeof *s);
  s->n = m->ndof;
  s->symmetric = symmetric;
  size_t cap = 9 * (size_t)m->nnzb;
  s->Ap = malloc(sizeof(int) * (s->n + 1));
  s->Ai = malloc(sizeof(int) * cap);
  s->Ax = malloc(sizeof(double) * cap);
  s->blk_of = malloc(sizeof(int) * cap);
  s->ent_of = malloc(sizeof(int) * cap);
  if (!s->Ap || !s->Ai || !s->Ax || !s->blk_of || !s->ent_of)
    return cf_error(CF_ERR_NOMEM, "sparse solver: out of memory for the matrix");
  /* column 3j+c holds rows 3i+r of block (i,j); the pattern is symmetric, so the blocks of
   * column j are those of row j, and block (i,j) is found in row i */
  int nnz = 0;
  for (int j = 0; j < m->nnode; j++)
    for (int c = 0; c < 3; c++) {
      s->Ap[3 * j + c] = nnz;
      for (int k = m->row_ptr[j]; k < m->row_ptr[j + 1]; k++) {
        int i = m->col[k];
        if (symmetric && i > j) continue;
        int lo = m->row_ptr[i], hi = m->row_ptr[i + 1] - 1;
        while (lo < hi) {
          int mid = (lo + hi) / 2;
          if (m->col[mid] < j) lo = mid + 1; else hi = mid;
        }
        for (int r = 0; r < 3; r++) {
          if (symmetric && i == j && r > c) continue;
          s->Ai[nnz] = 3 * i + r;
          s->blk_of[nnz] = lo;
          s->ent_of[nnz] = 3 * r + c;
          nnz++;
        }
      }
    }
  s->Ap[s->n] = nnz;
  s->nnz = nnz;
  if (symmetric) cholmod_start(&s->cc);
  return CF_OK;
}

void cf_sparse_free(cfSparseSolver* s) {
  if (s->symmetric) {
    if (s->L) cholmod_free_factor(&s->L, &s->cc);
    cholmod_free_dense(&s->B, &s->cc);
    cholmod_free_dense(&s->X, &s->cc);
    cholmod_free_dense(&s->Y, &s->cc);
    cholmod_free_dense(&s->E, &s->cc);
    cholmod_finish(&s->cc);
  } else {
    if (s->numeric) umfpack_di_free_numeric(&s->numeric);
    if (s->symbolic) umfpack_di_free_symbolic(&s->symbolic);
  }
  free(s->Ap); free(s->Ai); free(s->Ax); free(s->blk_of); free(s->ent_of);
  memset(s, 0, sizeof *s);
}

int cf_sparse_factor(cfSparseSolver* s, const double* A, const unsigned char* fixed) {
  for (int j = 0; j < s->n; j++)
    for (int k = s->Ap[j]; k < s->Ap[j + 1]; k++) {
      int i = s->Ai[k];
      double v = A[9 * (size_t)s->blk_of[k] + s->ent_of[k]];
      if (fixed && (fixed[i] || fixed[j])) v = (i == j) ? 1.0 : 0.0;
      s->Ax[k] = v;
    }
  if (s->symmetric) {
    cholmod_sparse As = {0};
    As.nrow = As.ncol = s->n;
    As.nzmax = s->nnz;
    As.p = s->Ap; As.i = s->Ai; As.x = s->Ax;
    As.stype = 1; As.itype = CHOLMOD_INT; As.xtype = CHOLMOD_REAL; As.dtype = CHOLMOD_DOUBLE;
    As.sorted = 1; As.packed = 1;
    if (!s->L) s->L = cholmod_analyze(&As, &s->cc);
    if (!s->L) return cf_error(CF_ERR_SOLVER, "CHOLMOD analysis failed (status %d)", s->cc.status);
    cholmod_factorize(&As, s->L, &s->cc);
    if (s->cc.status == CHOLMOD_NOT_POSDEF)
      return cf_error(CF_ERR_SOLVER, "stiffness matrix is singular or indefinite (column %d): "
                      "is the part supported against all rigid-body motions?", (int)s->L->minor);
    if (s->cc.status < 0) return cf_error(CF_ERR_SOLVER, "CHOLMOD factorisation failed (status %d)", s->cc.status);
  } else {
    if (!s->symbolic &&
        umfpack_di_symbolic(s->n, s->n, s->Ap, s->Ai, s->Ax, &s->symbolic, NULL, NULL) != UMFPACK_OK)
      return cf_error(CF_ERR_SOLVER, "UMFPACK symbolic analysis failed");
    if (s->numeric) umfpack_di_free_numeric(&s->numeric);
    int st = umfpack_di_numeric(s->Ap, s->Ai, s->Ax, s->symbolic, &s->numeric, NULL, NULL);
    if (st != UMFPACK_OK)
      return cf_error(CF_ERR_SOLVER, "tangent matrix is singular (UMFPACK status %d): "
                      "is the part supported against all rigid-body motions?", st);
  }
  return CF_OK;
}

int cf_sparse_solve(cfSparseSolver* s, const double* b, double* x) {
  if (s->symmetric) {
    if (!s->B) s->B = cholmod_allocate_dense(s->n, 1, s->n, CHOLMOD_REAL, &s->cc);
    if (!s->B) return cf_error(CF_ERR_NOMEM, "CHOLMOD: out of memory");
    memcpy(s->B->x, b, sizeof(double) * s->n);
    if (!cholmod_solve2(CHOLMOD_A, s->L, s->B, NULL, &s->X, NULL, &s->Y, &s->E, &s->cc))
      return cf_error(CF_ERR_SOLVER, "CHOLMOD solve failed (status %d)", s->cc.status);
    memcpy(x, s->X->x, sizeof(double) * s->n);
  } else {
    int st = umfpack_di_solve(UMFPACK_A, s->Ap, s->Ai, s->Ax, x, b, s->numeric, NULL, NULL);
    if (st != UMFPACK_OK) return cf_error(CF_ERR_SOLVER, "UMFPACK solve failed (%d)", st);
  }
  return CF_OK;
}

int cf_sparse_factor_solve(cfSparseSolver* s, const cfModel* m, const double* A,
                           const unsigned char* fixed, const double* b, double* x) {
  (void)m;
  int st = cf_sparse_factor(s, A, fixed);
  if (st >= 0) st = cf_sparse_solve(s, b, x);
  if (st < 0) {
    char msg[1024]; /* cf_last_error() is cf_error's own buffer: copy before reformatting */
    snprintf(msg, sizeof msg, "%s", cf_last_error());
    return cf_error(st, "static: %s", msg);
  }
  for (int i = 0; i < s->n; i++)
    if (!isfinite(x[i])) return cf_error(CF_ERR_SOLVER, "static: solve produced non-finite values");
  return CF_OK;
}
