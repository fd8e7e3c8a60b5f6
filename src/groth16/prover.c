/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Groth16 prover: the stages of DESIGN.md section 2 for a batch of witnesses. The batch, B_G2's
 * CPU thread, the CPU backend's stages and the epilogue are here; on the GPU backend the
 * partitions go through the GPU pipeline (gpu_pipeline.h states what each side does).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuzk/groth16.h"
#include "groth16/gpu_pipeline.h"
#include "groth16/pk.h"
#include "cuzk/msm.h"
#include "cuzk/poly.h"
#include "util/parallel.h"
#include "util/timing.h"

struct cuzk_pending {
    cuzk_pk_view pk_view;      /* a copy: the caller's view may go away after start */
    const cuzk_pk_view *pk;
    size_t n_wit;
    unsigned nthreads;
    /* The witnesses (wv[j]: partition j's): copies in w when B_G2's CPU thread reads them
     * after start returns; else (B_G2 on the device) the caller's, read during start only. */
    cuzk_fr *w;                 /* n_wit * n_vars copies, or NULL */
    const cuzk_fr **wv;
    cuzk_fr *r, *s;             /* n_wit each */
    cuzk_g1_jac *a, *b1, *l, *h;
    cuzk_g2_jac *b2;
    cuzk_prove_timings t;
    double t_start;
    /* B_G2 on its own thread */
    pthread_t b2_thread;
    bool b2_started, b2_joined;
    bool b2_on_gpu;             /* B_G2 computed with the device work, no CPU thread */
    const cuzk_fr *const *abc_in; /* the caller's a, b, c (opts->abc), read during start only */
    const cuzk_fr *const *abc_split; /* or as three vectors (cuzk_prove_extra), likewise */
    size_t abc_len;
    cuzk_err b2_err;
    double b2_ms;
};

static const cuzk_fr *wit(const cuzk_pending *p, size_t j) { return p->wv[j]; }

/* a, b, c of partition j into abc (3n values): copied when the caller computed them, else
 * synthesised from the witness on all threads. */
static void fill_abc(const cuzk_pending *p, size_t j, cuzk_fr *abc)
{
    size_t n = (size_t)1 << p->pk->log2_domain;
    if (p->abc_in) {
        memcpy(abc, p->abc_in[j], sizeof(cuzk_fr) * 3 * n);
        return;
    }
    if (p->abc_split) {
        cuzk_abc_split_copy(abc, p->abc_split, j, p->abc_len, n, p->nthreads);
        return;
    }
    cuzk_pk_view_synth_abc(p->pk, wit(p, j), abc, p->nthreads);
}

/* sum of w_i * pts[k] over the wires i whose bit is set in density (k counts the set
 * bits), or over all n wires when density is NULL. scratch: n canonical scalars. */
#define DENSITY_MSM_(G, AFF, JAC)                                                               \
    static cuzk_err G##_msm_density(JAC *r, const AFF *pts, const uint64_t *density,           \
                                    const cuzk_fr *w, size_t n, cuzk_msm_scalar *scratch,      \
                                    const cuzk_msm_opts *mo)                                   \
    {                                                                                          \
        if (!density)                                                                          \
            return cuzk_##G##_msm_auto_fr(r, NULL, pts, w, n, mo);                             \
        size_t k = cuzk_msm_gather_fr(scratch, w, n, density, mo->nthreads);                   \
        return cuzk_##G##_msm_auto(r, NULL, pts, scratch, k, mo);                              \
    }
DENSITY_MSM_(g1, cuzk_g1_affine, cuzk_g1_jac)
DENSITY_MSM_(g2, cuzk_g2_affine, cuzk_g2_jac)

/* ---- B_G2 thread ---- */
static void *b2_main(void *arg)
{
    cuzk_pending *p = arg;
    double t0 = cuzk_now_ms();
    cuzk_msm_opts mo = {.nthreads = p->nthreads};
    size_t nv = p->pk->n_vars;
    cuzk_msm_scalar *scratch = malloc(sizeof(cuzk_msm_scalar) * nv);
    p->b2_err = scratch ? CUZK_OK : CUZK_ENOMEM;
    for (size_t j = 0; j < p->n_wit && p->b2_err == CUZK_OK; j++)
        p->b2_err = g2_msm_density(&p->b2[j], p->pk->b2_pts, p->pk->b_density, wit(p, j), nv,
                                   scratch, &mo);
    free(scratch);
    p->b2_ms = cuzk_now_ms() - t0;
    return NULL;
}

static void pending_join(cuzk_pending *p)
{
    if (p->b2_started && !p->b2_joined) {
        pthread_join(p->b2_thread, NULL);
        p->b2_joined = true;
    }
}

void cuzk_groth16_pending_free(cuzk_pending *p)
{
    if (!p)
        return;
    pending_join(p);
    /* r and s are secrets: wipe them before the memory is returned (explicit_bzero: a
     * memset before free may be removed). */
    if (p->r)
        explicit_bzero(p->r, sizeof(cuzk_fr) * p->n_wit);
    if (p->s)
        explicit_bzero(p->s, sizeof(cuzk_fr) * p->n_wit);
    free(p->w);
    free(p->wv);
    free(p->r);
    free(p->s);
    free(p->a);
    free(p->b1);
    free(p->l);
    free(p->h);
    free(p->b2);
    free(p);
}

const cuzk_fr *cuzk_groth16_public(const cuzk_zkey *pk, const cuzk_fr *witness)
{
    (void)pk;
    return witness + 1;
}

static cuzk_err draw_secrets(cuzk_pending *p, const cuzk_prove_opts *o, const cuzk_prove_extra *x)
{
    for (size_t j = 0; j < p->n_wit; j++) {
        if (x && x->r && x->s) {
            p->r[j] = x->r[j];
            p->s[j] = x->s[j];
            continue;
        }
        if (o && o->test_r && o->test_s) {
            p->r[j] = *o->test_r;
            p->s[j] = *o->test_s;
            continue;
        }
        cuzk_err e = cuzk_random_fr(&p->r[j]);
        if (e == CUZK_OK)
            e = cuzk_random_fr(&p->s[j]);
        if (e != CUZK_OK)
            return e;
    }
    return CUZK_OK;
}

void cuzk_pk_view_from_zkey(cuzk_pk_view *v, const cuzk_zkey *z)
{
    memset(v, 0, sizeof *v);
    v->conv = CUZK_CONV_SNARKJS;
    v->n_vars = z->n_vars;
    v->n_public = z->n_public;
    v->log2_domain = z->log2_domain;
    v->alpha1 = &z->alpha1;
    v->beta1 = &z->beta1;
    v->delta1 = &z->delta1;
    v->beta2 = &z->beta2;
    v->delta2 = &z->delta2;
    v->a_pts = z->a_pts;
    v->b1_pts = z->b1_pts;
    v->b2_pts = z->b2_pts;
    v->l_pts = z->c_pts;
    v->h_pts = z->h_pts;
    v->h_count = z->domain_size;
    v->ma = &z->a;
    v->mb = &z->b;
    v->mc = NULL;
    v->n_rows = z->n_rows;
}

cuzk_err cuzk_pk_view_check_witness(const cuzk_pk_view *v, const cuzk_fr *w, size_t n)
{
    if (n != v->n_vars)
        return cuzk_error_set(CUZK_ESIZE, "the witness has %zu values, the key expects %u", n,
                              v->n_vars);
    if (!cuzk_fr_is_one(&w[0]))
        return cuzk_error_set(CUZK_EFORMAT, "the witness's first value is not 1");
    return CUZK_OK;
}

cuzk_err cuzk_groth16_prove_start(cuzk_pending **out, const cuzk_zkey *pk,
                                  const cuzk_fr *const *witnesses, size_t n_wit, size_t wit_len,
                                  const cuzk_prove_opts *opts)
{
    *out = NULL;
    if (!pk)
        return cuzk_error_set(CUZK_EINVAL, "prove: no key");
    cuzk_pk_view v;
    cuzk_pk_view_from_zkey(&v, pk);
    return cuzk_groth16_prove_start_view(out, &v, witnesses, n_wit, wit_len, opts);
}

/* ---- CPU backend: every stage on the CPU, one partition after the other ---- */
static cuzk_err prove_cpu(cuzk_pending *p, const cuzk_domain *dom, cuzk_fr *abc,
                          cuzk_msm_scalar *scratch)
{
    const cuzk_pk_view *pk = p->pk;
    size_t nv = pk->n_vars, n = (size_t)1 << pk->log2_domain, npub = pk->n_public;
    cuzk_msm_opts mo = {.nthreads = p->nthreads};
    cuzk_err e = CUZK_OK;
    for (size_t j = 0; j < p->n_wit && e == CUZK_OK; j++) {
        const cuzk_fr *w = wit(p, j);
        double t1 = cuzk_now_ms();
        fill_abc(p, j, abc);
        cuzk_fr *a = abc, *b = abc + n, *c = abc + 2 * n;
        double t2 = cuzk_now_ms();
        p->t.prep_ms += t2 - t1;

        e = pk->conv == CUZK_CONV_SNARKJS ? cuzk_h_snarkjs(dom, a, b, c, p->nthreads)
                                          : cuzk_h_bellman(dom, a, b, c, p->nthreads);
        if (e != CUZK_OK)
            break;
        if ((e = cuzk_g1_msm_fr(&p->h[j], scratch, pk->h_pts, a, pk->h_count, &mo)) != CUZK_OK)
            break;
        double t3 = cuzk_now_ms();
        p->t.h_ms += t3 - t2;

        if ((e = g1_msm_density(&p->a[j], pk->a_pts, pk->a_density, w, nv, scratch, &mo)) != CUZK_OK ||
            (e = g1_msm_density(&p->b1[j], pk->b1_pts, pk->b_density, w, nv, scratch, &mo)) != CUZK_OK ||
            (e = cuzk_g1_msm_auto_fr(&p->l[j], NULL, pk->l_pts, w + npub + 1, nv - npub - 1, &mo)) != CUZK_OK)
            break;
        p->t.msm_ms += cuzk_now_ms() - t3;
    }
    return e;
}

cuzk_err cuzk_groth16_prove_start_view(cuzk_pending **out, const cuzk_pk_view *view,
                                       const cuzk_fr *const *witnesses, size_t n_wit,
                                       size_t wit_len, const cuzk_prove_opts *opts)
{
    return cuzk_groth16_prove_start_view_ex(out, view, witnesses, n_wit, wit_len, opts, NULL);
}

cuzk_err cuzk_groth16_prove_start_view_ex(cuzk_pending **out, const cuzk_pk_view *view,
                                          const cuzk_fr *const *witnesses, size_t n_wit,
                                          size_t wit_len, const cuzk_prove_opts *opts,
                                          const cuzk_prove_extra *x)
{
    *out = NULL;
    bool fill = x && x->wit_fill;
    /* the parts, read in place by the GPU pipeline when nothing else reads the witnesses */
    bool parts = fill && x->wit_inp && x->wit_aux;
    if (!view || (!witnesses && n_wit && !fill))
        return cuzk_error_set(CUZK_EINVAL, "prove: no key or no witnesses");
    if (x && x->abc_split && x->abc_len > ((size_t)1 << view->log2_domain))
        return cuzk_error_set(CUZK_ESIZE, "prove: a, b, c have %zu values, the domain 2^%u",
                              x->abc_len, view->log2_domain);
    if (fill && (wit_len != view->n_vars || !((opts && opts->abc) || x->abc_split)))
        return cuzk_error_set(CUZK_EINVAL, "prove: witnesses by wit_fill need their length "
                                           "%u and a, b, c given", view->n_vars);
    cuzk_error_clear();
    double t0 = cuzk_now_ms();
    for (size_t j = 0; j < n_wit && !fill; j++) {
        cuzk_err e = cuzk_pk_view_check_witness(view, witnesses[j], wit_len);
        if (e != CUZK_OK) {
            char why[400];
            snprintf(why, sizeof why, "%s", cuzk_error_detail());
            return cuzk_error_set(e, "witness %zu of %zu: %s", j, n_wit, why);
        }
    }

    cuzk_pending *p = calloc(1, sizeof *p);
    if (!p)
        return cuzk_error_set(CUZK_ENOMEM, "prove: out of memory");
    p->pk_view = *view;
    p->pk = &p->pk_view;
    p->abc_in = opts ? opts->abc : NULL;
    if (!p->abc_in && x && x->abc_split) {
        p->abc_split = x->abc_split;
        p->abc_len = x->abc_len;
    }
    const cuzk_pk_view *pk = p->pk;
    size_t nv = pk->n_vars, n = (size_t)1 << pk->log2_domain;
    p->n_wit = n_wit;
    p->nthreads = opts && opts->nthreads ? opts->nthreads : cuzk_parallel_threads();
    p->t_start = t0;
    p->r = calloc(n_wit + 1, sizeof(cuzk_fr));
    p->s = calloc(n_wit + 1, sizeof(cuzk_fr));
    p->a = calloc(n_wit + 1, sizeof(cuzk_g1_jac));
    p->b1 = calloc(n_wit + 1, sizeof(cuzk_g1_jac));
    p->l = calloc(n_wit + 1, sizeof(cuzk_g1_jac));
    p->h = calloc(n_wit + 1, sizeof(cuzk_g1_jac));
    p->b2 = calloc(n_wit + 1, sizeof(cuzk_g2_jac));
    p->wv = calloc(n_wit + 1, sizeof *p->wv);
    cuzk_domain *dom = NULL;
    cuzk_gpu_batch gb; /* GPU: the batch's devices (gpu_pipeline.h) */
    memset(&gb, 0, sizeof gb);
    bool gpu = cuzk_groth16_backend(opts) == CUZK_BACKEND_GPU;
    /* The GPU path takes its buffers from the resident key; the CPU path allocates them. */
    cuzk_fr *abc = gpu ? NULL : malloc(sizeof(cuzk_fr) * 3 * n);
    cuzk_msm_scalar *scratch = gpu ? NULL : malloc(sizeof(cuzk_msm_scalar) * (n > nv ? n : nv));
    cuzk_err e = CUZK_OK;
    if (!p->r || !p->s || !p->a || !p->b1 || !p->l || !p->h || !p->b2 || !p->wv ||
        (!gpu && (!abc || !scratch))) {
        e = cuzk_error_set(CUZK_ENOMEM, "prove: out of memory for a batch of %zu (domain 2^%u)",
                           n_wit, pk->log2_domain);
        goto fail;
    }
    if (gpu && (e = cuzk_gpu_batch_open(&gb, pk, n_wit, opts)) != CUZK_OK)
        goto fail;
    cuzk_roots family = pk->conv == CUZK_CONV_SNARKJS ? CUZK_ROOTS_SNARKJS : CUZK_ROOTS_BELLMAN;
    if (!gpu && (e = cuzk_domain_new(&dom, pk->log2_domain, family)) != CUZK_OK) {
        cuzk_error_set(e, "prove: cannot build the NTT domain of 2^%u", pk->log2_domain);
        goto fail;
    }
    if ((e = draw_secrets(p, opts, x)) != CUZK_OK) {
        cuzk_error_set(e, "prove: getrandom failed");
        goto fail;
    }
    /* B_G2 runs beside everything else on its own CPU thread (overlapping the device work on
     * the GPU backend), unless the resident keys do it on the devices. */
    p->b2_on_gpu = gpu && gb.b2_on_device;
    /* witnesses read by the pipeline only, during start: the caller's, or their parts */
    bool in_place = p->b2_on_gpu && (!fill || parts);
    if (in_place) {
        for (size_t j = 0; j < n_wit; j++) /* nothing reads them after start: no copy */
            p->wv[j] = parts ? NULL : witnesses[j];
    } else {
        p->w = malloc(sizeof(cuzk_fr) * nv * (n_wit ? n_wit : 1));
        if (!p->w) {
            e = cuzk_error_set(CUZK_ENOMEM, "prove: out of memory for %zu witness copies", n_wit);
            goto fail;
        }
        for (size_t j = 0; j < n_wit; j++) {
            if (fill)
                x->wit_fill(x->wit_ctx, j, p->w + j * nv);
            else
                memcpy(p->w + j * nv, witnesses[j], sizeof(cuzk_fr) * nv);
            p->wv[j] = p->w + j * nv;
        }
    }

    if (p->b2_on_gpu)
        p->b2_err = CUZK_OK;
    else if (pthread_create(&p->b2_thread, NULL, b2_main, p) == 0)
        p->b2_started = true;
    else
        b2_main(p);
    p->t.prep_ms += cuzk_now_ms() - t0;

    if (gpu) {
        cuzk_gpu_batch_io io = {.pk = pk, .n_wit = n_wit, .nthreads = p->nthreads,
                                .w = p->wv, .abc = p->abc_in, .abc_split = p->abc_split,
                                .abc_len = p->abc_len, .h = p->h,
                                .wit_inp = in_place && parts ? x->wit_inp : NULL,
                                .wit_aux = in_place && parts ? x->wit_aux : NULL, .a = p->a,
                                .b1 = p->b1, .l = p->l, .b2 = p->b2_on_gpu ? p->b2 : NULL};
        e = cuzk_gpu_batch_prove(&gb, &io, &p->t);
    } else {
        e = prove_cpu(p, dom, abc, scratch);
    }
    if (e != CUZK_OK && cuzk_error_detail()[0] == 0)
        cuzk_error_set(e, "prove: %s", cuzk_strerror(e));
fail:
    free(abc);
    free(scratch);
    cuzk_domain_free(dom);
    cuzk_gpu_batch_close(&gb);
    if (e != CUZK_OK) {
        cuzk_groth16_pending_free(p);
        return e;
    }
    *out = p;
    return CUZK_OK;
}

/*
 * Epilogue (snarkjs's groth16_prove, DESIGN.md section 1):
 *   pi_A = alpha1 + A + r delta1
 *   pi_B = beta2 + B2 + s delta2
 *   pi_C = L + H + s pi_A + r (beta1 + B1 + s delta1) - r s delta1
 * r and s are secret: only constant-time scalar multiplication and complete additions.
 */
static void epilogue_one(cuzk_proof *out, const cuzk_pending *p, size_t j)
{
    const cuzk_pk_view *pk = p->pk;
    const cuzk_fr *r = &p->r[j], *s = &p->s[j];
    cuzk_g1_jac alpha1, beta1, delta1, t, pa, pc, b1s;
    cuzk_g2_jac beta2, delta2, pb, t2;
    cuzk_fr rs;
    cuzk_g1_jac_from_affine(&alpha1, pk->alpha1);
    cuzk_g1_jac_from_affine(&beta1, pk->beta1);
    cuzk_g1_jac_from_affine(&delta1, pk->delta1);
    cuzk_g2_jac_from_affine(&beta2, pk->beta2);
    cuzk_g2_jac_from_affine(&delta2, pk->delta2);

    cuzk_g1_mul_fr(&t, &delta1, r);
    cuzk_g1_jac_add(&pa, &alpha1, &p->a[j]);
    cuzk_g1_jac_add(&pa, &pa, &t);

    cuzk_g2_mul_fr(&t2, &delta2, s);
    cuzk_g2_jac_add(&pb, &beta2, &p->b2[j]);
    cuzk_g2_jac_add(&pb, &pb, &t2);

    cuzk_g1_mul_fr(&t, &delta1, s);
    cuzk_g1_jac_add(&b1s, &beta1, &p->b1[j]);
    cuzk_g1_jac_add(&b1s, &b1s, &t);

    cuzk_g1_jac_add(&pc, &p->l[j], &p->h[j]);
    cuzk_g1_mul_fr(&t, &pa, s);
    cuzk_g1_jac_add(&pc, &pc, &t);
    cuzk_g1_mul_fr(&t, &b1s, r);
    cuzk_g1_jac_add(&pc, &pc, &t);
    cuzk_fr_mul(&rs, r, s);
    cuzk_g1_mul_fr(&t, &delta1, &rs);
    cuzk_g1_jac_neg(&t, &t);
    cuzk_g1_jac_add(&pc, &pc, &t);
    /* r s and the multiples of r and s (and of the unblinded B1 + beta1 + s delta1) */
    explicit_bzero(&rs, sizeof rs);
    explicit_bzero(&t, sizeof t);
    explicit_bzero(&t2, sizeof t2);
    explicit_bzero(&b1s, sizeof b1s);

    cuzk_g1_jac_to_affine(&out->a, &pa);
    cuzk_g2_jac_to_affine(&out->b, &pb);
    cuzk_g1_jac_to_affine(&out->c, &pc);
}

void cuzk_groth16_pending_timings(const cuzk_pending *p, cuzk_prove_timings *t) { *t = p->t; }

cuzk_err cuzk_groth16_prove_finish(cuzk_proof *proofs, cuzk_prove_timings *timings, cuzk_pending *p)
{
    if (!p)
        return cuzk_error_set(CUZK_EINVAL, "prove_finish: no pending proof");
    pending_join(p);
    p->t.b_g2_ms = p->b2_ms;
    if (p->b2_err != CUZK_OK)
        return cuzk_error_set(p->b2_err, "prove: B_G2 MSM failed: %s", cuzk_strerror(p->b2_err));
    double t0 = cuzk_now_ms();
    for (size_t j = 0; j < p->n_wit; j++)
        epilogue_one(&proofs[j], p, j);
    double t1 = cuzk_now_ms();
    p->t.epilogue_ms = t1 - t0;
    p->t.total_ms = t1 - p->t_start;
    if (timings)
        *timings = p->t;
    return CUZK_OK;
}

cuzk_err cuzk_groth16_prove(cuzk_proof *proofs, cuzk_prove_timings *timings, const cuzk_zkey *pk,
                            const cuzk_fr *const *witnesses, size_t n_wit, size_t wit_len,
                            const cuzk_prove_opts *opts)
{
    cuzk_pending *p;
    cuzk_err e = cuzk_groth16_prove_start(&p, pk, witnesses, n_wit, wit_len, opts);
    if (e != CUZK_OK)
        return e;
    e = cuzk_groth16_prove_finish(proofs, timings, p);
    cuzk_groth16_pending_free(p);
    return e;
}
