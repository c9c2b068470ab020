/* The benchmarks' CSV under perf/results/<label>/ (COFEM_SOURCE_DIR: the source tree). */
#ifndef COFEM_PERF_RESULTS_CSV_H
#define COFEM_PERF_RESULTS_CSV_H
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cofem/output.h"

/* Opens perf/results/<label>/<name> for writing, making the folder; path: its name, for the
 * caller's "wrote" line. NULL (said on stderr) when it cannot. */
static FILE* open_results_csv(const char* label, const char* name, char* path, size_t npath) {
  char dir[600];
  snprintf(dir, sizeof dir, "%s/perf/results/%s", COFEM_SOURCE_DIR, label);
  cf_make_dirs(dir); /* a failure shows as the fopen below */
  snprintf(path, npath, "%s/%s", dir, name);
  FILE* f = fopen(path, "w");
  if (!f) fprintf(stderr, "%s: cannot write: %s\n", path, strerror(errno));
  return f;
}

#endif
