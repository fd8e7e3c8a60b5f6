/* SPDX-License-Identifier: Apache-2.0 */
/* Test helpers between GMP integers and the field's limbs (header-only, beside test.h). */
#ifndef CUZK_TEST_GMP_H
#define CUZK_TEST_GMP_H

#include <gmp.h>
#include <stdint.h>
#include <string.h>

#include "cuzk/ff.h"

/* p, the modulus of Fp */
static inline void test_mpz_fp_modulus(mpz_t p)
{
    mpz_import(p, CUZK_FP_LIMBS, -1, sizeof(uint64_t), 0, 0, CUZK_FP_MODULUS.l);
}

/* r, the order of the groups (the modulus of Fr) */
static inline void test_mpz_fr_modulus(mpz_t r)
{
    mpz_import(r, CUZK_FR_LIMBS, -1, sizeof(uint64_t), 0, 0, CUZK_FR_MODULUS.l);
}

/* z >= 0 as little-endian limbs in out[0..max) (zero padded); returns how many limbs z
 * needs, at least 1. */
static inline size_t test_mpz_to_limbs(uint64_t *out, size_t max, const mpz_t z)
{
    size_t n = 0;
    memset(out, 0, max * sizeof *out);
    mpz_export(out, &n, -1, sizeof(uint64_t), 0, 0, z);
    return n ? n : 1;
}

#endif
