/* cofem: co-rotational FEM for flexible multibody dynamics. Umbrella header. */
#ifndef COFEM_COFEM_H
#define COFEM_COFEM_H
#include "cofem/status.h"
#include "cofem/mesh.h"
#include "cofem/mesh_box.h"
#include "cofem/fem.h"
#include "cofem/static.h"
#include "cofem/scene.h"
#include "cofem/sim.h"
#include "cofem/output.h"
#include "cofem/modal.h"
#include "cofem/reduce.h"
#include "cofem/session.h"
#include "cofem/mbs.h"
#include "cofem/cuda.h"

/* Version of the headers (CMakeLists.txt reads the project version from these lines). The shared
 * library's SONAME is libcofem.so.MAJOR.MINOR while MAJOR is 0 (every minor release may change
 * the ABI), libcofem.so.MAJOR after. */
#define COFEM_VERSION_MAJOR 0
#define COFEM_VERSION_MINOR 1
#define COFEM_VERSION_PATCH 0
#define COFEM_VERSION_STRING "0.1.0"
/* One number to compare: MAJOR * 10000 + MINOR * 100 + PATCH. */
#define COFEM_API_VERSION (COFEM_VERSION_MAJOR * 10000 + COFEM_VERSION_MINOR * 100 + COFEM_VERSION_PATCH)

#ifdef __cplusplus
extern "C" {
#endif

/* Version of the library linked (COFEM_VERSION_STRING of the build), e.g. "0.1.0". */
const char* cf_version(void);
/* Same as COFEM_API_VERSION of the build: compare with the headers' to detect a mismatch. */
int cf_api_version(void);
/* The folder of the installed demo scenes and meshes (scenes/, meshes/): $COFEM_DATA when set and
 * not empty, else the install's share/cofem (fixed at build time; it exists once installed). */
const char* cf_data_dir(void);

#ifdef __cplusplus
}
#endif
#endif
