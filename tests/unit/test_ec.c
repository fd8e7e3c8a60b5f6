/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tests of G1 and G2 (src/ec): group laws in every coordinate system against a textbook
 * affine reference, scalar multiplication, batch conversion, subgroup checks (fast against
 * r*P = O), generators and endomorphism constants.
 *
 * The generic part (between TEST_EC_BODY guards) is compiled twice, once per group, by
 * including this file from itself.
 */
#ifndef TEST_EC_BODY

#include <gmp.h>

#include "cuzk/ec.h"
#include "ec/ec_internal.h"
#include "test.h"
#include "test_points.h"

#define CAT3_(a, b, c) a##b##c
#define XCAT3_(a, b, c) CAT3_(a, b, c)
#define PT(name) XCAT3_(cuzk_, TG, _##name)      /* library function of the group */
#define LOC(name) XCAT3_(TG, _, name)            /* this file's function of the group */
#define TP(name) XCAT3_(test_, TG, _##name)      /* test_points.h's function of the group */
#define FF(op) XCAT3_(TF, _, op)                 /* field function */

/* |x| for BLS12-381's parameter x = -0xd201000000010000 */
#define ABS_X 0xd201000000010000ULL

/* The subgroup order r as limbs. */
static void r_limbs(uint64_t out[4])
{
    memcpy(out, CUZK_FR_MODULUS.l, 4 * sizeof(uint64_t));
}

static void rand_scalar_limbs(uint64_t *k, size_t nlimbs)
{
    for (size_t i = 0; i < nlimbs; i++)
        k[i] = test_rand64();
}

static unsigned long n_fast(void)
{
    return test_iters(400);
}

/* ---------- G1 instance ---------- */
#define TEST_EC_BODY
#define TG g1
#define TF cuzk_fp
#define T_F cuzk_fp
#define T_AFF cuzk_g1_affine
#define T_JAC cuzk_g1_jac
#define T_XYZZ cuzk_g1_xyzz
#define T_RAND_F test_rand_fp
#define T_NAME "G1"
#define T_ITER_SCALE 4
#include __FILE__
#undef TG
#undef TF
#undef T_F
#undef T_AFF
#undef T_JAC
#undef T_XYZZ
#undef T_RAND_F
#undef T_NAME
#undef T_ITER_SCALE

/* ---------- G2 instance ---------- */
#define TG g2
#define TF cuzk_fp2
#define T_F cuzk_fp2
#define T_AFF cuzk_g2_affine
#define T_JAC cuzk_g2_jac
#define T_XYZZ cuzk_g2_xyzz
#define T_RAND_F test_rand_fp2
#define T_NAME "G2"
#define T_ITER_SCALE 1
#include __FILE__
#undef TEST_EC_BODY

/* ---------- group-specific facts ---------- */

static void fp_from_hex(cuzk_fp *r, const char *hex)
{
    uint8_t b[48];
    test_hex_to_bytes(b, hex, sizeof b);
    CHECK_EQ_ERR(cuzk_fp_from_bytes_be(r, b), CUZK_OK);
}

static void test_generators(void)
{
    /* IETF draft-irtf-cfrg-pairing-friendly-curves section 4.2.1 (BLS12_381) */
    cuzk_g1_affine g1, e1;
    cuzk_g2_affine g2, e2;
    fp_from_hex(&e1.x, "17f1d3a73197d7942695638c4fa9ac0fc3688c4f9774b905a14e3a3f171bac586c55e83ff97a1aeffb3af00adb22c6bb");
    fp_from_hex(&e1.y, "08b3f481e3aaa0f1a09e30ed741d8ae4fcf5e095d5d00af600db18cb2c04b3edd03cc744a2888ae40caa232946c5e7e1");
    fp_from_hex(&e2.x.c0, "024aa2b2f08f0a91260805272dc51051c6e47ad4fa403b02b4510b647ae3d1770bac0326a805bbefd48056c8c121bdb8");
    fp_from_hex(&e2.x.c1, "13e02b6052719f607dacd3a088274f65596bd0d09920b61ab5da61bbdc7f5049334cf11213945d57e5ac7d055d042b7e");
    fp_from_hex(&e2.y.c0, "0ce5d527727d6e118cc9cdc6da2e351aadfd9baa8cbdd3a76d429a695160d12c923ac9cc3baca289e193548608b82801");
    fp_from_hex(&e2.y.c1, "0606c4a02ea734cc32acd2b02bc28b99cb3e287e85a763af267492ab572e99ab3f370d275cec1da1aaa9075ff05f79be");
    cuzk_g1_generator(&g1);
    cuzk_g2_generator(&g2);
    CHECK(cuzk_g1_affine_eq(&g1, &e1));
    CHECK(cuzk_g2_affine_eq(&g2, &e2));
    CHECK(cuzk_g1_affine_is_on_curve(&g1) && !cuzk_g1_affine_is_inf(&g1));
    CHECK(cuzk_g2_affine_is_on_curve(&g2) && !cuzk_g2_affine_is_inf(&g2));
    CHECK(cuzk_g1_affine_in_subgroup(&g1));
    CHECK(cuzk_g2_affine_in_subgroup(&g2));
}

static void test_g1_sigma(void)
{
    /* beta is a primitive cube root of unity and sigma acts on G1 as -x^2 */
    cuzk_fp beta, t, one;
    cuzk_g1_beta_(&beta);
    cuzk_fp_set_one(&one);
    cuzk_fp_sqr(&t, &beta);
    cuzk_fp_mul(&t, &t, &beta);
    CHECK(cuzk_fp_eq(&t, &one));
    CHECK(!cuzk_fp_eq(&beta, &one));

    unsigned __int128 x2 = (unsigned __int128)ABS_X * ABS_X;
    uint64_t k[2] = {(uint64_t)x2, (uint64_t)(x2 >> 64)};
    cuzk_g1_affine g, s, want_a;
    cuzk_g1_jac gj, m;
    cuzk_g1_generator(&g);
    cuzk_g1_jac_from_affine(&gj, &g);
    for (int i = 0; i < 3; i++) {
        if (i > 0) {   /* also random multiples of G */
            uint64_t c = test_rand64();
            cuzk_g1_mul_var(&gj, &gj, &c, 64);
            cuzk_g1_jac_to_affine(&g, &gj);
        }
        cuzk_g1_mul_var(&m, &gj, k, 128);
        cuzk_g1_jac_neg(&m, &m);
        cuzk_g1_jac_to_affine(&want_a, &m);
        cuzk_g1_sigma_(&s, &g);
        CHECK(cuzk_g1_affine_eq(&s, &want_a));
    }
}

/* e = (p - 1) / d as 6 limbs */
static void p_minus_1_over(uint64_t e[6], unsigned long d)
{
    mpz_t z;
    mpz_init(z);
    mpz_import(z, 6, -1, sizeof(uint64_t), 0, 0, CUZK_FP_MODULUS.l);
    mpz_sub_ui(z, z, 1);
    CHECK(mpz_divisible_ui_p(z, d));
    mpz_divexact_ui(z, z, d);
    memset(e, 0, 6 * sizeof(uint64_t));
    mpz_export(e, NULL, -1, sizeof(uint64_t), 0, 0, z);
    mpz_clear(z);
}

static void test_g2_psi(void)
{
    cuzk_fp2 cx, cy, xi, t, one;
    uint64_t e[6];
    cuzk_g2_psi_consts_(&cx, &cy);
    cuzk_fp2_set_one(&one);
    cuzk_fp_set_one(&xi.c0);
    cuzk_fp_set_one(&xi.c1);   /* xi = 1 + u */
    p_minus_1_over(e, 3);
    cuzk_fp2_pow(&t, &xi, e, 6);
    cuzk_fp2_mul(&t, &t, &cx);
    CHECK(cuzk_fp2_eq(&t, &one));      /* cx = xi^-((p-1)/3) */
    p_minus_1_over(e, 2);
    cuzk_fp2_pow(&t, &xi, e, 6);
    cuzk_fp2_mul(&t, &t, &cy);
    CHECK(cuzk_fp2_eq(&t, &one));      /* cy = xi^-((p-1)/2) */

    /* psi(P) = x P on G2 */
    cuzk_g2_affine g, s, want_a;
    cuzk_g2_jac gj, m;
    uint64_t k = ABS_X;
    cuzk_g2_generator(&g);
    cuzk_g2_jac_from_affine(&gj, &g);
    for (int i = 0; i < 3; i++) {
        if (i > 0) {
            uint64_t c = test_rand64();
            cuzk_g2_mul_var(&gj, &gj, &c, 64);
            cuzk_g2_jac_to_affine(&g, &gj);
        }
        cuzk_g2_mul_var(&m, &gj, &k, 64);
        cuzk_g2_jac_neg(&m, &m);
        cuzk_g2_jac_to_affine(&want_a, &m);
        cuzk_g2_psi_(&s, &g);
        CHECK(cuzk_g2_affine_eq(&s, &want_a));
    }
    /* psi maps curve points (outside G2 too) to curve points */
    for (int i = 0; i < 20; i++) {
        cuzk_g2_affine p;
        test_g2_rand_curve(&p);
        cuzk_g2_psi_(&s, &p);
        CHECK(cuzk_g2_affine_is_on_curve(&s));
    }
}

int main(void)
{
    test_init("test_ec");
    test_generators();
    test_g1_sigma();
    test_g2_psi();
    g1_run_all();
    g2_run_all();
    return test_finish();
}

#else /* TEST_EC_BODY: generic tests for one group */

static void LOC(generator_jac)(T_JAC *g)
{
    T_AFF a;
    PT(generator)(&a);
    PT(jac_from_affine)(g, &a);
}

static void LOC(rand_nonzero)(T_F *z)
{
    do {
        T_RAND_F(z);
    } while (FF(is_zero)(z));
}

/* The same point with a random Z (infinity: Z = 0 with random X, Y). */
static void LOC(to_rand_jac)(T_JAC *r, const T_AFF *a)
{
    T_F z, z2, z3;
    if (PT(affine_is_inf)(a)) {
        T_RAND_F(&r->x);
        T_RAND_F(&r->y);
        FF(set_zero)(&r->z);
        return;
    }
    LOC(rand_nonzero)(&z);
    FF(sqr)(&z2, &z);
    FF(mul)(&z3, &z2, &z);
    FF(mul)(&r->x, &a->x, &z2);
    FF(mul)(&r->y, &a->y, &z3);
    r->z = z;
}

/* The same in XYZZ: the Jacobian one's X, Y with ZZ = Z^2, ZZZ = Z^3. */
static void LOC(to_rand_xyzz)(T_XYZZ *r, const T_AFF *a)
{
    T_JAC j;
    LOC(to_rand_jac)(&j, a);
    r->x = j.x;
    r->y = j.y;
    FF(sqr)(&r->zz, &j.z);
    FF(mul)(&r->zzz, &r->zz, &j.z);
}

static void LOC(jac_to_aff)(T_AFF *r, const T_JAC *a)
{
    PT(jac_to_affine)(r, a);
}

static void LOC(xyzz_to_aff)(T_AFF *r, const T_XYZZ *a)
{
    PT(xyzz_to_affine)(r, a);
}

/* Textbook chord-and-tangent addition in affine coordinates, the reference. */
static void LOC(ref_add)(T_AFF *r, const T_AFF *p, const T_AFF *q)
{
    T_F l, t, u, x3;
    if (PT(affine_is_inf)(p)) {
        *r = *q;
        return;
    }
    if (PT(affine_is_inf)(q)) {
        *r = *p;
        return;
    }
    if (FF(eq)(&p->x, &q->x)) {
        FF(add)(&t, &p->y, &q->y);
        if (FF(is_zero)(&t)) {
            PT(affine_set_inf)(r);
            return;
        }
        /* l = 3x^2 / 2y */
        FF(sqr)(&t, &p->x);
        FF(add)(&u, &t, &t);
        FF(add)(&t, &u, &t);
        FF(add)(&u, &p->y, &p->y);
    } else {
        FF(sub)(&t, &q->y, &p->y);
        FF(sub)(&u, &q->x, &p->x);
    }
    FF(inv)(&u, &u);
    FF(mul)(&l, &t, &u);
    FF(sqr)(&x3, &l);
    FF(sub)(&x3, &x3, &p->x);
    FF(sub)(&x3, &x3, &q->x);
    FF(sub)(&t, &p->x, &x3);
    FF(mul)(&t, &l, &t);
    FF(sub)(&r->y, &t, &p->y);
    r->x = x3;
}

static void LOC(ref_mul_small)(T_AFF *r, const T_AFF *p, unsigned k)
{
    T_AFF acc;
    PT(affine_set_inf)(&acc);
    for (unsigned i = 0; i < k; i++)
        LOC(ref_add)(&acc, &acc, p);
    *r = acc;
}

/* Random point for the group-law tests: mostly random curve points, sometimes infinity,
 * sometimes a subgroup point. */
static void LOC(rand_point)(T_AFF *p)
{
    unsigned c = (unsigned)(test_rand64() % 16);
    if (c == 0)
        PT(affine_set_inf)(p);
    else
        TP(rand_curve)(p);
}

/* Checks a + b in every form against the reference. */
static void LOC(check_add)(const T_AFF *a, const T_AFF *b)
{
    T_AFF want, got;
    T_JAC ja, jb, jr;
    T_XYZZ xa, xb, xr;
    LOC(ref_add)(&want, a, b);
    LOC(to_rand_jac)(&ja, a);
    LOC(to_rand_jac)(&jb, b);
    LOC(to_rand_xyzz)(&xa, a);
    LOC(to_rand_xyzz)(&xb, b);

    PT(jac_add_var)(&jr, &ja, &jb);
    CHECK(PT(jac_is_on_curve)(&jr));
    LOC(jac_to_aff)(&got, &jr);
    CHECK(PT(affine_eq)(&got, &want));

    PT(jac_add)(&jr, &ja, &jb);
    CHECK(PT(jac_is_on_curve)(&jr));
    LOC(jac_to_aff)(&got, &jr);
    CHECK(PT(affine_eq)(&got, &want));

    PT(jac_add_affine_var)(&jr, &ja, b);
    LOC(jac_to_aff)(&got, &jr);
    CHECK(PT(affine_eq)(&got, &want));

    PT(xyzz_add_var)(&xr, &xa, &xb);
    LOC(xyzz_to_aff)(&got, &xr);
    CHECK(PT(affine_eq)(&got, &want));
    PT(xyzz_to_jac)(&jr, &xr);          /* XYZZ -> Jacobian keeps the point */
    CHECK(PT(jac_is_on_curve)(&jr));
    LOC(jac_to_aff)(&got, &jr);
    CHECK(PT(affine_eq)(&got, &want));

    PT(xyzz_add_affine_var)(&xr, &xa, b);
    LOC(xyzz_to_aff)(&got, &xr);
    CHECK(PT(affine_eq)(&got, &want));

    /* a - (-b) through sub_affine */
    T_AFF nb;
    PT(affine_neg)(&nb, b);
    PT(xyzz_sub_affine_var)(&xr, &xa, &nb);
    LOC(xyzz_to_aff)(&got, &xr);
    CHECK(PT(affine_eq)(&got, &want));

    /* aliasing: r = a */
    jr = ja;
    PT(jac_add)(&jr, &jr, &jb);
    LOC(jac_to_aff)(&got, &jr);
    CHECK(PT(affine_eq)(&got, &want));
    jr = jb;
    PT(jac_add_var)(&jr, &ja, &jr);
    LOC(jac_to_aff)(&got, &jr);
    CHECK(PT(affine_eq)(&got, &want));
    xr = xa;
    PT(xyzz_add_affine_var)(&xr, &xr, b);
    LOC(xyzz_to_aff)(&got, &xr);
    CHECK(PT(affine_eq)(&got, &want));
    xr = xb;
    PT(xyzz_add_var)(&xr, &xa, &xr);
    LOC(xyzz_to_aff)(&got, &xr);
    CHECK(PT(affine_eq)(&got, &want));
}

static void LOC(check_dbl)(const T_AFF *a)
{
    T_AFF want, got;
    T_JAC ja, jr;
    T_XYZZ xa, xr;
    LOC(ref_add)(&want, a, a);
    LOC(to_rand_jac)(&ja, a);
    LOC(to_rand_xyzz)(&xa, a);
    PT(jac_dbl)(&jr, &ja);
    CHECK(PT(jac_is_on_curve)(&jr));
    LOC(jac_to_aff)(&got, &jr);
    CHECK(PT(affine_eq)(&got, &want));
    PT(jac_dbl)(&ja, &ja);   /* aliased */
    LOC(jac_to_aff)(&got, &ja);
    CHECK(PT(affine_eq)(&got, &want));
    PT(xyzz_dbl_var)(&xr, &xa);
    LOC(xyzz_to_aff)(&got, &xr);
    CHECK(PT(affine_eq)(&got, &want));
    PT(xyzz_dbl_var)(&xa, &xa);
    LOC(xyzz_to_aff)(&got, &xa);
    CHECK(PT(affine_eq)(&got, &want));
}

static void LOC(test_group_law)(void)
{
    unsigned long n = n_fast() * T_ITER_SCALE;
    for (unsigned long it = 0; it < n; it++) {
        T_AFF a, b, c, t;
        LOC(rand_point)(&a);
        LOC(rand_point)(&b);
        LOC(rand_point)(&c);
        CHECK(PT(affine_is_on_curve)(&a));

        /* generic, then every exceptional case: P + P, P + (-P), O + P, P + O, O + O */
        LOC(check_add)(&a, &b);
        LOC(check_add)(&a, &a);
        PT(affine_neg)(&t, &a);
        LOC(check_add)(&a, &t);
        PT(affine_set_inf)(&t);
        LOC(check_add)(&t, &a);
        LOC(check_add)(&a, &t);
        LOC(check_add)(&t, &t);
        LOC(check_dbl)(&a);

        /* commutativity and associativity in Jacobian form (complete addition) */
        T_JAC ja, jb, jc, l, r;
        LOC(to_rand_jac)(&ja, &a);
        LOC(to_rand_jac)(&jb, &b);
        LOC(to_rand_jac)(&jc, &c);
        PT(jac_add)(&l, &ja, &jb);
        PT(jac_add)(&r, &jb, &ja);
        CHECK(PT(jac_eq)(&l, &r));
        PT(jac_add)(&l, &l, &jc);
        PT(jac_add)(&r, &jb, &jc);
        PT(jac_add)(&r, &ja, &r);
        CHECK(PT(jac_eq)(&l, &r));
        /* doubling = self addition across representations */
        T_JAC ja2;
        LOC(to_rand_jac)(&ja2, &a);
        CHECK(PT(jac_eq)(&ja, &ja2));
        PT(jac_dbl)(&l, &ja);
        PT(jac_add_var)(&r, &ja, &ja2);
        CHECK(PT(jac_eq)(&l, &r));
        PT(jac_add)(&r, &ja2, &ja);
        CHECK(PT(jac_eq)(&l, &r));

        /* negation */
        PT(jac_neg)(&l, &ja);
        PT(jac_add_var)(&r, &l, &ja);
        CHECK(PT(jac_is_inf)(&r));
        T_XYZZ xa, xn, xs;
        LOC(to_rand_xyzz)(&xa, &a);
        PT(xyzz_neg)(&xn, &xa);
        PT(xyzz_add_var)(&xs, &xa, &xn);
        CHECK(PT(xyzz_is_inf)(&xs));

        /* conversions */
        PT(jac_from_affine)(&l, &a);
        CHECK(PT(jac_eq)(&l, &ja));
        PT(xyzz_from_affine)(&xs, &a);
        PT(xyzz_to_jac)(&r, &xs);
        CHECK(PT(jac_eq)(&r, &ja));
        PT(xyzz_to_jac)(&r, &xa);
        CHECK(PT(jac_eq)(&r, &ja));
        LOC(xyzz_to_aff)(&t, &xa);
        CHECK(PT(affine_eq)(&t, &a));
        CHECK(PT(affine_is_inf)(&a) == PT(jac_is_inf)(&ja));
        CHECK(PT(affine_is_inf)(&a) == PT(xyzz_is_inf)(&xa));

        /* jac_eq distinguishes different points */
        if (!PT(affine_eq)(&a, &b)) {
            CHECK(!PT(jac_eq)(&ja, &jb));
        }
    }

    /* canonical infinities */
    T_AFF ai;
    T_JAC ji;
    T_XYZZ xi;
    PT(affine_set_inf)(&ai);
    PT(jac_set_inf)(&ji);
    PT(xyzz_set_inf)(&xi);
    CHECK(PT(affine_is_inf)(&ai) && PT(affine_is_on_curve)(&ai));
    CHECK(PT(jac_is_inf)(&ji) && PT(jac_is_on_curve)(&ji));
    CHECK(PT(xyzz_is_inf)(&xi));
    PT(jac_dbl)(&ji, &ji);
    CHECK(PT(jac_is_inf)(&ji));
    PT(xyzz_dbl_var)(&xi, &xi);
    CHECK(PT(xyzz_is_inf)(&xi));
    T_AFF t2;
    PT(jac_to_affine)(&t2, &ji);
    CHECK(PT(affine_is_inf)(&t2));
    PT(xyzz_to_affine)(&t2, &xi);
    CHECK(PT(affine_is_inf)(&t2));
    PT(affine_neg)(&t2, &ai);
    CHECK(PT(affine_is_inf)(&t2));

    /* off-curve points are detected */
    for (int i = 0; i < 50; i++) {
        T_AFF p;
        T_JAC jp;
        TP(rand_curve)(&p);
        LOC(to_rand_jac)(&jp, &p);
        CHECK(PT(affine_is_on_curve)(&p) && PT(jac_is_on_curve)(&jp));
        T_F one;
        FF(set_one)(&one);
        FF(add)(&p.y, &p.y, &one);
        FF(add)(&jp.y, &jp.y, &one);
        CHECK(!PT(affine_is_on_curve)(&p));
        CHECK(!PT(jac_is_on_curve)(&jp));
    }
}

static void LOC(test_mul)(void)
{
    /* small scalars against repeated addition */
    for (unsigned it = 0; it < 4; it++) {
        T_AFF p, want, got;
        T_JAC jp, r;
        if (it == 0)
            PT(generator)(&p);
        else
            TP(rand_curve)(&p);
        LOC(to_rand_jac)(&jp, &p);
        for (unsigned k = 0; k <= 40; k++) {
            uint64_t kk = k;
            LOC(ref_mul_small)(&want, &p, k);
            PT(mul_var)(&r, &jp, &kk, 64);
            LOC(jac_to_aff)(&got, &r);
            CHECK(PT(affine_eq)(&got, &want));
            PT(mul)(&r, &jp, &kk, 64);
            LOC(jac_to_aff)(&got, &r);
            CHECK(PT(affine_eq)(&got, &want));
            PT(mul)(&r, &jp, &kk, 7);   /* a length that is no multiple of 4 */
            LOC(jac_to_aff)(&got, &r);
            CHECK(PT(affine_eq)(&got, &want));
        }
    }

    /* nbits = 0 and infinity inputs */
    {
        T_JAC g, r, inf;
        uint64_t k = 12345;
        LOC(generator_jac)(&g);
        PT(mul_var)(&r, &g, &k, 0);
        CHECK(PT(jac_is_inf)(&r));
        PT(mul)(&r, &g, &k, 0);
        CHECK(PT(jac_is_inf)(&r));
        PT(jac_set_inf)(&inf);
        PT(mul_var)(&r, &inf, &k, 64);
        CHECK(PT(jac_is_inf)(&r));
        PT(mul)(&r, &inf, &k, 64);
        CHECK(PT(jac_is_inf)(&r));
    }

    /* ct = var on random scalars of various lengths, (a + b)P = aP + bP in Fr, and
     * (ab)P = a(bP) */
    unsigned long n = test_iters(6) * T_ITER_SCALE;
    for (unsigned long it = 0; it < n; it++) {
        T_AFF p;
        T_JAC jp, r1, r2, r3;
        if (it & 1)
            TP(rand)(&p);
        else
            TP(rand_curve)(&p);
        LOC(to_rand_jac)(&jp, &p);
        uint64_t k[6];
        rand_scalar_limbs(k, 6);
        static const size_t lens[] = {1, 63, 64, 65, 130, 255, 256, 381};
        size_t nbits = lens[it % (sizeof lens / sizeof lens[0])];
        if (nbits % 64)
            k[nbits / 64] &= (1ULL << (nbits % 64)) - 1;
        for (size_t i = nbits / 64 + (nbits % 64 != 0); i < 6; i++)
            k[i] = 0;
        PT(mul_var)(&r1, &jp, k, nbits);
        PT(mul)(&r2, &jp, k, nbits);
        CHECK(PT(jac_eq)(&r1, &r2));
        PT(mul_var)(&r3, &jp, k, 384);   /* zero high bits do not matter */
        CHECK(PT(jac_eq)(&r1, &r3));
        r3 = jp;
        PT(mul)(&r3, &r3, k, nbits);     /* aliased */
        CHECK(PT(jac_eq)(&r1, &r3));

        cuzk_fr a, b, s;
        uint64_t al[4], bl[4], sl[4];
        test_rand_fr(&a);
        test_rand_fr(&b);
        cuzk_fr_add(&s, &a, &b);
        cuzk_fr_to_limbs(al, &a);
        cuzk_fr_to_limbs(bl, &b);
        cuzk_fr_to_limbs(sl, &s);
        T_JAC g;
        T_AFF ga;
        TP(rand)(&ga);
        PT(jac_from_affine)(&g, &ga);
        PT(mul_fr)(&r1, &g, &a);
        PT(mul_var)(&r2, &g, al, 255);
        CHECK(PT(jac_eq)(&r1, &r2));
        PT(mul_fr)(&r2, &g, &b);
        PT(jac_add)(&r1, &r1, &r2);
        PT(mul_var)(&r3, &g, sl, 256);
        CHECK(PT(jac_eq)(&r1, &r3));
        cuzk_fr_mul(&s, &a, &b);
        cuzk_fr_to_limbs(sl, &s);
        PT(mul_var)(&r1, &g, bl, 256);
        PT(mul_var)(&r1, &r1, al, 256);
        PT(mul_var)(&r2, &g, sl, 256);
        CHECK(PT(jac_eq)(&r1, &r2));
        CHECK(!PT(jac_is_inf)(&r2) || cuzk_fr_is_zero(&s));
    }

    /* r G = O, (r - 1) G = -G, (r + 1) G = G */
    {
        uint64_t rl[5] = {0};
        T_JAC g, r, ng;
        r_limbs(rl);
        LOC(generator_jac)(&g);
        PT(mul_var)(&r, &g, rl, 255);
        CHECK(PT(jac_is_inf)(&r));
        PT(mul)(&r, &g, rl, 256);
        CHECK(PT(jac_is_inf)(&r));
        cuzk_fr one;
        cuzk_fr_set_one(&one);
        PT(mul_fr)(&r, &g, &one);
        CHECK(PT(jac_eq)(&r, &g));
        rl[0] -= 1;   /* r - 1 (r is odd, no borrow) */
        PT(mul_var)(&r, &g, rl, 255);
        PT(jac_neg)(&ng, &g);
        CHECK(PT(jac_eq)(&r, &ng));
        PT(mul)(&r, &g, rl, 255);
        CHECK(PT(jac_eq)(&r, &ng));
        rl[0] += 2;   /* r + 1 */
        PT(mul_var)(&r, &g, rl, 256);
        CHECK(PT(jac_eq)(&r, &g));
        cuzk_fr m1;
        cuzk_fr_neg(&m1, &one);
        PT(mul_fr)(&r, &g, &m1);
        CHECK(PT(jac_eq)(&r, &ng));
    }
}

static void LOC(test_batch)(void)
{
    static const size_t sizes[] = {0, 1, 2, 7, 33};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        size_t n = sizes[si];
        T_JAC in[33];
        T_AFF out[33], want[33];
        for (size_t i = 0; i < n; i++) {
            T_AFF p;
            LOC(rand_point)(&p);
            if (n > 2 && (i == 0 || i == n - 1 || i == n / 2))
                PT(affine_set_inf)(&p);   /* infinity first, last and in the middle */
            LOC(to_rand_jac)(&in[i], &p);
            want[i] = p;
            T_RAND_F(&out[i].x);   /* garbage scratch */
            T_RAND_F(&out[i].y);
        }
        PT(batch_to_affine)(out, in, n);
        for (size_t i = 0; i < n; i++)
            CHECK(PT(affine_eq)(&out[i], &want[i]));
    }
}

static void LOC(test_subgroup)(void)
{
    uint64_t rl[4];
    r_limbs(rl);
    unsigned long n = test_iters(10) * T_ITER_SCALE;
    unsigned outside = 0;
    for (unsigned long it = 0; it < n; it++) {
        T_AFF p, q;
        T_JAC jp, t;
        /* points of the subgroup */
        TP(rand)(&p);
        CHECK(PT(affine_in_subgroup)(&p));
        PT(jac_from_affine)(&jp, &p);
        PT(mul_var)(&t, &jp, rl, 255);
        CHECK(PT(jac_is_inf)(&t));
        /* random curve points: fast check = slow check */
        TP(rand_curve)(&q);
        PT(jac_from_affine)(&jp, &q);
        PT(mul_var)(&t, &jp, rl, 255);
        bool slow = PT(jac_is_inf)(&t);
        CHECK(PT(affine_in_subgroup)(&q) == slow);
        outside += !slow;
        /* r Q lies in the cofactor torsion: outside the subgroup unless O */
        T_AFF rq;
        PT(jac_to_affine)(&rq, &t);
        CHECK(PT(affine_in_subgroup)(&rq) == PT(affine_is_inf)(&rq));
        /* P + r Q: outside too */
        T_JAC s;
        PT(jac_from_affine)(&s, &p);
        PT(jac_add_var)(&s, &s, &t);
        T_AFF sa;
        PT(jac_to_affine)(&sa, &s);
        CHECK(PT(affine_in_subgroup)(&sa) == PT(affine_is_inf)(&rq));
    }
    CHECK(outside == n);   /* random curve points are (overwhelmingly) outside */
    T_AFF inf, off;
    PT(affine_set_inf)(&inf);
    CHECK(PT(affine_in_subgroup)(&inf));
    PT(generator)(&off);
    FF(add)(&off.x, &off.x, &off.y);
    CHECK(!PT(affine_in_subgroup)(&off));   /* off the curve */
}

/* generator_mul(k) = mul_var(G, k) for random k and k = 0, 1, r-1. */
static void LOC(test_generator_mul)(void)
{
    T_JAC g, want;
    T_AFF got, w;
    LOC(generator_jac)(&g);
    for (unsigned long it = 0; it < test_iters(12); it++) {
        cuzk_fr k;
        if (it == 0)
            cuzk_fr_set_zero(&k);
        else if (it == 1)
            cuzk_fr_set_one(&k);
        else if (it == 2) {
            cuzk_fr_set_one(&k);
            cuzk_fr_neg(&k, &k);
        } else
            test_rand_fr(&k);
        uint64_t l[4];
        cuzk_fr_to_limbs(l, &k);
        PT(mul_var)(&want, &g, l, 256);
        PT(jac_to_affine)(&w, &want);
        PT(generator_mul)(&got, &k);
        CHECK(PT(affine_eq)(&got, &w));
    }
    CHECK(PT(affine_is_inf)(&got) == false);
}

static void LOC(run_all)(void)
{
    clock_t c0 = clock();
    LOC(test_generator_mul)();
    LOC(test_group_law)();
    clock_t c1 = clock();
    LOC(test_mul)();
    clock_t c2 = clock();
    LOC(test_batch)();
    LOC(test_subgroup)();
    clock_t c3 = clock();
    printf("%s: group law %.2fs, mul %.2fs, batch+subgroup %.2fs\n", T_NAME,
           (double)(c1 - c0) / CLOCKS_PER_SEC, (double)(c2 - c1) / CLOCKS_PER_SEC,
           (double)(c3 - c2) / CLOCKS_PER_SEC);
}

#endif /* TEST_EC_BODY */
