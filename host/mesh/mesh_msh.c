/* Gmsh .msh reader: format 2.2 ASCII, 4.1 ASCII and 4.1 binary.
 *
 * Only 4-node (type 4) or 10-node (type 11) tetrahedra become elements, not both in one mesh;
 * type 11's nodes 8 and 9 (edges (2,3) and (1,3), gmsh.info "Node ordering") are swapped into
 * cofem's order (cofem/mesh.h: VTK's and Abaqus's). Lower-dimensional elements only carry physical groups,
 * which become node sets (and, for 3-D groups, element sets). The 4.1 readers share one code path:
 * get_int/get_size/get_dbl read either an ASCII token or a binary value. */
#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cofem/mesh.h"
#include "mesh/mesh_internal.h"

typedef struct ElemType {
  int type, nnode, dim;
  const char* name;
} ElemType;

/* Gmsh element types (GmshDefines.h) that we can at least skip. */
static const ElemType kTypes[] = {
    {1, 2, 1, "2-node line"},          {2, 3, 2, "3-node triangle"},
    {3, 4, 2, "4-node quadrangle"},    {4, 4, 3, "4-node tetrahedron"},
    {5, 8, 3, "8-node hexahedron"},    {6, 6, 3, "6-node prism"},
    {7, 5, 3, "5-node pyramid"},       {8, 3, 1, "3-node line"},
    {9, 6, 2, "6-node triangle"},      {10, 9, 2, "9-node quadrangle"},
    {11, 10, 3, "10-node tetrahedron"}, {12, 27, 3, "27-node hexahedron"},
    {13, 18, 3, "18-node prism"},      {14, 14, 3, "14-node pyramid"},
    {15, 1, 0, "point"},               {16, 8, 2, "8-node quadrangle"},
    {17, 20, 3, "20-node hexahedron"}, {18, 15, 3, "15-node prism"},
    {19, 13, 3, "13-node pyramid"},    {20, 9, 2, "9-node triangle"},
    {21, 10, 2, "10-node triangle"},   {22, 12, 2, "12-node triangle"},
    {23, 15, 2, "15-node triangle"},   {24, 15, 2, "15-node triangle"},
    {25, 21, 2, "21-node triangle"},   {26, 4, 1, "4-node line"},
    {27, 5, 1, "5-node line"},         {28, 6, 1, "6-node line"},
    {29, 20, 3, "20-node tetrahedron"}, {30, 35, 3, "35-node tetrahedron"},
    {31, 56, 3, "56-node tetrahedron"}, {92, 64, 3, "64-node hexahedron"},
    {93, 125, 3, "125-node hexahedron"},
};

static const ElemType* find_type(long long t) {
  for (size_t i = 0; i < sizeof kTypes / sizeof kTypes[0]; i++)
    if (kTypes[i].type == t) return &kTypes[i];
  return NULL;
}

typedef struct Group { /* one physical group (dim, tag) */
  int dim, tag;
  int *nodes, nn;
  size_t capn;
  int *elems, ne;
  size_t cape;
} Group;

typedef struct PName {
  int dim, tag;
  char name[CF_NAME_MAX];
} PName;

typedef struct Entity { /* 4.1: a model entity and the physical groups it belongs to */
  int dim, tag, nphys, phys0; /* phys tags are ephys[phys0 .. phys0+nphys) */
} Entity;

typedef struct Reader {
  const char* path;
  char* buf;
  size_t size, pos;
  int line;   /* line at pos */
  int tline;  /* line of the last token */
  const char* tok;
  size_t tlen;
  int version; /* 2 or 4 */
  int binary;
  cfMesh* m;
  size_t capX, capNid, capTet, capEid;
  cfiIdMap nmap, emap;
  int have_nodes;
  /* 2.2: physical and elementary tag of each tet, needed to merge gmsh's duplicates */
  int *tet_phys, *tet_geo;
  size_t capTP, capTG;
  Group* groups;
  int ngroup;
  size_t capG;
  cfiIdMap gmap; /* 4*tag+dim -> group index */
  PName* names;
  int nname;
  size_t capNames;
  Entity* ents;
  int nent;
  size_t capEnt;
  int* ephys;
  size_t nephys, capEphys;
  cfiIdMap entmap; /* 4*tag+dim -> entity index */
  int have_entities;
  int* scratch; /* node indices of the element being read */
  size_t group_entries; /* node and element entries added to groups so far (group_budget) */
  size_t capScratch;
} Reader;

/* ---- errors -------------------------------------------------------------------------------- */

static int rerr(Reader* r, int code, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static int rerr(Reader* r, int code, const char* fmt, ...) {
  char what[640];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  /* binary files have no useful line numbers: name the byte offset instead */
  if (r->binary) cf_error(code, "%s: byte %zu: %s", r->path, r->pos, what);
  else cf_error(code, "%s:%d: %s", r->path, r->tline, what);
  return code; /* visibly non-zero to the callers' "if (st) return st" */
}

static int nomem(Reader* r) {
  cf_error(CF_ERR_NOMEM, "%s: out of memory", r->path);
  return CF_ERR_NOMEM;
}

/* The last token, printable and short, for messages. */
static const char* tokstr(const Reader* r, char* out, size_t n) {
  size_t k = 0;
  for (size_t i = 0; i < r->tlen && k + 4 < n; i++) {
    unsigned char c = (unsigned char)r->tok[i];
    out[k++] = isprint(c) ? (char)c : '?';
  }
  if (k < r->tlen) out[k++] = '.', out[k++] = '.', out[k++] = '.';
  out[k] = '\0';
  return out;
}

/* ---- ASCII tokens -------------------------------------------------------------------------- */

static void skip_ws(Reader* r) {
  while (r->pos < r->size) {
    char c = r->buf[r->pos];
    if (c == '\n') r->line++;
    else if (c != ' ' && c != '\t' && c != '\r' && c != '\v' && c != '\f') break;
    r->pos++;
  }
}

static int next_tok(Reader* r) { /* 0, or -1 at end of file */
  skip_ws(r);
  r->tline = r->line;
  if (r->pos >= r->size) {
    r->tok = r->buf + r->size;
    r->tlen = 0;
    return -1;
  }
  size_t s = r->pos;
  while (r->pos < r->size) {
    char c = r->buf[r->pos];
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f') break;
    r->pos++;
  }
  r->tok = r->buf + s;
  r->tlen = r->pos - s;
  return 0;
}

static int tok_is(const Reader* r, const char* s) {
  return r->tlen == strlen(s) && memcmp(r->tok, s, r->tlen) == 0;
}

static int eof_err(Reader* r, const char* what) {
  return rerr(r, CF_ERR_PARSE, "unexpected end of file while reading %s (file truncated?)", what);
}

static int read_ll(Reader* r, long long lo, long long hi, const char* what, long long* out) {
  char tb[64];
  *out = 0;
  if (next_tok(r)) return eof_err(r, what);
  /* the buffer is NUL-terminated and tokens end at white space, so strtoll stops in time */
  const char* s = r->tok;
  size_t i = 0;
  if (i < r->tlen && (s[i] == '-' || s[i] == '+')) i++;
  if (i == r->tlen || r->tlen > 20) goto bad;
  for (; i < r->tlen; i++)
    if (!isdigit((unsigned char)s[i])) goto bad;
  long long v = strtoll(s, NULL, 10);
  if (v < lo || v > hi)
    return rerr(r, CF_ERR_PARSE, "%s %lld out of range [%lld, %lld]", what, v, lo, hi);
  *out = v;
  return 0;
bad:
  return rerr(r, CF_ERR_PARSE, "expected an integer (%s), found '%s'", what,
              tokstr(r, tb, sizeof tb));
}

static int read_dbl_ascii(Reader* r, const char* what, double* out) {
  char tb[64];
  *out = 0;
  if (next_tok(r)) return eof_err(r, what);
  char* end;
  double v = strtod(r->tok, &end);
  if (end != r->tok + r->tlen || r->tlen == 0)
    return rerr(r, CF_ERR_PARSE, "expected a number (%s), found '%s'", what,
                tokstr(r, tb, sizeof tb));
  *out = v;
  return 0;
}

/* ---- binary values (4.1), or the same value as ASCII ---------------------------------------- */

static int rd_bytes(Reader* r, void* out, size_t n, const char* what) {
  memset(out, 0, n);
  if (r->size - r->pos < n) {
    r->pos = r->size;
    return eof_err(r, what);
  }
  memcpy(out, r->buf + r->pos, n);
  r->pos += n;
  return 0;
}

static int get_int(Reader* r, long long lo, long long hi, const char* what, long long* out) {
  *out = 0;
  if (!r->binary) return read_ll(r, lo, hi, what, out);
  int32_t v = 0;
  if (rd_bytes(r, &v, 4, what)) return CF_ERR_PARSE;
  if (v < lo || v > hi)
    return rerr(r, CF_ERR_PARSE, "%s %d out of range [%lld, %lld]", what, (int)v, lo, hi);
  *out = v;
  return 0;
}

static int get_size(Reader* r, long long hi, const char* what, long long* out) {
  *out = 0;
  if (!r->binary) return read_ll(r, 0, hi, what, out);
  uint64_t v = 0;
  if (rd_bytes(r, &v, 8, what)) return CF_ERR_PARSE;
  if (v > (uint64_t)hi)
    return rerr(r, CF_ERR_PARSE, "%s %llu out of range [0, %lld]", what, (unsigned long long)v,
                hi);
  *out = (long long)v;
  return 0;
}

static int get_dbl(Reader* r, const char* what, double* out) {
  if (!r->binary) return read_dbl_ascii(r, what, out);
  return rd_bytes(r, out, 8, what) ? CF_ERR_PARSE : 0;
}

/* After a section header line, binary data starts on the next line. */
static void skip_to_next_line(Reader* r) {
  while (r->pos < r->size && r->buf[r->pos] != '\n') r->pos++;
  if (r->pos < r->size) {
    r->pos++;
    r->line++;
  }
}

static int expect_end(Reader* r, const char* section, const char* hint) {
  char want[64], tb[64];
  snprintf(want, sizeof want, "$End%s", section);
  if (next_tok(r)) return eof_err(r, want);
  if (!tok_is(r, want))
    return rerr(r, CF_ERR_PARSE, "expected %s, found '%s'%s", want, tokstr(r, tb, sizeof tb),
                hint);
  return 0;
}

static int skip_section(Reader* r, const char* name, size_t nlen) {
  /* look for "$End<name>" at the start of a line; binary sections cannot be tokenised */
  char want[80];
  int w = snprintf(want, sizeof want, "$End%.*s", (int)(nlen < 64 ? nlen : 64), name);
  size_t wl = (size_t)w;
  for (size_t p = r->pos; p + wl <= r->size; p++) {
    if (r->buf[p] == '\n' && !r->binary) r->line++;
    if ((p == 0 || r->buf[p - 1] == '\n') && memcmp(r->buf + p, want, wl) == 0 &&
        (p + wl == r->size || isspace((unsigned char)r->buf[p + wl]))) {
      r->pos = p + wl;
      return 0;
    }
  }
  r->pos = r->size;
  return rerr(r, CF_ERR_PARSE, "section $%.*s is not closed by %s", (int)(nlen < 64 ? nlen : 64),
              name, want);
}

/* ---- groups, entities ---------------------------------------------------------------------- */

static int group_key(Reader* r, int dim, long long tag, int* key) {
  if (tag <= 0 || tag > INT_MAX / 4)
    return rerr(r, CF_ERR_PARSE, "physical tag %lld out of range [1, %d]", tag, INT_MAX / 4);
  *key = (int)(4 * tag + dim);
  return 0;
}

static int get_group(Reader* r, int dim, long long tag, Group** g) {
  int key = 0, st = group_key(r, dim, tag, &key);
  if (st) return st;
  int gi = cfi_idmap_find(&r->gmap, key);
  if (gi < 0) {
    if (cfi_grow((void**)&r->groups, &r->capG, (size_t)r->ngroup + 1, sizeof(Group)))
      return nomem(r);
    gi = r->ngroup++;
    memset(&r->groups[gi], 0, sizeof(Group));
    r->groups[gi].dim = dim;
    r->groups[gi].tag = (int)tag;
    if (cfi_idmap_insert(&r->gmap, key, gi) == -2) return nomem(r);
  }
  *g = &r->groups[gi];
  return 0;
}

/* A file lists each node once per group it belongs to: a few entries per byte at most. A crafted
 * one (an entity naming the same physical group thousands of times, every element adding its nodes
 * to each) would make a small file take gigabytes; refuse it instead. */
static int group_budget(Reader* r, size_t n) {
  const size_t limit = 4 * r->size + 65536;
  r->group_entries += n;
  if (r->group_entries > limit)
    return rerr(r, CF_ERR_PARSE, "physical groups list more than %zu entries in all (4 per byte "
                "of the file): is a physical tag repeated?", limit);
  return 0;
}

static int group_add_nodes(Reader* r, Group* g, const int* nodes, int n) {
  if (group_budget(r, (size_t)n)) return CF_ERR_PARSE;
  if (cfi_grow((void**)&g->nodes, &g->capn, (size_t)g->nn + (size_t)n, sizeof(int)))
    return nomem(r);
  memcpy(g->nodes + g->nn, nodes, (size_t)n * sizeof(int));
  g->nn += n;
  return 0;
}

static int group_add_elem(Reader* r, Group* g, int e) {
  if (group_budget(r, 1)) return CF_ERR_PARSE;
  if (cfi_grow((void**)&g->elems, &g->cape, (size_t)g->ne + 1, sizeof(int))) return nomem(r);
  g->elems[g->ne++] = e;
  return 0;
}

static const Entity* find_entity(Reader* r, int dim, int tag) {
  if (tag <= 0 || tag > INT_MAX / 4) return NULL;
  int i = cfi_idmap_find(&r->entmap, 4 * tag + dim);
  return i < 0 ? NULL : &r->ents[i];
}

/* The entity of a $Nodes/$Elements block; NULL (no groups) when the file has no $Entities. */
static int block_entity(Reader* r, int dim, long long tag, const Entity** ent) {
  *ent = NULL;
  if (!r->have_entities) return 0;
  *ent = find_entity(r, dim, (int)(tag > INT_MAX ? -1 : tag));
  if (!*ent)
    return rerr(r, CF_ERR_PARSE, "block refers to entity %lld of dimension %d, which $Entities "
                "does not list", tag, dim);
  return 0;
}

/* ---- sections ------------------------------------------------------------------------------ */

static int read_physical_names(Reader* r) {
  long long n, dim, tag;
  int st;
  if ((st = read_ll(r, 0, INT_MAX, "number of physical names", &n))) return st;
  for (long long i = 0; i < n; i++) {
    if ((st = read_ll(r, 0, 3, "physical group dimension", &dim))) return st;
    if ((st = read_ll(r, 1, INT_MAX / 4, "physical tag", &tag))) return st;
    skip_ws(r);
    r->tline = r->line;
    if (r->pos >= r->size) return eof_err(r, "physical name");
    if (r->buf[r->pos] != '"')
      return rerr(r, CF_ERR_PARSE, "physical name must be in double quotes (physical group %lld)",
                  tag);
    size_t s = ++r->pos;
    while (r->pos < r->size && r->buf[r->pos] != '"' && r->buf[r->pos] != '\n') r->pos++;
    if (r->pos >= r->size || r->buf[r->pos] != '"')
      return rerr(r, CF_ERR_PARSE, "unterminated physical name (physical group %lld)", tag);
    size_t len = r->pos - s;
    r->pos++;
    if (len == 0 || len >= CF_NAME_MAX)
      return rerr(r, CF_ERR_PARSE, "physical name must have 1 to %d characters (physical group "
                  "%lld)", CF_NAME_MAX - 1, tag);
    if (memchr(r->buf + s, '\0', len)) /* it would cut the name short, even to "" */
      return rerr(r, CF_ERR_PARSE, "NUL byte in the physical name (physical group %lld)", tag);
    if (cfi_grow((void**)&r->names, &r->capNames, (size_t)r->nname + 1, sizeof(PName)))
      return nomem(r);
    PName* p = &r->names[r->nname++];
    p->dim = (int)dim;
    p->tag = (int)tag;
    memcpy(p->name, r->buf + s, len);
    p->name[len] = '\0';
  }
  return expect_end(r, "PhysicalNames", " (wrong number of names?)");
}

static int read_entities(Reader* r) {
  long long cnt[4], v;
  double d;
  int st;
  static const char* what[4] = {"number of points", "number of curves", "number of surfaces",
                                "number of volumes"};
  for (int k = 0; k < 4; k++)
    if ((st = get_size(r, INT_MAX, what[k], &cnt[k]))) return st;
  r->have_entities = 1;
  for (int dim = 0; dim < 4; dim++)
    for (long long i = 0; i < cnt[dim]; i++) {
      long long tag, nphys, nb;
      if ((st = get_int(r, 1, INT_MAX / 4, "entity tag", &tag))) return st;
      for (int k = 0; k < (dim == 0 ? 3 : 6); k++)
        if ((st = get_dbl(r, "entity bounding box", &d))) return st;
      if ((st = get_size(r, 1 << 24, "number of physical tags", &nphys))) return st;
      if ((size_t)nphys > r->size - r->pos) /* before allocating for them */
        return rerr(r, CF_ERR_PARSE, "%lld physical tags do not fit in the rest of the file",
                    nphys);
      if (cfi_grow((void**)&r->ents, &r->capEnt, (size_t)r->nent + 1, sizeof(Entity)) ||
          cfi_grow((void**)&r->ephys, &r->capEphys, r->nephys + (size_t)nphys, sizeof(int)))
        return nomem(r);
      Entity* e = &r->ents[r->nent];
      e->dim = dim;
      e->tag = (int)tag;
      e->nphys = 0;
      e->phys0 = (int)r->nephys;
      for (long long k = 0; k < nphys; k++) {
        if ((st = get_int(r, -(INT_MAX / 4), INT_MAX / 4, "physical tag", &v))) return st;
        if (v == 0) continue;
        r->ephys[r->nephys++] = (int)(v < 0 ? -v : v); /* a sign would only mean orientation */
        e->nphys++;
      }
      int prev = cfi_idmap_insert(&r->entmap, 4 * (int)tag + dim, r->nent);
      if (prev == -2) return nomem(r);
      if (prev >= 0)
        return rerr(r, CF_ERR_PARSE, "entity %lld of dimension %d is listed twice", tag, dim);
      r->nent++;
      if (dim > 0) {
        if ((st = get_size(r, 1 << 24, "number of bounding entities", &nb))) return st;
        for (long long k = 0; k < nb; k++)
          if ((st = get_int(r, INT_MIN + 1, INT_MAX, "bounding entity tag", &v))) return st;
      }
    }
  return expect_end(r, "Entities", " (wrong entity counts?)");
}

static int add_node(Reader* r, long long id) {
  cfMesh* m = r->m;
  if (cfi_grow((void**)&m->node_id, &r->capNid, (size_t)m->nnode + 1, sizeof(int)) ||
      cfi_grow((void**)&m->X, &r->capX, 3 * ((size_t)m->nnode + 1), sizeof(double)))
    return nomem(r);
  int prev = cfi_idmap_insert(&r->nmap, (int)id, m->nnode);
  if (prev == -2) return nomem(r);
  if (prev >= 0) return rerr(r, CF_ERR_MESH, "node %lld is defined twice", id);
  m->node_id[m->nnode++] = (int)id;
  return 0;
}

static int set_coords(Reader* r, int i, long long id) {
  double* x = r->m->X + 3 * (size_t)i;
  int st;
  for (int k = 0; k < 3; k++)
    if ((st = get_dbl(r, "node coordinate", &x[k]))) return st;
  if (!isfinite(x[0]) || !isfinite(x[1]) || !isfinite(x[2]))
    return rerr(r, CF_ERR_MESH, "non-finite coordinates (%g, %g, %g) (node %lld)", x[0], x[1], x[2],
                id);
  return 0;
}

static int read_nodes2(Reader* r) {
  long long n, id;
  int st;
  if ((st = read_ll(r, 0, INT_MAX, "number of nodes", &n))) return st;
  if (cfi_idmap_init(&r->nmap, (size_t)(n < (long long)(r->size / 8) ? n : (long long)(r->size / 8))))
    return nomem(r);
  for (long long i = 0; i < n; i++) {
    if ((st = read_ll(r, 1, INT_MAX, "node id", &id))) return st;
    if ((st = add_node(r, id))) return st;
    if ((st = set_coords(r, r->m->nnode - 1, id))) return st;
  }
  return expect_end(r, "Nodes", " (the node count in the header may be wrong)");
}

static int read_nodes4(Reader* r) {
  long long nb, n, lo, hi, dim, tag, param, nin, id;
  int st;
  if ((st = get_size(r, INT_MAX, "number of node blocks", &nb))) return st;
  if ((st = get_size(r, INT_MAX, "number of nodes", &n))) return st;
  if ((st = get_size(r, LLONG_MAX, "minimum node tag", &lo))) return st;
  if ((st = get_size(r, LLONG_MAX, "maximum node tag", &hi))) return st;
  if (cfi_idmap_init(&r->nmap, (size_t)(n < (long long)(r->size / 8) ? n : (long long)(r->size / 8))))
    return nomem(r);
  long long total = 0;
  for (long long b = 0; b < nb; b++) {
    if ((st = get_int(r, 0, 3, "entity dimension", &dim))) return st;
    if ((st = get_int(r, 1, INT_MAX, "entity tag", &tag))) return st;
    if ((st = get_int(r, 0, 1, "parametric flag", &param))) return st;
    if ((st = get_size(r, INT_MAX, "number of nodes in block", &nin))) return st;
    if (nin > n - total)
      return rerr(r, CF_ERR_PARSE, "node block %lld holds %lld nodes, more than the %lld the "
                  "header announces", b + 1, nin, n);
    const Entity* ent;
    if ((st = block_entity(r, (int)dim, tag, &ent))) return st;
    int first = r->m->nnode;
    for (long long i = 0; i < nin; i++) {
      if ((st = get_size(r, INT_MAX, "node tag", &id))) return st;
      if (id == 0) return rerr(r, CF_ERR_PARSE, "node tag 0 (tags start at 1)");
      if ((st = add_node(r, id))) return st;
    }
    for (long long i = 0; i < nin; i++) {
      if ((st = set_coords(r, first + (int)i, r->m->node_id[first + i]))) return st;
      double u;
      for (int k = 0; k < (param ? dim : 0); k++)
        if ((st = get_dbl(r, "parametric coordinate", &u))) return st;
    }
    total += nin;
    for (int k = 0; ent && k < ent->nphys; k++) {
      Group* g = NULL;
      if ((st = get_group(r, (int)dim, r->ephys[ent->phys0 + k], &g))) return st;
      if ((st = group_budget(r, (size_t)nin))) return st;
      if (cfi_grow((void**)&g->nodes, &g->capn, (size_t)g->nn + (size_t)nin, sizeof(int)))
        return nomem(r);
      for (int i = 0; i < (int)nin; i++) g->nodes[g->nn++] = first + i;
    }
  }
  if (total != n)
    return rerr(r, CF_ERR_PARSE, "the $Nodes header announces %lld nodes but the blocks hold %lld",
                n, total);
  return expect_end(r, "Nodes", " (wrong node count in a block?)");
}

/* One element: id, then its nodes (read after the tags by the caller's format). */
static int element_nodes(Reader* r, long long id, const ElemType* t) {
  long long nt;
  int st;
  if (cfi_grow((void**)&r->scratch, &r->capScratch, (size_t)t->nnode, sizeof(int)))
    return nomem(r);
  for (int a = 0; a < t->nnode; a++) {
    if ((st = get_size(r, INT_MAX, "element node tag", &nt))) return st;
    int i = cfi_idmap_find(&r->nmap, (int)nt);
    if (i < 0)
      return rerr(r, CF_ERR_MESH, "element %lld references node %lld which is not defined", id, nt);
    for (int b = 0; b < a && (t->type == 4 || t->type == 11); b++)
      if (r->scratch[b] == i)
        return rerr(r, CF_ERR_MESH, "element %lld uses node %lld twice", id, nt);
    r->scratch[a] = i;
  }
  return 0;
}

static int check_elem_id(Reader* r, long long id) {
  int prev = cfi_idmap_insert(&r->emap, (int)id, 1);
  if (prev == -2) return nomem(r);
  if (prev >= 0) return rerr(r, CF_ERR_MESH, "element %lld is defined twice", id);
  return 0;
}

static int check_type(Reader* r, long long id, long long type, const ElemType** t) {
  *t = find_type(type);
  if (!*t) return rerr(r, CF_ERR_PARSE, "unknown element type %lld (element %lld)", type, id);
  if ((*t)->dim == 3 && type != 4 && type != 11)
    return rerr(r, CF_ERR_UNSUPPORTED, "element %lld has type %lld (%s); only 4-node (type 4) and "
                "10-node (type 11) tetrahedra are supported", id, type, (*t)->name);
  return 0;
}

/* A tetrahedron (type 4 or 11) from r->scratch; the first one decides the mesh's order */
static int add_tet(Reader* r, long long id, long long type) {
  cfMesh* m = r->m;
  const int np = type == 11 ? 10 : 4;
  if (m->ntet == 0) m->tet_nodes = np;
  if (np != m->tet_nodes)
    return rerr(r, CF_ERR_UNSUPPORTED, "element %lld is a %d-node tetrahedron (type %lld) but element %d is a %d-node "
                "one: a mesh that mixes linear and quadratic tetrahedra is not supported (mesh all volumes "
                "with the same order, e.g. gmsh -order 2)", id, np, type, m->elem_id[0], m->tet_nodes);
  if (cfi_grow((void**)&m->tet, &r->capTet, np * ((size_t)m->ntet + 1), sizeof(int)) ||
      cfi_grow((void**)&m->elem_id, &r->capEid, (size_t)m->ntet + 1, sizeof(int)))
    return nomem(r);
  int* t = m->tet + np * (size_t)m->ntet;
  memcpy(t, r->scratch, np * sizeof(int));
  if (np == 10) { /* gmsh: 8 = edge (2,3), 9 = edge (1,3); cofem: 8 = (1,3), 9 = (2,3) */
    t[8] = r->scratch[9];
    t[9] = r->scratch[8];
  }
  m->elem_id[m->ntet++] = (int)id;
  return 0;
}

static int read_elements2(Reader* r) {
  long long n, id, type, ntags, v;
  int st;
  if (!r->have_nodes) return rerr(r, CF_ERR_PARSE, "$Elements before $Nodes");
  if ((st = read_ll(r, 0, INT_MAX, "number of elements", &n))) return st;
  if (cfi_idmap_init(&r->emap, (size_t)(n < (long long)(r->size / 8) ? n : (long long)(r->size / 8))))
    return nomem(r);
  for (long long e = 0; e < n; e++) {
    const ElemType* t;
    if ((st = read_ll(r, 1, INT_MAX, "element id", &id))) return st;
    if ((st = read_ll(r, 0, INT_MAX, "element type", &type))) return st;
    if ((st = check_type(r, id, type, &t))) return st;
    if ((st = read_ll(r, 0, 64, "number of tags", &ntags))) return st;
    long long phys = 0, geo = 0;
    for (long long k = 0; k < ntags; k++) {
      if ((st = read_ll(r, INT_MIN + 1, INT_MAX, "element tag", &v))) return st;
      if (k == 0) phys = v;
      if (k == 1) geo = v;
    }
    if ((st = check_elem_id(r, id))) return st;
    if ((st = element_nodes(r, id, t))) return st;
    if (phys != 0) {
      Group* g = NULL;
      if ((st = get_group(r, t->dim, phys < 0 ? -phys : phys, &g))) return st;
      if ((st = group_add_nodes(r, g, r->scratch, t->nnode))) return st;
    }
    if (type == 4 || type == 11) {
      if ((st = add_tet(r, id, type))) return st;
      if (cfi_grow((void**)&r->tet_phys, &r->capTP, (size_t)r->m->ntet, sizeof(int)) ||
          cfi_grow((void**)&r->tet_geo, &r->capTG, (size_t)r->m->ntet, sizeof(int)))
        return nomem(r);
      r->tet_phys[r->m->ntet - 1] = (int)(phys < 0 ? -phys : phys);
      r->tet_geo[r->m->ntet - 1] = (int)geo;
    }
  }
  return expect_end(r, "Elements", " (the element count in the header may be wrong)");
}

static int read_elements4(Reader* r) {
  long long nb, n, lo, hi, dim, tag, type, nin, id;
  int st;
  if (!r->have_nodes) return rerr(r, CF_ERR_PARSE, "$Elements before $Nodes");
  if ((st = get_size(r, INT_MAX, "number of element blocks", &nb))) return st;
  if ((st = get_size(r, INT_MAX, "number of elements", &n))) return st;
  if ((st = get_size(r, LLONG_MAX, "minimum element tag", &lo))) return st;
  if ((st = get_size(r, LLONG_MAX, "maximum element tag", &hi))) return st;
  if (cfi_idmap_init(&r->emap, (size_t)(n < (long long)(r->size / 8) ? n : (long long)(r->size / 8))))
    return nomem(r);
  long long total = 0;
  for (long long b = 0; b < nb; b++) {
    if ((st = get_int(r, 0, 3, "entity dimension", &dim))) return st;
    if ((st = get_int(r, 1, INT_MAX, "entity tag", &tag))) return st;
    if ((st = get_int(r, 0, INT_MAX, "element type", &type))) return st;
    if ((st = get_size(r, INT_MAX, "number of elements in block", &nin))) return st;
    if (nin > n - total)
      return rerr(r, CF_ERR_PARSE, "element block %lld holds %lld elements, more than the %lld "
                  "the header announces", b + 1, nin, n);
    const Entity* ent;
    if ((st = block_entity(r, (int)dim, tag, &ent))) return st;
    const int nphys = ent ? ent->nphys : 0, phys0 = ent ? ent->phys0 : 0;
    for (long long i = 0; i < nin; i++) {
      const ElemType* t;
      if ((st = get_size(r, INT_MAX, "element tag", &id))) return st;
      if (id == 0) return rerr(r, CF_ERR_PARSE, "element tag 0 (tags start at 1)");
      if ((st = check_type(r, id, type, &t))) return st;
      if ((st = check_elem_id(r, id))) return st;
      if ((st = element_nodes(r, id, t))) return st;
      const int is_tet = type == 4 || type == 11;
      if (is_tet && (st = add_tet(r, id, type))) return st;
      for (int k = 0; k < nphys; k++) {
        Group* g = NULL;
        if ((st = get_group(r, (int)dim, r->ephys[phys0 + k], &g))) return st;
        if ((st = group_add_nodes(r, g, r->scratch, t->nnode))) return st;
        if (is_tet && dim == 3 && (st = group_add_elem(r, g, r->m->ntet - 1))) return st;
      }
    }
    total += nin;
  }
  if (total != n)
    return rerr(r, CF_ERR_PARSE, "the $Elements header announces %lld elements but the blocks "
                "hold %lld", n, total);
  return expect_end(r, "Elements", " (wrong element count in a block?)");
}

/* ---- 2.2: gmsh writes an element once per physical group it belongs to ---------------------- */

typedef struct TetKey {
  int n[4]; /* sorted nodes */
  int geo, e;
} TetKey;

static int cmp_tetkey(const void* pa, const void* pb) {
  const TetKey *a = pa, *b = pb;
  for (int k = 0; k < 4; k++)
    if (a->n[k] != b->n[k]) return a->n[k] < b->n[k] ? -1 : 1;
  if (a->geo != b->geo) return a->geo < b->geo ? -1 : 1;
  return (a->e > b->e) - (a->e < b->e);
}

static int merge_duplicates2(Reader* r) {
  cfMesh* m = r->m;
  int n3 = 0;
  const int np = cf_mesh_npe(m);
  for (int g = 0; g < r->ngroup; g++) n3 += r->groups[g].dim == 3;
  int* alias = malloc(((size_t)m->ntet + 1) * sizeof(int));
  if (!alias) return nomem(r);
  for (int e = 0; e < m->ntet; e++) alias[e] = e;
  if (n3 > 1) { /* only then can gmsh have repeated a tet */
    TetKey* k = malloc(((size_t)m->ntet + 1) * sizeof(TetKey));
    if (!k) {
      free(alias);
      return nomem(r);
    }
    for (int e = 0; e < m->ntet; e++) {
      memcpy(k[e].n, m->tet + np * (size_t)e, 4 * sizeof(int)); /* corners identify it */
      for (int a = 1; a < 4; a++) /* insertion sort of 4 */
        for (int b = a; b > 0 && k[e].n[b - 1] > k[e].n[b]; b--) {
          int t = k[e].n[b];
          k[e].n[b] = k[e].n[b - 1];
          k[e].n[b - 1] = t;
        }
      k[e].geo = r->tet_geo[e];
      k[e].e = e;
    }
    qsort(k, (size_t)m->ntet, sizeof(TetKey), cmp_tetkey);
    for (int i = 1; i < m->ntet; i++) {
      const TetKey *p = &k[i - 1], *q = &k[i];
      /* a genuine copy: same entity, same nodes in the same order; anything else is left for
       * the boundary check to report as overlapping elements */
      if (memcmp(p->n, q->n, sizeof p->n) == 0 && p->geo == q->geo &&
          memcmp(m->tet + np * (size_t)alias[p->e], m->tet + np * (size_t)q->e, np * sizeof(int)) == 0)
        alias[q->e] = alias[p->e];
    }
    free(k);
  }
  /* compact: kept tets get new indices, aliases follow their original */
  int nkeep = 0;
  int* newidx = malloc(((size_t)m->ntet + 1) * sizeof(int));
  if (!newidx) {
    free(alias);
    return nomem(r);
  }
  for (int e = 0; e < m->ntet; e++) {
    if (alias[e] == e) {
      newidx[e] = nkeep;
      memmove(m->tet + np * (size_t)nkeep, m->tet + np * (size_t)e, np * sizeof(int));
      m->elem_id[nkeep] = m->elem_id[e];
      nkeep++;
    } else {
      newidx[e] = newidx[alias[e]]; /* alias[e] < e, already numbered */
    }
  }
  int st = 0;
  for (int e = 0; e < m->ntet && !st; e++) {
    if (r->tet_phys[e] == 0) continue;
    Group* g = NULL;
    if (!(st = get_group(r, 3, r->tet_phys[e], &g))) st = group_add_elem(r, g, newidx[e]);
  }
  m->ntet = nkeep;
  free(alias);
  free(newidx);
  return st;
}

/* ---- building the sets --------------------------------------------------------------------- */

static int cmp_group(const void* pa, const void* pb) {
  const Group *a = pa, *b = pb;
  if (a->dim != b->dim) return a->dim < b->dim ? -1 : 1;
  return (a->tag > b->tag) - (a->tag < b->tag);
}

static void group_name(const Reader* r, const Group* g, char* out) {
  for (int i = 0; i < r->nname; i++)
    if (r->names[i].dim == g->dim && r->names[i].tag == g->tag) {
      snprintf(out, CF_NAME_MAX, "%s", r->names[i].name);
      return;
    }
  snprintf(out, CF_NAME_MAX, "phys%d", g->tag);
}

static int build_sets(Reader* r) {
  cfMesh* m = r->m;
  if (r->ngroup == 0) return 0;
  qsort(r->groups, (size_t)r->ngroup, sizeof(Group), cmp_group); /* gmap is stale from here */
  m->nsets = calloc((size_t)r->ngroup, sizeof(cfNodeSet));
  m->esets = calloc((size_t)r->ngroup, sizeof(cfElemSet));
  if (!m->nsets || !m->esets) return nomem(r);
  char name[CF_NAME_MAX];
  for (int gi = 0; gi < r->ngroup; gi++) {
    Group* g = &r->groups[gi];
    group_name(r, g, name);
    /* groups of different dimensions may share a name: one node set holds them all */
    if (g->nn > 0) {
      cfNodeSet* s = (cfNodeSet*)cf_mesh_find_nset(m, name);
      if (!s) {
        s = &m->nsets[m->nnset++];
        memcpy(s->name, name, CF_NAME_MAX);
        s->nodes = g->nodes;
        s->count = g->nn;
        g->nodes = NULL;
      } else {
        int* p = realloc(s->nodes, ((size_t)s->count + (size_t)g->nn) * sizeof(int));
        if (!p) return nomem(r);
        memcpy(p + s->count, g->nodes, (size_t)g->nn * sizeof(int));
        s->nodes = p;
        s->count += g->nn;
      }
    }
    if (g->dim == 3 && g->ne > 0) {
      cfElemSet* s = (cfElemSet*)cf_mesh_find_eset(m, name);
      if (!s) {
        s = &m->esets[m->neset++];
        memcpy(s->name, name, CF_NAME_MAX);
        s->elems = g->elems;
        s->count = g->ne;
        g->elems = NULL;
      } else {
        int* p = realloc(s->elems, ((size_t)s->count + (size_t)g->ne) * sizeof(int));
        if (!p) return nomem(r);
        memcpy(p + s->count, g->elems, (size_t)g->ne * sizeof(int));
        s->elems = p;
        s->count += g->ne;
      }
    }
  }
  for (int i = 0; i < m->nnset; i++)
    m->nsets[i].count = cfi_sort_unique(m->nsets[i].nodes, m->nsets[i].count);
  for (int i = 0; i < m->neset; i++)
    m->esets[i].count = cfi_sort_unique(m->esets[i].elems, m->esets[i].count);
  return 0;
}

/* ---- driver -------------------------------------------------------------------------------- */

static int read_header(Reader* r) {
  char tb[64];
  long long ftype, dsize;
  int st;
  if (next_tok(r) || !tok_is(r, "$MeshFormat"))
    return rerr(r, CF_ERR_PARSE, "not a Gmsh mesh: expected $MeshFormat, found '%s'",
                tokstr(r, tb, sizeof tb));
  if (next_tok(r)) return eof_err(r, "the format version");
  if (r->tlen >= 1 && r->tok[0] == '2' && (r->tlen == 1 || r->tok[1] == '.'))
    r->version = 2;
  else if (tok_is(r, "4.1"))
    r->version = 4;
  else
    return rerr(r, CF_ERR_UNSUPPORTED, "unsupported .msh format version '%s' (2.2 and 4.1 are "
                "supported)", tokstr(r, tb, sizeof tb));
  if ((st = read_ll(r, 0, 1, "file type (0 = ASCII, 1 = binary)", &ftype))) return st;
  if ((st = read_ll(r, 0, 64, "data size", &dsize))) return st;
  if (ftype == 1) {
    if (r->version == 2)
      return rerr(r, CF_ERR_UNSUPPORTED, "binary .msh 2.2 is not supported (use 4.1 binary, or "
                  "ASCII)");
    if (dsize != 8)
      return rerr(r, CF_ERR_UNSUPPORTED, "data size %lld: only 8-byte size_t binary files are "
                  "supported", dsize);
    skip_to_next_line(r);
    r->binary = 1;
    int32_t one = 0;
    if (rd_bytes(r, &one, 4, "the endianness marker")) return CF_ERR_PARSE;
    if (one != 1) {
      r->pos -= 4;
      return rerr(r, CF_ERR_PARSE, "bad endianness marker 0x%08x (expected the integer 1%s)",
                  (unsigned)one, one == 0x01000000 ? "; the file has the other byte order" : "");
    }
  }
  return expect_end(r, "MeshFormat", "");
}

static void reader_free(Reader* r) {
  for (int g = 0; g < r->ngroup; g++) {
    free(r->groups[g].nodes);
    free(r->groups[g].elems);
  }
  free(r->groups);
  free(r->names);
  free(r->ents);
  free(r->ephys);
  free(r->scratch);
  free(r->tet_phys);
  free(r->tet_geo);
  cfi_idmap_free(&r->nmap);
  cfi_idmap_free(&r->emap);
  cfi_idmap_free(&r->gmap);
  cfi_idmap_free(&r->entmap);
  free(r->buf);
}

static int read_sections(Reader* r) {
  char tb[64];
  int st, have_elems = 0;
  if (r->size == 0) return cf_error(CF_ERR_PARSE, "%s: the file is empty", r->path);
  if ((st = read_header(r))) return st;
  if (cfi_idmap_init(&r->gmap, 16) || cfi_idmap_init(&r->entmap, 16)) return nomem(r);
  while (!next_tok(r)) {
    if (r->tlen < 2 || r->tok[0] != '$')
      return rerr(r, CF_ERR_PARSE, "expected a section ($Name), found '%s'",
                  tokstr(r, tb, sizeof tb));
    const char* name = r->tok + 1;
    size_t nlen = r->tlen - 1;
    if (r->binary && !tok_is(r, "$PhysicalNames")) skip_to_next_line(r);
    if (tok_is(r, "$PhysicalNames")) {
      st = read_physical_names(r);
    } else if (tok_is(r, "$Entities") && r->version == 4) {
      st = r->have_nodes ? rerr(r, CF_ERR_PARSE, "$Entities after $Nodes")
                         : read_entities(r);
    } else if (tok_is(r, "$PartitionedEntities")) {
      /* blocks would then name partition entities, whose physical groups we do not map */
      return rerr(r, CF_ERR_UNSUPPORTED, "partitioned meshes are not supported (save the mesh "
                  "without partitions)");
    } else if (tok_is(r, "$Nodes")) {
      if (r->have_nodes) return rerr(r, CF_ERR_PARSE, "a second $Nodes section");
      st = r->version == 2 ? read_nodes2(r) : read_nodes4(r);
      r->have_nodes = 1;
    } else if (tok_is(r, "$Elements")) {
      if (have_elems) return rerr(r, CF_ERR_PARSE, "a second $Elements section");
      st = r->version == 2 ? read_elements2(r) : read_elements4(r);
      have_elems = 1;
    } else {
      st = skip_section(r, name, nlen);
    }
    if (st) return st;
  }
  if (!r->have_nodes) return cf_error(CF_ERR_PARSE, "%s: no $Nodes section", r->path);
  if (!have_elems) return cf_error(CF_ERR_PARSE, "%s: no $Elements section", r->path);
  if (r->m->ntet == 0)
    return cf_error(CF_ERR_MESH, "%s: no tetrahedra (element type 4 or 11) in the file", r->path);
  if (r->version == 2 && (st = merge_duplicates2(r))) return st;
  return build_sets(r);
}

int cf_mesh_read_msh(const char* path, cfMesh* mesh) {
  if (!mesh) return cf_error(CF_ERR_ARG, "cf_mesh_read_msh: mesh is NULL");
  memset(mesh, 0, sizeof *mesh);
  if (!path) return cf_error(CF_ERR_ARG, "cf_mesh_read_msh: path is NULL");
  Reader r;
  memset(&r, 0, sizeof r);
  r.path = path;
  r.line = r.tline = 1;
  r.m = mesh;
  int st = cfi_read_file(path, &r.buf, &r.size);
  if (st == CF_OK) st = read_sections(&r);
  reader_free(&r);
  if (st != CF_OK) {
    cf_mesh_free(mesh);
    return st;
  }
  snprintf(mesh->source, sizeof mesh->source, "%s", path);
  return cfi_mesh_finish(mesh);
}
