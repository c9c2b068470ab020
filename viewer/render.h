/* Drawing with OpenGL 3.3 core: the lit surface coloured by a scalar, the wireframe, a ground
 * grid, the supports, loads and the mouse spring, the legend and the status text. The only file
 * of the project besides main.c that calls OpenGL. */
#ifndef COFEM_VIEWER_RENDER_H
#define COFEM_VIEWER_RENDER_H
#include "app.h"

typedef struct vwRender vwRender;

/* Needs a current OpenGL 3.3 core context with GLEW initialised. NULL on failure (message on
 * stderr). */
vwRender* vw_render_create(void);
void vw_render_free(vwRender* r);
/* Draw one frame into the current framebuffer of size fbw x fbh; ui: pixels per cursor unit. */
void vw_render_frame(vwRender* r, const vwApp* a, int fbw, int fbh, double ui, double now);
/* Read the back buffer and write it as PNG (0 on success). */
int vw_render_screenshot(const char* path, int fbw, int fbh);
#endif
