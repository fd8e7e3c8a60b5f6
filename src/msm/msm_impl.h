/*
 * Pippenger MSM, batch addition and the split MSM, written once for G1 and G2.
 * Include after defining MSM_G (g1 or g2), MSM_AFF, MSM_JAC and MSM_XYZZ.
 * Everything here is static except the public cuzk_G_* entry points, so each group's
 * translation unit carries its own copy.
 */
#include <stdlib.h>
#include <string.h>

#include "msm/msm_internal.h"
#include "util/parallel.h"

#define MSM_CAT3_(a, b, c) a##b##c
#define MSM_CAT3(a, b, c) MSM_CAT3_(a, b, c)
/* cuzk_<group><name>, e.g. MSM_FN(_xyzz_add_var) -> cuzk_g1_xyzz_add_var */
#define MSM_FN(name) MSM_CAT3(cuzk_, MSM_G, name)

#define MSM_DIGIT_BATCH 64   /* digits computed ahead of the bucket additions */
#define MSM_PREFETCH_AHEAD 4 /* bucket prefetch distance, in points */

/* ---- Pippenger ---- */

typedef struct {
    const MSM_AFF *bases;
    const cuzk_msm_scalar *scalars;
    size_t n;
    msm_plan plan;
    MSM_XYZZ *buckets;   /* plan.nworkers arrays of plan.nbuckets */
    MSM_XYZZ *partial;   /* per task: window k, range j at [k * chunks + j] */
} pip_ctx;

/* Task t: range j = t / nwin, window k = t % nwin. Accumulates the range's bases into the
 * window's buckets (bucket d-1 holds the bases with digit +-d, negated for -d), then sums
 * the buckets weighted by their index: with running = sum_{b' >= b} bucket[b'],
 * sum over b of running = sum_b (b+1) * bucket[b]. */
static void pip_task(pip_ctx *ctx, size_t t, unsigned worker)
{
    const msm_plan *p = &ctx->plan;
    unsigned k = (unsigned)(t % p->nwin), c = p->c;
    size_t j = t / p->nwin;
    size_t b = j * p->chunk_len, e = b + p->chunk_len;
    if (e > ctx->n)
        e = ctx->n;
    MSM_XYZZ *bk = ctx->buckets + (size_t)worker * p->nbuckets;
    for (size_t i = 0; i < p->nbuckets; i++)
        MSM_FN(_xyzz_set_inf)(&bk[i]);

    int32_t d[MSM_DIGIT_BATCH];
    for (size_t i = b; i < e; i += MSM_DIGIT_BATCH) {
        size_t m = e - i < MSM_DIGIT_BATCH ? e - i : MSM_DIGIT_BATCH;
        for (size_t q = 0; q < m; q++)
            d[q] = msm_digit(ctx->scalars[i + q].l, k, c);
        for (size_t q = 0; q < m; q++) {
            if (q + MSM_PREFETCH_AHEAD < m) {
                int32_t da = d[q + MSM_PREFETCH_AHEAD];
                if (da) {
                    __builtin_prefetch(&bk[(da > 0 ? da : -da) - 1], 1);
                    __builtin_prefetch(&ctx->bases[i + q + MSM_PREFETCH_AHEAD], 0);
                }
            }
            int32_t dq = d[q];
            if (dq > 0)
                MSM_FN(_xyzz_add_affine_var)(&bk[dq - 1], &bk[dq - 1], &ctx->bases[i + q]);
            else if (dq < 0)
                MSM_FN(_xyzz_sub_affine_var)(&bk[-dq - 1], &bk[-dq - 1], &ctx->bases[i + q]);
        }
    }

    MSM_XYZZ running, sum;
    MSM_FN(_xyzz_set_inf)(&running);
    MSM_FN(_xyzz_set_inf)(&sum);
    for (size_t q = p->nbuckets; q-- > 0;) {
        if (!MSM_FN(_xyzz_is_inf)(&bk[q]))
            MSM_FN(_xyzz_add_var)(&running, &running, &bk[q]);
        if (!MSM_FN(_xyzz_is_inf)(&running))
            MSM_FN(_xyzz_add_var)(&sum, &sum, &running);
    }
    ctx->partial[(size_t)k * p->chunks + j] = sum;
}

static void pip_range(void *vctx, size_t b, size_t e, unsigned worker)
{
    for (size_t t = b; t < e; t++)
        pip_task(vctx, t, worker);
}

/* r = sum s_i * P_i, canonical scalars known to be below 2^255. */
static cuzk_err pip_run(MSM_JAC *r, const MSM_AFF *bases, const cuzk_msm_scalar *scalars,
                        size_t n, const cuzk_msm_opts *opts)
{
    MSM_FN(_jac_set_inf)(r);
    if (n == 0)
        return CUZK_OK;
    unsigned T = msm_threads(opts ? opts->nthreads : 0);
    pip_ctx ctx = {.bases = bases, .scalars = scalars, .n = n};
    msm_plan_make(&ctx.plan, n, T, opts ? opts->window : 0, sizeof(MSM_XYZZ));
    const msm_plan *p = &ctx.plan;
    ctx.buckets = malloc((size_t)p->nworkers * p->nbuckets * sizeof(MSM_XYZZ));
    ctx.partial = malloc(p->ntasks * sizeof(MSM_XYZZ));
    if (!ctx.buckets || !ctx.partial) {
        free(ctx.buckets);
        free(ctx.partial);
        return cuzk_error_set(CUZK_ENOMEM, "msm: %zu buckets for %u threads (window %u)",
                              p->nbuckets, p->nworkers, p->c);
    }
    cuzk_parallel_for(p->ntasks, 1, p->nworkers, pip_range, &ctx);

    /* Horner over the windows: acc = 2^c * acc + W_k, from the top window down. */
    MSM_XYZZ acc;
    MSM_FN(_xyzz_set_inf)(&acc);
    for (unsigned k = p->nwin; k-- > 0;) {
        if (!MSM_FN(_xyzz_is_inf)(&acc))
            for (unsigned i = 0; i < p->c; i++)
                MSM_FN(_xyzz_dbl_var)(&acc, &acc);
        for (size_t j = 0; j < p->chunks; j++)
            MSM_FN(_xyzz_add_var)(&acc, &acc, &ctx.partial[(size_t)k * p->chunks + j]);
    }
    MSM_FN(_xyzz_to_jac)(r, &acc);
    free(ctx.buckets);
    free(ctx.partial);
    return CUZK_OK;
}

static cuzk_err check_opts(const cuzk_msm_opts *opts)
{
    if (opts && opts->window > CUZK_MSM_WINDOW_MAX)
        return cuzk_error_set(CUZK_EINVAL, "msm: window %u outside 0..%u", opts->window,
                              CUZK_MSM_WINDOW_MAX);
    return CUZK_OK;
}

unsigned MSM_FN(_msm_window)(size_t n, unsigned nthreads)
{
    msm_plan p;
    msm_plan_make(&p, n, nthreads, 0, sizeof(MSM_XYZZ));
    return p.c;
}

cuzk_err MSM_FN(_msm)(MSM_JAC *r, const MSM_AFF *bases, const cuzk_msm_scalar *scalars,
                      size_t n, const cuzk_msm_opts *opts)
{
    MSM_FN(_jac_set_inf)(r);
    cuzk_err err = check_opts(opts);
    if (err != CUZK_OK)
        return err;
    if (n > 0 && (!bases || !scalars))
        return cuzk_error_set(CUZK_EINVAL, "msm: NULL bases or scalars for %zu points", n);
    size_t bad = msm_find_oversized(scalars, n, opts ? opts->nthreads : 0);
    if (bad < n)
        return cuzk_error_set(CUZK_EINVAL, "msm: scalar %zu is not below 2^255", bad);
    return pip_run(r, bases, scalars, n, opts);
}

cuzk_err MSM_FN(_msm_fr)(MSM_JAC *r, cuzk_msm_scalar *scratch, const MSM_AFF *bases,
                         const cuzk_fr *scalars, size_t n, const cuzk_msm_opts *opts)
{
    MSM_FN(_jac_set_inf)(r);
    cuzk_err err = check_opts(opts);
    if (err != CUZK_OK)
        return err;
    if (n == 0)
        return CUZK_OK;
    if (!bases || !scalars)
        return cuzk_error_set(CUZK_EINVAL, "msm: NULL bases or scalars for %zu points", n);
    cuzk_msm_scalar *buf = scratch ? scratch : malloc(n * sizeof(*buf));
    if (!buf)
        return cuzk_error_set(CUZK_ENOMEM, "msm: scalar buffer for %zu points", n);
    cuzk_msm_scalars_from_fr(buf, scalars, n, opts ? opts->nthreads : 0);
    err = pip_run(r, bases, buf, n, opts);
    if (!scratch)
        free(buf);
    return err;
}

/* ---- batch addition ---- */

typedef struct {
    const MSM_AFF *bases;
    const uint64_t *bits;
    size_t n, words, chunk_words;
    MSM_XYZZ *partial;
} badd_ctx;

static void badd_words(const badd_ctx *c, MSM_XYZZ *acc, size_t wb, size_t we)
{
    for (size_t w = wb; w < we; w++) {
        uint64_t m = c->bits[w];
        size_t rem = c->n - w * 64;
        if (rem < 64)
            m &= (1ULL << rem) - 1;
        while (m) {
            size_t i = w * 64 + (size_t)__builtin_ctzll(m);
            m &= m - 1;
            MSM_FN(_xyzz_add_affine_var)(acc, acc, &c->bases[i]);
        }
    }
}

static void badd_range(void *vctx, size_t b, size_t e, unsigned worker)
{
    (void)worker;
    badd_ctx *c = vctx;
    for (size_t j = b; j < e; j++) {
        size_t wb = j * c->chunk_words, we = wb + c->chunk_words;
        if (we > c->words)
            we = c->words;
        MSM_FN(_xyzz_set_inf)(&c->partial[j]);
        badd_words(c, &c->partial[j], wb, we);
    }
}

cuzk_err MSM_FN(_batch_add)(MSM_JAC *r, const MSM_AFF *bases, size_t n, const uint64_t *bits,
                            unsigned nthreads)
{
    MSM_FN(_jac_set_inf)(r);
    if (n == 0)
        return CUZK_OK;
    if (!bases || !bits)
        return cuzk_error_set(CUZK_EINVAL, "batch_add: NULL bases or bits for %zu points", n);
    badd_ctx c = {.bases = bases, .bits = bits, .n = n, .words = CUZK_MSM_BITVEC_WORDS(n)};
    unsigned T = msm_threads(nthreads);
    size_t nchunks = (size_t)T * 4;
    if (nchunks > c.words)
        nchunks = c.words;
    MSM_XYZZ acc;
    MSM_FN(_xyzz_set_inf)(&acc);
    if (T == 1 || nchunks <= 1) {
        badd_words(&c, &acc, 0, c.words);
    } else {
        c.chunk_words = (c.words + nchunks - 1) / nchunks;
        nchunks = (c.words + c.chunk_words - 1) / c.chunk_words;
        c.partial = malloc(nchunks * sizeof(MSM_XYZZ));
        if (!c.partial)
            return cuzk_error_set(CUZK_ENOMEM, "batch_add: %zu partial sums", nchunks);
        cuzk_parallel_for(nchunks, 1, T, badd_range, &c);
        for (size_t j = 0; j < nchunks; j++)
            MSM_FN(_xyzz_add_var)(&acc, &acc, &c.partial[j]);
        free(c.partial);
    }
    MSM_FN(_xyzz_to_jac)(r, &acc);
    return CUZK_OK;
}

size_t MSM_FN(_gather)(MSM_AFF *out, const MSM_AFF *bases, size_t n, const uint64_t *bits,
                       unsigned nthreads)
{
    return msm_gather(out, bases, sizeof(*bases), MSM_GATHER_COPY, n, bits, nthreads);
}

/* ---- split MSM ---- */

static cuzk_err auto_run(MSM_JAC *r, cuzk_msm_counts *counts_out, const MSM_AFF *bases,
                         const void *scalars, bool mont, size_t n, const cuzk_msm_opts *opts)
{
    MSM_FN(_jac_set_inf)(r);
    cuzk_msm_counts cnt = {0};
    if (counts_out)
        *counts_out = cnt;
    cuzk_err err = check_opts(opts);
    if (err != CUZK_OK || n == 0)
        return err;
    if (!bases || !scalars)
        return cuzk_error_set(CUZK_EINVAL, "msm: NULL bases or scalars for %zu points", n);
    unsigned T = msm_threads(opts ? opts->nthreads : 0);
    if (!mont) {
        size_t bad = msm_find_oversized(scalars, n, T);
        if (bad < n)
            return cuzk_error_set(CUZK_EINVAL, "msm: scalar %zu is not below 2^255", bad);
    }
    size_t words = CUZK_MSM_BITVEC_WORDS(n);
    uint64_t *one = malloc(2 * words * sizeof(uint64_t));
    if (!one)
        return cuzk_error_set(CUZK_ENOMEM, "msm: bit vectors for %zu points", n);
    uint64_t *sig = one + words;
    if (mont)
        cuzk_msm_classify_fr(one, sig, &cnt, scalars, n, T);
    else
        cuzk_msm_classify(one, sig, &cnt, scalars, n, T);
    if (counts_out)
        *counts_out = cnt;

    if (!cuzk_msm_should_split(&cnt)) {
        free(one);
        if (mont)
            return MSM_FN(_msm_fr)(r, NULL, bases, scalars, n, opts);
        return pip_run(r, bases, scalars, n, opts);
    }

    MSM_JAC ones, tail;
    err = MSM_FN(_batch_add)(&ones, bases, n, one, T);
    MSM_FN(_jac_set_inf)(&tail);
    if (err == CUZK_OK && cnt.n_sig > 0) {
        MSM_AFF *tb = malloc(cnt.n_sig * sizeof(*tb));
        cuzk_msm_scalar *ts = malloc(cnt.n_sig * sizeof(*ts));
        if (!tb || !ts) {
            err = cuzk_error_set(CUZK_ENOMEM, "msm: tail of %zu points", cnt.n_sig);
        } else {
            MSM_FN(_gather)(tb, bases, n, sig, T);
            if (mont)
                cuzk_msm_gather_fr(ts, scalars, n, sig, T);
            else
                cuzk_msm_gather_scalars(ts, scalars, n, sig, T);
            err = pip_run(&tail, tb, ts, cnt.n_sig, opts);
        }
        free(tb);
        free(ts);
    }
    free(one);
    if (err != CUZK_OK)
        return err;
    MSM_FN(_jac_add_var)(r, &ones, &tail);
    return CUZK_OK;
}

cuzk_err MSM_FN(_msm_auto_fr)(MSM_JAC *r, cuzk_msm_counts *counts, const MSM_AFF *bases,
                              const cuzk_fr *scalars, size_t n, const cuzk_msm_opts *opts)
{
    return auto_run(r, counts, bases, scalars, true, n, opts);
}

cuzk_err MSM_FN(_msm_auto)(MSM_JAC *r, cuzk_msm_counts *counts, const MSM_AFF *bases,
                           const cuzk_msm_scalar *scalars, size_t n, const cuzk_msm_opts *opts)
{
    return auto_run(r, counts, bases, scalars, false, n, opts);
}
