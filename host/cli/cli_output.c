#define _POSIX_C_SOURCE 200809L
/* The output folder of a run and the interrupt flag (docs/reliability.md, "Outputs"):
 * - a folder the run creates is removed again (when empty) if the run fails before its first step;
 * - a re-run into the same folder removes the previous run's files of the kinds it writes, and
 *   only files cofem wrote: the name must match the pattern and the file must start as cofem
 *   writes it (CSV header, the VTK writer's first two lines). A file with one of the run's names
 *   that is not cofem's stops the run before anything is written (it would be overwritten);
 * - SIGINT/SIGTERM set a flag that the run loops poll between steps; a second one exits at once.
 *   The library has no signal handling: the flag lives here. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cofem/cofem.h"

/* ---- interrupts ----------------------------------------------------------------------------- */
volatile sig_atomic_t cf_cli_interrupted = 0;

static void on_signal(int sig) {
  if (cf_cli_interrupted) { /* the second one: out at once (the .tmp files may stay) */
    static const char again[] = "\ncofem: interrupted again: exiting now\n";
    if (write(2, again, sizeof again - 1) < 0) {}
    _exit(128 + sig);
  }
  cf_cli_interrupted = sig;
  static const char first[] = "\ncofem: interrupted: stopping after the current step (again to exit at once)\n";
  if (write(2, first, sizeof first - 1) < 0) {}
}

void cf_cli_catch_interrupts(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
}

int cf_cli_interrupt_code(void) { return cf_cli_interrupted ? 128 + (int)cf_cli_interrupted : 0; }

const char* cf_cli_interrupt_name(void) { return cf_cli_interrupted == SIGTERM ? "SIGTERM" : "SIGINT"; }

/* ---- the folder ------------------------------------------------------------------------------ */
int cf_cli_out_make(cfCliOut* o, const char* dir) {
  memset(o, 0, sizeof *o);
  snprintf(o->dir, sizeof o->dir, "%s", dir);
  /* the first component that does not exist yet: the run created it and everything below */
  char p[CF_PATH_MAX];
  snprintf(p, sizeof p, "%s", dir);
  size_t n = strlen(p);
  while (n > 1 && p[n - 1] == '/') p[--n] = '\0';
  for (size_t i = 1; i <= n; i++) {
    if (p[i] != '/' && p[i] != '\0') continue;
    char c = p[i];
    p[i] = '\0';
    struct stat sb;
    if (stat(p, &sb) != 0) {
      snprintf(o->created, sizeof o->created, "%s", p);
      p[i] = c;
      break;
    }
    p[i] = c;
  }
  return cf_make_dirs(dir);
}

void cf_cli_out_abandon(const cfCliOut* o, const char* const* sub) {
  if (!o->created[0]) return;
  for (int k = 0; sub && sub[k]; k++) {
    char p[CF_PATH_MAX + 64];
    snprintf(p, sizeof p, "%s/%s", o->dir, sub[k]);
    rmdir(p);
  }
  /* from the deepest up to the first one the run made; rmdir leaves a folder that is not empty */
  char p[CF_PATH_MAX];
  snprintf(p, sizeof p, "%s", o->dir);
  size_t lim = strlen(o->created);
  for (;;) {
    size_t n = strlen(p);
    while (n > 1 && p[n - 1] == '/') p[--n] = '\0';
    if (n < lim || rmdir(p) != 0) break;
    char* slash = strrchr(p, '/');
    if (!slash || (size_t)(slash - p) < lim) break;
    *slash = '\0';
  }
}

/* ---- recognising cofem's files ---------------------------------------------------------------- */
static const char VTK_HEAD[] = "<?xml version=\"1.0\"?>\n<VTKFile type=\"UnstructuredGrid\" version=\"0.1\" "
                               "byte_order=\"LittleEndian\">\n";
static const char PVD_HEAD[] = "<?xml version=\"1.0\"?>\n<VTKFile type=\"Collection\" version=\"0.1\" "
                               "byte_order=\"LittleEndian\">\n";

static int starts_with_file(const char* path, const char* head) {
  struct stat sb;
  if (lstat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) return 0;
  FILE* f = fopen(path, "rb");
  if (!f) return 0;
  size_t n = strlen(head);
  char buf[256];
  size_t got = n < sizeof buf ? fread(buf, 1, n, f) : 0;
  fclose(f);
  return got == n && memcmp(buf, head, n) == 0;
}

/* name = prefix, digits (ndigit of them, or >= 4 when ndigit < 0; none when 0), suffix */
static int name_matches(const char* name, const cfCliOutPattern* p) {
  size_t lp = strlen(p->prefix), ls = strlen(p->suffix), ln = strlen(name);
  if (ln < lp + ls || strncmp(name, p->prefix, lp) || strcmp(name + ln - ls, p->suffix)) return 0;
  size_t nd = ln - lp - ls;
  for (size_t i = 0; i < nd && p->ndigit != -2; i++)
    if (name[lp + i] < '0' || name[lp + i] > '9') return 0;
  if (p->ndigit == -2) return 1;
  if (p->ndigit == 0) return nd == 0;
  if (p->ndigit > 0) return nd == (size_t)p->ndigit;
  return nd >= 4;
}

static const char* head_of(const cfCliOutPattern* p) {
  if (p->head) return p->head;
  size_t ls = strlen(p->suffix);
  if (ls >= 4 && !strcmp(p->suffix + ls - 4, ".vtu")) return VTK_HEAD;
  if (ls >= 4 && !strcmp(p->suffix + ls - 4, ".pvd")) return PVD_HEAD;
  return NULL;
}

int cf_cli_out_clean(const cfCliOut* o, const cfCliOutPattern* pat, int npat, int* removed) {
  *removed = 0;
  for (int pass = 0; pass < 2; pass++) { /* first refuse anything foreign, then remove */
    for (int k = 0; k < npat; k++) {
      char dpath[CF_PATH_MAX + 64];
      snprintf(dpath, sizeof dpath, "%s%s%s", o->dir, pat[k].sub[0] ? "/" : "", pat[k].sub);
      DIR* dir = opendir(dpath);
      if (!dir) continue;
      struct dirent* e;
      while ((e = readdir(dir))) {
        if (!name_matches(e->d_name, &pat[k])) continue;
        char f[CF_PATH_MAX + 320];
        snprintf(f, sizeof f, "%s/%s", dpath, e->d_name);
        const char* head = head_of(&pat[k]);
        int ours = head && starts_with_file(f, head);
        if (pass == 0 && !ours) {
          closedir(dir);
          return cf_error(CF_ERR_IO, "%s: has the name of a file this run writes, but cofem did not write it "
                          "(not overwritten): move it away or choose another folder (--out)", f);
        }
        if (pass == 1 && ours && remove(f) == 0) ++*removed;
      }
      closedir(dir);
    }
  }
  return CF_OK;
}
