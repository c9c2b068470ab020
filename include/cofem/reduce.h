/* Craig-Bampton reduction of a cofem model (docs/craig-bampton.md), as ADAMS builds its modal
 * flexible bodies (paper 003 sec. 2):
 *   1. constraint modes: a unit displacement of each interface DOF with the other interface DOFs
 *      held, the interior in static equilibrium: Psi_i = -K_ii^-1 K_ib (K_ii factored once by
 *      CHOLMOD, one solve per interface DOF);
 *   2. fixed-interface normal modes: the lowest eigenpairs of the model with its interface DOFs
 *      fixed (cf_modal_solve);
 *   3. the combined basis B = [Psi Phi], reduced K_r = B^T K B, M_r = B^T M B;
 *   4. orthonormalisation: K_r Q = M_r Q Lambda (dense), B <- B Q, so that M_r = I and
 *      K_r = Lambda. Of an unsupported part the six lowest are the rigid-body modes (zero
 *      frequency);
 *   5. the inertia invariants of the floating-frame equations, modal damping ratios.
 * K and M are the model's own: the element K_e (rest state) and the mass blocks Mblk (lumped or
 * consistent), the same the co-rotational solver uses; M is the one-point rule instead when
 * cfReduceOptions.modal.mass says so. DOFs the model fixes stay zero in every
 * mode. A reduction is written to / read from the file format of docs/reduction-format.md. */
#ifndef COFEM_REDUCE_H
#define COFEM_REDUCE_H
#include "cofem/fem.h"
#include "cofem/modal.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CF_REDUCTION_VERSION 4 /* 2: a checksum (64-bit FNV-1a) in the header; 3: interface points
                                * (written only when the reduction has some: without, the file is
                                * version 2 as before); 4: the points' section (maybe empty), then
                                * the modal geometric stiffness (Kg) section, written when Kg was
                                * computed; versions 2-4 are read */
#define CF_REDUCTION_NKG 12    /* geometric stiffness load cases (cf_reduction_geometric) */

/* Interface points with rotations (docs/craig-bampton.md, "Interface points"): a node set
 * reduced as ONE point with 6 DOFs (u_x, u_y, u_z, th_x, th_y, th_z) at the set's centroid X_P.
 *   rigid (RBE2-like): the set's nodes move as a rigid body with the point,
 *       u_n = u_P + th_P x (X_n - X_P);
 *   averaging (RBE3-like): the point's motion is the least-squares fit of the nodes' (equal
 *       weights), u_P = mean u_n, th_P = I_w^-1 sum_n r_n x u_n, I_w = sum_n (|r_n|^2 1 - r_n r_n^T),
 *       r_n = X_n - X_P; the set stays free to deform.
 * Its static modes are the unit motions of the DOFs in `dofs` (bit a: DOF a; 0 = all six), with
 * the other selected interface DOFs held and the point's unselected DOFs free (they take no
 * load): a pin at the end of a planar bar clamped at its other end keeps u_x, u_y, giving one
 * axial and one bending static mode (paper 000, sec. 4.1). For both kinds the point's motion
 * of a mode is the same fit of its nodes' (exact for the rigid kind). */
enum cfInterfacePointKind { CF_POINT_RIGID = 1, CF_POINT_AVERAGING = 2 };
#define CF_POINT_ALL_DOFS 0x3f
typedef struct cfInterfacePoint {
  const int* nodes;          /* the set's nodes (not collinear: the fit needs I_w invertible) */
  int nnode;
  int kind;                  /* cfInterfacePointKind */
  unsigned dofs;             /* bit a (0..5: x, y, z, rx, ry, rz) keeps DOF a's static mode; 0: all */
} cfInterfacePoint;

/* An interface point of a reduction: its motion in every mode. */
typedef struct cfReductionPoint {
  int kind, dofs;            /* dofs: the selected mask (never 0 here) */
  int nnode;
  int* nodes;                /* [nnode] */
  double x[3];               /* the centroid X_P (body frame) */
  double* motion;            /* [6 n]: row a, column j = DOF a of the point in mode j (a < 3:
                              * translation [m], a >= 3: small rotation [rad] per unit amplitude) */
} cfReductionPoint;

typedef struct cfReduceOptions {
  int nmodes;          /* fixed-interface normal modes (default 12; clipped to the free interior DOFs) */
  int orthonormalise;  /* 1 (default): B <- B Q (ADAMS); 0: keep [Psi Phi] (K_r, M_r full) */
  double damping;      /* modal damping ratio of every elastic mode (default 0.01); negative:
                        * ADAMS' default rule, 1% below 100 Hz, 10% below 1 kHz, 100% above */
  double rigid_tol;    /* rigid-body modes: the rigid motions in the basis's span, found by shape
                        * (a rigid field whose share of its mass norm outside the span is at most
                        * rigid_tol, default 1e-8; 7e-15 measured on the quadratic spin-up beam), never by a tolerance on w^2 */
  int geometric;       /* 1: also the modes' geometric stiffness (cf_reduction_geometric), computed
                        * by cf_modal_part_load (cf_reduce itself leaves it out); default 0 */
  int max_modes;       /* 0 (default): no limit; else the basis less its rigid-body modes may not
                        * exceed it, checked by cf_modal_part_load before anything is computed */
  cfModalOptions modal;/* for the fixed-interface eigenproblem; its mass (the model's blocks or
                        * the one-point rule) is also the one projected and in the invariants */
} cfReduceOptions;

cfReduceOptions cf_default_reduce_options(void);

/* The inertia invariants, for the discrete kinetic energy T = 1/2 sum_pq M_pq v_p . v_q (M_pq the
 * scalar mass coefficient of node pair p, q: lumped or consistent), node positions
 * u_p = s_p + Phi_p q in the body frame (s_p the rest position X_p, Phi_p the 3 x n rows of node p
 * in the basis). Everything else (paper 004 eq. 8/12, Shabana's nine invariants I1..I9, see
 * docs/craig-bampton.md) is a linear combination of:
 *   mass  = sum_pq M_pq                                  total mass (I1)
 *   c[a]  = sum_pq M_pq s_q,a                            first moment (I2); centre = c / mass
 *   J[ab] = sum_pq M_pq s_p,a s_q,b                      second moment; inertia about the origin
 *                                                        = tr(J) 1 - J (I8 in ADAMS' numbering: I7)
 *   P[a*n + j]           = sum_pq M_pq Phi_qj,a          modal participation (I3)
 *   T[(a*3+b)*n + j]     = sum_pq M_pq s_p,a Phi_qj,b    (I4, I5, I8 are its cross products)
 *   S[((a*3+b)*n + j)*n + k] = sum_pq M_pq Phi_pj,a Phi_qk,b   (I6 = S_xx + S_yy + S_zz, I7, I9) */
typedef struct cfReduction {
  int version;
  /* the model it came from (checked when a file is reused) */
  int nnode, ntet, ndof;
  int consistent_mass;
  double E, nu, rho;
  double fingerprint;  /* sum of X_i * (1 + i mod 7): detects another mesh with the same counts */
  char source[512];    /* mesh file */
  /* interface */
  int nbnode;          /* interface nodes */
  int* bnodes;         /* [nbnode] sorted node indices */
  int nb;              /* interface DOFs = constraint modes (the model's fixed DOFs excluded) */
  int* bdof;           /* [nb] DOF indices */
  int nk;              /* fixed-interface normal modes */
  double* fixed_omega2;/* [nk] their eigenvalues w^2 [rad^2/s^2] */
  /* the basis */
  int n;               /* nb + nk columns */
  int orthonormal;     /* 1: basis orthonormalised (M_r = I, K_r = diag(omega2)) */
  int nrigid;          /* rigid-body modes among the first (0 for a supported part) */
  double* basis;       /* [n * ndof] column j at basis + j * ndof */
  double* Kr;          /* [n * n] reduced stiffness B^T K B (row-major, symmetric) */
  double* Mr;          /* [n * n] reduced mass B^T M B */
  double* omega2;      /* [n] eigenvalues of (K_r, M_r), ascending [rad^2/s^2] */
  double* zeta;        /* [n] modal damping ratio (0 for rigid-body modes) */
  /* inertia invariants (see above) */
  double mass, c[3], J[9];
  double* P;           /* [3 n] */
  double* T;           /* [9 n] */
  double* S;           /* [9 n n] */
  /* timings [s] (not written to the file) */
  double t_constraint, t_normal, t_project, t_ortho, t_invariants, t_total;
  /* interface points (version 3; appended so that version-2 users' layout is unchanged).
   * Static modes [0, nb): the interface nodes' DOFs first (bdof >= 0), then the selected DOFs of
   * each point in order (bdof = -1 - (6 point + a)). */
  int npoint;
  cfReductionPoint* points;  /* [npoint] */
  /* (version 4; appended likewise) geometric stiffness of the modes (cf_reduction_geometric; docs/craig-bampton.md, "Geometric
   * stiffening"): Kg[c] = B^T Kg(sigma_c) B for the static stress sigma_c of unit load case c, the
   * body force per unit mass b(s) = sum_ab lambda_ab e_a s_b + sum_a lambda_a e_a (s the rest
   * position, body axes): c = 3a + b for lambda_ab (0..8), 9 + a for lambda_a (9..11). */
  int nkg;             /* 0 (not computed) or CF_REDUCTION_NKG */
  double* Kg;          /* [nkg n n] row-major, symmetric */
  double t_geometric;  /* cf_reduction_geometric [s] (not written) */
} cfReduction;

/* Reduce model m with interface nodes bnodes[nbnode] (any order, duplicates allowed; nbnode 0:
 * normal modes only); linear or quadratic tetrahedra (the one-point mass: linear only,
 * CF_ERR_UNSUPPORTED). out is filled (free it with cf_reduction_free). Errors: K_ii singular (the
 * interface and the model's supports do not hold the part against rigid-body motion: a single
 * interface node of a free solid does not), too few free DOFs, out of memory. */
int cf_reduce(const cfModel* m, const int* bnodes, int nbnode, const cfReduceOptions* opt,
              cfReduction* out);
/* The same with interface points pts[npoint] besides the interface nodes (a node may be in one of
 * them only; a point's nodes may not be fixed by the model). Errors also: a collinear set, an
 * averaging point on a part nothing else holds (K singular with the set free), a point whose
 * free DOFs leave the part free to move. */
int cf_reduce_points(const cfModel* m, const int* bnodes, int nbnode, const cfInterfacePoint* pts, int npoint,
                     const cfReduceOptions* opt, cfReduction* out);
/* The motion of interface point p in amplitudes q [n]: out[6] = motion q. */
void cf_reduction_point_motion(const cfReduction* r, int p, const double* q, double out[6]);
void cf_reduction_free(cfReduction* r);

/* Geometric stiffness of the modes (host/reduce/reduce_geometric.c): for each of the
 * CF_REDUCTION_NKG unit inertial load cases (see cfReduction.Kg) the static displacement of model
 * m (the reduction's) under f = M b_c, with the model's fixed DOFs and the reduction's interface
 * DOFs held, the element stress sigma_c, and Kg[c] = B^T Kg(sigma_c) B. Fills r->nkg, r->Kg.
 * Linear tetrahedra only. Errors: nothing holds the part (no fixed and no interface DOFs), a
 * singular K, out of memory. */
int cf_reduction_geometric(const cfModel* m, cfReduction* r);

/* Each mode's rotation at the interface of a free part (no supports: six rigid-body modes; plain
 * interface nodes, at least three and not in a line, no interface points): theta [3 n], mode j's
 * rows 3j..3j+2, the rotation part of the least-squares rigid fit of the interface nodes'
 * displacements in mode j (body axes, radians per unit amplitude). X: the mesh's rest positions.
 * Returns 1, or 0 (theta untouched) where the part is supported or its interface measures no
 * rotation. The geometric stiffening's reference: the inertial loads' stress is computed with the
 * interface held, so the fibre rotations it resists, and the frame rate that loads it, are those
 * of the interface (docs/craig-bampton.md, "Geometric stiffening"). */
int cf_reduction_interface_rotations(const cfReduction* r, const double* X, double* theta);

/* The geometric stiffness of one linear tetrahedron under the uniform Cauchy stress sigma [9]
 * (symmetric, row-major): K_G,e = V G^T S G, S = blockdiag(sigma, sigma, sigma), G the 9 x 12
 * gradient operator (du_i/dX_j = sum_a g_a,j u_a,i); block (a, b) = V (g_a . sigma g_b) I3.
 * Kg [144] row-major, DOF 3a + i. */
void cf_tet_geometric_stiffness(const double* Dm_inv, double vol, const double* sigma, double* Kg);

/* Frequency of mode i in Hz: sign(w^2) sqrt(|w^2|) / 2 pi. */
double cf_reduction_freq_hz(const cfReduction* r, int i);

/* zeta from the frequencies: 0 for the rigid-body modes, damping (cfReduceOptions.damping: a
 * ratio, or negative for ADAMS' rule) for the others. Not stored separately: a reduction read
 * from a file gets the damping asked for now. */
void cf_reduction_set_damping(cfReduction* r, double damping);

/* Nodal displacements u [ndof] = B q (q [n]). */
void cf_reduction_displacement(const cfReduction* r, const double* q, double* u);

/* Write / read the binary file (docs/reduction-format.md). Read checks (a regular file,) magic,
 * version, byte order and sizes (they must add up to the file's size before anything is
 * allocated); cf_reduction_check then compares it with a model. */
int cf_reduction_write(const cfReduction* r, const char* path);
/* CF_OK when path may be written by cf_reduction_write: absent, or a regular file with the
 * reduction magic. Otherwise an error naming it (a user's file is never overwritten);
 * cf_reduction_write checks this itself. */
int cf_reduction_replaceable(const char* path);
/* Read checks (a regular file,) magic, version, byte order, sizes (they must add up to the
 * file's size before anything is allocated), the checksum, and the contents (finite; for an
 * orthonormal basis K_r = diag(omega2), M_r = I; no negative stiffness; omega2 ascending). */
int cf_reduction_read(const char* path, cfReduction* r);
/* The version of a reduction file (>= 1), or -1 when path is not one (no magic, unreadable). */
int cf_reduction_file_version(const char* path);
int cf_reduction_check(const cfReduction* r, const cfModel* m);
/* The fingerprint of a model's rest positions, as stored in cfReduction.fingerprint. */
double cf_reduction_fingerprint(const cfModel* m);

#ifdef __cplusplus
}
#endif
#endif
