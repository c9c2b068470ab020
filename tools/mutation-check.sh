#!/usr/bin/env bash
# Mutation check (issue 18), run on demand, not in CI: each one-line mutation below is applied to a
# copy of the committed tree (git worktree of HEAD), the copy rebuilt and the test suite run; the
# table of which tests failed ("caught") is written to docs/testing.md between the markers
# <!-- mutation-table --> and <!-- /mutation-table -->. A mutation no test catches is a blind spot.
#
#   tools/mutation-check.sh [--full] [--only ID[,ID..]] [--list] [--no-docs] [--keep]
#
#   --full      run every test (default: leave out the tests below that cannot see physics and
#               the slow ones; see EXCLUDE)
#   --only      run the named mutations only (ids from --list)
#   --list      print the mutations and exit
#   --no-docs   print the table, leave docs/testing.md alone
#   --keep      keep the worktree (default: removed at the end)
# Environment: MUT_WORK (the worktree, default a fresh mktemp -d), MUT_JOBS (default 2),
# MUT_TIMEOUT (per test, seconds, default 600), MUT_EXCLUDE (a ctest -E regex replacing EXCLUDE),
# MUT_BASELINE (the unmutated suite's failing tests, space-separated: skips the baseline run).
#
# A mutation is "file|old text|new text|what it breaks[|id]": the first occurrence of the old text
# (a fixed string, one line) is replaced; the run refuses a mutation whose text is not found
# (the code moved on: update the list) or that changes more than one line. Its id is its
# position (M01 ..) unless it names one: docs/testing.md's table also has hand-run rows (a
# mutation of more than one line), and the ids must stay those of the table. Writing the table
# keeps the hand-run rows (ids this list does not have).
set -u
root=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel) || exit 1
MUTATIONS=(
  # mass
  "host/fem/fem_model.c|if (def->consistent_mass) mab =|if (0) mab =|consistent mass replaced by the lumped one"
  # damping (the system coefficients of both integrators)
  "host/fem/fem_precond.c|*cm = 1.0 + h * m->def.rayleigh_alpha;|*cm = 1.0 + 0.5 * h * m->def.rayleigh_alpha;|Rayleigh alpha halved (backward Euler)"
  "host/fem/fem_precond.c|*cm = 1.0 + 0.5 * h * m->def.rayleigh_alpha;|*cm = 1.0 + 0.25 * h * m->def.rayleigh_alpha;|Rayleigh alpha halved (Newmark)"
  "host/fem/fem_precond.c|*ck = 0.5 * h * m->def.rayleigh_beta + 0.25 * h * h;|*ck = 0.5 * h * m->def.rayleigh_beta + 0.2 * h * h;|Newmark stiffness coefficient h^2/5 for h^2/4"
  # integrators
  "host/fem/fem_assemble.c|0.5 * h * (d->f_ext_prev[k] + d->f_ext[k])|h * d->f_ext[k]|Newmark load h f1 for h/2 (f0 + f1)"
  "host/fem/fem_step.c|d->x[i] += 0.5 * h * (d->v_prev[i] + d->v[i]);|d->x[i] += h * d->v[i];|Newmark position update x1 = x0 + h v1"
  # warm start
  "host/fem/fem_step.c|memcpy(d->p, d->v_prev, sizeof(double) * m->ndof);|memcpy(d->p, d->v, sizeof(double) * m->ndof);|warm start with one vector (v0 twice)"
  # element and the bodies shared with the CUDA kernels (fem_element.h)
  "host/fem/fem_element.h|*lam = E * nu / ((1 + nu) * (1 - 2 * nu));|*lam = E * nu / ((1 + nu) * (1 - nu));|Lame lambda wrong"
  "host/fem/fem_element.h|*mu = E / (2 * (1 + nu));|*mu = 1.01 * E / (2 * (1 + nu));|shear modulus +1%"
  "host/fem/fem_element.h|const double fx = f_ext[k] + node_mass[n] * gr[i];|const double fx = f_ext[k] + 0.5 * node_mass[n] * gr[i];|gravity halved in the backward-Euler right side"
  "host/fem/fem_element.h|double m = cm * Mblk[blk];|double m = Mblk[blk];|mass coefficient dropped in the block gather (damping term lost)"
  "host/fem/fem_element.h|const double v = vlam * ga[i] * gb[j] + vmu * ga[j] * gb[i] + (i == j ? dot : 0.0);|const double v = vlam * ga[i] * gb[j] + vmu * ga[i] * gb[j] + (i == j ? dot : 0.0);|rotated stiffness K_R: the mu term transposed"
  # solver and preconditioners
  "host/fem/fem_pcg.c|double beta = rz_new / rz;|double beta = 0.9 * rz_new / rz;|PCG beta scaled by 0.9"
  "host/fem/fem_precond.c|CF_FOR(n, m->nnode, m->nnode > 4096, node_rotation(m, d, n));|(void)0;|rotated Cholesky: node rotations never updated"
  # statics
  "host/fem/fem_tangent.c|Mm[i] = (i % 4 == 0 ? tr : 0.0) - S[i];|Mm[i] = (i % 4 == 0 ? tr : 0.0) + S[i];|consistent tangent: tr S I + S for tr S I - S"
  # energy bookkeeping
  "host/fem/fem_step.c|  return 0.5 * s;|  return 0.45 * s;|kinetic energy 0.45 v^T M v"
  # multibody
  "host/mbs/mbs_forces.c|Qb[3 * k + i] += Mb[k] * g[i];|Qb[3 * k + i] += 0.5 * Mb[k] * g[i];|gravity on rigid bodies halved"
  "host/mbs/mbs_constraints.c|row[12 * slot_of(c, blk0 + j / 12) + j % 12] += s * g;|row[12 * slot_of(c, blk0 + j / 12) + j % 12] -= s * g;|modal-point joint Jacobian: amplitude columns sign flipped"
  "host/mbs/mbs_modal.c|Qy[k] -= mb->w2[k] * y[k] + 2 * mb->zeta[k]|Qy[k] -= mb->w2[k] * y[k] + mb->zeta[k]|modal damping force halved"
  "host/mbs/mbs_step.c|4 / h * d->qd[i] + d->qdd[i]);|3 / h * d->qd[i] + d->qdd[i]);|trapezoidal step: qdd_hat with 3/h for 4/h"
  # FE bodies in mechanisms: the linear coupling, flat node sets (issue 27)
  "host/mbs/mbs_fe.c|  if (s->lin_prev_step == d->steps - 1 && d->steps > 0) { /* the last step's miss, carried */|  if (0 && s->lin_prev_step == d->steps - 1) { /* the last step's miss, carried */|linear coupling: the predicted rotation without the last step's miss"
  "host/mbs/mbs_fe.c|s->y[j] = s->v0[j] - (s->y[j] - s->xp[j]) - s->ze0[j];|s->y[j] = s->v0[j] - s->ze0[j];|linear coupling: the part's residual not affine (-A0 (x - x_p) dropped)"
  "host/mbs/mbs_fe.c|    axpy_n(ek, s->Z + (size_t)k * ndof, s->y, ndof);|    axpy_n(2 * ek, s->Z + (size_t)k * ndof, s->y, ndof);|linear coupling: the joint forces counted twice (Z on the whole force)"
  "host/mbs/mbs_fe.c|      linear_symmetric(s, ndof, !fb->linear_rotated);|      (void)0;|linear coupling: G left asymmetric (Z not made consistent)"
  "host/mbs/mbs_fe.c|const int flat = !(lam[0] > 1e-8 * lam[2]);|const int flat = 0;|flat node sets measured with the full inverse"
  "host/mbs/mbs_constraints.c|vec[nv] = vg, len[nv] = Lg, dir[nv++] = fo; /* g_set . a_other */|vec[nv] = vg, len[nv] = Lg, dir[nv++] = fo + 3;|revolute about a flat set's normal: g held against the other's f"
  # the mechanism's Newton at small steps (issue 31): the round-off floor
  "host/mbs/mbs_step.c|#define NEWTON_FLOOR 100|#define NEWTON_FLOOR 1|Newton's round-off floor removed (stalls fail the step)"
  # generalized-alpha's initial acceleration (issue 31, class 9)
  "host/fem/fem_newton.c|F0[k] + m->node_mass[node] * g[k % 3] - d->f_el[k] - d->r[k];|F0[k] - d->f_el[k] - d->r[k];|generalized-alpha: gravity left out of the initial acceleration"
  "host/fem/fem_newton.c|const double fx = (1 - af) * F1[i] + af * F0[i] + m->node_mass[i / 3] * g[i % 3];|const double fx = F1[i] + 0 * F0[i] + m->node_mass[i / 3] * g[i % 3];|generalized-alpha: loads at the end of the step"
  "host/fem/fem_newton.c|d->p[i] = (1 - af) * d->v[i] + af * v0[i];|d->p[i] = d->v[i] + 0 * v0[i];|generalized-alpha: damping at the end of the step"
  "host/reduce/modal_reduce.c|r->rho != m->def.rho|r->rho != r->rho|reduction cache: the density left out of its check"
  "host/fem/fem_amg.c|    const double omega = 4.0 / 3.0 / rho;|    const double omega = 2.0 / 3.0 / rho;|AMG: the prolongator smoothing's weight halved"
  "host/fem/fem_amg.c|  const double up = 1.1 * L->lmax, lo = up / 30.0;|  const double up = 1.0 * L->lmax, lo = up / 30.0;|AMG: the Chebyshev smoother's safety margin removed"
  "host/mbs/mbs_fe.c|                  : fb->corotational ? fem->Mblk[fem->diag[order[s]]] : fem->node_mass[order[s]];|                  : 1 ? fem->Mblk[fem->diag[order[s]]] : fem->node_mass[order[s]];|lumped FE body: the consistent mass's diagonal for point masses"
  "host/fem/fem_divergence.c|0.5 * (Fa[i] + Fb[i]) + m->node_mass[i / 3] * g[i % 3]);|0.5 * (Fa[i] + Fb[i]) + 0 * m->node_mass[i / 3] * g[i % 3]);|divergence monitor: gravity's work left out"
  "host/mbs/mbs_modal.c|    for (int a = 0; a < 3; a++) Psi[a * nm + j] = te[a];|    for (int a = 0; a < 3; a++) Psi[a * nm + j] = -te[a];|modal joint at a flat node set: the sign of the set's small rotation"
  # mechanism statics: the force balance and the free motion (issue 31)
  "host/mbs/mbs_static.c|      d->t = o->time - m->opt.dt; /* the step evaluates drivers and loads at t + h = T */|      d->t = o->time - 2 * m->opt.dt; /* the step evaluates drivers and loads at t + h = T */|statics: drivers evaluated one pseudo-step late"
  "host/mbs/mbs_static.c|      if (dq <= o->tol && unb <= FORCE_TOL * fscale) break;|      if (dq <= o->tol) break;|statics converged on small moves alone"
  "host/mbs/mbs_static.c|#define FREE_STEPS 3|#define FREE_STEPS 1000000|statics: a free body under load not found early"
  # the linear coupling at pins between FE bodies
  "host/mbs/mbs_step.c|phimax <= fmax(10 * phi_pred, m->opt.tol_phi)|phimax <= fmax(1e30 * phi_pred, m->opt.tol_phi)|linear coupling: second linearisation at the first iterate, however far off"
  "host/mbs/mbs_fe.c|s->y[j] = s->v0[j] - (s->y[j] - s->xp[j]) - s->ze0[j];|s->y[j] = s->v0[j] - (s->y[j] - s->xp[j]);|linear coupling: the joint forces of v0 taken with the current Z (Z0 e0 dropped)"
  # Craig-Bampton
  "host/reduce/modal_reduce.c|r->J[3 * a + b] += MX[3 * q + a] * X[3 * q + b];|r->J[3 * a + b] += 0.5 * MX[3 * q + a] * X[3 * q + b];|reduction invariant J (second moments) halved"
  # scene loading
  "host/io/fem_scene.c|fmin(1.0, (t - L->t_start) / L->ramp)|fmin(1.0, (t - L->t_start) / (2 * L->ramp))|scene load ramp twice as long"
  # the linear coupling's one linearisation a step (issue 27)
  "host/mbs/mbs_fe.c|      if (!(a <= t2)) t2 = isnan(a) ? INFINITY : a; /* a NaN position: linearise again (the step fails there) */|      if (0) t2 = a;|linear coupling: no second linearisation where an element turned beyond its frozen rotation"
  "host/mbs/mbs_fe.c|      fd->x[3 * k + a] = d->save[j] + h * d->save[n + j] + 0.5 * h * h * d->save[3 * n + m->ncon + j];|      fd->x[3 * k + a] = d->save[j] + h * d->save[n + j];|linear coupling: the predicted rigid rotation without the acceleration term"
  "host/mbs/mbs_fe.c|  turn_blocks(D, fd->R, fem->ntet);|  (void)D;|linear coupling: the element rotations left at the step's start (not turned by the prediction)"
  # geometric stiffening of modal bodies (issue 30 item 2)
  "host/reduce/reduce_geometric.c|for (int i = 0; i < 3; i++) Kg[(3 * a + i) * 12 + 3 * b + i] = vol * s;|for (int i = 0; i < 3; i++) Kg[(3 * a + i) * 12 + 3 * b + i] = 0.9 * vol * s;|element geometric stiffness scaled by 0.9"
  "host/reduce/reduce_geometric.c|yj[3 * i + k] = V * (H[3 * i] * S[k]|yj[3 * i + k] = 0.9 * V * (H[3 * i] * S[k]|modal geometric stiffness scaled by 0.9"
  "host/mbs/mbs_modal.c|        Qy[j] -= s;|        Qy[j] -= 0 * s;|modal body: the geometric stiffening's force dropped"
  "host/mbs/mbs_modal.c|if (Kl) v += cK * Kl[|if (Kl) v -= cK * Kl[|modal body: the geometric stiffness's tangent with its sign flipped"
  # statics: convergence at the positions' round-off (a tiny load)
  "host/fem/fem_static.c|      if (dun <= fmax(1e-10 * un, 1e3 * DBL_EPSILON * xn)) {|      if (dun <= 1e-10 * un) {|statics: the displacement test against the displacement, not the positions' round-off"
  # the mechanisms' divergence monitor
  "host/mbs/mbs_monitor.c|    const double r = radius(mon->x, nn), r0 = mon->r0[k];|    const double r = 0 * radius(mon->x, nn), r0 = mon->r0[k];|the flexible bodies' divergence monitor never fires"
  # FE bodies in mechanisms: Rayleigh damping, the initial velocities
  "host/mbs/mbs_fe.c|          fd->f_ext[3 * tn[r / 3] + r % 3] -= rb * s;|          fd->f_ext[3 * tn[r / 3] + r % 3] -= 0.5 * rb * s;|FE bodies in mechanisms: the Rayleigh beta force halved"
  "host/mbs/mbs_kinematics.c|  if (!m->nfe) return cf_mbs__project_velocities(m, d, 0.0);|  return cf_mbs__project_velocities(m, d, 0.0);|FE mechanisms' initial velocities projected in the mass metric"
  # the linear coupling's rotated factor: a free part turned as a whole
  "host/mbs/mbs_fe.c|    whole = spread2 <= LINEAR_ROT_SPREAD * LINEAR_ROT_SPREAD;|    whole = 0;|linear coupling, rotated factor: a free part turned node by node|M60"
  # angle drivers at FE sets, joints between FE and modal sets (issue 27)
  "host/mbs/mbs_constraints.c|const double scos = (s == 1) != gmeas ? 1 : -1;|const double scos = (s == 1) != gmeas ? -1 : 1;|angle driver at an FE set: the -cos term's sign flipped|M61"
  "host/mbs/mbs_constraints.c|v += c->ft_s[k] * (co[2] * cf_mbs_dot3(S, B) + 2 * co[1] * (cf_mbs_dot3(Sd, B) + cf_mbs_dot3(S, Bd)));|v += c->ft_s[k] * (co[2] * cf_mbs_dot3(S, B));|angle driver at an FE set: the bias without its co' terms|M62"
  "host/mbs/mbs_constraints.c|const double co = c->ft_s[t] * cf_mbs__fe_term_coef(d, c, t);|const double co = c->ft_s[t];|linear coupling: the driver's coefficient left out of the interface columns' J_F|M63"
  "host/mbs/mbs_constraints.c|for (int a = 0; a < 3; a++) B[a] += o.M[a];|for (int a = 0; a < 3; a++) B[a] += 0 * o.M[a];|FE-modal joint: the modal set's part left out of the condensed rows' J_F|M64"
  "host/mbs/mbs_constraints.c|v += c->ft_s[k] * co[0] * (2 * cf_mbs_dot3(Sd, Md) + cf_mbs_dot3(S, Mc));|v += c->ft_s[k] * co[0] * (2 * cf_mbs_dot3(Sd, Md));|FE-modal joint: the bias without the modal side's curvature|M65"
  "host/mbs/mbs_constraints.c|int st = fe_axis_modal_side(def, m, x, c, (int)((dir[k] - fo) / 3) + 1);|int st = 0;|FE-modal joint: the modal frame's axes instead of the set's measured directions|M66"
  # the semi-recursive formulation at modal points, the RPR and PRP dyads, sessions (issue 29)
  "host/mbs/mbs_semirecursive.c|  if (!Th) return;|  if (!Th + 1) return;|joint at a modal parent's point: the frame's turn left out|M67"
  "host/mbs/mbs_semirecursive.c|    cf_mbs_cross3(Zi + 3, bj, bdj);|    memset(bdj, 0, 3 * sizeof(double));|joint at a modal parent's point: the translation's b_dot dropped|M68"
  "host/mbs/mbs_semirecursive.c|Jk[s->mb_z0[ib] + off + x] += g[x];|Jk[s->mb_z0[ib] + off + x] += 0 * g[x];|closure rows: the amplitude columns dropped|M70"
  "host/mbs/mbs_semirecursive.c|+= same ? v : 2 * v;|+= same ? v : v;|one amplitude's two motions: the cross term counted once|M71"
  "host/mbs/mbs_groups.c|double side = sig_pred + cu >= 0 ? 1 : -1, sigma|double side = sig_pred + cu >= 0 ? -1 : 1, sigma|RPR dyad: the other branch|M72"
  "host/mbs/mbs_groups.c|    double sigma = cf_mbs_dot3(ea[sb], n) / den, P[3];|    double sigma = cf_mbs_dot3(ea[1 - sb], n) / den, P[3];|PRP dyad: the two sigmas swapped|M73"
  "host/io/mbs_session.c|             : s->sr ? cf_mbs_sr_step(s->m, s->sr, s->d) : cf_mbs_step(s->m, s->d);|             : cf_mbs_step(s->m, s->d);|sessions step the global formulation|M74"
  # quadratic tetrahedra, one rotation per quadrature point (issue 30)
  "host/fem/fem_model.c|  d.rotations = CF_ROTATIONS_QUADRATURE;|  d.rotations = CF_ROTATIONS_ELEMENT;|quadratic elements: one rotation per element by default|M75"
  "host/fem/fem_element.h|        sig[3 * i + j] = 2 * mu * eij + (i == j ? lam * tr : 0.0);|        sig[3 * i + j] = mu * eij + (i == j ? lam * tr : 0.0);|quadratic element, rotations per point: the shear stress halved|M76"
  # the rotated factor's model check (issue 27)
  "host/mbs/mbs_fe.c|#define ROTATED_MODEL_FREE 0.3|#define ROTATED_MODEL_FREE 1e30|rotated factor: a free part's model never checked|M77"
  "host/mbs/mbs_fe.c|#define ROTATED_MODEL_CLAMPED 1.0|#define ROTATED_MODEL_CLAMPED 0.1|rotated factor: a clamped part's model bound 10x tighter|M78"
  # the reduction's rigid-body modes by shape, its basis orthonormalised (issue 30)
  "host/reduce/modal_reduce.c|  while (*nr < 6 && mu[*nr] <= rigid_tol) (*nr)++;|  while (*nr < 6 && mu[*nr] <= rigid_tol * 1e-30) (*nr)++;|rigid-body modes: the shape test's tolerance 1e-30 of its own (none found)|M79"
  "host/reduce/modal_reduce.c|  if (opt.orthonormalise && (st = orthonormalise_basis(m, r, Mb)) < 0) goto done;|  if (0 && opt.orthonormalise && (st = orthonormalise_basis(m, r, Mb)) < 0) goto done;|the basis not orthonormalised before the projection|M80"
  # geometric stiffening loaded by the interface's rate; a free part held by one rigid point (issue 30)
  "host/mbs/mbs_modal.c|      if (cf_reduction_interface_rotations(r, md->X, th)) {|      if (0 && cf_reduction_interface_rotations(r, md->X, th)) {|geometric stiffening of a free-interface body: the frame's rate, not the interface's|M81"
  "host/reduce/reduce_points.c|  if (!(kscale > 1e-12 * kdiag)) kscale = kdiag;|  if (!(kscale > 0)) { st = cf_error(CF_ERR_SOLVER, \"no strain energy\"); goto done; }|the static fields' scale: back to the exact-zero test|M82"
  "host/mbs/mbs_modal.c|      for (int j = 0; j < nm; j++) w[a] += th[3 * j + a] * yd[j];|      for (int j = 0; j < nm; j++) w[a] -= th[3 * j + a] * yd[j];|geometric stiffening: the modes' interface rotation rate with its sign flipped|M83"
  # the linear coupling's bodies integrating their own nodes (issue 27's GPU part): the body's own
  # Newton right side without its inertia (test_mbs_linear_coupling: the pendulum's period 40% off),
  # and the device store's rates without qd_hat (test_cuda_mbs_fe_mock: 5.4e-2 m off the CPU's)
  "host/mbs/mbs_fe.c|    for (int k = 0; k < 3; k++) y[k] = mn * a[3 * n + k];|    for (int k = 0; k < 3; k++) y[k] = 0 * mn * a[3 * n + k];|the linear coupling's own right side without the body's inertia|M84"
  "host/mbs/mbs_fe.c|      const double c1[2] = {c->c_qd, 1}, c2[2] = {c->c_qdd, 1};|      const double c1[2] = {c->c_qd, 0}, c2[2] = {c->c_qdd, 1};|a GPU body's rates without the integrator's qd_hat|M85"
)
# Left out by default: tests that do not look at physics (viewer, install, Python bindings, mesh
# readers, fuzz replays, hostile input) and the slowest (test_mbs_fe_bodies ~5 min, test_soak);
# --full runs them too.
EXCLUDE=${MUT_EXCLUDE:-'^(test_viewer_.*|test_install|test_python|test_python_install|test_meshes_regen|test_cli_bad_meshes|test_hostile_input|test_mesh_io|test_bad_input|test_fuzz_regressions|test_input_files|test_cuda_stages|test_mbs_fe_bodies|test_soak)$'}

full=0 only="" list=0 docs=1 keep=0
while [ $# -gt 0 ]; do
  case "$1" in
    --full) full=1 ;;
    --only) only=$2; shift ;;
    --list) list=1 ;;
    --no-docs) docs=0 ;;
    --keep) keep=1 ;;
    *) echo "usage: $0 [--full] [--only ID,..] [--list] [--no-docs] [--keep]" >&2; exit 2 ;;
  esac
  shift
done
id_of() { # the id of mutation $1 (0-based index): its own fifth field, or its position
  local f o n w x
  IFS='|' read -r f o n w x <<<"${MUTATIONS[$1]}"
  if [ -n "$x" ]; then echo "$x"; else printf 'M%02d' $(($1 + 1)); fi
}
if [ "$list" -eq 1 ]; then
  for i in "${!MUTATIONS[@]}"; do IFS='|' read -r f o n w x <<<"${MUTATIONS[$i]}"; printf '%s  %-28s %s\n' "$(id_of "$i")" "$f" "$w"; done
  exit 0
fi
jobs=${MUT_JOBS:-2} tmo=${MUT_TIMEOUT:-600}
work=${MUT_WORK:-$(mktemp -d /tmp/cofem-mutation-XXXXXX)}
if [ -e "$work/.git" ]; then # a worktree kept from an earlier run (--keep): reuse it and its build
  git -C "$work" checkout -q --detach "$(git -C "$root" rev-parse HEAD)" && git -C "$work" checkout -q -- . || exit 1
else
  rmdir "$work" 2>/dev/null
  git -C "$root" worktree add -q --detach "$work" HEAD >/dev/null || exit 1
fi
cleanup() { [ "$keep" -eq 1 ] || { git -C "$root" worktree remove --force "$work" >/dev/null 2>&1; }; }
trap cleanup EXIT
log="$work/mutation.log"
head=$(git -C "$root" rev-parse --short HEAD)
echo "mutation check of $head in $work (log: $log)"
cmake -S "$work" -B "$work/build" -DCMAKE_BUILD_TYPE=Release >>"$log" 2>&1 || { echo "configure failed"; exit 1; }
build() { cmake --build "$work/build" -j"$jobs" >>"$log" 2>&1; }
run_suite() { # prints the names of the failed tests
  local sel=()
  [ "$full" -eq 1 ] || sel=(-E "$EXCLUDE")
  local failed="$work/build/Testing/Temporary/LastTestsFailed.log"
  rm -f "$failed"
  (cd "$work/build" && ctest -j"$jobs" --timeout "$tmo" "${sel[@]}" >"$work/ctest.out" 2>&1)
  # CTest lists the failed tests as "N:name", one a line (the file exists only when some failed)
  [ -f "$failed" ] && cut -d: -f2 "$failed" | sort -u | tr '\n' ' '
}
build || { echo "the unmutated tree does not build"; exit 1; }
t0=$(date +%s)
if [ -n "${MUT_BASELINE+x}" ]; then # the unmutated suite's failures known from an earlier run
  base=$MUT_BASELINE
else
  base=$(run_suite)
fi
echo "baseline ($(($(date +%s) - t0)) s): failing: ${base:-none}"
[ -z "$base" ] || echo "warning: tests failing without a mutation are not counted as catches: $base"
rows=()
ncaught=0 ntotal=0
order=("${!MUTATIONS[@]}")
if [ -n "$only" ]; then # in the order given
  order=()
  for id in ${only//,/ }; do
    k=-1
    for j in "${!MUTATIONS[@]}"; do [ "$((10#$(id_of "$j" | tr -d M)))" -eq "$((10#${id#M}))" ] && k=$j; done
    [ "$k" -ge 0 ] || { echo "no mutation $id (--list)" >&2; exit 2; }
    order+=("$k")
  done
fi
for i in "${order[@]}"; do
  id=$(id_of "$i")
  IFS='|' read -r file old new what _ <<<"${MUTATIONS[$i]}"
  ntotal=$((ntotal + 1))
  if ! OLD="$old" NEW="$new" perl -0pi -e 'BEGIN{$o=$ENV{OLD};$n=$ENV{NEW}} s/\Q$o\E/$n/ or exit 3' "$work/$file"; then
    echo "$id: text not found in $file (the code changed: update the list)"
    rows+=("| $id | \`$file\` | $what | text not found: not run |")
    continue
  fi
  nl=$(git -C "$work" diff --numstat -- "$file" | awk '{print $1}')
  if [ "$nl" != "1" ]; then
    echo "$id: changes $nl lines, not one"; git -C "$work" checkout -- "$file"
    rows+=("| $id | \`$file\` | $what | not a one-line change: not run |")
    continue
  fi
  t0=$(date +%s)
  if ! build; then
    caught="(does not compile)"
  else
    failed=$(run_suite)
    caught=""
    for t in $failed; do [[ " $base " == *" $t "* ]] || caught="$caught $t"; done
  fi
  git -C "$work" checkout -- "$file"
  [ -n "$caught" ] && ncaught=$((ncaught + 1))
  echo "$id ($(($(date +%s) - t0)) s) $what: ${caught:-NOT CAUGHT}"
  rows+=("| $id | \`$file\` | $what | ${caught:-**not caught**} |")
done
build # leave the copy unmutated
table=$(
  echo "Run of $(date -u +%Y-%m-%d) on $head ($([ "$full" -eq 1 ] && echo "the whole suite" || echo "ctest -E '$EXCLUDE'")): $ncaught of $ntotal mutations caught."
  echo
  echo "| id | file | mutation | failing tests |"
  echo "|---|---|---|---|"
  printf '%s\n' "${rows[@]}"
)
echo "$table"
if [ "$docs" -eq 1 ] && [ -z "$only" ]; then
  doc="$root/docs/testing.md"
  if grep -q '<!-- mutation-table -->' "$doc" 2>/dev/null; then
    # the hand-run rows of the table (ids not in this list) kept, every row in id order
    ran=" $(for i in "${!MUTATIONS[@]}"; do id_of "$i"; done | tr '\n' ' ')"
    kept=$(sed -n '/<!-- mutation-table -->/,/<!-- \/mutation-table -->/p' "$doc" | grep -E '^\| M[0-9]+ \|' |
      while IFS= read -r row; do rid=$(echo "$row" | awk -F'|' '{gsub(/ /, "", $2); print $2}'); [[ "$ran" == *" $rid "* ]] || echo "$row"; done)
    body=$( (printf '%s\n' "${rows[@]}"; [ -n "$kept" ] && echo "$kept") | sort -t'|' -k2.3n)
    table=$(echo "$table" | grep -vE '^\| M[0-9]+ \|'; echo "$body")
    TABLE="$table" perl -0pi -e 's/(<!-- mutation-table -->\n).*?(<!-- \/mutation-table -->)/$1$ENV{TABLE}\n$2/s' "$doc"
    echo "table written to $doc"
  else
    echo "no <!-- mutation-table --> marker in $doc: table not written"
  fi
fi
[ "$ncaught" -eq "$ntotal" ]
