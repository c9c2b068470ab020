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
#include "cofem/mbs.h"
#include "cofem/cuda.h"
#endif
