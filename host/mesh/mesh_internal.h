/* Helpers shared by the mesh readers (mesh.c, mesh_msh.c, mesh_inp.c); not part of the API. */
#ifndef COFEM_MESH_INTERNAL_H
#define COFEM_MESH_INTERNAL_H
#include <stddef.h>
#include "cofem/mesh.h"

/* Open-addressing map from a file id (any int) to a dense index. Files number nodes sparsely,
 * so a direct array indexed by id could be arbitrarily large. */
typedef struct cfiIdMap {
  int* keys;
  int* vals; /* -1 = empty slot */
  size_t mask;
  size_t n;
} cfiIdMap;

int cfi_idmap_init(cfiIdMap* m, size_t expected); /* 0, or -1 when out of memory */
/* Insert key -> val unless key is present. Returns the existing value (>= 0) if it was present,
 * -1 if inserted, -2 when out of memory. */
int cfi_idmap_insert(cfiIdMap* m, int key, int val);
int cfi_idmap_find(const cfiIdMap* m, int key); /* value, or -1 */
void cfi_idmap_free(cfiIdMap* m);

/* Make room for `need` elements of `elsize` bytes in *p (capacity *cap). 0, or -1. */
int cfi_grow(void** p, size_t* cap, size_t need, size_t elsize);

/* Sort ascending and drop repeats; returns the new count. */
int cfi_sort_unique(int* a, int n);

/* Read a whole file, NUL-terminated. Sets an IO error naming the path on failure. */
int cfi_read_file(const char* path, char** buf, size_t* size);

/* After a reader filled `mesh`: validate and extract the boundary; on failure free the mesh
 * (leaving it zeroed) and return the error. */
int cfi_mesh_finish(cfMesh* mesh);

/* Case-insensitive ASCII string equality. */
int cfi_streq_nocase(const char* a, const char* b);

#endif
