/* SPDX-License-Identifier: Apache-2.0 */
/* Internal to src/ec: the endomorphisms behind the fast subgroup checks (exposed for tests). */
#ifndef CUZK_EC_INTERNAL_H
#define CUZK_EC_INTERNAL_H

#include "cuzk/ec.h"

/* G1: sigma(x, y) = (beta x, y) with beta a primitive cube root of unity in Fp, the one for
 * which sigma acts on G1 as multiplication by -x^2 (x = -0xd201000000010000). */
void cuzk_g1_sigma_(cuzk_g1_affine *r, const cuzk_g1_affine *a);
/* The cube root of unity beta used by sigma (Montgomery form). */
void cuzk_g1_beta_(cuzk_fp *r);
/* G2: psi = twist^-1 o Frobenius o twist, psi(x, y) = (conj(x) cx, conj(y) cy) with
 * cx = (1+u)^((1-p)/3), cy = (1+u)^((1-p)/2). On G2, psi acts as multiplication by x. */
void cuzk_g2_psi_(cuzk_g2_affine *r, const cuzk_g2_affine *a);
void cuzk_g2_psi_consts_(cuzk_fp2 *cx, cuzk_fp2 *cy);

#endif
