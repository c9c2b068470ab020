/* Craig-Bampton reduction against CalculiX *FREQUENCY (issue 9): the lug and the hinge
 * (scenes/lug_pull.json, hinge_pull.json: mesh, material, the "support" set clamped), reduced with
 * interface "probe" (one node) and "load" (a surface) and 6 .. 48 fixed-interface normal modes;
 * the first six reduced frequencies against those of ccx *FREQUENCY on the same mesh (C3D4, same
 * E, nu, rho, same clamping), deck written and ccx run by this test. Skipped (77) without ccx.
 *
 * The mass matrix decides what can be compared. CalculiX integrates the C3D4 mass with one point
 * (rho V / 16 for every node pair of an element; docs/accuracy.md), cofem's model has the lumped
 * or the consistent mass, and the reduction projects the model's own mass blocks (cfModel.Mblk)
 * unless its options name the one-point rule. So three reductions of each part:
 *  1. one-point mass: cfModalOptions.mass = CF_MODAL_MASS_ONE_POINT (in cfReduceOptions.modal
 *     for cf_reduce), i.e. CalculiX's discrete model. Checked: the full FE modes (cf_modal_solve)
 *     equal ccx's to 1e-5; the reduced frequencies are at or above ccx's (Rayleigh-Ritz) and,
 *     with 24 and 48 normal modes, within 0.25% of them (issue 9 asked 0.5%; 0.085% measured);
 *  2. consistent mass (cfModelDef.consistent_mass): converges from above to the consistent-mass
 *     full FE frequencies, which lie below ccx's (M_consistent - M_one-point is positive
 *     semi-definite per element): the gap to ccx is printed, and checked to be the full-FE one
 *     (the mass difference) plus the reduction's own error, not asserted against 0.5%;
 *  3. lumped mass (the default model, what the multibody benchmark uses): the reduction against
 *     the lumped full FE model (from above, within REDUCED_BOUND with 24 and 48 modes, as every rule). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cf_test.h"
#include "cofem/ccx.h"
#include "cofem/fem.h"
#include "cofem/modal.h"
#include "cofem/reduce.h"
#include "cofem/scene.h"

#ifndef COFEM_SOURCE_DIR
#define COFEM_SOURCE_DIR "."
#endif

enum { NF = 6, NCCX = 10 };
static const double BOUND = 0.0025; /* issue 9 asked 0.5%; 0.085% measured (lug, load, 24 modes) */
/* reduced (24, 48 normal modes) against the full FE model of the same mass: 0.106% measured at
 * most (lumped lug, load interface, 24 modes) */
static const double REDUCED_BOUND = 0.003;
static double g_worst_lumped = 0;

/* the CalculiX deck: nodes numbered 1..nnode in mesh order (CalculiX reads at most 20
 * characters per field: %.12e, not cf_mesh_write_inp's %.17g), C3D4 elements as cofem's tets,
 * the scene's fixed sets clamped in their directions, *FREQUENCY with NCCX modes */
static int write_deck(const cfScene* s, const char* path) {
  FILE* f = fopen(path, "w");
  if (!f) return -1;
  const cfMesh* mesh = &s->mesh;
  fprintf(f, "** test_cb_ccx: %s\n*NODE\n", s->path);
  for (int i = 0; i < mesh->nnode; i++)
    fprintf(f, "%d, %.12e, %.12e, %.12e\n", i + 1, mesh->X[3 * i], mesh->X[3 * i + 1], mesh->X[3 * i + 2]);
  fprintf(f, "*ELEMENT, TYPE=C3D4, ELSET=EALL\n");
  for (int e = 0; e < mesh->ntet; e++) {
    const int* t = mesh->tet + 4 * e;
    fprintf(f, "%d, %d, %d, %d, %d\n", e + 1, t[0] + 1, t[1] + 1, t[2] + 1, t[3] + 1);
  }
  for (int i = 0; i < s->nfix; i++) {
    const cfNodeSet* set = cf_mesh_find_nset(mesh, s->fix[i].set);
    if (!set) { fclose(f); return -1; }
    fprintf(f, "*NSET, NSET=FIX%d\n", i + 1);
    for (int j = 0; j < set->count; j++)
      fprintf(f, "%d%s", set->nodes[j] + 1, (j % 16 == 15 || j == set->count - 1) ? "\n" : ", ");
  }
  fprintf(f, "*MATERIAL, NAME=MAT\n*ELASTIC\n%.12e, %.12e\n*DENSITY\n%.12e\n", s->def.E, s->def.nu, s->def.rho);
  fprintf(f, "*SOLID SECTION, ELSET=EALL, MATERIAL=MAT\n*BOUNDARY\n");
  for (int i = 0; i < s->nfix; i++)
    for (int k = 0; k < 3; k++)
      if (s->fix[i].dir_mask & (1 << k)) fprintf(f, "FIX%d, %d, %d, 0.\n", i + 1, k + 1, k + 1);
  fprintf(f, "*STEP\n*FREQUENCY\n%d\n*END STEP\n", NCCX);
  int bad = ferror(f);
  return (fclose(f) != 0 || bad) ? -1 : 0;
}

static double hz_of(double w2) { return sqrt(fmax(w2, 0)) / (2 * M_PI); }

/* the model of scene s with mass variant v (1 consistent, 2 lumped; 0 one-point: see MASS_RULE), clamped */
static int make_model(const cfScene* s, int v, cfModel** out) {
  cfModelDef def = s->def;
  def.consistent_mass = v < 2;
  cfModel* m;
  int st = cf_model_create(&s->mesh, &def, &m);
  if (st < 0) return st;
  for (int i = 0; i < s->nfix && st >= 0; i++) {
    const cfNodeSet* set = cf_mesh_find_nset(&s->mesh, s->fix[i].set);
    st = set ? cf_model_fix_nodes(m, set->nodes, set->count, s->fix[i].dir_mask) : -1;
  }
  if (st < 0) { cf_model_free(m); return st; }
  *out = m;
  return 0;
}

/* CalculiX's C3D4 mass (variant 0) by the options: cf_modal_solve and cf_reduce (its normal
 * modes, projection and invariants alike) use the one-point rule in place of the model's blocks */
static const int MASS_RULE[3] = {CF_MODAL_MASS_ONE_POINT, CF_MODAL_MASS_MODEL, CF_MODAL_MASS_MODEL};
static const char* MASS_NAME[3] = {"one-point (CalculiX C3D4)", "consistent", "lumped"};

static void part(const char* name, const char* scene, double* worst_out) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", COFEM_SOURCE_DIR, scene);
  cfScene s;
  int st = cf_scene_load(path, &s);
  CHECK_OK(st);
  if (st < 0) return;
  const cfNodeSet* probe = cf_mesh_find_nset(&s.mesh, "probe");
  const cfNodeSet* load = cf_mesh_find_nset(&s.mesh, "load");
  CHECK(probe && load && s.nfix == 1 && !strcmp(s.fix[0].set, "support"));
  if (!probe || !load) { cf_scene_free(&s); return; }

  /* CalculiX */
  char dir[] = "/tmp/cofem_cb_ccx_XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  char deck[256], dat[256], cmd[700];
  snprintf(deck, sizeof deck, "%s/freq.inp", dir);
  snprintf(dat, sizeof dat, "%s/freq.dat", dir);
  CHECK(write_deck(&s, deck) == 0);
  snprintf(cmd, sizeof cmd, "cd %s && OMP_NUM_THREADS=2 ccx -i freq > freq.log 2>&1", dir);
  double t0 = cf_wall_time();
  int rc = system(cmd);
  double t_ccx = cf_wall_time() - t0;
  CHECK(rc == 0);
  double ccx[NCCX];
  int nccx = cf_ccx_read_frequencies(dat, ccx, NCCX);
  CHECK(nccx == NCCX);
  if (nccx < NF) {
    fprintf(stderr, "%s: no eigenfrequencies in %s (see %s/freq.log)\n", name, dat, dir);
    cf_scene_free(&s);
    return;
  }
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
  printf("\n%s: %d nodes, %d elements; CalculiX *FREQUENCY (%.1f s):", name, s.mesh.nnode, s.mesh.ntet, t_ccx);
  for (int i = 0; i < NF; i++) printf(" %.3f", ccx[i]);
  printf(" Hz\n");

  for (int v = 0; v < 3; v++) {
    cfModel* m = NULL;
    CHECK_OK(make_model(&s, v, &m));
    if (!m) continue;
    double wf[NF];
    cfModalInfo mi;
    cfModalOptions mo = cf_default_modal_options();
    mo.mass = MASS_RULE[v];
    CHECK_OK(cf_modal_solve(m, NF, &mo, wf, NULL, &mi));
    printf(" %s mass, %d free DOFs: full FE (cf_modal_solve %.2f s), f / f_ccx - 1:", MASS_NAME[v], mi.nfree, mi.seconds);
    double full_gap = 0; /* largest |f_full / f_ccx - 1| */
    for (int i = 0; i < NF; i++) {
      double e = hz_of(wf[i]) / ccx[i] - 1;
      printf(" %+.2e", e);
      full_gap = fmax(full_gap, fabs(e));
      if (v == 0) CHECK(fabs(e) < 1.5e-6); /* the same discrete model (3.5e-7 measured; ccx prints 7 digits) */
      if (v == 1) CHECK(e < 1e-5);        /* consistent below one-point */
    }
    printf("\n");
    printf("  | interface | normal modes | basis | reduce [s] | f1 .. f6 [Hz] | error vs ccx, modes 1-6 | worst |\n");
    const cfNodeSet* ifs[2] = {probe, load};
    for (int it = 0; it < 2; it++) {
      const int all[4] = {6, 12, 24, 48}, big[2] = {24, 48};
      /* the one-point mass with the probe interface: the whole convergence; otherwise 24 and 48 */
      const int* nm = (v == 0 && it == 0) ? all : big;
      int nn = (v == 0 && it == 0) ? 4 : 2;
      for (int c = 0; c < nn; c++) {
        cfReduceOptions ro = cf_default_reduce_options();
        ro.nmodes = nm[c];
        ro.modal.mass = MASS_RULE[v];
        cfReduction r;
        memset(&r, 0, sizeof r);
        CHECK_OK(cf_reduce(m, ifs[it]->nodes, ifs[it]->count, &ro, &r));
        if (!r.basis) continue;
        CHECK(r.nrigid == 0);
        printf("  | %s | %d | %d + %d | %.2f |", ifs[it]->name, r.nk, r.nb, r.nk, r.t_total);
        for (int i = 0; i < NF; i++) printf(" %.2f", cf_reduction_freq_hz(&r, i));
        printf(" |");
        double worst = 0, worst_full = 0;
        for (int i = 0; i < NF; i++) {
          double fr = cf_reduction_freq_hz(&r, i);
          double e = fr / ccx[i] - 1, ef = fr / hz_of(wf[i]) - 1;
          printf(" %+.3f%%", 100 * e);
          worst = fmax(worst, fabs(e));
          worst_full = fmax(worst_full, ef);
          CHECK(ef > -1e-9); /* from above, against the full FE model of the same mass */
          if (v == 0) CHECK(e > -1e-5); /* ... which is ccx's */
        }
        printf(" | %.3f%% | vs full FE of this mass %.4f%%\n", 100 * worst, 100 * worst_full);
        /* every mass rule: with 24 and 48 normal modes the reduction is within REDUCED_BOUND of the
         * full FE model of the same mass (the lumped results were printed only) */
        if (nm[c] >= 24) {
          CHECK(worst_full < REDUCED_BOUND);
          if (v == 2) g_worst_lumped = fmax(g_worst_lumped, worst_full);
        }
        if (v == 0 && nm[c] >= 24) {
          CHECK(worst < BOUND); /* the bound */
          if (worst_out) *worst_out = fmax(*worst_out, worst);
        }
        /* consistent mass: the gap to ccx is the mass difference (full FE) plus the reduction's
         * own (positive) error, nothing else */
        if (v == 1) CHECK(worst <= full_gap + worst_full + 1e-6);
        cf_reduction_free(&r);
      }
    }
    cf_model_free(m);
  }
  cf_scene_free(&s);
}

int main(void) {
  if (system("command -v ccx >/dev/null 2>&1") != 0) TEST_SKIP("ccx (Debian calculix-ccx) is not on PATH");
  double t0 = cf_wall_time(), worst = 0;
  part("lug", "scenes/lug_pull.json", &worst);
  part("hinge", "scenes/hinge_pull.json", &worst);
  printf("\none-point mass, 24 and 48 normal modes: worst frequency error against ccx %.3f%% (bound %.1f%%); lumped mass: "
         "worst against its full FE %.4f%%; %.1f s\n", 100 * worst, 100 * BOUND, 100 * g_worst_lumped, cf_wall_time() - t0);
  TEST_END();
}
