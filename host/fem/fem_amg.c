/* Smoothed-aggregation AMG for 3D elasticity (Vanek, Mandel & Brezina 1996), set up once.
 *
 * Setup, level l -> l+1 (A = A_l, n unknowns grouped in nodes: level 0 the mesh nodes, 3 DOFs
 * each; level l+1 the aggregates of level l, up to 6 unknowns each):
 *   strength   nodes i != j are strongly connected when |A_ij|_F >= theta sqrt(|A_ii|_F |A_jj|_F)
 *              (3x3 blocks on level 0, the aggregates' blocks above; the Frobenius norm does
 *              not depend on the orientation of the frame, as a rotated A0 needs)
 *   aggregate  greedy, three passes: (1) a node whose strong neighbours are all free starts an
 *              aggregate with them; (2) a node left joins the aggregate of its strongest
 *              aggregated neighbour; (3) what is still left forms aggregates with its free
 *              neighbours
 *   P_tent     near-null space B (n x 6: the rigid-body modes, three translations and three
 *              rotations about the centroid, on level 0), per aggregate the rows of its
 *              unknowns B_a = Q_a R_a (LAPACKE dgeqrf/dorgqr, Householder): P_tent holds the
 *              orthonormal Q_a (block diagonal: P_tent^T P_tent = I), the coarse space's B is
 *              the stack of R_a, so that P_tent B_c = B exactly: the rigid modes are
 *              represented on every level; a rank-deficient B_a (two nodes, a node on a line)
 *              keeps all its columns: Q_a stays orthonormal, the extra column is an extra
 *              coarse unknown, nothing is divided by a small pivot
 *   smoothing  P = (I - omega D^-1 A) P_tent, omega = 4/3 / rho(D^-1 A) (rho by power
 *              iterations), D the block diagonal of the nodes (3x3 on level 0; an aggregate's
 *              up to 6x6 coupled translations and rotations above; inverted by LAPACKE
 *              dpotrf/dpotri): damps the high-energy part of P_tent's columns (the jumps at the
 *              aggregate borders), which makes the coarse space good for elasticity; where A B =
 *              0 (the stiffness of a free body) P still reproduces the rigid modes
 *   Galerkin   A_c = R A P with R = P^T (symmetric positive definite when A is and P has full
 *              column rank), two sparse products; the coarse levels are scalar CSR: an
 *              aggregate has 6 unknowns or fewer (a small one), so blocks would vary in size;
 *              cuSPARSE SpMV takes scalar CSR directly
 *   coarsest   once at most coarse_max unknowns (or max_levels): CHOLMOD, A_c = L L^T
 * Supports: fixed DOFs are identity rows and columns of A_0 (as the Cholesky factor has them),
 * zero rows of B and of P: the coarse spaces do not contain them, the smoother keeps them at 0.
 *
 * Application (one V-cycle from x = 0; the PCG's preconditioner):
 *   x = S b                      (Chebyshev pre-smoothing, degree 2, polynomial in D^-1 A)
 *   x += P V_{l+1}(R (b - A x))  (coarse correction; the coarsest: L^-T L^-1)
 *   x += S (b - A x)             (the same polynomial after)
 * S = p(D^-1 A) D^-1 is symmetric (D^-1/2 p(D^-1/2 A D^-1/2) D^-1/2), pre and post are the
 * same, so the V-cycle is a symmetric operator; it is positive definite because the Chebyshev
 * smoother converges in the A-norm on [0, 1.1 rho] (error factor < 1 on the whole spectrum).
 * Only SpMVs and vector operations: the GPU runs the same kernels per level. */
#include "fem/fem_amg.h"

#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cofem/fem.h"
#include "fem/fem_element.h"
#include "fem/fem_parallel.h"

cfAmgOptions cf_amg_default_options(void) {
  cfAmgOptions o;
  o.theta = 0.02;
  o.nmodes = 6;
  o.smooth_P = 1;
  o.cheb_degree = 2;
  o.max_levels = 25;
  o.coarse_max = 3000;
  o.block_diag = 1;
  o.threads = 0;
  return o;
}

/* ---- sparse helpers ------------------------------------------------------------------------ */

void cf_csr_free(cfCsr* a) {
  free(a->ptr);
  free(a->col);
  free(a->val);
  memset(a, 0, sizeof *a);
}

static int csr_alloc(cfCsr* a, int nrow, int ncol, long nnz) {
  a->nrow = nrow;
  a->ncol = ncol;
  a->ptr = malloc(sizeof(int) * (nrow + 1));
  a->col = malloc(sizeof(int) * (nnz > 0 ? nnz : 1));
  a->val = malloc(sizeof(double) * (nnz > 0 ? nnz : 1));
  if (!a->ptr || !a->col || !a->val) {
    cf_csr_free(a);
    return cf_error(CF_ERR_NOMEM, "AMG: out of memory for a %d x %d matrix with %ld entries", nrow, ncol, nnz);
  }
  return CF_OK;
}

static void csr_row(const cfCsr* a, int i, const double* x, double* y) {
  double s = 0;
  for (int k = a->ptr[i]; k < a->ptr[i + 1]; k++) s += a->val[k] * x[a->col[k]];
  y[i] = s;
}

void cf_csr_spmv(const cfCsr* a, const double* x, double* y) {
  for (int i = 0; i < a->nrow; i++) csr_row(a, i, x, y);
}

static void csr_spmv_t(const cfCsr* a, const double* x, double* y, int threads) {
  CF_FOR_T(threads, i, a->nrow, a->nrow > 4096, csr_row(a, i, x, y));
}

/* the hierarchy's thread count: the model's (cfModelDef.threads), else OpenMP's default */
static int amg_threads(const cfAmg* amg) {
  return amg->opt.threads > 0 ? amg->opt.threads : omp_get_max_threads();
}

static int cmp_int(const void* a, const void* b) {
  int x = *(const int*)a, y = *(const int*)b;
  return (x > y) - (x < y);
}

/* Gustavson's row-by-row product, two passes (count, then fill), rows split over the threads;
 * each row is formed alone (a dense accumulator per thread), so the result does not depend on
 * the thread count. Columns sorted. */
static int csr_matmul(const cfCsr* a, const cfCsr* b, cfCsr* c, int threads) {
  memset(c, 0, sizeof *c);
  const int nrow = a->nrow, ncol = b->ncol;
  int* cnt = malloc(sizeof(int) * (nrow + 1));
  if (!cnt) return cf_error(CF_ERR_NOMEM, "AMG: out of memory (sparse product)");
  int fail = 0;
#pragma omp parallel num_threads(threads)
  {
    int* mark = malloc(sizeof(int) * (ncol > 0 ? ncol : 1));
    if (!mark) {
#pragma omp atomic write
      fail = 1;
    } else {
      for (int j = 0; j < ncol; j++) mark[j] = -1;
#pragma omp for schedule(static)
      for (int i = 0; i < nrow; i++) {
        int n = 0;
        for (int ka = a->ptr[i]; ka < a->ptr[i + 1]; ka++) {
          const int k = a->col[ka];
          for (int kb = b->ptr[k]; kb < b->ptr[k + 1]; kb++)
            if (mark[b->col[kb]] != i) {
              mark[b->col[kb]] = i;
              n++;
            }
        }
        cnt[i] = n;
      }
    }
    free(mark);
  }
  if (fail) {
    free(cnt);
    return cf_error(CF_ERR_NOMEM, "AMG: out of memory (sparse product)");
  }
  long nnz = 0;
  for (int i = 0; i < nrow; i++) nnz += cnt[i];
  if (nnz > 2147483647L) {
    free(cnt);
    return cf_error(CF_ERR_NOMEM, "AMG: a sparse product with %ld entries (over 2^31)", nnz);
  }
  int st = csr_alloc(c, nrow, ncol, nnz);
  if (st < 0) {
    free(cnt);
    return st;
  }
  c->ptr[0] = 0;
  for (int i = 0; i < nrow; i++) c->ptr[i + 1] = c->ptr[i] + cnt[i];
  free(cnt);
#pragma omp parallel num_threads(threads)
  {
    int* mark = malloc(sizeof(int) * (ncol > 0 ? ncol : 1));
    double* acc = malloc(sizeof(double) * (ncol > 0 ? ncol : 1));
    if (!mark || !acc) {
#pragma omp atomic write
      fail = 1;
    } else {
      for (int j = 0; j < ncol; j++) mark[j] = -1;
#pragma omp for schedule(static)
      for (int i = 0; i < nrow; i++) {
        int* cols = c->col + c->ptr[i];
        int n = 0;
        for (int ka = a->ptr[i]; ka < a->ptr[i + 1]; ka++) {
          const int k = a->col[ka];
          const double av = a->val[ka];
          for (int kb = b->ptr[k]; kb < b->ptr[k + 1]; kb++) {
            const int j = b->col[kb];
            if (mark[j] != i) {
              mark[j] = i;
              acc[j] = 0;
              cols[n++] = j;
            }
            acc[j] += av * b->val[kb];
          }
        }
        qsort(cols, n, sizeof(int), cmp_int);
        for (int q = 0; q < n; q++) c->val[c->ptr[i] + q] = acc[cols[q]];
      }
    }
    free(mark);
    free(acc);
  }
  if (fail) {
    cf_csr_free(c);
    return cf_error(CF_ERR_NOMEM, "AMG: out of memory (sparse product)");
  }
  return CF_OK;
}

int cf_csr_transpose(const cfCsr* a, cfCsr* t) {
  memset(t, 0, sizeof *t);
  const long nnz = a->ptr[a->nrow];
  int st = csr_alloc(t, a->ncol, a->nrow, nnz);
  if (st < 0) return st;
  memset(t->ptr, 0, sizeof(int) * (a->ncol + 1));
  for (long k = 0; k < nnz; k++) t->ptr[a->col[k] + 1]++;
  for (int j = 0; j < a->ncol; j++) t->ptr[j + 1] += t->ptr[j];
  int* pos = malloc(sizeof(int) * (a->ncol > 0 ? a->ncol : 1));
  if (!pos) {
    cf_csr_free(t);
    return cf_error(CF_ERR_NOMEM, "AMG: out of memory (transpose)");
  }
  memcpy(pos, t->ptr, sizeof(int) * a->ncol);
  for (int i = 0; i < a->nrow; i++) /* rows in order: the columns of t come out sorted */
    for (int k = a->ptr[i]; k < a->ptr[i + 1]; k++) {
      const int q = pos[a->col[k]]++;
      t->col[q] = i;
      t->val[q] = a->val[k];
    }
  free(pos);
  return CF_OK;
}

/* ---- setup ----------------------------------------------------------------------------------- */

void cf_amg_spmv(const cfAmg* amg, int l, const double* x, double* y) {
  const cfAmgLevel* L = amg->lev + l;
  if (L->bval) {
    CF_FOR_T(amg_threads(amg), i, L->nnode, L->nnode > 2048, cf_bsr_row(i, L->bptr, L->bcol, L->bval, x, y));
  } else {
    csr_spmv_t(&L->A, x, y, amg_threads(amg));
  }
}

/* deterministic pseudo-random numbers in [-1, 1) (xorshift) */
static double rnd(unsigned long long* s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return (double)(*s >> 11) / 4503599627370496.0 - 1.0;
}

/* y = D^-1 x: the inverse diagonal blocks of the level's nodes (3x3 on level 0, up to 6x6 above:
 * an aggregate's translations and rotations together), or 1 / diag(A) */
static void diag_node(const cfAmgLevel* L, int i, const double* x, double* y) {
  const int a = L->node_ptr[i], sz = L->node_ptr[i + 1] - a;
  const double* D = L->dblk + L->dptr[i];
  for (int r = 0; r < sz; r++) {
    double t = 0;
    for (int c = 0; c < sz; c++) t += D[r * sz + c] * x[a + c];
    y[a + r] = t;
  }
}

static void diag_solve(const cfAmg* amg, const cfAmgLevel* L, const double* x, double* y) {
  if (L->dblk) {
    CF_FOR_T(amg_threads(amg), i, L->nnode, L->nnode > 2048, diag_node(L, i, x, y));
  } else {
    for (int i = 0; i < L->n; i++) y[i] = L->dinv[i] * x[i];
  }
}

/* rho(D^-1 A) by power iterations from a fixed random vector: D^-1 A is self-adjoint in the
 * A-inner product, its Rayleigh quotient (w, D^-1 w) / (x, w), w = A x, is a lower bound (within
 * a few percent after 20 iterations) */
static int spectral_radius(const cfAmg* amg, int l, double* rho) {
  const cfAmgLevel* L = amg->lev + l;
  const int n = L->n;
  double *x = L->x, *w = L->r, *y = L->d;
  unsigned long long s = 0x9E3779B97F4A7C15ULL;
  for (int i = 0; i < n; i++) x[i] = rnd(&s);
  double lam = 0;
  for (int it = 0; it < 20; it++) {
    cf_amg_spmv(amg, l, x, w);
    diag_solve(amg, L, w, y);
    double xw = 0, wy = 0, yy = 0;
    for (int i = 0; i < n; i++) {
      xw += x[i] * w[i];
      wy += w[i] * y[i];
      yy += y[i] * y[i];
    }
    if (!(xw > 0) || !(yy > 0) || !isfinite(yy)) break;
    lam = wy / xw;
    const double sc = 1.0 / sqrt(yy);
    for (int i = 0; i < n; i++) x[i] = y[i] * sc;
  }
  if (!(lam > 0) || !isfinite(lam))
    return cf_error(CF_ERR_SOLVER, "AMG level %d: no spectral radius of D^-1 A (%g): matrix not positive definite?", l, lam);
  *rho = lam;
  return CF_OK;
}

/* Aggregates of the level's nodes: agg[i] = aggregate of node i, -1 for a node without free
 * unknowns (all of them fixed, dof_free: NULL = all free); their count into *nagg_out. */
static int aggregate(const cfAmgLevel* L, const unsigned char* dof_free, double theta, int* agg, int* nagg_out) {
  const int nn = L->nnode, n = L->n;
  const cfCsr* A = &L->A;
  int* node_of = malloc(sizeof(int) * n);
  double* nrm = malloc(sizeof(double) * nn);   /* |A_ii|_F */
  int* sptr = malloc(sizeof(int) * (nn + 1));  /* strong neighbours (graph CSR) */
  double* acc = malloc(sizeof(double) * nn);
  int* mark = malloc(sizeof(int) * nn);
  int* list = malloc(sizeof(int) * nn);
  unsigned char* active = malloc(nn);
  int *scol = NULL, st = CF_OK;
  double* sval = NULL;
  if (!node_of || !nrm || !sptr || !acc || !mark || !list || !active) {
    st = cf_error(CF_ERR_NOMEM, "AMG: out of memory (aggregation)");
    goto done;
  }
  for (int i = 0; i < nn; i++) {
    active[i] = 0;
    for (int k = L->node_ptr[i]; k < L->node_ptr[i + 1]; k++) {
      node_of[k] = i;
      if (!dof_free || dof_free[k]) active[i] = 1;
    }
    mark[i] = -1;
  }
  /* block norms |A_ij|_F^2, row by row of nodes; twice: count, then fill */
  for (int pass = 0; pass < 2; pass++) {
    long ns = 0;
    for (int i = 0; i < nn; i++) {
      if (pass) sptr[i] = (int)ns;
      int cnt = 0;
      for (int r = L->node_ptr[i]; r < L->node_ptr[i + 1]; r++)
        for (int k = A->ptr[r]; k < A->ptr[r + 1]; k++) {
          const int j = node_of[A->col[k]];
          if (mark[j] != i + pass * nn) {
            mark[j] = i + pass * nn;
            acc[j] = 0;
            list[cnt++] = j;
          }
          acc[j] += A->val[k] * A->val[k];
        }
      if (!pass) {
        nrm[i] = sqrt(acc[i]);
        continue;
      }
      for (int q = 0; q < cnt; q++) {
        const int j = list[q];
        if (j == i || !active[i] || !active[j]) continue;
        if (sqrt(acc[j]) >= theta * sqrt(nrm[i] * nrm[j]) && acc[j] > 0) {
          scol[ns] = j;
          sval[ns] = acc[j];
          ns++;
        }
      }
    }
    if (!pass) {
      /* the strong graph has at most as many entries as A's node graph: A's entries bound it */
      const long cap = A->ptr[n] > 0 ? A->ptr[n] : 1;
      scol = malloc(sizeof(int) * cap);
      sval = malloc(sizeof(double) * cap);
      if (!scol || !sval) {
        st = cf_error(CF_ERR_NOMEM, "AMG: out of memory (strength of connection)");
        goto done;
      }
      for (int i = 0; i < nn; i++) mark[i] = -1;
    } else {
      sptr[nn] = (int)ns;
    }
  }
  /* the three passes */
  int nagg = 0;
  for (int i = 0; i < nn; i++) agg[i] = active[i] ? -2 : -1; /* -2: not yet aggregated */
  for (int i = 0; i < nn; i++) {
    if (agg[i] != -2) continue;
    int ok = 1;
    for (int k = sptr[i]; k < sptr[i + 1] && ok; k++) ok = agg[scol[k]] == -2;
    if (!ok || sptr[i + 1] == sptr[i]) continue; /* isolated nodes: pass 3 */
    agg[i] = nagg;
    for (int k = sptr[i]; k < sptr[i + 1]; k++) agg[scol[k]] = nagg;
    nagg++;
  }
  for (int i = 0; i < nn; i++) list[i] = agg[i]; /* pass 2 joins the aggregates of pass 1 only */
  for (int i = 0; i < nn; i++) {
    if (list[i] != -2) continue;
    int best = -1;
    double bs = -1;
    for (int k = sptr[i]; k < sptr[i + 1]; k++)
      if (list[scol[k]] >= 0 && sval[k] > bs) bs = sval[k], best = list[scol[k]];
    if (best >= 0) agg[i] = best;
  }
  for (int i = 0; i < nn; i++) {
    if (agg[i] != -2) continue;
    agg[i] = nagg;
    for (int k = sptr[i]; k < sptr[i + 1]; k++)
      if (agg[scol[k]] == -2) agg[scol[k]] = nagg;
    nagg++;
  }
  *nagg_out = nagg;
done:
  free(node_of); free(nrm); free(sptr); free(acc); free(mark); free(list); free(active); free(scol); free(sval);
  return st;
}

/* P_tent and the coarse near-null space: per aggregate, B_a = Q_a R_a. cptr[a]: the aggregate's
 * first coarse unknown (k_a = min(rows, nmodes) of them). */
static int tentative(const cfAmgLevel* L, const unsigned char* dof_free, const int* agg, int nagg, int nm,
                     cfCsr* P, int* cptr, double** Bc_out) {
  const int n = L->n;
  int* cnt = calloc(nagg + 1, sizeof(int)); /* free rows per aggregate */
  int *rows_ptr = NULL, *rows = NULL;
  double *Bc = NULL, *W = NULL;
  int st = CF_OK;
  memset(P, 0, sizeof *P);
  if (!cnt) return cf_error(CF_ERR_NOMEM, "AMG: out of memory (tentative prolongator)");
  for (int i = 0; i < L->nnode; i++)
    if (agg[i] >= 0)
      for (int k = L->node_ptr[i]; k < L->node_ptr[i + 1]; k++) cnt[agg[i] + 1] += !dof_free || dof_free[k];
  rows_ptr = malloc(sizeof(int) * (nagg + 1));
  rows = malloc(sizeof(int) * (n > 0 ? n : 1));
  int maxr = 0;
  if (!rows_ptr || !rows) {
    st = cf_error(CF_ERR_NOMEM, "AMG: out of memory (tentative prolongator)");
    goto done;
  }
  rows_ptr[0] = 0;
  cptr[0] = 0;
  for (int a = 0; a < nagg; a++) {
    rows_ptr[a + 1] = rows_ptr[a] + cnt[a + 1];
    cptr[a + 1] = cptr[a] + (cnt[a + 1] < nm ? cnt[a + 1] : nm);
    if (cnt[a + 1] > maxr) maxr = cnt[a + 1];
  }
  for (int a = 0; a < nagg; a++) cnt[a] = rows_ptr[a];
  for (int i = 0; i < L->nnode; i++) /* nodes in order: each aggregate's rows ascending */
    if (agg[i] >= 0)
      for (int k = L->node_ptr[i]; k < L->node_ptr[i + 1]; k++)
        if (!dof_free || dof_free[k]) rows[cnt[agg[i]]++] = k;
  const int nc = cptr[nagg];
  /* P_tent: row r of aggregate a holds k_a entries (columns cptr[a] ..); other rows are empty */
  st = csr_alloc(P, n, nc, (long)rows_ptr[nagg] * nm);
  Bc = calloc((size_t)nc * nm + 1, sizeof(double));
  W = malloc(sizeof(double) * ((size_t)maxr * nm + nm + 1));
  if (st < 0 || !Bc || !W) {
    if (st >= 0) st = cf_error(CF_ERR_NOMEM, "AMG: out of memory (tentative prolongator)");
    goto done;
  }
  int* len = calloc(n + 1, sizeof(int));
  if (!len) {
    st = cf_error(CF_ERR_NOMEM, "AMG: out of memory (tentative prolongator)");
    goto done;
  }
  for (int a = 0; a < nagg; a++) {
    const int k = cptr[a + 1] - cptr[a];
    for (int q = rows_ptr[a]; q < rows_ptr[a + 1]; q++) len[rows[q]] = k;
  }
  P->ptr[0] = 0;
  for (int i = 0; i < n; i++) P->ptr[i + 1] = P->ptr[i] + len[i];
  free(len);
  for (int a = 0; a < nagg; a++) {
    const int m = rows_ptr[a + 1] - rows_ptr[a], k = cptr[a + 1] - cptr[a];
    double* tau = W + (size_t)m * nm;
    /* B_a, column-major m x nm */
    for (int q = 0; q < m; q++)
      for (int c = 0; c < nm; c++) W[q + (size_t)c * m] = L->B[(size_t)rows[rows_ptr[a] + q] * nm + c];
    lapack_int info = LAPACKE_dgeqrf(LAPACK_COL_MAJOR, m, nm, W, m, tau);
    if (info != 0) {
      st = cf_error(CF_ERR_SOLVER, "AMG: QR of aggregate %d failed (LAPACKE_dgeqrf %d)", a, (int)info);
      goto done;
    }
    /* R_a (k x nm, upper trapezoidal) into the coarse B rows */
    for (int r = 0; r < k; r++)
      for (int c = 0; c < nm; c++) Bc[(size_t)(cptr[a] + r) * nm + c] = c >= r ? W[r + (size_t)c * m] : 0.0;
    info = LAPACKE_dorgqr(LAPACK_COL_MAJOR, m, k, k, W, m, tau);
    if (info != 0) {
      st = cf_error(CF_ERR_SOLVER, "AMG: Q of aggregate %d failed (LAPACKE_dorgqr %d)", a, (int)info);
      goto done;
    }
    for (int q = 0; q < m; q++) {
      const int r = rows[rows_ptr[a] + q];
      for (int c = 0; c < k; c++) {
        P->col[P->ptr[r] + c] = cptr[a] + c;
        P->val[P->ptr[r] + c] = W[q + (size_t)c * m];
      }
    }
  }
  *Bc_out = Bc;
  Bc = NULL;
done:
  free(cnt); free(rows_ptr); free(rows); free(Bc); free(W);
  if (st < 0) cf_csr_free(P);
  return st;
}

static int level_vectors(cfAmgLevel* L, int block_diag) {
  L->x = malloc(sizeof(double) * (L->n + 1));
  L->b = malloc(sizeof(double) * (L->n + 1));
  L->r = malloc(sizeof(double) * (L->n + 1));
  L->d = malloc(sizeof(double) * (L->n + 1));
  L->w = malloc(sizeof(double) * (L->n + 1));
  L->dinv = malloc(sizeof(double) * (L->n + 1));
  if (!L->x || !L->b || !L->r || !L->d || !L->w || !L->dinv) return cf_error(CF_ERR_NOMEM, "AMG: out of memory (vectors)");
  for (int i = 0; i < L->n; i++) {
    double dg = 0;
    for (int k = L->A.ptr[i]; k < L->A.ptr[i + 1]; k++)
      if (L->A.col[k] == i) dg = L->A.val[k];
    if (!(dg > 0) || !isfinite(dg))
      return cf_error(CF_ERR_SOLVER, "AMG: diagonal entry %d = %g is not positive: matrix not positive definite", i, dg);
    L->dinv[i] = 1.0 / dg;
  }
  if (!block_diag) return CF_OK;
  /* the inverse diagonal blocks: Cholesky of each (LAPACKE dpotrf, dpotri), both triangles */
  L->dptr = malloc(sizeof(long) * (L->nnode + 1));
  if (!L->dptr) return cf_error(CF_ERR_NOMEM, "AMG: out of memory (diagonal blocks)");
  L->dptr[0] = 0;
  for (int i = 0; i < L->nnode; i++) {
    const long sz = L->node_ptr[i + 1] - L->node_ptr[i];
    L->dptr[i + 1] = L->dptr[i] + sz * sz;
  }
  L->dblk = calloc(L->dptr[L->nnode] + 1, sizeof(double));
  if (!L->dblk) return cf_error(CF_ERR_NOMEM, "AMG: out of memory (diagonal blocks)");
  for (int i = 0; i < L->nnode; i++) {
    const int a = L->node_ptr[i], sz = L->node_ptr[i + 1] - a;
    double* D = L->dblk + L->dptr[i];
    for (int r = 0; r < sz; r++)
      for (int k = L->A.ptr[a + r]; k < L->A.ptr[a + r + 1]; k++)
        if (L->A.col[k] >= a && L->A.col[k] < a + sz) D[r * sz + L->A.col[k] - a] = L->A.val[k];
    lapack_int info = LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', sz, D, sz);
    if (info == 0) info = LAPACKE_dpotri(LAPACK_ROW_MAJOR, 'L', sz, D, sz);
    if (info != 0)
      return cf_error(CF_ERR_SOLVER, "AMG: diagonal block of node %d is not positive definite (LAPACKE %d)", i, (int)info);
    for (int r = 0; r < sz; r++)
      for (int c = r + 1; c < sz; c++) D[r * sz + c] = D[c * sz + r];
  }
  return CF_OK;
}

/* Level l -> l+1: aggregation, P, R, A_{l+1}. Returns 1 when a coarser level was made, 0 when
 * coarsening stalled (l stays the coarsest). */
static int coarsen(cfAmg* amg, int l, const unsigned char* dof_free) {
  cfAmgLevel* L = amg->lev + l;
  const int nm = amg->opt.nmodes;
  int* agg = malloc(sizeof(int) * (L->nnode + 1));
  int* cptr = NULL;
  double* Bc = NULL;
  cfCsr Pt = {0}, S = {0}, AP = {0};
  int nagg = 0, st;
  if (!agg) return cf_error(CF_ERR_NOMEM, "AMG: out of memory");
  st = aggregate(L, dof_free, amg->opt.theta, agg, &nagg);
  if (st >= 0) {
    cptr = malloc(sizeof(int) * (nagg + 1));
    if (!cptr) st = cf_error(CF_ERR_NOMEM, "AMG: out of memory");
  }
  if (st >= 0) st = tentative(L, dof_free, agg, nagg, nm, &Pt, cptr, &Bc);
  free(agg);
  if (st >= 0 && (nagg == 0 || cptr[nagg] > 0.8 * L->n)) { /* no coarsening worth a level */
    cf_csr_free(&Pt);
    free(cptr);
    free(Bc);
    return 0;
  }
  if (st >= 0 && amg->opt.smooth_P) {
    /* S = I - omega D^-1 A (A's pattern), P = S P_tent */
    double rho = 1;
    st = spectral_radius(amg, l, &rho);
    L->lmax = rho;
    const double omega = 4.0 / 3.0 / rho;
    if (st >= 0 && L->dblk) { /* D^-1 A with the blocks: (block-diagonal CSR) A, then I - omega . */
      cfCsr Di = {0};
      st = csr_alloc(&Di, L->n, L->n, L->dptr[L->nnode]);
      if (st >= 0) {
        long q = 0;
        Di.ptr[0] = 0;
        for (int i = 0; i < L->nnode; i++) {
          const int a = L->node_ptr[i], sz = L->node_ptr[i + 1] - a;
          for (int r = 0; r < sz; r++) {
            for (int c = 0; c < sz; c++, q++) {
              Di.col[q] = a + c;
              Di.val[q] = L->dblk[L->dptr[i] + r * sz + c];
            }
            Di.ptr[a + r + 1] = (int)q;
          }
        }
        st = csr_matmul(&Di, &L->A, &S, amg_threads(amg));
      }
      cf_csr_free(&Di);
      for (int i = 0; st >= 0 && i < L->n; i++)
        for (int k = S.ptr[i]; k < S.ptr[i + 1]; k++) S.val[k] = (S.col[k] == i ? 1.0 : 0.0) - omega * S.val[k];
    } else if (st >= 0) {
      st = csr_alloc(&S, L->n, L->n, L->A.ptr[L->n]);
      if (st >= 0) {
        memcpy(S.ptr, L->A.ptr, sizeof(int) * (L->n + 1));
        memcpy(S.col, L->A.col, sizeof(int) * L->A.ptr[L->n]);
        for (int i = 0; i < L->n; i++)
          for (int k = L->A.ptr[i]; k < L->A.ptr[i + 1]; k++)
            S.val[k] = (L->A.col[k] == i ? 1.0 : 0.0) - omega * L->dinv[i] * L->A.val[k];
      }
    }
    if (st >= 0) st = csr_matmul(&S, &Pt, &L->P, amg_threads(amg));
    cf_csr_free(&S);
    cf_csr_free(&Pt);
  } else if (st >= 0) {
    L->P = Pt;
    memset(&Pt, 0, sizeof Pt);
  }
  if (st >= 0) st = cf_csr_transpose(&L->P, &L->R);
  if (st >= 0) st = csr_matmul(&L->A, &L->P, &AP, amg_threads(amg));
  cfAmgLevel* C = amg->lev + l + 1;
  if (st >= 0) st = csr_matmul(&L->R, &AP, &C->A, amg_threads(amg));
  cf_csr_free(&AP);
  if (st < 0) {
    free(cptr);
    free(Bc);
    return st;
  }
  C->n = C->A.nrow;
  C->nnode = nagg;
  C->node_ptr = cptr;
  C->B = Bc;
  st = level_vectors(C, amg->opt.block_diag);
  return st < 0 ? st : 1;
}

static int coarsest_factor(cfAmg* amg) {
  cfAmgLevel* L = amg->lev + amg->nlevel - 1;
  cholmod_start(&amg->cc);
  amg->cc_started = 1;
  amg->cc.supernodal = CHOLMOD_AUTO;
  cholmod_sparse As = {0}; /* the full symmetric CSR read as CSC (the same matrix), upper part used */
  As.nrow = As.ncol = L->n;
  As.nzmax = L->A.ptr[L->n];
  As.p = L->A.ptr;
  As.i = L->A.col;
  As.x = L->A.val;
  As.stype = 1;
  As.itype = CHOLMOD_INT;
  As.xtype = CHOLMOD_REAL;
  As.dtype = CHOLMOD_DOUBLE;
  As.sorted = 1;
  As.packed = 1;
  amg->L = cholmod_analyze(&As, &amg->cc);
  if (!amg->L) return cf_error(CF_ERR_SOLVER, "AMG: CHOLMOD analysis of the coarsest level failed (status %d)", amg->cc.status);
  cholmod_factorize(&As, amg->L, &amg->cc);
  if (amg->cc.status != CHOLMOD_OK)
    return cf_error(CF_ERR_SOLVER, "AMG: the coarsest level (%d unknowns) is not positive definite (CHOLMOD status %d)",
                    L->n, amg->cc.status);
  amg->cb = cholmod_allocate_dense(L->n, 1, L->n, CHOLMOD_REAL, &amg->cc);
  if (!amg->cb) return cf_error(CF_ERR_NOMEM, "AMG: out of memory (coarsest level)");
  memset(amg->cb->x, 0, sizeof(double) * L->n);
  /* the first solve allocates CHOLMOD's workspaces: here, not inside a step */
  if (!cholmod_solve2(CHOLMOD_A, amg->L, amg->cb, NULL, &amg->cx, NULL, &amg->cy, &amg->ce, &amg->cc))
    return cf_error(CF_ERR_SOLVER, "AMG: coarsest solve failed (CHOLMOD status %d)", amg->cc.status);
  return CF_OK;
}

int cf_amg_create(int nnode, const int* row_ptr, const int* col, const double* A, const double* X,
                  const unsigned char* fixed, const cfAmgOptions* opt, cfAmg** out) {
  *out = NULL;
  const double t0 = cf_wall_time();
  cfAmg* amg = calloc(1, sizeof *amg);
  if (!amg) return cf_error(CF_ERR_NOMEM, "AMG: out of memory");
  amg->opt = opt ? *opt : cf_amg_default_options();
  const cfAmgOptions o = amg->opt;
  if (o.nmodes < 1 || o.nmodes > 6 || o.cheb_degree < 1 || o.max_levels < 1) {
    free(amg);
    return cf_error(CF_ERR_ARG, "AMG: options out of range (modes %d, Chebyshev degree %d, levels %d)", o.nmodes,
                    o.cheb_degree, o.max_levels);
  }
  const int maxlev = amg->opt.max_levels;
  amg->lev = calloc(maxlev, sizeof(cfAmgLevel));
  if (!amg->lev) {
    free(amg);
    return cf_error(CF_ERR_NOMEM, "AMG: out of memory");
  }
  amg->nlevel = 1;
  cfAmgLevel* L0 = amg->lev;
  const int n = 3 * nnode, nm = amg->opt.nmodes;
  int st = CF_OK;
  /* level 0: the blocks (fixed DOFs as identity rows/columns), their scalar CSR for the setup */
  L0->n = n;
  L0->nnode = nnode;
  L0->nb = row_ptr[nnode];
  L0->bptr = row_ptr;
  L0->bcol = col;
  L0->bval = malloc(sizeof(double) * 9 * (size_t)L0->nb);
  L0->node_ptr = malloc(sizeof(int) * (nnode + 1));
  L0->B = calloc((size_t)n * nm + 1, sizeof(double));
  if (!L0->bval || !L0->node_ptr || !L0->B) st = cf_error(CF_ERR_NOMEM, "AMG: out of memory for %d nodes", nnode);
  if (st >= 0) st = csr_alloc(&L0->A, n, n, 9L * L0->nb);
  if (st >= 0) {
    long q = 0;
    for (int i = 0; i < nnode; i++) {
      L0->node_ptr[i] = 3 * i;
      for (int r = 0; r < 3; r++) {
        L0->A.ptr[3 * i + r] = (int)q;
        for (int k = row_ptr[i]; k < row_ptr[i + 1]; k++)
          for (int c = 0; c < 3; c++) {
            const int gi = 3 * i + r, gj = 3 * col[k] + c;
            double v = A[9 * (size_t)k + 3 * r + c];
            if (fixed && (fixed[gi] || fixed[gj])) v = gi == gj ? 1.0 : 0.0;
            L0->bval[9 * (size_t)k + 3 * r + c] = v;
            L0->A.col[q] = gj;
            L0->A.val[q] = v;
            q++;
          }
      }
    }
    L0->A.ptr[n] = (int)q;
    L0->node_ptr[nnode] = n;
    /* rigid-body modes about the centroid, lengths scaled by the part's size */
    double c[3] = {0, 0, 0}, lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int i = 0; i < nnode; i++)
      for (int k = 0; k < 3; k++) {
        c[k] += X[3 * i + k] / nnode;
        lo[k] = fmin(lo[k], X[3 * i + k]);
        hi[k] = fmax(hi[k], X[3 * i + k]);
      }
    double size = fmax(hi[0] - lo[0], fmax(hi[1] - lo[1], hi[2] - lo[2]));
    if (!(size > 0)) size = 1;
    for (int i = 0; i < nnode; i++) {
      const double x = (X[3 * i] - c[0]) / size, y = (X[3 * i + 1] - c[1]) / size, z = (X[3 * i + 2] - c[2]) / size;
      /* rows: dx, dy, dz of the modes tx, ty, tz, rx = e_x cross p, ry, rz */
      const double modes[3][6] = {{1, 0, 0, 0, z, -y}, {0, 1, 0, -z, 0, x}, {0, 0, 1, y, -x, 0}};
      for (int r = 0; r < 3; r++)
        for (int k = 0; k < nm; k++)
          L0->B[(size_t)(3 * i + r) * nm + k] = fixed && fixed[3 * i + r] ? 0.0 : modes[r][k];
    }
    st = level_vectors(L0, amg->opt.block_diag);
  }
  unsigned char* dof_free = NULL;
  if (st >= 0 && fixed) {
    dof_free = malloc(n + 1);
    if (!dof_free) st = cf_error(CF_ERR_NOMEM, "AMG: out of memory");
    else
      for (int i = 0; i < n; i++) dof_free[i] = !fixed[i];
  }
  while (st >= 0 && amg->nlevel < maxlev && amg->lev[amg->nlevel - 1].n > amg->opt.coarse_max) {
    const int l = amg->nlevel - 1;
    st = coarsen(amg, l, l == 0 ? dof_free : NULL);
    if (st == 0) break;
    if (st > 0) amg->nlevel++;
  }
  free(dof_free);
  /* smoother bounds of the levels that smooth: rho(D^-1 A) (already there when P was smoothed) */
  for (int l = 0; st >= 0 && l < amg->nlevel - 1; l++)
    if (!(amg->lev[l].lmax > 0)) st = spectral_radius(amg, l, &amg->lev[l].lmax);
  if (st >= 0) st = coarsest_factor(amg);
  if (st >= 0 && amg->nlevel > 1) cf_csr_free(&L0->A); /* level 0 runs on the blocks */
  if (st < 0) {
    cf_amg_free(amg); /* sets no message: cf_last_error() still names the failure */
    return st;
  }
  amg->setup_s = cf_wall_time() - t0;
  *out = amg;
  return CF_OK;
}

void cf_amg_free(cfAmg* amg) {
  if (!amg) return;
  for (int l = 0; l < amg->opt.max_levels && amg->lev; l++) {
    cfAmgLevel* L = amg->lev + l;
    cf_csr_free(&L->A);
    cf_csr_free(&L->P);
    cf_csr_free(&L->R);
    free(L->bval); free(L->dinv); free(L->dptr); free(L->dblk); free(L->node_ptr); free(L->B);
    free(L->x); free(L->b); free(L->r); free(L->d); free(L->w);
  }
  if (amg->cc_started) {
    if (amg->L) cholmod_free_factor(&amg->L, &amg->cc);
    cholmod_free_dense(&amg->cb, &amg->cc);
    cholmod_free_dense(&amg->cx, &amg->cc);
    cholmod_free_dense(&amg->cy, &amg->cc);
    cholmod_free_dense(&amg->ce, &amg->cc);
    cholmod_finish(&amg->cc);
  }
  free(amg->lev);
  free(amg);
}

/* ---- application ----------------------------------------------------------------------------- */

/* Chebyshev smoothing of A x = b on level l (Saad, Iterative Methods, alg. 12.1, on D^-1 A over
 * [1.1 rho / 30, 1.1 rho]: the upper part of the spectrum, which the coarse level cannot reach;
 * 1.1: rho is estimated from below):
 *   r = b - A x, d = D^-1 r / theta, x += d;  then deg - 1 times
 *   r -= A d, rho' = 1 / (2 sigma - rho), d = rho' rho d + 2 rho' / delta D^-1 r, x += d
 * zero: x = 0 on entry (no first product). want_r: leave r = b - A x (one more product). */
static void chebyshev(const cfAmg* amg, int l, const double* b, double* x, int zero, int want_r) {
  const cfAmgLevel* L = amg->lev + l;
  const int n = L->n, deg = amg->opt.cheb_degree;
  double *r = L->r, *d = L->d, *w = L->w;
  const double up = 1.1 * L->lmax, lo = up / 30.0;
  const double theta = 0.5 * (up + lo), delta = 0.5 * (up - lo), sigma = theta / delta;
  double rho = 1.0 / sigma;
  if (zero) {
    memcpy(r, b, sizeof(double) * n);
  } else {
    cf_amg_spmv(amg, l, x, w);
    for (int i = 0; i < n; i++) r[i] = b[i] - w[i];
  }
  diag_solve(amg, L, r, d);
  for (int i = 0; i < n; i++) {
    d[i] /= theta;
    x[i] = zero ? d[i] : x[i] + d[i];
  }
  for (int k = 1; k < deg; k++) {
    cf_amg_spmv(amg, l, d, w);
    const double rho1 = 1.0 / (2.0 * sigma - rho), c1 = rho1 * rho, c2 = 2.0 * rho1 / delta;
    for (int i = 0; i < n; i++) r[i] -= w[i];
    diag_solve(amg, L, r, w);
    for (int i = 0; i < n; i++) {
      d[i] = c1 * d[i] + c2 * w[i];
      x[i] += d[i];
    }
    rho = rho1;
  }
  if (want_r) {
    cf_amg_spmv(amg, l, d, w);
    for (int i = 0; i < n; i++) r[i] -= w[i];
  }
}

/* x += P xc, row by row */
static void prolong_row(const cfCsr* P, int i, const double* xc, double* x) {
  double s = 0;
  for (int k = P->ptr[i]; k < P->ptr[i + 1]; k++) s += P->val[k] * xc[P->col[k]];
  x[i] += s;
}

static int vcycle(cfAmg* amg, int l, const double* b, double* x) {
  cfAmgLevel* L = amg->lev + l;
  if (l == amg->nlevel - 1) { /* x = L^-T L^-1 b */
    memcpy(amg->cb->x, b, sizeof(double) * L->n);
    if (!cholmod_solve2(CHOLMOD_A, amg->L, amg->cb, NULL, &amg->cx, NULL, &amg->cy, &amg->ce, &amg->cc))
      return cf_error(CF_ERR_SOLVER, "AMG: coarsest solve failed (CHOLMOD status %d)", amg->cc.status);
    memcpy(x, amg->cx->x, sizeof(double) * L->n);
    return CF_OK;
  }
  cfAmgLevel* C = L + 1;
  chebyshev(amg, l, b, x, 1, 1);        /* x = S b, r = b - A x */
  csr_spmv_t(&L->R, L->r, C->b, amg_threads(amg)); /* b_c = R r */
  int st = vcycle(amg, l + 1, C->b, C->x);
  if (st < 0) return st;
  CF_FOR_T(amg_threads(amg), i, L->n, L->n > 4096, prolong_row(&L->P, i, C->x, x)); /* x += P x_c */
  chebyshev(amg, l, b, x, 0, 0);        /* x += S (b - A x) */
  return CF_OK;
}

int cf_amg_apply(cfAmg* amg, const double* r, double* z) {
  return vcycle(amg, 0, r, z);
}

static double spmv_bytes(const cfAmgLevel* L) {
  if (L->bval) return 76.0 * L->nb + 4.0 * (L->nnode + 1) + 16.0 * L->n;
  return 12.0 * L->A.ptr[L->n] + 4.0 * (L->n + 1) + 16.0 * L->n;
}

static double csr_bytes(const cfCsr* a) {
  return 12.0 * a->ptr[a->nrow] + 4.0 * (a->nrow + 1) + 8.0 * a->ncol + 8.0 * a->nrow;
}

static double bytes_per_cycle(const cfAmg* amg, int dense_coarsest, double* op_complexity);

double cf_amg_bytes_per_cycle(const cfAmg* amg, double* op_complexity) {
  return bytes_per_cycle(amg, 0, op_complexity);
}

double cf_amg_bytes_per_cycle_gpu(const cfAmg* amg) {
  return bytes_per_cycle(amg, 1, NULL);
}

static double bytes_per_cycle(const cfAmg* amg, int dense_coarsest, double* op_complexity) {
  double bytes = 0, nnz0 = 0, nnz = 0;
  const int deg = amg->opt.cheb_degree;
  for (int l = 0; l < amg->nlevel; l++) {
    const cfAmgLevel* L = amg->lev + l;
    const double nz = L->bval ? 9.0 * L->nb : (double)L->A.ptr[L->n];
    if (l == 0) nnz0 = nz;
    nnz += nz;
    if (l == amg->nlevel - 1) { /* the coarsest: b read, x written, and */
      const double lnz = amg->L ? (amg->L->is_super ? (double)amg->L->xsize : (double)amg->L->nzmax) : 0;
      bytes += (dense_coarsest ? 8.0 * (double)L->n * L->n /* the device's dense inverse */
                               : 2 * 12.0 * lnz) /* both triangular solves reading the factor */
               + 16.0 * L->n;
      continue;
    }
    /* 2 deg products with A; per Chebyshev step r -= w (3 vectors), w = D^-1 r (2 and the
     * inverse blocks), d = c1 d + c2 w, x += d (5): 10 vectors; R (its input r, output b_c), P
     * (x read and written) */
    const double dbytes = 8.0 * (L->dblk ? (double)L->dptr[L->nnode] : (double)L->n);
    bytes += 2 * deg * (spmv_bytes(L) + 80.0 * L->n + dbytes) + csr_bytes(&L->R) + csr_bytes(&L->P) + 8.0 * L->n;
  }
  if (op_complexity) *op_complexity = nnz0 > 0 ? nnz / nnz0 : 0;
  return bytes;
}

double cf_amg_value_bytes_per_cycle(const cfAmg* amg) {
  double bytes = 0;
  for (int l = 0; l < amg->nlevel - 1; l++) {
    const cfAmgLevel* L = amg->lev + l;
    const double nz = L->bval ? 9.0 * L->nb : (double)L->A.ptr[L->n];
    bytes += 8.0 * (2 * amg->opt.cheb_degree * nz + (double)L->P.ptr[L->P.nrow] + (double)L->R.ptr[L->R.nrow]);
  }
  return bytes;
}

void cf_amg_describe(const cfAmg* amg, char* buf, int size) {
  int off = 0;
  for (int l = 0; l < amg->nlevel && off < size; l++) {
    const cfAmgLevel* L = amg->lev + l;
    const long nz = L->bval ? 9L * L->nb : (long)L->A.ptr[L->n];
    off += snprintf(buf + off, size - off, "level %d: %d unknowns, %ld nonzeros (%.1f per row), %d nodes%s%s\n", l,
                    L->n, nz, L->n ? (double)nz / L->n : 0.0, L->nnode, l == amg->nlevel - 1 ? ", CHOLMOD" : "",
                    l == 0 ? " (3x3 blocks)" : "");
  }
}
