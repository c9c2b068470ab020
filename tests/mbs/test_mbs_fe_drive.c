/* Angle drivers at joints on node sets of corotational FE bodies (issue 27): a motor turning a
 * flexible part at its hub. The driver's equation, sin(th) (f1 . f2) - cos(th) (g1 . f2) = 0 with the
 * set's f (or g) measured on its nodes, has FE terms with the driver's time-dependent coefficients.
 *  1. The equation at each of its four forms (the set on body1 or body2; its f measured, or, at a flat
 *     set whose normal is the joint's f, its g): a steel bar's 3-D end layer and its flat end face, in
 *     a revolute to a rigid hub. Against central differences at a random state: the gradient, Phi_t
 *     (d/dt Phi(q + t qd, t) - Phi_q qd) and the acceleration bias (d^2/dt^2 Phi(q + t qd, t)). And
 *     its sign: with the hub turned rigidly by psi, Phi equals sin(th(t) - psi) at several t (the
 *     angle cf_mbs__joint_raw_angle measures), and the angle channel reads psi.
 *  2. The steel lug hung at its eye, turned by a motor at the eye's set, th(t) = A (1 - cos W t),
 *     Newton and linear couplings: the angle channel follows th(t), the centre of mass swings with it
 *     (the eye's measure against the whole part's), and the driver's multiplier (its torque about the
 *     pin, T = lambda for dPhi/dth = 1 at the set) equals I th'' - m g (r0x cos th + r0z sin th), I,
 *     m and r0 from the mesh's node masses (the rigid compound pendulum); then statics with the
 *     motor held at th = A: the angle, and the torque against the weight's m g r_x(A).
 *  3. The bar as body1 (the flat end face, its g measured) turned about a horizontal axis at w t
 *     against the ground: a crank in gravity; its angle and its driving torque m g L/2 cos(w t). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cf_test.h"
#include "cofem/mbs_fe.h"
#include "cofem/mesh_box.h"
#include "cofem/modal_part.h"
#include "lug_pendulum.h"
#include "mbs/mbs_internal.h"

static const char* kPath = COFEM_SOURCE_DIR "/scenes/mbs/test_fe_drive.json"; /* for relative paths only */

/* the bar 1.0 x 0.1 x 0.1 m (steel), 20 x 2 x 2 cells, in a revolute about y with a rigid hub at
 * its end: at the flat face 'xmin' (flat = 1: the joint's f, x, is the face's normal, so its g is
 * measured) or at the 3-D layer x <= 0.05 (flat = 0: its f is measured); bar_first: the bar is
 * body1. Driver 0: th(t) = 0.3 (sin(2 t + 0.4) - sin(0.4)). */
typedef struct Rig {
  cfMesh mesh;
  cfModel* fem;
  cfMbsDef def;
  cfMbsModel* m;
  cfMbsData* d;
  int hub, bar;
} Rig;

static int rig_make(Rig* r, int flat, int bar_first) {
  memset(r, 0, sizeof *r);
  int st = cf_mesh_box(20, 2, 2, 1.0, 0.1, 0.1, &r->mesh);
  if (st < 0) return st;
  cfModelDef md = cf_default_model_def();
  md.dt = 0.01;
  if ((st = cf_model_create(&r->mesh, &md, &r->fem)) < 0) return st;
  int layer[64], nl = 0;
  for (int n = 0; n < r->mesh.nnode; n++)
    if (r->mesh.X[3 * n] < 0.05 + 1e-9) layer[nl++] = n;
  const cfNodeSet* xmin = cf_mesh_find_nset(&r->mesh, "xmin");
  cf_mbs_def_init(&r->def);
  r->def.opt.dt = 0.01, r->def.opt.rho_inf = 0.9;
  cfMbsBodyDef b = cf_mbs_default_body_def();
  snprintf(b.name, sizeof b.name, "bar");
  r->bar = cf_mbs_add_fe_body_as(&r->def, &b, r->fem, 1);
  int p = flat ? cf_mbs_add_fe_point(&r->def, r->bar, "xmin", xmin->nodes, xmin->count)
               : cf_mbs_add_fe_point(&r->def, r->bar, "layer", layer, nl);
  cfMbsBodyDef h = cf_mbs_default_body_def();
  snprintf(h.name, sizeof h.name, "hub");
  h.mass = 1, h.inertia[0] = h.inertia[1] = h.inertia[2] = 1e-2;
  h.pos[0] = flat ? 0 : 0.025, h.pos[1] = 0.05, h.pos[2] = 0.05; /* at the set's mean */
  r->hub = cf_mbs_add_body(&r->def, &h);
  cfMbsJointDef j = cf_mbs_default_joint_def();
  snprintf(j.name, sizeof j.name, "axle");
  j.type = CF_MBS_REVOLUTE;
  j.body1 = bar_first ? r->bar : r->hub, j.body2 = bar_first ? r->hub : r->bar;
  *(bar_first ? &j.modal_point1 : &j.modal_point2) = p;
  j.axis[0] = 0, j.axis[1] = 1, j.axis[2] = 0;
  if ((st = cf_mbs_add_joint(&r->def, &j)) < 0) return st;
  cfMbsDriverDef dr = cf_mbs_default_driver_def();
  snprintf(dr.name, sizeof dr.name, "motor");
  dr.type = CF_MBS_DRIVE_ANGLE, dr.joint = 0;
  dr.f.type = CF_MBS_FUNC_HARMONIC, dr.f.c[0] = 0.3, dr.f.c[1] = 2, dr.f.c[2] = 0.4, dr.f.c[3] = -0.3 * sin(0.4); /* th(0) = 0: q0 is the rest state */
  if ((st = cf_mbs_add_driver(&r->def, &dr)) < 0) return st;
  if ((st = cf_mbs_model_create(&r->def, &r->m)) < 0) return st;
  return cf_mbs_data_create(r->m, &r->d);
}

static void rig_free(Rig* r) {
  cf_mbs_data_free(r->d);
  cf_mbs_model_free(r->m);
  cf_mbs_def_free(&r->def);
  cf_model_free(r->fem);
  cf_mesh_free(&r->mesh);
}

static double driver_phi(const Rig* r, const double* q, double t) {
  cf_mbs__eval_phi(r->m, r->d, q, t, 0);
  return r->d->phi[r->m->driver_con[0]];
}

/* 1: gradient, Phi_t, bias against central differences; the sign of the equation and the angle */
static void test_equation(int flat, int bar_first) {
  Rig r;
  int st = rig_make(&r, flat, bar_first);
  CHECK_OK(st);
  if (st < 0) return rig_free(&r);
  const cfMbsModel* m = r.m;
  const int nq = m->nq, i = m->driver_con[0];
  const cfMbsCon* c = &m->con[i];
  CHECK(c->nft == 2);
  double *q = malloc(sizeof(double) * nq), *qd = malloc(sizeof(double) * nq), *qp = malloc(sizeof(double) * nq);
  double *J = malloc(sizeof(double) * m->jac_stride), *out = malloc(sizeof(double) * m->ncon);
  unsigned s = 2718;
  for (int k = 0; k < nq; k++) { /* a deformed, moving state: 1 cm off the rest positions, 1 m/s */
    s = s * 1103515245u + 12345u;
    q[k] = m->q0[k] + 0.02 * ((double)(s >> 8) / (1u << 24) - 0.5);
    s = s * 1103515245u + 12345u;
    qd[k] = 2 * ((double)(s >> 8) / (1u << 24) - 0.5);
  }
  const double t = 0.7;
  cf_mbs__eval_phi(m, r.d, q, t, 1);
  memcpy(J, r.d->jac + (size_t)i * m->jac_stride, sizeof(double) * m->jac_stride);
  double ejac = 0, scale = 0;
  for (int sl = 0; sl < c->nb; sl++)
    for (int k = 0; k < 12; k++) {
      const int a = m->body_qadr[c->body[sl]] + k;
      const double h = 1e-6;
      memcpy(qp, q, sizeof(double) * nq);
      qp[a] += h;
      double fp = driver_phi(&r, qp, t);
      qp[a] -= 2 * h;
      double fm = driver_phi(&r, qp, t);
      ejac = fmax(ejac, fabs((fp - fm) / (2 * h) - J[12 * sl + k]));
      scale = fmax(scale, fabs(J[12 * sl + k]));
    }
  /* along q(tau) = q + tau qd at t + tau: g' = Phi_q qd + Phi_t, g'' = the bias */
  double Jqd = 0;
  for (int sl = 0; sl < c->nb; sl++)
    for (int k = 0; k < 12; k++) Jqd += J[12 * sl + k] * qd[m->body_qadr[c->body[sl]] + k];
  double g[3];
  const double h = 1e-4;
  for (int sg = -1; sg <= 1; sg++) {
    for (int a = 0; a < nq; a++) qp[a] = q[a] + sg * h * qd[a];
    g[sg + 1] = driver_phi(&r, qp, t + sg * h);
  }
  cf_mbs__eval_phit(m, r.d, q, t, out);
  const double ephit = fabs((g[2] - g[0]) / (2 * h) - Jqd - out[i]), phit = out[i];
  cf_mbs__eval_bias(m, r.d, q, qd, t, out);
  const double ebias = fabs((g[2] - 2 * g[1] + g[0]) / (h * h) - out[i]), bias = out[i];
  /* the hub turned rigidly by psi about the axle (its frame's u, v, w): the bar turns by psi relative
   * to it when it is body1 (the angle is body2's from body1's), by -psi... so the hub by -psi */
  const double psi = 0.37, ang = bar_first ? psi : -psi;
  double R[9];
  const double ax[3] = {0, 1, 0};
  cf_mbs_axis_angle(ax, ang, R);
  memcpy(qp, m->q0, sizeof(double) * nq);
  double* qh = qp + m->body_qadr[r.hub];
  for (int e = 0; e < 3; e++) /* u, v, w: the columns of R */
    for (int a = 0; a < 3; a++) qh[3 + 3 * e + a] = R[3 * a + e];
  double esign = 0;
  for (int k = 0; k < 5; k++) {
    const double tk = 0.3 * k, th = 0.3 * sin(2 * tk + 0.4) - 0.3 * sin(0.4);
    esign = fmax(esign, fabs(driver_phi(&r, qp, tk) - sin(th - psi)));
  }
  const double angle = cf_mbs__joint_raw_angle(m, qp, 0);
  printf("angle driver at the bar's %s (the bar %s): gradient vs central differences %.2e of %.2e, Phi_t %.2e (of "
         "%.2e), bias %.2e (of %.2e); Phi vs sin(th - psi) with the hub turned: %.2e; angle %.6f (psi %.2f)\n",
         flat ? "flat end face" : "end layer", bar_first ? "body1" : "body2", ejac, scale, ephit, fabs(phit), ebias,
         fabs(bias), esign, angle, psi);
  CHECK(scale > 0.1);
  CHECK(ejac <= 1e-9 * scale);                /* measured 1e-11 to 5e-11 */
  CHECK(ephit <= 1e-6 * fmax(1, fabs(phit))); /* measured 1e-8 to 6e-8 (the difference's h^2) */
  CHECK(ebias <= 1e-5 * fmax(1, fabs(bias))); /* measured 4e-9 to 1.5e-7 (the second difference's round-off) */
  CHECK(esign <= 1e-12);                      /* measured 2e-16: exact for a rigid turn */
  CHECK(fabs(angle - psi) <= 1e-12);
  free(q), free(qd), free(qp), free(J), free(out);
  rig_free(&r);
}

/* 2: the hung lug turned at its eye by a motor */
static void test_lug(const char* coupling) {
  const double A = 0.5, W = 2 * M_PI; /* th(t) = A (1 - cos W t) = A sin(W t - pi/2) + A */
  char json[2048];
  snprintf(json, sizeof json,
           "{\"gravity\": [0, 0, -9.81],\n"
           " \"bodies\": [{\"name\": \"lug\", \"flexible\": {\"scene\": \"../lug_pull.json\", \"formulation\": "
           "\"corotational\"}}],\n"
           " \"joints\": [{\"name\": \"pin\", \"type\": \"revolute\", \"body1\": \"ground\", \"body2\": \"lug\", "
           "\"node2\": \"load\", \"axis\": [0, 1, 0]}],\n"
           " \"drivers\": [{\"name\": \"motor\", \"type\": \"angle\", \"joint\": \"pin\", \"function\": {\"type\": "
           "\"harmonic\", \"amplitude\": %.17g, \"omega\": %.17g, \"phase\": %.17g, \"offset\": %.17g}}],\n"
           " \"time\": {\"dt\": 0.005, \"end\": 1.0}, \"solver\": {\"coupling\": \"%s\"},\n"
           " \"output\": {\"channels\": [{\"joint\": \"pin\", \"what\": \"angle\"}, {\"driver\": \"motor\", \"what\": "
           "\"lambda\"}]}}\n",
           A, W, -M_PI / 2, A, coupling);
  cfMbsScene s;
  int st = cf_mbs_scene_parse(json, kPath, &s);
  CHECK_OK(st);
  if (st < 0) return;
  double mass, cm[3], P[3], Iy;
  node_pendulum(s.flex[0]->model, &s.flex[0]->scene.mesh, &mass, cm, P, &Iy);
  const double r0x = cm[0] - P[0], r0z = cm[2] - P[2], g = 9.81;
  cfMbsModel* m = NULL;
  cfMbsData* d = NULL;
  CHECK_OK(st = cf_mbs_model_create(&s.def, &m));
  if (m) CHECK_OK(st = cf_mbs_data_create(m, &d));
  double eang = INFINITY, eswing = INFINITY, etorque = INFINITY, tmax = 0;
  const int nstep = 200;
  if (d) {
    eang = eswing = etorque = 0;
    const double s0 = swing_angle(m, d, 0);
    for (int k = 1; k <= nstep && st >= 0; k++) {
      CHECK_OK(st = cf_mbs_step(m, d));
      const double t = d->t, th = A * (1 - cos(W * t)), thdd = A * W * W * cos(W * t);
      double ang, lam;
      cf_mbs_channel_eval(m, d, &s.channel[0], &ang);
      cf_mbs_channel_eval(m, d, &s.channel[1], &lam);
      /* a turn about +y takes z to x: the centre's swing angle is -th */
      eang = fmax(eang, fabs(ang - th));
      eswing = fmax(eswing, fabs(-(swing_angle(m, d, 0) - s0) - th));
      /* I th'' = T + the weight's torque about +y, m g (R_y(th) r0)_x */
      const double T = Iy * thdd - mass * g * (r0x * cos(th) + r0z * sin(th));
      /* from 0.5 s: the lug starts undeformed, and its sag's ringing (rho_inf 0.9) is in the
       * multiplier for the first 0.4 s (0.09 N m at 0.1 s) */
      if (t > 0.5 - 1e-9) etorque = fmax(etorque, fabs(lam - T));
      tmax = fmax(tmax, fabs(T));
    }
  }
  /* statics with the motor held at th = A (t = 1/4 s): the lug at that angle, the torque its weight's */
  double sang = NAN, storque = NAN, T0 = NAN;
  if (d && st >= 0) {
    cfMbsStaticOptions o;
    cf_mbs_static_defaults(&o);
    o.time = 0.25;
    CHECK_OK(st = cf_mbs_static(m, d, &o, NULL, NULL));
    cf_mbs_channel_eval(m, d, &s.channel[0], &sang);
    cf_mbs_channel_eval(m, d, &s.channel[1], &storque);
    T0 = -mass * g * (r0x * cos(A) + r0z * sin(A));
    printf("  statics at th = %.2f: angle %.6f, the motor's torque %.6g N m against m g's %.6g N m (%.1e)\n", A, sang,
           storque, T0, fabs(storque / T0 - 1));
  }
  CHECK(fabs(sang - A) <= 1e-8);                 /* measured below 1e-9 */
  CHECK(fabs(storque - T0) <= 1e-5 * fabs(T0));  /* measured 8.5e-7 (the part's sag moves its centre) */
  printf("lug turned at its eye by a motor, th = %.1f (1 - cos %.2f t), %s coupling, %d steps of 5 ms: angle channel "
         "vs th %.2e rad, the centre's swing vs th %.2e rad, the driver's multiplier vs I th'' - m g r_x(th) %.3e N m "
         "(%.2e of its largest, %.3g N m)\n",
         A, W, coupling, nstep, eang, eswing, etorque, etorque / tmax, tmax);
  CHECK(eang <= 1e-8);             /* the driver's equation: measured 7.8e-10 (Newton), 3.9e-11 (linear) */
  CHECK(eswing <= 1e-5);           /* the part's elastic lag behind its eye: measured 7.5e-7 */
  CHECK(etorque <= 1e-2 * tmax);   /* measured 1.1e-3 (both couplings) */
  cf_mbs_data_free(d);
  cf_mbs_model_free(m);
  cf_mbs_scene_free(&s);
}

/* 3: the bar as body1 at its flat end face, turned at w t about y against the ground in gravity */
static void test_crank(void) {
  cfMesh mesh;
  int st = cf_mesh_box(20, 2, 2, 1.0, 0.1, 0.1, &mesh);
  CHECK_OK(st);
  if (st < 0) return;
  cfModelDef md = cf_default_model_def(); /* steel, lumped mass */
  md.dt = 0.005;
  md.rayleigh_beta = 1e-4; /* damps the bending modes (264 Hz: 8% of critical), which 5 ms steps do not resolve */
  cfModel* fem = NULL;
  CHECK_OK(st = cf_model_create(&mesh, &md, &fem));
  const cfNodeSet* xmin = cf_mesh_find_nset(&mesh, "xmin");
  cfMbsDef def;
  cf_mbs_def_init(&def);
  def.opt.dt = 0.005, def.opt.rho_inf = 0.9, def.opt.gravity[2] = -9.81;
  cfMbsBodyDef b = cf_mbs_default_body_def();
  snprintf(b.name, sizeof b.name, "bar");
  int bar = cf_mbs_add_fe_body_as(&def, &b, fem, 1);
  int p = cf_mbs_add_fe_point(&def, bar, "xmin", xmin->nodes, xmin->count);
  cfMbsJointDef j = cf_mbs_default_joint_def();
  snprintf(j.name, sizeof j.name, "axle");
  j.type = CF_MBS_REVOLUTE;
  j.body1 = bar, j.modal_point1 = p, j.body2 = CF_MBS_GROUND;
  j.axis[0] = 0, j.axis[1] = 1, j.axis[2] = 0;
  CHECK_OK(cf_mbs_add_joint(&def, &j));
  /* the ground turns by th relative to the bar: the bar by -th about y, i.e. th about -y */
  const double w = 2.0, g = 9.81;
  cfMbsDriverDef dr = cf_mbs_default_driver_def();
  snprintf(dr.name, sizeof dr.name, "motor");
  dr.type = CF_MBS_DRIVE_ANGLE, dr.joint = 0;
  dr.f.type = CF_MBS_FUNC_POLY, dr.f.n = 2, dr.f.c[0] = 0, dr.f.c[1] = w;
  CHECK_OK(cf_mbs_add_driver(&def, &dr));
  /* consistent initial velocities: the bar turning at -w about y through the face's mean (0, .05, .05) */
  def.body[bar].omega[1] = -w;
  def.body[bar].vel[0] = w * 0.05; /* -omega x P, P = (0, .05, .05): the face's mean at rest */
  cfMbsModel* m = NULL;
  cfMbsData* d = NULL;
  CHECK_OK(st = cf_mbs_model_create(&def, &m));
  if (m) CHECK_OK(st = cf_mbs_data_create(m, &d));
  /* the compound pendulum of the node masses about the axle: mass, r0 = c - P */
  double mass = 0, cx = 0;
  for (int n = 0; n < fem->nnode; n++) mass += fem->node_mass[n], cx += fem->node_mass[n] * fem->X[3 * n];
  cx /= mass;
  double eang = INFINITY, etorque = INFINITY, lsum = 0, tsum = 0;
  const double tmax = mass * g * cx; /* the largest torque, horizontal */
  const int nstep = 200, win = 20;
  if (d) {
    eang = etorque = 0;
    for (int k = 1; k <= nstep && st >= 0; k++) {
      CHECK_OK(st = cf_mbs_step(m, d));
      const double th = w * d->t;
      eang = fmax(eang, fabs(cf_mbs_joint_angle(m, d, 0) - th));
      /* the bar turned by -th about y: its centre at x = cx cos th, z = .05 + cx sin th; the weight's
       * torque about +y on it, m g r_x, is what the motor holds at steady speed. The multiplier is
       * the torque on body2 (the ground) about +y: -(the torque on the bar) = m g cx cos th. Its
       * samples carry the bar's bending modes (264 Hz, unresolved at 5 ms: +-6e3 N m without damping,
       * period 3 steps, which rho_inf = 0.9 hardly damps), so it is compared in means over windows of
       * 20 steps, in the second half of the run (the bar starts undeformed, its bending rings). */
      lsum += d->reaction[m->driver_con[0]], tsum += mass * g * cx * cos(th);
      if (k % win == 0 && k <= nstep / 2) lsum = tsum = 0; /* the start's transient (released undeformed) */
      if (k % win == 0 && k > nstep / 2) {
        etorque = fmax(etorque, fabs(lsum - tsum) / win);
        lsum = tsum = 0;
      }
    }
  }
  printf("bar as body1 turned at its flat end face at %.1f rad/s in gravity, %d steps of 5 ms: angle vs w t %.2e rad, "
         "the driver's multiplier vs m g L/2 cos(w t), means over 20 steps from 0.5 s: %.3e N m (%.2e of %.3g N m)\n",
         w, nstep, eang, etorque, etorque / tmax, tmax);
  CHECK(eang <= 1e-8);           /* measured 6.9e-13 */
  CHECK(etorque <= 5e-2 * tmax); /* measured 1.2e-2 (the window right after the transient) */
  cf_mbs_data_free(d);
  cf_mbs_model_free(m);
  cf_mbs_def_free(&def);
  cf_model_free(fem);
  cf_mesh_free(&mesh);
}

int main(void) {
  for (int flat = 0; flat < 2; flat++)
    for (int first = 0; first < 2; first++) test_equation(flat, first);
  test_lug("newton");
  test_lug("linear");
  test_crank();
  TEST_END();
}
