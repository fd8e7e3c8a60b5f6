/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Pippenger MSM, batch addition and the split MSM, written once for G1 and G2.
 * Include after defining MSM_G (g1 or g2), MSM_AFF, MSM_JAC, MSM_XYZZ, the coordinate field
 * MSM_F with its functions MSM_FF(name), its inversion MSM_F_INV (inv(0) = 0) and
 * MSM_INV_COST, the cost of MSM_F_INV in mixed additions of the group.
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
    size_t n;            /* terms: parts * n0; term h n0 + i is part h of scalar i times
                          * the image of base i for that part */
    size_t n0;           /* the caller's count */
    unsigned parts;      /* 1, or with an endomorphism (msm_internal.h) 2 (G1) or 4 (G2) */
    const MSM_AFF *bases2; /* parts > 1: the images, parts - 1 blocks of n0 */
#ifdef MSM_IFMA
    const MSM_VEC_PT *vbases; /* the n terms' bases for the vector buckets, or NULL */
#endif
    msm_plan plan;
    uint8_t *scratch;    /* plan.nworkers blocks of `stride` bytes (buckets etc.) */
    size_t stride;
    MSM_XYZZ *partial;   /* per task: window k, range j at [k * chunks + j] */
} pip_ctx;

/* A worker's block: nbuckets XYZZ buckets; with batch-affine buckets also nbuckets affine
 * buckets, the pending batch, its prefix products and one flag byte per bucket. */
typedef struct {
    MSM_F num, den;      /* lambda = num / den */
    MSM_F x2;            /* x of the point added to the bucket */
    size_t j;            /* bucket */
} ba_entry;

#define BA_PRESENT 1u    /* the affine bucket holds a point */
#define BA_BUSY 2u       /* the affine bucket waits in the current batch */
#define BA_OVF 4u        /* the XYZZ overflow bucket holds a point */

typedef struct {
    const MSM_AFF *p;    /* a base whose bucket was waiting in the batch */
    size_t j;
    bool neg;
} ba_def;

typedef struct {
    MSM_XYZZ *ovf;
    MSM_AFF *aff;
    ba_entry *ent;
    MSM_F *pref;
    uint8_t *flag;
    ba_def *def;         /* bases deferred to the next batch (at most dcap < cap) */
    size_t m, cap, nd, dcap;
} ba_state;

#define MSM_ALIGN(x) (((x) + 63) & ~(size_t)63)

static size_t worker_bytes(const msm_plan *p)
{
    size_t b = MSM_ALIGN(p->nbuckets * sizeof(MSM_XYZZ));
    if (p->batch)
        b += MSM_ALIGN(p->nbuckets * sizeof(MSM_AFF)) + MSM_ALIGN(p->batch * sizeof(ba_entry)) +
             MSM_ALIGN(p->batch * sizeof(MSM_F)) + MSM_ALIGN(p->nbuckets) +
             MSM_ALIGN(p->batch / 2 * sizeof(ba_def));
    return b;
}

static void ba_init(ba_state *s, uint8_t *blk, const msm_plan *p)
{
    s->ovf = (MSM_XYZZ *)(void *)blk;
    blk += MSM_ALIGN(p->nbuckets * sizeof(MSM_XYZZ));
    s->aff = (MSM_AFF *)(void *)blk;
    blk += MSM_ALIGN(p->nbuckets * sizeof(MSM_AFF));
    s->ent = (ba_entry *)(void *)blk;
    blk += MSM_ALIGN(p->batch * sizeof(ba_entry));
    s->pref = (MSM_F *)(void *)blk;
    blk += MSM_ALIGN(p->batch * sizeof(MSM_F));
    s->flag = blk;
    memset(s->flag, 0, p->nbuckets);
    blk += MSM_ALIGN(p->nbuckets);
    s->def = (ba_def *)(void *)blk;
    s->m = s->nd = 0;
    s->cap = p->batch;
    s->dcap = p->batch / 2;
}

/* Affine addition with a known 1/den: lambda = num/den, x3 = lambda^2 - x1 - x2,
 * y3 = lambda (x1 - x3) - y1 (for a doubling num = 3 x1^2, den = 2 y1 and x2 = x1). */
static inline void ba_apply(ba_state *s, const ba_entry *e, const MSM_F *dinv)
{
    MSM_AFF *a = &s->aff[e->j];
    MSM_F l, x3, t;
    MSM_FF(mul)(&l, &e->num, dinv);
    MSM_FF(sqr)(&x3, &l);
    MSM_FF(sub)(&x3, &x3, &a->x);
    MSM_FF(sub)(&x3, &x3, &e->x2);
    MSM_FF(sub)(&t, &a->x, &x3);
    MSM_FF(mul)(&t, &l, &t);
    MSM_FF(sub)(&a->y, &t, &a->y);
    a->x = x3;
    s->flag[e->j] &= (uint8_t)~BA_BUSY;
}

/* Completes the pending batch with one inversion (Montgomery's trick): with prefix
 * products pref[t] = den_0 ... den_t, 1/den_t = pref[t-1] / pref[t]. */
static void ba_flush(ba_state *s)
{
    size_t m = s->m;
    if (m == 0)
        return;
    s->pref[0] = s->ent[0].den;
    for (size_t t = 1; t < m; t++)
        MSM_FF(mul)(&s->pref[t], &s->pref[t - 1], &s->ent[t].den);
    MSM_F inv, dinv;
    MSM_F_INV(&inv, &s->pref[m - 1]);
    for (size_t t = m - 1; t > 0; t--) {
        MSM_FF(mul)(&dinv, &inv, &s->pref[t - 1]);
        MSM_FF(mul)(&inv, &inv, &s->ent[t].den);
        ba_apply(s, &s->ent[t], &dinv);
    }
    ba_apply(s, &s->ent[0], &inv);
    s->m = 0;
}

static void ba_flush_retry(ba_state *s);

/* The XYZZ overflow of bucket j += (neg ? -p : p). */
static void ovf_add(MSM_XYZZ *ovf, uint8_t *flag, size_t j, const MSM_AFF *p, bool neg)
{
    if (flag[j] & BA_OVF) {
        if (neg)
            MSM_FN(_xyzz_sub_affine_var)(&ovf[j], &ovf[j], p);
        else
            MSM_FN(_xyzz_add_affine_var)(&ovf[j], &ovf[j], p);
    } else {
        MSM_FN(_xyzz_from_affine)(&ovf[j], p);
        if (neg)
            MSM_FN(_xyzz_neg)(&ovf[j], &ovf[j]);
        flag[j] |= BA_OVF;
    }
}

/* bucket j += (neg ? -p : p). A base whose bucket already waits in the batch is deferred to
 * the next batch (defer, while there is room), else added to the bucket's XYZZ overflow. */
static inline void ba_add_(ba_state *s, size_t j, const MSM_AFF *p, bool neg, bool defer)
{
    if (MSM_FN(_affine_is_inf)(p))
        return;
    uint8_t f = s->flag[j];
    if (f & BA_BUSY) {
        if (defer && s->nd < s->dcap) {
            s->def[s->nd++] = (ba_def){p, j, neg};
            return;
        }
        ovf_add(s->ovf, s->flag, j, p, neg);
        return;
    }
    MSM_AFF *a = &s->aff[j];
    if (!(f & BA_PRESENT)) {
        if (neg)
            MSM_FN(_affine_neg)(a, p);
        else
            *a = *p;
        s->flag[j] = f | BA_PRESENT;
        return;
    }
    MSM_F y2;
    if (neg)
        MSM_FF(neg)(&y2, &p->y);
    else
        y2 = p->y;
    ba_entry *e = &s->ent[s->m];
    if (MSM_FF(eq)(&a->x, &p->x)) {
        /* a = -p, or a doubling of a 2-torsion point: the bucket becomes empty */
        if (!MSM_FF(eq)(&a->y, &y2) || MSM_FF(is_zero)(&y2)) {
            s->flag[j] = f & (uint8_t)~BA_PRESENT;
            return;
        }
        MSM_F t;
        MSM_FF(sqr)(&t, &p->x);
        MSM_FF(dbl)(&e->num, &t);
        MSM_FF(add)(&e->num, &e->num, &t);
        MSM_FF(dbl)(&e->den, &y2);
    } else {
        MSM_FF(sub)(&e->num, &y2, &a->y);
        MSM_FF(sub)(&e->den, &p->x, &a->x);
    }
    e->x2 = p->x;
    e->j = j;
    s->flag[j] = f | BA_BUSY;
    if (++s->m == s->cap)
        ba_flush_retry(s);
}

static inline void ba_add(ba_state *s, size_t j, const MSM_AFF *p, bool neg)
{
    ba_add_(s, j, p, neg, true);
}

/* The batch completed, then the deferred bases put into the next one (once: a second clash
 * goes to the overflow; at most dcap < cap of them, so this cannot fill the batch). */
static void ba_flush_retry(ba_state *s)
{
    ba_flush(s);
    size_t n = s->nd;
    s->nd = 0;
    for (size_t k = 0; k < n; k++)
        ba_add_(s, s->def[k].j, s->def[k].p, s->def[k].neg, false);
}

/* Everything added: the last batch, its deferred bases, and their batch. */
static void ba_finish(ba_state *s)
{
    ba_flush_retry(s);
    ba_flush(s);
}

/* Digits (window k) and bases of the m terms from i on. */
static void task_digits(const pip_ctx *ctx, size_t i, size_t m, unsigned k, int32_t *d,
                        const MSM_AFF **bp)
{
    unsigned c = ctx->plan.c;
    if (ctx->parts > 1) { /* term h n0 + ti: part h of scalar ti, on image h of base ti */
        const unsigned nl = CUZK_FR_LIMBS / ctx->parts;
        size_t h = i / ctx->n0, ti = i - h * ctx->n0;
        for (size_t q = 0; q < m; q++, ti++) {
            if (ti == ctx->n0) {
                h++;
                ti = 0;
            }
            d[q] = msm_digit_n(ctx->scalars[ti].l + h * nl, nl, k, c);
            bp[q] = h ? ctx->bases2 + (h - 1) * ctx->n0 + ti : ctx->bases + ti;
        }
    } else {
        for (size_t q = 0; q < m; q++) {
            d[q] = msm_digit(ctx->scalars[i + q].l, k, c);
            bp[q] = ctx->bases + i + q;
        }
    }
}

/* sum = sum over b of (b+1) * bucket[b], each bucket its affine part (flag BA_PRESENT)
 * plus its XYZZ overflow (BA_OVF): with running = sum_{b' >= b} bucket[b'], the sum of the
 * running values. */
static void ba_sum(MSM_XYZZ *sum, const uint8_t *flag, MSM_XYZZ *ovf, const MSM_AFF *aff,
                   size_t nb)
{
    MSM_XYZZ running;
    MSM_FN(_xyzz_set_inf)(&running);
    MSM_FN(_xyzz_set_inf)(sum);
    for (size_t q = nb; q-- > 0;) {
        uint8_t f = flag[q];
        if (f & BA_OVF) {
            if (f & BA_PRESENT)
                MSM_FN(_xyzz_add_affine_var)(&ovf[q], &ovf[q], &aff[q]);
            MSM_FN(_xyzz_add_var)(&running, &running, &ovf[q]);
        } else if (f & BA_PRESENT) {
            MSM_FN(_xyzz_add_affine_var)(&running, &running, &aff[q]);
        }
        if (!MSM_FN(_xyzz_is_inf)(&running))
            MSM_FN(_xyzz_add_var)(sum, sum, &running);
    }
}

#ifdef MSM_IFMA
/* ---- the vector buckets (msm_ifma.h): the same flags, deferral and overflow as ba_state,
 * the buckets and pending additions in the vector form, eight additions at a time ---- */
typedef struct {
    MSM_XYZZ *ovf;
    MSM_VEC_PT *bk;
    MSM_AFF *aff;        /* the buckets converted back, for the sums */
    msm_ifma_ent *ent;   /* .lib: the base in the library's form (overflow, special cases) */
    uint8_t *flag;
    msm_ifma_ent *def;   /* bases deferred to the next batch */
    uint32_t *special;
    void *work;
    size_t m, cap, nd, dcap;
} vb_state;

static size_t vb_worker_bytes(const msm_plan *p)
{
    return MSM_ALIGN(p->nbuckets * sizeof(MSM_XYZZ)) + MSM_ALIGN(p->nbuckets * sizeof(MSM_VEC_PT)) +
           MSM_ALIGN(p->nbuckets * sizeof(MSM_AFF)) + MSM_ALIGN(p->batch * sizeof(msm_ifma_ent)) +
           MSM_ALIGN(p->nbuckets) + MSM_ALIGN(p->batch / 2 * sizeof(msm_ifma_ent)) +
           MSM_ALIGN(p->batch * sizeof(uint32_t)) +
           MSM_ALIGN(msm_ifma_work_bytes(p->batch));
}

static void vb_init(vb_state *s, uint8_t *blk, const msm_plan *p)
{
#define VB_TAKE_(field, bytes) (s->field = (void *)blk, blk += MSM_ALIGN(bytes))
    VB_TAKE_(ovf, p->nbuckets * sizeof(MSM_XYZZ));
    VB_TAKE_(bk, p->nbuckets * sizeof(MSM_VEC_PT));
    VB_TAKE_(aff, p->nbuckets * sizeof(MSM_AFF));
    VB_TAKE_(ent, p->batch * sizeof(msm_ifma_ent));
    VB_TAKE_(flag, p->nbuckets);
    VB_TAKE_(def, p->batch / 2 * sizeof(msm_ifma_ent));
    VB_TAKE_(special, p->batch * sizeof(uint32_t));
    VB_TAKE_(work, msm_ifma_work_bytes(p->batch));
#undef VB_TAKE_
    memset(s->flag, 0, p->nbuckets);
    s->m = s->nd = 0;
    s->cap = p->batch;
    s->dcap = p->batch / 2;
}

static void vb_flush(vb_state *s)
{
    if (s->m == 0)
        return;
    size_t nsp = MSM_VEC_FN(flush)(s->bk, s->ent, s->m, s->work, s->special);
    for (size_t t = 0; t < s->m; t++)
        s->flag[s->ent[t].j] &= (uint8_t)~BA_BUSY;
    for (size_t q = 0; q < nsp; q++) { /* same x as the bucket: the XYZZ overflow doubles */
        const msm_ifma_ent *e = &s->ent[s->special[q]];
        ovf_add(s->ovf, s->flag, e->j, e->lib, e->neg != 0);
    }
    s->m = 0;
}

static void vb_flush_retry(vb_state *s);

static inline void vb_add_(vb_state *s, size_t j, const MSM_AFF *p, const MSM_VEC_PT *pv, bool neg,
                           bool defer)
{
    if (MSM_VEC_FN(is_inf)(pv)) /* as the library's (0, 0) */
        return;
    uint8_t f = s->flag[j];
    msm_ifma_ent e = {(uint32_t)j, neg, pv, p};
    if (f & BA_BUSY) {
        if (defer && s->nd < s->dcap) {
            s->def[s->nd++] = e;
            return;
        }
        ovf_add(s->ovf, s->flag, j, p, neg);
        return;
    }
    if (!(f & BA_PRESENT)) {
        if (neg)
            MSM_VEC_FN(neg)(&s->bk[j], pv);
        else
            s->bk[j] = *pv;
        s->flag[j] = f | BA_PRESENT;
        return;
    }
    s->ent[s->m] = e;
    s->flag[j] = f | BA_BUSY;
    if (++s->m == s->cap)
        vb_flush_retry(s);
}

static void vb_flush_retry(vb_state *s)
{
    vb_flush(s);
    size_t n = s->nd;
    s->nd = 0;
    for (size_t k = 0; k < n; k++)
        vb_add_(s, s->def[k].j, s->def[k].lib, s->def[k].p, s->def[k].neg != 0, false);
}

typedef struct {
    MSM_VEC_PT *out;
    const pip_ctx *ctx;
} vconv_ctx;

static void vconv_range(void *vctx, size_t b, size_t e, unsigned worker)
{
    (void)worker;
    const vconv_ctx *c = vctx;
    size_t n0 = c->ctx->n0;
    if (b < n0)
        MSM_VEC_FN(from_affine)(c->out + b, c->ctx->bases + b, (e < n0 ? e : n0) - b);
    if (e > n0) {
        size_t s = b > n0 ? b : n0;
        MSM_VEC_FN(from_affine)(c->out + s, c->ctx->bases2 + (s - n0), e - s);
    }
}
#endif

/* Task t: range j = t / nwin, window k = t % nwin. Accumulates the range's bases into the
 * window's buckets (bucket d-1 holds the bases with digit +-d, negated for -d): XYZZ ones,
 * batch-affine ones (ba_state) or, with ctx->vbases, the vector ones (vb_state); then sums
 * the buckets weighted by their index. */
static void pip_task(pip_ctx *ctx, size_t t, unsigned worker)
{
    const msm_plan *p = &ctx->plan;
    unsigned k = (unsigned)(t % p->nwin);
    size_t j = t / p->nwin;
    size_t b = j * p->chunk_len, e = b + p->chunk_len;
    if (e > ctx->n)
        e = ctx->n;
    uint8_t *blk = ctx->scratch + (size_t)worker * ctx->stride;
    MSM_XYZZ *bk = (MSM_XYZZ *)(void *)blk;
    ba_state ba;
#ifdef MSM_IFMA
    vb_state vb;
    const MSM_VEC_PT *vbases = ctx->vbases;
    if (vbases)
        vb_init(&vb, blk, p);
    else
#endif
    if (p->batch)
        ba_init(&ba, blk, p);
    else
        for (size_t i = 0; i < p->nbuckets; i++)
            MSM_FN(_xyzz_set_inf)(&bk[i]);

    int32_t d[MSM_DIGIT_BATCH];
    const MSM_AFF *bp[MSM_DIGIT_BATCH];
    for (size_t i = b; i < e; i += MSM_DIGIT_BATCH) {
        size_t m = e - i < MSM_DIGIT_BATCH ? e - i : MSM_DIGIT_BATCH;
        task_digits(ctx, i, m, k, d, bp);
        for (size_t q = 0; q < m; q++) {
            if (q + MSM_PREFETCH_AHEAD < m) {
                int32_t da = d[q + MSM_PREFETCH_AHEAD];
                if (da) {
                    size_t ja = (size_t)(da > 0 ? da : -da) - 1;
#ifdef MSM_IFMA
                    if (vbases) { /* 128 or 256 bytes each: their first two lines */
                        const uint8_t *vb_b = (const uint8_t *)&vb.bk[ja];
                        const uint8_t *vb_p = (const uint8_t *)&vbases[i + q + MSM_PREFETCH_AHEAD];
                        __builtin_prefetch(vb_b, 1);
                        __builtin_prefetch(vb_b + 64, 1);
                        __builtin_prefetch(vb_p, 0);
                        __builtin_prefetch(vb_p + 64, 0);
                    } else
#endif
                    if (p->batch)
                        __builtin_prefetch(&ba.aff[ja], 1);
                    else
                        __builtin_prefetch(&bk[ja], 1);
                    __builtin_prefetch(bp[q + MSM_PREFETCH_AHEAD], 0);
                }
            }
            int32_t dq = d[q];
#ifdef MSM_IFMA
            if (vbases) {
                if (dq)
                    vb_add_(&vb, (size_t)(dq > 0 ? dq : -dq) - 1, bp[q], &vbases[i + q], dq < 0, true);
                continue;
            }
#endif
            if (p->batch) {
                if (dq)
                    ba_add(&ba, (size_t)(dq > 0 ? dq : -dq) - 1, bp[q], dq < 0);
            } else if (dq > 0) {
                MSM_FN(_xyzz_add_affine_var)(&bk[dq - 1], &bk[dq - 1], bp[q]);
            } else if (dq < 0) {
                MSM_FN(_xyzz_sub_affine_var)(&bk[-dq - 1], &bk[-dq - 1], bp[q]);
            }
        }
    }

    MSM_XYZZ *out = &ctx->partial[(size_t)k * p->chunks + j];
#ifdef MSM_IFMA
    if (vbases) {
        vb_flush_retry(&vb);
        vb_flush(&vb);
        MSM_VEC_FN(to_affine_sel)(vb.aff, vb.bk, vb.flag, BA_PRESENT, p->nbuckets);
        ba_sum(out, vb.flag, vb.ovf, vb.aff, p->nbuckets);
        return;
    }
#endif
    if (p->batch) {
        ba_finish(&ba);
        ba_sum(out, ba.flag, ba.ovf, ba.aff, p->nbuckets);
        return;
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
    *out = sum;
}

static void pip_range(void *vctx, size_t b, size_t e, unsigned worker)
{
    for (size_t t = b; t < e; t++)
        pip_task(vctx, t, worker);
}

/* r = sum s_i * P_i, canonical scalars known to be below 2^255. */
/* The parts each scalar is split into for n bases: MSM_ENDO_PARTS with the group's
 * endomorphism (its images and split scalars cost memory, so only up to MSM_ENDO_MAX), else 1. */
static unsigned endo_parts(size_t n)
{
#ifdef MSM_ENDO_PARTS
    if (n >= 2 && n <= MSM_ENDO_MAX)
        return MSM_ENDO_PARTS;
#endif
    (void)n;
    return 1;
}

/* The vector buckets (MSM_IFMA) for n terms: where the CPU has them, the caller allows them
 * and their copy of the bases (128 bytes a term for G1, 256 for G2) stays under 256 MiB. */
#ifdef MSM_IFMA
#define MSM_VEC_MAX_TERMS (((size_t)256 << 20) / sizeof(MSM_VEC_PT)) /* 256 MiB */
#ifndef MSM_VEC_COST_BA
#define MSM_VEC_COST_BA 0.25 /* a vector batch-affine addition, relative to a mixed one */
#endif
#ifndef MSM_VEC_INV_COST
#define MSM_VEC_INV_COST 14.0 /* a flush's inversion of eight lanes (about 6 us), the same */
#endif
#else
#define MSM_VEC_COST_BA 0.0
#define MSM_VEC_INV_COST 0.0
#endif
static bool use_vec(size_t n, const cuzk_msm_opts *opts)
{
#ifdef MSM_IFMA
    return !(opts && (opts->flags & (CUZK_MSM_XYZZ_ONLY | CUZK_MSM_SCALAR_ONLY))) &&
           n <= MSM_VEC_MAX_TERMS && msm_ifma_available();
#else
    (void)n, (void)opts;
    return false;
#endif
}

/* The plan for n terms of bits-bit parts, with the bucket kind's own costs; *vec: whether
 * the vector buckets may be used. */
static void plan_for(msm_plan *p, bool *vec, size_t n, unsigned bits, unsigned T,
                     const cuzk_msm_opts *opts)
{
    bool v = use_vec(n, opts);
    double inv = opts && (opts->flags & CUZK_MSM_XYZZ_ONLY) ? 0.0 : v ? MSM_VEC_INV_COST : MSM_INV_COST;
    msm_plan_make(p, n, bits, T, opts ? opts->window : 0, sizeof(MSM_XYZZ), sizeof(MSM_AFF), inv,
                  v ? MSM_VEC_COST_BA : 0.0);
    if (vec)
        *vec = v;
}

static cuzk_err pip_run(MSM_JAC *r, const MSM_AFF *bases, const cuzk_msm_scalar *scalars,
                        size_t n, const cuzk_msm_opts *opts)
{
    MSM_FN(_jac_set_inf)(r);
    if (n == 0)
        return CUZK_OK;
    unsigned T = msm_threads(opts ? opts->nthreads : 0);
    pip_ctx ctx = {.bases = bases, .scalars = scalars, .n = n, .n0 = n, .parts = 1};
    void *endo_mem = NULL;
#ifdef MSM_ENDO_PARTS
    /* the endomorphism: MSM_ENDO_PARTS n terms of 256 / MSM_ENDO_PARTS-bit scalars over the
     * bases and their images, a fraction of the windows (the bucket sums are the part that
     * shrinks) */
    if (endo_parts(n) > 1) {
        size_t ib = MSM_ALIGN((MSM_ENDO_PARTS - 1) * n * sizeof(MSM_AFF));
        endo_mem = aligned_alloc(64, MSM_ALIGN(ib + n * sizeof(cuzk_msm_scalar)));
        if (endo_mem) {
            MSM_AFF *b2 = endo_mem;
            cuzk_msm_scalar *s2 = (cuzk_msm_scalar *)(void *)((uint8_t *)endo_mem + ib);
            MSM_ENDO_BASES(b2, bases, n, T);
            msm_endo_split(s2, scalars, n, MSM_ENDO_PARTS, T);
            ctx.bases2 = b2;
            ctx.scalars = s2;
            ctx.parts = MSM_ENDO_PARTS;
            ctx.n = MSM_ENDO_PARTS * n;
        }
    }
#endif
    bool vec;
    plan_for(&ctx.plan, &vec, ctx.n, 256 / ctx.parts + 1, T, opts);
    const msm_plan *p = &ctx.plan;
    void *vec_mem = NULL;
#ifdef MSM_IFMA
    if (vec && p->batch && (vec_mem = aligned_alloc(64, ctx.n * sizeof(MSM_VEC_PT))) != NULL) {
        vconv_ctx vc = {.out = vec_mem, .ctx = &ctx};
        cuzk_parallel_for(ctx.n, 4096, T, vconv_range, &vc);
        ctx.vbases = vec_mem;
    }
    ctx.stride = ctx.vbases ? vb_worker_bytes(p) : worker_bytes(p);
#else
    ctx.stride = worker_bytes(p);
#endif
    ctx.scratch = aligned_alloc(64, (size_t)p->nworkers * ctx.stride);
    ctx.partial = malloc(p->ntasks * sizeof(MSM_XYZZ));
    if (!ctx.scratch || !ctx.partial) {
        free(ctx.scratch);
        free(ctx.partial);
        free(vec_mem);
        free(endo_mem);
        return cuzk_error_set(CUZK_ENOMEM, "msm: %zu buckets for %u threads (window %u)",
                              p->nbuckets, p->nworkers, p->c);
    }
    cuzk_parallel_for(p->ntasks, 1, p->nworkers, pip_range, &ctx);
    free(vec_mem);
    free(endo_mem);

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
    free(ctx.scratch);
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
    unsigned parts = endo_parts(n); /* as pip_run */
    plan_for(&p, NULL, parts * n, 256 / parts + 1, nthreads, NULL);
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

/* The same sum with affine additions sharing one inversion per batch (about 6 field
 * products per point against 10 for an XYZZ mixed addition): the points go round-robin into
 * BADD_BUCKETS affine buckets through the batch-affine machinery of the MSM (which also
 * handles P + P and P + (-P)), then the buckets are added up. blk: worker_bytes(plan). */
#define BADD_BUCKETS 256
#define BADD_MIN_WORDS 16   /* below 1024 bits the plain additions are as fast */

static void badd_words_affine(const badd_ctx *c, MSM_XYZZ *acc, size_t wb, size_t we, uint8_t *blk)
{
    msm_plan p = {.nbuckets = BADD_BUCKETS, .batch = BADD_BUCKETS};
    ba_state s;
    ba_init(&s, blk, &p);
    size_t j = 0;
    for (size_t w = wb; w < we; w++) {
        uint64_t m = c->bits[w];
        size_t rem = c->n - w * 64;
        if (rem < 64)
            m &= (1ULL << rem) - 1;
        while (m) {
            size_t i = w * 64 + (size_t)__builtin_ctzll(m);
            m &= m - 1;
            ba_add(&s, j, &c->bases[i], false);
            j = j + 1 == BADD_BUCKETS ? 0 : j + 1;
        }
    }
    ba_finish(&s);
    for (size_t k = 0; k < BADD_BUCKETS; k++) {
        if (s.flag[k] & BA_PRESENT)
            MSM_FN(_xyzz_add_affine_var)(acc, acc, &s.aff[k]);
        if (s.flag[k] & BA_OVF)
            MSM_FN(_xyzz_add_var)(acc, acc, &s.ovf[k]);
    }
}

static void badd_chunk(const badd_ctx *c, MSM_XYZZ *acc, size_t wb, size_t we)
{
    uint8_t *blk = NULL;
    if (we - wb >= BADD_MIN_WORDS) {
        msm_plan p = {.nbuckets = BADD_BUCKETS, .batch = BADD_BUCKETS};
        blk = malloc(worker_bytes(&p));
    }
    if (blk)
        badd_words_affine(c, acc, wb, we, blk);
    else
        badd_words(c, acc, wb, we); /* small, or no memory for the batch: plain additions */
    free(blk);
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
        badd_chunk(c, &c->partial[j], wb, we);
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
        badd_chunk(&c, &acc, 0, c.words);
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
