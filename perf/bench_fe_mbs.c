/* FE bodies in mechanisms (issue 14, "Benchmarks", for what exists now): cost per step of the
 * lumped and the corotational FE body (cofem/mbs_fe.h) and of Craig-Bampton modal bodies, against
 * the standalone co-rotational FE step of the same part, and the lumped path's growth with the
 * node count. Results: perf/results/c-2core-dev-fe-mbs/README.md.
 *
 *   cofem_bench_fe_mbs [--steps N] [--repeat R] [--dt DT]... [--growth-steps N] [--growth-max-nodes N]
 *                      [--threads T] [--label NAME] [--quick]
 * One core: OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 OMP_THREAD_LIMIT=1 ... --threads 1 (without the
 * thread limit CHOLMOD's supernodal factorization runs 4 OpenMP threads whatever the thread count).
 * Defaults: 100 steps per round, 3 rounds, dt 0.01 and 0.001 s, 20 steps per round for the bars up
 * to 5000 nodes. --quick: 5 steps, 1 round, 3 steps on the two smallest bars (a smoke run).
 *
 * Parts: the lug (scenes/lug_pull.json) and the hinge (scenes/hinge_pull.json), each hung from the
 * ground under gravity and released from rest 0.4 rad off the vertical:
 *  - lug: revolute joint at its eye (node set 'load', whose nodes span the hole's axis, mesh y), as
 *    in scenes/mbs/lug_lumped.json; turned about the pin;
 *  - hinge: revolute joint at its pin holes (node set 'support': the nodes of both holes, which span
 *    the holes' axis, mesh z, through the 10 mm plate; the joint sits at their mean, mid-plate
 *    between the holes); turned so that this axis is horizontal (global y) and the arm hangs 0.4 rad
 *    off straight below it.
 * Variants, all at the same dt (default 0.01 s and 0.001 s):
 *  - lumped: "flexible": {"formulation": "lumped"} (generalized-alpha, rho_inf 0.9, the scene default);
 *  - corotational: "formulation": "corotational" (the same equations, the nodes condensed onto the
 *    joint; its A0 factored by CHOLMOD: no PCG in this path yet);
 *  - modal6/12/24: "formulation": "modal" with the pin set as the interface, N fixed-interface
 *    modes, no modal damping (trapezoidal rule, the scene default); the reduction's time (scene,
 *    model, constraint and normal modes) is reported separately, not in the step time;
 *  - fe_rc / fe_bj: the standalone FE step, cf_step on the FE scene as `cofem run` runs it (its
 *    supports fixed, its loads applied at t + dt; backward Euler, PCG tol 1e-6, warm start), with
 *    the rotated-Cholesky and the block-Jacobi preconditioner: the baseline;
 *  - fe_ga: the same with generalized-alpha Newton iterations (rho_inf 0.9 of the scene, rotated
 *    Cholesky), the integrator class the mechanism uses (the part alone at the same kind of step).
 * --pcg instead: the corotational body with "factor": "pcg" against the exact factor (run_pcg_section;
 * perf/results/c-2core-dev-fe-mbs-pcg).
 * Growth: the lumped path on steel bars 1.0 x 0.2 x 0.2 m from cf_mesh_box (cubic cells, 5n x n x n,
 * 256 .. 4600 nodes), hung at the end face (node set 'xmin') by a spherical joint and released
 * 0.4 rad off the vertical, dt the first --dt; ms per step against nodes and the fitted exponent.
 *
 * Timing: every variant is built once; then R rounds, each running every variant for N steps from
 * its initial state in turn (interleaved, so that drift of the shared machine affects all alike).
 * The figure per step is the process CPU time of the fastest round / N (with one thread the time of
 * the core, which other jobs do not inflate as they do the wall time); the median round's wall
 * time is printed beside it. Iterations and stage times are those of the fastest round (the
 * iteration counts are the same in every round). Ratios are against the FE step of the same part,
 * dt and process. Every figure is measured in this run. With --label, writes
 * perf/results/<label>/results.csv (perf/plot_fe_mbs.py plots it): per variant the CPU figure, the
 * wall time of the same round, the medians, iterations (Newton for mechanisms, PCG for the FE step)
 * and the stage timers (the library's, wall clock, of the fastest round, ms per step; scale them by
 * cpu_ms_per_step / wall_ms_per_step_of_fastest to compare with the CPU figure). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cofem/cuda.h"
#include "cofem/fem.h"
#include "cofem/mbs.h"
#include "cofem/mbs_fe.h"
#include "cofem/mesh_box.h"
#include "cofem/modal_part.h"
#include "cofem/output.h"
#include "cofem/scene.h"
#include "results_csv.h"

#define MAX_DT 4
#define MAX_VAR 64
#define THETA0 0.4 /* release angle off the vertical [rad] */

enum { KIND_LUMPED, KIND_COROT, KIND_COROT_ROTATED, KIND_MODAL, KIND_FE, KIND_BOX, KIND_COROT_PCG };

typedef struct Part {
  const char* name;
  const char* scene;  /* FE scene, relative to the source tree, or an absolute path (--family) */
  const char* pin;    /* node set the joint attaches to */
  int revolute;       /* 1: revolute joint about pin_axis, 0: spherical joint */
  double pin_axis[3]; /* the pin's axis in mesh coordinates (revolute) */
} Part;

static const Part kParts[] = {
    {"lug", "scenes/lug_pull.json", "load", 1, {0, 1, 0}},
    {"hinge", "scenes/hinge_pull.json", "support", 1, {0, 0, 1}},
};
#define NPART ((int)(sizeof kParts / sizeof kParts[0]))

typedef struct Variant {
  char part[32], name[32];
  int kind, modes, precond, box_n;
  int integrator; /* the FE step's (fe_ga: generalized-alpha Newton, as the mechanism integrates) */
  /* KIND_COROT_PCG ("factor": "pcg"): the preconditioner's scene name, cold starts, the GPU */
  const char* pcg_pre;
  int pcg_cold, pcg_cuda;
  double pcg_it, pcg_z; /* PCG iterations per step of the part's solves, of them the interface columns' */
  double dt;
  /* mechanism */
  cfMbsScene scene;
  int has_scene;
  cfMesh box_mesh;
  cfModel* box_fem;
  cfMbsDef box_def;
  int has_box;
  cfMbsModel* m;
  cfMbsData* d;
  /* standalone FE */
  cfScene fsc;
  int has_fsc;
  cfModel* fm;
  cfData* fd;
  /* figures */
  int nnode, ntet, nq, ncon, nnz;
  double t_setup, t_reduce, theta_check;
  int nrep;
  double cpu[64], wall[64];
  double best_cpu, best_wall, stage[8]; /* cfMbsStage or cfStage: wall clock of the fastest round */
  double iters, newton; /* per step: PCG (FE) or Newton (mechanism) iterations; the FE step's Newton */
  int iters_max;
  int failed;
  char err[512];
} Variant;

static double cpu_time(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static double median(const double* v, int n) {
  double t[64];
  memcpy(t, v, sizeof(double) * (size_t)n);
  qsort(t, (size_t)n, sizeof(double), cmp_double);
  return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

static void fail(Variant* v, const char* what) {
  v->failed = 1;
  snprintf(v->err, sizeof v->err, "%s: %s", what, cf_last_error());
  fprintf(stderr, "  %s %s dt %g: %s\n", v->part, v->name, v->dt, v->err);
}

/* quaternion [w x y z] of a rotation by angle about a unit axis; product a b */
static void quat_axis(const double ax[3], double angle, double q[4]) {
  q[0] = cos(0.5 * angle);
  for (int a = 0; a < 3; a++) q[a + 1] = sin(0.5 * angle) * ax[a];
}
static void quat_mul(const double a[4], const double b[4], double q[4]) {
  q[0] = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3];
  q[1] = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2];
  q[2] = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1];
  q[3] = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0];
}
static void quat_rotate(const double q[4], const double x[3], double y[3]) {
  double R[9];
  double w = q[0], a = q[1], b = q[2], c = q[3];
  R[0] = 1 - 2 * (b * b + c * c), R[1] = 2 * (a * b - w * c), R[2] = 2 * (a * c + w * b);
  R[3] = 2 * (a * b + w * c), R[4] = 1 - 2 * (a * a + c * c), R[5] = 2 * (b * c - w * a);
  R[6] = 2 * (a * c - w * b), R[7] = 2 * (b * c + w * a), R[8] = 1 - 2 * (a * a + b * b);
  for (int i = 0; i < 3; i++) y[i] = R[3 * i] * x[0] + R[3 * i + 1] * x[1] + R[3 * i + 2] * x[2];
}

static void part_scene_path(const Part* p, char* out, size_t n) {
  if (p->scene[0] == '/') snprintf(out, n, "%s", p->scene);
  else snprintf(out, n, "%s/%s", COFEM_SOURCE_DIR, p->scene);
}

/* The pose (quaternion q) that puts the part's centre of mass (node masses) THETA0 off straight below
 * the pin (mean of the pin set), in the xz plane; a revolute pin's axis (mesh) turned to global y. */
static int hang_pose(const Part* p, double q[4]) {
  char path[1024];
  part_scene_path(p, path, sizeof path);
  cfScene s;
  int st = cf_scene_load(path, &s);
  if (st < 0) return st;
  cfModel* fem = NULL;
  if ((st = cf_model_create(&s.mesh, &s.def, &fem)) < 0) {
    cf_scene_free(&s);
    return st;
  }
  const cfNodeSet* ns = cf_mesh_find_nset(&s.mesh, p->pin);
  if (!ns) {
    cf_model_free(fem);
    cf_scene_free(&s);
    return cf_error(CF_ERR_ARG, "%s: no node set '%s'", path, p->pin);
  }
  double P[3] = {0, 0, 0}, c[3] = {0, 0, 0}, mass = 0;
  for (int k = 0; k < ns->count; k++)
    for (int a = 0; a < 3; a++) P[a] += fem->X[3 * ns->nodes[k] + a] / ns->count;
  for (int n = 0; n < fem->nnode; n++) {
    mass += fem->node_mass[n];
    for (int a = 0; a < 3; a++) c[a] += fem->node_mass[n] * fem->X[3 * n + a];
  }
  for (int a = 0; a < 3; a++) c[a] = c[a] / mass - P[a];
  cf_model_free(fem);
  cf_scene_free(&s);
  /* q1, the shortest rotation taking e to f: revolute, the pin axis to global y; spherical, the
   * centre straight below the pin */
  double ey[3] = {0, 1, 0}, down[3] = {0, 0, -1}, e[3], f[3], lc = sqrt(c[0] * c[0] + c[1] * c[1] + c[2] * c[2]);
  for (int a = 0; a < 3; a++) e[a] = p->revolute ? p->pin_axis[a] : c[a] / lc, f[a] = p->revolute ? ey[a] : down[a];
  double ax[3] = {e[1] * f[2] - e[2] * f[1], e[2] * f[0] - e[0] * f[2], e[0] * f[1] - e[1] * f[0]};
  double sn = sqrt(ax[0] * ax[0] + ax[1] * ax[1] + ax[2] * ax[2]), cs = e[0] * f[0] + e[1] * f[1] + e[2] * f[2];
  double q1[4] = {1, 0, 0, 0};
  if (sn > 1e-12) {
    for (int a = 0; a < 3; a++) ax[a] /= sn;
    quat_axis(ax, atan2(sn, cs), q1);
  }
  /* q2: about global y, so that the centre lies THETA0 off the downward vertical (angle from below,
   * atan2(x, -z), is decreased by a turn psi about +y) */
  double d[3];
  quat_rotate(q1, c, d);
  double alpha = atan2(d[0], -d[2]), q2[4];
  quat_axis(ey, alpha - THETA0, q2);
  quat_mul(q2, q1, q);
  return CF_OK;
}

/* angle of the centre of mass off the vertical below the pin, from the model's initial state */
static double lumped_angle(const Variant* v) {
  int ib = cf_mbs_fe_index(v->m, v->kind == KIND_BOX ? 0 : v->scene.flex_body[0]);
  if (ib < 0) return NAN;
  double x[3], P[3];
  cf_mbs_fe_centre(v->m, v->d, ib, x, NULL);
  cf_mbs_fe_point(v->m, v->d, ib, 0, P);
  return atan2(x[0] - P[0], P[2] - x[2]); /* in the swing plane (xz): the pin axis is y */
}

static int setup_mbs_json(Variant* v, const Part* p, const double q[4]) {
  char json[4096], flex[1536], scenerel[1100];
  if (p->scene[0] == '/') snprintf(scenerel, sizeof scenerel, "%s", p->scene);
  else snprintf(scenerel, sizeof scenerel, "../%s", p->scene + strlen("scenes/"));
  if (v->kind == KIND_COROT_PCG)
    snprintf(flex, sizeof flex,
             "{\"scene\": \"%s\", \"formulation\": \"corotational\", \"factor\": \"pcg\", \"preconditioner\": \"%s\", "
             "\"backend\": \"%s\"}", scenerel, v->pcg_pre, v->pcg_cuda ? "cuda" : "cpu");
  else if (v->kind == KIND_LUMPED || v->kind == KIND_COROT || v->kind == KIND_COROT_ROTATED)
    snprintf(flex, sizeof flex, "{\"scene\": \"%s\", \"formulation\": \"%s\"%s}", scenerel,
             v->kind == KIND_LUMPED ? "lumped" : "corotational",
             v->kind == KIND_COROT_ROTATED ? ", \"factor\": \"rotated\"" : "");
  else
    snprintf(flex, sizeof flex,
             "{\"scene\": \"%s\", \"formulation\": \"modal\", \"interface\": [\"%s\"], \"modes\": %d, \"damping\": 0}",
             scenerel, p->pin, v->modes);
  snprintf(json, sizeof json,
           "{\"gravity\": [0, 0, -9.81],\n"
           " \"bodies\": [{\"name\": \"%s\", \"flexible\": %s,\n"
           "              \"quaternion\": [%.17g, %.17g, %.17g, %.17g]}],\n"
           " \"joints\": [{\"name\": \"pin\", \"type\": \"%s\", \"body1\": \"ground\", \"body2\": \"%s\","
           " \"node2\": \"%s\"%s}],\n"
           " \"time\": {\"dt\": %.17g, \"end\": 1.0}}\n",
           p->name, flex, q[0], q[1], q[2], q[3], p->revolute ? "revolute" : "spherical", p->name, p->pin,
           p->revolute ? ", \"axis\": [0, 1, 0]" : "", v->dt);
  char path[1024];
  snprintf(path, sizeof path, "%s/scenes/mbs/bench_fe_mbs.json", COFEM_SOURCE_DIR); /* for relative paths only */
  double t0 = cf_wall_time();
  int st = cf_mbs_scene_parse(json, path, &v->scene);
  double t1 = cf_wall_time();
  if (st < 0) return fail(v, "scene"), st;
  v->has_scene = 1;
  if (v->pcg_cold) v->scene.flex[0]->model->def.warm_start = 0; /* the solves start from 0 */
  const cfModalPart* fp = v->scene.flex[0];
  v->nnode = fp->scene.mesh.nnode, v->ntet = fp->scene.mesh.ntet;
  v->t_reduce = v->kind == KIND_MODAL ? fp->t_total - fp->t_load : 0;
  if ((st = cf_mbs_model_create(&v->scene.def, &v->m)) < 0) return fail(v, "model"), st;
  if ((st = cf_mbs_data_create(v->m, &v->d)) < 0) return fail(v, "data"), st;
  v->t_setup = (cf_wall_time() - t1) + (t1 - t0 - v->t_reduce);
  v->nq = v->m->nq, v->ncon = v->m->ncon, v->nnz = v->m->nnz;
  if (v->kind != KIND_MODAL) v->theta_check = lumped_angle(v);
  return CF_OK;
}

static int setup_fe(Variant* v, const Part* p) {
  char path[1024];
  part_scene_path(p, path, sizeof path);
  double t0 = cf_wall_time();
  int st = cf_scene_load(path, &v->fsc);
  if (st < 0) return fail(v, "FE scene"), st;
  v->has_fsc = 1;
  v->fsc.def.dt = v->dt;
  v->fsc.def.preconditioner = v->precond;
  v->fsc.def.integrator = v->integrator;
  if ((st = cf_scene_build(&v->fsc, &v->fm, &v->fd)) < 0) return fail(v, "FE build"), st;
  v->t_setup = cf_wall_time() - t0;
  v->nnode = v->fm->nnode, v->ntet = v->fm->ntet, v->nq = v->fm->ndof - v->fm->nfixed;
  return CF_OK;
}

/* steel bar 1.0 x 0.2 x 0.2 m, 5n x n x n cubic cells, hung at its end face 'xmin' by a spherical
 * joint, its axis THETA0 off the downward vertical */
static int setup_box(Variant* v, int n) {
  double t0 = cf_wall_time();
  int st = cf_mesh_box(5 * n, n, n, 1.0, 0.2, 0.2, &v->box_mesh);
  if (st < 0) return fail(v, "box mesh"), st;
  v->has_box = 1;
  cfModelDef md = cf_default_model_def(); /* steel: 210 GPa, 0.3, 7850 kg/m^3, lumped mass, no damping */
  md.dt = v->dt;
  if ((st = cf_model_create(&v->box_mesh, &md, &v->box_fem)) < 0) return fail(v, "box model"), st;
  const cfNodeSet* end = cf_mesh_find_nset(&v->box_mesh, "xmin");
  if (!end) return fail(v, "box mesh has no 'xmin' set"), CF_ERR_ARG;
  cf_mbs_def_init(&v->box_def);
  v->box_def.opt.dt = v->dt;
  v->box_def.opt.gravity[2] = -9.81;
  v->box_def.opt.rho_inf = 0.9; /* as mechanism scenes with FE bodies default to */
  cfMbsBodyDef b = cf_mbs_default_body_def();
  snprintf(b.name, sizeof b.name, "bar");
  const double ey[3] = {0, 1, 0};
  cf_mbs_axis_angle(ey, 0.5 * acos(-1.0) - THETA0, b.rot); /* mesh x (the bar) THETA0 off straight down */
  int body = cf_mbs_add_fe_body(&v->box_def, &b, v->box_fem);
  if (body < 0) return fail(v, "FE body"), body;
  int pt = cf_mbs_add_fe_point(&v->box_def, body, "xmin", end->nodes, end->count);
  if (pt < 0) return fail(v, "FE point"), pt;
  cfMbsJointDef j = cf_mbs_default_joint_def();
  snprintf(j.name, sizeof j.name, "pin");
  j.type = CF_MBS_SPHERICAL;
  j.body1 = CF_MBS_GROUND, j.body2 = body, j.modal_point2 = pt;
  if ((st = cf_mbs_add_joint(&v->box_def, &j)) < 0) return fail(v, "joint"), st;
  if ((st = cf_mbs_model_create(&v->box_def, &v->m)) < 0) return fail(v, "model"), st;
  if ((st = cf_mbs_data_create(v->m, &v->d)) < 0) return fail(v, "data"), st;
  v->t_setup = cf_wall_time() - t0;
  v->nnode = v->box_mesh.nnode, v->ntet = v->box_mesh.ntet;
  v->nq = v->m->nq, v->ncon = v->m->ncon, v->nnz = v->m->nnz;
  v->theta_check = lumped_angle(v);
  return CF_OK;
}

static void release(Variant* v) {
  cf_mbs_data_free(v->d);
  cf_mbs_model_free(v->m);
  if (v->has_scene) cf_mbs_scene_free(&v->scene);
  if (v->has_box) {
    cf_mbs_def_free(&v->box_def);
    cf_model_free(v->box_fem);
    cf_mesh_free(&v->box_mesh);
  }
  cf_data_free(v->fd);
  cf_model_free(v->fm);
  if (v->has_fsc) cf_scene_free(&v->fsc);
  v->m = NULL, v->d = NULL, v->fm = NULL, v->fd = NULL, v->has_scene = v->has_box = v->has_fsc = 0;
}

/* One round: `steps` steps from the initial state. Returns < 0 on an error (recorded). */
static int run_round(Variant* v, int steps, int timed) {
  if (v->failed) return -1;
  int st;
  double c0, w0;
  if (v->kind == KIND_FE) {
    cf_data_reset(v->fm, v->fd);
    c0 = cpu_time(), w0 = cf_wall_time();
    for (int k = 0; k < steps; k++) {
      cf_scene_forces(&v->fsc, v->fd->t + v->fsc.def.dt, 1.0, v->fd->f_ext);
      if ((st = cf_step(v->fm, v->fd)) < 0) return fail(v, "step"), st;
    }
  } else {
    if ((st = cf_mbs_reset(v->m, v->d)) < 0) return fail(v, "reset"), st;
    long z0 = 0, it0 = v->kind == KIND_COROT_PCG ? cf_mbs_fe_pcg_iterations(v->m, v->d, 0, &z0) : 0;
    c0 = cpu_time(), w0 = cf_wall_time();
    for (int k = 0; k < steps; k++)
      if ((st = cf_mbs_step(v->m, v->d)) < 0) return fail(v, "step"), st;
    if (v->kind == KIND_COROT_PCG && timed) {
      long z1 = 0, it1 = cf_mbs_fe_pcg_iterations(v->m, v->d, 0, &z1);
      v->pcg_it = (double)(it1 - it0) / steps, v->pcg_z = (double)(z1 - z0) / steps;
    }
  }
  double cpu = cpu_time() - c0, wall = cf_wall_time() - w0;
  if (!timed) return CF_OK;
  v->cpu[v->nrep] = cpu, v->wall[v->nrep] = wall;
  v->nrep++;
  if (v->nrep == 1 || cpu < v->best_cpu) {
    v->best_cpu = cpu, v->best_wall = wall;
    if (v->kind == KIND_FE) {
      for (int s = 0; s < CF_STAGE_COUNT; s++) v->stage[s] = v->fd->timer[s];
      v->iters = (double)v->fd->pcg_iters_total / steps;
      v->newton = (double)v->fd->newton_iters_total / steps;
      v->iters_max = -1;
    } else {
      for (int s = 0; s < CF_MBS_STAGE_COUNT; s++) v->stage[s] = v->d->timer[s];
      v->iters = (double)v->d->iters_total / steps;
      v->iters_max = v->d->iters_max;
    }
  }
  return CF_OK;
}

/* interleaved rounds over variants [0, n) */
static void run_all(Variant* v, int n, int steps, int repeat) {
  int warm = steps < 5 ? steps : 5;
  for (int i = 0; i < n; i++) run_round(&v[i], warm, 0);
  for (int r = 0; r < repeat; r++)
    for (int i = 0; i < n; i++) run_round(&v[i], steps, 1);
}

static double ms_step(const Variant* v, int steps) { return 1e3 * v->best_cpu / steps; }

static const Variant* find(const Variant* v, int n, const char* part, double dt, const char* name) {
  for (int i = 0; i < n; i++)
    if (!strcmp(v[i].part, part) && v[i].dt == dt && !strcmp(v[i].name, name) && !v[i].failed && v[i].nrep) return &v[i];
  return NULL;
}

/* the stage split in % of the stages' sum (the stage timers are wall clock; shares are comparable
 * with the CPU figure, absolute values are in the CSV) */
static void fmt_stages(const Variant* v, char* out, size_t n) {
  double sum = 0;
  int ns = v->kind == KIND_FE ? CF_STAGE_COUNT : CF_MBS_STAGE_COUNT;
  for (int s = 0; s < ns; s++) sum += v->stage[s];
  double f = sum > 0 ? 100 / sum : 0;
  if (v->kind == KIND_FE)
    snprintf(out, n, "polar %.0f, assemble %.0f, PCG %.0f, update %.0f", f * v->stage[CF_STAGE_POLAR],
             f * v->stage[CF_STAGE_ASSEMBLE], f * v->stage[CF_STAGE_PCG], f * v->stage[CF_STAGE_UPDATE]);
  else
    snprintf(out, n, "factor %.0f, assemble %.0f, forces %.0f, solve %.0f, constraints %.0f",
             f * v->stage[CF_MBS_STAGE_FACTOR], f * v->stage[CF_MBS_STAGE_ASSEMBLE], f * v->stage[CF_MBS_STAGE_FORCES],
             f * v->stage[CF_MBS_STAGE_SOLVE], f * v->stage[CF_MBS_STAGE_CONSTRAINTS]);
}

static void csv_row(FILE* f, const char* section, const Variant* v, int steps, const Variant* rc, const Variant* bj,
                    const Variant* ga) {
  double ms = ms_step(v, steps), fs = 1e3 / steps;
  fprintf(f, "%s,%s,%s,%g,%d,%d,%d,%d,%d,%d,%d,%.4g,%.4g,%.5g,%.5g,%.5g,%.5g,%.4g,%.3f,", section, v->part, v->name,
          v->dt, v->nnode, v->ntet, v->nq, v->ncon, v->nnz, steps, v->nrep, v->t_setup, v->t_reduce, ms,
          1e3 * v->best_wall / steps, 1e3 * median(v->cpu, v->nrep) / steps, 1e3 * median(v->wall, v->nrep) / steps,
          v->dt * 1e3 / ms, v->iters);
  if (v->iters_max >= 0) fprintf(f, "%d", v->iters_max);
  fprintf(f, ",");
  if (rc) fprintf(f, "%.4g", ms / ms_step(rc, steps));
  fprintf(f, ",");
  if (bj) fprintf(f, "%.4g", ms / ms_step(bj, steps));
  if (v->kind == KIND_FE)
    fprintf(f, ",,,,,,%.5g,%.5g,%.5g,%.5g,", fs * v->stage[CF_STAGE_POLAR], fs * v->stage[CF_STAGE_ASSEMBLE],
            fs * v->stage[CF_STAGE_PCG], fs * v->stage[CF_STAGE_UPDATE]);
  else
    fprintf(f, ",%.5g,%.5g,%.5g,%.5g,%.5g,,,,,", fs * v->stage[CF_MBS_STAGE_CONSTRAINTS], fs * v->stage[CF_MBS_STAGE_FORCES],
            fs * v->stage[CF_MBS_STAGE_ASSEMBLE], fs * v->stage[CF_MBS_STAGE_FACTOR], fs * v->stage[CF_MBS_STAGE_SOLVE]);
  if (ga) fprintf(f, "%.4g", ms / ms_step(ga, steps));
  fprintf(f, ",");
  if (v->kind == KIND_FE && v->integrator == CF_INTEGRATOR_GENERALIZED_ALPHA) fprintf(f, "%.3f", v->newton);
  fprintf(f, "\n");
}

/* the table of one part and dt: every variant, its ratio to the part's own FE step (fe_rc, fe_bj) */
static void print_part_table(const Variant* var, int nv, const char* pn, double dt, int steps) {
  const Variant* rc = find(var, nv, pn, dt, "fe_rc");
  const Variant* bj = find(var, nv, pn, dt, "fe_bj");
  const Variant* ga = find(var, nv, pn, dt, "fe_ga");
  printf("\n%s, dt %g s (%g s simulated per round):\n", pn, dt, steps * dt);
  printf("| variant | coordinates | setup s | reduction s | ms/step | real time | iters/step | x FE rc | x FE bj | x FE ga | stages (%% of their sum) |\n");
  printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (int i = 0; i < nv; i++) {
    const Variant* v = &var[i];
    if (strcmp(v->part, pn) || v->dt != dt) continue;
    if (v->failed || !v->nrep) {
      printf("| %s | %s: %s |\n", v->name, v->failed ? "failed" : "not run", v->err);
      continue;
    }
    char st[256], r1[32] = "-", r2[32] = "-", r3[32] = "-", red[32] = "-", it[48];
    double ms = ms_step(v, steps);
    fmt_stages(v, st, sizeof st);
    if (rc) snprintf(r1, sizeof r1, "%.2f", ms / ms_step(rc, steps));
    if (bj) snprintf(r2, sizeof r2, "%.2f", ms / ms_step(bj, steps));
    if (ga) snprintf(r3, sizeof r3, "%.2f", ms / ms_step(ga, steps));
    if (v->kind == KIND_MODAL) snprintf(red, sizeof red, "%.2f", v->t_reduce);
    if (v->kind != KIND_FE) snprintf(it, sizeof it, "%.2f Newton", v->iters);
    else if (v->integrator == CF_INTEGRATOR_GENERALIZED_ALPHA) snprintf(it, sizeof it, "%.2f PCG, %.2f Newton", v->iters, v->newton);
    else snprintf(it, sizeof it, "%.2f PCG", v->iters);
    printf("| %s | %d | %.2f | %s | %.3f | %.2fx | %s | %s | %s | %s | %s |\n", v->name, v->nq, v->t_setup, red, ms,
           v->dt * 1e3 / ms, it, r1, r2, r3, st);
  }
  printf("(wall median / CPU min per step:");
  for (int i = 0; i < nv; i++)
    if (!strcmp(var[i].part, pn) && var[i].dt == dt && !var[i].failed && var[i].nrep)
      printf(" %s %.2f", var[i].name, median(var[i].wall, var[i].nrep) / var[i].best_cpu);
  printf(")\n");
}

/* The lug family (meshes/generate.sh family: meshes/cache/lug_10k.msh, lug_100k.msh), hung at its
 * eye as the lug: per mesh an FE scene as scenes/lug_pull.json with the mesh replaced (written to
 * TMPDIR, removed at the end), and the variants fe_rc, corot_rotated, corotational, lumped. A
 * variant whose rounds would take more than `budget` s (estimated from two untimed steps) is left
 * out and said so; a missing mesh is said and skipped. Returns the number of variants set up. */
static int setup_family(Variant* fam, Part* part, char scene[][1100], int* npart, double dt, int steps, int repeat,
                        double budget) {
  static const char* kNames[] = {"lug_10k", "lug_100k"};
  static const int kKinds[] = {KIND_FE, KIND_FE, KIND_COROT_ROTATED, KIND_COROT, KIND_LUMPED};
  static const char* kVariant[] = {"fe_rc", "fe_ga", "corot_rotated", "corotational", "lumped"};
  char tpath[1024];
  snprintf(tpath, sizeof tpath, "%s/scenes/lug_pull.json", COFEM_SOURCE_DIR);
  FILE* f = fopen(tpath, "rb");
  char tmpl[8192];
  size_t len = f ? fread(tmpl, 1, sizeof tmpl - 1, f) : 0;
  if (f) fclose(f);
  tmpl[len] = 0;
  const char* key = "\"../meshes/lug.msh\"";
  char* at = strstr(tmpl, key);
  if (!at) {
    printf("family: %s unreadable or without %s, left out\n", tpath, key);
    return 0;
  }
  const char* tmp = getenv("TMPDIR");
  int nv = 0;
  *npart = 0;
  printf("\nlug family: hung at its eye, dt %g s, %d steps per round, %d rounds, at most %.0f s of rounds per variant\n",
         dt, steps, repeat, budget);
  for (int i = 0; i < 2; i++) {
    char mesh[1024];
    snprintf(mesh, sizeof mesh, "%s/meshes/cache/%s.msh", COFEM_SOURCE_DIR, kNames[i]);
    FILE* mf = fopen(mesh, "rb");
    if (!mf) {
      printf("  %s: %s absent (meshes/generate.sh family makes it), left out\n", kNames[i], mesh);
      continue;
    }
    fclose(mf);
    char* sc = scene[*npart];
    snprintf(sc, 1100, "%s/cofem_bench_fe_mbs_%d_%s.json", tmp && tmp[0] ? tmp : "/tmp", (int)getpid(), kNames[i]);
    FILE* out = fopen(sc, "wx"); /* a new file of ours, never one that is there */
    if (!out) {
      printf("  %s: cannot create %s: %s, left out\n", kNames[i], sc, strerror(errno));
      continue;
    }
    fprintf(out, "%.*s\"%s\"%s", (int)(at - tmpl), tmpl, mesh, at + strlen(key));
    fclose(out);
    Part* p = &part[(*npart)++];
    *p = (Part){kNames[i], sc, "load", 1, {0, 1, 0}};
    double q[4] = {1, 0, 0, 0};
    if (hang_pose(p, q) < 0) {
      printf("  %s: %s, left out\n", kNames[i], cf_last_error());
      continue;
    }
    for (int k = 0; k < 5; k++) {
      Variant* v = &fam[nv];
      memset(v, 0, sizeof *v);
      snprintf(v->part, sizeof v->part, "%s", kNames[i]);
      snprintf(v->name, sizeof v->name, "%s", kVariant[k]);
      v->kind = kKinds[k], v->dt = dt;
      v->precond = CF_PRECOND_ROTATED_CHOLESKY;
      v->integrator = k == 1 ? CF_INTEGRATOR_GENERALIZED_ALPHA : CF_INTEGRATOR_BACKWARD_EULER;
      int st = v->kind == KIND_FE ? setup_fe(v, p) : setup_mbs_json(v, p, q);
      double c0 = cpu_time();
      if (st >= 0) run_round(v, 2, 0); /* the first step's one-off costs (factors at rest) included */
      double est = (cpu_time() - c0) / 2 * steps * (repeat + 1);
      printf("  %s %s: %d nodes, %d tets, %d coordinates, setup %.1f s, est. %.0f s of rounds%s%s\n", kNames[i],
             v->name, v->nnode, v->ntet, v->nq, v->t_setup, est, v->failed ? ": failed: " : "", v->failed ? v->err : "");
      fflush(stdout);
      if (!v->failed && est > budget) {
        printf("    left out (over the budget; --family-budget)\n");
        release(v);
        continue;
      }
      nv++;
    }
  }
  return nv;
}

/* least-squares slope of log y against log x over points [i0, n) */
static double fit_exponent(const double* x, const double* y, int i0, int n, double* coef) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  int m = n - i0;
  for (int i = i0; i < n; i++) {
    double lx = log(x[i]), ly = log(y[i]);
    sx += lx, sy += ly, sxx += lx * lx, sxy += lx * ly;
  }
  double b = (m * sxy - sx * sy) / (m * sxx - sx * sx);
  if (coef) *coef = exp((sy - b * sx) / m);
  return b;
}

static const char* kUsage =
    "usage: cofem_bench_fe_mbs [--steps N] [--repeat R] [--dt DT]... [--growth-steps N] [--growth-max-nodes N]\n"
    "                          [--threads T] [--label NAME] [--quick] [--family [--family-steps N] [--family-budget S]]\n"
    "       cofem_bench_fe_mbs --pcg [--steps N] [--repeat R] [--dt DT] [--threads T] [--label NAME]\n";

/* --pcg: the corotational body with "factor": "pcg" (the part's matrix by the PCG, no factor) on
 * the lug and the hinge at dt, against the exact factor in the same process: block Jacobi, the
 * rotated Cholesky and AMG, each with the warm start of its solves (mbs_fe.c z_guess, y_solve) and
 * with cold starts, and block Jacobi and AMG on the GPU ("backend": "cuda") when a device is there. ms per step
 * (CPU time, and wall time: the GPU's work is not the process's CPU time), Newton iterations and
 * PCG iterations per step, of them the interface columns'. With --label: pcg.csv. */
static int run_pcg_section(double dt, int steps, int repeat, const char* label) {
  static Variant var[2 * 11];
  int nv = 0;
  char why[256];
  const int gpu = cf_cuda_available(why, sizeof why);
  if (!gpu) printf("GPU variants left out: %s\n", why);
  static const struct { const char* name; const char* pre; int cold, cuda; } kPcg[] = {
      {"pcg_bj", "block_jacobi", 0, 0}, {"pcg_bj_cold", "block_jacobi", 1, 0},
      {"pcg_rc", "rotated_cholesky", 0, 0}, {"pcg_rc_cold", "rotated_cholesky", 1, 0},
      {"pcg_amg", "amg", 0, 0}, {"pcg_amg_cold", "amg", 1, 0},
      {"pcg_cuda", "block_jacobi", 0, 1}, {"pcg_cuda_cold", "block_jacobi", 1, 1},
      {"pcg_cuda_amg", "amg", 0, 1}, {"pcg_cuda_amg_cold", "amg", 1, 1}};
  for (int p = 0; p < NPART; p++) {
    double q[4] = {1, 0, 0, 0};
    if (hang_pose(&kParts[p], q) < 0) return fprintf(stderr, "%s: %s\n", kParts[p].name, cf_last_error()), 1;
    for (int j = -1; j < 10; j++) {
      if (j >= 0 && kPcg[j].cuda && !gpu) continue;
      Variant* v = &var[nv++];
      memset(v, 0, sizeof *v);
      snprintf(v->part, sizeof v->part, "%s", kParts[p].name);
      v->dt = dt;
      if (j < 0) {
        v->kind = KIND_COROT, snprintf(v->name, sizeof v->name, "corotational");
      } else {
        v->kind = KIND_COROT_PCG, v->pcg_pre = kPcg[j].pre, v->pcg_cold = kPcg[j].cold, v->pcg_cuda = kPcg[j].cuda;
        snprintf(v->name, sizeof v->name, "%s", kPcg[j].name);
      }
      if (setup_mbs_json(v, &kParts[p], q) < 0) printf("%s %s: setup failed: %s\n", v->part, v->name, v->err);
    }
  }
  run_all(var, nv, steps, repeat);
  FILE* f = NULL;
  char path[700];
  if (label && !(f = open_results_csv(label, "pcg.csv", path, sizeof path))) return 1;
  if (f) fprintf(f, "part,variant,dt,nodes,steps,rounds,cpu_ms_per_step,wall_ms_per_step,newton_per_step,pcg_per_step,"
                    "pcg_interface_per_step,x_exact_wall\n");
  for (int p = 0; p < NPART; p++) {
    const Variant* ex = find(var, nv, kParts[p].name, dt, "corotational");
    printf("\n%s hung at its pin, dt %g s, %d steps per round, %d rounds: \"factor\": \"pcg\" against the exact factor\n",
           kParts[p].name, dt, steps, repeat);
    printf("| variant | ms/step CPU | ms/step wall | x exact (wall) | Newton/step | PCG/step | of them interface |\n");
    printf("|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < nv; i++) {
      const Variant* v = &var[i];
      if (strcmp(v->part, kParts[p].name)) continue;
      if (v->failed || !v->nrep) {
        printf("| %s | failed: %s |\n", v->name, v->err);
        continue;
      }
      double cpu = 1e3 * v->best_cpu / steps, wall = 1e3 * v->best_wall / steps;
      double rel = ex && ex->nrep ? v->best_wall / ex->best_wall : NAN;
      printf("| %s | %.2f | %.2f | %.2f | %.2f | %.0f | %.0f |\n", v->name, cpu, wall, rel, v->iters, v->pcg_it, v->pcg_z);
      if (f)
        fprintf(f, "%s,%s,%g,%d,%d,%d,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g\n", v->part, v->name, dt, v->nnode, steps, v->nrep, cpu,
                wall, v->iters, v->pcg_it, v->pcg_z, rel);
    }
  }
  if (f) {
    fclose(f);
    printf("wrote %s\n", path);
  }
  for (int i = 0; i < nv; i++) release(&var[i]);
  return 0;
}

int main(int argc, char** argv) {
  int steps = 100, repeat = 3, growth_steps = 20, growth_max = 5000, threads = 0, quick = 0, ndt = 0;
  int family = 0, family_steps = 10, pcg = 0;
  double family_budget = 300;
  double dts[MAX_DT];
  const char* label = NULL;
  for (int i = 1; i < argc; i++) {
    const char* a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : NULL;
    int bad = 0;
    if (!strcmp(a, "--quick")) {
      quick = 1;
      continue;
    }
    if (!strcmp(a, "--family")) {
      family = 1;
      continue;
    }
    if (!strcmp(a, "--pcg")) {
      pcg = 1;
      continue;
    }
    int st = CF_OK; /* strict values (cf_parse_*, cofem/status.h) */
    if (!v) bad = 1;
    else if (!strcmp(a, "--steps")) st = cf_parse_int(a, v, 1, 1000000, &steps);
    else if (!strcmp(a, "--repeat")) st = cf_parse_int(a, v, 1, 64, &repeat);
    else if (!strcmp(a, "--growth-steps")) st = cf_parse_int(a, v, 1, 1000000, &growth_steps);
    else if (!strcmp(a, "--growth-max-nodes")) st = cf_parse_int(a, v, 0, 10000000, &growth_max);
    else if (!strcmp(a, "--threads")) st = cf_parse_int(a, v, 1, 1024, &threads);
    else if (!strcmp(a, "--family-steps")) st = cf_parse_int(a, v, 1, 1000000, &family_steps);
    else if (!strcmp(a, "--family-budget")) st = cf_parse_double(a, v, 1, 1e6, &family_budget);
    else if (!strcmp(a, "--label")) label = v;
    else if (!strcmp(a, "--dt")) {
      if (ndt == MAX_DT) {
        fprintf(stderr, "cofem_bench_fe_mbs: at most %d --dt\n", MAX_DT);
        return 2;
      }
      st = cf_parse_double(a, v, 1e-7, 1, &dts[ndt++]);
    } else bad = 1;
    if (bad) {
      fputs(kUsage, stderr);
      return 2;
    }
    if (st < 0) {
      fprintf(stderr, "cofem_bench_fe_mbs: %s\n", cf_last_error());
      return 2;
    }
    i++;
  }
  if (quick) { /* smoke run: a few steps, one round, the two smallest bars */
    steps = steps < 5 ? steps : 5, repeat = 1, growth_steps = 3;
    if (growth_max > 600) growth_max = 600;
  }
  if (ndt == 0) dts[0] = 0.01, dts[1] = 0.001, ndt = 2;
  if (threads > 0) omp_set_num_threads(threads);
  if (pcg) return run_pcg_section(ndt ? dts[0] : 0.01, steps, repeat, label);
  const int modes[3] = {6, 12, 24};
  /* CHOLMOD's supernodal factorization (the lumped body's leading matrix, the rotated-Cholesky
   * factor) asks OpenMP for a fixed number of threads whatever omp_set_num_threads / OMP_NUM_THREADS
   * say (Debian's SuiteSparse 5: 4); only OMP_THREAD_LIMIT caps it (read when the program starts) */
  if (threads == 1 && omp_get_thread_limit() > 1)
    printf("note: --threads 1 without OMP_THREAD_LIMIT=1: CHOLMOD's supernodal factorization still runs several "
           "OpenMP threads (their CPU time counts in the figures)\n");

  printf("FE bodies in mechanisms: %d steps per round, %d interleaved rounds, %d OpenMP thread(s), thread limit %d; ms per "
         "step = process CPU time of the fastest round / steps\n", steps, repeat, omp_get_max_threads(), omp_get_thread_limit());
  static Variant var[MAX_VAR];
  int nv = 0;
  for (int p = 0; p < NPART; p++) {
    double q[4] = {1, 0, 0, 0};
    if (hang_pose(&kParts[p], q) < 0) {
      fprintf(stderr, "%s: %s\n", kParts[p].name, cf_last_error());
      return 1;
    }
    for (int k = 0; k < ndt; k++) {
      Variant* first = &var[nv];
      for (int j = 0; j < 9; j++) {
        Variant* v = &var[nv++];
        memset(v, 0, sizeof *v);
        snprintf(v->part, sizeof v->part, "%s", kParts[p].name);
        v->dt = dts[k];
        if (j == 0) v->kind = KIND_LUMPED, snprintf(v->name, sizeof v->name, "lumped");
        else if (j == 1) v->kind = KIND_COROT, snprintf(v->name, sizeof v->name, "corotational");
        else if (j == 2) v->kind = KIND_COROT_ROTATED, snprintf(v->name, sizeof v->name, "corot_rotated");
        else if (j <= 5) v->kind = KIND_MODAL, v->modes = modes[j - 3], snprintf(v->name, sizeof v->name, "modal%d", v->modes);
        else {
          v->kind = KIND_FE;
          v->precond = j == 7 ? CF_PRECOND_BLOCK_JACOBI : CF_PRECOND_ROTATED_CHOLESKY;
          v->integrator = j == 8 ? CF_INTEGRATOR_GENERALIZED_ALPHA : CF_INTEGRATOR_BACKWARD_EULER;
          snprintf(v->name, sizeof v->name, j == 6 ? "fe_rc" : j == 7 ? "fe_bj" : "fe_ga");
        }
        if (v->kind == KIND_FE) setup_fe(v, &kParts[p]);
        else setup_mbs_json(v, &kParts[p], q);
      }
      printf("%s, dt %g s: built (lumped: %d nodes, %d coordinates, %d equations, %d matrix nonzeros, released %.4f rad off "
             "the vertical)\n", kParts[p].name, dts[k], first->nnode, first->nq, first->ncon, first->nnz, first->theta_check);
      fflush(stdout);
    }
  }
  double t_run = cf_wall_time();
  run_all(var, nv, steps, repeat);
  printf("parts: %.1f s of rounds\n", cf_wall_time() - t_run);

  /* ---- report ---- */
  for (int p = 0; p < NPART; p++)
    for (int k = 0; k < ndt; k++) print_part_table(var, nv, kParts[p].name, dts[k], steps);
  fflush(stdout);

  /* ---- growth of the lumped path with the node count ---- */
  static Variant box[16];
  int nb = 0;
  double budget = quick ? 30 : 150; /* s of rounds one bar may take; larger bars are left out beyond it */
  printf("\nlumped growth: steel bar 1.0 x 0.2 x 0.2 m (5n x n x n cubic cells), spherical joint at the end face, dt %g s, "
         "%d steps per round, %d rounds\n", dts[0], growth_steps, repeat);
  for (int n = 3; n <= 15 && nb < 16; n++) {
    int nodes = (5 * n + 1) * (n + 1) * (n + 1);
    if (nodes > growth_max) break;
    Variant* v = &box[nb];
    memset(v, 0, sizeof *v);
    snprintf(v->part, sizeof v->part, "bar%d", nodes);
    snprintf(v->name, sizeof v->name, "lumped");
    v->kind = KIND_BOX, v->dt = dts[0], v->box_n = n;
    if (setup_box(v, n) < 0) break;
    /* estimate from a short untimed run whether the rounds fit the budget */
    double c0 = cpu_time();
    run_round(v, 3, 0);
    double est = (cpu_time() - c0) / 3 * growth_steps * repeat;
    if (v->failed) break;
    printf("  %d nodes, %d tets: %d coordinates, %d matrix nonzeros, setup %.2f s, est. %.0f s of rounds\n", v->nnode,
           v->ntet, v->nq, v->nnz, v->t_setup, est);
    fflush(stdout);
    nb++;
    if (est > budget) break; /* this one is run, larger ones are not */
  }
  t_run = cf_wall_time();
  run_all(box, nb, growth_steps, repeat);
  printf("growth: %.1f s of rounds\n", cf_wall_time() - t_run);
  double gx[16], gy[16], gs[CF_MBS_STAGE_COUNT][16];
  int ng = 0;
  printf("stages: ms per step, wall clock scaled by the round's CPU / wall time\n");
  printf("| nodes | tets | coordinates | matrix nnz | ms/step | real time | Newton/step | factor | assemble | forces | solve | constraints |\n");
  printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (int i = 0; i < nb; i++) {
    const Variant* v = &box[i];
    if (v->failed || !v->nrep) {
      printf("| %d | failed: %s |\n", v->nnode, v->err);
      continue;
    }
    /* stages (wall clock) scaled to the round's CPU time: with one thread the time the stepping
     * thread was descheduled is spread over the stages in proportion to their length */
    double ms = ms_step(v, growth_steps), f = 1e3 / growth_steps * v->best_cpu / v->best_wall;
    printf("| %d | %d | %d | %d | %.3f | %.2fx | %.2f | %.3f | %.3f | %.3f | %.3f | %.3f |\n", v->nnode, v->ntet, v->nq,
           v->nnz, ms, v->dt * 1e3 / ms, v->iters, f * v->stage[CF_MBS_STAGE_FACTOR], f * v->stage[CF_MBS_STAGE_ASSEMBLE],
           f * v->stage[CF_MBS_STAGE_FORCES], f * v->stage[CF_MBS_STAGE_SOLVE], f * v->stage[CF_MBS_STAGE_CONSTRAINTS]);
    gx[ng] = v->nnode, gy[ng] = ms;
    for (int s = 0; s < CF_MBS_STAGE_COUNT; s++) gs[s][ng] = f * v->stage[s] > 0 ? f * v->stage[s] : 1e-9;
    ng++;
  }
  double expo = NAN, expo_hi = NAN, cfit = NAN;
  if (ng >= 2) {
    expo = fit_exponent(gx, gy, 0, ng, &cfit);
    printf("fitted: ms/step = %.4g * nodes^%.3f over %d bars (%g .. %g nodes)\n", cfit, expo, ng, gx[0], gx[ng - 1]);
    if (ng >= 4) {
      expo_hi = fit_exponent(gx, gy, ng / 2, ng, NULL);
      printf("        exponent over the larger half (%g .. %g nodes): %.3f\n", gx[ng / 2], gx[ng - 1], expo_hi);
    }
    printf("        per stage: factor %.3f, assemble %.3f, forces %.3f, solve %.3f, constraints %.3f\n",
           fit_exponent(gx, gs[CF_MBS_STAGE_FACTOR], 0, ng, NULL), fit_exponent(gx, gs[CF_MBS_STAGE_ASSEMBLE], 0, ng, NULL),
           fit_exponent(gx, gs[CF_MBS_STAGE_FORCES], 0, ng, NULL), fit_exponent(gx, gs[CF_MBS_STAGE_SOLVE], 0, ng, NULL),
           fit_exponent(gx, gs[CF_MBS_STAGE_CONSTRAINTS], 0, ng, NULL));
  }

  /* ---- the lug family (--family): the hung lug on the refined meshes of meshes/cache ---- */
  static Variant fam[16];
  static char fam_scene[4][1100];
  static Part fam_part[4];
  int nfam = 0, nfp = 0;
  if (family) nfam = setup_family(fam, fam_part, fam_scene, &nfp, dts[0], family_steps, repeat, family_budget);
  if (nfam > 0) {
    t_run = cf_wall_time();
    run_all(fam, nfam, family_steps, repeat);
    printf("family: %.1f s of rounds\n", cf_wall_time() - t_run);
    for (int p = 0; p < nfp; p++) print_part_table(fam, nfam, fam_part[p].name, dts[0], family_steps);
  }
  fflush(stdout);

  int rc_exit = 0;
  if (label) {
    char path[700];
    FILE* f = open_results_csv(label, "results.csv", path, sizeof path);
    if (!f) return 1;
    fprintf(f, "section,part,variant,dt,nodes,tets,coordinates,equations,matrix_nnz,steps,rounds,setup_s,reduction_s,"
               "cpu_ms_per_step,wall_ms_per_step_of_fastest,cpu_ms_per_step_median,wall_ms_per_step_median,realtime_ratio,iters_per_step,"
               "newton_max,vs_fe_rc,vs_fe_bj,mbs_constraints_ms,mbs_forces_ms,mbs_assemble_ms,mbs_factor_ms,mbs_solve_ms,"
               "fe_polar_ms,fe_assemble_ms,fe_pcg_ms,fe_update_ms,vs_fe_ga,fe_newton_per_step\n");
    for (int i = 0; i < nv; i++) {
      const Variant* v = &var[i];
      if (v->failed || !v->nrep) continue;
      csv_row(f, "part", v, steps, find(var, nv, v->part, v->dt, "fe_rc"), find(var, nv, v->part, v->dt, "fe_bj"),
              find(var, nv, v->part, v->dt, "fe_ga"));
    }
    for (int i = 0; i < nb; i++)
      if (!box[i].failed && box[i].nrep) csv_row(f, "growth", &box[i], growth_steps, NULL, NULL, NULL);
    for (int i = 0; i < nfam; i++)
      if (!fam[i].failed && fam[i].nrep)
        csv_row(f, "family", &fam[i], family_steps, find(fam, nfam, fam[i].part, fam[i].dt, "fe_rc"), NULL,
                find(fam, nfam, fam[i].part, fam[i].dt, "fe_ga"));
    fclose(f);
    printf("wrote %s\n", path);
  }
  for (int i = 0; i < nv; i++) rc_exit |= var[i].failed, release(&var[i]);
  for (int i = 0; i < nb; i++) release(&box[i]);
  for (int i = 0; i < nfam; i++) rc_exit |= fam[i].failed, release(&fam[i]);
  for (int p = 0; p < nfp; p++) remove(fam_scene[p]);
  return rc_exit ? 1 : 0;
}
