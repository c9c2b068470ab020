/* OpenGL 3.3 core drawing for the viewer (see render.h). */
#include "render.h"

#include <GL/glew.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmath.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#include <stb/stb_easy_font.h>
#pragma GCC diagnostic pop

/* stb_image_write is compiled in stb_impl.c */
int stbi_write_png(char const* filename, int w, int h, int comp, const void* data,
                   int stride_in_bytes);

/* ---- shaders ----------------------------------------------------------------------------------
 */

static const char* MESH_VS =
    "#version 330 core\n"
    "layout(location=0) in vec3 pos;\n"
    "layout(location=1) in vec3 nrm;\n"
    "layout(location=2) in float val;\n"
    "uniform mat4 view, proj;\n"
    "out vec3 vN; out vec3 vP; out float vVal;\n"
    "void main() {\n"
    "  vec4 p = view * vec4(pos, 1.0);\n"
    "  gl_Position = proj * p;\n"
    "  vN = mat3(view) * nrm; vP = p.xyz; vVal = val;\n"
    "}\n";

/* Turbo polynomial (same as vw_colormap), two lights fixed to the camera, Blinn-Phong. */
static const char* MESH_FS =
    "#version 330 core\n"
    "in vec3 vN; in vec3 vP; in float vVal;\n"
    "uniform int mode; uniform float vmax; uniform vec3 base; uniform float alpha;\n"
    "out vec4 frag;\n"
    "vec3 turbo(float x) {\n"
    "  const vec4 kr = vec4(0.13572138, 4.61539260, -42.66032258, 132.13108234);\n"
    "  const vec4 kg = vec4(0.09140261, 2.19418839, 4.84296658, -14.18503333);\n"
    "  const vec4 kb = vec4(0.10667330, 12.64194608, -60.58204836, 110.36276771);\n"
    "  const vec2 kr2 = vec2(-152.94239396, 59.28637943);\n"
    "  const vec2 kg2 = vec2(4.27729857, 2.82956604);\n"
    "  const vec2 kb2 = vec2(-89.90310912, 27.34824973);\n"
    "  x = 0.1 + 0.8 * clamp(x, 0.0, 1.0);\n"
    "  vec4 v4 = vec4(1.0, x, x * x, x * x * x); vec2 v2 = v4.zw * v4.z;\n"
    "  return clamp(vec3(dot(v4, kr) + dot(v2, kr2), dot(v4, kg) + dot(v2, kg2), dot(v4, kb) + "
    "dot(v2, kb2)), 0.0, 1.0);\n"
    "}\n"
    "void main() {\n"
    "  vec3 n = normalize(vN); vec3 v = normalize(-vP);\n"
    "  if (dot(n, v) < 0.0) n = -n;\n"
    "  vec3 c = mode == 2 ? base : turbo(vVal / vmax);\n"
    "  vec3 l1 = normalize(vec3(-0.45, 0.65, 0.6)), l2 = normalize(vec3(0.7, -0.25, 0.45));\n"
    "  float d = 0.8 * max(dot(n, l1), 0.0) + 0.3 * max(dot(n, l2), 0.0);\n"
    "  float s = 0.35 * pow(max(dot(n, normalize(l1 + v)), 0.0), 36.0);\n"
    "  frag = vec4(c * (0.25 + 0.8 * d) + vec3(s), alpha);\n"
    "}\n";

static const char* LINE_VS =
    "#version 330 core\n"
    "layout(location=0) in vec3 pos;\n"
    "layout(location=1) in vec4 col;\n"
    "uniform mat4 view, proj;\n"
    "out vec4 vC;\n"
    "void main() { gl_Position = proj * view * vec4(pos, 1.0); vC = col; }\n";

static const char* COLOR_FS =
    "#version 330 core\n"
    "in vec4 vC; out vec4 frag;\n"
    "void main() { frag = vC; }\n";

static const char* OVERLAY_VS =
    "#version 330 core\n"
    "layout(location=0) in vec2 pos;\n"
    "layout(location=1) in vec4 col;\n"
    "uniform vec2 screen;\n"
    "out vec4 vC;\n"
    "void main() { gl_Position = vec4(2.0 * pos.x / screen.x - 1.0, 1.0 - 2.0 * pos.y / screen.y, "
    "0.0, 1.0); vC = col; }\n";

/* ---- vertex lists -----------------------------------------------------------------------------
 */

typedef struct vwList {
  float* v;
  int n, cap, stride; /* floats used, allocated, per vertex */
} vwList;

static int list_reserve(vwList* l, int nfloat) {
  if (l->n + nfloat <= l->cap) return 1;
  int cap = l->cap ? l->cap : 4096;
  while (cap < l->n + nfloat) cap *= 2;
  float* v = realloc(l->v, sizeof(float) * (size_t)cap);
  if (!v) return 0;
  l->v = v;
  l->cap = cap;
  return 1;
}

typedef struct vwColor {
  float r, g, b, a;
} vwColor;

struct vwRender {
  GLuint p_mesh, p_line, p_ov;
  GLint mesh_view, mesh_proj, mesh_mode, mesh_vmax, mesh_base, mesh_alpha, line_view, line_proj, ov_screen;
  GLuint vao[3], vbo[3]; /* mesh, 3-D lines, overlay */
  vwList lines, ov;
  double ui, ts; /* ui scale, text scale */
};

static void ov_vert(vwRender* r, float x, float y, vwColor c) {
  float* o = r->ov.v + r->ov.n;
  o[0] = x;
  o[1] = y;
  o[2] = c.r;
  o[3] = c.g;
  o[4] = c.b;
  o[5] = c.a;
  r->ov.n += 6;
}

static void ov_tri(vwRender* r, float x0, float y0, float x1, float y1, float x2, float y2,
                   vwColor c) {
  if (!list_reserve(&r->ov, 18)) return;
  ov_vert(r, x0, y0, c);
  ov_vert(r, x1, y1, c);
  ov_vert(r, x2, y2, c);
}

static void ov_rect2(vwRender* r, float x0, float y0, float x1, float y1, vwColor top,
                     vwColor bottom) {
  if (!list_reserve(&r->ov, 36)) return;
  ov_vert(r, x0, y0, top);
  ov_vert(r, x1, y0, top);
  ov_vert(r, x1, y1, bottom);
  ov_vert(r, x0, y0, top);
  ov_vert(r, x1, y1, bottom);
  ov_vert(r, x0, y1, bottom);
}

static void ov_rect(vwRender* r, float x0, float y0, float x1, float y1, vwColor c) {
  ov_rect2(r, x0, y0, x1, y1, c, c);
}

static void ov_line(vwRender* r, double x0, double y0, double x1, double y1, double w, vwColor c) {
  double dx = x1 - x0, dy = y1 - y0, l = sqrt(dx * dx + dy * dy);
  if (l < 1e-9) return;
  double nx = -dy / l * 0.5 * w, ny = dx / l * 0.5 * w;
  ov_tri(r, (float)(x0 + nx), (float)(y0 + ny), (float)(x1 + nx), (float)(y1 + ny),
         (float)(x1 - nx), (float)(y1 - ny), c);
  ov_tri(r, (float)(x0 + nx), (float)(y0 + ny), (float)(x1 - nx), (float)(y1 - ny),
         (float)(x0 - nx), (float)(y0 - ny), c);
}

static void ov_box_outline(vwRender* r, double x, double y, double h, double w, vwColor c) {
  ov_line(r, x - h, y - h, x + h, y - h, w, c);
  ov_line(r, x + h, y - h, x + h, y + h, w, c);
  ov_line(r, x + h, y + h, x - h, y + h, w, c);
  ov_line(r, x - h, y + h, x - h, y - h, w, c);
}

static void ov_arrow(vwRender* r, double x0, double y0, double x1, double y1, double w, vwColor c) {
  double dx = x1 - x0, dy = y1 - y0, l = sqrt(dx * dx + dy * dy);
  if (l < 2) return;
  double ux = dx / l, uy = dy / l, hl = fmin(0.35 * l, 14 * r->ui), hw = 0.5 * hl;
  double bx = x1 - ux * hl, by = y1 - uy * hl;
  ov_line(r, x0, y0, bx, by, w, c);
  ov_tri(r, (float)x1, (float)y1, (float)(bx - uy * hw), (float)(by + ux * hw),
         (float)(bx + uy * hw), (float)(by - ux * hw), c);
}

static double text_width(const vwRender* r, const char* s) {
  return stb_easy_font_width((char*)s) * r->ts;
}

/* Text at (x, y) top left; a dark copy one pixel down-right for legibility. */
static void ov_text(vwRender* r, double x, double y, const char* s, vwColor c) {
  static char buf[120000];
  int nq = stb_easy_font_print(0, 0, (char*)s, NULL, buf, sizeof buf);
  if (!list_reserve(&r->ov, nq * 72)) return;
  vwColor shadow = {0, 0, 0, 0.75f * c.a};
  for (int pass = 0; pass < 2; pass++) {
    double ox = x + (pass == 0 ? r->ui : 0), oy = y + (pass == 0 ? r->ui : 0);
    vwColor cc = pass == 0 ? shadow : c;
    for (int q = 0; q < nq; q++) {
      float p[4][2];
      for (int k = 0; k < 4; k++) {
        const float* v = (const float*)(buf + 16 * (4 * q + k));
        p[k][0] = (float)(ox + v[0] * r->ts);
        p[k][1] = (float)(oy + v[1] * r->ts);
      }
      ov_vert(r, p[0][0], p[0][1], cc);
      ov_vert(r, p[1][0], p[1][1], cc);
      ov_vert(r, p[2][0], p[2][1], cc);
      ov_vert(r, p[0][0], p[0][1], cc);
      ov_vert(r, p[2][0], p[2][1], cc);
      ov_vert(r, p[3][0], p[3][1], cc);
    }
  }
}

static void line3(vwRender* r, const double* a, const double* b, vwColor c) {
  if (!list_reserve(&r->lines, 14)) return;
  float* o = r->lines.v + r->lines.n;
  const double* p[2] = {a, b};
  for (int k = 0; k < 2; k++) {
    o[7 * k] = (float)p[k][0];
    o[7 * k + 1] = (float)p[k][1];
    o[7 * k + 2] = (float)p[k][2];
    o[7 * k + 3] = c.r;
    o[7 * k + 4] = c.g;
    o[7 * k + 5] = c.b;
    o[7 * k + 6] = c.a;
  }
  r->lines.n += 14;
}

/* ---- set-up -----------------------------------------------------------------------------------
 */

static GLuint compile(GLenum type, const char* src) {
  GLuint s = glCreateShader(type);
  glShaderSource(s, 1, &src, NULL);
  glCompileShader(s);
  GLint ok = 0;
  glGetShaderiv(s, GL_COMPILE_STATUS, &ok);
  if (!ok) {
    char log[2048];
    glGetShaderInfoLog(s, sizeof log, NULL, log);
    fprintf(stderr, "cofem_view: shader compilation failed: %s\n", log);
    glDeleteShader(s);
    return 0;
  }
  return s;
}

static GLuint program(const char* vs, const char* fs) {
  GLuint v = compile(GL_VERTEX_SHADER, vs), f = compile(GL_FRAGMENT_SHADER, fs);
  if (!v || !f) return 0;
  GLuint p = glCreateProgram();
  glAttachShader(p, v);
  glAttachShader(p, f);
  glLinkProgram(p);
  glDeleteShader(v);
  glDeleteShader(f);
  GLint ok = 0;
  glGetProgramiv(p, GL_LINK_STATUS, &ok);
  if (!ok) {
    char log[2048];
    glGetProgramInfoLog(p, sizeof log, NULL, log);
    fprintf(stderr, "cofem_view: shader link failed: %s\n", log);
    glDeleteProgram(p);
    return 0;
  }
  return p;
}

/* attribute layout: (location, components) pairs over a float stride */
static void layout(GLuint vao, GLuint vbo, int stride, int n, const int* comps) {
  glBindVertexArray(vao);
  glBindBuffer(GL_ARRAY_BUFFER, vbo);
  size_t off = 0;
  for (int i = 0; i < n; i++) {
    glEnableVertexAttribArray((GLuint)i);
    glVertexAttribPointer((GLuint)i, comps[i], GL_FLOAT, GL_FALSE, stride * (GLsizei)sizeof(float),
                          (const void*)off);
    off += sizeof(float) * (size_t)comps[i];
  }
  glBindVertexArray(0);
}

vwRender* vw_render_create(void) {
  vwRender* r = calloc(1, sizeof *r);
  if (!r) return NULL;
  r->p_mesh = program(MESH_VS, MESH_FS);
  r->p_line = program(LINE_VS, COLOR_FS);
  r->p_ov = program(OVERLAY_VS, COLOR_FS);
  if (!r->p_mesh || !r->p_line || !r->p_ov) {
    vw_render_free(r);
    return NULL;
  }
  r->mesh_view = glGetUniformLocation(r->p_mesh, "view");
  r->mesh_proj = glGetUniformLocation(r->p_mesh, "proj");
  r->mesh_mode = glGetUniformLocation(r->p_mesh, "mode");
  r->mesh_vmax = glGetUniformLocation(r->p_mesh, "vmax");
  r->mesh_base = glGetUniformLocation(r->p_mesh, "base");
  r->mesh_alpha = glGetUniformLocation(r->p_mesh, "alpha");
  r->line_view = glGetUniformLocation(r->p_line, "view");
  r->line_proj = glGetUniformLocation(r->p_line, "proj");
  r->ov_screen = glGetUniformLocation(r->p_ov, "screen");
  glGenVertexArrays(3, r->vao);
  glGenBuffers(3, r->vbo);
  static const int mesh_l[3] = {3, 3, 1}, line_l[2] = {3, 4}, ov_l[2] = {2, 4};
  layout(r->vao[0], r->vbo[0], 7, 3, mesh_l);
  layout(r->vao[1], r->vbo[1], 7, 2, line_l);
  layout(r->vao[2], r->vbo[2], 6, 2, ov_l);
  r->lines.stride = 7;
  r->ov.stride = 6;
  return r;
}

void vw_render_free(vwRender* r) {
  if (!r) return;
  if (r->vao[0]) glDeleteVertexArrays(3, r->vao);
  if (r->vbo[0]) glDeleteBuffers(3, r->vbo);
  if (r->p_mesh) glDeleteProgram(r->p_mesh);
  if (r->p_line) glDeleteProgram(r->p_line);
  if (r->p_ov) glDeleteProgram(r->p_ov);
  free(r->lines.v);
  free(r->ov.v);
  free(r);
}

/* ---- frame ------------------------------------------------------------------------------------
 */

static double nice_step(double x) {
  double p = pow(10, floor(log10(x))), m = x / p;
  return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
}

static void fmt_force(double f, char* out, size_t n) {
  double a = fabs(f);
  if (a >= 1e6)
    snprintf(out, n, "%.3g MN", f * 1e-6);
  else if (a >= 1e3)
    snprintf(out, n, "%.3g kN", f * 1e-3);
  else
    snprintf(out, n, "%.3g N", f);
}

static void upload(GLuint vbo, const float* data, size_t nfloat) {
  glBindBuffer(GL_ARRAY_BUFFER, vbo);
  glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)(sizeof(float) * nfloat), data, GL_STREAM_DRAW);
}

/* screen position of a world point in framebuffer pixels */
static int proj_fb(const vwApp* a, const vwRender* r, const double* p, double* x, double* y) {
  if (!vw_project(&a->cam, p, x, y)) return 0;
  *x *= r->ui;
  *y *= r->ui;
  return 1;
}

static void draw_scene_marks(vwRender* r, const vwApp* a, int fbw) {
  const cfMesh* me = &a->scene.mesh;
  const double* x = vw_surface_x(a);
  /* supports: blue squares at the fixed nodes (seen through the part); outlines when removed */
  for (int s = 0; s < (a->mbs ? 0 : a->scene.nfix); s++) {
    const cfNodeSet* set = cf_mesh_find_nset(me, a->scene.fix[s].set);
    if (!set) continue;
    int step = set->count > 3000 ? set->count / 3000 : 1;
    for (int i = 0; i < set->count; i += step) {
      double sx, sy;
      if (!proj_fb(a, r, x + 3 * set->nodes[i], &sx, &sy)) continue;
      double h = 2.5 * r->ui;
      if (a->supports)
        ov_rect(r, (float)(sx - h), (float)(sy - h), (float)(sx + h), (float)(sy + h),
                (vwColor){0.15f, 0.45f, 1.0f, 0.9f});
      else
        ov_box_outline(r, sx, sy, h, 1.0 * r->ui, (vwColor){0.75f, 0.78f, 0.85f, 0.6f});
    }
  }
  /* loads: an arrow from the set's centroid along the force, labelled with its current value */
  for (int l = 0; l < (a->mbs ? 0 : a->scene.nload); l++) {
    const cfSceneLoad* ld = &a->scene.load[l];
    double p[3], q[3], dir[3], x0, y0, x1, y1;
    if (!vw_set_position(a, ld->set, p)) continue;
    double F = v3_norm(ld->force);
    if (!(F > 0)) continue;
    v3_scale(dir, ld->force, 1.0 / F);
    double fac = a->loads ? vw_load_factor(ld, a->d->t) : 0.0;
    v3_copy(q, p);
    v3_axpy(q, dir, 0.3 * a->L);
    if (!proj_fb(a, r, p, &x0, &y0) || !proj_fb(a, r, q, &x1, &y1)) continue;
    vwColor c =
        fac > 0 ? (vwColor){1.0f, 0.22f, 0.18f, 0.95f} : (vwColor){0.9f, 0.55f, 0.55f, 0.45f};
    ov_arrow(r, x0, y0, x1, y1, 3 * r->ui, c);
    char lab[64], fs[32];
    fmt_force(fac > 0 ? F * fac : F, fs, sizeof fs);
    snprintf(lab, sizeof lab, "load %s%s", fs, fac > 0 ? "" : " (off)");
    ov_text(r, x1 + 6 * r->ui, y1 - 6 * r->ui, lab, c);
  }
  /* the mouse spring */
  const vwPick* pk = &a->pick;
  if (pk->active) {
    double p[3] = {0, 0, 0}, x0, y0, x1, y1;
    for (int i = 0; i < 3; i++) v3_axpy(p, x + 3 * pk->node[i], pk->w[i]);
    if (proj_fb(a, r, p, &x0, &y0) && proj_fb(a, r, pk->target, &x1, &y1)) {
      vwColor c = {1.0f, 0.86f, 0.2f, 1.0f};
      ov_line(r, x0, y0, x1, y1, 2.5 * r->ui, c);
      double h = 4 * r->ui;
      ov_rect(r, (float)(x0 - h), (float)(y0 - h), (float)(x0 + h), (float)(y0 + h), c);
      ov_box_outline(r, x1, y1, h, 1.5 * r->ui, c);
      char lab[128], fs[32];
      fmt_force(v3_norm(pk->force), fs, sizeof fs);
      snprintf(lab, sizeof lab, "F = %s%s", fs,
               pk->k_used < 0.999 * vw_gain(a) ? " (gain capped)" : "");
      double lx = x1 + 10 * r->ui;
      if (lx + text_width(r, lab) > fbw - 130 * r->ui) lx = x1 - 10 * r->ui - text_width(r, lab);
      ov_text(r, lx, y1 + 6 * r->ui, lab, c);
    }
  }
}

static void draw_legend(vwRender* r, const vwApp* a, int fbw, int fbh) {
  if (a->color == VW_COLOR_PLAIN || (a->mbs && a->ntri == 0)) return;
  double scale;
  const char *unit, *title;
  vw_legend_unit(a->color, a->vmax, &scale, &unit, &title);
  if (a->mbs) title = "elastic |u|";
  const double ui = r->ui, lh = 12 * r->ts;
  double bw = 18 * ui, bh = 0.42 * fbh, x0 = fbw - 120 * ui, y0 = 0.14 * fbh;
  char t[64];
  snprintf(t, sizeof t, "%s [%s]", title, unit);
  double tw = text_width(r, t);
  double px0 = fmin(x0 - 10 * ui, fbw - tw - 20 * ui);
  ov_rect(r, (float)px0, (float)(y0 - 2 * lh - 4 * ui), (float)(fbw - 8 * ui),
          (float)(y0 + bh + 14 * ui), (vwColor){0, 0, 0, 0.35f});
  ov_text(r, px0 + 6 * ui, y0 - 1.8 * lh, t, (vwColor){1, 1, 1, 1});
  const int nseg = 64;
  for (int i = 0; i < nseg; i++) {
    float c0[3], c1[3];
    vw_colormap(1.0 - (double)i / nseg, c0);
    vw_colormap(1.0 - (double)(i + 1) / nseg, c1);
    ov_rect2(r, (float)x0, (float)(y0 + bh * i / nseg), (float)(x0 + bw),
             (float)(y0 + bh * (i + 1) / nseg), (vwColor){c0[0], c0[1], c0[2], 1},
             (vwColor){c1[0], c1[1], c1[2], 1});
  }
  for (int k = 0; k <= 4; k++) {
    double v = a->vmax * (4 - k) / 4.0, y = y0 + bh * k / 4.0;
    ov_rect(r, (float)(x0 + bw), (float)(y - 0.5 * ui), (float)(x0 + bw + 6 * ui),
            (float)(y + 0.5 * ui), (vwColor){1, 1, 1, 1});
    char s[32];
    snprintf(s, sizeof s, "%.3g", v * scale);
    ov_text(r, x0 + bw + 9 * ui, y - 0.35 * lh, s, (vwColor){1, 1, 1, 1});
  }
}

static void draw_text(vwRender* r, const vwApp* a, int fbw, int fbh, double now) {
  const double ui = r->ui, lh = 12 * r->ts, pad = 6 * ui;
  char l1[512], l2[512], warn[256];
  vw_status_text(a, l1, sizeof l1, l2, sizeof l2, warn, sizeof warn);
  /* status at the bottom: toggles above, timing below */
  ov_rect(r, 0, (float)(fbh - 2 * lh - 2 * pad), (float)fbw, (float)fbh, (vwColor){0, 0, 0, 0.6f});
  ov_text(r, pad, fbh - 2 * lh - pad + 0.15 * lh, l2, (vwColor){0.85f, 0.9f, 1.0f, 1});
  ov_text(r, pad, fbh - lh - pad + 0.15 * lh, l1, (vwColor){1, 1, 1, 1});
  /* title */
  char title[256];
  if (a->mbs)
    snprintf(title, sizeof title, "cofem viewer - %s (mechanism, %d flexible bodies, %d nodes)",
             a->name, a->mbs->nflex, a->mbs->nnode);
  else
    snprintf(title, sizeof title, "cofem viewer - %s (%d nodes, %d tets, %s)", a->name,
             a->m ? a->m->nnode : 0, a->m ? a->m->ntet : 0,
             a->sim ? cf_sim_backend_name(a->sim) : "-");
  ov_text(r, pad, pad, title, (vwColor){1, 1, 1, 0.95f});
  /* warning (slower than real time, paused, stopped) */
  double y = pad;
  if (warn[0]) {
    double w = text_width(r, warn) * 1.25;
    double x = 0.5 * (fbw - w);
    ov_rect(r, (float)(x - pad), (float)(y + 1.6 * lh - pad), (float)(x + w + pad),
            (float)(y + 2.9 * lh + pad), (vwColor){0, 0, 0, 0.6f});
    double ts = r->ts;
    r->ts *= 1.25;
    ov_text(r, x, y + 1.6 * lh, warn,
            a->error || a->diverged[0] ? (vwColor){1, 0.3f, 0.3f, 1} : (vwColor){1, 0.62f, 0.1f, 1});
    r->ts = ts;
    y += 1.6 * lh;
  }
  if (a->diverged[0] && a->paused) {
    /* the divergence message in full (step, time, what grew, what to try), wrapped to the
     * window under the headline */
    const double wmax = 0.72 * fbw; /* clear of the legend on the right */
    const char* p = a->diverged;
    double yl = y + 1.45 * lh + 2 * pad;
    char line[sizeof a->diverged];
    int nline = 0;
    while (*p && nline < 12) {
      int len = 0, cut = 0;
      for (;;) { /* the longest run of whole words that fits */
        int end = len;
        while (p[end] == ' ') end++;
        while (p[end] && p[end] != ' ') end++;
        memcpy(line, p, (size_t)end);
        line[end] = 0;
        if (cut > 0 && text_width(r, line) > wmax) break;
        cut = end;
        len = end;
        if (!p[end]) break;
      }
      memcpy(line, p, (size_t)cut);
      line[cut] = 0;
      double w = text_width(r, line);
      ov_rect(r, (float)(0.5 * (fbw - w) - pad), (float)(yl - 0.2 * lh), (float)(0.5 * (fbw + w) + pad),
              (float)(yl + 1.05 * lh), (vwColor){0, 0, 0, 0.6f});
      ov_text(r, 0.5 * (fbw - w), yl, line, (vwColor){1, 0.85f, 0.85f, 1});
      yl += 1.1 * lh;
      nline++;
      p += cut;
      while (*p == ' ') p++;
    }
  } else if (a->message[0] && now < a->message_until && !a->error) {
    double w = text_width(r, a->message);
    ov_text(r, 0.5 * (fbw - w), y + 1.8 * lh, a->message, (vwColor){1, 1, 1, 0.9f});
  }
  if (a->help) {
    static const char* help[] = {
        "Mouse",
        "  left drag on the part    pull it (spring to the cursor, in the view plane)",
        "  left drag elsewhere      orbit (ctrl + left: orbit anywhere)",
        "  right / middle / shift   pan",
        "  wheel                    zoom",
        "Keys",
        "  P, space   pause            R   reset",
        "  S          remove / restore the supports",
        "  G          gravity          L   scene loads",
        "  + / -      spring gain x2 / /2   (0: automatic)",
        "  C          colour: displacement, stress, plain",
        "  W          wireframe        F   camera follows the part",
        "  N, tab     next scene       1-9 scene number",
        "  V, home    reset the view   H   this help      Q, esc  quit",
    };
    int n = (int)(sizeof help / sizeof help[0]);
    double w = 0;
    for (int i = 0; i < n; i++) w = fmax(w, text_width(r, help[i]));
    double x0 = 2 * pad, y0 = 2.2 * lh;
    ov_rect(r, (float)(x0 - pad), (float)(y0 - pad), (float)(x0 + w + pad),
            (float)(y0 + n * lh * 1.05 + pad), (vwColor){0, 0, 0, 0.65f});
    for (int i = 0; i < n; i++)
      ov_text(r, x0, y0 + i * lh * 1.05, help[i],
              help[i][0] == ' ' ? (vwColor){1, 1, 1, 1} : (vwColor){1, 0.86f, 0.3f, 1});
  }
}

void vw_render_frame(vwRender* r, const vwApp* a, int fbw, int fbh, double ui, double now) {
  r->ui = ui;
  r->ts = (fbw >= 1100 ? 1.75 : fbw >= 760 ? 1.4 : 1.2) * (ui > 1 ? ui : 1);
  r->lines.n = 0;
  r->ov.n = 0;
  glViewport(0, 0, fbw, fbh);
  glClearColor(0.1f, 0.11f, 0.13f, 1);
  glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
  /* background gradient */
  glDisable(GL_BLEND);
  glDisable(GL_DEPTH_TEST);
  ov_rect2(r, 0, 0, (float)fbw, (float)fbh, (vwColor){0.30f, 0.33f, 0.38f, 1},
           (vwColor){0.07f, 0.08f, 0.10f, 1});
  glUseProgram(r->p_ov);
  glUniform2f(r->ov_screen, (float)fbw, (float)fbh);
  upload(r->vbo[2], r->ov.v, (size_t)r->ov.n);
  glBindVertexArray(r->vao[2]);
  glDrawArrays(GL_TRIANGLES, 0, r->ov.n / 6);
  r->ov.n = 0;
  if (!a->sim && !a->mbs) return;
  glEnable(GL_BLEND);
  glBlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA);

  float view[16], proj[16];
  vw_camera_matrices(&a->cam, 0.01, view, proj);
  glEnable(GL_DEPTH_TEST);
  glDepthFunc(GL_LEQUAL);
  /* ground grid under the rest shape */
  {
    double step = nice_step(a->L / 4), c[3];
    for (int i = 0; i < 3; i++) c[i] = 0.5 * (a->bmin[i] + a->bmax[i]);
    const int nl = 12;
    double z = a->bmin[2] - 1e-4 * a->L, x0 = floor(c[0] / step) * step,
           y0 = floor(c[1] / step) * step;
    for (int i = -nl; i <= nl; i++) {
      vwColor col = {0.75f, 0.8f, 0.9f, i == 0 ? 0.2f : 0.1f};
      double p[3] = {x0 + i * step, y0 - nl * step, z}, q[3] = {x0 + i * step, y0 + nl * step, z};
      line3(r, p, q, col);
      double p2[3] = {x0 - nl * step, y0 + i * step, z}, q2[3] = {x0 + nl * step, y0 + i * step, z};
      line3(r, p2, q2, col);
    }
  }
  /* surface */
  glUseProgram(r->p_mesh);
  glUniformMatrix4fv(r->mesh_view, 1, GL_FALSE, view);
  glUniformMatrix4fv(r->mesh_proj, 1, GL_FALSE, proj);
  glUniform1i(r->mesh_mode, a->color);
  glUniform1f(r->mesh_vmax, (float)(a->vmax > 0 ? a->vmax : 1));
  glUniform3f(r->mesh_base, 0.74f, 0.71f, 0.66f);
  glUniform1f(r->mesh_alpha, 1.0f);
  upload(r->vbo[0], a->vbuf, 21 * (size_t)a->ntri);
  glBindVertexArray(r->vao[0]);
  glEnable(GL_POLYGON_OFFSET_FILL);
  glPolygonOffset(1.0f, 1.0f);
  glDrawArrays(GL_TRIANGLES, 0, 3 * a->ntri);
  glDisable(GL_POLYGON_OFFSET_FILL);
  /* mechanisms: rigid bodies (translucent boxes, so that the flexible bodies show through),
   * then the joints (spheres, seen through the bodies) */
  if (a->mbs && a->nxtri > 0) {
    upload(r->vbo[0], a->xbuf, 21 * (size_t)a->nxtri);
    glUniform1i(r->mesh_mode, 2);
    glUniform3f(r->mesh_base, 0.62f, 0.68f, 0.78f);
    glUniform1f(r->mesh_alpha, 0.45f);
    glDepthMask(GL_FALSE);
    glDrawArrays(GL_TRIANGLES, 0, 3 * a->nxrigid);
    glDepthMask(GL_TRUE);
    glUniform1f(r->mesh_alpha, 1.0f);
    glDisable(GL_DEPTH_TEST);
    glUniform3f(r->mesh_base, 1.0f, 0.72f, 0.15f);
    glDrawArrays(GL_TRIANGLES, 3 * a->nxrigid, 3 * (a->nxtri - a->nxrigid));
    glEnable(GL_DEPTH_TEST);
  }
  /* wireframe and grid */
  if (a->wireframe) {
    for (int e = 0; e < a->nedge; e++) {
      double p[3] = {a->ebuf[6 * e], a->ebuf[6 * e + 1], a->ebuf[6 * e + 2]};
      double q[3] = {a->ebuf[6 * e + 3], a->ebuf[6 * e + 4], a->ebuf[6 * e + 5]};
      line3(r, p, q, (vwColor){0.05f, 0.05f, 0.08f, 0.55f});
    }
  }
  glUseProgram(r->p_line);
  glUniformMatrix4fv(r->line_view, 1, GL_FALSE, view);
  glUniformMatrix4fv(r->line_proj, 1, GL_FALSE, proj);
  upload(r->vbo[1], r->lines.v, (size_t)r->lines.n);
  glBindVertexArray(r->vao[1]);
  glDepthMask(GL_FALSE);
  glDrawArrays(GL_LINES, 0, r->lines.n / 7);
  glDepthMask(GL_TRUE);
  /* overlay */
  glDisable(GL_DEPTH_TEST);
  draw_scene_marks(r, a, fbw);
  draw_legend(r, a, fbw, fbh);
  draw_text(r, a, fbw, fbh, now);
  glUseProgram(r->p_ov);
  upload(r->vbo[2], r->ov.v, (size_t)r->ov.n);
  glBindVertexArray(r->vao[2]);
  glDrawArrays(GL_TRIANGLES, 0, r->ov.n / 6);
  glBindVertexArray(0);
}

int vw_render_screenshot(const char* path, int fbw, int fbh) {
  unsigned char* px = malloc((size_t)fbw * fbh * 3);
  unsigned char* flip = malloc((size_t)fbw * fbh * 3);
  if (!px || !flip) {
    free(px);
    free(flip);
    return -1;
  }
  glFinish();
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadBuffer(GL_BACK);
  glReadPixels(0, 0, fbw, fbh, GL_RGB, GL_UNSIGNED_BYTE, px);
  for (int y = 0; y < fbh; y++)
    memcpy(flip + (size_t)y * fbw * 3, px + (size_t)(fbh - 1 - y) * fbw * 3, (size_t)fbw * 3);
  int ok = stbi_write_png(path, fbw, fbh, 3, flip, fbw * 3);
  free(px);
  free(flip);
  return ok ? 0 : -1;
}
