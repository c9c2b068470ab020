/* Multibody core: declarations shared by host/mbs_*.c (not public). */
#ifndef COFEM_MBS_INTERNAL_H
#define COFEM_MBS_INTERNAL_H
#include <cholmod.h>
#include <math.h>
#include <string.h>

#include "cofem/mbs.h"
#include "cofem/mbs_modal.h"
#include "mbs/mbs_body_kind.h"
#include "util/math3.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* CHOLMOD state of one data. The fill-reducing ordering P is computed once (cholmod_analyze); the
 * matrix is then stored already permuted (P A P^T, upper triangle) and analysed again with the
 * natural ordering, simplicial LL^T: cholmod_factorize then works on our arrays without making a
 * permuted copy, so the numeric factorisation per iteration allocates nothing; the triangular
 * solves are ours, over the factor's columns. */
struct cfMbsSolver {
  cholmod_common cc;
  cholmod_sparse A;          /* header over Ap, Ai, Ax below (P A P^T, upper, stype 1) */
  cholmod_factor* L;         /* simplicial LL^T of P A P^T, natural ordering */
  int* perm;                 /* [nq] perm[k] = original index of permuted index k */
  int *Ap, *Ai;              /* permuted pattern */
  double* Ax;                /* [nnz] permuted values */
  int* map;                  /* [nnz] model entry -> permuted entry */
  double* y;                 /* [nq] solve scratch */
  int started;
  /* mechanisms with FE bodies (thousands of coordinates): supernodal LL^T of the permuted lower
   * triangle (stype -1, which CHOLMOD factors in place too), solved by cholmod_solve2 with
   * workspaces it allocates on the first solve and reuses after */
  int super;
  cholmod_dense Bd;          /* header over y */
  cholmod_dense *X, *Yw, *Ew;
  int n, nnz;                /* the factored coordinates (nq_direct) and their entries */
  double *Axr, *bI;          /* with corotational FE bodies: [nnz] the condensed matrix, [nq] right side */
};

/* ---- small vector helpers ---- */
/* the names of util/math3.h the multibody code has always used */
static inline double cf_mbs_dot3(const double* a, const double* b) { return cf_dot3(a, b); }
static inline void cf_mbs_cross3(const double* a, const double* b, double* c) { cf_cross3(a, b, c); }
static inline double cf_mbs_norm3(const double* a) { return cf_norm3(a); }
/* max |x_i| (0 for n = 0); NaN if any x_i is NaN (fmax would drop it, and the callers' isfinite
 * checks of a residual would never fire) */
static inline double cf_mbs_maxabs(int n, const double* x) {
  double m = 0;
  for (int i = 0; i < n; i++) {
    double a = fabs(x[i]);
    if (isnan(a)) return a;
    if (a > m) m = a;
  }
  return m;
}

/* x = N(p) q_b of a moving body b: the same linear map gives positions from q, velocities from qd,
 * accelerations from qdd */
static inline void cf_mbs__body_point(const cfMbsModel* m, const double* q, int b, const double* p, double x[3]) {
  const double* qb = q + m->body_qadr[b];
  for (int i = 0; i < 3; i++) x[i] = qb[i] + p[0] * qb[3 + i] + p[1] * qb[6 + i] + p[2] * qb[9 + i];
}

/* Value of an affine vector at q (with its constant) and of its linear part at x (rates). */
static inline void cf_mbs_vec_add_lin(const cfMbsModel* m, const cfMbsVec* v, const double* x, double o[3]) {
  for (int t = 0; t < v->nb; t++) {
    const double* xb = x + m->body_qadr[v->body[t]];
    for (int k = 0; k < 4; k++) {
      double w = v->w[t][k];
      if (w != 0) o[0] += w * xb[3 * k], o[1] += w * xb[3 * k + 1], o[2] += w * xb[3 * k + 2];
    }
  }
}
static inline void cf_mbs_vec_val(const cfMbsModel* m, const cfMbsVec* v, const double* q, double o[3]) {
  o[0] = v->c[0], o[1] = v->c[1], o[2] = v->c[2];
  cf_mbs_vec_add_lin(m, v, q, o);
}
static inline void cf_mbs_vec_lin(const cfMbsModel* m, const cfMbsVec* v, const double* x, double o[3]) {
  o[0] = o[1] = o[2] = 0;
  cf_mbs_vec_add_lin(m, v, x, o);
}

/* ---- mbs_constraints.c ---- */
int cf_mbs__compile_constraints(const cfMbsDef* def, cfMbsModel* m);
/* add body (or block) b to equation c's gradient slots once; -1 and c->nb = -1 when out of memory */
int cf_mbs__con_add_slot(cfMbsCon* c, int b);
/* the checks of a function definition (also for the forces' scales and actuators); who: the message prefix */
int cf_mbs__check_func(const cfMbsFunc* f, const char* who);
/* a table function's points copied into the model (m->tabs) and f pointed at the copy: the model
 * does not depend on its definition's lifetime. Other functions: nothing. CF_ERR_NOMEM */
int cf_mbs__func_adopt(cfMbsModel* m, cfMbsFunc* f);
/* body coordinates p of the global point P at t = 0 (the definition's pose of body b; ground: P) */
void cf_mbs__local_point(const cfMbsDef* def, int b, const double P[3], double p[3]);
/* Phi at (q, t) into d->phi, and the gradient into d->jac when want_jac; driver values d->drv. */
void cf_mbs__eval_phi(const cfMbsModel* m, cfMbsData* d, const double* q, double t, int want_jac);
/* Phi_t at (q, t) and the acceleration bias (d/dt Phi_q) qd + d/dt Phi_t (uses d->drv of t). */
void cf_mbs__eval_phit(const cfMbsModel* m, cfMbsData* d, const double* q, double t, double* out);
void cf_mbs__eval_bias(const cfMbsModel* m, cfMbsData* d, const double* q, const double* qd, double t,
                       double* out);
/* Phi and its gradient (want_phi), Phi_t (out_t) and the bias (out_b) of the equations rows[] only */
void cf_mbs__eval_rows(const cfMbsModel* m, cfMbsData* d, const double* q, const double* qd, double t,
                       const int* rows, int nrows, int want_phi, double* out_t, double* out_b);
/* y = J x ([ncon]); y += J^T z ([nq]) with the last gradient. */
void cf_mbs__jac_mult(const cfMbsModel* m, const cfMbsData* d, const double* x, double* y);
void cf_mbs__jacT_mult_add(const cfMbsModel* m, const cfMbsData* d, const double* z, double* y);
/* Rank of the gradient at the current d->jac; lists redundant equations (first `cap`) */
int cf_mbs__rank(const cfMbsModel* m, const cfMbsData* d, int* redundant, int cap, int* nred);
/* Joint frame vectors in global coordinates: slot 0/1, which 0 p, 1 a, 2 f, 3 g. */
void cf_mbs__joint_vec(const cfMbsModel* m, const double* q, int j, int slot, int which, double o[3]);
/* atan2 of the rotation of body2's f about the joint axis, in (-pi, pi] */
double cf_mbs__joint_raw_angle(const cfMbsModel* m, const double* q, int j);
double cf_mbs__unwrap(double raw, double ref);

/* ---- mbs_forces.c ---- */
int cf_mbs__compile_forces(const cfMbsDef* def, cfMbsModel* m);
/* Q at (q, qd, t) into d->Q; element tangents d->fK, d->fC when want_tangent. */
void cf_mbs__eval_forces(const cfMbsModel* m, cfMbsData* d, const double* q, const double* qd, double t,
                         int want_tangent);
void cf_mbs__accept_angles(const cfMbsModel* m, cfMbsData* d);
double cf_mbs__potential(const cfMbsModel* m, const cfMbsData* d);

/* ---- mbs_solver.c ---- */
int cf_mbs__build_pattern(cfMbsModel* m);
int cf_mbs__solver_create(const cfMbsModel* m, cfMbsData* d);
void cf_mbs__solver_free(cfMbsData* d);
/* Ax = cM M + cC sym(C) + cK sym(K) + a J^T J + eps I (upper triangle) */
void cf_mbs__assemble(const cfMbsModel* m, cfMbsData* d, double cM, double cC, double cK, double a,
                      double eps);
int cf_mbs__factor(const cfMbsModel* m, cfMbsData* d);
int cf_mbs__solve(const cfMbsModel* m, cfMbsData* d, const double* b, double* x);
/* y = M(q) x (the modal bodies' mass at d->q) */
void cf_mbs__apply_M(const cfMbsModel* m, const cfMbsData* d, const double* x, double* y);
/* x = argmin 1/2 x'Wx - r'x subject to J x = c, by augmented Lagrangian iterations on the current
 * factor of W + a J'J; sigma [ncon] is the multiplier estimate (in/out). Returns 0 converged
 * (max |Jx - c| <= tol), 1 not converged, < 0 error. */
int cf_mbs__alm_linear(const cfMbsModel* m, cfMbsData* d, double a, const double* r, const double* c,
                       double* x, double* sigma, double tol, int maxit, int* iters, double* res);

/* where the applied forces and velocities are largest, bodies named (mbs_forces.c) */
void cf_mbs__describe_scale(const cfMbsModel* m, const cfMbsData* d, char* out, int n);

/* ---- mbs_step.c ---- */
/* d->save = (q, qd, qdd, lambda) at the start of a step; a failed step goes back to it */
void cf_mbs__save_state(const cfMbsModel* m, cfMbsData* d);
void cf_mbs__restore_state(const cfMbsModel* m, cfMbsData* d);
/* The integrator's coefficients (mbs_step.c, step_coef): generalized-alpha's am, af, gamma, beta
 * (rho_inf = 1: the trapezoidal rule), qd = c_qd q + qd_hat, qdd = c_qdd q + qdd_hat, and the Newton
 * matrix's cC, cK. The per-coordinate updates of a step are the functions below, over a range of
 * coordinates: the generic loops run them over the coordinates no body kind owns (d->gen), a kind
 * that owns coordinates in the step (mbs_body_kind.h, "own") over its own, or its device's copy. */
typedef struct cfMbsStepCoef {
  double h, am, af, gamma, beta;
  double c_qd, c_qdd, cC, cK;
  int trapezoidal; /* rho_inf >= 1: eq. 35 exactly */
} cfMbsStepCoef;
cfMbsStepCoef cf_mbs__step_coef(const cfMbsModel* m);
/* the state at the step's start into d->save (layout: q, qd, qdd [nq each], lambda [ncon], acc [nq]) */
static inline void cf_mbs__save_range(const cfMbsModel* m, cfMbsData* d, int lo, int hi, int restore) {
  const int n = m->nq;
  double* live[4] = {d->q, d->qd, d->qdd, d->acc};
  const size_t off[4] = {0, (size_t)n, 2 * (size_t)n, 3 * (size_t)n + (size_t)m->ncon};
  for (int k = 0; k < 4; k++) {
    double *a = live[k] + lo, *b = d->save + off[k] + lo;
    memcpy(restore ? a : b, restore ? b : a, sizeof(double) * (size_t)(hi - lo));
  }
}
/* the predictor and the integrator's constants qd_hat, qdd_hat of n coordinates (mbs_step.c) */
static inline void cf_mbs__predict_n(const cfMbsStepCoef* c, int n, double* q, const double* qd, const double* qdd,
                                     const double* acc, double* qd_hat, double* qdd_hat) {
  const double h = c->h;
  if (c->trapezoidal)
    for (int i = 0; i < n; i++) {
      qd_hat[i] = -(2 / h * q[i] + qd[i]);
      qdd_hat[i] = -(4 / (h * h) * q[i] + 4 / h * qd[i] + qdd[i]);
      q[i] += h * qd[i] + 0.5 * h * h * qdd[i];
    }
  else
    for (int i = 0; i < n; i++) {
      double a0 = acc[i], ab = (c->af * qdd[i] - c->am * a0) / (1 - c->am); /* a1 = ab + (1-af)/(1-am) qdd1 */
      double qstar = q[i] + h * qd[i] + h * h * ((0.5 - c->beta) * a0 + c->beta * ab);
      qdd_hat[i] = -c->c_qdd * qstar;
      qd_hat[i] = qd[i] + h * ((1 - c->gamma) * a0 + c->gamma * ab) - c->c_qd * qstar;
      q[i] += h * qd[i]; /* no acceleration term: with FE bodies it is dominated by the unresolved
                            stiff modes (the first step's accelerations have no elastic forces yet),
                            which puts the predictor far off */
    }
}
static inline void cf_mbs__predict_range(const cfMbsStepCoef* c, cfMbsData* d, int lo, int hi) {
  cf_mbs__predict_n(c, hi - lo, d->q + lo, d->qd + lo, d->qdd + lo, d->acc + lo, d->qd_hat + lo, d->qdd_hat + lo);
}
/* qd, qdd of the Newton iterate q */
static inline void cf_mbs__rates_n(const cfMbsStepCoef* c, int n, const double* q, const double* qd_hat,
                                   const double* qdd_hat, double* qd, double* qdd) {
  for (int i = 0; i < n; i++) {
    qd[i] = c->c_qd * q[i] + qd_hat[i];
    qdd[i] = c->c_qdd * q[i] + qdd_hat[i];
  }
}
static inline void cf_mbs__rates_range(const cfMbsStepCoef* c, cfMbsData* d, int lo, int hi) {
  cf_mbs__rates_n(c, hi - lo, d->q + lo, d->qd_hat + lo, d->qdd_hat + lo, d->qd + lo, d->qdd + lo);
}
/* the algorithmic acceleration of the accepted state from qdd and the step's start qdd0 */
static inline void cf_mbs__accept_n(const cfMbsStepCoef* c, int n, const double* qdd, const double* qdd0, double* acc) {
  if (c->trapezoidal) memcpy(acc, qdd, sizeof(double) * (size_t)n);
  else
    for (int i = 0; i < n; i++) acc[i] = ((1 - c->af) * qdd[i] + c->af * qdd0[i] - c->am * acc[i]) / (1 - c->am);
}
static inline void cf_mbs__accept_range(const cfMbsModel* m, const cfMbsStepCoef* c, cfMbsData* d, int lo, int hi) {
  cf_mbs__accept_n(c, hi - lo, d->qdd + lo, d->save + 2 * (size_t)m->nq + lo, d->acc + lo);
}
/* the coordinates no kind owns in this step, as [lo, hi) pairs d->gen[0 .. 2 d->ngen) (all of them
 * outside cf_mbs_step); cf_mbs__own_ranges asks the kinds at a step's start, cf_mbs__own_none ends it */
#define CF_MBS_FOR_GEN(d, i)                   \
  for (int g_ = 0; g_ < (d)->ngen; g_++)       \
    for (int i = (d)->gen[2 * g_]; i < (d)->gen[2 * g_ + 1]; i++)
#define CF_MBS_FOR_GEN_RANGE(d, lo, hi)        \
  for (int g_ = 0, lo, hi; g_ < (d)->ngen && (lo = (d)->gen[2 * g_], hi = (d)->gen[2 * g_ + 1], 1); g_++)
void cf_mbs__own_ranges(const cfMbsModel* m, cfMbsData* d);
/* coordinate i is one of the generic loops' (no kind owns it in this step) */
static inline int cf_mbs__generic(const cfMbsData* d, int i) {
  for (int g = 0; g < d->ngen; g++)
    if (i >= d->gen[2 * g] && i < d->gen[2 * g + 1]) return 1;
  return 0;
}
void cf_mbs__own_none(const cfMbsModel* m, cfMbsData* d);

/* ---- mbs_kinematics.c ---- */
/* Newton on Phi(q, t) = 0 with minimum-norm corrections (the initial assembly and the position
 * analysis); errors name the equation with the largest residual. */
int cf_mbs__assemble_positions(const cfMbsModel* m, cfMbsData* d, double t, int maxit);
/* Mass-orthogonal velocity projection at the current q, t (eps: regularisation of M). */
int cf_mbs__project_velocities(const cfMbsModel* m, cfMbsData* d, double eps);
int cf_mbs__project_initial_velocities(const cfMbsModel* m, cfMbsData* d); /* a dynamic run's start */
/* the flexible bodies' divergence monitor (mbs_monitor.c): created with the data (their starting
 * radii), checked after each step (CF_ERR_DIVERGED with the message) */
int cf_mbs__monitor_create(const cfMbsModel* m, cfMbsData* d);
int cf_mbs__monitor_check(const cfMbsModel* m, cfMbsData* d);
void cf_mbs__monitor_free(cfMbsData* d);
/* Velocities (which 0) or accelerations (1) projected at the current q, t: min |x - x*|_W subject
 * to J x = c, W = cM M + cC C + cK K + eps I; the factor of W + (h^2/4 alpha) J'J must be current
 * (eq. 39, iterated until the constraint residual is below tolerance). */
int cf_mbs__project(const cfMbsModel* m, cfMbsData* d, int which, double cM, double cC, double cK, double eps);
/* Initial accelerations and multipliers from the equations of motion at the current state. */
int cf_mbs__initial_accelerations(const cfMbsModel* m, cfMbsData* d);

/* ---- mbs_model.c ---- */
void cf_mbs__body_pose(const cfMbsDef* def, int b, double pos[3], double R[9]);
/* Copy cf_last_error() and re-raise it with a prefix */
int cf_mbs__rethrow(int st, const char* prefix);

/* ---- mbs_modal.c: the modal bodies (their part of each stage: cf_mbs__modal_kind) ---- */
/* amplitude blocks to append (mbs_fe.c's blocks follow them) */
int cf_mbs__modal_nblock(const cfMbsDef* def);
/* modal point k of modal body ib: mean rest position sbar (body coordinates), the frame body, the number of modes,
 * the first amplitude block and their count; returns Phibar [3 nm] row-major */
const double* cf_mbs__modal_point(const cfMbsModel* m, int ib, int k, double sbar[3], int* frame, int* nm,
                                  int* blk0, int* nblk);
/* direction e (body coordinates) of the node set nodes[0..nn-1] of modal body ib measured on its
 * nodes: d = A (e + Psi y); *dir = the index of Psi [3 nm] (cf_mbs__modal_dir_rows), or -1 when the
 * set does not move with the modes. Errors (a set on a line) name who, the set and the body. */
int cf_mbs__modal_dir(cfMbsModel* m, int ib, const int* nodes, int nn, const double e[3], const char* who,
                      const char* set, int* dir);
/* the small rotation rows Th [3 nm] (theta = Th y, body axes) of modal point k of modal body ib: an interface
 * point of the reduction (its motion rows 3..5) or a set that does not move with the modes (zeros); NULL where
 * the point's rotation is not known (a node set that is not an interface point) */
const double* cf_mbs__modal_point_rotation(const cfMbsModel* m, int ib, int k);
/* the interface point of reduction r whose set is nodes[0 .. nn - 1], or -1 */
int cf_mbs__reduction_point_of(const cfReduction* r, const int* nodes, int nn);
/* the same at interface point `point` of the reduction r, turned by the point's rotation rows */
int cf_mbs__modal_dir_point(cfMbsModel* m, int ib, const cfReduction* r, int first_mode, int point, const double e[3],
                            int* dir);
const double* cf_mbs__modal_dir_rows(const cfMbsModel* m, int ib, int dir, int* frame, int* nm, int* blk0, int* nblk);
/* its modal displacement A Phibar y (global) at q */
void cf_mbs__modal_point_disp(const cfMbsModel* m, int ib, int k, const double* q, double o[3]);
/* a named point (one node or the mean of a node set) of a modal or FE body: checked, nodes copied;
 * returns its index. kind / pkind name the body and the point in messages. */
int cf_mbs__add_point(cfMbsModalPoint* pts, int* npoint, int max, int mesh_nnode, const char* kind, const char* pkind,
                      const char* bname, const char* name, const int* nodes, int nnode);
int cf_mbs__find_point(const cfMbsModalPoint* pts, int npoint, const char* name);
/* mbs_solver.c: Ax += s B for the 12x12 block of bodies ba, bb (row stride ld) */
void cf_mbs__add_blk(const cfMbsModel* m, double* Ax, int ba, int bb, const double* B, int ld, double s);
/* Ax += s B for the 3x3 block of coordinates ra.. (of body ba) x ca.. (of body bb), upper triangle
 * only (for symmetric matrices added block by block: the entries below come as their transposes) */
void cf_mbs__add_3x3(const cfMbsModel* m, double* Ax, int ra, int ba, int ca, int bb, const double* B, double s);

/* the step's coefficients of the damping and stiffness in the Newton matrix (cf_mbs__assemble's
 * cC and cK; the mass's is 1): the corotational bodies' A0 = (1 + alpha cC) M + (cK + beta cC) K_R */
void cf_mbs__step_coefficients(const cfMbsModel* m, double* cC, double* cK);
/* the FE body a coordinate is a node position of (its name; *node the node), or NULL */
const char* cf_mbs__fe_coord_owner(const cfMbsModel* m, int coord, int* node);
/* d->fe_rhs: what the right side of the next cf_mbs__solve is, for the corotational bodies of the
 * linear coupling (whose part of a solve is then formed without a solve with the part's matrix):
 * GENERAL anything (a solve with A0), NEWTON the step's Newton residual (its joint part
 * d->fe_rhs_scale J^T d->econ), JTE r + J^T d->econ with r zero on the FE nodes (the projections) */
enum { CF_MBS_RHS_GENERAL = 0, CF_MBS_RHS_NEWTON = 1, CF_MBS_RHS_JTE = 2 };
/* ---- mbs_fe.c (FE bodies; their part of each stage: cf_mbs__fe_kind) ---- */
/* corotational bodies: the condensation (the solver's side) */
int cf_mbs__fe_factor(const cfMbsModel* m, cfMbsData* d, double* Axr);
int cf_mbs__fe_rotated_fall_back(const cfMbsModel* m, cfMbsData* d); /* a failed "rotated" step: the exact factor for a while */
double cf_mbs__fe_single_miss(const cfMbsModel* m, const cfMbsData* d); /* the linear coupling's one-pass check: > 1 linearises again */
int cf_mbs__fe_condensed_row(const cfMbsModel* m, const cfMbsCon* c); /* a joint row of a corotational body */
/* d's copies of the nodes of GPU bodies that keep them on the device (mbs_fe.c, "own coordinates"),
 * brought up to date: every reader of d's state outside cf_mbs_step calls it (a no-op otherwise) */
void cf_mbs__fe_sync(const cfMbsModel* m, const cfMbsData* d);
/* the same before a call that writes d's state outside cf_mbs_step (a reset, statics, the kinematic
 * analyses): the next step takes the state from d again */
void cf_mbs__fe_host_writes(const cfMbsModel* m, cfMbsData* d);
/* after cf_mbs__restore_state outside the step (the monitor's undo): a GPU body's device state back
 * to the step's start too, and d's copies from it (d->save holds only its interface nodes) */
void cf_mbs__fe_undo_step(const cfMbsModel* m, cfMbsData* d);
/* the divergence monitor's radius of FE body ib computed where its nodes are: 1 and *r on the
 * device, 0 where d holds them (the caller computes it), < 0 a device error */
int cf_mbs__fe_device_radius(const cfMbsModel* m, const cfMbsData* d, int ib, double* r);
/* body (block) b is a node block of an FE body whose nodes are on the device: d's copies are stale,
 * its kind's energies (kinetic, potential) are all of the body's */
int cf_mbs__fe_block_on_device(const cfMbsModel* m, const cfMbsData* d, int b);
void cf_mbs__set_dt(cfMbsModel* m, double h);
void cf_mbs__add_constraint_hessian(const cfMbsModel* m, const cfMbsData* d, const double* mult, double scale,
                                    double* Ax);
void cf_mbs__fe_jac_mult_condensed(const cfMbsModel* m, const cfMbsData* d, double* y);
int cf_mbs__fe_solve(const cfMbsModel* m, cfMbsData* d, const double* b, double* x,
                     int (*solve_I)(const cfMbsModel*, cfMbsData*, const double*, double*), double* bI);
double cf_mbs__fe_term(const cfMbsModel* m, const cfMbsCon* c, int k, const double* q, const double* qd, double* row,
                       double co, const double* Bx);
/* FE term t's s co B at q, B with a modal set's part when the equation has one: its J_F^T = (w_i s co B)_i */
void cf_mbs__fe_term_dir(const cfMbsModel* m, const cfMbsData* d, const cfMbsCon* c, int t, const double* q, double B[3]);
void cf_mbs__fe_term_vecs(const cfMbsModel* m, const cfMbsCon* c, int k, const double* q, const double* qd, double S[3],
                          double B[3], double Sd[3], double Bd[3]);
/* FE term t's driver coefficient at the drivers' values in d (1 for a joint's term) */
double cf_mbs__fe_term_coef(const cfMbsData* d, const cfMbsCon* c, int t);
void cf_mbs__fe_slots(const cfMbsModel* m, cfMbsCon* c);
/* point k of FE body ib: global position at t = 0; returns its mean vector */
int cf_mbs__fe_point(const cfMbsModel* m, int ib, int k, double P[3]);
/* the axis vector of point k along the unit global `axis` (the set named `set`), its rest length */
int cf_mbs__fe_axis(cfMbsModel* m, int ib, int k, const double axis[3], const char* who, const char* set, double* len,
                    int* normal);
/* S = the weighted node sum v of FE body ib at q (a set's mean or axis measure) */
void cf_mbs__fe_vec(const cfMbsModel* m, int ib, int v, const double* q, double S[3]);


/* node counts and the FE bodies' extra forces, for the controller's inputs (mbs_drive.c) */
int cf_mbs__fe_nnode(const cfMbsModel* m, int ib);
const double* cf_mbs__fe_extra_force(const cfMbsData* d, int ib);
int cf_mbs__modal_nnode(const cfMbsModel* m, int ib);

#endif
