/* Mechanism scenes (every scenes/mbs/ JSON file) end to end:
 *  - every scene runs (dynamic or kinematic, as it says) with the constraint violation below 1e-8
 *    after every step;
 *  - the double four-bar of paper 000 (section 4.1) makes about 2.7 revolutions in 5 s, as the paper
 *    reports, and agrees with an independent solution of its one-degree-of-freedom equation;
 *  - every malformed scene in tests/data/mbs gives an error naming the culprit (never a crash, never
 *    a run);
 *  - `cofem run` on a mechanism (cf_cmd_run_mbs): exit status, summary, CSV rows; exit 1 and no CSV
 *    on a bad scene. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cf_test.h"
#include "cofem/cuda.h"
#include "cli/commands.h"
#include "cofem/mbs.h"
#include "cofem/mbs_fe.h"

#define SRC COFEM_SOURCE_DIR

static int cmp_str(const void* a, const void* b) { return strcmp(*(char* const*)a, *(char* const*)b); }

static int list_json(const char* dir, char names[][256], int cap) {
  DIR* d = opendir(dir);
  if (!d) return 0;
  int n = 0;
  struct dirent* e;
  while ((e = readdir(d)) && n < cap) {
    size_t l = strlen(e->d_name);
    if (l > 5 && !strcmp(e->d_name + l - 5, ".json")) snprintf(names[n++], 256, "%s", e->d_name);
  }
  closedir(d);
  char* ptr[64];
  for (int i = 0; i < n; i++) ptr[i] = names[i];
  qsort(ptr, (size_t)n, sizeof(char*), cmp_str);
  char tmp[64][256];
  for (int i = 0; i < n; i++) snprintf(tmp[i], 256, "%s", ptr[i]);
  for (int i = 0; i < n; i++) snprintf(names[i], 256, "%s", tmp[i]);
  return n;
}

/* the residuals after a step at the position, velocity and acceleration levels, worst over the
 * committed scenes (measured 3.2e-10 double_fourbar, 2.5e-9 slider_crank, 3.6e-7 flexible_lug) */
static const double POS_BOUND = 1.5e-9, VEL_BOUND = 1e-8, ACC_BOUND = 1.5e-6;

static void test_all_scenes(void) {
  char names[64][256];
  int n = list_json(SRC "/scenes/mbs", names, 64);
  CHECK(n >= 8);
  for (int i = 0; i < n; i++) {
    char path[512];
    snprintf(path, sizeof path, SRC "/scenes/mbs/%s", names[i]);
    cfMbsScene s;
    int st = cf_mbs_scene_load(path, &s);
    CHECK_OK(st);
    if (st < 0) continue;
    CHECK(cf_mbs_scene_is_mechanism(path) == 1);
    /* a scene whose FE body runs on the GPU ("backend": "cuda") runs the same path on the CPU when
     * there is no device (test_cuda_mbs_fe compares the two where there is one) */
    char why[256];
    for (int k = 0; k < s.def.nfe; k++)
      if (s.def.fe[k].cuda && !cf_cuda_available(why, sizeof why)) {
        printf("%s: FE body %d on the CPU (no CUDA device: %s)\n", names[i], k, why);
        s.def.fe[k].cuda = 0;
      }
    cfMbsModel* m = NULL;
    cfMbsData* d = NULL;
    CHECK_OK(cf_mbs_model_create(&s.def, &m));
    if (m) CHECK_OK(cf_mbs_data_create(m, &d));
    if (d) {
      long steps = lround(s.t_end / m->opt.dt);
      if (steps > 3000) steps = 3000;
      /* FE bodies cost 10-80 ms a step here; their physics is tested in test_mbs_fe_bodies */
      if (s.def.nfe > 0 && steps > 40) steps = 40;
      double worst = d->phi_max, viol[3], wv = 0, wa = 0;
      for (long k = 1; k <= steps; k++) {
        st = s.kinematic ? cf_mbs_kinematic_step(m, d) : cf_mbs_step(m, d);
        if (st < 0) {
          CHECK_OK(st);
          break;
        }
        worst = fmax(worst, d->phi_max);
        /* the velocity and acceleration levels too: |Phi_q qd + Phi_t|, |Phi_q qdd + bias| */
        cf_mbs_violation(m, d, viol);
        wv = fmax(wv, viol[1]), wa = fmax(wa, viol[2]);
      }
      printf("%-26s %s, %ld steps of %g s: max |Phi| after a step %.2e, |Phi_dot| %.2e, |Phi_ddot| %.2e, mean Newton "
             "iterations %.2f\n", names[i], s.kinematic ? "kinematic" : "dynamic  ", steps, m->opt.dt, worst, wv, wa,
             (double)d->iters_total / (double)(d->steps ? d->steps : 1));
      CHECK(worst < POS_BOUND);
      CHECK(wv < VEL_BOUND);
      CHECK(wa < ACC_BOUND);
      CHECK(d->steps == steps);
    }
    cf_mbs_data_free(d);
    cf_mbs_model_free(m);
    cf_mbs_scene_free(&s);
  }
}

/* 3 theta'' = -3.5 g cos(theta): three cranks (I about the pivot 1/3 each) and two couplers that
 * translate (mass 1 at speed |theta'|), potential g (3 * 1/2 + 2 * 1) sin(theta) */
static double fourbar_revolutions_ode(double t_end) {
  double th = M_PI / 2, w = -1, h = 1e-5, g = 9.81;
  long n = lround(t_end / h);
  for (long s = 0; s < n; s++) {
    double k1 = w, l1 = -3.5 * g * cos(th) / 3;
    double k2 = w + h / 2 * l1, l2 = -3.5 * g * cos(th + h / 2 * k1) / 3;
    double k3 = w + h / 2 * l2, l3 = -3.5 * g * cos(th + h / 2 * k2) / 3;
    double k4 = w + h * l3, l4 = -3.5 * g * cos(th + h * k3) / 3;
    th += h / 6 * (k1 + 2 * k2 + 2 * k3 + k4);
    w += h / 6 * (l1 + 2 * l2 + 2 * l3 + l4);
  }
  return (M_PI / 2 - th) / (2 * M_PI);
}

static void test_double_fourbar(void) {
  cfMbsScene s;
  int st = cf_mbs_scene_load(SRC "/scenes/mbs/double_fourbar.json", &s);
  CHECK_OK(st);
  if (st < 0) return;
  cfMbsModel* m = NULL;
  cfMbsData* d = NULL;
  CHECK_OK(cf_mbs_model_create(&s.def, &m));
  if (m) CHECK_OK(cf_mbs_data_create(m, &d));
  if (d) {
    CHECK(m->ndof == 1 && m->nredundant == 6);
    int j = cf_mbs_find_joint(m, "A0");
    /* the scene's one marker, on the body the scene names; an unknown name is CF_MBS_NONE */
    int mk = cf_mbs_find_marker(m, "coupler1_mid");
    CHECK(mk >= 0 && mk < m->nmarker && m->marker_body[mk] == cf_mbs_find_body(m, "coupler1"));
    CHECK(cf_mbs_find_marker(m, "coupler1") == CF_MBS_NONE);
    double worst = 0;
    for (int k = 0; k < 500; k++) {
      if ((st = cf_mbs_step(m, d)) < 0) {
        CHECK_OK(st);
        break;
      }
      worst = fmax(worst, d->phi_max);
    }
    double rev = -cf_mbs_joint_angle(m, d, j) / (2 * M_PI), ref = fourbar_revolutions_ode(5.0);
    printf("double four-bar (paper 000, 4.1): %.4f revolutions in %.2f s (paper: about 2.7; 1-DOF ODE %.4f); mean Newton "
           "iterations %.2f, max %d; max |Phi| %.2e\n", rev, d->t, ref, (double)d->iters_total / (double)d->steps,
           d->iters_max, worst);
    CHECK(rev > 2.6 && rev < 2.8);
    CHECK_CLOSE(rev, ref, 0, 5e-3);
    CHECK(worst < 1e-8);
  }
  cf_mbs_data_free(d);
  cf_mbs_model_free(m);
  cf_mbs_scene_free(&s);
}

/* ---- malformed scenes ------------------------------------------------------------------------- */
typedef struct Bad {
  const char* file;
  const char* expect;
} Bad;

static const Bad kBad[] = {
    {"bad_channel.json", "does not apply to joint 'hinge'"},
    {"bad_inertia.json", "body 'crank': inertia with principal moments 1, 1, 3 is not physical"},
    {"bad_json.json", "bad_json.json:1: invalid JSON"},
    {"bad_step_function.json", "a step needs t1 > t0"},
    {"body_named_ground.json", "\"ground\" is the fixed frame"},
    {"driver_on_spherical.json", "an angle driver needs a revolute or cylindrical joint; 'hinge' is not one"},
    {"duplicate_body.json", "body 'crank' is defined twice"},
    {"inconsistent.json", "joint 'tether': body2 'crank' is 1 m off the joint's distance, 1 m, at t = 0"}, /* before the assembly */
    {"inconsistent_axes.json", "4 redundant constraint equations (declared: 0): joint 'hinge_x'"},
    {"inconsistent_driver.json", "in driver 'spin'"},
    {"infinite_mass.json", "\"mass\" must be a finite number"},
    {"joint_same_body.json", "('elbow'): body1 and body2 are the same body"},
    {"kinematic_underdriven.json", NULL}, /* CLI: checked below */
    {"missing_inertia.json", "('crank'): missing \"inertia\""},
    {"negative_mass.json", "body 'crank': mass -1 must be positive"},
    {"negative_stiffness.json", "('coil'): stiffness k = -100"},
    {"no_bodies.json", "\"bodies\" is empty"},
    {"quaternion_not_unit.json", "must have unit length"},
    {"redundant.json", "5 redundant constraint equations (declared: 0): joint 'hinge2' (revolute) equation 1 of 5"},
    {"redundant_declared_none.json", "declares 3 redundant constraint equations but has none"},
    {"redundant_miscounted.json", "5 redundant constraint equations (declared: 2)"},
    {"shape_negative_box.json", "\"shape\": \"box\" edge 2 is -0.04 m: the edges must be in (0, 1e6) m"},
    {"spring_zero_length.json", "force 'coil': its two ends coincide"},
    {"trailing_text.json", "trailing_text.json:4: invalid JSON"}, /* text after the scene's object */
    {"universal_not_perpendicular.json", "joint 'elbow': axis and axis2 must be perpendicular"},
    {"unknown_body.json", "names body 'armm', which the mechanism does not define (bodies: ground, crank, arm)"},
    {"unknown_joint_type.json", "\"type\" = \"hinge\""},
    {"unknown_key.json", "unknown key \"massa\" in \"bodies\"[0]"},
    {"unknown_marker.json", "names marker 'nowhere'"},
    {"virtual_unconstrained.json", "body 'ghost': a motion of it has neither mass nor a constraint"},
    {"virtual_with_mass.json", "body 'ghost' is virtual (massless): it cannot have mass"},
    {"zero_axis.json", "('hinge'): \"axis\" has zero length"},
    {"zero_dt.json", "\"time.dt\" must be positive"},
};

static void test_malformed(void) {
  char names[64][256];
  int n = list_json(SRC "/tests/data/mbs", names, 64), nb = (int)(sizeof kBad / sizeof kBad[0]);
  CHECK(n == nb); /* every file has its expected message */
  int tried = 0, rejected = 0;
  for (int i = 0; i < nb; i++) {
    if (!kBad[i].expect) continue;
    tried++;
    char path[512];
    snprintf(path, sizeof path, SRC "/tests/data/mbs/%s", kBad[i].file);
    cfMbsScene s;
    cfMbsModel* m = NULL;
    cfMbsData* d = NULL;
    int st = cf_mbs_scene_load(path, &s);
    if (st >= 0) {
      st = cf_mbs_model_create(&s.def, &m);
      if (st >= 0) st = cf_mbs_data_create(m, &d);
      cf_mbs_scene_free(&s);
    }
    int found = st < 0 && strstr(cf_last_error(), kBad[i].expect) != NULL;
    if (!found) printf("  %s: status %d, message: %s\n", kBad[i].file, st, cf_last_error());
    CHECK(st < 0);
    CHECK(found);
    CHECK(st != CF_ERR_NOMEM);
    rejected += found && st != CF_ERR_NOMEM;
    cf_mbs_data_free(d);
    cf_mbs_model_free(m);
  }
  printf("%d of %d malformed mechanism scenes rejected with their message (%d more checked through the CLI)\n",
         rejected, tried, nb - tried);
}

/* ---- CLI -------------------------------------------------------------------------------------- */
static int run_cli_backend(const char* scene, const char* out, const char* steps, const char* backend) {
  char* argv[10];
  int argc = 0;
  argv[argc++] = "cofem";
  argv[argc++] = "run";
  argv[argc++] = (char*)scene;
  argv[argc++] = "--out";
  argv[argc++] = (char*)out;
  argv[argc++] = "--quiet";
  if (steps) argv[argc++] = "--steps", argv[argc++] = (char*)steps;
  if (backend) argv[argc++] = "--backend", argv[argc++] = (char*)backend;
  fflush(stdout);
  return cf_cmd_run_mbs(argc, argv);
}

static int run_cli(const char* scene, const char* out, const char* steps) { return run_cli_backend(scene, out, steps, NULL); }

static int count_lines(const char* path) {
  FILE* f = fopen(path, "r");
  if (!f) return -1;
  int n = 0, c;
  while ((c = fgetc(f)) != EOF) n += c == '\n';
  fclose(f);
  return n;
}

static void test_cli(void) {
  char dir[] = "/tmp/cofem_mbs_cli_XXXXXX";
  if (!mkdtemp(dir)) {
    CHECK(0);
    return;
  }
  char out[256], csv[300];
  snprintf(out, sizeof out, "%s/pend", dir);
  snprintf(csv, sizeof csv, "%s/mbs.csv", out);
  int rc = run_cli(SRC "/scenes/mbs/pendulum.json", out, "100");
  CHECK(rc == 0);
  CHECK(count_lines(csv) == 102); /* header, t = 0, 100 steps */
  /* the header names the channels */
  FILE* f = fopen(csv, "r");
  char head[512] = "";
  if (f) {
    if (!fgets(head, sizeof head, f)) head[0] = '\0';
    fclose(f);
  }
  CHECK(strstr(head, "step,t,newton_iters,phi_max") == head);
  CHECK(strstr(head, "hinge_angle,tip_position_x") != NULL);
  remove(csv);
  rmdir(out);

  snprintf(out, sizeof out, "%s/kin", dir);
  snprintf(csv, sizeof csv, "%s/mbs.csv", out);
  rc = run_cli(SRC "/scenes/mbs/fourbar_kinematic.json", out, NULL);
  CHECK(rc == 0);
  CHECK(count_lines(csv) == 202);
  remove(csv);
  rmdir(out);

  /* errors: exit 1, no CSV left behind */
  snprintf(out, sizeof out, "%s/bad", dir);
  snprintf(csv, sizeof csv, "%s/mbs.csv", out);
  rc = run_cli(SRC "/tests/data/mbs/kinematic_underdriven.json", out, NULL);
  CHECK(rc == 1);
  CHECK(strstr(cf_last_error(), "2 degrees of freedom left") != NULL);
  CHECK(access(csv, F_OK) != 0);
  rc = run_cli(SRC "/tests/data/mbs/redundant.json", out, NULL);
  CHECK(rc == 1);
  CHECK(access(csv, F_OK) != 0);
  rc = run_cli(SRC "/tests/data/mbs/no_such_file.json", out, NULL);
  CHECK(rc == 1);
  /* --backend cuda without a corotational FE body: nothing to put on the GPU */
  rc = run_cli_backend(SRC "/scenes/mbs/pendulum.json", out, "3", "cuda");
  CHECK(rc == 1);
  CHECK(strstr(cf_last_error(), "--backend cuda: the mechanism has no corotational FE body") != NULL);
  CHECK(access(csv, F_OK) != 0);
  /* --backend cpu: the scene's GPU body on the CPU (the same path), whatever the machine */
  rc = run_cli_backend(SRC "/scenes/mbs/lug_corotational_cuda.json", out, "3", "cpu");
  CHECK(rc == 0);
  CHECK(count_lines(csv) == 5);
  remove(csv);
  char pvd[320];
  snprintf(pvd, sizeof pvd, "%s/lug.pvd", out);
  remove(pvd);
  for (int k = 0; k <= 3; k++) {
    char vtu[320];
    snprintf(vtu, sizeof vtu, "%s/lug_%04d.vtu", out, k);
    remove(vtu);
  }
  char* bad_argv[] = {"cofem", "run", "--steps"};
  CHECK(cf_cmd_run_mbs(3, bad_argv) == 2);
  rmdir(out);
  rmdir(dir);

  CHECK(cf_mbs_scene_is_mechanism(SRC "/scenes/lug_pull.json") == 0);
  CHECK(cf_mbs_scene_is_mechanism(SRC "/tests/data/mbs/no_such_file.json") == 0);
  CHECK(cf_mbs_scene_is_mechanism(SRC "/tests/data/mbs/unknown_body.json") == 1);
}

int main(void) {
  test_all_scenes();
  test_double_fourbar();
  test_malformed();
  test_cli();
  TEST_END();
}
