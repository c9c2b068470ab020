/* Rotated-Cholesky preconditioner: P^-1 = Q A0^-1 Q^T.
 * A0 = cm M + ck K is the system matrix of the undeformed part (R_e = I), factored once by
 * CHOLMOD. When the part rotates rigidly by Q, A = Q A0 Q^T exactly (every R_e = Q and
 * R K_e R^T = Q K_e Q^T), so this P is the exact inverse; for deformations it is as good as
 * the node rotations Q_n describe the element rotations around each node.
 * The triangular solves are our own loops over CHOLMOD's supernodes (dense column-major blocks):
 * for the small factors of real-time parts, CHOLMOD's solve spends more in its per-supernode
 * BLAS calls (locks, dispatch) than in arithmetic. */
#include "fem/fem_precond.h"
#include "fem/fem_newton.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fem/fem_amg.h"
#include "fem/fem_element.h"
#include "fem/fem_parallel.h"
#include "fem/fem_sparse.h"

/* A supernodal L L^T factor copied out of CHOLMOD: A(perm, perm) = L L^T. Supernode s holds
 * columns super[s] .. super[s+1]-1 (nc of them) and nsrow = pi[s+1] - pi[s] rows, the first nc
 * being its own columns. Stored per supernode at x + px[s]: the triangle column by column
 * (column j: rows j .. nc-1, packed), then the rectangle below it column-major (nr = nsrow - nc
 * rows, row indices rows[pi[s] + nc ..]); dinv = 1 / the diagonal. Every inner loop of the
 * solve runs over contiguous memory, and the factor is stored once (it has to stay in cache). */
typedef struct SuperFactor {
  int n, nsuper;
  int *perm, *super, *pi, *rows;
  long* px;
  double *x, *dinv;
} SuperFactor;

struct cfPrecond {
  cfAmg *amg_supports, *amg_free; /* the AMG preconditioner: P^-1 = Q AMG(A0) Q^T (fem_amg.c) */
  cfSparseSolver with_supports, free_body;
  SuperFactor L_supports, L_free; /* n = 0: not copied, CHOLMOD solves */
  int have_supports;
  double *t, *y; /* [ndof] scratch */
  double* w;     /* [ndof] rows below a supernode's triangle */
  double* ye;    /* [24 ntet] element products of the matrix-free step, then [9 ntet] G_e */
};

static void super_free(SuperFactor* f) {
  free(f->perm); free(f->super); free(f->pi); free(f->rows); free(f->px); free(f->x); free(f->dinv);
  memset(f, 0, sizeof *f);
}

/* offset of column j of a packed nc x nc lower triangle */
static inline long tri_col(int j, int nc) {
  return (long)j * nc - (long)j * (j - 1) / 2;
}

/* Copy a supernodal LL^T factor; returns 0 (and leaves f empty) if L is not one. */
static int super_copy(const cholmod_factor* L, SuperFactor* f) {
  memset(f, 0, sizeof *f);
  if (!L->is_super || !L->is_ll || L->xtype != CHOLMOD_REAL || L->itype != CHOLMOD_INT || L->n > INT_MAX) return 0;
  const int n = (int)L->n, ns = (int)L->nsuper;
  const int *super = L->super, *pi = L->pi, *px = L->px, *s = L->s, *perm = L->Perm;
  const double* Lx = L->x;
  long size = 0;
  for (int k = 0; k < ns; k++) {
    const long nc = super[k + 1] - super[k], nr = pi[k + 1] - pi[k] - nc;
    size += nc * (nc + 1) / 2 + nc * nr;
  }
  f->perm = malloc(sizeof(int) * n);
  f->super = malloc(sizeof(int) * (ns + 1));
  f->pi = malloc(sizeof(int) * (ns + 1));
  f->px = malloc(sizeof(long) * (ns + 1));
  f->rows = malloc(sizeof(int) * (pi[ns] > 0 ? pi[ns] : 1));
  f->x = malloc(sizeof(double) * (size > 0 ? size : 1));
  f->dinv = malloc(sizeof(double) * (n > 0 ? n : 1));
  if (!f->perm || !f->super || !f->pi || !f->px || !f->rows || !f->x || !f->dinv) {
    super_free(f);
    return 0;
  }
  memcpy(f->perm, perm, sizeof(int) * n);
  memcpy(f->super, super, sizeof(int) * (ns + 1));
  memcpy(f->pi, pi, sizeof(int) * (ns + 1));
  memcpy(f->rows, s, sizeof(int) * pi[ns]);
  f->px[0] = 0;
  for (int k = 0; k < ns; k++) {
    const int k1 = super[k], nc = super[k + 1] - k1, nsrow = pi[k + 1] - pi[k], nr = nsrow - nc;
    const double* X = Lx + px[k];
    double* T = f->x + f->px[k];
    double* B = T + tri_col(nc, nc);
    for (int j = 0; j < nc; j++) {
      for (int i = j; i < nc; i++) T[tri_col(j, nc) + i - j] = X[i + (long)j * nsrow];
      for (int i = 0; i < nr; i++) B[i + (long)j * nr] = X[nc + i + (long)j * nsrow];
      f->dinv[k1 + j] = 1.0 / X[j + (long)j * nsrow];
    }
    f->px[k + 1] = f->px[k] + tri_col(nc, nc) + (long)nc * nr;
  }
  f->n = n;
  f->nsuper = ns;
  return 1;
}

/* t = L^-T L^-1 t in place (w: scratch, as long as the largest rectangle's row count).
 * Both by blocks of four columns, so that the vector updated or read is touched once per four
 * columns: forward, the 4 x 4 triangle then the rows below it; backward, four independent dot
 * products of the columns against what is already solved, then the 4 x 4 triangle. */
static void super_solve(const SuperFactor* f, double* t, double* w) {
  for (int s = 0; s < f->nsuper; s++) {
    const int k1 = f->super[s], nc = f->super[s + 1] - k1, nr = f->pi[s + 1] - f->pi[s] - nc;
    const int* rows = f->rows + f->pi[s] + nc;
    const double* T = f->x + f->px[s];
    const double* B = T + tri_col(nc, nc);
    double* ts = t + k1;
    for (int i = 0; i < nr; i++) w[i] = 0;
    for (int j0 = 0; j0 < nc; j0 += 4) {
      const int nb = nc - j0 < 4 ? nc - j0 : 4, j1 = j0 + nb; /* columns j0 .. j1-1 */
      /* the nb x nb triangle */
      for (int j = j0; j < j1; j++) {
        const double* col = T + tri_col(j, nc) - j; /* col[i], i = j .. nc-1 */
        const double yj = ts[j] * f->dinv[k1 + j];
        ts[j] = yj;
        for (int i = j + 1; i < j1; i++) ts[i] -= col[i] * yj;
      }
      /* the rows below it, in the triangle and in the rectangle, four columns at once */
      if (nb == 4) {
        const double *t0 = T + tri_col(j0, nc) - j0, *t1 = T + tri_col(j0 + 1, nc) - (j0 + 1),
                     *t2 = T + tri_col(j0 + 2, nc) - (j0 + 2), *t3 = T + tri_col(j0 + 3, nc) - (j0 + 3);
        const double y0 = ts[j0], y1 = ts[j0 + 1], y2 = ts[j0 + 2], y3 = ts[j0 + 3];
        for (int i = j1; i < nc; i++) ts[i] -= t0[i] * y0 + t1[i] * y1 + t2[i] * y2 + t3[i] * y3;
        const double *c0 = B + (long)j0 * nr, *c1 = c0 + nr, *c2 = c1 + nr, *c3 = c2 + nr;
        for (int i = 0; i < nr; i++) w[i] += c0[i] * y0 + c1[i] * y1 + c2[i] * y2 + c3[i] * y3;
      } else {
        for (int j = j0; j < j1; j++) {
          const double* tc = T + tri_col(j, nc) - j;
          const double* c = B + (long)j * nr;
          const double yj = ts[j];
          for (int i = j1; i < nc; i++) ts[i] -= tc[i] * yj;
          for (int i = 0; i < nr; i++) w[i] += c[i] * yj;
        }
      }
    }
    for (int i = 0; i < nr; i++) t[rows[i]] -= w[i];
  }
  for (int s = f->nsuper - 1; s >= 0; s--) {
    const int k1 = f->super[s], nc = f->super[s + 1] - k1, nr = f->pi[s + 1] - f->pi[s] - nc;
    const int* rows = f->rows + f->pi[s] + nc;
    const double* T = f->x + f->px[s];
    const double* B = T + tri_col(nc, nc);
    double* ts = t + k1;
    for (int i = 0; i < nr; i++) w[i] = t[rows[i]];
    int j = nc;
    while (j > 0) {
      const int j0 = j >= 4 ? j - 4 : 0, nb = j - j0; /* columns j0 .. j-1 */
      double sb[4] = {0, 0, 0, 0};
      /* against the rectangle (w) and the solved part of the triangle (ts[j ..]) */
      if (nb == 4) {
        const double *c0 = B + (long)j0 * nr, *c1 = c0 + nr, *c2 = c1 + nr, *c3 = c2 + nr;
        double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        for (int i = 0; i < nr; i++) {
          s0 += c0[i] * w[i];
          s1 += c1[i] * w[i];
          s2 += c2[i] * w[i];
          s3 += c3[i] * w[i];
        }
        const double *t0 = T + tri_col(j0, nc) - j0, *t1 = T + tri_col(j0 + 1, nc) - (j0 + 1),
                     *t2 = T + tri_col(j0 + 2, nc) - (j0 + 2), *t3 = T + tri_col(j0 + 3, nc) - (j0 + 3);
        for (int i = j; i < nc; i++) {
          s0 += t0[i] * ts[i];
          s1 += t1[i] * ts[i];
          s2 += t2[i] * ts[i];
          s3 += t3[i] * ts[i];
        }
        sb[0] = s0, sb[1] = s1, sb[2] = s2, sb[3] = s3;
      } else {
        for (int b = 0; b < nb; b++) {
          const double* c = B + (long)(j0 + b) * nr;
          const double* tc = T + tri_col(j0 + b, nc) - (j0 + b);
          double sum = 0;
          for (int i = 0; i < nr; i++) sum += c[i] * w[i];
          for (int i = j; i < nc; i++) sum += tc[i] * ts[i];
          sb[b] = sum;
        }
      }
      /* the nb x nb triangle, bottom up */
      for (int b = nb - 1; b >= 0; b--) {
        const int jj = j0 + b;
        const double* tc = T + tri_col(jj, nc) - jj;
        double sum = ts[jj] - sb[b];
        for (int i = jj + 1; i < j; i++) sum -= tc[i] * ts[i];
        ts[jj] = sum * f->dinv[k1 + jj];
      }
      j = j0;
    }
  }
}

/* super_solve for Q right-hand sides at once: t row-major [n][Q] (the Q values of a row
 * contiguous), w [rows of the largest rectangle][Q]. Each factor entry is read once for all the
 * columns, and, as in super_solve, by blocks of four factor columns (the Q-vectors of t and w
 * updated or read are touched once per four columns). Same operations per right-hand side as
 * super_solve, in another summation order. One function per Q (1 .. 8) so that the loops over
 * the right-hand sides have a constant length (unrolled, kept in registers). */
#define SUPER_SOLVE_MULTI(Q)                                                                             \
  static void super_solve_multi_##Q(const SuperFactor* f, double* t, double* w) {                      \
    for (int s = 0; s < f->nsuper; s++) {                                                              \
      const int k1 = f->super[s], nc = f->super[s + 1] - k1, nr = f->pi[s + 1] - f->pi[s] - nc;        \
      const int* rows = f->rows + f->pi[s] + nc;                                                       \
      const double* T = f->x + f->px[s];                                                               \
      const double* B = T + tri_col(nc, nc);                                                           \
      double* ts = t + (long)k1 * Q;                                                                   \
      for (long i = 0; i < (long)nr * Q; i++) w[i] = 0;                                                \
      for (int j0 = 0; j0 < nc; j0 += 4) {                                                             \
        const int nb = nc - j0 < 4 ? nc - j0 : 4, j1 = j0 + nb;                                        \
        for (int j = j0; j < j1; j++) { /* the nb x nb triangle */                                     \
          const double* col = T + tri_col(j, nc) - j;                                                  \
          double* yj = ts + (long)j * Q;                                                               \
          const double dj = f->dinv[k1 + j];                                                           \
          for (int r = 0; r < Q; r++) yj[r] *= dj;                                                     \
          for (int i = j + 1; i < j1; i++)                                                             \
            for (int r = 0; r < Q; r++) ts[(long)i * Q + r] -= col[i] * yj[r];                         \
        }                                                                                              \
        if (nb == 4) { /* the rows below it, four columns at once */                                   \
          const double *t0 = T + tri_col(j0, nc) - j0, *t1 = T + tri_col(j0 + 1, nc) - (j0 + 1),       \
                       *t2 = T + tri_col(j0 + 2, nc) - (j0 + 2), *t3 = T + tri_col(j0 + 3, nc) - (j0 + 3); \
          double y0[Q], y1[Q], y2[Q], y3[Q];                                                           \
          for (int r = 0; r < Q; r++)                                                                  \
            y0[r] = ts[(long)j0 * Q + r], y1[r] = ts[(long)(j0 + 1) * Q + r],                          \
            y2[r] = ts[(long)(j0 + 2) * Q + r], y3[r] = ts[(long)(j0 + 3) * Q + r];                    \
          for (int i = j1; i < nc; i++)                                                                \
            for (int r = 0; r < Q; r++)                                                                \
              ts[(long)i * Q + r] -= t0[i] * y0[r] + t1[i] * y1[r] + t2[i] * y2[r] + t3[i] * y3[r];    \
          const double *c0 = B + (long)j0 * nr, *c1 = c0 + nr, *c2 = c1 + nr, *c3 = c2 + nr;           \
          for (int i = 0; i < nr; i++)                                                                 \
            for (int r = 0; r < Q; r++)                                                                \
              w[(long)i * Q + r] += c0[i] * y0[r] + c1[i] * y1[r] + c2[i] * y2[r] + c3[i] * y3[r];     \
        } else {                                                                                       \
          for (int j = j0; j < j1; j++) {                                                              \
            const double* tc = T + tri_col(j, nc) - j;                                                 \
            const double* c = B + (long)j * nr;                                                        \
            const double* yj = ts + (long)j * Q;                                                       \
            for (int i = j1; i < nc; i++)                                                              \
              for (int r = 0; r < Q; r++) ts[(long)i * Q + r] -= tc[i] * yj[r];                        \
            for (int i = 0; i < nr; i++)                                                               \
              for (int r = 0; r < Q; r++) w[(long)i * Q + r] += c[i] * yj[r];                          \
          }                                                                                            \
        }                                                                                              \
      }                                                                                                \
      for (int i = 0; i < nr; i++)                                                                     \
        for (int r = 0; r < Q; r++) t[(long)rows[i] * Q + r] -= w[(long)i * Q + r];                    \
    }                                                                                                  \
    for (int s = f->nsuper - 1; s >= 0; s--) {                                                         \
      const int k1 = f->super[s], nc = f->super[s + 1] - k1, nr = f->pi[s + 1] - f->pi[s] - nc;        \
      const int* rows = f->rows + f->pi[s] + nc;                                                       \
      const double* T = f->x + f->px[s];                                                               \
      const double* B = T + tri_col(nc, nc);                                                           \
      double* ts = t + (long)k1 * Q;                                                                   \
      for (int i = 0; i < nr; i++)                                                                     \
        for (int r = 0; r < Q; r++) w[(long)i * Q + r] = t[(long)rows[i] * Q + r];                     \
      int j = nc;                                                                                      \
      while (j > 0) {                                                                                  \
        const int j0 = j >= 4 ? j - 4 : 0, nb = j - j0; /* columns j0 .. j-1 */                        \
        double sb[4][Q];                                                                               \
        if (nb == 4) { /* against the rectangle (w) and the solved part of the triangle */             \
          const double *c0 = B + (long)j0 * nr, *c1 = c0 + nr, *c2 = c1 + nr, *c3 = c2 + nr;           \
          const double *t0 = T + tri_col(j0, nc) - j0, *t1 = T + tri_col(j0 + 1, nc) - (j0 + 1),       \
                       *t2 = T + tri_col(j0 + 2, nc) - (j0 + 2), *t3 = T + tri_col(j0 + 3, nc) - (j0 + 3); \
          double s0[Q], s1[Q], s2[Q], s3[Q];                                                           \
          for (int r = 0; r < Q; r++) s0[r] = s1[r] = s2[r] = s3[r] = 0;                               \
          for (int i = 0; i < nr; i++)                                                                 \
            for (int r = 0; r < Q; r++) {                                                              \
              const double wr = w[(long)i * Q + r];                                                    \
              s0[r] += c0[i] * wr, s1[r] += c1[i] * wr, s2[r] += c2[i] * wr, s3[r] += c3[i] * wr;      \
            }                                                                                          \
          for (int i = j; i < nc; i++)                                                                 \
            for (int r = 0; r < Q; r++) {                                                              \
              const double xr = ts[(long)i * Q + r];                                                   \
              s0[r] += t0[i] * xr, s1[r] += t1[i] * xr, s2[r] += t2[i] * xr, s3[r] += t3[i] * xr;      \
            }                                                                                          \
          for (int r = 0; r < Q; r++) sb[0][r] = s0[r], sb[1][r] = s1[r], sb[2][r] = s2[r], sb[3][r] = s3[r]; \
        } else {                                                                                       \
          for (int b = 0; b < nb; b++) {                                                               \
            const double* c = B + (long)(j0 + b) * nr;                                                 \
            const double* tc = T + tri_col(j0 + b, nc) - (j0 + b);                                     \
            for (int r = 0; r < Q; r++) sb[b][r] = 0;                                                  \
            for (int i = 0; i < nr; i++)                                                               \
              for (int r = 0; r < Q; r++) sb[b][r] += c[i] * w[(long)i * Q + r];                       \
            for (int i = j; i < nc; i++)                                                               \
              for (int r = 0; r < Q; r++) sb[b][r] += tc[i] * ts[(long)i * Q + r];                     \
          }                                                                                            \
        }                                                                                              \
        for (int b = nb - 1; b >= 0; b--) { /* the nb x nb triangle, bottom up */                      \
          const int jj = j0 + b;                                                                       \
          const double* tc = T + tri_col(jj, nc) - jj;                                                 \
          for (int r = 0; r < Q; r++) {                                                                \
            double sum = ts[(long)jj * Q + r] - sb[b][r];                                              \
            for (int i = jj + 1; i < j; i++) sum -= tc[i] * ts[(long)i * Q + r];                       \
            ts[(long)jj * Q + r] = sum * f->dinv[k1 + jj];                                             \
          }                                                                                            \
        }                                                                                              \
        j = j0;                                                                                        \
      }                                                                                                \
    }                                                                                                  \
  }
SUPER_SOLVE_MULTI(1)
SUPER_SOLVE_MULTI(2)
SUPER_SOLVE_MULTI(3)
SUPER_SOLVE_MULTI(4)
SUPER_SOLVE_MULTI(5)
SUPER_SOLVE_MULTI(6)
SUPER_SOLVE_MULTI(7)
SUPER_SOLVE_MULTI(8)
#undef SUPER_SOLVE_MULTI
#define MULTI_MAX 8 /* right-hand sides per pass; more are done in passes of 8 */

static void super_solve_multi(const SuperFactor* f, double* t, double* w, int q) {
  switch (q) {
    case 1: super_solve_multi_1(f, t, w); break;
    case 2: super_solve_multi_2(f, t, w); break;
    case 3: super_solve_multi_3(f, t, w); break;
    case 4: super_solve_multi_4(f, t, w); break;
    case 5: super_solve_multi_5(f, t, w); break;
    case 6: super_solve_multi_6(f, t, w); break;
    case 7: super_solve_multi_7(f, t, w); break;
    default: super_solve_multi_8(f, t, w); break;
  }
}

long cf_precond_apply_multi_work(const cfModel* m, int nrhs) {
  return 2L * m->ndof * (nrhs > 0 ? nrhs : 1);
}

int cf_precond_apply_multi(const cfModel* m, cfData* d, int nrhs, const double* const* r, double* const* z,
                           double* work) {
  struct cfPrecond* p = d->precond;
  const double* Q = d->node_R;
  const int supports = d->supports_active && p->have_supports;
  const SuperFactor* f = supports ? &p->L_supports : &p->L_free;
  if (p->amg_free || !f->n) { /* no copied factor: one column at a time */
    for (int c = 0; c < nrhs; c++) {
      int st = cf_precond_apply(m, d, r[c], z[c]);
      if (st < 0) return st;
    }
    return CF_OK;
  }
  if (nrhs > MULTI_MAX) { /* passes of MULTI_MAX columns */
    for (int c0 = 0; c0 < nrhs; c0 += MULTI_MAX) {
      int st = cf_precond_apply_multi(m, d, nrhs - c0 < MULTI_MAX ? nrhs - c0 : MULTI_MAX, r + c0, z + c0, work);
      if (st < 0) return st;
    }
    return CF_OK;
  }
  const int q = nrhs, n = m->ndof;
  double *T = work, *W = work + (long)n * q; /* T [ndof][q]: Q^T r in the factor's order */
  for (int c = 0; c < q; c++) {
    const double* rc = r[c];
    double* t = p->t;
    for (int nd = 0; nd < m->nnode; nd++) /* t = Q^T r */
      for (int i = 0; i < 3; i++)
        t[3 * nd + i] = Q[9 * nd + i] * rc[3 * nd] + Q[9 * nd + 3 + i] * rc[3 * nd + 1] + Q[9 * nd + 6 + i] * rc[3 * nd + 2];
    if (supports)
      for (int i = 0; i < n; i++)
        if (m->fixed[i]) t[i] = 0;
    for (int k = 0; k < n; k++) T[(long)k * q + c] = t[f->perm[k]];
  }
  super_solve_multi(f, T, W, q);
  for (int c = 0; c < q; c++) {
    double* y = p->y;
    double* zc = z[c];
    for (int k = 0; k < n; k++) y[f->perm[k]] = T[(long)k * q + c];
    for (int nd = 0; nd < m->nnode; nd++) /* z = Q y */
      for (int i = 0; i < 3; i++)
        zc[3 * nd + i] = Q[9 * nd + 3 * i] * y[3 * nd] + Q[9 * nd + 3 * i + 1] * y[3 * nd + 1] + Q[9 * nd + 3 * i + 2] * y[3 * nd + 2];
  }
  return CF_OK;
}

double* cf_precond_scratch(cfData* d) {
  return d->precond->ye;
}

void cf_system_coefficients(const cfModel* m, double h, double* cm, double* ck) {
  if (m->def.integrator == CF_INTEGRATOR_GENERALIZED_ALPHA) {
    cf_newton_coefficients(m, h, cm, ck, NULL); /* the Newton matrix (fem_newton.c) */
  } else if (m->def.integrator == CF_INTEGRATOR_NEWMARK) {
    *cm = 1.0 + 0.5 * h * m->def.rayleigh_alpha;
    *ck = 0.5 * h * m->def.rayleigh_beta + 0.25 * h * h;
  } else {
    *cm = 1.0 + h * m->def.rayleigh_alpha;
    *ck = h * m->def.rayleigh_beta + h * h;
  }
}

/* A0 = cm M + ck K + eps I (K_R at R = I is K_e itself; eps I is rotation invariant, so
 * Q (A0 + eps I) Q^T = Q A0 Q^T + eps I) */
static void rest_matrix(const cfModel* m, double cm, double ck, double eps, double* A0) {
  CF_FOR(m, k, m->nnzb, m->nnzb > 16384, cf_block_gather_n(k, m->npe, m->blk_src_ptr, m->blk_src, m->Ke, m->Mblk, cm, ck, A0));
  if (eps != 0)
    for (int n = 0; n < m->nnode; n++)
      for (int a = 0; a < 3; a++) A0[9 * (size_t)m->diag[n] + 4 * a] += eps;
}

void cf_precond_rest_matrix(const cfModel* m, double* A0) {
  double cm, ck;
  cf_system_coefficients(m, m->def.dt, &cm, &ck);
  rest_matrix(m, cm, ck, 0, A0);
}

static int create(const cfModel* m, cfData* d, double cm, double ck, double eps, int amg);

int cf_precond_create(const cfModel* m, cfData* d) {
  double cm, ck;
  cf_system_coefficients(m, m->def.dt, &cm, &ck);
  return create(m, d, cm, ck, 0, m->def.preconditioner == CF_PRECOND_AMG);
}

int cf_precond_create_with(const cfModel* m, cfData* d, double cm, double ck, double eps) {
  return create(m, d, cm, ck, eps, 0);
}

int cf_precond_create_amg_with(const cfModel* m, cfData* d, double cm, double ck, double eps) {
  return create(m, d, cm, ck, eps, 1);
}

static int create(const cfModel* m, cfData* d, double cm, double ck, double eps, int amg) {
  cf_precond_free(d);
  struct cfPrecond* p = calloc(1, sizeof *p);
  double* A0 = malloc(sizeof(double) * 9 * (size_t)m->nnzb);
  if (p) {
    p->t = malloc(sizeof(double) * m->ndof);
    p->y = malloc(sizeof(double) * m->ndof);
    p->w = malloc(sizeof(double) * m->ndof);
    p->ye = malloc(sizeof(double) * 33 * (size_t)m->ntet);
  }
  if (!p || !A0 || !p->t || !p->y || !p->w || !p->ye) {
    free(A0);
    if (p) { free(p->t); free(p->y); free(p->w); free(p->ye); free(p); }
    return cf_error(CF_ERR_NOMEM, "preconditioner: out of memory");
  }
  d->precond = p;
  rest_matrix(m, cm, ck, eps, A0);
  if (amg) {
    /* the same A0, one hierarchy per support state (the free body's: supports switched off) */
    cfAmgOptions o = cf_amg_default_options();
    o.threads = cf_threads(m);
    int st = cf_amg_create(m->nnode, m->row_ptr, m->col, A0, m->X, NULL, &o, &p->amg_free);
    if (st >= 0 && m->nfixed > 0) {
      p->have_supports = 1;
      st = cf_amg_create(m->nnode, m->row_ptr, m->col, A0, m->X, m->fixed, &o, &p->amg_supports);
    }
    free(A0);
    if (st < 0) {
      cf_precond_free(d); /* sets no message: cf_last_error() still names the failure */
      return cf_error(st, "AMG preconditioner: %s", cf_last_error());
    }
    return CF_OK;
  }
  /* supernodal (our solve needs it; CHOLMOD would pick simplicial for some small parts) */
  int st = cf_sparse_init(m, 1, &p->free_body);
  p->free_body.cc.supernodal = CHOLMOD_SUPERNODAL;
  if (st >= 0) st = cf_sparse_factor(&p->free_body, A0, NULL);
  if (st >= 0) super_copy(p->free_body.L, &p->L_free);
  if (st >= 0 && m->nfixed > 0) {
    p->have_supports = 1;
    st = cf_sparse_init(m, 1, &p->with_supports);
    p->with_supports.cc.supernodal = CHOLMOD_SUPERNODAL;
    if (st >= 0) st = cf_sparse_factor(&p->with_supports, A0, m->fixed);
    if (st >= 0) super_copy(p->with_supports.L, &p->L_supports);
  }
  /* the first solves allocate CHOLMOD's workspaces (used when a factor was not copied): do it
   * here, not inside a step */
  if (st >= 0) {
    memset(p->t, 0, sizeof(double) * m->ndof);
    st = cf_sparse_solve(&p->free_body, p->t, p->y);
    if (st >= 0 && p->have_supports) st = cf_sparse_solve(&p->with_supports, p->t, p->y);
  }
  free(A0);
  if (st < 0) {
    char msg[1024];
    memcpy(msg, cf_last_error(), sizeof msg);
    msg[sizeof msg - 1] = '\0';
    cf_precond_free(d);
    return cf_error(st, "rotated-Cholesky preconditioner: %s", msg);
  }
  return CF_OK;
}

void cf_precond_free(cfData* d) {
  struct cfPrecond* p = d->precond;
  if (!p) return;
  cf_amg_free(p->amg_free);
  cf_amg_free(p->amg_supports);
  if (p->free_body.Ap) cf_sparse_free(&p->free_body);
  if (p->with_supports.Ap) cf_sparse_free(&p->with_supports);
  super_free(&p->L_free);
  super_free(&p->L_supports);
  free(p->t);
  free(p->y);
  free(p->w);
  free(p->ye);
  free(p);
  d->precond = NULL;
}

/* Node rotation n: follows the polar of the sum of the rotations of the elements around it by
 * one Newton correction per step (cf_polar_rotation_step: the preconditioner needs a good
 * rotation, not the exact one; the same PCG iterations on the lug and hinge demos) */
static void node_rotation(const cfModel* m, cfData* d, int n, int corrections) {
  double S[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
  for (int k = m->node_src_ptr[n]; k < m->node_src_ptr[n + 1]; k++) {
    const double* Re = d->R + 9 * (m->node_src[k] / m->npe);
    for (int i = 0; i < 9; i++) S[i] += Re[i];
  }
  double Rn[9];
  if (corrections < 0) { /* to convergence */
    cf_polar_rotation_warm(S, d->node_R + 9 * n, Rn);
    memcpy(d->node_R + 9 * n, Rn, sizeof Rn);
  }
  for (int c = 0; c < corrections; c++) {
    cf_polar_rotation_step(S, d->node_R + 9 * n, Rn);
    memcpy(d->node_R + 9 * n, Rn, sizeof Rn);
  }
}

void cf_precond_update(const cfModel* m, cfData* d) { cf_precond_update_n(m, d, 1); }

void cf_precond_update_n(const cfModel* m, cfData* d, int corrections) {
  CF_FOR(m, n, m->nnode, m->nnode > 4096, node_rotation(m, d, n, corrections));
}

int cf_precond_apply(const cfModel* m, cfData* d, const double* r, double* z) {
  struct cfPrecond* p = d->precond;
  const double* Q = d->node_R;
  const int supports = d->supports_active && p->have_supports;
  for (int n = 0; n < m->nnode; n++) /* t = Q^T r */
    for (int i = 0; i < 3; i++)
      p->t[3 * n + i] = Q[9 * n + i] * r[3 * n] + Q[9 * n + 3 + i] * r[3 * n + 1] + Q[9 * n + 6 + i] * r[3 * n + 2];
  if (supports)
    for (int i = 0; i < m->ndof; i++)
      if (m->fixed[i]) p->t[i] = 0;
  const SuperFactor* f = supports ? &p->L_supports : &p->L_free;
  if (p->amg_free) { /* y = AMG(A0) t: one V-cycle */
    int st = cf_amg_apply(supports ? p->amg_supports : p->amg_free, p->t, p->y);
    if (st < 0) return st;
  } else if (f->n) { /* y = A0^-1 t = P^T L^-T L^-1 P t */
    for (int k = 0; k < f->n; k++) p->y[k] = p->t[f->perm[k]];
    super_solve(f, p->y, p->w);
    for (int k = 0; k < f->n; k++) p->t[f->perm[k]] = p->y[k];
    memcpy(p->y, p->t, sizeof(double) * f->n);
  } else {
    int st = cf_sparse_solve(supports ? &p->with_supports : &p->free_body, p->t, p->y);
    if (st < 0) return st;
  }
  for (int n = 0; n < m->nnode; n++) /* z = Q y */
    for (int i = 0; i < 3; i++)
      z[3 * n + i] = Q[9 * n + 3 * i] * p->y[3 * n] + Q[9 * n + 3 * i + 1] * p->y[3 * n + 1] + Q[9 * n + 3 * i + 2] * p->y[3 * n + 2];
  return CF_OK;
}

int cf_precond_amg_info(const cfData* d, double* bytes_per_cycle, double* op_complexity, double* setup_s,
                        char* desc, int size) {
  const struct cfPrecond* p = d->precond;
  if (!p || !p->amg_free) return 0;
  const cfAmg* a = p->amg_supports ? p->amg_supports : p->amg_free;
  if (bytes_per_cycle) *bytes_per_cycle = cf_amg_bytes_per_cycle(a, op_complexity);
  if (setup_s) *setup_s = p->amg_free->setup_s + (p->amg_supports ? p->amg_supports->setup_s : 0);
  if (desc && size > 0) cf_amg_describe(a, desc, size);
  return 1;
}

double cf_precond_amg_gpu_bytes(const cfData* d, double* dense_bytes) {
  const struct cfPrecond* p = d->precond;
  if (dense_bytes) *dense_bytes = 0;
  if (!p || !p->amg_free) return 0;
  const cfAmg* a = p->amg_supports ? p->amg_supports : p->amg_free;
  const double nc = a->lev[a->nlevel - 1].n;
  if (dense_bytes) *dense_bytes = 8 * nc * nc;
  return cf_amg_bytes_per_cycle_gpu(a);
}

double cf_precond_amg_value_bytes(const cfData* d) {
  const struct cfPrecond* p = d->precond;
  if (!p || !p->amg_free) return 0;
  return cf_amg_value_bytes_per_cycle(p->amg_supports ? p->amg_supports : p->amg_free);
}

int cf_preconditioner_auto(int ntet, int integrator, int gpu) {
  if (gpu) return integrator == CF_INTEGRATOR_BACKWARD_EULER ? CF_PRECOND_AMG : CF_PRECOND_BLOCK_JACOBI;
  return ntet < CF_PRECOND_AUTO_AMG_TETS ? CF_PRECOND_ROTATED_CHOLESKY : CF_PRECOND_AMG;
}

int cf_preconditioner_from_key(const char* key) {
  static const struct { const char* key; int p; } k[] = {{"block_jacobi", CF_PRECOND_BLOCK_JACOBI},
                                                         {"rotated_cholesky", CF_PRECOND_ROTATED_CHOLESKY},
                                                         {"amg", CF_PRECOND_AMG},
                                                         {"auto", CF_PRECOND_AUTO}};
  for (size_t i = 0; key && i < sizeof k / sizeof k[0]; i++)
    if (!strcmp(key, k[i].key)) return k[i].p;
  return -1;
}

const char* cf_preconditioner_name(int p) {
  switch (p) {
    case CF_PRECOND_BLOCK_JACOBI: return "block-Jacobi";
    case CF_PRECOND_ROTATED_CHOLESKY: return "rotated-Cholesky";
    case CF_PRECOND_AMG: return "AMG";
    case CF_PRECOND_AUTO: return "auto";
    default: return "unknown";
  }
}

const struct cfAmg* cf_precond_amg(const cfData* d, int supports) {
  const struct cfPrecond* p = d ? d->precond : NULL;
  if (!p || !p->amg_free) return NULL;
  return supports ? p->amg_supports : p->amg_free;
}
