/* SPDX-License-Identifier: Apache-2.0 */
/* G1: y^2 = x^3 + 4 over Fp. Formulas from ec_impl.h; generator and subgroup check here. */
#include "cuzk/ec.h"
#include "ff/ff_inline.h"
#include "ec/ec_internal.h"

#define EC_G g1
#define EC_F cuzk_fp
#define EC_FF(op) cuzk_fpi_##op
#define EC_AFF cuzk_g1_affine
#define EC_JAC cuzk_g1_jac
#define EC_XYZZ cuzk_g1_xyzz

/* r = 4a (b = 4) */
static inline void ec_mul_by_b(cuzk_fp *r, const cuzk_fp *a)
{
    cuzk_fp_dbl(r, a);
    cuzk_fp_dbl(r, r);
}

#include "ec/ec_impl.h"

/* The standard generator (IETF draft-irtf-cfrg-pairing-friendly-curves, section 4.2.1;
 * zcash bls12_381 "fixed generators"), Montgomery form (v*2^384 mod p) of
 * x = 0x17f1d3a73197d7942695638c4fa9ac0fc3688c4f9774b905a14e3a3f171bac586c55e83ff97a1aeffb3af00adb22c6bb
 * y = 0x08b3f481e3aaa0f1a09e30ed741d8ae4fcf5e095d5d00af600db18cb2c04b3edd03cc744a2888ae40caa232946c5e7e1
 * tests/unit/test_ec.c checks these against the hex above, the curve, and r*G = O. */
static const cuzk_g1_affine G1_GENERATOR = {
    {{0x5cb38790fd530c16ULL, 0x7817fc679976fff5ULL, 0x154f95c7143ba1c1ULL,
      0xf0ae6acdf3d0e747ULL, 0xedce6ecc21dbf440ULL, 0x120177419e0bfb75ULL}},
    {{0xbaac93d50ce72271ULL, 0x8c22631a7918fd8eULL, 0xdd595f13570725ceULL,
      0x51ac582950405194ULL, 0x0e1c8c3fad0059c0ULL, 0x0bbc3efc5008a26aULL}},
};

/* beta*2^384 mod p for beta = 0x5f19672fdf76ce51ba69c6076a0f77eaddb3a93be6f89688de17d813620a00022e01fffffffefffe,
 * the primitive cube root of unity (of the two) with sigma(G) = -x^2 G;
 * test_ec.c checks beta^3 = 1, beta != 1 and sigma(G) = -x^2 G. */
static const cuzk_fp G1_BETA = {{0x30f1361b798a64e8ULL, 0xf3b8ddab7ece5a2aULL,
                                 0x16a8ca3ac61577f7ULL, 0xc26a2ff874fd029bULL,
                                 0x3636b76660701c6eULL, 0x051ba4ab241b6160ULL}};

void cuzk_g1_generator(cuzk_g1_affine *r)
{
    *r = G1_GENERATOR;
}

void cuzk_g1_beta_(cuzk_fp *r)
{
    *r = G1_BETA;
}

void cuzk_g1_sigma_(cuzk_g1_affine *r, const cuzk_g1_affine *a)
{
    cuzk_fp_mul(&r->x, &a->x, &G1_BETA);
    r->y = a->y;
}

bool cuzk_g1_affine_in_subgroup(const cuzk_g1_affine *a)
{
    /* Scott, "A note on group membership tests for G1, G2 and GT on BLS pairing-friendly
     * curves" (ePrint 2021/1130): a point P of E(Fp) lies in G1 iff sigma(P) = -x^2 P.
     * Checked as sigma(P) + |x|(|x| P) = O. Variable time (public points). */
    if (!cuzk_g1_affine_is_on_curve(a))
        return false;
    if (cuzk_g1_affine_is_inf(a))
        return true;
    cuzk_g1_jac p, q;
    cuzk_g1_affine s;
    cuzk_g1_jac_from_affine(&p, a);
    ec_mul_abs_x_var(&q, &p);
    ec_mul_abs_x_var(&q, &q);
    cuzk_g1_sigma_(&s, a);
    cuzk_g1_jac_add_affine_var(&q, &q, &s);
    return cuzk_g1_jac_is_inf(&q);
}
