/* FE bodies in the multibody core, "lumped" formulation (cofem/mbs_fe.h; docs/mbs.md, "FE
 * bodies"; paper 003, section 6: ADAMS with a point mass at every FE node and the co-rotational
 * internal forces as a user force).
 *
 * Coordinates: node n of FE body ib is at q[qadr[n] .. +2]; four nodes per 12-coordinate block
 * (block 0 is the body id of the definition, the others are appended), Mbar = diag(m_a, m_b, m_c,
 * m_d) so that Mbar (x) I3 is the lumped mass (padding triplets: unit mass, no force, stay at 0).
 * Forces on the nodes (into Q, the mechanism's generalized forces):
 *     Q_n = -f_el,n(x) + m_n g + loads - (alpha M + beta K_R) v            (f_el, K_R: cf_stage_polar,
 *                                                                           cf_stage_elastic)
 * and their tangents K = -dQ/dx ~ K_R (the paper's linearisation; the multiplier-free Newton of
 * the integrator converges on the exact residual), C = -dQ/dv = alpha M + beta K_R.
 * Joint terms: weighted node sums S = sum_i w_i x_i (a node set's mean, or the difference of the
 * means of its two halves along a joint axis) dotted with a unit vector or an affine vector of the
 * other body: Phi += s S . B. */
#include <lapacke.h>
#include <stdio.h>
#include <stdlib.h>

#include "cofem/mbs_fe.h"
#include "cofem/cuda.h"
#include "cofem/modal_part.h"
#include "cofem/output.h"
#include "fem/fem_element.h"
#include "fem/fem_parallel.h"
#include "fem/fem_pcg.h"
#include "fem/fem_precond.h"
#include "fem/fem_sparse.h"
#include "mbs/mbs_internal.h"

struct cfMbsFeBody {
  int body;                 /* definition body id = node block 0 (lumped; corotational: a placeholder
                               block at rest, the node blocks are all appended) */
  int corotational;
  int exact_factor;         /* corotational: factor A(x) at every step (1) or rotate A0's (0) */
  int a0_pcg, cuda;         /* corotational: A(x) solved by the PCG (no factor), on the GPU (cfMbsFeDef) */
  int linear;               /* corotational with the linear coupling (cfMbsOptions.coupling): the part
                               linearised once per step (twice where it turns beyond its prediction), its free motion one solve each */
  int linear_exact;         /* ... each linearisation's A0 factored (CHOLMOD), not the PCG's (a0_pcg) */
  int linear_rotated;       /* ... the step's A0 the rotated factor at rest, Q A0(rest) Q^T, applied exactly
                               ("factor": "rotated"; linear_operator_rotated) */
  const cfModel* fem;
  int nnode, nblk;
  int* blk;                 /* [nblk] body ids of the node blocks */
  int* qadr;                /* [nnode] coordinate address of node n (mesh order) */
  int* node_blk;            /* [nnode] body id of the block that holds node n */
  double pos[3], rot[9];    /* placement at t = 0 */
  /* weighted node sums: nodes vec_node[vec_ptr[k] .. vec_ptr[k + 1]) with weights vec_w */
  int nvec, cap_vec, cap_entry;
  int* vec_ptr;
  int* vec_node;
  double* vec_w;
  int npoint;
  int pt_vec[CF_MBS_FE_MAX_POINTS];   /* the mean of each point's nodes */
  double pt_X[3 * CF_MBS_FE_MAX_POINTS]; /* its rest position in the body frame */
  int nload;
  cfMbsModalLoad load[CF_MBS_FE_MAX_LOADS];
};

/* the linear coupling's second linearisation takes one Newton correction of the element (and node)
 * rotations from the first's below this miss [rad], the full polar above */
#define LINEAR_MISS_STEP 1e-2
/* "factor": "rotated": a free part whose node rotations are this close [rad] is turned as a whole */
#define LINEAR_ROT_SPREAD 1e-3

/* ---- definitions ------------------------------------------------------------------------------- */
static cfMbsFeDef* fe_def_of(cfMbsDef* def, int body) {
  for (int i = 0; i < def->nfe; i++)
    if (def->fe[i].body == body) return &def->fe[i];
  return NULL;
}

int cf_mbs_def_fe_index(const cfMbsDef* def, int body) {
  for (int i = 0; i < def->nfe; i++)
    if (def->fe[i].body == body) return i;
  return -1;
}

int cf_mbs_add_fe_body(cfMbsDef* def, const cfMbsBodyDef* b, const cfModel* fem) {
  return cf_mbs_add_fe_body_as(def, b, fem, 0);
}

int cf_mbs_add_fe_body_as(cfMbsDef* def, const cfMbsBodyDef* b, const cfModel* fem, int corotational) {
  if (!fem || fem->nnode < 1) return cf_error(CF_ERR_ARG, "FE body '%s': no FE model", b->name);
  if (fem->npe != 4 && fem->npe != 10)
    return cf_error(CF_ERR_UNSUPPORTED, "FE body '%s': %d-node elements (4- or 10-node tetrahedra only)", b->name, fem->npe);
  if (def->nfe == def->cap_fe) {
    int cap = def->cap_fe ? 2 * def->cap_fe : 4;
    cfMbsFeDef* p = realloc(def->fe, sizeof *p * (size_t)cap);
    if (!p) return cf_error(CF_ERR_NOMEM, "mechanism: out of memory");
    def->fe = p, def->cap_fe = cap;
  }
  /* the body entry: its mass and inertia only pass the rigid-body checks; the nodes carry the mass */
  cfMbsBodyDef bb = *b;
  double mass = 0;
  for (int n = 0; n < fem->nnode; n++) mass += fem->node_mass[n];
  bb.mass = mass > 0 ? mass : 1, bb.is_virtual = 0;
  memset(bb.com, 0, sizeof bb.com);
  for (int k = 0; k < 3; k++) bb.inertia[k] = bb.mass, bb.inertia[3 + k] = 0;
  int id = cf_mbs_add_body(def, &bb);
  if (id < 0) return id;
  cfMbsFeDef* e = &def->fe[def->nfe++];
  memset(e, 0, sizeof *e);
  e->body = id, e->fem = fem, e->corotational = corotational != 0, e->exact_factor = 1;
  memcpy(e->pos, b->pos, sizeof e->pos), memcpy(e->rot, b->rot, sizeof e->rot);
  memcpy(e->vel, b->vel, sizeof e->vel), memcpy(e->omega, b->omega, sizeof e->omega);
  return id;
}

int cf_mbs_add_fe_point(cfMbsDef* def, int body, const char* name, const int* nodes, int nnode) {
  cfMbsFeDef* e = fe_def_of(def, body);
  if (!e) return cf_error(CF_ERR_SCENE, "FE point '%s': body %d is not an FE body", name, body);
  return cf_mbs__add_point(e->point, &e->npoint, CF_MBS_FE_MAX_POINTS, e->fem->nnode, "FE body", "point",
                           def->body[body].name, name, nodes, nnode);
}

int cf_mbs_find_fe_point(const cfMbsDef* def, int body, const char* name) {
  for (int i = 0; i < def->nfe; i++)
    if (def->fe[i].body == body) return cf_mbs__find_point(def->fe[i].point, def->fe[i].npoint, name);
  return -1;
}

int cf_mbs_add_fe_load(cfMbsDef* def, int body, const cfMbsModalLoad* load) {
  cfMbsFeDef* e = fe_def_of(def, body);
  if (!e) return cf_error(CF_ERR_SCENE, "FE load: body %d is not an FE body", body);
  const char* bname = def->body[body].name;
  if (!load->at_point || load->point < 0 || load->point >= e->npoint)
    return cf_error(CF_ERR_SCENE, "FE body '%s': a load must act at one of its points (node sets)", bname);
  if (load->body_frame)
    return cf_error(CF_ERR_SCENE, "FE body '%s': loads are in global directions (an FE body has no body frame)", bname);
  if (e->nload >= CF_MBS_FE_MAX_LOADS) return cf_error(CF_ERR_SCENE, "FE body '%s': more than %d loads", bname, CF_MBS_FE_MAX_LOADS);
  if (load->has_scale) {
    int st = cf_mbs__check_func(&load->scale, bname);
    if (st < 0) return st;
    if (load->scale.type == CF_MBS_FUNC_TABLE) /* its points would not be copied */
      return cf_error(CF_ERR_SCENE, "FE body '%s': a table function as a load's \"scale\" is not supported at a flexible "
                      "body's node set (rigid bodies' forces and torques, drivers and actuators take one)", bname);
  }
  e->load[e->nload] = *load;
  return e->nload++;
}

static void cf_mbs__fe_def_free(cfMbsDef* def) {
  for (int i = 0; i < def->nfe; i++)
    for (int k = 0; k < def->fe[i].npoint; k++) free(def->fe[i].point[k].nodes);
  free(def->fe);
  def->fe = NULL, def->nfe = def->cap_fe = 0;
}

/* ---- compile ----------------------------------------------------------------------------------- */
/* node blocks to append (after the modal amplitude blocks) */
static int cf_mbs__fe_nblock(const cfMbsDef* def) {
  int n = 0;
  for (int i = 0; i < def->nfe; i++) n += (def->fe[i].fem->nnode + 3) / 4 - !def->fe[i].corotational;
  return n;
}

int cf_mbs_fe_index(const cfMbsModel* m, int body) {
  for (int i = 0; i < m->nfe; i++)
    if (m->fe[i].body == body) return i;
  return -1;
}

const cfModel* cf_mbs_fe_model(const cfMbsModel* m, int ib) { return m->fe[ib].fem; }

const char* cf_mbs__fe_coord_owner(const cfMbsModel* m, int coord, int* node) {
  for (int i = 0; i < m->nfe; i++)
    for (int n = 0; n < m->fe[i].nnode; n++)
      if (coord >= m->fe[i].qadr[n] && coord < m->fe[i].qadr[n] + 3) return *node = n, m->body_name[m->fe[i].body];
  return NULL;
}

/* append a weighted node sum; returns its index */
static int add_vec(struct cfMbsFeBody* fb, const int* nodes, const double* w, int n) {
  if (fb->nvec + 1 >= fb->cap_vec) {
    int cap = fb->cap_vec ? 2 * fb->cap_vec : 16;
    int* p = realloc(fb->vec_ptr, sizeof(int) * (size_t)(cap + 1));
    if (!p) return cf_error(CF_ERR_NOMEM, "mechanism: out of memory");
    fb->vec_ptr = p, fb->cap_vec = cap;
  }
  int used = fb->nvec ? fb->vec_ptr[fb->nvec] : 0;
  if (used + n > fb->cap_entry) {
    int cap = 2 * (used + n);
    int* pn = realloc(fb->vec_node, sizeof(int) * (size_t)cap);
    if (pn) fb->vec_node = pn;
    double* pw = realloc(fb->vec_w, sizeof(double) * (size_t)cap);
    if (pw) fb->vec_w = pw;
    if (!pn || !pw) return cf_error(CF_ERR_NOMEM, "mechanism: out of memory");
    fb->cap_entry = cap;
  }
  fb->vec_ptr[fb->nvec] = used;
  memcpy(fb->vec_node + used, nodes, sizeof(int) * (size_t)n);
  memcpy(fb->vec_w + used, w, sizeof(double) * (size_t)n);
  fb->vec_ptr[++fb->nvec] = used + n;
  return fb->nvec - 1;
}

/* The node blocks, the node order (the nodes of the points first, point by point, so that a set
 * spans as few blocks as possible: its equations have one gradient slot per block), the lumped
 * masses as Mbar, the points' mean vectors. */
static int cf_mbs__fe_compile(const cfMbsDef* def, cfMbsModel* m) {
  m->nfe = def->nfe;
  m->nq_direct = m->nq;
  if (!def->nfe) return CF_OK;
  m->fe = calloc((size_t)def->nfe, sizeof *m->fe);
  if (!m->fe) return cf_error(CF_ERR_NOMEM, "mechanism: out of memory");
  int nextb = def->nbody + cf_mbs__modal_nblock(def);
  double h = m->opt.dt, kref = 0;
  int seen_corot = 0;
  /* lumped bodies' blocks first, then the corotational ones': those end the coordinates, so that
   * the coordinates CHOLMOD factors are a leading block of the pattern */
  for (int pass = 0; pass < 2; pass++)
  for (int i = 0; i < def->nfe; i++) {
    const cfMbsFeDef* fd = &def->fe[i];
    if (fd->corotational != pass) continue;
    if (pass == 1 && !seen_corot) seen_corot = 1, m->nq_direct = m->nq;
    struct cfMbsFeBody* fb = &m->fe[i];
    const cfModel* fem = fd->fem;
    int nn = fem->nnode;
    fb->body = fd->body, fb->fem = fem, fb->nnode = nn, fb->nblk = (nn + 3) / 4, fb->corotational = fd->corotational;
    fb->exact_factor = fd->exact_factor && !fd->a0_pcg;
    fb->linear = fd->corotational && m->opt.coupling == CF_MBS_COUPLING_LINEAR;
    /* the linear coupling: "factor": "exact" (the scenes' default) factors each linearisation's A0,
     * "pcg" (or "rotated", or the GPU) solves it by the PCG with the interface columns turned */
    fb->linear_exact = fb->linear && fd->exact_factor && !fd->a0_pcg && !fd->cuda;
    fb->linear_rotated = fb->linear && !fd->exact_factor && !fd->a0_pcg && !fd->cuda;
    fb->a0_pcg = fd->corotational && (fd->a0_pcg || (fb->linear && !fb->linear_exact)), fb->cuda = fb->a0_pcg && fd->cuda;
    if (fb->linear && !fb->linear_exact) fb->exact_factor = 0; /* outside the step (statics, initial accelerations): the PCG too */
    memcpy(fb->pos, fd->pos, sizeof fb->pos), memcpy(fb->rot, fd->rot, sizeof fb->rot);
    fb->blk = malloc(sizeof(int) * (size_t)fb->nblk);
    fb->qadr = malloc(sizeof(int) * (size_t)nn);
    fb->node_blk = malloc(sizeof(int) * (size_t)nn);
    int* order = malloc(sizeof(int) * (size_t)nn);
    unsigned char* placed = calloc((size_t)nn, 1);
    if (!fb->blk || !fb->qadr || !fb->node_blk || !order || !placed) {
      free(order), free(placed);
      return cf_error(CF_ERR_NOMEM, "mechanism: out of memory");
    }
    /* the points' nodes first, then breadth first through the mesh from them (Cuthill-McKee
     * like): the four nodes of a block are neighbours, so the block graph stays as sparse as
     * the mesh's and the factor's fill low (mesh order: 3x the flops on the lug) */
    int ns = 0;
    for (int k = 0; k < fd->npoint; k++)
      for (int l = 0; l < fd->point[k].nnode; l++) {
        int n = fd->point[k].nodes[l];
        if (!placed[n]) placed[n] = 1, order[ns++] = n;
      }
    for (int head = 0, seed = 0; ns < nn;) {
      if (head == ns) { /* next component (or no points): its first unplaced node */
        while (placed[seed]) seed++;
        placed[seed] = 1, order[ns++] = seed;
      }
      int n = order[head++];
      for (int p = fem->row_ptr[n]; p < fem->row_ptr[n + 1]; p++) {
        int o = fem->col[p];
        if (!placed[o]) placed[o] = 1, order[ns++] = o;
      }
    }
    free(placed);
    /* blocks: the definition's body first, then appended ones (corotational: all appended, the
     * definition's body a placeholder at rest: unit mass, no force, no equation) */
    if (fb->corotational) {
      double* Mb = m->body_Mbar + 16 * fd->body;
      memset(Mb, 0, 16 * sizeof(double));
      for (int l = 0; l < 4; l++) Mb[5 * l] = 1;
      m->body_modal[fd->body] = 5;
    }
    for (int k = 0; k < fb->nblk; k++) {
      int b = k == 0 && !fb->corotational ? fd->body : nextb++;
      fb->blk[k] = b;
      if (b != fd->body) {
        snprintf(m->body_name[b], CF_MBS_NAME_MAX, "%.40s.nodes%d", def->body[fd->body].name, k);
        m->body_qadr[b] = m->nq;
        m->body_nq[b] = CF_MBS_BODY_NQ;
        m->nq += CF_MBS_BODY_NQ;
      }
      m->body_modal[b] = 3;
      m->body_virtual[b] = 0;
      double* Mb = m->body_Mbar + 16 * b;
      memset(Mb, 0, 16 * sizeof(double));
      for (int l = 0; l < 4; l++) { /* corotational: the diagonal of the FE scene's mass (mass_offdiag adds the rest) */
        int s = 4 * k + l;
        Mb[5 * l] = s >= nn ? 1 /* padding: unit mass, no force */
                  : fb->corotational ? fem->Mblk[fem->diag[order[s]]] : fem->node_mass[order[s]];
      }
      m->body_mass[b] = Mb[0] + Mb[5] + Mb[10] + Mb[15];
    }
    for (int s = 0; s < nn; s++) {
      fb->node_blk[order[s]] = fb->blk[s / 4];
      fb->qadr[order[s]] = m->body_qadr[fb->blk[s / 4]] + 3 * (s % 4);
    }
    free(order);
    /* points: mean of the nodes, rest position in the body frame */
    fb->npoint = fd->npoint;
    for (int k = 0; k < fd->npoint; k++) {
      const cfMbsModalPoint* pt = &fd->point[k];
      double* w = malloc(sizeof(double) * (size_t)pt->nnode);
      if (!w) return cf_error(CF_ERR_NOMEM, "mechanism: out of memory");
      for (int l = 0; l < pt->nnode; l++) w[l] = 1.0 / pt->nnode;
      for (int a = 0; a < 3; a++) {
        fb->pt_X[3 * k + a] = 0;
        for (int l = 0; l < pt->nnode; l++) fb->pt_X[3 * k + a] += w[l] * fem->X[3 * pt->nodes[l] + a];
      }
      fb->pt_vec[k] = add_vec(fb, pt->nodes, w, pt->nnode);
      free(w);
      if (fb->pt_vec[k] < 0) return fb->pt_vec[k];
    }
    fb->nload = fd->nload;
    memcpy(fb->load, fd->load, sizeof fb->load);
    /* stiffness scale: the largest diagonal entry of K_e summed at a node */
    double* kd = calloc((size_t)nn, sizeof(double));
    if (!kd) return cf_error(CF_ERR_NOMEM, "mechanism: out of memory");
    const int npe = fem->npe, nk = 3 * npe;
    for (int e = 0; e < fem->ntet; e++)
      for (int a = 0; a < npe; a++)
        for (int c = 0; c < 3; c++) kd[fem->tet[npe * e + a]] += fem->Ke[(size_t)nk * nk * e + (3 * a + c) * (nk + 1)] / 3;
    for (int n = 0; n < nn; n++) kref = fmax(kref, kd[n]);
    free(kd);
  }
  /* mref is the mass scale (largest diagonal of M); the step's penalty is scaled by the largest
   * diagonal entry of its matrix, which with FE bodies is h^2/4 times their stiffness */
  if (!seen_corot) m->nq_direct = m->nq;
  m->mref = 0;
  for (int b = 0; b < m->nbody; b++)
    for (int k = 0; k < 4; k++) m->mref = fmax(m->mref, m->body_Mbar[16 * b + 5 * k]);
  if (!(m->mref > 0)) m->mref = 1;
  m->kref = kref * h * h / 4;
  return CF_OK;
}

static void cf_mbs__fe_free(cfMbsModel* m) {
  for (int i = 0; i < m->nfe; i++) {
    struct cfMbsFeBody* fb = &m->fe[i];
    free(fb->blk), free(fb->qadr), free(fb->node_blk), free(fb->vec_ptr), free(fb->vec_node), free(fb->vec_w);
  }
  free(m->fe);
  m->fe = NULL, m->nfe = 0;
}

static void cf_mbs__fe_initial(const cfMbsDef* def, const cfMbsModel* m, double* q, double* qd) {
  for (int i = 0; i < m->nfe; i++) {
    const cfMbsFeDef* fd = &def->fe[i];
    const struct cfMbsFeBody* fb = &m->fe[i];
    for (int k = 0; k <= fb->nblk; k++) { /* padding triplets (and a corotational body's placeholder) at 0 */
      int b = k < fb->nblk ? fb->blk[k] : fb->body;
      memset(q + m->body_qadr[b], 0, 12 * sizeof(double));
      memset(qd + m->body_qadr[b], 0, 12 * sizeof(double));
    }
    for (int n = 0; n < fb->nnode; n++) {
      const double* X = fb->fem->X + 3 * n;
      double r[3], w[3];
      for (int a = 0; a < 3; a++) r[a] = fd->rot[3 * a] * X[0] + fd->rot[3 * a + 1] * X[1] + fd->rot[3 * a + 2] * X[2];
      cf_mbs_cross3(fd->omega, r, w);
      for (int a = 0; a < 3; a++)
        q[fb->qadr[n] + a] = fd->pos[a] + r[a], qd[fb->qadr[n] + a] = fb->fem->fixed[3 * n + a] ? 0 : fd->vel[a] + w[a];
    }
  }
}

/* the block pairs the elements couple */
/* is body b a node block of a corotational FE body (condensed, not factored by CHOLMOD)? */
static int condensed(const cfMbsModel* m, int b) { return m->body_qadr[b] >= m->nq_direct; }

static void cf_mbs__fe_pairs(const cfMbsModel* m, void (*pair)(int a, int b, void* ctx), void* ctx) {
  for (int i = 0; i < m->nfe; i++) {
    const struct cfMbsFeBody* fb = &m->fe[i];
    const cfModel* fem = fb->fem;
    if (fb->corotational) {
      /* the condensed body couples every factored body of every equation it is in (J_I^T H J_I) */
      for (int r = 0; r < m->ncon; r++) {
        const cfMbsCon* c = &m->con[r];
        if (!c->nft || c->ft_fe[0] != i) continue;
        for (int r2 = r; r2 < m->ncon; r2++) {
          const cfMbsCon* c2 = &m->con[r2];
          if (!c2->nft || c2->ft_fe[0] != i) continue;
          for (int s = 0; s < c->nb; s++)
            for (int s2 = 0; s2 < c2->nb; s2++)
              if (!condensed(m, c->body[s]) && !condensed(m, c2->body[s2])) pair(c->body[s], c2->body[s2], ctx);
        }
      }
      continue;
    }
    const int npe = fem->npe;
    for (int e = 0; e < fem->ntet; e++)
      for (int a = 0; a < npe; a++)
        for (int b = a; b < npe; b++) {
          int na = fem->tet[npe * e + a], nb = fem->tet[npe * e + b];
          pair(fb->node_blk[na], fb->node_blk[nb], ctx);
        }
  }
}

/* ---- data -------------------------------------------------------------------------------------- */
static int cf_mbs__fe_data_create(const cfMbsModel* m, cfMbsData* d) {
  if (!m->nfe) return CF_OK;
  d->fe_data = calloc((size_t)m->nfe, sizeof *d->fe_data);
  if (!d->fe_data) return cf_error(CF_ERR_NOMEM, "mechanism data: out of memory");
  d->nfe_data = m->nfe;
  for (int i = 0; i < m->nfe; i++) {
    int st = cf_data_create(m->fe[i].fem, &d->fe_data[i]);
    if (st < 0) return st;
  }
  return CF_OK;
}

/* node positions (and velocities) from q into the FE data, mesh order */
static void gather(const struct cfMbsFeBody* fb, const double* q, double* x) {
  for (int n = 0; n < fb->nnode; n++)
    for (int a = 0; a < 3; a++) x[3 * n + a] = q[fb->qadr[n] + a];
}

/* y += a x (distinct arrays: vectorised) */
static void axpy_n(double a, const double* restrict x, double* restrict y, int n) {
  for (int j = 0; j < n; j++) y[j] += a * x[j];
}

/* the co-rotational stages at x = q: element rotations, K_R, element forces, f_el. Without K_R
 * (G: [9 ntet] scratch) only the forces, matrix-free as in the PCG's step (fem_pcg.c):
 * fe = V sigma(Ds(x) G_e - I) G_e^T, G_e = Dm^-1 R_e^T; a third of cf_elem_rotate's work. */
static void fe_stage_forces(const cfModel* m, cfData* fd, double* G);
static void fe_stages(const struct cfMbsFeBody* fb, cfData* fd, const double* q, double* G) {
  if (q) gather(fb, q, fd->x); /* else fd->x is set */
  cf_stage_polar(fb->fem, fd);
  fe_stage_forces(fb->fem, fd, G);
}

/* the same after the rotations fd->R are set, at fd->x */
static void fe_stage_forces(const cfModel* m, cfData* fd, double* G) {
  if (!G) {
    cf_stage_elastic(m, fd);
    return;
  }
  double lam, mu;
  cf_lame(m->def.E, m->def.nu, &lam, &mu);
  CF_FOR(m, e, m->ntet, m->ntet > 2048, cf_elem_rotated_gradients(e, m->Dm_inv, fd->R, G));
  CF_FOR(m, e, m->ntet, m->ntet > 2048, cf_elem_force_mf(e, m->tet, G, m->vol, lam, mu, fd->x, fd->fe));
  CF_FOR(m, n, m->nnode, m->nnode > 4096, cf_node_gather(n, m->node_src_ptr, m->node_src, fd->fe, fd->f_el));
}

/* ---- condensation of corotational FE bodies (the solver's side) ---------------------------------
 * The leading matrix over (x_F: the nodes of a corotational body, q_I: the factored coordinates):
 *   A = [A0 + a J_F^T J_F   a J_F^T J_I;  a J_I^T J_F   A_II]
 * A0 = (cM + alpha cC) M + (beta cC + cK) K_R + eps I (the FE system matrix), J = [J_F J_I] the rows
 * of the equations with terms on the body (its joints), a the penalty. With Z = A0^-1 J_F^T,
 * G = J_F Z, H = (G + I/a)^-1 (Woodbury):
 *   the Schur complement onto q_I: S = A_II - a J_I^T J_I + J_I^T H J_I (the joint rows act as
 *   springs of compliance G + 1/a: the part's own compliance seen at its interface + the penalty's);
 *   cf_mbs__assemble leaves those rows' a J'J out of A_II, so only J_I^T H J_I is added here;
 *   a solve of A x = b: y = A0^-1 b_F, r = J_F y, x_I = S^-1 (b_I - J_I^T H r),
 *   x_F = y - Z H (r + J_I x_I).
 * A0 is factored by CHOLMOD over the part's 3x3-block pattern (fem_sparse.h), once per factorisation
 * of the mechanism; Z takes one solve per joint equation on the part, every solve one more. */
struct cfMbsFeState {
  int nrow;
  int* row;                 /* [nrow] the equations with terms on the body */
  int *rnode_ptr, *rnode;   /* [nrow + 1], [..]: the nodes each row's J_F has terms at (its node sets',
                               once each): J_F's products over those only (row_F_dot) */
  double* jfc;              /* [3 rnode_ptr[nrow]] the rows' J_F at those nodes (linear_z_rows' check) */
  cfSparseSolver sp;        /* A0 (exact_factor) */
  int sp_ready;
  double rot_coef[3];       /* cm, ck, eps the rotated factor was formed with (not exact_factor) */
  int rot_ready;
  long fb_step;             /* the step the fallback counters below are for */
  int fb_slow, fb_on;       /* Newton updates that shrank by less than 5x; the step finishes with the exact factor */
  double fb_prev;           /* the last Newton update seen */
  int exact_now;            /* A0 solves with the exact factor (exact_factor, or the fallback) */
  int pcg_now;              /* "pcg": A0 solves by the PCG (not in statics: below) */
  long key_step;            /* the step and coefficients A0, Z and H were formed for: within a step */
  double key_coef[5];       /* they are kept (a modified Newton for the part's tangent) ... */
  int key_uses;             /* ... once the Newton updates have shrunk (the predictor can be far off) */
  double* Z;                /* [nrow][ndof] mesh order */
  double* JF;               /* [nrow][ndof] the rows' J_F that Z was formed with */
  int z_valid;              /* Z = A0^-1 J_F^T for the operator in use (rows whose J_F is unchanged keep theirs) */
  double* H;                /* [nrow^2] */
  double *bF, *y, *r, *w;   /* [ndof], [ndof], [nrow], [nrow] */
  double* extra;            /* [ndof] extra nodal forces (cf_mbs_fe_set_extra_force), or NULL */
  /* Z's changed columns in one multi-right-hand-side solve (z_solve) */
  int* chg;                 /* [nrow] the rows whose Z is solved for */
  const double** zr;        /* [nrow] their J_F^T ... */
  double** zz;              /* [nrow] ... and Z columns */
  double* zwork;            /* cf_precond_apply_multi_work(fem, nrow) */
  cholmod_dense* zB;        /* [ndof x nrow] right-hand sides of the exact factor's solve */
  cholmod_dense **zX, **zY, **zE; /* [nrow + 1] cholmod_solve2's result and workspaces per column count */
  double* G;                /* [9 ntet] rotated gradients of the matrix-free forces (rotated factor) */
  double* ye;               /* [24 ntet] the element products of the matrix-free PCG (lin_mf) */
  int lin_mf;               /* the linear coupling's PCG applies A0 element by element (cf_pcg_matfree):
                               neither K_R nor A0 formed ("factor": "pcg" on the CPU, no Rayleigh beta,
                               a rotated preconditioner) */
  int mf_now;               /* ... in the linearisation of the last cf_mbs__fe_factor */
  double* mfw;              /* cf_pcg_multi_work(3 nvec) doubles (lin_mf) */
  double* zrhs;             /* [3 nvec][ndof] the interface columns' right sides (lin_mf) */
  double** zcol_b;          /* [3 nvec] ... */
  double** zcol_x;          /* [3 nvec] the columns of Zt they solve for */
  double* zcol_scale;       /* [3 nvec] their tolerance scales */
  int kr_stale;             /* fd->KR is not of the current state (the forces were matrix-free) */
  cfCuda* gpu;              /* "backend": "cuda": the part's stages and PCG on the device */
  long pcg_interface;       /* "pcg": the PCG iterations of the Z columns (cf_mbs_fe_pcg_iterations) */
  /* "pcg": the last interface solutions of the two operators a step solves with (the Newton
   * iteration's and the projections' A0 = M + eps I), each with its coefficients and the positions
   * they were solved at: the start of the next solves with the same coefficients (z_guess) */
  double pcg_coef[3];       /* cm, ck, eps of pcg_system's A0 */
  struct cfPrecond* amg;    /* an AMG scene: the hierarchy of the Newton iteration's A0 (coefficients
                               amg_coef), held here while a mass-only A0 (the projections) takes block
                               Jacobi (fd->precond NULL) */
  double amg_coef[3];
  double* zsave[2];         /* [nrow][ndof] */
  double* zx[2];            /* [ndof] */
  double zkey[2][3];
  int zhave[2], zlast;
  double *W, *AW;           /* the start's basis and its products [2 nrow + 2][ndof] */
  double *yprev, *yx;       /* the last Newton correction's solve, and the positions of it [ndof] */
  double ykey[3];
  int yhave;
  int gpu_status;           /* a device error of the last forces (cf_mbs__fe_forces returns none):
                               returned by the next cf_mbs__fe_factor */
  /* the linear coupling (fb->linear; linear_* below) */
  double* Zrest;            /* [nvec][3][ndof] A0(rest)^-1 (w_v e_a): each weighted node sum's unit
                               loads along the mesh axes, solved once at rest */
  double* Zt;               /* [nvec][3][ndof] the same for the step's A0 along the global axes: Zrest
                               turned by the node rotations, corrected by the PCG where needed */
  double *v0, *xp;          /* [ndof] the step's first Newton solution A0^-1 b_F(x_p), and x_p */
  double *v0last, *v0prev;  /* [ndof] the last two steps' first v0 (the warm start's vectors) */
  double* e0;               /* [nrow] the joint part's multipliers (s e) of that right side */
  double* ze0;              /* [ndof] Z e0 with the Z of that right side (rows whose gradient moves
                               within the linearisation, a virtual pin's axes, change Z, not v0) */
  double* zres;             /* [ndof] scratch */
  long lin_forces, lin_A, lin_v; /* d->step_serial of the step's forces, operator, free solve */
  int lin_Apass;            /* d->fe_pass the operator was formed in */
  double pcg_bscale;        /* the next pcg_solve's b_scale (0: its |b|) */
  long lin_zkey;            /* d->step_serial of Z's rows (linear_z_rows) */
  double* Gsym;             /* [nrow^2] their sym(G) */
  double* lsym;             /* [2 nrow^2 + nrow + LSYM_CHUNK nrow] linear_symmetric's scratch */
  unsigned char* vec_used;  /* [nvec] the weighted node sums the rows use (Zt's columns are of those) */
  double lin_miss;          /* the largest element turn beyond R_p at the step's first iterate (single_miss) */
  int rot_turn;             /* "factor": "rotated": its columns turned from Zrest (rotated_turn_setup) */
  int* rot_owner;           /* [nnode] the used node sum that sets a node's rotation, or -1 */
  double lin_coef[3];       /* "rotated": cm, ck, eps of the step's A0 (rotated_model_error) */
  double rot_err_max;       /* ... the largest model error measured (cf_mbs_fe_linear_stats) */
  long rot_exact_until;     /* "rotated": a failed step falls back to the exact factor until this step
                               (cf_mbs__fe_rotated_fall_back) */
  double* rot_Rv;           /* [9 nvec] each used sum's rotation R_v at the last linearisation */
  int lin_have_v0, lin_have_zt; /* v0 of a last step to start from; Zt corrected in the last step */
  double lin_dRn[9];        /* the Newmark part of linear_rotations' rigid rotation D (the next step's
                               miss is measured against it) */
  double* xprev;            /* [ndof] the part's positions at the start of step lin_prev_step */
  long lin_prev_step;       /* d->steps of xprev and lin_dRn (-1: none) */
  long lin_steps, lin_checked, lin_corrected, lin_free_iters, lin_corr_iters; /* cf_mbs_fe_linear_stats */
  /* the body's own coordinates in a step of the linear coupling (mbs_body_kind.h, "own"): its node
   * blocks [own_lo, own_hi) of q; its solves leave their part of the solution in y, which the
   * Newton update and the projections add (fe_update, fe_project_add) */
  int owned, own_lo, own_hi;
  double* ost;              /* [OS_N][ndof] the owned coordinates (mesh order), OS_* below */
  int *mir, nmir;           /* the nodes whose coordinates the step also keeps in d's q, qd, qdd: those
                               of every node block (12 coordinates) with a node of a weighted node
                               sum (the joints' and points' sets), which the generic code reads */
  unsigned char* mir_flag;  /* [nnode] 1: a node of mir */
  /* a GPU body of the linear coupling keeps its store on the device (dev_* below): only its
   * interface crosses the bus within a step */
  int dev;                  /* the store is the device's resident vectors DV_* */
  int dev_valid;            /* they hold the body's state (else own_begin uploads d's) */
  int host_stale;           /* d's copies of its nodes (but the mirrored ones) are older than the device's
                               (cf_mbs__fe_sync downloads them) */
  double* mir_last;         /* [9 nmir] q, qd, qdd of the mirrored nodes when the last step ended: a
                               change in d since (a reset, statics) means d is the state again */
  int dv_zrest, dv_zt, dv_u, dv_z, dv_zx; /* the first of each family of vectors (dev_create) */
  double dev_g[3];          /* the gravity DV_MG holds */
  double* hbuf;             /* [9 nmir + 3 nnode] scratch */
  int* csrc;                /* [4 + 3 nvec + nrow] a combination's vectors ... */
  double* ccoef;            /* ... and coefficients */
  double* u_norm;           /* [3 nvec] |unit load| of each interface column (its PCG's tolerance scale) */
  double* zt_mir;           /* [3 nvec][3 nmir] the columns Zt at the mirrored nodes (down once per
                               linearisation: Z's rows there, for G = J_F Z, formed from them here) */
};
/* the owned store's arrays: the state, the state at the step's start, the integrator's constants,
 * and the body's own forces (f_ext - f_el + m g: its part of d->Q, which keeps the generic force
 * elements' at the mirrored nodes) */
enum { OS_Q, OS_QD, OS_QDD, OS_ACC, OS_SAVE_Q, OS_SAVE_QD, OS_SAVE_QDD, OS_SAVE_ACC, OS_QD_HAT, OS_QDD_HAT, OS_F, OS_N };
#define OST(s, k, ndof) ((s)->ost + (size_t)(k) * (size_t)(ndof))
/* the device store's vectors: the OS_* state first (the same numbers), then the linear coupling's
 * own; then, from dv_zrest on, Zrest, Zt and the unit loads [3 nvec] each, Z and its scratch [nrow] */
enum { DV_BF = OS_F, DV_V0, DV_XP, DV_ZE0, DV_Y, DV_V0LAST, DV_V0PREV, DV_TMP, DV_MG, DV_EXT, DV_XPREV, DV_N };

/* ---- the store on the device (a GPU body of the linear coupling) --------------------------------
 * The body's own coordinates and the linear coupling's vectors stay on the device as resident
 * vectors (cofem/cuda.h, cf_cuda_vec_*): the integrator's updates and the step's combinations are
 * cf_cuda_vec_comb's, the free motion and the interface columns the device's PCG on them, the
 * columns turned there (cf_cuda_vec_turn). What crosses within a step is the interface: the
 * mirrored nodes' q, qd, qdd down after each update, the rows' nodes of y and Z down for the
 * rows' products, the joints' forces at the mirrored nodes up, and coefficients (docs/cuda.md,
 * "Why the mesh crosses"). Not with Rayleigh damping (its forces need the velocities on the host:
 * the store then stays on the host, the mesh crossing as before). */
static void unit_load(const struct cfMbsFeBody* fb, int v, int a, double* b);

/* y = beta y + sum c[k] vec src[k], in chunks of CF_CUDA_COMB_MAX sources */
static int dev_comb(struct cfMbsFeState* s, int y, double beta, int n, const int* src, const double* c) {
  int st = CF_OK, k = 0;
  do {
    const int nk = n - k < CF_CUDA_COMB_MAX ? n - k : CF_CUDA_COMB_MAX;
    st = cf_cuda_vec_comb(s->gpu, y, k ? 1.0 : beta, nk, src + k, c + k);
    k += nk;
  } while (st >= 0 && k < n);
  return st;
}

static int dev_copy(struct cfMbsFeState* s, int y, int x) {
  const double one = 1;
  return cf_cuda_vec_comb(s->gpu, y, 0, 1, &x, &one);
}

/* a device error in an op: returned by the next cf_mbs__fe_factor (the ops return nothing) */
static void dev_status(struct cfMbsFeState* s, int st) {
  if (st < 0 && s->gpu_status >= 0) s->gpu_status = st;
}

/* pcg_solve on the device's vectors (b_scale as pcg_solve's pcg_bscale), the clamped DOFs of x zero */
static int dev_solve(const cfMbsModel* mm, const struct cfMbsFeBody* fb, cfData* fd, struct cfMbsFeState* s, int b, int x,
                     double b_scale, int v1) {
  fd->supports_active = fb->fem->nfixed > 0;
  int st = cf_cuda_vec_solve(s->gpu, fb->fem, fd, 1, &b, &x, &b_scale, 1, v1);
  if (st != CF_OK)
    return cf_error(st < 0 ? st : CF_ERR_SOLVER, "FE body '%s': the PCG of the part's matrix (the linear coupling, on the "
                    "GPU): %s; a part in large bending may need the Newton coupling (solver.coupling \"newton\")",
                    mm->body_name[fb->body], cf_last_error());
  return cf_cuda_vec_unfix(s->gpu, x);
}

/* the mirrored nodes' q, qd, qdd of d into out [9 nmir] */
static void mir_values(const struct cfMbsFeBody* fb, const struct cfMbsFeState* s, const cfMbsData* d, double* out) {
  const double* live[3] = {d->q, d->qd, d->qdd};
  for (int k = 0; k < 3; k++)
    for (int j = 0; j < s->nmir; j++) memcpy(out + 3 * ((size_t)k * s->nmir + j), live[k] + fb->qadr[s->mir[j]], 3 * sizeof(double));
}

/* DV_MG = the nodes' m g, when gravity or the load factor changed */
static int dev_gravity(const cfMbsData* d, const struct cfMbsFeBody* fb, struct cfMbsFeState* s) {
  if (!memcmp(d->gravity, s->dev_g, sizeof s->dev_g)) return CF_OK;
  double* x = s->hbuf + 9 * (size_t)s->nmir;
  for (int n = 0; n < fb->nnode; n++)
    for (int a = 0; a < 3; a++) x[3 * n + a] = fb->fem->node_mass[n] * d->gravity[a];
  memcpy(s->dev_g, d->gravity, sizeof s->dev_g);
  return cf_cuda_vec_set(s->gpu, DV_MG, x);
}

/* its nodes are the device's, d's copies stale (but the mirrored nodes') */
static int on_device(const struct cfMbsFeState* s) { return s->dev && (s->owned || s->host_stale); }

/* A device-held body's energies there: 1/2 qd' M qd, -sum m g . x and the strain energy of the
 * device's polar at its positions (cf_cuda_monitor_stats' stress form); a few numbers down */
static int dev_energy(const cfMbsModel* m, const cfMbsData* d, int i, double* T, double* V) {
  const struct cfMbsFeBody* fb = &m->fe[i];
  struct cfMbsFeState* s = &d->fe_state[i];
  double t2 = NAN, vg = NAN, work;
  cfMonitorStats ms;
  ms.strain = NAN;
  int st = cf_cuda_vec_mass(s->gpu, OS_QD, DV_TMP);
  if (st >= 0) st = cf_cuda_vec_dot(s->gpu, OS_QD, DV_TMP, &t2);
  if (st >= 0) st = dev_gravity(d, fb, s);
  if (st >= 0) st = cf_cuda_vec_dot(s->gpu, DV_MG, OS_Q, &vg);
  if (st >= 0) st = cf_cuda_vec_field(s->gpu, OS_Q, CF_CUDA_X, 1);
  if (st >= 0) st = cf_cuda_stage_polar(s->gpu, fb->fem, d->fe_data[i]);
  if (st >= 0) st = cf_cuda_monitor_stats(s->gpu, fb->fem, 1, &ms, &work);
  if (T) *T = st < 0 ? NAN : 0.5 * t2;
  if (V) *V = st < 0 ? NAN : ms.strain - vg;
  dev_status(s, st);
  return st;
}

int cf_mbs__fe_block_on_device(const cfMbsModel* m, const cfMbsData* d, int b) {
  for (int i = 0; d->fe_state && i < m->nfe; i++) {
    const struct cfMbsFeBody* fb = &m->fe[i];
    if (on_device(&d->fe_state[i]) && b >= fb->blk[0] && b <= fb->blk[fb->nblk - 1]) return 1;
  }
  return 0;
}

/* vector v at the mirrored nodes into x (mesh order, the other entries untouched) */
static int dev_get_mir(struct cfMbsFeState* s, int v, double* x) {
  int st = cf_cuda_vec_get_nodes(s->gpu, v, s->nmir, s->mir, s->hbuf);
  for (int j = 0; st >= 0 && j < s->nmir; j++) memcpy(x + 3 * (size_t)s->mir[j], s->hbuf + 3 * j, 3 * sizeof(double));
  return st;
}

/* d's q, qd, qdd (bits 1, 2, 4 of what) at the mirrored nodes from the device */
enum { MIR_Q = 1, MIR_QD = 2, MIR_QDD = 4, MIR_ALL = 7 };
static int dev_mirror(const struct cfMbsFeBody* fb, struct cfMbsFeState* s, cfMbsData* d, int what) {
  double* live[3] = {d->q, d->qd, d->qdd};
  for (int k = 0; k < 3; k++) {
    if (!(what & (1 << k))) continue;
    int st = cf_cuda_vec_get_nodes(s->gpu, OS_Q + k, s->nmir, s->mir, s->hbuf);
    if (st < 0) return st;
    for (int j = 0; j < s->nmir; j++) memcpy(live[k] + fb->qadr[s->mir[j]], s->hbuf + 3 * j, 3 * sizeof(double));
  }
  return CF_OK;
}

/* the vectors, the columns at rest and the unit loads up once (linear_create, after Zrest) */
static int dev_create(const cfMbsModel* m, const struct cfMbsFeBody* fb, struct cfMbsFeState* s) {
  const int nv = fb->nvec, ndof = 3 * fb->nnode;
  s->dv_zrest = DV_N, s->dv_zt = DV_N + 3 * nv, s->dv_u = DV_N + 6 * nv, s->dv_z = DV_N + 9 * nv;
  s->dv_zx = s->dv_z + s->nrow;
  s->hbuf = malloc(sizeof(double) * (9 * (size_t)s->nmir + (size_t)ndof + 1));
  s->mir_last = calloc(9 * (size_t)s->nmir + 1, sizeof(double));
  int nsrc = 4 + 3 * nv + s->nrow; /* and a row's terms (linear_z_rows) */
  for (int k = 0; k < s->nrow; k++) nsrc += 3 * m->con[s->row[k]].nft;
  s->csrc = malloc(sizeof(int) * (size_t)nsrc);
  s->ccoef = malloc(sizeof(double) * (size_t)nsrc);
  s->u_norm = calloc(3 * (size_t)nv + 1, sizeof(double));
  s->zt_mir = calloc(9 * (size_t)nv * (size_t)s->nmir + 1, sizeof(double));
  if (!s->hbuf || !s->mir_last || !s->csrc || !s->ccoef || !s->u_norm || !s->zt_mir)
    return cf_error(CF_ERR_NOMEM, "out of memory");
  int st = cf_cuda_vec_create(s->gpu, s->dv_zx + s->nrow);
  double* b = s->hbuf + 9 * (size_t)s->nmir;
  for (int v = 0; v < nv && st >= 0; v++)
    for (int a = 0; a < 3 && st >= 0 && s->vec_used[v]; a++) {
      st = cf_cuda_vec_set(s->gpu, s->dv_zrest + 3 * v + a, s->Zrest + (size_t)(3 * v + a) * ndof);
      unit_load(fb, v, a, b);
      double bb = 0;
      for (int j = 0; j < ndof; j++) bb += b[j] * b[j];
      s->u_norm[3 * v + a] = sqrt(bb);
      if (st >= 0) st = cf_cuda_vec_set(s->gpu, s->dv_u + 3 * v + a, b);
    }
  s->dev_g[0] = s->dev_g[1] = s->dev_g[2] = NAN; /* DV_MG at the first right side */
  s->dev = st >= 0;
  return st;
}

/* The same on the CUDA backend ("backend": "cuda"): x uploaded, polar and elastic (K_R, element
 * forces, f_el) on the device, f_el (and K_R for the Rayleigh term -beta K_R v) downloaded; K_R
 * stays there for cf_cuda_system. A device error leaves f_el NaN (the Newton residual is then not
 * finite) and its status for the next cf_mbs__fe_factor. */
static void fe_stages_cuda(const struct cfMbsFeBody* fb, cfData* fd, struct cfMbsFeState* s, const double* q) {
  const cfModel* m = fb->fem;
  int st;
  if (s->dev && s->owned) { /* the positions are the device's, and so stay the forces (linear_bF) */
    st = cf_cuda_vec_field(s->gpu, OS_Q, CF_CUDA_X, 1);
    if (st >= 0) st = cf_cuda_stage_polar(s->gpu, m, fd);
    if (st >= 0) st = cf_cuda_stage_elastic(s->gpu, m);
    if (st < 0 && s->gpu_status >= 0) s->gpu_status = st;
    return;
  }
  if (q) gather(fb, q, fd->x); /* else fd->x is set */
  st = cf_cuda_upload(s->gpu, fd, CF_CUDA_X);
  if (st >= 0) st = cf_cuda_stage_polar(s->gpu, m, fd);
  if (st >= 0) st = cf_cuda_stage_elastic(s->gpu, m);
  /* the linear coupling turns its interface columns on the host: the element rotations too */
  if (st >= 0)
    st = cf_cuda_download(s->gpu, fd, CF_CUDA_F_EL | (m->def.rayleigh_beta != 0 ? CF_CUDA_KR : 0) | (fb->linear ? CF_CUDA_R : 0));
  if (st < 0 && s->gpu_status >= 0) s->gpu_status = st;
  if (st < 0)
    for (int k = 0; k < m->ndof; k++) fd->f_el[k] = NAN;
}

static const double* fe_extra(const cfMbsData* d, int i);

/* The rigid rotation that best carries the part's nodes from x0 to x1 (mass-weighted least squares,
 * Kabsch): the polar of sum m (x1 - c1)(x0 - c0)^T, c the mass centres. */
static void rigid_turn(const cfModel* fem, const double* x0, const int* qadr0, const double* x1, const int* qadr1,
                       double R[9]) {
  double c0[3] = {0, 0, 0}, c1[3] = {0, 0, 0}, mt = 0, S[9] = {0};
  /* a node's position: in the mechanism's q (its qadr), or in mesh order (NULL) */
#define CF_AT(x, qadr, n) ((qadr) ? (x) + (qadr)[n] : (x) + 3 * (size_t)(n))
  for (int n = 0; n < fem->nnode; n++) {
    const double mn = fem->node_mass[n], *p0 = CF_AT(x0, qadr0, n), *p1 = CF_AT(x1, qadr1, n);
    mt += mn;
    for (int a = 0; a < 3; a++) c0[a] += mn * p0[a], c1[a] += mn * p1[a];
  }
  for (int a = 0; a < 3; a++) c0[a] /= mt, c1[a] /= mt;
  for (int n = 0; n < fem->nnode; n++) {
    const double mn = fem->node_mass[n], *p0 = CF_AT(x0, qadr0, n), *p1 = CF_AT(x1, qadr1, n);
    for (int a = 0; a < 3; a++)
      for (int b = 0; b < 3; b++) S[3 * a + b] += mn * (p1[a] - c1[a]) * (p0[b] - c0[b]);
  }
#undef CF_AT
  cf_polar_rotation(S, NULL, R);
}

/* R <- T R for n 3x3 blocks */
static void turn_blocks(const double T[9], double* R, int n) {
  for (int b = 0; b < n; b++) {
    double O[9];
    cf_mul3(T, R + 9 * (size_t)b, O);
    memcpy(R + 9 * (size_t)b, O, sizeof O);
  }
}

/* The linear coupling's linearisation of a step (pass 0): the element rotations of the step's end,
 * predicted as the polar at the step's start turned by the part's rigid rotation over the step,
 *   R_p,e = D polar(F_e(x_n)),
 * then the forces at the predictor q (the model's force -R_p K0 (R_p^T x - X) is affine in x for
 * the frozen R_p: only R_p decides it). D, the rigid rotation, is the best fit (rigid_turn) of the
 * Newmark predictor with a_n+1 = a_n, x~ = x_n + h v_n + h^2/2 a_n (the algorithmic acceleration),
 * times the last step's miss of that prediction (its measured rotation times the inverse of its
 * Newmark one). Why so exact: K_R lacks the geometric stiffness, so a frame D off by d rotates the
 * part's prestress (the weight it carries at the pin) by -d, a torque of first order in d. The lug
 * pendulum (dt 5 ms, 20 periods) lost 0.7% of its swing's energy with the Newmark rotation alone
 * (its miss 1e-5 rad a step, h^3 of the swing's jerk, always against the motion); 1e-3 more of
 * the turn's angle made it 1.4%, 1e-3 less +0.05%. Elastic velocities are left out of the
 * prediction: the polar of x~ itself put E x 100 off at once (its stiff modes' velocities at dt).
 * A second linearisation, where cf_mbs__fe_single_miss asks for one, is fe_stages' at the first
 * Newton iterate (d->fe_pass): the polar there. */
static void linear_rotations(const cfMbsModel* m, cfMbsData* d, const struct cfMbsFeBody* fb, cfData* fd,
                             struct cfMbsFeState* s, double* G) {
  const cfModel* fem = fb->fem;
  const double h = m->opt.dt;
  const int ndof = fem->ndof;
  /* the step's start from the body's store (the linear coupling's bodies own their nodes) */
  const double *xn = OST(s, OS_SAVE_Q, ndof), *vn = OST(s, OS_SAVE_QD, ndof), *an = OST(s, OS_SAVE_ACC, ndof);
  double D[9];
  for (int j = 0; j < ndof; j++) fd->x[j] = xn[j] + h * vn[j] + 0.5 * h * h * an[j];
  rigid_turn(fem, xn, NULL, fd->x, NULL, D);
  double Dn[9];
  memcpy(Dn, D, sizeof D);
  if (s->lin_prev_step == d->steps - 1 && d->steps > 0) { /* the last step's miss, carried */
    double Ra[9], Mi[9];
    rigid_turn(fem, s->xprev, NULL, xn, NULL, Ra);
    cf_mul3_nt(Ra, s->lin_dRn, Mi);
    cf_mul3(Mi, Dn, D);
  }
  memcpy(s->lin_dRn, Dn, sizeof Dn);
  memcpy(s->xprev, xn, sizeof(double) * (size_t)ndof);
  s->lin_prev_step = d->steps;
  memcpy(fd->x, xn, sizeof(double) * (size_t)ndof); /* q_n */
  /* one Newton correction of the polar from the last step's R_p, which predicted these rotations to
   * the step's miss (the lug pendulum: 1e-6 rad; the correction's error is its square). Where an
   * element bent more, the check after the first iterate linearises again with the full polar. */
  if (fem->npe == 10) /* the quadratic element's polar of F at the centroid, warm-started from the last R_p */
    CF_FOR(fem, e, fem->ntet, fem->ntet > 4096, cf_tet10_elem_polar(e, fem->tet, fem->Gc, fd->x, fd->R));
  else
    CF_FOR(fem, e, fem->ntet, fem->ntet > 4096, cf_elem_polar_step(e, fem->tet, fem->Dm_inv, fd->x, fd->R));
  turn_blocks(D, fd->R, fem->ntet);
  if (fd->node_R) turn_blocks(D, fd->node_R, fem->nnode); /* their warm start turned alike */
  memcpy(fd->x, OST(s, OS_Q, ndof), sizeof(double) * (size_t)ndof);
  fe_stage_forces(fem, fd, G);
}

/* linear_rotations on the device (linear tetrahedra): the rigid fits from 16 sums there, D from
 * the polar of their 3x3 here, the elements' polar correction and the turn there */
static int dev_rigid_turn(struct cfMbsFeState* s, int v0, int v1, double R[9]) {
  double t[16], S[9];
  int st = cf_cuda_vec_rigid_sums(s->gpu, v0, v1, t);
  if (st < 0) return st;
  for (int a = 0; a < 3; a++) /* sum m (x1 - c1)(x0 - c0)^T */
    for (int b = 0; b < 3; b++) S[3 * a + b] = t[7 + 3 * a + b] - t[4 + a] * t[1 + b] / t[0];
  cf_polar_rotation(S, NULL, R);
  return CF_OK;
}

static int dev_linear_rotations(const cfMbsModel* m, cfMbsData* d, const struct cfMbsFeBody* fb, struct cfMbsFeState* s) {
  const double h = m->opt.dt;
  const int src[3] = {OS_SAVE_Q, OS_SAVE_QD, OS_SAVE_ACC};
  const double c[3] = {1, h, 0.5 * h * h};
  double D[9], Dn[9];
  int st = cf_cuda_vec_comb(s->gpu, DV_TMP, 0, 3, src, c); /* the Newmark predictor x~ */
  if (st >= 0) st = dev_rigid_turn(s, OS_SAVE_Q, DV_TMP, D);
  if (st < 0) return st;
  memcpy(Dn, D, sizeof D);
  if (s->lin_prev_step == d->steps - 1 && d->steps > 0) { /* the last step's miss, carried */
    double Ra[9], Mi[9];
    if ((st = dev_rigid_turn(s, DV_XPREV, OS_SAVE_Q, Ra)) < 0) return st;
    cf_mul3_nt(Ra, s->lin_dRn, Mi);
    cf_mul3(Mi, Dn, D);
  }
  memcpy(s->lin_dRn, Dn, sizeof Dn);
  s->lin_prev_step = d->steps;
  st = dev_copy(s, DV_XPREV, OS_SAVE_Q);
  if (st >= 0) st = cf_cuda_polar_step(s->gpu, OS_SAVE_Q);
  if (st >= 0) st = cf_cuda_turn_rotations(s->gpu, D);
  if (st >= 0) st = cf_cuda_vec_field(s->gpu, OS_Q, CF_CUDA_X, 1);
  if (st >= 0) st = cf_cuda_stage_elastic(s->gpu, fb->fem);
  return st;
}

/* The single linearisation's check, after the step's first Newton update (mbs_step.c): the largest
 * angle, over the linearly coupled parts' elements, by which the iterate q turned an element beyond
 * its frozen rotation R_p,e (cf_elem_turn_beyond2: the part's rigid rotation missed, or bending that
 * changes within the step). The step's model
 * turns them by the difference linearly, I + skew(d), which stretches them by d^2 / 2, and leaves
 * their prestress unturned by d: at a run's first step (no acceleration known yet) the lug with
 * E x 100 took 0.05 J (its swing's energy); the spin-up beam (its centrifugal prestress, its bending
 * lagging by a step) took 1e11 J in 1.7 s; the door's hinge, clamped, bends at 4e-3 rad a step
 * beyond the polar at the step's start (its sag 1.5% off the Newton coupling's with one
 * linearisation). A GPU body: always (its polar is at the predictor, on the device). */
/* cf_elem_turn_beyond2 of a quadratic element: the same measure of M = F R_e^T with F at its
 * centroid (cf_tet10_deformation_gradient), the F its rotation is the polar of */
static double tet10_turn_beyond2(const cfModel* fem, int e, const double* x, const double* R) {
  double F[9], M[9];
  cf_tet10_deformation_gradient(x, fem->tet + 10 * (size_t)e, fem->Gc + 30 * (size_t)e, F);
  const double* Re = R + 9 * (size_t)e;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) M[3 * i + j] = F[3 * i] * Re[3 * j] + F[3 * i + 1] * Re[3 * j + 1] + F[3 * i + 2] * Re[3 * j + 2];
  const double a0 = M[7] - M[5], a1 = M[2] - M[6], a2 = M[3] - M[1], c = M[0] + M[4] + M[8] - 1;
  return c > 0 ? (a0 * a0 + a1 * a1 + a2 * a2) / (c * c) : INFINITY;
}

/* the largest angle [rad] by which a free part's elements may turn beyond R_p,e: at a run's first step
 * (no acceleration known yet: 3e-3 rad) the lug with E x 100 took 0.05 J (its swing's energy) with
 * one linearisation; with 1e-3 it gained 3.4e-3 of its swing's energy in 300 steps of 10 ms, with
 * 3e-4 1.1e-3 (26 steps linearised twice, mostly its first), with 1e-4 the same (163). A free part's
 * miss turns its prestress against an unresisted rigid rotation, and the error adds up over the swing.
 * A clamped part's miss d turns its forces by d against its clamp, which holds them: a relative
 * error of about d in its deformation that does not add up. The door's hinge (its elements turn
 * 4e-3 rad a step beyond the prediction: its 18 Hz bounce under the door, unresolved at dt 10 ms),
 * 150 steps against the Newton coupling, with the rotated factor: peak pin sag -2.9e-3 linearised
 * twice every step, -1.0e-2 once (3e-3: 184 of 300 steps twice, +2.6e-3; 5e-3: 10 of 300, -9.5e-3),
 * 1.3x faster. */
#define SINGLE_MISS_FREE 3e-4
#define SINGLE_MISS_CLAMPED 1e-2

/* returns the worst ratio of a part's miss to what it allows: above 1, linearise again */
/* "factor": "rotated" in this step: not while a failed step's fall-back to the exact factor lasts */
static int rotated_now(const struct cfMbsFeBody* fb, const struct cfMbsFeState* s, const cfMbsData* d) {
  return fb->linear_rotated && d->steps >= s->rot_exact_until;
}

/* The rotated factor's model against the part's own matrix on the step's free motion v0 = A~^-1 b:
 *   err = |b - A v0| / |b|,  A = cm M + ck K_R + eps I of the linearisation (the clamped DOFs left out),
 * by one product with A (element by element where the forces were, else assembled). Its step's model
 * is A~ = Q A0(rest) Q^T; where the part bends far, node and element rotations part and A~ leaves A:
 * a linearly implicit step then takes A - A~ explicitly, which is unstable for a stiff part. Measured
 * (largest over the run): the lug pendulum 2.9e-3 (dt 5 ms), with E x 100 2.8e-5; the door's clamped
 * hinge 0.39 (dt 10 ms; harmless there: a clamped part's error does not add up, as its rotation miss,
 * SINGLE_MISS_CLAMPED); the spin-up beam (free, dt 10 ms) 1e-3, 1.2e-2, 5e-2, 0.14 in its first four
 * steps, 0.33 in the fourth's second linearisation, 1.0 at the seventh, then 1-9 as its tip went 10%
 * off at 0.3 s and 42 m at 1.3 s. The bounds leave the lug 100x, the door 2.6x. */
#define ROTATED_MODEL_FREE 0.3
#define ROTATED_MODEL_CLAMPED 1.0
static int current_A0(const struct cfMbsFeBody* fb, cfData* fd, struct cfMbsFeState* s, double cm, double ck, double eps);
static double rotated_model_error(const struct cfMbsFeBody* fb, cfData* fd, struct cfMbsFeState* s) {
  const cfModel* fem = fb->fem;
  const double cm = s->lin_coef[0], ck = s->lin_coef[1], eps = s->lin_coef[2];
  if (s->mf_now && s->G) {
    const cfMatfreeOp op = {s->G, s->ye, cm, ck, eps};
    cf_matfree_apply(fem, &op, s->v0, s->zres);
  } else {
    if (current_A0(fb, fd, s, cm, ck, eps) < 0) return INFINITY;
    cf_bsr_apply(fem, fd->A, s->v0, s->zres);
  }
  double rr = 0, bb = 0;
  for (int j = 0; j < fem->ndof; j++) {
    if (fem->nfixed && fem->fixed[j]) continue;
    const double r = s->bF[j] - s->zres[j];
    rr += r * r, bb += s->bF[j] * s->bF[j];
  }
  return bb > 0 ? sqrt(rr / bb) : 0;
}

/* A step of the linear coupling that failed with "factor": "rotated" is taken again with the exact
 * factor (its own linearisation's A0, factored), and the part keeps the exact factor for the next
 * ROTATED_FALLBACK_STEPS steps before the rotated one is tried again. The rotated factor is the
 * matrix at rest turned: it lacks the geometric stiffness of the part's stress, which the spin-up
 * beam's centrifugal tension makes large (docs/mbs.md: its step failed at 0.45 s, "the leading
 * matrix is not positive definite"). Returns the parts that fell back (0: none could). */
#define ROTATED_FALLBACK_STEPS 50
int cf_mbs__fe_rotated_fall_back(const cfMbsModel* m, cfMbsData* d) {
  int n = 0;
  for (int i = 0; i < m->nfe; i++) {
    struct cfMbsFeState* s = &d->fe_state[i];
    if (!rotated_now(&m->fe[i], s, d)) continue;
    s->rot_exact_until = d->steps + 1 + ROTATED_FALLBACK_STEPS;
    n++;
  }
  return n;
}

double cf_mbs__fe_single_miss(const cfMbsModel* m, const cfMbsData* d) {
  double worst = 0;
  for (int i = 0; i < m->nfe; i++) {
    const struct cfMbsFeBody* fb = &m->fe[i];
    if (!fb->corotational || !fb->linear || !d->fe_state) continue;
    const struct cfMbsFeState* s = &d->fe_state[i];
    const cfModel* fem = fb->fem;
    if (s->dev && s->owned && fem->npe == 4) { /* its nodes and rotations on the device: the reduction there */
      double t2 = INFINITY;
      if (cf_cuda_turn_beyond(s->gpu, OS_Q, &t2) < 0) dev_status((struct cfMbsFeState*)s, CF_ERR_CUDA), t2 = INFINITY;
      d->fe_state[i].lin_miss = atan(sqrt(t2));
      worst = fmax(worst, d->fe_state[i].lin_miss / (fem->nfixed ? SINGLE_MISS_CLAMPED : SINGLE_MISS_FREE));
      continue;
    }
    if (s->gpu) return INFINITY; /* linearised at the predictor itself: twice (fe_stages_cuda) */
    const cfData* fd = d->fe_data[i];
    const double* x = OST(&d->fe_state[i], OS_Q, fem->ndof); /* its own nodes (fe_own) */
    double t2 = 0;
    for (int e = 0; e < fem->ntet; e++) {
      const double a = fem->npe == 10 ? tet10_turn_beyond2(fem, e, x, fd->R) : cf_elem_turn_beyond2(e, fem->tet, fem->Dm_inv, x, fd->R);
      if (!(a <= t2)) t2 = isnan(a) ? INFINITY : a; /* a NaN position: linearise again (the step fails there) */
    }
    d->fe_state[i].lin_miss = atan(sqrt(t2));
    worst = fmax(worst, d->fe_state[i].lin_miss / (fem->nfixed ? SINGLE_MISS_CLAMPED : SINGLE_MISS_FREE));
  }
  return worst;
}

/* ---- forces and tangents ------------------------------------------------------------------------ */
/* d->Q += -f_el + m g + loads - C v of the FE nodes (runs the co-rotational stages at q) */
static void cf_mbs__fe_forces(const cfMbsModel* m, cfMbsData* d, const double* q, const double* qd, double t) {
  const double* g = d->gravity;
  for (int i = 0; i < m->nfe; i++) {
    const struct cfMbsFeBody* fb = &m->fe[i];
    const cfModel* fem = fb->fem;
    cfData* fd = d->fe_data[i];
    double ra = fem->def.rayleigh_alpha, rb = fem->def.rayleigh_beta;
    /* K_R is needed by the lumped body's matrix, the Rayleigh term -beta K_R v and a factorisation of
     * the exact A0 (formed there, cf_mbs__fe_factor, when stale); the rotated factor and a kept
     * exact one need only the forces */
    struct cfMbsFeState* s = d->fe_state && fb->corotational ? &d->fe_state[i] : NULL;
    if (s && fb->linear && d->fe_linear) {
      /* the linear coupling: the part's forces once per step, at the predictor; its Newton
       * residual is linear from there (linear_y), so the F part of Q is not read again */
      if (s->lin_forces == 4 * d->step_serial + d->fe_pass) continue;
      s->lin_forces = 4 * d->step_serial + d->fe_pass;
    }
    const int lin_mf = s && fb->linear && d->fe_linear && s->lin_mf; /* the PCG needs only G */
    int mf = s && s->G && rb == 0 && (!(fb->linear && d->fe_linear) || lin_mf);
    /* the exact factor: only where the next cf_mbs__fe_factor will keep it (its own test, below);
     * elsewhere K_R is needed at once and cf_elem_rotate forms it with the forces for less */
    if (mf && !lin_mf && (fb->exact_factor || fb->a0_pcg) && !s->fb_on)
      mf = d->steps == s->key_step && s->key_uses >= 2 && d->newton_dq <= 1e-2 * d->newton_dq0;
    /* a body that owns its coordinates in this step: positions and velocities from its store, its
     * forces into it (own_begin) */
    const int own = s && s->owned;
    if (own && !s->dev) memcpy(fd->x, OST(s, OS_Q, fem->ndof), sizeof(double) * (size_t)fem->ndof);
    const double* qx = own ? NULL : q; /* NULL: fd->x is set */
    if (own && s->dev && fem->npe == 4 && (d->fe_pass == 0 || s->lin_miss < LINEAR_MISS_STEP)) {
      /* on the device as on the CPU: the predicted rotations (linear_rotations), or one correction
       * of their polar at the first iterate */
      int st = d->fe_pass == 0 ? dev_linear_rotations(m, d, fb, s) : cf_cuda_polar_step(s->gpu, OS_Q);
      if (st >= 0 && d->fe_pass > 0) st = cf_cuda_vec_field(s->gpu, OS_Q, CF_CUDA_X, 1);
      if (st >= 0 && d->fe_pass > 0) st = cf_cuda_stage_elastic(s->gpu, fem);
      dev_status(s, st);
    } else if (s && s->gpu) /* its polar on the device: at the predictor, then at the first iterate (single_miss) */
      fe_stages_cuda(fb, fd, s, qx);
    else if (s && fb->linear && d->fe_linear && d->fe_pass == 0)
      linear_rotations(m, d, fb, fd, s, mf ? s->G : NULL);
    else if (s && fb->linear && d->fe_linear && s->lin_miss < LINEAR_MISS_STEP && fem->npe == 4) {
      /* the second linearisation, where the first iterate turned its elements little beyond R_p:
       * one Newton correction of their polar from there (its error the miss squared, 1e-5 rad on
       * the door's hinge; the full polar was a fifth of its step, with the same trajectory) */
      if (qx) gather(fb, qx, fd->x);
      CF_FOR(fem, e, fem->ntet, fem->ntet > 4096, cf_elem_polar_step(e, fem->tet, fem->Dm_inv, fd->x, fd->R));
      fe_stage_forces(fem, fd, mf ? s->G : NULL);
    } else
      fe_stages(fb, fd, qx, mf ? s->G : NULL);
    if (s) s->kr_stale = mf && !s->gpu;
    /* f_ext in the FE data: loads, then -beta K_R v (element products) */
    memset(fd->f_ext, 0, sizeof(double) * 3 * (size_t)fb->nnode);
    for (int l = 0; l < fb->nload; l++) {
      const cfMbsModalLoad* L = &fb->load[l];
      double sc[3] = {1, 0, 0};
      if (L->has_scale) cf_mbs_func_eval(&L->scale, t, sc);
      sc[0] *= d->load_factor;
      int v = fb->pt_vec[L->point];
      for (int k = fb->vec_ptr[v]; k < fb->vec_ptr[v + 1]; k++)
        for (int a = 0; a < 3; a++) fd->f_ext[3 * fb->vec_node[k] + a] += sc[0] * fb->vec_w[k] * L->force[a];
    }
    if (own && !s->dev) memcpy(fd->v, OST(s, OS_QD, fem->ndof), sizeof(double) * (size_t)fem->ndof);
    if (rb != 0) {
      if (!own) gather(fb, qd, fd->v);
      const int npe = fem->npe, nk = 3 * npe;
      for (int e = 0; e < fem->ntet; e++) {
        const double* K = fd->KR + (size_t)nk * nk * e;
        const int* tn = fem->tet + npe * e;
        for (int r = 0; r < nk; r++) {
          double s = 0;
          for (int c = 0; c < nk; c++) s += K[nk * r + c] * fd->v[3 * tn[c / 3] + c % 3];
          fd->f_ext[3 * tn[r / 3] + r % 3] -= rb * s;
        }
      }
    }
    if (ra != 0 && fb->corotational) { /* -alpha M v with the scene's (consistent) mass; lumped: below */
      if (!own) gather(fb, qd, fd->v);
      for (int n = 0; n < fb->nnode; n++)
        for (int p = fem->row_ptr[n]; p < fem->row_ptr[n + 1]; p++)
          for (int a = 0; a < 3; a++) fd->f_ext[3 * n + a] -= ra * fem->Mblk[p] * fd->v[3 * fem->col[p] + a];
    }
    const double* extra = fe_extra(d, i);
    if (extra)
      for (int k = 0; k < 3 * fb->nnode; k++) fd->f_ext[k] += extra[k];
    double ral = fb->corotational ? 0 : ra;
    if (own && s->dev) continue; /* its forces on the device (linear_bF), fd->f_ext its loads */
    if (own) { /* d->Q keeps the force elements' at the body's mirrored nodes (linear_bF) */
      double* F = OST(s, OS_F, fem->ndof);
      for (int n = 0; n < fb->nnode; n++)
        for (int a = 0; a < 3; a++) F[3 * n + a] = fd->f_ext[3 * n + a] - fd->f_el[3 * n + a] + fem->node_mass[n] * g[a];
      continue;
    }
    for (int n = 0; n < fb->nnode; n++) {
      double mn = fem->node_mass[n];
      double* Qn = d->Q + fb->qadr[n];
      const double* vn = qd + fb->qadr[n];
      for (int a = 0; a < 3; a++) Qn[a] += fd->f_ext[3 * n + a] - fd->f_el[3 * n + a] + mn * (g[a] - ral * vn[a]);
    }
  }
}

/* Ax += (cK + beta cC) K_R + alpha cC M of the FE bodies (the mass cM M is in Mbar), at the state
 * of the last cf_mbs__fe_forces */
static void cf_mbs__fe_assemble(const cfMbsModel* m, cfMbsData* d, double cC, double cK) {
  for (int i = 0; i < m->nfe; i++) {
    const struct cfMbsFeBody* fb = &m->fe[i];
    const cfModel* fem = fb->fem;
    const cfData* fd = d->fe_data[i];
    if (fb->corotational) continue; /* condensed: its matrix is formed by cf_mbs__fe_factor */
    double sk = cK + cC * fem->def.rayleigh_beta, sm = cC * fem->def.rayleigh_alpha;
    const int npe = fem->npe, nk = 3 * npe;
    if (sk != 0)
      for (int e = 0; e < fem->ntet; e++) {
        const double* K = fd->KR + (size_t)nk * nk * e;
        const int* tn = fem->tet + npe * e;
        for (int a = 0; a < npe; a++)
          for (int b = 0; b < npe; b++) {
            double B[9];
            for (int r = 0; r < 3; r++)
              for (int c = 0; c < 3; c++) B[3 * r + c] = K[nk * (3 * a + r) + 3 * b + c];
            cf_mbs__add_3x3(m, d->Ax, fb->qadr[tn[a]], fb->node_blk[tn[a]], fb->qadr[tn[b]], fb->node_blk[tn[b]], B, sk);
          }
      }
    if (sm != 0)
      for (int n = 0; n < fb->nnode; n++) {
        double mn = fem->node_mass[n], B[9] = {mn, 0, 0, 0, mn, 0, 0, 0, mn};
        cf_mbs__add_3x3(m, d->Ax, fb->qadr[n], fb->node_blk[n], fb->qadr[n], fb->node_blk[n], B, sm);
      }
  }
}

/* y += the off-diagonal blocks of the corotational bodies' (consistent) mass times x (the diagonal
 * is in Mbar) */
static void cf_mbs__fe_mass_offdiag(const cfMbsModel* m, const cfMbsData* d, const double* x, double* y) {
  for (int i = 0; i < m->nfe; i++) {
    const struct cfMbsFeBody* fb = &m->fe[i];
    const cfModel* fem = fb->fem;
    if (!fb->corotational || (d->fe_state && d->fe_state[i].owned)) continue; /* owned: its own (linear_bF) */
    for (int n = 0; n < fb->nnode; n++)
      for (int p = fem->row_ptr[n]; p < fem->row_ptr[n + 1]; p++) {
        if (p == fem->diag[n] || fem->Mblk[p] == 0) continue;
        const double* xc = x + fb->qadr[fem->col[p]];
        double* yn = y + fb->qadr[n];
        for (int a = 0; a < 3; a++) yn[a] += fem->Mblk[p] * xc[a];
      }
  }
}

/* the corotational bodies' kinetic energy of the off-diagonal mass blocks */
static double cf_mbs__fe_kinetic_offdiag(const cfMbsModel* m, const cfMbsData* d) {
  double T = 0;
  for (int i = 0; i < m->nfe; i++) {
    const struct cfMbsFeBody* fb = &m->fe[i];
    const cfModel* fem = fb->fem;
    if (!fb->corotational) continue;
    if (d->fe_state && on_device(&d->fe_state[i])) { /* all of it (cf_mbs_energy left its blocks out) */
      double Ti;
      dev_energy(m, d, i, &Ti, NULL);
      T += Ti;
      continue;
    }
    for (int n = 0; n < fb->nnode; n++)
      for (int p = fem->row_ptr[n]; p < fem->row_ptr[n + 1]; p++)
        if (p != fem->diag[n]) T += 0.5 * fem->Mblk[p] * cf_mbs_dot3(d->qd + fb->qadr[n], d->qd + fb->qadr[fem->col[p]]);
  }
  return T;
}

/* gravity potential of the nodes and co-rotational strain energy */
static double cf_mbs__fe_potential(const cfMbsModel* m, const cfMbsData* d) {
  double V = 0;
  for (int i = 0; i < m->nfe; i++) {
    const struct cfMbsFeBody* fb = &m->fe[i];
    if (d->fe_state && on_device(&d->fe_state[i])) {
      double Vi;
      dev_energy(m, d, i, NULL, &Vi);
      V += Vi;
      continue;
    }
    for (int n = 0; n < fb->nnode; n++) V -= fb->fem->node_mass[n] * cf_mbs_dot3(d->gravity, d->q + fb->qadr[n]);
    V += cf_mbs_fe_elastic_energy(m, d, i);
  }
  return V;
}

/* ---- joint terms -------------------------------------------------------------------------------- */
/* the weighted sum of node positions (or velocities) of vector v */
static void vec_sum(const struct cfMbsFeBody* fb, int v, const double* q, double S[3]) {
  S[0] = S[1] = S[2] = 0;
  for (int k = fb->vec_ptr[v]; k < fb->vec_ptr[v + 1]; k++)
    for (int a = 0; a < 3; a++) S[a] += fb->vec_w[k] * q[fb->qadr[fb->vec_node[k]] + a];
}

static int slot_of_body(const cfMbsCon* c, int b) {
  for (int s = 0; s < c->nb; s++)
    if (c->body[s] == b) return s;
  return 0;
}

/* FE term k of equation c times co (its driver coefficient's value, 1 without): its value at q and
 * gradient (added to row), or its acceleration bias 2 s co Sdot . Bdot when qd is given */
double cf_mbs__fe_term(const cfMbsModel* m, const cfMbsCon* c, int k, const double* q, const double* qd, double* row,
                       double co, const double* Bx) {
  const struct cfMbsFeBody* fb = &m->fe[c->ft_fe[k]];
  int v = c->ft_vec[k], comp = c->ft_comp[k];
  double s = co * c->ft_s[k], S[3], B[3];
  if (qd) {
    if (comp >= 0) return 0; /* constant direction: the term is linear in q */
    vec_sum(fb, v, qd, S);
    cf_mbs_vec_lin(m, &c->ft_b[k], qd, B);
    return 2 * s * cf_mbs_dot3(S, B);
  }
  vec_sum(fb, v, q, S);
  if (comp >= 0) B[0] = B[1] = B[2] = 0, B[comp] = 1;
  else cf_mbs_vec_val(m, &c->ft_b[k], q, B);
  double Bt[3] = {B[0], B[1], B[2]}; /* with Bx: the nodes' gradient and the value take B + Bx */
  if (Bx)
    for (int a = 0; a < 3; a++) Bt[a] += Bx[a];
  if (row) {
    for (int e = fb->vec_ptr[v]; e < fb->vec_ptr[v + 1]; e++) {
      int n = fb->vec_node[e];
      double* r = row + 12 * slot_of_body(c, fb->node_blk[n]) + (fb->qadr[n] - m->body_qadr[fb->node_blk[n]]);
      for (int a = 0; a < 3; a++) r[a] += s * fb->vec_w[e] * Bt[a];
    }
    if (comp < 0) {
      const cfMbsVec* bv = &c->ft_b[k];
      for (int t = 0; t < bv->nb; t++) {
        double* r = row + 12 * slot_of_body(c, bv->body[t]);
        for (int l = 0; l < 4; l++)
          if (bv->w[t][l] != 0)
            for (int a = 0; a < 3; a++) r[3 * l + a] += s * bv->w[t][l] * S[a];
      }
    }
  }
  return s * cf_mbs_dot3(S, Bt);
}

/* FE term k's factors at q: S = sum_i w_i x_i and B; with qd also their rates Sd, Bd (the bias of
 * a term whose coefficient moves with time: 2 co' (Sd . B + S . Bd)) */
void cf_mbs__fe_term_vecs(const cfMbsModel* m, const cfMbsCon* c, int k, const double* q, const double* qd, double S[3],
                          double B[3], double Sd[3], double Bd[3]) {
  const struct cfMbsFeBody* fb = &m->fe[c->ft_fe[k]];
  const int v = c->ft_vec[k], comp = c->ft_comp[k];
  vec_sum(fb, v, q, S);
  if (comp >= 0) B[0] = B[1] = B[2] = 0, B[comp] = 1;
  else cf_mbs_vec_val(m, &c->ft_b[k], q, B);
  if (!qd) return;
  vec_sum(fb, v, qd, Sd);
  if (comp >= 0) Bd[0] = Bd[1] = Bd[2] = 0;
  else cf_mbs_vec_lin(m, &c->ft_b[k], qd, Bd);
}

/* the node blocks of the equation's FE terms (and their vectors' bodies) become slots; nb = -1
 * when they do not fit */
void cf_mbs__fe_slots(const cfMbsModel* m, cfMbsCon* c) {
  for (int k = 0; k < c->nft && c->nb >= 0; k++) {
    const struct cfMbsFeBody* fb = &m->fe[c->ft_fe[k]];
    int v = c->ft_vec[k];
    int nadd = c->ft_comp[k] < 0 ? c->ft_b[k].nb : 0;
    for (int e = fb->vec_ptr[v]; e < fb->vec_ptr[v + 1] + nadd; e++) {
      int b = e < fb->vec_ptr[v + 1] ? fb->node_blk[fb->vec_node[e]] : c->ft_b[k].body[e - fb->vec_ptr[v + 1]];
      if (cf_mbs__con_add_slot(c, b) < 0) return;
    }
  }
}

/* point k of FE body ib: rest position in the global frame at t = 0 and its mean vector */
int cf_mbs__fe_point(const cfMbsModel* m, int ib, int k, double P[3]) {
  const struct cfMbsFeBody* fb = &m->fe[ib];
  const double* X = fb->pt_X + 3 * k;
  for (int a = 0; a < 3; a++) P[a] = fb->pos[a] + fb->rot[3 * a] * X[0] + fb->rot[3 * a + 1] * X[1] + fb->rot[3 * a + 2] * X[2];
  return fb->pt_vec[k];
}

/* The axis of point k along the global direction `axis` (unit, at t = 0): the node sum
 * d = sum_i w_i x_i with w_i = Y_i^T C^+ a, Y_i = X_i - mean, C = sum Y_i Y_i^T, a the axis in the
 * body frame. Then sum w_i = 0 and d = C C^+ a = a at rest, and d = Q a for any rigid motion (Q a
 * rotation): a least-squares measure of where the set's axis points, which does not need a
 * symmetric set. A flat set (an end face: C of rank 2) measures the directions in its plane the same
 * way, with C's pseudo-inverse; an axis along its normal cannot be measured linearly (it is the cross
 * product of two in-plane ones): *normal = 1 and nothing is returned, the caller measures two
 * in-plane directions instead. Returns the vector's index (rest length 1), or a negative status
 * (fewer than 3 nodes, a set on a line, an axis oblique to a flat set's plane). */
int cf_mbs__fe_axis(cfMbsModel* m, int ib, int k, const double axis[3], const char* who, const char* set, double* len,
                    int* normal) {
  struct cfMbsFeBody* fb = &m->fe[ib];
  int v = fb->pt_vec[k], n0 = fb->vec_ptr[v], nn = fb->vec_ptr[v + 1] - n0;
  *normal = 0;
  double al[3]; /* the axis in the body frame: rot^T axis */
  for (int a = 0; a < 3; a++) al[a] = fb->rot[a] * axis[0] + fb->rot[3 + a] * axis[1] + fb->rot[6 + a] * axis[2];
  const double* Xm = fb->pt_X + 3 * k;
  double C[9] = {0};
  for (int e = 0; e < nn; e++) {
    const double* X = fb->fem->X + 3 * fb->vec_node[n0 + e];
    double Y[3] = {X[0] - Xm[0], X[1] - Xm[1], X[2] - Xm[2]};
    for (int a = 0; a < 3; a++)
      for (int b = 0; b < 3; b++) C[3 * a + b] += Y[a] * Y[b];
  }
  /* C = V diag(lam) V^T (LAPACK, ascending; the eigenvectors in V's columns, row-major) */
  double V[9], lam[3];
  memcpy(V, C, sizeof V);
  if (nn < 3 || LAPACKE_dsyev(LAPACK_ROW_MAJOR, 'V', 'U', 3, V, 3, lam) != 0 || !(lam[1] > 1e-10 * lam[2]))
    return cf_error(CF_ERR_SCENE,
                    "%s: the node set '%s' has %d node%s on a line (or fewer than 3): its axis cannot be measured (a "
                    "revolute or fixed joint on an FE body needs a set that spans a plane, e.g. a hole's nodes through "
                    "the thickness or an end face; or use a spherical joint)", who, set, nn, nn == 1 ? "" : "s");
  const int flat = !(lam[0] > 1e-8 * lam[2]);
  double z[3] = {0, 0, 0}; /* C^+ al */
  for (int j = flat; j < 3; j++) {
    const double vj[3] = {V[j], V[3 + j], V[6 + j]};
    const double c = cf_mbs_dot3(vj, al) / lam[j];
    for (int a = 0; a < 3; a++) z[a] += c * vj[a];
  }
  if (flat) {
    const double nrm[3] = {V[0], V[3], V[6]}, an = fabs(cf_mbs_dot3(nrm, al));
    if (an > 1 - 1e-9) return *normal = 1, CF_OK;
    if (an > 1e-6)
      return cf_error(CF_ERR_SCENE,
                      "%s: the node set '%s' is flat and the joint's axis is neither in its plane nor along its normal "
                      "(%.3g of it along the normal): give the joint an axis in the set's plane or normal to it", who,
                      set, an);
  }
  int* nodes = malloc(sizeof(int) * (size_t)nn);
  double* w = malloc(sizeof(double) * (size_t)nn);
  if (!nodes || !w) {
    free(nodes), free(w);
    return cf_error(CF_ERR_NOMEM, "mechanism: out of memory");
  }
  for (int e = 0; e < nn; e++) {
    int n = fb->vec_node[n0 + e];
    const double* X = fb->fem->X + 3 * n;
    nodes[e] = n;
    w[e] = (X[0] - Xm[0]) * z[0] + (X[1] - Xm[1]) * z[1] + (X[2] - Xm[2]) * z[2];
  }
  int id = add_vec(fb, nodes, w, nn);
  free(nodes), free(w);
  *len = 1;
  return id;
}

/* the weighted node sum v of FE body ib at q (positions or velocities) */
void cf_mbs__fe_vec(const cfMbsModel* m, int ib, int v, const double* q, double S[3]) { vec_sum(&m->fe[ib], v, q, S); }

/* ---- queries ------------------------------------------------------------------------------------ */
/* d's copies of the GPU bodies' nodes, where they are older than the device's (own_end): every
 * reader of a body's nodes outside a step calls this first */
void cf_mbs__fe_sync(const cfMbsModel* m, const cfMbsData* d) {
  for (int i = 0; d->fe_state && i < m->nfe; i++) {
    struct cfMbsFeState* s = &d->fe_state[i];
    if (!s->dev || !s->host_stale || s->owned) continue;
    const struct cfMbsFeBody* fb = &m->fe[i];
    double* live[4] = {d->q, d->qd, d->qdd, d->acc};
    double* x = s->hbuf + 9 * (size_t)s->nmir;
    int st = CF_OK;
    for (int k = 0; k < 4 && st >= 0; k++) {
      st = cf_cuda_vec_get(s->gpu, OS_Q + k, x);
      for (int n = 0; st >= 0 && n < fb->nnode; n++) memcpy(live[k] + fb->qadr[n], x + 3 * n, 3 * sizeof(double));
    }
    dev_status(s, st);
    s->host_stale = 0;
    mir_values(fb, s, d, s->mir_last);
  }
}

void cf_mbs_sync(const cfMbsModel* m, cfMbsData* d) { cf_mbs__fe_host_writes(m, d); }

void cf_mbs__fe_undo_step(const cfMbsModel* m, cfMbsData* d) {
  for (int i = 0; d->fe_state && i < m->nfe; i++) {
    struct cfMbsFeState* s = &d->fe_state[i];
    if (!s->dev || !s->dev_valid) continue; /* (d->save has it all) */
    int st = CF_OK;
    for (int k = 0; k < 4 && st >= 0; k++) st = dev_copy(s, OS_Q + k, OS_SAVE_Q + k);
    dev_status(s, st);
    s->host_stale = 1; /* whatever was read since the step: d's copies are the undone step's */
  }
  cf_mbs__fe_sync(m, d);
}

void cf_mbs__fe_host_writes(const cfMbsModel* m, cfMbsData* d) {
  cf_mbs__fe_sync(m, d);
  for (int i = 0; d->fe_state && i < m->nfe; i++) d->fe_state[i].dev_valid = 0;
}

int cf_mbs__fe_device_radius(const cfMbsModel* m, const cfMbsData* d, int ib, double* r) {
  const struct cfMbsFeState* s = ib >= 0 && ib < m->nfe && d->fe_state ? &d->fe_state[ib] : NULL;
  if (!s || !s->dev || !(s->owned || s->host_stale)) return 0; /* d has them */
  int st = cf_cuda_vec_radius(s->gpu, OS_Q, r);
  return st < 0 ? st : 1;
}

void cf_mbs_fe_nodes(const cfMbsModel* m, const cfMbsData* d, int ib, double* x, double* v) {
  cf_mbs__fe_sync(m, d);
  gather(&m->fe[ib], d->q, x);
  if (v) gather(&m->fe[ib], d->qd, v);
}

void cf_mbs_fe_point(const cfMbsModel* m, const cfMbsData* d, int ib, int k, double x[3]) {
  vec_sum(&m->fe[ib], m->fe[ib].pt_vec[k], d->q, x);
}

long cf_mbs_fe_pcg_iterations(const cfMbsModel* m, const cfMbsData* d, int ib, long* interface) {
  if (interface) *interface = m->fe[ib].a0_pcg ? d->fe_state[ib].pcg_interface : 0;
  return m->fe[ib].a0_pcg ? d->fe_data[ib]->pcg_iters_total : 0;
}

int cf_mbs_fe_bus_bytes(const cfMbsModel* m, const cfMbsData* d, int ib, unsigned long long* h2d,
                        unsigned long long* d2h) {
  if (h2d) *h2d = 0;
  if (d2h) *d2h = 0;
  if (ib < 0 || ib >= m->nfe || !d->fe_state[ib].gpu)
    return cf_error(CF_ERR_ARG, "FE body %d has no GPU backend", ib);
  return cf_cuda_bus_bytes(d->fe_state[ib].gpu, h2d, d2h);
}

double cf_mbs_fe_total_mass(const cfMbsModel* m, int ib) {
  double mass = 0;
  for (int n = 0; n < m->fe[ib].nnode; n++) mass += m->fe[ib].fem->node_mass[n];
  return mass;
}

void cf_mbs_fe_centre(const cfMbsModel* m, const cfMbsData* d, int ib, double x[3], double v[3]) {
  cf_mbs__fe_sync(m, d);
  const struct cfMbsFeBody* fb = &m->fe[ib];
  double mass = 0, sx[3] = {0, 0, 0}, sv[3] = {0, 0, 0};
  for (int n = 0; n < fb->nnode; n++) {
    double mn = fb->fem->node_mass[n];
    mass += mn;
    for (int a = 0; a < 3; a++) sx[a] += mn * d->q[fb->qadr[n] + a], sv[a] += mn * d->qd[fb->qadr[n] + a];
  }
  for (int a = 0; a < 3; a++) {
    if (x) x[a] = sx[a] / mass;
    if (v) v[a] = sv[a] / mass;
  }
}

double cf_mbs_fe_elastic_energy(const cfMbsModel* m, const cfMbsData* d, int ib) {
  cf_mbs__fe_sync(m, d);
  cfData* fd = d->fe_data[ib];
  gather(&m->fe[ib], d->q, fd->x);
  cf_stage_polar(m->fe[ib].fem, fd);
  return cf_strain_energy(m->fe[ib].fem, fd);
}

void cf_mbs_fe_momentum(const cfMbsModel* m, const cfMbsData* d, int ib, double p[3], double L[3]) {
  cf_mbs__fe_sync(m, d);
  const struct cfMbsFeBody* fb = &m->fe[ib];
  p[0] = p[1] = p[2] = L[0] = L[1] = L[2] = 0;
  for (int n = 0; n < fb->nnode; n++) {
    double mn = fb->fem->node_mass[n], c[3];
    const double *x = d->q + fb->qadr[n], *v = d->qd + fb->qadr[n];
    cf_mbs_cross3(x, v, c);
    for (int a = 0; a < 3; a++) p[a] += mn * v[a], L[a] += mn * c[a];
  }
}

int cf_mbs_fe_write_vtu(const cfMbsModel* m, const cfMbsData* d, int ib, const cfMesh* mesh, const char* path) {
  cf_mbs__fe_sync(m, d);
  if (mesh->nnode != m->fe[ib].nnode)
    return cf_error(CF_ERR_SCENE, "FE body: mesh has %d nodes, the body %d", mesh->nnode, m->fe[ib].nnode);
  double* x = malloc(sizeof(double) * 6 * (size_t)mesh->nnode);
  if (!x) return cf_error(CF_ERR_NOMEM, "FE body: out of memory");
  cf_mbs_fe_nodes(m, d, ib, x, x + 3 * mesh->nnode);
  /* the co-rotated stress of the node positions, as the FE scenes' frames (cofem/fem.h) */
  cfStressField sf;
  int st = cf_stress_field_init(&sf, m->fe[ib].fem);
  if (st >= 0) {
    cf_stress_field_corotated(m->fe[ib].fem, x, NULL, &sf);
    st = cf_vtu_write_stress(path, mesh, x, x + 3 * mesh->nnode, &sf);
  }
  cf_stress_field_free(&sf);
  free(x);
  return st;
}



static int row_of_fe(const cfMbsCon* c, int i) { return c->nft > 0 && c->ft_fe[0] == i; }

int cf_mbs__fe_condensed_row(const cfMbsModel* m, const cfMbsCon* c) { return c->nft > 0 && m->fe[c->ft_fe[0]].corotational; }

/* CHOLMOD for the exact factor of A0 and its multi-column solves (made once; "pcg" bodies make it
 * when mechanism statics first needs it) */
static int exact_init(const struct cfMbsFeBody* fb, struct cfMbsFeState* s) {
  if (s->sp_ready) return CF_OK;
  const int ndof = 3 * fb->nnode;
  int st = cf_sparse_init(fb->fem, 1, &s->sp);
  if (st < 0) return st;
  s->sp_ready = 1;
  s->zB = cholmod_allocate_dense((size_t)ndof, (size_t)(s->nrow + 1), (size_t)ndof, CHOLMOD_REAL, &s->sp.cc);
  if (!s->zB) return cf_error(CF_ERR_NOMEM, "mechanism data: out of memory");
  return CF_OK;
}

/* The linear coupling's interface columns at rest: A0(rest) = cm M + ck K + eps I (K of the
 * unrotated elements; the clamped DOFs identity rows) factored once by CHOLMOD, then for each
 * weighted node sum v (a set's mean or axis measure, sum_i w_i x_i) and mesh axis a,
 * Zrest[v][a] = A0(rest)^-1 (w_i e_a)_i: the part's compliance to a unit load on that sum. A
 * joint row's J_F^T is sum over its terms of (w_i c)_i for a global vector c, so its column of
 * Z = A0^-1 J_F^T is a combination of these, turned with the part (linear_operator). cm, ck are
 * the step's (cf_mbs__step_coefficients); a step with others (cf_mbs_static changes dt) is
 * corrected by the residual check. */
/* b = (w_i e_a)_i: a unit load along axis a on weighted node sum v (zero at clamped DOFs) */
static void unit_load(const struct cfMbsFeBody* fb, int v, int a, double* b) {
  const cfModel* fem = fb->fem;
  memset(b, 0, sizeof(double) * (size_t)fem->ndof);
  for (int e = fb->vec_ptr[v]; e < fb->vec_ptr[v + 1]; e++) {
    const int j = 3 * fb->vec_node[e] + a;
    if (!fem->fixed[j]) b[j] += fb->vec_w[e];
  }
}

enum { LSYM_CHUNK = 256 }; /* linear_symmetric's chunk of Z's columns (and psd_clamp's n^2 + n: nrow < 256) */

static void rotated_turn_setup(const struct cfMbsFeBody* fb, struct cfMbsFeState* s);
static int own_create(const cfMbsModel* m, const struct cfMbsFeBody* fb, struct cfMbsFeState* s);
static int linear_create(const cfMbsModel* m, const struct cfMbsFeBody* fb, cfData* fd, struct cfMbsFeState* s) {
  const cfModel* fem = fb->fem;
  const int ndof = fem->ndof, nv = fb->nvec;
  s->lin_forces = s->lin_A = s->lin_v = s->lin_zkey = -2;
  s->lin_prev_step = -1;
  s->Zt = calloc((size_t)3 * (size_t)(nv + 1) * (size_t)ndof, sizeof(double));
  s->v0 = calloc((size_t)ndof, sizeof(double));
  s->xp = calloc((size_t)ndof, sizeof(double));
  s->zres = calloc((size_t)ndof, sizeof(double));
  s->e0 = calloc((size_t)(s->nrow + 1), sizeof(double));
  s->ze0 = calloc((size_t)ndof, sizeof(double));
  s->v0prev = calloc((size_t)ndof, sizeof(double));
  s->xprev = calloc((size_t)ndof, sizeof(double));
  s->v0last = calloc((size_t)ndof, sizeof(double));
  s->Gsym = calloc((size_t)(s->nrow * s->nrow + 1), sizeof(double));
  s->lsym = malloc(sizeof(double) * (size_t)(2 * s->nrow * s->nrow + s->nrow + LSYM_CHUNK * s->nrow + 1));
  if (!s->lsym || !s->v0last || !s->Gsym || !s->Zt || !s->v0 || !s->xp || !s->zres || !s->e0 || !s->ze0 || !s->v0prev || !s->xprev)
    return cf_error(CF_ERR_NOMEM, "mechanism data: out of memory");
  /* the sums the body's equations use (a revolute's f measure, kept for its angle, is in none) */
  s->vec_used = calloc((size_t)(nv + 1), 1);
  if (!s->vec_used) return cf_error(CF_ERR_NOMEM, "mechanism data: out of memory");
  if (own_create(m, fb, s) < 0) return cf_error(CF_ERR_NOMEM, "mechanism data: out of memory");
  for (int k = 0; k < s->nrow; k++)
    for (int t = 0; t < m->con[s->row[k]].nft; t++)
      if (m->con[s->row[k]].ft_fe[t] == fb - m->fe) s->vec_used[m->con[s->row[k]].ft_vec[t]] = 1;
  if (fb->linear_exact) return CF_OK; /* the columns are solved with each linearisation's factor */
  s->Zrest = calloc((size_t)3 * (size_t)(nv + 1) * (size_t)ndof, sizeof(double));
  if (!s->Zrest) return cf_error(CF_ERR_NOMEM, "mechanism data: out of memory");
  if (fb->linear_rotated) { /* Zrest from the rotated factor itself (linear_operator_rotated) */
    s->rot_owner = malloc(sizeof(int) * (size_t)(fem->nnode + 1));
    s->rot_Rv = calloc((size_t)9 * (size_t)(nv + 1), sizeof(double));
    if (!s->rot_owner || !s->rot_Rv) return cf_error(CF_ERR_NOMEM, "mechanism data: out of memory");
    rotated_turn_setup(fb, s);
    return CF_OK;
  }
  double cC, cK;
  cf_mbs__step_coefficients(m, &cC, &cK);
  const double cm = 1 + cC * fem->def.rayleigh_alpha, ck = cK + cC * fem->def.rayleigh_beta;
  for (int k = 0; k < fem->nnzb; k++) cf_block_gather_n(k, fem->npe, fem->blk_src_ptr, fem->blk_src, fem->Ke, fem->Mblk, cm, ck, fd->A);
  cfSparseSolver sp;
  memset(&sp, 0, sizeof sp);
  int st = cf_sparse_init(fem, 1, &sp);
  if (st >= 0) st = cf_sparse_factor(&sp, fd->A, fem->nfixed ? fem->fixed : NULL);
  for (int v = 0; v < nv && st >= 0; v++)
    for (int a = 0; a < 3 && st >= 0 && s->vec_used[v]; a++) {
      unit_load(fb, v, a, s->zres);
      st = cf_sparse_solve(&sp, s->zres, s->Zrest + (size_t)(3 * v + a) * ndof);
    }
  cf_sparse_free(&sp);
  if (st < 0) return cf_error(st, "FE body '%s': its interface compliance at rest: %s", m->body_name[fb->body], cf_last_error());
  if (s->gpu && fem->def.rayleigh_alpha == 0 && fem->def.rayleigh_beta == 0 && (st = dev_create(m, fb, s)) < 0)
    return cf_error(st, "FE body '%s' (GPU): its resident vectors: %s", m->body_name[fb->body], cf_last_error());
  return CF_OK;
}

/* corotational bodies: the condensation's state (the solver's side) */
static int row_nodes_create(const cfMbsModel* m, const struct cfMbsFeBody* fb, int ib, struct cfMbsFeState* s);

static int cf_mbs__fe_state_create(const cfMbsModel* m, cfMbsData* d) {
  d->fe_state = calloc((size_t)(m->nfe ? m->nfe : 1), sizeof *d->fe_state);
  if (!d->fe_state) return cf_error(CF_ERR_NOMEM, "mechanism data: out of memory");
  for (int i = 0; i < m->nfe; i++) {
    const struct cfMbsFeBody* fb = &m->fe[i];
    struct cfMbsFeState* s = &d->fe_state[i];
    if (!fb->corotational) continue;
    int ndof = 3 * fb->nnode;
    s->key_step = -1;
    s->fb_step = -1;
    for (int r = 0; r < m->ncon; r++) s->nrow += row_of_fe(&m->con[r], i);
    s->row = malloc(sizeof(int) * (size_t)(s->nrow + 1));
    s->Z = calloc((size_t)ndof * (size_t)(s->nrow + 1), sizeof(double));
    s->JF = calloc((size_t)ndof * (size_t)(s->nrow + 1), sizeof(double));
    s->H = calloc((size_t)(s->nrow * s->nrow + 1), sizeof(double));
    s->bF = malloc(sizeof(double) * (size_t)ndof);
    s->y = malloc(sizeof(double) * (size_t)ndof);
    s->r = calloc((size_t)(s->nrow + 1), sizeof(double));
    s->w = calloc((size_t)(s->nrow + 1), sizeof(double));
    s->chg = calloc((size_t)(s->nrow + 1), sizeof(int));
    s->zr = calloc((size_t)(s->nrow + 1), sizeof(double*));
    s->zz = calloc((size_t)(s->nrow + 1), sizeof(double*));
    s->zwork = malloc(sizeof(double) * (size_t)cf_precond_apply_multi_work(fb->fem, s->nrow + 1));
    s->zX = calloc((size_t)(s->nrow + 1), sizeof(cholmod_dense*));
    s->zY = calloc((size_t)(s->nrow + 1), sizeof(cholmod_dense*));
    s->zE = calloc((size_t)(s->nrow + 1), sizeof(cholmod_dense*));
    /* the matrix-free forces and products are the constant-strain element's: quadratic parts
     * always form K_R (no G) */
    s->G = fb->fem->npe == 4 ? malloc(sizeof(double) * 9 * (size_t)(fb->fem->ntet + 1)) : NULL;
    if (!s->row || !s->Z || !s->JF || !s->H || !s->bF || !s->y || !s->r || !s->w || !s->chg || !s->zr || !s->zz ||
        !s->zwork || !s->zX || !s->zY || !s->zE || (!s->G && fb->fem->npe == 4))
      return cf_error(CF_ERR_NOMEM, "mechanism data: out of memory");
    s->nrow = 0;
    for (int r = 0; r < m->ncon; r++)
      if (row_of_fe(&m->con[r], i)) s->row[s->nrow++] = r;
    if (row_nodes_create(m, fb, i, s) < 0) return cf_error(CF_ERR_NOMEM, "mechanism data: out of memory");
    if (fb->a0_pcg) { /* no factor: the PCG's preconditioner is formed by pcg_system */
      const cfModel* fem = fb->fem;
      for (int k = 0; k < 2; k++) {
        s->zx[k] = malloc(sizeof(double) * (size_t)ndof);
        s->zsave[k] = malloc(sizeof(double) * (size_t)ndof * (size_t)(s->nrow + 1));
        if (!s->zx[k] || !s->zsave[k]) return cf_error(CF_ERR_NOMEM, "mechanism data: out of memory");
      }
      s->W = malloc(sizeof(double) * (size_t)ndof * (size_t)(2 * s->nrow + 2));
      s->AW = malloc(sizeof(double) * (size_t)ndof * (size_t)(2 * s->nrow + 2));
      s->yprev = malloc(sizeof(double) * (size_t)ndof);
      s->yx = malloc(sizeof(double) * (size_t)ndof);
      if (!s->W || !s->AW || !s->yprev || !s->yx) return cf_error(CF_ERR_NOMEM, "mechanism data: out of memory");
      cfData* fd = d->fe_data[i];
      fd->supports_active = fem->nfixed > 0;
      if (fem->def.preconditioner == CF_PRECOND_AMG) {
        /* the hierarchy of the Newton iteration's A0 now: the device uploads it at create */
        double cC, cK;
        cf_mbs__step_coefficients(m, &cC, &cK);
        double coef[3] = {1 + cC * fem->def.rayleigh_alpha, cK + cC * fem->def.rayleigh_beta, 0};
        int st = cf_precond_create_amg_with(fem, fd, coef[0], coef[1], coef[2]);
        if (st < 0) return cf_error(st, "FE body '%s': %s", m->body_name[fb->body], cf_last_error());
        s->amg = fd->precond;
        memcpy(s->amg_coef, coef, sizeof coef);
      }
      if (fb->cuda) {
        int st = cf_cuda_create(fem, fd, &s->gpu);
        if (st < 0) return cf_error(st, "FE body '%s' (\"backend\": \"cuda\"): %s", m->body_name[fb->body], cf_last_error());
      }
      if (fb->linear) {
        int st = linear_create(m, fb, fd, s);
        if (st < 0) return st;
        /* quadratic: the assembled path (the element products are the linear element's) */
        s->lin_mf = !fb->cuda && fem->def.rayleigh_beta == 0 && fem->npe == 4 &&
                    (fem->def.preconditioner != CF_PRECOND_BLOCK_JACOBI || fb->linear_rotated);
        if (fb->linear_rotated) { /* the interface columns by one multi-column apply of the factor */
          free(s->zwork);
          s->zwork = malloc(sizeof(double) * (size_t)cf_precond_apply_multi_work(fem, 3 * fb->nvec + s->nrow + 1));
          if (!s->zwork) return cf_error(CF_ERR_NOMEM, "mechanism data: out of memory");
        }
        if (s->lin_mf || fb->linear_rotated) {
          const int ncol = 3 * fb->nvec;
          if (ncol > CF_PCG_MULTI_MAX && !fb->linear_rotated)
            s->lin_mf = 0; /* more node sets than one lockstep PCG takes: the assembled path */
          s->ye = malloc(sizeof(double) * 24 * (size_t)(fem->ntet + 1));
          s->mfw = malloc(sizeof(double) * (size_t)cf_pcg_multi_work(fem, ncol < CF_PCG_MULTI_MAX ? ncol : CF_PCG_MULTI_MAX));
          s->zrhs = malloc(sizeof(double) * (size_t)ncol * (size_t)ndof);
          s->zcol_b = calloc((size_t)ncol + 1, sizeof(double*));
          s->zcol_x = calloc((size_t)ncol + 1, sizeof(double*));
          s->zcol_scale = calloc((size_t)ncol + 1, sizeof(double));
          if (!s->ye || !s->mfw || !s->zrhs || !s->zcol_b || !s->zcol_x || !s->zcol_scale)
            return cf_error(CF_ERR_NOMEM, "mechanism data: out of memory");
        }
      }
      continue;
    }
    int st = exact_init(fb, s);
    if (st >= 0 && fb->linear) st = linear_create(m, fb, d->fe_data[i], s);
    if (st < 0) return st;
  }
  return CF_OK;
}

static void cf_mbs__fe_state_free(cfMbsData* d) {
  if (!d->fe_state) return;
  for (int i = 0; i < d->nfe_data; i++) {
    struct cfMbsFeState* s = &d->fe_state[i];
    if (s->sp_ready) {
      for (int k = 0; k <= s->nrow; k++) {
        if (s->zX) cholmod_free_dense(&s->zX[k], &s->sp.cc);
        if (s->zY) cholmod_free_dense(&s->zY[k], &s->sp.cc);
        if (s->zE) cholmod_free_dense(&s->zE[k], &s->sp.cc);
      }
      cholmod_free_dense(&s->zB, &s->sp.cc);
      cf_sparse_free(&s->sp);
    }
    free(s->zx[0]), free(s->zx[1]), free(s->zsave[0]), free(s->zsave[1]), free(s->W), free(s->AW), free(s->yprev), free(s->yx);
    free(s->chg), free(s->zr), free(s->zz), free(s->zwork), free(s->zX), free(s->zY), free(s->zE), free(s->G), free(s->ye);
    free(s->mfw), free(s->zrhs), free(s->zcol_b), free(s->zcol_x), free(s->zcol_scale);
    free(s->row), free(s->rnode_ptr), free(s->rnode), free(s->jfc), free(s->Z), free(s->JF), free(s->H), free(s->bF), free(s->y), free(s->r), free(s->w);
    free(s->extra);
    free(s->Zrest), free(s->rot_owner), free(s->rot_Rv), free(s->Zt), free(s->v0), free(s->xp), free(s->zres), free(s->e0), free(s->ze0), free(s->v0prev), free(s->xprev), free(s->v0last), free(s->Gsym), free(s->vec_used), free(s->lsym);
    free(s->ost), free(s->mir), free(s->mir_flag), free(s->mir_last), free(s->hbuf), free(s->csrc), free(s->ccoef), free(s->u_norm), free(s->zt_mir);
    cf_cuda_free(s->gpu);
    if (s->amg && d->fe_data && i < d->nfe_data && d->fe_data[i] && !d->fe_data[i]->precond)
      d->fe_data[i]->precond = s->amg; /* held while block Jacobi ran: cf_data_free frees it */
  }
  free(d->fe_state);
  d->fe_state = NULL;
}

/* J_F of row r of the body as a mesh-order vector (the row's gradient over the node blocks) */
static void row_F(const cfMbsModel* m, const cfMbsData* d, const struct cfMbsFeBody* fb, int r, double* out) {
  const cfMbsCon* c = &m->con[r];
  const double* row = d->jac + (size_t)r * m->jac_stride;
  memset(out, 0, sizeof(double) * 3 * (size_t)fb->nnode);
  for (int e = 0; e < c->nft; e++) {
    int v = c->ft_vec[e];
    for (int k = fb->vec_ptr[v]; k < fb->vec_ptr[v + 1]; k++) {
      int n = fb->vec_node[k], b = fb->node_blk[n];
      const double* g = row + 12 * slot_of_body(c, b) + (fb->qadr[n] - m->body_qadr[b]);
      for (int a = 0; a < 3; a++) out[3 * n + a] = fb->fem->fixed[3 * n + a] ? 0 : g[a];
    }
  }
}

/* the nodes of each row's J_F (rnode_ptr, rnode), each once, in increasing order */
static int row_nodes_create(const cfMbsModel* m, const struct cfMbsFeBody* fb, int ib, struct cfMbsFeState* s) {
  unsigned char* mark = calloc((size_t)fb->nnode + 1, 1);
  s->rnode_ptr = calloc((size_t)s->nrow + 1, sizeof(int));
  long total = 0;
  for (int k = 0; k < s->nrow; k++) {
    const cfMbsCon* c = &m->con[s->row[k]];
    for (int t = 0; t < c->nft; t++)
      if (c->ft_fe[t] == ib) total += fb->vec_ptr[c->ft_vec[t] + 1] - fb->vec_ptr[c->ft_vec[t]];
  }
  s->rnode = malloc(sizeof(int) * (size_t)(total + 1));
  s->jfc = calloc(3 * (size_t)(total + 1), sizeof(double));
  if (!mark || !s->rnode_ptr || !s->rnode || !s->jfc) return free(mark), CF_ERR_NOMEM;
  int n = 0;
  for (int k = 0; k < s->nrow; k++) {
    const cfMbsCon* c = &m->con[s->row[k]];
    const int n0 = n;
    for (int t = 0; t < c->nft; t++) {
      if (c->ft_fe[t] != ib) continue;
      const int v = c->ft_vec[t];
      for (int j = fb->vec_ptr[v]; j < fb->vec_ptr[v + 1]; j++)
        if (!mark[fb->vec_node[j]]) mark[fb->vec_node[j]] = 1, s->rnode[n++] = fb->vec_node[j];
    }
    for (int j = n0; j < n; j++) mark[s->rnode[j]] = 0;
    for (int j = n0 + 1; j < n; j++) /* increasing (insertion: the sets are small) */
      for (int i = j; i > n0 && s->rnode[i - 1] > s->rnode[i]; i--) {
        int t = s->rnode[i];
        s->rnode[i] = s->rnode[i - 1], s->rnode[i - 1] = t;
      }
    s->rnode_ptr[k + 1] = n;
  }
  free(mark);
  return CF_OK;
}

/* row k's J_F at node n (3 values, 0 at clamped DOFs) into g: row_F's entries */
static void row_F_at(const cfMbsModel* m, const cfMbsData* d, const struct cfMbsFeBody* fb, const cfMbsCon* c,
                     const double* row, int n, double g[3]) {
  const int b = fb->node_blk[n];
  const double* src = row + 12 * slot_of_body(c, b) + (fb->qadr[n] - m->body_qadr[b]);
  for (int a = 0; a < 3; a++) g[a] = fb->fem->fixed[3 * n + a] ? 0 : src[a];
  (void)d;
}

/* J_F(k) x over the row's nodes only (row_F's vector dotted with x) */
static double row_F_dot(const cfMbsModel* m, const cfMbsData* d, const struct cfMbsFeBody* fb,
                        const struct cfMbsFeState* s, int k, const double* x) {
  const cfMbsCon* c = &m->con[s->row[k]];
  const double* row = d->jac + (size_t)s->row[k] * m->jac_stride;
  double t = 0;
  for (int j = s->rnode_ptr[k]; j < s->rnode_ptr[k + 1]; j++) {
    const int n = s->rnode[j];
    double g[3];
    row_F_at(m, d, fb, c, row, n, g);
    t += g[0] * x[3 * n] + g[1] * x[3 * n + 1] + g[2] * x[3 * n + 2];
  }
  return t;
}

/* y = J_I x (the factored slots of row r) */
static double row_I_dot(const cfMbsModel* m, const cfMbsData* d, int r, const double* x) {
  const cfMbsCon* c = &m->con[r];
  const double* row = d->jac + (size_t)r * m->jac_stride;
  double s = 0;
  for (int sl = 0; sl < c->nb; sl++) {
    if (condensed(m, c->body[sl])) continue;
    const double* xb = x + m->body_qadr[c->body[sl]];
    for (int k = 0; k < 12; k++) s += row[12 * sl + k] * xb[k];
  }
  return s;
}

static void row_I_axpy(const cfMbsModel* m, const cfMbsData* d, int r, double z, double* y) {
  const cfMbsCon* c = &m->con[r];
  const double* row = d->jac + (size_t)r * m->jac_stride;
  for (int sl = 0; sl < c->nb; sl++) {
    if (condensed(m, c->body[sl])) continue;
    double* yb = y + m->body_qadr[c->body[sl]];
    for (int k = 0; k < 12; k++) yb[k] += row[12 * sl + k] * z;
  }
}

/* Cholesky of the small SPD matrix H in place and its inverse (H <- H^-1); 0 or -1 */
static int spd_inverse(double* H, int n) {
  for (int j = 0; j < n; j++) {
    double s = H[j * n + j];
    for (int k = 0; k < j; k++) s -= H[j * n + k] * H[j * n + k];
    if (!(s > 0)) return -1;
    H[j * n + j] = sqrt(s);
    for (int i = j + 1; i < n; i++) {
      double t = H[i * n + j];
      for (int k = 0; k < j; k++) t -= H[i * n + k] * H[j * n + k];
      H[i * n + j] = t / H[j * n + j];
    }
  }
  /* inverse of L, then L^-T L^-1 */
  for (int j = 0; j < n; j++) {
    H[j * n + j] = 1 / H[j * n + j];
    for (int i = j + 1; i < n; i++) {
      double t = 0;
      for (int k = j; k < i; k++) t -= H[i * n + k] * H[k * n + j];
      H[i * n + j] = t / H[i * n + i];
    }
  }
  for (int i = 0; i < n; i++)
    for (int j = 0; j <= i; j++) {
      double t = 0;
      for (int k = i; k < n; k++) t += H[k * n + i] * H[k * n + j];
      H[i * n + j] = t; /* lower triangle of (L^-1)^T L^-1, i >= j */
    }
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++) H[i * n + j] = H[j * n + i];
  return 0;
}

/* A0 = cm M + ck K_R + eps I of the current state into fd->A, for the exact factor and the CPU's
 * PCG: K_R formed when the forces were matrix-free, or downloaded from a GPU body's device (its
 * statics, which factor it) */
static int current_A0(const struct cfMbsFeBody* fb, cfData* fd, struct cfMbsFeState* s, double cm, double ck, double eps) {
  const cfModel* fem = fb->fem;
  if (s->kr_stale) {
    cf_stage_elastic(fem, fd);
    s->kr_stale = 0;
  }
  if (s->gpu) {
    int st = cf_cuda_download(s->gpu, fd, CF_CUDA_KR);
    if (st < 0) return st;
  }
  for (int k = 0; k < fem->nnzb; k++) cf_block_gather_n(k, fem->npe, fem->blk_src_ptr, fem->blk_src, fd->KR, fem->Mblk, cm, ck, fd->A);
  if (eps != 0)
    for (int n = 0; n < fem->nnode; n++)
      for (int a3 = 0; a3 < 3; a3++) fd->A[9 * (size_t)fem->diag[n] + 4 * a3] += eps;
  return CF_OK;
}

/* "factor": "pcg": A0 (current_A0) and the preconditioner of it: AMG of A0 at rest (the Newton
 * iteration's; block Jacobi for the projections' mass-only A0), block Jacobi, or the rotated
 * Cholesky of the same coefficients at rest (factored once per coefficient set); AMG and the
 * rotated Cholesky turned by the node rotations of the current state. On the device
 * (cf_cuda_system): A0 from the K_R of its last elastic stage, block Jacobi or AMG alike. */
static int pcg_system(const struct cfMbsFeBody* fb, cfData* fd, struct cfMbsFeState* s, double cm, double ck, double eps) {
  const cfModel* fem = fb->fem;
  /* s->mf_now: A0 is applied element by element (pcg_solve): not formed; the preconditioner is a
   * rotated one (lin_mf) */
  fd->supports_active = fem->nfixed > 0;
  s->pcg_coef[0] = cm, s->pcg_coef[1] = ck, s->pcg_coef[2] = eps;
  if (s->gpu) {
    double coef[3] = {cm, ck, eps};
    if (s->amg && ck > 0 && memcmp(coef, s->amg_coef, sizeof coef))
      return cf_error(CF_ERR_UNSUPPORTED, "the GPU's AMG hierarchy is of the Newton matrix's coefficients (%g, %g, %g) "
                      "made with the data; this solve has (%g, %g, %g)",
                      s->amg_coef[0], s->amg_coef[1], s->amg_coef[2], cm, ck, eps);
    return cf_cuda_system(s->gpu, fem, cm, ck, eps);
  }
  int st = s->mf_now ? CF_OK : current_A0(fb, fd, s, cm, ck, eps);
  if (st < 0) return st;
  if (fem->def.preconditioner == CF_PRECOND_AMG) {
    /* the Newton iteration's A0 (ck > 0): AMG of it at rest, turned by the node rotations (as the
     * PCG of cofem run); the projections' A0 = M + eps I: block Jacobi (AMG of it would be a
     * hierarchy per operator for a matrix block Jacobi already conditions) */
    if (!s->amg && fd->precond) s->amg = fd->precond; /* cf_data_create's, of the scene's own coefficients */
    fd->precond = NULL;
    if (ck > 0) {
      double coef[3] = {cm, ck, eps};
      fd->precond = s->amg;
      if (!s->amg || memcmp(coef, s->amg_coef, sizeof coef)) {
        int st = cf_precond_create_amg_with(fem, fd, cm, ck, eps);
        s->amg = fd->precond;
        if (st < 0) return st;
        memcpy(s->amg_coef, coef, sizeof coef);
      }
      cf_precond_update(fem, fd);
      return CF_OK;
    }
  }
  if (fem->def.preconditioner != CF_PRECOND_ROTATED_CHOLESKY) {
    for (int n = 0; n < fem->nnode; n++) cf_block_jacobi(n, fem->diag, fd->A, fem->fixed, fem->nfixed > 0, fd->Pinv);
    return CF_OK;
  }
  double coef[3] = {cm, ck, eps};
  if (!s->rot_ready || memcmp(coef, s->rot_coef, sizeof coef)) {
    int st = cf_precond_create_with(fem, fd, cm, ck, eps);
    if (st < 0) return st;
    memcpy(s->rot_coef, coef, sizeof coef);
    s->rot_ready = 1;
  }
  /* to convergence (the linear coupling too: with one correction per linearisation, as the part's
   * own step, the spin-up beam's 0.25 rad per step left the node rotations behind and the PCG did
   * not converge in 1000 iterations; three corrections, as the rotated factor below, cost 1.5x
   * converged ones on the lug pendulum, whose second linearisation moves the nodes little) */
  cf_precond_update_n(fem, fd, CF_PRECOND_CONVERGED);
  return CF_OK;
}

/* x[c] = A0^-1 b[c] for c < nc by the PCG on pcg_system's A0 and preconditioner, to the body's
 * "tol" (the model's pcg_tol) relative to |b[c]|, started from x[c] (warm, when the scene's
 * "warm_start" is on: z_guess's and y_solve's starts; with v1 (nc 1, CPU) the best combination of
 * x[0] and v1, cf_pcg_warm_start) or from 0; the clamped DOFs stay 0. The iterations
 * are counted in fd->pcg_iters_total (cf_mbs_fe_pcg_iterations). A solve that stops short of the
 * tolerance is an error: the condensation needs A0^-1 to the tolerance. */
static int pcg_solve(const cfMbsModel* mm, const struct cfMbsFeBody* fb, cfData* fd, struct cfMbsFeState* s,
                     int nc, const double* const* b, double* const* x, int warm, double* v1) {
  const cfModel* fem = fb->fem;
  const int ndof = fem->ndof;
  int st = CF_OK;
  fd->supports_active = fem->nfixed > 0;
  if (s->gpu) {
    st = cf_cuda_solve(s->gpu, fem, fd, nc, b, x, warm);
  } else {
    /* A0 element by element (s->mf_now), as the part's own step: K_R never formed */
    const cfMatfreeOp op = {s->G, s->ye, s->pcg_coef[0], s->pcg_coef[1], s->pcg_coef[2]};
    for (int c = 0; c < nc && st == CF_OK; c++) {
      memcpy(fd->b, b[c], sizeof(double) * (size_t)ndof);
      fd->b_scale = s->pcg_bscale;
      if (warm)
        memcpy(fd->v, x[c], sizeof(double) * (size_t)ndof);
      else
        memset(fd->v, 0, sizeof(double) * (size_t)ndof);
      if (s->mf_now) {
        st = cf_pcg_matfree(fem, fd, &op, warm && nc == 1 ? v1 : NULL);
      } else {
        if (warm && nc == 1 && v1) cf_pcg_warm_start(fem, fd, v1);
        st = cf_stage_pcg(fem, fd);
      }
      memcpy(x[c], fd->v, sizeof(double) * (size_t)ndof);
    }
  }
  if (st != CF_OK)
    return cf_error(st < 0 ? st : CF_ERR_SOLVER, "FE body '%s': the PCG of the part's matrix (%s%s): %s%s",
                    mm->body_name[fb->body], fb->linear ? "the linear coupling" : "\"factor\": \"pcg\"",
                    s->gpu ? ", on the GPU" : "", cf_last_error(),
                    fb->linear ? "; a part in large bending may need the Newton coupling (solver.coupling \"newton\")" : "");
  for (int c = 0; c < nc; c++)
    for (int j = 0; fem->nfixed && j < ndof; j++)
      if (fem->fixed[j]) x[c][j] = 0;
  return CF_OK;
}

static double dot_n(const double* a, const double* b, int n) {
  double t = 0;
  for (int i = 0; i < n; i++) t += a[i] * b[i];
  return t;
}

/* The start of the interface columns' PCG ("factor": "pcg", the scene's "warm_start"): the Galerkin
 * solution in the span of the last solutions Z_k and the same turned by the part's rotation since
 * they were solved (R Z_k node by node), x0 = W (W^T A W)^-1 W^T b with W made A-orthonormal:
 * the projection of successive right-hand sides (P. Fischer, Comput. Methods Appl. Mech. Engrg.
 * 163, 1998), with the turned copies because the part's matrix turns with it: A(x) ~ R A(x0) R^T
 * and J's rows on global axes mix by R, so A^-1 J^T at x lies near span{R Z(x0)} where Z(x0) alone
 * is off by the angle. The products A W are 2 nrow SpMVs (on the device: cf_cuda_apply_A) against
 * hundreds of PCG iterations per column. Measured on the swinging lug (test_mbs_fe_pcg): 0.91x the
 * iterations of cold starts from the last Z alone, 0.85x with this start: the part's matrix changes
 * by more than its turn between solves (strains, the Newton iterate), and the block-Jacobi PCG
 * still has most of its ten decades to go. */
static int galerkin_start(const struct cfMbsFeBody* fb, cfData* fd, struct cfMbsFeState* s, int nw, int nc,
                          const double* const* b, double* const* xs);
static void turn_nodes(const cfModel* fem, const double R[9], const double* z, double* w);

static int z_guess(const struct cfMbsFeBody* fb, cfData* fd, struct cfMbsFeState* s, int nc) {
  const cfModel* fem = fb->fem;
  const int ndof = fem->ndof, nr = s->nrow;
  /* the saved solutions of these coefficients, else the slot to replace (the older one) */
  int slot = -1;
  for (int k = 0; k < 2; k++)
    if (s->zhave[k] && !memcmp(s->zkey[k], s->pcg_coef, sizeof s->pcg_coef)) slot = k;
  if (slot < 0) { /* no solutions of this operator yet: from 0 */
    slot = s->zhave[0] && s->zhave[1] ? 1 - s->zlast : (s->zhave[0] ? 1 : 0);
    for (int c = 0; c < nc; c++) memset(s->zz[c], 0, sizeof(double) * (size_t)ndof);
    return slot;
  }
  const double* Zs = s->zsave[slot];
  if (!fem->def.warm_start) return slot; /* the PCG starts from 0 */
  if (fem->def.preconditioner != CF_PRECOND_BLOCK_JACOBI) {
    /* AMG and the rotated Cholesky converge in 3-5 iterations per solve: the Galerkin start (2 nrow
     * SpMVs and the Gram-Schmidt, some 20 iterations' work) cost more than it saved (the lug with
     * the rotated Cholesky: 15.4 ms per step against 12.6 with cold starts): the last solutions */
    for (int c = 0; c < nc; c++) memcpy(s->zz[c], Zs + (size_t)s->chg[c] * ndof, sizeof(double) * (size_t)ndof);
    return slot;
  }
  double R[9];
  rigid_turn(fem, s->zx[slot], NULL, fd->x, NULL, R);
  int nw = 0;
  for (int k = 0; k < nr; k++) memcpy(s->W + (size_t)nw++ * ndof, Zs + (size_t)k * ndof, sizeof(double) * (size_t)ndof);
  for (int k = 0; k < nr; k++, nw++) turn_nodes(fem, R, Zs + (size_t)k * ndof, s->W + (size_t)nw * ndof);
  int st = galerkin_start(fb, fd, s, nw, nc, s->zr, s->zz);
  return st < 0 ? st : slot;
}

/* w[3n + a] = R z[3n + a] node by node, clamped DOFs 0 */
static void turn_nodes(const cfModel* fem, const double R[9], const double* z, double* w) {
  for (int n = 0; n < fem->nnode; n++)
    for (int a = 0; a < 3; a++) w[3 * n + a] = R[3 * a] * z[3 * n] + R[3 * a + 1] * z[3 * n + 1] + R[3 * a + 2] * z[3 * n + 2];
  for (int j = 0; fem->nfixed && j < fem->ndof; j++)
    if (fem->fixed[j]) w[j] = 0;
}

/* x[c] = W (W^T A W)^-1 W^T b[c] for c < nc, W the first nw vectors of s->W (overwritten), A the
 * part's matrix of pcg_system (fd->A, or the device's) */
static int galerkin_start(const struct cfMbsFeBody* fb, cfData* fd, struct cfMbsFeState* s, int nw, int nc,
                          const double* const* b, double* const* xs) {
  const cfModel* fem = fb->fem;
  const int ndof = fem->ndof;
  for (int i = 0; i < nw; i++) {
    const double* w = s->W + (size_t)i * ndof;
    double* aw = s->AW + (size_t)i * ndof;
    if (s->gpu) {
      int st = cf_cuda_apply_A(s->gpu, CF_CUDA_SPMV_OWN, w, aw);
      if (st < 0) return cf_error(st, "FE body on the GPU: %s", cf_last_error());
    } else {
      for (int n = 0; n < fem->nnode; n++) cf_bsr_row(n, fem->row_ptr, fem->col, fd->A, w, aw);
    }
  }
  /* A-orthonormal basis by modified Gram-Schmidt, twice (the turned copies are nearly the
   * originals); a vector whose A-norm falls below 1e-10 of its own is dropped */
  int nb = 0;
  for (int i = 0; i < nw; i++) {
    double* w = s->W + (size_t)i * ndof;
    double* aw = s->AW + (size_t)i * ndof;
    double n0 = dot_n(w, aw, ndof);
    if (!(n0 > 0) || !isfinite(n0)) continue;
    for (int pass = 0; pass < 2; pass++)
      for (int j = 0; j < nb; j++) {
        const double* v = s->W + (size_t)j * ndof;
        const double* av = s->AW + (size_t)j * ndof;
        double h = dot_n(v, aw, ndof);
        for (int l = 0; l < ndof; l++) w[l] -= h * v[l], aw[l] -= h * av[l];
      }
    double n1 = dot_n(w, aw, ndof);
    if (!(n1 > 1e-20 * n0)) continue;
    double sc = 1 / sqrt(n1);
    double* v = s->W + (size_t)nb * ndof;
    double* av = s->AW + (size_t)nb * ndof;
    for (int l = 0; l < ndof; l++) v[l] = sc * w[l], av[l] = sc * aw[l];
    nb++;
  }
  for (int c = 0; c < nc; c++) {
    double* x = xs[c];
    memset(x, 0, sizeof(double) * (size_t)ndof);
    for (int j = 0; j < nb; j++) {
      const double* v = s->W + (size_t)j * ndof;
      double h = dot_n(v, b[c], ndof);
      for (int l = 0; l < ndof; l++) x[l] += h * v[l];
    }
  }
  return CF_OK;
}

/* "pcg": x = A0^-1 b, the Newton correction's solve, from the Galerkin start in the span of the
 * interface columns Z (solutions of this A0: the joints' reactions move the part through them) and
 * the last correction of the same coefficients, turned and not (as z_guess; block Jacobi only) */
static int y_solve(const cfMbsModel* m, const struct cfMbsFeBody* fb, cfData* fd, struct cfMbsFeState* s,
                   const double* b, double* x) {
  const cfModel* fem = fb->fem;
  const int ndof = fem->ndof;
  int warm = fem->def.warm_start && s->z_valid && fem->def.preconditioner == CF_PRECOND_BLOCK_JACOBI; /* as z_guess */
  if (warm) {
    int nw = 0;
    for (int k = 0; k < s->nrow; k++) memcpy(s->W + (size_t)nw++ * ndof, s->Z + (size_t)k * ndof, sizeof(double) * (size_t)ndof);
    if (s->yhave && !memcmp(s->ykey, s->pcg_coef, sizeof s->pcg_coef)) {
      double R[9];
      rigid_turn(fem, s->yx, NULL, fd->x, NULL, R);
      memcpy(s->W + (size_t)nw++ * ndof, s->yprev, sizeof(double) * (size_t)ndof);
      turn_nodes(fem, R, s->yprev, s->W + (size_t)nw++ * ndof);
    }
    int st = galerkin_start(fb, fd, s, nw, 1, &b, &x);
    if (st < 0) return st;
  }
  int st = pcg_solve(m, fb, fd, s, 1, &b, &x, warm, NULL);
  if (st < 0) return st;
  memcpy(s->yprev, x, sizeof(double) * (size_t)ndof);
  memcpy(s->yx, fd->x, sizeof(double) * (size_t)ndof);
  memcpy(s->ykey, s->pcg_coef, sizeof s->pcg_coef);
  s->yhave = 1;
  return CF_OK;
}

/* x = A0^-1 b (b zero at clamped DOFs, x too): the exact factor, or the rotated one at rest */
static int a0_solve(const cfMbsModel* m, const struct cfMbsFeBody* fb, cfData* fd, struct cfMbsFeState* s,
                    const double* b, double* x) {
  if (s->pcg_now) return y_solve(m, fb, fd, s, b, x);
  if (s->exact_now) return cf_sparse_solve(&s->sp, b, x);
  const cfModel* fem = fb->fem;
  fd->supports_active = fem->nfixed > 0; /* the factor with the clamped DOFs as identity rows */
  int st = cf_precond_apply(fem, fd, b, x);
  if (st < 0) return st;
  for (int j = 0; fem->nfixed && j < fem->ndof; j++) /* Q turns y's zeros away from the axes */
    if (fem->fixed[j]) x[j] = 0;
  return CF_OK;
}

/* Z columns chg[0 .. nc) (Z_k = A0^-1 J_F(k)^T, J_F(k) in JF) in one solve with nc right-hand
 * sides: each pass over the factor serves all of them (BLAS-3 in CHOLMOD's supernodal solve for the
 * exact factor, super_solve_multi for the rotated one), where one solve per column read the whole
 * factor nc times (43% of the lug pendulum's step). */
static int z_solve(const cfMbsModel* m, const struct cfMbsFeBody* fb, cfData* fd, struct cfMbsFeState* s, int nc) {
  const int ndof = 3 * fb->nnode;
  if (s->pcg_now) { /* each column from the Galerkin start of the last ones (z_guess) */
    for (int c = 0; c < nc; c++) s->zr[c] = s->JF + (size_t)s->chg[c] * ndof, s->zz[c] = s->Z + (size_t)s->chg[c] * ndof;
    const long it0 = fd->pcg_iters_total;
    int slot = z_guess(fb, fd, s, nc);
    int st = slot < 0 ? slot : pcg_solve(m, fb, fd, s, nc, s->zr, s->zz, 1, NULL);
    s->pcg_interface += fd->pcg_iters_total - it0;
    if (st < 0) return st;
    memcpy(s->zsave[slot], s->Z, sizeof(double) * (size_t)ndof * (size_t)s->nrow); /* all columns: of this A0 */
    memcpy(s->zx[slot], fd->x, sizeof(double) * (size_t)ndof);
    memcpy(s->zkey[slot], s->pcg_coef, sizeof s->pcg_coef);
    s->zhave[slot] = 1, s->zlast = slot;
    return CF_OK;
  }
  if (s->exact_now) {
    double* B = s->zB->x;
    for (int c = 0; c < nc; c++) memcpy(B + (size_t)c * ndof, s->JF + (size_t)s->chg[c] * ndof, sizeof(double) * (size_t)ndof);
    s->zB->ncol = (size_t)nc; /* the first nc columns; X, Y, E kept per column count (no reallocation) */
    int ok = cholmod_solve2(CHOLMOD_A, s->sp.L, s->zB, NULL, &s->zX[nc], NULL, &s->zY[nc], &s->zE[nc], &s->sp.cc);
    s->zB->ncol = (size_t)(s->nrow + 1);
    if (!ok) return cf_error(CF_ERR_SOLVER, "CHOLMOD solve failed (status %d)", s->sp.cc.status);
    const double* X = s->zX[nc]->x;
    for (int c = 0; c < nc; c++) memcpy(s->Z + (size_t)s->chg[c] * ndof, X + (size_t)c * s->zX[nc]->d, sizeof(double) * (size_t)ndof);
    return CF_OK;
  }
  const cfModel* fem = fb->fem;
  for (int c = 0; c < nc; c++) s->zr[c] = s->JF + (size_t)s->chg[c] * ndof, s->zz[c] = s->Z + (size_t)s->chg[c] * ndof;
  fd->supports_active = fem->nfixed > 0; /* as a0_solve */
  int st = cf_precond_apply_multi(fem, fd, nc, s->zr, s->zz, s->zwork);
  if (st < 0) return st;
  for (int c = 0; c < nc; c++)
    for (int j = 0; fem->nfixed && j < ndof; j++)
      if (fem->fixed[j]) s->zz[c][j] = 0;
  return CF_OK;
}

/* ---- the linear coupling (cfMbsOptions.coupling = CF_MBS_COUPLING_LINEAR; docs/mbs.md) ----------
 * A part is linearised once per step: its element rotations predicted along its rigid rotation
 * (linear_rotations; the polar at the predictor q_n + h v_n, as first tried, gained 0.6% of the lug
 * pendulum's swing energy over 20 periods, and E x 100 went unstable), a second time, by the polar at
 * the first Newton iterate (d->fe_pass), only where that iterate turned the part or one of its
 * elements beyond the prediction (cf_mbs__fe_single_miss, mbs_step.c). Its forces (K_R, f_el) are
 * evaluated at each linearisation only, and from there its Newton residual is affine
 * in its positions,
 *   b_F(x) = b_F(x_p) - A0 (x - x_p) + s J_F^T (e - e0)  (A0 = cm M + ck K_R(x_p); s e: the joint
 *                                                          part of the right side, e = d->econ)
 * so the condensed solve's y = A0^-1 b_F needs one solve per linearisation (the first right side,
 * whole: v0), then none:
 *   y = v0 - (x - x_p) + Z s (e - e0)   (linear_y), and the projections' y = Z e.
 * A0 is factored ("factor": "exact", linear_exact: Z = A0^-1 J_F^T exactly) or solved by the part's
 * PCG ("pcg"), Z then a combination of Zt, the compliance of each weighted node sum along the
 * global axes, turned from the rest compliance Zrest:
 *   Zt[v][k] = Q Zrest[v] (R_v^T e_k)  (Q the node rotations, R_v the polar of the sum of the
 *                                       set's node rotations),
 * exact for a rigidly turned part (as the rotated Cholesky is). K_R differs from the turned Q K Q^T
 * only where element rotations differ from their nodes' (a bent part): where the largest such angle
 * exceeds LINEAR_TURN the columns are corrected by the PCG, warm-started from the turned ones, to
 * LINEAR_Z_TOL; a clamped part's every step (linear_operator says why). (A residual check
 * |w e_k - A0 Zt| / |w e_k| does not tell: on the swinging lug it was 1e2 from the second step on,
 * because K_R at the predictor, q + h v, sees the predictor's (w h)^2 / 2 stretch in Zt's large
 * rigid-rotation part; the compliance itself was right.)
 * Whatever Z is, the step's model of the part is linear, and the condensed solve is its exact Newton
 * step only with the same compliance G = J_F Z in the Woodbury's H = (G + 1/(a p))^-1, which CHOLMOD
 * needs symmetric. A turned (or PCG-corrected) Z leaves G asymmetric by 1e-6 to 1e-4 of its
 * diagonal, which the penalty's a p G ~ 1e6 amplified into a Newton iteration that diverged (at 100x
 * per iteration with the turned columns); so Z is replaced by Z G^-1 sym(G), whose G is sym(G)
 * exactly (linear_symmetric). */
#define LINEAR_TURN 5e-3
#define LINEAR_Z_TOL 1e-2

/* "factor": "rotated" in the linear coupling: the step's model of the part takes, for its matrix,
 *   A0 ~ Q A0(rest) Q^T   (Q the node rotations, converged at the step's first linearisation;
 *                          A0(rest) = cm M + ck K + eps I, CHOLMOD once per coefficient set: the
 *                          rotated Cholesky preconditioner's factor, fem_precond.c)
 * and applies its inverse exactly: the free motion one apply of the factor (linear_y), the interface
 * columns Zt = Q A0(rest)^-1 Q^T (w_v e_k) one multi-column apply (this function), both of the same
 * operator, so G = J_F Z is symmetric and positive definite as the exact factor's is. The residual
 * b_F(x_p) is the co-rotational one; only the step's Jacobian is approximated (a W-method's: exact
 * for a rigidly turned part, K_R against Q K Q^T elsewhere), its error acting on the step's update.
 * Where the PCG path had to correct a clamped part's turned columns every step (the door's hinge:
 * 8.3 lockstep PCG iterations) and solve its free motion (8 iterations), this takes two applies.
 * The step's second linearisation keeps Q and the columns: the operator does not change within the
 * step (its right side, the forces at the iterate, does). */
/* R_v: the polar of the sum of the node rotations Q over node sum v's nodes */
static void set_rotation(const struct cfMbsFeBody* fb, const double* Q, int v, double R[9]) {
  double S[9] = {0};
  for (int e = fb->vec_ptr[v]; e < fb->vec_ptr[v + 1]; e++)
    for (int a = 0; a < 9; a++) S[a] += Q[9 * fb->vec_node[e] + a];
  cf_polar_rotation(S, NULL, R);
}

/* z = P Q Zrest[v] (R_v^T e_k): node sum v's rest compliance along R_v^T e_k, turned node by node
 * (Zr = Zrest[v], its 3 columns; P zeroes the clamped DOFs) */
static void turned_column(const cfModel* fem, const double* Q, const double* Zr, const double R[9], int k, double* z) {
  const int ndof = fem->ndof;
  const double c[3] = {R[3 * k], R[3 * k + 1], R[3 * k + 2]}; /* R^T e_k */
  for (int n = 0; n < fem->nnode; n++) {
    double u[3];
    for (int a = 0; a < 3; a++) u[a] = c[0] * Zr[3 * n + a] + c[1] * Zr[ndof + 3 * n + a] + c[2] * Zr[2 * ndof + 3 * n + a];
    for (int a = 0; a < 3; a++) z[3 * n + a] = Q[9 * n + 3 * a] * u[0] + Q[9 * n + 3 * a + 1] * u[1] + Q[9 * n + 3 * a + 2] * u[2];
  }
  for (int j = 0; fem->nfixed && j < ndof; j++)
    if (fem->fixed[j]) z[j] = 0;
}

static int rotated_apply(const struct cfMbsFeBody* fb, cfData* fd, struct cfMbsFeState* s, int nc,
                         const double* const* b, double* const* x) {
  const cfModel* fem = fb->fem;
  fd->supports_active = fem->nfixed > 0; /* the factor with the clamped DOFs as identity rows */
  int st = nc == 1 ? cf_precond_apply(fem, fd, b[0], x[0]) : cf_precond_apply_multi(fem, fd, nc, b, x, s->zwork);
  if (st < 0) return st;
  for (int c = 0; c < nc; c++) /* P Q A0^-1 Q^T P: Q turns the clamped DOFs' zeros away */
    for (int j = 0; fem->nfixed && j < fem->ndof; j++)
      if (fem->fixed[j]) x[c][j] = 0;
  return CF_OK;
}

/* The rotated model's columns without a solve: where each node set's nodes share one rotation R_v
 * in Q (set so here: the polar of the sum of their node rotations, as the PCG path's turned columns
 * take it), Q^T (w_v e_k) = w_v (R_v^T e_k) and so
 *   Zt[v][k] = Q A0(rest)^-1 Q^T (w_v e_k) = Q Zrest[v] (R_v^T e_k),   Zrest[v][a] = A0(rest)^-1 (w_v e_a),
 * exactly, Zrest from the same factor at rest. Measured on the door's hinge: the two six-column
 * applies per step were 32% of its step. rot_turn is 0 where that cannot hold: node sets that
 * overlap without being the same nodes, or a set node with some but not all of its DOFs clamped
 * (the unit load's zeros then depend on the direction); those take the multi-column apply. */
static void rotated_turn_setup(const struct cfMbsFeBody* fb, struct cfMbsFeState* s) {
  const cfModel* fem = fb->fem;
  s->rot_turn = 1;
  for (int n = 0; n < fem->nnode; n++) s->rot_owner[n] = -1;
  for (int v = 0; v < fb->nvec && s->rot_turn; v++) {
    if (!s->vec_used[v]) continue;
    for (int e = fb->vec_ptr[v]; e < fb->vec_ptr[v + 1] && s->rot_turn; e++) {
      const int n = fb->vec_node[e], nfix = fem->fixed[3 * n] + fem->fixed[3 * n + 1] + fem->fixed[3 * n + 2];
      if (nfix == 1 || nfix == 2) s->rot_turn = 0;
      const int o = s->rot_owner[n];
      if (o < 0) {
        s->rot_owner[n] = v;
      } else if (o != v) { /* the same nodes in the same order (a set's mean and its axis measure) */
        const int len = fb->vec_ptr[v + 1] - fb->vec_ptr[v];
        if (len != fb->vec_ptr[o + 1] - fb->vec_ptr[o] ||
            memcmp(fb->vec_node + fb->vec_ptr[v], fb->vec_node + fb->vec_ptr[o], sizeof(int) * (size_t)len))
          s->rot_turn = 0;
      }
    }
  }
}

static int linear_operator_rotated(const struct cfMbsFeBody* fb, cfData* fd, struct cfMbsFeState* s, int pass,
                                   double cm, double ck, double eps) {
  const cfModel* fem = fb->fem;
  const int ndof = fem->ndof;
  s->lin_steps += pass == 0;
  double coef[3] = {cm, ck, eps};
  const int fresh = !s->rot_ready || memcmp(coef, s->rot_coef, sizeof coef);
  int st;
  /* the columns at rest of this factor: Q = I */
  int ncol = 0;
  for (int v = 0; v < fb->nvec; v++)
    for (int k = 0; k < 3 && s->vec_used[v]; k++) {
      double* b = s->zrhs + (size_t)ncol * ndof;
      unit_load(fb, v, k, b); /* the right side w_v e_k */
      s->zcol_b[ncol] = b, s->zcol_x[ncol++] = (s->rot_turn ? s->Zrest : s->Zt) + (size_t)(3 * v + k) * ndof;
    }
  if (fresh) {
    st = cf_precond_create_with(fem, fd, cm, ck, eps);
    if (st < 0) return st;
    memcpy(s->rot_coef, coef, sizeof coef);
    s->rot_ready = 1;
    if (s->rot_turn && ncol) {
      for (int n = 0; n < fem->nnode; n++) {
        double* Qn = fd->node_R + 9 * (size_t)n;
        memset(Qn, 0, 9 * sizeof(double));
        Qn[0] = Qn[4] = Qn[8] = 1;
      }
      st = rotated_apply(fb, fd, s, ncol, (const double* const*)s->zcol_b, s->zcol_x);
      if (st < 0) return st;
    }
    s->lin_have_zt = 0;
  }
  memcpy(s->pcg_coef, coef, sizeof coef);
  /* Q (and with it the columns) at each linearisation: kept from the step's first in its second,
   * the door's pin reaction drifted to 1.2x the Newton coupling's in 3 s (the hinge's elements turn
   * 4e-3 rad a step beyond the first linearisation's, its soft and stiff directions 1e6 apart) */
  /* A free part whose element rotations agree to LINEAR_ROT_SPREAD is turned as a whole, Q_n = R (the
   * polar of their sum): Q K Q^T then vanishes on the rigid rotations of R X, as K_R nearly does on
   * the current configuration's, where node by node rotations that differ by d leave forces of
   * O(d |x| K) on them, and the step's update is mostly a rigid rotation. The lug pendulum (20
   * periods at dt 5 ms), its rotations 2e-7 rad apart: its swing's energy -2.1e-3 node by node,
   * -5.2e-4 turned as a whole (the exact factor: -3.9e-5); and no node rotations to compute (10% of
   * its step). A clamped part, or one that bends, is turned node by node (its clamp holds it where a
   * whole turn would not): node rotations to convergence, in the second linearisation one
   * correction from the first's (as its element rotations, when they moved little). */
  double* Q = fd->node_R;
  int whole = 0;
  if (!fem->nfixed) {
    double S[9] = {0}, R[9], spread2 = 0;
    for (int e = 0; e < fem->ntet; e++)
      for (int a = 0; a < 9; a++) S[a] += fd->R[9 * (size_t)e + a];
    cf_polar_rotation(S, NULL, R);
    for (int e = 0; e < fem->ntet; e++) {
      double tr = 0;
      for (int a = 0; a < 9; a++) tr += R[a] * fd->R[9 * (size_t)e + a];
      if (3 - tr > spread2) spread2 = 3 - tr; /* 2 (1 - cos) ~ angle^2 (not fmax: a libm call per element) */
    }
    whole = spread2 <= LINEAR_ROT_SPREAD * LINEAR_ROT_SPREAD;
    for (int n = 0; whole && n < fem->nnode; n++) memcpy(Q + 9 * (size_t)n, R, sizeof R);
  }
  if (!whole) cf_precond_update_n(fem, fd, pass > 0 && s->lin_miss < LINEAR_MISS_STEP ? 1 : CF_PRECOND_CONVERGED);
  if (!s->rot_turn) {
    st = ncol ? rotated_apply(fb, fd, s, ncol, (const double* const*)s->zcol_b, s->zcol_x) : CF_OK;
    s->lin_have_zt = st >= 0;
    return st;
  }
  for (int v = 0; v < fb->nvec; v++) { /* each set's nodes take its rotation R_v ... */
    if (!s->vec_used[v]) continue;
    double* R = s->rot_Rv + 9 * v;
    set_rotation(fb, Q, v, R);
    for (int e = fb->vec_ptr[v]; e < fb->vec_ptr[v + 1]; e++) memcpy(Q + 9 * fb->vec_node[e], R, 9 * sizeof(double));
  }
  for (int v = 0; v < fb->nvec; v++) /* ... then the columns turned with the final Q */
    for (int k = 0; k < 3 && s->vec_used[v]; k++)
      turned_column(fem, Q, s->Zrest + (size_t)3 * v * ndof, s->rot_Rv + 9 * v, k, s->Zt + (size_t)(3 * v + k) * ndof);
  s->lin_have_zt = 1;
  return CF_OK;
}

/* linear_operator's PCG path on the device: the node rotations converged there (their sets' down
 * for R_v), the largest element-to-node angle a reduction there, the columns turned there from
 * Zrest and corrected by the device's PCG (the same rules as below) */
static int dev_linear_operator(const cfMbsModel* m, const struct cfMbsFeBody* fb, cfData* fd, struct cfMbsFeState* s,
                               int pass) {
  const cfModel* fem = fb->fem;
  const int clamped = fem->nfixed > 0;
  s->lin_steps += pass == 0;
  int st = cf_cuda_node_rotations(s->gpu, s->nmir, s->mir, s->hbuf);
  for (int j = 0; st >= 0 && j < s->nmir; j++) memcpy(fd->node_R + 9 * (size_t)s->mir[j], s->hbuf + 9 * j, 9 * sizeof(double));
  double mis = 0;
  if (st >= 0 && !clamped) st = cf_cuda_rotation_spread(s->gpu, &mis);
  if (st < 0) return st;
  s->lin_checked++;
  const int correct = clamped ? pass == 0 : !(mis <= LINEAR_TURN * LINEAR_TURN);
  if (clamped && !correct) return CF_OK;
  for (int v = 0; v < fb->nvec; v++) {
    if (!s->vec_used[v]) continue;
    double R[9];
    set_rotation(fb, fd->node_R, v, R); /* the set's nodes are mirrored */
    const int src[3] = {s->dv_zrest + 3 * v, s->dv_zrest + 3 * v + 1, s->dv_zrest + 3 * v + 2};
    for (int k = 0; k < 3; k++) {
      const int z = s->dv_zt + 3 * v + k;
      if (!(clamped && s->lin_have_zt)) {
        const double c[3] = {R[3 * k], R[3 * k + 1], R[3 * k + 2]}; /* R^T e_k */
        if ((st = cf_cuda_vec_turn(s->gpu, z, src, c)) < 0) return st;
      }
      if (!correct) continue;
      const long it0 = fd->pcg_iters_total;
      st = dev_solve(m, fb, fd, s, s->dv_u + 3 * v + k, z, LINEAR_Z_TOL / fem->def.pcg_tol * s->u_norm[3 * v + k], -1);
      s->lin_corr_iters += fd->pcg_iters_total - it0;
      s->lin_corrected++;
      if (st < 0) return st;
    }
  }
  for (int v = 0; v < fb->nvec; v++) /* the columns at the interface nodes, for Z's rows there */
    for (int k = 0; k < 3 && s->vec_used[v]; k++)
      if ((st = cf_cuda_vec_get_nodes(s->gpu, s->dv_zt + 3 * v + k, s->nmir, s->mir, s->zt_mir + (size_t)(3 * v + k) * 3 * s->nmir)) < 0)
        return st;
  s->lin_have_zt = correct || s->lin_have_zt;
  return CF_OK;
}

/* a linearisation's A0 and, with the PCG, its preconditioner; then Zt (factored: solved; PCG:
 * turned, corrected where needed) */
static int linear_operator(const cfMbsModel* m, const struct cfMbsFeBody* fb, cfData* fd, struct cfMbsFeState* s,
                           int pass, int rotated, double cm, double ck, double eps) {
  const cfModel* fem = fb->fem;
  const int ndof = fem->ndof;
  if (fb->linear_exact || (fb->linear_rotated && !rotated)) { /* A0 factored; its columns solved with the factor */
    int st = exact_init(fb, s);
    if (st >= 0) st = current_A0(fb, fd, s, cm, ck, eps);
    if (st >= 0) st = cf_sparse_factor(&s->sp, fd->A, fem->nfixed ? fem->fixed : NULL);
    for (int v = 0; v < fb->nvec && st >= 0; v++)
      for (int k = 0; k < 3 && st >= 0 && s->vec_used[v]; k++) {
        unit_load(fb, v, k, s->zres);
        st = cf_sparse_solve(&s->sp, s->zres, s->Zt + (size_t)(3 * v + k) * ndof);
      }
    s->lin_steps += pass == 0;
    return st;
  }
  if (rotated) {
    s->lin_coef[0] = cm, s->lin_coef[1] = ck, s->lin_coef[2] = eps;
    return linear_operator_rotated(fb, fd, s, pass, cm, ck, eps);
  }
  int st = pcg_system(fb, fd, s, cm, ck, eps);
  if (st < 0) return st;
  if (s->dev && s->owned) return dev_linear_operator(m, fb, fd, s, pass);
  /* node rotations: AMG and the rotated Cholesky turned theirs in pcg_system; block Jacobi has none,
   * and a GPU body's are on the device (its element rotations are downloaded with its forces) */
  if (s->gpu || fem->def.preconditioner == CF_PRECOND_BLOCK_JACOBI || !fd->precond)
    cf_precond_update_n(fem, fd, CF_PRECOND_CONVERGED);
  const double* Q = fd->node_R;
  /* where the part bends, element and node rotations part: the largest angle between an element's
   * rotation and its nodes' (K_R = R_e K_e R_e^T against the turned Q K Q^T), from
   * trace(R_e^T Q_n) = 1 + 2 cos(angle) */
  const int clamped = fem->nfixed > 0;
  s->lin_steps += pass == 0;
  double mis = 0;
  for (int e = 0; e < fem->ntet && !clamped; e++) {
    const double* R = fd->R + 9 * (size_t)e;
    for (int a = 0; a < fem->npe; a++) {
      const double* Qn = Q + 9 * (size_t)fem->tet[(size_t)fem->npe * e + a];
      double tr = 0;
      for (int k = 0; k < 9; k++) tr += R[k] * Qn[k];
      if (3 - tr > mis) mis = 3 - tr; /* 2 (1 - cos) ~ angle^2 (not fmax: a libm call per node) */
    }
  }
  s->lin_checked++;
  /* A clamped part's columns are corrected every step, from the last step's. Measured on the door's
   * hinge (clamped at its pin holes, which leave it a soft rotation): the columns turned from rest
   * were 1e-2 off after three steps (10x the rotation mismatch), the last step's had residuals of
   * 10-100x the load while A0 had changed by 3e-3, and with either, or correcting every third step,
   * the mechanism's matrix (the door's, with J_I^T H J_I) lost its definiteness within 0.1 s (the
   * hinge's soft and stiff directions are 1e6 apart in G). The second linearisation of a step keeps
   * the first's (1e-3 of the sag, as correcting both). A free part's compliance is mostly its rigid
   * motion's, exact when turned: corrected where it bends. */
  const int correct = clamped ? pass == 0 : !(mis <= LINEAR_TURN * LINEAR_TURN);
  if (clamped && !correct) return CF_OK; /* the second linearisation of a clamped part: the first's columns */
  int ncol = 0; /* columns gathered for the lockstep PCG (s->mf_now) */
  for (int v = 0; v < fb->nvec; v++) {
    if (!s->vec_used[v]) continue;
    double R[9];
    set_rotation(fb, Q, v, R);
    for (int k = 0; k < 3; k++) {
      double* z = s->Zt + (size_t)(3 * v + k) * ndof;
      if (!(clamped && s->lin_have_zt)) /* turned from rest (a clamped part: from the last step's) */
        turned_column(fem, Q, s->Zrest + (size_t)3 * v * ndof, R, k, z);
      if (!correct) continue;
      /* to LINEAR_Z_TOL: Z acts on the change of the joint forces within a step only (linear_y); the
       * door's hinge moved by 1e-3 of the Newton coupling's sag with 1e-2 as with 1e-6, in 1.4 PCG
       * iterations per column instead of 3.5 */
      if (s->mf_now) { /* gathered: all columns in one lockstep PCG, below */
        double* b = s->zrhs + (size_t)ncol * ndof;
        unit_load(fb, v, k, b); /* the right side w e_k */
        s->zcol_b[ncol] = b, s->zcol_x[ncol] = z;
        s->zcol_scale[ncol++] = LINEAR_Z_TOL / fem->def.pcg_tol * sqrt(dot_n(b, b, ndof));
        continue;
      }
      unit_load(fb, v, k, s->zres); /* the right side w e_k */
      const double* b = s->zres;
      const long it0 = fd->pcg_iters_total;
      s->pcg_bscale = LINEAR_Z_TOL / fem->def.pcg_tol * sqrt(dot_n(b, b, ndof));
      st = pcg_solve(m, fb, fd, s, 1, &b, &z, 1, NULL);
      s->pcg_bscale = 0;
      s->lin_corr_iters += fd->pcg_iters_total - it0;
      s->lin_corrected++;
      if (st < 0) return st;
    }
  }
  if (ncol) { /* the matrix-free columns in lockstep: each pass over the elements and the
                 preconditioner's factor serves them all (the door's hinge: 6 columns) */
    const long it0 = fd->pcg_iters_total;
    const cfMatfreeOp op = {s->G, s->ye, s->pcg_coef[0], s->pcg_coef[1], s->pcg_coef[2]};
    fd->supports_active = fem->nfixed > 0;
    st = cf_pcg_matfree_multi(fem, fd, &op, ncol, (const double* const*)s->zcol_b, s->zcol_x, s->zcol_scale, s->mfw);
    s->lin_corr_iters += fd->pcg_iters_total - it0;
    s->lin_corrected += ncol;
    if (st != CF_OK)
      return cf_error(st < 0 ? st : CF_ERR_SOLVER, "FE body '%s': the PCG of the part's interface columns (the linear "
                      "coupling): %s; a part in large bending may need the Newton coupling (solver.coupling \"newton\")",
                      m->body_name[fb->body], cf_last_error());
    for (int c = 0; c < ncol; c++)
      for (int j = 0; fem->nfixed && j < ndof; j++)
        if (fem->fixed[j]) s->zcol_x[c][j] = 0;
  }
  s->lin_have_zt = correct || s->lin_have_zt;
  return CF_OK;
}

/* Z <- Z G^-1 sym(G) (G = J_F Z in H, nr x nr): then J_F Z = sym(G) exactly (see above); H <- sym(G).
 * Gaussian elimination with partial pivoting on [G | sym(G)]; a singular G (redundant rows) keeps
 * Z and only symmetrises. */
/* S (n x n, symmetric) <- its nearest positive semidefinite matrix, V max(lambda, 0) V^T, where an
 * eigenvalue is negative. G = J_F A0^-1 J_F^T is semidefinite; with the PCG's turned columns and two
 * joints at one node set (a weld and a revolute: G singular) its error made it indefinite by more
 * than the penalty's 1/(a p) (the double four-bar's crank welded to a pin and hinged to a coupler at
 * one end: "the compliance of its joints is not positive definite" at the first step). work: n^2 + n. */
static void psd_clamp(double* S, int n, double* work) {
  double *V = work, *lam = work + (size_t)n * n;
  memcpy(V, S, sizeof(double) * (size_t)n * n);
  if (LAPACKE_dsyev(LAPACK_ROW_MAJOR, 'V', 'U', n, V, n, lam) != 0 || lam[0] >= 0) return;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      double a = 0;
      for (int k = 0; k < n; k++) a += V[i * n + k] * (lam[k] > 0 ? lam[k] : 0) * V[j * n + k];
      S[i * n + j] = a;
    }
}

static void linear_symmetric(struct cfMbsFeState* s, int ndof, int turn_z) {
  const int nr = s->nrow;
  if (nr < 2) return;
  double* G = s->lsym;                        /* [nr^2] LU of G */
  double* X = s->lsym + (size_t)nr * nr;      /* [nr^2] sym(G), then G^-1 sym(G) */
  double* t = s->lsym + (size_t)2 * nr * nr;  /* [nr] */
  for (int k = 0; k < nr; k++)
    for (int l = 0; l < nr; l++)
      G[k * nr + l] = s->H[k * nr + l], X[k * nr + l] = 0.5 * (s->H[k * nr + l] + s->H[l * nr + k]);
  memcpy(s->H, X, sizeof(double) * (size_t)nr * nr);
  psd_clamp(s->H, nr, t + nr);
  if (!turn_z) return;
  double big = 0;
  for (int k = 0; k < nr * nr; k++) big = fmax(big, fabs(G[k]));
  for (int c = 0; c < nr; c++) {
    int p = c;
    for (int r = c + 1; r < nr; r++)
      if (fabs(G[r * nr + c]) > fabs(G[p * nr + c])) p = r;
    if (!(fabs(G[p * nr + c]) > 1e-12 * big)) return; /* singular: symmetrised only */
    for (int l = 0; l < nr; l++) {
      double a = G[c * nr + l]; G[c * nr + l] = G[p * nr + l]; G[p * nr + l] = a;
      a = X[c * nr + l]; X[c * nr + l] = X[p * nr + l]; X[p * nr + l] = a;
    }
    for (int r = c + 1; r < nr; r++) {
      double f = G[r * nr + c] / G[c * nr + c];
      for (int l = c; l < nr; l++) G[r * nr + l] -= f * G[c * nr + l];
      for (int l = 0; l < nr; l++) X[r * nr + l] -= f * X[c * nr + l];
    }
  }
  for (int c = nr - 1; c >= 0; c--)
    for (int l = 0; l < nr; l++) {
      double a = X[c * nr + l];
      for (int r = c + 1; r < nr; r++) a -= G[c * nr + r] * X[r * nr + l];
      X[c * nr + l] = a / G[c * nr + c];
    }
  if (s->dev && s->owned) { /* on the device, through the scratch columns */
    int st = CF_OK;
    for (int l = 0; l < nr && st >= 0; l++) {
      for (int k = 0; k < nr; k++) s->csrc[k] = s->dv_z + k, s->ccoef[k] = X[k * nr + l];
      st = dev_comb(s, s->dv_zx + l, 0, nr, s->csrc, s->ccoef);
    }
    for (int l = 0; l < nr && st >= 0; l++) /* (the host's rows of Z are not read again in the step) */
      st = dev_copy(s, s->dv_z + l, s->dv_zx + l);
    dev_status(s, st);
    return;
  }
  /* Z <- Z X, in chunks of LSYM_CHUNK entries of every column (contiguous, vectorised) */
  double* T = t + nr; /* [nr][LSYM_CHUNK] */
  for (int j0 = 0; j0 < ndof; j0 += LSYM_CHUNK) {
    const int nj = ndof - j0 < LSYM_CHUNK ? ndof - j0 : LSYM_CHUNK;
    for (int l = 0; l < nr; l++) {
      double* Tl = T + (size_t)l * LSYM_CHUNK;
      memset(Tl, 0, sizeof(double) * (size_t)nj);
      for (int k = 0; k < nr; k++) {
        const double x = X[k * nr + l];
        const double* zk = s->Z + (size_t)k * ndof + j0;
        for (int j = 0; j < nj; j++) Tl[j] += x * zk[j];
      }
    }
    for (int l = 0; l < nr; l++) memcpy(s->Z + (size_t)l * ndof + j0, T + (size_t)l * LSYM_CHUNK, sizeof(double) * (size_t)nj);
  }
}

/* Z of the body's rows from Zt: row r's J_F^T = sum over its terms t of (w_v(t) c_t), c_t = s_t B_t
 * (cf_mbs__fe_term), so Z_r = sum_t sum_a c_t[a] Zt[v(t)][a]; and J_F into JF (for G and linear_y).
 * Returns 0 when neither Zt (the step) nor any row's J_F changed since the last call: Z and G are
 * kept (the Newton iterations and the projections of a step factor 3-5 times, and a joint to the
 * ground or to a body that has not turned has the same rows each time). */
static int linear_z_rows(const cfMbsModel* m, const cfMbsData* d, const struct cfMbsFeBody* fb, int ib,
                         struct cfMbsFeState* s) {
  const int ndof = 3 * fb->nnode;
  int same = s->lin_zkey == d->step_serial;
  for (int k = 0; k < s->nrow; k++) { /* the rows' J_F at their nodes, against the last call's */
    const cfMbsCon* c = &m->con[s->row[k]];
    const double* row = d->jac + (size_t)s->row[k] * m->jac_stride;
    for (int j = s->rnode_ptr[k]; j < s->rnode_ptr[k + 1]; j++) {
      double g[3];
      row_F_at(m, d, fb, c, row, s->rnode[j], g);
      if (same && memcmp(g, s->jfc + 3 * (size_t)j, sizeof g)) same = 0;
      memcpy(s->jfc + 3 * (size_t)j, g, sizeof g);
    }
  }
  s->z_valid = 0; /* Z is the linear coupling's: a solve outside the step forms its own */
  s->key_step = -1;
  if (same) return 0;
  if (s->dev && s->owned) { /* Z_k = sum of turned columns on the device; its rows' nodes down (G = J_F Z) */
    for (int k = 0; k < s->nrow; k++) {
      const cfMbsCon* c = &m->con[s->row[k]];
      int n = 0;
      for (int t = 0; t < c->nft; t++) {
        if (c->ft_fe[t] != ib) continue;
        double B[3];
        cf_mbs__fe_term_dir(m, d, c, t, d->q, B);
        for (int a = 0; a < 3; a++)
          if (B[a] != 0) s->csrc[n] = s->dv_zt + 3 * c->ft_vec[t] + a, s->ccoef[n++] = B[a];
      }
      int st = dev_comb(s, s->dv_z + k, 0, n, s->csrc, s->ccoef);
      if (st < 0) return st;
      double* z = s->Z + (size_t)k * ndof; /* its interface nodes here, from Zt's */
      for (int j = 0; j < s->nmir; j++)
        for (int a = 0; a < 3; a++) {
          double t = 0;
          for (int c = 0; c < n; c++) t += s->ccoef[c] * s->zt_mir[(size_t)(s->csrc[c] - s->dv_zt) * 3 * s->nmir + 3 * j + a];
          z[3 * (size_t)s->mir[j] + a] = t;
        }
    }
    s->lin_zkey = d->step_serial;
    return 1;
  }
  for (int k = 0; k < s->nrow; k++) {
    const cfMbsCon* c = &m->con[s->row[k]];
    double* z = s->Z + (size_t)k * ndof;
    memset(z, 0, sizeof(double) * (size_t)ndof);
    for (int t = 0; t < c->nft; t++) {
      if (c->ft_fe[t] != ib) continue;
      double B[3]; /* s B: an angle driver's sin / -cos in s, a modal set's A Psi y in B */
      cf_mbs__fe_term_dir(m, d, c, t, d->q, B);
      for (int a = 0; a < 3; a++) {
        double w = B[a];
        if (w == 0) continue;
        axpy_n(w, s->Zt + (size_t)(3 * c->ft_vec[t] + a) * ndof, z, ndof);
      }
    }
  }
  s->lin_zkey = d->step_serial;
  return 1;
}

/* y = A0^-1 b_F without a solve (see above). The first Newton right side of a step is solved
 * whole by the PCG, its joint part with the multipliers it carries (those of the last step: e0),
 * warm-started with the last step's solution: v0 = A0^-1 b_F(x_p). The later ones differ from it by
 * -A0 (x - x_p) + s J_F^T (e - e0), so y = v0 - (x - x_p) + Z s (e - e0): the compliance Z acts on
 * the step's change of the joint forces only, and its error with it. (With Z on the whole joint
 * force, the free motion v0 = A0^-1 base_F, the turned compliance of the clamped door hinge, 1% off
 * after three steps, put its sag 6x off in 0.6 s.) */
/* ze0 = Z e0 with the rows' current Z (linear_y's right side solved with these joint forces) */
static void linear_ze0(struct cfMbsFeState* s, int ndof) {
  memset(s->ze0, 0, sizeof(double) * (size_t)ndof);
  for (int k = 0; k < s->nrow; k++) {
    axpy_n(s->e0[k], s->Z + (size_t)k * ndof, s->ze0, ndof);
  }
}

/* The body's part of the step's Newton residual (mbs_step.c: r = -h^2 (M qdd + J^T e - Q)) into bF,
 * from its own store: the generic loops leave its coordinates out, but for r's J^T e at its
 * mirrored nodes (cf_mbs__apply_M leaves them zero before cf_mbs__jacT_mult_add) and d->Q's force
 * elements there (its own forces are OS_F). The mass is cf_mbs__apply_M's for its blocks: the
 * diagonal of the consistent mass in Mbar, then the rest (cf_mbs__fe_mass_offdiag), in that order. */
static void linear_bF(const cfMbsModel* m, const cfMbsData* d, const struct cfMbsFeBody* fb, struct cfMbsFeState* s,
                      const double* r) {
  const cfModel* fem = fb->fem;
  const int ndof = fem->ndof;
  const double sc = d->fe_rhs_scale, *a = OST(s, OS_QDD, ndof), *F = OST(s, OS_F, ndof);
  for (int n = 0; n < fb->nnode; n++) {
    double y[3];
    const double mn = fem->Mblk[fem->diag[n]];
    for (int k = 0; k < 3; k++) y[k] = mn * a[3 * n + k];
    for (int p = fem->row_ptr[n]; p < fem->row_ptr[n + 1]; p++) {
      if (p == fem->diag[n] || fem->Mblk[p] == 0) continue;
      for (int k = 0; k < 3; k++) y[k] += fem->Mblk[p] * a[3 * fem->col[p] + k];
    }
    const int q = fb->qadr[n];
    for (int k = 0; k < 3; k++) s->bF[3 * n + k] = sc * (y[k] + r[q + k] - (d->Q[q + k] + F[3 * n + k]));
  }
}

/* The same on the device: b_F = sc (M qdd + (r - Q - f_ext) + f_el - m g), with r - Q - f_ext known on
 * the host only at the mirrored nodes (the joints' and force elements' forces, the loads at the node
 * sets; the viewer's extra nodal forces anywhere: then the whole vector goes up) */
static int dev_bF(const cfMbsModel* m, const cfMbsData* d, const struct cfMbsFeBody* fb, struct cfMbsFeState* s,
                  const double* r) {
  const cfData* fd = d->fe_data[fb - m->fe];
  const double sc = d->fe_rhs_scale;
  double* x = s->hbuf + 9 * (size_t)s->nmir;
  int st = dev_gravity(d, fb, s);
  if (st >= 0 && fe_extra(d, (int)(fb - m->fe))) {
    for (int n = 0; n < fb->nnode; n++)
      for (int a = 0; a < 3; a++) x[3 * n + a] = r[fb->qadr[n] + a] - d->Q[fb->qadr[n] + a] - fd->f_ext[3 * n + a];
    st = cf_cuda_vec_set(s->gpu, DV_EXT, x);
  } else if (st >= 0) {
    for (int j = 0; j < s->nmir; j++)
      for (int a = 0; a < 3; a++) {
        const int n = s->mir[j];
        s->hbuf[3 * j + a] = r[fb->qadr[n] + a] - d->Q[fb->qadr[n] + a] - fd->f_ext[3 * n + a];
      }
    st = cf_cuda_vec_comb(s->gpu, DV_EXT, 0, 0, NULL, NULL);
    if (st >= 0) st = cf_cuda_vec_set_nodes(s->gpu, DV_EXT, s->nmir, s->mir, s->hbuf);
  }
  const int src[3] = {DV_TMP, DV_EXT, DV_MG};
  const double c[3] = {sc, sc, -sc};
  if (st >= 0) st = cf_cuda_vec_mass(s->gpu, OS_QDD, DV_TMP);
  if (st >= 0) st = cf_cuda_vec_field(s->gpu, DV_BF, CF_CUDA_F_EL, 0);
  if (st >= 0) st = cf_cuda_vec_comb(s->gpu, DV_BF, sc, 3, src, c);
  if (st >= 0) st = cf_cuda_vec_unfix(s->gpu, DV_BF);
  return st;
}

/* vector y = beta y + sum_k w[k] Z_k (the rows' columns) + the first n0 terms of csrc/ccoef */
static int dev_z_comb(struct cfMbsFeState* s, int y, double beta, int n0, const double* w) {
  for (int k = 0; k < s->nrow; k++) s->csrc[n0 + k] = s->dv_z + k, s->ccoef[n0 + k] = w[k];
  return dev_comb(s, y, beta, n0 + s->nrow, s->csrc, s->ccoef);
}

/* linear_y on the device (its PCG path): Y = V0 - (Q - XP) - ZE0 + Z w, the free motion V0 solved
 * at the step's (pass's) first right side */
static int dev_linear_y(const cfMbsModel* m, cfMbsData* d, const struct cfMbsFeBody* fb, struct cfMbsFeState* s,
                        const double* b) {
  const cfModel* fem = fb->fem;
  const int nr = s->nrow;
  const double sc = d->fe_rhs == CF_MBS_RHS_NEWTON ? d->fe_rhs_scale : 1;
  int st = CF_OK;
  if (d->fe_rhs == CF_MBS_RHS_JTE) {
    for (int k = 0; k < nr; k++) s->w[k] = sc * d->econ[s->row[k]];
    return dev_z_comb(s, DV_Y, 0, 0, s->w);
  }
  if (s->lin_v != 4 * d->step_serial + d->fe_pass) {
    cfData* fd = d->fe_data[fb - m->fe];
    st = dev_bF(m, d, fb, s, b);
    const int qx[2] = {OS_Q, DV_XP};
    const double mp[2] = {-1, 1};
    if (st >= 0 && d->fe_pass > 0) st = cf_cuda_vec_comb(s->gpu, DV_V0, 1, 2, qx, mp); /* v0 - (x_1 - x_p) */
    else if (st >= 0 && (!s->lin_have_v0 || !fem->def.warm_start)) st = cf_cuda_vec_comb(s->gpu, DV_V0, 0, 0, NULL, NULL);
    else if (st >= 0) st = dev_copy(s, DV_V0, DV_V0LAST);
    const long it0 = fd->pcg_iters_total;
    /* from the best combination of the last two steps' solutions, as the CPU (linear_y) */
    const int v1 = d->fe_pass == 0 && s->lin_have_v0 > 1 && fem->def.warm_start ? DV_V0PREV : -1;
    if (st >= 0) st = dev_solve(m, fb, fd, s, DV_BF, DV_V0, 0, v1);
    s->lin_free_iters += fd->pcg_iters_total - it0;
    if (st >= 0 && d->fe_pass == 0) {
      st = dev_copy(s, DV_V0PREV, DV_V0LAST);
      if (st >= 0) st = dev_copy(s, DV_V0LAST, DV_V0);
      s->lin_have_v0++;
    }
    if (st >= 0) st = dev_copy(s, DV_XP, OS_Q);
    for (int k = 0; k < nr; k++) s->e0[k] = sc * d->econ[s->row[k]];
    if (st >= 0) st = dev_z_comb(s, DV_ZE0, 0, 0, s->e0);
    if (st < 0) return st;
    s->lin_v = 4 * d->step_serial + d->fe_pass;
  }
  for (int k = 0; k < nr; k++) s->w[k] = sc * d->econ[s->row[k]];
  s->csrc[0] = DV_V0, s->csrc[1] = OS_Q, s->csrc[2] = DV_XP, s->csrc[3] = DV_ZE0;
  s->ccoef[0] = 1, s->ccoef[1] = -1, s->ccoef[2] = 1, s->ccoef[3] = -1;
  return dev_z_comb(s, DV_Y, 0, 4, s->w);
}

static int linear_y(const cfMbsModel* m, cfMbsData* d, const struct cfMbsFeBody* fb, struct cfMbsFeState* s,
                    const double* b) {
  if (s->dev && s->owned) return dev_linear_y(m, d, fb, s, b);
  const cfModel* fem = fb->fem;
  const int ndof = 3 * fb->nnode, nr = s->nrow;
  const double sc = d->fe_rhs == CF_MBS_RHS_NEWTON ? d->fe_rhs_scale : 1;
  if (d->fe_rhs == CF_MBS_RHS_JTE) {
    memset(s->y, 0, sizeof(double) * (size_t)ndof);
    for (int k = 0; k < nr; k++) s->w[k] = sc * d->econ[s->row[k]];
  } else {
    const double* xq = OST(s, OS_Q, ndof); /* the body's own nodes (fe_own) */
    if (s->lin_v != 4 * d->step_serial + d->fe_pass) { /* the step's (pass's) first right side, solved */
      linear_bF(m, d, fb, s, b);
      for (int j = 0; fem->nfixed && j < ndof; j++)
        if (fem->fixed[j]) s->bF[j] = 0;
      cfData* fd = d->fe_data[fb - m->fe];
      const double* bb = s->bF;
      double* x = s->v0;
      if (fb->linear_exact || fb->linear_rotated) {
        const int rot = rotated_now(fb, s, d);
        int st = !rot ? cf_sparse_solve(&s->sp, s->bF, s->v0) : rotated_apply(fb, fd, s, 1, &bb, &x);
        if (st < 0) return st;
        if (rot) { /* the rotated model against the part's own matrix, on the free motion */
          const double err = rotated_model_error(fb, fd, s);
          s->rot_err_max = fmax(s->rot_err_max, err);
          const double err_max = fem->nfixed ? ROTATED_MODEL_CLAMPED : ROTATED_MODEL_FREE;
          if (!(err <= err_max))
            return cf_error(CF_ERR_SOLVER, "the rotated factor's model of the part misses its free motion's right side "
                            "by %.2g of it (beyond %g)", err, err_max);
        }
        memcpy(s->xp, xq, sizeof(double) * (size_t)ndof);
        for (int k = 0; k < nr; k++) s->e0[k] = sc * d->econ[s->row[k]];
        s->lin_v = 4 * d->step_serial + d->fe_pass;
        linear_ze0(s, ndof);
        goto combine;
      }
      if (d->fe_pass > 0) { /* the second linearisation: from the first's, b_F(x_1) ~ b_F(x_p) - A0 (x_1 - x_p) */
        for (int j = 0; j < ndof; j++) s->v0[j] -= xq[j] - s->xp[j];
      } else if (!s->lin_have_v0 || !fem->def.warm_start) {
        memset(s->v0, 0, sizeof(double) * (size_t)ndof);
      } else {
        memcpy(s->v0, s->v0last, sizeof(double) * (size_t)ndof);
      }
      /* from the best combination of the last two steps' solutions (cf_pcg_warm_start, as the part's
       * own step starts from its last two velocities): the part's stiff modes ring at dt, and the
       * last solution alone is the poorer start (the lug pendulum: 5.6 PCG iterations per step in
       * its first 50 steps, 4.5 with both) */
      double* v1 = NULL;
      if (d->fe_pass == 0 && s->lin_have_v0 > 1 && fem->def.warm_start && !s->gpu) {
        memcpy(s->zres, s->v0prev, sizeof(double) * (size_t)ndof);
        v1 = s->zres;
      }
      const long it0 = fd->pcg_iters_total;
      int st = pcg_solve(m, fb, fd, s, 1, &bb, &x, 1, v1);
      s->lin_free_iters += fd->pcg_iters_total - it0;
      if (st < 0) return st;
      if (d->fe_pass == 0) { /* the warm start's two vectors: the last two steps' first solutions */
        memcpy(s->v0prev, s->v0last, sizeof(double) * (size_t)ndof);
        memcpy(s->v0last, s->v0, sizeof(double) * (size_t)ndof);
        s->lin_have_v0++;
      }
      memcpy(s->xp, xq, sizeof(double) * (size_t)ndof);
      for (int k = 0; k < nr; k++) s->e0[k] = sc * d->econ[s->row[k]];
      s->lin_v = 4 * d->step_serial + d->fe_pass;
      linear_ze0(s, ndof);
    }
  combine:
    /* y = v0 - (x - x_p) - Z0 e0 + Z (s e): v0 holds the joint forces e0 through the Z0 of its
     * solve; Z itself follows rows whose gradient moves within the linearisation (a virtual pin's
     * axes between two FE bodies: with Z (s e - e0) the pin's Newton iteration diverged, the
     * double four-bar with three flexible bars at its first step) */
    for (int j = 0; j < ndof; j++) s->y[j] = s->v0[j] - (xq[j] - s->xp[j]) - s->ze0[j];
    for (int k = 0; k < nr; k++) s->w[k] = sc * d->econ[s->row[k]];
  }
  for (int k = 0; k < nr; k++) { /* s->w: the joint part's multipliers (overwritten by cf_mbs__fe_solve next) */
    const double ek = s->w[k];
    axpy_n(ek, s->Z + (size_t)k * ndof, s->y, ndof);
  }
  return CF_OK;
}

int cf_mbs_fe_interface_nodes(const cfMbsModel* m, const cfMbsData* d, int ib, int* rows) {
  const struct cfMbsFeState* s = ib >= 0 && ib < m->nfe && d->fe_state && m->fe[ib].linear ? &d->fe_state[ib] : NULL;
  if (rows) *rows = s ? s->nrow : 0;
  return s && s->ost ? s->nmir : 0;
}

void cf_mbs_fe_linear_stats(const cfMbsModel* m, const cfMbsData* d, int ib, long* steps, long* checked,
                            long* corrected, long* free_iters, long* corr_iters) {
  const struct cfMbsFeState* s = ib >= 0 && ib < m->nfe && d->fe_state && m->fe[ib].linear ? &d->fe_state[ib] : NULL;
  if (steps) *steps = s ? s->lin_steps : 0;
  if (checked) *checked = s ? s->lin_checked : 0;
  if (corrected) *corrected = s ? s->lin_corrected : 0;
  if (free_iters) *free_iters = s ? s->lin_free_iters : 0;
  if (corr_iters) *corr_iters = s ? s->lin_corr_iters : 0;
}

/* Before the CHOLMOD factorisation of the factored coordinates (Ax of those, in the model's
 * entries, is in Axr): A0 factored, Z, G, H, and Axr += J_I^T (H - a I) J_I. */
int cf_mbs__fe_factor(const cfMbsModel* m, cfMbsData* d, double* Axr) {
  const double* c5 = d->asm_coef;
  double cM = c5[0], cC = c5[1], cK = c5[2], a = c5[3], eps = c5[4];
  for (int i = 0; i < m->nfe; i++) {
    const struct cfMbsFeBody* fb = &m->fe[i];
    if (!fb->corotational) continue;
    const cfModel* fem = fb->fem;
    cfData* fd = d->fe_data[i];
    struct cfMbsFeState* s = &d->fe_state[i];
    int ndof = 3 * fb->nnode, nr = s->nrow;
    double cm = cM + cC * fem->def.rayleigh_alpha, ck = cK + cC * fem->def.rayleigh_beta;
    /* within a step (same coefficients) the part's factor is kept once the Newton update has
     * shrunk below 1% of the step's first: the iteration converges on the exact residual, the
     * part's tangent changes little from there to the solution, and the factor is most of the
     * cost. (Not before: the predictor can be far off, e.g. the first step after accelerations
     * computed without the elastic forces' tangent, or a part turning at 2 rad/s, whose first two
     * updates are as large as each other; kept from there the iteration diverged.) Z and H are
     * formed anew with the current gradient: a joint's axis rows depend on the other body's axes.
     */
    int rescale;
    /* A step whose Newton iteration stalls with the rotated factor (two updates that shrank by
     * less than 5x, or one that grew: the spin-up beam at 0.36 s, whose stiffening the rotated
     * matrix at rest lacks, stalled at |dq| 4e-8 and failed the step) finishes with the exact
     * factor. */
    if (s->gpu_status < 0) { /* a device error in the last forces */
      int st = s->gpu_status;
      s->gpu_status = 0;
      return cf_error(st, "FE body '%s' on the GPU: %s", m->body_name[fb->body], cf_last_error());
    }
    const int lin = fb->linear && d->fe_linear;
    s->mf_now = lin && s->lin_mf;
    int lin_new_z = 1; /* the linear coupling: Z (and G) formed anew in this call */
    if (!lin && !fb->exact_factor && !fb->a0_pcg) {
      if (d->steps != s->fb_step)
        s->fb_step = d->steps, s->fb_slow = 0, s->fb_on = 0, s->fb_prev = INFINITY;
      if (!s->fb_on && d->newton_dq < INFINITY &&
          d->newton_dq != s->fb_prev) { /* a new Newton update */
        if (d->newton_dq > 0.2 * s->fb_prev)
          s->fb_slow += d->newton_dq > s->fb_prev ? 2 : 1; /* growing: at once */
        s->fb_prev = d->newton_dq;
        if (s->fb_slow >= 2)
          s->fb_on = 1, s->key_step = -1, s->key_uses = 0; /* factor at the next call */
      }
    }
    /* "pcg" in mechanism statics (cf_mbs_static: pseudo-steps growing to 1e4 times the scene's, so
     * A0 is K_R's nearly alone and changes with every pseudo-step): the PCG crawled (the hung lug:
     * no increment in 14 minutes); the exact factor solves it (4.8 s for cofem static on that
     * scene) */
    s->pcg_now = fb->a0_pcg && !d->constraint_hessian;
    s->exact_now = fb->exact_factor || s->fb_on || (fb->a0_pcg && !s->pcg_now);
    if (lin) { /* the linear coupling: the step's operator and Zt once, Z of the current rows */
      /* the operator and Zt of each linearisation (keeping the first's Zt in the second, the lug
       * pendulum's energy grew by 0.3 of the swing's in 12 s at dt 10 ms) */
      rescale = s->lin_A != d->step_serial || s->lin_Apass != d->fe_pass;
      if (rescale) {
        int st = linear_operator(m, fb, fd, s, d->fe_pass, rotated_now(fb, s, d), cm, ck, eps);
        if (st < 0) return cf_error(st, "FE body '%s'%s: %s", m->body_name[fb->body], s->gpu ? " (GPU)" : "", cf_last_error());
        s->lin_A = d->step_serial, s->lin_Apass = d->fe_pass;
        s->lin_zkey = -2; /* Z's rows anew */
      }
      lin_new_z = linear_z_rows(m, d, fb, i, s);
      if (lin_new_z < 0) return cf_error(lin_new_z, "FE body '%s' (GPU): %s", m->body_name[fb->body], cf_last_error());
    } else {
    if (s->exact_now && !s->sp_ready) {
      int st = exact_init(fb, s);
      if (st < 0) return cf_error(st, "FE body '%s': %s", m->body_name[fb->body], cf_last_error());
    }
    if (!s->exact_now && !s->pcg_now) {
      /* A0 = cm M + ck K + eps I factored once at rest (per coefficient set) and applied rotated by
       * the node rotations Q, A^-1 ~ Q A0^-1 Q^T: exact for a rigidly turned part (M and eps I are
       * rotation invariant, K_R = Q K Q^T when all rotations are one), close while the strains are
       * small; the Newton iteration then converges on the exact residual with this matrix (a
       * modified Newton) and no factorisation is repeated (the rotated-Cholesky preconditioner's
       * idea, fem_precond.c). */
      double coef[3] = {cm, ck, eps};
      if (!s->rot_ready || memcmp(coef, s->rot_coef, sizeof coef)) {
        int st = cf_precond_create_with(fem, fd, cm, ck, eps);
        if (st < 0)
          return cf_error(st, "FE body '%s': %s", m->body_name[fb->body], cf_last_error());
        memcpy(s->rot_coef, coef, sizeof coef);
        s->rot_ready = 1;
      }
      int same_step = d->steps == s->key_step && !memcmp(c5, s->key_coef, sizeof s->key_coef);
      rescale = !same_step;
      s->key_uses = same_step ? s->key_uses + 1 : 1;
      /* once the Newton update has shrunk below 1% of the step's first (as the exact factor is
       * kept, below), the rotations and Z are kept too: the operator stays the same, and only the
       * rows whose gradient moved (a revolute's axis rows) are solved again */
      int keep = same_step && s->key_uses >= 2 && d->newton_dq <= 1e-2 * d->newton_dq0;
      if (!keep) {
        /* the node rotations follow the part at every factorisation (one Newton correction of
         * their polar; Z anew): the rotated factor is an approximation of the tangent as good as
         * the rotations it is turned by, and its error is amplified by A0's condition number
         * (A0^-1 W A0 for a rotation mismatch W): with the rotations frozen at the step's
         * predictor, 2e-3 rad of element rotation within the lug's first step made the iteration
         * diverge at 1e6 per iteration; updated every iteration it converges in 2-5. */
        cf_precond_update_n(fem, fd, 3);
        s->z_valid = 0;
      }
      s->key_step = d->steps;
      memcpy(s->key_coef, c5, sizeof s->key_coef);
    } else {
      int same = d->steps == s->key_step && !memcmp(c5, s->key_coef, sizeof s->key_coef) &&
                 s->key_uses >= 2 && d->newton_dq <= 1e-2 * d->newton_dq0;
      if (d->steps == s->key_step && !memcmp(c5, s->key_coef, sizeof s->key_coef))
        s->key_uses++;
      else
        s->key_uses = 1;
      rescale = s->key_uses == 1 && !s->fb_on; /* the rows' penalties: once per step and coefficient set */
      if (!same) { /* A0 of the current K_R factored, or ("pcg") its preconditioner formed */
        s->key_step = d->steps;
        memcpy(s->key_coef, c5, sizeof s->key_coef);
        int st = s->pcg_now ? pcg_system(fb, fd, s, cm, ck, eps) : current_A0(fb, fd, s, cm, ck, eps);
        if (st >= 0 && !s->pcg_now)
          st = cf_sparse_factor(&s->sp, fd->A, fem->nfixed ? fem->fixed : NULL); /* clamped DOFs: identity rows */
        if (st < 0)
          return cf_error(st, "FE body '%s'%s: %s", m->body_name[fb->body], s->gpu ? " (GPU)" : "", cf_last_error());
        s->z_valid = 0;
      }
    }
    int st, nchg = 0;
    for (int k = 0; k < nr; k++) {
      double* jf = s->JF + (size_t)k * ndof;
      row_F(m, d, fb, s->row[k], s->bF);
      if (s->z_valid && !memcmp(s->bF, jf, sizeof(double) * (size_t)ndof)) continue;
      memcpy(jf, s->bF, sizeof(double) * (size_t)ndof);
      s->chg[nchg++] = k;
    }
    if (nchg && (st = z_solve(m, fb, fd, s, nchg)) < 0) return s->z_valid = 0, st;
    s->z_valid = 1;
    }
    /* G = J_F Z, then H = (G + diag(1 / (a p_k)))^-1 with p_k the rows' penalties */
    for (int k = 0; k < nr && lin_new_z; k++)
      for (int l = 0; l < nr; l++) s->H[k * nr + l] = row_F_dot(m, d, fb, s, k, s->Z + (size_t)l * ndof);
    /* The penalty of a row is scaled so that a p_k G_kk <= 1e6 (the rigid bodies' equations have
     * about 1e5-1e6 there). With the stiffness-scaled alpha alone, a G reached 1e12 on the axis rows
     * of a floating part's revolute joint, and then the condensed solve's x_F = y - Z w, exact in
     * exact arithmetic, carries an error of eps a G relative in J x: the Newton iteration of a lug
     * with a bolt on it diverged from 1e-16 at ~20x per iteration. 1e6 keeps that error at 1e-10
     * and the augmented Lagrangian still contracts Phi by ~1e-6 per iteration. */
    if (lin && lin_new_z) { /* J_F Z = sym(G): the Woodbury exact for the step's model */
      /* "rotated": Z is the exact inverse of one symmetric operator, G symmetric to round-off */
      linear_symmetric(s, ndof, !rotated_now(fb, s, d));
      memcpy(s->Gsym, s->H, sizeof(double) * (size_t)nr * nr);
    } else if (lin) {
      memcpy(s->H, s->Gsym, sizeof(double) * (size_t)nr * nr);
    }
    for (int k = 0; k < nr && a > 0; k++) {
      int r = s->row[k];
      double g = s->H[k * nr + k];
      if (rescale) d->con_pen[r] = m->con_pen[r] * fmin(1.0, 1e6 / (a * m->con_pen[r] * (g > 0 ? g : 1e-300)));
      s->H[k * nr + k] += 1 / (a * d->con_pen[r]);
    }
    for (int k = 0; k < nr; k++) /* symmetrise (round-off of the two products) */
      for (int l = k + 1; l < nr; l++) s->H[k * nr + l] = s->H[l * nr + k] = 0.5 * (s->H[k * nr + l] + s->H[l * nr + k]);
    if (nr && (a <= 0 || spd_inverse(s->H, nr) < 0))
      return cf_error(CF_ERR_SOLVER, "FE body '%s': the compliance of its joints is not positive definite",
                      m->body_name[fb->body]);
    /* Axr += J_I(k)^T H_kl J_I(l) over the factored slots (the rows' a J'J is not in Ax) */
    for (int k = 0; k < nr; k++)
      for (int l = 0; l < nr; l++) {
        double coef = s->H[k * nr + l];
        const cfMbsCon *ck_ = &m->con[s->row[k]], *cl = &m->con[s->row[l]];
        const double* rk = d->jac + (size_t)s->row[k] * m->jac_stride;
        const double* rl = d->jac + (size_t)s->row[l] * m->jac_stride;
        for (int s1 = 0; s1 < ck_->nb; s1++)
          for (int s2 = 0; s2 < cl->nb; s2++) {
            int b1 = ck_->body[s1], b2 = cl->body[s2];
            if (condensed(m, b1) || condensed(m, b2) || b1 > b2) continue;
            /* Axr[b1 rows, b2 cols] += coef rk_b1 rl_b2^T (b1 <= b2: upper blocks) */
            double B[144];
            for (int p = 0; p < 12; p++)
              for (int q2 = 0; q2 < 12; q2++) B[12 * p + q2] = rk[12 * s1 + p] * rl[12 * s2 + q2];
            if (b1 == b2) /* the diagonal block must be symmetric: the (l, k) term adds the transpose */
              for (int p = 0; p < 12; p++)
                for (int q2 = 0; q2 < 12; q2++) B[12 * p + q2] = 0.5 * (rk[12 * s1 + p] * rl[12 * s2 + q2] + rl[12 * s2 + p] * rk[12 * s1 + q2]);
            cf_mbs__add_blk(m, Axr, b1, b2, B, 12, coef);
          }
      }
  }
  return CF_OK;
}

/* x = A^-1 b: the condensed bodies' parts before and after the factored solve (solve_I) */
int cf_mbs__fe_solve(const cfMbsModel* m, cfMbsData* d, const double* b, double* x,
                     int (*solve_I)(const cfMbsModel*, cfMbsData*, const double*, double*), double* bI) {
  memcpy(bI, b, sizeof(double) * (size_t)m->nq);
  for (int i = 0; i < m->nfe; i++) {
    const struct cfMbsFeBody* fb = &m->fe[i];
    if (!fb->corotational) continue;
    struct cfMbsFeState* s = &d->fe_state[i];
    int nr = s->nrow, st;
    if (fb->linear && d->fe_linear && d->fe_rhs != CF_MBS_RHS_GENERAL) {
      st = linear_y(m, d, fb, s, b);
    } else {
      gather(fb, b, s->bF);
      for (int j = 0; j < 3 * fb->nnode; j++) /* clamped DOFs do not move */
        if (fb->fem->fixed[j]) s->bF[j] = 0;
      st = a0_solve(m, fb, d->fe_data[i], s, s->bF, s->y);
    }
    if (st >= 0 && s->dev && s->owned) st = dev_get_mir(s, DV_Y, s->y); /* the rows' nodes of y */
    if (st < 0) return st;
    for (int k = 0; k < nr; k++) s->r[k] = row_F_dot(m, d, fb, s, k, s->y);
    for (int k = 0; k < nr; k++) { /* bI -= J_I^T H r */
      double t = 0;
      for (int l = 0; l < nr; l++) t += s->H[k * nr + l] * s->r[l];
      row_I_axpy(m, d, s->row[k], -t, bI);
    }
  }
  int st = solve_I(m, d, bI, x);
  if (st < 0) return st;
  for (int i = 0; i < m->nfe; i++) {
    const struct cfMbsFeBody* fb = &m->fe[i];
    if (!fb->corotational) continue;
    struct cfMbsFeState* s = &d->fe_state[i];
    int nr = s->nrow, ndof = 3 * fb->nnode;
    for (int k = 0; k < nr; k++) s->r[k] += row_I_dot(m, d, s->row[k], x); /* r + J_I x_I */
    for (int k = 0; k < nr; k++) {
      double t = 0;
      for (int l = 0; l < nr; l++) t += s->H[k * nr + l] * s->r[l];
      s->w[k] = t;
    }
    if (s->dev && s->owned) { /* y -= Z H (r + w) on the device */
      for (int k = 0; k < nr; k++) s->r[k] = -s->w[k];
      int st2 = dev_z_comb(s, DV_Y, 1, 0, s->r);
      if (st2 < 0) return st2;
      continue;
    }
    for (int k = 0; k < nr; k++) /* y -= Z H (r + w) */
      axpy_n(-s->w[k], s->Z + (size_t)k * ndof, s->y, ndof);
    if (s->owned) continue; /* the body's own coordinates: kept in y (fe_update, fe_project_add) */
    for (int n = 0; n < fb->nnode; n++)
      for (int a3 = 0; a3 < 3; a3++) x[fb->qadr[n] + a3] = s->y[3 * n + a3];
  }
  return CF_OK;
}

/* J x of the condensed rows for the x the last cf_mbs__fe_solve returned, without cancellation:
 * J x = r + J_I x_I - G w = (H^-1 - G) w = w / (a p), where forming J_F x_F = r - G w would subtract
 * two terms a / |H| times larger than their difference (a relative error of ~1e-4 for a 3e10
 * penalty, which the augmented Lagrangian's sigma += a (J x - c) then amplified into a blow-up) */
void cf_mbs__fe_jac_mult_condensed(const cfMbsModel* m, const cfMbsData* d, double* y) {
  double a = d->asm_coef[3];
  if (!(a > 0)) return;
  for (int i = 0; i < m->nfe; i++) {
    if (!m->fe[i].corotational) continue;
    const struct cfMbsFeState* s = &d->fe_state[i];
    for (int k = 0; k < s->nrow; k++) y[s->row[k]] = s->w[k] / (a * d->con_pen[s->row[k]]);
  }
}

/* ---- extra nodal forces (the viewer's mouse spring) ---------------------------------------------- */
static const double* fe_extra(const cfMbsData* d, int i) { return d->fe_state ? d->fe_state[i].extra : NULL; }

int cf_mbs_fe_set_extra_force(const cfMbsModel* m, cfMbsData* d, int ib, const double* f) {
  if (ib < 0 || ib >= m->nfe || !d->fe_state)
    return cf_error(CF_ERR_ARG, "cf_mbs_fe_set_extra_force: no FE body %d", ib);
  struct cfMbsFeState* s = &d->fe_state[ib];
  size_t n = 3 * (size_t)m->fe[ib].nnode;
  if (!f) {
    free(s->extra);
    s->extra = NULL;
    return CF_OK;
  }
  if (!s->extra && !(s->extra = malloc(sizeof(double) * n)))
    return cf_error(CF_ERR_NOMEM, "cf_mbs_fe_set_extra_force: out of memory");
  memcpy(s->extra, f, sizeof(double) * n);
  return CF_OK;
}

long cf_mbs_scene_fe_nodes(const cfMbsScene* s) {
  long n = 0;
  for (int k = 0; k < s->nflex; k++)
    if (cf_mbs_def_fe_index(&s->def, s->flex_body[k]) >= 0 && s->flex[k]->model) n += s->flex[k]->model->nnode;
  return n;
}

/* ---- own coordinates (mbs_body_kind.h, "own") -------------------------------------------------
 * In a step of the linear coupling a corotational body integrates its node coordinates itself: the
 * generic loops of the step leave its blocks out and these do the same per coordinate (the
 * mbs_internal.h range functions), over its blocks (the padding of the last block included, as the
 * generic loops did). The condensed solve keeps the body's part of a solution, y (cf_mbs__fe_solve);
 * the Newton update and the projections add it here. A body on the GPU will keep these on the
 * device (docs/cuda.md, "Why the mesh crosses"): these ops are where it does. */
/* the store and the mirrored nodes (linear_create) */
static int own_create(const cfMbsModel* m, const struct cfMbsFeBody* fb, struct cfMbsFeState* s) {
  const int nn = fb->nnode;
  s->ost = malloc(sizeof(double) * (size_t)OS_N * 3 * (size_t)nn);
  s->mir = malloc(sizeof(int) * (size_t)(nn + 1));
  s->mir_flag = calloc((size_t)nn + 1, 1);
  unsigned char* blk = calloc((size_t)m->nbody + 1, 1);
  if (!s->ost || !s->mir || !s->mir_flag || !blk) return free(blk), CF_ERR_NOMEM;
  for (int e = 0; e < fb->vec_ptr[fb->nvec]; e++) blk[fb->node_blk[fb->vec_node[e]]] = 1;
  s->nmir = 0;
  for (int n = 0; n < nn; n++)
    if (blk[fb->node_blk[n]]) s->mir[s->nmir++] = n, s->mir_flag[n] = 1;
  free(blk);
  return CF_OK;
}

/* d's q, qd, qdd at the mirrored nodes from the store */
static void own_mirror(const struct cfMbsFeBody* fb, struct cfMbsFeState* s, cfMbsData* d) {
  const int ndof = 3 * fb->nnode;
  double* live[3] = {d->q, d->qd, d->qdd};
  for (int k = 0; k < 3; k++) {
    const double* src = OST(s, OS_Q + k, ndof);
    for (int j = 0; j < s->nmir; j++) {
      const int n = s->mir[j];
      memcpy(live[k] + fb->qadr[n], src + 3 * n, 3 * sizeof(double));
    }
  }
}

/* the arrays of d a step's generic code must not read at the body's unmirrored nodes */
static void own_poison(const cfMbsModel* m, const struct cfMbsFeBody* fb, const struct cfMbsFeState* s, cfMbsData* d,
                       double value) {
  const int n = m->nq;
  double* arr[] = {d->q, d->qd, d->qdd, d->acc, d->qd_hat, d->qdd_hat, d->r, d->Q, d->dq, d->x, d->w,
                   d->save, d->save + n, d->save + 2 * (size_t)n, d->save + 3 * (size_t)n + m->ncon};
  for (int k = 0; k < (int)(sizeof arr / sizeof arr[0]); k++)
    for (int nd = 0; nd < fb->nnode; nd++)
      if (!s->mir_flag[nd])
        for (int a = 0; a < 3; a++) arr[k][fb->qadr[nd] + a] = value;
}

/* into the store at the step's start; back into d at its end (the next step, or any reader of the
 * mechanism's state, sees it there) */
static void own_begin(const cfMbsModel* m, const struct cfMbsFeBody* fb, struct cfMbsFeState* s, cfMbsData* d) {
  const int ndof = 3 * fb->nnode;
  const double* live[4] = {d->q, d->qd, d->qdd, d->acc};
  if (s->dev) { /* the device's state, unless d was set since the last step (a reset, statics): then d's */
    if (s->dev_valid) {
      mir_values(fb, s, d, s->hbuf);
      if (memcmp(s->hbuf, s->mir_last, sizeof(double) * 9 * (size_t)s->nmir)) s->dev_valid = 0;
    }
    if (!s->dev_valid) {
      double* x = s->hbuf + 9 * (size_t)s->nmir;
      int st = CF_OK;
      for (int k = 0; k < 4 && st >= 0; k++) {
        gather(fb, live[k], x);
        st = cf_cuda_vec_set(s->gpu, OS_Q + k, x);
      }
      if (st < 0 && s->gpu_status >= 0) s->gpu_status = st;
      s->dev_valid = st >= 0;
    }
  } else
    for (int k = 0; k < 4; k++) gather(fb, live[k], OST(s, OS_Q + k, ndof));
  if (d->debug_poison_owned) own_poison(m, fb, s, d, NAN);
}

static void own_end(const cfMbsModel* m, const struct cfMbsFeBody* fb, struct cfMbsFeState* s, cfMbsData* d) {
  const int ndof = 3 * fb->nnode, n = m->nq;
  if (d->debug_poison_owned) own_poison(m, fb, s, d, 0);
  if (s->dev) { /* d holds the mirrored nodes only: cf_mbs__fe_sync brings the rest when asked */
    mir_values(fb, s, d, s->mir_last);
    s->host_stale = 1;
    return;
  }
  double* live[8] = {d->q, d->qd, d->qdd, d->acc, d->save, d->save + n, d->save + 2 * (size_t)n, d->save + 3 * (size_t)n + m->ncon};
  for (int k = 0; k < 8; k++) {
    const double* src = OST(s, OS_Q + k, ndof);
    for (int nd = 0; nd < fb->nnode; nd++) memcpy(live[k] + fb->qadr[nd], src + 3 * nd, 3 * sizeof(double));
  }
}

static int fe_own(const cfMbsModel* m, cfMbsData* d, int* lohi, int cap) {
  int n = 0;
  for (int i = 0; d->fe_state && i < m->nfe; i++) {
    const struct cfMbsFeBody* fb = &m->fe[i];
    struct cfMbsFeState* s = &d->fe_state[i];
    if (!lohi) { /* the step's end */
      if (s->owned) own_end(m, fb, s, d);
      s->owned = 0;
      continue;
    }
    s->owned = n < cap && fb->corotational && fb->linear && d->fe_linear && s->ost;
    if (!s->owned) continue;
    s->own_lo = m->body_qadr[fb->blk[0]], s->own_hi = m->body_qadr[fb->blk[fb->nblk - 1]] + CF_MBS_BODY_NQ;
    lohi[2 * n] = s->own_lo, lohi[2 * n + 1] = s->own_hi, n++;
    own_begin(m, fb, s, d);
  }
  return n;
}

#define FE_FOR_OWNED(m, d, s)                                                \
  for (int i_ = 0; i_ < (m)->nfe && (d)->fe_state; i_++)                     \
    for (struct cfMbsFeState* s = &(d)->fe_state[i_]; s && s->owned; s = NULL)

static void fe_save_restore(const cfMbsModel* m, cfMbsData* d, int restore) {
  FE_FOR_OWNED(m, d, s) {
    const int ndof = 3 * m->fe[i_].nnode;
    if (s->dev) {
      int st = CF_OK;
      for (int k = 0; k < 4 && st >= 0; k++)
        st = restore ? dev_copy(s, OS_Q + k, OS_SAVE_Q + k) : dev_copy(s, OS_SAVE_Q + k, OS_Q + k);
      if (st >= 0 && restore) st = dev_mirror(&m->fe[i_], s, d, MIR_ALL);
      dev_status(s, st);
      continue;
    }
    double *live = OST(s, OS_Q, ndof), *saved = OST(s, OS_SAVE_Q, ndof);
    memcpy(restore ? live : saved, restore ? saved : live, sizeof(double) * 4 * (size_t)ndof);
    if (restore) own_mirror(&m->fe[i_], s, d);
  }
}

static void fe_save(const cfMbsModel* m, cfMbsData* d) { fe_save_restore(m, d, 0); }

static void fe_restore(const cfMbsModel* m, cfMbsData* d) { fe_save_restore(m, d, 1); }

/* cf_mbs__predict_n as combinations of q, qd, qdd, acc (the qd_hat and qdd_hat of the old q first) */
static int dev_predict(struct cfMbsFeState* s, const cfMbsStepCoef* c) {
  const double h = c->h;
  const int src[4] = {OS_Q, OS_QD, OS_QDD, OS_ACC};
  int st;
  if (c->trapezoidal) {
    const double cqd[2] = {-2 / h, -1}, cqdd[3] = {-4 / (h * h), -4 / h, -1}, cq[3] = {1, h, 0.5 * h * h};
    st = cf_cuda_vec_comb(s->gpu, OS_QD_HAT, 0, 2, src, cqd);
    if (st >= 0) st = cf_cuda_vec_comb(s->gpu, OS_QDD_HAT, 0, 3, src, cqdd);
    if (st >= 0) st = cf_cuda_vec_comb(s->gpu, OS_Q, 0, 3, src, cq);
    return st;
  }
  /* ab = (af qdd - am a0) / (1 - am); q* = q + h qd + h^2 ((1/2 - beta) a0 + beta ab) */
  const double r = 1 / (1 - c->am);
  const double s_qdd = h * h * c->beta * c->af * r, s_acc = h * h * (0.5 - c->beta) - h * h * c->beta * c->am * r;
  const double qstar[4] = {1, h, s_qdd, s_acc};
  double cqdd[4], cqd[4];
  for (int k = 0; k < 4; k++) cqdd[k] = -c->c_qdd * qstar[k];
  /* qd_hat = qd + h ((1 - gamma) a0 + gamma ab) - c_qd q* */
  cqd[0] = -c->c_qd * qstar[0];
  cqd[1] = 1 - c->c_qd * qstar[1];
  cqd[2] = h * c->gamma * c->af * r - c->c_qd * qstar[2];
  cqd[3] = h * (1 - c->gamma) - h * c->gamma * c->am * r - c->c_qd * qstar[3];
  const double cq[2] = {1, h};
  st = cf_cuda_vec_comb(s->gpu, OS_QDD_HAT, 0, 4, src, cqdd);
  if (st >= 0) st = cf_cuda_vec_comb(s->gpu, OS_QD_HAT, 0, 4, src, cqd);
  if (st >= 0) st = cf_cuda_vec_comb(s->gpu, OS_Q, 0, 2, src, cq);
  return st;
}

static void fe_predict(const cfMbsModel* m, cfMbsData* d, const cfMbsStepCoef* c) {
  FE_FOR_OWNED(m, d, s) {
    const int ndof = 3 * m->fe[i_].nnode;
    if (s->dev) {
      int st = dev_predict(s, c); /* q moved (qd, qdd follow in rates) */
      if (st >= 0) st = dev_mirror(&m->fe[i_], s, d, MIR_Q);
      dev_status(s, st);
      continue;
    }
    cf_mbs__predict_n(c, ndof, OST(s, OS_Q, ndof), OST(s, OS_QD, ndof), OST(s, OS_QDD, ndof), OST(s, OS_ACC, ndof),
                      OST(s, OS_QD_HAT, ndof), OST(s, OS_QDD_HAT, ndof));
    own_mirror(&m->fe[i_], s, d);
  }
}

static void fe_rates(const cfMbsModel* m, cfMbsData* d, const cfMbsStepCoef* c) {
  FE_FOR_OWNED(m, d, s) {
    const int ndof = 3 * m->fe[i_].nnode;
    if (s->dev) {
      const int s1[2] = {OS_Q, OS_QD_HAT}, s2[2] = {OS_Q, OS_QDD_HAT};
      const double c1[2] = {c->c_qd, 1}, c2[2] = {c->c_qdd, 1};
      int st = cf_cuda_vec_comb(s->gpu, OS_QD, 0, 2, s1, c1);
      if (st >= 0) st = cf_cuda_vec_comb(s->gpu, OS_QDD, 0, 2, s2, c2);
      if (st >= 0) st = dev_mirror(&m->fe[i_], s, d, MIR_QD | MIR_QDD);
      dev_status(s, st);
      continue;
    }
    cf_mbs__rates_n(c, ndof, OST(s, OS_Q, ndof), OST(s, OS_QD_HAT, ndof), OST(s, OS_QDD_HAT, ndof), OST(s, OS_QD, ndof),
                    OST(s, OS_QDD, ndof));
    own_mirror(&m->fe[i_], s, d);
  }
}

static void fe_accept(const cfMbsModel* m, cfMbsData* d, const cfMbsStepCoef* c) {
  FE_FOR_OWNED(m, d, s) {
    const int ndof = 3 * m->fe[i_].nnode;
    if (s->dev) {
      const int src[2] = {OS_QDD, OS_SAVE_QDD};
      const double r = 1 / (1 - c->am), cc[2] = {(1 - c->af) * r, c->af * r};
      dev_status(s, c->trapezoidal ? dev_copy(s, OS_ACC, OS_QDD) : cf_cuda_vec_comb(s->gpu, OS_ACC, -c->am * r, 2, src, cc));
      continue;
    }
    cf_mbs__accept_n(c, ndof, OST(s, OS_QDD, ndof), OST(s, OS_SAVE_QDD, ndof), OST(s, OS_ACC, ndof));
  }
}

/* store array k += the last solve's y; its largest |y| (fmax: NaN left out) */
static double fe_add_solution(const cfMbsModel* m, cfMbsData* d, int k) {
  double mx = 0;
  FE_FOR_OWNED(m, d, s) {
    const int ndof = 3 * m->fe[i_].nnode;
    if (s->dev) {
      const int y = DV_Y;
      const double one = 1;
      double my = NAN;
      int st = cf_cuda_vec_comb(s->gpu, k, 1, 1, &y, &one);
      if (st >= 0) st = cf_cuda_vec_maxabs(s->gpu, DV_Y, &my);
      if (st >= 0) st = dev_mirror(&m->fe[i_], s, d, 1 << (k - OS_Q));
      dev_status(s, st);
      mx = fmax(mx, st < 0 ? INFINITY : my);
      continue;
    }
    double* x = OST(s, k, ndof);
    for (int j = 0; j < ndof; j++) x[j] += s->y[j], mx = fmax(mx, fabs(s->y[j]));
    own_mirror(&m->fe[i_], s, d);
  }
  return mx;
}

static double fe_update(const cfMbsModel* m, cfMbsData* d) { return fe_add_solution(m, d, OS_Q); }

static void fe_project_add(const cfMbsModel* m, cfMbsData* d, int which) {
  fe_add_solution(m, d, which ? OS_QDD : OS_QD);
}

/* ---- the FE body kind (mbs_body_kind.h) ---- */
/* the FE data of each body, then the corotational bodies' condensation state */
static int fe_data_create(const cfMbsModel* m, cfMbsData* d) {
  int st = cf_mbs__fe_data_create(m, d);
  if (st >= 0 && m->nfe) st = cf_mbs__fe_state_create(m, d);
  return st;
}

static void fe_data_free(cfMbsData* d) {
  cf_mbs__fe_state_free(d);
  for (int i = 0; d->fe_data && i < d->nfe_data; i++) cf_data_free(d->fe_data[i]);
  free(d->fe_data);
  d->fe_data = NULL, d->nfe_data = 0;
}

/* cM unused: the nodes' mass is in their blocks' Mbar; a corotational body's matrix is formed by
 * cf_mbs__fe_factor */
static void fe_assemble(const cfMbsModel* m, cfMbsData* d, double cM, double cC, double cK) {
  cf_mbs__fe_assemble(m, d, cC, cK);
}

static void fe_apply_mass(const cfMbsModel* m, const cfMbsData* d, const double* x, double* y) {
  cf_mbs__fe_mass_offdiag(m, d, x, y);
}

const cfMbsBodyKind cf_mbs__fe_kind = {
    .name = "FE",
    .nblock = cf_mbs__fe_nblock,
    .compile = cf_mbs__fe_compile,
    .model_free = cf_mbs__fe_free,
    .def_free = cf_mbs__fe_def_free,
    .initial = cf_mbs__fe_initial,
    .pairs = cf_mbs__fe_pairs,
    .data_create = fe_data_create,
    .data_free = fe_data_free,
    .forces = cf_mbs__fe_forces,
    .assemble = fe_assemble,
    .apply_mass = fe_apply_mass,
    .kinetic = cf_mbs__fe_kinetic_offdiag,
    .potential = cf_mbs__fe_potential,
    .own = fe_own,
    .save = fe_save,
    .restore = fe_restore,
    .predict = fe_predict,
    .rates = fe_rates,
    .update = fe_update,
    .project_add = fe_project_add,
    .accept = fe_accept,
};

/* for mbs_drive.c: node count and the extra nodal forces now (NULL: none) */
int cf_mbs__fe_nnode(const cfMbsModel* m, int ib) { return m->fe[ib].nnode; }
const double* cf_mbs__fe_extra_force(const cfMbsData* d, int ib) { return fe_extra(d, ib); }
