/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Minimal test harness: seeded random numbers (the seed is printed; CUZK_TEST_SEED=N
 * repeats a run), CHECK macros that count, and the closing line "N passed, N failed".
 * CUZK_TEST_SCALE=N multiplies iteration counts (default 1). Also the small helpers the
 * tests share: allocation that exits with status 2 (the harness's "could not run") when out
 * of memory; on field elements: random vectors of Fr, r - k, counting differences, Horner
 * evaluation, hex strings to bytes. Header-only, C and C++ (the .cu host tests).
 */
#ifndef CUZK_TEST_H
#define CUZK_TEST_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuzk/ff.h"

static unsigned long test_passed_, test_failed_;
static uint64_t test_rng_state_;
static uint64_t test_seed_;
/* What the running checks are about ("fp/portable"), printed in brackets with each failure;
 * empty unless a test writes it. */
static char test_ctx[64];

/* malloc and realloc (of at least 1 byte) that exit with status 2 when out of memory */
static inline void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p) {
        fprintf(stderr, "out of memory (%zu bytes)\n", n);
        exit(2);
    }
    return p;
}

static inline void *xmalloc(size_t n) { return xrealloc(NULL, n); }

static inline uint64_t test_rand64(void)
{
    /* splitmix64 */
    uint64_t z = (test_rng_state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static inline void test_rand_bytes(uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)test_rand64();
}

static inline unsigned long test_iters(unsigned long base)
{
    const char *s = getenv("CUZK_TEST_SCALE");
    unsigned long k = s ? strtoul(s, NULL, 10) : 1;
    return base * (k ? k : 1);
}

static inline void test_init(const char *name)
{
    const char *s = getenv("CUZK_TEST_SEED");
    test_seed_ = s ? strtoull(s, NULL, 0) : ((uint64_t)time(NULL) ^ ((uint64_t)clock() << 32));
    test_rng_state_ = test_seed_;
    test_ctx[0] = 0;
    printf("%s: seed %" PRIu64 " (CUZK_TEST_SEED=%" PRIu64 " repeats this run)\n", name,
           test_seed_, test_seed_);
    fflush(stdout);
}

/* n random limbs, the top one below 2^top_bits */
static inline void test_rand_limbs_(uint64_t *l, int n, unsigned top_bits)
{
    for (int i = 0; i < n; i++)
        l[i] = test_rand64();
    l[n - 1] &= (1ULL << top_bits) - 1;
}

/* Uniform random field elements (rejection sampling: random limbs below the modulus' bit
 * length until they are below the modulus). */
static inline void test_rand_fp(cuzk_fp *r)
{
    uint64_t l[CUZK_FP_LIMBS];
    do
        test_rand_limbs_(l, CUZK_FP_LIMBS, 61);
    while (cuzk_fp_from_limbs(r, l) != CUZK_OK);
}

static inline void test_rand_fr(cuzk_fr *r)
{
    uint64_t l[CUZK_FR_LIMBS];
    do
        test_rand_limbs_(l, CUZK_FR_LIMBS, 63);
    while (cuzk_fr_from_limbs(r, l) != CUZK_OK);
}

static inline void test_rand_fp2(cuzk_fp2 *r)
{
    test_rand_fp(&r->c0);
    test_rand_fp(&r->c1);
}

static inline void test_rand_frs(cuzk_fr *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        test_rand_fr(&x[i]);
}

/* r = -k (r - k as a field element) */
static inline void test_fr_minus(cuzk_fr *r, uint64_t k)
{
    cuzk_fr t;
    cuzk_fr_set_u64(&t, k);
    cuzk_fr_neg(r, &t);
}

/* Random values with 0, 1 and -1 (r - 1) mixed in, an eighth of them each. */
static inline void test_rand_frs_mixed(cuzk_fr *x, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        switch (test_rand64() % 8) {
        case 0: cuzk_fr_set_zero(&x[i]); break;
        case 1: cuzk_fr_set_one(&x[i]); break;
        case 2: test_fr_minus(&x[i], 1); break;
        default: test_rand_fr(&x[i]);
        }
    }
}

/* Filecoin-like witness scalars: 45% zero, 45% one, 1% r - 1, the rest random. */
static inline void test_rand_frs_filecoin(cuzk_fr *x, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t v = test_rand64() % 100;
        if (v < 45)
            cuzk_fr_set_zero(&x[i]);
        else if (v < 90)
            cuzk_fr_set_one(&x[i]);
        else if (v == 90)
            test_fr_minus(&x[i], 1);
        else
            test_rand_fr(&x[i]);
    }
}

/* How many of x[i], y[i] (i < n) differ. */
static inline size_t test_fr_count_diff(const cuzk_fr *x, const cuzk_fr *y, size_t n)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += !cuzk_fr_eq(&x[i], &y[i]);
    return bad;
}

/* r = p(z) for the coefficients x[0..n) of p (Horner). */
static inline void test_fr_horner(cuzk_fr *r, const cuzk_fr *x, size_t n, const cuzk_fr *z)
{
    cuzk_fr acc;
    cuzk_fr_set_zero(&acc);
    for (size_t i = n; i-- > 0;) {
        cuzk_fr_mul(&acc, &acc, z);
        cuzk_fr_add(&acc, &acc, &x[i]);
    }
    *r = acc;
}

/* test_ctx in brackets, or nothing, as three %s arguments */
#define TEST_CTX_ (test_ctx[0] ? "[" : ""), test_ctx, (test_ctx[0] ? "] " : "")

/* CHECK counts one check per call; of failures it prints the first 20 (a loop's checks
 * would flood the log). CHECK_EQ_ERR prints each failure with the error detail. */
#define CHECK(cond)                                                                   \
    do {                                                                              \
        if (cond) {                                                                   \
            test_passed_++;                                                           \
        } else {                                                                      \
            test_failed_++;                                                           \
            if (test_failed_ <= 20)                                                   \
                fprintf(stderr, "%s:%d: %s%s%sCHECK failed: %s (seed %" PRIu64 ")\n", \
                        __FILE__, __LINE__, TEST_CTX_, #cond, test_seed_);            \
        }                                                                             \
    } while (0)

#define CHECK_EQ_ERR(got, want)                                                       \
    do {                                                                              \
        cuzk_err g_ = (got), w_ = (want);                                             \
        if (g_ == w_) {                                                               \
            test_passed_++;                                                           \
        } else {                                                                      \
            test_failed_++;                                                           \
            fprintf(stderr, "%s:%d: %s%s%s%s returned %s, expected %s: %s (seed %" PRIu64 ")\n", \
                    __FILE__, __LINE__, TEST_CTX_, #got, cuzk_errname(g_),            \
                    cuzk_errname(w_), cuzk_error_detail(), test_seed_);               \
        }                                                                             \
    } while (0)

/* out[0..n) from the 2n hex digits at hex, checked: the length and every digit pair (bytes
 * past the end of a short string are 0). */
static inline void test_hex_to_bytes(uint8_t *out, const char *hex, size_t n)
{
    size_t len = strlen(hex);
    CHECK(len == 2 * n);
    for (size_t i = 0; i < n; i++) {
        unsigned v = 0;
        if (2 * i < len)
            CHECK(sscanf(hex + 2 * i, "%2x", &v) == 1);
        out[i] = (uint8_t)v;
    }
}

/* got == want and cuzk_error_detail() holds each given substring (NULL: none) */
static inline void test_check_err(cuzk_err got, cuzk_err want, const char *s1, const char *s2,
                                  int line)
{
    const char *d = cuzk_error_detail();
    bool ok = got == want && (!s1 || strstr(d, s1)) && (!s2 || strstr(d, s2));
    CHECK(ok);
    if (!ok)
        fprintf(stderr, "  line %d: got %s (%s), wanted %s with '%s' '%s'\n", line,
                cuzk_errname(got), d, cuzk_errname(want), s1 ? s1 : "", s2 ? s2 : "");
}
#define CHECK_ERR(got, want, s1, s2) test_check_err((got), (want), (s1), (s2), __LINE__)

static inline int test_finish(void)
{
    printf("%lu passed, %lu failed\n", test_passed_, test_failed_);
    return test_failed_ ? 1 : 0;
}

#endif
