/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Groth16 H step in both conventions against schoolbook polynomial arithmetic.
 *
 * With A, B of degree < n and C = A*B mod Z, Z = X^n - 1, H = (A*B - C)/Z has degree <= n-2.
 * bellman: the output is H's coefficients (and 0 at n-1).
 * snarkjs: the output is p_j = A(x_j)*B(x_j) - C(x_j) at x_j = omega_2n^(2j+1). Since
 * omega_2n^n = -1 and 2j+1 is odd, x_j^n = -1, so Z(x_j) = -2 and p_j = -2*H(x_j).
 */
#include "test.h"

#include "cuzk/poly.h"

/* values[j] = p(w^j), O(n^2) */
static void eval_domain(cuzk_fr *values, const cuzk_fr *p, size_t n, const cuzk_fr *w)
{
    cuzk_fr z;
    cuzk_fr_set_one(&z);
    for (size_t j = 0; j < n; j++) {
        test_fr_horner(&values[j], p, n, &z);
        cuzk_fr_mul(&z, &z, w);
    }
}

/* coef = interpolant of values on the w-domain: coef_i = (1/n) sum_j values_j w^(-ij) */
static void interpolate(cuzk_fr *coef, const cuzk_fr *values, size_t n, const cuzk_fr *w)
{
    cuzk_fr winv, ninv, z;
    cuzk_fr_inv(&winv, w);
    cuzk_fr_set_u64(&ninv, n);
    cuzk_fr_inv(&ninv, &ninv);
    cuzk_fr_set_one(&z);
    for (size_t i = 0; i < n; i++) {
        test_fr_horner(&coef[i], values, n, &z);
        cuzk_fr_mul(&coef[i], &coef[i], &ninv);
        cuzk_fr_mul(&z, &z, &winv);
    }
}

/* prod[0..2n-1) = a*b (schoolbook) */
static void poly_mul(cuzk_fr *prod, const cuzk_fr *a, const cuzk_fr *b, size_t n)
{
    cuzk_fr t;
    for (size_t i = 0; i + 1 < 2 * n; i++)
        cuzk_fr_set_zero(&prod[i]);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            cuzk_fr_mul(&t, &a[i], &b[j]);
            cuzk_fr_add(&prod[i + j], &prod[i + j], &t);
        }
}

/* Long division of D (length 2n-1) by X^n - zn: q (length n-1) and the remainder left in
 * D[0..n). */
static void divide(cuzk_fr *q, cuzk_fr *D, size_t n, const cuzk_fr *zn)
{
    cuzk_fr t;
    for (size_t i = 2 * n - 1; i-- > n;) {
        q[i - n] = D[i];
        cuzk_fr_mul(&t, &D[i], zn);
        cuzk_fr_add(&D[i - n], &D[i - n], &t);
        cuzk_fr_set_zero(&D[i]);
    }
}

/* Divisible case: A, B random, C = A*B mod Z, for both conventions. */
static void test_divisible(unsigned k)
{
    size_t n = (size_t)1 << k, sz = n * sizeof(cuzk_fr);
    cuzk_fr *A = malloc(sz), *B = malloc(sz), *C = malloc(sz), *H = malloc(sz);
    cuzk_fr *D = malloc(2 * sz), *a = malloc(sz), *b = malloc(sz), *c = malloc(sz);
    cuzk_fr one, zero;
    cuzk_fr_set_one(&one);
    cuzk_fr_set_zero(&zero);
    test_rand_frs_mixed(A, n);
    test_rand_frs_mixed(B, n);
    poly_mul(D, A, B, n);
    divide(H, D, n, &one); /* D[0..n) = A*B mod Z = C */
    memcpy(C, D, sz);
    /* check the division: H*Z + C = A*B */
    {
        cuzk_fr *P = malloc(2 * sz), t;
        poly_mul(P, A, B, n);
        int ok = 1;
        for (size_t i = 0; i + 1 < 2 * n; i++) {
            cuzk_fr_set_zero(&t);
            if (i < n)
                cuzk_fr_add(&t, &t, &C[i]);
            if (i >= n)
                cuzk_fr_add(&t, &t, &H[i - n]);
            if (i < n - 1)
                cuzk_fr_sub(&t, &t, &H[i]);
            ok &= cuzk_fr_eq(&t, &P[i]);
        }
        CHECK(ok);
        free(P);
    }

    for (int conv = 0; conv < 2; conv++) {
        cuzk_roots fam = conv == 0 ? CUZK_ROOTS_SNARKJS : CUZK_ROOTS_BELLMAN;
        cuzk_domain *d;
        CHECK_EQ_ERR(cuzk_domain_new(&d, k, fam), CUZK_OK);
        const cuzk_fr *w = cuzk_domain_omega(d);
        eval_domain(a, A, n, w);
        eval_domain(b, B, n, w);
        eval_domain(c, C, n, w);
        /* c = a o b on the domain, as snarkjs computes it */
        int ok = 1;
        for (size_t j = 0; j < n; j++) {
            cuzk_fr t;
            cuzk_fr_mul(&t, &a[j], &b[j]);
            ok &= cuzk_fr_eq(&t, &c[j]);
        }
        CHECK(ok);
        unsigned th = 1 + (unsigned)(test_rand64() % 3);
        if (conv == 0) {
            CHECK_EQ_ERR(cuzk_h_snarkjs(d, a, b, c, th), CUZK_OK);
            cuzk_fr w2n, x, v, m2;
            CHECK_EQ_ERR(cuzk_fr_root_of_unity(&w2n, k + 1, fam), CUZK_OK);
            cuzk_fr_set_u64(&m2, 2);
            cuzk_fr_neg(&m2, &m2);
            x = w2n; /* x_0 = omega_2n, x_(j+1) = x_j * omega_n */
            ok = 1;
            for (size_t j = 0; j < n; j++) {
                test_fr_horner(&v, H, n - 1, &x);
                cuzk_fr_mul(&v, &v, &m2);
                ok &= cuzk_fr_eq(&v, &a[j]);
                cuzk_fr_mul(&x, &x, w);
            }
            CHECK(ok);
        } else {
            CHECK_EQ_ERR(cuzk_h_bellman(d, a, b, c, th), CUZK_OK);
            ok = 1;
            for (size_t i = 0; i + 1 < n; i++)
                ok &= cuzk_fr_eq(&a[i], &H[i]);
            CHECK(ok);
            CHECK(cuzk_fr_is_zero(&a[n - 1]));
        }
        cuzk_domain_free(d);
    }
    free(A);
    free(B);
    free(C);
    free(H);
    free(D);
    free(a);
    free(b);
    free(c);
}

/* Arbitrary a, b, c (no divisibility): compare with the definitions directly.
 * snarkjs: p_j = A'(x_j)B'(x_j) - C'(x_j), A' etc. the interpolants.
 * bellman: on the coset X^n = g^n, so the output is ((A'B' - C') mod (X^n - g^n))/(g^n - 1). */
static void test_arbitrary(unsigned k)
{
    size_t n = (size_t)1 << k, sz = n * sizeof(cuzk_fr);
    cuzk_fr *a = malloc(sz), *b = malloc(sz), *c = malloc(sz), *A = malloc(sz), *B = malloc(sz),
            *C = malloc(sz), *D = malloc(2 * sz), *q = malloc(sz), *a0 = malloc(sz);
    for (int conv = 0; conv < 2; conv++) {
        cuzk_roots fam = conv == 0 ? CUZK_ROOTS_SNARKJS : CUZK_ROOTS_BELLMAN;
        cuzk_domain *d;
        CHECK_EQ_ERR(cuzk_domain_new(&d, k, fam), CUZK_OK);
        const cuzk_fr *w = cuzk_domain_omega(d);
        test_rand_frs_mixed(a, n);
        test_rand_frs_mixed(b, n);
        test_rand_frs_mixed(c, n);
        interpolate(A, a, n, w);
        interpolate(B, b, n, w);
        interpolate(C, c, n, w);
        if (conv == 0) {
            CHECK_EQ_ERR(cuzk_h_snarkjs(d, a, b, c, 2), CUZK_OK);
            cuzk_fr x, va, vb, vc;
            CHECK_EQ_ERR(cuzk_fr_root_of_unity(&x, k + 1, fam), CUZK_OK);
            int ok = 1;
            for (size_t j = 0; j < n; j++) {
                test_fr_horner(&va, A, n, &x);
                test_fr_horner(&vb, B, n, &x);
                test_fr_horner(&vc, C, n, &x);
                cuzk_fr_mul(&va, &va, &vb);
                cuzk_fr_sub(&va, &va, &vc);
                ok &= cuzk_fr_eq(&va, &a[j]);
                cuzk_fr_mul(&x, &x, w);
            }
            CHECK(ok);
        } else {
            CHECK_EQ_ERR(cuzk_h_bellman(d, a, b, c, 2), CUZK_OK);
            cuzk_fr g, gn, t;
            cuzk_fr_generator(&g, fam);
            uint64_t e = n;
            cuzk_fr_pow(&gn, &g, &e, 1);
            poly_mul(D, A, B, n);
            for (size_t i = 0; i < n; i++)
                cuzk_fr_sub(&D[i], &D[i], &C[i]);
            divide(q, D, n, &gn);
            cuzk_fr_set_one(&t);
            cuzk_fr_sub(&t, &gn, &t);
            cuzk_fr_inv(&t, &t);
            int ok = 1;
            for (size_t i = 0; i < n; i++) {
                cuzk_fr_mul(&D[i], &D[i], &t);
                ok &= cuzk_fr_eq(&D[i], &a[i]);
            }
            CHECK(ok);
        }
        cuzk_domain_free(d);
    }
    free(a);
    free(b);
    free(c);
    free(A);
    free(B);
    free(C);
    free(D);
    free(q);
    free(a0);
}

/* p(tau) from its values on the domain: (tau^n - 1)/n * sum_j v_j w^j/(tau - w^j). */
static void eval_lagrange(cuzk_fr *r, const cuzk_fr *v, size_t n, const cuzk_fr *w,
                          const cuzk_fr *tau, cuzk_fr *den, cuzk_fr *scratch)
{
    cuzk_fr z, t, acc;
    cuzk_fr_set_one(&z);
    for (size_t j = 0; j < n; j++) {
        cuzk_fr_sub(&den[j], tau, &z);
        cuzk_fr_mul(&z, &z, w);
    }
    cuzk_fr_batch_inv_var(den, den, n, scratch);
    cuzk_fr_set_zero(&acc);
    cuzk_fr_set_one(&z);
    for (size_t j = 0; j < n; j++) {
        cuzk_fr_mul(&t, &v[j], &z);
        cuzk_fr_mul(&t, &t, &den[j]);
        cuzk_fr_add(&acc, &acc, &t);
        cuzk_fr_mul(&z, &z, w);
    }
    uint64_t e = n;
    cuzk_fr_pow(&t, tau, &e, 1);
    cuzk_fr_set_one(&z);
    cuzk_fr_sub(&t, &t, &z);
    cuzk_fr_mul(&acc, &acc, &t);
    cuzk_fr_set_u64(&t, n);
    cuzk_fr_inv(&t, &t);
    cuzk_fr_mul(r, &acc, &t);
}

/* Larger sizes (out-of-block levels run): c = a o b, checked at random points through the
 * Lagrange form; thread counts agree. */
static void test_large(unsigned k)
{
    size_t n = (size_t)1 << k, sz = n * sizeof(cuzk_fr);
    cuzk_fr *a = malloc(sz), *b = malloc(sz), *c = malloc(sz), *a1 = malloc(sz), *b1 = malloc(sz),
            *c1 = malloc(sz), *den = malloc(sz), *scr = malloc(sz);
    for (int conv = 0; conv < 2; conv++) {
        cuzk_roots fam = conv == 0 ? CUZK_ROOTS_SNARKJS : CUZK_ROOTS_BELLMAN;
        cuzk_domain *d;
        CHECK_EQ_ERR(cuzk_domain_new(&d, k, fam), CUZK_OK);
        const cuzk_fr *w = cuzk_domain_omega(d);
        test_rand_frs_mixed(a, n);
        test_rand_frs_mixed(b, n);
        for (size_t j = 0; j < n; j++)
            cuzk_fr_mul(&c[j], &a[j], &b[j]);
        memcpy(a1, a, sz);
        memcpy(b1, b, sz);
        memcpy(c1, c, sz);
        cuzk_fr tau, va, vb, vc, vh, t;
        if (conv == 0) {
            /* p_j = A(x_j)B(x_j) - C(x_j) at two random j */
            CHECK_EQ_ERR(cuzk_h_snarkjs(d, a1, b1, c1, 1), CUZK_OK);
            for (int r = 0; r < 2; r++) {
                size_t j = (size_t)test_rand64() & (n - 1);
                CHECK_EQ_ERR(cuzk_fr_root_of_unity(&tau, k + 1, fam), CUZK_OK);
                uint64_t e = j;
                cuzk_fr_pow(&t, w, &e, 1);
                cuzk_fr_mul(&tau, &tau, &t);
                eval_lagrange(&va, a, n, w, &tau, den, scr);
                eval_lagrange(&vb, b, n, w, &tau, den, scr);
                eval_lagrange(&vc, c, n, w, &tau, den, scr);
                cuzk_fr_mul(&va, &va, &vb);
                cuzk_fr_sub(&va, &va, &vc);
                CHECK(cuzk_fr_eq(&va, &a1[j]));
            }
        } else {
            /* H(tau) * (tau^n - 1) = A(tau)B(tau) - C(tau) at a random tau; deg H <= n-2 */
            CHECK_EQ_ERR(cuzk_h_bellman(d, a1, b1, c1, 1), CUZK_OK);
            CHECK(cuzk_fr_is_zero(&a1[n - 1]));
            test_rand_fr(&tau);
            eval_lagrange(&va, a, n, w, &tau, den, scr);
            eval_lagrange(&vb, b, n, w, &tau, den, scr);
            eval_lagrange(&vc, c, n, w, &tau, den, scr);
            cuzk_fr_mul(&va, &va, &vb);
            cuzk_fr_sub(&va, &va, &vc);
            test_fr_horner(&vh, a1, n, &tau);
            uint64_t e = n;
            cuzk_fr_pow(&t, &tau, &e, 1);
            cuzk_fr_set_one(&vb);
            cuzk_fr_sub(&t, &t, &vb);
            cuzk_fr_mul(&vh, &vh, &t);
            CHECK(cuzk_fr_eq(&vh, &va));
        }
        /* same result with more threads */
        for (unsigned th = 2; th <= 3; th++) {
            memcpy(den, a, sz);
            memcpy(scr, b, sz);
            cuzk_fr *cc = malloc(sz);
            memcpy(cc, c, sz);
            if (conv == 0)
                CHECK_EQ_ERR(cuzk_h_snarkjs(d, den, scr, cc, th), CUZK_OK);
            else
                CHECK_EQ_ERR(cuzk_h_bellman(d, den, scr, cc, th), CUZK_OK);
            CHECK(memcmp(den, a1, sz) == 0);
            free(cc);
        }
        cuzk_domain_free(d);
    }
    free(a);
    free(b);
    free(c);
    free(a1);
    free(b1);
    free(c1);
    free(den);
    free(scr);
}

static void test_errors(void)
{
    cuzk_domain *ds, *db;
    cuzk_fr x[4];
    memset(x, 0, sizeof x);
    CHECK_EQ_ERR(cuzk_domain_new(&ds, 2, CUZK_ROOTS_SNARKJS), CUZK_OK);
    CHECK_EQ_ERR(cuzk_domain_new(&db, 2, CUZK_ROOTS_BELLMAN), CUZK_OK);
    CHECK_EQ_ERR(cuzk_h_snarkjs(db, x, x, x, 1), CUZK_EINVAL);
    CHECK_EQ_ERR(cuzk_h_bellman(ds, x, x, x, 1), CUZK_EINVAL);
    CHECK_EQ_ERR(cuzk_h_bellman(db, NULL, x, x, 1), CUZK_EINVAL);
    CHECK_EQ_ERR(cuzk_h_snarkjs(NULL, x, x, x, 1), CUZK_EINVAL);
    CHECK(strlen(cuzk_error_detail()) > 0);
    cuzk_domain_free(ds);
    cuzk_domain_free(db);
}

int main(void)
{
    test_init("test_h");
    test_errors();
    for (unsigned k = 0; k <= 8; k++)
        test_divisible(k);
    for (unsigned k = 0; k <= 6; k++)
        test_arbitrary(k);
    test_large(13);
    test_large(14);
    return test_finish();
}
