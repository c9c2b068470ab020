/* libFuzzer target: the binary .msh 4.1 reader. The input is what follows a fixed binary header
 * ("$MeshFormat 4.1 1 8", the endianness marker, "$EndMeshFormat"), so that every mutation lands
 * in the binary sections ($PhysicalNames, $Entities, $Nodes, $Elements). fuzz_msh covers the
 * header itself. */
#include "fuzz_common.h"

static int cff_msh_bin_one(const uint8_t* data, size_t size) {
  static const char kHead[] = "$MeshFormat\n4.1 1 8\n\x01\x00\x00\x00\n$EndMeshFormat\n";
  const size_t nh = sizeof kHead - 1;
  uint8_t* buf = malloc(nh + size + 1);
  if (!buf) return 0;
  memcpy(buf, kHead, nh);
  if (size) memcpy(buf + nh, data, size);
  char path[600];
  int st = cff_write("input.msh", buf, nh + size, path, sizeof path);
  free(buf);
  if (!st) cff_mesh_file(path);
  return 0;
}

#ifndef CFF_NO_ENTRY
int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) { return cff_msh_bin_one(data, size); }
#endif
