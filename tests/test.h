/*
 * Minimal test harness: seeded random numbers (the seed is printed; CUZK_TEST_SEED=N
 * repeats a run), CHECK macros that count, and the closing line "N passed, N failed".
 * CUZK_TEST_SCALE=N multiplies iteration counts (default 1).
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
    printf("%s: seed %" PRIu64 " (CUZK_TEST_SEED=%" PRIu64 " repeats this run)\n", name,
           test_seed_, test_seed_);
    fflush(stdout);
}

/* Uniform random field elements (rejection sampling on the top limb). */
static inline void test_rand_fp(cuzk_fp *r)
{
    uint64_t l[CUZK_FP_LIMBS];
    do {
        for (int i = 0; i < CUZK_FP_LIMBS; i++)
            l[i] = test_rand64();
        l[5] &= (1ULL << 61) - 1;
    } while (cuzk_fp_from_limbs(r, l) != CUZK_OK);
}

static inline void test_rand_fr(cuzk_fr *r)
{
    uint64_t l[CUZK_FR_LIMBS];
    do {
        for (int i = 0; i < CUZK_FR_LIMBS; i++)
            l[i] = test_rand64();
        l[3] &= (1ULL << 63) - 1;
    } while (cuzk_fr_from_limbs(r, l) != CUZK_OK);
}

static inline void test_rand_fp2(cuzk_fp2 *r)
{
    test_rand_fp(&r->c0);
    test_rand_fp(&r->c1);
}

#define CHECK(cond)                                                                   \
    do {                                                                              \
        if (cond) {                                                                   \
            test_passed_++;                                                           \
        } else {                                                                      \
            test_failed_++;                                                           \
            if (test_failed_ <= 20)                                                   \
                fprintf(stderr, "%s:%d: CHECK failed: %s (seed %" PRIu64 ")\n",       \
                        __FILE__, __LINE__, #cond, test_seed_);                       \
        }                                                                             \
    } while (0)

#define CHECK_EQ_ERR(got, want)                                                       \
    do {                                                                              \
        cuzk_err g_ = (got), w_ = (want);                                             \
        if (g_ == w_) {                                                               \
            test_passed_++;                                                           \
        } else {                                                                      \
            test_failed_++;                                                           \
            fprintf(stderr, "%s:%d: %s returned %s, expected %s: %s (seed %" PRIu64 ")\n", \
                    __FILE__, __LINE__, #got, cuzk_errname(g_), cuzk_errname(w_),     \
                    cuzk_error_detail(), test_seed_);                                 \
        }                                                                             \
    } while (0)

/* Counts one check per call but reports only the first failures of a loop. */
static inline int test_finish(void)
{
    printf("%lu passed, %lu failed\n", test_passed_, test_failed_);
    return test_failed_ ? 1 : 0;
}

#endif
