/* Generalized-alpha with Newton iterations (fem_newton.c) and the divergence monitor
 * (fem_divergence.c): internal to host/fem. */
#ifndef COFEM_FEM_NEWTON_H
#define COFEM_FEM_NEWTON_H
#include "cofem/fem.h"

/* rho_inf, newton_tol, newton_max_iter, newton_max_cuts in range (cf_model_create). */
int cf_newton_check_def(const cfModelDef* def);
/* The arrays of cfData the integrator and the monitor use (cf_data_create / cf_data_free), and
 * their state back to "not started" (cf_data_reset). */
int cf_newton_data_alloc(const cfModel* m, cfData* d);
void cf_newton_data_free(cfData* d);
void cf_newton_data_reset(const cfModel* m, cfData* d);
/* The Newton matrix A = cm M + ck T of a step of size h (T = K_R or sym(K_T)); alpha_m, alpha_f,
 * gamma, beta into par[4] when par is not NULL. */
void cf_newton_coefficients(const cfModel* m, double h, double* cm, double* ck, double* par);
/* One generalized-alpha step of d->def.dt from f_ext_prev (at t) to f_ext (at t + h). */
int cf_step_generalized_alpha(const cfModel* m, cfData* d);
/* The divergence monitor's work: W += dx . ((Fa + Fb)/2 + M g), dx = c0 u0 + c1 u1 (u1 may be NULL)
 * over the free DOFs (fem_divergence.c). */
void cf_divergence_add_work(const cfModel* m, cfData* d, double c0, const double* u0, double c1, const double* u1,
                            const double* Fa, const double* Fb);
/* cf_strain_energy in the stress form (the monitor's; R = d->R). */
double cf_strain_energy_fast(const cfModel* m, const cfData* d);
/* The diagonal of the rest bounding box (d->mon_size, set by cf_data_create). */
double cf_part_size(const cfModel* m);
#endif
