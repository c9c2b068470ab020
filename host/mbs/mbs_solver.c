/* The leading matrix M + h/2 C + h^2/4 (alpha Phi_q^T Phi_q + K) of eq. 37 (and the matrices of
 * the projections and of kinematic analysis, which have the same pattern): its pattern over the
 * coupled body pairs (upper triangle, compressed columns), assembly, CHOLMOD factorisation
 * (symbolic analysis once per data, numeric per call) and solves, and the augmented Lagrangian
 * iteration for a linearly constrained quadratic problem on that factor (eq. 39 is its first
 * iteration). */
#include <stdio.h>
#include <stdlib.h>

#include "cofem/fem.h"
#include "mbs/mbs_internal.h"

/* ---- pattern ------------------------------------------------------------------------------------ */
static int cmp_long(const void* a, const void* b) {
  long x = *(const long*)a, y = *(const long*)b;
  return (x > y) - (x < y);
}

/* block pairs added by the body kinds (their pairs) */
struct pair_ctx {
  long* key;
  size_t* n;
  size_t cap;
  int nb;
};
static void add_pair(int x, int y, void* ctx) {
  struct pair_ctx* c = ctx;
  int a = x < y ? x : y, b = x < y ? y : x;
  if (*c->n < c->cap) c->key[*c->n] = (long)b * c->nb + a;
  (*c->n)++;
}

static void count_pair(int x, int y, void* ctx) {
  (void)x, (void)y;
  (*(size_t*)ctx)++;
}

static void kinds_pairs(const cfMbsModel* m, void (*pair)(int a, int b, void* ctx), void* ctx) {
  for (int k = 0; k < cf_mbs__nbody_kinds; k++)
    if (cf_mbs__body_kinds[k]->pairs) cf_mbs__body_kinds[k]->pairs(m, pair, ctx);
}

int cf_mbs__build_pattern(cfMbsModel* m) {
  int nb = m->nbody;
  size_t cap = (size_t)nb + (size_t)m->nforce;
  size_t nmp = 0; /* room for the modal bodies' and FE bodies' pairs */
  kinds_pairs(m, count_pair, &nmp);
  cap += nmp;
  for (int i = 0; i < m->ncon; i++) cap += (size_t)m->con[i].nb * (size_t)m->con[i].nb;
  long* key = malloc(sizeof(long) * cap);
  if (!key) return cf_error(CF_ERR_NOMEM, "mechanism: out of memory");
  size_t n = 0;
  /* key = b * nb + a with a <= b */
#define CF_MBS_PAIR(x, y)                                      \
  do {                                                         \
    int a_ = (x) < (y) ? (x) : (y), b_ = (x) < (y) ? (y) : (x); \
    key[n++] = (long)b_ * nb + a_;                             \
  } while (0)
  for (int b = 0; b < nb; b++) CF_MBS_PAIR(b, b);
  for (int i = 0; i < m->ncon; i++)
    for (int s1 = 0; s1 < m->con[i].nb; s1++)
      for (int s2 = 0; s2 < m->con[i].nb; s2++) CF_MBS_PAIR(m->con[i].body[s1], m->con[i].body[s2]);
  for (int e = 0; e < m->nforce; e++)
    if (m->force[e].body[0] >= 0 && m->force[e].body[1] >= 0) CF_MBS_PAIR(m->force[e].body[0], m->force[e].body[1]);
#undef CF_MBS_PAIR
  /* the modal bodies' mass couples their frame and amplitude blocks, the FE bodies' elements their
   * node blocks */
  struct pair_ctx pc = {key, &n, cap, nb};
  kinds_pairs(m, add_pair, &pc);
  if (n > cap) {
    free(key);
    return cf_error(CF_ERR_NOMEM, "mechanism: pair list overflow");
  }
  qsort(key, n, sizeof(long), cmp_long);
  size_t u = 0;
  for (size_t i = 0; i < n; i++)
    if (u == 0 || key[i] != key[u - 1]) key[u++] = key[i];
  m->npair = (int)u;
  m->body_pair_ptr = calloc((size_t)nb + 1, sizeof(int));
  m->body_pair_a = malloc(sizeof(int) * u);
  m->pair_colstart = malloc(sizeof(int) * 12 * u);
  m->Ap = malloc(sizeof(int) * ((size_t)m->nq + 1));
  if (!m->body_pair_ptr || !m->body_pair_a || !m->pair_colstart || !m->Ap) {
    free(key);
    return cf_error(CF_ERR_NOMEM, "mechanism: out of memory");
  }
  for (size_t p = 0; p < u; p++) {
    int b = (int)(key[p] / nb);
    m->body_pair_a[p] = (int)(key[p] % nb);
    m->body_pair_ptr[b + 1]++;
  }
  for (int b = 0; b < nb; b++) m->body_pair_ptr[b + 1] += m->body_pair_ptr[b];
  free(key);
  /* columns: for column body b, its pairs (a, b) in increasing a: rows of a (all 12, or the upper
   * part of the diagonal block) */
  int nnz = 0;
  for (int b = 0; b < nb; b++)
    for (int c = 0; c < 12; c++) {
      m->Ap[m->body_qadr[b] + c] = nnz;
      for (int p = m->body_pair_ptr[b]; p < m->body_pair_ptr[b + 1]; p++) {
        m->pair_colstart[12 * p + c] = nnz;
        nnz += m->body_pair_a[p] < b ? 12 : c + 1;
      }
    }
  m->Ap[m->nq] = nnz;
  m->nnz = nnz;
  m->Ai = malloc(sizeof(int) * (size_t)(nnz ? nnz : 1));
  if (!m->Ai) return cf_error(CF_ERR_NOMEM, "mechanism: out of memory");
  for (int b = 0; b < nb; b++)
    for (int c = 0; c < 12; c++)
      for (int p = m->body_pair_ptr[b]; p < m->body_pair_ptr[b + 1]; p++) {
        int a = m->body_pair_a[p], k0 = m->pair_colstart[12 * p + c], nr = a < b ? 12 : c + 1;
        for (int r = 0; r < nr; r++) m->Ai[k0 + r] = m->body_qadr[a] + r;
      }
  return CF_OK;
}

static int find_pair(const cfMbsModel* m, int a, int b) {
  int lo = m->body_pair_ptr[b], hi = m->body_pair_ptr[b + 1] - 1;
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    if (m->body_pair_a[mid] < a) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* Ax += s * B, B a 12x12 block (row stride ld) coupling the coordinates of body ba (rows) and bb
 * (columns); on the diagonal (ba == bb) B must be symmetric */
void cf_mbs__add_blk(const cfMbsModel* m, double* Ax, int ba, int bb, const double* B, int ld, double s) {
  if (ba <= bb) {
    int p = find_pair(m, ba, bb);
    for (int c = 0; c < 12; c++) {
      double* col = Ax + m->pair_colstart[12 * p + c];
      int nr = ba < bb ? 12 : c + 1;
      for (int r = 0; r < nr; r++) col[r] += s * B[ld * r + c];
    }
  } else {
    int p = find_pair(m, bb, ba);
    for (int c = 0; c < 12; c++) { /* column c of ba = row c of B */
      double* col = Ax + m->pair_colstart[12 * p + c];
      for (int r = 0; r < 12; r++) col[r] += s * B[ld * c + r];
    }
  }
}

void cf_mbs__add_3x3(const cfMbsModel* m, double* Ax, int ra, int ba, int ca, int bb, const double* B, double s) {
  if (ba > bb) return; /* below the diagonal blocks (coordinates are numbered in body order) */
  int p = find_pair(m, ba, bb), r0 = ra - m->body_qadr[ba], c0 = ca - m->body_qadr[bb];
  for (int j = 0; j < 3; j++) {
    double* col = Ax + m->pair_colstart[12 * p + c0 + j];
    for (int i = 0; i < 3; i++)
      if (ba < bb || r0 + i <= c0 + j) col[r0 + i] += s * B[3 * i + j];
  }
}

/* Ax += s * ga gb^T for body ba (rows) and bb (columns) */
static void add_outer(const cfMbsModel* m, double* Ax, int ba, const double* ga, int bb, const double* gb, double s) {
  if (ba > bb) {
    int t = ba;
    ba = bb, bb = t;
    const double* g = ga;
    ga = gb, gb = g;
  }
  int p = find_pair(m, ba, bb);
  for (int c = 0; c < 12; c++) {
    double* col = Ax + m->pair_colstart[12 * p + c];
    double sc = s * gb[c];
    if (sc == 0) continue;
    int nr = ba < bb ? 12 : c + 1;
    for (int r = 0; r < nr; r++) col[r] += ga[r] * sc;
  }
}

void cf_mbs__assemble(const cfMbsModel* m, cfMbsData* d, double cM, double cC, double cK, double a, double eps) {
  double* Ax = d->Ax;
  d->asm_coef[0] = cM, d->asm_coef[1] = cC, d->asm_coef[2] = cK, d->asm_coef[3] = a, d->asm_coef[4] = eps;
  memset(Ax, 0, sizeof(double) * (size_t)m->nnz);
  /* mass (Mbar (x) I3) and regularisation; not of the node blocks of corotational FE bodies, which
   * are condensed (their matrix is the part's own, cf_mbs__fe_factor; the factor reads the first
   * Ap[nq_direct] entries only) */
  for (int b = 0; b < m->nbody; b++) {
    if (m->body_qadr[b] >= m->nq_direct) continue;
    const double* Mb = m->body_Mbar + 16 * b;
    double B[144];
    for (int r = 0; r < 12; r++)
      for (int c = 0; c < 12; c++)
        B[12 * r + c] = (r % 3 == c % 3 ? cM * Mb[4 * (r / 3) + c / 3] : 0) + (r == c ? eps : 0);
    cf_mbs__add_blk(m, Ax, b, b, B, 12, 1.0);
  }
  /* a J^T J, equation by equation over its body slots */
  if (a != 0)
    for (int i = 0; i < m->ncon; i++) {
      const cfMbsCon* c = &m->con[i];
      const double* row = d->jac + (size_t)i * m->jac_stride;
      /* a joint row of a corotational FE body: its penalty enters through the condensation
       * (cf_mbs__fe_factor: J_I^T H J_I), not as a J'J to be subtracted again (that cancellation
       * lost a 50 g bolt's inertia in the penalty's round-off) */
      if (c->nft && cf_mbs__fe_condensed_row(m, c)) continue;
      for (int s1 = 0; s1 < c->nb; s1++)
        for (int s2 = s1; s2 < c->nb; s2++)
          add_outer(m, Ax, c->body[s1], row + 12 * s1, c->body[s2], row + 12 * s2, a * d->con_pen[i]);
    }
  /* force elements: cK sym(K) + cC sym(C) */
  if (cK != 0 || cC != 0)
    for (int e = 0; e < m->nforce; e++) {
      const cfMbsForce* f = &m->force[e];
      const double* K = d->fK + 576 * (size_t)e;
      const double* C = d->fC + 576 * (size_t)e;
      double S[576];
      for (int r = 0; r < 24; r++)
        for (int c = 0; c < 24; c++)
          S[24 * r + c] = 0.5 * (cK * (K[24 * r + c] + K[24 * c + r]) + cC * (C[24 * r + c] + C[24 * c + r]));
      for (int s1 = 0; s1 < 2; s1++)
        for (int s2 = s1; s2 < 2; s2++) {
          if (f->body[s1] < 0 || f->body[s2] < 0) continue;
          cf_mbs__add_blk(m, Ax, f->body[s1], f->body[s2], S + 24 * 12 * s1 + 12 * s2, 24, 1.0);
        }
    }
  for (int k = 0; k < cf_mbs__nbody_kinds; k++) /* modal and FE bodies' M, C and K */
    if (cf_mbs__body_kinds[k]->assemble) cf_mbs__body_kinds[k]->assemble(m, d, cM, cC, cK);
}

void cf_mbs__apply_M(const cfMbsModel* m, const cfMbsData* d, const double* x, double* y) {
  for (int b = 0; b < m->nbody; b++) {
    const double* Mb = m->body_Mbar + 16 * b;
    const double* xb = x + m->body_qadr[b];
    double* yb = y + m->body_qadr[b];
    if (!cf_mbs__generic(d, m->body_qadr[b])) { /* a kind's own block in this step: left zero */
      memset(yb, 0, sizeof(double) * CF_MBS_BODY_NQ);
      continue;
    }
    for (int k = 0; k < 4; k++)
      for (int i = 0; i < 3; i++) {
        double s = 0;
        for (int l = 0; l < 4; l++) s += Mb[4 * k + l] * xb[3 * l + i];
        yb[3 * k + i] = s;
      }
  }
  for (int k = 0; k < cf_mbs__nbody_kinds; k++) /* modal and FE bodies' mass beyond Mbar */
    if (cf_mbs__body_kinds[k]->apply_mass) cf_mbs__body_kinds[k]->apply_mass(m, d, x, y);
}

/* ---- CHOLMOD ------------------------------------------------------------------------------------- */
int cf_mbs__solver_create(const cfMbsModel* m, cfMbsData* d) {
  struct cfMbsSolver* s = calloc(1, sizeof *s);
  if (!s) return cf_error(CF_ERR_NOMEM, "mechanism solver: out of memory");
  d->solver = s;
  /* with corotational FE bodies only the leading nq_direct coordinates are factored: their columns
   * hold rows below nq_direct only (upper triangle), so they are the first Ap[nq_direct] entries */
  int n = m->nq_direct, nnz = m->Ap[m->nq_direct];
  s->n = n, s->nnz = nnz;
  if (n < m->nq) {
    s->Axr = calloc((size_t)(nnz ? nnz : 1), sizeof(double));
    s->bI = calloc((size_t)m->nq, sizeof(double));
    if (!s->Axr || !s->bI) return cf_error(CF_ERR_NOMEM, "mechanism solver: out of memory");
  }
  cholmod_start(&s->cc);
  s->started = 1;
  s->cc.print = 0; /* our own messages name the body */
  s->perm = malloc(sizeof(int) * (size_t)n);
  s->Ap = calloc((size_t)n + 1, sizeof(int));
  s->Ai = malloc(sizeof(int) * (size_t)(nnz ? nnz : 1));
  s->Ax = calloc((size_t)(nnz ? nnz : 1), sizeof(double));
  s->map = malloc(sizeof(int) * (size_t)(nnz ? nnz : 1));
  s->y = malloc(sizeof(double) * (size_t)n);
  int* inv = malloc(sizeof(int) * (size_t)n);
  int* fill = malloc(sizeof(int) * ((size_t)n + 1));
  if (!s->perm || !s->Ap || !s->Ai || !s->Ax || !s->map || !s->y || !inv || !fill) {
    free(inv), free(fill);
    return cf_error(CF_ERR_NOMEM, "mechanism solver: out of memory");
  }
  /* 1. fill-reducing ordering of the model's pattern */
  cholmod_sparse A0 = {0};
  A0.nrow = A0.ncol = (size_t)n;
  A0.nzmax = (size_t)nnz;
  A0.p = m->Ap, A0.i = m->Ai, A0.x = d->Ax;
  A0.stype = 1, A0.itype = CHOLMOD_INT, A0.xtype = CHOLMOD_REAL, A0.dtype = CHOLMOD_DOUBLE;
  A0.sorted = 1, A0.packed = 1;
  cholmod_factor* L0 = cholmod_analyze(&A0, &s->cc);
  if (!L0) {
    free(inv), free(fill);
    return cf_error(CF_ERR_SOLVER, "mechanism: CHOLMOD symbolic analysis failed (status %d)", s->cc.status);
  }
  for (int k = 0; k < n; k++) s->perm[k] = L0->Perm ? ((const int*)L0->Perm)[k] : k;
  cholmod_free_factor(&L0, &s->cc);
  for (int k = 0; k < n; k++) inv[s->perm[k]] = k;
  s->super = m->nfe > 0;
  /* 2. the permuted upper pattern (lower when supernodal; count, place, sort the rows of each column) */
  for (int j = 0; j < n; j++)
    for (int k = m->Ap[j]; k < m->Ap[j + 1]; k++) {
      int a = inv[m->Ai[k]], b = inv[j];
      s->Ap[((a > b) != s->super ? a : b) + 1]++;
    }
  for (int j = 0; j < n; j++) s->Ap[j + 1] += s->Ap[j];
  memcpy(fill, s->Ap, sizeof(int) * ((size_t)n + 1));
  /* place: s->map temporarily holds, for each permuted position, the model entry it comes from */
  for (int j = 0; j < n; j++)
    for (int k = m->Ap[j]; k < m->Ap[j + 1]; k++) {
      int a = inv[m->Ai[k]], b = inv[j];
      int col = (a > b) != s->super ? a : b, row = col == a ? b : a, pos = fill[col]++;
      s->Ai[pos] = row;
      s->map[pos] = k;
    }
  for (int j = 0; j < n; j++) /* insertion sort of each (short) column by row, carrying the source */
    for (int k = s->Ap[j] + 1; k < s->Ap[j + 1]; k++)
      for (int l = k; l > s->Ap[j] && s->Ai[l - 1] > s->Ai[l]; l--) {
        int t = s->Ai[l];
        s->Ai[l] = s->Ai[l - 1], s->Ai[l - 1] = t;
        t = s->map[l];
        s->map[l] = s->map[l - 1], s->map[l - 1] = t;
      }
  {
    int* src = malloc(sizeof(int) * (size_t)(nnz ? nnz : 1));
    if (!src) {
      free(inv), free(fill);
      return cf_error(CF_ERR_NOMEM, "mechanism solver: out of memory");
    }
    memcpy(src, s->map, sizeof(int) * (size_t)nnz);
    for (int pos = 0; pos < nnz; pos++) s->map[src[pos]] = pos; /* invert: model entry -> position */
    free(src);
  }
  free(inv), free(fill);
  /* 3. symbolic analysis of P A P^T in the natural ordering, simplicial LL^T */
  s->A.nrow = s->A.ncol = (size_t)n;
  s->A.nzmax = (size_t)nnz;
  s->A.p = s->Ap, s->A.i = s->Ai, s->A.x = s->Ax;
  s->A.stype = s->super ? -1 : 1, s->A.itype = CHOLMOD_INT, s->A.xtype = CHOLMOD_REAL, s->A.dtype = CHOLMOD_DOUBLE;
  s->A.sorted = 1, s->A.packed = 1;
  s->cc.nmethods = 1;
  s->cc.method[0].ordering = CHOLMOD_NATURAL;
  s->cc.postorder = 0;
  s->cc.supernodal = s->super ? CHOLMOD_SUPERNODAL : CHOLMOD_SIMPLICIAL;
  s->Bd.nrow = s->Bd.d = s->Bd.nzmax = (size_t)n, s->Bd.ncol = 1;
  s->Bd.x = s->y, s->Bd.xtype = CHOLMOD_REAL, s->Bd.dtype = CHOLMOD_DOUBLE;
  s->cc.final_ll = 1; /* LL^T: a matrix that is not positive definite is reported as such */
  s->L = cholmod_analyze(&s->A, &s->cc);
  if (!s->L) return cf_error(CF_ERR_SOLVER, "mechanism: CHOLMOD symbolic analysis failed (status %d)", s->cc.status);
  return CF_OK;
}

void cf_mbs__solver_free(cfMbsData* d) {
  struct cfMbsSolver* s = d->solver;
  if (!s) return;
  if (s->started) {
    if (s->L) cholmod_free_factor(&s->L, &s->cc);
    if (s->X) cholmod_free_dense(&s->X, &s->cc);
    if (s->Yw) cholmod_free_dense(&s->Yw, &s->cc);
    if (s->Ew) cholmod_free_dense(&s->Ew, &s->cc);
    cholmod_finish(&s->cc);
  }
  free(s->perm), free(s->Ap), free(s->Ai), free(s->Ax), free(s->map), free(s->y), free(s->Axr), free(s->bI);
  free(s);
  d->solver = NULL;
}

int cf_mbs__factor(const cfMbsModel* m, cfMbsData* d) {
  struct cfMbsSolver* s = d->solver;
  double t0 = cf_wall_time();
  const double* Ax = d->Ax;
  if (s->Axr) { /* corotational FE bodies: condensed onto the factored coordinates */
    memcpy(s->Axr, d->Ax, sizeof(double) * (size_t)s->nnz);
    int st = cf_mbs__fe_factor(m, d, s->Axr);
    if (st < 0) return st;
    Ax = s->Axr;
  }
  for (int k = 0; k < s->nnz; k++) s->Ax[s->map[k]] = Ax[k];
  cholmod_factorize(&s->A, s->L, &s->cc);
  d->timer[CF_MBS_STAGE_FACTOR] += cf_wall_time() - t0;
  if (s->cc.status == CHOLMOD_NOT_POSDEF) {
    int k = (int)s->L->minor;
    int col = k < m->nq ? s->perm[k] : 0;
    int b = 0;
    while (b + 1 < m->nbody && m->body_qadr[b + 1] <= col) b++;
    int local = col - m->body_qadr[b];
    static const char* part[] = {"origin r", "axis u", "axis v", "axis w"};
    return cf_error(CF_ERR_SOLVER,
                    "the leading matrix is not positive definite at coordinate %d (body '%s', %s, component %c): "
                    "a motion of this body has neither mass nor a constraint, springs make it unstable, or the time "
                    "step is too large for the mechanism (the matrix is then too ill-conditioned to factor)",
                    col, m->body_name[b], part[(local / 3) & 3], "xyz"[local % 3]);
  }
  if (s->cc.status < 0 || !s->L->is_ll || s->L->is_super != s->super)
    return cf_error(CF_ERR_SOLVER, "mechanism: CHOLMOD factorisation failed (status %d)", s->cc.status);
  return CF_OK;
}

/* x = A^-1 b with A = P^T L L^T P: y = P b, L z = y, L^T w = z, x = P^T w (the factored coordinates) */
static int solve_direct(const cfMbsModel* m, cfMbsData* d, const double* b, double* x) {
  struct cfMbsSolver* s = d->solver;
  int n = s->n;
  const int* Lp = s->L->p;
  const int* Li = s->L->i;
  const int* Lnz = s->L->nz;
  const double* Lx = s->L->x;
  double* y = s->y;
  for (int k = 0; k < n; k++) y[k] = b[s->perm[k]];
  if (s->super) {
    if (!cholmod_solve2(CHOLMOD_A, s->L, &s->Bd, NULL, &s->X, NULL, &s->Yw, &s->Ew, &s->cc))
      return cf_error(CF_ERR_SOLVER, "mechanism: CHOLMOD solve failed (status %d)", s->cc.status);
    memcpy(y, s->X->x, sizeof(double) * (size_t)n);
  } else
  for (int j = 0; j < n; j++) { /* forward: the diagonal is the first entry of each column */
    int p = Lp[j], e = Lp[j] + Lnz[j];
    double v = y[j] / Lx[p];
    y[j] = v;
    for (p++; p < e; p++) y[Li[p]] -= Lx[p] * v;
  }
  if (!s->super)
  for (int j = n - 1; j >= 0; j--) { /* backward with L^T */
    int p = Lp[j], e = Lp[j] + Lnz[j];
    double v = y[j];
    for (int q = p + 1; q < e; q++) v -= Lx[q] * y[Li[q]];
    y[j] = v / Lx[p];
  }
  int bad = 0;
  for (int k = 0; k < n; k++) {
    x[s->perm[k]] = y[k];
    bad |= !isfinite(y[k]);
  }
  if (bad) return cf_error(CF_ERR_SOLVER, "mechanism: the solve produced non-finite values");
  return CF_OK;
}

int cf_mbs__solve(const cfMbsModel* m, cfMbsData* d, const double* b, double* x) {
  double t0 = cf_wall_time();
  int st = d->solver->bI ? cf_mbs__fe_solve(m, d, b, x, solve_direct, d->solver->bI) : solve_direct(m, d, b, x);
  d->timer[CF_MBS_STAGE_SOLVE] += cf_wall_time() - t0;
  return st;
}

int cf_mbs__alm_linear(const cfMbsModel* m, cfMbsData* d, double a, const double* r, const double* c, double* x,
                       double* sigma, double tol, int maxit, int* iters, double* res) {
  int n = m->nq;
  double* rhs = d->dq;
  double* e = d->econ;
  *res = INFINITY;
  *iters = 0;
  for (int it = 1; it <= maxit; it++) {
    /* (W + a J'J) x = r - J' (sigma - a c) */
    for (int i = 0; i < m->ncon; i++) e[i] = a * d->con_pen[i] * c[i] - sigma[i];
    memcpy(rhs, r, sizeof(double) * (size_t)n);
    cf_mbs__jacT_mult_add(m, d, e, rhs);
    int st = cf_mbs__solve(m, d, rhs, x);
    if (st < 0) return st;
    cf_mbs__jac_mult(m, d, x, e);
    if (d->solver->bI) cf_mbs__fe_jac_mult_condensed(m, d, e); /* J x of the condensed rows, exact */
    double mx = 0;
    for (int i = 0; i < m->ncon; i++) {
      e[i] -= c[i];
      sigma[i] += a * d->con_pen[i] * e[i];
      mx = fmax(mx, fabs(e[i]));
    }
    *res = mx;
    *iters = it;
    if (mx <= tol) return 0;
  }
  return 1;
}
