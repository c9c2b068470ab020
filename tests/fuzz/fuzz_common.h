/* Shared helpers of the libFuzzer targets (tests/fuzz/fuzz_*.c), which tests/io/test_fuzz_regressions.c
 * also includes to replay the corpus and the regression files in the normal test suite.
 *
 * The readers take a path, so each input is written to a file in a private temporary directory
 * (under $TMPDIR, else /dev/shm, else /tmp) and read from there. Besides memory safety (ASan, UBSan)
 * every target checks the library's contract and aborts when it is broken:
 *   - failure: a negative known status, the cfMesh left all zero, a message naming the file;
 *   - success: a valid mesh (ids, indices, positive volumes, sorted sets, boundary), which writes
 *     to .inp and reads back to the same nodes and elements. */
#ifndef COFEM_FUZZ_COMMON_H
#define COFEM_FUZZ_COMMON_H
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cofem/cofem.h"

#if defined(__GNUC__)
#define CFF_FN static __attribute__((unused))
#else
#define CFF_FN static
#endif

#if defined(__GNUC__)
__attribute__((noreturn, format(printf, 1, 2)))
#endif
CFF_FN void cff_die(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "fuzz contract violated: ");
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, "\n  last error: %s\n", cf_last_error());
  abort();
}

/* ---- the private directory ------------------------------------------------------------------ */

static char cff_dir_path[512];
static char cff_names[8][64];
static int cff_nnames;

CFF_FN void cff_cleanup(void) {
  char p[640];
  for (int i = 0; i < cff_nnames; i++) {
    snprintf(p, sizeof p, "%s/%s", cff_dir_path, cff_names[i]);
    unlink(p);
  }
  if (cff_dir_path[0]) rmdir(cff_dir_path);
}

CFF_FN const char* cff_dir(void) {
  if (cff_dir_path[0]) return cff_dir_path;
  const char* base = getenv("TMPDIR");
  struct stat sb;
  if (!base || !*base) base = stat("/dev/shm", &sb) == 0 && access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
  snprintf(cff_dir_path, sizeof cff_dir_path, "%s/cofem_fuzz_XXXXXX", base);
  if (!mkdtemp(cff_dir_path)) {
    perror(cff_dir_path);
    abort();
  }
  atexit(cff_cleanup);
  return cff_dir_path;
}

/* Write data to <dir>/<name>; the full path goes to path[n]. 0 on success. */
CFF_FN int cff_write(const char* name, const void* data, size_t size, char* path, size_t n) {
  snprintf(path, n, "%s/%s", cff_dir(), name);
  int known = 0;
  for (int i = 0; i < cff_nnames; i++) known |= strcmp(cff_names[i], name) == 0;
  if (!known && cff_nnames < 8) snprintf(cff_names[cff_nnames++], sizeof cff_names[0], "%s", name);
  FILE* f = fopen(path, "wb");
  if (!f) return -1;
  size_t w = size ? fwrite(data, 1, size, f) : 0;
  int ok = fclose(f) == 0 && w == size;
  return ok ? 0 : -1;
}

/* ---- the contract --------------------------------------------------------------------------- */

CFF_FN int cff_is_zero(const void* p, size_t n) {
  const unsigned char* c = p;
  for (size_t i = 0; i < n; i++)
    if (c[i]) return 0;
  return 1;
}

CFF_FN void cff_check_failure(int st, const void* obj, size_t objsize, const char* path) {
  if (st >= 0) cff_die("status %d is not an error", st);
  if (st < CF_ERR_UNSUPPORTED) cff_die("unknown status %d", st);
  if (!cff_is_zero(obj, objsize)) cff_die("%s: the output object is not cleared after an error", path);
  if (!strstr(cf_last_error(), path)) cff_die("%s: the message does not name the file", path);
}

CFF_FN void cff_check_sorted(const int* a, int n, int hi, const char* what, const char* name) {
  if (n < 1 || !a) cff_die("%s %s is empty", what, name);
  for (int i = 0; i < n; i++) {
    if (a[i] < 0 || a[i] >= hi) cff_die("%s %s: index %d out of range [0, %d)", what, name, a[i], hi);
    if (i > 0 && a[i] <= a[i - 1]) cff_die("%s %s is not sorted and unique", what, name);
  }
}

CFF_FN void cff_check_valid(const cfMesh* m, const char* path) {
  if (m->nnode <= 0 || m->ntet <= 0 || !m->X || !m->tet || !m->node_id || !m->elem_id)
    cff_die("%s: success with an empty mesh", path);
  if (strcmp(m->source, path) != 0) cff_die("%s: source is '%s'", path, m->source);
  for (size_t i = 0; i < 3 * (size_t)m->nnode; i++)
    if (!isfinite(m->X[i])) cff_die("%s: non-finite coordinate accepted", path);
  const int np = cf_mesh_npe(m); /* 4, or 10 for quadratic tetrahedra */
  if (m->tet_nodes != 0 && m->tet_nodes != 4 && m->tet_nodes != 10) cff_die("%s: tet_nodes %d", path, m->tet_nodes);
  for (int e = 0; e < m->ntet; e++) {
    const int* t = m->tet + np * (size_t)e;
    for (int a = 0; a < np; a++) {
      if (t[a] < 0 || t[a] >= m->nnode) cff_die("%s: element %d node index %d", path, e, t[a]);
      for (int b = 0; b < a; b++)
        if (t[a] == t[b]) cff_die("%s: element %d repeats a node", path, e);
    }
    if (!(cf_tet_volume(m, e) > 0)) cff_die("%s: element %d with volume <= 0 accepted", path, e);
  }
  if (cf_mesh_validate(m) != CF_OK) cff_die("%s: the mesh it returned does not validate", path);
  for (int s = 0; s < m->nnset; s++) {
    const cfNodeSet* ns = &m->nsets[s];
    if (!memchr(ns->name, 0, CF_NAME_MAX) || !ns->name[0]) cff_die("%s: bad node set name", path);
    cff_check_sorted(ns->nodes, ns->count, m->nnode, "node set", ns->name);
    if (cf_mesh_find_nset(m, ns->name) != ns) cff_die("%s: node set %s listed twice", path, ns->name);
  }
  for (int s = 0; s < m->neset; s++) {
    const cfElemSet* es = &m->esets[s];
    if (!memchr(es->name, 0, CF_NAME_MAX) || !es->name[0]) cff_die("%s: bad element set name", path);
    cff_check_sorted(es->elems, es->count, m->ntet, "element set", es->name);
  }
  /* a closed surface has at least 4 faces; every face belongs to one element */
  if (m->ntri < 4 || !m->tri || !m->tri_tet) cff_die("%s: %d boundary faces", path, m->ntri);
  for (int f = 0; f < m->ntri; f++) {
    for (int k = 0; k < 3; k++)
      if (m->tri[3 * f + k] < 0 || m->tri[3 * f + k] >= m->nnode) cff_die("%s: boundary face %d", path, f);
    if (m->tri_tet[f] < 0 || m->tri_tet[f] >= m->ntet) cff_die("%s: boundary face %d owner", path, f);
  }
  cfMeshQuality q;
  if (cf_mesh_quality(m, &q) != CF_OK || !(q.volume > 0) || !isfinite(q.max_aspect_ratio))
    cff_die("%s: quality figures of a valid mesh", path);
}

/* Differential check: write the mesh as .inp, read it back, compare nodes and elements. */
CFF_FN void cff_check_roundtrip(const cfMesh* m, const char* path) {
  char out[600];
  snprintf(out, sizeof out, "%s/roundtrip.inp", cff_dir());
  int known = 0;
  for (int i = 0; i < cff_nnames; i++) known |= strcmp(cff_names[i], "roundtrip.inp") == 0;
  if (!known && cff_nnames < 8) snprintf(cff_names[cff_nnames++], sizeof cff_names[0], "roundtrip.inp");
  FILE* f = fopen(out, "w");
  if (!f) return;
  int st = cf_mesh_write_inp(m, f);
  fclose(f);
  if (st != CF_OK) cff_die("%s: cf_mesh_write_inp failed on a valid mesh", path);
  cfMesh r;
  st = cf_mesh_read(out, &r);
  /* coordinates are written in CalculiX's 20 characters (14 significant digits where the exact
   * text is longer): an element at the reader's degeneracy limit may then fall below it */
  if (st != CF_OK && strstr(cf_last_error(), "volume")) return;
  if (st != CF_OK) cff_die("%s: the .inp written from it does not read back", path);
  int same_x = 1;
  for (size_t k = 0; k < 3 * (size_t)m->nnode && same_x; k++) {
    double a = m->X[k], b = r.X[k];
    same_x = a == b || fabs(a - b) <= 1e-12 * fmax(fabs(a), fabs(b)) || fmax(fabs(a), fabs(b)) < 1e-290;
  }
  if (r.nnode != m->nnode || r.ntet != m->ntet || !same_x || cf_mesh_npe(&r) != cf_mesh_npe(m) ||
      memcmp(r.tet, m->tet, sizeof(int) * cf_mesh_npe(m) * (size_t)m->ntet) != 0 || r.ntri != m->ntri)
    cff_die("%s: the .inp round trip changed the mesh", path);
  /* names are upper-cased (and may merge), never lost */
  if (r.nnset > m->nnset || (m->nnset > 0 && r.nnset == 0)) cff_die("%s: node sets lost in the round trip", path);
  cf_mesh_free(&r);
}

/* Read the mesh file at path with cf_mesh_read and check the outcome. */
CFF_FN void cff_mesh_file(const char* path) {
  cfMesh m;
  memset(&m, 0xab, sizeof m); /* the reader must clear it */
  cf_clear_error();
  int st = cf_mesh_read(path, &m);
  if (st < 0) {
    cff_check_failure(st, &m, sizeof m, path);
    return;
  }
  if (st != CF_OK) cff_die("%s: unexpected status %d", path, st);
  cff_check_valid(&m, path);
  cff_check_roundtrip(&m, path);
  cf_mesh_free(&m);
  if (!cff_is_zero(&m, sizeof m)) cff_die("cf_mesh_free does not clear the mesh");
}

#endif
