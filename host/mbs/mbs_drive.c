/* Driving a mechanism step by step (cofem/mbs.h, "driving"): what a controller sets between steps,
 * held in cfMbsData until changed. Applied loads enter the force evaluation (mbs_forces.c, the FE
 * bodies' extra forces, the modal bodies' node forces), driver functions the constraint evaluation
 * (mbs_constraints.c reads d->driver_f), and a switched-off equation evaluates to Phi = 0 with a
 * zero gradient row, so it holds nothing and its multiplier stays zero. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cofem/fem.h"
#include "cofem/mbs_fe.h"
#include "cofem/mbs_modal.h"
#include "mbs/mbs_internal.h"

static int finite_vec(const double* v, int n) {
  for (int i = 0; i < n; i++)
    if (!isfinite(v[i])) return 0;
  return 1;
}

/* a body id of the definition (not the ground, not an appended amplitude or node block) */
static int check_body(const cfMbsModel* m, int body, const char* fn) {
  if (body == CF_MBS_GROUND) return cf_error(CF_ERR_ARG, "%s: the ground cannot be loaded or moved", fn);
  if (body < 0 || body >= m->nbody)
    return cf_error(CF_ERR_ARG, "%s: body id %d out of range (%d bodies)", fn, body, m->nbody);
  if (m->body_modal[body] == 2 || (m->body_modal[body] == 3 && cf_mbs_fe_index(m, body) < 0))
    return cf_error(CF_ERR_ARG, "%s: body id %d is an internal block of a flexible body, not a body", fn, body);
  return CF_OK;
}

int cf_mbs_set_body_load(const cfMbsModel* m, cfMbsData* d, int body, const double F[3], const double p[3],
                         const double T[3]) {
  int st = check_body(m, body, "cf_mbs_set_body_load");
  if (st < 0) return st;
  if (cf_mbs_fe_index(m, body) >= 0)
    return cf_error(CF_ERR_ARG, "cf_mbs_set_body_load: body '%s' is an FE body, which has no frame: load its nodes "
                    "(cf_mbs_set_node_load)", m->body_name[body]);
  static const double zero[3] = {0, 0, 0};
  double L[9];
  memcpy(L, F ? F : zero, sizeof(double) * 3);
  memcpy(L + 3, p ? p : zero, sizeof(double) * 3);
  memcpy(L + 6, T ? T : zero, sizeof(double) * 3);
  if (!finite_vec(L, 9)) return cf_error(CF_ERR_ARG, "cf_mbs_set_body_load: body '%s': non-finite force, point or torque",
                                         m->body_name[body]);
  memcpy(d->body_load + 9 * (size_t)body, L, sizeof L);
  return CF_OK;
}

int cf_mbs_set_node_load(const cfMbsModel* m, cfMbsData* d, int body, const int* nodes, int n, const double F[3]) {
  static const char* fn = "cf_mbs_set_node_load";
  int st = check_body(m, body, fn);
  if (st < 0) return st;
  const int fe = cf_mbs_fe_index(m, body), mi = cf_mbs_modal_index(m, body);
  if (fe < 0 && mi < 0)
    return cf_error(CF_ERR_ARG, "%s: body '%s' is rigid: it has no nodes (cf_mbs_set_body_load)", fn, m->body_name[body]);
  if (!F || !finite_vec(F, 3)) return cf_error(CF_ERR_ARG, "%s: body '%s': no or a non-finite force", fn, m->body_name[body]);
  if (!nodes || n < 1) return cf_error(CF_ERR_ARG, "%s: body '%s': no nodes given", fn, m->body_name[body]);
  const int nnode = fe >= 0 ? cf_mbs__fe_nnode(m, fe) : cf_mbs__modal_nnode(m, mi);
  for (int k = 0; k < n; k++)
    if (nodes[k] < 0 || nodes[k] >= nnode)
      return cf_error(CF_ERR_ARG, "%s: body '%s' has no node %d (%d nodes)", fn, m->body_name[body], nodes[k], nnode);
  /* the body's applied nodal forces, the given nodes' replaced */
  double* f;
  if (fe >= 0) {
    f = malloc(sizeof(double) * 3 * (size_t)nnode);
    if (!f) return cf_error(CF_ERR_NOMEM, "%s: out of memory", fn);
    const double* old = cf_mbs__fe_extra_force(d, fe);
    if (old) memcpy(f, old, sizeof(double) * 3 * (size_t)nnode);
    else memset(f, 0, sizeof(double) * 3 * (size_t)nnode);
  } else {
    if (!d->modal_force[mi] && !(d->modal_force[mi] = calloc(3 * (size_t)nnode, sizeof(double))))
      return cf_error(CF_ERR_NOMEM, "%s: out of memory", fn);
    f = d->modal_force[mi];
  }
  for (int k = 0; k < n; k++)
    for (int i = 0; i < 3; i++) f[3 * (size_t)nodes[k] + i] = F[i] / n;
  if (fe >= 0) {
    st = cf_mbs_fe_set_extra_force(m, d, fe, f);
    free(f);
  }
  return st;
}

static int check_driver(const cfMbsModel* m, int k, const char* fn) {
  if (k < 0 || k >= m->ndriver) return cf_error(CF_ERR_ARG, "%s: driver id %d out of range (%d drivers)", fn, k, m->ndriver);
  return CF_OK;
}

int cf_mbs_set_driver_func(const cfMbsModel* m, cfMbsData* d, int driver, const cfMbsFunc* f) {
  int st = check_driver(m, driver, "cf_mbs_set_driver_func");
  if (st < 0) return st;
  char who[CF_MBS_NAME_MAX + 16];
  snprintf(who, sizeof who, "driver '%s'", m->driver_name[driver]);
  if (!f) return cf_error(CF_ERR_ARG, "%s: no function", who);
  if ((st = cf_mbs__check_func(f, who)) < 0) return cf_error(CF_ERR_ARG, "%s", cf_last_error());
  if (f->type == CF_MBS_FUNC_TABLE) /* the data would point at the caller's points */
    return cf_error(CF_ERR_ARG, "%s: a table function cannot be set on a running mechanism (give it in the scene)", who);
  d->driver_f[driver] = *f;
  return CF_OK;
}

double cf_mbs_driver_value(const cfMbsModel* m, const cfMbsData* d, int driver) {
  if (driver < 0 || driver >= m->ndriver) return NAN;
  double y[3];
  cf_mbs_func_eval(&d->driver_f[driver], d->t, y);
  return m->driver_offset[driver] + y[0];
}

/* f = STEP from the value now (t0) to `value` at t0 + ramp: c0 for t <= c2, c1 for t >= c3, cubic between */
int cf_mbs_set_driver_target(const cfMbsModel* m, cfMbsData* d, int driver, double value, double ramp) {
  int st = check_driver(m, driver, "cf_mbs_set_driver_target");
  if (st < 0) return st;
  if (!isfinite(value) || !isfinite(ramp) || ramp < 0)
    return cf_error(CF_ERR_ARG, "cf_mbs_set_driver_target: driver '%s': target %g over ramp %g s (finite, ramp >= 0)",
                    m->driver_name[driver], value, ramp);
  const double now = cf_mbs_driver_value(m, d, driver) - m->driver_offset[driver];
  cfMbsFunc f = {0};
  if (ramp > 0) {
    f.type = CF_MBS_FUNC_STEP;
    f.c[0] = now, f.c[1] = value - m->driver_offset[driver], f.c[2] = d->t, f.c[3] = d->t + ramp;
  } else {
    f.type = CF_MBS_FUNC_CONST;
    f.c[0] = value - m->driver_offset[driver];
  }
  d->driver_f[driver] = f;
  return CF_OK;
}

/* f = value now + speed (t - t0): POLY c0 + c1 t */
int cf_mbs_set_driver_speed(const cfMbsModel* m, cfMbsData* d, int driver, double speed) {
  int st = check_driver(m, driver, "cf_mbs_set_driver_speed");
  if (st < 0) return st;
  if (!isfinite(speed))
    return cf_error(CF_ERR_ARG, "cf_mbs_set_driver_speed: driver '%s': non-finite speed", m->driver_name[driver]);
  const double now = cf_mbs_driver_value(m, d, driver) - m->driver_offset[driver];
  cfMbsFunc f = {0};
  f.type = CF_MBS_FUNC_POLY;
  f.n = 2;
  f.c[0] = now - speed * d->t, f.c[1] = speed;
  d->driver_f[driver] = f;
  return CF_OK;
}

/* equations [first, first + n) on or off; their multipliers zeroed when switched off */
static void set_equations(const cfMbsModel* m, cfMbsData* d, int first, int n, int active) {
  for (int i = first; i < first + n; i++) {
    d->con_off[i] = !active;
    if (!active) d->lambda[i] = d->reaction[i] = 0;
  }
  (void)m;
}

int cf_mbs_set_joint_active(const cfMbsModel* m, cfMbsData* d, int joint, int active) {
  if (joint < 0 || joint >= m->njoint)
    return cf_error(CF_ERR_ARG, "cf_mbs_set_joint_active: joint id %d out of range (%d joints)", joint, m->njoint);
  set_equations(m, d, m->joint_con0[joint], m->joint_ncon[joint], active);
  return CF_OK;
}

int cf_mbs_joint_active(const cfMbsModel* m, const cfMbsData* d, int joint) {
  if (joint < 0 || joint >= m->njoint) return cf_error(CF_ERR_ARG, "cf_mbs_joint_active: joint id %d out of range", joint);
  return m->joint_ncon[joint] > 0 ? !d->con_off[m->joint_con0[joint]] : 1;
}

int cf_mbs_set_driver_active(const cfMbsModel* m, cfMbsData* d, int driver, int active) {
  int st = check_driver(m, driver, "cf_mbs_set_driver_active");
  if (st < 0) return st;
  set_equations(m, d, m->driver_con[driver], 1, active);
  return CF_OK;
}

/* ---- flexible bodies' fields ---- */
static int flex_index(const cfMbsModel* m, int body, const char* fn, int* fe, int* mi) {
  *fe = *mi = -1;
  if (body < 0 || body >= m->nbody) return cf_error(CF_ERR_ARG, "%s: body id %d out of range (%d bodies)", fn, body, m->nbody);
  *fe = cf_mbs_fe_index(m, body);
  *mi = cf_mbs_modal_index(m, body);
  if (*fe < 0 && *mi < 0)
    return cf_error(CF_ERR_ARG, "%s: body '%s' is not flexible (no FE or modal body)", fn,
                    m->body_modal[body] >= 2 ? "(internal block)" : m->body_name[body]);
  return CF_OK;
}

int cf_mbs_flex_nnode(const cfMbsModel* m, int body) {
  int fe, mi, st = flex_index(m, body, "cf_mbs_flex_nnode", &fe, &mi);
  if (st < 0) return st;
  return fe >= 0 ? cf_mbs__fe_nnode(m, fe) : cf_mbs__modal_nnode(m, mi);
}

int cf_mbs_flex_nodes(const cfMbsModel* m, const cfMbsData* d, int body, double* x, double* v) {
  int fe, mi, st = flex_index(m, body, "cf_mbs_flex_nodes", &fe, &mi);
  if (st < 0) return st;
  if (fe >= 0) cf_mbs_fe_nodes(m, d, fe, x, v);
  else cf_mbs_modal_nodes(m, d, mi, x, v);
  return CF_OK;
}

int cf_mbs_flex_stress(const cfMbsModel* m, const cfMbsData* d, int body, const cfModel* fem, cfStressField* s) {
  int fe, mi, st = flex_index(m, body, "cf_mbs_flex_stress", &fe, &mi);
  if (st < 0) return st;
  if (mi >= 0) {
    if (!fem) return cf_error(CF_ERR_ARG, "cf_mbs_flex_stress: modal body '%s': its FE model is needed", m->body_name[body]);
    return cf_mbs_modal_stress(m, d, mi, fem, s);
  }
  const cfModel* own = cf_mbs_fe_model(m, fe);
  if (s->nnode != own->nnode || s->ntet != own->ntet)
    return cf_error(CF_ERR_ARG, "cf_mbs_flex_stress: FE body '%s' has %d nodes / %d elements, the field %d / %d",
                    m->body_name[body], own->nnode, own->ntet, s->nnode, s->ntet);
  double* x = malloc(sizeof(double) * 3 * (size_t)own->nnode);
  if (!x) return cf_error(CF_ERR_NOMEM, "cf_mbs_flex_stress: out of memory");
  cf_mbs_fe_nodes(m, d, fe, x, NULL);
  cf_stress_field_corotated(own, x, NULL, s);
  free(x);
  return CF_OK;
}
