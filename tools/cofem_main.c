/* cofem command-line tool (placeholder until the commands land). */
#include <stdio.h>
#include "cofem/status.h"
int main(int argc, char** argv) {
  (void)argv;
  fprintf(stderr, "usage: cofem run|static|info ...\n");
  return argc > 1 ? 2 : 2;
}
