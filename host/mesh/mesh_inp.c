/* Abaqus/CalculiX .inp reader (the mesh part: *NODE, *ELEMENT TYPE=C3D4 or C3D10 (one order per
 * mesh; C3D10's node order is cofem's, cofem/mesh.h, and its 11 fields on one line), *NSET, *ELSET,
 * *INCLUDE) and writer. Node references are resolved after the whole file is read, since Abaqus
 * does not require *NODE to come before *ELEMENT; set references inside *NSET and *ELSET data
 * lines must name a set defined earlier, as in Abaqus.
 * Surface and line elements (gmsh's .inp export writes its physical surfaces and curves as CPS3,
 * S3, T3D2, ... elements) are read and skipped: the mesh's note says how many; an element set
 * made of them becomes a node set of their nodes (the set's name), as a support or a load needs.
 * *INCLUDE, INPUT=FILE reads FILE (relative to the including file) in place, to a depth of
 * INP_MAX_DEPTH; a file that includes itself, directly or not, is an error naming the chain. */
#define _XOPEN_SOURCE 700 /* realpath */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cofem/mesh.h"
#include "mesh/mesh_internal.h"

enum { KW_NONE, KW_SKIP, KW_NODE, KW_ELEMENT, KW_NSET, KW_ELSET, KW_SKIPELEM };
enum { SET_NODE = 0, SET_ELEM = 1 };
enum { MAX_GENERATE = 10000000 }; /* ids per GENERATE line: 80 MB at most */
enum { INP_MAX_DEPTH = 8, INP_MAX_INCLUDES = 1000, INP_PATH = 4096 };

/* Element types that are not solids: read (their node count) and skipped. */
static const struct { const char* name; int nnode; } kSkipTypes[] = {
    {"CPS3", 3}, {"CPS4", 4}, {"CPS4R", 4}, {"CPS6", 6}, {"CPS8", 8}, {"CPS8R", 8}, {"CPE3", 3}, {"CPE4", 4},
    {"CPE4R", 4}, {"CPE6", 6}, {"CPE8", 8}, {"CPE8R", 8}, {"CAX3", 3}, {"CAX4", 4}, {"CAX6", 6}, {"CAX8", 8},
    {"S3", 3}, {"S3R", 3}, {"S4", 4}, {"S4R", 4}, {"S6", 6}, {"S8", 8}, {"S8R", 8}, {"STRI3", 3}, {"STRI65", 6},
    {"M3D3", 3}, {"M3D4", 4}, {"M3D4R", 4}, {"M3D6", 6}, {"M3D8", 8}, {"SFM3D3", 3}, {"SFM3D4", 4},
    {"R3D3", 3}, {"R3D4", 4}, {"T2D2", 2}, {"T2D3", 3}, {"T3D2", 2}, {"T3D3", 3}, {"B21", 2}, {"B22", 3},
    {"B31", 2}, {"B31R", 2}, {"B32", 3}, {"B32R", 3}, {"MASS", 1}};

/* a file being read; the top one and each *INCLUDE */
typedef struct InpFile {
  char path[INP_PATH];
  char* buf;
  size_t size, pos;
  int line;     /* line of the next physical line */
  int fidx;     /* its index in Inp.fpath */
  int resume;   /* (an includer) the real line to go on with after the include */
  int at_real;  /* (an included file) the *INCLUDE's line in its includer */
} InpFile;

typedef struct InpSet {
  char name[CF_NAME_MAX];
  int kind;
  int *ids, *lines; /* file ids and the line each came from, resolved at the end */
  int n;
  size_t cap, capl;
} InpSet;

typedef struct Inp {
  const char* path;
  char* buf;
  size_t size, pos;
  int line; /* line of the next physical line */
  char* ll; /* current logical line, continuations joined, NUL-terminated */
  size_t llcap, lllen;
  int llline;
  char** field; /* comma-separated fields of ll, trimmed; set lists continued with trailing */
  int nfield;   /* commas can make this long */
  size_t capField;
  cfMesh* m;
  size_t capX, capNid;
  int* nline;
  size_t capNline;
  cfiIdMap nmap, emap;
  int *eraw, *eline; /* 4 file node ids per element, line of each element */
  size_t capEraw, capEline, capEid;
  InpSet* sets;
  int nset;
  size_t capSets;
  size_t set_entries; /* ids added to sets so far (set_add's budget) */
  size_t total_size;  /* bytes of every file read (set_add's budget) */
  InpFile stack[INP_MAX_DEPTH + 1]; /* [0] the top file; the files being included below it */
  int depth, nincludes;
  /* Lines are counted across files ("virtual" lines: what the arrays store and messages take);
   * a segment starts at each switch of file: virtual line vstart is line real of file */
  char** fpath;       /* [nfpath] every file read, for messages */
  int nfpath;
  size_t capFpath;
  struct { int vstart, file, real; } *seg;
  int nseg;
  size_t capSeg;
  cfiIdMap smap;      /* skipped (surface, line) elements: id -> index into sraw */
  int *sraw, *snn, *sline; /* their nodes (8 slots each), node counts, lines */
  size_t capSraw, capSnn, capSline;
  int nskip;
  int skip_count[sizeof kSkipTypes / sizeof kSkipTypes[0]];
} Inp;

static int ierr(Inp* r, int code, int line, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/* file and line of a virtual line */
static const char* where(const Inp* r, int vline, int* real) {
  int k = r->nseg - 1;
  while (k > 0 && r->seg[k].vstart > vline) k--;
  if (k < 0) {
    *real = vline;
    return r->path;
  }
  *real = r->seg[k].real + (vline - r->seg[k].vstart);
  return r->fpath[r->seg[k].file];
}

/* "line 4" when vline is in the file of the current line, else "other.inp:4" */
static const char* line_ref(const Inp* r, int vline, char* buf, size_t n) {
  int real, cur;
  const char* file = where(r, vline, &real);
  if (file == where(r, r->llline, &cur)) snprintf(buf, n, "line %d", real);
  else snprintf(buf, n, "%s:%d", file, real);
  return buf;
}

static int ierr(Inp* r, int code, int line, const char* fmt, ...) {
  char what[640];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  int real;
  const char* file = where(r, line, &real);
  cf_error(code, "%s:%d: %s", file, real, what);
  return code;
}

static int nomem(Inp* r) {
  cf_error(CF_ERR_NOMEM, "%s: out of memory", r->path);
  return CF_ERR_NOMEM;
}

/* A field, printable and short, for messages. */
static const char* fstr(const char* s, char* out, size_t n) {
  size_t k = 0, len = strlen(s);
  for (size_t i = 0; i < len && k + 4 < n; i++)
    out[k++] = isprint((unsigned char)s[i]) ? s[i] : '?';
  if (k < len) out[k++] = '.', out[k++] = '.', out[k++] = '.';
  out[k] = '\0';
  return out;
}

static char* trim(char* s);

/* ---- files (*INCLUDE) ------------------------------------------------------------------------ */

static int add_file(Inp* r, const char* path) {
  if (cfi_grow((void**)&r->fpath, &r->capFpath, (size_t)r->nfpath + 1, sizeof(char*))) return -1;
  if (!(r->fpath[r->nfpath] = strdup(path))) return -1;
  return r->nfpath++;
}

/* from the next virtual line on, file's line real */
static int add_seg(Inp* r, int file, int real) {
  if (cfi_grow((void**)&r->seg, &r->capSeg, (size_t)r->nseg + 1, sizeof *r->seg)) return -1;
  r->seg[r->nseg].vstart = r->line, r->seg[r->nseg].file = file, r->seg[r->nseg].real = real;
  r->nseg++;
  return 0;
}

static int pop_file(Inp* r) {
  free(r->buf);
  r->stack[r->depth].buf = NULL;
  r->depth--;
  InpFile* f = &r->stack[r->depth];
  r->buf = f->buf, r->size = f->size, r->pos = f->pos, r->path = f->path;
  return add_seg(r, f->fidx, f->resume);
}

/* *INCLUDE, INPUT=rel at virtual line at: read the file in place of the line */
static int push_file(Inp* r, const char* rel, int at) {
  char tb[80];
  if (r->depth >= INP_MAX_DEPTH)
    return ierr(r, CF_ERR_PARSE, at, "*INCLUDE, INPUT=%s: files included more than %d deep", fstr(rel, tb, sizeof tb),
                INP_MAX_DEPTH);
  if (++r->nincludes > INP_MAX_INCLUDES)
    return ierr(r, CF_ERR_PARSE, at, "more than %d *INCLUDE lines in all", INP_MAX_INCLUDES);
  InpFile* cur = &r->stack[r->depth];
  char path[INP_PATH];
  const char* slash = strrchr(cur->path, '/');
  if (rel[0] == '/' || !slash) snprintf(path, sizeof path, "%s", rel);
  else snprintf(path, sizeof path, "%.*s/%s", (int)(slash - cur->path), cur->path, rel);
  int at_real;
  where(r, at, &at_real);
  /* a cycle: the file is one of those being read */
  char rnew[INP_PATH], rk[INP_PATH];
  if (realpath(path, rnew))
    for (int k = 0; k <= r->depth; k++)
      if (realpath(r->stack[k].path, rk) && !strcmp(rk, rnew)) {
        char chain[1200];
        size_t n = 0;
        for (int j = k; j <= r->depth && n < sizeof chain; j++) {
          int w = snprintf(chain + n, sizeof chain - n, "%s:%d includes ", r->stack[j].path,
                           j < r->depth ? r->stack[j + 1].at_real : at_real);
          if (w > 0) n += (size_t)w;
        }
        if (n < sizeof chain) snprintf(chain + n, sizeof chain - n, "%s", path);
        return ierr(r, CF_ERR_PARSE, at, "*INCLUDE cycle: %s", chain);
      }
  char* buf;
  size_t size;
  int st = cfi_read_file(path, &buf, &size);
  if (st < 0) {
    char msg[700];
    snprintf(msg, sizeof msg, "%s", cf_last_error());
    return ierr(r, st, at, "*INCLUDE, INPUT=%s: %s", fstr(rel, tb, sizeof tb), msg);
  }
  int fidx = add_file(r, path);
  if (fidx < 0) {
    free(buf);
    return nomem(r);
  }
  cur->buf = r->buf, cur->size = r->size, cur->pos = r->pos;
  where(r, r->line, &cur->resume);
  InpFile* f = &r->stack[++r->depth];
  snprintf(f->path, sizeof f->path, "%s", path);
  f->buf = buf, f->size = size, f->pos = 0, f->fidx = fidx, f->at_real = at_real;
  r->buf = buf, r->size = size, r->pos = 0, r->path = f->path;
  r->total_size += size;
  return add_seg(r, fidx, 1) ? nomem(r) : 0;
}

/* "*INCLUDE, INPUT=FILE" (any case, blanks allowed): FILE, else NULL */
static const char* include_input(Inp* r) {
  char* k = r->field[0];
  char kw[16];
  size_t o = 0;
  for (size_t i = 0; k[i] && o < sizeof kw - 1; i++)
    if (!isspace((unsigned char)k[i])) kw[o++] = (char)toupper((unsigned char)k[i]);
  kw[o] = '\0';
  if (strcmp(kw, "*INCLUDE")) return NULL;
  for (int i = 1; i < r->nfield; i++) {
    char* f = r->field[i];
    if (toupper((unsigned char)f[0]) != 'I' || toupper((unsigned char)f[1]) != 'N' || toupper((unsigned char)f[2]) != 'P' ||
        toupper((unsigned char)f[3]) != 'U' || toupper((unsigned char)f[4]) != 'T')
      continue;
    char* v = f + 5;
    while (*v == ' ' || *v == '\t') v++;
    if (*v != '=') continue;
    v = trim(v + 1);
    size_t n = strlen(v);
    if (n >= 2 && v[0] == '"' && v[n - 1] == '"') v[n - 1] = '\0', v++;
    return v;
  }
  return "";
}

/* ---- lines --------------------------------------------------------------------------------- */

/* Next physical line with its surrounding white space trimmed; -1 at end of file. */
static int pop_file(Inp* r);
/* (pop: at the end of an included file go on in its includer; not while looking ahead for a
 * continuation line, which does not cross files) */
static int phys_line_at(Inp* r, const char** s, size_t* len, int* line, int* has_nul, int pop) {
  while (pop && r->pos >= r->size && r->depth > 0)
    if (pop_file(r)) return -2;
  if (r->pos >= r->size) return -1;
  size_t b = r->pos, e = b;
  *has_nul = 0;
  while (e < r->size && r->buf[e] != '\n') {
    if (r->buf[e] == '\0') *has_nul = 1;
    e++;
  }
  r->pos = e < r->size ? e + 1 : e;
  *line = r->line++;
  while (b < e && isspace((unsigned char)r->buf[b])) b++;
  while (e > b && isspace((unsigned char)r->buf[e - 1])) e--;
  *s = r->buf + b;
  *len = e - b;
  return 0;
}
static int phys_line(Inp* r, const char** s, size_t* len, int* line, int* has_nul) {
  return phys_line_at(r, s, len, line, has_nul, 1);
}

static int is_comment(const char* s, size_t len) { return len >= 2 && s[0] == '*' && s[1] == '*'; }

static int ll_append(Inp* r, const char* s, size_t len) {
  if (cfi_grow((void**)&r->ll, &r->llcap, r->lllen + len + 1, 1)) return nomem(r);
  memcpy(r->ll + r->lllen, s, len);
  r->lllen += len;
  r->ll[r->lllen] = '\0';
  return 0;
}

/* Next logical line (blank and ** lines skipped, a trailing comma continues onto the next line
 * unless that one starts a keyword). 0, 1 at end of file, or an error. */
static int next_logical(Inp* r) {
  const char* s;
  size_t len;
  int line, nul, st;
  for (;;) {
    int pl = phys_line(r, &s, &len, &line, &nul);
    if (pl == -2) return nomem(r);
    if (pl) return 1;
    if (nul) return ierr(r, CF_ERR_PARSE, line, "NUL byte in a text line (binary file?)");
    if (len > 0 && !is_comment(s, len)) break;
  }
  r->lllen = 0;
  r->llline = line;
  if ((st = ll_append(r, s, len))) return st;
  while (r->lllen > 0 && r->ll[r->lllen - 1] == ',') {
    size_t save_pos = r->pos;
    int save_line = r->line;
    for (;;) {
      if (phys_line_at(r, &s, &len, &line, &nul, 0)) {
        len = 0;
        s = NULL;
        break;
      }
      if (nul) return ierr(r, CF_ERR_PARSE, line, "NUL byte in a text line (binary file?)");
      if (len > 0 && !is_comment(s, len)) break;
    }
    if (!s || s[0] == '*') { /* nothing to continue with: the comma ends the line */
      r->pos = save_pos;
      r->line = save_line;
      break;
    }
    if ((st = ll_append(r, s, len))) return st;
  }
  return 0;
}

static char* trim(char* s) {
  while (isspace((unsigned char)*s)) s++;
  size_t n = strlen(s);
  while (n > 0 && isspace((unsigned char)s[n - 1])) s[--n] = '\0';
  return s;
}

/* Split the logical line at commas; a trailing empty field (the line ended with a comma) is
 * dropped. */
static int split_fields(Inp* r) {
  r->nfield = 0;
  char* p = r->ll;
  for (;;) {
    char* c = strchr(p, ',');
    if (c) *c = '\0';
    if (cfi_grow((void**)&r->field, &r->capField, (size_t)r->nfield + 1, sizeof(char*)))
      return nomem(r);
    r->field[r->nfield++] = trim(p);
    if (!c) break;
    p = c + 1;
  }
  if (r->nfield > 1 && r->field[r->nfield - 1][0] == '\0') r->nfield--;
  return 0;
}

static int parse_int(const char* s, long long* out) {
  if (!*s) return -1;
  const char* p = s;
  if (*p == '+' || *p == '-') p++;
  if (!*p) return -1;
  for (const char* q = p; *q; q++)
    if (!isdigit((unsigned char)*q)) return -1;
  errno = 0;
  long long v = strtoll(s, NULL, 10);
  if (errno) return -1;
  *out = v;
  return 0;
}

static int field_int(Inp* r, int i, long long lo, long long hi, const char* what, int* out) {
  long long v;
  char tb[64];
  if (parse_int(r->field[i], &v))
    return ierr(r, CF_ERR_PARSE, r->llline, "expected an integer (%s), found '%s'", what,
                fstr(r->field[i], tb, sizeof tb));
  if (v < lo || v > hi)
    return ierr(r, CF_ERR_PARSE, r->llline, "%s %lld out of range [%lld, %lld]", what, v, lo, hi);
  *out = (int)v;
  return 0;
}

static int field_dbl(Inp* r, int i, const char* what, double* out) {
  char* end;
  char tb[64];
  const char* s = r->field[i];
  double v = strtod(s, &end);
  if (!*s || *end)
    return ierr(r, CF_ERR_PARSE, r->llline, "expected a number (%s), found '%s'", what,
                fstr(s, tb, sizeof tb));
  *out = v;
  return 0;
}

/* ---- sets ---------------------------------------------------------------------------------- */

static InpSet* find_set(Inp* r, int kind, const char* name) {
  for (int i = 0; i < r->nset; i++)
    if (r->sets[i].kind == kind && cfi_streq_nocase(r->sets[i].name, name)) return &r->sets[i];
  return NULL;
}

static int check_name(Inp* r, const char* name, const char* what) {
  char tb[80];
  if (!*name) return ierr(r, CF_ERR_PARSE, r->llline, "empty %s name", what);
  if (strlen(name) >= CF_NAME_MAX)
    return ierr(r, CF_ERR_PARSE, r->llline, "%s name '%s' is longer than %d characters", what,
                fstr(name, tb, sizeof tb), CF_NAME_MAX - 1);
  return 0;
}

static int get_set(Inp* r, int kind, const char* name, int* index) {
  int st = check_name(r, name, kind == SET_NODE ? "node set" : "element set");
  if (st) return st;
  InpSet* s = find_set(r, kind, name);
  if (!s) {
    if (cfi_grow((void**)&r->sets, &r->capSets, (size_t)r->nset + 1, sizeof(InpSet)))
      return nomem(r);
    s = &r->sets[r->nset++];
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "%s", name);
    s->kind = kind;
  }
  *index = (int)(s - r->sets);
  return 0;
}

static int set_add(Inp* r, int si, int id, int line) {
  /* a file names each id once per set it is in: a few ids per byte at most. Sets built from
   * sets ("*NSET, NSET=B" with "A, A, A") or wide GENERATE ranges could otherwise make a small
   * file take gigabytes; refuse it instead. */
  const size_t limit = 4 * r->total_size + 65536;
  if (++r->set_entries > limit)
    return ierr(r, CF_ERR_PARSE, r->llline, "the sets list more than %zu ids in all (4 per byte of "
                "the file): a set repeated in another, or a GENERATE range wider than the mesh?",
                limit);
  InpSet* s = &r->sets[si];
  if (cfi_grow((void**)&s->ids, &s->cap, (size_t)s->n + 1, sizeof(int)) ||
      cfi_grow((void**)&s->lines, &s->capl, (size_t)s->n + 1, sizeof(int)))
    return nomem(r);
  s->ids[s->n] = id;
  s->lines[s->n] = line;
  s->n++;
  return 0;
}

/* ---- keyword blocks ------------------------------------------------------------------------ */

typedef struct Block {
  int kw, line;
  int set;        /* NSET=/ELSET= target, or -1 */
  int generate;
  int skiptype;   /* KW_SKIPELEM: index in kSkipTypes */
  int npe;        /* KW_ELEMENT: 4 (C3D4) or 10 (C3D10) */
  long long added; /* entries added by this *NSET or *ELSET block, to reject empty sets */
} Block;

static const char* param(Inp* r, const char* key) {
  for (int i = 1; i < r->nfield; i++) {
    char* f = r->field[i];
    size_t k = strlen(key);
    if (strncmp(f, key, k) != 0) continue; /* keys were upper-cased */
    char* v = f + k;
    while (*v == ' ' || *v == '\t') v++;
    if (*v != '=') continue;
    v = trim(v + 1);
    size_t n = strlen(v);
    if (n >= 2 && v[0] == '"' && v[n - 1] == '"') { /* quoted names */
      v[n - 1] = '\0';
      v++;
    }
    return v;
  }
  return NULL;
}

static int has_flag(Inp* r, const char* key) {
  for (int i = 1; i < r->nfield; i++)
    if (strcmp(r->field[i], key) == 0) return 1;
  return 0;
}

static int end_block(Inp* r, Block* b) {
  if ((b->kw == KW_NSET || b->kw == KW_ELSET) && b->added == 0)
    return ierr(r, CF_ERR_MESH, b->line, "%s %s is empty", b->kw == KW_NSET ? "node set" :
                "element set", r->sets[b->set].name);
  return 0;
}

static int start_block(Inp* r, Block* b) {
  int st;
  char tb[80];
  memset(b, 0, sizeof *b);
  b->line = r->llline;
  b->set = -1;
  /* keyword: upper case, inner runs of blanks collapsed ("*Node Print" vs "*NODE") */
  char* k = r->field[0] + 1;
  size_t o = 0;
  for (size_t i = 0; k[i]; i++) {
    unsigned char c = (unsigned char)k[i];
    if (isspace(c)) {
      if (o > 0 && k[o - 1] != ' ') k[o++] = ' ';
    } else {
      k[o++] = (char)toupper(c);
    }
  }
  while (o > 0 && k[o - 1] == ' ') o--;
  k[o] = '\0';
  /* parameter keys upper-cased; values keep their case */
  for (int i = 1; i < r->nfield; i++)
    for (char* p = r->field[i]; *p && *p != '='; p++) *p = (char)toupper((unsigned char)*p);
  /* data in other files would silently be missing (*INCLUDE is read by parse()) */
  if (param(r, "INPUT") && (!strcmp(k, "NODE") || !strcmp(k, "ELEMENT") || !strcmp(k, "NSET") ||
                            !strcmp(k, "ELSET")))
    return ierr(r, CF_ERR_UNSUPPORTED, b->line, "INPUT= on *%s is not supported (inline the "
                "data)", k);
  if (!strcmp(k, "NODE")) {
    b->kw = KW_NODE;
    const char* ns = param(r, "NSET");
    if (ns && (st = get_set(r, SET_NODE, ns, &b->set))) return st;
  } else if (!strcmp(k, "ELEMENT")) {
    b->kw = KW_ELEMENT;
    const char* type = param(r, "TYPE");
    if (!type) return ierr(r, CF_ERR_PARSE, b->line, "*ELEMENT without TYPE=");
    for (size_t t = 0; t < sizeof kSkipTypes / sizeof kSkipTypes[0]; t++)
      if (cfi_streq_nocase(type, kSkipTypes[t].name)) b->kw = KW_SKIPELEM, b->skiptype = (int)t;
    if (b->kw != KW_SKIPELEM && !cfi_streq_nocase(type, "C3D4") && !cfi_streq_nocase(type, "C3D10"))
      return ierr(r, CF_ERR_UNSUPPORTED, b->line, "element type %s is not supported (only C3D4 and "
                  "C3D10, the 4- and 10-node tetrahedra; surface and line elements such as CPS3, S3, T3D2 are skipped)",
                  fstr(type, tb, sizeof tb));
    b->npe = cfi_streq_nocase(type, "C3D10") ? 10 : 4;
    if (b->kw != KW_SKIPELEM && r->m->tet_nodes && r->m->tet_nodes != b->npe)
      return ierr(r, CF_ERR_UNSUPPORTED, b->line, "*ELEMENT, TYPE=%s after %s elements: a mesh that mixes linear "
                  "and quadratic tetrahedra is not supported (use one order for the whole mesh)",
                  fstr(type, tb, sizeof tb), r->m->tet_nodes == 10 ? "C3D10" : "C3D4");
    if (b->kw != KW_SKIPELEM) r->m->tet_nodes = b->npe;
    const char* es = param(r, "ELSET");
    if (es && (st = get_set(r, SET_ELEM, es, &b->set))) return st;
  } else if (!strcmp(k, "NSET") || !strcmp(k, "ELSET")) {
    int isn = k[0] == 'N';
    b->kw = isn ? KW_NSET : KW_ELSET;
    const char* name = param(r, isn ? "NSET" : "ELSET");
    if (!name) return ierr(r, CF_ERR_PARSE, b->line, "*%s without %s=", k, k);
    if ((st = get_set(r, isn ? SET_NODE : SET_ELEM, name, &b->set))) return st;
    b->generate = has_flag(r, "GENERATE");
  } else {
    b->kw = KW_SKIP; /* *HEADING, *MATERIAL, *STEP, ...: not ours */
  }
  return 0;
}

static int data_node(Inp* r, Block* b) {
  int id = 0, st;
  if (r->nfield != 4)
    return ierr(r, CF_ERR_PARSE, r->llline, "a *NODE line needs 4 fields (id, x, y, z), found %d",
                r->nfield);
  if ((st = field_int(r, 0, 1, INT_MAX, "node id", &id))) return st;
  cfMesh* m = r->m;
  if (cfi_grow((void**)&m->node_id, &r->capNid, (size_t)m->nnode + 1, sizeof(int)) ||
      cfi_grow((void**)&r->nline, &r->capNline, (size_t)m->nnode + 1, sizeof(int)) ||
      cfi_grow((void**)&m->X, &r->capX, 3 * ((size_t)m->nnode + 1), sizeof(double)))
    return nomem(r);
  double* x = m->X + 3 * (size_t)m->nnode;
  for (int k = 0; k < 3; k++)
    if ((st = field_dbl(r, 1 + k, "node coordinate", &x[k]))) return st;
  if (!isfinite(x[0]) || !isfinite(x[1]) || !isfinite(x[2]))
    return ierr(r, CF_ERR_MESH, r->llline, "non-finite coordinates (%g, %g, %g) (node %d)", x[0],
                x[1], x[2], id);
  int prev = cfi_idmap_insert(&r->nmap, id, m->nnode);
  if (prev == -2) return nomem(r);
  if (prev >= 0)
  {
    char at[INP_PATH + 16];
    return ierr(r, CF_ERR_MESH, r->llline, "node %d is defined twice (first at %s)", id,
                line_ref(r, r->nline[prev], at, sizeof at));
  }
  m->node_id[m->nnode] = id;
  r->nline[m->nnode] = r->llline;
  m->nnode++;
  if (b->set >= 0) return set_add(r, b->set, id, r->llline);
  return 0;
}

static int data_element(Inp* r, Block* b) {
  int id = 0, st, nodes[10];
  const int np = b->npe;
  if (r->nfield != np + 1)
    return ierr(r, CF_ERR_PARSE, r->llline, "a %s element needs %d fields (id and %d nodes%s), "
                "found %d", np == 10 ? "C3D10" : "C3D4", np + 1, np, np == 10 ? ", on one line" : "", r->nfield);
  if ((st = field_int(r, 0, 1, INT_MAX, "element id", &id))) return st;
  for (int a = 0; a < np; a++)
    if ((st = field_int(r, 1 + a, 1, INT_MAX, "node id", &nodes[a]))) return st;
  for (int a = 1; a < np; a++)
    for (int c = 0; c < a; c++)
      if (nodes[a] == nodes[c])
        return ierr(r, CF_ERR_MESH, r->llline, "element %d uses node %d twice", id, nodes[a]);
  cfMesh* m = r->m;
  if (cfi_grow((void**)&r->eraw, &r->capEraw, np * ((size_t)m->ntet + 1), sizeof(int)) ||
      cfi_grow((void**)&r->eline, &r->capEline, (size_t)m->ntet + 1, sizeof(int)) ||
      cfi_grow((void**)&m->elem_id, &r->capEid, (size_t)m->ntet + 1, sizeof(int)))
    return nomem(r);
  int sk = cfi_idmap_find(&r->smap, id);
  if (sk >= 0) {
    char at[INP_PATH + 16];
    return ierr(r, CF_ERR_MESH, r->llline, "element %d is defined twice (first as a surface or line element, at %s)",
                id, line_ref(r, r->sline[sk], at, sizeof at));
  }
  int prev = cfi_idmap_insert(&r->emap, id, m->ntet);
  if (prev == -2) return nomem(r);
  if (prev >= 0)
  {
    char at[INP_PATH + 16];
    return ierr(r, CF_ERR_MESH, r->llline, "element %d is defined twice (first at %s)", id,
                line_ref(r, r->eline[prev], at, sizeof at));
  }
  memcpy(r->eraw + np * (size_t)m->ntet, nodes, np * sizeof(int));
  r->eline[m->ntet] = r->llline;
  m->elem_id[m->ntet] = id;
  m->ntet++;
  if (b->set >= 0) return set_add(r, b->set, id, r->llline);
  return 0;
}

/* a surface or line element: read, its nodes kept for the element sets that name it */
static int data_skipped(Inp* r, Block* b) {
  int nn = kSkipTypes[b->skiptype].nnode, id = 0, st, nodes[8];
  if (r->nfield != nn + 1)
    return ierr(r, CF_ERR_PARSE, r->llline, "a %s element needs %d fields (id and %d nodes), found %d",
                kSkipTypes[b->skiptype].name, nn + 1, nn, r->nfield);
  if ((st = field_int(r, 0, 1, INT_MAX, "element id", &id))) return st;
  for (int a = 0; a < nn; a++)
    if ((st = field_int(r, 1 + a, 1, INT_MAX, "node id", &nodes[a]))) return st;
  int e = cfi_idmap_find(&r->emap, id), s = cfi_idmap_find(&r->smap, id);
  if (e >= 0 || s >= 0) {
    char at[INP_PATH + 16];
    return ierr(r, CF_ERR_MESH, r->llline, "element %d is defined twice (first at %s)", id,
                line_ref(r, e >= 0 ? r->eline[e] : r->sline[s], at, sizeof at));
  }
  if (cfi_grow((void**)&r->sraw, &r->capSraw, 8 * ((size_t)r->nskip + 1), sizeof(int)) ||
      cfi_grow((void**)&r->snn, &r->capSnn, (size_t)r->nskip + 1, sizeof(int)) ||
      cfi_grow((void**)&r->sline, &r->capSline, (size_t)r->nskip + 1, sizeof(int)))
    return nomem(r);
  if (cfi_idmap_insert(&r->smap, id, r->nskip) == -2) return nomem(r);
  memcpy(r->sraw + 8 * (size_t)r->nskip, nodes, sizeof(int) * (size_t)nn);
  r->snn[r->nskip] = nn;
  r->sline[r->nskip++] = r->llline;
  r->skip_count[b->skiptype]++;
  if (b->set >= 0) return set_add(r, b->set, id, r->llline);
  return 0;
}

static int data_set(Inp* r, Block* b) {
  int st;
  int kind = b->kw == KW_NSET ? SET_NODE : SET_ELEM;
  const char* what = kind == SET_NODE ? "node id" : "element id";
  if (b->generate) {
    int v[3] = {0, 0, 1};
    if (r->nfield < 2 || r->nfield > 3)
      return ierr(r, CF_ERR_PARSE, r->llline, "a GENERATE line needs start, end[, step], found "
                  "%d fields", r->nfield);
    for (int i = 0; i < r->nfield; i++)
      if ((st = field_int(r, i, 1, INT_MAX, i < 2 ? what : "GENERATE step", &v[i]))) return st;
    if (v[1] < v[0])
      return ierr(r, CF_ERR_PARSE, r->llline, "GENERATE end %d is below start %d", v[1], v[0]);
    if ((v[1] - v[0]) / v[2] >= MAX_GENERATE)
      return ierr(r, CF_ERR_PARSE, r->llline, "GENERATE range of more than %d ids", MAX_GENERATE);
    for (long long id = v[0]; id <= v[1]; id += v[2]) {
      if ((st = set_add(r, b->set, (int)id, r->llline))) return st;
      b->added++;
    }
    return 0;
  }
  for (int i = 0; i < r->nfield; i++) {
    const char* f = r->field[i];
    long long v;
    if (!*f) continue;
    if (!parse_int(f, &v)) {
      if (v < 1 || v > INT_MAX)
        return ierr(r, CF_ERR_PARSE, r->llline, "%s %lld out of range [1, %d]", what, v, INT_MAX);
      if ((st = set_add(r, b->set, (int)v, r->llline))) return st;
      b->added++;
      continue;
    }
    /* not a number: the name of a set defined earlier */
    char tb[80];
    const InpSet* src = find_set(r, kind, f);
    if (!src)
      return ierr(r, CF_ERR_MESH, r->llline, "%s %s references %s '%s', which is not defined",
                  kind == SET_NODE ? "node set" : "element set", r->sets[b->set].name,
                  kind == SET_NODE ? "node set" : "element set", fstr(f, tb, sizeof tb));
    int si = (int)(src - r->sets), n = src->n; /* set_add may move r->sets[si] arrays */
    for (int j = 0; j < n; j++) {
      if ((st = set_add(r, b->set, r->sets[si].ids[j], r->sets[si].lines[j]))) return st;
      b->added++;
    }
  }
  return 0;
}

/* ---- resolving ids ------------------------------------------------------------------------- */

static int resolve(Inp* r) {
  cfMesh* m = r->m;
  if (m->nnode == 0) return cf_error(CF_ERR_MESH, "%s: no *NODE data in the file", r->path);
  if (m->ntet == 0)
    return cf_error(CF_ERR_MESH, "%s: no *ELEMENT, TYPE=C3D4 or C3D10 data in the file", r->path);
  const int np = cf_mesh_npe(m);
  m->tet = malloc(np * (size_t)m->ntet * sizeof(int));
  if (!m->tet) return nomem(r);
  for (int e = 0; e < m->ntet; e++)
    for (int a = 0; a < np; a++) {
      int id = r->eraw[np * (size_t)e + a], i = cfi_idmap_find(&r->nmap, id);
      if (i < 0)
        return ierr(r, CF_ERR_MESH, r->eline[e], "element %d references node %d which is not "
                    "defined", m->elem_id[e], id);
      m->tet[np * (size_t)e + a] = i;
    }
  int nn = 0, ne = 0;
  for (int i = 0; i < r->nset; i++) {
    if (r->sets[i].n == 0) continue; /* NSET= on *NODE, or ELSET= on *ELEMENT, without data */
    if (r->sets[i].kind == SET_NODE) nn++;
    else ne++, nn++; /* an element set may also give a node set (its surface or line elements) */
  }
  m->nsets = calloc((size_t)nn + 1, sizeof(cfNodeSet));
  m->esets = calloc((size_t)ne + 1, sizeof(cfElemSet));
  if (!m->nsets || !m->esets) return nomem(r);
  for (int i = 0; i < r->nset; i++) {
    InpSet* s = &r->sets[i];
    if (s->n == 0) continue;
    const cfiIdMap* map = s->kind == SET_NODE ? &r->nmap : &r->emap;
    if (s->kind == SET_ELEM && r->nskip) { /* members that are skipped elements: their nodes, a node set */
      int* nodes = NULL;
      size_t cap = 0, nnod = 0;
      int kept = 0;
      for (int j = 0; j < s->n; j++) {
        int k = cfi_idmap_find(&r->smap, s->ids[j]);
        if (k < 0) {
          s->ids[kept] = s->ids[j], s->lines[kept++] = s->lines[j];
          continue;
        }
        if (cfi_grow((void**)&nodes, &cap, nnod + (size_t)r->snn[k] + 1, sizeof(int))) {
          free(nodes);
          return nomem(r);
        }
        for (int a = 0; a < r->snn[k]; a++) {
          int nid = r->sraw[8 * (size_t)k + a], ni = cfi_idmap_find(&r->nmap, nid);
          if (ni < 0) {
            free(nodes);
            return ierr(r, CF_ERR_MESH, r->sline[k], "element %d references node %d which is not defined", s->ids[j], nid);
          }
          nodes[nnod++] = ni;
        }
      }
      s->n = kept;
      const InpSet* same = find_set(r, SET_NODE, s->name);
      if (nnod && !(same && same->n > 0)) { /* a node set of that name given in the file wins */
        cfNodeSet* d = &m->nsets[m->nnset++];
        memcpy(d->name, s->name, CF_NAME_MAX);
        d->nodes = nodes;
        d->count = cfi_sort_unique(nodes, (int)nnod);
      } else
        free(nodes);
      if (s->n == 0) continue;
    }
    for (int j = 0; j < s->n; j++) {
      int k = cfi_idmap_find(map, s->ids[j]);
      if (k < 0)
        return ierr(r, CF_ERR_MESH, s->lines[j], "%s %s references %s %d which is not defined",
                    s->kind == SET_NODE ? "node set" : "element set", s->name,
                    s->kind == SET_NODE ? "node" : "element", s->ids[j]);
      s->ids[j] = k; /* ids become indices in place */
    }
    int n = cfi_sort_unique(s->ids, s->n);
    if (s->kind == SET_NODE) {
      cfNodeSet* d = &m->nsets[m->nnset++];
      memcpy(d->name, s->name, CF_NAME_MAX);
      d->nodes = s->ids;
      d->count = n;
    } else {
      cfElemSet* d = &m->esets[m->neset++];
      memcpy(d->name, s->name, CF_NAME_MAX);
      d->elems = s->ids;
      d->count = n;
    }
    s->ids = NULL;
  }
  return 0;
}

static int parse(Inp* r) {
  int st;
  Block b;
  memset(&b, 0, sizeof b);
  b.kw = KW_NONE;
  size_t i = 0;
  while (i < r->size && isspace((unsigned char)r->buf[i])) i++;
  if (i == r->size) return cf_error(CF_ERR_PARSE, "%s: the file is empty", r->path);
  if (cfi_idmap_init(&r->nmap, r->size / 64) || cfi_idmap_init(&r->emap, r->size / 64) ||
      cfi_idmap_init(&r->smap, 16))
    return nomem(r);
  while ((st = next_logical(r)) == 0) {
    if ((st = split_fields(r))) return st;
    const char* inc = r->ll[0] == '*' ? include_input(r) : NULL;
    if (inc) { /* the file's lines take the place of this one: the block goes on */
      char rel[INP_PATH];
      if (!inc[0]) return ierr(r, CF_ERR_PARSE, r->llline, "*INCLUDE without INPUT=");
      snprintf(rel, sizeof rel, "%s", inc);
      if ((st = push_file(r, rel, r->llline))) return st;
      continue;
    }
    if (r->ll[0] == '*') {
      if ((st = end_block(r, &b))) return st;
      if ((st = start_block(r, &b))) return st;
      continue;
    }
    switch (b.kw) {
      case KW_NONE:
        return ierr(r, CF_ERR_PARSE, r->llline, "data line before the first keyword");
      case KW_SKIP: break;
      case KW_NODE: st = data_node(r, &b); break;
      case KW_ELEMENT: st = data_element(r, &b); break;
      case KW_SKIPELEM: st = data_skipped(r, &b); break;
      default: st = data_set(r, &b); break;
    }
    if (st) return st;
  }
  if (st < 0) return st;
  if ((st = end_block(r, &b))) return st;
  return resolve(r);
}

static void inp_free(Inp* r) {
  for (int i = 0; i < r->nset; i++) {
    free(r->sets[i].ids);
    free(r->sets[i].lines);
  }
  free(r->sets);
  for (int k = 0; k < r->depth; k++) free(r->stack[k].buf); /* an error inside an included file */
  free(r->buf);
  for (int k = 0; k < r->nfpath; k++) free(r->fpath[k]);
  free(r->fpath);
  free(r->seg);
  free(r->sraw);
  free(r->snn);
  free(r->sline);
  cfi_idmap_free(&r->smap);
  free(r->ll);
  free(r->field);
  free(r->nline);
  free(r->eraw);
  free(r->eline);
  cfi_idmap_free(&r->nmap);
  cfi_idmap_free(&r->emap);
}

int cf_mesh_read_inp(const char* path, cfMesh* mesh) {
  if (!mesh) return cf_error(CF_ERR_ARG, "cf_mesh_read_inp: mesh is NULL");
  memset(mesh, 0, sizeof *mesh);
  if (!path) return cf_error(CF_ERR_ARG, "cf_mesh_read_inp: path is NULL");
  Inp r;
  memset(&r, 0, sizeof r);
  r.path = path;
  r.line = 1;
  r.m = mesh;
  int st = cfi_read_file(path, &r.buf, &r.size);
  r.total_size = r.size;
  snprintf(r.stack[0].path, sizeof r.stack[0].path, "%s", path);
  r.path = r.stack[0].path;
  if (st == CF_OK && (add_file(&r, path) < 0 || add_seg(&r, 0, 1) < 0)) st = nomem(&r);
  if (st == CF_OK) st = parse(&r);
  if (st == CF_OK && r.nskip) { /* said in the mesh's note */
    size_t o = 0;
    int w = snprintf(mesh->note, sizeof mesh->note, "skipped %d surface and line element%s (", r.nskip, r.nskip == 1 ? "" : "s");
    o = w > 0 ? (size_t)w : 0;
    int first = 1;
    for (size_t t = 0; t < sizeof kSkipTypes / sizeof kSkipTypes[0] && o < sizeof mesh->note; t++)
      if (r.skip_count[t]) {
        w = snprintf(mesh->note + o, sizeof mesh->note - o, "%s%d %s", first ? "" : ", ", r.skip_count[t], kSkipTypes[t].name);
        if (w > 0) o += (size_t)w;
        first = 0;
      }
    if (o < sizeof mesh->note) snprintf(mesh->note + o, sizeof mesh->note - o, "); their element sets are node sets");
  }
  inp_free(&r);
  if (st != CF_OK) {
    cf_mesh_free(mesh);
    return st;
  }
  snprintf(mesh->source, sizeof mesh->source, "%s", path);
  return cfi_mesh_finish(mesh);
}

/* ---- writer -------------------------------------------------------------------------------- */

/* CalculiX upper-cases set names; characters that would break the keyword line become '_'. */
static void inp_name(const char* in, char* out) {
  size_t i = 0;
  for (; in[i] && i < CF_NAME_MAX - 1; i++) {
    unsigned char c = (unsigned char)in[i];
    out[i] = (isalnum(c) || c == '_' || c == '-' || c == '.') ? (char)toupper(c) : '_';
  }
  out[i] = '\0';
}

/* A coordinate for an Abaqus/CalculiX data line: CalculiX reads at most 20 characters of a
 * numeric field (Fortran f20.0), so the shortest text that reads back exactly, or, when that is
 * longer than 20 characters, the most digits that fit (14 significant for -1.2345678901234e-05). */
static void format_coord(double x, char buf[32]) {
  for (int p = 1; p <= 17; p++) {
    snprintf(buf, 32, "%.*g", p, x);
    if (strtod(buf, NULL) == x) break;
  }
  for (int p = 16; strlen(buf) > 20 && p >= 1; p--) snprintf(buf, 32, "%.*e", p, x);
}

int cf_mesh_write_inp(const cfMesh* m, FILE* out) {
  if (!m || !out) return cf_error(CF_ERR_ARG, "cf_mesh_write_inp: NULL argument");
  if (m->nnode <= 0 || m->ntet <= 0 || !m->X || !m->tet)
    return cf_error(CF_ERR_ARG, "cf_mesh_write_inp: empty mesh");
  /* keep the source file's ids, so messages and results refer to the same numbers, unless
   * they are not positive (CalculiX needs ids >= 1) */
  int use_nid = m->node_id != NULL, use_eid = m->elem_id != NULL;
  for (int i = 0; use_nid && i < m->nnode; i++) use_nid = m->node_id[i] > 0;
  for (int e = 0; use_eid && e < m->ntet; e++) use_eid = m->elem_id[e] > 0;
#define NID(i) (use_nid ? m->node_id[i] : (i) + 1)
#define EID(e) (use_eid ? m->elem_id[e] : (e) + 1)
  fprintf(out, "** written by cofem from %s\n*NODE\n", m->source[0] ? m->source : "a mesh");
  for (int i = 0; i < m->nnode; i++) {
    const double* x = m->X + 3 * (size_t)i;
    char c[3][32];
    for (int k = 0; k < 3; k++) format_coord(x[k], c[k]);
    fprintf(out, "%d, %s, %s, %s\n", NID(i), c[0], c[1], c[2]);
  }
  const int np = cf_mesh_npe(m);
  fprintf(out, "*ELEMENT, TYPE=%s, ELSET=EALL\n", np == 10 ? "C3D10" : "C3D4");
  for (int e = 0; e < m->ntet; e++) {
    const int* t = m->tet + np * (size_t)e;
    fprintf(out, "%d", EID(e));
    for (int a = 0; a < np; a++) fprintf(out, ", %d", NID(t[a])); /* C3D10: cofem's order is Abaqus's */
    fprintf(out, "\n");
  }
  char name[CF_NAME_MAX];
  for (int s = 0; s < m->nnset; s++) {
    const cfNodeSet* ns = &m->nsets[s];
    if (ns->count <= 0) continue; /* CalculiX rejects empty sets */
    inp_name(ns->name, name);
    fprintf(out, "*NSET, NSET=%s\n", name);
    for (int j = 0; j < ns->count; j++) /* at most 16 entries per data line */
      fprintf(out, "%d%s", NID(ns->nodes[j]), (j % 16 == 15 || j == ns->count - 1) ? "\n" : ", ");
  }
  for (int s = 0; s < m->neset; s++) {
    const cfElemSet* es = &m->esets[s];
    if (es->count <= 0) continue;
    inp_name(es->name, name);
    fprintf(out, "*ELSET, ELSET=%s\n", name);
    for (int j = 0; j < es->count; j++)
      fprintf(out, "%d%s", EID(es->elems[j]), (j % 16 == 15 || j == es->count - 1) ? "\n" : ", ");
  }
#undef NID
#undef EID
  if (fflush(out) != 0 || ferror(out))
    return cf_error(CF_ERR_IO, "cf_mesh_write_inp: write error: %s", strerror(errno));
  return CF_OK;
}
