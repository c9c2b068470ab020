/* libFuzzer target: Abaqus/CalculiX .inp reader. See fuzz_common.h for what is checked. */
#include "fuzz_common.h"

static int cff_inp_one(const uint8_t* data, size_t size) {
  char path[600];
  if (cff_write("input.inp", data, size, path, sizeof path)) return 0;
  cff_mesh_file(path);
  return 0;
}

#ifndef CFF_NO_ENTRY
int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) { return cff_inp_one(data, size); }
#endif
