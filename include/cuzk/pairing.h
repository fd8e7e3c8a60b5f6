/* SPDX-License-Identifier: Apache-2.0 */
/* Optimal ate pairing on BLS12-381 (verification side; variable time, public inputs). */
#ifndef CUZK_PAIRING_H
#define CUZK_PAIRING_H

#include "cuzk/ec.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)   /* the public API: exported from libcuzk.so */

/* f = Miller loop of (p, q), before the final exponentiation. Infinity gives 1. */
void cuzk_miller_loop(cuzk_fp12 *r, const cuzk_g1_affine *p, const cuzk_g2_affine *q);
/* r = a^(3 (p^12 - 1) / r): the cube of the textbook exponent (Hayashida-Hayasaka-Teruya
 * hard part), as zkcrypto/bls12_381, noble-curves and snarkjs compute it, so GT values
 * (e.g. snarkjs's vk_alphabeta_12) agree; 3 is coprime to r, so bilinearity is kept. */
void cuzk_final_exp(cuzk_fp12 *r, const cuzk_fp12 *a);
/* r = e(p, q) */
void cuzk_pairing(cuzk_fp12 *r, const cuzk_g1_affine *p, const cuzk_g2_affine *q);
/* r = prod e(p[i], q[i]) with shared Miller-loop squarings and one final exponentiation. */
void cuzk_multi_pairing(cuzk_fp12 *r, const cuzk_g1_affine *p, const cuzk_g2_affine *q, size_t n);
/* true iff prod e(p[i], q[i]) = 1 */
bool cuzk_pairing_product_is_one(const cuzk_g1_affine *p, const cuzk_g2_affine *q, size_t n);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
