/* Forces in natural coordinates: gravity, point forces, torques, translational spring-damper-
 * actuators and rotational spring-dampers; generalized forces Q by virtual power, and the element
 * tangents K = -dQ/dq, C = -dQ/dqd of eq. 38 (exact for springs and dampers; follower loads
 * contribute no tangent, which eq. 37's approximate tangent allows).
 *
 * A body point x = N(p) q_b with N(p) = [1, p0, p1, p2] (x) I3, so a force F at p gives
 * Q_b = N(p)^T F. A torque T gives Q_e = T x e / 2 for e = u, v, w: for an orthonormal frame
 * sum_e (T x e/2) . (w x e) = T . w, the power of the torque. */
#include <stdio.h>
#include <stdlib.h>

#include "cofem/mbs_fe.h"
#include "mbs/mbs_internal.h"

int cf_mbs__compile_forces(const cfMbsDef* def, cfMbsModel* m) {
  int nf = def->nforce;
  m->nforce = nf;
  m->force_name = calloc((size_t)(nf ? nf : 1), sizeof *m->force_name);
  m->force = calloc((size_t)(nf ? nf : 1), sizeof(cfMbsForce));
  if (!m->force_name || !m->force) return cf_error(CF_ERR_NOMEM, "mechanism: out of memory");
  for (int e = 0; e < nf; e++) {
    const cfMbsForceDef* F = &def->force[e];
    cfMbsForce* f = &m->force[e];
    char who[CF_MBS_NAME_MAX + 16];
    snprintf(who, sizeof who, "force '%s'", F->name);
    if (!F->name[0]) return cf_error(CF_ERR_SCENE, "force %d has no name", e);
    for (int k = 0; k < e; k++)
      if (!strcmp(def->force[k].name, F->name)) return cf_error(CF_ERR_SCENE, "force '%s' is defined twice", F->name);
    snprintf(m->force_name[e], CF_MBS_NAME_MAX, "%s", F->name);
    double nums[] = {F->point1[0], F->point1[1], F->point1[2], F->point2[0], F->point2[1], F->point2[2],
                     F->vec[0], F->vec[1], F->vec[2], F->k, F->c};
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++)
      if (!isfinite(nums[i])) return cf_error(CF_ERR_SCENE, "%s: non-finite number in its definition", who);
    if (isinf(F->rest)) return cf_error(CF_ERR_SCENE, "%s: non-finite rest value", who);
    /* an FE body has no body frame: forces act at its node sets (cf_mbs_add_fe_load) */
    int fe_body = -1;
    if (F->type == CF_MBS_ROT_SPRING && F->joint >= 0 && F->joint < def->njoint)
      fe_body = cf_mbs_def_fe_index(def, def->joint[F->joint].body1) >= 0 ? def->joint[F->joint].body1
                : cf_mbs_def_fe_index(def, def->joint[F->joint].body2) >= 0 ? def->joint[F->joint].body2 : -1;
    else if (F->type != CF_MBS_ROT_SPRING)
      fe_body = F->body1 >= 0 && cf_mbs_def_fe_index(def, F->body1) >= 0 ? F->body1
                : F->type == CF_MBS_SPRING && F->body2 >= 0 && cf_mbs_def_fe_index(def, F->body2) >= 0 ? F->body2 : -1;
    if (fe_body >= 0)
      return cf_error(CF_ERR_SCENE, "%s: body '%s' is an FE body, which has no body frame: apply forces at its node "
                      "sets (\"node\")%s", who, def->body[fe_body].name,
                      F->type == CF_MBS_POINT_FORCE ? "" : ", or attach the element to a virtual body jointed to a node set");
    memset(f, 0, sizeof *f);
    f->type = F->type;
    f->body[0] = f->body[1] = CF_MBS_GROUND;
    f->joint = -1;
    f->has_scale = F->has_scale;
    f->scale = F->scale;
    f->has_actuator = F->has_actuator;
    f->actuator = F->actuator;
    if (F->has_scale) {
      int st = cf_mbs__check_func(&F->scale, who);
      if (st < 0) return st;
    }
    if (F->has_actuator) {
      int st = cf_mbs__check_func(&F->actuator, who);
      if (st < 0) return st;
    }
    int adopted = cf_mbs__func_adopt(m, &f->scale);
    if (adopted >= 0) adopted = cf_mbs__func_adopt(m, &f->actuator);
    if (adopted < 0) return adopted;
    switch (F->type) {
      case CF_MBS_POINT_FORCE:
      case CF_MBS_TORQUE:
        if (F->body1 < 0 || F->body1 >= m->nbody)
          return cf_error(CF_ERR_SCENE, "%s: body1 must be a moving body (id %d)", who, F->body1);
        f->body[0] = F->body1;
        cf_mbs__local_point(def, F->body1, F->point1, f->p[0]);
        memcpy(f->vec, F->vec, sizeof f->vec);
        f->body_frame = F->body_frame;
        break;
      case CF_MBS_SPRING: {
        if (F->body1 < CF_MBS_GROUND || F->body1 >= m->nbody || F->body2 < CF_MBS_GROUND || F->body2 >= m->nbody)
          return cf_error(CF_ERR_SCENE, "%s: body id out of range", who);
        if (F->body1 == F->body2) return cf_error(CF_ERR_SCENE, "%s: both ends are on the same body", who);
        if (F->k < 0 || F->c < 0) return cf_error(CF_ERR_SCENE, "%s: negative stiffness or damping (k %g, c %g)", who, F->k, F->c);
        double D[3] = {F->point2[0] - F->point1[0], F->point2[1] - F->point1[1], F->point2[2] - F->point1[2]};
        double L0 = cf_mbs_norm3(D);
        if (L0 < 1e-12) return cf_error(CF_ERR_SCENE, "%s: its two ends coincide at t = 0 (the line of action is undefined)", who);
        f->body[0] = F->body1, f->body[1] = F->body2;
        cf_mbs__local_point(def, F->body1, F->point1, f->p[0]);
        cf_mbs__local_point(def, F->body2, F->point2, f->p[1]);
        f->k = F->k, f->c = F->c;
        f->rest = isnan(F->rest) || F->rest < 0 ? L0 : F->rest;
        break;
      }
      case CF_MBS_ROT_SPRING: {
        if (F->joint < 0 || F->joint >= m->njoint) return cf_error(CF_ERR_SCENE, "%s: joint id %d does not exist", who, F->joint);
        int t = m->joint_type[F->joint];
        if (t != CF_MBS_REVOLUTE && t != CF_MBS_CYLINDRICAL)
          return cf_error(CF_ERR_SCENE, "%s: a rotational spring needs a revolute or cylindrical joint; '%s' is not one", who,
                          m->joint_name[F->joint]);
        if (F->k < 0 || F->c < 0) return cf_error(CF_ERR_SCENE, "%s: negative stiffness or damping (k %g, c %g)", who, F->k, F->c);
        f->joint = F->joint;
        f->body[0] = m->joint_body[2 * F->joint], f->body[1] = m->joint_body[2 * F->joint + 1];
        f->k = F->k, f->c = F->c;
        f->rest = isnan(F->rest) ? 0 : F->rest;
        break;
      }
      default:
        return cf_error(CF_ERR_SCENE, "%s: unknown type %d", who, F->type);
    }
  }
  return CF_OK;
}

/* ---- evaluation ---- */
static void body_point(const cfMbsModel* m, const double* q, int b, const double* p, double x[3]) {
  if (b < 0) {
    memcpy(x, p, 3 * sizeof(double));
    return;
  }
  cf_mbs__body_point(m, q, b, p, x);
}

static void body_point_rate(const cfMbsModel* m, const double* qd, int b, const double* p, double v[3]) {
  if (b < 0) {
    v[0] = v[1] = v[2] = 0;
    return;
  }
  body_point(m, qd, b, p, v);
}

/* global vector of body-frame components */
static void body_vector(const cfMbsModel* m, const double* q, int b, const double* c, double x[3]) {
  const double* qb = q + m->body_qadr[b];
  for (int i = 0; i < 3; i++) x[i] = c[0] * qb[3 + i] + c[1] * qb[6 + i] + c[2] * qb[9 + i];
}

/* G = d(theta_dot)/d(qd) over the two slots (24): (a x e)/2 for body2's axes, -(a x e)/2 for body1's */
static void rot_spring_G(const cfMbsModel* m, const double* q, const cfMbsForce* f, double G[24]) {
  double a[3];
  cf_mbs__joint_vec(m, q, f->joint, 0, 1, a);
  memset(G, 0, 24 * sizeof(double));
  for (int s = 0; s < 2; s++) {
    int b = f->body[s];
    if (b < 0) continue;
    const double* qb = q + m->body_qadr[b];
    for (int k = 1; k < 4; k++) {
      double c[3];
      cf_mbs_cross3(a, qb + 3 * k, c);
      for (int i = 0; i < 3; i++) G[12 * s + 3 * k + i] = (s ? 0.5 : -0.5) * c[i];
    }
  }
}

void cf_mbs__eval_forces(const cfMbsModel* m, cfMbsData* d, const double* q, const double* qd, double t,
                         int want_tangent) {
  memset(d->Q, 0, sizeof(double) * (size_t)m->nq);
  const double* g = d->gravity;
  for (int b = 0; b < m->nbody; b++) {
    if (m->body_modal[b] >= 2) continue; /* amplitude blocks; FE node blocks: the kinds' forces */
    const double* Mb = m->body_Mbar + 16 * b;
    double* Qb = d->Q + m->body_qadr[b];
    for (int k = 0; k < 4; k++)
      for (int i = 0; i < 3; i++) Qb[3 * k + i] += Mb[k] * g[i];
  }
  for (int e = 0; e < m->nforce; e++) {
    const cfMbsForce* f = &m->force[e];
    double* K = d->fK + 576 * (size_t)e;
    double* C = d->fC + 576 * (size_t)e;
    if (want_tangent) {
      memset(K, 0, 576 * sizeof(double));
      memset(C, 0, 576 * sizeof(double));
    }
    double Ql[24];
    memset(Ql, 0, sizeof Ql);
    switch (f->type) {
      case CF_MBS_POINT_FORCE: {
        double s = d->load_factor, F[3];
        if (f->has_scale) {
          double y[3];
          cf_mbs_func_eval(&f->scale, t, y);
          s *= y[0];
        }
        if (f->body_frame) body_vector(m, q, f->body[0], f->vec, F);
        else memcpy(F, f->vec, sizeof F);
        double n[4] = {1, f->p[0][0], f->p[0][1], f->p[0][2]};
        for (int k = 0; k < 4; k++)
          for (int i = 0; i < 3; i++) Ql[3 * k + i] = n[k] * s * F[i];
        break;
      }
      case CF_MBS_TORQUE: {
        double s = d->load_factor, T[3];
        if (f->has_scale) {
          double y[3];
          cf_mbs_func_eval(&f->scale, t, y);
          s *= y[0];
        }
        if (f->body_frame) body_vector(m, q, f->body[0], f->vec, T);
        else memcpy(T, f->vec, sizeof T);
        const double* qb = q + m->body_qadr[f->body[0]];
        for (int k = 1; k < 4; k++) {
          double c[3];
          cf_mbs_cross3(T, qb + 3 * k, c);
          for (int i = 0; i < 3; i++) Ql[3 * k + i] = 0.5 * s * c[i];
        }
        break;
      }
      case CF_MBS_SPRING: {
        double x1[3], x2[3], v1[3], v2[3], dv[3], dd[3], e3[3];
        body_point(m, q, f->body[0], f->p[0], x1);
        body_point(m, q, f->body[1], f->p[1], x2);
        body_point_rate(m, qd, f->body[0], f->p[0], v1);
        body_point_rate(m, qd, f->body[1], f->p[1], v2);
        for (int i = 0; i < 3; i++) dv[i] = x2[i] - x1[i], dd[i] = v2[i] - v1[i];
        double l = cf_mbs_norm3(dv);
        if (l < 1e-14) break; /* direction undefined: no force this evaluation */
        for (int i = 0; i < 3; i++) e3[i] = dv[i] / l;
        double ldot = cf_mbs_dot3(e3, dd);
        double act = 0;
        if (f->has_actuator) {
          double y[3];
          cf_mbs_func_eval(&f->actuator, t, y);
          act = y[0];
        }
        double Fs = -f->k * (l - f->rest) - f->c * ldot + act; /* > 0 pushes the ends apart */
        /* D = [-N1, N2]: d(x2 - x1)/dq_local; Q = D^T (Fs e) */
        double Dm[3][24];
        memset(Dm, 0, sizeof Dm);
        for (int s = 0; s < 2; s++) {
          double n[4] = {1, f->p[s][0], f->p[s][1], f->p[s][2]};
          for (int k = 0; k < 4; k++)
            for (int i = 0; i < 3; i++) Dm[i][12 * s + 3 * k + i] = (s ? 1 : -1) * n[k];
        }
        for (int c = 0; c < 24; c++)
          for (int i = 0; i < 3; i++) Ql[c] += Dm[i][c] * Fs * e3[i];
        if (want_tangent) {
          /* G = d(Fs e)/d(x2 - x1) = -k e e^T - c e dd^T (I - e e^T)/l + Fs (I - e e^T)/l */
          double Pd[3], G[3][3];
          double ed = cf_mbs_dot3(e3, dd);
          for (int i = 0; i < 3; i++) Pd[i] = (dd[i] - ed * e3[i]) / l;
          for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
              G[i][j] = -f->k * e3[i] * e3[j] - f->c * e3[i] * Pd[j] + Fs * ((i == j) - e3[i] * e3[j]) / l;
          for (int r = 0; r < 24; r++)
            for (int c = 0; c < 24; c++) {
              double sk = 0, sc = 0;
              for (int i = 0; i < 3; i++) {
                if (Dm[i][r] == 0) continue;
                double gk = 0;
                for (int j = 0; j < 3; j++) gk += G[i][j] * Dm[j][c];
                sk += Dm[i][r] * gk;
                sc += Dm[i][r] * e3[i];
              }
              double ec = 0;
              for (int j = 0; j < 3; j++) ec += e3[j] * Dm[j][c];
              K[24 * r + c] = -sk;
              C[24 * r + c] = f->c * sc * ec;
            }
        }
        break;
      }
      case CF_MBS_ROT_SPRING: {
        double G[24];
        rot_spring_G(m, q, f, G);
        double th = cf_mbs__unwrap(cf_mbs__joint_raw_angle(m, q, f->joint), d->rot_angle_prev[e]);
        d->rot_angle[e] = th;
        double thd = 0;
        for (int s = 0; s < 2; s++)
          if (f->body[s] >= 0)
            for (int k = 0; k < 12; k++) thd += G[12 * s + k] * qd[m->body_qadr[f->body[s]] + k];
        double act = 0;
        if (f->has_actuator) {
          double y[3];
          cf_mbs_func_eval(&f->actuator, t, y);
          act = y[0];
        }
        double T = -f->k * (th - f->rest) - f->c * thd + act;
        for (int c = 0; c < 24; c++) Ql[c] = T * G[c];
        if (want_tangent)
          for (int r = 0; r < 24; r++)
            for (int c = 0; c < 24; c++) K[24 * r + c] = f->k * G[r] * G[c], C[24 * r + c] = f->c * G[r] * G[c];
        break;
      }
      default: break;
    }
    for (int s = 0; s < 2; s++) {
      int b = f->body[s];
      if (b < 0) continue;
      double* Qb = d->Q + m->body_qadr[b];
      for (int k = 0; k < 12; k++) Qb[k] += Ql[12 * s + k];
    }
  }
  /* applied loads of a controller (cf_mbs_set_body_load): Q_b += N(p)^T F, Q_e += (T x e) / 2 */
  if (d->body_load)
    for (int b = 0; b < m->nbody; b++) {
      const double* L = d->body_load + 9 * (size_t)b;
      int any = 0;
      for (int i = 0; i < 9; i++) any |= L[i] != 0;
      if (!any) continue;
      const double s = d->load_factor, n[4] = {1, L[3], L[4], L[5]};
      double* Qb = d->Q + m->body_qadr[b];
      const double* qb = q + m->body_qadr[b];
      for (int k = 0; k < 4; k++)
        for (int i = 0; i < 3; i++) Qb[3 * k + i] += n[k] * s * L[i];
      for (int k = 1; k < 4; k++) {
        double c[3];
        cf_mbs_cross3(L + 6, qb + 3 * k, c);
        for (int i = 0; i < 3; i++) Qb[3 * k + i] += 0.5 * s * c[i];
      }
    }
  /* modal and FE bodies: gravity, velocity, elastic and damping forces, loads */
  for (int k = 0; k < cf_mbs__nbody_kinds; k++)
    if (cf_mbs__body_kinds[k]->forces) cf_mbs__body_kinds[k]->forces(m, d, q, qd, t);
}

void cf_mbs__accept_angles(const cfMbsModel* m, cfMbsData* d) {
  for (int j = 0; j < m->njoint; j++)
    if (m->joint_type[j] == CF_MBS_REVOLUTE || m->joint_type[j] == CF_MBS_CYLINDRICAL)
      d->joint_angle[j] = cf_mbs__unwrap(cf_mbs__joint_raw_angle(m, d->q, j), d->joint_angle[j]);
  for (int e = 0; e < m->nforce; e++)
    if (m->force[e].type == CF_MBS_ROT_SPRING)
      d->rot_angle_prev[e] = cf_mbs__unwrap(cf_mbs__joint_raw_angle(m, d->q, m->force[e].joint), d->rot_angle_prev[e]);
}

double cf_mbs__potential(const cfMbsModel* m, const cfMbsData* d) {
  double V = 0;
  const double* g = d->gravity;
  for (int b = 0; b < m->nbody; b++) {
    if (m->body_modal[b] >= 2) continue; /* amplitude blocks; FE node blocks below */
    const double* Mb = m->body_Mbar + 16 * b;
    const double* qb = d->q + m->body_qadr[b];
    for (int k = 0; k < 4; k++) V -= Mb[k] * cf_mbs_dot3(g, qb + 3 * k);
  }
  /* modal and FE bodies: gravity (their part) and elastic energy */
  for (int k = 0; k < cf_mbs__nbody_kinds; k++)
    if (cf_mbs__body_kinds[k]->potential) V += cf_mbs__body_kinds[k]->potential(m, d);
  for (int e = 0; e < m->nforce; e++) {
    const cfMbsForce* f = &m->force[e];
    if (f->type == CF_MBS_SPRING) {
      double x1[3], x2[3], dv[3];
      body_point(m, d->q, f->body[0], f->p[0], x1);
      body_point(m, d->q, f->body[1], f->p[1], x2);
      for (int i = 0; i < 3; i++) dv[i] = x2[i] - x1[i];
      double s = cf_mbs_norm3(dv) - f->rest;
      V += 0.5 * f->k * s * s;
    } else if (f->type == CF_MBS_ROT_SPRING) {
      double th = cf_mbs__unwrap(cf_mbs__joint_raw_angle(m, d->q, f->joint), d->rot_angle_prev[e]);
      V += 0.5 * f->k * (th - f->rest) * (th - f->rest);
    }
  }
  return V;
}

/* For messages about a step or a solve that overflowed: where the applied forces (d->Q, as last
 * evaluated) and the coordinate velocities are largest, naming the bodies ("largest applied force
 * 1e+300 on body 'bar', ..."). Non-finite values count as the largest. */
void cf_mbs__describe_scale(const cfMbsModel* m, const cfMbsData* d, char* out, int n) {
  int bq = -1, bv = -1;
  double fq = -1, fv = -1;
  for (int b = 0; b < m->nbody; b++)
    for (int i = m->body_qadr[b]; i < m->body_qadr[b] + m->body_nq[b]; i++) {
      double q = isfinite(d->Q[i]) ? fabs(d->Q[i]) : INFINITY, v = isfinite(d->qd[i]) ? fabs(d->qd[i]) : INFINITY;
      if (q > fq) fq = q, bq = b;
      if (v > fv) fv = v, bv = b;
    }
  if (bq < 0) {
    snprintf(out, (size_t)n, "no bodies");
    return;
  }
  snprintf(out, (size_t)n, "largest applied force %.3g on body '%s', largest coordinate velocity %.3g of body '%s' "
           "(gravity, loads, drivers or initial velocities out of scale?)", fq, m->body_name[bq], fv, m->body_name[bv]);
}
