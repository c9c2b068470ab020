/* libFuzzer target: Gmsh .msh reader, whole files (2.2 and 4.1, ASCII and binary: the header
 * decides). See fuzz_common.h for what is checked. */
#include "fuzz_common.h"

static int cff_msh_one(const uint8_t* data, size_t size) {
  char path[600];
  if (cff_write("input.msh", data, size, path, sizeof path)) return 0;
  cff_mesh_file(path);
  return 0;
}

#ifndef CFF_NO_ENTRY
int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) { return cff_msh_one(data, size); }
#endif
