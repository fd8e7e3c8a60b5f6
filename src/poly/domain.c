/* SPDX-License-Identifier: Apache-2.0 */
/* NTT domains: roots of unity and twiddle tables. */
#include <stdlib.h>

#include "poly/poly_internal.h"

static size_t domain_elems(unsigned log2_n, unsigned block_log2)
{
    size_t n = (size_t)1 << log2_n;
    unsigned L = (log2_n + 1) / 2;
    size_t blk = block_log2 < log2_n ? (size_t)1 << block_log2 : n;
    /* lo + hi + small_fwd + small_inv (2H - 1 entries each, rounded to 2H) */
    return ((size_t)1 << L) + (n >> L) + 2 * blk;
}

size_t cuzk_domain_bytes(unsigned log2_n)
{
    if (log2_n > CUZK_FR_TWO_ADICITY)
        return 0;
    return sizeof(cuzk_domain) + domain_elems(log2_n, POLY_BLOCK_LOG2) * sizeof(cuzk_fr);
}

void poly_domain_omega_pow(cuzk_fr *r, const cuzk_domain *d, size_t e)
{
    size_t mask = ((size_t)1 << d->lo_log2) - 1;
    cuzk_fr_mul(r, &d->lo[e & mask], &d->hi[e >> d->lo_log2]);
}

cuzk_err poly_domain_new_ex(cuzk_domain **out, unsigned log2_n, cuzk_roots family,
                            unsigned block_log2)
{
    if (!out)
        return cuzk_error_set(CUZK_EINVAL, "cuzk_domain_new: out is NULL");
    *out = NULL;
    if (log2_n > CUZK_FR_TWO_ADICITY)
        return cuzk_error_set(CUZK_EINVAL, "cuzk_domain_new: log2_n = %u exceeds the two-adicity %d",
                              log2_n, CUZK_FR_TWO_ADICITY);
    if (family != CUZK_ROOTS_SNARKJS && family != CUZK_ROOTS_BELLMAN)
        return cuzk_error_set(CUZK_EINVAL, "cuzk_domain_new: unknown root family %d", (int)family);
    if (block_log2 < 1 || block_log2 > 30)
        return cuzk_error_set(CUZK_EINVAL, "cuzk_domain_new: block_log2 = %u out of range",
                              block_log2);

    cuzk_domain *d = calloc(1, sizeof(*d));
    cuzk_fr *mem = malloc(domain_elems(log2_n, block_log2) * sizeof(cuzk_fr));
    if (!d || !mem) {
        free(d);
        free(mem);
        return cuzk_error_set(CUZK_ENOMEM, "cuzk_domain_new: %zu bytes for 2^%u twiddles",
                              domain_elems(log2_n, block_log2) * sizeof(cuzk_fr), log2_n);
    }
    d->n = (size_t)1 << log2_n;
    d->log2_n = log2_n;
    d->lo_log2 = (log2_n + 1) / 2;
    d->family = family;
    if (cuzk_fr_root_of_unity(&d->omega, log2_n, family) != CUZK_OK) {
        free(d);
        free(mem);
        return cuzk_error_set(CUZK_EINVAL, "cuzk_domain_new: no root of unity of order 2^%u",
                              log2_n);
    }
    cuzk_fr_inv_var(&d->omega_inv, &d->omega);
    cuzk_fr nf;
    cuzk_fr_set_u64(&nf, 1);
    for (unsigned i = 0; i < log2_n; i++)
        cuzk_fr_dbl(&nf, &nf);
    cuzk_fr_inv_var(&d->n_inv, &nf);

    size_t nlo = (size_t)1 << d->lo_log2, nhi = d->n >> d->lo_log2;
    size_t blk = block_log2 < log2_n ? (size_t)1 << block_log2 : d->n;
    d->lo = mem;
    d->hi = d->lo + nlo;
    d->small_fwd = d->hi + nhi;
    d->small_inv = d->small_fwd + blk;
    d->small_h = blk / 2;

    cuzk_fr_set_one(&d->lo[0]);
    for (size_t i = 1; i < nlo; i++)
        cuzk_fr_mul(&d->lo[i], &d->lo[i - 1], &d->omega);
    cuzk_fr step; /* omega^(2^L) */
    cuzk_fr_mul(&step, &d->lo[nlo - 1], &d->omega);
    cuzk_fr_set_one(&d->hi[0]);
    for (size_t i = 1; i < nhi; i++)
        cuzk_fr_mul(&d->hi[i], &d->hi[i - 1], &step);

    /* omega_(2h) = omega^(n/(2h)) */
    for (size_t h = 1; h <= d->small_h; h <<= 1) {
        size_t s = d->n / (2 * h);
        for (size_t j = 0; j < h; j++) {
            poly_domain_omega_pow(&d->small_fwd[h - 1 + j], d, j * s);
            poly_domain_omega_pow(&d->small_inv[h - 1 + j], d, (d->n - j * s) & (d->n - 1));
        }
    }
    *out = d;
    return CUZK_OK;
}

cuzk_err cuzk_domain_new(cuzk_domain **out, unsigned log2_n, cuzk_roots family)
{
    return poly_domain_new_ex(out, log2_n, family, POLY_BLOCK_LOG2);
}

void cuzk_domain_free(cuzk_domain *d)
{
    if (!d)
        return;
    free(d->lo);
    free(d);
}

size_t cuzk_domain_n(const cuzk_domain *d) { return d->n; }
unsigned cuzk_domain_log2(const cuzk_domain *d) { return d->log2_n; }
cuzk_roots cuzk_domain_family(const cuzk_domain *d) { return d->family; }
const cuzk_fr *cuzk_domain_omega(const cuzk_domain *d) { return &d->omega; }
const cuzk_fr *cuzk_domain_omega_inv(const cuzk_domain *d) { return &d->omega_inv; }
const cuzk_fr *cuzk_domain_n_inv(const cuzk_domain *d) { return &d->n_inv; }
