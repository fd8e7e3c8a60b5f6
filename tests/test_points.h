/* Test helpers on curve points (header-only, beside test.h). */
#ifndef CUZK_TEST_POINTS_H
#define CUZK_TEST_POINTS_H

#include "cuzk/ec.h"
#include "test.h"

/* An on-curve point outside the subgroup (the cofactors are large, so a random point on
 * the curve is in the subgroup with negligible probability; checked). */
static inline void test_g1_off_subgroup(cuzk_g1_affine *p)
{
    for (;;) {
        cuzk_fp rhs, four;
        test_rand_fp(&p->x);
        cuzk_fp_sqr(&rhs, &p->x);
        cuzk_fp_mul(&rhs, &rhs, &p->x);
        cuzk_fp_set_u64(&four, 4);
        cuzk_fp_add(&rhs, &rhs, &four);
        if (cuzk_fp_sqrt(&p->y, &rhs) && !cuzk_g1_affine_in_subgroup(p))
            return;
    }
}

static inline void test_g2_off_subgroup(cuzk_g2_affine *p)
{
    for (;;) {
        cuzk_fp2 rhs, b;
        test_rand_fp2(&p->x);
        cuzk_fp2_sqr(&rhs, &p->x);
        cuzk_fp2_mul(&rhs, &rhs, &p->x);
        cuzk_fp_set_u64(&b.c0, 4); /* b = 4(1 + u) */
        cuzk_fp_set_u64(&b.c1, 4);
        cuzk_fp2_add(&rhs, &rhs, &b);
        if (cuzk_fp2_sqrt(&p->y, &rhs) && !cuzk_g2_affine_in_subgroup(p))
            return;
    }
}

#endif
