/* SPDX-License-Identifier: Apache-2.0 */
/* Internal to src/ff: the run-time choice of multiplication back end. */
#ifndef CUZK_FF_INTERNAL_H
#define CUZK_FF_INTERNAL_H

#include <stdint.h>

/* Non-zero when the x86-64 MULX/ADX routines are in use (set from CPUID at start-up,
 * changed by cuzk_ff_set_impl). */
extern int cuzk_ff_adx_enabled_;

/* x86-64 MULX/ADX Montgomery routines (src/ff/ff_x86.c); same contracts as the portable
 * ones: inputs and output in [0, modulus). */
void cuzk_fp_mul_adx_(uint64_t r[6], const uint64_t a[6], const uint64_t b[6]);
void cuzk_fp_sqr_adx_(uint64_t r[6], const uint64_t a[6]);
/* r = a*b, all 768 bits (any 384-bit a, b); r = t/2^384 mod p for t < p*2^384. */
void cuzk_fp_mul_wide_adx_(uint64_t r[12], const uint64_t a[6], const uint64_t b[6]);
void cuzk_fp_redc_adx_(uint64_t r[6], const uint64_t t[12]);
void cuzk_fr_mul_adx_(uint64_t r[4], const uint64_t a[4], const uint64_t b[4]);
void cuzk_fr_sqr_adx_(uint64_t r[4], const uint64_t a[4]);

/* Fp addition and subtraction in x86-64 assembly (src/ff/ff_x86.c): any x86-64 CPU. */
#if defined(__x86_64__) && defined(__ELF__)
#define CUZK_FF_X86_ASM 1
void cuzk_fp_add_x86_(uint64_t r[6], const uint64_t a[6], const uint64_t b[6]);
void cuzk_fp_sub_x86_(uint64_t r[6], const uint64_t a[6], const uint64_t b[6]);
#endif

#endif
