/* The divergence monitor (issue 15): a step whose result cannot be right fails with
 * CF_ERR_DIVERGED instead of being reported as done. Three tests after every step:
 *  1. the state (x, v) is finite;
 *  3. energy: with E = 1/2 v^T M v + sum_e 1/2 u_e^T K_e u_e (kinetic + co-rotational strain)
 *     and W the work of the external forces and gravity since the run started,
 *       W += dx . ((F_start + F_end)/2 + M_lumped g)   (F_start = F_end for backward Euler)
 *     the step fails when E - E_0 > W + 10 max(E_0, max |W|, E_floor), tested every step with the
 *     kinetic energy alone (a lower bound of E) and every 8th step with E whole,
 *     E_floor = 1/2 E_Young (1e-6)^2 V (a strain of 1e-6 over the part: the scale below which
 *     energies are round-off). Damping and backward Euler only remove energy, and a conservative
 *     integrator keeps E - E_0 ~ W, so 10x the energy scale is far outside what a converging run
 *     does, and a diverging one, whose energy grows geometrically, crosses it within a few steps;
 *  2. displacement: a node farther than 100 part sizes (the rest bounding box's diagonal) from
 *     where the part's mean motion puts it, |(x_i - c) - (X_i - C)| > 100 size with c, C the mass
 *     centres now and at rest (a rigid motion keeps this below 2 sizes; a free part may fly away).
 *     A backstop for what the energy test misses: the lug crushed at 500x its yield load
 *     (tests/fem/test_inversion.c), which recovers its shape after the release, flings inverted
 *     elements to 21 sizes.
 * The messages name the step, the time, what grew and what to try. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cofem/fem.h"
#include "fem/fem_element.h"
#include "fem/fem_newton.h"

enum { MON_FACTOR = 10, MON_SIZE_FACTOR = 100, MON_FULL_EVERY = 8 };

static const char* advice(const cfModel* m) {
  if (m->def.integrator == CF_INTEGRATOR_GENERALIZED_ALPHA)
    return m->def.dyn_tangent == CF_DYN_TANGENT_KR
               ? "try a smaller time step or the consistent tangent (solver.tangent \"symmetric_consistent\")"
               : "try a smaller time step or the K_R tangent (solver.tangent \"KR\")";
  return m->def.dyn_tangent == CF_DYN_TANGENT_KR
             ? "try a smaller time step, the Newton-iterated integrator (time.integrator \"generalized_alpha\"), "
               "or the consistent tangent (solver.tangent \"symmetric_consistent\")"
             : "try a smaller time step, the Newton-iterated integrator (time.integrator \"generalized_alpha\"), "
               "or the K_R tangent (solver.tangent \"KR\")";
}

double cf_part_size(const cfModel* m) {
  double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  for (int n = 0; n < m->nnode; n++)
    for (int k = 0; k < 3; k++) {
      lo[k] = fmin(lo[k], m->X[3 * n + k]);
      hi[k] = fmax(hi[k], m->X[3 * n + k]);
    }
  double s = 0;
  for (int k = 0; k < 3; k++) s += (hi[k] - lo[k]) * (hi[k] - lo[k]);
  return sqrt(s);
}

static double energy_floor(const cfModel* m) {
  double V = 0;
  for (int e = 0; e < m->ntet; e++) V += m->vol[e];
  return 0.5 * m->def.E * 1e-12 * V;
}

/* sum_e 1/2 u_e^T K_e u_e as cf_strain_energy, in the stress form: with H = R^T F - I (the
 * displacement gradient of u_e = R^T x_e - X_e, relative to node 0) and eps = sym H,
 * 1/2 u_e^T K_e u_e = V (lam/2 (tr eps)^2 + mu eps:eps) exactly for the linear tetrahedron, fewer
 * flops than the 12x12 product. R = d->R, as cf_strain_energy and probes.csv take it: after a
 * linearised step the rotations of the step's start. Tried: each element's own polar rotation
 * of x. It measures the true strain of the discrete state, which makes the monitor stop runs
 * the suite expects to go on: a beam released from its clamp under a 1e5 N tip load turns 0.76
 * rad in its first free step of 10 ms, and backward Euler's straight-line update x1 = x0 + h v1
 * inflates the elements by sqrt(1 + 0.76^2) (2.5e8 J "strain", where R0 sees a skew, strain-free
 * gradient: 96 J); the lug crushed at 500x its yield load likewise. Left as it was until the
 * linearised steps themselves are judged on that. */
double cf_strain_energy_fast(const cfModel* m, const cfData* d) {
  double lam, mu, s = 0;
  cf_lame(m->def.E, m->def.nu, &lam, &mu);
  if (m->Gq && d->Rq) /* the quadratic element turned at its quadrature points */
    for (int e = 0; e < m->ntet; e++) s += cf_tet10_strain_energy_qp(e, m->tet, m->Gq, m->Wq, lam, mu, d->Rq, d->x);
  else if (m->npe == 10) /* the quadratic element's strain is not constant: u^T K_e u */
    for (int e = 0; e < m->ntet; e++)
      s += cf_elem_strain_energy_n(d->R + 9 * e, m->tet + 10 * (size_t)e, 10, m->Ke + 900 * (size_t)e, m->X, d->x);
  else
    for (int e = 0; e < m->ntet; e++) s += cf_elem_strain_energy_fast(d->x, m->tet, m->Dm_inv, d->R, m->vol[e], lam, mu, e);
  return s;
}

void cf_divergence_restart_energy(const cfModel* m, cfData* d, double energy0) {
  if (!(d->mon_size > 0)) d->mon_size = cf_part_size(m);
  d->mon_energy0 = energy0;
  d->mon_energy = d->mon_energy0;
  d->mon_work = 0;
  d->mon_work_max = 0;
}

void cf_divergence_restart(const cfModel* m, cfData* d) {
  cf_divergence_restart_energy(m, d, cf_kinetic_energy(m, d) + cf_strain_energy_fast(m, d));
}

void cf_divergence_record_work(cfData* d, double w) {
  d->mon_work += w;
  d->mon_work_max = fmax(d->mon_work_max, fabs(d->mon_work));
}
/* W += dx . ((Fa + Fb)/2 + M g), dx = c0 u0 + c1 u1 on the free DOFs */
void cf_divergence_add_work(const cfModel* m, cfData* d, double c0, const double* u0, double c1, const double* u1,
                            const double* Fa, const double* Fb) {
  const double* g = m->def.gravity;
  const int use_fixed = d->supports_active && m->nfixed;
  double w = 0;
  for (int i = 0; i < m->ndof; i++) {
    if (use_fixed && m->fixed[i]) continue;
    const double dx = c0 * u0[i] + (u1 ? c1 * u1[i] : 0.0);
    w += dx * (0.5 * (Fa[i] + Fb[i]) + m->node_mass[i / 3] * g[i % 3]);
  }
  cf_divergence_record_work(d, w);
}

int cf_divergence_full_step(const cfData* d) { return (d->steps + 1) % MON_FULL_EVERY == 0; }

/* The CPU's figures of the state in d (the GPU computes the same by device reductions). */
void cf_divergence_stats(const cfModel* m, const cfData* d, cfMonitorStats* st) {
  memset(st, 0, sizeof *st);
  st->bad_dof = -1;
  /* 1. finite */
  for (int i = 0; i < m->ndof; i++)
    if (!isfinite(d->x[i]) || !isfinite(d->v[i])) {
      st->bad_dof = i, st->bad_x = d->x[i], st->bad_v = d->v[i];
      return; /* the decision needs nothing else */
    }
  /* 2. displacement relative to the mass centre's motion */
  double c[3] = {0, 0, 0}, C[3] = {0, 0, 0}, mass = 0;
  for (int n = 0; n < m->nnode; n++) {
    for (int k = 0; k < 3; k++) {
      c[k] += m->node_mass[n] * d->x[3 * n + k];
      C[k] += m->node_mass[n] * m->X[3 * n + k];
    }
    mass += m->node_mass[n];
  }
  double worst = 0;
  int at = 0;
  for (int n = 0; n < m->nnode; n++) {
    double s = 0;
    for (int k = 0; k < 3; k++) {
      double u = (d->x[3 * n + k] - c[k] / mass) - (m->X[3 * n + k] - C[k] / mass);
      s += u * u;
    }
    if (s > worst) worst = s, at = n;
  }
  st->dev = sqrt(worst);
  st->dev_node = at;
  /* 3. energy: the kinetic energy every step (a few flops per matrix block), the strain energy
   * too every MON_FULL_EVERY steps (20-40% of a lug step with the rotated-Cholesky PCG) */
  st->kinetic = cf_kinetic_energy(m, d);
  st->full = cf_divergence_full_step(d);
  st->strain = st->full ? cf_strain_energy_fast(m, d) : 0.0;
}

/* The decision and its message, one for both backends. */
int cf_divergence_decide(const cfModel* m, cfData* d, const cfMonitorStats* st) {
  const long step = d->steps + 1;
  if (!(d->mon_size > 0)) d->mon_size = cf_part_size(m);
  /* 1. finite */
  if (st->bad_dof >= 0) {
    const int i = st->bad_dof;
    return cf_error(CF_ERR_DIVERGED,
                    "step %ld, t = %.6g s: the dynamics diverged: the %s of node index %d is not finite (%g); %s",
                    step, d->t, isfinite(st->bad_x) ? "velocity" : "position", i / 3 + 1,
                    isfinite(st->bad_x) ? st->bad_v : st->bad_x, advice(m));
  }
  /* 2. displacement relative to the mass centre's motion */
  if (st->dev > MON_SIZE_FACTOR * d->mon_size)
    return cf_error(CF_ERR_DIVERGED,
                    "step %ld, t = %.6g s: the dynamics diverged: node index %d moved %.4g m relative to the part's mass "
                    "centre, more than %d x the part's size (%.4g m); %s",
                    step, d->t, st->dev_node + 1, st->dev, MON_SIZE_FACTOR, d->mon_size, advice(m));
  /* 3. energy against the work put in (the kinetic energy alone is a lower bound of E) */
  const double K = st->kinetic;
  const int full = st->full;
  const double E = full ? K + st->strain : K;
  if (full) d->mon_energy = E;
  const double scale = fmax(fmax(d->mon_energy0, d->mon_work_max), energy_floor(m));
  if (!isfinite(E) || E - d->mon_energy0 > d->mon_work + MON_FACTOR * scale) {
    char parts[96] = "";
    if (full) snprintf(parts, sizeof parts, " (kinetic %.4g J + strain %.4g J)", K, E - K);
    return cf_error(CF_ERR_DIVERGED,
                    "step %ld, t = %.6g s: the dynamics diverged: the %s grew to %.4g J%s from %.4g J, while the "
                    "loads did %.4g J of work (the limit is %d x the energy scale %.4g J above that); %s",
                    step, d->t, full ? "energy" : "kinetic energy alone", E, parts, d->mon_energy0, d->mon_work,
                    MON_FACTOR, scale, advice(m));
  }
  return CF_OK;
}

int cf_divergence_check(const cfModel* m, cfData* d) {
  cfMonitorStats st;
  cf_divergence_stats(m, d, &st);
  return cf_divergence_decide(m, d, &st);
}
