/* Rotated-Cholesky preconditioner: P^-1 = Q A0^-1 Q^T.
 * A0 = cm M + ck K is the system matrix of the undeformed part (R_e = I), factored once by
 * CHOLMOD. When the part rotates rigidly by Q, A = Q A0 Q^T exactly (every R_e = Q and
 * R K_e R^T = Q K_e Q^T), so this P is the exact inverse; for deformations it is as good as
 * the node rotations Q_n describe the element rotations around each node. */
#include "fem_precond.h"

#include <stdlib.h>
#include <string.h>

#include "fem_element.h"
#include "fem_sparse.h"

struct cfPrecond {
  cfSparseSolver with_supports, free_body;
  int have_supports;
  double *t, *y; /* [ndof] scratch */
};

void cf_system_coefficients(const cfModel* m, double h, double* cm, double* ck) {
  if (m->def.integrator == CF_INTEGRATOR_NEWMARK) {
    *cm = 1.0 + 0.5 * h * m->def.rayleigh_alpha;
    *ck = 0.5 * h * m->def.rayleigh_beta + 0.25 * h * h;
  } else {
    *cm = 1.0 + h * m->def.rayleigh_alpha;
    *ck = h * m->def.rayleigh_beta + h * h;
  }
}

int cf_precond_create(const cfModel* m, cfData* d) {
  struct cfPrecond* p = calloc(1, sizeof *p);
  double* A0 = malloc(sizeof(double) * 9 * (size_t)m->nnzb);
  if (p) {
    p->t = malloc(sizeof(double) * m->ndof);
    p->y = malloc(sizeof(double) * m->ndof);
  }
  if (!p || !A0 || !p->t || !p->y) {
    free(A0);
    if (p) { free(p->t); free(p->y); free(p); }
    return cf_error(CF_ERR_NOMEM, "preconditioner: out of memory");
  }
  d->precond = p;
  double cm, ck;
  cf_system_coefficients(m, m->def.dt, &cm, &ck);
  /* K_R at R = I is K_e itself */
  for (int k = 0; k < m->nnzb; k++) cf_block_gather(k, m->blk_src_ptr, m->blk_src, m->Ke, m->Mblk, cm, ck, A0);
  int st = cf_sparse_init(m, 1, &p->free_body);
  if (st >= 0) st = cf_sparse_factor(&p->free_body, A0, NULL);
  if (st >= 0 && m->nfixed > 0) {
    p->have_supports = 1;
    st = cf_sparse_init(m, 1, &p->with_supports);
    if (st >= 0) st = cf_sparse_factor(&p->with_supports, A0, m->fixed);
  }
  /* the first solves allocate CHOLMOD's workspaces: do it here, not inside a step */
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
  if (p->free_body.Ap) cf_sparse_free(&p->free_body);
  if (p->with_supports.Ap) cf_sparse_free(&p->with_supports);
  free(p->t);
  free(p->y);
  free(p);
  d->precond = NULL;
}

void cf_precond_update(const cfModel* m, cfData* d) {
#pragma omp parallel for schedule(static) if (m->nnode > 4096)
  for (int n = 0; n < m->nnode; n++) {
    double S[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
    for (int k = m->node_src_ptr[n]; k < m->node_src_ptr[n + 1]; k++) {
      const double* Re = d->R + 9 * (m->node_src[k] >> 2);
      for (int i = 0; i < 9; i++) S[i] += Re[i];
    }
    double Rn[9];
    cf_polar_rotation_warm(S, d->node_R + 9 * n, Rn);
    memcpy(d->node_R + 9 * n, Rn, sizeof Rn);
  }
}

int cf_precond_apply(const cfModel* m, cfData* d, const double* r, double* z) {
  struct cfPrecond* p = d->precond;
  const double* Q = d->node_R;
  for (int n = 0; n < m->nnode; n++) /* t = Q^T r */
    for (int i = 0; i < 3; i++)
      p->t[3 * n + i] = Q[9 * n + i] * r[3 * n] + Q[9 * n + 3 + i] * r[3 * n + 1] + Q[9 * n + 6 + i] * r[3 * n + 2];
  if (d->supports_active && p->have_supports)
    for (int i = 0; i < m->ndof; i++)
      if (m->fixed[i]) p->t[i] = 0;
  int st = cf_sparse_solve(d->supports_active && p->have_supports ? &p->with_supports : &p->free_body, p->t, p->y);
  if (st < 0) return st;
  for (int n = 0; n < m->nnode; n++) /* z = Q y */
    for (int i = 0; i < 3; i++)
      z[3 * n + i] = Q[9 * n + 3 * i] * p->y[3 * n] + Q[9 * n + 3 * i + 1] * p->y[3 * n + 1] + Q[9 * n + 3 * i + 2] * p->y[3 * n + 2];
  return CF_OK;
}
