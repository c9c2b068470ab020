/* cfMbsSession: a mechanism scene, its model and data behind one handle (cofem/session.h). */
#include <stdlib.h>
#include <string.h>

#include "cofem/fem.h"
#include "cofem/mbs_semirecursive.h"
#include "cofem/mbs_topology.h"
#include "cofem/modal_part.h"
#include "cofem/session.h"

struct cfMbsSession {
  cfMbsScene scene;
  cfMbsModel* m;
  cfMbsData* d;
  cfMbsSr* sr;        /* "solver.formulation": "semi_recursive": the dynamics in relative coordinates (it writes the
                         natural state into d after every step) */
  cfMbsGroupKin* gk;  /* "structural_groups": the kinematic analysis group by group */
};

/* the scene's formulation's solver over the model and data (none for the global one) */
static int make_solver(cfMbsSession* s) {
  int st = CF_OK;
  if (s->scene.formulation == CF_MBS_SEMI_RECURSIVE) st = cf_mbs_sr_create(s->m, s->d, &s->sr);
  else if (s->scene.formulation == CF_MBS_STRUCTURAL_GROUPS) st = cf_mbs_group_kin_create(s->m, &s->gk);
  return st < 0 ? cf_error(st, "%s: %s", s->scene.path, cf_last_error()) : CF_OK;
}

void cf_mbs_session_free(cfMbsSession* s) {
  if (!s) return;
  cf_mbs_sr_free(s->sr);
  cf_mbs_group_kin_free(s->gk);
  cf_mbs_data_free(s->d);
  cf_mbs_model_free(s->m);
  cf_mbs_scene_free(&s->scene);
  free(s);
}

/* the mechanism from its file (json NULL) or from JSON text named scene_path */
static int mbs_session_open(const char* json, const char* scene_path, cfMbsSession** out) {
  *out = NULL;
  if (!scene_path) return cf_error(CF_ERR_ARG, "cf_mbs_session_open: no scene path");
  cfMbsSession* s = calloc(1, sizeof *s);
  if (!s) return cf_error(CF_ERR_NOMEM, "%s: out of memory", scene_path);
  int st = json ? cf_mbs_scene_parse(json, scene_path, &s->scene) : cf_mbs_scene_load(scene_path, &s->scene);
  if (st < 0) {
    free(s); /* the scene frees what it loaded on an error */
    return st;
  }
  st = cf_mbs_model_create(&s->scene.def, &s->m);
  if (st < 0) /* the model's message names the body or joint: add the scene */
    st = cf_error(st, "%s: %s", scene_path, cf_last_error());
  if (st >= 0) st = cf_mbs_data_create(s->m, &s->d);
  if (st >= 0 && s->scene.kinematic && s->m->ndof != 0)
    st = cf_error(CF_ERR_SCENE, "%s: \"solver.analysis\" is kinematic, but the mechanism has %d degree%s of freedom "
                  "left (every motion must be driven)", scene_path, s->m->ndof, s->m->ndof == 1 ? "" : "s");
  if (st >= 0) st = make_solver(s);
  if (st < 0) {
    cf_mbs_session_free(s);
    return st;
  }
  *out = s;
  return CF_OK;
}

int cf_mbs_session_open(const char* scene_path, cfMbsSession** out) { return mbs_session_open(NULL, scene_path, out); }

int cf_mbs_session_open_text(const char* json, const char* scene_path, cfMbsSession** out) {
  if (!json) {
    *out = NULL;
    return cf_error(CF_ERR_ARG, "cf_mbs_session_open_text: no JSON text");
  }
  return mbs_session_open(json, scene_path, out);
}

const cfMbsScene* cf_mbs_session_scene(const cfMbsSession* s) { return &s->scene; }
const cfMbsModel* cf_mbs_session_model(const cfMbsSession* s) { return s->m; }
cfMbsData* cf_mbs_session_data(cfMbsSession* s) { return s->d; }
double cf_mbs_session_time(const cfMbsSession* s) { return s->d->t; }
double cf_mbs_session_dt(const cfMbsSession* s) { return s->m->opt.dt; }
int cf_mbs_session_nq(const cfMbsSession* s) { return s->m->nq; }
/* the arrays themselves (Python's views): current, and taken as the state by the next step */
double* cf_mbs_session_q(cfMbsSession* s) {
  cf_mbs_sync(s->m, s->d);
  return s->d->q;
}
double* cf_mbs_session_qd(cfMbsSession* s) {
  cf_mbs_sync(s->m, s->d);
  return s->d->qd;
}

int cf_mbs_session_step(cfMbsSession* s, int n) {
  if (n < 0) return cf_error(CF_ERR_ARG, "%s: %d steps", s->scene.path, n);
  int worst = CF_OK;
  for (int k = 0; k < n; k++) {
    int st = s->gk ? cf_mbs_group_kin_step(s->m, s->gk, s->d)
             : s->scene.kinematic ? cf_mbs_kinematic_step(s->m, s->d)
             : s->sr ? cf_mbs_sr_step(s->m, s->sr, s->d) : cf_mbs_step(s->m, s->d);
    if (st < 0) return st;
    if (st > worst) worst = st;
  }
  if (s->sr && n > 0) /* the tree joints' reactions (channels, cf_mbs_session_joint_reaction), as `cofem run` */
    for (int c = 0; c < s->scene.nchannel; c++)
      if (s->scene.channel[c].what == CF_MBS_OUT_REACTION) {
        cf_mbs_sr_reactions(s->m, s->sr, s->d);
        break;
      }
  return worst;
}

int cf_mbs_session_reset(cfMbsSession* s) {
  int st = cf_mbs_reset(s->m, s->d);
  if (st < 0 || !s->sr) return st;
  cf_mbs_sr_free(s->sr); /* the relative coordinates start again from the assembled state */
  s->sr = NULL;
  return make_solver(s);
}

int cf_mbs_session_body(const cfMbsSession* s, const char* name, int* id) {
  *id = name ? cf_mbs_find_body(s->m, name) : CF_MBS_NONE;
  if (*id == CF_MBS_NONE) return cf_error(CF_ERR_ARG, "%s: no body '%s'", s->scene.path, name ? name : "(null)");
  return CF_OK;
}

int cf_mbs_session_body_pose(const cfMbsSession* s, int body, double x[3], double R[9]) {
  if (body < CF_MBS_GROUND || body >= s->m->nbody)
    return cf_error(CF_ERR_ARG, "%s: body id %d out of range (%d bodies)", s->scene.path, body, s->m->nbody);
  static const double origin[3] = {0, 0, 0};
  cf_mbs_point(s->m, s->d, body, origin, x);
  cf_mbs_rotation(s->m, s->d, body, R);
  return CF_OK;
}

int cf_mbs_session_nchannel(const cfMbsSession* s) { return s->scene.nchannel; }

const char* cf_mbs_session_channel_label(const cfMbsSession* s, int c) {
  return c >= 0 && c < s->scene.nchannel ? s->scene.channel[c].label : NULL;
}

int cf_mbs_session_channel(const cfMbsSession* s, int c, double v[3]) {
  if (c < 0 || c >= s->scene.nchannel)
    return cf_error(CF_ERR_ARG, "%s: channel %d out of range (%d channels)", s->scene.path, c, s->scene.nchannel);
  cf_mbs_channel_eval(s->m, s->d, &s->scene.channel[c], v);
  return cf_mbs_channel_size(&s->scene.channel[c]);
}

/* ---- driving (cofem/mbs.h, "driving"): names resolved here, the rest by the model-level calls ---- */
int cf_mbs_session_joint(const cfMbsSession* s, const char* name, int* id) {
  *id = name ? cf_mbs_find_joint(s->m, name) : CF_MBS_NONE;
  if (*id < 0) {
    *id = CF_MBS_NONE;
    return cf_error(CF_ERR_ARG, "%s: no joint '%s'", s->scene.path, name ? name : "(null)");
  }
  return CF_OK;
}

int cf_mbs_session_driver(const cfMbsSession* s, const char* name, int* id) {
  *id = name ? cf_mbs_find_driver(s->m, name) : CF_MBS_NONE;
  if (*id < 0) {
    *id = CF_MBS_NONE;
    return cf_error(CF_ERR_ARG, "%s: no driver '%s'", s->scene.path, name ? name : "(null)");
  }
  return CF_OK;
}

/* the scene's flexible part of body `body`, or an error naming the body */
static int flex_part(const cfMbsSession* s, int body, const cfModalPart** part) {
  *part = NULL;
  for (int k = 0; k < s->scene.nflex; k++)
    if (s->scene.flex_body[k] == body) *part = s->scene.flex[k];
  if (*part) return CF_OK;
  if (body < 0 || body >= s->m->nbody)
    return cf_error(CF_ERR_ARG, "%s: body id %d out of range (%d bodies)", s->scene.path, body, s->m->nbody);
  return cf_error(CF_ERR_ARG, "%s: body '%s' is not flexible (it has no FE scene)", s->scene.path, s->m->body_name[body]);
}

int cf_mbs_session_flex_size(const cfMbsSession* s, int body, int* nnode, int* ntet) {
  const cfModalPart* p;
  int st = flex_part(s, body, &p);
  if (st < 0) return st;
  *nnode = p->model->nnode, *ntet = p->model->ntet;
  return CF_OK;
}

int cf_mbs_session_set_node_load(cfMbsSession* s, int body, const char* set, const double F[3]) {
  const cfModalPart* p;
  int st = flex_part(s, body, &p);
  if (st < 0) return st;
  const cfNodeSet* ns = set ? cf_mesh_find_nset(&p->scene.mesh, set) : NULL;
  if (!ns) return cf_error(CF_ERR_ARG, "%s: body '%s': its mesh %s has no node set '%s'", s->scene.path,
                           s->m->body_name[body], p->scene.mesh_path, set ? set : "(null)");
  st = cf_mbs_set_node_load(s->m, s->d, body, ns->nodes, ns->count, F);
  return st < 0 ? cf_error(st, "%s: %s", s->scene.path, cf_last_error()) : st;
}

int cf_mbs_session_flex_stress(const cfMbsSession* s, int body, double* von_mises, double* node_von_mises) {
  const cfModalPart* p;
  int st = flex_part(s, body, &p);
  if (st < 0) return st;
  cfStressField f;
  if ((st = cf_stress_field_init(&f, p->model)) < 0) return st;
  st = cf_mbs_flex_stress(s->m, s->d, body, p->model, &f);
  if (st >= 0 && von_mises) memcpy(von_mises, f.von_mises, sizeof(double) * (size_t)f.ntet);
  if (st >= 0 && node_von_mises) memcpy(node_von_mises, f.node_von_mises, sizeof(double) * (size_t)f.nnode);
  cf_stress_field_free(&f);
  return st;
}

int cf_mbs_session_joint_reaction(const cfMbsSession* s, int joint, double F[3]) {
  if (joint < 0 || joint >= s->m->njoint)
    return cf_error(CF_ERR_ARG, "%s: joint id %d out of range (%d joints)", s->scene.path, joint, s->m->njoint);
  if (s->sr) cf_mbs_sr_reactions(s->m, s->sr, s->d); /* the tree joints' by the backward recursion */
  cf_mbs_joint_reaction(s->m, s->d, joint, F);
  return CF_OK;
}

int cf_mbs_session_static(cfMbsSession* s) {
  if (s->sr || s->gk)
    return cf_error(CF_ERR_UNSUPPORTED, "%s: statics runs in the global formulation: drop \"solver.formulation\"",
                    s->scene.path);
  cfMbsStaticOptions o;
  cf_mbs_static_defaults(&o);
  o.time = s->d->t;
  int st = cf_mbs_static(s->m, s->d, &o, NULL, NULL);
  return st < 0 ? cf_error(st, "%s: statics: %s", s->scene.path, cf_last_error()) : st;
}
