/* SPDX-License-Identifier: Apache-2.0 */
/* Pippenger MSM, batch addition and split MSM over G2 (template in msm_impl.h). */
#include "cuzk/msm.h"
#include "ff/ff_inline.h"

#define MSM_G g2
#define MSM_AFF cuzk_g2_affine
#define MSM_JAC cuzk_g2_jac
#define MSM_XYZZ cuzk_g2_xyzz
#define MSM_F cuzk_fp2
#define MSM_FF(name) cuzk_fp2i_##name
#define MSM_F_INV cuzk_fp2_inv
#define MSM_INV_COST 25.0 /* Fp2 inversion ~ 22 G2 mixed additions (measured) */
#include "msm/msm_impl.h"
