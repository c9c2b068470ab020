/* Kinematic analysis (position, velocity, acceleration) on its own, the initial assembly and
 * projections, the initial accelerations, and queries on the state (points, rotations, joint
 * angles and reactions, energy, constraint violation). */
#include <stdio.h>
#include <stdlib.h>

#include "cofem/fem.h"
#include "mbs/mbs_internal.h"

/* penalty of kinematic analysis: strong (1e6 times the mass scale), so the minimum-norm Newton
 * corrections are exact to ~1e-6 relative and the iteration converges within a few steps; the
 * mass metric is regularised by 1e-6 of the mass scale for massless directions */
static double kin_penalty(const cfMbsModel* m) { return 1e6 * m->mref; }
static double kin_eps(const cfMbsModel* m) { return 1e-6 * m->mref; }
/* penalty of the projections: the h^2/4 alpha of eq. 39 */
static double proj_penalty(const cfMbsModel* m) { return m->alpha * m->opt.dt * m->opt.dt / 4; }
/* ... of the projections in the mass metric (W = M): with FE bodies the step's penalty is scaled
 * by their stiffness (h^2/4 K), which is 1e13 times the masses of the hinge's nodes: M + a J'J
 * could then not be factored; the mass scale keeps it at 1e5 as for rigid bodies */
static double mass_penalty(const cfMbsModel* m) { return m->nfe ? 1e5 * m->mref : proj_penalty(m); }

int cf_mbs__assemble_positions(const cfMbsModel* m, cfMbsData* d, double t, int maxit) {
  int n = m->nq;
  double a = kin_penalty(m), eps = kin_eps(m), dqmax = INFINITY;
  for (int it = 0;; it++) {
    cf_mbs__eval_phi(m, d, d->q, t, 1);
    double phimax = cf_mbs_maxabs(m->ncon, d->phi);
    if (!isfinite(phimax)) return cf_error(CF_ERR_SOLVER, "Newton diverged (non-finite equations)"); /* the caller names the analysis */
    if (phimax <= m->opt.tol_phi) return CF_OK;
    int stalled = it > 3 && dqmax <= 10 * m->opt.tol_dq;
    if (stalled || it >= maxit) {
      /* the three largest residuals, named */
      char who[3][200], list[700] = "";
      int top[3] = {-1, -1, -1}, len = 0;
      for (int r = 0; r < 3; r++) {
        for (int i = 0; i < m->ncon; i++) {
          if (i == top[0] || i == top[1]) continue;
          if (top[r] < 0 || fabs(d->phi[i]) > fabs(d->phi[top[r]])) top[r] = i;
        }
        if (top[r] < 0 || fabs(d->phi[top[r]]) <= m->opt.tol_phi) break;
        cf_mbs_describe_con(m, top[r], who[r], sizeof who[r]);
        len += snprintf(list + len, sizeof list - (size_t)len, "%s%.3g in %s", r ? ", " : "", d->phi[top[r]], who[r]);
        if (len >= (int)sizeof list) break;
      }
      return cf_error(CF_ERR_SCENE,
                      "the constraints cannot be satisfied together (inconsistent; %s after %d iterations): largest "
                      "residuals %s; check their points, axes and driver values against each other",
                      stalled ? "Newton stalled" : "no convergence", it, list);
    }
    cf_mbs__assemble(m, d, 1, 0, 0, a, eps);
    int st = cf_mbs__factor(m, d);
    if (st < 0) return st;
    memset(d->r, 0, sizeof(double) * (size_t)n);
    for (int i = 0; i < m->ncon; i++) d->econ[i] = -a * d->con_pen[i] * d->phi[i];
    cf_mbs__jacT_mult_add(m, d, d->econ, d->r);
    st = cf_mbs__solve(m, d, d->r, d->x);
    if (st < 0) return st;
    dqmax = 0;
    for (int i = 0; i < n; i++) d->q[i] += d->x[i], dqmax = fmax(dqmax, fabs(d->x[i]));
  }
}

/* velocities (which 0) or accelerations (1) projected onto the constraints at the current q, t:
 * min |x - x*|_W subject to J x = c; the factor of W + a J'J must be current.
 * Solved for the correction dx = x - x* (min |dx|_W subject to J dx = c - J x*), not for x: every
 * solve then has a right side J^T(...), so the correction is W^-1 J^T (...) up to round-off
 * relative to |dx|. Solving for x itself (right side W x*) leaves a round-off error of about
 * eps cond(W + a J'J) |x| in x, i.e. proportional to the penalty, that is not of that form: for a
 * free body it changed the angular momentum by ~2e-10 relative per step (1e-6 over 5000 steps at
 * the default penalty, 6e-5 at 100 times it; tests/mbs/test_mbs_modal.c). W = cM M + cC C + cK K + eps I
 * enters through the factor only (the correction problem has no W x* term). */
int cf_mbs__project(const cfMbsModel* m, cfMbsData* d, int which, double cM, double cC, double cK, double eps) {
  double* x = which ? d->qdd : d->qd;
  if (which) cf_mbs__eval_bias(m, d, d->q, d->qd, d->t, d->rhs_c);
  else cf_mbs__eval_phit(m, d, d->q, d->t, d->rhs_c);
  double tol = m->opt.tol_phi * (1 + cf_mbs_maxabs(m->ncon, d->rhs_c)), res;
  cf_mbs__jac_mult(m, d, x, d->econ);
  for (int i = 0; i < m->ncon; i++) d->rhs_c[i] = -d->rhs_c[i] - d->econ[i]; /* c - J x* */
  memset(d->w, 0, sizeof(double) * (size_t)m->nq);
  memset(d->sigma, 0, sizeof(double) * (size_t)m->ncon);
  d->fe_rhs = CF_MBS_RHS_JTE; /* the right sides are J^T e (r = d->w = 0) */
  int st = cf_mbs__alm_linear(m, d, d->asm_coef[3] /* the factor's penalty */, d->w, d->rhs_c, d->x, d->sigma, tol, m->opt.proj_iter,
                              &d->proj_iters[which], &res);
  d->fe_rhs = CF_MBS_RHS_GENERAL;
  if (st < 0) return st;
  if (st > 0) d->warning[which ? CF_MBS_WARN_ACC_PROJECTION : CF_MBS_WARN_VEL_PROJECTION]++; /* not converged */
  CF_MBS_FOR_GEN(d, i) x[i] += d->x[i];
  for (int k = 0; k < cf_mbs__nbody_kinds; k++)
    if (cf_mbs__body_kinds[k]->project_add) cf_mbs__body_kinds[k]->project_add(m, d, which);
  if (which) d->phidd_max = res;
  else d->phid_max = res;
  return CF_OK;
}

/* velocities projected onto the constraints in the metric W = M + cC C + cK K + eps I (cC = cK = 0:
 * the mass metric; C, K of the forces last evaluated) */
static int project_velocities_in(const cfMbsModel* m, cfMbsData* d, double cC, double cK, double eps) {
  cf_mbs__eval_phi(m, d, d->q, d->t, 1);
  cf_mbs__assemble(m, d, 1, cC, cK, mass_penalty(m), eps);
  int st = cf_mbs__factor(m, d);
  if (st >= 0) st = cf_mbs__project(m, d, 0, 1, cC, cK, eps);
  return st;
}

int cf_mbs__project_velocities(const cfMbsModel* m, cfMbsData* d, double eps) {
  return project_velocities_in(m, d, 0, 0, eps);
}

/* The initial velocities of a dynamic run: projected in the metric of the steps' own velocity
 * projections, W = M + cC C + cK K (mbs_step.c), where a mechanism has FE bodies. In the mass
 * metric alone the correction of an inconsistent start spreads over the FE part's light nodes as
 * motion its stiffness does not allow: the door on the FE hinge, released with the door turning
 * about its centre of mass while it hangs at the pin, started with its hinge's nodes at up to 1.6e-4
 * m/s against each other; with Rayleigh damping (beta 3e-5) on the hinge, -beta K v made the initial
 * accelerations 4e4 m/s^2 and the first step's hinge velocities 4 m/s (generalized-alpha carries
 * the start's accelerations), and beta 3e-4 failed the first step. In W the stiff directions cost
 * what they cost in a step: 1.8e-5 m/s, and the damped door runs as the undamped one. */
int cf_mbs__project_initial_velocities(const cfMbsModel* m, cfMbsData* d) {
  if (!m->nfe) return cf_mbs__project_velocities(m, d, 0.0);
  double cC, cK;
  cf_mbs__step_coefficients(m, &cC, &cK);
  cf_mbs__eval_forces(m, d, d->q, d->qd, d->t, 0); /* the stiffness and damping of W */
  return project_velocities_in(m, d, cC, cK, 0);
}

int cf_mbs__initial_accelerations(const cfMbsModel* m, cfMbsData* d) {
  double a = mass_penalty(m), res;
  cf_mbs__eval_phi(m, d, d->q, d->t, 1);
  cf_mbs__eval_forces(m, d, d->q, d->qd, d->t, 0);
  cf_mbs__assemble(m, d, 1, 0, 0, a, 0);
  int st = cf_mbs__factor(m, d);
  if (st < 0) return st;
  cf_mbs__eval_bias(m, d, d->q, d->qd, d->t, d->rhs_c);
  for (int i = 0; i < m->ncon; i++) d->rhs_c[i] = -d->rhs_c[i];
  memset(d->lambda, 0, sizeof(double) * (size_t)m->ncon);
  double tol = m->opt.tol_phi * (1 + cf_mbs_maxabs(m->ncon, d->rhs_c));
  int it;
  if (!isfinite(tol)) { /* the velocity terms of the constraint accelerations overflow */
    char scale[400];
    cf_mbs__describe_scale(m, d, scale, sizeof scale);
    return cf_error(CF_ERR_SOLVER, "the constraints' velocity terms are not finite: %s", scale);
  }
  st = cf_mbs__alm_linear(m, d, a, d->Q, d->rhs_c, d->qdd, d->lambda, tol, 50, &it, &res);
  if (st < 0 && !strncmp(cf_last_error(), "mechanism: the solve produced non-finite", 40)) {
    char scale[400];
    cf_mbs__describe_scale(m, d, scale, sizeof scale);
    return cf_error(st, "the solve produced non-finite values: %s", scale);
  }
  if (st < 0) return st;
  if (st > 0) d->warning[CF_MBS_WARN_ACC_PROJECTION]++; /* not converged */
  d->phidd_max = res;
  return CF_OK;
}

/* ---- public kinematic analysis ------------------------------------------------------------------ */
int cf_mbs_position_analysis(const cfMbsModel* m, cfMbsData* d, double t) {
  cf_mbs__fe_host_writes(m, d);
  d->t = t;
  int st = cf_mbs__assemble_positions(m, d, t, 100);
  if (st < 0) return cf_mbs__rethrow(st, "position analysis: ");
  d->phi_max = cf_mbs_maxabs(m->ncon, d->phi);
  return CF_OK;
}

int cf_mbs_velocity_analysis(const cfMbsModel* m, cfMbsData* d) {
  cf_mbs__fe_host_writes(m, d);
  int st = cf_mbs__project_velocities(m, d, kin_eps(m));
  if (st < 0) return cf_mbs__rethrow(st, "velocity analysis: ");
  return CF_OK;
}

int cf_mbs_acceleration_analysis(const cfMbsModel* m, cfMbsData* d) {
  cf_mbs__fe_host_writes(m, d);
  cf_mbs__eval_phi(m, d, d->q, d->t, 1);
  cf_mbs__assemble(m, d, 1, 0, 0, mass_penalty(m), kin_eps(m));
  int st = cf_mbs__factor(m, d);
  if (st >= 0) st = cf_mbs__project(m, d, 1, 1, 0, 0, kin_eps(m));
  if (st < 0) return cf_mbs__rethrow(st, "acceleration analysis: ");
  return CF_OK;
}

int cf_mbs_kinematic_step(const cfMbsModel* m, cfMbsData* d) {
  cf_mbs__fe_host_writes(m, d);
  if (m->ndof != 0)
    return cf_error(CF_ERR_ARG,
                    "kinematic analysis needs every motion driven, but the mechanism has %d degree%s of freedom "
                    "left: add drivers or run a dynamic analysis", m->ndof, m->ndof == 1 ? "" : "s");
  double h = m->opt.dt;
  int n = m->nq;
  double t0 = d->t;
  cf_mbs__save_state(m, d);
  for (int i = 0; i < n; i++) d->q[i] += h * d->qd[i] + 0.5 * h * h * d->qdd[i];
  int st = cf_mbs_position_analysis(m, d, t0 + h);
  if (st >= 0) st = cf_mbs_velocity_analysis(m, d);
  if (st >= 0) st = cf_mbs_acceleration_analysis(m, d);
  if (st < 0) { /* back to the start of the step */
    cf_mbs__restore_state(m, d);
    d->t = t0;
    return st;
  }
  d->steps++;
  d->iters = 0;
  for (int i = 0; i < m->ncon; i++) d->reaction[i] = NAN;
  cf_mbs__accept_angles(m, d);
  return CF_OK;
}

/* ---- queries -------------------------------------------------------------------------------------- */
void cf_mbs_violation(const cfMbsModel* m, cfMbsData* d, double out[3]) { /* (the interface nodes: d has them) */
  int nc = m->ncon;
  cf_mbs__eval_phi(m, d, d->q, d->t, 1);
  out[0] = cf_mbs_maxabs(nc, d->phi);
  cf_mbs__eval_phit(m, d, d->q, d->t, d->rhs_c);
  cf_mbs__jac_mult(m, d, d->qd, d->econ);
  double v = 0;
  for (int i = 0; i < nc; i++) v = fmax(v, fabs(d->econ[i] + d->rhs_c[i]));
  out[1] = v;
  cf_mbs__eval_bias(m, d, d->q, d->qd, d->t, d->rhs_c);
  cf_mbs__jac_mult(m, d, d->qdd, d->econ);
  v = 0;
  for (int i = 0; i < nc; i++) v = fmax(v, fabs(d->econ[i] + d->rhs_c[i]));
  out[2] = v;
  d->phi_max = out[0], d->phid_max = out[1], d->phidd_max = out[2];
}

void cf_mbs_energy(const cfMbsModel* m, const cfMbsData* d, double* kinetic, double* potential) {
  double T = 0;
  for (int b = 0; b < m->nbody; b++) {
    if (cf_mbs__fe_block_on_device(m, d, b)) continue; /* its kind's kinetic is all of it, computed there */
    const double* Mb = m->body_Mbar + 16 * b;
    const double* v = d->qd + m->body_qadr[b];
    for (int k = 0; k < 4; k++)
      for (int l = 0; l < 4; l++) T += 0.5 * Mb[4 * k + l] * cf_mbs_dot3(v + 3 * k, v + 3 * l);
  }
  for (int k = 0; k < cf_mbs__nbody_kinds; k++) /* the modal and FE bodies' part of T */
    if (cf_mbs__body_kinds[k]->kinetic) T += cf_mbs__body_kinds[k]->kinetic(m, d);
  if (kinetic) *kinetic = T;
  if (potential) *potential = cf_mbs__potential(m, d);
}

void cf_mbs_point(const cfMbsModel* m, const cfMbsData* d, int body, const double p[3], double x[3]) {
  if (body < 0) {
    memcpy(x, p, 3 * sizeof(double));
    return;
  }
  cf_mbs__body_point(m, d->q, body, p, x);
}

void cf_mbs_point_vel(const cfMbsModel* m, const cfMbsData* d, int body, const double p[3], double v[3]) {
  if (body < 0) {
    v[0] = v[1] = v[2] = 0;
    return;
  }
  cf_mbs__body_point(m, d->qd, body, p, v);
}

void cf_mbs_point_acc(const cfMbsModel* m, const cfMbsData* d, int body, const double p[3], double a[3]) {
  if (body < 0) {
    a[0] = a[1] = a[2] = 0;
    return;
  }
  cf_mbs__body_point(m, d->qdd, body, p, a);
}

void cf_mbs_rotation(const cfMbsModel* m, const cfMbsData* d, int body, double R[9]) {
  if (body < 0) {
    memset(R, 0, 9 * sizeof(double));
    R[0] = R[4] = R[8] = 1;
    return;
  }
  const double* qb = d->q + m->body_qadr[body];
  for (int i = 0; i < 3; i++)
    for (int k = 0; k < 3; k++) R[3 * i + k] = qb[3 + 3 * k + i];
}

void cf_mbs_omega(const cfMbsModel* m, const cfMbsData* d, int body, double w[3]) {
  w[0] = w[1] = w[2] = 0;
  if (body < 0) return;
  const double* qb = d->q + m->body_qadr[body];
  const double* vb = d->qd + m->body_qadr[body];
  for (int k = 1; k < 4; k++) {
    double c[3];
    cf_mbs_cross3(qb + 3 * k, vb + 3 * k, c);
    for (int i = 0; i < 3; i++) w[i] += 0.5 * c[i];
  }
}

double cf_mbs_joint_angle(const cfMbsModel* m, const cfMbsData* d, int j) {
  if (j < 0 || j >= m->njoint) return NAN;
  int t = m->joint_type[j];
  if (t != CF_MBS_REVOLUTE && t != CF_MBS_CYLINDRICAL) return NAN;
  return cf_mbs__unwrap(cf_mbs__joint_raw_angle(m, d->q, j), d->joint_angle[j]);
}

double cf_mbs_joint_translation(const cfMbsModel* m, const cfMbsData* d, int j) {
  if (j < 0 || j >= m->njoint) return NAN;
  double p1[3], p2[3], a1[3];
  cf_mbs__joint_vec(m, d->q, j, 0, 0, p1);
  cf_mbs__joint_vec(m, d->q, j, 1, 0, p2);
  cf_mbs__joint_vec(m, d->q, j, 0, 1, a1);
  double D[3] = {p2[0] - p1[0], p2[1] - p1[1], p2[2] - p1[2]};
  return cf_mbs_dot3(D, a1);
}

void cf_mbs_joint_reaction(const cfMbsModel* m, const cfMbsData* d, int j, double F[3]) {
  F[0] = F[1] = F[2] = 0;
  if (j < 0 || j >= m->njoint) return;
  const double* l = d->reaction + m->joint_con0[j];
  int t = m->joint_type[j];
  if (t == CF_MBS_SPHERICAL || t == CF_MBS_REVOLUTE || t == CF_MBS_UNIVERSAL || t == CF_MBS_FIXED) {
    for (int i = 0; i < 3; i++) F[i] = -l[i];
  } else if (t == CF_MBS_CYLINDRICAL || t == CF_MBS_PRISMATIC) {
    double f1[3], g1[3];
    cf_mbs__joint_vec(m, d->q, j, 0, 2, f1);
    cf_mbs__joint_vec(m, d->q, j, 0, 3, g1);
    for (int i = 0; i < 3; i++) F[i] = -(l[2] * f1[i] + l[3] * g1[i]);
  } else if (t == CF_MBS_DISTANCE) {
    double p1[3], p2[3];
    cf_mbs__joint_vec(m, d->q, j, 0, 0, p1);
    cf_mbs__joint_vec(m, d->q, j, 1, 0, p2);
    for (int i = 0; i < 3; i++) F[i] = -l[0] * (p2[i] - p1[i]);
  }
}
