/* SPDX-License-Identifier: Apache-2.0 */
/* NTT over Fr: roots of unity, transforms against a naive DFT, inverses, cosets, threads. */
#include "test.h"

#include "cuzk/poly.h"
#include "poly/poly_internal.h"

static void fr_pow_u64(cuzk_fr *r, const cuzk_fr *a, uint64_t e)
{
    cuzk_fr_pow(r, a, &e, 1);
}

static void fr_from_hex_be(cuzk_fr *r, const char *hex)
{
    uint8_t b[32];
    test_hex_to_bytes(b, hex, sizeof b);
    cuzk_err e = cuzk_fr_from_bytes_be(r, b);
    CHECK(e == CUZK_OK);
}

static int vec_eq(const cuzk_fr *a, const cuzk_fr *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!cuzk_fr_eq(&a[i], &b[i]))
            return 0;
    return 1;
}

/* out_j = sum_i x_i * (s*w^j)^i, O(n^2). */
static void naive_dft(cuzk_fr *out, const cuzk_fr *x, size_t n, const cuzk_fr *w, const cuzk_fr *s)
{
    cuzk_fr z = *s;
    for (size_t j = 0; j < n; j++) {
        test_fr_horner(&out[j], x, n, &z);
        cuzk_fr_mul(&z, &z, w);
    }
}

static void permute(cuzk_fr *out, const cuzk_fr *x, unsigned k)
{
    for (size_t p = 0; p < ((size_t)1 << k); p++)
        out[p] = x[poly_bitrev(p, k)];
}

static const cuzk_roots FAMILIES[2] = {CUZK_ROOTS_SNARKJS, CUZK_ROOTS_BELLMAN};

static void test_roots(void)
{
    for (int f = 0; f < 2; f++) {
        cuzk_fr w, t, one, mone, prev;
        cuzk_fr_set_one(&one);
        cuzk_fr_neg(&mone, &one);
        for (unsigned k = 0; k <= CUZK_FR_TWO_ADICITY; k++) {
            CHECK_EQ_ERR(cuzk_fr_root_of_unity(&w, k, FAMILIES[f]), CUZK_OK);
            /* order exactly 2^k: w^(2^k) = 1 and w^(2^(k-1)) = -1 */
            t = w;
            for (unsigned i = 0; i + 1 < k; i++)
                cuzk_fr_sqr(&t, &t);
            if (k == 0) {
                CHECK(cuzk_fr_is_one(&w));
            } else {
                CHECK(cuzk_fr_eq(&t, &mone));
                cuzk_fr_sqr(&t, &t);
                CHECK(cuzk_fr_is_one(&t));
                cuzk_fr_sqr(&t, &w);
                CHECK(cuzk_fr_eq(&t, &prev)); /* omega_(2^k)^2 = omega_(2^(k-1)) */
            }
            prev = w;
        }
        CHECK(cuzk_fr_root_of_unity(&w, CUZK_FR_TWO_ADICITY + 1, FAMILIES[f]) != CUZK_OK);
    }
    /* ANCHORS.md: snarkjs omega_(2^32) */
    cuzk_fr w, want;
    fr_from_hex_be(&want, "0212d79e5b416b6f0fd56dc8d168d6c0c4024ff270b3e0941b788f500b912f1f");
    CHECK_EQ_ERR(cuzk_fr_root_of_unity(&w, 32, CUZK_ROOTS_SNARKJS), CUZK_OK);
    CHECK(cuzk_fr_eq(&w, &want));
    CHECK_EQ_ERR(cuzk_fr_root_of_unity(&w, 32, CUZK_ROOTS_BELLMAN), CUZK_OK);
    CHECK(!cuzk_fr_eq(&w, &want)); /* the two families differ */
}

static void test_domain(void)
{
    cuzk_domain *d = NULL;
    CHECK_EQ_ERR(cuzk_domain_new(&d, CUZK_FR_TWO_ADICITY + 1, CUZK_ROOTS_SNARKJS), CUZK_EINVAL);
    CHECK(d == NULL);
    CHECK_EQ_ERR(cuzk_domain_new(&d, 4, (cuzk_roots)3), CUZK_EINVAL);
    CHECK_EQ_ERR(cuzk_domain_new(NULL, 4, CUZK_ROOTS_SNARKJS), CUZK_EINVAL);
    CHECK(cuzk_domain_bytes(27) > 0 && cuzk_domain_bytes(27) < ((size_t)3 << 20));
    CHECK(cuzk_domain_bytes(CUZK_FR_TWO_ADICITY + 1) == 0);
    cuzk_domain_free(NULL);

    for (int f = 0; f < 2; f++) {
        for (unsigned k = 0; k <= 10; k += 5) {
            CHECK_EQ_ERR(cuzk_domain_new(&d, k, FAMILIES[f]), CUZK_OK);
            cuzk_fr w, t, nf;
            CHECK_EQ_ERR(cuzk_fr_root_of_unity(&w, k, FAMILIES[f]), CUZK_OK);
            CHECK(cuzk_domain_n(d) == ((size_t)1 << k));
            CHECK(cuzk_domain_log2(d) == k);
            CHECK(cuzk_domain_family(d) == FAMILIES[f]);
            CHECK(cuzk_fr_eq(cuzk_domain_omega(d), &w));
            cuzk_fr_mul(&t, cuzk_domain_omega(d), cuzk_domain_omega_inv(d));
            CHECK(cuzk_fr_is_one(&t));
            cuzk_fr_set_u64(&nf, (uint64_t)1 << k);
            cuzk_fr_mul(&t, &nf, cuzk_domain_n_inv(d));
            CHECK(cuzk_fr_is_one(&t));
            cuzk_domain_free(d);
        }
    }
}

static void test_bitrev(void)
{
    for (unsigned k = 0; k <= 20; k++) {
        size_t i = (size_t)test_rand64() & (((size_t)1 << k) - 1), r = 0;
        for (unsigned b = 0; b < k; b++)
            r |= ((i >> b) & 1) << (k - 1 - b);
        CHECK(poly_bitrev(i, k) == r);
    }
    for (unsigned k = 0; k <= 12; k += 3) {
        size_t n = (size_t)1 << k;
        cuzk_fr *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *z = malloc(n * sizeof *z);
        test_rand_frs_mixed(x, n);
        memcpy(y, x, n * sizeof *x);
        cuzk_ntt_bitreverse(y, k, 3);
        permute(z, x, k);
        CHECK(vec_eq(y, z, n));
        cuzk_ntt_bitreverse(y, k, 1);
        CHECK(vec_eq(y, x, n));
        free(x);
        free(y);
        free(z);
    }
}

static void test_scale(void)
{
    for (unsigned k = 0; k <= 12; k += 4) {
        size_t n = (size_t)1 << k;
        cuzk_fr *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
        cuzk_fr s, pre, t;
        test_rand_fr(&s);
        test_rand_fr(&pre);
        test_rand_frs_mixed(x, n);
        memcpy(y, x, n * sizeof *x);
        poly_scale_bitrev(y, k, &pre, &s, 2);
        int ok = 1;
        for (size_t p = 0; p < n; p++) {
            fr_pow_u64(&t, &s, poly_bitrev(p, k));
            cuzk_fr_mul(&t, &t, &pre);
            cuzk_fr_mul(&t, &t, &x[p]);
            ok &= cuzk_fr_eq(&t, &y[p]);
        }
        CHECK(ok);
        memcpy(y, x, n * sizeof *x);
        cuzk_ntt_scale_powers(y, n, &pre, &s, 3);
        ok = 1;
        for (size_t p = 0; p < n; p++) {
            fr_pow_u64(&t, &s, p);
            cuzk_fr_mul(&t, &t, &pre);
            cuzk_fr_mul(&t, &t, &x[p]);
            ok &= cuzk_fr_eq(&t, &y[p]);
        }
        CHECK(ok);
        free(x);
        free(y);
    }
}

/* Every entry point against the naive DFT, for sizes 1..256, both families, the default
 * block size and blocks small enough that the out-of-block levels run. */
static void test_vs_naive(void)
{
    static const unsigned blocks[] = {POLY_BLOCK_LOG2, 1, 2, 3};
    for (int f = 0; f < 2; f++) {
        for (unsigned k = 0; k <= 8; k++) {
            size_t n = (size_t)1 << k, sz = n * sizeof(cuzk_fr);
            cuzk_fr *x = malloc(sz), *X = malloc(sz), *Y = malloc(sz), *y = malloc(sz),
                    *t = malloc(sz), *u = malloc(sz);
            cuzk_fr w, winv, one;
            cuzk_fr_set_one(&one);
            CHECK_EQ_ERR(cuzk_fr_root_of_unity(&w, k, FAMILIES[f]), CUZK_OK);
            cuzk_fr_inv(&winv, &w);
            for (int round = 0; round < 3; round++) {
                if (round == 0) { /* delta: transform is all ones */
                    memset(x, 0, sz);
                    cuzk_fr_set_one(&x[0]);
                } else {
                    test_rand_frs_mixed(x, n);
                }
                naive_dft(X, x, n, &w, &one);
                naive_dft(Y, x, n, &winv, &one);
                if (round == 0) {
                    int ok = 1;
                    for (size_t j = 0; j < n; j++)
                        ok &= cuzk_fr_is_one(&X[j]);
                    CHECK(ok);
                }
                /* y = x / n: the inverse transform of x */
                cuzk_fr ninv;
                cuzk_fr_set_u64(&ninv, n);
                cuzk_fr_inv(&ninv, &ninv);
                for (size_t i = 0; i < n; i++)
                    cuzk_fr_mul(&y[i], &Y[i], &ninv);

                for (unsigned bi = 0; bi < sizeof blocks / sizeof blocks[0]; bi++) {
                    cuzk_domain *d;
                    CHECK_EQ_ERR(poly_domain_new_ex(&d, k, FAMILIES[f], blocks[bi]), CUZK_OK);
                    unsigned th = 1 + (unsigned)(test_rand64() % 3);

                    memcpy(t, x, sz);
                    cuzk_ntt_dif(d, t, CUZK_NTT_FORWARD, th);
                    permute(u, X, k);
                    CHECK(vec_eq(t, u, n));

                    memcpy(t, x, sz);
                    cuzk_ntt_dif(d, t, CUZK_NTT_INVERSE, th);
                    permute(u, Y, k);
                    CHECK(vec_eq(t, u, n));

                    permute(t, x, k);
                    cuzk_ntt_dit(d, t, CUZK_NTT_FORWARD, th);
                    CHECK(vec_eq(t, X, n));

                    permute(t, x, k);
                    cuzk_ntt_dit(d, t, CUZK_NTT_INVERSE, th);
                    CHECK(vec_eq(t, Y, n));

                    memcpy(t, x, sz);
                    cuzk_ntt_forward(d, t, th);
                    CHECK(vec_eq(t, X, n));

                    memcpy(t, x, sz);
                    cuzk_ntt_inverse(d, t, th);
                    CHECK(vec_eq(t, y, n));

                    memcpy(t, X, sz);
                    cuzk_ntt_inverse(d, t, th);
                    CHECK(vec_eq(t, x, n));
                    cuzk_domain_free(d);
                }
            }
            free(x);
            free(X);
            free(Y);
            free(y);
            free(t);
            free(u);
        }
    }
}

static void test_coset(void)
{
    for (int f = 0; f < 2; f++) {
        for (unsigned k = 0; k <= 7; k++) {
            size_t n = (size_t)1 << k, sz = n * sizeof(cuzk_fr);
            cuzk_fr *x = malloc(sz), *X = malloc(sz), *t = malloc(sz);
            cuzk_domain *d;
            CHECK_EQ_ERR(poly_domain_new_ex(&d, k, FAMILIES[f], 1 + (unsigned)(test_rand64() % 4)),
                         CUZK_OK);
            for (int round = 0; round < 2; round++) {
                cuzk_fr s;
                if (round == 0)
                    cuzk_fr_generator(&s, FAMILIES[f]);
                else
                    test_rand_fr(&s);
                test_rand_frs_mixed(x, n);
                naive_dft(X, x, n, cuzk_domain_omega(d), &s);
                memcpy(t, x, sz);
                cuzk_ntt_coset_forward(d, t, round == 0 ? NULL : &s, 2);
                CHECK(vec_eq(t, X, n));
                cuzk_ntt_coset_inverse(d, t, round == 0 ? NULL : &s, 2);
                CHECK(vec_eq(t, x, n));
            }
            /* the family's generator really is 5 or 7 */
            cuzk_fr g, want;
            cuzk_fr_generator(&g, FAMILIES[f]);
            cuzk_fr_set_u64(&want, f == 0 ? 5 : 7);
            CHECK(cuzk_fr_eq(&g, &want));
            cuzk_domain_free(d);
            free(x);
            free(X);
            free(t);
        }
    }
}

/* inverse(forward(x)) = x and dif/dit pairing, up to 2^16. */
static void test_roundtrip(void)
{
    for (unsigned k = 9; k <= 16; k++) {
        cuzk_roots fam = FAMILIES[k & 1];
        size_t n = (size_t)1 << k, sz = n * sizeof(cuzk_fr);
        cuzk_fr *x = malloc(sz), *t = malloc(sz);
        cuzk_domain *d;
        CHECK_EQ_ERR(cuzk_domain_new(&d, k, fam), CUZK_OK);
        test_rand_frs_mixed(x, n);
        memcpy(t, x, sz);
        cuzk_ntt_forward(d, t, 0);
        CHECK(!vec_eq(t, x, n));
        cuzk_ntt_inverse(d, t, 0);
        CHECK(vec_eq(t, x, n));
        /* dif forward then dit inverse: x*n */
        memcpy(t, x, sz);
        cuzk_ntt_dif(d, t, CUZK_NTT_FORWARD, 0);
        cuzk_ntt_dit(d, t, CUZK_NTT_INVERSE, 0);
        int ok = 1;
        for (size_t i = 0; i < n; i++) {
            cuzk_fr_mul(&t[i], &t[i], cuzk_domain_n_inv(d));
            ok &= cuzk_fr_eq(&t[i], &x[i]);
        }
        CHECK(ok);
        /* coset round trip with a random shift */
        cuzk_fr s;
        test_rand_fr(&s);
        memcpy(t, x, sz);
        cuzk_ntt_coset_forward(d, t, &s, 0);
        cuzk_ntt_coset_inverse(d, t, &s, 0);
        CHECK(vec_eq(t, x, n));
        /* spot check: forward value j equals the polynomial at omega^j */
        memcpy(t, x, sz);
        cuzk_ntt_forward(d, t, 0);
        for (int r = 0; r < 2; r++) {
            size_t j = (size_t)test_rand64() & (n - 1);
            cuzk_fr z, v;
            poly_domain_omega_pow(&z, d, j);
            test_fr_horner(&v, x, n, &z);
            CHECK(cuzk_fr_eq(&v, &t[j]));
        }
        cuzk_domain_free(d);
        free(x);
        free(t);
    }
}

/* Results do not depend on the thread count or the block size. */
static void test_threads(void)
{
    for (unsigned k = 13; k <= 15; k++) {
        size_t n = (size_t)1 << k, sz = n * sizeof(cuzk_fr);
        cuzk_fr *x = malloc(sz), *r1 = malloc(sz), *t = malloc(sz);
        cuzk_domain *d, *d2;
        CHECK_EQ_ERR(cuzk_domain_new(&d, k, FAMILIES[k & 1]), CUZK_OK);
        CHECK_EQ_ERR(poly_domain_new_ex(&d2, k, FAMILIES[k & 1], 5), CUZK_OK);
        test_rand_frs_mixed(x, n);
        for (int op = 0; op < 4; op++) {
            cuzk_ntt_dir dir = (op & 1) ? CUZK_NTT_INVERSE : CUZK_NTT_FORWARD;
            memcpy(r1, x, sz);
            if (op < 2)
                cuzk_ntt_dif(d, r1, dir, 1);
            else
                cuzk_ntt_dit(d, r1, dir, 1);
            for (unsigned th = 2; th <= 4; th++) {
                memcpy(t, x, sz);
                if (op < 2)
                    cuzk_ntt_dif(d, t, dir, th);
                else
                    cuzk_ntt_dit(d, t, dir, th);
                CHECK(vec_eq(t, r1, n));
            }
            memcpy(t, x, sz);
            if (op < 2)
                cuzk_ntt_dif(d2, t, dir, 3);
            else
                cuzk_ntt_dit(d2, t, dir, 3);
            CHECK(vec_eq(t, r1, n));
        }
        cuzk_domain_free(d);
        cuzk_domain_free(d2);
        free(x);
        free(r1);
        free(t);
    }
}

int main(void)
{
    test_init("test_ntt");
    test_roots();
    test_domain();
    test_bitrev();
    test_scale();
    test_vs_naive();
    test_coset();
    test_roundtrip();
    test_threads();
    return test_finish();
}
