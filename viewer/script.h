/* Scripted runs: input events read from a file, each at a frame number, so that the viewer can
 * be driven headless (tests, screenshots). Format, one event per line ('#' starts a comment):
 *
 *   frame N [EVENT]        the following events happen at frame N (absolute, non-decreasing)
 *   wait N                 ... N frames after the previous ones
 *   drag_start X Y         cursor to (X, Y) (window pixels, origin top left) and left button down:
 *                          on the part this picks a point and pulls it, elsewhere it orbits
 *   drag_start @SET        the same at the screen position of node set SET (its mean position)
 *   drag_to X Y            cursor to (X, Y), button held
 *   drag_by DX DY          cursor to the drag start + (DX, DY)
 *   drag_end               left button up
 *   press BUTTON [X Y]     button (left, right, middle) down, optionally after moving there
 *   release BUTTON
 *   move X Y               cursor to (X, Y)
 *   scroll DY              wheel (positive: zoom in)
 *   key [shift+|ctrl+]K    a key press: a letter or digit, + - = [ ] or SPACE, TAB, ESC, F1, HOME
 *   screenshot FILE.png    the frame as drawn at the end of this frame
 *   report [LABEL]         one line "report label=... key=value ..." on stdout, at the end of
 *                          this frame (state after its steps)
 *   quit                   exit after this frame
 */
#ifndef COFEM_VIEWER_SCRIPT_H
#define COFEM_VIEWER_SCRIPT_H

enum vwEventType {
  VW_EV_DRAG_START,
  VW_EV_DRAG_TO,
  VW_EV_DRAG_BY,
  VW_EV_DRAG_END,
  VW_EV_PRESS,
  VW_EV_RELEASE,
  VW_EV_MOVE,
  VW_EV_SCROLL,
  VW_EV_KEY,
  VW_EV_SCREENSHOT,
  VW_EV_REPORT,
  VW_EV_QUIT
};

typedef struct vwEvent {
  long frame;
  int type;
  int line;
  int button, key, mods, has_xy;
  double x, y;
  char arg[512]; /* file, label or @set */
} vwEvent;

typedef struct vwScript {
  vwEvent* ev;
  int n, next;
} vwScript;

/* Parse; on error returns -1 with a message naming the file and line in err. */
int vw_script_load(const char* path, vwScript* s, char* err, int nerr);
void vw_script_free(vwScript* s);
#endif
