/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Test helpers on circuits, keys and proofs (header-only, beside test.h): a synthetic chain
 * circuit with its witness, random toxic waste, and equality of matrices, proofs, .zkey and
 * .params keys.
 */
#ifndef CUZK_TEST_CIRCUIT_H
#define CUZK_TEST_CIRCUIT_H

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cuzk/params.h"
#include "cuzk/setup.h"
#include "test.h"
#include "test_points.h"

/*
 * A chain circuit of m >= 1 constraints. Wires: 0 = 1, 1 = the public output, 2 = the
 * public input x, then the chain w[3+i] = (c_i w[2+i] + d_i) w[2+i] for i < m - 1 (c_i, d_i
 * random, w[2] = x random); the last constraint sets out = w[last] * 1. Returns the circuit
 * (freed with cuzk_r1cs_free) and its witness in *wit (m + 2 values, freed with free).
 */
static inline cuzk_r1cs *test_chain_circuit(size_t m, cuzk_fr **wit)
{
    cuzk_r1cs *r = (cuzk_r1cs *)calloc(1, sizeof *r);
    size_t nw = m + 2; /* 0, out, x, then m - 1 chain wires */
    r->n_wires = (uint32_t)nw;
    r->n_pub_out = 1;
    r->n_pub_in = 1;
    r->n_public = 2;
    r->n_constraints = (uint32_t)m;
    size_t cap[3] = {2 * m, m, m};
    for (int k = 0; k < 3; k++) {
        r->m[k].n_rows = m;
        r->m[k].row = (uint64_t *)calloc(m + 1, sizeof(uint64_t));
        r->m[k].col = (uint32_t *)malloc(cap[k] * sizeof(uint32_t));
        r->m[k].val = (cuzk_fr *)malloc(cap[k] * sizeof(cuzk_fr));
    }
    cuzk_fr *w = (cuzk_fr *)malloc(nw * sizeof *w), one;
    cuzk_fr_set_one(&one);
    w[0] = one;
    test_rand_fr(&w[2]);
    uint64_t nnz[3] = {0, 0, 0};
#define TEST_TERM_(k, wire, v)                                                           \
    do {                                                                                 \
        r->m[k].col[nnz[k]] = (uint32_t)(wire);                                          \
        r->m[k].val[nnz[k]] = (v);                                                       \
        nnz[k]++;                                                                        \
    } while (0)
    for (size_t i = 0; i + 1 < m; i++) {
        cuzk_fr c, d, t;
        test_rand_fr(&c);
        test_rand_fr(&d);
        TEST_TERM_(0, 2 + i, c);
        TEST_TERM_(0, 0, d);
        TEST_TERM_(1, 2 + i, one);
        TEST_TERM_(2, 3 + i, one);
        cuzk_fr_mul(&t, &c, &w[2 + i]);
        cuzk_fr_add(&t, &t, &d);
        cuzk_fr_mul(&w[3 + i], &t, &w[2 + i]);
        for (int k = 0; k < 3; k++)
            r->m[k].row[i + 1] = nnz[k];
    }
    TEST_TERM_(0, nw - 1, one);
    TEST_TERM_(1, 0, one);
    TEST_TERM_(2, 1, one);
#undef TEST_TERM_
    for (int k = 0; k < 3; k++)
        r->m[k].row[m] = nnz[k];
    w[1] = w[nw - 1];
    *wit = w;
    return r;
}

/* Every secret scalar uniform in Fr. */
static inline void test_rand_toxic(cuzk_setup_toxic *t)
{
    test_rand_fr(&t->tau);
    test_rand_fr(&t->alpha);
    test_rand_fr(&t->beta);
    test_rand_fr(&t->gamma);
    test_rand_fr(&t->delta);
}

/* The same rows, columns and values. */
static inline bool test_csr_eq(const cuzk_csr *a, const cuzk_csr *b)
{
    if (a->n_rows != b->n_rows ||
        memcmp(a->row, b->row, (a->n_rows + 1) * sizeof *a->row) != 0)
        return false;
    uint64_t nnz = a->row[a->n_rows];
    return !memcmp(a->col, b->col, nnz * sizeof *a->col) &&
           !memcmp(a->val, b->val, nnz * sizeof *a->val);
}

static inline bool test_proof_eq(const cuzk_proof *x, const cuzk_proof *y)
{
    return cuzk_g1_affine_eq(&x->a, &y->a) && cuzk_g2_affine_eq(&x->b, &y->b) &&
           cuzk_g1_affine_eq(&x->c, &y->c);
}

/* Every field of the two proving keys: sizes, verification-key points, the a and b
 * matrices and the point vectors. */
static inline bool test_zkey_eq(const cuzk_zkey *x, const cuzk_zkey *y)
{
    if (x->n_vars != y->n_vars || x->n_public != y->n_public ||
        x->domain_size != y->domain_size || x->log2_domain != y->log2_domain ||
        x->n_rows != y->n_rows || x->n_constraints != y->n_constraints)
        return false;
    size_t nv = x->n_vars, np = x->n_public, n = x->domain_size;
    return cuzk_g1_affine_eq(&x->alpha1, &y->alpha1) &&
           cuzk_g1_affine_eq(&x->beta1, &y->beta1) &&
           cuzk_g1_affine_eq(&x->delta1, &y->delta1) &&
           cuzk_g2_affine_eq(&x->beta2, &y->beta2) &&
           cuzk_g2_affine_eq(&x->gamma2, &y->gamma2) &&
           cuzk_g2_affine_eq(&x->delta2, &y->delta2) &&
           test_g1_affine_eq_n(x->ic, y->ic, np + 1) &&
           test_csr_eq(&x->a, &y->a) && test_csr_eq(&x->b, &y->b) &&
           test_g1_affine_eq_n(x->a_pts, y->a_pts, nv) &&
           test_g1_affine_eq_n(x->b1_pts, y->b1_pts, nv) &&
           test_g2_affine_eq_n(x->b2_pts, y->b2_pts, nv) &&
           test_g1_affine_eq_n(x->c_pts, y->c_pts, nv - np - 1) &&
           test_g1_affine_eq_n(x->h_pts, y->h_pts, n);
}

/* Every field of the two .params keys but the path: the verification-key points, the
 * vector sizes and the vectors. */
static inline bool test_params_eq(const cuzk_params *x, const cuzk_params *y)
{
    return cuzk_g1_affine_eq(&x->alpha1, &y->alpha1) &&
           cuzk_g1_affine_eq(&x->beta1, &y->beta1) &&
           cuzk_g1_affine_eq(&x->delta1, &y->delta1) &&
           cuzk_g2_affine_eq(&x->beta2, &y->beta2) &&
           cuzk_g2_affine_eq(&x->gamma2, &y->gamma2) &&
           cuzk_g2_affine_eq(&x->delta2, &y->delta2) && x->n_ic == y->n_ic &&
           x->n_h == y->n_h && x->n_l == y->n_l && x->n_a == y->n_a &&
           x->n_b_g1 == y->n_b_g1 && x->n_b_g2 == y->n_b_g2 &&
           test_g1_affine_eq_n(x->ic, y->ic, x->n_ic) &&
           test_g1_affine_eq_n(x->h, y->h, x->n_h) && test_g1_affine_eq_n(x->l, y->l, x->n_l) &&
           test_g1_affine_eq_n(x->a, y->a, x->n_a) &&
           test_g1_affine_eq_n(x->b_g1, y->b_g1, x->n_b_g1) &&
           test_g2_affine_eq_n(x->b_g2, y->b_g2, x->n_b_g2);
}

#endif
