#define _POSIX_C_SOURCE 200809L
/* What the subcommands share: usage, error reporting, option values, output folders. */
#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cofem/cofem.h"
#include "cofem/mbs.h"

int cf_cli_usage(void) {
  fprintf(stderr,
          "usage: cofem run SCENE [--steps N] [--end T] [--out DIR] [--cold] [--precond block_jacobi|rotated_cholesky]\n"
          "                 [--backend cpu|cuda|auto] [--quiet]\n"
          "       cofem static SCENE [--out DIR] [--increments N] [--tangent consistent|KR]\n"
          "       cofem reduce SCENE [--interface SET ...] [--modes N] [--out FILE] (Craig-Bampton)\n"
          "       cofem info MESH\n");
  return 2;
}

int cf_cli_fail(int st) {
  fprintf(stderr, "cofem: error: %s (%s)\n", cf_last_error(), cf_status_name(st));
  return 1;
}

/* an error while running a scene: named by the scene unless the message already names it */
int cf_cli_fail_scene(const char* scene_path, int st) {
  const char* msg = cf_last_error();
  if (strstr(msg, scene_path)) return cf_cli_fail(st);
  fprintf(stderr, "cofem: error: %s: %s (%s)\n", scene_path, msg, cf_status_name(st));
  return 1;
}

const char* cf_cli_arg_value(int argc, char** argv, int* i) {
  if (*i + 1 >= argc) return NULL;
  return argv[++*i];
}

void cf_cli_default_out_dir(const cfScene* s, char* out, size_t n) {
  if (s->out_dir[0]) {
    snprintf(out, n, "%s", s->out_dir);
    return;
  }
  const char* base = strrchr(s->path, '/');
  base = base ? base + 1 : s->path;
  snprintf(out, n, "out/%.*s", (int)(strcspn(base, ".")), base);
}

double cf_cli_max_displacement(const cfModel* m, const cfData* d) {
  double mx = 0;
  for (int n = 0; n < m->nnode; n++) {
    double s = 0;
    for (int k = 0; k < 3; k++) s += (d->x[3 * n + k] - m->X[3 * n + k]) * (d->x[3 * n + k] - m->X[3 * n + k]);
    mx = fmax(mx, sqrt(s));
  }
  return mx;
}
