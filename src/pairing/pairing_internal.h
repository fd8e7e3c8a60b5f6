/* SPDX-License-Identifier: Apache-2.0 */
/* Internal to src/pairing (exposed for the unit tests): pieces of the optimal ate pairing. */
#ifndef CUZK_PAIRING_INTERNAL_H
#define CUZK_PAIRING_INTERNAL_H

#include "cuzk/pairing.h"

/* |x| for the BLS parameter x = -0xd201000000010000 */
#define CUZK_BLS_X_ABS 0xd201000000010000ULL

/* r = a^2 for a in the cyclotomic subgroup (a^(p^4 - p^2 + 1) = 1), Granger-Scott. */
void cuzk_fp12_cyclotomic_sqr_(cuzk_fp12 *r, const cuzk_fp12 *a);
/* r = a^x (x negative) for a in the cyclotomic subgroup. */
void cuzk_fp12_cyclotomic_exp_x_(cuzk_fp12 *r, const cuzk_fp12 *a);
/* r = f * (c0 + c1 v + c4 v w), the sparse shape of a line evaluation. */
void cuzk_fp12_mul_by_014_(cuzk_fp12 *r, const cuzk_fp12 *f, const cuzk_fp2 *c0,
                           const cuzk_fp2 *c1, const cuzk_fp2 *c4);

#endif
