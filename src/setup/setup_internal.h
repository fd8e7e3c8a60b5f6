/* Setup internals: fixed-base tables, Lagrange evaluation, column sums. */
#ifndef CUZK_SETUP_INTERNAL_H
#define CUZK_SETUP_INTERNAL_H

#include <stdio.h>

#include "cuzk/io.h"
#include "cuzk/setup.h"

/* Fixed-base window table: digit d (1 .. 2^W - 1) of window j (bits [W j, W j + W)) of the
 * scalar selects T[j][d - 1] = d * 2^(W j) * G. k*G is then one mixed addition per nonzero
 * window: 32 of them for W = 8, instead of 255 doublings and additions. */
#ifndef SETUP_WBITS
#define SETUP_WBITS 8                                       /* window width in bits */
#endif
#if SETUP_WBITS < 2 || SETUP_WBITS > 16
#error "SETUP_WBITS: window width from 2 to 16 bits"
#endif
#define SETUP_NWIN ((255 + SETUP_WBITS - 1) / SETUP_WBITS)  /* windows covering r < 2^255 */
#define SETUP_WSIZE ((1u << SETUP_WBITS) - 1)               /* nonzero digits per window */

typedef struct { cuzk_g1_affine *t; } setup_g1_table;  /* SETUP_NWIN * SETUP_WSIZE points */
typedef struct { cuzk_g2_affine *t; } setup_g2_table;

cuzk_err setup_g1_table_new(setup_g1_table *tab) CUZK_WUR;   /* of the generator */
cuzk_err setup_g2_table_new(setup_g2_table *tab) CUZK_WUR;
void setup_g1_table_free(setup_g1_table *tab);
void setup_g2_table_free(setup_g2_table *tab);

/* out[i] = k[i] * G for i < n on nthreads threads (affine; k = 0 gives infinity).
 * Variable time in k. CUZK_ENOMEM. */
cuzk_err setup_g1_mul_batch_var(cuzk_g1_affine *out, const cuzk_fr *k, size_t n,
                                const setup_g1_table *tab, unsigned nthreads) CUZK_WUR;
cuzk_err setup_g2_mul_batch_var(cuzk_g2_affine *out, const cuzk_fr *k, size_t n,
                                const setup_g2_table *tab, unsigned nthreads) CUZK_WUR;

/* One scalar, variable time (tests compare it with cuzk_g1_mul_fr). */
void setup_g1_mul_one_var(cuzk_g1_jac *r, const cuzk_fr *k, const setup_g1_table *tab);
void setup_g2_mul_one_var(cuzk_g2_jac *r, const cuzk_fr *k, const setup_g2_table *tab);

/* Lagrange basis of the domain of size 2^log2_n of a root family at tau, for the
 * indices start + step*j, j < count (start + step*(count-1) < n):
 *   L_i(tau) = (tau^n - 1)/n * omega^i / (tau - omega^i).
 * O(count) with one batch inversion. CUZK_EINVAL when tau^n = 1 (tau in the domain), or
 * log2_n too large; CUZK_ENOMEM. */
cuzk_err setup_lagrange_at(cuzk_fr *out, unsigned log2_n, cuzk_roots family,
                           const cuzk_fr *tau, size_t start, size_t step, size_t count,
                           unsigned nthreads) CUZK_WUR;

/* out[i] = sum over rows j < n_rows of m, of m[j][i] * lag[j], for i < n_cols (column
 * sums weighted by the row values). Columns >= n_cols are refused (CUZK_EFORMAT). Runs on
 * nthreads threads through a column-major copy of the structure. CUZK_ENOMEM. */
cuzk_err setup_column_eval(cuzk_fr *out, size_t n_cols, const cuzk_csr *m, size_t n_rows,
                           const cuzk_fr *lag, unsigned nthreads) CUZK_WUR;

/* Fresh toxic waste from getrandom (or a copy of opts->test_toxic), checked: nothing zero,
 * tau not a root of unity of order dividing 2^log2_2n. */
cuzk_err setup_toxic_get(cuzk_setup_toxic *t, const cuzk_setup_opts *opts,
                         unsigned log2_2n) CUZK_WUR;
/* Overwrites memory that held secrets in a way the compiler does not remove. */
void setup_wipe(void *p, size_t n);

/* Progress line "setup: <stage> <ms> ms" when opts->progress is set. */
double setup_now_ms(void);
void setup_log(const cuzk_setup_opts *opts, double *t0, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Elementwise helpers on nthreads threads. */
unsigned setup_threads(const cuzk_setup_opts *opts);

#endif
