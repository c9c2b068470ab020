/* Stage 2: rotated element stiffness and elastic forces, gathered into the block system
 *   A = (1 + h alpha) M + (h beta + h^2) K_R
 *   b = M v0 + h (f_ext + M g - f_el)
 * The gathers run per block / per node over precomputed contribution lists, so the sums are
 * formed in the same order whatever the thread count (and on the GPU). */
#include <math.h>
#include <string.h>

#include "cofem/fem.h"
#include "cofem/static.h"
#include "fem/fem_element.h"
#include "fem/fem_parallel.h"
#include "fem/fem_pcg.h"
#include "fem/fem_precond.h"

/* K_R of element e replaced by the symmetric part of its consistent tangent */
static void sym_consistent_tangent(const cfModel* m, cfData* d, int e) {
  double Kt[900];
  const int nk = 3 * m->npe;
  cf_elem_consistent_tangent(m, d, e, Kt);
  double* K = d->KR + (size_t)nk * nk * e;
  for (int i = 0; i < nk; i++)
    for (int j = 0; j < nk; j++) K[nk * i + j] = 0.5 * (Kt[nk * i + j] + Kt[nk * j + i]);
}

void cf_stage_elastic(const cfModel* m, cfData* d) {
  double lam, mu;
  cf_lame(m->def.E, m->def.nu, &lam, &mu);
  if (m->npe == 10 && m->Gq)
    CF_FOR(m, e, m->ntet, m->ntet > 512, cf_tet10_rotate_qp(e, m->tet, m->Gq, m->Wq, lam, mu, d->x, d->Rq, d->KR, d->fe));
  else if (m->npe == 10)
    CF_FOR(m, e, m->ntet, m->ntet > 512, cf_tet10_rotate(e, m->tet, m->Ke, d->R, m->X, d->x, d->KR, d->fe));
  else
    CF_FOR(m, e, m->ntet, m->ntet > 2048, cf_elem_rotate(e, m->tet, m->Dm_inv, m->vol, lam, mu, d->R, d->x, d->KR, d->fe));
  if (m->def.dyn_tangent == CF_DYN_TANGENT_SYM_CONSISTENT && !d->force_kr)
    CF_FOR(m, e, m->ntet, m->ntet > 2048, sym_consistent_tangent(m, d, e));
  CF_FOR(m, n, m->nnode, m->nnode > 4096, cf_node_gather(n, m->node_src_ptr, m->node_src, d->fe, d->f_el));
}

/* y = M x for the block mass (scalar coefficient per block). */
static void apply_mass(const cfModel* m, const double* x, double* y) {
  CF_FOR(m, i, m->nnode, m->nnode > 4096, cf_node_mass_row(i, m->row_ptr, m->col, m->Mblk, x, y + 3 * i));
}

void cf_rhs_euler(const cfModel* m, cfData* d, double h) {
  /* b = M v0 + h (f_ext + M g - f_el); norms summed in node order (thread-independent) */
  const double* g = m->def.gravity;
  double sq[3] = {0, 0, 0};
  for (int n = 0; n < m->nnode; n++)
    cf_node_rhs_euler(n, m->row_ptr, m->col, m->Mblk, m->node_mass, d->v, d->f_ext, d->f_el, m->fixed,
                      d->supports_active, h, g[0], g[1], g[2], d->b, sq);
  d->b_scale = sqrt(sq[0]) + h * (sqrt(sq[1]) + sqrt(sq[2]));
}

void cf_stage_assemble_system(const cfModel* m, cfData* d, double h) {
  const int newmark = m->def.integrator == CF_INTEGRATOR_NEWMARK;
  /* backward Euler: A = (1 + h a) M + (h b + h^2) K_R
   * Newmark:        A = (1 + h a/2) M + (h b/2 + h^2/4) K_R */
  double cm, ck;
  cf_system_coefficients(m, h, &cm, &ck);
  CF_FOR(m, k, m->nnzb, m->nnzb > 16384, cf_block_gather_n(k, m->npe, m->blk_src_ptr, m->blk_src, d->KR, m->Mblk, cm, ck, d->A));
  const double* g = m->def.gravity;
  if (!newmark) {
    cf_rhs_euler(m, d, h);
  } else {
    /* b = 2 M v0 - A v0 + h/2 (f_ext0 + f_ext1) + h (M g - f_el(x0)); A v0 into r (scratch) */
    apply_mass(m, d->v, d->b);
    double mv2 = 0, fx2 = 0, fe2 = 0;
    for (int n = 0; n < m->nnode; n++)
      for (int i = 0; i < 3; i++) {
        int k = 3 * n + i;
        if (d->supports_active && m->fixed[k]) continue;
        double fx = d->f_ext[k] + m->node_mass[n] * g[i];
        mv2 += d->b[k] * d->b[k];
        fx2 += fx * fx;
        fe2 += d->f_el[k] * d->f_el[k];
      }
    d->b_scale = sqrt(mv2) + h * (sqrt(fx2) + sqrt(fe2));
    CF_FOR(m, i, m->nnode, m->nnode > 2048, cf_bsr_row(i, m->row_ptr, m->col, d->A, d->v, d->r));
    for (int n = 0; n < m->nnode; n++)
      for (int i = 0; i < 3; i++) {
        int k = 3 * n + i;
        d->b[k] = 2 * d->b[k] - d->r[k] + 0.5 * h * (d->f_ext_prev[k] + d->f_ext[k]) +
                  h * (m->node_mass[n] * g[i] - d->f_el[k]);
      }
  }
  if (d->precond) {
    cf_precond_update(m, d);
    return;
  }
  CF_FOR(m, n, m->nnode, m->nnode > 4096, cf_block_jacobi(n, m->diag, d->A, m->fixed, d->supports_active, d->Pinv));
}
