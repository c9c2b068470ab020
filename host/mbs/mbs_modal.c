/* Modal (flexible) bodies in the multibody core (issue 9): cofem/mbs_modal.h, docs/mbs.md
 * "Modal bodies". Natural-coordinate floating frame z = (r, e1, e2, e3) plus modal amplitudes y;
 * a node is at x_p = r + sum_a rho_pa e_a, rho_p = s_p + Phi_p y (local, deformed). With
 * L_p = [I, rho_p1 I, rho_p2 I, rho_p3 I, A Phi_p] (xdot_p = L_p zdot) the mass matrix is
 * M = sum_pq M_pq L_p^T L_q (paper 000 eq. 14), from the invariants (cofem/reduce.h):
 *   frame-frame   Mbar(y) (x) I3, Mbar = [m, c(y)^T; c(y), J(y)], c(y)_a = c_a + P_a.y,
 *                 J(y)_ab = J_ab + (T_ab + T_ba).y + y^T S_ab y
 *   r-y           A P                    (column k: sum_b e_b P_bk)
 *   e_a-y         sum_b e_b H_ab(y)^T,   H_ab,k = T_ab,k + sum_j y_j S_ab,jk
 *   y-y           sum_a S_aa (= I for an orthonormalised reduction; A^T A = I used)
 * Quadratic velocity forces (eq. 15), -sum_pq M_pq L_p^T (Ldot_q zdot), Ldot_q zdot = 2 Adot Phi_q ydot:
 *   Q_r   = -2 sum_b edot_b (P_b . ydot)
 *   Q_ea  = -2 sum_b edot_b (H_ab . ydot)
 *   Q_yj  = -2 sum_cb (e_c . edot_b) sum_k S_cb,jk ydot_k
 * The rigid code carries the frame with the constant Mbar(0) and the amplitude blocks with I; the
 * functions here add the rest (Delta M), the modal stiffness and damping, and the forces. */
#include <stdio.h>
#include <stdlib.h>

#include "cofem/mbs_modal.h"
#include "cofem/output.h"
#include "mbs/mbs_internal.h"

#define CF_MBS_MODAL_MAXM CF_MBS_MODAL_MAX_MODES /* (stack scratch of 12 x this) */

struct cfMbsModalBody {
  int body, blk0, nblk, nm, nnode;
  double mass, c[3], J[9];
  double *P, *T, *S, *Myy, *w2, *zeta; /* [3 nm], [9 nm], [9 nm nm], [nm nm], [nm], [nm] */
  double *X, *Phi;                     /* [3 nnode], [3 nnode * nm] row 3p+a */
  int nload;
  cfMbsModalLoad load[CF_MBS_MODAL_MAX_LOADS];
  int npoint;                          /* modal points (joint attachments) */
  double *pt_s, *pt_Phi;               /* [3 npoint] mean rest positions, [3 nm npoint] mean rows */
  double* pt_Th;                       /* [3 nm npoint] a point's small rotation rows (theta = Th y, body axes)
                                          where it is an interface point of the reduction (its motion rows
                                          3..5) or does not move with the modes (zeros) */
  unsigned char* pt_rot;               /* [npoint] 1 where pt_Th holds the point's rotation, else 0 */
  int ndir, cap_dir;                   /* joint directions measured on node sets (cf_mbs__modal_dir) */
  double* dir_Phi;                     /* [3 nm ndir] their rows Psi */
  int gstiff;                          /* cfMbsModalDef.geometric_stiffening */
  double* Kg;                          /* [CF_REDUCTION_NKG nm nm] geometric stiffness per unit load case, or
                                          NULL (no geometric stiffening) */
  double* gs_th;                       /* [3 nm] the modes' interface rotations (body axes) of a free part's
                                          reduction (cf_reduction_interface_rotations), or NULL: the rate
                                          that loads the stiffening is the interface's, not the frame's */
};

cfMbsModalDef cf_mbs_default_modal_def(void) {
  cfMbsModalDef d;
  memset(&d, 0, sizeof d);
  d.body = -1;
  d.first_mode = -1;
  d.nmodes = -1;
  d.damping = -1;
  return d;
}

static int mode_range(const cfReduction* r, const cfMbsModalDef* md, int* f0, int* nm) {
  *f0 = md->first_mode < 0 ? r->nrigid : md->first_mode;
  *nm = md->nmodes < 0 ? r->n - *f0 : md->nmodes;
  if (*f0 < 0 || *nm < 0 || *f0 + *nm > r->n)
    return cf_error(CF_ERR_SCENE, "modal body: modes %d..%d outside the reduction's %d", *f0, *f0 + *nm - 1, r->n);
  if (*nm > CF_MBS_MODAL_MAXM)
    return cf_error(CF_ERR_SCENE, "modal body: %d modes (at most %d)", *nm, CF_MBS_MODAL_MAXM);
  return CF_OK;
}

int cf_mbs_add_modal_body(cfMbsDef* def, const cfMbsBodyDef* frame, const cfMbsModalDef* md) {
  const cfReduction* r = md->red;
  if (!r || !r->orthonormal || !r->basis || !r->P || !r->T || !r->S)
    return cf_error(CF_ERR_SCENE, "modal body '%s': needs an orthonormalised reduction", frame->name);
  if (!md->X) return cf_error(CF_ERR_SCENE, "modal body '%s': needs the mesh's rest positions X", frame->name);
  int f0, nm, st = mode_range(r, md, &f0, &nm);
  if (st < 0) return st;
  if (!(r->mass > 0)) return cf_error(CF_ERR_SCENE, "modal body '%s': reduction has no mass", frame->name);
  if (md->geometric_stiffening < 0 || md->geometric_stiffening > CF_MBS_GSTIFF_ACCELERATIONS)
    return cf_error(CF_ERR_SCENE, "modal body '%s': geometric_stiffening %d (0 off, %d rates and gravity, %d also the "
                    "frame's accelerations)", frame->name, md->geometric_stiffening, CF_MBS_GSTIFF_RATES,
                    CF_MBS_GSTIFF_ACCELERATIONS);
  if (md->geometric_stiffening && (!r->Kg || r->nkg != CF_REDUCTION_NKG))
    return cf_error(CF_ERR_SCENE, "modal body '%s': geometric stiffening needs the reduction's geometric stiffness "
                    "(cf_reduction_geometric; cfReduceOptions.geometric, `cofem reduce --geometric`)", frame->name);
  cfMbsBodyDef b = *frame;
  b.is_virtual = 0;
  b.mass = r->mass;
  double Jc[9];
  for (int i = 0; i < 3; i++) b.com[i] = r->c[i] / r->mass;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) Jc[3 * i + j] = r->J[3 * i + j] - r->mass * b.com[i] * b.com[j];
  double tr = Jc[0] + Jc[4] + Jc[8];
  b.inertia[0] = tr - Jc[0], b.inertia[1] = tr - Jc[4], b.inertia[2] = tr - Jc[8];
  b.inertia[3] = -Jc[1], b.inertia[4] = -Jc[2], b.inertia[5] = -Jc[5];
  if (def->nmodal >= def->cap_modal) {
    int cap = def->cap_modal ? 2 * def->cap_modal : 4;
    void* p = realloc(def->modal, sizeof(cfMbsModalDef) * (size_t)cap);
    if (!p) return cf_error(CF_ERR_NOMEM, "mechanism: out of memory");
    def->modal = p, def->cap_modal = cap;
  }
  int id = cf_mbs_add_body(def, &b);
  if (id < 0) return id;
  cfMbsModalDef* e = &def->modal[def->nmodal++];
  *e = *md;
  e->body = id;
  e->npoint = 0; /* points are owned by the definition: cf_mbs_add_modal_point */
  return id;
}

static cfMbsModalDef* modal_def_of(cfMbsDef* def, int body) {
  for (int i = 0; i < def->nmodal; i++)
    if (def->modal[i].body == body) return &def->modal[i];
  return NULL;
}

int cf_mbs__add_point(cfMbsModalPoint* pts, int* npoint, int max, int mesh_nnode, const char* kind, const char* pkind,
                      const char* bname, const char* name, const int* nodes, int nnode) {
  if (!name || !name[0]) return cf_error(CF_ERR_SCENE, "%s '%s': a %s needs a name", kind, bname, pkind);
  if (cf_mbs__find_point(pts, *npoint, name) >= 0)
    return cf_error(CF_ERR_SCENE, "%s '%s': %s '%s' is defined twice", kind, bname, pkind, name);
  if (*npoint >= max) return cf_error(CF_ERR_SCENE, "%s '%s': more than %d %ss", kind, bname, max, pkind);
  if (!nodes || nnode < 1) return cf_error(CF_ERR_SCENE, "%s '%s': %s '%s' has no nodes", kind, bname, pkind, name);
  for (int k = 0; k < nnode; k++)
    if (nodes[k] < 0 || nodes[k] >= mesh_nnode)
      return cf_error(CF_ERR_SCENE, "%s '%s': %s '%s': node %d does not exist (the mesh has %d)", kind, bname, pkind,
                      name, nodes[k], mesh_nnode);
  cfMbsModalPoint* pt = &pts[*npoint];
  pt->nodes = malloc(sizeof(int) * (size_t)nnode);
  if (!pt->nodes) return cf_error(CF_ERR_NOMEM, "mechanism: out of memory");
  memcpy(pt->nodes, nodes, sizeof(int) * (size_t)nnode);
  pt->nnode = nnode;
  snprintf(pt->name, sizeof pt->name, "%s", name);
  return (*npoint)++;
}

int cf_mbs__find_point(const cfMbsModalPoint* pts, int npoint, const char* name) {
  for (int k = 0; k < npoint; k++)
    if (!strcmp(pts[k].name, name)) return k;
  return -1;
}

int cf_mbs_add_modal_point(cfMbsDef* def, int body, const char* name, const int* nodes, int nnode) {
  cfMbsModalDef* e = modal_def_of(def, body);
  if (!e) return cf_error(CF_ERR_SCENE, "modal point '%s': body %d is not a modal body", name, body);
  return cf_mbs__add_point(e->point, &e->npoint, CF_MBS_MODAL_MAX_POINTS, e->red->nnode, "modal body", "modal point",
                           def->body[body].name, name, nodes, nnode);
}

int cf_mbs_find_modal_point(const cfMbsDef* def, int body, const char* name) {
  for (int i = 0; i < def->nmodal; i++)
    if (def->modal[i].body == body) return cf_mbs__find_point(def->modal[i].point, def->modal[i].npoint, name);
  return -1;
}

/* the modal definitions and their points (cf_mbs_def_free) */
static void cf_mbs__modal_def_free(cfMbsDef* def) {
  for (int i = 0; i < def->nmodal; i++)
    for (int k = 0; k < def->modal[i].npoint; k++) free(def->modal[i].point[k].nodes);
  free(def->modal);
}

int cf_mbs_add_modal_load(cfMbsDef* def, int body, const cfMbsModalLoad* load) {
  for (int i = 0; i < def->nmodal; i++)
    if (def->modal[i].body == body) {
      cfMbsModalDef* e = &def->modal[i];
      if (e->nload >= CF_MBS_MODAL_MAX_LOADS)
        return cf_error(CF_ERR_SCENE, "modal body: more than %d loads", CF_MBS_MODAL_MAX_LOADS);
      if (!load->at_point && (load->node < 0 || load->node >= e->red->nnode))
        return cf_error(CF_ERR_SCENE, "modal body: load node %d does not exist", load->node);
      if (load->has_scale && load->scale.type == CF_MBS_FUNC_TABLE) /* its points would not be copied */
        return cf_error(CF_ERR_SCENE, "modal body '%s': a table function as a load's \"scale\" is not supported at a "
                        "flexible body's node set (rigid bodies' forces and torques, drivers and actuators take one)",
                        def->body[body].name);
      e->load[e->nload] = *load;
      return e->nload++;
    }
  return cf_error(CF_ERR_SCENE, "body %d is not a modal body", body);
}

/* ---- model hooks ---- */
int cf_mbs__modal_nblock(const cfMbsDef* def) {
  int n = 0;
  for (int i = 0; i < def->nmodal; i++) {
    int f0, nm;
    if (mode_range(def->modal[i].red, &def->modal[i], &f0, &nm) < 0) continue;
    n += (nm + 11) / 12;
  }
  return n;
}

static void cf_mbs__modal_free(cfMbsModel* m) {
  for (int i = 0; i < m->nmodal && m->modal; i++) {
    struct cfMbsModalBody* mb = &m->modal[i];
    free(mb->P), free(mb->T), free(mb->S), free(mb->Myy), free(mb->w2), free(mb->zeta), free(mb->X), free(mb->Phi);
    free(mb->pt_s), free(mb->pt_Phi), free(mb->pt_Th), free(mb->pt_rot), free(mb->dir_Phi), free(mb->Kg), free(mb->gs_th);
  }
  free(m->modal);
  m->modal = NULL;
  m->nmodal = 0;
}

/* after the rigid bodies: copy the reductions, fill the amplitude blocks and the frames' Mbar */
static int cf_mbs__modal_compile(const cfMbsDef* def, cfMbsModel* m) {
  if (def->nmodal == 0) return CF_OK;
  m->modal = calloc((size_t)def->nmodal, sizeof *m->modal);
  if (!m->modal) return cf_error(CF_ERR_NOMEM, "mechanism: out of memory");
  m->nmodal = def->nmodal;
  int nextb = def->nbody;
  for (int i = 0; i < def->nmodal; i++) {
    const cfMbsModalDef* md = &def->modal[i];
    const cfReduction* r = md->red;
    struct cfMbsModalBody* mb = &m->modal[i];
    int f0, nm, st = mode_range(r, md, &f0, &nm);
    if (st < 0) return st;
    if (md->body < 0 || md->body >= def->nbody) return cf_error(CF_ERR_SCENE, "modal body %d: no frame body", i);
    int n = r->n, nn = r->nnode;
    mb->body = md->body, mb->nm = nm, mb->nnode = nn, mb->blk0 = nextb, mb->nblk = (nm + 11) / 12;
    mb->mass = r->mass;
    memcpy(mb->c, r->c, sizeof mb->c), memcpy(mb->J, r->J, sizeof mb->J);
    int k1 = nm ? nm : 1;
    mb->P = malloc(sizeof(double) * 3 * k1), mb->T = malloc(sizeof(double) * 9 * k1);
    mb->S = malloc(sizeof(double) * 9 * (size_t)k1 * k1), mb->Myy = malloc(sizeof(double) * (size_t)k1 * k1);
    mb->w2 = malloc(sizeof(double) * k1), mb->zeta = malloc(sizeof(double) * k1);
    mb->X = malloc(sizeof(double) * 3 * (size_t)nn), mb->Phi = malloc(sizeof(double) * 3 * (size_t)nn * k1);
    if (!mb->P || !mb->T || !mb->S || !mb->Myy || !mb->w2 || !mb->zeta || !mb->X || !mb->Phi)
      return cf_error(CF_ERR_NOMEM, "mechanism: out of memory");
    for (int k = 0; k < nm; k++) {
      for (int a = 0; a < 3; a++) mb->P[a * nm + k] = r->P[a * n + f0 + k];
      for (int ab = 0; ab < 9; ab++) mb->T[ab * nm + k] = r->T[ab * n + f0 + k];
      mb->w2[k] = r->omega2[f0 + k];
      mb->zeta[k] = md->damping >= 0 ? md->damping : r->zeta[f0 + k];
    }
    for (int ab = 0; ab < 9; ab++)
      for (int j = 0; j < nm; j++)
        for (int k = 0; k < nm; k++)
          mb->S[((size_t)ab * nm + j) * nm + k] = r->S[((size_t)ab * n + f0 + j) * n + f0 + k];
    for (int j = 0; j < nm; j++)
      for (int k = 0; k < nm; k++) {
        double s = 0;
        for (int a = 0; a < 3; a++) s += mb->S[((size_t)(4 * a) * nm + j) * nm + k];
        mb->Myy[(size_t)j * nm + k] = s;
      }
    for (int p = 0; p < 3 * nn; p++)
      for (int k = 0; k < nm; k++) mb->Phi[(size_t)p * nm + k] = r->basis[(size_t)(f0 + k) * r->ndof + p];
    memcpy(mb->X, md->X, sizeof(double) * 3 * (size_t)nn); /* rest positions s_p */
    mb->gstiff = md->geometric_stiffening;
    if (md->geometric_stiffening) { /* the modes used, of every load case */
      mb->Kg = malloc(sizeof(double) * CF_REDUCTION_NKG * (size_t)k1 * k1);
      if (!mb->Kg) return cf_error(CF_ERR_NOMEM, "mechanism: out of memory");
      for (int c = 0; c < CF_REDUCTION_NKG; c++)
        for (int j = 0; j < nm; j++)
          for (int k = 0; k < nm; k++)
            mb->Kg[((size_t)c * nm + j) * nm + k] = r->Kg[((size_t)c * n + f0 + j) * n + f0 + k];
      double* th = malloc(sizeof(double) * 3 * (size_t)(n > 0 ? n : 1));
      if (!th) return cf_error(CF_ERR_NOMEM, "mechanism: out of memory");
      if (cf_reduction_interface_rotations(r, md->X, th)) {
        mb->gs_th = malloc(sizeof(double) * 3 * (size_t)k1);
        if (!mb->gs_th) { free(th); return cf_error(CF_ERR_NOMEM, "mechanism: out of memory"); }
        memcpy(mb->gs_th, th + 3 * (size_t)f0, sizeof(double) * 3 * (size_t)nm);
      }
      free(th);
    }
    /* modal points: means of their nodes' rest positions and mode rows */
    mb->npoint = md->npoint;
    mb->pt_s = calloc((size_t)(3 * md->npoint + 1), sizeof(double));
    mb->pt_Phi = calloc((size_t)(3 * k1 * md->npoint + 1), sizeof(double));
    mb->pt_Th = calloc((size_t)(3 * k1 * md->npoint + 1), sizeof(double));
    mb->pt_rot = calloc((size_t)md->npoint + 1, 1);
    if (!mb->pt_s || !mb->pt_Phi || !mb->pt_Th || !mb->pt_rot) return cf_error(CF_ERR_NOMEM, "mechanism: out of memory");
    for (int k = 0; k < md->npoint; k++) {
      const cfMbsModalPoint* pt = &md->point[k];
      double wgt = 1.0 / pt->nnode, moves = 0;
      for (int l = 0; l < pt->nnode; l++) {
        int p = pt->nodes[l];
        for (int a = 0; a < 3; a++) {
          mb->pt_s[3 * k + a] += wgt * mb->X[3 * p + a];
          for (int j = 0; j < nm; j++) {
            mb->pt_Phi[((size_t)k * 3 + a) * nm + j] += wgt * mb->Phi[(size_t)(3 * p + a) * nm + j];
            moves = fmax(moves, fabs(mb->Phi[(size_t)(3 * p + a) * nm + j]));
          }
        }
      }
      /* the point's own rotation (the semi-recursive formulation turns a child's joint frame by it): exact at an
       * interface point of the reduction, zero where the set is clamped; unknown elsewhere */
      int ip = cf_mbs__reduction_point_of(r, pt->nodes, pt->nnode);
      if (ip >= 0) {
        const double* mo = r->points[ip].motion;
        for (int a = 0; a < 3; a++)
          for (int j = 0; j < nm; j++) mb->pt_Th[((size_t)k * 3 + a) * nm + j] = mo[(size_t)(3 + a) * r->n + f0 + j];
      }
      mb->pt_rot[k] = ip >= 0 || moves == 0;
    }
    for (int l = 0; l < md->nload; l++)
      if (md->load[l].at_point && (md->load[l].point < 0 || md->load[l].point >= md->npoint))
        return cf_error(CF_ERR_SCENE, "modal body '%s': load %d: modal point %d does not exist",
                        def->body[md->body].name, l, md->load[l].point);
    mb->nload = md->nload;
    memcpy(mb->load, md->load, sizeof mb->load);
    /* the frame: exact Mbar(0) */
    m->body_modal[mb->body] = 1;
    double* Mb = m->body_Mbar + 16 * mb->body;
    Mb[0] = mb->mass;
    for (int a = 0; a < 3; a++) Mb[1 + a] = Mb[4 * (1 + a)] = mb->c[a];
    for (int a = 0; a < 3; a++)
      for (int b = 0; b < 3; b++) Mb[4 * (1 + a) + 1 + b] = mb->J[3 * a + b];
    for (int k = 0; k < 4; k++) m->mref = fmax(m->mref, Mb[5 * k]);
    /* amplitude blocks: unit mass on every coordinate */
    for (int k = 0; k < mb->nblk; k++) {
      int b = nextb++;
      snprintf(m->body_name[b], CF_MBS_NAME_MAX, "%.40s.modes%d", def->body[mb->body].name, k);
      m->body_qadr[b] = m->nq;
      m->body_nq[b] = CF_MBS_BODY_NQ;
      m->nq += CF_MBS_BODY_NQ;
      m->body_modal[b] = 2;
      double* Mk = m->body_Mbar + 16 * b;
      for (int l = 0; l < 4; l++) Mk[5 * l] = 1;
    }
  }
  return CF_OK;
}

const double* cf_mbs__modal_point_rotation(const cfMbsModel* m, int ib, int k) {
  const struct cfMbsModalBody* mb = &m->modal[ib];
  return mb->pt_rot[k] ? mb->pt_Th + (size_t)k * 3 * mb->nm : NULL;
}

const double* cf_mbs__modal_point(const cfMbsModel* m, int ib, int k, double sbar[3], int* frame, int* nm,
                                  int* blk0, int* nblk) {
  const struct cfMbsModalBody* mb = &m->modal[ib];
  if (sbar) memcpy(sbar, mb->pt_s + 3 * k, 3 * sizeof(double));
  if (frame) *frame = mb->body;
  *nm = mb->nm, *blk0 = mb->blk0, *nblk = mb->nblk;
  return mb->pt_Phi + (size_t)k * 3 * mb->nm;
}

/* room for one more direction's rows (3 nm) in mb->dir_Phi: their start, NULL when out of memory */
static double* new_dir(struct cfMbsModalBody* mb, int nm) {
  if (mb->ndir == mb->cap_dir) {
    int cap = mb->cap_dir ? 2 * mb->cap_dir : 8;
    double* p = realloc(mb->dir_Phi, sizeof(double) * 3 * (size_t)(nm ? nm : 1) * cap);
    if (!p) return NULL;
    mb->dir_Phi = p, mb->cap_dir = cap;
  }
  return mb->dir_Phi + (size_t)mb->ndir * 3 * nm;
}

/* The set's direction e measured on its nodes, as an FE body measures it (cf_mbs__fe_axis):
 * d = sum w_i x_i, w_i = Y_i^T C^-1 e (Y_i the rest offsets from the set's mean, C = sum Y_i Y_i^T),
 * so that sum w_i = 0 and sum w_i s_i = e. With x_i = r + A (s_i + Phi_i y): d = A (e + Psi y),
 * Psi = sum w_i Phi_i. A flat set (C singular) measures its small rotation instead: the least-squares
 * theta of u_i = t + theta x Y_i, K theta = sum Y_i x u_i (K = sum |Y_i|^2 I - Y_i Y_i^T, regular unless
 * the set is collinear), Psi y = theta x e (the modal displacements are small in the frame). */
int cf_mbs__modal_dir(cfMbsModel* m, int ib, const int* nodes, int nn, const double e[3], const char* who,
                      const char* set, int* dir) {
  struct cfMbsModalBody* mb = &m->modal[ib];
  int nm = mb->nm;
  *dir = -1;
  double moves = 0;
  for (int l = 0; l < nn; l++)
    for (int k = 0; k < 3 * nm; k++) moves = fmax(moves, fabs(mb->Phi[(size_t)3 * nodes[l] * nm + k]));
  if (nm == 0 || moves == 0) return CF_OK; /* the set is clamped in the reduction: its axes are the frame's */
  double Xm[3] = {0, 0, 0}, C[9] = {0}, size = 0;
  for (int l = 0; l < nn; l++)
    for (int a = 0; a < 3; a++) Xm[a] += mb->X[3 * nodes[l] + a] / nn;
  for (int l = 0; l < nn; l++) {
    const double* X = mb->X + 3 * nodes[l];
    double Y[3] = {X[0] - Xm[0], X[1] - Xm[1], X[2] - Xm[2]};
    for (int a = 0; a < 3; a++)
      for (int b = 0; b < 3; b++) C[3 * a + b] += Y[a] * Y[b];
    size = fmax(size, cf_mbs_norm3(Y));
  }
  double* Psi = new_dir(mb, nm);
  if (!Psi) return cf_error(CF_ERR_NOMEM, "mechanism: out of memory");
  memset(Psi, 0, sizeof(double) * 3 * (size_t)nm);
  double scale = pow(nn * size * size, 3);
  /* the adjugate of C gives C^-1 e */
  double adj[9] = {C[4] * C[8] - C[5] * C[7], C[2] * C[7] - C[1] * C[8], C[1] * C[5] - C[2] * C[4],
                   C[5] * C[6] - C[3] * C[8], C[0] * C[8] - C[2] * C[6], C[2] * C[3] - C[0] * C[5],
                   C[3] * C[7] - C[4] * C[6], C[1] * C[6] - C[0] * C[7], C[0] * C[4] - C[1] * C[3]};
  double det = C[0] * adj[0] + C[1] * adj[3] + C[2] * adj[6];
  if (nn >= 4 && fabs(det) > 1e-12 * scale) {
    double z[3];
    for (int a = 0; a < 3; a++) z[a] = (adj[3 * a] * e[0] + adj[3 * a + 1] * e[1] + adj[3 * a + 2] * e[2]) / det;
    for (int l = 0; l < nn; l++) {
      const double* X = mb->X + 3 * nodes[l];
      double w = (X[0] - Xm[0]) * z[0] + (X[1] - Xm[1]) * z[1] + (X[2] - Xm[2]) * z[2];
      for (int a = 0; a < 3; a++)
        for (int j = 0; j < nm; j++) Psi[a * nm + j] += w * mb->Phi[(size_t)(3 * nodes[l] + a) * nm + j];
    }
    return *dir = mb->ndir++, CF_OK;
  }
  /* flat: K = tr(C) I - C, theta = K^-1 sum_i Y_i x Phi_i y, Psi = -[e]x K^-1 sum_i [Y_i]x Phi_i */
  double K[9], tr = C[0] + C[4] + C[8];
  for (int k = 0; k < 9; k++) K[k] = (k % 4 == 0 ? tr : 0) - C[k];
  double ak[9] = {K[4] * K[8] - K[5] * K[7], K[2] * K[7] - K[1] * K[8], K[1] * K[5] - K[2] * K[4],
                  K[5] * K[6] - K[3] * K[8], K[0] * K[8] - K[2] * K[6], K[2] * K[3] - K[0] * K[5],
                  K[3] * K[7] - K[4] * K[6], K[1] * K[6] - K[0] * K[7], K[0] * K[4] - K[1] * K[3]};
  double dk = K[0] * ak[0] + K[1] * ak[3] + K[2] * ak[6];
  if (!(nn >= 3 && fabs(dk) > 1e-9 * scale))
    return cf_error(CF_ERR_SCENE,
                    "%s: the node set '%s' of modal body '%s' has %d node%s on a line: the rotation of its axes cannot "
                    "be measured (a revolute, universal or fixed joint at a modal point needs a set that spans a "
                    "plane; or use a spherical joint, or clamp the set in the reduction)", who, set,
                    m->body_name[mb->body], nn, nn == 1 ? "" : "s");
  double* S = calloc(3 * (size_t)nm, sizeof(double)); /* sum_i Y_i x Phi_i */
  if (!S) return cf_error(CF_ERR_NOMEM, "mechanism: out of memory");
  for (int l = 0; l < nn; l++) {
    const double* X = mb->X + 3 * nodes[l];
    double Y[3] = {X[0] - Xm[0], X[1] - Xm[1], X[2] - Xm[2]};
    const double* P = mb->Phi + (size_t)3 * nodes[l] * nm;
    for (int j = 0; j < nm; j++) {
      S[0 * nm + j] += Y[1] * P[2 * nm + j] - Y[2] * P[1 * nm + j];
      S[1 * nm + j] += Y[2] * P[0 * nm + j] - Y[0] * P[2 * nm + j];
      S[2 * nm + j] += Y[0] * P[1 * nm + j] - Y[1] * P[0 * nm + j];
    }
  }
  for (int j = 0; j < nm; j++) {
    double th[3];
    for (int a = 0; a < 3; a++) th[a] = (ak[3 * a] * S[j] + ak[3 * a + 1] * S[nm + j] + ak[3 * a + 2] * S[2 * nm + j]) / dk;
    double te[3]; /* theta x e */
    cf_mbs_cross3(th, e, te);
    for (int a = 0; a < 3; a++) Psi[a * nm + j] = te[a];
  }
  free(S);
  return *dir = mb->ndir++, CF_OK;
}

/* Direction e (body coordinates) at interface point `point` of the reduction r (cofem/reduce.h):
 * turned by the point's own small rotation th = Theta y (the reduction's motion rows 3..5 of the
 * body's modes first_mode ..), d = A (e + th x e), so Psi_j = Theta_j x e. Exact for both point
 * kinds (a rigid point's set turns with it; an averaging point's rotation is its defined fit), where
 * cf_mbs__modal_dir measures the axis on the set's nodes. */
int cf_mbs__modal_dir_point(cfMbsModel* m, int ib, const cfReduction* r, int first_mode, int point, const double e[3],
                            int* dir) {
  struct cfMbsModalBody* mb = &m->modal[ib];
  const int nm = mb->nm;
  *dir = -1;
  if (point < 0 || point >= r->npoint || first_mode < 0 || first_mode + nm > r->n)
    return cf_error(CF_ERR_SCENE, "mechanism: interface point %d / modes %d.. not in the reduction", point, first_mode);
  double* Psi = new_dir(mb, nm);
  if (!Psi) return cf_error(CF_ERR_NOMEM, "mechanism: out of memory");
  const double* mo = r->points[point].motion;
  for (int j = 0; j < nm; j++) {
    double th[3], te[3];
    for (int b = 0; b < 3; b++) th[b] = mo[(size_t)(3 + b) * r->n + first_mode + j];
    cf_mbs_cross3(th, e, te);
    for (int a = 0; a < 3; a++) Psi[a * nm + j] = te[a];
  }
  return *dir = mb->ndir++, CF_OK;
}

const double* cf_mbs__modal_dir_rows(const cfMbsModel* m, int ib, int dir, int* frame, int* nm, int* blk0, int* nblk) {
  const struct cfMbsModalBody* mb = &m->modal[ib];
  *frame = mb->body, *nm = mb->nm, *blk0 = mb->blk0, *nblk = mb->nblk;
  return mb->dir_Phi + (size_t)dir * 3 * mb->nm;
}

void cf_mbs__modal_point_disp(const cfMbsModel* m, int ib, int k, const double* q, double o[3]) {
  const struct cfMbsModalBody* mb = &m->modal[ib];
  const double* Phi = mb->pt_Phi + (size_t)k * 3 * mb->nm;
  const double *qf = q + m->body_qadr[mb->body], *y = q + m->body_qadr[mb->blk0];
  o[0] = o[1] = o[2] = 0;
  for (int a = 0; a < 3; a++) {
    double ya = 0;
    for (int j = 0; j < mb->nm; j++) ya += Phi[a * mb->nm + j] * y[j];
    for (int i = 0; i < 3; i++) o[i] += qf[3 + 3 * a + i] * ya;
  }
}

/* the amplitudes and their rates at t = 0 */
static void cf_mbs__modal_initial(const cfMbsDef* def, const cfMbsModel* m, double* q, double* qd) {
  for (int i = 0; i < m->nmodal; i++) {
    const struct cfMbsModalBody* mb = &m->modal[i];
    const cfMbsModalDef* md = &def->modal[i];
    int a = m->body_qadr[mb->blk0];
    for (int k = 0; k < mb->nm; k++) {
      q[a + k] = md->y0 ? md->y0[k] : 0;
      qd[a + k] = md->yd0 ? md->yd0[k] : 0;
    }
  }
}

/* body pairs that the modal mass couples: calls pair(a, b, ctx) */
static void cf_mbs__modal_pairs(const cfMbsModel* m, void (*pair)(int a, int b, void* ctx), void* ctx) {
  for (int i = 0; i < m->nmodal; i++) {
    const struct cfMbsModalBody* mb = &m->modal[i];
    for (int k = 0; k < mb->nblk; k++) {
      pair(mb->body, mb->blk0 + k, ctx);
      for (int l = k; l < mb->nblk; l++) pair(mb->blk0 + k, mb->blk0 + l, ctx);
    }
  }
}

/* ---- the configuration-dependent mass terms ---- */
/* H_ab . x (x [nm]) with H_ab,k = T_ab,k + sum_j y_j S_ab,jk; ab = 3a + b; a = -1: P_b . x */
static double Hdot(const struct cfMbsModalBody* mb, int a, int b, const double* y, const double* x) {
  int nm = mb->nm;
  if (a < 0) {
    double s = 0;
    for (int k = 0; k < nm; k++) s += mb->P[b * nm + k] * x[k];
    return s;
  }
  int ab = 3 * a + b;
  double s = 0;
  for (int k = 0; k < nm; k++) s += mb->T[ab * nm + k] * x[k];
  const double* S = mb->S + (size_t)ab * nm * nm;
  for (int j = 0; j < nm; j++) {
    if (y[j] == 0) continue;
    double t = 0;
    for (int k = 0; k < nm; k++) t += S[(size_t)j * nm + k] * x[k];
    s += y[j] * t;
  }
  return s;
}

/* Delta Mbar(y) (4x4) */
static void dmbar(const struct cfMbsModalBody* mb, const double* y, double D[16]) {
  int nm = mb->nm;
  memset(D, 0, 16 * sizeof(double));
  for (int a = 0; a < 3; a++) {
    double s = 0;
    for (int k = 0; k < nm; k++) s += mb->P[a * nm + k] * y[k];
    D[1 + a] = D[4 * (1 + a)] = s;
  }
  for (int a = 0; a < 3; a++)
    for (int b = a; b < 3; b++) {
      double s = Hdot(mb, a, b, y, y); /* T_ab.y + y^T S_ab y */
      for (int k = 0; k < nm; k++) s += mb->T[(3 * b + a) * nm + k] * y[k];
      D[4 * (1 + a) + 1 + b] = D[4 * (1 + b) + 1 + a] = s;
    }
}

/* coupling C [12 x nm]: C[(3 alpha + d) nm + k] = sum_b e_b[d] H_(alpha-1) b,k (alpha 0: P) */
static void coupling(const struct cfMbsModalBody* mb, const double* qf, const double* y, double* C) {
  int nm = mb->nm;
  double e[CF_MBS_MODAL_MAXM];
  for (int al = 0; al < 4; al++)
    for (int b = 0; b < 3; b++) {
      /* row vector H_(al-1) b,: */
      for (int k = 0; k < nm; k++) {
        if (al == 0) e[k] = mb->P[b * nm + k];
        else {
          int ab = 3 * (al - 1) + b;
          double s = mb->T[ab * nm + k];
          const double* S = mb->S + (size_t)ab * nm * nm;
          for (int j = 0; j < nm; j++) s += y[j] * S[(size_t)j * nm + k];
          e[k] = s;
        }
      }
      const double* eb = qf + 3 + 3 * b;
      for (int d = 0; d < 3; d++) {
        double* row = C + (size_t)(3 * al + d) * nm;
        if (b == 0) memset(row, 0, sizeof(double) * nm);
        for (int k = 0; k < nm; k++) row[k] += eb[d] * e[k];
      }
    }
}

/* ---- geometric stiffening (docs/craig-bampton.md, "Geometric stiffening") ---- */
/* The load factors of the unit load cases (cofem/reduce.h, cfReduction.Kg) from the frame's motion:
 * a material point at rest position s is at x = r + sum_b s_b e_b, accelerates by
 * r'' + sum_b s_b e_b''; the body force per unit mass in the frame's axes is
 *   b_a(s) = e_a . (g - r'') - sum_b (e_a . e_b'') s_b,
 * so lambda_a = e_a . (g - r''), lambda_ab = -(e_a . e_b''). Of G_ab = e_a . e_b'' = (Omega' + Omega^2)_ab
 * (A = [e1 e2 e3] orthonormal, A' = A Omega) the symmetric part Omega^2 = -A'^T A' is taken from the
 * velocities, (Omega^2)_ab = -e_a' . e_b', exact at every Newton iterate; the skew part Omega' and r''
 * from the accelerations af (CF_MBS_GSTIFF_ACCELERATIONS only: gstiff_acc), else left out (af NULL). */
/* With th (a free part's modes' interface rotations, cf_reduction_interface_rotations) the rate is the
 * interface's, w_I = w + sum_j th_j yd_j (body axes; w the frame's, w_a = 1/2 eps_abc e_c . e_b'), and
 * Omega^2's part is lambda_ab = |w_I|^2 delta_ab - w_I,a w_I,b (= e_a' . e_b' for w_I = w). Why: the
 * stress is that of the part held at its interface (the joint holds it there), and a free-interface
 * body's floating frame turns against its interface with the modes: on the quadratic spin-up beam
 * (its root set welded to the hub) the frame's turn about the beam's axis, weakly held (0.006 kg m^2),
 * oscillated through the rate terms lambda_xz = -w_z w_x of the bending load cases (Kg ~ 1e7) and
 * grew until the leading matrix lost its definiteness at 1.6 s (w_x^2 3200 rad^2/s^2 at the end); the
 * interface's rate is the hub's. */
static void gstiff_lambda(const double* qf, const double* vf, const double* af, const double* g, const double* th,
                          const double* yd, int nm, double* lam) {
  double w[3] = {0, 0, 0};
  if (th) {
    for (int a = 0; a < 3; a++) {
      const int b = (a + 1) % 3, c = (a + 2) % 3; /* w_a = 1/2 (e_c . e_b' - e_b . e_c') */
      w[a] = 0.5 * (cf_mbs_dot3(qf + 3 + 3 * c, vf + 3 + 3 * b) - cf_mbs_dot3(qf + 3 + 3 * b, vf + 3 + 3 * c));
      for (int j = 0; j < nm; j++) w[a] += th[3 * j + a] * yd[j];
    }
  }
  const double w2 = w[0] * w[0] + w[1] * w[1] + w[2] * w[2];
  for (int a = 0; a < 3; a++) {
    const double *ea = qf + 3 + 3 * a, *ead = vf + 3 + 3 * a;
    for (int b = 0; b < 3; b++) {
      const double *eb = qf + 3 + 3 * b, *ebd = vf + 3 + 3 * b;
      double skew = af ? 0.5 * (cf_mbs_dot3(ea, af + 3 + 3 * b) - cf_mbs_dot3(eb, af + 3 + 3 * a)) : 0;
      lam[3 * a + b] = (th ? (a == b ? w2 : 0) - w[a] * w[b] : cf_mbs_dot3(ead, ebd)) - skew;
    }
    double ga[3] = {g[0] - (af ? af[0] : 0), g[1] - (af ? af[1] : 0), g[2] - (af ? af[2] : 0)};
    lam[9 + a] = cf_mbs_dot3(ea, ga);
  }
}

/* The accelerations the load factors take with CF_MBS_GSTIFF_ACCELERATIONS: those at the start of the
 * step (d->save, cf_mbs__save_state), not the Newton iterate's. The iterate's qdd = 4/h^2 (q - q_pred) + ...
 * would make the forces depend on q through a term the tangent leaves out (the matrix stays symmetric
 * without it), scaled by 4/h^2: the free-interface spin-up beam's Newton iteration then failed at
 * t = 5.6 s (max |dq| 0.1). Lagged by one step, the same beam's leading matrix lost its definiteness at
 * t = 9.3 s (an explicit loop through the bending load cases' large Kg); hence the default
 * (CF_MBS_GSTIFF_RATES) takes the rate and gravity only. */
static const double* gstiff_acc(const cfMbsModel* m, const cfMbsData* d) { return d->save + 2 * (size_t)m->nq; }

/* Kl = sum_c lambda_c Kg_c [nm nm] at the state (q, qd, qdd); 0 when the body has no Kg */
static int gstiff_matrix(const cfMbsModel* m, const struct cfMbsModalBody* mb, const double* q, const double* qd,
                         const double* qdd, const double* g, double* Kl) {
  if (!mb->Kg) return 0;
  const int nm = mb->nm, b = m->body_qadr[mb->body];
  double lam[CF_REDUCTION_NKG];
  gstiff_lambda(q + b, qd + b, mb->gstiff == CF_MBS_GSTIFF_ACCELERATIONS ? qdd + b : NULL, g, mb->gs_th,
                qd + m->body_qadr[mb->blk0], nm, lam);
  memset(Kl, 0, sizeof(double) * (size_t)nm * nm);
  for (int c = 0; c < CF_REDUCTION_NKG; c++) {
    if (lam[c] == 0) continue;
    const double* K = mb->Kg + (size_t)c * nm * nm;
    for (size_t i = 0; i < (size_t)nm * nm; i++) Kl[i] += lam[c] * K[i];
  }
  return 1;
}

/* Ax += cM (M(q) - the rigid part) + cC C + cK K of the modal bodies, at d->q */
static void cf_mbs__modal_assemble(const cfMbsModel* m, cfMbsData* d, double cM, double cC, double cK) {
  for (int i = 0; i < m->nmodal; i++) {
    const struct cfMbsModalBody* mb = &m->modal[i];
    int nm = mb->nm;
    const double* qf = d->q + m->body_qadr[mb->body];
    const double* y = d->q + m->body_qadr[mb->blk0];
    double D[16], C[12 * CF_MBS_MODAL_MAXM], B[144];
    /* the geometric stiffness at the state of the last forces (d->q, d->qd) */
    double* Kl = mb->Kg && cK != 0 ? d->modal_kg : NULL;
    if (Kl) gstiff_matrix(m, mb, d->q, d->qd, gstiff_acc(m, d), d->gravity, Kl);
    if (cM != 0) {
      dmbar(mb, y, D);
      for (int r = 0; r < 12; r++)
        for (int c = 0; c < 12; c++) B[12 * r + c] = r % 3 == c % 3 ? cM * D[4 * (r / 3) + c / 3] : 0;
      cf_mbs__add_blk(m, d->Ax, mb->body, mb->body, B, 12, 1.0);
      coupling(mb, qf, y, C);
      for (int k = 0; k < mb->nblk; k++) {
        for (int r = 0; r < 12; r++)
          for (int c = 0; c < 12; c++) {
            int j = 12 * k + c;
            B[12 * r + c] = j < nm ? cM * C[(size_t)r * nm + j] : 0;
          }
        cf_mbs__add_blk(m, d->Ax, mb->body, mb->blk0 + k, B, 12, 1.0);
      }
    }
    for (int k = 0; k < mb->nblk; k++)
      for (int l = k; l < mb->nblk; l++) {
        for (int r = 0; r < 12; r++)
          for (int c = 0; c < 12; c++) {
            int j = 12 * k + r, jj = 12 * l + c;
            double v = 0;
            if (j < nm && jj < nm) {
              v = cM * (mb->Myy[(size_t)j * nm + jj] - (j == jj));
              if (j == jj) v += cK * mb->w2[j] + cC * 2 * mb->zeta[j] * sqrt(fmax(mb->w2[j], 0));
              if (Kl) v += cK * Kl[(size_t)j * nm + jj];
            }
            B[12 * r + c] = v;
          }
        cf_mbs__add_blk(m, d->Ax, mb->blk0 + k, mb->blk0 + l, B, 12, 1.0);
      }
  }
}

/* y += the same times x */
static void cf_mbs__modal_apply(const cfMbsModel* m, const cfMbsData* d, double cM, double cC, double cK,
                                const double* x, double* yo) {
  for (int i = 0; i < m->nmodal; i++) {
    const struct cfMbsModalBody* mb = &m->modal[i];
    int nm = mb->nm;
    const double* qf = d->q + m->body_qadr[mb->body];
    const double* y = d->q + m->body_qadr[mb->blk0];
    const double* xf = x + m->body_qadr[mb->body];
    const double* xy = x + m->body_qadr[mb->blk0];
    double* of = yo + m->body_qadr[mb->body];
    double* oy = yo + m->body_qadr[mb->blk0];
    if (cM != 0) {
      double D[16], C[12 * CF_MBS_MODAL_MAXM];
      dmbar(mb, y, D);
      coupling(mb, qf, y, C);
      for (int k = 0; k < 4; k++)
        for (int dd = 0; dd < 3; dd++) {
          double s = 0;
          for (int l = 0; l < 4; l++) s += D[4 * k + l] * xf[3 * l + dd];
          const double* row = C + (size_t)(3 * k + dd) * nm;
          for (int j = 0; j < nm; j++) s += row[j] * xy[j];
          of[3 * k + dd] += cM * s;
        }
      for (int j = 0; j < nm; j++) {
        double s = 0;
        for (int r = 0; r < 12; r++) s += C[(size_t)r * nm + j] * xf[r];
        for (int k = 0; k < nm; k++) s += (mb->Myy[(size_t)j * nm + k] - (j == k)) * xy[k];
        oy[j] += cM * s;
      }
    }
    for (int j = 0; j < nm; j++)
      oy[j] += (cK * mb->w2[j] + cC * 2 * mb->zeta[j] * sqrt(fmax(mb->w2[j], 0))) * xy[j];
  }
}

static double scale_of(const cfMbsModalLoad* L, double t) {
  if (!L->has_scale) return 1;
  double v[3];
  cf_mbs_func_eval(&L->scale, t, v);
  return v[0];
}

/* d->Q += modal gravity terms, quadratic velocity forces, elastic and damping forces, node loads */
static void cf_mbs__modal_forces(const cfMbsModel* m, cfMbsData* d, const double* q, const double* qd, double t) {
  const double* g = d->gravity;
  for (int i = 0; i < m->nmodal; i++) {
    const struct cfMbsModalBody* mb = &m->modal[i];
    int nm = mb->nm;
    const double* qf = q + m->body_qadr[mb->body];
    const double* vf = qd + m->body_qadr[mb->body];
    const double* y = q + m->body_qadr[mb->blk0];
    const double* yd = qd + m->body_qadr[mb->blk0];
    double* Qf = d->Q + m->body_qadr[mb->body];
    double* Qy = d->Q + m->body_qadr[mb->blk0];
    /* gravity: Q_ea += (P_a.y) g, Q_yj += sum_a P_aj (e_a.g) */
    for (int a = 0; a < 3; a++) {
      double py = 0, eg = cf_mbs_dot3(qf + 3 + 3 * a, g);
      for (int k = 0; k < nm; k++) py += mb->P[a * nm + k] * y[k], Qy[k] += mb->P[a * nm + k] * eg;
      for (int dd = 0; dd < 3; dd++) Qf[3 + 3 * a + dd] += py * g[dd];
    }
    /* elastic and damping */
    for (int k = 0; k < nm; k++)
      Qy[k] -= mb->w2[k] * y[k] + 2 * mb->zeta[k] * sqrt(fmax(mb->w2[k], 0)) * yd[k];
    /* geometric stiffening: Q_y -= (sum_c lambda_c Kg_c) y */
    if (mb->Kg && gstiff_matrix(m, mb, q, qd, gstiff_acc(m, d), g, d->modal_kg))
      for (int j = 0; j < nm; j++) {
        const double* row = d->modal_kg + (size_t)j * nm;
        double s = 0;
        for (int k = 0; k < nm; k++) s += row[k] * y[k];
        Qy[j] -= s;
      }
    /* quadratic velocity forces */
    for (int al = 0; al < 4; al++)
      for (int b = 0; b < 3; b++) {
        double h = Hdot(mb, al - 1, b, y, yd);
        for (int dd = 0; dd < 3; dd++) Qf[3 * al + dd] -= 2 * vf[3 + 3 * b + dd] * h;
      }
    for (int c = 0; c < 3; c++)
      for (int b = 0; b < 3; b++) {
        double w = cf_mbs_dot3(qf + 3 + 3 * c, vf + 3 + 3 * b);
        if (w == 0) continue;
        const double* S = mb->S + (size_t)(3 * c + b) * nm * nm;
        for (int j = 0; j < nm; j++) {
          double s = 0;
          for (int k = 0; k < nm; k++) s += S[(size_t)j * nm + k] * yd[k];
          Qy[j] -= 2 * w * s;
        }
      }
    /* node loads */
    for (int l = 0; l < mb->nload; l++) {
      const cfMbsModalLoad* L = &mb->load[l];
      double sc = d->load_factor * scale_of(L, t), F[3];
      for (int dd = 0; dd < 3; dd++)
        F[dd] = L->body_frame ? sc * (L->force[0] * qf[3 + dd] + L->force[1] * qf[6 + dd] + L->force[2] * qf[9 + dd])
                              : sc * L->force[dd];
      int p = L->node;
      for (int dd = 0; dd < 3; dd++) Qf[dd] += F[dd];
      for (int a = 0; a < 3; a++) {
        const double* ph = L->at_point ? mb->pt_Phi + (size_t)(3 * L->point + a) * nm : mb->Phi + (size_t)(3 * p + a) * nm;
        double rho = L->at_point ? mb->pt_s[3 * L->point + a] : mb->X[3 * p + a], eF = cf_mbs_dot3(qf + 3 + 3 * a, F);
        for (int k = 0; k < nm; k++) rho += ph[k] * y[k], Qy[k] += ph[k] * eF;
        for (int dd = 0; dd < 3; dd++) Qf[3 + 3 * a + dd] += rho * F[dd];
      }
    }
    /* a controller's nodal forces (cf_mbs_set_node_load, global): as the node loads above */
    const double* fn = d->modal_force && i < d->nmodal_force ? d->modal_force[i] : NULL;
    for (int p = 0; fn && p < mb->nnode; p++) {
      const double* F = fn + 3 * (size_t)p;
      if (F[0] == 0 && F[1] == 0 && F[2] == 0) continue;
      const double sc = d->load_factor;
      for (int dd = 0; dd < 3; dd++) Qf[dd] += sc * F[dd];
      for (int a = 0; a < 3; a++) {
        const double* ph = mb->Phi + (size_t)(3 * p + a) * nm;
        double rho = mb->X[3 * p + a], eF = sc * cf_mbs_dot3(qf + 3 + 3 * a, F);
        for (int k = 0; k < nm; k++) rho += ph[k] * y[k], Qy[k] += ph[k] * eF;
        for (int dd = 0; dd < 3; dd++) Qf[3 + 3 * a + dd] += rho * sc * F[dd];
      }
    }
  }
}

/* the modal part of T */
static double cf_mbs__modal_kinetic(const cfMbsModel* m, const cfMbsData* d) {
  double T = 0;
  for (int i = 0; i < m->nmodal; i++) {
    const struct cfMbsModalBody* mb = &m->modal[i];
    int nm = mb->nm;
    const double* qf = d->q + m->body_qadr[mb->body];
    const double* y = d->q + m->body_qadr[mb->blk0];
    const double* vf = d->qd + m->body_qadr[mb->body];
    const double* yd = d->qd + m->body_qadr[mb->blk0];
    double D[16];
    dmbar(mb, y, D);
    for (int k = 0; k < 4; k++)
      for (int l = 0; l < 4; l++) T += 0.5 * D[4 * k + l] * cf_mbs_dot3(vf + 3 * k, vf + 3 * l);
    for (int al = 0; al < 4; al++)
      for (int b = 0; b < 3; b++) T += Hdot(mb, al - 1, b, y, yd) * cf_mbs_dot3(qf + 3 + 3 * b, vf + 3 * al);
    for (int j = 0; j < nm; j++)
      for (int k = 0; k < nm; k++) T += 0.5 * (mb->Myy[(size_t)j * nm + k] - (j == k)) * yd[j] * yd[k];
  }
  return T;
}

/* gravity (modal part) + elastic energy */
static double cf_mbs__modal_potential(const cfMbsModel* m, const cfMbsData* d) {
  double V = 0;
  const double* g = d->gravity;
  for (int i = 0; i < m->nmodal; i++) {
    const struct cfMbsModalBody* mb = &m->modal[i];
    const double* qf = d->q + m->body_qadr[mb->body];
    const double* y = d->q + m->body_qadr[mb->blk0];
    for (int a = 0; a < 3; a++) {
      double py = 0;
      for (int k = 0; k < mb->nm; k++) py += mb->P[a * mb->nm + k] * y[k];
      V -= py * cf_mbs_dot3(g, qf + 3 + 3 * a);
    }
    V += cf_mbs_modal_elastic_energy(m, d, i);
  }
  return V;
}

/* ---- queries ---- */
int cf_mbs_modal_index(const cfMbsModel* m, int body) {
  for (int i = 0; i < m->nmodal; i++)
    if (m->modal[i].body == body) return i;
  return -1;
}
int cf_mbs_modal_nmodes(const cfMbsModel* m, int ib) { return m->modal[ib].nm; }
int cf_mbs_modal_frame(const cfMbsModel* m, int ib) { return m->modal[ib].body; }
const double* cf_mbs_modal_y(const cfMbsModel* m, const cfMbsData* d, int ib) {
  return d->q + m->body_qadr[m->modal[ib].blk0];
}
const double* cf_mbs_modal_yd(const cfMbsModel* m, const cfMbsData* d, int ib) {
  return d->qd + m->body_qadr[m->modal[ib].blk0];
}

double cf_mbs_modal_elastic_energy(const cfMbsModel* m, const cfMbsData* d, int ib) {
  const struct cfMbsModalBody* mb = &m->modal[ib];
  const double* y = d->q + m->body_qadr[mb->blk0];
  double U = 0;
  for (int k = 0; k < mb->nm; k++) U += 0.5 * mb->w2[k] * y[k] * y[k];
  return U;
}

void cf_mbs_modal_node_disp(const cfMbsModel* m, const cfMbsData* d, int ib, int node, double u[3]) {
  const struct cfMbsModalBody* mb = &m->modal[ib];
  const double* y = d->q + m->body_qadr[mb->blk0];
  for (int a = 0; a < 3; a++) {
    const double* ph = mb->Phi + (size_t)(3 * node + a) * mb->nm;
    double s = 0;
    for (int k = 0; k < mb->nm; k++) s += ph[k] * y[k];
    u[a] = s;
  }
}

void cf_mbs_modal_node(const cfMbsModel* m, const cfMbsData* d, int ib, int node, double x[3], double v[3]) {
  const struct cfMbsModalBody* mb = &m->modal[ib];
  const double* qf = d->q + m->body_qadr[mb->body];
  const double* vf = d->qd + m->body_qadr[mb->body];
  const double* y = d->q + m->body_qadr[mb->blk0];
  const double* yd = d->qd + m->body_qadr[mb->blk0];
  double rho[3], rd[3];
  for (int a = 0; a < 3; a++) {
    const double* ph = mb->Phi + (size_t)(3 * node + a) * mb->nm;
    double s = mb->X[3 * node + a], sd = 0;
    for (int k = 0; k < mb->nm; k++) s += ph[k] * y[k], sd += ph[k] * yd[k];
    rho[a] = s, rd[a] = sd;
  }
  for (int dd = 0; dd < 3; dd++) {
    if (x) x[dd] = qf[dd] + rho[0] * qf[3 + dd] + rho[1] * qf[6 + dd] + rho[2] * qf[9 + dd];
    if (v)
      v[dd] = vf[dd] + rho[0] * vf[3 + dd] + rho[1] * vf[6 + dd] + rho[2] * vf[9 + dd] + rd[0] * qf[3 + dd] +
              rd[1] * qf[6 + dd] + rd[2] * qf[9 + dd];
  }
}

void cf_mbs_modal_nodes(const cfMbsModel* m, const cfMbsData* d, int ib, double* x, double* v) {
  for (int p = 0; p < m->modal[ib].nnode; p++) cf_mbs_modal_node(m, d, ib, p, x + 3 * p, v ? v + 3 * p : NULL);
}

void cf_mbs_modal_momentum(const cfMbsModel* m, const cfMbsData* d, int ib, double p[3], double L[3]) {
  const struct cfMbsModalBody* mb = &m->modal[ib];
  const double* qf = d->q + m->body_qadr[mb->body];
  const double* vf = d->qd + m->body_qadr[mb->body];
  const double* y = d->q + m->body_qadr[mb->blk0];
  const double* yd = d->qd + m->body_qadr[mb->blk0];
  double Mb[16], D[16];
  memcpy(Mb, m->body_Mbar + 16 * mb->body, sizeof Mb);
  dmbar(mb, y, D);
  for (int k = 0; k < 16; k++) Mb[k] += D[k];
  for (int i = 0; i < 3; i++) p[i] = L[i] = 0;
  for (int al = 0; al < 4; al++) {
    double w[3] = {0, 0, 0}; /* sum_beta Mbar_al,beta zdot_beta + sum_b (H_al b . yd) e_b */
    for (int be = 0; be < 4; be++)
      for (int i = 0; i < 3; i++) w[i] += Mb[4 * al + be] * vf[3 * be + i];
    for (int b = 0; b < 3; b++) {
      double h = Hdot(mb, al - 1, b, y, yd);
      for (int i = 0; i < 3; i++) w[i] += h * qf[3 + 3 * b + i];
    }
    if (al == 0)
      for (int i = 0; i < 3; i++) p[i] = w[i];
    double c[3];
    cf_mbs_cross3(qf + 3 * al, w, c);
    for (int i = 0; i < 3; i++) L[i] += c[i];
  }
}

/* the small strain of the elastic displacement u_p = Phi_p y in the frame's axes (the modes are a
 * linear theory: the frame carries the large motion) */
int cf_mbs_modal_stress(const cfMbsModel* m, const cfMbsData* d, int ib, const cfModel* fem, cfStressField* s) {
  if (ib < 0 || ib >= m->nmodal) return cf_error(CF_ERR_ARG, "no modal body %d (%d modal bodies)", ib, m->nmodal);
  if (!fem || fem->nnode != m->modal[ib].nnode || s->nnode != fem->nnode || s->ntet != fem->ntet)
    return cf_error(CF_ERR_ARG, "modal body %d: its FE model has %d nodes, the reduction %d", ib, fem ? fem->nnode : 0,
                    m->modal[ib].nnode);
  double* u = malloc(sizeof(double) * 3 * (size_t)fem->nnode);
  if (!u) return cf_error(CF_ERR_NOMEM, "modal body: out of memory");
  for (int n = 0; n < fem->nnode; n++) cf_mbs_modal_node_disp(m, d, ib, n, u + 3 * n);
  cf_stress_field_small(fem, u, s);
  free(u);
  return CF_OK;
}

int cf_mbs_modal_write_vtu(const cfMbsModel* m, const cfMbsData* d, int ib, const cfModel* fem, const cfMesh* mesh,
                           const char* path) {
  if (mesh->nnode != m->modal[ib].nnode)
    return cf_error(CF_ERR_SCENE, "modal body: mesh has %d nodes, the reduction %d", mesh->nnode, m->modal[ib].nnode);
  double* x = malloc(sizeof(double) * 6 * (size_t)mesh->nnode);
  if (!x) return cf_error(CF_ERR_NOMEM, "modal body: out of memory");
  cf_mbs_modal_nodes(m, d, ib, x, x + 3 * mesh->nnode);
  cfStressField sf = {0};
  int st = fem ? cf_stress_field_init(&sf, fem) : CF_OK;
  if (st >= 0 && fem) st = cf_mbs_modal_stress(m, d, ib, fem, &sf);
  if (st >= 0) st = cf_vtu_write_stress(path, mesh, x, x + 3 * mesh->nnode, fem ? &sf : NULL);
  cf_stress_field_free(&sf);
  free(x);
  return st;
}

/* the geometric stiffening's scratch (the largest nm^2 of the bodies that have it) */
static int cf_mbs__modal_data_create(const cfMbsModel* m, cfMbsData* d) {
  size_t need = 0;
  for (int i = 0; i < m->nmodal; i++)
    if (m->modal[i].Kg && (size_t)m->modal[i].nm * m->modal[i].nm > need) need = (size_t)m->modal[i].nm * m->modal[i].nm;
  if (need == 0) return CF_OK;
  d->modal_kg = malloc(sizeof(double) * need);
  return d->modal_kg ? CF_OK : cf_error(CF_ERR_NOMEM, "mechanism: out of memory");
}
static void cf_mbs__modal_data_free(cfMbsData* d) {
  free(d->modal_kg);
  d->modal_kg = NULL;
}

/* ---- the modal body kind (mbs_body_kind.h) ---- */
/* the mass beyond Mbar only: the generic code's apply_M adds no damping or stiffness */
static void modal_apply_mass(const cfMbsModel* m, const cfMbsData* d, const double* x, double* y) {
  cf_mbs__modal_apply(m, d, 1, 0, 0, x, y);
}

static void modal_apply_tangent(const cfMbsModel* m, const cfMbsData* d, double cC, double cK, const double* x, double* y) {
  cf_mbs__modal_apply(m, d, 0, cC, cK, x, y);
}

const cfMbsBodyKind cf_mbs__modal_kind = {
    .name = "modal",
    .nblock = cf_mbs__modal_nblock,
    .compile = cf_mbs__modal_compile,
    .model_free = cf_mbs__modal_free,
    .def_free = cf_mbs__modal_def_free,
    .initial = cf_mbs__modal_initial,
    .pairs = cf_mbs__modal_pairs,
    .data_create = cf_mbs__modal_data_create, /* scratch of the geometric stiffening only */
    .data_free = cf_mbs__modal_data_free,
    .forces = cf_mbs__modal_forces,
    .assemble = cf_mbs__modal_assemble,
    .apply_mass = modal_apply_mass,
    .apply_tangent = modal_apply_tangent,
    .kinetic = cf_mbs__modal_kinetic,
    .potential = cf_mbs__modal_potential,
};

/* for mbs_drive.c */
int cf_mbs__modal_nnode(const cfMbsModel* m, int ib) { return m->modal[ib].nnode; }
