/* The joint graph of a mechanism (issue 29, item 1): the spanning tree rooted at the ground, the cut
 * joints that close its loops, the relative coordinates of each tree joint, Grubler's mobility count
 * and the structural (Assur) groups of paper 001 (Saura et al.) in their solve order. It is the
 * topology the semi-recursive formulation (cofem/mbs_semirecursive.h, paper 000 section 3) runs on.
 * See docs/mbs.md, "Topological formulation". */
#ifndef COFEM_MBS_TOPOLOGY_H
#define COFEM_MBS_TOPOLOGY_H
#include "cofem/mbs.h"

#ifdef __cplusplus
extern "C" {
#endif

/* a body with no path to the ground hangs from it by a floating joint of 6 coordinates: three
 * translations along the global axes, then three rotations about the body's x, y, z (Cardan) */
#define CF_MBS_FLOATING (-3)

enum cfMbsJointRole { CF_MBS_ROLE_TREE = 0, CF_MBS_ROLE_CUT = 1 };

typedef struct cfMbsTopology {
  int nbody, njoint;   /* nbody: the bodies in the tree (a flexible body's amplitude or node blocks are
                          coordinates of its frame body, not bodies: parent_joint CF_MBS_NONE) */
  /* the tree: bodies in breadth-first order from the ground (every parent before its children) */
  int* order;          /* [nbody] */
  int* parent;         /* [model's nbody] parent body (CF_MBS_GROUND for the ground's children and floating bodies) */
  int* parent_joint;   /* [model's nbody] the tree joint to the parent, or CF_MBS_FLOATING (or CF_MBS_NONE) */
  int* depth;          /* [model's nbody] joints from the ground */
  /* joints */
  int* role;           /* [njoint] enum cfMbsJointRole (distance joints are always cut) */
  int* reversed;       /* [njoint] tree joints whose body1 is the child */
  /* relative coordinates: body b's joint to its parent owns z[z0[b] .. z0[b] + nz_body[b] - 1] */
  int* z0;             /* [nbody] */
  int* nz_body;        /* [nbody] revolute 1, prismatic 1, cylindrical 2, universal 2, spherical 3,
                          fixed 0, floating 6 */
  int nz, ncut, nfloating;
  int ncut_eq;         /* equations of the cut joints (closure equations) */
  /* Grubler-Kutzbach counts (the mechanism's own mobility, drivers not counted):
   * spatial 6 nbody - sum of the joints' equations; planar 3 nbody - 2 (revolute + prismatic) -
   * 3 fixed - 1 distance, when every revolute axis is parallel and every prismatic axis
   * perpendicular to one direction (else planar = 0 and mobility_planar is meaningless) */
  int mobility_spatial, planar, mobility_planar;
  int mobility;        /* the count that applies: planar when planar, else spatial */
  int ndriver;
  /* structural groups (paper 001): groups of bodies, each of mobility 0 once the bodies before it are
   * known (its drivers counted), listed in solve order. The first are the inputs: a body driven by a
   * joint to known bodies, or, where the mechanism has more mobility than drivers, a ground-jointed
   * body chosen as input (input_chosen). A last group of kind "rest" holds what no group resolves. */
  int ngroup;
  int* group_ptr;      /* [ngroup + 1] into group_body */
  int* group_body;     /* [nbody] */
  char (*group_kind)[32]; /* [ngroup] "input", "dyad RRR", "dyad RRP", "triad", "group of 5", "rest" */
  int* input_chosen;   /* [ngroup] 1: an undriven input the analysis chose */
} cfMbsTopology;

/* The topology of the model's mechanism at its assembled initial state (q0 gives the joint axes for
 * the planar test). Errors: CF_ERR_NOMEM. */
int cf_mbs_topology_create(const cfMbsModel* m, cfMbsTopology** out);
void cf_mbs_topology_free(cfMbsTopology* t);
/* relative coordinates of a joint of this type in the tree (-1: a distance joint, never a tree joint) */
int cf_mbs_joint_dofs(int type);
/* "revolute", "prismatic", ... */
const char* cf_mbs_joint_type_name(int type);

/* ---- kinematics by structural groups (paper 001; issue 29, item 3) -------------------------------
 * The kinematic analysis of a fully driven mechanism solved group by group in the diagram's order:
 * each group's bodies' natural coordinates by its own small Newton (Gauss-Newton on the group's
 * equations: its bodies' rigidity, the joints and drivers between it and the bodies already known),
 * started from the previous step's prediction, so each dyad keeps its assembly branch (a planar RRR
 * dyad in closed form: two circles' intersection on the predicted side); then its velocities and
 * accelerations by the same small least-squares solves. Same results as
 * cf_mbs_kinematic_step (tested to 1e-10 on paper 001's scalable linkage). */
typedef struct cfMbsGroupKin cfMbsGroupKin;
/* Errors: CF_ERR_ARG when the mechanism has degrees of freedom left (every motion must be driven). */
int cf_mbs_group_kin_create(const cfMbsModel* m, cfMbsGroupKin** out);
void cf_mbs_group_kin_free(cfMbsGroupKin* g);
const cfMbsTopology* cf_mbs_group_kin_topology(const cfMbsGroupKin* g);
/* t += dt: positions, velocities, accelerations group by group. Errors (CF_ERR_SOLVER) name the group
 * and its bodies: a dead point (the group's Jacobian singular: the dyad cannot be assembled beyond it)
 * or a Newton iteration that does not converge. The state is left at the start of the step. */
int cf_mbs_group_kin_step(const cfMbsModel* m, cfMbsGroupKin* g, cfMbsData* d);
/* planar RRR dyads' positions in closed form (on: the default) or by the Gauss-Newton of every group */
void cf_mbs_group_kin_set_closed_form(cfMbsGroupKin* g, int on);
/* Gauss-Newton updates made so far (a closed-form dyad makes none) */
long cf_mbs_group_kin_newton_iterations(const cfMbsGroupKin* g);

#ifdef __cplusplus
}
#endif
#endif
