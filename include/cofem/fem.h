/* The co-rotational FEM body (paper 003, Marinkovic & Zehn): immutable model, mutable data,
 * and the four stages of a step. Core calls take (const cfModel*, cfData*), as in MuJoCo.
 *
 * One implicit (linearised backward Euler) step, solved for velocities:
 *   1. polar:    F_e = Ds_e Dm_e^-1,  R_e = polar(F_e)  (proper rotation, det R = +1)
 *   2. assemble: K_R = R_e K_e R_e^T,  f_el = R_e K_e (R_e^T x - X)
 *                A = (1 + h a) M + (h b + h^2) K_R,   b = M v0 + h (f_ext + M g - f_el)
 *   3. solve:    A v1 = b by PCG (block-Jacobi, rotated-Cholesky or AMG preconditioner, def.preconditioner;
 *                A assembled, or K_R applied element by element), fixed DOFs projected out, warm-started
 *                from c0 v0 + c1 v_-1, the energy minimum over the last two velocities,
 *                until |r| <= tol * max(|b|, b_scale) (b_scale keeps a part at rest under a
 *                constant load from chasing round-off: there |b| -> 0 while the forces do not)
 *   4. update:   x1 = x0 + h v1
 */
#ifndef COFEM_FEM_H
#define COFEM_FEM_H
#include "cofem/mesh.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Time integrators, both solved for velocities with the same PCG:
 *  backward Euler (paper 003; first order, damps), and Newmark average acceleration
 *  (trapezoidal; second order, no numerical damping):
 *    A = (1 + h a/2) M + (h b/2 + h^2/4) K_R,  b = 2 M v0 - A v0 + h/2 (f_ext0 + f_ext1) + h M g - h f_el
 *    x1 = x0 + h/2 (v0 + v1) */
enum cfIntegrator { CF_INTEGRATOR_BACKWARD_EULER = 0, CF_INTEGRATOR_NEWMARK = 1,
                   CF_INTEGRATOR_GENERALIZED_ALPHA = 2 };
/* Generalized-alpha (Chung & Hulbert 1993) with Newton iterations on the co-rotational residual
 * (fem_newton.c; the equations are written there). Unknowns x, v, a per step; rho_inf in [0, 1]
 * sets the high-frequency damping (1: none, the trapezoidal rule with end-point equilibrium;
 * 0: asymptotic annihilation). Each Newton iteration is one warm-started PCG solve with
 * A = cm M + ck T, T = K_R or sym(K_T) (dyn_tangent); converged when both the force residual and
 * the displacement increment fall below newton_tol (relative); a step whose Newton iterations
 * fail is redone as two half steps (at most newton_max_cuts times nested, counted in
 * d->warning[CF_WARN_STEP_CUT]). The CUDA backend runs it with T = K_R through the same driver
 * (cf_newton_step, fem/fem_backend.h). */

/* PCG preconditioners:
 *  block Jacobi: the inverse 3x3 diagonal blocks of A (paper 003's choice; cheap, GPU-friendly);
 *  rotated Cholesky: P^-1 = Q A0^-1 Q^T, A0 the system matrix at rest (factored once with CHOLMOD)
 *  and Q the block diagonal of node rotations (following, one Newton step per time step, the polar
 *  of the sum of the element rotations around each node). Exact for a rigidly rotating part, so
 *  PCG needs few iterations while the deformation is moderate. CPU only; memory of a sparse
 *  Cholesky factor.
 *  AMG: P^-1 = Q AMG(A0) Q^T, the same rotation of the same A0, with one V-cycle of
 *  smoothed-aggregation algebraic multigrid (rigid-body modes as near-null space, Chebyshev
 *  smoothing; fem_amg.c) in place of the Cholesky solve: set up once, applied by sparse
 * *  matrix-vector products only, memory linear in the part's size. CPU, and the GPU with backward
 *  Euler (kernels/fem_cuda_amg.cu).
 *  auto: chosen by cf_model_create from the part's size (cf_preconditioner_auto); scenes default
 *  to it. */
enum cfPreconditioner { CF_PRECOND_BLOCK_JACOBI = 0, CF_PRECOND_ROTATED_CHOLESKY = 1, CF_PRECOND_AMG = 2,
                        CF_PRECOND_AUTO = 3 };
/* Tetrahedra from which "auto" takes AMG instead of the rotated Cholesky on the CPU. Measured on
 * the lug, hinge and beam families, one core, one run (perf/results/c-2core-dev-family-auto/):
 * ms per step rotated Cholesky / AMG: hinge 3.5k 2.3 / 5.8, lug 10k 11.2 / 9.5, hinge 10k 10.0 /
 * 15.0, beam 20k 23.0 / 16.9, lug 100k 193 / 199, hinge 100k 335 / 462: neither wins everywhere
 * below 100k, the rotated Cholesky more often. Its factorisation (4.9 s at 100k against AMG's
 * 2.7 s setup) and its factor grow faster than the mesh, and it is not run above 200k. */
#define CF_PRECOND_AUTO_AMG_TETS 100000
/* The preconditioner "auto" stands for: on the GPU (gpu = 1) AMG with backward Euler (measured on
 * an H200: 10x fewer ms per step than block Jacobi on the 1.3k-tetrahedra lug, 12x on the 1M lug,
 * perf/results/NVIDIA-H200/), block Jacobi with the other integrators (the GPU runs AMG with
 * generalized-alpha when asked, since 2026-11-29, but that path has not yet run on a device); on the CPU the rotated Cholesky below CF_PRECOND_AUTO_AMG_TETS tetrahedra
 * and AMG from there. integrator: enum cfIntegrator. */
int cf_preconditioner_auto(int ntet, int integrator, int gpu);
/* "block-Jacobi", "rotated-Cholesky", "AMG", "auto" */
const char* cf_preconditioner_name(int preconditioner);
/* The preconditioner a scene key names ("block_jacobi", "rotated_cholesky", "amg", "auto"), or -1. */
int cf_preconditioner_from_key(const char* key);

/* Linearisation of the elastic force inside the step, f_el(x1) ~ f_el(x0) + T (x1 - x0):
 *  T = K_R (paper 003): cheap, but it omits the rotation of the stressed elements, so under a
 *      large concentrated load the quasi-static step can flip between two shapes forever (a
 *      fixed-point iteration with the wrong tangent; seen on the lug above ~4 MN at one node);
 *  T = sym(K_T), the symmetric part of the consistent co-rotational tangent (fem_static.c):
 *      converges to the static solution there and often needs fewer PCG iterations; if it makes
 *      A indefinite (strong compression), the step is redone with K_R. CPU only. */
enum cfDynTangent { CF_DYN_TANGENT_KR = 0, CF_DYN_TANGENT_SYM_CONSISTENT = 1 };

/* Everything needed to build a model; start from cf_default_model_def(). */
typedef struct cfModelDef {
  double E, nu, rho;             /* Young's modulus [Pa], Poisson ratio, density [kg/m^3] */
  double rayleigh_alpha;         /* C = alpha M + beta K_R */
  double rayleigh_beta;
  double gravity[3];             /* [m/s^2] */
  double dt;                     /* time step h [s] */
  int consistent_mass;           /* 0: lumped (default), 1: consistent */
  double pcg_tol;                /* relative residual |r| / |b| */
  int pcg_max_iter;
  int warm_start;                /* 1: start PCG from the previous velocities (paper 003): the
                                  * energy minimum over span{v0, v_-1} (docs/decisions.md) */
  int threads;                   /* threads of the model's OpenMP regions (num_threads), 0: OpenMP's
                                  * default (omp_get_max_threads); the process-wide setting is not
                                  * changed; results do not depend on it. CHOLMOD and BLAS (rotated
                                  * Cholesky's factor, eigen, mechanisms) keep their own counts */
  int integrator;                /* enum cfIntegrator (default backward Euler) */
  int preconditioner;            /* enum cfPreconditioner (default block Jacobi) */
  int dyn_tangent;               /* linearisation of f_el in the step: 0 = K_R (paper 003),
                                  * 1 = symmetric part of the consistent tangent (see below) */
  /* generalized-alpha (integrator 2) */
  double rho_inf;                /* spectral radius at infinite frequency, [0, 1] (default 0.9) */
  double newton_tol;             /* relative force residual and displacement increment (1e-6) */
  int newton_max_iter;           /* Newton iterations per (sub)step (default 20) */
  int newton_max_cuts;           /* nested step halvings before the step fails (default 4) */
  /* divergence monitor (every integrator, fem_divergence.c): 1 (default) = a step that leaves a
   * non-finite state, energy above the input work by 10x the energy scale, or a node farther
   * than 100 part sizes from where the part's mean motion puts it, fails with CF_ERR_DIVERGED */
  int divergence_check;
  /* rotations of the quadratic element (npe 10): CF_ROTATIONS_ELEMENT (default, one per element,
   * the polar of F at its centroid) or CF_ROTATIONS_QUADRATURE (one per quadrature point:
   * cf_tet10_rotate_qp); the linear element has one point and ignores it */
  int rotations;
} cfModelDef;

enum cfRotations { CF_ROTATIONS_ELEMENT = 0, CF_ROTATIONS_QUADRATURE = 1 };

cfModelDef cf_default_model_def(void);

/* Immutable after cf_model_create (fixed DOFs are set before the first step). */
typedef struct cfModel {
  int nnode, ntet, ndof;
  cfModelDef def;
  double* X;            /* [3*nnode] rest positions */
  int* tet;             /* [npe*ntet] */
  /* per element, filled once */
  double* Dm_inv;       /* [9*ntet] inverse rest edge matrix, row-major */
  double* vol;          /* [ntet] rest volume */
  double* Ke;           /* [144*ntet] linear stiffness 12x12 ([900*ntet], 30x30 with npe = 10),
                         * row-major, DOF = 3*local_node+dir */
  /* mass: scalar coefficient per block (the 3x3 block is m*I) */
  double* node_mass;    /* [nnode] lumped (row sums of the consistent mass) */
  double* Mblk;         /* [nnzb] mass coefficient of each block (lumped: diagonal only) */
  /* 3x3-block CSR pattern of the assembled matrix (both triangles stored) */
  int nnzb;
  int* row_ptr;         /* [nnode+1] */
  int* col;             /* [nnzb] */
  int* diag;            /* [nnode] index of the diagonal block of each row */
  /* gather maps (deterministic, no atomics): what each block / node sums over */
  int* blk_src_ptr;     /* [nnzb+1] */
  int* blk_src;         /* [npe^2*ntet] entries e*npe^2 + a*npe + b  (element e, local block a,b) */
  int* node_src_ptr;    /* [nnode+1] */
  int* node_src;        /* [npe*ntet] entries e*npe + a */
  unsigned char* fixed; /* [ndof] 1 = DOF held at zero velocity while supports are active */
  int nfixed;
  /* Nodes per element npe: 4 (linear tetrahedra, the default) or 10 (quadratic, CF_TET10_NODES;
   * node order in cofem/mesh.h). With 10, tet is [10*ntet], Ke, d->KR [900*ntet] (30x30),
   * d->fe [30*ntet]; the element rotation R is the polar of F at the centroid (Gc,
   * cf_tet10_elem_polar; Dm_inv is the corners' frame, for checks); vol is the quadrature's. The CPU stages take both; the
   * CUDA backend, mechanisms and Craig-Bampton reduction refuse 10 (CF_ERR_UNSUPPORTED). */
  int npe;
  double* Me;           /* [100*ntet] consistent scalar element masses of the quadratic element, or NULL */
  double* Gc;           /* [30*ntet] its rest shape-function gradients at the centroid (F = sum x_a g_a^T), or NULL */
  double* Gq;           /* [120*ntet] ... at its 4 quadrature points, and Wq [4*ntet] their weights
                           w_q det J_q: with def.rotations CF_ROTATIONS_QUADRATURE, else NULL */
  double* Wq;
} cfModel;

/* Dot products are summed in chunks of this many entries, chunks in order, so results do not
 * depend on the thread count. */
enum { CF_DOT_CHUNK = 2048 };

enum cfStage { CF_STAGE_POLAR, CF_STAGE_ASSEMBLE, CF_STAGE_PCG, CF_STAGE_UPDATE,
               CF_STAGE_TRANSFER, CF_STAGE_COUNT };

/* Mutable state and scratch; arrays grouped by the stage that fills them. */
typedef struct cfData {
  /* state */
  double t;
  double* x;            /* [3*nnode] current positions */
  double* v;            /* [3*nnode] velocities */
  /* inputs */
  double* f_ext;        /* [3*nnode] applied nodal forces (gravity is added by the step) */
  double* f_ext_prev;   /* [3*nnode] f_ext of the previous step (Newmark) */
  double* v_prev;       /* [3*nnode] velocities at the start of the step (Newmark, fallback) */
  int supports_active;  /* 0: fixed DOFs are released (viewer: supports removed) */
  /* polar */
  double* R;            /* [9*ntet] element rotations, row-major */
  double* Rq;           /* [36*ntet] the quadratic element's rotations at its quadrature points
                           (def.rotations CF_ROTATIONS_QUADRATURE), or NULL */
  int ninverted;        /* elements with det F <= 0 in the last step */
  int force_kr;         /* 1: use K_R whatever dyn_tangent says (fallback inside a step) */
  /* assemble (KR, A and Pinv are not formed by cf_step with the rotated-Cholesky preconditioner,
   * backward Euler and the K_R tangent: it applies K_R element by element, see fem_pcg.h) */
  double* KR;           /* [144*ntet] rotated element stiffness R K_e R^T */
  double* fe;           /* [12*ntet] element elastic forces R K_e (R^T x - X) */
  double* f_el;         /* [3*nnode] assembled elastic force */
  double* A;            /* [9*nnzb] system matrix blocks, row-major 3x3 */
  double* b;            /* [3*nnode] right side */
  double b_scale;       /* |M v0| + h (|f_ext + M g| + |f_el|): force scale of the PCG tolerance */
  double* Pinv;         /* [9*nnode] inverse diagonal blocks (block-Jacobi) */
  /* pcg scratch */
  double* r;
  double* z;
  double* p;
  double* q;
  double* dot_partial;  /* per-chunk partial sums (fixed order): [ndof/CF_DOT_CHUNK + 1] or more */
  double* node_R;       /* [9*nnode] node rotations (rotated-Cholesky and AMG preconditioners) */
  struct cfPrecond* precond; /* rotated-Cholesky factorisations or AMG hierarchies, or NULL */
  /* counters */
  long steps;
  int pcg_iters;        /* last solve */
  double pcg_residual;  /* last solve, relative */
  long pcg_iters_total;
  int warning[CF_WARN_COUNT]; /* counted numerical events, indexed by positive cfStatus */
  double timer[CF_STAGE_COUNT]; /* accumulated seconds per stage */
  /* generalized-alpha (fem_newton.c; allocated for that integrator only) */
  double* a;            /* [3*nnode] accelerations */
  double* ga_x0;        /* [3*nnode] x, v, a and f_el at the start of the (sub)step */
  double* ga_v0;
  double* ga_a0;
  double* ga_f0;
  double* ga_F0;        /* [3*nnode] external force at the start of the (sub)step */
  double* ga_F1;        /* [3*nnode] and at its end */
  double* ga_du;        /* [3*nnode] Newton increment (the PCG's unknown) */
  double* ga_du1;       /* [3*nnode] first increment of the last step (warm start) */
  double* ga_r;         /* [3*nnode] residual */
  double* ga_a_step;    /* [3*nnode] a at the start of the step (restored when it fails) */
  int ga_ready;         /* a and ga_f0 belong to the current x, v (0: formed at the next step) */
  int newton_iters;     /* last step, all its substeps */
  long newton_iters_total;
  double newton_residual; /* last step: relative force residual at convergence */
  int step_cuts;        /* last step: halvings */
  /* divergence monitor (fem_divergence.c) */
  double* mon_x0;       /* [3*nnode] x at the start of the step */
  double mon_energy0;   /* kinetic + strain energy when the run started (steps == 0) */
  double mon_work;      /* work of the external forces and gravity since then */
  double mon_work_max;  /* largest |mon_work| so far */
  double mon_size;      /* the part's size: diagonal of the rest bounding box */
  double mon_energy;    /* kinetic + strain energy after the last step */
  /* warm start (cf_pcg_warm_start; at the end to keep the offsets of the fields above): the step's
   * history, apart from the PCG's scratch r, z, p, q */
  double* warm_v1;      /* [3*nnode] v_-1: the velocities of the step before this one (v_prev
                         * when the step starts), projected on the free DOFs: the second vector */
  double* warm_Av0;     /* [3*nnode] A v0 */
  double* warm_Av1;     /* [3*nnode] A v_-1 */
} cfData;

/* Build the model: per-element Dm^-1, volume and K_e, masses, block pattern, gather maps.
 * Errors: invalid material (E <= 0, nu outside (-1, 0.5), rho <= 0, non-finite), bad dt. */
int cf_model_create(const cfMesh* mesh, const cfModelDef* def, cfModel** out);
void cf_model_free(cfModel* m);
/* Fix the DOFs of a node set (mask bit 0/1/2 = x/y/z). Call before creating data. */
int cf_model_fix_nodes(cfModel* m, const int* nodes, int count, int dir_mask);

/* Allocate the data (and factor the preconditioner if asked): call after fixing DOFs. */
int cf_data_create(const cfModel* m, cfData** out);
void cf_data_free(cfData* d);
/* Back to rest: x = X, v = 0, t = 0, R = I, counters cleared. */
void cf_data_reset(const cfModel* m, cfData* d);

/* One implicit step (the four stages). Returns CF_OK or a positive warning (also counted in
 * d->warning); the state stays finite. A step that fails (CF_ERR_DIVERGED: the divergence monitor,
 * or Newton not converging after its halvings) leaves the state as it was before the step and the
 * message names the step, the time, what grew and what to try. */
int cf_step(const cfModel* m, cfData* d);

/* The stages on their own (for tests and benchmarks). */
void cf_stage_polar(const cfModel* m, cfData* d);
void cf_stage_elastic(const cfModel* m, cfData* d);  /* KR, fe and the gathered f_el */
void cf_stage_assemble_system(const cfModel* m, cfData* d, double h); /* A, b, Pinv */
int cf_stage_pcg(const cfModel* m, cfData* d);       /* solves A v = b into d->v */
void cf_stage_update(const cfModel* m, cfData* d, double h);

/* Total kinetic energy 1/2 v^T M v and the co-rotational strain energy
 * sum_e 1/2 u_e^T K_e u_e, u_e = R_e^T x_e - X_e. */
double cf_kinetic_energy(const cfModel* m, const cfData* d);
double cf_strain_energy(const cfModel* m, const cfData* d);
/* Per-element von Mises stress of the co-rotated linear strain [Pa] at d->x (cf_stress_field_corotated;
 * 10-node elements: at the centroid). */
void cf_von_mises(const cfModel* m, const cfData* d, double* out /* [ntet] */);

/* ---- strain and stress fields for output (fem_stress.c): the .vtu frames, the viewer, Python ----
 * Co-rotated small strain of element e: R_e = polar(F_e), F_e = Ds(x) Dm^-1, node displacements
 * u_a = R_e^T (x_a - x_0) - (X_a - X_0), eps = sym(sum_a u_a (x) grad N_a); stress
 * sigma = lam tr(eps) I + 2 mu eps. Symmetric tensors: 6 values in VTK's order xx yy zz xy yz xz
 * (tensor shear, not engineering shear), in the part's rest axes. Nodal values: volume-weighted
 * averages of the elements at the node. */
typedef struct cfStressField {
  int nnode, ntet;
  double* von_mises;      /* [ntet] [Pa] */
  double* strain;         /* [6 ntet] */
  double* node_von_mises; /* [nnode] */
  double* node_strain;    /* [6 nnode] */
} cfStressField;
int cf_stress_field_init(cfStressField* s, const cfModel* m);   /* allocates; CF_ERR_NOMEM */
void cf_stress_field_free(cfStressField* s);
/* from positions x [3 nnode]; R_guess [9 ntet] warm-starts the polar decompositions (NULL: cold) */
void cf_stress_field_corotated(const cfModel* m, const double* x, const double* R_guess, cfStressField* s);
/* from small displacements disp [3 nnode] (linear FEM, modal bodies' elastic displacement) */
void cf_stress_field_small(const cfModel* m, const double* disp, cfStressField* s);
/* the pieces: one element's co-rotated strain, von Mises of a strain, nodal averages */
void cf_elem_strain_corotated(const cfModel* m, const double* x, const double* R_guess, int e, double* eps6 /* [6] */);
void cf_strain_corotated(const cfModel* m, const double* x, const double* R_guess, double* eps /* [6 ntet] */);
void cf_strain_small(const cfModel* m, const double* disp, double* eps /* [6 ntet] */);
double cf_von_mises_of_strain(const cfModel* m, const double* eps6 /* [6] */);
void cf_node_average(const cfModel* m, const double* elem, int ncomp, double* node /* [ncomp nnode] */);

/* The divergence monitor on its own (cf_step calls it when def.divergence_check is set): checks
 * the state after a step that started from x0 = d->mon_x0 against the run's energy and work.
 * Returns CF_OK or CF_ERR_DIVERGED with the message. cf_divergence_restart takes the current
 * state as the new reference (after changing d->x or d->v by hand). */
int cf_divergence_check(const cfModel* m, cfData* d);
void cf_divergence_restart(const cfModel* m, cfData* d);

/* The monitor split for both backends: the figures of a state (cf_divergence_stats on the CPU,
 * device reductions on the GPU) and one decision that writes the message. */
typedef struct cfMonitorStats {
  int bad_dof;         /* first DOF whose x or v is not finite (-1: none; then nothing else is set) */
  double bad_x, bad_v; /* x and v of that DOF */
  double dev;          /* max over nodes of |(x_i - c) - (X_i - C)| (c, C: mass centres) */
  int dev_node;        /* the node of dev (the first of equals) */
  double kinetic;      /* 1/2 v^T M v */
  int full;            /* strain computed: cf_divergence_full_step(d) */
  double strain;       /* sum_e 1/2 u_e^T K_e u_e in the stress form, R = d->R (when full) */
} cfMonitorStats;
void cf_divergence_stats(const cfModel* m, const cfData* d, cfMonitorStats* st);
/* CF_OK or CF_ERR_DIVERGED with the message; updates d->mon_energy on a full step */
int cf_divergence_decide(const cfModel* m, cfData* d, const cfMonitorStats* st);
/* 1 when the step about to be counted (d->steps + 1) takes the strain energy too (every 8th) */
int cf_divergence_full_step(const cfData* d);
/* W += w (the work of one step's loads), |W| max kept */
void cf_divergence_record_work(cfData* d, double w);
/* cf_divergence_restart with the energy E0 = kinetic + strain computed elsewhere (the GPU) */
void cf_divergence_restart_energy(const cfModel* m, cfData* d, double energy0);

/* Monotonic wall clock in seconds. */
double cf_wall_time(void);
/* The thread count cofem's programs (cofem run and static, the viewer) give a part of nnode
 * nodes (a mechanism: the nodes of its FE bodies) unless the scene or OMP_NUM_THREADS says
 * otherwise: 1 below CF_THREADS_MIN_NODES nodes, or below CF_THREADS_MIN_NODES_MANY on a machine
 * with at least CF_THREADS_MANY_CORES threads; 0 (OpenMP's default) above, or when
 * OMP_NUM_THREADS is set or one thread is all there is. Measured (docs/reliability.md, "Threads
 * by default"): on the 16-core device host all threads beat one from the 10k-tetrahedra lug and
 * hinge (2.7k and 3.1k nodes: block Jacobi 2.0-2.4x, rotated Cholesky 1.1-1.2x) and never
 * reliably below (the lug, 469 nodes: 8 and 16 threads 1.2x slower); two threads were slower
 * than one with the rotated Cholesky at 10k there and never won on the 2-core machine. */
#define CF_THREADS_MIN_NODES 20000
#define CF_THREADS_MIN_NODES_MANY 2500
#define CF_THREADS_MANY_CORES 4
int cf_default_threads(long nnode);
/* the node count below which cf_default_threads gives 1 on this machine */
long cf_default_threads_min_nodes(void);

/* Threads of the dense BLAS (OpenBLAS) under CHOLMOD's supernodal factorisations and solves:
 * process-wide (OpenBLAS has no per-call count), so for programs to set, not the library. On
 * small systems its threads cost far more than they give: the lug as a corotational pendulum ran
 * 5-9x slower on the 2-core machine with the default 2 threads than with 1 (docs/reliability.md,
 * "Threads by default"). OPENBLAS_NUM_THREADS, when set, wins (then this does nothing).
 * cf_blas_threads: the current count. */
void cf_set_blas_threads(int n);
int cf_blas_threads(void);

#ifdef __cplusplus
}
#endif
#endif
