/* Modal (flexible) bodies in the multibody core (issue 9; docs/mbs.md, "Modal bodies"):
 * a floating frame in natural coordinates (r, u, v, w: 12 coordinates, 6 rigidity equations,
 * exactly as a rigid body) plus the modal amplitudes y of a Craig-Bampton reduction
 * (cofem/reduce.h). A node p of the mesh is at
 *     x_p = r + A (s_p + Phi_p y),   A = [u v w],
 * bilinear in (u, v, w) and y. The mass matrix B^T M_FEM B (paper 000 eq. 14) is assembled from
 * the reduction's inertia invariants (mass, c, J, P, T, S) at the current y and A; the quadratic
 * velocity forces -B^T M_FEM Bdot qd (eq. 15) reduce to the Coriolis terms 2 Adot Phi ydot (the
 * centripetal terms are in the linear Mbar (x) I3 part); elastic forces -K_r y and modal damping
 * -2 zeta w ydot; gravity and point loads at any FE node.
 *
 * The modal amplitudes are carried by extra "amplitude blocks": bodies of 12 coordinates each
 * (the last one padded; padded coordinates have unit mass, no force, and stay at 0) with no
 * rigidity equations, appended after the definition's bodies. The frame keeps the body id
 * returned by cf_mbs_add_modal_body, so joints, markers, forces and queries on it work as on a
 * rigid body (they act on the frame: on points that the modes do not move when the modes are
 * clamped there, as in paper 000, section 3.1). */
#ifndef COFEM_MBS_MODAL_H
#define COFEM_MBS_MODAL_H
#include "cofem/mbs.h"
#include "cofem/mesh.h"
#include "cofem/reduce.h"

#ifdef __cplusplus
extern "C" {
#endif

struct cfModel;       /* cofem/fem.h */
struct cfStressField; /* cofem/fem.h */

#define CF_MBS_MODAL_MAX_MODES 240 /* modes (columns of the basis less the rigid ones) per modal body */
#define CF_MBS_MODAL_MAX_LOADS 16
#define CF_MBS_MODAL_MAX_POINTS 16

/* A point of a modal body that moves with the modes: one FE node, or the mean of several (an
 * RBE3-like average: x = r + A (sbar + Phibar y), sbar and Phibar the means of the nodes' rest
 * positions and mode rows). Joints attach to it (cfMbsJointDef.modal_point1/2): this is how a
 * joint sits at an interface node, and how a massless virtual body is attached there with a
 * fixed joint (paper 004, section 4). */
typedef struct cfMbsModalPoint {
  char name[CF_MBS_NAME_MAX];
  int nnode;
  int* nodes;                /* [nnode], owned by the definition (copied by cf_mbs_add_modal_point) */
} cfMbsModalPoint;

/* A point load at an FE node, or at a modal point (the mean of its nodes: the force is shared
 * equally by them, as an RBE3 spreads it); it follows the point, modal displacement included. */
typedef struct cfMbsModalLoad {
  int node;
  int at_point;              /* 1: at modal point `point` instead of `node` */
  int point;
  double force[3];           /* [N] global, or in the frame's axes when body_frame */
  int body_frame;
  int has_scale;             /* force times scale(t) */
  cfMbsFunc scale;
} cfMbsModalLoad;

/* cfMbsModalDef.geometric_stiffening: which inertial loads the geometric stiffness follows */
typedef enum cfMbsGeometricStiffening {
  CF_MBS_GSTIFF_OFF = 0,
  CF_MBS_GSTIFF_RATES = 1,        /* the frame's angular velocity (centrifugal load) and gravity: exact at every
                                     Newton iterate; the scene key "geometric_stiffening": true */
  CF_MBS_GSTIFF_ACCELERATIONS = 2 /* also its angular and linear acceleration, those at the start of the step
                                     (one step's lag): unstable on a free-interface modal body (the spin-up
                                     beam, docs/craig-bampton.md) */
} cfMbsGeometricStiffening;

typedef struct cfMbsModalDef {
  int body;                  /* id of the frame body in the definition (set by cf_mbs_add_modal_body) */
  const cfReduction* red;    /* borrowed until cf_mbs_model_create returns (the model copies what it uses) */
  const double* X;           /* [3 nnode] rest positions of the reduction's mesh (mesh.X), borrowed as red */
  int first_mode;            /* modes [first_mode, first_mode + nmodes) of the reduction; -1 (default):
                                red->nrigid, i.e. the rigid-body modes are left out (the frame has them) */
  int nmodes;                /* -1 (default): all the remaining ones */
  double damping;            /* modal damping ratio of every mode used; < 0 (default): the reduction's zeta */
  const double* y0;          /* [nmodes] initial amplitudes, or NULL (0); borrowed as red */
  const double* yd0;         /* [nmodes] initial amplitude rates, or NULL (0) */
  int geometric_stiffening;  /* cfMbsGeometricStiffening: the modal stiffness gains sum_c lambda_c Kg_c, the
                                geometric stiffness of the stress that the frame's inertial loads cause in
                                the part; needs red->Kg (cf_reduction_geometric). 0 (default): linear
                                modes only. docs/craig-bampton.md, "Geometric stiffening" */
  int nload;
  cfMbsModalLoad load[CF_MBS_MODAL_MAX_LOADS];
  int npoint;                /* modal points, added by cf_mbs_add_modal_point */
  cfMbsModalPoint point[CF_MBS_MODAL_MAX_POINTS];
} cfMbsModalDef;

cfMbsModalDef cf_mbs_default_modal_def(void);

/* Add a modal body: the frame body b (name, pose, velocities of `frame`; its mass, com and inertia
 * are replaced by the reduction's, those of the undeformed part) and the modal definition md.
 * Returns the frame's body id, or a negative status. The reduction must be orthonormalised
 * (M_r = I). The mesh frame of the reduction is the body frame. */
int cf_mbs_add_modal_body(cfMbsDef* def, const cfMbsBodyDef* frame, const cfMbsModalDef* md);
/* Add a point load to modal body `body` (frame id); returns its index or a negative status. */
int cf_mbs_add_modal_load(cfMbsDef* def, int body, const cfMbsModalLoad* load);

/* Add a modal point to modal body `body` (frame id): FE node nodes[0], or the mean of nodes[0 ..
 * nnode - 1] (copied). Returns its index (for cfMbsJointDef.modal_point1/2) or a negative status
 * (unknown node, not a modal body, duplicate name). */
int cf_mbs_add_modal_point(cfMbsDef* def, int body, const char* name, const int* nodes, int nnode);
/* Index of the modal point called name on modal body `body`, or -1. */
int cf_mbs_find_modal_point(const cfMbsDef* def, int body, const char* name);

/* ---- queries (ib: modal body index, 0 .. m->nmodal - 1; cf_mbs_modal_index maps a frame id) ---- */
int cf_mbs_modal_index(const cfMbsModel* m, int body);          /* -1 if body is not modal */
int cf_mbs_modal_nmodes(const cfMbsModel* m, int ib);
int cf_mbs_modal_frame(const cfMbsModel* m, int ib);            /* the frame's body id */
/* Modal amplitudes and their rates (pointers into d->q, d->qd; nmodes entries). */
const double* cf_mbs_modal_y(const cfMbsModel* m, const cfMbsData* d, int ib);
const double* cf_mbs_modal_yd(const cfMbsModel* m, const cfMbsData* d, int ib);
/* Global position and velocity of FE node `node`, modal displacement included. */
void cf_mbs_modal_node(const cfMbsModel* m, const cfMbsData* d, int ib, int node, double x[3], double v[3]);
/* Local elastic displacement Phi_p y of a node, in the frame's axes. */
void cf_mbs_modal_node_disp(const cfMbsModel* m, const cfMbsData* d, int ib, int node, double u[3]);
/* Linear momentum and angular momentum about the global origin of the modal body. */
void cf_mbs_modal_momentum(const cfMbsModel* m, const cfMbsData* d, int ib, double p[3], double L[3]);
/* Elastic energy 1/2 y^T K_r y of the modal body (also in cf_mbs_energy's potential). */
double cf_mbs_modal_elastic_energy(const cfMbsModel* m, const cfMbsData* d, int ib);
/* All node positions [3 nnode] and velocities (v may be NULL). */
void cf_mbs_modal_nodes(const cfMbsModel* m, const cfMbsData* d, int ib, double* x, double* v);
/* Write the deformed mesh (global node positions; point data "displacement" = x - X of the mesh,
 * "velocity"; with fem, the FE model of the reduction's mesh, the stress and strain of
 * cf_mbs_modal_stress, cell and point data) with cf_vtu_write_stress. mesh must be the reduction's mesh. */
int cf_mbs_modal_write_vtu(const cfMbsModel* m, const cfMbsData* d, int ib, const struct cfModel* fem,
                           const cfMesh* mesh, const char* path);
/* Strain and stress of modal body ib into s (cf_stress_field_init(s, fem)): the small strain of the
 * elastic displacement Phi y in the frame's axes, sigma = C eps; fem: the FE model of the
 * reduction's mesh (its E, nu, elements). */
int cf_mbs_modal_stress(const cfMbsModel* m, const cfMbsData* d, int ib, const struct cfModel* fem,
                        struct cfStressField* s);

#ifdef __cplusplus
}
#endif
#endif
