/* Table functions ({"type": "table", "t": [...], "values": [...]}: piecewise linear, held outside; the
 * recorded torque of python/examples/door_pid.py replayed by `cofem run`) and the FE bodies'
 * "von_mises_max" channel:
 *  1. cf_mbs_func_eval against the hand-computed interpolation, slope and integral (rate form);
 *  2. a torque on a free box scaled by a table through (0, 0) and (10, 10) moves the box as the same
 *     torque scaled by the polynomial t (another function, the same values), to round-off;
 *  3. the model owns a copy of the points: the scene's overwritten and freed before the run, the
 *     motion is the same;
 *  4. bad tables, a table at an FE body's node set and "von_mises_max" on a rigid body are refused with
 *     messages naming the file and the key;
 *  5. "von_mises_max" of a lumped FE lug pulled at a node set equals the largest element of
 *     cf_mbs_flex_stress (what the .vtu frames carry) and grows with the load. */
#include <string.h>

#include "cf_test.h"
#include "cofem/fem.h"
#include "cofem/mbs.h"
#include "cofem/mbs_fe.h"
#include "mbs/mbs_internal.h"

static const char* kPath = "table.json";

static const char* box_scene(const char* scale, char* buf, size_t n) {
  snprintf(buf, n,
           "{\"bodies\": [{\"name\": \"box\", \"mass\": 2, \"inertia\": [0.1, 0.2, 0.3]}],"
           " \"forces\": [{\"name\": \"motor\", \"type\": \"torque\", \"body\": \"box\", \"torque\": [0, 0, 0.6],"
           " \"scale\": %s}],"
           " \"time\": {\"dt\": 0.001, \"end\": 1}}",
           scale);
  return buf;
}

/* the box's spin after `steps` steps of the scene (NAN on an error); overwrite: the scene's table
 * points are overwritten and the scene freed between the model's creation and the run */
static double spin_after(const char* json, int steps, int overwrite) {
  cfMbsScene s;
  if (cf_mbs_scene_parse(json, kPath, &s) < 0) {
    fprintf(stderr, "%s\n", cf_last_error());
    return NAN;
  }
  cfMbsModel* m = NULL;
  cfMbsData* d = NULL;
  double w[3] = {NAN, NAN, NAN};
  int st = cf_mbs_model_create(&s.def, &m);
  if (st >= 0) st = cf_mbs_data_create(m, &d);
  if (overwrite) {
    for (int i = 0; i < s.ntabs; i++) s.tabs[i][1] = s.tabs[i][3] = 1e6;
    cf_mbs_scene_free(&s);
  }
  for (int k = 0; st >= 0 && k < steps; k++) st = cf_mbs_step(m, d);
  if (st >= 0) cf_mbs_omega(m, d, 0, w);
  else fprintf(stderr, "%s\n", cf_last_error());
  cf_mbs_data_free(d);
  cf_mbs_model_free(m);
  if (!overwrite) cf_mbs_scene_free(&s);
  return w[2];
}

/* the scene's load error message (or "" when it loads) */
static const char* refusal(const char* json) {
  static char msg[1024];
  cfMbsScene s;
  int st = cf_mbs_scene_parse(json, kPath, &s);
  msg[0] = 0;
  if (st < 0) snprintf(msg, sizeof msg, "%s", cf_last_error());
  else cf_mbs_scene_free(&s);
  return msg;
}

int main(void) {
  /* 1. the function: points (0, 1), (1, 3), (3, -1) */
  {
    const double pts[6] = {0, 1, 1, 3, 3, -1};
    cfMbsFunc f;
    memset(&f, 0, sizeof f);
    f.type = CF_MBS_FUNC_TABLE, f.n = 3, f.tab = pts;
    const double t[] = {-1, 0, 0.5, 1, 2, 3, 5};
    const double g[] = {1, 1, 2, 3, 1, -1, -1};   /* held before and after */
    const double g1[] = {0, 2, 2, -2, -2, 0, 0};  /* the slope on the segment holding t (t_i <= t) */
    for (int i = 0; i < 7; i++) {
      double y[3];
      cf_mbs_func_eval(&f, t[i], y);
      CHECK_CLOSE(y[0], g[i], 1e-15, 0);
      CHECK_CLOSE(y[1], g1[i], 1e-15, 0);
      CHECK(y[2] == 0);
    }
    /* rate form: the integral from 0 by trapezoids, 2 + 2 over [0, 2], then -2 over [3, 5] */
    f.rate = 1;
    const double G[] = {-1, 0, 0.75, 2, 4, 4, 2};
    for (int i = 0; i < 7; i++) {
      double y[3];
      cf_mbs_func_eval(&f, t[i], y);
      CHECK_CLOSE(y[0], G[i], 1e-15, 0);
      CHECK_CLOSE(y[1], g[i], 1e-15, 0);
    }
    CHECK_OK(cf_mbs__check_func(&f, "f"));
    const double back[4] = {0, 1, 0, 2};
    f.tab = back, f.n = 2;
    CHECK(cf_mbs__check_func(&f, "f") == CF_ERR_SCENE && strstr(cf_last_error(), "times must increase"));
  }

  /* 2, 3. a torque scaled by a table and by a polynomial with the same values */
  {
    char a[1024], b[1024];
    box_scene("{\"type\": \"table\", \"t\": [0, 10], \"values\": [0, 10]}", a, sizeof a);
    box_scene("{\"type\": \"poly\", \"coeffs\": [0, 1]}", b, sizeof b);
    double wa = spin_after(a, 500, 0), wb = spin_after(b, 500, 0), wc = spin_after(a, 500, 1);
    /* w = int T t / I dt = 0.6 / 0.3 t^2 / 2 = 0.25 at t = 0.5 (the trapezoidal rule is exact on it
     * but for the start's half step) */
    CHECK_CLOSE(wa, 0.25, 0, 1e-2);
    CHECK_CLOSE(wa, wb, 0, 1e-12); /* measured: 0 */
    CHECK(wc == wa);               /* the model's own copy of the points */
  }

  /* 4. refusals */
  {
    char a[1024];
    const char* m;
    m = refusal(box_scene("{\"type\": \"table\", \"t\": [0, 1, 1], \"values\": [0, 1, 2]}", a, sizeof a));
    CHECK(strstr(m, "table.json") && strstr(m, "\"forces\"[0]") && strstr(m, "\"t\" must increase: \"t\"[2] = 1"));
    m = refusal(box_scene("{\"type\": \"table\", \"t\": [0, 1], \"values\": [0]}", a, sizeof a));
    CHECK(strstr(m, "\"t\" has 2 times and \"values\" 1 values"));
    m = refusal(box_scene("{\"type\": \"table\", \"t\": [0, 1]}", a, sizeof a));
    CHECK(strstr(m, "missing \"values\""));
    m = refusal(box_scene("{\"type\": \"table\", \"t\": [0, \"x\"], \"values\": [0, 1]}", a, sizeof a));
    CHECK(strstr(m, "\"t\"[1] must be a finite number"));
    m = refusal(box_scene("{\"type\": \"table\", \"t\": [], \"values\": []}", a, sizeof a));
    CHECK(strstr(m, "at least one number"));
    m = refusal(box_scene("{\"type\": \"table\", \"t\": [0], \"values\": [1], \"kind\": \"spline\"}", a, sizeof a));
    CHECK(strstr(m, "kind"));
    if (!*m || !strstr(m, "kind")) fprintf(stderr, "message: %s\n", m);
  }

  /* 5. an FE body: the peak-stress channel, and a table at its node set refused */
  {
    char json[2048];
    const char* fmt =
        "{\"bodies\": [{\"name\": \"lug\", \"flexible\": {\"scene\": \"%s/scenes/lug_pull.json\", \"formulation\": "
        "\"lumped\"}}],"
        " \"joints\": [{\"name\": \"base\", \"type\": \"fixed\", \"body1\": \"ground\", \"body2\": \"lug\", \"node2\": "
        "\"support\"}],"
        " \"forces\": [{\"name\": \"pull\", \"type\": \"force\", \"body\": \"lug\", \"node\": \"load\", \"force\": [2e5, 0, "
        "0], \"scale\": %s}],"
        " \"time\": {\"dt\": 0.001, \"end\": 1},"
        " \"output\": {\"channels\": [{%s, \"what\": \"von_mises_max\"}]}}";
    snprintf(json, sizeof json, fmt, COFEM_SOURCE_DIR, "{\"type\": \"table\", \"t\": [0, 1], \"values\": [0, 1]}", "\"body\": \"lug\"");
    const char* m = refusal(json);
    CHECK(strstr(m, "table.json") && strstr(m, "table function") && strstr(m, "'lug'"));
    snprintf(json, sizeof json, fmt, COFEM_SOURCE_DIR, "1", "\"joint\": \"base\"");
    m = refusal(json);
    CHECK(strstr(m, "\"output.channels\"[0]") && strstr(m, "\"von_mises_max\" applies to FE bodies") && strstr(m, "joint 'base'"));
    snprintf(json, sizeof json, fmt, COFEM_SOURCE_DIR, "{\"type\": \"poly\", \"coeffs\": [0, 100]}", "\"body\": \"lug\"");
    cfMbsScene s;
    CHECK_OK(cf_mbs_scene_parse(json, kPath, &s));
    cfMbsModel* mo = NULL;
    cfMbsData* d = NULL;
    if (cf_mbs_model_create(&s.def, &mo) >= 0 && cf_mbs_data_create(mo, &d) >= 0) {
      double vm0, vm1, vm2;
      cf_mbs_channel_eval(mo, d, &s.channel[0], &vm0);
      CHECK(s.nchannel == 1 && cf_mbs_channel_size(&s.channel[0]) == 1 && !strcmp(s.channel[0].label, "lug_von_mises_max"));
      for (int k = 0; k < 5; k++) CHECK_OK(cf_mbs_step(mo, d));
      cf_mbs_channel_eval(mo, d, &s.channel[0], &vm1);
      for (int k = 0; k < 5; k++) CHECK_OK(cf_mbs_step(mo, d));
      cf_mbs_channel_eval(mo, d, &s.channel[0], &vm2);
      cfStressField f;
      CHECK_OK(cf_stress_field_init(&f, cf_mbs_fe_model(mo, 0)));
      CHECK_OK(cf_mbs_flex_stress(mo, d, 0, NULL, &f));
      double ref = 0;
      for (int e = 0; e < f.ntet; e++) ref = fmax(ref, f.von_mises[e]);
      cf_stress_field_free(&f);
      printf("lug von Mises max: %g at rest, %g Pa after 5 steps, %g after 10\n", vm0, vm1, vm2);
      CHECK(vm0 == 0);
      CHECK(vm2 > vm1 && vm1 > 0);
      CHECK(vm2 == ref);
    } else {
      CHECK_OK(-1);
    }
    cf_mbs_data_free(d);
    cf_mbs_model_free(mo);
    cf_mbs_scene_free(&s);
  }
  TEST_END();
}
