#define _POSIX_C_SOURCE 200809L
/* What the subcommands share: usage, error reporting, option values, output folders. */
#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cofem/cofem.h"
#include "cofem/mbs.h"
#include "cofem/mbs_fe.h"

/* each command's usage lines (cofem CMD --help prints its own) and, for that command's usage only
 * (its --help and its usage errors, not the list of all commands), what its options mean */
static const struct {
  const char* cmd;
  const char* text;
  const char* details; /* NULL: none */
} kUsage[] = {
    {"run", "cofem run SCENE [--steps N] [--end T] [--out DIR] [--cold] [--precond auto|block_jacobi|rotated_cholesky|amg]\n"
            "                [--backend cpu|cuda|auto] [--coupling newton|linear] [--static] [--max-output BYTES] [--quiet]\n"
            "    SCENE: an FE scene or a mechanism (--cold, --precond: FE scenes; --coupling, --static: mechanisms;\n"
            "    --static: start from static equilibrium at t = 0, as Python's Mechanism.static())\n",
     NULL},
    {"static", "cofem static SCENE [--out DIR] [--increments N] [--tangent consistent|KR]\n"
               "cofem static MECHANISM [--out DIR] [--increments N] [--time T] [--pseudo-dt H] [--tol X] [--max-steps N]\n",
     NULL},
    {"reduce", "cofem reduce SCENE [--interface SET ...] [--modes N] [--out FILE] [--clamp] [--damping Z|adams]\n"
               "                   [--no-orthonormalise] [--dense] [--geometric] [--quiet] [--interface-point SET:KIND[:DOFS] ...]\n"
               "                   (Craig-Bampton; SCENE: an FE scene)\n",
     "  --interface SET   interface node set (repeatable, or SET1,SET2); the scene's fixed\n"
     "                    sets are interface sets too unless --clamp\n"
     "  --interface-point SET:rigid|averaging[:x,y,z,rx,ry,rz]\n"
     "                    the set as ONE interface point with 6 DOFs (rigid: RBE2-like,\n"
     "                    averaging: RBE3-like); static modes of the listed DOFs (default all)\n"
     "  --modes N         fixed-interface normal modes (default 12)\n"
     "  --out FILE        write the reduction (binary, docs/reduction-format.md)\n"
     "  --clamp           keep the scene's supports fixed instead\n"
     "  --damping Z       modal damping ratio of every elastic mode (default 0.01);\n"
     "                    'adams': 1% below 100 Hz, 10% below 1 kHz, 100% above\n"
     "  --no-orthonormalise  keep the [constraint, normal] basis as it is\n"
     "  --dense           dense eigen solver for the normal modes (default: auto)\n"
     "  --geometric       also the modes' geometric stiffness under unit inertial loads (a modal\n"
     "                    body's \"geometric_stiffening\"); the table gains each mode's stiffening\n"
     "                    per unit rate squared about x, y, z\n"
     "  --quiet           no table of the modes\n"},
    {"info", "cofem info MESH\n", NULL},
    {"accuracy", "cofem accuracy [SCENE ...] [--cases lug,hinge,...] [--out DIR] [--docs DIR] [--no-docs] [--no-dynamics]\n"
                 "               [--no-plots] [--check] (comparison against CalculiX)\n",
     NULL},
};
enum { NUSAGE = (int)(sizeof kUsage / sizeof kUsage[0]) };

const char* cf_cli_command = NULL;

int cf_cli_known_command(const char* cmd) {
  for (int k = 0; k < NUSAGE; k++)
    if (!strcmp(cmd, kUsage[k].cmd)) return 1;
  return 0;
}

void cf_cli_print_usage(FILE* f, const char* cmd) {
  int any = 0;
  for (int k = 0; k < NUSAGE; k++) {
    if (cmd && strcmp(cmd, kUsage[k].cmd)) continue;
    const char* t = kUsage[k].text;
    /* "usage: " before the first line, aligned below it */
    while (*t) {
      size_t n = strcspn(t, "\n");
      fprintf(f, "%s%.*s\n", any ? "       " : "usage: ", (int)n, t);
      any = 1;
      t += n + (t[n] == '\n');
    }
    if (cmd && kUsage[k].details) fputs(kUsage[k].details, f);
  }
  if (!cmd) fprintf(f, "       cofem --version | cofem COMMAND --help\n");
}

int cf_cli_usage(void) {
  cf_cli_print_usage(stderr, cf_cli_command);
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
  if (*i + 1 >= argc) {
    fprintf(stderr, "cofem: error: %s wants a value\n", argv[*i]);
    return NULL;
  }
  return argv[++*i];
}

static int opt_status(int st) {
  if (st == CF_OK) return 0;
  fprintf(stderr, "cofem: error: %s\n", cf_last_error());
  return 2;
}

int cf_cli_opt_long(int argc, char** argv, int* i, long lo, long hi, long* out) {
  const char* opt = argv[*i];
  const char* v = cf_cli_arg_value(argc, argv, i);
  return v ? opt_status(cf_parse_long(opt, v, lo, hi, out)) : 2;
}

int cf_cli_opt_int(int argc, char** argv, int* i, int lo, int hi, int* out) {
  const char* opt = argv[*i];
  const char* v = cf_cli_arg_value(argc, argv, i);
  return v ? opt_status(cf_parse_int(opt, v, lo, hi, out)) : 2;
}

int cf_cli_opt_double(int argc, char** argv, int* i, double lo, double hi, double* out) {
  const char* opt = argv[*i];
  const char* v = cf_cli_arg_value(argc, argv, i);
  return v ? opt_status(cf_parse_double(opt, v, lo, hi, out)) : 2;
}

int cf_cli_opt_choice(int argc, char** argv, int* i, const char* const* choices, int* out) {
  const char* opt = argv[*i];
  const char* v = cf_cli_arg_value(argc, argv, i);
  return v ? opt_status(cf_parse_choice(opt, v, choices, out)) : 2;
}

int cf_cli_bad_arg(const char* arg) {
  if (arg[0] == '-') fprintf(stderr, "cofem: error: unknown option '%s'%s%s\n", arg, cf_cli_command ? " for cofem " : "",
                             cf_cli_command ? cf_cli_command : "");
  else fprintf(stderr, "cofem: error: unexpected argument '%s'\n", arg);
  return cf_cli_usage();
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

/* ---- the output budget of a run (cofem run, FE scenes and mechanisms) ---- */
void cf_cli_human_bytes(double b, char* out, size_t n) {
  if (b >= 1e9) snprintf(out, n, "%.1f GB", b / 1e9);
  else if (b >= 1e6) snprintf(out, n, "%.1f MB", b / 1e6);
  else if (b >= 1e3) snprintf(out, n, "%.1f kB", b / 1e3);
  else snprintf(out, n, "%.0f bytes", b);
}

/* free bytes for an unprivileged writer where dir is (or would be created): the nearest existing
 * ancestor; < 0 when unknown */
static double free_bytes(const char* dir) {
  char p[CF_PATH_MAX];
  snprintf(p, sizeof p, "%s", dir[0] ? dir : ".");
  for (;;) {
    struct statvfs v;
    if (statvfs(p, &v) == 0) return (double)v.f_bavail * (double)v.f_frsize;
    char* slash = strrchr(p, '/');
    if (!slash) { snprintf(p, sizeof p, "."); continue; }
    if (slash == p) { p[1] = '\0'; if (statvfs(p, &v) == 0) return (double)v.f_bavail * (double)v.f_frsize; return -1; }
    *slash = '\0';
  }
}

int cf_cli_output_budget(double total, double budget, const char* out_dir, const char* what) {
  char t[32], b[32];
  cf_cli_human_bytes(total, t, sizeof t), cf_cli_human_bytes(budget, b, sizeof b);
  if (total > budget)
    return cf_error(CF_ERR_ARG, "the run would write about %s (%s), more than the output budget of %s: raise it with "
                    "--max-output BYTES, or ask for fewer steps (--steps, --end, time.end) or frames (output.vtu_every)",
                    t, what, b);
  double avail = free_bytes(out_dir);
  if (avail >= 0 && total > avail) {
    char a[32];
    cf_cli_human_bytes(avail, a, sizeof a);
    return cf_error(CF_ERR_IO, "%s: the run would write about %s, and only %s are free there", out_dir, t, a);
  }
  return CF_OK;
}

int cf_cli_mbs_threads(const cfMbsScene* s, char* note, size_t n) {
  long nodes = cf_mbs_scene_fe_nodes(s);
  note[0] = 0;
  if (cf_default_threads(nodes) != 1) return 0;
  snprintf(note, n, "  threads: 1 (%ld FE nodes, below %ld on %d cores; OMP_NUM_THREADS to change)\n", nodes,
           cf_default_threads_min_nodes(), omp_get_max_threads());
  omp_set_num_threads(1); /* the FE bodies' stages */
  cf_set_blas_threads(1); /* CHOLMOD's supernodal factorisations: the corotational lug pendulum 5-9x faster */
  return 1;
}
