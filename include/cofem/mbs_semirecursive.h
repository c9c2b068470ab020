/* Semi-recursive dynamics in relative coordinates (paper 000, Lugris et al., sections 2-3; issue 29,
 * item 2), rigid, virtual and modal bodies (a modal body's amplitudes are coordinates of the body; its
 * joints at frame points only: a joint at a node set is refused). The mechanism's spanning tree (cofem/mbs_topology.h) is described by the
 * relative coordinates z of its joints; body velocities Z_i = (s_dot, omega) (s_dot: the velocity of
 * the body point at the global origin) follow from the root to the leaves, Z_i = Z_parent + b_i z_dot_i
 * (eq. 8), the leading matrix R^T Mbar R and forces R^T (Qbar - Mbar R_dot z_dot) (eq. 25) are
 * accumulated from the leaves to the root (eqs. 30-33; paper 002's condensation: each body's inertia
 * added to its parent's), the cut joints' and drivers' equations are those of the global model
 * evaluated at the natural coordinates the tree gives, Phi_z = Phi_q q_z (eq. 34), and the same
 * index-3 augmented Lagrangian + trapezoidal rule + projections integrate it (eqs. 35-39).
 *
 * It runs beside a global cfMbsModel / cfMbsData of the same definition: the model supplies the
 * equations, forces and the assembled initial state; every step writes the natural coordinates of the
 * tree's poses, velocities and accelerations into the data, so every query (points, angles, energy,
 * violation, output channels) works unchanged. The multipliers of the closure equations are in
 * d->lambda / d->reaction; the tree joints' reactions are NAN until cf_mbs_sr_reactions. */
#ifndef COFEM_MBS_SEMIRECURSIVE_H
#define COFEM_MBS_SEMIRECURSIVE_H
#include "cofem/mbs.h"
#include "cofem/mbs_topology.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cfMbsSr cfMbsSr;

/* Build the formulation from the model and start it at d's state (z = 0 at the current poses, z_dot
 * from d->qd by least squares, initial accelerations and multipliers solved); d's accelerations and
 * multipliers are replaced by the formulation's. Errors (CF_ERR_UNSUPPORTED, naming the body, joint or
 * the option): FE bodies, joints at modal bodies' node sets, generalized-alpha (rho_inf < 1); CF_ERR_NOMEM. */
int cf_mbs_sr_create(const cfMbsModel* m, cfMbsData* d, cfMbsSr** out);
void cf_mbs_sr_free(cfMbsSr* s);
/* One step of dt (same tolerances, iteration limits and penalty rule as cf_mbs_step). Errors as
 * cf_mbs_step's; the state is left at the start of the step on error. */
int cf_mbs_sr_step(const cfMbsModel* m, cfMbsSr* s, cfMbsData* d);
const cfMbsTopology* cf_mbs_sr_topology(const cfMbsSr* s);
int cf_mbs_sr_nz(const cfMbsSr* s);
/* the relative coordinates and their rates now */
const double* cf_mbs_sr_z(const cfMbsSr* s);
const double* cf_mbs_sr_zd(const cfMbsSr* s);
/* The tree joints' reactions at the current state (after a step: a backward recursion of the bodies'
 * inertia, applied and closure forces), written into d->reaction as the global formulation's
 * multipliers of those joints' equations, so that cf_mbs_joint_reaction gives them; one force
 * evaluation and a small solve per joint (not done by cf_mbs_sr_step itself: call it where wanted). */
void cf_mbs_sr_reactions(const cfMbsModel* m, cfMbsSr* s, cfMbsData* d);
/* the leading mass matrix R^T Mbar R [nz x nz] (row-major) at the current state, from the recursion */
void cf_mbs_sr_mass_matrix(const cfMbsModel* m, cfMbsSr* s, cfMbsData* d, double* Mz);
/* Paper 002's effective-mass reading of the backward recursion: the mass of body's subtree condensed on
 * that body, M6 [6 x 6] (row-major) in the global twist basis (s_dot, w) (s_dot: the velocity of the body
 * point at the global origin), at the current poses. free_joints 1: the joints below body move freely
 * (each eliminated body's effective mass, Mc - Mc B (B^T Mc B)^-1 B^T Mc, added to its parent's), and so do
 * the modal bodies' amplitudes (Mbar - C Myy^-1 C^T); 0: they are locked (eq. 30's composite inertia). d:
 * the data the formulation runs on. CF_ERR_ARG for a bad body id. */
int cf_mbs_sr_condensed_mass(const cfMbsModel* m, cfMbsSr* s, cfMbsData* d, int body, int free_joints, double M6[36]);
/* the penalty alpha in use (1e5 times the largest diagonal mass term, times 4 / h^2, unless
 * "solver.penalty" gives one) */
double cf_mbs_sr_penalty(const cfMbsSr* s);

#ifdef __cplusplus
}
#endif
#endif
