/* One dynamic step: index-3 augmented Lagrangian + trapezoidal rule (paper 000, eqs. 1-2,
 * 35-39).
 *
 *   qd = 2/h q + qd_hat,     qd_hat  = -(2/h q_n + qd_n)                        (35)
 *   qdd = 4/h^2 q + qdd_hat, qdd_hat = -(4/h^2 q_n + 4/h qd_n + qdd_n)
 *   f(q) = h^2/4 (M qdd + Phi_q^T (lambda* + alpha Phi) - Q) = 0                 (1, 36, 37)
 *   Newton: [M + h/2 C + h^2/4 (alpha Phi_q^T Phi_q + K)] dq = -f               (37)
 *   after each Newton update: lambda* += alpha Phi                                (2)
 * from the predictor q = q_n + h qd_n + h^2/2 qdd_n and lambda* of the last step, until
 * max |dq| <= tol_dq and max |Phi| <= tol_phi. Then velocities and accelerations are projected
 * onto Phi_q qd = -Phi_t and Phi_q qdd = -bias with the same matrix (39). */
#include <stdio.h>
#include <stdlib.h>

#include "cofem/fem.h"
#include "mbs/mbs_internal.h"

void cf_mbs__save_state(const cfMbsModel* m, cfMbsData* d) {
  int n = m->nq;
  memcpy(d->save, d->q, sizeof(double) * (size_t)n);
  memcpy(d->save + n, d->qd, sizeof(double) * (size_t)n);
  memcpy(d->save + 2 * n, d->qdd, sizeof(double) * (size_t)n);
  memcpy(d->save + 3 * n, d->lambda, sizeof(double) * (size_t)m->ncon);
}

void cf_mbs__restore_state(const cfMbsModel* m, cfMbsData* d) {
  int n = m->nq;
  memcpy(d->q, d->save, sizeof(double) * (size_t)n);
  memcpy(d->qd, d->save + n, sizeof(double) * (size_t)n);
  memcpy(d->qdd, d->save + 2 * n, sizeof(double) * (size_t)n);
  memcpy(d->lambda, d->save + 3 * n, sizeof(double) * (size_t)m->ncon);
}

int cf_mbs_step(const cfMbsModel* m, cfMbsData* d) {
  int n = m->nq, nc = m->ncon;
  double h = m->opt.dt, t1 = d->t + h, alpha = m->alpha, a = alpha * h * h / 4, h2 = h * h / 4;
  cf_mbs__save_state(m, d);
  /* integrator constants and predictor */
  for (int i = 0; i < n; i++) {
    d->qd_hat[i] = -(2 / h * d->q[i] + d->qd[i]);
    d->qdd_hat[i] = -(4 / (h * h) * d->q[i] + 4 / h * d->qd[i] + d->qdd[i]);
    d->q[i] += h * d->qd[i] + 0.5 * h * h * d->qdd[i];
  }
  double dqmax = INFINITY, phimax = 0;
  int it, converged = 0, st = CF_OK;
  for (it = 0;; it++) {
    for (int i = 0; i < n; i++) {
      d->qd[i] = 2 / h * d->q[i] + d->qd_hat[i];
      d->qdd[i] = 4 / (h * h) * d->q[i] + d->qdd_hat[i];
    }
    double t0 = cf_wall_time();
    cf_mbs__eval_phi(m, d, d->q, t1, 1);
    d->timer[CF_MBS_STAGE_CONSTRAINTS] += cf_wall_time() - t0;
    phimax = cf_mbs_maxabs(nc, d->phi);
    if (!isfinite(phimax)) break;
    if (it > 0) {
      for (int i = 0; i < nc; i++) d->lambda[i] += alpha * d->phi[i];
      if (dqmax <= m->opt.tol_dq && phimax <= m->opt.tol_phi) {
        converged = 1;
        break;
      }
    }
    if (it >= m->opt.max_iter) break;
    t0 = cf_wall_time();
    cf_mbs__eval_forces(m, d, d->q, d->qd, t1, 1);
    d->timer[CF_MBS_STAGE_FORCES] += cf_wall_time() - t0;
    /* r = -h^2/4 (M qdd + J^T (lambda* + alpha Phi) - Q) */
    cf_mbs__apply_M(m, d, d->qdd, d->r);
    for (int i = 0; i < nc; i++) d->econ[i] = d->lambda[i] + alpha * d->phi[i];
    cf_mbs__jacT_mult_add(m, d, d->econ, d->r);
    for (int i = 0; i < n; i++) d->r[i] = -h2 * (d->r[i] - d->Q[i]);
    t0 = cf_wall_time();
    cf_mbs__assemble(m, d, 1, h / 2, h2, a, 0);
    d->timer[CF_MBS_STAGE_ASSEMBLE] += cf_wall_time() - t0;
    st = cf_mbs__factor(m, d);
    if (st >= 0) st = cf_mbs__solve(m, d, d->r, d->dq);
    if (st < 0) break;
    dqmax = 0;
    for (int i = 0; i < n; i++) d->q[i] += d->dq[i], dqmax = fmax(dqmax, fabs(d->dq[i]));
  }
  if (st < 0) {
    cf_mbs__restore_state(m, d);
    char prefix[64];
    snprintf(prefix, sizeof prefix, "step %ld (t = %.6g s): ", d->steps + 1, t1);
    return cf_mbs__rethrow(st, prefix);
  }
  if (!converged) {
    char who[256] = "the equations";
    if (nc) {
      int w = 0;
      for (int i = 1; i < nc; i++)
        if (!(fabs(d->phi[i]) <= fabs(d->phi[w]))) w = i;
      cf_mbs_describe_con(m, w, who, sizeof who);
    }
    cf_mbs__restore_state(m, d);
    return cf_error(CF_ERR_SOLVER,
                    "step %ld (t = %.6g s): Newton did not converge in %d iterations (max |dq| %.3g, max |Phi| %.3g, "
                    "worst in %s); try a smaller time step", d->steps + 1, t1, it, dqmax, phimax, who);
  }
  d->iters = it;
  d->phi_max = phimax;

  /* projections (39) with the matrix at the converged positions */
  double t0 = cf_wall_time();
  cf_mbs__eval_forces(m, d, d->q, d->qd, t1, 1);
  d->timer[CF_MBS_STAGE_FORCES] += cf_wall_time() - t0;
  t0 = cf_wall_time();
  cf_mbs__assemble(m, d, 1, h / 2, h2, a, 0);
  d->timer[CF_MBS_STAGE_ASSEMBLE] += cf_wall_time() - t0;
  d->t = t1;
  st = cf_mbs__factor(m, d);
  if (st >= 0) st = cf_mbs__project(m, d, 0, 1, h / 2, h2, 0);
  if (st >= 0) st = cf_mbs__project(m, d, 1, 1, h / 2, h2, 0);
  if (st < 0) {
    d->t = t1 - h;
    cf_mbs__restore_state(m, d);
    char prefix[80];
    snprintf(prefix, sizeof prefix, "step %ld (t = %.6g s), projections: ", d->steps + 1, t1);
    return cf_mbs__rethrow(st, prefix);
  }
  for (int i = 0; i < nc; i++) d->reaction[i] = d->lambda[i] + d->sigma[i];
  d->steps++;
  d->iters_total += it;
  if (it > d->iters_max) d->iters_max = it;
  cf_mbs__accept_angles(m, d);
  return CF_OK;
}
