/* The co-rotational implicit step (see cofem/fem.h for the equations), energies and stress. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cofem/fem.h"
#include "fem/fem_backend.h"
#include "fem/fem_element.h"
#include "fem/fem_newton.h"
#include "fem/fem_pcg.h"

void cf_stage_update(const cfModel* m, cfData* d, double h) {
  if (m->def.integrator == CF_INTEGRATOR_NEWMARK) {
    /* x1 = x0 + h/2 (v0 + v1) */
    for (int i = 0; i < m->ndof; i++) d->x[i] += 0.5 * h * (d->v_prev[i] + d->v[i]);
    memcpy(d->f_ext_prev, d->f_ext, sizeof(double) * m->ndof);
  } else {
    for (int i = 0; i < m->ndof; i++) d->x[i] += h * d->v[i];
  }
  d->t += h;
}

/* The divergence monitor failed after the step: back to its start (x0 in mon_x0, v0 in v_prev). */
static int roll_back(const cfModel* m, cfData* d, int st, double work0) {
  memcpy(d->x, d->mon_x0, sizeof(double) * m->ndof);
  memcpy(d->v, d->v_prev, sizeof(double) * m->ndof);
  if (d->a) memcpy(d->a, d->ga_a_step, sizeof(double) * m->ndof);
  d->t -= m->def.dt;
  d->mon_work = work0;
  cf_stage_polar(m, d);
  if (m->def.integrator == CF_INTEGRATOR_GENERALIZED_ALPHA) {
    cf_stage_elastic(m, d);
    memcpy(d->ga_f0, d->f_el, sizeof(double) * m->ndof);
  }
  return st;
}

/* Generalized-alpha (fem_newton.c), then the divergence monitor. */
static int step_generalized_alpha(const cfModel* m, cfData* d) {
  const double work0 = d->mon_work;
  int st = cf_step_generalized_alpha(m, d);
  if (st < 0) return st;
  const int n = m->ndof;
  if (m->def.divergence_check) cf_divergence_add_work(m, d, 1.0, d->x, -1.0, d->mon_x0, d->f_ext_prev, d->f_ext);
  memcpy(d->f_ext_prev, d->f_ext, sizeof(double) * n);
  d->t += m->def.dt;
  if (m->def.divergence_check) {
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", cf_last_error()); /* a step-cut warning, kept if all is well */
    int dv = cf_divergence_check(m, d);
    if (dv < 0) return roll_back(m, d, dv, work0);
    cf_error(st, "%s", msg);
  }
  return cf_step_finish(d, st);
}

int cf_step(const cfModel* m, cfData* d) {
  const double h = m->def.dt;
  if (m->def.divergence_check && d->steps == 0) cf_divergence_restart(m, d);
  memcpy(d->mon_x0, d->x, sizeof(double) * m->ndof);
  if (m->def.integrator == CF_INTEGRATOR_GENERALIZED_ALPHA) return step_generalized_alpha(m, d);
  const double work0 = d->mon_work;
  double t0 = cf_wall_time();
  cf_stage_polar(m, d);
  double t1 = cf_wall_time(), t2;
  /* v_prev still holds the velocities of the step before: the warm start's second vector */
  memcpy(d->warm_v1, d->v_prev, sizeof(double) * m->ndof);
  memcpy(d->v_prev, d->v, sizeof(double) * m->ndof); /* v0: Newmark's update, the K_R fallback */
  int st;
  if (d->precond && m->def.integrator == CF_INTEGRATOR_BACKWARD_EULER &&
      m->def.dyn_tangent == CF_DYN_TANGENT_KR && m->npe == 4) {
    /* few PCG products: K_R is applied element by element, never formed (d->KR, d->A unused);
     * the products are the constant-strain element's, so quadratic elements assemble K_R */
    st = cf_step_solve_matfree(m, d, d->warm_v1, &t2);
  } else {
    cf_stage_elastic(m, d);
    cf_stage_assemble_system(m, d, h);
    t2 = cf_wall_time();
    if (m->def.warm_start) cf_pcg_warm_start(m, d, d->warm_v1);
    st = cf_stage_pcg(m, d);
  }
  if (st == CF_WARN_INDEFINITE && m->def.dyn_tangent == CF_DYN_TANGENT_SYM_CONSISTENT) {
    /* the geometric part made A indefinite: redo the linear solve with K_R */
    memcpy(d->v, d->v_prev, sizeof(double) * m->ndof); /* back to v0 */
    d->force_kr = 1;
    cf_stage_elastic(m, d);
    cf_stage_assemble_system(m, d, h);
    d->force_kr = 0;
    st = cf_stage_pcg(m, d);
  }
  if (st < 0) { /* nothing is advanced: the state stays as it was */
    memcpy(d->v, d->v_prev, sizeof(double) * m->ndof);
    return st;
  }
  double t3 = cf_wall_time();
  if (m->def.divergence_check) { /* the work of this step's loads: dx = h v1 or h/2 (v0 + v1) */
    if (m->def.integrator == CF_INTEGRATOR_NEWMARK)
      cf_divergence_add_work(m, d, 0.5 * h, d->v_prev, 0.5 * h, d->v, d->f_ext_prev, d->f_ext);
    else
      cf_divergence_add_work(m, d, h, d->v, 0.0, NULL, d->f_ext, d->f_ext);
  }
  cf_stage_update(m, d, h);
  if (m->def.divergence_check) {
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", cf_last_error()); /* a PCG warning, kept if all is well */
    int dv = cf_divergence_check(m, d);
    if (dv < 0) return roll_back(m, d, dv, work0);
    cf_error(st, "%s", msg);
  }
  double t4 = cf_wall_time();
  d->timer[CF_STAGE_POLAR] += t1 - t0;
  d->timer[CF_STAGE_ASSEMBLE] += t2 - t1;
  d->timer[CF_STAGE_PCG] += t3 - t2;
  d->timer[CF_STAGE_UPDATE] += t4 - t3;
  return cf_step_finish(d, st);
}

int cf_step_finish(cfData* d, int st) {
  d->steps++;
  if (d->ninverted > 0) {
    d->warning[CF_WARN_INVERTED]++;
    if (st == CF_OK) {
      cf_error(CF_WARN_INVERTED, "step %ld: %d inverted elements", d->steps, d->ninverted);
      st = CF_WARN_INVERTED;
    }
  }
  return st;
}

double cf_kinetic_energy(const cfModel* m, const cfData* d) {
  double s = 0;
  for (int i = 0; i < m->nnode; i++)
    for (int k = m->row_ptr[i]; k < m->row_ptr[i + 1]; k++) {
      int j = m->col[k];
      s += m->Mblk[k] * (d->v[3 * i] * d->v[3 * j] + d->v[3 * i + 1] * d->v[3 * j + 1] +
                         d->v[3 * i + 2] * d->v[3 * j + 2]);
    }
  return 0.5 * s;
}

double cf_strain_energy(const cfModel* m, const cfData* d) {
  double s = 0;
  const int nk = 3 * m->npe;
  if (m->Gq && d->Rq) { /* the quadratic element turned at its quadrature points */
    double lam, mu;
    cf_lame(m->def.E, m->def.nu, &lam, &mu);
    for (int e = 0; e < m->ntet; e++) s += cf_tet10_strain_energy_qp(e, m->tet, m->Gq, m->Wq, lam, mu, d->Rq, d->x);
    return s;
  }
  for (int e = 0; e < m->ntet; e++)
    s += cf_elem_strain_energy_n(d->R + 9 * e, m->tet + (size_t)m->npe * e, m->npe, m->Ke + (size_t)nk * nk * e, m->X,
                                 d->x);
  return s;
}

/* the co-rotated strain of the current positions (fem_stress.c), R warm-started from the step's */
void cf_von_mises(const cfModel* m, const cfData* d, double* out) {
  for (int e = 0; e < m->ntet; e++) {
    double eps[6];
    cf_elem_strain_corotated(m, d->x, d->R, e, eps);
    out[e] = cf_von_mises_of_strain(m, eps);
  }
}
