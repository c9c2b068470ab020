/* Mesh dispatch, validation, boundary extraction, quality figures, and the helpers the readers
 * share (mesh_internal.h). */
#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cofem/mesh.h"
#include "mesh/mesh_internal.h"
#include "util/math3.h"

/* ---- shared helpers ------------------------------------------------------------------------ */

static size_t idmap_slot(int key, size_t mask) {
  /* Fibonacci hashing: consecutive ids spread over the table */
  uint64_t h = (uint64_t)(uint32_t)key * UINT64_C(11400714819323198485);
  return (size_t)(h >> 32) & mask;
}

int cfi_idmap_init(cfiIdMap* m, size_t expected) {
  size_t cap = 16;
  while (cap < 2 * expected + 1) cap *= 2;
  m->keys = malloc(cap * sizeof(int));
  m->vals = malloc(cap * sizeof(int));
  m->mask = cap - 1;
  m->n = 0;
  if (!m->keys || !m->vals) {
    cfi_idmap_free(m);
    return -1;
  }
  memset(m->vals, 0xff, cap * sizeof(int));
  return 0;
}

static int idmap_rehash(cfiIdMap* m) {
  cfiIdMap big;
  if (cfi_idmap_init(&big, 2 * (m->mask + 1))) return -1;
  for (size_t i = 0; i <= m->mask; i++)
    if (m->vals[i] >= 0) cfi_idmap_insert(&big, m->keys[i], m->vals[i]);
  cfi_idmap_free(m);
  *m = big;
  return 0;
}

int cfi_idmap_insert(cfiIdMap* m, int key, int val) {
  if (2 * (m->n + 1) > m->mask + 1 && idmap_rehash(m)) return -2;
  size_t i = idmap_slot(key, m->mask);
  while (m->vals[i] >= 0) {
    if (m->keys[i] == key) return m->vals[i];
    i = (i + 1) & m->mask;
  }
  m->keys[i] = key;
  m->vals[i] = val;
  m->n++;
  return -1;
}

int cfi_idmap_find(const cfiIdMap* m, int key) {
  if (!m->vals) return -1;
  size_t i = idmap_slot(key, m->mask);
  while (m->vals[i] >= 0) {
    if (m->keys[i] == key) return m->vals[i];
    i = (i + 1) & m->mask;
  }
  return -1;
}

void cfi_idmap_free(cfiIdMap* m) {
  free(m->keys);
  free(m->vals);
  memset(m, 0, sizeof *m);
}

int cfi_grow(void** p, size_t* cap, size_t need, size_t elsize) {
  if (need <= *cap) return 0;
  size_t c = *cap ? *cap : 16;
  while (c < need) {
    if (c > SIZE_MAX / 2 / elsize) return -1;
    c *= 2;
  }
  void* q = realloc(*p, c * elsize);
  if (!q) return -1;
  *p = q;
  *cap = c;
  return 0;
}

static int cmp_int(const void* a, const void* b) {
  int x = *(const int*)a, y = *(const int*)b;
  return (x > y) - (x < y);
}

int cfi_sort_unique(int* a, int n) {
  if (n <= 1) return n;
  qsort(a, (size_t)n, sizeof(int), cmp_int);
  int k = 1;
  for (int i = 1; i < n; i++)
    if (a[i] != a[k - 1]) a[k++] = a[i];
  return k;
}

/* regular files only, the allocation bounded by the file's size (host/util/file.c) */
int cfi_read_file(const char* path, char** buf, size_t* size) { return cf_read_regular_file(path, NULL, buf, size); }

int cfi_mesh_finish(cfMesh* mesh) {
  int st = cf_mesh_validate(mesh);
  if (st >= 0) st = cf_mesh_extract_boundary(mesh);
  if (st < 0) cf_mesh_free(mesh);
  return st;
}

int cfi_streq_nocase(const char* a, const char* b) {
  for (; *a && *b; a++, b++)
    if (tolower((unsigned char)*a) != tolower((unsigned char)*b)) return 0;
  return *a == *b;
}

/* ---- public API ---------------------------------------------------------------------------- */

int cf_mesh_read(const char* path, cfMesh* mesh) {
  if (!mesh) return cf_error(CF_ERR_ARG, "cf_mesh_read: mesh is NULL");
  memset(mesh, 0, sizeof *mesh);
  if (!path) return cf_error(CF_ERR_ARG, "cf_mesh_read: path is NULL");
  const char* slash = strrchr(path, '/');
  const char* dot = strrchr(slash ? slash : path, '.');
  if (dot && cfi_streq_nocase(dot, ".msh")) return cf_mesh_read_msh(path, mesh);
  if (dot && cfi_streq_nocase(dot, ".inp")) return cf_mesh_read_inp(path, mesh);
  if (!dot) return cf_error(CF_ERR_ARG, "%s: no file extension (expected .msh or .inp)", path);
  return cf_error(CF_ERR_ARG, "%s: unknown mesh file extension '%s' (expected .msh or .inp)", path,
                  dot);
}

static const char* src_name(const cfMesh* m) { return m->source[0] ? m->source : "mesh"; }
static int nid(const cfMesh* m, int i) { return m->node_id ? m->node_id[i] : i + 1; }
static int eid(const cfMesh* m, int e) { return m->elem_id ? m->elem_id[e] : e + 1; }

double cf_tet_volume(const cfMesh* m, int e) {
  const int* t = m->tet + (size_t)cf_mesh_npe(m) * e;
  const double *a = m->X + 3 * (size_t)t[0], *b = m->X + 3 * (size_t)t[1],
               *c = m->X + 3 * (size_t)t[2], *d = m->X + 3 * (size_t)t[3];
  double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
  double v[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
  double w[3] = {d[0] - a[0], d[1] - a[1], d[2] - a[2]};
  return (u[0] * (v[1] * w[2] - v[2] * w[1]) - u[1] * (v[0] * w[2] - v[2] * w[0]) +
          u[2] * (v[0] * w[1] - v[1] * w[0])) / 6.0;
}

static void bbox(const cfMesh* m, double lo[3], double hi[3]) {
  for (int k = 0; k < 3; k++) {
    lo[k] = DBL_MAX;
    hi[k] = -DBL_MAX;
  }
  for (int i = 0; i < m->nnode; i++)
    for (int k = 0; k < 3; k++) {
      double x = m->X[3 * (size_t)i + k];
      if (x < lo[k]) lo[k] = x;
      if (x > hi[k]) hi[k] = x;
    }
}

int cf_mesh_validate(const cfMesh* m) {
  if (!m) return cf_error(CF_ERR_ARG, "cf_mesh_validate: mesh is NULL");
  const char* src = src_name(m);
  if (m->nnode <= 0 || !m->X) return cf_error(CF_ERR_MESH, "%s: the mesh has no nodes", src);
  if (m->ntet <= 0 || !m->tet)
    return cf_error(CF_ERR_MESH, "%s: the mesh has no tetrahedra", src);
  for (int i = 0; i < m->nnode; i++) {
    const double* x = m->X + 3 * (size_t)i;
    if (!isfinite(x[0]) || !isfinite(x[1]) || !isfinite(x[2]))
      return cf_error(CF_ERR_MESH, "%s: non-finite coordinates (%g, %g, %g) (node %d)", src, x[0],
                      x[1], x[2], nid(m, i));
    /* volumes (a length cubed) and stiffnesses must stay finite: beyond 1e100 they do not */
    if (fabs(x[0]) > CF_MESH_COORD_MAX || fabs(x[1]) > CF_MESH_COORD_MAX || fabs(x[2]) > CF_MESH_COORD_MAX)
      return cf_error(CF_ERR_MESH, "%s: coordinates (%g, %g, %g) of node %d are beyond %g: element volumes and "
                      "stiffnesses would overflow (check the units)", src, x[0], x[1], x[2], nid(m, i),
                      CF_MESH_COORD_MAX);
  }
  if (m->tet_nodes != 0 && m->tet_nodes != 4 && m->tet_nodes != 10)
    return cf_error(CF_ERR_MESH, "%s: %d nodes per element; 4 and 10 (quadratic) tetrahedra are supported", src,
                    m->tet_nodes);
  const int np = cf_mesh_npe(m);
  for (int e = 0; e < m->ntet; e++) {
    const int* t = m->tet + (size_t)np * e;
    for (int a = 0; a < np; a++) {
      if (t[a] < 0 || t[a] >= m->nnode)
        return cf_error(CF_ERR_MESH, "%s: node index %d out of range [0, %d) (element %d)", src,
                        t[a], m->nnode, eid(m, e));
      for (int b = 0; b < a; b++)
        if (t[a] == t[b])
          return cf_error(CF_ERR_MESH, "%s: node %d is used twice (element %d)", src,
                          nid(m, t[a]), eid(m, e));
    }
  }
  /* nodes in no element: no stiffness and no mass; refused here, so that every command sees
   * the mesh alike (before, statics blamed the supports and dynamics ran) */
  {
    unsigned char* used = calloc((size_t)m->nnode, 1);
    if (!used) return cf_error(CF_ERR_NOMEM, "%s: out of memory", src);
    for (size_t k = 0; k < (size_t)np * m->ntet; k++) used[m->tet[k]] = 1;
    int norphan = 0;
    char olist[256];
    size_t olen = 0;
    olist[0] = '\0';
    for (int i = 0; i < m->nnode; i++) {
      if (used[i]) continue;
      if (norphan < 8 && olen < sizeof olist) {
        int w = snprintf(olist + olen, sizeof olist - olen, "%s%d", norphan ? ", " : "", nid(m, i));
        if (w > 0) olen += (size_t)w;
      }
      norphan++;
    }
    free(used);
    if (norphan)
      return cf_error(CF_ERR_MESH, "%s: %d node%s in no tetrahedron (node%s %s%s): an orphan node has neither "
                      "stiffness nor mass; remove %s from the mesh", src, norphan, norphan == 1 ? "" : "s",
                      norphan == 1 ? "" : "s", olist, norphan > 8 ? ", ..." : "", norphan == 1 ? "it" : "them");
  }
  /* Each element against its own size: zero or negative volume (det <= 0: nodes out of order or
   * coincident), or positive but degenerate, V below CF_MESH_FLAT_RATIO of its longest edge
   * cubed (a regular tetrahedron has 0.118): a sliver, or a part flattened by wrong units. A
   * relative test, so that millimetre and metre meshes behave alike and a thin part is not
   * called "zero volume". */
  int nbad = 0, ninv = 0, nflat = 0;
  double worst_ratio = INFINITY;
  char list[640], flist[640];
  size_t len = 0, flen = 0;
  list[0] = flist[0] = '\0';
  for (int e = 0; e < m->ntet; e++) {
    double v = cf_tet_volume(m, e);
    const int* t = m->tet + (size_t)cf_mesh_npe(m) * e;
    double l2 = 0;
    for (int a = 0; a < 4; a++)
      for (int b = 0; b < a; b++) {
        const double *p = m->X + 3 * (size_t)t[a], *q = m->X + 3 * (size_t)t[b];
        double dx = p[0] - q[0], dy = p[1] - q[1], dz = p[2] - q[2];
        l2 = fmax(l2, dx * dx + dy * dy + dz * dz);
      }
    double ratio = v / (l2 * sqrt(l2));
    if (v > 0 && ratio >= CF_MESH_FLAT_RATIO) continue;
    if (v > 0) { /* positive but flat */
      worst_ratio = fmin(worst_ratio, ratio);
      if (nflat < 6 && flen < sizeof flist) {
        int w = snprintf(flist + flen, sizeof flist - flen, "%selement %d (volume %.3g, longest edge %.3g)",
                         nflat ? ", " : "", eid(m, e), v, sqrt(l2));
        if (w > 0) flen += (size_t)w;
      }
      nflat++;
      continue;
    }
    if (v < 0) ninv++;
    if (nbad < 10 && len < sizeof list) {
      int w = snprintf(list + len, sizeof list - len, "%selement %d (volume %.3g)",
                       nbad ? ", " : "", eid(m, e), v);
      if (w > 0) len += (size_t)w;
    }
    nbad++;
  }
  if (nbad)
    return cf_error(CF_ERR_MESH,
                    "%s: %d element%s with zero or negative volume (%d inverted, "
                    "i.e. nodes out of order): %s%s",
                    src, nbad, nbad == 1 ? "" : "s", ninv, list, nbad > 10 ? ", ..." : "");
  if (nflat)
    return cf_error(CF_ERR_MESH,
                    "%s: %d degenerate element%s: positive volume, but below %g of the longest edge cubed "
                    "(down to %.3g; a flat sliver, or a part flattened by wrong units): %s%s",
                    src, nflat, nflat == 1 ? "" : "s", CF_MESH_FLAT_RATIO, worst_ratio, flist,
                    nflat > 6 ? ", ..." : "");
  return CF_OK;
}

/* Local faces of a positively oriented tet, counter-clockwise seen from outside. */
static const int kFace[4][3] = {{0, 2, 1}, {0, 1, 3}, {1, 2, 3}, {0, 3, 2}};

typedef struct FaceRec {
  int b, c; /* the two larger node indices; the smallest is the bucket */
  int f;    /* 4*element + local face */
} FaceRec;

static int cmp_face(const void* pa, const void* pb) {
  const FaceRec *a = pa, *b = pb;
  if (a->b != b->b) return a->b < b->b ? -1 : 1;
  if (a->c != b->c) return a->c < b->c ? -1 : 1;
  return (a->f > b->f) - (a->f < b->f);
}

/* +1 if (p,q,r) is an even permutation of its sorted order, else -1. */
static int face_parity(int p, int q, int r) {
  if (q < p && q < r) return r < p ? 1 : -1;  /* rotate to (q, r, p) */
  if (r < p && r < q) return p < q ? 1 : -1;  /* rotate to (r, p, q) */
  return q < r ? 1 : -1;
}

int cf_mesh_extract_boundary(cfMesh* m) {
  if (!m || (m->ntet > 0 && (!m->tet || m->nnode <= 0)))
    return cf_error(CF_ERR_ARG, "cf_mesh_extract_boundary: empty mesh");
  free(m->tri);
  free(m->tri_tet);
  m->tri = m->tri_tet = NULL;
  m->ntri = 0;
  const char* src = src_name(m);
  size_t nf = 4 * (size_t)m->ntet;
  /* bucket faces by their smallest node (a counting sort), then sort each small bucket:
   * linear in practice, and no hash collisions to worry about with a million tets */
  int* start = calloc((size_t)m->nnode + 1, sizeof(int));
  FaceRec* rec = malloc((nf ? nf : 1) * sizeof(FaceRec));
  if (!start || !rec) {
    free(start);
    free(rec);
    return cf_error(CF_ERR_NOMEM, "%s: out of memory extracting the boundary", src);
  }
  for (int e = 0; e < m->ntet; e++) {
    const int* t = m->tet + (size_t)cf_mesh_npe(m) * e;
    for (int lf = 0; lf < 4; lf++) {
      int p = t[kFace[lf][0]], q = t[kFace[lf][1]], r = t[kFace[lf][2]];
      int a = p < q ? (p < r ? p : r) : (q < r ? q : r);
      if (a < 0 || a >= m->nnode || p >= m->nnode || q >= m->nnode || r >= m->nnode) {
        free(start);
        free(rec);
        return cf_error(CF_ERR_MESH, "%s: node index out of range (element %d)", src, eid(m, e));
      }
      start[a + 1]++;
    }
  }
  for (int i = 0; i < m->nnode; i++) start[i + 1] += start[i];
  int* fill = malloc(((size_t)m->nnode + 1) * sizeof(int));
  if (!fill) {
    free(start);
    free(rec);
    return cf_error(CF_ERR_NOMEM, "%s: out of memory extracting the boundary", src);
  }
  memcpy(fill, start, ((size_t)m->nnode + 1) * sizeof(int));
  for (int e = 0; e < m->ntet; e++) {
    const int* t = m->tet + (size_t)cf_mesh_npe(m) * e;
    for (int lf = 0; lf < 4; lf++) {
      int p = t[kFace[lf][0]], q = t[kFace[lf][1]], r = t[kFace[lf][2]];
      int a, b, c;
      if (p < q && p < r) a = p, b = q < r ? q : r, c = q < r ? r : q;
      else if (q < r) a = q, b = p < r ? p : r, c = p < r ? r : p;
      else a = r, b = p < q ? p : q, c = p < q ? q : p;
      FaceRec* fr = &rec[fill[a]++];
      fr->b = b;
      fr->c = c;
      fr->f = 4 * e + lf;
    }
  }
  free(fill);
  int st = CF_OK;
  size_t nb = 0;
  for (int a = 0; a < m->nnode && st == CF_OK; a++) {
    FaceRec* bucket = rec + start[a];
    int n = start[a + 1] - start[a];
    if (n > 1) qsort(bucket, (size_t)n, sizeof(FaceRec), cmp_face);
    for (int i = 0; i < n;) {
      int j = i + 1;
      while (j < n && bucket[j].b == bucket[i].b && bucket[j].c == bucket[i].c) j++;
      int e0 = bucket[i].f / 4;
      if (j - i == 1) {
        rec[nb++] = bucket[i]; /* nb <= start[a] + i: compaction never overtakes the scan */
      } else if (j - i == 2) {
        /* two positive tets on opposite sides see the shared face with opposite orientation */
        const int *t0 = m->tet + (size_t)cf_mesh_npe(m) * e0, *t1 = m->tet + (size_t)cf_mesh_npe(m) * (bucket[i + 1].f / 4);
        int l0 = bucket[i].f % 4, l1 = bucket[i + 1].f % 4;
        int s0 = face_parity(t0[kFace[l0][0]], t0[kFace[l0][1]], t0[kFace[l0][2]]);
        int s1 = face_parity(t1[kFace[l1][0]], t1[kFace[l1][1]], t1[kFace[l1][2]]);
        if (s0 == s1)
          st = cf_error(CF_ERR_MESH,
                        "%s: elements %d and %d overlap: they lie on the same side of their "
                        "shared face (nodes %d, %d, %d)",
                        src, eid(m, e0), eid(m, bucket[i + 1].f / 4), nid(m, a),
                        nid(m, bucket[i].b), nid(m, bucket[i].c));
      } else {
        st = cf_error(CF_ERR_MESH,
                      "%s: face (nodes %d, %d, %d) is shared by %d elements (elements %d, %d, "
                      "%d...): the mesh is not conforming",
                      src, nid(m, a), nid(m, bucket[i].b), nid(m, bucket[i].c), j - i,
                      eid(m, e0), eid(m, bucket[i + 1].f / 4), eid(m, bucket[i + 2].f / 4));
      }
      if (st != CF_OK) break;
      i = j;
    }
  }
  free(start);
  if (st != CF_OK) {
    free(rec);
    return st;
  }
  m->tri = malloc((nb ? nb : 1) * 3 * sizeof(int));
  m->tri_tet = malloc((nb ? nb : 1) * sizeof(int));
  if (!m->tri || !m->tri_tet) {
    free(rec);
    free(m->tri);
    free(m->tri_tet);
    m->tri = m->tri_tet = NULL;
    return cf_error(CF_ERR_NOMEM, "%s: out of memory extracting the boundary", src);
  }
  for (size_t i = 0; i < nb; i++) {
    int e = rec[i].f / 4, lf = rec[i].f % 4;
    const int* t = m->tet + (size_t)cf_mesh_npe(m) * e;
    for (int k = 0; k < 3; k++) m->tri[3 * i + k] = t[kFace[lf][k]];
    m->tri_tet[i] = e;
  }
  m->ntri = (int)nb;
  free(rec);
  return CF_OK;
}

int cf_mesh_quality(const cfMesh* m, cfMeshQuality* q) {
  if (!m || !q) return cf_error(CF_ERR_ARG, "cf_mesh_quality: NULL argument");
  memset(q, 0, sizeof *q);
  if (m->nnode <= 0 || m->ntet <= 0 || !m->X || !m->tet)
    return cf_error(CF_ERR_ARG, "%s: cf_mesh_quality: empty mesh", src_name(m));
  bbox(m, q->bbox_min, q->bbox_max);
  q->min_elem_volume = DBL_MAX;
  q->max_elem_volume = -DBL_MAX;
  q->min_dihedral_deg = 180;
  q->max_dihedral_deg = 0;
  q->max_aspect_ratio = 0;
  /* the edge (i,j) of a tet is shared by the faces opposite the other two nodes k,l */
  static const int kEdge[6][4] = {{0, 1, 2, 3}, {0, 2, 1, 3}, {0, 3, 1, 2},
                                  {1, 2, 0, 3}, {1, 3, 0, 2}, {2, 3, 0, 1}};
  const double rad2deg = 180.0 / acos(-1.0);
  for (int e = 0; e < m->ntet; e++) {
    const int* t = m->tet + (size_t)cf_mesh_npe(m) * e;
    const double* x[4];
    for (int a = 0; a < 4; a++) x[a] = m->X + 3 * (size_t)t[a];
    double v = cf_tet_volume(m, e);
    q->volume += v;
    if (v < q->min_elem_volume) q->min_elem_volume = v;
    if (v > q->max_elem_volume) q->max_elem_volume = v;
    /* outward area vectors of the faces opposite each node */
    double n[4][3], area = 0, lmax = 0;
    for (int a = 0; a < 4; a++) {
      int lf = a == 0 ? 2 : a == 1 ? 3 : a == 2 ? 1 : 0; /* kFace[lf] omits node a */
      double u[3], w[3];
      cf_sub3(x[kFace[lf][1]], x[kFace[lf][0]], u);
      cf_sub3(x[kFace[lf][2]], x[kFace[lf][0]], w);
      cf_cross3(u, w, n[a]);
      area += 0.5 * sqrt(cf_dot3(n[a], n[a]));
    }
    for (int k = 0; k < 6; k++) {
      double d[3];
      cf_sub3(x[kEdge[k][1]], x[kEdge[k][0]], d);
      double l = sqrt(cf_dot3(d, d));
      if (l > lmax) lmax = l;
      const double *na = n[kEdge[k][2]], *nb = n[kEdge[k][3]];
      double den = sqrt(cf_dot3(na, na) * cf_dot3(nb, nb));
      double cosang = den > 0 ? -cf_dot3(na, nb) / den : 1.0; /* interior angle = pi - angle(n) */
      if (cosang > 1) cosang = 1;
      if (cosang < -1) cosang = -1;
      double ang = acos(cosang) * rad2deg;
      if (ang < q->min_dihedral_deg) q->min_dihedral_deg = ang;
      if (ang > q->max_dihedral_deg) q->max_dihedral_deg = ang;
    }
    double inr = area > 0 ? 3.0 * fabs(v) / area : 0;
    double ar = inr > 0 ? lmax / (2.0 * sqrt(6.0) * inr) : INFINITY;
    if (ar > q->max_aspect_ratio) q->max_aspect_ratio = ar;
  }
  return CF_OK;
}

/* ---- cf_mesh_quadratic ------------------------------------------------------------------------ */
typedef struct EdgeRec {
  int lo, hi; /* corner nodes, lo < hi */
  int slot;   /* 6 * element + local edge */
} EdgeRec;

static int cmp_edge(const void* pa, const void* pb) {
  const EdgeRec *a = pa, *b = pb;
  if (a->lo != b->lo) return a->lo < b->lo ? -1 : 1;
  if (a->hi != b->hi) return a->hi < b->hi ? -1 : 1;
  return (a->slot > b->slot) - (a->slot < b->slot);
}

static int slot_cmp(const void* pa, const void* pb) {
  const int a = ((const int*)pa)[0], b = ((const int*)pb)[0];
  return (a > b) - (a < b);
}

int cf_mesh_quadratic(const cfMesh* lin, cfMesh* out) {
  if (!lin || !out) return cf_error(CF_ERR_ARG, "cf_mesh_quadratic: NULL argument");
  memset(out, 0, sizeof *out);
  if (cf_mesh_npe(lin) != 4) return cf_error(CF_ERR_ARG, "%s: cf_mesh_quadratic: the mesh is quadratic already", src_name(lin));
  /* local edges in cofem's order (cofem/mesh.h): (0,1) (1,2) (2,0) (0,3) (1,3) (2,3) */
  static const int kE[6][2] = {{0, 1}, {1, 2}, {2, 0}, {0, 3}, {1, 3}, {2, 3}};
  const size_t ne = (size_t)lin->ntet, nrec = 6 * ne;
  EdgeRec* rec = malloc((nrec ? nrec : 1) * sizeof *rec);
  int* edge_node = malloc((nrec ? nrec : 1) * sizeof(int));
  int(*first)[2] = malloc((nrec ? nrec : 1) * sizeof *first); /* (first slot, edge index) */
  int st = CF_OK;
  if (!rec || !edge_node || !first) { st = cf_error(CF_ERR_NOMEM, "cf_mesh_quadratic: out of memory"); goto done; }
  for (size_t e = 0; e < ne; e++)
    for (int k = 0; k < 6; k++) {
      int a = lin->tet[4 * e + kE[k][0]], b = lin->tet[4 * e + kE[k][1]];
      rec[6 * e + k] = (EdgeRec){a < b ? a : b, a < b ? b : a, (int)(6 * e + k)};
    }
  qsort(rec, nrec, sizeof *rec, cmp_edge);
  /* unique edges, then numbered in the order of their first slot (element order) */
  size_t nedge = 0;
  for (size_t i = 0; i < nrec; i++) {
    if (i == 0 || rec[i].lo != rec[i - 1].lo || rec[i].hi != rec[i - 1].hi) first[nedge][0] = rec[i].slot, first[nedge][1] = (int)nedge, nedge++;
    edge_node[rec[i].slot] = (int)nedge - 1;
  }
  qsort(first, nedge, sizeof *first, slot_cmp);
  int* number = malloc((nedge ? nedge : 1) * sizeof(int));
  int* ends = malloc((nedge ? nedge : 1) * 2 * sizeof(int));
  if (!number || !ends) { free(number); free(ends); st = cf_error(CF_ERR_NOMEM, "cf_mesh_quadratic: out of memory"); goto done; }
  for (size_t i = 0; i < nedge; i++) number[first[i][1]] = lin->nnode + (int)i;
  out->nnode = lin->nnode + (int)nedge;
  out->ntet = lin->ntet;
  out->tet_nodes = 10;
  out->X = malloc(3 * (size_t)out->nnode * sizeof(double));
  out->tet = malloc(10 * ne * sizeof(int));
  out->node_id = malloc((size_t)out->nnode * sizeof(int));
  out->elem_id = malloc((ne ? ne : 1) * sizeof(int));
  if (!out->X || !out->tet || !out->node_id || !out->elem_id) { free(number); free(ends); st = cf_error(CF_ERR_NOMEM, "cf_mesh_quadratic: out of memory"); goto done; }
  memcpy(out->X, lin->X, 3 * (size_t)lin->nnode * sizeof(double));
  int maxid = 0;
  for (int i = 0; i < lin->nnode; i++) {
    out->node_id[i] = nid(lin, i);
    if (out->node_id[i] > maxid) maxid = out->node_id[i];
  }
  for (int i = lin->nnode; i < out->nnode; i++) out->node_id[i] = maxid + 1 + (i - lin->nnode);
  for (size_t e = 0; e < ne; e++) {
    out->elem_id[e] = eid(lin, (int)e);
    for (int a = 0; a < 4; a++) out->tet[10 * e + a] = lin->tet[4 * e + a];
    for (int k = 0; k < 6; k++) {
      const int a = lin->tet[4 * e + kE[k][0]], b = lin->tet[4 * e + kE[k][1]];
      const int n = number[edge_node[6 * e + k]];
      out->tet[10 * e + 4 + k] = n;
      ends[2 * (n - lin->nnode)] = a;
      ends[2 * (n - lin->nnode) + 1] = b;
      for (int i = 0; i < 3; i++) out->X[3 * (size_t)n + i] = 0.5 * (lin->X[3 * (size_t)a + i] + lin->X[3 * (size_t)b + i]);
    }
  }
  free(number);
  /* node sets: the corners', plus the edge nodes whose both corners are in the set */
  unsigned char* in = calloc((size_t)lin->nnode, 1);
  out->nsets = calloc((size_t)(lin->nnset ? lin->nnset : 1), sizeof(cfNodeSet));
  out->esets = calloc((size_t)(lin->neset ? lin->neset : 1), sizeof(cfElemSet));
  if (!in || !out->nsets || !out->esets) { free(in); free(ends); st = cf_error(CF_ERR_NOMEM, "cf_mesh_quadratic: out of memory"); goto done; }
  for (int s = 0; s < lin->nnset && st == CF_OK; s++) {
    const cfNodeSet* ls = &lin->nsets[s];
    cfNodeSet* qs = &out->nsets[out->nnset++];
    snprintf(qs->name, sizeof qs->name, "%s", ls->name);
    for (int j = 0; j < ls->count; j++) in[ls->nodes[j]] = 1;
    int cnt = ls->count;
    for (size_t i = 0; i < nedge; i++) cnt += in[ends[2 * i]] && in[ends[2 * i + 1]];
    qs->nodes = malloc((size_t)(cnt ? cnt : 1) * sizeof(int));
    if (!qs->nodes) st = cf_error(CF_ERR_NOMEM, "cf_mesh_quadratic: out of memory");
    else {
      memcpy(qs->nodes, ls->nodes, (size_t)ls->count * sizeof(int));
      qs->count = ls->count;
      for (size_t i = 0; i < nedge; i++)
        if (in[ends[2 * i]] && in[ends[2 * i + 1]]) qs->nodes[qs->count++] = lin->nnode + (int)i; /* ascending */
    }
    for (int j = 0; j < ls->count; j++) in[ls->nodes[j]] = 0;
  }
  free(in);
  free(ends);
  for (int s = 0; s < lin->neset && st == CF_OK; s++) {
    cfElemSet* qs = &out->esets[out->neset++];
    snprintf(qs->name, sizeof qs->name, "%s", lin->esets[s].name);
    qs->elems = malloc((size_t)(lin->esets[s].count ? lin->esets[s].count : 1) * sizeof(int));
    if (!qs->elems) st = cf_error(CF_ERR_NOMEM, "cf_mesh_quadratic: out of memory");
    else memcpy(qs->elems, lin->esets[s].elems, (size_t)lin->esets[s].count * sizeof(int)), qs->count = lin->esets[s].count;
  }
  snprintf(out->source, sizeof out->source, "%s (quadratic)", src_name(lin));
  if (st == CF_OK) st = cf_mesh_validate(out);
  if (st == CF_OK) st = cf_mesh_extract_boundary(out);
done:
  free(rec);
  free(edge_node);
  free(first);
  if (st != CF_OK) cf_mesh_free(out);
  return st;
}

const cfNodeSet* cf_mesh_find_nset(const cfMesh* m, const char* name) {
  if (!m || !name) return NULL;
  for (int i = 0; i < m->nnset; i++)
    if (strcmp(m->nsets[i].name, name) == 0) return &m->nsets[i];
  return NULL;
}

const cfElemSet* cf_mesh_find_eset(const cfMesh* m, const char* name) {
  if (!m || !name) return NULL;
  for (int i = 0; i < m->neset; i++)
    if (strcmp(m->esets[i].name, name) == 0) return &m->esets[i];
  return NULL;
}

void cf_mesh_free(cfMesh* m) {
  if (!m) return;
  free(m->X);
  free(m->node_id);
  free(m->tet);
  free(m->elem_id);
  if (m->nsets)
    for (int i = 0; i < m->nnset; i++) free(m->nsets[i].nodes);
  free(m->nsets);
  if (m->esets)
    for (int i = 0; i < m->neset; i++) free(m->esets[i].elems);
  free(m->esets);
  free(m->tri);
  free(m->tri_tet);
  memset(m, 0, sizeof *m);
}
