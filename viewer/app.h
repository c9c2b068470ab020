/* The viewer's application state and logic: scene, simulation (cfSim, any backend), real-time
 * stepping, camera, picking and the mouse spring, key commands, surface data for drawing, the
 * status text and the scripted-run reports. No OpenGL here (render.c draws what this computes;
 * main.c owns the window and feeds input in). */
#ifndef COFEM_VIEWER_APP_H
#define COFEM_VIEWER_APP_H
#include <stdio.h>

#include "cofem/cofem.h"
#include "cofem/mbs_semirecursive.h"
#include "cofem/mbs_topology.h"
#include "cofem/mbs.h"

#define VW_MAX_SCENES 16

/* Key codes: printable keys are their upper-case ASCII; the rest below. */
enum {
  VW_KEY_ESCAPE = 256,
  VW_KEY_TAB,
  VW_KEY_F1,
  VW_KEY_HOME,
  VW_KEY_PLUS,
  VW_KEY_MINUS,
  VW_MOD_SHIFT = 1,
  VW_MOD_CTRL = 2
};
enum { VW_BUTTON_LEFT = 0, VW_BUTTON_RIGHT = 1, VW_BUTTON_MIDDLE = 2 };
enum { VW_COLOR_DISP = 0, VW_COLOR_STRESS = 1, VW_COLOR_PLAIN = 2, VW_COLOR_COUNT = 3 };
enum { VW_MOUSE_NONE = 0, VW_MOUSE_ORBIT, VW_MOUSE_PAN, VW_MOUSE_PULL };

/* Orbit camera about a target, z up. yaw 0 / pitch 0 looks along +y (x right, z up). */
typedef struct vwCamera {
  double target[3];
  double dist, yaw, pitch; /* [m], [rad], [rad] */
  double fovy;             /* [rad] */
  int width, height;       /* window size in cursor coordinates */
} vwCamera;

/* The picked point: a boundary triangle and barycentric weights, so the force is spread over its
 * three nodes. The spring pulls it towards the cursor's point in the plane through the picked
 * point normal to the view direction at the time of the pick. */
typedef struct vwPick {
  int active; /* a drag is in progress */
  int valid;  /* a point has been picked (stays after release, for reports) */
  int tri, node[3];
  double w[3];
  double rest[3];    /* rest position of the picked point */
  double pos0[3];    /* its position when it was picked */
  double plane_n[3]; /* drag plane: normal (view direction at the pick) ... */
  double target[3];  /* ... and the cursor's point in it */
  double force[3];   /* force applied in the last step [N] */
  double C[9];       /* step compliance of the point, dx/df over one step [m/N] */
  double beta;       /* relaxation of the force updates (supported) */
  double k_used;     /* gain used in the last step (the gain, or its cap) [N/m] */
  double df_prev[3]; /* last force update */
  int steps_since_C; /* steps since C was computed */
  int C_supports;    /* supports state C was computed with */
  double* z[3];      /* [ndof] warm starts of the three compliance solves */
} vwPick;

/* A mechanism scene (cf_mbs_scene_is_mechanism): the flexible bodies' meshes are drawn as one
 * surface (their nodes concatenated: body k's nodes are node0 .. node0 + nnode - 1 of x), coloured
 * by the elastic displacement (what is left of x - X after the best rigid motion of the body; a
 * clamped FE body: x - x(t = 0));
 * rigid bodies as boxes from their mass and inertia, joints as spheres (xbuf). */
typedef struct vwMbsFlex {
  int body;          /* body id of the mechanism */
  int fe, modal;     /* FE body index / modal body index (the other is -1) */
  const cfMesh* mesh;
  int nnode, node0;  /* its nodes in the concatenated arrays */
  double mass;       /* FE bodies: total mass */
  int clamped;       /* FE body with fixed nodes: coloured by x - x(t = 0), no rigid fit */
  double c0[3];      /* centroid at t = 0 */
  double c[3];       /* centroid now (the mean of the nodes) */
  double uel_max;    /* largest elastic displacement now [m] */
} vwMbsFlex;

typedef struct vwMbs {
  cfMbsScene s;
  int s_loaded;
  cfMbsModel* m;
  cfMbsData* d;
  cfMbsSr* sr;        /* "solver.formulation": "semi_recursive" (it writes d after every step), else NULL */
  cfMbsGroupKin* gk;  /* "structural_groups" (a kinematic scene), else NULL */
  int nflex;
  vwMbsFlex flex[CF_MBS_MAX_FLEX];
  int nnode;      /* nodes of all flexible bodies */
  double* X;      /* [3 nnode] rest positions (mesh coordinates of each body) */
  double* x;      /* [3 nnode] current positions */
  double* x0;     /* [3 nnode] positions at t = 0 */
  int* tri;       /* [3 ntri] boundary triangles, concatenated node numbers */
  int* tri_flex;  /* [ntri] flexible body of each triangle */
  double *fx, *fv, *fextra; /* scratch [3 * largest nnode] */
  double gain_auto;         /* mouse spring gain (per picked FE body) [N/m] */
  int pick_flex;            /* flexible body of the pick */
  double step_ms;           /* smoothed wall time per step */
  double newton_mean;
} vwMbs;

typedef struct vwOptions {
  const char* scenes[VW_MAX_SCENES];
  int nscenes;
  const char* backend; /* NULL: the scene's */
  int fixed_steps;     /* > 0: exactly this many steps per frame (deterministic) */
  int max_steps;       /* cap of steps per frame in real time */
  double budget_ms;    /* stop stepping a frame after this much wall time (at least one step) */
  double gain;         /* spring gain [N/m]; 0: automatic (0.01 E L) */
  int color;
  int wireframe;
  int loads;
  int gravity;
  int width, height; /* initial window size */
} vwOptions;

typedef struct vwApp {
  vwOptions opt;
  int cur; /* index of the current scene */
  /* the scene and its simulation */
  cfScene scene;
  int scene_loaded;
  cfModel* m;
  cfData* d;
  cfSim* sim;
  cfData* scratch;   /* host data for the compliance solves */
  char name[128];    /* scene file name */
  double g_scene[3]; /* the scene's gravity, applied as nodal forces when gravity is on */
  double L;          /* bounding-box diagonal of the rest shape [m] */
  double bmin[3], bmax[3];
  /* what the camera frames when it fits the view: bmin/bmax, or for a mechanism whose FE bodies
   * are small in it (a 5 cm hinge carrying a 2 m door) the FE bodies, which the mouse pulls */
  double fmin[3], fmax[3];
  double mass;
  double* f_new; /* [ndof] forces for the next step */
  /* toggles */
  int paused, supports, gravity, loads, color, wireframe, follow, help;
  double gain_auto; /* 0.01 E L [N/m] */
  int gain_exp;     /* gain = gain_auto * 2^gain_exp (or opt.gain * 2^gain_exp) */
  /* stepping and timing */
  double acc; /* wall-clock time owed to the simulation [s] */
  double win_wall, win_sim;
  int win_dropped;         /* current measuring window */
  double rt_ratio;         /* simulated / wall time over the last window */
  int behind;              /* the last window dropped time: slower than real time */
  double frame_ms, sim_ms; /* smoothed frame time and stepping time per frame */
  int last_status;         /* last cf_sim_step status */
  long warn_steps;         /* steps that returned a warning */
  char message[256];       /* transient message shown on screen */
  double message_until;
  int error; /* a backend error stopped the simulation */
  /* the divergence monitor stopped a step (CF_ERR_DIVERGED): the part was reset to rest and
   * paused; the library's message (step, time, what grew, what to try) shown until resumed */
  char diverged[1024];
  int ndiverged; /* times this scene diverged */
  /* surface (boundary triangles) for drawing */
  int ntri;
  int* corner_ptr; /* [3*ntri+1] faces whose normals a corner averages (crease 50 deg) */
  int* corner_face;
  int nedge;
  int* edge;         /* [2*nedge] unique boundary edges */
  double* fnrm;      /* [3*ntri] face normals (area-weighted) */
  double* node_val;  /* [nnode] scalar being shown */
  double* elem_vm;   /* [ntet] von Mises */
  double* node_vol;  /* [nnode] sum of adjacent element volumes */
  float* vbuf;       /* [3*ntri*7] position, normal, scalar per triangle corner */
  float* ebuf;       /* [2*nedge*3] edge endpoints */
  double vmax;       /* colour range (smoothed) */
  double vmax_frame; /* maximum this frame */
  /* camera and mouse */
  vwCamera cam;
  double follow_ref[3]; /* centroid when follow was switched on */
  int mouse_mode;
  double mx, my, press_x, press_y;
  vwPick pick;
  double report_pick_rest[3];
  /* mechanism scenes (NULL for FE scenes): the surface above is the flexible bodies' */
  vwMbs* mbs;
  float* xbuf;  /* [nxtri * 21] rigid bodies' boxes, then the joint markers */
  int nxtri, nxrigid, xcap;
} vwApp;

/* Time step of the current scene [s]; node positions of the drawn surface (FE scene: d->x). */
double vw_dt(const vwApp* a);
const double* vw_surface_x(const vwApp* a);
const int* vw_surface_tri(const vwApp* a);

/* Load scene number idx of the options (error: negative, message in cf_last_error). */
int vw_app_init(vwApp* a, const vwOptions* opt);
int vw_app_load(vwApp* a, int idx);
void vw_app_free(vwApp* a);
void vw_app_reset(vwApp* a);

/* Advance the simulation for a frame that took wall_dt seconds. */
void vw_app_advance(vwApp* a, double wall_dt, double now);
/* After stepping: fetch the state and fill node_val, vbuf, ebuf, vmax. */
void vw_app_update_visuals(vwApp* a);

/* Input, in window cursor coordinates (origin top left). */
void vw_app_set_size(vwApp* a, int width, int height);
void vw_app_mouse_button(vwApp* a, int button, int press, int mods, double x, double y);
void vw_app_cursor(vwApp* a, double x, double y);
void vw_app_scroll(vwApp* a, double dy);
/* Returns 1 if the key asks to quit. now: wall clock (for on-screen messages). */
int vw_app_key(vwApp* a, int key, int mods, double now);

/* Camera: world point -> window coordinates (returns 0 if behind the camera); pixel -> ray. */
int vw_project(const vwCamera* c, const double* p, double* sx, double* sy);
void vw_ray(const vwCamera* c, double sx, double sy, double* origin, double* dir);
void vw_camera_basis(const vwCamera* c, double* eye, double* fwd, double* right, double* up);
void vw_camera_fit(vwApp* a);
/* Column-major 4x4 view and projection matrices for OpenGL. */
void vw_camera_matrices(const vwCamera* c, double znear_scale, float* view, float* proj);

/* Ray cast against the boundary triangles at the current positions: the nearest hit
 * (triangle, barycentric weights w of its nodes, distance along the ray) or -1. */
int vw_raycast(const vwApp* a, const double* o, const double* dir, double* w, double* t);

/* Mean current position of a node set (0 if it does not exist). */
int vw_set_position(const vwApp* a, const char* set, double* p);
/* Time factor of load i at time t (0..1, the scene's ramp). */
double vw_load_factor(const cfSceneLoad* l, double t);
double vw_gain(const vwApp* a);

/* Status line, second line (toggles) and the warning to show, if any ("" otherwise). */
void vw_status_text(const vwApp* a, char* line1, int n1, char* line2, int n2, char* warn, int nw);
/* One line "report key=value ..." on out (scripted runs, tests). */
void vw_report(vwApp* a, FILE* out, const char* label, long frame);

/* Colour map shared with the shader: x in [0,1] -> rgb. */
void vw_colormap(double x, float* rgb);
/* Value and unit for the legend: scale factor and unit name for a maximum vmax. */
void vw_legend_unit(int color, double vmax, double* scale, const char** unit, const char** title);
#endif
