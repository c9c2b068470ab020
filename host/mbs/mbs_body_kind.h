/* Multibody core: the interface a body kind provides (not public).
 *
 * A body kind (modal bodies: mbs_modal.c, FE bodies: mbs_fe.c) adds coordinate blocks after the
 * rigid bodies' and its part to each stage. The generic code (mbs_model.c, mbs_solver.c,
 * mbs_forces.c, mbs_kinematics.c) loops over cf_mbs__body_kinds in table order and never names a
 * kind; a NULL op means "nothing to do" and is skipped. Every op is a no-op for a mechanism
 * without bodies of its kind.
 *
 * A kind may own its coordinates within a dynamic step (the ops at the end: the linear coupling's
 * corotational bodies, whose GPU bodies keep them on the device).
 *
 * Not yet behind the interface (called by name, one formulation only):
 *  - mbs_solver.c: cf_mbs__fe_factor, cf_mbs__fe_solve, cf_mbs__fe_jac_mult_condensed,
 *    cf_mbs__fe_condensed_row (the condensation of corotational FE bodies): would take
 *    `condense` (factor), `solve` and `jac_mult` ops, and a `condensed_row` query.
 *  - mbs_constraints.c: cf_mbs__modal_point, cf_mbs__modal_dir, cf_mbs__modal_dir_rows,
 *    cf_mbs__modal_point_disp, cf_mbs__fe_point, cf_mbs__fe_axis, cf_mbs__fe_slots,
 *    cf_mbs__fe_term (joint terms at a kind's named points): would take `point_terms` (a point's
 *    rows and slots), `point_axis` and `point_disp` ops.
 *  - mbs_fe.c's compile numbers its blocks after cf_mbs__modal_nblock's (the table's order):
 *    would take a first-block argument to `compile`.
 */
#ifndef COFEM_MBS_BODY_KIND_H
#define COFEM_MBS_BODY_KIND_H

#include "cofem/mbs.h"

typedef struct cfMbsStepCoef cfMbsStepCoef; /* mbs_internal.h */

typedef struct cfMbsBodyKind {
  const char* name;
  /* ---- definition and model ---- */
  /* number of coordinate blocks (12 coordinates each) the kind appends after the rigid bodies */
  int (*nblock)(const cfMbsDef* def);
  /* after the rigid bodies and the kinds before it in the table: fill its blocks (names, Mbar,
   * body_modal) and its model data; < 0 error (the model is then freed by model_free) */
  int (*compile)(const cfMbsDef* def, cfMbsModel* m);
  /* free what compile allocated; may run on a partly compiled model */
  void (*model_free)(cfMbsModel* m);
  /* free the kind's part of the definition */
  void (*def_free)(cfMbsDef* def);
  /* q, qd of its blocks at t = 0 (the rigid bodies' are already set) */
  void (*initial)(const cfMbsDef* def, const cfMbsModel* m, double* q, double* qd);
  /* the block pairs its matrices couple beyond the diagonal blocks: calls pair(a, b, ctx) */
  void (*pairs)(const cfMbsModel* m, void (*pair)(int a, int b, void* ctx), void* ctx);
  /* ---- data ---- */
  /* its per-data state, after the solver's; < 0 error (the data is then freed by data_free) */
  int (*data_create)(const cfMbsModel* m, cfMbsData* d);
  /* free what data_create allocated; may run on partly created data, before the solver's free */
  void (*data_free)(cfMbsData* d);
  /* ---- stages ---- */
  /* d->Q += its generalised forces at (q, qd, t) (d->Q holds the rigid part and the force
   * elements'); may keep the state the later assemble needs */
  void (*forces)(const cfMbsModel* m, cfMbsData* d, const double* q, const double* qd, double t);
  /* d->Ax += cM (its mass beyond Mbar) + cC C + cK K, at d->q and the state of the last forces */
  void (*assemble)(const cfMbsModel* m, cfMbsData* d, double cM, double cC, double cK);
  /* y += its mass beyond Mbar times x, at d->q */
  void (*apply_mass)(const cfMbsModel* m, const cfMbsData* d, const double* x, double* y);
  /* y += (cC C + cK K) x, its damping and stiffness at d->q and the state of the last forces (the
   * semi-recursive formulation's tangent of the kind's coordinates) */
  void (*apply_tangent)(const cfMbsModel* m, const cfMbsData* d, double cC, double cK, const double* x, double* y);
  /* its kinetic energy beyond 1/2 qd' Mbar qd, at d->qd */
  double (*kinetic)(const cfMbsModel* m, const cfMbsData* d);
  /* its potential energy beyond the rigid blocks' gravity (gravity of its blocks, strain) */
  double (*potential)(const cfMbsModel* m, const cfMbsData* d);
  /* ---- coordinates a kind integrates itself within a dynamic step (issue 27) ----
   * A kind may own coordinate ranges in a step (cf_mbs_step, from its start to its end, the
   * monitor's undo included): the step's generic loops (mbs_step.c, the projections' updates) then
   * leave them out, and the kind's ops below do their part of each, and its solves (mbs_solver.c)
   * keep the ranges' part of a solution to themselves (read by `update` and `project_add` only).
   * The linear coupling's corotational bodies own their nodes, so that a body on the GPU can keep
   * them on the device with only its interface crossing the bus (docs/cuda.md). All NULL for a kind
   * that owns nothing. */
  /* its ranges [lo, hi) in this step into lohi (at most cap pairs); returns their count */
  int (*own)(const cfMbsModel* m, cfMbsData* d, int* lohi, int cap);
  /* cf_mbs__save_state's and cf_mbs__restore_state's part of its ranges */
  void (*save)(const cfMbsModel* m, cfMbsData* d);
  void (*restore)(const cfMbsModel* m, cfMbsData* d);
  /* the predictor and the integrator's constants (cf_mbs__predict_range) */
  void (*predict)(const cfMbsModel* m, cfMbsData* d, const cfMbsStepCoef* c);
  /* qd, qdd of the Newton iterate (cf_mbs__rates_range) */
  void (*rates)(const cfMbsModel* m, cfMbsData* d, const cfMbsStepCoef* c);
  /* q += its part of the last solve (the Newton update); returns its largest |dq| (fmax: a NaN is
   * left out, as the generic loop does; the next constraint evaluation sees it) */
  double (*update)(const cfMbsModel* m, cfMbsData* d);
  /* qd (which 0) or qdd (1) += its part of the last solve (a projection's correction) */
  void (*project_add)(const cfMbsModel* m, cfMbsData* d, int which);
  /* the algorithmic acceleration of the accepted step (cf_mbs__accept_range) */
  void (*accept)(const cfMbsModel* m, cfMbsData* d, const cfMbsStepCoef* c);
} cfMbsBodyKind;

/* the kinds, defined at the end of their files */
extern const cfMbsBodyKind cf_mbs__modal_kind; /* mbs_modal.c */
extern const cfMbsBodyKind cf_mbs__fe_kind;    /* mbs_fe.c */

/* the table the generic code loops over (mbs_body_kinds.c): modal, then FE. The order is the
 * order of the blocks and of every stage's sums; it must not change. */
extern const cfMbsBodyKind* const cf_mbs__body_kinds[];
extern const int cf_mbs__nbody_kinds;

#endif
