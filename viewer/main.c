/* cofem_view: the interactive viewer (GLFW window, OpenGL 3.3 core through GLEW).
 * Exit status: 0 done, 1 bad scene / failed screenshot / a failed step (--screenshot, --script), 2 usage or script error,
 * 3 no display or no OpenGL 3.3 core context. */
#include <GL/glew.h>
#include <GLFW/glfw3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "app.h"
#include "render.h"
#include "script.h"

static const char* USAGE =
    "usage: cofem_view [options] [SCENE...]\n"
    "  SCENE            lug, hinge (the demos in scenes/) or a scene file; several: N / 1-9 "
    "switch\n"
    "                   (default: lug hinge)\n"
    "  --backend B      cpu, cuda or auto (default: the scene's)\n"
    "  --size WxH       window size (default 1280x800)\n"
    "  --gain K         mouse spring gain [N/m] (default 0.01 E L, L the part's diagonal)\n"
    "  --color C        disp, stress or plain (default disp)\n"
    "  --wireframe      draw the element edges\n"
    "  --samples N      multisampling (default 4, 0 on software OpenGL, where it is slow)\n"
    "  --no-loads       start with the scene's loads switched off (key L)\n"
    "  --no-gravity     start with gravity off (key G)\n"
    "  --help-panel     start with the help panel shown (key H)\n"
    "  --max-steps N    real time: at most N steps per frame (default 20)\n"
    "  --budget-ms MS   real time: stop stepping a frame after MS ms, at least one step (40)\n"
    "  --min-frame-ms MS  frame-rate limit (default 16; 0 in scripted runs)\n"
    "  --fixed-steps N  exactly N steps per frame instead of real time (deterministic)\n"
    "  --script FILE    run input events from FILE (format in viewer/script.h)\n"
    "  --screenshot F   write the frame after --frames frames to F (PNG) and exit\n"
    "  --frames N       frames before --screenshot (default 30)\n"
    "  --max-frames N   exit after N frames whatever the script says\n"
    "  --check-gl       open the window, print the OpenGL version and exit\n";

typedef struct Main {
  vwApp app;
  vwRender* render;
  GLFWwindow* win;
  int scripted;
  char glfw_error[512];
} Main;

static Main g;

static void on_glfw_error(int code, const char* msg) {
  snprintf(g.glfw_error, sizeof g.glfw_error, "%s (GLFW error 0x%x)", msg, code);
}

static int map_key(int key) {
  if (key >= GLFW_KEY_A && key <= GLFW_KEY_Z) return 'A' + (key - GLFW_KEY_A);
  if (key >= GLFW_KEY_0 && key <= GLFW_KEY_9) return '0' + (key - GLFW_KEY_0);
  switch (key) {
    case GLFW_KEY_SPACE:
      return ' ';
    case GLFW_KEY_EQUAL:
    case GLFW_KEY_KP_ADD:
    case GLFW_KEY_RIGHT_BRACKET:
      return VW_KEY_PLUS;
    case GLFW_KEY_MINUS:
    case GLFW_KEY_KP_SUBTRACT:
    case GLFW_KEY_LEFT_BRACKET:
      return VW_KEY_MINUS;
    case GLFW_KEY_ESCAPE:
      return VW_KEY_ESCAPE;
    case GLFW_KEY_TAB:
      return VW_KEY_TAB;
    case GLFW_KEY_F1:
      return VW_KEY_F1;
    case GLFW_KEY_HOME:
      return VW_KEY_HOME;
    default:
      return -1;
  }
}

static int map_mods(int mods) {
  return ((mods & GLFW_MOD_SHIFT) ? VW_MOD_SHIFT : 0) |
         ((mods & GLFW_MOD_CONTROL) ? VW_MOD_CTRL : 0);
}

static void on_key(GLFWwindow* w, int key, int scancode, int action, int mods) {
  if (g.scripted || action != GLFW_PRESS) return;
  int k = map_key(key);
  if (k >= 0 && vw_app_key(&g.app, k, map_mods(mods), glfwGetTime()))
    glfwSetWindowShouldClose(w, 1);
}

static void on_button(GLFWwindow* w, int button, int action, int mods) {
  if (g.scripted) return;
  double x, y;
  glfwGetCursorPos(w, &x, &y);
  int b = button == GLFW_MOUSE_BUTTON_LEFT    ? VW_BUTTON_LEFT
          : button == GLFW_MOUSE_BUTTON_RIGHT ? VW_BUTTON_RIGHT
                                              : VW_BUTTON_MIDDLE;
  vw_app_mouse_button(&g.app, b, action == GLFW_PRESS, map_mods(mods), x, y);
}

static void on_cursor(GLFWwindow* w, double x, double y) {
  if (!g.scripted) vw_app_cursor(&g.app, x, y);
}

static void on_scroll(GLFWwindow* w, double dx, double dy) {
  if (!g.scripted) vw_app_scroll(&g.app, dy);
}

static void sleep_s(double s) {
  if (s <= 0) return;
  struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
  nanosleep(&ts, NULL);
}

/* Apply the script's events due at this frame; screenshots and reports are queued for the end
 * of the frame. Returns -1 on an event that cannot be carried out. */
static int run_events(vwScript* sc, long frame, const char** shots, int* nshots,
                      const char** reports, int* nrep, int* quit) {
  vwApp* a = &g.app;
  while (sc->next < sc->n && sc->ev[sc->next].frame <= frame) {
    const vwEvent* e = &sc->ev[sc->next++];
    double x = e->x, y = e->y;
    switch (e->type) {
      case VW_EV_DRAG_START:
        if (!e->has_xy) {
          double p[3];
          if (!vw_set_position(a, e->arg, p) || !vw_project(&a->cam, p, &x, &y)) {
            fprintf(stderr,
                    "cofem_view: script line %d: node set \"%s\" not found or not in view\n",
                    e->line, e->arg);
            return -1;
          }
        }
        vw_app_cursor(a, x, y);
        vw_app_mouse_button(a, VW_BUTTON_LEFT, 1, 0, x, y);
        break;
      case VW_EV_DRAG_TO:
      case VW_EV_MOVE:
        vw_app_cursor(a, x, y);
        break;
      case VW_EV_DRAG_BY:
        vw_app_cursor(a, a->press_x + x, a->press_y + y);
        break;
      case VW_EV_DRAG_END:
        vw_app_mouse_button(a, VW_BUTTON_LEFT, 0, 0, a->mx, a->my);
        break;
      case VW_EV_PRESS:
        if (e->has_xy) vw_app_cursor(a, x, y);
        vw_app_mouse_button(a, e->button, 1, e->mods, a->mx, a->my);
        break;
      case VW_EV_RELEASE:
        vw_app_mouse_button(a, e->button, 0, e->mods, a->mx, a->my);
        break;
      case VW_EV_SCROLL:
        vw_app_scroll(a, e->y);
        break;
      case VW_EV_KEY:
        if (vw_app_key(a, e->key, e->mods, glfwGetTime())) *quit = 1;
        break;
      case VW_EV_SCREENSHOT:
        if (*nshots < 16) shots[(*nshots)++] = e->arg;
        break;
      case VW_EV_REPORT:
        if (*nrep < 16) reports[(*nrep)++] = e->arg;
        break;
      case VW_EV_QUIT:
        *quit = 1;
        break;
    }
  }
  return 0;
}

/* the command line */
typedef struct Args {
  vwOptions opt;
  int width, height, frames, check_gl, help_panel, samples;
  long max_frames;
  double min_frame_ms;
  const char *script_path, *screenshot;
} Args;

/* --size WxH: 0, or -1 after the message on stderr */
static int parse_size(const char* v, int* width, int* height) {
  char wh[64];
  const char* x = strchr(v, 'x');
  if (!x || x - v >= (long)sizeof wh) {
    fprintf(stderr, "cofem_view: --size wants WxH, e.g. 1280x800, got '%s'\n", v);
    return -1;
  }
  snprintf(wh, sizeof wh, "%.*s", (int)(x - v), v);
  if (cf_parse_int("--size width", wh, 64, 16384, width) < 0 ||
      cf_parse_int("--size height", x + 1, 64, 16384, height) < 0) {
    fprintf(stderr, "cofem_view: %s\n", cf_last_error());
    return -1;
  }
  return 0;
}

/* 1. options: -1 to go on, else the exit status (0 after --help, 2 on a usage error) */
static int parse_args(int argc, char** argv, Args* a) {
  memset(a, 0, sizeof *a);
  a->opt.max_steps = 20;
  a->opt.budget_ms = 40;
  a->opt.loads = 1;
  a->opt.gravity = 1;
  a->width = 1280, a->height = 800, a->frames = 30, a->samples = -1;
  a->max_frames = -1;
  a->min_frame_ms = -1;
  for (int i = 1; i < argc; i++) {
    const char* s = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : NULL;
#define NEED_ARG()                                                   \
  do {                                                               \
    if (!v) {                                                        \
      fprintf(stderr, "cofem_view: %s needs a value\n%s", s, USAGE); \
      return 2;                                                      \
    }                                                                \
    i++;                                                             \
  } while (0)
/* strict values (cf_parse_*, cofem/status.h): the whole text, in range, or exit 2 naming both */
#define NUMBER(kind, lo, hi, dst)                                    \
  do {                                                               \
    NEED_ARG();                                                      \
    if (cf_parse_##kind(s, v, lo, hi, dst) < 0) {                    \
      fprintf(stderr, "cofem_view: %s\n", cf_last_error());          \
      return 2;                                                      \
    }                                                                \
  } while (0)
    if (!strcmp(s, "--help") || !strcmp(s, "-h")) {
      fputs(USAGE, stdout);
      return 0;
    } else if (!strcmp(s, "--backend")) {
      static const char* const backends[] = {"cpu", "cuda", "auto", NULL};
      int b;
      NEED_ARG();
      if (cf_parse_choice(s, v, backends, &b) < 0) {
        fprintf(stderr, "cofem_view: %s\n", cf_last_error());
        return 2;
      }
      a->opt.backend = backends[b];
    } else if (!strcmp(s, "--size")) {
      NEED_ARG();
      if (parse_size(v, &a->width, &a->height) < 0) return 2;
    } else if (!strcmp(s, "--gain")) {
      NUMBER(double, 1e-9, 1e18, &a->opt.gain); /* N/m, > 0 */
    } else if (!strcmp(s, "--color")) {
      static const char* const colors[] = {"disp", "stress", "plain", NULL};
      static const int color_of[] = {VW_COLOR_DISP, VW_COLOR_STRESS, VW_COLOR_PLAIN};
      int c;
      NEED_ARG();
      if (cf_parse_choice(s, v, colors, &c) < 0) {
        fprintf(stderr, "cofem_view: %s\n", cf_last_error());
        return 2;
      }
      a->opt.color = color_of[c];
    } else if (!strcmp(s, "--samples")) {
      NUMBER(int, 0, 32, &a->samples);
    } else if (!strcmp(s, "--wireframe")) {
      a->opt.wireframe = 1;
    } else if (!strcmp(s, "--no-loads")) {
      a->opt.loads = 0;
    } else if (!strcmp(s, "--no-gravity")) {
      a->opt.gravity = 0;
    } else if (!strcmp(s, "--help-panel")) {
      a->help_panel = 1;
    } else if (!strcmp(s, "--max-steps")) {
      NUMBER(int, 1, 100000, &a->opt.max_steps);
    } else if (!strcmp(s, "--budget-ms")) {
      NUMBER(double, 0, 1e6, &a->opt.budget_ms);
    } else if (!strcmp(s, "--min-frame-ms")) {
      NUMBER(double, 0, 1e6, &a->min_frame_ms);
    } else if (!strcmp(s, "--fixed-steps")) {
      NUMBER(int, 0, 100000, &a->opt.fixed_steps);
    } else if (!strcmp(s, "--script")) {
      NEED_ARG();
      a->script_path = v;
    } else if (!strcmp(s, "--screenshot")) {
      NEED_ARG();
      a->screenshot = v;
    } else if (!strcmp(s, "--frames")) {
      NUMBER(int, 1, 100000000, &a->frames);
    } else if (!strcmp(s, "--max-frames")) {
      NUMBER(long, 1, 1000000000000L, &a->max_frames);
    } else if (!strcmp(s, "--check-gl")) {
      a->check_gl = 1;
    } else if (s[0] == '-' && s[1]) {
      fprintf(stderr, "cofem_view: unknown option %s\n%s", s, USAGE);
      return 2;
    } else if (a->opt.nscenes < VW_MAX_SCENES) {
      a->opt.scenes[a->opt.nscenes++] = s;
    } else {
      fprintf(stderr, "cofem_view: at most %d scenes, got more ('%s')\n", VW_MAX_SCENES, s);
      return 2;
    }
#undef NUMBER
  }
  if (a->opt.nscenes == 0) {
    a->opt.scenes[a->opt.nscenes++] = "lug";
    a->opt.scenes[a->opt.nscenes++] = "hinge";
  }
  return -1;
}

/* 2. the window and its OpenGL 3.3 core context: -1 to go on, else the exit status (0 after
 * --check-gl, 3 without a display or context) */
static int open_window(Args* a) {
  glfwSetErrorCallback(on_glfw_error);
  if (!glfwInit()) {
    fprintf(stderr, "cofem_view: no display: %s\n",
            g.glfw_error[0] ? g.glfw_error : "glfwInit failed");
    return 3;
  }
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
  glfwWindowHint(GLFW_RESIZABLE, (a->script_path || a->screenshot) ? GLFW_FALSE : GLFW_TRUE);
  /* multisampling by default, but not on a software renderer (llvmpipe: 3x slower frames) */
  for (int attempt = 0; attempt < 2; attempt++) {
    glfwWindowHint(GLFW_SAMPLES, a->samples >= 0 ? a->samples : 4);
    g.win = glfwCreateWindow(a->width, a->height, "cofem viewer", NULL, NULL);
    if (!g.win) {
      fprintf(stderr, "cofem_view: no OpenGL 3.3 core context: %s\n",
              g.glfw_error[0] ? g.glfw_error : "window creation failed");
      glfwTerminate();
      return 3;
    }
    glfwMakeContextCurrent(g.win);
    glewExperimental = GL_TRUE;
    GLenum gerr = glewInit();
    if (gerr != GLEW_OK) {
      fprintf(stderr, "cofem_view: no OpenGL 3.3 core context: glewInit: %s\n",
              (const char*)glewGetErrorString(gerr));
      glfwTerminate();
      return 3;
    }
    while (glGetError() != GL_NO_ERROR) {
    } /* glewInit may leave GL_INVALID_ENUM behind in core profiles */
    const char* renderer = (const char*)glGetString(GL_RENDERER);
    int software = renderer && (strstr(renderer, "llvmpipe") || strstr(renderer, "softpipe") ||
                                strstr(renderer, "swrast"));
    if (a->samples >= 0 || !software || attempt == 1) break;
    a->samples = 0;
    glfwDestroyWindow(g.win);
  }
  glfwSwapInterval((a->script_path || a->screenshot) ? 0 : 1);
  fprintf(stderr, "cofem_view: OpenGL %s, %s, %d samples\n", (const char*)glGetString(GL_VERSION),
          (const char*)glGetString(GL_RENDERER), a->samples >= 0 ? a->samples : 4);
  if (a->check_gl) {
    glfwTerminate();
    return 0;
  }
  g.render = vw_render_create();
  if (!g.render) {
    fprintf(stderr, "cofem_view: no OpenGL 3.3 core context: the shaders do not compile\n");
    glfwTerminate();
    return 3;
  }
  return -1;
}

/* 3. the frame loop: events of the script, stepping, drawing, screenshots; the exit status */
static int run_frames(const Args* a, vwScript* sc) {
  int rc = 0, quit = 0;
  long frame = 0;
  double last = glfwGetTime();
  while (!quit && !glfwWindowShouldClose(g.win)) {
    double t0 = glfwGetTime();
    glfwPollEvents();
    int ww, wh, fbw, fbh;
    glfwGetWindowSize(g.win, &ww, &wh);
    glfwGetFramebufferSize(g.win, &fbw, &fbh);
    if (ww <= 0 || wh <= 0 || fbw <= 0 || fbh <= 0) { /* minimised */
      sleep_s(0.05);
      last = glfwGetTime();
      continue;
    }
    vw_app_set_size(&g.app, ww, wh);
    double now = glfwGetTime(), wall_dt = frame == 0 ? 0 : now - last;
    last = now;
    const char *shots[16], *reports[16];
    int nshots = 0, nrep = 0;
    if (a->script_path && run_events(sc, frame, shots, &nshots, reports, &nrep, &quit) < 0) {
      rc = 2;
      break;
    }
    vw_app_advance(&g.app, wall_dt, now);
    vw_app_update_visuals(&g.app);
    vw_render_frame(g.render, &g.app, fbw, fbh, (double)fbw / ww, now);
    if (a->screenshot && frame >= a->frames) {
      shots[nshots++] = a->screenshot;
      quit = 1;
    }
    for (int i = 0; i < nshots; i++) {
      if (vw_render_screenshot(shots[i], fbw, fbh) != 0) {
        fprintf(stderr, "cofem_view: cannot write the screenshot %s\n", shots[i]);
        rc = 1;
      } else {
        fprintf(stderr, "cofem_view: wrote %s (%dx%d)\n", shots[i], fbw, fbh);
      }
    }
    for (int i = 0; i < nrep; i++) vw_report(&g.app, stdout, reports[i], frame);
    glfwSwapBuffers(g.win);
    frame++;
    if (a->max_frames >= 0 && frame >= a->max_frames) {
      fprintf(stderr, "cofem_view: stopping after %ld frames (--max-frames)\n", frame);
      break;
    }
    if (a->min_frame_ms > 0) sleep_s(t0 + a->min_frame_ms * 1e-3 - glfwGetTime());
  }
  /* unattended (--screenshot, --script): a step that failed is the run's failure, as in `cofem run`
   * (a divergence is not: the part was reset to rest, as the user sees it) */
  if (rc == 0 && g.app.error && (a->screenshot || a->script_path)) {
    fprintf(stderr, "cofem_view: exit 1: a step failed (above)\n");
    rc = 1;
  }
  return rc;
}

int main(int argc, char** argv) {
  Args args, *a = &args;
  int rc = parse_args(argc, argv, a);
  if (rc >= 0) return rc;
  vwScript sc;
  memset(&sc, 0, sizeof sc);
  if (a->script_path) {
    char err[1024];
    if (vw_script_load(a->script_path, &sc, err, sizeof err) < 0) {
      fprintf(stderr, "cofem_view: %s\n", err);
      return 2;
    }
    g.scripted = 1;
  }
  if (a->min_frame_ms < 0) a->min_frame_ms = (a->script_path || a->screenshot) ? 0 : 16;
  a->opt.width = a->width;
  a->opt.height = a->height;

  /* the scene first: a bad scene is an error before any window opens */
  if (!a->check_gl && vw_app_init(&g.app, &a->opt) < 0) {
    fprintf(stderr, "cofem_view: %s\n", cf_last_error());
    return 1;
  }
  g.app.help = a->help_panel;
  if ((rc = open_window(a)) >= 0) return rc;
  glfwSetKeyCallback(g.win, on_key);
  glfwSetMouseButtonCallback(g.win, on_button);
  glfwSetCursorPosCallback(g.win, on_cursor);
  glfwSetScrollCallback(g.win, on_scroll);
  rc = run_frames(a, &sc);
  /* 4. teardown */
  vw_script_free(&sc);
  vw_render_free(g.render);
  glfwDestroyWindow(g.win);
  glfwTerminate();
  vw_app_free(&g.app);
  return rc;
}
