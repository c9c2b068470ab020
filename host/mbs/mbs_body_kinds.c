/* The table of body kinds the generic multibody code loops over (mbs_body_kind.h). */
#include "mbs/mbs_body_kind.h"

/* modal before FE: the FE bodies' blocks follow the modal amplitude blocks */
const cfMbsBodyKind* const cf_mbs__body_kinds[] = {&cf_mbs__modal_kind, &cf_mbs__fe_kind};
const int cf_mbs__nbody_kinds = (int)(sizeof cf_mbs__body_kinds / sizeof cf_mbs__body_kinds[0]);
