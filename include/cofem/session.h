/* A running FE scene behind one opaque handle: the scene, its model and data and a simulation on
 * the scene's backend, with flat calls for bindings (the Python module) and small programs. The
 * full API stays reachable through cf_session_scene/_model/_data.
 *
 * Every step applies the scene's loads at the step's end time plus the session's extra nodal
 * forces (cf_session_forces), as `cofem run` does. Arrays returned here are owned by the
 * session and stay at the same address until cf_session_free. */
#ifndef COFEM_SESSION_H
#define COFEM_SESSION_H
#include <stddef.h>
#include "cofem/scene.h"
#include "cofem/reduce.h"
#include "cofem/mbs.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cfSession cfSession;

/* Load the scene (and its mesh), build the model with the supports fixed, start the simulation on
 * the scene's backend ("auto" falls back to the CPU). Errors name the scene; *out is NULL then. */
int cf_session_open(const char* scene_path, cfSession** out);
/* The same from a scene given as JSON text (a scene built in code): scene_path names it in messages
 * and relative paths in it are resolved against its folder, as for a file at scene_path (which
 * need not exist). Validation and messages are those of a file. */
int cf_session_open_text(const char* json, const char* scene_path, cfSession** out);
void cf_session_free(cfSession* s);

const cfScene* cf_session_scene(const cfSession* s);
const cfModel* cf_session_model(const cfSession* s);
cfData* cf_session_data(cfSession* s);
int cf_session_nnode(const cfSession* s);
int cf_session_ntet(const cfSession* s);
double cf_session_time(const cfSession* s);
double cf_session_dt(const cfSession* s);

/* [3*nnode] current positions and velocities (current after every step), rest positions. */
double* cf_session_x(cfSession* s);
double* cf_session_v(cfSession* s);
const double* cf_session_rest(const cfSession* s);
/* [3*nnode] extra nodal forces [N] added to the scene's loads in every step; zero at open.
 * Write into it, then step. */
double* cf_session_forces(cfSession* s);

/* n steps (each: forces, step, state fetched). Returns the worst status: CF_OK, a positive
 * warning (counted in cf_session_data()->warning) or the first error. */
int cf_session_step(cfSession* s, int n);
/* Supports on (1) or released (0). */
int cf_session_set_supports(cfSession* s, int active);
/* Back to rest (t = 0, supports on); the extra forces are kept. */
int cf_session_reset(cfSession* s);

/* A node set of the mesh: its size, and its node indices in *nodes (may be NULL); -1 and an
 * error naming the set if there is none. */
int cf_session_node_set(const cfSession* s, const char* name, const int** nodes);
/* Mean displacement of a node set (the scene's probes are node sets). */
int cf_session_probe(const cfSession* s, const char* set, double u[3]);
/* Per-element von Mises stress [Pa] of the current state, out [ntet]. */
void cf_session_von_mises(const cfSession* s, double* out);

/* Statics from rest under scale * (every scene load in full, whatever its time profile, plus
 * gravity) plus the extra forces, as `cofem static` does: the co-rotational solution by load
 * increments with the scene's static options (linear = 0), or linear FEM (linear = 1). The
 * positions are left at the solution, the velocities zero, t = 0. */
int cf_session_static(cfSession* s, double scale, int linear);

/* Craig-Bampton reduction of the session's model (its supports stay fixed) with the nodes of the
 * named sets as interface; nmodes fixed-interface normal modes (< 0: the default). out is
 * filled; free it with cf_reduction_free. */
int cf_session_reduce(const cfSession* s, const char* const* sets, int nsets, int nmodes,
                      cfReduction* out);

/* ---- mechanisms: a mechanism scene (cf_mbs_scene_is_mechanism), its model and data ---------- */
typedef struct cfMbsSession cfMbsSession;

/* Load the mechanism scene (and its flexible bodies), build the model and data. Errors name the
 * scene (a kinematic scene with degrees of freedom left is one); *out is NULL then. */
int cf_mbs_session_open(const char* scene_path, cfMbsSession** out);
/* The same from JSON text named scene_path (cf_session_open_text); a flexible body's "scene" may be
 * a file or the FE scene itself (an object). */
int cf_mbs_session_open_text(const char* json, const char* scene_path, cfMbsSession** out);
void cf_mbs_session_free(cfMbsSession* s);

const cfMbsScene* cf_mbs_session_scene(const cfMbsSession* s);
const cfMbsModel* cf_mbs_session_model(const cfMbsSession* s);
cfMbsData* cf_mbs_session_data(cfMbsSession* s);
double cf_mbs_session_time(const cfMbsSession* s);
double cf_mbs_session_dt(const cfMbsSession* s);
/* [nq] coordinates and their rates (current after every step; same address until free). With
 * "solver.formulation": "semi_recursive" they are written from the relative coordinates after every step;
 * writing them does not move that formulation's state. */
int cf_mbs_session_nq(const cfMbsSession* s);
double* cf_mbs_session_q(cfMbsSession* s);
double* cf_mbs_session_qd(cfMbsSession* s);

/* n steps, kinematic or dynamic as the scene says ("solver.analysis"), in its formulation ("solver.formulation":
 * global, semi_recursive, structural_groups), as `cofem run` takes them. Returns the worst status: CF_OK, a
 * positive warning or the first error. */
int cf_mbs_session_step(cfMbsSession* s, int n);
/* Back to the initial configuration (t = 0). */
int cf_mbs_session_reset(cfMbsSession* s);

/* Body id by name into *id ("ground": CF_MBS_GROUND); an error naming the body if there is none. */
int cf_mbs_session_body(const cfMbsSession* s, const char* name, int* id);
/* Where the body's frame is: origin x [3] and rotation R [9] (row-major, body to global). */
int cf_mbs_session_body_pose(const cfMbsSession* s, int body, double x[3], double R[9]);
/* The scene's output channels (its "output.channels", the columns of `cofem run`'s mbs.csv):
 * their count, label c, and values now (v [3]; returns their number, 1 or 3, or -1). */
int cf_mbs_session_nchannel(const cfMbsSession* s);
const char* cf_mbs_session_channel_label(const cfMbsSession* s, int c);
int cf_mbs_session_channel(const cfMbsSession* s, int c, double v[3]);

/* Driving (cofem/mbs.h, "driving": the model-level calls take cf_mbs_session_model / _data): joint and
 * driver ids by name (errors name the scene and the name); a flexible body's node and element
 * counts; a force [N] on a node set of its mesh, by name (cf_mbs_set_node_load); its von Mises
 * stress [Pa] per element [ntet] and averaged to the nodes [nnode] (either may be NULL); the
 * reaction force of a joint on its body2 [N], global (cf_mbs_joint_reaction). */
int cf_mbs_session_joint(const cfMbsSession* s, const char* name, int* id);
int cf_mbs_session_driver(const cfMbsSession* s, const char* name, int* id);
int cf_mbs_session_flex_size(const cfMbsSession* s, int body, int* nnode, int* ntet);
int cf_mbs_session_set_node_load(cfMbsSession* s, int body, const char* set, const double F[3]);
int cf_mbs_session_flex_stress(const cfMbsSession* s, int body, double* von_mises, double* node_von_mises);
int cf_mbs_session_joint_reaction(const cfMbsSession* s, int joint, double F[3]);
/* Static equilibrium from the current state with the scene's defaults (cf_mbs_static; drivers and
 * load functions held at the current time, applied loads included): d at rest at equilibrium, its
 * reactions set. A positive status: not converged (the state is where it stopped). */
int cf_mbs_session_static(cfMbsSession* s);

/* sizeof of a public struct by name ("cfReduction", "cfReduceOptions", "cfModalOptions",
 * "cfStaticOptions", "cfModelDef"), 0 for another name: lets bindings check their mirrors. */
size_t cf_struct_size(const char* name);

#ifdef __cplusplus
}
#endif
#endif
