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

/* the kinds that own coordinates in this step save and restore them (mbs_body_kind.h, "own") */
void cf_mbs__save_state(const cfMbsModel* m, cfMbsData* d) {
  for (int g = 0; g < d->ngen; g++) cf_mbs__save_range(m, d, d->gen[2 * g], d->gen[2 * g + 1], 0);
  memcpy(d->save + 3 * m->nq, d->lambda, sizeof(double) * (size_t)m->ncon);
  for (int k = 0; k < cf_mbs__nbody_kinds; k++)
    if (cf_mbs__body_kinds[k]->save) cf_mbs__body_kinds[k]->save(m, d);
}

void cf_mbs__restore_state(const cfMbsModel* m, cfMbsData* d) {
  for (int g = 0; g < d->ngen; g++) cf_mbs__save_range(m, d, d->gen[2 * g], d->gen[2 * g + 1], 1);
  memcpy(d->lambda, d->save + 3 * m->nq, sizeof(double) * (size_t)m->ncon);
  for (int k = 0; k < cf_mbs__nbody_kinds; k++)
    if (cf_mbs__body_kinds[k]->restore) cf_mbs__body_kinds[k]->restore(m, d);
}

/* d->gen: [0, nq) less the ranges the kinds own in this step */
void cf_mbs__own_ranges(const cfMbsModel* m, cfMbsData* d) {
  const int cap = m->nbody + 1;
  int* own = d->gen + 2; /* the owned pairs, sorted, then turned into their complement in place */
  int nown = 0;
  for (int k = 0; k < cf_mbs__nbody_kinds && nown < cap; k++)
    if (cf_mbs__body_kinds[k]->own) nown += cf_mbs__body_kinds[k]->own(m, d, own + 2 * nown, cap - nown);
  for (int a = 1; a < nown; a++) /* insertion sort by lo (a handful of bodies) */
    for (int b = a; b > 0 && own[2 * b] < own[2 * b - 2]; b--) {
      int t0 = own[2 * b], t1 = own[2 * b + 1];
      own[2 * b] = own[2 * b - 2], own[2 * b + 1] = own[2 * b - 1];
      own[2 * b - 2] = t0, own[2 * b - 1] = t1;
    }
  /* the complement: gaps before each owned range and after the last (pair j of gen is written at
   * 2 j, before owned pair j at 2 j + 2 is overwritten: read it first) */
  int lo = 0, ng = 0;
  for (int j = 0; j < nown; j++) {
    const int olo = own[2 * j], ohi = own[2 * j + 1];
    if (olo > lo) d->gen[2 * ng] = lo, d->gen[2 * ng + 1] = olo, ng++;
    lo = ohi;
  }
  if (m->nq > lo) d->gen[2 * ng] = lo, d->gen[2 * ng + 1] = m->nq, ng++;
  d->ngen = ng;
}

void cf_mbs__own_none(const cfMbsModel* m, cfMbsData* d) {
  d->ngen = 1, d->gen[0] = 0, d->gen[1] = m->nq;
  for (int k = 0; k < cf_mbs__nbody_kinds; k++)
    if (cf_mbs__body_kinds[k]->own) cf_mbs__body_kinds[k]->own(m, d, NULL, 0);
}

/* Generalized-alpha (Chung-Hulbert parameters from rho_inf; Arnold-Bruls form: the equations of
 * motion hold at t_n+1, the algorithmic acceleration a carries the Newmark update):
 *   q1 = q0 + h qd0 + h^2 ((1/2 - beta) a0 + beta a1),  qd1 = qd0 + h ((1 - gamma) a0 + gamma a1)
 *   (1 - am) a1 = (1 - af) qdd1 + af qdd0 - am a0
 * so qdd1 = (q1 - q*) / (beta' h^2), qd1 = qd* + gamma' / (beta' h) q1 with beta' = beta (1 - af) /
 * (1 - am), gamma' = gamma (1 - af) / (1 - am), and the Newton matrix of (37) becomes
 * M + gamma' h C + beta' h^2 (alpha Phi_q^T Phi_q + K). rho_inf = 1 is the trapezoidal rule
 * (am = af = 0, beta = 1/4, gamma = 1/2, a = qdd), computed exactly as eq. 35. */
cfMbsStepCoef cf_mbs__step_coef(const cfMbsModel* m) {
  double h = m->opt.dt, r = m->opt.rho_inf;
  cfMbsStepCoef c = {h, 0, 0, 0.5, 0.25, 2 / h, 4 / (h * h), h / 2, h * h / 4, r >= 1};
  if (r < 1) {
    c.am = (2 * r - 1) / (r + 1), c.af = r / (r + 1);
    c.gamma = 0.5 - c.am + c.af, c.beta = 0.25 * (1 - c.am + c.af) * (1 - c.am + c.af);
    double bp = c.beta * (1 - c.af) / (1 - c.am), gp = c.gamma * (1 - c.af) / (1 - c.am);
    c.c_qdd = 1 / (bp * h * h), c.c_qd = gp / (bp * h), c.cC = gp * h, c.cK = bp * h * h;
  }
  return c;
}

void cf_mbs__step_coefficients(const cfMbsModel* m, double* cC, double* cK) {
  cfMbsStepCoef sc = cf_mbs__step_coef(m);
  *cC = sc.cC, *cK = sc.cK;
}

static int step(const cfMbsModel* m, cfMbsData* d);


/* the largest |dq|, in tol_dq, a stalled Newton iteration may end at (step(), below) */
#define NEWTON_FLOOR 100

/* The linear coupling (cfMbsOptions.coupling) holds inside the step only: its corotational bodies
 * are linearised at the predictor (mbs_fe.c, "the linear coupling"), keyed by step_serial; solves
 * outside it (initial accelerations, statics, kinematics) are the Newton coupling's. */
int cf_mbs_step(const cfMbsModel* m, cfMbsData* d) {
  d->step_serial++;
  d->fe_linear = m->opt.coupling == CF_MBS_COUPLING_LINEAR && m->nfe > 0 && !d->constraint_hessian;
  d->fe_pass = 0;
  d->fe_rhs = CF_MBS_RHS_GENERAL;
  cf_mbs__own_ranges(m, d);
  int st = step(m, d);
  if (st < 0 && d->fe_linear && cf_mbs__fe_rotated_fall_back(m, d) > 0) {
    /* the rotated factor's step failed (its matrix at rest lacks the stress's stiffness): the same
     * step again with each part's exact factor (the state is the step's start again) */
    d->warning[CF_MBS_WARN_ROTATED_FALLBACK]++;
    d->step_serial++;
    d->fe_pass = 0;
    d->fe_rhs = CF_MBS_RHS_GENERAL;
    st = step(m, d);
  }
  d->fe_linear = 0;
  d->fe_rhs = CF_MBS_RHS_GENERAL;
  cf_mbs__own_none(m, d); /* the owned coordinates back in d (the monitor reads them; the undo below
                             restores them from d->save) */
  if (st >= 0) {
    int sm = cf_mbs__monitor_check(m, d);
    if (sm < 0) { /* undone: the state of the step's start */
      cf_mbs__restore_state(m, d);
      cf_mbs__fe_undo_step(m, d);
      d->t -= m->opt.dt;
      d->steps--;
      char prefix[80];
      snprintf(prefix, sizeof prefix, "step %ld (t = %.6g s): ", d->steps + 1, d->t + m->opt.dt);
      return cf_mbs__rethrow(sm, prefix);
    }
  }
  return st;
}

static int step(const cfMbsModel* m, cfMbsData* d) {
  int nc = m->ncon;
  cfMbsStepCoef sc = cf_mbs__step_coef(m);
  double h = m->opt.dt, t1 = d->t + h, alpha = m->alpha, h2 = sc.cK;
  double a = m->opt.rho_inf >= 1 ? alpha * h * h / 4 : alpha * sc.cK;
  cf_mbs__save_state(m, d);
  d->newton_dq0 = d->newton_dq = INFINITY; /* no update yet */
  /* integrator constants and predictor */
  CF_MBS_FOR_GEN_RANGE(d, lo, hi) cf_mbs__predict_range(&sc, d, lo, hi);
  for (int k = 0; k < cf_mbs__nbody_kinds; k++)
    if (cf_mbs__body_kinds[k]->predict) cf_mbs__body_kinds[k]->predict(m, d, &sc);
  double dqmax = INFINITY, phimax = 0;
  double dq_hist[3] = {INFINITY, INFINITY, INFINITY}; /* |dq| of the last three updates, newest first */
  double phi_pred = 0; /* max |Phi| at the predictor */
  int it, converged = 0, st = CF_OK, pass_checked = 0;
  for (it = 0;; it++) {
    CF_MBS_FOR_GEN_RANGE(d, lo, hi) cf_mbs__rates_range(&sc, d, lo, hi);
    for (int k = 0; k < cf_mbs__nbody_kinds; k++)
      if (cf_mbs__body_kinds[k]->rates) cf_mbs__body_kinds[k]->rates(m, d, &sc);
    double t0 = cf_wall_time();
    cf_mbs__eval_phi(m, d, d->q, t1, 1);
    d->timer[CF_MBS_STAGE_CONSTRAINTS] += cf_wall_time() - t0;
    phimax = cf_mbs_maxabs(nc, d->phi);
    if (!isfinite(phimax)) break;
    if (it == 0) phi_pred = phimax;
    if (it > 0) {
      for (int i = 0; i < nc; i++) d->lambda[i] += alpha * d->con_pen[i] * d->phi[i];
      /* the linear coupling linearises its parts once (mbs_fe.c, "the linear coupling": at the
       * predictor, the element rotations turned by the part's predicted rigid rotation), and a second
       * time only where the first Newton iterate turned a part beyond that by more than the part
       * allows (cf_mbs__fe_single_miss: 3e-4 rad for a free part), at the rotations of that iterate. It
       * is measured at the first iterate whose constraints are as good as the predictor's (10x):
       * usually the first. Where the first update throws the constraints far off (the double
       * four-bar with three flexible bars: massless pins between the bars, |Phi| 0.35 m after the
       * first update against 1e-4 at the predictor), a part linearised there took 4e4 J of elastic
       * energy in one step; the iteration on the first linearisation is continued until it has
       * pulled them back (at the latest, when it converges). */
      if (d->fe_linear && d->fe_pass == 0 && !pass_checked) {
        const int conv0 = dqmax <= m->opt.tol_dq && phimax <= m->opt.tol_phi;
        if (conv0 || phimax <= fmax(10 * phi_pred, m->opt.tol_phi)) {
          pass_checked = 1;
          if (cf_mbs__fe_single_miss(m, d) > 1) {
            d->fe_pass = 1;
            d->fe_twice++;
            if (conv0) dqmax = INFINITY; /* not converged: the second linearisation's update follows */
          }
        }
      }
      if (dqmax <= m->opt.tol_dq && phimax <= m->opt.tol_phi) {
        converged = 1;
        break;
      }
      /* Newton's round-off floor: the constraints hold and |dq| has stopped shrinking (not halved over
       * three updates) a little above tol_dq. The double four-bar (redundant constraints, the penalty
       * growing as 1/dt^2) stalled at |dq| 4e-9 to 2e-8 through its singular poses at dt 5, 2 and 1 ms
       * and failed where 10 ms passed; the position is then known to within |dq|. Counted and
       * reported (CF_MBS_WARN_NEWTON_FLOOR); a real divergence grows or stays far above tol_dq. */
      if (it >= 4 && phimax <= m->opt.tol_phi && dqmax <= NEWTON_FLOOR * m->opt.tol_dq && !(dqmax < 0.5 * dq_hist[2])) {
        converged = 1;
        d->warning[CF_MBS_WARN_NEWTON_FLOOR]++;
        break;
      }
    }
    if (it >= m->opt.max_iter) break;
    t0 = cf_wall_time();
    cf_mbs__eval_forces(m, d, d->q, d->qd, t1, 1);
    d->timer[CF_MBS_STAGE_FORCES] += cf_wall_time() - t0;
    /* r = -h^2/4 (M qdd + J^T (lambda* + alpha Phi) - Q) */
    cf_mbs__apply_M(m, d, d->qdd, d->r);
    for (int i = 0; i < nc; i++) d->econ[i] = d->lambda[i] + alpha * d->con_pen[i] * d->phi[i];
    cf_mbs__jacT_mult_add(m, d, d->econ, d->r);
    CF_MBS_FOR_GEN(d, i) d->r[i] = -h2 * (d->r[i] - d->Q[i]); /* a kind's own: its solve forms them (linear_bF) */
    t0 = cf_wall_time();
    cf_mbs__assemble(m, d, 1, sc.cC, h2, a, 0);
    /* statics: the constraint forces' stiffness with the multipliers lambda* (with the penalty part
     * alpha Phi, which swings with the iteration's second-order error in the rigidity equations, the
     * matrix lost its definiteness) */
    if (d->constraint_hessian) cf_mbs__add_constraint_hessian(m, d, d->lambda, h2, d->Ax);
    d->timer[CF_MBS_STAGE_ASSEMBLE] += cf_wall_time() - t0;
    st = cf_mbs__factor(m, d);
    d->fe_rhs = CF_MBS_RHS_NEWTON, d->fe_rhs_scale = -h2; /* r's joint part: -h2 J^T econ */
    if (st >= 0) st = cf_mbs__solve(m, d, d->r, d->dq);
    d->fe_rhs = CF_MBS_RHS_GENERAL;
    if (st < 0) break;
    dq_hist[2] = dq_hist[1], dq_hist[1] = dq_hist[0], dq_hist[0] = dqmax;
    dqmax = 0;
    CF_MBS_FOR_GEN(d, i) d->q[i] += d->dq[i], dqmax = fmax(dqmax, fabs(d->dq[i]));
    for (int k = 0; k < cf_mbs__nbody_kinds; k++)
      if (cf_mbs__body_kinds[k]->update) dqmax = fmax(dqmax, cf_mbs__body_kinds[k]->update(m, d));
    if (it == 0) d->newton_dq0 = dqmax;
    d->newton_dq = dqmax;
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
    if (!isfinite(phimax) || !isfinite(dqmax)) { /* overflowed: say where the scale came from */
      char scale[400];
      cf_mbs__eval_forces(m, d, d->q, d->qd, t1, 0);
      cf_mbs__describe_scale(m, d, scale, sizeof scale);
      return cf_error(CF_ERR_SOLVER, "step %ld (t = %.6g s): the Newton iteration overflowed (non-finite values "
                      "after %d update%s, worst in %s): %s", d->steps + 1, t1, it, it == 1 ? "" : "s", who, scale);
    }
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
  cf_mbs__assemble(m, d, 1, sc.cC, h2, a, 0);
  d->timer[CF_MBS_STAGE_ASSEMBLE] += cf_wall_time() - t0;
  d->t = t1;
  st = cf_mbs__factor(m, d);
  if (st >= 0) st = cf_mbs__project(m, d, 0, 1, sc.cC, h2, 0);
  if (st >= 0) st = cf_mbs__project(m, d, 1, 1, sc.cC, h2, 0);
  if (st < 0) {
    d->t = t1 - h;
    cf_mbs__restore_state(m, d);
    char prefix[80];
    snprintf(prefix, sizeof prefix, "step %ld (t = %.6g s), projections: ", d->steps + 1, t1);
    return cf_mbs__rethrow(st, prefix);
  }
  for (int i = 0; i < nc; i++) d->reaction[i] = d->lambda[i] + d->sigma[i];
  /* the algorithmic acceleration of the new state (qdd0 is still in d->save) */
  CF_MBS_FOR_GEN_RANGE(d, lo, hi) cf_mbs__accept_range(m, &sc, d, lo, hi);
  for (int k = 0; k < cf_mbs__nbody_kinds; k++)
    if (cf_mbs__body_kinds[k]->accept) cf_mbs__body_kinds[k]->accept(m, d, &sc);
  d->steps++;
  d->iters_total += it;
  if (it > d->iters_max) d->iters_max = it;
  cf_mbs__accept_angles(m, d);
  return CF_OK;
}
