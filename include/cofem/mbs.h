/* Multibody core: rigid bodies and massless virtual bodies in natural coordinates, joints,
 * drivers and forces, integrated by the index-3 augmented Lagrangian formulation with the
 * trapezoidal rule and mass-orthogonal projections of paper 000 (Lugris et al., eqs. 1-2,
 * 35-39); kinematic (position, velocity, acceleration) analysis on its own. See docs/mbs.md.
 *
 * Coordinates ("natural coordinates", the global formulation of paper 000): every moving body b
 * owns 12 coordinates q[body_qadr[b] + 0..11] = (r, u, v, w): its origin and its x, y, z axes as
 * global vectors. A body-fixed point with body coordinates p is x = r + p0 u + p1 v + p2 w, linear
 * in q, so the mass matrix is constant (no velocity-dependent inertia forces) and every joint is
 * a set of at most quadratic equations. Six quadratic "rigidity" equations per body keep
 * (u, v, w) orthonormal. The ground is body CF_MBS_GROUND and has no coordinates.
 *
 * Model/data split as in MuJoCo: cfMbsModel is immutable after cf_mbs_model_create (it holds the
 * assembled initial configuration), cfMbsData holds the state and all scratch; a step does not
 * allocate (CHOLMOD reuses its factor after the first numeric factorisation). */
#ifndef COFEM_MBS_H
#define COFEM_MBS_H
#include "cofem/status.h"

#ifdef __cplusplus
extern "C" {
#endif

struct cfModel;       /* cofem/fem.h */
struct cfStressField; /* cofem/fem.h */

#define CF_MBS_NAME_MAX 64
#define CF_MBS_GROUND (-1)   /* body id of the fixed frame (named "ground" in scenes) */
#define CF_MBS_NONE (-2)     /* "not found" from the find functions */
#define CF_MBS_BODY_NQ 12    /* coordinates of a rigid (or virtual) body */

/* ---- time functions (drivers, actuators, load scaling) ------------------------------------ */
typedef enum cfMbsFuncType {
  CF_MBS_FUNC_CONST = 0,     /* c[0] */
  CF_MBS_FUNC_POLY = 1,      /* c[0] + c[1] t + ... + c[n-1] t^(n-1), n <= 7 */
  CF_MBS_FUNC_HARMONIC = 2,  /* c[0] sin(c[1] t + c[2]) + c[3] */
  CF_MBS_FUNC_STEP = 3,      /* c[0] for t <= c[2], c[1] for t >= c[3], cubic blend between */
  CF_MBS_FUNC_TABLE = 4      /* piecewise linear through the points (tab[2i], tab[2i+1]), i < n, times
                                increasing; held at the first and last value outside (e.g. a recorded
                                controller's output replayed by `cofem run`) */
} cfMbsFuncType;

typedef struct cfMbsFunc {
  int type;                  /* cfMbsFuncType */
  int rate;                  /* 1: the function is a rate; the value is its integral from t = 0 */
  int n;                     /* POLY: number of coefficients; TABLE: number of points (>= 1) */
  double c[8];
  const double* tab;         /* TABLE: [2 n] t0 y0 t1 y1 ..., not owned: a definition's tables belong to
                                whoever made it (a scene: cfMbsScene.tabs); cf_mbs_model_create copies
                                them into the model */
} cfMbsFunc;

/* Value and first two time derivatives at t (rate functions: integral, function, derivative). */
void cf_mbs_func_eval(const cfMbsFunc* f, double t, double y[3]);
cfMbsFunc cf_mbs_func_const(double value);

/* ---- definitions (start from the cf_mbs_default_*_def values) ------------------------------ */
typedef struct cfMbsBodyDef {
  char name[CF_MBS_NAME_MAX];
  double mass;               /* [kg]; must be > 0 unless is_virtual */
  double com[3];             /* centre of mass in body coordinates [m] */
  double inertia[6];         /* about the centre of mass, body axes: Ixx Iyy Izz Ixy Ixz Iyz
                                (Ixy = -integral of x y dm, the tensor's off-diagonal entry) */
  double pos[3];             /* origin at t = 0, global */
  double rot[9];             /* body axes at t = 0: rotation matrix, row-major, columns x y z */
  double vel[3];             /* velocity of the origin at t = 0, global */
  double omega[3];           /* angular velocity at t = 0, global */
  int is_virtual;            /* massless virtual body (paper 004, section 4): mass and inertia 0 */
  double shape_box[3];       /* the box drawn for the body (viewer), full edge lengths along the body
                                axes [m]; 0 0 0: the box of the body's mass and inertia */
  double shape_center[3];    /* its centre, body coordinates (the scene's default: the com) */
} cfMbsBodyDef;

/* A named body-fixed point with an optional direction (body coordinates). */
typedef struct cfMbsMarkerDef {
  char name[CF_MBS_NAME_MAX];
  int body;                  /* body id or CF_MBS_GROUND */
  double pos[3];
  double axis[3];            /* default (0, 0, 1) */
} cfMbsMarkerDef;

typedef enum cfMbsJointType {
  CF_MBS_SPHERICAL = 0,      /* 3 equations: common point */
  CF_MBS_REVOLUTE = 1,       /* 5: common point, common axis */
  CF_MBS_PRISMATIC = 2,      /* 5: common line, no rotation */
  CF_MBS_CYLINDRICAL = 3,    /* 4: common line */
  CF_MBS_UNIVERSAL = 4,      /* 4: common point, axis (body1) perpendicular to axis2 (body2) */
  CF_MBS_FIXED = 5,          /* 6: rigid joint (the virtual-body joint of paper 004, eq. 33-37) */
  CF_MBS_DISTANCE = 6,       /* 1: constant distance between point (body1) and point2 (body2) */
  CF_MBS_JOINT_TYPES = 7
} cfMbsJointType;

/* Geometry is given globally, at the bodies' t = 0 poses; it is stored in body coordinates. */
typedef struct cfMbsJointDef {
  char name[CF_MBS_NAME_MAX];
  int type;                  /* cfMbsJointType */
  int body1, body2;          /* body ids (CF_MBS_GROUND allowed, not both the same) */
  double point[3];           /* joint point */
  double axis[3];            /* rotation / sliding axis; universal: the axis fixed on body1;
                                fixed: any direction (default z) */
  double axis2[3];           /* universal: the axis fixed on body2, perpendicular to axis */
  double point2[3];          /* distance: the point on body2 */
  double distance;           /* distance: length [m]; < 0: the distance at t = 0 */
  /* Issue 9, joints at FE nodes of modal bodies (cofem/mbs_modal.h): the joint's point on body1 /
   * body2 is modal point k of that modal body (cf_mbs_add_modal_point: a node, or the mean of a
   * node set, which moves with the modes); -1 (default): a body-fixed point. With a modal point
   * the joint sits where that point is at t = 0 and `point` is ignored. Spherical, revolute,
   * universal and fixed joints only; their axes are the node set's, measured on its nodes as the
   * FE bodies measure them (a set on a line is refused unless the reduction clamps it). */
  int modal_point1, modal_point2;
} cfMbsJointDef;

typedef enum cfMbsDriverType {
  CF_MBS_DRIVE_ANGLE = 0,        /* rotation of a revolute / cylindrical joint [rad], 0 at t = 0 pose */
  CF_MBS_DRIVE_TRANSLATION = 1,  /* sliding of a prismatic / cylindrical joint [m], 0 at t = 0 pose */
  CF_MBS_DRIVE_DISTANCE = 2      /* distance between two points [m] */
} cfMbsDriverType;

/* A rheonomic constraint: the driven quantity equals f(t) (rate drivers: its value at t = 0
 * plus the integral of f). */
typedef struct cfMbsDriverDef {
  char name[CF_MBS_NAME_MAX];
  int type;                  /* cfMbsDriverType */
  int joint;                 /* ANGLE, TRANSLATION */
  int body1, body2;          /* DISTANCE */
  double point1[3], point2[3]; /* DISTANCE: global at t = 0 */
  cfMbsFunc f;
} cfMbsDriverDef;

typedef enum cfMbsForceType {
  CF_MBS_POINT_FORCE = 0,    /* force vec at point1 of body1 */
  CF_MBS_TORQUE = 1,         /* torque vec on body1 */
  CF_MBS_SPRING = 2,         /* translational spring-damper-actuator point1 (body1) - point2 (body2) */
  CF_MBS_ROT_SPRING = 3      /* rotational spring-damper(-actuator) about a revolute/cylindrical joint */
} cfMbsForceType;

typedef struct cfMbsForceDef {
  char name[CF_MBS_NAME_MAX];
  int type;                  /* cfMbsForceType */
  int body1, body2;
  double point1[3], point2[3]; /* global at t = 0 */
  double vec[3];             /* POINT_FORCE [N], TORQUE [N m] */
  int body_frame;            /* vec is given in body1's axes and turns with it */
  int has_scale;             /* vec is multiplied by scale(t) */
  cfMbsFunc scale;
  double k, c;               /* SPRING: N/m, N s/m; ROT_SPRING: N m/rad, N m s/rad */
  double rest;               /* SPRING: rest length; ROT_SPRING: rest angle [rad], 0 at the t = 0
                                pose. NAN (default): the value at t = 0 */
  int has_actuator;          /* SPRING: + actuator(t) along the line, pushing the points apart;
                                ROT_SPRING: + actuator(t) torque on body2 about the axis */
  cfMbsFunc actuator;
  int joint;                 /* ROT_SPRING */
} cfMbsForceDef;

typedef struct cfMbsOptions {
  double dt;                 /* time step [s] */
  double gravity[3];         /* [m/s^2] */
  double penalty;            /* alpha of eq. 1; 0: 1e4 * mref * 4 / dt^2 (mref: largest diagonal
                                entry of M), i.e. the constraint part of the leading matrix is
                                1e4 times its mass part */
  double tol_dq;             /* Newton: stop when max |dq| <= tol_dq ... */
  double tol_phi;            /* ... and max |Phi| <= tol_phi */
  int max_iter;              /* Newton iterations per step */
  int proj_iter;             /* augmented Lagrangian iterations of each projection (eq. 39 is the first) */
  int redundant;             /* redundant constraint equations the mechanism is declared to have */
  double rho_inf;            /* spectral radius at infinite frequency: 1 (default) the trapezoidal rule
                                of paper 000; < 1 generalized-alpha (Chung-Hulbert, in the form of
                                Arnold and Bruls), which damps the unresolved stiff modes of FE bodies
                                (second order; at the rigid motion's w h ~ 0.1 the damping is ~1e-5
                                per period); 0.5 .. 1 */
  int coupling;              /* corotational FE bodies: CF_MBS_COUPLING_NEWTON (Newton on the part's
                                full residual every iteration: the accurate reference) or
                                CF_MBS_COUPLING_LINEAR (the part linearised twice per step, one
                                linear solve each, its matrix factored or, "factor": "pcg", solved by
                                its PCG with its interface compliance turned from rest; docs/mbs.md,
                                "The linear coupling") */
} cfMbsOptions;

enum cfMbsCoupling { CF_MBS_COUPLING_NEWTON = 0, CF_MBS_COUPLING_LINEAR = 1 };
/* "newton", "linear" */
const char* cf_mbs_coupling_name(int coupling);
/* the coupling a scene key or option names, or -1 */
int cf_mbs_coupling_from_key(const char* key);

typedef struct cfMbsDef {
  cfMbsOptions opt;
  int nbody, nmarker, njoint, ndriver, nforce;
  int cap_body, cap_marker, cap_joint, cap_driver, cap_force;
  cfMbsBodyDef* body;
  cfMbsMarkerDef* marker;
  cfMbsJointDef* joint;
  cfMbsDriverDef* driver;
  cfMbsForceDef* force;
  /* modal bodies (cofem/mbs_modal.h, cf_mbs_add_modal_body) */
  int nmodal, cap_modal;
  struct cfMbsModalDef* modal;
  /* FE bodies with a node at every mesh node (cofem/mbs_fe.h, cf_mbs_add_fe_body) */
  int nfe, cap_fe;
  struct cfMbsFeDef* fe;
} cfMbsDef;

cfMbsOptions cf_mbs_default_options(void);
cfMbsBodyDef cf_mbs_default_body_def(void);   /* identity pose, at rest, mass 0 (must be set) */
cfMbsMarkerDef cf_mbs_default_marker_def(void);
cfMbsJointDef cf_mbs_default_joint_def(void);
cfMbsDriverDef cf_mbs_default_driver_def(void);
cfMbsForceDef cf_mbs_default_force_def(void);

void cf_mbs_def_init(cfMbsDef* def);
void cf_mbs_def_free(cfMbsDef* def);
/* Append; return the new id (>= 0) or a negative status. Checked in cf_mbs_model_create. */
int cf_mbs_add_body(cfMbsDef* def, const cfMbsBodyDef* b);
int cf_mbs_add_marker(cfMbsDef* def, const cfMbsMarkerDef* mk);
int cf_mbs_add_joint(cfMbsDef* def, const cfMbsJointDef* j);
int cf_mbs_add_driver(cfMbsDef* def, const cfMbsDriverDef* dr);
int cf_mbs_add_force(cfMbsDef* def, const cfMbsForceDef* f);
/* Body id by name ("ground" gives CF_MBS_GROUND), CF_MBS_NONE if absent. */
int cf_mbs_def_find_body(const cfMbsDef* def, const char* name);

/* Rotation matrix (row-major) from an axis and an angle [rad]. */
void cf_mbs_axis_angle(const double axis[3], double angle, double R[9]);

/* ---- compiled constraints ------------------------------------------------------------------ */
/* An affine 3-vector of q: sum over up to two bodies of w[k] times the body's k-th coordinate
 * triplet (r, u, v, w), plus a constant c. Body points (1, p), body directions (0, d), their
 * differences and ground points / directions (constants) are all of this form. */
typedef struct cfMbsVec {
  int nb;
  int body[2];
  double w[2][4];
  double c[3];
} cfMbsVec;

enum { CF_MBS_COEF_ONE = 0, CF_MBS_COEF_SIN = 1, CF_MBS_COEF_NEGCOS = 2 }; /* of the driver value */
enum { CF_MBS_CST_NONE = 0, CF_MBS_CST_NEG_F = 1, CF_MBS_CST_NEG_HALF_F2 = 2 };
enum { CF_MBS_CON_RIGID = 0, CF_MBS_CON_JOINT = 1, CF_MBS_CON_DRIVER = 2 };

/* One scalar equation Phi = sum_k s_k coef_k(f(t)) (a_k . b_k) + c0 + cst(f(t)) = 0. */
typedef struct cfMbsCon {
  int nterm;                 /* 1 or 2 */
  int coef[2];
  double s[2];
  cfMbsVec a[2], b[2];
  double c0;
  int cst;
  int driver;                /* whose f(t) the coef / cst use, or -1 */
  int nb;                    /* bodies of the equation: the slots of its gradient */
  int* body;                 /* [nb] (capacity body_cap; the model owns it): a modal point brings its
                                amplitude blocks, an FE node set the node blocks that hold its nodes
                                (a set of 250 nodes on a fine mesh: ~100 blocks) */
  int body_cap;
  int kind, owner, eq;       /* CF_MBS_CON_*, body / joint / driver id, equation within it */
  /* modal point terms (issue 9): Phi += sum_k mt_sign[k] e_(mt_comp[k]) . A Phibar y of modal
   * point mt_point[k] of modal body mt_body[k] (index into cfMbsModel.modal): bilinear in the
   * frame's axes A = [u v w] and the amplitudes y (host/mbs/mbs_constraints.c evaluates them) */
  int nmt;
  int mt_body[2], mt_point[2], mt_comp[2];
  double mt_sign[2];
  /* modal direction terms (a joint axis at a modal point is the node set's axis, not the frame's):
   * with md_body[s] >= 0 the vector a[0] (s = 0) or b[0] (s = 1) of the equation's single bilinear
   * term is the set's direction V + A Psi y, Psi the rows md_dir[s] of modal body md_body[s]
   * (cf_mbs__modal_dir); Phi += s[0] ((a + M_a) . (b + M_b) - a . b). nmd: 1 when any side has one */
  int nmd;
  int md_body[2], md_dir[2];
  /* FE node-set terms (lumped FE bodies, cofem/mbs_fe.h): Phi += ft_s[k] (sum_i w_i x_i) . B_k,
   * the weighted node sum ft_vec[k] of FE body ft_fe[k] (a node set's mean, or the difference of
   * the means of its two halves along a joint axis), B_k = e_(ft_comp[k]) when ft_comp[k] >= 0,
   * else the affine vector ft_b[k] (host/mbs/mbs_fe.c evaluates them); times the driver value's
   * coefficient ft_coef[k] (CF_MBS_COEF_*: an angle driver at an FE set, issue 27) */
  int nft;
  int ft_fe[2], ft_vec[2], ft_comp[2], ft_coef[2];
  double ft_s[2];
  cfMbsVec ft_b[2];
} cfMbsCon;

/* A force element compiled to body coordinates. */
typedef struct cfMbsForce {
  int type;
  int body[2];               /* CF_MBS_GROUND where absent */
  double p[2][3];            /* body-coordinate points (ground: global) */
  double vec[3];
  int body_frame;
  int has_scale, has_actuator;
  cfMbsFunc scale, actuator;
  double k, c, rest;
  int joint;
} cfMbsForce;

/* ---- model ----------------------------------------------------------------------------------- */
typedef struct cfMbsModel {
  cfMbsOptions opt;
  double alpha;              /* the penalty in use */
  double mref;               /* largest diagonal entry of M (1 if all bodies are massless) */
  double kref;               /* h^2/4 times the largest diagonal stiffness of the FE bodies (0 without) */
  int nbody, nq, ncon, nmarker, njoint, ndriver, nforce;
  /* bodies */
  char (*body_name)[CF_MBS_NAME_MAX];
  int* body_qadr;            /* [nbody] first coordinate; flexible bodies (issue 9) add their
                                modal amplitudes after the 12 frame coordinates: body_nq > 12 */
  int* body_nq;              /* [nbody] */
  unsigned char* body_virtual;
  double* body_mass;         /* [nbody] */
  double* body_com;          /* [3 nbody] body coordinates */
  double* body_inertia;      /* [6 nbody] about the centre of mass */
  double* body_shape;        /* [6 nbody] the box drawn for the body: centre (body coordinates), full
                                edge lengths; lengths 0: the box of its mass and inertia */
  double* body_Mbar;         /* [16 nbody] 4x4 row-major: the body's mass matrix is Mbar (x) I3,
                                Mbar = [m, m c^T; m c, integral of p p^T dm] */
  /* markers */
  char (*marker_name)[CF_MBS_NAME_MAX];
  int* marker_body;
  double* marker_pos;        /* [3 nmarker] */
  double* marker_axis;       /* [3 nmarker] */
  /* joints: frames in body coordinates of body1 (slot 0) and body2 (slot 1); a is the joint
   * axis, f a reference direction perpendicular to it, g = a x f; all coincide at t = 0 */
  char (*joint_name)[CF_MBS_NAME_MAX];
  int* joint_type;
  int* joint_body;           /* [2 njoint] */
  double* joint_frame;       /* [24 njoint]: per slot p[3] a[3] f[3] g[3] */
  int* joint_mpoint;         /* [2 njoint] modal point of slot 0 / 1 (issue 9), -1: none */
  int* joint_fe_dir;         /* [4 njoint] slot s of an FE revolute or fixed joint: [2s] the FE body, [2s+1]
                                the weighted node sum measuring the set's f direction (times 1; minus 1
                                and negated: its g, when f is a flat set's normal), for the joint's angle;
                                -1: none */
  int* joint_con0;           /* [njoint] first equation */
  int* joint_ncon;
  /* drivers */
  char (*driver_name)[CF_MBS_NAME_MAX];
  int* driver_type;
  int* driver_joint;
  cfMbsFunc* driver_f;
  double* driver_offset;     /* the driven value is offset + f(t) */
  int* driver_con;           /* [ndriver] its equation */
  /* forces */
  char (*force_name)[CF_MBS_NAME_MAX];
  cfMbsForce* force;
  /* the table functions' points, copied from the definition (cfMbsFunc.tab of force and driver
   * functions point here) */
  int ntabs;
  double** tabs;
  /* equations: 6 rigidity equations per body, then the joints', then the drivers' */
  cfMbsCon* con;             /* [ncon] */
  int jac_stride;            /* 12 x the most slots of an equation: cfMbsData.jac's row length */
  double* con_pen;           /* [ncon] penalty of each equation relative to alpha: 1, but with FE bodies
                                (alpha scaled by their stiffness) mref / kref for the equations that
                                hold no FE node: a 50 g bolt's rigidity equations at the stiffness's
                                penalty could not be factored */
  /* leading-matrix pattern: upper triangle, compressed columns over q; coupled body pairs */
  int nnz;
  int* Ap;                   /* [nq + 1] */
  int* Ai;                   /* [nnz] */
  int npair;
  int* pair_colstart;        /* [12 npair]: index in Ai of the first row of pair p in column c */
  int* body_pair_ptr;        /* [nbody + 1]: pairs (a, b), a <= b, listed under b, sorted by a */
  int* body_pair_a;          /* [npair] */
  /* initial state: the t = 0 poses assembled onto Phi = 0, velocities projected */
  double* q0;                /* [nq] */
  double* qd0;               /* [nq] */
  double assembly_shift;     /* largest coordinate change made by the assembly */
  int rank;                  /* rank of the constraint Jacobian at q0 */
  int ndof;                  /* nq - rank: degrees of freedom left by the joints and drivers */
  int nredundant;            /* ncon - rank */
  /* modal bodies (host/mbs/mbs_modal.c). body_modal[b]: 0 rigid / virtual, 1 the frame
   * of a modal body, 2 an amplitude block (12 modal coordinates, appended after the definition's
   * bodies: no rigidity equations, no gravity; the mass terms are added by the modal code) */
  int nmodal;
  struct cfMbsModalBody* modal;
  unsigned char* body_modal; /* ... 3: a node block of an FE body (cofem/mbs_fe.h: four nodes' positions
                                as the four coordinate triplets, diagonal Mbar of their masses) */
  int nfe;
  struct cfMbsFeBody* fe;    /* [nfe] host/mbs/mbs_fe.c */
  int nq_direct;             /* coordinates factored by CHOLMOD: all but the nodes of corotational FE
                                bodies (the last ones), which the solver condenses (mbs_fe.c) */
} cfMbsModel;

/* Validate and compile the definition, assemble the initial configuration (Phi(q0, 0) = 0,
 * nearest to the given poses in the mass metric), project the initial velocities, and check the
 * equations. Errors (CF_ERR_SCENE, message naming the body / joint / driver): unknown ids, bad
 * mass or inertia, zero-length or parallel axes, equations that cannot be satisfied together
 * (inconsistent), redundant equations beyond opt.redundant, a leading matrix that is singular
 * (a massless or inertia-free motion no joint constrains). */
int cf_mbs_model_create(const cfMbsDef* def, cfMbsModel** out);
void cf_mbs_model_free(cfMbsModel* m);
int cf_mbs_find_body(const cfMbsModel* m, const char* name);   /* "ground": CF_MBS_GROUND */
int cf_mbs_find_marker(const cfMbsModel* m, const char* name);
int cf_mbs_find_joint(const cfMbsModel* m, const char* name);
int cf_mbs_find_driver(const cfMbsModel* m, const char* name);
/* "body 'crank'", "joint 'A' (revolute) equation 4" ...: who owns equation i */
void cf_mbs_describe_con(const cfMbsModel* m, int i, char* out, int n);

/* ---- data ------------------------------------------------------------------------------------ */
enum cfMbsStage { CF_MBS_STAGE_CONSTRAINTS, CF_MBS_STAGE_FORCES, CF_MBS_STAGE_ASSEMBLE,
                  CF_MBS_STAGE_FACTOR, CF_MBS_STAGE_SOLVE, CF_MBS_STAGE_COUNT };
/* counted numerical events (cfMbsData.warning[]): a velocity or acceleration projection that
 * ended above its tolerance (tol_phi) after proj_iter iterations; the step goes on with it */
/* CF_MBS_WARN_NEWTON_FLOOR: steps whose Newton iteration ended at its round-off floor (the
 * constraints held, |dq| stalled between tol_dq and 100 tol_dq) */
/* CF_MBS_WARN_ROTATED_FALLBACK: steps of the linear coupling that failed with "factor": "rotated" and
 * were taken again with the exact factor (which the part then keeps for 50 steps) */
enum cfMbsWarning { CF_MBS_WARN_VEL_PROJECTION, CF_MBS_WARN_ACC_PROJECTION, CF_MBS_WARN_NEWTON_FLOOR,
                    CF_MBS_WARN_ROTATED_FALLBACK, CF_MBS_WARN_COUNT };

typedef struct cfMbsData {
  /* state */
  double t;
  double* q;                 /* [nq] */
  double* qd;                /* [nq] */
  double* qdd;               /* [nq] */
  double* lambda;            /* [ncon] multipliers lambda* of eqs. 1-2 (the Newton iteration's, also
                                its start at the next step); consistent with the trapezoidal
                                accelerations, which are first-order accurate only */
  double* reaction;          /* [ncon] multipliers consistent with the projected accelerations:
                                lambda* + the acceleration projection's multiplier (exact when
                                the forces add no damping or stiffness to W); the reactions.
                                NAN after a kinematic step */
  /* constraints at the last evaluation */
  double* phi;               /* [ncon] */
  double* jac;               /* [ncon * cfMbsModel.jac_stride] gradient per body slot (12 per slot) */
  double* rhs_c;             /* [ncon] right side of a linear constraint J x = c */
  double* drv;               /* [3 ndriver] driven values and two time derivatives */
  /* forces at the last evaluation */
  double* Q;                 /* [nq] generalized forces */
  double* fK;                /* [nforce * 576] -dQ/dq per element (24 x 24, slots of body[]) */
  double* fC;                /* [nforce * 576] -dQ/dqd */
  double* rot_angle;         /* [nforce] ROT_SPRING angle, unwrapped (multi-turn) */
  double* rot_angle_prev;    /* [nforce] at the last accepted state */
  double* joint_angle;       /* [njoint] unwrapped joint angles (revolute/cylindrical) */
  /* leading matrix and solver */
  double* Ax;                /* [nnz] */
  struct cfMbsSolver* solver;
  /* scratch */
  double *r, *x, *dq, *w, *qd_hat, *qdd_hat; /* [nq] */
  double *sigma, *econ;      /* [ncon] */
  double* con_pen;           /* [ncon] the penalty of each equation relative to alpha in use: the
                                model's con_pen, except for the equations of corotational FE bodies,
                                which each factorisation scales so that a G_kk stays near 1e6
                                (cf_mbs__fe_factor; G: the part's compliance at the joint) */
  double* acc;               /* [nq] the generalized-alpha algorithmic acceleration (= qdd with the
                                trapezoidal rule) */
  double* save;              /* [4 nq + ncon] state at the start of a step */
  struct cfData** fe_data;   /* [nfe] FE data of each FE body: the stages' rotations, K_R, forces */
  int nfe_data;
  struct cfMbsFeState* fe_state; /* [nfe] the condensation of corotational FE bodies (mbs_fe.c) */
  struct cfMbsMonitor* monitor; /* the flexible bodies' divergence monitor (mbs_monitor.c) */
  double load_factor;        /* applied loads and gravity are scaled by it (1; statics steps it up,
                                cf_mbs_set_load_factor) */
  double gravity[3];         /* the model's gravity times load_factor */
  int constraint_hessian;    /* the Newton matrix includes sum lambda_i Phi_i,qq (statics: 1) */
  /* the linear coupling (opt.coupling): set by cf_mbs_step for the solves it makes */
  int fe_linear;             /* 1 inside cf_mbs_step: corotational bodies are linearised at the predictor */
  long step_serial;          /* counts cf_mbs_step calls: the key of the per-step linearisation */
  int fe_pass;               /* 0, or 1 where the linear coupling linearises again (mbs_step.c): at the
                                step's first Newton iterate with constraints as good as the predictor's */
  long fe_twice;             /* the linear coupling's steps linearised twice (a part turned beyond its
                                predicted rotations: mbs_fe.c, cf_mbs__fe_single_miss) */
  int fe_rhs;                /* the next cf_mbs__solve's right side (enum in mbs_internal.h) */
  double fe_rhs_scale;       /* ... its joint part is fe_rhs_scale J^T d->econ */
  int debug_poison_owned;    /* tests: within a step, NaN in d's copies of the coordinates a body kind owns,
                                but for those the step's generic code may read (mbs_fe.c, own_poison) */
  int ngen;                  /* the coordinates the generic loops of a step run over, as [lo, hi) pairs */
  int* gen;                  /* [2 ngen]: all of them but those a body kind owns in the step (a linearly
                                coupled corotational body's nodes: mbs_body_kind.h, "own") */
  double asm_coef[5];        /* cM, cC, cK, a, eps of the last cf_mbs__assemble (the condensed FE blocks
                                are formed by cf_mbs__factor with them) */
  /* last step */
  int iters;                 /* Newton iterations */
  double newton_dq0, newton_dq; /* max |dq| of the step's first and latest Newton update (the
                                corotational FE bodies keep their factor once it has shrunk) */
  int proj_iters[2];         /* projection iterations (velocity, acceleration) */
  double phi_max;            /* max |Phi| after the step */
  double phid_max;           /* max |Phi_q qd + Phi_t| */
  double phidd_max;          /* max |Phi_q qdd + bias| */
  /* counters */
  long steps;
  long iters_total;
  int iters_max;
  double timer[CF_MBS_STAGE_COUNT];
  int warning[CF_MBS_WARN_COUNT]; /* counted events since the data was made or reset (enum cfMbsWarning) */
  /* driving from a controller (mbs_drive.c, cf_mbs_set_*): held until changed */
  double* body_load;         /* [9 nbody] applied force [3] (global) at point [3] (body coordinates) and
                                torque [3] (global) per body; zero: none */
  cfMbsFunc* driver_f;       /* [ndriver] the drivers' functions in use (the model's after a reset) */
  unsigned char* con_off;    /* [ncon] 1: the equation is switched off (a released joint or driver) */
  double** modal_force;      /* [nmodal] applied nodal forces [3 nnode] (global) of modal bodies, or NULL */
  int nmodal_force;
  double* modal_kg;          /* [max nm^2] scratch: a modal body's geometric stiffness sum_c lambda_c Kg_c (NULL
                                when no modal body has geometric stiffening) */
} cfMbsData;

/* d->q, d->qd, d->qdd and d->acc made the mechanism's state wherever a body keeps its own between
 * steps (a linearly coupled FE body on the GPU keeps its nodes on the device, d holding its interface
 * nodes only), for a caller that reads or writes those arrays directly; the next step takes d's
 * state. The library's own readers (cf_mbs_energy, cf_mbs_flex_nodes, cf_mbs_fe_*, ...) need none. */
void cf_mbs_sync(const cfMbsModel* m, cfMbsData* d);

/* Data at the model's initial state; solves the initial accelerations and multipliers. */
int cf_mbs_data_create(const cfMbsModel* m, cfMbsData** out);
void cf_mbs_data_free(cfMbsData* d);
int cf_mbs_reset(const cfMbsModel* m, cfMbsData* d);
/* Scale gravity and the applied loads (point forces, torques, loads at node sets) by factor. */
void cf_mbs_set_load_factor(const cfMbsModel* m, cfMbsData* d, double factor);

/* Static equilibrium (mbs_static.c): load increments, each solved by pseudo-transient continuation
 * with the model's own step from rest, the pseudo-step starting at the model's dt and growing as the
 * moves shrink (the model's dt is changed during the call and restored). Drivers and load functions are held at `time`. On success d holds the
 * equilibrium (velocities zero) and d->reaction the multipliers (cf_mbs_joint_reaction). */
typedef struct cfMbsStaticOptions {
  double time;    /* drivers and load functions evaluated at this time (0) */
  int increments; /* load factor k / increments, k = 1..increments (5) */
  double tol;     /* converged when a pseudo-step moves no coordinate by more than tol [m] (1e-10) */
  int max_steps;  /* pseudo-steps per increment before "no equilibrium" (500) */
  int (*interrupt)(void); /* called before each pseudo-step: nonzero stops the statics there with
                             CF_WARN_STATIC_NOT_CONVERGED (a Ctrl-C inside an increment); NULL: never */
} cfMbsStaticOptions;
void cf_mbs_static_defaults(cfMbsStaticOptions* o);
/* called after each converged increment; a non-zero return stops */
typedef int (*cfMbsStaticCallback)(double load_factor, int steps, int newton_iters, double last_move,
                                   const cfMbsModel* m, const cfMbsData* d, void* user);
int cf_mbs_static(cfMbsModel* m, cfMbsData* d, const cfMbsStaticOptions* o, cfMbsStaticCallback cb, void* user);

/* One step of dt: trapezoidal rule + index-3 augmented Lagrangian (eqs. 1-2, 35-37), Newton with
 * the approximate tangent of eq. 37 factored by CHOLMOD, then the velocity and acceleration
 * projections of eq. 39. Errors: Newton not converged within max_iter (CF_ERR_SOLVER, naming the
 * worst equation), singular leading matrix. The state is left at the start of the step on error. */
int cf_mbs_step(const cfMbsModel* m, cfMbsData* d);

/* Kinematic analysis at time t, starting from the current state:
 * position: Phi(q, t) = 0 by Newton (minimum-norm corrections in the mass metric);
 * velocity: Phi_q qd = -Phi_t; acceleration: Phi_q qdd = -(d/dt Phi_q) qd - d/dt Phi_t.
 * For a mechanism with degrees of freedom left, these are the mass-orthogonal projections of the
 * current q, qd, qdd onto the constraints. Sets d->t. */
int cf_mbs_position_analysis(const cfMbsModel* m, cfMbsData* d, double t);
int cf_mbs_velocity_analysis(const cfMbsModel* m, cfMbsData* d);
int cf_mbs_acceleration_analysis(const cfMbsModel* m, cfMbsData* d);
/* t += dt and the three analyses (needs ndof == 0: every motion driven). */
int cf_mbs_kinematic_step(const cfMbsModel* m, cfMbsData* d);

/* ---- queries on the current state ------------------------------------------------------------ */
/* max |Phi|, max |Phi_q qd + Phi_t|, max |Phi_q qdd + bias| (fills d->phi_max ...). */
void cf_mbs_violation(const cfMbsModel* m, cfMbsData* d, double out[3]);
/* Kinetic energy and potential energy (gravity, springs). */
void cf_mbs_energy(const cfMbsModel* m, const cfMbsData* d, double* kinetic, double* potential);
/* Global position / velocity / acceleration of a body point p (body coordinates). */
void cf_mbs_point(const cfMbsModel* m, const cfMbsData* d, int body, const double p[3], double x[3]);
void cf_mbs_point_vel(const cfMbsModel* m, const cfMbsData* d, int body, const double p[3], double v[3]);
void cf_mbs_point_acc(const cfMbsModel* m, const cfMbsData* d, int body, const double p[3], double a[3]);
void cf_mbs_rotation(const cfMbsModel* m, const cfMbsData* d, int body, double R[9]); /* row-major */
void cf_mbs_omega(const cfMbsModel* m, const cfMbsData* d, int body, double w[3]);   /* global */
/* Revolute/cylindrical joint angle (unwrapped, 0 at t = 0) and prismatic/cylindrical sliding. */
double cf_mbs_joint_angle(const cfMbsModel* m, const cfMbsData* d, int joint);
double cf_mbs_joint_translation(const cfMbsModel* m, const cfMbsData* d, int joint);
/* Force the joint applies on body2 at the joint point (joints with a common point), global. */
void cf_mbs_joint_reaction(const cfMbsModel* m, const cfMbsData* d, int joint, double F[3]);

/* ---- driving the mechanism step by step (mbs_drive.c) -------------------------------------------
 * What a controller sets between steps; each input is held until it is changed again, and
 * cf_mbs_reset puts back the scene's drivers and joints (applied loads are kept). Errors
 * (CF_ERR_ARG) name the body, joint or driver and say why. */
/* Applied load on a rigid, virtual or modal body (its frame): force F [N] at body point p (body
 * coordinates; NULL: the origin) and torque T [N m], both global (NULL: zero). Replaces the body's
 * previous applied load; scaled by the load factor like the scene's loads. FE bodies have no frame:
 * load their nodes (cf_mbs_set_node_load). */
int cf_mbs_set_body_load(const cfMbsModel* m, cfMbsData* d, int body, const double F[3], const double p[3],
                         const double T[3]);
/* Force F [N] (global) on nodes[0 .. n-1] (mesh node indices) of a flexible body (FE: lumped or
 * corotational; modal), shared equally by them; it replaces the applied force on those nodes (a
 * zero F removes it), other nodes keep theirs. */
int cf_mbs_set_node_load(const cfMbsModel* m, cfMbsData* d, int body, const int* nodes, int n, const double F[3]);
/* Driver k follows f from now on (the driven value is the driver's offset plus f(t), t the
 * mechanism's time). The target and speed forms build f so that the value is continuous now:
 * target: from the current value to `value` in a cubic blend over `ramp` seconds (0: a jump);
 * speed: value now + speed (t - t_now) (a motor's speed, rad/s or m/s). */
int cf_mbs_set_driver_func(const cfMbsModel* m, cfMbsData* d, int driver, const cfMbsFunc* f);
int cf_mbs_set_driver_target(const cfMbsModel* m, cfMbsData* d, int driver, double value, double ramp);
int cf_mbs_set_driver_speed(const cfMbsModel* m, cfMbsData* d, int driver, double speed);
/* The driver's value now (offset + f(t)) [rad or m]. */
double cf_mbs_driver_value(const cfMbsModel* m, const cfMbsData* d, int driver);
/* Switch a joint or driver (a support, a clamp, a motor's lock) off (0) or on again (1). Off, its
 * equations hold nothing and its reaction is zero; switched on where it is violated, it pulls the
 * bodies back together within a step or two (a large force: switch it on where it holds). */
int cf_mbs_set_joint_active(const cfMbsModel* m, cfMbsData* d, int joint, int active);
int cf_mbs_set_driver_active(const cfMbsModel* m, cfMbsData* d, int driver, int active);
int cf_mbs_joint_active(const cfMbsModel* m, const cfMbsData* d, int joint);

/* Flexible bodies (FE and modal) by body id: node count, node positions and velocities [3 nnode]
 * (global, mesh order; v may be NULL) and their stress (cofem/fem.h, cfStressField initialised for
 * fem): the co-rotated stress of FE bodies, the small strain of the modes of modal bodies. fem: the
 * FE model of the body's mesh (FE bodies: NULL takes their own; modal bodies: required, e.g. the
 * scene's part, cfMbsScene.flex[k]->model). */
int cf_mbs_flex_nnode(const cfMbsModel* m, int body);
int cf_mbs_flex_nodes(const cfMbsModel* m, const cfMbsData* d, int body, double* x, double* v);
int cf_mbs_flex_stress(const cfMbsModel* m, const cfMbsData* d, int body, const struct cfModel* fem,
                       struct cfStressField* s);

/* ---- scenes (same JSON conventions as the FEM scenes; docs/mbs.md) ---------------------------- */
#define CF_MBS_PATH_MAX 512
#define CF_MBS_MAX_CHANNELS 64
#define CF_MBS_MAX_FLEX 8

typedef enum cfMbsChannelWhat {
  CF_MBS_OUT_POSITION, CF_MBS_OUT_VELOCITY, CF_MBS_OUT_ACCELERATION, CF_MBS_OUT_OMEGA,
  CF_MBS_OUT_ANGLE, CF_MBS_OUT_TRANSLATION, CF_MBS_OUT_REACTION, CF_MBS_OUT_LAMBDA,
  CF_MBS_OUT_VON_MISES_MAX   /* an FE body's largest element von Mises stress [Pa] (cf_mbs_flex_stress) */
} cfMbsChannelWhat;

enum cfMbsFormulation { CF_MBS_GLOBAL = 0, CF_MBS_SEMI_RECURSIVE = 1, CF_MBS_STRUCTURAL_GROUPS = 2 };

typedef struct cfMbsChannel {
  int kind;                  /* 0 marker, 1 body (origin), 2 joint, 3 driver */
  int id;
  int what;                  /* cfMbsChannelWhat */
  char label[CF_MBS_NAME_MAX + 16];
} cfMbsChannel;

typedef struct cfMbsScene {
  char path[CF_MBS_PATH_MAX];
  cfMbsDef def;
  double t_end;
  int kinematic;             /* "solver.analysis": "kinematic" */
  int formulation;           /* "solver.formulation": CF_MBS_GLOBAL (natural coordinates, the default),
                                CF_MBS_SEMI_RECURSIVE (dynamics in relative coordinates, cofem/mbs_semirecursive.h)
                                or CF_MBS_STRUCTURAL_GROUPS (kinematic analysis group by group,
                                cofem/mbs_topology.h) */
  int coupling_given;        /* 1: the scene has "solver.coupling" (else the Newton coupling, the default) */
  char out_dir[CF_MBS_PATH_MAX];
  int every;                 /* CSV row every N steps */
  int vtu_every;             /* flexible bodies' deformed-mesh frame every N steps (0: about 100 frames) */
  int nchannel;
  cfMbsChannel channel[CF_MBS_MAX_CHANNELS]; /* ids are those of the definition (= model) */
  /* flexible bodies ("flexible" in a body): their FE scenes, models and reductions, owned here
   * (cofem/modal_part.h); the definition borrows the reductions and meshes */
  int nflex;
  struct cfModalPart* flex[CF_MBS_MAX_FLEX];
  int flex_body[CF_MBS_MAX_FLEX];
  /* what the scene says that has no effect but is legal (the "gravity" and "loads" of a flexible
   * body's FE scene): one line each, for the caller to show (cofem prints them on stderr) */
  int nwarning;
  char warning[CF_MBS_MAX_FLEX][400];
  /* the "table" functions' points (cfMbsFunc.tab of the definition), owned here */
  int ntabs;
  double** tabs;
} cfMbsScene;

/* 1 if the JSON file is a mechanism scene (it has a top-level "bodies" key), else 0. */
int cf_mbs_scene_is_mechanism(const char* json_path);
int cf_mbs_scene_load(const char* path, cfMbsScene* s);
/* Set the coupling of the scene's corotational FE bodies (cfMbsOptions.coupling; cofem run
 * --coupling): with the linear coupling a body whose FE scene says "auto" takes the CPU's "auto"
 * preconditioner (cf_preconditioner_auto: the rotated Cholesky below 100k tetrahedra, AMG above;
 * used with "factor": "pcg"), as the part alone; with the Newton coupling block Jacobi, as before. */
void cf_mbs_scene_set_coupling(cfMbsScene* s, int coupling);
/* Where the scene's corotational FE bodies run (cofem run --backend, the viewer's --backend; the
 * multibody core itself runs on the CPU): -1 as the scene says; 0 (cpu) the scene's GPU bodies on
 * the CPU (the same path); 1 (cuda) each on the GPU, its matrix by the PCG ("factor": "pcg", AMG
 * unless block Jacobi was asked for, "tol" 1e-10 unless it set one); 2 (auto) as cuda when a device
 * is usable, else as the scene says. CF_ERR_UNSUPPORTED for cuda without a corotational body. Call
 * after cf_mbs_scene_set_coupling. */
int cf_mbs_scene_set_backend(cfMbsScene* s, int backend);
/* The viewer's choice for a scene that does not choose its coupling: the linear coupling, and the
 * rotated factor ("factor": "rotated": the step's matrix the part's factor at rest turned with it,
 * applied exactly) for the corotational bodies that do not choose their "factor": interactive speed
 * first (docs/mbs.md, "The linear coupling"). */
void cf_mbs_scene_interactive(cfMbsScene* s);
int cf_mbs_scene_parse(const char* json, const char* path, cfMbsScene* s);
/* Number of CSV values of a channel (3 or 1) and the values now. */
int cf_mbs_channel_size(const cfMbsChannel* c);
void cf_mbs_channel_eval(const cfMbsModel* m, const cfMbsData* d, const cfMbsChannel* c, double* v);
/* `cofem run`'s mbs.csv as text, for any program that steps the scene (the CLI, Python's
 * Mechanism.run(out=)): the header line and the row of step k now, each with its newline, written
 * into out [n] (snprintf's rule: the length it needs is returned, the text cut at n - 1). Columns:
 * step, t (%.10g), newton_iters, phi_max, phid_max, phidd_max (%.3e), kinetic, potential, energy
 * and the channels (%.12g; 3-vectors as NAME_x, NAME_y, NAME_z). */
int cf_mbs_csv_header(const cfMbsScene* s, char* out, int n);
int cf_mbs_csv_row(const cfMbsModel* m, const cfMbsData* d, const cfMbsScene* s, long k, char* out, int n);
void cf_mbs_scene_free(cfMbsScene* s);

#ifdef __cplusplus
}
#endif
#endif
