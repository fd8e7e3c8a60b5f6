/* Pippenger MSM, batch addition and split MSM over G1 (template in msm_impl.h). */
#include "cuzk/msm.h"

#define MSM_G g1
#define MSM_AFF cuzk_g1_affine
#define MSM_JAC cuzk_g1_jac
#define MSM_XYZZ cuzk_g1_xyzz
#include "msm/msm_impl.h"
