/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tests of the point encodings (src/ec/encoding.c): known answers for the generators,
 * round trips of every encoding, the snarkjs layout against GMP, and every rejection path.
 * The generic part is compiled once per group by including this file from itself.
 */
#ifndef TEST_ENC_BODY

#include <gmp.h>

#include "cuzk/ec.h"
#include "test.h"
#include "test_gmp.h"
#include "test_points.h"

#define CAT3_(a, b, c) a##b##c
#define XCAT3_(a, b, c) CAT3_(a, b, c)
#define PT(name) XCAT3_(cuzk_, TG, _##name)
#define LOC(name) XCAT3_(TG, _, name)
#define TP(name) XCAT3_(test_, TG, _##name)
#define FF(op) XCAT3_(TF, _, op)

/* p as 48 big-endian bytes */
static void p_bytes_be(uint8_t out[48])
{
    uint8_t le[48];
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 8; j++)
            le[8 * i + j] = (uint8_t)(CUZK_FP_MODULUS.l[i] >> (8 * j));
    for (int i = 0; i < 48; i++)
        out[i] = le[47 - i];
}

/* Checks that the 48 little-endian bytes at mont are (canonical value of a) * 2^384 mod p,
 * computed with GMP from a's canonical big-endian bytes. */
static bool mont_layout_ok(const uint8_t mont[48], const cuzk_fp *a)
{
    uint8_t be[48];
    mpz_t v, p, m;
    cuzk_fp_to_bytes_be(be, a);
    mpz_inits(v, p, m, NULL);
    mpz_import(v, 48, 1, 1, 0, 0, be);
    test_mpz_fp_modulus(p);
    mpz_mul_2exp(v, v, 384);
    mpz_mod(v, v, p);
    mpz_import(m, 48, -1, 1, 0, 0, mont);
    bool ok = mpz_cmp(v, m) == 0;
    mpz_clears(v, p, m, NULL);
    return ok;
}

/* ---- per-group glue ---- */

static cuzk_err g1_from_dec_w(cuzk_g1_affine *r, char s[4][CUZK_FP_DEC_MAX], unsigned flags)
{
    return cuzk_g1_from_dec(r, s[0], s[1], flags);
}

static void g1_to_dec_w(char s[4][CUZK_FP_DEC_MAX], const cuzk_g1_affine *a)
{
    cuzk_fp_to_dec(s[0], &a->x);
    cuzk_fp_to_dec(s[1], &a->y);
}

static bool g1_snarkjs_layout_ok(const uint8_t *b, const cuzk_g1_affine *a)
{
    return mont_layout_ok(b, &a->x) && mont_layout_ok(b + 48, &a->y);
}

static cuzk_err g2_from_dec_w(cuzk_g2_affine *r, char s[4][CUZK_FP_DEC_MAX], unsigned flags)
{
    const char *const xy[4] = {s[0], s[1], s[2], s[3]};
    return cuzk_g2_from_dec(r, xy, flags);
}

static void g2_to_dec_w(char s[4][CUZK_FP_DEC_MAX], const cuzk_g2_affine *a)
{
    cuzk_fp_to_dec(s[0], &a->x.c0);
    cuzk_fp_to_dec(s[1], &a->x.c1);
    cuzk_fp_to_dec(s[2], &a->y.c0);
    cuzk_fp_to_dec(s[3], &a->y.c1);
}

static bool g2_snarkjs_layout_ok(const uint8_t *b, const cuzk_g2_affine *a)
{
    return mont_layout_ok(b, &a->x.c0) && mont_layout_ok(b + 48, &a->x.c1) &&
           mont_layout_ok(b + 96, &a->y.c0) && mont_layout_ok(b + 144, &a->y.c1);
}

#define TEST_ENC_BODY
#define TG g1
#define TF cuzk_fp
#define T_F cuzk_fp
#define T_AFF cuzk_g1_affine
#define T_JAC cuzk_g1_jac
#define T_RAND_F test_rand_fp
#define T_NCOORD 2         /* Fp coordinates per affine point */
#define T_B test_g1_curve_b
#include __FILE__
#undef TG
#undef TF
#undef T_F
#undef T_AFF
#undef T_JAC
#undef T_RAND_F
#undef T_NCOORD
#undef T_B

#define TG g2
#define TF cuzk_fp2
#define T_F cuzk_fp2
#define T_AFF cuzk_g2_affine
#define T_JAC cuzk_g2_jac
#define T_RAND_F test_rand_fp2
#define T_NCOORD 4
#define T_B test_g2_curve_b
#include __FILE__
#undef TEST_ENC_BODY

/* Well-known encodings of the generators (zcash bls12_381, IETF pairing-friendly-curves). */
static const char G1_COMPRESSED[] =
    "97f1d3a73197d7942695638c4fa9ac0fc3688c4f9774b905a14e3a3f171bac586c55e83ff97a1aeffb3af00adb22c6bb";
static const char G1_UNCOMPRESSED[] =
    "17f1d3a73197d7942695638c4fa9ac0fc3688c4f9774b905a14e3a3f171bac586c55e83ff97a1aeffb3af00adb22c6bb"
    "08b3f481e3aaa0f1a09e30ed741d8ae4fcf5e095d5d00af600db18cb2c04b3edd03cc744a2888ae40caa232946c5e7e1";
static const char G2_COMPRESSED[] =
    "93e02b6052719f607dacd3a088274f65596bd0d09920b61ab5da61bbdc7f5049334cf11213945d57e5ac7d055d042b7e"
    "024aa2b2f08f0a91260805272dc51051c6e47ad4fa403b02b4510b647ae3d1770bac0326a805bbefd48056c8c121bdb8";
static const char G2_UNCOMPRESSED[] =
    "13e02b6052719f607dacd3a088274f65596bd0d09920b61ab5da61bbdc7f5049334cf11213945d57e5ac7d055d042b7e"
    "024aa2b2f08f0a91260805272dc51051c6e47ad4fa403b02b4510b647ae3d1770bac0326a805bbefd48056c8c121bdb8"
    "0606c4a02ea734cc32acd2b02bc28b99cb3e287e85a763af267492ab572e99ab3f370d275cec1da1aaa9075ff05f79be"
    "0ce5d527727d6e118cc9cdc6da2e351aadfd9baa8cbdd3a76d429a695160d12c923ac9cc3baca289e193548608b82801";
/* Decimal coordinates of the G1 generator (zcash bls12_381 design notes). */
static const char G1_X_DEC[] = "3685416753713387016781088315183077757961620795782546409894578378688607592378376318836054947676345821548104185464507";
static const char G1_Y_DEC[] = "1339506544944476473020471379941921221584933875938349620426543736416511423956333506472724655353366534992391756441569";

static void test_known_answers(void)
{
    uint8_t want[192], got[192];
    cuzk_g1_affine g1, d1;
    cuzk_g2_affine g2, d2;
    cuzk_g1_generator(&g1);
    cuzk_g2_generator(&g2);

    test_hex_to_bytes(want, G1_COMPRESSED, 48);
    cuzk_g1_to_compressed(got, &g1);
    CHECK(memcmp(got, want, 48) == 0);
    CHECK_EQ_ERR(cuzk_g1_from_compressed(&d1, want, CUZK_DECODE_CHECK_SUBGROUP), CUZK_OK);
    CHECK(cuzk_g1_affine_eq(&d1, &g1));

    test_hex_to_bytes(want, G1_UNCOMPRESSED, 96);
    cuzk_g1_to_uncompressed(got, &g1);
    CHECK(memcmp(got, want, 96) == 0);
    CHECK_EQ_ERR(cuzk_g1_from_uncompressed(&d1, want, CUZK_DECODE_CHECK_SUBGROUP), CUZK_OK);
    CHECK(cuzk_g1_affine_eq(&d1, &g1));

    test_hex_to_bytes(want, G2_COMPRESSED, 96);
    cuzk_g2_to_compressed(got, &g2);
    CHECK(memcmp(got, want, 96) == 0);
    CHECK_EQ_ERR(cuzk_g2_from_compressed(&d2, want, CUZK_DECODE_CHECK_SUBGROUP), CUZK_OK);
    CHECK(cuzk_g2_affine_eq(&d2, &g2));

    test_hex_to_bytes(want, G2_UNCOMPRESSED, 192);
    cuzk_g2_to_uncompressed(got, &g2);
    CHECK(memcmp(got, want, 192) == 0);
    CHECK_EQ_ERR(cuzk_g2_from_uncompressed(&d2, want, CUZK_DECODE_CHECK_SUBGROUP), CUZK_OK);
    CHECK(cuzk_g2_affine_eq(&d2, &g2));

    CHECK_EQ_ERR(cuzk_g1_from_dec(&d1, G1_X_DEC, G1_Y_DEC, CUZK_DECODE_CHECK_SUBGROUP), CUZK_OK);
    CHECK(cuzk_g1_affine_eq(&d1, &g1));

    /* infinity: 0xc0 00.. compressed, 0x40 00.. uncompressed, all zero in snarkjs */
    cuzk_g1_affine i1;
    cuzk_g2_affine i2;
    cuzk_g1_affine_set_inf(&i1);
    cuzk_g2_affine_set_inf(&i2);
    memset(want, 0, sizeof want);
    want[0] = 0xc0;
    cuzk_g1_to_compressed(got, &i1);
    CHECK(memcmp(got, want, 48) == 0);
    cuzk_g2_to_compressed(got, &i2);
    CHECK(memcmp(got, want, 96) == 0);
    want[0] = 0x40;
    cuzk_g1_to_uncompressed(got, &i1);
    CHECK(memcmp(got, want, 96) == 0);
    cuzk_g2_to_uncompressed(got, &i2);
    CHECK(memcmp(got, want, 192) == 0);
    want[0] = 0;
    cuzk_g1_to_snarkjs(got, &i1);
    CHECK(memcmp(got, want, 96) == 0);
    cuzk_g2_to_snarkjs(got, &i2);
    CHECK(memcmp(got, want, 192) == 0);
}

int main(void)
{
    test_init("test_encoding");
    test_known_answers();
    g1_run_all();
    g2_run_all();
    return test_finish();
}

#else /* TEST_ENC_BODY */

#define T_SJ (T_NCOORD * 48)      /* snarkjs and zcash uncompressed length */
#define T_CMP (T_NCOORD * 24)     /* zcash compressed length */

/* An x in the coordinate field with x^3 + b not a square. */
static void LOC(rand_nonsquare_x)(T_F *x)
{
    T_F rhs, b, y;
    T_B(&b);
    do {
        T_RAND_F(x);
        FF(sqr)(&rhs, x);
        FF(mul)(&rhs, &rhs, x);
        FF(add)(&rhs, &rhs, &b);
    } while (FF(sqrt)(&y, &rhs));
}

/* Expects decoding to fail with want, leaving the output untouched and a detail set. */
#define EXPECT_REJECT(call, want)                                                        \
    do {                                                                                 \
        T_AFF out_;                                                                      \
        memset(&out_, 0x5a, sizeof out_);                                                \
        cuzk_error_clear();                                                              \
        T_AFF *r_ = &out_;                                                               \
        CHECK_EQ_ERR(call, want);                                                        \
        uint8_t pat_[sizeof out_];                                                       \
        memset(pat_, 0x5a, sizeof pat_);                                                 \
        CHECK(memcmp(&out_, pat_, sizeof out_) == 0);                                    \
        CHECK(cuzk_error_detail()[0] != '\0');                                           \
    } while (0)

static void LOC(round_trip)(const T_AFF *p, bool in_subgroup)
{
    uint8_t buf[T_SJ], buf2[T_SJ];
    char dec[4][CUZK_FP_DEC_MAX];
    T_AFF q;
    unsigned fl = in_subgroup ? CUZK_DECODE_CHECK_SUBGROUP : 0;

    PT(to_snarkjs)(buf, p);
    CHECK(LOC(snarkjs_layout_ok)(buf, p));
    CHECK_EQ_ERR(PT(from_snarkjs)(&q, buf, fl), CUZK_OK);
    CHECK(PT(affine_eq)(&q, p));

    PT(to_uncompressed)(buf, p);
    CHECK((buf[0] & 0xa0) == 0);
    CHECK_EQ_ERR(PT(from_uncompressed)(&q, buf, fl), CUZK_OK);
    CHECK(PT(affine_eq)(&q, p));
    PT(to_uncompressed)(buf2, &q);
    CHECK(memcmp(buf, buf2, T_SJ) == 0);

    PT(to_compressed)(buf, p);
    CHECK((buf[0] & 0x80) != 0);
    CHECK_EQ_ERR(PT(from_compressed)(&q, buf, fl), CUZK_OK);
    CHECK(PT(affine_eq)(&q, p));
    /* the negated point differs exactly in the sort bit (y != 0 on these curves) */
    if (!PT(affine_is_inf)(p)) {
        T_AFF n;
        PT(affine_neg)(&n, p);
        PT(to_compressed)(buf2, &n);
        buf2[0] ^= 0x20;
        CHECK(memcmp(buf, buf2, T_CMP) == 0);
        /* and the uncompressed form holds the same x bytes */
        PT(to_uncompressed)(buf2, p);
        buf2[0] |= 0x80;
        buf2[0] = (uint8_t)((buf2[0] & ~0x20) | (buf[0] & 0x20));
        CHECK(memcmp(buf, buf2, T_CMP) == 0);
    }

    LOC(to_dec_w)(dec, p);
    CHECK_EQ_ERR(LOC(from_dec_w)(&q, dec, fl), CUZK_OK);
    CHECK(PT(affine_eq)(&q, p));
}

static void LOC(test_round_trips)(void)
{
    unsigned long n = test_iters(60);
    for (unsigned long i = 0; i < n; i++) {
        T_AFF p;
        TP(rand)(&p);
        LOC(round_trip)(&p, true);
        TP(rand_curve)(&p);
        LOC(round_trip)(&p, false);
    }
    T_AFF inf;
    PT(affine_set_inf)(&inf);
    LOC(round_trip)(&inf, true);
    PT(generator)(&inf);
    LOC(round_trip)(&inf, true);
}

static void LOC(test_rejections)(void)
{
    uint8_t good_u[T_SJ], good_c[T_CMP], good_s[T_SJ], b[T_SJ], pbe[48];
    T_AFF g, q, outside;
    PT(generator)(&g);
    p_bytes_be(pbe);
    do {
        TP(rand_curve)(&outside);
    } while (PT(affine_in_subgroup)(&outside));
    PT(to_uncompressed)(good_u, &g);
    PT(to_compressed)(good_c, &g);
    PT(to_snarkjs)(good_s, &g);

    /* ---- EFLAGS ---- */
    memcpy(b, good_u, T_SJ);
    b[0] |= 0x80;   /* compressed bit on an uncompressed encoding */
    EXPECT_REJECT(PT(from_uncompressed)(r_, b, 0), CUZK_EFLAGS);
    memcpy(b, good_u, T_SJ);
    b[0] |= 0x20;   /* sort bit on an uncompressed encoding */
    EXPECT_REJECT(PT(from_uncompressed)(r_, b, 0), CUZK_EFLAGS);
    memcpy(b, good_c, T_CMP);
    b[0] &= 0x7f;   /* compressed length without the compressed bit */
    EXPECT_REJECT(PT(from_compressed)(r_, b, 0), CUZK_EFLAGS);
    memset(b, 0, T_SJ);
    b[0] = 0xe0;    /* infinity with the sort bit */
    EXPECT_REJECT(PT(from_compressed)(r_, b, 0), CUZK_EFLAGS);
    b[0] = 0x60;
    EXPECT_REJECT(PT(from_uncompressed)(r_, b, 0), CUZK_EFLAGS);
    /* infinity with nonzero bytes: in byte 0 below the flags, in the middle, at the end */
    static const size_t spots[3] = {0, 20, 1000};
    for (int i = 0; i < 3; i++) {
        memset(b, 0, T_SJ);
        b[0] = 0xc0;
        size_t at = spots[i] < T_CMP ? spots[i] : T_CMP - 1;
        b[at] |= 0x01;
        EXPECT_REJECT(PT(from_compressed)(r_, b, 0), CUZK_EFLAGS);
        memset(b, 0, T_SJ);
        b[0] = 0x40;
        at = spots[i] < T_SJ ? spots[i] : T_SJ - 1;
        b[at] |= 0x01;
        EXPECT_REJECT(PT(from_uncompressed)(r_, b, 0), CUZK_EFLAGS);
    }
    /* valid infinities decode */
    memset(b, 0, T_SJ);
    b[0] = 0xc0;
    CHECK_EQ_ERR(PT(from_compressed)(&q, b, CUZK_DECODE_CHECK_SUBGROUP), CUZK_OK);
    CHECK(PT(affine_is_inf)(&q));
    b[0] = 0x40;
    CHECK_EQ_ERR(PT(from_uncompressed)(&q, b, CUZK_DECODE_CHECK_SUBGROUP), CUZK_OK);
    CHECK(PT(affine_is_inf)(&q));
    b[0] = 0x00;
    CHECK_EQ_ERR(PT(from_snarkjs)(&q, b, CUZK_DECODE_CHECK_SUBGROUP), CUZK_OK);
    CHECK(PT(affine_is_inf)(&q));

    /* ---- ENONCANONICAL: p (and all ones) in each coordinate slot ---- */
    for (int slot = 0; slot < T_NCOORD; slot++) {
        memcpy(b, good_u, T_SJ);
        memcpy(b + 48 * slot, pbe, 48);
        EXPECT_REJECT(PT(from_uncompressed)(r_, b, 0), CUZK_ENONCANONICAL);
        memset(b + 48 * slot, 0xff, 48);
        if (slot == 0)
            b[0] = 0x1f;   /* flags clear, value still >= p */
        EXPECT_REJECT(PT(from_uncompressed)(r_, b, 0), CUZK_ENONCANONICAL);
        if (slot < T_NCOORD / 2) {   /* compressed: the x slots */
            memcpy(b, good_c, T_CMP);
            memcpy(b + 48 * slot, pbe, 48);
            b[0] |= (uint8_t)(good_c[0] & 0xe0);
            EXPECT_REJECT(PT(from_compressed)(r_, b, 0), CUZK_ENONCANONICAL);
        }
        /* snarkjs: p little-endian */
        memcpy(b, good_s, T_SJ);
        for (int j = 0; j < 48; j++)
            b[48 * slot + j] = pbe[47 - j];
        EXPECT_REJECT(PT(from_snarkjs)(r_, b, 0), CUZK_ENONCANONICAL);
        memset(b + 48 * slot, 0xff, 48);
        EXPECT_REJECT(PT(from_snarkjs)(r_, b, 0), CUZK_ENONCANONICAL);
        /* decimal: p, and text that is no number */
        char dec[4][CUZK_FP_DEC_MAX];
        LOC(to_dec_w)(dec, &g);
        mpz_t pz;
        mpz_init(pz);
        mpz_import(pz, 6, -1, sizeof(uint64_t), 0, 0, CUZK_FP_MODULUS.l);
        mpz_get_str(dec[slot], 10, pz);
        mpz_clear(pz);
        EXPECT_REJECT(LOC(from_dec_w)(r_, dec, 0), CUZK_ENONCANONICAL);
        strcpy(dec[slot], "12x4");
        EXPECT_REJECT(LOC(from_dec_w)(r_, dec, 0), CUZK_EPARSE);
    }

    /* ---- ENOT_ON_CURVE ---- */
    {
        T_AFF bad = g;
        T_F one;
        FF(set_one)(&one);
        FF(add)(&bad.y, &bad.y, &one);
        PT(to_uncompressed)(b, &bad);
        EXPECT_REJECT(PT(from_uncompressed)(r_, b, 0), CUZK_ENOT_ON_CURVE);
        PT(to_snarkjs)(b, &bad);
        EXPECT_REJECT(PT(from_snarkjs)(r_, b, 0), CUZK_ENOT_ON_CURVE);
        char dec[4][CUZK_FP_DEC_MAX];
        LOC(to_dec_w)(dec, &bad);
        EXPECT_REJECT(LOC(from_dec_w)(r_, dec, 0), CUZK_ENOT_ON_CURVE);
        /* (0, 0) without the infinity flag */
        memset(b, 0, T_SJ);
        EXPECT_REJECT(PT(from_uncompressed)(r_, b, 0), CUZK_ENOT_ON_CURVE);
        /* x = 0, y = 0 in snarkjs is infinity; x = 0, y = 1 is not on the curve */
        T_AFF z;
        FF(set_zero)(&z.x);
        FF(set_one)(&z.y);
        PT(to_snarkjs)(b, &z);
        EXPECT_REJECT(PT(from_snarkjs)(r_, b, 0), CUZK_ENOT_ON_CURVE);
    }

    /* ---- ENOT_SQUARE ---- */
    for (int i = 0; i < 5; i++) {
        T_AFF fake;
        LOC(rand_nonsquare_x)(&fake.x);
        FF(set_one)(&fake.y);
        PT(to_uncompressed)(b, &fake);   /* x bytes come first in both zcash forms */
        b[0] |= 0x80;
        if (i & 1)
            b[0] |= 0x20;
        EXPECT_REJECT(PT(from_compressed)(r_, b, 0), CUZK_ENOT_SQUARE);
    }

    /* ---- ENOT_IN_SUBGROUP (accepted without the flag) ---- */
    {
        char dec[4][CUZK_FP_DEC_MAX];
        PT(to_uncompressed)(b, &outside);
        EXPECT_REJECT(PT(from_uncompressed)(r_, b, CUZK_DECODE_CHECK_SUBGROUP),
                      CUZK_ENOT_IN_SUBGROUP);
        CHECK_EQ_ERR(PT(from_uncompressed)(&q, b, 0), CUZK_OK);
        PT(to_compressed)(b, &outside);
        EXPECT_REJECT(PT(from_compressed)(r_, b, CUZK_DECODE_CHECK_SUBGROUP),
                      CUZK_ENOT_IN_SUBGROUP);
        CHECK_EQ_ERR(PT(from_compressed)(&q, b, 0), CUZK_OK);
        PT(to_snarkjs)(b, &outside);
        EXPECT_REJECT(PT(from_snarkjs)(r_, b, CUZK_DECODE_CHECK_SUBGROUP),
                      CUZK_ENOT_IN_SUBGROUP);
        CHECK_EQ_ERR(PT(from_snarkjs)(&q, b, 0), CUZK_OK);
        LOC(to_dec_w)(dec, &outside);
        EXPECT_REJECT(LOC(from_dec_w)(r_, dec, CUZK_DECODE_CHECK_SUBGROUP),
                      CUZK_ENOT_IN_SUBGROUP);
        CHECK_EQ_ERR(LOC(from_dec_w)(&q, dec, 0), CUZK_OK);
        CHECK(PT(affine_eq)(&q, &outside));
    }
}

static void LOC(run_all)(void)
{
    LOC(test_round_trips)();
    LOC(test_rejections)();
}

#undef T_SJ
#undef T_CMP
#undef EXPECT_REJECT

#endif /* TEST_ENC_BODY */
