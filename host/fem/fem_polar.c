/* Stage 1: element rotations R_e = polar(Ds_e Dm_e^-1), warm-started from the last step (F at the
 * centroid for quadratic elements, cf_tet10_elem_polar; and at their quadrature points,
 * cf_tet10_elem_polar_qp, with "rotations": "quadrature"). */
#include "cofem/fem.h"
#include "fem/fem_element.h"
#include "fem/fem_parallel.h"

void cf_stage_polar(const cfModel* m, cfData* d) {
  int ninv = 0;
  const int nt = cf_threads(m);
  if (m->ntet > 4096 && nt > 1) { /* see CF_FOR (fem_parallel.h) */
#pragma omp parallel num_threads(nt) reduction(+ : ninv)
    {
      CF_NOTE_TEAM();
#pragma omp for schedule(static)
      for (int e = 0; e < m->ntet; e++)
        ninv += m->npe == 10 ? cf_tet10_elem_polar(e, m->tet, m->Gc, d->x, d->R) |
                                   (m->Gq ? cf_tet10_elem_polar_qp(e, m->tet, m->Gq, d->x, d->Rq) : 0)
                             : cf_elem_polar(e, m->tet, m->Dm_inv, d->x, d->R);
    }
  } else {
    for (int e = 0; e < m->ntet; e++)
      ninv += m->npe == 10 ? cf_tet10_elem_polar(e, m->tet, m->Gc, d->x, d->R) |
                                 (m->Gq ? cf_tet10_elem_polar_qp(e, m->tet, m->Gq, d->x, d->Rq) : 0)
                           : cf_elem_polar(e, m->tet, m->Dm_inv, d->x, d->R);
  }
  d->ninverted = ninv;
}

_Thread_local int cf_fem__last_team;
