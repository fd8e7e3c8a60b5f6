/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Groth16 H step in the snarkjs and bellman conventions.
 *
 * Both evaluate the interpolants of a, b, c (given on the n-domain) on a coset s*omega^j
 * without a permutation pass: inverse DIF (natural -> coefficients in bit-reversed order),
 * coefficient at position p times s^rev(p)/n, forward DIT (-> coset values, natural).
 */
#include "poly/poly_internal.h"
#include "util/parallel.h"

/* Coefficients -> values at s*omega^j, in place, natural order in and out. */
static void to_coset(const cuzk_domain *d, cuzk_fr *x, const cuzk_fr *s, unsigned nthreads)
{
    cuzk_ntt_dif(d, x, CUZK_NTT_INVERSE, nthreads);
    poly_scale_bitrev(x, d->log2_n, &d->n_inv, s, nthreads);
    cuzk_ntt_dit(d, x, CUZK_NTT_FORWARD, nthreads);
}

typedef struct {
    cuzk_fr *a;
    const cuzk_fr *b, *c;
} abc_ctx;

static void abc_fn(void *p, size_t begin, size_t end, unsigned worker)
{
    (void)worker;
    const abc_ctx *x = p;
    for (size_t i = begin; i < end; i++) {
        cuzk_fr_mul(&x->a[i], &x->a[i], &x->b[i]);
        cuzk_fr_sub(&x->a[i], &x->a[i], &x->c[i]);
    }
}

static cuzk_err h_check(const char *fn, const cuzk_domain *d, const cuzk_fr *a, const cuzk_fr *b,
                        const cuzk_fr *c, cuzk_roots want)
{
    if (!d || !a || !b || !c)
        return cuzk_error_set(CUZK_EINVAL, "%s: NULL argument", fn);
    if (d->family != want)
        return cuzk_error_set(CUZK_EINVAL, "%s: domain has roots from %d, this convention needs %d",
                              fn, (int)d->family, (int)want);
    return CUZK_OK;
}

cuzk_err cuzk_h_snarkjs(const cuzk_domain *d, cuzk_fr *a, cuzk_fr *b, cuzk_fr *c,
                        unsigned nthreads)
{
    cuzk_err e = h_check("cuzk_h_snarkjs", d, a, b, c, CUZK_ROOTS_SNARKJS);
    if (e != CUZK_OK)
        return e;
    cuzk_fr w2n; /* omega_2n: the odd points of the 2n-domain are w2n * omega_n^j */
    if (d->log2_n >= CUZK_FR_TWO_ADICITY ||
        cuzk_fr_root_of_unity(&w2n, d->log2_n + 1, d->family) != CUZK_OK)
        return cuzk_error_set(CUZK_EINVAL, "cuzk_h_snarkjs: no 2n-domain for n = 2^%u",
                              d->log2_n);
    to_coset(d, a, &w2n, nthreads);
    to_coset(d, b, &w2n, nthreads);
    to_coset(d, c, &w2n, nthreads);
    abc_ctx x = {a, b, c};
    cuzk_parallel_for(d->n, 4096, nthreads, abc_fn, &x);
    return CUZK_OK;
}

cuzk_err cuzk_h_bellman(const cuzk_domain *d, cuzk_fr *a, cuzk_fr *b, cuzk_fr *c,
                        unsigned nthreads)
{
    cuzk_err e = h_check("cuzk_h_bellman", d, a, b, c, CUZK_ROOTS_BELLMAN);
    if (e != CUZK_OK)
        return e;
    cuzk_fr g, ginv, zinv, one;
    cuzk_fr_generator(&g, d->family);
    cuzk_fr_inv_var(&ginv, &g);
    /* Z(g*omega^j) = g^n * omega^(jn) - 1 = g^n - 1, nonzero since g generates Fr* */
    zinv = g;
    for (unsigned i = 0; i < d->log2_n; i++)
        cuzk_fr_sqr(&zinv, &zinv);
    cuzk_fr_set_one(&one);
    cuzk_fr_sub(&zinv, &zinv, &one);
    cuzk_fr_inv_var(&zinv, &zinv);

    to_coset(d, a, &g, nthreads);
    to_coset(d, b, &g, nthreads);
    to_coset(d, c, &g, nthreads);
    abc_ctx x = {a, b, c};
    cuzk_parallel_for(d->n, 4096, nthreads, abc_fn, &x);
    /* Coset inverse of (a*b - c)/Z: coefficient i times g^-i * zinv / n. Three transforms
     * flip the order three times, so this one pass of bit reversal is the only one. */
    cuzk_ntt_bitreverse(a, d->log2_n, nthreads);
    cuzk_ntt_dit(d, a, CUZK_NTT_INVERSE, nthreads);
    cuzk_fr start;
    cuzk_fr_mul(&start, &zinv, &d->n_inv);
    cuzk_ntt_scale_powers(a, d->n, &start, &ginv, nthreads);
    return CUZK_OK;
}
