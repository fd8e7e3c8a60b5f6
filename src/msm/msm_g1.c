/* SPDX-License-Identifier: Apache-2.0 */
/* Pippenger MSM, batch addition and split MSM over G1 (template in msm_impl.h). */
#include "cuzk/msm.h"
#include "ff/ff_inline.h"

#define MSM_G g1
#define MSM_AFF cuzk_g1_affine
#define MSM_JAC cuzk_g1_jac
#define MSM_XYZZ cuzk_g1_xyzz
#define MSM_F cuzk_fp
#define MSM_FF(name) cuzk_fpi_##name
#define MSM_F_INV cuzk_fp_inv_var
#define MSM_INV_COST 50.0 /* Fp inversion ~ 56 G1 mixed additions (measured) */
#include "msm/msm_impl.h"
