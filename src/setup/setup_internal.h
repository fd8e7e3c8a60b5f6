/* SPDX-License-Identifier: Apache-2.0 */
/* Setup internals: fixed-base tables, Lagrange evaluation, column sums. */
#ifndef CUZK_SETUP_INTERNAL_H
#define CUZK_SETUP_INTERNAL_H

#include <stdio.h>

#include "cuzk/io.h"
#include "cuzk/setup.h"

/* Fixed-base window table of width W bits: digit d (1 .. 2^W - 1) of window j (bits
 * [W j, W j + W)) of the scalar selects T[j][d - 1] = d * 2^(W j) * G. k*G is then one
 * mixed addition per nonzero window (32 for W = 8, 22 for W = 12) instead of 255 doublings
 * and additions. The table holds ceil(255/W) (2^W - 1) points: W = 12 is 8.6 MiB in G1,
 * 17 MiB in G2, worth building for many points only (setup_wbits_for). */
#define SETUP_WBITS_MIN 2
#define SETUP_WBITS_MAX 16
#ifndef SETUP_WBITS_SMALL
#define SETUP_WBITS_SMALL 8      /* width for fewer than SETUP_WBITS_LARGE_FROM points */
#endif
#ifndef SETUP_WBITS_LARGE
#define SETUP_WBITS_LARGE 12     /* width for many points (2^20 G1: 0.72x the time of 8) */
#endif
#ifndef SETUP_WBITS_LARGE_FROM
#define SETUP_WBITS_LARGE_FROM ((size_t)1 << 16)   /* points of the largest vector */
#endif
#if SETUP_WBITS_SMALL < SETUP_WBITS_MIN || SETUP_WBITS_LARGE > SETUP_WBITS_MAX
#error "setup window widths must lie in [SETUP_WBITS_MIN, SETUP_WBITS_MAX]"
#endif

typedef struct {
    cuzk_g1_affine *t;   /* nwin * wsize points */
    unsigned wbits, nwin, wsize;
} setup_g1_table;
typedef struct {
    cuzk_g2_affine *t;
    unsigned wbits, nwin, wsize;
} setup_g2_table;

/* The window width for a setup whose largest vector has n points. */
unsigned setup_wbits_for(size_t n);
/* Tables of the generator, built on nthreads threads. CUZK_EINVAL for a width outside
 * [SETUP_WBITS_MIN, SETUP_WBITS_MAX], CUZK_ENOMEM. */
cuzk_err setup_g1_table_new(setup_g1_table *tab, unsigned wbits, unsigned nthreads) CUZK_WUR;
cuzk_err setup_g2_table_new(setup_g2_table *tab, unsigned wbits, unsigned nthreads) CUZK_WUR;
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
