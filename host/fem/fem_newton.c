/* Generalized-alpha (Chung & Hulbert, J. Appl. Mech. 60, 1993) with Newton iterations on the
 * co-rotational residual (issue 15).
 *
 * Parameters from the spectral radius at infinite frequency rho = rho_inf in [0, 1]:
 *   am = (2 rho - 1) / (rho + 1),  af = rho / (rho + 1),
 *   gamma = 1/2 - am + af,          beta = (1 - am + af)^2 / 4
 * (second order, unconditionally stable for linear problems, least low-frequency damping for the
 * high-frequency damping rho asks for).
 * Newmark relations from (x0, v0, a0) at t to (x1, v1, a1) at t + h:
 *   a1 = (x1 - x0 - h v0 - h^2 (1/2 - beta) a0) / (beta h^2)
 *   v1 = v0 + h ((1 - gamma) a0 + gamma a1)
 * Balance at the generalized midpoints, the elastic force averaged between the end points (not
 * evaluated at an interpolated configuration: a rigidly rotating part has f_el = 0 at both ends
 * but not at their mean):
 *   r(x1) = M [(1 - am) a1 + am a0] + C [(1 - af) v1 + af v0] + (1 - af) f_el(x1) + af f_el(x0)
 *           - (1 - af) (F1 + M g) - af (F0 + M g) = 0,          C = alpha M + beta_R K_R(x1)
 * Newton on x1 (dC/dx1 left out):
 *   dr/dx1 = (1 - am)/(beta h^2) M + (1 - af) gamma/(beta h) C + (1 - af) T
 * T = K_R (paper 003) or sym(K_T), the symmetric part of the consistent co-rotational tangent
 * (fem_tangent.c; the PCG needs a symmetric matrix). Multiplied by s = beta h^2 / (1 - am) so that
 * the mass coefficient is ~1 as in the other integrators' matrices:
 *   A = cm M + ck T,   cm = 1 + (1 - af) gamma h alpha / (1 - am),
 *                      ck = (1 - af) (gamma h beta_R + beta h^2) / (1 - am)
 *   A dx = -s r  (block-Jacobi or rotated-Cholesky PCG, warm-started from the last increment, to
 *                 pcg_tol |s r| or a tenth of Newton's force tolerance, whichever is larger),
 *   x1 <- x1 + dx
 * If A is indefinite with sym(K_T), that iteration is solved with K_R (as cf_step does).
 * rho = 1: am = af = gamma = 1/2, beta = 1/4, the trapezoidal rule with end-point balance
 * (M a1 + C v1 + f_el(x1) = F1 + M g whenever it held at t), so a0 is made consistent at the first
 * step: M a0 = F0 + M g - f_el(x0) - C v0.
 * Predictor: x1 = x0 + h v0 + h^2/2 a0 (a1 = a0).
 * Converged when both
 *   |r| <= tol (|M a_m| + |C v_f| + |f_el,f| + |F_f + M g|) + 1e-12 E size^2  (free DOFs)
 *   |dx| <= tol max(|x1 - x0|, 1e-9 size sqrt(ndof))            (the last increment)
 * tol = newton_tol; the predictor is accepted on the force test alone (it has no increment). The
 * term 1e-12 E size^2 is the round-off floor of the elastic forces: a rigidly spinning part has all
 * four terms near zero while each element's K_e (R^T x - X) carries round-off of E size eps h_e
 * (the 0.6 m bar at 19 rad/s stalls at |r| = 2e-6 N, the floor there is 0.08 N: a displacement of
 * 1e-12 m).
 * Failure (iteration cap, non-finite residual, PCG error): the (sub)step is redone as two halves,
 * the load interpolated linearly between f_ext_prev (t) and f_ext (t + h), at most newton_max_cuts
 * halvings deep; then the step fails with CF_ERR_DIVERGED and the state as it was. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cofem/fem.h"
#include "fem/fem_backend.h"
#include "fem/fem_element.h"
#include "fem/fem_newton.h"
#include "fem/fem_parallel.h"
#include "fem/fem_pcg.h"
#include "fem/fem_precond.h"

int cf_newton_check_def(const cfModelDef* d) {
  if (!(d->rho_inf >= 0 && d->rho_inf <= 1))
    return cf_error(CF_ERR_ARG, "generalized-alpha: rho_inf = %g must lie in [0, 1]", d->rho_inf);
  if (!(d->newton_tol > 0 && d->newton_tol < 1))
    return cf_error(CF_ERR_ARG, "generalized-alpha: newton_tol = %g must lie in (0, 1)", d->newton_tol);
  if (d->newton_max_iter < 1 || d->newton_max_iter > 1000)
    return cf_error(CF_ERR_ARG, "generalized-alpha: newton_max_iter = %d must lie in [1, 1000]", d->newton_max_iter);
  if (d->newton_max_cuts < 0 || d->newton_max_cuts > 20)
    return cf_error(CF_ERR_ARG, "generalized-alpha: newton_max_cuts = %d must lie in [0, 20]", d->newton_max_cuts);
  return CF_OK;
}

/* arrays of the integrator: a, ga_x0, ga_v0, ga_a0, ga_f0, ga_F0, ga_F1, ga_du, ga_du1, ga_r and
 * the step's a (ga_a_step) in one block; mon_x0 for every integrator */
enum { GA_NARRAY = 11 };

int cf_newton_data_alloc(const cfModel* m, cfData* d) {
  const size_t n = (size_t)m->ndof;
  d->mon_x0 = calloc(n, sizeof(double));
  if (!d->mon_x0) return CF_ERR_NOMEM;
  d->mon_size = cf_part_size(m);
  if (m->def.integrator != CF_INTEGRATOR_GENERALIZED_ALPHA) return CF_OK;
  double* b = calloc(GA_NARRAY * n, sizeof(double));
  if (!b) return CF_ERR_NOMEM;
  double** arr[GA_NARRAY] = {&d->a, &d->ga_x0, &d->ga_v0, &d->ga_a0, &d->ga_f0, &d->ga_F0,
                             &d->ga_F1, &d->ga_du, &d->ga_du1, &d->ga_r, &d->ga_a_step};
  for (int k = 0; k < GA_NARRAY; k++) *arr[k] = b + k * n;
  return CF_OK;
}

void cf_newton_data_free(cfData* d) {
  free(d->a); /* the block */
  free(d->mon_x0);
  d->a = NULL;
  d->mon_x0 = NULL;
}

void cf_newton_data_reset(const cfModel* m, cfData* d) {
  if (d->a) memset(d->a, 0, GA_NARRAY * sizeof(double) * (size_t)m->ndof);
  d->ga_ready = 0;
  d->newton_iters = 0;
  d->newton_iters_total = 0;
  d->newton_residual = 0;
  d->step_cuts = 0;
  d->mon_work = d->mon_work_max = d->mon_energy0 = d->mon_energy = 0;
}

static void ga_parameters(double rho, double* am, double* af, double* g, double* b) {
  *am = (2 * rho - 1) / (rho + 1);
  *af = rho / (rho + 1);
  *g = 0.5 - *am + *af;
  *b = 0.25 * (1 - *am + *af) * (1 - *am + *af);
}

void cf_newton_coefficients(const cfModel* m, double h, double* cm, double* ck, double* par) {
  double am, af, g, b;
  ga_parameters(m->def.rho_inf, &am, &af, &g, &b);
  *cm = 1 + (1 - af) * g * h * m->def.rayleigh_alpha / (1 - am);
  *ck = (1 - af) * (g * h * m->def.rayleigh_beta + b * h * h) / (1 - am);
  if (par) par[0] = am, par[1] = af, par[2] = g, par[3] = b;
}

static int held(const cfModel* m, const cfData* d, int i) {
  return d->supports_active && m->fixed[i];
}

/* y = K_R(x) v with the element rotations of the last polar stage (R K_e R^T per element; d->KR
 * may hold sym(K_T) instead) */
static void apply_KR_rotated(const cfModel* m, const cfData* d, const double* v, double* y) {
  memset(y, 0, sizeof(double) * m->ndof);
  for (int e = 0; e < m->ntet; e++) {
    const double* R = d->R + 9 * e;
    const int np = m->npe, nk = 3 * np;
    const double* K = m->Ke + (size_t)nk * nk * e;
    const int* t = m->tet + np * (size_t)e;
    double w[30], kw[30];
    for (int a = 0; a < np; a++) /* w = R^T v_e */
      for (int i = 0; i < 3; i++)
        w[3 * a + i] = R[i] * v[3 * t[a]] + R[3 + i] * v[3 * t[a] + 1] + R[6 + i] * v[3 * t[a] + 2];
    for (int i = 0; i < nk; i++) {
      double s = 0;
      for (int j = 0; j < nk; j++) s += K[nk * i + j] * w[j];
      kw[i] = s;
    }
    for (int a = 0; a < np; a++)
      for (int i = 0; i < 3; i++)
        y[3 * t[a] + i] += R[3 * i] * kw[3 * a] + R[3 * i + 1] * kw[3 * a + 1] + R[3 * i + 2] * kw[3 * a + 2];
  }
}

/* y = M x (block mass) */
static void apply_mass(const cfModel* m, const double* x, double* y) {
  CF_FOR(m, i, m->nnode, m->nnode > 4096, cf_node_mass_row(i, m->row_ptr, m->col, m->Mblk, x, y + 3 * i));
}

/* |x|^2 over the free DOFs */
static double free_norm2(const cfModel* m, const cfData* d, const double* x) {
  double s = 0;
  for (int i = 0; i < m->ndof; i++)
    if (!held(m, d, i)) s += x[i] * x[i];
  return s;
}

/* C v = alpha M v + beta_R K_R v into y (tmp: scratch) */
static void apply_damping(const cfModel* m, const cfData* d, const double* v, double* y, double* tmp) {
  const double al = m->def.rayleigh_alpha, be = m->def.rayleigh_beta;
  if (al == 0 && be == 0) {
    memset(y, 0, sizeof(double) * m->ndof);
    return;
  }
  apply_mass(m, v, y);
  for (int i = 0; i < m->ndof; i++) y[i] *= al;
  if (be != 0) {
    apply_KR_rotated(m, d, v, tmp);
    for (int i = 0; i < m->ndof; i++) y[i] += be * tmp[i];
  }
}

/* The accelerations consistent with the current state: M a = F0 + M g - f_el(x) - C v, by PCG on
 * A = M (block Jacobi); also f_el(x) into ga_f0. */
static int initial_acceleration(const cfModel* m, cfData* d, const double* F0) {
  const int n = m->ndof;
  const double* g = m->def.gravity;
  cf_stage_polar(m, d);
  cf_stage_elastic(m, d);
  memcpy(d->ga_f0, d->f_el, sizeof(double) * n);
  apply_damping(m, d, d->v, d->r, d->q);
  for (int k = 0; k < n; k++) {
    int node = k / 3;
    d->b[k] = held(m, d, k) ? 0.0 : F0[k] + m->node_mass[node] * g[k % 3] - d->f_el[k] - d->r[k];
  }
  d->b_scale = 0;
  CF_FOR(m, k, m->nnzb, m->nnzb > 16384, cf_block_gather_n(k, m->npe, m->blk_src_ptr, m->blk_src, d->KR, m->Mblk, 1.0, 0.0, d->A));
  CF_FOR(m, k, m->nnode, m->nnode > 4096, cf_block_jacobi(k, m->diag, d->A, m->fixed, d->supports_active, d->Pinv));
  /* the PCG solves into d->v: point it at the accelerations, with block Jacobi for the mass */
  double* v = d->v;
  struct cfPrecond* pre = d->precond;
  d->v = d->a;
  d->precond = NULL;
  memset(d->a, 0, sizeof(double) * n);
  int st = cf_stage_pcg(m, d);
  d->v = v;
  d->precond = pre;
  for (int k = 0; k < n; k++)
    if (held(m, d, k)) d->a[k] = 0;
  return st;
}

/* ---- the CPU's stages of a generalized-alpha step (cfNewtonOps, fem/fem_backend.h) ------------ */
typedef struct CpuNewton {
  const cfModel* m;
  cfData* d;
  double h; /* the (sub)step of the last predict */
} CpuNewton;

static int cpu_step_begin(void* ctx) {
  CpuNewton* c = ctx;
  const cfModel* m = c->m;
  cfData* d = c->d;
  const int n = m->ndof;
  /* supports hold their DOFs at zero velocity and acceleration */
  for (int i = 0; i < n; i++)
    if (held(m, d, i)) d->v[i] = d->a[i] = 0;
  if (!d->ga_ready) {
    double t0 = cf_wall_time();
    int st = initial_acceleration(m, d, d->f_ext_prev);
    d->timer[CF_STAGE_ASSEMBLE] += cf_wall_time() - t0;
    if (st < 0) return st;
    d->ga_ready = 1;
  }
  /* the step's start, kept until it is done: x in mon_x0 (cf_step), v in v_prev, a in ga_a_step */
  memcpy(d->v_prev, d->v, sizeof(double) * n);
  memcpy(d->ga_a_step, d->a, sizeof(double) * n);
  return CF_OK;
}

static int cpu_step_restore(void* ctx) {
  CpuNewton* c = ctx;
  const cfModel* m = c->m;
  cfData* d = c->d;
  const int n = m->ndof;
  /* the state as it was: x, v, a, and f_el(x) for the next try */
  memcpy(d->x, d->mon_x0, sizeof(double) * n);
  memcpy(d->v, d->v_prev, sizeof(double) * n);
  memcpy(d->a, d->ga_a_step, sizeof(double) * n);
  cf_stage_polar(m, d);
  cf_stage_elastic(m, d);
  memcpy(d->ga_f0, d->f_el, sizeof(double) * n);
  return CF_OK;
}

static int cpu_sub_begin(void* ctx, double th0, double th1) {
  CpuNewton* c = ctx;
  cfData* d = c->d;
  const int n = c->m->ndof;
  for (int i = 0; i < n; i++) {
    d->ga_F0[i] = d->f_ext_prev[i] + th0 * (d->f_ext[i] - d->f_ext_prev[i]);
    d->ga_F1[i] = d->f_ext_prev[i] + th1 * (d->f_ext[i] - d->f_ext_prev[i]);
  }
  memcpy(d->ga_x0, d->x, sizeof(double) * n);
  memcpy(d->ga_v0, d->v, sizeof(double) * n);
  memcpy(d->ga_a0, d->a, sizeof(double) * n);
  return CF_OK;
}

static int cpu_sub_accept(void* ctx) {
  CpuNewton* c = ctx;
  memcpy(c->d->ga_f0, c->d->f_el, sizeof(double) * c->m->ndof); /* f_el(x0) of the next (sub)step */
  return CF_OK;
}

static int cpu_sub_restore(void* ctx) {
  CpuNewton* c = ctx;
  cfData* d = c->d;
  const int n = c->m->ndof;
  memcpy(d->x, d->ga_x0, sizeof(double) * n);
  memcpy(d->v, d->ga_v0, sizeof(double) * n);
  memcpy(d->a, d->ga_a0, sizeof(double) * n);
  return CF_OK;
}

/* predictor: x1 = x0 + h v0 + h^2/2 a0 */
static int cpu_predict(void* ctx, double h) {
  CpuNewton* c = ctx;
  const cfModel* m = c->m;
  cfData* d = c->d;
  const double *x0 = d->ga_x0, *v0 = d->ga_v0, *a0 = d->ga_a0;
  c->h = h;
  for (int i = 0; i < m->ndof; i++) d->x[i] = held(m, d, i) ? x0[i] : x0[i] + h * v0[i] + 0.5 * h * h * a0[i];
  return CF_OK;
}

/* a1, v1 from x1 (Newmark relations); polar, elastic; r = M a_m + C v_f + f_el,f - F_f - M g with
 * the four terms' squared norms, |r|^2 over the free DOFs and |x1 - x0|^2 into out[6] */
static int cpu_residual(void* ctx, const double* par, double h, double* out) {
  CpuNewton* c = ctx;
  const cfModel* m = c->m;
  cfData* d = c->d;
  const int n = m->ndof;
  const double am = par[0], af = par[1], ga = par[2], be = par[3];
  const double* g = m->def.gravity;
  const double *x0 = d->ga_x0, *v0 = d->ga_v0, *a0 = d->ga_a0, *f0 = d->ga_f0, *F0 = d->ga_F0, *F1 = d->ga_F1;
  const double* x = d->x;
  double* r = d->ga_r;
  double t0 = cf_wall_time();
  for (int i = 0; i < n; i++) {
    if (held(m, d, i)) {
      d->a[i] = d->v[i] = 0;
      continue;
    }
    d->a[i] = (x[i] - x0[i] - h * v0[i] - h * h * (0.5 - be) * a0[i]) / (be * h * h);
    d->v[i] = v0[i] + h * ((1 - ga) * a0[i] + ga * d->a[i]);
  }
  cf_stage_polar(m, d);
  double t1 = cf_wall_time();
  cf_stage_elastic(m, d);
  for (int i = 0; i < n; i++) {
    d->q[i] = (1 - am) * d->a[i] + am * a0[i];
    d->p[i] = (1 - af) * d->v[i] + af * v0[i];
  }
  apply_mass(m, d->q, d->z);
  apply_damping(m, d, d->p, d->q, d->r);
  double sq[4] = {0, 0, 0, 0};
  for (int i = 0; i < n; i++) {
    if (held(m, d, i)) {
      r[i] = 0;
      continue;
    }
    const double fel = (1 - af) * d->f_el[i] + af * f0[i];
    const double fx = (1 - af) * F1[i] + af * F0[i] + m->node_mass[i / 3] * g[i % 3];
    r[i] = d->z[i] + d->q[i] + fel - fx;
    sq[0] += d->z[i] * d->z[i];
    sq[1] += d->q[i] * d->q[i];
    sq[2] += fel * fel;
    sq[3] += fx * fx;
  }
  double dx2 = 0;
  for (int i = 0; i < n; i++) dx2 += (x[i] - x0[i]) * (x[i] - x0[i]);
  for (int k = 0; k < 4; k++) out[k] = sq[k];
  out[4] = free_norm2(m, d, r);
  out[5] = dx2;
  d->timer[CF_STAGE_POLAR] += t1 - t0;
  d->timer[CF_STAGE_ASSEMBLE] += cf_wall_time() - t1;
  return CF_OK;
}

/* A dx = -s r, x += dx (see cfNewtonOps.solve) */
static int cpu_solve(void* ctx, double cm, double ck, double s, double b_scale, int first, double* dx2,
                     int* pcg_iters) {
  CpuNewton* c = ctx;
  const cfModel* m = c->m;
  cfData* d = c->d;
  const int n = m->ndof;
  double *r = d->ga_r, *du = d->ga_du;
  double t2 = cf_wall_time();
  int st = CF_OK;
  *pcg_iters = 0;
  for (int pass = 0; pass < 2; pass++) {
    CF_FOR(m, k, m->nnzb, m->nnzb > 16384, cf_block_gather_n(k, m->npe, m->blk_src_ptr, m->blk_src, d->KR, m->Mblk, cm, ck, d->A));
    if (d->precond) cf_precond_update(m, d);
    else CF_FOR(m, k, m->nnode, m->nnode > 4096, cf_block_jacobi(k, m->diag, d->A, m->fixed, d->supports_active, d->Pinv));
    for (int i = 0; i < n; i++) d->b[i] = -s * r[i];
    d->b_scale = b_scale;
    /* the PCG solves into d->v: point it at the increment, which starts from the last one (the
     * previous iteration's, or the first of the last step), scaled by the warm start */
    if (first || pass == 1) memcpy(du, d->ga_du1, sizeof(double) * n);
    double* v = d->v;
    d->v = du;
    if (m->def.warm_start) {
      memset(d->warm_v1, 0, sizeof(double) * n); /* no second vector: the guess is only scaled */
      cf_pcg_warm_start(m, d, d->warm_v1);
    }
    st = cf_stage_pcg(m, d);
    d->v = v;
    *pcg_iters += d->pcg_iters;
    if (st == CF_WARN_INDEFINITE && m->def.dyn_tangent == CF_DYN_TANGENT_SYM_CONSISTENT && pass == 0) {
      d->force_kr = 1; /* the geometric part made A indefinite: this iteration with K_R */
      cf_stage_elastic(m, d);
      d->force_kr = 0;
      continue;
    }
    break;
  }
  d->timer[CF_STAGE_PCG] += cf_wall_time() - t2;
  if (st < 0) return st;
  if (first) memcpy(d->ga_du1, du, sizeof(double) * n);
  *dx2 = free_norm2(m, d, du);
  for (int i = 0; i < n; i++) d->x[i] += du[i];
  return st;
}

int cf_step_generalized_alpha(const cfModel* m, cfData* d) {
  CpuNewton c = {m, d, 0};
  const cfNewtonOps ops = {&c,          cpu_step_begin, cpu_step_restore, cpu_sub_begin, cpu_sub_accept,
                           cpu_sub_restore, cpu_predict, cpu_residual,    cpu_solve};
  return cf_newton_step(m, d, &ops);
}

/* ---- the Newton bookkeeping, shared by the CPU and the CUDA backend --------------------------- */
typedef struct NewtonOut {
  int iters, pcg_iters;
  double res;      /* relative force residual of the last evaluation */
  const char* why; /* failure */
  int fatal;       /* a backend error (device, memory): no halving, the step fails with it */
} NewtonOut;

static int backend_error(int st) { return st == CF_ERR_CUDA || st == CF_ERR_NOMEM; }

/* Newton iterations from the (sub)step's start over h; on success x, v, a, R, f_el belong to the
 * end of the (sub)step. */
static int ga_newton(const cfModel* m, cfData* d, const cfNewtonOps* ops, double h, NewtonOut* o) {
  const int n = m->ndof;
  double par[4], cm, ck;
  cf_newton_coefficients(m, h, &cm, &ck, par);
  const double am = par[0], be = par[3];
  const double s = be * h * h / (1 - am), tol = m->def.newton_tol;
  double dx_norm = 0;
  o->iters = o->pcg_iters = 0;
  o->res = 0;
  o->why = NULL;
  o->fatal = 0;
  int st = ops->predict(ops->ctx, h);
  if (st < 0) {
    o->why = "the backend failed";
    o->fatal = 1;
    return st;
  }
  const double floor_dx = 1e-9 * d->mon_size * sqrt((double)n);
  const double floor_f = 1e-12 * m->def.E * d->mon_size * d->mon_size;
  for (int it = 0;; it++) {
    double f[6];
    st = ops->residual(ops->ctx, par, h, f);
    if (st < 0) {
      o->why = "the backend failed";
      o->fatal = 1;
      break;
    }
    const double scale = sqrt(f[0]) + sqrt(f[1]) + sqrt(f[2]) + sqrt(f[3]);
    const double rn = sqrt(f[4]);
    o->res = scale > 0 ? rn / scale : rn;
    if (!isfinite(rn) || !isfinite(scale)) {
      o->why = "the residual is not finite";
      st = CF_ERR_DIVERGED;
      break;
    }
    const double dx_scale = fmax(sqrt(f[5]), floor_dx);
    const int conv_f = rn <= tol * scale + floor_f;
    const int conv_u = it == 0 || dx_norm <= tol * dx_scale;
    if (conv_f && conv_u) break;
    if (it == m->def.newton_max_iter) {
      o->why = "the iteration cap was reached";
      st = CF_ERR_DIVERGED;
      break;
    }
    /* an inexact Newton step: the PCG stops at pcg_tol |b|, or where its residual is a tenth of
     * what Newton's force test allows (target = pcg_tol max(|b|, b_scale), fem_pcg.c): the last
     * iterations' small corrections need no more */
    const double b_scale = 0.1 * s * (tol * scale + floor_f) / m->def.pcg_tol;
    double dx2 = 0;
    int pcg = 0;
    st = ops->solve(ops->ctx, cm, ck, s, b_scale, it == 0, &dx2, &pcg);
    o->pcg_iters += pcg;
    if (st < 0) {
      o->why = "the linear solve failed";
      o->fatal = backend_error(st);
      break;
    }
    st = CF_OK; /* a PCG warning (cap, indefinite) is Newton's to judge */
    dx_norm = sqrt(dx2);
    o->iters = it + 1;
  }
  return st;
}

typedef struct StepLog {
  int iters, pcg_iters, cuts, depth, fatal;
  double res;
  const char* why;
} StepLog;

/* The (sub)step from fraction th0 to th1 of the step (loads interpolated), halved on failure. */
static int ga_advance(const cfModel* m, cfData* d, const cfNewtonOps* ops, double th0, double th1, int depth,
                      StepLog* log) {
  const double h = (th1 - th0) * m->def.dt;
  int st = ops->sub_begin(ops->ctx, th0, th1);
  if (st < 0) {
    log->fatal = 1;
    log->why = "the backend failed";
    return st;
  }
  NewtonOut o;
  st = ga_newton(m, d, ops, h, &o);
  log->iters += o.iters;
  log->pcg_iters += o.pcg_iters;
  log->res = o.res;
  if (st >= 0) return ops->sub_accept(ops->ctx);
  log->why = o.why;
  if (o.fatal) {
    log->fatal = 1;
    return st;
  }
  int rs = ops->sub_restore(ops->ctx);
  if (rs < 0) {
    log->fatal = 1;
    return rs;
  }
  if (depth >= m->def.newton_max_cuts) return CF_ERR_DIVERGED;
  log->cuts++;
  if (depth + 1 > log->depth) log->depth = depth + 1;
  const double thm = 0.5 * (th0 + th1);
  st = ga_advance(m, d, ops, th0, thm, depth + 1, log);
  if (st < 0) return st;
  return ga_advance(m, d, ops, thm, th1, depth + 1, log);
}

int cf_newton_step(const cfModel* m, cfData* d, const cfNewtonOps* ops) {
  const double h = m->def.dt;
  int st = ops->step_begin(ops->ctx);
  if (st < 0) return st;
  StepLog log = {0, 0, 0, 0, 0, 0, NULL};
  st = ga_advance(m, d, ops, 0.0, 1.0, 0, &log);
  d->newton_iters = log.iters;
  d->newton_iters_total += log.iters;
  d->newton_residual = log.res;
  d->step_cuts = log.cuts;
  d->pcg_iters = log.pcg_iters; /* the whole step's */
  if (st < 0 && log.fatal) {
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", cf_last_error());
    ops->step_restore(ops->ctx); /* as far as the backend still can */
    return cf_error(st, "step %ld, t = %.6g s: generalized-alpha: %s", d->steps + 1, d->t + h, msg);
  }
  if (st < 0) {
    int rs = ops->step_restore(ops->ctx);
    if (rs < 0) return rs;
    return cf_error(CF_ERR_DIVERGED,
                    "step %ld, t = %.6g s: generalized-alpha Newton iterations failed (%s) at dt = %g s and after "
                    "%d halvings (dt down to %g s; relative force residual %.3g, tolerance %.3g); the state is kept "
                    "at t = %.6g s. Try a smaller time step, the other tangent (solver.tangent \"%s\"), more "
                    "iterations (solver.newton_max_iter, now %d) or more damping (time.rho_inf < %g)",
                    d->steps + 1, d->t + h, log.why ? log.why : "no convergence", h, m->def.newton_max_cuts,
                    ldexp(h, -m->def.newton_max_cuts), log.res, m->def.newton_tol, d->t,
                    m->def.dyn_tangent == CF_DYN_TANGENT_KR ? "symmetric_consistent" : "KR",
                    m->def.newton_max_iter, m->def.rho_inf);
  }
  if (log.cuts > 0) {
    d->warning[CF_WARN_STEP_CUT]++;
    return cf_error(CF_WARN_STEP_CUT,
                    "step %ld, t = %.6g s: Newton did not converge at dt = %g s; the step was halved (%d cuts, "
                    "smallest substep %g s)",
                    d->steps + 1, d->t + h, h, log.cuts, ldexp(h, -log.depth));
  }
  return CF_OK;
}
