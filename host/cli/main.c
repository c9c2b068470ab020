#define _POSIX_C_SOURCE 200809L
/* cofem: command-line tool.
 *   cofem run SCENE [--steps N] [--end T] [--out DIR] [--cold] [--backend cpu|cuda|auto] [--quiet]
 *   cofem static SCENE [--out DIR] [--increments N] [--tangent consistent|KR]
 *   cofem info MESH
 *   cofem reduce SCENE ...   cofem accuracy ...
 * Exit status: 0 success, 1 error (message on stderr), 2 usage. One file per subcommand: cmd_*.c. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "cofem/cofem.h"

int main(int argc, char** argv) {
  /* past a file-size limit (ulimit -f) a write fails with EFBIG, which the writers report naming the
   * file, keeping what was whole; SIGXFSZ's default would kill the run silently, .tmp files left */
  signal(SIGXFSZ, SIG_IGN);
  if (argc < 2) return cf_cli_usage();
  if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
    printf("cofem %s\n", COFEM_VERSION_STRING);
    return 0;
  }
  if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
    cf_cli_print_usage(stdout, NULL);
    return 0;
  }
  if (!cf_cli_known_command(argv[1])) {
    fprintf(stderr, "cofem: error: unknown %s '%s'\n", argv[1][0] == '-' ? "option" : "command", argv[1]);
    return cf_cli_usage();
  }
  cf_cli_command = argv[1];
  for (int i = 2; i < argc; i++) /* COMMAND --help: that command's options */
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      cf_cli_print_usage(stdout, argv[1]);
      return 0;
    }
  if (!strcmp(argv[1], "run")) return cf_cmd_run(argc, argv);
  if (!strcmp(argv[1], "reduce")) return cf_cmd_reduce(argc, argv);
  if (!strcmp(argv[1], "static")) return cf_cmd_static(argc, argv);
  if (!strcmp(argv[1], "info")) return cf_cmd_info(argc, argv);
  return cf_cmd_accuracy(argc, argv);
}
