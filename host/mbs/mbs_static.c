/* Static equilibrium of a mechanism (ADAMS statics; paper 003 section 6, the first GFOSUB):
 *
 *   Q(q; s) - Phi_q^T lambda = 0,   Phi(q, T) = 0
 *
 * with Q the forces (gravity and applied loads scaled by the load factor s, springs, the FE
 * bodies' co-rotational internal forces), drivers held at their values at time T. Solved by load
 * increments s = k / n, each by pseudo-transient continuation: the dynamic step of the model
 * (cf_mbs_step: the augmented Lagrangian Newton iteration on the full nonlinear residual, with the
 * FE bodies' tangent and the penalty of the constraints) taken from rest again and again,
 *
 *   M (q_k+1 - q_k) / (beta' h^2) = Q(q_k+1) - Phi_q^T lambda,   velocities reset to zero,
 *
 * an implicit (backward Euler) gradient flow that is stable for any pseudo-step h, moves the stiff
 * FE deformation to equilibrium in one step and the mechanism's soft motions (a pendulum swinging
 * to hanging) geometrically, by 1 / (1 + beta' h^2 w^2) per step. Its fixed points are exactly the
 * static equilibria (q_k+1 = q_k: M qdd = 0, qd = 0), whatever M and h are. It needs no tangent of
 * the constraint forces (Phi_qq lambda), which a Newton iteration on the static equations would,
 * and it is what ADAMS users know as static analysis by dynamic relaxation.
 * Converged when a pseudo-step moves no coordinate by more than tol AND the forces balance: the
 * pseudo-step's unbalanced force M (q_k+1 - q_k) / (beta' h^2) = Q - Phi_q^T lambda is below
 * FORCE_TOL of the larger of the applied forces and the reactions (max |Q|, max |Phi_q^T lambda|).
 * A small move alone is no equilibrium: pseudo-steps cut after failed Newton iterations move a
 * falling body by almost nothing (a free modal body "converged" 262 km down). A load that nothing
 * resists (a free body under gravity) is found early: most of the force unbalanced (FREE_RATIO)
 * over FREE_STEPS pseudo-steps at least 100 times the first one, where any held motion would have
 * settled, and the error names the body and the coordinate. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbs/mbs_internal.h"

#define FORCE_TOL 1e-6
#define FREE_RATIO 0.5
#define FREE_STEPS 3

/* the body a coordinate belongs to, by the user's name: an FE body's node (*node >= 0), else the
 * body (its own coordinates, or a modal body's amplitude block) and *local its coordinate */
static const char* coord_owner(const cfMbsModel* m, int i, int* node, int* local) {
  const char* fe = cf_mbs__fe_coord_owner(m, i, node);
  if (fe) return fe;
  int b = 0;
  while (b + 1 < m->nbody && m->body_qadr[b + 1] <= i) b++;
  *node = -1, *local = i - m->body_qadr[b];
  return m->body_name[b];
}

/* the pseudo-step's unbalanced force max |M dq| / (beta' h^2) (at coordinate *where) and the force
 * scale max(|Q|, |Phi_q^T lambda|); d->dq and d->r as scratch */
static void force_balance(const cfMbsModel* m, cfMbsData* d, double* unbalanced, int* where, double* scale) {
  const int n = m->nq;
  double cC, cK;
  cf_mbs__step_coefficients(m, &cC, &cK);
  for (int i = 0; i < n; i++) d->dq[i] = d->q[i] - d->save[i];
  cf_mbs__apply_M(m, d, d->dq, d->r);
  *unbalanced = 0, *where = 0;
  double q = 0;
  for (int i = 0; i < n; i++) {
    if (fabs(d->r[i]) / cK > *unbalanced) *unbalanced = fabs(d->r[i]) / cK, *where = i;
    q = fmax(q, fabs(d->Q[i]));
  }
  memset(d->r, 0, sizeof(double) * (size_t)n);
  cf_mbs__jacT_mult_add(m, d, d->lambda, d->r);
  double rj = 0;
  for (int i = 0; i < n; i++) rj = fmax(rj, fabs(d->r[i]));
  *scale = fmax(fmax(q, rj), 1e-300);
}

void cf_mbs_static_defaults(cfMbsStaticOptions* o) {
  o->time = 0;
  o->increments = 5;
  o->tol = 1e-10;
  o->max_steps = 500;
  o->interrupt = NULL;
}

/* the model's step set to h, and the equations' penalties that depend on it into the data */
static void pseudo_step(cfMbsModel* m, cfMbsData* d, double h) {
  cf_mbs__set_dt(m, h);
  memcpy(d->con_pen, m->con_pen, sizeof(double) * (size_t)m->ncon);
}

int cf_mbs_static(cfMbsModel* m, cfMbsData* d, const cfMbsStaticOptions* o, cfMbsStaticCallback cb, void* user) {
  cf_mbs__fe_host_writes(m, d);
  if (!(o->increments >= 1) || !(o->tol > 0) || !(o->max_steps >= 1) || !isfinite(o->time))
    return cf_error(CF_ERR_ARG, "mechanism statics: increments >= 1, tol > 0, max_steps >= 1 and a finite time");
  int n = m->nq, st = CF_OK;
  double h0 = m->opt.dt, h = h0, tol_dq0 = m->opt.tol_dq;
  d->t = o->time;
  d->constraint_hessian = 1;
  m->opt.tol_dq = fmin(tol_dq0, 0.1 * o->tol); /* each step's Newton below the moves that end it */
  for (int k = 1; k <= o->increments && st >= 0; k++) {
    double s = (double)k / o->increments, dq = INFINITY;
    cf_mbs_set_load_factor(m, d, s);
    int step, newton = 0, cuts = 0, free_steps = 0, where = 0;
    double unb = 0, fscale = 1;
    for (step = 1; step <= o->max_steps; step++) {
      if (o->interrupt && o->interrupt()) { /* within the increment: it stops here, not at its end */
        st = cf_error(CF_WARN_STATIC_NOT_CONVERGED, "statics interrupted in the increment to load factor %.4g, "
                      "pseudo-step %d", s, step);
        break;
      }
      memset(d->qd, 0, sizeof(double) * (size_t)n); /* from rest */
      memset(d->qdd, 0, sizeof(double) * (size_t)n);
      memset(d->acc, 0, sizeof(double) * (size_t)n);
      d->t = o->time - m->opt.dt; /* the step evaluates drivers and loads at t + h = T */
      st = cf_mbs_step(m, d);
      d->t = o->time;
      if (st < 0) { /* Newton failed from this far: a quarter of the pseudo-step (the state is restored) */
        if (++cuts > 8) break; /* eight in a row: 1/65536 of the step that last worked */
        h *= 0.25;
        pseudo_step(m, d, h);
        step--;
        continue;
      }
      cuts = 0;
      newton += d->iters;
      dq = 0;
      for (int i = 0; i < n; i++) dq = fmax(dq, fabs(d->q[i] - d->save[i]));
      if (!isfinite(dq)) {
        st = cf_error(CF_ERR_SOLVER, "the state became non-finite");
        break;
      }
      force_balance(m, d, &unb, &where, &fscale);
      if (dq <= o->tol && unb <= FORCE_TOL * fscale) break;
      free_steps = h >= 100 * h0 && unb > FREE_RATIO * fscale ? free_steps + 1 : 0;
      if (free_steps >= FREE_STEPS) {
        int node, local = 0;
        const char* who = coord_owner(m, where, &node, &local);
        char coord[64];
        static const char* part[] = {"origin", "axis u", "axis v", "axis w"};
        if (node >= 0) snprintf(coord, sizeof coord, "node %d", node);
        else snprintf(coord, sizeof coord, "%s, component %c", part[(local / 3) & 3], "xyz"[local % 3]);
        st = cf_error(CF_ERR_SOLVER,
                      "no equilibrium: body '%s' is not held against its load (%.3g of the forces' %.3g "
                      "unbalanced, largest at its %s, over %d pseudo-steps of %.3g s): a free degree of freedom under "
                      "gravity or a load, a missing joint, support or spring", who, unb, fscale, coord, FREE_STEPS, h);
        break;
      }
      /* the pseudo-step doubles while the step's Newton iteration converges easily (up to 1e4 times
       * the scene's step): far from equilibrium it stays small enough for Newton, near it the
       * steps become Newton steps on the static equations (the flow's contraction 1 / (1 +
       * beta' h^2 w^2) goes to 0) */
      double grow = d->iters <= 6 ? 2 : (d->iters > 12 ? 0.5 : 1);
      if (grow != 1) {
        h = fmin(h * grow, 1e4 * h0);
        pseudo_step(m, d, h);
      }
    }
    memset(d->qd, 0, sizeof(double) * (size_t)n);
    memset(d->qdd, 0, sizeof(double) * (size_t)n);
    memset(d->acc, 0, sizeof(double) * (size_t)n);
    if (st > 0) break; /* interrupted: the increments before this one stand */
    if (st < 0) {
      char prefix[96];
      snprintf(prefix, sizeof prefix, "statics, load factor %.4g, pseudo-step %d: ", s, step);
      st = cf_mbs__rethrow(st, prefix);
    } else if (step > o->max_steps)
      st = cf_error(CF_ERR_SOLVER,
                    "statics: no equilibrium found at load factor %.4g: after %d pseudo-steps the mechanism still "
                    "moves by %.3g per step with %.3g of the forces' %.3g unbalanced (a motion with a load on it and "
                    "nothing to resist it: a free degree of freedom under gravity or a load, a missing support or "
                    "spring; or raise --max-steps)", s, o->max_steps, dq, unb, fscale);
    else {
      /* the reactions of the equilibrium: M qdd + J^T lambda = Q, J qdd = -bias at rest (the last
       * pseudo-step's lambda* still carries its M (q_k+1 - q_k) / (beta' h^2)); qdd ~ 0 */
      pseudo_step(m, d, h0);
      st = cf_mbs__initial_accelerations(m, d);
      if (st < 0) {
        st = cf_mbs__rethrow(st, "statics, reactions: ");
        break;
      }
      memcpy(d->reaction, d->lambda, sizeof(double) * (size_t)m->ncon);
      memset(d->qdd, 0, sizeof(double) * (size_t)n);
      pseudo_step(m, d, h);
      if (cb && cb(s, step, newton, dq, m, d, user)) break;
    }
  }
  d->constraint_hessian = 0;
  m->opt.tol_dq = tol_dq0;
  pseudo_step(m, d, h0); /* the model as it came */
  return st;
}
