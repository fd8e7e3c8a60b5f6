/* Pippenger MSM, batch addition and split MSM over G2 (template in msm_impl.h). */
#include "cuzk/msm.h"

#define MSM_G g2
#define MSM_AFF cuzk_g2_affine
#define MSM_JAC cuzk_g2_jac
#define MSM_XYZZ cuzk_g2_xyzz
#include "msm/msm_impl.h"
