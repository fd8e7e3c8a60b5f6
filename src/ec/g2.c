/* SPDX-License-Identifier: Apache-2.0 */
/* G2: y^2 = x^3 + 4(1+u) over Fp2 (the M-type sextic twist). Formulas from ec_impl.h;
 * generator, the psi endomorphism and the subgroup check here. */
#include "cuzk/ec.h"
#include "ff/ff_inline.h"
#include "ec/ec_internal.h"

#define EC_G g2
#define EC_F cuzk_fp2
#define EC_FF(op) cuzk_fp2i_##op
#define EC_AFF cuzk_g2_affine
#define EC_JAC cuzk_g2_jac
#define EC_XYZZ cuzk_g2_xyzz

/* r = 4(1+u) a */
static inline void ec_mul_by_b(cuzk_fp2 *r, const cuzk_fp2 *a)
{
    cuzk_fp2_mul_by_nonresidue(r, a);
    cuzk_fp2_dbl(r, r);
    cuzk_fp2_dbl(r, r);
}

#include "ec/ec_impl.h"

/* The standard generator (IETF draft-irtf-cfrg-pairing-friendly-curves, section 4.2.1),
 * Montgomery form (v*2^384 mod p) of
 * x.c0 = 0x024aa2b2f08f0a91260805272dc51051c6e47ad4fa403b02b4510b647ae3d1770bac0326a805bbefd48056c8c121bdb8
 * x.c1 = 0x13e02b6052719f607dacd3a088274f65596bd0d09920b61ab5da61bbdc7f5049334cf11213945d57e5ac7d055d042b7e
 * y.c0 = 0x0ce5d527727d6e118cc9cdc6da2e351aadfd9baa8cbdd3a76d429a695160d12c923ac9cc3baca289e193548608b82801
 * y.c1 = 0x0606c4a02ea734cc32acd2b02bc28b99cb3e287e85a763af267492ab572e99ab3f370d275cec1da1aaa9075ff05f79be
 * tests/unit/test_ec.c checks these against the hex above, the curve, and r*G = O. */
static const cuzk_g2_affine G2_GENERATOR = {
    {{{0xf5f28fa202940a10ULL, 0xb3f5fb2687b4961aULL, 0xa1a893b53e2ae580ULL,
       0x9894999d1a3caee9ULL, 0x6f67b7631863366bULL, 0x058191924350bcd7ULL}},
     {{0xa5a9c0759e23f606ULL, 0xaaa0c59dbccd60c3ULL, 0x3bb17e18e2867806ULL,
       0x1b1ab6cc8541b367ULL, 0xc2b6ed0ef2158547ULL, 0x11922a097360edf3ULL}}},
    {{{0x4c730af860494c4aULL, 0x597cfa1f5e369c5aULL, 0xe7e6856caa0a635aULL,
       0xbbefb5e96e0d495fULL, 0x07d3a975f0ef25a2ULL, 0x0083fd8e7e80dae5ULL}},
     {{0xadc0fc92df64b05dULL, 0x18aa270a2b1461dcULL, 0x86adac6a3be4eba0ULL,
       0x79495c4ec93da33aULL, 0xe7175850a43ccaedULL, 0x0b2bc2a163de1bf2ULL}}},
};

/* psi's constants, Montgomery form:
 * cx = (1+u)^((1-p)/3) = 0 + 0x1a0111ea397fe699ec02408663d4de85aa0d857d89759ad4897d29650fb85f9b409427eb4f49fffd8bfd00000000aaad u
 * cy = (1+u)^((1-p)/2) = 0x135203e60180a68ee2e9c448d77a2cd91c3dedd930b1cf60ef396489f61eb45e304466cf3e67fa0af1ee7b04121bdea2
 *                      + 0x06af0e0437ff400b6831e36d6bd17ffe48395dabc2d3435e77f76e17009241c5ee67992f72ec05f4c81084fbede3cc09 u
 * test_ec.c checks cx (1+u)^((p-1)/3) = 1, cy (1+u)^((p-1)/2) = 1 and psi(G) = x G. */
static const cuzk_fp2 G2_PSI_CX = {
    {{0, 0, 0, 0, 0, 0}},
    {{0x890dc9e4867545c3ULL, 0x2af322533285a5d5ULL, 0x50880866309b7e2cULL,
      0xa20d1b8c7e881024ULL, 0x14e4f04fe2db9068ULL, 0x14e56d3f1564853aULL}},
};
static const cuzk_fp2 G2_PSI_CY = {
    {{0x3e2f585da55c9ad1ULL, 0x4294213d86c18183ULL, 0x382844c88b623732ULL,
      0x92ad2afd19103e18ULL, 0x1d794e4fac7cf0b9ULL, 0x0bd592fc7d825ec8ULL}},
    {{0x7bcfa7a25aa30fdaULL, 0xdc17dec12a927e7cULL, 0x2f088dd86b4ebef1ULL,
      0xd1ca2087da74d4a7ULL, 0x2da2596696cebc1dULL, 0x0e2b7eedbbfd87d2ULL}},
};

void cuzk_g2_generator(cuzk_g2_affine *r)
{
    *r = G2_GENERATOR;
}

void cuzk_g2_psi_consts_(cuzk_fp2 *cx, cuzk_fp2 *cy)
{
    *cx = G2_PSI_CX;
    *cy = G2_PSI_CY;
}

void cuzk_g2_psi_(cuzk_g2_affine *r, const cuzk_g2_affine *a)
{
    /* infinity (0, 0) maps to (0, 0) */
    cuzk_fp2 t;
    cuzk_fp2_conj(&t, &a->x);
    cuzk_fp2_mul(&r->x, &t, &G2_PSI_CX);
    cuzk_fp2_conj(&t, &a->y);
    cuzk_fp2_mul(&r->y, &t, &G2_PSI_CY);
}

bool cuzk_g2_affine_in_subgroup(const cuzk_g2_affine *a)
{
    /* Scott, "A note on group membership tests for G1, G2 and GT on BLS pairing-friendly
     * curves" (ePrint 2021/1130): a point P of E'(Fp2) lies in G2 iff psi(P) = x P.
     * With x = -|x|: checked as psi(P) + |x| P = O. Variable time (public points). */
    if (!cuzk_g2_affine_is_on_curve(a))
        return false;
    if (cuzk_g2_affine_is_inf(a))
        return true;
    cuzk_g2_jac p, q;
    cuzk_g2_affine s;
    cuzk_g2_jac_from_affine(&p, a);
    ec_mul_abs_x_var(&q, &p);
    cuzk_g2_psi_(&s, a);
    cuzk_g2_jac_add_affine_var(&q, &q, &s);
    return cuzk_g2_jac_is_inf(&q);
}
