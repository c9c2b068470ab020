/* Scripted input events (see script.h). */
#include "script.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "app.h"
#include "cofem/status.h"

static int parse_long(const char* s, long* out) {
  char* end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || end == s || *end) return 0;
  *out = v;
  return 1;
}

/* a finite number, the whole token (nan/inf would become a cursor position) */
static int parse_num(const char* s, double* out) {
  char* end;
  double v = strtod(s, &end);
  if (end == s || *end || !isfinite(v)) return 0;
  *out = v;
  return 1;
}

static int parse_button(const char* s) {
  if (!strcasecmp(s, "left")) return VW_BUTTON_LEFT;
  if (!strcasecmp(s, "right")) return VW_BUTTON_RIGHT;
  if (!strcasecmp(s, "middle")) return VW_BUTTON_MIDDLE;
  return -1;
}

static int parse_key(const char* s, int* mods) {
  *mods = 0;
  for (;;) {
    if (!strncasecmp(s, "shift+", 6) && s[6]) {
      *mods |= VW_MOD_SHIFT;
      s += 6;
    } else if (!strncasecmp(s, "ctrl+", 5) && s[5]) {
      *mods |= VW_MOD_CTRL;
      s += 5;
    } else {
      break;
    }
  }
  if (strlen(s) == 1) {
    int c = toupper((unsigned char)*s);
    if (c == '+') return VW_KEY_PLUS;
    if (c == '-') return VW_KEY_MINUS;
    if (isalnum(c) || strchr("=[] ", c)) return c;
    return -1;
  }
  static const struct {
    const char* name;
    int key;
  } named[] = {
      {"SPACE", ' '},    {"TAB", VW_KEY_TAB},   {"ESC", VW_KEY_ESCAPE}, {"ESCAPE", VW_KEY_ESCAPE},
      {"F1", VW_KEY_F1}, {"HOME", VW_KEY_HOME}, {"PLUS", VW_KEY_PLUS},  {"MINUS", VW_KEY_MINUS}};
  for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
    if (!strcasecmp(s, named[i].name)) return named[i].key;
  return -1;
}

static int add(vwScript* s, const vwEvent* e) {
  vwEvent* ev = realloc(s->ev, sizeof(vwEvent) * (size_t)(s->n + 1));
  if (!ev) return 0;
  s->ev = ev;
  s->ev[s->n++] = *e;
  return 1;
}

/* Scripts are small text files: a FIFO or device is refused before it is opened (it could block
 * or never end), and so is a file above VW_SCRIPT_MAX_BYTES; a NUL byte, or more words than an
 * event takes, is an error naming the line. */
#define VW_SCRIPT_MAX_BYTES (16LL << 20)

#define FAIL(...)                                                                   \
  do {                                                                              \
    int k_ = snprintf(err, (size_t)nerr, "%s:%d: ", path, lineno);                  \
    if (k_ >= 0 && k_ < nerr) snprintf(err + k_, (size_t)(nerr - k_), __VA_ARGS__); \
    free(text);                                                                     \
    vw_script_free(s);                                                              \
    return -1;                                                                      \
  } while (0)

int vw_script_load(const char* path, vwScript* s, char* err, int nerr) {
  memset(s, 0, sizeof *s);
  long long size = 0;
  char* text = NULL;
  int lineno = 0;
  if (cf_check_regular_file(path, "the script", &size) < 0 ||
      (size <= VW_SCRIPT_MAX_BYTES && cf_read_regular_file(path, "the script", &text, NULL) < 0)) {
    snprintf(err, (size_t)nerr, "%s", cf_last_error());
    return -1;
  }
  if (size > VW_SCRIPT_MAX_BYTES) {
    snprintf(err, (size_t)nerr, "%s: %lld bytes: a script has at most %lld", path, size, VW_SCRIPT_MAX_BYTES);
    return -1;
  }
  long frame = 0;
  for (char *line = text, *next; line && *line; line = next) {
    lineno++;
    next = strchr(line, '\n');
    if (next) *next++ = 0;
    else if (line + strlen(line) < text + size) FAIL("a NUL byte in the line"); /* the last line */
    if (next && line + strlen(line) + 1 < next) FAIL("a NUL byte in the line");
    char* hash = strchr(line, '#');
    if (hash) *hash = 0;
    char* tok[8];
    int nt = 0;
    for (char* p = strtok(line, " \t\r\n"); p; p = strtok(NULL, " \t\r\n")) {
      if (nt == 8) FAIL("more than 7 words in one event");
      tok[nt++] = p;
    }
    if (nt == 0) continue;
    int i = 0;
    if (!strcmp(tok[0], "frame") || !strcmp(tok[0], "wait")) {
      long v;
      if (nt < 2 || !parse_long(tok[1], &v) || v < 0) FAIL("%s needs a frame count >= 0", tok[0]);
      if (!strcmp(tok[0], "wait")) {
        if (nt > 2) FAIL("wait takes one number");
        frame += v;
        continue;
      }
      if (v < frame) FAIL("frame %ld comes after frame %ld (frames must not decrease)", v, frame);
      frame = v;
      i = 2;
      if (nt == 2) continue;
    }
    vwEvent e;
    memset(&e, 0, sizeof e);
    e.frame = frame;
    e.line = lineno;
    const char* cmd = tok[i];
    int na = nt - i - 1;
    char** arg = tok + i + 1;
    if (!strcmp(cmd, "drag_start")) {
      e.type = VW_EV_DRAG_START;
      if (na == 1 && arg[0][0] == '@' && arg[0][1]) {
        if (strlen(arg[0] + 1) >= sizeof e.arg) FAIL("the set name is longer than %d characters", (int)sizeof e.arg - 1);
        snprintf(e.arg, sizeof e.arg, "%s", arg[0] + 1);
      } else if (na == 2 && parse_num(arg[0], &e.x) && parse_num(arg[1], &e.y)) {
        e.has_xy = 1;
      } else {
        FAIL("drag_start needs X Y or @SET");
      }
    } else if (!strcmp(cmd, "drag_to") || !strcmp(cmd, "drag_by") || !strcmp(cmd, "move")) {
      e.type = !strcmp(cmd, "drag_to")   ? VW_EV_DRAG_TO
               : !strcmp(cmd, "drag_by") ? VW_EV_DRAG_BY
                                         : VW_EV_MOVE;
      if (na != 2 || !parse_num(arg[0], &e.x) || !parse_num(arg[1], &e.y))
        FAIL("%s needs two numbers", cmd);
      e.has_xy = 1;
    } else if (!strcmp(cmd, "drag_end")) {
      e.type = VW_EV_DRAG_END;
      if (na) FAIL("drag_end takes no arguments");
    } else if (!strcmp(cmd, "press") || !strcmp(cmd, "release")) {
      e.type = !strcmp(cmd, "press") ? VW_EV_PRESS : VW_EV_RELEASE;
      if (na < 1 || (e.button = parse_button(arg[0])) < 0)
        FAIL("%s needs a button: left, right or middle", cmd);
      if (na == 3 && parse_num(arg[1], &e.x) && parse_num(arg[2], &e.y))
        e.has_xy = 1;
      else if (na != 1)
        FAIL("%s BUTTON [X Y]", cmd);
    } else if (!strcmp(cmd, "scroll")) {
      e.type = VW_EV_SCROLL;
      if (na != 1 || !parse_num(arg[0], &e.y)) FAIL("scroll needs a number");
    } else if (!strcmp(cmd, "key")) {
      e.type = VW_EV_KEY;
      if (na != 1 || (e.key = parse_key(arg[0], &e.mods)) < 0)
        FAIL("unknown key \"%s\"", na ? arg[0] : "");
    } else if (!strcmp(cmd, "screenshot")) {
      e.type = VW_EV_SCREENSHOT;
      if (na != 1) FAIL("screenshot needs a file name");
      if (strlen(arg[0]) >= sizeof e.arg) FAIL("the file name is longer than %d characters", (int)sizeof e.arg - 1);
      snprintf(e.arg, sizeof e.arg, "%s", arg[0]);
    } else if (!strcmp(cmd, "report")) {
      e.type = VW_EV_REPORT;
      if (na > 1) FAIL("report takes at most a label");
      if (na && strlen(arg[0]) >= sizeof e.arg) FAIL("the label is longer than %d characters", (int)sizeof e.arg - 1);
      snprintf(e.arg, sizeof e.arg, "%s", na ? arg[0] : "-");
    } else if (!strcmp(cmd, "quit")) {
      e.type = VW_EV_QUIT;
      if (na) FAIL("quit takes no arguments");
    } else {
      FAIL("unknown event \"%s\"", cmd);
    }
    if (!add(s, &e)) FAIL("out of memory");
  }
  free(text);
  return 0;
}

void vw_script_free(vwScript* s) {
  free(s->ev);
  s->ev = NULL;
  s->n = s->next = 0;
}
