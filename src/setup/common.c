/* SPDX-License-Identifier: Apache-2.0 */
/* Setup helpers: toxic waste, Lagrange basis at tau, weighted column sums, progress. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "setup/setup_internal.h"
#include "util/parallel.h"

void setup_wipe(void *p, size_t n)
{
    if (p && n)
        explicit_bzero(p, n);
}

unsigned setup_threads(const cuzk_setup_opts *opts)
{
    return opts && opts->nthreads ? opts->nthreads : cuzk_parallel_threads();
}

double setup_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

void setup_log(const cuzk_setup_opts *opts, double *t0, const char *fmt, ...)
{
    double now = setup_now_ms();
    if (opts && opts->progress) {
        va_list ap;
        va_start(ap, fmt);
        fputs("setup: ", opts->progress);
        vfprintf(opts->progress, fmt, ap);
        fprintf(opts->progress, " (%.0f ms)\n", now - *t0);
        fflush(opts->progress);
        va_end(ap);
    }
    *t0 = now;
}

/* tau^(2^k) */
static void fr_pow2k(cuzk_fr *r, const cuzk_fr *tau, unsigned k)
{
    *r = *tau;
    for (unsigned i = 0; i < k; i++)
        cuzk_fr_sqr(r, r);
}

cuzk_err setup_toxic_get(cuzk_setup_toxic *t, const cuzk_setup_opts *opts, unsigned log2_2n)
{
    cuzk_fr tn;
    if (opts && opts->test_toxic) {
        *t = *opts->test_toxic;
        fr_pow2k(&tn, &t->tau, log2_2n);
        bool bad = cuzk_fr_is_one(&tn) || cuzk_fr_is_zero(&t->alpha) ||
                   cuzk_fr_is_zero(&t->beta) || cuzk_fr_is_zero(&t->gamma) ||
                   cuzk_fr_is_zero(&t->delta);
        setup_wipe(&tn, sizeof tn);
        if (bad) {
            setup_wipe(t, sizeof *t);
            return cuzk_error_set(CUZK_EINVAL, "setup: test toxic waste: a zero scalar or tau "
                                               "in the evaluation domain");
        }
        return CUZK_OK;
    }
    cuzk_fr *s[5] = {&t->tau, &t->alpha, &t->beta, &t->gamma, &t->delta};
    for (int i = 0; i < 5; i++) {
        /* A zero scalar (or tau in the domain) has probability about n/r < 2^-220:
         * redraw rather than fail. */
        for (int tries = 0;; tries++) {
            cuzk_err e = cuzk_random_fr(s[i]);
            if (e != CUZK_OK) {
                setup_wipe(t, sizeof *t);
                return e;
            }
            bool bad = cuzk_fr_is_zero(s[i]);
            if (i == 0) {
                fr_pow2k(&tn, &t->tau, log2_2n);
                bad = bad || cuzk_fr_is_one(&tn);
                setup_wipe(&tn, sizeof tn);
            }
            if (!bad)
                break;
            if (tries > 16) {
                setup_wipe(t, sizeof *t);
                return cuzk_error_set(CUZK_ERANDOM, "setup: random source keeps returning "
                                                    "unusable values");
            }
        }
    }
    return CUZK_OK;
}

/* ---- Lagrange basis at tau ---- */

#define LAG_CHUNK 4096   /* values per batch inversion */

typedef struct {
    cuzk_fr *out;
    const cuzk_fr *tau, *k, *w_start, *w_step;   /* k = (tau^n - 1)/n */
    cuzk_fr *scratch;                             /* 2 * LAG_CHUNK per worker */
} lag_ctx;

static void lag_range(void *p, size_t begin, size_t end, unsigned worker)
{
    lag_ctx *c = p;
    cuzk_fr *den = c->scratch + (size_t)worker * 2 * LAG_CHUNK, *tmp = den + LAG_CHUNK;
    for (size_t b = begin; b < end; b += LAG_CHUNK) {
        size_t m = end - b < LAG_CHUNK ? end - b : LAG_CHUNK;
        /* w = omega^(start + step*b): w_start * w_step^b */
        cuzk_fr w;
        uint64_t e[1] = {(uint64_t)b};
        cuzk_fr_pow(&w, c->w_step, e, 1);
        cuzk_fr_mul(&w, &w, c->w_start);
        for (size_t j = 0; j < m; j++) {
            c->out[b + j] = w;                         /* omega^i */
            cuzk_fr_sub(&den[j], c->tau, &w);          /* tau - omega^i, nonzero */
            cuzk_fr_mul(&w, &w, c->w_step);
        }
        cuzk_fr_batch_inv_var(den, den, m, tmp);
        for (size_t j = 0; j < m; j++) {
            cuzk_fr_mul(&c->out[b + j], &c->out[b + j], &den[j]);
            cuzk_fr_mul(&c->out[b + j], &c->out[b + j], c->k);
        }
    }
}

cuzk_err setup_lagrange_at(cuzk_fr *out, unsigned log2_n, cuzk_roots family, const cuzk_fr *tau,
                           size_t start, size_t step, size_t count, unsigned nthreads)
{
    cuzk_fr omega, w_start, w_step, k, ninv;
    cuzk_err e = cuzk_fr_root_of_unity(&omega, log2_n, family);
    if (e != CUZK_OK)
        return e;
    if (count == 0)
        return CUZK_OK;
    uint64_t ex[1] = {(uint64_t)start};
    cuzk_fr_pow(&w_start, &omega, ex, 1);
    ex[0] = (uint64_t)step;
    cuzk_fr_pow(&w_step, &omega, ex, 1);
    fr_pow2k(&k, tau, log2_n);
    if (cuzk_fr_is_one(&k))
        return cuzk_error_set(CUZK_EINVAL, "setup: tau lies in the domain of size 2^%u", log2_n);
    cuzk_fr one;
    cuzk_fr_set_one(&one);
    cuzk_fr_sub(&k, &k, &one);
    /* 1/n = 2^-log2_n: halve 1 log2_n times via the inverse of 2^log2_n */
    cuzk_fr_set_one(&ninv);
    for (unsigned i = 0; i < log2_n; i++)
        cuzk_fr_dbl(&ninv, &ninv);
    cuzk_fr_inv(&ninv, &ninv);
    cuzk_fr_mul(&k, &k, &ninv);
    if (nthreads == 0)
        nthreads = cuzk_parallel_threads();
    lag_ctx c = {out, tau, &k, &w_start, &w_step,
                 malloc((size_t)nthreads * 2 * LAG_CHUNK * sizeof(cuzk_fr))};
    if (!c.scratch) {
        setup_wipe(&k, sizeof k);
        return cuzk_error_set(CUZK_ENOMEM, "setup: out of memory (Lagrange scratch)");
    }
    cuzk_parallel_for(count, LAG_CHUNK, nthreads, lag_range, &c);
    setup_wipe(c.scratch, (size_t)nthreads * 2 * LAG_CHUNK * sizeof(cuzk_fr));
    free(c.scratch);
    setup_wipe(&k, sizeof k);
    return CUZK_OK;
}

/* ---- weighted column sums ---- */

typedef struct {
    cuzk_fr *out;
    const uint64_t *start;   /* n_cols + 1 offsets into perm/prow */
    const uint64_t *perm;    /* term index k (into m->val) */
    const uint32_t *prow;    /* its row */
    const cuzk_fr *val, *lag;
} col_ctx;

static void col_range(void *p, size_t begin, size_t end, unsigned worker)
{
    (void)worker;
    col_ctx *c = p;
    for (size_t i = begin; i < end; i++) {
        cuzk_fr acc, t;
        cuzk_fr_set_zero(&acc);
        for (uint64_t q = c->start[i]; q < c->start[i + 1]; q++) {
            cuzk_fr_mul(&t, &c->val[c->perm[q]], &c->lag[c->prow[q]]);
            cuzk_fr_add(&acc, &acc, &t);
        }
        c->out[i] = acc;
    }
}

cuzk_err setup_column_eval(cuzk_fr *out, size_t n_cols, const cuzk_csr *m, size_t n_rows,
                           const cuzk_fr *lag, unsigned nthreads)
{
    if (n_rows > m->n_rows)
        return cuzk_error_set(CUZK_EINVAL, "setup: %zu rows asked of a matrix of %zu", n_rows,
                              m->n_rows);
    uint64_t nnz = m->row[n_rows] - m->row[0];
    uint64_t *start = calloc(n_cols + 2, sizeof *start);
    uint64_t *perm = malloc((nnz ? nnz : 1) * sizeof *perm);
    uint32_t *prow = malloc((nnz ? nnz : 1) * sizeof *prow);
    cuzk_err e = CUZK_OK;
    if (!start || !perm || !prow) {
        e = cuzk_error_set(CUZK_ENOMEM, "setup: out of memory transposing %llu terms",
                           (unsigned long long)nnz);
        goto done;
    }
    /* counting sort of the terms by column: start[c + 2] counts, then offsets */
    for (uint64_t k = m->row[0]; k < m->row[n_rows]; k++) {
        if (m->col[k] >= n_cols) {
            e = cuzk_error_set(CUZK_EFORMAT, "setup: term %llu names wire %u of %zu",
                               (unsigned long long)k, m->col[k], n_cols);
            goto done;
        }
        start[m->col[k] + 2]++;
    }
    for (size_t i = 2; i < n_cols + 2; i++)
        start[i] += start[i - 1];
    for (size_t j = 0; j < n_rows; j++)
        for (uint64_t k = m->row[j]; k < m->row[j + 1]; k++) {
            uint64_t q = start[m->col[k] + 1]++;
            perm[q] = k;
            prow[q] = (uint32_t)j;
        }
    /* now start[c] .. start[c + 1] is column c */
    col_ctx c = {out, start, perm, prow, m->val, lag};
    cuzk_parallel_for(n_cols, 1024, nthreads, col_range, &c);
done:
    free(start);
    free(perm);
    free(prow);
    return e;
}
