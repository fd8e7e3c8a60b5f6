/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Test helpers on curve points (header-only, beside test.h; C and C++), the same for both
 * groups, named test_g1_... and test_g2_...:
 *   test_gN_rand(p)              one uniform random point of the group: k G, k uniform in Fr;
 *   test_gN_rand_points(out, n)  n random points of the group, made fast (MSM bases);
 *   test_gN_rand_bases(out, n)   the same with infinity, repeats and negatives among them;
 *   test_gN_rand_curve(p)        a random point of the whole curve (x uniform until x^3 + b
 *                                is a square, y of either sign), outside the subgroup but
 *                                with negligible probability (the cofactors are large);
 *   test_gN_off_subgroup(p)      an on-curve point outside the subgroup (checked);
 *   test_gN_affine_eq_n(a, b, n) a[i] == b[i] for every i < n.
 */
#ifndef CUZK_TEST_POINTS_H
#define CUZK_TEST_POINTS_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "cuzk/ec.h"
#include "test.h"
#ifdef __cplusplus
extern "C" {
#endif
#include "util/parallel.h"
#ifdef __cplusplus
}
#endif

/* b of the curve equations: y^2 = x^3 + 4 (G1), y^2 = x^3 + 4(1 + u) (G2) */
static inline void test_g1_curve_b(cuzk_fp *b) { cuzk_fp_set_u64(b, 4); }
static inline void test_g2_curve_b(cuzk_fp2 *b)
{
    cuzk_fp_set_u64(&b->c0, 4);
    cuzk_fp_set_u64(&b->c1, 4);
}

/* G: g1 or g2; F: the coordinate field, fp or fp2. */
#define TEST_POINTS_GROUP_(G, F)                                                            \
    static inline void test_##G##_rand(cuzk_##G##_affine *p)                                \
    {                                                                                       \
        cuzk_fr k;                                                                          \
        test_rand_fr(&k);                                                                   \
        cuzk_##G##_generator_mul(p, &k);                                                    \
    }                                                                                       \
                                                                                            \
    typedef struct {                                                                        \
        cuzk_##G##_affine *out;                                                             \
        const cuzk_##G##_affine *r, *q;                                                     \
        const cuzk_fr *k;                                                                   \
        size_t nr;                                                                          \
    } test_##G##_points_ctx_;                                                               \
                                                                                            \
    /* out[i] = k[i] G */                                                                   \
    static inline void test_##G##_points_mul_(void *vctx, size_t b, size_t e, unsigned w)   \
    {                                                                                       \
        (void)w;                                                                            \
        const test_##G##_points_ctx_ *c = (const test_##G##_points_ctx_ *)vctx;             \
        for (size_t i = b; i < e; i++)                                                      \
            cuzk_##G##_generator_mul(&c->out[i], &c->k[i]);                                 \
    }                                                                                       \
                                                                                            \
    /* out[i] = R[i mod nr] + Q[i / nr] */                                                  \
    static inline void test_##G##_points_add_(void *vctx, size_t b, size_t e, unsigned w)   \
    {                                                                                       \
        (void)w;                                                                            \
        const test_##G##_points_ctx_ *c = (const test_##G##_points_ctx_ *)vctx;             \
        cuzk_##G##_jac *t = (cuzk_##G##_jac *)xmalloc((e - b) * sizeof *t);                 \
        for (size_t i = b; i < e; i++) {                                                    \
            cuzk_##G##_jac_from_affine(&t[i - b], &c->q[i / c->nr]);                        \
            cuzk_##G##_jac_add_affine_var(&t[i - b], &t[i - b], &c->r[i % c->nr]);          \
        }                                                                                   \
        cuzk_##G##_batch_to_affine(c->out + b, t, e - b);                                   \
        free(t);                                                                            \
    }                                                                                       \
                                                                                            \
    /* out[i] = R[i mod m] + Q[i / m] with m = min(n, 1024) and R, Q uniform random points  \
     * (their scalars drawn in turn, the m + n / m multiplications and the additions on     \
     * several threads). */                                                                 \
    static inline void test_##G##_rand_points(cuzk_##G##_affine *out, size_t n)             \
    {                                                                                       \
        if (n == 0)                                                                         \
            return;                                                                         \
        size_t nr = n < 1024 ? n : 1024, nrq = nr + (n + nr - 1) / nr;                      \
        cuzk_fr *k = (cuzk_fr *)xmalloc(nrq * sizeof *k);                                   \
        cuzk_##G##_affine *rq = (cuzk_##G##_affine *)xmalloc(nrq * sizeof *rq);             \
        test_rand_frs(k, nrq);                                                              \
        test_##G##_points_ctx_ c = {rq, NULL, NULL, k, nr};                                 \
        cuzk_parallel_for(nrq, 16, 0, test_##G##_points_mul_, &c);                          \
        c.out = out;                                                                        \
        c.r = rq;                                                                           \
        c.q = rq + nr;                                                                      \
        cuzk_parallel_for(n, 4096, 0, test_##G##_points_add_, &c);                          \
        free(k);                                                                            \
        free(rq);                                                                           \
    }                                                                                       \
                                                                                            \
    /* Infinity at 3 and every 65537th position, the previous point again at 4 and every    \
     * 4099th, the negative of the previous point at 6 and every 4111th. */                 \
    static inline void test_##G##_rand_bases(cuzk_##G##_affine *out, size_t n)              \
    {                                                                                       \
        test_##G##_rand_points(out, n);                                                     \
        for (size_t i = 1; i < n; i++) {                                                    \
            if (i == 3 || i % 65537 == 0)                                                   \
                cuzk_##G##_affine_set_inf(&out[i]);                                         \
            else if (i == 4 || i % 4099 == 0)                                               \
                out[i] = out[i - 1];                                                        \
            else if (i == 6 || i % 4111 == 0)                                               \
                cuzk_##G##_affine_neg(&out[i], &out[i - 1]);                                \
        }                                                                                   \
    }                                                                                       \
                                                                                            \
    static inline void test_##G##_rand_curve(cuzk_##G##_affine *p)                          \
    {                                                                                       \
        cuzk_##F rhs, b;                                                                    \
        test_##G##_curve_b(&b);                                                             \
        for (;;) {                                                                          \
            test_rand_##F(&p->x);                                                           \
            cuzk_##F##_sqr(&rhs, &p->x);                                                    \
            cuzk_##F##_mul(&rhs, &rhs, &p->x);                                              \
            cuzk_##F##_add(&rhs, &rhs, &b);                                                 \
            if (cuzk_##F##_sqrt(&p->y, &rhs))                                               \
                break;                                                                      \
        }                                                                                   \
        if (test_rand64() & 1)                                                              \
            cuzk_##F##_neg(&p->y, &p->y);                                                   \
    }                                                                                       \
                                                                                            \
    static inline void test_##G##_off_subgroup(cuzk_##G##_affine *p)                        \
    {                                                                                       \
        do                                                                                  \
            test_##G##_rand_curve(p);                                                       \
        while (cuzk_##G##_affine_in_subgroup(p));                                           \
    }                                                                                       \
                                                                                            \
    static inline bool test_##G##_affine_eq_n(const cuzk_##G##_affine *a,                   \
                                              const cuzk_##G##_affine *b, size_t n)         \
    {                                                                                       \
        for (size_t i = 0; i < n; i++)                                                      \
            if (!cuzk_##G##_affine_eq(&a[i], &b[i]))                                        \
                return false;                                                               \
        return true;                                                                        \
    }

TEST_POINTS_GROUP_(g1, fp)
TEST_POINTS_GROUP_(g2, fp2)

#undef TEST_POINTS_GROUP_

#endif
