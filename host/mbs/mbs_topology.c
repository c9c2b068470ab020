/* The joint graph of a mechanism (issue 29, item 1; cofem/mbs_topology.h): spanning tree from the
 * ground by breadth-first search, cut joints, relative coordinates, Grubler's count, structural groups
 * (paper 001, Saura et al., section 2: the mechanism decomposed into groups of zero mobility solved one
 * after the other). Works on the compiled model: joint types and bodies, q0 for the axes. */
#include <stdio.h>
#include <stdlib.h>

#include "cofem/mbs_fe.h"
#include "cofem/mbs_topology.h"
#include "mbs/mbs_internal.h"

int cf_mbs_joint_dofs(int type) {
  switch (type) {
    case CF_MBS_REVOLUTE: return 1;
    case CF_MBS_PRISMATIC: return 1;
    case CF_MBS_CYLINDRICAL: return 2;
    case CF_MBS_UNIVERSAL: return 2;
    case CF_MBS_SPHERICAL: return 3;
    case CF_MBS_FIXED: return 0;
    default: return -1;
  }
}

const char* cf_mbs_joint_type_name(int type) {
  static const char* names[] = {"spherical", "revolute", "prismatic", "cylindrical", "universal", "fixed", "distance"};
  return type >= 0 && type < CF_MBS_JOINT_TYPES ? names[type] : "?";
}

/* equations of a joint in space (6 - its relative freedoms) and in the plane */
static int spatial_eqs(int type) { return type == CF_MBS_DISTANCE ? 1 : 6 - cf_mbs_joint_dofs(type); }
static int planar_eqs(int type) {
  return type == CF_MBS_DISTANCE ? 1 : type == CF_MBS_FIXED ? 3 : 2; /* revolute, prismatic: 2 */
}

void cf_mbs_topology_free(cfMbsTopology* t) {
  if (!t) return;
  free(t->order), free(t->parent), free(t->parent_joint), free(t->depth), free(t->role), free(t->reversed);
  free(t->z0), free(t->nz_body), free(t->group_ptr), free(t->group_body), free(t->group_kind), free(t->input_chosen);
  free(t);
}

/* a modal body's amplitude block or an FE body's appended node block: coordinates of a body, not a
 * body (an FE body's own id, which the joints name, stays a body) */
static int is_block(const cfMbsModel* m, int b) {
  return m->body_modal[b] == 2 || (m->body_modal[b] >= 3 && cf_mbs_fe_index(m, b) < 0);
}

/* the other body of joint j seen from body b */
static int other_body(const cfMbsModel* m, int j, int b) {
  return m->joint_body[2 * j] == b ? m->joint_body[2 * j + 1] : m->joint_body[2 * j];
}

/* Breadth-first growth of the tree from the bodies already in it (queue[head..*tail-1]): a joint that
 * reaches a body not yet in the tree becomes its tree joint. allow_spherical 0 keeps spherical joints
 * for the cuts (paper 000 and common practice: a loop is cut at a spherical joint where it has one,
 * whose 3 closure equations are the simplest). Distance joints never enter the tree. */
static void bfs(const cfMbsModel* m, cfMbsTopology* t, int* queue, int head, int* tail, int allow_spherical,
                unsigned char* in_tree) {
  while (head < *tail) {
    int b = queue[head++]; /* CF_MBS_GROUND allowed */
    for (int j = 0; j < m->njoint; j++) {
      int b1 = m->joint_body[2 * j], b2 = m->joint_body[2 * j + 1];
      if (b1 != b && b2 != b) continue;
      if (m->joint_type[j] == CF_MBS_DISTANCE || (!allow_spherical && m->joint_type[j] == CF_MBS_SPHERICAL)) continue;
      int c = other_body(m, j, b);
      if (c == CF_MBS_GROUND || in_tree[c]) continue;
      in_tree[c] = 1;
      t->parent[c] = b, t->parent_joint[c] = j, t->reversed[j] = (b1 == c);
      t->depth[c] = b == CF_MBS_GROUND ? 1 : t->depth[b] + 1;
      t->role[j] = CF_MBS_ROLE_TREE;
      queue[(*tail)++] = c;
    }
  }
}

/* global direction of axis slot s of joint j at q0 */
static void joint_axis_q0(const cfMbsModel* m, int j, int s, double out[3]) {
  int b = m->joint_body[2 * j + s];
  const double* a = m->joint_frame + 24 * j + 12 * s + 3;
  if (b == CF_MBS_GROUND) {
    memcpy(out, a, sizeof(double) * 3);
    return;
  }
  const double* qb = m->q0 + m->body_qadr[b];
  for (int i = 0; i < 3; i++) out[i] = a[0] * qb[3 + i] + a[1] * qb[6 + i] + a[2] * qb[9 + i];
}

/* planar when every revolute axis is parallel to one normal n and every prismatic axis perpendicular to it,
 * with no spherical, universal or cylindrical joint */
static int is_planar(const cfMbsModel* m) {
  double n[3] = {0, 0, 0};
  int have = 0;
  for (int j = 0; j < m->njoint; j++) {
    int ty = m->joint_type[j];
    if (ty == CF_MBS_SPHERICAL || ty == CF_MBS_UNIVERSAL || ty == CF_MBS_CYLINDRICAL) return 0;
    if (ty != CF_MBS_REVOLUTE) continue;
    double a[3], c[3];
    joint_axis_q0(m, j, 0, a);
    if (!have) memcpy(n, a, sizeof n), have = 1;
    cf_mbs_cross3(a, n, c);
    if (cf_mbs_norm3(c) > 1e-9 * cf_mbs_norm3(a) * cf_mbs_norm3(n)) return 0;
  }
  if (!have) return 0;
  for (int j = 0; j < m->njoint; j++)
    if (m->joint_type[j] == CF_MBS_PRISMATIC) {
      double a[3];
      joint_axis_q0(m, j, 0, a);
      if (fabs(cf_mbs_dot3(a, n)) > 1e-9 * cf_mbs_norm3(a) * cf_mbs_norm3(n)) return 0;
    }
  return 1;
}

/* ---- structural groups (paper 001) ---------------------------------------------------------------
 * A set S of unknown bodies is a group when, with the bodies K known, its mobility
 *   3 |S| - sum over the joints j touching S (other end in S or K) of planar_eqs(j) - drivers of S = 0
 * (6 and spatial_eqs in space), and no smaller set is (the smallest sets are found first). */
typedef struct GroupCtx {
  const cfMbsModel* m;
  const cfMbsTopology* t;
  const unsigned char* known;  /* [nbody] */
  const unsigned char* driven; /* [njoint] joints whose motion a driver (or a chosen input) sets */
  int dof_body;
  int set[8], nset, found;
  long budget;                 /* subsets left to try (bounds the search on large mechanisms) */
} GroupCtx;

static int in_set(const GroupCtx* g, int b) {
  for (int i = 0; i < g->nset; i++)
    if (g->set[i] == b) return 1;
  return 0;
}

static int set_mobility(const GroupCtx* g) {
  const cfMbsModel* m = g->m;
  int mob = g->dof_body * g->nset;
  for (int j = 0; j < m->njoint; j++) {
    int b1 = m->joint_body[2 * j], b2 = m->joint_body[2 * j + 1];
    int s1 = b1 >= 0 && in_set(g, b1), s2 = b2 >= 0 && in_set(g, b2);
    if (!s1 && !s2) continue;
    int k1 = s1 || b1 == CF_MBS_GROUND || g->known[b1], k2 = s2 || b2 == CF_MBS_GROUND || g->known[b2];
    if (!k1 || !k2) continue;
    mob -= g->t->planar ? planar_eqs(m->joint_type[j]) : spatial_eqs(m->joint_type[j]);
    mob -= g->driven[j];
  }
  return mob;
}

/* grow connected sets of `size` unknown bodies; stop at the first of mobility 0 */
static void grow(GroupCtx* g, int size) {
  if (g->found || g->budget-- <= 0) return;
  if (g->nset == size) {
    if (set_mobility(g) == 0) g->found = 1;
    return;
  }
  const cfMbsModel* m = g->m;
  for (int j = 0; j < m->njoint && !g->found; j++) {
    int b1 = m->joint_body[2 * j], b2 = m->joint_body[2 * j + 1];
    for (int s = 0; s < 2 && !g->found; s++) {
      int from = s ? b2 : b1, to = s ? b1 : b2;
      if (from < 0 || to < 0 || !in_set(g, from) || in_set(g, to) || g->known[to]) continue;
      if (to < g->set[0]) continue; /* each set grown from its smallest body only */
      g->set[g->nset++] = to;
      grow(g, size);
      if (!g->found) g->nset--;
    }
  }
}

static void group_kind(const cfMbsModel* m, const GroupCtx* g, const unsigned char* known, char* out) {
  if (g->nset == 1) {
    snprintf(out, 32, "input");
    return;
  }
  if (g->nset == 2) { /* a dyad: its three joints' letters, the inner one in the middle */
    char l[3] = {'?', '?', '?'};
    int nl = 0, inner = -1;
    for (int j = 0; j < m->njoint; j++) {
      int b1 = m->joint_body[2 * j], b2 = m->joint_body[2 * j + 1];
      int s1 = b1 >= 0 && in_set(g, b1), s2 = b2 >= 0 && in_set(g, b2);
      if (s1 && s2) inner = j;
    }
    for (int k = 0; k < 2; k++)
      for (int j = 0; j < m->njoint; j++) {
        int b1 = m->joint_body[2 * j], b2 = m->joint_body[2 * j + 1];
        if (j == inner) continue;
        int touches = b1 == g->set[k] || b2 == g->set[k];
        int other = b1 == g->set[k] ? b2 : b1;
        if (!touches || !(other == CF_MBS_GROUND || known[other])) continue;
        if (nl < 3) l[nl == 1 ? 2 : 0] = m->joint_type[j] == CF_MBS_PRISMATIC ? 'P' : 'R', nl++;
      }
    if (inner >= 0) l[1] = m->joint_type[inner] == CF_MBS_PRISMATIC ? 'P' : 'R';
    snprintf(out, 32, "dyad %c%c%c", l[0], l[1], l[2]);
    return;
  }
  if (g->nset == 4) snprintf(out, 32, "triad");
  else snprintf(out, 32, "group of %d", g->nset);
}

static int structural_groups(const cfMbsModel* m, cfMbsTopology* t) {
  int nb = m->nbody;
  unsigned char* known = calloc((size_t)nb + 1, 1);
  unsigned char* driven = calloc((size_t)m->njoint + 1, 1);
  if (!known || !driven) {
    free(known), free(driven);
    return CF_ERR_NOMEM;
  }
  for (int k = 0; k < m->ndriver; k++)
    if (m->driver_type[k] != CF_MBS_DRIVE_DISTANCE && m->driver_joint[k] >= 0) driven[m->driver_joint[k]] = 1;
  /* undriven mobility: the ground-jointed tree joints, in tree order, are chosen as inputs */
  int chosen_left = t->mobility - t->ndriver;
  unsigned char* chosen = calloc((size_t)m->njoint + 1, 1);
  if (!chosen) {
    free(known), free(driven);
    return CF_ERR_NOMEM;
  }
  for (int i = 0; i < t->nbody && chosen_left > 0; i++) {
    int b = t->order[i], j = t->parent_joint[b];
    if (j >= 0 && t->parent[b] == CF_MBS_GROUND && !driven[j] && cf_mbs_joint_dofs(m->joint_type[j]) == 1)
      driven[j] = chosen[j] = 1, chosen_left--;
  }
  GroupCtx g = {m, t, known, driven, t->planar ? 3 : 6, {0}, 0, 0, 2000000};
  int nknown = 0, ng = 0, pos = 0;
  for (int b = 0; b < nb; b++)
    if (is_block(m, b)) known[b] = 1, nknown++;
  t->group_ptr[0] = 0;
  while (nknown < nb) {
    g.found = 0;
    for (int size = 1; size <= 6 && !g.found; size++)
      for (int b = 0; b < nb && !g.found; b++) {
        if (known[b]) continue;
        g.set[0] = b, g.nset = 1;
        grow(&g, size);
      }
    if (!g.found) { /* what is left is not resolved group by group */
      for (int b = 0; b < nb; b++)
        if (!known[b]) t->group_body[pos++] = b, known[b] = 1, nknown++;
      snprintf(t->group_kind[ng], 32, "rest");
      t->input_chosen[ng] = 0;
      t->group_ptr[++ng] = pos;
      break;
    }
    group_kind(m, &g, known, t->group_kind[ng]);
    t->input_chosen[ng] = 0;
    for (int i = 0; i < g.nset; i++) {
      int b = g.set[i];
      t->group_body[pos++] = b;
      int j = t->parent_joint[b];
      if (g.nset == 1 && j >= 0 && chosen[j]) t->input_chosen[ng] = 1;
    }
    for (int i = 0; i < g.nset; i++) known[g.set[i]] = 1, nknown++;
    t->group_ptr[++ng] = pos;
  }
  t->ngroup = ng;
  free(known), free(driven), free(chosen);
  return CF_OK;
}

int cf_mbs_topology_create(const cfMbsModel* m, cfMbsTopology** out) {
  *out = NULL;
  int nb = m->nbody, nj = m->njoint;
  cfMbsTopology* t = calloc(1, sizeof *t);
  if (!t) return cf_error(CF_ERR_NOMEM, "topology: out of memory");
  t->nbody = nb, t->njoint = nj;
  size_t B = (size_t)nb + 1, J = (size_t)nj + 1;
  t->order = malloc(B * sizeof(int)), t->parent = malloc(B * sizeof(int)), t->parent_joint = malloc(B * sizeof(int));
  t->depth = calloc(B, sizeof(int)), t->role = malloc(J * sizeof(int)), t->reversed = calloc(J, sizeof(int));
  t->z0 = calloc(B, sizeof(int)), t->nz_body = calloc(B, sizeof(int));
  t->group_ptr = calloc(B + 1, sizeof(int)), t->group_body = calloc(B, sizeof(int));
  t->group_kind = calloc(B, sizeof *t->group_kind), t->input_chosen = calloc(B, sizeof(int));
  int* queue = malloc((B + 1) * sizeof(int));
  unsigned char* in_tree = calloc(B, 1);
  if (!t->order || !t->parent || !t->parent_joint || !t->depth || !t->role || !t->reversed || !t->z0 || !t->nz_body ||
      !t->group_ptr || !t->group_body || !t->group_kind || !t->input_chosen || !queue || !in_tree) {
    free(queue), free(in_tree);
    cf_mbs_topology_free(t);
    return cf_error(CF_ERR_NOMEM, "topology: out of memory");
  }
  for (int j = 0; j < nj; j++) t->role[j] = CF_MBS_ROLE_CUT;
  int nblock = 0;
  for (int b = 0; b < nb; b++) {
    t->parent[b] = CF_MBS_GROUND, t->parent_joint[b] = CF_MBS_FLOATING;
    if (is_block(m, b)) in_tree[b] = 1, t->parent_joint[b] = CF_MBS_NONE, nblock++; /* not in the tree */
  }
  /* from the ground: first without spherical joints, then with them for what is left */
  int tail = 0;
  queue[tail++] = CF_MBS_GROUND;
  bfs(m, t, queue, 0, &tail, 0, in_tree);
  bfs(m, t, queue, 0, &tail, 1, in_tree);
  /* bodies with no path to the ground: a floating joint at the lowest id of each component */
  for (int b = 0; b < nb; b++) {
    if (in_tree[b]) continue;
    in_tree[b] = 1, t->depth[b] = 1, t->nfloating++;
    int head = tail;
    queue[tail++] = b;
    bfs(m, t, queue, head, &tail, 0, in_tree);
    bfs(m, t, queue, head, &tail, 1, in_tree);
  }
  for (int i = 1; i < tail; i++) t->order[i - 1] = queue[i];
  t->nbody = tail - 1; /* the bodies; the blocks of flexible bodies are left out */
  /* relative coordinates in tree order */
  for (int i = 0; i < t->nbody; i++) {
    int b = t->order[i], j = t->parent_joint[b];
    t->z0[b] = t->nz;
    t->nz_body[b] = j == CF_MBS_FLOATING ? 6 : cf_mbs_joint_dofs(m->joint_type[j]);
    t->nz += t->nz_body[b];
  }
  for (int j = 0; j < nj; j++)
    if (t->role[j] == CF_MBS_ROLE_CUT) t->ncut++, t->ncut_eq += m->joint_ncon[j];
  /* Grubler-Kutzbach */
  t->mobility_spatial = 6 * (nb - nblock), t->mobility_planar = 3 * (nb - nblock);
  for (int j = 0; j < nj; j++)
    t->mobility_spatial -= spatial_eqs(m->joint_type[j]), t->mobility_planar -= planar_eqs(m->joint_type[j]);
  t->planar = is_planar(m);
  t->mobility = t->planar ? t->mobility_planar : t->mobility_spatial;
  t->ndriver = m->ndriver;
  free(queue), free(in_tree);
  int st = structural_groups(m, t);
  if (st < 0) {
    cf_mbs_topology_free(t);
    return cf_error(st, "topology: out of memory");
  }
  *out = t;
  return CF_OK;
}
