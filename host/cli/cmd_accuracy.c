#define _POSIX_C_SOURCE 200809L
/* cofem accuracy: cofem against CalculiX (ccx) on the same mesh, supports and nodal loads
 * (issue 6; the report is docs/accuracy.md).
 *
 *   cofem accuracy [SCENE ...] [--cases lug,hinge,cantilever,cantilever_coarse,cantilever_box,cantilever_slender,strip,lug_inplane] [--out DIR]
 *                  [--docs DIR] [--no-docs] [--no-dynamics] [--dt-ref-only] [--reuse-ccx] [--large-steps N]
 *                  [--no-plots] [--check]
 * --dt-ref-only: the step responses at T1/100 only (a partial run); --reuse-ccx: CalculiX jobs
 * whose deck equals that of their last successful run in the same --out are not run again.
 *
 * For every case (the built-in ones, or the scenes named on the command line) it writes the
 * CalculiX decks (C3D4 on the same mesh: *STATIC NLGEOM in fixed increments, the same without
 * NLGEOM, the same with a neo-Hookean material as a finite-strain diagnostic, *FREQUENCY, and for
 * the dynamic cases *DYNAMIC NLGEOM under a suddenly applied load), runs ccx, parses its .dat,
 * runs cofem's co-rotational and linear statics on the same load steps, cofem's modal analysis
 * (three mass matrices), and cofem's dynamics (backward Euler, linearised Newmark and
 * generalized-alpha with Newton iterations) at the same time steps, for the cantilever also at the
 * full load (P L^2/EI = 5: large rotations; <case>_large_dynamic.csv); then writes per case <case>_static.csv, <case>_modes.csv, <case>_dynamic.csv, errors.md
 * (the tables) and, unless --no-plots, the PNG plots (tools/plot_accuracy.py). A full run (no
 * --cases, no scenes, dynamics on) also puts the tables into DIR/accuracy.md (default docs/)
 * between its generated-section markers and the plots into DIR/img/accuracy_*.png; a partial run
 * does so only with --docs.
 *
 * --check (the test): lug and hinge only, statics and eigenfrequencies, no plots or docs; exits 1
 * unless co-rotational statics is within 2% of CalculiX NLGEOM (of |u_ref|) where linear FEM is
 * off by more than 10%, and the first six eigenfrequencies (with CalculiX's C3D4 mass matrix)
 * agree within 0.5%. Exit 77 when ccx is missing. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cofem/ccx.h"
#include "cofem/cofem.h"
#include "cofem/modal.h"
#include "fem/fem_element.h" /* the quadratic element's shape gradients (max_strain) */

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif
#ifndef COFEM_SOURCE_DIR
#define COFEM_SOURCE_DIR "."
#endif

/* ---- the built-in cases ------------------------------------------------------------------------ */
typedef struct CaseSpec {
  const char* name;
  const char* scene;        /* relative to the source tree */
  const char* title;
  int increments;           /* load steps of both static solvers */
  int check;                /* the 2% / 10% / 0.5% bounds apply (lug, hinge: the paper's parts) */
  int dynamics;             /* step response against CalculiX *DYNAMIC */
  double dyn_fraction;      /* the suddenly applied load, as a fraction of the full static load */
  int elastica;             /* cantilever along +x, load along -z: inextensible elastica too */
  double torque;            /* > 0: a torque about +x [N m] on set torque_set instead of the loads */
  const char* torque_set;
  int probe_edge;           /* probe = the nodes of torque_set at its largest y (a tip edge) */
  int modes;                /* eigenfrequencies against *FREQUENCY (and the dynamics need them) */
  double dyn_large;         /* > 0: a second step response at this load fraction (large rotations) */
} CaseSpec;

static const CaseSpec BUILTIN[] = {
    {"lug", "scenes/accuracy/lug.json", "lug (paper 003, Sec. 5), pulled through its thickness at the eye", 10, 1, 1,
     0.5, 0, 0, NULL, 0, 1, 0},
    {"hinge", "scenes/accuracy/hinge.json", "sliding-door hinge (paper 003, Sec. 4, Fig. 4), roller axle pushed down",
     10, 1, 0, 0, 0, 0, NULL, 0, 1, 0},
    {"cantilever", "scenes/accuracy/cantilever.json", "cantilever 1 x 0.1 x 0.1 m, tip load up to P L^2/(E I) = 5",
     20, 0, 1, 0.5, 1, 0, NULL, 0, 1, 1.0},
    {"cantilever_coarse", "scenes/accuracy/cantilever_coarse.json",
     "the same cantilever on beam_coarse.msh (1570 tets): the step responses with CalculiX in minutes", 20, 0, 1, 0.5,
     1, 0, NULL, 0, 1, 1.0},
    {"cantilever_box", "scenes/accuracy/cantilever_box.json",
     "the same cantilever on a 10x2x2 box (240 tets): the P L^2/EI = 5 step with a CalculiX reference in minutes", 20,
     0, 1, 0.5, 1, 0, NULL, 0, 1, 1.0},
    {"cantilever_slender", "scenes/accuracy/cantilever_slender.json",
     "slender cantilever 1 x 0.02 x 0.02 m (L/h = 50, 2400 tets): P L^2/EI = 5 at small strains", 20, 0, 1, 0.5, 1, 0,
     NULL, 0, 1, 1.0},
    {"strip", "scenes/accuracy/strip.json", "strip 0.5 x 0.05 x 0.005 m twisted by a torque at its tip", 20, 0, 0,
     0, 0, 3000.0, "tip", 1, 1, 0},
    /* quadratic tetrahedra against C3D10 on the same meshes (issue 30): statics and frequencies */
    {"lug_o2", "scenes/accuracy/lug_o2.json",
     "the lug on quadratic tetrahedra (lug_o2.msh, C3D10), the same pull: softer than the linear mesh, so larger strains",
     10, 1, 1, 0.5, 0, 0, NULL, 0, 1, 0},
    {"hinge_o2", "scenes/accuracy/hinge_o2.json", "the hinge on quadratic tetrahedra (hinge_o2.msh, C3D10), the same push",
     10, 1, 0, 0, 0, 0, NULL, 0, 1, 0},
    {"cantilever_o2", "scenes/accuracy/cantilever_o2.json",
     "the cantilever on quadratic tetrahedra (beam_o2.msh, C3D10), P L^2/(E I) = 5", 20, 0, 0, 0, 1, 0, NULL, 0, 1, 0},
    {"lug_inplane", "scenes/accuracy/lug_inplane.json",
     "lug pulled sideways in its plane: large rotations only at large strains (a limit, not a check)", 10, 0, 0, 0, 0,
     0, NULL, 0, 0, 0},
};
enum { NBUILTIN = sizeof BUILTIN / sizeof BUILTIN[0] };
static const CaseSpec GENERIC = {"", "", "", 10, 0, 0, 0.5, 0, 0, NULL, 0, 1, 0};

enum { NMODES = 10, NCHECK_MODES = 6 };
static const double CHECK_CR = 0.02, CHECK_LIN = 0.10, CHECK_FREQ = 0.005;

/* ---- small utilities --------------------------------------------------------------------------- */
static double norm3(const double* a) { return sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]); }
static double dist3(const double* a, const double* b) {
  double d[3] = {a[0] - b[0], a[1] - b[1], a[2] - b[2]};
  return norm3(d);
}

/* ---- CalculiX .dat parsing --------------------------------------------------------------------- */
typedef struct DatBlock {
  char set[CF_NAME_MAX];
  double time;
  int n, cap;
  int* id;
  double* u; /* [3n] */
} DatBlock;

typedef struct DatFile {
  int n, cap;
  DatBlock* b;
} DatFile;

static void dat_free(DatFile* f) {
  for (int i = 0; i < f->n; i++) { free(f->b[i].id); free(f->b[i].u); }
  free(f->b);
  memset(f, 0, sizeof *f);
}

/* every "displacements (vx,vy,vz) for set S and time T" block */
static int dat_read(const char* path, DatFile* out) {
  memset(out, 0, sizeof *out);
  FILE* f = fopen(path, "r");
  if (!f) return cf_error(CF_ERR_IO, "%s: cannot read the CalculiX results", path);
  char line[1024];
  DatBlock* cur = NULL;
  while (fgets(line, sizeof line, f)) {
    const char* p = strstr(line, "displacements (vx,vy,vz) for set ");
    if (p) {
      if (out->n == out->cap) {
        out->cap = out->cap ? 2 * out->cap : 64;
        out->b = realloc(out->b, sizeof(DatBlock) * out->cap);
      }
      cur = &out->b[out->n++];
      memset(cur, 0, sizeof *cur);
      sscanf(p + strlen("displacements (vx,vy,vz) for set "), "%63s", cur->set);
      const char* t = strstr(p, " time ");
      cur->time = t ? atof(t + 6) : NAN;
      continue;
    }
    if (!cur) continue;
    int id;
    double a, b, c;
    if (sscanf(line, "%d %lf %lf %lf", &id, &a, &b, &c) == 4) {
      if (cur->n == cur->cap) {
        cur->cap = cur->cap ? 2 * cur->cap : 256;
        cur->id = realloc(cur->id, sizeof(int) * cur->cap);
        cur->u = realloc(cur->u, sizeof(double) * 3 * cur->cap);
      }
      cur->id[cur->n] = id;
      cur->u[3 * cur->n] = a; cur->u[3 * cur->n + 1] = b; cur->u[3 * cur->n + 2] = c;
      cur->n++;
    } else if (cur->n > 0 && strspn(line, " \t\r\n") != strlen(line)) {
      cur = NULL;
    }
  }
  fclose(f);
  return CF_OK;
}

/* ---- a case ------------------------------------------------------------------------------------ */
typedef struct Case {
  CaseSpec spec;
  char name[CF_NAME_MAX];
  char dir[CF_PATH_MAX];    /* work directory for the decks and ccx output */
  cfScene s;
  int* nid;                 /* [nnode] node id as written into the .inp */
  int* idx;                 /* [max id + 1] node index of an id, -1 if none */
  int max_id;
  cfNodeSet probe;          /* (owned) */
  cfNodeSet twist;          /* strip: the tip nodes whose rotation about x is the twist (owned) */
  double* f;                /* [ndof] full static load (nodal forces, gravity included) */
  double load;              /* the load's size for the plots: |sum f| [N] or the torque [N m] */
  const char* load_label;
  /* statics, at the ccx load steps */
  int nstep;
  double* lam;              /* [nstep] */
  double (*u_ccx)[3], (*u_ccxlin)[3], (*u_cr)[3], (*u_lin)[3], (*u_el)[3], (*u_nh)[3];
  int have_nh;              /* CalculiX neo-Hooke run (the finite-strain diagnostic) */
  double strain_max;        /* largest principal Green-Lagrange strain at full load (CalculiX field) */
  double *tw_ccx, *tw_cr, *tw_lin;  /* twist angles [rad] (strip) */
  double field_err_cr, field_err_lin;
  int static_ok;
  /* modes */
  int nmodes;
  double hz_ccx[NMODES], hz_cf[NMODES], hz_cf1[NMODES], hz_cf_lumped[NMODES];
  int modes_ok;
  double T1;                /* first period [s] (cofem, consistent mass) */
  int npe;                  /* 4 (C3D4) or 10 (C3D10) */
  /* errors */
  double ref_mag, e_cr_full, e_cr_max, e_lin_full, e_lin_max, e_lin_consistency, e_nh_full;
  double el_ccx_full, el_ccx_max, el_cr_full, el_cr_max, el_lin_full; /* against the elastica */
  double beam_ratio;        /* linear FE tip deflection / Timoshenko beam theory (cantilever) */
  double elastica_a;        /* P L^2 / (E I) at full load (cantilever) */
  double seconds_ccx, seconds_cf;
} Case;

static void case_free(Case* c) {
  free(c->nid); free(c->idx); free(c->probe.nodes); free(c->twist.nodes); free(c->f);
  free(c->lam); free(c->u_ccx); free(c->u_ccxlin); free(c->u_cr); free(c->u_lin); free(c->u_el); free(c->u_nh);
  free(c->tw_ccx); free(c->tw_cr); free(c->tw_lin);
  cf_scene_free(&c->s);
  memset(c, 0, sizeof *c);
}

/* mean displacement of a set from a full displacement field u [3 nnode] */
static void set_mean(const cfNodeSet* set, const double* u, double* out) {
  out[0] = out[1] = out[2] = 0;
  for (int i = 0; i < set->count; i++)
    for (int k = 0; k < 3; k++) out[k] += u[3 * set->nodes[i] + k];
  for (int k = 0; k < 3; k++) out[k] /= set->count;
}

/* rotation about x of a set (least squares in the y-z plane about the centroids) from u */
static double set_twist(const cfMesh* mesh, const cfNodeSet* set, const double* u) {
  double c0[3] = {0, 0, 0}, c1[3] = {0, 0, 0};
  for (int i = 0; i < set->count; i++)
    for (int k = 0; k < 3; k++) {
      int d = 3 * set->nodes[i] + k;
      c0[k] += mesh->X[d] / set->count;
      c1[k] += (mesh->X[d] + u[d]) / set->count;
    }
  double sn = 0, cs = 0;
  for (int i = 0; i < set->count; i++) {
    int d = 3 * set->nodes[i];
    double y0 = mesh->X[d + 1] - c0[1], z0 = mesh->X[d + 2] - c0[2];
    double y1 = mesh->X[d + 1] + u[d + 1] - c1[1], z1 = mesh->X[d + 2] + u[d + 2] - c1[2];
    sn += y0 * z1 - z0 * y1;
    cs += y0 * y1 + z0 * z1;
  }
  return atan2(sn, cs);
}

/* full displacement field of a ccx block (nodes not in the block: 0); -1 if it misses nodes */
static int block_field(const Case* c, const DatBlock* b, double* u) {
  memset(u, 0, sizeof(double) * 3 * c->s.mesh.nnode);
  int found = 0;
  for (int i = 0; i < b->n; i++) {
    int id = b->id[i];
    if (id < 0 || id > c->max_id || c->idx[id] < 0) continue;
    memcpy(u + 3 * c->idx[id], b->u + 3 * i, sizeof(double) * 3);
    found++;
  }
  return found == c->s.mesh.nnode ? 0 : -1;
}

/* ---- inextensible elastica: clamped at s = 0, dead load P along -z at s = L -------------------
 * theta(s) the slope (down positive), EI theta' = P (x_L - x(s)): theta'' = -a cos(theta) on
 * s in [0, 1] with a = P L^2 / (E I), theta(0) = 0, theta'(1) = 0; shooting on theta'(0). */
static void elastica_shoot(double a, double k0, double* k1, double* x1, double* z1) {
  const int N = 2000;
  const double h = 1.0 / N;
  double th = 0, k = k0, x = 0, z = 0;
  for (int i = 0; i < N; i++) {
    /* RK4 on (theta, kappa, x, z) */
    double t1 = k, q1 = -a * cos(th), x1_ = cos(th), z1_ = -sin(th);
    double t2 = k + 0.5 * h * q1, q2 = -a * cos(th + 0.5 * h * t1), x2_ = cos(th + 0.5 * h * t1), z2_ = -sin(th + 0.5 * h * t1);
    double t3 = k + 0.5 * h * q2, q3 = -a * cos(th + 0.5 * h * t2), x3_ = cos(th + 0.5 * h * t2), z3_ = -sin(th + 0.5 * h * t2);
    double t4 = k + h * q3, q4 = -a * cos(th + h * t3), x4_ = cos(th + h * t3), z4_ = -sin(th + h * t3);
    th += h / 6 * (t1 + 2 * t2 + 2 * t3 + t4);
    k += h / 6 * (q1 + 2 * q2 + 2 * q3 + q4);
    x += h / 6 * (x1_ + 2 * x2_ + 2 * x3_ + x4_);
    z += h / 6 * (z1_ + 2 * z2_ + 2 * z3_ + z4_);
  }
  *k1 = k;
  *x1 = x;
  *z1 = z;
}

/* tip displacement (u_x, u_z) / L of the elastica at a = P L^2 / (E I) */
static void elastica(double a, double* ux, double* uz) {
  if (a <= 0) { *ux = *uz = 0; return; }
  double lo = 0, hi = a, k1, x1, z1;
  for (int it = 0; it < 80; it++) {
    double mid = 0.5 * (lo + hi);
    elastica_shoot(a, mid, &k1, &x1, &z1);
    if (k1 > 0) hi = mid; else lo = mid;
  }
  elastica_shoot(a, 0.5 * (lo + hi), &k1, &x1, &z1);
  *ux = x1 - 1.0;
  *uz = z1;
}

/* Area weights of a set (cf_set_area_weights, the same as the scene loads use) scattered into
 * w[3 n] (the x slot of each node). */
static void area_weights(const cfMesh* mesh, const cfNodeSet* set, double* w) {
  unsigned char* in = calloc((size_t)mesh->nnode, 1);
  double* ws = malloc(sizeof(double) * (size_t)(set->count > 0 ? set->count : 1));
  if (in && ws) {
    cf_set_area_weights(mesh, set, ws, in);
    for (int i = 0; i < set->count; i++) w[3 * set->nodes[i]] = ws[i];
  }
  free(in), free(ws);
}

/* ---- case set-up -------------------------------------------------------------------------------- */
static int case_setup(Case* c, const CaseSpec* spec, const char* scene_path, const char* out_dir) {
  memset(c, 0, sizeof *c);
  c->spec = *spec;
  if (spec->name[0]) snprintf(c->name, sizeof c->name, "%s", spec->name);
  else {
    const char* base = strrchr(scene_path, '/');
    base = base ? base + 1 : scene_path;
    snprintf(c->name, sizeof c->name, "%.*s", (int)strcspn(base, "."), base);
  }
  int st = cf_scene_load(scene_path, &c->s);
  if (st < 0) return st;
  snprintf(c->dir, sizeof c->dir, "%s/%s", out_dir, c->name);
  if ((st = cf_make_dirs(c->dir)) < 0) return st;
  const cfMesh* mesh = &c->s.mesh;
  const int nn = mesh->nnode;
  c->npe = cf_mesh_npe(mesh);
  /* node ids as cf_mesh_write_inp writes them */
  int use_nid = mesh->node_id != NULL;
  for (int i = 0; use_nid && i < nn; i++) use_nid = mesh->node_id[i] > 0;
  c->nid = malloc(sizeof(int) * nn);
  c->max_id = 0;
  for (int i = 0; i < nn; i++) {
    c->nid[i] = use_nid ? mesh->node_id[i] : i + 1;
    if (c->nid[i] > c->max_id) c->max_id = c->nid[i];
  }
  c->idx = malloc(sizeof(int) * (c->max_id + 1));
  for (int i = 0; i <= c->max_id; i++) c->idx[i] = -1;
  for (int i = 0; i < nn; i++) c->idx[c->nid[i]] = i;

  /* the full load: every scene load at full value (as `cofem static`), gravity as nodal forces */
  c->f = calloc(3 * (size_t)nn, sizeof(double));
  cfScene tmp = c->s;
  for (int l = 0; l < tmp.nload; l++) tmp.load[l].t_stop = INFINITY, tmp.load[l].t_start = 0, tmp.load[l].ramp = 0;
  cf_scene_forces(&tmp, 0.0, 1.0, c->f);
  {
    cfModel* m;
    cfData* d;
    if ((st = cf_scene_build(&c->s, &m, &d)) < 0) return st;
    for (int n = 0; n < nn; n++)
      for (int k = 0; k < 3; k++) c->f[3 * n + k] += m->node_mass[n] * c->s.def.gravity[k];
    cf_data_free(d);
    cf_model_free(m);
  }
  double sum[3] = {0, 0, 0};
  for (int n = 0; n < nn; n++)
    for (int k = 0; k < 3; k++) sum[k] += c->f[3 * n + k];
  c->load = norm3(sum);
  c->load_label = "force [N]";

  if (spec->torque > 0) {
    /* a torque T about +x through the set's centroid: f_i = T w_i (e_x x r_i) / sum w_j |r_j|^2,
     * w_i the same area weights as the scene loads */
    const cfNodeSet* set = cf_mesh_find_nset(mesh, spec->torque_set);
    if (!set) return cf_error(CF_ERR_SCENE, "%s: no node set \"%s\" for the torque", scene_path, spec->torque_set);
    double* w = calloc(3 * (size_t)nn, sizeof(double));
    area_weights(mesh, set, w);
    double cy = 0, cz = 0, J = 0;
    for (int i = 0; i < set->count; i++) {
      int n = set->nodes[i];
      cy += w[3 * n] * mesh->X[3 * n + 1];
      cz += w[3 * n] * mesh->X[3 * n + 2];
    }
    for (int i = 0; i < set->count; i++) {
      int n = set->nodes[i];
      double ry = mesh->X[3 * n + 1] - cy, rz = mesh->X[3 * n + 2] - cz;
      J += w[3 * n] * (ry * ry + rz * rz);
    }
    memset(c->f, 0, sizeof(double) * 3 * nn);
    for (int i = 0; i < set->count; i++) {
      int n = set->nodes[i];
      double ry = mesh->X[3 * n + 1] - cy, rz = mesh->X[3 * n + 2] - cz;
      c->f[3 * n + 1] = -spec->torque * w[3 * n] * rz / J;
      c->f[3 * n + 2] = spec->torque * w[3 * n] * ry / J;
    }
    free(w);
    c->load = spec->torque;
    c->load_label = "torque [N m]";
    c->twist.count = set->count;
    c->twist.nodes = malloc(sizeof(int) * set->count);
    memcpy(c->twist.nodes, set->nodes, sizeof(int) * set->count);
    snprintf(c->twist.name, sizeof c->twist.name, "%s", set->name);
  }
  /* probe: the scene's first probe, or the edge of the torqued set at its largest y */
  const cfNodeSet* pset = NULL;
  if (spec->probe_edge && c->twist.count > 0) {
    double ymax = -INFINITY, ymin = INFINITY;
    for (int i = 0; i < c->twist.count; i++) {
      ymax = fmax(ymax, mesh->X[3 * c->twist.nodes[i] + 1]);
      ymin = fmin(ymin, mesh->X[3 * c->twist.nodes[i] + 1]);
    }
    c->probe.nodes = malloc(sizeof(int) * c->twist.count);
    for (int i = 0; i < c->twist.count; i++)
      if (mesh->X[3 * c->twist.nodes[i] + 1] > ymax - 1e-6 * (ymax - ymin)) c->probe.nodes[c->probe.count++] = c->twist.nodes[i];
    snprintf(c->probe.name, sizeof c->probe.name, "%s edge y = %g", c->twist.name, ymax);
  } else {
    if (c->s.nprobe > 0) pset = cf_mesh_find_nset(mesh, c->s.probe[0]);
    if (!pset) return cf_error(CF_ERR_SCENE, "%s: the accuracy harness needs an \"output.probes\" set", scene_path);
    c->probe.count = pset->count;
    c->probe.nodes = malloc(sizeof(int) * pset->count);
    memcpy(c->probe.nodes, pset->nodes, sizeof(int) * pset->count);
    snprintf(c->probe.name, sizeof c->probe.name, "%s", pset->name);
  }
  return CF_OK;
}

/* ---- CalculiX decks ---------------------------------------------------------------------------- */
static void write_nset(FILE* f, const char* name, const Case* c, const int* nodes, int count) {
  fprintf(f, "*NSET, NSET=%s\n", name);
  for (int j = 0; j < count; j++)
    fprintf(f, "%d%s", c->nid[nodes ? nodes[j] : j], (j % 16 == 15 || j == count - 1) ? "\n" : ", ");
}

/* The mesh for CalculiX. Not cf_mesh_write_inp: it prints coordinates with %.17g, and CalculiX
 * reads every number of a data line from at most 20 characters (-4.8985871965894143E-18 is 23:
 * "*ERROR reading *NODE"). %.12e is at most 19 characters and keeps 13 significant digits. */
static int write_mesh(const Case* c, const char* name, double scale) {
  const cfMesh* mesh = &c->s.mesh;
  char path[CF_PATH_MAX + 64];
  snprintf(path, sizeof path, "%s/%s", c->dir, name);
  FILE* f = fopen(path, "w");
  if (!f) return cf_error(CF_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
  int use_eid = mesh->elem_id != NULL;
  for (int e = 0; use_eid && e < mesh->ntet; e++) use_eid = mesh->elem_id[e] > 0;
  fprintf(f, "** written by cofem accuracy from %s\n*NODE\n", mesh->source);
  for (int i = 0; i < mesh->nnode; i++)
    fprintf(f, "%d, %.12e, %.12e, %.12e\n", c->nid[i], scale * mesh->X[3 * i], scale * mesh->X[3 * i + 1],
            scale * mesh->X[3 * i + 2]);
  /* C3D10: cofem's node order is CalculiX's (cofem/mesh.h; test_ccx_tet10 checks it), 11 fields on
   * one line (at most 16 per data line) */
  const int npe = cf_mesh_npe(mesh);
  fprintf(f, "*ELEMENT, TYPE=%s, ELSET=EALL\n", npe == 10 ? "C3D10" : "C3D4");
  for (int e = 0; e < mesh->ntet; e++) {
    const int* t = mesh->tet + (size_t)npe * e;
    fprintf(f, "%d", use_eid ? mesh->elem_id[e] : e + 1);
    for (int a = 0; a < npe; a++) fprintf(f, ", %d", c->nid[t[a]]);
    fprintf(f, "\n");
  }
  int bad = ferror(f);
  if (fclose(f) != 0 || bad) return cf_error(CF_ERR_IO, "%s: write error", path);
  return CF_OK;
}

/* the model part of every deck: mesh, sets, material, supports. neo_hooke: the finite-strain
 * diagnostic, a compressible neo-Hooke material with the same small-strain moduli, in N, mm, MPa
 * (CalculiX replaces any compressibility coefficient below 1e-10 by its own default, and
 * D1 = 2/K is 1.1e-11 1/Pa for steel in SI) */
static void write_model(FILE* f, const Case* c, int neo_hooke) {
  const cfMesh* mesh = &c->s.mesh;
  fprintf(f, "** cofem accuracy harness: case %s (scene %s)\n*INCLUDE, INPUT=%s\n", c->name, c->s.path,
          neo_hooke ? "mesh_mm.inp" : "mesh.inp");
  write_nset(f, "ACC_ALL", c, NULL, mesh->nnode);
  write_nset(f, "ACC_PROBE", c, c->probe.nodes, c->probe.count);
  for (int i = 0; i < c->s.nfix; i++) {
    const cfNodeSet* set = cf_mesh_find_nset(mesh, c->s.fix[i].set);
    char name[32];
    snprintf(name, sizeof name, "ACC_FIX%d", i + 1);
    write_nset(f, name, c, set->nodes, set->count);
  }
  const double E = c->s.def.E, nu = c->s.def.nu;
  if (neo_hooke) {
    double mu = 1e-6 * E / (2 * (1 + nu)), K = 1e-6 * E / (3 * (1 - 2 * nu));
    fprintf(f, "*MATERIAL, NAME=MAT\n*HYPERELASTIC, NEO HOOKE\n%.12e, %.12e\n*DENSITY\n%.12e\n", mu / 2, 2 / K,
            1e-12 * c->s.def.rho);
  } else {
    fprintf(f, "*MATERIAL, NAME=MAT\n*ELASTIC\n%.12e, %.12e\n*DENSITY\n%.12e\n", E, nu, c->s.def.rho);
  }
  fprintf(f, "*SOLID SECTION, ELSET=EALL, MATERIAL=MAT\n*BOUNDARY\n");
  for (int i = 0; i < c->s.nfix; i++)
    for (int k = 0; k < 3; k++)
      if (c->s.fix[i].dir_mask & (1 << k)) fprintf(f, "ACC_FIX%d, %d, %d, 0.\n", i + 1, k + 1, k + 1);
}

static void write_cload(FILE* f, const Case* c, double scale, const char* amplitude) {
  fprintf(f, "*CLOAD%s%s\n", amplitude ? ", AMPLITUDE=" : "", amplitude ? amplitude : "");
  for (int n = 0; n < c->s.mesh.nnode; n++)
    for (int k = 0; k < 3; k++)
      if (c->f[3 * n + k] != 0) fprintf(f, "%d, %d, %.12e\n", c->nid[n], k + 1, scale * c->f[3 * n + k]);
}

static FILE* open_deck(const Case* c, const char* job) {
  char path[CF_PATH_MAX + 64];
  snprintf(path, sizeof path, "%s/%s.inp", c->dir, job);
  FILE* f = fopen(path, "w");
  if (!f) cf_error(CF_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
  return f;
}

/* --reuse-ccx: a CalculiX job whose deck is byte for byte the one of its last successful run
 * (kept as JOB.inp.done) is not run again; its .dat is read as it is */
static int g_reuse_ccx = 0;
/* --dt-ref-only: the step responses at the reference's dt (T1/100) only, not at 0.01 and 0.001 s */
static int g_dt_ref_only = 0;
/* --large-steps N: time steps per first period of the full-load (large-rotation) runs (100) */
static int g_large_steps = 100;

static char* slurp_file(const char* path, long* len) {
  FILE* f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char* b = n >= 0 ? malloc((size_t)n + 1) : NULL;
  if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
    free(b);
    b = NULL;
  }
  fclose(f);
  if (b) *len = n;
  return b;
}

/* 1 if DIR/JOB.inp equals DIR/JOB.inp.done and DIR/JOB.dat exists */
static int ccx_done_before(const Case* c, const char* job) {
  char a[CF_PATH_MAX + 64], b[CF_PATH_MAX + 64], dat[CF_PATH_MAX + 64];
  snprintf(a, sizeof a, "%s/%s.inp", c->dir, job);
  snprintf(b, sizeof b, "%s/%s.inp.done", c->dir, job);
  snprintf(dat, sizeof dat, "%s/%s.dat", c->dir, job);
  if (access(dat, R_OK) != 0) return 0;
  long na = -1, nb = -2;
  char *sa = slurp_file(a, &na), *sb = slurp_file(b, &nb);
  int same = sa && sb && na == nb && memcmp(sa, sb, (size_t)na) == 0;
  free(sa);
  free(sb);
  return same;
}

/* CalculiX runs that failed without stopping a case (the neo-Hooke diagnostic): counted for the
 * summary line, which must not say "0 errors" after "ccx failed" lines (issue 17) */
static int g_ccx_failed;

/* run ccx on DIR/JOB.inp; errors point at the log */
static int run_ccx(const Case* c, const char* job, double* seconds) {
  char cmd[2 * CF_PATH_MAX];
  if (g_reuse_ccx && ccx_done_before(c, job)) {
    printf("    %s: deck unchanged since its last run, %s.dat reused (--reuse-ccx)\n", job, job);
    return CF_OK;
  }
  double t0 = cf_wall_time();
  snprintf(cmd, sizeof cmd, "cd '%s' && rm -f %s.dat && OMP_NUM_THREADS=2 ccx -i %s > %s.log 2>&1", c->dir, job, job, job);
  int rc = system(cmd);
  if (seconds) *seconds += cf_wall_time() - t0;
  char log[CF_PATH_MAX + 64];
  snprintf(log, sizeof log, "%s/%s.log", c->dir, job);
  int err = 0;
  FILE* f = fopen(log, "r");
  if (f) {
    char line[512];
    while (fgets(line, sizeof line, f)) err |= strstr(line, "*ERROR") != NULL;
    fclose(f);
  }
  if (rc != 0 || err) return cf_error(CF_ERR_SOLVER, "ccx failed on %s/%s.inp (exit %d): see %s", c->dir, job, rc, log);
  snprintf(cmd, sizeof cmd, "cd '%s' && cp %s.inp %s.inp.done", c->dir, job, job);
  if (system(cmd) != 0) fprintf(stderr, "accuracy: %s/%s.inp.done not written\n", c->dir, job);
  return CF_OK;
}

/* largest |principal Green-Lagrange strain| of one deformation gradient F */
static double green_strain_max(const double* F) {
  /* E = (F^T F - I) / 2; eigenvalues of the symmetric 3x3 (trigonometric form) */
  double G[9];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      G[3 * i + j] = 0.5 * (F[i] * F[j] + F[3 + i] * F[3 + j] + F[6 + i] * F[6 + j] - (i == j ? 1.0 : 0.0));
  double p1 = G[1] * G[1] + G[2] * G[2] + G[5] * G[5], q = (G[0] + G[4] + G[8]) / 3, ev[3];
  double p2 = (G[0] - q) * (G[0] - q) + (G[4] - q) * (G[4] - q) + (G[8] - q) * (G[8] - q) + 2 * p1;
  double p = sqrt(p2 / 6);
  if (p < 1e-300) {
    ev[0] = ev[1] = ev[2] = q;
  } else {
    double B[9];
    for (int i = 0; i < 9; i++) B[i] = (G[i] - (i % 4 == 0 ? q : 0.0)) / p;
    double r = 0.5 * (B[0] * (B[4] * B[8] - B[5] * B[7]) - B[1] * (B[3] * B[8] - B[5] * B[6]) +
                      B[2] * (B[3] * B[7] - B[4] * B[6]));
    double phi = r <= -1 ? M_PI / 3 : r >= 1 ? 0 : acos(r) / 3;
    ev[0] = q + 2 * p * cos(phi);
    ev[2] = q + 2 * p * cos(phi + 2 * M_PI / 3);
    ev[1] = 3 * q - ev[0] - ev[2];
  }
  return fmax(fabs(ev[0]), fmax(fabs(ev[1]), fabs(ev[2])));
}

/* largest |principal Green-Lagrange strain| over the elements for the displacement field u: the
 * linear tetrahedron's constant F, the quadratic one's F at each of its 4 quadrature points,
 * F = sum_a (X_a + u_a) g_a^T (cf_tet10_gradients: the shape gradients at rest) */
static double max_strain(const cfMesh* mesh, const double* u) {
  const int npe = cf_mesh_npe(mesh);
  double worst = 0;
  for (int e = 0; e < mesh->ntet; e++) {
    const int* t = mesh->tet + (size_t)npe * e;
    double F[9];
    if (npe == 10) {
      double Xe[30], g[30];
      cf_tet10_positions(mesh->X, t, Xe);
      for (int q = 0; q < 4; q++) {
        cf_tet10_point(Xe, q, NULL, g);
        for (int i = 0; i < 9; i++) F[i] = 0;
        for (int a = 0; a < 10; a++)
          for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) F[3 * i + j] += (Xe[3 * a + i] + u[3 * t[a] + i]) * g[3 * a + j];
        worst = fmax(worst, green_strain_max(F));
      }
      continue;
    }
    double Dm[9], Ds[9], Di[9];
    for (int j = 0; j < 3; j++)
      for (int i = 0; i < 3; i++) {
        Dm[3 * i + j] = mesh->X[3 * t[j + 1] + i] - mesh->X[3 * t[0] + i];
        Ds[3 * i + j] = Dm[3 * i + j] + u[3 * t[j + 1] + i] - u[3 * t[0] + i];
      }
    cf_inv3(Dm, Di);
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) F[3 * i + j] = Ds[3 * i] * Di[j] + Ds[3 * i + 1] * Di[3 + j] + Ds[3 * i + 2] * Di[6 + j];
    worst = fmax(worst, green_strain_max(F));
  }
  return worst;
}

/* ---- statics ----------------------------------------------------------------------------------- */
typedef struct StaticRec {
  int n, cap;
  double* lam;
  double* u; /* [n][ndof] displacement fields */
  int ndof;
} StaticRec;

static int record_increment(double lambda, int iters, const cfModel* m, const cfData* d, void* user) {
  StaticRec* r = user;
  if (r->n == r->cap) {
    r->cap = r->cap ? 2 * r->cap : 32;
    r->lam = realloc(r->lam, sizeof(double) * r->cap);
    r->u = realloc(r->u, sizeof(double) * r->cap * (size_t)r->ndof);
  }
  r->lam[r->n] = lambda;
  for (int i = 0; i < r->ndof; i++) r->u[(size_t)r->n * r->ndof + i] = d->x[i] - m->X[i];
  r->n++;
  (void)iters;
  return 0;
}

/* 1. the CalculiX decks (nonlinear, linear, and the neo-Hooke diagnostic) and their runs */
static int static_ccx_runs(Case* c) {
  const int N = c->spec.increments;
  int st;
  /* decks */
  for (int nl = 1; nl >= 0; nl--) {
    FILE* f = open_deck(c, nl ? "static_nlgeom" : "static_linear");
    if (!f) return CF_ERR_IO;
    write_model(f, c, 0);
    fprintf(f, "*STEP%s\n*STATIC, DIRECT\n%.12e, 1.0\n", nl ? ", NLGEOM, INC=1000" : "", nl ? 1.0 / N : 1.0);
    write_cload(f, c, 1.0, NULL);
    fprintf(f, "*NODE PRINT, NSET=ACC_ALL\nU\n*END STEP\n");
    fclose(f);
  }
  if ((st = run_ccx(c, "static_nlgeom", &c->seconds_ccx)) < 0) return st;
  if ((st = run_ccx(c, "static_linear", &c->seconds_ccx)) < 0) return st;
  if (c->have_nh) {
    FILE* f = open_deck(c, "static_neohooke");
    if (!f) return CF_ERR_IO;
    write_model(f, c, 1);
    fprintf(f, "*STEP, NLGEOM, INC=1000\n*STATIC, DIRECT\n%.12e, 1.0\n", 1.0 / N);
    write_cload(f, c, 1.0, NULL);
    fprintf(f, "*NODE PRINT, NSET=ACC_PROBE\nU\n*END STEP\n");
    fclose(f);
    if ((st = write_mesh(c, "mesh_mm.inp", 1e3)) < 0) return st;
    if (run_ccx(c, "static_neohooke", &c->seconds_ccx) < 0) {
      fprintf(stderr, "accuracy: %s: the neo-Hooke diagnostic failed: %s\n", c->name, cf_last_error());
      c->have_nh = 0;
      g_ccx_failed++;
    }
  }
  return CF_OK;
}

/* 2. CalculiX's results: the probe's displacement and the twist per load step, the linear
 * solution scaled, the neo-Hooke diagnostic; *fields: the nonlinear displacement fields [nstep][ndof] */
static int static_read_ccx(Case* c, double** fields) {
  const cfMesh* mesh = &c->s.mesh;
  const int ndof = 3 * mesh->nnode, N = c->spec.increments;
  int st = CF_OK;
  char path[CF_PATH_MAX + 64];
  DatFile nl, lin;
  snprintf(path, sizeof path, "%s/static_nlgeom.dat", c->dir);
  if ((st = dat_read(path, &nl)) < 0) return st;
  snprintf(path, sizeof path, "%s/static_linear.dat", c->dir);
  if ((st = dat_read(path, &lin)) < 0) { dat_free(&nl); return st; }
  double* field_lin = malloc(sizeof(double) * ndof);
  double* ccx_fields = NULL;
  if (lin.n < 1 || block_field(c, &lin.b[lin.n - 1], field_lin) < 0) {
    st = cf_error(CF_ERR_PARSE, "%s: no complete displacement block", path);
    goto out;
  }
  c->nstep = nl.n;
  if (nl.n < N) {
    st = cf_error(CF_ERR_SOLVER, "%s/static_nlgeom: CalculiX stopped after %d of %d increments (see its log)", c->dir, nl.n, N);
    goto out;
  }
  c->lam = malloc(sizeof(double) * c->nstep);
  c->u_ccx = malloc(sizeof(double[3]) * c->nstep);
  c->u_ccxlin = malloc(sizeof(double[3]) * c->nstep);
  c->u_cr = malloc(sizeof(double[3]) * c->nstep);
  c->u_lin = malloc(sizeof(double[3]) * c->nstep);
  c->u_el = malloc(sizeof(double[3]) * c->nstep);
  c->tw_ccx = malloc(sizeof(double) * c->nstep);
  c->tw_cr = malloc(sizeof(double) * c->nstep);
  c->tw_lin = malloc(sizeof(double) * c->nstep);
  c->u_nh = calloc(c->nstep, sizeof(double[3]));
  if (c->have_nh) {
    DatFile nh;
    snprintf(path, sizeof path, "%s/static_neohooke.dat", c->dir);
    if (dat_read(path, &nh) >= 0 && nh.n == c->nstep) {
      for (int i = 0; i < nh.n; i++)
        for (int q = 0; q < nh.b[i].n; q++)
          for (int k = 0; k < 3; k++) c->u_nh[i][k] += 1e-3 * nh.b[i].u[3 * q + k] / nh.b[i].n; /* mm -> m */
    } else {
      fprintf(stderr, "accuracy: %s: the neo-Hooke diagnostic has %d of %d load steps\n", c->name, nh.n, c->nstep);
      c->have_nh = 0;
    }
    dat_free(&nh);
  }
  ccx_fields = malloc(sizeof(double) * ndof * (size_t)c->nstep);
  for (int i = 0; i < c->nstep; i++) {
    c->lam[i] = nl.b[i].time;
    if (block_field(c, &nl.b[i], ccx_fields + (size_t)i * ndof) < 0) {
      st = cf_error(CF_ERR_PARSE, "%s/static_nlgeom.dat: block %d misses nodes", c->dir, i + 1);
      free(ccx_fields);
      ccx_fields = NULL;
      goto out;
    }
    set_mean(&c->probe, ccx_fields + (size_t)i * ndof, c->u_ccx[i]);
    if (i == c->nstep - 1) c->strain_max = max_strain(mesh, ccx_fields + (size_t)i * ndof);
    double ul[3];
    set_mean(&c->probe, field_lin, ul);
    for (int k = 0; k < 3; k++) c->u_ccxlin[i][k] = c->lam[i] * ul[k];
    c->tw_ccx[i] = c->twist.count ? set_twist(mesh, &c->twist, ccx_fields + (size_t)i * ndof) : 0;
  }
  st = CF_OK;
out:
  *fields = ccx_fields;
  free(field_lin);
  dat_free(&nl);
  dat_free(&lin);
  return st;
}

/* 3. cofem: linear and co-rotational on CalculiX's load steps, compared with its fields */
static int static_cofem(Case* c, const double* ccx_fields) {
  const cfMesh* mesh = &c->s.mesh;
  const int nn = mesh->nnode, ndof = 3 * nn, N = c->spec.increments;
  int st;
  cfModel* m;
  cfData* d;
  if ((st = cf_scene_build(&c->s, &m, &d)) < 0) return st;
  double t0 = cf_wall_time();
  st = cf_linear_static(m, d, c->f);
  double* ucf_lin = malloc(sizeof(double) * ndof);
  for (int i = 0; i < ndof; i++) ucf_lin[i] = d->x[i] - m->X[i];
  StaticRec rec = {0, 0, NULL, NULL, ndof};
  if (st >= 0) {
    cf_data_reset(m, d);
    cfStaticOptions o = c->s.stat;
    o.increments = N;
    st = cf_static_solve(m, d, c->f, &o, record_increment, &rec);
    if (st > 0) {
      fprintf(stderr, "accuracy: %s: cofem statics: %s\n", c->name, cf_last_error());
      st = cf_error(CF_ERR_SOLVER, "%s: cofem co-rotational statics did not converge", c->name);
    }
  }
  c->seconds_cf += cf_wall_time() - t0;
  if (st >= 0) {
    double ul[3];
    set_mean(&c->probe, ucf_lin, ul);
    for (int i = 0; i < c->nstep; i++) {
      int j = -1;
      for (int q = 0; q < rec.n; q++)
        if (fabs(rec.lam[q] - c->lam[i]) < 1e-6) j = q;
      if (j < 0) { st = cf_error(CF_ERR_SOLVER, "%s: cofem has no converged state at load factor %g", c->name, c->lam[i]); break; }
      const double* ucr = rec.u + (size_t)j * ndof;
      set_mean(&c->probe, ucr, c->u_cr[i]);
      for (int k = 0; k < 3; k++) c->u_lin[i][k] = c->lam[i] * ul[k];
      if (c->twist.count) {
        double* tmpu = malloc(sizeof(double) * ndof);
        for (int q = 0; q < ndof; q++) tmpu[q] = c->lam[i] * ucf_lin[q];
        c->tw_cr[i] = set_twist(mesh, &c->twist, ucr);
        c->tw_lin[i] = set_twist(mesh, &c->twist, tmpu);
        free(tmpu);
      } else {
        c->tw_cr[i] = c->tw_lin[i] = 0;
      }
      if (i == c->nstep - 1) {
        /* whole-field error at full load: max over nodes, relative to the largest displacement */
        const double* uc = ccx_fields + (size_t)i * ndof;
        double umax = 0, ecr = 0, elin = 0;
        for (int n = 0; n < nn; n++) {
          umax = fmax(umax, norm3(uc + 3 * n));
          ecr = fmax(ecr, dist3(ucr + 3 * n, uc + 3 * n));
          elin = fmax(elin, dist3(ucf_lin + 3 * n, uc + 3 * n));
        }
        c->field_err_cr = ecr / umax;
        c->field_err_lin = elin / umax;
      }
    }
  }
  free(ucf_lin);
  free(rec.lam);
  free(rec.u);
  cf_data_free(d);
  cf_model_free(m);
  return st;
}

/* 4. the elastica (large-deflection cantilever) and shear-flexible beam theory */
static void static_elastica(Case* c) {
  const cfMesh* mesh = &c->s.mesh;
  const int nn = mesh->nnode;
  /* the mesh's bounding box: length along x, section y-z; load along -z */
  double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  for (int n = 0; n < nn; n++)
    for (int k = 0; k < 3; k++) lo[k] = fmin(lo[k], mesh->X[3 * n + k]), hi[k] = fmax(hi[k], mesh->X[3 * n + k]);
  double L = hi[0] - lo[0], b = hi[1] - lo[1], h = hi[2] - lo[2];
  double EI = c->s.def.E * b * h * h * h / 12, P = 0;
  for (int n = 0; n < nn; n++) P -= c->f[3 * n + 2];
  c->elastica_a = P * L * L / EI;
  for (int i = 0; i < c->nstep; i++) {
    double ux, uz;
    elastica(c->lam[i] * P * L * L / EI, &ux, &uz);
    c->u_el[i][0] = ux * L;
    c->u_el[i][1] = 0;
    c->u_el[i][2] = uz * L;
  }
  /* shear-flexible beam theory (Timoshenko, k = 5/6) against the linear FE tip deflection */
  double G = c->s.def.E / (2 * (1 + c->s.def.nu));
  double d_beam = P * L * L * L / (3 * EI) + P * L / (5.0 / 6.0 * G * b * h);
  c->beam_ratio = -c->u_lin[c->nstep - 1][2] / d_beam;
}

/* 5. errors: relative to |u_ref| at full load */
static void static_errors(Case* c) {
  const int L = c->nstep - 1;
  c->ref_mag = norm3(c->u_ccx[L]);
  c->e_cr_full = dist3(c->u_cr[L], c->u_ccx[L]) / c->ref_mag;
  c->e_lin_full = dist3(c->u_lin[L], c->u_ccx[L]) / c->ref_mag;
  c->e_lin_consistency = dist3(c->u_lin[L], c->u_ccxlin[L]) / norm3(c->u_ccxlin[L]);
  c->e_nh_full = c->have_nh ? dist3(c->u_nh[L], c->u_ccx[L]) / c->ref_mag : NAN;
  c->e_cr_max = c->e_lin_max = 0;
  for (int i = 0; i < c->nstep; i++) {
    c->e_cr_max = fmax(c->e_cr_max, dist3(c->u_cr[i], c->u_ccx[i]) / c->ref_mag);
    c->e_lin_max = fmax(c->e_lin_max, dist3(c->u_lin[i], c->u_ccx[i]) / c->ref_mag);
  }
  if (c->spec.elastica) {
    double em = norm3(c->u_el[L]);
    c->el_ccx_full = dist3(c->u_ccx[L], c->u_el[L]) / em;
    c->el_cr_full = dist3(c->u_cr[L], c->u_el[L]) / em;
    c->el_lin_full = dist3(c->u_lin[L], c->u_el[L]) / em;
    c->el_ccx_max = c->el_cr_max = 0;
    for (int i = 0; i < c->nstep; i++) {
      c->el_ccx_max = fmax(c->el_ccx_max, dist3(c->u_ccx[i], c->u_el[i]) / em);
      c->el_cr_max = fmax(c->el_cr_max, dist3(c->u_cr[i], c->u_el[i]) / em);
    }
  }
}

static int run_statics(Case* c) {
  double* ccx_fields = NULL;
  int st = static_ccx_runs(c);
  if (st >= 0) st = static_read_ccx(c, &ccx_fields);
  if (st < 0) return st;
  st = static_cofem(c, ccx_fields);
  if (st >= 0 && c->spec.elastica) static_elastica(c);
  free(ccx_fields);
  if (st < 0) return st;
  static_errors(c);
  c->static_ok = 1;
  return CF_OK;
}

static int write_static_csv(const Case* c, const char* out_dir) {
  char path[CF_PATH_MAX + 64];
  snprintf(path, sizeof path, "%s/%s_static.csv", out_dir, c->name);
  FILE* f = fopen(path, "w");
  if (!f) return cf_error(CF_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
  fprintf(f, "load_factor,load,ccx_ux,ccx_uy,ccx_uz,corot_ux,corot_uy,corot_uz,linear_ux,linear_uy,linear_uz,"
             "ccx_linear_ux,ccx_linear_uy,ccx_linear_uz");
  if (c->spec.elastica) fprintf(f, ",elastica_ux,elastica_uy,elastica_uz");
  if (c->twist.count) fprintf(f, ",ccx_twist_deg,corot_twist_deg,linear_twist_deg");
  if (c->have_nh) fprintf(f, ",ccx_neohooke_ux,ccx_neohooke_uy,ccx_neohooke_uz");
  fprintf(f, "\n0,0,0,0,0,0,0,0,0,0,0,0,0,0%s%s%s\n", c->spec.elastica ? ",0,0,0" : "", c->twist.count ? ",0,0,0" : "",
          c->have_nh ? ",0,0,0" : "");
  for (int i = 0; i < c->nstep; i++) {
    fprintf(f, "%.9g,%.9g", c->lam[i], c->lam[i] * c->load);
    const double(*cols[4])[3] = {c->u_ccx, c->u_cr, c->u_lin, c->u_ccxlin};
    for (int q = 0; q < 4; q++) fprintf(f, ",%.9g,%.9g,%.9g", cols[q][i][0], cols[q][i][1], cols[q][i][2]);
    if (c->spec.elastica) fprintf(f, ",%.9g,%.9g,%.9g", c->u_el[i][0], c->u_el[i][1], c->u_el[i][2]);
    if (c->twist.count)
      fprintf(f, ",%.9g,%.9g,%.9g", c->tw_ccx[i] * 180 / M_PI, c->tw_cr[i] * 180 / M_PI, c->tw_lin[i] * 180 / M_PI);
    if (c->have_nh) fprintf(f, ",%.9g,%.9g,%.9g", c->u_nh[i][0], c->u_nh[i][1], c->u_nh[i][2]);
    fprintf(f, "\n");
  }
  fclose(f);
  return CF_OK;
}

/* ---- eigenfrequencies -------------------------------------------------------------------------- */
static int run_modes(Case* c) {
  FILE* f = open_deck(c, "frequency");
  if (!f) return CF_ERR_IO;
  write_model(f, c, 0);
  fprintf(f, "*STEP\n*FREQUENCY\n%d\n*END STEP\n", NMODES);
  fclose(f);
  int st = run_ccx(c, "frequency", &c->seconds_ccx);
  if (st < 0) return st;
  char path[CF_PATH_MAX + 64];
  snprintf(path, sizeof path, "%s/frequency.dat", c->dir);
  int n = cf_ccx_read_frequencies(path, c->hz_ccx, NMODES);
  if (n < 0) return n;
  if (n < NMODES) return cf_error(CF_ERR_PARSE, "%s: %d eigenfrequencies found, %d expected", path, n, NMODES);
  c->nmodes = n;
  /* cofem: the consistent mass, CalculiX's (cf_mass_calculix), and the lumped mass */
  for (int variant = 0; variant < 3; variant++) {
    cfScene s2 = c->s;
    s2.def.consistent_mass = variant < 2;
    cfModel* m;
    cfData* d;
    if ((st = cf_scene_build(&s2, &m, &d)) < 0) return st;
    double w2[NMODES];
    cfModalInfo info;
    cfModalOptions o = cf_default_modal_options();
    if (variant == 1) o.mass = CF_MODAL_MASS_CALCULIX;
    double t0 = cf_wall_time();
    st = cf_modal_solve(m, NMODES, &o, w2, NULL, &info);
    c->seconds_cf += cf_wall_time() - t0;
    /* CalculiX's mass: the one-point rule for C3D4, the 4-point rule for C3D10 (cofem/modal.h) */
    const char* what[3] = {"consistent", c->npe == 4 ? "one-point (CalculiX C3D4)" : "4-point rule (CalculiX C3D10)",
                           c->npe == 4 ? "lumped" : "lumped (HRZ)"};
    double* hz = variant == 0 ? c->hz_cf : variant == 1 ? c->hz_cf1 : c->hz_cf_lumped;
    if (st >= 0) {
      printf("  modes (%s mass): %s, %d free DOFs, %.2f s, residual %.1e\n", what[variant],
             info.method == CF_MODAL_DENSE ? "dense dsygvx" : "shift-invert Lanczos", info.nfree, info.seconds,
             info.max_residual);
      for (int i = 0; i < NMODES; i++) hz[i] = sqrt(fmax(w2[i], 0)) / (2 * M_PI);
      if (variant == 1) c->T1 = 2 * M_PI / sqrt(w2[0]);
    }
    cf_data_free(d);
    cf_model_free(m);
    if (st < 0) return st;
  }
  snprintf(path, sizeof path, "%s/../%s_modes.csv", c->dir, c->name);
  f = fopen(path, "w");
  if (!f) return cf_error(CF_ERR_IO, "%s: cannot write", path);
  fprintf(f, "mode,ccx_hz,cofem_consistent_hz,cofem_onepoint_hz,cofem_lumped_hz\n");
  for (int i = 0; i < NMODES; i++)
    fprintf(f, "%d,%.9g,%.9g,%.9g,%.9g\n", i + 1, c->hz_ccx[i], c->hz_cf[i], c->hz_cf1[i], c->hz_cf_lumped[i]);
  fclose(f);
  c->modes_ok = 1;
  return CF_OK;
}

/* ---- dynamics ---------------------------------------------------------------------------------- */
typedef struct Run {
  char solver[32];   /* "ccx_reference", "ccx", "backward_euler", "newmark", "generalized_alpha" */
  double dt, t_end;
  int n;
  double* t;
  double (*u)[3];
  int warnings;      /* cofem: steps with a warning */
  int pcg_capped;    /* cofem: steps whose PCG hit its iteration cap */
  int inverted;      /* cofem: steps with inverted elements */
  int failed;        /* CalculiX stopped early (no convergence at a fixed increment), or cofem diverged */
  int diverged;      /* cofem: the run stopped with CF_ERR_DIVERGED at step n + 1 */
  long pcg_iters;
  long newton_iters; /* cofem generalized-alpha */
  int step_cuts;
  double rms;        /* RMS of s - s_ref over the run (the reference interpolated), / max |s_ref| */
  double seconds;    /* wall time of the steps (cofem: without the energy evaluation below) */
  /* cofem: the total energy E = K + U - F . (x - X) of the undamped run under its constant load
   * (0 at rest at t = 0, conserved by the exact motion): E at the run's end relative to the
   * largest work of the load F . (x - X) seen during the run */
  int has_energy;
  double energy_drift;
  /* measures along the reference direction */
  int has_peak, has_period;
  double t_peak, s_peak, period, s_max;
} Run;

static void run_free(Run* r) { free(r->t); free(r->u); }

static void run_push(Run* r, double t, const double* u) {
  r->t = realloc(r->t, sizeof(double) * (r->n + 1));
  r->u = realloc(r->u, sizeof(double[3]) * (r->n + 1));
  r->t[r->n] = t;
  memcpy(r->u[r->n], u, sizeof(double) * 3);
  r->n++;
}

/* first local maximum of s = u . e (parabolic interpolation) and the time to the next one */
static void run_measure(Run* r, const double* e) {
  int n = r->n;
  double* s = malloc(sizeof(double) * (n + 1));
  double* t = malloc(sizeof(double) * (n + 1));
  s[0] = 0;
  t[0] = 0;
  r->s_max = 0;
  for (int i = 0; i < n; i++) {
    s[i + 1] = r->u[i][0] * e[0] + r->u[i][1] * e[1] + r->u[i][2] * e[2];
    t[i + 1] = r->t[i];
    r->s_max = fmax(r->s_max, s[i + 1]);
  }
  r->has_peak = r->has_period = 0;
  double tp[2], sp[2];
  int np = 0;
  for (int i = 1; i < n && np < 2; i++)
    if (s[i] > s[i - 1] && s[i] >= s[i + 1] && s[i] > 0.1 * r->s_max) {
      double a = s[i - 1], b = s[i], cc = s[i + 1], den = a - 2 * b + cc;
      double off = den < 0 ? 0.5 * (a - cc) / den : 0;
      double h = t[i + 1] - t[i];
      tp[np] = t[i] + off * h;
      sp[np] = b - 0.25 * (a - cc) * off;
      np++;
    }
  if (np >= 1) { r->has_peak = 1; r->t_peak = tp[0]; r->s_peak = sp[0]; }
  if (np >= 2) { r->has_period = 1; r->period = tp[1] - tp[0]; }
  free(s);
  free(t);
}

static int ccx_dynamic(Case* c, const double* F_scale, double dt, double t_end, double alpha, const char* job, Run* r) {
  FILE* f = open_deck(c, job);
  if (!f) return CF_ERR_IO;
  write_model(f, c, 0);
  fprintf(f, "*AMPLITUDE, NAME=ACC_STEP\n0., 1., %.12e, 1.\n", 1e3 * t_end);
  fprintf(f, "*STEP, NLGEOM, INC=%ld\n*DYNAMIC, DIRECT, ALPHA=%g\n%.12e, %.12e\n", (long)(t_end / dt) + 10, alpha, dt, t_end);
  write_cload(f, c, *F_scale, "ACC_STEP");
  fprintf(f, "*NODE PRINT, NSET=ACC_PROBE\nU\n*END STEP\n");
  fclose(f);
  double t0 = cf_wall_time();
  int st = run_ccx(c, job, &c->seconds_ccx);
  r->seconds = cf_wall_time() - t0;
  if (st < 0) {
    fprintf(stderr, "accuracy: %s: %s\n", c->name, cf_last_error());
    r->failed = 1;
  }
  char path[CF_PATH_MAX + 64];
  snprintf(path, sizeof path, "%s/%s.dat", c->dir, job);
  DatFile df;
  if ((st = dat_read(path, &df)) < 0) {
    r->failed = 1;
    return CF_OK;
  }
  for (int i = 0; i < df.n; i++) {
    /* CalculiX may add a last increment of round-off size to reach the end time */
    if (r->n > 0 && df.b[i].time - r->t[r->n - 1] < 0.5 * dt) continue;
    double u[3] = {0, 0, 0};
    for (int q = 0; q < df.b[i].n; q++)
      for (int k = 0; k < 3; k++) u[k] += df.b[i].u[3 * q + k] / df.b[i].n;
    run_push(r, df.b[i].time, u);
  }
  dat_free(&df);
  int expect = (int)floor(t_end / dt + 0.5);
  if (r->n < expect) r->failed = 1;
  return CF_OK;
}

static int cofem_dynamic(Case* c, int integrator, double scale, double dt, double t_end, Run* r) {
  cfScene s2 = c->s;
  s2.def.consistent_mass = 1;  /* a full block mass; replaced by CalculiX's below */
  s2.def.integrator = integrator;
  s2.def.dt = dt;
  s2.def.rayleigh_alpha = s2.def.rayleigh_beta = 0;
  s2.def.gravity[0] = s2.def.gravity[1] = s2.def.gravity[2] = 0; /* gravity is in c->f */
  s2.def.pcg_tol = 1e-9;
  s2.def.pcg_max_iter = 20000;
  s2.def.warm_start = 1;
  if (integrator == CF_INTEGRATOR_GENERALIZED_ALPHA) s2.def.dyn_tangent = CF_DYN_TANGENT_SYM_CONSISTENT;
  cfModel* m;
  cfData* d;
  int st = cf_scene_build(&s2, &m, &d);
  if (st < 0) return st;
  /* the same discrete model as CalculiX: its C3D4 mass is the one-point rule (see modal.h), its
   * C3D10 mass the 4-point rule (cf_mass_calculix), so the comparison measures
   * the time integration and the co-rotational formulation only */
  cf_mass_calculix(m, m->Mblk);
  /* the data again, so that the preconditioner (the rotated Cholesky's factor of cm M + ck K at
   * rest) is made with this mass: with the consistent mass it was built with, generalized-alpha
   * on the slender cantilever took 6400-6700 PCG iterations per step instead of ~60 */
  cf_data_free(d);
  if ((st = cf_data_create(m, &d)) < 0) {
    cf_model_free(m);
    return st;
  }
  /* the load is on from t = 0: f(t0) = f(t1) = F (Newmark averages the two) */
  for (int i = 0; i < m->ndof; i++) d->f_ext[i] = d->f_ext_prev[i] = scale * c->f[i];
  int steps = (int)floor(t_end / dt + 0.5);
  double t0 = cf_wall_time(), t_energy = 0, E = 0, W_max = 0;
  for (int k = 0; k < steps; k++) {
    st = cf_step(m, d);
    if (st == CF_ERR_DIVERGED) { /* a result of the comparison, not an error of the harness */
      printf("    %s dt %g: %s\n", r->solver, dt, cf_last_error());
      r->diverged = r->failed = 1;
      st = CF_OK;
      break;
    }
    if (st < 0) break;
    if (st > 0) r->warnings++;
    double u[3];
    cf_set_displacement(&c->s.mesh, &c->probe, d->x, u);
    run_push(r, d->t, u);
    /* the energy with the rotations of the current x (a linearised step's d->R are those of the
     * step's start); the next step takes its own polar decomposition first */
    double te = cf_wall_time(), W = 0;
    cf_stage_polar(m, d);
    for (int i = 0; i < m->ndof; i++) W += d->f_ext[i] * (d->x[i] - m->X[i]);
    E = cf_kinetic_energy(m, d) + cf_strain_energy(m, d) - W;
    W_max = fmax(W_max, W);
    t_energy += cf_wall_time() - te;
  }
  if (r->n > 0 && W_max > 0) {
    r->has_energy = 1;
    r->energy_drift = E / W_max;
  }
  r->seconds = cf_wall_time() - t0 - t_energy;
  r->pcg_iters = d->pcg_iters_total;
  r->newton_iters = d->newton_iters_total;
  r->step_cuts = d->warning[CF_WARN_STEP_CUT];
  r->pcg_capped = d->warning[CF_WARN_PCG_NOT_CONVERGED];
  r->inverted = d->warning[CF_WARN_INVERTED];
  c->seconds_cf += r->seconds;
  cf_data_free(d);
  cf_model_free(m);
  return st < 0 ? st : CF_OK;
}

typedef struct Dyn {
  int nrun;
  Run run[16];
  double dt_ref, t_ref, t_coarse, scale;
  double e[3];         /* measuring direction */
  double u_static[3];  /* co-rotational static displacement under the same load */
} Dyn;

/* RMS of s - s_ref over the run's samples within the reference's span (the reference, at a small
 * dt, interpolated linearly), relative to max |s_ref| */
static double run_rms(const Run* r, const Run* ref, const double* e) {
  double sum = 0, smax = 0;
  int n = 0, j = 0;
  for (int i = 0; i < ref->n; i++) smax = fmax(smax, fabs(ref->u[i][0] * e[0] + ref->u[i][1] * e[1] + ref->u[i][2] * e[2]));
  for (int i = 0; i < r->n; i++) {
    const double t = r->t[i];
    if (t > ref->t[ref->n - 1]) break;
    while (j + 1 < ref->n && ref->t[j + 1] < t) j++;
    double t0 = j == 0 && t < ref->t[0] ? 0 : ref->t[j], s0 = 0, s1;
    if (!(j == 0 && t < ref->t[0])) s0 = ref->u[j][0] * e[0] + ref->u[j][1] * e[1] + ref->u[j][2] * e[2];
    int j1 = j == 0 && t < ref->t[0] ? 0 : (j + 1 < ref->n ? j + 1 : j);
    double t1 = ref->t[j1];
    s1 = ref->u[j1][0] * e[0] + ref->u[j1][1] * e[1] + ref->u[j1][2] * e[2];
    double sr = t1 > t0 ? s0 + (s1 - s0) * (t - t0) / (t1 - t0) : s1;
    double s = r->u[i][0] * e[0] + r->u[i][1] * e[1] + r->u[i][2] * e[2];
    sum += (s - sr) * (s - sr);
    n++;
  }
  return n && smax > 0 ? sqrt(sum / n) / smax : NAN;
}

static int run_dynamics(Case* c, Dyn* D, const char* out_dir, double fraction, const char* suffix) {
  memset(D, 0, sizeof *D);
  if (!(c->T1 > 0)) return cf_error(CF_ERR_ARG, "%s: dynamics need the first period (modes)", c->name);
  D->scale = fraction;
  /* the full-load runs at --large-steps steps per first period (CalculiX's fixed-increment Newton
   * diverges at T1/100 on beam_coarse at P L^2/EI = 5, increment 33) */
  D->dt_ref = c->T1 / (suffix[0] ? g_large_steps : 100);
  D->t_ref = 3 * c->T1; /* two peaks of the first mode (it stiffens: the cantilever's comes at 0.85 T1) */
  D->t_coarse = fmax(0.1, D->t_ref);
  /* the static co-rotational solution under the same load, for the plots */
  {
    cfModel* m;
    cfData* d;
    int st = cf_scene_build(&c->s, &m, &d);
    if (st < 0) return st;
    double* fs = malloc(sizeof(double) * m->ndof);
    for (int i = 0; i < m->ndof; i++) fs[i] = D->scale * c->f[i];
    cfStaticOptions o = c->s.stat;
    o.increments = c->spec.increments;
    st = cf_static_solve(m, d, fs, &o, NULL, NULL);
    cf_set_displacement(&c->s.mesh, &c->probe, d->x, D->u_static);
    free(fs);
    cf_data_free(d);
    cf_model_free(m);
    if (st < 0) return st;
  }
  printf("  dynamics: load %.3g x full, first period %.4g s; reference CalculiX dt %.3g s to %.3g s, coarse runs to %.3g s\n",
         D->scale, c->T1, D->dt_ref, D->t_ref, D->t_coarse);
  int st;
  Run* r = &D->run[D->nrun++];
  snprintf(r->solver, sizeof r->solver, "ccx_reference");
  r->dt = D->dt_ref;
  r->t_end = D->t_ref;
  /* reference: CalculiX at T1/100 with its default alpha = -0.05. Its numerical damping of the
   * first mode is then ~1e-6 of critical (HHT is third-order dissipative); alpha = 0 leaves the
   * highest modes undamped and Newton diverged on the cantilever after 16 increments. */
  char job[64];
  snprintf(job, sizeof job, "dynamic%s_reference", suffix);
  if ((st = ccx_dynamic(c, &D->scale, r->dt, r->t_end, -0.05, job, r)) < 0) return st;
  if (r->failed) return cf_error(CF_ERR_SOLVER, "%s: the CalculiX reference dynamics stopped at t = %g s", c->name,
                                 r->n ? r->t[r->n - 1] : 0.0);
  const double dts[3] = {0.01, 0.001, D->dt_ref};
  for (int q = g_dt_ref_only ? 2 : 0; q < 3; q++) {
    double t_end = q < 2 ? D->t_coarse : D->t_ref;
    if (q < 2) {
      r = &D->run[D->nrun++];
      snprintf(r->solver, sizeof r->solver, "ccx");
      r->dt = dts[q];
      r->t_end = t_end;
      snprintf(job, sizeof job, "dynamic%s_dt%g", suffix, dts[q]);
      /* the same, at the coarse time step */
      if ((st = ccx_dynamic(c, &D->scale, r->dt, r->t_end, -0.05, job, r)) < 0) return st;
    }
    static const char* const names[3] = {"backward_euler", "newmark", "generalized_alpha"};
    static const int integrators[3] = {CF_INTEGRATOR_BACKWARD_EULER, CF_INTEGRATOR_NEWMARK,
                                       CF_INTEGRATOR_GENERALIZED_ALPHA};
    for (int integ = 0; integ < 3; integ++) {
      r = &D->run[D->nrun++];
      snprintf(r->solver, sizeof r->solver, "%s", names[integ]);
      r->dt = dts[q];
      r->t_end = t_end;
      if ((st = cofem_dynamic(c, integrators[integ], D->scale, r->dt, t_end, r)) < 0) return st;
    }
  }
  /* measuring direction: the reference displacement at its largest */
  const Run* ref = &D->run[0];
  double best = -1;
  for (int i = 0; i < ref->n; i++)
    if (norm3(ref->u[i]) > best) {
      best = norm3(ref->u[i]);
      for (int k = 0; k < 3; k++) D->e[k] = ref->u[i][k];
    }
  for (int k = 0; k < 3; k++) D->e[k] /= best;
  for (int i = 0; i < D->nrun; i++) {
    run_measure(&D->run[i], D->e);
    D->run[i].rms = run_rms(&D->run[i], &D->run[0], D->e);
  }
  /* csv */
  char path[CF_PATH_MAX + 64];
  snprintf(path, sizeof path, "%s/%s%s_dynamic.csv", out_dir, c->name, suffix);
  FILE* f = fopen(path, "w");
  if (!f) return cf_error(CF_ERR_IO, "%s: cannot write", path);
  fprintf(f, "# static co-rotational displacement under the same load: %.9g %.9g %.9g; direction %.6f %.6f %.6f\n",
          D->u_static[0], D->u_static[1], D->u_static[2], D->e[0], D->e[1], D->e[2]);
  fprintf(f, "solver,dt,t,ux,uy,uz,s\n");
  for (int q = 0; q < D->nrun; q++) {
    const Run* rr = &D->run[q];
    fprintf(f, "%s,%g,0,0,0,0,0\n", rr->solver, rr->dt);
    for (int i = 0; i < rr->n; i++)
      fprintf(f, "%s,%g,%.9g,%.9g,%.9g,%.9g,%.9g\n", rr->solver, rr->dt, rr->t[i], rr->u[i][0], rr->u[i][1], rr->u[i][2],
              rr->u[i][0] * D->e[0] + rr->u[i][1] * D->e[1] + rr->u[i][2] * D->e[2]);
  }
  fclose(f);
  return CF_OK;
}

/* ---- the report -------------------------------------------------------------------------------- */
static const char* pct(double x, char* buf) {
  snprintf(buf, 32, "%.2f%%", 100 * x);
  return buf;
}

static const char* pct4(double x, char* buf) {
  snprintf(buf, 32, "%.5f%%", 100 * x);
  return buf;
}

/* the dynamics table (large: the full-load runs) */
static void write_dyn_table(FILE* f, Case* cs, int nc, Dyn* dyn, int large) {
  int any_dyn = 0;
  for (int i = 0; i < nc; i++) any_dyn |= dyn[i].nrun > 0;
  if (any_dyn) {
    if (large)
      fprintf(f, "### Dynamics at large rotation: the full load as a step (P L^2/(E I) = 5 on the cantilever)\n\n"
                 "As in the table above, with the full static load applied at t = 0 and held: the tip swings through "
                 "large rotations and back. \"diverged\": the run was stopped by the divergence monitor (energy "
                 "above the load's work by 10x the energy scale), which is what the linearised Newmark step does "
                 "wherever dt does not resolve the motion. Generalized-alpha: rho_inf 0.9, Newton on the "
                 "co-rotational residual with the symmetric consistent tangent, tolerance 1e-6.\n\n");
    else
      fprintf(f, "### Dynamics: step response against CalculiX *DYNAMIC NLGEOM\n\n");
    if (!large)
    fprintf(f, "Half the full static load is applied at t = 0 and held (no damping). Reference: CalculiX *DYNAMIC "
               "NLGEOM (HHT, its default alpha = -0.05: numerical damping of the first mode ~1e-6 of critical at this "
               "step) in fixed increments dt = T1/100, T1 the first period. \"CalculiX\" rows: the same at the given "
               "dt. cofem uses CalculiX's C3D4 mass matrix (the one-point rule, see the eigenfrequencies) so that both integrate the same discrete "
               "model. s = u . e, the probe displacement along the direction of the reference's largest displacement; "
               "first peak = first local maximum of s, period = time between its first two maxima (both interpolated "
               "by a parabola). Errors relative to the reference; RMS: the root mean square of s - s_ref over the run's "
               "samples within the reference's span, relative to max |s_ref|. Energy drift: the total energy "
               "K + U - F . u at the run's end (0 at the start, conserved by the exact motion of the undamped part "
               "under its constant load), relative to the largest work F . u of the load during the run. Cost: PCG "
               "iterations per step (all Newton iterations of generalized-alpha together), Newton iterations per "
               "step and wall time per step (one core).\n\n");
    fprintf(f, "| case | dt [s] | dt / T1 | solver | first peak s [m] | peak error | period [s] | period error | "
               "RMS | energy drift | PCG iterations / step | Newton / step | ms / step | warnings |\n");
    fprintf(f, "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
    for (int i = 0; i < nc; i++) {
      Dyn* D = &dyn[i];
      if (!D->nrun) continue;
      const Run* ref = &D->run[0];
      for (int q = 0; q < D->nrun; q++) {
        const Run* r = &D->run[q];
        char peak[64], pe[64], per[64], perr[64], it[32] = "", nw[32] = "", rms[32] = "n/a", warn[96] = "";
        char en[32] = "", ms[32] = "";
        if (r->has_energy) snprintf(en, sizeof en, "%+.2f%%", 100 * r->energy_drift);
        if (q > 0 && isfinite(r->rms) && !r->failed) snprintf(rms, sizeof rms, "%.2f%%", 100 * r->rms);
        if (r->has_peak) {
          snprintf(peak, sizeof peak, "%.5g", r->s_peak);
          snprintf(pe, sizeof pe, "%+.2f%%", 100 * (r->s_peak - ref->s_peak) / ref->s_peak);
        } else {
          snprintf(peak, sizeof peak, "none (max %.5g)", r->s_max);
          snprintf(pe, sizeof pe, "n/a");
        }
        if (r->has_period) {
          snprintf(per, sizeof per, "%.5g", r->period);
          snprintf(perr, sizeof perr, "%+.2f%%", 100 * (r->period - ref->period) / ref->period);
        } else {
          snprintf(per, sizeof per, "none");
          snprintf(perr, sizeof perr, "n/a");
        }
        if (q == 0) snprintf(pe, sizeof pe, "ref."), snprintf(perr, sizeof perr, "ref.");
        if (r->failed) {
          if (r->diverged)
            snprintf(peak, sizeof peak, "diverged at step %d (t = %.3g s)", r->n + 1, (r->n + 1) * r->dt);
          else
            snprintf(peak, sizeof peak, "diverged at t = %.3g s", r->n ? r->t[r->n - 1] + r->dt : r->dt);
          snprintf(pe, sizeof pe, "n/a");
          snprintf(per, sizeof per, "n/a");
          snprintf(perr, sizeof perr, "n/a");
        }
        const int cofem = strcmp(r->solver, "backward_euler") == 0 || strcmp(r->solver, "newmark") == 0 ||
                          strcmp(r->solver, "generalized_alpha") == 0;
        if (cofem) snprintf(it, sizeof it, "%.1f", (double)r->pcg_iters / (r->n ? r->n : 1));
        if (cofem) {
          const double msv = 1e3 * r->seconds / (r->n + r->diverged ? r->n + r->diverged : 1);
          snprintf(ms, sizeof ms, msv < 100 ? "%.1f" : "%.0f", msv);
        }
        if (strcmp(r->solver, "generalized_alpha") == 0)
          snprintf(nw, sizeof nw, "%.2f%s", (double)r->newton_iters / (r->n ? r->n : 1), r->step_cuts ? " (halved)" : "");
        else if (cofem)
          snprintf(nw, sizeof nw, "1 (linearised)");
        if (r->pcg_capped || r->inverted)
          snprintf(warn, sizeof warn, "%d of %d steps PCG capped, %d with inverted elements", r->pcg_capped, r->n,
                   r->inverted);
        fprintf(f, "| %s | %.4g | %.3g | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", cs[i].name, r->dt,
                r->dt / cs[i].T1,
                q == 0 ? "CalculiX reference" : strcmp(r->solver, "ccx") == 0 ? "CalculiX" :
                strcmp(r->solver, "newmark") == 0 ? "cofem Newmark (linearised)" :
                strcmp(r->solver, "generalized_alpha") == 0 ? "cofem generalized-alpha" : "cofem backward Euler",
                peak, pe, per, perr, rms, en, it, nw, ms, warn);
      }
      fprintf(f, "\nStatic co-rotational displacement under the same load: s = %.5g m (first period T1 = %.4g s).\n\n",
              D->u_static[0] * D->e[0] + D->u_static[1] * D->e[1] + D->u_static[2] * D->e[2], cs[i].T1);
    }
  }
}

/* 1. statics: the probe's displacement against CalculiX NLGEOM, one row per case */
static void write_static_table(FILE* f, const Case* cs, int nc) {
  char b1[32], b2[32], b3[32], b4[32], b5[32], b6[32], b7[32];
  fprintf(f, "### Statics: probe displacement against CalculiX NLGEOM\n\n");
  fprintf(f, "Errors are |u - u_ref| of the probe's (mean) displacement vector, relative to |u_ref| (CalculiX NLGEOM) at "
             "full load; \"max\" is the largest over the load steps; \"field\" is the largest nodal error over the whole "
             "mesh at full load, relative to the largest nodal displacement. \"strain\": the largest principal "
             "Green-Lagrange strain of the reference at full load. \"neo-Hooke\": CalculiX NLGEOM with a neo-Hookean "
             "material of the same small-strain moduli against CalculiX's St Venant-Kirchhoff (the spread between two "
             "hyperelastic laws at that strain). The last column compares cofem's linear solution with CalculiX's "
             "(same mesh, same nodal loads: both solve the same problem).\n\n");
  fprintf(f, "| case | tets / nodes | full load | steps | \\|u_ref\\| [m] | strain | co-rot. full | co-rot. max | "
             "co-rot. field | linear full | linear max | linear field | neo-Hooke vs SVK | linear vs ccx linear |\n");
  fprintf(f, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (int i = 0; i < nc; i++) {
    const Case* c = &cs[i];
    if (!c->static_ok) {
      fprintf(f, "| %s | %d / %d | failed: see the log | | | | | | | | | | | |\n", c->name, c->s.mesh.ntet, c->s.mesh.nnode);
      continue;
    }
    fprintf(f, "| %s | %d / %d | %.4g %s | %d | %.5g | %.2f%% | %s | %s | %s | %s | %s | %s | %s | %.1e |\n", c->name,
            c->s.mesh.ntet, c->s.mesh.nnode, c->load, c->twist.count ? "N m" : "N", c->nstep, c->ref_mag,
            100 * c->strain_max, pct(c->e_cr_full, b1), pct(c->e_cr_max, b2), pct(c->field_err_cr, b5),
            pct(c->e_lin_full, b3), pct(c->e_lin_max, b4), pct(c->field_err_lin, b6),
            c->have_nh ? pct(c->e_nh_full, b7) : "-", c->e_lin_consistency);
  }
}

/* 2. the elastica and twist comparisons of the cases that have them */
static void write_static_notes(FILE* f, const Case* cs, int nc) {
  char b1[32], b2[32], b3[32], b4[32], b5[32];
  for (int i = 0; i < nc; i++) {
    const Case* c = &cs[i];
    if (!c->static_ok) continue;
    if (c->spec.elastica) {
      int L = c->nstep - 1;
      fprintf(f, "\n**%s against the inextensible elastica** (computed by the harness; tip load P along -z, "
                 "P L^2/(E I) = %.3g at full load). Errors relative to the elastica's |u| at full load.\n\n",
              c->name, c->elastica_a);
      fprintf(f, "| solution | tip u_x [m] | tip u_z [m] | error full | error max |\n|---|---:|---:|---:|---:|\n");
      fprintf(f, "| elastica | %.4f | %.4f | | |\n", c->u_el[L][0], c->u_el[L][2]);
      fprintf(f, "| CalculiX NLGEOM | %.4f | %.4f | %s | %s |\n", c->u_ccx[L][0], c->u_ccx[L][2], pct(c->el_ccx_full, b1),
              pct(c->el_ccx_max, b2));
      fprintf(f, "| cofem co-rot. | %.4f | %.4f | %s | %s |\n", c->u_cr[L][0], c->u_cr[L][2], pct(c->el_cr_full, b3),
              pct(c->el_cr_max, b4));
      fprintf(f, "| linear FEM | %.4f | %.4f | %s | |\n", c->u_lin[L][0], c->u_lin[L][2], pct(c->el_lin_full, b5));
      fprintf(f, "\nLinear FE tip deflection / shear-flexible beam theory (P L^3/3EI + P L/kGA): %.4f.\n", c->beam_ratio);
    }
    if (c->twist.count) {
      int L = c->nstep - 1;
      fprintf(f, "\n**%s twist** of the tip section about x at full load: CalculiX NLGEOM %.2f deg, cofem co-rot. "
                 "%.2f deg, linear %.2f deg.\n", c->name, c->tw_ccx[L] * 180 / M_PI, c->tw_cr[L] * 180 / M_PI,
              c->tw_lin[L] * 180 / M_PI);
      double emax = 0;
      for (int q = 0; q < c->nstep; q++) emax = fmax(emax, fabs(c->tw_cr[q] - c->tw_ccx[q]));
      fprintf(f, "Largest twist difference over the path %.3f deg.\n", emax * 180 / M_PI);
    }
  }
}

/* 3. eigenfrequencies against CalculiX *FREQUENCY, a table per case */
static void write_modes_table(FILE* f, const Case* cs, int nc) {
  fprintf(f, "\n### Eigenfrequencies: cofem modal analysis against CalculiX *FREQUENCY\n\n");
  fprintf(f, "cofem's modal analysis (`cf_modal_solve`) with three mass matrices on the same stiffness: CalculiX's "
             "(its element's stiffness rule: one point for C3D4, rho V/16 per node pair; the 4-point Gauss rule for "
             "C3D10; `cf_mass_calculix`); the exact consistent mass (C3D4: rho V/20 (1 + delta_ab)); the lumped mass "
             "(C3D10: HRZ). Errors relative to CalculiX.\n\n");
  for (int i = 0; i < nc; i++) {
    const Case* c = &cs[i];
    if (!c->modes_ok) continue;
    fprintf(f, "| %s mode | CalculiX [Hz] | cofem, %s mass [Hz] | error | cofem, consistent mass [Hz] | error | "
               "cofem, lumped mass [Hz] | error |\n|---:|---:|---:|---:|---:|---:|---:|---:|\n", c->name,
            c->npe == 4 ? "one-point" : "4-point");
    for (int q = 0; q < c->nmodes; q++)
      fprintf(f, "| %d | %.3f | %.3f | %+.5f%% | %.3f | %+.3f%% | %.3f | %+.2f%% |\n", q + 1, c->hz_ccx[q], c->hz_cf1[q],
              100 * (c->hz_cf1[q] - c->hz_ccx[q]) / c->hz_ccx[q], c->hz_cf[q],
              100 * (c->hz_cf[q] - c->hz_ccx[q]) / c->hz_ccx[q], c->hz_cf_lumped[q],
              100 * (c->hz_cf_lumped[q] - c->hz_ccx[q]) / c->hz_ccx[q]);
    fprintf(f, "\n");
  }
}

/* 5. the bounds (lug, hinge; every case with --check): *failures counts those not met */
static void write_bounds(FILE* f, const Case* cs, int nc, int check_mode, int* failures) {
  char b1[32];
  fprintf(f, "### Bounds (lug, hinge)\n\n| case | bound | value | result |\n|---|---|---:|---|\n");
  for (int i = 0; i < nc; i++) {
    const Case* c = &cs[i];
    if (!c->spec.check && !check_mode) continue;
    int ok;
    ok = c->static_ok && c->e_cr_full < CHECK_CR;
    *failures += !ok;
    fprintf(f, "| %s | co-rot. within %.0f%% of CalculiX NLGEOM at full load | %s | %s |\n", c->name, 100 * CHECK_CR,
            c->static_ok ? pct(c->e_cr_full, b1) : "-", ok ? "pass" : "FAIL");
    ok = c->static_ok && c->e_lin_full > CHECK_LIN;
    *failures += !ok;
    fprintf(f, "| %s | linear FEM off by more than %.0f%% | %s | %s |\n", c->name, 100 * CHECK_LIN,
            c->static_ok ? pct(c->e_lin_full, b1) : "-", ok ? "pass" : "FAIL");
    double worst = INFINITY, worst_c = INFINITY;
    if (c->modes_ok) {
      worst = worst_c = 0;
      for (int q = 0; q < NCHECK_MODES; q++) {
        worst = fmax(worst, fabs(c->hz_cf1[q] - c->hz_ccx[q]) / c->hz_ccx[q]);
        worst_c = fmax(worst_c, fabs(c->hz_cf[q] - c->hz_ccx[q]) / c->hz_ccx[q]);
      }
    }
    ok = worst < CHECK_FREQ;
    *failures += !ok;
    fprintf(f, "| %s | first %d eigenfrequencies within %.1f%% (the same mass matrix as CalculiX) | %s | %s |\n", c->name,
            NCHECK_MODES, 100 * CHECK_FREQ, c->modes_ok ? pct4(worst, b1) : "-", ok ? "pass" : "FAIL");
    fprintf(f, "| %s | first %d eigenfrequencies within %.1f%% (cofem's consistent mass; not asserted) | %s | %s |\n",
            c->name, NCHECK_MODES, 100 * CHECK_FREQ, c->modes_ok ? pct(worst_c, b1) : "-",
            worst_c < CHECK_FREQ ? "pass" : "not met: CalculiX's mass is its element's integration rule");
  }
  fprintf(f, "\n");
}

static void write_tables(FILE* f, Case* cs, int nc, Dyn* dyn, int check_mode, int* failures) {
  write_static_table(f, cs, nc);
  write_static_notes(f, cs, nc);
  write_modes_table(f, cs, nc);
  /* 4. dynamics */
  write_dyn_table(f, cs, nc, dyn, 0);
  write_dyn_table(f, cs, nc, dyn + nc, 1);
  write_bounds(f, cs, nc, check_mode, failures);
}

/* replace the text between the generated-section markers of a Markdown file (create it if needed) */
static int update_doc(const char* path, const char* tables_path, const char* img_prefix, Case* cs, int nc, Dyn* dyn) {
  static const char* BEGIN = "<!-- BEGIN accuracy (generated by `cofem accuracy`; do not edit by hand) -->";
  static const char* END = "<!-- END accuracy -->";
  char* old = NULL;
  FILE* f = fopen(path, "rb");
  if (f) {
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    old = malloc(n + 1);
    if (fread(old, 1, n, f) != (size_t)n) n = 0;
    old[n] = 0;
    fclose(f);
  }
  const char* b = old ? strstr(old, BEGIN) : NULL;
  const char* e = b ? strstr(b, END) : NULL;
  char tmp[CF_PATH_MAX + 8];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE* o = fopen(tmp, "w");
  if (!o) { free(old); return cf_error(CF_ERR_IO, "%s: cannot write", tmp); }
  if (b && e) fwrite(old, 1, b - old, o);
  else fprintf(o, "# Accuracy against CalculiX\n\nRegenerated by `build/cofem accuracy` (see host/cli/cmd_accuracy.c).\n\n");
  fprintf(o, "%s\n\n", BEGIN);
  FILE* t = fopen(tables_path, "r");
  if (t) {
    char buf[4096];
    size_t k;
    while ((k = fread(buf, 1, sizeof buf, t)) > 0) fwrite(buf, 1, k, o);
    fclose(t);
  }
  fprintf(o, "### Plots\n\n");
  for (int i = 0; i < nc; i++) {
    if (cs[i].static_ok)
      fprintf(o, "![%s: probe displacement against load](%saccuracy_%s_static.png)\n\n", cs[i].name, img_prefix, cs[i].name);
    if (dyn[i].nrun)
      fprintf(o, "![%s: step response](%saccuracy_%s_dynamic.png)\n\n", cs[i].name, img_prefix, cs[i].name);
    if (dyn[nc + i].nrun)
      fprintf(o, "![%s: step response at large rotation](%saccuracy_%s_large_dynamic.png)\n\n", cs[i].name, img_prefix,
              cs[i].name);
  }
  fprintf(o, "![eigenfrequencies](%saccuracy_modes.png)\n\n%s", img_prefix, END);
  if (b && e) fputs(e + strlen(END), o);
  else fprintf(o, "\n");
  fclose(o);
  free(old);
  if (rename(tmp, path) != 0) return cf_error(CF_ERR_IO, "%s: cannot replace: %s", path, strerror(errno));
  return CF_OK;
}

static int usage_accuracy(void) {
  fprintf(stderr, "usage: cofem accuracy [SCENE ...] [--cases lug,hinge,cantilever,cantilever_coarse,cantilever_box,cantilever_slender,strip,lug_inplane] [--out DIR] [--docs DIR] "
                  "[--no-docs] [--no-dynamics] [--dt-ref-only] [--reuse-ccx] [--large-steps N] [--no-plots] [--check]\n");
  return 2;
}

/* the options of `cofem accuracy` */
typedef struct AccOpts {
  const char* out_dir;
  const char* docs_dir;
  const char* cases;
  int no_docs, no_dyn, no_plots, check, docs_given;
  const char* scenes[32];
  int nscenes;
} AccOpts;

/* 1. options: 0, or the exit status of a usage error */
static int acc_parse(int argc, char** argv, AccOpts* o) {
  *o = (AccOpts){.out_dir = "out/accuracy", .docs_dir = COFEM_SOURCE_DIR "/docs"};
  for (int i = 2; i < argc; i++) {
    const char* a = argv[i];
    if (!strcmp(a, "--out") && i + 1 < argc) o->out_dir = argv[++i];
    else if (!strcmp(a, "--docs") && i + 1 < argc) o->docs_dir = argv[++i], o->docs_given = 1;
    else if (!strcmp(a, "--cases") && i + 1 < argc) o->cases = argv[++i];
    else if (!strcmp(a, "--no-docs")) o->no_docs = 1;
    else if (!strcmp(a, "--no-dynamics")) o->no_dyn = 1;
    else if (!strcmp(a, "--no-plots")) o->no_plots = 1;
    else if (!strcmp(a, "--check")) o->check = 1;
    else if (!strcmp(a, "--reuse-ccx")) g_reuse_ccx = 1;
    else if (!strcmp(a, "--dt-ref-only")) g_dt_ref_only = 1;
    else if (!strcmp(a, "--large-steps") && i + 1 < argc) {
      g_large_steps = atoi(argv[++i]);
      if (g_large_steps < 10 || g_large_steps > 10000) return usage_accuracy();
    }
    else if (a[0] == '-') return usage_accuracy();
    else if (o->nscenes < 32) o->scenes[o->nscenes++] = a;
    else return usage_accuracy();
  }
  if (o->cases) { /* every name one of the cases: a typo is an error, not a case left out */
    char buf[1024], list[512] = "";
    snprintf(buf, sizeof buf, "%s", o->cases);
    for (int b = 0; b < NBUILTIN; b++)
      snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", b ? ", " : "", BUILTIN[b].name);
    for (char* tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
      int known = 0;
      for (int b = 0; b < NBUILTIN; b++) known |= !strcmp(tok, BUILTIN[b].name);
      if (!known) {
        fprintf(stderr, "cofem: error: --cases %s: no case '%s'; the cases are %s\n", o->cases, tok, list);
        return 2;
      }
    }
  }
  return 0;
}

/* 2. --check: the quick set, and the elastica against its closed form: 1 if that is off */
static int acc_self_check(AccOpts* o) {
  o->no_docs = o->no_plots = o->no_dyn = 1;
  if (!o->cases && !o->nscenes) o->cases = "lug,hinge,lug_o2";
  /* the elastica against the closed form: theta' = sqrt(2 a (sin theta_L - sin theta)) gives
   * x_L = sqrt(2 sin theta_L / a); quadrature for a = 5: u_x = -0.3876278, u_z = -0.7137923 */
  double ux, uz;
  elastica(5.0, &ux, &uz);
  printf("elastica at P L^2/EI = 5: u_x/L = %.7f, u_z/L = %.7f (closed form -0.3876278, -0.7137923)\n", ux, uz);
  if (fabs(ux + 0.3876278) > 2e-6 || fabs(uz + 0.7137923) > 2e-6) {
    fprintf(stderr, "cofem accuracy: the elastica is off\n");
    return 1;
  }
  return 0;
}

/* 3. the case list: the scenes given (a built-in case's checks when its scene is named), else the
 * built-in cases (those of --cases) */
/* name is one of the comma-separated cases (not a part of one: "lug" is not in "lug_o2") */
static int case_listed(const char* cases, const char* name) {
  const size_t len = strlen(name);
  for (const char* p = cases; (p = strstr(p, name)) != NULL; p += len)
    if ((p == cases || p[-1] == ',') && (p[len] == ',' || p[len] == '\0')) return 1;
  return 0;
}

static int acc_case_list(const AccOpts* o, const CaseSpec** specs, char (*paths)[CF_PATH_MAX]) {
  int nc = 0;
  if (o->nscenes) {
    for (int i = 0; i < o->nscenes; i++) {
      specs[nc] = &GENERIC;
      for (int b = 0; b < NBUILTIN; b++)
        if (strstr(o->scenes[i], BUILTIN[b].scene)) specs[nc] = &BUILTIN[b];
      snprintf(paths[nc++], CF_PATH_MAX, "%s", o->scenes[i]);
    }
  } else {
    const char* cases = o->cases;
    for (int b = 0; b < NBUILTIN; b++) {
      if (cases && !case_listed(cases, BUILTIN[b].name)) continue;
      specs[nc] = &BUILTIN[b];
      snprintf(paths[nc++], CF_PATH_MAX, "%s/%s", COFEM_SOURCE_DIR, BUILTIN[b].scene);
    }
  }
  return nc;
}

/* 4. one case: statics, modes, dynamics (dyn: its runs, dyn_large: the large-rotation ones);
 * the number of errors */
static int acc_run_case(Case* c, const CaseSpec* spec, const char* path, const AccOpts* o, Dyn* dyn, Dyn* dyn_large) {
  const char* out_dir = o->out_dir;
  int errors = 0;
  printf("case %s: %s\n", spec->name[0] ? spec->name : path, spec->title);
  fflush(stdout);
  int st = case_setup(c, spec, path, out_dir);
  if (st >= 0) {
    printf("  %s: %d tets, %d nodes; load %.4g %s; probe %s (%d nodes)\n", c->s.mesh_path, c->s.mesh.ntet,
           c->s.mesh.nnode, c->load, c->twist.count ? "N m" : "N", c->probe.name, c->probe.count);
    st = write_mesh(c, "mesh.inp", 1.0);
  }
  if (st >= 0) {
    c->have_nh = !o->check;
    st = run_statics(c);
    if (st >= 0) st = write_static_csv(c, out_dir);
    if (st >= 0)
      printf("  statics: |u_ref| %.5g m; co-rot. %.3f%% (max %.3f%%), linear %.2f%% (max %.2f%%); linear vs ccx linear %.1e\n",
             c->ref_mag, 100 * c->e_cr_full, 100 * c->e_cr_max, 100 * c->e_lin_full, 100 * c->e_lin_max,
             c->e_lin_consistency);
  }
  if (st < 0) { fprintf(stderr, "cofem accuracy: %s: %s\n", c->name, cf_last_error()); errors++; }
  if (c->s.mesh.nnode && c->spec.modes) {
    st = run_modes(c);
    if (st >= 0) {
      double worst = 0;
      double worst_c = 0;
      for (int q = 0; q < NCHECK_MODES; q++) {
        worst = fmax(worst, fabs(c->hz_cf1[q] - c->hz_ccx[q]) / c->hz_ccx[q]);
        worst_c = fmax(worst_c, fabs(c->hz_cf[q] - c->hz_ccx[q]) / c->hz_ccx[q]);
      }
      printf("  modes: f1 %.3f Hz (CalculiX %.3f Hz); first %d within %.5f%% (CalculiX's mass rule), %.3f%% (consistent)\n",
             c->hz_cf1[0], c->hz_ccx[0], NCHECK_MODES, 100 * worst, 100 * worst_c);
    } else {
      fprintf(stderr, "cofem accuracy: %s: %s\n", c->name, cf_last_error());
      errors++;
    }
    if (st >= 0 && c->spec.dynamics && !o->no_dyn) {
      st = run_dynamics(c, dyn, out_dir, c->spec.dyn_fraction, "");
      if (st < 0) { fprintf(stderr, "cofem accuracy: %s: %s\n", c->name, cf_last_error()); errors++; dyn->nrun = 0; }
      if (st >= 0 && c->spec.dyn_large > 0) {
        st = run_dynamics(c, dyn_large, out_dir, c->spec.dyn_large, "_large");
        if (st < 0) {
          fprintf(stderr, "cofem accuracy: %s (large rotation): %s\n", c->name, cf_last_error());
          errors++;
          dyn_large->nrun = 0;
        }
      }
    }
  }
  printf("  CalculiX %.1f s, cofem %.1f s\n", c->seconds_ccx, c->seconds_cf);
  fflush(stdout);
  return errors;
}

/* 5. the tables (OUT/errors.md, echoed on stdout), the plots, the documentation page; the number
 * of errors, *failures: the bounds not met */
static int acc_report(const AccOpts* o, Case* cs, int nc, Dyn* dyn, int* failures) {
  int errors = 0;
  char tables[CF_PATH_MAX + 32];
  snprintf(tables, sizeof tables, "%s/errors.md", o->out_dir);
  FILE* f = fopen(tables, "w");
  if (!f) { fprintf(stderr, "cofem accuracy: %s: cannot write\n", tables); errors++; }
  else {
    write_tables(f, cs, nc, dyn, o->check, failures);
    fclose(f);
  }
  if (f) {
    FILE* t = fopen(tables, "r");
    char buf[4096];
    size_t k;
    while (t && (k = fread(buf, 1, sizeof buf, t)) > 0) fwrite(buf, 1, k, stdout);
    if (t) fclose(t);
  }
  if (!o->no_plots) {
    char img[CF_PATH_MAX + 16], cmd[4 * CF_PATH_MAX];
    if (o->no_docs) snprintf(img, sizeof img, "%s", o->out_dir);
    else snprintf(img, sizeof img, "%s/img", o->docs_dir);
    cf_make_dirs(img);
    /* a python3 with numpy and matplotlib: $COFEM_PYTHON, else Debian's (a pyenv shim may lack them) */
    const char* py = getenv("COFEM_PYTHON");
    if (!py || !py[0]) py = access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
    snprintf(cmd, sizeof cmd, "'%s' '%s/tools/plot_accuracy.py' '%s' '%s'", py, COFEM_SOURCE_DIR, o->out_dir, img);
    if (system(cmd) != 0) { fprintf(stderr, "cofem accuracy: the plots failed (%s)\n", cmd); errors++; }
  }
  if (!o->no_docs) {
    char doc[CF_PATH_MAX + 16];
    snprintf(doc, sizeof doc, "%s/accuracy.md", o->docs_dir);
    int st = update_doc(doc, tables, "img/", cs, nc, dyn);
    if (st < 0) { fprintf(stderr, "cofem accuracy: %s\n", cf_last_error()); errors++; }
    else printf("wrote %s\n", doc);
  }
  return errors;
}

int cf_cmd_accuracy(int argc, char** argv) {
  AccOpts o;
  int rc = acc_parse(argc, argv, &o);
  if (rc) return rc;
  int self_fail = o.check ? acc_self_check(&o) : 0;
  if ((o.cases || o.nscenes || o.no_dyn || g_dt_ref_only) && !o.docs_given && !o.no_docs) {
    /* the page documents the full set: a partial run does not overwrite it unless asked to */
    printf("(a partial run: docs/accuracy.md is left alone; --docs DIR writes it anyway)\n");
    o.no_docs = 1;
  }
  if (system("command -v ccx >/dev/null 2>&1") != 0) {
    fprintf(stderr, "cofem accuracy: CalculiX (ccx) is not installed (Debian: calculix-ccx)\n");
    return 77;
  }
  int st = cf_make_dirs(o.out_dir);
  if (st < 0) { fprintf(stderr, "cofem accuracy: %s\n", cf_last_error()); return 1; }
  const CaseSpec* specs[32];
  char paths[32][CF_PATH_MAX];
  int nc = acc_case_list(&o, specs, paths);
  if (nc == 0) return usage_accuracy();
  Case* cs = calloc(nc, sizeof(Case));
  Dyn* dyn = calloc(2 * (size_t)nc, sizeof(Dyn)); /* [nc + i]: the large-rotation runs */
  int errors = 0, failures = 0;
  double wall0 = cf_wall_time();
  for (int i = 0; i < nc; i++) errors += acc_run_case(&cs[i], specs[i], paths[i], &o, &dyn[i], &dyn[nc + i]);
  errors += acc_report(&o, cs, nc, dyn, &failures);
  printf("accuracy: %d cases in %.1f s; %d errors; %d bounds failed", nc, cf_wall_time() - wall0, errors, failures);
  if (g_ccx_failed) printf("; %d CalculiX diagnostic run%s failed (see the 'ccx failed' lines)", g_ccx_failed, g_ccx_failed == 1 ? "" : "s");
  printf("\n");
  for (int i = 0; i < nc; i++) {
    for (int q = 0; q < dyn[i].nrun; q++) run_free(&dyn[i].run[q]);
    for (int q = 0; q < dyn[nc + i].nrun; q++) run_free(&dyn[nc + i].run[q]);
    case_free(&cs[i]);
  }
  free(cs);
  free(dyn);
  return (errors || self_fail || (o.check && failures)) ? 1 : 0;
}
