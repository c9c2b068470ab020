/* FE bodies in the multibody core, "lumped" formulation (paper 003, section 6, the second ADAMS
 * coupling; docs/mbs.md, "FE bodies"): every node of the co-rotational FE mesh is a point mass of
 * the mechanism (its lumped mass), the co-rotational internal force at each node is a force of the
 * mechanism, and its tangent K_R enters the leading matrix of the index-3 augmented Lagrangian
 * integrator, which solves the whole system (trapezoidal rule: second order, no numerical damping).
 *
 * Coordinates: the node positions x_n, four nodes per 12-coordinate block (the four coordinate
 * triplets of a block are four nodes; Mbar = diag of their masses, so the mechanism's mass matrix
 * M = Mbar (x) I3 is the lumped FE mass). The body id returned by cf_mbs_add_fe_body is the first
 * node block; the others are appended after the definition's bodies. Nodes are renumbered so that
 * the node sets joints attach to sit in as few blocks as possible. No rigidity equations.
 *
 * Joints attach at FE points (the mean of a node set, RBE3-like: x_P = mean of x_n): spherical
 * joints at the point; revolute joints add the direction through the means of the set's two
 * halves along the joint axis (the set must span the axis, e.g. a hole's nodes through the
 * thickness). Loads at a node set are shared equally by its nodes. Gravity acts on every node.
 * Rayleigh damping of the FE scene: C = alpha M + beta K_R. */
#ifndef COFEM_MBS_FE_H
#define COFEM_MBS_FE_H
#include "cofem/fem.h"
#include "cofem/mbs.h"
#include "cofem/mbs_modal.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CF_MBS_FE_MAX_POINTS 16
#define CF_MBS_FE_MAX_LOADS 16

typedef struct cfMbsFeDef {
  int body;                  /* id of the first node block (set by cf_mbs_add_fe_body) */
  int corotational;          /* 0: "lumped" (CHOLMOD factors every node with the mechanism); 1:
                                "corotational": the FE scene's mass (consistent or lumped), the nodes
                                condensed out of the mechanism's factorisation (docs/mbs.md) */
  int exact_factor;          /* corotational: 1 (scenes' default) the part's matrix factored anew at
                                every step; 0 its matrix at rest factored once and applied rotated by
                                its node rotations (scene key "factor": "exact" | "rotated") */
  int a0_pcg;                /* corotational: 1 no factor: the part's matrix is solved by the PCG
                                ("factor": "pcg") with the preconditioner of the FE model (AMG, block
                                Jacobi or rotated Cholesky: the scene's "preconditioner") to its
                                pcg_tol (the scene's "tol"), the solves warm-started when its
                                warm_start is on; mechanism statics factors it (docs/mbs.md, "No
                                factor"); exact_factor is then 0 */
  int factor_given;          /* the scene gave "factor" (else "exact", the default) */
  int cuda;                  /* a0_pcg: 1 the part's stages and PCG run on the CUDA backend
                                (cofem/cuda.h; "backend": "cuda"), 0 on the CPU */
  const cfModel* fem;        /* the FE model (no supports), borrowed for the life of the mechanism model */
  double pos[3], rot[9];     /* placement: node n starts at pos + rot X_n */
  double vel[3], omega[3];   /* ... with velocity vel + omega x (rot X_n) */
  int npoint;
  cfMbsModalPoint point[CF_MBS_FE_MAX_POINTS]; /* node sets joints and loads attach to */
  int nload;
  cfMbsModalLoad load[CF_MBS_FE_MAX_LOADS];    /* at_point loads only (global directions) */
} cfMbsFeDef;

/* Add an FE body: the mesh of fem placed by b's pose and velocities (b's mass and inertia are not
 * used: the nodes carry the mass). Returns the body id, or a negative status. */
int cf_mbs_add_fe_body(cfMbsDef* def, const cfMbsBodyDef* b, const cfModel* fem);
/* The same with the formulation: 0 lumped, 1 corotational. */
int cf_mbs_add_fe_body_as(cfMbsDef* def, const cfMbsBodyDef* b, const cfModel* fem, int corotational);
/* A point of FE body `body` at the mean of nodes[0 .. nnode - 1] (copied); returns its index (for
 * cfMbsJointDef.modal_point1/2, which name points of modal and FE bodies alike) or a negative
 * status. */
int cf_mbs_add_fe_point(cfMbsDef* def, int body, const char* name, const int* nodes, int nnode);
int cf_mbs_find_fe_point(const cfMbsDef* def, int body, const char* name);
/* A load at a point of an FE body (load->at_point must be 1; shared equally by its nodes). */
int cf_mbs_add_fe_load(cfMbsDef* def, int body, const cfMbsModalLoad* load);
/* Extra nodal forces on FE body ib (index, as below) [3 nnode, mesh order, global, N], added to its
 * loads at every force evaluation until replaced; NULL removes them. For interactive use (the
 * viewer's mouse spring): they are constant within a step, and neither statics nor the energy
 * report account for them. Copied; 0 or a negative status. */
int cf_mbs_fe_set_extra_force(const cfMbsModel* m, cfMbsData* d, int ib, const double* f);
/* Index of the FE body whose first block is `body` in the definition / model, or -1. */
int cf_mbs_def_fe_index(const cfMbsDef* def, int body);
int cf_mbs_fe_index(const cfMbsModel* m, int body);

/* ---- queries (ib: FE body index) ---- */
const cfModel* cf_mbs_fe_model(const cfMbsModel* m, int ib);
/* node positions and velocities [3 nnode] in mesh order (v may be NULL) */
void cf_mbs_fe_nodes(const cfMbsModel* m, const cfMbsData* d, int ib, double* x, double* v);
/* the mean of the nodes of point k at the current state */
void cf_mbs_fe_point(const cfMbsModel* m, const cfMbsData* d, int ib, int k, double x[3]);
double cf_mbs_fe_total_mass(const cfMbsModel* m, int ib);
/* PCG iterations of FE body ib's solves since the data was made ("factor": "pcg"; 0 otherwise);
 * of them, those of the interface columns Z = A0^-1 J_F^T (the warm-started solves) into
 * *interface when not NULL; the rest solve the Newton corrections, from 0. */
long cf_mbs_fe_pcg_iterations(const cfMbsModel* m, const cfMbsData* d, int ib, long* interface);
/* The linear coupling's counters of FE body ib since the data was made: steps linearised, interface
 * columns checked against the part's current matrix, of them corrected by the PCG, and the PCG
 * iterations of the free-motion solves and of the corrections (any pointer may be NULL). */
void cf_mbs_fe_linear_stats(const cfMbsModel* m, const cfMbsData* d, int ib, long* steps, long* checked,
                            long* corrected, long* free_iters, long* corr_iters);
/* The interface of FE body ib in the linear coupling: the nodes whose coordinates a step's generic
 * code reads (the node blocks of its joints' and points' node sets, which the body keeps in the
 * mechanism's q, qd, qdd while it integrates the rest itself: mbs_body_kind.h, "own"), and into
 * *rows the joint equations condensed onto it. 0 (rows 0) for a body not linearly coupled. */
int cf_mbs_fe_interface_nodes(const cfMbsModel* m, const cfMbsData* d, int ib, int* rows);
/* The bytes FE body ib's GPU backend ("backend": "cuda") has copied between the host and the device
 * since the data was made, the model's upload included (cf_cuda_bus_bytes): per step, the
 * difference across cf_mbs_step. Returns CF_OK, or CF_ERR_ARG (both set to 0) for a body without
 * a device. */
int cf_mbs_fe_bus_bytes(const cfMbsModel* m, const cfMbsData* d, int ib, unsigned long long* h2d,
                        unsigned long long* d2h);
/* Nodes of the scene's FE bodies (lumped and corotational; modal bodies not counted): the size
 * cf_default_threads (cofem/fem.h) takes for a mechanism. */
long cf_mbs_scene_fe_nodes(const cfMbsScene* s);
/* centre of mass position and velocity (either may be NULL) */
void cf_mbs_fe_centre(const cfMbsModel* m, const cfMbsData* d, int ib, double x[3], double v[3]);
/* co-rotational strain energy at the current state */
double cf_mbs_fe_elastic_energy(const cfMbsModel* m, const cfMbsData* d, int ib);
/* linear momentum and angular momentum about the origin */
void cf_mbs_fe_momentum(const cfMbsModel* m, const cfMbsData* d, int ib, double p[3], double L[3]);
/* deformed mesh (point data "displacement" = x - X, "velocity"; the co-rotated stress and strain of
 * the node positions, cell and point data: cf_stress_field_corotated) with cf_vtu_write_stress */
int cf_mbs_fe_write_vtu(const cfMbsModel* m, const cfMbsData* d, int ib, const cfMesh* mesh, const char* path);

#ifdef __cplusplus
}
#endif
#endif
