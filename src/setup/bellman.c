/* SPDX-License-Identifier: Apache-2.0 */
/* Groth16 setup in bellman's convention from given toxic waste (see bellman.h). */
#include <stdlib.h>
#include <string.h>

#include "setup/bellman.h"
#include "setup/setup_internal.h"
#include "util/parallel.h"
#ifdef CUZK_HAVE_CUDA
#include "cuzk/gpu.h"
#endif

cuzk_err cuzk_setup_toxic_random(cuzk_setup_toxic *t)
{
    cuzk_fr *v[5] = {&t->tau, &t->alpha, &t->beta, &t->gamma, &t->delta};
    for (int i = 0; i < 5; i++) {
        cuzk_err e = cuzk_random_fr(v[i]);
        if (e != CUZK_OK) {
            setup_wipe(t, sizeof *t);
            return cuzk_error_set(e, "setup: getrandom failed");
        }
    }
    return CUZK_OK;
}

/* ---- fixed-base multiplication on the CPU: src/setup/fixed_base.c's window tables (8 or
 * 12-bit windows by n, affine accumulators with one inversion per window per 1024
 * scalars), built for each call ---- */
#define FIXED_BASE_(G, AFF)                                                                   \
    cuzk_err cuzk_setup_##G##_batch_var(AFF *out, const cuzk_fr *s, size_t n,                 \
                                        unsigned nthreads)                                    \
    {                                                                                         \
        if (n == 0)                                                                           \
            return CUZK_OK;                                                                   \
        setup_##G##_table tab;                                                                \
        cuzk_err e = setup_##G##_table_new(&tab, setup_wbits_for(n), nthreads);               \
        if (e == CUZK_OK)                                                                     \
            e = setup_##G##_mul_batch_var(out, s, n, &tab, nthreads);                         \
        setup_##G##_table_free(&tab);                                                         \
        return e;                                                                             \
    }

FIXED_BASE_(g1, cuzk_g1_affine)
FIXED_BASE_(g2, cuzk_g2_affine)

/* ---- the backend of the vector points: CPU tables or the device ---- */

cuzk_err cuzk_setup_fb_init(cuzk_setup_fb *fb, const cuzk_setup_opts *opts)
{
    fb->gpu = 0;
    fb->device = opts ? opts->device : 0;
    fb->nthreads = opts ? opts->nthreads : 0;
    cuzk_backend b = opts ? opts->backend : CUZK_BACKEND_AUTO;
    if (b == CUZK_BACKEND_CPU)
        return CUZK_OK;
#ifdef CUZK_HAVE_CUDA
    bool avail = cuzk_gpu_available();
    if (b == CUZK_BACKEND_GPU) {
        if (!avail) {
            char why[256];
            snprintf(why, sizeof why, "%s", cuzk_error_detail());
            return cuzk_error_set(CUZK_EGPU, "setup: the GPU backend was asked for: %s", why);
        }
        if (fb->device < 0 || fb->device >= cuzk_gpu_device_count())
            return cuzk_error_set(CUZK_EINVAL, "setup: no CUDA device %d (%d visible)",
                                  fb->device, cuzk_gpu_device_count());
        fb->gpu = 2;
    } else if (avail && fb->device >= 0 && fb->device < cuzk_gpu_device_count()) {
        fb->gpu = 1;
    }
    return CUZK_OK;
#else
    if (b == CUZK_BACKEND_GPU)
        return cuzk_error_set(CUZK_EUNSUPPORTED, "setup: the GPU backend was asked for, but "
                                                 "this build has no CUDA backend");
    return CUZK_OK;
#endif
}

bool cuzk_setup_fb_wants_gpu(const cuzk_setup_fb *fb, size_t n)
{
    return n > 0 && (fb->gpu == 2 || (fb->gpu == 1 && n >= CUZK_SETUP_GPU_MIN));
}

const char *cuzk_setup_fb_name(const cuzk_setup_fb *fb, size_t n)
{
    return cuzk_setup_fb_wants_gpu(fb, n) ? "gpu" : "cpu";
}

#ifdef CUZK_HAVE_CUDA
/* After a device failure: returned under the GPU backend, else the CPU takes over. */
static cuzk_err fb_failed(cuzk_setup_fb *fb, cuzk_err e, const cuzk_setup_opts *opts)
{
    if (fb->gpu == 2)
        return e;
    if (opts && opts->progress) {
        fprintf(opts->progress, "setup: the device failed (%s); the CPU takes over\n",
                cuzk_error_detail());
        fflush(opts->progress);
    }
    fb->gpu = 0;
    return CUZK_OK;
}
#endif

#define FB_GPU_(G, AFF)                                                                       \
    cuzk_err cuzk_setup_fb_gpu_##G(cuzk_setup_fb *fb, AFF *out, const cuzk_fr *s, size_t n,   \
                                   const cuzk_setup_opts *opts, bool *done)                   \
    {                                                                                         \
        *done = false;                                                                        \
        (void)out;                                                                            \
        (void)s;                                                                              \
        (void)opts;                                                                           \
        if (!cuzk_setup_fb_wants_gpu(fb, n))                                                  \
            return CUZK_OK;                                                                   \
        FB_GPU_CALL_(G)                                                                       \
        return CUZK_OK;                                                                       \
    }
#ifdef CUZK_HAVE_CUDA
#define FB_GPU_CALL_(G)                                                                       \
    cuzk_err e = cuzk_gpu_fixed_base_##G(fb->device, out, s, n);                              \
    if (e != CUZK_OK)                                                                         \
        return fb_failed(fb, e, opts);                                                        \
    *done = true;
#else
#define FB_GPU_CALL_(G)
#endif
FB_GPU_(g1, cuzk_g1_affine)
FB_GPU_(g2, cuzk_g2_affine)

/* out[i] = s[i] G on the backend fb picks for n points. */
static cuzk_err fb_g1(cuzk_setup_fb *fb, const cuzk_setup_opts *opts, cuzk_g1_affine *out,
                      const cuzk_fr *s, size_t n)
{
    bool done;
    cuzk_err e = cuzk_setup_fb_gpu_g1(fb, out, s, n, opts, &done);
    if (e != CUZK_OK || done)
        return e;
    return cuzk_setup_g1_batch_var(out, s, n, fb->nthreads);
}

static cuzk_err fb_g2(cuzk_setup_fb *fb, const cuzk_setup_opts *opts, cuzk_g2_affine *out,
                      const cuzk_fr *s, size_t n)
{
    bool done;
    cuzk_err e = cuzk_setup_fb_gpu_g2(fb, out, s, n, opts, &done);
    if (e != CUZK_OK || done)
        return e;
    return cuzk_setup_g2_batch_var(out, s, n, fb->nthreads);
}

/* ---- scalars ---- */

/* lag[j] = zn * omega^j / (tau - omega^j) for j < n_rows */
typedef struct {
    cuzk_fr *lag, *scratch;
    const cuzk_fr *omega, *tau, *zn;
} lag_ctx;

static void lag_range(void *vc, size_t b, size_t e, unsigned w)
{
    (void)w;
    lag_ctx *c = vc;
    cuzk_fr om, *pw = c->scratch + b, *den = c->lag + b;
    uint64_t eb = b;
    cuzk_fr_pow(&om, c->omega, &eb, 1);
    for (size_t j = b; j < e; j++) {
        pw[j - b] = om;
        cuzk_fr_sub(&den[j - b], c->tau, &om);
        cuzk_fr_mul(&om, &om, c->omega);
    }
    /* den <- 1/den in place, the powers kept in pw; Montgomery's trick needs its own room */
    cuzk_fr *tmp = malloc((e - b) * sizeof *tmp);
    cuzk_fr *inv = malloc((e - b) * sizeof *inv);
    if (!tmp || !inv) {
        /* fall back to one inversion per element */
        for (size_t j = b; j < e; j++)
            cuzk_fr_inv_var(&den[j - b], &den[j - b]);
    } else {
        cuzk_fr_batch_inv_var(inv, den, e - b, tmp);
        memcpy(den, inv, (e - b) * sizeof *inv);
        setup_wipe(tmp, (e - b) * sizeof *tmp);   /* functions of tau */
        setup_wipe(inv, (e - b) * sizeof *inv);
    }
    free(tmp);
    free(inv);
    for (size_t j = b; j < e; j++) {
        cuzk_fr_mul(&den[j - b], &den[j - b], &pw[j - b]);
        cuzk_fr_mul(&den[j - b], &den[j - b], c->zn);
    }
}

/* u, v, w: the column sums of A, B, C weighted by lag (one matrix per worker) */
typedef struct {
    const cuzk_bellman_circuit *c;
    const cuzk_fr *lag;
    cuzk_fr *uvw[3];
} qap_ctx;

static void qap_worker(void *vc, unsigned w)
{
    qap_ctx *q = vc;
    if (w >= 3)
        return;
    const cuzk_csr *m = w == 0 ? &q->c->a : w == 1 ? &q->c->b : &q->c->c;
    cuzk_fr *acc = q->uvw[w], t;
    for (size_t j = 0; j < m->n_rows; j++) {
        for (uint64_t k = m->row[j]; k < m->row[j + 1]; k++) {
            cuzk_fr_mul(&t, &m->val[k], &q->lag[j]);
            cuzk_fr_add(&acc[m->col[k]], &acc[m->col[k]], &t);
        }
    }
    setup_wipe(&t, sizeof t);
}

/* h[i] = tau^i * zd for i < count */
typedef struct {
    cuzk_fr *h;
    const cuzk_fr *tau, *zd;
} hs_ctx;

static void hs_range(void *vc, size_t b, size_t e, unsigned w)
{
    (void)w;
    hs_ctx *c = vc;
    cuzk_fr p;
    uint64_t eb = b;
    cuzk_fr_pow(&p, c->tau, &eb, 1);
    cuzk_fr_mul(&p, &p, c->zd);
    for (size_t i = b; i < e; i++) {
        c->h[i] = p;
        cuzk_fr_mul(&p, &p, c->tau);
    }
    setup_wipe(&p, sizeof p);
}

static bool bit(const uint64_t *bits, size_t i) { return (bits[i / 64] >> (i % 64)) & 1; }

cuzk_err cuzk_setup_bellman(cuzk_params **out, const cuzk_bellman_circuit *c,
                            const cuzk_setup_toxic *t, unsigned nthreads)
{
    cuzk_setup_opts o = {.nthreads = nthreads, .backend = CUZK_BACKEND_CPU};
    return cuzk_setup_bellman_opts(out, c, t, &o);
}

cuzk_err cuzk_setup_bellman_opts(cuzk_params **out, const cuzk_bellman_circuit *c,
                                 const cuzk_setup_toxic *t, const cuzk_setup_opts *opts)
{
    *out = NULL;
    cuzk_setup_fb fb;
    cuzk_err e = cuzk_setup_fb_init(&fb, opts);
    if (e != CUZK_OK)
        return e;
    const unsigned nthreads = fb.nthreads;
    double t0 = setup_now_ms();
    if (!c || !t)
        return cuzk_error_set(CUZK_EINVAL, "setup: no circuit or no toxic waste");
    if (cuzk_fr_is_zero(&t->alpha) || cuzk_fr_is_zero(&t->beta) || cuzk_fr_is_zero(&t->gamma) ||
        cuzk_fr_is_zero(&t->delta))
        return cuzk_error_set(CUZK_EINVAL, "setup: alpha, beta, gamma and delta must be nonzero");
    size_t n = (size_t)1 << c->log2_domain, rows = c->n_rows, nv = c->n_vars;
    size_t npub1 = (size_t)c->n_public + 1, naux = nv - npub1;
    cuzk_fr omega, tau_n, z, zn, one, ninv, gamma_inv, delta_inv, zd, s1[3], s2[3];
    e = cuzk_fr_root_of_unity(&omega, c->log2_domain, CUZK_ROOTS_BELLMAN);
    if (e != CUZK_OK)
        return cuzk_error_set(e, "setup: no root of unity of order 2^%u", c->log2_domain);
    uint64_t nn = n;
    cuzk_fr_pow(&tau_n, &t->tau, &nn, 1);
    cuzk_fr_set_one(&one);
    cuzk_fr_sub(&z, &tau_n, &one);   /* Z(tau) = tau^n - 1 */
    setup_wipe(&tau_n, sizeof tau_n);
    if (cuzk_fr_is_zero(&z))
        return cuzk_error_set(CUZK_EINVAL, "setup: tau lies in the evaluation domain");
    cuzk_fr_set_u64(&ninv, n);
    cuzk_fr_inv(&ninv, &ninv);
    cuzk_fr_mul(&zn, &z, &ninv);
    cuzk_fr_inv(&gamma_inv, &t->gamma);
    cuzk_fr_inv(&delta_inv, &t->delta);
    cuzk_fr_mul(&zd, &z, &delta_inv);
    setup_wipe(&z, sizeof z);

    cuzk_params *p = calloc(1, sizeof *p);
    cuzk_fr *lag = malloc(rows * sizeof *lag), *scratch = malloc(rows * sizeof *scratch);
    cuzk_fr *uvw = calloc(3 * nv, sizeof *uvw);
    size_t n_scal = n - 1 > nv ? n - 1 : nv;
    cuzk_fr *sc = malloc(n_scal * sizeof *sc);
    if (p)
        p->path = strdup("");
    if (!p || !p->path || !lag || !scratch || !uvw || !sc) {
        e = cuzk_error_set(CUZK_ENOMEM, "setup: out of memory (domain 2^%u, %zu wires)",
                           c->log2_domain, nv);
        goto done;
    }
    lag_ctx lc = {lag, scratch, &omega, &t->tau, &zn};
    cuzk_parallel_for(rows, 4096, nthreads, lag_range, &lc);
    qap_ctx q = {c, lag, {uvw, uvw + nv, uvw + 2 * nv}};
    cuzk_parallel_run(3, qap_worker, &q);
    const cuzk_fr *u = q.uvw[0], *v = q.uvw[1], *w = q.uvw[2];
    /* the Lagrange values are done with: wiped and freed now (less held at once) */
    setup_wipe(lag, rows * sizeof *lag);
    setup_wipe(scratch, rows * sizeof *scratch);
    free(lag);
    free(scratch);
    lag = scratch = NULL;
    setup_log(opts, &t0, "Lagrange basis and wire polynomials at tau");

    /* ic and l: (beta u + alpha v + w) / gamma or / delta */
    for (size_t i = 0; i < nv; i++) {
        cuzk_fr s, x;
        cuzk_fr_mul(&s, &t->beta, &u[i]);
        cuzk_fr_mul(&x, &t->alpha, &v[i]);
        cuzk_fr_add(&s, &s, &x);
        cuzk_fr_add(&s, &s, &w[i]);
        cuzk_fr_mul(&sc[i], &s, i < npub1 ? &gamma_inv : &delta_inv);
        setup_wipe(&s, sizeof s);
        setup_wipe(&x, sizeof x);
        if (cuzk_fr_is_zero(&sc[i])) {
            e = cuzk_error_set(CUZK_EINVAL, "setup: wire %zu is in no constraint (its %s point "
                               "would be infinity)", i, i < npub1 ? "ic" : "l");
            goto done;
        }
    }
    p->n_ic = (uint32_t)npub1;
    p->n_l = (uint32_t)naux;
    p->ic = malloc(npub1 * sizeof *p->ic);
    p->l = malloc((naux ? naux : 1) * sizeof *p->l);
    if (!p->ic || !p->l) {
        e = cuzk_error_set(CUZK_ENOMEM, "setup: out of memory");
        goto done;
    }
    if ((e = fb_g1(&fb, opts, p->ic, sc, npub1)) != CUZK_OK ||
        (e = fb_g1(&fb, opts, p->l, sc + npub1, naux)) != CUZK_OK)
        goto done;
    setup_log(opts, &t0, "ic and l: %zu + %zu G1 points (%s)", npub1, naux,
              cuzk_setup_fb_name(&fb, naux));

    /* a: u_i of the A-dense wires; b: v_i of the B-dense ones */
    for (int which = 0; which < 2; which++) {
        const uint64_t *dens = which == 0 ? c->a_density : c->b_density;
        const cuzk_fr *vals = which == 0 ? u : v;
        size_t k = 0;
        for (size_t i = 0; i < nv; i++) {
            if (!bit(dens, i))
                continue;
            if (cuzk_fr_is_zero(&vals[i])) {
                e = cuzk_error_set(CUZK_EINVAL, "setup: wire %zu: its %s polynomial vanishes "
                                   "at tau (terms that cancel?)", i, which == 0 ? "A" : "B");
                goto done;
            }
            sc[k++] = vals[i];
        }
        if (which == 0) {
            p->n_a = (uint32_t)k;
            if (!(p->a = malloc((k ? k : 1) * sizeof *p->a))) {
                e = cuzk_error_set(CUZK_ENOMEM, "setup: out of memory");
                goto done;
            }
            if ((e = fb_g1(&fb, opts, p->a, sc, k)) != CUZK_OK)
                goto done;
            setup_log(opts, &t0, "a: %zu G1 points (%s)", k, cuzk_setup_fb_name(&fb, k));
        } else {
            p->n_b_g1 = p->n_b_g2 = (uint32_t)k;
            p->b_g1 = malloc((k ? k : 1) * sizeof *p->b_g1);
            p->b_g2 = malloc((k ? k : 1) * sizeof *p->b_g2);
            if (!p->b_g1 || !p->b_g2) {
                e = cuzk_error_set(CUZK_ENOMEM, "setup: out of memory");
                goto done;
            }
            if ((e = fb_g1(&fb, opts, p->b_g1, sc, k)) != CUZK_OK)
                goto done;
            setup_log(opts, &t0, "b_g1: %zu G1 points (%s)", k, cuzk_setup_fb_name(&fb, k));
            if ((e = fb_g2(&fb, opts, p->b_g2, sc, k)) != CUZK_OK)
                goto done;
            setup_log(opts, &t0, "b_g2: %zu G2 points (%s)", k, cuzk_setup_fb_name(&fb, k));
        }
    }

    /* h: tau^i Z(tau) / delta, i < n - 1 */
    hs_ctx hc = {sc, &t->tau, &zd};
    cuzk_parallel_for(n - 1, 4096, nthreads, hs_range, &hc);
    p->n_h = (uint32_t)(n - 1);
    if (!(p->h = malloc((n > 1 ? n - 1 : 1) * sizeof *p->h))) {
        e = cuzk_error_set(CUZK_ENOMEM, "setup: out of memory");
        goto done;
    }
    if ((e = fb_g1(&fb, opts, p->h, sc, n - 1)) != CUZK_OK)
        goto done;
    setup_log(opts, &t0, "h: %zu G1 points (%s)", n - 1, cuzk_setup_fb_name(&fb, n - 1));

    /* the verifying key */
    s1[0] = t->alpha, s1[1] = t->beta, s1[2] = t->delta;
    s2[0] = t->beta, s2[1] = t->gamma, s2[2] = t->delta;
    cuzk_g1_affine g1[3];
    cuzk_g2_affine g2[3];
    if ((e = cuzk_setup_g1_batch_var(g1, s1, 3, 1)) != CUZK_OK ||
        (e = cuzk_setup_g2_batch_var(g2, s2, 3, 1)) != CUZK_OK)
        goto done;
    p->alpha1 = g1[0];
    p->beta1 = g1[1];
    p->delta1 = g1[2];
    p->beta2 = g2[0];
    p->gamma2 = g2[1];
    p->delta2 = g2[2];
    e = CUZK_OK;
done:
    /* the scalars are functions of the toxic waste: wipe them */
    setup_wipe(s1, sizeof s1);
    setup_wipe(s2, sizeof s2);
    if (sc)
        setup_wipe(sc, n_scal * sizeof *sc);
    if (uvw)
        setup_wipe(uvw, 3 * nv * sizeof *uvw);
    if (lag)
        setup_wipe(lag, rows * sizeof *lag);
    if (scratch)
        setup_wipe(scratch, rows * sizeof *scratch);
    free(sc);
    free(uvw);
    free(lag);
    free(scratch);
    setup_wipe(&zn, sizeof zn);
    setup_wipe(&zd, sizeof zd);
    setup_wipe(&gamma_inv, sizeof gamma_inv);
    setup_wipe(&delta_inv, sizeof delta_inv);
    if (e != CUZK_OK) {
        cuzk_params_free(p);
        return e;
    }
    *out = p;
    return CUZK_OK;
}
