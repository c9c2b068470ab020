/* The mechanism's divergence monitor: a step after which a flexible body's shape cannot be right
 * fails with CF_ERR_DIVERGED, instead of the run being reported as done. (The linear modal body of
 * the spin-up beam past its first frequency deflected 80 times its own size by the end of the
 * short spin-up, and `cofem run` said "done"; its Newton iteration converges on the linear modal
 * equations however far the body has gone.)
 *
 * The test, per flexible body (corotational, lumped or modal), every MON_EVERY steps:
 *   max_i |x_i - c| > MON_SIZES r0,   c the mean of the node positions x_i,
 *                                     r0 = max_i |x_i - c| of the body at the start,
 * the body's radius about its centre against its starting radius. Any rigid motion keeps it, so no
 * frame or rotation is needed; a real part would have to stretch MON_SIZES-fold. A body that
 * diverges grows geometrically (the spin-up's modal beam: 3 m at 10 s, 180 m at 12 s), so checking
 * every few steps finds it within a few steps of crossing. The same bound as the FE part's own
 * monitor in spirit (fem_divergence.c: 100 part sizes there, with the energy test before it; here
 * the radius test alone, so 10).
 *
 * On failure the step is undone (the state of its start), so what is written is the last sane
 * state, and the message names the body, the step, the time and what to try. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cofem/mbs.h"
#include "cofem/mbs_fe.h"
#include "cofem/mbs_modal.h"
#include "mbs/mbs_internal.h"

enum { MON_SIZES = 10, MON_EVERY = 4 };

struct cfMbsMonitor {
  int nflex;
  int* body;      /* [nflex] the flexible bodies */
  double* r0;     /* [nflex] their starting radii */
  double* x;      /* [3 max nnode] scratch */
};

/* max_i |x_i - c| over n points */
static double radius(const double* x, int n) {
  double c[3] = {0, 0, 0}, r2 = 0;
  for (int i = 0; i < n; i++)
    for (int k = 0; k < 3; k++) c[k] += x[3 * i + k] / n;
  for (int i = 0; i < n; i++) {
    double s = 0;
    for (int k = 0; k < 3; k++) s += (x[3 * i + k] - c[k]) * (x[3 * i + k] - c[k]);
    if (!(s <= r2)) r2 = s; /* a NaN propagates */
  }
  return sqrt(r2);
}

void cf_mbs__monitor_free(cfMbsData* d) {
  struct cfMbsMonitor* mon = d->monitor;
  if (!mon) return;
  free(mon->body), free(mon->r0), free(mon->x), free(mon);
  d->monitor = NULL;
}

int cf_mbs__monitor_create(const cfMbsModel* m, cfMbsData* d) {
  int nflex = 0, nmax = 0;
  for (int b = 0; b < m->nbody; b++) {
    if (cf_mbs_fe_index(m, b) < 0 && cf_mbs_modal_index(m, b) < 0) continue;
    int nn = cf_mbs_flex_nnode(m, b);
    if (nn <= 0) continue;
    nflex++;
    if (nn > nmax) nmax = nn;
  }
  if (!nflex) return CF_OK;
  struct cfMbsMonitor* mon = calloc(1, sizeof *mon);
  if (!mon) return cf_error(CF_ERR_NOMEM, "mechanism data: out of memory");
  d->monitor = mon;
  mon->body = malloc(sizeof(int) * (size_t)nflex);
  mon->r0 = malloc(sizeof(double) * (size_t)nflex);
  mon->x = malloc(sizeof(double) * 3 * (size_t)nmax);
  if (!mon->body || !mon->r0 || !mon->x) return cf_error(CF_ERR_NOMEM, "mechanism data: out of memory");
  for (int b = 0; b < m->nbody; b++) {
    if (cf_mbs_fe_index(m, b) < 0 && cf_mbs_modal_index(m, b) < 0) continue;
    int nn = cf_mbs_flex_nnode(m, b);
    if (nn <= 0) continue;
    int st = cf_mbs_flex_nodes(m, d, b, mon->x, NULL);
    if (st < 0) return st;
    mon->body[mon->nflex] = b;
    mon->r0[mon->nflex++] = radius(mon->x, nn);
  }
  return CF_OK;
}

int cf_mbs__monitor_check(const cfMbsModel* m, cfMbsData* d) {
  struct cfMbsMonitor* mon = d->monitor;
  if (!mon || d->steps % MON_EVERY) return CF_OK;
  for (int k = 0; k < mon->nflex; k++) {
    const int b = mon->body[k], nn = cf_mbs_flex_nnode(m, b);
    double r;
    /* a GPU body's nodes on the device: its radius there (one number down, not the mesh) */
    int st = cf_mbs__fe_device_radius(m, d, cf_mbs_fe_index(m, b), &r);
    if (st < 0) return st;
    if (st == 0) {
      if ((st = cf_mbs_flex_nodes(m, d, b, mon->x, NULL)) < 0) return st;
      r = radius(mon->x, nn);
    }
    const double r0 = mon->r0[k];
    if (r <= MON_SIZES * r0 || !(r0 > 0)) continue;
    const int modal = cf_mbs_modal_index(m, b) >= 0;
    return cf_error(CF_ERR_DIVERGED,
                    "flexible body '%s' diverged: a node %.3g m from its centre, %.3g times its radius at the start "
                    "(%.3g m)%s",
                    m->body_name[b], r, r / r0, r0,
                    modal ? "; a linear modal body has no geometric stiffening unless asked for: a part spun or loaded "
                            "past its first frequency needs it, or the corotational formulation; else a smaller time step"
                          : "; try a smaller time step");
  }
  return CF_OK;
}
